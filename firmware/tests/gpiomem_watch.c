/*
 * gpiomem_watch: a fake BCM2835 GPIO register block that sees every store a
 * program makes to it, without the program's help (x86-64 Linux, for CI).
 *
 *   gpiomem_watch [--cpu N] LOG PROGRAM [ARGS...]
 *
 * It creates a memfd standing in for /dev/gpiomem, names it to the program in
 * LATSCOPE_GPIOMEM (/proc/self/fd/N) and runs the program under ptrace. When
 * the program maps the memfd, the mmap call is changed to map it read-only;
 * every store to the block then faults, and the tracer decodes the faulting
 * store (MOV r/m32 from a register or an immediate), logs it, performs it on
 * its own writable mapping and steps the program past the instruction. Loads
 * read the block directly. The log, in the order the stores were made:
 *
 *   set 0x0001a2c4        a store to GPSET0
 *   clr 0x00005d3b        a store to GPCLR0
 *   w <offset> 0x...      a store to any other register (GPFSEL0/1, ...)
 *
 * Stores of different threads are serialised by the faults themselves (each
 * is performed before its thread continues). Exit code: the program's.
 *
 * --cpu N: the program runs its threads on CPU N (LATSCOPE_CPU) with real-time
 * priorities. A thread stopped at a fault is not runnable, so a less urgent
 * thread would run in its place, which never happens without the tracer. The
 * tracer therefore runs on CPU N at SCHED_FIFO 99: woken by the stop, it takes
 * the CPU at once and gives it back with the continue, and no other thread of
 * the program runs in between. (The program itself starts SCHED_OTHER.)
 */
#define _GNU_SOURCE
#ifndef __x86_64__
#error "gpiomem_watch decodes x86-64 stores: build and run it on an x86-64 Linux machine"
#endif
#include <errno.h>
#include <sched.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK_BYTES 4096
#define GPSET0 0x1C
#define GPCLR0 0x28
#define MEMFD_NAME "latscope-gpiomem"

static FILE *log_file;
static volatile uint32_t *block; /* the tracer's writable mapping */
static uintptr_t target_base;   /* the program's (read-only) mapping, once made */
static int memfd;

static void die(const char *what)
{
	fprintf(stderr, "gpiomem_watch: %s: %s\n", what, strerror(errno));
	exit(125);
}

static void fail(pid_t tid, const char *what, uint64_t detail)
{
	fprintf(stderr, "gpiomem_watch: thread %d: %s (0x%" PRIx64 ")\n", tid, what, detail);
	exit(125);
}

/* ---------------------------------------------------------------- decoding */

/* The 64-bit general register numbered n (ModRM/REX numbering). */
static uint64_t gpr(const struct user_regs_struct *r, unsigned n)
{
	const unsigned long long *by_number[16] = {
		&r->rax, &r->rcx, &r->rdx, &r->rbx, &r->rsp, &r->rbp, &r->rsi, &r->rdi,
		&r->r8, &r->r9, &r->r10, &r->r11, &r->r12, &r->r13, &r->r14, &r->r15};
	return *by_number[n];
}

/*
 * The 32-bit store at r->rip: "mov r32, m32" (89 /r) or "mov imm32, m32"
 * (C7 /0), with optional REX (W clear). Sets *value and returns the length of
 * the instruction; 0 for anything else. The address comes from the fault.
 */
static unsigned decode_store(pid_t tid, const struct user_regs_struct *r, uint32_t *value)
{
	uint8_t code[16];
	for (unsigned i = 0; i < sizeof(code); i += sizeof(long)) {
		errno = 0;
		long word = ptrace(PTRACE_PEEKTEXT, tid, r->rip + i, 0);
		if (errno != 0)
			return 0;
		memcpy(&code[i], &word, sizeof(word));
	}
	unsigned at = 0;
	unsigned rex = 0;
	if ((code[at] & 0xF0) == 0x40)
		rex = code[at++];
	if (rex & 0x8)
		return 0; /* a 64-bit store: not a register write */
	uint8_t opcode = code[at++];
	if (opcode != 0x89 && opcode != 0xC7)
		return 0;
	uint8_t modrm = code[at++];
	unsigned mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
	if (mod == 3)
		return 0;
	if (rm == 4) { /* SIB byte; base 5 with mod 0 means disp32 */
		uint8_t sib = code[at++];
		if (mod == 0 && (sib & 7) == 5)
			at += 4;
	} else if (mod == 0 && rm == 5) {
		at += 4; /* rip-relative */
	}
	at += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	if (opcode == 0x89) {
		*value = (uint32_t)gpr(r, reg | ((rex & 0x4) << 1));
	} else {
		if (reg != 0)
			return 0;
		memcpy(value, &code[at], 4);
		at += 4;
	}
	return at;
}

/* A fault in the block: perform the store, log it, skip the instruction. */
static void emulate_store(pid_t tid, uintptr_t addr)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r) != 0)
		die("PTRACE_GETREGS");
	uint32_t value;
	unsigned length = decode_store(tid, &r, &value);
	uintptr_t offset = addr - target_base;
	if (length == 0 || offset % 4 != 0)
		fail(tid, "not a 32-bit aligned store to the block", r.rip);
	block[offset / 4] = value;
	if (offset == GPSET0)
		fprintf(log_file, "set 0x%08" PRIx32 "\n", value);
	else if (offset == GPCLR0)
		fprintf(log_file, "clr 0x%08" PRIx32 "\n", value);
	else
		fprintf(log_file, "w 0x%02" PRIxPTR " 0x%08" PRIx32 "\n", offset, value);
	r.rip += length;
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) != 0)
		die("PTRACE_SETREGS");
}

/* ---------------------------------------------------------------- tracing */

/* Is fd of the program our memfd? */
static bool is_block_fd(pid_t pid, long fd)
{
	char path[64], target[256];
	snprintf(path, sizeof(path), "/proc/%d/fd/%ld", pid, fd);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return strstr(target, "memfd:" MEMFD_NAME) != NULL;
}

/* A system-call stop before the block is mapped: at the entry of an mmap of
 * the memfd, make it read-only; at its exit, note where it landed. */
static void on_syscall_stop(pid_t tid, bool *in_block_mmap)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r) != 0)
		die("PTRACE_GETREGS");
	if (*in_block_mmap) { /* the exit of that mmap */
		*in_block_mmap = false;
		if ((long long)r.rax < 0)
			fail(tid, "the program's mmap of the block failed", r.rax);
		target_base = r.rax;
	} else if (r.orig_rax == SYS_mmap && r.rax == (unsigned long long)-ENOSYS &&
		   is_block_fd(tid, (long)r.r8)) {
		r.rdx = PROT_READ;
		if (ptrace(PTRACE_SETREGS, tid, 0, &r) != 0)
			die("PTRACE_SETREGS");
		*in_block_mmap = true;
	}
}

static pid_t start_child(char **argv)
{
	char name[64];
	snprintf(name, sizeof(name), "/proc/self/fd/%d", memfd);
	setenv("LATSCOPE_GPIOMEM", name, 1);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		struct sched_param normal = {.sched_priority = 0};
		sched_setscheduler(0, SCHED_OTHER, &normal);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		execvp(argv[0], argv);
		fprintf(stderr, "gpiomem_watch: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		die("child did not stop");
	long options = PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD;
	if (ptrace(PTRACE_SETOPTIONS, pid, 0, options) != 0)
		die("PTRACE_SETOPTIONS");
	return pid;
}

/* Stop at system calls until the block is mapped (the program maps it before
 * it starts threads), then only at signals. Returns the program's exit code. */
static int trace(pid_t pid)
{
	int exit_code = 125;
	bool in_block_mmap = false;
	if (ptrace(PTRACE_SYSCALL, pid, 0, 0) != 0)
		die("PTRACE_SYSCALL");
	for (;;) {
		int status;
		pid_t tid = waitpid(-1, &status, __WALL);
		if (tid < 0)
			return exit_code;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tid == pid)
				exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
							      : 128 + WTERMSIG(status);
			continue;
		}
		int sig = WSTOPSIG(status);
		int deliver = 0;
		if (sig == (SIGTRAP | 0x80)) {
			on_syscall_stop(tid, &in_block_mmap);
		} else if (sig == SIGSEGV) {
			siginfo_t info;
			if (ptrace(PTRACE_GETSIGINFO, tid, 0, &info) != 0)
				die("PTRACE_GETSIGINFO");
			uintptr_t addr = (uintptr_t)info.si_addr;
			if (target_base != 0 && addr - target_base < BLOCK_BYTES)
				emulate_store(tid, addr);
			else
				deliver = sig;
		} else if (sig != SIGSTOP && sig != SIGTRAP) {
			deliver = sig; /* SIGTRAP: exec or clone events; SIGSTOP: new threads */
		}
		bool tracing_syscalls = target_base == 0 || in_block_mmap;
		ptrace(tracing_syscalls ? PTRACE_SYSCALL : PTRACE_CONT, tid, 0, deliver);
	}
}

/* On CPU cpu at SCHED_FIFO 99 (see the top of the file). */
static void take_cpu(const char *cpu_text)
{
	char *end;
	long cpu = strtol(cpu_text, &end, 10);
	cpu_set_t set;
	CPU_ZERO(&set);
	if (*end != '\0' || cpu < 0 || cpu >= CPU_SETSIZE) {
		fprintf(stderr, "gpiomem_watch: --cpu %s: a CPU number wanted\n", cpu_text);
		exit(2);
	}
	CPU_SET((int)cpu, &set);
	struct sched_param top = {.sched_priority = 99};
	if (sched_setaffinity(0, sizeof(set), &set) != 0 ||
	    sched_setscheduler(0, SCHED_FIFO, &top) != 0)
		fprintf(stderr, "gpiomem_watch: --cpu %s: %s (running without)\n", cpu_text,
			strerror(errno));
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "--cpu") == 0) {
		take_cpu(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: gpiomem_watch [--cpu N] LOG PROGRAM [ARGS...]\n");
		return 2;
	}
	log_file = fopen(argv[1], "w");
	if (log_file == NULL)
		die(argv[1]);
	memfd = memfd_create(MEMFD_NAME, 0);
	if (memfd < 0 || ftruncate(memfd, BLOCK_BYTES) != 0)
		die("memfd");
	block = mmap(NULL, BLOCK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (block == MAP_FAILED)
		die("mmap");
	int code = trace(start_child(&argv[2]));
	if (target_base == 0)
		fprintf(stderr, "gpiomem_watch: the program never mapped the register block\n");
	fclose(log_file);
	return code;
}

/*
 * Host port: arch interface on ucontext, simulated interrupts, board
 * services. Single OS thread: exactly one kernel thread runs at a time and
 * interrupts happen only at the points the tests choose, so every
 * scheduling decision is reproducible.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_port.h"
#include "host.h"
#include "kernel/arch.h"
#include "kernel/board.h"

static ucontext_t boot_ctx;      /* the context that called k_start() */
static ucontext_t abandoned_ctx; /* where host_stop() leaves the running thread */
static unsigned irq_masked = 1;  /* the simulated global interrupt mask */
static uint32_t line_enabled;
static uint32_t line_pending;
static bool tick_pending;
static uint32_t isr_count;
static int exit_code;

static bool deliverable(void)
{
	return tick_pending || (line_pending & line_enabled) != 0;
}

static unsigned lowest_line(uint32_t bits)
{
	return (unsigned)__builtin_ctz(bits);
}

/*
 * Take every deliverable interrupt, as the CPU does when its mask opens:
 * external lines first (RISC-V priority MEI > MTI), then the tick. The
 * interrupted thread is whoever is current; a switch decided by
 * k_isr_exit() suspends it here until it is scheduled again, then it
 * "returns from the interrupt" with interrupts enabled.
 */
static void deliver(void)
{
	while (!irq_masked && deliverable()) {
		irq_masked = 1;
		isr_count++;
		k_isr_enter();
		uint32_t lines = line_pending & line_enabled;
		if (lines != 0) {
			unsigned line = lowest_line(lines);
			k_irq_dispatch(line);
			if (line_pending & (1u << line)) {
				/* On the SoC the latch would re-interrupt forever. */
				fprintf(stderr, "host: irq %u handler did not acknowledge\n", line);
				abort();
			}
		} else {
			tick_pending = false;
			k_tick_announce();
		}
		k_thread_t *interrupted = k_isr_exit();
		if (interrupted != NULL)
			arch_switch(interrupted, k_current);
		irq_masked = 0;
	}
}

unsigned arch_irq_lock(void)
{
	unsigned was = irq_masked;
	irq_masked = 1;
	return was;
}

void arch_irq_unlock(unsigned key)
{
	if (key == 0) {
		irq_masked = 0;
		deliver();
	}
}

static void context_entry(void)
{
	k_thread_trampoline();
}

void arch_context_init(k_thread_t *t, void *stack, size_t stack_size)
{
	if (getcontext(&t->arch.ctx) != 0)
		abort();
	t->arch.ctx.uc_stack.ss_sp = stack;
	t->arch.ctx.uc_stack.ss_size = stack_size;
	t->arch.ctx.uc_link = NULL;
	makecontext(&t->arch.ctx, context_entry, 0);
}

void arch_switch(k_thread_t *from, k_thread_t *to)
{
	if (swapcontext(&from->arch.ctx, &to->arch.ctx) != 0)
		abort();
}

void arch_start(k_thread_t *first)
{
	exit_code = 0;
	isr_count = 0;
	if (swapcontext(&boot_ctx, &first->arch.ctx) != 0)
		abort();
	/* host_stop() came back here: leave a clean slate for the next run. */
	irq_masked = 1;
	line_enabled = 0;
	line_pending = 0;
	tick_pending = false;
}

void arch_idle(void)
{
	if (k_timeouts_pending())
		host_tick(); /* let simulated time pass until a timeout fires */
	else
		host_stop(HOST_EXIT_DEADLOCK);
}

/* ---------------------------------------------------------------- test hooks */

static k_thread_t main_thread;
static uint8_t main_stack[256 * 1024] __attribute__((aligned(16)));
static k_entry_t main_entry;

static void main_wrapper(void *arg)
{
	main_entry(arg);
	host_stop(0);
}

int host_run(k_entry_t entry, void *arg, uint8_t prio)
{
	main_entry = entry;
	main_thread = (k_thread_t){0}; /* k_init() forgot the previous run */
	if (k_thread_create(&main_thread, "host-main", prio, main_stack, sizeof(main_stack),
			    main_wrapper, arg) != K_OK)
		return -1;
	k_start();
	return exit_code;
}

void host_stop(int code)
{
	exit_code = code;
	irq_masked = 1;
	swapcontext(&abandoned_ctx, &boot_ctx);
	abort(); /* never resumed */
}

void host_tick(void)
{
	tick_pending = true;
	deliver();
}

void host_raise_irq(unsigned line)
{
	line_pending |= 1u << line;
	deliver();
}

bool host_irq_line_pending(unsigned line)
{
	return (line_pending >> line) & 1u;
}

uint32_t host_isr_count(void)
{
	return isr_count;
}

/* ---------------------------------------------------------------- board */

void board_irq_line_enable(unsigned line, bool enable)
{
	if (enable) {
		line_enabled |= 1u << line;
		deliver();
	} else {
		line_enabled &= ~(1u << line);
	}
}

void board_irq_line_ack(unsigned line)
{
	line_pending &= ~(1u << line);
}

uint32_t board_cycles(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

uint32_t board_cycles_per_second(void)
{
	return 1000000000u;
}

uint32_t board_tick_period_ns(void)
{
	return 1000000u; /* nominal: host ticks are simulated */
}

void board_console_write(const char *s)
{
	fputs(s, stdout);
	fflush(stdout);
}

void board_tick_start(void)
{
}

void board_exit(int code)
{
	host_stop(code);
}

int board_exit_code(void)
{
	return exit_code;
}

void bench_port_raise_irq(int irq)
{
	host_raise_irq((unsigned)irq);
}

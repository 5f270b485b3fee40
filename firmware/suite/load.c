/*
 * The load profiles (docs/tests.md, "Load profiles"): activity that runs beside the tests,
 * the same in every run, with markers of its own (test LOAD) so that the events around a
 * worst sample show it:
 *
 *   cpu      a thread less urgent than everything the tests run that never blocks: a
 *            multiply and a divide per iteration; LOAD/THREAD(0) every SUITE_LOAD_CPU_WORK
 *            iterations
 *   memory   such a thread sweeping read-modify-write over a buffer of
 *            SUITE_LOAD_MEMORY_KIB, one word per 32-byte line; LOAD/THREAD(1) per sweep
 *            (both yield after their marker, so that in `mixed` they take turns)
 *   bus      a second bus master at SUITE_LOAD_BUS_DUTY percent (the port's,
 *            latscope/load_port.h)
 *   irq      a second interrupt source at SUITE_LOAD_IRQ_HZ (the port's), more or less
 *            urgent than the suite's IRQ (SUITE_LOAD_IRQ_URGENT); its handler marks
 *            LOAD/ISR_ENTRY(k), acknowledges, loops SUITE_LOAD_IRQ_WORK times, marks
 *            LOAD/ISR_EXIT(k)
 *
 * The threads run only while every thread of the suite is blocked; the suite's main thread
 * blocks instead of spinning when it waits (suite_wait_for) in builds with such a thread.
 *
 * Every profile's code is in every build, and the selection and the parameters are read
 * at run time (load_settings, volatile): builds that differ in their load differ in no
 * instruction, only in those constants and the buffer's size, so what changes a latency
 * is the load and not where the linker put the code. The suite Makefile links this file
 * last (on the simulated SoC with the port's load code after it), and the buffers go into
 * the port's uninitialised data (K_ARCH_NOINIT) after everything else.
 */
#include "suite.h"

#include "latscope/load_port.h"

#ifndef K_ARCH_NOINIT
#define K_ARCH_NOINIT
#endif

/* The memory sweep touches one word of every 32-byte line. */
#define LINE_WORDS 8u
#define MEMORY_WORDS ((SUITE_LOAD & SUITE_LOAD_MEMORY) ? SUITE_LOAD_MEMORY_KIB * 256u : LINE_WORDS)

static const volatile struct {
	uint32_t profile, cpu_work, memory_words, bus_duty, irq_hz, irq_work;
} load_settings = {SUITE_LOAD, SUITE_LOAD_CPU_WORK, MEMORY_WORDS, SUITE_LOAD_BUS_DUTY,
		   SUITE_LOAD_IRQ_HZ, SUITE_LOAD_IRQ_WORK};

static uint32_t memory_buffer[MEMORY_WORDS] K_ARCH_NOINIT;
static volatile uint32_t cpu_result K_ARCH_NOINIT;
static volatile unsigned load_irq_calls K_ARCH_NOINIT;

/* The names the console line gives, by SUITE_LOAD bit. */
static const char *const profile_names[] = {"cpu", "memory", "bus", "irq",
					    "(more urgent than the suite's)"};

int suite_load_has_thread(void)
{
	return (load_settings.profile & (SUITE_LOAD_CPU | SUITE_LOAD_MEMORY)) != 0;
}

static void cpu_load(void *arg)
{
	unsigned index = suite_index(arg);
	uint32_t x = 0x12345678u;
	for (;;) {
		for (uint32_t i = load_settings.cpu_work; i != 0; i--) {
			x = x * 1664525u + 1013904223u; /* a multiply (an LCG step) */
			x ^= x / (i | 1u);              /* a divide, the slowest instruction */
		}
		cpu_result = x;
		LS_MARK(LOAD, THREAD, index);
		bench_thread_yield(); /* to the other load thread (mixed): no blocking */
	}
}

static void memory_load(void *arg)
{
	unsigned index = suite_index(arg);
	/* Through a pointer the compiler cannot see into: the same code whatever the
	 * buffer's size in this build. */
	uint32_t *buffer = memory_buffer;
	__asm__("" : "+r"(buffer));
	for (uint32_t pass = 0;; pass++) {
		uint32_t words = load_settings.memory_words;
		for (uint32_t i = 0; i < words; i += LINE_WORDS)
			buffer[i] += i ^ pass;
		LS_MARK(LOAD, THREAD, index);
		bench_thread_yield();
	}
}

static void load_isr(void *arg)
{
	(void)arg;
	unsigned n = load_irq_calls;
	LS_MARK(LOAD, ISR_ENTRY, n);
	load_port_irq_ack();
	for (uint32_t w = load_settings.irq_work; w != 0; w--)
		__asm__ volatile(""); /* the handler's work: kept, not counted away */
	load_irq_calls = n + 1;
	LS_MARK(LOAD, ISR_EXIT, n);
}

void suite_load_start(void)
{
	uint32_t profile = load_settings.profile;
	if (profile == 0)
		return;
	bench_console_write("suite: load");
	for (unsigned bit = 0; bit < SUITE_COUNT_OF(profile_names); bit++) {
		if (profile & (1u << bit)) {
			bench_console_write(" ");
			bench_console_write(profile_names[bit]);
		}
	}
	bench_console_write("\n");
	if (profile & SUITE_LOAD_BUS)
		SUITE_CHECK(load_port_bus_start(load_settings.bus_duty) == BENCH_SUCCESS);
	if (profile & SUITE_LOAD_IRQ) {
		load_irq_calls = 0;
		int line = load_port_irq_start(load_settings.irq_hz,
					       (profile & SUITE_LOAD_IRQ_URGENT) != 0);
		SUITE_CHECK(line >= 0 && line != SUITE_IRQ);
		SUITE_CHECK(bench_irq_attach(line, load_isr, NULL) == BENCH_SUCCESS);
		SUITE_CHECK(bench_irq_enable(line) == BENCH_SUCCESS);
	}
	/* Below main: they run once the suite's threads all block. */
	if (profile & SUITE_LOAD_CPU)
		suite_spawn(SUITE_LOAD_THREAD_CPU, SUITE_PRIO_LOAD, cpu_load, 0);
	if (profile & SUITE_LOAD_MEMORY)
		suite_spawn(SUITE_LOAD_THREAD_MEMORY, SUITE_PRIO_LOAD, memory_load, 1);
}

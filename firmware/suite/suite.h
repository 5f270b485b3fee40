/*
 * latscope test suite: shared settings and helpers. The tests use only
 * latscope/bench_api.h and latscope/marker.h; docs/tests.md describes every
 * test, its markers and the rule that pairs them into samples.
 *
 * Compile-time settings (all -D overridable; the Makefile passes SAMPLES=,
 * TESTS=, PACE=; the defaults of the plan come from latscope/markers.h,
 * generated from latscope_defs.markers, which the host's loss accounting reads):
 *   SUITE_SAMPLES        samples of every IL, IDL and TSL table (1000)
 *   SUITE_OBJ_SAMPLES    samples of TF, SEO and MQ tables (min(SUITE_SAMPLES, 256))
 *   SUITE_CLK_SAMPLES    samples of the clock-ISR table (min(SUITE_SAMPLES, 100))
 *   SUITE_SELECT         bit mask of the tests to run, bit n = LS_TEST_* n (all)
 *   SUITE_IDL_B_THREADS  thread counts of IDL-b (1, 10, 128)
 *   SUITE_TSL_THREADS    thread counts of TSL-a (2, 10, 128)
 *   SUITE_SEO_F_MAX      most threads pending in SEO-f (255, capped by the port)
 *   SUITE_PACE_CYCLES    minimum bench_cycles() between two samples of a
 *                        thread-driven test, so that the appliance's FIFO
 *                        drains (0: no pacing)
 *   SUITE_IL_HEARTBEAT   polls between two "thread runs" markers of IL-a (1024)
 *   SUITE_IL_WATCH_EVERY heartbeats between two IRQ-timeout checks of IL-a (1: every
 *                        one; the loss tests' floods raise it, see test_irq.c)
 *   SUITE_IL_SEM_GIVE    1: each IL-a heartbeat also gives and takes a semaphore
 *                        nobody waits for, a kernel path in the interrupted loop
 *                        for `latscope sweep` to walk an interrupt through (0)
 *   SUITE_CLK_WORK       iterations of the clock-ISR test's fixed work (5000)
 *   SUITE_SEO_G_WORK     iterations of the medium thread's work in SEO-g (200)
 *   SUITE_STACK          stack bytes of every suite thread (512)
 *   SUITE_LOAD           the load profile that runs beside the tests: a mask of
 *                        SUITE_LOAD_* bits (0: none; the Makefile's LOAD, load.c)
 *   SUITE_LOAD_CPU_WORK  cpu: loop iterations between its progress markers (1024)
 *   SUITE_LOAD_MEMORY_KIB  memory: the buffer it sweeps, KiB (BENCH_LOAD_MEMORY_KIB
 *                        of the port, else 16)
 *   SUITE_LOAD_BUS_DUTY  bus: percent of the bus's time the second master takes (25)
 *   SUITE_LOAD_IRQ_HZ    irq: interrupts per second of the second source (25000)
 *   SUITE_LOAD_IRQ_WORK  irq: iterations of its handler's work loop (30)
 *   SUITE_IRQ_TIMEOUT_MS longest wait for the next call of SUITE_IRQ's handler: then the
 *                        test fails, saying what was expected on which pin (1000; the
 *                        appliance raises the IRQ every 50 us to a few ms)
 */
#ifndef SUITE_H
#define SUITE_H

#include <stdint.h>

#include "latscope/bench_api.h"
#include "latscope/marker.h"

#ifndef SUITE_SAMPLES
#define SUITE_SAMPLES 1000u
#endif
#ifndef SUITE_OBJ_SAMPLES
#define SUITE_OBJ_SAMPLES (SUITE_SAMPLES < LS_SUITE_OBJ_SAMPLES_MAX ? SUITE_SAMPLES : LS_SUITE_OBJ_SAMPLES_MAX)
#endif
#ifndef SUITE_CLK_SAMPLES
#define SUITE_CLK_SAMPLES (SUITE_SAMPLES < LS_SUITE_CLK_SAMPLES_MAX ? SUITE_SAMPLES : LS_SUITE_CLK_SAMPLES_MAX)
#endif
#ifndef SUITE_SELECT
#define SUITE_SELECT 0xFFFFFFFFu
#endif
#ifndef SUITE_IDL_B_THREADS
#define SUITE_IDL_B_THREADS LS_SUITE_IDL_B_THREADS
#endif
#ifndef SUITE_TSL_THREADS
#define SUITE_TSL_THREADS LS_SUITE_TSL_THREADS
#endif
#ifndef SUITE_SEO_F_MAX
#define SUITE_SEO_F_MAX LS_SUITE_SEO_F_MAX
#endif
#ifndef SUITE_PACE_CYCLES
#define SUITE_PACE_CYCLES 0u
#endif
#ifndef SUITE_IL_HEARTBEAT
#define SUITE_IL_HEARTBEAT 1024u
#endif
#ifndef SUITE_IL_WATCH_EVERY
#define SUITE_IL_WATCH_EVERY 1u
#endif
#ifndef SUITE_IL_SEM_GIVE
#define SUITE_IL_SEM_GIVE 0
#endif
#ifndef SUITE_CLK_WORK
#define SUITE_CLK_WORK 5000u
#endif
#ifndef SUITE_SEO_G_WORK
#define SUITE_SEO_G_WORK 200u
#endif
#ifndef SUITE_STACK
#define SUITE_STACK 512u
#endif

/* The load profiles (docs/tests.md, "Load profiles"): bits of SUITE_LOAD. */
#define SUITE_LOAD_CPU (1u << 0)        /* a thread below every other that never blocks */
#define SUITE_LOAD_MEMORY (1u << 1)     /* a thread sweeping read-modify-write through a buffer */
#define SUITE_LOAD_BUS (1u << 2)        /* a second bus master (load_port.h) */
#define SUITE_LOAD_IRQ (1u << 3)        /* a second interrupt source, its handler working */
#define SUITE_LOAD_IRQ_URGENT (1u << 4) /* ... more urgent than SUITE_IRQ (else less) */
#ifndef SUITE_LOAD
#define SUITE_LOAD 0u
#endif
#ifndef SUITE_LOAD_CPU_WORK
#define SUITE_LOAD_CPU_WORK 1024u
#endif
#ifndef SUITE_LOAD_MEMORY_KIB
#ifdef BENCH_LOAD_MEMORY_KIB
#define SUITE_LOAD_MEMORY_KIB BENCH_LOAD_MEMORY_KIB
#else
#define SUITE_LOAD_MEMORY_KIB 16u
#endif
#endif
#ifndef SUITE_LOAD_BUS_DUTY
#define SUITE_LOAD_BUS_DUTY 25u
#endif
#ifndef SUITE_LOAD_IRQ_HZ
#define SUITE_LOAD_IRQ_HZ 25000u
#endif
#ifndef SUITE_LOAD_IRQ_WORK
#define SUITE_LOAD_IRQ_WORK 30u
#endif

#ifndef SUITE_IRQ_TIMEOUT_MS
#define SUITE_IRQ_TIMEOUT_MS 1000u
#endif

#define SUITE_BIT(test) (1u << (test))
#define SUITE_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* On the suite's interrupt handlers: with the kernel's interrupt path in one
 * block (K_IRQ_PATH in kernel/kernel.h; sim/firmware/link.ld), so that the
 * instruction-cache placement of trap entry, dispatch and handler is the
 * same in every build of the suite. */
#define SUITE_ISR(name) __attribute__((section(".text.irq_path.1." #name)))

/* The appliance's IRQ generator is interrupt line 0 (acknowledged at its
 * latch with bench_irq_ack; latscope_defs.markers.SUITE_IRQ_LINE). */
#define SUITE_IRQ LS_SUITE_IRQ_LINE

/* Where the appliance's IRQ enters this DUT (a string expression), for the message of a
 * wait that timed out: each DUT's ls_marker_port.h names its pin. */
#ifndef SUITE_IRQ_PIN
#define SUITE_IRQ_PIN "the DUT's IRQ input"
#endif

/* Priorities (0 = most urgent). The suite's main thread runs at
 * SUITE_PRIO_MAIN and drops to SUITE_PRIO_LOW to let the threads of a test
 * run (then it is the "low-priority thread" the IDL-b IRQ interrupts). */
#define SUITE_PRIO_HIGH 5
#define SUITE_PRIO_MAIN 10
#define SUITE_PRIO_WORK 20
#define SUITE_PRIO_BELOW 50
/* The last level but one a port offers, if below 200 (Linux SCHED_FIFO: 96); the last is
 * the load profiles' threads', below everything the tests run. */
#define SUITE_PRIO_LOW (BENCH_PRIO_COUNT - 2 < 200 ? BENCH_PRIO_COUNT - 2 : 200)
#define SUITE_PRIO_LOAD (BENCH_PRIO_COUNT - 1)
/* Thread ids of the load profiles' threads: the last two (the tests use the first ones). */
#define SUITE_LOAD_THREAD_CPU (BENCH_MAX_THREADS - 1)
#define SUITE_LOAD_THREAD_MEMORY (BENCH_MAX_THREADS - 2)

/*
 * A busy-wait step. The simulated SoC needs nothing (the appliance and the
 * timer interrupt by themselves); the native build defines
 * SUITE_HAS_BUSY_HOOK and advances its simulated IRQ generator and tick
 * here, the only points where time passes on the host port.
 */
#ifdef SUITE_HAS_BUSY_HOOK
void suite_port_busy(void);
#define SUITE_BUSY() suite_port_busy()
#else
#define SUITE_BUSY() ((void)0)
#endif

/* Stop the suite with exit code 2 when cond is false (prints where). */
#define SUITE_CHECK(cond) \
	do { \
		if (!(cond)) \
			suite_fail(__FILE__, __LINE__, #cond); \
	} while (0)

void suite_fail(const char *file, int line, const char *what) __attribute__((noreturn));

/* The suite's body: bench_run(SUITE_PRIO_MAIN, suite_main, NULL). Ends with
 * bench_exit(0). */
void suite_main(void *arg);

/* START of test with parameter n: START(arg = n mod 128), followed by
 * PARAM(arg = n / 128) when n >= 128, the two markers adjacent (interrupts
 * locked); prints the table name to the console first. */
void suite_start(enum ls_test test, const char *name, unsigned n);
void suite_end(enum ls_test test);

/* Spin until SUITE_PACE_CYCLES have passed since the previous call returned. */
void suite_pace(void);

/* Create thread id with SUITE_STACK (checked); arg = the thread's index. */
void suite_spawn(int id, int prio, bench_thread_entry_t entry, unsigned index);
/* Delete threads first .. first+count-1 that are still alive. */
void suite_delete_threads(int first, int count);
/* Set the main thread's priority (takes effect at once). */
void suite_main_priority(int prio);
/*
 * A wait for SUITE_IRQ's handler calls: suite_irq_watch() in the waiting loop (not on every
 * iteration: it reads the tick count) fails the running test when `calls` has not moved for
 * SUITE_IRQ_TIMEOUT_MS, printing what was expected on which pin and the likely causes. An
 * unwired IRQ is the usual first-day mistake; without this the suite hangs in silence.
 */
typedef struct {
	unsigned seen;       /* handler calls at the last progress */
	unsigned wanted;     /* calls the test needs (for the message) */
	bench_ticks_t since; /* tick count at the last progress */
} suite_irq_watch_t;
void suite_irq_watch_start(suite_irq_watch_t *w, unsigned calls, unsigned wanted);
void suite_irq_watch(suite_irq_watch_t *w, unsigned calls);

/* The low-priority main thread waits until *count >= target: it spins (it is the thread an
 * interrupt meets), or, when the load profile runs a thread below it, sleeps a tick at a
 * time so that the load's thread is what runs. *irq_calls, the handler's calls, must move
 * within SUITE_IRQ_TIMEOUT_MS (suite_irq_watch). */
void suite_wait_for(volatile unsigned *count, unsigned target, volatile unsigned *irq_calls);

/* Start the load profile SUITE_LOAD (load.c; before the first test). */
void suite_load_start(void);
/* True when the load profile runs a thread of its own (cpu, memory). */
int suite_load_has_thread(void);

static inline unsigned suite_index(void *arg)
{
	return (unsigned)(uintptr_t)arg;
}

/* The tests (test_*.c), each between its START and END markers. */
void test_il_a(void);
void test_idl_b(unsigned threads);
void test_tsl_a(unsigned threads);
void test_tf_a(void);
void test_tf_b(void);
void test_tf_c(void);
void test_seo_a(void);
void test_seo_b(void);
void test_seo_c(void);
void test_seo_d(void);
void test_seo_e(void);
void test_seo_f(unsigned max_pending);
void test_seo_g(void);
void test_mq(void);
void test_clock_isr(void);

#endif /* SUITE_H */

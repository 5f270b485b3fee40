/*
 * The load profiles' hardware on Linux user space (latscope/load_port.h), built in, no
 * external tool (stress-ng beside the suite is an option of its own: docs/tests.md):
 *
 *   bus  memory-bandwidth threads: one on every CPU but the suite's (LATSCOPE_CPU; with it
 *        unset, as many threads as CPUs but one, unpinned), SCHED_OTHER, each copying
 *        between two 4 MiB buffers in 64 KiB pieces for duty percent of every millisecond
 *        and sleeping the rest, so that the suite's memory accesses meet theirs on the
 *        memory bus.
 *   irq  line LOAD_LINE, raised in software every 1/rate s by a SCHED_FIFO 99 timer thread
 *        (absolute deadlines). Interrupt lines are handler threads on this port, and their
 *        handlers exclude each other (the port's interrupt lock, a priority-inheriting
 *        mutex): none preempts a running one, and of two waiting the more urgent runs
 *        first. More urgent: the load line's thread at SCHED_FIFO 99, every other line's
 *        at 98; less urgent: the load line's at 98 below the others' 99.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "latscope/bench_api.h"
#include "latscope/load_port.h"

#define LOAD_LINE 1
#define BUS_BUFFER_BYTES (4u << 20)
#define BUS_CHUNK_BYTES (64u << 10)
#define BUS_PERIOD_NS 1000000L

static long ns_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000L + (b->tv_nsec - a->tv_nsec);
}

static void add_ns(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
}

static void *copy_memory(void *arg)
{
	long busy_ns = (long)(uintptr_t)arg;
	char *from = malloc(BUS_BUFFER_BYTES), *to = malloc(BUS_BUFFER_BYTES);
	if (from == NULL || to == NULL)
		return NULL;
	memset(from, 0x5A, BUS_BUFFER_BYTES);
	size_t offset = 0;
	struct timespec period, now;
	clock_gettime(CLOCK_MONOTONIC, &period);
	for (;;) {
		do {
			memcpy(to + offset, from + offset, BUS_CHUNK_BYTES);
			offset = (offset + BUS_CHUNK_BYTES) % BUS_BUFFER_BYTES;
			clock_gettime(CLOCK_MONOTONIC, &now);
		} while (ns_between(&period, &now) < busy_ns);
		add_ns(&period, BUS_PERIOD_NS);
		if (busy_ns < BUS_PERIOD_NS)
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &period, NULL);
	}
	return NULL;
}

int load_port_bus_start(unsigned duty_percent)
{
	if (duty_percent == 0 || duty_percent > 100)
		return BENCH_ERROR;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const char *pinned = getenv("LATSCOPE_CPU");
	int suite_cpu = pinned ? atoi(pinned) : -1;
	int started = 0;
	for (long cpu = 0; cpu < cpus; cpu++) {
		if (pinned ? cpu == suite_cpu : started == cpus - 1)
			continue;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		/* SCHED_OTHER whatever the caller runs: this is traffic, not a thread to rank. */
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
		struct sched_param none = {0};
		pthread_attr_setschedparam(&attr, &none);
		if (pinned) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET((int)cpu, &set);
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		}
		pthread_t thread;
		void *busy_ns = (void *)(uintptr_t)(BUS_PERIOD_NS * (long)duty_percent / 100);
		if (pthread_create(&thread, &attr, copy_memory, busy_ns) == 0)
			started++;
		pthread_attr_destroy(&attr);
	}
	return started > 0 || cpus <= 1 ? BENCH_SUCCESS : BENCH_ERROR;
}

int load_port_irq_start(unsigned rate_hz, int more_urgent)
{
	if (rate_hz == 0 || rate_hz > 1000000000u)
		return -1;
	for (int line = 0; line < BENCH_IRQ_LINES; line++)
		bench_linux_irq_priority(line, (line == LOAD_LINE) == (more_urgent != 0) ? 99 : 98);
	if (bench_linux_raise_every(LOAD_LINE, 1000000000L / (long)rate_hz, 99) != BENCH_SUCCESS)
		return -1;
	return LOAD_LINE;
}

void load_port_irq_ack(void)
{
}

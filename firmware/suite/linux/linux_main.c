/*
 * The suite as a Linux program on the pthreads port (ports/linux):
 *   suite    markers on GPIO0-16 (ls_marker_port.h), the appliance's IRQ on
 *            the line named by LATSCOPE_IRQ0_GPIO (libgpiod) or
 *            LATSCOPE_IRQ0_UIO; exit code 0 when the suite ran to its end.
 *
 * LATSCOPE_SOFT_IRQ_US=N raises line 0 in software every N microseconds
 * instead (CI, or a board without the IRQ wired): the suite's handler
 * threads then run, but there is no IRQ edge on a pin to measure from.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "linux_dut.h"
#include "suite.h"

static void *soft_irq_generator(void *arg)
{
	long period_ns = (long)(uintptr_t)arg * 1000;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		next.tv_nsec += period_ns;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		bench_port_raise_irq(SUITE_IRQ);
	}
	return NULL;
}

int main(void)
{
	if (linux_gpio_open() != 0)
		return 1;
	linux_gpio_report_cost();
	const char *soft = getenv("LATSCOPE_SOFT_IRQ_US");
	if (soft != NULL) {
		pthread_t thread;
		unsigned long us = strtoul(soft, NULL, 10);
		if (us == 0 || pthread_create(&thread, NULL, soft_irq_generator,
					      (void *)(uintptr_t)us) != 0) {
			fprintf(stderr, "linux: LATSCOPE_SOFT_IRQ_US=%s: no generator\n", soft);
			return 1;
		}
	}
	int rc = bench_run(SUITE_PRIO_MAIN, suite_main, NULL);
	printf("linux: real-time scheduling: %s\n", bench_linux_realtime() ? "yes" : "no");
	return rc == BENCH_SUCCESS ? 0 : 1;
}

/*
 * The suite as a Linux program on the pthreads port (ports/linux):
 *   suite    markers on GPIO0-16 or the SMI (ls_marker_port.h), the appliance's IRQ on
 *            the line named by LATSCOPE_IRQ0_GPIO (libgpiod) or
 *            LATSCOPE_IRQ0_UIO; exit code 0 when the suite ran to its end.
 *
 * LATSCOPE_SOFT_IRQ_US=N raises line 0 in software every N microseconds
 * instead (CI, or a board without the IRQ wired): the suite's handler
 * threads then run, but there is no IRQ edge on a pin to measure from.
 */
#include <stdio.h>
#include <stdlib.h>

#include "linux_dut.h"
#include "suite.h"

int main(void)
{
	if (linux_gpio_open() != 0)
		return 1;
	linux_gpio_report_cost();
	const char *soft = getenv("LATSCOPE_SOFT_IRQ_US");
	if (soft != NULL) {
		unsigned long us = strtoul(soft, NULL, 10);
		/* SCHED_FIFO 99, as the load profiles' raiser: hardware is not starved by the
		 * suite's spinning threads (SCHED_OTHER would wait for RT throttling, ~1 s). */
		if (us == 0 || bench_linux_raise_every(SUITE_IRQ, (long)us * 1000, 99) != BENCH_SUCCESS) {
			fprintf(stderr, "linux: LATSCOPE_SOFT_IRQ_US=%s: no generator\n", soft);
			return 1;
		}
	}
	int rc = bench_run(SUITE_PRIO_MAIN, suite_main, NULL);
#ifdef LS_MARKER_BUS
	if (linux_smi_lost())
		printf("linux: SMI: a marker found the FIFO full and was lost (SMICS AFERR)\n");
#endif
	printf("linux: real-time scheduling: %s\n", bench_linux_realtime() ? "yes" : "no");
	return rc == BENCH_SUCCESS ? 0 : 1;
}

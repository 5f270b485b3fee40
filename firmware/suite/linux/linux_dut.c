/*
 * What the Linux suite's marker ports share (linux_dut.h): where the IRQ comes from, and
 * what a marker costs, whichever port (linux_gpio.c, linux_smi.c) writes them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "linux_dut.h"
#include "suite.h"

#define COST_MARKERS 200u

const char *ls_linux_irq_source(void)
{
	static char text[160];
	const char *gpio = getenv("LATSCOPE_IRQ0_GPIO"), *uio = getenv("LATSCOPE_IRQ0_UIO");
	const char *soft = getenv("LATSCOPE_SOFT_IRQ_US");
	if (soft != NULL)
		snprintf(text, sizeof(text), "software raises every %s us (LATSCOPE_SOFT_IRQ_US)", soft);
	else if (gpio != NULL)
		snprintf(text, sizeof(text),
			 "line %s (LATSCOPE_IRQ0_GPIO; GPIO" LS_LINUX_IRQ_GPIO " on a Pi)", gpio);
	else if (uio != NULL)
		snprintf(text, sizeof(text), "the UIO device %s (LATSCOPE_IRQ0_UIO)", uio);
	else
		return "no line: LATSCOPE_IRQ0_GPIO (e.g. gpiochip0:" LS_LINUX_IRQ_GPIO "), LATSCOPE_IRQ0_UIO and "
		       "LATSCOPE_SOFT_IRQ_US are unset";
	return text;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Markers of test NONE (outside every test window, ignored by the host). */
void linux_gpio_report_cost(void)
{
	uint64_t start = now_ns();
	for (unsigned i = 0; i < COST_MARKERS; i++)
		ls_mark_value(LS_MARKER(LS_TEST_NONE, LS_POINT_PARAM, i));
	uint64_t ns = now_ns() - start;
	printf("linux: markers by %s: %llu ns per marker (%u markers" LS_LINUX_COST_NOTE ")\n",
	       linux_marker_backend(), (unsigned long long)(ns / COST_MARKERS), COST_MARKERS);
	fflush(stdout);
}

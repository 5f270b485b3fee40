/*
 * The native build's stand-in for the appliance: records every marker word
 * and every IRQ edge it generates with a time stamp, and plays the IRQ
 * generator and the timer on the host port, whose interrupts only happen
 * when asked (ports/host/host.h).
 *
 * Time stamps are bench_cycles() (host port: nanoseconds, 32-bit), unwrapped
 * to 64 bits and forced strictly increasing across all records, like the
 * appliance's one-event-per-cycle stamps; the native run checks marker
 * logic, not latencies.
 *
 * Busy-wait steps (suite_port_busy, called by the suite's polling loops and
 * fixed work) drive the simulation: every NATIVE_IRQ_STEPS steps a rising
 * edge on line 0 (recorded, then raised: the handler runs at once when the
 * line is enabled and interrupts are not masked), every NATIVE_TICK_STEPS
 * steps a kernel tick. Steps count while the line is disabled too, as the
 * real generator runs through the whole suite.
 *
 * Dump format, one event per line: "<stamp> <kind> <value>", kind = gpio
 * (the 32-bit word stored: data | strobe << 16), bus (the value stored to
 * the trace window) or irq (1 = rising edge); value in 0x-hex.
 */
#include <stdio.h>
#include <stdlib.h>

#include "host.h"
#include "native.h"
#include "suite.h"

#ifndef NATIVE_IRQ_STEPS
#define NATIVE_IRQ_STEPS 50u
#endif
#ifndef NATIVE_TICK_STEPS
#define NATIVE_TICK_STEPS 7919u /* prime: ticks fall on varied points of the work */
#endif

enum kind { KIND_GPIO, KIND_BUS, KIND_IRQ };
static const char *const kind_name[] = {"gpio", "bus", "irq"};

struct record {
	uint64_t stamp;
	uint32_t value;
	uint8_t kind;
};

static struct record *records;
static size_t count, capacity;
static uint64_t last_stamp;
static uint32_t last_cycles;
static unsigned long steps;

static void record(enum kind kind, uint32_t value)
{
	if (count == capacity) {
		capacity = capacity ? 2 * capacity : 65536;
		records = realloc(records, capacity * sizeof(*records));
		if (records == NULL) {
			fputs("native: out of memory for the marker record\n", stderr);
			abort();
		}
	}
	uint32_t now = bench_cycles();
	uint64_t stamp = last_stamp + (uint32_t)(now - last_cycles);
	last_cycles = now;
	if (stamp <= last_stamp && count != 0)
		stamp = last_stamp + 1;
	last_stamp = stamp;
	records[count++] = (struct record){stamp, value, (uint8_t)kind};
}

void native_record_marker(uint32_t word)
{
#ifdef LS_MARKER_GPIO
	record(KIND_GPIO, word);
#else
	record(KIND_BUS, word);
#endif
}

void suite_port_busy(void)
{
	steps++;
	if (steps % NATIVE_IRQ_STEPS == 0) {
		record(KIND_IRQ, 1);
		host_raise_irq(SUITE_IRQ);
	}
	if (steps % NATIVE_TICK_STEPS == 0)
		host_tick();
}

void native_start(void)
{
	count = 0;
	steps = 0;
	last_stamp = 0;
	last_cycles = bench_cycles();
}

int native_dump(const char *path)
{
	FILE *out = fopen(path, "w");
	if (out == NULL) {
		perror(path);
		return -1;
	}
	for (size_t i = 0; i < count; i++)
		fprintf(out, "%llu %s 0x%08x\n", (unsigned long long)records[i].stamp,
			kind_name[records[i].kind], (unsigned)records[i].value);
	return fclose(out) == 0 ? 0 : -1;
}

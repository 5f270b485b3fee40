/*
 * The wiring walk (wiring_walk.h) on the simulated SoC: `latscope selftest --port sim:soc
 * --wiring` runs it (built by sim/Makefile as wiring_walk.elf, with the suite's GPIO marker
 * port firmware/suite/sim/ls_marker_port.h). The harness holds the CPU in reset until the
 * host's wiring capture has started; the program writes the 32 markers and exits 0.
 *
 * The pause: the simulated wires settle at once, so it only keeps the markers apart by far
 * more than the appliance's sampling delay and a marker record's time on the link (about 80
 * cycles): 2000 cycles, 20 us at 100 MHz, the whole walk in under 0.1 M cycles.
 */
#include <stdint.h>

#include "soc.h"
#include "wiring_walk.h"

#ifndef WIRING_PAUSE_CYCLES
#define WIRING_PAUSE_CYCLES 2000u
#endif

LS_MARKER_DEFINE_STATE;

static void pause(void)
{
	uint64_t until = soc_mtime() + WIRING_PAUSE_CYCLES;
	while (soc_mtime() < until)
		;
}

int main(void)
{
	ls_wiring_walk(pause);
	return 0;
}

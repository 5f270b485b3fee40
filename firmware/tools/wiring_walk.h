/*
 * The self-test's wiring program (latscope selftest --wiring, docs/boards.md
 * "Bring-up checklist"): walking ones, then walking zeros, over the 16 marker
 * data bits, one marker (one strobe toggle) each: 32 markers. The host
 * compares them with latscope.link.selftest.wiring_pattern() and names stuck,
 * swapped and shorted bits.
 *
 * Header-only, on top of latscope/marker.h: a port's program includes it
 * after its "ls_marker_port.h" is on the include path, defines the marker
 * state (LS_MARKER_DEFINE_STATE) and calls ls_wiring_walk() with a pause of
 * its own (about a millisecond: the host must see the markers in order, and a
 * pause far above the marker port's sampling delay lets slow wires settle).
 * The programs: wiring_sim.c (the simulated SoC, sim/Makefile), wiring_linux.c
 * and wiring_cm.c (firmware/suite/Makefile: wiring-linux, wiring-cortex-m).
 *
 * The host's latscope.link.selftest.wiring_pattern() is the same walk written in
 * Python; tests/system/test_selftest.py (this header compiled for the host) and
 * tests/firmware/test_duts.py, tests/system/test_selftest_soc.py (the port programs' pins)
 * check that the two agree.
 */
#ifndef LATSCOPE_WIRING_WALK_H
#define LATSCOPE_WIRING_WALK_H

#include <stdint.h>

#include "latscope/marker.h"

#define LS_WIRING_BITS 16u
#define LS_WIRING_MARKERS (2u * LS_WIRING_BITS)

/* The n-th marker value of the walk (n < LS_WIRING_MARKERS). */
static inline uint32_t ls_wiring_value(unsigned n)
{
	uint32_t one = 1u << (n % LS_WIRING_BITS);
	return n < LS_WIRING_BITS ? one : (0xffffu ^ one);
}

static inline void ls_wiring_walk(void (*pause)(void))
{
	for (unsigned n = 0; n < LS_WIRING_MARKERS; n++) {
		pause();
		ls_mark_value(ls_wiring_value(n));
	}
}

#endif /* LATSCOPE_WIRING_WALK_H */

/*
 * The wiring walk on the host: every marker word the walk stores, as the
 * pins would carry it (bit 16 the strobe), one hex word per line on stdout.
 * tests/system/test_selftest.py compiles it with gcc and checks the words against
 * latscope.link.selftest.wiring_pattern() and a strobe toggle per marker.
 */
#include <stdint.h>
#include <stdio.h>

#define LS_MARKER_GPIO 1
#include "ls_marker_port.h"
#include "wiring_walk.h"

LS_MARKER_DEFINE_STATE;

void wiring_host_store(uint32_t word)
{
	printf("%05x\n", (unsigned)word);
}

static void no_pause(void)
{
}

int main(void)
{
	ls_wiring_walk(no_pause);
	return 0;
}

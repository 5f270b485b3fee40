/*
 * The wiring walk (wiring_walk.h) on Linux, through the suite's marker port
 * (suite/linux: /dev/gpiomem on a Raspberry Pi, else libgpiod; the same
 * LATSCOPE_GPIO* environment as the suite). Built by `make -C firmware/suite
 * wiring-linux` as build/linux-<target>/wiring_walk. Run it when
 * `latscope selftest --wiring` asks (docs/boards.md, "Bring-up checklist"):
 * it writes the 32 markers, 1 ms apart, and exits 0.
 */
#include <stdio.h>
#include <time.h>

#include "linux_dut.h"
#include "wiring_walk.h"

LS_MARKER_DEFINE_STATE;

static void pause(void)
{
	struct timespec ms = {0, 1000000};
	nanosleep(&ms, NULL);
}

int main(void)
{
	if (linux_gpio_open() != 0)
		return 1;
	ls_wiring_walk(pause);
	printf("wiring: %u markers written (walking ones, then zeros, over D0-D15)\n",
	       LS_WIRING_MARKERS);
	return 0;
}

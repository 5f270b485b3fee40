/*
 * The wiring walk (wiring_walk.h) on a Cortex-M board of the reference
 * kernel's port (ports/cortex-m/boards.mk): the board code sets the marker
 * pins up before main (suite/stm32f4 or suite/rp2040 ls_marker_port.h).
 * Built by `make -C firmware/suite wiring-cortex-m CM_BOARD=...` as
 * build/cm-<board>-gpio/wiring_walk.elf (and .uf2 for the Pico). Start it
 * (reset, or load the UF2) when `latscope selftest --wiring` asks: it writes
 * the 32 markers, about a millisecond apart, and exits 0 (a board prints
 * "exit 0" on its console; under QEMU the semihosting exit code).
 */
#include "cm_board.h"
#include "wiring_walk.h"

LS_MARKER_DEFINE_STATE;

/* At least a millisecond: a pass of the loop takes 3 or more cycles. */
static void pause(void)
{
	for (volatile uint32_t n = cm_board_cpu_hz() / 3000u; n != 0; n--)
		;
}

int main(void)
{
	ls_wiring_walk(pause);
	board_console_write("wiring: done (walking ones, then zeros, over D0-D15)\n");
	return 0;
}

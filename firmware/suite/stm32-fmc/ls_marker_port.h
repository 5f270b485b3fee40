/*
 * Marker store target on an STM32F4 with an FMC (NUCLEO-F446ZE;
 * docs/duts/nucleo-144-fmc.md): the appliance is a 16-bit SRAM on the FMC's
 * bank 1 (docs/membus.md), set up by the board code (ports/cortex-m/
 * fmc_stm32.[ch]). A marker is ONE 16-bit store (STRH) of its value to the
 * bank's first halfword: the FMC drives NE1 low, address 0 on A0-A15, the
 * marker on D0-D15 and one NWE pulse; the appliance stamps NWE's rising edge.
 * No shadow, no read, no interrupt masking (the bus variant of marker.h).
 *
 * The store leaves the core through its write buffer: the core goes on after
 * STRH's 1-2 cycles while the FMC spends ADDSET + DATAST + 1 HCLK cycles on
 * the write (2 at ADDSET 0, DATAST 1); a second marker within that time waits
 * for the bus (docs/duts/nucleo-144-fmc.md, "What a marker costs").
 */
#ifndef LS_MARKER_PORT_H
#define LS_MARKER_PORT_H

#include <stdint.h>

#include "fmc_stm32.h"

#ifndef LS_MARKER_BUS
#error "STM32 FMC: build with MARKER=bus (the markers are stores to the memory bus)"
#endif

static inline __attribute__((always_inline)) void ls_marker_store(uint32_t word)
{
	*(volatile uint16_t *)STM32_FMC_BANK1 = (uint16_t)word;
}

/* The appliance's IRQ input (board_stm32f4.c: EXTI0, rising edges). */
#define SUITE_IRQ_PIN "PA0 (EXTI0)"

#endif /* LS_MARKER_PORT_H */

/*
 * Marker store target on the RP2040 (Raspberry Pi Pico; docs/duts/pico.md):
 * D0-D15 = GPIO0-15 and STROBE = GPIO16, driven by the single-cycle IO block
 * (SIO). The marker word is then the pin pattern itself, and ONE store to
 * GPIO_OUT_XOR moves every pin that differs, data and strobe together,
 * without touching GPIO17 and up (the IRQ input, the edge outputs, the LED).
 * What differs comes from reading GPIO_OUT, a single-cycle SIO load: no
 * shadow, and correct whatever else drove the pins before. (GPIO_OUT_SET /
 * GPIO_OUT_CLR would need two stores; a plain GPIO_OUT write would clobber
 * the other outputs.)
 *
 * Interrupt masking for the read-modify-write and the strobe shadow: PRIMASK
 * (this core only; core 1 must not drive GPIO0-16).
 */
#ifndef LS_MARKER_PORT_H
#define LS_MARKER_PORT_H

#include <stdint.h>

#ifndef LS_MARKER_GPIO
#error "RP2040: build with MARKER=gpio (no snooped bus)"
#endif

#define LS_RP2040_SIO_GPIO_OUT (*(volatile uint32_t *)0xD0000010u)
#define LS_RP2040_SIO_GPIO_OUT_XOR (*(volatile uint32_t *)0xD000001Cu)
#define LS_RP2040_MARKER_PINS 0x1FFFFu /* GPIO0-16 */

static inline __attribute__((always_inline)) void ls_marker_store(uint32_t word)
{
	LS_RP2040_SIO_GPIO_OUT_XOR = (LS_RP2040_SIO_GPIO_OUT ^ word) & LS_RP2040_MARKER_PINS;
}

static inline __attribute__((always_inline)) unsigned ls_marker_irq_save(void)
{
	unsigned primask;
	__asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask) : : "memory");
	return primask;
}

static inline __attribute__((always_inline)) void ls_marker_irq_restore(unsigned key)
{
	__asm__ volatile("msr primask, %0" : : "r"(key) : "memory");
}

/* The appliance's IRQ input (board_rp2040.c: IO_IRQ_BANK0, rising edges). */
#define SUITE_IRQ_PIN "GP17 (pin 22)"

#endif /* LS_MARKER_PORT_H */

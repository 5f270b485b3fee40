/*
 * Marker store target on STM32F4 (Nucleo-64; docs/duts/nucleo.md).
 *
 * A GPIO port has 16 pins and its BSRR sets and clears any of them in ONE
 * store (bits 0-15 set, 16-31 reset). The Nucleo-64's STM32F401RE/F446RE have
 * no PB11 (that package pin is VCAP1), so D0-D10 and D12-D15 are on PB0-PB10
 * and PB12-PB15, and D11 and the STROBE on port C (PC11, PC8). A marker is
 * two stores:
 *   1. GPIOB->BSRR: all 16 data bits set or cleared (the PB11 bits do nothing);
 *   2. GPIOC->BSRR: D11 and the strobe edge, together.
 * The appliance stamps the strobe edge, the second store, and samples D0-D15
 * two capture cycles later, so D11 may change with the strobe. The first
 * store is instrumentation cost paid just before the stamped one. Both go to
 * the AHB1 GPIO ports in program order (Device memory, no write buffer
 * between the core and AHB1 for strongly-ordered peripheral space).
 *
 * Interrupt masking for the strobe shadow: PRIMASK, saved and restored, two
 * instructions each and no branch; harmless in an ISR.
 */
#ifndef LS_MARKER_PORT_H
#define LS_MARKER_PORT_H

#include <stdint.h>

#ifndef LS_MARKER_GPIO
#error "STM32: build with MARKER=gpio (no snooped bus)"
#endif

#define LS_STM32_GPIOB_BSRR (*(volatile uint32_t *)0x40020418u)
#define LS_STM32_GPIOC_BSRR (*(volatile uint32_t *)0x40020818u)
#define LS_STM32_PC_D11 (1u << 11) /* D11 on PC11 */
#define LS_STM32_PC_STROBE (1u << 8) /* STROBE on PC8 */

static inline __attribute__((always_inline)) void ls_marker_store(uint32_t word)
{
	uint32_t data = word & 0xFFFFu;
	LS_STM32_GPIOB_BSRR = data | (data ^ 0xFFFFu) << 16;
	/* word bit 16 (strobe) -> PC8, bit 11 -> PC11 */
	uint32_t high = (word & LS_STM32_PC_D11) | ((word >> 8) & LS_STM32_PC_STROBE);
	uint32_t low = high ^ (LS_STM32_PC_D11 | LS_STM32_PC_STROBE);
	LS_STM32_GPIOC_BSRR = high | low << 16;
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

/* The appliance's IRQ input (board_stm32f4.c: EXTI0, rising edges). */
#define SUITE_IRQ_PIN "PA0 (CN7-28, EXTI0)"

#endif /* LS_MARKER_PORT_H */

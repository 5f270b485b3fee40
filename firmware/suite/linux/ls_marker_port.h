/*
 * Marker store target on Linux user space (docs/duts/raspberry-pi.md); with
 * MARKER=bus the Raspberry Pi's SMI instead (smi_marker_port.h):
 *
 *   gpiomem   the BCM2835/BCM2711 GPIO block mapped from /dev/gpiomem (Pi 1-4,
 *             Zero, CM4): two stores per marker, GPSET0 and GPCLR0;
 *   gpiod     any board's GPIO character device through libgpiod v1: two
 *             ioctls per marker (the suite prints what one marker costs).
 *
 * Wiring: GPIO0-15 = D0-D15 and GPIO16 = STROBE, so the marker word
 * value | strobe << 16 is already the pin pattern.
 *
 * Why two stores, and which one is "the" store: the BCM GPIO has no output
 * register that can be written whole, only set (GPSET0: 1 bits go high) and
 * clear (GPCLR0: 1 bits go low) registers, so a 17-bit pattern needs both;
 * no single aligned store covers GPSET0 (0x1C) and GPCLR0 (0x28). The store
 * that moves the strobe goes second (GPCLR0 then GPSET0 when the strobe
 * rises, GPSET0 then GPCLR0 when it falls): the appliance stamps the strobe
 * edge and samples D0-D15 two capture cycles later, when both halves of the
 * data are on the pins. So a marker's time is that of ONE store, the second;
 * the first is instrumentation cost paid just before it. Both are uncached
 * stores to Device memory of one peripheral, which the CPU keeps in program
 * order without a barrier.
 *
 * Interrupt masking around the shadow's read-flip-store is the porting
 * layer's interrupt lock (bench_irq_lock): the Linux "ISRs" are handler
 * threads that hold it, and it also orders threads on other CPUs.
 */
#ifndef LS_MARKER_PORT_H
#define LS_MARKER_PORT_H

#include <stdint.h>

#include "latscope/bench_api.h"

/* Where line 0's interrupts come from, as the environment says (linux_dut.c): the
 * GPIO line, the UIO device, or that none is set. */
const char *ls_linux_irq_source(void);
#define SUITE_IRQ_PIN ls_linux_irq_source()

#ifdef LS_MARKER_BUS
#include "smi_marker_port.h" /* the Raspberry Pi's SMI: one store a marker */
#else

/* The IRQ's line on a Pi (the first free one after the marker pins). */
#define LS_LINUX_IRQ_GPIO "17"
#define LS_LINUX_COST_NOTE ", interrupt lock included"

#define LS_LINUX_PINS 0x1FFFFu /* D0-D15, STROBE = GPIO0-16 */
#define LS_BCM_GPSET0 (0x1Cu / 4)
#define LS_BCM_GPCLR0 (0x28u / 4)

/* The mapped BCM GPIO block, or NULL when markers go through libgpiod. */
extern volatile uint32_t *ls_linux_gpio_block;
void ls_linux_gpiod_store(uint32_t word);

static inline __attribute__((always_inline)) void ls_marker_store(uint32_t word)
{
	volatile uint32_t *block = ls_linux_gpio_block;
	if (__builtin_expect(block == 0, 0)) {
		ls_linux_gpiod_store(word);
		return;
	}
	/* rising strobe: clear first, set (with the strobe) second; falling:
	 * set first, clear (with the strobe) second. Selects, not branches. */
	uint32_t rising = (word >> 16) & 1u;
	uint32_t high = word & LS_LINUX_PINS, low = ~word & LS_LINUX_PINS;
	block[rising ? LS_BCM_GPCLR0 : LS_BCM_GPSET0] = rising ? low : high;
	block[rising ? LS_BCM_GPSET0 : LS_BCM_GPCLR0] = rising ? high : low;
}

static inline unsigned ls_marker_irq_save(void)
{
	return bench_irq_lock();
}

static inline void ls_marker_irq_restore(unsigned key)
{
	bench_irq_unlock(key);
}

#endif /* LS_MARKER_BUS */
#endif /* LS_MARKER_PORT_H */

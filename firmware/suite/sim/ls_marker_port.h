/*
 * Marker store target on the latscope simulated SoC (sim/firmware/soc.h):
 * the GPIO output register (LS_MARKER_GPIO) or the bus trace window
 * (LS_MARKER_BUS), one 32-bit store each. The interrupt mask for the GPIO
 * variant is the machine-mode global enable (see latscope/marker.h).
 */
#ifndef LS_MARKER_PORT_H
#define LS_MARKER_PORT_H

#include <stdint.h>

#include "soc.h"

static inline __attribute__((always_inline)) void ls_marker_store(uint32_t word)
{
#ifdef LS_MARKER_GPIO
	SOC_REG(SOC_GPIO_OUT) = word;
#else
	SOC_REG(SOC_TRACE_BASE) = word;
#endif
}

/* Clear mstatus.MIE; the key is the whole previous mstatus. */
static inline __attribute__((always_inline)) unsigned ls_marker_irq_save(void)
{
	unsigned mstatus;
	__asm__ volatile("csrrci %0, mstatus, 8" : "=r"(mstatus) : : "memory");
	return mstatus;
}

/* Setting the old mstatus bits back is exact: between save and restore
 * nothing else changed mstatus (no trap can be taken), so the only bit the
 * key sets that is clear now is MIE, when it was set. In an ISR the key has
 * MIE clear and this changes nothing. No branch, one instruction. */
static inline __attribute__((always_inline)) void ls_marker_irq_restore(unsigned key)
{
	__asm__ volatile("csrs mstatus, %0" : : "r"(key) : "memory");
}

/* The SoC's IRQ input, driven by the appliance's model. */
#define SUITE_IRQ_PIN "the SoC's IRQ input (line 0)"

#endif /* LS_MARKER_PORT_H */

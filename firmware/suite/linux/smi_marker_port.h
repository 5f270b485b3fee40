/*
 * Marker store target on a Raspberry Pi's SMI, the secondary memory interface
 * (MARKER=bus; docs/duts/raspberry-pi.md, "Markers on the SMI"): the appliance
 * is a 16-bit memory on the SMI (docs/membus.md), and linux_smi.c has started
 * one programmed write transfer that never ends, so that every 32-bit store
 * to the SMI's data FIFO (SMID, unpacked: SMICS PXLDAT clear) becomes one
 * SMI write of its low 16 bits to address 0: SWE pulses, the marker on
 * SD0-SD15. A marker is ONE store, no shadow, no lock.
 *
 * The stamp is the SMI's write, which follows the store by the FIFO's queue:
 * markers closer than one SMI write (4 SMI clock cycles, 32 ns at 125 MHz)
 * queue up and are stamped that far apart; a store into a full FIFO is lost
 * and sets SMICS AFERR, which linux_smi.c reports (never silently).
 */
#ifndef SMI_MARKER_PORT_H
#define SMI_MARKER_PORT_H

#include <stdint.h>

/* The SMI's data register (SMID) in the mapped register block. */
extern volatile uint32_t *ls_linux_smi_data;

static inline __attribute__((always_inline)) void ls_marker_store(uint32_t word)
{
	*ls_linux_smi_data = word;
}

/* The IRQ's line on a Pi: GPIO0-25 are the SMI's (SA5-SA0, SOE, SWE, SD0-SD17). */
#define LS_LINUX_IRQ_GPIO "26"
#define LS_LINUX_COST_NOTE ", each one store into the SMI's FIFO"

#endif /* SMI_MARKER_PORT_H */

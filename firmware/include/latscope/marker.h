/*
 * latscope marker library: LS_MARK(test, point, arg) writes one trace marker
 * with ONE store instruction to the marker target.
 *
 *   LS_MARK(TSL_A, T1, idx);   ->  value LS_MARKER(LS_TEST_TSL_A, LS_POINT_T1, idx)
 *
 * test and point are the names of latscope/markers.h without their prefix
 * (generated from defs/latscope_defs/markers.py; docs/markers.md), arg is any
 * integer expression (its low 7 bits are kept).
 *
 * Two variants, chosen at compile time by defining exactly one of:
 *
 *   LS_MARKER_BUS    the marker value, zero-extended, is stored to the bus
 *                    trace window. Nothing else: no state, no masking.
 *
 *   LS_MARKER_GPIO   the GPIO port takes a marker on every change of its
 *                    strobe (bit 16), so the word stored is
 *                    value | strobe << 16 with the strobe the opposite of the
 *                    last marker's. The strobe level is kept in a RAM shadow,
 *                    ls_marker_strobe (0 or LS_GPIO_STROBE), never read back
 *                    from the device: per marker one load and one store of the
 *                    shadow, one XOR, one OR and the single device store.
 *
 * Why the GPIO variant masks interrupts around those few instructions: the
 * flip of the shadow and the device store are two instructions, and an ISR
 * that writes markers between them would flip from a shadow that no longer
 * matches the pins (if the shadow was updated first: its first marker repeats
 * the pins' strobe level, no edge, the marker is lost; if the device was
 * written first: the same, one marker later). No ordering and no atomic
 * read-modify-write of the shadow closes that window, because the window is
 * between the shadow and the device. So the whole read-flip-store runs with
 * interrupts masked: in a thread the port's ls_marker_irq_save/restore mask
 * and restore the CPU's global enable (RV32: csrrci/csrs mstatus, two
 * instructions, no branch); in an ISR they are no-ops in effect because the
 * reference kernel does not nest interrupts (MIE is already clear), so ISR and
 * threads share one shadow that is always updated atomically. The cost is
 * that an IRQ arriving during a thread's marker is taken up to ~5
 * instructions later; docs/tests.md lists this among the GPIO method's
 * effects on the IL samples. The bus variant has neither cost.
 *
 * The port supplies the store target in "ls_marker_port.h" (found on the
 * include path; the suite's copies are firmware/suite/sim and
 * firmware/suite/native):
 *   void ls_marker_store(uint32_t word)       exactly one store of word to
 *                                             the variant's target (static
 *                                             inline or macro)
 *   unsigned ls_marker_irq_save(void)         GPIO only: mask interrupts,
 *   void ls_marker_irq_restore(unsigned key)  return/restore the old state;
 *                                             must nest (harmless in an ISR)
 * and one translation unit of the program defines the shadow with
 * LS_MARKER_DEFINE_STATE (the suite does it in firmware/suite/suite.c).
 */
#ifndef LATSCOPE_MARKER_H
#define LATSCOPE_MARKER_H

#include <stdint.h>

#include "latscope/markers.h"
#include "ls_marker_port.h"

#if defined(LS_MARKER_GPIO) == defined(LS_MARKER_BUS)
#error "define exactly one of LS_MARKER_GPIO and LS_MARKER_BUS"
#endif

/* GPIO_OUT bit driving the marker port's strobe pin. */
#define LS_GPIO_STROBE (1u << 16)

#ifdef LS_MARKER_GPIO
/* Strobe level of the last marker written: 0 or LS_GPIO_STROBE. Small, so
 * it lands in .sbss and is reached gp-relative (no address setup). */
extern uint32_t ls_marker_strobe;
#define LS_MARKER_DEFINE_STATE uint32_t ls_marker_strobe
#else
#define LS_MARKER_DEFINE_STATE extern int ls_marker_no_state_
#endif

/* One marker with a computed value (LS_MARK is the usual entry point). */
static inline __attribute__((always_inline)) void ls_mark_value(uint32_t value)
{
#ifdef LS_MARKER_GPIO
	unsigned key = ls_marker_irq_save();
	/* The shadow holds only the strobe bit, so flipping it and merging the
	 * 16-bit value are a XOR and an OR; the device is never read. */
	uint32_t strobe = ls_marker_strobe ^ LS_GPIO_STROBE;
	ls_marker_strobe = strobe;
	ls_marker_store(strobe | value);
	ls_marker_irq_restore(key);
#else
	ls_marker_store(value);
#endif
}

#define LS_MARK(test, point, arg) \
	ls_mark_value(LS_MARKER(LS_TEST_##test, LS_POINT_##point, (uint32_t)(arg)))

#endif /* LATSCOPE_MARKER_H */

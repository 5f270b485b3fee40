/*
 * What arch_rv32.c needs from a board besides kernel/board.h.
 */
#ifndef RV32_BOARD_H
#define RV32_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/board.h"

#define RV32_EXIT_FATAL_TRAP 3

/* Machine interrupt cause codes (mcause without the interrupt bit). */
#define RV32_IRQ_M_SOFT 3u
#define RV32_IRQ_M_TIMER 7u
#define RV32_IRQ_M_EXT 11u

/* Called once by arch_start() after mtvec is set: enable the board's
 * interrupt sources in mie (the kernel enables mstatus.MIE). */
void rv32_board_start(void);
/* Handle one interrupt cause inside k_isr_enter()/k_isr_exit(): the tick
 * (re-arm the timer, k_tick_announce()) or external lines
 * (k_irq_dispatch()). Returns false for a cause the board does not know. */
bool rv32_board_interrupt(uint32_t cause);
/* When several external lines are pending at a trap, serve the lines of this mask first
 * (the irq-high load profile); 0 by default: lowest line first. No line preempts another:
 * interrupts do not nest on this port. */
void rv32_board_lines_first(uint32_t lines);

#endif /* RV32_BOARD_H */

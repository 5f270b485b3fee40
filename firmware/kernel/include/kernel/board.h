/*
 * Board services a kernel port provides besides the arch interface: used by
 * the bench layer (kernel/bench_kernel.c), not by the scheduler core.
 */
#ifndef KERNEL_BOARD_H
#define KERNEL_BOARD_H

#include <stdbool.h>
#include <stdint.h>

/* Unmask / mask one external interrupt line at the interrupt controller. */
void board_irq_line_enable(unsigned line, bool enable);
/* Clear the line's pending latch at its source (the handler's acknowledge). */
void board_irq_line_ack(unsigned line);
uint32_t board_cycles(void);
uint32_t board_cycles_per_second(void);
uint32_t board_tick_period_ns(void);
void board_console_write(const char *s);
/* Start the tick (called by bench_run before the kernel starts). */
void board_tick_start(void);
/* End the program (bare metal: the simulation) with an exit code. Hosted
 * ports stop the kernel instead: k_start() returns in the boot context. */
void board_exit(int code) __attribute__((noreturn));
/* Hosted ports: the code given to board_exit() that made k_start() return. */
int board_exit_code(void);

#endif /* KERNEL_BOARD_H */

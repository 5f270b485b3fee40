/*
 * Board layer for the latscope simulated SoC (sim/firmware/soc.h, memory map
 * in sim/README.md): tick from mtime/mtimecmp, external interrupt lines from
 * VexRiscv's mask/pending CSRs (0xBC0/0xFC0), line 0 = the appliance's IRQ
 * through the IRQ_PENDING latch, console = SIM_PUTC, exit = SIM_EXIT.
 */
#include "kernel/kernel.h"
#include "rv32_board.h"
#include "soc.h"

#ifndef K_SIM_CPU_HZ
#define K_SIM_CPU_HZ 100000000u /* mtime counts CPU cycles */
#endif
#ifndef K_SIM_TICK_CYCLES
#define K_SIM_TICK_CYCLES 100000u /* 1 ms tick at 100 MHz */
#endif

static uint64_t next_tick;
static bool tick_enabled;
static uint32_t lines_first; /* rv32_board_lines_first() */

void board_tick_start(void)
{
	next_tick = soc_mtime() + K_SIM_TICK_CYCLES;
	soc_set_mtimecmp(next_tick);
	tick_enabled = true;
}

void rv32_board_start(void)
{
	if (tick_enabled)
		csr_set(mie, MIE_MTIE);
	csr_set(mie, MIE_MEIE); /* lines are gated one by one in CSR_IRQ_MASK */
}

K_IRQ_PATH(rv32_board_interrupt) bool rv32_board_interrupt(uint32_t cause)
{
	if (cause == RV32_IRQ_M_EXT) {
		uint32_t pending = csr_read(CSR_IRQ_PENDING) & csr_read(CSR_IRQ_MASK);
		/* The lines named first, then the others; each lowest line first. Line 0 (the
		 * appliance) alone costs one iteration. */
		uint32_t first = pending & lines_first;
		for (unsigned line = 0; first != 0; line++, first >>= 1)
			if (first & 1u)
				k_irq_dispatch(line);
		pending &= ~lines_first;
		for (unsigned line = 0; pending != 0; line++, pending >>= 1)
			if (pending & 1u)
				k_irq_dispatch(line);
		return true;
	}
	if (cause == RV32_IRQ_M_TIMER) {
		/* Drift-free period; if a tick was missed the next one is due at once. */
		next_tick += K_SIM_TICK_CYCLES;
		soc_set_mtimecmp(next_tick);
		k_tick_announce();
		return true;
	}
	return false;
}

void rv32_board_lines_first(uint32_t lines)
{
	lines_first = lines;
}

void board_irq_line_enable(unsigned line, bool enable)
{
	if (enable)
		csr_set(CSR_IRQ_MASK, 1u << line);
	else
		csr_clear(CSR_IRQ_MASK, 1u << line);
}

K_IRQ_PATH(board_irq_line_ack) void board_irq_line_ack(unsigned line)
{
	if (line == 0)
		soc_irq_acknowledge(); /* the only line with a latch on this SoC */
}

uint32_t board_cycles(void)
{
	return SOC_REG(SOC_MTIME_LO);
}

uint32_t board_cycles_per_second(void)
{
	return K_SIM_CPU_HZ;
}

uint32_t board_tick_period_ns(void)
{
	return (uint32_t)((uint64_t)K_SIM_TICK_CYCLES * 1000000000u / K_SIM_CPU_HZ);
}

void board_console_write(const char *s)
{
	while (*s != '\0')
		SOC_REG(SOC_SIM_PUTC) = (uint8_t)*s++;
}

void board_exit(int code)
{
	soc_exit(code);
}

int board_exit_code(void)
{
	return 0; /* never reached: board_exit ends the simulation */
}

/*
 * Board layer for QEMU "virt" (rv32): CLINT timer for the tick, the CLINT
 * machine software interrupt standing in for external lines raised by
 * bench_port_raise_irq(), NS16550 console, sifive_test device for the exit
 * code. Lets the RV32 port's assembly run on a second RISC-V target
 * (`make qemu-check`); the latscope SoC uses board_soc.c.
 */
#include "bench_port.h"
#include "kernel/kernel.h"
#include "rv32_board.h"

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))
#define CLINT_MSIP 0x02000000u
#define CLINT_MTIMECMP_LO 0x02004000u
#define CLINT_MTIMECMP_HI 0x02004004u
#define CLINT_MTIME_LO 0x0200BFF8u
#define CLINT_MTIME_HI 0x0200BFFCu
#define UART_THR 0x10000000u
#define TEST_DEVICE 0x00100000u
#define MTIME_HZ 10000000u
#define TICK_CYCLES (MTIME_HZ / 1000u) /* 1 ms */
#define MIE_MSIE (1u << 3)
#define MIE_MTIE (1u << 7)

static uint64_t next_tick;
static bool tick_enabled;
static volatile uint32_t lines_enabled;
static volatile uint32_t lines_pending;

static uint64_t mtime(void)
{
	uint32_t hi, lo;
	do {
		hi = REG32(CLINT_MTIME_HI);
		lo = REG32(CLINT_MTIME_LO);
	} while (hi != REG32(CLINT_MTIME_HI));
	return ((uint64_t)hi << 32) | lo;
}

static void set_mtimecmp(uint64_t when)
{
	REG32(CLINT_MTIMECMP_HI) = 0xFFFFFFFFu;
	REG32(CLINT_MTIMECMP_LO) = (uint32_t)when;
	REG32(CLINT_MTIMECMP_HI) = (uint32_t)(when >> 32);
}

void board_tick_start(void)
{
	next_tick = mtime() + TICK_CYCLES;
	set_mtimecmp(next_tick);
	tick_enabled = true;
}

void rv32_board_start(void)
{
	uint32_t bits = MIE_MSIE | (tick_enabled ? MIE_MTIE : 0u);
	__asm__ volatile("csrs mie, %0" : : "r"(bits));
}

bool rv32_board_interrupt(uint32_t cause)
{
	if (cause == RV32_IRQ_M_SOFT) {
		REG32(CLINT_MSIP) = 0;
		uint32_t pending = lines_pending & lines_enabled;
		for (unsigned line = 0; pending != 0; line++, pending >>= 1)
			if (pending & 1u)
				k_irq_dispatch(line);
		return true;
	}
	if (cause == RV32_IRQ_M_TIMER) {
		next_tick += TICK_CYCLES;
		set_mtimecmp(next_tick);
		k_tick_announce();
		return true;
	}
	return false;
}

void bench_port_raise_irq(int irq)
{
	lines_pending |= 1u << irq;
	if (lines_enabled & (1u << irq))
		REG32(CLINT_MSIP) = 1;
}

void board_irq_line_enable(unsigned line, bool enable)
{
	if (enable) {
		lines_enabled |= 1u << line;
		if (lines_pending & (1u << line))
			REG32(CLINT_MSIP) = 1;
	} else {
		lines_enabled &= ~(1u << line);
	}
}

void board_irq_line_ack(unsigned line)
{
	lines_pending &= ~(1u << line);
}

uint32_t board_cycles(void)
{
	return REG32(CLINT_MTIME_LO);
}

uint32_t board_cycles_per_second(void)
{
	return MTIME_HZ;
}

uint32_t board_tick_period_ns(void)
{
	return 1000000u;
}

void board_console_write(const char *s)
{
	while (*s != '\0')
		REG32(UART_THR) = (uint8_t)*s++;
}

void board_exit(int code)
{
	REG32(TEST_DEVICE) = code == 0 ? 0x5555u : (((uint32_t)code << 16) | 0x3333u);
	for (;;)
		;
}

int board_exit_code(void)
{
	return 0;
}

void _exit(int code)
{
	board_exit(code);
}

/*
 * Board layer for the RP2040 (Raspberry Pi Pico; wiring in docs/duts/pico.md),
 * core 0, from SRAM. Clock (clock_rp2040.h): the 12 MHz crystal (XOSC) drives clk_ref;
 * clk_sys (the processor, SysTick) and clk_peri (the UART) run from PLL_SYS at 125 MHz with
 * CM_CLOCK_FULL, else from clk_ref. Console: UART1 TX on
 * GPIO20 at 115200 baud (GPIO0-16 carry the markers). Line 0 = the
 * appliance's IRQ on GPIO17, rising edge, through IO_IRQ_BANK0 (NVIC 13).
 * Marker pins GPIO0-16 are SIO outputs from start-up on, all low.
 *
 * The load profiles' hardware (latscope/load_port.h): line 1 = the timer's
 * alarm 0 (TIMER_IRQ_0, NVIC 0) at the rate asked, in microseconds (the irq
 * profiles), and DMA channel 0 paced by its timer 0, reading a 1 KiB ring into
 * one word (the bus profile).
 */
#include "latscope/bench_api.h"
#include "latscope/load_port.h"
#include "cm_board.h"
#include "clock_rp2040.h"

#define CPU_HZ RP2040_SYS_HZ
#define RESETS_RESET_CLR 0x4000F000u /* RESETS + atomic clear alias */
#define RESETS_RESET_SET 0x4000E000u /* RESETS + atomic set alias */
#define RESET_PLL_SYS (1u << 12)
#define PLL_SYS 0x40028000u /* CS, PWR, FBDIV_INT, PRIM */
#define PLL_SYS_PWR_CLR (PLL_SYS + 0x3004u) /* atomic clear alias of PWR */
#define CLK_SYS_SELECTED 0x40008044u
#define RESETS_RESET_DONE 0x4000C008u
#define RESET_IO_BANK0 (1u << 5)
#define RESET_PADS_BANK0 (1u << 8)
#define RESET_UART1 (1u << 23)
#define RESET_TIMER (1u << 21)
#define RESET_DMA (1u << 2)
#define WATCHDOG_TICK 0x4005802Cu
#define TIMER 0x40054000u
#define TIMER_ALARM0 (TIMER + 0x10u)
#define TIMER_TIMERAWL (TIMER + 0x28u)
#define TIMER_INTR (TIMER + 0x34u)
#define TIMER_INTE (TIMER + 0x38u)
#define TIMER_IRQ_0 0u
#define LOAD_LINE 1u           /* alarm 0, the load profiles' interrupt */
#define DMA_CH0 0x50000000u    /* READ_ADDR, WRITE_ADDR, TRANS_COUNT, CTRL_TRIG */
#define DMA_TIMER0 0x50000420u /* pacing: X / Y transfers per clk_sys cycle */
#define DREQ_DMA_TIMER0 0x3Bu
#define BUS_LOAD_RING_LOG2 10u /* bytes */
#define XOSC_CTRL 0x40024000u
#define XOSC_STATUS 0x40024004u
#define XOSC_STARTUP 0x4002400Cu
#define CLK_REF_CTRL 0x40008030u
#define CLK_REF_SELECTED 0x40008038u
#define CLK_SYS_CTRL 0x4000803Cu
#define CLK_PERI_CTRL 0x40008048u
#define IO_BANK0 0x40014000u
#define IO_GPIO_CTRL(n) (IO_BANK0 + 4u + 8u * (n))
#define IO_INTR2 (IO_BANK0 + 0x0F8u)       /* raw edges of GPIO16-23 */
#define IO_PROC0_INTE2 (IO_BANK0 + 0x108u) /* core 0 enables of GPIO16-23 */
#define FUNC_UART 2u
#define FUNC_SIO 5u
#define UART1 0x40038000u
#define UART_DR 0x000u
#define UART_FR 0x018u
#define UART_IBRD 0x024u
#define UART_FBRD 0x028u
#define UART_LCR_H 0x02Cu
#define UART_CR 0x030u
#define SIO_GPIO_OE_SET 0xD0000024u
#define SIO_GPIO_OUT_CLR 0xD0000018u
#define MARKER_PINS 0x1FFFFu
#define IRQ_GPIO 17u
#define CONSOLE_GPIO 20u
#define IRQ_EDGE_HIGH (1u << (4u * (IRQ_GPIO % 8u) + 3u))
#define IO_IRQ_BANK0 13u

#ifdef CM_CLOCK_FULL
/* Datasheet 2.18.2: out of reset, REFDIV and FBDIV, power the PLL and its VCO, lock, then
 * the post dividers and their power. */
static void pll_sys_on(void)
{
	CM_REG(RESETS_RESET_SET) = RESET_PLL_SYS; /* whatever the boot ROM left, from scratch */
	CM_REG(RESETS_RESET_CLR) = RESET_PLL_SYS;
	while (!(CM_REG(RESETS_RESET_DONE) & RESET_PLL_SYS))
		;
	CM_REG(PLL_SYS + 0x0u) = RP2040_PLL_REFDIV;  /* CS */
	CM_REG(PLL_SYS + 0x8u) = RP2040_PLL_FBDIV;   /* FBDIV_INT */
	CM_REG(PLL_SYS_PWR_CLR) = 1u << 0 | 1u << 5; /* PD, VCOPD off */
	while (!(CM_REG(PLL_SYS + 0x0u) & (1u << 31))) /* LOCK */
		;
	CM_REG(PLL_SYS + 0xCu) = RP2040_PLL_POSTDIV1 << 16 | RP2040_PLL_POSTDIV2 << 12; /* PRIM */
	CM_REG(PLL_SYS_PWR_CLR) = 1u << 3;           /* POSTDIVPD off */
}
#endif

static void clocks_from_crystal(void)
{
	CM_REG(XOSC_CTRL) = 0xAA0u;                 /* 1-15 MHz range */
	CM_REG(XOSC_STARTUP) = 47u;                 /* ~1 ms at 12 MHz, in 256-cycle units */
	CM_REG(XOSC_CTRL) = 0xFAB000u | 0xAA0u;     /* enable */
	while (!(CM_REG(XOSC_STATUS) & (1u << 31))) /* STABLE */
		;
	CM_REG(CLK_REF_CTRL) = 2u;                  /* clk_ref = XOSC (glitchless) */
	while (CM_REG(CLK_REF_SELECTED) != (1u << 2))
		;
	CM_REG(CLK_SYS_CTRL) = 0u;                  /* clk_sys = clk_ref */
#ifdef CM_CLOCK_FULL
	pll_sys_on();
	CM_REG(CLK_SYS_CTRL) = 0u << 5;             /* AUXSRC = PLL_SYS, while on clk_ref */
	CM_REG(CLK_SYS_CTRL) = 0u << 5 | 1u;        /* SRC = aux (glitchless) */
	while (CM_REG(CLK_SYS_SELECTED) != (1u << 1))
		;
#endif
	CM_REG(CLK_PERI_CTRL) = 0u;                 /* AUXSRC may change only while off */
	CM_REG(CLK_PERI_CTRL) = 1u << 11;           /* clk_peri = clk_sys, enabled */
}

/* Before main (picolibc's crt0 runs constructors). */
__attribute__((constructor)) static void rp2040_init(void)
{
	clocks_from_crystal();
	uint32_t blocks = RESET_IO_BANK0 | RESET_PADS_BANK0 | RESET_UART1 | RESET_TIMER | RESET_DMA;
	CM_REG(RESETS_RESET_CLR) = blocks;
	while ((CM_REG(RESETS_RESET_DONE) & blocks) != blocks)
		;
	/* Markers: GPIO0-16 driven by SIO, low (the strobe starts low). */
	CM_REG(SIO_GPIO_OUT_CLR) = MARKER_PINS;
	CM_REG(SIO_GPIO_OE_SET) = MARKER_PINS;
	for (unsigned pin = 0; pin <= 16u; pin++)
		CM_REG(IO_GPIO_CTRL(pin)) = FUNC_SIO;
	CM_REG(IO_GPIO_CTRL(IRQ_GPIO)) = FUNC_SIO; /* input: SIO leaves OE off */
	CM_REG(IO_PROC0_INTE2) = IRQ_EDGE_HIGH;
	/* UART1 TX on GPIO20, divisors from clk_peri (clock_rp2040.h). */
	CM_REG(IO_GPIO_CTRL(CONSOLE_GPIO)) = FUNC_UART;
	CM_REG(UART1 + UART_IBRD) = RP2040_UART_IBRD;
	CM_REG(UART1 + UART_FBRD) = RP2040_UART_FBRD;
	CM_REG(UART1 + UART_LCR_H) = 0x70u;         /* 8 bits, FIFOs on */
	CM_REG(UART1 + UART_CR) = 0x101u;           /* UARTEN, TXE */
}

uint32_t cm_board_cpu_hz(void)
{
	return CPU_HZ;
}

unsigned cm_board_nvic_irq(unsigned line)
{
	return line == LOAD_LINE ? TIMER_IRQ_0 : IO_IRQ_BANK0; /* line 0 is the only pin */
}

int cm_board_line_of(unsigned nvic_irq)
{
	return nvic_irq == IO_IRQ_BANK0 ? 0 : nvic_irq == TIMER_IRQ_0 ? (int)LOAD_LINE : -1;
}

/* ------------------------------------------------------------ load profiles */

static uint32_t bus_load_ring[(1u << BUS_LOAD_RING_LOG2) / 4u]
	__attribute__((aligned(1u << BUS_LOAD_RING_LOG2)));
static uint32_t bus_load_sink;
static uint32_t alarm_period, alarm_next;

/* Each paced transfer is a read and a write: one every 200 / duty cycles gives about duty
 * percent of the bus (X / Y = duty / 200). The count runs out after 2^32 transfers. */
int load_port_bus_start(unsigned duty_percent)
{
	if (duty_percent == 0 || duty_percent > 100)
		return BENCH_ERROR;
	CM_REG(DMA_TIMER0) = duty_percent << 16 | 200u;
	CM_REG(DMA_CH0 + 0x0u) = (uint32_t)(uintptr_t)bus_load_ring;
	CM_REG(DMA_CH0 + 0x4u) = (uint32_t)(uintptr_t)&bus_load_sink;
	CM_REG(DMA_CH0 + 0x8u) = 0xFFFFFFFFu;
	/* Paced by timer 0, no chain (CHAIN_TO = itself), read ring, reads increment, words,
	 * enable (this store triggers it). */
	CM_REG(DMA_CH0 + 0xCu) = DREQ_DMA_TIMER0 << 15 | 0u << 11 | BUS_LOAD_RING_LOG2 << 6 |
				 1u << 4 | 2u << 2 | 1u;
	return BENCH_SUCCESS;
}

int load_port_irq_start(unsigned rate_hz, int more_urgent)
{
	alarm_period = rate_hz ? 1000000u / rate_hz : 0; /* the timer counts microseconds */
	if (alarm_period == 0)
		return -1;
	CM_REG(WATCHDOG_TICK) = 1u << 9 | RP2040_REF_HZ / 1000000u; /* clk_ref to 1 us ticks */
	CM_REG(TIMER_INTE) = 1u;
	alarm_next = CM_REG(TIMER_TIMERAWL) + alarm_period;
	CM_REG(TIMER_ALARM0) = alarm_next;
	cm_line_priority(LOAD_LINE, more_urgent ? CM_ISR_PRIORITY_ABOVE : CM_ISR_PRIORITY_BELOW);
	return (int)LOAD_LINE;
}

/* Clear the alarm and arm the next, a period after the last (drift-free); one already
 * past is set a period from now. */
void load_port_irq_ack(void)
{
	CM_REG(TIMER_INTR) = 1u;
	alarm_next += alarm_period;
	if ((int32_t)(alarm_next - CM_REG(TIMER_TIMERAWL)) <= 0)
		alarm_next = CM_REG(TIMER_TIMERAWL) + alarm_period;
	CM_REG(TIMER_ALARM0) = alarm_next;
}

void board_irq_line_ack(unsigned line)
{
	if (line == 0)
		CM_REG(IO_INTR2) = IRQ_EDGE_HIGH; /* write 1 to clear the edge latch */
}

void board_console_write(const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\n')
			board_console_write("\r");
		while (CM_REG(UART1 + UART_FR) & (1u << 5)) /* TXFF */
			;
		CM_REG(UART1 + UART_DR) = (uint8_t)*s;
	}
}

/* No host to tell: print the code and stop. */
void board_exit(int code)
{
	cm_halt(code);
}

void _exit(int code)
{
	board_exit(code);
}

/*
 * Board layer for the RP2040 (Raspberry Pi Pico; wiring in docs/duts/pico.md),
 * core 0, from SRAM. Clock: the 12 MHz crystal (XOSC) drives clk_ref, clk_sys
 * (the processor, SysTick) and clk_peri (the UART). Console: UART1 TX on
 * GPIO20 at 115200 baud (GPIO0-16 carry the markers). Line 0 = the
 * appliance's IRQ on GPIO17, rising edge, through IO_IRQ_BANK0 (NVIC 13).
 * Marker pins GPIO0-16 are SIO outputs from start-up on, all low.
 */
#include "bench_port.h"
#include "cm_board.h"

#define CPU_HZ 12000000u
#define RESETS_RESET_CLR 0x4000F000u /* RESETS + atomic clear alias */
#define RESETS_RESET_DONE 0x4000C008u
#define RESET_IO_BANK0 (1u << 5)
#define RESET_PADS_BANK0 (1u << 8)
#define RESET_UART1 (1u << 23)
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
	CM_REG(CLK_PERI_CTRL) = 0u;                 /* AUXSRC may change only while off */
	CM_REG(CLK_PERI_CTRL) = 1u << 11;           /* clk_peri = clk_sys, enabled */
}

/* Before main (picolibc's crt0 runs constructors). */
__attribute__((constructor)) static void rp2040_init(void)
{
	clocks_from_crystal();
	uint32_t blocks = RESET_IO_BANK0 | RESET_PADS_BANK0 | RESET_UART1;
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
	/* UART1 TX on GPIO20: 12 MHz / (16 * 115200) = 6.51 -> 6 + 33/64. */
	CM_REG(IO_GPIO_CTRL(CONSOLE_GPIO)) = FUNC_UART;
	CM_REG(UART1 + UART_IBRD) = 6u;
	CM_REG(UART1 + UART_FBRD) = 33u;
	CM_REG(UART1 + UART_LCR_H) = 0x70u;         /* 8 bits, FIFOs on */
	CM_REG(UART1 + UART_CR) = 0x101u;           /* UARTEN, TXE */
}

uint32_t cm_board_cpu_hz(void)
{
	return CPU_HZ;
}

unsigned cm_board_nvic_irq(unsigned line)
{
	(void)line;
	return IO_IRQ_BANK0; /* only line 0 is wired */
}

int cm_board_line_of(unsigned nvic_irq)
{
	return nvic_irq == IO_IRQ_BANK0 ? 0 : -1;
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

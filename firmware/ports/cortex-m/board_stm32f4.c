/*
 * Board layer for STM32F4 Nucleo-64 boards (NUCLEO-F401RE, -F446RE; wiring in
 * docs/duts/nucleo.md), and for QEMU's netduinoplus2 (STM32F405) with
 * -DCM_QEMU. Clock: the reset clock, HSI 16 MHz (QEMU: its 168 MHz model).
 * Console: USART2 on PA2 at 115200 baud (the ST-LINK's virtual COM port);
 * under QEMU, semihosting. Lines: bench line n = EXTIn on PAn, rising edge
 * (line 0 = the appliance's IRQ on PA0); under QEMU raised in software.
 * Marker pins (suite/stm32f4/ls_marker_port.h): PB0-PB10, PB12-PB15, PC11
 * (D11) and PC8 (STROBE) are outputs from start-up on.
 */
#include "bench_port.h"
#include "cm_board.h"

#ifdef CM_QEMU
#include <semihost.h>
#define CPU_HZ 168000000u
#else
#define CPU_HZ 16000000u
#endif

#define RCC_AHB1ENR 0x40023830u
#define RCC_APB1ENR 0x40023840u
#define RCC_APB2ENR 0x40023844u
#define GPIOA 0x40020000u
#define GPIOB 0x40020400u
#define GPIOC 0x40020800u
#define GPIO_MODER 0x00u
#define GPIO_OSPEEDR 0x08u
#define GPIO_BSRR 0x18u
#define GPIO_AFRL 0x20u
#define USART2 0x40004400u
#define USART_SR 0x00u
#define USART_DR 0x04u
#define USART_BRR 0x08u
#define USART_CR1 0x0Cu
#define SYSCFG_EXTICR1 0x40013808u
#define EXTI_IMR 0x40013C00u
#define EXTI_RTSR 0x40013C08u
#define EXTI_PR 0x40013C14u
#define EXTI0_NVIC_IRQ 6u /* EXTI0..EXTI4 are NVIC 6..10 */

/* Before main (picolibc's crt0 runs constructors): pins, console, EXTI. */
__attribute__((constructor)) static void stm32f4_init(void)
{
	CM_REG(RCC_AHB1ENR) |= 0x7u;      /* GPIOA, B, C */
	CM_REG(RCC_APB1ENR) |= 1u << 17;  /* USART2 */
	CM_REG(RCC_APB2ENR) |= 1u << 14;  /* SYSCFG */
	/* Markers: all of port B output (PB11 does not exist on these packages),
	 * PC8 and PC11; fastest edges. All low: the strobe starts low. */
	CM_REG(GPIOB + GPIO_BSRR) = 0xFFFFu << 16;
	CM_REG(GPIOC + GPIO_BSRR) = ((1u << 8) | (1u << 11)) << 16;
	CM_REG(GPIOB + GPIO_MODER) = 0x55555555u;
	CM_REG(GPIOB + GPIO_OSPEEDR) = 0xFFFFFFFFu;
	CM_REG(GPIOC + GPIO_MODER) = (CM_REG(GPIOC + GPIO_MODER) & ~(3u << 16 | 3u << 22)) |
				     1u << 16 | 1u << 22;
	CM_REG(GPIOC + GPIO_OSPEEDR) |= 3u << 16 | 3u << 22;
	/* USART2 TX on PA2 (AF7), 16 MHz / 115200 = 138.9 -> BRR 8 + 11/16. */
	CM_REG(GPIOA + GPIO_MODER) = (CM_REG(GPIOA + GPIO_MODER) & ~(3u << 4)) | 2u << 4;
	CM_REG(GPIOA + GPIO_AFRL) = (CM_REG(GPIOA + GPIO_AFRL) & ~(0xFu << 8)) | 7u << 8;
	CM_REG(USART2 + USART_BRR) = 0x8Bu;
	CM_REG(USART2 + USART_CR1) = 1u << 13 | 1u << 3; /* UE, TE */
	/* EXTI0-4 from PA0-4 (inputs after reset), rising edges, unmasked; the
	 * NVIC gates each line (bench_irq_enable). */
	CM_REG(SYSCFG_EXTICR1) = 0;
	CM_REG(EXTI_RTSR) |= 0x1Fu;
	CM_REG(EXTI_IMR) |= 0x1Fu;
}

uint32_t cm_board_cpu_hz(void)
{
	return CPU_HZ;
}

unsigned cm_board_nvic_irq(unsigned line)
{
	return EXTI0_NVIC_IRQ + line;
}

int cm_board_line_of(unsigned nvic_irq)
{
	unsigned line = nvic_irq - EXTI0_NVIC_IRQ;
	return line < BENCH_IRQ_LINES ? (int)line : -1;
}

void board_irq_line_ack(unsigned line)
{
	CM_REG(EXTI_PR) = 1u << line; /* write 1 to clear the edge's latch */
}

#ifdef CM_QEMU
void bench_port_raise_irq(int irq)
{
	unsigned nvic = cm_board_nvic_irq((unsigned)irq);
	CM_REG(CM_NVIC_ISPR + 4u * (nvic / 32u)) = 1u << (nvic % 32u);
}

void board_console_write(const char *s)
{
	sys_semihost_write0(s);
}

void board_exit(int code)
{
	sys_semihost_exit_extended((uintptr_t)code);
}
#else
void board_console_write(const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\n')
			board_console_write("\r");
		while (!(CM_REG(USART2 + USART_SR) & (1u << 7))) /* TXE */
			;
		CM_REG(USART2 + USART_DR) = (uint8_t)*s;
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
#endif

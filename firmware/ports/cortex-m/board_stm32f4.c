/*
 * Board layer for STM32F4 Nucleo-64 boards (NUCLEO-F401RE, -F446RE; wiring in
 * docs/duts/nucleo.md), and for QEMU's netduinoplus2 (STM32F405) with
 * -DCM_QEMU. Clock (clock_stm32f4.h): with CM_CLOCK_FULL the F446's 180 MHz from the PLL
 * (HSI, or the ST-LINK's 8 MHz with CM_CLOCK_HSE), else the reset clock, HSI 16 MHz. QEMU
 * models no RCC, PWR or flash interface (their stores are logged by -d unimp, their ready
 * bits read 0 and are not waited for) and clocks SysTick at its fixed 168 MHz.
 * Console: USART2 on PA2 at 115200 baud (the ST-LINK's virtual COM port);
 * under QEMU, semihosting. Lines: bench line n = EXTIn on PAn, rising edge
 * (line 0 = the appliance's IRQ on PA0); under QEMU raised in software.
 * Marker pins (suite/stm32f4/ls_marker_port.h): PB0-PB10, PB12-PB15, PC11
 * (D11) and PC8 (STROBE) are outputs from start-up on; with CM_FMC_MARKERS (the
 * NUCLEO-F446ZE's memory-bus markers, suite/stm32-fmc) the FMC's bank 1 instead.
 *
 * The load profiles' hardware (latscope/load_port.h): line 5 = TIM2's update
 * interrupt at the rate asked (the irq profiles), and DMA2 stream 5 moving words
 * from one RAM buffer to another on TIM1's update requests (the bus profile).
 * QEMU models TIM2 but neither DMA2 nor TIM1: there the bus profile's stores go
 * to unimplemented devices (-d unimp logs them) and nothing moves.
 */
#include "latscope/bench_api.h"
#include "latscope/load_port.h"
#include "cm_board.h"
#include "clock_stm32f4.h"
#include "fmc_stm32.h"

#ifdef CM_QEMU
#include <semihost.h>
#define CPU_HZ 168000000u /* QEMU's netduinoplus2 SysTick, whatever RCC says */
#else
#define CPU_HZ STM32_SYSCLK_HZ
#endif
#define TIM2_HZ STM32_TIM_APB1_HZ

#define RCC_CR 0x40023800u
#define RCC_PLLCFGR 0x40023804u
#define RCC_CFGR 0x40023808u
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
#define TIM1 0x40010000u
#define TIM2 0x40000000u
#define TIM_CR1 0x00u
#define TIM_DIER 0x0Cu
#define TIM_SR 0x10u
#define TIM_EGR 0x14u
#define TIM_ARR 0x2Cu
#define TIM2_NVIC_IRQ 28u
#define LOAD_LINE 5u          /* TIM2, the load profiles' interrupt */
#define DMA2_S5 0x40026488u   /* DMA2 stream 5: channel 6 is TIM1_UP's request */
#define DMA_SCR 0x00u
#define DMA_SNDTR 0x04u
#define DMA_SPAR 0x08u
#define DMA_SM0AR 0x0Cu
#define BUS_LOAD_WORDS 64u
#define PWR_CR 0x40007000u
#define PWR_CSR 0x40007004u
#define FLASH_ACR 0x40023C00u

#ifdef CM_CLOCK_FULL
/* Until the bits are set. Not under QEMU: its RCC and PWR are unimplemented, reads give 0. */
static void wait_bits(uint32_t addr, uint32_t bits)
{
#ifdef CM_QEMU
	(void)addr;
	(void)bits;
#else
	while ((CM_REG(addr) & bits) != bits)
		;
#endif
}

/* RM0390 5.1.4 (over-drive) and 6.3: PLL on, over-drive on, flash wait states and bus
 * prescalers before the switch, then SYSCLK = PLL. */
static void clock_full(void)
{
#ifdef CM_CLOCK_HSE
	CM_REG(RCC_CR) |= 1u << 18 | 1u << 16; /* HSEBYP: the ST-LINK's clock, HSEON */
	wait_bits(RCC_CR, 1u << 17);           /* HSERDY */
	CM_REG(RCC_PLLCFGR) = STM32_RCC_PLLCFGR_VALUE(1);
#else
	CM_REG(RCC_PLLCFGR) = STM32_RCC_PLLCFGR_VALUE(0);
#endif
	CM_REG(RCC_APB1ENR) |= 1u << 28;                     /* PWR */
	CM_REG(PWR_CR) = (CM_REG(PWR_CR) & ~(3u << 14)) | 3u << 14; /* VOS scale 1 */
	CM_REG(RCC_CR) |= 1u << 24;                          /* PLLON */
	wait_bits(RCC_CR, 1u << 25);                         /* PLLRDY */
	CM_REG(PWR_CR) |= 1u << 16;                          /* ODEN */
	wait_bits(PWR_CSR, 1u << 16);                        /* ODRDY */
	CM_REG(PWR_CR) |= 1u << 17;                          /* ODSWEN */
	wait_bits(PWR_CSR, 1u << 17);                        /* ODSWRDY */
	/* Wait states, prefetch and both caches (ART accelerator) before the faster clock. */
	CM_REG(FLASH_ACR) = STM32_FLASH_WAIT_STATES | 1u << 8 | 1u << 9 | 1u << 10;
	CM_REG(RCC_CFGR) = STM32_RCC_CFGR_PRESCALERS;
	CM_REG(RCC_CFGR) = STM32_RCC_CFGR_PRESCALERS | 2u; /* SW = PLL */
	wait_bits(RCC_CFGR, 2u << 2);                       /* SWS = PLL */
}
#endif

/* Before main (picolibc's crt0 runs constructors): pins, console, EXTI. */
__attribute__((constructor)) static void stm32f4_init(void)
{
#ifdef CM_CLOCK_FULL
	clock_full();
#endif
	CM_REG(RCC_AHB1ENR) |= 0x7u;      /* GPIOA, B, C */
	CM_REG(RCC_APB1ENR) |= 1u << 17;  /* USART2 */
	CM_REG(RCC_APB2ENR) |= 1u << 14;  /* SYSCFG */
#ifdef CM_FMC_MARKERS
	stm32_fmc_init(); /* markers on the memory bus (fmc_stm32.h) */
#else
	/* Markers: all of port B output (PB11 does not exist on these packages),
	 * PC8 and PC11; fastest edges. All low: the strobe starts low. */
	CM_REG(GPIOB + GPIO_BSRR) = 0xFFFFu << 16;
	CM_REG(GPIOC + GPIO_BSRR) = ((1u << 8) | (1u << 11)) << 16;
	CM_REG(GPIOB + GPIO_MODER) = 0x55555555u;
	CM_REG(GPIOB + GPIO_OSPEEDR) = 0xFFFFFFFFu;
	CM_REG(GPIOC + GPIO_MODER) = (CM_REG(GPIOC + GPIO_MODER) & ~(3u << 16 | 3u << 22)) |
				     1u << 16 | 1u << 22;
	CM_REG(GPIOC + GPIO_OSPEEDR) |= 3u << 16 | 3u << 22;
#endif
	/* USART2 TX on PA2 (AF7); BRR from APB1's clock (clock_stm32f4.h). */
	CM_REG(GPIOA + GPIO_MODER) = (CM_REG(GPIOA + GPIO_MODER) & ~(3u << 4)) | 2u << 4;
	CM_REG(GPIOA + GPIO_AFRL) = (CM_REG(GPIOA + GPIO_AFRL) & ~(0xFu << 8)) | 7u << 8;
	CM_REG(USART2 + USART_BRR) = STM32_USART2_BRR;
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
	return line == LOAD_LINE ? TIM2_NVIC_IRQ : EXTI0_NVIC_IRQ + line;
}

int cm_board_line_of(unsigned nvic_irq)
{
	if (nvic_irq == TIM2_NVIC_IRQ)
		return LOAD_LINE;
	unsigned line = nvic_irq - EXTI0_NVIC_IRQ;
	return line < BENCH_IRQ_LINES && line != LOAD_LINE ? (int)line : -1;
}

/* ------------------------------------------------------------ load profiles */

static uint32_t bus_load_buffer[2][BUS_LOAD_WORDS];

/* TIM1 counts the processor's clock (APB2 undivided, or /2 with the timers' x2).
 * Every TIM1 update requests one word (a read and a write on the bus) of a circular copy:
 * an update every 200 / duty cycles gives about duty percent of the bus (the DMA's own
 * arbitration cycles are not counted). */
int load_port_bus_start(unsigned duty_percent)
{
	if (duty_percent == 0 || duty_percent > 100)
		return BENCH_ERROR;
	CM_REG(RCC_AHB1ENR) |= 1u << 22; /* DMA2 */
	CM_REG(RCC_APB2ENR) |= 1u << 0;  /* TIM1 */
	CM_REG(DMA2_S5 + DMA_SPAR) = (uint32_t)(uintptr_t)bus_load_buffer[0];
	CM_REG(DMA2_S5 + DMA_SM0AR) = (uint32_t)(uintptr_t)bus_load_buffer[1];
	CM_REG(DMA2_S5 + DMA_SNDTR) = BUS_LOAD_WORDS;
	/* Channel 6, words, both addresses increment, circular, peripheral to memory. */
	uint32_t scr = 6u << 25 | 2u << 13 | 2u << 11 | 1u << 10 | 1u << 9 | 1u << 8;
	CM_REG(DMA2_S5 + DMA_SCR) = scr;
	CM_REG(DMA2_S5 + DMA_SCR) = scr | 1u; /* EN */
	CM_REG(TIM1 + TIM_ARR) = 200u / duty_percent - 1u;
	CM_REG(TIM1 + TIM_DIER) = 1u << 8; /* UDE: a DMA request per update */
	CM_REG(TIM1 + TIM_CR1) = 1u;       /* CEN */
	return BENCH_SUCCESS;
}

#ifdef CM_QEMU
static bool load_irq_started;

/* QEMU 7.2's TIM2 fires about once per start (its counter does not reload at an update):
 * under QEMU the busy-wait hook raises the line instead, as it raises line 0. */
void bench_port_load_irq_step(void)
{
	if (load_irq_started)
		bench_port_raise_irq(LOAD_LINE);
}
#endif

int load_port_irq_start(unsigned rate_hz, int more_urgent)
{
	uint32_t period = rate_hz ? TIM2_HZ / rate_hz : 0;
	if (period < 2)
		return -1;
	cm_line_priority(LOAD_LINE, more_urgent ? CM_ISR_PRIORITY_ABOVE : CM_ISR_PRIORITY_BELOW);
#ifdef CM_QEMU
	load_irq_started = true;
#else
	CM_REG(RCC_APB1ENR) |= 1u << 0; /* TIM2 */
	CM_REG(TIM2 + TIM_ARR) = period - 1u;
	CM_REG(TIM2 + TIM_CR1) = 1u << 2; /* URS: only an overflow interrupts, not UG */
	CM_REG(TIM2 + TIM_EGR) = 1u;      /* UG: start from 0 with this period */
	CM_REG(TIM2 + TIM_DIER) = 1u;     /* UIE */
	CM_REG(TIM2 + TIM_CR1) = 1u << 2 | 1u; /* and CEN */
#endif
	return LOAD_LINE;
}

void load_port_irq_ack(void)
{
	CM_REG(TIM2 + TIM_SR) = 0; /* UIF is cleared by writing 0 */
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

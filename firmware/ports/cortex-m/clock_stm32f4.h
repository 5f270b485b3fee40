/*
 * The STM32F446's clock tree (RM0390 rev 6, section 6 "RCC"), as constants: the board code
 * programs these, tests/firmware/test_cm_clocks.py checks them against the manual's limits.
 *
 *   CM_CLOCK_FULL, source HSI:  HSI 16 MHz / M 8 = 2 MHz * N 180 = VCO 360 MHz / P 2 = 180 MHz
 *   CM_CLOCK_FULL + CM_CLOCK_HSE: the ST-LINK's 8 MHz (MCO into PH0 = OSC_IN, HSE bypass;
 *                               the NUCLEO-F446RE's default solder bridges) / M 4, the same
 *                               N and P
 *   otherwise (the reset clock): HSI 16 MHz, no PLL, every bus undivided
 *
 * 180 MHz needs voltage scale 1 with over-drive (RM0390 5.1.4) and 5 flash wait states at
 * 2.7-3.6 V (RM0390 table 5); APB1 at most 45 MHz (/4), APB2 at most 90 MHz (/2). The
 * timers of a divided APB count at twice its clock (RM0390 6.2, "timer clock").
 * PLLQ only feeds USB/SDIO (unused here): 360/8 = 45 MHz, in range.
 */
#ifndef CLOCK_STM32F4_H
#define CLOCK_STM32F4_H

#define STM32_HSI_HZ 16000000u
#define STM32_STLINK_MCO_HZ 8000000u

#ifdef CM_CLOCK_FULL
#ifdef CM_CLOCK_HSE
#define STM32_PLL_IN_HZ STM32_STLINK_MCO_HZ
#define STM32_PLL_M 4u
#else
#define STM32_PLL_IN_HZ STM32_HSI_HZ
#define STM32_PLL_M 8u
#endif
#define STM32_PLL_N 180u
#define STM32_PLL_P 2u
#define STM32_PLL_Q 8u
#define STM32_PLL_R 2u /* F446 only: I2S/SAI, unused; 2 is its smallest value */
#define STM32_VCO_IN_HZ (STM32_PLL_IN_HZ / STM32_PLL_M)
#define STM32_VCO_HZ (STM32_VCO_IN_HZ * STM32_PLL_N)
#define STM32_SYSCLK_HZ (STM32_VCO_HZ / STM32_PLL_P)
#define STM32_APB1_DIV 4u
#define STM32_APB2_DIV 2u
#define STM32_FLASH_WAIT_STATES 5u
#else
#define STM32_SYSCLK_HZ STM32_HSI_HZ
#define STM32_APB1_DIV 1u
#define STM32_APB2_DIV 1u
#define STM32_FLASH_WAIT_STATES 0u
#endif

#define STM32_PCLK1_HZ (STM32_SYSCLK_HZ / STM32_APB1_DIV)
#define STM32_TIM_APB1_HZ (STM32_APB1_DIV == 1u ? STM32_PCLK1_HZ : 2u * STM32_PCLK1_HZ)
/* USART2 on APB1, 16x oversampling: BRR = fPCLK / baud, rounded (RM0390 25.4.4). */
#define STM32_CONSOLE_BAUD 115200u
#define STM32_USART2_BRR ((STM32_PCLK1_HZ + STM32_CONSOLE_BAUD / 2u) / STM32_CONSOLE_BAUD)

/* Register fields (RM0390 6.3). */
#define STM32_RCC_PLLCFGR_VALUE(src_hse) \
	(STM32_PLL_M | STM32_PLL_N << 6 | (STM32_PLL_P / 2u - 1u) << 16 | \
	 (src_hse ? 1u : 0u) << 22 | STM32_PLL_Q << 24 | STM32_PLL_R << 28)
/* HPRE /1, PPRE1 (bits 12:10: 100 /2, 101 /4, ...), PPRE2 (bits 15:13), SW = PLL. */
#define STM32_PPRE(div) ((div) == 1u ? 0u : (div) == 2u ? 4u : (div) == 4u ? 5u : (div) == 8u ? 6u : 7u)
#define STM32_RCC_CFGR_PRESCALERS (STM32_PPRE(STM32_APB1_DIV) << 10 | STM32_PPRE(STM32_APB2_DIV) << 13)

#ifdef CM_CLOCK_FULL
_Static_assert(STM32_PLL_M >= 2u && STM32_PLL_M <= 63u, "PLLM 2..63");
_Static_assert(STM32_VCO_IN_HZ >= 1000000u && STM32_VCO_IN_HZ <= 2000000u, "VCO input 1-2 MHz");
_Static_assert(STM32_PLL_N >= 50u && STM32_PLL_N <= 432u, "PLLN 50..432");
_Static_assert(STM32_VCO_HZ >= 100000000u && STM32_VCO_HZ <= 432000000u, "VCO 100-432 MHz");
_Static_assert(STM32_SYSCLK_HZ <= 180000000u, "SYSCLK at most 180 MHz");
_Static_assert(STM32_PCLK1_HZ <= 45000000u, "APB1 at most 45 MHz");
_Static_assert(STM32_SYSCLK_HZ / STM32_APB2_DIV <= 90000000u, "APB2 at most 90 MHz");
#endif

#endif /* CLOCK_STM32F4_H */

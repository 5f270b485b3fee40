/*
 * The RP2040's clock tree (RP2040 datasheet, 2.15 "Clocks", 2.16 "XOSC", 2.18 "PLL"), as
 * constants: board_rp2040.c programs these, tests/firmware/test_cm_clocks.py checks them
 * against the datasheet's limits.
 *
 *   CM_CLOCK_FULL:  XOSC 12 MHz / REFDIV 1 * FBDIV 125 = VCO 1500 MHz / 6 / 2 = 125 MHz
 *                   (the pico-sdk's default clk_sys, its PLL_SYS settings)
 *   otherwise:      clk_sys = clk_ref = XOSC 12 MHz (no PLL)
 *
 * clk_ref stays on the crystal (12 MHz: the watchdog's microsecond tick), clk_peri (the
 * UART) follows clk_sys.
 */
#ifndef CLOCK_RP2040_H
#define CLOCK_RP2040_H

#define RP2040_XOSC_HZ 12000000u
#define RP2040_REF_HZ RP2040_XOSC_HZ

#ifdef CM_CLOCK_FULL
#define RP2040_PLL_REFDIV 1u
#define RP2040_PLL_FBDIV 125u
#define RP2040_PLL_POSTDIV1 6u
#define RP2040_PLL_POSTDIV2 2u
#define RP2040_PLL_REF_HZ (RP2040_XOSC_HZ / RP2040_PLL_REFDIV)
#define RP2040_VCO_HZ (RP2040_PLL_REF_HZ * RP2040_PLL_FBDIV)
#define RP2040_SYS_HZ (RP2040_VCO_HZ / (RP2040_PLL_POSTDIV1 * RP2040_PLL_POSTDIV2))
#else
#define RP2040_SYS_HZ RP2040_XOSC_HZ
#endif
#define RP2040_PERI_HZ RP2040_SYS_HZ

/* PL011 (datasheet 4.2.7.1): divisor = clk_peri / (16 baud) in 16.6 fixed point, rounded
 * (64 clk / (16 baud) = 4 clk / baud; from 8 clk / baud, + 1, halved: the pico-sdk's). */
#define RP2040_CONSOLE_BAUD 115200u
#define RP2040_UART_DIV64 ((8u * RP2040_PERI_HZ / RP2040_CONSOLE_BAUD + 1u) / 2u)
#define RP2040_UART_IBRD (RP2040_UART_DIV64 / 64u)
#define RP2040_UART_FBRD (RP2040_UART_DIV64 % 64u)

#ifdef CM_CLOCK_FULL
_Static_assert(RP2040_PLL_REFDIV >= 1u && RP2040_PLL_REFDIV <= 63u, "REFDIV 1..63");
_Static_assert(RP2040_PLL_REF_HZ >= 5000000u, "PLL reference at least 5 MHz");
_Static_assert(RP2040_PLL_FBDIV >= 16u && RP2040_PLL_FBDIV <= 320u, "FBDIV 16..320");
_Static_assert(RP2040_VCO_HZ >= 750000000u && RP2040_VCO_HZ <= 1600000000u, "VCO 750-1600 MHz");
_Static_assert(RP2040_PLL_POSTDIV1 >= 1u && RP2040_PLL_POSTDIV1 <= 7u, "POSTDIV1 1..7");
_Static_assert(RP2040_PLL_POSTDIV2 >= 1u && RP2040_PLL_POSTDIV2 <= 7u, "POSTDIV2 1..7");
_Static_assert(RP2040_SYS_HZ <= 133000000u, "clk_sys at most 133 MHz");
#endif

#endif /* CLOCK_RP2040_H */

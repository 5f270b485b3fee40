"""The Cortex-M boards' clock trees (firmware/ports/cortex-m/clock_*.h): the constants the
board code programs, compiled by the host's gcc and printed, checked against the limits of
the STM32F446 reference manual (RM0390 rev 6, 6.3.2 RCC_PLLCFGR, 5.1.4 over-drive, table 5
flash wait states, 6.2 bus limits) and of the RP2040 datasheet (2.18 PLL, 4.2.7.1 UART),
and the frequencies they give exact."""

import subprocess

import pytest
from test_duts import FIRMWARE, need

HEADERS = FIRMWARE / "ports" / "cortex-m"
STM32_FIELDS = [
    "STM32_SYSCLK_HZ",
    "STM32_PCLK1_HZ",
    "STM32_TIM_APB1_HZ",
    "STM32_USART2_BRR",
    "STM32_FLASH_WAIT_STATES",
    "STM32_RCC_CFGR_PRESCALERS",
]
STM32_PLL_FIELDS = ["STM32_PLL_IN_HZ", "STM32_RCC_PLLCFGR_VALUE(0)", "STM32_RCC_PLLCFGR_VALUE(1)"]
RP2040_FIELDS = ["RP2040_SYS_HZ", "RP2040_REF_HZ", "RP2040_UART_IBRD", "RP2040_UART_FBRD"]
RP2040_PLL_FIELDS = [
    "RP2040_PLL_REFDIV",
    "RP2040_PLL_FBDIV",
    "RP2040_PLL_POSTDIV1",
    "RP2040_PLL_POSTDIV2",
]


def constants(tmp_path, header, names, *defines):
    """{name: value} of the header's constants as the board code sees them with -D defines
    (the header's own _Static_asserts are compiled too)."""
    need("gcc")
    source = tmp_path / "print.c"
    lines = [f'printf("%s %llu\\n", "{n}", (unsigned long long)({n}));' for n in names]
    source.write_text(
        f'#include <stdio.h>\n#include "{header}"\nint main(void)\n{{\n'
        + "\n".join(lines)
        + "\nreturn 0;\n}\n"
    )
    binary = tmp_path / "print"
    flags = [f"-D{d}" for d in defines]
    subprocess.run(["gcc", "-std=c11", f"-I{HEADERS}", *flags, "-o", binary, source], check=True)
    out = subprocess.run([binary], capture_output=True, text=True, check=True).stdout
    return {name: int(value) for name, value in (line.rsplit(" ", 1) for line in out.splitlines())}


def pllcfgr_fields(word):
    """M, N, P, source HSE, Q, R of an RCC_PLLCFGR word (RM0390 6.3.2)."""
    return (
        word & 0x3F,
        (word >> 6) & 0x1FF,
        2 * (((word >> 16) & 3) + 1),
        (word >> 22) & 1,
        (word >> 24) & 0xF,
        (word >> 28) & 7,
    )


def baud(clock, divisor_64ths):
    return clock / (16 * divisor_64ths / 64)


@pytest.mark.parametrize("hse", [False, True])
def test_stm32f446_full_clock(tmp_path, hse):
    """180 MHz from the PLL, fed by the HSI (16 MHz) or the ST-LINK's 8 MHz: every PLL
    field and frequency within RM0390's limits, SYSCLK exactly 180 MHz, APB1 45 MHz (TIM2
    at 90), 5 wait states, the console's BRR within 0.2 % of 115200 baud."""
    defines = ["CM_CLOCK_FULL"] + (["CM_CLOCK_HSE"] if hse else [])
    c = constants(tmp_path, "clock_stm32f4.h", STM32_FIELDS + STM32_PLL_FIELDS, *defines)
    source_hz = 8_000_000 if hse else 16_000_000
    assert c["STM32_PLL_IN_HZ"] == source_hz
    m, n, p, src, q, r = pllcfgr_fields(c[f"STM32_RCC_PLLCFGR_VALUE({int(hse)})"])
    assert src == int(hse)
    assert 2 <= m <= 63 and 50 <= n <= 432 and p in (2, 4, 6, 8) and 2 <= q <= 15 and 2 <= r <= 7
    vco_in = source_hz / m
    assert 1e6 <= vco_in <= 2e6  # 2 MHz: the manual's advice against PLL jitter
    vco = vco_in * n
    assert 100e6 <= vco <= 432e6
    assert vco / p == c["STM32_SYSCLK_HZ"] == 180_000_000
    assert vco / q <= 75e6  # PLL48CLK's limit (unused here, still in range)
    assert c["STM32_PCLK1_HZ"] == 45_000_000 and c["STM32_TIM_APB1_HZ"] == 90_000_000
    cfgr = c["STM32_RCC_CFGR_PRESCALERS"]
    assert (cfgr >> 4) & 0xF == 0 and (cfgr >> 10) & 7 == 0b101 and (cfgr >> 13) & 7 == 0b100
    assert c["STM32_FLASH_WAIT_STATES"] == 5  # 150 < HCLK <= 180 MHz at 2.7-3.6 V
    assert c["STM32_USART2_BRR"] == 391
    assert abs(baud(c["STM32_PCLK1_HZ"], c["STM32_USART2_BRR"] * 4) / 115200 - 1) < 0.002


def test_stm32f4_reset_clock(tmp_path):
    """The reset clock: HSI 16 MHz on every bus, no wait state, BRR 139 (8 + 11/16)."""
    c = constants(tmp_path, "clock_stm32f4.h", STM32_FIELDS)
    assert c["STM32_SYSCLK_HZ"] == c["STM32_PCLK1_HZ"] == c["STM32_TIM_APB1_HZ"] == 16_000_000
    assert c["STM32_FLASH_WAIT_STATES"] == 0 and c["STM32_RCC_CFGR_PRESCALERS"] == 0
    assert c["STM32_USART2_BRR"] == 139


@pytest.mark.parametrize("full", [True, False])
def test_rp2040_clock(tmp_path, full):
    """125 MHz from PLL_SYS (12 MHz crystal, REFDIV 1, FBDIV 125: VCO 1500 MHz, post
    dividers 6 and 2: the pico-sdk's), within the datasheet's limits; or the crystal's 12
    MHz. clk_ref stays 12 MHz; the UART divisors (the pico-sdk's rounding) within 0.1 % of
    115200 baud."""
    names = RP2040_FIELDS + (RP2040_PLL_FIELDS if full else [])
    c = constants(tmp_path, "clock_rp2040.h", names, *(["CM_CLOCK_FULL"] if full else []))
    assert c["RP2040_REF_HZ"] == 12_000_000
    if full:
        refdiv, fbdiv = c["RP2040_PLL_REFDIV"], c["RP2040_PLL_FBDIV"]
        post1, post2 = c["RP2040_PLL_POSTDIV1"], c["RP2040_PLL_POSTDIV2"]
        assert 1 <= refdiv <= 63 and 12e6 / refdiv >= 5e6
        assert 16 <= fbdiv <= 320 and 750e6 <= 12e6 / refdiv * fbdiv <= 1600e6
        assert 1 <= post2 <= post1 <= 7
        assert 12_000_000 // refdiv * fbdiv / (post1 * post2) == c["RP2040_SYS_HZ"]
        assert c["RP2040_SYS_HZ"] == 125_000_000
        assert (c["RP2040_UART_IBRD"], c["RP2040_UART_FBRD"]) == (67, 52)
    else:
        assert c["RP2040_SYS_HZ"] == 12_000_000
        assert (c["RP2040_UART_IBRD"], c["RP2040_UART_FBRD"]) == (6, 33)
    divisor = 64 * c["RP2040_UART_IBRD"] + c["RP2040_UART_FBRD"]
    assert abs(baud(c["RP2040_SYS_HZ"], divisor) / 115200 - 1) < 0.001

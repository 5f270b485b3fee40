/*
 * The STM32F4's FMC (FSMC on the F405/F407: the same NOR/PSRAM controller and registers)
 * as the appliance's memory bus (docs/membus.md, docs/duts/nucleo-144-fmc.md): bank 1
 * (chip select NE1) in SRAM mode, 16 data bits, asynchronous mode 1, written by the markers
 * of suite/stm32-fmc/ls_marker_port.h, one 16-bit store each.
 *
 * Registers (RM0390 rev 6 section 12 "Flexible memory controller", RM0090 rev 19 section 36
 * "FSMC"): FMC_BCR1 at 0xA0000000 (reset 0x000030DB), FMC_BTR1 at 0xA0000004 (reset
 * 0x0FFFFFFF); bank 1 is 0x60000000-0x63FFFFFF. With a 16-bit bus the pins A[24:0] carry
 * the byte address's bits [25:1], so a store to the bank's first halfword drives
 * address 0 and the appliance's BUS value is the marker itself (latscope_defs.protocol.
 * memory_bus_write: data low, address above), as the simulated bus window's.
 *
 * Under QEMU (CM_QEMU: netduinoplus2, an STM32F405) there is no FSMC: nothing is mapped
 * at 0x60000000 or 0xA0000000 and a store there faults. The registers and the window
 * are then placed in the backup SRAM's range (0x40024000), whose first 1 KiB QEMU 7.2
 * maps as an unimplemented device that logs every store with its size, offset and value
 * (-d unimp): the registers at their offsets, the bank's first halfword at offset 0x200.
 * The code is the same; what the FMC then does on its pins only hardware shows.
 */
#ifndef FMC_STM32_H
#define FMC_STM32_H

#ifdef CM_QEMU
#define STM32_FMC_REGS 0x40024000u
#define STM32_FMC_BANK1 (STM32_FMC_REGS + 0x200u)
#else
#define STM32_FMC_REGS 0xA0000000u
#define STM32_FMC_BANK1 0x60000000u
#endif
#define STM32_FMC_BCR1 (STM32_FMC_REGS + 0x000u)
#define STM32_FMC_BTR1 (STM32_FMC_REGS + 0x004u)

/* Write timing, HCLK cycles (docs/membus.md "Against the controllers' fastest write"):
 * ADDSET 0 (0-15) and DATAST 1 (1-255; 0 is reserved), NWE low for DATAST cycles, a write
 * every ADDSET + DATAST + 1 cycles: the fastest the FMC does, met by the HX8K and ULX3S
 * front ends. An iCEBreaker needs NWE low >= 6.94 ns: CM_FMC_DATAST=2 at 180 MHz. */
#ifndef CM_FMC_ADDSET
#define CM_FMC_ADDSET 0u
#endif
#ifndef CM_FMC_DATAST
#define CM_FMC_DATAST 1u
#endif
#if CM_FMC_ADDSET > 15 || CM_FMC_DATAST < 1 || CM_FMC_DATAST > 255
#error "CM_FMC_ADDSET must be 0-15 and CM_FMC_DATAST 1-255 (RM0390 FMC_BTRx)"
#endif

/* FMC_BCR1: MBKEN (bit 0), MUXEN 0, MTYP 00 = SRAM, MWID 01 = 16 bits (bits 5:4), FACCEN 0,
 * bit 7 reserved (kept at its reset value 1), WREN (bit 12), WAITEN 0, EXTMOD 0 (BTR1's
 * timing for reads and writes: mode 1). */
#define STM32_FMC_BCR1_VALUE (1u << 12 | 1u << 7 | 1u << 4 | 1u << 0)
/* FMC_BTR1: ADDSET (3:0), ADDHLD (7:4) 1 (its smallest; multiplexed modes only), DATAST
 * (15:8), BUSTURN (19:16) 0, CLKDIV (23:20) 1 (0 is reserved; synchronous modes only),
 * DATLAT 0, ACCMOD 0 (used with EXTMOD only). */
#define STM32_FMC_BTR1_VALUE (1u << 20 | CM_FMC_DATAST << 8 | 1u << 4 | CM_FMC_ADDSET)

/* Sets up the FMC's clock, its pins (alternate function 12) and bank 1. */
void stm32_fmc_init(void);

#endif /* FMC_STM32_H */

/* The simulated SoC's memory map, generated from sim/soc_map.toml by sim/soc_map.py: do not edit. */
#ifndef LATSCOPE_SOC_MAP_H
#define LATSCOPE_SOC_MAP_H

#define SOC_RAM_BASE             0x10000000u
#define SOC_RAM_BYTES            0x00040000u
#define SOC_PERIPHERAL_BASE      0xF0000000u
#define SOC_PERIPHERAL_BYTES     0x00001000u
#define SOC_GPIO_OUT             0xF0000000u
#define SOC_MTIME_LO             0xF0000010u
#define SOC_MTIME_HI             0xF0000014u
#define SOC_MTIMECMP_LO          0xF0000018u
#define SOC_MTIMECMP_HI          0xF000001Cu
#define SOC_SIM_EXIT             0xF0000020u
#define SOC_SIM_PUTC             0xF0000024u
#define SOC_IRQ_PENDING          0xF0000030u
#define SOC_LOAD_IRQ_PERIOD      0xF0000040u
#define SOC_LOAD_IRQ_PENDING     0xF0000044u
#define SOC_BUS_LOAD_CYCLES      0xF0000050u
#define SOC_BUS_LOAD_SEED        0xF0000054u
#define SOC_BUS_LOAD_SRC         0xF0000058u
#define SOC_BUS_LOAD_DST         0xF000005Cu
#define SOC_BUS_LOAD_WORDS       0xF0000060u
#define SOC_TRACE_BASE           0xF0000100u
#define SOC_TRACE_BYTES          0x00000100u
#define SOC_GPIO_STROBE_BIT      16
#define SOC_GPIO_LOOP_BIT        24
#define SOC_LOAD_IRQ_LINE        1
#define SOC_BUS_LOAD_WINDOW      2048

#endif

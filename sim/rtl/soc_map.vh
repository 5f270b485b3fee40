// The simulated SoC's memory map, generated from sim/soc_map.toml by sim/soc_map.py: do not edit.
`ifndef LATSCOPE_SOC_MAP_VH
`define LATSCOPE_SOC_MAP_VH
`define SOC_RESET_VECTOR         32'h10000000
`define SOC_RAM_BASE_WORD        30'h4000000
`define SOC_RAM_WORDS_LOG2       16
`define SOC_PAGE_WORD_BITS       10
`define SOC_PERIPHERAL_PAGE      20'hF0000
`define SOC_GPIO_OUT_WORD        10'h000
`define SOC_MTIME_LO_WORD        10'h004
`define SOC_MTIME_HI_WORD        10'h005
`define SOC_MTIMECMP_LO_WORD     10'h006
`define SOC_MTIMECMP_HI_WORD     10'h007
`define SOC_SIM_EXIT_WORD        10'h008
`define SOC_SIM_PUTC_WORD        10'h009
`define SOC_IRQ_PENDING_WORD     10'h00C
`define SOC_LOAD_IRQ_PERIOD_WORD 10'h010
`define SOC_LOAD_IRQ_PENDING_WORD 10'h011
`define SOC_BUS_LOAD_CYCLES_WORD 10'h014
`define SOC_BUS_LOAD_SEED_WORD   10'h015
`define SOC_BUS_LOAD_SRC_WORD    10'h016
`define SOC_BUS_LOAD_DST_WORD    10'h017
`define SOC_BUS_LOAD_WORDS_WORD  10'h018
`define SOC_GPIO_STROBE_BIT      16
`define SOC_GPIO_LOOP_BIT        24
`define SOC_LOAD_IRQ_LINE        1
`define SOC_BUS_LOAD_WINDOW      2048
`endif

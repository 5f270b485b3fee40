# The simulated SoC's CPUs and TRACE window, generated from sim/soc_map.toml by sim/soc_map.py: do not edit.
SOC_CPUS := VexRiscv_IMAC VexRiscv_Lite
SOC_MARCH_VexRiscv_IMAC := rv32imac
SOC_MARCH_VexRiscv_Lite := rv32im
SOC_TRACE_BASE := 0xF0000100
SOC_TRACE_BYTES := 0x100

/*
 * The load profiles' hardware on the latscope simulated SoC (latscope/load_port.h; memory
 * map sim/soc_map.toml, sim/README.md):
 *
 *   bus  the bus load engine (sim/rtl/soc_bus_load.v): in every window of
 *        SOC_BUS_LOAD_WINDOW cycles it holds the RAM for duty percent of them in one burst
 *        at a seeded pseudo-random offset, copying a 1 KiB buffer into another; the CPU's
 *        RAM accesses wait meanwhile. Its activity is the appliance's EDGE3.
 *   irq  the load interrupt (LOAD_IRQ_PERIOD): an edge every cpu_hz / rate cycles on line
 *        SOC_LOAD_IRQ_LINE. Interrupts do not nest on this port, so "more urgent" means
 *        served first when it and the suite's line are pending at the same trap
 *        (rv32_board_lines_first); "less urgent": after it (lowest line first). Neither
 *        preempts a running handler.
 */
#include "latscope/bench_api.h"
#include "latscope/load_port.h"
#include "rv32_board.h"
#include "soc.h"

#define BUS_LOAD_WORDS 256u
#define BUS_LOAD_SEED 0xACE1u

/* Copied by the engine, never read by the CPU (uninitialised data after everything else). */
static uint32_t bus_load_buffer[2][BUS_LOAD_WORDS] K_ARCH_NOINIT;

int load_port_bus_start(unsigned duty_percent)
{
	if (duty_percent == 0 || duty_percent > 100)
		return BENCH_ERROR;
	SOC_REG(SOC_BUS_LOAD_SEED) = BUS_LOAD_SEED;
	SOC_REG(SOC_BUS_LOAD_SRC) = (uint32_t)(uintptr_t)bus_load_buffer[0];
	SOC_REG(SOC_BUS_LOAD_DST) = (uint32_t)(uintptr_t)bus_load_buffer[1];
	SOC_REG(SOC_BUS_LOAD_WORDS) = BUS_LOAD_WORDS;
	/* Last: this store starts the engine. */
	SOC_REG(SOC_BUS_LOAD_CYCLES) = SOC_BUS_LOAD_WINDOW * duty_percent / 100u;
	return BENCH_SUCCESS;
}

int load_port_irq_start(unsigned rate_hz, int more_urgent)
{
	uint32_t period = rate_hz ? board_cycles_per_second() / rate_hz : 0;
	if (period < 2)
		return -1;
	rv32_board_lines_first(more_urgent ? 1u << SOC_LOAD_IRQ_LINE : 0);
	SOC_REG(SOC_LOAD_IRQ_PERIOD) = period;
	return SOC_LOAD_IRQ_LINE;
}

void load_port_irq_ack(void)
{
	SOC_REG(SOC_LOAD_IRQ_PENDING) = 1u;
}

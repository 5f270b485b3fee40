/*
 * The native build has no load hardware (latscope/load_port.h): its time is simulated and
 * its stamps are host time, so no load profile runs on it (the Makefile refuses LOAD).
 */
#include "latscope/bench_api.h"
#include "latscope/load_port.h"

int load_port_bus_start(unsigned duty_percent)
{
	(void)duty_percent;
	return BENCH_ERROR;
}

int load_port_irq_start(unsigned rate_hz, int more_urgent)
{
	(void)rate_hz;
	(void)more_urgent;
	return -1;
}

void load_port_irq_ack(void)
{
}

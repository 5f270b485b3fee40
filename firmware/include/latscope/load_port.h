/*
 * The hardware the test suite's load profiles need from a port (docs/tests.md, "Load
 * profiles"; the profiles themselves are firmware/suite/load.c, on bench_api.h). Every
 * port that runs the suite provides these three, and says in docs/tests.md what they do
 * on it; a port without such hardware returns the error, and the suite stops with a
 * message when a profile needs it.
 */
#ifndef LATSCOPE_LOAD_PORT_H
#define LATSCOPE_LOAD_PORT_H

/*
 * The bus profile: start a second master of the memory bus (the simulated SoC's bus load
 * engine, an MCU's DMA, threads copying memory on the other CPUs of a Linux machine) that
 * takes duty_percent (1..100) of the bus's time, with a fixed (seeded) pattern where the
 * hardware allows. BENCH_SUCCESS, or BENCH_ERROR.
 */
int load_port_bus_start(unsigned duty_percent);

/*
 * The irq profiles: start a second interrupt source, an edge every 1/rate_hz seconds on a
 * bench interrupt line other than the suite's (SUITE_IRQ), more urgent than that line
 * (more_urgent != 0) or less. Returns that line, which the caller then attaches and
 * enables (bench_irq_attach, bench_irq_enable); -1 when the port cannot. Its handler
 * acknowledges it with load_port_irq_ack().
 */
int load_port_irq_start(unsigned rate_hz, int more_urgent);
void load_port_irq_ack(void);

#endif /* LATSCOPE_LOAD_PORT_H */

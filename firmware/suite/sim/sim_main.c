/*
 * The suite on the simulated SoC: the kernel's sim port ends the simulation
 * with the suite's exit code (SIM_EXIT), so bench_run() does not return.
 */
#include "suite.h"

int main(void)
{
	bench_run(SUITE_PRIO_MAIN, suite_main, NULL);
	return 3; /* not reached */
}

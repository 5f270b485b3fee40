/*
 * The suite as a Linux program on the reference kernel's host port:
 *   suite [DUMP]    runs every selected test, writes the recorded markers
 *                   and IRQ edges to DUMP (default markers.txt); exit code 0
 *                   when the suite ran to its end.
 */
#include <stdio.h>

#include "native.h"
#include "suite.h"

int main(int argc, char **argv)
{
	const char *dump = argc > 1 ? argv[1] : "markers.txt";
	native_start();
	int rc = bench_run(SUITE_PRIO_MAIN, suite_main, NULL);
	if (native_dump(dump) != 0)
		return 1;
	return rc == BENCH_SUCCESS ? 0 : 1;
}

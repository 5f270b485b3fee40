/* What one trace marker costs the code that writes it, in CPU cycles (bench/marker_cost.py).
 *
 * Built twice, with -DLS_MARKER_GPIO and -DLS_MARKER_BUS, against the suite's marker
 * library (firmware/include/latscope/marker.h) and its SoC port (firmware/suite/sim).
 *
 * 1. Timed with mtime (one count per cycle): a loop of MARKER_LOOPS iterations that writes
 *    one marker with a computed argument, minus the same loop without the marker. Each loop
 *    runs once before it is timed, so the caches are warm as in a running suite.
 * 2. For the ground-truth log: a burst of BURST markers written back to back (unrolled), so
 *    the cycles between their stores, as the bus completes them, show the marker's cost on
 *    the bus side too.
 * The console line: "marker_cost <variant>: loops=<n> marker_loop=<cycles> empty_loop=<cycles>".
 */
#include <stdio.h>

#include "soc.h"
#include "latscope/marker.h"

LS_MARKER_DEFINE_STATE;

#define MARKER_LOOPS 1000u
#define BURST 16

#ifdef LS_MARKER_GPIO
#define VARIANT "gpio"
#else
#define VARIANT "bus"
#endif

static uint32_t now(void)
{
    return SOC_REG(SOC_MTIME_LO);
}

/* noinline: both loops get the same surroundings. */
static __attribute__((noinline)) uint32_t empty_loop(void)
{
    uint32_t started = now();
    for (unsigned i = 0; i < MARKER_LOOPS; i++)
        __asm__ volatile("" : : "r"(i) : "memory");
    return now() - started;
}

static __attribute__((noinline)) uint32_t marker_loop(void)
{
    uint32_t started = now();
    for (unsigned i = 0; i < MARKER_LOOPS; i++) {
        __asm__ volatile("" : : "r"(i) : "memory");
        LS_MARK(NONE, PARAM, i);
    }
    return now() - started;
}

static __attribute__((noinline)) void burst(void)
{
#define ONE(k) LS_MARK(NONE, THREAD, k);
    ONE(0) ONE(1) ONE(2) ONE(3) ONE(4) ONE(5) ONE(6) ONE(7)
    ONE(8) ONE(9) ONE(10) ONE(11) ONE(12) ONE(13) ONE(14) ONE(15)
#undef ONE
}

int main(void)
{
    (void)empty_loop();
    (void)marker_loop();
    uint32_t empty = empty_loop();
    uint32_t marked = marker_loop();
    burst();
    burst();
    printf("marker_cost %s: loops=%u marker_loop=%lu empty_loop=%lu burst=%u\n", VARIANT,
           MARKER_LOOPS, (unsigned long)marked, (unsigned long)empty, (unsigned)BURST);
    return 0;
}

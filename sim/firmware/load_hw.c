/* Bring-up: the load profiles' hardware (rtl/soc_bus_load.v, the load interrupt in
 * rtl/soc_peripherals.v), checked by tests/system/test_bus_load.py against the ground-truth log.
 *
 * Starts the bus load engine (LOAD_HW_CYCLES of every window, seed LOAD_HW_SEED, copying
 * LOAD_HW_WORDS words from src to dst) and the load interrupt (every LOAD_HW_PERIOD cycles,
 * line SOC_LOAD_IRQ_LINE), then runs a read-modify-write loop over a buffer twice the
 * D-cache's size, so that the CPU keeps needing the RAM the engine holds:
 *   TRACE+0x00 = 0x5000 | k   the loop's pass k (16 bits) is done
 *   TRACE+0x04 = k            load interrupt handler: interrupts handled before this one
 * After LOAD_HW_IRQS load interrupts it stops both (BUS_LOAD_CYCLES = 0, LOAD_IRQ_PERIOD = 0),
 * checks that dst is a copy of src and exits 0 (4: it is not, 3: an unexpected trap).
 */
#include <stdio.h>

#include "soc.h"

#ifndef LOAD_HW_CYCLES
#define LOAD_HW_CYCLES 512u
#endif
#ifndef LOAD_HW_SEED
#define LOAD_HW_SEED 0xACE1u
#endif
#ifndef LOAD_HW_WORDS
#define LOAD_HW_WORDS 96u
#endif
#ifndef LOAD_HW_PERIOD
#define LOAD_HW_PERIOD 3001u
#endif
#ifndef LOAD_HW_IRQS
#define LOAD_HW_IRQS 40u
#endif
#define SWEEP_WORDS 2048u /* 8 KiB */

static uint32_t src[LOAD_HW_WORDS], dst[LOAD_HW_WORDS];
static uint32_t sweep[SWEEP_WORDS];
static volatile uint32_t load_irqs;

void trap_handler(uint32_t mcause, uint32_t mepc)
{
    if (mcause == MCAUSE_MACHINE_EXTERNAL &&
        (csr_read(CSR_IRQ_PENDING) & (1u << SOC_LOAD_IRQ_LINE))) {
        uint32_t count = load_irqs;
        SOC_REG(SOC_TRACE_BASE + 0x04) = count;
        SOC_REG(SOC_LOAD_IRQ_PENDING) = 1u;
        load_irqs = count + 1;
        return;
    }
    printf("load_hw: unexpected trap mcause=0x%08lx mepc=0x%08lx\n", (unsigned long)mcause,
           (unsigned long)mepc);
    soc_exit(3);
}

int main(void)
{
    for (uint32_t i = 0; i < LOAD_HW_WORDS; i++)
        src[i] = 0x9E3779B9u * (i + 1);
    SOC_REG(SOC_BUS_LOAD_SEED) = LOAD_HW_SEED;
    SOC_REG(SOC_BUS_LOAD_SRC) = (uint32_t)(uintptr_t)src;
    SOC_REG(SOC_BUS_LOAD_DST) = (uint32_t)(uintptr_t)dst;
    SOC_REG(SOC_BUS_LOAD_WORDS) = LOAD_HW_WORDS;
    SOC_REG(SOC_BUS_LOAD_CYCLES) = LOAD_HW_CYCLES;

    csr_set(CSR_IRQ_MASK, 1u << SOC_LOAD_IRQ_LINE);
    csr_set(mie, MIE_MEIE);
    csr_set(mstatus, MSTATUS_MIE);
    SOC_REG(SOC_LOAD_IRQ_PERIOD) = LOAD_HW_PERIOD;

    uint32_t pass = 0;
    while (load_irqs < LOAD_HW_IRQS) {
        for (uint32_t i = 0; i < SWEEP_WORDS; i += 8)
            sweep[i] += i + pass;
        SOC_REG(SOC_TRACE_BASE) = 0x5000u | (pass++ & 0xFFFFu);
    }
    SOC_REG(SOC_LOAD_IRQ_PERIOD) = 0;
    SOC_REG(SOC_BUS_LOAD_CYCLES) = 0;
    csr_clear(mie, MIE_MEIE);

    for (uint32_t i = 0; i < LOAD_HW_WORDS; i++)
        if (dst[i] != src[i]) {
            printf("load_hw: dst[%lu] = 0x%08lx, src 0x%08lx\n", (unsigned long)i,
                   (unsigned long)dst[i], (unsigned long)src[i]);
            return 4;
        }
    printf("load_hw: %lu passes, %lu load interrupts, the copy is whole\n",
           (unsigned long)pass, (unsigned long)load_irqs);
    return 0;
}

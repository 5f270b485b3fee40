/* Bring-up: the external interrupt (the appliance's IRQ through the IRQ_PENDING latch) and
 * the machine timer interrupt.
 *
 * Markers (all checked by tests/system/test_sim_soc.py against the ground-truth log):
 *   TRACE+0x08 = 0x00010000   interrupts enabled, the main loop starts
 *   GPIO_OUT   = n | strobe   main loop, n = 0, 1, 2, ... (16 bits), strobe toggling
 *   TRACE+0x00 = 0x2000 | k   external IRQ handler entry (k = IRQs handled before)
 *   TRACE+0x00 = 0x3000 | k   external IRQ handler exit, after the acknowledge store
 *   TRACE+0x04 = T            timer armed for mtime >= T (low 32 bits)
 *   TRACE+0x00 = 0x4000       timer handler entry
 * The handlers use the trace window only, so the GPIO strobe is owned by the main loop.
 * Exits with 0 after IRQ_TEST_COUNT external IRQs and one timer interrupt.
 */
#include <stdio.h>

#include "soc.h"

#ifndef IRQ_TEST_COUNT
#define IRQ_TEST_COUNT 16
#endif
#define TIMER_DELAY_CYCLES 400u

static volatile uint32_t external_irqs;
static volatile uint32_t timer_irqs;

void trap_handler(uint32_t mcause, uint32_t mepc)
{
    if (mcause == MCAUSE_MACHINE_EXTERNAL) {
        uint32_t count = external_irqs;
        soc_trace(0x2000u | count);
        soc_irq_acknowledge();
        external_irqs = count + 1;
        soc_trace(0x3000u | count);
    } else if (mcause == MCAUSE_MACHINE_TIMER) {
        soc_trace(0x4000u);
        soc_disarm_timer();
        timer_irqs++;
    } else {
        printf("irq_test: unexpected trap mcause=0x%08lx mepc=0x%08lx\n",
               (unsigned long)mcause, (unsigned long)mepc);
        soc_exit(3);
    }
}

int main(void)
{
    printf("irq_test: waiting for %d external IRQs\n", IRQ_TEST_COUNT);

    csr_set(CSR_IRQ_MASK, 1u);  /* externalInterruptArray[0] = IRQ_PENDING */
    csr_set(mie, MIE_MEIE);
    csr_set(mstatus, MSTATUS_MIE);
    SOC_REG(SOC_TRACE_BASE + 0x08) = 0x00010000u;

    uint32_t strobe = 0;
    uint32_t marker = 0;
    while (external_irqs < IRQ_TEST_COUNT) {
        strobe ^= SOC_GPIO_STROBE;
        SOC_REG(SOC_GPIO_OUT) = (marker++ & 0xFFFFu) | strobe;
    }
    csr_clear(mie, MIE_MEIE);

    uint64_t when = soc_mtime() + TIMER_DELAY_CYCLES;
    soc_set_mtimecmp(when);
    SOC_REG(SOC_TRACE_BASE + 0x04) = (uint32_t)when;
    csr_set(mie, MIE_MTIE);
    while (timer_irqs == 0)
        ;
    csr_clear(mie, MIE_MTIE);

    printf("irq_test: %lu external IRQs, %lu timer IRQ, %lu main-loop markers\n",
           (unsigned long)external_irqs, (unsigned long)timer_irqs, (unsigned long)marker);
    return 0;
}

/* Where interrupts meet the code, a known case (tests/system/test_cpu_truth.py): the harness's IRQ
 * (bring-up mode, --irq-period ...) fires while masked_spin (masked_spin.S) masks the
 * external interrupt for a known number of instructions and spins in a known loop; the
 * ground-truth log's `interrupt` and `masked` lines (sim/README.md) must place every
 * interrupt there and find the masked stretches at masked_begin .. masked_end.
 *
 * The handler writes what the CPU itself reports, for the log to be checked against:
 *   TRACE+0x00 = mcause, TRACE+0x04 = mepc   (trap_entry's csrr of both, per interrupt)
 * Exits 0 after MASKED_ROUNDS rounds, having printed how many interrupts it took.
 */
#include <stdio.h>

#include "soc.h"

#ifndef MASKED_ROUNDS
#define MASKED_ROUNDS 200
#endif
#ifndef MASKED_SPINS
#define MASKED_SPINS 40
#endif

void masked_spin(uint32_t rounds, uint32_t spins);

static volatile uint32_t handled;

void trap_handler(uint32_t mcause, uint32_t mepc)
{
    SOC_REG(SOC_TRACE_BASE) = mcause;
    SOC_REG(SOC_TRACE_BASE + 0x04) = mepc;
    if (mcause != MCAUSE_MACHINE_EXTERNAL)
        soc_exit(3);
    soc_irq_acknowledge();
    handled++;
}

int main(void)
{
    csr_set(CSR_IRQ_MASK, 1u);  /* externalInterruptArray[0] = IRQ_PENDING */
    csr_set(mie, MIE_MEIE);     /* mstatus.MIE: first set inside masked_spin */
    masked_spin(MASKED_ROUNDS, MASKED_SPINS);
    printf("irq_masked: %lu interrupts in %d rounds\n", (unsigned long)handled,
           MASKED_ROUNDS);
    return 0;
}

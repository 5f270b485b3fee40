/* The IRQ loop method's DUT (docs/tests.md, "The IRQ loop"): bare metal, no latscope code.
 *
 * The interrupt handler of the appliance's IRQ toggles one GPIO, GPIO_OUT bit
 * SOC_GPIO_LOOP_BIT, which rtl/top.v wires to the appliance's EDGE2: `latscope capture
 * --loop EDGE2` pairs every IRQ edge with that pin's next change. The toggle is what any
 * user's handler would write: a read-modify-write of the output register.
 *
 * Built twice (sim/Makefile):
 *   irq_loop.elf         the handler toggles the pin, acknowledges the IRQ, counts; nothing else
 *   irq_loop_marked.elf  -DIRQ_LOOP_MARKER: the same, with the suite's IL marker first
 *                        (LS_MARK(IL_A, ISR_ENTRY, k), one bus store, inside an IL_A window),
 *                        so one capture holds the marker-based IL-a-1 and the loop's table
 *                        of the same interrupts (tests/system/test_loop_sim.py compares them)
 * Exits with 0 after IRQ_LOOP_COUNT interrupts.
 */
#include <stdio.h>

#include "soc.h"

#ifdef IRQ_LOOP_MARKER
#include "latscope/marker.h"
LS_MARKER_DEFINE_STATE;
#endif

#ifndef IRQ_LOOP_COUNT
#define IRQ_LOOP_COUNT 300
#endif
#define LOOP_PIN (1u << SOC_GPIO_LOOP_BIT)

static volatile uint32_t handled;

void trap_handler(uint32_t mcause, uint32_t mepc)
{
    if (mcause != MCAUSE_MACHINE_EXTERNAL) {
        printf("irq_loop: unexpected trap mcause=0x%08lx mepc=0x%08lx\n",
               (unsigned long)mcause, (unsigned long)mepc);
        soc_exit(3);
    }
#ifdef IRQ_LOOP_MARKER
    LS_MARK(IL_A, ISR_ENTRY, handled);
#endif
    SOC_REG(SOC_GPIO_OUT) ^= LOOP_PIN;
    soc_irq_acknowledge();
    handled++;
}

int main(void)
{
#ifdef IRQ_LOOP_MARKER
    LS_MARK(IL_A, START, 1);
#endif
    /* An edge before the line is open is dropped (the host counts it unanswered), not
     * taken late at the enable. */
    soc_irq_acknowledge();
    csr_set(CSR_IRQ_MASK, 1u);
    csr_set(mie, MIE_MEIE);
    csr_set(mstatus, MSTATUS_MIE);
    while (handled < IRQ_LOOP_COUNT)
        ;
    csr_clear(mie, MIE_MEIE);
#ifdef IRQ_LOOP_MARKER
    LS_MARK(IL_A, END, 0);
#endif
    printf("irq_loop: %lu interrupts\n", (unsigned long)handled);
    return 0;
}

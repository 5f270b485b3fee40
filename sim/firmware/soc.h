/* latscope simulated SoC: memory map, CSR helpers and the bring-up runtime (soc.c, start.S).
 *
 * The map is fixed (sim/README.md, "Memory map"); it is defined once, in sim/soc_map.toml,
 * for the harness, the RTL and the firmware alike (soc_map.h is generated from it). Every
 * register is 32 bits wide and must be accessed with 32-bit loads and stores. A marker is
 * ONE store: GPIO_OUT = data | strobe << 16 with the strobe toggled on every marker, or any
 * store into the TRACE window.
 */
#ifndef LATSCOPE_SIM_SOC_H
#define LATSCOPE_SIM_SOC_H

#include <stdint.h>

/* The addresses: SOC_RAM_BASE, SOC_GPIO_OUT, ..., SOC_TRACE_BASE (sim/soc_map.toml). */
#include "soc_map.h"

#define SOC_GPIO_STROBE     (1u << SOC_GPIO_STROBE_BIT)

#define SOC_REG(address)    (*(volatile uint32_t *)(uintptr_t)(address))

/* Machine-mode CSRs and bits used here. 0xBC0 is VexRiscv's external interrupt mask
 * (bit n enables externalInterruptArray[n]); 0xFC0 holds the pending bits. */
#define CSR_IRQ_MASK        0xBC0
#define CSR_IRQ_PENDING     0xFC0
#define MSTATUS_MIE         (1u << 3)
#define MIE_MTIE            (1u << 7)
#define MIE_MEIE            (1u << 11)
#define MCAUSE_INTERRUPT    0x80000000u
#define MCAUSE_MACHINE_TIMER    (MCAUSE_INTERRUPT | 7u)
#define MCAUSE_MACHINE_EXTERNAL (MCAUSE_INTERRUPT | 11u)

#define SOC_STR(x) #x
#define SOC_XSTR(x) SOC_STR(x)
#define csr_read(csr) ({ uint32_t value_; \
    __asm__ volatile ("csrr %0, " SOC_XSTR(csr) : "=r"(value_)); value_; })
#define csr_write(csr, value) \
    __asm__ volatile ("csrw " SOC_XSTR(csr) ", %0" :: "rK"((uint32_t)(value)))
#define csr_set(csr, bits) \
    __asm__ volatile ("csrs " SOC_XSTR(csr) ", %0" :: "rK"((uint32_t)(bits)))
#define csr_clear(csr, bits) \
    __asm__ volatile ("csrc " SOC_XSTR(csr) ", %0" :: "rK"((uint32_t)(bits)))

static inline uint64_t soc_mtime(void)
{
    uint32_t high, low;
    do {  /* re-read when the low word wrapped between the two reads */
        high = SOC_REG(SOC_MTIME_HI);
        low = SOC_REG(SOC_MTIME_LO);
    } while (high != SOC_REG(SOC_MTIME_HI));
    return ((uint64_t)high << 32) | low;
}

/* Arms the machine timer: timerInterrupt is high while mtime >= when. Writing the high
 * word to all ones first keeps a spurious compare from firing between the two stores. */
static inline void soc_set_mtimecmp(uint64_t when)
{
    SOC_REG(SOC_MTIMECMP_HI) = 0xFFFFFFFFu;
    SOC_REG(SOC_MTIMECMP_LO) = (uint32_t)when;
    SOC_REG(SOC_MTIMECMP_HI) = (uint32_t)(when >> 32);
}

static inline void soc_disarm_timer(void)
{
    SOC_REG(SOC_MTIMECMP_HI) = 0xFFFFFFFFu;
    SOC_REG(SOC_MTIMECMP_LO) = 0xFFFFFFFFu;
}

/* Writes one marker to the trace window: one store. */
static inline void soc_trace(uint32_t value)
{
    SOC_REG(SOC_TRACE_BASE) = value;
}

/* Acknowledges the appliance's IRQ: clears the IRQ_PENDING latch. */
static inline void soc_irq_acknowledge(void)
{
    SOC_REG(SOC_IRQ_PENDING) = 1u;
}

/* Ends the simulation with an exit code (the harness's exit status). */
void soc_exit(int code) __attribute__((noreturn));

/* The C side of the trap vector in start.S, called with interrupts disabled; mtvec points
 * to trap_entry from before main() on. The default (weak, in soc.c) reports the trap and
 * ends the simulation with exit code 3. Only caller-saved registers are saved around it. */
void trap_handler(uint32_t mcause, uint32_t mepc);
void trap_entry(void);

#endif

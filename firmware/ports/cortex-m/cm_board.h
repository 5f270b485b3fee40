/*
 * What arch_cm.c needs from a Cortex-M board besides kernel/board.h, and the
 * core registers both use (ARMv6-M / ARMv7-M System Control Space).
 */
#ifndef CM_BOARD_H
#define CM_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/board.h"

#define CM_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))
#define CM_ICSR 0xE000ED04u
#define CM_ICSR_PENDSVSET (1u << 28)
#define CM_ICSR_PENDSTSET (1u << 26)
#define CM_VTOR 0xE000ED08u
#define CM_SHPR3 0xE000ED20u /* SysTick [31:24], PendSV [23:16]; word access (v6-M) */
#define CM_SYST_CSR 0xE000E010u
#define CM_SYST_RVR 0xE000E014u
#define CM_SYST_CVR 0xE000E018u
#define CM_NVIC_ISER 0xE000E100u
#define CM_NVIC_ICER 0xE000E180u
#define CM_NVIC_ISPR 0xE000E200u
#define CM_NVIC_ICPR 0xE000E280u
#define CM_NVIC_IPR 0xE000E400u

/* Priority of the ISRs (tick and lines): one level, so none nests; PendSV
 * runs below them all. Top bits only: M0+ implements 2, STM32F4 4. The load
 * profiles' interrupt line takes one level above (it preempts them: irq-high)
 * or below (they preempt it: irq-low), still above PendSV. */
#define CM_ISR_PRIORITY 0x80u
#define CM_ISR_PRIORITY_ABOVE 0x40u
#define CM_ISR_PRIORITY_BELOW 0xC0u
#define CM_PENDSV_PRIORITY 0xFFu

#define CM_EXIT_FATAL_FAULT 3

/* The board's clock for SysTick, in Hz (processor clock). */
uint32_t cm_board_cpu_hz(void);
/* Bench line -> NVIC interrupt number, and back (-1: not a line). */
unsigned cm_board_nvic_irq(unsigned line);
int cm_board_line_of(unsigned nvic_irq);

/* Provided by arch_cm.c for boards. */
void cm_nvic_enable(unsigned irq, bool enable);
/* The NVIC priority a line gets when it is enabled (default CM_ISR_PRIORITY). */
void cm_line_priority(unsigned line, uint8_t priority);
void cm_console_hex(uint32_t v);
void cm_halt(int code) __attribute__((noreturn));

#endif /* CM_BOARD_H */

/*
 * Cortex-M arch layer: vector table, thread frames, start, switch request,
 * idle, the tick (SysTick) and the external lines (NVIC). What is specific to
 * a board (clock, line numbers, console, exit) is in board_*.c behind
 * cm_board.h. The switch itself is PendSV (switch.S).
 */
#include <string.h>

#include "cm_board.h"
#include "kernel/arch.h"
#include "kernel/kernel.h"

#ifndef CM_NVIC_VECTORS
#define CM_NVIC_VECTORS 32 /* external vectors in the table (RP2040: 26, lines < 32) */
#endif
#define CM_FRAME_WORDS 16  /* r4-r11, then r0-r3, r12, lr, pc, xPSR */
#define CM_XPSR_THUMB 0x01000000u

k_thread_t *cm_running; /* whose registers are on the CPU (switch.S) */
static volatile uint32_t tick_count;
static uint32_t tick_reload;

void cm_pendsv_isr(void);
void _start(void);
extern uint8_t __stack[];

/* ------------------------------------------------------------ faults */

void cm_console_hex(uint32_t v)
{
	static const char digits[] = "0123456789abcdef";
	char buf[11] = "0x";
	for (int i = 0; i < 8; i++)
		buf[2 + i] = digits[(v >> (28 - 4 * i)) & 0xF];
	buf[10] = '\0';
	board_console_write(buf);
}

/* A board with no host to tell: print the exit code and stop. */
void cm_halt(int code)
{
	board_console_write("exit ");
	cm_console_hex((uint32_t)code);
	board_console_write("\n");
	__asm__ volatile("cpsid i");
	for (;;)
		__asm__ volatile("wfi");
}

/* Any fault is a bug: report the stacked pc and end the program. */
static void cm_fault_isr(void)
{
	uint32_t ipsr, psp;
	__asm__ volatile("mrs %0, ipsr\n\tmrs %1, psp" : "=r"(ipsr), "=r"(psp));
	board_console_write("\nkernel: fatal exception ");
	cm_console_hex(ipsr & 0x1FFu);
	board_console_write(" thread pc=");
	cm_console_hex(psp != 0 ? ((const uint32_t *)(uintptr_t)psp)[6] : 0);
	board_console_write("\n");
	board_exit(CM_EXIT_FATAL_FAULT);
}

/* ------------------------------------------------------------ interrupts */

/* Masked: a more urgent line (cm_line_priority) may preempt an ISR, and the kernel's
 * exit bookkeeping must not be split by another's. */
static void isr_exit(void)
{
	unsigned key = arch_irq_lock();
	if (k_isr_exit() != NULL)
		CM_REG(CM_ICSR) = CM_ICSR_PENDSVSET; /* switch once every ISR is done */
	arch_irq_unlock(key);
}

static void cm_systick_isr(void)
{
	tick_count++;
	k_isr_enter();
	k_tick_announce();
	isr_exit();
}

static void cm_line_isr(void)
{
	uint32_t ipsr;
	__asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
	int line = cm_board_line_of((ipsr & 0x1FFu) - 16u);
	if (line < 0)
		cm_fault_isr(); /* enabled by nobody: a bug */
	k_isr_enter();
	k_irq_dispatch((unsigned)line);
	isr_exit();
}

typedef void (*cm_vector_t)(void);

/* picolibc's crt0 (_start) is the reset handler; the linker script puts
 * this table first in the image (picolibc.ld: .data.init.enter). */
__attribute__((section(".data.init.enter"), aligned(256), used))
const cm_vector_t __interrupt_vector[16 + CM_NVIC_VECTORS] = {
	[0] = (cm_vector_t)(uintptr_t)__stack,
	[1] = _start,
	[2] = cm_fault_isr,  /* NMI */
	[3] = cm_fault_isr,  /* HardFault */
	[4] = cm_fault_isr,  /* MemManage (v7-M) */
	[5] = cm_fault_isr,  /* BusFault (v7-M) */
	[6] = cm_fault_isr,  /* UsageFault (v7-M) */
	[11] = cm_fault_isr, /* SVCall: unused */
	[14] = cm_pendsv_isr,
	[15] = cm_systick_isr,
	[16 ... 16 + CM_NVIC_VECTORS - 1] = cm_line_isr,
};

void cm_nvic_enable(unsigned irq, bool enable)
{
	CM_REG((enable ? CM_NVIC_ISER : CM_NVIC_ICER) + 4u * (irq / 32u)) = 1u << (irq % 32u);
}

static void set_nvic_priority(unsigned irq, uint32_t priority)
{
	/* Word access: ARMv6-M has no byte access to the priority registers. */
	uint32_t addr = CM_NVIC_IPR + 4u * (irq / 4u);
	unsigned shift = 8u * (irq % 4u);
	CM_REG(addr) = (CM_REG(addr) & ~(0xFFu << shift)) | (priority << shift);
}

/* A line's NVIC priority when enabled; 0: CM_ISR_PRIORITY. */
static uint8_t line_priority[K_IRQ_LINES];

void cm_line_priority(unsigned line, uint8_t priority)
{
	if (line < K_IRQ_LINES)
		line_priority[line] = priority;
}

void board_irq_line_enable(unsigned line, bool enable)
{
	unsigned irq = cm_board_nvic_irq(line);
	if (enable)
		set_nvic_priority(irq, line_priority[line] ? line_priority[line] : CM_ISR_PRIORITY);
	cm_nvic_enable(irq, enable);
}

/* ------------------------------------------------------------ threads */

void arch_context_init(k_thread_t *t, void *stack, size_t stack_size)
{
	uintptr_t top = ((uintptr_t)stack + stack_size) & ~(uintptr_t)7;
	uint32_t *frame = (uint32_t *)(top - 4u * CM_FRAME_WORDS);
	memset(frame, 0, 4u * CM_FRAME_WORDS);
	frame[14] = (uint32_t)(uintptr_t)k_thread_trampoline & ~1u; /* pc */
	frame[15] = CM_XPSR_THUMB;
	t->arch.sp = (uint32_t)(uintptr_t)frame;
}

/* Called with interrupts masked and k_current = to. PendSV is pended, and
 * taken as soon as PRIMASK opens: the caller resumes here when switched back
 * in, and masks again as the kernel expects. */
void arch_switch(k_thread_t *from, k_thread_t *to)
{
	(void)from;
	(void)to;
	CM_REG(CM_ICSR) = CM_ICSR_PENDSVSET;
	__asm__ volatile("cpsie i\n\tisb\n\tcpsid i" : : : "memory");
}

void arch_start(k_thread_t *first)
{
	(void)first;
	CM_REG(CM_VTOR) = (uint32_t)(uintptr_t)__interrupt_vector;
	CM_REG(CM_SHPR3) = CM_ISR_PRIORITY << 24 | CM_PENDSV_PRIORITY << 16;
	cm_running = NULL;
	if (tick_reload != 0)
		CM_REG(CM_SYST_CSR) = 7u; /* processor clock, interrupt, enable */
	CM_REG(CM_ICSR) = CM_ICSR_PENDSVSET;
	__asm__ volatile("cpsie i\n\tisb" : : : "memory");
	for (;;)
		; /* not reached: PendSV resumed the first thread */
}

void arch_idle(void)
{
	__asm__ volatile("wfi");
}

/* ------------------------------------------------------------ time */

#ifndef CM_TICK_HZ
#define CM_TICK_HZ 1000u
#endif

void board_tick_start(void)
{
	tick_reload = cm_board_cpu_hz() / CM_TICK_HZ - 1u;
	CM_REG(CM_SYST_RVR) = tick_reload;
	CM_REG(CM_SYST_CVR) = 0;
}

uint32_t board_tick_period_ns(void)
{
	return 1000000000u / CM_TICK_HZ;
}

uint32_t board_cycles_per_second(void)
{
	return cm_board_cpu_hz();
}

/* Processor cycles from the tick count and SysTick's down-counter (no DWT on
 * the M0+, none modelled by QEMU). A wrap not yet counted shows as the
 * pending SysTick. */
uint32_t board_cycles(void)
{
	unsigned key = arch_irq_lock();
	uint32_t ticks = tick_count;
	uint32_t current = CM_REG(CM_SYST_CVR);
	if (CM_REG(CM_ICSR) & CM_ICSR_PENDSTSET) {
		ticks++;
		current = CM_REG(CM_SYST_CVR);
	}
	arch_irq_unlock(key);
	return ticks * (tick_reload + 1u) + (tick_reload - current);
}

int board_exit_code(void)
{
	return 0; /* never reached: board_exit ends the program */
}

/*
 * RV32 machine-mode arch layer: thread frames, start, idle, the C side of
 * the trap. What is specific to a board (timer, interrupt controller,
 * console) is in board_*.c behind rv32_board.h.
 */
#include <string.h>

#include "arch_frame.h"
#include "kernel/arch.h"
#include "rv32_board.h"

void k_trap_entry(void);
void k_arch_start_frame(k_thread_t *first) __attribute__((noreturn));

void arch_context_init(k_thread_t *t, void *stack, size_t stack_size)
{
	uintptr_t top = ((uintptr_t)stack + stack_size) & ~(uintptr_t)15;
	uint32_t *frame = (uint32_t *)(top - FRAME_SIZE);
	memset(frame, 0, FRAME_SIZE);
	frame[FRAME_MEPC / 4] = (uint32_t)(uintptr_t)k_thread_trampoline;
	/* Enter with MPP = M and interrupts enabled after mret. */
	frame[FRAME_MSTATUS / 4] = MSTATUS_MPP_M | MSTATUS_MPIE_BIT;
	t->arch.sp = (uint32_t)(uintptr_t)frame;
}

void arch_start(k_thread_t *first)
{
	__asm__ volatile("csrw mtvec, %0" : : "r"((uint32_t)(uintptr_t)k_trap_entry));
	rv32_board_start();
	k_arch_start_frame(first);
}

void arch_idle(void)
{
#ifdef K_RV32_IDLE_WFI
	__asm__ volatile("wfi");
#else
	/* Busy idle: not every VexRiscv configuration decodes wfi. */
	__asm__ volatile("nop");
#endif
}

static void put_hex(uint32_t v)
{
	static const char digits[] = "0123456789abcdef";
	char buf[11] = "0x";
	for (int i = 0; i < 8; i++)
		buf[2 + i] = digits[(v >> (28 - 4 * i)) & 0xF];
	buf[10] = '\0';
	board_console_write(buf);
}

static void fatal(uint32_t mcause, const uint32_t *frame)
{
	uint32_t mtval;
	__asm__ volatile("csrr %0, mtval" : "=r"(mtval));
	board_console_write("\nkernel: fatal trap mcause=");
	put_hex(mcause);
	board_console_write(" mepc=");
	put_hex(frame[FRAME_MEPC / 4]);
	board_console_write(" mtval=");
	put_hex(mtval);
	board_console_write("\n");
	board_exit(RV32_EXIT_FATAL_TRAP);
}

/*
 * Called by k_trap_entry on the interrupt stack with the interrupted
 * thread's partial frame. Returns the interrupted thread when k_isr_exit()
 * chose another one to run (k_current), else NULL.
 */
K_IRQ_PATH(k_arch_trap) k_thread_t *k_arch_trap(uint32_t mcause, uint32_t *frame)
{
	if ((int32_t)mcause >= 0)
		fatal(mcause, frame); /* exceptions are bugs: no syscalls here */
	k_isr_enter();
	if (!rv32_board_interrupt(mcause & 0x7FFFFFFFu))
		fatal(mcause, frame);
	return k_isr_exit();
}

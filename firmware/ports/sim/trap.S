/*
 * RV32 context switch and trap entry/exit for the reference kernel.
 * Frame layout and the three kinds of frame: arch_frame.h.
 *
 * Interrupt path (k_trap_entry, mtvec direct mode):
 *   1. save ra, t0-t6, a0-a7, mepc, mstatus on the interrupted stack
 *      (19 stores: the callee-saved registers survive the C call anyway);
 *   2. switch to the interrupt stack (__stack: the boot stack, unused once
 *      the kernel has started), call k_arch_trap(mcause, frame);
 *   3. k_arch_trap returns 0: restore the same 16 registers, mret
 *      (the fast path of an interrupt that reschedules nothing);
 *      it returns the interrupted thread: k_current changed, so complete the
 *      frame with s0-s11, store sp in the old thread, load k_current's sp
 *      and restore its full frame.
 * No interrupt nesting: MIE stays 0 from trap entry to mret.
 */
#include "arch_frame.h"

	/* With the rest of the interrupt path (K_IRQ_PATH, kernel.h). */
	.section .text.irq_path.0.k_trap_entry, "ax", @progbits
	.globl k_trap_entry
	.type k_trap_entry, @function
	.balign 4
k_trap_entry:
	addi sp, sp, -FRAME_SIZE
	sw ra, FRAME_RA(sp)
	sw t0, FRAME_T0(sp)
	sw t1, FRAME_T1(sp)
	sw t2, FRAME_T2(sp)
	sw a0, FRAME_A0(sp)
	sw a1, FRAME_A1(sp)
	sw a2, FRAME_A2(sp)
	sw a3, FRAME_A3(sp)
	sw a4, FRAME_A4(sp)
	sw a5, FRAME_A5(sp)
	sw a6, FRAME_A6(sp)
	sw a7, FRAME_A7(sp)
	sw t3, FRAME_T3(sp)
	sw t4, FRAME_T4(sp)
	sw t5, FRAME_T5(sp)
	sw t6, FRAME_T6(sp)
	csrr t0, mepc
	csrr t1, mstatus
	sw t0, FRAME_MEPC(sp)
	sw t1, FRAME_MSTATUS(sp)

	csrr a0, mcause
	mv a1, sp
	la sp, __stack
	addi sp, sp, -16
	sw a1, 0(sp)            /* the interrupted thread's frame */
	call k_arch_trap
	lw t0, 0(sp)
	mv sp, t0
	bnez a0, switch_from_isr

	/* Fast path: back to the interrupted thread. mepc and mstatus were not
	 * changed by the handler (no nesting, no exceptions taken). */
	lw ra, FRAME_RA(sp)
	lw t0, FRAME_T0(sp)
	lw t1, FRAME_T1(sp)
	lw t2, FRAME_T2(sp)
	lw a0, FRAME_A0(sp)
	lw a1, FRAME_A1(sp)
	lw a2, FRAME_A2(sp)
	lw a3, FRAME_A3(sp)
	lw a4, FRAME_A4(sp)
	lw a5, FRAME_A5(sp)
	lw a6, FRAME_A6(sp)
	lw a7, FRAME_A7(sp)
	lw t3, FRAME_T3(sp)
	lw t4, FRAME_T4(sp)
	lw t5, FRAME_T5(sp)
	lw t6, FRAME_T6(sp)
	addi sp, sp, FRAME_SIZE
	mret

switch_from_isr:
	/* a0 = the interrupted thread; its frame is at sp. */
	sw s0, FRAME_S0(sp)
	sw s1, FRAME_S1(sp)
	sw s2, FRAME_S2(sp)
	sw s3, FRAME_S3(sp)
	sw s4, FRAME_S4(sp)
	sw s5, FRAME_S5(sp)
	sw s6, FRAME_S6(sp)
	sw s7, FRAME_S7(sp)
	sw s8, FRAME_S8(sp)
	sw s9, FRAME_S9(sp)
	sw s10, FRAME_S10(sp)
	sw s11, FRAME_S11(sp)
	sw sp, 0(a0)
	la t0, k_current
	lw t0, 0(t0)
	lw sp, 0(t0)
	j k_arch_restore_full
	.size k_trap_entry, . - k_trap_entry

/*
 * void arch_switch(k_thread_t *from, k_thread_t *to)
 * Called by the kernel with interrupts locked and k_current == to.
 * Saves a voluntary frame (resume pc = ra, interrupts locked on resume).
 */
	.section .text.arch_switch, "ax", @progbits
	.globl arch_switch
	.type arch_switch, @function
	.balign 4
arch_switch:
	addi sp, sp, -FRAME_SIZE
	sw ra, FRAME_MEPC(sp)
	li t0, MSTATUS_MPP_M
	sw t0, FRAME_MSTATUS(sp)
	sw s0, FRAME_S0(sp)
	sw s1, FRAME_S1(sp)
	sw s2, FRAME_S2(sp)
	sw s3, FRAME_S3(sp)
	sw s4, FRAME_S4(sp)
	sw s5, FRAME_S5(sp)
	sw s6, FRAME_S6(sp)
	sw s7, FRAME_S7(sp)
	sw s8, FRAME_S8(sp)
	sw s9, FRAME_S9(sp)
	sw s10, FRAME_S10(sp)
	sw s11, FRAME_S11(sp)
	sw sp, 0(a0)
	lw sp, 0(a1)
	/* fall through */

/* Restore the frame at sp (any kind) and resume it with mret. */
	.globl k_arch_restore_full
k_arch_restore_full:
	lw t0, FRAME_MEPC(sp)
	csrw mepc, t0
	lw t0, FRAME_MSTATUS(sp)
	csrw mstatus, t0        /* MIE=0 in every frame; mret sets MIE = MPIE */
	lw ra, FRAME_RA(sp)
	lw t0, FRAME_T0(sp)
	lw t1, FRAME_T1(sp)
	lw t2, FRAME_T2(sp)
	lw a0, FRAME_A0(sp)
	lw a1, FRAME_A1(sp)
	lw a2, FRAME_A2(sp)
	lw a3, FRAME_A3(sp)
	lw a4, FRAME_A4(sp)
	lw a5, FRAME_A5(sp)
	lw a6, FRAME_A6(sp)
	lw a7, FRAME_A7(sp)
	lw t3, FRAME_T3(sp)
	lw t4, FRAME_T4(sp)
	lw t5, FRAME_T5(sp)
	lw t6, FRAME_T6(sp)
	lw s0, FRAME_S0(sp)
	lw s1, FRAME_S1(sp)
	lw s2, FRAME_S2(sp)
	lw s3, FRAME_S3(sp)
	lw s4, FRAME_S4(sp)
	lw s5, FRAME_S5(sp)
	lw s6, FRAME_S6(sp)
	lw s7, FRAME_S7(sp)
	lw s8, FRAME_S8(sp)
	lw s9, FRAME_S9(sp)
	lw s10, FRAME_S10(sp)
	lw s11, FRAME_S11(sp)
	addi sp, sp, FRAME_SIZE
	mret
	.size arch_switch, . - arch_switch

/* void arch_start(k_thread_t *first): leave the boot stack for good. */
	.section .text.arch_start_frame, "ax", @progbits
	.globl k_arch_start_frame
	.type k_arch_start_frame, @function
	.balign 4
k_arch_start_frame:
	lw sp, 0(a0)
	j k_arch_restore_full
	.size k_arch_start_frame, . - k_arch_start_frame

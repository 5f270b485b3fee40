/*
 * PendSV: the context switch (ARMv6-M instructions only, so one source for
 * Cortex-M0+ and M3/M4). Entered on the main stack after the hardware pushed
 * r0-r3, r12, lr, pc, xPSR on the running thread's PSP. Saves r4-r11 below
 * that frame into cm_running's k_arch_thread.sp (none at the first start),
 * then resumes k_current, which the kernel already set: restores its r4-r11,
 * points PSP at its hardware frame and returns to thread mode on PSP.
 *
 * Interrupts are masked while cm_running and k_current are read and updated:
 * an ISR in between could pick yet another thread. An ISR taken after the
 * unmask finds the new thread's registers and frame complete, as if it had
 * already resumed; if it pends PendSV again, the tail-chained switch saves
 * exactly that state.
 */
	.syntax unified
	.thumb

	.section .text.cm_pendsv_isr, "ax", %progbits
	.global cm_pendsv_isr
	.type cm_pendsv_isr, %function
	.thumb_func
cm_pendsv_isr:
	cpsid i
	ldr r3, =cm_running
	ldr r2, [r3]
	cmp r2, #0
	beq 1f
	mrs r0, psp
	subs r0, #32
	str r0, [r2]            /* k_arch_thread.sp: r4-r7, r8-r11, hardware frame */
	stmia r0!, {r4-r7}
	mov r4, r8
	mov r5, r9
	mov r6, r10
	mov r7, r11
	stmia r0!, {r4-r7}
1:
	ldr r1, =k_current
	ldr r1, [r1]
	str r1, [r3]            /* cm_running = k_current */
	ldr r0, [r1]
	adds r0, #16
	ldmia r0!, {r4-r7}      /* r8-r11 */
	mov r8, r4
	mov r9, r5
	mov r10, r6
	mov r11, r7
	msr psp, r0             /* the hardware frame */
	subs r0, #32
	ldmia r0!, {r4-r7}
	cpsie i
	ldr r0, =0xFFFFFFFD     /* thread mode, PSP, no FP state */
	bx r0
	.ltorg
	.size cm_pendsv_isr, . - cm_pendsv_isr

/*
 * RV32 saved-context frame, shared by trap.S and arch_rv32.c.
 *
 * Every thread that is not running has exactly one frame at its saved sp:
 *   - an interrupt frame (trap entry saved the caller-saved registers, the
 *     switch path added s0-s11), resumed with MIE as it was (MPIE);
 *   - a voluntary frame (k_arch_switch saved ra as the resume pc plus
 *     s0-s11), resumed with interrupts still locked, since the thread
 *     continues inside the kernel, which restores its own key;
 *   - an initial frame (arch_context_init) entering k_thread_trampoline.
 * All three are restored by the same code (k_arch_restore_full + mret).
 * Restoring the caller-saved slots of a voluntary frame loads junk into
 * registers the calling convention already treats as clobbered.
 * gp and tp are never saved: one image, one TLS block, shared by all threads.
 */
#ifndef ARCH_FRAME_H
#define ARCH_FRAME_H

#define FRAME_MEPC     0
#define FRAME_MSTATUS  4
#define FRAME_RA       8
#define FRAME_T0      12
#define FRAME_T1      16
#define FRAME_T2      20
#define FRAME_A0      24
#define FRAME_A1      28
#define FRAME_A2      32
#define FRAME_A3      36
#define FRAME_A4      40
#define FRAME_A5      44
#define FRAME_A6      48
#define FRAME_A7      52
#define FRAME_T3      56
#define FRAME_T4      60
#define FRAME_T5      64
#define FRAME_T6      68
#define FRAME_S0      72
#define FRAME_S1      76
#define FRAME_S2      80
#define FRAME_S3      84
#define FRAME_S4      88
#define FRAME_S5      92
#define FRAME_S6      96
#define FRAME_S7     100
#define FRAME_S8     104
#define FRAME_S9     108
#define FRAME_S10    112
#define FRAME_S11    116
#define FRAME_SIZE   128 /* 16-byte aligned, as the ABI wants sp */

#define MSTATUS_MIE_BIT   0x8
#define MSTATUS_MPIE_BIT  0x80
#define MSTATUS_MPP_M     0x1800

#endif /* ARCH_FRAME_H */

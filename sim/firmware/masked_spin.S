/* irq_masked's code under test (sim/firmware/irq_masked.c; tests/system/test_cpu_truth.py): a
 * known stretch of instructions with the external interrupt masked and a known loop, in
 * assembly so that its labels, instructions and source lines are exact.
 *
 * void masked_spin(uint32_t rounds, uint32_t spins)
 *   rounds times: clear mstatus.MIE at masked_begin, MASKED_NOPS nops, set it again at
 *   masked_end (so MASKED_NOPS + 1 instructions run masked after the csrci), then `spins`
 *   turns of the loop at spin. Returns with MIE clear (masked_tail masks for good), so no
 *   interrupt is taken outside this function: MIE is first set at masked_end. RVC builds
 *   mix 2-byte (c.nop, c.addi, c.bnez) and 4-byte instructions.
 */
#ifndef MASKED_NOPS
#define MASKED_NOPS 24
#endif

    .section .text.masked_spin, "ax", @progbits
    .globl masked_spin
    .type masked_spin, @function
    .globl masked_begin, masked_end, spin, masked_tail
    .balign 4
masked_spin:
    mv t1, a0
round:
masked_begin:
    csrci mstatus, 8
    .rept MASKED_NOPS
    nop
    .endr
masked_end:
    csrsi mstatus, 8
    mv t0, a1
spin:
    addi t0, t0, -1
    bnez t0, spin
    addi t1, t1, -1
    bnez t1, round
masked_tail:
    csrci mstatus, 8
    ret
    .size masked_spin, . - masked_spin

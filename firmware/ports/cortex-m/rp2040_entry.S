/*
 * RP2040 SRAM image entry. The boot ROM runs a RAM-only UF2 (or picotool's
 * load -x) by jumping to its lowest address, 0x20000000, in thread mode with
 * its own stack; this stub makes the image look like a reset: VTOR at the
 * vector table, sp and pc from its first two words (picolibc's _start).
 * picolibc.ld puts .text.init.enter first, then the table (.data.init.enter).
 */
	.syntax unified
	.thumb

	.section .text.init.enter, "ax", %progbits
	.global rp2040_entry
	.type rp2040_entry, %function
	.thumb_func
rp2040_entry:
	ldr r0, =__interrupt_vector
	ldr r1, =0xE000ED08     /* VTOR */
	str r0, [r1]
	ldr r1, [r0]
	mov sp, r1
	ldr r1, [r0, #4]
	bx r1
	.ltorg
	.size rp2040_entry, . - rp2040_entry

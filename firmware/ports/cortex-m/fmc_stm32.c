/*
 * The FMC's bank 1 as the appliance's memory bus (fmc_stm32.h). Pins of the LQFP144
 * STM32F446ZE (NUCLEO-F446ZE; the STM32F446xC/E datasheet's alternate-function table, AF12 = FMC;
 * the F405/F407/F429's FSMC/FMC pins are the same):
 *
 *   NE1 PD7, NWE PD5, D0 PD14, D1 PD15, D2 PD0, D3 PD1, D4-D12 PE7-PE15, D13 PD8,
 *   D14 PD9, D15 PD10, A0-A5 PF0-PF5, A6-A9 PF12-PF15, A10-A15 PG0-PG5
 *
 * The read strobe (NOE) and the byte lanes (NBL0/1) stay GPIO inputs: the appliance reads
 * nothing and every marker is a whole halfword. A16 and up are not driven: a marker goes
 * to address 0.
 */
#include <stdint.h>

#include "cm_board.h"
#include "fmc_stm32.h"

#define RCC_AHB1ENR 0x40023830u
#define RCC_AHB3ENR 0x40023838u
#define GPIO_MODER 0x00u
#define GPIO_OSPEEDR 0x08u
#define GPIO_AFRL 0x20u
#define GPIO_AFRH 0x24u
#define AF_FMC 12u

static const struct {
	uint32_t port;     /* GPIOx base */
	uint32_t enable;   /* its RCC_AHB1ENR bit */
	uint16_t pins;     /* the FMC's pins on it */
} fmc_ports[] = {
	{0x40020C00u, 1u << 3, 0xC7A3u}, /* PD0, 1, 5, 7, 8, 9, 10, 14, 15 */
	{0x40021000u, 1u << 4, 0xFF80u}, /* PE7-PE15 */
	{0x40021400u, 1u << 5, 0xF03Fu}, /* PF0-PF5, PF12-PF15 */
	{0x40021800u, 1u << 6, 0x003Fu}, /* PG0-PG5 */
};

/* The pins to alternate function 12 at the highest speed: each register read, changed in
 * the pins' fields and written once. */
static void fmc_pins(uint32_t port, uint16_t pins)
{
	uint32_t moder = CM_REG(port + GPIO_MODER), speed = CM_REG(port + GPIO_OSPEEDR);
	uint32_t af[2] = {CM_REG(port + GPIO_AFRL), CM_REG(port + GPIO_AFRH)};
	for (unsigned pin = 0; pin < 16; pin++) {
		if (!(pins & (1u << pin)))
			continue;
		moder = (moder & ~(3u << 2 * pin)) | 2u << 2 * pin;
		speed |= 3u << 2 * pin;
		unsigned shift = 4 * (pin % 8);
		af[pin / 8] = (af[pin / 8] & ~(0xFu << shift)) | AF_FMC << shift;
	}
	CM_REG(port + GPIO_AFRL) = af[0];
	CM_REG(port + GPIO_AFRH) = af[1];
	CM_REG(port + GPIO_OSPEEDR) = speed;
	CM_REG(port + GPIO_MODER) = moder;
}

void stm32_fmc_init(void)
{
	for (unsigned k = 0; k < sizeof fmc_ports / sizeof fmc_ports[0]; k++)
		CM_REG(RCC_AHB1ENR) |= fmc_ports[k].enable;
	CM_REG(RCC_AHB3ENR) |= 1u << 0; /* FMCEN (FSMCEN on the F405) */
	for (unsigned k = 0; k < sizeof fmc_ports / sizeof fmc_ports[0]; k++)
		fmc_pins(fmc_ports[k].port, fmc_ports[k].pins);
	/* Timing before the bank is enabled: BCR1's MBKEN comes last. */
	CM_REG(STM32_FMC_BTR1) = STM32_FMC_BTR1_VALUE;
	CM_REG(STM32_FMC_BCR1) = STM32_FMC_BCR1_VALUE;
}

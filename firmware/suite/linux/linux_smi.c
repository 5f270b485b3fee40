/*
 * The SMI marker port's set-up (smi_marker_port.h, MARKER=bus): the Raspberry Pi's
 * secondary memory interface programmed by direct register access through /dev/mem
 * (root), registers and fields as the kernel's include/linux/broadcom/bcm2835_smi.h
 * defines them, pins as the BCM2835 peripherals document's alternate functions give them.
 *
 *   GPIO5-0 = SA0-SA5, GPIO7 = SWE, GPIO8-23 = SD0-SD15: function ALT1
 *   SMIDSW0: 16-bit writes, setup, strobe, hold and pace 1 SMI clock each (the fastest:
 *            each field's minimum is 1; docs/membus.md takes them)
 *   SMIA:    device 0, address 0; SMIL: the largest count; SMICS: write, unpacked FIFO
 *            (PXLDAT clear: one transfer per 32-bit word), started once
 *
 * The SMI's clock is not set here: the kernel's smi driver (dtoverlay=smi in config.txt)
 * enables it at the device tree's rate (125 MHz); the set-up refuses to run with it off.
 *
 * Environment:
 *   LATSCOPE_DEVMEM      the physical memory device (/dev/mem)
 *   LATSCOPE_PERI_BASE   the peripherals' physical base (hex; default: from
 *                        /proc/device-tree/soc/ranges: 0x20000000 on a Pi 1,
 *                        0x3F000000 on a Pi 2/3, 0xFE000000 on a Pi 4)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "linux_dut.h"

#define PAGE 4096u
#define GPIO_OFFSET 0x200000u
#define CM_OFFSET 0x101000u
#define SMI_OFFSET 0x600000u
#define CM_SMICTL (0xB0u / 4)
#define CM_ENAB (1u << 4)
/* SMI registers, word indices (bcm2835_smi.h) */
#define SMICS (0x00u / 4)
#define SMIL (0x04u / 4)
#define SMIA (0x08u / 4)
#define SMID (0x0Cu / 4)
#define SMIDSW0 (0x14u / 4)
#define SMIDC (0x30u / 4)
#define SMICS_ENABLE (1u << 0)
#define SMICS_ACTIVE (1u << 2)
#define SMICS_START (1u << 3)
#define SMICS_CLEAR (1u << 4)
#define SMICS_WRITE (1u << 5)
#define SMICS_AFERR (1u << 25)
/* SMIDSW0: WWIDTH 01 = 16 bits (31:30), WSETUP (29:24), WHOLD (21:16), WPACE (14:8),
 * WSTROBE (6:0), SMI clock cycles, each at least 1. */
#define SMIDSW_VALUE (1u << 30 | 1u << 24 | 1u << 16 | 1u << 8 | 1u << 0)
#define SMIL_FOREVER 0xFFFFFFFFu
#define FSEL_ALT1 4u /* GPFSELn function code 100 */
#define WAIT_POLLS 1000000u

volatile uint32_t *ls_linux_smi_data;
static volatile uint32_t *smi;

const char *linux_marker_backend(void)
{
	return "smi";
}

/* The peripherals' physical base: the environment's, or the SoC node's ranges (a Pi 4's
 * has a zero in the second cell and the base in the third). */
static int peripheral_base(unsigned long *base)
{
	const char *text = getenv("LATSCOPE_PERI_BASE");
	if (text != NULL) {
		*base = strtoul(text, NULL, 16);
		return 0;
	}
	unsigned char cells[12];
	FILE *f = fopen("/proc/device-tree/soc/ranges", "rb");
	size_t got = f ? fread(cells, 1, sizeof(cells), f) : 0;
	if (f)
		fclose(f);
	if (got < 8) {
		fprintf(stderr, "linux: SMI: no /proc/device-tree/soc/ranges (not a Raspberry Pi?): "
				"set LATSCOPE_PERI_BASE\n");
		return -1;
	}
	unsigned long at = (unsigned long)cells[4] << 24 | cells[5] << 16 | cells[6] << 8 | cells[7];
	if (at == 0 && got >= 12)
		at = (unsigned long)cells[8] << 24 | cells[9] << 16 | cells[10] << 8 | cells[11];
	*base = at;
	return 0;
}

static volatile uint32_t *map_page(int fd, unsigned long address, const char *path)
{
	void *map = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)address);
	if (map == MAP_FAILED) {
		fprintf(stderr, "linux: SMI: %s at 0x%lx: mmap: %s\n", path, address, strerror(errno));
		return NULL;
	}
	return map;
}

/* Pins 0-5, 7 and 8-23 to ALT1 (GPFSEL0-2: ten pins of three bits a register). */
static void smi_pins(volatile uint32_t *gpio)
{
	for (unsigned pin = 0; pin < 24; pin++) {
		if (pin == 6) /* SOE: the appliance reads nothing */
			continue;
		unsigned reg = pin / 10, shift = 3 * (pin % 10);
		gpio[reg] = (gpio[reg] & ~(7u << shift)) | FSEL_ALT1 << shift;
	}
}

static int wait_clear(uint32_t bits, const char *what)
{
	for (unsigned n = 0; n < WAIT_POLLS; n++)
		if (!(smi[SMICS] & bits))
			return 0;
	fprintf(stderr, "linux: SMI: %s does not clear (SMICS 0x%08x)\n", what, (unsigned)smi[SMICS]);
	return -1;
}

int linux_gpio_open(void)
{
	const char *path = getenv("LATSCOPE_DEVMEM") ? getenv("LATSCOPE_DEVMEM") : "/dev/mem";
	unsigned long base;
	if (peripheral_base(&base) != 0)
		return -1;
	int fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "linux: SMI: %s: %s%s\n", path, strerror(errno),
			errno == EACCES ? " (run as root)" : "");
		return -1;
	}
	volatile uint32_t *gpio = map_page(fd, base + GPIO_OFFSET, path);
	volatile uint32_t *cm = map_page(fd, base + CM_OFFSET, path);
	smi = map_page(fd, base + SMI_OFFSET, path);
	close(fd);
	if (gpio == NULL || cm == NULL || smi == NULL)
		return -1;
	if (!(cm[CM_SMICTL] & CM_ENAB)) {
		fprintf(stderr, "linux: SMI: its clock is off: add dtoverlay=smi to config.txt "
				"(the kernel's driver clocks it)\n");
		return -1;
	}
	smi_pins(gpio);
	/* Settings only while disabled (SMICS SETERR otherwise), then one endless write. */
	smi[SMICS] = 0;
	if (wait_clear(SMICS_ENABLE | SMICS_ACTIVE, "ENABLE/ACTIVE") != 0)
		return -1;
	smi[SMIDSW0] = SMIDSW_VALUE;
	smi[SMIDC] = 0; /* no DMA requests */
	smi[SMIA] = 0;  /* device 0 (SMIDSW0), address 0 */
	smi[SMIL] = SMIL_FOREVER;
	smi[SMICS] = SMICS_ENABLE | SMICS_WRITE | SMICS_CLEAR | SMICS_AFERR;
	smi[SMICS] = SMICS_ENABLE | SMICS_WRITE | SMICS_START;
	ls_linux_smi_data = &smi[SMID];
	printf("linux: marker path: SMI (%s at 0x%lx: one store a marker, 16-bit writes to "
	       "address 0)\n", path, base + SMI_OFFSET);
	return 0;
}

/* Whether a store found the FIFO full (the marker was lost): printed by the suite's end. */
int linux_smi_lost(void)
{
	return smi != NULL && (smi[SMICS] & SMICS_AFERR) != 0;
}

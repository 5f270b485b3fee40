/*
 * The Linux GPIO marker port's set-up (ls_marker_port.h): map the BCM GPIO
 * block or request the lines through libgpiod.
 *
 * Environment:
 *   LATSCOPE_GPIO        gpiomem | gpiod | auto (default: gpiomem when the
 *                        device opens, else gpiod)
 *   LATSCOPE_GPIOMEM     the register block's device file (/dev/gpiomem)
 *   LATSCOPE_GPIOCHIP    libgpiod chip: name, number or path (gpiochip0)
 *   LATSCOPE_GPIO_LINES  libgpiod: 17 comma-separated line offsets for
 *                        D0..D15 and STROBE (0,1,...,16: the Pi's numbering)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpiod_compat.h"
#include "linux_dut.h"
#include "suite.h"

#define BLOCK_BYTES 4096u
#define GPFSEL0 0u
#define GPFSEL1 1u
#define FSEL_OUTPUTS_0_9 0x09249249u /* function 001 (output) for 10 pins */
#define FSEL_OUTPUTS_10_16 0x00049249u /* and for 7 pins: bits 0..20 */
#define FSEL_MASK_10_16 0x001FFFFFu
#define LINES 17

volatile uint32_t *ls_linux_gpio_block;
static const char *backend = "none";

static const char *env_or(const char *name, const char *fallback)
{
	const char *value = getenv(name);
	return value != NULL && *value != '\0' ? value : fallback;
}

/* GPIO0-16 as outputs, all low (the strobe starts low, as the shadow says). Why the
 * device cannot be used goes to `why` (printed by the caller: the reason for a fallback). */
static int open_gpiomem(const char *path, char *why, size_t size)
{
	int fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, size, "%s: %s%s", path, strerror(errno),
			 errno == ENOENT ? " (a kernel without the Raspberry Pi's gpiomem "
					   "driver: Debian's own kernels, the real-time one among them)"
			 : errno == EACCES ? " (not in group gpio, or not root)" : "");
		return -1;
	}
	void *map = mmap(NULL, BLOCK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(why, size, "%s: mmap: %s", path, strerror(errno));
		return -1;
	}
	volatile uint32_t *block = map;
	block[LS_BCM_GPCLR0] = LS_LINUX_PINS;
	block[GPFSEL0] = FSEL_OUTPUTS_0_9;
	block[GPFSEL1] = (block[GPFSEL1] & ~FSEL_MASK_10_16) | FSEL_OUTPUTS_10_16;
	ls_linux_gpio_block = block;
	return 0;
}

#ifdef LATSCOPE_HAVE_GPIOD
static ls_gpiod_lines *data_lines, *strobe_line;

static int parse_lines(unsigned offsets[LINES])
{
	const char *text = getenv("LATSCOPE_GPIO_LINES");
	for (unsigned i = 0; i < LINES; i++)
		offsets[i] = i;
	if (text == NULL)
		return 0;
	char *end = (char *)text;
	for (unsigned i = 0; i < LINES; i++) {
		offsets[i] = (unsigned)strtoul(end, &end, 10);
		if (*end != (i + 1 < LINES ? ',' : '\0')) {
			fprintf(stderr, "linux: LATSCOPE_GPIO_LINES: 17 comma-separated offsets "
					"wanted, bad at character %ld\n", (long)(end - text));
			return -1;
		}
		end++;
	}
	return 0;
}

/* Data lines in one request, the strobe alone: its ioctl goes second. */
static int open_gpiod(const char *why)
{
	const char *name = env_or("LATSCOPE_GPIOCHIP", "gpiochip0");
	unsigned offsets[LINES];
	printf("linux: marker path: %s on %s, the slower fallback (two ioctls a marker): %s\n",
	       ls_gpiod_api, name, why);
	fflush(stdout);
	if (parse_lines(offsets) != 0)
		return -1;
	data_lines = ls_gpiod_outputs(name, offsets, LINES - 1, "latscope-data");
	strobe_line = data_lines ? ls_gpiod_outputs(name, &offsets[LINES - 1], 1, "latscope-strobe")
				 : NULL;
	if (strobe_line == NULL) {
		fprintf(stderr, "linux: %s: requesting the marker lines (%s): %s\n", name,
			ls_gpiod_api, strerror(errno));
		return -1;
	}
	return 0;
}

void ls_linux_gpiod_store(uint32_t word)
{
	int values[LINES - 1];
	for (unsigned i = 0; i < LINES - 1; i++)
		values[i] = (int)((word >> i) & 1u);
	ls_gpiod_set(data_lines, values);
	int strobe = (int)((word >> 16) & 1u);
	ls_gpiod_set(strobe_line, &strobe);
}
#else
static int open_gpiod(const char *why)
{
	fprintf(stderr, "linux: no marker path: %s; built without libgpiod (GPIOD=0): no "
			"fallback\n", why);
	return -1;
}

void ls_linux_gpiod_store(uint32_t word)
{
	(void)word;
}
#endif

/* Says which marker path this run uses and why: the fallback costs microseconds a marker
 * (two ioctls), so a run that falls back must not look like one that does not. */
int linux_gpio_open(void)
{
	const char *want = env_or("LATSCOPE_GPIO", "auto");
	const char *path = env_or("LATSCOPE_GPIOMEM", "/dev/gpiomem");
	int is_auto = strcmp(want, "auto") == 0;
	char why[256] = "LATSCOPE_GPIO=gpiod";
	if (is_auto || strcmp(want, "gpiomem") == 0) {
		if (open_gpiomem(path, why, sizeof(why)) == 0) {
			backend = "gpiomem";
			printf("linux: marker path: gpiomem (%s mapped: two stores a marker)\n", path);
			return 0;
		}
		if (!is_auto) {
			fprintf(stderr, "linux: LATSCOPE_GPIO=gpiomem: %s\n", why);
			return -1;
		}
	} else if (strcmp(want, "gpiod") != 0) {
		fprintf(stderr, "linux: LATSCOPE_GPIO=%s: gpiomem, gpiod or auto wanted\n", want);
		return -1;
	}
	if (open_gpiod(why) != 0)
		return -1;
	backend = "gpiod";
	return 0;
}

const char *linux_marker_backend(void)
{
	return backend;
}

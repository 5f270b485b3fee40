/*
 * The two things the Linux port and its marker port need of libgpiod, on its v1 API
 * (Debian bookworm, Raspberry Pi OS 12) and on its v2 API (Debian trixie and later): a
 * group of output lines set together, and one input line's rising edges. Which API is
 * decided at build time by the header itself: v1's gpiod.h defines
 * GPIOD_LINE_BULK_MAX_LINES, v2's does not (its bulk objects are gone).
 *
 * Chips are named as v1's gpiod_chip_open_lookup() takes them: a name (gpiochip0), a
 * number (0) or a path (/dev/gpiochip0); v2 opens only paths, so names and numbers become
 * /dev/gpiochip<N> or /dev/<name>.
 */
#ifndef GPIOD_COMPAT_H
#define GPIOD_COMPAT_H

#ifdef LATSCOPE_HAVE_GPIOD

/* "libgpiod v1" or "libgpiod v2": the API this build uses. */
extern const char ls_gpiod_api[];

typedef struct ls_gpiod_lines ls_gpiod_lines;

/* Request count lines of chip as outputs, all low; NULL (errno set) on failure. */
ls_gpiod_lines *ls_gpiod_outputs(const char *chip, const unsigned *offsets, unsigned count,
				 const char *consumer);
/* Set every line of the group: values[i] for offsets[i]; 0 or -1. */
int ls_gpiod_set(ls_gpiod_lines *lines, const int *values);
/* Request one line as an input with rising-edge events; NULL (errno set) on failure. */
ls_gpiod_lines *ls_gpiod_rising_edges(const char *chip, unsigned offset, const char *consumer);
/* Block for the line's next edge event: 1 a rising edge, 0 another event, -1 an error. */
int ls_gpiod_wait_rising(ls_gpiod_lines *lines);

#endif /* LATSCOPE_HAVE_GPIOD */
#endif /* GPIOD_COMPAT_H */

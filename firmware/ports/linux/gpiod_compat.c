/* libgpiod v1 and v2 behind one small interface (gpiod_compat.h). */
#define _GNU_SOURCE
#include "gpiod_compat.h"

#ifdef LATSCOPE_HAVE_GPIOD
#include <errno.h>
#include <gpiod.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_LINES 32

#ifdef GPIOD_LINE_BULK_MAX_LINES /* ------------------------------------------ v1 */

const char ls_gpiod_api[] = "libgpiod v1";

struct ls_gpiod_lines {
	struct gpiod_chip *chip;
	struct gpiod_line_bulk bulk;
};

static ls_gpiod_lines *get_lines(const char *chip, const unsigned *offsets, unsigned count)
{
	ls_gpiod_lines *lines = calloc(1, sizeof(*lines));
	if (lines == NULL)
		return NULL;
	lines->chip = gpiod_chip_open_lookup(chip);
	if (lines->chip == NULL ||
	    gpiod_chip_get_lines(lines->chip, (unsigned *)offsets, count, &lines->bulk) != 0) {
		free(lines);
		return NULL;
	}
	return lines;
}

ls_gpiod_lines *ls_gpiod_outputs(const char *chip, const unsigned *offsets, unsigned count,
				 const char *consumer)
{
	int zeros[MAX_LINES] = {0};
	if (count > MAX_LINES) {
		errno = EINVAL;
		return NULL;
	}
	ls_gpiod_lines *lines = get_lines(chip, offsets, count);
	if (lines != NULL && gpiod_line_request_bulk_output(&lines->bulk, consumer, zeros) != 0) {
		free(lines);
		return NULL;
	}
	return lines;
}

int ls_gpiod_set(ls_gpiod_lines *lines, const int *values)
{
	return gpiod_line_set_value_bulk(&lines->bulk, (int *)values);
}

ls_gpiod_lines *ls_gpiod_rising_edges(const char *chip, unsigned offset, const char *consumer)
{
	ls_gpiod_lines *lines = get_lines(chip, &offset, 1);
	if (lines != NULL &&
	    gpiod_line_request_rising_edge_events(lines->bulk.lines[0], consumer) != 0) {
		free(lines);
		return NULL;
	}
	return lines;
}

int ls_gpiod_wait_rising(ls_gpiod_lines *lines)
{
	struct gpiod_line_event event;
	if (gpiod_line_event_read(lines->bulk.lines[0], &event) != 0)
		return -1;
	return event.event_type == GPIOD_LINE_EVENT_RISING_EDGE;
}

#else /* ------------------------------------------------------------------------- v2 */

const char ls_gpiod_api[] = "libgpiod v2";

struct ls_gpiod_lines {
	struct gpiod_line_request *request;
	struct gpiod_edge_event_buffer *events;
	unsigned count;
	enum gpiod_line_value values[MAX_LINES];
};

/* v2 opens paths only: a number or a name becomes /dev/gpiochip<N> or /dev/<name>. */
static struct gpiod_chip *open_chip(const char *chip)
{
	char path[128];
	if (chip[0] == '/')
		snprintf(path, sizeof(path), "%s", chip);
	else if (chip[0] >= '0' && chip[0] <= '9')
		snprintf(path, sizeof(path), "/dev/gpiochip%s", chip);
	else
		snprintf(path, sizeof(path), "/dev/%s", chip);
	return gpiod_chip_open(path);
}

/* One request of count lines with the same settings (the chip is closed again: the
 * request keeps its own file descriptor). */
static ls_gpiod_lines *request(const char *chip, const unsigned *offsets, unsigned count,
			       struct gpiod_line_settings *settings, const char *consumer)
{
	ls_gpiod_lines *lines = calloc(1, sizeof(*lines));
	struct gpiod_chip *handle = open_chip(chip);
	struct gpiod_line_config *config = gpiod_line_config_new();
	struct gpiod_request_config *request_config = gpiod_request_config_new();
	if (lines != NULL && handle != NULL && config != NULL && request_config != NULL &&
	    settings != NULL && count <= MAX_LINES &&
	    gpiod_line_config_add_line_settings(config, offsets, count, settings) == 0) {
		gpiod_request_config_set_consumer(request_config, consumer);
		lines->request = gpiod_chip_request_lines(handle, request_config, config);
		lines->count = count;
	}
	int saved = errno;
	gpiod_request_config_free(request_config);
	gpiod_line_config_free(config);
	gpiod_line_settings_free(settings);
	if (handle != NULL)
		gpiod_chip_close(handle);
	if (lines != NULL && lines->request == NULL) {
		free(lines);
		lines = NULL;
	}
	errno = saved;
	return lines;
}

ls_gpiod_lines *ls_gpiod_outputs(const char *chip, const unsigned *offsets, unsigned count,
				 const char *consumer)
{
	struct gpiod_line_settings *settings = gpiod_line_settings_new();
	if (settings != NULL) {
		gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT);
		gpiod_line_settings_set_output_value(settings, GPIOD_LINE_VALUE_INACTIVE);
	}
	return request(chip, offsets, count, settings, consumer);
}

int ls_gpiod_set(ls_gpiod_lines *lines, const int *values)
{
	for (unsigned i = 0; i < lines->count; i++)
		lines->values[i] = values[i] ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE;
	return gpiod_line_request_set_values(lines->request, lines->values);
}

ls_gpiod_lines *ls_gpiod_rising_edges(const char *chip, unsigned offset, const char *consumer)
{
	struct gpiod_line_settings *settings = gpiod_line_settings_new();
	if (settings != NULL) {
		gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT);
		gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_RISING);
	}
	ls_gpiod_lines *lines = request(chip, &offset, 1, settings, consumer);
	if (lines != NULL && (lines->events = gpiod_edge_event_buffer_new(1)) == NULL) {
		gpiod_line_request_release(lines->request);
		free(lines);
		return NULL;
	}
	return lines;
}

int ls_gpiod_wait_rising(ls_gpiod_lines *lines)
{
	if (gpiod_line_request_read_edge_events(lines->request, lines->events, 1) != 1)
		return -1;
	struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(lines->events, 0);
	return gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE;
}

#endif
#endif /* LATSCOPE_HAVE_GPIOD */

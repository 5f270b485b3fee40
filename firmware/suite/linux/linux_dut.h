/* The suite on Linux user space: marker port set-up (linux_gpio.c). */
#ifndef LINUX_DUT_H
#define LINUX_DUT_H

#include "ls_marker_port.h"

/* Map /dev/gpiomem or request libgpiod lines (see linux_gpio.c for the
 * environment); 0 on success, else an error was printed. */
int linux_gpio_open(void);
/* Time COST_MARKERS markers and print the cost of one. */
void linux_gpio_report_cost(void);

#endif /* LINUX_DUT_H */

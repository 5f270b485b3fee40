/* The suite on Linux user space: the marker port's set-up (linux_gpio.c: GPIO0-16;
 * linux_smi.c: the SMI, MARKER=bus) and what every port shares (linux_dut.c). */
#ifndef LINUX_DUT_H
#define LINUX_DUT_H

#include "ls_marker_port.h"

/* Set the marker port up (GPIO: map /dev/gpiomem or request libgpiod lines; SMI: map
 * and program its registers; each file lists its environment); 0 on success, else an
 * error was printed. */
int linux_gpio_open(void);
/* Time COST_MARKERS markers and print the cost of one. */
void linux_gpio_report_cost(void);
/* The marker path in use, for the cost line. */
const char *linux_marker_backend(void);
#ifdef LS_MARKER_BUS
/* Whether a marker found the SMI's FIFO full (SMICS AFERR): it was lost. */
int linux_smi_lost(void);
#endif

#endif /* LINUX_DUT_H */

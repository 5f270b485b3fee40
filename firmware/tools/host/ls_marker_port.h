/* Marker store target of tools/wiring_host.c: a function that prints the word. */
#ifndef LS_MARKER_PORT_H
#define LS_MARKER_PORT_H

#include <stdint.h>

void wiring_host_store(uint32_t word);

#define ls_marker_store(word) wiring_host_store(word)

static inline unsigned ls_marker_irq_save(void)
{
	return 0;
}

static inline void ls_marker_irq_restore(unsigned key)
{
	(void)key;
}

#endif /* LS_MARKER_PORT_H */

/*
 * Marker store target of the native build (host port): every marker word is
 * recorded in memory with a time stamp (native_appliance.c) and dumped at
 * the end. The interrupt mask of the GPIO variant is the host port's
 * simulated one, through the porting layer.
 */
#ifndef LS_MARKER_PORT_H
#define LS_MARKER_PORT_H

#include <stdint.h>

#include "latscope/bench_api.h"

/* Appends (time stamp, word) to the record; word as the pins would carry it. */
void native_record_marker(uint32_t word);

#define ls_marker_store(word) native_record_marker(word)

static inline unsigned ls_marker_irq_save(void)
{
	return bench_irq_lock();
}

static inline void ls_marker_irq_restore(unsigned key)
{
	bench_irq_unlock(key);
}

/* The host port's simulated IRQ generator (native_appliance.c). */
#define SUITE_IRQ_PIN "the simulated IRQ line"

#endif /* LS_MARKER_PORT_H */

/*
 * Counters of the exception path (control/exc/exc.h) that the exception thread writes; the
 * workers keep their side in struct p53_worker_stats (exc_*). Read with plain 64-bit loads by
 * the control and telemetry threads and described once in control/ops/counters.c.
 */
#ifndef P53_EXC_STATS_H
#define P53_EXC_STATS_H

#include <stdint.h>

struct p53_exc_stats {
	uint64_t to_kernel;             /* frames the tap took (wire -> kernel) */
	uint64_t tap_refused;           /* ...the tap refused, freed */
	uint64_t from_kernel;           /* frames read from the tap and queued to a worker */
	uint64_t to_wire_full;          /* ...dropped because that worker's ring was full */
};

#endif /* P53_EXC_STATS_H */

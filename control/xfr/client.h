/*
 * The transfer client: what a transfer thread does for one zone, with blocking sockets and
 * timeouts (so the control loop never waits on the network). A refresh asks the primaries
 * for the zone's SOA (UDP, TCP when truncated; RFC 1035 §4.3.5, RFC 1996 §3.7) and, when the
 * primary has a newer serial or we have no data, transfers the zone over TCP: IXFR (RFC 1995)
 * from our serial when we have data, falling back to AXFR (RFC 5936) when the primary answers
 * IXFR with an error, or with a full zone (then that is the answer). Every request is signed
 * and every response verified when the primary has a TSIG key (RFC 8945).
 *
 * Transfer threads only (control/xfr/pool.c); a job owns everything it points at.
 */
#ifndef P53_XFR_CLIENT_H
#define P53_XFR_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "control/xfr/conf.h"
#include "control/xfr/journal.h"
#include "control/xfr/rrs.h"

struct p53_xfr_peer {
	uint8_t family;                 /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint16_t port;
	bool has_key;
	struct p53_tsig_key key;        /* a copy: a job outlives a config reload */
};

enum p53_xfr_job_kind {
	P53_JOB_REFRESH = 0,            /* SOA check, then IXFR/AXFR when needed */
	P53_JOB_WRITE,                  /* append to (or rewrite) the journal file, and write
					   the disk copy when due (control/xfr/journal.c, store.c) */
	P53_JOB_REMOVE,                 /* delete the disk copy and its journal (catalog member
					   removed) */
};

enum p53_xfr_outcome {
	P53_XFR_FAILED = 0,
	P53_XFR_UPTODATE,               /* the primary's serial is not newer than ours */
	P53_XFR_FULL,                   /* a whole zone: AXFR, or IXFR answered with the zone */
	P53_XFR_DIFF,                   /* IXFR differences from our serial */
	P53_XFR_DONE,                   /* a disk job finished */
};

struct p53_xfr_job {
	struct p53_xfr_job *next;       /* queue link (pool.c) */
	enum p53_xfr_job_kind kind;
	uint64_t token;                 /* which request of which zone state this answers */
	char zone[1024];                /* zone name, text with the final dot */
	uint8_t apex[256];              /* zone name, wire form */
	uint8_t apex_len;

	/* REFRESH in */
	struct p53_xfr_peer peers[P53_XFR_MAX_PRIMARIES];
	int n_peers;
	bool have_data;                 /* we serve the zone at `serial` */
	uint32_t serial;                /* (WRITE: the serial of rrs, the copy written) */
	bool ixfr;                      /* IXFR allowed (zones[].ixfr) */
	bool force;                     /* transfer (AXFR) whatever the serial says */
	unsigned int timeout_ms;
	volatile int *stop;             /* the daemon is stopping: give up */

	/* WRITE / REMOVE in */
	char *path;                     /* malloc'd */
	uint64_t after;                 /* REMOVE: held back until the disk job with this token
					   (a write of the same file) is done; 0: none */
	struct p53_rrs rrs;             /* WRITE: the content (REFRESH: FULL result) */
	char *jpath;                    /* WRITE: the journal file (malloc'd) */
	struct p53_jstep **jsteps;      /* WRITE: the journal's steps up to rrs' serial, a
					   reference held on each (malloc'd array) */
	size_t n_jsteps;
	uint64_t jepoch;                /* WRITE: the journal's epoch (journal.h) */
	uint64_t jmax;                  /* WRITE: xfr.journal_max_bytes */
	struct p53_jfile jfile;         /* WRITE: the file as the last job left it; out: as this
					   one leaves it (the zone keeps it for the next) */
	bool copy;                      /* WRITE: write the disk copy (rrs) too; false: the
					   journal only, the copy's mtime touched (store.h) */
	size_t rrs_count;               /* WRITE out: the records of the copy written */
	bool copy_known;                /* WRITE: copy_serial is the serial of the copy on disk */
	uint32_t copy_serial;
	bool copy_stale;                /* WRITE out: the journal was rewritten without the copy
					   (its file was not as left) and no longer leads from
					   the copy's serial: the copy must follow */

	/* out */
	enum p53_xfr_outcome outcome;
	int peer;                       /* which primary answered, -1 none */
	uint32_t new_serial;
	uint32_t refresh, retry, expire;/* the primary's SOA timers (seconds) */
	struct p53_ixfr diff;           /* DIFF */
	char how[24];                   /* "SOA", "IXFR", "AXFR", "IXFR->AXFR" */
	uint64_t bytes, msgs;
	double ms;
	char err[512];                  /* FAILED: why, naming the primary */
};

/** Run one job to its end (blocking, bounded by timeout_ms per network wait). */
void p53_xfr_job_run(struct p53_xfr_job *j);

/** Free a job and everything it owns. */
void p53_xfr_job_free(struct p53_xfr_job *j);

/** RFC 1982 serial arithmetic: a is newer than b. */
static inline bool p53_serial_newer(uint32_t a, uint32_t b)
{
	return a != b && (int32_t)(a - b) > 0;
}

#endif /* P53_XFR_CLIENT_H */

/*
 * Zone transfers: pop53 as a secondary of a hidden primary (docs/ARCHITECTURE.md, Zone
 * transfers). This owns the state of every secondary zone (configured ones and catalog
 * members, RFC 9432): its serial, its SOA timers (refresh, retry, expire; RFC 1035 §4.3.5),
 * the transfer in flight, the disk copy, and the NOTIFYs that arrive for it (RFC 1996).
 *
 * Threads: everything here runs on the control thread (p53_xfr_tick every loop, the NOTIFY
 * drain, the control socket commands), except the jobs it hands to the transfer threads
 * (control/xfr/pool.h: SOA queries, IXFR/AXFR, disk writes), whose results come back
 * through the pool's done queue. The control loop never waits for a primary.
 *
 * New zone content goes through ONE function, p53_zones_update(): "zone X now has this
 * (a whole zone, or differences from serial S, or no data)". It patches the running image
 * with the differences, or compiles X alone and splices it in, or compiles every zone, and
 * publishes the result like a reload (control/publish.c), all or nothing.
 */
#ifndef P53_XFR_H
#define P53_XFR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "control/conf/config.h"
#include "control/xfr/journal.h"
#include "control/xfr/notify_out.h"
#include "control/xfr/pool.h"
#include "control/xfr/rrs.h"
#include "control/xfr/xfr_stats.h"
#include "control/zone/image_build.h"
#include "dataplane/notify.h"

struct p53_daemon;
struct p53_patch_index;

enum p53_xfr_state {
	P53_XFR_UNKNOWN = 0,            /* not compiled yet: the disk copy decides */
	P53_XFR_NODATA,                 /* never transferred: answers SERVFAIL */
	P53_XFR_LOADED,                 /* served at `serial` */
	P53_XFR_EXPIRED,                /* past expire: answers per on_expire (or still served: keep) */
};

/* The room for `zone status`'s last_ixfr_image and last_axfr_image, and the prefix of the
 * text of an update compiled in full (its why, struct p53_zone_update, fits whole after it). */
#define P53_XFR_IMAGE_TEXT 200
#define P53_COMPILED_IN_FULL "compiled in full: "

struct p53_xfr_zone {
	char *name;                     /* "example.com." */
	uint8_t apex[256];              /* canonical wire name */
	uint8_t apex_len;
	char *file;                     /* the disk copy */
	int cfg_index;                  /* zones[] entry; members: their catalog's */
	struct p53_xfr_zone *catalog;   /* members: the catalog zone's state */
	char *member_id;                /* members: the unique-id label in the catalog */
	bool is_catalog;

	enum p53_xfr_state state;
	uint32_t serial;
	uint32_t refresh, retry, expire;/* the zone's SOA timers, clamped by xfr.* */
	time_t last_refresh;            /* a primary last confirmed our serial (or gave us data) */
	time_t next_refresh;
	time_t expire_at;               /* 0: no data to expire */
	bool bad_copy;                  /* the disk copy did not compile: ignored */

	bool busy;                      /* a refresh job is out */
	uint64_t token;                 /* of that job */
	bool notified;                  /* refresh as soon as free (NOTIFY, pop53ctl zone refresh) */
	bool force;                     /* the next transfer is AXFR (retransfer, IXFR failed) */
	bool writing;                   /* a disk job is out */
	uint64_t wtoken;                /* of that job */
	bool write_pending;
	struct p53_rrs write_next;      /* newest content waiting for the disk */
	bool removed;                   /* members: gone from the catalog, dropped at the next apply */

	/* status (pop53ctl zone status) */
	time_t last_xfr;                /* end of the last refresh job */
	char last_result[600];
	char last_how[24];
	int last_primary;
	double last_xfr_ms, last_apply_ms;
	/* How the last IXFR and the last whole zone (AXFR) published got into the image:
	 * "patched", "spliced: <why the patch declined>" or "compiled in full: <why>". */
	char last_ixfr_image[P53_XFR_IMAGE_TEXT], last_axfr_image[P53_XFR_IMAGE_TEXT];
	struct p53_xfr_ways ixfr_ways;  /* IXFRs published each way */
	struct p53_xfr_ways axfr_ways;  /* whole zones published each way */
	uint64_t xfr_ok, xfr_failed, notifies;
	uint64_t notify_us;             /* CLOCK_MONOTONIC µs of the NOTIFY being served, 0 none */
	double notify_to_served_ms;     /* last NOTIFY to the new data published */

	struct p53_rrs cat;             /* catalog zones: the catalog's records */
	struct p53_journal journal;     /* IXFR history we can serve (serve.h), oldest first */
	struct p53_jfile jfile;         /* its file as the last disk job left it (journal.h) */
	/* The lazy disk copy (xfr.copy_sync_s; docs/ARCHITECTURE.md): */
	bool copy_known;                /* copy_serial is the copy's serial (0: none or unknown) */
	uint32_t copy_serial;           /* the serial of the disk copy on disk */
	time_t copy_behind_since;       /* first change the copy does not have yet, 0: none */
	bool copy_need;                 /* the next disk job writes the copy (flush, a journal
					   rewritten without it, a whole zone waiting) */
	bool rolled, no_roll;           /* start-up: compiled from the copy rolled forward by its
					   journal; that did not compile (the copy as it is) */
};

#define P53_XFR_MAX_SOCKS 64
#define P53_XFR_TCP_CONNS 16

/* A TCP connection carrying NOTIFYs (Knot sends them over TCP): control/xfr/notify_tcp.c. */
struct p53_ntcp_conn {
	int fd;                         /* -1: slot free */
	uint8_t ipv6;
	uint8_t peer[16];
	uint16_t peer_port;
	uint8_t local[16];
	uint8_t buf[2 + P53_NOTIFY_MSG_MAX];
	size_t len;
	uint64_t deadline_ms;
};

struct p53_xfr {
	struct p53_xfr_zone **zones;
	size_t n, cap;
	struct p53_xfr_pool pool;
	bool started;
	uint64_t next_token;
	int socks[P53_XFR_MAX_SOCKS];   /* UDP on each service address:53, for NOTIFY answers */
	struct p53_addr sock_addrs[P53_XFR_MAX_SOCKS];
	int n_socks;
	int tcp_socks[P53_XFR_MAX_SOCKS]; /* TCP listeners on the same addresses, for NOTIFY */
	struct p53_addr tcp_addrs[P53_XFR_MAX_SOCKS];
	int n_tcp;
	struct p53_ntcp_conn conns[P53_XFR_TCP_CONNS];
	time_t last_apply_end;
	uint64_t journal_max;           /* xfr.journal_max_bytes, for the disk jobs */
	unsigned int copy_sync_s;       /* xfr.copy_sync_s */
	struct p53_nout nout;           /* NOTIFYs to the servers we feed (notify_out.h) */
	struct p53_xfr_job *held;       /* disk jobs waiting for another one (job.after), linked
					   by their next */
	/* totals */
	struct p53_xfr_secondary_stats totals; /* exported whole by p53_xfr_totals() */
	uint64_t notify_kernel, notify_tcp, notify_lost_events;
	struct p53_patch_index *pix;    /* what the IXFR patch keeps about the running image
					   (control/zone/patch_index.h); NULL until the first */
	uint64_t soa_answered, soa_refused; /* signed SOA queries over UDP (p53_xfr_soa_query) */
};

/* One zone's new content, handed to p53_zones_update(). */
enum p53_update_kind {
	P53_UPDATE_FULL = 0,            /* the whole zone: rrs */
	P53_UPDATE_DIFF,                /* IXFR differences from the served serial: diff */
	P53_UPDATE_NODATA,              /* drop the data: every query gets rcode */
};

struct p53_zone_update {
	struct p53_xfr_zone *z;
	enum p53_update_kind kind;
	struct p53_rrs rrs;             /* FULL (taken) */
	struct p53_ixfr *diff;          /* DIFF (read) */
	uint8_t rcode;                  /* NODATA */
	/* out */
	int rc;                         /* 0 published, -1 not (err) */
	char err[600];
	struct p53_rrs result;          /* FULL/DIFF: the zone's new records (for its disk copy);
					 * empty for a DIFF patched into the image without them
					 * (lazy: the disk copy, when due, reads the image) */
	bool lazy;                      /* DIFF: result not made (yet): see p53_zones_update */
	enum p53_update_way way;        /* rc 0: how it was published */
	/* way not patched: why the patch declined, or why a whole zone was not patched alone
	 * (the log; `zone status`, whole after P53_COMPILED_IN_FULL) */
	char why[P53_XFR_IMAGE_TEXT - (sizeof(P53_COMPILED_IN_FULL) - 1)];
};

/**
 * Apply zone updates: the ONE way new zone content reaches the workers. DIFFs alone in the
 * call (one per zone, no catalog's) are first patched into the running image, one after
 * another, without reading the zones' records out of it (control/zone/image_patch.c reads the
 * touched owners only; result stays empty). Otherwise, and when the patch declines: for a DIFF, read the zone's records out of
 * the running image and apply the differences in place (p53_ixfr_apply_inplace); then
 * recompile the whole image with the new content and publish it like a reload, all or
 * nothing (a batch that fails is retried one update at a time, so one bad zone does not hold
 * the others back).
 * Control thread only. @return the number of updates published.
 */
size_t p53_zones_update(struct p53_daemon *d, struct p53_zone_update *u, size_t n);

/**
 * Compile the image for `cfg` (a start, reload or update): primary zones from their files;
 * secondary zones from the running image (cur_img), an update in `u`, their disk copy (a
 * zone the state does not know yet, at start-up or when a reload adds it), or no data; catalog
 * members from the state. A disk copy that does not compile is logged and left out (the zone
 * then has no data and is transferred again), never a failed start.
 * @return malloc'd image, or NULL with err = "file:line: reason".
 */
void *p53_xfr_compile(struct p53_xfr *x, const struct p53_config *cfg, const void *cur_img,
		      struct p53_zone_update *u, size_t n, size_t *len, char *err, size_t errlen,
		      char ***files, size_t *n_files);

/** The state for a config (before EAL): its secondary zones, catalog members from disk. */
struct p53_xfr *p53_xfr_new(const struct p53_config *cfg);

/** After the first publish: learn what the image serves, open sockets, start the threads. */
int p53_xfr_start(struct p53_daemon *d);

/** Every control tick: finished jobs, expiry, new jobs, NOTIFYs from the kernel sockets. */
void p53_xfr_tick(struct p53_daemon *d);

/** A NOTIFY a worker handed over (dataplane/notify.h) or a kernel socket received. */
void p53_xfr_notify(struct p53_daemon *d, const struct p53_notify_event *ev);

/** After a reload published a new config: zones added and removed, sockets, what is served. */
void p53_xfr_reconciled(struct p53_daemon *d);

/** Stop the threads, close the sockets, free everything. */
void p53_xfr_free(struct p53_xfr *x);

/**
 * The secondary side's totals (NOTIFYs received, updates published, each IXFR's and whole
 * zone's way into the image) into out->secondary; the other fields are left alone. Any
 * thread: plain 64-bit loads of counters only the control thread writes.
 */
void p53_xfr_totals(const struct p53_xfr *x, struct p53_xfr_stats *out);

/** Read the served image: each zone's state, serial and SOA timers. */
void p53_xfr_sync(struct p53_xfr *x, const struct p53_config *cfg, const void *img);

/** The state of a zone by name (with or without the final dot), or NULL. */
struct p53_xfr_zone *p53_xfr_find(const struct p53_xfr *x, const char *name);
struct p53_xfr_zone *p53_xfr_find_wire(const struct p53_xfr *x, const uint8_t *apex, size_t len);

/** `pop53ctl zone refresh|retransfer NAME`. @return 0 or -1 with err. */
/**
 * `pop53ctl zone flush NAME`: write the zone's disk copy at the served serial now (the copy
 * may trail its journal by xfr.copy_sync_s). @return 0, or -1 with err (not a secondary zone
 * here, no data).
 */
int p53_xfr_flush(struct p53_daemon *d, const char *name, char *err, size_t errlen);

/** Clean stop (SIGTERM): stop the transfer threads, write copies behind what is served. */
void p53_xfr_shutdown(struct p53_daemon *d);

int p53_xfr_refresh(struct p53_daemon *d, const char *name, bool retransfer, char *err,
		    size_t errlen);

/** `pop53ctl zone status NAME` (NULL: every secondary zone). */
json_t *p53_xfr_status_json(const struct p53_daemon *d, const char *name, char *err, size_t errlen);

/**
 * For the health check's "zones fresh" (control/health/): has this secondary zone expired
 * (RFC 1035 §4.3.5: no primary confirmed it within SOA EXPIRE)? False for a primary zone or
 * an unknown name. Control thread.
 */
bool p53_xfr_zone_expired(const struct p53_xfr *x, const char *name);

/** How many secondary zones are expired or have never been transferred (health). */
size_t p53_xfr_zones_stale(const struct p53_xfr *x, size_t *expired, size_t *nodata);

/* Internal to control/xfr/ (xfr.c, update.c, notify.c, catalog.c). */
struct p53_xfr_zone *p53_xfr_zone_add(struct p53_xfr *x, const char *name, int cfg_index,
				      const char *file);
void p53_xfr_zone_drop(struct p53_xfr *x, struct p53_xfr_zone *z);
/** A catalog member gone from its catalog and from the image: delete its disk copy, drop it. */
void p53_xfr_member_forget(struct p53_xfr *x, struct p53_xfr_zone *z);
/** The config's zone of this name (primary, secondary or catalog; with its final dot), or NULL. */
const struct p53_config_zone *p53_xfr_conf_named(const struct p53_config *cfg, const char *name);
const struct p53_config_zone *p53_xfr_zone_conf(const struct p53_config *cfg,
						const struct p53_xfr_zone *z);
/**
 * Bring zone z's files to what is served (img): the journal's new steps always, the disk copy
 * when due (whole: a whole-zone change; or xfr.copy_sync_s passed, a flush, a journal that is
 * rewritten). content: the newest records if the caller has them (taken), else NULL (read out
 * of img when the copy is written).
 */
void p53_xfr_store_later(struct p53_xfr *x, struct p53_xfr_zone *z, struct p53_rrs *content,
			 const void *img, bool whole);
uint64_t p53_xfr_now_us(void);

#endif /* P53_XFR_H */

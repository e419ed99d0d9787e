/*
 * pop53d configuration: the YAML file (docs/CONFIG.md documents every key), read with libyaml.
 *
 * Control thread only. p53_config_load() either fills the whole struct or fails with
 * "file:line: reason" and leaves nothing allocated, so a reload can validate a new config
 * before touching the running one.
 */
#ifndef P53_CONFIG_H
#define P53_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/steer/steer_conf.h"
#include "control/anycast/conf.h"
#include "control/health/conf.h"
#include "control/tcp/tcp_conf.h"
#include "control/dnssec/dnssec.h"
#include "control/abuse/abuse_conf.h"
#include "control/xfr/conf.h"
#include "control/exc/exc_conf.h"

#define P53_CONFIG_MAX_ADDRS   64
#define P53_CONFIG_BURST_MAX   256  /* dataplane.burst; P53_RX_MAX in dataplane/worker.h */
#define P53_CONFIG_MAX_EAL     64

struct p53_addr {
	uint8_t family;         /* AF_INET or AF_INET6 */
	uint8_t bytes[16];      /* network order; IPv4 in the first 4 */
};

struct p53_config_zone {
	char *name;             /* as written, normalised to end in '.' */
	char *file;             /* resolved against the config file's directory when relative;
				   for a secondary zone, its disk copy (default under xfr.directory) */
	int line;               /* line of this entry in the config file */
	struct p53_xfr_zone_conf *xfr; /* a secondary zone (primaries:...), else NULL */
	struct p53_xfr_transfer_conf *transfer; /* who may transfer it from us, else NULL:
						   xfr.transfer (control/xfr/serve_conf.h) */
	struct p53_xfr_notify_to *notify_to; /* whom we NOTIFY of a new serial, else NULL:
						xfr.notify_to (control/xfr/serve_conf.h) */
};

enum p53_replicas {
	P53_REPLICAS_PER_CORE = 0,  /* one image copy per worker, on its socket (default) */
	P53_REPLICAS_PER_SOCKET,    /* one copy per NUMA socket, shared by its workers */
};

/* dataplane.mode: who owns the NIC (docs/CONFIG.md). */
enum p53_dp_mode {
	P53_MODE_XDP = 0,       /* the kernel keeps the NIC; an XDP program steers UDP/53 to us */
	P53_MODE_DPDK,          /* DPDK owns the NIC; the rest goes to the kernel through the
				   exception interface (control/exc/) */
};

enum p53_idle_mode {
	P53_IDLE_BUSY = 0,      /* pure busy-poll: benchmarks, dedicated cores */
	P53_IDLE_ADAPTIVE,      /* back off with growing sleeps when queues are empty */
};

struct p53_config {
	char *path;                     /* the file this came from */

	/* server: */
	char *identity;                 /* server.identity: PoP name (id.server, NSID) */
	char *version;                  /* server.version: version.bind answer; NULL = REFUSED */
	uint16_t edns_max_payload;      /* server.edns_max_payload, 512..4096, default 1232 */
	char *control_socket;           /* server.control_socket, default /run/pop53/control.sock */
	char *control_group;            /* server.control_group: socket group (mode 0660); NULL keeps ours */
	enum p53_replicas replicas;     /* server.replicas: per-core (default) | per-socket */
	bool watch_zones;               /* server.watch_zones: reload on zone file change (inotify) */
	unsigned int watch_debounce_ms; /* server.watch_debounce_ms, default 500 */

	/* metrics: */
	bool metrics_enabled;           /* metrics.enabled, default true */
	char *metrics_listen;           /* metrics.listen: Prometheus address:port, default 127.0.0.1:9153 */

	/* dataplane: */
	char **eal;                     /* dataplane.eal: extra EAL arguments, in order */
	int n_eal;
	char *port;                     /* dataplane.port: DPDK device string (vdev or PCI) */
	enum p53_dp_mode mode;          /* dataplane.mode: xdp (default) | dpdk */
	struct p53_exc_conf exc;        /* dataplane.exception: (control/exc/exc_conf.h) */
	unsigned int workers;           /* dataplane.workers, default 1 */
	struct p53_addr addrs[P53_CONFIG_MAX_ADDRS]; /* dataplane.addresses */
	int n_addrs;
	char *xdp_prog;                 /* dataplane.xdp_prog: steering object for net_af_xdp,
					   default the installed/built steer.bpf.o */
	enum p53_idle_mode idle;        /* dataplane.idle.mode: busy | adaptive (default) */
	unsigned int idle_max_us;       /* dataplane.idle.max_sleep_us, default 200 */
	unsigned int idle_spin_polls;   /* dataplane.idle.spin_polls, default 64 */
	unsigned int burst;             /* dataplane.burst: frames per rx_burst, default 32 */
	unsigned int answer_cache;      /* dataplane.answer_cache: entries per worker, default
					   1024; 0: no answer cache (dataplane/qcache.h) */
	unsigned int af_xdp_busy_budget; /* dataplane.af_xdp.busy_budget, default 64 (the PMD's) */
	bool af_xdp_force_copy;         /* dataplane.af_xdp.force_copy, default false */
	unsigned int af_xdp_tx_budget;  /* dataplane.af_xdp.tx_budget: frames the kernel sends per
					   wakeup (XDP_MAX_TX_SKB_BUDGET), 0 = the kernel's (32) */
	unsigned int rx_desc;           /* dataplane.rx_desc, default 2048 (net_af_xdp keeps 2048 buffers in its fill ring) */
	unsigned int tx_desc;           /* dataplane.tx_desc, default 1024 */
	unsigned int mbufs;             /* dataplane.mbufs per worker, default 8191 */

	/* dnssec: (control/dnssec/dnssec.h) */
	struct p53_dnssec_conf dnssec;

	/* zones: */
	struct p53_config_zone *zones;
	int n_zones;

	struct p53_health_conf health;  /* health: (control/health/conf.h) */
	struct p53_anycast_conf anycast; /* anycast: (control/anycast/conf.h) */
	struct p53_tcp_conf tcp;        /* tcp: (control/tcp/tcp_conf.h) */
	/* rrl:, cookies: (control/abuse/abuse_conf.h) */
	struct p53_abuse_config abuse;
	/* tsig_keys: and xfr: (control/xfr/conf.h) */
	struct p53_xfr_conf xfr;
	struct p53_steer_conf steer;    /* steering: (control/steer/steer_conf.h) */
};

/**
 * Read and validate a config file.
 *
 * @param path    YAML file
 * @param cfg     zeroed struct, filled on success
 * @param err     on failure, "file:line: reason"
 * @return 0, or -1 with err set (cfg then holds nothing to free).
 */
int p53_config_load(const char *path, struct p53_config *cfg, char *err, size_t errlen);

/** Release everything p53_config_load() allocated; safe on a zeroed struct. */
void p53_config_free(struct p53_config *cfg);

#endif /* P53_CONFIG_H */

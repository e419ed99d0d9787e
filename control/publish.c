/* Replicas and their RCU swap; see dataplane.h. */
#include <assert.h>
#include <sched.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_malloc.h>

#include "control/bigmem.h"
#include "control/publish.h"
#include "dataplane/fastpath.h"
#include "control/log.h"

int p53_dataplane_init(struct p53_dataplane *dp, struct p53_worker *workers, unsigned int n,
		       unsigned int readers, enum p53_replicas mode)
{
	size_t sz = rte_rcu_qsbr_get_memsize(n + readers);

	memset(dp, 0, sizeof(*dp));
	dp->stuck = -1;
	dp->workers = workers;
	dp->n_workers = n;
	dp->n_readers = readers;
	dp->mode = mode;
	dp->qsbr = rte_zmalloc("p53_qsbr", sz, RTE_CACHE_LINE_SIZE);
	if (dp->qsbr == NULL || rte_rcu_qsbr_init(dp->qsbr, n + readers) != 0) {
		rte_free(dp->qsbr);
		dp->qsbr = NULL;
		return -1;
	}
	for (unsigned int i = 0; i < n; i++)
		workers[i].qsbr = dp->qsbr;
	return 0;
}

_Static_assert(P53_PKT_MAX_ADDRS >= P53_CONFIG_MAX_ADDRS, "every service address fits a replica");

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

_Static_assert(RTE_CACHE_LINE_SIZE >= P53_IMAGE_ALIGN, "a heap copy is aligned as an image must be");

/*
 * Memory for a copy of a `len`-byte image on `socket`; *malloced says how it is freed. The
 * DPDK heap when it is hugepage memory (2 MiB or larger pages, on the worker's socket). Under
 * --no-huge the heap is 4 KiB pages, which cost big-zone lookups 10-20 % (docs/BENCHMARKS.md,
 * "Big zone: page size and prefetch schedule"), and -m 512 holds few big copies: a big copy
 * is then 2 MiB-aligned malloc memory with transparent huge pages asked for, as the compiled
 * image is (image_build.c). --no-huge has one socket, so `socket` says nothing there.
 */
static void *image_alloc(size_t len, int socket, uint8_t *malloced)
{
	*malloced = len >= P53_BIGMEM_MIN && !rte_eal_has_hugepages();
	if (!*malloced)
		return rte_malloc_socket("p53_image", len, RTE_CACHE_LINE_SIZE, socket);
	return p53_bigmem_image(len);
}

static void image_free(const void *p, uint8_t malloced)
{
	if (malloced)
		free((void *)(uintptr_t)p);
	else
		rte_free((void *)(uintptr_t)p);
}

/* A replica of `img`: a copy on `socket`, or, with `adopt`, `img` itself (the replica then
 * owns it and frees it with free()). On failure nothing is allocated and `img` stays the
 * caller's either way. */
static struct p53_replica *replica_new(struct p53_dataplane *dp, void *img, size_t len,
				       const struct p53_config *cfg, uint16_t payload, int socket,
				       int adopt, const struct p53_replica *prev)
{
	struct p53_replica *r = rte_zmalloc_socket("p53_replica", sizeof(*r), RTE_CACHE_LINE_SIZE, socket);
	uint8_t malloced = (uint8_t)adopt;
	void *copy = adopt ? img : image_alloc(len, socket, &malloced);

	if (r == NULL || copy == NULL) {
		rte_free(r);
		if (!adopt && copy != NULL)
			image_free(copy, malloced);
		return NULL;
	}
	if (!adopt)
		memcpy(copy, img, len);
	r->image = copy;
	r->image_len = len;
	r->image_malloced = malloced;
	size_t il = strnlen(cfg->identity, 255), vl = cfg->version != NULL ? strnlen(cfg->version, 255) : 0;
	memcpy(r->identity, cfg->identity, il);
	if (vl > 0)
		memcpy(r->version, cfg->version, vl);
	r->conf.identity = r->identity;
	r->conf.identity_len = (uint8_t)il;
	r->conf.version = r->version;
	r->conf.version_len = (uint8_t)vl;
	r->conf.edns_max_payload = payload;
	r->conf.steer = &dp->steer;
	/* The fast path's negative answers, one template per zone (dataplane/fastpath.h). */
	size_t nz = p53_fast_neg_count(copy);
	if (nz > 0) {
		struct p53_fast_neg *neg = rte_malloc_socket("p53_fast_neg", nz * sizeof(*neg),
							     RTE_CACHE_LINE_SIZE, socket);
		if (neg == NULL) {
			if (!adopt)
				image_free(copy, malloced);
			rte_free(r);
			return NULL;
		}
		p53_fast_neg_build(copy, neg);
		r->conf.neg = neg;
		r->conf.n_neg = (uint32_t)nz;
	}
	/* Its referrals, one template per delegation up to P53_FAST_REF_MAX. After a patch (prev
	 * set, as for the sums below), only the running image's cuts and the nodes appended are
	 * looked at, and the delegations whose cut, NS records and glue it kept keep their
	 * templates. */
	const void *pref = prev != NULL ? prev->conf.ref : NULL;
	size_t rz = pref != NULL ? p53_fast_ref_size_from(copy, prev->image, pref) : p53_fast_ref_size(copy);
	if (rz > 0) {
		void *ref = rte_malloc_socket("p53_fast_ref", rz, RTE_CACHE_LINE_SIZE, socket);
		if (ref == NULL) {
			rte_free((void *)(uintptr_t)r->conf.neg);
			if (!adopt)
				image_free(copy, malloced);
			rte_free(r);
			return NULL;
		}
		if (pref != NULL)
			p53_fast_ref_build_from(copy, ref, rz, prev->image, pref);
		else
			p53_fast_ref_build(copy, ref, rz);
		r->conf.ref = ref;
	}
	/* And the checksum sums of its RRsets' records, one per RRset (8 bytes each); none for a
	 * big image, where reading one is a cache miss (replica.h P53_PREFETCH_MIN_IMAGE). */
	size_t ns = len <= P53_PREFETCH_MIN_IMAGE ? p53_fast_sum_count(copy) : 0;
	if (ns > 0) {
		uint64_t *sums = rte_malloc_socket("p53_fast_sums", ns * sizeof(*sums),
						   RTE_CACHE_LINE_SIZE, socket);
		if (sums == NULL) {
			rte_free((void *)(uintptr_t)r->conf.ref);
			rte_free((void *)(uintptr_t)r->conf.neg);
			if (!adopt)
				rte_free(copy);
			rte_free(r);
			return NULL;
		}
		/* After a patch (prev set: its image is the one patched, and a prefix of this
		 * one), the RRsets it kept keep their sums. */
		if (prev != NULL && prev->conf.sums != NULL && prev->conf.edns_max_payload == payload &&
		    prev->conf.n_sums == p53_fast_sum_count(prev->image))
			p53_fast_sum_build_from(copy, payload, sums, prev->image, prev->conf.sums);
		else
			p53_fast_sum_build(copy, payload, sums);
		r->conf.sums = sums;
		r->conf.n_sums = (uint32_t)ns;
	}
	for (int i = 0; i < cfg->n_addrs && i < P53_PKT_MAX_ADDRS; i++) {
		const struct p53_addr *a = &cfg->addrs[i];
		if (a->family == AF_INET)
			memcpy(&r->addrs.v4[r->addrs.n4++], a->bytes, 4);
		else
			memcpy(r->addrs.v6[r->addrs.n6++], a->bytes, 16);
	}
	return r;
}

static void replica_free(struct p53_replica *r)
{
	if (r == NULL)
		return;
	image_free(r->image, r->image_malloced);
	rte_free((void *)(uintptr_t)r->conf.neg);
	rte_free((void *)(uintptr_t)r->conf.ref);
	rte_free((void *)(uintptr_t)r->conf.sums);
	rte_free(r);
}

/* The NUMA socket the compiled image's pages are on: the control thread's, which wrote them
 * (first touch). -1 when unknown on a multi-socket host: then no replica adopts it. */
static int image_socket(void)
{
	unsigned int cpu, node;

	if (rte_socket_count() <= 1)
		return (int)rte_socket_id_by_idx(0);
	if (getcpu(&cpu, &node) != 0)
		return -1;
	return (int)node;
}

/*
 * Whether the first worker may answer from the compiled image itself. A big image is read at
 * random, so its page size matters (docs/BENCHMARKS.md, "Big zone: page size and prefetch
 * schedule"). The compiler asks for transparent huge pages (image_build.c); when
 * it did not get them (THP "never", or no 2 MiB page free) and the DPDK heap is hugepage
 * memory, a copy in the heap is the better replica, at the price of one more image during
 * the publish. Says so once per process.
 */
static int adoptable(const void *img, size_t len)
{
	static int warned_copy, warned_small;
	struct p53_bigmem_backing b;

	if (len < P53_BIGMEM_MIN || p53_bigmem_backing(img, len, &b) != 0 || b.huge >= len / 4 * 3)
		return 1;
	if (rte_eal_has_hugepages()) {
		if (!warned_copy)
			p53_warn("publish: the compiled image (%zu MiB) has %zu MiB in huge pages "
				 "(transparent huge pages off or short): every worker gets a copy in "
				 "the DPDK heap's hugepages instead", len >> 20, b.huge >> 20);
		warned_copy = 1;
		return 0;
	}
	if (!warned_small)
		p53_warn("publish: the image (%zu MiB) has %zu MiB in huge pages and the DPDK heap has "
			 "none (--no-huge): big-zone lookups pay TLB misses (docs/OPERATIONS.md, "
			 "\"Reloading without losing a query\")", len >> 20, b.huge >> 20);
	warned_small = 1;
	return 1;
}

/*
 * Whether the image starts on a P53_IMAGE_ALIGN boundary, as the compiler's and the IXFR
 * patcher's do (control/bigmem.h): else no worker answers from it (each gets an aligned copy),
 * since half of its nodes would cross a cache line. Says so once per process: a bug.
 */
static int image_aligned(const void *img)
{
	static int warned;

	if (((uintptr_t)img & (P53_IMAGE_ALIGN - 1)) == 0)
		return 1;
	if (!warned)
		p53_warn("publish: the image at %p is not %u-byte aligned: every worker gets a copy "
			 "(a bug: images come from p53_bigmem_image(), control/bigmem.h)", img,
			 (unsigned int)P53_IMAGE_ALIGN);
	warned = 1;
	return 0;
}

/* Replicas are shared per socket in that mode: free each distinct one once. */
static void free_set(struct p53_replica **set, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (set[i] == NULL)
			continue;
		for (unsigned int j = i + 1; j < n; j++)
			if (set[j] == set[i])
				set[j] = NULL;
		replica_free(set[i]);
		set[i] = NULL;
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Wall-clock microseconds keep generations rising across restarts too. */
static uint64_t next_generation(struct p53_dataplane *dp)
{
	struct timespec ts;
	uint64_t g;

	clock_gettime(CLOCK_REALTIME, &ts);
	g = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	dp->generation = g > dp->generation ? g : dp->generation + 1;
	return dp->generation;
}

/* The first reader (worker or TCP thread) that has not reported a quiescent state since
 * `token`, or -1. Reads the per-thread counters rte_rcu_qsbr keeps (0 = offline, which never
 * holds anything up). */
static int laggard(const struct p53_dataplane *dp, uint64_t token)
{
	for (unsigned int i = 0; i < dp->n_workers + dp->n_readers; i++) {
		uint64_t c = __atomic_load_n(&dp->qsbr->qsbr_cnt[i].cnt, __ATOMIC_ACQUIRE);
		if (c != 0 && c < token)
			return (int)i;
	}
	return -1;
}

/* Wait, bounded, until every worker passed a quiescent state after `token`. */
static int grace(struct p53_dataplane *dp, uint64_t token, unsigned int wait_ms)
{
	uint64_t deadline = now_ms() + wait_ms;

	while (rte_rcu_qsbr_check(dp->qsbr, token, false) == 0) {
		if (now_ms() >= deadline)
			return -1;
		usleep(100);
	}
	return 0;
}

/* "worker 2 (lcore 3)" or "TCP thread 0", for qsbr thread id `id`. */
static const char *who(const struct p53_dataplane *dp, int id, char *buf, size_t len)
{
	if (id >= 0 && (unsigned int)id < dp->n_workers)
		snprintf(buf, len, "worker %d (lcore %u)", id, dp->workers[id].lcore);
	else
		snprintf(buf, len, "TCP thread %u", (unsigned int)id - dp->n_workers);
	return buf;
}

void p53_dataplane_poll(struct p53_dataplane *dp)
{
	if (dp->stuck < 0 || rte_rcu_qsbr_check(dp->qsbr, dp->limbo_token, false) == 0)
		return;
	if ((unsigned int)dp->stuck < dp->n_workers)
		p53_info("worker %d passes quiescent states again; the replicas of the failed publish "
			 "are freed", dp->stuck);
	else
		p53_info("TCP thread %u passes quiescent states again; the replicas of the failed "
			 "publish are freed", (unsigned int)dp->stuck - dp->n_workers);
	free_set(dp->limbo, dp->n_workers);
	dp->stuck = -1;
}

static void spare_collect(struct p53_dataplane *dp, bool wait);

int p53_dataplane_publish(struct p53_dataplane *dp, void *img, size_t len,
			  const struct p53_config *cfg, char *err, size_t errlen)
{
	struct p53_replica *fresh[P53_MAX_WORKERS_DP] = {0};
	struct p53_replica *old[P53_MAX_WORKERS_DP] = {0};
	unsigned int n = dp->n_workers;
	int adopted = 0;
	char w[64];

	uint64_t t0 = now_us();
	dp->us_check = dp->us_replicas = dp->us_grace = dp->us_free = 0;
	/* Workers read the image without bounds checks: every index they follow must hold. A
	 * patch of the running image is checked where it differs from it (p53_image_check_from:
	 * what it kept passed when that image was published). */
	const char *why = "";
	const void *prev = dp->patch_of_running ? dp->image : NULL;
	int from = 0;
	if (p53_image_check_from(img, len, prev, &from, &why) != 0) {
		snprintf(err, errlen, "compiled image failed its consistency check (%zu bytes): %s", len, why);
		free(img);
		return -1;
	}
	if (dp->qsbr != NULL) {
		p53_dataplane_poll(dp);
		if (dp->stuck >= 0) {
			snprintf(err, errlen, "%s is stuck: it has not passed a quiescent state since the "
				 "last publish; nothing published", who(dp, dp->stuck, w, sizeof(w)));
			free(img);
			return -1;
		}
	}
	/* A reply larger than the port carries is lost without a trace (the NIC or the kernel
	 * drops it): advertise and send no more than the port's limit (RFC 6891 §6.2.5). */
	uint16_t payload = cfg->edns_max_payload;
	if (dp->payload_limit != 0 && payload > dp->payload_limit) {
		payload = dp->payload_limit;
		if (dp->payload_warned != cfg->edns_max_payload)
			p53_warn("server.edns_max_payload %u is more than the port carries (%s): "
				 "using %u", cfg->edns_max_payload, dp->payload_why, payload);
		dp->payload_warned = cfg->edns_max_payload;
	}
	((struct p53_image_hdr *)img)->generation = next_generation(dp);
	uint64_t t1 = now_us();
	dp->us_check = t1 - t0;
	/* Build every replica before touching any worker: all or nothing. The first worker on
	 * the socket the image was written on answers from the image itself (no copy, one image
	 * less of memory during the reload and in steady state) unless it missed the huge pages
	 * a copy would have (adoptable); every other replica is a copy in the DPDK heap on its
	 * worker's socket (image_alloc). */
	int home = image_aligned(img) && ((img == dp->spare_given && img != NULL) || adoptable(img, len))
		   ? image_socket() : -2;
	dp->spare_given = NULL;
	for (unsigned int i = 0; i < n; i++) {
		int socket = (int)rte_lcore_to_socket_id(dp->workers[i].lcore);
		if (dp->mode == P53_REPLICAS_PER_SOCKET) {
			for (unsigned int j = 0; j < i; j++)
				if ((int)rte_lcore_to_socket_id(dp->workers[j].lcore) == socket)
					fresh[i] = fresh[j];
		}
		if (fresh[i] == NULL) {
			int adopt = !adopted && socket == home;
			fresh[i] = replica_new(dp, img, len, cfg, payload, socket, adopt,
					       from ? dp->workers[i].replica : NULL);
			adopted |= adopt && fresh[i] != NULL;
		}
		if (fresh[i] == NULL) {
			snprintf(err, errlen, "out of memory for the replica of worker %u (%zu bytes)", i, len);
			free_set(fresh, n); /* frees img too when a replica adopted it */
			if (!adopted)
				free(img);
			return -1;
		}
	}
	for (unsigned int i = 0; i < n; i++)
		assert(((uintptr_t)fresh[i]->image & (P53_IMAGE_ALIGN - 1)) == 0);
	for (unsigned int i = 0; i < n; i++)
		old[i] = __atomic_exchange_n(&dp->workers[i].replica, fresh[i], __ATOMIC_ACQ_REL);
	uint64_t t2 = now_us();
	dp->us_replicas = t2 - t1;
	/* Every worker that could still hold an old replica passes a quiescent state first. */
	uint64_t token = dp->qsbr != NULL ? rte_rcu_qsbr_start(dp->qsbr) : 0;
	if (dp->qsbr != NULL && grace(dp, token, P53_RCU_WAIT_MS) != 0) {
		/* A stuck worker may still read an old replica, and the others may already read a
		 * new one: put the old ones back (the reload fails as a whole) and keep the new ones
		 * until everybody has moved past this point. */
		dp->stuck = laggard(dp, token);
		if (dp->stuck < 0)
			dp->stuck = 0; /* moved just now; the next poll frees the limbo */
		for (unsigned int i = 0; i < n; i++)
			__atomic_store_n(&dp->workers[i].replica, old[i], __ATOMIC_RELEASE);
		dp->limbo_token = rte_rcu_qsbr_start(dp->qsbr);
		memcpy(dp->limbo, fresh, sizeof(fresh));
		if (!adopted) /* no reader ever saw it */
			free(img);
		snprintf(err, errlen, "%s did not pass a quiescent state within %u ms: it is stuck; "
			 "the previous data stays published", who(dp, dp->stuck, w, sizeof(w)),
			 P53_RCU_WAIT_MS);
		p53_err("publish: %s", err);
		return -1;
	}
	uint64_t t3 = now_us();
	dp->us_grace = t3 - t2;
	/* After the grace period nobody reads the old image: the one a replica adopted (malloc'd)
	 * may be kept as the next patch's spare instead of going back to the kernel. */
	spare_collect(dp, false);
	free(dp->spare);
	dp->spare = NULL;
	if (dp->keep_spare) {
		for (unsigned int i = 0; i < n && dp->spare == NULL; i++) {
			if (old[i] != NULL && old[i]->image_malloced && old[i]->image_len >= P53_SPARE_MIN) {
				dp->spare = (void *)(uintptr_t)old[i]->image;
				old[i]->image = NULL; /* image_free(NULL) frees nothing */
			}
		}
	}
	free_set(old, n);
	/* The control thread reads zone facts from worker 0's replica: it is the only thread
	 * that frees replicas, so that one stays valid until the next publish. Keeping no copy
	 * of its own saves one image of memory, steady and during reloads. */
	if (!adopted)
		free(img);
	dp->image = fresh[0]->image;
	dp->image_len = len;
	dp->swapped_us = t2;
	dp->us_free = now_us() - t3;
	return 0;
}

static void *spare_fault(void *arg)
{
	struct p53_dataplane *dp = arg;
	void *p = p53_bigmem_image(dp->spare_new_len); /* aligned as an image is (bigmem.h) */

	if (p != NULL)
		memset(p, 0, dp->spare_new_len); /* every page faulted in here, not in the patch */
	dp->spare_new = p;
	__atomic_store_n(&dp->spare_made, true, __ATOMIC_RELEASE);
	return NULL;
}

/* The made spare, once its thread is done (wait = join it in any case): becomes dp->spare
 * when there is none, else freed. */
static void spare_collect(struct p53_dataplane *dp, bool wait)
{
	if (!dp->spare_th_on || (!wait && !__atomic_load_n(&dp->spare_made, __ATOMIC_ACQUIRE)))
		return;
	pthread_join(dp->spare_th, NULL);
	dp->spare_th_on = false;
	dp->spare_made = false;
	if (dp->spare == NULL && dp->spare_new != NULL) {
		dp->spare = dp->spare_new;
		p53_info("publish: a spare image of %zu MiB made ahead for the next IXFR patch "
			 "(docs/OPERATIONS.md)", dp->spare_new_len >> 20);
	} else {
		free(dp->spare_new);
	}
	dp->spare_new = NULL;
}

void p53_dataplane_spare_prepare(struct p53_dataplane *dp, size_t len)
{
	spare_collect(dp, false);
	if (dp->spare != NULL || dp->spare_th_on || len < P53_SPARE_MIN)
		return;
	dp->spare_new_len = len;
	dp->spare_made = false;
	if (pthread_create(&dp->spare_th, NULL, spare_fault, dp) != 0)
		return;
	pthread_setname_np(dp->spare_th, "p53-spare");
	dp->spare_th_on = true;
}

void *p53_dataplane_spare_take(struct p53_dataplane *dp)
{
	spare_collect(dp, false);
	if (dp->spare_th_on)
		p53_info("publish: the spare image being made ahead is not ready: this IXFR patch "
			 "writes fresh memory");
	void *p = dp->spare;

	dp->spare = NULL;
	dp->spare_given = p;
	return p;
}

void p53_dataplane_fini(struct p53_dataplane *dp)
{
	struct p53_replica *set[P53_MAX_WORKERS_DP] = {0};

	for (unsigned int i = 0; i < dp->n_workers; i++) {
		set[i] = dp->workers[i].replica;
		dp->workers[i].replica = NULL;
	}
	free_set(set, dp->n_workers);
	free_set(dp->limbo, dp->n_workers);
	spare_collect(dp, true);
	free(dp->spare);
	dp->spare = NULL;
	rte_free(dp->qsbr);
	dp->qsbr = NULL;
	dp->image = NULL;
}

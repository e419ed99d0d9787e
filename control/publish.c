/* Replicas and their RCU swap; see dataplane.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_malloc.h>

#include "control/publish.h"
#include "control/log.h"

int p53_dataplane_init(struct p53_dataplane *dp, struct p53_worker *workers, unsigned int n,
		       enum p53_replicas mode)
{
	size_t sz = rte_rcu_qsbr_get_memsize(n);

	memset(dp, 0, sizeof(*dp));
	dp->workers = workers;
	dp->n_workers = n;
	dp->mode = mode;
	dp->qsbr = rte_zmalloc("p53_qsbr", sz, RTE_CACHE_LINE_SIZE);
	if (dp->qsbr == NULL || rte_rcu_qsbr_init(dp->qsbr, n) != 0) {
		rte_free(dp->qsbr);
		dp->qsbr = NULL;
		return -1;
	}
	for (unsigned int i = 0; i < n; i++)
		workers[i].qsbr = dp->qsbr;
	return 0;
}

static struct p53_replica *replica_new(const void *img, size_t len, const struct p53_config *cfg,
				       int socket)
{
	struct p53_replica *r = rte_zmalloc_socket("p53_replica", sizeof(*r), RTE_CACHE_LINE_SIZE, socket);
	void *copy = rte_malloc_socket("p53_image", len, RTE_CACHE_LINE_SIZE, socket);

	if (r == NULL || copy == NULL) {
		rte_free(r);
		rte_free(copy);
		return NULL;
	}
	memcpy(copy, img, len);
	r->image = copy;
	r->image_len = len;
	r->generation = p53_image_hdr(img)->generation;
	size_t il = strnlen(cfg->identity, 255), vl = cfg->version != NULL ? strnlen(cfg->version, 255) : 0;
	memcpy(r->identity, cfg->identity, il);
	if (vl > 0)
		memcpy(r->version, cfg->version, vl);
	r->conf.identity = r->identity;
	r->conf.identity_len = (uint8_t)il;
	r->conf.version = r->version;
	r->conf.version_len = (uint8_t)vl;
	r->conf.edns_max_payload = cfg->edns_max_payload;
	return r;
}

static void replica_free(struct p53_replica *r)
{
	if (r == NULL)
		return;
	rte_free((void *)(uintptr_t)r->image);
	rte_free(r);
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

int p53_dataplane_publish(struct p53_dataplane *dp, void *img, size_t len,
			  const struct p53_config *cfg, char *err, size_t errlen)
{
	struct p53_replica *fresh[P53_MAX_WORKERS_DP] = {0};
	struct p53_replica *old[P53_MAX_WORKERS_DP] = {0};
	unsigned int n = dp->n_workers;

	/* Workers read the image without bounds checks: its sections must lie inside it. */
	if (p53_image_check(img, len) != 0) {
		snprintf(err, errlen, "compiled image failed its consistency check (%zu bytes)", len);
		return -1;
	}
	/* Build every replica before touching any worker: all or nothing. */
	for (unsigned int i = 0; i < n; i++) {
		int socket = (int)rte_lcore_to_socket_id(dp->workers[i].lcore);
		if (dp->mode == P53_REPLICAS_PER_SOCKET) {
			for (unsigned int j = 0; j < i; j++)
				if ((int)rte_lcore_to_socket_id(dp->workers[j].lcore) == socket)
					fresh[i] = fresh[j];
		}
		if (fresh[i] == NULL)
			fresh[i] = replica_new(img, len, cfg, socket);
		if (fresh[i] == NULL) {
			snprintf(err, errlen, "out of memory for the replica of worker %u (%zu bytes)", i, len);
			free_set(fresh, n);
			return -1;
		}
	}
	for (unsigned int i = 0; i < n; i++)
		old[i] = __atomic_exchange_n(&dp->workers[i].replica, fresh[i], __ATOMIC_ACQ_REL);
	/* Every worker that could still hold an old replica passes a quiescent state first. */
	if (dp->qsbr != NULL)
		rte_rcu_qsbr_synchronize(dp->qsbr, RTE_QSBR_THRID_INVALID);
	free_set(old, n);
	/* The control thread reads zone facts from worker 0's replica: it is the only thread
	 * that frees replicas, so that one stays valid until the next publish. Keeping no copy
	 * of its own saves one image of memory, steady and during reloads. */
	free(img);
	dp->image = fresh[0]->image;
	dp->image_len = len;
	return 0;
}

void p53_dataplane_fini(struct p53_dataplane *dp)
{
	struct p53_replica *set[P53_MAX_WORKERS_DP] = {0};

	for (unsigned int i = 0; i < dp->n_workers; i++) {
		set[i] = dp->workers[i].replica;
		dp->workers[i].replica = NULL;
	}
	free_set(set, dp->n_workers);
	rte_free(dp->qsbr);
	dp->qsbr = NULL;
	dp->image = NULL;
}

/* Connection admission for the TCP server; see limits.h. */
#include <stdlib.h>
#include <string.h>

#include "control/tcp/limits.h"

int p53_tcp_limits_init(struct p53_tcp_limits *l, unsigned int max_total,
			unsigned int max_per_client)
{
	uint32_t n = 16;

	memset(l, 0, sizeof(*l));
	while (n < 2u * max_total)
		n <<= 1;
	l->slots = calloc(n, sizeof(*l->slots));
	if (l->slots == NULL)
		return -1;
	l->mask = n - 1;
	l->max_total = max_total;
	l->max_per_client = max_per_client;
	pthread_mutex_init(&l->lock, NULL);
	return 0;
}

void p53_tcp_limits_fini(struct p53_tcp_limits *l)
{
	if (l->slots == NULL)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l->slots);
	l->slots = NULL;
}

/* FNV-1a over the family and the 16 address bytes (unused IPv4 bytes are zero). */
static uint32_t home(const struct p53_tcp_limits *l, uint8_t family, const uint8_t *addr)
{
	uint32_t h = 2166136261u ^ family;

	h *= 16777619u;
	for (int i = 0; i < 16; i++) {
		h ^= addr[i];
		h *= 16777619u;
	}
	return h & l->mask;
}

/* The slot holding `a`, or the empty slot where it would go. */
static uint32_t find(const struct p53_tcp_limits *l, const struct p53_addr *a)
{
	uint32_t i = home(l, a->family, a->bytes);

	while (l->slots[i].family != 0 &&
	       (l->slots[i].family != a->family || memcmp(l->slots[i].addr, a->bytes, 16) != 0))
		i = (i + 1) & l->mask;
	return i;
}

int p53_tcp_limits_take(struct p53_tcp_limits *l, const struct p53_addr *a,
			enum p53_tcp_refuse *why)
{
	int rc = -1;

	pthread_mutex_lock(&l->lock);
	uint32_t i = find(l, a);
	if (l->total >= l->max_total) {
		*why = P53_TCP_REFUSE_MAX_CONNECTIONS;
	} else if (l->slots[i].family != 0 && l->slots[i].open >= l->max_per_client) {
		*why = P53_TCP_REFUSE_PER_CLIENT;
	} else {
		/* total < max_total <= slots / 2: an empty slot always exists. */
		if (l->slots[i].family == 0) {
			l->slots[i].family = a->family;
			memcpy(l->slots[i].addr, a->bytes, 16);
		}
		l->slots[i].open++;
		l->total++;
		rc = 0;
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/*
 * Empty slot i and shift back the entries after it that probed past it (Knuth's algorithm R
 * for linear probing), so lookups never need tombstones.
 */
static void remove_at(struct p53_tcp_limits *l, uint32_t i)
{
	uint32_t j = i;

	for (;;) {
		j = (j + 1) & l->mask;
		if (l->slots[j].family == 0)
			break;
		uint32_t k = home(l, l->slots[j].family, l->slots[j].addr);
		/* Entry j may move to i only if its home is not cyclically in (i, j]. */
		int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (stays)
			continue;
		l->slots[i] = l->slots[j];
		i = j;
	}
	memset(&l->slots[i], 0, sizeof(l->slots[i]));
}

void p53_tcp_limits_put(struct p53_tcp_limits *l, const struct p53_addr *a)
{
	pthread_mutex_lock(&l->lock);
	uint32_t i = find(l, a);
	if (l->slots[i].family != 0) {
		l->total--;
		if (--l->slots[i].open == 0)
			remove_at(l, i);
	}
	pthread_mutex_unlock(&l->lock);
}

unsigned int p53_tcp_limits_open(struct p53_tcp_limits *l, const struct p53_addr *a)
{
	pthread_mutex_lock(&l->lock);
	uint32_t i = find(l, a);
	unsigned int n = l->slots[i].family != 0 ? l->slots[i].open : 0;
	pthread_mutex_unlock(&l->lock);
	return n;
}

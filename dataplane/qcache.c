/*
 * The answer cache's set-up; the lookups and stores are in fastpath.c (qcache.h).
 */
#include <errno.h>
#include <string.h>

#include "dataplane/qcache.h"

int p53_qcache_init(struct p53_qcache *c, uint32_t entries)
{
	if (entries == 0 || entries > P53_QCACHE_MAX_ENTRIES || (entries & (entries - 1)) != 0)
		return -EINVAL;
	memset(c, 0, p53_qcache_size(entries));
	c->mask = entries - 1;
	c->klim = P53_QCACHE_KEY;
	c->pick = (struct p53_qcache_pick *)(c->e + entries);
	return 0;
}

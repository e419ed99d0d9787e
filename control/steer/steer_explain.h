/*
 * `pop53ctl explain`: the decision path of a steered record for one client, computed from the
 * published steering table (the one the workers read). Control thread only.
 */
#ifndef P53_STEER_EXPLAIN_H
#define P53_STEER_EXPLAIN_H

#include <stddef.h>

#include <jansson.h>

#include "control/steer/steer_pub.h"

/**
 * Explain NAME TYPE for a client: the address used (the ECS prefix when its length is above
 * 0, else `client`), per policy step the block matched, its location data and the decision,
 * the targets' health, and the answer (addresses, TTL, ECS scope) exactly as a worker
 * would send it.
 * @param client  the packet's source address, or NULL
 * @param ecs     "ADDRESS/LENGTH" as the query's ECS option, or NULL
 * @return a JSON object, or NULL with err set.
 */
json_t *p53_steer_explain(const struct p53_steer_pub *p, const char *name, const char *type,
			  const char *client, const char *ecs, char *err, size_t errlen);

#endif /* P53_STEER_EXPLAIN_H */

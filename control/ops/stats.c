/* Counter aggregation; see stats.h. */
#include <stdio.h>
#include <string.h>

#include "control/ops/stats.h"

static struct p53_totals baseline;

const char *const p53_kind_names[P53_ANS__MAX] = {
	[P53_ANS_DROP] = "dropped", [P53_ANS_ANSWER] = "answer", [P53_ANS_NODATA] = "nodata",
	[P53_ANS_NXDOMAIN] = "nxdomain", [P53_ANS_REFERRAL] = "referral",
	[P53_ANS_REFUSED] = "refused", [P53_ANS_ERROR] = "error", [P53_ANS_CHAOS] = "chaos",
	[P53_ANS_NOTIFY] = "notify",
};

static void add(uint64_t *dst, const uint64_t *src, size_t n, int sign)
{
	for (size_t i = 0; i < n; i++)
		dst[i] += sign > 0 ? src[i] : -src[i];
}

/* The totals are plain arrays of uint64_t; adding them field by field keeps the two in step. */
#define N64(x) (sizeof(x) / sizeof(uint64_t))

static void sum(const struct p53_worker *workers, unsigned int n, struct p53_totals *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < n; i++) {
		const struct p53_worker_stats *s = &workers[i].stats;
		out->rx += s->rx;
		out->tx += s->tx;
		out->tx_fail += s->tx_fail;
		out->answered += s->answered;
		out->no_answer += s->no_answer;
		out->multiseg += s->multiseg;
		out->notify += s->notify;
		out->notify_lost += s->notify_lost;
		add(out->drop, s->drop, P53_PKT_DROP__MAX, 1);
		add((uint64_t *)&out->ans, (const uint64_t *)&s->ans, N64(s->ans), 1);
	}
}

_Static_assert(sizeof(struct p53_totals) % sizeof(uint64_t) == 0, "totals are uint64_t only");

void p53_stats_collect(const struct p53_worker *workers, unsigned int n, struct p53_totals *out)
{
	sum(workers, n, out);
	add((uint64_t *)out, (const uint64_t *)&baseline, N64(baseline), -1);
}

void p53_stats_reset(const struct p53_worker *workers, unsigned int n)
{
	sum(workers, n, &baseline);
}

const char *p53_rcode_name(unsigned int rcode, char *buf, size_t len)
{
	static const char *const names[] = {
		"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN",
		"YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE",
	};

	if (rcode < sizeof(names) / sizeof(names[0]))
		return names[rcode];
	if (rcode == 16)
		return "BADVERS";
	snprintf(buf, len, "RCODE%u", rcode);
	return buf;
}

const char *p53_qtype_name(unsigned int bucket)
{
	static const char *const names[P53_QTYPE_BUCKETS] = {
		[1] = "A", [2] = "NS", [5] = "CNAME", [6] = "SOA", [12] = "PTR", [15] = "MX",
		[16] = "TXT", [28] = "AAAA", [33] = "SRV", [35] = "NAPTR", [39] = "DNAME",
		[43] = "DS", [46] = "RRSIG", [47] = "NSEC", [48] = "DNSKEY", [50] = "NSEC3",
		[52] = "TLSA", [P53_QTYPE_BUCKETS - 1] = "other",
	};

	return bucket < P53_QTYPE_BUCKETS ? names[bucket] : NULL;
}

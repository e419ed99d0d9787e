/* The canary through every worker; see canary.h. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <ldns/ldns.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include "control/health/canary.h"
#include "control/health/conf.h"
#include "control/dnssec/verify.h"
#include "dataplane/image.h"

#define SRC_PORT_BASE 40000     /* UDP source port of worker i's queries: BASE + i */
#define EDNS_PAYLOAD 1232

/* Documentation addresses (RFC 5737, RFC 3849) and a locally administered unicast MAC:
 * nothing real ever sends from them, and pkt.c accepts them as it would a client. */
static const uint8_t src_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x53, 0xca };
static const uint8_t src_v4[4] = { 198, 51, 100, 53 };
static const uint8_t src_v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x53 };

int p53_canary_attach(struct p53_canary *c, struct p53_worker *workers, unsigned int n,
		      struct rte_mempool *const *pools, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->seq = (uint16_t)rte_rdtsc();
	for (unsigned int i = 0; i < n && i < P53_CANARY_MAX_WORKERS; i++) {
		struct p53_canary_worker *cw = &c->w[i];
		struct p53_worker *w = &workers[i];
		char name[RTE_RING_NAMESIZE];
		int socket = (int)rte_lcore_to_socket_id(w->lcore);

		c->n = i + 1;
		cw->pool = pools[i];
		snprintf(name, sizeof(name), "p53_canq_%u", i);
		cw->in = rte_ring_create(name, P53_CANARY_RING, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "p53_canr_%u", i);
		cw->out = rte_ring_create(name, P53_CANARY_RING, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		cw->twin = rte_zmalloc_socket("p53_canary_twin", sizeof(*cw->twin), RTE_CACHE_LINE_SIZE, socket);
		if (cw->in == NULL || cw->out == NULL || cw->twin == NULL) {
			snprintf(err, errlen, "canary: out of memory for worker %u's rings", i);
			p53_canary_fini(c);
			return -1;
		}
		cw->twin->index = w->index;
		cw->twin->lcore = w->lcore;
		cw->twin->tx_offload = w->tx_offload;
		w->canary_in = cw->in;
		w->canary_out = cw->out;
		w->canary = cw->twin;
	}
	return 0;
}

int p53_canary_configure(struct p53_canary *c, const struct p53_config *cfg, char *err,
			 size_t errlen)
{
	const struct p53_canary_conf *cc = &p53_health_conf_of(&cfg->health)->canary;
	const char *name = cc->name != NULL ? cc->name : cfg->zones[0].name;
	ldns_rdf *qname = NULL;
	ldns_rr_list *expect = NULL;
	char *tname = NULL;
	int want = cc->family == 1 ? AF_INET : cc->family == 2 ? AF_INET6 : 0;
	int found = 0;

	for (int i = 0; i < cfg->n_addrs && !found; i++) {
		if (want != 0 && cfg->addrs[i].family != want)
			continue;
		c->family = cfg->addrs[i].family;
		memcpy(c->dst, cfg->addrs[i].bytes, 16);
		found = 1;
	}
	if (!found) {
		snprintf(err, errlen, "health.canary.family: no %s service address", want == AF_INET ? "IPv4" : "IPv6");
		return -1;
	}
	if (ldns_str2rdf_dname(&qname, name) != LDNS_STATUS_OK || ldns_rdf_size(qname) > sizeof(c->qname)) {
		snprintf(err, errlen, "health.canary.name: '%s' is not a domain name", name);
		ldns_rdf_deep_free(qname);
		return -1;
	}
	ldns_dname2canonical(qname);
	c->qname_len = (int)ldns_rdf_size(qname);
	memcpy(c->qname, ldns_rdf_data(qname), ldns_rdf_size(qname));
	snprintf(c->qname_str, sizeof(c->qname_str), "%s%s", name,
		 name[strlen(name) - 1] == '.' ? "" : ".");
	c->qtype = cc->qtype;
	c->rcode = cc->rcode;
	c->dnssec = cc->dnssec;
	tname = ldns_rr_type2str((ldns_rr_type)c->qtype);
	if (cc->n_expect > 0) {
		expect = ldns_rr_list_new();
		for (int i = 0; i < cc->n_expect; i++) {
			char line[1400];
			ldns_rr *rr = NULL;
			snprintf(line, sizeof(line), "%s 0 IN %s %s", c->qname_str, tname, cc->expect[i]);
			if (ldns_rr_new_frm_str(&rr, line, 0, NULL, NULL) != LDNS_STATUS_OK) {
				snprintf(err, errlen, "health.canary.expect[%d]: not RDATA of %s", i, tname);
				ldns_rr_list_deep_free(expect);
				free(tname);
				ldns_rdf_deep_free(qname);
				return -1;
			}
			ldns_rr2canonical(rr);
			ldns_rr_list_push_rr(expect, rr);
		}
		ldns_rr_list_sort(expect);
	}
	free(tname);
	ldns_rdf_deep_free(qname);
	ldns_rr_list_deep_free(c->expect);
	c->expect = expect;
	return 0;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Ethernet, IPv4 or IPv6, UDP to port 53 of the service address, one question and an OPT. */
static int build(const struct p53_canary *c, struct rte_mbuf *m, unsigned int worker, uint16_t id)
{
	bool v6 = c->family == AF_INET6;
	uint16_t l3 = RTE_ETHER_HDR_LEN, l4 = (uint16_t)(l3 + (v6 ? 40 : 20)), dns = (uint16_t)(l4 + 8);
	uint16_t dlen = (uint16_t)(12 + c->qname_len + 4 + 11);
	uint8_t *f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(dns + dlen));
	uint8_t *d = f + dns;

	if (f == NULL)
		return -1;
	memset(f, 0, (size_t)dns + dlen);
	memcpy(f + 6, src_mac, 6);
	put16(f + 12, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	put16(d, id);
	put16(d + 4, 1);                /* QDCOUNT; RD=0 as a resolver asks an authority */
	put16(d + 10, 1);               /* ARCOUNT: the OPT */
	memcpy(d + 12, c->qname, (size_t)c->qname_len);
	uint8_t *q = d + 12 + c->qname_len;
	put16(q, c->qtype);
	put16(q + 2, LDNS_RR_CLASS_IN);
	put16(q + 5, LDNS_RR_TYPE_OPT); /* q[4] = 0: the root owner (RFC 6891 §6.1.2) */
	put16(q + 7, EDNS_PAYLOAD);
	if (c->dnssec)
		q[11] = 0x80;           /* DO (RFC 3225): the answer's RRSIGs, to validate */

	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(f + l4);
	udp->src_port = rte_cpu_to_be_16((uint16_t)(SRC_PORT_BASE + worker));
	udp->dst_port = rte_cpu_to_be_16(53);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(8 + dlen));
	if (!v6) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + l3);
		ip->version_ihl = 0x45;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + 8 + dlen));
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_UDP;
		memcpy(&ip->src_addr, src_v4, 4);
		memcpy(&ip->dst_addr, c->dst, 4);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	} else {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(f + l3);
		ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
		ip->payload_len = rte_cpu_to_be_16((uint16_t)(8 + dlen));
		ip->proto = IPPROTO_UDP;
		ip->hop_limits = 64;
		memcpy(ip->src_addr, src_v6, 16);
		memcpy(ip->dst_addr, c->dst, 16);
		udp->dgram_cksum = rte_ipv6_udptcp_cksum(ip, udp);
	}
	return 0;
}

void p53_canary_send(struct p53_canary *c, uint64_t timeout_ms)
{
	uint64_t now = rte_rdtsc();

	c->seq++;
	c->open = true;
	c->rounds++;
	c->sent_tsc = now;
	c->deadline_tsc = now + timeout_ms * rte_get_tsc_hz() / 1000;
	for (unsigned int i = 0; i < c->n; i++) {
		struct p53_canary_worker *cw = &c->w[i];
		struct rte_mbuf *m = rte_pktmbuf_alloc(cw->pool);

		cw->id = (uint16_t)(c->seq ^ (i << 8));
		cw->waiting = false;
		cw->failed = true;
		if (m == NULL) {
			c->alloc_fail++;
			snprintf(cw->err, sizeof(cw->err), "worker %u: no mbuf for the canary (pool empty)", i);
			continue;
		}
		if (build(c, m, i, cw->id) != 0) {
			rte_pktmbuf_free(m);
			snprintf(cw->err, sizeof(cw->err), "worker %u: mbuf too small for the canary", i);
			continue;
		}
		if (rte_ring_sp_enqueue(cw->in, m) != 0) {
			/* The worker has not taken the last P53_CANARY_RING queries: it is not polling. */
			rte_pktmbuf_free(m);
			c->ring_full++;
			snprintf(cw->err, sizeof(cw->err), "worker %u: canary ring full (the worker does not poll)", i);
			continue;
		}
		c->sent++;
		cw->waiting = true;
		cw->failed = false;
		cw->err[0] = '\0';
	}
}

/* The answer's RRset of the question's name and type, owned, TTLs zeroed, canonical, sorted. */
static ldns_rr_list *answer_rrset(const ldns_pkt *pkt, const struct p53_canary *c)
{
	ldns_rr_list *an = ldns_pkt_answer(pkt), *got = ldns_rr_list_new();
	ldns_rdf *qname = NULL;

	ldns_str2rdf_dname(&qname, c->qname_str);
	for (size_t i = 0; i < ldns_rr_list_rr_count(an); i++) {
		ldns_rr *rr = ldns_rr_list_rr(an, i);
		if (ldns_rr_get_type(rr) != c->qtype || ldns_dname_compare(ldns_rr_owner(rr), qname) != 0)
			continue;
		ldns_rr *cp = ldns_rr_clone(rr);
		ldns_rr_set_ttl(cp, 0);
		ldns_rr2canonical(cp);
		ldns_rr_list_push_rr(got, cp);
	}
	ldns_rdf_deep_free(qname);
	ldns_rr_list_sort(got);
	return got;
}

/* RDATA of a list, for the error: "[a, b]" cut to fit. */
static void rdata_text(const ldns_rr_list *l, char *buf, size_t len)
{
	size_t o = 0;

	o += (size_t)snprintf(buf, len, "[");
	for (size_t i = 0; l != NULL && i < ldns_rr_list_rr_count(l) && o < len; i++) {
		ldns_rr *rr = ldns_rr_list_rr(l, i);
		for (size_t k = 0; k < ldns_rr_rd_count(rr) && o < len; k++) {
			char *s = ldns_rdf2str(ldns_rr_rdf(rr, k));
			o += (size_t)snprintf(buf + o, len - o, "%s%s", i == 0 && k == 0 ? "" : k == 0 ? ", " : " ",
					      s != NULL ? s : "?");
			free(s);
		}
	}
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

/*
 * health.canary.dnssec: the response's RRsets validate with the DNSKEY RRset of the zone the
 * name is in, as the served image holds it (never a key from the response). The answer
 * section, or for an empty one (NODATA, NXDOMAIN) the authority section but its NS (a
 * referral's NS is not signed). 0, or -1 with cw->err set.
 */
static int validate(const struct p53_canary *c, struct p53_canary_worker *cw, unsigned int i,
		    const ldns_pkt *pkt, const void *img)
{
	const ldns_rr_list *sec = ldns_pkt_answer(pkt);
	uint16_t skip = 0;
	char why[200];

	if (img == NULL) {
		snprintf(cw->err, sizeof(cw->err), "worker %u: dnssec: no zone image to take the DNSKEY from", i);
		return -1;
	}
	uint32_t zone = p53_dnssec_zone_of(img, c->qname, (size_t)c->qname_len);
	ldns_rr_list *keys = zone != P53_NONE ? p53_dnssec_image_keys(img, zone) : NULL;
	if (keys == NULL) {
		snprintf(cw->err, sizeof(cw->err), "worker %u: dnssec: the zone of %.100s has no DNSKEY "
			 "(unsigned), nothing to validate with", i, c->qname_str);
		return -1;
	}
	if (ldns_rr_list_rr_count(sec) == 0) {
		sec = ldns_pkt_authority(pkt);
		skip = LDNS_RR_TYPE_NS;
	}
	int n = p53_dnssec_verify_section(sec, keys, time(NULL), skip, why, sizeof(why));
	ldns_rr_list_deep_free(keys);
	if (n > 0)
		return 0;
	if (n == 0)
		snprintf(cw->err, sizeof(cw->err), "worker %u: dnssec: no signed RRset in the response", i);
	else
		snprintf(cw->err, sizeof(cw->err), "worker %u: dnssec: %.170s", i, why);
	return -1;
}

/* Check one response; 0 = as expected, else cw->err says why. */
static int judge(struct p53_canary *c, struct p53_canary_worker *cw, unsigned int i,
		 const uint8_t *dnsmsg, size_t len, const void *img)
{
	ldns_pkt *pkt = NULL;
	char got[96], want[96];
	int rc = -1;

	if (ldns_wire2pkt(&pkt, dnsmsg, len) != LDNS_STATUS_OK) {
		snprintf(cw->err, sizeof(cw->err), "worker %u: malformed response (%zu bytes)", i, len);
		return -1;
	}
	unsigned int rcode = ldns_pkt_get_rcode(pkt);
	if (ldns_pkt_tc(pkt)) {
		snprintf(cw->err, sizeof(cw->err), "worker %u: truncated response (TC=1)", i);
		goto out;
	}
	if ((int)rcode != c->rcode) {
		char *a = ldns_pkt_rcode2str(rcode), *b = ldns_pkt_rcode2str((ldns_pkt_rcode)c->rcode);
		snprintf(cw->err, sizeof(cw->err), "worker %u: %.100s %s: %s, expected %s", i, c->qname_str,
			 ldns_rr_descript(c->qtype) != NULL ? ldns_rr_descript(c->qtype)->_name : "?",
			 a != NULL ? a : "?", b != NULL ? b : "?");
		free(a);
		free(b);
		goto out;
	}
	if (c->expect != NULL) {
		ldns_rr_list *rrs = answer_rrset(pkt, c);
		int same = ldns_rr_list_compare(rrs, c->expect) == 0;
		if (!same) {
			rdata_text(rrs, got, sizeof(got));
			rdata_text(c->expect, want, sizeof(want));
			snprintf(cw->err, sizeof(cw->err), "worker %u: answer %.60s, expected %.60s", i, got, want);
		}
		ldns_rr_list_deep_free(rrs);
		if (!same)
			goto out;
	}
	if (c->dnssec && validate(c, cw, i, pkt, img) != 0)
		goto out;
	rc = 0;
out:
	ldns_pkt_free(pkt);
	return rc;
}

/* Where the DNS message of a response to our frame starts; 0 when it is not one. */
static uint16_t dns_offset(const struct p53_canary *c, const struct rte_mbuf *m, unsigned int worker,
			   uint16_t *id)
{
	bool v6 = c->family == AF_INET6;
	uint16_t l4 = (uint16_t)(RTE_ETHER_HDR_LEN + (v6 ? 40 : 20)), dns = (uint16_t)(l4 + 8);
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);

	if (m->nb_segs != 1 || rte_pktmbuf_data_len(m) < dns + 12)
		return 0;
	const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)(f + l4);
	if (rte_be_to_cpu_16(udp->src_port) != 53 ||
	    rte_be_to_cpu_16(udp->dst_port) != SRC_PORT_BASE + worker)
		return 0;
	*id = (uint16_t)(f[dns] << 8 | f[dns + 1]);
	return dns;
}

int p53_canary_collect(struct p53_canary *c, const void *img, char *err, size_t errlen)
{
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
	int waiting = 0;

	for (unsigned int i = 0; i < c->n; i++) {
		struct p53_canary_worker *cw = &c->w[i];
		struct rte_mbuf *m;

		while (rte_ring_sc_dequeue(cw->out, (void **)&m) == 0) {
			uint16_t id = 0, off = dns_offset(c, m, i, &id);
			if (!c->open || !cw->waiting || off == 0 || id != cw->id) {
				c->late++; /* an earlier round's answer, after its timeout */
			} else {
				cw->waiting = false;
				cw->last_ms = (double)(now - c->sent_tsc) * 1000.0 / (double)hz;
				c->answered++;
				cw->failed = judge(c, cw, i, rte_pktmbuf_mtod_offset(m, const uint8_t *, off),
						   rte_pktmbuf_data_len(m) - off, img) != 0;
			}
			rte_pktmbuf_free(m);
		}
		waiting += cw->waiting;
	}
	if (!c->open)
		return -1;
	if (waiting > 0 && now < c->deadline_tsc)
		return -1;
	c->open = false;
	int bad = 0;
	err[0] = '\0';
	for (unsigned int i = 0; i < c->n; i++) {
		struct p53_canary_worker *cw = &c->w[i];
		if (cw->waiting) {
			cw->waiting = false;
			cw->failed = true;
			snprintf(cw->err, sizeof(cw->err), "worker %u: no answer within %.0f ms", i,
				 (double)(c->deadline_tsc - c->sent_tsc) * 1000.0 / (double)hz);
		}
		if (cw->failed && bad++ == 0)
			snprintf(err, errlen, "%s", cw->err);
	}
	if (bad > 1) {
		size_t l = strlen(err);
		snprintf(err + l, errlen - l, " (and %d more worker(s))", bad - 1);
	}
	if (bad > 0)
		c->failed_rounds++;
	return bad == 0;
}

void p53_canary_fini(struct p53_canary *c)
{
	struct rte_mbuf *m;

	for (unsigned int i = 0; i < c->n; i++) {
		struct p53_canary_worker *cw = &c->w[i];
		while (cw->in != NULL && rte_ring_sc_dequeue(cw->in, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		while (cw->out != NULL && rte_ring_sc_dequeue(cw->out, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(cw->in);
		rte_ring_free(cw->out);
		rte_free(cw->twin);
		cw->in = cw->out = NULL;
		cw->twin = NULL;
	}
	ldns_rr_list_deep_free(c->expect);
	c->expect = NULL;
	c->n = 0;
}

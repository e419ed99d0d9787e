/* Validating a response against the served zone's keys; see verify.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/dnssec/verify.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

uint32_t p53_dnssec_zone_of(const void *img, const uint8_t *name, size_t len)
{
	/* The longest suffix that is a node: the deepest zone holding it (image.h, name index). */
	for (size_t off = 0; off < len && name[off] != 0; off += 1u + name[off]) {
		uint32_t n = p53_image_find(img, name + off, len - off, p53_name_hash(name + off, len - off));
		if (n != P53_NONE)
			return p53_image_node(img, n)->zone;
	}
	uint32_t root = p53_image_find(img, (const uint8_t *)"", 1, p53_name_hash((const uint8_t *)"", 1));
	return root != P53_NONE ? p53_image_node(img, root)->zone : P53_NONE;
}

ldns_rr_list *p53_dnssec_image_keys(const void *img, uint32_t zone)
{
	const struct p53_image_zone *z = p53_image_zone(img, zone);
	const struct p53_image_node *apex = p53_image_znode(img, z, z->apex);
	uint32_t ri = p53_image_node_rrset(img, apex, LDNS_RR_TYPE_DNSKEY);

	if (ri == P53_NONE)
		return NULL;
	const struct p53_image_rrset *rs = p53_image_zrrset(img, z, ri);
	const uint8_t *owner = p53_image_node_name(img, apex);
	const uint8_t *p = p53_image_rdata(img, rs);
	const uint8_t *end = p + rs->rdata_len;
	ldns_rr_list *keys = ldns_rr_list_new();
	uint8_t wire[255 + 10 + 65535];

	/* Each record: C0 0C (the owner), TYPE CLASS TTL RDLENGTH RDATA; put the owner back. */
	for (uint16_t i = 0; i < rs->count; i++) {
		ldns_rr *rr = NULL;
		size_t pos = 0;
		if (end - p < 12)
			goto bad;
		size_t rlen = 10u + (size_t)(p[10] << 8 | p[11]);
		if ((size_t)(end - p) < 2 + rlen)
			goto bad;
		memcpy(wire, owner, apex->name_len);
		memcpy(wire + apex->name_len, p + 2, rlen);
		if (ldns_wire2rr(&rr, wire, apex->name_len + rlen, &pos, LDNS_SECTION_ANSWER) != LDNS_STATUS_OK)
			goto bad;
		ldns_rr_list_push_rr(keys, rr);
		p += 2 + rlen;
	}
	return keys;
bad:
	ldns_rr_list_deep_free(keys);
	return NULL;
}

static void rrset_name(const ldns_rr *rr, char *buf, size_t cap)
{
	char *o = ldns_rdf2str(ldns_rr_owner(rr)), *t = ldns_rr_type2str(ldns_rr_get_type(rr));

	snprintf(buf, cap, "%s %s", o != NULL ? o : "?", t != NULL ? t : "?");
	free(o);
	free(t);
}

/* One RRset (owner and type of `first`) and its RRSIGs: 0 when one verifies. */
static int verify_rrset(const ldns_rr_list *section, const ldns_rr *first, const ldns_rr_list *keys,
			time_t now, char *why, size_t cap)
{
	ldns_rr_list *rrset = ldns_rr_list_new(), *sigs = ldns_rr_list_new();
	ldns_rr_type type = ldns_rr_get_type(first);
	ldns_status last = LDNS_STATUS_CRYPTO_NO_RRSIG;
	char what[600];
	int rc = -1;

	for (size_t i = 0; i < ldns_rr_list_rr_count(section); i++) {
		ldns_rr *rr = ldns_rr_list_rr(section, i);
		if (ldns_dname_compare(ldns_rr_owner(rr), ldns_rr_owner(first)) != 0)
			continue;
		if (ldns_rr_get_type(rr) == type)
			ldns_rr_list_push_rr(rrset, rr);
		else if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_RRSIG &&
			 ldns_rdf2rr_type(ldns_rr_rrsig_typecovered(rr)) == type)
			ldns_rr_list_push_rr(sigs, rr);
	}
	for (size_t i = 0; i < ldns_rr_list_rr_count(sigs) && rc != 0; i++) {
		last = ldns_verify_rrsig_keylist_time(rrset, ldns_rr_list_rr(sigs, i), keys, now, NULL);
		if (last == LDNS_STATUS_OK)
			rc = 0;
	}
	if (rc != 0) {
		rrset_name(first, what, sizeof(what));
		if (ldns_rr_list_rr_count(sigs) == 0)
			snprintf(why, cap, "%.200s: no RRSIG", what);
		else
			snprintf(why, cap, "%.200s: %s", what, ldns_get_errorstr_by_id(last));
	}
	/* The lists only borrowed the section's records. */
	ldns_rr_list_free(rrset);
	ldns_rr_list_free(sigs);
	return rc;
}

int p53_dnssec_verify_section(const ldns_rr_list *section, const ldns_rr_list *keys, time_t now,
			      uint16_t skip_type, char *why, size_t cap)
{
	int checked = 0;

	for (size_t i = 0; i < ldns_rr_list_rr_count(section); i++) {
		ldns_rr *rr = ldns_rr_list_rr(section, i);
		ldns_rr_type t = ldns_rr_get_type(rr);
		bool seen = false;
		if (t == LDNS_RR_TYPE_RRSIG || (skip_type != 0 && t == skip_type))
			continue;
		/* Once per RRset: skip a record whose owner and type came earlier. */
		for (size_t j = 0; j < i && !seen; j++) {
			ldns_rr *e = ldns_rr_list_rr(section, j);
			seen = ldns_rr_get_type(e) == t && ldns_dname_compare(ldns_rr_owner(e), ldns_rr_owner(rr)) == 0;
		}
		if (seen)
			continue;
		if (verify_rrset(section, rr, keys, now, why, cap) != 0)
			return -1;
		checked++;
	}
	return checked;
}

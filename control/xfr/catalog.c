/* Catalog zones, RFC 9432; see catalog.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/text.h"
#include "control/log.h"
#include "control/xfr/catalog.h"
#include "control/xfr/xfr.h"
#include "dataplane/name.h"

#define T_PTR 12
#define T_TXT 16

static void warnf(p53_warn_fn warn, void *arg, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void warnf(p53_warn_fn warn, void *arg, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (warn != NULL)
		warn(arg, msg);
}

/* Does canonical `name` end in `suffix` (whole labels)? Then the bytes before it. */
static int prefix_of(const uint8_t *name, size_t len, const uint8_t *suffix, size_t slen)
{
	size_t off = 0;

	while (len - off > slen) {
		off += 1u + name[off];
		if (off >= len)
			return -1;
	}
	if (len - off != slen || memcmp(name + off, suffix, slen) != 0)
		return -1;
	return (int)off;
}

static int member_cmp(const void *a, const void *b)
{
	const struct p53_catalog_member *x = a, *y = b;
	int d = strcmp(x->name, y->name);

	return d != 0 ? d : strcmp(x->id, y->id);
}

int p53_catalog_parse(const struct p53_rrs *cat, const uint8_t *apex, size_t apex_len,
		      struct p53_catalog_member **out, size_t *n, char *err, size_t errlen,
		      p53_warn_fn warn, void *warn_arg)
{
	uint8_t zones[256 + 6], version[256 + 8], low[256];
	struct p53_catalog_member *m = NULL;
	size_t nm = 0, cap = 0, pos = 0;
	struct p53_rr_view v;
	int has_version = 0, k;
	char txt[1024];

	*out = NULL;
	*n = 0;
	memcpy(zones, "\x05zones", 6);
	memcpy(zones + 6, apex, apex_len);
	memcpy(version, "\x07version", 8);
	memcpy(version + 8, apex, apex_len);
	while ((k = p53_rrs_next(cat, &pos, &v)) == 1) {
		p53_name_lower(low, v.owner, v.owner_len);
		if (v.type == T_TXT && v.owner_len == apex_len + 8 && memcmp(low, version, v.owner_len) == 0) {
			/* §4.2.1: version "2"; anything else we do not understand. */
			if (v.rdlen == 2 && v.rdata[0] == 1 && v.rdata[1] == '2')
				has_version = 1;
			else
				has_version = -1;
			continue;
		}
		int off = prefix_of(low, v.owner_len, zones, apex_len + 6);
		/* Exactly one label (the unique ID) before zones.<catalog>. */
		if (off <= 0 || (size_t)off != 1u + low[0])
			continue;
		if (v.type != T_PTR)
			continue; /* properties such as coo and group sit one level deeper */
		int tl = p53_name_len(v.rdata, v.rdlen);
		if (tl < 0 || (size_t)tl != v.rdlen) {
			warnf(warn, warn_arg, "catalog: malformed PTR at %s, member ignored",
			      p53_name_to_str(txt, sizeof(txt), low));
			continue;
		}
		if (nm == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct p53_catalog_member *g = realloc(m, c * sizeof(*m));
			if (g == NULL) {
				free(m);
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			m = g;
			cap = c;
		}
		struct p53_catalog_member *e = &m[nm++];
		memset(e, 0, sizeof(*e));
		p53_name_lower(e->wire, v.rdata, (size_t)tl);
		e->wire_len = (uint8_t)tl;
		p53_name_to_str(e->name, sizeof(e->name), e->wire);
		snprintf(e->id, sizeof(e->id), "%.*s", low[0], (const char *)low + 1);
	}
	if (k < 0 || has_version <= 0) {
		free(m);
		snprintf(err, errlen, k < 0 ? "malformed catalog records"
			 : has_version == 0 ? "no version.<catalog> TXT \"2\" (RFC 9432 §4.2.1)"
					    : "catalog schema version is not 2 (RFC 9432 §4.2.1)");
		return -1;
	}
	qsort(m, nm, sizeof(*m), member_cmp);
	/* §4.1: one PTR per unique ID. Two PTRs under one ID: that member is broken. */
	size_t o = 0;
	for (size_t i = 0; i < nm; i++) {
		int dup_id = 0;
		for (size_t j = 0; j < nm; j++)
			dup_id |= j != i && strcmp(m[i].id, m[j].id) == 0;
		if (dup_id) {
			warnf(warn, warn_arg, "catalog: unique ID '%s' has more than one PTR, member %s "
			      "ignored (RFC 9432 §4.1)", m[i].id, m[i].name);
			continue;
		}
		if (o > 0 && strcmp(m[o - 1].name, m[i].name) == 0) {
			warnf(warn, warn_arg, "catalog: member %s listed again under '%s', kept under '%s'",
			      m[i].name, m[i].id, m[o - 1].id);
			continue;
		}
		m[o++] = m[i];
	}
	*out = m;
	*n = o;
	return 0;
}

size_t p53_catalog_reconcile(struct p53_xfr *x, const struct p53_config *cfg,
			     struct p53_xfr_zone *cat, const struct p53_catalog_member *m, size_t n,
			     bool quiet)
{
	size_t changes = 0;
	time_t now = time(NULL);

	/* Members no longer listed. */
	for (size_t i = 0; i < x->n; i++) {
		struct p53_xfr_zone *z = x->zones[i];
		if (z->catalog != cat || z->removed)
			continue;
		size_t k;
		for (k = 0; k < n; k++)
			if (z->apex_len == m[k].wire_len && memcmp(z->apex, m[k].wire, z->apex_len) == 0)
				break;
		if (k == n) {
			z->removed = true;
			changes++;
			p53_info("catalog %s: member %s removed", cat->name, z->name);
		}
	}
	for (size_t k = 0; k < n; k++) {
		struct p53_xfr_zone *z = p53_xfr_find_wire(x, m[k].wire, m[k].wire_len);
		if (z != NULL && z->catalog == cat) {
			if (z->removed) {
				z->removed = false; /* listed again before it was dropped */
				changes++;
			}
			if (strcmp(z->member_id, m[k].id) != 0) {
				/* §5.6: a new unique ID resets the member: transfer it afresh. */
				p53_info("catalog %s: member %s has a new unique ID '%s' (was '%s'): "
					 "transferring it again", cat->name, z->name, m[k].id, z->member_id);
				free(z->member_id);
				z->member_id = strdup(m[k].id);
				z->force = true;
				z->notified = true;
			}
			continue;
		}
		bool configured = p53_xfr_conf_named(cfg, m[k].name) != NULL;
		if (z != NULL || configured) {
			if (!quiet)
				p53_warn("catalog %s: member %s is already %s; ignored (RFC 9432 §5.4)",
					 cat->name, m[k].name,
					 configured ? "a configured zone" : "another catalog's member");
			continue;
		}
		char *file = p53_xfr_default_file(cfg->xfr.directory, m[k].name);
		z = file != NULL ? p53_xfr_zone_add(x, m[k].name, cat->cfg_index, file) : NULL;
		free(file);
		if (z == NULL) {
			p53_err("catalog %s: out of memory adding member %s", cat->name, m[k].name);
			continue;
		}
		z->catalog = cat;
		z->member_id = strdup(m[k].id);
		z->next_refresh = now;
		changes++;
		p53_info("catalog %s: member %s added (unique ID '%s')", cat->name, z->name, m[k].id);
	}
	return changes;
}

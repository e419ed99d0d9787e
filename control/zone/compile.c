/* Compiling a config's zones; see compile.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "control/steer/steer_build.h"
#include "control/text.h"

#include "control/dnssec/dnssec.h"
#include "control/xfr/serve_conf.h"
#include "control/zone/compile.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/image.h"

/* Labels of a presentation name without the root's dot. */
static size_t bare_len(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && s[n - 1] == '.' ? n - 1 : n;
}

/* The served zone a steered owner belongs to: the deepest whose apex is it or above it. */
static int zone_of(const struct p53_config *cfg, const char *owner)
{
	size_t ol = bare_len(owner);
	int best = -1;
	size_t best_len = 0;

	for (int i = 0; i < cfg->n_zones; i++) {
		const char *z = cfg->zones[i].name;
		size_t zl = bare_len(z);
		if (zl == 0 || (zl <= ol && strncasecmp(owner + ol - zl, z, zl) == 0 &&
				(zl == ol || owner[ol - zl - 1] == '.'))) {
			if (best < 0 || zl > best_len) {
				best = i;
				best_len = zl;
			}
		}
	}
	return best;
}

/* The bytes of a steered record's RRset in the image (every target): its addresses, or the
 * first target's name for a CNAME (p53_steer_extras_attach). */
static size_t rdata_len(const struct p53_steer_record *r)
{
	if (r->type == 5)
		return r->pool[0].tname_len;
	return (size_t)r->n_pool * (r->type == 1 ? 4 : 16);
}

void *p53_steer_extras_attach(const struct p53_config *cfg, struct p53_zone_src *src, size_t n,
			      char *err, size_t errlen)
{
	const struct p53_steer_conf *sc = &cfg->steer;
	size_t nr = sc->n_records > 0 ? (size_t)sc->n_records : 1, n_addr = 0;
	for (int i = 0; i < sc->n_records; i++)
		n_addr += rdata_len(&sc->records[i]);
	/* One block: the extras, then every record's addresses (its RDATA), in config order. */
	struct p53_zone_extra *ex = calloc(1, nr * sizeof(*ex) + n_addr);

	if (ex == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	uint8_t *addrs = (uint8_t *)(ex + nr);
	for (int i = 0; i < sc->n_records; i++)
		if (zone_of(cfg, sc->records[i].owner) < 0) {
			snprintf(err, errlen, "%s:%d: steering.records[%d]: owner '%s' is in no served zone",
				 cfg->path, sc->records[i].line, i, sc->records[i].owner);
			free(ex);
			return NULL;
		}
	/* Grouped by source: each source's extras are consecutive in ex[]. */
	int n_ex = 0;
	for (size_t k = 0; k < n; k++) {
		src[k].extra = ex + n_ex;
		src[k].n_extra = 0;
		size_t at = 0; /* record i's addresses: past those of the records before it */
		for (int i = 0; i < sc->n_records; at += rdata_len(&sc->records[i]), i++) {
			const struct p53_steer_record *r = &sc->records[i];
			int z = zone_of(cfg, r->owner);
			if (bare_len(cfg->zones[z].name) != bare_len(src[k].name) ||
			    strncasecmp(cfg->zones[z].name, src[k].name, bare_len(src[k].name)) != 0)
				continue;
			struct p53_zone_extra *e = &ex[n_ex++];
			uint8_t *a = addrs + at;
			unsigned int alen = r->type == 1 ? 4 : 16;
			int na = r->n_pool;
			if (r->type == 5) {
				/* One CNAME (what is answered without a table): the first target. */
				alen = r->pool[0].tname_len;
				memcpy(a, r->pool[0].tname, alen);
				na = 1;
			} else {
				for (int j = 0; j < r->n_pool; j++)
					memcpy(a + (size_t)j * alen, r->pool[j].addr, alen);
			}
			*e = (struct p53_zone_extra){ .lname = r->lname, .lname_len = r->lname_len,
						      .type = r->type, .ttl = r->ttl, .addrs = a,
						      .rdlen = alen, .n = na, .line = r->line,
						      .owner = r->owner, .rec = (uint32_t)i };
			src[k].n_extra++;
		}
		/* The key that signs the zone's variants also signs the NSEC or NSEC3 the
		 * compiler makes for steered owners its chain lacks (zone_build.h). */
		src[k].steer_layout = sc->layout;
		src[k].sign_key = NULL;
		for (int i = 0; src[k].n_extra > 0 && i < cfg->dnssec.n_keys; i++) {
			const struct p53_sign_key *key = &cfg->dnssec.keys[i];
			char kn[1024];
			p53_name_to_str(kn, sizeof(kn), key->owner);
			if (bare_len(kn) == bare_len(src[k].name) &&
			    strncasecmp(kn, src[k].name, bare_len(kn)) == 0)
				src[k].sign_key = key;
		}
		if (src[k].sign_key != NULL) {
			uint32_t now = (uint32_t)time(NULL);
			/* As the variants' (steer_pub.c): from an hour ago, for slow clocks. */
			src[k].sign_inception = now - 3600u;
			src[k].sign_expiration = now + cfg->dnssec.validity_s;
		}
	}
	return ex;
}

void *p53_zone_compile(const struct p53_config *cfg, size_t *len, char *err, size_t errlen,
		       p53_warn_fn warn, void *warn_arg, char ***files, size_t *n_files)
{
	struct p53_zone_src *src = calloc(cfg->n_zones > 0 ? (size_t)cfg->n_zones : 1, sizeof(*src));
	void *ex = NULL;
	void *img = NULL;

	if (src == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < cfg->n_zones; i++) {
		const struct p53_config_zone *z = &cfg->zones[i];
		src[i].name = z->name;
		src[i].file = z->file;
		src[i].cfg_file = cfg->path;
		src[i].cfg_line = z->line;
		src[i].flags = p53_xfr_transfer_signed(cfg, z) ? P53_ZONE_XFR_SIGNED : 0;
		if (z->xfr == NULL)
			continue;
		/* A secondary zone: its disk copy when there is one (control/xfr/ keeps it), else
		 * no data yet. A catalog zone is not served (RFC 9432 §1); its members come from
		 * the transfer state, which only the daemon has. */
		src[i].flags |= P53_ZONE_SECONDARY;
		if (z->xfr->catalog)
			src[i].rcode = P53_RCODE_REFUSED;
		else if (access(z->file, F_OK) != 0)
			src[i].rcode = P53_RCODE_SERVFAIL;
	}
	ex = p53_steer_extras_attach(cfg, src, (size_t)cfg->n_zones, err, errlen);
	if (ex == NULL)
		goto out;
	img = p53_image_build_files(src, (size_t)cfg->n_zones, len, err, errlen, warn, warn_arg,
				    files, n_files);
out:
	free(ex);
	free(src);
	/* Signatures that run out soon: the health zone check fails such a zone (dnssec.h). */
	if (img != NULL)
		p53_dnssec_warn_expiring(img, (uint64_t)time(NULL), cfg->dnssec.margin_s, warn, warn_arg);
	return img;
}

/* Steered records in signed zones that no key signs, and keys for zones that are not signed:
 * either way validating resolvers reject (or never see) what the operator meant to sign. */
static void signing_warn(const struct p53_config *cfg, const void *img, p53_warn_fn warn, void *arg)
{
	char msg[1400], zn[1024];

	for (int i = 0; i < cfg->steer.n_records; i++) {
		const struct p53_steer_record *r = &cfg->steer.records[i];
		/* The image zone holding it: the longest apex that is a label suffix of its owner. */
		uint32_t best = P53_NONE;
		uint8_t best_len = 0;
		for (uint32_t z = 0; z < p53_image_hdr(img)->n_zones; z++) {
			const struct p53_image_zone *iz = p53_image_zone(img, z);
			for (unsigned int at = 0; at < r->lname_len; at += 1u + r->lname[at]) {
				if (r->lname_len - at == iz->name_len &&
				    memcmp(r->lname + at, p53_image_name(img, iz->name_off), iz->name_len) == 0 &&
				    iz->name_len > best_len) {
					best = z;
					best_len = iz->name_len;
				}
				if (r->lname[at] == 0)
					break;
			}
		}
		if (best == P53_NONE)
			continue;
		const struct p53_image_zone *iz = p53_image_zone(img, best);
		int keyed = 0;
		for (int k = 0; k < cfg->dnssec.n_keys; k++)
			keyed |= cfg->dnssec.keys[k].owner_len == iz->name_len &&
				 memcmp(cfg->dnssec.keys[k].owner, p53_image_name(img, iz->name_off), iz->name_len) == 0;
		int is_signed = (iz->dnssec & P53_ZONE_SIGNED) != 0;
		if (is_signed == keyed)
			continue;
		p53_name_to_str(zn, sizeof(zn), p53_image_name(img, iz->name_off));
		if (is_signed)
			snprintf(msg, sizeof(msg), "%s:%d: steering.records[%d]: %s is in the signed zone %s but "
				 "no dnssec.signing_keys key is for that zone: its answers go unsigned and "
				 "validating resolvers will reject them", cfg->path, r->line, i, r->owner, zn);
		else
			snprintf(msg, sizeof(msg), "%s:%d: steering.records[%d]: %s is signed with a "
				 "dnssec.signing_keys key but the zone %s is not signed (no DNSKEY to "
				 "validate with)", cfg->path, r->line, i, r->owner, zn);
		if (warn != NULL)
			warn(arg, msg);
		else
			fprintf(stderr, "%s\n", msg);
	}
}

int p53_config_check(const char *path, struct p53_check_result *res, char *err, size_t errlen,
		     p53_warn_fn warn, void *warn_arg)
{
	struct p53_config cfg = {0};
	void *img;

	if (p53_config_load(path, &cfg, err, errlen) != 0)
		return -1;
	img = p53_zone_compile(&cfg, &res->image_bytes, err, errlen, warn, warn_arg, NULL, NULL);
	res->zones = cfg.n_zones;
	res->variants = 0;
	res->variants_signed = 0;
	res->sign_ns = 0;
	if (img != NULL && cfg.steer.n_records > 0) {
		/* The steering sources and table, as a start or reload builds them: signed too,
		 * so a key that cannot sign is found here. */
		struct p53_steer_sources ss;
		size_t tl;
		void *t = NULL;
		uint64_t now = (uint64_t)time(NULL);
		struct p53_steer_signing sg = { .keys = cfg.dnssec.keys, .n_keys = cfg.dnssec.n_keys,
						.inception = (uint32_t)(now - 3600),
						.expiration = (uint32_t)(now + cfg.dnssec.validity_s) };
		signing_warn(&cfg, img, warn, warn_arg);
		if (p53_steer_sources_load(&cfg.steer, &ss, err, errlen) == 0) {
			/* Every target up (NULL): health is pop53d's, not the check's. */
			t = p53_steer_build_signed(&cfg.steer, &ss, NULL, &sg, &tl, err, errlen);
			p53_steer_sources_free(&ss);
		}
		if (t == NULL) {
			free(img);
			img = NULL;
		} else {
			res->variants = p53_steer_hdr(t)->n_variants;
			res->variants_signed = sg.n_signed;
			res->sign_ns = sg.sign_ns;
		}
		free(t);
	}
	p53_config_free(&cfg);
	if (img == NULL)
		return -1;
	res->records = p53_image_hdr(img)->n_records;
	free(img);
	return 0;
}

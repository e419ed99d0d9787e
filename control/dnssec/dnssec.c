/* DNSSEC on the control side: config section and signature expiry; see dnssec.h. */
#include <stdio.h>
#include <string.h>

#include "control/text.h"
#include "control/dnssec/dnssec.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

/* dnssec.signing_keys: a list of key files, each loaded now so a bad one is "file:line". */
static int signing_keys(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			const char *where, void *base)
{
	struct p53_dnssec_conf *d = (struct p53_dnssec_conf *)base;
	char iw[P53_CONF_WHERE_MAX], e[600];
	int n = p53_conf_seq_len(c, v, where, "a list of key files");

	(void)k;
	if (n < 0)
		return -1;
	if (n > P53_SIGN_MAX_KEYS)
		return p53_conf_fail(c, v, "%s: at most %d keys", where, P53_SIGN_MAX_KEYS);
	for (int i = 0; i < n; i++) {
		yaml_node_t *it = p53_conf_seq_item(c, v, i);
		const char *s;
		char path[4096];
		snprintf(iw, sizeof(iw), "%s[%d]", where, i);
		if (p53_conf_string_of(c, it, iw, &s) != 0)
			return -1;
		/* Relative paths from the config file's directory, as every path in it. */
		const char *slash = strrchr(c->path, '/');
		if (s[0] != '/' && slash != NULL)
			snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - c->path), c->path, s);
		else
			snprintf(path, sizeof(path), "%s", s);
		if (p53_sign_key_load(path, &d->keys[d->n_keys], e, sizeof(e)) != 0)
			return p53_conf_fail(c, it, "%s: %s", iw, e);
		d->n_keys++;
		for (int j = 0; j < d->n_keys - 1; j++)
			if (d->keys[j].owner_len == d->keys[i].owner_len &&
			    memcmp(d->keys[j].owner, d->keys[i].owner, d->keys[i].owner_len) == 0)
				return p53_conf_fail(c, it, "%s: a second key for the same zone as "
						     "signing_keys[%d] (one key signs a zone's variants)", iw, j);
	}
	return 0;
}

static const struct p53_conf_key dnssec_keys[] = {
	/* up to a year: signers re-sign weeks ahead, never a year */
	{ .name = "signature_margin", .fn = p53_conf_uint,
	  P53_CONF_FIELD(struct p53_dnssec_conf, margin_s), .min = 0, .max = 366u * 86400u },
	{ .name = "signing_keys", .fn = signing_keys },
	{ .name = "signature_validity", .fn = p53_conf_uint,
	  P53_CONF_FIELD(struct p53_dnssec_conf, validity_s), .min = 60, .max = 366u * 86400u },
	{ .name = "signature_refresh", .fn = p53_conf_uint,
	  P53_CONF_FIELD(struct p53_dnssec_conf, refresh_s), .min = 30, .max = 366u * 86400u },
};

void p53_dnssec_conf_init(struct p53_dnssec_conf *d)
{
	d->margin_s = P53_DNSSEC_MARGIN_DEFAULT;
	d->validity_s = P53_DNSSEC_VALIDITY_DEFAULT;
	d->refresh_s = P53_DNSSEC_REFRESH_DEFAULT;
}

int p53_dnssec_conf_section(struct p53_conf_ctx *c, const struct p53_conf_key *k, yaml_node_t *v,
			    const char *where, void *base)
{
	struct p53_dnssec_conf *d = (struct p53_dnssec_conf *)((char *)base + k->off);

	d->line = (int)v->start_mark.line + 1;
	if (p53_conf_map(c, v, dnssec_keys, P53_CONF_NKEYS(dnssec_keys), where, c->key, d) != 0)
		return -1;
	if (d->n_keys == 0)
		return 0;
	/* Re-signing must come before the zone check fails, and leave a signature some life. */
	if (d->refresh_s <= d->margin_s)
		return p53_conf_fail(c, v, "%s: signature_refresh (%u s) must be above signature_margin "
				     "(%u s): the health zone check would fail before pop53 re-signs",
				     where, d->refresh_s, d->margin_s);
	if (d->validity_s <= d->refresh_s)
		return p53_conf_fail(c, v, "%s: signature_validity (%u s) must be above "
				     "signature_refresh (%u s)", where, d->validity_s, d->refresh_s);
	return 0;
}

void p53_dnssec_conf_free(struct p53_dnssec_conf *d)
{
	for (int i = 0; i < d->n_keys; i++)
		p53_sign_key_free(&d->keys[i]);
	d->n_keys = 0;
}

void p53_dnssec_zone_state(const void *img, uint32_t zone, uint64_t now, struct p53_dnssec_state *st)
{
	const struct p53_image_zone *z = p53_image_zone(img, zone);

	st->is_signed = (z->dnssec & P53_ZONE_SIGNED) != 0;
	st->denial = (z->dnssec & P53_ZONE_NSEC3) ? "nsec3" : (z->dnssec & P53_ZONE_NSEC) ? "nsec" : "none";
	st->expire = z->sig_expire;
	st->left = st->is_signed ? (int64_t)z->sig_expire - (int64_t)now : 0;
}

int p53_dnssec_zone_check(const void *img, uint32_t zone, uint64_t now, unsigned int margin,
			  char *why, size_t cap)
{
	struct p53_dnssec_state st;
	char name[1024];

	p53_dnssec_zone_state(img, zone, now, &st);
	if (!st.is_signed || (st.left > 0 && st.left >= (int64_t)margin))
		return 0;
	p53_name_to_str(name, sizeof(name), p53_image_name(img, p53_image_zone(img, zone)->name_off));
	if (st.left <= 0)
		snprintf(why, cap, "zone '%s': signatures expired %lld s ago", name, (long long)-st.left);
	else
		snprintf(why, cap, "zone '%s': signatures expire in %lld s (dnssec.signature_margin %u s)",
			 name, (long long)st.left, margin);
	return -1;
}

void p53_dnssec_warn_expiring(const void *img, uint64_t now, unsigned int margin, p53_warn_fn warn,
			      void *warn_arg)
{
	char why[1200];

	for (uint32_t z = 0; z < p53_image_hdr(img)->n_zones; z++) {
		if (p53_dnssec_zone_check(img, z, now, margin, why, sizeof(why)) == 0)
			continue;
		if (warn != NULL)
			warn(warn_arg, why);
		else
			fprintf(stderr, "%s\n", why);
	}
}

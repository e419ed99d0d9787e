/* DNSSEC on the control side: config section and signature expiry; see dnssec.h. */
#include <stdio.h>

#include "control/text.h"
#include "control/dnssec/dnssec.h"
#include "dataplane/image.h"
#include "dataplane/name.h"

const struct p53_conf_key p53_dnssec_conf_keys[1] = {
	/* up to a year: signers re-sign weeks ahead, never a year */
	{ .name = "signature_margin", .fn = p53_conf_uint,
	  P53_CONF_FIELD(struct p53_dnssec_conf, margin_s), .min = 0, .max = 366u * 86400u },
};

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

/* Compiling a config's zones; see compile.h. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "control/dnssec/dnssec.h"
#include "control/zone/compile.h"
#include "dataplane/dnsmsg.h"
#include "dataplane/image.h"

void *p53_zone_compile(const struct p53_config *cfg, size_t *len, char *err, size_t errlen,
		       p53_warn_fn warn, void *warn_arg, char ***files, size_t *n_files)
{
	struct p53_zone_src *src = calloc((size_t)cfg->n_zones, sizeof(*src));
	void *img;

	if (src == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (int i = 0; i < cfg->n_zones; i++) {
		const struct p53_config_zone *z = &cfg->zones[i];
		src[i].name = z->name;
		src[i].file = z->file;
		src[i].cfg_file = cfg->path;
		src[i].cfg_line = z->line;
		if (z->xfr == NULL)
			continue;
		/* A secondary zone: its disk copy when there is one (control/xfr/ keeps it), else
		 * no data yet. A catalog zone is not served (RFC 9432 §1); its members come from
		 * the transfer state, which only the daemon has. */
		src[i].flags = P53_ZONE_SECONDARY;
		if (z->xfr->catalog)
			src[i].rcode = P53_RCODE_REFUSED;
		else if (access(z->file, F_OK) != 0)
			src[i].rcode = P53_RCODE_SERVFAIL;
	}
	img = p53_image_build_files(src, (size_t)cfg->n_zones, len, err, errlen, warn, warn_arg,
				    files, n_files);
	free(src);
	/* Signatures that run out soon: the health zone check fails such a zone (dnssec.h). */
	if (img != NULL)
		p53_dnssec_warn_expiring(img, (uint64_t)time(NULL), cfg->dnssec.margin_s, warn, warn_arg);
	return img;
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
	p53_config_free(&cfg);
	if (img == NULL)
		return -1;
	res->records = p53_image_hdr(img)->n_records;
	free(img);
	return 0;
}

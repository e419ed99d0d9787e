/*
 * Compiling what a config names: its zones into one image (control/zone/image_build.c), the
 * same way for a start, a reload, `pop53d --check-config` and `pop53ctl config check`.
 * Start-up, control thread, or the pop53ctl process; allocates with malloc; no DPDK.
 */
#ifndef P53_ZONE_COMPILE_H
#define P53_ZONE_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "control/conf/config.h"
#include "control/zone/image_build.h"

/**
 * Compile the zones of `cfg` into a new image.
 *
 * @param warn   warnings ("file:line: reason"), or NULL for stderr
 * @param files  when not NULL, set on success to the files read (p53_image_build_files)
 * @return malloc'd image, or NULL with err = "file:line: reason".
 */
void *p53_zone_compile(const struct p53_config *cfg, size_t *len, char *err, size_t errlen,
		       p53_warn_fn warn, void *warn_arg, char ***files, size_t *n_files);

/**
 * Give each source the steered records of `cfg` that fall in its zone (src[k].extra,
 * n_extra; matched by zone name, so catalog members and secondaries work alike). Every
 * compile of a config must do this: pop53d's start and reload compile through
 * p53_xfr_compile, checks through p53_zone_compile.
 * @return the storage the sources now point into (free() it after the compile), or NULL with
 *         err = "file:line: ..." (an owner in no served zone, out of memory).
 */
void *p53_steer_extras_attach(const struct p53_config *cfg, struct p53_zone_src *src, size_t n,
			      char *err, size_t errlen);

/** What a successful p53_config_check() found. */
struct p53_check_result {
	int zones;
	uint32_t records;
	size_t image_bytes;
	uint32_t variants;              /* steering variants */
	uint32_t variants_signed;       /* of them signed (dnssec.signing_keys) */
	uint64_t sign_ns;               /* the time signing them took */
};

/**
 * Load a config file and compile its zones exactly as a start or reload would, then throw the
 * result away. Runs in the process that asks (pop53d --check-config, pop53ctl config check):
 * the serving daemon never opens a path a client names.
 * @return 0, or -1 with err = "file:line: reason".
 */
int p53_config_check(const char *path, struct p53_check_result *res, char *err, size_t errlen,
		     p53_warn_fn warn, void *warn_arg);

#endif /* P53_ZONE_COMPILE_H */

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

/* Storage behind the steered records attached to zone sources (p53_zone_steer_attach). */
struct p53_zone_steer {
	struct p53_zone_extra *ex;
	uint8_t *addrs;
};

/**
 * Give each zone source in src[] the steered records (cfg->steer) its zone holds: the deepest
 * source whose apex is the owner or above it. Every compile of the config's zones does this
 * (start-up, reload, a transfer's update), so steered records never depend on how a zone's
 * other records arrived. Free with p53_zone_steer_free() after the build.
 * @return 0, or -1 with `err` ("file:line: ... owner is in no served zone", out of memory).
 */
int p53_zone_steer_attach(const struct p53_config *cfg, struct p53_zone_src *src, size_t n,
			  struct p53_zone_steer *st, char *err, size_t errlen);
void p53_zone_steer_free(struct p53_zone_steer *st);

/**
 * Compile the zones of `cfg` into a new image.
 *
 * @param warn   warnings ("file:line: reason"), or NULL for stderr
 * @param files  when not NULL, set on success to the files read (p53_image_build_files)
 * @return malloc'd image, or NULL with err = "file:line: reason".
 */
void *p53_zone_compile(const struct p53_config *cfg, size_t *len, char *err, size_t errlen,
		       p53_warn_fn warn, void *warn_arg, char ***files, size_t *n_files);

/** What a successful p53_config_check() found. */
struct p53_check_result {
	int zones;
	uint32_t records;
	size_t image_bytes;
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

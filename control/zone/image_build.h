/*
 * Zone compiler: master files (parsed with ldns) to one zone image (dataplane/image.h).
 *
 * Runs on the control thread only; allocates with malloc. The result is a single buffer the
 * caller copies into each worker's replica (rte_malloc_socket) and frees with free().
 */
#ifndef P53_IMAGE_BUILD_H
#define P53_IMAGE_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A steered record (control/steer/): its owner and type get an RRset of every target's
 * address, flagged P53_RRSET_STEERED, which the workers replace by the variant the steering
 * table picks. Static data of the same owner and type (or a CNAME there) is an error.
 */
struct p53_sign_key;

struct p53_zone_extra {
	const uint8_t *lname;   /* canonical owner, at or below the zone's apex */
	uint8_t lname_len;
	uint16_t type;
	uint32_t ttl;
	const uint8_t *addrs;   /* n RDATAs of rdlen bytes each: addresses (A, AAAA), a name (CNAME) */
	unsigned int rdlen;
	int n;
	int line;               /* in the config file (p53_zone_src.cfg_file) */
	const char *owner;      /* as written, for messages */
	uint32_t rec;           /* its index in the config's steering.records (the table's) */
};

/*
 * Where a zone's records come from: a master file, records in memory (a secondary zone's
 * transferred or current content, control/xfr/), or nothing (a zone without data here,
 * answered with `rcode`); plus its steered records.
 */
struct p53_zone_src {
	const char *name;       /* zone origin as text, e.g. "example.com." */
	const struct p53_zone_extra *extra; /* steered records in this zone, or NULL */
	size_t n_extra;
	const char *file;       /* master file path; for records in memory, what messages call them */
	const char *cfg_file;   /* config file that named this zone, for error messages; may be NULL */
	int cfg_line;           /* its line there, 0 when unknown */
	const uint8_t *rrs;     /* when not NULL: the records instead of the file, `n_rrs` of them
				   one after another in uncompressed wire form (owner, TYPE,
				   CLASS, TTL, RDLENGTH, RDATA); messages say "file:N" for the
				   Nth record */
	size_t rrs_len;         /* bytes at rrs */
	uint8_t rcode;          /* not 0: no records at all, the zone answers this RCODE (image.h) */
	uint8_t flags;          /* P53_ZONE_* for the image */
	/* Steered owners of a signed zone (extra): the key (dnssec.signing_keys) that signs
	 * the NSEC or NSEC3 the compiler makes for each owner the zone's chain lacks, so NODATA
	 * there can be proven (dnssec_build.c, p53_dnssec_steer_denial); NULL: none is made. */
	const struct p53_sign_key *sign_key;
	uint32_t sign_inception, sign_expiration; /* unix seconds, into those RRSIGs */
	uint64_t steer_layout;  /* the config's p53_steer_conf.layout that `rec` counts in (the
				   image's steer_layout, image.h); 0: the nodes get no index */
};

/* Called for warnings such as ignored out-of-zone records: "file:line: reason". */
typedef void (*p53_warn_fn)(void *arg, const char *msg);

/**
 * Compile zones into one image.
 *
 * Rejects (returns NULL, `err` = "file:line: reason"): unreadable file or broken $INCLUDE,
 * syntax errors, no SOA or more than one SOA at the apex, SOA not at the apex, CNAME beside
 * other data (RFC 1034 §3.6.2; RRSIG/NSEC excepted), more than one CNAME, DNAME with data
 * below it... Out-of-zone records are ignored with a warning, as Knot does. A zone carrying
 * DNSSEC records (RRSIG, NSEC, NSEC3, DNSKEY) gets one warning: it is served unsigned.
 *
 * @param zones   the zones to compile; names must be distinct
 * @param n       how many
 * @param len     set to the image size on success
 * @param err     buffer for the reason on failure
 * @param warn    warning callback, or NULL to print to stderr
 * @return malloc'd image, or NULL on failure.
 */
void *p53_image_build(const struct p53_zone_src *zones, size_t n, size_t *len,
		      char *err, size_t errlen, p53_warn_fn warn, void *warn_arg);

/**
 * p53_image_build() that also says which files it read (zone files and their $INCLUDEs, in
 * the order read), for zone watching. On success *files is a malloc'd array of *n_files
 * malloc'd paths for the caller to free (p53_image_files_free); on failure they are untouched.
 */
void *p53_image_build_files(const struct p53_zone_src *zones, size_t n, size_t *len,
			    char *err, size_t errlen, p53_warn_fn warn, void *warn_arg,
			    char ***files, size_t *n_files);

/* Node-major: when a node's owner name and its first RRset (header and records, at most a line)
 * would cross a line with at most this many bytes of it left, the node's block starts on the
 * next line (the bytes skipped are zero and unreferenced). */
#define P53_IMAGE_PACK_PAD 8u

/** Free a list of files from p53_image_build_files(). */
void p53_image_files_free(char **files, size_t n);

/* An index of up to this many slots (256 KiB) is kept at a load factor of 0.2 to 0.4. */
#define P53_IMAGE_SLOTS_SPARSE ((uint64_t)1 << 15)

/**
 * The name index's slot count (dataplane/image.h) for n_nodes names, from `count` (a power
 * of two; the compiler starts at 16, an IXFR patch at the image's count): doubled while
 * the load factor is above 0.8, or above 0.4 while the index stays within
 * P53_IMAGE_SLOTS_SPARSE slots. Eight 8-byte slots share a cache line, so a linear probe at
 * 0.8 still touches one line on average and a big index stays ~10 B/record (~17 at 0.4, at
 * 1M records: docs/BENCHMARKS.md, big zone); but a miss (a referral's or a name error's
 * full name) probes ~13 slots at 0.8 against ~2 at 0.4, and a small index costs little
 * memory (docs/BENCHMARKS.md, "Round 8"). Never shrinks.
 */
static inline uint64_t p53_image_slot_count(uint64_t count, uint64_t n_nodes)
{
	while (count * 4 < 5 * n_nodes || (count * 2 < 5 * n_nodes && count * 2 <= P53_IMAGE_SLOTS_SPARSE))
		count *= 2;
	return count;
}

struct p53_image_nsec3;

/* One NSEC3 zone's sorted hashes (its part of the image's table) and its NSEC3PARAM. */
struct p53_n3_set {
	const struct p53_image_nsec3 *t;
	size_t n;
	const uint8_t *salt;
	uint8_t salt_len;
	uint16_t iter;
};

/*
 * The node of the NSEC3 matching (*exact set) or covering NAME (LEN bytes, lowercase wire
 * form) in C; P53_NONE when C holds none. Shared by the compiler's proofs and the patch's.
 */
uint32_t p53_n3_find(const struct p53_n3_set *c, const uint8_t *name, size_t len, bool *exact);

/** A SHA-1 hash's (P53_NSEC3_HASH_LEN bytes) 32 characters in base32hex, lower case (RFC 4648
 * §7): an NSEC3 owner's first label. */
void p53_n3_b32hex(const uint8_t *hash, uint8_t out[32]);

/* RFC 4034 §4.1.2 type bitmap (NSEC, NSEC3) of the types set in bits[8192] (bit 0x80 >> (t
 * & 7) of bits[t >> 3]) into out (up to 256 * 34 bytes); its length. The compile's for the
 * denial of steered owners (dnssec_build.c), the patch's to check it (image_patch.c). */
size_t p53_type_bitmap(const uint8_t *bits, uint8_t *out);

/*
 * The NSEC or NSEC3 (type) pop53 makes for a steered owner, pre-encoded in rr (C0 0C, TYPE,
 * IN, TTL, RDLENGTH, then the rdlen bytes of RDATA the caller wrote at rr + 12), and its
 * RRSIG by key over [inception, expiration] into sig (cap bytes; p53_sign_rrset's record).
 * The compile's (dnssec_build.c, p53_dnssec_steer_denial) and the patch's when a steered
 * owner's NSEC changes (image_patch.c, steer_resign): the same bytes for the same window.
 * Returns the RRSIG's length, or -1.
 */
int p53_steer_denial_sign(const struct p53_sign_key *key, uint32_t inception,
			  uint32_t expiration, const uint8_t *owner, uint8_t owner_len,
			  uint16_t type, uint32_t ttl, uint8_t *rr, size_t rdlen, uint8_t *sig,
			  size_t cap);

#endif /* P53_IMAGE_BUILD_H */

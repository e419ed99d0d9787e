/*
 * The answer cache: per worker, the fast path's last answers by the question as received, so
 * a repeated question skips the name walk, lowering, hash, lookup and answer writing
 * (fastpath.c, fast_frame()).
 *
 * The key is the question's bytes exactly as received (QNAME in its case, QTYPE, QCLASS; up
 * to P53_QCACHE_KEY bytes), whether the query had an OPT and its DO bit, all compared as
 * 8-byte words; the value is what the response holds after the question (its records and
 * OPT: every owner name in them is compressed to the question or to what follows it, so the
 * bytes do not depend on the ID, the RD/CD bits or the case of the question beyond the key),
 * its counts as sent, AA and RCODE, and the checksum sums of the question, of what the
 * reply's UDP checksum takes from the entry (those bytes, the counts, the lengths: a hit adds
 * the addresses, ports, ID and flags to it) and of what the query's checksum check takes from
 * it (the query's counts, its question and its OPT's fixed bytes: a hit adds the addresses,
 * ports, lengths, ID, flags and the OPT's one varying word). The response's header (ID, flags
 * from the query) is written per reply.
 *
 * An entry is valid for one image generation (image.h p53_image_hdr()->generation, set by
 * every publish: a new image, or a reload that changed the responder settings published with
 * it, misses). A steered answer (steer.h), which depends on the client's address, is cached as
 * where its records come from: the steered record's index in the steering table (the image
 * node's); a hit then finds the client's variant for the table published now (a health
 * change publishes a new one) and writes it, as the fast answer's steered() does after its
 * lookup.
 *
 * The variant is found in the pick cache (struct p53_qcache_pick): per worker, the variants
 * picked for (image and steering table generations, record, question's OPT and DO, client
 * prefix), each kept as the answer writes it (where its bytes are in the table, their
 * length, record count and the reply's checksum sum for them), so a hit looks nothing up in
 * the table. A pick's scope (the longest
 * prefix among the blocks its decision consulted: the ECS scope, steer.h) bounds the prefix
 * it holds for: every address inside the block of that length around the client gets the
 * same location from each source consulted, so the same variant and scope. Every policy is
 * deterministic given the client's prefix and the table (weighted and sticky hash the
 * client's /24 or /56, which is their scope), so caching changes no distribution. The
 * prefix length a record's picks are kept at is the question entry's `hint` for the family:
 * the longest scope its picks had so far (a pick of a longer scope raises it; one longer than
 * P53_QCACHE_PICK_MAX4 / _MAX6 is not kept). A new table (a health change, a map or MMDB
 * reload: steer_pub.c stamps a new generation) misses every pick; a table of generation 0
 * (never published: tools, tests) is not cached.
 *
 * A question is stored when it misses twice in a row in its slot (the slot remembers the hash
 * of the last question that missed there): a name asked once costs the lookup, not a store.
 * After P53_QCACHE_RUN misses in a row (names asked once: a random-subdomain flood) not even
 * the lookup: one question in P53_QCACHE_RUN is looked up until one hits or is stored
 * (`klim`, fastpath.c qc_skip()).
 *
 * Only answers that the client's advertised payload size cannot change are stored: at most
 * P53_QCACHE_MAX_RESPONSE bytes, so the same bytes fit any limit (512 at least, RFC 1035
 * §4.2.1) with room for the Extended DNS Error a REFUSED answer adds when it fits; a
 * referral (which may leave optional glue out) only when the query's payload size is ours.
 *
 * A query whose one EDNS option is a valid ECS (RFC 7871) is looked up too (fastpath.c
 * opt_ecs_qc()), keyed with P53_QC_ECS and the option's length (elen; so the OPT's length),
 * not its ADDRESS: `ans` holds the records without the OPT, and each reply writes our OPT with
 * the query's ECS echoed (FAMILY, SOURCE, ADDRESS as received, our SCOPE) and sums it
 * (qc_ecs_answer()). A static answer's SCOPE is 0; a steered one's variant is picked from the
 * table per reply for the ECS ADDRESS at its SOURCE (the packet's source for SOURCE 0, then
 * SCOPE 0), its SCOPE the pick's: not from the pick cache, whose lookup and store cost more
 * than they save for resolvers' many client prefixes (docs/BENCHMARKS.md, round 19). REFUSED
 * (an EDE after the ECS) is not stored. Queries with other options (COOKIE, NSID...) are
 * never looked up.
 *
 * Direct-mapped, a fixed number of fixed-size entries allocated once per worker by the
 * control thread; the worker alone reads and writes its cache. Per packet: no allocation,
 * lock or syscall.
 */
#ifndef P53_QCACHE_H
#define P53_QCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dataplane/name.h"

#define P53_QCACHE_KEY 80               /* question bytes cached at most (10 words) */
#define P53_QCACHE_ANS 384              /* response bytes after the question at most */
#define P53_QCACHE_MAX_RESPONSE 506     /* 512 less the 6 bytes of an EDE option */
#define P53_QCACHE_MAX_ENTRIES (1u << 20)
/* dataplane.answer_cache's default: 1024 questions (512 KiB) and 1024 picks (64 KiB) per
 * worker, docs/CONFIG.md. */
#define P53_QCACHE_DEFAULT_ENTRIES 1024u

/* p53_qcache_entry.bits */
#define P53_QC_EDNS    0x01u            /* the query had an OPT */
#define P53_QC_DO      0x80u            /* ...with DO=1 (the OPT flags byte's bit: the parse
					   keeps it as read) */
#define P53_QC_STEERED 0x04u            /* a steered RRset: `at`, the variant picked per hit */
#define P53_QC_ECS     0x08u            /* the query had one ECS option (its only one): `ans`
					   holds the records without the OPT, which each reply
					   writes with the query's ECS echoed */
/* The bits of the key (the rest are the value's) */
#define P53_QC_KEY_BITS (P53_QC_EDNS | P53_QC_DO | P53_QC_ECS)

struct p53_qcache_entry {
	uint64_t gen;                   /* image generation; 0: empty */
	uint64_t sum;                   /* RFC 1071 sums (unfolded). P53_QC_ECS: of ans (from an
					   even offset). Else what the reply's UDP checksum takes
					   from the entry: the counts, the UDP length twice (the
					   pseudo-header's and the header's) and ans at the
					   question's end (fastpath.c qc_rest()); the hit adds the
					   rest (addresses, ports, ID and flags, question). Steered:
					   unused (the pick's, per reply) */
	uint8_t counts[8];              /* the response's QDCOUNT..ARCOUNT as sent; steered: its
					   ANCOUNT 0 (the pick's, per reply) */
	uint16_t qsum;                  /* folded sum of the question (from an even offset) */
	uint16_t len;                   /* bytes of ans */
	uint16_t hflags;                /* the response's QR, AA and RCODE (the query's bits added) */
	uint16_t qtype;
	uint8_t qlen;                   /* question bytes (key) */
	uint8_t bits;                   /* P53_QC_*; after qlen: both in one load */
	uint8_t kind, rcode;            /* for the counters (answer.h) */
	uint8_t hint[2];                /* P53_QC_STEERED: the prefix length its picks are kept
					   at, IPv4 [0] and IPv6 [1] (struct p53_qcache_pick) */
	uint8_t elen;                   /* P53_QC_ECS: the length of the ECS option's data (4 and
					   the ADDRESS's bytes), part of the key: the OPT's length */
	uint8_t qbucket;                /* qtype's counter (answer.h p53_answer_stats qtype[]) */
	uint32_t cand;                  /* the slot hash of the last question that missed here: a
					   question is stored when it misses a second time in a row
					   (a name asked once, as in a random-subdomain flood, costs
					   the lookup and this store, not an entry) */
	uint16_t at;                    /* P53_QC_STEERED: the record's index (image.h node steer,
					   below 0x8000) */
	uint16_t vsum;                  /* without ECS: the folded sum of what a hit's checksum
					   check takes from the entry (fastpath.c qc_sum_ok()): the
					   query's counts (QDCOUNT 1, ARCOUNT 0 or 1), its question
					   and the bytes of its OPT the check does not load */
	uint64_t key[P53_QCACHE_KEY / 8]; /* the question, zero-padded */
	uint8_t ans[P53_QCACHE_ANS];    /* P53_QC_STEERED: its pick ids (P53_QCACHE_PICK_ID() at
					   hint[0] and hint[1]), IPv4 and IPv6, as 8-byte words, then
					   our OPT as the reply writes it (fastpath.c), then at
					   P53_QCACHE_STEER_REC its record as last found: the table's
					   generation (~0: none) and the record's offset in it */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct p53_qcache_entry) == 512, "an entry is 512 bytes");

#define P53_QCACHE_STEER_REC 32         /* a steered entry's record in ans (two 8-byte words) */
_Static_assert(offsetof(struct p53_qcache_entry, bits) == offsetof(struct p53_qcache_entry, qlen) + 1,
	       "qlen and bits are read as one 16-bit word");

/* The longest scope a pick is kept for: the client prefixes weighted and sticky hash
 * (steer.h p53_steer_bucket). A pick that depended on a longer block (a map entry for a /28)
 * is made per query: kept, it would make its record's keys that long for every client. */
#define P53_QCACHE_PICK_MAX4 24
#define P53_QCACHE_PICK_MAX6 56

/* A variant picked, as the answer writes it: for the image of generation `igen` (whose
 * entries name the record by index), the steering table of generation `tgen`, a record, a
 * question shape and a client in the prefix hi:lo of a length and family (`id`). */
struct p53_qcache_pick {
	uint64_t igen;                  /* image generation; 0: empty */
	uint64_t tgen;                  /* steer.h hdr generation */
	uint64_t hi, lo;                /* the prefix, host order (IPv4: the address in hi's low
					   32 bits), zero past its length */
	uint64_t id;                    /* P53_QCACHE_PICK_ID() */
	uint64_t rest;                  /* what the reply's UDP checksum takes from it (fastpath.c
					   qc_rest(): the counts with its an, the UDP length twice,
					   the bytes and our OPT after the question; the question's
					   length is its record's name's) */
	uint32_t off;                   /* the variant's bytes, from the table's start */
	uint16_t len;                   /* their length: the records, with DO=1 their RRSIGs */
	uint16_t an;                    /* their records */
	uint8_t scope;                  /* the pick's scope (<= the prefix's length) */
	uint8_t pad[7];
};

_Static_assert(sizeof(struct p53_qcache_pick) == 64, "a pick is 64 bytes");

/* The record (the image node's steering index `at`, below 0x8000, and the type), the prefix
 * length and family, and the question's P53_QC_EDNS | P53_QC_DO. */
#define P53_QCACHE_PICK_ID(at, qtype, len, v6, bits) \
	((uint64_t)(at) | (uint64_t)(qtype) << 16 | (uint64_t)(len) << 32 | (uint64_t)(v6) << 40 | \
	 (uint64_t)((bits) & (P53_QC_EDNS | P53_QC_DO)) << 41)

/* After this many misses in a row (no hit between them), one question in P53_QCACHE_RUN is
 * looked up until one hits (fastpath.c qc_skip()). */
#define P53_QCACHE_RUN 32u

struct p53_qcache {
	uint32_t mask;                  /* entries - 1 (of e[] and of pick[]) */
	uint32_t klim;                  /* questions of at most this many bytes are looked up:
					   P53_QCACHE_KEY, 0 in a run of misses */
	/* Counters, read racily by the control thread (pop53ctl workers --json). */
	uint64_t hits;                  /* answered from the cache */
	uint64_t misses;                /* not answered from the cache: looked up and not found,
					   or not looked up in a run of misses (`klim` 0); answered
					   by the fast answer or declined to the general responder */
	uint64_t stores;                /* answers stored */
	uint64_t pick_hits;             /* steered hits whose variant came from pick[] */
	uint64_t pick_misses;           /* ...picked from the table (kept when its scope allows) */
	struct p53_qcache_pick *pick;   /* `entries` picks, after e[] */
	uint32_t run;                   /* misses since `seen` changed */
	uint32_t seen;                  /* `hits` (its low 32 bits) when the run began */
	struct p53_qcache_entry e[];
};

/** Bytes a cache of `entries` entries (a power of two, 1..P53_QCACHE_MAX_ENTRIES) takes:
 * the question entries and as many picks (1024: 512 + 64 KiB). */
static inline size_t p53_qcache_size(uint32_t entries)
{
	return sizeof(struct p53_qcache) +
	       (size_t)entries * (sizeof(struct p53_qcache_entry) + sizeof(struct p53_qcache_pick));
}

/**
 * Make `c` (p53_qcache_size(entries) bytes, any content) an empty cache of `entries`
 * entries (a power of two). Control thread, before the worker runs.
 * @return 0, or -EINVAL: entries not a power of two in 1..P53_QCACHE_MAX_ENTRIES.
 */
int p53_qcache_init(struct p53_qcache *c, uint32_t entries);

/* The key's words of a question of `qlen` bytes (5..P53_QCACHE_KEY) at `q`, zero-padded:
 * whole words read, the last one read ending at the question's end (the bytes before it are
 * the message's) and shifted down. */
static inline __attribute__((always_inline)) void p53_qcache_key(const uint8_t *q, size_t qlen,
								  uint64_t *k)
{
	size_t i = 0, w = 0;

	for (; i + 8 <= qlen; i += 8)
		memcpy(&k[w++], q + i, 8);
	if (i < qlen) {
		uint64_t x;
		memcpy(&x, q + qlen - 8, 8);
		k[w++] = x >> (8 * (8 - (qlen - i)));
	}
	for (; w < P53_QCACHE_KEY / 8; w++)
		k[w] = 0;
}

/* The slot hash of a key: its words, its length and bits. */
static inline uint32_t p53_qcache_hash(const uint64_t *k, size_t qlen, unsigned int bits)
{
	uint32_t h = (uint32_t)(qlen | bits << 8);
	for (size_t w = 0; w < (qlen + 7) / 8; w++)
		h = p53_hash_step8(h, k[w]);
	return h;
}

#endif /* P53_QCACHE_H */

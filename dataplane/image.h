/*
 * Zone image: the compiled, immutable replica of every served zone that a worker reads.
 *
 * An image is one contiguous buffer. Every reference inside it is a 32-bit offset from the
 * start of the buffer or an index into one of its arrays, never a pointer, so a replica is
 * copied to a worker's NUMA node with one memcpy and needs no relocation. control/ writes
 * images (control/zone/image_build.c); dataplane/ only reads them. Nothing here allocates, locks
 * or makes a syscall: lookups are safe on any lcore, concurrently, for as long as the caller
 * holds the image (see the RCU rules in dataplane/replica.h and control/publish.c).
 *
 * Layout (every section 8-byte aligned):
 *
 *   struct p53_image_hdr
 *   struct p53_image_zone   zones[n_zones]
 *   uint32_t                nodes[n_nodes]        where each node lies in rdata[]: its block's
 *                                                 offset (the node heads its block); 0: free,
 *                                                 a zone's room (p53_image_zone.node_room)
 *   uint32_t                rrsets[n_rrsets]      where each RRset's header lies in rdata[];
 *                                                 each node's RRsets are contiguous; 0: free
 *   uint64_t                slots[hash_mask + 1]  open-addressing name index
 *   uint8_t                 rdata[]               node by node, a block: the node's fields
 *                                                 (struct p53_image_node), the owner name,
 *                                                 then each RRset's header and pre-encoded
 *                                                 RRs (see p53_image_rrset and Co-location)
 *   uint32_t                adds[]                additional-section lists
 *   struct p53_image_proof  proofs[n_nodes]       DNSSEC denial facts, one per node (only when
 *                                                 some zone is signed; proofs_off = 0 otherwise)
 *   uint32_t                chain[n_chain]        NSEC owners, canonical order, zone by zone
 *   struct p53_image_nsec3  nsec3[n_nsec3]        NSEC3 owners by hash, zone by zone
 *
 * Co-location (node-major): names_off == rdata_off (the header keeps both fields), and that
 * one section holds, node by node, a block, 4-byte aligned: the node's fields (struct
 * p53_image_node, 28 bytes), its owner name right after them, then, each 4-byte aligned, the
 * header of each of the node's RRsets (struct p53_image_rrset, in type order) followed by its
 * records and signatures. So a positive answer on a big zone goes from its name-index slot
 * (which holds the block's offset) to one block and reads its node, owner name, first RRset's
 * header and records from adjacent cache lines of one page (image format 9; docs/BENCHMARKS.md,
 * "Big zone, round 18"), and reaches the header from the node without reading rrsets[]
 * (p53_image_node_first()). nodes[] holds each node's block offset, for what names nodes by
 * index (zones' apexes, links between nodes, proofs, additional lists), rrsets[] each header's
 * offset, for what names RRsets by index (zones' SOA, proofs, additional lists).
 * p53_image_check() holds every image to this: nodes[i] names a node whose own index is i, its
 * name follows it, its first header lies at its name's end rounded up to 4, each next one at
 * the end of the previous one's records and signatures rounded up to 4, and rrsets[] agrees. A
 * few unreferenced zero bytes may lie between two nodes' blocks: the compiler starts a block on
 * the next line rather than let its hot bytes cross one when few are skipped
 * (P53_IMAGE_PACK_PAD in image_build.c). An IXFR patch (image_patch.c) appends a changed
 * node's whole block (the node, its name, its RRsets kept or new) and points nodes[], its
 * name-index slot and rrsets[] at it; the old block stays, unreferenced, as garbage.
 *
 * DNSSEC (see dataplane/dnssec.h): RRSIG records are not an RRset of their own; each RRset
 * carries the RRSIGs that cover it, pre-encoded right after its records, so a signed answer
 * is still one memcpy. NSEC3 records live at nodes of their hashed owner names that are kept
 * out of the name index (P53_NODE_NSEC3): a query for such a name is answered as for any name
 * that does not exist, as Knot and BIND do. Everything a denial of existence needs that does not
 * depend on the query name is precomputed per node (struct p53_image_proof); what does (the
 * NSEC covering a name below its closest encloser, the NSEC3 covering the next closer name) is
 * one binary search, after one NSEC3 hash for NSEC3.
 *
 * Name index: every owner name is in canonical form (RFC 4034 §6.2: uncompressed wire form,
 * ASCII letters lowered). A slot is (hash << 32) | the node's offset in rdata[] (nodes[]'s
 * entry; never 0: the section starts with P53_IMAGE_RDATA_HEAD unused bytes), 0 meaning empty;
 * hash is p53_name_hash() of the canonical name; collisions probe linearly
 * (p53_image_slot(), p53_image_slot_node()). A name is indexed once:
 * where two served zones both hold a name (a parent's delegation point and the child's apex,
 * or parent glue below that cut), the node of the deepest zone is indexed and the parent's
 * node stays reachable only through p53_image_zone.parent_side (the child's) and additional
 * lists. That is
 * how RFC 1034 §4.3.2 step 2 "best zone" falls out of a single hash lookup.
 */
#ifndef P53_IMAGE_H
#define P53_IMAGE_H

#include <stdint.h>
#include <stddef.h>

#define P53_IMAGE_MAGIC   0x49333550u /* "P53I" little-endian */
#define P53_IMAGE_VERSION 10u /* 7: RRset headers in the nodes' blocks (round 15); 8: the
				 parent side in the zone, the node's own index in the node;
				 9: the node in its block, nodes[] a table of offsets;
				 10: each zone's nodes and RRsets a range, in its entry
				 (88 bytes) */
#define P53_NONE          UINT32_MAX  /* absent node / rrset / offset */

/* The names-and-RDATA section's first bytes, zero and unreferenced: no node lies at offset 0,
 * so a name-index slot holding a node's offset is never 0, the empty slot. */
#define P53_IMAGE_RDATA_HEAD 8u

struct p53_image_hdr {
	uint32_t magic;
	uint32_t version;
	uint64_t size;          /* bytes in the whole image */
	uint32_t n_zones;
	uint32_t zones_off;
	uint32_t n_nodes;
	uint32_t nodes_off;     /* uint32_t[n_nodes]: nodes' offsets into rdata[] */
	uint32_t n_rrsets;
	uint32_t rrsets_off;    /* uint32_t[n_rrsets]: headers' offsets into rdata[] */
	uint32_t hash_mask;     /* slot count - 1; slot count is a power of two */
	uint32_t slots_off;
	uint32_t names_off;     /* == rdata_off: names lie in the nodes' blocks */
	uint32_t rdata_off;
	uint32_t adds_off;
	uint32_t n_records;     /* RRs compiled in, for the bytes-per-record figure */
	uint32_t max_labels;    /* the most labels of any node's name: no name with more labels
				   is in the index, so a closest-encloser walk starts there */
	uint32_t proofs_off;    /* 0 when no zone is signed, else n_nodes proofs */
	uint32_t n_chain;
	uint32_t chain_off;
	uint32_t n_nsec3;
	uint32_t nsec3_off;
	uint32_t pad;           /* bytes that IXFR patches and splices left unreferenced
				   (control/zone/image_patch.c, image_splice.c), counted exactly:
				   rounded up to KiB at each edit, they grew by 1 KiB an edit at
				   least. 0 from a full compile. Never read by the data plane */
	uint64_t generation;    /* bumped by every build, reported by pop53ctl status */
	uint64_t steer_layout;  /* the steered records' list (p53_steer_conf.layout) that the
				   nodes' `steer` indices point into; a steering table
				   (dataplane/steer.h) with the same layout is read by index,
				   any other by name. 0: no list (never matches) */
};

struct p53_image_zone {
	uint32_t apex;          /* node index of the apex */
	uint32_t soa;           /* rrset index of the apex SOA */
	uint32_t serial;        /* host order, from the SOA */
	uint32_t neg_ttl;       /* RFC 2308 §5: min(SOA TTL, SOA MINIMUM) */
	uint32_t name_off;      /* into rdata[] (names_off == rdata_off): the apex's name */
	uint8_t  name_len;
	uint8_t  labels;        /* label count, root excluded */
	uint8_t  flags;         /* P53_ZONE_SECONDARY (transfer facts; DNSSEC facts are in `dnssec`) */
	uint8_t  rcode;         /* 0: the zone's data is served. Else the zone has no data here
				   (a secondary not transferred yet or expired, a catalog zone):
				   its apex is the only node, soa is P53_NONE, and every query at
				   or below the apex gets this RCODE with AA=0 */
	uint16_t dnssec;        /* P53_ZONE_* below */
	uint32_t proof_lo;      /* NSEC3 zones: this zone's entries in nsec3[] ... */
	uint32_t proof_n;       /* ... and how many */
	uint32_t salt_off;      /* NSEC3 salt, into rdata[] (the NSEC3PARAM RDATA) */
	uint8_t  salt_len;
	uint8_t  pad;
	uint16_t nsec3_iter;    /* NSEC3 additional hash iterations (RFC 5155 §3.1.3) */
	uint32_t parent_side;   /* the apex's name's node in the parent zone when that zone is
				   served too (DS is answered from there, RFC 4035 §3.1.4.1),
				   else P53_NONE; read through p53_image_node_parent_side() */
	uint64_t sig_expire;    /* earliest RRSIG expiration, seconds since the epoch; 0 if none.
				   For the health check's signature margin (docs/ARCHITECTURE.md) */
	/* The zone's range of nodes[] (and of proofs[], which follows nodes[]) and of rrsets[]:
	 * every node of the zone lies in [node_base, node_base + n_nodes) and every RRset of
	 * those nodes in [rrset_base, rrset_base + n_rrsets); no two zones' ranges overlap, and
	 * entries outside every range are garbage a patch or a splice left (p53_image_check()).
	 * nodes_at and rrsets_at are the ranges' byte offsets in the image (the header's
	 * nodes_off + 4 * node_base, rrsets_off + 4 * rrset_base: p53_image_zones_place()). */
	uint32_t node_base;
	uint32_t n_nodes;
	uint32_t rrset_base;
	uint32_t n_rrsets;
	uint32_t nodes_at;
	uint32_t rrsets_at;
	/* Room: the free entries right after the zone's ranges, [node_base + n_nodes, + node_room)
	 * of nodes[] and proofs[], [rrset_base + n_rrsets, + rrset_room) of rrsets[], where an
	 * IXFR patch puts the zone's new nodes and RRsets without moving its ranges
	 * (image_patch.c). A free entry is 0 in nodes[] and rrsets[] (no node or header lies at
	 * offset 0, P53_IMAGE_RDATA_HEAD) and zeroed in proofs[]; it belongs to no range and is
	 * not garbage. Read as a node, offset 0 is the section's zero head: a node of zone 0
	 * outside zone 0's range, so what walks nodes[] skipping garbage skips room too.
	 * Sized by p53_image_room(). With these two an entry is 88 bytes, which
	 * p53_image_zone() (on every answer) multiplies the zone's number by in one instruction,
	 * as format 9's 56; at 80 the compiler took two (lea, shl): one more a query
	 * (docs/BENCHMARKS.md, "Format 10's worker-side costs, round 32"). */
	uint32_t node_room;
	uint32_t rrset_room;
};
_Static_assert(sizeof(struct p53_image_zone) == 88, "a zone entry is 88 bytes");

/* The room an image leaves after a zone's range of n entries (p53_image_zone.node_room): a
 * sixteenth, and 8 at least. An IXFR of a few names fits many times over in a big zone's
 * room, and in a small zone's, while the image grows by 8 bytes (a nodes[] and an rrsets[]
 * entry) for each 16 nodes and RRsets: 0.4% of a 1M-record zone's image (docs/BENCHMARKS.md,
 * "Room after each zone's ranges, round 32"), 64 bytes for a zone of a few names. */
static inline uint32_t p53_image_room(uint32_t n)
{
	return n / 16u + 8u;
}

/* p53_image_zone.dnssec */
#define P53_ZONE_SIGNED 0x0001u /* holds RRSIGs: with DO=1 they go out with their RRsets */
#define P53_ZONE_NSEC   0x0002u /* denial of existence by NSEC (RFC 4035 §3.1.3) */
#define P53_ZONE_NSEC3  0x0004u /* by NSEC3 (RFC 5155 §7.2); NSEC3PARAM at the apex */
#define P53_ZONE_OPTOUT 0x0008u /* some NSEC3 has the opt-out flag (RFC 5155 §6) */

/* p53_image_zone.flags */
#define P53_ZONE_SECONDARY 0x01u /* transferred from a primary (control/xfr/): a NOTIFY for
				    its apex is left to the control thread, not answered here */
#define P53_ZONE_XFR_SIGNED 0x02u /* its `transfer` wants a TSIG key: a signed SOA query for
				     its apex (a downstream secondary's refresh check over UDP) is
				     left to the control thread, which holds the keys */

/* p53_image_node.flags */
#define P53_NODE_APEX   0x0001u /* zone apex */
#define P53_NODE_CUT    0x0002u /* NS below the apex: delegation point (RFC 1034 §4.2.2) */
#define P53_NODE_DNAME  0x0004u /* owns a DNAME (RFC 6672) */
#define P53_NODE_CNAME  0x0008u /* owns a CNAME; the compiler guarantees it owns nothing else */
#define P53_NODE_ENT    0x0010u /* empty non-terminal: exists, owns no RRset (RFC 4592 §2.2.2) */
#define P53_NODE_WILD   0x0020u /* owner's first label is "*" */
#define P53_NODE_GLUE   0x0040u /* strictly below a cut (occluded): only for referral glue */
#define P53_NODE_NSEC3  0x0080u /* hashed owner of an NSEC3 record: not in the name index. Also
				   (with ENT, no RRsets) a name an IXFR patch removed */

/* A node heads its block in rdata[] (4-byte aligned), its canonical owner name right after
 * it (p53_image_node_name()). */
struct p53_image_node {
	uint8_t  name_len;
	uint8_t  labels;        /* label count, root excluded */
	uint16_t flags;
	uint32_t zone;          /* zone index this node belongs to */
	uint32_t rrsets;        /* index of the first RRset; node's RRsets sorted by type */
	uint16_t n_rrsets;
	uint16_t steer;         /* 1 + the index of the first steered record owned by this name
				   in a steering table of the image's steer_layout (the others
				   follow p53_steer_rec.next), or 0: none, or look it up by name */
	uint32_t wildcard;      /* node "*.<owner>" if it exists, else P53_NONE */
	uint32_t occluder;      /* closest strict ancestor in this zone that is a CUT or owns a
				   DNAME, else P53_NONE: answers at or below it are referrals or
				   DNAME synthesis, not data */
	uint32_t self;          /* this node's index in nodes[] (p53_image_node_index()): what
				   names it, the node lying in its block, not in an array */
};
_Static_assert(sizeof(struct p53_image_node) == 28, "a node is 28 bytes, its name after it");

/* Where a block (a node) starts: 4-byte aligned, as an RRset header. */
#define P53_IMAGE_NODE_ALIGN 4u

/* p53_image_rrset.flags */
#define P53_RRSET_COMPRESS 0x0001u /* RDATA holds names that may be compressed (RFC 3597 §4:
				      NS, CNAME, SOA, PTR, MX); see p53_image_rr_names() */
#define P53_RRSET_STEERED  0x0002u /* a steered record (dataplane/steer.h): its records are every
				      target of the pool, what is sent when no steering table is
				      published; with one, a variant picked per client replaces them */

/*
 * An RRset is pre-encoded: its header (4-byte aligned in rdata[]) is followed by `count`
 * records laid out exactly as they go on
 * the wire when the owner is the query name: OWNER(2) = C0 0C, a compression pointer to the
 * question (RFC 1035 §4.1.4; the question always starts at offset 12), then TYPE(2) CLASS(2)
 * TTL(4) RDLENGTH(2) RDATA, network order, names inside RDATA uncompressed and in the zone
 * file's case. So the common answer, an RRset owned by the query name, is one memcpy of the
 * whole RRset; any other owner overwrites the two pointer bytes, or writes its name instead of
 * them. RRs are in canonical order and deduplicated; all carry the RRset TTL (RFC 2181 §5.2:
 * the compiler uses the first TTL seen and warns on a mismatch, as Knot does). The RRSIGs
 * covering the RRset follow its records in the same form (owner pointer, then the record with
 * its own TTL): rdata_len covers the records, sig_len the signatures, so with DO=1 the RRset
 * and its signatures are one memcpy of rdata_len + sig_len.
 */
#define P53_RR_OWNER_LEN 2      /* the pre-encoded owner pointer before each record */
struct p53_image_rrset {
	uint16_t type;          /* host order */
	uint16_t count;         /* RRs */
	uint32_t ttl;           /* host order, same as in each record */
	uint32_t rdata_len;     /* bytes of all `count` records, owner pointers included */
	uint32_t adds;          /* P53_NONE, or index into adds[]: adds[i] = n | required << 16,
				   then n node indices whose A and AAAA go to the additional
				   section (in-zone NS, MX, SRV targets; glue for a CUT's NS).
				   The first `required` are a CUT's in-domain glue (RFC 9471: all
				   of it, or TC=1); see P53_ADDS_COUNT/P53_ADDS_REQUIRED */
	uint8_t  flags;
	uint8_t  sig_count;     /* RRSIGs covering this RRset, pre-encoded after its records... */
	uint16_t sig_len;       /* ... in this many bytes, right after the records */
};

/* Where a header starts: 4-byte aligned (its fields are 32-bit at most). */
#define P53_IMAGE_RRSET_ALIGN 4u
static inline uint64_t p53_image_rrset_at(uint64_t off)
{
	return (off + P53_IMAGE_RRSET_ALIGN - 1) & ~(uint64_t)(P53_IMAGE_RRSET_ALIGN - 1);
}

/* Bytes from a header to where the next one may start: header, records, signatures. */
static inline uint64_t p53_image_rrset_span(const struct p53_image_rrset *rs)
{
	return sizeof(*rs) + (uint64_t)rs->rdata_len + rs->sig_len;
}

/*
 * DNSSEC denial facts of one node (RFC 4035 §3.1.3, RFC 5155 §7.2), all node indices (the
 * node whose NSEC or NSEC3 RRset, with its RRSIGs, goes to the authority section) or
 * P53_NONE. Built by control/zone/dnssec_build.c, read by dataplane/dnssec.c.
 */
struct p53_image_proof {
	uint32_t match;         /* NSEC: the node's own NSEC, or for an empty non-terminal the
				   NSEC covering it. NSEC3: the NSEC3 whose hash is this name's */
	uint32_t wild;          /* NSEC/NSEC3 covering "*.<closest provable encloser>" */
	uint32_t encl;          /* NSEC3: matching the closest provable encloser (this node when
				   match is set, else its nearest ancestor that has one) */
	uint32_t nc;            /* NSEC3, when match is unset: covering the next closer name of
				   this node (its ancestor one label below the encloser; opt-out) */
	uint32_t lo;            /* NSEC: chain[lo, hi) are the NSEC owners strictly below this */
	uint32_t hi;            /* node, for the per-query cover search */
	uint8_t  encl_labels;   /* NSEC3: labels of the closest provable encloser */
	uint8_t  pad[3];
};

/* NSEC3 hashes of one zone sorted ascending: SHA-1 of the owner (RFC 5155 §5) and its node. */
#define P53_NSEC3_HASH_LEN 20
struct p53_image_nsec3 {
	uint8_t  hash[P53_NSEC3_HASH_LEN];
	uint32_t node;
};

/* The head word of an additional-section list (p53_image_rrset.adds). */
#define P53_ADDS_COUNT(head)    ((head) & 0xffffu)  /* nodes in the list */
#define P53_ADDS_REQUIRED(head) ((head) >> 16)      /* leading nodes that are in-domain glue */

/* Accessors. All take an image that passed p53_image_check(). */
static inline const struct p53_image_hdr *p53_image_hdr(const void *img)
{
	return (const struct p53_image_hdr *)img;
}

static inline const struct p53_image_zone *p53_image_zone(const void *img, uint32_t i)
{
	return (const struct p53_image_zone *)((const uint8_t *)img + p53_image_hdr(img)->zones_off) + i;
}

/* Node i's offset in the names-and-RDATA section (nodes[i]: its block's). */
static inline uint32_t p53_image_node_off(const void *img, uint32_t i)
{
	return ((const uint32_t *)((const uint8_t *)img + p53_image_hdr(img)->nodes_off))[i];
}

/* The node heading the block at section offset `off`. */
static inline const struct p53_image_node *p53_image_node_at(const void *img, uint32_t off)
{
	return (const struct p53_image_node *)((const uint8_t *)img + p53_image_hdr(img)->rdata_off + off);
}

static inline const struct p53_image_node *p53_image_node(const void *img, uint32_t i)
{
	return p53_image_node_at(img, p53_image_node_off(img, i));
}

/* RRset i's header, through rrsets[] (the hot path walks from the node instead). */
static inline const struct p53_image_rrset *p53_image_rrset(const void *img, uint32_t i)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	uint32_t off = ((const uint32_t *)((const uint8_t *)img + h->rrsets_off))[i];

	return (const struct p53_image_rrset *)((const uint8_t *)img + h->rdata_off + off);
}

/* Node i, RRset i of zone z, the indices relative to the zone's ranges (image.h,
 * p53_image_zone.node_base): read through the ranges' byte offsets, the same loads as
 * p53_image_node() and p53_image_rrset() with `z` in hand. A node's proof is
 * proofs[z->node_base + i]. An additional list's entry naming another zone's node is that
 * node's index in the image minus the list's zone's base, modulo 2^32: the byte offset is
 * summed in 32 bits, so it wraps to the node's entry (the image is below 4 GiB). */
static inline const struct p53_image_node *p53_image_znode(const void *img,
							   const struct p53_image_zone *z, uint32_t i)
{
	uint32_t at = z->nodes_at + 4u * i;

	return p53_image_node_at(img, *(const uint32_t *)((const uint8_t *)img + at));
}

static inline const struct p53_image_rrset *p53_image_zrrset(const void *img,
							     const struct p53_image_zone *z, uint32_t i)
{
	uint32_t off = ((const uint32_t *)((const uint8_t *)img + z->rrsets_at))[i];

	return (const struct p53_image_rrset *)((const uint8_t *)img + p53_image_hdr(img)->rdata_off + off);
}

/* Node i and RRset i of node n's zone (cold paths, the zone not in hand). */
static inline const struct p53_image_node *p53_image_nnode(const void *img,
							   const struct p53_image_node *n, uint32_t i)
{
	return p53_image_znode(img, p53_image_zone(img, n->zone), i);
}

static inline const struct p53_image_rrset *p53_image_nrrset(const void *img,
							     const struct p53_image_node *n, uint32_t i)
{
	return p53_image_zrrset(img, p53_image_zone(img, n->zone), i);
}

/* control/ only: each zone's nodes_at and rrsets_at from its ranges and the header's tables
 * (a writer calls it once the header and the zones' ranges are final). */
static inline void p53_image_zones_place(void *img)
{
	const struct p53_image_hdr *h = p53_image_hdr(img);
	struct p53_image_zone *z = (struct p53_image_zone *)((uint8_t *)img + h->zones_off);

	for (uint32_t i = 0; i < h->n_zones; i++) {
		z[i].nodes_at = h->nodes_off + 4u * z[i].node_base;
		z[i].rrsets_at = h->rrsets_off + 4u * z[i].rrset_base;
	}
}

static inline const uint8_t *p53_image_name(const void *img, uint32_t off)
{
	return (const uint8_t *)img + p53_image_hdr(img)->names_off + off;
}

/*
 * A node's canonical owner name (name_len bytes, right after the node), its index, the node a
 * name-index slot names, and the node a zone or a DS answer reads at a zone apex from the
 * parent's side. Readers of an image reach a node's fields through these rather than through
 * offsets, pointer differences or the slot's bits, so that where a node lies changes here only.
 */
static inline const uint8_t *p53_image_node_name(const void *img, const struct p53_image_node *n)
{
	(void)img;
	return (const uint8_t *)(n + 1);
}

static inline uint32_t p53_image_node_index(const void *img, const struct p53_image_node *n)
{
	(void)img;
	return n->self;
}

/* The node of a non-empty slot (the slot's low half is its offset in the section), and the
 * slot naming the node at section offset `off` under `hash`. */
static inline const struct p53_image_node *p53_image_slot_node(const void *img, uint64_t slot)
{
	return p53_image_node_at(img, (uint32_t)slot);
}

static inline uint64_t p53_image_slot(uint32_t hash, uint32_t off)
{
	return (uint64_t)hash << 32 | off;
}

/* The parent side is a zone's (struct p53_image_zone), found from its apex. */
static inline uint32_t p53_image_node_parent_side(const void *img, const struct p53_image_node *n)
{
	return (n->flags & P53_NODE_APEX) ? p53_image_zone(img, n->zone)->parent_side : P53_NONE;
}

/* Where a node's name lies in the names-and-RDATA section (p53_image_name() reads it): what a
 * zone's name_off copies from its apex. */
static inline uint32_t p53_image_node_name_off(const void *img, const struct p53_image_node *n)
{
	return (uint32_t)((const uint8_t *)(n + 1) - ((const uint8_t *)img + p53_image_hdr(img)->rdata_off));
}

/*
 * For control/ only, which writes images (an IXFR patch, control/zone/image_patch.c, changes
 * nodes of its new image in place): node i, writable; node i's block started at `off` in the
 * names-and-RDATA section: the node `from` (its fields as they were, or a zeroed node when
 * NULL) written there, nodes[i] pointing at it; the caller writes the name after it. Like the
 * readers, they keep where a node's fields lie in this header.
 */
static inline struct p53_image_node *p53_image_node_w(void *img, uint32_t i)
{
	return (struct p53_image_node *)(uintptr_t)p53_image_node(img, i);
}

static inline struct p53_image_node *p53_image_node_place(void *img, uint32_t i, uint32_t off,
							  const struct p53_image_node *from)
{
	struct p53_image_node *n = (struct p53_image_node *)((uint8_t *)img +
							      p53_image_hdr(img)->rdata_off + off);

	if (from != NULL)
		*n = *from;
	else
		*n = (struct p53_image_node){ 0 };
	((uint32_t *)((uint8_t *)img + p53_image_hdr(img)->nodes_off))[i] = off;
	return n;
}

/* An RRset's records (then its signatures): right after its header. */
static inline const uint8_t *p53_image_rdata(const void *img, const struct p53_image_rrset *rs)
{
	(void)img;
	return (const uint8_t *)(rs + 1);
}

/*
 * A node's RRsets, in type order, walked from the node rather than through the RRset index:
 * p53_image_node_first() is its first header, p53_image_rrset_next() the one after `rs`
 * (valid while fewer than n_rrsets have been visited). They lie in the node's block (see
 * Co-location): the first after the name, rounded up to 4, each next after the previous
 * one's records and signatures, rounded up to 4, so the hot path (the fast answer, the
 * burst's prefetch passes, p53_image_node_rrset) reads no rrsets[] entry (docs/BENCHMARKS.md,
 * "Big zone, round 15"). p53_image_check() holds rrsets[] to the same headers.
 */
static inline const struct p53_image_rrset *p53_image_node_first(const void *img,
								 const struct p53_image_node *n)
{
	(void)img;
	/* The section and the block start 4-byte aligned (image.c checks the image's address):
	 * the name's end rounded up in memory is the same place as in the section. */
	return (const struct p53_image_rrset *)(uintptr_t)
		p53_image_rrset_at((uintptr_t)((const uint8_t *)(n + 1) + n->name_len));
}

static inline const struct p53_image_rrset *p53_image_rrset_next(const void *img,
								 const struct p53_image_rrset *rs)
{
	(void)img;
	return (const struct p53_image_rrset *)((const uint8_t *)rs +
		p53_image_rrset_at(p53_image_rrset_span(rs)));
}

/**
 * Find a node's RRset of one type (its RRsets are sorted by type).
 *
 * @param rsi  when not NULL, set to the RRset's index (P53_NONE when absent)
 * @return its header, or NULL.
 */
static inline const struct p53_image_rrset *p53_image_node_find(const void *img,
								const struct p53_image_node *n,
								uint16_t type, uint32_t *rsi)
{
	const struct p53_image_rrset *rs = p53_image_node_first(img, n);

	for (uint32_t i = 0; i < n->n_rrsets; i++, rs = p53_image_rrset_next(img, rs)) {
		if (rs->type == type) {
			if (rsi != NULL)
				*rsi = n->rrsets + i;
			return rs;
		}
		if (rs->type > type)
			break;
	}
	if (rsi != NULL)
		*rsi = P53_NONE;
	return NULL;
}

static inline const uint32_t *p53_image_adds(const void *img, uint32_t i)
{
	return (const uint32_t *)((const uint8_t *)img + p53_image_hdr(img)->adds_off) + i;
}

static inline const struct p53_image_proof *p53_image_proof(const void *img, uint32_t node)
{
	return (const struct p53_image_proof *)((const uint8_t *)img + p53_image_hdr(img)->proofs_off) + node;
}

static inline const uint32_t *p53_image_chain(const void *img)
{
	return (const uint32_t *)((const uint8_t *)img + p53_image_hdr(img)->chain_off);
}

static inline const struct p53_image_nsec3 *p53_image_nsec3(const void *img)
{
	return (const struct p53_image_nsec3 *)((const uint8_t *)img + p53_image_hdr(img)->nsec3_off);
}

static inline const uint64_t *p53_image_slots(const void *img)
{
	return (const uint64_t *)((const uint8_t *)img + p53_image_hdr(img)->slots_off);
}

/**
 * Check an image before workers read it without bounds checks: the header (magic, version,
 * size), that every section lies inside the image, aligned and in order (and the image
 * 8-byte aligned in memory), and every index the data plane follows: each nodes[] entry (a
 * node inside the names-and-RDATA section, 4-byte aligned, whose own index is the entry's),
 * each node's name (well-formed, after it, inside the section), zone, RRset range, wildcard
 * and occluder, and its block (its RRsets' headers where p53_image_node_first() and
 * p53_image_rrset_next() find them, and rrsets[] naming the same ones); each RRset's header (4-byte aligned, inside the section), its
 * records (they fill its RDATA range exactly; CNAME/DNAME targets are names) and its
 * additional list (inside adds[], naming nodes); each zone's apex, SOA, name and parent side; each
 * name-index slot's node (an offset a nodes[] entry holds), and that the index has an empty
 * slot. It does not check what the compiler decides (RRsets sorted by type,
 * hashes matching names, flags matching RRsets beyond CNAME): a wrong one gives a wrong
 * answer, never a read outside the image.
 *
 * Costs O(image size): the control thread runs it on every publish.
 *
 * @param why  when not NULL, set to a short reason on failure
 * @return 0, or -EINVAL.
 * Thread-safe; any lcore.
 */
int p53_image_check(const void *img, size_t len, const char **why);

/**
 * p53_image_check() for an image made from `prev` (an IXFR patch: prev's sections copied,
 * then appended to): when prev's additional lists are the first bytes of img's and it has
 * no more nodes, RRsets or labels and no longer a names-and-RDATA section (compared here),
 * a node equal to prev's at the same index and offset over the same name bytes is not
 * checked again but for its own index and its block, and the records of an RRset at prev's offset with prev's header fields
 * and records are not walked again; every block, header bound and additional list, the
 * zones, the name index and the DNSSEC tables are checked. Otherwise the whole check. Same
 * verdict as p53_image_check() whenever `prev` passed it.
 *
 * @param prev  an image that passed the check, or NULL
 * @param from  when not NULL, set to 1 when prev's headers were taken as checked
 * @return 0, or -EINVAL.
 */
int p53_image_check_from(const void *img, size_t len, const void *prev, int *from,
			 const char **why);

/**
 * Find the node of a canonical (lower-case, uncompressed) wire name.
 *
 * @param name  canonical wire name, root label included
 * @param len   its length in bytes
 * @param hash  p53_name_hash(name, len)
 * @return node index, or P53_NONE when the name is not indexed.
 * Thread-safe; any lcore; no allocation.
 */
uint32_t p53_image_find(const void *img, const uint8_t *name, size_t len, uint32_t hash);

/**
 * Find a node's RRset of one type.
 *
 * @return rrset index, or P53_NONE.
 */
uint32_t p53_image_node_rrset(const void *img, const struct p53_image_node *node, uint16_t type);

#endif /* P53_IMAGE_H */

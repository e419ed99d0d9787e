/* The steering compiler; see steer_build.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <maxminddb.h>

#include "control/steer/steer_build.h"
#include "dataplane/name.h"

#define NOLOC P53_STEER_NOLOC

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	uint32_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, (size_t)n * sz);
	if (q == NULL)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* ---- prefix trie to blocks ---- */

int p53_steer_trie_init(struct p53_steer_trie *t, unsigned int bits)
{
	memset(t, 0, sizeof(*t));
	t->bits = bits;
	if (grow((void **)&t->node, &t->cap, 1, sizeof(*t->node)) < 0)
		return -1;
	t->node[0][0] = t->node[0][1] = 0;
	t->node[0][2] = NOLOC;
	t->n = 1;
	return 0;
}

static int bit_of(const uint8_t *a, unsigned int i)
{
	return (a[i / 8] >> (7 - i % 8)) & 1;
}

int p53_steer_trie_add(struct p53_steer_trie *t, const uint8_t *addr, unsigned int len, uint32_t loc)
{
	uint32_t n = 0;

	for (unsigned int i = 0; i < len; i++) {
		int b = bit_of(addr, i);
		if (t->node[n][b] == 0) {
			if (grow((void **)&t->node, &t->cap, t->n + 1, sizeof(*t->node)) < 0)
				return -1;
			t->node[t->n][0] = t->node[t->n][1] = 0;
			t->node[t->n][2] = NOLOC;
			t->node[n][b] = t->n++;
		}
		n = t->node[n][b];
	}
	if (t->node[n][2] == NOLOC)
		t->node[n][2] = loc;
	return 0;
}

/* Append a block; a block with no location right after another is part of that one's run
 * (steer.h: the lookup gives a run the scope of the largest aligned block around the address
 * inside it), so it is not stored. */
static int block(struct p53_steer_source *o, unsigned int bits, const uint8_t *a, unsigned int len,
		 uint32_t loc)
{
	if (loc == NOLOC) {
		if (bits == 32 ? o->n4 > 0 && o->b4[o->n4 - 1].loc_len >> 8 == NOLOC
			       : o->n6 > 0 && o->b6[o->n6 - 1].loc_len >> 8 == NOLOC)
			return 0;
		len = 0;
	}
	if (bits == 32) {
		if (grow((void **)&o->b4, &o->cap4, o->n4 + 1, sizeof(*o->b4)) < 0)
			return -1;
		o->b4[o->n4].start = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
		o->b4[o->n4++].loc_len = loc << 8 | len;
		return 0;
	}
	if (grow((void **)&o->b6, &o->cap6, o->n6 + 1, sizeof(*o->b6)) < 0)
		return -1;
	struct p53_steer_b6 *b = &o->b6[o->n6++];
	b->hi = b->lo = 0;
	for (int i = 0; i < 8; i++) {
		b->hi = b->hi << 8 | a[i];
		b->lo = b->lo << 8 | a[8 + i];
	}
	b->loc_len = loc << 8 | len;
	b->pad = 0;
	return 0;
}

static void set_bit(uint8_t *a, unsigned int i, int v)
{
	if (v)
		a[i / 8] = (uint8_t)(a[i / 8] | (0x80 >> (i % 8)));
	else
		a[i / 8] = (uint8_t)(a[i / 8] & ~(0x80 >> (i % 8)));
}

static int emit(const struct p53_steer_trie *t, uint32_t n, unsigned int depth, uint8_t *a,
		uint32_t inherited, struct p53_steer_source *o)
{
	uint32_t loc = t->node[n][2] != NOLOC ? t->node[n][2] : inherited;

	if (t->node[n][0] == 0 && t->node[n][1] == 0)
		return block(o, t->bits, a, depth, loc);
	for (int b = 0; b < 2; b++) {
		set_bit(a, depth, b);
		int rc = t->node[n][b] != 0 ? emit(t, t->node[n][b], depth + 1, a, loc, o) :
			 block(o, t->bits, a, depth + 1, loc);
		if (rc < 0)
			return -1;
	}
	set_bit(a, depth, 0);
	return 0;
}

int p53_steer_trie_emit(const struct p53_steer_trie *t, struct p53_steer_source *out)
{
	uint8_t a[16] = {0};

	return emit(t, 0, 0, a, NOLOC, out);
}

void p53_steer_trie_free(struct p53_steer_trie *t)
{
	free(t->node);
	memset(t, 0, sizeof(*t));
}

/* ---- the subnet map (JSON) ---- */

static int add_loc(struct p53_steer_source *s)
{
	if (grow((void **)&s->locs, &s->cap_locs, s->n_locs + 1, sizeof(*s->locs)) < 0)
		return -1;
	memset(&s->locs[s->n_locs], 0, sizeof(*s->locs));
	s->n_locs++;
	return 0;
}

/* A map prefix waiting to go into the trie: the prefixes are inserted in address order, so
 * that consecutive inserts walk the same (cached) path and the nodes are laid out in the
 * order emit() reads them (a 1M-subnet map in JSON order spent most of its compile in cache
 * misses of p53_steer_trie_add). seq keeps the first entry naming a prefix the winner. */
struct pending {
	uint8_t a[16];
	uint8_t len, v6;
	uint32_t loc, seq;
};

static int pending_cmp(const void *x, const void *y)
{
	const struct pending *p = x, *q = y;
	int c = memcmp(p->a, q->a, sizeof(p->a));

	if (c != 0)
		return c;
	if (p->len != q->len)
		return p->len < q->len ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/* The line of the first occurrence of "needle" (with its quotes) in a file, 0 when not found:
 * jansson keeps no positions for values, so a bad value is located by its text. */
static int line_of(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char q[80];
	size_t nq, at = 0;
	int c, line = 1;

	if (f == NULL)
		return 0;
	nq = (size_t)snprintf(q, sizeof(q), "\"%s\"", needle);
	if (nq >= sizeof(q)) {
		fclose(f);
		return 0;
	}
	while ((c = getc(f)) != EOF) {
		if ((char)c == q[at]) {
			if (++at == nq) {
				fclose(f);
				return line;
			}
			continue;
		}
		at = (char)c == q[0] ? 1 : 0;
		if (c == '\n')
			line++;
	}
	fclose(f);
	return 0;
}

/* "path:line" for a bad value of the map, or "path" when its line is not found. */
static const char *at_value(char *buf, size_t cap, const char *path, const char *value)
{
	int line = value != NULL ? line_of(path, value) : 0;

	if (line > 0)
		snprintf(buf, cap, "%s:%d", path, line);
	else
		snprintf(buf, cap, "%s", path);
	return buf;
}

static int map_load(const char *path, struct p53_steer_source *s, char *err, size_t errlen)
{
	char where[4200];
	struct p53_steer_trie t4, t6;
	struct pending *pend = NULL;
	uint32_t n_pend = 0, cap_pend = 0;
	json_error_t je;
	int rc = -1;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);

	if (root == NULL && je.line > 0)
		return fail(err, errlen, "%s:%d: %s", path, je.line, je.text);
	if (root == NULL)
		return fail(err, errlen, "%s: %s", path, je.text);
	if (p53_steer_trie_init(&t4, 32) < 0 || p53_steer_trie_init(&t6, 128) < 0) {
		json_decref(root);
		return fail(err, errlen, "%s: out of memory", path);
	}
	if (!json_is_array(root)) {
		fail(err, errlen, "%s: expected a list of {\"networks\": [...], \"labels\": [...]}", path);
		goto out;
	}
	size_t i;
	json_t *e;
	json_array_foreach(root, i, e) {
		json_t *nets = json_object_get(e, "networks"), *labels = json_object_get(e, "labels");
		if (!json_is_object(e) || !json_is_array(nets) || !json_is_array(labels) ||
		    json_object_size(e) != 2) {
			fail(err, errlen, "%s: entry %zu: expected exactly \"networks\" and \"labels\" lists", path, i);
			goto out;
		}
		if (json_array_size(labels) == 0 || json_array_size(labels) > P53_STEER_MAX_LABELS) {
			fail(err, errlen, "%s: entry %zu: 1 to %d labels", path, i, P53_STEER_MAX_LABELS);
			goto out;
		}
		if (add_loc(s) < 0)
			goto oom;
		struct p53_steer_loc *l = &s->locs[s->n_locs - 1];
		size_t j;
		json_t *x;
		json_array_foreach(labels, j, x) {
			if (!json_is_string(x)) {
				fail(err, errlen, "%s: entry %zu: labels[%zu] is not a string", path, i, j);
				goto out;
			}
			if ((l->labels[l->n_labels++] = strdup(json_string_value(x))) == NULL)
				goto oom;
		}
		json_array_foreach(nets, j, x) {
			const char *n = json_is_string(x) ? json_string_value(x) : NULL;
			char buf[64];
			uint8_t a[16] = {0};
			char *slash;
			long len = -1;
			int v6;
			if (n == NULL || strlen(n) >= sizeof(buf)) {
				fail(err, errlen, "%s: entry %zu: networks[%zu] is not a CIDR string",
				     at_value(where, sizeof(where), path, n), i, j);
				goto out;
			}
			strcpy(buf, n);
			slash = strchr(buf, '/');
			if (slash != NULL) {
				*slash = '\0';
				char *end;
				len = strtol(slash + 1, &end, 10);
				if (end == slash + 1 || *end != '\0')
					len = -2;
			}
			v6 = strchr(buf, ':') != NULL;
			if (inet_pton(v6 ? AF_INET6 : AF_INET, buf, a) != 1 || len == -2 ||
			    len > (v6 ? 128 : 32)) {
				fail(err, errlen, "%s: entry %zu: networks[%zu] '%s' is not an IPv4 or IPv6 CIDR",
				     at_value(where, sizeof(where), path, n), i, j, n);
				goto out;
			}
			if (len < 0)
				len = v6 ? 128 : 32;
			for (unsigned int b = (unsigned int)len; b < (v6 ? 128u : 32u); b++)
				if (bit_of(a, b)) {
					fail(err, errlen, "%s: entry %zu: networks[%zu] '%s' has bits set past /%ld",
					     at_value(where, sizeof(where), path, n), i, j, n, len);
					goto out;
				}
			if (grow((void **)&pend, &cap_pend, n_pend + 1, sizeof(*pend)) < 0)
				goto oom;
			memcpy(pend[n_pend].a, a, sizeof(a));
			pend[n_pend].len = (uint8_t)len;
			pend[n_pend].v6 = (uint8_t)v6;
			pend[n_pend].loc = s->n_locs - 1;
			pend[n_pend].seq = n_pend;
			n_pend++;
		}
	}
	s->n_nets = n_pend;
	if (n_pend > 0)
		qsort(pend, n_pend, sizeof(*pend), pending_cmp);
	for (uint32_t k = 0; k < n_pend; k++)
		if (p53_steer_trie_add(pend[k].v6 ? &t6 : &t4, pend[k].a, pend[k].len, pend[k].loc) < 0)
			goto oom;
	if (p53_steer_trie_emit(&t4, s) < 0 || p53_steer_trie_emit(&t6, s) < 0)
		goto oom;
	rc = 0;
	goto out;
oom:
	fail(err, errlen, "%s: out of memory", path);
out:
	free(pend);
	p53_steer_trie_free(&t4);
	p53_steer_trie_free(&t6);
	json_decref(root);
	return rc;
}

/* ---- the MaxMind DB ---- */

struct walk {
	MMDB_s *db;
	struct p53_steer_source *s;
	unsigned int bits;              /* 32 for the IPv4 tree, 128 for IPv6 */
	uint64_t v4_node;               /* the IPv4 subtree's node (UINT64_MAX: none): the IPv6
					   walk does not enter it again, at ::/96 nor where
					   ::ffff:0:0/96 and 2002::/16 alias it */
	struct seen {                   /* data offset + 1 -> location, open addressing */
		uint64_t key;
		uint32_t loc;
	} *seen;                        /* sized by the distinct records (it doubles at half
					   full), not by the nodes: a GeoLite2-sized tree has 14M
					   nodes but 100k records, and a table for the nodes
					   (384 MB) missed the cache on every lookup */
	uint32_t seen_mask, seen_n;
	int depth_guard;
	char *err;
	size_t errlen;
};

static void str_at(MMDB_entry_s *e, char *out, size_t cap, const char *a, const char *b)
{
	MMDB_entry_data_s d;

	out[0] = '\0';
	if (MMDB_get_value(e, &d, a, b, NULL) == MMDB_SUCCESS && d.has_data &&
	    d.type == MMDB_DATA_TYPE_UTF8_STRING && d.data_size < cap) {
		memcpy(out, d.utf8_string, d.data_size);
		out[d.data_size] = '\0';
	}
}

static char *dup_at(MMDB_entry_s *e, const char *a, const char *b, const char *c, bool *oom)
{
	MMDB_entry_data_s d;
	char *s;

	if (MMDB_get_value(e, &d, a, b, c, NULL) != MMDB_SUCCESS || !d.has_data ||
	    d.type != MMDB_DATA_TYPE_UTF8_STRING)
		return NULL;
	if ((s = strndup(d.utf8_string, d.data_size)) == NULL)
		*oom = true;
	return s;
}

static uint32_t u32_at(MMDB_entry_s *e, const char *a, const char *b)
{
	MMDB_entry_data_s d;

	if (MMDB_get_value(e, &d, a, b, NULL) != MMDB_SUCCESS || !d.has_data)
		return 0;
	if (d.type == MMDB_DATA_TYPE_UINT32)
		return d.uint32;
	if (d.type == MMDB_DATA_TYPE_UINT16)
		return d.uint16;
	return 0;
}

static int num_at(MMDB_entry_s *e, double *out, const char *a, const char *b)
{
	MMDB_entry_data_s d;

	if (MMDB_get_value(e, &d, a, b, NULL) != MMDB_SUCCESS || !d.has_data)
		return -1;
	if (d.type == MMDB_DATA_TYPE_DOUBLE)
		*out = d.double_value;
	else if (d.type == MMDB_DATA_TYPE_FLOAT)
		*out = d.float_value;
	else
		return -1;
	return 0;
}

static uint32_t seen_hash(uint64_t key, uint32_t mask)
{
	return (uint32_t)(key * 0x9e3779b97f4a7c15ull >> 32) & mask;
}

/* Doubles the table of records seen. @return 0, or -1 out of memory. */
static int seen_grow(struct walk *w)
{
	uint32_t cap = (w->seen_mask + 1) * 2, mask = cap - 1;
	struct seen *t;

	if (cap == 0 || (t = calloc(cap, sizeof(*t))) == NULL)
		return -1;
	for (uint32_t i = 0; i <= w->seen_mask; i++) {
		if (w->seen[i].key == 0)
			continue;
		uint32_t h = seen_hash(w->seen[i].key, mask);
		while (t[h].key != 0)
			h = (h + 1) & mask;
		t[h] = w->seen[i];
	}
	free(w->seen);
	w->seen = t;
	w->seen_mask = mask;
	return 0;
}

/* The location of a data record, made once per distinct record. */
static int loc_of(struct walk *w, MMDB_entry_s *e, uint32_t *loc)
{
	uint64_t key = (uint64_t)e->offset + 1;
	uint32_t h = seen_hash(key, w->seen_mask);

	while (w->seen[h].key != 0) {
		if (w->seen[h].key == key) {
			*loc = w->seen[h].loc;
			return 0;
		}
		h = (h + 1) & w->seen_mask;
	}
	if ((w->seen_n + 1) * 2 >= w->seen_mask) {
		if (seen_grow(w) < 0)
			return -1;
		h = seen_hash(key, w->seen_mask);
		while (w->seen[h].key != 0)
			h = (h + 1) & w->seen_mask;
	}
	if (add_loc(w->s) < 0)
		return -1;
	struct p53_steer_loc *l = &w->s->locs[w->s->n_locs - 1];
	str_at(e, l->country, sizeof(l->country), "country", "iso_code");
	str_at(e, l->continent, sizeof(l->continent), "continent", "code");
	for (int i = 0; i < 2; i++) {
		MMDB_entry_data_s d;
		char idx[2] = { (char)('0' + i), '\0' };
		l->subdivision[i][0] = '\0';
		if (MMDB_get_value(e, &d, "subdivisions", idx, "iso_code", NULL) == MMDB_SUCCESS &&
		    d.has_data && d.type == MMDB_DATA_TYPE_UTF8_STRING &&
		    d.data_size < sizeof(l->subdivision[i])) {
			memcpy(l->subdivision[i], d.utf8_string, d.data_size);
			l->subdivision[i][d.data_size] = '\0';
		}
	}
	bool oom = false;
	l->city_id = u32_at(e, "city", "geoname_id");
	l->city = dup_at(e, "city", "names", "en", &oom);
	l->asn = u32_at(e, "autonomous_system_number", NULL);
	l->org = dup_at(e, "autonomous_system_organization", NULL, NULL, &oom);
	if (oom)
		return -1;
	l->has_pos = num_at(e, &l->lat, "location", "latitude") == 0 &&
		     num_at(e, &l->lon, "location", "longitude") == 0;
	w->seen[h].key = key;
	w->seen[h].loc = w->s->n_locs - 1;
	w->seen_n++;
	*loc = w->s->n_locs - 1;
	return 0;
}

static int walk_node(struct walk *w, uint32_t node, unsigned int depth, uint8_t *a)
{
	MMDB_search_node_s sn;

	if (depth >= w->bits || MMDB_read_node(w->db, node, &sn) != MMDB_SUCCESS)
		return fail(w->err, w->errlen, "%s: corrupt search tree", w->db->filename);
	for (int b = 0; b < 2; b++) {
		uint8_t type = b ? sn.right_record_type : sn.left_record_type;
		uint64_t rec = b ? sn.right_record : sn.left_record;
		MMDB_entry_s *e = b ? &sn.right_record_entry : &sn.left_record_entry;
		uint32_t loc = NOLOC;
		int rc = 0;
		set_bit(a, depth, b);
		if (type == MMDB_RECORD_TYPE_SEARCH_NODE && w->bits == 128 && rec == w->v4_node) {
			/* IPv4 clients are looked up in the IPv4 blocks; IPv6 addresses
			 * embedding an IPv4 one get no location rather than a second copy of
			 * every IPv4 network (three, with MaxMind's aliases). */
			rc = block(w->s, w->bits, a, depth + 1, NOLOC);
		} else if (type == MMDB_RECORD_TYPE_SEARCH_NODE) {
			rc = walk_node(w, (uint32_t)rec, depth + 1, a);
		} else if (type == MMDB_RECORD_TYPE_DATA) {
			if (loc_of(w, e, &loc) < 0)
				return fail(w->err, w->errlen, "%s: out of memory", w->db->filename);
			rc = block(w->s, w->bits, a, depth + 1, loc);
		} else if (type == MMDB_RECORD_TYPE_EMPTY) {
			rc = block(w->s, w->bits, a, depth + 1, NOLOC);
		} else {
			return fail(w->err, w->errlen, "%s: invalid record in the search tree", w->db->filename);
		}
		if (rc < 0)
			return rc;
	}
	set_bit(a, depth, 0);
	return 0;
}

static int geo_load(const char *path, struct p53_steer_source *s, char *err, size_t errlen)
{
	MMDB_s db;
	int st = MMDB_open(path, MMDB_MODE_MMAP, &db);
	struct walk w = { .db = &db, .s = s, .v4_node = UINT64_MAX, .err = err, .errlen = errlen };
	uint8_t a[16] = {0};
	int rc = -1;

	if (st != MMDB_SUCCESS)
		return fail(err, errlen, "%s: %s", path, MMDB_strerror(st));
	s->build_epoch = db.metadata.build_epoch;
	if (db.metadata.database_type != NULL)
		snprintf(s->kind, sizeof(s->kind), "%s", db.metadata.database_type);
	w.seen = calloc(1024, sizeof(*w.seen));
	w.seen_mask = 1024 - 1;
	if (w.seen == NULL) {
		fail(err, errlen, "%s: out of memory", path);
		goto out;
	}
	/* IPv4: in an IPv6 tree, the subtree at ::/96 (where libmaxminddb looks IPv4 up too). */
	uint32_t v4 = 0;
	unsigned int skip = db.metadata.ip_version == 6 ? 96 : 0;
	int v4_empty = 0;
	for (unsigned int i = 0; i < skip; i++) {
		MMDB_search_node_s sn;
		if (MMDB_read_node(&db, v4, &sn) != MMDB_SUCCESS) {
			fail(err, errlen, "%s: corrupt search tree", path);
			goto out;
		}
		if (sn.left_record_type != MMDB_RECORD_TYPE_SEARCH_NODE) {
			v4_empty = 1; /* no IPv4 data (a record above ::/96 covers it: not IPv4 data) */
			break;
		}
		v4 = (uint32_t)sn.left_record;
	}
	w.bits = 32;
	if (v4_empty) {
		if (block(s, 32, a, 0, NOLOC) < 0)
			goto oom;
	} else if (walk_node(&w, v4, 0, a) < 0) {
		goto out;
	}
	if (skip > 0 && !v4_empty)
		w.v4_node = v4;
	if (db.metadata.ip_version == 6) {
		w.bits = 128;
		memset(a, 0, sizeof(a));
		if (walk_node(&w, 0, 0, a) < 0)
			goto out;
	}
	for (uint32_t i = 0; i < s->n4; i++)
		s->n_nets += s->b4[i].loc_len >> 8 != NOLOC;
	for (uint32_t i = 0; i < s->n6; i++)
		s->n_nets += s->b6[i].loc_len >> 8 != NOLOC;
	rc = 0;
	goto out;
oom:
	fail(err, errlen, "%s: out of memory", path);
out:
	free(w.seen);
	MMDB_close(&db);
	return rc;
}

int p53_steer_sources_load(const struct p53_steer_conf *conf, struct p53_steer_sources *s,
			   char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (conf->map != NULL && map_load(conf->map, &s->src[P53_STEER_SRC_MAP], err, errlen) < 0)
		goto fail;
	if (conf->geoip != NULL && geo_load(conf->geoip, &s->src[P53_STEER_SRC_GEO], err, errlen) < 0)
		goto fail;
	if (conf->asn_db != NULL && geo_load(conf->asn_db, &s->src[P53_STEER_SRC_ASN], err, errlen) < 0)
		goto fail;
	return 0;
fail:
	p53_steer_sources_free(s);
	return -1;
}

void p53_steer_sources_free(struct p53_steer_sources *s)
{
	for (int i = 0; i < P53_STEER_SRCS; i++) {
		struct p53_steer_source *x = &s->src[i];
		for (uint32_t l = 0; l < x->n_locs; l++) {
			for (int k = 0; k < x->locs[l].n_labels; k++)
				free(x->locs[l].labels[k]);
			free(x->locs[l].city);
			free(x->locs[l].org);
		}
		free(x->locs);
		free(x->b4);
		free(x->b6);
	}
	memset(s, 0, sizeof(*s));
}

/* ---- decisions ---- */

double p53_steer_miles(double lat1, double lon1, double lat2, double lon2)
{
	const double r = 3958.8, d2r = M_PI / 180.0;
	double dlat = (lat2 - lat1) * d2r, dlon = (lon2 - lon1) * d2r;
	double h = sin(dlat / 2) * sin(dlat / 2) +
		   cos(lat1 * d2r) * cos(lat2 * d2r) * sin(dlon / 2) * sin(dlon / 2);
	return 2 * r * asin(sqrt(h > 1 ? 1 : h));
}

int p53_steer_by_distance(const struct p53_steer_record *r, const bool *up, double lat, double lon,
			  uint8_t *out, double *dist)
{
	double d[P53_STEER_MAX_POOL];
	int n = 0;

	for (int i = 0; i < r->n_pool; i++) {
		const struct p53_steer_target *t = &r->pool[i];
		if (!up[i] || !t->has_pos || t->weight == 0)
			continue;
		double x = p53_steer_miles(lat, lon, t->latitude, t->longitude);
		int j = n++;
		/* Insertion sort; ties keep pool order. */
		while (j > 0 && d[j - 1] > x) {
			d[j] = d[j - 1];
			out[j] = out[j - 1];
			j--;
		}
		d[j] = x;
		out[j] = (uint8_t)i;
	}
	if (dist != NULL)
		memcpy(dist, d, (size_t)n * sizeof(*d));
	return n;
}

struct variant {
	uint32_t rec;
	uint32_t ttl;
	uint8_t n;
	uint8_t t[P53_STEER_MAX_POOL];
};

struct out {
	struct variant *v;
	uint32_t n_v, cap_v;
	uint32_t first_v;               /* this record's first variant (dedup is per record) */
	uint32_t *dec;
	uint32_t n_dec, cap_dec;
};

static uint32_t variant_of(struct out *o, uint32_t rec, uint32_t ttl, const uint8_t *t, int n)
{
	for (uint32_t i = o->first_v; i < o->n_v; i++)
		if (o->v[i].ttl == ttl && o->v[i].n == n && memcmp(o->v[i].t, t, (size_t)n) == 0)
			return i;
	if (grow((void **)&o->v, &o->cap_v, o->n_v + 1, sizeof(*o->v)) < 0)
		return UINT32_MAX - 1;
	struct variant *v = &o->v[o->n_v];
	v->rec = rec;
	v->ttl = ttl;
	v->n = (uint8_t)n;
	memcpy(v->t, t, (size_t)n);
	return o->n_v++;
}

/* The up targets at the first label, in preference order, that has any. */
static int by_labels(const struct p53_steer_record *r, const bool *up, char *const *labels,
		     int n_labels, uint8_t *t)
{
	for (int l = 0; l < n_labels; l++) {
		int n = 0;
		for (int i = 0; i < r->n_pool; i++)
			if (up[i] && r->pool[i].weight > 0 && r->pool[i].pop != NULL &&
			    strcasecmp(r->pool[i].pop, labels[l]) == 0)
				t[n++] = (uint8_t)i;
		if (n > 0)
			return n;
	}
	return 0;
}

enum { GEO_CITY, GEO_SUBDIVISION, GEO_COUNTRY, GEO_CONTINENT, GEO_ASN };

/* Does rule x hold for location l, read as the given tier? */
static bool geo_match(const struct p53_steer_geo_rule *x, const struct p53_steer_loc *l, int tier)
{
	switch (tier) {
	case GEO_CITY:
		return x->city != 0 && x->city == l->city_id;
	case GEO_SUBDIVISION:
		/* "US-CA": the record's country, then any of its subdivisions. */
		if (x->subdivision == NULL || l->country[0] == '\0' ||
		    strncasecmp(x->subdivision, l->country, 2) != 0)
			return false;
		for (int i = 0; i < 2; i++)
			if (l->subdivision[i][0] != '\0' && strcasecmp(x->subdivision + 3, l->subdivision[i]) == 0)
				return true;
		return false;
	case GEO_COUNTRY:
		return x->country != NULL && l->country[0] != '\0' && strcasecmp(x->country, l->country) == 0;
	case GEO_CONTINENT:
		return x->continent != NULL && l->continent[0] != '\0' &&
		       strcasecmp(x->continent, l->continent) == 0;
	default:
		return x->asn != 0 && x->asn == l->asn;
	}
}

static int decide(const struct p53_steer_record *r, const bool *up, int policy,
		  const struct p53_steer_loc *l, uint8_t *t, uint32_t *ttl)
{
	*ttl = r->ttl;
	if (policy == P53_POLICY_MAP)
		return by_labels(r, up, l->labels, l->n_labels, t);
	if (policy == P53_POLICY_GEO || policy == P53_POLICY_ASN) {
		/* The most specific rule first: asn (its own policy), else city, subdivision,
		 * country, continent; in config order within a tier; a rule whose targets are all
		 * down gives way to the next. */
		int first = policy == P53_POLICY_ASN ? GEO_ASN : GEO_CITY;
		int last = policy == P53_POLICY_ASN ? GEO_ASN : GEO_CONTINENT;
		for (int tier = first; tier <= last; tier++)
			for (int g = 0; g < r->n_geo; g++) {
				const struct p53_steer_geo_rule *x = &r->geo[g];
				if (!geo_match(x, l, tier))
					continue;
				int n = by_labels(r, up, x->labels, x->n_labels, t);
				if (n > 0)
					return n;
			}
		return 0;
	}
	/* nearest */
	if (!l->has_pos)
		return 0;
	double d[P53_STEER_MAX_POOL];
	int n = p53_steer_by_distance(r, up, l->lat, l->lon, t, d);
	if (n > (int)r->nearest)
		n = (int)r->nearest;
	if (r->hybrid && n >= 2) {
		/* The operator's rule: a second target over ratio x as far and over `miles`
		 * farther is not worth offering; one answer, kept briefly. */
		if (d[1] * 100.0 > d[0] * r->ratio_pct && d[1] - d[0] > r->miles) {
			*ttl = r->ttl_single;
			return 1;
		}
		*ttl = r->ttl_multi;
	} else if (r->hybrid && n == 1) {
		*ttl = r->ttl_single;
	}
	return n;
}

/* sticky's hash of a bucket and a target name: FNV-1a of the name, beside the bucket, through
 * splitmix64's finaliser (FNV alone over bucket then name left the targets' shares skewed). */
static uint32_t score(uint32_t bucket, const char *name)
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p != '\0'; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	uint64_t x = ((uint64_t)h << 32 | bucket) + 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (uint32_t)(x >> 32);
}

int p53_steer_decide_client(const struct p53_steer_record *r, const bool *up, int policy,
			    uint32_t bucket, uint8_t *t)
{
	int n = 0;

	if (policy == P53_POLICY_PRIORITY) {
		unsigned int best = UINT32_MAX;
		for (int i = 0; i < r->n_pool; i++)
			if (up[i] && r->pool[i].weight > 0 && r->pool[i].priority < best)
				best = r->pool[i].priority;
		for (int i = 0; i < r->n_pool; i++)
			if (up[i] && r->pool[i].weight > 0 && r->pool[i].priority == best)
				t[n++] = (uint8_t)i;
		return n;
	}
	if (policy == P53_POLICY_WEIGHTED) {
		/* The bucket's point in the weight line: bucket b covers [b, b+1) / BUCKETS of it. */
		uint64_t total = 0, at = 0;
		for (int i = 0; i < r->n_pool; i++)
			if (up[i])
				total += r->pool[i].weight;
		if (total == 0)
			return 0;
		uint64_t x = ((uint64_t)bucket * 2 + 1) * total / (2 * P53_STEER_BUCKETS);
		for (int i = 0; i < r->n_pool; i++) {
			if (!up[i] || r->pool[i].weight == 0)
				continue;
			at += r->pool[i].weight;
			if (x < at) {
				t[0] = (uint8_t)i;
				return 1;
			}
		}
		return 0;
	}
	/* sticky: weighted rendezvous hashing: each up target scores w / -ln(u), u its hash of
	 * (bucket, name) mapped into (0, 1); the highest wins. A target then holds its weight's
	 * share of the buckets, and a target leaving (or its weight changing) moves only buckets
	 * to or from it. */
	double best = 0;
	for (int i = 0; i < r->n_pool; i++) {
		if (!up[i] || r->pool[i].weight == 0)
			continue;
		double u = ((double)score(bucket, r->pool[i].name) + 0.5) / 4294967296.0;
		double sc = (double)r->pool[i].weight / -log(u);
		if (n == 0 || sc > best) {
			best = sc;
			t[0] = (uint8_t)i;
			n = 1;
		}
	}
	return n;
}

void p53_steer_effective_up(const struct p53_steer_record *r, const bool *up, bool *eff)
{
	bool primary = false;

	for (int j = 0; j < r->n_pool; j++)
		primary |= up[j] && !r->pool[j].backup && r->pool[j].weight > 0;
	for (int j = 0; j < r->n_pool; j++)
		eff[j] = up[j] && r->pool[j].backup != primary;
}

/* RDLENGTH of target ti (or fallback address ti - P53_STEER_MAX_POOL) in a variant. */
static unsigned int rdlen_of(const struct p53_steer_record *r, unsigned int ti)
{
	if (r->type == 5 && ti < P53_STEER_MAX_POOL)
		return r->pool[ti].tname_len;
	return r->type == 1 ? 4 : 16;
}

static size_t al8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

/* The key that signs a record: the one whose owner (a zone) is the longest suffix of its
 * owner on a label boundary; NULL when no key covers it. */
static const struct p53_sign_key *key_of(const struct p53_steer_signing *sg,
					 const struct p53_steer_record *r)
{
	const struct p53_sign_key *best = NULL;

	for (int i = 0; sg != NULL && i < sg->n_keys; i++) {
		const struct p53_sign_key *k = &sg->keys[i];
		/* Walk r's labels: a suffix starting at a label boundary, compared in canonical form. */
		for (unsigned int at = 0; at < r->lname_len; at += 1u + r->lname[at]) {
			if (r->lname_len - at == k->owner_len &&
			    memcmp(r->lname + at, k->owner, k->owner_len) == 0) {
				if (best == NULL || k->owner_len > best->owner_len)
					best = k;
				break;
			}
			if (r->lname[at] == 0)
				break;
		}
	}
	return best;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int p53_steer_src_of(int policy)
{
	switch (policy) {
	case P53_POLICY_MAP:
		return P53_STEER_SRC_MAP;
	case P53_POLICY_PRIORITY:
		return P53_STEER_SRC_ANY;
	case P53_POLICY_WEIGHTED:
	case P53_POLICY_STICKY:
		return P53_STEER_SRC_CLIENT;
	case P53_POLICY_ASN:
		return P53_STEER_SRC_ASN;
	default:
		return P53_STEER_SRC_GEO;
	}
}

static int src_of(int policy)
{
	return p53_steer_src_of(policy);
}

/* Locations of a source: the loaded ones, or the fixed ones of the sources without blocks. */
static uint32_t locs_of(const struct p53_steer_sources *s, int src)
{
	if (src == P53_STEER_SRC_ANY)
		return 1;
	if (src == P53_STEER_SRC_CLIENT)
		return P53_STEER_BUCKETS;
	return s->src[src].n_locs;
}

/* memcpy for sections that may be empty: their arrays are NULL then (C forbids memcpy from
 * NULL even for 0 bytes, and UBSan says so). */
static void put(uint8_t *dst, const void *src, size_t n)
{
	if (n > 0)
		memcpy(dst, src, n);
}

void *p53_steer_build(const struct p53_steer_conf *conf, const struct p53_steer_sources *s,
		      const bool *up, size_t *len, char *err, size_t errlen)
{
	return p53_steer_build_signed(conf, s, up, NULL, len, err, errlen);
}

void p53_steer_index4(const struct p53_steer_b4 *b, uint32_t n, uint32_t *idx)
{
	uint32_t j = 0;

	for (uint32_t k = 0; k < P53_STEER_IDX; k++) {
		uint32_t at = k << (32 - P53_STEER_IDX_BITS);
		while (j + 1 < n && b[j + 1].start <= at)
			j++;
		idx[k] = j;
	}
}

void p53_steer_index6(const struct p53_steer_b6 *b, uint32_t n, uint32_t *idx)
{
	uint32_t j = 0;

	for (uint32_t k = 0; k < P53_STEER_IDX6; k++) {
		uint64_t at = P53_STEER_IDX6_BASE + ((uint64_t)k << P53_STEER_IDX6_SHIFT);
		/* b[j + 1] starts at or below the address whose high half is `at` and low half
		 * 0: its high half below `at`, or equal with a zero low half. */
		while (j + 1 < n && (b[j + 1].hi < at || (b[j + 1].hi == at && b[j + 1].lo == 0)))
			j++;
		idx[k] = j;
	}
}

void p53_steer_emit6(const struct p53_steer_b6 *b, uint32_t n, uint64_t *key, struct p53_steer_b6x *aux)
{
	for (uint32_t i = 0; i < n; i++) {
		key[i] = b[i].hi;
		aux[i].lo = b[i].lo;
		aux[i].loc_len = b[i].loc_len;
		aux[i].pad = 0;
	}
}

uint32_t p53_steer_merge4(const struct p53_steer_source *m, const struct p53_steer_source *g, uint32_t *start,
			  struct p53_steer_mx *x)
{
	uint32_t i = 0, j = 0, n = 0, at = 0;

	for (;;) {
		if (start != NULL) {
			start[n] = at;
			x[n] = (struct p53_steer_mx){ .ll_m = m->b4[i].loc_len, .ll_g = g->b4[j].loc_len,
						      .im = i, .ig = j };
		}
		n++;
		int mi = i + 1 < m->n4, gj = j + 1 < g->n4;
		if (!mi && !gj)
			return n;
		if (mi && (!gj || m->b4[i + 1].start <= g->b4[j + 1].start))
			at = m->b4[i + 1].start;
		else
			at = g->b4[j + 1].start;
		if (mi && m->b4[i + 1].start == at)
			i++;
		if (gj && g->b4[j + 1].start == at)
			j++;
	}
}

static int before6(const struct p53_steer_b6 *a, const struct p53_steer_b6 *b)
{
	return a->hi < b->hi || (a->hi == b->hi && a->lo <= b->lo);
}

uint32_t p53_steer_merge6(const struct p53_steer_source *m, const struct p53_steer_source *g, uint64_t *key,
			  struct p53_steer_m6x *x)
{
	uint32_t i = 0, j = 0, n = 0;
	struct p53_steer_b6 at = {0};

	for (;;) {
		if (key != NULL) {
			key[n] = at.hi;
			x[n] = (struct p53_steer_m6x){ .lo = at.lo, .ll_m = m->b6[i].loc_len,
						       .ll_g = g->b6[j].loc_len, .im = i, .ig = j };
		}
		n++;
		int mi = i + 1 < m->n6, gj = j + 1 < g->n6;
		if (!mi && !gj)
			return n;
		at = mi && (!gj || before6(&m->b6[i + 1], &g->b6[j + 1])) ? m->b6[i + 1] : g->b6[j + 1];
		if (mi && m->b6[i + 1].hi == at.hi && m->b6[i + 1].lo == at.lo)
			i++;
		if (gj && g->b6[j + 1].hi == at.hi && g->b6[j + 1].lo == at.lo)
			j++;
	}
}

void p53_steer_mindex4(const uint32_t *start, uint32_t n, uint32_t *idx)
{
	uint32_t j = 0;

	for (uint32_t k = 0; k < P53_STEER_IDX; k++) {
		uint32_t at = k << (32 - P53_STEER_IDX_BITS);
		while (j + 1 < n && start[j + 1] <= at)
			j++;
		idx[k] = j;
	}
}

void p53_steer_mindex6(const uint64_t *key, const struct p53_steer_m6x *x, uint32_t n, uint32_t *idx)
{
	uint32_t j = 0;

	for (uint32_t k = 0; k < P53_STEER_IDX6; k++) {
		uint64_t at = P53_STEER_IDX6_BASE + ((uint64_t)k << P53_STEER_IDX6_SHIFT);
		while (j + 1 < n && (key[j + 1] < at || (key[j + 1] == at && x[j + 1].lo == 0)))
			j++;
		idx[k] = j;
	}
}

void *p53_steer_build_signed(const struct p53_steer_conf *conf, const struct p53_steer_sources *s,
			     const bool *up, struct p53_steer_signing *sg, size_t *len,
			     char *err, size_t errlen)
{
	bool all_up[P53_STEER_MAX_POOL];
	struct out o = {0};
	size_t at = 0; /* up[at]: the record's pool[0] */
	struct p53_steer_rec *recs = calloc(conf->n_records ? (size_t)conf->n_records : 1, sizeof(*recs));
	uint8_t *img = NULL;

	if (recs == NULL)
		goto oom;
	for (int j = 0; j < P53_STEER_MAX_POOL; j++)
		all_up[j] = true;
	for (int i = 0; i < conf->n_records; i++) {
		const struct p53_steer_record *r = &conf->records[i];
		struct p53_steer_rec *x = &recs[i];
		uint8_t t[P53_STEER_MAX_POOL];
		uint32_t ttl;
		bool eff[P53_STEER_MAX_POOL];
		p53_steer_effective_up(r, up != NULL ? up + at : all_up, eff);
		at += (size_t)r->n_pool;
		o.first_v = o.n_v;
		x->hash = p53_name_hash(r->lname, r->lname_len);
		x->name_len = r->lname_len;
		x->type = r->type;
		x->n_steps = (uint8_t)r->n_policy;
		for (int k = 0; k < r->n_policy; k++) {
			int pol = r->policy[k];
			int src = src_of(pol);
			const struct p53_steer_source *so = &s->src[src];
			uint32_t n_locs = locs_of(s, src);
			x->steps[k].src = (uint8_t)src;
			x->steps[k].dec = o.n_dec;
			if (grow((void **)&o.dec, &o.cap_dec, o.n_dec + n_locs, sizeof(*o.dec)) < 0)
				goto oom;
			for (uint32_t l = 0; l < n_locs; l++) {
				int n;
				ttl = r->ttl;
				if (src == P53_STEER_SRC_ANY || src == P53_STEER_SRC_CLIENT)
					n = p53_steer_decide_client(r, eff, pol, l, t);
				else
					n = decide(r, eff, pol, &so->locs[l], t, &ttl);
				if (r->type == 5 && n > 1)
					n = 1; /* a CNAME RRset holds one record: the first choice */
				uint32_t v = n > 0 ? variant_of(&o, (uint32_t)i, ttl, t, n) : UINT32_MAX;
				if (v == UINT32_MAX - 1)
					goto oom;
				o.dec[o.n_dec++] = v;
			}
		}
		/* Fallback: every target that is up (of the fallback pool when every target of the
		 * pool is down and all_down is pool); when all are down, every target (answering
		 * something beats answering nothing: the monitor may be what is wrong), with
		 * all_down: fallback the record's fallback addresses (indices past the pool), with
		 * all_down: pool every target of the fallback pool. */
		int n = 0;
		for (int j = 0; j < r->n_pool; j++)
			if (eff[j] && r->pool[j].weight > 0)
				t[n++] = (uint8_t)j;
		if (n == 0 && r->all_down == P53_ALL_DOWN_FALLBACK)
			for (int j = 0; j < r->n_fallback; j++)
				t[n++] = (uint8_t)(P53_STEER_MAX_POOL + j);
		bool backups = r->all_down == P53_ALL_DOWN_POOL;
		if (n == 0)
			for (int j = 0; j < r->n_pool; j++)
				if (r->pool[j].weight > 0 && r->pool[j].backup == backups)
					t[n++] = (uint8_t)j;
		if (n == 0)
			for (int j = 0; j < r->n_pool; j++)
				if (r->pool[j].backup == backups)
					t[n++] = (uint8_t)j;
		if (r->type == 5 && n > 1)
			n = 1;
		x->fallback = variant_of(&o, (uint32_t)i, r->ttl, t, n);
		if (x->fallback == UINT32_MAX - 1)
			goto oom;
	}
	/* Layout: header, records, variants, decisions, rdata, names, blocks. */
	size_t rdata = 0, names = 0;
	uint32_t n_signed = 0;
	for (uint32_t i = 0; i < o.n_v; i++) {
		const struct p53_sign_key *k = key_of(sg, &conf->records[o.v[i].rec]);
		const struct p53_steer_record *vr = &conf->records[o.v[i].rec];
		for (int k2 = 0; k2 < o.v[i].n; k2++)
			rdata += 2 + 10 + rdlen_of(vr, o.v[i].t[k2]);
		if (k != NULL) {
			rdata += p53_sign_rr_len(k);
			n_signed++;
		}
	}
	for (int i = 0; i < conf->n_records; i++)
		names += conf->records[i].lname_len;
	struct p53_steer_hdr h = { .magic = P53_STEER_MAGIC, .n_records = (uint32_t)conf->n_records,
				   .n_variants = o.n_v,
				   .sig_expire = n_signed > 0 ? sg->expiration : 0,
				   /* Indices fit the image node's 16 bits (image.h) or are not used */
				   .layout = conf->n_records < UINT16_MAX ? conf->layout : 0 };
	/* Each owner's records in a chain, from its first (the image node's index). */
	if (conf->n_records < UINT16_MAX) {
		int *prev = malloc((conf->n_records > 0 ? (size_t)conf->n_records : 1) * sizeof(*prev));
		if (prev == NULL || p53_steer_conf_owner_links(conf, prev) != 0) {
			free(prev);
			goto oom;
		}
		for (int i = 0; i < conf->n_records; i++)
			if (prev[i] >= 0)
				recs[prev[i]].next = (uint16_t)(i + 1);
		free(prev);
	}
	size_t off = al8(sizeof(h));
	h.records_off = (uint32_t)off;
	off = al8(off + (size_t)conf->n_records * sizeof(*recs));
	h.variants_off = (uint32_t)off;
	off = al8(off + (size_t)o.n_v * sizeof(struct p53_steer_variant));
	h.dec_off = (uint32_t)off;
	off = al8(off + (size_t)o.n_dec * 4);
	h.rdata_off = (uint32_t)off;
	off = al8(off + rdata);
	h.names_off = (uint32_t)off;
	off = al8(off + names);
	for (int k = 0; k < P53_STEER_SRCS; k++) {
		h.src[k].n_locs = locs_of(s, k);
		h.src[k].n4 = s->src[k].n4;
		h.src[k].off4 = (uint32_t)off;
		off = al8(off + (size_t)s->src[k].n4 * sizeof(struct p53_steer_b4));
		h.src[k].n6 = s->src[k].n6;
		h.src[k].off6 = (uint32_t)off;
		off = al8(off + (size_t)s->src[k].n6 * sizeof(uint64_t));
		h.src[k].aux6_off = (uint32_t)off;
		off = al8(off + (size_t)s->src[k].n6 * sizeof(struct p53_steer_b6x));
		/* The indices (steer.h), for a family with blocks. */
		if (s->src[k].n4 > 0) {
			h.src[k].idx4_off = (uint32_t)off;
			off += P53_STEER_IDX * sizeof(uint32_t);
		}
		if (s->src[k].n6 > 0) {
			h.src[k].idx6_off = (uint32_t)off;
			off = al8(off + P53_STEER_IDX6 * sizeof(uint32_t));
		}
	}
	/* The merged map+GeoIP table (steer.h), per family, when a record's chain reads both
	 * and both have blocks in the family. */
	int both = 0;
	for (int i = 0; i < conf->n_records; i++) {
		int sm = 0, sgeo = 0;
		for (int k = 0; k < recs[i].n_steps; k++) {
			sm |= recs[i].steps[k].src == P53_STEER_SRC_MAP;
			sgeo |= recs[i].steps[k].src == P53_STEER_SRC_GEO;
		}
		if (sm && sgeo)
			recs[i].mrg = 1, both = 1;
	}
	const struct p53_steer_source *smap = &s->src[P53_STEER_SRC_MAP], *sgeo = &s->src[P53_STEER_SRC_GEO];
	uint8_t fams = 0;
	if (both && smap->n4 > 0 && sgeo->n4 > 0) {
		fams |= P53_STEER_MRG4;
		h.mrg.n4 = p53_steer_merge4(smap, sgeo, NULL, NULL);
		h.mrg.start4_off = (uint32_t)off;
		off = al8(off + (size_t)h.mrg.n4 * sizeof(uint32_t));
		h.mrg.aux4_off = (uint32_t)off;
		off = al8(off + (size_t)h.mrg.n4 * sizeof(struct p53_steer_mx));
		h.mrg.idx4_off = (uint32_t)off;
		off = al8(off + P53_STEER_IDX * sizeof(uint32_t));
	}
	if (both && smap->n6 > 0 && sgeo->n6 > 0) {
		fams |= P53_STEER_MRG6;
		h.mrg.n6 = p53_steer_merge6(smap, sgeo, NULL, NULL);
		h.mrg.off6 = (uint32_t)off;
		off = al8(off + (size_t)h.mrg.n6 * sizeof(uint64_t));
		h.mrg.aux6_off = (uint32_t)off;
		off = al8(off + (size_t)h.mrg.n6 * sizeof(struct p53_steer_m6x));
		h.mrg.idx6_off = (uint32_t)off;
		off = al8(off + P53_STEER_IDX6 * sizeof(uint32_t));
	}
	for (int i = 0; i < conf->n_records; i++)
		recs[i].mrg = recs[i].mrg ? fams : 0;
	if (off > UINT32_MAX) {
		fail(err, errlen, "steering: table over 4 GiB");
		goto out;
	}
	/* The decisions sit after the variants: p53_steer_check bounds them by the table end,
	 * so the rdata, names and blocks after them only make that bound looser. */
	h.size = off;
	img = calloc(1, off);
	if (img == NULL)
		goto oom;
	size_t np = 0;
	for (int i = 0; i < conf->n_records; i++) {
		recs[i].name_off = (uint32_t)(h.names_off + np);
		memcpy(img + h.names_off + np, conf->records[i].lname, conf->records[i].lname_len);
		np += conf->records[i].lname_len;
	}
	put(img + h.records_off, recs, (size_t)conf->n_records * sizeof(*recs));
	size_t rp = 0;
	for (uint32_t i = 0; i < o.n_v; i++) {
		const struct p53_steer_record *r = &conf->records[o.v[i].rec];
		struct p53_steer_variant *v = (struct p53_steer_variant *)(img + h.variants_off) + i;
		v->rdata_off = (uint32_t)rp;
		v->count = o.v[i].n;
		v->ttl = o.v[i].ttl;
		for (int k = 0; k < o.v[i].n; k++) {
			uint8_t *p = img + h.rdata_off + rp;
			p[0] = 0xc0;
			p[1] = 0x0c;
			p[2] = (uint8_t)(r->type >> 8);
			p[3] = (uint8_t)r->type;
			p[4] = 0;
			p[5] = 1;
			p[6] = (uint8_t)(v->ttl >> 24);
			p[7] = (uint8_t)(v->ttl >> 16);
			p[8] = (uint8_t)(v->ttl >> 8);
			p[9] = (uint8_t)v->ttl;
			unsigned int ti = o.v[i].t[k];
			unsigned int alen = rdlen_of(r, ti);
			p[10] = 0;
			p[11] = (uint8_t)alen;
			memcpy(p + 12, ti >= P53_STEER_MAX_POOL ? r->fallback[ti - P53_STEER_MAX_POOL].addr :
				       r->type == 5 ? r->pool[ti].tname : r->pool[ti].addr, alen);
			rp += 12 + alen;
		}
		v->rdata_len = (uint32_t)(rp - v->rdata_off);
		const struct p53_sign_key *key = key_of(sg, r);
		if (key == NULL)
			continue;
		/* The variant's RRSIG, right after its records (RFC 4034 §3; image.h's layout). */
		uint64_t t0 = mono_ns();
		int sl = p53_sign_rrset(key, r->lname, r->lname_len, img + h.rdata_off + v->rdata_off,
					v->count, sg->inception, sg->expiration, img + h.rdata_off + rp,
					p53_sign_rr_len(key));
		sg->sign_ns += mono_ns() - t0;
		if (sl < 0) {
			fail(err, errlen, "steering: signing a variant of %s with %s failed", r->owner,
			     key->path);
			goto free_img;
		}
		v->sig_count = 1;
		v->sig_len = (uint32_t)sl;
		sg->n_signed++;
		/* Verify a sample, spread over the variants, with the DNSKEY alone. */
		uint32_t step = n_signed > P53_STEER_VERIFY_SAMPLE ? n_signed / P53_STEER_VERIFY_SAMPLE : 1;
		if ((sg->n_signed - 1) % step == 0 && sg->n_verified < P53_STEER_VERIFY_SAMPLE) {
			if (p53_sign_verify(key, r->lname, r->lname_len, img + h.rdata_off + v->rdata_off,
					    v->count, img + h.rdata_off + rp, (size_t)sl) != 0) {
				fail(err, errlen, "steering: the RRSIG of variant %u of %s does not validate "
				     "with the DNSKEY of %s", i, r->owner, key->path);
				goto free_img;
			}
			sg->n_verified++;
		}
		rp += (size_t)sl;
	}
	put(img + h.dec_off, o.dec, (size_t)o.n_dec * 4);
	for (int k = 0; k < P53_STEER_SRCS; k++) {
		put(img + h.src[k].off4, s->src[k].b4, (size_t)s->src[k].n4 * sizeof(struct p53_steer_b4));
		p53_steer_emit6(s->src[k].b6, s->src[k].n6, (uint64_t *)(void *)(img + h.src[k].off6),
				(struct p53_steer_b6x *)(void *)(img + h.src[k].aux6_off));
		if (s->src[k].n4 > 0)
			p53_steer_index4(s->src[k].b4, s->src[k].n4, (uint32_t *)(void *)(img + h.src[k].idx4_off));
		if (s->src[k].n6 > 0)
			p53_steer_index6(s->src[k].b6, s->src[k].n6, (uint32_t *)(void *)(img + h.src[k].idx6_off));
	}
	if (h.mrg.n4 > 0) {
		p53_steer_merge4(smap, sgeo, (uint32_t *)(void *)(img + h.mrg.start4_off),
				 (struct p53_steer_mx *)(void *)(img + h.mrg.aux4_off));
		p53_steer_mindex4((const uint32_t *)(void *)(img + h.mrg.start4_off), h.mrg.n4,
				  (uint32_t *)(void *)(img + h.mrg.idx4_off));
	}
	if (h.mrg.n6 > 0) {
		p53_steer_merge6(smap, sgeo, (uint64_t *)(void *)(img + h.mrg.off6),
				 (struct p53_steer_m6x *)(void *)(img + h.mrg.aux6_off));
		p53_steer_mindex6((const uint64_t *)(void *)(img + h.mrg.off6),
				  (const struct p53_steer_m6x *)(void *)(img + h.mrg.aux6_off), h.mrg.n6,
				  (uint32_t *)(void *)(img + h.mrg.idx6_off));
	}
	memcpy(img, &h, sizeof(h));
	/* Each variant's checksum sums (steer.h), read from the table now its header is in. */
	for (uint32_t i = 0; i < o.n_v; i++) {
		struct p53_steer_variant *v = (struct p53_steer_variant *)(img + h.variants_off) + i;
		p53_steer_variant_sums(img, v, &v->sum, &v->sig_sum);
	}
	const char *why;
	if (p53_steer_check(img, off, &why) != 0) {
		fail(err, errlen, "steering: compiled table fails its check: %s", why);
		free(img);
		img = NULL;
		goto out;
	}
	*len = off;
	goto out;
oom:
	fail(err, errlen, "steering: out of memory");
free_img:
	free(img);
	img = NULL;
out:
	free(o.v);
	free(o.dec);
	free(recs);
	return img;
}

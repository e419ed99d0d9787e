/*
 * p53-mmdb-write: a MaxMind DB writer for the steering compile benchmark only
 * (scripts/bench/steer_compile.sh). MaxMind's own writer (libmaxmind-db-writer-perl, which the
 * tests use: tests/steer/mmdb_build.pl) took 192 s for 100,000 networks on the 2-CPU VM, so a
 * GeoLite2-City-sized database of about 4M networks would take hours; this one wrote it in
 * 20 s there (docs/BENCHMARKS.md).
 *
 * What it writes, after the MaxMind DB File Format Specification, version 2.0:
 * - an IPv6 search tree (ip_version 6) with IPv4 networks at ::a.b.c.d/(96 + len), where
 *   libmaxminddb looks IPv4 addresses up; with --alias, ::ffff:0:0/96 and 2002::/16 point to
 *   the IPv4 subtree as in MaxMind's own databases (and mmdb_build.pl --alias);
 * - records of 24, 28 or 32 bits: the smallest that holds the largest record value, unless
 *   --record-size says otherwise;
 * - the data section as MaxMind's serializer writes it: map keys sorted, each key's type from
 *   the same table as mmdb_build.pl (geoname_id uint32, latitude double, iso_code utf8_string,
 *   ...), and every map, array, double and string of 4 bytes or more stored once and pointed
 *   to after that, so networks with the same record share one data entry and records share
 *   their keys and sub-maps, as in real databases;
 * - "\xAB\xCD\xEFMaxMind.com" and the metadata map.
 * A network inserted inside an earlier, larger one keeps the larger one's data around it; a
 * network inserted over earlier, smaller ones replaces them (the last insert wins).
 *
 * Usage: p53-mmdb-write [--record-size 24|28|32] [--alias] OUT.mmdb NETWORKS.json
 *          NETWORKS.json: mmdb_build.pl's input, [{"network": CIDR, "data": {...}}, ...];
 *          read one entry per line when laid out that way (scripts/bench/steer_big.py), which
 *          keeps a 4M-network file out of memory as a whole.
 *        p53-mmdb-write --lookup DB.mmdb < ADDRESSES
 *          one line per address: the address, the network's prefix length (libmaxminddb's
 *          netmask) and the entry's data as libmaxminddb dumps it, or "not found"; used to
 *          compare this writer's output with mmdb_build.pl's (scripts/bench/mmdb_write_check.sh).
 * Control-side tool; no DPDK.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <maxminddb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Data types of the format (spec: "Output Data Section", "Data Field Format"). */
enum mtype {
	T_POINTER = 1, T_STRING = 2, T_DOUBLE = 3, T_UINT16 = 5, T_UINT32 = 6, T_MAP = 7,
	T_UINT64 = 9, T_ARRAY = 11, T_BOOL = 14,
};

static void die(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "p53-mmdb-write: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (p == NULL)
		die("%s%s", "out of memory", "");
	return p;
}

/* A growing byte buffer. */
struct buf {
	uint8_t *b;
	size_t len, cap;
};

static void put(struct buf *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		o->cap = (o->len + n) * 2;
		o->b = xrealloc(o->b, o->cap);
	}
	memcpy(o->b + o->len, p, n);
	o->len += n;
}

static void put8(struct buf *o, unsigned v)
{
	uint8_t c = (uint8_t)v;

	put(o, &c, 1);
}

/* The control byte(s) of a field: type in the top 3 bits (0 and a second byte for types
 * above 7), then the size, extended by 1, 2 or 3 bytes from 29 on. */
static void ctrl(struct buf *o, enum mtype t, size_t size)
{
	unsigned first = size < 29 ? (unsigned)size : size < 285 ? 29 : size < 65821 ? 30 : 31;

	put8(o, (t <= 7 ? (unsigned)t << 5 : 0) | first);
	if (t > 7)
		put8(o, (unsigned)t - 7);
	if (first == 29) {
		put8(o, (unsigned)(size - 29));
	} else if (first == 30) {
		put8(o, (unsigned)((size - 285) >> 8));
		put8(o, (unsigned)(size - 285));
	} else if (first == 31) {
		size -= 65821;
		put8(o, (unsigned)(size >> 16));
		put8(o, (unsigned)(size >> 8));
		put8(o, (unsigned)size);
	}
}

static void put_uint(struct buf *o, enum mtype t, uint64_t v)
{
	uint8_t b[8];
	int n = 0;

	for (uint64_t x = v; x != 0; x >>= 8)
		n++;
	for (int i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	ctrl(o, t, (size_t)n);
	put(o, b, (size_t)n);
}

/* A pointer to data-section offset `off`: 11, 19, 27 or 32 bits, the larger forms biased
 * (spec: "pointer - 1"). */
static void put_pointer(struct buf *o, uint32_t off)
{
	if (off < 2048) {
		put8(o, 0x20 | (off >> 8));
		put8(o, off);
	} else if (off < 2048 + 524288) {
		off -= 2048;
		put8(o, 0x20 | 1 << 3 | (off >> 16));
		put8(o, off >> 8);
		put8(o, off);
	} else if (off < 526336u + 134217728u) {
		off -= 526336;
		put8(o, 0x20 | 2 << 3 | (off >> 24));
		put8(o, off >> 16);
		put8(o, off >> 8);
		put8(o, off);
	} else {
		put8(o, 0x20 | 3 << 3);
		put8(o, off >> 24);
		put8(o, off >> 16);
		put8(o, off >> 8);
		put8(o, off);
	}
}

/* A string -> uint32 hash table (open addressing, FNV-1a): the serializer's cache of what is
 * already in the data section, and the records already seen. */
struct table {
	char **key;
	uint32_t *val;
	size_t n, cap;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static uint32_t *table_slot(struct table *t, const char *k, bool *found)
{
	if ((t->n + 1) * 2 > t->cap) {
		struct table g = { .cap = t->cap ? t->cap * 2 : 1024 };
		g.key = calloc(g.cap, sizeof(*g.key));
		g.val = calloc(g.cap, sizeof(*g.val));
		if (g.key == NULL || g.val == NULL)
			die("%s%s", "out of memory", "");
		for (size_t i = 0; i < t->cap; i++) {
			if (t->key[i] == NULL)
				continue;
			size_t j = hash(t->key[i]) & (g.cap - 1);
			while (g.key[j] != NULL)
				j = (j + 1) & (g.cap - 1);
			g.key[j] = t->key[i];
			g.val[j] = t->val[i];
		}
		free(t->key);
		free(t->val);
		g.n = t->n;
		*t = g;
	}
	size_t j = hash(k) & (t->cap - 1);
	while (t->key[j] != NULL && strcmp(t->key[j], k) != 0)
		j = (j + 1) & (t->cap - 1);
	*found = t->key[j] != NULL;
	if (!*found) {
		t->key[j] = strdup(k);
		if (t->key[j] == NULL)
			die("%s%s", "out of memory", "");
		t->n++;
	}
	return &t->val[j];
}

/* The type MaxMind's databases give a key (mmdb_build.pl's %TYPE); other keys by their JSON
 * type. */
static enum mtype key_type(const char *key, const json_t *v)
{
	static const struct {
		const char *key;
		enum mtype t;
	} known[] = {
		{ "code", T_STRING }, { "iso_code", T_STRING }, { "en", T_STRING },
		{ "time_zone", T_STRING }, { "autonomous_system_organization", T_STRING },
		{ "geoname_id", T_UINT32 }, { "autonomous_system_number", T_UINT32 },
		{ "accuracy_radius", T_UINT16 }, { "latitude", T_DOUBLE }, { "longitude", T_DOUBLE },
	};

	for (size_t i = 0; key != NULL && i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(key, known[i].key) == 0)
			return known[i].t;
	switch (json_typeof(v)) {
	case JSON_OBJECT: return T_MAP;
	case JSON_ARRAY: return T_ARRAY;
	case JSON_STRING: return T_STRING;
	case JSON_REAL: return T_DOUBLE;
	case JSON_INTEGER: return json_integer_value(v) >= 0 &&
					  json_integer_value(v) <= (json_int_t)UINT32_MAX ? T_UINT32 : T_UINT64;
	case JSON_TRUE:
	case JSON_FALSE: return T_BOOL;
	default: die("%s%s", "null is not a MaxMind DB value", ""); return T_MAP;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static struct table cache;

/* Appends `v` of type `t` to the data section `o`, or a pointer to its earlier copy: MaxMind's
 * serializer caches maps, arrays and values of 4 bytes or more, never 16/32-bit integers. */
static void store(struct buf *o, enum mtype t, const json_t *v)
{
	bool cacheable = t == T_MAP || t == T_ARRAY || t == T_DOUBLE ||
			 (t == T_STRING && json_string_length(v) >= 4);
	uint32_t *slot = NULL;

	if (cacheable) {
		char *dump = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY |
					   JSON_REAL_PRECISION(17));
		char *k = malloc(strlen(dump) + 2);
		bool found;

		if (dump == NULL || k == NULL)
			die("%s%s", "out of memory", "");
		k[0] = (char)('A' + t);
		strcpy(k + 1, dump);
		slot = table_slot(&cache, k, &found);
		free(k);
		free(dump);
		if (found) {
			put_pointer(o, *slot);
			return;
		}
		*slot = (uint32_t)o->len;
	}
	switch (t) {
	case T_STRING: {
		const char *s = json_string_value(v);
		if (s == NULL)
			die("%s%s", "a string was expected", "");
		ctrl(o, T_STRING, json_string_length(v));
		put(o, s, json_string_length(v));
		break;
	}
	case T_DOUBLE: {
		if (!json_is_number(v))
			die("%s%s", "a number was expected", "");
		double d = json_number_value(v);
		uint64_t bits;
		uint8_t b[8];
		memcpy(&bits, &d, sizeof(bits));
		for (int i = 0; i < 8; i++)
			b[i] = (uint8_t)(bits >> (56 - 8 * i));
		ctrl(o, T_DOUBLE, 8);
		put(o, b, 8);
		break;
	}
	case T_UINT16:
	case T_UINT32:
	case T_UINT64: {
		json_int_t x = json_integer_value(v);
		if (!json_is_integer(v) || x < 0 || (t == T_UINT16 && x > 65535) ||
		    (t == T_UINT32 && x > (json_int_t)UINT32_MAX))
			die("%s%s", "an unsigned integer in range was expected", "");
		put_uint(o, t, (uint64_t)x);
		break;
	}
	case T_BOOL:
		ctrl(o, T_BOOL, json_is_true(v) ? 1 : 0);
		break;
	case T_ARRAY: {
		size_t i;
		json_t *x;
		ctrl(o, T_ARRAY, json_array_size(v));
		json_array_foreach(v, i, x)
			store(o, key_type(NULL, x), x);
		break;
	}
	case T_MAP: {
		size_t n = json_object_size(v), i = 0;
		const char **keys = malloc((n ? n : 1) * sizeof(*keys));
		const char *k;
		json_t *x;
		if (keys == NULL)
			die("%s%s", "out of memory", "");
		json_object_foreach((json_t *)v, k, x)
			keys[i++] = k;
		qsort(keys, n, sizeof(*keys), cmp_str);
		ctrl(o, T_MAP, n);
		for (i = 0; i < n; i++) {
			json_t *key = json_string(keys[i]);
			x = json_object_get(v, keys[i]);
			store(o, T_STRING, key);
			store(o, key_type(keys[i], x), x);
			json_decref(key);
		}
		free(keys);
		break;
	}
	default:
		die("%s%s", "unsupported type", "");
	}
}

/* The search tree while it is built: two children per node, each 0 (no data), a node index,
 * or DATA | record. Node 0 is the root, so no child is 0 as a node. */
#define DATA 0x80000000u
static uint32_t (*kid)[2];
static size_t n_nodes, cap_nodes;

static uint32_t node_new(uint32_t fill)
{
	if (n_nodes == cap_nodes) {
		cap_nodes = cap_nodes ? cap_nodes * 2 : 1 << 16;
		kid = xrealloc(kid, cap_nodes * sizeof(*kid));
	}
	if (n_nodes >= DATA)
		die("%s%s", "too many nodes", "");
	kid[n_nodes][0] = kid[n_nodes][1] = fill;
	return (uint32_t)n_nodes++;
}

static int bit(const uint8_t a[16], int i)
{
	return a[i >> 3] >> (7 - (i & 7)) & 1;
}

/* Sets the record of network a/plen (1..128) to `value` (DATA | record, or a node for an
 * alias), splitting records on the way: a split data record leaves its data on both sides. */
static void insert(const uint8_t a[16], int plen, uint32_t value)
{
	uint32_t cur = 0;

	for (int i = 0; i < plen - 1; i++) {
		uint32_t next = kid[cur][bit(a, i)];
		if (next == 0 || (next & DATA) != 0) {
			next = node_new(next);
			kid[cur][bit(a, i)] = next;
		}
		cur = next;
	}
	kid[cur][bit(a, plen - 1)] = value;
}

/* The node at ::/96 (the IPv4 subtree), or 0 when there is none. */
static uint32_t ipv4_root(void)
{
	uint32_t cur = 0;

	for (int i = 0; i < 96; i++) {
		cur = kid[cur][0];
		if (cur == 0 || (cur & DATA) != 0)
			return 0;
	}
	return cur;
}

/* Parses "a.b.c.d/len" (stored at ::a.b.c.d/96+len) or an IPv6 CIDR; host bits must be 0. */
static int parse_net(const char *s, uint8_t a[16])
{
	char addr[64];
	const char *slash = strchr(s, '/');
	char *end;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(addr))
		return -1;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	errno = 0;
	long len = strtol(slash + 1, &end, 10);
	if (*end != '\0' || errno != 0 || slash[1] == '\0')
		return -1;
	memset(a, 0, 16);
	if (strchr(addr, ':') == NULL) {
		if (inet_pton(AF_INET, addr, a + 12) != 1 || len < 0 || len > 32)
			return -1;
		len += 96;
	} else if (inet_pton(AF_INET6, addr, a) != 1 || len < 1 || len > 128) {
		return -1;
	}
	for (int i = (int)len; i < 128; i++)
		if (bit(a, i))
			return -1;
	return len == 0 ? -1 : (int)len;
}

static struct buf data;      /* the data section */
static uint32_t *rec_off;    /* data-section offset of each record */
static size_t n_recs, cap_recs;

/* The record of data map `d`: the one already stored for equal data, or a new one. */
static uint32_t record_of(const json_t *d)
{
	bool found;
	char *dump = json_dumps(d, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17));

	if (dump == NULL)
		die("%s%s", "out of memory", "");
	uint32_t *slot = table_slot(&cache, dump, &found), rec;
	free(dump);
	if (found)
		return *slot;
	if (n_recs == cap_recs) {
		cap_recs = cap_recs ? cap_recs * 2 : 1024;
		rec_off = xrealloc(rec_off, cap_recs * sizeof(*rec_off));
	}
	rec = (uint32_t)n_recs;
	*slot = rec; /* before store(), whose inserts may move the table's slots */
	rec_off[n_recs++] = (uint32_t)data.len;
	store(&data, T_MAP, d);
	return rec;
}

static void add_net(const char *net, uint32_t rec, const char *in)
{
	uint8_t a[16];
	int plen = parse_net(net, a);

	if (plen < 0)
		die("%s: bad network %s", in, net);
	insert(a, plen, DATA | rec);
}

/* One {"network", "data"} entry. */
static void add_entry(const json_t *e, const char *in)
{
	const char *net = json_string_value(json_object_get(e, "network"));
	const json_t *d = json_object_get(e, "data");

	if (net == NULL || !json_is_object(d))
		die("%s: every entry needs \"network\" and a \"data\" map%s", in, "");
	add_net(net, record_of(d), in);
}

/* A line as steer_big.py writes it, {"network":"CIDR","data":{...}}: its data text seen
 * before gives its record without parsing (a 4M-network list has 100k distinct records).
 * @return false when the line is laid out otherwise (then parsed as JSON). */
static bool add_line_fast(char *line, const char *in)
{
	static const char pre[] = "{\"network\":\"", mid[] = "\",\"data\":";
	char *net = line + sizeof(pre) - 1, *q, *d;
	size_t dl;
	bool found;

	if (strncmp(line, pre, sizeof(pre) - 1) != 0 || (q = strchr(net, '"')) == NULL ||
	    strncmp(q, mid, sizeof(mid) - 1) != 0)
		return false;
	d = q + sizeof(mid) - 1;
	dl = strlen(d);
	if (dl < 3 || d[0] != '{' || d[dl - 1] != '}' || d[dl - 2] != '}')
		return false;
	d[-1] = 'R'; /* the key: "R" and the data's text (no other key starts so) */
	d[dl - 1] = '\0';
	uint32_t *slot = table_slot(&cache, d - 1, &found), rec;
	if (found) {
		rec = *slot;
	} else {
		json_error_t err;
		json_t *j = json_loads(d, 0, &err);
		*slot = UINT32_MAX; /* not yet known; set below through a fresh lookup */
		if (j == NULL || !json_is_object(j))
			die("%s: %s", in, j == NULL ? err.text : "\"data\" is not a map");
		rec = record_of(j);
		json_decref(j);
		*table_slot(&cache, d - 1, &found) = rec;
	}
	*q = '\0';
	add_net(net, rec, in);
	return true;
}

static void read_input(const char *in)
{
	FILE *f = fopen(in, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	bool lines = false, first = true;

	if (f == NULL)
		die("%s: %s", in, strerror(errno));
	while ((n = getline(&line, &cap, f)) > 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ' ' || line[n - 1] == ','))
			line[--n] = '\0';
		if (first) {
			first = false;
			if (strcmp(line, "[") == 0) {
				lines = true;
				continue;
			}
			break;
		}
		if (strcmp(line, "]") == 0)
			break;
		if (add_line_fast(line, in))
			continue;
		json_error_t err;
		json_t *e = json_loads(line, 0, &err);
		if (e == NULL)
			die("%s: %s", in, err.text);
		add_entry(e, in);
		json_decref(e);
	}
	free(line);
	if (!lines) {
		json_error_t err;
		json_t *all = json_load_file(in, 0, &err), *e;
		size_t i;
		if (all == NULL || !json_is_array(all))
			die("%s: %s", in, all == NULL ? err.text : "expected a list of {network, data}");
		json_array_foreach(all, i, e)
			add_entry(e, in);
		json_decref(all);
	}
	fclose(f);
}

static void put_record(struct buf *o, int size, uint32_t l, uint32_t r)
{
	if (size == 24) {
		uint8_t b[6] = { l >> 16, l >> 8, l, r >> 16, r >> 8, r };
		put(o, b, 6);
	} else if (size == 28) {
		/* the middle byte: the left record's top nibble, then the right's */
		uint8_t b[7] = { l >> 16, l >> 8, l, (l >> 24 & 0xf) << 4 | (r >> 24 & 0xf),
				 r >> 16, r >> 8, r };
		put(o, b, 7);
	} else {
		uint8_t b[8] = { l >> 24, l >> 16, l >> 8, l, r >> 24, r >> 16, r >> 8, r };
		put(o, b, 8);
	}
}

static int write_db(const char *out, int record_size, bool alias)
{
	static const uint8_t ffff[16] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t six4[16] = { 0x20, 0x02 };
	uint32_t v4 = alias ? ipv4_root() : 0;

	if (v4 != 0) {
		insert(ffff, 96, v4);
		insert(six4, 16, v4);
	}
	/* Number the nodes reachable from the root, breadth first, each once (an aliased
	 * subtree is reachable three ways). */
	uint32_t *num = malloc(n_nodes * sizeof(*num)), *order = malloc(n_nodes * sizeof(*order));
	size_t count = 0;
	if (num == NULL || order == NULL)
		die("%s%s", "out of memory", "");
	memset(num, 0xff, n_nodes * sizeof(*num));
	num[0] = 0;
	order[count++] = 0;
	for (size_t q = 0; q < count; q++)
		for (int b = 0; b < 2; b++) {
			uint32_t k = kid[order[q]][b];
			if (k != 0 && (k & DATA) == 0 && num[k] == UINT32_MAX) {
				num[k] = (uint32_t)count;
				order[count++] = k;
			}
		}
	uint64_t top = (uint64_t)count + 16 + data.len;
	int need = top < 1u << 24 ? 24 : top < 1u << 28 ? 28 : 32;
	if (top > UINT32_MAX)
		die("%s%s", "database too large for 32-bit records", "");
	if (record_size == 0)
		record_size = need;
	else if (record_size < need)
		die("%s%s", "records too small for this database (try --record-size 32)", "");

	struct buf o = { 0 };
	for (size_t q = 0; q < count; q++) {
		uint32_t r[2];
		for (int b = 0; b < 2; b++) {
			uint32_t k = kid[order[q]][b];
			r[b] = k == 0 ? (uint32_t)count :
			       (k & DATA) != 0 ? (uint32_t)(count + 16 + rec_off[k & ~DATA]) : num[k];
		}
		put_record(&o, record_size, r[0], r[1]);
	}
	put(&o, (uint8_t[16]){ 0 }, 16);
	put(&o, data.b, data.len);
	put(&o, "\xAB\xCD\xEFMaxMind.com", 14);
	/* The metadata map, keys sorted; its own small data section, so no pointers. */
	ctrl(&o, T_MAP, 9);
	static const char *const k[] = { "binary_format_major_version", "binary_format_minor_version",
					 "build_epoch", "database_type", "description", "ip_version",
					 "languages", "node_count", "record_size" };
#define KEY(i) (ctrl(&o, T_STRING, strlen(k[i])), put(&o, k[i], strlen(k[i])))
	KEY(0), put_uint(&o, T_UINT16, 2);
	KEY(1), put_uint(&o, T_UINT16, 0);
	KEY(2), put_uint(&o, T_UINT64, (uint64_t)time(NULL));
	KEY(3), ctrl(&o, T_STRING, 15), put(&o, "pop53-test-City", 15);
	KEY(4), ctrl(&o, T_MAP, 1), ctrl(&o, T_STRING, 2), put(&o, "en", 2),
		ctrl(&o, T_STRING, 27), put(&o, "pop53 bench database (city)", 27);
	KEY(5), put_uint(&o, T_UINT16, 6);
	KEY(6), ctrl(&o, T_ARRAY, 1), ctrl(&o, T_STRING, 2), put(&o, "en", 2);
	KEY(7), put_uint(&o, T_UINT32, count);
	KEY(8), put_uint(&o, T_UINT16, (uint64_t)record_size);
#undef KEY

	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	FILE *f = fopen(tmp, "wb");
	if (f == NULL || fwrite(o.b, 1, o.len, f) != o.len || fclose(f) != 0 || rename(tmp, out) != 0)
		die("%s: %s", out, strerror(errno));
	fprintf(stderr, "p53-mmdb-write: %s: %zu nodes, %zu records, record size %d, data %zu bytes, "
		"file %zu bytes\n", out, count, n_recs, record_size, data.len, o.len);
	free(o.b);
	free(num);
	free(order);
	return 0;
}

/* --lookup: what libmaxminddb reads back, one line per address. */
static int lookup(const char *path)
{
	MMDB_s db;
	char addr[128];
	int st = MMDB_open(path, MMDB_MODE_MMAP, &db);

	if (st != MMDB_SUCCESS)
		die("%s: %s", path, MMDB_strerror(st));
	while (fscanf(stdin, "%127s", addr) == 1) {
		int gai, e;
		MMDB_lookup_result_s r = MMDB_lookup_string(&db, addr, &gai, &e);
		MMDB_entry_data_list_s *list = NULL;
		char *text = NULL;
		size_t len = 0;

		if (gai != 0 || e != MMDB_SUCCESS)
			die("%s: %s", addr, gai != 0 ? "not an address" : MMDB_strerror(e));
		if (!r.found_entry) {
			printf("%s not found\n", addr);
			continue;
		}
		FILE *m = open_memstream(&text, &len);
		if (m == NULL || MMDB_get_entry_data_list(&r.entry, &list) != MMDB_SUCCESS ||
		    MMDB_dump_entry_data_list(m, list, 0) != MMDB_SUCCESS)
			die("%s: %s", addr, "cannot read its data");
		fclose(m);
		for (char *c = text; *c != '\0'; c++)
			if (*c == '\n')
				*c = ' ';
		printf("%s /%u %s\n", addr, r.netmask, text);
		free(text);
		MMDB_free_entry_data_list(list);
	}
	MMDB_close(&db);
	return 0;
}

int main(int argc, char **argv)
{
	int record_size = 0;
	bool alias = false;
	int i = 1;

	if (argc == 3 && strcmp(argv[1], "--lookup") == 0)
		return lookup(argv[2]);
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--alias") == 0) {
			alias = true;
		} else if (strcmp(argv[i], "--record-size") == 0 && i + 1 < argc) {
			record_size = atoi(argv[++i]);
			if (record_size != 24 && record_size != 28 && record_size != 32)
				die("%s%s", "--record-size is 24, 28 or 32", "");
		} else {
			i = argc + 1;
		}
	}
	if (i != argc - 2) {
		fprintf(stderr, "usage: p53-mmdb-write [--record-size 24|28|32] [--alias] OUT.mmdb "
				"NETWORKS.json\n       p53-mmdb-write --lookup DB.mmdb < ADDRESSES\n");
		return 2;
	}
	node_new(0);
	read_input(argv[i + 1]);
	return write_db(argv[i], record_size, alias);
}

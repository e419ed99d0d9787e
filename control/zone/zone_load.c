/*
 * Master files (RFC 1035 §5) to compact records and nodes, for the zone compiler.
 *
 * ldns parses one RR at a time (ldns_rr_new_frm_fp_l) and handles $ORIGIN and $TTL itself.
 * ldns 1.8 does not implement $INCLUDE: it only reports that it consumed such a line
 * (LDNS_STATUS_SYNTAX_INCLUDE, and ldns_zone_new_frm_fp_l gives up with
 * SYNTAX_INCLUDE_ERR_NOTIMPL), so we seek back, read the directive ourselves and recurse
 * with a fresh FILE, keeping each file's name for "file:line:" messages. As RFC 1035 §5.1
 * asks, the including file's origin and current owner are restored after an $INCLUDE;
 * a relative path is resolved against the including file's directory, as Knot does.
 *
 * Each RR is turned into wire bytes straight away and its ldns_rr freed, so a million-record
 * zone never holds a million ldns objects. Line numbers: ldns counts the lines it consumed,
 * which for a record spanning lines (a parenthesised SOA) or preceded by comments is not the
 * line it starts on; we keep the file offset and find the start line again only when a
 * message needs it (p53_zb_rec_line).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <ldns/ldns.h>

#include "control/bigmem.h"
#include "control/conf/schema.h"
#include "control/zone/zone_build.h"
#include "control/zone/zone_scan.h"
#include "control/text.h"
#include "dataplane/name.h"

#define INCLUDE_DEPTH_MAX 16    /* $INCLUDE nesting; stops include loops */
#define LDNS_TTL_DEFAULT  3600  /* TTL of records before any $TTL, ldns' LDNS_DEFAULT_TTL */
#define WIN_SIZE          (1u << 20) /* fast scanner's read window; longer lines go to ldns */

/* Parser state for one zone, carried through its $INCLUDEs. */
struct pctx {
	struct p53_zb *b;
	uint32_t z;
	ldns_buffer *wire;
	ldns_buffer *canon;
	ldns_rdf *origin;
	ldns_rdf *prev;
	uint32_t ttl;
	int depth;
	int fast;               /* lines go to the fast scanner first (zone_scan.h) */
	uint32_t last_node;     /* node of the last record stored, P53_NONE before any: */
	uint8_t last_len;       /* records of one owner come in a row, so most records */
	uint8_t last[P53_NAME_MAXLEN]; /* skip the node map (its lookups were 19% of a compile) */
	struct p53_scan_rr rr;  /* its record */
};

int p53_zb_grow(void **p, size_t *cap, size_t need, size_t sz)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = p53_bigmem_grow(*p, *cap * sz, n * sz);
	if (q == NULL)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

static uint32_t map_hash(uint32_t h, uint32_t z)
{
	/* Child apexes and parent delegation points share names: mix the zone in. */
	h ^= z * 0x9e3779b1u;
	h ^= h >> 16;
	return h * 0x85ebca6bu;
}

static uint32_t find_h(const struct p53_zb *b, uint32_t z, const uint8_t *name, size_t len,
		       uint32_t h)
{
	uint32_t i;

	if (b->map == NULL)
		return P53_NONE;
	/* The name's hash beside each node: probes past other names never touch nodes[]. */
	for (i = map_hash(h, z) & b->map_mask; b->map[i] != 0; i = (i + 1) & b->map_mask) {
		if ((uint32_t)(b->map[i] >> 32) != h)
			continue;
		uint32_t n = (uint32_t)b->map[i] - 1;
		const struct p53_zb_node *nd = &b->nodes[n];
		if (nd->zone == z && nd->name_len == len && memcmp(b->names + nd->name_off, name, len) == 0)
			return n;
	}
	return P53_NONE;
}

uint32_t p53_zb_node_find(const struct p53_zb *b, uint32_t z, const uint8_t *name, size_t len)
{
	return find_h(b, z, name, len, p53_name_hash(name, len));
}

static void map_put(struct p53_zb *b, uint32_t node)
{
	uint32_t i = map_hash(b->nx[node].hash, b->nodes[node].zone) & b->map_mask;

	while (b->map[i] != 0)
		i = (i + 1) & b->map_mask;
	b->map[i] = (uint64_t)b->nx[node].hash << 32 | (node + 1);
}

/* Room in the map for `want` nodes in all. */
static int map_reserve(struct p53_zb *b, size_t want)
{
	size_t slots = b->map ? (size_t)b->map_mask + 1 : 1024;

	/* Load at most 3/4: a probe past another name compares the hash kept in the slot and
	 * never touches nodes[], and eight slots share a cache line, so a longer probe stays
	 * cheap; at 1/2 the map was 16 MB of the 1M-record compile's peak instead of 8. */
	if (b->map != NULL && want * 4 <= slots * 3)
		return 0;
	while (want * 4 > slots * 3)
		slots *= 2;
	if (slots > (size_t)1 << 31)
		return -1;
	free(b->map);
	b->map = calloc(slots, sizeof(*b->map));
	if (b->map == NULL)
		return -1;
	p53_bigmem_advise(b->map, slots * sizeof(*b->map));
	b->map_mask = (uint32_t)(slots - 1);
	for (size_t n = 0; n < b->n_nodes; n++)
		map_put(b, (uint32_t)n);
	return 0;
}

uint32_t p53_zb_node_get(struct p53_zb *b, uint32_t z, const uint8_t *name, size_t len)
{
	uint32_t h = p53_name_hash(name, len);
	uint32_t n = find_h(b, z, name, len, h);
	uint32_t parent = P53_NONE;

	if (n != P53_NONE)
		return n;
	/* Ancestors first: lookups walk up labels, so every ancestor down from the apex must
	   be a node (empty non-terminals included, RFC 4592 §2.2.2), and a parent's index is
	   always below its children's, which lets later passes go top-down in index order. */
	if (len != b->zones[z].name_len) {
		parent = p53_zb_node_get(b, z, name + 1 + name[0], len - 1 - name[0]);
		if (parent == P53_NONE)
			return P53_NONE;
	}
	if (b->n_nodes >= P53_NONE - 1 ||
	    p53_zb_grow((void **)&b->nodes, &b->nodes_cap, b->n_nodes + 1, sizeof(*b->nodes)) < 0)
		return P53_NONE;
	if (p53_zb_grow((void **)&b->nx, &b->nx_cap, b->n_nodes + 1, sizeof(*b->nx)) < 0 ||
	    p53_zb_grow((void **)&b->names, &b->names_cap, b->names_len + len, 1) < 0 ||
	    b->names_len + len > UINT32_MAX || map_reserve(b, b->n_nodes + 1) < 0)
		return P53_NONE;
	n = (uint32_t)b->n_nodes++;
	memcpy(b->names + b->names_len, name, len);
	b->nodes[n] = (struct p53_zb_node){
		.name_off = (uint32_t)b->names_len,
		.name_len = (uint8_t)len,
		.labels = (uint8_t)p53_name_labels(name),
		.zone = z,
		.wildcard = P53_NONE,
		.occluder = P53_NONE,
	};
	b->nx[n] = (struct p53_zb_nodex){ .hash = h, .parent = parent, .first_rec = P53_NONE };
	b->names_len += len;
	map_put(b, n);
	return n;
}

uint32_t p53_zb_rec_line(const struct p53_zb *b, const struct p53_zb_rec *r)
{
	(void)b;
	return r->line;
}

/*
 * Line where the record ldns read from `pos` starts. ldns counts the lines it consumed, which
 * for a record spanning lines (a parenthesised SOA) or preceded by comments is not the line
 * it starts on: then the text from pos is read again, past blanks and comments. Rare, so the
 * extra reads do not matter; f's position is kept.
 */
static uint32_t start_line(FILE *f, uint64_t pos, uint32_t before, uint32_t end)
{
	uint32_t line = before + 1;
	int c, eof = feof(f);
	long keep;

	if (end - before <= 1 || (keep = ftell(f)) < 0)
		return line;
	if (fseek(f, (long)pos, SEEK_SET) == 0) {
		while ((c = getc(f)) != EOF) {
			if (c == ';') {
				while ((c = getc(f)) != EOF && c != '\n')
					;
			}
			if (c == '\n')
				line++;
			else if (c != ' ' && c != '\t' && c != '\r')
				break;
		}
	}
	clearerr(f);
	fseek(f, keep, SEEK_SET);
	if (eof)
		(void)getc(f); /* the end-of-file indicator, as ldns left it */
	return line;
}

static void vset(char *dst, size_t cap, const char *where, const char *fmt, va_list ap)
{
	int o;

	if (cap == 0)
		return;
	o = snprintf(dst, cap, "%s: ", where);
	if (o >= 0 && (size_t)o < cap)
		vsnprintf(dst + o, cap - (size_t)o, fmt, ap);
}

int p53_zb_err(struct p53_zb *b, const char *where, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(b->err, b->errlen, where, fmt, ap);
	va_end(ap);
	return -1;
}

int p53_zb_rec_err(struct p53_zb *b, const struct p53_zb_rec *r, const char *fmt, ...)
{
	char where[4200];
	va_list ap;

	snprintf(where, sizeof(where), "%s:%u", b->files[r->file], p53_zb_rec_line(b, r));
	va_start(ap, fmt);
	vset(b->err, b->errlen, where, fmt, ap);
	va_end(ap);
	return -1;
}

void p53_zb_rec_warn(struct p53_zb *b, const struct p53_zb_rec *r, const char *fmt, ...)
{
	char where[4200], msg[4600];
	va_list ap;

	snprintf(where, sizeof(where), "%s:%u", b->files[r->file], p53_zb_rec_line(b, r));
	va_start(ap, fmt);
	vset(msg, sizeof(msg), where, fmt, ap);
	va_end(ap);
	if (b->warn != NULL)
		b->warn(b->warn_arg, msg);
	else
		fprintf(stderr, "%s\n", msg);
}

int p53_zb_file_add(struct p53_zb *b, const char *path)
{
	char *s;

	if (b->n_files > UINT16_MAX ||
	    p53_zb_grow((void **)&b->files, &b->files_cap, b->n_files + 1, sizeof(*b->files)) < 0)
		return -1;
	s = strdup(path);
	if (s == NULL)
		return -1;
	b->files[b->n_files] = s;
	return (int)b->n_files++;
}

/* At or below the apex (compared label by label from the right, canonical names). */
static int in_zone(const uint8_t *name, size_t len, const uint8_t *apex, size_t alen)
{
	while (len > alen) {
		size_t step = 1u + name[0];
		name += step;
		len -= step;
	}
	return len == alen && memcmp(name, apex, alen) == 0;
}

/*
 * What every record passes, whichever parser read it: class IN, an owner in the zone (else
 * ignored with a warning, as Knot does), SOA only at the apex. `name` gets the owner
 * lower-cased. @return 1 to keep the record, 0 when it is ignored, -1 with the error set.
 */
static int rr_check(struct pctx *c, struct p53_zb_rec *where, uint16_t class, uint16_t type,
		    const uint8_t *owner, size_t olen, uint8_t *name)
{
	struct p53_zb *b = c->b;
	const struct p53_image_zone *zn = &b->zones[c->z];
	const uint8_t *apex = b->names + zn->name_off;
	char txt[1024];

	if (class != LDNS_RR_CLASS_IN)
		return p53_zb_rec_err(b, where, "class %u not served (only IN)", (unsigned)class);
	if (olen == 0 || olen > P53_NAME_MAXLEN)
		return p53_zb_rec_err(b, where, "bad owner name");
	p53_name_lower(name, owner, olen);
	if (!in_zone(name, olen, apex, zn->name_len)) {
		/* Knot's behaviour: ignore, but say so (RFC 1035 §5.2 leaves this open). */
		p53_zb_rec_warn(b, where, "record '%s' is out of zone, ignored",
				p53_name_to_str(txt, sizeof(txt), owner));
		return 0;
	}
	if (type == LDNS_RR_TYPE_SOA && olen != zn->name_len)
		return p53_zb_rec_err(b, where, "SOA record at '%s' is not at the zone apex '%s'",
				      p53_name_to_str(txt, sizeof(txt), owner),
				      p53_name_to_str(txt + 512, 512, apex));
	return 1;
}

/* Keep a checked record: wire bytes after the owner (w, wlen) and its canonical RDATA when
 * that differs (cn, clen; else clen is 0). */
static int rr_store(struct pctx *c, struct p53_zb_rec *where, const uint8_t *name, size_t olen,
		    const uint8_t *w, size_t wlen, const uint8_t *cn, size_t clen, uint32_t ttl)
{
	struct p53_zb *b = c->b;
	uint32_t node = c->last_node;

	if (node == P53_NONE || olen != c->last_len || memcmp(name, c->last, olen) != 0) {
		node = p53_zb_node_get(b, c->z, name, olen);
		c->last_node = node;
		c->last_len = (uint8_t)olen;
		memcpy(c->last, name, olen);
	}
	if (node == P53_NONE || b->arena_len + wlen + clen > UINT32_MAX || b->n_recs >= UINT32_MAX ||
	    p53_zb_grow((void **)&b->arena, &b->arena_cap, b->arena_len + wlen + clen, 1) < 0 ||
	    p53_zb_grow((void **)&b->recs, &b->recs_cap, b->n_recs + 1, sizeof(*b->recs)) < 0)
		return p53_zb_rec_err(b, where, "out of memory");
	memcpy(b->arena + b->arena_len, w, wlen);
	if (clen > 0)
		memcpy(b->arena + b->arena_len + wlen, cn, clen);
	where->node = node;
	where->seq = (uint32_t)b->n_recs;
	where->off = (uint32_t)b->arena_len;
	where->wlen = (uint32_t)wlen;
	where->clen = (uint32_t)clen;
	where->ttl = ttl;
	where->type = (uint16_t)(w[0] << 8 | w[1]);
	b->recs[b->n_recs++] = *where;
	b->arena_len += wlen + clen;
	return 0;
}

/* Compile one RR parsed by ldns; `where` is the record so far (position, lines, file). */
static int add_rr(struct pctx *c, ldns_rr *rr, struct p53_zb_rec *where)
{
	struct p53_zb *b = c->b;
	const ldns_rdf *owner = ldns_rr_owner(rr);
	size_t olen = ldns_rdf_size(owner), wlen, clen;
	uint8_t name[P53_NAME_MAXLEN];
	const uint8_t *w;
	ldns_status st;
	int rc;

	if (ldns_rr_get_class(rr) == LDNS_RR_CLASS_IN && ldns_rdf_get_type(owner) != LDNS_RDF_TYPE_DNAME)
		return p53_zb_rec_err(b, where, "bad owner name");
	/* ldns reads a record from the wire with fewer fields than its type has (a DNAME or an
	 * MX cut short, RDLENGTH 0): such a record is not one (a DNAME without a target made an
	 * image that fails p53_image_check; fuzz_xfr). Types ldns does not know keep any RDATA
	 * (RFC 3597). */
	const ldns_rr_descriptor *desc = ldns_rr_descript(ldns_rr_get_type(rr));
	if (desc != NULL && desc->_name != NULL && ldns_rr_get_class(rr) == LDNS_RR_CLASS_IN &&
	    ldns_rr_rd_count(rr) < ldns_rr_descriptor_minimum(desc)) {
		return p53_zb_rec_err(b, where, "%s record with %zu of its %zu RDATA fields",
				      desc->_name, ldns_rr_rd_count(rr), ldns_rr_descriptor_minimum(desc));
	}
	rc = rr_check(c, where, (uint16_t)ldns_rr_get_class(rr), (uint16_t)ldns_rr_get_type(rr),
		      ldns_rdf_data(owner), olen, name);
	if (rc <= 0)
		return rc;
	ldns_buffer_clear(c->wire);
	st = ldns_rr2buffer_wire(c->wire, rr, LDNS_SECTION_ANSWER);
	if (st != LDNS_STATUS_OK)
		return p53_zb_rec_err(b, where, "%s", ldns_get_errorstr_by_id(st));
	w = ldns_buffer_begin(c->wire) + olen;
	wlen = ldns_buffer_position(c->wire) - olen;
	/* RFC 4034 §6.2 canonical RDATA (names lowered for the types it lists): the key for
	   ordering and duplicate removal. Kept only when it differs from the wire RDATA. */
	ldns_rr2canonical(rr);
	ldns_buffer_clear(c->canon);
	st = ldns_rr_rdata2buffer_wire(c->canon, rr);
	if (st != LDNS_STATUS_OK)
		return p53_zb_rec_err(b, where, "%s", ldns_get_errorstr_by_id(st));
	clen = ldns_buffer_position(c->canon);
	if (wlen < 10 || (clen == wlen - 10 && memcmp(ldns_buffer_begin(c->canon), w + 10, clen) == 0))
		clen = 0;
	return rr_store(c, where, name, olen, w, wlen, ldns_buffer_begin(c->canon), clen,
			ldns_rr_ttl(rr));
}

/* Compile one record of the fast scanner (zone_scan.h): the same checks and bytes. */
static int add_scanned(struct pctx *c, const struct p53_scan_rr *rr, struct p53_zb_rec *where)
{
	uint8_t name[P53_NAME_MAXLEN], w[10 + P53_SCAN_RDATA_MAX];
	int rc = rr_check(c, where, LDNS_RR_CLASS_IN, rr->type, rr->owner, rr->olen, name);

	if (rc <= 0)
		return rc;
	w[0] = (uint8_t)(rr->type >> 8);
	w[1] = (uint8_t)rr->type;
	w[2] = 0;
	w[3] = LDNS_RR_CLASS_IN;
	w[4] = (uint8_t)(rr->ttl >> 24);
	w[5] = (uint8_t)(rr->ttl >> 16);
	w[6] = (uint8_t)(rr->ttl >> 8);
	w[7] = (uint8_t)rr->ttl;
	w[8] = (uint8_t)(rr->rdlen >> 8);
	w[9] = (uint8_t)rr->rdlen;
	memcpy(w + 10, rr->rdata, rr->rdlen);
	return rr_store(c, where, name, rr->olen, w, 10u + rr->rdlen, rr->canon, rr->clen, rr->ttl);
}

static int load_file(struct pctx *c, FILE *f, uint16_t file);

/* Next token of an $INCLUDE line: a quoted string or a run up to space or ';'. */
static char *token(char **p)
{
	char *s = *p, *t;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '"') {
		t = ++s;
		while (*s != '\0' && *s != '"')
			s++;
	} else {
		t = s;
		while (*s != '\0' && *s != ' ' && *s != '\t' && *s != ';' && *s != '\n' && *s != '\r')
			s++;
	}
	if (s == t)
		return NULL;
	if (*s != '\0')
		*s++ = '\0';
	*p = s;
	return t;
}

/*
 * ldns consumed an $INCLUDE line starting at `pos`: read it again, then parse the named
 * file. *line is set to the line count after the directive.
 */
static int include(struct pctx *c, FILE *f, uint16_t file, long pos, uint32_t before, int *line)
{
	struct p53_zb *b = c->b;
	struct p53_zb_rec at = { .file = file };
	ldns_rdf *saved_origin = NULL, *saved_prev = NULL;
	char *buf = NULL, *p, *name, *org, *path = NULL;
	size_t cap = 0;
	uint32_t n = 0;
	FILE *g = NULL;
	int id, rc = -1;

	if (fseek(f, pos, SEEK_SET) != 0) {
		at.line = before + 1;
		p53_zb_rec_err(b, &at, "cannot re-read $INCLUDE line: %s", strerror(errno));
		goto cleanup;
	}
	/* ldns read one logical line from `pos`: blank lines, comments or an opening parenthesis
	 * may come before the directive. Find the physical line that starts with it; only then
	 * is there a "$INCLUDE" to step over (a line shorter than that would send `p` past its
	 * end: found by tests/fuzz/fuzz_zone.c). */
	for (;;) {
		if (getline(&buf, &cap, f) < 0) {
			at.line = before + 1;
			p53_zb_rec_err(b, &at, "cannot read $INCLUDE line");
			goto cleanup;
		}
		n++;
		p = buf + strspn(buf, " \t\r(");
		if (strncmp(p, "$INCLUDE", strlen("$INCLUDE")) == 0)
			break;
	}
	/* The message line is the directive's own. */
	at.line = before + n;
	*line = (int)(before + n);
	p += strlen("$INCLUDE");
	name = token(&p);
	org = token(&p);
	if (name == NULL) {
		p53_zb_rec_err(b, &at, "$INCLUDE without a file name");
		goto cleanup;
	}
	if (c->depth >= INCLUDE_DEPTH_MAX) {
		p53_zb_rec_err(b, &at, "$INCLUDE '%s': nested more than %d deep", name,
			       INCLUDE_DEPTH_MAX);
		goto cleanup;
	}
	{
		const char *inc = b->files[file], *slash = strrchr(inc, '/');
		if (name[0] != '/' && slash != NULL) {
			if (asprintf(&path, "%.*s/%s", (int)(slash - inc), inc, name) < 0)
				path = NULL;
		} else {
			path = strdup(name);
		}
		if (path == NULL) {
			p53_zb_rec_err(b, &at, "out of memory");
			goto cleanup;
		}
	}
	g = p53_fopen_regular(path);
	if (g == NULL) {
		p53_zb_rec_err(b, &at, "$INCLUDE '%s': cannot open '%s': %s", name, path,
			       errno == EINVAL ? "not a regular file" : strerror(errno));
		goto cleanup;
	}
	id = p53_zb_file_add(b, path);
	saved_origin = ldns_rdf_clone(c->origin);
	saved_prev = c->prev ? ldns_rdf_clone(c->prev) : NULL;
	if (id < 0 || saved_origin == NULL || (c->prev != NULL && saved_prev == NULL)) {
		p53_zb_rec_err(b, &at, "out of memory");
		goto cleanup;
	}
	if (org != NULL) {
		/* RFC 1035 §5.1: the optional origin applies to the included file only. */
		ldns_rdf *o = NULL;
		if (ldns_str2rdf_dname(&o, org) != LDNS_STATUS_OK) {
			p53_zb_rec_err(b, &at, "$INCLUDE: bad origin '%s'", org);
			goto cleanup;
		}
		if (!ldns_dname_str_absolute(org) &&
		    ldns_dname_cat(o, c->origin) != LDNS_STATUS_OK) {
			ldns_rdf_deep_free(o);
			p53_zb_rec_err(b, &at, "$INCLUDE: bad origin '%s'", org);
			goto cleanup;
		}
		ldns_rdf_deep_free(c->origin);
		c->origin = o;
	}
	c->depth++;
	rc = load_file(c, g, (uint16_t)id);
	c->depth--;
cleanup:
	if (saved_origin != NULL) {
		ldns_rdf_deep_free(c->origin);
		c->origin = saved_origin;
		ldns_rdf_deep_free(c->prev);
		c->prev = saved_prev;
	}
	if (g != NULL)
		fclose(g);
	free(path);
	free(buf);
	return rc;
}

/* The whole file through ldns, one RR at a time (POP53_ZONE_SCANNER=ldns). */
static int load_file_ldns(struct pctx *c, FILE *f, uint16_t file)
{
	int line = 0;

	while (!feof(f)) {
		struct p53_zb_rec at = { .file = file };
		long pos = ftell(f);
		ldns_rr *rr = NULL;
		ldns_status st;
		int rc;

		uint32_t before = (uint32_t)line;
		st = ldns_rr_new_frm_fp_l(&rr, f, &c->ttl, &c->origin, &c->prev, &line);
		if (st != LDNS_STATUS_SYNTAX_INCLUDE && st != LDNS_STATUS_SYNTAX_EMPTY &&
		    st != LDNS_STATUS_SYNTAX_TTL && st != LDNS_STATUS_SYNTAX_ORIGIN)
			at.line = start_line(f, pos < 0 ? 0 : (uint64_t)pos, before, (uint32_t)line);
		switch (st) {
		case LDNS_STATUS_OK:
			rc = add_rr(c, rr, &at);
			ldns_rr_free(rr);
			if (rc < 0)
				return -1;
			break;
		case LDNS_STATUS_SYNTAX_EMPTY:
		case LDNS_STATUS_SYNTAX_TTL:
		case LDNS_STATUS_SYNTAX_ORIGIN:
			break;
		case LDNS_STATUS_SYNTAX_INCLUDE:
			if (include(c, f, file, pos, before, &line) < 0)
				return -1;
			break;
		default:
			ldns_rr_free(rr);
			return p53_zb_rec_err(c->b, &at, "%s", ldns_get_errorstr_by_id(st));
		}
	}
	if (ferror(f)) {
		struct p53_zb_rec at = { .file = file, .line = (uint32_t)line + 1 };
		return p53_zb_rec_err(c->b, &at, "read error");
	}
	return 0;
}

/* A window of the file at [base, base + len), read with pread: no FILE buffering between the
 * fast scanner and ldns, and a file cut short while we read gives a short read, not SIGBUS. */
struct win {
	int fd;
	char *buf;
	uint64_t base;
	size_t len;
	int eof;                /* the window reaches the end of the file */
};

static int win_fill(struct win *w, uint64_t pos)
{
	w->base = pos;
	w->len = 0;
	w->eof = 0;
	while (w->len < WIN_SIZE) {
		ssize_t r = pread(w->fd, w->buf + w->len, WIN_SIZE - w->len, (off_t)(pos + w->len));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			w->eof = 1;
			break;
		}
		w->len += (size_t)r;
	}
	return 0;
}

/*
 * The line at pos: *p and *n (the '\n' included; *n is 0 at the end of the file, or when the
 * line is longer than the window), *eof when it ends the file without a '\n'.
 * @return 0, or -1 on a read error.
 */
static int win_line(struct win *w, uint64_t pos, const char **p, size_t *n, int *eof)
{
	for (int pass = 0; pass < 2; pass++) {
		if (pos >= w->base && pos <= w->base + w->len) {
			size_t off = (size_t)(pos - w->base);
			const char *nl = memchr(w->buf + off, '\n', w->len - off);
			*p = w->buf + off;
			*eof = 0;
			if (nl != NULL) {
				*n = (size_t)(nl - *p) + 1;
				return 0;
			}
			if (w->eof) {
				*n = w->len - off;
				*eof = 1;
				return 0;
			}
			if (off == 0)
				break; /* a line longer than the window */
		}
		if (win_fill(w, pos) < 0)
			return -1;
	}
	*n = 0;
	*eof = 0;
	return 0;
}

/* Newlines in [a, b) of the file. */
static int win_lines(struct win *w, uint64_t a, uint64_t b, uint32_t *lines)
{
	*lines = 0;
	while (a < b) {
		if (a < w->base || a >= w->base + w->len) {
			if (win_fill(w, a) < 0)
				return -1;
			if (w->len == 0)
				return 0;
		}
		size_t off = (size_t)(a - w->base), k = w->len - off;
		if (k > b - a)
			k = (size_t)(b - a);
		for (const char *q = w->buf + off, *e = q + k; (q = memchr(q, '\n', (size_t)(e - q))) != NULL; q++)
			(*lines)++;
		a += k;
	}
	return 0;
}

/* Does the file hold a \f, \v or \r? 1 yes, 0 no, -1 on a read error. */
static int odd_bytes(struct win *w)
{
	for (uint64_t pos = 0;; pos += w->len) {
		if (win_fill(w, pos) < 0)
			return -1;
		if (memchr(w->buf, '\r', w->len) != NULL || memchr(w->buf, '\f', w->len) != NULL ||
		    memchr(w->buf, '\v', w->len) != NULL)
			return 1;
		if (w->eof)
			return 0;
	}
}

/* The scanner's view of ldns' state, after ldns read a line (or an $INCLUDE ran). */
static void scan_sync(const struct pctx *c, struct p53_scan *sc)
{
	size_t ol = c->origin != NULL ? ldns_rdf_size(c->origin) : 0;
	size_t pl = c->prev != NULL ? ldns_rdf_size(c->prev) : 0;

	sc->origin_len = ol <= P53_NAME_MAXLEN ? (uint8_t)ol : 0;
	memcpy(sc->origin, ldns_rdf_data(c->origin), sc->origin_len);
	sc->prev_len = pl <= P53_NAME_MAXLEN ? (uint8_t)pl : 0;
	if (sc->prev_len > 0)
		memcpy(sc->prev, ldns_rdf_data(c->prev), sc->prev_len);
	sc->ttl = c->ttl;
}

/*
 * The file through the fast scanner (zone_scan.h), line by line; what it declines goes to
 * ldns exactly as in load_file_ldns(), from the same offset and with the same state, so
 * errors, $ORIGIN, $TTL and $INCLUDE behave as they do there. Line numbers are counted from
 * the text itself.
 */
static int load_file_fast(struct pctx *c, FILE *f, uint16_t file)
{
	struct win w = { .fd = fileno(f), .buf = malloc(WIN_SIZE) };
	struct p53_zb_rec at = { .file = file };
	struct p53_scan sc;
	uint64_t pos = 0;
	uint32_t line = 0, nl;
	int prev_synced = 1, rc = -1;

	if (w.buf == NULL) {
		p53_zb_rec_err(c->b, &at, "out of memory");
		goto cleanup;
	}
	/* Where ldns starts reading decides what it makes of a \f, \v or \r (it ends lines
	 * there too, and swallows them or keeps them in the next owner depending on where its
	 * previous read stopped: found by fuzz_zone). A file holding any goes to ldns whole. */
	switch (odd_bytes(&w)) {
	case -1:
		goto read_error;
	case 1:
		if (fseek(f, 0, SEEK_SET) != 0)
			goto read_error;
		rc = load_file_ldns(c, f, file);
		goto cleanup;
	default:
		break;
	}
	scan_sync(c, &sc);
	for (;;) {
		const char *p;
		size_t n, used;
		int eof, ll;

		at = (struct p53_zb_rec){ .file = file, .line = line + 1 };
		if (win_line(&w, pos, &p, &n, &eof) < 0)
			goto read_error;
		if (n == 0 && w.eof && pos >= w.base + w.len) {
			rc = 0; /* the end of the file */
			goto cleanup;
		}
		switch (n > 0 ? p53_scan_line(&sc, p, n, eof, &c->rr, &used) : P53_SCAN_DECLINE) {
		case P53_SCAN_EMPTY:
			pos += used;
			line += p[used - 1] == '\n';
			continue;
		case P53_SCAN_RR:
			if (add_scanned(c, &c->rr, &at) < 0)
				goto cleanup;
			pos += used;
			line += p[used - 1] == '\n';
			prev_synced = 0;
			continue;
		case P53_SCAN_DECLINE:
			break;
		}
		/* ldns reads this one, from the same offset and state. */
		if (!prev_synced && sc.prev_len > 0) {
			ldns_rdf *np = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, sc.prev_len, sc.prev);
			if (np == NULL) {
				p53_zb_rec_err(c->b, &at, "out of memory");
				goto cleanup;
			}
			ldns_rdf_deep_free(c->prev);
			c->prev = np;
		}
		prev_synced = 1;
		if (fseek(f, (long)pos, SEEK_SET) != 0)
			goto read_error;
		ldns_rr *rr = NULL;
		ldns_status st;
		ll = (int)line;
		st = ldns_rr_new_frm_fp_l(&rr, f, &c->ttl, &c->origin, &c->prev, &ll);
		if (st != LDNS_STATUS_SYNTAX_INCLUDE && st != LDNS_STATUS_SYNTAX_EMPTY &&
		    st != LDNS_STATUS_SYNTAX_TTL && st != LDNS_STATUS_SYNTAX_ORIGIN)
			at.line = start_line(f, pos, line, (uint32_t)ll);
		switch (st) {
		case LDNS_STATUS_OK: {
			int r = add_rr(c, rr, &at);
			ldns_rr_free(rr);
			if (r < 0)
				goto cleanup;
			break;
		}
		case LDNS_STATUS_SYNTAX_EMPTY:
		case LDNS_STATUS_SYNTAX_TTL:
		case LDNS_STATUS_SYNTAX_ORIGIN:
			break;
		case LDNS_STATUS_SYNTAX_INCLUDE:
			if (include(c, f, file, (long)pos, line, &ll) < 0)
				goto cleanup;
			break;
		default:
			ldns_rr_free(rr);
			p53_zb_rec_err(c->b, &at, "%s", ldns_get_errorstr_by_id(st));
			goto cleanup;
		}
		long np = ftell(f);
		if (np < 0 || (uint64_t)np < pos)
			goto read_error;
		if ((uint64_t)np == pos) {
			if (!feof(f))
				goto read_error;
			rc = 0;
			goto cleanup;
		}
		if (win_lines(&w, pos, (uint64_t)np, &nl) < 0)
			goto read_error;
		pos = (uint64_t)np;
		line += nl;
		scan_sync(c, &sc);
	}
read_error:
	at = (struct p53_zb_rec){ .file = file, .line = line + 1 };
	p53_zb_rec_err(c->b, &at, "read error");
cleanup:
	free(w.buf);
	return rc;
}

static int load_file(struct pctx *c, FILE *f, uint16_t file)
{
	return c->fast ? load_file_fast(c, f, file) : load_file_ldns(c, f, file);
}

/* Does this name (n bytes, a well-formed wire name) carry an upper-case letter? */
static int has_upper(const uint8_t *p, size_t n)
{
	int up = 0;

	for (size_t i = 0; i < n; i++)
		up |= p[i] >= 'A' && p[i] <= 'Z';
	return up;
}

/*
 * A wire record's RDATA checked and its canonical form (RFC 4034 §6.2, as ldns_rr2canonical
 * makes it: the names of the types it lists lower-cased) made without ldns, for the types a
 * big zone is made of. `canon` gets it when it differs (*clen > 0), else *clen = 0.
 * @return 1 done, 0 not a type (or a layout) handled here: ldns decides, as before.
 */
static int wire_rdata(uint16_t type, const uint8_t *rd, size_t rdlen, uint8_t *canon, size_t *clen)
{
	size_t pre = 0, post = 0;
	int ln, ln2 = 0;

	*clen = 0;
	switch (type) {
	case LDNS_RR_TYPE_A:
		return rdlen == 4;
	case LDNS_RR_TYPE_AAAA:
		return rdlen == 16;
	case LDNS_RR_TYPE_TXT: {
		/* One or more <character-string>s, filling the RDATA exactly. */
		size_t i = 0;
		if (rdlen == 0)
			return 0;
		while (i < rdlen)
			i += 1u + rd[i];
		return i == rdlen;
	}
	case LDNS_RR_TYPE_NS: case LDNS_RR_TYPE_CNAME: case LDNS_RR_TYPE_PTR:
	case LDNS_RR_TYPE_DNAME:
		break;
	case LDNS_RR_TYPE_MX:
		pre = 2;
		break;
	case LDNS_RR_TYPE_SRV:
		pre = 6;
		break;
	case LDNS_RR_TYPE_SOA:
		/* MNAME, RNAME, then five 32-bit numbers. */
		ln = p53_name_len(rd, rdlen);
		if (ln < 0)
			return 0;
		ln2 = p53_name_len(rd + ln, rdlen - (size_t)ln);
		if (ln2 < 0 || (size_t)ln + (size_t)ln2 + 20 != rdlen)
			return 0;
		if (has_upper(rd, (size_t)ln + (size_t)ln2)) {
			p53_name_lower(canon, rd, (size_t)ln);
			p53_name_lower(canon + ln, rd + ln, (size_t)ln2);
			memcpy(canon + ln + ln2, rd + ln + ln2, 20);
			*clen = rdlen;
		}
		return 1;
	case LDNS_RR_TYPE_RRSIG:
		/* 18 bytes of fields, the Signer's Name, then a signature (RFC 4034 §3.1). */
		if (rdlen <= 18)
			return 0;
		ln = p53_name_len(rd + 18, rdlen - 18);
		if (ln < 0 || (size_t)ln + 18 >= rdlen)
			return 0;
		pre = 18;
		post = rdlen - 18 - (size_t)ln;
		break;
	default:
		return 0;
	}
	/* A name after `pre` bytes, then `post` bytes that are not names. */
	if (rdlen <= pre)
		return 0;
	ln = p53_name_len(rd + pre, rdlen - pre);
	if (ln < 0 || pre + (size_t)ln + post != rdlen)
		return 0;
	if (has_upper(rd + pre, (size_t)ln)) {
		memcpy(canon, rd, pre);
		p53_name_lower(canon + pre, rd + pre, (size_t)ln);
		memcpy(canon + pre + ln, rd + pre + ln, post);
		*clen = rdlen;
	}
	return 1;
}

/*
 * Records in memory (uncompressed wire, one after another): a secondary zone's content. The
 * same checks as a file's records (rr_check, rr_store); the Nth record is "line" N in
 * messages. The common types are taken from the wire as they are (wire_rdata), the others
 * through ldns (add_rr): a million records read back out of an image cost no ldns object.
 * POP53_ZONE_SCANNER=ldns (c->fast off) sends every record through ldns: the fuzz_xfr target
 * compares the two readers that way.
 */
static int load_wire(struct pctx *c, const uint8_t *rrs, size_t len, uint16_t file)
{
	uint8_t name[P53_NAME_MAXLEN], *canon = malloc(UINT16_MAX);
	size_t pos = 0;
	int ret = -1;

	if (canon == NULL) {
		struct p53_zb_rec at = { .file = file, .line = 1 };
		return p53_zb_rec_err(c->b, &at, "out of memory");
	}
	for (uint32_t i = 0; pos < len; i++) {
		struct p53_zb_rec at = { .file = file, .line = i + 1 };
		int ol = p53_name_len(rrs + pos, len - pos);
		if (c->fast && ol > 0 && pos + (size_t)ol + 10 <= len) {
			const uint8_t *w = rrs + pos + ol;
			uint16_t type = (uint16_t)(w[0] << 8 | w[1]), cls = (uint16_t)(w[2] << 8 | w[3]);
			uint32_t ttl = (uint32_t)w[4] << 24 | (uint32_t)w[5] << 16 | (uint32_t)w[6] << 8 | w[7];
			size_t rdlen = (size_t)(w[8] << 8 | w[9]), clen;
			if (pos + (size_t)ol + 10 + rdlen <= len &&
			    wire_rdata(type, w + 10, rdlen, canon, &clen)) {
				int rc = rr_check(c, &at, cls, type, rrs + pos, (size_t)ol, name);
				if (rc < 0 || (rc > 0 && rr_store(c, &at, name, (size_t)ol, w, 10 + rdlen,
								  canon, clen, ttl) < 0))
					goto out;
				pos += (size_t)ol + 10 + rdlen;
				continue;
			}
		}
		ldns_rr *rr = NULL;
		ldns_status st = ldns_wire2rr(&rr, rrs, len, &pos, LDNS_SECTION_ANSWER);
		if (st != LDNS_STATUS_OK) {
			p53_zb_rec_err(c->b, &at, "%s", ldns_get_errorstr_by_id(st));
			goto out;
		}
		int rc = add_rr(c, rr, &at);
		ldns_rr_free(rr);
		if (rc < 0)
			goto out;
	}
	ret = 0;
out:
	free(canon);
	return ret;
}

int p53_zone_load(struct p53_zb *b, uint32_t z)
{
	const struct p53_zone_src *src = &b->src[z];
	const struct p53_image_zone *zn = &b->zones[z];
	struct pctx c = { .b = b, .z = z, .ttl = LDNS_TTL_DEFAULT, .last_node = P53_NONE };
	const char *scanner = getenv("POP53_ZONE_SCANNER");
	char where[4200];
	FILE *f = NULL;
	int id, rc = -1;

	if (src->cfg_file != NULL)
		snprintf(where, sizeof(where), "%s:%d", src->cfg_file, src->cfg_line);
	else
		snprintf(where, sizeof(where), "%s:0", src->file ? src->file : "(null)");
	/* POP53_ZONE_SCANNER=ldns: every line (every record in memory) through ldns, for
	 * comparing the two (the fuzz_zone and fuzz_xfr targets do) and as a way around a bug of
	 * the fast paths. */
	c.fast = scanner == NULL || strcmp(scanner, "ldns") != 0;
	if (src->rrs != NULL) {
		/* Room for about as many records and owners as the bytes hold (a big zone's
		 * records average 36 bytes), so the arrays and the node map are not regrown and
		 * rehashed a dozen times on the way to a million (untouched room costs no memory). */
		size_t est = src->rrs_len / 32 + 16;
		if (p53_zb_grow((void **)&b->recs, &b->recs_cap, b->n_recs + est, sizeof(*b->recs)) < 0 ||
		    p53_zb_grow((void **)&b->arena, &b->arena_cap, b->arena_len + src->rrs_len, 1) < 0 ||
		    p53_zb_grow((void **)&b->nodes, &b->nodes_cap, b->n_nodes + est, sizeof(*b->nodes)) < 0 ||
		    p53_zb_grow((void **)&b->nx, &b->nx_cap, b->n_nodes + est, sizeof(*b->nx)) < 0 ||
		    b->n_nodes + est >= P53_NONE || map_reserve(b, b->n_nodes + est) < 0)
			return p53_zb_err(b, where, "out of memory");
		c.wire = ldns_buffer_new(1024);
		c.canon = ldns_buffer_new(1024);
		id = p53_zb_file_add(b, src->file != NULL ? src->file : src->name);
		if (id < 0 || c.wire == NULL || c.canon == NULL)
			p53_zb_err(b, where, "out of memory");
		else
			rc = load_wire(&c, src->rrs, src->rrs_len, (uint16_t)id);
		goto cleanup;
	}
	if (src->file == NULL)
		return p53_zb_err(b, where, "zone '%s' has no file", src->name);
	f = p53_fopen_regular(src->file);
	if (f == NULL)
		return p53_zb_err(b, where, "zone '%s': cannot open '%s': %s", src->name, src->file,
				  errno == EINVAL ? "not a regular file" : strerror(errno));
	id = p53_zb_file_add(b, src->file);
	c.wire = ldns_buffer_new(1024);
	c.canon = ldns_buffer_new(1024);
	c.origin = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, zn->name_len, b->names + zn->name_off);
	c.prev = c.origin ? ldns_rdf_clone(c.origin) : NULL;
	if (id < 0 || c.wire == NULL || c.canon == NULL || c.origin == NULL || c.prev == NULL) {
		p53_zb_err(b, where, "out of memory");
		goto cleanup;
	}
	rc = load_file(&c, f, (uint16_t)id);
cleanup:
	ldns_rdf_deep_free(c.prev);
	ldns_rdf_deep_free(c.origin);
	if (c.canon != NULL)
		ldns_buffer_free(c.canon);
	if (c.wire != NULL)
		ldns_buffer_free(c.wire);
	if (f != NULL)
		fclose(f);
	return rc;
}

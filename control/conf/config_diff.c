/* Whether a config edit reaches the zone image; see config_diff.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "control/conf/config_diff.h"
#include "control/conf/schema.h"

/* Deeper than any config pop53 reads; a cycle of aliases (`&a [*a]`) ends here as "changed". */
#define DIFF_MAX_DEPTH 32

int p53_config_text_read(const char *path, char **buf, size_t *len)
{
	FILE *f = p53_fopen_regular(path);
	char *b = NULL;
	size_t n = 0, cap = 0;

	*buf = NULL;
	*len = 0;
	if (f == NULL)
		return -1;
	for (;;) {
		if (cap - n < 4096) {
			char *nb = realloc(b, cap + 65536 + 1);
			if (nb == NULL) {
				free(b);
				fclose(f);
				errno = ENOMEM;
				return -1;
			}
			b = nb;
			cap += 65536;
		}
		size_t k = fread(b + n, 1, cap - n, f);
		n += k;
		if (k == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(b);
		errno = EIO;
		return -1;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

struct diff {
	yaml_document_t *a, *b;         /* running, new */
	const char *path;
	char *why;
	size_t whylen;
};

/* Keys whose values never reach the image or the replicas, below the node at `where`. */
static bool runtime_key(const char *where, const char *key)
{
	static const char *const top[] = { "metrics", "health", "anycast", "tcp", "rrl", "cookies",
					   NULL };
	static const char *const server[] = { "control_socket", "control_group", "replicas",
					      "watch_zones", "watch_debounce_ms", NULL };
	const char *const *list = NULL;

	if (where[0] == '\0')
		list = top;
	else if (strcmp(where, "server") == 0)
		list = server;
	else if (strcmp(where, "dataplane") == 0)
		/* Restart-only keys keep their running value (control/reload.c); the service
		 * addresses are in every replica (control/publish.c). */
		return strcmp(key, "addresses") != 0;
	for (int i = 0; list != NULL && list[i] != NULL; i++)
		if (strcmp(list[i], key) == 0)
			return true;
	return false;
}

static int differs(struct diff *d, const yaml_node_t *at, const char *where, const char *what)
{
	snprintf(d->why, d->whylen, "%s %s (%s:%zu)", where[0] ? where : "the top level", what,
		 d->path, at->start_mark.line + 1);
	return 1;
}

static const char *scalar(const yaml_node_t *n)
{
	return n != NULL && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The value of scalar key `key` in mapping `m` of doc, or NULL. */
static yaml_node_t *map_get(yaml_document_t *doc, const yaml_node_t *m, const char *key)
{
	if (m == NULL || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));
		if (k != NULL && strcmp(k, key) == 0)
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

static int node_diff(struct diff *d, yaml_node_t *x, yaml_node_t *y, const char *where, int depth);

static int map_diff(struct diff *d, yaml_node_t *x, yaml_node_t *y, const char *where, int depth)
{
	char sub[256];

	/* Every key of the running mapping: the same value in the new one, or removed. */
	for (yaml_node_pair_t *p = x->data.mapping.pairs.start; p < x->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(d->a, p->key));
		if (k == NULL)
			return differs(d, y, where, "has a key that is not a plain value");
		if (runtime_key(where, k))
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", where, where[0] ? "." : "", k);
		yaml_node_t *v = map_get(d->b, y, k);
		if (v == NULL)
			return differs(d, y, sub, "removed");
		if (node_diff(d, yaml_document_get_node(d->a, p->value), v, sub, depth + 1) != 0)
			return 1;
	}
	/* Keys only the new one has. */
	for (yaml_node_pair_t *p = y->data.mapping.pairs.start; p < y->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(d->b, p->key);
		const char *k = scalar(kn);
		if (k == NULL)
			return differs(d, y, where, "has a key that is not a plain value");
		if (runtime_key(where, k) || map_get(d->a, x, k) != NULL)
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", where, where[0] ? "." : "", k);
		return differs(d, kn, sub, "added");
	}
	return 0;
}

static int seq_diff(struct diff *d, yaml_node_t *x, yaml_node_t *y, const char *where, int depth)
{
	char sub[256];
	long nx = x->data.sequence.items.top - x->data.sequence.items.start;
	long ny = y->data.sequence.items.top - y->data.sequence.items.start;

	for (long i = 0; i < nx || i < ny; i++) {
		yaml_node_t *xi = i < nx ? yaml_document_get_node(d->a, x->data.sequence.items.start[i]) : NULL;
		yaml_node_t *yi = i < ny ? yaml_document_get_node(d->b, y->data.sequence.items.start[i]) : NULL;
		/* A list item with a name (a zone, a key): say which. */
		const char *name = scalar(map_get(yi != NULL ? d->b : d->a, yi != NULL ? yi : xi, "name"));
		snprintf(sub, sizeof(sub), "%s[%ld]%s%s%s", where, i, name ? " (" : "", name ? name : "",
			 name ? ")" : "");
		if (xi == NULL)
			return differs(d, yi, sub, "added");
		if (yi == NULL)
			return differs(d, y, sub, "removed");
		if (node_diff(d, xi, yi, sub, depth + 1) != 0)
			return 1;
	}
	return 0;
}

static int node_diff(struct diff *d, yaml_node_t *x, yaml_node_t *y, const char *where, int depth)
{
	if (x == NULL || y == NULL || depth > DIFF_MAX_DEPTH)
		return differs(d, y != NULL ? y : yaml_document_get_root_node(d->b), where, "changed");
	if (x->type != y->type)
		return differs(d, y, where, "changed");
	/* Explicit tags (!!str) and quoting can change what a value means ("~" is not null). */
	if (strcmp((const char *)x->tag, (const char *)y->tag) != 0)
		return differs(d, y, where, "changed");
	switch (x->type) {
	case YAML_SCALAR_NODE:
		if (x->data.scalar.length != y->data.scalar.length ||
		    memcmp(x->data.scalar.value, y->data.scalar.value, x->data.scalar.length) != 0 ||
		    (x->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) !=
		    (y->data.scalar.style == YAML_PLAIN_SCALAR_STYLE))
			return differs(d, y, where, "changed");
		return 0;
	case YAML_SEQUENCE_NODE:
		return seq_diff(d, x, y, where, depth);
	case YAML_MAPPING_NODE:
		return map_diff(d, x, y, where, depth);
	default:
		return differs(d, y, where, "changed");
	}
}

static int load(const char *text, size_t len, yaml_document_t *doc)
{
	yaml_parser_t p;

	if (yaml_parser_initialize(&p) == 0)
		return -1;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	int rc = yaml_parser_load(&p, doc) != 0 ? 0 : -1;
	yaml_parser_delete(&p);
	if (rc == 0 && yaml_document_get_root_node(doc) == NULL) {
		yaml_document_delete(doc);
		rc = -1;
	}
	return rc;
}

int p53_config_compile_diff(const char *path, const char *old_text, size_t old_len,
			    const char *new_text, size_t new_len, char *why, size_t whylen)
{
	yaml_document_t a, b;

	if (whylen > 0)
		why[0] = '\0';
	if (load(old_text, old_len, &a) != 0) {
		snprintf(why, whylen, "%s: the running config's text does not parse again", path);
		return -1;
	}
	if (load(new_text, new_len, &b) != 0) {
		yaml_document_delete(&a);
		snprintf(why, whylen, "%s: the new config does not parse", path);
		return -1;
	}
	struct diff d = { .a = &a, .b = &b, .path = path, .why = why, .whylen = whylen };
	int rc = node_diff(&d, yaml_document_get_root_node(&a), yaml_document_get_root_node(&b), "", 0);
	yaml_document_delete(&b);
	yaml_document_delete(&a);
	return rc;
}

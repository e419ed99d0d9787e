/*
 * The compile warnings of one input, collected for comparison (fuzz_zone, fuzz_xfr): the
 * image builder's warning callback appends each line; the buffer cuts at its end.
 */
#ifndef P53_FUZZ_WARNS_H
#define P53_FUZZ_WARNS_H

#include <stdio.h>

/* Warnings of one compile, one after another (cut at the buffer's end). */
struct warns {
	char text[4096];
	size_t len;
};

static void collect(void *arg, const char *msg)
{
	struct warns *w = arg;
	int n = snprintf(w->text + w->len, sizeof(w->text) - w->len, "%s\n", msg);

	if (n > 0)
		w->len += (size_t)n < sizeof(w->text) - w->len ? (size_t)n : sizeof(w->text) - 1 - w->len;
}

#endif

/* Text forms for logs and replies; see text.h. */
#include <stdio.h>

#include <ldns/ldns.h>

#include "control/text.h"

const char *p53_type_to_str(char *dst, size_t cap, uint16_t type)
{
	const ldns_rr_descriptor *d = ldns_rr_descript(type);

	if (d != NULL && d->_name != NULL)
		return d->_name;
	snprintf(dst, cap, "TYPE%u", type);
	return dst;
}

char *p53_name_to_str(char *dst, size_t cap, const uint8_t *name)
{
	size_t o = 0;

	if (cap == 0)
		return dst;
	if (*name == 0) {
		snprintf(dst, cap, ".");
		return dst;
	}
	while (*name != 0 && o + 1 < cap) {
		uint8_t l = *name++;
		for (uint8_t i = 0; i < l && o + 5 < cap; i++) {
			uint8_t c = name[i];
			if (c == '.' || c == '\\')
				o += (size_t)snprintf(dst + o, cap - o, "\\%c", c);
			else if (c < 0x21 || c > 0x7e)
				o += (size_t)snprintf(dst + o, cap - o, "\\%03u", c);
			else
				dst[o++] = (char)c;
		}
		name += l;
		if (o + 1 < cap)
			dst[o++] = '.';
	}
	dst[o < cap ? o : cap - 1] = '\0';
	return dst;
}

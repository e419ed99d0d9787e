/*
 * The health seam of DNSSEC (control/dnssec/dnssec.c): a signed zone whose earliest RRSIG
 * expires within dnssec.signature_margin fails its check; unsigned zones always pass. The
 * signed zone is tests/unit/dataplane/zones/nsec.test.zone, signed until 2037-12-31 00:00 UTC.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control/dnssec/dnssec.h"
#include "dataplane/image.h"

#define EXPIRE 2145830400u /* 2037-12-31 00:00:00 UTC */
#define DAY    86400u

static void *img;

static int setup(void **state)
{
	char err[512], f1[512], f2[512];
	size_t len;

	(void)state;
	snprintf(f1, sizeof(f1), "%s/tests/unit/dataplane/zones/nsec.test.zone", P53_SRCDIR);
	snprintf(f2, sizeof(f2), "%s/tests/differential/zones/second.test.zone", P53_SRCDIR);
	struct p53_zone_src zones[2] = {{.name = "nsec.test.", .file = f1},
					{.name = "second.test.", .file = f2}};
	img = p53_image_build(zones, 2, &len, err, sizeof(err), NULL, NULL);
	assert_non_null(img);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(img);
	return 0;
}

static void test_state(void **state)
{
	(void)state;
	struct p53_dnssec_state st;

	p53_dnssec_zone_state(img, 0, EXPIRE - 10 * DAY, &st);
	assert_true(st.is_signed);
	assert_string_equal(st.denial, "nsec");
	assert_int_equal(st.expire, EXPIRE);
	assert_int_equal(st.left, 10 * DAY);
	p53_dnssec_zone_state(img, 1, EXPIRE, &st);
	assert_false(st.is_signed);
	assert_string_equal(st.denial, "none");
}

struct warns {
	int n;
	char last[1200];
};

static void collect(void *arg, const char *msg)
{
	struct warns *w = arg;

	w->n++;
	snprintf(w->last, sizeof(w->last), "%s", msg);
}

static void test_margin(void **state)
{
	(void)state;
	char why[1200] = "";
	struct warns w = {0};

	/* ten days left, three days' margin: fit */
	assert_int_equal(p53_dnssec_zone_check(img, 0, EXPIRE - 10 * DAY, 3 * DAY, why, sizeof(why)), 0);
	/* a day left: not fit, and says why */
	assert_int_equal(p53_dnssec_zone_check(img, 0, EXPIRE - DAY, 3 * DAY, why, sizeof(why)), -1);
	assert_string_equal(why, "zone 'nsec.test.': signatures expire in 86400 s "
				 "(dnssec.signature_margin 259200 s)");
	/* at the edge: exactly the margin left still passes, one second less does not */
	assert_int_equal(p53_dnssec_zone_check(img, 0, EXPIRE - 3 * DAY, 3 * DAY, why, sizeof(why)), 0);
	assert_int_equal(p53_dnssec_zone_check(img, 0, EXPIRE - 3 * DAY + 1, 3 * DAY, why, sizeof(why)), -1);
	/* expired */
	assert_int_equal(p53_dnssec_zone_check(img, 0, EXPIRE + 60, 0, why, sizeof(why)), -1);
	assert_string_equal(why, "zone 'nsec.test.': signatures expired 60 s ago");
	/* unsigned zones never fail on signatures */
	assert_int_equal(p53_dnssec_zone_check(img, 1, EXPIRE + 60, 3 * DAY, why, sizeof(why)), 0);
	/* the compile-time warning: one per failing zone */
	p53_dnssec_warn_expiring(img, EXPIRE - DAY, 3 * DAY, collect, &w);
	assert_int_equal(w.n, 1);
	assert_non_null(strstr(w.last, "nsec.test."));
	w.n = 0;
	p53_dnssec_warn_expiring(img, EXPIRE - 10 * DAY, 3 * DAY, collect, &w);
	assert_int_equal(w.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state),
		cmocka_unit_test(test_margin),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

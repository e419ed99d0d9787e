/*
 * The replica publisher (control/publish.c): what a worker answers from after a publish. The
 * service addresses change on a config reload, so they travel in the RCU-published replica
 * with the image: a query to an address the new config dropped is dropped by the worker
 * (dst_addr) from the next burst on, and one to a new address is answered.
 *
 * The EDNS payload size a replica advertises is clamped to what the port carries.
 *
 * Needs the EAL (rte_malloc, rte_rcu_qsbr, a mempool): --no-huge --no-pci, own file prefix.
 */
#include <arpa/inet.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "control/bigmem.h"
#include "control/publish.h"
#include "control/zone/image_build.h"

static struct rte_mempool *mp;
static struct p53_worker workers[2];
static struct p53_dataplane dp;
static char zone_file[512];

static const uint8_t SRV_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x53 };

static void *compile(size_t *len)
{
	char err[512];
	struct p53_zone_src z = {.name = "diff.test.", .file = zone_file};
	void *img = p53_image_build(&z, 1, len, err, sizeof(err), NULL, NULL);

	if (img == NULL)
		fail_msg("zone: %s", err);
	return img;
}

static void config(struct p53_config *cfg, const char *const *addrs, int n)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->identity = "unit-pop";
	cfg->edns_max_payload = 1232;
	for (int i = 0; i < n; i++) {
		struct p53_addr *a = &cfg->addrs[cfg->n_addrs++];
		a->family = strchr(addrs[i], ':') != NULL ? AF_INET6 : AF_INET;
		assert_int_equal(inet_pton(a->family, addrs[i], a->bytes), 1);
	}
}

static uint16_t payload = 1232;        /* server.edns_max_payload of the next publish */

static void publish(const char *const *addrs, int n)
{
	struct p53_config cfg;
	char err[256];
	size_t len;
	void *img = compile(&len);

	config(&cfg, addrs, n);
	cfg.edns_max_payload = payload;
	if (p53_dataplane_publish(&dp, img, len, &cfg, err, sizeof(err)) != 0)
		fail_msg("publish: %s", err);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* An IPv4 query for www.diff.test A to `dst`, UDP checksum 0 (none, RFC 768). Returns 1 when
 * the worker answered it, 0 when it dropped it (and then that it was counted dst_addr). */
static const uint8_t www_diff_test[] = {0xbe, 0xef, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
	3, 'w', 'w', 'w', 4, 'd', 'i', 'f', 'f', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1};

/* The query `q` (`n` bytes) in an IPv4 frame to `dst`, as answered() sends it: the worker's
 * response, or NULL when it dropped it. */
static struct rte_mbuf *ask(const char *dst, const uint8_t *q, size_t n);

static int answered(const char *dst)
{
	uint64_t before = workers[0].stats.drop[P53_PKT_DROP_DST_ADDR];
	struct rte_mbuf *m = ask(dst, www_diff_test, sizeof(www_diff_test));

	if (m != NULL) {
		rte_pktmbuf_free(m);
		return 1;
	}
	assert_int_equal(workers[0].stats.drop[P53_PKT_DROP_DST_ADDR], before + 1);
	return 0;
}

static struct rte_mbuf *ask(const char *dst, const uint8_t *q, size_t n)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp), *out[1];

	assert_non_null(m);
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	memset(f, 0, 42);
	memcpy(f, SRV_MAC, 6);
	memcpy(f + 6, (const uint8_t[6]){ 0x02, 0, 0, 0, 0, 1 }, 6);
	put16(f + 12, 0x0800);
	f[14] = 0x45;
	put16(f + 16, (uint16_t)(28 + n));
	f[22] = 64;
	f[23] = 17;
	memcpy(f + 26, (const uint8_t[4]){ 192, 0, 2, 1 }, 4);
	assert_int_equal(inet_pton(AF_INET, dst, f + 30), 1);
	put16(f + 34, 40000);
	put16(f + 36, 53);
	put16(f + 38, (uint16_t)(8 + n));
	memcpy(f + 42, q, n);
	m->data_len = (uint16_t)(42 + n);
	m->pkt_len = m->data_len;
	return p53_worker_burst(&workers[0], &m, 1, out) == 1 ? out[0] : NULL;
}

/* Regression: on ports other than af_xdp the destination address was never checked, and a
 * config reload that changes dataplane.addresses must change what the workers accept. */
static void test_addresses_travel_in_the_replica(void **state)
{
	static const char *const first[] = {"192.0.2.53", "2001:db8:53::53"};
	static const char *const second[] = {"198.51.100.53"};
	(void)state;

	publish(first, 2);
	const struct p53_replica *r = workers[0].replica;
	assert_int_equal(r->addrs.n4, 1);
	assert_int_equal(r->addrs.n6, 1);
	assert_true(answered("192.0.2.53"));
	assert_false(answered("198.51.100.53"));
	assert_false(answered("192.0.2.54"));

	publish(second, 1);
	r = workers[0].replica;
	assert_int_equal(r->addrs.n4, 1);
	assert_int_equal(r->addrs.n6, 0);
	assert_false(answered("192.0.2.53"));
	assert_true(answered("198.51.100.53"));
}

/* Regression: server.edns_max_payload over what the port carries was used as is, so replies
 * between the port's limit and the configured size were lost. Every replica gets the port's
 * limit instead (the warning is logged once per configured value). */
static void test_payload_clamped_to_the_port(void **state)
{
	static const char *const addrs[] = {"192.0.2.53"};
	(void)state;

	dp.payload_limit = 1452;
	snprintf(dp.payload_why, sizeof(dp.payload_why), "MTU 1500 less 48 bytes of IPv6 and UDP headers");
	payload = 4096;
	publish(addrs, 1);
	assert_int_equal(workers[0].replica->conf.edns_max_payload, 1452);
	assert_int_equal(dp.payload_warned, 4096);
	payload = 1232;                 /* under the limit: as configured */
	publish(addrs, 1);
	assert_int_equal(workers[0].replica->conf.edns_max_payload, 1232);
	dp.payload_limit = 0;           /* no limit known: as configured */
	payload = 4096;
	publish(addrs, 1);
	assert_int_equal(workers[0].replica->conf.edns_max_payload, 4096);
	payload = 1232;
}

/* The first replica answers from the compiled image itself (no copy); the others are
 * copies of it; with per-socket replicas every worker of the socket shares that one. The
 * replicas free what they hold at the next publish (ASAN checks the free() / rte_free()). */
static void test_first_replica_is_the_image(void **state)
{
	static const char *const addrs[] = {"192.0.2.53"};
	struct p53_config cfg;
	char err[256];
	size_t len;
	(void)state;

	void *img = compile(&len);
	config(&cfg, addrs, 1);
	assert_int_equal(p53_dataplane_publish(&dp, img, len, &cfg, err, sizeof(err)), 0);
	const struct p53_replica *r0 = workers[0].replica, *r1 = workers[1].replica;
	assert_ptr_equal(r0->image, img);
	assert_int_equal(r0->image_malloced, 1);
	assert_ptr_not_equal(r1->image, img);
	assert_int_equal(r1->image_malloced, 0);
	assert_int_equal(r1->image_len, len);
	assert_memory_equal(r1->image, img, len);
	assert_ptr_equal(dp.image, img);
	assert_true(answered("192.0.2.53"));

	dp.mode = P53_REPLICAS_PER_SOCKET;
	img = compile(&len);
	assert_int_equal(p53_dataplane_publish(&dp, img, len, &cfg, err, sizeof(err)), 0);
	assert_ptr_equal(workers[0].replica->image, img);
	assert_ptr_equal(workers[1].replica, workers[0].replica);
	assert_true(answered("192.0.2.53"));
	dp.mode = P53_REPLICAS_PER_CORE;
	publish(addrs, 1);
	assert_ptr_not_equal(workers[1].replica, workers[0].replica);
}

/* Every worker reads an image that starts on a cache line (control/bigmem.h): the compiled
 * one the first worker adopts, and the heap copies. One that does not (not from
 * p53_bigmem_image: a bug) is not adopted: every worker gets an aligned copy and it answers. */
static void test_workers_get_aligned_images(void **state)
{
	static const char *const addrs[] = {"192.0.2.53"};
	struct p53_config cfg;
	char err[256];
	size_t len;
	(void)state;

	void *img = compile(&len);
	assert_int_equal((uintptr_t)img % P53_IMAGE_ALIGN, 0);
	config(&cfg, addrs, 1);
	assert_int_equal(p53_dataplane_publish(&dp, img, len, &cfg, err, sizeof(err)), 0);
	assert_ptr_equal(workers[0].replica->image, img);
	for (unsigned int i = 0; i < 2; i++)
		assert_int_equal((uintptr_t)workers[i].replica->image % P53_IMAGE_ALIGN, 0);

	/* glibc malloc's 16-byte alignment: one buffer in four is on a line; take one that is
	 * not. ASAN's allocator puts every buffer of this size on a line (its redzones): there
	 * the copy path cannot be reached from malloc, and only the part above is checked. */
	void *held[64] = {0}, *odd = NULL;
	img = compile(&len);
	for (unsigned int i = 0; i < 64 && odd == NULL; i++) {
		void *p = malloc(len + 16 * i);
		assert_non_null(p);
		if ((uintptr_t)p % P53_IMAGE_ALIGN != 0)
			odd = p;
		else
			held[i] = p;
	}
	for (unsigned int i = 0; i < 64; i++)
		free(held[i]);
	if (odd == NULL) {
		print_message("every malloc'd buffer is on a line (a sanitizer's allocator): the "
			      "copy of an unaligned image is not checked in this build\n");
		free(img);
		publish(addrs, 1);
		return;
	}
	memcpy(odd, img, len);
	free(img);
	assert_int_equal(p53_dataplane_publish(&dp, odd, len, &cfg, err, sizeof(err)), 0);
	for (unsigned int i = 0; i < 2; i++) {
		assert_ptr_not_equal(workers[i].replica->image, odd);
		assert_int_equal(workers[i].replica->image_len, len);
		assert_int_equal((uintptr_t)workers[i].replica->image % P53_IMAGE_ALIGN, 0);
	}
	assert_true(answered("192.0.2.53"));
	publish(addrs, 1);
}

/* A big image (4 MiB and up) under --no-huge: the DPDK heap is 4 KiB pages there, so the
 * second worker's copy is malloc memory with transparent huge pages asked for
 * (image_malloced, freed with free(): ASAN checks it at the next publish), not heap memory;
 * the first worker still answers from the compiled image. */
static void test_big_copy_without_hugepages(void **state)
{
	static const char *const addrs[] = {"192.0.2.53"};
	char path[] = "/tmp/p53-test-publish-big.XXXXXX";
	struct p53_config cfg;
	char err[512];
	size_t len;
	(void)state;

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "$ORIGIN big.test.\n$TTL 300\n@ SOA ns hostmaster 1 3600 600 86400 300\n"
		"@ NS ns\nns A 192.0.2.1\n");
	for (unsigned int i = 0; i < 80000; i++)
		fprintf(f, "h%u A 10.%u.%u.%u\n", i, (i >> 16) & 255, (i >> 8) & 255, i & 255);
	assert_int_equal(fclose(f), 0);
	struct p53_zone_src z = {.name = "big.test.", .file = path};
	void *img = p53_image_build(&z, 1, &len, err, sizeof(err), NULL, NULL);
	unlink(path);
	if (img == NULL)
		fail_msg("zone: %s", err);
	assert_true(len >= P53_BIGMEM_MIN);
	assert_int_equal(rte_eal_has_hugepages(), 0);

	config(&cfg, addrs, 1);
	assert_int_equal(p53_dataplane_publish(&dp, img, len, &cfg, err, sizeof(err)), 0);
	const struct p53_replica *r0 = workers[0].replica, *r1 = workers[1].replica;
	assert_ptr_equal(r0->image, img);
	assert_int_equal((uintptr_t)r0->image & ((2u << 20) - 1), 0);  /* 2 MiB-aligned too */
	assert_int_equal(r1->image_malloced, 1);
	assert_int_equal(r1->image_len, len);
	assert_memory_equal(r1->image, img, len);
	assert_int_equal((uintptr_t)r1->image & ((2u << 20) - 1), 0);  /* 2 MiB-aligned */
	/* No RRset sums for a big image (replica.h P53_PREFETCH_MIN_IMAGE): the reply sums the
	 * records it wrote, and the checksum is right. */
	assert_true(len > P53_PREFETCH_MIN_IMAGE);
	assert_null(r0->conf.sums);
	assert_int_equal(r0->conf.n_sums, 0);
	assert_null(r1->conf.sums);
	static const uint8_t h77[] = {0xbe, 0xef, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
		3, 'h', '7', '7', 3, 'b', 'i', 'g', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1};
	struct rte_mbuf *m = ask("192.0.2.53", h77, sizeof(h77));
	assert_non_null(m);
	/* Read back as a query (ports swapped, which leaves the UDP sum as it is: RFC 1071). */
	uint8_t rf[512];
	assert_true(rte_pktmbuf_data_len(m) <= sizeof(rf));
	memcpy(rf, rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m));
	memcpy(rf + 34, (const uint8_t[4]){ rf[36], rf[37], rf[34], rf[35] }, 4);
	struct p53_pkt pkt;
	assert_int_equal(p53_pkt_parse(rf, rte_pktmbuf_data_len(m), &pkt), P53_PKT_OK);
	assert_true(p53_pkt_udp_csum_ok(rf, &pkt));
	assert_int_equal(rf[pkt.dns_off + 7], 1);                       /* ANCOUNT 1 */
	static const uint8_t addr77[] = {10, 0, 0, 77};
	assert_memory_equal(rf + pkt.dns_off + pkt.dns_len - 4, addr77, 4); /* h77's A */
	rte_pktmbuf_free(m);
	publish(addrs, 1);      /* back to the small zone; the big replicas are freed */
	assert_true(answered("192.0.2.53"));
	assert_true(workers[0].replica->conf.n_sums > 0);       /* a small image has them */
}

/* A publish takes the image whether it succeeds or not, so no caller frees it twice or
 * leaks it: a rejected image is freed by the publish (ASAN's leak check fails the test
 * otherwise) and the workers keep their replicas. */
static void test_failed_publish_takes_the_image(void **state)
{
	static const char *const addrs[] = {"192.0.2.53"};
	struct p53_config cfg;
	char err[256];
	size_t len;
	(void)state;

	publish(addrs, 1);
	const struct p53_replica *before = workers[0].replica;
	void *img = compile(&len);
	((struct p53_image_hdr *)img)->magic ^= 1;
	config(&cfg, addrs, 1);
	assert_int_equal(p53_dataplane_publish(&dp, img, len, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "consistency check"));
	assert_ptr_equal(workers[0].replica, before);
	assert_true(answered("192.0.2.53"));
}

static int setup(void **state)
{
	char cpu[16];
	cpu_set_t set;
	int first = 0;

	(void)state;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		while (first < CPU_SETSIZE - 1 && !CPU_ISSET(first, &set))
			first++;
	snprintf(cpu, sizeof(cpu), "%d", first);
	char *argv[] = {"test_publish", "-l", cpu, "--no-huge", "-m", "64", "--no-shconf",
			"--file-prefix=p53-test-publish", "--no-telemetry", "--no-pci",
			"--log-level=*:warning", NULL};
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0)
		return -1;
	mp = rte_pktmbuf_pool_create("t_publish", 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (mp == NULL)
		return -1;
	snprintf(zone_file, sizeof(zone_file), "%s/tests/differential/zones/diff.test.zone", P53_SRCDIR);
	for (unsigned int i = 0; i < 2; i++) {
		workers[i].lcore = rte_lcore_id();
		memcpy(workers[i].mac, SRV_MAC, 6);
	}
	return p53_dataplane_init(&dp, workers, 2, 0, P53_REPLICAS_PER_CORE);
}

static int teardown(void **state)
{
	(void)state;
	p53_dataplane_fini(&dp);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addresses_travel_in_the_replica),
		cmocka_unit_test(test_payload_clamped_to_the_port),
		cmocka_unit_test(test_first_replica_is_the_image),
		cmocka_unit_test(test_failed_publish_takes_the_image),
		cmocka_unit_test(test_big_copy_without_hugepages),
		cmocka_unit_test(test_workers_get_aligned_images),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

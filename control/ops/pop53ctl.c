/*
 * pop53ctl: the operator's client for pop53d's control socket (control/ops/ctl.h).
 *
 *   pop53ctl [-s PATH] [--json] COMMAND...
 *
 * Sends the command words as a JSON array in one frame, prints the reply: readable text by
 * default, the reply JSON with --json. Exits 0 on success, 1 when pop53d reports an error,
 * 2 on usage or connection errors.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "control/ops/ctl.h"
#include "control/zone/compile.h"

#define TIMEOUT_MS 120000 /* a reload of a very large zone set takes a while */
#define BUSY_WAIT_MS 30000 /* how long "busy, retry in N ms" replies are retried */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pop53ctl [-s SOCKET] [--json] COMMAND\n"
		"commands:\n"
		"  status                 version, uptime, workers, port, zones and serials\n"
		"  stats [--reset]        counters: queries, RCODEs, QTYPEs, drops, TC, port, TCP, xfr\n"
		"  workers                per-worker counters, heartbeat age, idle ratio\n"
		"  rrl                    rate limiting settings and the client prefixes limited now\n"
		"  zone list              zones with serials and files\n"
		"  zone reload [NAME]     recompile the zones and swap them in\n"
		"  zone status [NAME]     secondary zones: serial, primary, refresh, expire, last transfer\n"
		"  zone refresh NAME      check the primary's SOA now (transfer if newer)\n"
		"  zone retransfer NAME   transfer the whole zone (AXFR) now\n"
		"  zone flush NAME        write the secondary zone's disk copy at the served serial now\n"
		"  reload                 re-read the config file and the zones (the changed ones)\n"
		"  reload --full          the same, every zone compiled\n"
		"  config check FILE      validate a config and its zones here, without pop53d\n"
		"  steering               the steering sources loaded: map, geoip, asn_db\n"
		"  steering reload        re-read the steering map and MaxMind DBs alone and swap them in\n"
		"  health                 node state, checks, announcers, next allowed announce\n"
		"  health set external up|down|auto   push the outside prober's verdict (auto: the command)\n"
		"  target list            steered targets: record, address, answered (up), check, forced,\n"
		"                         probe, successes/failures in a row, last result (https: TLS\n"
		"                         handshakes resumed and full)\n"
		"  target set NAME up|down|auto   force a steered target (auto: its check decides)\n"
		"  explain NAME TYPE [--client IP] [--ecs PREFIX]   a steered answer's decision path\n"
		"  drain                  de-prefer the anycast prefixes, withdraw after drain_time\n"
		"  undrain                reverse a drain (re-announce still waits for hold-down)\n"
		"default socket: /run/pop53/control.sock\n");
}

static int io_all(int fd, void *buf, size_t len, int writing)
{
	size_t off = 0;

	while (off < len) {
		struct pollfd p = {.fd = fd, .events = writing ? POLLOUT : POLLIN};
		if (poll(&p, 1, TIMEOUT_MS) <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		ssize_t n = writing ? send(fd, (char *)buf + off, len - off, MSG_NOSIGNAL)
				    : read(fd, (char *)buf + off, len - off);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0)
				errno = ECONNRESET;
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

static char *request(const char *path, int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	json_t *req = json_array();
	char *body, *reply = NULL;
	uint8_t hdr[4];
	int fd;

	for (int i = 0; i < argc; i++)
		json_array_append_new(req, json_string(argv[i]));
	body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (body == NULL)
		return NULL;
	size_t len = strlen(body);
	if (len > P53_CTL_MAX_REQUEST) {
		fprintf(stderr, "pop53ctl: request too large\n");
		free(body);
		return NULL;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "pop53ctl: cannot connect to %s: %s (is pop53d running?)\n", path,
			strerror(errno));
		goto out;
	}
	hdr[0] = (uint8_t)(len >> 24);
	hdr[1] = (uint8_t)(len >> 16);
	hdr[2] = (uint8_t)(len >> 8);
	hdr[3] = (uint8_t)len;
	/* A refused connection ("busy") may be closed before we send: its reply is still there
	 * to read, so a failed send is not the end. */
	if ((io_all(fd, hdr, 4, 1) != 0 || io_all(fd, body, len, 1) != 0) && errno != EPIPE &&
	    errno != ECONNRESET) {
		fprintf(stderr, "pop53ctl: %s: %s\n", path, strerror(errno));
		goto out;
	}
	if (io_all(fd, hdr, 4, 0) != 0) {
		fprintf(stderr, "pop53ctl: %s: %s\n", path, strerror(errno));
		goto out;
	}
	uint32_t rlen = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
	if (rlen > P53_CTL_MAX_REPLY) {
		fprintf(stderr, "pop53ctl: reply of %u bytes is too large\n", rlen);
		goto out;
	}
	reply = calloc(1, (size_t)rlen + 1);
	if (reply == NULL || io_all(fd, reply, rlen, 0) != 0) {
		fprintf(stderr, "pop53ctl: %s: reading the reply: %s\n", path, strerror(errno));
		free(reply);
		reply = NULL;
	}
out:
	if (fd >= 0)
		close(fd);
	free(body);
	return reply;
}

static json_int_t geti(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static void print_zones(const json_t *zones)
{
	size_t i;
	json_t *z;

	json_array_foreach(zones, i, z) {
		const json_t *ds = json_object_get(z, "dnssec");
		printf("  %-32s serial %-12" JSON_INTEGER_FORMAT " %s",
		       json_string_value(json_object_get(z, "name")), geti(z, "serial"),
		       json_string_value(json_object_get(z, "file")));
		if (json_is_true(json_object_get(ds, "signed")))
			printf("  signed (%s), RRSIGs expire in %" JSON_INTEGER_FORMAT " h%s",
			       json_string_value(json_object_get(ds, "denial")),
			       geti(ds, "expires_in") / 3600,
			       json_is_true(json_object_get(ds, "within_margin")) ?
			       ", WITHIN dnssec.signature_margin" : "");
		printf("\n");
	}
}

static void print_map(const char *title, const json_t *m)
{
	const char *k;
	json_t *v;

	printf("%s:", title);
	json_object_foreach((json_t *)m, k, v)
		printf(" %s=%" JSON_INTEGER_FORMAT, k, json_integer_value(v));
	printf("\n");
}

static const char *gets(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "";
}

static void print_health(const json_t *h)
{
	const char *k;
	json_t *c, *a;
	size_t i;

	if (!json_is_true(json_object_get(h, "enabled"))) {
		printf("health: disabled\n");
		return;
	}
	printf("node %s (%s) for %.1f s%s: %s\n", gets(h, "state"), gets(h, "announce"),
	       json_real_value(json_object_get(h, "seconds_in_state")),
	       json_is_true(json_object_get(h, "drain")) ? ", drained by the operator" : "", gets(h, "reason"));
	printf("flaps %" JSON_INTEGER_FORMAT ", announces %" JSON_INTEGER_FORMAT ", withdraws %" JSON_INTEGER_FORMAT
	       ", next announce allowed in %.1f s\n", geti(h, "flaps"), geti(h, "announces"), geti(h, "withdraws"),
	       json_real_value(json_object_get(h, "next_announce_in_s")));
	printf("%-9s %-8s %6s %6s %5s %5s %9s  %s\n", "check", "state", "passes", "fails", "rise", "fall",
	       "in state", "last error");
	json_object_foreach((json_t *)json_object_get(h, "checks"), k, c) {
		if (json_is_string(c)) {
			printf("%-9s %s\n", k, json_string_value(c));
			continue;
		}
		printf("%-9s %-8s %6" JSON_INTEGER_FORMAT " %6" JSON_INTEGER_FORMAT " %5" JSON_INTEGER_FORMAT
		       " %5" JSON_INTEGER_FORMAT " %7.1f s  %s\n", k,
		       json_is_true(json_object_get(c, "active")) ? gets(c, "state") : "off",
		       geti(c, "passes_in_a_row"), geti(c, "failures_in_a_row"), geti(c, "rise"), geti(c, "fall"),
		       json_real_value(json_object_get(c, "seconds_in_state")), gets(c, "last_error"));
	}
	json_array_foreach(json_object_get(h, "announcers"), i, a)
		printf("announcer %-8s %-7s applied %-12s wanted %-12s failures %" JSON_INTEGER_FORMAT "%s%s\n",
		       gets(a, "type"), gets(a, "status"), gets(a, "applied"), gets(a, "wanted"),
		       geti(a, "failures"), *gets(a, "last_error") ? "  " : "", gets(a, "last_error"));
}

static const char *str_or(const json_t *o, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : dflt;
}

/* A secondary zone's updates of one kind by their way into the image, and the last one's. */
static void print_ways(const char *what, const json_t *ways, const json_t *last)
{
	printf("  %s into the image: patched %" JSON_INTEGER_FORMAT ", spliced %" JSON_INTEGER_FORMAT
	       ", compiled %" JSON_INTEGER_FORMAT "; last %s\n", what, geti(ways, "patched"),
	       geti(ways, "spliced"), geti(ways, "compiled"),
	       json_is_string(last) ? json_string_value(last) : "none");
}

static void print_secondary(const json_t *z)
{
	const json_t *lt = json_object_get(z, "last_transfer");
	const json_t *serial = json_object_get(z, "serial");

	printf("%s: %s", str_or(z, "name", "?"), str_or(z, "state", "?"));
	if (json_is_integer(serial))
		printf(", serial %" JSON_INTEGER_FORMAT, json_integer_value(serial));
	if (json_object_get(z, "member_of") != NULL)
		printf(", member of catalog %s", str_or(z, "member_of", "?"));
	if (json_is_true(json_object_get(z, "catalog")))
		printf(", catalog zone with %" JSON_INTEGER_FORMAT " member(s)", geti(z, "members"));
	printf("\n  primary %s\n", str_or(z, "primary", "(none answered yet)"));
	printf("  last refresh %s, next refresh %s (in %" JSON_INTEGER_FORMAT " s), expire %s\n",
	       str_or(z, "last_refresh", "never"), str_or(z, "next_refresh", "-"),
	       geti(z, "next_refresh_in_s"), str_or(z, "expire", "-"));
	printf("  last transfer %s %s: %s\n", str_or(lt, "time", "never"), str_or(lt, "type", ""),
	       str_or(lt, "result", ""));
	print_ways("IXFRs", json_object_get(z, "ixfr_image"), json_object_get(z, "last_ixfr_image"));
	print_ways("AXFRs", json_object_get(z, "axfr_image"), json_object_get(z, "last_axfr_image"));
	printf("  disk copy %s\n", str_or(z, "file", "?"));
}

static void print_human(const char *cmd, const char *sub, const json_t *r)
{
	if (strcmp(cmd, "status") == 0) {
		const json_t *rl = json_object_get(r, "reloads");
		printf("pop53d %s, identity %s, up %" JSON_INTEGER_FORMAT " s\n",
		       json_string_value(json_object_get(r, "version")),
		       json_string_value(json_object_get(r, "identity")), geti(r, "uptime_s"));
		printf("port %s, %" JSON_INTEGER_FORMAT " worker(s), replicas %s\n",
		       json_string_value(json_object_get(r, "port")), geti(r, "workers"),
		       json_string_value(json_object_get(r, "replicas")));
		printf("image %" JSON_INTEGER_FORMAT " bytes, %" JSON_INTEGER_FORMAT " records, generation %" JSON_INTEGER_FORMAT "\n",
		       geti(r, "image_bytes"), geti(r, "records"), geti(r, "generation"));
		printf("reloads: %" JSON_INTEGER_FORMAT " ok, %" JSON_INTEGER_FORMAT " failed%s%s\n",
		       geti(rl, "ok"), geti(rl, "failed"),
		       *json_string_value(json_object_get(rl, "last_error")) ? "; last error: " : "",
		       json_string_value(json_object_get(rl, "last_error")));
		const json_t *h = json_object_get(r, "health");
		if (json_is_true(json_object_get(h, "enabled")))
			printf("health: node %s (%s): %s\n", gets(h, "state"), gets(h, "announce"), gets(h, "reason"));
		else
			printf("health: disabled\n");
		printf("zones:\n");
		print_zones(json_object_get(r, "zones"));
	} else if (strcmp(cmd, "stats") == 0) {
		const json_t *s = json_object_get(r, "stats");
		printf("queries %" JSON_INTEGER_FORMAT ", responses %" JSON_INTEGER_FORMAT ", tc %" JSON_INTEGER_FORMAT
		       ", rx %" JSON_INTEGER_FORMAT ", tx %" JSON_INTEGER_FORMAT ", tx_fail %" JSON_INTEGER_FORMAT "\n",
		       geti(s, "queries"), geti(s, "responses"), geti(s, "tc"), geti(s, "rx"), geti(s, "tx"),
		       geti(s, "tx_fail"));
		printf("notify %" JSON_INTEGER_FORMAT " (lost %" JSON_INTEGER_FORMAT ")\n", geti(s, "notify"),
		       geti(s, "notify_lost"));
		print_map("rcode", json_object_get(s, "rcode"));
		print_map("qtype", json_object_get(s, "qtype"));
		print_map("answers", json_object_get(s, "answers"));
		print_map("drops", json_object_get(s, "drops"));
		print_map("malformed", json_object_get(s, "malformed"));
		print_map("port", json_object_get(s, "port"));
		const json_t *tcp = json_object_get(s, "tcp");
		if (tcp != NULL) {
			printf("tcp: accepted %" JSON_INTEGER_FORMAT ", open %" JSON_INTEGER_FORMAT
			       ", queries %" JSON_INTEGER_FORMAT ", responses %" JSON_INTEGER_FORMAT
			       ", bytes in %" JSON_INTEGER_FORMAT ", out %" JSON_INTEGER_FORMAT "\n",
			       geti(tcp, "accepted"), geti(tcp, "open"), geti(tcp, "queries"),
			       geti(tcp, "responses"), geti(tcp, "bytes_in"), geti(tcp, "bytes_out"));
			print_map("tcp refused", json_object_get(tcp, "refused"));
			print_map("tcp closed", json_object_get(tcp, "closed"));
		}
		const json_t *xfr = json_object_get(s, "xfr");
		if (xfr != NULL) {
			print_map("xfr served", json_object_get(xfr, "served"));
			printf("xfr served bytes %" JSON_INTEGER_FORMAT "\n", geti(xfr, "served_bytes"));
			print_map("xfr notify_out", json_object_get(xfr, "notify_out"));
			print_map("xfr notify_in", json_object_get(xfr, "notify_in"));
			print_map("xfr applied", json_object_get(xfr, "applied"));
			print_map("xfr ixfr_image", json_object_get(xfr, "ixfr_image"));
			print_map("xfr axfr_image", json_object_get(xfr, "axfr_image"));
		}
		print_map("rrl", json_object_get(s, "rrl"));
		print_map("cookies", json_object_get(s, "cookies"));
		if (json_object_get(s, "rrl_top") != NULL)
			print_map("rrl_top", json_object_get(s, "rrl_top"));
		const json_t *exc = json_object_get(s, "exception");
		if (exc != NULL) {
			print_map("exception frames", json_object_get(exc, "frames"));
			print_map("exception drops", json_object_get(exc, "drops"));
		}
		if (json_is_true(json_object_get(r, "reset")))
			printf("counters reset\n");
	} else if (strcmp(cmd, "workers") == 0) {
		size_t i;
		json_t *w;
		printf("%-6s %-6s %12s %12s %12s %10s %10s %12s %6s\n", "worker", "lcore", "rx", "tx",
		       "answered", "dropped", "tx_fail", "heartbeat", "idle");
		json_array_foreach(json_object_get(r, "workers"), i, w)
			printf("%-6" JSON_INTEGER_FORMAT " %-6" JSON_INTEGER_FORMAT " %12" JSON_INTEGER_FORMAT
			       " %12" JSON_INTEGER_FORMAT " %12" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT
			       " %10" JSON_INTEGER_FORMAT " %9.1f ms %5.1f%%\n",
			       geti(w, "worker"), geti(w, "lcore"), geti(w, "rx"), geti(w, "tx"),
			       geti(w, "answered"), geti(w, "dropped"), geti(w, "tx_fail"),
			       json_real_value(json_object_get(w, "heartbeat_age_ms")),
			       100.0 * json_real_value(json_object_get(w, "idle_ratio")));
	} else if (strcmp(cmd, "health") == 0 || strcmp(cmd, "drain") == 0 || strcmp(cmd, "undrain") == 0) {
		print_health(json_object_get(r, "health"));
	} else if (strcmp(cmd, "explain") == 0) {
		const json_t *e = json_object_get(r, "explain"), *a = json_object_get(e, "answer");
		size_t i;
		json_t *x;
		char *js;
		printf("%s %s for %s (%s)\n", gets(e, "record"), gets(e, "type"), gets(e, "client"),
		       gets(e, "from"));
		json_array_foreach(json_object_get(e, "steps"), i, x) {
			char *loc = json_dumps(json_object_get(x, "location"), JSON_COMPACT | JSON_ENCODE_ANY);
			char *dec = json_dumps(json_object_get(x, "decision"), JSON_COMPACT | JSON_ENCODE_ANY);
			printf("  step %zu: %s (%s) block %s location %s -> %s\n", i + 1, gets(x, "policy"),
			       gets(x, "source"), gets(x, "block"), loc, dec);
			free(loc);
			free(dec);
		}
		json_array_foreach(json_object_get(e, "targets"), i, x)
			printf("  target %-10s %-40s pop %-5s weight %-5" JSON_INTEGER_FORMAT " priority %-5"
			       JSON_INTEGER_FORMAT " %-4s (check %s, forced %s)\n", gets(x, "name"),
			       gets(x, "address"), gets(x, "pop"), geti(x, "weight"), geti(x, "priority"),
			       json_is_true(json_object_get(x, "up")) ? "up" : "down", gets(x, "check"),
			       gets(x, "forced"));
		js = json_dumps(json_object_get(a, "addresses"), JSON_COMPACT);
		printf("answer (by %s): %s ttl %" JSON_INTEGER_FORMAT " scope %" JSON_INTEGER_FORMAT "\n",
		       gets(a, "by"), js, geti(a, "ttl"), geti(a, "scope"));
		free(js);
	} else if (strcmp(cmd, "target") == 0) {
		size_t i;
		json_t *t;
		printf("%-24s %-4s %-10s %-40s %-5s %-5s %-6s %-6s %-7s %-7s %s\n", "record", "type",
		       "name", "address", "pop", "up", "check", "forced", "probe", "ok/fail", "last");
		json_array_foreach(json_object_get(r, "targets"), i, t) {
			/* ok/fail: successes and failures in a row now (rise and fall count them). */
			const json_t *ps = json_object_get(t, "probe_state");
			char runs[32] = "-", last[320] = "-";
			if (ps != NULL) {
				snprintf(runs, sizeof(runs), "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
					 geti(ps, "ok_run"), geti(ps, "fail_run"));
				snprintf(last, sizeof(last), "%s: %s", gets(ps, "last"), gets(ps, "reason"));
				if (json_object_get(ps, "tls_full") != NULL) {
					size_t n = strlen(last);
					snprintf(last + n, sizeof(last) - n, " (TLS: %" JSON_INTEGER_FORMAT
						 " resumed, %" JSON_INTEGER_FORMAT " full)",
						 geti(ps, "tls_resumed"), geti(ps, "tls_full"));
				}
			}
			printf("%-24s %-4s %-10s %-40s %-5s %-5s %-6s %-6s %-7s %-7s %s\n", gets(t, "record"),
			       gets(t, "type"), gets(t, "name"), gets(t, "address"), gets(t, "pop"),
			       json_is_true(json_object_get(t, "up")) ? "up" : "down", gets(t, "check"),
			       gets(t, "forced"), gets(t, "probe"), runs, last);
		}
	} else if (strcmp(cmd, "rrl") == 0) {
		const json_t *o = json_object_get(r, "rrl");
		const json_t *ck = json_object_get(o, "cookies");
		size_t i;
		json_t *e;
		if (!json_is_true(json_object_get(o, "enabled"))) {
			printf("rrl: off\n");
		} else {
			print_map("rrl per second", json_object_get(o, "per_second"));
			printf("window %" JSON_INTEGER_FORMAT " s, slip %" JSON_INTEGER_FORMAT ", prefixes /%"
			       JSON_INTEGER_FORMAT " /%" JSON_INTEGER_FORMAT ", %s, %" JSON_INTEGER_FORMAT
			       " worker(s) x %" JSON_INTEGER_FORMAT " accounts\n",
			       geti(o, "window"), geti(o, "slip"), geti(o, "ipv4_prefix_length"),
			       geti(o, "ipv6_prefix_length"),
			       json_is_true(json_object_get(o, "log_only")) ? "log only" : "enforcing",
			       geti(o, "workers"), geti(o, "table_size"));
			printf("limited now: %zu prefix(es)\n", json_array_size(json_object_get(o, "limited")));
			json_array_foreach(json_object_get(o, "limited"), i, e) {
				char *cls = json_dumps(json_object_get(e, "classes"), JSON_COMPACT);
				printf("  %-40s %12" JSON_INTEGER_FORMAT " limited  released in %6.1f s  %s\n",
				       json_string_value(json_object_get(e, "prefix")), geti(e, "limited"),
				       json_real_value(json_object_get(e, "released_in_s")), cls);
				free(cls);
			}
		}
		printf("cookies: %s, secret rotation %" JSON_INTEGER_FORMAT " s, %" JSON_INTEGER_FORMAT
		       " rotation(s)\n", json_is_true(json_object_get(ck, "enabled")) ? "on" : "off",
		       geti(ck, "secret_rotation"), geti(ck, "rotations"));
	} else if (strcmp(cmd, "zone") == 0 && sub != NULL && strcmp(sub, "list") == 0) {
		print_zones(json_object_get(r, "zones"));
	} else if (strcmp(cmd, "zone") == 0 && sub != NULL && strcmp(sub, "status") == 0) {
		const json_t *one = json_object_get(r, "zone");
		if (one != NULL) {
			print_secondary(one);
		} else {
			size_t i;
			json_t *z;
			json_array_foreach(json_object_get(r, "zones"), i, z)
				print_secondary(z);
		}
	} else if (strcmp(cmd, "zone") == 0 && sub != NULL &&
		   (strcmp(sub, "refresh") == 0 || strcmp(sub, "retransfer") == 0 ||
		    strcmp(sub, "flush") == 0)) {
		printf("%s queued (see zone status)\n", json_string_value(json_object_get(r, "queued")));
	} else if (strcmp(cmd, "steering") == 0) {
		const json_t *st = json_object_get(r, "steering");
		static const char *const keys[] = { "map", "geoip", "asn_db" };
		if (json_object_get(r, "ms") != NULL)
			printf("steering reloaded in %.1f ms\n", json_real_value(json_object_get(r, "ms")));
		for (size_t k = 0; k < 3; k++) {
			const json_t *x = json_object_get(st, keys[k]);
			if (x == NULL)
				continue;
			printf("%-7s %s: %" JSON_INTEGER_FORMAT " networks", keys[k], str_or(x, "file", "?"),
			       geti(x, "networks"));
			if (json_object_get(x, "entries") != NULL)
				printf(" in %" JSON_INTEGER_FORMAT " entries", geti(x, "entries"));
			else
				printf(", %" JSON_INTEGER_FORMAT " locations (%s)", geti(x, "locations"),
				       str_or(x, "database_type", "?"));
			printf("\n");
		}
		printf("table: %" JSON_INTEGER_FORMAT " records, %" JSON_INTEGER_FORMAT " variants, %"
		       JSON_INTEGER_FORMAT " bytes\n", geti(st, "records"), geti(st, "variants"),
		       geti(st, "table_bytes"));
	} else if (strcmp(cmd, "reload") == 0 || strcmp(cmd, "zone") == 0) {
		printf("reloaded in %.1f ms\n", json_real_value(json_object_get(r, "ms")));
		if (json_object_get(r, "image") != NULL)
			printf("image: %s\n", json_string_value(json_object_get(r, "image")));
		print_zones(json_object_get(r, "zones"));
		if (json_object_get(r, "note") != NULL)
			printf("note: %s\n", json_string_value(json_object_get(r, "note")));
	} else {
		char *s = json_dumps(r, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
	}
}

static void warn_stderr(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "pop53ctl: warning: %s\n", msg);
}

/*
 * `config check FILE` runs here, in the client, with the compiler pop53d uses (as `knotc
 * conf-check` and `nsd-checkconf` do): the serving daemon never opens a path a client names.
 */
static int config_check(const char *file, int as_json)
{
	struct p53_check_result res;
	char err[1024];

	if (p53_config_check(file, &res, err, sizeof(err), warn_stderr, NULL) != 0) {
		if (as_json) {
			json_t *o = json_pack("{s:b, s:s}", "ok", 0, "error", err);
			char *t = json_dumps(o, JSON_COMPACT);
			printf("%s\n", t);
			free(t);
			json_decref(o);
		} else {
			fprintf(stderr, "pop53ctl: %s\n", err);
		}
		return 1;
	}
	if (as_json)
		printf("{\"ok\":true,\"zones\":%d,\"records\":%u,\"image_bytes\":%zu}\n", res.zones,
		       res.records, res.image_bytes);
	else
		printf("ok: %u records, image %zu bytes, %d zone(s)\n", res.records, res.image_bytes,
		       res.zones);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *path = "/run/pop53/control.sock";
	int as_json = 0, opt, rc;

	/* "+": stop at the first command word, so `stats --reset` reaches pop53d. */
	while ((opt = getopt_long(argc, argv, "+s:jh", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case 'j':
			as_json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[optind], "config") == 0) {
		if (argc - optind != 3 || strcmp(argv[optind + 1], "check") != 0) {
			usage(stderr);
			return 2;
		}
		return config_check(argv[optind + 2], as_json);
	}
	char *reply;
	json_t *r;
	for (int waited = 0;;) {
		reply = request(path, argc - optind, argv + optind);
		if (reply == NULL)
			return 2;
		json_error_t jerr;
		r = json_loads(reply, 0, &jerr);
		if (r == NULL || !json_is_object(r)) {
			fprintf(stderr, "pop53ctl: malformed reply from pop53d: %s\n", jerr.text);
			free(reply);
			return 2;
		}
		/* pop53d shares its control thread fairly and says when to come back. */
		json_int_t retry = json_integer_value(json_object_get(r, "retry_ms"));
		if (!json_is_true(json_object_get(r, "busy")) || retry <= 0 || waited + retry > BUSY_WAIT_MS)
			break;
		json_decref(r);
		free(reply);
		usleep((useconds_t)retry * 1000u);
		waited += (int)retry;
	}
	rc = json_is_true(json_object_get(r, "ok")) ? 0 : 1;
	if (as_json)
		printf("%s\n", reply);
	else if (rc != 0)
		fprintf(stderr, "pop53ctl: %s\n", json_string_value(json_object_get(r, "error")));
	else
		print_human(argv[optind], argc - optind > 1 ? argv[optind + 1] : NULL, r);
	json_decref(r);
	free(reply);
	return rc;
}

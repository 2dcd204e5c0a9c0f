/* SPDX-License-Identifier: Apache-2.0 */
/* Network modes through the daemon: allowlist sandboxes reach what their rules allow on the
 * node bridge (198.18.0.1) and nothing else, refusals are recorded, rules change live. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

TestSuite(network, .init = daemon_start, .fini = daemon_stop, .timeout = 120);

static void need_allowlist(void)
{
	json_t *o = NULL;

	cr_assert_eq(api("GET", "/v1/info", NULL, &o), 200);
	json_t *n = json_object_get(o, "network");
	if (!json_is_true(json_object_get(n, "allowlist"))) {
		char why[256];

		snprintf(why, sizeof(why), "network mode allowlist unavailable on this node: %s",
			 json_string_value(json_object_get(n, "allowlist_unavailable")));
		json_decref(o);
		cr_skip_test("%s", why);
	}
	json_decref(o);
}

/* A TCP listener on the node's bridge address. */
static int listen_on_bridge(int *ret_port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, "198.18.0.1", &sa.sin_addr);
	cr_assert(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind 198.18.0.1: %m");
	cr_assert(listen(fd, 8) == 0);
	getsockname(fd, (struct sockaddr *)&sa, &len);
	*ret_port = ntohs(sa.sin_port);
	return fd;
}

/* Whether a connection arrived, and from which address. */
static bool accepted(int lfd, char *from, size_t size)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int c;

	if (poll(&p, 1, 2000) != 1)
		return false;
	c = accept(lfd, (struct sockaddr *)&sa, &len);
	if (c < 0)
		return false;
	inet_ntop(AF_INET, &sa.sin_addr, from, size);
	close(c);
	return true;
}

/* A TCP connect from inside to 198.18.0.1:port: 0 if it connected, else 1 with the errno's name
 * in *out. (warren-attack's scan of one port says how it went.) */
static int nc(const char *id, int port, char **out)
{
	char p[16];

	snprintf(p, sizeof(p), "%d", port);
	const char *argv[] = { "warren-attack", "port-scan", "198.18.0.1", p, p, NULL };
	run_exec(id, argv, out, NULL);
	return strstr(*out, " 1 of 1 ports open") ? 0 : 1;
}

Test(network, allowlist_allows_what_it_lists_and_refuses_the_rest)
{
	int port, other, lfd, lfd2;
	char rule[16], from[64], path[64], *out;
	json_t *o = NULL;

	need_allowlist();
	lfd = listen_on_bridge(&port);
	lfd2 = listen_on_bridge(&other);
	snprintf(rule, sizeof(rule), "%d", port);
	const char *id = create(json_pack("{s:{s:s,s:[{s:s,s:s,s:s}]}}", "network", "mode",
					  "allowlist", "allow", "proto", "tcp", "cidr",
					  "198.18.0.1/32", "ports", rule));
	char idc[16];
	snprintf(idc, sizeof(idc), "%s", id);

	/* The sandbox has an address of its own, in 198.18.0.0/15. */
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", idc);
	cr_assert_eq(api("GET", path, NULL, &o), 200);
	const char *addr = json_string_value(json_object_get(json_object_get(o, "network"), "address"));
	cr_assert(addr && strncmp(addr, "198.1", 5) == 0, "address %s", addr ? addr : "(none)");
	char want_from[64];
	snprintf(want_from, sizeof(want_from), "%s", addr);
	json_decref(o);

	/* Allowed: the listed port. */
	cr_expect_eq(nc(idc, port, &out), 0, "nc to the allowed port: %s", out);
	free(out);
	cr_expect(accepted(lfd, from, sizeof(from)), "no connection arrived");
	cr_expect_str_eq(from, want_from);

	/* Refused: any other port, with EPERM, and recorded. */
	cr_expect_neq(nc(idc, other, &out), 0);
	cr_expect(strstr(out, "EPERM"), "connect: %s", out);
	free(out);
	cr_expect(!accepted(lfd2, from, sizeof(from)), "a refused connection arrived");
	char want[64], q[128];
	snprintf(want, sizeof(want), "connect 198.18.0.1:%d/tcp", other);
	snprintf(q, sizeof(q), "/v1/denials?sandbox=%s", idc);
	bool found = false;
	for (int t = 0; t < 100 && !found; t++) {
		size_t i;
		json_t *d;

		cr_assert_eq(api("GET", q, NULL, &o), 200);
		json_array_foreach(json_object_get(o, "denials"), i, d)
			found |= strcmp(json_string_value(json_object_get(d, "layer")), "network") == 0 &&
				 strcmp(json_string_value(json_object_get(d, "action")), want) == 0;
		json_decref(o);
		if (!found)
			usleep(20000);
	}
	cr_expect(found, "no network denial '%s' recorded", want);

	/* Live change: now the other port is allowed and the first is not. */
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/network", idc);
	snprintf(rule, sizeof(rule), "%d", other);
	cr_expect_eq(api("PATCH", path, json_pack("{s:s,s:[{s:s,s:s,s:s}]}", "mode", "allowlist",
						  "allow", "proto", "tcp", "cidr", "198.18.0.1",
						  "ports", rule), NULL), 200);
	cr_expect_eq(nc(idc, other, &out), 0, "after PATCH: %s", out);
	free(out);
	cr_expect(accepted(lfd2, from, sizeof(from)));
	cr_expect_neq(nc(idc, port, &out), 0, "the old rule still holds");
	free(out);

	/* Delete removes the veth. */
	char veth[64];
	struct stat st;
	snprintf(veth, sizeof(veth), "/sys/class/net/w%s", idc);
	cr_expect(stat(veth, &st) == 0, "no host veth %s", veth);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", idc);
	cr_expect_eq(api("DELETE", path, NULL, NULL), 200);
	cr_expect(stat(veth, &st) < 0, "%s left behind", veth);
	close(lfd);
	close(lfd2);
}

Test(network, port_scan_is_refused_and_recorded)
{
	need_allowlist();
	const char *id = create(json_pack("{s:{s:s}}", "network", "mode", "allowlist"));
	char idc[16], *out;
	const char *argv[] = { "warren-attack", "port-scan", "198.18.0.1", "1", "100", NULL };

	snprintf(idc, sizeof(idc), "%s", id);
	cr_expect_eq(run_exec(idc, argv, &out, NULL), 0, "%s", out);
	cr_expect(strstr(out, "0 of 100 ports open; errors: EPERM"), "%s", out);
	free(out);
}

Test(network, names_resolve_only_through_an_allowlisted_resolver)
{
	json_t *o = NULL;
	char *out;

	need_allowlist();
	/* A resolver the rules do not reach is refused, saying which rule to add. */
	cr_expect_eq(api("POST", "/v1/sandboxes",
			 json_pack("{s:{s:s,s:[s]}}", "network", "mode", "allowlist", "dns",
				   "198.18.0.1"), &o), 400);
	cr_expect(strstr(json_string_value(json_object_get(json_object_get(o, "error"), "message")),
			 "\"ports\": \"53\""), "%s", json_dumps(o, 0));
	json_decref(o);
	cr_expect_eq(api("POST", "/v1/sandboxes",
			 json_pack("{s:{s:s,s:[s]}}", "network", "mode", "none", "dns", "198.18.0.1"),
			 &o), 400);
	json_decref(o);

	/* Allowed: the sandbox's resolv.conf names it and nothing else. */
	const char *id = create(json_pack("{s:{s:s,s:[{s:s,s:s,s:s}],s:[s]}}", "network", "mode",
					  "allowlist", "allow", "proto", "udp", "cidr", "198.18.0.1",
					  "ports", "53", "dns", "198.18.0.1"));
	char idc[16];
	snprintf(idc, sizeof(idc), "%s", id);
	const char *cat[] = { "cat", "/etc/resolv.conf", NULL };
	cr_expect_eq(run_exec(idc, cat, &out, NULL), 0);
	cr_expect_str_eq(out, "nameserver 198.18.0.1\n");
	free(out);
	/* Anything the rules do not list (here TCP to port 54) is refused. */
	const char *other[] = { "warren-attack", "port-scan", "198.18.0.1", "54", "54", NULL };
	run_exec(idc, other, &out, NULL);
	cr_expect(strstr(out, "EPERM"), "%s", out);
	free(out);
}

Test(network, modes_and_bad_rules)
{
	json_t *o = NULL;

	cr_expect_eq(api("POST", "/v1/sandboxes", json_pack("{s:{s:s}}", "network", "mode", "host"),
			 &o), 403);
	cr_expect(strstr(json_string_value(json_object_get(json_object_get(o, "error"), "message")),
			 "--allow-host-network"));
	json_decref(o);
	cr_expect_eq(api("POST", "/v1/sandboxes",
			 json_pack("{s:{s:s,s:[{s:s}]}}", "network", "mode", "allowlist", "allow",
				   "cidr", "198.18.0.1/15"), &o), 400);
	json_decref(o);
	cr_expect_eq(api("POST", "/v1/sandboxes",
			 json_pack("{s:{s:s,s:[{s:s}]}}", "network", "mode", "none", "allow", "cidr",
				   "198.18.0.1"), &o), 400);
	json_decref(o);
	cr_expect_eq(api("POST", "/v1/sandboxes", json_pack("{s:{s:s}}", "network", "mode", "wifi"),
			 &o), 400);
	json_decref(o);
	/* None: loopback only, nothing else routes. */
	const char *id = create(json_object());
	char idc[16], *out;
	snprintf(idc, sizeof(idc), "%s", id);
	cr_expect_neq(nc(idc, 80, &out), 0);
	cr_expect(strstr(out, "ENETUNREACH"), "%s", out);
	free(out);
}

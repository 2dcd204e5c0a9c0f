/* SPDX-License-Identifier: Apache-2.0 */
/* The eBPF allowlist against the real kernel (suite 'priv'): a probe process cloned into a
 * cgroup2 directory and joined to a network namespace wired to a test bridge makes real
 * connections; the node side listens on the bridge address. Every test checks both ways: what
 * the rules allow arrives at the listener, what they refuse fails with EPERM, never arrives, and
 * shows up in the ring buffer with the right address, port, protocol and hook. */
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allowlist.h"
#include "harness.h"
#include "macro.h"

#define KEY 0x5a4db0c5ULL

static struct allowlist *al;
static struct allowlist_sandbox *sb;
static uint64_t cgid;

#define MAX_EVENTS 64
static struct allowlist_event events[MAX_EVENTS];
static int n_events;

static void setup(void)
{
	int r;

	tn_setup();
	r = allowlist_open(&al);
	tn_skip_or_fail(r, "allowlist_open (load the BPF programs)");
	r = allowlist_cgroup_id(tn.cg_fd, &cgid);
	cr_assert_eq(r, 0, "allowlist_cgroup_id: %s", strerror(-r));
}

static void teardown(void)
{
	sb = allowlist_detach(sb);
	al = allowlist_free(al);
	tn_teardown();
}

TestSuite(allowlist, .init = setup, .fini = teardown, .timeout = 60);

/* ---- helpers ------------------------------------------------------------------------------ */

static const char *fmt(const char *f, const char *ip)
{
	static char bufs[8][64];
	static int i;
	char *b = bufs[i++ % 8];

	snprintf(b, 64, f, ip);
	return b;
}

static struct allowlist_rule rule(const char *proto, const char *cidr, const char *ports)
{
	struct allowlist_rule r;
	int e = allowlist_rule_parse(proto, cidr, ports, &r);

	cr_assert_eq(e, 0, "rule %s %s %s: %s", proto, cidr, ports ? ports : "-", strerror(-e));
	return r;
}

static void attach(const struct allowlist_rule *rules, size_t n)
{
	int r = allowlist_attach(al, tn.cg_fd, KEY, rules, n, &sb);

	cr_assert_eq(r, 0, "allowlist_attach: %s", strerror(-r));
}

static void update(const struct allowlist_rule *rules, size_t n)
{
	int r = allowlist_update(sb, rules, n);

	cr_assert_eq(r, 0, "allowlist_update: %s", strerror(-r));
}

static int collect(const struct allowlist_event *ev, void *userdata)
{
	if (n_events < MAX_EVENTS)
		events[n_events++] = *ev;
	return 0;
}

/* Drains the ring buffer until `want` records came (1 s at most), then waits 50 ms more so that
 * an unexpected extra record is counted too. Returns how many arrived. */
static int drain(int want)
{
	struct pollfd pfd = { .fd = allowlist_ring_fd(al), .events = POLLIN };

	n_events = 0;
	for (int i = 0; i < 20 && n_events < want; i++) {
		int r = allowlist_consume(al, collect, NULL);

		cr_assert_geq(r, 0, "allowlist_consume: %s", strerror(-r));
		if (n_events < want)
			(void)poll(&pfd, 1, 50);
	}
	(void)poll(&pfd, 1, 50);
	cr_assert_geq(allowlist_consume(al, collect, NULL), 0);
	return n_events;
}

static void expect_event(int i, int family, const char *ip, uint16_t port, uint8_t proto,
			 enum allowlist_hook hook)
{
	const struct allowlist_event *e = &events[i];
	uint8_t want[16] = {};

	cr_assert_lt(i, n_events, "no record %d (%d came)", i, n_events);
	cr_assert_eq(inet_pton(family, ip, want), 1);
	cr_expect_eq(e->family, family == AF_INET ? ALLOWLIST_AF_INET : ALLOWLIST_AF_INET6,
		     "record %d: family %u", i, e->family);
	cr_expect_eq(memcmp(e->daddr, want, sizeof(want)), 0, "record %d: not to %s", i, ip);
	cr_expect_eq(e->dport, port, "record %d: port %u, want %u", i, e->dport, port);
	cr_expect_eq(e->proto, proto, "record %d: proto %u, want %u", i, e->proto, proto);
	cr_expect_eq(e->hook, hook, "record %d: hook %s, want %s", i,
		     allowlist_hook_to_string(e->hook), allowlist_hook_to_string(hook));
	cr_expect_eq(e->cgroup_id, cgid, "record %d: cgroup %llu", i,
		     (unsigned long long)e->cgroup_id);
	cr_expect_eq(e->sandbox_key, KEY, "record %d: key %llx", i,
		     (unsigned long long)e->sandbox_key);
	cr_expect_gt(e->time_ns, 0);
}

/* Connect from the probe and check the effect on the node: an allowed connect reaches the
 * listener from the sandbox's address; a refused one fails with EPERM and reaches nothing. */
static void tcp_allowed(struct probe *p, int lfd, const char *ip, uint16_t port)
{
	char peer[INET6_ADDRSTRLEN];
	int r = probe_do(p, PROBE_TCP_CONNECT, ip, port);

	cr_assert_eq(r, 0, "connect %s:%u: %s, want success", ip, port, strerror(r));
	cr_assert(tn_accept(lfd, 1000, peer), "allowed connect %s:%u never arrived", ip, port);
	cr_assert_str_eq(peer, tn.sb_ip);
}

static void tcp_refused(struct probe *p, int lfd, const char *ip, uint16_t port)
{
	char peer[INET6_ADDRSTRLEN];
	int r = probe_do(p, PROBE_TCP_CONNECT, ip, port);

	cr_assert_eq(r, EPERM, "connect %s:%u: %s, want EPERM", ip, port, strerror(r));
	if (lfd >= 0)
		cr_assert_not(tn_accept(lfd, 100, peer), "refused connect reached the listener");
}

static unsigned attached_count(int cgroup_fd, enum bpf_attach_type type)
{
	__u32 ids[8], cnt = ELEMENTSOF(ids), flags = 0;
	int r = bpf_prog_query(cgroup_fd, type, 0, &flags, ids, &cnt);

	cr_assert_eq(r, 0, "bpf_prog_query: %s", strerror(errno));
	return cnt;
}

static const enum bpf_attach_type hook_types[] = {
	BPF_CGROUP_INET4_CONNECT, BPF_CGROUP_INET6_CONNECT, BPF_CGROUP_UDP4_SENDMSG,
	BPF_CGROUP_UDP6_SENDMSG,  BPF_CGROUP_INET_EGRESS,
};

static void expect_attached(int cgroup_fd, unsigned want)
{
	for (size_t i = 0; i < ELEMENTSOF(hook_types); i++)
		cr_assert_eq(attached_count(cgroup_fd, hook_types[i]), want,
			     "attach type %d: %u programs, want %u", hook_types[i],
			     attached_count(cgroup_fd, hook_types[i]), want);
}

/* The fds of the `cgroups` and `rules` maps, found through the program attached to the cgroup:
 * the test looks at the kernel's maps, not at the loader's idea of them. */
static void find_maps(int *ret_cgroups, int *ret_rules)
{
	__u32 prog_id, cnt = 1, flags = 0, map_ids[8];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int pfd;

	cr_assert_eq(bpf_prog_query(tn.cg_fd, BPF_CGROUP_INET4_CONNECT, 0, &flags, &prog_id, &cnt),
		     0);
	cr_assert_eq(cnt, 1);
	pfd = bpf_prog_get_fd_by_id(prog_id);
	cr_assert_geq(pfd, 0);
	info.nr_map_ids = ELEMENTSOF(map_ids);
	info.map_ids = (uintptr_t)map_ids;
	cr_assert_eq(bpf_obj_get_info_by_fd(pfd, &info, &len), 0);
	close(pfd);
	*ret_cgroups = *ret_rules = -1;
	for (__u32 i = 0; i < info.nr_map_ids && i < ELEMENTSOF(map_ids); i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int mfd = bpf_map_get_fd_by_id(map_ids[i]);

		cr_assert_geq(mfd, 0);
		cr_assert_eq(bpf_obj_get_info_by_fd(mfd, &mi, &mlen), 0);
		if (strcmp(mi.name, "cgroups") == 0)
			*ret_cgroups = mfd;
		else if (strcmp(mi.name, "rules") == 0)
			*ret_rules = mfd;
		else
			close(mfd);
	}
	cr_assert_geq(*ret_cgroups, 0);
	cr_assert_geq(*ret_rules, 0);
}

static unsigned map_entries(int fd, size_t key_size)
{
	uint8_t key[64], next[64];
	unsigned n = 0;
	void *prev = NULL;

	cr_assert_leq(key_size, sizeof(key));
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		n++;
	}
	return n;
}

/* ---- tests -------------------------------------------------------------------------------- */

Test(allowlist, tcp_connect_allowed_port_passes_other_port_and_address_get_eperm)
{
	int la = tn_listen_tcp(TN_PORT_A), lb = tn_listen_tcp(TN_PORT_B);
	struct allowlist_rule rules[] = { rule("tcp", tn.br_ip, "5001") };
	struct probe *p;

	attach(rules, ELEMENTSOF(rules));
	p = probe_start(tn.cg_fd, tn.netns_fd);

	tcp_allowed(p, la, tn.br_ip, TN_PORT_A);
	tcp_refused(p, lb, tn.br_ip, TN_PORT_B);
	tcp_refused(p, -1, tn.other_ip, TN_PORT_A);
	/* The same port over UDP is another protocol: refused. */
	cr_assert_eq(probe_do(p, PROBE_UDP_SENDTO, tn.br_ip, TN_PORT_A), EPERM);

	cr_assert_eq(drain(3), 3);
	expect_event(0, AF_INET, tn.br_ip, TN_PORT_B, IPPROTO_TCP, ALLOWLIST_HOOK_CONNECT4);
	expect_event(1, AF_INET, tn.other_ip, TN_PORT_A, IPPROTO_TCP, ALLOWLIST_HOOK_CONNECT4);
	expect_event(2, AF_INET, tn.br_ip, TN_PORT_A, IPPROTO_UDP, ALLOWLIST_HOOK_SENDMSG4);
	close(la);
	close(lb);
}

Test(allowlist, udp_sendmsg_allowed_arrives_refused_gets_eperm)
{
	int ua = tn_bind_udp(TN_PORT_A), ub = tn_bind_udp(TN_PORT_B);
	struct allowlist_rule rules[] = { rule("udp", tn.br_ip, "5001") };
	char peer[INET6_ADDRSTRLEN];
	struct probe *p;

	attach(rules, ELEMENTSOF(rules));
	p = probe_start(tn.cg_fd, tn.netns_fd);

	cr_assert_eq(probe_do(p, PROBE_UDP_SENDTO, tn.br_ip, TN_PORT_A), 0);
	cr_assert_eq(tn_recv_udp(ua, 1000, peer), (ssize_t)sizeof("warren-probe"));
	cr_assert_str_eq(peer, tn.sb_ip);
	cr_assert_eq(probe_do(p, PROBE_UDP_CONNECT, tn.br_ip, TN_PORT_A), 0);
	cr_assert_eq(tn_recv_udp(ua, 1000, peer), (ssize_t)sizeof("warren-probe"));

	cr_assert_eq(probe_do(p, PROBE_UDP_SENDTO, tn.br_ip, TN_PORT_B), EPERM);
	cr_assert_eq(probe_do(p, PROBE_UDP_CONNECT, tn.br_ip, TN_PORT_B), EPERM);
	cr_assert_eq(tn_recv_udp(ub, 200, peer), -1, "a refused datagram arrived");

	cr_assert_eq(drain(2), 2);
	expect_event(0, AF_INET, tn.br_ip, TN_PORT_B, IPPROTO_UDP, ALLOWLIST_HOOK_SENDMSG4);
	expect_event(1, AF_INET, tn.br_ip, TN_PORT_B, IPPROTO_UDP, ALLOWLIST_HOOK_CONNECT4);
	close(ua);
	close(ub);
}

Test(allowlist, live_update_flips_the_result_for_a_running_process)
{
	int la = tn_listen_tcp(TN_PORT_A), lb = tn_listen_tcp(TN_PORT_B);
	struct allowlist_rule only_a[] = { rule("tcp", tn.br_ip, "5001") };
	struct allowlist_rule only_b[] = { rule("tcp", tn.br_ip, "5002") };
	struct allowlist_rule subnet[] = { rule("any", tn.subnet, NULL) };
	struct probe *p;
	int cfd, rfd;

	attach(only_a, 1);
	p = probe_start(tn.cg_fd, tn.netns_fd);
	find_maps(&cfd, &rfd);

	tcp_allowed(p, la, tn.br_ip, TN_PORT_A);
	tcp_refused(p, lb, tn.br_ip, TN_PORT_B);

	update(only_b, 1);
	tcp_refused(p, la, tn.br_ip, TN_PORT_A);
	tcp_allowed(p, lb, tn.br_ip, TN_PORT_B);
	/* The old ruleset is gone from the trie, not just unused. */
	cr_assert_eq(map_entries(rfd, sizeof(struct allowlist_lpm_key)), 1);

	update(NULL, 0);
	tcp_refused(p, la, tn.br_ip, TN_PORT_A);
	tcp_refused(p, lb, tn.br_ip, TN_PORT_B);
	cr_assert_eq(map_entries(rfd, sizeof(struct allowlist_lpm_key)), 0);

	update(subnet, 1);
	tcp_allowed(p, la, tn.br_ip, TN_PORT_A);
	tcp_allowed(p, lb, tn.br_ip, TN_PORT_B);

	cr_assert_eq(drain(4), 4);
	expect_event(0, AF_INET, tn.br_ip, TN_PORT_B, IPPROTO_TCP, ALLOWLIST_HOOK_CONNECT4);
	expect_event(1, AF_INET, tn.br_ip, TN_PORT_A, IPPROTO_TCP, ALLOWLIST_HOOK_CONNECT4);
	expect_event(2, AF_INET, tn.br_ip, TN_PORT_A, IPPROTO_TCP, ALLOWLIST_HOOK_CONNECT4);
	expect_event(3, AF_INET, tn.br_ip, TN_PORT_B, IPPROTO_TCP, ALLOWLIST_HOOK_CONNECT4);
	close(cfd);
	close(rfd);
	close(la);
	close(lb);
}

Test(allowlist, port_ranges_and_any_protocol)
{
	int la = tn_listen_tcp(TN_PORT_A), lb = tn_listen_tcp(TN_PORT_B);
	int lc = tn_listen_tcp(TN_PORT_C), uc = tn_bind_udp(TN_PORT_C);
	struct allowlist_rule range[] = { rule("tcp", tn.br_ip, "5001-5002") };
	struct allowlist_rule any_c[] = { rule("any", tn.br_ip, "5003") };
	char peer[INET6_ADDRSTRLEN];
	struct probe *p;

	attach(range, 1);
	p = probe_start(tn.cg_fd, tn.netns_fd);
	tcp_allowed(p, la, tn.br_ip, TN_PORT_A);
	tcp_allowed(p, lb, tn.br_ip, TN_PORT_B);
	tcp_refused(p, lc, tn.br_ip, TN_PORT_C);

	update(any_c, 1);
	tcp_allowed(p, lc, tn.br_ip, TN_PORT_C);
	cr_assert_eq(probe_do(p, PROBE_UDP_SENDTO, tn.br_ip, TN_PORT_C), 0);
	cr_assert_eq(tn_recv_udp(uc, 1000, peer), (ssize_t)sizeof("warren-probe"));
	tcp_refused(p, la, tn.br_ip, TN_PORT_A);
	/* A port-limited "any" rule does not let ICMP through: ICMP has no port. */
	cr_assert_eq(probe_do(p, PROBE_ICMP_ECHO, tn.br_ip, 0), EPERM);

	cr_assert_eq(drain(3), 3);
	expect_event(0, AF_INET, tn.br_ip, TN_PORT_C, IPPROTO_TCP, ALLOWLIST_HOOK_CONNECT4);
	expect_event(1, AF_INET, tn.br_ip, TN_PORT_A, IPPROTO_TCP, ALLOWLIST_HOOK_CONNECT4);
	expect_event(2, AF_INET, tn.br_ip, 0, IPPROTO_ICMP, ALLOWLIST_HOOK_EGRESS);
	close(la);
	close(lb);
	close(lc);
	close(uc);
}

/* The trie returns only the longest prefix: a /32 rule for UDP must not hide a /24 rule for TCP
 * that also covers that address. */
Test(allowlist, longer_prefix_does_not_hide_a_shorter_rule)
{
	int la = tn_listen_tcp(TN_PORT_A), lb = tn_listen_tcp(TN_PORT_B);
	int ua = tn_bind_udp(TN_PORT_A), ub = tn_bind_udp(TN_PORT_B);
	struct allowlist_rule rules[] = {
		rule("tcp", tn.subnet, "5001"),
		rule("udp", tn.br_ip, "5002"),
	};
	char peer[INET6_ADDRSTRLEN];
	struct probe *p;

	attach(rules, ELEMENTSOF(rules));
	p = probe_start(tn.cg_fd, tn.netns_fd);

	tcp_allowed(p, la, tn.br_ip, TN_PORT_A);
	cr_assert_eq(probe_do(p, PROBE_UDP_SENDTO, tn.br_ip, TN_PORT_B), 0);
	cr_assert_eq(tn_recv_udp(ub, 1000, peer), (ssize_t)sizeof("warren-probe"));
	tcp_refused(p, lb, tn.br_ip, TN_PORT_B);
	cr_assert_eq(probe_do(p, PROBE_UDP_SENDTO, tn.br_ip, TN_PORT_A), EPERM);
	cr_assert_eq(tn_recv_udp(ua, 200, peer), -1);
	cr_assert_eq(drain(2), 2);
	close(la);
	close(lb);
	close(ua);
	close(ub);
}

/* ICMP never passes the address hooks: the cgroup_skb egress program is what stops it. */
Test(allowlist, icmp_is_judged_at_egress)
{
	struct allowlist_rule icmp[] = { rule("icmp", tn.br_ip, NULL) };
	struct probe *p;

	attach(NULL, 0);
	p = probe_start(tn.cg_fd, tn.netns_fd);
	cr_assert_eq(probe_do(p, PROBE_ICMP_ECHO, tn.br_ip, 0), EPERM);
	cr_assert_eq(drain(1), 1);
	expect_event(0, AF_INET, tn.br_ip, 0, IPPROTO_ICMP, ALLOWLIST_HOOK_EGRESS);

	update(icmp, 1);
	cr_assert_eq(probe_do(p, PROBE_ICMP_ECHO, tn.br_ip, 0), 0, "no echo reply");
	cr_assert_eq(probe_do(p, PROBE_ICMP_ECHO, tn.other_ip, 0), EPERM);
	cr_assert_eq(drain(1), 1);
	expect_event(0, AF_INET, tn.other_ip, 0, IPPROTO_ICMP, ALLOWLIST_HOOK_EGRESS);
}

Test(allowlist, ipv6_and_ipv4_mapped_addresses)
{
	int la = tn_listen_tcp(TN_PORT_A), lb = tn_listen_tcp(TN_PORT_B);
	struct allowlist_rule rules[] = {
		rule("tcp", tn.br_ip, "5001"),
		rule("tcp", "2001:db8::/32", "80"),
	};
	struct allowlist_rule v6_all[] = { rule("any", "::/0", NULL) };
	const char *mapped = fmt("::ffff:%s", tn.br_ip);
	struct probe *p;

	attach(NULL, 0);
	p = probe_start(tn.cg_fd, tn.netns_fd);

	cr_assert_eq(probe_do(p, PROBE_TCP_CONNECT, "2001:db8::1", 80), EPERM);
	cr_assert_eq(probe_do(p, PROBE_UDP_SENDTO, "2001:db8::1", 53), EPERM);
	cr_assert_eq(drain(2), 2);
	expect_event(0, AF_INET6, "2001:db8::1", 80, IPPROTO_TCP, ALLOWLIST_HOOK_CONNECT6);
	expect_event(1, AF_INET6, "2001:db8::1", 53, IPPROTO_UDP, ALLOWLIST_HOOK_SENDMSG6);

	update(rules, ELEMENTSOF(rules));
	/* Allowed, so the kernel goes on to route it and finds no IPv6 route: nothing leaves. */
	cr_assert_eq(probe_do(p, PROBE_TCP_CONNECT, "2001:db8::1", 80), ENETUNREACH);
	cr_assert_eq(probe_do(p, PROBE_TCP_CONNECT, "2001:db8::1", 81), EPERM);
	/* A dual-stack socket reaching IPv4 is judged by the IPv4 rules. */
	tcp_allowed(p, la, mapped, TN_PORT_A);
	tcp_refused(p, lb, mapped, TN_PORT_B);
	cr_assert_eq(drain(2), 2);
	expect_event(0, AF_INET6, "2001:db8::1", 81, IPPROTO_TCP, ALLOWLIST_HOOK_CONNECT6);
	expect_event(1, AF_INET, tn.br_ip, TN_PORT_B, IPPROTO_TCP, ALLOWLIST_HOOK_CONNECT6);

	/* An IPv6 rule for everything opens IPv6 only, not IPv4 through mapped addresses. */
	update(v6_all, 1);
	tcp_refused(p, la, mapped, TN_PORT_A);
	cr_assert_eq(probe_do(p, PROBE_TCP_CONNECT, "2001:db8::1", 81), ENETUNREACH);
	close(la);
	close(lb);
}

Test(allowlist, loopback_is_always_allowed)
{
	struct probe *p;

	attach(NULL, 0);
	p = probe_start(tn.cg_fd, tn.netns_fd);
	/* Nobody listens there: refused by the peer, not by the allowlist. */
	cr_assert_eq(probe_do(p, PROBE_TCP_CONNECT, "127.0.0.1", TN_PORT_A), ECONNREFUSED);
	cr_assert_eq(probe_do(p, PROBE_TCP_CONNECT, "::1", TN_PORT_A), ECONNREFUSED);
	cr_assert_eq(probe_do(p, PROBE_UDP_SENDTO, "127.0.0.1", TN_PORT_A), 0);
	cr_assert_eq(drain(0), 0);
}

Test(allowlist, a_cgroup_below_the_sandbox_is_denied_everything)
{
	int la = tn_listen_tcp(TN_PORT_A);
	struct allowlist_rule rules[] = { rule("tcp", tn.br_ip, "5001") };
	char inner_path[PATH_MAX];
	uint64_t inner_id;
	struct probe *p, *q;
	int inner;

	attach(rules, 1);
	inner = tn_cgroup_make(tn.cg_path, "inner", inner_path);
	cr_assert_eq(allowlist_cgroup_id(inner, &inner_id), 0);
	p = probe_start(inner, tn.netns_fd);
	q = probe_start(tn.cg_fd, tn.netns_fd);

	tcp_refused(p, la, tn.br_ip, TN_PORT_A);
	tcp_allowed(q, la, tn.br_ip, TN_PORT_A);
	cr_assert_eq(drain(1), 1);
	cr_assert_eq(events[0].cgroup_id, inner_id);
	cr_assert_eq(events[0].sandbox_key, 0, "an unregistered cgroup has no sandbox key");
	probe_stop(p);
	close(inner);
	close(la);
}

Test(allowlist, detach_restores_traffic_and_leaves_nothing)
{
	int la = tn_listen_tcp(TN_PORT_A);
	struct allowlist_rule rules[] = {
		rule("udp", tn.br_ip, "53"),
		rule("tcp", "2001:db8::/32", NULL),
	};
	struct probe *p;
	int cfd, rfd;

	/* The probe first: a child cloned later would inherit the link fds (they are O_CLOEXEC,
	 * and the probe does not exec) and keep the programs attached after the detach. */
	p = probe_start(tn.cg_fd, tn.netns_fd);
	expect_attached(tn.cg_fd, 0);
	attach(rules, ELEMENTSOF(rules));
	expect_attached(tn.cg_fd, 1);
	find_maps(&cfd, &rfd);
	cr_assert_eq(map_entries(cfd, sizeof(uint64_t)), 1);
	cr_assert_eq(map_entries(rfd, sizeof(struct allowlist_lpm_key)), 2);

	tcp_refused(p, la, tn.br_ip, TN_PORT_A);

	sb = allowlist_detach(sb);
	expect_attached(tn.cg_fd, 0);
	cr_assert_eq(map_entries(cfd, sizeof(uint64_t)), 0);
	cr_assert_eq(map_entries(rfd, sizeof(struct allowlist_lpm_key)), 0);
	tcp_allowed(p, la, tn.br_ip, TN_PORT_A);
	close(cfd);
	close(rfd);
	close(la);
}

Test(allowlist, refused_attaches_change_nothing)
{
	struct allowlist_rule good[] = { rule("tcp", tn.br_ip, "5001") };
	struct allowlist_rule bad = good[0], many[ALLOWLIST_MAX_RULES + 1];
	struct allowlist_rule crowded[ALLOWLIST_MAX_PORTS + 1];
	struct allowlist_sandbox *other = NULL;
	_cleanup_close_ int notcg = open("/tmp", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	int cfd, rfd;

	bad.prefixlen = 33;
	cr_assert_eq(allowlist_attach(al, tn.cg_fd, KEY, &bad, 1, &sb), -EINVAL);
	bad = good[0];
	bad.addr.in.s_addr |= htonl(1);
	bad.prefixlen = 24;
	cr_assert_eq(allowlist_attach(al, tn.cg_fd, KEY, &bad, 1, &sb), -EINVAL, "host bits set");
	bad = good[0];
	bad.port_lo = 10;
	bad.port_hi = 9;
	cr_assert_eq(allowlist_attach(al, tn.cg_fd, KEY, &bad, 1, &sb), -EINVAL);
	for (size_t i = 0; i < ELEMENTSOF(many); i++)
		many[i] = good[0];
	cr_assert_eq(allowlist_attach(al, tn.cg_fd, KEY, many, ELEMENTSOF(many), &sb), -E2BIG);
	for (size_t i = 0; i < ELEMENTSOF(crowded); i++) {
		crowded[i] = good[0];
		crowded[i].port_lo = crowded[i].port_hi = (uint16_t)(1000 + i);
	}
	cr_assert_eq(allowlist_attach(al, tn.cg_fd, KEY, crowded, ELEMENTSOF(crowded), &sb),
		     -E2BIG);
	cr_assert_geq(notcg, 0);
	cr_assert_eq(allowlist_attach(al, notcg, KEY, good, 1, &sb), -EINVAL);
	cr_assert_null(sb);
	expect_attached(tn.cg_fd, 0);

	/* Exactly ALLOWLIST_MAX_PORTS entries on one prefix fit. */
	attach(crowded, ALLOWLIST_MAX_PORTS);
	cr_assert_eq(allowlist_attach(al, tn.cg_fd, KEY + 1, good, 1, &other), -EEXIST);
	cr_assert_null(other);
	cr_assert_eq(allowlist_update(sb, &bad, 1), -EINVAL);
	expect_attached(tn.cg_fd, 1);
	find_maps(&cfd, &rfd);
	cr_assert_eq(map_entries(cfd, sizeof(uint64_t)), 1);
	cr_assert_eq(map_entries(rfd, sizeof(struct allowlist_lpm_key)), 1);
	close(cfd);
	close(rfd);
}

/* A sandbox hammering refused sends: every refusal is counted, the ring buffer stays bounded
 * (records beyond it are counted as lost, not queued), and the fd polls as it should. */
Test(allowlist, ring_buffer_polls_counts_and_stays_bounded)
{
	struct pollfd pfd = { .fd = allowlist_ring_fd(al), .events = POLLIN };
	uint64_t denied, lost;
	struct probe *p;
	int n = 0, r;

	cr_assert_geq(pfd.fd, 0);
	attach(NULL, 0);
	p = probe_start(tn.cg_fd, tn.netns_fd);
	cr_assert_eq(poll(&pfd, 1, 0), 0, "readable with nothing refused");

	cr_assert_eq(probe_do(p, PROBE_UDP_SENDTO, tn.br_ip, TN_PORT_A), EPERM);
	cr_assert_eq(poll(&pfd, 1, 1000), 1, "not readable after a refusal");
	cr_assert_eq(allowlist_consume(al, collect, NULL), 1);
	cr_assert_eq(allowlist_stats(al, &denied, &lost), 0);
	cr_assert_eq(denied, 1);
	cr_assert_eq(lost, 0);

	cr_assert_eq(probe_flood(p, tn.br_ip, TN_PORT_A, 20000), EPERM);
	cr_assert_eq(allowlist_stats(al, &denied, &lost), 0);
	cr_assert_eq(denied, 20001);
	cr_assert_gt(lost, 0, "20000 records fit a %d-byte ring?", ALLOWLIST_RINGBUF_BYTES);
	while ((r = allowlist_consume(al, collect, NULL)) > 0)
		n += r;
	cr_assert_eq(r, 0);
	cr_assert_eq((uint64_t)n + lost, 20000, "consumed %d + lost %llu", n,
		     (unsigned long long)lost);
	cr_log_info("20000 refusals: %d recorded, %llu lost (ring of %d bytes)", n,
		    (unsigned long long)lost, ALLOWLIST_RINGBUF_BYTES);
}

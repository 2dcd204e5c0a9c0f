// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The network allowlist of sandboxes in `allowlist` mode: default deny, IP/CIDR + port range +
 * protocol rules, every refusal reported through a ring buffer.
 *
 * One copy of these programs serves the whole node. The loader attaches them to each sandbox's
 * cgroup2 directory; at run time a program finds its sandbox by the cgroup id of the socket's
 * owner and looks the destination up in that sandbox's rules (see ../allowlist.c).
 *
 *   cgroup/connect4, connect6   TCP connect, connected UDP (EPERM to the caller)
 *   cgroup/sendmsg4, sendmsg6   unconnected UDP sendto/sendmsg (EPERM)
 *   cgroup_skb/egress           every IP packet a sandbox socket sends: catches what the address
 *                               hooks never see (ICMP, raw sockets, TCP fast open); for TCP only
 *                               the opening SYN is checked, the rest of a connection was vetted
 *
 * Loopback destinations (127.0.0.0/8, ::1) are always allowed: they stay inside the sandbox's own
 * network namespace, and `none` mode already gives a sandbox its loopback. */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "allowlist.h"

/* The programs only use helpers that are not GPL-only; the licence string must still be one the
 * kernel accepts if that ever changes. */
char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_ICMPV6 58

#define ETH_P_IP_BE bpf_htons(0x0800)
#define ETH_P_IPV6_BE bpf_htons(0x86DD)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ALLOWLIST_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct allowlist_cgroup);
} cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, ALLOWLIST_MAX_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct allowlist_lpm_key);
	__type(value, struct allowlist_ports);
} rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, ALLOWLIST_RINGBUF_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, _ALLOWLIST_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* What a hook knows about one attempt. addr is in network order, IPv4 in addr[0..3]. */
struct flow {
	__u8 addr[16];
	__u32 family;
	__u16 port;
	__u8 proto;
	__u8 hook;
};

static __always_inline void count(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &stat);

	if (v)
		*v += 1;
}

/* Reports a refusal and returns 0 (deny) so that callers can `return deny(...)`. A full ring
 * buffer drops the record, never the decision: a sandbox hammering refused connects costs the
 * daemon at most one ring of records between two drains. */
static __always_inline int deny(__u64 cgid, const struct allowlist_cgroup *cg,
				const struct flow *f)
{
	struct allowlist_event *e;

	count(ALLOWLIST_STAT_DENIED);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(ALLOWLIST_STAT_LOST);
		return 0;
	}
	e->time_ns = bpf_ktime_get_boot_ns();
	e->cgroup_id = cgid;
	e->sandbox_key = cg ? cg->sandbox_key : 0;
	__builtin_memcpy(e->daddr, f->addr, sizeof(e->daddr));
	e->dport = f->port;
	e->family = (__u8)f->family;
	e->proto = f->proto;
	e->hook = f->hook;
	e->pad[0] = e->pad[1] = e->pad[2] = 0;
	/* Flags 0: adaptive wake-up, the consumer is woken only when it has caught up. */
	bpf_ringbuf_submit(e, 0);
	return 0;
}

static __always_inline int is_loopback(const struct flow *f)
{
	if (f->family == ALLOWLIST_AF_INET)
		return f->addr[0] == 127;
	for (int i = 0; i < 15; i++)
		if (f->addr[i])
			return 0;
	return f->addr[15] == 1;
}

/* 1 if the sandbox's rules allow the flow. */
static __always_inline int allowed(const struct allowlist_cgroup *cg, const struct flow *f)
{
	struct allowlist_lpm_key key = {};
	struct allowlist_ports *p;
	__u8 proto = f->proto == PROTO_ICMPV6 ? PROTO_ICMP : f->proto;
	__u32 n;

	key.ruleset = cg->ruleset;
	key.family = f->family;
	key.prefixlen = ALLOWLIST_LPM_FIXED_BITS + (f->family == ALLOWLIST_AF_INET ? 32 : 128);
	__builtin_memcpy(key.addr, f->addr, sizeof(key.addr));
	p = bpf_map_lookup_elem(&rules, &key);
	if (!p)
		return 0;
	n = p->n;
	for (__u32 i = 0; i < ALLOWLIST_MAX_PORTS; i++) {
		if (i >= n)
			break;
		if (p->port[i].proto && p->port[i].proto != proto)
			continue;
		if (f->port < p->port[i].lo || f->port > p->port[i].hi)
			continue;
		return 1;
	}
	return 0;
}

/* The decision shared by all hooks. An unknown cgroup is a sub-cgroup a sandbox made below its
 * own directory (the programs only run for the attached cgroup and its descendants): deny, so
 * that a sandbox cannot step out of its rules by creating a cgroup. */
static __always_inline int decide(__u64 cgid, const struct flow *f)
{
	struct allowlist_cgroup *cg;

	if (is_loopback(f))
		return 1;
	cg = bpf_map_lookup_elem(&cgroups, &cgid);
	if (!cg)
		return deny(cgid, NULL, f);
	if (allowed(cg, f))
		return 1;
	return deny(cgid, cg, f);
}

static __always_inline int sock_addr4(struct bpf_sock_addr *ctx, __u8 hook)
{
	struct flow f = {};
	__u32 a = ctx->user_ip4;

	__builtin_memcpy(f.addr, &a, 4);
	f.family = ALLOWLIST_AF_INET;
	f.port = bpf_ntohs((__u16)ctx->user_port);
	f.proto = (__u8)ctx->protocol;
	f.hook = hook;
	/* Connect and sendmsg run in the calling task, which owns the socket: its cgroup is the
	 * sandbox's (a socket passed in from outside would not run these programs at all). */
	return decide(bpf_get_current_cgroup_id(), &f);
}

static __always_inline int sock_addr6(struct bpf_sock_addr *ctx, __u8 hook)
{
	struct flow f = {};
	__u32 a[4];

	a[0] = ctx->user_ip6[0];
	a[1] = ctx->user_ip6[1];
	a[2] = ctx->user_ip6[2];
	a[3] = ctx->user_ip6[3];
	f.port = bpf_ntohs((__u16)ctx->user_port);
	f.proto = (__u8)ctx->protocol;
	f.hook = hook;
	/* A dual-stack socket reaches IPv4 through ::ffff:a.b.c.d: judge it by the IPv4 rules, or
	 * an IPv6 rule such as ::/0 would open IPv4 too. */
	if (a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0xffff)) {
		__builtin_memcpy(f.addr, &a[3], 4);
		f.family = ALLOWLIST_AF_INET;
	} else {
		__builtin_memcpy(f.addr, a, 16);
		f.family = ALLOWLIST_AF_INET6;
	}
	return decide(bpf_get_current_cgroup_id(), &f);
}

SEC("cgroup/connect4")
int allowlist_connect4(struct bpf_sock_addr *ctx)
{
	return sock_addr4(ctx, ALLOWLIST_HOOK_CONNECT4);
}

SEC("cgroup/connect6")
int allowlist_connect6(struct bpf_sock_addr *ctx)
{
	return sock_addr6(ctx, ALLOWLIST_HOOK_CONNECT6);
}

SEC("cgroup/sendmsg4")
int allowlist_sendmsg4(struct bpf_sock_addr *ctx)
{
	return sock_addr4(ctx, ALLOWLIST_HOOK_SENDMSG4);
}

SEC("cgroup/sendmsg6")
int allowlist_sendmsg6(struct bpf_sock_addr *ctx)
{
	return sock_addr6(ctx, ALLOWLIST_HOOK_SENDMSG6);
}

/* Reads the transport header at `off`: the port for TCP/UDP, and whether a TCP segment opens a
 * connection (SYN without ACK). Returns 0, or -1 if the packet is too short to tell. */
static __always_inline int l4(struct __sk_buff *skb, __u32 off, struct flow *f, int *syn)
{
	__u8 b[14];

	*syn = 0;
	if (f->proto == PROTO_TCP) {
		if (bpf_skb_load_bytes(skb, off, b, 14) < 0)
			return -1;
		f->port = ((__u16)b[2] << 8) | b[3];
		/* byte 13: CWR ECE URG ACK PSH RST SYN FIN */
		*syn = (b[13] & 0x12) == 0x02;
	} else if (f->proto == PROTO_UDP) {
		if (bpf_skb_load_bytes(skb, off, b, 4) < 0)
			return -1;
		f->port = ((__u16)b[2] << 8) | b[3];
	} else if (f->proto == PROTO_ICMPV6) {
		if (bpf_skb_load_bytes(skb, off, b, 1) < 0)
			return -1;
		/* MLD (130-132, 143) and neighbour discovery (133-137) are link-local control
		 * traffic the kernel sends for the interface: let it through, or IPv6 stops
		 * resolving. */
		if ((b[0] >= 130 && b[0] <= 137) || b[0] == 143)
			*syn = -1;
	}
	return 0;
}

static __always_inline int parse_ipv4(struct __sk_buff *skb, struct flow *f, int *syn)
{
	__u8 h[20];
	__u32 ihl;

	if (bpf_skb_load_bytes(skb, 0, h, 20) < 0)
		return -1;
	f->family = ALLOWLIST_AF_INET;
	f->proto = h[9];
	__builtin_memcpy(f->addr, &h[16], 4);
	ihl = (h[0] & 0x0f) * 4;
	if (ihl < 20)
		return -1;
	/* A later fragment carries no transport header: port 0, which only "any port" allows. */
	if (((h[6] & 0x1f) | h[7]) != 0)
		return 0;
	return l4(skb, ihl, f, syn);
}

static __always_inline int parse_ipv6(struct __sk_buff *skb, struct flow *f, int *syn)
{
	__u8 h[40], x[8];
	__u32 off = 40;

	if (bpf_skb_load_bytes(skb, 0, h, 40) < 0)
		return -1;
	f->family = ALLOWLIST_AF_INET6;
	__builtin_memcpy(f->addr, &h[24], 16);
	f->proto = h[6];
	/* Skip a few extension headers. Anything deeper keeps the extension header as its protocol
	 * and port 0, which only a rule for any protocol and any port allows: fail closed. */
	for (int i = 0; i < 4; i++) {
		if (f->proto != 0 && f->proto != 43 && f->proto != 60 && f->proto != 44)
			break;
		if (bpf_skb_load_bytes(skb, off, x, 8) < 0)
			return -1;
		if (f->proto == 44) {
			f->proto = x[0];
			off += 8;
			if ((((__u16)x[2] << 8 | x[3]) & 0xfff8) != 0)
				return 0; /* a later fragment */
			continue;
		}
		f->proto = x[0];
		off += ((__u32)x[1] + 1) * 8;
	}
	return l4(skb, off, f, syn);
}

SEC("cgroup_skb/egress")
int allowlist_egress(struct __sk_buff *skb)
{
	struct flow f = {};
	int syn = 0, r;

	f.hook = ALLOWLIST_HOOK_EGRESS;
	if (skb->protocol == ETH_P_IP_BE)
		r = parse_ipv4(skb, &f, &syn);
	else if (skb->protocol == ETH_P_IPV6_BE)
		r = parse_ipv6(skb, &f, &syn);
	else
		return 1; /* not IP: the hook is only called for IP output */
	if (r < 0) {
		/* Too short to read: judge it without a port, as a TCP segment that may open. */
		f.port = 0;
	} else if (syn < 0 || (f.proto == PROTO_TCP && !syn)) {
		return 1;
	}
	return decide(bpf_skb_cgroup_id(skb), &f);
}

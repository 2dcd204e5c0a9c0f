/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Shared between the BPF programs (allowlist.bpf.c) and their loader (../allowlist.c): the
 * layout of the maps and of the denial records. Fixed-width types only, no padding the compiler
 * chooses: both sides must agree byte for byte. */

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define ALLOWLIST_AF_INET 2
#define ALLOWLIST_AF_INET6 10

/* Sizes of the node-wide maps. One sandbox uses one `cgroups` entry and one `rules` entry per
 * distinct CIDR in its allowlist (two during a live update). */
#define ALLOWLIST_MAX_SANDBOXES 16384
#define ALLOWLIST_MAX_PREFIXES 65536
/* Port/protocol entries that may apply to one address: the rules of that CIDR plus those of every
 * shorter CIDR containing it (see struct allowlist_ports). */
#define ALLOWLIST_MAX_PORTS 32
#define ALLOWLIST_RINGBUF_BYTES (256 * 1024)

/* Where a refusal happened. */
enum allowlist_hook {
	ALLOWLIST_HOOK_CONNECT4,
	ALLOWLIST_HOOK_CONNECT6,
	ALLOWLIST_HOOK_SENDMSG4,
	ALLOWLIST_HOOK_SENDMSG6,
	ALLOWLIST_HOOK_EGRESS,
	_ALLOWLIST_HOOK_MAX,
};

/* Per-CPU counters in the `stats` map. */
enum allowlist_stat {
	ALLOWLIST_STAT_DENIED, /* refusals, reported or not */
	ALLOWLIST_STAT_LOST,   /* refusals not reported: the ring buffer was full */
	_ALLOWLIST_STAT_MAX,
};

/* Value of the `cgroups` hash map, keyed by the sandbox's cgroup2 id (__u64). `ruleset` names the
 * sandbox's current entries in the `rules` trie; a live update writes a new ruleset and then
 * swaps this value in one map update, so a program never sees half of an allowlist. */
struct allowlist_cgroup {
	__u64 sandbox_key; /* chosen by the daemon, echoed in denial records */
	__u32 ruleset;
	__u32 pad;
};

/* Key of the `rules` LPM trie. The trie matches the bits after `prefixlen` in order: the ruleset
 * and the family are always matched in full (64 bits), then `prefixlen - 64` address bits. An
 * IPv4 address sits in addr[0..3], the rest stays zero. */
struct allowlist_lpm_key {
	__u32 prefixlen;
	__u32 ruleset;
	__u32 family; /* ALLOWLIST_AF_INET or ALLOWLIST_AF_INET6 */
	__u8 addr[16];
};

#define ALLOWLIST_LPM_FIXED_BITS 64

/* proto: 0 any, 6 tcp, 17 udp, 1 icmp (ICMPv6 is folded onto 1). ICMP has no port: it matches
 * only entries whose range includes 0, i.e. "any port". */
struct allowlist_port {
	__u16 lo;
	__u16 hi;
	__u8 proto;
	__u8 pad[3];
};

/* Value of the `rules` trie. The trie returns only the longest matching prefix, but an allowlist
 * is the union of its rules; so the loader stores in each prefix's value the entries of every
 * rule whose CIDR contains that prefix. One lookup then gives everything that applies. */
struct allowlist_ports {
	__u32 n;
	__u32 pad;
	struct allowlist_port port[ALLOWLIST_MAX_PORTS];
};

/* One refusal, as the ring buffer carries it (48 bytes). */
struct allowlist_event {
	__u64 time_ns; /* CLOCK_BOOTTIME (bpf_ktime_get_boot_ns) */
	__u64 cgroup_id;
	__u64 sandbox_key; /* 0 when the cgroup is not registered (a sub-cgroup of a sandbox) */
	__u8 daddr[16];    /* network order; IPv4 in daddr[0..3] */
	__u16 dport;       /* host order; 0 where the protocol has none */
	__u8 family;       /* ALLOWLIST_AF_INET or ALLOWLIST_AF_INET6 */
	__u8 proto;        /* IPPROTO_* as the socket or packet said (ICMPv6: 58) */
	__u8 hook;         /* enum allowlist_hook */
	__u8 pad[3];
};

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/allowlist.h"

/* The eBPF egress allowlist of `allowlist`-mode sandboxes: default deny; a rule allows an IPv4 or
 * IPv6 CIDR, a port or port range (or any port) and a protocol (tcp, udp, icmp or any). Rules
 * change while the sandbox runs. Every refusal becomes a struct allowlist_event the daemon reads
 * from a ring buffer. Loopback destinations inside the sandbox's own network namespace are
 * always allowed. Design notes: allowlist.c. */

enum allowlist_proto {
	ALLOWLIST_PROTO_ANY,
	ALLOWLIST_PROTO_TCP,
	ALLOWLIST_PROTO_UDP,
	ALLOWLIST_PROTO_ICMP, /* ICMP over IPv4, ICMPv6 over IPv6; has no port */
	_ALLOWLIST_PROTO_MAX,
};

const char *allowlist_proto_to_string(enum allowlist_proto p);
/* "any", "tcp", "udp", "icmp" → enum value, or -EINVAL. */
int allowlist_proto_from_string(const char *s);
const char *allowlist_hook_to_string(enum allowlist_hook h);

/* Upper bound on rules per sandbox. */
#define ALLOWLIST_MAX_RULES 256

struct allowlist_rule {
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr in;
		struct in6_addr in6;
	} addr;            /* network order; bits past prefixlen must be zero */
	unsigned prefixlen; /* 0..32 or 0..128 */
	uint16_t port_lo;  /* inclusive range; 0-65535 means any port */
	uint16_t port_hi;
	enum allowlist_proto proto;
};

/* Builds a rule from the three strings an API request carries, e.g. ("tcp", "198.18.0.0/15",
 * "8000-8100"), ("udp", "198.18.0.1", "53"), ("icmp", "2001:db8::/32", NULL). cidr without a
 * prefix length is one host; ports NULL, "" or "any" is any port. A CIDR with host bits set
 * ("198.18.0.1/15") and ports on an icmp rule are refused, as typos that would allow more or
 * less than meant. Returns 0 or -EINVAL; writes *ret only on success. */
int allowlist_rule_parse(const char *proto, const char *cidr, const char *ports,
			 struct allowlist_rule *ret);

/* The node's programs, maps and ring buffer. */
struct allowlist;
/* One sandbox's attachment: its links and its current rules. */
struct allowlist_sandbox;

/* Loads the programs and creates the maps and ring buffer, once per node, at start-up (it takes
 * milliseconds: keep it off the loop threads). Needs CAP_BPF + CAP_NET_ADMIN (root). Returns 0,
 * -EPERM without privileges, or another -errno from libbpf. The caller owns *ret. */
int allowlist_open(struct allowlist **ret);
/* Every sandbox must have been detached first. NULL-safe, returns NULL. */
struct allowlist *allowlist_free(struct allowlist *al);

/* Attaches the programs to the sandbox's cgroup2 directory (an O_DIRECTORY fd, not kept) with
 * `rules` (n may be 0: deny everything but loopback). sandbox_key is the daemon's own name for
 * the sandbox; denial records carry it back. -EINVAL for an invalid rule or a fd that is not a
 * cgroup2 directory, -E2BIG when more than ALLOWLIST_MAX_RULES rules or more than
 * ALLOWLIST_MAX_PORTS port entries would apply to one address, -EEXIST if the cgroup already
 * has an allowlist, -ENOSPC when the node's maps are full. All or nothing. Any thread may call
 * it; the caller owns *ret. */
int allowlist_attach(struct allowlist *al, int cgroup_fd, uint64_t sandbox_key,
		     const struct allowlist_rule *rules, size_t n, struct allowlist_sandbox **ret);
/* Replaces the rules while the sandbox runs. The switch is atomic: each connect or packet is
 * judged entirely by the old rules or entirely by the new ones. Established TCP connections
 * are not cut (they were judged when they opened); UDP and ICMP are judged per datagram. On
 * failure the old rules stay. Errors as allowlist_attach. */
int allowlist_update(struct allowlist_sandbox *sb, const struct allowlist_rule *rules, size_t n);
/* Detaches the programs and deletes the sandbox's rules. NULL-safe, returns NULL. */
struct allowlist_sandbox *allowlist_detach(struct allowlist_sandbox *sb);
uint64_t allowlist_sandbox_cgroup_id(const struct allowlist_sandbox *sb);

/* A fd that polls readable (POLLIN) while denial records wait; owned by al. */
int allowlist_ring_fd(const struct allowlist *al);
/* Called once per record; a negative return stops the drain and is returned by
 * allowlist_consume. */
typedef int (*allowlist_denial_fn)(const struct allowlist_event *ev, void *userdata);
/* Drains the ring buffer without blocking. Returns the number of records handed to fn, or
 * -errno. Call it from one thread at a time. */
int allowlist_consume(struct allowlist *al, allowlist_denial_fn fn, void *userdata);
/* Totals since allowlist_open over all CPUs: refusals, and refusals whose record was lost
 * because the ring buffer was full. */
int allowlist_stats(struct allowlist *al, uint64_t *ret_denied, uint64_t *ret_lost);

/* The cgroup id of a cgroup2 directory fd, as bpf_get_current_cgroup_id() reports it. */
int allowlist_cgroup_id(int cgroup_fd, uint64_t *ret);

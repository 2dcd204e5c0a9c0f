/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

/* The node bridge of `allowlist`-mode sandboxes and their veth pairs, over rtnetlink.
 *
 * Sandbox network namespace                 node (host network namespace)
 *   eth0 198.18.x.y/15  <--- veth pair --->  <host end>  -- port of -->  warren0 198.18.0.1/15
 *   default route via 198.18.0.1
 *
 * Traffic goes between sandboxes and the node only: there is no NAT, and IPv4 forwarding is
 * switched off for packets arriving on the bridge, so nothing a sandbox sends is routed off the
 * machine. Ports are isolated by default: the bridge does not forward frames between two
 * sandboxes, and with forwarding off the node does not route between them either, so each
 * sandbox talks to the node only. What it may reach there is the eBPF allowlist's business
 * (allowlist.h).
 *
 * The namespaces must be owned by a user namespace in which the sandbox has no CAP_NET_ADMIN or
 * CAP_NET_RAW (e.g. created by the daemon): with them it could change its address or send frames
 * through an AF_PACKET socket, which no cgroup hook sees.
 *
 * None of this may run in a clone3 child (it allocates). Each call opens its own netlink socket,
 * so calls from different threads do not share state, except the address allocator, which
 * takes a lock. Errors are negative errnos; nothing is logged above debug. */

#define NET_BRIDGE_DEFAULT_NAME "warren0"
#define NET_BRIDGE_DEFAULT_ADDR "198.18.0.1"
#define NET_BRIDGE_DEFAULT_PREFIXLEN 15

struct net_bridge_config {
	char name[IFNAMSIZ];
	struct in_addr addr; /* the node's address on the bridge, the sandboxes' gateway */
	unsigned prefixlen;  /* 8..30 */
	bool isolate_ports;  /* no frames between sandboxes (default true) */
};

/* warren0, 198.18.0.1/15, isolated ports. */
void net_bridge_config_default(struct net_bridge_config *ret);

struct net_bridge;

/* Creates the bridge, or adopts an existing bridge of that name (after a daemon restart), then
 * gives it the address, turns IPv4 forwarding off on it and brings it up. -EEXIST if a link of
 * that name exists but is not a bridge, -EINVAL for a bad config. The caller owns *ret. */
int net_bridge_open(const struct net_bridge_config *config, struct net_bridge **ret);
/* Frees the handle; the bridge itself stays (it outlives daemon restarts). NULL-safe. */
struct net_bridge *net_bridge_free(struct net_bridge *br);
/* Deletes the bridge link itself (node teardown, tests). Its veths stay but lose their master. */
int net_bridge_remove(struct net_bridge *br);
int net_bridge_ifindex(const struct net_bridge *br);
const struct net_bridge_config *net_bridge_config(const struct net_bridge *br);

/* Hands out a free address of the bridge's subnet (never the network, broadcast or bridge
 * address), or -ENOSPC. net_bridge_addr_reserve marks a given address as taken (adopting the
 * sandboxes of a previous daemon): -EEXIST if it is, -EINVAL outside the subnet. */
int net_bridge_addr_alloc(struct net_bridge *br, struct in_addr *ret);
int net_bridge_addr_reserve(struct net_bridge *br, struct in_addr addr);
void net_bridge_addr_release(struct net_bridge *br, struct in_addr addr);

/* The node end of a sandbox's veth pair. */
struct net_veth {
	int ifindex;          /* of the host end, in the node's namespace */
	char name[IFNAMSIZ];  /* of the host end */
	struct in_addr addr;  /* the sandbox's address */
};

/* Creates a veth pair: `host_name` on the node as a port of the bridge, `peer_name` (e.g.
 * "eth0") directly inside the network namespace netns_fd. Inside, it gives the peer `addr` with
 * the bridge's prefix length, brings it and `lo` up and routes by default via the bridge
 * address. All or nothing: on failure the pair is deleted again. -EEXIST if either name is
 * taken, -EINVAL for names too long or an address outside the subnet. */
int net_veth_add(struct net_bridge *br, int netns_fd, const char *host_name,
		 const char *peer_name, struct in_addr addr, struct net_veth *ret);
/* Deletes the pair (deleting one end deletes both). 0 also when it is already gone, as it is
 * once the namespace was destroyed. */
int net_veth_remove(const struct net_veth *veth);

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* A test network for one test process: a cgroup2 directory, a network namespace, a bridge and a
 * veth pair between them, and a "probe" child that lives in both and makes connections on
 * request. Everything is named after the test's pid (criterion runs each test in its own
 * process), uses 198.19.<pid % 256>.0/24 inside 198.18.0.0/15, and is removed by tn_teardown()
 * even when the test failed. */

#include <arpa/inet.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bridge.h"

#define TN_PORT_A 5001
#define TN_PORT_B 5002
#define TN_PORT_C 5003

struct test_net {
	unsigned id;                 /* the pid */
	char cg_parent[PATH_MAX];    /* /sys/fs/cgroup/unified/warren-test-net-<pid> */
	char cg_path[PATH_MAX];      /* <parent>/sandbox */
	int cg_fd;
	int netns_fd;
	struct net_bridge *br;
	struct net_veth veth;
	bool have_veth;
	struct in_addr br_addr, sb_addr;
	char br_ip[INET_ADDRSTRLEN]; /* 198.19.X.1 */
	char sb_ip[INET_ADDRSTRLEN]; /* 198.19.X.2 */
	char other_ip[INET_ADDRSTRLEN]; /* 198.19.X.77: on-link, nobody there */
	char subnet[24];                /* 198.19.X.0/24 */
	char bridge_name[IFNAMSIZ];
	bool shared_ports;           /* set before tn_setup(): bridge ports not isolated */
};

extern struct test_net tn;

/* Skips the test when the operation it needs is refused for lack of privileges (EPERM, EACCES)
 * or missing from the kernel (ENOSYS, EOPNOTSUPP); any other error fails. */
void tn_skip_or_fail(int r, const char *what);

/* tn_setup_cgroups: the cgroup parent and the sandbox directory only. tn_setup: all of it. */
void tn_setup_cgroups(void);
void tn_setup(void);
void tn_teardown(void);

/* A further cgroup2 directory below the parent (or below `under` if given); returns its fd. */
int tn_cgroup_make(const char *under, const char *name, char path[PATH_MAX]);
void tn_cgroup_remove(const char *path);

/* A fresh network namespace (the caller's own stays as it was); returns its fd. */
int tn_netns_new(void);

/* ---- the probe: a child in a cgroup and a network namespace ---------------------------- */

enum probe_op {
	PROBE_TCP_CONNECT, /* connect(), 0 or errno */
	PROBE_UDP_SENDTO,  /* sendto() on an unconnected socket */
	PROBE_UDP_CONNECT, /* connect() then send() */
	PROBE_ICMP_ECHO,   /* raw ICMP echo request; 0 once the reply came, ETIMEDOUT if none */
	PROBE_UDP_FLOOD,   /* `count` sendto()s; 0 if all were sent, else the first errno that
			    * was not EPERM, or EPERM if every one was refused */
	PROBE_EXIT,
};

struct probe {
	pid_t pid;
	int pidfd;
	int sock;
};

/* Clones a child straight into the cgroup (CLONE_INTO_CGROUP), which then joins netns_fd.
 * The harness owns the probe; tn_teardown() kills any still running. */
struct probe *probe_start(int cgroup_fd, int netns_fd);
/* Asks the probe to do op towards ip:port (IPv4 or IPv6 text); returns 0 or the errno. */
int probe_do(struct probe *p, enum probe_op op, const char *ip, uint16_t port);
int probe_flood(struct probe *p, const char *ip, uint16_t port, unsigned count);
void probe_stop(struct probe *p);

/* ---- the node side -------------------------------------------------------------------- */

/* A TCP listener or UDP socket bound to tn.br_ip:port in the test's own namespace. */
int tn_listen_tcp(uint16_t port);
int tn_bind_udp(uint16_t port);
/* Accepts one connection within timeout_ms; returns the peer's address (text) in `peer`, or
 * false if none came. */
bool tn_accept(int lfd, int timeout_ms, char peer[INET6_ADDRSTRLEN]);
/* Receives one datagram within timeout_ms: its length, or -1 if none came. */
ssize_t tn_recv_udp(int fd, int timeout_ms, char peer[INET6_ADDRSTRLEN]);

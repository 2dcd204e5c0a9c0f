/* SPDX-License-Identifier: Apache-2.0 */
/* The node bridge and the veth pairs against the real kernel (suite 'priv'): what the node and
 * the inside of the namespace show after setup, traffic to the node, isolation between
 * sandboxes (both ways: isolated ports refuse, shared ports let through), teardown, and the
 * address allocator. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

static struct net_veth second;
static bool have_second;
static int second_ns = -EBADF;

static void teardown(void)
{
	if (have_second) {
		cr_expect_eq(net_veth_remove(&second), 0);
		have_second = false;
	}
	second_ns = safe_close(second_ns);
	tn_teardown();
}

TestSuite(bridge, .fini = teardown, .timeout = 60);

/* ---- helpers ------------------------------------------------------------------------------ */

static char *read_sys(const char *fmt, const char *name)
{
	static char buf[256];
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), fmt, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void write_sys(const char *fmt, const char *name, const char *value)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), fmt, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, value, strlen(value)), (ssize_t)strlen(value));
	close(fd);
}

enum {
	IN_NO_ETH0 = 1 << 0,
	IN_WRONG_ADDR = 1 << 1,
	IN_WRONG_MASK = 1 << 2,
	IN_ETH0_DOWN = 1 << 3,
	IN_LO_DOWN = 1 << 4,
	IN_NO_DEFAULT_ROUTE = 1 << 5,
	IN_SETNS = 1 << 6,
};

static int if_flags(int fd, const char *name, short *ret)
{
	struct ifreq ifr = {};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -1;
	*ret = ifr.ifr_flags;
	return 0;
}

/* What the inside of the namespace shows, in a forked child: ioctls and /proc/self/net/route
 * only (no allocation in a child of a process that may have threads). Returns IN_* bits. */
static int inside_state(int netns_fd, struct in_addr want_addr, struct in_addr gw)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct ifreq ifr = { .ifr_name = "eth0" };
		char route[4096], want_gw[16];
		int bad = 0, fd;
		short flags;
		ssize_t n;

		if (setns(netns_fd, CLONE_NEWNET) < 0)
			_exit(IN_SETNS);
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (ioctl(fd, SIOCGIFADDR, &ifr) < 0)
			_exit(IN_NO_ETH0);
		if (((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr.s_addr != want_addr.s_addr)
			bad |= IN_WRONG_ADDR;
		if (ioctl(fd, SIOCGIFNETMASK, &ifr) < 0 ||
		    ((struct sockaddr_in *)&ifr.ifr_netmask)->sin_addr.s_addr != htonl(0xffffff00))
			bad |= IN_WRONG_MASK;
		if (if_flags(fd, "eth0", &flags) < 0 || !(flags & IFF_UP))
			bad |= IN_ETH0_DOWN;
		if (if_flags(fd, "lo", &flags) < 0 || !(flags & IFF_UP))
			bad |= IN_LO_DOWN;
		/* /proc/self/net/route: "eth0\t00000000\t<gateway, hex, as stored>\t..." */
		snprintf(want_gw, sizeof(want_gw), "%08X", gw.s_addr);
		fd = open("/proc/self/net/route", O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, route, sizeof(route) - 1);
		if (n < 0)
			n = 0;
		route[n] = '\0';
		{
			char line[64];

			snprintf(line, sizeof(line), "eth0\t00000000\t%s", want_gw);
			if (!strstr(route, line))
				bad |= IN_NO_DEFAULT_ROUTE;
		}
		_exit(bad);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static bool inside_has(int netns_fd, const char *name)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (setns(netns_fd, CLONE_NEWNET) < 0)
			_exit(2);
		_exit(if_nametoindex(name) > 0 ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) < 2);
	return WEXITSTATUS(status) == 0;
}

static void add_second(void)
{
	char host[IFNAMSIZ], ip[INET_ADDRSTRLEN];
	struct in_addr a;
	int r;

	second_ns = tn_netns_new();
	snprintf(host, sizeof(host), "wtw%u", tn.id);
	snprintf(ip, sizeof(ip), "198.19.%u.3", tn.id % 256);
	inet_pton(AF_INET, ip, &a);
	r = net_veth_add(tn.br, second_ns, host, "eth0", a, &second);
	cr_assert_eq(r, 0, "second veth: %s", strerror(-r));
	have_second = true;
}

/* ---- tests -------------------------------------------------------------------------------- */

Test(bridge, setup_shows_on_the_node_and_inside_and_carries_traffic)
{
	struct net_bridge *again = NULL;
	char peer[INET6_ADDRSTRLEN], ifindex[16];
	const char *v;
	struct probe *p;
	int la, bits;

	tn_setup();

	/* The node side. */
	cr_assert_not_null(read_sys("/sys/class/net/%s/bridge/stp_state", tn.bridge_name),
			   "%s is not a bridge", tn.bridge_name);
	v = read_sys("/proc/sys/net/ipv4/conf/%s/forwarding", tn.bridge_name);
	cr_assert_str_eq(v, "0", "forwarding on the bridge is %s", v);
	v = read_sys("/sys/class/net/%s/flags", tn.bridge_name);
	cr_assert(v && (strtoul(v, NULL, 16) & IFF_UP), "bridge down");
	v = read_sys("/sys/class/net/%s/master/ifindex", tn.veth.name);
	snprintf(ifindex, sizeof(ifindex), "%d", net_bridge_ifindex(tn.br));
	cr_assert_str_eq(v, ifindex, "veth not a port of the bridge");
	v = read_sys("/sys/class/net/%s/brport/isolated", tn.veth.name);
	cr_assert_str_eq(v, "1", "port not isolated");
	v = read_sys("/sys/class/net/%s/flags", tn.veth.name);
	cr_assert(v && (strtoul(v, NULL, 16) & IFF_UP), "veth host end down");

	/* The inside. */
	bits = inside_state(tn.netns_fd, tn.sb_addr, tn.br_addr);
	cr_assert_eq(bits, 0, "inside the namespace: problems 0x%x", bits);

	/* Traffic reaches the node, from the sandbox's address. */
	la = tn_listen_tcp(TN_PORT_A);
	p = probe_start(tn.cg_fd, tn.netns_fd);
	cr_assert_eq(probe_do(p, PROBE_TCP_CONNECT, tn.br_ip, TN_PORT_A), 0);
	cr_assert(tn_accept(la, 1000, peer));
	cr_assert_str_eq(peer, tn.sb_ip);
	cr_assert_eq(probe_do(p, PROBE_ICMP_ECHO, tn.br_ip, 0), 0);
	close(la);

	/* A restarted daemon adopts the bridge rather than failing or making another, and puts
	 * forwarding back off. (A new bridge inherits conf/default/forwarding, 0 on most nodes, so
	 * only an adopted bridge with forwarding on shows that net_bridge_open turns it off. The
	 * probe is idle meanwhile: nothing crosses the bridge while it is on.) */
	write_sys("/proc/sys/net/ipv4/conf/%s/forwarding", tn.bridge_name, "1");
	cr_assert_str_eq(read_sys("/proc/sys/net/ipv4/conf/%s/forwarding", tn.bridge_name), "1");
	cr_assert_eq(net_bridge_open(net_bridge_config(tn.br), &again), 0);
	cr_assert_str_eq(read_sys("/proc/sys/net/ipv4/conf/%s/forwarding", tn.bridge_name), "0",
			 "adopted bridge still forwards");
	cr_assert_eq(net_bridge_ifindex(again), net_bridge_ifindex(tn.br));
	net_bridge_free(again);
	cr_assert_gt(if_nametoindex(tn.bridge_name), 0, "freeing a handle removed the bridge");
}

/* Isolated ports: the second sandbox's kernel never even sees the first's ARP, so the connect
 * gets no answer at all. Shared ports: it answers with a RST (ECONNREFUSED). Both reach the
 * node either way. */
static void sandbox_to_sandbox(bool shared)
{
	int la, r;
	struct probe *p;
	char peer[INET6_ADDRSTRLEN], ip3[INET_ADDRSTRLEN];

	tn.shared_ports = shared;
	tn_setup();
	add_second();
	snprintf(ip3, sizeof(ip3), "198.19.%u.3", tn.id % 256);
	la = tn_listen_tcp(TN_PORT_A);
	p = probe_start(tn.cg_fd, tn.netns_fd);
	cr_assert_eq(probe_do(p, PROBE_TCP_CONNECT, tn.br_ip, TN_PORT_A), 0);
	cr_assert(tn_accept(la, 1000, peer));

	r = probe_do(p, PROBE_TCP_CONNECT, ip3, TN_PORT_A);
	if (shared)
		cr_assert_eq(r, ECONNREFUSED, "shared ports: %s, want ECONNREFUSED", strerror(r));
	else
		cr_assert(r == EHOSTUNREACH || r == EINPROGRESS || r == ETIMEDOUT,
			  "isolated ports: the other sandbox answered (%s)", strerror(r));
	close(la);
}

Test(bridge, isolated_ports_keep_sandboxes_apart, .timeout = 60)
{
	sandbox_to_sandbox(false);
}

Test(bridge, shared_ports_let_sandboxes_meet)
{
	sandbox_to_sandbox(true);
}

Test(bridge, veth_remove_deletes_both_ends)
{
	struct timespec ts = { 0, 10000000 };
	int i;

	tn_setup();
	cr_assert(inside_has(tn.netns_fd, "eth0"));
	cr_assert_eq(net_veth_remove(&tn.veth), 0);
	tn.have_veth = false;
	cr_assert_eq(if_nametoindex(tn.veth.name), 0, "host end left");
	cr_assert_not(inside_has(tn.netns_fd, "eth0"), "peer left inside");
	cr_assert_eq(net_veth_remove(&tn.veth), 0, "second removal is not a no-op");

	/* A namespace that goes away takes its veth with it; removal then still succeeds. */
	add_second();
	second_ns = safe_close(second_ns);
	for (i = 0; i < 300 && if_nametoindex(second.name) > 0; i++)
		nanosleep(&ts, NULL);
	cr_assert_eq(if_nametoindex(second.name), 0, "veth outlived its namespace by 3 s");
	cr_assert_eq(net_veth_remove(&second), 0);
	have_second = false;
}

Test(bridge, bad_configs_and_names_are_refused_and_leave_nothing)
{
	struct net_bridge_config c;
	struct net_bridge *br = NULL;
	struct net_veth v;
	struct in_addr a;
	char host[IFNAMSIZ], ip[INET_ADDRSTRLEN];
	unsigned lo_index = if_nametoindex("lo");

	tn_setup();
	c = *net_bridge_config(tn.br);
	snprintf(c.name, sizeof(c.name), "lo");
	cr_assert_eq(net_bridge_open(&c, &br), -EEXIST, "lo adopted as a bridge");
	cr_assert_eq(if_nametoindex("lo"), lo_index, "lo touched");
	c = *net_bridge_config(tn.br);
	c.prefixlen = 31;
	cr_assert_eq(net_bridge_open(&c, &br), -EINVAL);
	c = *net_bridge_config(tn.br);
	c.addr.s_addr &= htonl(0xffffff00); /* the network address */
	cr_assert_eq(net_bridge_open(&c, &br), -EINVAL);
	cr_assert_null(br);

	snprintf(host, sizeof(host), "wtx%u", tn.id);
	snprintf(ip, sizeof(ip), "198.19.%u.9", tn.id % 256);
	inet_pton(AF_INET, ip, &a);
	cr_assert_eq(net_veth_add(tn.br, tn.netns_fd, "a/b", "eth1", a, &v), -EINVAL);
	cr_assert_eq(net_veth_add(tn.br, tn.netns_fd, "0123456789abcdef", "eth1", a, &v), -EINVAL);
	cr_assert_eq(net_veth_add(tn.br, tn.netns_fd, host, "eth1", tn.br_addr, &v), -EINVAL);
	inet_pton(AF_INET, "198.18.250.9", &a);
	cr_assert_eq(net_veth_add(tn.br, tn.netns_fd, host, "eth1", a, &v), -EINVAL,
		     "address outside the bridge's subnet");
	inet_pton(AF_INET, ip, &a);
	/* eth0 is taken inside: the kernel refuses the pair and nothing of it remains. */
	cr_assert_eq(net_veth_add(tn.br, tn.netns_fd, host, "eth0", a, &v), -EEXIST);
	cr_assert_eq(if_nametoindex(host), 0, "host end of a failed pair left behind");
	cr_assert_eq(net_veth_add(tn.br, tn.netns_fd, tn.veth.name, "eth1", a, &v), -EEXIST);
	cr_assert_not(inside_has(tn.netns_fd, "eth1"), "peer of a failed pair left inside");
}

Test(bridge, address_allocator_hands_out_each_address_once)
{
	struct net_bridge_config c;
	struct in_addr got[8], a;
	char ip[INET_ADDRSTRLEN];

	/* A /29 on its own bridge: .248 network, .249 bridge, .255 broadcast, .250-.254 free. */
	tn.id = (unsigned)getpid();
	net_bridge_config_default(&c);
	snprintf(c.name, sizeof(c.name), "wtb%u", tn.id);
	snprintf(tn.bridge_name, sizeof(tn.bridge_name), "%s", c.name);
	snprintf(ip, sizeof(ip), "198.19.%u.249", tn.id % 256);
	inet_pton(AF_INET, ip, &c.addr);
	c.prefixlen = 29;
	tn_skip_or_fail(net_bridge_open(&c, &tn.br), "net_bridge_open");

	for (int i = 0; i < 5; i++) {
		uint32_t host;

		cr_assert_eq(net_bridge_addr_alloc(tn.br, &got[i]), 0);
		host = ntohl(got[i].s_addr) & 0xff;
		cr_assert(host >= 250 && host <= 254, "handed out .%u", host);
		for (int j = 0; j < i; j++)
			cr_assert_neq(got[i].s_addr, got[j].s_addr, "handed out twice");
	}
	cr_assert_eq(net_bridge_addr_alloc(tn.br, &a), -ENOSPC);
	net_bridge_addr_release(tn.br, got[2]);
	cr_assert_eq(net_bridge_addr_alloc(tn.br, &a), 0);
	cr_assert_eq(a.s_addr, got[2].s_addr);
	cr_assert_eq(net_bridge_addr_reserve(tn.br, got[2]), -EEXIST);
	net_bridge_addr_release(tn.br, got[2]);
	cr_assert_eq(net_bridge_addr_reserve(tn.br, got[2]), 0);
	cr_assert_eq(net_bridge_addr_reserve(tn.br, c.addr), -EEXIST, "bridge address free");
	net_bridge_addr_release(tn.br, c.addr);
	cr_assert_eq(net_bridge_addr_reserve(tn.br, c.addr), -EEXIST, "bridge address released");
	a.s_addr = c.addr.s_addr & htonl(0xfffffff8);
	cr_assert_eq(net_bridge_addr_reserve(tn.br, a), -EINVAL, "network address");
	a.s_addr = c.addr.s_addr | htonl(7);
	cr_assert_eq(net_bridge_addr_reserve(tn.br, a), -EINVAL, "broadcast address");
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The node bridge and the sandboxes' veth pairs, built with rtnetlink messages (what `ip link
 * add`, `ip addr add` and `ip route add` send), never by running `ip`.
 *
 * Configuring the inside of a sandbox's network namespace needs a netlink socket that lives
 * there: a socket belongs to the namespace it was created in. nl_open_in() enters the namespace
 * with setns() on the calling thread only (CLONE_NEWNET is per thread), creates the socket and
 * returns at once; the socket keeps working from the node's namespace. */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "bridge.h"
#include "log.h"
#include "macro.h"

#ifndef IPV4_DEVCONF_FORWARDING
#define IPV4_DEVCONF_FORWARDING 1
#endif

struct net_bridge {
	struct net_bridge_config config;
	int ifindex;
	uint32_t network;  /* host order */
	uint32_t n_hosts;  /* addresses in the subnet, network and broadcast included */
	pthread_mutex_t lock;
	uint32_t next;     /* next-fit hint */
	uint8_t *used;     /* bitmap, one bit per address of the subnet */
};

/* ---- rtnetlink ---------------------------------------------------------------------------- */

/* Requests here are small; 1 KiB holds the largest (a veth pair with its peer). */
#define NL_REQ_SIZE 1024

struct nl_req {
	struct nlmsghdr h;
	char buf[NL_REQ_SIZE - sizeof(struct nlmsghdr)];
};

static void *nl_tail(struct nl_req *req)
{
	return (char *)req + NLMSG_ALIGN(req->h.nlmsg_len);
}

/* Appends the fixed header (ifinfomsg, ifaddrmsg, rtmsg) right after the nlmsghdr. */
static void *nl_init(struct nl_req *req, uint16_t type, uint16_t flags, size_t hdr_len)
{
	memset(req, 0, sizeof(*req));
	req->h.nlmsg_type = type;
	req->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	req->h.nlmsg_len = NLMSG_LENGTH(hdr_len);
	return NLMSG_DATA(&req->h);
}

static struct rtattr *nl_put(struct nl_req *req, unsigned short type, const void *data,
			     size_t len)
{
	struct rtattr *a = nl_tail(req);
	size_t end = NLMSG_ALIGN(req->h.nlmsg_len) + RTA_SPACE(len);

	/* Every message built here has a fixed, small shape: overflowing is a bug. */
	assert(end <= sizeof(*req));
	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	req->h.nlmsg_len = end;
	return a;
}

static void nl_put_str(struct nl_req *req, unsigned short type, const char *s)
{
	nl_put(req, type, s, strlen(s) + 1);
}

static void nl_put_u32(struct nl_req *req, unsigned short type, uint32_t v)
{
	nl_put(req, type, &v, sizeof(v));
}

static struct rtattr *nl_nest(struct nl_req *req, unsigned short type)
{
	return nl_put(req, type, NULL, 0);
}

static void nl_nest_end(struct nl_req *req, struct rtattr *nest)
{
	nest->rta_len = (unsigned short)((char *)nl_tail(req) - (char *)nest);
}

static int nl_open(void)
{
	/* The kernel answers rtnetlink requests synchronously; the timeout only keeps a lost
	 * answer from hanging the caller for ever. */
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* A netlink socket in the network namespace netns_fd, created from the calling thread. */
static int nl_open_in(int netns_fd)
{
	_cleanup_close_ int self = -EBADF;
	int fd;

	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	if (setns(netns_fd, CLONE_NEWNET) < 0)
		return -errno;
	fd = nl_open();
	/* Going back to the namespace we hold a reference to cannot fail short of a kernel bug.
	 * If it did, this thread would open every later socket inside a sandbox: stop rather
	 * than carry on there. */
	if (setns(self, CLONE_NEWNET) < 0)
		abort();
	return fd;
}

/* Sends one request and waits for its acknowledgement. A reply message other than the ack
 * (RTM_GETLINK's answer) is copied to `reply` when given. Returns 0 or the kernel's -errno. */
static int nl_call(int fd, struct nl_req *req, void *reply, size_t reply_size)
{
	static uint32_t seq_counter;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	uint32_t seq = __atomic_add_fetch(&seq_counter, 1, __ATOMIC_RELAXED);
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));

	req->h.nlmsg_seq = seq;
	if (sendto(fd, req, req->h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EBADMSG;
				return e->error; /* 0: the ack */
			}
			if (reply && h->nlmsg_len <= reply_size)
				memcpy(reply, h, h->nlmsg_len);
		}
	}
}

struct link_info {
	int ifindex;
	char kind[16];
};

/* Looks a link up by name: -ENODEV if there is none. */
static int link_get(int fd, const char *name, struct link_info *ret)
{
	char reply[8192] __attribute__((aligned(NLMSG_ALIGNTO))) = {};
	struct nlmsghdr *h = (struct nlmsghdr *)reply;
	struct link_info li = {};
	struct nl_req req;
	struct ifinfomsg *ifi;
	struct rtattr *a;
	int len, r;

	ifi = nl_init(&req, RTM_GETLINK, 0, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	nl_put_str(&req, IFLA_IFNAME, name);
	r = nl_call(fd, &req, reply, sizeof(reply));
	if (r < 0)
		return r;
	if (h->nlmsg_type != RTM_NEWLINK)
		return -EBADMSG;

	ifi = NLMSG_DATA(h);
	li.ifindex = ifi->ifi_index;
	len = (int)IFLA_PAYLOAD(h);
	for (a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		struct rtattr *b;
		int blen;

		if ((a->rta_type & NLA_TYPE_MASK) != IFLA_LINKINFO)
			continue;
		blen = (int)RTA_PAYLOAD(a);
		for (b = RTA_DATA(a); RTA_OK(b, blen); b = RTA_NEXT(b, blen))
			if ((b->rta_type & NLA_TYPE_MASK) == IFLA_INFO_KIND)
				snprintf(li.kind, sizeof(li.kind), "%.*s", (int)RTA_PAYLOAD(b),
					 (const char *)RTA_DATA(b));
	}
	*ret = li;
	return 0;
}

static int link_set_up(int fd, int ifindex)
{
	struct nl_req req;
	struct ifinfomsg *ifi = nl_init(&req, RTM_NEWLINK, 0, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	return nl_call(fd, &req, NULL, 0);
}

static int link_del(int fd, int ifindex)
{
	struct nl_req req;
	struct ifinfomsg *ifi = nl_init(&req, RTM_DELLINK, 0, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return nl_call(fd, &req, NULL, 0);
}

static int bridge_create(int fd, const char *name)
{
	struct nl_req req;
	struct ifinfomsg *ifi = nl_init(&req, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, sizeof(*ifi));
	struct rtattr *info;

	ifi->ifi_family = AF_UNSPEC;
	nl_put_str(&req, IFLA_IFNAME, name);
	info = nl_nest(&req, IFLA_LINKINFO);
	nl_put_str(&req, IFLA_INFO_KIND, "bridge");
	nl_nest_end(&req, info);
	return nl_call(fd, &req, NULL, 0);
}

/* net.ipv4.conf.<bridge>.forwarding = 0: packets a sandbox sends to an address that is not the
 * node's are dropped instead of routed on, whatever the node's other interfaces do. (Writing
 * net.ipv4.ip_forward later resets every interface, this one included; the allowlist still
 * refuses such destinations unless a rule names them.) */
static int bridge_forwarding_off(int fd, int ifindex)
{
	struct nl_req req;
	struct ifinfomsg *ifi = nl_init(&req, RTM_NEWLINK, 0, sizeof(*ifi));
	struct rtattr *spec, *inet, *conf;

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	spec = nl_nest(&req, IFLA_AF_SPEC);
	inet = nl_nest(&req, AF_INET);
	conf = nl_nest(&req, IFLA_INET_CONF);
	nl_put_u32(&req, IPV4_DEVCONF_FORWARDING, 0);
	nl_nest_end(&req, conf);
	nl_nest_end(&req, inet);
	nl_nest_end(&req, spec);
	return nl_call(fd, &req, NULL, 0);
}

/* `bridge link set dev X isolated on`: no frames between two isolated ports. */
static int port_isolate(int fd, int ifindex)
{
	struct nl_req req;
	struct ifinfomsg *ifi = nl_init(&req, RTM_SETLINK, 0, sizeof(*ifi));
	struct rtattr *prot;
	uint8_t on = 1;

	ifi->ifi_family = AF_BRIDGE;
	ifi->ifi_index = ifindex;
	/* Without NLA_F_NESTED the bridge reads IFLA_PROTINFO as the old one-byte port state. */
	prot = nl_nest(&req, IFLA_PROTINFO | NLA_F_NESTED);
	nl_put(&req, IFLA_BRPORT_ISOLATED, &on, sizeof(on));
	nl_nest_end(&req, prot);
	return nl_call(fd, &req, NULL, 0);
}

static int addr_add(int fd, int ifindex, struct in_addr addr, unsigned prefixlen)
{
	struct nl_req req;
	struct ifaddrmsg *ifa = nl_init(&req, RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE,
					sizeof(*ifa));
	struct in_addr bcast = {
		.s_addr = addr.s_addr | htonl(prefixlen >= 32 ? 0 : UINT32_MAX >> prefixlen),
	};

	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = (unsigned char)prefixlen;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (unsigned)ifindex;
	nl_put(&req, IFA_LOCAL, &addr, sizeof(addr));
	nl_put(&req, IFA_ADDRESS, &addr, sizeof(addr));
	nl_put(&req, IFA_BROADCAST, &bcast, sizeof(bcast));
	return nl_call(fd, &req, NULL, 0);
}

static int route_default(int fd, int ifindex, struct in_addr gw)
{
	struct nl_req req;
	struct rtmsg *rt = nl_init(&req, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, sizeof(*rt));

	rt->rtm_family = AF_INET;
	rt->rtm_dst_len = 0;
	rt->rtm_table = RT_TABLE_MAIN;
	rt->rtm_protocol = RTPROT_BOOT;
	rt->rtm_scope = RT_SCOPE_UNIVERSE;
	rt->rtm_type = RTN_UNICAST;
	nl_put(&req, RTA_GATEWAY, &gw, sizeof(gw));
	nl_put_u32(&req, RTA_OIF, (uint32_t)ifindex);
	return nl_call(fd, &req, NULL, 0);
}

/* `ip link add HOST master BRIDGE type veth peer name PEER netns NETNS`: the peer is born in
 * the sandbox's namespace, so it is never visible on the node. */
static int veth_create(int fd, const char *host, const char *peer, int netns_fd, int master)
{
	struct nl_req req;
	struct ifinfomsg *ifi = nl_init(&req, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, sizeof(*ifi));
	struct ifinfomsg peer_ifi = { .ifi_family = AF_UNSPEC };
	struct rtattr *info, *data, *p;

	ifi->ifi_family = AF_UNSPEC;
	nl_put_str(&req, IFLA_IFNAME, host);
	nl_put_u32(&req, IFLA_MASTER, (uint32_t)master);
	info = nl_nest(&req, IFLA_LINKINFO);
	nl_put_str(&req, IFLA_INFO_KIND, "veth");
	data = nl_nest(&req, IFLA_INFO_DATA);
	p = nl_put(&req, VETH_INFO_PEER, &peer_ifi, sizeof(peer_ifi));
	nl_put_str(&req, IFLA_IFNAME, peer);
	nl_put_u32(&req, IFLA_NET_NS_FD, (uint32_t)netns_fd);
	nl_nest_end(&req, p);
	nl_nest_end(&req, data);
	nl_nest_end(&req, info);
	return nl_call(fd, &req, NULL, 0);
}

/* ---- bridge ------------------------------------------------------------------------------- */

void net_bridge_config_default(struct net_bridge_config *ret)
{
	*ret = (struct net_bridge_config){
		.name = NET_BRIDGE_DEFAULT_NAME,
		.prefixlen = NET_BRIDGE_DEFAULT_PREFIXLEN,
		.isolate_ports = true,
	};
	inet_pton(AF_INET, NET_BRIDGE_DEFAULT_ADDR, &ret->addr);
}

static bool ifname_valid(const char *name)
{
	size_t len = name ? strnlen(name, IFNAMSIZ) : 0;

	if (len == 0 || len >= IFNAMSIZ)
		return false;
	for (size_t i = 0; i < len; i++)
		if (name[i] == '/' || name[i] == ':' || name[i] <= ' ' || name[i] > '~')
			return false;
	return strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

static uint32_t host_mask(unsigned prefixlen)
{
	return UINT32_MAX >> prefixlen;
}

/* Index of addr in the subnet, or -EINVAL for the network or broadcast address or outside. */
static int64_t subnet_index(const struct net_bridge *br, struct in_addr addr)
{
	uint32_t a = ntohl(addr.s_addr), i;

	if ((a & ~host_mask(br->config.prefixlen)) != br->network)
		return -EINVAL;
	i = a & host_mask(br->config.prefixlen);
	if (i == 0 || i == br->n_hosts - 1)
		return -EINVAL;
	return i;
}

static bool bit_get(const uint8_t *m, uint32_t i)
{
	return m[i / 8] & (1u << (i % 8));
}

static void bit_set(uint8_t *m, uint32_t i, bool v)
{
	if (v)
		m[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		m[i / 8] &= (uint8_t)~(1u << (i % 8));
}

int net_bridge_open(const struct net_bridge_config *config, struct net_bridge **ret)
{
	_cleanup_free_ struct net_bridge *br = NULL;
	_cleanup_close_ int fd = -EBADF;
	struct link_info li;
	bool created = false;
	int64_t self;
	int r;

	assert(config && ret);
	if (!ifname_valid(config->name) || config->prefixlen < 12 || config->prefixlen > 30)
		return -EINVAL;

	br = calloc(1, sizeof(*br));
	if (!br)
		return -ENOMEM;
	br->config = *config;
	br->network = ntohl(config->addr.s_addr) & ~host_mask(config->prefixlen);
	br->n_hosts = host_mask(config->prefixlen) + 1;
	self = subnet_index(br, config->addr);
	if (self < 0)
		return -EINVAL;

	fd = nl_open();
	if (fd < 0)
		return fd;
	r = bridge_create(fd, config->name);
	if (r == 0)
		created = true;
	else if (r != -EEXIST)
		return log_debug_errno(r, "create bridge %s", config->name);
	r = link_get(fd, config->name, &li);
	if (r < 0)
		goto fail;
	if (strcmp(li.kind, "bridge") != 0) {
		r = -EEXIST;
		goto fail;
	}
	br->ifindex = li.ifindex;

	r = addr_add(fd, br->ifindex, config->addr, config->prefixlen);
	if (r < 0)
		goto fail;
	r = bridge_forwarding_off(fd, br->ifindex);
	if (r < 0)
		goto fail;
	r = link_set_up(fd, br->ifindex);
	if (r < 0)
		goto fail;

	br->used = calloc(br->n_hosts / 8 + 1, 1);
	if (!br->used) {
		r = -ENOMEM;
		goto fail;
	}
	bit_set(br->used, (uint32_t)self, true);
	br->next = 1;
	pthread_mutex_init(&br->lock, NULL);
	*ret = TAKE_PTR(br);
	return 0;

fail:
	if (created)
		(void)link_del(fd, br->ifindex ? br->ifindex : (int)if_nametoindex(config->name));
	return log_debug_errno(r, "set up bridge %s", config->name);
}

struct net_bridge *net_bridge_free(struct net_bridge *br)
{
	if (!br)
		return NULL;
	pthread_mutex_destroy(&br->lock);
	free(br->used);
	free(br);
	return NULL;
}

int net_bridge_remove(struct net_bridge *br)
{
	_cleanup_close_ int fd = nl_open();
	int r;

	if (fd < 0)
		return fd;
	r = link_del(fd, br->ifindex);
	return r == -ENODEV ? 0 : r;
}

int net_bridge_ifindex(const struct net_bridge *br)
{
	return br->ifindex;
}

const struct net_bridge_config *net_bridge_config(const struct net_bridge *br)
{
	return &br->config;
}

int net_bridge_addr_alloc(struct net_bridge *br, struct in_addr *ret)
{
	int r = -ENOSPC;

	pthread_mutex_lock(&br->lock);
	/* Next fit: a released address is reused last, so a late packet for a deleted sandbox
	 * is unlikely to reach its successor. */
	for (uint32_t k = 0; k < br->n_hosts; k++) {
		uint32_t i = (br->next + k) % br->n_hosts;

		if (i == 0 || i == br->n_hosts - 1 || bit_get(br->used, i))
			continue;
		bit_set(br->used, i, true);
		br->next = i + 1;
		ret->s_addr = htonl(br->network | i);
		r = 0;
		break;
	}
	pthread_mutex_unlock(&br->lock);
	return r;
}

int net_bridge_addr_reserve(struct net_bridge *br, struct in_addr addr)
{
	int64_t i = subnet_index(br, addr);
	int r = 0;

	if (i < 0)
		return (int)i;
	pthread_mutex_lock(&br->lock);
	if (bit_get(br->used, (uint32_t)i))
		r = -EEXIST;
	else
		bit_set(br->used, (uint32_t)i, true);
	pthread_mutex_unlock(&br->lock);
	return r;
}

void net_bridge_addr_release(struct net_bridge *br, struct in_addr addr)
{
	int64_t i = subnet_index(br, addr);

	/* The bridge's own address stays taken. */
	if (i < 0 || addr.s_addr == br->config.addr.s_addr)
		return;
	pthread_mutex_lock(&br->lock);
	bit_set(br->used, (uint32_t)i, false);
	pthread_mutex_unlock(&br->lock);
}

/* ---- veth --------------------------------------------------------------------------------- */

/* The inside of the namespace: address, links up, default route via the bridge. */
static int veth_configure_inside(const struct net_bridge *br, int netns_fd, const char *peer,
				 struct in_addr addr)
{
	_cleanup_close_ int fd = -EBADF;
	struct link_info li, lo;
	int r;

	fd = nl_open_in(netns_fd);
	if (fd < 0)
		return fd;
	r = link_get(fd, peer, &li);
	if (r < 0)
		return r;
	r = addr_add(fd, li.ifindex, addr, br->config.prefixlen);
	if (r < 0)
		return r;
	r = link_set_up(fd, li.ifindex);
	if (r < 0)
		return r;
	r = link_get(fd, "lo", &lo);
	if (r < 0)
		return r;
	r = link_set_up(fd, lo.ifindex);
	if (r < 0)
		return r;
	return route_default(fd, li.ifindex, br->config.addr);
}

int net_veth_add(struct net_bridge *br, int netns_fd, const char *host_name,
		 const char *peer_name, struct in_addr addr, struct net_veth *ret)
{
	_cleanup_close_ int fd = -EBADF;
	struct net_veth v = { .addr = addr };
	struct link_info li;
	int r;

	assert(br && ret);
	if (!ifname_valid(host_name) || !ifname_valid(peer_name))
		return -EINVAL;
	if (subnet_index(br, addr) < 0 || addr.s_addr == br->config.addr.s_addr)
		return -EINVAL;
	snprintf(v.name, sizeof(v.name), "%s", host_name);

	fd = nl_open();
	if (fd < 0)
		return fd;
	r = veth_create(fd, host_name, peer_name, netns_fd, br->ifindex);
	if (r < 0)
		return log_debug_errno(r, "create veth %s", host_name);
	r = link_get(fd, host_name, &li);
	if (r < 0)
		goto fail_name;
	v.ifindex = li.ifindex;

	if (br->config.isolate_ports) {
		r = port_isolate(fd, v.ifindex);
		if (r < 0)
			goto fail;
	}
	r = link_set_up(fd, v.ifindex);
	if (r < 0)
		goto fail;
	r = veth_configure_inside(br, netns_fd, peer_name, addr);
	if (r < 0)
		goto fail;
	*ret = v;
	return 0;

fail_name:
	v.ifindex = (int)if_nametoindex(host_name);
	if (v.ifindex <= 0)
		return r;
fail:
	(void)link_del(fd, v.ifindex);
	return log_debug_errno(r, "set up veth %s", host_name);
}

int net_veth_remove(const struct net_veth *veth)
{
	_cleanup_close_ int fd = -EBADF;
	int r;

	struct link_info li;

	if (veth->ifindex <= 0)
		return 0;
	fd = nl_open();
	if (fd < 0)
		return fd;
	/* Check that the name still means our link: once the namespace is gone, so is the pair,
	 * and its index or name may since belong to another link. */
	r = link_get(fd, veth->name, &li);
	if (r == -ENODEV || (r == 0 && li.ifindex != veth->ifindex))
		return 0;
	if (r < 0)
		return r;
	r = link_del(fd, veth->ifindex);
	return r == -ENODEV ? 0 : r;
}

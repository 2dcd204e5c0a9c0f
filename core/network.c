/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "allowlist.h"
#include "bridge.h"
#include "daemon.h"
#include "denial.h"
#include "log.h"
#include "network.h"
#include "sandbox.h"

void network_node_open(struct daemon *d)
{
	struct net_bridge_config cfg;
	int r;

	r = allowlist_open(&d->allowlist);
	if (r < 0) {
		snprintf(d->net_why, sizeof(d->net_why), "loading the eBPF allowlist: %s",
			 strerror(-r));
		log_warn("network mode allowlist unavailable: %s", d->net_why);
		return;
	}
	net_bridge_config_default(&cfg);
	r = net_bridge_open(&cfg, &d->bridge);
	if (r < 0) {
		snprintf(d->net_why, sizeof(d->net_why), "setting up bridge %s: %s", cfg.name,
			 strerror(-r));
		log_warn("network mode allowlist unavailable: %s", d->net_why);
		d->allowlist = allowlist_free(d->allowlist);
	}
}

void network_node_close(struct daemon *d)
{
	d->allowlist = allowlist_free(d->allowlist);
	/* The bridge stays: sandboxes of a restarted daemon plug into the same one. */
	d->bridge = net_bridge_free(d->bridge);
}

json_t *network_info(const struct daemon *d)
{
	uint64_t denied = 0, lost = 0;

	if (d->allowlist)
		allowlist_stats(d->allowlist, &denied, &lost);
	json_t *modes = json_pack("[s]", "none");

	if (d->allowlist)
		json_array_append_new(modes, json_string("allowlist"));
	if (d->allow_host_network)
		json_array_append_new(modes, json_string("host"));
	return json_pack("{s:o,s:b,s:s?,s:I,s:I}", "modes", modes, "allowlist",
			 d->allowlist != NULL, "allowlist_unavailable",
			 d->allowlist ? NULL : d->net_why, "denied", (json_int_t)denied,
			 "denials_lost", (json_int_t)lost);
}

int network_check(const struct daemon *d, const struct net_spec *n, char err[SPEC_ERR_MAX])
{
	if (n->mode == NET_MODE_ALLOWLIST && !d->allowlist) {
		snprintf(err, SPEC_ERR_MAX, "network mode allowlist is unavailable on this node: %s",
			 d->net_why);
		return -EOPNOTSUPP;
	}
	if (n->mode == NET_MODE_HOST && !d->allow_host_network) {
		snprintf(err, SPEC_ERR_MAX, "network mode host is refused on this node: start "
					    "warrend with --allow-host-network to permit it");
		return -EPERM;
	}
	return 0;
}

/* The sandbox's name in denial records: its 12 hex digits as a number. */
static uint64_t sandbox_key(const char *id)
{
	return strtoull(id, NULL, 16);
}

int network_prepare(struct sandbox *s)
{
	const struct net_spec *n = &s->spec.net;

	if (n->mode != NET_MODE_ALLOWLIST)
		return 0;
	return allowlist_attach(s->loop->d->allowlist, s->cgroup_fd, sandbox_key(s->id), n->rules,
				n->n_rules, &s->allowlist);
}

int network_attach(struct sandbox *s, int netns)
{
	struct daemon *d = s->loop->d;
	struct in_addr addr;
	char host[IFNAMSIZ];
	int r;

	if (s->spec.net.mode != NET_MODE_ALLOWLIST)
		return 0;
	r = net_bridge_addr_alloc(d->bridge, &addr);
	if (r < 0)
		return r;
	/* "w" + the id: unique per sandbox, within IFNAMSIZ. */
	snprintf(host, sizeof(host), "w%s", s->id);
	r = net_veth_add(d->bridge, netns, host, "eth0", addr, &s->veth);
	if (r < 0) {
		net_bridge_addr_release(d->bridge, addr);
		return r;
	}
	s->has_veth = true;
	return 0;
}

void network_release(struct sandbox *s)
{
	struct daemon *d = s->loop->d;

	if (s->has_veth) {
		/* The namespace's death removes the pair too; this makes it certain and prompt. */
		(void)net_veth_remove(&s->veth);
		net_bridge_addr_release(d->bridge, s->veth.addr);
		s->has_veth = false;
	}
	s->allowlist = allowlist_detach(s->allowlist);
}

int network_update(struct sandbox *s, struct net_spec *n, char err[SPEC_ERR_MAX])
{
	int r;

	if (s->spec.net.mode != NET_MODE_ALLOWLIST || n->mode != NET_MODE_ALLOWLIST) {
		snprintf(err, SPEC_ERR_MAX, "only the rules of an allowlist sandbox can change "
					    "while it runs; its mode is fixed at create");
		return -EINVAL;
	}
	if (n->dns) {
		snprintf(err, SPEC_ERR_MAX, "network.dns is fixed at create: its resolv.conf is "
					    "written before the command starts");
		return -EINVAL;
	}
	r = allowlist_update(s->allowlist, n->rules, n->n_rules);
	if (r < 0) {
		snprintf(err, SPEC_ERR_MAX, "updating the allowlist: %s", strerror(-r));
		return r;
	}
	/* The resolvers stay as they were. */
	n->dns = TAKE_PTR(s->spec.net.dns);
	n->resolv_conf = TAKE_PTR(s->spec.net.resolv_conf);
	net_spec_done(&s->spec.net);
	s->spec.net = *n;
	memset(n, 0, sizeof(*n));
	return 0;
}

json_t *network_to_json(const struct sandbox *s)
{
	char addr[INET_ADDRSTRLEN] = "";
	const struct net_spec *n = &s->spec.net;

	if (s->has_veth)
		inet_ntop(AF_INET, &s->veth.addr, addr, sizeof(addr));
	return json_pack("{s:s,s:s?,s:O?,s:O?}", "mode", net_mode_to_string(n->mode), "address",
			 s->has_veth ? addr : NULL, "allow", n->allow, "dns", n->dns);
}

/* ---- denials from the ring buffer -------------------------------------------------------- */

static struct io_op ring_op;

static int on_event(const struct allowlist_event *ev, void *userdata)
{
	char id[16] = "", addr[INET6_ADDRSTRLEN], action[96];

	if (ev->sandbox_key)
		snprintf(id, sizeof(id), "%012llx", (unsigned long long)(ev->sandbox_key & 0xffffffffffffull));
	inet_ntop(ev->family == ALLOWLIST_AF_INET ? AF_INET : AF_INET6, ev->daddr, addr,
		  sizeof(addr));
	snprintf(action, sizeof(action), "%s %s:%u/%s",
		 ev->hook == ALLOWLIST_HOOK_EGRESS ? "send" : "connect", addr, ev->dport,
		 ev->proto == IPPROTO_TCP ? "tcp" : ev->proto == IPPROTO_UDP ? "udp" :
		 ev->proto == IPPROTO_ICMP || ev->proto == IPPROTO_ICMPV6 ? "icmp" : "ip");
	denial_record(id[0] ? id : NULL, DENIAL_NETWORK, action,
		      allowlist_hook_to_string(ev->hook));
	return 0;
}

static void on_ring(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	if (res > 0)
		(void)allowlist_consume(l->d->allowlist, on_event, NULL);
	if (!(flags & IORING_CQE_F_MORE) && !l->draining && l->d->allowlist)
		network_denials_start(l);
}

void network_denials_start(struct loop *l)
{
	if (!l->d->allowlist)
		return;
	io_op_init(&ring_op, on_ring);
	io_uring_prep_poll_multishot(loop_sqe(l, &ring_op), allowlist_ring_fd(l->d->allowlist),
				     POLLIN);
}

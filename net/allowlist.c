/* SPDX-License-Identifier: Apache-2.0 */
/* Loader of the network allowlist (bpf/allowlist.bpf.c).
 *
 * Design. One program set and one set of maps per node, loaded once by allowlist_open(). Each
 * sandbox gets its own *attachment* of those same programs: five bpf_links on its cgroup2
 * directory (connect4/6, sendmsg4/6, cgroup_skb egress). The programs find the sandbox by cgroup
 * id — bpf_get_current_cgroup_id() in the address hooks, bpf_skb_cgroup_id() in egress — in the
 * `cgroups` hash map, which gives the sandbox's current ruleset id; the destination is then
 * looked up in the node-wide `rules` LPM trie under (ruleset, family, address).
 *
 * Why this shape:
 * - Loading programs per sandbox would cost a verifier run (milliseconds) and kernel memory per
 *   sandbox; a link costs one syscall. Attachment per cgroup (rather than one program on the
 *   parent cgroup) keeps sandboxes outside `allowlist` mode untouched and lets detach be "close
 *   five links".
 * - bpf_links, not legacy BPF_PROG_ATTACH: a link detaches exactly the program it attached and
 *   goes away with its fd, so nothing is left attached if the daemon dies and a restarted
 *   daemon never has to find and remove stale programs. The price: if the daemon dies, its
 *   sandboxes' egress is no longer filtered, so it must not leave them running (cgroup.kill
 *   on stop, and at start for sandboxes a crashed daemon left behind). Even unfiltered they
 *   reach only the node (bridge.c: no NAT, no forwarding). Link fds are O_CLOEXEC, but a
 *   forked child that never execs holds copies and keeps the programs attached until it exits.
 * - A live update never mutates the rules a program may be reading: it writes the new rules
 *   under a fresh ruleset id, swaps the id in the `cgroups` map with one update (atomic for a
 *   reader), then deletes the old entries.
 * - A cgroup below the sandbox's directory has no `cgroups` entry and is denied everything:
 *   a sandbox that can create cgroups cannot escape its rules that way.
 * - The trie returns only the longest matching prefix, so each prefix's value also carries the
 *   port entries of every shorter rule that contains it (built below).
 *
 * Threads: allowlist_attach/update/detach touch only BPF maps (safe from any thread), an atomic
 * counter and the sandbox handle, which its caller owns. allowlist_consume is for one thread.
 * Library code: nothing is logged above debug; errors are negative errnos. */
#include <arpa/inet.h>
#include <assert.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "allowlist.h"
#include "allowlist.skel.h"
#include "log.h"
#include "macro.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

struct allowlist {
	struct allowlist_bpf *skel;
	struct ring_buffer *rb;
	uint32_t next_ruleset; /* atomic */
	int n_sandboxes;       /* atomic; must be 0 at allowlist_free() */
	/* valid during allowlist_consume() only */
	allowlist_denial_fn fn;
	void *userdata;
	int n_consumed;
};

/* One ruleset as written into the trie: the keys are kept to delete them later. */
struct ruleset {
	uint32_t id;
	struct allowlist_lpm_key *keys;
	size_t n;
};

struct allowlist_sandbox {
	struct allowlist *al;
	uint64_t cgroup_id;
	uint64_t sandbox_key;
	struct bpf_link *links[_ALLOWLIST_HOOK_MAX];
	struct ruleset rules;
};

static const char *const proto_table[_ALLOWLIST_PROTO_MAX] = {
	[ALLOWLIST_PROTO_ANY] = "any",
	[ALLOWLIST_PROTO_TCP] = "tcp",
	[ALLOWLIST_PROTO_UDP] = "udp",
	[ALLOWLIST_PROTO_ICMP] = "icmp",
};

static const uint8_t proto_number[_ALLOWLIST_PROTO_MAX] = {
	[ALLOWLIST_PROTO_ANY] = 0,
	[ALLOWLIST_PROTO_TCP] = IPPROTO_TCP,
	[ALLOWLIST_PROTO_UDP] = IPPROTO_UDP,
	[ALLOWLIST_PROTO_ICMP] = IPPROTO_ICMP,
};

static const char *const hook_table[_ALLOWLIST_HOOK_MAX] = {
	[ALLOWLIST_HOOK_CONNECT4] = "connect4",
	[ALLOWLIST_HOOK_CONNECT6] = "connect6",
	[ALLOWLIST_HOOK_SENDMSG4] = "sendmsg4",
	[ALLOWLIST_HOOK_SENDMSG6] = "sendmsg6",
	[ALLOWLIST_HOOK_EGRESS] = "egress",
};

const char *allowlist_proto_to_string(enum allowlist_proto p)
{
	return p >= 0 && p < _ALLOWLIST_PROTO_MAX ? proto_table[p] : NULL;
}

int allowlist_proto_from_string(const char *s)
{
	for (int i = 0; s && i < _ALLOWLIST_PROTO_MAX; i++)
		if (strcmp(s, proto_table[i]) == 0)
			return i;
	return -EINVAL;
}

const char *allowlist_hook_to_string(enum allowlist_hook h)
{
	return h >= 0 && h < _ALLOWLIST_HOOK_MAX ? hook_table[h] : NULL;
}

/* ---- rules -------------------------------------------------------------------------------- */

static unsigned addr_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

/* True if the first `bits` bits of a and b agree. */
static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a[whole] ^ b[whole]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static bool host_bits_zero(const uint8_t *a, unsigned len, unsigned bits)
{
	for (unsigned i = bits; i < len * 8; i++)
		if (a[i / 8] & (0x80 >> (i % 8)))
			return false;
	return true;
}

static int rule_validate(const struct allowlist_rule *r)
{
	if (r->family != AF_INET && r->family != AF_INET6)
		return -EINVAL;
	if (r->prefixlen > addr_bits(r->family))
		return -EINVAL;
	if (!host_bits_zero((const uint8_t *)&r->addr, addr_bits(r->family) / 8, r->prefixlen))
		return -EINVAL;
	if (r->proto < 0 || r->proto >= _ALLOWLIST_PROTO_MAX)
		return -EINVAL;
	if (r->port_lo > r->port_hi)
		return -EINVAL;
	if (r->proto == ALLOWLIST_PROTO_ICMP && (r->port_lo != 0 || r->port_hi != 65535))
		return -EINVAL;
	return 0;
}

static int parse_u32(const char *s, unsigned max, unsigned *ret)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

int allowlist_rule_parse(const char *proto, const char *cidr, const char *ports,
			 struct allowlist_rule *ret)
{
	struct allowlist_rule r = {};
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash;
	unsigned lo, hi;
	int p;

	p = allowlist_proto_from_string(proto ? proto : "any");
	if (p < 0)
		return p;
	r.proto = p;

	if (!cidr || strlen(cidr) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, cidr);
	slash = strchr(buf, '/');
	if (slash)
		buf[slash - buf] = '\0';
	if (inet_pton(AF_INET, buf, &r.addr.in) == 1)
		r.family = AF_INET;
	else if (inet_pton(AF_INET6, buf, &r.addr.in6) == 1)
		r.family = AF_INET6;
	else
		return -EINVAL;
	r.prefixlen = addr_bits(r.family);
	if (slash && parse_u32(slash + 1, addr_bits(r.family), &r.prefixlen) < 0)
		return -EINVAL;

	if (!ports || !*ports || strcmp(ports, "any") == 0) {
		lo = 0;
		hi = 65535;
	} else {
		const char *dash = strchr(ports, '-');
		char a[8];

		if (dash) {
			if ((size_t)(dash - ports) >= sizeof(a))
				return -EINVAL;
			memcpy(a, ports, dash - ports);
			a[dash - ports] = '\0';
			if (parse_u32(a, 65535, &lo) < 0 || parse_u32(dash + 1, 65535, &hi) < 0)
				return -EINVAL;
		} else {
			if (parse_u32(ports, 65535, &lo) < 0)
				return -EINVAL;
			hi = lo;
		}
	}
	r.port_lo = (uint16_t)lo;
	r.port_hi = (uint16_t)hi;

	if (rule_validate(&r) < 0)
		return -EINVAL;
	*ret = r;
	return 0;
}

static struct allowlist_lpm_key rule_key(const struct allowlist_rule *r, uint32_t ruleset)
{
	struct allowlist_lpm_key k = {
		.prefixlen = ALLOWLIST_LPM_FIXED_BITS + r->prefixlen,
		.ruleset = ruleset,
		.family = r->family == AF_INET ? ALLOWLIST_AF_INET : ALLOWLIST_AF_INET6,
	};

	memcpy(k.addr, &r->addr, addr_bits(r->family) / 8);
	return k;
}

/* Does the rule with key rk cover every address of prefix k? */
static bool key_contains(const struct allowlist_lpm_key *rk, const struct allowlist_lpm_key *k)
{
	return rk->family == k->family && rk->prefixlen <= k->prefixlen &&
	       prefix_equal(rk->addr, k->addr, rk->prefixlen - ALLOWLIST_LPM_FIXED_BITS);
}

static int key_compare(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct allowlist_lpm_key));
}

static void ruleset_done(struct ruleset *rs)
{
	free(rs->keys);
	rs->keys = NULL;
	rs->n = 0;
}

/* Turns rules into trie entries: one key per distinct CIDR, whose value lists the port entries
 * of every rule containing that CIDR (the longest-match lookup must see them all). */
static int ruleset_build(const struct allowlist_rule *rules, size_t n, uint32_t id,
			 struct ruleset *ret_rs, struct allowlist_ports **ret_vals)
{
	_cleanup_free_ struct allowlist_lpm_key *rkeys = NULL, *keys = NULL;
	_cleanup_free_ struct allowlist_ports *vals = NULL;
	size_t nk = 0;

	if (n > ALLOWLIST_MAX_RULES)
		return -E2BIG;
	if (n > 0 && !rules)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (rule_validate(&rules[i]) < 0)
			return -EINVAL;

	rkeys = calloc(n ? n : 1, sizeof(*rkeys));
	keys = calloc(n ? n : 1, sizeof(*keys));
	vals = calloc(n ? n : 1, sizeof(*vals));
	if (!rkeys || !keys || !vals)
		return -ENOMEM;

	/* Distinct CIDRs: sort the rules' keys, keep one of each. */
	for (size_t i = 0; i < n; i++)
		rkeys[i] = rule_key(&rules[i], id);
	memcpy(keys, rkeys, n * sizeof(*keys));
	qsort(keys, n, sizeof(*keys), key_compare);
	for (size_t i = 0; i < n; i++)
		if (nk == 0 || key_compare(&keys[nk - 1], &keys[i]) != 0)
			keys[nk++] = keys[i];

	for (size_t j = 0; j < nk; j++) {
		struct allowlist_ports *v = &vals[j];

		for (size_t i = 0; i < n; i++) {
			struct allowlist_port e = {
				.lo = rules[i].port_lo,
				.hi = rules[i].port_hi,
				.proto = proto_number[rules[i].proto],
			};
			uint32_t m;

			if (!key_contains(&rkeys[i], &keys[j]))
				continue;
			for (m = 0; m < v->n; m++)
				if (memcmp(&v->port[m], &e, sizeof(e)) == 0)
					break;
			if (m < v->n)
				continue;
			if (v->n == ALLOWLIST_MAX_PORTS)
				return -E2BIG;
			v->port[v->n++] = e;
		}
	}

	ret_rs->id = id;
	ret_rs->keys = TAKE_PTR(keys);
	ret_rs->n = nk;
	*ret_vals = TAKE_PTR(vals);
	return 0;
}

static void ruleset_delete(struct allowlist *al, const struct ruleset *rs)
{
	int fd = bpf_map__fd(al->skel->maps.rules);

	/* -ENOENT cannot happen for keys we wrote; nothing else is worth reporting from a
	 * teardown path. */
	for (size_t i = 0; i < rs->n; i++)
		(void)bpf_map_delete_elem(fd, &rs->keys[i]);
}

/* Builds the rules under a fresh ruleset id and writes them into the trie. */
static int ruleset_write(struct allowlist *al, const struct allowlist_rule *rules, size_t n,
			 struct ruleset *ret)
{
	int fd = bpf_map__fd(al->skel->maps.rules);

	/* A collision is only possible after 2^32 updates wrapped the counter onto a ruleset still
	 * in use; BPF_NOEXIST catches it and the next id is tried. */
	for (int attempt = 0; attempt < 4; attempt++) {
		_cleanup_free_ struct allowlist_ports *vals = NULL;
		struct ruleset rs = {};
		uint32_t id;
		size_t i;
		int r = 0;

		do
			id = __atomic_fetch_add(&al->next_ruleset, 1, __ATOMIC_RELAXED);
		while (id == 0);

		r = ruleset_build(rules, n, id, &rs, &vals);
		if (r < 0)
			return r;
		for (i = 0; i < rs.n; i++) {
			if (bpf_map_update_elem(fd, &rs.keys[i], &vals[i], BPF_NOEXIST) < 0) {
				r = -errno;
				break;
			}
		}
		if (r == 0) {
			*ret = rs;
			return 0;
		}
		rs.n = i;
		ruleset_delete(al, &rs);
		ruleset_done(&rs);
		if (r == -E2BIG)
			r = -ENOSPC; /* the trie is full */
		if (r != -EEXIST)
			return r;
	}
	return -EEXIST;
}

/* ---- node --------------------------------------------------------------------------------- */

static int libbpf_debug(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[512];
	size_t len;

	if (log_get_level() < LOG_LEVEL_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	len = strlen(buf);
	if (len > 0 && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	log_debug("libbpf: %s", buf);
	return 0;
}

static int ring_sample(void *ctx, void *data, size_t size)
{
	struct allowlist *al = ctx;
	struct allowlist_event ev;
	int r;

	/* The ring buffer is written by our own programs only, but a short record must not read
	 * past the sample. */
	if (size < sizeof(ev))
		return 0;
	memcpy(&ev, data, sizeof(ev));
	r = al->fn(&ev, al->userdata);
	if (r < 0)
		return r;
	al->n_consumed++;
	return 0;
}

int allowlist_open(struct allowlist **ret)
{
	_cleanup_free_ struct allowlist *al = NULL;
	int r;

	assert(ret);

	/* libbpf prints load failures to stderr by default; a library logs at debug at most. The
	 * setting is process-wide, and warren has no other libbpf user. */
	libbpf_set_print(libbpf_debug);

	al = calloc(1, sizeof(*al));
	if (!al)
		return -ENOMEM;
	al->next_ruleset = 1;

	al->skel = allowlist_bpf__open();
	if (!al->skel)
		return errno_or(ENOMEM);
	r = allowlist_bpf__load(al->skel);
	if (r < 0) {
		allowlist_bpf__destroy(al->skel);
		return log_debug_errno(r, "load allowlist programs");
	}

	al->rb = ring_buffer__new(bpf_map__fd(al->skel->maps.events), ring_sample, al, NULL);
	if (!al->rb) {
		r = errno_or(ENOMEM);
		allowlist_bpf__destroy(al->skel);
		return r;
	}
	*ret = TAKE_PTR(al);
	return 0;
}

struct allowlist *allowlist_free(struct allowlist *al)
{
	if (!al)
		return NULL;
	/* The sandboxes' handles point into al: freeing it first is a programming error. */
	assert(__atomic_load_n(&al->n_sandboxes, __ATOMIC_RELAXED) == 0);
	ring_buffer__free(al->rb);
	allowlist_bpf__destroy(al->skel);
	free(al);
	return NULL;
}

int allowlist_ring_fd(const struct allowlist *al)
{
	return ring_buffer__epoll_fd(al->rb);
}

int allowlist_consume(struct allowlist *al, allowlist_denial_fn fn, void *userdata)
{
	int r;

	assert(al && fn);
	al->fn = fn;
	al->userdata = userdata;
	al->n_consumed = 0;
	r = ring_buffer__consume(al->rb);
	al->fn = NULL;
	al->userdata = NULL;
	return r < 0 ? r : al->n_consumed;
}

int allowlist_stats(struct allowlist *al, uint64_t *ret_denied, uint64_t *ret_lost)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(al->skel->maps.stats);
	uint64_t total[_ALLOWLIST_STAT_MAX] = {};
	_cleanup_free_ uint64_t *v = NULL;

	if (ncpu < 0)
		return ncpu;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t k = 0; k < _ALLOWLIST_STAT_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, v) < 0)
			return -errno;
		for (int c = 0; c < ncpu; c++)
			total[k] += v[c];
	}
	if (ret_denied)
		*ret_denied = total[ALLOWLIST_STAT_DENIED];
	if (ret_lost)
		*ret_lost = total[ALLOWLIST_STAT_LOST];
	return 0;
}

/* ---- sandboxes ---------------------------------------------------------------------------- */

int allowlist_cgroup_id(int cgroup_fd, uint64_t *ret)
{
	/* A cgroup2 file handle is the kernfs node id, which is what the BPF helpers return
	 * (st_ino would truncate it on 32-bit machines). */
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	struct statfs sfs;
	int mount_id;

	if (fstatfs(cgroup_fd, &sfs) < 0)
		return -errno;
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -EINVAL;
	if (name_to_handle_at(cgroup_fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) < 0)
		return -errno;
	if (h.fh.handle_bytes != sizeof(uint64_t))
		return -EINVAL;
	memcpy(ret, h.fh.f_handle, sizeof(*ret));
	return 0;
}

static void sandbox_unlink(struct allowlist_sandbox *sb)
{
	for (int i = 0; i < _ALLOWLIST_HOOK_MAX; i++) {
		bpf_link__destroy(sb->links[i]);
		sb->links[i] = NULL;
	}
}

static struct bpf_program *hook_program(struct allowlist *al, enum allowlist_hook h)
{
	switch (h) {
	case ALLOWLIST_HOOK_CONNECT4:
		return al->skel->progs.allowlist_connect4;
	case ALLOWLIST_HOOK_CONNECT6:
		return al->skel->progs.allowlist_connect6;
	case ALLOWLIST_HOOK_SENDMSG4:
		return al->skel->progs.allowlist_sendmsg4;
	case ALLOWLIST_HOOK_SENDMSG6:
		return al->skel->progs.allowlist_sendmsg6;
	case ALLOWLIST_HOOK_EGRESS:
		return al->skel->progs.allowlist_egress;
	default:
		return NULL;
	}
}

int allowlist_attach(struct allowlist *al, int cgroup_fd, uint64_t sandbox_key,
		     const struct allowlist_rule *rules, size_t n, struct allowlist_sandbox **ret)
{
	_cleanup_free_ struct allowlist_sandbox *sb = NULL;
	struct allowlist_cgroup cgv = { .sandbox_key = sandbox_key };
	int cgroups_fd = bpf_map__fd(al->skel->maps.cgroups);
	int r;

	assert(al && ret);

	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	sb->al = al;
	sb->sandbox_key = sandbox_key;
	r = allowlist_cgroup_id(cgroup_fd, &sb->cgroup_id);
	if (r < 0)
		return r;

	r = ruleset_write(al, rules, n, &sb->rules);
	if (r < 0)
		return r;

	/* The map entry goes in before the links: from the first link on, the sandbox is judged
	 * by its rules, never by "unknown cgroup". */
	cgv.ruleset = sb->rules.id;
	if (bpf_map_update_elem(cgroups_fd, &sb->cgroup_id, &cgv, BPF_NOEXIST) < 0) {
		r = -errno;
		if (r == -E2BIG)
			r = -ENOSPC;
		goto fail_rules;
	}

	for (int i = 0; i < _ALLOWLIST_HOOK_MAX; i++) {
		sb->links[i] = bpf_program__attach_cgroup(hook_program(al, i), cgroup_fd);
		if (!sb->links[i]) {
			r = errno_or(EINVAL);
			log_debug_errno(r, "attach %s to cgroup %" PRIu64, hook_table[i],
					sb->cgroup_id);
			goto fail_links;
		}
	}

	__atomic_add_fetch(&al->n_sandboxes, 1, __ATOMIC_RELAXED);
	*ret = TAKE_PTR(sb);
	return 0;

fail_links:
	sandbox_unlink(sb);
	(void)bpf_map_delete_elem(cgroups_fd, &sb->cgroup_id);
fail_rules:
	ruleset_delete(al, &sb->rules);
	ruleset_done(&sb->rules);
	return r;
}

int allowlist_update(struct allowlist_sandbox *sb, const struct allowlist_rule *rules, size_t n)
{
	struct allowlist *al = sb->al;
	struct allowlist_cgroup cgv = { .sandbox_key = sb->sandbox_key };
	struct ruleset next = {};
	int r;

	r = ruleset_write(al, rules, n, &next);
	if (r < 0)
		return r;
	cgv.ruleset = next.id;
	/* The switch: one map update, which readers see entirely or not at all. */
	if (bpf_map_update_elem(bpf_map__fd(al->skel->maps.cgroups), &sb->cgroup_id, &cgv,
				BPF_EXIST) < 0) {
		r = -errno;
		ruleset_delete(al, &next);
		ruleset_done(&next);
		return r;
	}
	ruleset_delete(al, &sb->rules);
	ruleset_done(&sb->rules);
	sb->rules = next;
	return 0;
}

struct allowlist_sandbox *allowlist_detach(struct allowlist_sandbox *sb)
{
	if (!sb)
		return NULL;
	/* Links first: once they are gone no program can look up the entries deleted next. */
	sandbox_unlink(sb);
	(void)bpf_map_delete_elem(bpf_map__fd(sb->al->skel->maps.cgroups), &sb->cgroup_id);
	ruleset_delete(sb->al, &sb->rules);
	ruleset_done(&sb->rules);
	__atomic_sub_fetch(&sb->al->n_sandboxes, 1, __ATOMIC_RELAXED);
	free(sb);
	return NULL;
}

uint64_t allowlist_sandbox_cgroup_id(const struct allowlist_sandbox *sb)
{
	return sb->cgroup_id;
}

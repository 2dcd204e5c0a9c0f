/* SPDX-License-Identifier: Apache-2.0 */
/* Reading the kernel's audit records of refusals: a pure parser for one record, a reader that
 * assembles a Landlock event (1423 + 1424 + 1300 + 1320, one serial) into one denial, and the
 * node-wide audit settings. See audit.h for why the multicast group and not /dev/kmsg. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "macro.h"

#ifndef AUDIT_NLGRP_READLOG
#define AUDIT_NLGRP_READLOG 1
#endif

static const char *const layer_names[_AUDIT_LAYER_MAX] = {
	[AUDIT_LAYER_SECCOMP] = "seccomp",
	[AUDIT_LAYER_LANDLOCK] = "landlock",
	[AUDIT_LAYER_APPARMOR] = "apparmor",
};

const char *audit_layer_to_string(enum audit_layer l)
{
	return l >= 0 && l < _AUDIT_LAYER_MAX ? layer_names[l] : NULL;
}

/* ---- the parser ---------------------------------------------------------------------------- */

static const struct {
	const char *name;
	int type;
} type_names[] = {
	{ "SYSCALL", AUDIT_TYPE_SYSCALL },
	{ "EOE", AUDIT_TYPE_EOE },
	{ "SECCOMP", AUDIT_TYPE_SECCOMP },
	{ "AVC", AUDIT_TYPE_AVC },
	{ "LANDLOCK_ACCESS", AUDIT_TYPE_LANDLOCK_ACCESS },
	{ "LANDLOCK_DOMAIN", AUDIT_TYPE_LANDLOCK_DOMAIN },
	{ "PROCTITLE", 1327 },
};

/* SECCOMP_RET_ACTION_FULL values as the record's code= shows them (the errno is masked off). */
static const struct {
	uint32_t code;
	const char *name;
} seccomp_actions[] = {
	{ 0x80000000U, "kill_process" }, { 0x00000000U, "kill_thread" },
	{ 0x00030000U, "trap" },         { 0x00050000U, "errno" },
	{ 0x7fc00000U, "user_notif" },   { 0x7ff00000U, "trace" },
	{ 0x7ffc0000U, "log" },          { 0x7fff0000U, "allow" },
};

struct cursor {
	const char *p, *end;
};

static bool starts(struct cursor *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
		return false;
	c->p += n;
	return true;
}

static bool digits(struct cursor *c, uint64_t *ret)
{
	uint64_t v = 0;
	const char *start = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*c->p++ - '0');
	}
	*ret = v;
	return c->p > start;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A value into buf, NUL-terminated and truncated to fit. The kernel writes a string that holds
 * a space, a quote or a control byte as uppercase hex without quotes (audit_log_untrustedstring);
 * for the fields that carry such strings, decode that form. Control bytes from a decoded value
 * become '?': these strings end up in logs and JSON. */
static void copy_value(const char *v, size_t n, bool quoted, bool may_be_hex, char *buf,
		       size_t size)
{
	size_t o = 0;
	bool hex = !quoted && may_be_hex && n >= 2 && n % 2 == 0;

	for (size_t i = 0; hex && i < n; i++)
		hex = (v[i] >= '0' && v[i] <= '9') || (v[i] >= 'A' && v[i] <= 'F');
	if (hex) {
		for (size_t i = 0; i + 1 < n && o + 1 < size; i += 2) {
			char ch = (char)(hexval(v[i]) << 4 | hexval(v[i + 1]));

			/* an abstract unix socket's name starts with NUL: shown as "@name" */
			if (i == 0 && ch == '\0')
				ch = '@';
			buf[o++] = (unsigned char)ch < 0x20 || ch == 0x7f ? '?' : ch;
		}
	} else {
		for (size_t i = 0; i < n && o + 1 < size; i++)
			buf[o++] = (unsigned char)v[i] < 0x20 || v[i] == 0x7f ? '?' : v[i];
	}
	buf[o] = '\0';
}

static bool value_num(const char *v, size_t n, int base, uint64_t *ret)
{
	char tmp[32];
	char *e;

	if (n == 0 || n >= sizeof(tmp))
		return false;
	memcpy(tmp, v, n);
	tmp[n] = '\0';
	if (tmp[0] == '-')
		return false;
	errno = 0;
	*ret = strtoull(tmp, &e, base);
	return errno == 0 && *e == '\0';
}

static bool key_is(const char *k, size_t kn, const char *want)
{
	return kn == strlen(want) && memcmp(k, want, kn) == 0;
}

static void resolve_syscall(struct audit_denial *d)
{
	uint32_t arch = d->arch;
	int nr = d->syscall;
	char *name;

	if (nr < 0 || arch == 0)
		return;
	/* x32 calls come with the x86-64 arch and bit 30 set in the number */
	if (arch == SCMP_ARCH_X86_64 && (nr & 0x40000000))
		arch = SCMP_ARCH_X32;
	name = seccomp_syscall_resolve_num_arch(arch, nr);
	if (name) {
		snprintf(d->syscall_name, sizeof(d->syscall_name), "%s", name);
		free(name);
	}
}

int audit_parse(int type, const char *rec, size_t len, struct audit_denial *ret)
{
	struct cursor c = { rec, rec + len };
	struct audit_denial d = { .syscall = -1 };
	uint64_t sec, ms, serial, num, code = UINT64_MAX, pid = 0;
	char apparmor[16] = "", status[16] = "", name[256] = "";

	while (c.end > c.p && (c.end[-1] == '\n' || c.end[-1] == '\0'))
		c.end--;
	(void)starts(&c, "audit: ");
	if (starts(&c, "type=")) {
		int t = -1;

		if (c.p < c.end && *c.p >= '0' && *c.p <= '9') {
			if (!digits(&c, &num) || num > 65535)
				return -EINVAL;
			t = (int)num;
		} else {
			for (size_t i = 0; i < ELEMENTSOF(type_names); i++) {
				struct cursor s = c;

				if (starts(&s, type_names[i].name) && s.p < s.end && *s.p == ' ') {
					t = type_names[i].type;
					c = s;
					break;
				}
			}
			while (c.p < c.end && *c.p != ' ')
				c.p++;
		}
		if (!starts(&c, " "))
			return -EINVAL;
		if (type == 0)
			type = t;
		(void)starts(&c, "msg=");
	}
	if (type <= 0)
		return -EINVAL;
	/* audit(SECONDS.MILLISECONDS:SERIAL): */
	if (!starts(&c, "audit(") || !digits(&c, &sec) || !starts(&c, ".") || !digits(&c, &ms) ||
	    !starts(&c, ":") || !digits(&c, &serial) || !starts(&c, "):") || ms > 999 ||
	    sec > UINT64_MAX / 1000 - 1)
		return -EINVAL;
	d.type = type;
	d.serial = serial;
	d.time_ms = sec * 1000 + ms;

	while (c.p < c.end) {
		const char *k, *v;
		size_t kn, vn;
		bool quoted = false;

		while (c.p < c.end && *c.p == ' ')
			c.p++;
		k = c.p;
		while (c.p < c.end && *c.p != '=' && *c.p != ' ')
			c.p++;
		kn = (size_t)(c.p - k);
		if (c.p >= c.end || *c.p != '=') /* a word without '=' (SELinux's "avc: denied") */
			continue;
		c.p++;
		if (c.p < c.end && *c.p == '"') {
			quoted = true;
			v = ++c.p;
			while (c.p < c.end && *c.p != '"')
				c.p++;
			vn = (size_t)(c.p - v);
			if (c.p < c.end)
				c.p++;
		} else {
			v = c.p;
			while (c.p < c.end && *c.p != ' ')
				c.p++;
			vn = (size_t)(c.p - v);
		}

		if (key_is(k, kn, "pid")) {
			if (!value_num(v, vn, 10, &pid) || pid > INT32_MAX)
				return -EINVAL;
		} else if (key_is(k, kn, "arch")) {
			if (!value_num(v, vn, 16, &num) || num > UINT32_MAX)
				return -EINVAL;
			d.arch = (uint32_t)num;
		} else if (key_is(k, kn, "syscall")) {
			if (!value_num(v, vn, 10, &num) || num > INT32_MAX)
				return -EINVAL;
			d.syscall = (int)num;
		} else if (key_is(k, kn, "code")) {
			if (!value_num(v, vn, 16, &code) || code > UINT32_MAX)
				return -EINVAL;
		} else if (key_is(k, kn, "comm")) {
			copy_value(v, vn, quoted, true, d.comm, sizeof(d.comm));
		} else if (key_is(k, kn, "exe")) {
			copy_value(v, vn, quoted, true, d.exe, sizeof(d.exe));
		} else if (key_is(k, kn, "domain")) {
			if (!value_num(v, vn, 16, &d.domain))
				return -EINVAL;
		} else if (key_is(k, kn, "blockers")) {
			copy_value(v, vn, quoted, false, d.blockers, sizeof(d.blockers));
		} else if (key_is(k, kn, "path")) {
			copy_value(v, vn, quoted, true, d.path, sizeof(d.path));
		} else if (key_is(k, kn, "name")) {
			copy_value(v, vn, quoted, true, name, sizeof(name));
		} else if (key_is(k, kn, "opid")) {
			if (!value_num(v, vn, 10, &num) || num > INT32_MAX)
				return -EINVAL;
			d.target_pid = (pid_t)num;
		} else if (key_is(k, kn, "ocomm")) {
			copy_value(v, vn, quoted, true, d.target_comm, sizeof(d.target_comm));
		} else if (key_is(k, kn, "status")) {
			copy_value(v, vn, quoted, false, status, sizeof(status));
		} else if (key_is(k, kn, "apparmor")) {
			copy_value(v, vn, quoted, false, apparmor, sizeof(apparmor));
		} else if (key_is(k, kn, "operation")) {
			copy_value(v, vn, quoted, false, d.operation, sizeof(d.operation));
		} else if (key_is(k, kn, "profile")) {
			copy_value(v, vn, quoted, true, d.profile, sizeof(d.profile));
		} else if (key_is(k, kn, "denied_mask")) {
			copy_value(v, vn, quoted, false, d.mask, sizeof(d.mask));
		}
	}

	/* AppArmor names its object name=; Landlock writes path= for the directory and name= for
	 * the entry it was about to create or remove there. */
	if (name[0] && !d.path[0])
		memcpy(d.path, name, sizeof(d.path));
	else if (name[0]) {
		size_t pl = strlen(d.path);

		snprintf(d.path + pl, sizeof(d.path) - pl, "%s%s",
			 pl > 0 && d.path[pl - 1] == '/' ? "" : "/", name);
	}

	switch (type) {
	case AUDIT_TYPE_SECCOMP:
		if (code == UINT64_MAX || d.syscall < 0 || pid == 0)
			return -EINVAL;
		d.layer = AUDIT_LAYER_SECCOMP;
		d.pid = (pid_t)pid;
		for (size_t i = 0; i < ELEMENTSOF(seccomp_actions); i++)
			if (seccomp_actions[i].code == (code & 0xffff0000U))
				snprintf(d.action, sizeof(d.action), "%s", seccomp_actions[i].name);
		resolve_syscall(&d);
		*ret = d;
		/* "log" is the action that allows and records; not a refusal */
		return (strcmp(d.action, "allow") == 0 || strcmp(d.action, "log") == 0) ?
			       AUDIT_KIND_OTHER : AUDIT_KIND_DENIAL;
	case AUDIT_TYPE_LANDLOCK_ACCESS:
		if (!d.blockers[0])
			return -EINVAL;
		d.layer = AUDIT_LAYER_LANDLOCK;
		snprintf(d.action, sizeof(d.action), "denied");
		*ret = d;
		return AUDIT_KIND_DENIAL;
	case AUDIT_TYPE_LANDLOCK_DOMAIN:
		d.layer = AUDIT_LAYER_LANDLOCK;
		d.domain_pid = (pid_t)pid;
		d.domain_freed = strcmp(status, "deallocated") == 0;
		*ret = d;
		return AUDIT_KIND_DOMAIN;
	case AUDIT_TYPE_SYSCALL:
		d.pid = (pid_t)pid;
		resolve_syscall(&d);
		*ret = d;
		return AUDIT_KIND_SYSCALL;
	case AUDIT_TYPE_EOE:
		*ret = d;
		return AUDIT_KIND_END;
	case AUDIT_TYPE_AVC:
		d.pid = (pid_t)pid;
		*ret = d;
		if (strcmp(apparmor, "DENIED") != 0)
			return AUDIT_KIND_OTHER;
		d.layer = AUDIT_LAYER_APPARMOR;
		snprintf(d.action, sizeof(d.action), "denied");
		*ret = d;
		return AUDIT_KIND_DENIAL;
	default:
		*ret = d;
		return AUDIT_KIND_OTHER;
	}
}

/* ---- the reader ---------------------------------------------------------------------------- */

#define PENDING_MAX 32
#define READ_BUF (64 * 1024)

struct pending {
	bool used;
	uint64_t since_ms;   /* CLOCK_MONOTONIC when its first record came */
	struct audit_denial d;
};

struct audit_reader {
	enum audit_source source;
	int fd;
	struct audit_reader_stats stats;
	struct pending pending[PENDING_MAX];
	char buf[READ_BUF];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int audit_reader_new(enum audit_source source, int fd, struct audit_reader **ret)
{
	struct audit_reader *r;

	if (source < 0 || source >= _AUDIT_SOURCE_MAX)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->source = source;
	r->fd = fd;
	*ret = r;
	return 0;
}

int audit_reader_open(enum audit_source source, struct audit_reader **ret)
{
	_cleanup_close_ int fd = -EBADF;
	int r;

	if (source == AUDIT_SOURCE_NETLINK) {
		struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = AUDIT_NLGRP_READLOG };
		int size = 4 << 20;

		fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT);
		if (fd < 0)
			return -errno;
		/* A burst of refusals should wait in our buffer, not be dropped: 4 MiB is about
		 * 20,000 records. FORCE passes net.core.rmem_max as root. */
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
			(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
		/* Joining the group is what needs CAP_AUDIT_READ (Linux 3.16). */
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			return -errno;
	} else if (source == AUDIT_SOURCE_KMSG) {
		fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		/* only what comes from now on */
		if (lseek(fd, 0, SEEK_END) < 0)
			return -errno;
	} else {
		return -EINVAL;
	}
	r = audit_reader_new(source, fd, ret);
	if (r >= 0)
		TAKE_FD(fd);
	return r;
}

struct audit_reader *audit_reader_free(struct audit_reader *r)
{
	if (!r)
		return NULL;
	safe_close(r->fd);
	free(r);
	return NULL;
}

int audit_reader_fd(const struct audit_reader *r)
{
	return r->fd;
}

enum audit_source audit_reader_source(const struct audit_reader *r)
{
	return r->source;
}

static void emit(struct audit_reader *r, const struct audit_denial *d, audit_denial_fn fn,
		 void *userdata)
{
	r->stats.denials++;
	fn(d, userdata);
}

static struct pending *find_pending(struct audit_reader *r, uint64_t serial)
{
	for (size_t i = 0; i < PENDING_MAX; i++)
		if (r->pending[i].used && r->pending[i].d.serial == serial)
			return &r->pending[i];
	return NULL;
}

static void handle(struct audit_reader *r, int kind, const struct audit_denial *d,
		   audit_denial_fn fn, void *userdata)
{
	struct pending *p;

	switch (kind) {
	case AUDIT_KIND_DENIAL:
		if (d->layer != AUDIT_LAYER_LANDLOCK || d->serial == 0) {
			emit(r, d, fn, userdata);
			return;
		}
		/* Wait for the event's SYSCALL record (the pid). A full table hands over its
		 * oldest entry as it is. */
		p = find_pending(r, d->serial);
		if (p) {
			emit(r, &p->d, fn, userdata);
		} else {
			struct pending *oldest = NULL;

			for (size_t i = 0; i < PENDING_MAX && !p; i++) {
				if (!r->pending[i].used)
					p = &r->pending[i];
				else if (!oldest || r->pending[i].since_ms < oldest->since_ms)
					oldest = &r->pending[i];
			}
			if (!p) {
				emit(r, &oldest->d, fn, userdata);
				p = oldest;
			}
		}
		*p = (struct pending){ .used = true, .since_ms = now_ms(), .d = *d };
		return;
	case AUDIT_KIND_DOMAIN:
		p = find_pending(r, d->serial);
		if (p && !d->domain_freed)
			p->d.domain_pid = d->domain_pid;
		return;
	case AUDIT_KIND_SYSCALL:
		p = find_pending(r, d->serial);
		if (p) {
			p->d.pid = d->pid;
			p->d.arch = d->arch;
			p->d.syscall = d->syscall;
			memcpy(p->d.syscall_name, d->syscall_name, sizeof(d->syscall_name));
			memcpy(p->d.comm, d->comm, sizeof(d->comm));
			memcpy(p->d.exe, d->exe, sizeof(d->exe));
		}
		return;
	case AUDIT_KIND_END:
		p = find_pending(r, d->serial);
		if (p) {
			emit(r, &p->d, fn, userdata);
			p->used = false;
		}
		return;
	default:
		return;
	}
}

static void feed_one(struct audit_reader *r, int type, const char *rec, size_t len,
		     audit_denial_fn fn, void *userdata)
{
	struct audit_denial d;
	int kind;

	r->stats.records++;
	kind = audit_parse(type, rec, len, &d);
	if (kind < 0) {
		r->stats.malformed++;
		return;
	}
	handle(r, kind, &d, fn, userdata);
}

void audit_reader_feed(struct audit_reader *r, const void *buf, size_t len, audit_denial_fn fn,
		       void *userdata)
{
	if (r->source == AUDIT_SOURCE_NETLINK) {
		const struct nlmsghdr *h = buf;
		int n = (int)MIN(len, (size_t)INT32_MAX);

		for (; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type < AUDIT_FIRST_USER_MSG) /* NOOP, ERROR, DONE, replies */
				continue;
			feed_one(r, h->nlmsg_type, NLMSG_DATA(h), h->nlmsg_len - NLMSG_HDRLEN, fn,
				 userdata);
		}
		return;
	}
	/* /dev/kmsg: "PRIO,SEQ,USEC,FLAGS;audit: type=1326 audit(...): ...\n" plus
	 * continuation lines, one record per read. */
	const char *s = buf, *semi = memchr(s, ';', len), *nl;
	static const char tag[] = "audit: type=";

	if (!semi)
		return;
	semi++;
	nl = memchr(semi, '\n', len - (size_t)(semi - s));
	len = (size_t)((nl ? nl : s + len) - semi);
	if (len < sizeof(tag) - 1 || memcmp(semi, tag, sizeof(tag) - 1) != 0)
		return;
	feed_one(r, 0, semi, len, fn, userdata);
}

int audit_reader_read(struct audit_reader *r, audit_denial_fn fn, void *userdata)
{
	int reads = 0;

	for (;;) {
		ssize_t n = read(r->fd, r->buf, sizeof(r->buf));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return reads;
			if (errno == ENOBUFS || errno == EPIPE) {
				audit_reader_overflowed(r);
				continue;
			}
			return -errno;
		}
		if (n == 0)
			return reads;
		reads++;
		audit_reader_feed(r, r->buf, (size_t)n, fn, userdata);
	}
}

void audit_reader_overflowed(struct audit_reader *r)
{
	r->stats.overflows++;
}

unsigned audit_reader_flush(struct audit_reader *r, unsigned min_age_ms, audit_denial_fn fn,
			    void *userdata)
{
	uint64_t now = now_ms();
	unsigned left = 0;

	for (size_t i = 0; i < PENDING_MAX; i++) {
		struct pending *p = &r->pending[i];

		if (!p->used)
			continue;
		if (now - p->since_ms >= min_age_ms) {
			emit(r, &p->d, fn, userdata);
			p->used = false;
		} else {
			left++;
		}
	}
	return left;
}

void audit_reader_stats(const struct audit_reader *r, struct audit_reader_stats *ret)
{
	*ret = r->stats;
}

/* ---- the kernel's settings --------------------------------------------------------------- */

/* One request on a fresh socket, and its answer: AUDIT_GET's status, or the ack's error. */
static int audit_request(uint16_t type, const struct audit_status *in, struct audit_status *out)
{
	struct {
		struct nlmsghdr h;
		struct audit_status st;
	} req = {
		.h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct audit_status)), .nlmsg_type = type,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = 1 },
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	_cleanup_close_ int fd = -EBADF;
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	bool acked = false, got = out == NULL;
	struct timeval tv = { .tv_sec = 2 };

	if (in)
		req.st = *in;
	else
		req.h.nlmsg_len = NLMSG_LENGTH(0);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	while (!acked || !got) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		int left = (int)n;

		if (n < 0)
			return -errno;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (e->error < 0)
					return e->error;
				acked = true;
			} else if (h->nlmsg_type == AUDIT_GET && out) {
				memset(out, 0, sizeof(*out));
				memcpy(out, NLMSG_DATA(h),
				       MIN(sizeof(*out), h->nlmsg_len - NLMSG_HDRLEN));
				got = true;
			}
		}
	}
	return 0;
}

int audit_kernel_get(struct audit_kernel_status *ret)
{
	struct audit_status st;
	int r = audit_request(AUDIT_GET, NULL, &st);

	if (r < 0)
		return r;
	*ret = (struct audit_kernel_status){
		.enabled = st.enabled,
		.pid = st.pid,
		.rate_limit = st.rate_limit,
		.backlog_limit = st.backlog_limit,
		.lost = st.lost,
		.backlog = st.backlog,
		.backlog_wait_time = st.backlog_wait_time,
	};
	return 0;
}

int audit_kernel_set(uint32_t which, uint32_t value)
{
	struct audit_status st = { .mask = which };

	switch (which) {
	case AUDIT_STATUS_ENABLED:
		st.enabled = value;
		break;
	case AUDIT_STATUS_RATE_LIMIT:
		st.rate_limit = value;
		break;
	case AUDIT_STATUS_BACKLOG_LIMIT:
		st.backlog_limit = value;
		break;
	case AUDIT_STATUS_BACKLOG_WAIT_TIME:
		st.backlog_wait_time = value;
		break;
	default:
		return -EINVAL;
	}
	return audit_request(AUDIT_SET, &st, NULL);
}

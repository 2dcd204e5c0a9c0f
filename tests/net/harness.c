/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "syscall.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

struct test_net tn = { .cg_fd = -EBADF, .netns_fd = -EBADF };

#define MAX_EXTRA 8
static char extra_cgroups[MAX_EXTRA][PATH_MAX];
static int n_extra;
#define MAX_PROBES 8
/* Probes live here, not on a test's stack: a failed assertion leaves the test function, and
 * tn_teardown() must still find and kill them. */
static struct probe probes[MAX_PROBES];

void tn_skip_or_fail(int r, const char *what)
{
	if (r == -EPERM || r == -EACCES)
		cr_skip_test("%s: lacking privileges (%s)", what, strerror(-r));
	if (r == -ENOSYS || r == -EOPNOTSUPP)
		cr_skip_test("%s: the kernel lacks it (%s)", what, strerror(-r));
	cr_assert_eq(r, 0, "%s: %s", what, strerror(-r));
}

/* ---- cgroups ------------------------------------------------------------------------------ */

static const char *cgroup2_root(void)
{
	static const char *const roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
	struct statfs sfs;

	for (size_t i = 0; i < ELEMENTSOF(roots); i++)
		if (statfs(roots[i], &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
			return roots[i];
	return NULL;
}

static void rmdir_retry(const char *path)
{
	struct timespec ts = { 0, 1000000 };

	/* An exiting task leaves its cgroup a moment after it was reaped: retry EBUSY for 2 s. */
	for (int i = 0; i < 2000; i++) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			break;
		nanosleep(&ts, NULL);
	}
	cr_log_warn("rmdir %s: %s", path, strerror(errno));
}

/* Leftovers of an earlier run that died before its teardown (a crash, SIGKILL): the cgroup
 * directories and bridges named after a pid that no longer exists. Veths need no sweeping: they
 * died with their namespace. */
static void sweep_stale(const char *root)
{
	DIR *d;
	struct dirent *de;

	d = opendir(root);
	while (d && (de = readdir(d))) {
		char path[PATH_MAX], sub[PATH_MAX];
		unsigned pid;
		DIR *s;
		struct dirent *se;

		if (sscanf(de->d_name, "warren-test-net-%u", &pid) != 1 ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, de->d_name);
		s = opendir(path);
		while (s && (se = readdir(s))) {
			if (se->d_type != DT_DIR || se->d_name[0] == '.')
				continue;
			if (snprintf(sub, sizeof(sub), "%s/%s", path, se->d_name) <
			    (int)sizeof(sub))
				(void)rmdir(sub);
		}
		if (s)
			closedir(s);
		(void)rmdir(path);
	}
	if (d)
		closedir(d);

	d = opendir("/sys/class/net");
	while (d && (de = readdir(d))) {
		struct net_bridge_config c;
		struct net_bridge *br;
		unsigned pid;

		if (sscanf(de->d_name, "wtb%u", &pid) != 1 || kill((pid_t)pid, 0) == 0 ||
		    errno != ESRCH)
			continue;
		net_bridge_config_default(&c);
		if (strlen(de->d_name) >= sizeof(c.name))
			continue;
		memcpy(c.name, de->d_name, strlen(de->d_name) + 1);
		inet_pton(AF_INET, "198.19.255.253", &c.addr);
		c.prefixlen = 30;
		if (net_bridge_open(&c, &br) == 0) {
			(void)net_bridge_remove(br);
			net_bridge_free(br);
		}
	}
	if (d)
		closedir(d);
}

void tn_setup_cgroups(void)
{
	const char *root = cgroup2_root();

	if (!root)
		cr_skip_test("no cgroup2 mount (not at /sys/fs/cgroup/unified nor /sys/fs/cgroup)");
	tn.id = (unsigned)getpid();
	sweep_stale(root);
	snprintf(tn.cg_parent, sizeof(tn.cg_parent), "%s/warren-test-net-%u", root, tn.id);
	if (mkdir(tn.cg_parent, 0755) < 0)
		tn_skip_or_fail(-errno, "mkdir cgroup2 parent");
	cr_assert_lt(snprintf(tn.cg_path, sizeof(tn.cg_path), "%s/sandbox", tn.cg_parent),
		     (int)sizeof(tn.cg_path));
	cr_assert_eq(mkdir(tn.cg_path, 0755), 0, "mkdir %s: %s", tn.cg_path, strerror(errno));
	tn.cg_fd = open(tn.cg_path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	cr_assert_geq(tn.cg_fd, 0, "open %s: %s", tn.cg_path, strerror(errno));
}

int tn_cgroup_make(const char *under, const char *name, char path[PATH_MAX])
{
	int fd;

	cr_assert_lt(n_extra, MAX_EXTRA);
	cr_assert_lt(snprintf(path, PATH_MAX, "%s/%s", under ? under : tn.cg_parent, name),
		     PATH_MAX);
	cr_assert_eq(mkdir(path, 0755), 0, "mkdir %s: %s", path, strerror(errno));
	/* Removed deepest first: later entries are never parents of earlier ones' children. */
	snprintf(extra_cgroups[n_extra++], PATH_MAX, "%s", path);
	fd = open(path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	return fd;
}

/* ---- network ------------------------------------------------------------------------------ */

int tn_netns_new(void)
{
	_cleanup_close_ int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int fd;

	cr_assert_geq(self, 0, "open own netns: %s", strerror(errno));
	if (unshare(CLONE_NEWNET) < 0)
		tn_skip_or_fail(-errno, "unshare(CLONE_NEWNET)");
	fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	cr_assert_eq(setns(self, CLONE_NEWNET), 0, "back to own netns: %s", strerror(errno));
	cr_assert_geq(fd, 0, "open new netns: %s", strerror(errno));
	return fd;
}

void tn_setup(void)
{
	struct net_bridge_config c;
	unsigned x;
	int r;

	tn_setup_cgroups();
	tn.netns_fd = tn_netns_new();

	/* 198.19.X.0/24 inside 198.18.0.0/15, X from the pid: tests of different runs do not
	 * meet (the test binaries run one test at a time, --jobs 1). */
	x = tn.id % 256;
	snprintf(tn.br_ip, sizeof(tn.br_ip), "198.19.%u.1", x);
	snprintf(tn.sb_ip, sizeof(tn.sb_ip), "198.19.%u.2", x);
	snprintf(tn.other_ip, sizeof(tn.other_ip), "198.19.%u.77", x);
	snprintf(tn.subnet, sizeof(tn.subnet), "198.19.%u.0/24", x);
	inet_pton(AF_INET, tn.br_ip, &tn.br_addr);
	inet_pton(AF_INET, tn.sb_ip, &tn.sb_addr);

	net_bridge_config_default(&c);
	snprintf(c.name, sizeof(c.name), "wtb%u", tn.id);
	snprintf(tn.bridge_name, sizeof(tn.bridge_name), "%s", c.name);
	c.addr = tn.br_addr;
	c.prefixlen = 24;
	c.isolate_ports = !tn.shared_ports;
	r = net_bridge_open(&c, &tn.br);
	tn_skip_or_fail(r, "net_bridge_open");

	char host[IFNAMSIZ];
	snprintf(host, sizeof(host), "wtv%u", tn.id);
	r = net_veth_add(tn.br, tn.netns_fd, host, "eth0", tn.sb_addr, &tn.veth);
	cr_assert_eq(r, 0, "net_veth_add: %s", strerror(-r));
	tn.have_veth = true;
}

static bool link_exists(const char *name)
{
	return name[0] && if_nametoindex(name) > 0;
}

void tn_teardown(void)
{
	for (int i = 0; i < MAX_PROBES; i++)
		probe_stop(&probes[i]);
	if (tn.have_veth) {
		int r = net_veth_remove(&tn.veth);

		if (r < 0)
			cr_log_warn("net_veth_remove: %s", strerror(-r));
		tn.have_veth = false;
		cr_expect(!link_exists(tn.veth.name), "veth %s left behind", tn.veth.name);
	}
	if (tn.br) {
		int r = net_bridge_remove(tn.br);

		if (r < 0)
			cr_log_warn("net_bridge_remove: %s", strerror(-r));
		tn.br = net_bridge_free(tn.br);
		cr_expect(!link_exists(tn.bridge_name), "bridge %s left behind", tn.bridge_name);
	}
	tn.netns_fd = safe_close(tn.netns_fd);
	tn.cg_fd = safe_close(tn.cg_fd);
	while (n_extra > 0)
		rmdir_retry(extra_cgroups[--n_extra]);
	if (tn.cg_path[0]) {
		rmdir_retry(tn.cg_path);
		rmdir_retry(tn.cg_parent);
		cr_expect(access(tn.cg_parent, F_OK) < 0, "%s left behind", tn.cg_parent);
	}
}

/* ---- the probe ---------------------------------------------------------------------------- */

struct probe_req {
	int op;
	unsigned count;
	uint16_t port;
	char ip[INET6_ADDRSTRLEN];
};

static int to_sockaddr(const char *ip, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*len = sizeof(*in);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		return AF_INET6;
	}
	return -1;
}

static uint16_t icmp_checksum(const void *p, size_t len)
{
	const uint16_t *w = p;
	uint32_t sum = 0;

	for (; len > 1; len -= 2)
		sum += *w++;
	if (len)
		sum += *(const uint8_t *)w;
	sum = (sum >> 16) + (sum & 0xffff);
	sum += sum >> 16;
	return (uint16_t)~sum;
}

static int probe_icmp(const struct sockaddr_storage *ss, socklen_t len)
{
	struct icmphdr h = { .type = ICMP_ECHO };
	struct timespec start, now;
	int fd, r;

	fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (fd < 0)
		return errno;
	h.un.echo.id = htons((uint16_t)getpid());
	h.un.echo.sequence = htons(1);
	h.checksum = icmp_checksum(&h, sizeof(h));
	if (sendto(fd, &h, sizeof(h), 0, (const struct sockaddr *)ss, len) < 0) {
		r = errno;
		close(fd);
		return r;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char buf[256];
		ssize_t n;
		long ms;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = 1000 - ((now.tv_sec - start.tv_sec) * 1000 +
			     (now.tv_nsec - start.tv_nsec) / 1000000);
		if (ms <= 0 || poll(&pfd, 1, (int)ms) <= 0)
			break;
		n = recv(fd, buf, sizeof(buf), 0);
		/* A raw socket sees the IP header first. */
		if (n >= 28) {
			const struct icmphdr *rep = (const void *)(buf + (buf[0] & 0x0f) * 4);

			if (rep->type == ICMP_ECHOREPLY && rep->un.echo.id == h.un.echo.id) {
				close(fd);
				return 0;
			}
		}
	}
	close(fd);
	return ETIMEDOUT;
}

/* One request, in the probe child: raw syscalls and the stack only (no allocation in a clone3
 * child of a process that may have threads). */
static int probe_one(const struct probe_req *q)
{
	static const char payload[] = "warren-probe";
	struct timeval tv = { .tv_sec = 2 };
	struct sockaddr_storage ss;
	socklen_t len;
	int family, fd, r = 0;

	family = to_sockaddr(q->ip, q->port, &ss, &len);
	if (family < 0)
		return EINVAL;
	if (q->op == PROBE_ICMP_ECHO)
		return probe_icmp(&ss, len);

	fd = socket(family, (q->op == PROBE_TCP_CONNECT ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return errno;
	/* An allowed connect to a live listener is immediate; bound the others (ARP, no route). */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	switch (q->op) {
	case PROBE_TCP_CONNECT:
		if (connect(fd, (struct sockaddr *)&ss, len) < 0)
			r = errno;
		break;
	case PROBE_UDP_SENDTO:
		if (sendto(fd, payload, sizeof(payload), 0, (struct sockaddr *)&ss, len) < 0)
			r = errno;
		break;
	case PROBE_UDP_FLOOD: {
		unsigned refused = 0;

		for (unsigned i = 0; i < q->count; i++) {
			if (sendto(fd, payload, sizeof(payload), 0, (struct sockaddr *)&ss,
				   len) == 0)
				continue;
			if (errno != EPERM) {
				r = errno;
				break;
			}
			refused++;
		}
		if (r == 0 && refused == q->count && refused > 0)
			r = EPERM;
		break;
	}
	case PROBE_UDP_CONNECT:
		if (connect(fd, (struct sockaddr *)&ss, len) < 0 ||
		    send(fd, payload, sizeof(payload), 0) < 0)
			r = errno;
		break;
	default:
		r = EINVAL;
	}
	close(fd);
	return r;
}

static _noreturn_ void probe_main(int sock, int netns_fd)
{
	int r = 0;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (setns(netns_fd, CLONE_NEWNET) < 0)
		r = errno;
	/* The first reply says whether the child made it into the namespace. */
	if (send(sock, &r, sizeof(r), 0) != sizeof(r) || r)
		_exit(1);
	for (;;) {
		struct probe_req q;

		if (recv(sock, &q, sizeof(q), 0) != sizeof(q) || q.op == PROBE_EXIT)
			_exit(0);
		q.ip[sizeof(q.ip) - 1] = '\0';
		r = probe_one(&q);
		if (send(sock, &r, sizeof(r), 0) != sizeof(r))
			_exit(1);
	}
}

struct probe *probe_start(int cgroup_fd, int netns_fd)
{
	int sv[2], pidfd = -1, r = -1;
	struct clone_args a = {
		.flags = CLONE_INTO_CGROUP | CLONE_PIDFD,
		.pidfd = (uintptr_t)&pidfd,
		.cgroup = (uint64_t)cgroup_fd,
		.exit_signal = SIGCHLD,
	};
	struct probe *p = NULL;
	pid_t pid;

	for (int i = 0; i < MAX_PROBES && !p; i++)
		if (probes[i].pid <= 0)
			p = &probes[i];
	cr_assert(p, "too many probes");
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = sys_clone3(&a);
	if (pid < 0)
		tn_skip_or_fail(pid, "clone3(CLONE_INTO_CGROUP)");
	if (pid == 0) {
		close(sv[0]);
		probe_main(sv[1], netns_fd);
	}
	close(sv[1]);
	*p = (struct probe){ .pid = pid, .pidfd = pidfd, .sock = sv[0] };
	cr_assert_eq(recv(p->sock, &r, sizeof(r), 0), (ssize_t)sizeof(r), "probe died at start");
	cr_assert_eq(r, 0, "probe: setns into the test netns: %s", strerror(r));
	return p;
}

static int probe_request(struct probe *p, struct probe_req *q)
{
	int r;

	cr_assert_eq(send(p->sock, q, sizeof(*q), 0), (ssize_t)sizeof(*q), "probe gone");
	cr_assert_eq(recv(p->sock, &r, sizeof(r), 0), (ssize_t)sizeof(r), "probe died");
	return r;
}

int probe_flood(struct probe *p, const char *ip, uint16_t port, unsigned count)
{
	struct probe_req q = { .op = PROBE_UDP_FLOOD, .port = port, .count = count };

	snprintf(q.ip, sizeof(q.ip), "%s", ip);
	return probe_request(p, &q);
}

int probe_do(struct probe *p, enum probe_op op, const char *ip, uint16_t port)
{
	struct probe_req q = { .op = op, .port = port };

	snprintf(q.ip, sizeof(q.ip), "%s", ip);
	return probe_request(p, &q);
}

void probe_stop(struct probe *p)
{
	if (p->pid <= 0)
		return;
	(void)sys_pidfd_send_signal(p->pidfd, SIGKILL, NULL, 0);
	(void)waitpid(p->pid, NULL, 0);
	close(p->pidfd);
	close(p->sock);
	p->pid = 0;
}

/* ---- node side ---------------------------------------------------------------------------- */

static int node_socket(int type, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr = tn.br_addr };
	int one = 1, fd;

	fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	cr_assert_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0, "bind %s:%u: %s", tn.br_ip,
		     port, strerror(errno));
	return fd;
}

int tn_listen_tcp(uint16_t port)
{
	int fd = node_socket(SOCK_STREAM, port);

	cr_assert_eq(listen(fd, 64), 0);
	return fd;
}

int tn_bind_udp(uint16_t port)
{
	return node_socket(SOCK_DGRAM, port);
}

bool tn_accept(int lfd, int timeout_ms, char peer[INET6_ADDRSTRLEN])
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return false;
	fd = accept4(lfd, (struct sockaddr *)&sin, &len, SOCK_CLOEXEC);
	if (fd < 0)
		return false;
	inet_ntop(AF_INET, &sin.sin_addr, peer, INET6_ADDRSTRLEN);
	close(fd);
	return true;
}

ssize_t tn_recv_udp(int fd, int timeout_ms, char peer[INET6_ADDRSTRLEN])
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	char buf[2048];
	ssize_t n;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return -1;
	n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&sin, &len);
	if (n >= 0)
		inet_ntop(AF_INET, &sin.sin_addr, peer, INET6_ADDRSTRLEN);
	return n;
}

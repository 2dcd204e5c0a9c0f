/* SPDX-License-Identifier: Apache-2.0 */
/* What the allowlist costs: attach + detach per sandbox, a live update, and one allowed TCP
 * connect / UDP sendto with and without the programs. Run as root:
 *
 *   build/bench/allowlist [iterations]
 *
 * It builds its own cgroup2 directory, network namespace, bridge and veth (198.19.X.0/24, X from
 * the pid), runs a child in both, and removes everything at the end. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allowlist.h"
#include "bridge.h"
#include "macro.h"
#include "syscall.h"

#define MAX_SAMPLES 200000

static char cg_parent[200], cg_path[256];
static struct in_addr br_addr;
static char br_ip[INET_ADDRSTRLEN];
static uint64_t samples[MAX_SAMPLES];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *s, size_t n)
{
	uint64_t sum = 0;

	qsort(s, n, sizeof(*s), cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	printf("  %-44s n=%-6zu median %8.2f us  mean %8.2f us  p99 %8.2f us\n", what, n,
	       s[n / 2] / 1000.0, sum / (double)n / 1000.0, s[n * 99 / 100] / 1000.0);
}

static int die(int r, const char *what)
{
	fprintf(stderr, "bench-net-allowlist: %s: %s\n", what, strerror(r < 0 ? -r : r));
	return 1;
}

/* ---- the child in the sandbox: a command at a time over a socketpair -------------------- */

struct cmd {
	int op; /* 0 tcp, 1 udp, 2 exit */
	unsigned n;
	uint16_t port;
};

/* Times n connects (or sendtos) and sends the samples back. Raw syscalls and static memory
 * only: this is a clone3 child. */
static _noreturn_ void child_main(int sock, int netns_fd)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr = br_addr };

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (setns(netns_fd, CLONE_NEWNET) < 0)
		_exit(1);
	for (;;) {
		struct cmd c;
		int ufd = -1;

		if (recv(sock, &c, sizeof(c), 0) != sizeof(c) || c.op == 2 || c.n > MAX_SAMPLES)
			_exit(0);
		sin.sin_port = htons(c.port);
		if (c.op == 1)
			ufd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		for (unsigned i = 0; i < c.n; i++) {
			uint64_t t0, t1;
			int fd, r;

			if (c.op == 0) {
				struct linger lg = { .l_onoff = 1, .l_linger = 0 };

				fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
				t0 = now_ns();
				r = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
				t1 = now_ns();
				/* RST on close: no TIME_WAIT pile-up over thousands of connects. */
				(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
				close(fd);
			} else {
				t0 = now_ns();
				r = (int)sendto(ufd, "x", 1, 0, (struct sockaddr *)&sin,
						sizeof(sin));
				t1 = now_ns();
			}
			samples[i] = r < 0 ? UINT64_MAX : t1 - t0;
		}
		if (ufd >= 0)
			close(ufd);
		for (size_t off = 0; off < c.n * sizeof(uint64_t);) {
			ssize_t w = write(sock, (char *)samples + off,
					  MIN((size_t)65536, c.n * sizeof(uint64_t) - off));

			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
	}
}

static int child_run(int sock, int op, unsigned n, uint16_t port, const char *what)
{
	struct cmd c = { .op = op, .n = n, .port = port };
	size_t off = 0, failed = 0;

	if (send(sock, &c, sizeof(c), 0) != sizeof(c))
		return -EIO;
	while (off < n * sizeof(uint64_t)) {
		ssize_t r = read(sock, (char *)samples + off, n * sizeof(uint64_t) - off);

		if (r <= 0)
			return -EIO;
		off += (size_t)r;
	}
	for (unsigned i = 0; i < n; i++)
		failed += samples[i] == UINT64_MAX;
	if (failed)
		fprintf(stderr, "  %s: %zu of %u failed\n", what, failed, n);
	/* Failures sort last (UINT64_MAX): report the successes only. */
	qsort(samples, n, sizeof(*samples), cmp_u64);
	if (n > failed)
		report(what, samples, n - failed);
	return 0;
}

static void *acceptor(void *arg)
{
	int lfd = (int)(intptr_t)arg;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		close(fd);
	}
}

/* ---- main --------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	unsigned iters = argc > 1 ? (unsigned)atoi(argv[1]) : 2000, x = (unsigned)getpid() % 256;
	struct net_bridge_config bc;
	struct net_bridge *br = NULL;
	struct net_veth veth = {};
	struct allowlist *al = NULL;
	struct allowlist_sandbox *sb = NULL;
	struct allowlist_rule one, many[200];
	struct in_addr sb_addr;
	char sb_ip[INET_ADDRSTRLEN], name[IFNAMSIZ];
	int cg_fd = -1, netns_fd = -1, self_ns, lfd, ufd, sv[2], pidfd = -1, r, ret = 1;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	pthread_t thr;
	uint64_t t0;
	pid_t pid;

	if (iters == 0 || iters > MAX_SAMPLES)
		iters = 2000;
	snprintf(br_ip, sizeof(br_ip), "198.19.%u.1", x);
	snprintf(sb_ip, sizeof(sb_ip), "198.19.%u.2", x);
	inet_pton(AF_INET, br_ip, &br_addr);
	inet_pton(AF_INET, sb_ip, &sb_addr);

	snprintf(cg_parent, sizeof(cg_parent), "/sys/fs/cgroup/unified/warren-bench-net-%d",
		 (int)getpid());
	snprintf(cg_path, sizeof(cg_path), "%s/sandbox", cg_parent);
	if (mkdir(cg_parent, 0755) < 0 || mkdir(cg_path, 0755) < 0)
		return die(-errno, "mkdir cgroup");
	cg_fd = open(cg_path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);

	self_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (unshare(CLONE_NEWNET) < 0)
		return die(-errno, "unshare");
	netns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (setns(self_ns, CLONE_NEWNET) < 0)
		return die(-errno, "setns back");
	close(self_ns);

	net_bridge_config_default(&bc);
	snprintf(bc.name, sizeof(bc.name), "wbb%d", (int)getpid());
	bc.addr = br_addr;
	bc.prefixlen = 24;
	r = net_bridge_open(&bc, &br);
	if (r < 0)
		return die(r, "net_bridge_open");
	snprintf(name, sizeof(name), "wbv%d", (int)getpid());
	r = net_veth_add(br, netns_fd, name, "eth0", sb_addr, &veth);
	if (r < 0) {
		die(r, "net_veth_add");
		goto out;
	}

	t0 = now_ns();
	r = allowlist_open(&al);
	if (r < 0) {
		die(r, "allowlist_open");
		goto out;
	}
	printf("allowlist_open (load + verify 5 programs, maps, ring buffer): %.2f ms\n",
	       (now_ns() - t0) / 1e6);

	r = allowlist_rule_parse("tcp", br_ip, "5001", &one);
	for (int i = 0; i < 200; i++) {
		char cidr[32];

		/* 199 other /32s in the same /24 plus one that matches: a long allowlist. */
		snprintf(cidr, sizeof(cidr), "198.19.%u.%d", x, i == 0 ? 1 : 10 + i / 4);
		r = allowlist_rule_parse(i % 2 ? "udp" : "tcp", cidr, i == 0 ? "5001" : "1000-2000",
					 &many[i]);
		many[i].port_lo = many[i].port_hi = (uint16_t)(i == 0 ? 5001 : 1000 + i);
		many[i].port_hi = many[i].port_lo;
	}

	printf("\nper sandbox (%u iterations):\n", iters);
	{
		static uint64_t a[MAX_SAMPLES], d[MAX_SAMPLES], u[MAX_SAMPLES];
		const struct {
			const char *name;
			const struct allowlist_rule *rules;
			size_t n;
		} sets[] = {
			{ "1 rule", &one, 1 },
			{ "200 rules", many, 200 },
		};

		/* The first program of an attach type on the node flips a kernel static key (code
		 * patching) and the last one's detach flips it back: measure both the lone sandbox
		 * and the steady state, with another sandbox attached throughout. */
		char other_path[256];
		struct allowlist_sandbox *other = NULL;
		int other_fd;

		snprintf(other_path, sizeof(other_path), "%s/other", cg_parent);
		if (mkdir(other_path, 0755) < 0)
			return die(-errno, "mkdir other");
		other_fd = open(other_path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);

		for (size_t s = 0; s < 2 * ELEMENTSOF(sets); s++) {
			char label[96];
			bool steady = s >= ELEMENTSOF(sets);
			size_t k = s % ELEMENTSOF(sets);

			if (steady && !other) {
				r = allowlist_attach(al, other_fd, 2, &one, 1, &other);
				if (r < 0) {
					die(r, "allowlist_attach other");
					goto out;
				}
			}

			for (unsigned i = 0; i < iters; i++) {
				t0 = now_ns();
				r = allowlist_attach(al, cg_fd, 1, sets[k].rules, sets[k].n, &sb);
				a[i] = now_ns() - t0;
				if (r < 0) {
					die(r, "allowlist_attach");
					goto out;
				}
				t0 = now_ns();
				r = allowlist_update(sb, sets[k].rules, sets[k].n);
				u[i] = now_ns() - t0;
				if (r < 0) {
					die(r, "allowlist_update");
					goto out;
				}
				t0 = now_ns();
				sb = allowlist_detach(sb);
				d[i] = now_ns() - t0;
			}
			for (unsigned i = 0; i < iters; i++)
				d[i] += a[i];
			snprintf(label, sizeof(label), "attach, %s%s", sets[k].name,
				 steady ? " (steady)" : " (lone)");
			report(label, a, iters);
			snprintf(label, sizeof(label), "attach + detach, %s%s", sets[k].name,
				 steady ? " (steady)" : " (lone)");
			report(label, d, iters);
			snprintf(label, sizeof(label), "live update, %s", sets[k].name);
			report(label, u, iters);
		}
		other = allowlist_detach(other);
		close(other_fd);
		(void)rmdir(other_path);
	}

	/* The child, cloned before the acceptor thread exists. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return die(-errno, "socketpair");
	{
		struct clone_args ca = {
			.flags = CLONE_INTO_CGROUP | CLONE_PIDFD,
			.pidfd = (uintptr_t)&pidfd,
			.cgroup = (uint64_t)cg_fd,
			.exit_signal = SIGCHLD,
		};

		pid = sys_clone3(&ca);
		if (pid < 0) {
			die(pid, "clone3");
			goto out;
		}
		if (pid == 0) {
			close(sv[0]);
			child_main(sv[1], netns_fd);
		}
		close(sv[1]);
	}

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sin.sin_addr = br_addr;
	sin.sin_port = htons(5001);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(lfd, 4096) < 0) {
		die(-errno, "listen");
		goto out_child;
	}
	ufd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sin.sin_port = htons(5002);
	if (bind(ufd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		die(-errno, "bind udp");
		goto out_child;
	}
	pthread_create(&thr, NULL, acceptor, (void *)(intptr_t)lfd);

	printf("\nfrom inside the sandbox, to the node over the veth (%u each):\n", iters);
	{
		struct allowlist_rule udp_one = one;

		udp_one.proto = ALLOWLIST_PROTO_ANY;
		udp_one.port_lo = 5001;
		udp_one.port_hi = 5002;
		many[1] = udp_one;
		child_run(sv[0], 0, 500, 5001, "warm-up");
		/* Three rounds, alternating, so that drift (caches, the acceptor thread's
		 * scheduling) does not pass for a cost of the programs. */
		for (int round = 1; round <= 3; round++) {
			printf(" round %d\n", round);
			child_run(sv[0], 0, iters, 5001, "TCP connect, no programs");
			child_run(sv[0], 1, iters * 10, 5002, "UDP sendto, no programs");
			r = allowlist_attach(al, cg_fd, 1, &udp_one, 1, &sb);
			if (r < 0) {
				die(r, "allowlist_attach");
				goto out_child;
			}
			child_run(sv[0], 0, iters, 5001, "TCP connect, allowlist of 1 rule");
			child_run(sv[0], 1, iters * 10, 5002, "UDP sendto, allowlist of 1 rule");
			r = allowlist_update(sb, many, 200);
			if (r < 0) {
				die(r, "allowlist_update");
				goto out_child;
			}
			child_run(sv[0], 0, iters, 5001, "TCP connect, allowlist of 200 rules");
			child_run(sv[0], 1, iters * 10, 5002, "UDP sendto, allowlist of 200 rules");
			sb = allowlist_detach(sb);
		}
	}
	ret = 0;

out_child:
	(void)sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
	(void)waitpid(pid, NULL, 0);
out:
	sb = allowlist_detach(sb);
	al = allowlist_free(al);
	if (veth.ifindex > 0)
		(void)net_veth_remove(&veth);
	if (br) {
		(void)net_bridge_remove(br);
		net_bridge_free(br);
	}
	if (netns_fd >= 0)
		close(netns_fd);
	if (cg_fd >= 0)
		close(cg_fd);
	for (int i = 0; i < 2000 && rmdir(cg_path) < 0 && errno == EBUSY; i++)
		usleep(1000);
	(void)rmdir(cg_parent);
	return ret;
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container.h"
#include "log.h"
#include "syscall.h"
#include "wire.h"

/* The spawn zygote. clone3 from the daemon copies the daemon's page tables into every new
 * sandbox (fork semantics) and the exec of warren-init throws the copy away again: with a
 * grown daemon that was the largest cost of a spawn. The zygote is a small static program
 * (warren-zygote, zygote-main.c) the daemon starts per loop, whose whole address space is a
 * few pages, and does only this: take a spawn_config over a SOCK_SEQPACKET socket, clone the
 * init with CLONE_PARENT (so the init is the daemon's child, reaped by its loops as before),
 * answer with the pid and pidfd. The daemon's loop waits for that answer (the clone only);
 * the child's setup runs on as before. The seccomp programs travel with each request: the
 * zygote holds no state. */

/* The descriptors and strings a request carries, in this order; absent ones are left out
 * and their bit is clear. */
enum { FD_CGROUP, FD_STDIO, FD_USERNS, FD_NETNS, FD_INIT, FD_SYNC, FD_ERR, FD_EXEC, _FD_MAX };
enum { STR_ID, STR_ROOTFS, STR_SCRATCH, STR_CWD, STR_RESOLV, STR_APPARMOR, _STR_MAX };

_Static_assert(_FD_MAX <= WIRE_MAX_FDS, "a request's fds fit one message");

/* The header; then the seccomp programs (n_logged and n_quiet instructions: the header's size
 * keeps them aligned), then the strings. */
struct zygote_req {
	uint32_t fd_mask, str_mask;
	uint32_t n_argv, n_envp;
	uint64_t disk_bytes;
	uint32_t uid_base, uid_count;
	uint8_t no_landlock, host_network, seccomp;
	uint16_t n_logged, n_quiet;
};
_Static_assert(sizeof(struct zygote_req) % sizeof(struct sock_filter) == 0, "aligned programs");

struct zygote_reply {
	int32_t err; /* 0, or a negative errno */
	int32_t pid;
};

/* An HTTP body is at most 1 MiB, and the command, environment and paths come from one. */
#define REQ_MAX ((2u << 20) + 4096)

/* One message and up to max fds (close-on-exec); returns its length, 0 at EOF, or -errno. A
 * message cut short by the buffer is -EMSGSIZE, its fds closed. */
static ssize_t recv_with_fds(int sock, void *buf, size_t size, int *fds, unsigned max,
			     unsigned *ret_n)
{
	char control[CMSG_SPACE(sizeof(int) * _FD_MAX)];
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
			     .msg_controllen = sizeof(control) };
	ssize_t n;

	*ret_n = 0;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			unsigned k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (unsigned i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (*ret_n < max)
					fds[(*ret_n)++] = fd;
				else
					close(fd);
			}
		}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		for (unsigned i = 0; i < *ret_n; i++)
			close(fds[i]);
		*ret_n = 0;
		return -EMSGSIZE;
	}
	return n;
}

/* ---- the daemon's side ---------------------------------------------------------------------- */

int zygote_spawn(int sock, const struct spawn_config *c, const struct spawn_fds *f,
		 pid_t *ret_pid, int *ret_pidfd)
{
	const char *strs[_STR_MAX] = {
		[STR_ID] = c->id, [STR_ROOTFS] = c->rootfs, [STR_SCRATCH] = c->scratch,
		[STR_CWD] = c->cwd, [STR_RESOLV] = c->resolv_conf,
		[STR_APPARMOR] = c->apparmor_profile,
	};
	const int all_fds[_FD_MAX] = {
		[FD_CGROUP] = c->cgroup_fd, [FD_STDIO] = c->stdio_fd,
		[FD_USERNS] = c->userns_fd > 0 ? c->userns_fd : -1,
		[FD_NETNS] = c->netns_fd > 0 ? c->netns_fd : -1,
		[FD_INIT] = c->init_fd, [FD_SYNC] = f->sync_rd, [FD_ERR] = f->err_wr,
		[FD_EXEC] = c->exec_fd > 0 ? c->exec_fd : -1,
	};
	const struct profile_seccomp *sp = c->seccomp_profile;
	struct zygote_req h = {
		.disk_bytes = c->disk_bytes, .uid_base = c->uid_base, .uid_count = c->uid_count,
		.no_landlock = c->no_landlock, .host_network = c->host_network, .seccomp = !!sp,
		.n_logged = sp ? sp->logged.len : 0, .n_quiet = sp ? sp->quiet.len : 0,
	};
	struct zygote_reply reply;
	_cleanup_free_ char *buf = NULL;
	int fds[_FD_MAX], got[1];
	unsigned n_fds = 0, n_got;
	size_t len = sizeof(h) + (h.n_logged + h.n_quiet) * sizeof(struct sock_filter);
	ssize_t n;
	char *at;
	int r;

	for (unsigned i = 0; i < _STR_MAX; i++)
		if (strs[i]) {
			h.str_mask |= 1u << i;
			len += strlen(strs[i]) + 1;
		}
	len += wire_strv_bytes(c->argv, &h.n_argv) + wire_strv_bytes(c->envp, &h.n_envp);
	if (len > REQ_MAX)
		return -E2BIG;
	for (unsigned i = 0; i < _FD_MAX; i++)
		if (all_fds[i] >= 0) {
			h.fd_mask |= 1u << i;
			fds[n_fds++] = all_fds[i];
		}

	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	at = buf + sizeof(h);
	if (sp) {
		at = mempcpy(at, sp->logged.filter, h.n_logged * sizeof(struct sock_filter));
		at = mempcpy(at, sp->quiet.filter, h.n_quiet * sizeof(struct sock_filter));
	}
	for (unsigned i = 0; i < _STR_MAX; i++)
		if (strs[i])
			at = stpcpy(at, strs[i]) + 1;
	at = wire_put_strv(at, c->argv, h.n_argv);
	wire_put_strv(at, c->envp, h.n_envp);

	/* Whatever goes wrong on the way is -EPIPE: the zygote is gone or lost its way, and the
	 * caller starts another (backend.h). */
	r = wire_send(sock, buf, len, fds, n_fds, 0);
	if (r < 0) {
		log_warn_errno(r, "sandbox %s: sending to the spawn zygote", c->id);
		return -EPIPE;
	}
	n = recv_with_fds(sock, &reply, sizeof(reply), got, 1, &n_got);
	if (n != sizeof(reply) || (reply.err == 0 && (n_got != 1 || reply.pid <= 0))) {
		if (n_got == 1)
			close(got[0]);
		log_warn_errno(n < 0 ? (int)n : -EIO, "sandbox %s: no answer from the spawn zygote",
			       c->id);
		return -EPIPE;
	}
	if (reply.err < 0)
		return reply.err;
	*ret_pid = reply.pid;
	*ret_pidfd = got[0];
	return 0;
}

/* ---- the zygote's side ---------------------------------------------------------------------- */

/* The next NUL-terminated string of [*at, end), or NULL if there is none. */
static char *take_str(char **at, char *end)
{
	char *s = *at, *nul = memchr(s, '\0', end - s);

	if (!nul)
		return NULL;
	*at = nul + 1;
	return s;
}

static char **take_strv(char **at, char *end, uint32_t n)
{
	char **v = calloc((size_t)n + 1, sizeof(char *));

	for (uint32_t i = 0; v && i < n; i++)
		if (!(v[i] = take_str(at, end))) {
			free(v);
			return NULL;
		}
	return v;
}

/* One request: unpacks it and clones. The daemon wrote it, so a malformed one is a bug:
 * -EINVAL. */
static int serve(char *buf, size_t len, const int *fds, unsigned n_fds, pid_t *ret_pid,
		 int *ret_pidfd)
{
	_cleanup_free_ char **argv = NULL, **envp = NULL;
	char *strs[_STR_MAX] = { 0 }, *at, *end = buf + len;
	struct profile_seccomp seccomp = { .name = "" };
	int fd[_FD_MAX];
	struct zygote_req h;
	struct spawn_config c;
	struct spawn_fds f;
	unsigned k = 0;

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	at = buf + sizeof(h) + (h.n_logged + h.n_quiet) * sizeof(struct sock_filter);
	if (at > end)
		return -EINVAL;
	/* The buffer is page-aligned and the header's size a multiple of an instruction's. */
	seccomp.logged = (struct sock_fprog){ .len = h.n_logged,
					      .filter = (struct sock_filter *)(buf + sizeof(h)) };
	seccomp.quiet = (struct sock_fprog){ .len = h.n_quiet,
					     .filter = seccomp.logged.filter + h.n_logged };
	for (unsigned i = 0; i < _FD_MAX; i++)
		fd[i] = h.fd_mask & (1u << i) && k < n_fds ? fds[k++] : -1;
	if (k != n_fds || fd[FD_STDIO] < 0 || fd[FD_INIT] < 0 || fd[FD_SYNC] < 0 || fd[FD_ERR] < 0)
		return -EINVAL;
	for (unsigned i = 0; i < _STR_MAX; i++)
		if (h.str_mask & (1u << i) && !(strs[i] = take_str(&at, end)))
			return -EINVAL;
	argv = take_strv(&at, end, h.n_argv);
	envp = take_strv(&at, end, h.n_envp);
	if (!argv || !envp)
		return -EINVAL;

	c = (struct spawn_config){
		.id = strs[STR_ID], .rootfs = strs[STR_ROOTFS], .scratch = strs[STR_SCRATCH],
		.disk_bytes = h.disk_bytes, .argv = h.n_argv ? argv : NULL, .envp = envp,
		.cwd = strs[STR_CWD], .cgroup_fd = fd[FD_CGROUP], .stdio_fd = fd[FD_STDIO],
		.uid_base = h.uid_base, .uid_count = h.uid_count, .no_landlock = h.no_landlock,
		.apparmor_profile = strs[STR_APPARMOR], .init_fd = fd[FD_INIT],
		.netns_fd = fd[FD_NETNS], .userns_fd = fd[FD_USERNS],
		.host_network = h.host_network, .resolv_conf = strs[STR_RESOLV],
		.exec_fd = fd[FD_EXEC],
	};
	if (h.seccomp)
		c.seccomp_profile = &seccomp;
	/* The daemon keeps the other ends; the child must not close anything of ours. */
	f = (struct spawn_fds){ .sync_rd = fd[FD_SYNC], .sync_wr = -1,
				.err_rd = -1, .err_wr = fd[FD_ERR] };
	return spawn_clone(&c, &f, true, ret_pid, ret_pidfd);
}

void zygote_main(int sock)
{
	static char buf[REQ_MAX] __attribute__((aligned(4096)));

	for (;;) {
		struct zygote_reply reply = { 0 };
		int fds[_FD_MAX], pidfd = -EBADF, r;
		unsigned n_fds;
		pid_t pid = 0;
		ssize_t n = recv_with_fds(sock, buf, REQ_MAX, fds, _FD_MAX, &n_fds);

		if (n == 0)
			_exit(0); /* the daemon closed its end */
		if (n < 0 && n != -EMSGSIZE)
			_exit(1);
		r = n < 0 ? (int)n : serve(buf, n, fds, n_fds, &pid, &pidfd);
		for (unsigned i = 0; i < n_fds; i++)
			close(fds[i]);
		reply = (struct zygote_reply){ .err = r < 0 ? r : 0, .pid = pid };
		r = wire_send(sock, &reply, sizeof(reply), &pidfd, pidfd >= 0 ? 1 : 0, 0);
		safe_close(pidfd);
		if (r < 0)
			_exit(1);
	}
}

int container_zygote_start(const char *path, const char *const *dirs, pid_t *ret_pid)
{
	const char *argv[10] = { "warren-zygote" };
	size_t n = 0;
	int sv[2], big = (int)REQ_MAX * 2;
	pid_t parent = getpid(), pid;

	while (dirs[n] && n < ELEMENTSOF(argv) - 2) {
		argv[n + 1] = dirs[n];
		n++;
	}
	if (n == 0 || dirs[n])
		return -EINVAL;
	if (access(path, X_OK) < 0)
		return -errno;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	/* A request may be as large as an HTTP body: make room for one (root may force it). */
	if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0 ||
	    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0) {
		int r = -errno;

		close(sv[0]);
		close(sv[1]);
		return r;
	}
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0) {
		/* The daemon's Ctrl-C or SIGTERM is the daemon's to handle: it closes the socket
		 * when it is done with us. Should it die instead, so do we. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
			_exit(1);
		/* The socket becomes fd 3; nothing else of the daemon's goes along: every fd a
		 * spawn needs comes with its request. */
		if (dup2(sv[1], 3) < 0)
			_exit(1);
		(void)sys_close_range(4, ~0U, 0);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	close(sv[1]);
	*ret_pid = pid;
	return sv[0];
}

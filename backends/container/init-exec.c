/* SPDX-License-Identifier: Apache-2.0 */
/* warren-init's exec channel (the protocol is in exec-proto.h).
 *
 * An exec used to be a copy of the daemon that joined the sandbox's namespaces, cgroups and
 * profiles from the outside. The init already is all of that, so it serves execs itself: the
 * daemon connects to the listening socket it left us as fd 3 and sends the command; we fork
 * with CLONE_VM | CLONE_VFORK (no page tables to copy, and we learn how the exec went before we
 * answer), the child takes a Landlock domain of its own, so that an exec can neither signal nor
 * ptrace nor reach the abstract sockets of the sandbox's command or of other execs (nor they
 * its), and execs. Its namespaces, cgroups, capabilities, no_new_privs, seccomp filter and
 * AppArmor profile are the init's, which are the sandbox's.
 *
 * The socket and every connection are close-on-exec, and the init is not dumpable (init.c), so
 * no process of the sandbox can hold, steal (/proc/1/fd, pidfd_getfd) or forge the channel. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container.h"
#include "exec-proto.h"
#include "init.h"
#include "profile.h"

#define MAX_EXECS (EXEC_CHANNEL_POLLFDS - 1)

struct exec_conn {
	int fd;     /* -1: closed, to be dropped from the table */
	pid_t pid;  /* the command, once it runs; 0 while the request is awaited */
	bool hup;   /* the daemon shut its side: the command is killed, stop polling */
};

static int listen_fd = -1;
static bool listen_polled;
static const sigset_t *command_mask;
static struct exec_conn conns[MAX_EXECS];
static unsigned n_conns;

/* One request at a time. Pages are only ever touched as far as a request reaches, and a large
 * one gives them back (a sandbox's init is small, and there may be thousands). */
static char request[EXEC_REQUEST_MAX] __attribute__((aligned(4096)));
#define REQUEST_KEEP (64 * 1024)
/* The vfork child's stack: we are suspended while it runs, so one is enough. */
static char child_stack[64 * 1024] __attribute__((aligned(16)));

void exec_channel_open(int fd, const sigset_t *mask)
{
	int accepting = 0, domain = 0, type = 0;
	socklen_t len = sizeof(int);

	command_mask = mask;
	if (fcntl(fd, F_GETFD) < 0)
		return; /* a sandbox without exec */
	/* Whatever it is, it must not reach the command. */
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) < 0 || !accepting ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 || domain != AF_UNIX ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET) {
		close(fd);
		return;
	}
	(void)fcntl(fd, F_SETFL, O_NONBLOCK);
	listen_fd = fd;
}

void exec_channel_close(void)
{
	if (listen_fd >= 0)
		close(listen_fd);
	listen_fd = -1;
}

static void compact(void)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n_conns; i++)
		if (conns[i].fd >= 0)
			conns[k++] = conns[i];
	n_conns = k;
}

static void conn_close(struct exec_conn *x)
{
	close(x->fd);
	x->fd = -1;
}

/* The daemon reads every reply: a failure means it is gone (or wedged), which ends the exec. */
static bool reply(struct exec_conn *x, uint32_t type, int32_t a, int32_t b)
{
	struct exec_reply r = { .type = type, .a = a, .b = b };

	return send(x->fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof(r);
}

/* The command's process group (it leads one: see exec_child()), and the command itself in case
 * it left the group. */
static void kill_command(struct exec_conn *x)
{
	kill(-x->pid, SIGKILL);
	kill(x->pid, SIGKILL);
	x->hup = true;
}

/* ---- the child -------------------------------------------------------------------------- */

struct child_args {
	char *const *argv, *const *envp;
	const char *cwd, *path;
	int fds[3];
	int conn;
	struct profile_landlock landlock;
	/* Written by the child before it exits instead of exec'ing; we share its memory. */
	volatile int step, err;
};

static _Noreturn void exec_fail(struct child_args *a, enum child_step step, int err)
{
	a->err = err > 0 ? err : EIO;
	a->step = step;
	_exit(127);
}

/* Runs on child_stack in our memory until it execs: system calls only, nothing that allocates
 * or takes a lock, no writes to our memory but a->step and a->err. */
static int exec_child(void *arg)
{
	struct child_args *a = arg;
	struct exec_reply pid_msg = { .type = EXEC_REPLY_PID };
	int fds[3], r;

	/* Its own process group, as the sandbox's command has: a kill on a closed channel takes
	 * whatever it started in the group. */
	if (setpgid(0, 0) < 0)
		exec_fail(a, STEP_PROCESS_GROUP, errno);
	/* As the old exec path did: the directory first, so that a bad one is the user's error,
	 * then the Landlock domain. */
	if (chdir(a->cwd) < 0)
		exec_fail(a, STEP_CHDIR, errno);
	r = profile_landlock_apply(&a->landlock);
	if (r < 0)
		exec_fail(a, STEP_LANDLOCK, -r);
	/* Our 0-2 are open, so the received fds sit above them; move any that does not first. */
	for (int i = 0; i < 3; i++) {
		fds[i] = a->fds[i];
		if (fds[i] < 3 && (fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3)) < 0)
			exec_fail(a, STEP_STDIO, errno);
	}
	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0) /* not close-on-exec: the command's stdio */
			exec_fail(a, STEP_STDIO, errno);
	/* The kernel attaches our pid to this message (SCM_CREDENTIALS, which the daemon asked
	 * for): it learns the command's pid in its own namespace, which we cannot tell it. */
	(void)send(a->conn, &pid_msg, sizeof(pid_msg), MSG_DONTWAIT | MSG_NOSIGNAL);
	if (sigprocmask(SIG_SETMASK, command_mask, NULL) < 0)
		exec_fail(a, STEP_SIGNALS, errno);
	r = init_execvpe(a->argv[0], a->argv, a->envp, a->path);
	exec_fail(a, STEP_EXEC, -r);
}

/* ---- requests --------------------------------------------------------------------------- */

static const char *env_path(char *const *envp)
{
	for (size_t i = 0; envp[i]; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			return envp[i] + 5;
	return DEFAULT_PATH;
}

/* Unpacks the request in request[0..len) and runs it; false if it is malformed. */
static bool run(struct exec_conn *x, size_t len, const int fds[3])
{
	struct exec_request h;
	struct child_args a = { .step = -1 };
	char *at = request + sizeof(h), *end = request + len, **v;
	size_t n;
	pid_t pid;

	if (len < sizeof(h))
		return false;
	memcpy(&h, request, sizeof(h));
	if (h.magic != EXEC_PROTO_MAGIC || h.argc == 0 || h.strings != len - sizeof(h) ||
	    h.argc > h.strings || h.envc > h.strings - h.argc)
		return false;
	n = (size_t)h.argc + h.envc + 2;
	v = malloc(n * sizeof(char *));
	if (!v)
		return false;
	/* argv, NULL, envp, NULL, then the working directory, which ends the message. */
	for (size_t i = 0, k = 0; i <= (size_t)h.argc + h.envc; i++) {
		char *nul = memchr(at, '\0', end - at);

		if (!nul) {
			free(v);
			return false;
		}
		if (i == h.argc)
			v[k++] = NULL;
		if (i == (size_t)h.argc + h.envc) {
			v[k] = NULL;
			a.cwd = at;
		} else
			v[k++] = at;
		at = nul + 1;
	}
	if (at != end || !a.cwd[0]) {
		free(v);
		return false;
	}
	a.argv = v;
	a.envp = v + h.argc + 1;
	a.path = env_path(a.envp);
	memcpy(a.fds, fds, sizeof(a.fds));
	a.conn = x->fd;
	a.landlock = (struct profile_landlock){ .abi = h.landlock_abi, .handled_fs = h.landlock_fs,
						.scoped = h.landlock_scoped,
						.restrict_flags = h.landlock_restrict_flags };

	pid = clone(exec_child, child_stack + sizeof(child_stack), CLONE_VM | CLONE_VFORK | SIGCHLD,
		    &a);
	free(v);
	if (pid < 0) {
		reply(x, EXEC_REPLY_FAILED, STEP_FORK, errno);
		conn_close(x);
	} else if (a.step >= 0) {
		/* It exited without exec'ing: reap it now, so that nothing of a failed exec is
		 * left for the next one to see. */
		(void)waitpid(pid, NULL, 0);
		reply(x, EXEC_REPLY_FAILED, a.step, a.err);
		conn_close(x);
	} else {
		x->pid = pid;
		if (!reply(x, EXEC_REPLY_STARTED, 0, 0))
			kill_command(x);
	}
	return true;
}

static void receive_request(struct exec_conn *x)
{
	char control[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = { .iov_base = request, .iov_len = sizeof(request) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
			     .msg_controllen = sizeof(control) };
	int fds[3];
	unsigned n_fds = 0;
	ssize_t n;

	n = recvmsg(x->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	for (struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (n_fds < 3)
				fds[n_fds++] = fd;
			else
				close(fd);
		}
	}
	if (n <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || n_fds != 3 ||
	    !run(x, (size_t)n, fds))
		conn_close(x); /* EOF before a request, or not one of the daemon's */
	for (unsigned i = 0; i < n_fds; i++)
		close(fds[i]);
	if (n > REQUEST_KEEP)
		(void)madvise(request, (size_t)n, MADV_DONTNEED);
}

/* ---- the loop's side -------------------------------------------------------------------- */

unsigned exec_channel_pollfds(struct pollfd *p)
{
	unsigned n = 0;

	/* With every slot taken, new connections wait in the backlog (then the daemon's connect
	 * fails with EAGAIN). */
	listen_polled = listen_fd >= 0 && n_conns < MAX_EXECS;
	if (listen_polled)
		p[n++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
	for (unsigned i = 0; i < n_conns; i++)
		p[n++] = (struct pollfd){ .fd = conns[i].hup ? -1 : conns[i].fd, .events = POLLIN };
	return n;
}

static struct exec_conn *conn_by_fd(int fd)
{
	for (unsigned i = 0; i < n_conns; i++)
		if (conns[i].fd == fd)
			return &conns[i];
	return NULL;
}

void exec_channel_dispatch(const struct pollfd *p, unsigned n)
{
	/* By fd, not by position: a reap since the poll may have closed some. New fds appear
	 * only at the end (accept), after every old one was looked at. */
	for (unsigned i = listen_polled ? 1 : 0; i < n; i++) {
		struct exec_conn *x;
		char byte;
		ssize_t got;

		if (!p[i].revents || p[i].fd < 0 || !(x = conn_by_fd(p[i].fd)))
			continue;
		if (x->pid == 0) {
			receive_request(x);
			continue;
		}
		/* The daemon sends nothing after its request: EOF (or anything) means stop. */
		got = recv(x->fd, &byte, 1, MSG_DONTWAIT);
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		kill_command(x);
	}
	compact();
	if (!listen_polled || !(p[0].revents & POLLIN))
		return;
	while (listen_fd >= 0 && n_conns < MAX_EXECS) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			break; /* EAGAIN, or a connection that went away */
		conns[n_conns] = (struct exec_conn){ .fd = fd };
		/* The daemon sends its request right after connecting: it is usually here. */
		receive_request(&conns[n_conns]);
		if (conns[n_conns].fd >= 0)
			n_conns++;
	}
}

bool exec_channel_reaped(pid_t pid, int code)
{
	struct exec_conn *x = NULL;

	for (unsigned i = 0; i < n_conns && !x; i++)
		if (conns[i].fd >= 0 && conns[i].pid == pid)
			x = &conns[i];
	if (!x)
		return false;
	reply(x, EXEC_REPLY_EXITED, code, 0);
	conn_close(x);
	compact();
	return true;
}

int init_execvpe(const char *file, char *const argv[], char *const envp[], const char *path)
{
	char buf[PATH_MAX];
	size_t flen = strlen(file);
	int r = -ENOENT;

	if (flen == 0)
		return -ENOENT;
	if (strchr(file, '/')) {
		execve(file, argv, envp);
		return -errno;
	}
	if (flen >= sizeof(buf) - 2)
		return -ENAMETOOLONG;

	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dlen = (size_t)(end - p);

		if (dlen == 0) /* an empty entry is the working directory, as in execvp */
			buf[0] = '.', dlen = 1;
		else if (dlen + 1 + flen + 1 <= sizeof(buf))
			memcpy(buf, p, dlen);
		else
			goto next;
		buf[dlen] = '/';
		memcpy(buf + dlen + 1, file, flen + 1);
		execve(buf, argv, envp);
		/* Keep looking after "not here"; remember a file that exists but cannot run. */
		if (errno == EACCES)
			r = -EACCES;
		else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP &&
			 errno != ENAMETOOLONG)
			return -errno;
next:
		if (*end == '\0')
			break;
		p = end;
	}
	return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "container.h"
#include "exec-proto.h"
#include "log.h"
#include "wire.h"

/* Linux 6.16: a socket that refuses SCM_RIGHTS (Debian 12's headers predate it). */
#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83
#endif

/* The daemon's side of an exec into a running container sandbox: a request on the exec channel
 * its init serves (exec-proto.h, init-exec.c). The init is pid 1 of the sandbox and already as
 * confined as any of its processes, so nothing here enters a namespace or a cgroup, and no
 * copy of the daemon is made: the daemon connects, sends, and reads the answers through its
 * ring. Everything the init sends is checked as input from the sandbox. */

/* Socket addresses are short: the daemon's state directory must leave room for the id. */
static int exec_addr(const char *path, struct sockaddr_un *ret, socklen_t *ret_len)
{
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(ret->sun_path))
		return -ENAMETOOLONG;
	*ret = (struct sockaddr_un){ .sun_family = AF_UNIX };
	memcpy(ret->sun_path, path, n + 1);
	*ret_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

int container_exec_listen(const char *path)
{
	_cleanup_close_ int fd = -EBADF;
	struct sockaddr_un sa;
	socklen_t len;
	int r;

	r = exec_addr(path, &sa, &len);
	if (r < 0)
		return r;
	/* Non-blocking for the init, which accepts after poll(); a listening socket has nothing
	 * else to block on. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A file left by a daemon that died with a sandbox of the same id is no one's. */
	(void)unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 64) < 0)
		return -errno;
	return TAKE_FD(fd);
}

int container_exec(const struct exec_config *c)
{
	struct profile_landlock landlock = { 0 };
	struct exec_request h = { .magic = EXEC_PROTO_MAGIC };
	const char *cwd = c->cwd ? c->cwd : "/";
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -EBADF;
	const int fds[3] = { c->stdin_fd, c->stdout_fd, c->stderr_fd };
	struct sockaddr_un sa;
	socklen_t sa_len;
	size_t len;
	char *at;
	int r, one = 1;

	if (!c->argv || !c->argv[0] || !*c->argv[0] || c->stdin_fd < 0 || c->stdout_fd < 0 ||
	    c->stderr_fd < 0 || !*cwd)
		return -EINVAL;
	r = exec_addr(c->socket_path, &sa, &sa_len);
	if (r < 0)
		return r;

	/* The command's Landlock domain: the same rules as the sandbox's own (spawn_plan_init),
	 * computed here so that an exec is confined whatever the init was started with. */
	if (!c->no_landlock)
		profile_landlock_plan(&landlock);
	h.landlock_abi = landlock.abi;
	h.landlock_restrict_flags = landlock.restrict_flags;
	h.landlock_fs = landlock.handled_fs;
	h.landlock_scoped = landlock.scoped;

	len = wire_strv_bytes(c->argv, &h.argc) + wire_strv_bytes(c->envp, &h.envc) +
	      strlen(cwd) + 1;
	if (len > EXEC_REQUEST_MAX - sizeof(h))
		return -E2BIG;
	h.strings = (uint32_t)len;
	len += sizeof(h);
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	at = wire_put_strv(buf + sizeof(h), c->argv, h.argc);
	at = wire_put_strv(at, c->envp, h.envc);
	strcpy(at, cwd);

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* The kernel then names the sender of each message: the command's pid (EXEC_REPLY_PID). */
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
		return -errno;
	/* The init has no descriptor to give us, and one it slipped in would be ours to close:
	 * where the kernel can, it refuses them (exec_event() closes them elsewhere). */
	(void)setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &(int){ 0 }, sizeof(int));
	/* Only a large command needs more than the default send buffer; root may force it. */
	if (len > 64 * 1024) {
		int size = (int)len + 4096;

		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0 &&
		    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) < 0)
			return -errno;
	}
	/* Never blocks: a full backlog is EAGAIN (the init has as many execs as it takes). */
	if (connect(fd, (struct sockaddr *)&sa, sa_len) < 0)
		return -errno;
	r = wire_send(fd, buf, len, fds, 3, MSG_DONTWAIT);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

int container_exec_event(const struct msghdr *mh, const void *data, size_t len,
			 struct exec_event *ret)
{
	const struct ucred *cred = NULL;
	struct exec_reply r;
	bool smuggled = false;

	/* First of all, descriptors nobody asked for, whatever else is wrong with the message. */
	for (struct cmsghdr *cm = CMSG_FIRSTHDR((struct msghdr *)mh); cm;
	     cm = CMSG_NXTHDR((struct msghdr *)mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				close(fd);
				smuggled = true;
			}
	if (smuggled || len != sizeof(r) || (mh->msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return -EPROTO;
	memcpy(&r, data, sizeof(r));
	if (r.zero != 0)
		return -EPROTO;
	*ret = (struct exec_event){ 0 };
	switch (r.type) {
	case EXEC_REPLY_PID:
		/* Only the credentials count, and only the kernel writes them: a sender can name
		 * no pid but its own (without CAP_SYS_ADMIN over its pid namespace, which the
		 * host's user namespace owns). */
		for (struct cmsghdr *cm = CMSG_FIRSTHDR((struct msghdr *)mh); cm;
		     cm = CMSG_NXTHDR((struct msghdr *)mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS &&
			    cm->cmsg_len == CMSG_LEN(sizeof(struct ucred)))
				cred = (const struct ucred *)CMSG_DATA(cm);
		if (!cred || cred->pid <= 0)
			return -EPROTO;
		ret->type = EXEC_EVENT_PID;
		ret->pid = cred->pid;
		return 0;
	case EXEC_REPLY_STARTED:
		ret->type = EXEC_EVENT_STARTED;
		return r.a == 0 && r.b == 0 ? 0 : -EPROTO;
	case EXEC_REPLY_FAILED:
		if (r.a < 0 || r.a >= _STEP_MAX || r.b <= 0 || r.b >= 4096)
			return -EPROTO;
		ret->type = EXEC_EVENT_FAILED;
		ret->err = -r.b;
		ret->failure = failure_of(r.a);
		/* The user's command or directory is not the node's problem. */
		if (ret->failure == EXEC_FAILURE_NODE)
			log_warn_errno(ret->err, "exec: %s", child_step_to_string(r.a));
		return 0;
	case EXEC_REPLY_EXITED:
		if (r.a < 0 || r.a > 255 || r.b != 0)
			return -EPROTO;
		ret->type = EXEC_EVENT_EXITED;
		ret->exit_code = r.a;
		return 0;
	default:
		return -EPROTO;
	}
}

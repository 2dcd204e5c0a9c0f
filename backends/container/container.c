/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "container.h"
#include "log.h"
#include "syscall.h"

/* The parent side of the container tier: it validates the config, computes every string and
 * array the child will need, clones, finishes what only the host can do (the v1 cgroups),
 * releases the child and returns; the child reports its exec through a pipe. Loop thread. */


void kill_and_reap(int pidfd)
{
	siginfo_t si;

	/* Killing a pid namespace's init kills the whole namespace; waitid returns only after
	 * the kernel has reaped everything in it. */
	(void)sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
	while (waitid((idtype_t)P_PIDFD, pidfd, &si, WEXITED) < 0 && errno == EINTR)
		;
}

/* What a child's error pipe held: nothing (it exec'd: 0), or a struct child_error (-errno).
 * A missing command or working directory is the user's mistake, not the node's problem, so
 * logged at debug level only. */
static int child_report(const void *buf, size_t len, const char *what, enum child_step *ret_step)
{
	struct child_error e;

	if (len == 0)
		return 0;
	if (len != sizeof(e))
		return -EIO;
	memcpy(&e, buf, sizeof(e));
	if (e.err <= 0 || e.step < 0 || e.step >= _STEP_MAX)
		return -EIO;
	if (ret_step)
		*ret_step = e.step;
	if (e.step == STEP_EXEC || e.step == STEP_CHDIR)
		return log_debug_errno(-e.err, "%s: %s", what, child_step_to_string(e.step));
	return log_warn_errno(-e.err, "%s: %s", what, child_step_to_string(e.step));
}

int pipe_above_stdio(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	/* The children move descriptors onto 0-2; a pipe end sitting there would be lost. */
	for (int i = 0; i < 2; i++)
		if (fds[i] < 3) {
			int fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);

			if (fd < 0)
				return -errno;
			close(fds[i]);
			fds[i] = fd;
		}
	return 0;
}

static int probe_once(const char **ret_why)
{
	struct clone_args args = { .flags = CLONE_PIDFD | NS_FLAGS | CLONE_NEWUSER | CLONE_NEWNET,
				   .exit_signal = SIGCHLD };
	_cleanup_close_ int pidfd = -EBADF;
	pid_t pid;

	args.pidfd = (uint64_t)(uintptr_t)&pidfd;
	/* Try the real thing: a child in all the namespaces a sandbox gets. */
	pid = sys_clone3(&args);
	if (pid == 0)
		_exit(0);
	if (pid < 0) {
		switch (pid) {
		case -ENOSYS:
			*ret_why = "the kernel lacks clone3 (Linux 5.3)";
			break;
		case -EPERM:
		case -ENOSPC:
			*ret_why = "user namespaces are disabled (user.max_user_namespaces)";
			break;
		case -EINVAL:
			*ret_why = "the kernel lacks a namespace type "
				   "(user, pid, mount, uts, ipc or net)";
			break;
		default:
			*ret_why = "clone3 with new namespaces failed";
		}
		return pid;
	}
	kill_and_reap(pidfd);
	return 0;
}

static struct {
	pthread_once_t once;
	int r;
	const char *why;
} probed = { .once = PTHREAD_ONCE_INIT };

static void probe_now(void)
{
	probed.r = probe_once(&probed.why);
}

/* Once per process: the real thing costs a fork of the daemon and a network namespace, and
 * every create asks. */
static int container_probe(const char **ret_why)
{
	pthread_once(&probed.once, probe_now);
	if (probed.r < 0)
		*ret_why = probed.why;
	return probed.r;
}

static int container_start(const struct spawn_config *c, struct spawn_result *ret)
{
	_cleanup_close_pair_ int sync[2] = { -EBADF, -EBADF }, err[2] = { -EBADF, -EBADF };
	_cleanup_close_ int pidfd = -EBADF;
	struct spawn_fds f;
	pid_t pid;
	int r;

	r = pipe_above_stdio(sync);
	if (r < 0)
		return r;
	r = pipe_above_stdio(err);
	if (r < 0)
		return r;
	f = (struct spawn_fds){ .sync_rd = sync[0], .sync_wr = sync[1],
				.err_rd = err[0], .err_wr = err[1] };
	/* Through the loop's zygote (no copy of the daemon's address space), or from here. */
	if (c->zygote_fd > 0)
		r = zygote_spawn(c->zygote_fd, c, &f, &pid, &pidfd);
	else
		r = spawn_clone(c, &f, false, &pid, &pidfd);
	if (r < 0)
		return r;

	sync[0] = safe_close(sync[0]);
	err[1] = safe_close(err[1]);

	if (c->cg) {
		r = cg_attach(c->cg, pid);
		if (r < 0) {
			log_warn_errno(r, "sandbox %s: attach to the v1 cgroups", c->id);
			goto fail;
		}
	}
	if (write(sync[1], "", 1) != 1) {
		r = errno_or(EIO);
		goto fail;
	}
	/* The child now mounts its root and execs the init; the caller learns how that went from
	 * ready_fd without waiting here (container_start_result()). */
	ret->pidfd = TAKE_FD(pidfd);
	ret->pid = pid;
	ret->ready_fd = TAKE_FD(err[0]);
	return 0;
fail:
	kill_and_reap(pidfd);
	return r;
}

enum exec_failure failure_of(enum child_step step)
{
	return step == STEP_EXEC ? EXEC_FAILURE_COMMAND :
	       step == STEP_CHDIR ? EXEC_FAILURE_CWD :
				    EXEC_FAILURE_NODE;
}

static int container_start_result(const char *id, const void *report, size_t len,
				  enum exec_failure *ret_failure)
{
	enum child_step step = _STEP_MAX;
	int r = child_report(report, len, id, &step);

	if (r < 0 && ret_failure)
		*ret_failure = failure_of(step);
	return r;
}

const struct backend_ops container_backend = {
	.name = "container",
	.probe = container_probe,
	.start = container_start,
	.start_result = container_start_result,
	.exec_listen = container_exec_listen,
	.exec = container_exec,
	.exec_event = container_exec_event,
};

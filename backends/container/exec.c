/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container.h"
#include "log.h"
#include "syscall.h"

/* The parent side of an exec into a running container sandbox: helper A joins the sandbox's
 * namespaces and cgroup, clones B into them with CLONE_PARENT (B is the daemon's child, so no
 * zombie ever goes to the host's init), and B confines itself and execs the command. Loop
 * thread. */

static const char *env_path(char *const *envp)
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			return envp[i] + 5;
	return DEFAULT_PATH;
}

static void reap(int pidfd)
{
	siginfo_t si;

	while (waitid((idtype_t)P_PIDFD, pidfd, &si, WEXITED) < 0 && errno == EINTR)
		;
}

int container_exec(const struct exec_config *c, struct spawn_result *ret,
			  enum exec_failure *ret_failure)
{
	enum child_step step = _STEP_MAX;
	_cleanup_close_pair_ int err[2] = { -EBADF, -EBADF }, pidp[2] = { -EBADF, -EBADF },
				 alive[2] = { -EBADF, -EBADF };
	_cleanup_close_ int a_pidfd = -EBADF, b_pidfd = -EBADF;
	struct exec_config cc = *c;
	struct exec_plan p = { .c = &cc };
	pid_t a, b = 0;
	int r;

	if (!c->argv || !c->argv[0] || !*c->argv[0] || c->sandbox_pidfd < 0)
		return -EINVAL;
	if (!cc.envp)
		cc.envp = (char *const *)no_env;
	p.path = env_path(cc.envp);

	if ((r = pipe_above_stdio(err)) < 0 || (r = pipe_above_stdio(pidp)) < 0 ||
	    (r = pipe_above_stdio(alive)) < 0)
		return r;
	p.err_wr = err[1];
	p.pid_wr = pidp[1];
	p.alive_rd = alive[0];
	if (!c->no_landlock)
		profile_landlock_plan(&p.landlock);

	struct clone_args args = {
		.flags = CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)&a_pidfd,
		.exit_signal = SIGCHLD,
	};
	if (c->cgroup_fd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)c->cgroup_fd;
	}
	a = sys_clone3(&args);
	if (a < 0)
		return log_warn_errno(a, "exec: clone3");
	if (a == 0)
		exec_child(&p);

	err[1] = safe_close(err[1]);
	pidp[1] = safe_close(pidp[1]);
	alive[0] = safe_close(alive[0]);

	/* A only sets up and clones: it is gone in a moment, whatever happened. */
	reap(a_pidfd);
	if (read(pidp[0], &b, sizeof(b)) == sizeof(b) && b > 0) {
		b_pidfd = sys_pidfd_open(b, 0);
		if (b_pidfd < 0) /* cannot happen to an unreaped child of ours */
			return log_warn_errno(b_pidfd, "exec: pidfd_open");
	}

	/* EOF once B has exec'd; an error from A, or from B, which then exits. */
	r = read_child_error(err[0], "exec", &step);
	if (r < 0) {
		if (b_pidfd >= 0) /* B is our child: no zombie goes anywhere else */
			kill_and_reap(b_pidfd);
		if (ret_failure)
			*ret_failure = failure_of(step);
		return r;
	}
	if (b_pidfd < 0)
		return -EIO;
	ret->pidfd = TAKE_FD(b_pidfd);
	ret->pid = b;
	return 0;
}

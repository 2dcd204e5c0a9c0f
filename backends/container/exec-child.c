/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "container.h"
#include "profile.h"
#include "syscall.h"

/* A command in a running sandbox takes two processes. A (the clone3 child, in the host's pid
 * namespace) joins the sandbox's cgroups and namespaces; joining a pid namespace only places
 * the caller's future children in it, so A clones B, which is a process of the sandbox and
 * execs the command. A clones B with CLONE_PARENT: B is the daemon's own child, which waits
 * for it, kills it and reaps it directly. A reports B's pid and exits at once.
 *
 * Why not let A wait for B: killed, A would hand B (killed by its PR_SET_PDEATHSIG) to the
 * host's reaper, not to the sandbox's init, since A is outside the sandbox's pid namespace;
 * and A, a copy of the daemon, would live as long as the command.
 * Async-signal-safe code only (see child.c). */

/* Descriptors A keeps, at these numbers, after dropping everything else of the daemon's. */
enum { FD_STDIN, FD_STDOUT, FD_STDERR, FD_ERR, FD_SANDBOX, FD_ALIVE, FD_PID, _FD_KEEP };

static _noreturn_ void exec_command(const struct exec_plan *p)
{
	const struct exec_config *c = p->c;
	enum child_step step;
	int r;

	close(FD_PID);
	/* B dies with the daemon thread that is its parent. If the daemon died before this
	 * point, its end of the alive pipe is closed. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(FD_ERR, STEP_PDEATHSIG, errno);
	r = child_writer_alive(FD_ALIVE);
	if (r < 0)
		child_fail(FD_ERR, STEP_PDEATHSIG, -r);

	/* setns(CLONE_NEWNS) put us at the sandbox's root. */
	if (chdir(c->cwd ? c->cwd : "/") < 0)
		child_fail(FD_ERR, STEP_CHDIR, errno);
	r = child_drop_caps();
	if (r < 0)
		child_fail(FD_ERR, STEP_CAPS, -r);
	/* The error pipe (and anything else above stdio) must close at exec. */
	r = sys_close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	if (r < 0)
		child_fail(FD_ERR, STEP_CLOSE_FDS, -r);
	/* The same layers as the init's, in the same order. Landlock's "/" is the sandbox's root,
	 * where setns(CLONE_NEWNS) put us. It is a domain of its own, with the same rules: a
	 * Landlock domain passes only from parent to child, and B descends from the daemon. */
	r = child_confine(c->apparmor_profile, &p->landlock, c->seccomp_profile, &step);
	if (r < 0)
		child_fail(FD_ERR, step, -r);
	r = child_execvpe(c->argv[0], c->argv, c->envp, p->path);
	child_fail(FD_ERR, STEP_EXEC, -r);
}

void exec_child(const struct exec_plan *p)
{
	const struct exec_config *c = p->c;
	int r;
	pid_t pid;

	r = child_reset_signals();
	if (r < 0)
		child_fail(p->err_wr, STEP_SIGNALS, -r);

	/* The v1 cgroups first: their files are only reachable, and writable, before we join
	 * the sandbox's mount and user namespaces. (The cgroup2 directory came with clone3.) */
	if (c->cg) {
		r = cg_attach_self(c->cg);
		if (r < 0)
			child_fail(p->err_wr, STEP_CGROUP_ATTACH, -r);
	}

	/* Keep only what B needs, so that no socket or pipe of the daemon's reaches the
	 * sandbox, not even for the moment before B's exec. */
	int fds[_FD_KEEP] = { c->stdin_fd, c->stdout_fd, c->stderr_fd, p->err_wr, c->sandbox_pidfd,
			      p->alive_rd, p->pid_wr };
	r = child_install_fds(fds, _FD_KEEP);
	if (r < 0)
		child_fail(p->err_wr, STEP_STDIO, -r);
	r = sys_close_range(_FD_KEEP, ~0U, 0);
	if (r < 0)
		child_fail(FD_ERR, STEP_CLOSE_FDS, -r);

	/* The host's user namespace owns the sandbox's other namespaces, so we join those first,
	 * as host root (the mount namespace puts us at the sandbox's root), and its own user
	 * namespace last (setns with both would judge the rest with the new credentials). */
	if (setns(FD_SANDBOX, CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC |
				      CLONE_NEWNET | CLONE_NEWCGROUP) < 0 ||
	    setns(FD_SANDBOX, CLONE_NEWUSER) < 0)
		child_fail(FD_ERR, STEP_SETNS, errno);
	close(FD_SANDBOX);
	/* Raw calls, as in spawn-child.c: glibc's set*id() would wait on the daemon's threads. */
	if (syscall(SYS_setgroups, 0, NULL) < 0)
		child_fail(FD_ERR, STEP_SETGROUPS, errno);
	if (syscall(SYS_setresgid, 0, 0, 0) < 0)
		child_fail(FD_ERR, STEP_SETGID, errno);
	if (syscall(SYS_setresuid, 0, 0, 0) < 0)
		child_fail(FD_ERR, STEP_SETUID, errno);

	/* A raw clone: glibc's fork() would run atfork handlers and take locks that another
	 * thread of the daemon may have held when we were cloned. */
	pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL, NULL, 0);
	if (pid < 0)
		child_fail(FD_ERR, STEP_FORK, errno);
	if (pid == 0)
		exec_command(p);

	/* B's pid in the host's namespace, which the daemon turns into a pidfd (B is its child
	 * and stays unreaped until it waits, so the pid cannot be reused meanwhile). */
	if (write(FD_PID, &pid, sizeof(pid)) != sizeof(pid))
		_exit(127);
	_exit(0);
}

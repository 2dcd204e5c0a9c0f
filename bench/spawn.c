/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "spawn.h"

extern char **environ;

int mntns_without_cgroup2(void)
{
	int ready[2], fd, status;
	char path[64], byte = 0;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(ready[0]);
		close(ready[1]);
		return -errno;
	}
	if (pid == 0) {
		/* Private first, so that the umount below cannot propagate to the host. */
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    umount2("/sys/fs/cgroup/unified", MNT_DETACH) < 0)
			byte = (char)errno;
		/* Stay until the parent has opened our namespace and kills us; a parent that dies
		 * first takes us along. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		(void)!write(ready[1], &byte, 1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &byte, 1) != 1)
		byte = EIO;
	if (byte) {
		fd = -byte;
	} else {
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	kill(pid, SIGKILL);
	close(ready[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return fd;
}

struct spawn_args {
	char *const *argv;
	int mntns_fd, log_fd, null_fd;
	const sigset_t *mask;
	int err;
};

/* Runs on the parent's memory until execve (CLONE_VM | CLONE_VFORK): system calls only. */
static int spawn_child(void *data)
{
	struct spawn_args *a = data;
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	/* Our copy of the handlers (no CLONE_SIGHAND), so the bench's stay as they are. */
	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	sigaction(SIGHUP, &dfl, NULL);
	sigaction(SIGPIPE, &dfl, NULL);
	sigprocmask(SIG_SETMASK, a->mask, NULL);
	if (setpgid(0, 0) < 0)
		goto fail;
	/* setns(CLONE_NEWNS) needs an unshared fs_struct: we have one (no CLONE_FS). */
	if (a->mntns_fd >= 0 && setns(a->mntns_fd, CLONE_NEWNS) < 0)
		goto fail;
	if (dup2(a->null_fd, STDIN_FILENO) < 0 || dup2(a->null_fd, STDOUT_FILENO) < 0 ||
	    dup2(a->log_fd >= 0 ? a->log_fd : a->null_fd, STDERR_FILENO) < 0)
		goto fail;
	execve(a->argv[0], a->argv, environ);
fail:
	a->err = errno;
	_exit(127);
}

int spawn_run(char *const argv[], int mntns_fd, int log_fd)
{
	/* The child borrows this stack until it execs; the parent sleeps meanwhile (VFORK). */
	static _Thread_local char stack[64 * 1024] __attribute__((aligned(16)));
	struct spawn_args a = { .argv = argv, .mntns_fd = mntns_fd, .log_fd = log_fd };
	sigset_t all, old;
	int status, r;
	pid_t pid;

	a.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (a.null_fd < 0)
		return -errno;
	/* No handler may run in the child on our memory before it reset them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	a.mask = &old;
	pid = clone(spawn_child, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
	r = pid < 0 ? -errno : 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(a.null_fd);
	if (r < 0)
		return r;
	while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (r < 0)
		return -errno;
	if (a.err)
		return -a.err;
	return status;
}

int fork_exec_wait(const char *path, char *const argv[])
{
	char *const envp[] = { "PATH=/bin:/usr/bin", NULL };
	int status, r;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execve(path, argv, envp);
		_exit(127);
	}
	while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	return r < 0 ? -errno : status;
}

const char *status_string(int status, char buf[32])
{
	if (status < 0)
		snprintf(buf, 32, "%s", strerror(-status));
	else if (WIFEXITED(status))
		snprintf(buf, 32, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, 32, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, 32, "status 0x%x", status);
	return buf;
}

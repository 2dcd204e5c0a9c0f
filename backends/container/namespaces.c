/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "macro.h"
#include "net.h"

static int write_map(pid_t pid, const char *file, uid_t base, uint32_t count)
{
	char path[64], line[64];
	_cleanup_close_ int fd = -EBADF;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	n = snprintf(line, sizeof(line), "0 %u %u\n", (unsigned)base, (unsigned)count);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, line, n) != n)
		return errno_or(EIO);
	return 0;
}

/* The child that carries a new user namespace until we hold it by fd: it waits for the pipe to
 * close and returns. It shares our memory (CLONE_VM, so no page tables are copied: that copy
 * of the daemon was the largest cost of a spawn) and runs on its own small stack; it touches
 * nothing but its argument and, should read fail, errno. */
struct carrier {
	int fd;        /* read end of the pipe whose closing lets it go */
	pid_t parent;  /* the daemon, which it must not outlive */
};

static int userns_carrier(void *arg)
{
	const struct carrier *c = arg;
	char b;

	/* It shares the daemon's fd table (the listening socket among them): should the daemon
	 * die while it waits, it must go too, or that socket would stay open. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != c->parent)
		return 1;
	(void)!read(c->fd, &b, 1);
	return 0;
}

int container_userns_new(uid_t base, uint32_t count)
{
	_cleanup_close_pair_ int hold[2] = { -EBADF, -EBADF };
	_cleanup_free_ char *stack = NULL;
	enum { STACK_SIZE = 16384 };
	char path[64];
	int fd = -EBADF, r = 0;
	struct carrier carrier;
	pid_t pid;

	if (pipe2(hold, O_CLOEXEC) < 0)
		return -errno;
	stack = malloc(STACK_SIZE);
	if (!stack)
		return -ENOMEM;
	carrier = (struct carrier){ .fd = hold[0], .parent = getpid() };
	/* CLONE_FILES: our closing the write end is the carrier's too. */
	pid = clone(userns_carrier, stack + STACK_SIZE,
		    CLONE_VM | CLONE_FILES | CLONE_NEWUSER | SIGCHLD, &carrier);
	if (pid < 0)
		return -errno;
	/* Host root writes the maps, so the kernel takes any range (and setgroups stays
	 * allowed inside). */
	r = write_map(pid, "uid_map", base, count);
	if (r >= 0)
		r = write_map(pid, "gid_map", base, count);
	if (r >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			r = -errno;
	}
	/* Closing the write end lets the carrier return; its stack is freed only once it is
	 * reaped. */
	hold[1] = safe_close(hold[1]);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	return r < 0 ? r : fd;
}

int container_netns_new(void)
{
	_cleanup_close_ int home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int fd, r;

	if (home < 0)
		return -errno;
	/* unshare moves only the calling thread; it comes home before returning. */
	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	r = net_loopback_up();
	fd = r < 0 ? r : open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0 && r >= 0)
		r = -errno;
	if (setns(home, CLONE_NEWNET) < 0)
		abort(); /* a loop thread left in a sandbox's network: nothing sane follows */
	return r < 0 ? r : fd;
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "floor.h"
#include "spawn.h"
#include "syscall.h"

/* The v1 controllers warren puts each sandbox in on hybrid nodes. */
static const char *const v1_controllers[FLOOR_V1_MAX] = { "memory", "pids", "cpu" };

#define FLOOR_NS \
	(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC)

enum floor_step {
	F_SYNC,
	F_CGROUP_NS,
	F_IDS,
	F_HOSTNAME,
	F_PRIVATE,
	F_TMPFS,
	F_MKDIR,
	F_OVERLAY,
	F_PIVOT,
	F_EXEC,
	_F_MAX,
};

static const char *const step_names[_F_MAX] = {
	[F_SYNC] = "wait for the parent",
	[F_CGROUP_NS] = "unshare(CLONE_NEWCGROUP)",
	[F_IDS] = "setresuid/setresgid to root of the sandbox",
	[F_HOSTNAME] = "sethostname",
	[F_PRIVATE] = "make / private",
	[F_TMPFS] = "mount the scratch tmpfs",
	[F_MKDIR] = "mkdir upper/work/root",
	[F_OVERLAY] = "mount the overlay",
	[F_PIVOT] = "pivot_root",
	[F_EXEC] = "exec /bin/true",
};

struct child_ctx {
	const struct floor_config *f;
	int sync_rd, sync_wr, err_rd, err_wr;
};

_noreturn_ static void child_fail(const struct child_ctx *c, enum floor_step step)
{
	int msg[2] = { step, errno };

	(void)!write(c->err_wr, msg, sizeof(msg));
	_exit(127);
}

/* The clone3 child of a threaded process: system calls and stack only until execve. */
_noreturn_ static void floor_child(const struct child_ctx *c)
{
	const struct floor_config *f = c->f;
	char *const argv[] = { "true", NULL };
	char *const envp[] = { "PATH=/bin:/usr/bin", "HOME=/root", NULL };
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	char byte;

	close(c->sync_wr);
	close(c->err_rd);
	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	sigaction(SIGHUP, &dfl, NULL);
	sigaction(SIGPIPE, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/* The parent writes the id maps and attaches us to the v1 cgroups meanwhile. */
	if (read(c->sync_rd, &byte, 1) != 1)
		child_fail(c, F_SYNC);
	/* As warren: after the v1 attach, so every hierarchy's root is the sandbox's own. */
	if (unshare(CLONE_NEWCGROUP) < 0)
		child_fail(c, F_CGROUP_NS);
	/* Raw system calls, not glibc's setgroups/setresuid: in a threaded process those
	 * broadcast the change to every thread (the "setxid" dance), and in this child that
	 * waits forever on a thread the parent was creating when we were cloned (seen here: a
	 * floor child stuck in futex_wait at concurrency 8). */
	if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, 0, 0, 0) < 0 ||
	    syscall(SYS_setresuid, 0, 0, 0) < 0)
		child_fail(c, F_IDS);
	if (sethostname("floor", 5) < 0)
		child_fail(c, F_HOSTNAME);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		child_fail(c, F_PRIVATE);
	if (mount("tmpfs", f->scratch, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=0755") < 0)
		child_fail(c, F_TMPFS);
	if (mkdir(f->upper, 0755) < 0 || mkdir(f->work, 0755) < 0 || mkdir(f->root, 0755) < 0)
		child_fail(c, F_MKDIR);
	if (mount("overlay", f->root, "overlay", MS_NODEV, f->overlay_opts) < 0)
		child_fail(c, F_OVERLAY);
	if (chdir(f->root) < 0 || sys_pivot_root(".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
	    chdir("/") < 0)
		child_fail(c, F_PIVOT);
	execve("/bin/true", argv, envp);
	child_fail(c, F_EXEC);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n, len = (ssize_t)strlen(s);

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	n = n == len ? 0 : (n < 0 ? -errno : -EIO);
	close(fd);
	return (int)n;
}

int floor_setup(struct floor_config *f, const char *dir, const char *rootfs, const char *cgname)
{
	char base[200];
	int r;

	*f = (struct floor_config){ .uid_base = 100000, .uid_count = 65536 };
	snprintf(base, sizeof(base), "%s/floor", dir);
	snprintf(f->rootfs, sizeof(f->rootfs), "%s", rootfs);
	snprintf(f->busybox, sizeof(f->busybox), "%s/bin/busybox", rootfs);
	snprintf(f->scratch, sizeof(f->scratch), "%s/scratch", base);
	snprintf(f->upper, sizeof(f->upper), "%s/upper", f->scratch);
	snprintf(f->work, sizeof(f->work), "%s/work", f->scratch);
	snprintf(f->root, sizeof(f->root), "%s/root", f->scratch);
	/* userxattr: overlay metadata in user.* xattrs, which a user namespace may write. */
	snprintf(f->overlay_opts, sizeof(f->overlay_opts),
		 "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", f->rootfs, f->upper, f->work);
	if ((mkdir(base, 0711) < 0 && errno != EEXIST) ||
	    (mkdir(f->scratch, 0755) < 0 && errno != EEXIST))
		return -errno;

	snprintf(f->v2_parent, sizeof(f->v2_parent), "%s/%s", cgroup2_mount(), cgname);
	if (mkdir(f->v2_parent, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		fprintf(stderr, "bench: mkdir %s: %m\n", f->v2_parent);
		return r;
	}
	if (strcmp(cgroup2_mount(), "/sys/fs/cgroup/unified") != 0)
		return 0; /* unified node: the v2 directory is all */
	for (int i = 0; i < FLOOR_V1_MAX; i++) {
		char mnt[64];

		snprintf(mnt, sizeof(mnt), "/sys/fs/cgroup/%s/cgroup.procs", v1_controllers[i]);
		if (access(mnt, F_OK) < 0)
			continue;
		snprintf(f->v1_parent[f->n_v1], sizeof(f->v1_parent[0]), "/sys/fs/cgroup/%s/%s",
			 v1_controllers[i], cgname);
		if (mkdir(f->v1_parent[f->n_v1], 0755) < 0 && errno != EEXIST) {
			r = -errno;
			fprintf(stderr, "bench: mkdir %s: %m\n", f->v1_parent[f->n_v1]);
			return r;
		}
		f->n_v1++;
	}
	return 0;
}

void floor_cleanup(struct floor_config *f)
{
	if (f->v2_parent[0])
		cgroup_rmtree(f->v2_parent);
	for (int i = 0; i < f->n_v1; i++)
		cgroup_rmtree(f->v1_parent[i]);
}

static void report_once(const char *what, int err)
{
	static atomic_int reported;

	if (atomic_fetch_add(&reported, 1) < 3)
		fprintf(stderr, "bench: isolation floor: %s: %s\n", what, strerror(err));
}

/* rmdir, retried briefly: a cgroup whose last task was just reaped may still read as busy. */
static void rmdir_retry(const char *path)
{
	for (int i = 0; i < 100; i++) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			break;
		sleep_us(100);
	}
	report_once("rmdir cgroup", errno);
}

int floor_isolation_once(const struct floor_config *f, bool netns)
{
	static atomic_ulong counter;
	char v2[320], v1[FLOOR_V1_MAX][320], path[512], map[64], pidstr[16];
	int sync[2] = { -EBADF, -EBADF }, err[2] = { -EBADF, -EBADF };
	int cgfd = -EBADF, pidfd = -EBADF, msg[2], r = 0, n_v1 = 0;
	unsigned long id = atomic_fetch_add(&counter, 1);
	struct child_ctx c = { .f = f };
	siginfo_t si = {};
	ssize_t got;
	pid_t pid;

	snprintf(v2, sizeof(v2), "%s/f%lu", f->v2_parent, id);
	if (mkdir(v2, 0755) < 0) {
		report_once("mkdir cgroup2", errno);
		return -errno;
	}
	cgfd = open(v2, O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0) {
		r = -errno;
		goto out;
	}
	for (; n_v1 < f->n_v1; n_v1++) {
		snprintf(v1[n_v1], sizeof(v1[0]), "%s/f%lu", f->v1_parent[n_v1], id);
		if (mkdir(v1[n_v1], 0755) < 0) {
			r = -errno;
			report_once("mkdir v1 cgroup", errno);
			goto out;
		}
	}
	if (pipe2(sync, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		r = -errno;
		goto out;
	}
	c.sync_rd = sync[0], c.sync_wr = sync[1], c.err_rd = err[0], c.err_wr = err[1];

	struct clone_args args = {
		.flags = CLONE_PIDFD | CLONE_INTO_CGROUP | FLOOR_NS | (netns ? CLONE_NEWNET : 0),
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)cgfd,
	};
	pid = sys_clone3(&args);
	if (pid < 0) {
		r = pid;
		report_once("clone3", -r);
		goto out;
	}
	if (pid == 0)
		floor_child(&c);
	sync[0] = safe_close(sync[0]);
	err[1] = safe_close(err[1]);

	snprintf(map, sizeof(map), "0 %u %u\n", f->uid_base, f->uid_count);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	r = write_str(path, map);
	if (r >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
		r = write_str(path, map);
	}
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	for (int i = 0; r >= 0 && i < n_v1; i++) {
		snprintf(path, sizeof(path), "%.320s/cgroup.procs", v1[i]);
		r = write_str(path, pidstr);
	}
	if (r < 0) {
		report_once("id maps or v1 attach", -r);
		sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
	} else if (write(sync[1], "", 1) != 1) {
		r = -errno;
	}
	sync[1] = safe_close(sync[1]);

	/* EOF: the child exec'd (the pipe is close-on-exec); 8 bytes: it failed at a step.
	 * A child that hangs before either is killed after 10 s rather than hang the bench. */
	for (;;) {
		struct pollfd pfd = { .fd = err[0], .events = POLLIN };
		int n = poll(&pfd, 1, 10000);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			report_once("the child neither exec'd nor failed within 10 s", ETIMEDOUT);
			sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
			r = r < 0 ? r : -ETIMEDOUT;
		}
		break;
	}
	do
		got = read(err[0], msg, sizeof(msg));
	while (got < 0 && errno == EINTR);
	if (got == (ssize_t)sizeof(msg) && r >= 0) {
		char what[80];

		snprintf(what, sizeof(what), "child: %s",
			 msg[0] >= 0 && msg[0] < _F_MAX ? step_names[msg[0]] : "?");
		report_once(what, msg[1]);
		r = -msg[1];
	}
	while (waitid((idtype_t)P_PIDFD, pidfd, &si, WEXITED) < 0) {
		if (errno != EINTR) {
			r = r < 0 ? r : -errno;
			break;
		}
	}
	if (r >= 0 && (si.si_code != CLD_EXITED || si.si_status != 0)) {
		report_once("/bin/true did not exit 0", EIO);
		r = -EIO;
	}
out:
	safe_close(sync[0]);
	safe_close(sync[1]);
	safe_close(err[0]);
	safe_close(err[1]);
	safe_close(pidfd);
	safe_close(cgfd);
	for (int i = 0; i < n_v1; i++)
		rmdir_retry(v1[i]);
	rmdir_retry(v2);
	return r;
}

int floor_bare_once(const struct floor_config *f)
{
	char *const argv[] = { "true", NULL };
	int status = fork_exec_wait(f->busybox, argv);

	if (status < 0)
		return status;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

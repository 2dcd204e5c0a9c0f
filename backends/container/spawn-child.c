/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "container.h"
#include "net.h"
#include "profile.h"
#include "syscall.h"

/* The sandbox's init before exec. It runs as the first process of new user, pid, mount, UTS,
 * IPC and network namespaces, with every capability inside the new user namespace and none
 * outside it. Async-signal-safe code only (see child.c). Order matters where commented. */

#define CHECK(step, expr)                                  \
	do {                                               \
		if ((expr) < 0)                            \
			child_fail(p->err_wr, (step), errno); \
	} while (0)
#define CHECK_R(step, expr)                                \
	do {                                               \
		int _r = (expr);                           \
		if (_r < 0)                                \
			child_fail(p->err_wr, (step), -_r); \
	} while (0)

static int mkdir_p(const char *path, mode_t mode)
{
	return mkdir(path, mode) < 0 && errno != EEXIST ? -1 : 0;
}

/* Attaches a copy of dir, a directory of the scratch tmpfs (tmnt), at target with attr set.
 * A bind mount of the sandbox's one tmpfs instead of a tmpfs of its own: every superblock
 * costs creation time and, in every memory cgroup of the node, shrinker bookkeeping that
 * grows with the number of superblocks (docs/performance.md, Density). */
static int bind_scratch(int tmnt, const char *dir, const char *target, uint64_t set,
			uint64_t clr)
{
	struct mount_attr a = { .attr_set = set, .attr_clr = clr };
	int t = open_tree(tmnt, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

	if (t < 0)
		return -1;
	if (mount_setattr(t, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0 ||
	    move_mount(t, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		close(t);
		return -1;
	}
	return close(t);
}

/* A tiny /dev: a directory of the scratch tmpfs with the harmless device nodes (make_root()),
 * a private devpts instance, /dev/shm and /dev/mqueue. Relative to the new root, which is the
 * working directory. */
static void mount_dev(const struct spawn_plan *p, int tmnt)
{
	static const char *const links[][2] = {
		{ "/proc/self/fd", "dev/fd" },        { "/proc/self/fd/0", "dev/stdin" },
		{ "/proc/self/fd/1", "dev/stdout" },  { "/proc/self/fd/2", "dev/stderr" },
		{ "pts/ptmx", "dev/ptmx" },
	};

	/* Devices allowed on this mount only: the nodes on it are the ones made as host root in
	 * make_root(), and nobody in the sandbox can make another (mknod is refused in a user
	 * namespace, and /dev is not the sandbox's to write). */
	CHECK(STEP_MOUNT_DEV, mkdir_p("dev", 0755));
	CHECK(STEP_MOUNT_DEV, bind_scratch(tmnt, "dev", "dev",
					   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NODEV));
	CHECK(STEP_MOUNT_DEV, mkdir_p("dev/pts", 0755));
	/* newinstance: a devpts of our own, so the sandbox cannot reach the host's ptys. */
	CHECK(STEP_MOUNT_DEV, mount("devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
				    "newinstance,ptmxmode=0666,mode=0620"));
	for (size_t i = 0; i < ELEMENTSOF(links); i++)
		CHECK(STEP_MOUNT_DEV, symlink(links[i][0], links[i][1]));
	/* Its own mount: /dev is noexec, /dev/shm is not. Its bytes count against disk_bytes. */
	CHECK(STEP_MOUNT_DEV, bind_scratch(tmnt, "dev/shm", "dev/shm",
					   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0));
	/* POSIX message queues belong to the IPC namespace we own; a kernel without mqueue
	 * (CONFIG_POSIX_MQUEUE=n) just goes without. */
	CHECK(STEP_MOUNT_DEV, mkdir_p("dev/mqueue", 0755));
	if (mount("mqueue", "dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 &&
	    errno != ENODEV && errno != EPERM)
		child_fail(p->err_wr, STEP_MOUNT_DEV, errno);
}

/* Paths of /proc that show or change host state a sandbox must not see, as runc masks them.
 * Runs after pivot_root: absolute paths are the sandbox's. Missing ones (the kernel config
 * decides which exist) are skipped. */
static void mask_proc(const struct spawn_plan *p)
{
	static const char *const files[] = {
		"/proc/kcore",      "/proc/kpagecgroup",   "/proc/kpageflags", "/proc/kpagecount",
		"/proc/sysrq-trigger", "/proc/timer_list", "/proc/keys",       "/proc/kallsyms",
		"/proc/latency_stats", "/proc/sched_debug", "/proc/timer_stats",
	};
	static const char *const read_only[] = { "/proc/sys", "/proc/bus", "/proc/fs",
						 "/proc/irq" };
	const unsigned long proc_flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;

	for (size_t i = 0; i < ELEMENTSOF(files); i++)
		if (mount("/dev/null", files[i], NULL, MS_BIND, NULL) < 0 && errno != ENOENT)
			child_fail(p->err_wr, STEP_MASK_PROC, errno);
	for (size_t i = 0; i < ELEMENTSOF(read_only); i++) {
		if (mount(read_only[i], read_only[i], NULL, MS_BIND | MS_REC, NULL) < 0) {
			if (errno == ENOENT)
				continue;
			child_fail(p->err_wr, STEP_MASK_PROC, errno);
		}
		/* A remount in a user namespace must repeat the locked flags of the proc mount
		 * (nosuid, nodev, noexec), or the kernel refuses it with EPERM. */
		CHECK(STEP_MASK_PROC, mount(NULL, read_only[i], NULL,
					    MS_BIND | MS_REMOUNT | MS_RDONLY | proc_flags, NULL));
	}
}

/* "/proc/self/fd/N": a path to what fd N is, which the kernel resolves without looking at the
 * directories above it (the daemon's state directories need not be reachable by uid_base). */
static const char *fd_path(char buf[32], int fd)
{
	char digits[12];
	int n = 0;

	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0);
	memcpy(buf, "/proc/self/fd/", 14);
	for (int i = 0; i < n; i++)
		buf[14 + i] = digits[n - 1 - i];
	buf[14 + n] = '\0';
	return buf;
}

/* The new root, built with the new mount API (Linux 5.2) on fds so that no host path is walked
 * as uid_base: a tmpfs holds the overlay's upper and work directories, /dev and an empty
 * directory for masks (bind_scratch()); it is attached on the scratch directory, in this mount
 * namespace only, so that open_tree() may copy from it (older kernels refuse to from a
 * detached mount), and the overlay on top of it. Both go when the old root is detached. The
 * overlay's options show only /proc/self/fd paths, so the sandbox's mountinfo names no host
 * directory. Returns 0 and the tmpfs in *ret_tmnt, or the step that failed with errno set. */
static enum child_step make_root(const struct spawn_plan *p, int rootfs_fd, int scratch_fd,
				 int *ret_tmnt)
{
	static const struct {
		const char *path;
		unsigned major, minor;
	} devices[] = {
		{ "dev/null", 1, 3 },    { "dev/zero", 1, 5 },    { "dev/full", 1, 7 },
		{ "dev/random", 1, 8 },  { "dev/urandom", 1, 9 }, { "dev/tty", 5, 0 },
	};
	char lower[32], upper[32], work[32];
	int tfs, tmnt, ufd, wfd, ofs, omnt;

	tfs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (tfs < 0 || fsconfig(tfs, FSCONFIG_SET_STRING, "size", p->scratch_size, 0) < 0 ||
	    fsconfig(tfs, FSCONFIG_SET_STRING, "nr_inodes", p->scratch_inodes, 0) < 0 ||
	    fsconfig(tfs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
	    fsconfig(tfs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return STEP_MOUNT_SCRATCH;
	tmnt = fsmount(tfs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (tmnt < 0 || move_mount(tmnt, "", scratch_fd, "",
				   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return STEP_MOUNT_SCRATCH;
	/* umask 022 would take the sticky /dev/shm's write bits. */
	if (mkdirat(tmnt, "dev", 0755) < 0 || mkdirat(tmnt, "dev/shm", 01777) < 0 ||
	    fchmodat(tmnt, "dev/shm", 01777, 0) < 0 || mkdirat(tmnt, "empty", 0555) < 0)
		return STEP_MOUNT_DEV;
	/* The harmless devices, made here as host root rather than bound from the host's /dev
	 * one mount each: fewer mounts to make, and to tear down with the sandbox. */
	for (size_t i = 0; i < ELEMENTSOF(devices); i++)
		if (mknodat(tmnt, devices[i].path, S_IFCHR | 0666,
			    makedev(devices[i].major, devices[i].minor)) < 0 ||
		    fchmodat(tmnt, devices[i].path, 0666, 0) < 0)
			return STEP_MOUNT_DEV;
	/* The upper layer's root is the sandbox's "/": root inside (host uid_base) owns it, as it
	 * owns the image's files. We are host root here, and what we make is host root's. */
	if (mkdirat(tmnt, "upper", 0755) < 0 || mkdirat(tmnt, "work", 0755) < 0 ||
	    fchownat(tmnt, "upper", p->c.uid_base, p->c.uid_base, 0) < 0)
		return STEP_MKDIR_LAYERS;
	ufd = openat(tmnt, "upper", O_PATH | O_DIRECTORY | O_CLOEXEC);
	wfd = openat(tmnt, "work", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ufd < 0 || wfd < 0)
		return STEP_MKDIR_LAYERS;

	/* userxattr: overlay keeps its metadata in user.overlay.* xattrs, which a user
	 * namespace may set (trusted.* it may not: the kernel would log a fallback per mount). */
	ofs = fsopen("overlay", FSOPEN_CLOEXEC);
	if (ofs < 0 ||
	    fsconfig(ofs, FSCONFIG_SET_STRING, "lowerdir", fd_path(lower, rootfs_fd), 0) < 0 ||
	    fsconfig(ofs, FSCONFIG_SET_STRING, "upperdir", fd_path(upper, ufd), 0) < 0 ||
	    fsconfig(ofs, FSCONFIG_SET_STRING, "workdir", fd_path(work, wfd), 0) < 0 ||
	    fsconfig(ofs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
	    fsconfig(ofs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return STEP_MOUNT_OVERLAY;
	omnt = fsmount(ofs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV);
	if (omnt < 0 || move_mount(omnt, "", scratch_fd, "",
				   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return STEP_MOUNT_OVERLAY;
	/* From here on, paths are relative to the new root. */
	if (fchdir(omnt) < 0)
		return STEP_MOUNT_OVERLAY;
	close(tfs), close(ufd), close(wfd), close(ofs), close(omnt);
	*ret_tmnt = tmnt;
	return 0;
}

/* Replaces path with text (a copy-up into the upper layer). open/write/close only. */
static int write_file(const char *path, const char *text, uid_t owner)
{
	size_t len = strlen(text), done = 0;
	int fd;

	mkdir_p("etc", 0755);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || fchown(fd, owner, owner) < 0)
		return -1;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += n;
	}
	return close(fd);
}

static void mount_root(const struct spawn_plan *p, int rootfs_fd, int scratch_fd)
{
	static const char *const masked_dirs[] = { "proc/acpi", "proc/scsi" };
	enum child_step step;
	int tmnt = -1;

	/* Nothing we mount may propagate back to the host's mount table. */
	CHECK(STEP_MOUNT_PRIVATE, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	step = make_root(p, rootfs_fd, scratch_fd, &tmnt);
	if (step)
		child_fail(p->err_wr, step, errno);

	/* proc must be mounted while the host's /proc is still reachable: the kernel only
	 * allows a new proc mount in a user namespace where a full one is visible (after the
	 * old root is gone: EPERM). It shows our pid namespace. */
	CHECK(STEP_MOUNT_PROC, mkdir_p("proc", 0555));
	CHECK(STEP_MOUNT_PROC,
	      mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL));
	/* Directories of /proc that runc masks, under an empty read-only one (mask_proc() does
	 * the files); missing ones (the kernel config decides) are skipped. */
	for (size_t i = 0; i < ELEMENTSOF(masked_dirs); i++)
		if (bind_scratch(tmnt, "empty", masked_dirs[i],
				 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				 MOUNT_ATTR_NOEXEC, 0) < 0 && errno != ENOENT)
			child_fail(p->err_wr, STEP_MASK_PROC, errno);
	/* sysfs needs the network namespace to be ours (it is) and no masked /sys on the host;
	 * where the kernel refuses, the sandbox goes without /sys. */
	CHECK(STEP_MOUNT_SYS, mkdir_p("sys", 0555));
	if (mount("sysfs", "sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0 && errno != EPERM)
		child_fail(p->err_wr, STEP_MOUNT_SYS, errno);
	mount_dev(p, tmnt);
	close(tmnt);
	CHECK(STEP_MKDIR_LAYERS, mkdir_p("tmp", 01777));
	if (p->c.resolv_conf)
		CHECK(STEP_RESOLV_CONF, write_file("etc/resolv.conf", p->c.resolv_conf, p->c.uid_base));

	/* pivot_root(".", ".") stacks the old root on top of the new one; detaching it leaves
	 * only the sandbox's tree, without needing a directory for the old root. */
	CHECK_R(STEP_PIVOT_ROOT, sys_pivot_root(".", "."));
	CHECK(STEP_PIVOT_ROOT, umount2(".", MNT_DETACH));
	CHECK(STEP_PIVOT_ROOT, chdir("/"));
}

void spawn_child(const struct spawn_plan *p)
{
	const struct spawn_config *c = &p->c;
	enum child_step step;
	int rootfs_fd, scratch_fd, confine;
	char byte;
	ssize_t n;

	close(p->sync_wr);
	close(p->err_rd);
	CHECK_R(STEP_SIGNALS, child_reset_signals());

	/* Wait until the parent has moved us into the v1 cgroups. EOF means the parent gave up
	 * (or died): leave quietly. */
	do
		n = read(p->sync_rd, &byte, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		child_fail(p->err_wr, STEP_SYNC, n < 0 ? errno : ECANCELED);
	/* The daemon dies, we die; set while we are still host root (a uid change clears it). */
	CHECK(STEP_PDEATHSIG, prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0));
	CHECK_R(STEP_PDEATHSIG, child_reader_alive(p->err_wr));

	/* After the v1 attach, so that the namespace's root is the sandbox's own cgroup in every
	 * hierarchy (at clone time it would show "/../../x" for the v1 ones). */
	CHECK(STEP_CGROUP_NS, unshare(CLONE_NEWCGROUP));
	/* The network: a prepared namespace (lo already up), a new one, or the host's. */
	if (!c->host_network && c->netns_fd > 0)
		CHECK(STEP_NETNS, setns(c->netns_fd, CLONE_NEWNET));
	else if (!c->host_network) {
		CHECK(STEP_NETNS, unshare(CLONE_NEWNET));
		CHECK_R(STEP_LOOPBACK, net_loopback_up());
	}

	rootfs_fd = open(c->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(STEP_OPEN_ROOT, rootfs_fd);
	scratch_fd = open(c->scratch, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(STEP_OPEN_ROOT, scratch_fd);

	/* The root, as host root in namespaces the host's user namespace owns: the sandbox gets
	 * mounts it cannot change, not merely mounts it may not change. */
	CHECK(STEP_HOSTNAME, sethostname(c->id, strlen(c->id)));
	umask(022);
	mount_root(p, rootfs_fd, scratch_fd);
	mask_proc(p);

	/* Now the sandbox's own user namespace, made ready by the parent with its id maps: root
	 * inside is host uid_base, and its capabilities are over nothing but that namespace:
	 * every other namespace of ours belongs to the host's. */
	CHECK(STEP_USERNS, setns(p->userns_fd, CLONE_NEWUSER));
	/* Raw calls: glibc's set*id() synchronise every thread of the process, which takes a lock
	 * that another thread of the daemon may have held when we were cloned. */
	CHECK(STEP_SETGROUPS, syscall(SYS_setgroups, 0, NULL));
	CHECK(STEP_SETGID, syscall(SYS_setresgid, 0, 0, 0));
	CHECK(STEP_SETUID, syscall(SYS_setresuid, 0, 0, 0));
	/* The uid change cleared it: again, and make sure the daemon did not die meanwhile. */
	CHECK(STEP_PDEATHSIG, prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0));
	CHECK_R(STEP_PDEATHSIG, child_reader_alive(p->err_wr));

	CHECK(STEP_CHDIR, chdir(c->cwd ? c->cwd : "/"));
	CHECK_R(STEP_CAPS, child_drop_caps());

	/* The exec channel's listening socket, if any, becomes the init's fd 3 (it makes it
	 * close-on-exec again at once). */
	int fds[4] = { -EBADF, c->stdio_fd, c->stdio_fd, c->exec_fd };
	int n_fds = c->exec_fd > 0 ? 4 : 3;
	CHECK_R(STEP_STDIO, child_install_fds(fds, n_fds));
	/* Everything else the daemon had open stays out of the sandbox; the error pipe and the
	 * init memfd are among them and close at exec, which tells the parent we made it. */
	CHECK_R(STEP_CLOSE_FDS, sys_close_range(n_fds, ~0U, CLOSE_RANGE_CLOEXEC));
	/* AppArmor for the exec, Landlock, then seccomp: after pivot_root and every mount
	 * (Landlock refuses mounts to a restricted process), and with "/" the sandbox's root. */
	confine = child_confine(c->apparmor_profile, &p->landlock, c->seccomp_profile,
				&step);
	if (confine < 0)
		child_fail(p->err_wr, step, -confine);

	CHECK_R(STEP_EXEC, sys_execveat(c->init_fd, "", p->argv, c->envp, AT_EMPTY_PATH));
	child_fail(p->err_wr, STEP_EXEC, EIO);
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "log.h"
#include "profile.h"
#include "syscall.h"

struct ctr T = { .cgroup_fd = -1, .init_fd = -1, .log_rd = -1, .log_wr = -1, .stdio_fd = -1,
		 .init = { .pidfd = -1 } };

static const char *build_dir(void)
{
	const char *b = getenv("WARREN_BUILD_DIR");

	cr_assert(b, "WARREN_BUILD_DIR is not set (run the tests with meson test)");
	return b;
}

/* The lower layer: busybox, a few applet links, the probe, and a marker file, every file owned
 * by UID_BASE (root inside) since mkfs.erofs 1.5 has no uid shift. */
static void build_image(void)
{
	char cmd[2048];
	int r;

	snprintf(cmd, sizeof(cmd),
		 "set -e; s=%1$s/stage; mkdir -p $s/bin $s/usr/bin $s/proc $s/sys $s/dev $s/tmp "
		 "$s/etc $s/root; cp /bin/busybox $s/bin/; "
		 "for a in sh true false cat echo sleep ls mkdir rm touch id dd grep kill ps; do "
		 "ln -s busybox $s/bin/$a; done; cp %2$s/tests/warren-probe $s/usr/bin/; "
		 "echo 'root:x:0:0:root:/root:/bin/sh' > $s/etc/passwd; "
		 "echo lower > $s/etc/marker; "
		 "mkfs.erofs --quiet --force-uid=%3$d --force-gid=%3$d %4$s $s >/dev/null; "
		 "rm -rf $s",
		 T.dir, build_dir(), UID_BASE, T.image);
	r = system(cmd);
	cr_assert_eq(r, 0, "building the test image failed (%d): %s", r, cmd);
}

static void mount_image(void)
{
	cr_assert_eq(mkdir(T.rootfs, 0755), 0);
	if (mount(T.image, T.rootfs, "erofs", MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) == 0)
		return;
	switch (errno) {
	case ENODEV:
		cr_skip_test("the kernel lacks EROFS (CONFIG_EROFS_FS)");
	case ENOTBLK:
		cr_skip_test("the kernel cannot mount EROFS from a regular file (Linux 6.12)");
	case EPERM:
		cr_skip_test("mount(2) refused: lacking CAP_SYS_ADMIN");
	default:
		cr_assert_fail("mount %s: %s", T.image, strerror(errno));
	}
}

/* Removes what test processes that were killed (a timeout, ^C) left: their directory, named
 * after their pid, and the image mounted in it. A live pid's directory is another test's. */
static void sweep_leftovers(void)
{
	DIR *d = opendir("/tmp");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[PATH_MAX], cmd[PATH_MAX + 16];
		int pid;

		if (sscanf(e->d_name, "warren-ctr-%d-", &pid) != 1 || pid <= 0 ||
		    kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "/tmp/%s/rootfs", e->d_name);
		(void)umount2(path, MNT_DETACH);
		snprintf(cmd, sizeof(cmd), "rm -rf /tmp/%s", e->d_name);
		(void)!system(cmd);
	}
	if (d)
		closedir(d);
}

void ctr_setup(void)
{
	const char *why = NULL;
	char path[PATH_MAX], name[64];
	int r, logp[2];

	if (geteuid() != 0)
		cr_skip_test("needs root");
	r = container_backend.probe(&why);
	if (r == -EPERM || r == -ENOSYS || r == -EINVAL || r == -ENOSPC)
		cr_skip_test("container tier unavailable: %s", why);
	cr_assert_eq(r, 0, "container probe: %s (%s)", strerror(-r), why);

	sweep_leftovers();
	snprintf(T.dir, sizeof(T.dir), "/tmp/warren-ctr-%d-XXXXXX", (int)getpid());
	cr_assert(mkdtemp(T.dir), "mkdtemp: %s", strerror(errno));
	snprintf(T.image, sizeof(T.image), "%s/base.erofs", T.dir);
	snprintf(T.rootfs, sizeof(T.rootfs), "%s/rootfs", T.dir);
	snprintf(T.scratch, sizeof(T.scratch), "%s/scratch", T.dir);
	snprintf(T.exec_path, sizeof(T.exec_path), "%s/exec.sock", T.dir);
	cr_assert_eq(mkdir(T.scratch, 0755), 0);
	build_image();
	mount_image();

	/* A cgroup tree of our own per test process: tests of other binaries may run at the
	 * same time and remove their parents when done. */
	snprintf(name, sizeof(name), "warren-test-ctr-%d", (int)getpid());
	snprintf(T.id, sizeof(T.id), "ctr%d", (int)getpid());
	r = cg_node_new(name, &T.node);
	cr_assert_eq(r, 0, "cg_node_new: %s", strerror(-r));
	r = cg_create(T.node, T.id, &T.limits, &T.cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	T.cgroup_fd = cg_open_v2(T.cg);
	cr_assert_geq(T.cgroup_fd, 0, "cg_open_v2: %s", strerror(-T.cgroup_fd));

	snprintf(path, sizeof(path), "%s/warren-init", build_dir());
	T.init_fd = container_init_memfd(path);
	cr_assert_geq(T.init_fd, 0, "container_init_memfd(%s): %s", path, strerror(-T.init_fd));
	{
		char err[PROFILE_ERROR_MAX];

		r = profile_set_open(ctr_profiles_dir(), &T.profiles, err);
		cr_assert_eq(r, 0, "profile_set_open(%s): %s", ctr_profiles_dir(), err);
	}
	T.profile = profile_seccomp_get(T.profiles, NULL);
	cr_assert(T.profile);
	T.seccomp = T.profile;

	cr_assert_eq(pipe2(logp, O_CLOEXEC), 0);
	T.log_rd = logp[0], T.log_wr = logp[1];
	fcntl(T.log_rd, F_SETFL, O_NONBLOCK);
	if (!T.disk_bytes)
		T.disk_bytes = 64 << 20;
	T.envp[0] = "PATH=/usr/bin:/bin";
	T.envp[1] = "HOME=/root";
	T.envp[2] = NULL;
}

/* Kills what is left and removes everything the fixture made, checking that it can. */
void ctr_teardown(void)
{
	/* Kill everything and reap all our children (the inits; exec'd commands are the
	 * init's). */
	if (T.cg)
		cg_kill(T.cg);
	if (T.init.pidfd >= 0) {
		sys_pidfd_send_signal(T.init.pidfd, SIGKILL, NULL, 0);
		for (int i = 0; i < 500; i++) {
			if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
				break;
			usleep(10000);
		}
		close(T.init.pidfd);
		T.init.pidfd = -1;
	}
	if (T.cg) {
		for (int i = 0; i < 500 && cg_populated(T.cg) > 0; i++)
			usleep(10000);
		int r = cg_remove(T.cg);
		cr_expect_eq(r, 0, "cg_remove: %s", strerror(-r));
		T.cg = cg_free(T.cg);
	}
	T.node = cg_node_free(T.node);
	if (T.rootfs[0] && umount2(T.rootfs, 0) < 0 && errno != EINVAL)
		cr_expect_fail("umount %s: %s", T.rootfs, strerror(errno));
	if (T.dir[0]) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", T.dir);
		(void)!system(cmd);
	}
	T.profiles = profile_set_free(T.profiles);
	T.profile = T.seccomp = NULL;
	int *fds[] = { &T.cgroup_fd, &T.init_fd, &T.log_rd, &T.log_wr };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]), *fds[i] = -1;
}

int ctr_start(char *const *argv)
{
	struct spawn_config c = {
		.id = T.id,
		.rootfs = T.rootfs,
		.scratch = T.scratch,
		.disk_bytes = T.disk_bytes,
		.argv = argv,
		.envp = T.envp,
		.cwd = T.cwd,
		.cg = T.cg,
		.cgroup_fd = T.cgroup_fd,
		.stdio_fd = T.stdio_fd >= 0 ? T.stdio_fd : T.log_wr,
		.uid_base = UID_BASE,
		.uid_count = UID_COUNT,
		.seccomp_profile = T.seccomp,
		.no_landlock = T.no_landlock,
		.init_fd = T.init_fd,
		.zygote_fd = T.zygote_fd,
	};

	char report[64];
	ssize_t n;
	int r;

	/* As the daemon does: the init keeps the only copy of the exec channel's socket. */
	r = c.exec_fd = container_backend.exec_listen(T.exec_path);
	if (r < 0)
		return r;
	r = container_backend.start(&c, &T.init);
	close(c.exec_fd);
	if (r < 0)
		return r;
	/* The daemon reads this through its ring; a test can wait for it. */
	do
		n = read(T.init.ready_fd, report, sizeof(report));
	while (n < 0 && errno == EINTR);
	close(T.init.ready_fd);
	r = container_backend.start_result(T.id, report, n > 0 ? (size_t)n : 0, NULL);
	if (r < 0) {
		siginfo_t si;

		while (waitid((idtype_t)P_PIDFD, T.init.pidfd, &si, WEXITED) < 0 && errno == EINTR)
			;
		close(T.init.pidfd);
		T.init.pidfd = -1;
	}
	return r;
}

/* The init's next message on an exec channel, decoded by the backend as the daemon does:
 * 0, -ETIMEDOUT, -EPIPE at EOF, or -EPROTO. */
static int exec_next_event(int sock, int timeout_ms, struct exec_event *ev)
{
	char data[EXEC_EVENT_DATA_MAX];
	union {
		char buf[EXEC_EVENT_CONTROL_MAX];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	struct pollfd p = { .fd = sock, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, timeout_ms) == 0)
		return -ETIMEDOUT;
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	return container_backend.exec_event(&mh, data, (size_t)n, ev);
}

int ctr_wait(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	siginfo_t si = { 0 };
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
		struct exec_event ev;
		int r;

		do
			r = exec_next_event(fd, timeout_ms, &ev);
		while (r == 0 && ev.type != EXEC_EVENT_EXITED);
		/* EOF first: the init is gone, and the command with its pid namespace. */
		if (r == -EPIPE)
			return 128 + SIGKILL;
		return r < 0 ? r : ev.exit_code;
	}
	if (poll(&p, 1, timeout_ms) == 0)
		return -ETIMEDOUT;
	if (waitid((idtype_t)P_PIDFD, fd, &si, WEXITED) < 0)
		return -errno;
	return si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
}

static void append(char **buf, size_t *len, const char *data, size_t n)
{
	*buf = realloc(*buf, *len + n + 1);
	cr_assert(*buf);
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = '\0';
}

char *ctr_log(void)
{
	char *out = strdup(""), chunk[4096];
	size_t len = 0;
	ssize_t n;

	while ((n = read(T.log_rd, chunk, sizeof(chunk))) > 0)
		append(&out, &len, chunk, n);
	return out;
}

char *ctr_run(char *const *argv, int *code)
{
	int r = ctr_start(argv);

	cr_assert_eq(r, 0, "start %s: %s", argv ? argv[0] : "(idle)", strerror(-r));
	*code = ctr_wait(T.init.pidfd, 30000);
	cr_assert_neq(*code, -ETIMEDOUT, "sandbox did not exit in 30 s");
	close(T.init.pidfd);
	T.init.pidfd = -1;
	return ctr_log();
}

/* Sends the exec and waits for the init to say how its start went: the channel, or -errno
 * (the command's pid, from its PID event, in *ret_pid). */
static int exec_with(char *const *argv, int in, int out, int err, pid_t *ret_pid)
{
	struct exec_config c = {
		.socket_path = T.exec_path,
		.argv = argv,
		.envp = T.envp,
		.cwd = T.exec_cwd,
		.stdin_fd = in >= 0 ? in : open("/dev/null", O_RDONLY | O_CLOEXEC),
		.stdout_fd = out,
		.stderr_fd = err,
		.no_landlock = T.no_landlock,
	};
	struct exec_event ev;
	int sock = container_backend.exec(&c), r;

	if (in < 0)
		close(c.stdin_fd);
	if (sock < 0)
		return sock;
	*ret_pid = 0;
	while ((r = exec_next_event(sock, 30000, &ev)) == 0) {
		if (ev.type == EXEC_EVENT_PID)
			*ret_pid = ev.pid;
		else if (ev.type == EXEC_EVENT_STARTED)
			return sock;
		else {
			r = ev.type == EXEC_EVENT_FAILED ? ev.err : -EPROTO;
			break;
		}
	}
	close(sock);
	return r;
}

void ctr_exec_kill(int fd)
{
	cr_assert_eq(shutdown(fd, SHUT_WR), 0, "shutdown: %s", strerror(errno));
}

static int exec_capture(char *const *argv, const char *stdin_text, int stdin_fd, char **out,
			char **err)
{
	int in[2] = { -1, -1 }, o[2], e[2], r;
	pid_t pid = 0;
	char *bufs[2] = { strdup(""), strdup("") };
	size_t lens[2] = { 0, 0 };

	if (stdin_fd < 0)
		cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(o, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(e, O_CLOEXEC), 0);
	r = exec_with(argv, stdin_fd >= 0 ? stdin_fd : in[0], o[1], e[1], &pid);
	if (r >= 0)
		T.last_exec_pid = pid;
	close(o[1]), close(e[1]);
	if (stdin_fd < 0) {
		close(in[0]);
		if (r >= 0 && stdin_text)
			(void)!write(in[1], stdin_text, strlen(stdin_text));
		close(in[1]);
	}

	struct pollfd p[2] = { { .fd = o[0], .events = POLLIN }, { .fd = e[0], .events = POLLIN } };
	while (r >= 0 && (p[0].fd >= 0 || p[1].fd >= 0)) {
		char chunk[4096];

		cr_assert_gt(poll(p, 2, 30000), 0, "exec output timed out");
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			n = read(p[i].fd, chunk, sizeof(chunk));
			if (n > 0)
				append(&bufs[i], &lens[i], chunk, n);
			else
				p[i].fd = -1;
		}
	}
	close(o[0]), close(e[0]);
	if (r >= 0) {
		int sock = r;

		r = ctr_wait(sock, 30000);
		close(sock);
	}
	if (out)
		*out = bufs[0];
	else
		free(bufs[0]);
	if (err)
		*err = bufs[1];
	else
		free(bufs[1]);
	return r;
}

int ctr_exec(char *const *argv, const char *stdin_text, char **out, char **err)
{
	return exec_capture(argv, stdin_text, -1, out, err);
}

int ctr_exec_stdin_fd(char *const *argv, int stdin_fd, char **out, char **err)
{
	return exec_capture(argv, NULL, stdin_fd, out, err);
}

const char *ctr_profiles_dir(void)
{
	static char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/profiles", build_dir());
	return dir;
}

int ctr_exec_async(char *const *argv, pid_t *ret_pid)
{
	return exec_with(argv, -1, T.log_wr, T.log_wr, ret_pid);
}

int ctr_host_mounts(void)
{
	char line[4096];
	int n = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, T.dir) != NULL;
	fclose(f);
	return n;
}

int ctr_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	cr_assert(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

unsigned long ctr_ns_ino(pid_t pid, const char *name)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, name);
	cr_assert_eq(stat(path, &st), 0, "stat %s: %s", path, strerror(errno));
	return st.st_ino;
}

bool ctr_probe_ok(const char *text, const char *check)
{
	char want[64];

	/* at the start of a line */
	snprintf(want, sizeof(want), "\nok %s:", check);
	return text && (strncmp(text, want + 1, strlen(want + 1)) == 0 || strstr(text, want));
}

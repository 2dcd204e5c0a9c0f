/* SPDX-License-Identifier: Apache-2.0 */
/* warren-attack: the agent-escape attacks, run INSIDE a sandbox by tests/escape.
 *
 *   warren-attack ATTACK [ARG...]
 *
 * Each attack tries one thing an agent that games its harness has tried, and prints one line:
 * "blocked ATTACK: <how, with the errno names>" and exits 0 when every attempt failed the way
 * it must, or "ESCAPED ATTACK: <what worked>" and exits 1. Static, so it runs in any image. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#ifndef XFS_IOC_SWAPEXT
#define XFS_IOC_SWAPEXT _IOWR('X', 109, char[192]) /* struct xfs_swapext, 192 bytes */
#endif
#ifndef EXT4_IOC_MOVE_EXT
#define EXT4_IOC_MOVE_EXT _IOWR('f', 15, char[40]) /* struct move_extent */
#endif

static const char *attack;
static char report[2048];
static size_t report_len;
static bool escaped;

/* Records one attempt: it must have failed (r < 0) with one of the errnos allowed. */
static void attempt(const char *what, long r, int err, const int *ok_errnos)
{
	bool blocked = false;

	if (r < 0)
		for (const int *e = ok_errnos; *e; e++)
			blocked |= err == *e;
	if (!blocked)
		escaped = true;
	report_len += snprintf(report + report_len, sizeof(report) - report_len, "%s%s=%s",
			       report_len ? " " : "", what,
			       r < 0 ? strerrorname_np(err) : "SUCCEEDED");
	if (report_len >= sizeof(report))
		report_len = sizeof(report) - 1;
}

#define TRY(what, call, ...)                                             \
	do {                                                             \
		long _r = (call);                                        \
		attempt(what, _r, errno, (const int[]){ __VA_ARGS__, 0 }); \
	} while (0)

static int verdict(void)
{
	printf("%s %s: %s\n", escaped ? "ESCAPED" : "blocked", attack, report);
	return escaped ? 1 : 0;
}

/* read-paths PATH...: host paths (warrend's state, logs, socket, another sandbox's files)
 * must not exist in here. */
static void read_paths(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		TRY(argv[i], open(argv[i], O_RDONLY | O_CLOEXEC), ENOENT, EACCES);
}

/* connect-api PATH...: the API socket is unreachable. */
static void connect_api(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[i]);
		TRY(argv[i], connect(s, (struct sockaddr *)&sa, sizeof(sa)), ENOENT, ECONNREFUSED);
		close(s);
	}
}

/* dmesg: the kernel log is out of reach. */
static void dmesg(void)
{
	char buf[256];

	TRY("syslog", syscall(SYS_syslog, 3 /* READ_ALL */, buf, sizeof(buf)), EPERM);
	TRY("/dev/kmsg", open("/dev/kmsg", O_RDONLY), ENOENT, EACCES, EPERM);
	TRY("/var/log/syslog", open("/var/log/syslog", O_RDONLY), ENOENT);
}

/* signal-pids PID...: processes outside (host pids of warrend, another sandbox's init) are
 * not even visible. */
static void signal_pids(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		char path[64];

		TRY(argv[i], kill(atoi(argv[i]), 0), ESRCH);
		snprintf(path, sizeof(path), "/proc/%s/environ", argv[i]);
		TRY(path, open(path, O_RDONLY), ENOENT, EACCES);
	}
}

/* extents SRC: the ioctls that move blocks or extents between files, on an image file (SRC)
 * and on the sandbox's own files. */
static void extents(int argc, char **argv)
{
	const char *src = argc > 0 ? argv[0] : "/bin/busybox";
	int in = open(src, O_RDONLY), own = open("/tmp/attack-own", O_RDWR | O_CREAT, 0600);
	struct file_clone_range fcr = { .src_fd = in };
	char dedupe[sizeof(struct file_dedupe_range) + sizeof(struct file_dedupe_range_info)] = {};
	char swap[192] = {}, move[40] = {};

	if (in < 0 || own < 0) {
		escaped = true;
		report_len = snprintf(report, sizeof(report), "setup failed: %s", strerror(errno));
		return;
	}
	(void)!write(own, "own data", 8);
	TRY("FICLONE", ioctl(own, FICLONE, in), EPERM);
	TRY("FICLONERANGE", ioctl(own, FICLONERANGE, &fcr), EPERM);
	TRY("FIDEDUPERANGE", ioctl(in, FIDEDUPERANGE, dedupe), EPERM);
	TRY("XFS_IOC_SWAPEXT", ioctl(own, XFS_IOC_SWAPEXT, swap), EPERM);
	TRY("EXT4_IOC_MOVE_EXT", ioctl(own, EXT4_IOC_MOVE_EXT, move), EPERM);
	TRY("FICLONE(own)", ioctl(own, FICLONE, own), EPERM);
}

/* process PID: another process's fds and memory: the sandbox's own init (pid 1) by default. */
static void process(int argc, char **argv)
{
	pid_t pid = argc > 0 ? atoi(argv[0]) : 1;
	char path[64], buf[16];
	struct iovec local = { buf, sizeof(buf) }, remote = { (void *)0x400000, sizeof(buf) };
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

	TRY("pidfd_getfd", syscall(SYS_pidfd_getfd, pidfd, 1, 0), EPERM);
	TRY("ptrace", ptrace(PTRACE_ATTACH, pid, 0, 0), EPERM);
	TRY("process_vm_readv", syscall(SYS_process_vm_readv, pid, &local, 1, &remote, 1, 0),
	    EPERM);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	TRY(path, open(path, O_RDONLY), EACCES, EPERM);
	snprintf(path, sizeof(path), "/proc/%d/fd/1", pid);
	TRY(path, open(path, O_WRONLY), EACCES, EPERM);
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	TRY(path, open(path, O_WRONLY), EACCES, EPERM, ETXTBSY);
}

/* exe-race SECONDS: CVE-2019-5736 and CVE-2016-9962: while the test runs execs, try every
 * visible process: ptrace-attach to it, and open its /proc/PID/exe (for a runtime helper that
 * is entering the sandbox, the runtime's own binary) for writing. */
static void exe_race(int argc, char **argv)
{
	int seconds = argc > 0 ? atoi(argv[0]) : 2, tries = 0, seen = 0;
	static bool attached[200];
	time_t end = time(NULL) + seconds;

	while (time(NULL) < end) {
		for (int pid = 1; pid < 200; pid++) {
			char path[64];
			int fd;

			if (pid == getpid())
				continue;
			/* CVE-2016-9962: attach to a helper that is entering the sandbox; once per
			 * process, as each refusal is a kernel audit record. Whether it exists is
			 * asked of /proc: kill(pid, 0) says EPERM for the processes of other
			 * Landlock domains, which are the ones to try. */
			snprintf(path, sizeof(path), "/proc/%d", pid);
			if (!attached[pid] && access(path, F_OK) == 0 && (attached[pid] = true) &&
			    ptrace(PTRACE_ATTACH, pid, 0, 0) == 0) {
				escaped = true;
				report_len += snprintf(report + report_len,
						       sizeof(report) - report_len,
						       " attached to pid %d", pid);
				return;
			}
			snprintf(path, sizeof(path), "/proc/%d/exe", pid);
			fd = open(path, O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				escaped = true;
				report_len += snprintf(report + report_len, sizeof(report) - report_len,
						       " opened %s for writing", path);
				close(fd);
				return;
			}
			if (errno != ENOENT)
				seen++;
			tries++;
		}
	}
	report_len = snprintf(report, sizeof(report), "%d tries on /proc/*/exe, %d on live "
			      "processes: none attachable or writable", tries, seen);
}

/* release-agent: CVE-2022-0492 needs a cgroup v1 mount and a new cgroup namespace. */
static void release_agent(void)
{
	mkdir("/tmp/cg", 0700);
	TRY("mount(cgroup)", mount("cgroup", "/tmp/cg", "cgroup", 0, "rdma"), EPERM);
	TRY("mount(cgroup2)", mount("cgroup2", "/tmp/cg", "cgroup2", 0, NULL), EPERM);
	TRY("unshare(NEWNS|NEWCGROUP)", unshare(CLONE_NEWNS | CLONE_NEWCGROUP), EPERM);
	TRY("unshare(NEWUSER)", unshare(CLONE_NEWUSER), EPERM);
	TRY("/sys/fs/cgroup/release_agent", open("/sys/fs/cgroup/release_agent", O_WRONLY), ENOENT,
	    EROFS, EACCES);
}

/* mount-race: the renameat2 trick swaps a path a runtime is about to mount on. Nothing is ever
 * mounted into a running sandbox, and its mount points cannot be swapped either. */
static void mount_race(void)
{
	mkdir("/tmp/decoy", 0700);
	TRY("exchange /proc", syscall(SYS_renameat2, AT_FDCWD, "/tmp/decoy", AT_FDCWD, "/proc",
				      2 /* RENAME_EXCHANGE */),
	    EBUSY, EXDEV, EPERM);
	TRY("exchange /dev", syscall(SYS_renameat2, AT_FDCWD, "/tmp/decoy", AT_FDCWD, "/dev", 2),
	    EBUSY, EXDEV, EPERM);
	TRY("umount /proc", umount2("/proc", MNT_DETACH), EPERM);
}

/* disk-fill: writes until the upper layer's cap says no. */
static void disk_fill(void)
{
	static char block[1 << 20];
	long long total = 0;
	int fd = open("/tmp/fill", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n = 0;

	memset(block, 'x', sizeof(block));
	while (fd >= 0 && (n = write(fd, block, sizeof(block))) > 0)
		total += n;
	attempt("write", n, errno, (const int[]){ ENOSPC, 0 });
	report_len += snprintf(report + report_len, sizeof(report) - report_len,
			       " after %lld MiB", total >> 20);
	unlink("/tmp/fill");
}

/* port-scan ADDR FIRST LAST: TCP connects to the node's addresses. */
static void port_scan(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int first = argc > 1 ? atoi(argv[1]) : 1, last = argc > 2 ? atoi(argv[2]) : 100;
	int open_ports = 0, errs[8] = {}, nerr = 0;

	inet_pton(AF_INET, argc > 0 ? argv[0] : "198.18.0.1", &sa.sin_addr);
	for (int p = first; p <= last; p++) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		sa.sin_port = htons(p);
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			open_ports++;
		else if (nerr < 8 && (nerr == 0 || errs[nerr - 1] != errno))
			errs[nerr++] = errno;
		close(s);
	}
	if (open_ports)
		escaped = true;
	report_len = snprintf(report, sizeof(report), "%d of %d ports open; errors:", open_ports,
			      last - first + 1);
	for (int i = 0; i < nerr; i++)
		report_len += snprintf(report + report_len, sizeof(report) - report_len, " %s",
				       strerrorname_np(errs[i]));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: warren-attack ATTACK [ARG...]\n");
		return 2;
	}
	attack = argv[1];
	argc -= 2;
	argv += 2;
	if (strcmp(attack, "read-paths") == 0)
		read_paths(argc, argv);
	else if (strcmp(attack, "connect-api") == 0)
		connect_api(argc, argv);
	else if (strcmp(attack, "dmesg") == 0)
		dmesg();
	else if (strcmp(attack, "signal-pids") == 0)
		signal_pids(argc, argv);
	else if (strcmp(attack, "extents") == 0)
		extents(argc, argv);
	else if (strcmp(attack, "process") == 0)
		process(argc, argv);
	else if (strcmp(attack, "exe-race") == 0)
		exe_race(argc, argv);
	else if (strcmp(attack, "release-agent") == 0)
		release_agent();
	else if (strcmp(attack, "mount-race") == 0)
		mount_race();
	else if (strcmp(attack, "disk-fill") == 0)
		disk_fill();
	else if (strcmp(attack, "port-scan") == 0)
		port_scan(argc, argv);
	else {
		fprintf(stderr, "warren-attack: unknown attack '%s'\n", attack);
		return 2;
	}
	return verdict();
}

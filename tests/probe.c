/* SPDX-License-Identifier: Apache-2.0 */
/* warren-probe: a static binary that runs INSIDE a sandbox and reports what the kernel shows
 * there (crun's idea), so that tests assert real effects rather than trusting our setup code.
 *
 *   warren-probe CHECK [ARG...]
 *
 * prints one line "ok CHECK: details" or "FAIL CHECK: details" on stdout (progress lines
 * before it start with "# ") and exits 0 on pass, 1 on fail, 2 on usage errors. Tests in
 * tests/container drive it through the backend; tests through the daemon can run the same
 * checks with `exec` and look for the "ok" line. `warren-probe list` names every check. */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

static const char *check;

static int report(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int report(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s: ", ok ? "ok" : "FAIL", check);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return ok ? 0 : 1;
}

/* Reads a whole small file into buf (NUL-terminated); -errno or the length. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (got + 1 < size && (n = read(fd, buf + got, size - 1 - got)) > 0)
		got += n;
	n = n < 0 ? -errno : (ssize_t)got;
	buf[got] = '\0';
	close(fd);
	return n;
}

static int count_procs(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			n++;
	closedir(d);
	return n;
}

/* pid [MAX]: we are in our own pid namespace (pid 1 is warren-init, our pid is small) and /proc
 * lists at most MAX (16) processes, so none of the host's. */
static int check_pid(int argc, char **argv)
{
	int max = argc > 0 ? atoi(argv[0]) : 16, procs = count_procs();
	char comm[64] = "";

	read_file("/proc/1/comm", comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = '\0';
	return report(procs > 0 && procs <= max && getpid() < 1000 && comm[0],
		      "pid=%d ppid=%d procs=%d pid1=%s", getpid(), getppid(), procs, comm);
}

static int check_hostname(int argc, char **argv)
{
	struct utsname u;

	if (uname(&u) < 0)
		return report(false, "uname: %m");
	return report(argc > 0 && strcmp(u.nodename, argv[0]) == 0, "hostname=%s", u.nodename);
}

/* mounts [FORBIDDEN...]: no mount point or mount root under host paths (default /run/warren,
 * /work, /var/lib/warren, /home) appears in our mountinfo; the root is an overlay. */
static int check_mounts(int argc, char **argv)
{
	static const char *defaults[] = { "/run/warren", "/work", "/var/lib/warren", "/home" };
	const char **forbidden = argc > 0 ? (const char **)argv : defaults;
	int nforbidden = argc > 0 ? argc : (int)(sizeof(defaults) / sizeof(defaults[0]));
	char line[4096], root[1024], point[1024], fstype[64];
	bool root_overlay = false;
	int n = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return report(false, "open mountinfo: %m");
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*d %*d %*s %1023s %1023s", root, point) != 2 ||
		    sscanf(sep, " - %63s", fstype) != 1)
			continue;
		n++;
		if (strcmp(point, "/") == 0)
			root_overlay = strcmp(fstype, "overlay") == 0;
		for (int i = 0; i < nforbidden; i++) {
			size_t l = strlen(forbidden[i]);

			if (strncmp(point, forbidden[i], l) == 0 ||
			    strncmp(root, forbidden[i], l) == 0) {
				fclose(f);
				return report(false, "host path %s visible: %s on %s", forbidden[i],
					      root, point);
			}
		}
	}
	fclose(f);
	return report(root_overlay, "%d mounts, root is %s", n,
		      root_overlay ? "overlay" : "not overlay");
}

static int check_write(int argc, char **argv)
{
	const char *text = argc > 1 ? argv[1] : "warren\n";
	int fd;

	if (argc < 1)
		return report(false, "usage: write PATH [TEXT]");
	fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return report(false, "open %s: %s (errno %d)", argv[0], strerror(errno), errno);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		return report(false, "write %s: %s (errno %d)", argv[0], strerror(e), e);
	}
	close(fd);
	return report(true, "wrote %zu bytes to %s", strlen(text), argv[0]);
}

/* read PATH [EXPECTED]: the file is readable (and holds EXPECTED, a trailing newline aside). */
static int check_read(int argc, char **argv)
{
	char buf[4096];
	ssize_t n;

	if (argc < 1)
		return report(false, "usage: read PATH [EXPECTED]");
	n = read_file(argv[0], buf, sizeof(buf));
	if (n < 0)
		return report(false, "read %s: %s (errno %d)", argv[0], strerror(-n), (int)-n);
	buf[strcspn(buf, "\n")] = '\0';
	return report(argc < 2 || strcmp(buf, argv[1]) == 0, "%s: %s", argv[0], buf);
}

/* memory-bomb [MAX_MIB]: allocates and touches 1 MiB at a time, reporting progress, until the
 * OOM killer ends it. Reaching MAX_MIB (default 4096) alive is a failure. */
static int check_memory_bomb(int argc, char **argv)
{
	long max = argc > 0 ? atol(argv[0]) : 4096;

	for (long mib = 1; mib <= max; mib++) {
		char *p = malloc(1 << 20);

		if (!p)
			return report(false, "malloc failed after %ld MiB", mib - 1);
		memset(p, 0x5a, 1 << 20);
		if (mib % 16 == 0) {
			printf("# %ld MiB\n", mib);
			fflush(stdout);
		}
	}
	return report(false, "still alive after %ld MiB", max);
}

/* fork-bomb [MAX]: forks idle children until fork fails; passes if it fails with EAGAIN before
 * MAX (default 10000) children. Kills and reaps them before exiting. */
static int check_fork_bomb(int argc, char **argv)
{
	int max = argc > 0 ? atoi(argv[0]) : 10000, n = 0, err = 0;
	static pid_t kids[10000];

	if (max > 10000)
		max = 10000;
	while (n < max) {
		pid_t pid = fork();

		if (pid == 0) {
			pause();
			_exit(0);
		}
		if (pid < 0) {
			err = errno;
			break;
		}
		kids[n++] = pid;
	}
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return report(err == EAGAIN, "fork failed after %d children: %s", n,
		      err ? strerror(err) : "never");
}

/* Each call runs in a child of its own, so that one that succeeds (without a profile) cannot
 * change the probe: PTRACE_TRACEME would make warren-init our tracer, unshare would move us. */
static int try_call(int call)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), status;
	long r = -1;
	pid_t pid = fork();

	if (pid < 0)
		return errno;
	if (pid == 0) {
		switch (call) {
		case 0: r = ptrace(PTRACE_TRACEME, 0, NULL, NULL); break;
		case 1: r = mount("tmpfs", "/tmp", "tmpfs", 0, NULL); break;
		case 2: r = unshare(CLONE_NEWUSER); break;
		case 3: r = syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0); break;
		case 4: r = syscall(SYS_bpf, 0, NULL, 0); break;
		case 5: r = syscall(SYS_userfaultfd, 0); break;
		case 6: r = personality(READ_IMPLIES_EXEC); break;
		case 7: r = personality(ADDR_NO_RANDOMIZE); break;
		case 8: r = ioctl(fd, TIOCSTI, "x"); break;
		case 9: r = ioctl(fd, FICLONE, fd); break;
		case 10: r = syscall(SYS_clone3, NULL, 0); break;
		case 11: r = personality(0xffffffff); break;
		case 12: r = personality(PER_LINUX); break;
		case 13: r = syscall(SYS_setns, fd, 0); break;
		}
		_exit(r < 0 ? errno : 0);
	}
	close(fd);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* seccomp: calls the profile refuses fail with exactly EPERM (clone3 with ENOSYS), and the
 * harmless ones next to them still work. A call that succeeds shows as "=ok". */
static int check_seccomp(int argc, char **argv)
{
	static const struct {
		const char *name;
		int want; /* errno expected, 0 for success */
	} calls[] = {
		{ "ptrace(TRACEME)", EPERM },
		{ "mount(tmpfs)", EPERM },
		{ "unshare(NEWUSER)", EPERM },
		{ "keyctl", EPERM },
		{ "bpf", EPERM },
		{ "userfaultfd", EPERM },
		{ "personality(READ_IMPLIES_EXEC)", EPERM },
		{ "personality(ADDR_NO_RANDOMIZE)", EPERM },
		{ "ioctl(TIOCSTI)", EPERM },
		{ "ioctl(FICLONE)", EPERM },
		{ "clone3", ENOSYS },
		{ "personality(query)", 0 },
		{ "personality(PER_LINUX)", 0 },
		{ "setns", EPERM },
	};
	char out[1024] = "";
	size_t len = 0;
	int bad = 0;

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int err = try_call((int)i);
		bool ok = err == calls[i].want;

		bad += !ok;
		len += snprintf(out + len, sizeof(out) - len, "%s%s=%s%s", i ? " " : "",
				calls[i].name,
				err == 0 ? "ok" : err < 0 ? "crashed" : strerrorname_np(err),
				ok ? "" : "(!)");
		if (len >= sizeof(out))
			break;
	}
	return report(bad == 0, "%s", out);
}

#if defined(__x86_64__)
/* A 32-bit system call through int 0x80: the i386 table, which seccomp sees as AUDIT_ARCH_I386
 * with its own numbers. -errno or the result. */
static long syscall_i386(long nr, long a, long b, long c)
{
	long r;

	__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return r;
}

/* Runs an i386 call in a child: its result or -errno, or -1000 if the child did not exit. */
static long try_i386(long nr, long a, long b, long c)
{
	int status, p[2];
	long r = -1000;
	pid_t pid;

	if (pipe(p) < 0)
		return -1000;
	pid = fork();
	if (pid == 0) {
		r = syscall_i386(nr, a, b, c);
		(void)!write(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &r, sizeof(r)) != sizeof(r))
		r = -1000;
	close(p[0]);
	waitpid(pid, &status, 0);
	return r;
}

/* seccomp-compat: the profile also holds for the i386 syscall table (int 0x80): keyctl (288)
 * fails with EPERM there too, while getpid (20) works. Prints "unavailable" and passes when
 * the kernel runs no 32-bit code (no IA32 emulation). */
static int check_seccomp_compat(int argc, char **argv)
{
	long pid = try_i386(20, 0, 0, 0), key;

	if (pid < 0)
		return report(true, "unavailable: i386 getpid gave %ld", pid);
	key = try_i386(288, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0);
	return report(key == -EPERM, "i386 getpid=%ld keyctl=%s", pid,
		      key < 0 && key > -4096 ? strerrorname_np((int)-key) : "ok");
}
#else
static int check_seccomp_compat(int argc, char **argv)
{
	return report(true, "unavailable: not x86-64");
}
#endif

/* netdevs: the only interface is lo, and it is up. */
static int check_netdevs(int argc, char **argv)
{
	char buf[4096], names[256] = "";
	ssize_t n = read_file("/proc/net/dev", buf, sizeof(buf));
	int count = 0, s;
	bool only_lo = true;
	struct ifreq ifr = { .ifr_name = "lo" };

	if (n < 0)
		return report(false, "read /proc/net/dev: %s", strerror(-n));
	/* two header lines, then "  name: counters" */
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		char *colon = strchr(l, ':');

		if (!colon || strchr(l, '|'))
			continue;
		*colon = '\0';
		while (*l == ' ')
			l++;
		count++;
		only_lo &= strcmp(l, "lo") == 0;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 count > 1 ? "," : "", l);
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return report(false, "SIOCGIFFLAGS lo: %m");
	close(s);
	return report(only_lo && count == 1 && (ifr.ifr_flags & IFF_UP), "devices=%s lo=%s", names,
		      (ifr.ifr_flags & IFF_UP) ? "up" : "down");
}

/* loopback: a TCP connection to 127.0.0.1 inside the sandbox works. */
static int check_loopback(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c, s;

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) < 0)
		return report(false, "listen on 127.0.0.1: %m");
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
		return report(false, "connect 127.0.0.1:%d: %m", ntohs(a.sin_port));
	s = accept(l, NULL, NULL);
	if (s < 0 || write(c, "x", 1) != 1)
		return report(false, "accept/write: %m");
	char b;
	return report(read(s, &b, 1) == 1 && b == 'x', "127.0.0.1:%d round trip",
		      ntohs(a.sin_port));
}

static int status_field(const char *name, char *out, size_t size)
{
	char buf[4096], *p;
	ssize_t n = read_file("/proc/self/status", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	p = strstr(buf, name);
	if (!p)
		return -ENOENT;
	p += strlen(name);
	while (*p == ':' || *p == '\t' || *p == ' ')
		p++;
	snprintf(out, size, "%.*s", (int)strcspn(p, "\n"), p);
	return 0;
}

/* caps [EXPECTED_HEX]: effective, permitted and bounding sets all equal EXPECTED (default: the
 * container set, 0x00000000a00405fb); NoNewPrivs is reported. */
static int check_caps(int argc, char **argv)
{
	const char *want = argc > 0 ? argv[0] : "00000000a00405fb";
	char eff[32] = "", prm[32] = "", bnd[32] = "", amb[32] = "", nnp[8] = "?";

	status_field("CapEff", eff, sizeof(eff));
	status_field("CapPrm", prm, sizeof(prm));
	status_field("CapBnd", bnd, sizeof(bnd));
	status_field("CapAmb", amb, sizeof(amb));
	status_field("NoNewPrivs", nnp, sizeof(nnp));
	return report(strcmp(eff, want) == 0 && strcmp(prm, want) == 0 && strcmp(bnd, want) == 0,
		      "CapEff=%s CapPrm=%s CapBnd=%s CapAmb=%s NoNewPrivs=%s", eff, prm, bnd, amb,
		      nnp);
}

/* uid [HOST_BASE]: we are root inside, mapped to a non-zero host range (HOST_BASE if given). */
static int check_uid(int argc, char **argv)
{
	char buf[256];
	unsigned long in, host, count;
	ssize_t n = read_file("/proc/self/uid_map", buf, sizeof(buf));

	if (n < 0 || sscanf(buf, "%lu %lu %lu", &in, &host, &count) != 3)
		return report(false, "uid_map unreadable");
	bool ok = getuid() == 0 && geteuid() == 0 && getgid() == 0 && in == 0 && host != 0 &&
		  (argc < 1 || host == strtoul(argv[0], NULL, 10));
	return report(ok, "uid=%d gid=%d map=%lu:%lu:%lu", getuid(), getgid(), in, host, count);
}

/* masked: the /proc files runc masks read as empty, /proc/sys is read-only. */
static int check_masked(int argc, char **argv)
{
	static const char *files[] = { "/proc/kcore", "/proc/keys", "/proc/timer_list",
				       "/proc/sysrq-trigger", "/proc/kallsyms" };
	char buf[256], out[512] = "";
	int bad = 0, fd;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct stat st;
		ssize_t n;

		if (stat(files[i], &st) < 0) /* not in this kernel: nothing to hide */
			continue;
		n = read_file(files[i], buf, sizeof(buf));
		bool ok = S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3) && n == 0;
		bad += !ok;
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s=%s ", files[i] + 6,
			 ok ? "null" : "VISIBLE");
	}
	/* the mount flag itself: a write may fail earlier, with EACCES, on files of host root */
	struct statvfs sv;
	bool ro = statvfs("/proc/sys", &sv) == 0 && (sv.f_flag & ST_RDONLY);
	fd = open("/proc/sys/kernel/hostname", O_WRONLY | O_CLOEXEC);
	ro &= fd < 0;
	if (fd >= 0)
		close(fd);
	bad += !ro;
	snprintf(out + strlen(out), sizeof(out) - strlen(out), "sys=%s", ro ? "ro" : "WRITABLE");
	return report(bad == 0, "%s", out);
}

/* ns: prints the inode of each namespace, as stat() shows it here (the host sees the same). */
static int check_ns(int argc, char **argv)
{
	static const char *names[] = { "mnt", "pid", "net", "uts", "ipc", "user", "cgroup" };
	char path[64], out[512] = "";
	struct stat st;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", names[i]);
		if (stat(path, &st) < 0)
			return report(false, "stat %s: %m", path);
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s=%lu", i ? " " : "",
			 names[i], (unsigned long)st.st_ino);
	}
	return report(true, "%s", out);
}

/* cgroup: every line of /proc/self/cgroup reads "/" (the namespace is rooted at our cgroup). */
static int check_cgroup(int argc, char **argv)
{
	char buf[2048];
	ssize_t n = read_file("/proc/self/cgroup", buf, sizeof(buf));
	bool ok = n > 0;

	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		char *path = strrchr(l, ':');

		ok &= path && strcmp(path, ":/") == 0;
	}
	for (char *p = buf; n > 0 && p < buf + n; p++)
		if (*p == '\0')
			*p = ' ';
	return report(ok, "%s", buf);
}

/* devices: the minimal /dev works: null, zero, a pty from our own devpts, shm; and no device
 * node can be made, where devices work (/dev) or anywhere (/dev/shm, /tmp): EPERM. */
static int check_devices(int argc, char **argv)
{
	char z[4] = "xxx";
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	bool zero = fd >= 0 && read(fd, z, 3) == 3 && !z[0] && !z[2];
	if (fd >= 0)
		close(fd);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	bool null = fd >= 0 && write(fd, "x", 1) == 1;
	if (fd >= 0)
		close(fd);
	fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	bool pty = fd >= 0 && grantpt(fd) == 0 && unlockpt(fd) == 0 && ptsname(fd);
	if (fd >= 0)
		close(fd);
	fd = open("/dev/shm/probe", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	bool shm = fd >= 0 && unlink("/dev/shm/probe") == 0;
	if (fd >= 0)
		close(fd);
	/* /dev/mem: what a node made by the sandbox would reach. */
	int e_dev = mknod("/dev/mem", S_IFCHR | 0600, makedev(1, 1)) < 0 ? errno : 0;
	int e_shm = mknod("/dev/shm/mem", S_IFCHR | 0600, makedev(1, 1)) < 0 ? errno : 0;
	int e_tmp = mknod("/tmp/mem", S_IFCHR | 0600, makedev(1, 1)) < 0 ? errno : 0;
	bool no_mknod = (e_dev == EPERM || e_dev == EACCES) && e_shm == EPERM && e_tmp == EPERM;

	return report(zero && null && pty && shm && no_mknod,
		      "zero=%d null=%d pty=%d shm=%d mknod: /dev %s, /dev/shm %s, /tmp %s", zero,
		      null, pty, shm, strerror(e_dev), strerror(e_shm), strerror(e_tmp));
}

static int check_sleep(int argc, char **argv)
{
	printf("# sleeping\n");
	fflush(stdout);
	sleep(argc > 0 ? atoi(argv[0]) : 3600);
	return report(true, "slept");
}

static int check_exit(int argc, char **argv)
{
	return argc > 0 ? atoi(argv[0]) : 0;
}

/* stdin: copies stdin to stdout and reports the byte count at EOF. */
static int check_stdin(int argc, char **argv)
{
	char buf[4096];
	ssize_t n, total = 0;

	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0) {
		fwrite(buf, 1, n, stdout);
		total += n;
	}
	return report(n == 0, "%zd bytes", total);
}

static int check_cwd(int argc, char **argv)
{
	char buf[4096];

	if (!getcwd(buf, sizeof(buf)))
		return report(false, "getcwd: %m");
	return report(argc < 1 || strcmp(buf, argv[0]) == 0, "%s", buf);
}

static int check_env(int argc, char **argv)
{
	const char *v = argc > 0 ? getenv(argv[0]) : NULL;

	return report(v && (argc < 2 || strcmp(v, argv[1]) == 0), "%s=%s", argc ? argv[0] : "?",
		      v ? v : "(unset)");
}

/* syscall NAME...: makes each call here, in this process (so that the kernel's audit record
 * names this pid), and prints "NAME=ok" or "NAME=ERRNO". Passes always: the test reads the
 * line. */
static int check_syscall(int argc, char **argv)
{
	char out[512] = "";
	size_t len = 0;

	for (int i = 0; i < argc; i++) {
		struct utsname u;
		long r;

		if (strcmp(argv[i], "keyctl") == 0)
			r = syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0);
		else if (strcmp(argv[i], "uname") == 0)
			r = uname(&u);
		else if (strcmp(argv[i], "getppid") == 0)
			r = syscall(SYS_getppid);
		else if (strcmp(argv[i], "clone3") == 0)
			r = syscall(SYS_clone3, NULL, 0); /* EFAULT/EINVAL without a profile */
		else if (strcmp(argv[i], "ptrace") == 0)
			r = syscall(SYS_ptrace, PTRACE_PEEKDATA, 1, NULL, NULL);
		else
			return report(false, "unknown call %s", argv[i]);
		len += snprintf(out + len, sizeof(out) - len, "%s%s=%s", i ? " " : "", argv[i],
				r < 0 ? strerrorname_np(errno) : "ok");
		if (len >= sizeof(out))
			break;
	}
	return report(true, "%s", out);
}

/* leak-fd FD NAME: FD is a directory of the host that reached us (a leaked descriptor, runc's
 * CVE-2024-21626). Opening NAME through it, and through it as the working directory, must fail
 * with EACCES (Landlock), while the sandbox's own /etc/marker still reads. */
static int check_leak_fd(int argc, char **argv)
{
	char buf[64];
	int fd, via_at, via_cwd, inside;

	if (argc < 2)
		return report(false, "usage: leak-fd FD NAME");
	fd = atoi(argv[0]);
	via_at = openat(fd, argv[1], O_RDONLY | O_CLOEXEC);
	via_at = via_at < 0 ? errno : (read(via_at, buf, sizeof(buf)) >= 0 ? 0 : errno);
	if (fork() == 0) {
		/* the working directory variant, in a child so that ours stays */
		int r = fchdir(fd) < 0 ? errno : open(argv[1], O_RDONLY | O_CLOEXEC) < 0 ? errno : 0;
		_exit(r);
	}
	{
		int status;

		wait(&status);
		via_cwd = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	}
	inside = read_file("/etc/marker", buf, sizeof(buf)) > 0 ? 0 : errno;
	return report(via_at == EACCES && via_cwd == EACCES && inside == 0,
		      "openat=%s fchdir+open=%s inside=%s",
		      via_at ? strerrorname_np(via_at) : "ok",
		      via_cwd > 0 ? strerrorname_np(via_cwd) : via_cwd == 0 ? "ok" : "crashed",
		      inside ? strerrorname_np(inside) : "ok");
}

/* signal PID: a signal (0) to PID, a process of another Landlock domain (the sandbox's init
 * tree, seen from an exec), fails with EPERM; one to our own child works. */
static int check_signal(int argc, char **argv)
{
	pid_t child, target = argc > 0 ? atoi(argv[0]) : 1;
	int own, other;

	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	own = kill(child, 0) < 0 ? errno : 0;
	other = kill(target, 0) < 0 ? errno : 0;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return report(own == 0 && other == EPERM, "own-child=%s pid%d=%s",
		      own ? strerrorname_np(own) : "ok", (int)target,
		      other ? strerrorname_np(other) : "ok");
}

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
	size_t n = strnlen(name, sizeof(a->sun_path) - 2);

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path + 1, name, n); /* sun_path[0] == 0: the abstract namespace */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* abstract-listen NAME: listens on the abstract unix socket @NAME and accepts forever. */
static int check_abstract_listen(int argc, char **argv)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, argc > 0 ? argv[0] : "warren-probe");
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0 || bind(s, (struct sockaddr *)&a, len) < 0 || listen(s, 16) < 0)
		return report(false, "listen: %m");
	printf("# listening\n");
	fflush(stdout);
	for (;;) {
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);

		if (c >= 0)
			close(c);
	}
}

/* abstract-connect NAME: connecting to @NAME, served by another Landlock domain, fails with
 * EPERM. */
static int check_abstract_connect(int argc, char **argv)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, argc > 0 ? argv[0] : "warren-probe");
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), err;

	if (s < 0)
		return report(false, "socket: %m");
	err = connect(s, (struct sockaddr *)&a, len) < 0 ? errno : 0;
	return report(err == EPERM, "connect=%s", err ? strerrorname_np(err) : "ok");
}

/* exec-channel HOST_PATH: the init's exec channel is out of our reach. We hold no descriptor
 * but 0-2 (its socket and connections are close-on-exec); the init's are behind its being
 * non-dumpable (readlink of /proc/1/fd/3, pidfd_getfd); HOST_PATH, where the daemon reaches the
 * socket, is not in our mount namespace. */
static int check_exec_channel(int argc, char **argv)
{
	char fds[64] = "", link[256];
	size_t len = 0;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int proc_err, getfd_err, connect_err, pidfd, s;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (!d || argc < 1)
		return report(false, "usage, or /proc/self/fd: %m");
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]) && atoi(de->d_name) != dirfd(d))
			len += snprintf(fds + len, sizeof(fds) - len, "%s%s", len ? "," : "",
					de->d_name);
	closedir(d);
	proc_err = readlink("/proc/1/fd/3", link, sizeof(link)) < 0 ? errno : 0;
	pidfd = (int)syscall(SYS_pidfd_open, 1, 0);
	getfd_err = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, 3, 0) < 0 ? errno : 0;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", argv[0]);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	connect_err = s < 0 ? -1 : connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
	return report(strcmp(fds, "0,1,2") == 0 && proc_err == EACCES && getfd_err == EPERM &&
			      connect_err == ENOENT,
		      "fds=%s init-fd3=%s pidfd_getfd=%s connect=%s", fds,
		      proc_err ? strerrorname_np(proc_err) : "ok",
		      getfd_err > 0 ? strerrorname_np(getfd_err) : getfd_err ? "no-pidfd" : "ok",
		      connect_err > 0 ? strerrorname_np(connect_err) : connect_err ? "no-socket" :
									      "ok");
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} checks[] = {
	{ "pid", check_pid },
	{ "hostname", check_hostname },
	{ "mounts", check_mounts },
	{ "write", check_write },
	{ "read", check_read },
	{ "memory-bomb", check_memory_bomb },
	{ "fork-bomb", check_fork_bomb },
	{ "seccomp", check_seccomp },
	{ "seccomp-compat", check_seccomp_compat },
	{ "netdevs", check_netdevs },
	{ "loopback", check_loopback },
	{ "caps", check_caps },
	{ "uid", check_uid },
	{ "masked", check_masked },
	{ "ns", check_ns },
	{ "cgroup", check_cgroup },
	{ "devices", check_devices },
	{ "sleep", check_sleep },
	{ "exit", check_exit },
	{ "stdin", check_stdin },
	{ "cwd", check_cwd },
	{ "env", check_env },
	{ "syscall", check_syscall },
	{ "leak-fd", check_leak_fd },
	{ "signal", check_signal },
	{ "abstract-listen", check_abstract_listen },
	{ "abstract-connect", check_abstract_connect },
	{ "exec-channel", check_exec_channel },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: warren-probe CHECK [ARG...]  (warren-probe list)\n");
		return 2;
	}
	check = argv[1];
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if (strcmp(checks[i].name, check) == 0)
			return checks[i].fn(argc - 2, argv + 2);
	if (strcmp(check, "list") == 0) {
		for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
			printf("%s\n", checks[i].name);
		return 0;
	}
	fprintf(stderr, "warren-probe: unknown check '%s'\n", check);
	return 2;
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* --- clocks and samples -------------------------------------------------------------------- */

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double now_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sleep_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !bench_interrupted)
		;
}

int samples_add(struct samples *s, double ms)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		double *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = ms;
	s->sorted = false;
	return 0;
}

int samples_merge(struct samples *dst, const struct samples *src)
{
	for (size_t i = 0; i < src->n; i++) {
		int r = samples_add(dst, src->v[i]);

		if (r < 0)
			return r;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double samples_pct(struct samples *s, double p)
{
	size_t rank;

	if (s->n == 0)
		return NAN;
	if (!s->sorted) {
		qsort(s->v, s->n, sizeof(*s->v), cmp_double);
		s->sorted = true;
	}
	/* Nearest rank: the smallest value with at least p% of the samples at or below it. */
	rank = (size_t)ceil(p / 100.0 * (double)s->n);
	if (rank < 1)
		rank = 1;
	if (rank > s->n)
		rank = s->n;
	return s->v[rank - 1];
}

double samples_max(struct samples *s)
{
	return samples_pct(s, 100);
}

double samples_mean(const struct samples *s)
{
	double sum = 0;

	if (s->n == 0)
		return NAN;
	for (size_t i = 0; i < s->n; i++)
		sum += s->v[i];
	return sum / (double)s->n;
}

void samples_done(struct samples *s)
{
	free(s->v);
	*s = (struct samples){};
}

/* --- interruption -------------------------------------------------------------------------- */

volatile sig_atomic_t bench_interrupted;

static void on_signal(int sig)
{
	static const char msg[] = "\nbench: interrupted: finishing the current iteration and "
				  "cleaning up (again to force)\n";

	if (bench_interrupted) {
		/* A second Ctrl-C: the user wants out now. The clean-up is skipped. */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	bench_interrupted = 1;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
}

void bench_signals_install(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* --- the scratch environment --------------------------------------------------------------- */

int bench_env_init(struct bench_env *e, const char *name, const char *warrend,
		   const char *image)
{
	char *slash;

	*e = (struct bench_env){ .log_fd = -EBADF };
	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->dir, sizeof(e->dir), "/tmp/warren-bench-%s-%d", name, (int)getpid());
	snprintf(e->rootfs, sizeof(e->rootfs), "%s/rootfs", e->dir);
	snprintf(e->warrend, sizeof(e->warrend), "%s",
		 warrend ? warrend : BENCH_BUILD_ROOT "/warrend");
	snprintf(e->image, sizeof(e->image), "%s",
		 image ? image : BENCH_BUILD_ROOT "/tests/images/base.erofs");
	snprintf(e->images_dir, sizeof(e->images_dir), "%s", e->image);
	slash = strrchr(e->images_dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(e->images_dir, ".");

	if (access(e->warrend, X_OK) < 0) {
		fprintf(stderr, "bench: %s: %m: build it (ninja -C BUILD) or pass --warrend\n",
			e->warrend);
		return -ENOENT;
	}
	if (access(e->image, R_OK) < 0) {
		fprintf(stderr, "bench: %s: %m: build it (ninja -C BUILD) or pass --image\n",
			e->image);
		return -ENOENT;
	}
	/* warrend serves <dir>/base.erofs as image "base": a file named otherwise is not it. */
	if (strcmp(e->image + strlen(e->images_dir), "/base.erofs") != 0) {
		fprintf(stderr, "bench: --image must name a file called base.erofs\n");
		return -EINVAL;
	}
	return 0;
}

int bench_env_setup(struct bench_env *e, bool mount_rootfs)
{
	char path[300];

	if (geteuid() != 0) {
		fprintf(stderr, "bench: needs root (warrend, namespaces, cgroups, mounts)\n");
		return -EPERM;
	}
	/* 0711: sandbox roots (host uid 100000) walk through it to reach the rootfs. */
	if (mkdir(e->dir, 0711) < 0) {
		fprintf(stderr, "bench: mkdir %s: %m\n", e->dir);
		return -errno;
	}
	chmod(e->dir, 0711);
	snprintf(path, sizeof(path), "%s/peers.log", e->dir);
	e->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (e->log_fd < 0)
		return -errno;
	if (!mount_rootfs)
		return 0;
	if (mkdir(e->rootfs, 0755) < 0)
		return -errno;
	if (mount(e->image, e->rootfs, "erofs", MS_RDONLY | MS_NODEV | MS_NOSUID, NULL) < 0) {
		fprintf(stderr, "bench: mount %s on %s: %m\n", e->image, e->rootfs);
		return -errno;
	}
	e->rootfs_mounted = true;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* Lazily unmounts whatever is mounted under dir (a warrend that died leaves its image mount
 * in its state directory), deepest first. */
static void umount_under(const char *dir)
{
	char line[4096], *mps[256];
	size_t len = strlen(dir), n = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n < ELEMENTSOF(mps)) {
		char mp[4096];

		/* The fifth field is the mount point (octal escapes do not occur in our paths). */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 && strncmp(mp, dir, len) == 0 &&
		    (mp[len] == '/' || mp[len] == '\0'))
			mps[n++] = strdup(mp);
	}
	fclose(f);
	while (n-- > 0) {
		if (mps[n])
			umount2(mps[n], MNT_DETACH);
		free(mps[n]);
	}
}

void bench_env_cleanup(struct bench_env *e)
{
	if (e->rootfs_mounted) {
		if (umount2(e->rootfs, MNT_DETACH) < 0)
			fprintf(stderr, "bench: umount %s: %m\n", e->rootfs);
		e->rootfs_mounted = false;
	}
	e->log_fd = safe_close(e->log_fd);
	if (e->dir[0] && access(e->dir, F_OK) == 0) {
		umount_under(e->dir);
		/* FTW_MOUNT: never step into a file system we did not expect to find there. */
		nftw(e->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
		if (access(e->dir, F_OK) == 0)
			fprintf(stderr, "bench: could not remove %s entirely\n", e->dir);
	}
}

void bench_env_print_log_tail(const struct bench_env *e)
{
	char path[300], buf[2048];
	ssize_t n;
	int fd;
	off_t size;

	snprintf(path, sizeof(path), "%s/peers.log", e->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		fprintf(stderr, "--- last lines of the runtimes' stderr ---\n%s\n---\n", buf);
	}
}

/* --- a private warrend --------------------------------------------------------------------- */

static bool daemon_alive(struct bench_daemon *d, int *status)
{
	pid_t r = waitpid(d->pid, status, WNOHANG);

	if (r == d->pid) {
		d->pid = -1;
		return false;
	}
	return true;
}

int bench_daemon_start(struct bench_daemon *d, const struct bench_env *e,
		       const char *const *extra)
{
	char log[320];
	const char *argv[48];
	int n = 0, status;

	*d = (struct bench_daemon){ .pid = -1 };
	snprintf(d->dir, sizeof(d->dir), "%s/warrend", e->dir);
	snprintf(d->sock, sizeof(d->sock), "%s/warren.sock", d->dir);
	snprintf(d->cgname, sizeof(d->cgname), "warren-bench-%s-%d", e->name, (int)getpid());
	snprintf(log, sizeof(log), "%s/warrend.log", e->dir);
	if (mkdir(d->dir, 0711) < 0 && errno != EEXIST)
		return -errno;

	argv[n++] = e->warrend;
	argv[n++] = "--socket";
	argv[n++] = d->sock;
	argv[n++] = "--state-dir";
	argv[n++] = d->dir;
	argv[n++] = "--images";
	argv[n++] = e->images_dir;
	argv[n++] = "--cgroup-name";
	argv[n++] = d->cgname;
	argv[n++] = "--log-level";
	argv[n++] = getenv("WARREN_BENCH_LOG") ? getenv("WARREN_BENCH_LOG") : "warning";
	for (; extra && *extra && n < (int)ELEMENTSOF(argv) - 1; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;

	d->pid = fork();
	if (d->pid < 0)
		return -errno;
	if (d->pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		/* Its own process group: the terminal's SIGINT is the bench's to handle. */
		setpgid(0, 0);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	setpgid(d->pid, d->pid);
	for (int i = 0; i < 1000; i++) {
		struct warren_client *c;

		if (access(d->sock, F_OK) == 0 && warren_connect(d->sock, &c) == 0) {
			warren_client_free(c);
			return 0;
		}
		if (!daemon_alive(d, &status)) {
			fprintf(stderr,
				"bench: warrend exited during start-up (status 0x%x), see %s\n",
				status, log);
			return -ECHILD;
		}
		sleep_us(10000);
	}
	fprintf(stderr, "bench: warrend did not open %s within 10 s\n", d->sock);
	bench_daemon_stop(d);
	return -ETIMEDOUT;
}

int bench_daemon_stop(struct bench_daemon *d)
{
	int status = 0;

	if (d->pid <= 0)
		return 0;
	kill(d->pid, SIGTERM);
	for (int i = 0; i < 3000; i++) {
		pid_t r = waitpid(d->pid, &status, WNOHANG);

		if (r == d->pid || (r < 0 && errno != EINTR))
			break;
		/* Not sleep_us(): it gives up early once interrupted, and this wait must not. */
		usleep(10000);
		if (i == 2999) {
			fprintf(stderr, "bench: warrend did not stop within 30 s: SIGKILL\n");
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &status, 0);
		}
	}
	d->pid = -1;
	/* A warrend that was killed leaves its cgroups; they are ours to remove. */
	cgroup_rmtree_everywhere(d->cgname);
	return status;
}

int bench_daemon_client(const struct bench_daemon *d, struct warren_client **ret)
{
	struct warren_client *c;
	int r;

	r = warren_client_new(d->sock, &c);
	if (r < 0)
		return r;
	r = warren_client_open(c);
	if (r < 0) {
		fprintf(stderr, "bench: %s\n", warren_error_message(c));
		warren_client_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* --- /proc --------------------------------------------------------------------------------- */

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

int proc_cpu_ticks(pid_t pid, uint64_t *ret_self, uint64_t *ret_children)
{
	char path[64], buf[2048], *p;
	unsigned long long ut, st, cut, cst;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = read_file(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	/* comm may hold spaces and parentheses: the fields start after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EBADMSG;
	/* After ')': state(3) ... utime is field 14, stime 15, cutime 16, cstime 17. */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &ut,
		   &st, &cut, &cst) != 4)
		return -EBADMSG;
	*ret_self = ut + st;
	if (ret_children)
		*ret_children = cut + cst;
	return 0;
}

int proc_busy_ticks(uint64_t *ret)
{
	char buf[512];
	unsigned long long v[8] = {};
	int r;

	r = read_file("/proc/stat", buf, sizeof(buf));
	if (r < 0)
		return r;
	/* cpu user nice system idle iowait irq softirq steal */
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) < 7)
		return -EBADMSG;
	*ret = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	return 0;
}

double ticks_to_s(uint64_t ticks)
{
	static long hz;

	if (!hz)
		hz = sysconf(_SC_CLK_TCK);
	return (double)ticks / (double)(hz > 0 ? hz : 100);
}

static long find_kib(const char *buf, const char *field)
{
	size_t len = strlen(field);

	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, field, len) == 0 && p[len] == ':')
			return strtol(p + len + 1, NULL, 10);
	return -ENOENT;
}

long meminfo_kib(const char *field)
{
	char buf[8192];
	int r = read_file("/proc/meminfo", buf, sizeof(buf));

	return r < 0 ? r : find_kib(buf, field);
}

long proc_status_kib(pid_t pid, const char *field)
{
	char path[64], buf[8192];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	r = read_file(path, buf, sizeof(buf));
	return r < 0 ? r : find_kib(buf, field);
}

const char *loadavg(char buf[32])
{
	double a, b, c;
	char raw[128];

	if (read_file("/proc/loadavg", raw, sizeof(raw)) < 0 ||
	    sscanf(raw, "%lf %lf %lf", &a, &b, &c) != 3)
		return strcpy(buf, "?");
	snprintf(buf, 32, "%.2f %.2f %.2f", a, b, c);
	return buf;
}

/* --- cgroups ------------------------------------------------------------------------------- */

const char *cgroup2_mount(void)
{
	struct statfs sf;

	if (statfs("/sys/fs/cgroup/unified", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
		return "/sys/fs/cgroup/unified";
	return "/sys/fs/cgroup";
}

static int rmdir_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	/* Only directories: cgroup control files cannot (and must not) be unlinked. */
	if (flag == FTW_DP && rmdir(path) < 0 && errno != ENOENT)
		fprintf(stderr, "bench: rmdir %s: %m\n", path);
	return 0;
}

int cgroup_rmtree(const char *path)
{
	if (access(path, F_OK) < 0)
		return 0;
	if (nftw(path, rmdir_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		return -errno;
	return access(path, F_OK) == 0 ? -EBUSY : 0;
}

void cgroup_rmtree_everywhere(const char *name)
{
	char path[512];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", cgroup2_mount(), name);
	cgroup_rmtree(path);
	d = opendir("/sys/fs/cgroup");
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "unified") == 0)
			continue;
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/%s", de->d_name, name);
		cgroup_rmtree(path);
	}
	closedir(d);
}

/* --- options ------------------------------------------------------------------------------- */

int parse_uint_arg(const char *opt, const char *s, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v > max || s[0] == '-') {
		fprintf(stderr, "bench: %s wants a number from 0 to %lu, got '%s'\n", opt, max, s);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

int parse_double_arg(const char *opt, const char *s, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || !*s || *end || !(v > 0) || !isfinite(v)) {
		fprintf(stderr, "bench: %s wants a positive number, got '%s'\n", opt, s);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

int bench_common_option(int c, const char *arg, bool *json, const char **warrend,
			const char **image, void (*usage)(FILE *))
{
	switch (c) {
	case BENCH_OPT_JSON:
		*json = true;
		return 0;
	case BENCH_OPT_WARREND:
		*warrend = arg;
		return 0;
	case BENCH_OPT_IMAGE:
		*image = arg;
		return 0;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		usage(stderr);
		return -EINVAL;
	}
}

int bench_no_operands(const char *prog, int argc, char **argv)
{
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		return -EINVAL;
	}
	return 0;
}

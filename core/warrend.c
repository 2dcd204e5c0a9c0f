/* SPDX-License-Identifier: Apache-2.0 */
/* warrend: the warren node daemon. */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include "api.h"
#include "backend.h"
#include "cgroup.h"
#include "config.h"
#include "daemon.h"
#include "denial.h"
#include "image.h"
#include "info.h"
#include "audit-feed.h"
#include "log.h"
#include "nspool.h"
#include "network.h"
#include "profile.h"
#include "sandbox.h"

#ifdef WARREN_MIMALLOC
#include <mimalloc.h>
#endif

#define DENIAL_JOURNAL_BYTES (16u << 20)
#define DENIAL_RING_RECORDS 4096
#define NSPOOL_TARGET 16 /* (user, network) namespace pairs made ahead */

static pthread_barrier_t loops_ready;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: warrend [OPTION]...\n"
		"Runs the warren node daemon: sandboxes for AI agents, driven over HTTP+JSON on a\n"
		"Unix socket (see docs/api.md). Needs root.\n\n"
		"  --socket PATH        API socket (default /run/warren/warren.sock, mode 0660)\n"
		"  --state-dir DIR      logs and runtime state (default /run/warren); not on a tmpfs,\n"
		"                       it gets one of warrend's own for the exec sockets\n"
		"  --images DIR         where <name>.erofs images live (default /var/lib/warren/images)\n"
		"  --init PATH          warren-init binary (default: beside warrend, else %s);\n"
		"                       the spawn zygote, warren-zygote, is taken from beside it\n"
		"  --cores N            event loops, one thread each (default: online CPUs)\n"
		"  --max-sandboxes N    refuse creates beyond N live sandboxes with 429 (default:\n"
		"                       what the node's memory, pid_max, open-files and namespace\n"
		"                       limits allow; GET /v1/info shows it)\n"
		"  --max-conns N        connections per loop before 503 (default 1024)\n"
		"  --uid-base UID       host uid that root in a sandbox maps to (default 100000)\n"
		"  --uid-count N        size of that uid range (default 65536)\n"
		"  --cgroup-name NAME   parent cgroup in each hierarchy (default warren)\n"
		"  --log-level LEVEL    error, warning, info or debug (default info)\n"
		"  --allow-host-network let sandboxes ask for network mode host (refused otherwise)\n"
		"  --profiles DIR       seccomp/<name>.profile and apparmor/ templates (default %s)\n"
		"  -h, --help           this help\n"
		"  --version            print the version\n",
		WARREN_LIBEXECDIR "/warren-init", profile_default_dir());
}

static int parse_uint(const char *s, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* name in the directory of path. */
static char *beside(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');
	char *p;

	if (asprintf(&p, "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, name) < 0)
		return NULL;
	return p;
}

static char *default_init_path(void)
{
	char exe[PATH_MAX], *p;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		p = beside(exe, "warren-init");
		if (p && access(p, X_OK) == 0)
			return p;
		free(p);
	}
	return strdup(WARREN_LIBEXECDIR "/warren-init");
}

static int parse_args(int argc, char **argv, struct daemon *d)
{
	enum { O_SOCKET = 256, O_STATE, O_IMAGES, O_INIT, O_CORES, O_MAXSB, O_MAXCONN, O_UIDBASE,
	       O_UIDCOUNT, O_CGNAME, O_LOGLEVEL, O_HOSTNET, O_PROFILES, O_VERSION };
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, O_SOCKET },
		{ "state-dir", required_argument, NULL, O_STATE },
		{ "images", required_argument, NULL, O_IMAGES },
		{ "init", required_argument, NULL, O_INIT },
		{ "cores", required_argument, NULL, O_CORES },
		{ "max-sandboxes", required_argument, NULL, O_MAXSB },
		{ "max-conns", required_argument, NULL, O_MAXCONN },
		{ "uid-base", required_argument, NULL, O_UIDBASE },
		{ "uid-count", required_argument, NULL, O_UIDCOUNT },
		{ "cgroup-name", required_argument, NULL, O_CGNAME },
		{ "log-level", required_argument, NULL, O_LOGLEVEL },
		{ "allow-host-network", no_argument, NULL, O_HOSTNET },
		{ "profiles", required_argument, NULL, O_PROFILES },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{}
	};
	unsigned long v;
	int c, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
		r = 0;
		switch (c) {
		case O_SOCKET: free(d->socket_path); d->socket_path = strdup(optarg); break;
		case O_STATE: free(d->state_dir); d->state_dir = strdup(optarg); break;
		case O_IMAGES: free(d->images_dir); d->images_dir = strdup(optarg); break;
		case O_INIT: free(d->init_path); d->init_path = strdup(optarg); break;
		case O_CGNAME: free(d->cgroup_name); d->cgroup_name = strdup(optarg); break;
		case O_PROFILES: free(d->profiles_dir); d->profiles_dir = strdup(optarg); break;
		case O_CORES:
			r = parse_uint(optarg, 255, &v);
			d->n_loops = v;
			if (!v)
				r = -EINVAL;
			break;
		case O_MAXSB:
			r = parse_uint(optarg, 1000000, &v);
			d->max_sandboxes = v;
			break;
		case O_MAXCONN:
			r = parse_uint(optarg, 1000000, &v);
			d->max_conns = v;
			break;
		case O_UIDBASE:
			r = parse_uint(optarg, UINT32_MAX - 65536, &v);
			d->uid_base = v;
			if (!v)
				r = -EINVAL; /* host root must never be mapped */
			break;
		case O_UIDCOUNT:
			r = parse_uint(optarg, 1u << 24, &v);
			d->uid_count = v;
			if (!v)
				r = -EINVAL;
			break;
		case O_LOGLEVEL:
			r = log_level_from_string(optarg);
			if (r >= 0)
				log_set_level(r);
			break;
		case O_HOSTNET:
			d->allow_host_network = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case O_VERSION:
			printf("warrend %s\n", WARREN_VERSION);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
		if (r < 0) {
			fprintf(stderr, "warrend: invalid value '%s' for --%s; see warrend --help\n",
				optarg, opts[c - O_SOCKET].name);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "warrend: unexpected argument '%s'; see warrend --help\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) < 0 && errno != EEXIST)
				return -errno;
			*p = '/';
		}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Removes what a directory holds but directories (logs and exec sockets of sandboxes no
 * daemon owns any more). */
static void sweep_dir(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;

	if (!dir)
		return;
	while ((e = readdir(dir)))
		if (e->d_type != DT_DIR)
			(void)unlinkat(dirfd(dir), e->d_name, 0);
	closedir(dir);
}

/* Whether a daemon answers on the socket. Connecting is not enough: for a moment after a
 * warrend is killed, the kernel's asynchronous io_uring teardown keeps its listening socket
 * (held by a pending accept) open, and connects succeed that nobody will ever answer. */
static bool socket_answers(int fd, const struct sockaddr_un *sa)
{
	static const char req[] = "GET /v1/info HTTP/1.1\r\nHost: warren\r\n\r\n";
	struct timeval tv = { .tv_sec = 2 };
	char buf[16];

	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
		return false;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) < 0)
		return false;
	return recv(fd, buf, sizeof(buf), 0) > 0;
}

static int listen_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -EBADF;
	struct stat st;

	if (strlen(path) >= sizeof(sa.sun_path))
		return log_errno(-ENAMETOOLONG, "socket path %s", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return log_errno(-errno, "socket");
	if (lstat(path, &st) == 0) {
		/* A live daemon answers on it; a stale socket from a crash does not. */
		if (S_ISSOCK(st.st_mode) && socket_answers(fd, &sa))
			return log_errno(-EADDRINUSE,
					 "another warrend is serving %s; stop it or pick --socket", path);
		if (!S_ISSOCK(st.st_mode))
			return log_errno(-EEXIST, "%s exists and is not a socket", path);
		unlink(path);
		safe_close(fd);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return log_errno(-errno, "socket");
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return log_errno(-errno, "bind %s", path);
	if (chmod(path, 0660) < 0 || listen(fd, 4096) < 0)
		return log_errno(-errno, "listen on %s", path);
	return TAKE_FD(fd);
}

/* ---- loops -------------------------------------------------------------------------------- */

static void loop_begin_drain(struct loop *l)
{
	l->draining = true;
	http_close_all(l);
	sandbox_shutdown_all(l);
}

static void on_stop_msg(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	loop_begin_drain(l);
}

static struct signalfd_siginfo sig_info;
static struct io_op signal_op;

static void on_signal(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct daemon *d = l->d;

	if (res != sizeof(sig_info)) {
		log_warn_errno(res < 0 ? res : -EIO, "reading the signalfd");
		return;
	}
	log_info("got %s: removing all sandboxes and stopping", strsignal(sig_info.ssi_signo));
	atomic_store(&d->stopping, true);
	for (unsigned i = 1; i < d->n_loops; i++)
		loop_send(l, &d->loops[i], &d->loops[i].stop_op);
	loop_begin_drain(l);
}

static void *loop_thread(void *arg)
{
	struct loop *l = arg;
	struct daemon *d = l->d;
	intptr_t r;

	r = loop_init(l, d, l - d->loops);
	if (r >= 0)
		r = sandbox_table_new(l);
	io_op_init(&l->stop_op, on_stop_msg);
	pthread_barrier_wait(&loops_ready);
	if (r < 0)
		return (void *)r;
	http_start(l);
	if (l->idx == 0) {
		io_op_init(&signal_op, on_signal);
		io_uring_prep_read(loop_sqe(l, &signal_op), d->signal_fd, &sig_info,
				   sizeof(sig_info), 0);
		network_denials_start(l);
		audit_feed_start(l);
	}
	loop_zygote_watch(l);
	r = loop_run(l);
	sandbox_table_free(l);
	loop_done(l);
	return (void *)r;
}

/* ---- setup -------------------------------------------------------------------------------- */

static int setup(struct daemon *d)
{
	struct rlimit rl;
	sigset_t mask;
	int r;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (asprintf(&d->log_dir, "%s/logs", d->state_dir) < 0 ||
	    asprintf(&d->exec_dir, "%s/exec", d->state_dir) < 0 ||
	    asprintf(&d->scratch_dir, "%s/mnt", d->state_dir) < 0 ||
	    asprintf(&d->image_mount_dir, "%s/images", d->state_dir) < 0)
		return -ENOMEM;
	/* 0711: the sandboxes' scratch mount point and the logs are not for other users. */
	if ((r = mkdir_p(d->state_dir, 0711)) < 0 || (r = mkdir_p(d->log_dir, 0700)) < 0 ||
	    (r = mkdir_p(d->scratch_dir, 0700)) < 0 || (r = mkdir_p(d->image_mount_dir, 0711)) < 0)
		return log_errno(r, "creating %s", d->state_dir);
	{
		char *dir = strdup(d->socket_path), *slash = dir ? strrchr(dir, '/') : NULL;

		if (slash && slash != dir) {
			*slash = '\0';
			r = mkdir_p(dir, 0755);
		}
		free(dir);
		if (r < 0)
			return log_errno(r, "creating the socket's directory");
	}

	r = denial_journal_open(d->state_dir, DENIAL_JOURNAL_BYTES, DENIAL_RING_RECORDS);
	if (r < 0)
		return log_errno(r, "opening the denial journal in %s", d->state_dir);
	r = cg_node_new(d->cgroup_name, &d->cg);
	if (r < 0)
		return log_errno(r, "setting up cgroups");
	/* A warrend that crashed or was killed left its sandboxes' cgroups (its processes die
	 * with it: PR_SET_PDEATHSIG) and logs behind; nothing of this daemon exists yet. */
	r = cg_node_sweep(d->cg);
	if (r > 0)
		log_warn("removed %d sandbox cgroups left by an earlier warrend", r);
	sweep_dir(d->log_dir);
	r = sandbox_exec_dir_open(d);
	if (r < 0)
		return r;
	sweep_dir(d->exec_dir);
	r = image_store_open(d->images_dir, d->image_mount_dir, &d->images);
	if (r < 0)
		return log_errno(r, "opening the images in %s", d->images_dir);
	if (image_store_count(d->images) == 0)
		log_warn("no images in %s: build one with tools/mkimage %s/base.erofs",
			 d->images_dir, d->images_dir);
	{
		char msg[PROFILE_ERROR_MAX];

		r = profile_set_open(d->profiles_dir, &d->profiles, msg);
		if (r < 0)
			return log_errno(r, "loading the profiles in %s: %s", d->profiles_dir, msg);
	}
	r = d->init_fd = container_init_memfd(d->init_path);
	if (r < 0)
		return log_errno(r, "loading %s (pass --init PATH)", d->init_path);
	/* Now, while this process has no other thread (it forks): a loop's spawns are cloned
	 * from its zygote, which lives beside warren-init. */
	d->zygotes = calloc(d->n_loops, sizeof(*d->zygotes));
	d->zygote_pids = calloc(d->n_loops, sizeof(*d->zygote_pids));
	d->zygote_path = beside(d->init_path, "warren-zygote");
	if (!d->zygotes || !d->zygote_pids || !d->zygote_path)
		return log_errno(-ENOMEM, "starting the spawn zygotes");
	for (unsigned i = 0; i < d->n_loops; i++) {
		r = daemon_zygote_start(d, i);
		if (r < 0)
			return r;
	}

	/* Signals arrive through a signalfd read by loop 0; every thread inherits this mask. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sigdelset(&mask, SIGPIPE);
	d->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (d->signal_fd < 0)
		return log_errno(-errno, "signalfd");

	network_node_open(d);
	audit_feed_open(d);
	r = nspool_start(d->uid_base, d->uid_count, NSPOOL_TARGET);
	if (r < 0)
		return log_errno(r, "starting the namespace pool");
	d->info = info_probe(d);
	d->listen_fd = listen_socket(d->socket_path);
	return d->listen_fd < 0 ? d->listen_fd : 0;
}

static void teardown(struct daemon *d)
{
	if (d->listen_fd >= 0)
		unlink(d->socket_path);
	safe_close(d->listen_fd);
	safe_close(d->signal_fd);
	safe_close(d->init_fd);
	for (unsigned i = 0; d->zygotes && i < d->n_loops; i++)
		daemon_zygote_stop(d, i);
	free(d->zygotes);
	free(d->zygote_pids);
	free(d->zygote_path);
	sandbox_exec_dir_close(d);
	image_store_free(d->images);
	nspool_stop();
	network_node_close(d);
	cg_node_free(d->cg);
	profile_set_free(d->profiles);
	audit_feed_close(d);
	json_decref(d->info);
	denial_journal_close();
	free(d->loops);
	free(d->socket_path);
	free(d->state_dir);
	free(d->images_dir);
	free(d->init_path);
	free(d->cgroup_name);
	free(d->profiles_dir);
	free(d->log_dir);
	free(d->exec_dir);
	free(d->scratch_dir);
	free(d->image_mount_dir);
}

int main(int argc, char **argv)
{
	struct daemon d = {
		.socket_path = strdup("/run/warren/warren.sock"),
		.state_dir = strdup("/run/warren"),
		.images_dir = strdup("/var/lib/warren/images"),
		.cgroup_name = strdup("warren"),
		.n_loops = (unsigned)MAX(1L, sysconf(_SC_NPROCESSORS_ONLN)),
		.max_sandboxes = 0, /* 0: sandbox_default_max(), once the options are known */
		.max_conns = 1024,
		.uid_base = 100000,
		.uid_count = 65536,
		.listen_fd = -EBADF,
		.signal_fd = -EBADF,
		.init_fd = -EBADF,
	};
	pthread_t *threads = NULL;
	int r;

	r = parse_args(argc, argv, &d);
	if (r != 0) {
		teardown(&d);
		return r > 0 ? 0 : 2;
	}
	if (!d.init_path)
		d.init_path = default_init_path();
	if (!d.profiles_dir)
		d.profiles_dir = strdup(profile_default_dir());
	if (!d.max_sandboxes)
		d.max_sandboxes = sandbox_default_max(&d);
	if (geteuid() != 0) {
		fprintf(stderr, "warrend: needs root (namespaces, cgroups, mounts); run it with sudo\n");
		teardown(&d);
		return 1;
	}
#ifdef WARREN_MIMALLOC
	log_debug("allocator: mimalloc %d", mi_version());
#endif
	r = setup(&d);
	if (r < 0) {
		teardown(&d);
		return 1;
	}

	d.loops = calloc(d.n_loops, sizeof(*d.loops));
	threads = calloc(d.n_loops, sizeof(*threads));
	if (!d.loops || !threads) {
		teardown(&d);
		return 1;
	}
	pthread_barrier_init(&loops_ready, NULL, d.n_loops);
	for (unsigned i = 0; i < d.n_loops; i++)
		d.loops[i].d = &d;
	for (unsigned i = 1; i < d.n_loops; i++)
		pthread_create(&threads[i], NULL, loop_thread, &d.loops[i]);
	log_info("warrend %s: %u loops, cgroup %s, %zu images, listening on %s", WARREN_VERSION,
		 d.n_loops, cg_mode_to_string(cg_node_mode(d.cg)), image_store_count(d.images),
		 d.socket_path);
	r = (int)(intptr_t)loop_thread(&d.loops[0]);
	for (unsigned i = 1; i < d.n_loops; i++) {
		void *tr;

		pthread_join(threads[i], &tr);
		if ((intptr_t)tr < 0)
			r = (int)(intptr_t)tr;
	}
	free(threads);
	pthread_barrier_destroy(&loops_ready);
	teardown(&d);
	log_info("stopped");
	return r < 0 ? 1 : 0;
}

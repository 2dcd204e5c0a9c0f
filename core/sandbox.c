/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "daemon.h"
#include "image.h"
#include "info.h"
#include "log.h"
#include "network.h"
#include "nspool.h"
#include "peer.h"
#include "sandbox.h"
#include "sandbox-wait.h"
#include "syscall.h"

#define TABLE_BUCKETS 4096
#define REMOVE_RETRY_MS 5
#define REMOVE_MAX_TRIES 2000 /* ~10 s of a cgroup that will not empty */

struct sandbox_table {
	struct sandbox *buckets[TABLE_BUCKETS];
};

static const char *const state_names[_SANDBOX_STATE_MAX] = {
	[SANDBOX_CREATING] = "creating",
	[SANDBOX_RUNNING] = "running",
	[SANDBOX_STOPPING] = "stopping",
	[SANDBOX_EXITED] = "exited",
	[SANDBOX_REMOVED] = "removed",
};

/* allowed[from] is the set of states `from` may move to. */
static const unsigned allowed[_SANDBOX_STATE_MAX] = {
	/* creating -> exited: the init failed before it ran the command, or the sandbox was
	 * deleted while it was being made. */
	[SANDBOX_CREATING] = 1u << SANDBOX_RUNNING | 1u << SANDBOX_EXITED,
	[SANDBOX_RUNNING] = 1u << SANDBOX_STOPPING | 1u << SANDBOX_EXITED,
	[SANDBOX_STOPPING] = 1u << SANDBOX_EXITED,
	[SANDBOX_EXITED] = 1u << SANDBOX_REMOVED,
};

const char *sandbox_state_to_string(enum sandbox_state s)
{
	return s < _SANDBOX_STATE_MAX ? state_names[s] : "unknown";
}

static void sandbox_set_state(struct sandbox *s, enum sandbox_state to)
{
	/* A transition outside the table is a bug in this file, not bad input. */
	assert(allowed[s->state] & (1u << to));
	log_debug("sandbox %s: %s -> %s", s->id, state_names[s->state], state_names[to]);
	s->state = to;
}

static unsigned bucket_of(const char *id)
{
	unsigned h = 5381;

	for (; *id; id++)
		h = h * 33 + (unsigned char)*id;
	return h % TABLE_BUCKETS;
}

int sandbox_table_new(struct loop *l)
{
	l->sandboxes = calloc(1, sizeof(*l->sandboxes));
	return l->sandboxes ? 0 : -ENOMEM;
}

void sandbox_table_free(struct loop *l)
{
	free(l->sandboxes);
	l->sandboxes = NULL;
}

struct sandbox *sandbox_find(struct loop *l, const char *id)
{
	for (struct sandbox *s = l->sandboxes->buckets[bucket_of(id)]; s; s = s->hnext)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

static void table_insert(struct sandbox *s)
{
	struct sandbox **b = &s->loop->sandboxes->buckets[bucket_of(s->id)];

	s->hnext = *b;
	*b = s;
	s->loop->n_sandboxes++;
}

static void table_remove(struct sandbox *s)
{
	for (struct sandbox **p = &s->loop->sandboxes->buckets[bucket_of(s->id)]; *p;
	     p = &(*p)->hnext)
		if (*p == s) {
			*p = s->hnext;
			s->loop->n_sandboxes--;
			return;
		}
}

static int make_id(struct loop *l, char id[SANDBOX_ID_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[5];

	do {
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return -errno;
		/* The first two digits name the owning loop, so any loop can route a request. */
		id[0] = hex[(l->idx >> 4) & 15];
		id[1] = hex[l->idx & 15];
		for (int i = 0; i < 5; i++) {
			id[2 + 2 * i] = hex[rnd[i] >> 4];
			id[3 + 2 * i] = hex[rnd[i] & 15];
		}
		id[SANDBOX_ID_LEN] = '\0';
	} while (sandbox_find(l, id));
	return 0;
}

int exit_code_from_siginfo(const siginfo_t *si)
{
	if (si->si_code == CLD_EXITED)
		return si->si_status;
	return 128 + si->si_status;
}

/* ---- freeing ------------------------------------------------------------------------------ */

static bool sandbox_busy(const struct sandbox *s)
{
	return s->wait_op.busy || s->remove_timer_op.busy || s->ready_op.busy ||
	       sandbox_io_busy(s);
}

static void sandbox_free(struct sandbox *s)
{
	safe_close(s->ready_fd);
	safe_close(s->cgroup_fd);
	sandbox_log_close(s);
	cg_free(s->cg);
	sandbox_spec_done(&s->spec);
	free(s->deleters);
	free(s);
}

void sandbox_maybe_free(struct sandbox *s)
{
	if (s->state == SANDBOX_REMOVED && !sandbox_busy(s))
		sandbox_free(s);
}

/* A profile per sandbox, where the kernel has AppArmor (this development node has not).
 * apparmor_parser takes tens of milliseconds and blocks this loop meanwhile: moving it to a
 * helper thread is left to do (docs/security.md). */
static int sandbox_apparmor_load(struct sandbox *s, char err[SPEC_ERR_MAX])
{
	char msg[PROFILE_ERROR_MAX];
	int r;

	if (!profile_apparmor_available())
		return 0;
	r = profile_apparmor_load(s->loop->d->profiles_dir, s->id, msg);
	if (r < 0) {
		snprintf(err, SPEC_ERR_MAX, "loading the AppArmor profile: %.200s", msg);
		return r;
	}
	return profile_apparmor_name(s->id, s->apparmor, sizeof(s->apparmor));
}

static void sandbox_apparmor_unload(struct sandbox *s)
{
	if (s->apparmor[0])
		(void)profile_apparmor_unload(s->id);
	s->apparmor[0] = '\0';
}

/* ---- exit and removal -------------------------------------------------------------------- */

static void sandbox_remove_step(struct sandbox *s);

static void answer_deleters(struct sandbox *s)
{
	if (s->creator) {
		struct conn *c = TAKE_PTR(s->creator);

		c->on_close = NULL;
		c->handler = NULL;
		if (s->removing_by_delete)
			conn_respond_error(c, 409, "conflict",
					   "sandbox %s was deleted while it was being created", s->id);
		else
			conn_respond_error(c, s->create_status, s->create_status == 400 ?
				"bad_request" : "internal", "%s", s->create_error);
	}
	for (unsigned i = 0; i < s->n_deleters; i++) {
		struct conn *c = s->deleters[i];

		if (!c)
			continue;
		c->on_close = NULL;
		c->handler = NULL;
		conn_respond_json(c, 200, json_pack("{s:s,s:s}", "id", s->id, "state", "removed"));
	}
	s->n_deleters = 0;
}

static void on_remove_timer(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct sandbox *s = container_of(op, struct sandbox, remove_timer_op);

	sandbox_remove_step(s);
}

static void sandbox_remove_step(struct sandbox *s)
{
	int r;

	/* The processes must be gone before the cgroups can go. */
	if (s->state != SANDBOX_EXITED || s->remove_timer_op.busy)
		return;
	r = cg_remove(s->cg);
	if (r == -EBUSY && ++s->remove_tries < REMOVE_MAX_TRIES) {
		/* cgroup.kill is asynchronous: processes other than init may take a moment. */
		cg_kill(s->cg);
		loop_timer(s->loop, &s->remove_timer_op, &s->remove_ts, REMOVE_RETRY_MS);
		return;
	}
	if (r < 0)
		log_errno(r, "sandbox %s: removing its cgroups (left behind)", s->id);

	sandbox_io_detach_all(s);
	network_release(s);
	sandbox_apparmor_unload(s);
	if (s->log_path)
		unlink(s->log_path);
	if (s->log_old_path)
		unlink(s->log_old_path);
	sandbox_exec_unlink(s);
	table_remove(s);
	atomic_fetch_sub(&s->loop->d->n_sandboxes, 1);
	sandbox_wait_answer(s); /* none are left by now: the exit answered them */
	sandbox_set_state(s, SANDBOX_REMOVED);
	answer_deleters(s);
	sandbox_maybe_free(s);
}

static void on_exit_waited(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct sandbox *s = container_of(op, struct sandbox, wait_op);
	siginfo_t si = { 0 };
	int r = res;

	/* The WAITID left the init a zombie (loop_waitid_pid()), so its pid stayed reserved while
	 * anything here might still kill() it. Reap it now and forget the pid in the same step:
	 * nothing uses s->pid after this (struct sandbox). */
	if (r >= 0 && waitid(P_PID, s->pid, &si, WEXITED | WNOHANG) < 0)
		r = -errno;
	if (r < 0 || si.si_pid != s->pid) {
		/* Only a cancel at shutdown gets here. */
		log_debug_errno(r < 0 ? r : -ECHILD, "sandbox %s: waitid", s->id);
		s->exit_code = -1;
	} else
		s->exit_code = exit_code_from_siginfo(&si);
	s->exited_at = now_wall();
	s->pid = 0;
	sandbox_exit_settle(s);
}

void sandbox_exit_settle(struct sandbox *s)
{
	/* Reaped (exited_at is stamped then), the log at its end, and not told yet. */
	if (s->exited_at > 0 && s->log_eof && s->state < SANDBOX_EXITED) {
		sandbox_set_state(s, SANDBOX_EXITED);
		sandbox_wait_answer(s);
		/* Removal may free s: it is the last thing done with it here. */
		if (s->removing) {
			sandbox_remove_step(s);
			return;
		}
	}
	sandbox_maybe_free(s);
}

static void deleter_closed(struct conn *c)
{
	struct sandbox *s = c->handler;

	for (unsigned i = 0; i < s->n_deleters; i++)
		if (s->deleters[i] == c)
			s->deleters[i] = NULL;
}

void sandbox_delete(struct sandbox *s, struct conn *c)
{
	if (c) {
		struct conn **d = realloc(s->deleters, (s->n_deleters + 1) * sizeof(*d));

		if (!d) {
			conn_respond_error(c, 500, "internal", "out of memory");
			return;
		}
		s->deleters = d;
		d[s->n_deleters++] = c;
		c->handler = s;
		c->on_close = deleter_closed;
	}
	if (s->removing)
		return;
	s->removing = true;
	s->removing_by_delete = true;
	if (s->state == SANDBOX_RUNNING || s->state == SANDBOX_CREATING) {
		if (s->state == SANDBOX_RUNNING)
			sandbox_set_state(s, SANDBOX_STOPPING);
		/* cgroup.kill reaches execs too; killing the init is a fallback for the
		 * init alone should the cgroup write fail. */
		if (cg_kill(s->cg) < 0 && s->pid > 0)
			(void)kill(s->pid, SIGKILL);
	}
	sandbox_remove_step(s);
}

void sandbox_shutdown_all(struct loop *l)
{
	for (unsigned b = 0; b < TABLE_BUCKETS; b++)
		for (struct sandbox *s = l->sandboxes->buckets[b], *next; s; s = next) {
			next = s->hnext;
			sandbox_delete(s, NULL);
		}
}

int sandbox_signal(struct sandbox *s, int sig)
{
	/* Running means not reaped: pid is still the init's (struct sandbox). */
	if (s->state != SANDBOX_RUNNING || s->pid <= 0)
		return -ESRCH;
	return kill(s->pid, sig) < 0 ? -errno : 0;
}

/* ---- limits ------------------------------------------------------------------------------ */

static long read_long(const char *path, long fallback)
{
	char buf[32];
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (n <= 0)
		return fallback;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/* Kernel memory of an idle sandbox (bench/density: MemAvailable's drop) grows with the number
 * of sandboxes on the node: each has a memory cgroup of its own and 9 superblocks (scratch
 * tmpfs, overlay, proc, sysfs, /dev, devpts, /dev/shm, mqueue, the /proc/acpi mask), and every
 * memory cgroup carries the kernel's shrinker bookkeeping for as many superblocks as the node
 * ever had at once (a 1 KiB slab object per 64 of them; the high-water mark never comes down).
 * Measured on Linux 6.18: 0.6 MiB each at 300 sandboxes, 1.9 MiB each at 10,000; 144 bytes per
 * sandbox of the node is 9/64 KiB. */
#define SANDBOX_KMEM_BASE (640ull << 10)
#define SANDBOX_KMEM_PER_PEER 144ull
/* A memory cgroup's id is 16 bits (MEM_CGROUP_ID_MAX). */
#define MEMCG_ID_MAX 65535L

/* The most sandboxes whose idle kernel memory fits in budget bytes. */
static long fit_in_memory(unsigned long long budget)
{
	long lo = 0, hi = 1000000;

	while (lo < hi) {
		long mid = (lo + hi + 1) / 2;

		if ((unsigned long long)mid * (SANDBOX_KMEM_BASE + SANDBOX_KMEM_PER_PEER * mid) <=
		    budget)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* How many sandboxes the node's limits allow, each partly kept back for the rest of the node
 * (docs/performance.md, "Density"):
 * - memory: idle sandboxes may take 7/8 of it (all but 1 GiB on a small node), at the measured
 *   cost above; what their commands use is bounded by each one's own limit.
 * - processes (kernel.pid_max and kernel.threads-max, node-wide): an idle sandbox is its init
 *   plus, with a command or an exec, at least one more: 2 each; 1/16 kept back (at least
 *   1024) for the host and the daemon's own helpers.
 * - descriptors (RLIMIT_NOFILE, the daemon's; setup() raises the soft limit to the hard one):
 *   0 per idle sandbox, 1 (its log file) once it has written to its console; kept back: every
 *   loop's connections and 1024 for creates and execs in progress, the namespace pool, the
 *   images and BPF.
 * - registered files (one table per ring, of RLIMIT_NOFILE slots): 1 per sandbox (its log
 *   pipe) on the loop that owns it, and one loop may end up owning them all.
 * - namespaces (user.max_*_namespaces, counted for the root user that makes them all): one of
 *   each type per sandbox; 64 kept back for the pool's spares and the probes.
 * - memory cgroup ids: one per sandbox; 1024 kept back.
 * On the development VM (24 GiB, pid_max 32,768, 20,000 files, 2 loops) memory binds: 10,324
 * (processes would allow 15,360, descriptors 16,928). */
unsigned sandbox_default_max(const struct daemon *d)
{
	static const char *const ns_types[] = { "user", "net", "pid", "mnt",
						"uts", "ipc", "cgroup" };
	unsigned long long mem = (unsigned long long)sysconf(_SC_PHYS_PAGES) *
				 (unsigned long long)sysconf(_SC_PAGESIZE);
	struct rlimit rl = { .rlim_max = 1024 };
	long pids = read_long("/proc/sys/kernel/pid_max", 32768);
	long threads = read_long("/proc/sys/kernel/threads-max", pids);
	long fds, max;

	max = fit_in_memory(mem - MAX(mem / 8, MIN(mem, 1ull << 30)));
	pids = MIN(pids, threads);
	max = MIN(max, (pids - MAX(pids / 16, 1024L)) / 2);
	(void)getrlimit(RLIMIT_NOFILE, &rl);
	fds = rl.rlim_max == RLIM_INFINITY ? 1L << 20 : (long)MIN(rl.rlim_max, (rlim_t)1 << 20);
	/* The registered table of one ring holds as many as the descriptors, so it never binds
	 * before them; both are counted for clarity. */
	max = MIN(max, fds);
	max = MIN(max, fds - (long)d->n_loops * d->max_conns - 1024);
	for (size_t i = 0; i < ELEMENTSOF(ns_types); i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/sys/user/max_%s_namespaces", ns_types[i]);
		max = MIN(max, read_long(path, LONG_MAX) - 64);
	}
	max = MIN(max, MEMCG_ID_MAX - 1024);
	return max < 1 ? 1 : (unsigned)max;
}

/* ---- creation ---------------------------------------------------------------------------- */

DEFINE_TRIVIAL_CLEANUP_FUNC(struct sandbox *, sandbox_free)




static void creator_closed(struct conn *c)
{
	struct sandbox *s = c->handler;

	s->creator = NULL;
}

static void on_ready(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct sandbox *s = container_of(op, struct sandbox, ready_op);
	enum exec_failure failure = EXEC_FAILURE_NODE;
	int r;

	r = res < 0 ? res : s->backend->start_result(s->id, s->ready_buf, res, &failure);
	s->ready_fd = safe_close(s->ready_fd);
	if (r < 0 && !s->removing) {
		/* The child exits by itself; once it is reaped, removal answers the creator. */
		s->create_status = failure == EXEC_FAILURE_CWD ? 400 : 500;
		if (failure == EXEC_FAILURE_CWD)
			snprintf(s->create_error, sizeof(s->create_error),
				 "cannot use '%.100s' as the working directory: %s", s->spec.cwd,
				 strerror(-r));
		else
			snprintf(s->create_error, sizeof(s->create_error),
				 "starting the sandbox: %s", strerror(-r));
		s->removing = true;
		if (s->pid > 0)
			(void)kill(s->pid, SIGKILL);
	}
	if (s->removing) {
		/* Removal may have finished without us (it then waited for this op to free). */
		if (s->state == SANDBOX_REMOVED)
			sandbox_maybe_free(s);
		else
			sandbox_remove_step(s);
		return;
	}
	/* A command may already have exited: then the sandbox is exited, and still created. */
	if (s->state == SANDBOX_CREATING)
		sandbox_set_state(s, SANDBOX_RUNNING);
	if (s->creator) {
		struct conn *c = TAKE_PTR(s->creator);

		c->on_close = NULL;
		c->handler = NULL;
		conn_respond_json(c, 201, sandbox_to_json(s));
	}
}

int sandbox_create(struct loop *l, struct sandbox_spec *spec, struct conn *c,
		   char err[SPEC_ERR_MAX])
{
	struct daemon *d = l->d;
	_cleanup_(sandbox_freep) struct sandbox *s = NULL;
	_cleanup_close_pair_ int pipefd[2] = { -EBADF, -EBADF };
	_cleanup_close_ int exec_fd = -EBADF;
	struct spawn_result res;
	struct spawn_config cfg;
	struct ns_pair ns;
	const char *why;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->loop = l;
	s->cgroup_fd = s->log_fd = s->ready_fd = -EBADF;
	s->log_slot = -1;
	s->state = SANDBOX_CREATING;
	io_op_init(&s->wait_op, on_exit_waited);
	io_op_init(&s->remove_timer_op, on_remove_timer);
	io_op_init(&s->ready_op, on_ready);

	s->backend = backend_find(spec->tier);
	if (!s->backend && info_tier_planned(spec->tier)) {
		snprintf(err, SPEC_ERR_MAX, "tier '%s' is unavailable on this node: %s; use 'container'",
			 spec->tier, INFO_TIER_PLANNED_REASON);
		return -EOPNOTSUPP;
	}
	if (!s->backend) {
		snprintf(err, SPEC_ERR_MAX,
			 "unknown tier '%s': tiers are container, function, microvm and vm",
			 spec->tier);
		return -EINVAL;
	}
	r = s->backend->probe(&why);
	if (r < 0) {
		snprintf(err, SPEC_ERR_MAX, "tier '%s' is unavailable on this node: %s", spec->tier,
			 why);
		return -EOPNOTSUPP;
	}
	s->image = image_store_find(d->images, spec->image);
	if (!s->image) {
		snprintf(err, SPEC_ERR_MAX, "no image '%s': list them with GET /v1/info",
			 spec->image);
		return -ENOENT;
	}
	s->seccomp = profile_seccomp_get(d->profiles, spec->seccomp_profile);
	if (!s->seccomp) {
		snprintf(err, SPEC_ERR_MAX, "no seccomp profile '%s' on this node: see "
			 "seccomp_profiles in GET /v1/info", spec->seccomp_profile);
		return -EINVAL;
	}
	r = network_check(d, &spec->net, err);
	if (r < 0)
		return r;
	if (atomic_fetch_add(&d->n_sandboxes, 1) >= d->max_sandboxes) {
		atomic_fetch_sub(&d->n_sandboxes, 1);
		snprintf(err, SPEC_ERR_MAX,
			 "this node runs its maximum of %u sandboxes: delete some and retry",
			 d->max_sandboxes);
		return -EUSERS;
	}
	r = make_id(l, s->id);
	if (r < 0)
		goto fail_count;

	r = cg_create(d->cg, s->id, &spec->cg, &s->cg);
	if (r < 0) {
		snprintf(err, SPEC_ERR_MAX, "creating the sandbox's cgroups: %s", strerror(-r));
		goto fail_count;
	}
	r = s->cgroup_fd = cg_open_v2(s->cg);
	if (r < 0)
		goto fail_cg;
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail_cg;
	}
	/* The read end moves into the ring's registered files: no fd of ours per sandbox. */
	r = s->log_slot = loop_file_install(l, TAKE_FD(pipefd[0]));
	if (r == -ENFILE) {
		snprintf(err, SPEC_ERR_MAX, "this node's loop %u holds its maximum of %u sandbox "
			 "logs: delete some sandboxes and retry", l->idx, l->n_files);
		r = -EUSERS;
	}
	if (r < 0)
		goto fail_cg;
	/* The spec is the sandbox's from here; on failure it goes back to the caller. */
	s->spec = *spec;
	r = sandbox_log_open(s);
	if (r < 0)
		goto fail_spec;
	r = sandbox_apparmor_load(s, err);
	if (r < 0)
		goto fail_log;
	/* Before anything runs in the cgroup, so no packet leaves unfiltered. */
	r = network_prepare(s);
	if (r < 0) {
		snprintf(err, SPEC_ERR_MAX, "attaching the network allowlist: %s", strerror(-r));
		goto fail_log;
	}
	r = nspool_take(spec->net.mode != NET_MODE_HOST, &ns);
	if (r < 0) {
		snprintf(err, SPEC_ERR_MAX, "making the sandbox's namespaces: %s", strerror(-r));
		goto fail_log;
	}
	r = network_attach(s, ns.netns);
	if (r < 0) {
		snprintf(err, SPEC_ERR_MAX, "plugging the sandbox into the bridge: %s", strerror(-r));
		goto fail_ns;
	}

	/* The init's exec channel: from here on only the init holds the listening socket. */
	r = exec_fd = sandbox_exec_listen(s);
	if (r < 0) {
		snprintf(err, SPEC_ERR_MAX, "making the exec channel: %s", strerror(-r));
		goto fail_ns;
	}

	cfg = (struct spawn_config){
		.id = s->id,
		.rootfs = s->image->rootfs,
		.scratch = d->scratch_dir,
		.disk_bytes = spec->disk_bytes,
		.argv = spec->argv,
		.envp = spec->env,
		.cwd = spec->cwd,
		.cg = s->cg,
		.cgroup_fd = s->cgroup_fd,
		.stdio_fd = pipefd[1],
		.uid_base = d->uid_base,
		.uid_count = d->uid_count,
		.seccomp_profile = s->seccomp,
		.apparmor_profile = s->apparmor[0] ? s->apparmor : NULL,
		.init_fd = d->init_fd,
		.userns_fd = ns.userns,
		.netns_fd = ns.netns,
		.host_network = spec->net.mode == NET_MODE_HOST,
		.resolv_conf = spec->net.resolv_conf,
		.zygote_fd = d->zygotes[l->idx],
		.exec_fd = exec_fd,
	};
	r = s->backend->start(&cfg, &res);
	if (r == -EPIPE && cfg.zygote_fd > 0) {
		/* The loop's zygote died (killed, out of memory): a new one, and this start again. */
		log_warn("sandbox %s: the spawn zygote is gone; starting another", s->id);
		(void)loop_zygote_restart(l);
		cfg.zygote_fd = d->zygotes[l->idx];
		r = s->backend->start(&cfg, &res);
	}
	/* The child has its own copies, or there is no child. */
	safe_close(ns.userns);
	safe_close(ns.netns);
	if (r < 0) {
		if (!err[0])
			snprintf(err, SPEC_ERR_MAX, "starting the sandbox: %s", strerror(-r));
		goto fail_log;
	}
	/* From here the sandbox exists: whatever happens is answered on c later, and undone by
	 * the ordinary removal. */
	memset(spec, 0, sizeof(*spec));
	/* Neither descriptor is kept (struct sandbox): the init is reaped and signalled by its
	 * pid, and an exec needs neither (it goes through the init). */
	safe_close(res.pidfd);
	s->cgroup_fd = safe_close(s->cgroup_fd);
	s->pid = res.pid;
	s->ready_fd = res.ready_fd;
	pid_note(s->pid, s->id);
	s->created_at = now_wall();
	atomic_fetch_add(&d->n_created, 1);
	loop_waitid_pid(l, &s->wait_op, s->pid, &s->wait_info);
	io_uring_prep_read(loop_sqe(l, &s->ready_op), s->ready_fd, s->ready_buf,
			   sizeof(s->ready_buf), 0);
	sandbox_log_start(s);
	table_insert(s);
	s->creator = c;
	c->handler = s;
	c->on_close = creator_closed;
	TAKE_PTR(s);
	return 0;

fail_ns:
	safe_close(ns.userns);
	safe_close(ns.netns);
fail_log:
	network_release(s);
	sandbox_apparmor_unload(s);
	unlink(s->log_path);
	sandbox_exec_unlink(s);
fail_spec:
	memset(&s->spec, 0, sizeof(s->spec));
fail_cg:
	if (!err[0])
		snprintf(err, SPEC_ERR_MAX, "creating the sandbox: %s", strerror(-r));
	cg_remove(s->cg);
fail_count:
	atomic_fetch_sub(&d->n_sandboxes, 1);
	return r;
}

/* ---- views ------------------------------------------------------------------------------- */

static json_t *strv_to_json(char **v)
{
	json_t *a = json_array();

	for (; v && *v; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

json_t *sandbox_to_json(const struct sandbox *s)
{
	json_t *o = json_pack(
		"{s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:f,s:o,s:{s:I,s:I,s:i,s:I,s:I}}", "id", s->id, "tier",
		s->backend->name, "image", s->image->name, "state", state_names[s->state], "cmd",
		strv_to_json(s->spec.argv), "pid", s->pid > 0 ? json_integer(s->pid) : json_null(),
		"exit_code",
		s->state == SANDBOX_EXITED ? json_integer(s->exit_code) : json_null(),
		"created_at", s->created_at, "exited_at",
		s->exited_at > 0 ? json_real(s->exited_at) : json_null(), "limits", "memory_bytes",
		(json_int_t)s->spec.cg.memory_bytes, "pids", (json_int_t)s->spec.cg.pids,
		"cpu_weight", (int)s->spec.cg.cpu_weight, "disk_bytes",
		(json_int_t)s->spec.disk_bytes, "log_bytes", (json_int_t)s->spec.log_bytes);
	struct cg_stats st;

	if (o)
		json_object_set_new(o, "network", network_to_json(s));
	if (o && s->cg && cg_read_stats(s->cg, &st) >= 0)
		json_object_set_new(o, "stats",
				    json_pack("{s:I,s:I,s:I}", "memory_current",
					      (json_int_t)st.memory_current, "pids_current",
					      (json_int_t)st.pids_current, "oom_kills",
					      (json_int_t)st.oom_kills));
	return o;
}

void sandbox_list_append(struct loop *l, json_t *array)
{
	for (unsigned b = 0; b < TABLE_BUCKETS; b++)
		for (struct sandbox *s = l->sandboxes->buckets[b]; s; s = s->hnext)
			json_array_append_new(array, sandbox_to_json(s));
}

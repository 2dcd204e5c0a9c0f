/* SPDX-License-Identifier: Apache-2.0 */
/* The layout of warren's cgroups and everything that does not depend on the cgroup version:
 * discovery, directories, moving and killing processes. The limit and stat files of each
 * version live in cgroup-v1.c and cgroup-v2.c. */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "log.h"
#include "macro.h"

/* Where systemd and every distribution mount cgroup2: the whole tree on unified nodes, beside
 * the v1 hierarchies on hybrid ones. */
#define CG_UNIFIED_ROOT "/sys/fs/cgroup"
#define CG_HYBRID_ROOT "/sys/fs/cgroup/unified"

/* A removal that finds child cgroups recurses at most this deep: a sandbox has no write access
 * to its directories, so anything deeper than a few levels is not ours to walk. */
#define CG_RMDIR_MAX_DEPTH 8

static const char *const cg_mode_table[_CG_MODE_MAX] = {
	[CG_MODE_UNIFIED] = "unified",
	[CG_MODE_HYBRID] = "hybrid",
};

const char *const cg_controller_name[_CG_V1_MAX] = {
	[CG_V1_MEMORY] = "memory",
	[CG_V1_PIDS] = "pids",
	[CG_V1_CPU] = "cpu",
};

const char *cg_mode_to_string(enum cg_mode m)
{
	if ((unsigned)m >= _CG_MODE_MAX)
		return NULL;
	return cg_mode_table[m];
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct cg_node *, cg_node_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cg *, cg_free)

/* ---- small file helpers ------------------------------------------------------------------ */

static int cg_path(char *buf, size_t size, const char *dir, const char *file)
{
	int n = snprintf(buf, size, "%s/%s", dir, file);

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

int cg_write(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX];
	size_t len = strlen(value);
	ssize_t n;
	int fd, r;

	r = cg_path(path, sizeof(path), dir, file);
	if (r < 0)
		return r;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* cgroupfs takes a value in one write or refuses it whole: a short write cannot happen.
	 * A memory limit below the usage makes the write reclaim first, which gives up with
	 * EINTR when the thread has io_uring task work pending: it goes on where it was. */
	for (int i = 0; i < 16; i++) {
		n = write(fd, value, len);
		if (n >= 0 || errno != EINTR)
			break;
	}
	r = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	safe_close(fd);
	return r;
}

int cg_write_u64(const char *dir, const char *file, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return cg_write(dir, file, buf);
}

int cg_read(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -EBADF;
	size_t len = 0;
	int r;

	assert(size > 0);
	r = cg_path(path, sizeof(path), dir, file);
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return (int)len;
}

static int cg_parse_u64(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (strncmp(s, "max", 3) == 0 && (s[3] == '\0' || s[3] == '\n')) {
		*ret = UINT64_MAX;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -errno;
	if (*end != '\0' && *end != '\n' && *end != ' ')
		return -EINVAL;
	*ret = v;
	return 0;
}

int cg_read_u64(const char *dir, const char *file, uint64_t *ret)
{
	char buf[64];
	int r;

	r = cg_read(dir, file, buf, sizeof(buf));
	if (r < 0)
		return r;
	return cg_parse_u64(buf, ret);
}

int cg_read_key_u64(const char *dir, const char *file, const char *key, uint64_t *ret)
{
	char buf[4096];
	size_t klen = strlen(key);
	int r;

	r = cg_read(dir, file, buf, sizeof(buf));
	if (r < 0)
		return r;
	for (char *line = buf; *line;) {
		char *nl = strchr(line, '\n');

		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return cg_parse_u64(line + klen + 1, ret);
		if (!nl)
			break;
		line = nl + 1;
	}
	return -ENODATA;
}

/* ---- names and paths --------------------------------------------------------------------- */

/* Parent names and sandbox ids become directory names under cgroupfs: keep them to a plain
 * alphabet so that no "..", "/" or control file name can be smuggled in. */
static bool cg_name_valid(const char *s)
{
	size_t n = 0;

	if (!s || !*s || *s == '.')
		return false;
	for (; s[n]; n++) {
		char c = s[n];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
		if (n >= 128)
			return false;
	}
	return true;
}

static char *cg_join(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

/* mkdir(2) that accepts an existing directory: the parents survive a daemon restart. */
static int cg_mkdir_parent(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* rmdir(2) of a cgroup directory. ENOENT counts as removed. On EBUSY it removes the child
 * cgroups it finds (bottom-up) and tries once more: EBUSY then means processes remain. */
static int cg_rmdir_tree(const char *path, int depth)
{
	_cleanup_free_ char *child = NULL;
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (rmdir(path) == 0 || errno == ENOENT)
		return 0;
	if (errno != EBUSY || depth >= CG_RMDIR_MAX_DEPTH)
		return -errno;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		free(child);
		child = cg_join(path, de->d_name);
		if (!child) {
			r = -ENOMEM;
			break;
		}
		r = cg_rmdir_tree(child, depth + 1);
		if (r < 0)
			break;
	}
	closedir(d);
	if (r < 0)
		return r;
	if (rmdir(path) == 0 || errno == ENOENT)
		return 0;
	return -errno;
}

/* ---- the node ---------------------------------------------------------------------------- */

static int cg_is_fs(const char *path, long magic)
{
	struct statfs sfs;

	if (statfs(path, &sfs) < 0)
		return -errno;
	return sfs.f_type == magic;
}

/* The cgroup2 mount decides the mode: cgroup2 on /sys/fs/cgroup is a unified node; cgroup2 on
 * /sys/fs/cgroup/unified beside v1 hierarchies is a hybrid one; no cgroup2 is pure v1, which
 * warren refuses since CLONE_INTO_CGROUP and cgroup.kill exist only in cgroup2. */
static int cg_detect(struct cg_node *node)
{
	int r;

	r = cg_is_fs(CG_UNIFIED_ROOT, CGROUP2_SUPER_MAGIC);
	if (r < 0)
		return log_errno(r, "statfs %s", CG_UNIFIED_ROOT);
	if (r > 0) {
		node->mode = CG_MODE_UNIFIED;
		node->v2_root = strdup(CG_UNIFIED_ROOT);
		return node->v2_root ? 0 : -ENOMEM;
	}
	r = cg_is_fs(CG_HYBRID_ROOT, CGROUP2_SUPER_MAGIC);
	if (r < 0 && r != -ENOENT)
		return log_errno(r, "statfs %s", CG_HYBRID_ROOT);
	if (r <= 0) {
		log_error("no cgroup2 mount at %s or %s: this is a pure cgroup v1 node, which "
			  "warren does not support (it needs cgroup2 for CLONE_INTO_CGROUP and "
			  "cgroup.kill); boot with systemd.unified_cgroup_hierarchy=1, or mount "
			  "cgroup2 at %s",
			  CG_UNIFIED_ROOT, CG_HYBRID_ROOT, CG_HYBRID_ROOT);
		return -EOPNOTSUPP;
	}
	node->mode = CG_MODE_HYBRID;
	node->v2_root = strdup(CG_HYBRID_ROOT);
	return node->v2_root ? 0 : -ENOMEM;
}

/* ---- the v1 pool (hybrid nodes) ------------------------------------------------------------ */

/* v1 directories of removed sandboxes, reset and renamed "pool-N" under the node's parents,
 * for the next cg_create() to rename into place (v1 allows rename; cgroup2 does not). */
#define CG_POOL_MAX 64

struct cg_pool {
	pthread_mutex_t lock;
	unsigned n;
	unsigned long seq;
	char *set[CG_POOL_MAX][_CG_V1_MAX];
};

static struct cg_pool *cg_pool_new(void)
{
	struct cg_pool *p = calloc(1, sizeof(*p));

	if (p)
		pthread_mutex_init(&p->lock, NULL);
	return p;
}

static void cg_pool_free(struct cg_pool *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->n; i++)
		for (int c = 0; c < _CG_V1_MAX; c++) {
			if (p->set[i][c] && rmdir(p->set[i][c]) < 0)
				log_debug_errno(-errno, "rmdir %s", p->set[i][c]);
			free(p->set[i][c]);
		}
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Renames a pooled set to cg's v1 paths; false if the pool is empty or a rename failed (the
 * set is then removed, and the caller makes new directories). */
static bool cg_pool_take(struct cg_pool *p, struct cg *cg)
{
	char *set[_CG_V1_MAX];
	bool ok = true;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	if (p->n == 0) {
		pthread_mutex_unlock(&p->lock);
		return false;
	}
	memcpy(set, p->set[--p->n], sizeof(set));
	pthread_mutex_unlock(&p->lock);
	for (int c = 0; c < _CG_V1_MAX; c++)
		if (!!set[c] != !!cg->v1_path[c] ||
		    (set[c] && ok && rename(set[c], cg->v1_path[c]) < 0)) {
			log_debug_errno(-errno, "reusing %s", set[c] ?: cg->v1_path[c]);
			ok = false;
		}
	for (int c = 0; c < _CG_V1_MAX; c++) {
		if (!ok && set[c]) {
			(void)rmdir(set[c]);
			(void)rmdir(cg->v1_path[c]);
		}
		free(set[c]);
	}
	if (ok && cg->v1_path[CG_V1_MEMORY] &&
	    cg_read_key_u64(cg->v1_path[CG_V1_MEMORY], "memory.oom_control", "oom_kill",
			    &cg->oom_kills_base) < 0)
		cg->oom_kills_base = 0;
	return ok;
}

/* Resets cg's v1 directories, which hold no process (its cgroup2 directory is gone), and keeps
 * them for a next sandbox; false if the pool is full or something failed (the directories are
 * where they were). */
static bool cg_pool_put(struct cg_pool *p, struct cg *cg)
{
	char *set[_CG_V1_MAX] = { NULL };
	unsigned long seq;
	bool full;
	int c, r;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	full = p->n >= CG_POOL_MAX;
	seq = p->seq++;
	pthread_mutex_unlock(&p->lock);
	if (full)
		return false;
	for (c = 0; c < _CG_V1_MAX; c++) {
		if (!cg->v1_path[c])
			continue;
		r = cg_v1_reset(c, cg->v1_path[c], &cg->limits);
		if (r < 0) {
			log_debug_errno(r, "resetting %s for reuse", cg->v1_path[c]);
			return false;
		}
	}
	for (c = 0; c < _CG_V1_MAX; c++) {
		char *slash;

		if (!cg->v1_path[c])
			continue;
		slash = strrchr(cg->v1_path[c], '/');
		if (asprintf(&set[c], "%.*s/pool-%lu", (int)(slash - cg->v1_path[c]),
			     cg->v1_path[c], seq) < 0) {
			set[c] = NULL;
			break;
		}
		if (rename(cg->v1_path[c], set[c]) < 0) {
			free(set[c]);
			set[c] = NULL;
			break;
		}
	}
	if (c < _CG_V1_MAX) {
		/* Put back what moved: the caller removes the directories the usual way. */
		for (int k = 0; k < c; k++)
			if (set[k] && rename(set[k], cg->v1_path[k]) < 0)
				(void)rmdir(set[k]);
		for (int k = 0; k < _CG_V1_MAX; k++)
			free(set[k]);
		return false;
	}
	pthread_mutex_lock(&p->lock);
	full = p->n >= CG_POOL_MAX;
	if (!full)
		memcpy(p->set[p->n++], set, sizeof(set));
	pthread_mutex_unlock(&p->lock);
	if (full)
		for (c = 0; c < _CG_V1_MAX; c++) {
			if (set[c])
				(void)rmdir(set[c]);
			free(set[c]);
		}
	for (c = 0; c < _CG_V1_MAX; c++) {
		free(cg->v1_path[c]);
		free(cg->v1_procs[c]);
		cg->v1_path[c] = cg->v1_procs[c] = NULL;
	}
	return true;
}

int cg_node_new(const char *name, struct cg_node **ret)
{
	_cleanup_(cg_node_freep) struct cg_node *node = NULL;
	int r;

	assert(ret);
	if (!cg_name_valid(name))
		return log_errno(-EINVAL, "invalid cgroup name '%s'", name ? name : "(null)");
	node = calloc(1, sizeof(*node));
	if (!node)
		return log_errno(-ENOMEM, "allocate the cgroup node");
	node->favor_fd = -EBADF;
	r = cg_detect(node);
	if (r < 0)
		return r;
	node->v2_path = cg_join(node->v2_root, name);
	if (!node->v2_path)
		return log_errno(-ENOMEM, "allocate the cgroup node");
	r = cg_mkdir_parent(node->v2_path);
	if (r < 0)
		return log_errno(r, "mkdir %s", node->v2_path);

	if (node->mode == CG_MODE_HYBRID) {
		char *mount[_CG_V1_MAX] = { NULL };

		r = cg_v1_discover(mount);
		if (r < 0)
			return log_errno(r, "find the cgroup v1 hierarchies with libcgroup");
		for (int c = 0; c < _CG_V1_MAX; c++) {
			if (!mount[c])
				continue;
			node->v1_path[c] = cg_join(mount[c], name);
			free(mount[c]);
			mount[c] = NULL;
			if (!node->v1_path[c])
				r = -ENOMEM;
		}
		if (r < 0)
			return log_errno(r, "allocate the cgroup node");
		for (int c = 0; c < _CG_V1_MAX; c++) {
			if (!node->v1_path[c])
				continue;
			r = cg_mkdir_parent(node->v1_path[c]);
			if (r < 0)
				return log_errno(r, "mkdir %s", node->v1_path[c]);
			node->at[c] = CG_AT_V1;
		}
		node->pool = cg_pool_new();
		if (!node->pool)
			return log_errno(-ENOMEM, "allocate the cgroup node");
		cg_v1_favor_dynmods(node);
	}
	/* Controllers that no v1 hierarchy holds: all of them on unified nodes. */
	cg_v2_enable_controllers(node);

	for (int c = 0; c < _CG_V1_MAX; c++)
		if (node->at[c] == CG_AT_NONE)
			log_warn("cgroup controller '%s' is not available on this %s node: "
				 "sandboxes asking for a %s limit will be refused",
				 cg_controller_name[c], cg_mode_to_string(node->mode),
				 cg_controller_name[c]);
	log_debug("cgroups: %s node, cgroup2 parent %s", cg_mode_to_string(node->mode),
		  node->v2_path);
	*ret = TAKE_PTR(node);
	return 0;
}

struct cg_node *cg_node_free(struct cg_node *node)
{
	int r;

	if (!node)
		return NULL;
	cg_pool_free(node->pool);
	safe_close(node->favor_fd);
	/* Only empty parents go: sandboxes left by this daemon keep theirs (and rmdir of a
	 * non-empty cgroup directory fails with EBUSY, never removes anything). */
	for (int c = 0; c < _CG_V1_MAX; c++) {
		if (node->v1_path[c] && rmdir(node->v1_path[c]) < 0 && errno != ENOENT) {
			r = -errno;
			log_debug_errno(r, "rmdir %s", node->v1_path[c]);
		}
		free(node->v1_path[c]);
	}
	if (node->v2_path && rmdir(node->v2_path) < 0 && errno != ENOENT) {
		r = -errno;
		log_debug_errno(r, "rmdir %s", node->v2_path);
	}
	free(node->v2_path);
	free(node->v2_root);
	free(node);
	return NULL;
}

enum cg_mode cg_node_mode(const struct cg_node *node)
{
	return node->mode;
}

const char *cg_node_v2_path(const struct cg_node *node)
{
	return node->v2_path;
}

const char *cg_node_favordynmods(const struct cg_node *node)
{
	return node->favor_how;
}

/* ---- one sandbox ------------------------------------------------------------------------- */

static bool cg_limit_wanted(enum cg_v1_controller c, const struct cg_limits *l)
{
	switch (c) {
	case CG_V1_MEMORY:
		return l->memory_bytes > 0;
	case CG_V1_PIDS:
		return l->pids > 0;
	case CG_V1_CPU:
		return l->cpu_weight > 0 || l->cpu_idle;
	default:
		return false;
	}
}

/* Removes what cg_create made so far; the directories are fresh and hold no process, so rmdir
 * cannot be refused with EBUSY. */
static void cg_undo_create(struct cg *cg, bool made_v2, const bool made_v1[_CG_V1_MAX])
{
	for (int c = _CG_V1_MAX - 1; c >= 0; c--)
		if (made_v1[c] && rmdir(cg->v1_path[c]) < 0)
			log_warn_errno(-errno, "rmdir %s", cg->v1_path[c]);
	if (made_v2 && rmdir(cg->v2_path) < 0)
		log_warn_errno(-errno, "rmdir %s", cg->v2_path);
}

int cg_create(const struct cg_node *node, const char *id, const struct cg_limits *limits,
	      struct cg **ret)
{
	_cleanup_(cg_freep) struct cg *cg = NULL;
	bool made_v2 = false, made_v1[_CG_V1_MAX] = { false };
	int r = 0;

	assert(node && limits && ret);
	if (!cg_name_valid(id))
		return log_errno(-EINVAL, "invalid sandbox id '%s' for a cgroup",
				 id ? id : "(null)");
	if (limits->cpu_weight > 10000)
		return log_errno(-EINVAL, "cpu weight %" PRIu32 " is out of range 1..10000",
				 limits->cpu_weight);
	/* A limit nobody can enforce is refused rather than silently dropped. */
	for (int c = 0; c < _CG_V1_MAX; c++)
		if (cg_limit_wanted(c, limits) && node->at[c] == CG_AT_NONE)
			return log_errno(-EOPNOTSUPP, "sandbox %s: no %s controller on this node",
					 id, cg_controller_name[c]);

	cg = calloc(1, sizeof(*cg));
	if (!cg)
		return log_errno(-ENOMEM, "allocate cgroup of %s", id);
	cg->mode = node->mode;
	cg->pool = node->pool;
	cg->limits = *limits;
	cg->v2_path = cg_join(node->v2_path, id);
	if (!cg->v2_path)
		return log_errno(-ENOMEM, "allocate cgroup of %s", id);
	for (int c = 0; c < _CG_V1_MAX; c++) {
		if (node->at[c] != CG_AT_V1)
			continue;
		cg->v1_path[c] = cg_join(node->v1_path[c], id);
		if (!cg->v1_path[c])
			return log_errno(-ENOMEM, "allocate cgroup of %s", id);
		cg->v1_procs[c] = cg_join(cg->v1_path[c], "cgroup.procs");
		if (!cg->v1_procs[c])
			return log_errno(-ENOMEM, "allocate cgroup of %s", id);
	}

	/* EEXIST is an error here: the directory belongs to someone else (or to a sandbox of a
	 * crashed daemon), and the undo path must never remove what it did not make. */
	if (mkdir(cg->v2_path, 0755) < 0)
		return log_errno(-errno, "mkdir %s", cg->v2_path);
	made_v2 = true;
	/* A reused set that refuses the limits (a memory limit below what the last sandbox left
	 * charged and the kernel cannot reclaim: EBUSY) gives way to new directories. */
	for (bool reused = cg_pool_take(cg->pool, cg), again = reused;; reused = again = false) {
		for (int c = 0; c < _CG_V1_MAX; c++)
			made_v1[c] = reused && cg->v1_path[c];
		for (int c = 0; c < _CG_V1_MAX && r >= 0; c++) {
			if (!cg->v1_path[c] || made_v1[c])
				continue;
			if (mkdir(cg->v1_path[c], 0755) < 0)
				r = log_errno(-errno, "mkdir %s", cg->v1_path[c]);
			else
				made_v1[c] = true;
		}
		for (int c = 0; c < _CG_V1_MAX && r >= 0; c++) {
			if (node->at[c] == CG_AT_V1)
				r = cg_v1_apply(c, cg->v1_path[c], limits);
			else if (node->at[c] == CG_AT_V2)
				r = cg_v2_apply(c, cg->v2_path, limits);
			if (r < 0 && !again)
				log_errno(r, "sandbox %s: set the %s limits", id,
					  cg_controller_name[c]);
		}
		if (r >= 0 || !again)
			break;
		cg_undo_create(cg, false, made_v1);
		cg->oom_kills_base = 0;
		r = 0;
	}
	if (r < 0) {
		cg_undo_create(cg, made_v2, made_v1);
		return r;
	}
	*ret = TAKE_PTR(cg);
	return 0;
}

int cg_open_v2(const struct cg *cg)
{
	int fd;

	if (!cg->v2_path)
		return -ENOENT; /* removed already */
	fd = open(cg->v2_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int cg_attach(const struct cg *cg, pid_t pid)
{
	char buf[24];
	int r;

	if (pid <= 0)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	for (int c = 0; c < _CG_V1_MAX; c++) {
		if (!cg->v1_path[c])
			continue;
		r = cg_write(cg->v1_path[c], "cgroup.procs", buf);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Async-signal-safe: open/write/close on precomputed paths and a literal. Writing "0" to a v1
 * cgroup.procs moves the writer's whole thread group. errno is the calling thread's own. */
int cg_attach_self(const struct cg *cg)
{
	for (int c = 0; c < _CG_V1_MAX; c++) {
		int fd, r = 0;

		if (!cg->v1_procs[c])
			continue;
		fd = open(cg->v1_procs[c], O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (write(fd, "0", 1) != 1)
			r = -errno;
		close(fd);
		if (r < 0)
			return r;
	}
	return 0;
}

/* After cg_remove() took the cgroup2 directory there is nothing left to kill or to wait for. */
int cg_kill(const struct cg *cg)
{
	return cg->v2_path ? cg_v2_kill(cg->v2_path) : 0;
}

int cg_populated(const struct cg *cg)
{
	return cg->v2_path ? cg_v2_populated(cg->v2_path) : 0;
}

int cg_read_stats(const struct cg *cg, struct cg_stats *ret)
{
	struct cg_stats s = { .memory_max = UINT64_MAX };
	static const enum cg_v1_controller wanted[] = { CG_V1_MEMORY, CG_V1_PIDS };
	int r;

	if (!cg->v2_path)
		return -ENOENT;
	for (size_t i = 0; i < ELEMENTSOF(wanted); i++) {
		enum cg_v1_controller c = wanted[i];

		if (cg->v1_path[c])
			r = cg_v1_read_stats(c, cg->v1_path[c], &s);
		else
			r = cg_v2_read_stats(c, cg->v2_path, &s);
		if (r < 0)
			return r;
	}
	/* A reused memory cgroup counts the kills of the sandboxes before this one too. */
	s.oom_kills -= MIN(s.oom_kills, cg->oom_kills_base);
	*ret = s;
	return 0;
}

/* A directory that is gone is dropped from the struct, so that a call after -EBUSY retries
 * only what is left. */
int cg_remove(struct cg *cg)
{
	int r, busy = 0;

	/* cgroup2 first: every process of the sandbox is there too (CLONE_INTO_CGROUP), so once
	 * its directory is gone the v1 ones hold none either, and are kept for a next sandbox
	 * where they can be (cg_create()). */
	if (cg->v2_path) {
		r = cg_rmdir_tree(cg->v2_path, 0);
		if (r < 0)
			return r;
		free(cg->v2_path);
		cg->v2_path = NULL;
	}
	(void)cg_pool_put(cg->pool, cg);
	for (int c = 0; c < _CG_V1_MAX; c++) {
		if (!cg->v1_path[c])
			continue;
		r = cg_rmdir_tree(cg->v1_path[c], 0);
		if (r == -EBUSY) {
			busy = r;
			continue;
		}
		if (r < 0)
			return r;
		free(cg->v1_path[c]);
		free(cg->v1_procs[c]);
		cg->v1_path[c] = cg->v1_procs[c] = NULL;
	}
	return busy;
}

struct cg *cg_free(struct cg *cg)
{
	if (!cg)
		return NULL;
	for (int c = 0; c < _CG_V1_MAX; c++) {
		free(cg->v1_path[c]);
		free(cg->v1_procs[c]);
	}
	free(cg->v2_path);
	free(cg);
	return NULL;
}

int cg_write_cpu_idle(const char *dir)
{
	int r = cg_write(dir, "cpu.idle", "1");

	if (r == -ENOENT) {
		log_debug("%s/cpu.idle: not in this kernel, skipped", dir);
		return 0;
	}
	return r;
}

/* rmdir of every directory below path, deepest first; those still populated stay. */
static void rmdir_below(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			_cleanup_free_ char *sub = cg_join(path, e->d_name);

			if (sub) {
				rmdir_below(sub);
				(void)rmdir(sub);
			}
		}
	closedir(d);
}

int cg_node_sweep(const struct cg_node *node)
{
	DIR *d = opendir(node->v2_path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	/* cgroup.kill first, in cgroup2, where every process of a sandbox is. */
	while ((e = readdir(d))) {
		_cleanup_free_ char *sub = NULL;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		sub = cg_join(node->v2_path, e->d_name);
		if (!sub)
			continue;
		(void)cg_write(sub, "cgroup.kill", "1");
		/* The kill is asynchronous; a few hundred milliseconds is plenty. */
		for (int i = 0; i < 200; i++) {
			char buf[256];

			if (cg_read(sub, "cgroup.events", buf, sizeof(buf)) < 0 ||
			    strstr(buf, "populated 0"))
				break;
			usleep(5000);
		}
		rmdir_below(sub);
		if (rmdir(sub) == 0)
			n++;
		else
			log_warn_errno(-errno, "removing %s, left by an earlier warrend", sub);
	}
	closedir(d);
	for (int c = 0; c < _CG_V1_MAX; c++)
		if (node->v1_path[c])
			rmdir_below(node->v1_path[c]);
	return n;
}

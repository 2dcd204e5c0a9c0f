/* SPDX-License-Identifier: Apache-2.0 */
/* cgroups against the real hierarchy (suite 'priv'): limits as the kernel shows them, processes
 * placed the way the container backend places them (clone3 CLONE_INTO_CGROUP, then the v1
 * attach), limits that bite, kill, removal, and nothing left behind.
 *
 * Each test uses its own parent, warren-test-<pid>, so it never meets a running daemon's
 * "warren" cgroups; it only ever touches directories it made and processes it started. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup-internal.h"
#include "macro.h"
#include "syscall.h"

static struct cg_node *node;
static char parent[64];

/* ---- helpers ------------------------------------------------------------------------------ */

static void open_node(void)
{
	int r;

	snprintf(parent, sizeof(parent), "warren-test-%d", (int)getpid());
	r = cg_node_new(parent, &node);
	if (r == -EPERM || r == -EACCES || r == -EROFS)
		cr_skip_test("lacking privileges to create cgroups: %s", strerror(-r));
	if (r == -EOPNOTSUPP)
		cr_skip_test("no cgroup2 mount: pure cgroup v1 nodes are not supported");
	cr_assert_eq(r, 0, "cg_node_new: %s", strerror(-r));
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Frees the node and checks that the parent directories went with it: nothing left behind. */
static void close_node(void)
{
	char v2[PATH_MAX];
	static const char *const v1[] = { "memory", "pids", "cpu" };

	snprintf(v2, sizeof(v2), "%s", cg_node_v2_path(node));
	node = cg_node_free(node);
	cr_assert(!exists(v2), "%s left behind", v2);
	for (size_t i = 0; i < ELEMENTSOF(v1); i++) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/%s", v1[i], parent);
		cr_assert(!exists(p), "%s left behind", p);
	}
}

static char *read_file(const char *dir, const char *file)
{
	static char buf[8192];
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	cr_assert_geq(n, 0, "read %s: %s", path, strerror(errno));
	close(fd);
	buf[n] = '\0';
	return buf;
}

static void assert_file(const char *dir, const char *file, const char *want)
{
	char *got = read_file(dir, file);

	got[strcspn(got, "\n")] = '\0';
	cr_assert_str_eq(got, want, "%s/%s is '%s', want '%s'", dir, file, got, want);
}

static bool procs_has(const char *dir, pid_t pid)
{
	char *procs = read_file(dir, "cgroup.procs");

	for (char *line = strtok(procs, "\n"); line; line = strtok(NULL, "\n"))
		if (atoi(line) == pid)
			return true;
	return false;
}

/* Every directory the sandbox owns, for "are they all there / all gone". */
static int cg_dirs(const struct cg *cg, const char *out[_CG_V1_MAX + 1])
{
	int n = 0;

	out[n++] = cg->v2_path;
	for (int c = 0; c < _CG_V1_MAX; c++)
		if (cg->v1_path[c])
			out[n++] = cg->v1_path[c];
	return n;
}

struct child {
	pid_t pid;
	int pidfd;
	int go;   /* parent writes a byte: the child may proceed */
	int done; /* child writes a byte: it reached its checkpoint */
};

typedef int (*child_fn)(const struct cg *cg, int go, int done);

/* Starts fn in a child cloned straight into the sandbox's cgroup2 directory, as the backend
 * does. The child runs on a copy of this stack and leaves with _exit(fn()). It allocates
 * nothing: a clone3 child of a threaded process must not, and criterion may have threads. */
static struct child spawn(const struct cg *cg, child_fn fn)
{
	int go[2], done[2], pidfd = -1;
	_cleanup_close_ int cgfd = cg_open_v2(cg);
	struct clone_args a = {
		.flags = CLONE_INTO_CGROUP | CLONE_PIDFD,
		.pidfd = (uintptr_t)&pidfd,
		.cgroup = (uint64_t)cgfd,
		.exit_signal = SIGCHLD,
	};
	pid_t pid;

	cr_assert_geq(cgfd, 0, "cg_open_v2: %s", strerror(-cgfd));
	cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(done, O_CLOEXEC), 0);
	pid = sys_clone3(&a);
	cr_assert_geq(pid, 0, "clone3(CLONE_INTO_CGROUP): %s", strerror(-pid));
	if (pid == 0) {
		close(go[1]);
		close(done[0]);
		_exit(fn(cg, go[0], done[1]));
	}
	close(go[0]);
	close(done[1]);
	return (struct child){ .pid = pid, .pidfd = pidfd, .go = go[1], .done = done[0] };
}

static void child_release(struct child *ch)
{
	cr_assert_eq(write(ch->go, "x", 1), 1);
}

/* Waits for the child's checkpoint byte; false if it exited without reaching it. */
static bool child_checkpoint(struct child *ch)
{
	char b;

	return read(ch->done, &b, 1) == 1;
}

static int child_wait(struct child *ch)
{
	int status;

	cr_assert_eq(waitpid(ch->pid, &status, 0), ch->pid);
	close(ch->go);
	close(ch->done);
	close(ch->pidfd);
	return status;
}

/* Removal right after the last process died can see EBUSY for a moment (exiting tasks leave
 * their css_set asynchronously): retry as the daemon does, for at most 2 s. */
static int remove_retry(struct cg *cg)
{
	struct timespec ts = { 0, 1000000 };
	int r;

	for (int i = 0; i < 2000; i++) {
		r = cg_remove(cg);
		if (r != -EBUSY)
			return r;
		nanosleep(&ts, NULL);
	}
	return r;
}

static void remove_and_check(struct cg *cg)
{
	const char *dirs[_CG_V1_MAX + 1];
	char saved[_CG_V1_MAX + 1][PATH_MAX];
	int n = cg_dirs(cg, dirs), r;

	for (int i = 0; i < n; i++)
		snprintf(saved[i], sizeof(saved[i]), "%s", dirs[i]);
	r = remove_retry(cg);
	cr_assert_eq(r, 0, "cg_remove: %s", strerror(-r));
	for (int i = 0; i < n; i++)
		cr_assert(!exists(saved[i]), "%s left behind", saved[i]);
	cg_free(cg);
}

static const struct cg_limits no_limits = { 0 };

/* ---- children ----------------------------------------------------------------------------- */

static int wait_go(int go)
{
	char b;

	return read(go, &b, 1) == 1 ? 0 : 1;
}

static int child_idle(const struct cg *cg, int go, int done)
{
	(void)write(done, "x", 1);
	return wait_go(go);
}

static int child_attach_self(const struct cg *cg, int go, int done)
{
	int r = cg_attach_self(cg);

	if (r < 0)
		return 100 + (-r & 0x7f);
	(void)write(done, "x", 1);
	return wait_go(go);
}

/* Touches far more memory than the limit: the kernel must OOM-kill it. */
static int child_hog(const struct cg *cg, int go, int done)
{
	size_t size = 256u << 20;
	char *p;

	if (cg_attach_self(cg) < 0)
		return 2;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 3;
	for (size_t i = 0; i < size; i += 4096)
		p[i] = 1;
	/* Survived: the limit did not bite. Hold the memory until the parent has looked. */
	(void)write(done, "x", 1);
	return wait_go(go);
}

/* Leaves 16 MiB of tmpfs pages charged to its memory cgroup (the file outlives it). */
static char shm_path[64];

static int child_shm(const struct cg *cg, int go, int done)
{
	static char block[1 << 20];
	int fd;

	if (cg_attach_self(cg) < 0)
		return 2;
	fd = open(shm_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 3;
	memset(block, 'x', sizeof(block));
	for (int i = 0; i < 16; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			return 4;
	close(fd);
	(void)write(done, "x", 1);
	return wait_go(go);
}

static int sleeper(void)
{
	pause();
	return 0;
}

/* Forks (raw clone3, no glibc fork in this child) until the kernel refuses. Exit code: the
 * number of forks that succeeded if the refusal was EAGAIN, else 200 + errno. The forked
 * sleepers stay for the parent to count and kill. */
static int child_forker(const struct cg *cg, int go, int done)
{
	struct clone_args a = { .exit_signal = SIGCHLD };
	int ok = 0;

	if (cg_attach_self(cg) < 0)
		return 250;
	for (int i = 0; i < 64; i++) {
		pid_t pid = sys_clone3(&a);

		if (pid == 0)
			_exit(sleeper());
		if (pid < 0) {
			(void)write(done, "x", 1);
			wait_go(go);
			return pid == -EAGAIN ? ok : 200 + (-pid & 0x3f);
		}
		ok++;
	}
	return 199;
}

/* A small tree: three children, one of which has a child of its own, all asleep. */
static int child_tree(const struct cg *cg, int go, int done)
{
	struct clone_args a = { .exit_signal = SIGCHLD };

	for (int i = 0; i < 3; i++) {
		pid_t pid = sys_clone3(&a);

		if (pid == 0) {
			if (i == 0 && sys_clone3(&a) == 0)
				_exit(sleeper());
			_exit(sleeper());
		}
		if (pid < 0)
			return 1;
	}
	(void)write(done, "x", 1);
	return sleeper();
}

/* ---- tests -------------------------------------------------------------------------------- */

/* A failed assertion ends a test before its own cleanup: kill and remove whatever is left under
 * this test's parent (only warren-test-<our pid>, never anything else). */
static void remove_leftovers(void)
{
	static const char *const roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup",
					     "/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids",
					     "/sys/fs/cgroup/cpu" };
	struct timespec ts = { 0, 1000000 };

	if (!parent[0])
		return;
	for (size_t i = 0; i < ELEMENTSOF(roots); i++) {
		char dir[PATH_MAX];
		DIR *d;
		struct dirent *de;

		snprintf(dir, sizeof(dir), "%s/%s", roots[i], parent);
		d = opendir(dir);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			char sub[PATH_MAX + 256], kill_file[PATH_MAX + 512];
			int fd;

			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
			snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", sub);
			fd = open(kill_file, O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				(void)write(fd, "1", 1);
				close(fd);
			}
			for (int t = 0; t < 1000 && rmdir(sub) < 0 && errno == EBUSY; t++)
				nanosleep(&ts, NULL);
		}
		closedir(d);
		rmdir(dir);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

TestSuite(cgroup, .description = "cgroups in the real hierarchy", .fini = remove_leftovers);

/* Whether a line of this process's /proc/PID/file contains what. */
static bool proc_self_has(const char *file, const char *what)
{
	char path[64], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	f = fopen(path, "re");
	cr_assert(f, "%s: %m", path);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

/* On hybrid nodes the v1 attach must not wait an RCU grace period: a cgroup root with the
 * favordynmods option exists while the node does. When warren makes it, it is a named v1
 * hierarchy held by a detached mount: in every process's cgroup list, in no mount table. */
Test(cgroup, hybrid_holds_a_favordynmods_root)
{
	char dir[] = "/tmp/warren-test-favor-XXXXXX", opts[128];
	const char *how;

	open_node();
	how = cg_node_favordynmods(node);
	if (cg_node_mode(node) != CG_MODE_HYBRID) {
		cr_expect_null(how, "a unified node attaches nothing and needs no favordynmods");
		node = cg_node_free(node);
		cr_skip_test("only hybrid nodes attach to v1 cgroups");
	}
	cr_assert(how);
	if (strstr(how, "this kernel has no favordynmods")) {
		node = cg_node_free(node);
		cr_skip_test("%s", how);
	}
	cr_assert(strncmp(how, "on: ", 4) == 0, "favordynmods is %s", how);
	if (!strstr(how, "held by warrend")) {
		close_node();
		return; /* the host's own mount has the option */
	}
	cr_assert(proc_self_has("cgroup", ":name=warren-favordynmods:/"),
		  "no warren-favordynmods hierarchy in /proc/self/cgroup");
	cr_expect(!proc_self_has("mounts", "warren-favordynmods"), "the hierarchy is mounted");
	/* Its options, as a mount of the same root shows them (a mount by name joins it). */
	cr_assert(mkdtemp(dir));
	snprintf(opts, sizeof(opts), "none,name=warren-favordynmods,favordynmods");
	cr_assert_eq(mount("cgroup", dir, "cgroup", 0, opts), 0, "mount %s: %m", dir);
	cr_expect(proc_self_has("mounts", "favordynmods,name=warren-favordynmods"),
		  "the root lacks favordynmods");
	cr_assert_eq(umount(dir), 0);
	rmdir(dir);
	close_node();
}

Test(cgroup, limits_are_written)
{
	struct cg_limits l = { .memory_bytes = 64u << 20, .pids = 16, .cpu_weight = 200 };
	struct cg_stats s;
	struct cg *cg = NULL;
	char want[32], path[PATH_MAX];
	int r;

	open_node();
	r = cg_create(node, "limits", &l, &cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	cr_assert(exists(cg->v2_path));
	cr_assert_eq(cg->mode, cg_node_mode(node));
	if (cg->mode == CG_MODE_HYBRID) {
		for (int c = 0; c < _CG_V1_MAX; c++)
			cr_assert(cg->v1_path[c] && exists(cg->v1_path[c]), "v1 directory %d", c);
		assert_file(cg->v1_path[CG_V1_MEMORY], "memory.limit_in_bytes", "67108864");
		/* With swap accounting, memory + swap gets the same cap. */
		snprintf(path, sizeof(path), "%s/memory.memsw.limit_in_bytes",
			 cg->v1_path[CG_V1_MEMORY]);
		if (exists(path))
			assert_file(cg->v1_path[CG_V1_MEMORY], "memory.memsw.limit_in_bytes",
				    "67108864");
		assert_file(cg->v1_path[CG_V1_MEMORY], "memory.oom_control",
			    "oom_kill_disable 0");
		assert_file(cg->v1_path[CG_V1_PIDS], "pids.max", "16");
		/* crun's mapping: 2 + (200 - 1) * 262142 / 9999. */
		snprintf(want, sizeof(want), "%d", 2 + (199 * 262142) / 9999);
		assert_file(cg->v1_path[CG_V1_CPU], "cpu.shares", want);
		/* The cgroup2 directory of a hybrid node holds no controller. */
		assert_file(cg->v2_path, "cgroup.controllers", "");
	} else {
		for (int c = 0; c < _CG_V1_MAX; c++)
			cr_assert_null(cg->v1_path[c]);
		assert_file(cg->v2_path, "memory.max", "67108864");
		assert_file(cg->v2_path, "pids.max", "16");
		assert_file(cg->v2_path, "cpu.weight", "200");
	}
	r = cg_read_stats(cg, &s);
	cr_assert_eq(r, 0, "cg_read_stats: %s", strerror(-r));
	cr_assert_eq(s.memory_max, 64u << 20);
	cr_assert_eq(s.pids_current, 0);
	cr_assert_eq(s.oom_kills, 0);
	remove_and_check(cg);
	close_node();
}

Test(cgroup, cpu_idle_is_written)
{
	struct cg_limits l = { .cpu_weight = 200, .cpu_idle = 1 };
	struct cg *cg = NULL;
	const char *dir;
	char path[PATH_MAX];
	int r;

	open_node();
	r = cg_create(node, "idle", &l, &cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	dir = cg->mode == CG_MODE_HYBRID ? cg->v1_path[CG_V1_CPU] : cg->v2_path;
	snprintf(path, sizeof(path), "%s/cpu.idle", dir);
	if (!exists(path))
		cr_skip_test("kernel lacks cpu.idle (Linux 5.15)");
	assert_file(dir, "cpu.idle", "1");
	/* An idle group runs at the kernel's idle weight whatever weight it was given: v1
	 * shows WEIGHT_IDLEPRIO (3) as its shares. */
	if (cg->mode == CG_MODE_HYBRID)
		assert_file(dir, "cpu.shares", "3");
	remove_and_check(cg);
	close_node();
}

Test(cgroup, no_limits_means_unlimited)
{
	struct cg_stats s;
	struct cg *cg = NULL;
	int r;

	open_node();
	r = cg_create(node, "nolimits", &no_limits, &cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	r = cg_read_stats(cg, &s);
	cr_assert_eq(r, 0, "cg_read_stats: %s", strerror(-r));
	cr_assert_eq(s.memory_max, UINT64_MAX);
	if (cg->mode == CG_MODE_HYBRID)
		assert_file(cg->v1_path[CG_V1_PIDS], "pids.max", "max");
	else
		assert_file(cg->v2_path, "pids.max", "max");
	remove_and_check(cg);
	close_node();
}

/* On a hybrid node the v1 directories of a removed sandbox serve the next one (renamed: the
 * same kernel objects), with every limit of the first one gone and its oom_kill count not
 * the next one's. */
Test(cgroup, hybrid_reuses_v1_directories_reset)
{
	struct cg_limits l = { .memory_bytes = 64u << 20, .pids = 16, .cpu_weight = 200,
			       .cpu_idle = 1 };
	ino_t ino[_CG_V1_MAX];
	char first[_CG_V1_MAX][PATH_MAX], path[PATH_MAX];
	struct cg *a = NULL, *b = NULL;
	struct cg_stats s;
	struct stat st;
	int r;

	open_node();
	if (cg_node_mode(node) != CG_MODE_HYBRID) {
		node = cg_node_free(node);
		cr_skip_test("only hybrid nodes reuse directories: cgroup2 has no rename");
	}
	r = cg_create(node, "first", &l, &a);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	for (int c = 0; c < _CG_V1_MAX; c++) {
		cr_assert_eq(stat(a->v1_path[c], &st), 0);
		ino[c] = st.st_ino;
		snprintf(first[c], sizeof(first[c]), "%s", a->v1_path[c]);
	}
	remove_and_check(a);

	r = cg_create(node, "second", &no_limits, &b);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	for (int c = 0; c < _CG_V1_MAX; c++) {
		cr_assert_eq(stat(b->v1_path[c], &st), 0);
		cr_expect_eq(st.st_ino, ino[c], "%s is not the reused directory", b->v1_path[c]);
		cr_expect(!exists(first[c]), "%s is still there", first[c]);
	}
	r = cg_read_stats(b, &s);
	cr_assert_eq(r, 0, "cg_read_stats: %s", strerror(-r));
	cr_expect_eq(s.memory_max, UINT64_MAX, "the first one's memory limit stayed");
	cr_expect_eq(s.oom_kills, 0);
	assert_file(b->v1_path[CG_V1_PIDS], "pids.max", "max");
	assert_file(b->v1_path[CG_V1_CPU], "cpu.shares", "1024");
	snprintf(path, sizeof(path), "%s/cpu.idle", b->v1_path[CG_V1_CPU]);
	if (exists(path))
		assert_file(b->v1_path[CG_V1_CPU], "cpu.idle", "0");
	remove_and_check(b);
	/* And the pooled directories go with the node (close_node() checks the parents). */
	close_node();
}

/* One set of directories through a run of sandboxes with other limits each: lower, higher,
 * the same, none, idle on and off (leaving idle sets a group's shares back to 1024), each as
 * the kernel shows it. */
Test(cgroup, hybrid_reuse_takes_each_sandboxs_limits)
{
	static const struct cg_limits steps[] = {
		{ .memory_bytes = 64u << 20, .pids = 16, .cpu_weight = 200, .cpu_idle = 1 },
		{ .memory_bytes = 32u << 20, .pids = 32, .cpu_weight = 200 },
		{ .memory_bytes = 128u << 20, .pids = 32, .cpu_idle = 1 },
		{ .memory_bytes = 128u << 20, .pids = 32, .cpu_idle = 1 },
		{ 0 },
	};
	char want[32], path[PATH_MAX];
	ino_t ino = 0;
	struct stat st;

	open_node();
	if (cg_node_mode(node) != CG_MODE_HYBRID) {
		node = cg_node_free(node);
		cr_skip_test("only hybrid nodes reuse directories: cgroup2 has no rename");
	}
	for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
		const struct cg_limits *l = &steps[i];
		struct cg *cg = NULL;
		char id[16];
		int r;

		snprintf(id, sizeof(id), "step%zu", i);
		r = cg_create(node, id, l, &cg);
		cr_assert_eq(r, 0, "step %zu: cg_create: %s", i, strerror(-r));
		cr_assert_eq(stat(cg->v1_path[CG_V1_MEMORY], &st), 0);
		if (i > 0)
			cr_expect_eq(st.st_ino, ino, "step %zu: not the reused directory", i);
		ino = st.st_ino;
		snprintf(want, sizeof(want), "%" PRIu64, l->memory_bytes);
		if (l->memory_bytes)
			assert_file(cg->v1_path[CG_V1_MEMORY], "memory.limit_in_bytes", want);
		else
			cr_expect_gt(strtoull(read_file(cg->v1_path[CG_V1_MEMORY],
							"memory.limit_in_bytes"), NULL, 10),
				     1ull << 50, "step %zu: a memory limit is left", i);
		snprintf(path, sizeof(path), "%s/memory.memsw.limit_in_bytes",
			 cg->v1_path[CG_V1_MEMORY]);
		if (l->memory_bytes && exists(path))
			assert_file(cg->v1_path[CG_V1_MEMORY], "memory.memsw.limit_in_bytes", want);
		snprintf(want, sizeof(want), "%" PRIu64, l->pids);
		assert_file(cg->v1_path[CG_V1_PIDS], "pids.max", l->pids ? want : "max");
		/* An idle group shows the kernel's idle weight as its shares. */
		snprintf(want, sizeof(want), "%" PRIu64,
			 (uint64_t)(l->cpu_weight ? cg_v1_weight_to_shares(l->cpu_weight) : 1024));
		if (!l->cpu_idle)
			assert_file(cg->v1_path[CG_V1_CPU], "cpu.shares", want);
		snprintf(path, sizeof(path), "%s/cpu.idle", cg->v1_path[CG_V1_CPU]);
		if (exists(path))
			assert_file(cg->v1_path[CG_V1_CPU], "cpu.idle", l->cpu_idle ? "1" : "0");
		remove_and_check(cg);
	}
	close_node();
}

/* A reused memory cgroup still charged with what the last sandbox left that the kernel cannot
 * reclaim (tmpfs pages, no swap) refuses a lower limit (EBUSY): the create makes new
 * directories instead, and succeeds. */
Test(cgroup, hybrid_reuse_gives_way_to_new_directories)
{
	struct cg_limits small = { .memory_bytes = 4u << 20 };
	struct cg *a = NULL, *b = NULL;
	struct child ch;
	struct stat st;
	ino_t ino;
	int r, status;
	FILE *swaps = fopen("/proc/swaps", "re");
	char line[256];
	bool swap = false;

	open_node();
	if (cg_node_mode(node) != CG_MODE_HYBRID) {
		node = cg_node_free(node);
		cr_skip_test("only hybrid nodes reuse directories: cgroup2 has no rename");
	}
	/* The header line, then one per swap area. */
	for (int i = 0; swaps && fgets(line, sizeof(line), swaps); i++)
		swap = i > 0;
	if (swaps)
		fclose(swaps);
	if (swap) {
		node = cg_node_free(node);
		cr_skip_test("the node has swap: the kernel could reclaim the tmpfs pages");
	}
	snprintf(shm_path, sizeof(shm_path), "/dev/shm/warren-test-cg-%d", (int)getpid());
	r = cg_create(node, "charged", &no_limits, &a);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	cr_assert_eq(stat(a->v1_path[CG_V1_MEMORY], &st), 0);
	ino = st.st_ino;
	ch = spawn(a, child_shm);
	cr_assert(child_checkpoint(&ch));
	(void)write(ch.go, "x", 1);
	status = child_wait(&ch);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	remove_and_check(a);

	r = cg_create(node, "small", &small, &b);
	(void)unlink(shm_path);
	cr_assert_eq(r, 0, "cg_create with a 4 MiB limit after a charged sandbox: %s",
		     strerror(-r));
	cr_assert_eq(stat(b->v1_path[CG_V1_MEMORY], &st), 0);
	cr_expect_neq(st.st_ino, ino, "the charged memory cgroup was reused");
	assert_file(b->v1_path[CG_V1_MEMORY], "memory.limit_in_bytes", "4194304");
	remove_and_check(b);
	close_node();
}

Test(cgroup, child_is_in_every_hierarchy)
{
	const char *dirs[_CG_V1_MAX + 1];
	struct cg *cg = NULL;
	struct child ch;
	char path[64], want[256];
	int r, n, status;

	open_node();
	r = cg_create(node, "attach", &no_limits, &cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	ch = spawn(cg, child_idle);
	cr_assert(child_checkpoint(&ch));
	r = cg_attach(cg, ch.pid);
	cr_assert_eq(r, 0, "cg_attach: %s", strerror(-r));
	n = cg_dirs(cg, dirs);
	for (int i = 0; i < n; i++)
		cr_assert(procs_has(dirs[i], ch.pid), "pid %d not in %s/cgroup.procs", ch.pid,
			  dirs[i]);
	/* And as the process itself sees it. */
	snprintf(path, sizeof(path), "/proc/%d", (int)ch.pid);
	{
		char *self = read_file(path, "cgroup");

		snprintf(want, sizeof(want), "0::/%s/attach\n", parent);
		cr_assert(strstr(self, want), "/proc/%d/cgroup lacks '%s':\n%s", ch.pid, want,
			  self);
		for (int c = 0; c < _CG_V1_MAX && cg->mode == CG_MODE_HYBRID; c++) {
			static const char *const name[] = { "memory", "pids", "cpu" };

			snprintf(want, sizeof(want), ":%s:/%s/attach\n", name[c], parent);
			cr_assert(strstr(self, want), "/proc/%d/cgroup lacks '%s':\n%s", ch.pid,
				  want, self);
		}
	}
	cr_assert_eq(cg_populated(cg), 1);
	child_release(&ch);
	status = child_wait(&ch);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	remove_and_check(cg);
	close_node();
}

Test(cgroup, attach_self_from_a_clone3_child)
{
	struct cg *cg = NULL;
	struct child ch;
	int r, status;

	open_node();
	r = cg_create(node, "self", &no_limits, &cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	ch = spawn(cg, child_attach_self);
	if (!child_checkpoint(&ch)) {
		status = child_wait(&ch);
		cr_assert_fail("cg_attach_self failed in the child: %s",
			       WIFEXITED(status) ? strerror(WEXITSTATUS(status) - 100) : "killed");
	}
	for (int c = 0; c < _CG_V1_MAX; c++)
		if (cg->v1_path[c])
			cr_assert(procs_has(cg->v1_path[c], ch.pid), "pid %d not in %s", ch.pid,
				  cg->v1_path[c]);
	cr_assert(procs_has(cg->v2_path, ch.pid));
	child_release(&ch);
	status = child_wait(&ch);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	remove_and_check(cg);
	close_node();
}

Test(cgroup, memory_limit_oom_kills)
{
	struct cg_limits l = { .memory_bytes = 32u << 20 };
	struct cg_stats s;
	struct cg *cg = NULL;
	struct child ch;
	int r, status;

	open_node();
	r = cg_create(node, "oom", &l, &cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	cr_assert_eq(cg_read_stats(cg, &s), 0);
	cr_assert_eq(s.oom_kills, 0);
	ch = spawn(cg, child_hog);
	status = child_wait(&ch);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "a child touching 256 MiB under a 32 MiB limit was not OOM-killed (status %#x)",
		  status);
	r = cg_read_stats(cg, &s);
	cr_assert_eq(r, 0, "cg_read_stats: %s", strerror(-r));
	cr_assert_geq(s.oom_kills, 1, "oom_kills %" PRIu64, s.oom_kills);
	remove_and_check(cg);
	close_node();
}

Test(cgroup, memory_under_the_limit_survives)
{
	struct cg_limits l = { .memory_bytes = 512u << 20 };
	struct cg_stats s;
	struct cg *cg = NULL;
	struct child ch;
	int r, status;

	open_node();
	r = cg_create(node, "nooom", &l, &cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	ch = spawn(cg, child_hog);
	cr_assert(child_checkpoint(&ch), "256 MiB under a 512 MiB limit failed");
	cr_assert_eq(cg_read_stats(cg, &s), 0);
	cr_assert_geq(s.memory_current, 256u << 20, "memory_current %" PRIu64, s.memory_current);
	cr_assert_eq(s.memory_max, 512u << 20);
	cr_assert_eq(s.pids_current, 1);
	cr_assert_eq(s.oom_kills, 0);
	child_release(&ch);
	status = child_wait(&ch);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	remove_and_check(cg);
	close_node();
}

Test(cgroup, pids_max_makes_fork_fail_with_eagain)
{
	struct cg_limits l = { .pids = 4 };
	struct cg_stats s;
	struct cg *cg = NULL;
	struct child ch;
	int r, status;

	open_node();
	r = cg_create(node, "pids", &l, &cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	ch = spawn(cg, child_forker);
	cr_assert(child_checkpoint(&ch), "the forking child died early");
	r = cg_read_stats(cg, &s);
	cr_assert_eq(r, 0, "cg_read_stats: %s", strerror(-r));
	cr_assert_eq(s.pids_current, 4, "pids.current %" PRIu64 " under pids.max 4",
		     s.pids_current);
	child_release(&ch);
	status = child_wait(&ch);
	cr_assert(WIFEXITED(status), "status %#x", status);
	/* The child itself is one of the 4: 3 forks succeed, the 4th gets EAGAIN. */
	cr_assert_eq(WEXITSTATUS(status), 3,
		     "exit %d: want 3 forks then EAGAIN (>= 200: another errno)",
		     WEXITSTATUS(status));
	r = cg_kill(cg);
	cr_assert_eq(r, 0, "cg_kill: %s", strerror(-r));
	remove_and_check(cg);
	close_node();
}

Test(cgroup, kill_kills_everything)
{
	struct cg *cg = NULL;
	struct child ch;
	struct timespec ts = { 0, 1000000 };
	char *procs;
	int r, status;

	/* The grandchildren are re-parented to us when their parent dies: reap them here. */
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	open_node();
	r = cg_create(node, "kill", &no_limits, &cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	ch = spawn(cg, child_tree);
	cr_assert(child_checkpoint(&ch));
	procs = read_file(cg->v2_path, "cgroup.procs");
	{
		int lines = 0;

		for (char *p = procs; *p; p++)
			lines += *p == '\n';
		/* Grandchildren may not be in yet; the 3 direct ones and the child are. */
		cr_assert_geq(lines, 4, "cgroup.procs:\n%s", procs);
	}
	cr_assert_eq(cg_populated(cg), 1);
	r = cg_kill(cg);
	cr_assert_eq(r, 0, "cg_kill: %s", strerror(-r));
	status = child_wait(&ch);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
	/* Reap everything else; each must have died of SIGKILL too. */
	for (;;) {
		pid_t p = waitpid(-1, &status, 0);

		if (p < 0) {
			cr_assert_eq(errno, ECHILD);
			break;
		}
		cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			  "pid %d: status %#x", p, status);
	}
	for (int i = 0; i < 2000 && cg_populated(cg) == 1; i++)
		nanosleep(&ts, NULL);
	cr_assert_eq(cg_populated(cg), 0);
	assert_file(cg->v2_path, "cgroup.procs", "");
	remove_and_check(cg);
	close_node();
}

Test(cgroup, remove_is_ebusy_while_populated)
{
	const char *dirs[_CG_V1_MAX + 1];
	struct cg *cg = NULL;
	struct child ch;
	int r, n, status;

	open_node();
	r = cg_create(node, "busy", &no_limits, &cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	ch = spawn(cg, child_attach_self);
	cr_assert(child_checkpoint(&ch));
	r = cg_remove(cg);
	cr_assert_eq(r, -EBUSY, "cg_remove of a populated cgroup: %s", strerror(-r));
	n = cg_dirs(cg, dirs);
	for (int i = 0; i < n; i++)
		cr_assert(exists(dirs[i]), "%s removed while populated", dirs[i]);
	cr_assert_eq(cg_kill(cg), 0);
	status = child_wait(&ch);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	remove_and_check(cg);
	close_node();
}

Test(cgroup, create_failure_leaves_nothing)
{
	/* pids.max above PID_MAX_LIMIT is refused by the kernel (EINVAL) after every directory
	 * was made: all of them must go again. */
	struct cg_limits l = { .memory_bytes = 64u << 20, .pids = 1ull << 40 };
	char v2[PATH_MAX];
	struct cg *cg = NULL;
	int r;

	open_node();
	r = cg_create(node, "fails", &l, &cg);
	cr_assert_eq(r, -EINVAL, "cg_create: %s", strerror(-r));
	cr_assert_null(cg);
	snprintf(v2, sizeof(v2), "%s/fails", cg_node_v2_path(node));
	cr_assert(!exists(v2), "%s left behind", v2);
	for (int c = 0; c < _CG_V1_MAX; c++) {
		static const char *const name[] = { "memory", "pids", "cpu" };
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/%s/fails", name[c], parent);
		cr_assert(!exists(p), "%s left behind", p);
	}
	close_node();
}

Test(cgroup, create_refuses_existing_and_bad_ids)
{
	struct cg *cg = NULL, *again = NULL;
	int r;

	open_node();
	r = cg_create(node, "dup", &no_limits, &cg);
	cr_assert_eq(r, 0, "cg_create: %s", strerror(-r));
	r = cg_create(node, "dup", &no_limits, &again);
	cr_assert_eq(r, -EEXIST, "second cg_create: %s", strerror(-r));
	/* The first one's directories survive the failed second create. */
	cr_assert(exists(cg->v2_path));
	for (int c = 0; c < _CG_V1_MAX; c++)
		if (cg->v1_path[c])
			cr_assert(exists(cg->v1_path[c]));
	cr_assert_eq(cg_create(node, "../escape", &no_limits, &again), -EINVAL);
	cr_assert_eq(cg_create(node, "..", &no_limits, &again), -EINVAL);
	cr_assert_eq(cg_create(node, "", &no_limits, &again), -EINVAL);
	cr_assert_eq(cg_create(node, "a/b", &no_limits, &again), -EINVAL);
	cr_assert_null(again);
	remove_and_check(cg);
	close_node();
}

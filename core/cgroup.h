/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* Per-sandbox cgroups on a unified (pure cgroup v2) or hybrid (v1 controllers + cgroup2 at
 * /sys/fs/cgroup/unified) node. Every sandbox gets a cgroup2 directory, the target of
 * CLONE_INTO_CGROUP and of cgroup.kill; on hybrid nodes it also gets one directory in each of
 * the v1 memory, pids and cpu hierarchies, where its limits live. Pure v1 nodes (no cgroup2
 * mount at all) are refused with -EOPNOTSUPP. */

enum cg_mode {
	CG_MODE_UNIFIED,
	CG_MODE_HYBRID,
	_CG_MODE_MAX,
};

enum cg_v1_controller {
	CG_V1_MEMORY,
	CG_V1_PIDS,
	CG_V1_CPU,
	_CG_V1_MAX,
};

struct cg_limits {
	uint64_t memory_bytes; /* 0: no limit */
	uint64_t pids;         /* 0: no limit */
	uint32_t cpu_weight;   /* 1..10000 as cgroup v2 cpu.weight; 0: the default, 100 */
	int cpu_idle;          /* 1: SCHED_IDLE-like cgroup (cpu.idle), for background QoS */
};

struct cg_stats {
	uint64_t memory_current;
	uint64_t memory_max; /* UINT64_MAX: none */
	uint64_t pids_current;
	uint64_t oom_kills;
};

struct cg_node;

struct cg_pool;

struct cg {
	char *v2_path;                 /* the sandbox's cgroup2 directory */
	char *v1_path[_CG_V1_MAX];     /* hybrid only, else NULL */
	char *v1_procs[_CG_V1_MAX];    /* "<v1_path>/cgroup.procs", precomputed for cg_attach_self() */
	enum cg_mode mode;
	/* Hybrid: where cg_remove() keeps the v1 directories for the next cg_create(), and the
	 * oom_kill count they came with (a reused memory cgroup's counter does not restart). */
	struct cg_pool *pool;
	uint64_t oom_kills_base;
	struct cg_limits limits;       /* what cg_create() wrote, for the reset */
};

const char *cg_mode_to_string(enum cg_mode m);

/* Discovers the layout (libcgroup for the v1 mount points, statfs for cgroup2) and creates the
 * parent directory `name` in every hierarchy warren uses; on unified nodes it enables the
 * memory, pids and cpu controllers for it. Called once at start-up on the main thread; the
 * node is read-only afterwards and shared by all loops. */
int cg_node_new(const char *name, struct cg_node **ret);
/* Kills and removes every sandbox cgroup left under the parent by an earlier daemon that did not
 * get to (a crash, SIGKILL). Returns how many it removed, or -errno. Main thread, at start-up,
 * before any sandbox of this daemon exists. */
int cg_node_sweep(const struct cg_node *node);
/* Removes the parent directories if they are empty. NULL-safe, returns NULL. */
struct cg_node *cg_node_free(struct cg_node *node);
enum cg_mode cg_node_mode(const struct cg_node *node);
/* Where the node's cgroup2 parent directory is, e.g. /sys/fs/cgroup/unified/warren. */
const char *cg_node_v2_path(const struct cg_node *node);
/* Hybrid nodes: whether v1 attaches are spared their RCU grace period, "on: how" or
 * "off: why" (see cg_v1_favor_dynmods()); NULL on unified nodes, which do not attach. */
const char *cg_node_favordynmods(const struct cg_node *node);

/* Creates the sandbox's directories and writes its limits. All or nothing: on failure every
 * directory made is removed again. Any loop thread may call it; the caller owns *ret. On a
 * hybrid node the v1 directories of a removed sandbox are reused when there are some
 * (renamed, their limits and counters reset by cg_remove()): making and removing a memory
 * cgroup is the dearer part of a sandbox's cgroups. cgroup2 directories cannot be renamed,
 * so on a unified node every sandbox gets new ones. */
int cg_create(const struct cg_node *node, const char *id, const struct cg_limits *limits,
	      struct cg **ret);
/* O_DIRECTORY|O_CLOEXEC fd of the cgroup2 directory, for CLONE_INTO_CGROUP. */
int cg_open_v2(const struct cg *cg);
/* Moves pid into the v1 directories (no-op on unified nodes). */
int cg_attach(const struct cg *cg, pid_t pid);
/* Moves the calling process into the v1 directories using only open/write/close: safe in a
 * clone3 child of the threaded daemon. */
int cg_attach_self(const struct cg *cg);
/* SIGKILLs every process in the sandbox's cgroup2 directory (cgroup.kill, Linux 5.14). */
int cg_kill(const struct cg *cg);
/* 1 if any process is left in the cgroup2 directory, 0 if none, or -errno. */
int cg_populated(const struct cg *cg);
int cg_read_stats(const struct cg *cg, struct cg_stats *ret);
/* Removes all the sandbox's directories; -EBUSY while processes remain (call again later). */
int cg_remove(struct cg *cg);
/* Frees the struct only; does not touch the directories. NULL-safe, returns NULL. */
struct cg *cg_free(struct cg *cg);

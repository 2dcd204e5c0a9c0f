/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Shared between cgroup.c (layout, directories, processes), cgroup-v1.c (libcgroup discovery,
 * v1 limit and stat files) and cgroup-v2.c (subtree_control, v2 limit and stat files). Not
 * installed, not for other modules. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Where a controller's limits live on this node. */
enum cg_where {
	CG_AT_NONE, /* not available: a limit that needs it is refused */
	CG_AT_V1,   /* its own v1 hierarchy (hybrid) */
	CG_AT_V2,   /* enabled in the parent's cgroup.subtree_control */
};

struct cg_node {
	enum cg_mode mode;
	char *v2_root;                 /* /sys/fs/cgroup or /sys/fs/cgroup/unified */
	char *v2_path;                 /* <v2_root>/<name> */
	char *v1_path[_CG_V1_MAX];     /* <v1 mount point>/<name> where at[c] == CG_AT_V1 */
	enum cg_where at[_CG_V1_MAX];
	struct cg_pool *pool;          /* hybrid nodes: cgroup.c */
	int favor_fd;                  /* the detached mount of warren's favordynmods hierarchy */
	const char *favor_how;         /* "on: ..." or "off: why" (hybrid); NULL on unified */
};

/* Back to what a new v1 directory of controller c has where it matters: no limit of those
 * cg_v1_apply() wrote for l (the counters warren reads, oom_kill, are taken as a baseline
 * instead). It must hold no process. */
int cg_v1_reset(enum cg_v1_controller c, const char *dir, const struct cg_limits *l);

/* "memory", "pids", "cpu": the controller's name in both cgroup versions. */
extern const char *const cg_controller_name[_CG_V1_MAX];

/* Small file helpers on "<dir>/<file>". They use stack buffers and return -errno. */
int cg_write(const char *dir, const char *file, const char *value);
int cg_write_u64(const char *dir, const char *file, uint64_t v);
/* Reads at most size - 1 bytes and NUL-terminates; returns the length. */
int cg_read(const char *dir, const char *file, char *buf, size_t size);
/* A file holding one number, or "max" (UINT64_MAX). */
int cg_read_u64(const char *dir, const char *file, uint64_t *ret);
/* The number after "key " on one line of a flat keyed file (memory.events, cgroup.events,
 * memory.oom_control); -ENODATA if the key is not there. */
int cg_read_key_u64(const char *dir, const char *file, const char *key, uint64_t *ret);

/* cgroup-v1.c */
/* libcgroup's positive ECG* codes (and ECGOTHER's saved errno) to a negative errno: the one
 * adapter for that library. */
int cg_errno_from_ecg(int ecg);
/* Fills ret_mount[c] with the v1 mount point of each controller (malloc'ed), NULL where the
 * controller is not mounted as v1 (absent, or bound to cgroup2). Uses libcgroup; main thread. */
int cg_v1_discover(char *ret_mount[_CG_V1_MAX]);
/* Moving a process into a v1 cgroup (cgroup.procs) takes cgroup_threadgroup_rwsem for writing,
 * under cgroup_mutex. Unless the lock's rcu_sync is already entered, that waits a full RCU
 * grace period (8-17 ms measured on a 2-core VM; see docs/performance.md), and every clone into
 * a cgroup, mkdir and rmdir waits behind it. A cgroup root with the favordynmods option keeps
 * it entered, for every hierarchy, at the cost of slightly dearer forks and exits node-wide.
 * The host's hierarchies are not warren's to remount, so unless one has the option already,
 * warren makes its own: an empty named v1 hierarchy, held by a detached mount
 * (node->favor_fd) that goes with warrend. Sets node->favor_how. */
#define CG_FAVOR_NAME "warren-favordynmods"
void cg_v1_favor_dynmods(struct cg_node *node);
/* crun's mapping of cgroup v2 cpu.weight (1..10000) to v1 cpu.shares (2..262144). */
uint64_t cg_v1_weight_to_shares(uint32_t weight);
int cg_v1_apply(enum cg_v1_controller c, const char *dir, const struct cg_limits *l);
/* Adds what controller c's files in dir show to *s (memory: current, max, oom kills; pids:
 * current). */
int cg_v1_read_stats(enum cg_v1_controller c, const char *dir, struct cg_stats *s);

/* cgroup-v2.c */
/* Enables the controllers in the root's and in node->v2_path's cgroup.subtree_control, one
 * by one, and sets node->at[c] = CG_AT_V2 for each one that is enabled in both. Only for
 * controllers with node->at[c] == CG_AT_NONE. */
void cg_v2_enable_controllers(struct cg_node *node);
int cg_v2_apply(enum cg_v1_controller c, const char *dir, const struct cg_limits *l);
/* Same for a v2 directory; a controller that is not enabled there leaves *s as it is. */
int cg_v2_read_stats(enum cg_v1_controller c, const char *dir, struct cg_stats *s);
int cg_v2_kill(const char *dir);
int cg_v2_populated(const char *dir);

/* cpu.idle = 1 (the same file in v1 and v2). It came in Linux 5.15: without it the weight alone
 * remains, which is not an error. */
int cg_write_cpu_idle(const char *dir);

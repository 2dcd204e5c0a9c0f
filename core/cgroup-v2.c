/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup2: the directory every sandbox process is cloned into. On unified nodes it also holds
 * the limits; on hybrid ones it serves CLONE_INTO_CGROUP, cgroup.kill and cgroup.events. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "log.h"
#include "macro.h"

/* Whether a space-separated list ("cpuset cpu io memory") holds word: "cpu" is not "cpuset". */
static bool cg_has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/* Enables controller name in dir's cgroup.subtree_control unless it is on already: a write,
 * even a no-op one, would be a needless change to a file other cgroups depend on. */
static int cg_enable_in(const char *dir, const char *name)
{
	char on[1024], op[32];
	int r;

	r = cg_read(dir, "cgroup.subtree_control", on, sizeof(on));
	if (r < 0)
		return r;
	if (cg_has_word(on, name))
		return 0;
	snprintf(op, sizeof(op), "+%s", name);
	return cg_write(dir, "cgroup.subtree_control", op);
}

/* Each controller is enabled on its own: the kernel refuses a multi-controller write whole if
 * one of them fails (cpu gives EINVAL while RT tasks sit in child cgroups without an RT
 * budget), and the others are still worth having. */
void cg_v2_enable_controllers(struct cg_node *node)
{
	char avail[1024];
	int r;

	r = cg_read(node->v2_root, "cgroup.controllers", avail, sizeof(avail));
	if (r < 0) {
		log_warn_errno(r, "read %s/cgroup.controllers", node->v2_root);
		return;
	}
	for (int c = 0; c < _CG_V1_MAX; c++) {
		const char *name = cg_controller_name[c];

		if (node->at[c] != CG_AT_NONE || !cg_has_word(avail, name))
			continue;
		r = cg_enable_in(node->v2_root, name);
		if (r < 0) {
			log_warn_errno(r, "enable +%s in %s/cgroup.subtree_control", name,
				       node->v2_root);
			continue;
		}
		r = cg_enable_in(node->v2_path, name);
		if (r < 0) {
			log_warn_errno(r, "enable +%s in %s/cgroup.subtree_control", name,
				       node->v2_path);
			continue;
		}
		node->at[c] = CG_AT_V2;
	}
}

int cg_v2_apply(enum cg_v1_controller c, const char *dir, const struct cg_limits *l)
{
	int r;

	switch (c) {
	case CG_V1_MEMORY:
		if (!l->memory_bytes)
			return 0;
		r = cg_write_u64(dir, "memory.max", l->memory_bytes);
		if (r < 0)
			return r;
		/* v2 counts swap apart: without this a sandbox could swap out past its limit.
		 * The file is missing when the kernel has no swap accounting. */
		r = cg_write(dir, "memory.swap.max", "0");
		return r == -ENOENT ? 0 : r;
	case CG_V1_PIDS:
		return l->pids ? cg_write_u64(dir, "pids.max", l->pids) : 0;
	case CG_V1_CPU:
		if (l->cpu_weight) {
			r = cg_write_u64(dir, "cpu.weight", l->cpu_weight);
			if (r < 0)
				return r;
		}
		return l->cpu_idle ? cg_write_cpu_idle(dir) : 0;
	default:
		return -EINVAL;
	}
}

int cg_v2_read_stats(enum cg_v1_controller c, const char *dir, struct cg_stats *s)
{
	int r;

	switch (c) {
	case CG_V1_MEMORY:
		r = cg_read_u64(dir, "memory.current", &s->memory_current);
		if (r == -ENOENT)
			return 0; /* the controller is not enabled here */
		if (r < 0)
			return r;
		r = cg_read_u64(dir, "memory.max", &s->memory_max);
		if (r < 0)
			return r;
		r = cg_read_key_u64(dir, "memory.events", "oom_kill", &s->oom_kills);
		return r == -ENODATA ? 0 : r;
	case CG_V1_PIDS:
		r = cg_read_u64(dir, "pids.current", &s->pids_current);
		return r == -ENOENT ? 0 : r;
	default:
		return 0;
	}
}

int cg_v2_kill(const char *dir)
{
	int r = cg_write(dir, "cgroup.kill", "1");

	/* ENOENT from an existing directory: the kernel predates cgroup.kill (Linux 5.14). */
	if (r == -ENOENT && access(dir, F_OK) == 0)
		return -EOPNOTSUPP;
	return r;
}

int cg_v2_populated(const char *dir)
{
	uint64_t v;
	int r = cg_read_key_u64(dir, "cgroup.events", "populated", &v);

	if (r < 0)
		return r;
	return v != 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup v1, on hybrid nodes: libcgroup finds the memory, pids and cpu hierarchies, and the
 * sandbox's limits and stats live in their files. */
#include <fcntl.h>
#include <inttypes.h>
#include <libcgroup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "log.h"
#include "macro.h"

/* v1 reports "no memory limit" as PAGE_COUNTER_MAX pages in bytes: LONG_MAX rounded down to
 * the page size, so anything this close to INT64_MAX is "none" whatever the page size. */
#define CG_V1_MEMORY_UNLIMITED ((uint64_t)INT64_MAX - (1u << 20))

int cg_errno_from_ecg(int ecg)
{
	int e;

	if (ecg <= 0)
		return ecg; /* success, or already a negative errno */
	switch (ecg) {
	case ECGOTHER:
		/* The only code that carries the system's own errno. */
		e = cgroup_get_last_errno();
		return e > 0 ? -e : -EIO;
	case ECGROUPNOTCOMPILED:
	case ECGROUPUNSUPP:
		return -EOPNOTSUPP;
	case ECGROUPNOTMOUNTED:
	case ECGROUPSUBSYSNOTMOUNTED:
		return -ENODEV;
	case ECGROUPNOTEXIST:
	case ECGROUPVALUENOTEXIST:
		return -ENOENT;
	case ECGROUPNOTOWNER:
	case ECGROUPNOTALLOWED:
		return -EPERM;
	case ECGINVAL:
	case ECGROUPNOTINITIALIZED:
		return -EINVAL;
	case ECGVALUEEXISTS:
	case ECGCONTROLLEREXISTS:
		return -EEXIST;
	case ECGMAXVALUESEXCEEDED:
		return -E2BIG;
	case ECGNONEMPTY:
		return -EBUSY;
	case ECGEOF:
		return -ENODATA;
	case ECGROUPPARSEFAIL:
	case ECGCONFIGPARSEFAIL:
		return -EBADMSG;
	default:
		return -EIO;
	}
}

/* libcgroup is used for discovery only: its cgroup_create_cgroup() (2.0.2) may rewrite the
 * unified root's cgroup.subtree_control on its own, so directories are made with mkdir(2). */
int cg_v1_discover(char *ret_mount[_CG_V1_MAX])
{
	char *mount[_CG_V1_MAX] = { NULL };
	int r;

	/* cgroup_init() re-reads /proc/mounts on every call, so a second node sees fresh data. */
	r = cg_errno_from_ecg(cgroup_init());
	if (r < 0)
		return r;
	for (int c = 0; c < _CG_V1_MAX; c++) {
		struct statfs sfs;
		char *mp = NULL;
		int ecg = cgroup_get_subsys_mount_point(cg_controller_name[c], &mp);

		if (ecg == ECGROUPNOTEXIST || ecg == ECGROUPNOTMOUNTED ||
		    ecg == ECGROUPSUBSYSNOTMOUNTED)
			continue;
		r = cg_errno_from_ecg(ecg);
		if (r < 0)
			goto fail;
		if (!mp) {
			r = -ENOMEM;
			goto fail;
		}
		/* libcgroup 2.0.2 also answers for controllers bound to the cgroup2 mount of a
		 * hybrid node (here hugetlb: /sys/fs/cgroup/unified). Only a v1 mount counts. */
		if (statfs(mp, &sfs) < 0) {
			r = -errno;
			free(mp);
			goto fail;
		}
		if (sfs.f_type != CGROUP_SUPER_MAGIC) {
			free(mp);
			continue;
		}
		mount[c] = mp;
	}
	for (int c = 0; c < _CG_V1_MAX; c++)
		ret_mount[c] = mount[c];
	return 0;
fail:
	for (int c = 0; c < _CG_V1_MAX; c++)
		free(mount[c]);
	return r;
}

uint64_t cg_v1_weight_to_shares(uint32_t weight)
{
	if (weight < 1)
		weight = 1;
	if (weight > 10000)
		weight = 10000;
	return 2 + ((uint64_t)(weight - 1) * 262142) / 9999;
}

int cg_v1_apply(enum cg_v1_controller c, const char *dir, const struct cg_limits *l)
{
	int r;

	switch (c) {
	case CG_V1_MEMORY:
		if (!l->memory_bytes)
			return 0;
		/* memory.oom_control is left as it is: the kernel OOM-kills inside the cgroup
		 * instead of freezing it at the limit. */
		r = cg_write_u64(dir, "memory.limit_in_bytes", l->memory_bytes);
		if (r < 0)
			return r;
		/* With swap accounting, memory plus swap gets the same cap, so that the limit
		 * cannot be dodged by swapping. v1 wants memsw >= limit: hence this order. */
		r = cg_write_u64(dir, "memory.memsw.limit_in_bytes", l->memory_bytes);
		return r == -ENOENT ? 0 : r;
	case CG_V1_PIDS:
		return l->pids ? cg_write_u64(dir, "pids.max", l->pids) : 0;
	case CG_V1_CPU:
		if (l->cpu_weight) {
			r = cg_write_u64(dir, "cpu.shares", cg_v1_weight_to_shares(l->cpu_weight));
			if (r < 0)
				return r;
		}
		return l->cpu_idle ? cg_write_cpu_idle(dir) : 0;
	default:
		return -EINVAL;
	}
}

int cg_v1_reset(enum cg_v1_controller c, const char *dir, const struct cg_limits *l)
{
	int r;

	switch (c) {
	case CG_V1_MEMORY:
		if (!l->memory_bytes)
			return 0;
		/* Unlimited: memory plus swap first, which must never be below memory alone. The
		 * page cache the last sandbox left charged (mostly the image's, which the next one
		 * reads too) stays: memory.force_empty would drain every CPU's page lists and cost
		 * more than a new memory cgroup; the kernel reclaims it first when the next sandbox
		 * nears its limit. */
		r = cg_write(dir, "memory.memsw.limit_in_bytes", "-1");
		if (r < 0 && r != -ENOENT)
			return r;
		return cg_write(dir, "memory.limit_in_bytes", "-1");
	case CG_V1_PIDS:
		return l->pids ? cg_write(dir, "pids.max", "max") : 0;
	case CG_V1_CPU:
		/* Not idle first: an idle group refuses new shares (EINVAL). */
		if (l->cpu_idle && (r = cg_write(dir, "cpu.idle", "0")) < 0)
			return r;
		return l->cpu_weight || l->cpu_idle ? cg_write_u64(dir, "cpu.shares", 1024) : 0;
	default:
		return -EINVAL;
	}
}

int cg_v1_read_stats(enum cg_v1_controller c, const char *dir, struct cg_stats *s)
{
	uint64_t v;
	int r;

	switch (c) {
	case CG_V1_MEMORY:
		r = cg_read_u64(dir, "memory.usage_in_bytes", &s->memory_current);
		if (r < 0)
			return r;
		r = cg_read_u64(dir, "memory.limit_in_bytes", &v);
		if (r < 0)
			return r;
		s->memory_max = v >= CG_V1_MEMORY_UNLIMITED ? UINT64_MAX : v;
		/* "oom_kill N" appeared in Linux 4.13. */
		r = cg_read_key_u64(dir, "memory.oom_control", "oom_kill", &s->oom_kills);
		return r == -ENODATA ? 0 : r;
	case CG_V1_PIDS:
		return cg_read_u64(dir, "pids.current", &s->pids_current);
	default:
		return 0;
	}
}

/* ---- favordynmods --------------------------------------------------------------------------- */

/* Whether a mounted cgroup hierarchy (the host's) already has the option. */
static bool cg_mounted_with_favordynmods(void)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char line[1024];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char type[32], opts[768];

		found = sscanf(line, "%*s %*s %31s %767s", type, opts) == 2 &&
			(strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0) &&
			strstr(opts, "favordynmods");
	}
	if (f)
		fclose(f);
	return found;
}

/* A detached mount of the named hierarchy, with the option; -errno. */
static int cg_favor_mount(void)
{
	_cleanup_close_ int fs = fsopen("cgroup", FSOPEN_CLOEXEC);
	int fd;

	if (fs < 0 || fsconfig(fs, FSCONFIG_SET_FLAG, "none", NULL, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "name", CG_FAVOR_NAME, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_FLAG, "favordynmods", NULL, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -errno;
	fd = fsmount(fs, FSMOUNT_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

void cg_v1_favor_dynmods(struct cg_node *node)
{
	const struct timespec pause = { .tv_nsec = 2000000 };
	int r;

	if (cg_mounted_with_favordynmods()) {
		node->favor_how = "on: a mounted cgroup hierarchy has the favordynmods option";
		return;
	}
	/* EBUSY: the root of a warrend that just stopped is still being torn down (the kernel
	 * does that after an RCU grace period); a new one can be made once it is gone. */
	for (int t = 0; (r = cg_favor_mount()) == -EBUSY && t < 250; t++)
		nanosleep(&pause, NULL);
	if (r < 0) {
		node->favor_how = r == -EINVAL ? "off: this kernel has no favordynmods (added in Linux 6.0)"
					       : "off: the named hierarchy could not be made";
		log_warn_errno(r, "cgroups: favordynmods is %s: each sandbox's v1 attach may wait "
				  "an RCU grace period", node->favor_how);
		return;
	}
	node->favor_fd = r;
	node->favor_how = "on: held by warrend (an empty named v1 hierarchy, name=" CG_FAVOR_NAME ")";
	log_debug("cgroups: favordynmods %s", node->favor_how + 4);
}

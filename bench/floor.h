/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* The two floors create-rate compares warren with.
 *
 * The isolation floor does, for each sandbox, only what warren's container tier cannot skip:
 * a cgroup2 directory (the CLONE_INTO_CGROUP target) and, on hybrid nodes, one directory in
 * each of the v1 memory, pids and cpu hierarchies with the child attached; clone3 with the
 * namespaces warren uses (user, pid, mount, uts, ipc, cgroup, and net when asked); the
 * uid/gid maps; in the child: setresuid to root of the sandbox, a private mount tree, a tmpfs
 * for the writable layer, an overlay over the read-only image, pivot_root, exec of busybox
 * /bin/true; then waitid through the pidfd and rmdir of the cgroups. No /proc, /dev or /sys
 * mounts, no seccomp, no capability dropping, no logs, no HTTP: a floor.
 *
 * The bare floor is fork + execve of the same busybox `true` + waitpid, without isolation. */

#include <stdbool.h>
#include <stdint.h>

enum { FLOOR_V1_MAX = 3 };

struct floor_config {
	char rootfs[256];                     /* the read-only image (the overlay's lower) */
	char busybox[300];                    /* <rootfs>/bin/busybox, for the bare floor */
	char scratch[256];                    /* empty directory: each child's tmpfs goes here */
	char upper[300], work[300], root[300];
	char overlay_opts[1024];
	char v2_parent[256];
	char v1_parent[FLOOR_V1_MAX][256];    /* "" where the controller is not mounted */
	int n_v1;
	uint32_t uid_base, uid_count;
};

/* Prepares the parent cgroups (<hierarchy>/<cgname>) and the scratch directory under dir.
 * Call before any worker thread starts: the children read this from their copy of memory. */
int floor_setup(struct floor_config *f, const char *dir, const char *rootfs, const char *cgname);
/* Removes the parent cgroups. */
void floor_cleanup(struct floor_config *f);

/* One sandbox of the isolation floor; 0 once /bin/true exited 0, or -errno (an error
 * explained on stderr once). Thread safe. */
int floor_isolation_once(const struct floor_config *f, bool netns);
/* One fork + exec busybox true + wait; 0 on exit 0. Thread safe. */
int floor_bare_once(const struct floor_config *f);

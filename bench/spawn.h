/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Runs a peer runtime (crun, runc, bwrap) the way posix_spawn would: clone(CLONE_VM |
 * CLONE_VFORK), so that launching it costs the bench the same small amount for every peer,
 * and optionally inside another mount namespace first (crun 1.8.1 refuses this machine's
 * hybrid cgroups; it runs in a namespace where /sys/fs/cgroup/unified is unmounted). */

#include <sys/types.h>

/* A mount namespace where the cgroup2 mount at /sys/fs/cgroup/unified is unmounted, so that a
 * runtime started there sees a pure cgroup v1 node. The host's mounts are untouched: the
 * namespace is a private copy, made by a short-lived child, and lives as long as the fd.
 * Returns the fd (O_CLOEXEC) or -errno. */
int mntns_without_cgroup2(void);

/* Runs argv[0] (a full path) with argv, stdin and stdout on /dev/null, stderr on log_fd
 * (-1: /dev/null), in its own process group (a Ctrl-C at the terminal reaches only the bench),
 * in mount namespace mntns_fd (-1: ours). Returns the wait status (>= 0) or -errno.
 * Thread safe. */
int spawn_run(char *const argv[], int mntns_fd, int log_fd);

/* A plain fork + execve + waitpid of path with argv: the bare floor. Returns the wait status
 * or -errno. Thread safe (the child only calls execve and _exit). */
int fork_exec_wait(const char *path, char *const argv[]);

/* Short description of a wait status: "exit 1", "signal 9". */
const char *status_string(int status, char buf[32]);

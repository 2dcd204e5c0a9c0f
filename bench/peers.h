/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* The peer runtimes the benches compare warren with: crun, runc (OCI runtimes, driven with a
 * bundle whose config.json we write) and bubblewrap. All run the same busybox `true` from the
 * same read-only EROFS mount of warren's base image.
 *
 * What the OCI bundles ask for, to be close to a warren sandbox: user namespace (root inside
 * is host uid 100000, as in warren), pid, mount, uts, ipc, cgroup and optionally network
 * namespaces; /proc, a tmpfs /dev with devpts, shm and mqueue, /sys; runc's default masked
 * and read-only paths; no capabilities beyond runc's default three; no_new_privs; a cgroup per
 * container (cgroupsPath under warren-bench-*-peers, in every hierarchy the runtime uses).
 * Unlike warren they get no writable overlay: the root is the read-only image itself, which
 * spares them a tmpfs and an overlay mount per container. bubblewrap gets the same namespaces
 * (its user namespace maps host root to root, it cannot map to 100000), a read-only bind of the
 * image as /, --proc /proc and --dev /dev, and no cgroups at all (it has none). */

#include <stdbool.h>

enum peer {
	PEER_CRUN,
	PEER_RUNC,
	PEER_BWRAP,
	_PEER_MAX,
};

struct peers {
	char path[_PEER_MAX][512];    /* "" when not installed */
	char version[_PEER_MAX][64];
	char state[_PEER_MAX][300];   /* --root of crun and runc */
	char dir[256];                /* bundles live here */
	char rootfs[256];
	char cgparent[64];            /* warren-bench-<name>-<pid>-peers */
	int mntns_fd;                 /* for crun: the namespace without the cgroup2 mount */
	int log_fd;
	int n_bundles;                /* per netns flavour: one per worker */
};

const char *peer_name(enum peer p);

/* Finds the installed peers (PATH, then /usr/sbin, /usr/bin), their versions, and prepares
 * the private mount namespace for crun. Never fails for a missing peer: its path is "". */
int peers_init(struct peers *p, const char *dir, const char *rootfs, const char *cgname,
	       int log_fd);
/* Writes config.json for n_workers bundles per flavour (with and without a network
 * namespace). A bundle belongs to one worker at a time: its cgroupsPath is reused by that
 * worker's containers one after another. */
int peers_write_bundles(struct peers *p, int n_workers);
/* Deletes leftover containers, closes the namespace, removes the peers' cgroups. */
void peers_cleanup(struct peers *p);

bool peer_available(const struct peers *p, enum peer which);

/* One container: create, run /bin/true, wait, delete. `seq` makes the container name unique.
 * Returns 0 when true exited 0, else -errno or -EIO (the runtime's stderr is in the log). */
int peer_run_once(const struct peers *p, enum peer which, int worker, bool netns,
		  unsigned long seq);

/* For exec-latency: a detached container running `sleep` (crun/runc only), an exec of
 * /bin/true into it, and its removal. */
int peer_start_idle(const struct peers *p, enum peer which, const char *name);
int peer_exec_true(const struct peers *p, enum peer which, const char *name);
void peer_remove(const struct peers *p, enum peer which, const char *name);

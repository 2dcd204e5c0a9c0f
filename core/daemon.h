/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <jansson.h>
#include <linux/filter.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "loop.h"

/* The node-wide state of warrend. Written on the main thread at start-up, read-only for the
 * loops afterwards, except the atomic counters. */
struct daemon {
	/* options */
	char *socket_path;
	char *state_dir;      /* logs, the scratch mount point */
	char *images_dir;     /* <name>.erofs files */
	char *init_path;      /* warren-init */
	char *cgroup_name;    /* parent cgroup: "warren" */
	char *profiles_dir;   /* seccomp/<name>.profile, apparmor/ */
	unsigned n_loops;
	unsigned max_sandboxes;
	unsigned max_conns;   /* per loop */
	uid_t uid_base;
	uint32_t uid_count;
	bool allow_host_network;
	bool exec_dir_mounted; /* a tmpfs of ours on <state_dir>/exec (sandbox_exec_dir_open()) */

	/* derived at start-up */
	char *log_dir;        /* <state_dir>/logs */
	char *exec_dir;       /* <state_dir>/exec: the exec channels' sockets */
	char *scratch_dir;    /* <state_dir>/mnt */
	char *image_mount_dir;/* <state_dir>/images */
	int listen_fd;
	int signal_fd;
	int init_fd;          /* sealed memfd with warren-init */
	struct cg_node *cg;
	struct image_store *images;
	json_t *info;         /* GET /v1/info, computed once */
	struct allowlist *allowlist; /* NULL: allowlist mode unavailable, net_why says why */
	struct net_bridge *bridge;
	char net_why[160];
	struct audit_reader *audit;   /* kernel records of refusals; NULL: none */
	bool audit_enabled_by_us;
	struct profile_set *profiles; /* seccomp profiles by name */
	char *zygote_path;    /* warren-zygote, beside init_path */
	int *zygotes;         /* spawn zygote sockets, one per loop (container_zygote_start()) */
	pid_t *zygote_pids;
	struct loop *loops;   /* n_loops of them */

	atomic_uint n_sandboxes;
	atomic_uint_fast64_t n_created;
	atomic_bool stopping;
};

/* Starts loop idx's spawn zygote (zygote_path). Main thread, at start-up. -errno. */
int daemon_zygote_start(struct daemon *d, unsigned idx);
/* Ends it: closes its socket, kills and reaps it. Main thread, at shutdown. */
void daemon_zygote_stop(struct daemon *d, unsigned idx);
struct loop;
/* From the loop's own thread: watches its zygote and replaces it the moment it dies (killed,
 * out of memory), and replaces it now (a start found it gone: -EPIPE). Without a zygote
 * (it cannot be started again) the loop's spawns clone from the daemon itself, slower. */
void loop_zygote_watch(struct loop *l);
int loop_zygote_restart(struct loop *l);

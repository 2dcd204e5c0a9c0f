/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Internals of the container tier, shared by its parent side (container.c, exec.c) and the code
 * that runs in its clone3 children (spawn-child.c, child.c); warren-init uses its step names
 * (init-exec.c). Everything a child
 * needs is computed by the parent into a plan before the clone: the child only reads it from
 * its copy of the parent's memory, so it never allocates (STYLE.md 23). */

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"
#include "macro.h"
#include "profile.h"

/* The namespaces clone3 makes, owned by the host's user namespace: the child builds its root
 * in them as host root, then enters a user namespace of its own (spawn-child.c), which owns
 * none of them, so root in the sandbox can neither mount nor reconfigure them. */
#define NS_FLAGS (CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC)
/* Where a child failed, reported to the parent with the errno through the error pipe. */
enum child_step {
	STEP_SIGNALS,
	STEP_SYNC,
	STEP_CGROUP_NS,
	STEP_OPEN_ROOT,
	STEP_SETGROUPS,
	STEP_SETGID,
	STEP_SETUID,
	STEP_PDEATHSIG,
	STEP_HOSTNAME,
	STEP_MOUNT_PRIVATE,
	STEP_MOUNT_SCRATCH,
	STEP_MKDIR_LAYERS,
	STEP_MOUNT_OVERLAY,
	STEP_MOUNT_PROC,
	STEP_MOUNT_SYS,
	STEP_MOUNT_DEV,
	STEP_RESOLV_CONF,
	STEP_NETNS,
	STEP_USERNS,
	STEP_PIVOT_ROOT,
	STEP_MASK_PROC,
	STEP_LOOPBACK,
	STEP_CHDIR,
	STEP_CAPS,
	STEP_STDIO,
	STEP_CLOSE_FDS,
	STEP_APPARMOR,
	STEP_LANDLOCK,
	STEP_SECCOMP,
	STEP_EXEC,
	STEP_FORK,
	STEP_PROCESS_GROUP,
	_STEP_MAX,
};

const char *child_step_to_string(enum child_step s);

/* What a failing child writes into the error pipe; err is a positive errno. */
struct child_error {
	int32_t step;
	int32_t err;
};

/* Prepared by container_start() for spawn_child(). */
struct spawn_plan {
	struct spawn_config c;          /* the caller's, with defaults filled in */
	char *const *argv;              /* "warren-init" [[--landlock] -- cmd...] */
	char scratch_size[24];          /* tmpfs size= of the writable layer, in bytes */
	char scratch_inodes[24];        /* and its nr_inodes= */
	struct profile_landlock landlock; /* abi 0: none */
	int sync_rd, sync_wr;           /* one byte from the parent: the cgroups are set */
	int userns_fd;                  /* the sandbox's user namespace, maps written */
	int err_rd, err_wr;
};

/* The pipes between a spawn child and the daemon: the child reads one byte from sync_rd once
 * the daemon has put it in its v1 cgroups, and reports a failure on err_wr (EOF: it exec'd).
 * The ends it does not use (sync_wr, err_rd) it closes; -1 where they were never its. */
struct spawn_fds {
	int sync_rd, sync_wr;
	int err_rd, err_wr;
};

/* Clones the sandbox's init (spawn_child()) from the calling process; sibling: as a child of
 * the caller's parent (CLONE_PARENT; the zygote's spawns belong to the daemon). */
int spawn_clone(const struct spawn_config *c, const struct spawn_fds *f, bool sibling,
		pid_t *ret_pid, int *ret_pidfd);
/* warren-zygote's loop: serves spawn requests on sock until the daemon closes it. */
void zygote_main(int sock);
/* The same, done by the zygote behind socket fd (zygote.c): the daemon's side. */
int zygote_spawn(int fd, const struct spawn_config *c, const struct spawn_fds *f,
		 pid_t *ret_pid, int *ret_pidfd);

_noreturn_ void spawn_child(const struct spawn_plan *p);

/* Parent-side helpers shared by container.c (start) and exec.c (exec). */
extern const char *const no_env[];
/* SIGKILLs the process (a pid namespace's init: the whole namespace) and reaps it. */
void kill_and_reap(int pidfd);
/* pipe2(O_CLOEXEC) with both ends above 0-2, which the children overwrite. */
int pipe_above_stdio(int fds[2]);
enum exec_failure failure_of(enum child_step step);

/* The exec channel's daemon side (exec.c; the init's is init-exec.c): backend_ops.exec_listen,
 * .exec and .exec_event. */
int container_exec_listen(const char *path);
int container_exec(const struct exec_config *c);
int container_exec_event(const struct msghdr *mh, const void *data, size_t len,
			 struct exec_event *ret);

/* Async-signal-safe helpers for the children (child.c). */
_noreturn_ void child_fail(int err_fd, enum child_step step, int err);
/* Default dispositions and an empty mask: the daemon blocks signals for its signalfd and
 * ignores SIGPIPE, and both would survive exec. */
int child_reset_signals(void);
/* Bounding, ambient, effective, permitted and inheritable sets to the container default. */
int child_drop_caps(void);
/* Moves fds[i] to descriptor i for i < n (a negative entry gets /dev/null). The results are
 * not close-on-exec; descriptors from n up are left as they were. */
int child_install_fds(const int *fds, int n);
/* 0 if the read end of the pipe is still open somewhere, -ESRCH once every reader closed it. */
int child_reader_alive(int wr);
/* The security layers a child applies last, in this order: the AppArmor profile for the next
 * exec, Landlock (after every mount, which Landlock would refuse), then seccomp (last: the
 * calls before it need not be allowed by the profile). Returns 0 or -errno with *ret_step. */
int child_confine(const char *apparmor_profile, const struct profile_landlock *landlock,
		  const struct profile_seccomp *profile, enum child_step *ret_step);

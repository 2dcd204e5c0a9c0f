/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Internals of the container tier, shared by its parent side (container.c) and the code that
 * runs in its clone3 children (spawn-child.c, exec-child.c, child.c). Everything a child
 * needs is computed by the parent into a plan before the clone: the child only reads it from
 * its copy of the parent's memory, so it never allocates (STYLE.md 23). */

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"
#include "macro.h"
#include "profile.h"

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
	STEP_CGROUP_ATTACH,
	STEP_SETNS,
	STEP_FORK,
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
	char *const *argv;              /* "warren-init" ["--" cmd...] */
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
/* The same, done by the zygote behind socket fd (zygote.c): the daemon's side. */
int zygote_spawn(int fd, const struct spawn_config *c, const struct spawn_fds *f,
		 pid_t *ret_pid, int *ret_pidfd);

/* Prepared by container_exec() for exec_child(). */
struct exec_plan {
	const struct exec_config *c;
	const char *path;               /* PATH from envp, or the default */
	int err_wr;                     /* A's and B's errors */
	int pid_wr;                     /* A reports B's pid */
	int alive_rd;                   /* its write end stays in the daemon: POLLHUP if it died */
	struct profile_landlock landlock; /* abi 0: none */
};

_noreturn_ void spawn_child(const struct spawn_plan *p);
_noreturn_ void exec_child(const struct exec_plan *p);

/* Parent-side helpers shared by container.c (start) and exec.c (exec). */
extern const char *const no_env[];
/* SIGKILLs the process (a pid namespace's init: the whole namespace) and reaps it. */
void kill_and_reap(int pidfd);
/* Reads a child's error pipe to EOF (blocking): 0 if it exec'd, else -errno and *ret_step. */
int read_child_error(int fd, const char *what, enum child_step *ret_step);
/* pipe2(O_CLOEXEC) with both ends above 0-2, which the children overwrite. */
int pipe_above_stdio(int fds[2]);
enum exec_failure failure_of(enum child_step step);
int container_exec(const struct exec_config *c, struct spawn_result *ret,
		   enum exec_failure *ret_failure);

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
/* 0 if the pipe's write end is still open somewhere, -ESRCH once every writer closed it. */
int child_writer_alive(int rd);
/* The same for the read end of a pipe, seen from its write end. */
int child_reader_alive(int wr);
/* The security layers a child applies last, in this order: the AppArmor profile for the next
 * exec, Landlock (after every mount, which Landlock would refuse), then seccomp (last: the
 * calls before it need not be allowed by the profile). Returns 0 or -errno with *ret_step. */
int child_confine(const char *apparmor_profile, const struct profile_landlock *landlock,
		  const struct profile_seccomp *profile, enum child_step *ret_step);
/* execve() with a PATH search on stack buffers; returns the most telling -errno. */
int child_execvpe(const char *file, char *const argv[], char *const envp[], const char *path);

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

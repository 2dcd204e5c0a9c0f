/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* A fixture for the container tier's privileged tests: a private directory under /tmp with an
 * EROFS image built for the test (busybox + warren-probe, owned by UID_BASE), mounted read-only
 * from its file; a cgroup made with cg_create(); the sealed warren-init memfd; the compiled
 * seccomp profile and a log pipe. The tests drive container_backend directly, as root, and
 * assert with warren-probe what the kernel shows inside. One fixture per test process
 * (criterion runs every test in its own process). */

#include <stdbool.h>
#include <sys/types.h>

#include "backend.h"
#include "cgroup.h"
#include "profile.h"

#define UID_BASE 100000
#define UID_COUNT 65536

struct ctr {
	char dir[64];       /* /tmp/warren-ctr-<pid>-XXXXXX */
	char image[128];    /* <dir>/base.erofs */
	char rootfs[128];   /* <dir>/rootfs: the image, mounted read-only */
	char scratch[128];  /* <dir>/scratch: stays empty on the host */
	char exec_path[128]; /* <dir>/exec.sock: the sandbox's exec channel */
	char id[32];
	struct cg_limits limits;
	struct cg_node *node;
	struct cg *cg;
	int cgroup_fd;
	int init_fd;
	struct profile_set *profiles;            /* <build>/profiles, compiled at setup */
	const struct profile_seccomp *seccomp;   /* NULL in a test that runs without a profile */
	const struct profile_seccomp *profile;   /* the set's container profile */
	bool no_landlock;          /* set by a test to show what Landlock blocks */
	int stdio_fd;              /* the sandbox's stdout and stderr; -1: the log pipe */
	int log_rd, log_wr;
	struct spawn_result init;  /* pidfd is -1 while no sandbox runs */
	pid_t last_exec_pid;       /* host pid of the last ctr_exec's command (its PID event) */
	uint64_t disk_bytes;
	const char *cwd;           /* of the sandbox's command; NULL: "/" */
	const char *exec_cwd;      /* NULL: "/" */
	char *envp[4];
	int zygote_fd;             /* set by a test: spawn through this zygote (0: directly) */
};

extern struct ctr T;

/* criterion .init / .fini; ctr_setup_with() first sets limits or disk size into T. */
void ctr_setup(void);
void ctr_teardown(void);

/* Starts T's sandbox with argv (NULL: idle). -errno as container_backend.start. */
int ctr_start(char *const *argv);
/* Waits up to timeout_ms for the process behind pidfd (our child, the sandbox's init), or for
 * the command of an exec (fd: its channel, from ctr_exec_async()): its exit code (128 + N for
 * signal N), or -ETIMEDOUT. */
int ctr_wait(int fd, int timeout_ms);
/* Everything the sandbox's command wrote so far (non-blocking); the caller frees it. */
char *ctr_log(void);
/* start + wait + log: the sandbox's exit code into *code. */
char *ctr_run(char *const *argv, int *code);
/* Runs argv in T's running sandbox with stdin_text (NULL: /dev/null); captures stdout and
 * stderr separately. Returns the exit code, or -errno from container_backend.exec or from the
 * init's FAILED answer (-ENOENT for a missing command or directory). */
int ctr_exec(char *const *argv, const char *stdin_text, char **out, char **err);
/* Like ctr_exec, but leaves the command running: the exec channel (for ctr_wait() and
 * ctr_exec_kill(); closing it kills the command), its host pid in *ret_pid. */
int ctr_exec_async(char *const *argv, pid_t *ret_pid);
/* Asks the init to kill the command of an exec (shuts the channel down for writing). */
void ctr_exec_kill(int fd);
/* ctr_exec with the given descriptor as the command's stdin (a test's "leaked" fd). */
int ctr_exec_stdin_fd(char *const *argv, int stdin_fd, char **out, char **err);
/* The build's profile directory (<build>/profiles). */
const char *ctr_profiles_dir(void);

/* How many mounts in the host's (our) mount table mention T.dir. */
int ctr_host_mounts(void);
/* Number of open fds of this process. */
int ctr_count_fds(void);
/* The st_ino of /proc/<pid>/ns/<name>. */
unsigned long ctr_ns_ino(pid_t pid, const char *name);
/* Whether line "ok <check>:" appears in text. */
bool ctr_probe_ok(const char *text, const char *check);

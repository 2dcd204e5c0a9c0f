/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "bridge.h"
#include "http.h"
#include "profile.h"
#include "loop.h"
#include "spec.h"

/* The sandbox lifecycle (STYLE.md 25-26). Every change goes through sandbox_set_state(), which
 * checks it against the transition table and logs it.
 *
 *   creating -> running -> stopping -> exited -> removed
 *                      \_______________/^
 *
 * A create that fails part-way leaves nothing behind, so there is no failed state. */
enum sandbox_state {
	SANDBOX_CREATING,
	SANDBOX_RUNNING,
	SANDBOX_STOPPING, /* killed; waiting for its processes to be gone */
	SANDBOX_EXITED,
	SANDBOX_REMOVED,
	_SANDBOX_STATE_MAX,
};

#define SANDBOX_ID_LEN 12

struct exec_run;
struct follower;

struct sandbox {
	char id[SANDBOX_ID_LEN + 1];
	struct loop *loop;
	struct sandbox *hnext;          /* hash chain in the loop's table */
	enum sandbox_state state;
	const struct backend_ops *backend;
	const struct image *image;
	const struct profile_seccomp *seccomp; /* compiled once per node, picked per sandbox */
	char apparmor[64];      /* its AppArmor profile's name, where the node has AppArmor */
	struct sandbox_spec spec;
	struct cg *cg;
	/* An idle sandbox keeps no descriptor in the daemon's fd table, which RLIMIT_NOFILE caps
	 * for the whole node (docs/architecture.md, "Descriptors"): its cgroup2 directory is
	 * opened where it is needed, its init is known by pid, its log pipe is a registered file
	 * of its loop's ring. */
	int cgroup_fd;                  /* open while creating only: CLONE_INTO_CGROUP, allowlist */
	/* The init, the daemon's child. An unreaped child's pid cannot be reused, and the init is
	 * reaped only in on_exit_waited(), which zeroes pid in the same step: so while pid > 0 it
	 * names the init (perhaps as a zombie), and kill(pid) is as safe as a pidfd kept from
	 * the clone. */
	pid_t pid;
	int exit_code;                  /* valid once exited */
	double created_at, exited_at;   /* exited_at: stamped when the init is reaped */

	struct io_op wait_op;
	siginfo_t wait_info;

	/* creating: the child reports through ready_fd whether the init runs */
	int ready_fd;
	struct io_op ready_op;
	char ready_buf[64];
	struct conn *creator;           /* the POST waiting for it, if still there */
	char create_error[SPEC_ERR_MAX];
	int create_status;              /* the HTTP status of that error */

	/* console log: pipe -> ring -> file */
	int log_slot;                   /* the pipe's read end: a registered file of the loop's
					 * ring (IOSQE_FIXED_FILE); -1: none */
	int log_fd;                     /* the file, opened at the first bytes; -EBADF before */
	char *log_path, *log_old_path;  /* current and rotated-out halves */
	uint64_t log_size;              /* bytes in the current file */
	struct io_op log_read_op, log_write_op;
	char *log_buf;
	bool log_eof;
	struct follower *followers;

	struct exec_run *execs;

	/* network, allowlist mode */
	struct allowlist_sandbox *allowlist;
	struct net_veth veth;
	bool has_veth;

	struct sandbox_waiter *waiters; /* POST .../wait requests; sandbox-wait.c */

	/* removal: conns waiting for DELETE to finish */
	struct conn **deleters;
	unsigned n_deleters;
	bool removing;
	bool removing_by_delete;        /* a DELETE (not a failed start) is removing it */
	unsigned remove_tries;
	struct io_op remove_timer_op;
	struct __kernel_timespec remove_ts;
};

const char *sandbox_state_to_string(enum sandbox_state s);

int sandbox_table_new(struct loop *l);
void sandbox_table_free(struct loop *l);
struct sandbox *sandbox_find(struct loop *l, const char *id);

/* Creates and starts a sandbox on loop l and answers c (201 with the sandbox once its init
 * runs) unless it fails at once: then it returns -errno with a message in err and leaves
 * nothing. A failure of the init before it runs is answered on c, after everything the
 * sandbox had is removed again. Takes over spec's contents when it returns 0. */
int sandbox_create(struct loop *l, struct sandbox_spec *spec, struct conn *c,
		   char err[SPEC_ERR_MAX]);
json_t *sandbox_to_json(const struct sandbox *s);
void sandbox_list_append(struct loop *l, json_t *array);
int sandbox_signal(struct sandbox *s, int sig);
/* The node's default --max-sandboxes, derived from its limits (see the comment there). Main
 * thread, once the options are parsed. */
struct daemon;
unsigned sandbox_default_max(const struct daemon *d);
/* Kills the sandbox, removes everything it had, then answers c (if not NULL). */
void sandbox_delete(struct sandbox *s, struct conn *c);
/* Frees a removed sandbox once nothing is in flight for it; I/O completions call it. */
void sandbox_maybe_free(struct sandbox *s);
/* Tells the exit (state "exited", the waiters' answers, the removal a delete asked for) once
 * the init is reaped and the log has all its output, so that whoever sees "exited" reads the
 * whole log; then sandbox_maybe_free(). The reaping and the log's end of file call it. */
void sandbox_exit_settle(struct sandbox *s);
/* Kills and removes every sandbox of the loop, blocking: shutdown only. */
void sandbox_shutdown_all(struct loop *l);

/* sandbox-io.c: the console log and exec. */
int sandbox_log_open(struct sandbox *s);
void sandbox_log_start(struct sandbox *s);
void sandbox_log_close(struct sandbox *s);
void sandbox_logs(struct sandbox *s, struct conn *c, bool follow);
int sandbox_exec(struct sandbox *s, struct exec_spec *spec, struct conn *c,
		 char err[SPEC_ERR_MAX]);
/* The exec channels' socket files, <exec_dir>/<id>.sock. The directory (0700, on a tmpfs: one
 * of ours if the state directory is on a disk) is opened at start-up (warrend.c then empties
 * it) and closed (unmounted, if ours) at shutdown, on the main thread. Per sandbox, on its loop:
 * the listening socket for spawn_config.exec_fd (the caller closes it once the init has its
 * copy) and its removal. */
struct daemon;
int sandbox_exec_dir_open(struct daemon *d);
void sandbox_exec_dir_close(struct daemon *d);
int sandbox_exec_listen(struct sandbox *s);
void sandbox_exec_unlink(struct sandbox *s);
/* Ends followers and execs when the sandbox goes away. */
void sandbox_io_detach_all(struct sandbox *s);
/* Exit code from a waitid siginfo: the code, or 128 + signal. */
int exit_code_from_siginfo(const siginfo_t *si);
/* Whether the sandbox still has I/O in flight that must finish before it is freed. */
bool sandbox_io_busy(const struct sandbox *s);

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Integration harness: each test starts its own warrend on a temporary socket, state directory
 * and parent cgroup, with the test image (busybox + warren-probe) built by tests/meson.build,
 * and drives it over HTTP with the client library. */

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "warren.h"

struct test_daemon {
	pid_t pid;
	char dir[256];      /* state dir; the socket is <dir>/warren.sock */
	char sock[300];
	char cgname[64];    /* parent cgroup name */
	struct warren_client *client;
};

extern struct test_daemon D;

/* Starts warrend with extra arguments (NULL-terminated), waits for its socket. */
void daemon_start_args(const char *const *extra);
void daemon_start(void);
/* Stops warrend (SIGTERM) and checks that it exited cleanly and left no cgroup and no mount
 * behind. criterion counts no failure of a .fini: a test that means to check the stop calls
 * it itself, last. */
void daemon_stop(void);

/* One request; returns the HTTP status (200...) or the error status, with the parsed body
 * (error JSON included) in *ret_json if not NULL. */
int api(const char *method, const char *path, json_t *body, json_t **ret_json);
/* Creates a sandbox from a JSON spec (stolen), asserts 201, returns the id (static buffer). */
const char *create(json_t *spec);
/* Runs argv (NULL-terminated) in a sandbox; captures output; returns the exit code. */
int run_exec(const char *id, const char *const *argv, char **out, char **err);
/* The host pid of the sandbox's init (GET), 0 once it has exited. */
pid_t sandbox_pid(const char *id);
/* Waits until the sandbox's state is `state`, up to ms; returns the sandbox JSON or NULL. */
json_t *wait_state(const char *id, const char *state, int ms);
/* Raw bytes to the socket; the whole response until close or timeout_ms. */
char *raw_http(const char *request, size_t len, int timeout_ms);
/* Counts for the leak test (warrend's fds: procfs.h). */
/* warrend's fds once they stop changing (its namespace pool refills in the background). */
int settled_fds(void);
/* Mounts in pid's mount namespace whose line mentions `under` (the host's table is shared by
 * every test running at the same time, so count only what is ours). */
int count_mounts(pid_t pid, const char *under);
/* Entries of a directory (only its subdirectories if dirs_only); -1 if it cannot be read. */
int count_dir(const char *path, bool dirs_only);
const char *v2_parent(void);

/* SPDX-License-Identifier: Apache-2.0 */
/* What a live sandbox costs warrend in descriptors, and that it is still watched: an idle sandbox
 * keeps no fd in warrend's table (RLIMIT_NOFILE caps it for the whole node) and exactly one
 * registered file (its log pipe) in its loop's ring; its exit is observed and its init reaped
 * although warrend keeps no pidfd of it; exec still finds its namespaces and cgroup. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "procfs.h"

TestSuite(density, .init = daemon_start, .fini = daemon_stop, .timeout = 300);

#define N_IDLE 50

/* Registered files over all of warrend's rings. */
static int ring_files(void)
{
	long n = proc_ring_files(D.pid, 20);

	cr_assert_geq(n, 0, "warrend's fds: %s", strerror((int)-n));
	return (int)n;
}

static pid_t pid_of(const char *id)
{
	pid_t pid = sandbox_pid(id);

	cr_assert_gt(pid, 0, "sandbox %s shows no pid", id);
	return pid;
}

/* A reaped process has no /proc entry; a zombie still has one (state Z). */
static bool process_gone(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	for (int i = 0; i < 500; i++) {
		if (access(path, F_OK) < 0)
			return true;
		usleep(10000);
	}
	return false;
}

static void delete(const char *id)
{
	char path[96];

	snprintf(path, sizeof(path), "/v1/sandboxes/%.32s", id);
	cr_assert_eq(api("DELETE", path, NULL, NULL), 200, "delete %s", id);
}

Test(density, idle_sandboxes_keep_no_fd_of_the_daemon)
{
	char ids[N_IDLE][32];
	int fds0, fds1, files0, files1;
	char *out = NULL;

	/* One round first, so lazily made state (parent dirs, pools) is in the baseline. */
	delete(create(json_object()));
	fds0 = settled_fds();
	files0 = ring_files();

	for (int i = 0; i < N_IDLE; i++)
		snprintf(ids[i], sizeof(ids[i]), "%s", create(json_object()));
	fds1 = settled_fds();
	files1 = ring_files();
	/* Before this was built each sandbox kept 4 (pidfd, cgroup, log pipe, log file). */
	cr_expect_leq(fds1 - fds0, N_IDLE / 10,
		      "warrend's fds grew from %d to %d over %d idle sandboxes", fds0, fds1,
		      N_IDLE);
	cr_expect_eq(files1 - files0, N_IDLE,
		     "registered files: %d before, %d with %d idle sandboxes (one log pipe each)",
		     files0, files1, N_IDLE);

	/* exec opens the init's pidfd and the cgroup when it needs them: the command runs in the
	 * sandbox's cgroup2 directory, the root of its cgroup namespace. */
	const char *argv[] = { "cat", "/proc/self/cgroup", NULL };
	cr_assert_eq(run_exec(ids[N_IDLE - 1], argv, &out, NULL), 0);
	cr_expect(strstr(out, "0::/\n"), "exec ran outside the sandbox's cgroup: %s", out);
	free(out);

	for (int i = 0; i < N_IDLE; i++)
		delete(ids[i]);
	cr_expect_eq(settled_fds(), fds0, "warrend's fds after deleting them all");
	cr_expect_eq(ring_files(), files0, "registered files after deleting them all");
}

Test(density, a_sandbox_that_logs_keeps_at_most_its_log_file)
{
	enum { N = 10 };
	char ids[N][32], path[96];
	int fds0, fds1;

	delete(create(json_object()));
	fds0 = settled_fds();
	for (int i = 0; i < N; i++)
		snprintf(ids[i], sizeof(ids[i]), "%s",
			 create(json_pack("{s:[s,s,s]}", "cmd", "sh", "-c",
					  "echo hello $$; exec sleep 1000")));
	for (int i = 0; i < N; i++) {
		char *body = NULL;

		snprintf(path, sizeof(path), "/v1/sandboxes/%.32s/logs", ids[i]);
		/* The first bytes make the file: poll until they are in it. */
		for (int t = 0; t < 500; t++) {
			struct warren_response resp = {};

			cr_assert_geq(warren_request(D.client, "GET", path, NULL, &resp), 0);
			free(body);
			body = strndup(resp.body ? resp.body : "", resp.body_len);
			warren_response_done(&resp);
			if (strstr(body, "hello 2\n"))
				break;
			usleep(10000);
		}
		cr_expect(strstr(body, "hello 2\n"), "log of %s: '%s'", ids[i], body);
		free(body);
	}
	fds1 = settled_fds();
	cr_expect_leq(fds1 - fds0, N, "warrend's fds grew from %d to %d over %d sandboxes that "
		      "wrote to their console", fds0, fds1, N);
	for (int i = 0; i < N; i++)
		delete(ids[i]);
	cr_expect_eq(settled_fds(), fds0, "warrend's fds after deleting them all");
}

/* warrend keeps no pidfd: it waits for each init by pid. Every exit must still be seen, with
 * its status, and every init reaped (no zombie left). */
Test(density, every_exit_is_observed_and_reaped_without_a_pidfd)
{
	char ids[N_IDLE][32], path[96];
	pid_t pids[N_IDLE];

	for (int i = 0; i < N_IDLE; i++) {
		snprintf(ids[i], sizeof(ids[i]), "%s",
			 i % 2 ? create(json_object()) :
				 /* Alive long enough for its pid to be read. */
				 create(json_pack("{s:[s,s,s]}", "cmd", "sh", "-c", "sleep 2; exit 7")));
		pids[i] = pid_of(ids[i]);
	}
	/* The commands exit by themselves; the idle inits are killed from outside, behind
	 * warrend's back. */
	for (int i = 1; i < N_IDLE; i += 2)
		cr_assert_eq(kill(pids[i], SIGKILL), 0, "kill %d: %m", pids[i]);
	for (int i = 0; i < N_IDLE; i++) {
		json_t *o = wait_state(ids[i], "exited", 20000);

		cr_assert(o, "the exit of %s (pid %d) was not observed", ids[i], pids[i]);
		cr_expect_eq(json_integer_value(json_object_get(o, "exit_code")), i % 2 ? 137 : 7,
			     "exit code of %s", ids[i]);
		cr_expect(json_is_null(json_object_get(o, "pid")), "exited %s still shows a pid",
			  ids[i]);
		json_decref(o);
		cr_expect(process_gone(pids[i]), "the init of %s (pid %d) was not reaped", ids[i],
			  pids[i]);
	}
	/* A signal to an exited sandbox is refused, never sent to whatever took the pid. */
	snprintf(path, sizeof(path), "/v1/sandboxes/%.32s/signal", ids[1]);
	cr_expect_eq(api("POST", path, json_pack("{s:i}", "signal", SIGTERM), NULL), 409);
	for (int i = 0; i < N_IDLE; i++)
		delete(ids[i]);
}

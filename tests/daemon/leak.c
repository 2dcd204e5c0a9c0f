/* SPDX-License-Identifier: Apache-2.0 */
/* Create and delete 200 sandboxes: warrend's fds, mounts, cgroup directories, logs and scratch
 * entries must come back to where they started. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

TestSuite(leak, .init = daemon_start, .fini = daemon_stop, .timeout = 300);

struct counts {
	int fds, mounts, v2, v1_memory, v1_pids, logs, scratch;
};

static int v1_count(const char *controller)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/%s", controller, D.cgname);
	return count_dir(path, false);
}


static struct counts measure(void)
{
	char logs[512], scratch[512];

	snprintf(logs, sizeof(logs), "%s/logs", D.dir);
	snprintf(scratch, sizeof(scratch), "%s/mnt", D.dir);
	return (struct counts){
		.fds = settled_fds(),
		.mounts = count_mounts(D.pid, D.dir),
		.v2 = count_dir(v2_parent(), false),
		.v1_memory = v1_count("memory"),
		.v1_pids = v1_count("pids"),
		.logs = count_dir(logs, false),
		.scratch = count_dir(scratch, false),
	};
}

Test(leak, create_delete_200_leaves_nothing)
{
	struct counts before, after;
	char path[64];

	/* One round first, so lazily made state (parent dirs, pools) is in the baseline. */
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", create(json_object()));
	cr_assert_eq(api("DELETE", path, NULL, NULL), 200);
	before = measure();

	for (int i = 0; i < 200; i++) {
		json_t *spec = i % 2 ? json_pack("{s:[s]}", "cmd", "true") : json_object();

		/* Every 20th fails inside its own setup, after cgroups, pipes and logs exist. */
		if (i % 20 == 5) {
			cr_assert_eq(api("POST", "/v1/sandboxes",
					 json_pack("{s:s}", "cwd", "/not/in/the/image"), NULL), 400);
			json_decref(spec);
			continue;
		}
		const char *id = create(spec);

		if (i % 10 == 0) {
			const char *argv[] = { "sh", "-c", "echo x > /tmp/x; cat /tmp/x", NULL };
			char *out;

			if (!(i % 2)) {
				cr_expect_eq(run_exec(id, argv, &out, NULL), 0);
				free(out);
			}
		}
		snprintf(path, sizeof(path), "/v1/sandboxes/%s", id);
		cr_assert_eq(api("DELETE", path, NULL, NULL), 200, "delete %s", id);
	}
	after = measure();

	cr_expect_eq(after.fds, before.fds, "warrend fds: %d before, %d after", before.fds, after.fds);
	cr_expect_eq(after.mounts, before.mounts, "warrend mounts: %d before, %d after",
		     before.mounts, after.mounts);
	cr_expect_eq(after.v2, before.v2, "cgroup2 entries: %d before, %d after", before.v2,
		     after.v2);
	cr_expect_eq(after.v1_memory, before.v1_memory, "v1 memory entries: %d -> %d",
		     before.v1_memory, after.v1_memory);
	cr_expect_eq(after.v1_pids, before.v1_pids, "v1 pids entries: %d -> %d", before.v1_pids,
		     after.v1_pids);
	cr_expect_eq(after.logs, before.logs, "log files: %d -> %d", before.logs, after.logs);
	cr_expect_eq(after.scratch, before.scratch, "scratch entries: %d -> %d", before.scratch,
		     after.scratch);
	json_t *o = NULL;
	cr_expect_eq(api("GET", "/v1/sandboxes", NULL, &o), 200);
	cr_expect_eq(json_array_size(json_object_get(o, "sandboxes")), 0);
	json_decref(o);
	/* Here, not in the suite's .fini, whose failures criterion does not count. */
	daemon_stop();
}

Test(leak, a_killed_daemon_leaves_nothing_after_a_restart)
{
	char logs[512];
	int status;

	create(json_object());
	create(json_pack("{s:[s,s]}", "cmd", "sleep", "1000"));
	cr_assert_eq(count_dir(v2_parent(), true), 2);
	/* No chance to clean up: its sandboxes die with it (PDEATHSIG), their cgroups stay. */
	kill(D.pid, SIGKILL);
	waitpid(D.pid, &status, 0);
	D.pid = -1;
	D.client = warren_client_free(D.client);
	cr_expect_eq(count_dir(v2_parent(), true), 2, "the sandboxes' cgroups went with the daemon");

	daemon_start();
	cr_expect_eq(count_dir(v2_parent(), true), 0, "the restarted daemon left stale cgroups");
	snprintf(logs, sizeof(logs), "%s/logs", D.dir);
	cr_expect_eq(count_dir(logs, false), 0, "the restarted daemon left stale logs");
	json_t *o = NULL;
	cr_expect_eq(api("GET", "/v1/sandboxes", NULL, &o), 200);
	cr_expect_eq(json_array_size(json_object_get(o, "sandboxes")), 0);
	json_decref(o);
	/* And it works. */
	const char *argv[] = { "true", NULL };
	cr_expect_eq(run_exec(create(json_object()), argv, NULL, NULL), 0);
	/* Here, not in the suite's .fini, whose failures criterion does not count: the second
	 * daemon stops cleanly and takes the first one's leftovers with it (the exec sockets'
	 * tmpfs among them). */
	daemon_stop();
}

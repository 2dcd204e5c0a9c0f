/* SPDX-License-Identifier: Apache-2.0 */
/* Isolation through the daemon, both ways, asserted by warren-probe running inside sandboxes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

TestSuite(isolation, .init = daemon_start, .fini = daemon_stop, .timeout = 120);

/* Runs `warren-probe CHECK ARGS...` by exec and asserts its verdict line. */
static void probe_ok(const char *id, const char *const *args)
{
	const char *argv[16] = { "warren-probe" };
	char *out, *err;
	int n = 1, code;

	for (; *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	code = run_exec(id, argv, &out, &err);
	cr_expect_eq(code, 0, "probe %s exited %d: %s%s", argv[1], code, out, err);
	cr_expect(strncmp(out, "ok ", 3) == 0 || strstr(out, "\nok "), "probe %s: %s%s", argv[1],
		  out, err);
	free(out);
	free(err);
}

#define PROBE(id, ...) probe_ok(id, (const char *const[]){ __VA_ARGS__, NULL })

Test(isolation, what_a_sandbox_sees)
{
	const char *id = create(json_object());
	char idc[16];

	snprintf(idc, sizeof(idc), "%s", id);
	PROBE(idc, "pid");
	PROBE(idc, "hostname", idc);
	PROBE(idc, "mounts", "/run/warren", "/tmp/warren-test", "/var/lib/warren", "/work");
	PROBE(idc, "netdevs");
	PROBE(idc, "loopback");
	PROBE(idc, "seccomp");
	PROBE(idc, "uid");
	PROBE(idc, "masked");
	PROBE(idc, "caps");
	PROBE(idc, "cgroup");
	PROBE(idc, "devices");
}

Test(isolation, the_command_is_pid_ones_child_and_sees_no_host_process)
{
	const char *id = create(json_pack("{s:[s,s]}", "cmd", "warren-probe", "pid"));
	struct warren_response resp = {};
	char path[64];
	json_t *o = wait_state(id, "exited", 5000);

	cr_assert(o);
	cr_expect_eq(json_integer_value(json_object_get(o, "exit_code")), 0);
	json_decref(o);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/logs", id);
	cr_assert(warren_request(D.client, "GET", path, NULL, &resp) >= 0);
	cr_expect(resp.body && strstr(resp.body, "ok pid: pid=2 ppid=1"), "log: %s", resp.body);
	warren_response_done(&resp);
}

Test(isolation, writes_stay_in_the_upper_layer_and_vanish)
{
	char a[16], b[16], path[64], lower[600];
	struct stat st;

	snprintf(a, sizeof(a), "%s", create(json_object()));
	snprintf(b, sizeof(b), "%s", create(json_object()));
	PROBE(a, "write", "/etc/secret", "from-a");
	PROBE(a, "read", "/etc/secret", "from-a");
	/* Overwriting a binary changes only this sandbox. */
	PROBE(a, "write", "/bin/busybox", "clobbered");

	const char *cat[] = { "cat", "/etc/secret", NULL };
	char *err;
	cr_expect_neq(run_exec(b, cat, NULL, &err), 0, "sandbox b sees a's file");
	free(err);
	const char *sh[] = { "sh", "-c", "echo intact", NULL };
	char *out;
	cr_expect_eq(run_exec(b, sh, &out, NULL), 0, "a's overwrite of busybox reached b");
	cr_expect_str_eq(out, "intact\n");
	free(out);

	/* The shared image is untouched. */
	snprintf(lower, sizeof(lower), "%s/images/base/etc/secret", D.dir);
	cr_expect(stat(lower, &st) < 0, "the write reached the lower image");
	snprintf(lower, sizeof(lower), "%s/images/base/bin/busybox", D.dir);
	cr_expect(stat(lower, &st) == 0 && st.st_size > 100000, "the image's busybox changed");

	snprintf(path, sizeof(path), "/v1/sandboxes/%s", a);
	cr_expect_eq(api("DELETE", path, NULL, NULL), 200);
	snprintf(a, sizeof(a), "%s", create(json_object()));
	cr_expect_neq(run_exec(a, cat, NULL, &err), 0, "a new sandbox sees the deleted one's file");
	free(err);
}

Test(isolation, memory_bomb_is_oom_killed_inside)
{
	const char *id = create(json_pack("{s:{s:i}}", "limits", "memory_bytes", 32 << 20));
	const char *argv[] = { "warren-probe", "memory-bomb", "512", NULL };
	char idc[16], path[64];
	json_t *o = NULL;

	snprintf(idc, sizeof(idc), "%s", id);
	cr_expect_eq(run_exec(idc, argv, NULL, NULL), 128 + SIGKILL);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", idc);
	cr_assert_eq(api("GET", path, NULL, &o), 200);
	cr_expect_str_eq(json_string_value(json_object_get(o, "state")), "running",
			 "the OOM kill took the whole sandbox down");
	cr_expect(json_integer_value(json_object_get(json_object_get(o, "stats"), "oom_kills")) >= 1,
		  "no OOM kill counted: %s", json_dumps(o, 0));
	json_decref(o);
}

Test(isolation, fork_bomb_stops_at_pids_max)
{
	const char *id = create(json_pack("{s:{s:i}}", "limits", "pids", 40));
	char idc[16];

	snprintf(idc, sizeof(idc), "%s", id);
	PROBE(idc, "fork-bomb", "1000");
	/* And the sandbox still works afterwards. */
	const char *argv[] = { "true", NULL };
	cr_expect_eq(run_exec(idc, argv, NULL, NULL), 0);
}

Test(isolation, exec_joins_the_same_namespaces)
{
#define NS_SCRIPT "for n in pid mnt net user uts ipc cgroup; do readlink /proc/self/ns/$n; done"
	const char *id = create(json_pack("{s:[s,s,s]}", "cmd", "sh", "-c", NS_SCRIPT "; sleep 1000"));
	struct warren_response resp = {};
	char idc[16], path[64];
	char *out;

	snprintf(idc, sizeof(idc), "%s", id);
	usleep(300000);
	const char *argv[] = { "sh", "-c", NS_SCRIPT, NULL };
	cr_expect_eq(run_exec(idc, argv, &out, NULL), 0);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/logs", idc);
	cr_assert(warren_request(D.client, "GET", path, NULL, &resp) >= 0);
	cr_expect(resp.body && strcmp(resp.body, out) == 0, "init's: %s exec's: %s", resp.body,
		  out);
	/* And they are not the host's. */
	char host[64] = "";
	ssize_t n = readlink("/proc/self/ns/pid", host, sizeof(host) - 1);
	cr_assert(n > 0);
	cr_expect(!strstr(out, host), "exec runs in the host's pid namespace");
	warren_response_done(&resp);
	free(out);
}

/* The exec channel: a socket file in a directory of root's (0700) in the daemon's state
 * directory, not in any sandbox's mount namespace; a process with the sandbox's host uid cannot
 * connect to it either, nor can anything inside reach the init's end; it goes with the sandbox. */
Test(isolation, exec_channel_is_the_daemons_alone)
{
	const char *id = create(json_object());
	char idc[16], dir[300], path[340], sandbox_path[340];
	struct stat st;
	int status;
	pid_t child;

	snprintf(idc, sizeof(idc), "%s", id);
	snprintf(dir, sizeof(dir), "%s/exec", D.dir);
	snprintf(path, sizeof(path), "%s/%s.sock", dir, idc);
	cr_assert_eq(stat(dir, &st), 0, "%s: %m", dir);
	cr_expect_eq(st.st_mode & 07777, 0700, "%s has mode %o", dir, st.st_mode & 07777);
	cr_expect_eq(st.st_uid, 0);
	cr_assert_eq(stat(path, &st), 0, "%s: %m", path);
	cr_expect(S_ISSOCK(st.st_mode));

	snprintf(sandbox_path, sizeof(sandbox_path), "%s", path);
	PROBE(idc, "exec-channel", sandbox_path);

	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int s;

		snprintf(a.sun_path, sizeof(a.sun_path), "%.107s", path);
		if (syscall(SYS_setgroups, 0, NULL) < 0 ||
		    syscall(SYS_setresgid, 100000, 100000, 100000) < 0 ||
		    syscall(SYS_setresuid, 100000, 100000, 100000) < 0)
			_exit(2);
		s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		_exit(connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 && errno == EACCES ? 0 : 1);
	}
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the sandbox's host uid could connect to the exec channel (status %d)", status);

	snprintf(sandbox_path, sizeof(sandbox_path), "/v1/sandboxes/%s", idc);
	cr_assert_eq(api("DELETE", sandbox_path, NULL, NULL), 200);
	cr_expect_neq(stat(path, &st), 0, "%s outlived its sandbox", path);
	cr_expect_eq(count_dir(dir, false), 0);
}

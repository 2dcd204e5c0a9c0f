/* SPDX-License-Identifier: Apache-2.0 */
/* The agent-escape suite. Each test mounts one attack that agents gaming their harness have
 * tried, from inside a real sandbox of a real warrend, and asserts (a) that it fails, with the
 * exact error, and (b) that the refusal was recorded where a layer refused it. Each writes a
 * scoreboard line to $WARREN_ESCAPE_REPORT for tools/escape-report. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

TestSuite(escape, .init = daemon_start, .fini = daemon_stop, .timeout = 120);

/* blocked: "yes"/"no"; recorded: "yes", "no", or "n/a" (nothing refused it: the thing
 * attacked is simply not there, so there is nothing to record). */
static void scoreboard(const char *attack, bool blocked, const char *recorded)
{
	const char *path = getenv("WARREN_ESCAPE_REPORT");
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "%s\t%s\t%s\n", attack, blocked ? "yes" : "no", recorded);
	fclose(f);
}

/* Runs warren-attack in the sandbox; true if it says "blocked". */
static bool attack(const char *id, const char *const *args, char **ret_out)
{
	const char *argv[24] = { "warren-attack" };
	char *out, *err;
	int n = 1, code;

	for (; *args && n < 23; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	code = run_exec(id, argv, &out, &err);
	cr_log_info("%s%s", out, err);
	cr_expect_eq(code, 0, "attack %s: exit %d: %s%s", argv[1], code, out, err);
	cr_expect(strncmp(out, "blocked ", 8) == 0, "attack %s: %s%s", argv[1], out, err);
	bool blocked = code == 0 && strncmp(out, "blocked ", 8) == 0;
	if (ret_out)
		*ret_out = out;
	else
		free(out);
	free(err);
	return blocked;
}

#define ATTACK(id, out, ...) attack(id, (const char *const[]){ __VA_ARGS__, NULL }, out)

/* Whether the journal holds a refusal of this sandbox by layer whose action contains what,
 * within 3 s (kernel records arrive asynchronously). */
static bool recorded(const char *id, const char *layer, const char *what)
{
	char path[128];

	snprintf(path, sizeof(path), "/v1/denials?sandbox=%s&limit=200", id);
	for (int t = 0; t < 300; t++) {
		json_t *o = NULL, *d;
		size_t i;
		bool found = false;

		if (api("GET", path, NULL, &o) == 200)
			json_array_foreach(json_object_get(o, "denials"), i, d)
				found |= strcmp(json_string_value(json_object_get(d, "layer")), layer) == 0 &&
					 strstr(json_string_value(json_object_get(d, "action")), what);
		json_decref(o);
		if (found)
			return true;
		usleep(10000);
	}
	return false;
}

static const char *expect_recorded(const char *id, const char *layer, const char *what)
{
	bool r = recorded(id, layer, what);
	json_t *info = NULL;
	char *audit = NULL;

	/* What the daemon's audit feed saw (records lost, denials attributed), for the failure. */
	if (!r && api("GET", "/v1/info", NULL, &info) == 200)
		audit = json_dumps(json_object_get(info, "audit"), JSON_COMPACT);
	cr_expect(r, "no %s denial for '%s' recorded for %s (audit: %s)", layer, what, id,
		  audit ? audit : "?");
	free(audit);
	json_decref(info);
	return r ? "yes" : "no";
}

static char *sandbox(json_t *spec)
{
	return strdup(create(spec));
}


/* ---- leaked answers ------------------------------------------------------------------------ */

Test(escape, leaked_answers_in_host_files)
{
	char *a = sandbox(json_object()), *b = sandbox(json_object());
	char logs[512], blog[600], images[512];
	const char *argv[] = { "sh", "-c", "echo the-answer-is-42 > /root/answer", NULL };

	cr_assert_eq(run_exec(b, argv, NULL, NULL), 0);
	snprintf(logs, sizeof(logs), "%s/logs", D.dir);
	snprintf(blog, sizeof(blog), "%s/logs/%s.log", D.dir, b);
	snprintf(images, sizeof(images), "%s/images", D.dir);
	bool blocked = ATTACK(a, NULL, "read-paths", D.dir, logs, blog, images, D.sock,
			      "/var/lib/warren/images", "/run/warren", "/etc/shadow-host-marker");
	/* Another sandbox's files, env and cmdline: not reachable by any path either. */
	const char *peek[] = { "sh", "-c", "cat /root/answer /proc/*/environ 2>/dev/null | "
					   "grep -c the-answer-is-42", NULL };
	char *out;
	run_exec(a, peek, &out, NULL);
	cr_expect_str_eq(out, "0\n", "sandbox a found b's answer");
	blocked &= strcmp(out, "0\n") == 0;
	free(out);
	scoreboard("leaked answers: warrend's state, logs, socket; another sandbox's files", blocked,
		   "n/a");
}

Test(escape, leaked_answers_in_kernel_log)
{
	char *a = sandbox(json_object());
	bool blocked = ATTACK(a, NULL, "dmesg");

	scoreboard("leaked answers: dmesg, /dev/kmsg, /var/log", blocked,
		   expect_recorded(a, "seccomp", "syslog"));
}

/* ---- forged RPCs --------------------------------------------------------------------------- */

Test(escape, forged_rpc_to_the_api)
{
	char *a = sandbox(json_object());
	bool blocked = ATTACK(a, NULL, "connect-api", D.sock, "/run/warren/warren.sock");

	scoreboard("forged RPC: the API socket from inside", blocked, "n/a");
}

Test(escape, one_sandbox_acts_on_another)
{
	char *a = sandbox(json_object()), *b = sandbox(json_object());
	char bpid[16], dpid[16];

	snprintf(bpid, sizeof(bpid), "%d", sandbox_pid(b));
	snprintf(dpid, sizeof(dpid), "%d", D.pid);
	bool blocked = ATTACK(a, NULL, "signal-pids", bpid, dpid);
	scoreboard("forged RPC: one sandbox signals another, or warrend", blocked, "n/a");
}

/* ---- block and extent tricks ----------------------------------------------------------------- */

Test(escape, extent_ioctls)
{
	char *a = sandbox(json_object());
	bool blocked = ATTACK(a, NULL, "extents", "/bin/busybox");

	scoreboard("extents: FICLONE, FICLONERANGE, FIDEDUPERANGE, XFS_IOC_SWAPEXT, "
		   "EXT4_IOC_MOVE_EXT",
		   blocked, expect_recorded(a, "seccomp", "ioctl"));
}

Test(escape, overwrite_bin_sh)
{
	char *a = sandbox(json_object()), *b = sandbox(json_object());
	char image[512];
	struct stat before, after;
	const char *evil[] = { "sh", "-c", "cp /bin/busybox /tmp/bb && "
					   "echo '#!/tmp/bb sh' > /bin/sh.new && mv /bin/sh.new /bin/sh "
					   "&& echo pwned > /bin/busybox; echo done", NULL };
	const char *check[] = { "sh", "-c", "echo intact", NULL };
	char *out;

	snprintf(image, sizeof(image), "%s/tests/images/base.erofs", getenv("WARREN_BUILD_DIR"));
	cr_assert(stat(image, &before) == 0);
	run_exec(a, evil, NULL, NULL);
	cr_expect_eq(run_exec(b, check, &out, NULL), 0);
	bool blocked = strcmp(out, "intact\n") == 0;
	cr_expect(blocked, "b's /bin/sh changed: %s", out);
	free(out);
	cr_assert(stat(image, &after) == 0);
	cr_expect(after.st_mtime == before.st_mtime && after.st_size == before.st_size,
		  "the image file changed");
	blocked &= after.st_mtime == before.st_mtime;
	scoreboard("overwrite /bin/sh and busybox: only that sandbox's upper layer changes", blocked,
		   "n/a");
}

/* ---- another process's fds and memory ----------------------------------------------------------- */

Test(escape, another_process_fds_and_memory)
{
	char *a = sandbox(json_object());
	bool blocked = ATTACK(a, NULL, "process", "1");

	scoreboard("fds and memory of the sandbox's init: pidfd_getfd, ptrace, process_vm_readv, "
		   "/proc/1/{mem,fd,exe}",
		   blocked, expect_recorded(a, "seccomp", "ptrace"));
}

/* ---- classic escapes ----------------------------------------------------------------------- */

static bool same_file(const char *path, const char *copy)
{
	char cmd[3000];

	snprintf(cmd, sizeof(cmd), "cmp -s %.1400s %.1400s", path, copy);
	return system(cmd) == 0;
}

Test(escape, cve_2019_5736_and_2016_9962_runtime_helper)
{
	char *a = sandbox(json_pack("{s:[s,s,s]}", "cmd", "warren-attack", "exe-race", "3"));
	char warrend[512], init[512], cmd[1400], path[64];
	json_t *o;

	snprintf(warrend, sizeof(warrend), "%s/warrend", getenv("WARREN_BUILD_DIR"));
	snprintf(init, sizeof(init), "%s/warren-init", getenv("WARREN_BUILD_DIR"));
	snprintf(cmd, sizeof(cmd), "cp %s /tmp/warrend.%d && cp %s /tmp/warren-init.%d", warrend,
		 getpid(), init, getpid());
	cr_assert(system(cmd) == 0);
	/* Execs enter the sandbox while the attack loops over its processes. */
	for (int i = 0; i < 40; i++) {
		const char *argv[] = { "true", NULL };

		run_exec(a, argv, NULL, NULL);
	}
	o = wait_state(a, "exited", 10000);
	cr_assert(o);
	cr_expect_eq(json_integer_value(json_object_get(o, "exit_code")), 0,
		     "the attack got through");
	bool blocked = json_integer_value(json_object_get(o, "exit_code")) == 0;
	json_decref(o);
	snprintf(cmd, sizeof(cmd), "/tmp/warrend.%d", getpid());
	snprintf(path, sizeof(path), "/tmp/warren-init.%d", getpid());
	cr_expect(same_file(warrend, cmd), "warrend's binary changed");
	cr_expect(same_file(init, path), "warren-init's binary changed");
	blocked &= same_file(warrend, cmd) && same_file(init, path);
	unlink(cmd);
	unlink(path);
	scoreboard("CVE-2019-5736 /proc/PID/exe overwrite and CVE-2016-9962 ptrace of a helper "
		   "entering the sandbox",
		   blocked, expect_recorded(a, "seccomp", "ptrace"));
}

Test(escape, cve_2024_21626_leaked_fd_as_cwd)
{
	char *a = sandbox(json_object());
	bool blocked = true;

	for (int fd = 3; fd <= 12; fd++) {
		char cwd[32], path[64];
		struct warren_exec_result res;
		struct warren_exec_ops ops = {};

		snprintf(cwd, sizeof(cwd), "/proc/self/fd/%d", fd);
		snprintf(path, sizeof(path), "%s", a);
		json_t *req = json_pack("{s:[s,s,s],s:s}", "cmd", "sh", "-c",
					"cat ../../../../../../etc/os-release && exit 99", "cwd", cwd);
		int r = warren_exec(D.client, path, req, &ops, NULL, &res);

		json_decref(req);
		if (r < 0) {
			/* Refused before the command ran: no such directory in the sandbox. */
			cr_log_info("cwd %s: %s", cwd, warren_error_message(D.client));
			continue;
		}
		/* The host's /etc/os-release would exit 99; the image has none. */
		cr_expect_neq(res.exit_code, 99, "cwd %s reached a host directory", cwd);
		blocked &= res.exit_code != 99;
	}
	scoreboard("CVE-2024-21626: a leaked fd as the exec's cwd", blocked, "n/a");
}

Test(escape, cve_2022_0492_release_agent)
{
	char *a = sandbox(json_object());
	bool blocked = ATTACK(a, NULL, "release-agent");

	scoreboard("CVE-2022-0492: cgroup v1 release_agent", blocked,
		   expect_recorded(a, "seccomp", "mount"));
}

Test(escape, renameat2_mount_target_race)
{
	char *a = sandbox(json_object());
	bool blocked = ATTACK(a, NULL, "mount-race");

	scoreboard("renameat2 mount-target race", blocked, "n/a");
}

/* ---- resource abuse -------------------------------------------------------------------------- */

Test(escape, disk_fill_hits_the_upper_cap)
{
	char *a = sandbox(json_pack("{s:{s:i}}", "limits", "disk_bytes", 8 << 20));
	char *out;
	bool blocked = ATTACK(a, &out, "disk-fill");

	cr_expect(strstr(out, "ENOSPC"), "%s", out);
	free(out);
	scoreboard("disk fill: the upper layer's cap holds", blocked, "n/a");
}

Test(escape, fork_and_memory_bombs)
{
	char *a = sandbox(json_pack("{s:{s:i,s:i}}", "limits", "pids", 64, "memory_bytes", 64 << 20));
	const char *fork_bomb[] = { "warren-probe", "fork-bomb", "5000", NULL };
	const char *mem_bomb[] = { "warren-probe", "memory-bomb", "1024", NULL };
	const char *alive[] = { "true", NULL };

	cr_expect_eq(run_exec(a, fork_bomb, NULL, NULL), 0);
	cr_expect_eq(run_exec(a, mem_bomb, NULL, NULL), 128 + SIGKILL);
	cr_expect_eq(run_exec(a, alive, NULL, NULL), 0, "the sandbox did not survive its bombs");
	scoreboard("fork bomb and memory bomb", true, "n/a");
}

Test(escape, recursive_grep_over_proc_and_sys)
{
	char *a = sandbox(json_object());
	const char *grep[] = { "sh", "-c",
			       "timeout 30 grep -rs answer /proc /sys >/dev/null 2>&1; echo done",
			       NULL };
	char *out;

	run_exec(a, grep, &out, NULL);
	cr_expect_str_eq(out, "done\n");
	free(out);
	/* The node and warrend are still up, and the sandbox still answers. */
	cr_expect_eq(api("GET", "/v1/info", NULL, NULL), 200);
	const char *alive[] = { "true", NULL };
	cr_expect_eq(run_exec(a, alive, NULL, NULL), 0);
	scoreboard("recursive grep over /proc and /sys (kpagecgroup & co. masked)", true, "n/a");
}

Test(escape, port_scan_of_the_node)
{
	/* Mode none: there is no route at all, so nothing refuses (or records) anything. */
	char *a = sandbox(json_object());
	char *out;
	bool blocked = ATTACK(a, &out, "port-scan", "198.18.0.1", "1", "200");

	cr_expect(strstr(out, "0 of 200 ports open"), "%s", out);
	free(out);
	scoreboard("port scan of the node's addresses (network none: no route)", blocked, "n/a");

	/* Mode allowlist with no rule: a route, and the allowlist refuses every port. */
	json_t *o = NULL;
	cr_assert_eq(api("GET", "/v1/info", NULL, &o), 200);
	bool have = json_is_true(json_object_get(json_object_get(o, "network"), "allowlist"));
	json_decref(o);
	if (!have) {
		scoreboard("port scan of the node's addresses (network allowlist)", false,
			   "no: allowlist mode unavailable on this node");
		cr_skip_test("network mode allowlist unavailable on this node (see GET /v1/info)");
	}
	char *b = sandbox(json_pack("{s:{s:s}}", "network", "mode", "allowlist"));
	blocked = ATTACK(b, &out, "port-scan", "198.18.0.1", "1", "200");
	cr_expect(strstr(out, "0 of 200 ports open; errors: EPERM"), "%s", out);
	free(out);
	scoreboard("port scan of the node's addresses (network allowlist, no rule)", blocked,
		   expect_recorded(b, "network", "connect 198.18.0.1:"));
}

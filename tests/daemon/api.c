/* SPDX-License-Identifier: Apache-2.0 */
/* The API over the real socket: every endpoint, and every error case docs/api.md names. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"

TestSuite(api, .init = daemon_start, .fini = daemon_stop, .timeout = 60);

static const char *str(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : "";
}

static const char *err_code(json_t *o)
{
	return str(json_object_get(o, "error"), "code");
}

static json_t *cmd(const char *sh)
{
	return json_pack("{s:[s,s,s]}", "cmd", "sh", "-c", sh);
}

Test(api, info_tells_the_node)
{
	json_t *o = NULL;

	cr_assert_eq(api("GET", "/v1/info", NULL, &o), 200);
	cr_expect_str_eq(str(o, "version"), "0.1.0");
	cr_expect(json_integer_value(json_object_get(o, "cores")) >= 1);
	const char *mode = str(json_object_get(o, "cgroup"), "mode");
	cr_expect(strcmp(mode, "hybrid") == 0 || strcmp(mode, "unified") == 0, "mode %s", mode);
	/* Hybrid nodes say whether the v1 attach is spared its RCU grace period, and how. */
	json_t *favor = json_object_get(json_object_get(o, "cgroup"), "favordynmods");
	if (strcmp(mode, "hybrid") == 0)
		cr_expect(json_is_string(favor) && (strncmp(json_string_value(favor), "on: ", 4) == 0 ||
						    strncmp(json_string_value(favor), "off: ", 5) == 0));
	else
		cr_expect(json_is_null(favor));
	cr_expect(json_is_true(json_object_get(
		json_object_get(json_object_get(o, "tiers"), "container"), "available")));
	cr_expect(json_is_false(json_object_get(
		json_object_get(json_object_get(o, "tiers"), "microvm"), "available")));
	cr_expect(json_is_true(json_object_get(json_object_get(o, "io_uring"), "waitid")));
	cr_expect(json_is_boolean(json_object_get(json_object_get(o, "lsm"), "apparmor")));
	cr_expect(json_is_object(json_object_get(o, "kvm")));
	cr_expect_str_eq(json_string_value(json_array_get(json_object_get(o, "images"), 0)), "base");
	json_decref(o);
}

Test(api, create_run_exit_and_logs)
{
	const char *id = create(cmd("echo hello from $(hostname); echo oops >&2; exit 7"));
	char path[128];
	json_t *o = wait_state(id, "exited", 5000);

	cr_assert(o, "sandbox %s never exited", id);
	cr_expect_eq(json_integer_value(json_object_get(o, "exit_code")), 7);
	cr_expect_str_eq(str(o, "image"), "base");
	cr_expect_str_eq(str(o, "tier"), "container");
	json_decref(o);

	/* The log holds stdout and stderr; the hostname is the sandbox id. */
	struct warren_response resp = {};
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/logs", id);
	for (int i = 0; i < 100; i++) {
		cr_assert(warren_request(D.client, "GET", path, NULL, &resp) >= 0);
		if (resp.body && strstr(resp.body, "oops"))
			break;
		warren_response_done(&resp);
		usleep(10000);
	}
	char want[128];
	snprintf(want, sizeof(want), "hello from %s\n", id);
	cr_expect(resp.body && strstr(resp.body, want), "log: %s", resp.body);
	cr_expect(resp.body && strstr(resp.body, "oops\n"), "log: %s", resp.body);
	warren_response_done(&resp);

	snprintf(path, sizeof(path), "/v1/sandboxes/%s", id);
	cr_expect_eq(api("DELETE", path, NULL, &o), 200);
	cr_expect_str_eq(str(o, "state"), "removed");
	json_decref(o);
	cr_expect_eq(api("GET", path, NULL, NULL), 404);
}

/* warrend's spawn zygotes: its children named warren-zygote. */
static int zygotes_of(pid_t daemon, pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	cr_assert(d);
	while ((de = readdir(d)) && n < max) {
		char path[300], comm[32] = "", line[512];
		int ppid = 0;
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		/* pid (comm) state ppid: no zygote's comm holds a space or a parenthesis. */
		if (fgets(line, sizeof(line), f) &&
		    sscanf(line, "%*d (%31[^)]) %*c %d", comm, &ppid) == 2 && ppid == daemon &&
		    strcmp(comm, "warren-zygote") == 0)
			pids[n++] = atoi(de->d_name);
		fclose(f);
	}
	closedir(d);
	return n;
}

/* A spawn zygote that dies (killed, out of memory) is replaced at once by its loop and reaped
 * (no zombie left), and creates go on working. */
Test(api, a_dead_spawn_zygote_is_replaced)
{
	pid_t old[8], now[8];
	int n = zygotes_of(D.pid, old, 8), m = 0;
	bool reaped = false;
	json_t *o;

	cr_assert_gt(n, 0, "warrend %d has no warren-zygote child", D.pid);
	for (int i = 0; i < n; i++)
		cr_assert_eq(kill(old[i], SIGKILL), 0);
	/* Both: the old ones reaped, and as many new ones running (named so once exec'd). */
	for (int t = 0; t < 500 && !(reaped && m == n); t++) {
		usleep(10000);
		reaped = true;
		for (int i = 0; i < n; i++) {
			char path[64];

			snprintf(path, sizeof(path), "/proc/%d", old[i]);
			reaped = reaped && access(path, F_OK) < 0;
		}
		m = zygotes_of(D.pid, now, 8);
	}
	cr_expect(reaped, "a dead zygote was not reaped");
	cr_expect_eq(m, n, "warrend has %d zygotes, had %d", m, n);
	for (int i = 0; i < 2 * n; i++) {
		o = wait_state(create(cmd("exit 4")), "exited", 10000);
		cr_assert(o, "a create after the zygotes died did not run");
		cr_expect_eq(json_integer_value(json_object_get(o, "exit_code")), 4);
		json_decref(o);
	}
}

Test(api, list_inspect_across_loops)
{
	char ids[6][16];
	json_t *o = NULL;
	size_t found = 0, i;
	json_t *e;

	for (int k = 0; k < 6; k++)
		snprintf(ids[k], sizeof(ids[k]), "%s", create(json_object()));
	cr_assert_eq(api("GET", "/v1/sandboxes", NULL, &o), 200);
	json_array_foreach(json_object_get(o, "sandboxes"), i, e)
		for (int k = 0; k < 6; k++)
			if (strcmp(str(e, "id"), ids[k]) == 0 && strcmp(str(e, "state"), "running") == 0)
				found++;
	cr_expect_eq(found, 6, "list shows %zu of 6 running sandboxes", found);
	json_decref(o);
	/* Creates spread over the loops (an id starts with its loop's index in hex): made one
	 * after another, the loops' counts differ by one at most. */
	cr_assert_eq(api("GET", "/v1/info", NULL, &o), 200);
	int cores = (int)json_integer_value(json_object_get(o, "cores")), per[8] = { 0 };
	json_decref(o);
	cr_assert(cores >= 1 && cores <= 8);
	for (int k = 0; k < 6; k++)
		per[strtol((char[]){ ids[k][0], ids[k][1], '\0' }, NULL, 16) % 8]++;
	for (int a = 0; a < cores; a++)
		for (int b = 0; b < cores; b++)
			cr_expect(per[a] - per[b] <= 1, "loop %d holds %d sandboxes, loop %d %d", a,
				  per[a], b, per[b]);
	for (int k = 0; k < 6; k++) {
		char path[128];

		snprintf(path, sizeof(path), "/v1/sandboxes/%s", ids[k]);
		cr_expect_eq(api("GET", path, NULL, &o), 200);
		cr_expect_str_eq(str(o, "id"), ids[k]);
		cr_expect(json_is_integer(json_object_get(o, "pid")));
		json_decref(o);
		cr_expect_eq(api("DELETE", path, NULL, NULL), 200);
	}
}

Test(api, exec_streams_output_and_exit_code)
{
	const char *id = create(json_object());
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	char *out, *err;

	cr_expect_eq(run_exec(id, argv, &out, &err), 3);
	cr_expect_str_eq(out, "out\n");
	cr_expect_str_eq(err, "err\n");
	free(out);
	free(err);

	/* Exec sees the sandbox's own hostname and filesystem. */
	const char *argv2[] = { "hostname", NULL };
	cr_expect_eq(run_exec(id, argv2, &out, NULL), 0);
	cr_expect(strncmp(out, id, 12) == 0, "hostname %s, id %s", out, id);
	free(out);

	/* A working directory that does not exist: 400, saying so; nothing ran. */
	json_t *o = NULL;
	char path[64];
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/exec", id);
	cr_expect_eq(api("POST", path, json_pack("{s:[s],s:s}", "cmd", "pwd", "cwd", "/nonexistent"),
			 &o), 400);
	cr_expect(strstr(json_string_value(json_object_get(json_object_get(o, "error"), "message")),
			 "working directory"), "%s", json_dumps(o, 0));
	json_decref(o);

	/* A command that does not exist: 127, with the reason on stderr. */
	const char *argv3[] = { "no-such-command", NULL };
	cr_expect_eq(run_exec(id, argv3, NULL, &err), 127);
	cr_expect(strstr(err, "no-such-command"), "stderr: %s", err);
	free(err);
}

Test(api, exec_stdin_and_timeout)
{
	const char *id = create(json_object());
	char path[64];
	struct warren_exec_result res;
	json_t *req = json_pack("{s:[s],s:s}", "cmd", "cat", "stdin", "fed through stdin");
	struct warren_exec_ops ops = {};

	snprintf(path, sizeof(path), "%s", id);
	cr_assert(warren_exec(D.client, id, req, &ops, NULL, &res) >= 0);
	cr_expect_eq(res.exit_code, 0);
	json_decref(req);

	req = json_pack("{s:[s,s],s:i}", "cmd", "sleep", "30", "timeout_s", 1);
	cr_assert(warren_exec(D.client, id, req, &ops, NULL, &res) >= 0);
	cr_expect(res.timed_out);
	cr_expect_eq(res.exit_code, 128 + SIGKILL);
	json_decref(req);
}

Test(api, signal_reaches_the_command)
{
	const char *id = create(json_pack("{s:[s,s,s]}", "cmd", "sh", "-c",
					  "trap 'exit 42' TERM; while :; do sleep 0.05; done"));
	char path[64];
	json_t *o;

	usleep(200000); /* let sh install its trap */
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/signal", id);
	cr_expect_eq(api("POST", path, json_pack("{s:s}", "signal", "TERM"), NULL), 200);
	o = wait_state(id, "exited", 5000);
	cr_assert(o);
	cr_expect_eq(json_integer_value(json_object_get(o, "exit_code")), 42);
	json_decref(o);
	cr_expect_eq(api("POST", path, json_pack("{s:s}", "signal", "BOGUS"), &o), 400);
	json_decref(o);
	/* Exited sandboxes take no signals and no execs. */
	cr_expect_eq(api("POST", path, json_pack("{s:s}", "signal", "TERM"), &o), 409);
	cr_expect_str_eq(err_code(o), "conflict");
	json_decref(o);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/exec", id);
	cr_expect_eq(api("POST", path, json_pack("{s:[s]}", "cmd", "true"), &o), 409);
	json_decref(o);
}

Test(api, bad_requests_get_clear_errors)
{
	json_t *o = NULL;

	cr_expect_eq(api("GET", "/v1/sandboxes/0000000000ff", NULL, &o), 404);
	cr_expect_str_eq(err_code(o), "not_found");
	json_decref(o);
	cr_expect_eq(api("GET", "/v1/nothing", NULL, &o), 404);
	json_decref(o);
	cr_expect_eq(api("PUT", "/v1/info", NULL, &o), 405);
	cr_expect_str_eq(err_code(o), "method_not_allowed");
	json_decref(o);
	cr_expect_eq(api("POST", "/v1/sandboxes", json_pack("{s:s}", "image", "nope"), &o), 404);
	cr_expect(strstr(str(json_object_get(o, "error"), "message"), "nope"));
	json_decref(o);
	cr_expect_eq(api("POST", "/v1/sandboxes", json_pack("{s:i}", "cmd", 3), &o), 400);
	cr_expect(strstr(str(json_object_get(o, "error"), "message"), "cmd"));
	json_decref(o);
	cr_expect_eq(api("POST", "/v1/sandboxes", json_pack("{s:b}", "bogus", 1), &o), 400);
	cr_expect(strstr(str(json_object_get(o, "error"), "message"), "bogus"));
	json_decref(o);
	cr_expect_eq(api("POST", "/v1/sandboxes",
			 json_pack("{s:{s:i}}", "limits", "memory_bytes", 12), &o), 400);
	cr_expect(strstr(str(json_object_get(o, "error"), "message"), "memory_bytes"));
	json_decref(o);
	cr_expect_eq(api("POST", "/v1/sandboxes", json_pack("{s:s}", "tier", "microvm"), &o), 503);
	json_decref(o);
	cr_expect_eq(api("POST", "/v1/sandboxes", json_pack("{s:s}", "tier", "teleport"), &o), 400);
	json_decref(o);
	/* Refused by the sandbox's own setup (its cwd is not in the image): the same answer,
	 * after the half-made sandbox is gone again. */
	cr_expect_eq(api("POST", "/v1/sandboxes", json_pack("{s:s}", "cwd", "/no/such/dir"), &o),
		     400);
	cr_expect(strstr(str(json_object_get(o, "error"), "message"), "working directory"), "%s",
		  json_dumps(o, 0));
	json_decref(o);
	cr_expect_eq(api("GET", "/v1/sandboxes", NULL, &o), 200);
	cr_expect_eq(json_array_size(json_object_get(o, "sandboxes")), 0,
		     "a refused create left a sandbox behind");
	json_decref(o);
}

Test(api, malformed_http_and_json)
{
	static const char bad_json[] =
		"POST /v1/sandboxes HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n{\"cmd\": [";
	static const char garbage[] = "\x01\x02 hello\r\n\r\n";
	char big[200];
	char *r;

	r = raw_http(bad_json, sizeof(bad_json) - 1, 2000);
	cr_expect(strncmp(r, "HTTP/1.1 400", 12) == 0, "got: %.80s", r);
	cr_expect(strstr(r, "malformed JSON"), "got: %s", r);
	free(r);
	r = raw_http(garbage, sizeof(garbage) - 1, 2000);
	cr_expect(strncmp(r, "HTTP/1.1 400", 12) == 0, "got: %.80s", r);
	free(r);
	snprintf(big, sizeof(big),
		 "POST /v1/sandboxes HTTP/1.1\r\nHost: x\r\nContent-Length: %u\r\n\r\n",
		 (2u << 20));
	r = raw_http(big, strlen(big), 2000);
	cr_expect(strncmp(r, "HTTP/1.1 413", 12) == 0, "got: %.80s", r);
	free(r);
	/* And the daemon still answers. */
	cr_expect_eq(api("GET", "/v1/info", NULL, NULL), 200);
}

Test(api, slow_and_abandoned_clients_do_not_wedge_it)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fds[50];

	strcpy(sa.sun_path, D.sock);
	/* Half-sent requests, then connections closed mid-request. */
	for (int i = 0; i < 50; i++) {
		fds[i] = socket(AF_UNIX, SOCK_STREAM, 0);
		cr_assert(connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) == 0);
		cr_assert(send(fds[i], "GET /v1/in", 10, 0) == 10);
	}
	cr_expect_eq(api("GET", "/v1/info", NULL, NULL), 200);
	for (int i = 0; i < 50; i += 2)
		close(fds[i]);
	cr_expect_eq(api("GET", "/v1/info", NULL, NULL), 200);
	for (int i = 1; i < 50; i += 2)
		close(fds[i]);
	/* An exec whose client vanishes: the command is killed, the daemon carries on. */
	const char *id = create(json_object());
	static const char body[] = "{\"cmd\":[\"sleep\",\"1000\"]}";
	char req[512];
	snprintf(req, sizeof(req),
		 "POST /v1/sandboxes/%s/exec HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s",
		 id, strlen(body), body);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	cr_assert(send(fd, req, strlen(req), 0) > 0);
	/* The exec's first bytes mean the command runs; then the client goes away. */
	char first[64];
	cr_assert(read(fd, first, sizeof(first)) > 0);
	const char *ps[] = { "sh", "-c", "cat /proc/[0-9]*/comm 2>/dev/null | grep -x sleep | wc -l", NULL };
	char *out;
	cr_expect_eq(run_exec(id, ps, &out, NULL), 0);
	cr_expect_str_eq(out, "1\n", "the exec's sleep is not running");
	free(out);
	close(fd);
	const char *argv[] = { "sh", "-c", "sleep 0.3; cat /proc/[0-9]*/comm 2>/dev/null | grep -x sleep | wc -l", NULL };
	cr_expect_eq(run_exec(id, argv, &out, NULL), 0);
	cr_expect_str_eq(out, "0\n", "the abandoned exec's sleep is still running");
	free(out);
}

Test(api, sandbox_limit_gives_429)
{
	const char *extra[] = { "--max-sandboxes", "2", NULL };
	json_t *o = NULL;

	daemon_stop();
	daemon_start_args(extra);
	create(json_object());
	create(json_object());
	cr_expect_eq(api("POST", "/v1/sandboxes", json_object(), &o), 429);
	cr_expect_str_eq(err_code(o), "too_many_sandboxes");
	json_decref(o);
}

static struct {
	char buf[256];
	size_t len;
} got;

static int collect(const char *data, size_t len, void *u)
{
	size_t n = len < sizeof(got.buf) - 1 - got.len ? len : sizeof(got.buf) - 1 - got.len;

	memcpy(got.buf + got.len, data, n);
	got.len += n;
	return 0;
}

Test(api, logs_follow_streams_until_exit)
{
	const char *id = create(cmd("for i in 1 2 3; do echo line$i; sleep 0.1; done"));

	cr_assert(warren_logs(D.client, id, true, collect, NULL) >= 0);
	cr_expect_str_eq(got.buf, "line1\nline2\nline3\n");
}

Test(api, log_cap_holds_against_yes)
{
	const char *id = create(json_pack("{s:[s],s:{s:i}}", "cmd", "yes", "limits", "log_bytes",
					  65536));
	char log[600], old[600];
	struct stat st;
	off_t total = 0;

	usleep(500000);
	snprintf(log, sizeof(log), "%s/logs/%s.log", D.dir, id);
	snprintf(old, sizeof(old), "%s/logs/%s.log.1", D.dir, id);
	if (stat(log, &st) == 0)
		total += st.st_size;
	if (stat(old, &st) == 0)
		total += st.st_size;
	cr_expect(total > 0 && total <= 65536, "log takes %lld bytes on disk", (long long)total);
	char path[64];
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", id);
	cr_expect_eq(api("DELETE", path, NULL, NULL), 200);
	cr_expect(stat(log, &st) < 0 && stat(old, &st) < 0, "delete left the log behind");
}

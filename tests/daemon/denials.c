/* SPDX-License-Identifier: Apache-2.0 */
/* The denial journal: refusals by each layer are recorded, served by GET /v1/denials and
 * `warren denials`, folded when repeated, and counted in /metrics. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

TestSuite(denials, .init = daemon_start, .fini = daemon_stop, .timeout = 60);

/* A process moved into the sandbox's cgroup connects to the API socket: what a sandbox that
 * somehow reached the socket would be. Returns what it read. */
static void connect_from_sandbox_cgroup(const char *id, char *out, size_t size)
{
	char procs[512];
	int pipefd[2];
	pid_t pid;

	snprintf(procs, sizeof(procs), "%s/%s/cgroup.procs", v2_parent(), id);
	cr_assert(pipe(pipefd) == 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = open(procs, O_WRONLY), s;
		char buf[512] = "";

		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(2);
		close(fd);
		strcpy(sa.sun_path, D.sock);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			_exit(3);
		/* warrend may refuse and close before the request is even sent: no SIGPIPE. */
		(void)!send(s, "GET /v1/sandboxes HTTP/1.1\r\n\r\n", 30, MSG_NOSIGNAL);
		ssize_t n = read(s, buf, sizeof(buf) - 1);
		(void)!write(pipefd[1], buf, n > 0 ? n : 0);
		_exit(0);
	}
	close(pipefd[1]);
	ssize_t n = read(pipefd[0], out, size - 1);
	out[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "helper failed: %d", status);
}

Test(denials, a_sandbox_cannot_drive_the_api_and_it_is_recorded)
{
	char id[16], got[512], path[128];
	json_t *o = NULL, *d;

	snprintf(id, sizeof(id), "%s", create(json_object()));
	/* Allowed: the host side drives it. */
	cr_expect_eq(api("GET", "/v1/sandboxes", NULL, NULL), 200);
	/* Refused: from inside the sandbox's cgroup. */
	connect_from_sandbox_cgroup(id, got, sizeof(got));
	cr_expect(strncmp(got, "HTTP/1.1 403", 12) == 0, "got: %s", got);

	snprintf(path, sizeof(path), "/v1/denials?sandbox=%s&limit=5", id);
	cr_assert_eq(api("GET", path, NULL, &o), 200);
	cr_assert_eq(json_array_size(json_object_get(o, "denials")), 1, "%s", json_dumps(o, 0));
	d = json_array_get(json_object_get(o, "denials"), 0);
	cr_expect_str_eq(json_string_value(json_object_get(d, "layer")), "api");
	cr_expect_str_eq(json_string_value(json_object_get(d, "sandbox")), id);
	json_decref(o);

	/* A second try within the second folds into the same record. */
	connect_from_sandbox_cgroup(id, got, sizeof(got));
	cr_assert_eq(api("GET", path, NULL, &o), 200);
	d = json_array_get(json_object_get(o, "denials"), 0);
	cr_expect_eq(json_array_size(json_object_get(o, "denials")), 1);
	cr_expect_eq(json_integer_value(json_object_get(d, "repeats")), 1);
	json_decref(o);

	/* The CLI shows it. */
	char cmd[1024], line[4096] = "";
	snprintf(cmd, sizeof(cmd), "%s/warren --socket %s denials --last 5",
		 getenv("WARREN_BUILD_DIR"), D.sock);
	FILE *f = popen(cmd, "r");
	cr_assert(f);
	size_t n = fread(line, 1, sizeof(line) - 1, f);
	line[n] = '\0';
	cr_expect_eq(pclose(f), 0);
	cr_expect(strstr(line, "LAYER") && strstr(line, id) && strstr(line, "api"), "%s", line);

	/* And /metrics counts both tries. */
	struct warren_response resp = {};
	cr_assert(warren_request(D.client, "GET", "/metrics", NULL, &resp) >= 0);
	cr_expect(strstr(resp.body, "warren_denials_total{layer=\"api\"} 2"), "%s", resp.body);
	warren_response_done(&resp);
}

Test(denials, bad_queries)
{
	json_t *o = NULL;

	cr_expect_eq(api("GET", "/v1/denials?limit=0", NULL, &o), 400);
	json_decref(o);
	cr_expect_eq(api("GET", "/v1/denials?limit=abc", NULL, &o), 400);
	json_decref(o);
	cr_expect_eq(api("GET", "/v1/denials?sandbox=000000000000", NULL, &o), 200);
	cr_expect_eq(json_array_size(json_object_get(o, "denials")), 0);
	json_decref(o);
}

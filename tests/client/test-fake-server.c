/* SPDX-License-Identifier: Apache-2.0 */
/* The client library and the `warren` binary against a scripted server on a real Unix socket:
 * requests on the wire, keep-alive, reconnects, errors, streamed exec. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake-server.h"
#include "warren.h"

#define JSON_HEAD "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
#define NDJSON_HEAD                                                                      \
	"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: " \
	"chunked\r\n\r\n"

static const char not_found[] =
	"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 89\r\n\r\n"
	"{\"error\": {\"code\": \"not_found\", \"message\": \"no sandbox 'nope': list them with GET "
	"/v1/\"}}";

static struct warren_client *client_for(const struct fake_server *s)
{
	struct warren_client *c;

	cr_assert_eq(warren_client_new(s->path, &c), 0);
	return c;
}

Test(client, request_goes_out_as_http_with_json_and_keeps_the_connection)
{
	static const struct fake_exchange script[] = {
		{ { JSON_HEAD "14\r\n\r\n{\"id\": \"00a1\"}", NULL } },
		{ { JSON_HEAD "2\r\n\r\n{}", NULL } },
	};
	struct warren_response resp;
	struct fake_server s;
	struct warren_client *c;
	json_t *body = json_pack("{s:s, s:[s,s]}", "image", "base", "cmd", "echo", "hé");

	cr_assert_eq(fake_server_start(&s, script, 2), 0);
	c = client_for(&s);
	cr_assert_eq(warren_request(c, "POST", "/v1/sandboxes", body, &resp), 0,
		     "%s", warren_error_message(c));
	cr_assert_eq(resp.status, 200);
	cr_assert_str_eq(json_string_value(json_object_get(resp.json, "id")), "00a1");
	warren_response_done(&resp);
	cr_assert_eq(warren_request(c, "GET", "/v1/info", NULL, &resp), 0, "%s",
		     warren_error_message(c));
	cr_assert(json_is_object(resp.json));
	warren_response_done(&resp);
	warren_client_free(c);
	fake_server_stop(&s);

	cr_assert_eq(s.accepts, 1, "keep-alive: one connection for both requests");
	cr_assert_eq(s.n_requests, 2);
	cr_assert(strncmp(s.requests[0], "POST /v1/sandboxes HTTP/1.1\r\n", 29) == 0, "%s",
		  s.requests[0]);
	cr_assert(strstr(s.requests[0], "\r\nContent-Type: application/json\r\n"));
	cr_assert(strstr(s.requests[0], "\r\nContent-Length: 37\r\n"), "%s", s.requests[0]);
	cr_assert_str_eq(fake_request_body(&s, 0), "{\"image\":\"base\",\"cmd\":[\"echo\",\"hé\"]}");
	cr_assert(strncmp(s.requests[1], "GET /v1/info HTTP/1.1\r\n", 23) == 0);
	cr_assert(strstr(s.requests[1], "\r\nContent-Length: 0\r\n"));
	json_decref(body);
}

Test(client, reconnects_when_the_daemon_closed_the_connection)
{
	static const struct fake_exchange script[] = {
		/* Closes without saying so (an idle timeout, a restart). */
		{ { JSON_HEAD "2\r\n\r\n{}", NULL }, .close_after = true },
		/* Says so. */
		{ { "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", NULL },
		  .close_after = true },
		{ { JSON_HEAD "2\r\n\r\n{}", NULL } },
	};
	struct warren_response resp;
	struct fake_server s;
	struct warren_client *c;

	cr_assert_eq(fake_server_start(&s, script, 3), 0);
	c = client_for(&s);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(warren_request(c, "GET", "/v1/sandboxes", NULL, &resp), 0,
			     "request %d: %s", i, warren_error_message(c));
		warren_response_done(&resp);
	}
	warren_client_free(c);
	fake_server_stop(&s);
	cr_assert_eq(s.accepts, 3);
	cr_assert_eq(s.n_requests, 3);
}

Test(client, retries_an_idempotent_request_lost_to_a_closing_connection)
{
	static const struct fake_exchange script[] = {
		{ { JSON_HEAD "2\r\n\r\n{}", NULL } },
		{ .no_answer = true },
		{ { JSON_HEAD "12\r\n\r\n{\"again\": 1}", NULL } },
	};
	struct warren_response resp;
	struct fake_server s;
	struct warren_client *c;

	cr_assert_eq(fake_server_start(&s, script, 3), 0);
	c = client_for(&s);
	cr_assert_eq(warren_request(c, "GET", "/v1/info", NULL, &resp), 0);
	warren_response_done(&resp);
	cr_assert_eq(warren_request(c, "GET", "/v1/info", NULL, &resp), 0, "%s",
		     warren_error_message(c));
	cr_assert_eq(json_integer_value(json_object_get(resp.json, "again")), 1);
	warren_response_done(&resp);
	warren_client_free(c);
	fake_server_stop(&s);
	cr_assert_eq(s.n_requests, 3);
}

Test(client, never_resends_a_create)
{
	static const struct fake_exchange script[] = {
		{ { JSON_HEAD "2\r\n\r\n{}", NULL } },
		{ .no_answer = true },
	};
	struct warren_response resp;
	struct fake_server s;
	struct warren_client *c;
	json_t *body = json_object();
	int r;

	cr_assert_eq(fake_server_start(&s, script, 2), 0);
	c = client_for(&s);
	cr_assert_eq(warren_request(c, "GET", "/v1/info", NULL, &resp), 0);
	warren_response_done(&resp);
	r = warren_request(c, "POST", "/v1/sandboxes", body, &resp);
	cr_assert_eq(r, -ECONNRESET, "got %d (%s)", r, warren_error_message(c));
	cr_assert(strstr(warren_error_message(c), "closed the connection"), "%s",
		  warren_error_message(c));
	warren_client_free(c);
	fake_server_stop(&s);
	cr_assert_eq(s.n_requests, 2, "the POST went out once");
	json_decref(body);
}

Test(client, daemon_errors_become_errno_and_message)
{
	static const struct fake_exchange script[] = { { { not_found, NULL } } };
	struct warren_response resp = { .status = -1 };
	struct fake_server s;
	struct warren_client *c;

	cr_assert_eq(fake_server_start(&s, script, 1), 0);
	c = client_for(&s);
	cr_assert_eq(warren_request(c, "GET", "/v1/sandboxes/nope", NULL, &resp), -ENOENT);
	cr_assert_eq(resp.status, -1, "ret is written only on success");
	cr_assert_str_eq(warren_error_message(c), "no sandbox 'nope': list them with GET /v1/");
	cr_assert_str_eq(warren_error_code(c), "not_found");
	cr_assert_eq(warren_error_status(c), 404);
	warren_client_free(c);
	fake_server_stop(&s);
}

Test(client, missing_socket_says_what_to_do)
{
	struct warren_client *c = NULL;
	int r;

	cr_assert_eq(warren_client_new("/nonexistent/warren.sock", &c), 0);
	r = warren_client_open(c);
	cr_assert_eq(r, -ENOENT);
	cr_assert(strstr(warren_error_message(c), "is warrend running?"), "%s",
		  warren_error_message(c));
	cr_assert(strstr(warren_error_message(c), "--socket"));
	warren_client_free(c);
	cr_assert_eq(warren_connect("/nonexistent/warren.sock", &c), -ENOENT);
}

Test(client, default_socket_honours_the_environment)
{
	unsetenv("WARREN_SOCKET");
	cr_assert_str_eq(warren_default_socket(), "/run/warren/warren.sock");
	setenv("WARREN_SOCKET", "/tmp/other.sock", 1);
	cr_assert_str_eq(warren_default_socket(), "/tmp/other.sock");
	unsetenv("WARREN_SOCKET");
}

struct output {
	char out[256], err[256];
	size_t out_len, err_len;
};

static int on_out(const char *d, size_t n, void *u)
{
	struct output *o = u;

	cr_assert_leq(o->out_len + n, sizeof(o->out));
	memcpy(o->out + o->out_len, d, n);
	o->out_len += n;
	return 0;
}

static int on_err(const char *d, size_t n, void *u)
{
	struct output *o = u;

	cr_assert_leq(o->err_len + n, sizeof(o->err));
	memcpy(o->err + o->err_len, d, n);
	o->err_len += n;
	return 0;
}

/* Chunks that cut lines, a base64 line and the final object in separate reads. */
static const struct fake_exchange exec_script[] = { { {
	NDJSON_HEAD "e\r\n{\"stdout\": \"ou\r\n",
	"18\r\nt\\n\"}\n{\"stderr_b64\": \"AP\r\n",
	"4\r\n8=\"}\r\n",
	"25\r\n\n{\"exit_code\": 3, \"timed_out\": false}\r\n",
	"0\r\n\r\n",
	NULL,
} } };

Test(client, exec_streams_and_decodes)
{
	static const struct warren_exec_ops ops = { .on_stdout = on_out, .on_stderr = on_err };
	struct warren_exec_result res = { .exit_code = -1 };
	struct output o = {};
	struct fake_server s;
	struct warren_client *c;
	json_t *req = json_pack("{s:[s]}", "cmd", "x");

	cr_assert_eq(fake_server_start(&s, exec_script, 1), 0);
	c = client_for(&s);
	cr_assert_eq(warren_exec(c, "abc", req, &ops, &o, &res), 0, "%s",
		     warren_error_message(c));
	cr_assert_eq(res.exit_code, 3);
	cr_assert_not(res.timed_out);
	cr_assert_eq(o.out_len, 4);
	cr_assert_eq(memcmp(o.out, "out\n", 4), 0);
	cr_assert_eq(o.err_len, 2);
	cr_assert_eq((unsigned char)o.err[0], 0x00);
	cr_assert_eq((unsigned char)o.err[1], 0xff);
	warren_client_free(c);
	fake_server_stop(&s);
	cr_assert(strncmp(s.requests[0], "POST /v1/sandboxes/abc/exec HTTP/1.1\r\n", 38) == 0);
	json_decref(req);
}

Test(client, exec_without_exit_code_is_an_error)
{
	static const struct fake_exchange script[] = { {
		{ NDJSON_HEAD "f\r\n{\"stdout\": \"x\"}\r\n", NULL },
		.close_after = true,
	} };
	static const struct warren_exec_ops ops = { .on_stdout = on_out, .on_stderr = on_err };
	struct warren_exec_result res;
	struct output o = {};
	struct fake_server s;
	struct warren_client *c;
	int r;

	cr_assert_eq(fake_server_start(&s, script, 1), 0);
	c = client_for(&s);
	r = warren_exec(c, "abc", NULL, &ops, &o, &res);
	cr_assert_eq(r, -EBADMSG, "got %d: %s", r, warren_error_message(c));
	cr_assert(strstr(warren_error_message(c), "closed mid-response"), "%s",
		  warren_error_message(c));
	warren_client_free(c);
	fake_server_stop(&s);
}

Test(client, exec_error_in_the_stream_reaches_the_caller)
{
	static const struct fake_exchange script[] = { { {
		NDJSON_HEAD "39\r\n{\"error\":{\"code\":\"internal\",\"message\":\"execve: ENOENT\"}}\n\r\n"
			    "0\r\n\r\n",
		NULL,
	} } };
	static const struct warren_exec_ops ops = { .on_stdout = on_out, .on_stderr = on_err };
	struct warren_exec_result res;
	struct output o = {};
	struct fake_server s;
	struct warren_client *c;

	cr_assert_eq(fake_server_start(&s, script, 1), 0);
	c = client_for(&s);
	cr_assert_eq(warren_exec(c, "abc", NULL, &ops, &o, &res), -EIO);
	cr_assert_str_eq(warren_error_message(c), "execve: ENOENT");
	cr_assert_str_eq(warren_error_code(c), "internal");
	warren_client_free(c);
	fake_server_stop(&s);
}

/* --- the warren binary ---------------------------------------------------------------------- */

struct run {
	int status;
	char out[4096], err[4096];
};

static void slurp(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

/* Runs the built `warren` with args, stdout and stderr captured. */
static void run_cli(struct run *r, const char *socket, const char *const *args)
{
	const char *dir = getenv("WARREN_BUILD_DIR");
	char bin[4096];
	const char *argv[32] = { "warren", "--socket", socket };
	int n = 3, out, err;
	pid_t pid;

	if (!dir)
		cr_skip_test("WARREN_BUILD_DIR is not set: run through `meson test`");
	snprintf(bin, sizeof(bin), "%s/warren", dir);
	if (access(bin, X_OK) < 0)
		cr_skip_test("%s not built", bin);
	for (; *args && n < 31; args++)
		argv[n++] = *args;
	out = memfd_create("out", MFD_CLOEXEC);
	err = memfd_create("err", MFD_CLOEXEC);
	cr_assert(out >= 0 && err >= 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		execv(bin, (char **)argv);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &r->status, 0), pid);
	cr_assert(WIFEXITED(r->status));
	r->status = WEXITSTATUS(r->status);
	slurp(out, r->out, sizeof(r->out));
	slurp(err, r->err, sizeof(r->err));
}

Test(cli, exec_passes_output_and_exit_code_through)
{
	struct fake_server s;
	struct run r;

	cr_assert_eq(fake_server_start(&s, exec_script, 1), 0);
	run_cli(&r, s.path, (const char *[]){ "exec", "-e", "A=b", "abc", "--", "sh", "-c", "x", NULL });
	fake_server_stop(&s);
	cr_assert_eq(r.status, 3, "stderr: %s", r.err);
	cr_assert_str_eq(r.out, "out\n");
	cr_assert_eq(strlen(r.err), 0, "the NUL byte comes first");
	cr_assert_eq((unsigned char)r.err[1], 0xff);
	cr_assert_str_eq(fake_request_body(&s, 0),
			 "{\"env\":{\"A\":\"b\"},\"cmd\":[\"sh\",\"-c\",\"x\"]}");
}

Test(cli, exec_timeout_exits_124)
{
	static const struct fake_exchange script[] = { { {
		NDJSON_HEAD "25\r\n{\"exit_code\": 137, \"timed_out\": true}\r\n0\r\n\r\n",
		NULL,
	} } };
	struct fake_server s;
	struct run r;

	cr_assert_eq(fake_server_start(&s, script, 1), 0);
	run_cli(&r, s.path, (const char *[]){ "exec", "-t", "1", "abc", "sleep", "9", NULL });
	fake_server_stop(&s);
	cr_assert_eq(r.status, 124, "stderr: %s", r.err);
	cr_assert(strstr(r.err, "timed out"), "%s", r.err);
	cr_assert(strstr(fake_request_body(&s, 0), "\"timeout_s\":1"));
}

Test(cli, errors_print_the_daemons_message_and_exit_1)
{
	static const struct fake_exchange script[] = { { { not_found, NULL } } };
	struct fake_server s;
	struct run r;

	cr_assert_eq(fake_server_start(&s, script, 1), 0);
	run_cli(&r, s.path, (const char *[]){ "inspect", "nope", NULL });
	fake_server_stop(&s);
	cr_assert_eq(r.status, 1);
	cr_assert_str_eq(r.err, "warren: no sandbox 'nope': list them with GET /v1/\n");
	cr_assert_str_eq(r.out, "");
}

Test(cli, no_daemon_exits_1_with_advice)
{
	struct run r;

	run_cli(&r, "/nonexistent/warren.sock", (const char *[]){ "ps", NULL });
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.err, "warren: cannot connect to /nonexistent/warren.sock"), "%s", r.err);
	cr_assert(strstr(r.err, "is warrend running?"), "%s", r.err);
}

Test(cli, ps_prints_a_table)
{
	char list[1024], resp[1200];
	struct fake_exchange script[1] = {};
	struct fake_server s;
	struct run r;
	double now = (double)time(NULL);

	snprintf(list, sizeof(list),
		 "{\"sandboxes\": [{\"id\": \"00a1b2c3d4e5\", \"image\": \"base\", "
		 "\"state\": \"running\", \"cmd\": [\"sh\", \"-c\", \"echo hi\"], \"pid\": 4242, "
		 "\"exit_code\": null, \"created_at\": %.3f}, {\"id\": \"ff\", \"image\": \"base\", "
		 "\"state\": \"exited\", \"cmd\": [], \"pid\": 0, \"exit_code\": 137, "
		 "\"created_at\": %.0f}]}",
		 now - 90.5, now - 3 * 86400 - 100);
	snprintf(resp, sizeof(resp), JSON_HEAD "%zu\r\n\r\n%s", strlen(list), list);
	script[0].pieces[0] = resp;
	cr_assert_eq(fake_server_start(&s, script, 1), 0);
	run_cli(&r, s.path, (const char *[]){ "ps", NULL });
	fake_server_stop(&s);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_assert_str_eq(r.out, "ID            IMAGE  STATE    PID   EXIT  AGE  CMD\n"
				"00a1b2c3d4e5  base   running  4242  -     1m   sh -c 'echo hi'\n"
				"ff            base   exited   -     137   3d   (idle)\n");
	cr_assert(strncmp(s.requests[0], "GET /v1/sandboxes HTTP/1.1\r\n", 28) == 0);
}

Test(cli, rm_force_ignores_missing_ids)
{
	static const struct fake_exchange script[] = {
		{ { not_found, NULL } },
		{ { JSON_HEAD "31\r\n\r\n{\"id\": \"b\", \"state\": \"removed\"}", NULL } },
	};
	struct fake_server s;
	struct run r;

	cr_assert_eq(fake_server_start(&s, script, 2), 0);
	run_cli(&r, s.path, (const char *[]){ "rm", "-f", "nope", "b", NULL });
	fake_server_stop(&s);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_assert_str_eq(r.out, "b\n");
	cr_assert(strncmp(s.requests[0], "DELETE /v1/sandboxes/nope HTTP/1.1\r\n", 36) == 0);
	cr_assert(strncmp(s.requests[1], "DELETE /v1/sandboxes/b HTTP/1.1\r\n", 33) == 0);
}

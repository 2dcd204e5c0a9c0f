/* SPDX-License-Identifier: Apache-2.0 */
/* POST /v1/sandboxes/{id}/wait over the real socket: answered with the exited sandbox, never
 * before its command has exited; many waiters; unknown ids; delete and hang-up while waiting;
 * the client library and the CLI on top. No timing is asserted: the commands are held by a
 * file the test creates (through exec), and "the daemon has read the request" is told by the
 * client socket's send queue draining (SIOCOUTQ), not by sleeping. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

TestSuite(wait, .init = daemon_start, .fini = daemon_stop, .timeout = 90);

/* Exits with 5 once /tmp/go exists, which only the test's exec creates. */
#define HELD_CMD "while [ ! -e /tmp/go ]; do sleep 0.02; done; exit 5"

static const char *str(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : "";
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static const char *create_held(void)
{
	return create(json_pack("{s:[s,s,s]}", "cmd", "sh", "-c", HELD_CMD));
}

static void release(const char *id)
{
	const char *argv[] = { "touch", "/tmp/go", NULL };
	char *err = NULL;
	int code = run_exec(id, argv, NULL, &err);

	cr_assert_eq(code, 0, "touch /tmp/go in %s: exit %d: %s", id, code, err);
	free(err);
}

/* --- a waiter on a raw connection of its own ------------------------------------------------ */

struct waiter {
	char id[32];
	int fd;
	pthread_t thread;
	atomic_bool *released; /* set by the test just before it lets the command exit */
	bool released_at_answer;
	atomic_bool answered;
	int status;            /* HTTP status, 0: no answer before the connection closed */
	json_t *body;
};

static int connect_daemon(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert(fd >= 0);
	strcpy(sa.sun_path, D.sock);
	cr_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect %s: %m", D.sock);
	return fd;
}

/* Until the daemon has read every byte we sent: the request is then in its hands. */
static void await_request_read(int fd)
{
	for (int i = 0; i < 1000; i++) {
		int queued = -1;

		cr_assert(ioctl(fd, SIOCOUTQ, &queued) == 0, "SIOCOUTQ: %m");
		if (queued == 0)
			return;
		sleep_ms(10);
	}
	cr_assert_fail("warrend did not read the wait request within 10 s");
}

/* Sends the wait request; the daemon has read it when this returns. */
static void waiter_send(struct waiter *w, const char *id)
{
	char req[256];
	int n;

	snprintf(w->id, sizeof(w->id), "%s", id);
	w->fd = connect_daemon();
	n = snprintf(req, sizeof(req),
		     "POST /v1/sandboxes/%s/wait HTTP/1.1\r\nHost: warren\r\nContent-Length: 0\r\n"
		     "Connection: close\r\n\r\n",
		     id);
	cr_assert(send(w->fd, req, n, MSG_NOSIGNAL) == n);
	await_request_read(w->fd);
}

static void *waiter_main(void *data)
{
	struct waiter *w = data;
	char buf[65536];
	size_t got = 0;
	const char *body;

	/* Connection: close: the whole answer, then EOF. */
	for (;;) {
		ssize_t n = read(w->fd, buf + got, sizeof(buf) - 1 - got);

		if (n <= 0)
			break;
		got += n;
	}
	buf[got] = '\0';
	w->released_at_answer = w->released && atomic_load(w->released);
	if (sscanf(buf, "HTTP/1.1 %d", &w->status) != 1)
		w->status = 0;
	body = strstr(buf, "\r\n\r\n");
	w->body = body ? json_loads(body + 4, 0, NULL) : NULL;
	atomic_store(&w->answered, true);
	return NULL;
}

static void waiter_start(struct waiter *w, const char *id, atomic_bool *released)
{
	w->released = released;
	waiter_send(w, id);
	cr_assert(pthread_create(&w->thread, NULL, waiter_main, w) == 0);
}

static void waiter_join(struct waiter *w)
{
	pthread_join(w->thread, NULL);
	close(w->fd);
}

static void waiter_done(struct waiter *w)
{
	json_decref(w->body);
	w->body = NULL;
}

/* --- tests ------------------------------------------------------------------------------------ */

Test(wait, an_exited_sandbox_is_answered_at_once)
{
	const char *id = create(json_pack("{s:[s,s,s]}", "cmd", "sh", "-c", "exit 7"));
	char path[128], sid[32];
	json_t *o = NULL, *sb = NULL;
	int code = -1;

	snprintf(sid, sizeof(sid), "%s", id);
	o = wait_state(sid, "exited", 10000);
	cr_assert(o, "sandbox %s never showed exited", sid);
	json_decref(o);

	snprintf(path, sizeof(path), "/v1/sandboxes/%s/wait", sid);
	cr_assert_eq(api("POST", path, NULL, &o), 200);
	cr_expect_str_eq(str(o, "id"), sid);
	cr_expect_str_eq(str(o, "state"), "exited");
	cr_expect_eq(json_integer_value(json_object_get(o, "exit_code")), 7);
	cr_expect(json_is_real(json_object_get(o, "exited_at")));
	cr_expect(json_is_null(json_object_get(o, "pid")));
	json_decref(o);

	/* {} is an empty body too; the client library's call says the same. */
	cr_expect_eq(api("POST", path, json_object(), NULL), 200);
	cr_assert(warren_wait(D.client, sid, &code, &sb) >= 0, "%s",
		  warren_error_message(D.client));
	cr_expect_eq(code, 7);
	cr_expect_str_eq(str(sb, "state"), "exited");
	json_decref(sb);
}

Test(wait, answered_only_once_the_command_has_exited)
{
	atomic_bool released = false;
	struct waiter w = {};
	char sid[32], path[128];
	json_t *o = NULL;

	snprintf(sid, sizeof(sid), "%s", create_held());
	waiter_start(&w, sid, &released);

	/* The daemon holds the request; the command is still running, and the connection can
	 * carry nothing else meanwhile, but the daemon serves the others. */
	sleep_ms(300); /* a chance for a wrong early answer to show; not a timing assertion */
	cr_expect_not(atomic_load(&w.answered), "the wait was answered before the command exited");
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", sid);
	cr_assert_eq(api("GET", path, NULL, &o), 200);
	cr_expect_str_eq(str(o, "state"), "running");
	json_decref(o);

	atomic_store(&released, true);
	release(sid);
	waiter_join(&w);
	cr_expect(w.released_at_answer, "the answer came before the command was let go");
	cr_assert_eq(w.status, 200, "status %d", w.status);
	cr_expect_str_eq(str(w.body, "id"), sid);
	cr_expect_str_eq(str(w.body, "state"), "exited");
	cr_expect_eq(json_integer_value(json_object_get(w.body, "exit_code")), 5);
	waiter_done(&w);
}

Test(wait, concurrent_waiters_all_get_the_exit)
{
	atomic_bool released = false;
	struct waiter w[4] = {};
	char sid[32];
	int code = -1;

	snprintf(sid, sizeof(sid), "%s", create_held());
	for (int i = 0; i < 4; i++)
		waiter_start(&w[i], sid, &released);
	sleep_ms(200);
	for (int i = 0; i < 4; i++)
		cr_expect_not(atomic_load(&w[i].answered), "waiter %d answered early", i);

	atomic_store(&released, true);
	release(sid);
	for (int i = 0; i < 4; i++) {
		waiter_join(&w[i]);
		cr_expect(w[i].released_at_answer, "waiter %d answered before the release", i);
		cr_expect_eq(w[i].status, 200, "waiter %d: status %d", i, w[i].status);
		cr_expect_str_eq(str(w[i].body, "state"), "exited");
		cr_expect_eq(json_integer_value(json_object_get(w[i].body, "exit_code")), 5);
		waiter_done(&w[i]);
	}
	/* A later one is answered at once, with the same. */
	cr_assert(warren_wait(D.client, sid, &code, NULL) >= 0);
	cr_expect_eq(code, 5);
}

Test(wait, unknown_ids_and_bad_requests)
{
	json_t *o = NULL;

	cr_expect_eq(api("POST", "/v1/sandboxes/0000000000ff/wait", NULL, &o), 404);
	cr_expect_str_eq(str(json_object_get(o, "error"), "code"), "not_found");
	json_decref(o);
	/* Ids of the wrong form, or of a loop that does not exist, name no sandbox either. */
	cr_expect_eq(api("POST", "/v1/sandboxes/nope/wait", NULL, NULL), 404);
	cr_expect_eq(api("POST", "/v1/sandboxes/ff0000000000/wait", NULL, NULL), 404);
	cr_expect_eq(warren_wait(D.client, "0000000000ff", NULL, NULL), -ENOENT);
	cr_expect_eq(warren_error_status(D.client), 404);

	char sid[32], path[128];

	snprintf(sid, sizeof(sid), "%s", create(json_object()));
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/wait", sid);
	cr_expect_eq(api("GET", path, NULL, NULL), 405);
	cr_expect_eq(api("POST", path, json_pack("{s:i}", "timeout_s", 1), &o), 400);
	cr_expect(strstr(str(json_object_get(o, "error"), "message"), "no fields"), "%s",
		  str(json_object_get(o, "error"), "message"));
	json_decref(o);
	cr_expect_eq(api("POST", path, json_pack("[]"), NULL), 400);

	/* A removed sandbox is unknown. */
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", sid);
	cr_expect_eq(api("DELETE", path, NULL, NULL), 200);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/wait", sid);
	cr_expect_eq(api("POST", path, NULL, NULL), 404);
}

Test(wait, delete_while_waiting_answers_with_the_kill)
{
	struct waiter w[2] = {};
	char sid[32], path[128];
	json_t *o = NULL;

	/* An idle sandbox: only the delete ends it. */
	snprintf(sid, sizeof(sid), "%s", create(json_object()));
	for (int i = 0; i < 2; i++)
		waiter_start(&w[i], sid, NULL);
	sleep_ms(200); /* the request has been read; let it reach the sandbox's loop */
	for (int i = 0; i < 2; i++)
		cr_expect_not(atomic_load(&w[i].answered), "waiter %d answered early", i);

	snprintf(path, sizeof(path), "/v1/sandboxes/%s", sid);
	cr_assert_eq(api("DELETE", path, NULL, &o), 200);
	cr_expect_str_eq(str(o, "state"), "removed");
	json_decref(o);
	for (int i = 0; i < 2; i++) {
		waiter_join(&w[i]);
		cr_expect_eq(w[i].status, 200, "waiter %d: status %d", i, w[i].status);
		cr_expect_str_eq(str(w[i].body, "id"), sid);
		cr_expect_str_eq(str(w[i].body, "state"), "exited");
		cr_expect_eq(json_integer_value(json_object_get(w[i].body, "exit_code")),
			     128 + SIGKILL);
		waiter_done(&w[i]);
	}
	cr_expect_eq(api("GET", path, NULL, NULL), 404);
}

/* The daemon's connected sockets: its Unix stream sockets other than the listening one show
 * as "socket:[...]" like every socket, so count them all; the test changes only its own. */
static int daemon_sockets(void)
{
	char dir[64], link[384], target[128];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", D.pid);
	d = opendir(dir);
	cr_assert(d);
	while ((e = readdir(d))) {
		ssize_t k;

		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		k = readlink(link, target, sizeof(target) - 1);
		if (k > 0) {
			target[k] = '\0';
			n += strncmp(target, "socket:", 7) == 0;
		}
	}
	closedir(d);
	return n;
}

static bool sockets_become(int want)
{
	for (int i = 0; i < 500; i++) {
		if (daemon_sockets() == want)
			return true;
		sleep_ms(10);
	}
	return false;
}

Test(wait, a_waiter_that_hangs_up_is_dropped)
{
	struct waiter w = {};
	char sid[32];
	int base, code = -1;

	snprintf(sid, sizeof(sid), "%s", create_held());
	/* The fewest seen: the namespace pool's thread opens a socket now and then for a moment. */
	base = daemon_sockets();
	for (int i = 0; i < 10; i++, sleep_ms(10))
		base = MIN(base, daemon_sockets());
	waiter_send(&w, sid);
	cr_assert(sockets_become(base + 1), "warrend has %d sockets, want %d", daemon_sockets(),
		  base + 1);
	close(w.fd);
	/* The daemon notices the hang-up and lets the connection go, with no answer to send. */
	cr_expect(sockets_become(base), "the dropped waiter's connection is still open in warrend "
		  "(%d sockets, want %d)", daemon_sockets(), base);

	/* The sandbox is untouched, and still answers a waiter when it exits. */
	release(sid);
	cr_assert(warren_wait(D.client, sid, &code, NULL) >= 0, "%s",
		  warren_error_message(D.client));
	cr_expect_eq(code, 5);
}

/* Runs the CLI against the test's daemon with args (shell syntax); the first line of its
 * stdout in out, its wait status returned. */
static int cli(const char *args, char out[64])
{
	const char *b = getenv("WARREN_BUILD_DIR");
	char cmd[1024];
	FILE *f;

	cr_assert(b);
	snprintf(cmd, sizeof(cmd), "%s/warren --socket %s %s", b, D.sock, args);
	f = popen(cmd, "r");
	cr_assert(f);
	out[0] = '\0';
	(void)!fgets(out, 64, f);
	return pclose(f);
}

Test(wait, the_cli_prints_and_exits_with_the_code)
{
	char sid[32], args[64], out[64];
	json_t *o = NULL;
	int status;

	snprintf(sid, sizeof(sid), "%s", create_held());
	release(sid);
	snprintf(args, sizeof(args), "wait %s", sid);
	status = cli(args, out);
	cr_expect_str_eq(out, "5\n");
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 5, "status 0x%x", status);

	status = cli("wait 0000000000ff 2>&1", out);
	cr_expect(strstr(out, "no sandbox"), "%s", out);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status 0x%x", status);

	/* run --wait streams the log, then takes the code from the wait; --rm removes it. */
	status = cli("run --wait --rm -- sh -c 'echo hi; exit 3'", out);
	cr_expect_str_eq(out, "hi\n");
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status 0x%x", status);
	cr_assert_eq(api("GET", "/v1/sandboxes", NULL, &o), 200);
	cr_expect_eq(json_array_size(json_object_get(o, "sandboxes")), 1, "%s", json_dumps(o, 0));
	json_decref(o);
}

Test(wait, shutdown_closes_waiting_connections)
{
	struct waiter w[2] = {};
	char sid[32];

	snprintf(sid, sizeof(sid), "%s", create(json_object()));
	for (int i = 0; i < 2; i++)
		waiter_start(&w[i], sid, NULL);
	sleep_ms(200);
	/* SIGTERM: warrend closes every connection, then removes the sandboxes, and exits 0
	 * (asserted by daemon_stop, with its cgroups gone; under ASan, with nothing leaked). */
	daemon_stop();
	for (int i = 0; i < 2; i++) {
		waiter_join(&w[i]);
		cr_expect(atomic_load(&w[i].answered));
		cr_expect_eq(w[i].status, 0, "waiter %d got an answer (%d) instead of a close", i,
			     w[i].status);
		waiter_done(&w[i]);
	}
}

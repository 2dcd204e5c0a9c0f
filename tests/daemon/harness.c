/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "procfs.h"

struct test_daemon D = { .pid = -1 };

static const char *build_dir(void)
{
	const char *b = getenv("WARREN_BUILD_DIR");

	cr_assert(b, "WARREN_BUILD_DIR is not set: run the tests with meson test");
	return b;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

const char *v2_parent(void)
{
	static char path[512];
	struct stat st;

	/* Hybrid nodes mount cgroup2 at /sys/fs/cgroup/unified, unified ones at /sys/fs/cgroup. */
	if (stat("/sys/fs/cgroup/unified/cgroup.procs", &st) == 0)
		snprintf(path, sizeof(path), "/sys/fs/cgroup/unified/%s", D.cgname);
	else
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s", D.cgname);
	return path;
}

void daemon_start_args(const char *const *extra)
{
	char warrend[512], images[512];
	const char *argv[40];
	int n = 0;

	if (geteuid() != 0)
		cr_skip_test("needs root: warrend makes namespaces, cgroups and mounts");
	snprintf(warrend, sizeof(warrend), "%s/warrend", build_dir());
	snprintf(images, sizeof(images), "%s/tests/images", build_dir());
	snprintf(D.dir, sizeof(D.dir), "/tmp/warren-test-%d", getpid());
	snprintf(D.sock, sizeof(D.sock), "%s/warren.sock", D.dir);
	snprintf(D.cgname, sizeof(D.cgname), "warren-test-%d", getpid());
	mkdir(D.dir, 0711);

	argv[n++] = warrend;
	argv[n++] = "--socket";
	argv[n++] = D.sock;
	argv[n++] = "--state-dir";
	argv[n++] = D.dir;
	argv[n++] = "--images";
	argv[n++] = images;
	argv[n++] = "--cgroup-name";
	argv[n++] = D.cgname;
	argv[n++] = "--log-level";
	argv[n++] = getenv("WARREN_TEST_LOG") ? getenv("WARREN_TEST_LOG") : "warning";
	for (; extra && *extra && n < 38; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;

	D.pid = fork();
	cr_assert(D.pid >= 0);
	if (D.pid == 0) {
		/* A test that dies or times out must not leave its daemon behind. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		execv(warrend, (char **)argv);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		int status;

		struct warren_response resp = {};

		/* Ready when it answers: a socket left by a killed daemon may still accept a
		 * moment (its io_uring is torn down asynchronously) without answering. */
		if (access(D.sock, F_OK) == 0 && warren_connect(D.sock, &D.client) == 0) {
			if (warren_request(D.client, "GET", "/v1/info", NULL, &resp) >= 0) {
				warren_response_done(&resp);
				return;
			}
			D.client = warren_client_free(D.client);
		}
		if (waitpid(D.pid, &status, WNOHANG) == D.pid) {
			D.pid = -1;
			cr_assert_fail("warrend exited during start-up (status %d)", status);
		}
		sleep_ms(10);
	}
	cr_assert_fail("warrend did not open %s within 5 s", D.sock);
}

void daemon_start(void)
{
	daemon_start_args(NULL);
}

void daemon_stop(void)
{
	int status = 0;
	struct stat st;
	char cmd[600];

	D.client = warren_client_free(D.client);
	if (D.pid <= 0)
		return;
	kill(D.pid, SIGTERM);
	for (int i = 0; i < 1000 && waitpid(D.pid, &status, WNOHANG) == 0; i++)
		sleep_ms(10);
	if (waitpid(D.pid, &status, WNOHANG) == 0) {
		kill(D.pid, SIGKILL);
		waitpid(D.pid, &status, 0);
		D.pid = -1;
		cr_assert_fail("warrend did not stop within 10 s of SIGTERM");
	}
	D.pid = -1;
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "warrend exited uncleanly (status 0x%x)", status);
	cr_expect(stat(v2_parent(), &st) < 0, "warrend left %s behind", v2_parent());
	/* And its v1 parents on a hybrid node, with the directories it kept for reuse. */
	for (int i = 0; i < 3; i++) {
		static const char *const v1[] = { "memory", "pids", "cpu" };
		char p[600];

		snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/%s", v1[i], D.cgname);
		cr_expect(stat(p, &st) < 0, "warrend left %s behind", p);
	}
	/* Its image mounts and the tmpfs of its exec sockets (docs/architecture.md) go with it. */
	cr_expect_eq(count_mounts(getpid(), D.dir), 0, "warrend left mounts under %s", D.dir);
	/* Never recurse into a mount warrend left behind (the read-only image, say). */
	snprintf(cmd, sizeof(cmd),
		 "grep -o ' %s/[^ ]*' /proc/self/mountinfo | xargs -r umount -l; "
		 "rm -rf --one-file-system %s",
		 D.dir, D.dir);
	(void)!system(cmd);
}

int api(const char *method, const char *path, json_t *body, json_t **ret_json)
{
	struct warren_response resp = {};
	int r;

	r = warren_request(D.client, method, path, body, &resp);
	json_decref(body);
	if (r < 0) {
		int status = warren_error_status(D.client);

		cr_assert(status > 0, "%s %s failed without a response: %s", method, path,
			  warren_error_message(D.client));
		if (ret_json)
			*ret_json = json_pack("{s:{s:s,s:s}}", "error", "code",
					      warren_error_code(D.client), "message",
					      warren_error_message(D.client));
		return status;
	}
	if (ret_json)
		*ret_json = resp.json ? json_incref(resp.json) : NULL;
	r = resp.status;
	warren_response_done(&resp);
	return r;
}

const char *create(json_t *spec)
{
	static char id[32];
	json_t *o = NULL;
	int status = api("POST", "/v1/sandboxes", spec, &o);

	cr_assert_eq(status, 201, "create: %d %s", status, o ? json_dumps(o, 0) : "");
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(o, "id")));
	json_decref(o);
	return id;
}

struct capture {
	char *buf;
	size_t len;
};

static int capture_fn(const char *data, size_t len, void *userdata)
{
	struct capture *c = userdata;

	c->buf = realloc(c->buf, c->len + len + 1);
	memcpy(c->buf + c->len, data, len);
	c->len += len;
	c->buf[c->len] = '\0';
	return 0;
}

static struct capture cap_out, cap_err;

static int on_out(const char *d, size_t n, void *u)
{
	return capture_fn(d, n, &cap_out);
}

static int on_err(const char *d, size_t n, void *u)
{
	return capture_fn(d, n, &cap_err);
}

int run_exec(const char *id, const char *const *argv, char **out, char **err)
{
	static const struct warren_exec_ops ops = { .on_stdout = on_out, .on_stderr = on_err };
	struct warren_exec_result res;
	json_t *cmd = json_array();
	int r;

	for (; *argv; argv++)
		json_array_append_new(cmd, json_string(*argv));
	cap_out = (struct capture){ .buf = strdup("") };
	cap_err = (struct capture){ .buf = strdup("") };
	json_t *req = json_pack("{s:o}", "cmd", cmd);
	r = warren_exec(D.client, id, req, &ops, NULL, &res);
	json_decref(req);
	cr_assert(r >= 0, "exec in %s: %s", id, warren_error_message(D.client));
	if (out)
		*out = cap_out.buf;
	else
		free(cap_out.buf);
	if (err)
		*err = cap_err.buf;
	else
		free(cap_err.buf);
	return res.exit_code;
}

json_t *wait_state(const char *id, const char *state, int ms)
{
	char path[128];

	snprintf(path, sizeof(path), "/v1/sandboxes/%s", id);
	for (int t = 0; t < ms; t += 10) {
		json_t *o = NULL;

		if (api("GET", path, NULL, &o) == 200 &&
		    strcmp(json_string_value(json_object_get(o, "state")), state) == 0)
			return o;
		json_decref(o);
		sleep_ms(10);
	}
	return NULL;
}

char *raw_http(const char *request, size_t len, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char *buf = calloc(1, 65536);
	size_t got = 0;

	strcpy(sa.sun_path, D.sock);
	cr_assert(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	if (len)
		cr_assert(send(fd, request, len, MSG_NOSIGNAL) == (ssize_t)len);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, timeout_ms) <= 0)
			break;
		n = read(fd, buf + got, 65535 - got);
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	return buf;
}

pid_t sandbox_pid(const char *id)
{
	char path[96];
	json_t *o = NULL;
	pid_t pid;

	snprintf(path, sizeof(path), "/v1/sandboxes/%.32s", id);
	cr_assert_eq(api("GET", path, NULL, &o), 200);
	pid = (pid_t)json_integer_value(json_object_get(o, "pid"));
	json_decref(o);
	return pid;
}

int settled_fds(void)
{
	int last = -1, n;

	for (int same = 0, i = 0; same < 5 && i < 500; i++) {
		n = proc_count_fds(D.pid);
		same = n == last ? same + 1 : 0;
		last = n;
		usleep(20000);
	}
	return last;
}

int count_mounts(pid_t pid, const char *under)
{
	char path[64], line[4096];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
	f = fopen(path, "re");
	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, under) != NULL;
	fclose(f);
	return n;
}

int count_dir(const char *path, bool dirs_only)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		     (!dirs_only || e->d_type == DT_DIR);
	closedir(d);
	return n;
}

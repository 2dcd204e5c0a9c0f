/* SPDX-License-Identifier: Apache-2.0 */
/* container_backend.exec: a command in a running sandbox, started by the sandbox's init over its
 * exec channel, is in the same namespaces, cgroups and profile, has its own stdio, and reports
 * its exit status; the channel is out of the sandbox's reach, and what the init says over it
 * is checked. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "container.h"
#include "exec-proto.h"
#include "harness.h"
#include "syscall.h"

static void start_idle(void)
{
	ctr_setup();
	int r = ctr_start(NULL);
	cr_assert_eq(r, 0, "start idle sandbox: %s", strerror(-r));
}

TestSuite(exec, .init = start_idle, .fini = ctr_teardown, .timeout = 60);

#define PROBE(...) ((char *const[]){ "warren-probe", __VA_ARGS__, NULL })

/* What the exec'd probe sees is what the host sees for the sandbox's init. */
Test(exec, joins_the_sandbox_namespaces)
{
	static const char *ns[] = { "mnt", "pid", "net", "uts", "ipc", "user", "cgroup" };
	char *out = NULL, want[64];
	int code = ctr_exec(PROBE("ns"), NULL, &out, NULL);

	cr_assert_eq(code, 0, "%s", out);
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		snprintf(want, sizeof(want), "%s=%lu", ns[i], ctr_ns_ino(T.init.pid, ns[i]));
		cr_expect(strstr(out, want), "exec not in the sandbox's %s namespace: %s not in %s",
			  ns[i], want, out);
	}
	free(out);
}

Test(exec, same_isolation_as_the_init)
{
	char *const *checks[] = {
		PROBE("pid", "4"), PROBE("hostname", T.id), PROBE("uid", "100000"),
		PROBE("caps"),     PROBE("netdevs"),        PROBE("cgroup"),
		PROBE("seccomp"),  PROBE("masked"),
	};

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		char *out = NULL;
		int code = ctr_exec(checks[i], NULL, &out, NULL);

		cr_expect_eq(code, 0, "exec probe %s exited %d: %s", checks[i][1], code, out);
		cr_expect(ctr_probe_ok(out, checks[i][1]), "%s", out);
		free(out);
	}
}

Test(exec, stdio_and_exit_code)
{
	char *out, *err;
	int code = ctr_exec((char *const[]){ "sh", "-c", "echo out; echo err >&2; exit 3", NULL },
			    NULL, &out, &err);

	cr_assert_eq(code, 3);
	cr_assert_str_eq(out, "out\n");
	cr_assert_str_eq(err, "err\n");
	free(out), free(err);

	code = ctr_exec(PROBE("stdin"), "hello sandbox", &out, NULL);
	cr_assert_eq(code, 0, "%s", out);
	cr_assert(strncmp(out, "hello sandbox", 13) == 0, "%s", out);
	free(out);
}

Test(exec, killed_command_reports_128_plus_signal)
{
	cr_assert_eq(ctr_exec((char *const[]){ "sh", "-c", "kill -TERM $$", NULL }, NULL, NULL,
			      NULL),
		     128 + SIGTERM);
}

/* A command that does not exist fails the call with ENOENT, and nothing is left running. */
Test(exec, missing_command_is_enoent)
{
	int fds = ctr_count_fds();

	cr_assert_eq(ctr_exec((char *const[]){ "no-such-command", NULL }, NULL, NULL, NULL),
		     -ENOENT);
	cr_assert_eq(ctr_exec((char *const[]){ "/bin/no-such", NULL }, NULL, NULL, NULL), -ENOENT);
	cr_assert_eq(ctr_count_fds(), fds);
	/* only the init and the probe itself are in the sandbox */
	char *out;
	cr_assert_eq(ctr_exec(PROBE("pid", "2"), NULL, &out, NULL), 0, "%s", out);
	free(out);
}

/* The command is in the sandbox's cgroups, v2 and v1, as the host sees it; inside it sees them
 * as "/". */
Test(exec, joins_the_sandbox_cgroups)
{
	pid_t a;
	int pidfd = ctr_exec_async((char *const[]){ "sleep", "30", NULL }, &a), lines = 0, want = 1;
	char path[64], rel[128], line[512], *out = NULL;
	FILE *f;

	cr_assert_geq(pidfd, 0, "exec sleep: %s", strerror(-pidfd));
	snprintf(rel, sizeof(rel), ":/warren-test-ctr-%d/%s\n", (int)getpid(), T.id);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)a);
	f = fopen(path, "re");
	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		lines += strstr(line, rel) != NULL;
	fclose(f);
	for (int c = 0; c < _CG_V1_MAX; c++)
		want += T.cg->v1_path[c] != NULL;
	cr_expect_eq(lines, want, "command in %d of the sandbox's %d cgroups", lines, want);

	cr_assert_eq(ctr_exec((char *const[]){ "sh", "-c", "ps -o comm | grep -c sleep", NULL },
			      NULL, &out, NULL),
		     0);
	cr_expect_str_eq(out, "1\n");
	free(out);
	cr_assert_eq(ctr_exec(PROBE("cgroup"), NULL, &out, NULL), 0, "%s", out);
	free(out);
	ctr_exec_kill(pidfd);
	cr_assert_eq(ctr_wait(pidfd, 5000), 128 + SIGKILL);
	close(pidfd);
}

/* How many sleeps the sandbox runs, once that number is want (or after a second). */
static char *sleeps_settle(const char *want)
{
	char *out = NULL;

	for (int i = 0; i < 100; i++) {
		free(out);
		out = NULL;
		ctr_exec((char *const[]){ "sh", "-c", "ps -o comm | grep -c sleep", NULL }, NULL,
			 &out, NULL);
		if (strcmp(out, want) == 0)
			break;
		usleep(10000);
	}
	return out;
}

/* Shutting the channel down is how the daemon kills an exec (timeout): the init kills the
 * command's process group, background children included, and still reports the kill. */
Test(exec, killing_the_exec_kills_the_command)
{
	pid_t a;
	int ch = ctr_exec_async((char *const[]){ "sh", "-c", "sleep 30 & sleep 30", NULL }, &a);
	char *out;

	cr_assert_geq(ch, 0);
	out = sleeps_settle("2\n");
	cr_assert_str_eq(out, "2\n");
	free(out);
	ctr_exec_kill(ch);
	cr_assert_eq(ctr_wait(ch, 5000), 128 + SIGKILL);
	close(ch);
	out = sleeps_settle("0\n");
	cr_assert_str_eq(out, "0\n", "the command or its background child survived");
	free(out);
}

/* A client that goes away closes the channel: the command must not run on unseen. */
Test(exec, closing_the_channel_kills_the_command)
{
	pid_t a;
	int ch = ctr_exec_async((char *const[]){ "sleep", "30", NULL }, &a), pidfd;
	struct pollfd p;

	cr_assert_geq(ch, 0);
	cr_assert_gt(a, 0, "no PID event");
	pidfd = sys_pidfd_open(a, 0);
	cr_assert_geq(pidfd, 0, "pidfd_open(%d): %s", (int)a, strerror(-pidfd));
	close(ch);
	p = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 5000), 1, "the command survived its channel");
	close(pidfd);
}

/* Execs share the sandbox's filesystem: a write by one is read by the next. */
Test(exec, execs_share_the_filesystem)
{
	char *out;

	cr_assert_eq(ctr_exec(PROBE("write", "/root/note", "shared"), NULL, NULL, NULL), 0);
	cr_assert_eq(ctr_exec(PROBE("read", "/root/note", "shared"), NULL, &out, NULL), 0, "%s",
		     out);
	free(out);
}

Test(exec, into_an_exited_sandbox_fails)
{
	sys_pidfd_send_signal(T.init.pidfd, SIGKILL, NULL, 0);
	cr_assert_eq(ctr_wait(T.init.pidfd, 5000), 128 + SIGKILL);
	/* The socket file stays until the daemon removes the sandbox; nobody listens on it. */
	int r = ctr_exec((char *const[]){ "true", NULL }, NULL, NULL, NULL);
	cr_assert_eq(r, -ECONNREFUSED, "exec into a dead sandbox: %d (%s)", r, strerror(-r));
}

Test(exec, cwd_is_honoured)
{
	char *out;

	T.exec_cwd = "/etc";
	cr_assert_eq(ctr_exec(PROBE("cwd", "/etc"), NULL, &out, NULL), 0, "%s", out);
	free(out);
	T.exec_cwd = "/no-such-dir";
	cr_assert_eq(ctr_exec(PROBE("cwd"), NULL, NULL, NULL), -ENOENT);
}

/* The PID event names the command by the kernel's word, in our pid namespace: the process is
 * the probe, in the sandbox's cgroup, and it is neither the init nor the host's. */
Test(exec, pid_event_names_the_command)
{
	char path[64], comm[32] = "";
	pid_t a;
	int ch = ctr_exec_async(PROBE("sleep", "30"), &a);
	FILE *f;

	cr_assert_geq(ch, 0);
	cr_assert_gt(a, 0);
	cr_expect_neq(a, T.init.pid);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)a);
	f = fopen(path, "re");
	cr_assert(f, "%s: %s", path, strerror(errno));
	cr_assert(fgets(comm, sizeof(comm), f));
	fclose(f);
	cr_expect_str_eq(comm, "warren-probe\n");
	close(ch);
}

/* Neither an exec nor the sandbox's command holds any descriptor but its stdio, can take the
 * init's (it is not dumpable: /proc/1/fd, pidfd_getfd), or reach the socket's host path. */
Test(exec, channel_is_out_of_the_commands_reach)
{
	char *out = NULL;
	int code = ctr_exec(PROBE("exec-channel", T.exec_path), NULL, &out, NULL);

	cr_assert_eq(code, 0, "%s", out);
	cr_assert(ctr_probe_ok(out, "exec-channel"), "%s", out);
	free(out);
	/* the same from a shell (which forks ls: "; true"), as a user would look: 0, 1, 2 */
	code = ctr_exec((char *const[]){ "sh", "-c", "ls /proc/$$/fd; true", NULL }, NULL, &out,
			NULL);
	cr_assert_eq(code, 0);
	cr_expect_str_eq(out, "0\n1\n2\n", "the exec's shell holds more than its stdio: %s", out);
	free(out);
}

/* A request as large as the API allows (argv and env up to 256 KiB each) gets through: it is
 * one message, larger than a socket's default send buffer. */
Test(exec, large_command_line_and_environment)
{
	enum { N = 4, LEN = 60000 };
	char *argv[4 + N + 1] = { "sh", "-c", "echo $# ${#BIG} ${#4}", "sh" };
	char *envp_saved[4], *env_big = malloc(LEN + 5), *out = NULL;
	int code;

	cr_assert(env_big);
	for (int i = 0; i < N; i++) {
		argv[4 + i] = malloc(LEN + 1);
		cr_assert(argv[4 + i]);
		memset(argv[4 + i], 'a' + i, LEN);
		argv[4 + i][LEN] = '\0';
	}
	memcpy(env_big, "BIG=", 4);
	memset(env_big + 4, 'e', LEN);
	env_big[4 + LEN] = '\0';
	memcpy(envp_saved, T.envp, sizeof(envp_saved));
	T.envp[2] = env_big;
	T.envp[3] = NULL;
	code = ctr_exec(argv, NULL, &out, NULL);
	memcpy(T.envp, envp_saved, sizeof(envp_saved));
	cr_assert_eq(code, 0, "%s", out);
	cr_expect_str_eq(out, "4 60000 60000\n");
	free(out);
	for (int i = 0; i < N; i++)
		free(argv[4 + i]);
	free(env_big);
}

/* Execs at the same time each get their own process and answer. */
Test(exec, many_execs_at_once)
{
	enum { N = 24 };
	int ch[N];
	pid_t pid[N];

	for (int i = 0; i < N; i++) {
		char code[8];

		snprintf(code, sizeof(code), "%d", i);
		ch[i] = ctr_exec_async((char *const[]){ "sh", "-c", "sleep 0.2; exit $0", code, NULL },
				       &pid[i]);
		cr_assert_geq(ch[i], 0, "exec %d: %s", i, strerror(-ch[i]));
	}
	for (int i = 0; i < N; i++) {
		cr_expect_eq(ctr_wait(ch[i], 10000), i, "exec %d", i);
		for (int j = 0; j < i; j++)
			cr_expect_neq(pid[i], pid[j]);
		close(ch[i]);
	}
}

TestSuite(exec_channel, .init = ctr_setup, .fini = ctr_teardown, .timeout = 60);

Test(exec_channel, sandbox_command_cannot_reach_it_either)
{
	char *log;
	int code;

	log = ctr_run(PROBE("exec-channel", T.exec_path), &code);
	cr_assert_eq(code, 0, "%s", log);
	cr_assert(ctr_probe_ok(log, "exec-channel"), "%s", log);
	free(log);
}

/* Landlock aside (it too keeps other domains out of /proc/1), the init's being non-dumpable
 * is what keeps the command, which has its uid and capabilities, out of its descriptors. */
Test(exec_channel, init_is_not_dumpable)
{
	char *log;
	int code;

	T.no_landlock = true;
	log = ctr_run(PROBE("exec-channel", T.exec_path), &code);
	cr_assert_eq(code, 0, "%s", log);
	free(log);
}

/* ---- what the daemon believes of an init's answers ------------------------------------------ */

/* One message as the daemon receives it, from a socket pair with SO_PASSCRED (so that the
 * kernel attaches our pid, as it attaches the sender's in a sandbox); fd: sent along if >= 0. */
static int decode(const void *msg, size_t len, int fd, struct exec_event *ev)
{
	int sv[2], one = 1, r;
	char data[EXEC_EVENT_DATA_MAX];
	union {
		char buf[EXEC_EVENT_CONTROL_MAX];
		struct cmsghdr align;
	} control, out = { 0 };
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	cr_assert_eq(setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
	if (fd >= 0) {
		struct cmsghdr *cm;

		mh.msg_control = out.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	cr_assert_eq(sendmsg(sv[1], &mh, 0), (ssize_t)len, "sendmsg: %s", strerror(errno));
	iov = (struct iovec){ .iov_base = data, .iov_len = sizeof(data) };
	mh = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			      .msg_controllen = sizeof(control.buf) };
	n = recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC);
	cr_assert_geq(n, 0);
	r = container_backend.exec_event(&mh, data, (size_t)n, ev);
	close(sv[0]);
	close(sv[1]);
	return r;
}

#define REPLY(t, x, y) (&(struct exec_reply){ .type = (t), .a = (x), .b = (y) })

Test(exec_event, honest_answers_decode)
{
	struct exec_event ev;

	cr_assert_eq(decode(REPLY(EXEC_REPLY_PID, 0, 0), sizeof(struct exec_reply), -1, &ev), 0);
	cr_expect_eq(ev.type, EXEC_EVENT_PID);
	cr_expect_eq(ev.pid, getpid(), "the pid is the kernel's word for the sender");
	cr_assert_eq(decode(REPLY(EXEC_REPLY_STARTED, 0, 0), sizeof(struct exec_reply), -1, &ev),
		     0);
	cr_expect_eq(ev.type, EXEC_EVENT_STARTED);
	cr_assert_eq(decode(REPLY(EXEC_REPLY_FAILED, STEP_CHDIR, ENOENT),
			    sizeof(struct exec_reply), -1, &ev), 0);
	cr_expect_eq(ev.type, EXEC_EVENT_FAILED);
	cr_expect_eq(ev.err, -ENOENT);
	cr_expect_eq(ev.failure, EXEC_FAILURE_CWD);
	cr_assert_eq(decode(REPLY(EXEC_REPLY_FAILED, STEP_EXEC, EACCES),
			    sizeof(struct exec_reply), -1, &ev), 0);
	cr_expect_eq(ev.failure, EXEC_FAILURE_COMMAND);
	cr_assert_eq(decode(REPLY(EXEC_REPLY_EXITED, 137, 0), sizeof(struct exec_reply), -1, &ev),
		     0);
	cr_expect_eq(ev.type, EXEC_EVENT_EXITED);
	cr_expect_eq(ev.exit_code, 137);
}

/* A sandbox may control its init: anything an honest one does not send is refused, and a
 * descriptor slipped into an answer is closed, not kept. */
Test(exec_event, lies_are_refused)
{
	struct exec_event ev;
	struct exec_reply padded = { .type = EXEC_REPLY_STARTED, .zero = 1 };
	char big[EXEC_EVENT_DATA_MAX + 16] = { 0 };
	int before, fd;

	memcpy(big, REPLY(EXEC_REPLY_STARTED, 0, 0), sizeof(struct exec_reply));
	cr_expect_eq(decode(REPLY(0, 0, 0), sizeof(struct exec_reply), -1, &ev), -EPROTO);
	cr_expect_eq(decode(REPLY(99, 0, 0), sizeof(struct exec_reply), -1, &ev), -EPROTO);
	cr_expect_eq(decode(REPLY(EXEC_REPLY_STARTED, 0, 0), sizeof(struct exec_reply) - 1, -1,
			    &ev), -EPROTO, "short");
	cr_expect_eq(decode(big, sizeof(big), -1, &ev), -EPROTO, "long (truncated)");
	cr_expect_eq(decode(&padded, sizeof(padded), -1, &ev), -EPROTO, "padding");
	cr_expect_eq(decode(REPLY(EXEC_REPLY_STARTED, 1, 0), sizeof(struct exec_reply), -1, &ev),
		     -EPROTO);
	cr_expect_eq(decode(REPLY(EXEC_REPLY_EXITED, 256, 0), sizeof(struct exec_reply), -1, &ev),
		     -EPROTO, "exit code above 255");
	cr_expect_eq(decode(REPLY(EXEC_REPLY_EXITED, -1, 0), sizeof(struct exec_reply), -1, &ev),
		     -EPROTO, "negative exit code");
	cr_expect_eq(decode(REPLY(EXEC_REPLY_FAILED, -1, ENOENT), sizeof(struct exec_reply), -1,
			    &ev), -EPROTO, "negative step");
	cr_expect_eq(decode(REPLY(EXEC_REPLY_FAILED, _STEP_MAX, ENOENT),
			    sizeof(struct exec_reply), -1, &ev), -EPROTO, "unknown step");
	cr_expect_eq(decode(REPLY(EXEC_REPLY_FAILED, STEP_EXEC, 0), sizeof(struct exec_reply), -1,
			    &ev), -EPROTO, "errno 0");
	cr_expect_eq(decode(REPLY(EXEC_REPLY_FAILED, STEP_EXEC, 100000),
			    sizeof(struct exec_reply), -1, &ev), -EPROTO, "errno out of range");

	before = ctr_count_fds();
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_expect_eq(decode(REPLY(EXEC_REPLY_STARTED, 0, 0), sizeof(struct exec_reply), fd, &ev),
		     -EPROTO, "an answer with a descriptor");
	close(fd);
	cr_expect_eq(ctr_count_fds(), before, "the smuggled descriptor was kept");
}

/* A PID message's pid comes only from the kernel's credentials: without them (a receiver
 * that did not ask) there is no pid to believe. */
Test(exec_event, pid_without_credentials_is_refused)
{
	struct exec_event ev;
	struct exec_reply r = { .type = EXEC_REPLY_PID, .a = 4242 };
	struct iovec iov = { .iov_base = &r, .iov_len = sizeof(r) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	cr_expect_eq(container_backend.exec_event(&mh, &r, sizeof(r), &ev), -EPROTO);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* container_backend.exec: a command in a running sandbox joins the same namespaces, cgroups and
 * profile, has its own stdio, and reports its exit status. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
	cr_assert_eq(ctr_wait(pidfd, 5000), 128 + SIGKILL);
	close(pidfd);
}

/* The exec's pidfd is the command itself: killing it leaves nothing behind in the sandbox. */
Test(exec, killing_the_exec_kills_the_command)
{
	pid_t a;
	int pidfd = ctr_exec_async((char *const[]){ "sleep", "30", NULL }, &a);
	char *out = NULL;

	cr_assert_geq(pidfd, 0);
	sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
	cr_assert_eq(ctr_wait(pidfd, 5000), 128 + SIGKILL);
	close(pidfd);
	for (int i = 0; i < 100; i++) {
		free(out);
		out = NULL;
		ctr_exec((char *const[]){ "sh", "-c", "ps -o comm | grep -c sleep", NULL }, NULL,
			 &out, NULL);
		if (strcmp(out, "0\n") == 0)
			break;
		usleep(10000);
	}
	cr_assert_str_eq(out, "0\n", "the command survived");
	free(out);
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
	int r = ctr_exec((char *const[]){ "true", NULL }, NULL, NULL, NULL);
	cr_assert(r == -ESRCH || r == -EINVAL, "exec into a dead sandbox: %d (%s)", r,
		  strerror(-r));
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

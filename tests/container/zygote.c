/* SPDX-License-Identifier: Apache-2.0 */
/* The spawn zygote (the static warren-zygote): a sandbox cloned through it is the caller's
 * child (reaped by the caller, never by the zygote or the host's init), behaves as one cloned
 * directly (its seccomp profile travels with the request), reports a failed start the same
 * way, takes a command as large as an HTTP body, and the zygote ends when its socket closes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "syscall.h"

static pid_t zygote_pid;

static void setup(void)
{
	char path[PATH_MAX];

	ctr_setup();
	snprintf(path, sizeof(path), "%s/warren-zygote", getenv("WARREN_BUILD_DIR"));
	T.zygote_fd = container_zygote_start(path, (const char *const[]){ T.dir, NULL },
					     &zygote_pid);
	cr_assert_gt(T.zygote_fd, 0, "container_zygote_start: %s", strerror(-T.zygote_fd));
}

TestSuite(zygote, .init = setup, .fini = ctr_teardown, .timeout = 60);

/* The PPid: line of /proc/<pid>/status. */
static pid_t parent_of(pid_t pid)
{
	char path[64], line[128];
	pid_t ppid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %d", &ppid) == 1)
			break;
	fclose(f);
	return ppid;
}

Test(zygote, init_is_the_callers_child_not_the_zygotes)
{
	cr_assert_eq(ctr_start(NULL), 0);
	cr_assert_neq(T.init.pid, zygote_pid);
	cr_expect_eq(parent_of(T.init.pid), getpid());
	cr_expect_eq(parent_of(zygote_pid), getpid());
	/* Ours to kill and to reap through the pidfd the zygote passed back. */
	cr_assert_eq(sys_pidfd_send_signal(T.init.pidfd, SIGKILL, NULL, 0), 0);
	cr_expect_eq(ctr_wait(T.init.pidfd, 10000), 128 + SIGKILL);
}

Test(zygote, command_and_exit_code_come_through)
{
	int code;
	char *out = ctr_run((char *const[]){ "sh", "-c", "echo \"$0 $1\"; exit 7", "a b", "c",
					      NULL },
			    &code);

	cr_assert_eq(code, 7, "%s", out);
	cr_assert_str_eq(out, "a b c\n");
	free(out);
}

Test(zygote, command_as_large_as_a_request_body)
{
	/* 14 arguments of 64 KiB (exec takes at most 128 KiB in one): 896 KiB in all. */
	enum { N = 14, LEN = 64 * 1024 };
	char *argv[N + 5] = { "sh", "-c", "n=0; for a; do n=$((n + ${#a})); done; echo $n", "sh" };
	char want[32];
	int code;
	char *out;

	for (int i = 0; i < N; i++) {
		argv[4 + i] = malloc(LEN + 1);
		cr_assert_not_null(argv[4 + i]);
		memset(argv[4 + i], 'x', LEN);
		argv[4 + i][LEN] = '\0';
	}
	out = ctr_run(argv, &code);
	snprintf(want, sizeof(want), "%d\n", N * LEN);
	cr_assert_eq(code, 0, "%s", out);
	cr_assert_str_eq(out, want);
	free(out);
	for (int i = 0; i < N; i++)
		free(argv[4 + i]);
}

Test(zygote, failed_start_is_reported_as_directly)
{
	T.cwd = "/no/such/dir";
	cr_assert_eq(ctr_start((char *const[]){ "true", NULL }), -ENOENT);
}

Test(zygote, exits_when_its_socket_closes)
{
	int status;

	close(T.zygote_fd);
	T.zygote_fd = 0;
	cr_assert_eq(waitpid(zygote_pid, &status, 0), zygote_pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
}

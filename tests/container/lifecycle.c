/* SPDX-License-Identifier: Apache-2.0 */
/* warren-init and the end of a sandbox: signals reach the command, orphans are reaped and
 * killed, a dead supervisor takes its sandboxes along, and a killed sandbox leaves no process
 * and no mount behind. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "syscall.h"

TestSuite(lifecycle, .init = ctr_setup, .fini = ctr_teardown, .timeout = 60);

static void wait_for_log(const char *text)
{
	static char seen[4096];

	for (int i = 0; i < 500; i++) {
		char *more = ctr_log();

		strncat(seen, more, sizeof(seen) - strlen(seen) - 1);
		free(more);
		if (strstr(seen, text))
			return;
		usleep(10000);
	}
	cr_assert_fail("'%s' never appeared in the sandbox's log: %s", text, seen);
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

Test(lifecycle, sigterm_is_forwarded_to_the_command)
{
	char *const cmd[] = {
		"sh", "-c", "trap 'exit 42' TERM; echo ready; while :; do sleep 0.1; done", NULL
	};
	int r = ctr_start(cmd);

	cr_assert_eq(r, 0, "start: %s", strerror(-r));
	wait_for_log("ready");
	cr_assert_eq(sys_pidfd_send_signal(T.init.pidfd, SIGTERM, NULL, 0), 0);
	cr_assert_eq(ctr_wait(T.init.pidfd, 5000), 42);
}

Test(lifecycle, idle_init_ends_cleanly_on_sigterm)
{
	int r = ctr_start(NULL);

	cr_assert_eq(r, 0, "start: %s", strerror(-r));
	cr_assert_eq(ctr_wait(T.init.pidfd, 200), -ETIMEDOUT, "idle init exited by itself");
	cr_assert_eq(sys_pidfd_send_signal(T.init.pidfd, SIGTERM, NULL, 0), 0);
	cr_assert_eq(ctr_wait(T.init.pidfd, 5000), 0);
}

/* When the command exits, what it left running is killed at once and init reports the
 * command's code. */
Test(lifecycle, orphans_are_killed_when_the_command_exits)
{
	double t0 = now_ms();
	int code;
	char *out = ctr_run((char *const[]){ "sh", "-c", "sleep 100 & sleep 100 & exit 3", NULL },
			    &code);

	cr_assert_eq(code, 3, "%s", out);
	cr_assert_lt(now_ms() - t0, 5000, "init waited for the orphans");
	for (int i = 0; i < 100 && cg_populated(T.cg) > 0; i++)
		usleep(10000);
	cr_assert_eq(cg_populated(T.cg), 0, "processes left in the sandbox's cgroup");
	free(out);
}

/* SIGKILL to the init ends everything: the command and an exec'd process. */
Test(lifecycle, kill_leaves_no_process_and_no_mount)
{
	pid_t a;
	int r = ctr_start((char *const[]){ "sleep", "100", NULL }), pidfd;

	cr_assert_eq(r, 0, "start: %s", strerror(-r));
	pidfd = ctr_exec_async((char *const[]){ "sleep", "100", NULL }, &a);
	cr_assert_geq(pidfd, 0, "exec: %s", strerror(-pidfd));
	cr_assert_eq(cg_populated(T.cg), 1);

	cr_assert_eq(sys_pidfd_send_signal(T.init.pidfd, SIGKILL, NULL, 0), 0);
	/* The exec'd command dies with the pid namespace: its channel closes without an exit
	 * report, which reads as killed. */
	cr_assert_eq(ctr_wait(pidfd, 5000), 128 + SIGKILL);
	close(pidfd);
	cr_assert_eq(ctr_wait(T.init.pidfd, 5000), 128 + SIGKILL);
	cr_assert_eq(cg_populated(T.cg), 0);
	cr_assert_eq(ctr_host_mounts(), 1);
}

/* A supervisor that dies (a crashed daemon) takes its sandboxes with it: PR_SET_PDEATHSIG. */
Test(lifecycle, sandbox_dies_with_its_supervisor)
{
	int p[2], r;
	pid_t init_pid = 0, helper;

	cr_assert_eq(pipe(p), 0);
	helper = fork();
	cr_assert_geq(helper, 0);
	if (helper == 0) {
		close(p[0]);
		r = ctr_start(NULL);
		pid_t pid = r == 0 ? T.init.pid : 0;
		(void)!write(p[1], &pid, sizeof(pid));
		_exit(0); /* without killing it */
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &init_pid, sizeof(init_pid)), (ssize_t)sizeof(init_pid));
	close(p[0]);
	cr_assert_gt(init_pid, 0, "the helper could not start a sandbox");
	waitpid(helper, NULL, 0);

	/* It may already be gone: then pidfd_open fails with ESRCH, which is the point. */
	int pidfd = sys_pidfd_open(init_pid, 0);
	if (pidfd >= 0) {
		struct pollfd pf = { .fd = pidfd, .events = POLLIN };
		cr_assert_eq(poll(&pf, 1, 5000), 1, "sandbox init survived its supervisor");
		close(pidfd);
	} else {
		cr_assert_eq(pidfd, -ESRCH);
	}
	for (int i = 0; i < 100 && cg_populated(T.cg) > 0; i++)
		usleep(10000);
	cr_assert_eq(cg_populated(T.cg), 0);
}

/* The init binary comes from a sealed memfd: nobody, inside or out, can change it. */
Test(lifecycle, init_binary_is_sealed)
{
	int seals = fcntl(T.init_fd, F_GET_SEALS), r;
	char *out;

	cr_assert_eq(seals & (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE),
		     F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
	cr_assert_eq(pwrite(T.init_fd, "x", 1, 0), -1);
	cr_assert_eq(errno, EPERM);

	r = ctr_start(NULL);
	cr_assert_eq(r, 0, "start: %s", strerror(-r));
	cr_assert_eq(ctr_exec((char *const[]){ "warren-probe", "write", "/proc/1/exe", "x", NULL },
			      NULL, &out, NULL),
		     1, "%s", out);
	free(out);
}

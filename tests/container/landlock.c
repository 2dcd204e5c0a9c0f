/* SPDX-License-Identifier: Apache-2.0 */
/* Landlock, both ways: a host directory that reaches a sandbox as a descriptor (runc's
 * CVE-2024-21626 leaked one as the working directory) cannot be used to open anything, through
 * the exec path and through the init's; a signal or an abstract-socket connection to another
 * Landlock domain is refused. Each refusal is shown to come from Landlock by running the same
 * probe with it turned off, where the access succeeds. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "profile.h"

#define PROBE(...) ((char *const[]){ "warren-probe", __VA_ARGS__, NULL })

static int host_dir = -1;

/* <T.dir>/host/secret, readable by anyone: only Landlock stands between the sandbox and it. */
static void setup(void)
{
	char path[256];
	int fd;

	ctr_setup();
	if (profile_landlock_abi() <= 0)
		cr_skip_test("the kernel has no Landlock (CONFIG_SECURITY_LANDLOCK, or not in lsm=)");
	snprintf(path, sizeof(path), "%s/host", T.dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/host/secret", T.dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "host-secret\n", 12), 12);
	close(fd);
	snprintf(path, sizeof(path), "%s/host", T.dir);
	host_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(host_dir, 0);
}

static void teardown(void)
{
	if (host_dir >= 0)
		close(host_dir);
	host_dir = -1;
	ctr_teardown();
}

TestSuite(landlock, .init = setup, .fini = teardown, .timeout = 60);

Test(landlock, leaked_host_dir_fd_is_refused_in_an_exec)
{
	char *out = NULL;
	int code;

	cr_assert_eq(ctr_start(NULL), 0);
	code = ctr_exec_stdin_fd(PROBE("leak-fd", "0", "secret"), host_dir, &out, NULL);
	cr_assert_eq(code, 0, "%s", out);
	cr_assert(strstr(out, "openat=EACCES fchdir+open=EACCES inside=ok"), "%s", out);
	free(out);
}

Test(landlock, without_landlock_the_leaked_fd_reads_the_host_file)
{
	char *out = NULL;
	int code;

	T.no_landlock = true;
	cr_assert_eq(ctr_start(NULL), 0);
	code = ctr_exec_stdin_fd(PROBE("leak-fd", "0", "secret"), host_dir, &out, NULL);
	cr_assert_eq(code, 1, "%s", out);
	cr_assert(strstr(out, "openat=ok fchdir+open=ok inside=ok"), "%s", out);
	free(out);
}

/* The init's domain: the leaked directory is the command's stdout (fd 1). The probe cannot
 * print there, so its exit code is the answer. */
Test(landlock, leaked_host_dir_fd_is_refused_in_the_init)
{
	int code;

	T.stdio_fd = host_dir;
	free(ctr_run(PROBE("leak-fd", "1", "secret"), &code));
	cr_assert_eq(code, 0, "the init's command could use a leaked host directory");

	T.no_landlock = true;
	free(ctr_run(PROBE("leak-fd", "1", "secret"), &code));
	cr_assert_eq(code, 1, "without Landlock the probe should have read the host file");
}

/* An exec is a Landlock domain of its own (domains pass only from parent to child): with
 * signals scoped (ABI 6), it cannot signal the init's command (pid 2 inside), while its own
 * child works. */
Test(landlock, signal_to_another_domain_is_refused)
{
	char *out = NULL;
	int code;

	if (profile_landlock_abi() < 6)
		cr_skip_test("Landlock ABI %d has no scopes (ABI 6, Linux 6.12)",
			     profile_landlock_abi());
	cr_assert_eq(ctr_start(PROBE("sleep", "60")), 0);
	code = ctr_exec(PROBE("signal", "2"), NULL, &out, NULL);
	cr_assert_eq(code, 0, "%s", out);
	cr_assert(strstr(out, "own-child=ok pid2=EPERM"), "%s", out);
	free(out);
	code = ctr_exec(PROBE("signal", "1"), NULL, &out, NULL);
	cr_assert(strstr(out, "pid1=EPERM"), "%s", out);
	free(out);
}

Test(landlock, without_landlock_the_signal_gets_through)
{
	char *out = NULL;
	int code;

	T.no_landlock = true;
	cr_assert_eq(ctr_start(PROBE("sleep", "60")), 0);
	code = ctr_exec(PROBE("signal", "2"), NULL, &out, NULL);
	cr_assert_eq(code, 1, "%s", out);
	cr_assert(strstr(out, "own-child=ok pid2=ok"), "%s", out);
	free(out);
}

/* The other way round: the sandbox's command is a domain of its own too (warren-init
 * --landlock), a sibling of each exec's, so it can neither signal an exec's process nor read
 * what only a tracer may (/proc/PID/environ). */
static char *command_looks_at_an_exec(void)
{
	static const char script[] =
		"while [ ! -s /tmp/pid ]; do sleep 0.02; done; p=$(cat /tmp/pid); "
		"kill -0 $p 2>/dev/null; echo kill=$?; "
		"cat /proc/$p/environ >/dev/null 2>&1; echo environ=$?";
	pid_t a;
	int ch, code;

	cr_assert_eq(ctr_start((char *const[]){ "sh", "-c", (char *)script, NULL }), 0);
	ch = ctr_exec_async((char *const[]){ "sh", "-c",
					     "echo $$ > /tmp/p && mv /tmp/p /tmp/pid && exec sleep 30",
					     NULL },
			    &a);
	cr_assert_geq(ch, 0, "exec: %s", strerror(-ch));
	code = ctr_wait(T.init.pidfd, 10000);
	cr_assert_eq(code, 0, "the command exited %d", code);
	close(T.init.pidfd);
	T.init.pidfd = -1;
	close(ch);
	return ctr_log();
}

Test(landlock, command_cannot_reach_an_exec)
{
	char *log;

	if (profile_landlock_abi() < 6)
		cr_skip_test("Landlock ABI %d has no scopes (ABI 6, Linux 6.12)",
			     profile_landlock_abi());
	log = command_looks_at_an_exec();
	cr_assert(strstr(log, "kill=1\nenviron=1\n"), "%s", log);
	free(log);
}

Test(landlock, without_landlock_the_command_reaches_an_exec)
{
	char *log;

	T.no_landlock = true;
	log = command_looks_at_an_exec();
	cr_assert(strstr(log, "kill=0\nenviron=0\n"), "%s", log);
	free(log);
}

static void wait_listening(void)
{
	for (int i = 0; i < 500; i++) {
		char *log = ctr_log();
		bool ok = strstr(log, "# listening") != NULL;

		free(log);
		if (ok)
			return;
		usleep(10000);
	}
	cr_assert_fail("the listener did not start");
}

Test(landlock, abstract_socket_of_another_domain_is_refused)
{
	char *out = NULL;
	int code;

	if (profile_landlock_abi() < 6)
		cr_skip_test("Landlock ABI %d has no scopes (ABI 6, Linux 6.12)",
			     profile_landlock_abi());
	cr_assert_eq(ctr_start(PROBE("abstract-listen", "warren-test")), 0);
	wait_listening();
	code = ctr_exec(PROBE("abstract-connect", "warren-test"), NULL, &out, NULL);
	cr_assert_eq(code, 0, "%s", out);
	cr_assert(strstr(out, "connect=EPERM"), "%s", out);
	free(out);
}

Test(landlock, without_landlock_the_abstract_socket_connects)
{
	char *out = NULL;
	int code;

	T.no_landlock = true;
	cr_assert_eq(ctr_start(PROBE("abstract-listen", "warren-test")), 0);
	wait_listening();
	code = ctr_exec(PROBE("abstract-connect", "warren-test"), NULL, &out, NULL);
	cr_assert_eq(code, 1, "%s", out);
	cr_assert(strstr(out, "connect=ok"), "%s", out);
	free(out);
}

/* What /v1/info will say: the plan follows the ABI. */
Test(landlock, plan_follows_the_abi)
{
	struct profile_landlock l;

	profile_landlock_plan(&l);
	cr_assert_eq(l.abi, profile_landlock_abi());
	cr_assert_eq(l.handled_fs & 0x1fff, 0x1fff);
	cr_assert_eq(l.scoped != 0, l.abi >= 6);
	cr_assert_eq(l.restrict_flags != 0, l.abi >= 7);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Refusals inside a real sandbox reach the daemon as audit records it can parse, naming the
 * refused process by its host pid: a seccomp refusal (keyctl, EPERM), and Landlock's denials of
 * a leaked host directory and of a signal to another domain. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "harness.h"
#include "profile.h"

#define PROBE(...) ((char *const[]){ "warren-probe", __VA_ARGS__, NULL })

static struct audit_reader *reader;

/* Criterion runs tests in parallel processes: one test turning audit off again would silence
 * another. The runner notes the setting before all tests and restores it after all of them. */
static int audit_was = -1;

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	struct audit_kernel_status st;

	if (audit_kernel_get(&st) == 0)
		audit_was = (int)st.enabled;
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	if (audit_was == 0)
		audit_kernel_set(AUDIT_STATUS_ENABLED, 0);
}

#define MAX_SEEN 256
static struct audit_denial seen[MAX_SEEN];
static unsigned n_seen;

static void collect(const struct audit_denial *d, void *userdata)
{
	if (n_seen < MAX_SEEN)
		seen[n_seen++] = *d;
}

static void setup(void)
{
	int r;

	ctr_setup();
	r = audit_reader_open(AUDIT_SOURCE_NETLINK, &reader);
	if (r == -EPERM)
		cr_skip_test("joining the audit multicast group needs CAP_AUDIT_READ");
	if (r == -EPROTONOSUPPORT)
		cr_skip_test("the kernel has no audit (CONFIG_AUDIT)");
	cr_assert_eq(r, 0, "audit_reader_open: %s", strerror(-r));
}

static void teardown(void)
{
	reader = audit_reader_free(reader);
	ctr_teardown();
}

/* Landlock writes records only while the kernel's audit is on: turn it on for the test (the
 * runner turns it off again after the last test if it was off). */
static void need_audit_enabled(void)
{
	struct audit_kernel_status st;
	int r = audit_kernel_get(&st);

	cr_assert_eq(r, 0, "audit_kernel_get: %s", strerror(-r));
	if (st.enabled)
		return;
	r = audit_kernel_set(AUDIT_STATUS_ENABLED, 1);
	if (r == -EPERM)
		cr_skip_test("enabling audit needs CAP_AUDIT_CONTROL");
	cr_assert_eq(r, 0, "enabling audit: %s", strerror(-r));
}

/* Reads records for up to timeout_ms until match() accepts one. */
static const struct audit_denial *wait_for(bool (*match)(const struct audit_denial *, pid_t),
					   pid_t pid, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited += 20) {
		struct pollfd p = { .fd = audit_reader_fd(reader), .events = POLLIN };

		poll(&p, 1, 20);
		cr_assert_geq(audit_reader_read(reader, collect, NULL), 0);
		audit_reader_flush(reader, 500, collect, NULL);
		for (unsigned i = 0; i < n_seen; i++)
			if (match(&seen[i], pid))
				return &seen[i];
	}
	return NULL;
}

TestSuite(audit, .init = setup, .fini = teardown, .timeout = 60);

static bool seccomp_keyctl(const struct audit_denial *d, pid_t pid)
{
	return d->layer == AUDIT_LAYER_SECCOMP && d->pid == pid &&
	       strcmp(d->syscall_name, "keyctl") == 0;
}

Test(audit, seccomp_refusal_is_recorded_with_pid_and_syscall)
{
	const struct audit_denial *d;
	pid_t pid;
	int pidfd;

	cr_assert_eq(ctr_start(NULL), 0);
	pidfd = ctr_exec_async(PROBE("syscall", "keyctl"), &pid);
	cr_assert_geq(pidfd, 0, "exec: %s", strerror(-pidfd));
	cr_assert_eq(ctr_wait(pidfd, 10000), 0);
	close(pidfd);

	d = wait_for(seccomp_keyctl, pid, 3000);
	cr_assert(d, "no seccomp record for pid %d among %u denials", (int)pid, n_seen);
	cr_expect_str_eq(d->syscall_name, "keyctl");
	cr_expect_str_eq(d->action, "errno");
	cr_expect_eq(d->arch, AUDIT_ARCH_X86_64);
	cr_expect_str_eq(d->comm, "warren-probe");
	cr_expect(strstr(d->exe, "warren-probe"), "exe=%s", d->exe);
}

/* clone3's ENOSYS is the profile's one unlogged refusal (glibc tries clone3 for every thread
 * and posix_spawn, then uses clone): the same process's keyctl is recorded, its clone3 not. */
Test(audit, nolog_refusal_writes_no_record)
{
	pid_t pid;
	int pidfd;

	cr_assert_eq(ctr_start(NULL), 0);
	pidfd = ctr_exec_async(PROBE("syscall", "clone3", "keyctl"), &pid);
	cr_assert_geq(pidfd, 0);
	cr_assert_eq(ctr_wait(pidfd, 10000), 0);
	close(pidfd);
	cr_assert(wait_for(seccomp_keyctl, pid, 3000), "no record of the logged refusal");
	for (unsigned i = 0; i < n_seen; i++)
		cr_assert(!(seen[i].pid == pid && strcmp(seen[i].syscall_name, "clone3") == 0),
			  "clone3's nolog refusal was recorded");
}

static bool landlock_read(const struct audit_denial *d, pid_t pid)
{
	return d->layer == AUDIT_LAYER_LANDLOCK && d->pid == pid &&
	       strstr(d->blockers, "fs.read_file");
}

Test(audit, landlock_denial_is_recorded_with_pid_and_path)
{
	const struct audit_denial *d;
	char path[256];
	char *out = NULL;
	int fd;

	if (profile_landlock_abi() < 7)
		cr_skip_test("Landlock ABI %d does not log (ABI 7, Linux 6.15)",
			     profile_landlock_abi());
	need_audit_enabled();
	snprintf(path, sizeof(path), "%s/host", T.dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/host/secret", T.dir);
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	snprintf(path, sizeof(path), "%s/host", T.dir);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(fd, 0);

	cr_assert_eq(ctr_start(NULL), 0);
	cr_assert_eq(ctr_exec_stdin_fd(PROBE("leak-fd", "0", "secret"), fd, &out, NULL), 0, "%s",
		     out);
	close(fd);
	free(out);

	d = wait_for(landlock_read, T.last_exec_pid, 3000);
	cr_assert(d, "no Landlock record for pid %d among %u denials", (int)T.last_exec_pid,
		  n_seen);
	cr_expect_str_eq(d->action, "denied");
	cr_expect(strstr(d->path, "secret"), "path=%s", d->path);
	cr_expect_str_eq(d->syscall_name, "openat");
	cr_expect_neq(d->domain, 0);
	/* the exec's process made its domain, so the allocation record names it */
	cr_expect_eq(d->domain_pid, T.last_exec_pid);
	cr_expect_str_eq(d->comm, "warren-probe");
}

static bool landlock_signal(const struct audit_denial *d, pid_t pid)
{
	return d->layer == AUDIT_LAYER_LANDLOCK && d->pid == pid &&
	       strcmp(d->blockers, "scope.signal") == 0;
}

Test(audit, landlock_signal_denial_names_the_target)
{
	const struct audit_denial *d;
	char *out = NULL;

	if (profile_landlock_abi() < 7)
		cr_skip_test("Landlock ABI %d does not log (ABI 7, Linux 6.15)",
			     profile_landlock_abi());
	need_audit_enabled();
	cr_assert_eq(ctr_start(PROBE("sleep", "60")), 0);
	cr_assert_eq(ctr_exec(PROBE("signal", "1"), NULL, &out, NULL), 0, "%s", out);
	free(out);
	d = wait_for(landlock_signal, T.last_exec_pid, 3000);
	cr_assert(d, "no scope.signal record for pid %d among %u denials", (int)T.last_exec_pid,
		  n_seen);
	/* pid 1 inside is the init: its host pid is the one the backend returned */
	cr_expect_eq(d->target_pid, T.init.pid);
	cr_expect_str_eq(d->target_comm, "warren-init");
}

/* SPDX-License-Identifier: Apache-2.0 */
/* container_backend.start: what a sandbox's command sees, its exit status, and that a start
 * that fails leaves nothing behind. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "syscall.h"

TestSuite(start, .init = ctr_setup, .fini = ctr_teardown, .timeout = 60);

#define PROBE(...) ((char *const[]){ "warren-probe", __VA_ARGS__, NULL })

/* Runs one probe check as the sandbox's command and asserts it passed. */
static void probe_passes(char *const *argv)
{
	int code;
	char *out = ctr_run(argv, &code);

	cr_expect(ctr_probe_ok(out, argv[1]), "probe %s failed:\n%s", argv[1], out);
	cr_expect_eq(code, 0, "probe %s exited %d:\n%s", argv[1], code, out);
	free(out);
}

Test(start, true_exits_zero)
{
	int code;
	char *out = ctr_run((char *const[]){ "true", NULL }, &code);

	cr_assert_eq(code, 0, "%s", out);
	free(out);
}

Test(start, exit_code_is_passed_through)
{
	int code;
	char *out = ctr_run((char *const[]){ "sh", "-c", "echo bye; exit 7", NULL }, &code);

	cr_assert_eq(code, 7);
	cr_assert_str_eq(out, "bye\n");
	free(out);
}

Test(start, killed_command_reports_128_plus_signal)
{
	int code;
	char *out = ctr_run((char *const[]){ "sh", "-c", "kill -9 $$", NULL }, &code);

	cr_assert_eq(code, 128 + SIGKILL, "%s", out);
	free(out);
}

Test(start, missing_command_exits_127_with_message)
{
	int code;
	char *out = ctr_run((char *const[]){ "no-such-command", NULL }, &code);

	cr_assert_eq(code, 127);
	cr_assert_str_eq(out, "warren-init: exec no-such-command: No such file or directory\n");
	free(out);
}

/* Inside, pid 1 is warren-init and no host process shows. */
Test(start, pid_namespace)
{
	probe_passes(PROBE("pid", "4"));
}

/* Outside, every namespace of the sandbox's init differs from ours. */
Test(start, namespaces_differ_from_the_host)
{
	static const char *ns[] = { "mnt", "pid", "net", "uts", "ipc", "user", "cgroup" };
	int r = ctr_start(NULL);

	cr_assert_eq(r, 0, "start: %s", strerror(-r));
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		cr_expect_neq(ctr_ns_ino(T.init.pid, ns[i]), ctr_ns_ino(getpid(), ns[i]),
			      "%s namespace shared with the host", ns[i]);
}

Test(start, hostname_is_the_id)
{
	char host[64];

	probe_passes(PROBE("hostname", T.id));
	gethostname(host, sizeof(host));
	cr_assert_str_neq(host, T.id, "the host's hostname changed");
}

Test(start, no_host_mounts_inside_and_none_left_outside)
{
	int before = ctr_host_mounts();

	probe_passes(PROBE("mounts", "/tmp/warren-ctr", "/work", "/run/warren", "/home"));
	/* only the image mount of the fixture, before and after */
	cr_assert_eq(before, 1);
	cr_assert_eq(ctr_host_mounts(), 1);
}

Test(start, root_inside_maps_to_uid_base)
{
	probe_passes(PROBE("uid", "100000"));
}

Test(start, capabilities_are_the_container_set)
{
	probe_passes(PROBE("caps", "00000000a00405fb"));
}

Test(start, only_loopback_and_it_is_up)
{
	probe_passes(PROBE("netdevs"));
	probe_passes(PROBE("loopback"));
}

Test(start, proc_paths_are_masked)
{
	probe_passes(PROBE("masked"));
}

Test(start, cgroup_namespace_is_rooted_at_the_sandbox)
{
	probe_passes(PROBE("cgroup"));
}

Test(start, minimal_dev_works)
{
	probe_passes(PROBE("devices"));
}

Test(start, env_and_cwd)
{
	probe_passes(PROBE("env", "HOME", "/root"));
	probe_passes(PROBE("cwd", "/"));
}

/* A step that fails in the child comes back as its errno, and nothing of the attempt remains:
 * no process in the cgroup, no mount, no extra fd. */
Test(start, failed_start_leaves_nothing)
{
	int fds = ctr_count_fds(), mounts = ctr_host_mounts(), r;

	T.cwd = "/no-such-dir";
	r = ctr_start((char *const[]){ "true", NULL });
	cr_assert_eq(r, -ENOENT, "start in a missing cwd: %s", strerror(-r));
	cr_assert_eq(T.init.pidfd, -1);
	cr_assert_eq(cg_populated(T.cg), 0);
	cr_assert_eq(ctr_count_fds(), fds);
	cr_assert_eq(ctr_host_mounts(), mounts);

	/* and the next start works */
	T.cwd = "/etc";
	probe_passes(PROBE("cwd", "/etc"));
}

Test(start, bad_config_is_refused_before_clone)
{
	char id[sizeof(T.id)], rootfs[sizeof(T.rootfs)];
	int r1, r2;

	strcpy(id, T.id);
	T.id[0] = '\0';
	r1 = ctr_start((char *const[]){ "true", NULL });
	strcpy(T.id, id);
	strcpy(rootfs, T.rootfs);
	strcpy(T.rootfs, "/no-such-image");
	r2 = ctr_start((char *const[]){ "true", NULL });
	strcpy(T.rootfs, rootfs);
	cr_assert_eq(r1, -EINVAL);
	cr_assert_eq(r2, -ENOENT);
	cr_assert_eq(cg_populated(T.cg), 0);
}

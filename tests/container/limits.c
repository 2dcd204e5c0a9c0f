/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup limits hold inside a sandbox: a memory hog is OOM-killed inside it, a fork bomb
 * stops at the pids limit, and the sandbox survives both. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PROBE(...) ((char *const[]){ "warren-probe", __VA_ARGS__, NULL })

static void setup_memory(void)
{
	T.limits.memory_bytes = 32 << 20;
	ctr_setup();
}

static void setup_pids(void)
{
	T.limits.pids = 32;
	ctr_setup();
}

Test(limits, memory_limit_oom_kills_inside, .init = setup_memory, .fini = ctr_teardown,
     .timeout = 60)
{
	struct cg_stats st;
	int code;
	char *out = ctr_run(PROBE("memory-bomb", "1024"), &code);

	/* The probe dies by SIGKILL, and init reports it as 128 + 9. */
	cr_assert_eq(code, 128 + SIGKILL, "memory bomb exited %d:\n%s", code, out);
	cr_assert_null(strstr(out, "# 48 MiB"), "grew past the 32 MiB limit:\n%s", out);
	cr_assert_eq(cg_read_stats(T.cg, &st), 0);
	cr_assert_geq(st.oom_kills, 1, "no OOM kill counted in the sandbox's cgroup");
	free(out);
}

/* The OOM kill stays inside: an exec into a sandbox whose command was killed by the OOM killer
 * still works, and the host (us) is untouched. */
Test(limits, oom_kill_does_not_take_the_sandbox_down, .init = setup_memory,
     .fini = ctr_teardown, .timeout = 60)
{
	char *out;
	int r = ctr_start(NULL);

	cr_assert_eq(r, 0, "start: %s", strerror(-r));
	cr_assert_eq(ctr_exec(PROBE("memory-bomb", "1024"), NULL, &out, NULL), 128 + SIGKILL, "%s",
		     out);
	free(out);
	cr_assert_eq(ctr_exec((char *const[]){ "true", NULL }, NULL, NULL, NULL), 0);
}

Test(limits, pids_limit_stops_a_fork_bomb, .init = setup_pids, .fini = ctr_teardown,
     .timeout = 60)
{
	int code, kids = -1;
	char *out = ctr_run(PROBE("fork-bomb", "5000"), &code), *p;

	cr_assert_eq(code, 0, "fork bomb was not stopped by EAGAIN:\n%s", out);
	p = strstr(out, "after ");
	cr_assert(p && sscanf(p, "after %d", &kids) == 1, "%s", out);
	/* init and the probe count too */
	cr_assert_leq(kids, 30, "%d children under a pids limit of 32", kids);
	cr_assert_geq(kids, 20, "only %d children under a pids limit of 32", kids);
	free(out);
}

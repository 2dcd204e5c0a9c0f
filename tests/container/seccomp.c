/* SPDX-License-Identifier: Apache-2.0 */
/* The seccomp profile, both ways: with it, the refused calls fail with EPERM (clone3 with
 * ENOSYS) and the harmless ones work; without it, the same probe sees them succeed, so the
 * errnos come from the profile and not from elsewhere. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "profile.h"

#define PROBE(...) ((char *const[]){ "warren-probe", __VA_ARGS__, NULL })

TestSuite(seccomp, .init = ctr_setup, .fini = ctr_teardown, .timeout = 60);

Test(seccomp, profile_refuses_with_eperm)
{
	int code;
	char *out = ctr_run(PROBE("seccomp"), &code);

	cr_assert_eq(code, 0, "%s", out);
	cr_assert(ctr_probe_ok(out, "seccomp"), "%s", out);
	free(out);
}

Test(seccomp, without_profile_the_calls_get_through)
{
	int code;
	char *out;

	T.seccomp = NULL;
	out = ctr_run(PROBE("seccomp"), &code);
	cr_assert_eq(code, 1, "%s", out);
	/* need no capability, so only the profile refused them */
	cr_assert(strstr(out, "unshare(NEWUSER)=ok"), "%s", out);
	cr_assert(strstr(out, "keyctl=ok"), "%s", out);
	cr_assert(strstr(out, "ptrace(TRACEME)=ok"), "%s", out);
	cr_assert(strstr(out, "personality(READ_IMPLIES_EXEC)=ok"), "%s", out);
	free(out);
}

/* The rules hold under the i386 syscall numbers too (the profile adds the x86 and x32 arches):
 * without that, int 0x80 would be a way around them. */
Test(seccomp, profile_covers_the_i386_table)
{
	int code;
	char *out;

	/* Without the profile first: whether the kernel runs 32-bit calls at all. */
	T.seccomp = NULL;
	out = ctr_run(PROBE("seccomp-compat"), &code);
	if (strstr(out, "unavailable"))
		cr_skip_test("the kernel runs no 32-bit code (IA32 emulation): %s", out);
	cr_assert_eq(code, 1, "without the profile, i386 keyctl should work: %s", out);
	free(out);

	/* With it: refused with EPERM, and not killed as a foreign arch. */
	T.seccomp = T.profile;
	out = ctr_run(PROBE("seccomp-compat"), &code);
	cr_assert_eq(code, 0, "%s", out);
	cr_assert(strstr(out, "keyctl=EPERM"), "%s", out);
	free(out);
}

Test(seccomp, program_is_compiled_once_and_small)
{
	struct sock_fprog *p = NULL;

	cr_assert_eq(profile_seccomp_compile(&p), 0);
	cr_assert_gt(p->len, 10);
	cr_assert_lt(p->len, 1024, "%u instructions", p->len);
	cr_assert_eq(p->len, T.profile->len);
	cr_assert_eq(memcmp(p->filter, T.profile->filter, p->len * sizeof(p->filter[0])), 0);
	profile_seccomp_free(p);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The seccomp profile, both ways: with it, the refused calls fail with EPERM (clone3 with
 * ENOSYS) and the harmless ones work; without it, the same probe sees them succeed, so the
 * errnos come from the profile and not from elsewhere. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	struct profile_seccomp *p = NULL;
	char err[PROFILE_ERROR_MAX];
	char path[PATH_MAX];
	FILE *f;
	char *text = NULL;
	size_t cap = 0, len;

	/* The file the set compiled, compiled again: the same program, byte for byte. */
	snprintf(path, sizeof(path), "%s/seccomp/container.profile", ctr_profiles_dir());
	f = fopen(path, "re");
	cr_assert(f, "%s: %s", path, strerror(errno));
	len = getdelim(&text, &cap, '\0', f);
	fclose(f);
	cr_assert_eq(profile_seccomp_parse("container", text, len, path, &p, err), 0, "%s", err);
	cr_assert_gt(p->logged.len, 10);
	cr_assert_lt(p->logged.len, 1024, "%u instructions", p->logged.len);
	cr_assert_eq(p->logged.len, T.profile->logged.len);
	cr_assert_eq(memcmp(p->logged.filter, T.profile->logged.filter,
			    p->logged.len * sizeof(p->logged.filter[0])), 0);
	/* clone3's ENOSYS is the one unlogged refusal: a program of its own */
	cr_assert_gt(p->quiet.len, 0);
	cr_assert_lt(p->quiet.len, 64, "%u instructions", p->quiet.len);
	profile_seccomp_free(p);
	free(text);
}

/* A profile file picked per sandbox changes what is refused: this one refuses uname with
 * EACCES and leaves keyctl alone, the default the other way round. */
Test(seccomp, profile_file_override_changes_what_is_refused)
{
	char dir[] = "/tmp/warren-prof-XXXXXX", path[PATH_MAX], err[PROFILE_ERROR_MAX];
	struct profile_set *set = NULL;
	const struct profile_seccomp *custom;
	int code, fd;
	char *out;
	static const char text[] = "# refuses uname only\ndefault allow\nuname errno EACCES\n";

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/seccomp", dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/seccomp/only-uname.profile", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	cr_assert_eq(profile_set_open(dir, &set, err), 0, "%s", err);
	custom = profile_seccomp_get(set, "only-uname");
	cr_assert(custom);
	/* the built-in default joins a directory that has none */
	cr_assert(profile_seccomp_get(set, "container"));

	T.seccomp = custom;
	out = ctr_run(PROBE("syscall", "uname", "keyctl"), &code);
	cr_assert(strstr(out, "uname=EACCES keyctl=ok"), "%s", out);
	free(out);

	T.seccomp = T.profile;
	out = ctr_run(PROBE("syscall", "uname", "keyctl"), &code);
	cr_assert(strstr(out, "uname=ok keyctl=EPERM"), "%s", out);
	free(out);

	profile_set_free(set);
	unlink(path);
	snprintf(path, sizeof(path), "%s/seccomp", dir);
	rmdir(path);
	rmdir(dir);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The AppArmor profile of a sandbox: generated from the template with the id in it, and valid
 * for apparmor_parser (which needs no AppArmor in the kernel with -Q). On a node without
 * AppArmor (this one), loading says so instead of pretending. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"

static const char *profiles_dir(void)
{
	static char dir[1024];
	const char *b = getenv("WARREN_BUILD_DIR");

	cr_assert(b, "WARREN_BUILD_DIR is not set: run with meson test");
	snprintf(dir, sizeof(dir), "%s/profiles", b);
	return dir;
}

static void need_parser(void)
{
	if (access("/usr/sbin/apparmor_parser", X_OK) < 0 &&
	    access("/sbin/apparmor_parser", X_OK) < 0)
		cr_skip_test("apparmor_parser is not installed (Debian package 'apparmor')");
}

Test(apparmor, generated_profile_names_the_sandbox_everywhere)
{
	char *text = NULL;

	cr_assert_eq(profile_apparmor_generate(profiles_dir(), "00ab12cd", &text), 0);
	cr_expect(strstr(text, "profile warren-00ab12cd "), "%s", text);
	cr_expect(strstr(text, "peer=warren-00ab12cd,"));
	cr_expect(strstr(text, "peer=(label=warren-00ab12cd)"));
	cr_expect_null(strstr(text, "{{id}}"));
	free(text);
}

Test(apparmor, generated_profile_passes_apparmor_parser)
{
	char err[PROFILE_ERROR_MAX];
	char *text = NULL;
	void *bin = NULL;
	size_t size = 0;

	need_parser();
	cr_assert_eq(profile_apparmor_generate(profiles_dir(), "00ab12cd", &text), 0);
	cr_assert_eq(profile_apparmor_compile(text, &bin, &size, err), 0, "%s", err);
	cr_expect_gt(size, 256, "a compiled policy of %zu bytes", size);
	free(bin);
	free(text);
}

Test(apparmor, broken_profile_is_refused_with_the_parser_message)
{
	char err[PROFILE_ERROR_MAX];

	need_parser();
	cr_assert_eq(profile_apparmor_compile("profile x {\n  bogus rule,\n}\n", NULL, NULL, err),
		     -EINVAL);
	cr_expect(strstr(err, "apparmor_parser: "), "%s", err);
	cr_expect(strstr(err, "line 2"), "%s", err);
}

Test(apparmor, ids_cannot_inject_policy)
{
	char name[64], *text = NULL;

	cr_expect_eq(profile_apparmor_name("ok-id_1.2", name, sizeof(name)), 0);
	cr_expect_str_eq(name, "warren-ok-id_1.2");
	cr_expect_eq(profile_apparmor_name("x,\n  file,", name, sizeof(name)), -EINVAL);
	cr_expect_eq(profile_apparmor_name("a b", name, sizeof(name)), -EINVAL);
	cr_expect_eq(profile_apparmor_name("", name, sizeof(name)), -EINVAL);
	cr_expect_eq(profile_apparmor_generate(NULL, "x}", &text), -EINVAL);
	cr_expect_eq(profile_apparmor_name("0123456789", name, 10), -ENAMETOOLONG);
}

/* Without the template file the built-in copy is used: the same text. */
Test(apparmor, builtin_template_matches_the_file)
{
	char *a = NULL, *b = NULL;

	cr_assert_eq(profile_apparmor_generate(profiles_dir(), "77", &a), 0);
	cr_assert_eq(profile_apparmor_generate("/nonexistent", "77", &b), 0);
	cr_expect_str_eq(a, b);
	free(a);
	free(b);
}

Test(apparmor, loading_needs_apparmor_in_the_kernel)
{
	char err[PROFILE_ERROR_MAX];

	if (profile_apparmor_available())
		cr_skip_test("this kernel has AppArmor: the load itself is covered by the priv "
			     "suite");
	cr_expect_eq(profile_apparmor_load(profiles_dir(), "00ab12cd", err), -EOPNOTSUPP);
	cr_expect(strstr(err, "does not enforce AppArmor"), "%s", err);
	cr_expect_eq(profile_apparmor_unload("00ab12cd"), -EOPNOTSUPP);
}

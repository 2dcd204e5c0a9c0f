/* SPDX-License-Identifier: Apache-2.0 */
/* The seccomp profile language: the shipped profile compiles, every malformed text gets an
 * error naming its line, "not in" compiles to exactly the right set of matches, the corpus in
 * tests/profiles/corpus runs clean, and mutated profiles never crash the parser. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "profile.h"
#include "seccomp-internal.h"
#include "slurp.h"

static const char *src_dir(void)
{
	const char *s = getenv("WARREN_SOURCE_DIR");

	cr_assert(s, "WARREN_SOURCE_DIR is not set: run with meson test");
	return s;
}

Test(profile_parse, shipped_profile_compiles)
{
	char path[1024], err[PROFILE_ERROR_MAX];
	struct profile_seccomp *p = NULL;
	size_t len;
	char *text;

	snprintf(path, sizeof(path), "%s/profiles/seccomp/container.profile", src_dir());
	text = slurp(path, &len);
	cr_assert_eq(profile_seccomp_parse("container", text, len, path, &p, err), 0, "%s", err);
	cr_expect_gt(p->n_rules, 50);
	cr_expect_gt(p->logged.len, 10);
	cr_expect_gt(p->quiet.len, 0, "clone3 is nolog");
	cr_expect_str_eq(p->name, "container");
	profile_seccomp_free(p);
	free(text);
}

Test(profile_parse, builtin_copy_is_the_shipped_file)
{
	char path[1024];
	size_t len;
	char *text;

	snprintf(path, sizeof(path), "%s/profiles/seccomp/container.profile", src_dir());
	text = slurp(path, &len);
	cr_assert_eq(len, profile_builtin_container_len);
	cr_assert_eq(memcmp(text, profile_builtin_container, len), 0);
	free(text);
}

static const struct {
	const char *text;
	const char *want; /* substring of the message, after "t:" */
} bad[] = {
	{ "default allow\nptrce errno EPERM\n", "t:2: unknown system call 'ptrce'" },
	{ "ptrace errno EPERM\n", "t:1: a rule before the 'default' line" },
	{ "", "t: no 'default' line" },
	{ "# only a comment\n\n", "t: no 'default' line" },
	{ "default allow\ndefault allow\n", "t:2: a second 'default' line (the first is line 1)" },
	{ "default allow\n\n\nptrace errno\n", "t:4: 'errno' needs a name or a number" },
	{ "default allow\nptrace errno EFOO\n", "t:2: unknown errno name 'EFOO'" },
	{ "default allow\nptrace errno 5000\n", "t:2: errno 5000 is out of range" },
	{ "default allow\nptrace errno 0\n", "t:2: errno 0 is out of range" },
	{ "default allow\nptrace allow\n", "t:2: ptrace: the action is the default one" },
	{ "default allow\nptrace explode\n", "t:2: expected an action" },
	{ "default\n", "t:1: expected an action" },
	{ "default allow extra\n", "t:1: unexpected words after the default action" },
	{ "default allow\nioctl errno EPERM if arg7 == 1\n", "t:2: expected arg0 to arg5, got 'arg7'" },
	{ "default allow\nioctl errno EPERM if arg1 & 0xff == 0x100\n", "can never equal 0x100" },
	{ "default allow\nioctl errno EPERM if arg1 & 0xff > 1\n", "masked argument can only" },
	{ "default allow\nioctl errno EPERM if arg1 & 0 == 0\n", "t:2: arg1 & 0 is always 0" },
	{ "default allow\nioctl errno EPERM if arg1 == 1 and arg1 == 2\n",
	  "t:2: ioctl: arg1 is compared twice" },
	{ "default allow\nioctl errno EPERM if arg1 == 0x1ffffffffffffffff\n",
	  "does not fit in 64 bits" },
	{ "default allow\nioctl errno EPERM if arg1 == 99999999999999999999\n",
	  "does not fit in 64 bits" },
	{ "default allow\nioctl errno EPERM if arg1 == 0x1g\n", "'0x1g' is not a number" },
	{ "default allow\nioctl errno EPERM if arg1 == 09\n", "'09' is not a number" },
	{ "default allow\nioctl errno EPERM if arg1 == 0x\n", "'0x' is not a number" },
	{ "default allow\nioctl errno EPERM if arg1 == NOPE\n", "unknown constant 'NOPE'" },
	{ "default allow\nioctl errno EPERM if arg1\n", "expected a comparison" },
	{ "default allow\nioctl errno EPERM if arg1 ==\n", "got 'end of line'" },
	{ "default allow\nioctl errno EPERM if arg1 == 1 or arg2 == 1\n", "unexpected 'or'" },
	{ "default allow\nptrace errno EPERM trailing\n", "t:2: unexpected 'trailing' after" },
	{ "default allow\nptrace errno EPERM $\n", "t:2: unexpected character '$'" },
	{ "default allow\nptrace errno EPERM \x01\n", "t:2: unexpected byte 0x01" },
	{ "default allow\nptrace errno EPERM \xff\n", "t:2: unexpected byte 0xff" },
	{ "default allow\narch x86 foo\n", "t:2: unknown architecture 'foo'" },
	{ "default allow\narch\n", "t:2: 'arch' needs at least one name" },
	{ "default allow\narch x86 x86\n", "named twice" },
	{ "default allow\narch x86\narch x32\n", "t:3: a second 'arch' line" },
	{ "default allow\npersonality errno EPERM if arg0 not in {}\n", "got '}'" },
	{ "default allow\npersonality errno EPERM if arg0 not in {1 2}\n", "expected ',' or '}'" },
	{ "default allow\npersonality errno EPERM if arg0 not {1}\n", "expected a comparison" },
	{ "default allow\npersonality errno EPERM if arg0 & 0xff not in {0x100}\n",
	  "has bits outside the mask" },
	{ "default allow\nclone3 errno ENOSYS nolog\nclone3 errno EPERM if arg0 == 1\n",
	  "t:3: clone3: rules with and without 'nolog' for one call (line 2)" },
	{ "default allow\nptrace log nolog\n", "t:2: ptrace: 'nolog' only applies to refusals" },
	{ "default allow\nioctl errno EPERM if arg0 not in {1} and arg1 not in {2}\n",
	  "only one 'not in' per rule" },
	{ "default allow\nptrace errno EPERM\nptrace errno EACCES\n",
	  "t:3: ptrace: a rule without conditions and other rules for one call (line 2)" },
	{ "default allow\n?\n", "t:2: '?' is not a system call name" },
	{ "default allow\npt?race errno EPERM\n", "is not a system call name" },
	{ "default allow\nptrace errno EPERM\nptrace errno EACCES if arg0 == 1\n",
	  "t:3: ptrace: a rule without conditions and other rules for one call (line 2)" },
	{ "default allow\nioctl errno EPERM if arg1 == 1\nioctl errno EACCES if arg1 == 1\n",
	  "t:3: ioctl: the same conditions as line 2" },
	{ "default allow\n0x10 errno EPERM\n", "t:2: expected 'default', 'arch' or a system call" },
	{ "default allow\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "
	  "errno EPERM\n", "too long for a system call name" },
	{ "default allow\nptrace errno EPERM\r\nbpf errno EPERMM\r\n", "t:3: unknown errno name" },
};

Test(profile_parse, errors_name_the_line)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct profile_seccomp *p = NULL;
		char err[PROFILE_ERROR_MAX];
		int r = profile_seccomp_parse("t", bad[i].text, strlen(bad[i].text), "t", &p, err);

		cr_expect_eq(r, -EINVAL, "%s: accepted", bad[i].text);
		cr_expect(strstr(err, bad[i].want), "%s: got \"%s\", want \"%s\"", bad[i].text, err,
			  bad[i].want);
		profile_seccomp_free(p);
	}
}

Test(profile_parse, whole_file_limits)
{
	char err[PROFILE_ERROR_MAX];
	struct profile_seccomp *p = NULL;
	size_t big = PROFILE_MAX_BYTES + 1;
	char *text = malloc(big);
	char line[2100];
	static const char nul[] = "default allow\nptrace\0 errno EPERM\n";

	memset(text, '\n', big);
	cr_expect_eq(profile_seccomp_parse("t", text, big, "t", &p, err), -EINVAL);
	cr_expect(strstr(err, "t: larger than"), "%s", err);
	free(text);

	cr_expect_eq(profile_seccomp_parse("t", nul, sizeof(nul) - 1, "t", &p, err), -EINVAL);
	cr_expect(strstr(err, "t:2: NUL byte"), "%s", err);

	memset(line, 'a', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	cr_expect_eq(profile_seccomp_parse("t", line, strlen(line), "t", &p, err), -EINVAL);
	cr_expect(strstr(err, "t:1: line longer than"), "%s", err);

	/* 33 values in one set */
	snprintf(line, sizeof(line), "default allow\npersonality errno EPERM if arg0 not in {");
	for (int i = 0; i < 33; i++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%d,", i);
	strcat(line, "}\n");
	cr_expect_eq(profile_seccomp_parse("t", line, strlen(line), "t", &p, err), -EINVAL);
	cr_expect(strstr(err, "more than 32 values"), "%s", err);
}

Test(profile_parse, optional_unknown_calls_are_skipped)
{
	static const char text[] = "default allow\n?no_such_call_in_libseccomp errno EPERM\n"
				   "?ptrace errno EPERM\n";
	struct profile_text pt;
	char err[PROFILE_ERROR_MAX];

	cr_assert_eq(profile_text_parse(text, sizeof(text) - 1, "t", &pt, err), 0, "%s", err);
	cr_expect_eq(pt.n_rules, 1);
	cr_expect_eq(pt.n_skipped, 1);
	cr_expect_str_eq(pt.rules[0].name, "ptrace");
	profile_text_done(&pt);
}

Test(profile_parse, allowlist_profiles_compile)
{
	static const char text[] = "default errno EPERM\narch native\nread allow\nwrite allow\n"
				   "exit_group allow\nclone3 errno ENOSYS nolog\n";
	struct profile_seccomp *p = NULL;
	char err[PROFILE_ERROR_MAX];

	cr_assert_eq(profile_seccomp_parse("a", text, sizeof(text) - 1, "a", &p, err), 0, "%s",
		     err);
	cr_expect_eq(p->n_rules, 4);
	cr_expect_gt(p->quiet.len, 0);
	profile_seccomp_free(p);
}

/* ---- "not in" ---- */

static bool covered(const struct profile_cube *c, int n, uint64_t v)
{
	for (int i = 0; i < n; i++)
		if ((v & c[i].mask) == c[i].value)
			return true;
	return false;
}

static bool member(const uint64_t *set, unsigned n, uint64_t mask, uint64_t v)
{
	for (unsigned i = 0; i < n; i++)
		if ((set[i] & mask) == (v & mask))
			return true;
	return false;
}

Test(profile_cover, personality_set_takes_32_rules_and_is_exact)
{
	static const uint64_t set[] = { 0, 8, 0x20000, 0x20008, 0xffffffff };
	struct profile_cube c[64];
	unsigned seed = 7;
	int n = profile_not_in_cover(0xffffffff, set, 5, c, 64);

	cr_assert_eq(n, 32, "%d rules", n);
	for (int b = 0; b < 32; b++) {
		uint64_t v = 1ULL << b;

		cr_expect_eq(covered(c, n, v), !member(set, 5, 0xffffffff, v), "0x%llx",
			     (unsigned long long)v);
		cr_expect_eq(covered(c, n, ~v & 0xffffffff), true);
	}
	for (unsigned i = 0; i < 5; i++) {
		cr_expect(!covered(c, n, set[i]));
		/* the high half is not the kernel's (personality takes an unsigned int) */
		cr_expect(!covered(c, n, set[i] | 0x500000000ULL));
	}
	for (int i = 0; i < 300000; i++) {
		uint64_t v = (uint64_t)rand_r(&seed) << 16 ^ (uint64_t)rand_r(&seed);

		v &= 0xffffffff >> (rand_r(&seed) % 32);
		cr_assert_eq(covered(c, n, v), !member(set, 5, 0xffffffff, v), "0x%llx",
			     (unsigned long long)v);
	}
}

/* Other sets take the trie: checked exhaustively over 16 bits. */
Test(profile_cover, any_set_is_covered_exactly)
{
	unsigned seed = 11;

	for (int round = 0; round < 40; round++) {
		uint64_t set[8];
		unsigned k = 1 + rand_r(&seed) % 8;
		struct profile_cube c[256];
		int n;

		for (unsigned i = 0; i < k; i++)
			set[i] = (uint64_t)rand_r(&seed) & 0xffff;
		if (round == 0)
			set[0] = 0xffff; /* all-ones in a trie set */
		n = profile_not_in_cover(0xffff, set, k, c, 256);
		cr_assert_geq(n, 0);
		cr_assert_leq((unsigned)n, k * 16);
		for (uint64_t v = 0; v <= 0xffff; v++)
			cr_assert_eq(covered(c, n, v), !member(set, k, 0xffff, v),
				     "round %d v=0x%llx", round, (unsigned long long)v);
	}
	/* subsets of a few bits without all-ones: the cycle plus one rule for all-ones */
	{
		static const uint64_t set[] = { 0, 1, 0x100, 0x101 };
		struct profile_cube c[64];
		int n = profile_not_in_cover(0xffff, set, 4, c, 64);

		cr_assert_eq(n, 14 + 2 + 1);
		for (uint64_t v = 0; v <= 0xffff; v++)
			cr_assert_eq(covered(c, n, v), !member(set, 4, 0xffff, v));
	}
	{
		uint64_t set[] = { 0x1234, 0x4321, 0xffff, 0x0f0f, 0x9999, 0x7777 };
		struct profile_cube c[4];

		cr_expect_eq(profile_not_in_cover(0xffff, set, 6, c, 4), -E2BIG);
	}
}

/* ---- the corpus and mutations ---- */

Test(profile_parse, corpus_runs_clean)
{
	char dir[1024], path[1400];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/tests/profiles/corpus", src_dir());
	d = opendir(dir);
	cr_assert(d, "no corpus at %s", dir);
	while ((e = readdir(d))) {
		struct profile_seccomp *p = NULL;
		char err[PROFILE_ERROR_MAX];
		size_t len;
		char *text;
		int r;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		text = slurp(path, &len);
		r = profile_seccomp_parse("c", text, len, e->d_name, &p, err);
		if (strncmp(e->d_name, "ok-", 3) == 0)
			cr_expect_eq(r, 0, "%s: %s", e->d_name, err);
		else if (strncmp(e->d_name, "bad-", 4) == 0) {
			cr_expect_eq(r, -EINVAL, "%s: accepted", e->d_name);
			cr_expect_eq(strncmp(err, e->d_name, strlen(e->d_name)), 0, "%s: %s",
				     e->d_name, err);
		} else
			cr_expect(r == 0 || r == -EINVAL, "%s: %d", e->d_name, r);
		profile_seccomp_free(p);
		free(text);
		n++;
	}
	closedir(d);
	cr_expect_geq(n, 8, "only %d corpus files", n);
}

/* The shipped profile, mutated: bytes flipped, lines cut, tokens swapped in. Every text gets
 * 0 or -EINVAL with a message that names the origin. Parse only for most (fast); the whole
 * compile for some. */
Test(profile_parse, mutated_profiles_never_crash, .timeout = 120)
{
	static const char *const toks[] = { " ", "\n", "#", "if", "and", "not", "in", "{", "}",
					    ",", "&", "|", "==", "<=", "arg0", "arg6", "0x",
					    "errno", "nolog", "?", "default", "arch", "\0", "\xff",
					    "99999999999999999999", "allow" };
	const size_t max = profile_builtin_container_len + 256;
	char *buf = malloc(max);
	unsigned seed = 3;

	for (int iter = 0; iter < 20000; iter++) {
		char err[PROFILE_ERROR_MAX];
		size_t len = profile_builtin_container_len;
		int edits = 1 + rand_r(&seed) % 6, r;

		memcpy(buf, profile_builtin_container, len);
		for (int k = 0; k < edits && len > 0; k++) {
			size_t at = (size_t)rand_r(&seed) % len;
			const char *t = toks[rand_r(&seed) % (sizeof(toks) / sizeof(toks[0]))];
			size_t tl = t[0] ? strlen(t) : 1;

			switch (rand_r(&seed) % 4) {
			case 0:
				buf[at] = (char)rand_r(&seed);
				break;
			case 1:
				if (len + tl <= max) {
					memmove(buf + at + tl, buf + at, len - at);
					memcpy(buf + at, t, tl);
					len += tl;
				}
				break;
			case 2:
				len = at;
				break;
			case 3: {
				size_t want = (size_t)rand_r(&seed) % 40, cut = MIN(len - at, want);

				memmove(buf + at, buf + at + cut, len - at - cut);
				len -= cut;
				break;
			}
			}
		}
		if (iter % 40 == 0) {
			struct profile_seccomp *p = NULL;

			r = profile_seccomp_parse("m", buf, len, "m", &p, err);
			profile_seccomp_free(p);
		} else {
			struct profile_text pt;

			r = profile_text_parse(buf, len, "m", &pt, err);
			if (r == 0)
				profile_text_done(&pt);
		}
		cr_assert(r == 0 || r == -EINVAL, "iteration %d: %d", iter, r);
		if (r < 0)
			cr_assert(strncmp(err, "m", 1) == 0 && strlen(err) < PROFILE_ERROR_MAX,
				  "iteration %d: '%s'", iter, err);
	}
	free(buf);
}

/* ---- sets ---- */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0, "%s", path);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

Test(profile_set, opens_a_directory_and_fails_on_a_bad_file)
{
	char dir[] = "/tmp/warren-profset-XXXXXX", sub[256], err[PROFILE_ERROR_MAX];
	struct profile_set *set = NULL;

	cr_assert(mkdtemp(dir));
	/* no seccomp/ at all: the built-in container profile */
	cr_assert_eq(profile_set_open(dir, &set, err), 0, "%s", err);
	cr_expect_eq(profile_set_count(set), 1);
	cr_expect(profile_seccomp_get(set, NULL));
	cr_expect_null(profile_seccomp_get(set, "strict"));
	set = profile_set_free(set);

	snprintf(sub, sizeof(sub), "%s/seccomp", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	write_file(sub, "strict.profile", "default allow\nuname errno EPERM\n");
	write_file(sub, "README", "not a profile\n");
	cr_assert_eq(profile_set_open(dir, &set, err), 0, "%s", err);
	cr_expect_eq(profile_set_count(set), 2);
	cr_expect_str_eq(profile_seccomp_get(set, "strict")->name, "strict");
	set = profile_set_free(set);

	write_file(sub, "broken.profile", "default allow\n\nptrce errno EPERM\n");
	cr_expect_eq(profile_set_open(dir, &set, err), -EINVAL);
	cr_expect(strstr(err, "/seccomp/broken.profile:3: unknown system call 'ptrce'"), "%s",
		  err);
	cr_expect_null(set);

	snprintf(sub, sizeof(sub), "rm -rf %s", dir);
	cr_expect_eq(system(sub), 0);
}

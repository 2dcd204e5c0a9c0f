/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup helpers that need no privileges (suite 'unit'): the v2 weight to v1 shares mapping,
 * libcgroup's error adapter and the parsers of cgroup files, fed from a temporary directory. */
#include <criterion/criterion.h>
#include <errno.h>
#include <libcgroup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-internal.h"

Test(cgroup_unit, weight_to_shares_like_crun)
{
	cr_assert_eq(cg_v1_weight_to_shares(1), 2);
	cr_assert_eq(cg_v1_weight_to_shares(10000), 262144);
	cr_assert_eq(cg_v1_weight_to_shares(100), 2 + (99 * 262142) / 9999);
	/* Monotonic: a bigger weight never gets fewer shares. */
	for (uint32_t w = 2; w <= 10000; w++)
		cr_assert_geq(cg_v1_weight_to_shares(w), cg_v1_weight_to_shares(w - 1));
}

Test(cgroup_unit, mode_strings)
{
	cr_assert_str_eq(cg_mode_to_string(CG_MODE_UNIFIED), "unified");
	cr_assert_str_eq(cg_mode_to_string(CG_MODE_HYBRID), "hybrid");
	cr_assert_null(cg_mode_to_string(_CG_MODE_MAX));
}

Test(cgroup_unit, ecg_codes_become_negative_errno)
{
	cr_assert_eq(cg_errno_from_ecg(0), 0);
	cr_assert_eq(cg_errno_from_ecg(-ENOENT), -ENOENT);
	cr_assert_eq(cg_errno_from_ecg(ECGROUPNOTEXIST), -ENOENT);
	cr_assert_eq(cg_errno_from_ecg(ECGROUPNOTMOUNTED), -ENODEV);
	cr_assert_eq(cg_errno_from_ecg(ECGROUPNOTALLOWED), -EPERM);
	cr_assert_eq(cg_errno_from_ecg(ECGINVAL), -EINVAL);
	cr_assert_eq(cg_errno_from_ecg(ECGNONEMPTY), -EBUSY);
	cr_assert_lt(cg_errno_from_ecg(ECGOTHER), 0);
	cr_assert_eq(cg_errno_from_ecg(ECGFAIL), -EIO);
}

static char dir[] = "/tmp/warren-cg-unit-XXXXXX";

static void put(const char *file, const char *content)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "we");
	cr_assert_not_null(f);
	fputs(content, f);
	fclose(f);
}

static void make_dir(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)system(cmd);
}

Test(cgroup_unit, read_numbers, .init = make_dir, .fini = remove_dir)
{
	uint64_t v;

	put("memory.max", "max\n");
	cr_assert_eq(cg_read_u64(dir, "memory.max", &v), 0);
	cr_assert_eq(v, UINT64_MAX);
	put("pids.current", "17\n");
	cr_assert_eq(cg_read_u64(dir, "pids.current", &v), 0);
	cr_assert_eq(v, 17);
	put("garbage", "12abc\n");
	cr_assert_eq(cg_read_u64(dir, "garbage", &v), -EINVAL);
	put("empty", "");
	cr_assert_eq(cg_read_u64(dir, "empty", &v), -EINVAL);
	cr_assert_eq(cg_read_u64(dir, "missing", &v), -ENOENT);
}

Test(cgroup_unit, read_keyed_files, .init = make_dir, .fini = remove_dir)
{
	uint64_t v;

	put("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
	cr_assert_eq(cg_read_key_u64(dir, "memory.oom_control", "oom_kill", &v), 0);
	cr_assert_eq(v, 3);
	cr_assert_eq(cg_read_key_u64(dir, "memory.oom_control", "oom_kill_disable", &v), 0);
	cr_assert_eq(v, 0);
	/* "oom" is a prefix of keys but no key itself. */
	cr_assert_eq(cg_read_key_u64(dir, "memory.oom_control", "oom", &v), -ENODATA);
	put("cgroup.events", "populated 1\nfrozen 0");
	cr_assert_eq(cg_read_key_u64(dir, "cgroup.events", "frozen", &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(cg_read_key_u64(dir, "cgroup.events", "populated", &v), 0);
	cr_assert_eq(v, 1);
}

Test(cgroup_unit, write_then_read, .init = make_dir, .fini = remove_dir)
{
	char buf[16];

	put("pids.max", "");
	cr_assert_eq(cg_write_u64(dir, "pids.max", 1024), 0);
	cr_assert_eq(cg_read(dir, "pids.max", buf, sizeof(buf)), 4);
	cr_assert_str_eq(buf, "1024");
	/* cgroupfs never creates files on write: neither may the helper. */
	cr_assert_eq(cg_write(dir, "nonexistent", "1"), -ENOENT);
}

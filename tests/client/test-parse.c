/* SPDX-License-Identifier: Apache-2.0 */
/* Client pieces that need no daemon: sizes, the command line, base64, paths, error bodies,
 * tables. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-args.h"
#include "table.h"
#include "warren.h"

/* --- sizes ---------------------------------------------------------------------------------- */

Test(size, parses_suffixes)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{ "0", 0 },
		{ "4096", 4096 },
		{ "512B", 512 },
		{ "4k", 4096 },
		{ "64KiB", 65536 },
		{ "256M", 256ull << 20 },
		{ "256MB", 256ull << 20 },
		{ "1G", 1ull << 30 },
		{ "2gb", 2ull << 30 },
		{ "1.5G", 3ull << 29 },
		{ "0.5K", 512 },
		{ "1T", 1ull << 40 },
		{ "15E", 15ull << 60 },
		{ "18446744073709551615", UINT64_MAX },
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 12345;

		cr_assert_eq(warren_parse_size(ok[i].s, &v), 0, "'%s' refused", ok[i].s);
		cr_assert_eq(v, ok[i].v, "'%s' gave %llu", ok[i].s, (unsigned long long)v);
	}
}

Test(size, refuses_garbage_and_overflow)
{
	static const struct {
		const char *s;
		int r;
	} bad[] = {
		{ "", -EINVAL },     { "M", -EINVAL },      { "-1", -EINVAL },  { " 1", -EINVAL },
		{ "1 M", -EINVAL },  { "1X", -EINVAL },     { "1MM", -EINVAL }, { "1.5", -EINVAL },
		{ "1.", -EINVAL },   { "0x10", -EINVAL },   { "16E", -ERANGE },
		{ "18446744073709551616", -ERANGE },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 777;

		cr_assert_eq(warren_parse_size(bad[i].s, &v), bad[i].r, "'%s'", bad[i].s);
		cr_assert_eq(v, 777, "'%s' wrote its output on failure", bad[i].s);
	}
}

Test(size, formats_for_people)
{
	char buf[32];

	cr_assert_str_eq(warren_format_size(512, buf, sizeof(buf)), "512B");
	cr_assert_str_eq(warren_format_size(1024, buf, sizeof(buf)), "1K");
	cr_assert_str_eq(warren_format_size(256ull << 20, buf, sizeof(buf)), "256M");
	cr_assert_str_eq(warren_format_size(3ull << 29, buf, sizeof(buf)), "1.5G");
	cr_assert_str_eq(warren_format_size(UINT64_MAX, buf, sizeof(buf)), "16.0E");
}

/* --- command line --------------------------------------------------------------------------- */

static int parse(struct cli_opts *o, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return cli_parse(argc, argv, o);
}

static void assert_body(const struct cli_opts *o, const char *expected)
{
	json_t *want = json_loads(expected, 0, NULL);
	char *got = json_dumps(o->body, JSON_SORT_KEYS | JSON_COMPACT);

	cr_assert_not_null(want, "bad expectation %s", expected);
	cr_assert(json_equal(o->body, want), "body %s, expected %s", got, expected);
	free(got);
	json_decref(want);
}

Test(args, run_builds_the_create_body)
{
	struct cli_opts o;
	char *argv[] = { "warren", "--socket", "/tmp/s", "run", "--image", "py", "-e", "A=1",
			 "--env", "B=x=y", "--cwd", "/w", "-m", "256M", "--pids", "64",
			 "--cpu-weight", "200", "--disk", "1G", "--log-size", "64K", "--json",
			 "sh", "-c", "echo hi", NULL };

	cr_assert_eq(parse(&o, argv), 0, "%s", o.error);
	cr_assert_eq(o.command, CLI_RUN);
	cr_assert_str_eq(o.socket, "/tmp/s");
	cr_assert(o.json);
	assert_body(&o, "{\"image\": \"py\", \"env\": {\"A\": \"1\", \"B\": \"x=y\"}, \"cwd\": \"/w\","
			"\"limits\": {\"memory_bytes\": 268435456, \"pids\": 64, \"cpu_weight\": 200,"
			"\"disk_bytes\": 1073741824, \"log_bytes\": 65536},"
			"\"cmd\": [\"sh\", \"-c\", \"echo hi\"]}");
	cli_opts_done(&o);
}

Test(args, run_without_command_idles)
{
	struct cli_opts o;
	char *argv[] = { "warren", "run", NULL };

	cr_assert_eq(parse(&o, argv), 0, "%s", o.error);
	assert_body(&o, "{}");
	cli_opts_done(&o);
}

Test(args, run_keeps_a_second_double_dash_for_the_command)
{
	struct cli_opts o;
	char *argv[] = { "warren", "run", "-w", "--", "--", "x", NULL };

	cr_assert_eq(parse(&o, argv), 0, "%s", o.error);
	cr_assert(o.wait);
	assert_body(&o, "{\"cmd\": [\"--\", \"x\"]}");
	cli_opts_done(&o);
}

Test(args, run_env_key_alone_takes_ours)
{
	struct cli_opts o;
	char *argv[] = { "warren", "run", "-e", "WARREN_TEST_VAR", "true", NULL };
	char *argv2[] = { "warren", "run", "-e", "WARREN_TEST_UNSET", "true", NULL };

	setenv("WARREN_TEST_VAR", "v a l", 1);
	unsetenv("WARREN_TEST_UNSET");
	cr_assert_eq(parse(&o, argv), 0, "%s", o.error);
	assert_body(&o, "{\"env\": {\"WARREN_TEST_VAR\": \"v a l\"}, \"cmd\": [\"true\"]}");
	cli_opts_done(&o);
	cr_assert_eq(parse(&o, argv2), -EINVAL);
	cr_assert(strstr(o.error, "WARREN_TEST_UNSET"), "%s", o.error);
	cli_opts_done(&o);
}

Test(args, exec_takes_id_then_command)
{
	struct cli_opts o;
	char *with_dashes[] = { "warren", "exec", "-t", "5", "--stdin-text", "in", "--cwd", "/tmp",
				"abc", "--", "ls", "-l", NULL };
	char *without[] = { "warren", "exec", "abc", "ls", "-l", "--", "x", NULL };

	cr_assert_eq(parse(&o, with_dashes), 0, "%s", o.error);
	cr_assert_eq(o.command, CLI_EXEC);
	cr_assert_eq(o.n_args, 1);
	cr_assert_str_eq(o.args[0], "abc");
	assert_body(&o, "{\"timeout_s\": 5, \"stdin\": \"in\", \"cwd\": \"/tmp\","
			"\"cmd\": [\"ls\", \"-l\"]}");
	cli_opts_done(&o);

	/* Without "--" too: the command's own options and "--" stay the command's. */
	cr_assert_eq(parse(&o, without), 0, "%s", o.error);
	assert_body(&o, "{\"cmd\": [\"ls\", \"-l\", \"--\", \"x\"]}");
	cli_opts_done(&o);
}

Test(args, usage_errors_say_what_is_wrong)
{
	static const struct {
		char *argv[8];
		const char *message;
	} bad[] = {
		{ { "warren", NULL }, "missing command" },
		{ { "warren", "frob", NULL }, "unknown command 'frob'" },
		{ { "warren", "--frob", "ps", NULL }, "unknown option '--frob'" },
		{ { "warren", "ps", "-x", NULL }, "ps: unknown option -x" },
		{ { "warren", "ps", "extra", NULL }, "ps: unexpected argument 'extra'" },
		{ { "warren", "inspect", NULL }, "inspect: missing sandbox ID" },
		{ { "warren", "exec", "abc", NULL }, "exec: missing command" },
		{ { "warren", "exec", "abc", "--", NULL }, "exec: missing command" },
		{ { "warren", "exec", "-t", "soon", "abc", "ls", NULL }, "--timeout 'soon'" },
		{ { "warren", "exec", "-i", "--stdin-text", "x", "abc", "ls", NULL }, "do not mix" },
		{ { "warren", "exec", "--cwd", NULL }, "exec: option --cwd needs a value" },
		{ { "warren", "kill", "-s", NULL }, "kill: option -s needs a value" },
		{ { "warren", "run", "--memory", "lots", NULL }, "--memory 'lots'" },
		{ { "warren", "run", "--pids", "-3", NULL }, "--pids '-3'" },
		{ { "warren", "run", "--disk", "99999999999E", NULL }, "--disk '99999999999E': too large" },
		{ { "warren", "run", "-e", "=v", NULL }, "expected K=V" },
		{ { "warren", "run", "--wait", NULL }, "--wait needs a command" },
		{ { "warren", "run", "--rm", "true", NULL }, "--rm needs --wait" },
		{ { "warren", "rm", NULL }, "rm: missing sandbox ID" },
		{ { "warren", "wait", NULL }, "wait: missing sandbox ID" },
		{ { "warren", "wait", "a", "b", NULL }, "wait: unexpected argument 'b'" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cli_opts o;
		int argc = 0;

		while (bad[i].argv[argc])
			argc++;
		cr_assert_eq(cli_parse(argc, (char **)bad[i].argv, &o), -EINVAL, "case %zu accepted",
			     i);
		cr_assert(strstr(o.error, bad[i].message), "case %zu: '%s' lacks '%s'", i, o.error,
			  bad[i].message);
		cli_opts_done(&o);
	}
}

Test(args, small_commands)
{
	struct cli_opts o;
	char *kill[] = { "warren", "kill", "-s", "KILL", "a", "b", NULL };
	char *rm[] = { "warren", "rm", "a", "-f", "b", NULL };
	char *logs[] = { "warren", "logs", "-f", "a", NULL };
	char *help[] = { "warren", "help", "exec", NULL };
	char *cmd_help[] = { "warren", "inspect", "--help", NULL };
	char *version[] = { "warren", "-V", NULL };

	cr_assert_eq(parse(&o, kill), 0, "%s", o.error);
	cr_assert_str_eq(o.signal, "KILL");
	cr_assert_eq(o.n_args, 2);
	cli_opts_done(&o);

	/* Options may follow IDs where there is no command to protect. */
	cr_assert_eq(parse(&o, rm), 0, "%s", o.error);
	cr_assert(o.force);
	cr_assert_eq(o.n_args, 2);
	cr_assert_str_eq(o.args[0], "a");
	cr_assert_str_eq(o.args[1], "b");
	cli_opts_done(&o);

	cr_assert_eq(parse(&o, logs), 0, "%s", o.error);
	cr_assert(o.follow && !o.force);
	cli_opts_done(&o);

	cr_assert_eq(parse(&o, help), 0, "%s", o.error);
	cr_assert(o.help);
	cr_assert_eq(o.command, CLI_EXEC);
	cli_opts_done(&o);

	cr_assert_eq(parse(&o, cmd_help), 0, "%s", o.error);
	cr_assert(o.help);
	cr_assert_eq(o.command, CLI_INSPECT);
	cli_opts_done(&o);

	cr_assert_eq(parse(&o, version), 0, "%s", o.error);
	cr_assert(o.version);
	cli_opts_done(&o);

	char *wait[] = { "warren", "wait", "--json", "a", NULL };

	cr_assert_eq(parse(&o, wait), 0, "%s", o.error);
	cr_assert_eq(o.command, CLI_WAIT);
	cr_assert(o.json);
	cr_assert_eq(o.n_args, 1);
	cr_assert_str_eq(o.args[0], "a");
	cli_opts_done(&o);
}

Test(args, every_command_has_usage)
{
	for (int c = 0; c < _CLI_COMMAND_MAX; c++) {
		char want[32];

		snprintf(want, sizeof(want), "Usage: warren %s", cli_command_to_string(c));
		cr_assert(strstr(cli_usage(c), want), "usage of %s", cli_command_to_string(c));
		cr_assert_eq(cli_command_from_string(cli_command_to_string(c)), c);
	}
	cr_assert(strstr(cli_usage(_CLI_COMMAND_NONE), "Commands:"));
}

/* --- base64, paths, errors ------------------------------------------------------------------ */

Test(base64, decodes_with_and_without_padding)
{
	char *out;
	size_t len;

	cr_assert_eq(warren_base64_decode("aGVsbG8=", 8, &out, &len), 0);
	cr_assert_eq(len, 5);
	cr_assert_str_eq(out, "hello");
	free(out);
	cr_assert_eq(warren_base64_decode("aGVsbG8", 7, &out, &len), 0);
	cr_assert_str_eq(out, "hello");
	free(out);
	/* Binary, the reason *_b64 exists: a NUL and an invalid UTF-8 byte. */
	cr_assert_eq(warren_base64_decode("AP8=", 4, &out, &len), 0);
	cr_assert_eq(len, 2);
	cr_assert_eq((unsigned char)out[0], 0x00);
	cr_assert_eq((unsigned char)out[1], 0xff);
	free(out);
	cr_assert_eq(warren_base64_decode("", 0, &out, &len), 0);
	cr_assert_eq(len, 0);
	free(out);
	cr_assert_eq(warren_base64_decode("a", 1, &out, &len), -EINVAL);
	cr_assert_eq(warren_base64_decode("aGV$bG8=", 8, &out, &len), -EINVAL);
}

Test(path, ids_cannot_escape_their_segment)
{
	char *p;

	cr_assert_eq(warren_sandbox_path("00a1b2c3d4e5", NULL, &p), 0);
	cr_assert_str_eq(p, "/v1/sandboxes/00a1b2c3d4e5");
	free(p);
	cr_assert_eq(warren_sandbox_path("../info", "/exec", &p), 0);
	cr_assert_str_eq(p, "/v1/sandboxes/%2E%2E%2Finfo/exec");
	free(p);
	cr_assert_eq(warren_sandbox_path("a b?c#", "/logs?follow=1", &p), 0);
	cr_assert_str_eq(p, "/v1/sandboxes/a%20b%3Fc%23/logs?follow=1");
	free(p);
	cr_assert_eq(warren_sandbox_path("", NULL, &p), -EINVAL);
}

Test(errors, extracts_the_daemons_message)
{
	const char body[] = "{\"error\": {\"code\": \"not_found\", \"message\": \"no sandbox 'x': "
			    "list them with GET /v1/sandboxes\"}}";
	char *code, *message;

	cr_assert_eq(warren_error_from_body(404, body, strlen(body), &code, &message), 0);
	cr_assert_str_eq(code, "not_found");
	cr_assert_str_eq(message, "no sandbox 'x': list them with GET /v1/sandboxes");
	cr_assert_eq(warren_errno_from_status(404, code), -ENOENT);
	free(code);
	free(message);
}

Test(errors, foreign_bodies_still_say_something)
{
	const char html[] = "<html>bad gateway</html>\n<body>...";
	char *code, *message;

	cr_assert_eq(warren_error_from_body(502, html, strlen(html), &code, &message), 0);
	cr_assert_str_eq(code, "");
	cr_assert_str_eq(message, "HTTP 502 Bad Gateway: <html>bad gateway</html>");
	free(code);
	free(message);
	cr_assert_eq(warren_error_from_body(500, NULL, 0, &code, &message), 0);
	cr_assert_str_eq(message, "HTTP 500 Internal Server Error");
	free(code);
	free(message);
	/* JSON, but not the error shape. */
	cr_assert_eq(warren_error_from_body(400, "{\"error\": 3}", 12, &code, &message), 0);
	cr_assert_str_eq(message, "HTTP 400 Bad Request: {\"error\": 3}");
	free(code);
	free(message);
}

Test(errors, statuses_and_codes_map_to_errnos)
{
	cr_assert_eq(warren_errno_from_status(400, "bad_request"), -EINVAL);
	cr_assert_eq(warren_errno_from_status(405, NULL), -EOPNOTSUPP);
	cr_assert_eq(warren_errno_from_status(409, "conflict"), -EBUSY);
	cr_assert_eq(warren_errno_from_status(413, ""), -E2BIG);
	cr_assert_eq(warren_errno_from_status(429, "too_many_sandboxes"), -EUSERS);
	cr_assert_eq(warren_errno_from_status(500, "internal"), -EIO);
	cr_assert_eq(warren_errno_from_status(503, "unavailable"), -EAGAIN);
	cr_assert_eq(warren_errno_from_status(418, NULL), -EINVAL);
	cr_assert_eq(warren_errno_from_status(502, NULL), -EIO);
	cr_assert_eq(warren_errno_from_status(302, NULL), -EPROTO);
	/* The code wins over a status that disagrees (a proxy rewrote it). */
	cr_assert_eq(warren_errno_from_status(500, "not_found"), -ENOENT);
}

/* --- tables --------------------------------------------------------------------------------- */

Test(table, aligns_columns_and_defangs_control_characters)
{
	struct table *t = table_new("ID", "STATE", "CMD", NULL);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	cr_assert_not_null(t);
	table_add(t, "a1");
	table_add(t, "running");
	table_add(t, "sh -c 'echo \x1b[31mred'");
	table_add(t, "b2");
	table_add(t, NULL);
	table_addf(t, "%s", "héllo\nworld");
	table_add(t, "c3");
	table_add(t, "");
	table_add(t, "");
	table_add(t, "");
	table_add(t, "");
	table_add(t, "x");
	table_print(t, f);
	fclose(f);
	/* Empty trailing cells leave no blanks at the end of their line. */
	cr_assert_str_eq(out, "ID  STATE    CMD\n"
			      "a1  running  sh -c 'echo ?[31mred'\n"
			      "b2  -        héllo?world\n"
			      "c3\n"
			      "             x\n");
	free(out);
	table_free(t);
}

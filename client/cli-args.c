/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-args.h"
#include "macro.h"
#include "warren.h"

static const char *const command_names[_CLI_COMMAND_MAX] = {
	[CLI_RUN] = "run",   [CLI_PS] = "ps",     [CLI_INSPECT] = "inspect", [CLI_EXEC] = "exec",
	[CLI_LOGS] = "logs", [CLI_KILL] = "kill", [CLI_RM] = "rm",           [CLI_INFO] = "info",
	[CLI_DENIALS] = "denials", [CLI_WAIT] = "wait",
};

const char *cli_command_to_string(enum cli_command c)
{
	return c >= 0 && c < _CLI_COMMAND_MAX ? command_names[c] : NULL;
}

int cli_command_from_string(const char *s)
{
	for (int i = 0; i < _CLI_COMMAND_MAX; i++)
		if (strcmp(s, command_names[i]) == 0)
			return i;
	return -EINVAL;
}

static const char usage_main[] =
	"Usage: warren [--socket PATH] COMMAND [OPTIONS] [ARGS]\n"
	"\n"
	"Drive warrend, the sandbox node runtime, over its Unix socket.\n"
	"\n"
	"Commands:\n"
	"  run      create a sandbox (and optionally wait for its command)\n"
	"  ps       list sandboxes\n"
	"  inspect  show one sandbox\n"
	"  exec     run a command in a running sandbox, streaming its output\n"
	"  logs     print a sandbox's console log\n"
	"  wait     wait until a sandbox has exited; print its exit code\n"
	"  kill     send a signal to a sandbox\n"
	"  rm       delete sandboxes\n"
	"  info     describe the node: tiers, cgroups, LSMs, KVM, io_uring, images\n"
	"  denials  what the access controls refused, newest first\n"
	"\n"
	"Options:\n"
	"  --socket PATH  the daemon's socket (default $WARREN_SOCKET, else " WARREN_DEFAULT_SOCKET
	")\n"
	"  -h, --help     this text; `warren COMMAND --help` for a command's\n"
	"  -V, --version  print the version\n"
	"\n"
	"Sizes take K, M, G, T suffixes (powers of 1024): 256M, 1G, 1.5G.\n"
	"Exit status: 0 on success, 1 when the daemon or the connection failed, 2 on a usage\n"
	"error; `exec`, `run --wait` and `wait` exit with the command's own code.\n";

static const char *const usages[_CLI_COMMAND_MAX] = {
	[CLI_RUN] =
		"Usage: warren run [OPTIONS] [--] [CMD [ARG...]]\n"
		"\n"
		"Create a sandbox and print its id. Without CMD the sandbox idles, ready for\n"
		"`exec`, until it is deleted; with CMD it exits when CMD does.\n"
		"\n"
		"  --image NAME        root filesystem image (default: base)\n"
		"  --tier NAME         isolation tier (default: container)\n"
		"  -e, --env K=V       add to the environment (repeatable; K alone: our $K)\n"
		"      --cwd DIR       working directory of CMD\n"
		"  -m, --memory SIZE   memory limit (default 512M, at least 4M)\n"
		"      --pids N        process limit (8..32768, default 1024)\n"
		"      --cpu-weight N  CPU weight (1..10000, default 100)\n"
		"      --disk SIZE     writable layer size (1M..64G, default 1G)\n"
		"      --log-size SIZE console log cap (4K..1G, default 8M)\n"
		"  -w, --wait          stream the log until CMD exits, then exit with its code\n"
		"      --rm            with --wait: delete the sandbox once CMD has exited\n"
		"      --json          print the whole sandbox object instead of its id\n"
		"      --socket PATH   the daemon's socket\n",
	[CLI_PS] =
		"Usage: warren ps [--json]\n"
		"\n"
		"List sandboxes: ID, IMAGE, STATE, PID, EXIT, AGE, CMD.\n"
		"\n"
		"      --json          print the daemon's JSON instead of a table\n"
		"      --socket PATH   the daemon's socket\n",
	[CLI_INSPECT] =
		"Usage: warren inspect [--json] ID\n"
		"\n"
		"Show a sandbox: state, command, limits and current usage.\n"
		"\n"
		"      --json          print the daemon's JSON object\n"
		"      --socket PATH   the daemon's socket\n",
	[CLI_EXEC] =
		"Usage: warren exec [OPTIONS] ID [--] CMD [ARG...]\n"
		"\n"
		"Run CMD in a running sandbox. Its stdout and stderr go to ours as they arrive;\n"
		"the exit status is CMD's, or 124 when the timeout killed it (as timeout(1)\n"
		"does).\n"
		"Options come before ID.\n"
		"\n"
		"  -e, --env K=V         add to the environment (repeatable; K alone: our $K)\n"
		"      --cwd DIR         working directory\n"
		"  -t, --timeout S       kill CMD after S seconds (default 60, 0: never)\n"
		"      --stdin-text TEXT give CMD this text on its stdin\n"
		"  -i, --interactive     give CMD our stdin (read to its end first)\n"
		"      --socket PATH     the daemon's socket\n",
	[CLI_LOGS] =
		"Usage: warren logs [-f] ID\n"
		"\n"
		"Print a sandbox's console log (its command's stdout and stderr, interleaved).\n"
		"\n"
		"  -f, --follow        keep printing until the sandbox exits\n"
		"      --socket PATH   the daemon's socket\n",
	[CLI_WAIT] =
		"Usage: warren wait [--json] ID\n"
		"\n"
		"Wait until the sandbox has exited (at once if it has), print its exit code and\n"
		"exit with it: the command's code, or 128 + N when signal N killed it (137 for a\n"
		"sandbox deleted while it ran). Any number of clients may wait on one sandbox.\n"
		"\n"
		"      --json          print the exited sandbox's JSON object instead of the code\n"
		"      --socket PATH   the daemon's socket\n",
	[CLI_KILL] =
		"Usage: warren kill [-s SIGNAL] ID...\n"
		"\n"
		"Send a signal to each sandbox's command.\n"
		"\n"
		"  -s, --signal SIG    a name (TERM, SIGKILL) or a number (default TERM)\n"
		"      --socket PATH   the daemon's socket\n",
	[CLI_RM] =
		"Usage: warren rm [-f] ID...\n"
		"\n"
		"Delete sandboxes: kill their processes, remove their cgroups, mounts, files and\n"
		"logs.\n"
		"\n"
		"  -f, --force         no error for ids that do not exist\n"
		"      --socket PATH   the daemon's socket\n",
	[CLI_INFO] =
		"Usage: warren info [--json]\n"
		"\n"
		"Describe the node: version, cores, cgroup mode, isolation tiers and why one is\n"
		"unavailable, LSMs, KVM, io_uring, images.\n"
		"\n"
		"      --json          print the daemon's JSON object\n"
		"      --socket PATH   the daemon's socket\n",
	[CLI_DENIALS] =
		"Usage: warren denials [--last N] [--sandbox ID] [--json]\n"
		"\n"
		"Show what the access controls (seccomp, Landlock, AppArmor, the network allowlist,\n"
		"the API) refused, newest first. Identical refusals within a second are folded into\n"
		"one line with a repeat count.\n"
		"\n"
		"  -n, --last N        how many (default 20)\n"
		"      --sandbox ID    only this sandbox's\n"
		"      --json          print the daemon's JSON object\n"
		"      --socket PATH   the daemon's socket\n",
};

const char *cli_usage(enum cli_command c)
{
	return c >= 0 && c < _CLI_COMMAND_MAX ? usages[c] : usage_main;
}

enum {
	OPT_SOCKET = 0x100,
	OPT_IMAGE,
	OPT_TIER,
	OPT_CWD,
	OPT_PIDS,
	OPT_CPU_WEIGHT,
	OPT_DISK,
	OPT_LOG_SIZE,
	OPT_JSON,
	OPT_RM,
	OPT_STDIN_TEXT,
	OPT_SANDBOX,
};

#define OPTS_COMMON { "socket", required_argument, NULL, OPT_SOCKET }, \
		    { "help", no_argument, NULL, 'h' }

static const struct option opts_run[] = {
	OPTS_COMMON,
	{ "image", required_argument, NULL, OPT_IMAGE },
	{ "tier", required_argument, NULL, OPT_TIER },
	{ "env", required_argument, NULL, 'e' },
	{ "cwd", required_argument, NULL, OPT_CWD },
	{ "memory", required_argument, NULL, 'm' },
	{ "pids", required_argument, NULL, OPT_PIDS },
	{ "cpu-weight", required_argument, NULL, OPT_CPU_WEIGHT },
	{ "disk", required_argument, NULL, OPT_DISK },
	{ "log-size", required_argument, NULL, OPT_LOG_SIZE },
	{ "wait", no_argument, NULL, 'w' },
	{ "rm", no_argument, NULL, OPT_RM },
	{ "json", no_argument, NULL, OPT_JSON },
	{}
};
static const struct option opts_json[] = {
	OPTS_COMMON, { "json", no_argument, NULL, OPT_JSON }, {}
};
static const struct option opts_exec[] = {
	OPTS_COMMON,
	{ "env", required_argument, NULL, 'e' },
	{ "cwd", required_argument, NULL, OPT_CWD },
	{ "timeout", required_argument, NULL, 't' },
	{ "stdin-text", required_argument, NULL, OPT_STDIN_TEXT },
	{ "interactive", no_argument, NULL, 'i' },
	{}
};
static const struct option opts_logs[] = { OPTS_COMMON, { "follow", no_argument, NULL, 'f' }, {} };
static const struct option opts_kill[] = {
	OPTS_COMMON, { "signal", required_argument, NULL, 's' }, {}
};
static const struct option opts_denials[] = {
	OPTS_COMMON,
	{ "last", required_argument, NULL, 'n' },
	{ "sandbox", required_argument, NULL, OPT_SANDBOX },
	{ "json", no_argument, NULL, OPT_JSON },
	{}
};
static const struct option opts_rm[] = { OPTS_COMMON, { "force", no_argument, NULL, 'f' }, {} };

/* Per command: its options, and whether option parsing stops at the first operand ("+"), so
 * that the options of CMD in `run sh -c ...` / `exec ID ls -l` stay CMD's. */
static const struct {
	const char *shortopts;
	const struct option *longopts;
	int min_args, max_args; /* operands; -1: no upper bound */
} command_opts[_CLI_COMMAND_MAX] = {
	[CLI_RUN] = { "+:he:m:w", opts_run, 0, -1 },
	[CLI_PS] = { ":h", opts_json, 0, 0 },
	[CLI_INSPECT] = { ":h", opts_json, 1, 1 },
	[CLI_EXEC] = { "+:he:t:i", opts_exec, 2, -1 },
	[CLI_LOGS] = { ":hf", opts_logs, 1, 1 },
	[CLI_KILL] = { ":hs:", opts_kill, 1, -1 },
	[CLI_RM] = { ":hf", opts_rm, 1, -1 },
	[CLI_INFO] = { ":h", opts_json, 0, 0 },
	[CLI_DENIALS] = { ":hn:", opts_denials, 0, 0 },
	[CLI_WAIT] = { ":h", opts_json, 1, 1 },
};

_printf_(2, 3) static int parse_fail(struct cli_opts *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->error, sizeof(o->error), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The body's sub-object `key`, created on first use. */
static json_t *body_object(struct cli_opts *o, const char *key)
{
	json_t *j = json_object_get(o->body, key);

	if (!j) {
		j = json_object();
		if (!j || json_object_set_new(o->body, key, j) < 0)
			return NULL;
	}
	return j;
}

static int parse_env(struct cli_opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	_cleanup_free_ char *key = NULL;
	const char *value;
	json_t *env;

	if (eq == arg || *arg == '\0')
		return parse_fail(o, "--env '%s': expected K=V", arg);
	if (eq) {
		key = strndup(arg, eq - arg);
		value = eq + 1;
	} else {
		/* `-e K` passes our own $K through, as docker does. */
		key = strdup(arg);
		value = getenv(arg);
		if (!value)
			return parse_fail(o, "--env %s: not set in this environment (use K=V)",
					  arg);
	}
	env = body_object(o, "env");
	if (!key || !env || json_object_set_new(env, key, json_string(value)) < 0)
		return parse_fail(o, "--env '%s': not valid UTF-8", arg);
	return 0;
}

static int parse_limit_size(struct cli_opts *o, const char *opt, const char *key, const char *arg)
{
	uint64_t v;
	int r;

	r = warren_parse_size(arg, &v);
	if (r == -ERANGE || (r >= 0 && v > (uint64_t)INT64_MAX))
		return parse_fail(o, "%s '%s': too large", opt, arg);
	if (r < 0)
		return parse_fail(o, "%s '%s': expected a size such as 4096, 256M or 1G", opt, arg);
	json_object_set_new(body_object(o, "limits"), key, json_integer((json_int_t)v));
	return 0;
}

static int parse_uint(const char *arg, long long max, long long *ret)
{
	char *end;
	long long v;

	if (*arg < '0' || *arg > '9')
		return -EINVAL;
	errno = 0;
	v = strtoll(arg, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

static int parse_limit_number(struct cli_opts *o, const char *opt, const char *key,
			      const char *arg)
{
	long long v;

	if (parse_uint(arg, INT32_MAX, &v) < 0)
		return parse_fail(o, "%s '%s': expected a whole number", opt, arg);
	json_object_set_new(body_object(o, "limits"), key, json_integer(v));
	return 0;
}

static int body_set_string(struct cli_opts *o, const char *opt, const char *key, const char *arg)
{
	if (json_object_set_new(o->body, key, json_string(arg)) < 0)
		return parse_fail(o, "%s: '%s' is not valid UTF-8", opt, arg);
	return 0;
}

static int parse_option(struct cli_opts *o, int c, const char *arg)
{
	long long v;

	switch (c) {
	case 'h':
		o->help = true;
		return 0;
	case OPT_SOCKET:
		o->socket = arg;
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_IMAGE:
		return body_set_string(o, "--image", "image", arg);
	case OPT_TIER:
		return body_set_string(o, "--tier", "tier", arg);
	case OPT_CWD:
		return body_set_string(o, "--cwd", "cwd", arg);
	case OPT_STDIN_TEXT:
		return body_set_string(o, "--stdin-text", "stdin", arg);
	case 'e':
		return parse_env(o, arg);
	case 'm':
		return parse_limit_size(o, "--memory", "memory_bytes", arg);
	case OPT_DISK:
		return parse_limit_size(o, "--disk", "disk_bytes", arg);
	case OPT_LOG_SIZE:
		return parse_limit_size(o, "--log-size", "log_bytes", arg);
	case OPT_PIDS:
		return parse_limit_number(o, "--pids", "pids", arg);
	case OPT_CPU_WEIGHT:
		return parse_limit_number(o, "--cpu-weight", "cpu_weight", arg);
	case 't':
		if (parse_uint(arg, INT32_MAX, &v) < 0)
			return parse_fail(o, "--timeout '%s': expected whole seconds (0: none)",
					  arg);
		json_object_set_new(o->body, "timeout_s", json_integer(v));
		return 0;
	case 'i':
		o->interactive = true;
		return 0;
	case 'w':
		o->wait = true;
		return 0;
	case OPT_RM:
		o->remove = true;
		return 0;
	case 'f':
		if (o->command == CLI_LOGS)
			o->follow = true;
		else
			o->force = true;
		return 0;
	case 'n':
		if (parse_uint(arg, 10000, &v) < 0 || v == 0)
			return parse_fail(o, "--last '%s': expected a number from 1 to 10000", arg);
		o->last = (unsigned)v;
		return 0;
	case OPT_SANDBOX:
		o->sandbox = arg;
		return 0;
	case 's':
		if (*arg == '\0')
			return parse_fail(o, "--signal: empty");
		o->signal = arg;
		return 0;
	}
	return parse_fail(o, "unhandled option %d", c); /* a table above lists an option twice */
}

/* The command's options and operands: argv[0] is the command's name. */
static int parse_command(struct cli_opts *o, int argc, char **argv)
{
	const typeof(command_opts[0]) *co = &command_opts[o->command];
	const char *name = command_names[o->command];
	int c, r;

	/* optind = 0 re-initialises glibc's getopt, including its "+" and permutation state. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, co->shortopts, co->longopts, NULL)) != -1) {
		if (c == ':' || c == '?') {
			const char *bad = argv[optind - 1];
			bool is_long = strncmp(bad, "--", 2) == 0;

			if (c == ':' && is_long)
				return parse_fail(o, "%s: option %s needs a value", name, bad);
			if (c == ':')
				return parse_fail(o, "%s: option -%c needs a value", name, optopt);
			return is_long ? parse_fail(o, "%s: unknown option '%s'", name, bad)
				       : parse_fail(o, "%s: unknown option -%c", name, optopt);
		}
		r = parse_option(o, c, optarg);
		if (r < 0)
			return r;
	}
	if (o->help)
		return 0;

	o->args = argv + optind;
	o->n_args = argc - optind;
	if (o->command == CLI_RUN || o->command == CLI_EXEC)
		return 0; /* their operands are checked by the caller, CMD included */
	if (o->n_args < co->min_args)
		return parse_fail(o, "%s: missing %s", name, o->command == CLI_RM ||
				  o->command == CLI_KILL ? "sandbox ID(s)" : "sandbox ID");
	if (co->max_args >= 0 && o->n_args > co->max_args)
		return parse_fail(o, "%s: unexpected argument '%s'", name, o->args[co->max_args]);
	return 0;
}

static int cmd_array(struct cli_opts *o, char **argv, int n)
{
	json_t *cmd = json_array();

	if (!cmd || json_object_set_new(o->body, "cmd", cmd) < 0)
		return parse_fail(o, "out of memory");
	for (int i = 0; i < n; i++)
		if (json_array_append_new(cmd, json_string(argv[i])) < 0)
			return parse_fail(o, "argument '%s' is not valid UTF-8", argv[i]);
	return 0;
}

static int finish_run(struct cli_opts *o)
{
	/* getopt consumed a "--" before CMD: anything here is CMD's own. */
	if (o->wait && o->n_args == 0)
		return parse_fail(o, "run: --wait needs a command (without one it never exits)");
	if (o->remove && !o->wait)
		return parse_fail(o, "run: --rm needs --wait");
	if (o->wait && o->json)
		return parse_fail(o, "run: --json and --wait do not mix (the log goes to stdout)");
	if (o->n_args > 0)
		return cmd_array(o, o->args, o->n_args);
	return 0;
}

static int finish_exec(struct cli_opts *o)
{
	char **cmd;
	int n;

	if (o->n_args == 0)
		return parse_fail(o, "exec: missing sandbox ID");
	if (o->interactive && json_object_get(o->body, "stdin"))
		return parse_fail(o, "exec: -i and --stdin-text do not mix");
	cmd = o->args + 1;
	n = o->n_args - 1;
	if (n > 0 && strcmp(cmd[0], "--") == 0) {
		cmd++;
		n--;
	}
	if (n == 0)
		return parse_fail(o, "exec: missing command (warren exec ID -- CMD...)");
	o->n_args = 1;
	return cmd_array(o, cmd, n);
}

int cli_parse(int argc, char **argv, struct cli_opts *o)
{
	static const struct option opts_global[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	int c, r;

	*o = (struct cli_opts){ .command = _CLI_COMMAND_NONE, .signal = "TERM", .last = 20 };
	o->body = json_object();
	if (!o->body)
		return parse_fail(o, "out of memory");

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hV", opts_global, NULL)) != -1) {
		switch (c) {
		case 'h':
			o->help = true;
			break;
		case 'V':
			o->version = true;
			break;
		case OPT_SOCKET:
			o->socket = optarg;
			break;
		case ':':
			return parse_fail(o, "option %s needs a value", argv[optind - 1]);
		default:
			if (strncmp(argv[optind - 1], "--", 2) == 0)
				return parse_fail(o, "unknown option '%s'", argv[optind - 1]);
			return parse_fail(o, "unknown option -%c", optopt);
		}
	}
	if (optind >= argc) {
		if (o->help || o->version)
			return 0;
		return parse_fail(o, "missing command");
	}
	/* `warren help [COMMAND]` is `warren [COMMAND] --help`. */
	if (strcmp(argv[optind], "help") == 0) {
		o->help = true;
		if (optind + 1 >= argc)
			return 0;
		optind++;
	}
	r = cli_command_from_string(argv[optind]);
	if (r < 0)
		return parse_fail(o, "unknown command '%s'", argv[optind]);
	o->command = r;
	if (o->help)
		return 0;

	r = parse_command(o, argc - optind, argv + optind);
	if (r < 0 || o->help)
		return r;
	if (o->command == CLI_RUN)
		return finish_run(o);
	if (o->command == CLI_EXEC)
		return finish_exec(o);
	return 0;
}

void cli_opts_done(struct cli_opts *o)
{
	json_decref(o->body);
	o->body = NULL;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* warren: the command line client of warrend. One function per subcommand; the options are
 * parsed in cli-args.c, HTTP is the client library's. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli-args.h"
#include "config.h"
#include "macro.h"
#include "table.h"
#include "warren.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct warren_client *, warren_client_free)

/* The daemon's message (or the connection's), the CLI's way: "warren: ..." and exit 1. */
static int fail(struct warren_client *c)
{
	fprintf(stderr, "warren: %s\n", warren_error_message(c));
	return 1;
}

_printf_(1, 2) static int fail_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("warren: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static void print_json(json_t *j)
{
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
}

/* One "key:  value" line of inspect and info. Values are sanitised as table cells are. */
_printf_(2, 3) static void print_kv(const char *key, const char *fmt, ...)
{
	_cleanup_free_ char *v = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&v, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	for (char *p = v; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	printf("%-12s %s\n", key, v);
}

/* Output goes straight to the fd, unbuffered: exec output must interleave as it arrived. */
static int write_fd(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += n;
		len -= n;
	}
	return 0;
}

static int write_stdout(const char *data, size_t len, void *userdata)
{
	return write_fd(STDOUT_FILENO, data, len);
}

static int write_stderr(const char *data, size_t len, void *userdata)
{
	return write_fd(STDERR_FILENO, data, len);
}

/* "sh -c 'echo hi'": arguments quoted the way a shell would need them. */
static char *format_cmd(json_t *cmd)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	json_t *arg;
	size_t i;

	if (!f)
		return NULL;
	json_array_foreach(cmd, i, arg) {
		const char *a = json_string_value(arg);

		if (!a)
			continue;
		if (i > 0)
			fputc(' ', f);
		if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				    "_-./=:,+@%") == strlen(a)) {
			fputs(a, f);
			continue;
		}
		fputc('\'', f);
		for (; *a; a++)
			fputs(*a == '\'' ? "'\\''" : (char[]){ *a, 0 }, f);
		fputc('\'', f);
	}
	fclose(f);
	return s;
}

static const char *format_age(double since, char *buf, size_t len)
{
	struct timespec now;
	double d;

	if (since <= 0)
		return "-";
	clock_gettime(CLOCK_REALTIME, &now);
	d = (double)now.tv_sec + now.tv_nsec / 1e9 - since;
	if (d < 0)
		d = 0;
	/* Whole units, rounded down, as ps(1) and docker do. */
	if (d < 60)
		snprintf(buf, len, "%ds", (int)d);
	else if (d < 3600)
		snprintf(buf, len, "%dm", (int)(d / 60));
	else if (d < 86400)
		snprintf(buf, len, "%dh", (int)(d / 3600));
	else
		snprintf(buf, len, "%dd", (int)(d / 86400));
	return buf;
}

static const char *format_time(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;
	char age[16];

	if (t <= 0 || !localtime_r(&s, &tm))
		return "-";
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + strlen(buf), len - strlen(buf), " (%s ago)",
		 format_age(t, age, sizeof(age)));
	return buf;
}

/* An integer field as text, "-" when absent or null. */
static const char *format_int(json_t *j, char *buf, size_t len)
{
	if (!json_is_integer(j))
		return "-";
	snprintf(buf, len, "%lld", (long long)json_integer_value(j));
	return buf;
}

static const char *format_bytes(json_t *j, char *buf, size_t len)
{
	if (!json_is_integer(j))
		return "-";
	return warren_format_size((uint64_t)json_integer_value(j), buf, len);
}

static const char *str_or(json_t *j, const char *dflt)
{
	const char *s = json_string_value(j);

	return s ? s : dflt;
}

static int cmd_run(struct warren_client *c, struct cli_opts *o)
{
	_cleanup_(warren_response_done) struct warren_response resp = {};
	_cleanup_free_ char *path = NULL;
	const char *id;
	int r, code;

	r = warren_request(c, "POST", "/v1/sandboxes", o->body, &resp);
	if (r < 0)
		return fail(c);
	id = json_string_value(json_object_get(resp.json, "id"));
	if (!id)
		return fail_msg("warrend answered without a sandbox id");
	if (o->json)
		print_json(resp.json);
	else if (!o->wait)
		puts(id);
	if (!o->wait)
		return 0;

	/* The log streams until the command exits; the wait then gives its code (the log may
	 * end a moment before the daemon has reaped the command). */
	r = warren_logs(c, id, true, write_stdout, NULL);
	if (r < 0)
		return fail(c);
	if (warren_wait(c, id, &code, NULL) < 0)
		return fail(c);
	if (o->remove) {
		_cleanup_(warren_response_done) struct warren_response del = {};

		r = warren_sandbox_path(id, NULL, &path);
		if (r < 0)
			return fail_msg("invalid sandbox id '%s'", id);
		if (warren_request(c, "DELETE", path, NULL, &del) < 0)
			fail(c);
	}
	return code;
}

static int cmd_wait(struct warren_client *c, struct cli_opts *o)
{
	_cleanup_(json_decrefp) json_t *sb = NULL;
	int code;

	if (warren_wait(c, o->args[0], &code, &sb) < 0)
		return fail(c);
	if (o->json)
		print_json(sb);
	else
		printf("%d\n", code);
	/* A code outside 0..255 (none of the command's own) cannot be an exit status. */
	return code >= 0 && code <= 255 ? code : 1;
}

static int cmd_ps(struct warren_client *c, struct cli_opts *o)
{
	_cleanup_(warren_response_done) struct warren_response resp = {};
	_cleanup_(table_freep) struct table *t = NULL;
	json_t *list, *sb;
	size_t i;

	if (warren_request(c, "GET", "/v1/sandboxes", NULL, &resp) < 0)
		return fail(c);
	if (o->json) {
		print_json(resp.json);
		return 0;
	}
	list = json_object_get(resp.json, "sandboxes");
	if (!json_is_array(list))
		return fail_msg("warrend answered without a sandbox list");

	t = table_new("ID", "IMAGE", "STATE", "PID", "EXIT", "AGE", "CMD", NULL);
	if (!t)
		return fail_msg("out of memory");
	json_array_foreach(list, i, sb) {
		_cleanup_free_ char *cmd = format_cmd(json_object_get(sb, "cmd"));
		char pid[24], code[24], age[16];
		json_t *p = json_object_get(sb, "pid");

		table_add(t, str_or(json_object_get(sb, "id"), "?"));
		table_add(t, str_or(json_object_get(sb, "image"), "-"));
		table_add(t, str_or(json_object_get(sb, "state"), "?"));
		/* pid 0: the command has not started or is gone. */
		table_add(t, json_integer_value(p) > 0 ? format_int(p, pid, sizeof(pid)) : "-");
		table_add(t, format_int(json_object_get(sb, "exit_code"), code, sizeof(code)));
		table_add(t, format_age(json_number_value(json_object_get(sb, "created_at")), age,
					sizeof(age)));
		/* Long commands are cut: the table is for eyes, --json for programs. */
		if (cmd && strlen(cmd) > 60)
			strcpy(cmd + 57, "...");
		table_add(t, cmd && *cmd ? cmd : "(idle)");
	}
	table_print(t, stdout);
	return 0;
}

static void print_sandbox(json_t *sb)
{
	_cleanup_free_ char *cmd = format_cmd(json_object_get(sb, "cmd"));
	json_t *limits = json_object_get(sb, "limits"), *stats = json_object_get(sb, "stats");
	char a[64], b[64];

	print_kv("id:", "%s", str_or(json_object_get(sb, "id"), "?"));
	print_kv("tier:", "%s", str_or(json_object_get(sb, "tier"), "-"));
	print_kv("image:", "%s", str_or(json_object_get(sb, "image"), "-"));
	print_kv("state:", "%s", str_or(json_object_get(sb, "state"), "?"));
	print_kv("cmd:", "%s", cmd && *cmd ? cmd : "(idle: waiting for exec)");
	print_kv("pid:", "%s", format_int(json_object_get(sb, "pid"), a, sizeof(a)));
	print_kv("exit code:", "%s", format_int(json_object_get(sb, "exit_code"), a, sizeof(a)));
	print_kv("created:", "%s",
		 format_time(json_number_value(json_object_get(sb, "created_at")), a, sizeof(a)));
	print_kv("exited:", "%s",
		 format_time(json_number_value(json_object_get(sb, "exited_at")), a, sizeof(a)));
	if (limits) {
		print_kv("memory:", "%s limit, %s used",
			 format_bytes(json_object_get(limits, "memory_bytes"), a, sizeof(a)),
			 format_bytes(json_object_get(stats, "memory_current"), b, sizeof(b)));
		print_kv("pids:", "%s limit, %s running",
			 format_int(json_object_get(limits, "pids"), a, sizeof(a)),
			 format_int(json_object_get(stats, "pids_current"), b, sizeof(b)));
		print_kv("cpu weight:", "%s",
			 format_int(json_object_get(limits, "cpu_weight"), a, sizeof(a)));
		print_kv("disk:", "%s",
			 format_bytes(json_object_get(limits, "disk_bytes"), a, sizeof(a)));
		print_kv("log size:", "%s",
			 format_bytes(json_object_get(limits, "log_bytes"), a, sizeof(a)));
	}
	if (stats)
		print_kv("oom kills:", "%s",
			 format_int(json_object_get(stats, "oom_kills"), a, sizeof(a)));
}

static int cmd_inspect(struct warren_client *c, struct cli_opts *o)
{
	_cleanup_(warren_response_done) struct warren_response resp = {};
	_cleanup_free_ char *path = NULL;

	if (warren_sandbox_path(o->args[0], NULL, &path) < 0)
		return fail_msg("invalid sandbox id '%s'", o->args[0]);
	if (warren_request(c, "GET", path, NULL, &resp) < 0)
		return fail(c);
	if (o->json)
		print_json(resp.json);
	else
		print_sandbox(resp.json);
	return 0;
}

/* All of our stdin, for exec -i: the API takes stdin as one string. */
static int read_stdin(char **ret)
{
	char *s = NULL, buf[65536];
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	ssize_t n;

	if (!f)
		return -ENOMEM;
	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;

			fclose(f);
			free(s);
			return r;
		}
		fwrite(buf, 1, n, f);
	}
	if (fclose(f) != 0) {
		free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

static int cmd_exec(struct warren_client *c, struct cli_opts *o)
{
	static const struct warren_exec_ops ops = {
		.on_stdout = write_stdout,
		.on_stderr = write_stderr,
	};
	struct warren_exec_result res;
	int r;

	if (o->interactive) {
		_cleanup_free_ char *in = NULL;

		r = read_stdin(&in);
		if (r < 0)
			return fail_msg("reading stdin: %s", strerror(-r));
		if (json_object_set_new(o->body, "stdin", json_string(in)) < 0)
			return fail_msg("stdin is not UTF-8 text (the API carries text only)");
	}
	r = warren_exec(c, o->args[0], o->body, &ops, NULL, &res);
	if (r < 0)
		return fail(c);
	if (res.timed_out) {
		fprintf(stderr, "warren: exec timed out; the command was killed\n");
		return 124;
	}
	return res.exit_code;
}

static int cmd_logs(struct warren_client *c, struct cli_opts *o)
{
	if (warren_logs(c, o->args[0], o->follow, write_stdout, NULL) < 0)
		return fail(c);
	return 0;
}

static int cmd_kill(struct warren_client *c, struct cli_opts *o)
{
	_cleanup_(json_decrefp) json_t *body = NULL;
	const char *sig = o->signal;
	int ret = 0;

	/* The API takes a name or a number; a number goes out as a JSON number. */
	if (strspn(sig, "0123456789") == strlen(sig) && strlen(sig) < 4)
		body = json_pack("{s:i}", "signal", atoi(sig));
	else
		body = json_pack("{s:s}", "signal", sig);
	if (!body)
		return fail_msg("--signal '%s' is not valid UTF-8", sig);

	for (int i = 0; i < o->n_args; i++) {
		_cleanup_(warren_response_done) struct warren_response resp = {};
		_cleanup_free_ char *path = NULL;

		if (warren_sandbox_path(o->args[i], "/signal", &path) < 0) {
			ret = fail_msg("invalid sandbox id '%s'", o->args[i]);
			continue;
		}
		if (warren_request(c, "POST", path, body, &resp) < 0)
			ret = fail(c);
		else
			puts(o->args[i]);
	}
	return ret;
}

static int cmd_rm(struct warren_client *c, struct cli_opts *o)
{
	int ret = 0;

	for (int i = 0; i < o->n_args; i++) {
		_cleanup_(warren_response_done) struct warren_response resp = {};
		_cleanup_free_ char *path = NULL;
		int r;

		if (warren_sandbox_path(o->args[i], NULL, &path) < 0) {
			ret = fail_msg("invalid sandbox id '%s'", o->args[i]);
			continue;
		}
		r = warren_request(c, "DELETE", path, NULL, &resp);
		if (r == -ENOENT && o->force)
			continue;
		if (r < 0)
			ret = fail(c);
		else
			puts(o->args[i]);
	}
	return ret;
}

static const char *yes_no(json_t *j)
{
	return json_is_true(j) ? "yes" : "no";
}

/* "landlock (ABI 4), active: lockdown,capability,landlock" from the lsm object. */
static void print_lsm(json_t *lsm)
{
	static const char *const names[] = { "apparmor", "landlock", "selinux", "bpf_lsm" };
	char buf[256] = "";
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		json_t *v = json_object_get(lsm, names[i]);

		if (json_is_integer(v) && json_integer_value(v) > 0)
			n += snprintf(buf + n, sizeof(buf) - MIN(n, sizeof(buf)), "%s%s (ABI %lld)",
				      n ? ", " : "", names[i], (long long)json_integer_value(v));
		else if (json_is_true(v))
			n += snprintf(buf + n, sizeof(buf) - MIN(n, sizeof(buf)), "%s%s",
				      n ? ", " : "", names[i]);
		n = MIN(n, sizeof(buf) - 1);
	}
	print_kv("lsm:", "%s%s%s", n ? buf : "none",
		 json_object_get(lsm, "active") ? "; active: " : "",
		 str_or(json_object_get(lsm, "active"), ""));
}

static void print_io_uring(json_t *u)
{
	_cleanup_free_ char *missing = NULL;
	json_t *m = json_object_get(u, "missing"), *op;
	size_t len = 0, i;
	FILE *f = open_memstream(&missing, &len);

	if (!f)
		return;
	json_array_foreach(m, i, op)
		fprintf(f, "%s%s", i ? ", " : "", str_or(op, "?"));
	fclose(f);
	print_kv("io_uring:", "%lld ops; waitid %s%s%s",
		 (long long)json_integer_value(json_object_get(u, "ops_supported")),
		 yes_no(json_object_get(u, "waitid")), len ? "; missing: " : "",
		 len ? missing : "");
}

static int cmd_denials(struct warren_client *c, struct cli_opts *o)
{
	_cleanup_(warren_response_done) struct warren_response resp = {};
	_cleanup_(table_freep) struct table *t = NULL;
	_cleanup_free_ char *path = NULL;
	json_t *list, *d;
	size_t i;

	if (asprintf(&path, "/v1/denials?limit=%u%s%s", o->last, o->sandbox ? "&sandbox=" : "",
		     o->sandbox ? o->sandbox : "") < 0)
		return fail_msg("out of memory");
	if (warren_request(c, "GET", path, NULL, &resp) < 0)
		return fail(c);
	if (o->json) {
		print_json(resp.json);
		return 0;
	}
	list = json_object_get(resp.json, "denials");
	if (!json_is_array(list))
		return fail_msg("warrend answered without a denial list");
	t = table_new("TIME", "SANDBOX", "LAYER", "ACTION", "REPEATS", "DETAIL", NULL);
	if (!t)
		return fail_msg("out of memory");
	json_array_foreach(list, i, d) {
		char when[64], rep[24];

		table_add(t, format_time(json_number_value(json_object_get(d, "time")), when,
					 sizeof(when)));
		table_add(t, str_or(json_object_get(d, "sandbox"), "-"));
		table_add(t, str_or(json_object_get(d, "layer"), "?"));
		table_add(t, str_or(json_object_get(d, "action"), "?"));
		table_add(t, format_int(json_object_get(d, "repeats"), rep, sizeof(rep)));
		table_add(t, str_or(json_object_get(d, "detail"), ""));
	}
	table_print(t, stdout);
	return 0;
}

/* "applied: user namespace, seccomp, landlock, network allowlist; not: apparmor (why)". */
static void print_containment(json_t *c, json_t *net)
{
	static const struct {
		const char *key, *label;
	} layers[] = {
		{ "user_namespace", "user namespace" }, { "seccomp", "seccomp" },
		{ "no_new_privs", "no_new_privs" },     { "landlock", "landlock" },
		{ "apparmor", "apparmor" },             { "network_allowlist", "network allowlist" },
	};
	char on[256] = "", off[256] = "";
	size_t a = 0, b = 0;

	for (size_t i = 0; i < ELEMENTSOF(layers); i++) {
		bool yes = json_is_true(json_object_get(c, layers[i].key));
		char *buf = yes ? on : off;
		size_t *n = yes ? &a : &b;

		*n += snprintf(buf + *n, sizeof(on) - MIN(*n, sizeof(on)), "%s%s", *n ? ", " : "",
			       layers[i].label);
		*n = MIN(*n, sizeof(on) - 1);
	}
	const char *why = str_or(json_object_get(c, "apparmor_unavailable"), NULL);

	print_kv("layers:", "%s", a ? on : "none");
	if (b)
		print_kv("not applied:", "%s%s%s%s", off, why ? " (" : "", why ? why : "",
			 why ? ")" : "");
	if (json_is_false(json_object_get(net, "allowlist")))
		print_kv("network:", "none only: %s",
			 str_or(json_object_get(net, "allowlist_unavailable"), "?"));
	else if (net)
		print_kv("network:", "modes none, allowlist%s; %lld connections refused so far",
			 json_array_size(json_object_get(net, "modes")) > 2 ? ", host" : "",
			 (long long)json_integer_value(json_object_get(net, "denied")));
}

static int cmd_info(struct warren_client *c, struct cli_opts *o)
{
	_cleanup_(warren_response_done) struct warren_response resp = {};
	_cleanup_(table_freep) struct table *t = NULL;
	_cleanup_free_ char *images = NULL;
	json_t *j, *cg, *kvm, *tiers, *v;
	const char *name, *state;
	size_t len = 0, i;
	FILE *f;

	if (warren_request(c, "GET", "/v1/info", NULL, &resp) < 0)
		return fail(c);
	j = resp.json;
	if (o->json) {
		print_json(j);
		return 0;
	}

	print_kv("version:", "%s (client %s)", str_or(json_object_get(j, "version"), "?"),
		 WARREN_VERSION);
	print_kv("cores:", "%lld", (long long)json_integer_value(json_object_get(j, "cores")));
	cg = json_object_get(j, "cgroup");
	print_kv("cgroup:", "%s%s%s%s", str_or(json_object_get(cg, "mode"), "?"),
		 json_object_get(cg, "v2_path") ? " (v2 at " : "",
		 str_or(json_object_get(cg, "v2_path"), ""),
		 json_object_get(cg, "v2_path") ? ")" : "");
	print_kv("sandboxes:", "%lld of %lld",
		 (long long)json_integer_value(json_object_get(j, "sandboxes")),
		 (long long)json_integer_value(json_object_get(j, "max_sandboxes")));
	f = open_memstream(&images, &len);
	if (f) {
		json_array_foreach(json_object_get(j, "images"), i, v)
			fprintf(f, "%s%s", i ? ", " : "", str_or(v, "?"));
		fclose(f);
	}
	print_kv("images:", "%s", images && *images ? images : "none");
	print_lsm(json_object_get(j, "lsm"));
	print_kv("seccomp:", "%s", yes_no(json_object_get(j, "seccomp")));
	kvm = json_object_get(j, "kvm");
	if (!json_is_true(json_object_get(kvm, "present")))
		state = "absent";
	else if (json_is_true(json_object_get(kvm, "usable")))
		state = "usable";
	else
		state = "present, not usable";
	print_kv("kvm:", "%s%s%s", state, json_object_get(kvm, "reason") ? ": " : "",
		 str_or(json_object_get(kvm, "reason"), ""));
	print_io_uring(json_object_get(j, "io_uring"));
	print_containment(json_object_get(j, "containment"), json_object_get(j, "network"));

	tiers = json_object_get(j, "tiers");
	t = table_new("TIER", "AVAILABLE", "REASON", NULL);
	if (!t)
		return fail_msg("out of memory");
	json_object_foreach(tiers, name, v) {
		table_add(t, name);
		table_add(t, yes_no(json_object_get(v, "available")));
		table_add(t, str_or(json_object_get(v, "reason"), ""));
	}
	putchar('\n');
	table_print(t, stdout);
	return 0;
}

static int (*const commands[_CLI_COMMAND_MAX])(struct warren_client *c, struct cli_opts *o) = {
	[CLI_RUN] = cmd_run,   [CLI_PS] = cmd_ps,     [CLI_INSPECT] = cmd_inspect,
	[CLI_EXEC] = cmd_exec, [CLI_LOGS] = cmd_logs, [CLI_KILL] = cmd_kill,
	[CLI_RM] = cmd_rm,     [CLI_INFO] = cmd_info,
	[CLI_DENIALS] = cmd_denials, [CLI_WAIT] = cmd_wait,
};

int main(int argc, char **argv)
{
	_cleanup_(cli_opts_done) struct cli_opts o;
	_cleanup_(warren_client_freep) struct warren_client *c = NULL;
	int r;

	r = cli_parse(argc, argv, &o);
	if (r < 0) {
		const char *cmd = cli_command_to_string(o.command);

		fprintf(stderr, "warren: %s\nTry 'warren %s%s--help'.\n", o.error, cmd ? cmd : "",
			cmd ? " " : "");
		return 2;
	}
	if (o.version) {
		printf("warren %s\n", WARREN_VERSION);
		return 0;
	}
	if (o.help || o.command == _CLI_COMMAND_NONE) {
		fputs(cli_usage(o.command), stdout);
		return 0;
	}

	r = warren_client_new(o.socket, &c);
	if (r < 0)
		return fail_msg("%s", strerror(-r));
	/* Connect before anything else: "is warrend running?" beats any later error. */
	if (warren_client_open(c) < 0)
		return fail(c);
	return commands[o.command](c, &o);
}

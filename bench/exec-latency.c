/* SPDX-License-Identifier: Apache-2.0 */
/* exec-latency: how long `exec /bin/true` into a running sandbox takes with warren, beside
 * `crun exec` and `runc exec` into a running container and a plain fork + exec of the same
 * busybox binary on the host, in one run. See bench/README.md. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "peers.h"
#include "spawn.h"

enum target {
	T_WARREN,
	T_CRUN,
	T_RUNC,
	T_HOST,
	_T_MAX,
};

static const char *const t_names[_T_MAX] = {
	[T_WARREN] = "warren",
	[T_CRUN] = "crun",
	[T_RUNC] = "runc",
	[T_HOST] = "host_fork_exec",
};

static const char *const t_what[_T_MAX] = {
	[T_WARREN] = "POST /v1/sandboxes/ID/exec {\"cmd\":[\"/bin/true\"]} until the final "
		     "exit_code line",
	[T_CRUN] = "crun exec NAME /bin/true, from spawn to reaped",
	[T_RUNC] = "runc exec NAME /bin/true, from spawn to reaped",
	[T_HOST] = "fork + execve(busybox true) + waitpid on the host, no isolation",
};

static struct {
	unsigned long count, warmup;
	bool json;
	bool want[_T_MAX];
	const char *warrend, *image;
} opt = { .count = 300, .warmup = 10 };

static struct bench_env env;
static struct bench_daemon daemon_;
static struct peers peers;
static bool peers_ready;
static struct warren_client *client;
static char sandbox_id[64];
static bool started[_T_MAX];
static bool alive[_T_MAX]; /* containers to remove at the end */
static const char *skip[_T_MAX];
static struct samples lat[_T_MAX];
static unsigned long errors[_T_MAX];

static char load_before[32], load_after[32];
static const char crun_name[] = "wb-exec-crun", runc_name[] = "wb-exec-runc";

static int warren_exec_true(void)
{
	struct warren_exec_result res;
	json_t *req = json_pack("{s:[s]}", "cmd", "/bin/true");
	static const struct warren_exec_ops ops = {};
	int r;

	r = warren_exec(client, sandbox_id, req, &ops, NULL, &res);
	json_decref(req);
	if (r < 0) {
		fprintf(stderr, "exec-latency: warren exec: %s\n", warren_error_message(client));
		return r;
	}
	return res.exit_code == 0 ? 0 : -EIO;
}

static int exec_once(enum target t)
{
	char busybox[300];
	char *const argv[] = { "true", NULL };

	switch (t) {
	case T_WARREN:
		return warren_exec_true();
	case T_CRUN:
		return peer_exec_true(&peers, PEER_CRUN, crun_name);
	case T_RUNC:
		return peer_exec_true(&peers, PEER_RUNC, runc_name);
	case T_HOST: {
		int status;

		snprintf(busybox, sizeof(busybox), "%s/bin/busybox", env.rootfs);
		status = fork_exec_wait(busybox, argv);
		return status == 0 ? 0 : (status < 0 ? status : -EIO);
	}
	default:
		return -EINVAL;
	}
}

static int setup_targets(void)
{
	json_t *o = NULL;
	struct warren_response resp = {};
	char cg[96];
	int r;

	if (opt.want[T_WARREN]) {
		r = bench_daemon_start(&daemon_, &env, NULL);
		if (r < 0)
			return r;
		r = bench_daemon_client(&daemon_, &client);
		if (r < 0)
			return r;
		/* No cmd: the sandbox idles until deleted, ready for exec. */
		o = json_object();
		r = warren_request(client, "POST", "/v1/sandboxes", o, &resp);
		json_decref(o);
		if (r < 0) {
			fprintf(stderr, "exec-latency: create: %s\n", warren_error_message(client));
			return r;
		}
		snprintf(sandbox_id, sizeof(sandbox_id), "%s",
			 json_string_value(json_object_get(resp.json, "id")) ?: "");
		warren_response_done(&resp);
		started[T_WARREN] = true;
		fprintf(stderr, "exec-latency: warren sandbox %s (warrend pid %d)\n", sandbox_id,
			(int)daemon_.pid);
	}
	if (opt.want[T_CRUN] || opt.want[T_RUNC]) {
		snprintf(cg, sizeof(cg), "warren-bench-exec-latency-%d", (int)getpid());
		r = peers_init(&peers, env.dir, env.rootfs, cg, env.log_fd);
		peers_ready = true;
		if (r >= 0)
			r = peers_write_bundles(&peers, 1);
		if (r < 0)
			return r;
		for (int t = T_CRUN; t <= T_RUNC; t++) {
			enum peer p = t == T_CRUN ? PEER_CRUN : PEER_RUNC;
			const char *name = t == T_CRUN ? crun_name : runc_name;

			if (!opt.want[t])
				continue;
			if (!peer_available(&peers, p)) {
				skip[t] = "not installed";
				continue;
			}
			r = peer_start_idle(&peers, p, name);
			if (r < 0) {
				skip[t] = "could not start a container (see the log above)";
				bench_env_print_log_tail(&env);
				continue;
			}
			started[t] = alive[t] = true;
			fprintf(stderr, "exec-latency: %s container %s (%s)\n", peer_name(p), name,
				peers.version[p]);
		}
	}
	started[T_HOST] = opt.want[T_HOST];
	return 0;
}

static void teardown(void)
{
	if (alive[T_CRUN])
		peer_remove(&peers, PEER_CRUN, crun_name);
	if (alive[T_RUNC])
		peer_remove(&peers, PEER_RUNC, runc_name);
	if (peers_ready)
		peers_cleanup(&peers);
	client = warren_client_free(client);
	/* warrend removes the sandbox when it stops. */
	bench_daemon_stop(&daemon_);
	bench_env_cleanup(&env);
}

static json_t *num(double v)
{
	return isnan(v) ? json_null() : json_real(round(v * 1000.0) / 1000.0);
}

static json_t *target_json(enum target t, double host_p50)
{
	double p50 = samples_pct(&lat[t], 50);

	return json_pack("{s:o,s:o,s:o,s:o,s:I,s:I,s:o,s:s}",
			 "p50_ms", num(p50),
			 "p99_ms", num(samples_pct(&lat[t], 99)),
			 "mean_ms", num(samples_mean(&lat[t])),
			 "max_ms", num(samples_max(&lat[t])),
			 "count", (json_int_t)lat[t].n,
			 "errors", (json_int_t)errors[t],
			 "p50_vs_host", num(p50 / host_p50),
			 "measures", t_what[t]);
}

static void print_results(void)
{
	double host = started[T_HOST] ? samples_pct(&lat[T_HOST], 50) : NAN;
	double crun = started[T_CRUN] ? samples_pct(&lat[T_CRUN], 50) : NAN;

	if (opt.json) {
		json_t *root = json_object();

		for (int t = 0; t < _T_MAX; t++) {
			if (!started[t])
				continue;
			json_object_set_new(root, t_names[t], target_json(t, host));
		}
		json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("\n");
		json_decref(root);
		return;
	}
	printf("\nexec-latency: /bin/true (busybox) run %lu times each, interleaved; in ms.\n"
	       "machine: load average before %s, after %s\n\n",
	       opt.count, load_before, load_after);
	printf("%-15s %7s %8s %8s %8s %8s %10s %10s\n", "target", "n", "p50", "p99", "mean",
	       "max", "p50/host", "p50/crun");
	for (int t = 0; t < _T_MAX; t++) {
		double p50 = samples_pct(&lat[t], 50);

		if (!started[t])
			continue;
		printf("%-15s %7zu %8.3f %8.3f %8.3f %8.3f %9.2fx %9.2fx%s\n", t_names[t], lat[t].n,
		       p50, samples_pct(&lat[t], 99), samples_mean(&lat[t]), samples_max(&lat[t]),
		       p50 / host, p50 / crun, errors[t] ? "  ERRORS" : "");
	}
	printf("\n");
	for (int t = 0; t < _T_MAX; t++)
		if (started[t])
			printf("%-15s %s\n", t_names[t], t_what[t]);
		else if (opt.want[t] && skip[t])
			printf("%-15s not measured: %s\n", t_names[t], skip[t]);
	if (started[T_WARREN] && started[T_HOST]) {
		double ratio = samples_pct(&lat[T_WARREN], 50) / host;

		printf("\nissue 3 target: exec p50 <= 1.2x host fork+exec: %s (%.2fx)\n",
		       ratio <= 1.2 ? "met" : "MISSED", ratio);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: exec-latency [OPTION]...\n"
		"Times exec of /bin/true into a running warren sandbox, into running crun and\n"
		"runc containers, and a plain fork + exec on the host, interleaved. Needs root.\n\n"
		"  -n, --count N        execs per target (default 300)\n"
		"      --warmup N       uncounted execs per target first (default 10)\n"
		"  -t, --targets LIST   subset of warren,crun,runc,host_fork_exec (default all)\n"
		"      --json           print one JSON object instead of the table\n"
		"      --warrend PATH   the warrend to drive (default %s/warrend)\n"
		"      --image PATH     base.erofs (default %s/tests/images/base.erofs)\n"
		"  -h, --help           this help\n",
		BENCH_BUILD_ROOT, BENCH_BUILD_ROOT);
}

static int parse_targets(const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	int r = 0;

	memset(opt.want, 0, sizeof(opt.want));
	for (char *s = strtok_r(copy, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		int t;

		for (t = 0; t < _T_MAX && strcmp(s, t_names[t]) != 0; t++)
			;
		if (t == _T_MAX) {
			fprintf(stderr, "exec-latency: unknown target '%s'\n", s);
			r = -EINVAL;
			break;
		}
		opt.want[t] = true;
	}
	free(copy);
	return r;
}

static int parse_args(int argc, char **argv)
{
	enum { O_WARMUP = 256 };
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, O_WARMUP },
		{ "targets", required_argument, NULL, 't' },
		BENCH_COMMON_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	for (int t = 0; t < _T_MAX; t++)
		opt.want[t] = true;
	while ((c = getopt_long(argc, argv, "n:t:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'n':
			if (parse_uint_arg("--count", optarg, 10000000, &opt.count) < 0 ||
			    opt.count == 0)
				return -EINVAL;
			break;
		case O_WARMUP:
			if (parse_uint_arg("--warmup", optarg, 100000, &opt.warmup) < 0)
				return -EINVAL;
			break;
		case 't':
			if (parse_targets(optarg) < 0)
				return -EINVAL;
			break;
		default:
			if (bench_common_option(c, optarg, &opt.json, &opt.warrend, &opt.image,
						usage) < 0)
				return -EINVAL;
		}
	}
	if (bench_no_operands("exec-latency", argc, argv) < 0)
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	int r;

	if (parse_args(argc, argv) < 0)
		return 2;
	bench_signals_install();
	if (bench_env_init(&env, "exec-latency", opt.warrend, opt.image) < 0)
		return 1;
	r = bench_env_setup(&env, true);
	if (r >= 0)
		r = setup_targets();
	if (r < 0)
		goto out;

	loadavg(load_before);
	/* Interleaved, one exec of each target per round, so that a slow spell of the machine
	 * falls on all of them alike. */
	for (unsigned long i = 0; i < opt.warmup + opt.count && !bench_interrupted; i++) {
		bool record = i >= opt.warmup;

		if (i == opt.warmup)
			fprintf(stderr, "exec-latency: warmed up; measuring %lu rounds\n",
				opt.count);
		for (int t = 0; t < _T_MAX; t++) {
			uint64_t t0;

			if (!started[t])
				continue;
			t0 = now_ns();
			r = exec_once(t);
			if (r < 0) {
				if (errors[t]++ == 0)
					fprintf(stderr, "exec-latency: %s failed: %s\n", t_names[t],
						strerror(-r));
				if (errors[t] >= 5) {
					started[t] = false;
					skip[t] = "it kept failing";
				}
				continue;
			}
			if (record)
				samples_add(&lat[t], ns_to_ms(now_ns() - t0));
		}
		if (record && (i - opt.warmup + 1) % 100 == 0)
			fprintf(stderr, "exec-latency: %lu/%lu\n", i - opt.warmup + 1, opt.count);
	}
	loadavg(load_after);
	if (bench_interrupted)
		fprintf(stderr, "exec-latency: interrupted: the figures are partial\n");
	print_results();
	r = 0;
	for (int t = 0; t < _T_MAX; t++)
		if (opt.want[t] && (errors[t] || skip[t]) && strcmp(skip[t] ?: "", "not installed"))
			r = -EIO;
out:
	teardown();
	return r < 0 ? 1 : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* density: start N idle sandboxes and measure what each costs the machine and warrend, check
 * they all still answer exec, and time the teardown. See bench/README.md. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "procfs.h"

static struct {
	unsigned long n, conc, verify, settle_ms, max_sandboxes;
	bool verify_all, json;
	const char *warrend, *image;
} opt = { .n = 1000, .conc = 8, .verify_all = true, .settle_ms = 1000 };

static struct bench_env env;
static struct bench_daemon daemon_;

/* The ids of the sandboxes made so far; slots are written once, by the worker that made it. */
static char (*ids)[16];
static atomic_ulong n_created;

/* --- a pool of clients ---------------------------------------------------------------------- */

struct job;
typedef int (*job_fn)(struct job *j, struct warren_client *c, unsigned long i);

struct job {
	const char *name;
	job_fn fn;
	unsigned long n;              /* indices 0..n-1 */
	unsigned long stride;         /* index i means item i * stride (sampled verify) */
	atomic_ulong next;
	atomic_ulong ok, failed;
	atomic_bool stop;             /* stop at the first failure (create: the node is full) */
	bool stop_on_error;
	pthread_mutex_t lock;
	struct samples lat;
	char first_error[512];
};

struct job_worker {
	struct job *job;
	struct warren_client *client;
	struct samples lat;
	pthread_t thread;
};

static void *job_main(void *data)
{
	struct job_worker *w = data;
	struct job *j = w->job;

	while (!atomic_load(&j->stop) && !bench_interrupted) {
		unsigned long i = atomic_fetch_add(&j->next, 1);
		uint64_t t0;

		if (i >= j->n)
			break;
		t0 = now_ns();
		if (j->fn(j, w->client, i * j->stride) < 0) {
			atomic_fetch_add(&j->failed, 1);
			pthread_mutex_lock(&j->lock);
			if (!j->first_error[0])
				snprintf(j->first_error, sizeof(j->first_error), "%s",
					 warren_error_message(w->client));
			pthread_mutex_unlock(&j->lock);
			if (j->stop_on_error)
				atomic_store(&j->stop, true);
			continue;
		}
		samples_add(&w->lat, ns_to_ms(now_ns() - t0));
		atomic_fetch_add(&j->ok, 1);
	}
	return NULL;
}

/* Runs fn over n items with opt.conc clients; returns the wall time in seconds. */
static double run_job(struct job *j)
{
	unsigned long nw = opt.conc < j->n ? opt.conc : (j->n ? j->n : 1);
	struct job_worker *ws = calloc(nw, sizeof(*ws));
	uint64_t t0, t1;

	pthread_mutex_init(&j->lock, NULL);
	if (!ws)
		return NAN;
	for (unsigned long i = 0; i < nw; i++) {
		ws[i].job = j;
		if (bench_daemon_client(&daemon_, &ws[i].client) < 0) {
			nw = i;
			break;
		}
	}
	t0 = now_ns();
	for (unsigned long i = 0; i < nw; i++)
		if (pthread_create(&ws[i].thread, NULL, job_main, &ws[i]) != 0) {
			fprintf(stderr, "density: pthread_create failed\n");
			exit(1);
		}
	for (unsigned long i = 0; i < nw; i++)
		pthread_join(ws[i].thread, NULL);
	t1 = now_ns();
	for (unsigned long i = 0; i < nw; i++) {
		samples_merge(&j->lat, &ws[i].lat);
		samples_done(&ws[i].lat);
		warren_client_free(ws[i].client);
	}
	free(ws);
	return (double)(t1 - t0) / 1e9;
}

static int create_one(struct job *j, struct warren_client *c, unsigned long i)
{
	struct warren_response resp = {};
	json_t *body = json_object();
	const char *id;
	unsigned long slot;
	int r;

	/* No cmd: an idle sandbox (warren-init waits), ready for exec. Default limits. */
	r = warren_request(c, "POST", "/v1/sandboxes", body, &resp);
	json_decref(body);
	if (r < 0)
		return r;
	id = json_string_value(json_object_get(resp.json, "id"));
	slot = atomic_fetch_add(&n_created, 1);
	snprintf(ids[slot], sizeof(ids[slot]), "%s", id ?: "");
	warren_response_done(&resp);
	return 0;
}

static int exec_one(struct job *j, struct warren_client *c, unsigned long i)
{
	static const struct warren_exec_ops ops = {};
	struct warren_exec_result res;
	json_t *req = json_pack("{s:[s]}", "cmd", "/bin/true");
	int r;

	r = warren_exec(c, ids[i], req, &ops, NULL, &res);
	json_decref(req);
	if (r < 0)
		return r;
	return res.exit_code == 0 ? 0 : -EIO;
}

static int delete_one(struct job *j, struct warren_client *c, unsigned long i)
{
	struct warren_response resp = {};
	char *path = NULL;
	int r;

	r = warren_sandbox_path(ids[i], NULL, &path);
	if (r < 0)
		return r;
	r = warren_request(c, "DELETE", path, NULL, &resp);
	free(path);
	warren_response_done(&resp);
	return r;
}

/* --- measurements --------------------------------------------------------------------------- */

/* max_sandboxes from GET /v1/info, or -errno. */
static long daemon_max_sandboxes(void)
{
	struct warren_client *c = NULL;
	struct warren_response resp = {};
	long v = -EIO;

	if (bench_daemon_client(&daemon_, &c) < 0)
		return -EIO;
	if (warren_request(c, "GET", "/v1/info", NULL, &resp) >= 0 &&
	    json_is_integer(json_object_get(resp.json, "max_sandboxes")))
		v = (long)json_integer_value(json_object_get(resp.json, "max_sandboxes"));
	warren_response_done(&resp);
	warren_client_free(c);
	return v;
}

struct snap {
	long mem_available, mem_free, slab, sunreclaim, page_tables, kernel_stack;
	long rss, fds, ring_files;
};

static void take_snap(struct snap *s)
{
	s->mem_available = meminfo_kib("MemAvailable");
	s->mem_free = meminfo_kib("MemFree");
	s->slab = meminfo_kib("Slab");
	s->sunreclaim = meminfo_kib("SUnreclaim");
	s->page_tables = meminfo_kib("PageTables");
	s->kernel_stack = meminfo_kib("KernelStack");
	s->rss = proc_status_kib(daemon_.pid, "VmRSS");
	s->fds = proc_count_fds(daemon_.pid);
	s->ring_files = proc_ring_files(daemon_.pid, 5);
}

static void settle(void)
{
	sleep_us((unsigned)(opt.settle_ms * 1000));
}

static json_t *num(double v)
{
	return isnan(v) ? json_null() : json_real(round(v * 1000.0) / 1000.0);
}

struct results {
	unsigned long made;
	double t_create, t_verify, t_teardown;
	struct job *create, *verify, *teardown;
	struct snap base, full, after;
	char load_before[32], load_after[32];
};

/* Growth from base to full, per sandbox. */
#define PER(r, field) ((double)((r)->full.field - (r)->base.field) / (double)(r)->made)

static void print_json(struct results *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "sandboxes_requested", json_integer((json_int_t)opt.n));
	json_object_set_new(o, "sandboxes_created", json_integer((json_int_t)r->made));
	json_object_set_new(o, "concurrency", json_integer((json_int_t)opt.conc));
	json_object_set_new(o, "create_s", num(r->t_create));
	json_object_set_new(o, "create_per_s", num((double)r->made / r->t_create));
	json_object_set_new(o, "create_p50_ms", num(samples_pct(&r->create->lat, 50)));
	json_object_set_new(o, "create_p99_ms", num(samples_pct(&r->create->lat, 99)));
	/* MemAvailable shrinks: its drop is the cost. */
	json_object_set_new(o, "mem_available_kib_per_sandbox", num(-PER(r, mem_available)));
	json_object_set_new(o, "slab_kib_per_sandbox", num(PER(r, slab)));
	json_object_set_new(o, "sunreclaim_kib_per_sandbox", num(PER(r, sunreclaim)));
	json_object_set_new(o, "page_tables_kib_per_sandbox", num(PER(r, page_tables)));
	json_object_set_new(o, "kernel_stack_kib_per_sandbox", num(PER(r, kernel_stack)));
	json_object_set_new(o, "warrend_rss_kib_per_sandbox", num(PER(r, rss)));
	json_object_set_new(o, "warrend_fds_per_sandbox", num(PER(r, fds)));
	json_object_set_new(o, "warrend_ring_files_per_sandbox", num(PER(r, ring_files)));
	json_object_set_new(o, "exec_checked", json_integer((json_int_t)r->verify->n));
	json_object_set_new(o, "exec_ok", json_integer((json_int_t)atomic_load(&r->verify->ok)));
	json_object_set_new(o, "exec_failed",
			    json_integer((json_int_t)atomic_load(&r->verify->failed)));
	json_object_set_new(o, "exec_s", num(r->t_verify));
	json_object_set_new(o, "exec_p50_ms", num(samples_pct(&r->verify->lat, 50)));
	json_object_set_new(o, "exec_p99_ms", num(samples_pct(&r->verify->lat, 99)));
	json_object_set_new(o, "teardown_s", num(r->t_teardown));
	json_object_set_new(o, "teardown_per_s", num((double)r->made / r->t_teardown));
	json_object_set_new(o, "deleted",
			    json_integer((json_int_t)atomic_load(&r->teardown->ok)));
	json_object_set_new(o, "warrend_rss_kib",
			    json_pack("{s:I,s:I,s:I}", "before", (json_int_t)r->base.rss, "full",
				      (json_int_t)r->full.rss, "after", (json_int_t)r->after.rss));
	json_object_set_new(o, "warrend_fds",
			    json_pack("{s:I,s:I,s:I}", "before", (json_int_t)r->base.fds, "full",
				      (json_int_t)r->full.fds, "after", (json_int_t)r->after.fds));
	json_object_set_new(o, "warrend_ring_files",
			    json_pack("{s:I,s:I,s:I}", "before", (json_int_t)r->base.ring_files,
				      "full", (json_int_t)r->full.ring_files, "after",
				      (json_int_t)r->after.ring_files));
	json_object_set_new(o, "mem_available_not_returned_kib",
			    json_integer(r->base.mem_available - r->after.mem_available));
	json_object_set_new(o, "load_average_before", json_string(r->load_before));
	json_object_set_new(o, "load_average_after", json_string(r->load_after));
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("\n");
	json_decref(o);
}

static void print_text(struct results *r)
{
	struct job *c = r->create, *v = r->verify, *t = r->teardown;

	printf("\ndensity: %lu idle sandboxes (no cmd: warren-init waits), %lu clients\n"
	       "machine: load average before %s, after %s\n\n",
	       r->made, opt.conc, r->load_before, r->load_after);
	printf("start     %lu in %.2f s = %.1f/s; create p50 %.2f ms, p99 %.2f ms\n", r->made,
	       r->t_create, (double)r->made / r->t_create, samples_pct(&c->lat, 50),
	       samples_pct(&c->lat, 99));
	if (c->failed)
		printf("          stopped at the first refusal: %s\n", c->first_error);
	printf("memory    per sandbox, from /proc/meminfo after %lu ms of settling:\n",
	       opt.settle_ms);
	printf("          MemAvailable  -%.1f KiB  (everything: kernel and user)\n",
	       -PER(r, mem_available));
	printf("          Slab          +%.1f KiB  (of which unreclaimable +%.1f KiB)\n",
	       PER(r, slab), PER(r, sunreclaim));
	printf("          PageTables    +%.1f KiB\n", PER(r, page_tables));
	printf("          KernelStack   +%.1f KiB\n", PER(r, kernel_stack));
	printf("warrend   RSS %ld -> %ld KiB: +%.2f KiB per sandbox\n", r->base.rss, r->full.rss,
	       PER(r, rss));
	printf("          fds %ld -> %ld: +%.2f per sandbox\n", r->base.fds, r->full.fds,
	       PER(r, fds));
	printf("          registered files of its rings %ld -> %ld: +%.2f per sandbox\n",
	       r->base.ring_files, r->full.ring_files, PER(r, ring_files));
	if (v->n) {
		printf("exec      %lu of %lu answered exec /bin/true with exit code 0, in %.2f s; "
		       "p50 %.2f ms, p99 %.2f ms\n",
		       atomic_load(&v->ok), v->n, r->t_verify, samples_pct(&v->lat, 50),
		       samples_pct(&v->lat, 99));
		if (v->failed)
			printf("          first failure: %s\n", v->first_error);
	}
	printf("teardown  %lu deleted in %.2f s = %.1f/s\n", atomic_load(&t->ok), r->t_teardown,
	       (double)r->made / r->t_teardown);
	if (t->failed)
		printf("          first failure: %s\n", t->first_error);
	printf("after     warrend RSS %ld KiB, %ld fds; MemAvailable %+ld KiB vs. before\n",
	       r->after.rss, r->after.fds, r->after.mem_available - r->base.mem_available);
	printf("\nissue 3 target: warrend memory <= 16 KiB per sandbox: %s (%.2f KiB; measured "
	       "at %lu sandboxes, the target is at 10,000)\n",
	       PER(r, rss) <= 16 ? "met" : "MISSED", PER(r, rss), r->made);
	printf("issue 3 target: 10,000 idle sandboxes alive at once, all answering exec: %s "
	       "(%lu alive, %lu of %lu checked answered)\n",
	       r->made >= 10000 && v->n == r->made && atomic_load(&v->ok) == r->made ? "met" :
										  "MISSED",
	       r->made, atomic_load(&v->ok), v->n);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: density [OPTION]...\n"
		"Starts N idle warren sandboxes on a private warrend, reports what each costs,\n"
		"checks that they answer exec, and times their removal. Needs root.\n\n"
		"  -n, --sandboxes N       how many (default 1000)\n"
		"  -c, --concurrency C     clients creating, exec'ing and deleting (default 8)\n"
		"      --verify all|K      exec /bin/true in all of them or in K spread evenly\n"
		"                          (0: none; default all)\n"
		"      --settle-ms MS      wait before reading the memory figures (default 1000)\n"
		"      --max-sandboxes M   warrend's --max-sandboxes\n"
		"                          (default: warrend's own, from the node's limits)\n"
		"      --json              print one JSON object instead of the report\n"
		"      --warrend PATH      the warrend to drive (default %s/warrend)\n"
		"      --image PATH        base.erofs (default %s/tests/images/base.erofs)\n"
		"  -h, --help              this help\n",
		BENCH_BUILD_ROOT, BENCH_BUILD_ROOT);
}

static int parse_args(int argc, char **argv)
{
	enum { O_VERIFY = 256, O_SETTLE, O_MAX };
	static const struct option opts[] = {
		{ "sandboxes", required_argument, NULL, 'n' },
		{ "concurrency", required_argument, NULL, 'c' },
		{ "verify", required_argument, NULL, O_VERIFY },
		{ "settle-ms", required_argument, NULL, O_SETTLE },
		{ "max-sandboxes", required_argument, NULL, O_MAX },
		BENCH_COMMON_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "n:c:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'n':
			if (parse_uint_arg("--sandboxes", optarg, 1000000, &opt.n) < 0 || !opt.n)
				return -EINVAL;
			break;
		case 'c':
			if (parse_uint_arg("--concurrency", optarg, 256, &opt.conc) < 0 ||
			    !opt.conc)
				return -EINVAL;
			break;
		case O_VERIFY:
			if (strcmp(optarg, "all") == 0) {
				opt.verify_all = true;
			} else {
				if (parse_uint_arg("--verify", optarg, 1000000, &opt.verify) < 0)
					return -EINVAL;
				opt.verify_all = false;
			}
			break;
		case O_SETTLE:
			if (parse_uint_arg("--settle-ms", optarg, 600000, &opt.settle_ms) < 0)
				return -EINVAL;
			break;
		case O_MAX:
			if (parse_uint_arg("--max-sandboxes", optarg, 1000000,
					   &opt.max_sandboxes) < 0)
				return -EINVAL;
			break;
		default:
			if (bench_common_option(c, optarg, &opt.json, &opt.warrend, &opt.image,
						usage) < 0)
				return -EINVAL;
		}
	}
	if (bench_no_operands("density", argc, argv) < 0)
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	struct job create = { .name = "create", .fn = create_one, .stride = 1,
			      .stop_on_error = true };
	struct job verify = { .name = "exec", .fn = exec_one, .stride = 1 };
	struct job teardown = { .name = "delete", .fn = delete_one, .stride = 1 };
	struct snap base, full, after;
	struct results res;
	double t_create, t_verify = NAN, t_teardown;
	char maxs[32], load_before[32];
	/* Without --max-sandboxes, warrend's default is what is measured: the node's limit. */
	const char *extra[] = { "--max-sandboxes", maxs, NULL };
	unsigned long made;
	int r;

	if (parse_args(argc, argv) < 0)
		return 2;
	bench_signals_install();
	if (bench_env_init(&env, "density", opt.warrend, opt.image) < 0)
		return 1;
	ids = calloc(opt.n, sizeof(*ids));
	if (!ids)
		return 1;
	snprintf(maxs, sizeof(maxs), "%lu", opt.max_sandboxes);
	r = bench_env_setup(&env, false);
	if (r >= 0)
		r = bench_daemon_start(&daemon_, &env, opt.max_sandboxes ? extra : NULL);
	if (r < 0)
		goto out;
	fprintf(stderr, "density: warrend pid %d, max sandboxes %ld%s\n", (int)daemon_.pid,
		daemon_max_sandboxes(), opt.max_sandboxes ? "" : " (its default)");

	/* One sandbox made and removed first, so that whatever warrend sets up on first use is
	 * in the baseline, not charged to the N sandboxes. */
	create.n = 1;
	run_job(&create);
	teardown.n = atomic_load(&n_created);
	run_job(&teardown);
	if (create.failed || teardown.failed) {
		fprintf(stderr, "density: the first sandbox failed: %s\n",
			create.first_error[0] ? create.first_error : teardown.first_error);
		r = -EIO;
		goto out;
	}
	atomic_store(&n_created, 0);
	samples_done(&create.lat);
	samples_done(&teardown.lat);
	create = (struct job){ .name = "create", .fn = create_one, .stride = 1, .n = opt.n,
			       .stop_on_error = true };
	teardown = (struct job){ .name = "delete", .fn = delete_one, .stride = 1 };
	settle();
	take_snap(&base);
	loadavg(load_before);

	fprintf(stderr, "density: creating %lu idle sandboxes with %lu clients\n", opt.n, opt.conc);
	t_create = run_job(&create);
	made = atomic_load(&n_created);
	fprintf(stderr, "density: %lu created in %.2f s%s%s\n", made, t_create,
		create.failed ? "; stopped at: " : "", create.failed ? create.first_error : "");
	settle();
	take_snap(&full);

	if (!bench_interrupted && made > 0 && (opt.verify_all || opt.verify > 0)) {
		unsigned long k = opt.verify_all || opt.verify >= made ? made : opt.verify;

		verify.n = k;
		verify.stride = made / k;
		fprintf(stderr, "density: exec /bin/true in %lu of them\n", k);
		t_verify = run_job(&verify);
	}

	/* Always, even after Ctrl-C: the sandboxes must go (warrend would remove them on
	 * SIGTERM too, but the teardown time is a figure we want). */
	bench_interrupted = 0;
	teardown.n = made;
	fprintf(stderr, "density: deleting %lu sandboxes\n", made);
	t_teardown = run_job(&teardown);
	settle();
	take_snap(&after);

	res = (struct results){ .made = made, .t_create = t_create, .t_verify = t_verify,
				.t_teardown = t_teardown, .create = &create, .verify = &verify,
				.teardown = &teardown, .base = base, .full = full, .after = after };
	memcpy(res.load_before, load_before, sizeof(load_before));
	loadavg(res.load_after);
	if (opt.json)
		print_json(&res);
	else
		print_text(&res);
	r = (create.failed || verify.failed || teardown.failed) ? -EIO : 0;
out:
	bench_daemon_stop(&daemon_);
	bench_env_cleanup(&env);
	samples_done(&create.lat);
	samples_done(&verify.lat);
	samples_done(&teardown.lat);
	free(ids);
	return r < 0 ? 1 : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* create-rate: how many sandboxes a second warren creates, runs (/bin/true) and removes, beside
 * crun, runc, bubblewrap and two floors, in one run on one machine. See bench/README.md. */
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
#include "create-rate.h"
#include "floor.h"
#include "peers.h"

const char *const rt_names[_RT_MAX] = {
	[RT_WARREN] = "warren",
	[RT_CRUN] = "crun",
	[RT_RUNC] = "runc",
	[RT_BWRAP] = "bwrap",
	[RT_ISOLATION] = "isolation_floor",
	[RT_BARE] = "bare_floor",
};

const enum runtime run_order[_RT_MAX] = { RT_BARE, RT_ISOLATION, RT_WARREN, RT_BWRAP, RT_CRUN,
					  RT_RUNC };

const struct mode modes[N_MODES] = {
	{ "seq", 1, false },       { "c2", 2, false },       { "c8", 8, false },
	{ "seq_netns", 1, true },  { "c2_netns", 2, true },  { "c8_netns", 8, true },
};

struct cr_options opt = { .duration_s = 3, .warmup = 2 };
struct cell cells[_RT_MAX][N_MODES];
const char *rt_skip[_RT_MAX];
char load_before[32], load_after[32];

static struct bench_env env;
static struct bench_daemon daemon_;
static struct floor_config floor_cfg;
static struct peers peers;
static bool floor_ready, peers_ready;

/* --- one sandbox per runtime --------------------------------------------------------------- */

struct worker {
	int idx;
	struct run *run;
	struct warren_client *client;
	struct samples cycle, running, exited, exited_daemon;
	unsigned long n, errors;
	pthread_t thread;
};

struct run {
	enum runtime rt;
	const struct mode *m;
	pthread_barrier_t warmed, go;
	uint64_t deadline_ns;
	atomic_long remaining;     /* count mode */
	atomic_bool stop;
	atomic_ulong seq;
	atomic_int reported;
};

static enum peer rt_peer(enum runtime rt)
{
	return rt == RT_CRUN ? PEER_CRUN : rt == RT_RUNC ? PEER_RUNC : PEER_BWRAP;
}

static void report_error(struct run *run, const char *fmt, const char *detail)
{
	if (atomic_fetch_add(&run->reported, 1) < 3) {
		fprintf(stderr, "bench: %s %s: ", rt_names[run->rt], run->m->name);
		fprintf(stderr, fmt, detail);
		fputc('\n', stderr);
	}
}

static int warren_get_json(struct worker *w, const char *method, const char *path, json_t *body,
			   json_t **ret)
{
	struct warren_response resp = {};
	int r = warren_request(w->client, method, path, body, &resp);

	json_decref(body);
	if (r < 0) {
		report_error(w->run, "%s", warren_error_message(w->client));
		return r;
	}
	*ret = resp.json ? json_incref(resp.json) : NULL;
	warren_response_done(&resp);
	return 0;
}

/* create -> 201 (running) -> POST .../wait answered (exited) -> DELETE. The 201 comes once
 * warren-init has exec'd (the create is synchronous), so create->running is the response
 * time; the wait is answered when warrend reaps the init, so create->exited is when the
 * exit is observed, without polling. The daemon's own created_at->exited_at is kept beside
 * it. Without a network namespace (seq, c2, c8) the sandbox uses the host's network (mode
 * host), as the peers do in those modes. */
static int warren_once(struct worker *w, bool record)
{
	char id[64], *path = NULL;
	json_t *o = NULL, *body;
	double created_at, exited_at = NAN;
	uint64_t t0, t1, t2, t3;
	int r, code;

	t0 = now_ns();
	if (w->run->m->netns)
		body = json_pack("{s:s,s:[s]}", "image", "base", "cmd", "/bin/true");
	else
		body = json_pack("{s:s,s:[s],s:{s:s}}", "image", "base", "cmd", "/bin/true",
				 "network", "mode", "host");
	r = warren_get_json(w, "POST", "/v1/sandboxes", body, &o);
	t1 = now_ns();
	if (r < 0)
		return r;
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(o, "id")) ?: "");
	created_at = json_number_value(json_object_get(o, "created_at"));
	json_decref(o);
	if (!id[0]) {
		report_error(w->run, "%s", "the 201 has no sandbox id");
		return -EPROTO;
	}
	r = warren_sandbox_path(id, NULL, &path);
	if (r < 0)
		return r;

	r = warren_wait(w->client, id, &code, &o);
	if (r < 0) {
		report_error(w->run, "%s", warren_error_message(w->client));
	} else {
		exited_at = json_number_value(json_object_get(o, "exited_at"));
		json_decref(o);
		if (code != 0) {
			char what[32];

			snprintf(what, sizeof(what), "%d", code);
			report_error(w->run, "/bin/true exited with code %s", what);
			r = -EIO;
		}
	}
	t2 = now_ns();
	/* Delete even after a failure: the run must not leave sandboxes behind. */
	if (warren_get_json(w, "DELETE", path, NULL, &o) == 0)
		json_decref(o);
	else if (r >= 0)
		r = -EIO;
	t3 = now_ns();
	free(path);
	if (r < 0 || !record)
		return r;
	samples_add(&w->running, ns_to_ms(t1 - t0));
	samples_add(&w->exited, ns_to_ms(t2 - t0));
	if (created_at > 0 && exited_at > 0)
		samples_add(&w->exited_daemon, (exited_at - created_at) * 1000.0);
	samples_add(&w->cycle, ns_to_ms(t3 - t0));
	return 0;
}

static int once(struct worker *w, bool record)
{
	struct run *run = w->run;
	uint64_t t0 = now_ns();
	int r;

	switch (run->rt) {
	case RT_WARREN:
		return warren_once(w, record);
	case RT_CRUN:
	case RT_RUNC:
	case RT_BWRAP: {
		r = peer_run_once(&peers, rt_peer(run->rt), w->idx, run->m->netns,
				  atomic_fetch_add(&run->seq, 1));
		if (r < 0)
			report_error(run, "%s", "the runtime failed: see the log below");
		break;
	}
	case RT_ISOLATION:
		r = floor_isolation_once(&floor_cfg, run->m->netns);
		break;
	case RT_BARE:
		r = floor_bare_once(&floor_cfg);
		if (r < 0)
			report_error(run, "%s", strerror(-r));
		break;
	default:
		r = -EINVAL;
	}
	if (r >= 0 && record)
		samples_add(&w->cycle, ns_to_ms(now_ns() - t0));
	return r;
}

static void *worker_main(void *data)
{
	struct worker *w = data;
	struct run *run = w->run;

	for (unsigned i = 0; i < opt.warmup && !atomic_load(&run->stop); i++)
		if (once(w, false) < 0) {
			atomic_store(&run->stop, true);
			w->errors++;
		}
	pthread_barrier_wait(&run->warmed);
	pthread_barrier_wait(&run->go);
	while (!atomic_load(&run->stop) && !bench_interrupted) {
		if (opt.count) {
			if (atomic_fetch_sub(&run->remaining, 1) <= 0)
				break;
		} else if (now_ns() >= run->deadline_ns) {
			break;
		}
		if (once(w, true) < 0) {
			w->errors++;
			/* A runtime that keeps failing is broken here, not slow. */
			if (w->errors >= 5)
				atomic_store(&run->stop, true);
		} else {
			w->n++;
		}
	}
	return NULL;
}

static void snapshot(uint64_t *machine, uint64_t *dself, uint64_t *dchildren)
{
	proc_busy_ticks(machine);
	*dself = *dchildren = 0;
	if (daemon_.pid > 0)
		proc_cpu_ticks(daemon_.pid, dself, dchildren);
}

static int run_cell(enum runtime rt, int mi, struct cell *cell)
{
	const struct mode *m = &modes[mi];
	struct worker *ws = calloc(m->conc, sizeof(*ws));
	struct run run = { .rt = rt, .m = m };
	uint64_t mach0, mach1, ds0, ds1, dc0, dc1, t0, t1;
	int r = 0, started = 0;

	if (!ws)
		return -ENOMEM;
	atomic_store(&run.remaining, (long)opt.count);
	pthread_barrier_init(&run.warmed, NULL, m->conc + 1);
	pthread_barrier_init(&run.go, NULL, m->conc + 1);
	for (int i = 0; i < m->conc; i++) {
		ws[i].idx = i;
		ws[i].run = &run;
		if (rt == RT_WARREN) {
			r = bench_daemon_client(&daemon_, &ws[i].client);
			if (r < 0)
				break;
		}
	}
	if (r < 0)
		goto out;
	for (; started < m->conc; started++) {
		r = -pthread_create(&ws[started].thread, NULL, worker_main, &ws[started]);
		if (r < 0)
			break;
	}
	if (r < 0) {
		/* The barriers count on every worker: a thread that did not start is fatal. */
		fprintf(stderr, "bench: pthread_create: %s\n", strerror(-r));
		exit(1);
	}
	pthread_barrier_wait(&run.warmed);
	snapshot(&mach0, &ds0, &dc0);
	t0 = now_ns();
	run.deadline_ns = t0 + (uint64_t)(opt.duration_s * 1e9);
	pthread_barrier_wait(&run.go);
	for (int i = 0; i < started; i++)
		pthread_join(ws[i].thread, NULL);
	t1 = now_ns();
	snapshot(&mach1, &ds1, &dc1);

	cell->measured = true;
	cell->seconds = (double)(t1 - t0) / 1e9;
	cell->machine_cpu_s = ticks_to_s(mach1 - mach0);
	cell->daemon_cpu_s = ticks_to_s(ds1 - ds0);
	cell->daemon_children_cpu_s = ticks_to_s(dc1 - dc0);
	for (int i = 0; i < m->conc; i++) {
		cell->n += ws[i].n;
		cell->errors += ws[i].errors;
		samples_merge(&cell->cycle, &ws[i].cycle);
		samples_merge(&cell->running, &ws[i].running);
		samples_merge(&cell->exited, &ws[i].exited);
		samples_merge(&cell->exited_daemon, &ws[i].exited_daemon);
	}
	r = atomic_load(&run.stop) ? -EIO : 0;
out:
	for (int i = 0; i < m->conc; i++) {
		warren_client_free(ws[i].client);
		samples_done(&ws[i].cycle);
		samples_done(&ws[i].running);
		samples_done(&ws[i].exited);
		samples_done(&ws[i].exited_daemon);
	}
	pthread_barrier_destroy(&run.warmed);
	pthread_barrier_destroy(&run.go);
	free(ws);
	return r;
}

/* --- main ---------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: create-rate [OPTION]...\n"
		"Creates sandboxes that run /bin/true as fast as it can, with warren (a private\n"
		"warrend), crun, runc, bubblewrap and two floors, and prints one table.\n"
		"Needs root.\n\n"
		"  -d, --duration SEC   time per runtime and mode (default 3)\n"
		"  -n, --count N        sandboxes per runtime and mode instead of a duration\n"
		"  -q, --quick          --duration 0.7 and one warm-up sandbox per worker\n"
		"                       (all cells in under a minute)\n"
		"  -r, --runtimes LIST  comma-separated subset of warren,crun,runc,bwrap,\n"
		"                       isolation_floor,bare_floor (default all installed)\n"
		"  -m, --modes LIST     subset of seq,c2,c8,seq_netns,c2_netns,c8_netns\n"
		"                       (default all)\n"
		"      --warmup N       uncounted sandboxes per worker before each cell\n"
		"                       (default 2)\n"
		"      --json           print one JSON object instead of the tables\n"
		"      --warrend PATH   the warrend to drive (default %s/warrend)\n"
		"      --image PATH     base.erofs (default %s/tests/images/base.erofs)\n"
		"  -h, --help           this help\n",
		BENCH_BUILD_ROOT, BENCH_BUILD_ROOT);
}

static int parse_list(const char *arg, const char *const *names, int n, bool *want)
{
	char *copy = strdup(arg), *save = NULL;
	int r = 0;

	memset(want, 0, n * sizeof(*want));
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int i;

		for (i = 0; i < n && strcmp(names[i], t) != 0; i++)
			;
		if (i == n) {
			fprintf(stderr, "create-rate: unknown name '%s'\n", t);
			r = -EINVAL;
			break;
		}
		want[i] = true;
	}
	free(copy);
	return r;
}

static int parse_args(int argc, char **argv)
{
	enum { O_WARMUP = 256 };
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'n' },
		{ "quick", no_argument, NULL, 'q' },
		{ "runtimes", required_argument, NULL, 'r' },
		{ "modes", required_argument, NULL, 'm' },
		{ "warmup", required_argument, NULL, O_WARMUP },
		BENCH_COMMON_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *mode_names[N_MODES];
	unsigned long v;
	int c;

	for (int i = 0; i < N_MODES; i++)
		mode_names[i] = modes[i].name;
	for (int i = 0; i < _RT_MAX; i++)
		opt.want_rt[i] = true;
	for (int i = 0; i < N_MODES; i++)
		opt.want_mode[i] = true;
	while ((c = getopt_long(argc, argv, "d:n:qr:m:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'd':
			if (parse_double_arg("--duration", optarg, &opt.duration_s) < 0)
				return -EINVAL;
			break;
		case 'n':
			if (parse_uint_arg("--count", optarg, 10000000, &v) < 0 || v == 0)
				return -EINVAL;
			opt.count = v;
			break;
		case 'q':
			opt.duration_s = 0.7;
			opt.warmup = 1;
			break;
		case 'r':
			if (parse_list(optarg, rt_names, _RT_MAX, opt.want_rt) < 0)
				return -EINVAL;
			break;
		case 'm':
			if (parse_list(optarg, mode_names, N_MODES, opt.want_mode) < 0)
				return -EINVAL;
			break;
		case O_WARMUP:
			if (parse_uint_arg("--warmup", optarg, 1000, &v) < 0)
				return -EINVAL;
			opt.warmup = (unsigned)v;
			break;
		default:
			if (bench_common_option(c, optarg, &opt.json, &opt.warrend, &opt.image,
						usage) < 0)
				return -EINVAL;
		}
	}
	if (bench_no_operands("create-rate", argc, argv) < 0)
		return -EINVAL;
	return 0;
}

static void cleanup(void)
{
	bench_daemon_stop(&daemon_);
	if (peers_ready)
		peers_cleanup(&peers);
	if (floor_ready)
		floor_cleanup(&floor_cfg);
	bench_env_cleanup(&env);
}

/* Cells whose figures are another mode's: the bare floor makes no namespace at all, so its
 * _netns modes are its plain ones. Measured once, shown under both labels. */
static bool copy_cell(enum runtime rt, int mi)
{
	int twin = twin_mode(mi);

	if (rt != RT_BARE || !modes[mi].netns)
		return false;
	cells[rt][mi].note = "the bare floor makes no namespace at all: its _netns modes "
			     "show the plain measurement";
	/* Skipped when its twin is measured; when the twin is not selected, this one is
	 * measured instead (it is the same thing) and keeps the note. */
	return twin >= 0 && opt.want_mode[twin];
}

/* Fills the cells that show their twin's figures (see copy_cell()). */
static void fill_copied_cells(void)
{
	for (int rt = 0; rt < _RT_MAX; rt++)
		for (int mi = 0; mi < N_MODES; mi++) {
			struct cell *dst = &cells[rt][mi], *src;
			int twin = twin_mode(mi);
			const char *note = dst->note;

			if (!opt.want_mode[mi] || dst->measured || !note || twin < 0 ||
			    !cells[rt][twin].measured)
				continue;
			src = &cells[rt][twin];
			*dst = *src;
			dst->cycle = dst->running = (struct samples){};
			dst->exited = dst->exited_daemon = (struct samples){};
			samples_merge(&dst->cycle, &src->cycle);
			samples_merge(&dst->running, &src->running);
			samples_merge(&dst->exited, &src->exited);
			samples_merge(&dst->exited_daemon, &src->exited_daemon);
			dst->copied_from = modes[twin].name;
			dst->note = note;
		}
}

int main(int argc, char **argv)
{
	int max_conc = 0, r, failed = 0;

	if (parse_args(argc, argv) < 0)
		return 2;
	bench_signals_install();
	if (bench_env_init(&env, "create-rate", opt.warrend, opt.image) < 0)
		return 1;
	for (int mi = 0; mi < N_MODES; mi++)
		if (opt.want_mode[mi] && modes[mi].conc > max_conc)
			max_conc = modes[mi].conc;

	r = bench_env_setup(&env, true);
	if (r < 0)
		goto out;
	if (opt.want_rt[RT_ISOLATION] || opt.want_rt[RT_BARE]) {
		char cg[96];

		snprintf(cg, sizeof(cg), "warren-bench-create-rate-%d-floor", (int)getpid());
		r = floor_setup(&floor_cfg, env.dir, env.rootfs, cg);
		floor_ready = true;
		if (r < 0) {
			fprintf(stderr, "create-rate: floor setup: %s\n", strerror(-r));
			goto out;
		}
	}
	if (opt.want_rt[RT_CRUN] || opt.want_rt[RT_RUNC] || opt.want_rt[RT_BWRAP]) {
		char cg[96];

		snprintf(cg, sizeof(cg), "warren-bench-create-rate-%d", (int)getpid());
		r = peers_init(&peers, env.dir, env.rootfs, cg, env.log_fd);
		peers_ready = true;
		if (r >= 0)
			r = peers_write_bundles(&peers, max_conc);
		if (r < 0) {
			fprintf(stderr, "create-rate: bundles: %s\n", strerror(-r));
			goto out;
		}
		for (enum runtime rt = RT_CRUN; rt <= RT_BWRAP; rt++) {
			enum peer p = rt_peer(rt);

			if (!peer_available(&peers, p))
				rt_skip[rt] = "not installed (apt-get install crun runc "
					      "bubblewrap)";
			else
				fprintf(stderr, "create-rate: %s: %s (%s)\n", peer_name(p),
					peers.path[p], peers.version[p]);
		}
	}
	if (opt.want_rt[RT_WARREN]) {
		/* The no-netns modes ask for network mode host: the peers' "no network namespace"
		 * is the host's network too. */
		static const char *const extra[] = { "--allow-host-network", NULL };

		r = bench_daemon_start(&daemon_, &env, extra);
		if (r < 0)
			goto out;
		fprintf(stderr, "create-rate: warrend pid %d on %s\n", (int)daemon_.pid,
			daemon_.sock);
	}

	loadavg(load_before);
	for (int mi = 0; mi < N_MODES && !bench_interrupted; mi++) {
		if (!opt.want_mode[mi])
			continue;
		for (size_t k = 0; k < ELEMENTSOF(run_order) && !bench_interrupted; k++) {
			enum runtime rt = run_order[k];
			struct cell *cl = &cells[rt][mi];

			if (!opt.want_rt[rt] || rt_skip[rt])
				continue;
			if (copy_cell(rt, mi))
				continue; /* filled in from its twin below */
			fprintf(stderr, "create-rate: %-15s %-9s ... ", rt_names[rt],
				modes[mi].name);
			r = run_cell(rt, mi, cl);
			fprintf(stderr, "%6lu in %.1f s: %7.1f/s  p50 %.2f ms  p99 %.2f ms%s\n",
				cl->n, cl->seconds, cell_rate(cl), samples_pct(&cl->cycle, 50),
				samples_pct(&cl->cycle, 99), cl->errors ? "  (errors)" : "");
			if (r < 0 && !bench_interrupted) {
				failed = 1;
				if (rt >= RT_CRUN && rt <= RT_BWRAP)
					bench_env_print_log_tail(&env);
				if (cl->n == 0) {
					rt_skip[rt] = "it failed on this machine (see the "
						      "messages above)";
					cl->measured = false;
				}
			}
		}
	}
	loadavg(load_after);
	fill_copied_cells();
	if (bench_interrupted)
		fprintf(stderr, "create-rate: interrupted: the figures are partial\n");

	if (opt.json)
		print_json();
	else
		print_tables();
	r = 0;
out:
	cleanup();
	return r < 0 || failed ? 1 : 0;
}

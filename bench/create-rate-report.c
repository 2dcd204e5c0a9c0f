/* SPDX-License-Identifier: Apache-2.0 */
/* create-rate's output: the tables for people and the JSON object for scripts. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "create-rate.h"

double cell_rate(const struct cell *c)
{
	return c->measured && c->seconds > 0 && c->n > 0 ? (double)c->n / c->seconds : NAN;
}

double cell_per_sb_ms(const struct cell *c, double cpu_s)
{
	return c->n ? cpu_s * 1000.0 / (double)c->n : NAN;
}

int mode_index(const char *name)
{
	for (int i = 0; i < N_MODES; i++)
		if (strcmp(modes[i].name, name) == 0)
			return i;
	return -1;
}

int twin_mode(int mi)
{
	for (int i = 0; i < N_MODES; i++)
		if (i != mi && modes[i].conc == modes[mi].conc && modes[i].netns != modes[mi].netns)
			return i;
	return -1;
}

static void fmt_num(char *buf, size_t size, double v, const char *f)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, f, v);
}

void print_tables(void)
{
	char a[16], b[16], c[16], d[16], e[16], f[16], g[16], h[16];

	printf("\ncreate-rate: each sandbox is create -> /bin/true -> exit observed -> removed.\n"
	       "sb/s: sandboxes completed per second of wall time, all workers together.\n"
	       "p50/p99/max: that whole cycle per sandbox, in ms. cpu: machine-wide busy CPU "
	       "(/proc/stat) per sandbox, in ms.\n\n");
	printf("machine: %ld CPUs online; load average before %s, after %s\n\n",
	       sysconf(_SC_NPROCESSORS_ONLN), load_before, load_after);
	printf("%-16s %-10s %7s %9s %8s %8s %8s %7s  %s\n", "runtime", "mode", "n", "sb/s", "p50",
	       "p99", "max", "cpu", "");
	for (int mi = 0; mi < N_MODES; mi++) {
		if (!opt.want_mode[mi])
			continue;
		for (size_t k = 0; k < ELEMENTSOF(run_order); k++) {
			enum runtime rt = run_order[k];
			struct cell *cl = &cells[rt][mi];

			if (!opt.want_rt[rt] || !cl->measured)
				continue;
			fmt_num(a, sizeof(a), cell_rate(cl), "%.1f");
			fmt_num(b, sizeof(b), samples_pct(&cl->cycle, 50), "%.2f");
			fmt_num(c, sizeof(c), samples_pct(&cl->cycle, 99), "%.2f");
			fmt_num(d, sizeof(d), samples_max(&cl->cycle), "%.2f");
			fmt_num(e, sizeof(e), cell_per_sb_ms(cl, cl->machine_cpu_s), "%.2f");
			printf("%-16s %-10s %7lu %9s %8s %8s %8s %7s  %s%s%s\n", rt_names[rt],
			       modes[mi].name, cl->n, a, b, c, d, e,
			       cl->errors ? "ERRORS " : "", cl->copied_from ? "= " : "",
			       cl->copied_from ? cl->copied_from : "");
		}
		printf("\n");
	}

	if (opt.want_rt[RT_WARREN] && !rt_skip[RT_WARREN]) {
		printf("warren in detail (ms). running: POST /v1/sandboxes until its 201 (the "
		       "sandbox's init has exec'd).\nexited: until the answer of POST "
		       ".../wait (sent after the 201; answered when warrend reaps the init).\n"
		       "daemon: created_at -> exited_at as warrend stamps them. warrend cpu: its "
		       "own utime+stime per sandbox;\n+children: the sandbox processes it reaped "
		       "(setup before exec, warren-init, true).\nseq, c2, c8: network mode host "
		       "(the host's network, as the peers have without a network namespace).\n\n");
		printf("%-10s %7s %7s %7s | %7s %7s %7s | %7s %7s | %8s %9s\n", "mode",
		       "run p50", "p99", "max", "exit p50", "p99", "max", "dmn p50", "p99",
		       "warrend", "+children");
		for (int mi = 0; mi < N_MODES; mi++) {
			struct cell *cl = &cells[RT_WARREN][mi];

			if (!opt.want_mode[mi] || !cl->measured || cl->copied_from)
				continue;
			fmt_num(a, sizeof(a), samples_pct(&cl->running, 50), "%.2f");
			fmt_num(b, sizeof(b), samples_pct(&cl->running, 99), "%.2f");
			fmt_num(c, sizeof(c), samples_max(&cl->running), "%.2f");
			fmt_num(d, sizeof(d), samples_pct(&cl->exited, 50), "%.2f");
			fmt_num(e, sizeof(e), samples_pct(&cl->exited, 99), "%.2f");
			fmt_num(f, sizeof(f), samples_max(&cl->exited), "%.2f");
			fmt_num(g, sizeof(g), samples_pct(&cl->exited_daemon, 50), "%.2f");
			fmt_num(h, sizeof(h), samples_pct(&cl->exited_daemon, 99), "%.2f");
			printf("%-10s %7s %7s %7s | %8s %7s %7s | %7s %7s | %8.3f %9.3f\n",
			       modes[mi].name, a, b, c, d, e, f, g, h,
			       cell_per_sb_ms(cl, cl->daemon_cpu_s),
			       cell_per_sb_ms(cl, cl->daemon_cpu_s + cl->daemon_children_cpu_s));
		}
		printf("(warrend cpu in ms per sandbox; kernel work done in kworkers, such as "
		       "network namespace teardown, is in neither column)\n\n");

		printf("warren's rate divided by each one's (above 1: warren is faster):\n");
		printf("%-10s", "mode");
		for (int rt = RT_CRUN; rt < _RT_MAX; rt++)
			if (opt.want_rt[rt] && !rt_skip[rt])
				printf(" %16s", rt_names[rt]);
		printf("\n");
		for (int mi = 0; mi < N_MODES; mi++) {
			double w = cell_rate(&cells[RT_WARREN][mi]);

			if (!opt.want_mode[mi] || isnan(w))
				continue;
			printf("%-10s", modes[mi].name);
			for (int rt = RT_CRUN; rt < _RT_MAX; rt++) {
				if (!opt.want_rt[rt] || rt_skip[rt])
					continue;
				fmt_num(a, sizeof(a), w / cell_rate(&cells[rt][mi]), "%.2fx");
				printf(" %16s", a);
			}
			printf("\n");
		}
		printf("\n");
	}

	for (int rt = 0; rt < _RT_MAX; rt++)
		if (opt.want_rt[rt] && rt_skip[rt])
			printf("%s: not measured: %s\n", rt_names[rt], rt_skip[rt]);
	for (int mi = 0; mi < N_MODES; mi++) {
		const char *note = cells[RT_BARE][mi].note;

		if (opt.want_mode[mi] && note) {
			printf("note: %s\n", note);
			break;
		}
	}

	/* Issue 3's targets, read at concurrency 8 with a network namespace per sandbox, the
	 * mode agents' sandboxes run in (network mode none or allowlist). */
	int c8 = mode_index("c8_netns");
	double w = cell_rate(&cells[RT_WARREN][c8]);

	if (opt.want_mode[c8] && !isnan(w)) {
		struct cell *wc = &cells[RT_WARREN][c8];
		struct {
			const char *what;
			enum runtime rt;
			double factor;
		} t[] = {
			{ ">= 5x crun", RT_CRUN, 5 },
			{ ">= 2.5x bwrap", RT_BWRAP, 2.5 },
			{ ">= the isolation floor", RT_ISOLATION, 1 },
			{ ">= 60% of the bare floor", RT_BARE, 0.6 },
		};
		double p99 = samples_pct(&wc->running, 99);

		printf("\nissue 3 targets at c8_netns:\n");
		for (size_t i = 0; i < ELEMENTSOF(t); i++) {
			double x = cell_rate(&cells[t[i].rt][c8]);

			if (isnan(x))
				printf("  %-28s not measured\n", t[i].what);
			else
				printf("  %-28s %s (warren %.1f/s, %s %.1f/s: %.2fx)\n",
				       t[i].what, w >= t[i].factor * x ? "met" : "MISSED", w,
				       rt_names[t[i].rt], x, w / x);
		}
		printf("  %-28s %s (%.2f ms)\n", "p99 create->running <= 5 ms",
		       p99 <= 5 ? "met" : "MISSED", p99);
	}
}

static json_t *num(double v)
{
	return isnan(v) ? json_null() : json_real(round(v * 1000.0) / 1000.0);
}

static void set_num(json_t *o, const char *key, double v)
{
	json_object_set_new(o, key, num(v));
}

static void json_warren_details(json_t *o, struct cell *cl)
{
	set_num(o, "create_running_p50_ms", samples_pct(&cl->running, 50));
	set_num(o, "create_running_p99_ms", samples_pct(&cl->running, 99));
	set_num(o, "create_running_max_ms", samples_max(&cl->running));
	set_num(o, "create_exited_p50_ms", samples_pct(&cl->exited, 50));
	set_num(o, "create_exited_p99_ms", samples_pct(&cl->exited, 99));
	set_num(o, "create_exited_max_ms", samples_max(&cl->exited));
	set_num(o, "create_exited_daemon_p50_ms", samples_pct(&cl->exited_daemon, 50));
	set_num(o, "create_exited_daemon_p99_ms", samples_pct(&cl->exited_daemon, 99));
	set_num(o, "warrend_cpu_ms_per_sandbox", cell_per_sb_ms(cl, cl->daemon_cpu_s));
	set_num(o, "warrend_with_children_cpu_ms_per_sandbox",
		cell_per_sb_ms(cl, cl->daemon_cpu_s + cl->daemon_children_cpu_s));
}

void print_json(void)
{
	json_t *root = json_object();

	for (int rt = 0; rt < _RT_MAX; rt++) {
		json_t *byrt = json_object();

		if (!opt.want_rt[rt] || rt_skip[rt]) {
			json_decref(byrt);
			continue;
		}
		for (int mi = 0; mi < N_MODES; mi++) {
			struct cell *cl = &cells[rt][mi];
			json_t *o;

			if (!opt.want_mode[mi] || !cl->measured)
				continue;
			o = json_pack("{s:o,s:o,s:o,s:o,s:I,s:I,s:o,s:o}",
				      "sandboxes_per_s", num(cell_rate(cl)),
				      "p50_ms", num(samples_pct(&cl->cycle, 50)),
				      "p99_ms", num(samples_pct(&cl->cycle, 99)),
				      "max_ms", num(samples_max(&cl->cycle)),
				      "count", (json_int_t)cl->n, "errors", (json_int_t)cl->errors,
				      "seconds", num(cl->seconds),
				      "machine_cpu_ms_per_sandbox",
				      num(cell_per_sb_ms(cl, cl->machine_cpu_s)));
			if (rt == RT_WARREN) {
				json_warren_details(o, cl);
				json_object_set_new(o, "network_mode",
						    json_string(modes[mi].netns ? "none" : "host"));
			}
			if (cl->copied_from)
				json_object_set_new(o, "same_as", json_string(cl->copied_from));
			if (cl->note)
				json_object_set_new(o, "note", json_string(cl->note));
			json_object_set_new(byrt, modes[mi].name, o);
		}
		json_object_set_new(root, rt_names[rt], byrt);
	}
	json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("\n");
	json_decref(root);
}


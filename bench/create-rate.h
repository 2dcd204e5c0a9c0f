/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* create-rate's shared state: the runtimes and modes it measures, one cell of figures per
 * pair, and the options. create-rate.c measures, create-rate-report.c prints. */

#include <stdbool.h>

#include "bench.h"

enum runtime {
	RT_WARREN,
	RT_CRUN,
	RT_RUNC,
	RT_BWRAP,
	RT_ISOLATION,
	RT_BARE,
	_RT_MAX,
};

extern const char *const rt_names[_RT_MAX];
/* The order the cells run in, within each mode: cheapest first, so a broken setup shows
 * quickly. */
extern const enum runtime run_order[_RT_MAX];

struct mode {
	const char *name;
	int conc;
	bool netns;
};

enum { N_MODES = 6 };
extern const struct mode modes[N_MODES];

struct cell {
	bool measured;
	const char *copied_from;  /* the cell's figures are those of another mode (see note) */
	const char *note;
	unsigned long n, errors;
	double seconds;
	struct samples cycle, running, exited, exited_daemon;
	double machine_cpu_s, daemon_cpu_s, daemon_children_cpu_s;
};

struct cr_options {
	double duration_s;
	unsigned long count;        /* per cell; 0: run for duration_s */
	unsigned warmup;            /* uncounted sandboxes per worker before each cell */
	bool json;
	bool want_rt[_RT_MAX];
	bool want_mode[N_MODES];
	const char *warrend, *image;
};

extern struct cr_options opt;
extern struct cell cells[_RT_MAX][N_MODES];
extern const char *rt_skip[_RT_MAX];  /* why a runtime is not measured */
extern char load_before[32], load_after[32];

/* Sandboxes per second, NAN when nothing was measured. */
double cell_rate(const struct cell *c);
/* CPU seconds spent during the cell, in ms per sandbox. */
double cell_per_sb_ms(const struct cell *c, double cpu_s);
int mode_index(const char *name);
/* The mode with the same concurrency and the other netns flavour, or -1. */
int twin_mode(int mi);

void print_tables(void);
void print_json(void);

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* What the benches share: clocks, latency samples, a scratch directory with the base image
 * mounted read-only, a private warrend, /proc readers and Ctrl-C handling.
 *
 * The benches are measuring tools, not the daemon: they print their progress to stderr,
 * exit with 1 on a failure that makes the figures meaningless, and undo what they made
 * (warrend, mounts, cgroups, the scratch directory) on every exit path they control,
 * including SIGINT and SIGTERM. */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"
#include "warren.h"

#ifndef BENCH_BUILD_ROOT
#define BENCH_BUILD_ROOT "."
#endif

/* --- clocks and samples -------------------------------------------------------------------- */

uint64_t now_ns(void);                 /* CLOCK_MONOTONIC */
double now_realtime(void);             /* CLOCK_REALTIME in seconds, the daemon's timestamps */
void sleep_us(unsigned us);
static inline double ns_to_ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* Latencies in milliseconds. Not thread safe: one per worker, merged at the end. */
struct samples {
	double *v;
	size_t n, cap;
	bool sorted;
};

int samples_add(struct samples *s, double ms);
int samples_merge(struct samples *dst, const struct samples *src);
/* Nearest-rank percentile (p in 0..100) of the samples; NAN when there are none. Sorts. */
double samples_pct(struct samples *s, double p);
double samples_max(struct samples *s);
double samples_mean(const struct samples *s);
void samples_done(struct samples *s);

/* --- interruption -------------------------------------------------------------------------- */

/* Set by SIGINT/SIGTERM. Loops stop at the next iteration and the normal clean-up runs. */
extern volatile sig_atomic_t bench_interrupted;
/* Installs the handlers (SA_RESTART, so blocking calls finish their iteration) and ignores
 * SIGPIPE. */
void bench_signals_install(void);

/* --- the scratch environment --------------------------------------------------------------- */

struct bench_env {
	char name[32];               /* "create-rate": names the directory and the cgroups */
	char dir[128];               /* /tmp/warren-bench-<name>-<pid>, mode 0711 */
	char image[1024];            /* base.erofs */
	char images_dir[1024];       /* its directory, for warrend --images */
	char warrend[1024];
	char rootfs[256];            /* <dir>/rootfs: the image mounted read-only, for the peers */
	bool rootfs_mounted;
	int log_fd;                  /* <dir>/peers.log: stderr of every peer runtime we run */
};

/* Where the build put warrend and the test image, from BENCH_BUILD_ROOT, overridden by the
 * --warrend and --image options (NULL: the default). */
int bench_env_init(struct bench_env *e, const char *name, const char *warrend,
		   const char *image);
/* Creates the directory; with mount_rootfs, also mounts the image read-only on rootfs with
 * mount(2) (not mount(8), which would set up a loop device, see FIELD-NOTES.md). */
int bench_env_setup(struct bench_env *e, bool mount_rootfs);
/* Unmounts, removes the directory (never crossing a mount), closes the log. Idempotent. */
void bench_env_cleanup(struct bench_env *e);
/* The last lines of the peers' stderr log, to explain a failed run. */
void bench_env_print_log_tail(const struct bench_env *e);

/* --- a private warrend --------------------------------------------------------------------- */

struct bench_daemon {
	pid_t pid;
	char sock[320];
	char dir[300];               /* its --state-dir, inside the env's directory */
	char cgname[64];             /* warren-bench-<name>-<pid> */
};

/* Starts warrend as the integration harness does, in its own process group (a Ctrl-C on the
 * terminal reaches only the bench, which then stops warrend in order), with extra arguments
 * (NULL-terminated, may be NULL); waits up to 10 s for its socket. */
int bench_daemon_start(struct bench_daemon *d, const struct bench_env *e,
		       const char *const *extra);
/* SIGTERM (warrend removes its sandboxes), waits up to 30 s, then SIGKILL. Returns warrend's
 * exit status, or -errno. Idempotent. Removes the daemon's cgroups if it left any. */
int bench_daemon_stop(struct bench_daemon *d);
/* A client connected to the daemon, with the reason on stderr when it fails. */
int bench_daemon_client(const struct bench_daemon *d, struct warren_client **ret);

/* --- /proc --------------------------------------------------------------------------------- */

/* utime+stime of the process (all its threads), and cutime+cstime (its reaped children), in
 * clock ticks. */
int proc_cpu_ticks(pid_t pid, uint64_t *ret_self, uint64_t *ret_children);
/* Machine-wide busy time (everything but idle and iowait) from /proc/stat, in clock ticks
 * summed over all CPUs. */
int proc_busy_ticks(uint64_t *ret);
double ticks_to_s(uint64_t ticks);
/* A field of /proc/meminfo ("MemAvailable"), in KiB, or -errno. */
long meminfo_kib(const char *field);
/* A "VmRSS"-style field of /proc/<pid>/status, in KiB, or -errno. */
long proc_status_kib(pid_t pid, const char *field);
/* "0.52 0.61 0.70" from /proc/loadavg: how busy the machine was around a measurement. */
const char *loadavg(char buf[32]);

/* --- cgroups ------------------------------------------------------------------------------- */

/* Where the cgroup2 hierarchy is mounted: /sys/fs/cgroup/unified on hybrid nodes, else
 * /sys/fs/cgroup. */
const char *cgroup2_mount(void);
/* rmdir()s path and every directory below it, deepest first; a missing path is fine. Only
 * for cgroup trees that the bench made (never walks across into other file systems). */
int cgroup_rmtree(const char *path);
/* cgroup_rmtree(<each hierarchy>/<name>), for the v2 mount and every v1 controller. */
void cgroup_rmtree_everywhere(const char *name);

/* --- options ------------------------------------------------------------------------------- */

int parse_uint_arg(const char *opt, const char *s, unsigned long max, unsigned long *ret);
int parse_double_arg(const char *opt, const char *s, double *ret);

/* The options every bench takes: --json, --warrend PATH, --image PATH and -h/--help. */
enum { BENCH_OPT_JSON = 0x400, BENCH_OPT_WARREND, BENCH_OPT_IMAGE };
#define BENCH_COMMON_LONGOPTS                                          \
	{ "json", no_argument, NULL, BENCH_OPT_JSON },                 \
	{ "warrend", required_argument, NULL, BENCH_OPT_WARREND },     \
	{ "image", required_argument, NULL, BENCH_OPT_IMAGE }

/* The default branch of a bench's option switch: takes a common option (0), prints the usage
 * and exits for -h, or prints it to stderr for anything else (-EINVAL). */
int bench_common_option(int c, const char *arg, bool *json, const char **warrend,
			const char **image, void (*usage)(FILE *));
/* After getopt: a bench takes no operands. */
int bench_no_operands(const char *prog, int argc, char **argv);

/* SPDX-License-Identifier: Apache-2.0 */
#include <linux/audit.h>
#include <stdio.h>
#include <string.h>

#include "audit-feed.h"
#include "audit.h"
#include "daemon.h"
#include "denial.h"
#include "log.h"
#include "peer.h"

#define AUDIT_RATE_LIMIT 2000      /* records a second, node-wide, when warrend sets it */
#define AUDIT_BACKLOG_LIMIT 8192
#define AUDIT_FLUSH_MS 100         /* Landlock denials whose event never completed */
#define AUDIT_PARK_MS 1000         /* how long a refusal may wait for its pid to be noted */
#define AUDIT_PARK_MAX 64

static const char *const source_names[_AUDIT_SOURCE_MAX] = {
	[AUDIT_SOURCE_NETLINK] = "netlink",
	[AUDIT_SOURCE_KMSG] = "kmsg",
};

void audit_feed_open(struct daemon *d)
{
	struct audit_kernel_status st;
	int r;

	r = audit_reader_open(AUDIT_SOURCE_NETLINK, &d->audit);
	if (r == -EPERM || r == -EPROTONOSUPPORT)
		r = audit_reader_open(AUDIT_SOURCE_KMSG, &d->audit);
	if (r < 0) {
		log_warn_errno(r, "no kernel audit records: seccomp and Landlock refusals will not "
				  "be recorded");
		return;
	}
	if (audit_kernel_get(&st) < 0 || st.enabled)
		return;
	/* Never let a full backlog block a process (the default waits up to 60 s), and bound
	 * the records per second before turning audit on. */
	if (audit_kernel_set(AUDIT_STATUS_BACKLOG_WAIT_TIME, 0) < 0 ||
	    (!st.rate_limit && audit_kernel_set(AUDIT_STATUS_RATE_LIMIT, AUDIT_RATE_LIMIT) < 0) ||
	    (st.backlog_limit < AUDIT_BACKLOG_LIMIT &&
	     audit_kernel_set(AUDIT_STATUS_BACKLOG_LIMIT, AUDIT_BACKLOG_LIMIT) < 0) ||
	    (r = audit_kernel_set(AUDIT_STATUS_ENABLED, 1)) < 0) {
		log_warn("could not turn the kernel's audit on: Landlock refusals will not be "
			 "recorded");
		return;
	}
	d->audit_enabled_by_us = true;
	log_info("turned the kernel's audit on (backlog_wait_time 0, rate limit %u/s) so that "
		 "Landlock refusals are recorded; it goes off again when warrend stops",
		 st.rate_limit ? st.rate_limit : AUDIT_RATE_LIMIT);
}

void audit_feed_close(struct daemon *d)
{
	if (d->audit_enabled_by_us && audit_kernel_set(AUDIT_STATUS_ENABLED, 0) < 0)
		log_warn("could not turn the kernel's audit off again");
	d->audit_enabled_by_us = false;
	d->audit = audit_reader_free(d->audit);
}

json_t *audit_feed_info(const struct daemon *d)
{
	struct audit_reader_stats st = {};

	if (!d->audit)
		return json_pack("{s:b}", "records", 0);
	audit_reader_stats(d->audit, &st);
	return json_pack("{s:b,s:s,s:b,s:I,s:I}", "records", 1, "source",
			 source_names[audit_reader_source(d->audit)], "enabled_by_warren",
			 d->audit_enabled_by_us, "denials", (json_int_t)st.denials, "lost",
			 (json_int_t)st.overflows);
}

/* Records the refusal a of sandbox id. */
static void record(const struct audit_denial *a, const char *id)
{
	char action[96], detail[192];
	static const enum denial_layer layers[_AUDIT_LAYER_MAX] = {
		[AUDIT_LAYER_SECCOMP] = DENIAL_SECCOMP,
		[AUDIT_LAYER_LANDLOCK] = DENIAL_LANDLOCK,
		[AUDIT_LAYER_APPARMOR] = DENIAL_APPARMOR,
	};

	switch (a->layer) {
	case AUDIT_LAYER_SECCOMP:
		if (a->syscall_name[0])
			snprintf(action, sizeof(action), "syscall %s", a->syscall_name);
		else
			snprintf(action, sizeof(action), "syscall %d", a->syscall);
		snprintf(detail, sizeof(detail), "%s; pid %d (%.31s) %.120s", a->action, a->pid,
			 a->comm, a->exe);
		break;
	case AUDIT_LAYER_LANDLOCK:
		if (a->target_pid)
			snprintf(action, sizeof(action), "%.60s %d (%.20s)", a->blockers,
				 a->target_pid, a->target_comm);
		else
			snprintf(action, sizeof(action), "%.40s %.54s", a->blockers, a->path);
		snprintf(detail, sizeof(detail), "syscall %s; pid %d (%s)",
			 a->syscall_name[0] ? a->syscall_name : "?", a->pid, a->comm);
		break;
	default:
		snprintf(action, sizeof(action), "%.31s %.63s", a->operation, a->path);
		snprintf(detail, sizeof(detail), "profile %s, denied %s; pid %d (%s)", a->profile,
			 a->mask, a->pid, a->comm);
	}
	denial_record(id, layers[a->layer], action, detail);
}

/* Refusals of processes that were gone before their sandbox was known: an exec's pid reaches
 * warrend in a message from the sandbox's init, which may be read after the kernel's record of
 * what the exec did and its exit. Retried at each flush for AUDIT_PARK_MS. */
static struct parked {
	struct audit_denial a;
	unsigned flushes_left;
} parked[AUDIT_PARK_MAX];
static size_t n_parked;

/* The sandbox of the refused process (or of the one that made its Landlock domain): as
 * sandbox_of_pid(). */
static int sandbox_of_denial(const struct daemon *d, const struct audit_denial *a, char id[16])
{
	pid_t pid = a->pid ? a->pid : a->domain_pid;

	return pid > 0 ? sandbox_of_pid(d, pid, id) : 0;
}

static void on_denial(const struct audit_denial *a, void *userdata)
{
	const struct daemon *d = userdata;
	char id[16];
	/* Only refusals of sandboxes: the node's own processes are not ours to judge. */
	int r = sandbox_of_denial(d, a, id);

	if (r > 0)
		record(a, id);
	else if (r == -ESRCH && n_parked < AUDIT_PARK_MAX)
		parked[n_parked++] = (struct parked){ .a = *a,
						      .flushes_left = AUDIT_PARK_MS / AUDIT_FLUSH_MS };
}

static void retry_parked(const struct daemon *d)
{
	size_t kept = 0;

	for (size_t i = 0; i < n_parked; i++) {
		const struct audit_denial *a = &parked[i].a;
		char id[16];

		if (sandbox_of_denial(d, a, id) > 0)
			record(a, id);
		else if (--parked[i].flushes_left > 0)
			parked[kept++] = parked[i];
	}
	n_parked = kept;
}

static char buf[65536];
static struct io_op recv_op, flush_op;
static struct __kernel_timespec flush_ts;

static void audit_recv(struct loop *l)
{
	io_uring_prep_read(loop_sqe(l, &recv_op), audit_reader_fd(l->d->audit), buf, sizeof(buf),
			   -1);
}

static void on_recv(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	if (res > 0)
		audit_reader_feed(l->d->audit, buf, res, on_denial, l->d);
	else if (res == -ENOBUFS || res == -EPIPE)
		audit_reader_overflowed(l->d->audit);
	else if (res < 0 && res != -EAGAIN && res != -EINTR) {
		if (res != -ECANCELED)
			log_warn_errno(res, "reading audit records; no more will be recorded");
		return;
	}
	if (!l->draining)
		audit_recv(l);
}

static void on_flush(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	audit_reader_flush(l->d->audit, AUDIT_FLUSH_MS, on_denial, l->d);
	retry_parked(l->d);
	if (!l->draining)
		loop_timer(l, &flush_op, &flush_ts, AUDIT_FLUSH_MS);
}

void audit_feed_start(struct loop *l)
{
	if (!l->d->audit)
		return;
	io_op_init(&recv_op, on_recv);
	io_op_init(&flush_op, on_flush);
	audit_recv(l);
	loop_timer(l, &flush_op, &flush_ts, AUDIT_FLUSH_MS);
}

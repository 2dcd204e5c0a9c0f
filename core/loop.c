/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "daemon.h"
#include "log.h"
#include "loop.h"
#include "syscall.h"

#define LOOP_SQ_ENTRIES 1024
#define LOOP_CQ_ENTRIES 8192

/* The kernel caps a registered file table at RLIMIT_NOFILE (the soft limit, checked when it is
 * registered; warrend raised it to the hard limit at start-up) and at IORING_MAX_FIXED_FILES.
 * Each ring has its own, so the loops together hold n_loops times that. The table costs the
 * kernel 8 bytes a slot, this loop 4 (the free stack). */
#define LOOP_FILES_MAX (1u << 20)

static int loop_files_init(struct loop *l)
{
	struct rlimit rl;
	unsigned n = 1024;
	int r;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur < LOOP_FILES_MAX ? (unsigned)rl.rlim_cur : LOOP_FILES_MAX;
	l->files_free = malloc(n * sizeof(*l->files_free));
	if (!l->files_free)
		return -ENOMEM;
	r = io_uring_register_files_sparse(&l->ring, n);
	if (r < 0) {
		free(l->files_free);
		l->files_free = NULL;
		return log_errno(r, "loop %u: registering a file table of %u (needs Linux 5.19)",
				 l->idx, n);
	}
	/* Slot 0 on top: the lowest slots are used first. */
	for (unsigned i = 0; i < n; i++)
		l->files_free[i] = (int)(n - 1 - i);
	l->n_files = l->n_files_free = n;
	return 0;
}

int loop_file_install(struct loop *l, int fd)
{
	int slot, r;

	if (!l->n_files_free) {
		safe_close(fd);
		return -ENFILE;
	}
	slot = l->files_free[l->n_files_free - 1];
	r = io_uring_register_files_update(&l->ring, (unsigned)slot, &fd, 1);
	/* The table holds its own reference now; the descriptor is not needed. */
	safe_close(fd);
	if (r < 0)
		return r;
	if (r != 1)
		return -EIO;
	l->n_files_free--;
	return slot;
}

int loop_file_remove(struct loop *l, int slot)
{
	int none = -1, r;

	if (slot < 0)
		return -1;
	/* An SQE in flight on the slot holds the file until it completes: removing it here can
	 * neither free a file under the kernel nor hand the slot's next file to that SQE. */
	r = io_uring_register_files_update(&l->ring, (unsigned)slot, &none, 1);
	if (r < 0) {
		/* Cannot happen for a slot we filled; leaking the slot is the safe answer. */
		log_errno(r, "loop %u: emptying registered file %d", l->idx, slot);
		return -1;
	}
	l->files_free[l->n_files_free++] = slot;
	return -1;
}

int loop_init(struct loop *l, struct daemon *d, unsigned idx)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			 IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL,
		.cq_entries = LOOP_CQ_ENTRIES,
	};
	int r;

	l->d = d;
	l->idx = idx;
	r = io_uring_queue_init_params(LOOP_SQ_ENTRIES, &l->ring, &p);
	if (r < 0)
		return log_errno(r, "io_uring setup for loop %u (needs Linux 6.1)", idx);
	r = loop_files_init(l);
	if (r < 0) {
		io_uring_queue_exit(&l->ring);
		return r;
	}
	return 0;
}

void loop_done(struct loop *l)
{
	io_uring_queue_exit(&l->ring);
	free(l->files_free);
	l->files_free = NULL;
	l->n_files = l->n_files_free = 0;
}

static struct io_uring_sqe *get_sqe(struct loop *l)
{
	struct io_uring_sqe *sqe;

	while (!(sqe = io_uring_get_sqe(&l->ring)))
		io_uring_submit(&l->ring);
	return sqe;
}

struct io_uring_sqe *loop_sqe(struct loop *l, struct io_op *op)
{
	struct io_uring_sqe *sqe = get_sqe(l);

	io_uring_sqe_set_data(sqe, op);
	op->busy++;
	return sqe;
}

struct io_uring_sqe *loop_sqe_noop(struct loop *l)
{
	struct io_uring_sqe *sqe = get_sqe(l);

	io_uring_sqe_set_data64(sqe, 0);
	return sqe;
}

void loop_send(struct loop *from, struct loop *to, struct io_op *op)
{
	struct io_uring_sqe *sqe = loop_sqe_noop(from);

	/* The target's CQE carries op as user_data; busy is accounted for there. */
	op->busy++;
	io_uring_prep_msg_ring(sqe, to->ring.ring_fd, 0, (uint64_t)(uintptr_t)op, 0);
	io_uring_submit(&from->ring);
}

void loop_timer(struct loop *l, struct io_op *op, struct __kernel_timespec *ts, uint64_t ms)
{
	ts->tv_sec = ms / 1000;
	ts->tv_nsec = (ms % 1000) * 1000000;
	io_uring_prep_timeout(loop_sqe(l, op), ts, 0, 0);
}

void loop_cancel(struct loop *l, struct io_op *op)
{
	if (op->busy)
		io_uring_prep_cancel(loop_sqe_noop(l), op, IORING_ASYNC_CANCEL_ALL);
}

void loop_waitid_pid(struct loop *l, struct io_op *op, pid_t pid, siginfo_t *info)
{
	struct io_uring_sqe *sqe = loop_sqe(l, op);

	/* WNOWAIT: with a plain WEXITED the kernel would reap the child (and free its pid for
	 * reuse) inside io_uring_enter, before this loop sees the completion, so a kill(pid)
	 * made meanwhile by an earlier completion of the same batch could reach another
	 * process. Left a zombie, the pid stays the child's until the caller reaps it.
	 * FIELD-NOTES: fd = id, len = idtype, file_index = options, addr2 = siginfo. */
	io_uring_prep_rw(WARREN_IORING_OP_WAITID, sqe, (int)pid, NULL, P_PID, 0);
	sqe->file_index = WEXITED | WNOWAIT;
	sqe->addr2 = (uint64_t)(uintptr_t)info;
}

struct loop *loop_for_create(struct loop *l)
{
	struct loop *best = l;

	for (unsigned i = 0; i < l->d->n_loops; i++)
		if (atomic_load_explicit(&l->d->loops[i].n_sandboxes, memory_order_relaxed) <
		    atomic_load_explicit(&best->n_sandboxes, memory_order_relaxed))
			best = &l->d->loops[i];
	return best;
}

struct loop *loop_for_id(struct daemon *d, const char *id)
{
	unsigned idx = 0;

	for (int i = 0; i < 2; i++) {
		char c = id[i];
		unsigned v;

		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else
			return NULL;
		idx = idx * 16 + v;
	}
	return idx < d->n_loops ? &d->loops[idx] : NULL;
}

int loop_run(struct loop *l)
{
	while (!l->stop) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;
		int r;

		r = io_uring_submit_and_wait(&l->ring, 1);
		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
			return log_errno(r, "loop %u: io_uring_enter", l->idx);

		io_uring_for_each_cqe(&l->ring, head, cqe) {
			struct io_op *op = io_uring_cqe_get_data(cqe);

			n++;
			if (!op)
				continue;
			/* A multishot op stays busy while the kernel says more will come. */
			if (!(cqe->flags & IORING_CQE_F_MORE) && op->busy > 0)
				op->busy--;
			op->fn(l, op, cqe->res, cqe->flags);
		}
		io_uring_cq_advance(&l->ring, n);
		if (l->draining && !l->n_sandboxes && !l->n_conns)
			l->stop = true;
	}
	return 0;
}

double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double now_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <liburing.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* One event loop per core, each owning one io_uring (SINGLE_ISSUER | DEFER_TASKRUN). A loop
 * touches only its own objects; loops hand work to each other with IORING_OP_MSG_RING.
 *
 * Completion tokens: every SQE's user_data is a pointer to a `struct io_op` embedded in the
 * object that owns the operation (a connection, a sandbox, an exec). The op names its handler;
 * `busy` counts the SQEs in flight for it, so an owner is freed only once all of its ops have
 * completed: a late completion can never reach freed memory. user_data 0 marks completions that
 * need no handling (cancellations, the sender's side of MSG_RING). */

/* Opcodes newer than Debian 12's liburing 2.3 headers. */
#define WARREN_IORING_OP_WAITID 50

struct loop;
struct io_op;
struct daemon;

typedef void (*io_op_fn)(struct loop *l, struct io_op *op, int res, uint32_t cqe_flags);

struct io_op {
	io_op_fn fn;
	unsigned busy;
};

struct loop {
	struct io_uring ring;
	unsigned idx;
	pthread_t thread;
	struct daemon *d;
	bool stop;
	bool draining;                   /* stopping: exit once no sandbox or conn is left */
	atomic_uint n_sandboxes;         /* read by the other loops to place creates */
	struct sandbox_table *sandboxes; /* owned by sandbox.c */
	struct conn *conns;              /* open connections, for shutdown; owned by http.c */
	unsigned n_conns;
	struct io_op accept_op;
	struct io_op stop_op;            /* a MSG_RING from loop 0 asks this loop to stop */

	/* The ring's registered (direct) file table: long-lived descriptors that only this loop
	 * reads or writes (a sandbox's log pipe) live here instead of in the process's fd table,
	 * which RLIMIT_NOFILE caps for the whole daemon. Each ring has a table of its own. */
	unsigned n_files;                /* its size: RLIMIT_NOFILE at loop start */
	int *files_free;                 /* a stack of the free slots */
	unsigned n_files_free;

	/* Watches this loop's spawn zygote for dying (core/zygotes.c); gen counts its restarts,
	 * watch_gen is the one the pending watch is for. */
	struct io_op zygote_op;
	unsigned zygote_gen, zygote_watch_gen;
};

static inline void io_op_init(struct io_op *op, io_op_fn fn)
{
	op->fn = fn;
	op->busy = 0;
}

/* Creates the ring. Call on the thread that will run the loop (SINGLE_ISSUER). */
int loop_init(struct loop *l, struct daemon *d, unsigned idx);
void loop_done(struct loop *l);
/* Runs until l->stop. */
int loop_run(struct loop *l);

/* An SQE whose completion goes to op (op->busy is incremented). Never NULL: flushes the SQ
 * when it is full. Loop thread only. */
struct io_uring_sqe *loop_sqe(struct loop *l, struct io_op *op);
/* An SQE whose completion is ignored. */
struct io_uring_sqe *loop_sqe_noop(struct loop *l);

/* Posts op on loop `to`: its handler runs there with res = 0. `op` must stay valid until then
 * and belongs to the target loop from now on. Any loop thread. */
void loop_send(struct loop *from, struct loop *to, struct io_op *op);

/* A one-shot timer: op's handler runs after ms with res -ETIME (or -ECANCELED). ts must live
 * as long as the op is busy. */
void loop_timer(struct loop *l, struct io_op *op, struct __kernel_timespec *ts, uint64_t ms);
/* Asks the kernel to cancel every SQE in flight for op. */
void loop_cancel(struct loop *l, struct io_op *op);

/* IORING_OP_WAITID (Linux 6.7)(P_PID, pid, WEXITED | WNOWAIT): completes once the child pid has exited,
 * with its siginfo in info, and leaves it a zombie, so that its pid stays reserved until the
 * caller reaps it (waitid(P_PID, pid, WEXITED | WNOHANG)) on this loop's thread. pid must be
 * a child of the daemon that nothing else reaps. */
void loop_waitid_pid(struct loop *l, struct io_op *op, pid_t pid, siginfo_t *info);

/* Moves fd into a free slot of the ring's registered file table and closes fd (in every
 * case). Returns the slot, for SQEs with IOSQE_FIXED_FILE, or -ENFILE if the table is full.
 * Loop thread (SINGLE_ISSUER: io_uring_register is the submitter's). */
int loop_file_install(struct loop *l, int fd);
/* Empties the slot (the file is closed once no SQE in flight still holds it); slot < 0 is a
 * no-op. Returns -1, the "no slot" value. Loop thread. */
int loop_file_remove(struct loop *l, int slot);

/* The loop that owns a sandbox id (ids start with the loop index as two hex digits). */
struct loop *loop_for_id(struct daemon *d, const char *id);
/* Where a new sandbox goes: l, unless another loop holds fewer sandboxes. Each loop has its
 * own core and spawn zygote, so creates arriving on one connection spread over them. */
struct loop *loop_for_create(struct loop *l);

/* Monotonic and wall clock time in seconds. */
double now_mono(void);
double now_wall(void);

/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "daemon.h"
#include "log.h"
#include "loop.h"

/* The loops' spawn zygotes (backends/container/zygote.c): one per loop, started at start-up
 * and again by a loop whose zygote died. */

void daemon_zygote_stop(struct daemon *d, unsigned idx)
{
	if (d->zygotes[idx] <= 0)
		return;
	d->zygotes[idx] = safe_close(d->zygotes[idx]);
	/* It holds no state: no need to wait for it to see the socket close (a ring being torn
	 * down may still hold our end). Our child, and nobody else reaps it: the loops wait for
	 * sandbox inits by pid only. */
	(void)kill(d->zygote_pids[idx], SIGKILL);
	while (waitpid(d->zygote_pids[idx], NULL, 0) < 0 && errno == EINTR)
		;
}

int daemon_zygote_start(struct daemon *d, unsigned idx)
{
	int r;

	daemon_zygote_stop(d, idx);
	/* What spawns reach by path: the images' mounts (rootfs) and the scratch directory. */
	r = container_zygote_start(d->zygote_path,
				   (const char *const[]){ d->image_mount_dir, d->scratch_dir, NULL },
				   &d->zygote_pids[idx]);
	if (r < 0)
		return log_errno(r, "starting the spawn zygote %s (it is installed beside "
				 "warren-init: pass --init PATH)", d->zygote_path);
	d->zygotes[idx] = r;
	return 0;
}

int loop_zygote_restart(struct loop *l)
{
	int r;

	l->zygote_gen++;
	r = daemon_zygote_start(l->d, l->idx);
	if (r < 0)
		log_warn("loop %u: no spawn zygote: its sandboxes are cloned from warrend itself",
			 l->idx);
	loop_zygote_watch(l);
	return r;
}

static void on_zygote_gone(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	if (res < 0 || atomic_load(&l->d->stopping))
		return; /* cancelled: the loop is ending */
	/* A watch of a zygote that a create has already replaced is over, nothing more. */
	if (l->zygote_watch_gen != l->zygote_gen) {
		loop_zygote_watch(l);
		return;
	}
	log_warn("loop %u: its spawn zygote (pid %d) died; starting another", l->idx,
		 (int)l->d->zygote_pids[l->idx]);
	(void)loop_zygote_restart(l);
}

void loop_zygote_watch(struct loop *l)
{
	int fd = l->d->zygotes[l->idx];

	if (fd <= 0 || l->zygote_op.busy)
		return;
	if (!l->zygote_op.fn)
		io_op_init(&l->zygote_op, on_zygote_gone);
	l->zygote_watch_gen = l->zygote_gen;
	/* Only the hang-up: the answers to spawns are read synchronously (zygote_spawn()). */
	io_uring_prep_poll_add(loop_sqe(l, &l->zygote_op), fd, POLLRDHUP);
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>

#include "http.h"
#include "sandbox.h"
#include "sandbox-wait.h"

/* One waiting request, linked into its sandbox's list until it is answered or its client
 * hangs up. */
struct sandbox_waiter {
	struct sandbox_waiter *next, **pprev;
	struct conn *conn;
};

/* Takes w out of its sandbox's list and frees it; the conn is nobody's handler again. */
static void waiter_free(struct sandbox_waiter *w)
{
	*w->pprev = w->next;
	if (w->next)
		w->next->pprev = w->pprev;
	w->conn->on_close = NULL;
	w->conn->handler = NULL;
	free(w);
}

/* The client hung up, or warrend is stopping and closes every conn. */
static void waiter_conn_closed(struct conn *c)
{
	waiter_free(c->handler);
}

void sandbox_wait(struct sandbox *s, struct conn *c)
{
	struct sandbox_waiter *w;

	if (s->state == SANDBOX_EXITED) {
		conn_respond_json(c, 200, sandbox_to_json(s));
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		conn_respond_error(c, 500, "internal", "out of memory");
		return;
	}
	w->conn = c;
	w->next = s->waiters;
	if (w->next)
		w->next->pprev = &w->next;
	w->pprev = &s->waiters;
	s->waiters = w;
	c->handler = w;
	c->on_close = waiter_conn_closed;
	/* Nothing reads the socket while the request waits, which may be for hours. */
	conn_watch_hangup(c);
}

void sandbox_wait_answer(struct sandbox *s)
{
	struct sandbox_waiter *w;

	while ((w = s->waiters)) {
		struct conn *c = w->conn;

		waiter_free(w);
		conn_respond_json(c, 200, sandbox_to_json(s));
	}
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "backend.h"
#include "log.h"
#include "nspool.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool running, stop;
	struct ns_pair *v;
	unsigned n, target;
	uid_t base;
	uint32_t count;
} P = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static int make_pair(struct ns_pair *ret)
{
	int u, n;

	u = container_userns_new(P.base, P.count);
	if (u < 0)
		return u;
	n = container_netns_new();
	if (n < 0) {
		safe_close(u);
		return n;
	}
	*ret = (struct ns_pair){ .userns = u, .netns = n };
	return 0;
}

static void *pool_thread(void *arg)
{
	pthread_mutex_lock(&P.lock);
	while (!P.stop) {
		struct ns_pair pair;
		int r;

		if (P.n >= P.target) {
			pthread_cond_wait(&P.wake, &P.lock);
			continue;
		}
		pthread_mutex_unlock(&P.lock);
		r = make_pair(&pair);
		pthread_mutex_lock(&P.lock);
		if (r < 0) {
			/* Creates make their own meanwhile; say it once, then wait to be asked. */
			log_warn_errno(r, "namespace pool: making a pair");
			pthread_cond_wait(&P.wake, &P.lock);
			continue;
		}
		P.v[P.n++] = pair;
	}
	pthread_mutex_unlock(&P.lock);
	return NULL;
}

int nspool_start(uid_t uid_base, uint32_t uid_count, unsigned target)
{
	int r;

	P.v = calloc(target, sizeof(*P.v));
	if (!P.v)
		return -ENOMEM;
	P.target = target;
	P.base = uid_base;
	P.count = uid_count;
	r = -pthread_create(&P.thread, NULL, pool_thread, NULL);
	if (r < 0)
		return r;
	P.running = true;
	return 0;
}

void nspool_stop(void)
{
	if (P.running) {
		pthread_mutex_lock(&P.lock);
		P.stop = true;
		pthread_cond_signal(&P.wake);
		pthread_mutex_unlock(&P.lock);
		pthread_join(P.thread, NULL);
		P.running = false;
	}
	for (unsigned i = 0; i < P.n; i++) {
		safe_close(P.v[i].userns);
		safe_close(P.v[i].netns);
	}
	free(P.v);
	P.v = NULL;
	P.n = 0;
}

int nspool_take(struct ns_pair *ret)
{
	bool got = false;

	pthread_mutex_lock(&P.lock);
	if (P.n > 0) {
		*ret = P.v[--P.n];
		got = true;
	}
	pthread_cond_signal(&P.wake);
	pthread_mutex_unlock(&P.lock);
	return got ? 0 : make_pair(ret);
}

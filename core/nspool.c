/* SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "backend.h"
#include "log.h"
#include "nspool.h"

/* Two stocks, user namespaces and network namespaces, so that a sandbox on the host's network
 * takes no network namespace it would throw away. */
enum { USERNS, NETNS, _KINDS };

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool running, stop, failing;
	int *v[_KINDS];
	unsigned n[_KINDS], target;
	uid_t base;
	uint32_t count;
} P = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static int make(int kind)
{
	return kind == USERNS ? container_userns_new(P.base, P.count) : container_netns_new();
}

/* The stock furthest below its target, or -1 if both are full. */
static int neediest(void)
{
	int k = P.n[USERNS] <= P.n[NETNS] ? USERNS : NETNS;

	return P.n[k] < P.target ? k : -1;
}

static void *pool_thread(void *arg)
{
	pthread_mutex_lock(&P.lock);
	while (!P.stop) {
		int kind = neediest(), fd;

		if (kind < 0 || P.failing) {
			pthread_cond_wait(&P.wake, &P.lock);
			P.failing = false;
			continue;
		}
		pthread_mutex_unlock(&P.lock);
		fd = make(kind);
		pthread_mutex_lock(&P.lock);
		if (fd < 0) {
			/* Creates make their own meanwhile; say it once, then wait to be asked. */
			log_warn_errno(fd, "namespace pool: making a %s namespace",
				       kind == USERNS ? "user" : "network");
			P.failing = true;
			continue;
		}
		P.v[kind][P.n[kind]++] = fd;
	}
	pthread_mutex_unlock(&P.lock);
	return NULL;
}

int nspool_start(uid_t uid_base, uint32_t uid_count, unsigned target)
{
	int r;

	for (int k = 0; k < _KINDS; k++) {
		P.v[k] = calloc(target, sizeof(int));
		if (!P.v[k])
			return -ENOMEM;
	}
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
	for (int k = 0; k < _KINDS; k++) {
		for (unsigned i = 0; i < P.n[k]; i++)
			safe_close(P.v[k][i]);
		free(P.v[k]);
		P.v[k] = NULL;
		P.n[k] = 0;
	}
}

/* One of the stock, or one made now. */
static int take(int kind)
{
	int fd = -1;

	pthread_mutex_lock(&P.lock);
	if (P.n[kind] > 0)
		fd = P.v[kind][--P.n[kind]];
	pthread_cond_signal(&P.wake);
	pthread_mutex_unlock(&P.lock);
	return fd >= 0 ? fd : make(kind);
}

int nspool_take(bool netns, struct ns_pair *ret)
{
	int u = take(USERNS), n = -EBADF;

	if (u < 0)
		return u;
	if (netns) {
		n = take(NETNS);
		if (n < 0) {
			safe_close(u);
			return n;
		}
	}
	*ret = (struct ns_pair){ .userns = u, .netns = n };
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* A sandbox's user namespace (id maps written) and network namespace (loopback up), made
 * ahead by a background thread: creating a network namespace is the largest single cost of a
 * spawn (docs/performance.md). A create takes a pair from the pool, or makes one on the spot
 * when the pool is empty. */
struct ns_pair {
	int userns;
	int netns;
};

/* Starts the thread that keeps `target` pairs ready. Main thread, at start-up. */
int nspool_start(uid_t uid_base, uint32_t uid_count, unsigned target);
/* Stops it and closes what is left. Main thread, at shutdown. */
void nspool_stop(void);
/* A pair, owned by the caller. Any loop thread. */
int nspool_take(struct ns_pair *ret);

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Sandboxes' user namespaces (id maps written) and network namespaces (loopback up), made
 * ahead by a background thread: creating a network namespace is the largest single cost of a
 * spawn (docs/performance.md). A create takes from the pool, or makes one on the spot when the
 * pool is empty. */
struct ns_pair {
	int userns;
	int netns;   /* -EBADF when none was asked for */
};

/* Starts the thread that keeps `target` of each kind ready. Main thread, at start-up. */
int nspool_start(uid_t uid_base, uint32_t uid_count, unsigned target);
/* Stops it and closes what is left. Main thread, at shutdown. */
void nspool_stop(void);
/* A user namespace and, if netns, a network namespace, owned by the caller. Any loop thread. */
int nspool_take(bool netns, struct ns_pair *ret);

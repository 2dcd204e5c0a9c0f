/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <sys/types.h>

struct daemon;

/* Which sandbox a host pid belongs to, read from its cgroup2 path (/<cgroup-name>/<id>):
 * 1 with the id in ret_id, 0 if it belongs to none, or -errno (-ESRCH: the process is gone). */
int sandbox_of_pid(const struct daemon *d, pid_t pid, char ret_id[16]);
/* The same for the process at the other end of a Unix socket (SO_PEERCRED). */
int sandbox_of_peer(const struct daemon *d, int fd, char ret_id[16]);

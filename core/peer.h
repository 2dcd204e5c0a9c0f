/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <sys/types.h>

struct daemon;

/* Which sandbox a host pid belongs to, read from its cgroup2 path (/<cgroup-name>/<id>), or
 * for a process that is gone, from pid_note(): 1 with the id in ret_id, 0 if it belongs to
 * none, -ESRCH if it is gone and not (yet) noted, or another -errno. */
int sandbox_of_pid(const struct daemon *d, pid_t pid, char ret_id[16]);
/* Remembers that pid is a process of sandbox id (its init, an exec). The kernel's audit records
 * of a refusal may arrive after the process is gone and reaped; sandbox_of_pid() then falls back
 * to this. Any thread. */
void pid_note(pid_t pid, const char *id);

/* The same for the process at the other end of a Unix socket (SO_PEERCRED). */
int sandbox_of_peer(const struct daemon *d, int fd, char ret_id[16]);

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <sys/types.h>

/* What /proc shows of a process, for the tests and the benches. */

/* pid's open descriptors (entries of /proc/PID/fd), or -errno. */
int proc_count_fds(pid_t pid);
/* Files registered in the tables of all of pid's io_uring instances (warrend: one ring per
 * loop), from each ring's fdinfo. The kernel lists a ring's files only when it gets the ring's
 * lock at once, so each ring is read up to `tries` times and its largest count kept. -errno
 * if pid's fds cannot be listed. */
long proc_ring_files(pid_t pid, int tries);

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Raw system calls that Debian 12's glibc does not wrap. Each returns a negative errno on
 * failure (-ENOSYS where the kernel lacks the call) and is async-signal-safe, so a clone3
 * child of the threaded daemon may use them before exec. */

#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif

static inline long sys_ret(long r)
{
	return r < 0 ? -errno : r;
}

/* clone3: Linux 5.3; CLONE_INTO_CGROUP: 5.7. Returns the child's pid in the parent, 0 in the
 * child. The child runs on a copy of the caller's stack, like fork(). */
static inline pid_t sys_clone3(struct clone_args *args)
{
	return (pid_t)sys_ret(syscall(__NR_clone3, args, sizeof(*args)));
}

/* pidfd_open: Linux 5.3. */
static inline int sys_pidfd_open(pid_t pid, unsigned int flags)
{
	return (int)sys_ret(syscall(__NR_pidfd_open, pid, flags));
}

/* pidfd_send_signal: Linux 5.1. */
static inline int sys_pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned int flags)
{
	return (int)sys_ret(syscall(__NR_pidfd_send_signal, pidfd, sig, info, flags));
}

/* pivot_root: no glibc wrapper. */
static inline int sys_pivot_root(const char *new_root, const char *put_old)
{
	return (int)sys_ret(syscall(__NR_pivot_root, new_root, put_old));
}

/* close_range: Linux 5.9 (CLOSE_RANGE_CLOEXEC: 5.11). */
static inline int sys_close_range(unsigned int first, unsigned int last, unsigned int flags)
{
	return (int)sys_ret(syscall(__NR_close_range, first, last, flags));
}

/* execveat: Linux 3.19; glibc 2.34 wraps it but static helpers want the raw call. */
static inline int sys_execveat(int dirfd, const char *path, char *const argv[],
			       char *const envp[], int flags)
{
	return (int)sys_ret(syscall(__NR_execveat, dirfd, path, argv, envp, flags));
}

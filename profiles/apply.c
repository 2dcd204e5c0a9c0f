/* SPDX-License-Identifier: Apache-2.0 */
/* What a spawn child applies of a profile before its exec: the compiled seccomp filters and
 * the AppArmor profile for the exec. Raw system calls only, no allocation (STYLE.md 23), and
 * no library: the static spawn zygote (backends/container/zygote.c) links this file alone of
 * profiles/ besides landlock.c. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"
#include "profile.h"

static int load_one(const struct sock_fprog *prog, unsigned long flags)
{
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog) < 0)
		return -errno;
	return 0;
}

int profile_seccomp_load(const struct profile_seccomp *p)
{
	int r;

	/* no_new_privs is what lets a process load a filter without CAP_SYS_ADMIN in the
	 * init namespace, and it keeps setuid binaries in the image from gaining privileges. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	r = load_one(&p->logged, SECCOMP_FILTER_FLAG_LOG);
	/* A kernel without the flag (before 4.14) still gets the filter, unlogged. */
	if (r == -EINVAL)
		r = load_one(&p->logged, 0);
	if (r < 0 || p->quiet.len == 0)
		return r;
	return load_one(&p->quiet, 0);
}

int profile_apparmor_exec(const char *profile)
{
	static const char *const files[] = { "/proc/self/attr/apparmor/exec", "/proc/self/attr/exec" };
	char cmd[256] = "exec ";
	size_t n = strlen(profile);
	int fd = -1;

	if (n == 0 || n + 5 >= sizeof(cmd))
		return -EINVAL;
	memcpy(cmd + 5, profile, n + 1);
	/* The apparmor/ directory exists from Linux 5.8, next to other LSMs' attributes; the
	 * old file is whichever LSM is "the" one. */
	for (size_t i = 0; i < ELEMENTSOF(files) && fd < 0; i++)
		fd = open(files[i], O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, cmd, n + 5) != (ssize_t)(n + 5)) {
		int e = errno ? errno : EIO;

		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "container.h"
#include "syscall.h"

/* Everything here runs in a clone3 child of the threaded daemon before exec: raw system calls
 * and stack buffers only, no malloc, no stdio, no locks. */

static const char *const step_names[_STEP_MAX] = {
	[STEP_SIGNALS] = "reset signals",
	[STEP_SYNC] = "wait for the parent",
	[STEP_CGROUP_NS] = "unshare the cgroup namespace",
	[STEP_OPEN_ROOT] = "open the image and scratch directories",
	[STEP_SETGROUPS] = "setgroups",
	[STEP_SETGID] = "setresgid to root of the sandbox",
	[STEP_SETUID] = "setresuid to root of the sandbox",
	[STEP_PDEATHSIG] = "set the parent-death signal",
	[STEP_HOSTNAME] = "sethostname",
	[STEP_MOUNT_PRIVATE] = "make / private",
	[STEP_MOUNT_SCRATCH] = "mount the scratch tmpfs",
	[STEP_MKDIR_LAYERS] = "create the overlay directories",
	[STEP_MOUNT_OVERLAY] = "mount the overlay root",
	[STEP_MOUNT_PROC] = "mount /proc",
	[STEP_MOUNT_SYS] = "mount /sys",
	[STEP_MOUNT_DEV] = "populate /dev",
	[STEP_RESOLV_CONF] = "write /etc/resolv.conf",
	[STEP_NETNS] = "join or make the network namespace",
	[STEP_USERNS] = "enter the user namespace",
	[STEP_PIVOT_ROOT] = "pivot_root",
	[STEP_MASK_PROC] = "mask /proc paths",
	[STEP_LOOPBACK] = "bring up lo",
	[STEP_CHDIR] = "chdir to the working directory",
	[STEP_CAPS] = "drop capabilities",
	[STEP_STDIO] = "set up stdio",
	[STEP_CLOSE_FDS] = "close inherited fds",
	[STEP_APPARMOR] = "ask for the AppArmor profile",
	[STEP_LANDLOCK] = "restrict the filesystem with Landlock",
	[STEP_SECCOMP] = "load the seccomp filter",
	[STEP_EXEC] = "exec",
	[STEP_FORK] = "fork inside the sandbox",
	[STEP_PROCESS_GROUP] = "make a process group",
};

const char *child_step_to_string(enum child_step s)
{
	return s >= 0 && s < _STEP_MAX ? step_names[s] : "unknown step";
}

void child_fail(int err_fd, enum child_step step, int err)
{
	struct child_error e = { .step = step, .err = err > 0 ? err : (err < 0 ? -err : EIO) };

	/* One write of 8 bytes to a pipe is atomic; if it fails there is no one left to tell. */
	(void)!write(err_fd, &e, sizeof(e));
	_exit(127);
}

int child_reset_signals(void)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t none;

	for (int sig = 1; sig < _NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		/* glibc refuses its two internal signals (EINVAL): they are not ours to reset. */
		if (sigaction(sig, &sa, NULL) < 0 && errno != EINVAL)
			return -errno;
	}
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		return -errno;
	return 0;
}

/* Docker's default set: what ordinary software needs to behave as root in its own files
 * (chown, permission overrides, setuid to drop privileges, binding low ports, chroot). Left
 * out on purpose: CAP_SYS_ADMIN (mounts, namespaces), CAP_NET_ADMIN and CAP_NET_RAW, MKNOD,
 * SYS_PTRACE, SYS_MODULE, and everything else. */
#define CAP_BIT(c) (1ULL << (c))
static const uint64_t keep_caps =
	CAP_BIT(CAP_CHOWN) | CAP_BIT(CAP_DAC_OVERRIDE) | CAP_BIT(CAP_FOWNER) |
	CAP_BIT(CAP_FSETID) | CAP_BIT(CAP_KILL) | CAP_BIT(CAP_SETGID) | CAP_BIT(CAP_SETUID) |
	CAP_BIT(CAP_SETPCAP) | CAP_BIT(CAP_NET_BIND_SERVICE) | CAP_BIT(CAP_SYS_CHROOT) |
	CAP_BIT(CAP_AUDIT_WRITE) | CAP_BIT(CAP_SETFCAP);

int child_drop_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	/* The bounding set goes first: dropping from it needs CAP_SETPCAP, which stays. Newer
	 * kernels may know more capabilities than these headers: walk until EINVAL. */
	for (int cap = 0; cap < 64; cap++) {
		if (keep_caps & CAP_BIT(cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break;
			return -errno;
		}
	}
	/* Ambient capabilities would survive exec for non-root users: none. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;

	/* Inheritable matters: root's exec computes permitted = inheritable | bounding. */
	for (int i = 0; i < 2; i++) {
		uint32_t w = (uint32_t)(keep_caps >> (32 * i));

		data[i] = (struct __user_cap_data_struct){ .effective = w, .permitted = w,
							  .inheritable = w };
	}
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	return 0;
}

int child_install_fds(const int *fds, int n)
{
	int tmp[8];

	if (n > (int)ELEMENTSOF(tmp))
		return -EINVAL;
	/* Copy every source above the targets first, so that a source already sitting on a
	 * target number (fd 1 meant as stdin, say) is not overwritten before it is used. */
	for (int i = 0; i < n; i++) {
		if (fds[i] >= 0)
			tmp[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, n);
		else
			tmp[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (tmp[i] < 0)
			return -errno;
	}
	for (int i = 0; i < n; i++)
		if (dup2(tmp[i], i) < 0) /* dup2 clears FD_CLOEXEC on the copy */
			return -errno;
	for (int i = 0; i < n; i++)
		close(tmp[i]);
	return 0;
}

int child_reader_alive(int wr)
{
	struct pollfd p = { .fd = wr, .events = POLLOUT };

	if (poll(&p, 1, 0) < 0)
		return -errno;
	return (p.revents & POLLERR) ? -ESRCH : 0;
}

int child_confine(const char *apparmor_profile, const struct profile_landlock *landlock,
		  const struct profile_seccomp *profile, enum child_step *ret_step)
{
	int r;

	if (apparmor_profile) {
		*ret_step = STEP_APPARMOR;
		r = profile_apparmor_exec(apparmor_profile);
		if (r < 0)
			return r;
	}
	*ret_step = STEP_LANDLOCK;
	r = profile_landlock_apply(landlock);
	if (r < 0)
		return r;
	*ret_step = STEP_SECCOMP;
	return profile ? profile_seccomp_load(profile) : 0;
}

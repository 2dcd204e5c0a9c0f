/* SPDX-License-Identifier: Apache-2.0 */
/* Landlock for the container tier: the sandbox may touch files only beneath its own root.
 *
 * Namespaces already give a sandbox its own mount tree; Landlock closes the ways around it
 * that need no path: a descriptor of a host directory leaked into the sandbox (runc's
 * CVE-2024-21626 left one as the working directory), or a cwd that a setns'd process kept.
 * Every filesystem right the kernel's ABI knows is "handled", and granted only beneath the
 * sandbox's "/" as opened after pivot_root; anything else the sandbox opens, through any fd,
 * is refused with EACCES. Files of pseudo filesystems that are never mounted (pipes, sockets,
 * memfds such as warren-init's) are not path-based and stay usable.
 *
 * From ABI 6 (Linux 6.12) the domain is also scoped: no signal and no connection to an
 * abstract unix socket leaves it. From ABI 7 (6.15) the kernel logs the denials through audit
 * (records 1423 and 1424); LOG_NEW_EXEC_ON asks for that after exec too, which is the only part
 * a sandbox runs. Since the ABI is probed, an older kernel gets what it supports. */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "profile.h"

/* Debian 12's headers stop at ABI 2: the later fields and flags, from the kernel's uapi. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};

#define LL_FS_ABI1 ((1ULL << 13) - 1)        /* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER (1ULL << 13)             /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)          /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)         /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)          /* ABI 6 */
#define LL_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1) /* ABI 7 */

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

int profile_landlock_abi(void)
{
	static atomic_int cached = -1;
	int abi = atomic_load(&cached);

	if (abi < 0) {
		/* ENOSYS: not built; EOPNOTSUPP: built but not in the boot's lsm= list */
		long r = syscall(SYS_landlock_create_ruleset, NULL, 0,
				 LANDLOCK_CREATE_RULESET_VERSION);

		abi = r > 0 ? (int)r : 0;
		atomic_store(&cached, abi);
	}
	return abi;
}

void profile_landlock_plan(struct profile_landlock *ret)
{
	int abi = profile_landlock_abi();

	*ret = (struct profile_landlock){ .abi = abi };
	if (abi <= 0)
		return;
	ret->handled_fs = LL_FS_ABI1;
	if (abi >= 2)
		ret->handled_fs |= LL_FS_REFER;
	if (abi >= 3)
		ret->handled_fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		ret->handled_fs |= LL_FS_IOCTL_DEV;
	if (abi >= 6)
		ret->scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	if (abi >= 7)
		ret->restrict_flags = LL_RESTRICT_SELF_LOG_NEW_EXEC_ON;
}

int profile_landlock_apply(const struct profile_landlock *l)
{
	struct ll_ruleset_attr attr = { .handled_access_fs = l->handled_fs, .scoped = l->scoped };
	struct landlock_path_beneath_attr beneath = { .allowed_access = l->handled_fs };
	int ruleset, r = 0;

	if (l->abi <= 0)
		return 0;
	/* The full struct on every ABI: older kernels accept a larger one whose extra fields
	 * are zero, and ours are zero exactly where those kernels lack them. */
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		return -errno;
	/* "/" now, after pivot_root (or setns into the sandbox's mount namespace): the sandbox's
	 * root, and with it every mount beneath it (/proc, /dev and its bound nodes). */
	beneath.parent_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (beneath.parent_fd < 0)
		r = -errno;
	else if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) < 0)
		r = -errno;
	/* Without no_new_privs, restrict_self needs CAP_SYS_ADMIN in our user namespace; set
	 * it in any case, as the seccomp load that follows does. */
	else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r = -errno;
	else if (syscall(SYS_landlock_restrict_self, ruleset, l->restrict_flags) < 0)
		r = -errno;
	if (beneath.parent_fd >= 0)
		close(beneath.parent_fd);
	close(ruleset);
	return r;
}

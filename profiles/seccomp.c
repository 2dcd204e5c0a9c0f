/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "macro.h"
#include "profile.h"

/* The container tier's default profile: allow everything except the calls that reach kernel
 * surface a sandbox has no business with (other processes' memory, kernel modules, the keyring,
 * BPF, new mounts and namespaces, clocks). Each refused call fails with EPERM, as Docker's
 * profile answers, so programs that probe for a feature degrade instead of crashing. The
 * capability bounding set already refuses most of these to root inside the user namespace;
 * seccomp is the second wall, and the only one for the calls that need no capability at all
 * (userfaultfd, keyctl, perf_event_open, unshare(CLONE_NEWUSER)). */

DEFINE_TRIVIAL_CLEANUP_FUNC(scmp_filter_ctx, seccomp_release)

static const char *const refused[] = {
	/* other processes */
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	/* the kernel itself */
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
	"swapon", "swapoff", "acct", "iopl", "ioperm", "syslog", "quotactl", "lookup_dcookie",
	"bpf", "perf_event_open", "userfaultfd",
	/* the keyring is not namespaced */
	"keyctl", "add_key", "request_key",
	/* handles bypass the mount namespace's view of paths */
	"open_by_handle_at", "name_to_handle_at",
	/* the mount tree and the namespaces are fixed once the sandbox runs */
	"mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "open_tree", "move_mount",
	"mount_setattr", "pivot_root", "setns", "unshare",
	/* clocks are global */
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
};

/* ioctl requests that reach across files or into other terminals. The kernel compares the
 * request as an unsigned int, so only the low 32 bits are matched. */
#define XFS_IOC_SWAPEXT_NR 0xc0c0586dU   /* _IOWR('X', 109, struct xfs_swapext): 192 bytes */
#define EXT4_IOC_MOVE_EXT_NR 0xc028660fU /* _IOWR('f', 15, struct move_extent): 40 bytes */
static const uint32_t refused_ioctls[] = {
	FICLONE, FICLONERANGE, FIDEDUPERANGE, XFS_IOC_SWAPEXT_NR, EXT4_IOC_MOVE_EXT_NR,
	TIOCSTI, /* pushes input into the terminal of whoever owns it */
};

static int refuse(scmp_filter_ctx ctx, const char *name, unsigned n, const struct scmp_arg_cmp *c)
{
	int nr = seccomp_syscall_resolve_name(name);

	/* A name this libseccomp does not know is a call it cannot filter on any arch: skip it
	 * rather than refuse to start (all of the above are known to 2.5.4). */
	if (nr == __NR_SCMP_ERROR)
		return 0;
	return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, n, c);
}

/* personality(2) may keep the harmless personas Docker allows: PER_LINUX (0), PER_LINUX32 (8),
 * UNAME26 (0x20000), PER_LINUX32|UNAME26 and the query 0xffffffff; anything else (notably
 * READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, MMAP_PAGE_ZERO) is refused. libseccomp allows one
 * comparison per argument in a rule, and rules for a call are OR'ed, so "not one of these" is
 * written as a union of masked matches "bit a set and bit b clear": a value other than
 * 0xffffffff with any bit outside {3, 17} set matches one of them when the edges a -> b form a
 * cycle over the 30 other bits plus one edge into each of bits 3 and 17. 32 rules. */
static int refuse_personality_edge(scmp_filter_ctx ctx, int set, int clear)
{
	struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, (1U << set) | (1U << clear), 1U << set);

	return refuse(ctx, "personality", 1, &c);
}

static int refuse_personalities(scmp_filter_ctx ctx)
{
	const uint32_t harmless = 0x8 | 0x20000;
	int other[32], n = 0, r;

	for (int b = 0; b < 32; b++)
		if (!(harmless & (1U << b)))
			other[n++] = b;
	for (int i = 0; i < n; i++) {
		r = refuse_personality_edge(ctx, other[i], other[(i + 1) % n]);
		if (r < 0)
			return r;
	}
	/* bits 2 and 16 are not harmless: the edges into bits 3 and 17 start there */
	r = refuse_personality_edge(ctx, 2, 3);
	if (r < 0)
		return r;
	return refuse_personality_edge(ctx, 16, 17);
}

static int build(scmp_filter_ctx ctx)
{
	int r;

	/* Without these, an i386 (int 0x80) or x32 call would miss every rule: libseccomp would
	 * kill the process, since foreign arches get the bad-arch action. Adding them applies the
	 * same rules under each arch's own syscall numbers. */
	r = seccomp_arch_add(ctx, SCMP_ARCH_X86);
	if (r < 0 && r != -EEXIST)
		return r;
	r = seccomp_arch_add(ctx, SCMP_ARCH_X32);
	if (r < 0 && r != -EEXIST)
		return r;

	for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
		r = refuse(ctx, refused[i], 0, NULL);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < ELEMENTSOF(refused_ioctls); i++) {
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, refused_ioctls[i]);
		r = refuse(ctx, "ioctl", 1, &c);
		if (r < 0)
			return r;
	}

	/* A new user namespace gives its creator every capability again inside it, which is the
	 * way to most of the kernel surface above; the other CLONE_NEW* flags already need
	 * CAP_SYS_ADMIN, which the bounding set removed. */
	struct scmp_arg_cmp newuser = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
	r = refuse(ctx, "clone", 1, &newuser);
	if (r < 0)
		return r;
	/* clone3 passes its flags in memory, out of seccomp's reach: answer ENOSYS so that glibc
	 * (2.34+) falls back to clone, whose flags the rule above sees. */
	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (r < 0)
		return r;

	return refuse_personalities(ctx);
}

/* libseccomp 2.5.4 exports only to an fd (seccomp_export_bpf_mem is 2.6): write the program
 * into a memfd and read it back into one allocation holding the header and the filter. */
static int export_prog(scmp_filter_ctx ctx, struct sock_fprog **ret)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ struct sock_fprog *prog = NULL;
	off_t size;
	int r;

	fd = memfd_create("warren-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return r;
	size = lseek(fd, 0, SEEK_END);
	if (size < 0)
		return -errno;
	if (size == 0 || size % sizeof(struct sock_filter) != 0 ||
	    size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -EINVAL;

	prog = malloc(sizeof(*prog) + size);
	if (!prog)
		return -ENOMEM;
	prog->len = size / sizeof(struct sock_filter);
	prog->filter = (struct sock_filter *)(prog + 1);
	if (pread(fd, prog->filter, size, 0) != size)
		return errno_or(EIO);

	*ret = TAKE_PTR(prog);
	return 0;
}

int profile_seccomp_compile(struct sock_fprog **ret)
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
	int r;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	/* The spawn sets no_new_privs itself, right before loading. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (r < 0)
		return r;
	/* A binary search over syscall numbers instead of a linear list. Loading pays for the
	 * kernel's action cache, which runs the filter once for every syscall of every arch:
	 * measured on this profile, 74 us per load instead of 179 us. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (r < 0)
		return r;
	r = build(ctx);
	if (r < 0)
		return r;
	return export_prog(ctx, ret);
}

struct sock_fprog *profile_seccomp_free(struct sock_fprog *prog)
{
	free(prog);
	return NULL;
}

int profile_seccomp_apply(const struct sock_fprog *prog)
{
	/* no_new_privs is what lets a process load a filter without CAP_SYS_ADMIN in the
	 * init namespace, and it keeps setuid binaries in the image from gaining privileges. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
		return -errno;
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "log.h"
#include "syscall.h"

/* The clone of a sandbox's init, from the daemon (container_start() without a zygote) or from
 * the spawn zygote: the plan is computed here, with allocation, and the child (spawn-child.c)
 * only reads it. */

static size_t strv_length(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

const char *const no_env[] = { NULL };

/* Everything spawn_child() needs that takes allocation or formatting. The caller owns *ret_argv,
 * which p->argv points to. */
static int spawn_plan_init(struct spawn_plan *p, const struct spawn_config *c, char ***ret_argv)
{
	size_t n = strv_length(c->argv), k = 0;
	char **argv;

	if (!c->id || !*c->id || strlen(c->id) > HOST_NAME_MAX || c->init_fd < 0 ||
	    !c->rootfs || !c->scratch || c->disk_bytes == 0 || c->uid_count == 0 ||
	    (uint64_t)c->uid_base + c->uid_count > UINT32_MAX)
		return -EINVAL;

	argv = calloc(n + 4, sizeof(char *));
	if (!argv)
		return -ENOMEM;
	p->c = *c;
	if (!c->no_landlock)
		profile_landlock_plan(&p->landlock);
	argv[k++] = (char *)"warren-init";
	if (n > 0) {
		/* The command gets a Landlock domain of its own beneath the init's, as each exec
		 * does (init.c). */
		if (p->landlock.abi > 0)
			argv[k++] = (char *)"--landlock";
		argv[k++] = (char *)"--";
		memcpy(argv + k, c->argv, n * sizeof(char *));
	}

	if (!p->c.envp)
		p->c.envp = (char *const *)no_env;
	p->argv = argv;
	snprintf(p->scratch_size, sizeof(p->scratch_size), "%llu",
		 (unsigned long long)c->disk_bytes);
	/* Inodes cost kernel memory whatever their size: one per 4 KiB of the cap. */
	snprintf(p->scratch_inodes, sizeof(p->scratch_inodes), "%llu",
		 (unsigned long long)MAX(c->disk_bytes / 4096, 1024));
	*ret_argv = argv;
	return 0;
}

int spawn_clone(const struct spawn_config *c, const struct spawn_fds *f, bool sibling,
		pid_t *ret_pid, int *ret_pidfd)
{
	_cleanup_free_ struct spawn_plan *p = NULL;
	_cleanup_free_ char **argv = NULL;
	_cleanup_close_ int pidfd = -EBADF, own_userns = -EBADF;
	pid_t pid;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	r = spawn_plan_init(p, c, &argv);
	if (r < 0)
		return r;
	/* The caller's (a pool's), or one made now. */
	if (c->userns_fd > 0)
		p->userns_fd = c->userns_fd;
	else {
		r = own_userns = container_userns_new(c->uid_base, c->uid_count);
		if (r < 0)
			return log_warn_errno(r, "sandbox %s: user namespace", c->id);
		p->userns_fd = own_userns;
	}
	p->sync_rd = f->sync_rd, p->sync_wr = f->sync_wr;
	p->err_rd = f->err_rd, p->err_wr = f->err_wr;

	struct clone_args args = {
		.flags = CLONE_PIDFD | NS_FLAGS | (sibling ? CLONE_PARENT : 0),
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		/* CLONE_PARENT takes the caller's own exit signal instead. */
		.exit_signal = sibling ? 0 : SIGCHLD,
	};
	if (c->cgroup_fd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)c->cgroup_fd;
	}
	pid = sys_clone3(&args);
	if (pid < 0)
		return log_warn_errno(pid, "sandbox %s: clone3", c->id);
	if (pid == 0)
		spawn_child(p);
	*ret_pid = pid;
	*ret_pidfd = TAKE_FD(pidfd);
	return 0;
}

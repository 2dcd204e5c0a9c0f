/* SPDX-License-Identifier: Apache-2.0 */
/* warren-zygote DIR...: the spawn zygote (zygote.c), a static program so that its address
 * space, which every sandbox's clone copies, is a few pages. warrend starts one per loop with
 * the socket it serves as fd 3; it is not meant to be run by hand.
 *
 * It lives in a mount namespace of its own that holds only what a spawn reaches by path: the
 * DIRs (the node's image mounts, the scratch directory) and /proc. Each spawn's new mount
 * namespace is a copy of this one, so it copies (and, at its pivot_root, detaches) a handful of
 * mounts rather than the host's whole table, and a sandbox being built never sees the rest of
 * the host's mounts at all. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container.h"
#include "syscall.h"

#define MAX_DIRS 8

/* mkdir -p of path (absolute) beneath the directory fd. */
static int mkdir_beneath(int fd, const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; ; p++)
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdirat(fd, buf + 1, 0755) < 0 && errno != EEXIST)
				return -errno;
			if (!(*p = c))
				return 0;
		}
}

static int private_root(char **dirs, int n)
{
	int trees[MAX_DIRS], root;
	const char *stage = dirs[0];

	if (n > MAX_DIRS)
		return -E2BIG;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	/* Copies of the DIRs with what is mounted beneath them, taken before anything covers
	 * them. */
	for (int i = 0; i < n; i++)
		if (dirs[i][0] != '/' ||
		    (trees[i] = open_tree(AT_FDCWD, dirs[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
							      AT_RECURSIVE)) < 0)
			return dirs[i][0] != '/' ? -EINVAL : -errno;
	/* The new root: a tmpfs, staged on the first DIR (in this namespace only). */
	if (mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") < 0)
		return -errno;
	root = open(stage, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		char at[4096];
		int r = mkdir_beneath(root, dirs[i]);

		if (r < 0)
			return r;
		snprintf(at, sizeof(at), "%s%s", stage, dirs[i]);
		if (move_mount(trees[i], "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			return -errno;
		close(trees[i]);
	}
	/* A proc of the host's pid namespace: /proc/self/fd paths, and the id maps the spawns
	 * write. */
	if (mkdirat(root, "proc", 0555) < 0 || fchdir(root) < 0 ||
	    mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	close(root);
	if (sys_pivot_root(".", ".") < 0 || umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	struct stat st;
	int r;

	if (argc < 2 || fstat(3, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "warren-zygote: started by warrend only (fd 3 is its socket)\n");
		return 2;
	}
	r = private_root(argv + 1, argc - 1);
	if (r < 0) {
		fprintf(stderr, "warren-zygote: its mount namespace: %s\n", strerror(-r));
		return 1;
	}
	zygote_main(3);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The image store: every <images_dir>/<name>.erofs mounted read-only at <mount_dir>/<name>.
 * EROFS mounts straight from a regular file since Linux 6.12, so no loop device is involved;
 * util-linux mount(8) would set one up behind our back, hence mount(2). */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "log.h"
#include "macro.h"

#define IMAGE_SUFFIX ".erofs"
#define IMAGE_NAME_MAX 64

/* A crashed daemon could in theory have stacked several mounts on one target; a few detaches
 * clear any realistic pile without looping forever on a path that keeps failing. */
#define IMAGE_STALE_UMOUNT_MAX 16

struct image_store {
	char *mount_dir;
	struct image *images; /* sorted by name */
	size_t n;
};

int image_name_valid(const char *name)
{
	size_t n;

	if (!name || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9')))
		return 0;
	for (n = 1; name[n]; n++) {
		char c = name[n];

		if (n >= IMAGE_NAME_MAX)
			return 0;
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

static void image_done(struct image *img)
{
	free(img->name);
	free(img->file);
	free(img->rootfs);
	*img = (struct image){ 0 };
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct image_store *, image_store_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir)

static char *image_join(const char *dir, const char *name, const char *suffix)
{
	char *p;

	if (asprintf(&p, "%s/%s%s", dir, name, suffix) < 0)
		return NULL;
	return p;
}

/* mkdir -p: the mount directory usually lives under /run, which starts empty at boot. */
static int image_mkdir_parents(const char *path, mode_t mode)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Detaches whatever is mounted on target. EINVAL means "not a mount point": done. */
static int image_umount_all(const char *target)
{
	for (int i = 0; i < IMAGE_STALE_UMOUNT_MAX; i++) {
		if (umount2(target, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
			continue;
		if (errno == EINVAL || errno == ENOENT)
			return i;
		return -errno;
	}
	return -EBUSY;
}

/* Mounts one image at <mount_dir>/<name> and fills *img; on failure nothing is left behind
 * (except a stale mount it could not remove, which it reports). */
static int image_mount(const char *mount_dir, const char *images_dir, const char *name,
		       struct image *img)
{
	_cleanup_free_ char *file = NULL, *rootfs = NULL, *dup = NULL;
	struct stat st;
	int r;

	file = image_join(images_dir, name, IMAGE_SUFFIX);
	rootfs = image_join(mount_dir, name, "");
	dup = strdup(name);
	if (!file || !rootfs || !dup)
		return -ENOMEM;
	if (stat(file, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (mkdir(rootfs, 0755) < 0 && errno != EEXIST)
		return -errno;
	/* A daemon that crashed left its mount here: the new one goes on a clean directory,
	 * not on top of a mount of an image file that may have been replaced since. */
	r = image_umount_all(rootfs);
	if (r < 0) {
		(void)rmdir(rootfs); /* fails harmlessly (EBUSY) while the mount is there */
		return r;
	}
	if (r > 0)
		log_debug("image %s: detached %d stale mount(s) at %s", name, r, rootfs);
	/* Read-only, and no device nodes or set-id binaries from an image can matter on the
	 * host side; sandboxes reach the files only through their own overlay. */
	if (mount(file, rootfs, "erofs", MS_RDONLY | MS_NODEV | MS_NOSUID, NULL) < 0) {
		r = -errno;
		(void)rmdir(rootfs);
		return r;
	}
	*img = (struct image){
		.name = TAKE_PTR(dup),
		.file = TAKE_PTR(file),
		.rootfs = TAKE_PTR(rootfs),
		.size = (uint64_t)st.st_size,
	};
	return 0;
}

static int image_cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The valid image names in images_dir, sorted, as a malloc'ed array of malloc'ed strings. */
static int image_scan(const char *images_dir, char ***ret, size_t *ret_n)
{
	_cleanup_(closedirp) DIR *d = NULL;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int r = 0;

	d = opendir(images_dir);
	if (!d)
		return -errno;
	while ((errno = 0, de = readdir(d))) {
		size_t len = strlen(de->d_name), slen = strlen(IMAGE_SUFFIX);
		char *name;

		if (len <= slen || strcmp(de->d_name + len - slen, IMAGE_SUFFIX) != 0)
			continue;
		name = strndup(de->d_name, len - slen);
		if (!name) {
			r = -ENOMEM;
			break;
		}
		if (!image_name_valid(name)) {
			log_debug("image file %s/%s: invalid name, skipped", images_dir,
				  de->d_name);
			free(name);
			continue;
		}
		if (n == cap) {
			char **p = reallocarray(names, cap ? cap * 2 : 8, sizeof(*names));

			if (!p) {
				free(name);
				r = -ENOMEM;
				break;
			}
			names = p;
			cap = cap ? cap * 2 : 8;
		}
		names[n++] = name;
	}
	if (r == 0 && errno != 0)
		r = -errno;
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return r;
	}
	if (n > 0)
		qsort(names, n, sizeof(*names), image_cmp_name);
	*ret = names;
	*ret_n = n;
	return 0;
}

int image_store_open(const char *images_dir, const char *mount_dir, struct image_store **ret)
{
	_cleanup_(image_store_freep) struct image_store *s = NULL;
	char **names = NULL;
	size_t n = 0;
	int r;

	assert(images_dir && mount_dir && ret);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->mount_dir = strdup(mount_dir);
	if (!s->mount_dir)
		return -ENOMEM;
	r = image_mkdir_parents(mount_dir, 0755);
	if (r < 0)
		return log_debug_errno(r, "mkdir %s", mount_dir);

	r = image_scan(images_dir, &names, &n);
	if (r == -ENOENT) {
		/* No images directory is an empty store: the daemon still starts and its info
		 * says there are no images. */
		log_debug("images directory %s does not exist: no images", images_dir);
		*ret = TAKE_PTR(s);
		return 0;
	}
	if (r < 0)
		return log_debug_errno(r, "read images directory %s", images_dir);
	s->images = calloc(n ? n : 1, sizeof(*s->images));
	if (!s->images)
		r = -ENOMEM;
	for (size_t i = 0; i < n && r >= 0; i++) {
		int k = image_mount(mount_dir, images_dir, names[i], &s->images[s->n]);

		if (k == -ENOMEM)
			r = k;
		else if (k < 0)
			/* The header's contract: one bad image must not take the others down. */
			log_warn_errno(k, "image %s: mount %s/%s%s at %s/%s, skipped", names[i],
				       images_dir, names[i], IMAGE_SUFFIX, mount_dir, names[i]);
		else
			s->n++;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}

struct image_store *image_store_free(struct image_store *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n; i++) {
		struct image *img = &s->images[i];

		/* MNT_DETACH: a sandbox's overlay may still hold the mount as its lower layer;
		 * the kernel frees it when the last user is gone. */
		if (umount2(img->rootfs, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
			log_debug_errno(-errno, "umount %s", img->rootfs);
		/* Even if someone else unmounted it; rmdir refuses a mount point with EBUSY. */
		if (rmdir(img->rootfs) < 0)
			log_debug_errno(-errno, "rmdir %s", img->rootfs);
		image_done(img);
	}
	free(s->images);
	free(s->mount_dir);
	free(s);
	return NULL;
}

const struct image *image_store_find(const struct image_store *s, const char *name)
{
	size_t lo = 0, hi = s->n;

	if (!name)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, s->images[mid].name);

		if (c == 0)
			return &s->images[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

size_t image_store_count(const struct image_store *s)
{
	return s->n;
}

const struct image *image_store_get(const struct image_store *s, size_t i)
{
	return i < s->n ? &s->images[i] : NULL;
}

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Images are EROFS files, <images_dir>/<name>.erofs. The store mounts each one read-only, once
 * per node, straight from its file (mount(2) with the file as source: Linux 6.12), at
 * <mount_dir>/<name>; every sandbox shares that mount as the lower layer of its overlay. */

struct image {
	char *name;     /* "base" */
	char *file;     /* /var/lib/warren/images/base.erofs */
	char *rootfs;   /* /run/warren/images/base */
	uint64_t size;  /* bytes of the EROFS file */
};

struct image_store;

/* Scans images_dir and mounts every image found. An image that fails to mount is logged and
 * skipped. Main thread, at start-up; the store is read-only afterwards. */
int image_store_open(const char *images_dir, const char *mount_dir, struct image_store **ret);
/* Unmounts everything it mounted. NULL-safe, returns NULL. */
struct image_store *image_store_free(struct image_store *s);
/* NULL if there is no such image. */
const struct image *image_store_find(const struct image_store *s, const char *name);
size_t image_store_count(const struct image_store *s);
const struct image *image_store_get(const struct image_store *s, size_t i);
/* Whether name is a valid image name: [a-z0-9][a-z0-9._-]{0,63}. */
int image_name_valid(const char *name);

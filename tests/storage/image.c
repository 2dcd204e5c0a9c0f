/* SPDX-License-Identifier: Apache-2.0 */
/* The image store against the real kernel (suite 'priv'): images built with tools/mkimage,
 * mounted from their files, read-only, listed in mountinfo while open and gone after. Every
 * test works in its own temporary directory. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image.h"
#include "macro.h"

static char tmp[] = "/tmp/warren-image-test-XXXXXX";
/* Short on purpose: every path below is one of these plus a few components. */
static char images[256], mnt[256];

/* ---- helpers ------------------------------------------------------------------------------ */

static void put(const char *path, const char *content)
{
	FILE *f = fopen(path, "we");

	cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
	fputs(content, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	cr_assert_geq(n, 0);
	close(fd);
	buf[n] = '\0';
	return buf;
}

/* tools/mkimage OUT with a marker file /etc/warren-marker holding marker. */
static void mkimage(const char *out, const char *marker)
{
	const char *src = getenv("WARREN_SOURCE_DIR");
	char cmd[4 * PATH_MAX], mfile[PATH_MAX];
	int status;

	cr_assert_not_null(src, "WARREN_SOURCE_DIR is not set (run the tests with meson test)");
	snprintf(mfile, sizeof(mfile), "%s/marker", tmp);
	put(mfile, marker);
	snprintf(cmd, sizeof(cmd), "'%s/tools/mkimage' --quiet --add '%s:/etc/warren-marker' '%s'",
		 src, mfile, out);
	status = system(cmd);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %#x", cmd, status);
}

/* How many mounts /proc/self/mountinfo lists at path (field 5), and the last one's fs type and
 * source. Our paths hold no characters that mountinfo escapes. */
static int mounts_at(const char *path, char *ret_fstype, char *ret_source)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int n = 0;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		char target[PATH_MAX], fstype[64], source[PATH_MAX];
		char *sep;

		if (sscanf(line, "%*s %*s %*s %*s %4095s", target) != 1 || strcmp(target, path))
			continue;
		sep = strstr(line, " - ");
		cr_assert_not_null(sep);
		cr_assert_eq(sscanf(sep, " - %63s %4095s", fstype, source), 2);
		if (ret_fstype)
			strcpy(ret_fstype, fstype);
		if (ret_source)
			strcpy(ret_source, source);
		n++;
	}
	fclose(f);
	return n;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Attempts the real operation once: EROFS from a regular file with mount(2). */
static void probe_or_skip(const char *file)
{
	char probe[PATH_MAX];
	int r;

	snprintf(probe, sizeof(probe), "%s/probe", tmp);
	cr_assert_eq(mkdir(probe, 0755), 0);
	r = mount(file, probe, "erofs", MS_RDONLY, NULL) < 0 ? -errno : 0;
	if (r == 0)
		cr_assert_eq(umount2(probe, MNT_DETACH), 0);
	rmdir(probe);
	if (r == -EPERM || r == -EACCES)
		cr_skip_test("lacking privileges to mount: %s", strerror(-r));
	if (r == -ENODEV)
		cr_skip_test("kernel lacks EROFS");
	if (r == -ENOTBLK)
		cr_skip_test("kernel lacks EROFS from a regular file (Linux 6.12, "
			     "CONFIG_EROFS_FS_BACKED_BY_FILE)");
	cr_assert_eq(r, 0, "mount(2) of an EROFS file: %s", strerror(-r));
}

static void setup(void)
{
	char base[PATH_MAX];

	cr_assert_not_null(mkdtemp(tmp));
	snprintf(images, sizeof(images), "%s/images", tmp);
	snprintf(mnt, sizeof(mnt), "%s/run/images", tmp); /* not made: the store does mkdir -p */
	cr_assert_eq(mkdir(images, 0755), 0);
	snprintf(base, sizeof(base), "%s/base.erofs", images);
	mkimage(base, "new\n");
	probe_or_skip(base);
}

/* Whatever a failed test left mounted goes before the directory does. */
static void teardown(void)
{
	static const char *const names[] = { "base", "junk", "Bad", "other" };
	char path[PATH_MAX], cmd[PATH_MAX + 16];

	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", mnt, names[i]);
		while (umount2(path, MNT_DETACH) == 0)
			;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	(void)system(cmd);
}

static struct image_store *open_store(void)
{
	struct image_store *s = NULL;
	int r = image_store_open(images, mnt, &s);

	cr_assert_eq(r, 0, "image_store_open: %s", strerror(-r));
	cr_assert_not_null(s);
	return s;
}

/* ---- tests -------------------------------------------------------------------------------- */

TestSuite(image, .init = setup, .fini = teardown);

Test(image, mounts_from_the_file_and_shows_its_files)
{
	struct image_store *s = open_store();
	const struct image *img;
	char want[PATH_MAX], path[PATH_MAX], fstype[64], source[PATH_MAX];
	struct stat st;

	cr_assert_eq(image_store_count(s), 1);
	img = image_store_find(s, "base");
	cr_assert_not_null(img);
	cr_assert_eq(image_store_get(s, 0), img);
	cr_assert_null(image_store_get(s, 1));
	cr_assert_null(image_store_find(s, "nope"));
	cr_assert_str_eq(img->name, "base");
	snprintf(want, sizeof(want), "%s/base.erofs", images);
	cr_assert_str_eq(img->file, want);
	cr_assert_eq(stat(want, &st), 0);
	cr_assert_eq(img->size, (uint64_t)st.st_size);
	snprintf(want, sizeof(want), "%s/base", mnt);
	cr_assert_str_eq(img->rootfs, want);

	/* The files of the image, with the owner mkimage gave them. */
	snprintf(path, sizeof(path), "%s/bin/busybox", img->rootfs);
	cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_assert(S_ISREG(st.st_mode) && (st.st_mode & 0111));
	cr_assert_eq(st.st_uid, 100000);
	snprintf(path, sizeof(path), "%s/etc/warren-marker", img->rootfs);
	cr_assert_str_eq(slurp(path), "new\n");
	snprintf(path, sizeof(path), "%s/etc/passwd", img->rootfs);
	cr_assert(strstr(slurp(path), "root:x:0:0:"));
	snprintf(path, sizeof(path), "%s/tmp", img->rootfs);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 01777);

	/* One EROFS mount straight from the file: no loop device in between. */
	cr_assert_eq(mounts_at(img->rootfs, fstype, source), 1);
	cr_assert_str_eq(fstype, "erofs");
	cr_assert_null(strstr(source, "/dev/loop"), "mounted through a loop device: %s", source);

	snprintf(want, sizeof(want), "%s", img->rootfs);
	image_store_free(s);
	cr_assert_eq(mounts_at(want, NULL, NULL), 0, "%s still mounted after free", want);
	cr_assert(!exists(want), "%s left behind", want);
}

Test(image, writes_fail_with_erofs)
{
	struct image_store *s = open_store();
	const struct image *img = image_store_find(s, "base");
	char path[PATH_MAX];
	int fd;

	cr_assert_not_null(img);
	snprintf(path, sizeof(path), "%s/etc/passwd", img->rootfs);
	/* Reading works: the refusals below are about writing, not about access. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	close(fd);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	cr_assert_eq(fd, -1);
	cr_assert_eq(errno, EROFS, "open for writing: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/tmp/new", img->rootfs);
	cr_assert_eq(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644), -1);
	cr_assert_eq(errno, EROFS, "create: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/newdir", img->rootfs);
	cr_assert_eq(mkdir(path, 0755), -1);
	cr_assert_eq(errno, EROFS, "mkdir: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/bin/busybox", img->rootfs);
	cr_assert_eq(unlink(path), -1);
	cr_assert_eq(errno, EROFS, "unlink: %s", strerror(errno));
	image_store_free(s);
}

Test(image, skips_invalid_names_and_broken_images)
{
	char path[PATH_MAX], cmd[3 * PATH_MAX];
	struct image_store *s;

	/* A valid image under an invalid name, a file that is no image, a non-image suffix. */
	snprintf(cmd, sizeof(cmd), "cp '%s/base.erofs' '%s/Bad.erofs'", images, images);
	cr_assert_eq(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/junk.erofs", images);
	put(path, "this is not an EROFS image\n");
	snprintf(path, sizeof(path), "%s/notes.txt", images);
	put(path, "hello\n");
	snprintf(path, sizeof(path), "%s/dir.erofs", images);
	cr_assert_eq(mkdir(path, 0755), 0);

	s = open_store();
	cr_assert_eq(image_store_count(s), 1);
	cr_assert_not_null(image_store_find(s, "base"));
	cr_assert_null(image_store_find(s, "junk"));
	cr_assert_null(image_store_find(s, "Bad"));
	cr_assert_null(image_store_find(s, "dir"));
	/* The image that failed to mount left no directory behind. */
	snprintf(path, sizeof(path), "%s/junk", mnt);
	cr_assert(!exists(path), "%s left behind", path);
	snprintf(path, sizeof(path), "%s/Bad", mnt);
	cr_assert(!exists(path), "%s made for an invalid name", path);
	image_store_free(s);
}

Test(image, stale_mount_of_a_crashed_daemon_is_replaced)
{
	char old[PATH_MAX], target[512], path[PATH_MAX];
	struct image_store *s;

	/* The crashed daemon's mount: another image (marker "old") at the same target. */
	snprintf(old, sizeof(old), "%s/old", tmp); /* outside images/: not in the store */
	cr_assert_eq(mkdir(old, 0755), 0);
	strcat(old, "/base.erofs");
	mkimage(old, "old\n");
	snprintf(target, sizeof(target), "%s/base", mnt);
	snprintf(path, sizeof(path), "%s/run", tmp);
	cr_assert_eq(mkdir(path, 0755), 0);
	cr_assert_eq(mkdir(mnt, 0755), 0);
	cr_assert_eq(mkdir(target, 0755), 0);
	cr_assert_eq(mount(old, target, "erofs", MS_RDONLY, NULL), 0, "%s", strerror(errno));
	snprintf(path, sizeof(path), "%s/etc/warren-marker", target);
	cr_assert_str_eq(slurp(path), "old\n");

	s = open_store();
	cr_assert_eq(image_store_count(s), 1);
	cr_assert_eq(mounts_at(target, NULL, NULL), 1, "the stale mount was not detached");
	cr_assert_str_eq(slurp(path), "new\n");
	image_store_free(s);
	cr_assert_eq(mounts_at(target, NULL, NULL), 0);
}

Test(image, free_detaches_a_mount_still_in_use)
{
	struct image_store *s = open_store();
	char target[512], path[PATH_MAX];
	char buf[8] = { 0 };
	int fd;

	snprintf(target, sizeof(target), "%s", image_store_find(s, "base")->rootfs);
	snprintf(path, sizeof(path), "%s/etc/warren-marker", target);
	/* Like a sandbox whose overlay still uses the image as its lower layer. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	image_store_free(s);
	cr_assert_eq(mounts_at(target, NULL, NULL), 0, "still listed after free");
	cr_assert_eq(read(fd, buf, sizeof(buf) - 1), 4, "the detached mount stays readable");
	cr_assert_str_eq(buf, "new\n");
	close(fd);
}

Test(image, missing_images_dir_is_an_empty_store)
{
	struct image_store *s = NULL;
	char nodir[PATH_MAX];
	int r;

	snprintf(nodir, sizeof(nodir), "%s/none", tmp);
	r = image_store_open(nodir, mnt, &s);
	cr_assert_eq(r, 0, "image_store_open: %s", strerror(-r));
	cr_assert_eq(image_store_count(s), 0);
	cr_assert_null(image_store_find(s, "base"));
	cr_assert_null(image_store_get(s, 0));
	image_store_free(s);
}

Test(image, several_images_are_sorted)
{
	char other[PATH_MAX], path[PATH_MAX];
	struct image_store *s;

	snprintf(other, sizeof(other), "%s/other.erofs", images);
	mkimage(other, "other\n");
	s = open_store();
	cr_assert_eq(image_store_count(s), 2);
	cr_assert_str_eq(image_store_get(s, 0)->name, "base");
	cr_assert_str_eq(image_store_get(s, 1)->name, "other");
	snprintf(path, sizeof(path), "%s/etc/warren-marker", image_store_find(s, "other")->rootfs);
	cr_assert_str_eq(slurp(path), "other\n");
	image_store_free(s);
}

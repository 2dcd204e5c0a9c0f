/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's filesystem: an overlay whose writes land in a private tmpfs upper layer, never
 * in the image, capped at disk_bytes, and gone with the sandbox. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

TestSuite(fs, .init = ctr_setup, .fini = ctr_teardown, .timeout = 60);

#define PROBE(...) ((char *const[]){ "warren-probe", __VA_ARGS__, NULL })

static uint64_t file_hash(const char *path)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	unsigned char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0, "open %s", path);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
	close(fd);
	return h;
}

static int dir_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	cr_assert(d, "opendir %s", path);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static char *host_read(const char *rel)
{
	char path[256], *buf = calloc(1, 256);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", T.rootfs, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!read(fd, buf, 255);
		close(fd);
	}
	return buf;
}

Test(fs, writes_land_in_the_upper_layer_only)
{
	uint64_t image = file_hash(T.image);
	char *out, *marker;
	int r = ctr_start(NULL);

	cr_assert_eq(r, 0, "start: %s", strerror(-r));
	/* overwrite a file of the image, create one, delete one */
	cr_assert_eq(ctr_exec(PROBE("write", "/etc/marker", "upper"), NULL, &out, NULL), 0, "%s",
		     out);
	free(out);
	cr_assert_eq(ctr_exec(PROBE("write", "/new-file", "new"), NULL, &out, NULL), 0, "%s", out);
	free(out);
	cr_assert_eq(ctr_exec((char *const[]){ "rm", "/etc/passwd", NULL }, NULL, NULL, NULL), 0);

	/* the sandbox sees its writes */
	cr_assert_eq(ctr_exec(PROBE("read", "/etc/marker", "upper"), NULL, &out, NULL), 0, "%s",
		     out);
	free(out);
	cr_assert_eq(ctr_exec(PROBE("read", "/etc/passwd"), NULL, &out, NULL), 1, "%s", out);
	free(out);

	/* the host's lower layer and the image file do not, and nothing shows under scratch */
	marker = host_read("etc/marker");
	cr_assert_str_eq(marker, "lower\n");
	free(marker);
	cr_assert_eq(access(T.rootfs, F_OK), 0);
	char path[256];
	snprintf(path, sizeof(path), "%s/new-file", T.rootfs);
	cr_assert_eq(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/etc/passwd", T.rootfs);
	cr_assert_eq(access(path, F_OK), 0);
	cr_assert_eq(dir_entries(T.scratch), 0,
		     "the upper layer leaked onto the host's scratch dir");
	cr_assert_eq(file_hash(T.image), image, "the image file changed");
}

/* A second sandbox on the same image starts from the image, not from the first one's writes. */
Test(fs, sandboxes_do_not_share_writes)
{
	int code;
	char *out = ctr_run((char *const[]){ "sh", "-c", "echo first > /etc/marker", NULL }, &code);

	cr_assert_eq(code, 0, "%s", out);
	free(out);
	out = ctr_run(PROBE("read", "/etc/marker", "lower"), &code);
	cr_assert_eq(code, 0, "%s", out);
	free(out);
}

/* The image's files belong to root inside (it is built owned by uid_base), so root may change
 * them: the change is a copy-up into the upper layer. */
Test(fs, writable_root_owned_files_inside)
{
	int code;
	char *out = ctr_run((char *const[]){ "sh", "-c",
					    "ls -ln /etc/marker | grep -q ' 0 *0 ' && "
					    "echo changed >> /etc/marker && cat /etc/marker",
					    NULL },
			    &code);

	cr_assert_eq(code, 0, "%s", out);
	cr_assert_str_eq(out, "lower\nchanged\n");
	free(out);
}

Test(fs, disk_bytes_caps_the_writable_layer)
{
	int code;
	char *out;

	T.disk_bytes = 4 << 20;
	out = ctr_run((char *const[]){ "sh", "-c",
				      "dd if=/dev/zero of=/big bs=1M count=16 2>&1; echo rc=$?",
				      NULL },
		      &code);
	cr_assert(strstr(out, "No space left on device"), "%s", out);
	cr_assert_null(strstr(out, "rc=0"), "%s", out);
	free(out);
}

/* Every mount of a sandbox lives in its own mount namespace: while it runs and after it is
 * killed, the host's table holds only the fixture's image mount. */
Test(fs, no_mounts_leak_to_the_host)
{
	int r = ctr_start(NULL);

	cr_assert_eq(r, 0, "start: %s", strerror(-r));
	cr_assert_eq(ctr_host_mounts(), 1);
	cr_assert_eq(ctr_exec((char *const[]){ "true", NULL }, NULL, NULL, NULL), 0);
	cr_assert_eq(ctr_host_mounts(), 1);
	cr_assert_eq(dir_entries(T.scratch), 0);
}

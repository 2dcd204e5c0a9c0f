/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

/* The "%5u: path" lines after "UserFiles:" in a ring's fdinfo; none if the kernel did not get
 * the ring's lock. */
static long ring_files_of(const char *fdinfo)
{
	FILE *f = fopen(fdinfo, "re");
	char line[512];
	bool in_files = false;
	long n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned slot;
		char colon;

		if (strncmp(line, "UserFiles:", 10) == 0) {
			in_files = true;
			continue;
		}
		if (!in_files)
			continue;
		if (sscanf(line, " %u%c", &slot, &colon) != 2 || colon != ':')
			break;
		n++;
	}
	fclose(f);
	return n;
}

int proc_count_fds(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

long proc_ring_files(pid_t pid, int tries)
{
	char path[64], link[64], info[320], fdpath[320];
	struct dirent *de;
	long total = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		long best = 0;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
		n = readlink(fdpath, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, "anon_inode:[io_uring]") != 0)
			continue;
		snprintf(info, sizeof(info), "/proc/%d/fdinfo/%s", (int)pid, de->d_name);
		for (int i = 0; i < tries; i++) {
			long k = ring_files_of(info);

			best = k > best ? k : best;
		}
		total += best;
	}
	closedir(d);
	return total;
}

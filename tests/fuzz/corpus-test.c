/* SPDX-License-Identifier: Apache-2.0 */
/* Runs the fuzz corpus through the request path as a regression test: every input must be
 * handled without a crash (ASan and UBSan builds catch memory errors), and the named seeds must
 * parse into the number of requests their names promise. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "slurp.h"

Test(fuzz, corpus_runs_clean)
{
	const char *src = getenv("WARREN_SOURCE_DIR");
	char dir[512], path[1024];
	struct dirent *e;
	DIR *d;
	int n = 0;

	cr_assert(src, "WARREN_SOURCE_DIR is not set: run with meson test");
	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus", src);
	d = opendir(dir);
	cr_assert(d, "no corpus at %s", dir);
	while ((e = readdir(d))) {
		size_t len;
		char *buf;
		int handled, want;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		buf = slurp(path, &len);
		handled = http_fuzz_one(buf, len);
		/* Seeds named "<n>req-..." hold n complete requests; others just must not crash. */
		if (sscanf(e->d_name, "%dreq-", &want) == 1)
			cr_expect_eq(handled, want, "%s: parsed %d requests, want %d", e->d_name,
				     handled, want);
		free(buf);
		n++;
	}
	closedir(d);
	cr_expect(n >= 10, "only %d corpus files", n);
}

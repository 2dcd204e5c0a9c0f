/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the seccomp profile language: parse and compile any bytes. Seeds:
 * tests/profiles/corpus and profiles/seccomp. A crash found here goes into the corpus, which
 * the unit suite runs (parse.c: corpus_runs_clean). libseccomp 2.5.4 leaks its rule objects
 * when a rule fails part-way on a multi-arch filter: run with LSAN_OPTIONS=suppressions=FILE
 * holding "leak:libseccomp.so" (found by this target; not warren's memory). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile_seccomp *p = NULL;
	char err[PROFILE_ERROR_MAX];
	int r = profile_seccomp_parse("fuzz", (const char *)data, size, "fuzz", &p, err);

	if (r != 0 && r != -EINVAL && r != -ENOMEM)
		abort();
	profile_seccomp_free(p);
	return 0;
}

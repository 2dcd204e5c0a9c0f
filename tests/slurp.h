/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* A whole test data file, NUL-terminated (the NUL is not counted in *len). The caller frees
 * it. A missing file fails the test. */

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

static inline char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	cr_assert(f, "open %s", path);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(*len + 1);
	cr_assert(buf && fread(buf, 1, *len, f) == *len);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

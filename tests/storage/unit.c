/* SPDX-License-Identifier: Apache-2.0 */
/* Image names need no privileges to check (suite 'unit'). They come from the API (the
 * "image" field) and from file names, and become a path under the mount directory. */
#include <criterion/criterion.h>
#include <string.h>

#include "image.h"

Test(image_unit, valid_names)
{
	static const char *const good[] = { "base", "0", "a.b-c_d", "python3.12", "x-" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_assert(image_name_valid(good[i]), "'%s' should be valid", good[i]);
	char longest[65];
	memset(longest, 'a', 64);
	longest[64] = '\0';
	cr_assert(image_name_valid(longest), "64 characters are allowed");
}

Test(image_unit, invalid_names)
{
	static const char *const bad[] = { "", ".", "..", ".hidden", "-x", "_x", "Base", "a/b",
					   "../etc", "a b", "a\n", "caf\xc3\xa9" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert(!image_name_valid(bad[i]), "'%s' should be invalid", bad[i]);
	cr_assert(!image_name_valid(NULL));
	char toolong[66];
	memset(toolong, 'a', 65);
	toolong[65] = '\0';
	cr_assert(!image_name_valid(toolong), "65 characters are too many");
}

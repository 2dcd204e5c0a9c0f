/* SPDX-License-Identifier: Apache-2.0 */
/* warren-zygote: the spawn zygote (zygote.c), a static program so that its address space, which
 * every sandbox's clone copies, is a few pages. warrend starts one per loop with the socket it
 * serves as fd 3; it is not meant to be run by hand. */
#include <stdio.h>
#include <sys/stat.h>

#include "container.h"

int main(void)
{
	struct stat st;

	if (fstat(3, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "warren-zygote: started by warrend only (fd 3 is its socket)\n");
		return 2;
	}
	zygote_main(3);
	return 0;
}

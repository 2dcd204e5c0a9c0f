/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "backend.h"
#include "macro.h"

/* Every tier this build knows, probed or not. A tier that cannot run on this node is still
 * found here; its probe() says why. */
static const struct backend_ops *const backends[] = {
	&container_backend,
};

const struct backend_ops *backend_find(const char *tier)
{
	if (!tier)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(backends); i++)
		if (strcmp(backends[i]->name, tier) == 0)
			return backends[i];
	return NULL;
}

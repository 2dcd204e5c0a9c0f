/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the request path: HTTP parsing plus route and JSON body validation,
 * exactly the code that handles bytes from the socket. Build: tools/fuzz. */
#include <stddef.h>
#include <stdint.h>

#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	http_fuzz_one((const char *)data, size);
	return 0;
}

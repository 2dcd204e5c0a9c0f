/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the audit record parser and the reader's event assembly: any bytes as
 * one record (type taken from the text), and as a netlink buffer. Seeds: tests/profiles/data. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "audit.h"

static void drop(const struct audit_denial *d, void *userdata)
{
	(void)d, (void)userdata;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct audit_reader *r;
	struct audit_denial d;
	int k = audit_parse(0, (const char *)data, size, &d);

	if (k < -EINVAL || k >= _AUDIT_KIND_MAX)
		abort();
	if (!r && audit_reader_new(AUDIT_SOURCE_NETLINK, -EBADF, &r) < 0)
		abort();
	audit_reader_feed(r, data, size, drop, NULL);
	audit_reader_flush(r, 0, drop, NULL);
	return 0;
}

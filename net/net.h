/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Brings up `lo` in the calling process's network namespace. Async-signal-safe: runs in the
 * clone3 child, before exec. */
int net_loopback_up(void);

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Shared between the client library's files, not installed. */

#include "macro.h"
#include "warren.h"

/* jansson >= 2.9 provides json_decrefp() for _cleanup_(). */

/* Records a failure on this side (code "", status 0) and returns r. */
_printf_(3, 4) int client_fail(struct warren_client *c, int r, const char *fmt, ...);
/* Records an error the daemon reported and returns its negative errno. */
int client_fail_api(struct warren_client *c, int status, const char *code, const char *message);

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "http.h"

/* Routes a complete request on the connection's loop and answers it, now or later. */
void api_handle(struct conn *c);
/* The side-effect-free half of api_handle: route matching and body validation. Returns the
 * HTTP status the request would get from validation alone (200 if it is valid). Used by the
 * fuzz target. */
int api_validate(const struct http_request *req);

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <jansson.h>

struct daemon;

/* Probes what this node has, by trying it where that is cheap (io_uring ops, Landlock, seccomp,
 * KVM), and returns the GET /v1/info object. Main thread, once at start-up. */
json_t *info_probe(const struct daemon *d);

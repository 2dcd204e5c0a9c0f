/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <jansson.h>
#include <stdbool.h>

#define INFO_TIER_PLANNED_REASON "not implemented in this version of warren"

struct daemon;

/* Probes what this node has, by trying it where that is cheap (io_uring ops, Landlock, seccomp,
 * KVM), and returns the GET /v1/info object. Main thread, once at start-up. */
json_t *info_probe(const struct daemon *d);
/* Whether tier is one the API names but this version cannot run (function, microvm, vm). */
bool info_tier_planned(const char *tier);

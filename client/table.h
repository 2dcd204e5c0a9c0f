/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Column-aligned text tables for the CLI (ps, info). Not installed. */

#include <stddef.h>
#include <stdio.h>

#include "macro.h"

struct table;

/* Headers are the column names, NULL-terminated. */
struct table *table_new(const char *header, ...);
struct table *table_free(struct table *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct table *, table_free)

/* Appends the next cell, row by row; NULL prints as "-". */
int table_add(struct table *t, const char *cell);
_printf_(2, 3) int table_addf(struct table *t, const char *fmt, ...);

/* Every column padded to its widest cell but the last, two spaces apart. Control characters
 * in cells print as '?': a sandbox's command line is untrusted and must not drive the
 * terminal. */
void table_print(const struct table *t, FILE *f);

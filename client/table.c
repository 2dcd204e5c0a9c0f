/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

struct table {
	size_t n_cols;
	char **cells; /* row-major, the headers first */
	size_t n_cells, cap;
};

static int table_push(struct table *t, char *cell)
{
	if (!cell)
		return -ENOMEM;
	if (t->n_cells == t->cap) {
		size_t cap = MAX(t->cap * 2, (size_t)32);
		char **c = realloc(t->cells, cap * sizeof(*c));

		if (!c) {
			free(cell);
			return -ENOMEM;
		}
		t->cells = c;
		t->cap = cap;
	}
	t->cells[t->n_cells++] = cell;
	return 0;
}

struct table *table_new(const char *header, ...)
{
	struct table *t = calloc(1, sizeof(*t));
	va_list ap;

	if (!t)
		return NULL;
	va_start(ap, header);
	for (const char *h = header; h; h = va_arg(ap, const char *)) {
		if (table_push(t, strdup(h)) < 0) {
			va_end(ap);
			return table_free(t);
		}
		t->n_cols++;
	}
	va_end(ap);
	return t;
}

struct table *table_free(struct table *t)
{
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->n_cells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
	return NULL;
}

int table_add(struct table *t, const char *cell)
{
	return table_push(t, strdup(cell ? cell : "-"));
}

int table_addf(struct table *t, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return table_push(t, r < 0 ? NULL : s);
}

/* Terminal columns taken by s: UTF-8 continuation bytes take none. Wide characters count as
 * one, which only misaligns the columns after them. */
static size_t cell_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void cell_print(const char *s, FILE *f)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

void table_print(const struct table *t, FILE *f)
{
	_cleanup_free_ size_t *width = NULL;

	if (t->n_cols == 0)
		return;
	width = calloc(t->n_cols, sizeof(*width));
	if (!width)
		return;
	for (size_t i = 0; i < t->n_cells; i++)
		width[i % t->n_cols] = MAX(width[i % t->n_cols], cell_width(t->cells[i]));
	for (size_t i = 0; i < t->n_cells; i++) {
		size_t col = i % t->n_cols, rest = i + 1;

		cell_print(t->cells[i], f);
		/* Pad only if something follows on this line: no trailing blanks. */
		while (rest < t->n_cells && rest % t->n_cols != 0 && !*t->cells[rest])
			rest++;
		if (rest == t->n_cells || rest % t->n_cols == 0) {
			fputc('\n', f);
			i = rest - 1;
		} else {
			fprintf(f, "%*s", (int)(width[col] - cell_width(t->cells[i]) + 2), "");
		}
	}
}

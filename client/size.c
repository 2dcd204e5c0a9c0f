/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "macro.h"
#include "warren.h"

static const char units[] = "KMGTPE";

/* The multiplier named by what follows the number: "", "B", "K", "KB", "KiB" and so on. */
static int size_suffix(const char *s, uint64_t *ret)
{
	const char *u;

	if (*s == '\0' || strcasecmp(s, "b") == 0) {
		*ret = 1;
		return 0;
	}
	u = strchr(units, toupper((unsigned char)*s));
	if (!u)
		return -EINVAL;
	s++;
	if (*s == 'i' || *s == 'I')
		s++;
	if (*s == 'b' || *s == 'B')
		s++;
	if (*s != '\0')
		return -EINVAL;
	*ret = 1ull << (10 * (u - units + 1));
	return 0;
}

int warren_parse_size(const char *s, uint64_t *ret)
{
	uint64_t whole = 0, frac = 0, frac_div = 1, mult;
	const char *p = s;
	int r;

	if (!isdigit((unsigned char)*p))
		return -EINVAL; /* no sign, no space, no empty string */
	for (; isdigit((unsigned char)*p); p++) {
		uint64_t digit = (uint64_t)(*p - '0');

		if (whole > (UINT64_MAX - digit) / 10)
			return -ERANGE;
		whole = whole * 10 + digit;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		/* Nine digits are more precision than any suffix needs; the rest must be digits. */
		for (; isdigit((unsigned char)*p); p++)
			if (frac_div < 1000000000ull) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				frac_div *= 10;
			}
	}
	r = size_suffix(p, &mult);
	if (r < 0)
		return r;
	if (frac_div > 1 && mult == 1)
		return -EINVAL; /* "1.5" bytes */
	if (whole > UINT64_MAX / mult)
		return -ERANGE;
	whole *= mult;
	/* frac < frac_div <= 1e9 and mult <= 2^60: split to stay within 64 bits. */
	frac = (mult / frac_div) * frac + (mult % frac_div) * frac / frac_div;
	if (whole > UINT64_MAX - frac)
		return -ERANGE;
	*ret = whole + frac;
	return 0;
}

char *warren_format_size(uint64_t bytes, char *buf, size_t len)
{
	int i = -1;
	uint64_t unit = 1;

	while (i + 1 < (int)strlen(units) && bytes >= (unit << 10)) {
		unit <<= 10;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%lluB", (unsigned long long)bytes);
	else if (bytes % unit == 0)
		snprintf(buf, len, "%llu%c", (unsigned long long)(bytes / unit), units[i]);
	else
		snprintf(buf, len, "%.1f%c", (double)bytes / (double)unit, units[i]);
	return buf;
}

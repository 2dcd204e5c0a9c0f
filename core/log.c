/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static enum log_level max_level = LOG_LEVEL_INFO;
static const char *const level_names[_LOG_LEVEL_MAX] = {
	[LOG_LEVEL_ERR] = "error",
	[LOG_LEVEL_WARN] = "warning",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

void log_set_level(enum log_level level)
{
	max_level = level;
}

enum log_level log_get_level(void)
{
	return max_level;
}

int log_level_from_string(const char *s)
{
	for (int i = 0; i < _LOG_LEVEL_MAX; i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	return -EINVAL;
}

int log_full(enum log_level level, int err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > max_level)
		return err;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One fprintf call: stdio locks the stream, so lines from loop threads do not interleave. */
	if (err)
		fprintf(stderr, "warren: %s: %s: %s\n", level_names[level], msg, strerror(-err));
	else
		fprintf(stderr, "warren: %s: %s\n", level_names[level], msg);
	return err;
}

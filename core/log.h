/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "macro.h"

enum log_level { LOG_LEVEL_ERR, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG, _LOG_LEVEL_MAX };

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
int log_level_from_string(const char *s);

/* Writes one line to stderr: "warrend[loop]: level: message". Any thread may call it. Returns
 * err (a negative errno) so that callers can write `return log_errno(r, "...")`. */
int log_full(enum log_level level, int err, const char *fmt, ...) _printf_(3, 4);

#define log_error(...) log_full(LOG_LEVEL_ERR, 0, __VA_ARGS__)
#define log_warn(...) log_full(LOG_LEVEL_WARN, 0, __VA_ARGS__)
#define log_info(...) log_full(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...)                                              \
	do {                                                        \
		if (_unlikely_(log_get_level() >= LOG_LEVEL_DEBUG)) \
			log_full(LOG_LEVEL_DEBUG, 0, __VA_ARGS__);  \
	} while (0)
/* Logs at error level with strerror(-r) appended; returns r. */
#define log_errno(r, ...) log_full(LOG_LEVEL_ERR, (r), __VA_ARGS__)
#define log_warn_errno(r, ...) log_full(LOG_LEVEL_WARN, (r), __VA_ARGS__)
#define log_debug_errno(r, ...) \
	(log_get_level() >= LOG_LEVEL_DEBUG ? log_full(LOG_LEVEL_DEBUG, (r), __VA_ARGS__) : (r))

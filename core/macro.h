/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* Cleanup attributes in the systemd style: a variable declared with one of these is released
 * when it goes out of scope unless ownership was moved out with TAKE_PTR()/TAKE_FD(). */
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _noreturn_ __attribute__((noreturn))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -EBADF;
}
static inline void closep(int *fd)
{
	safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

/* Two-element fd arrays such as pipes. */
static inline void close_pairp(int (*p)[2])
{
	safe_close((*p)[0]);
	safe_close((*p)[1]);
}
#define _cleanup_close_pair_ _cleanup_(close_pairp)

#define TAKE_PTR(p)                         \
	({                                  \
		__typeof__(p) _tp_ = (p);   \
		(p) = NULL;                 \
		_tp_;                       \
	})
#define TAKE_FD(fd)                         \
	({                                  \
		int _tf_ = (fd);            \
		(fd) = -EBADF;              \
		_tf_;                       \
	})

/* Generate a cleanup helper for a third-party handle: DEFINE_TRIVIAL_CLEANUP_FUNC(json_t *,
 * json_decref) gives json_decrefp(), used as _cleanup_(json_decrefp). */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)   \
	static inline void func##p(type *p)       \
	{                                         \
		if (*p)                           \
			func(*p);                 \
	}

/* libc's -1/errno to the project's negative errno. */
#define NEG_ERRNO(r) ((r) < 0 ? -errno : (r))

static inline int errno_or(int fallback)
{
	return errno > 0 ? -errno : -fallback;
}

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Packing strings and sending descriptors: what the daemon's two SOCK_SEQPACKET channels of
 * the container tier share, to its spawn zygote (zygote.c) and to a sandbox's init
 * (exec.c). */

#include <stddef.h>
#include <stdint.h>

/* The bytes of v's NUL-terminated strings, and their count in *ret_n. */
size_t wire_strv_bytes(char *const *v, uint32_t *ret_n);
/* Copies n strings of v to at, each with its NUL; returns where the next goes. */
char *wire_put_strv(char *at, char *const *v, uint32_t n);
/* One message of len bytes with n_fds descriptors (SCM_RIGHTS; at most WIRE_MAX_FDS), whole
 * or not at all: 0, or -errno (-EIO if the kernel took part of it). flags: MSG_DONTWAIT or 0;
 * MSG_NOSIGNAL is always added. */
#define WIRE_MAX_FDS 8
int wire_send(int sock, const void *buf, size_t len, const int *fds, unsigned n_fds, int flags);

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <linux/filter.h>

/* Compiles the default seccomp profile of the container tier into a classic BPF program with
 * libseccomp, once at start-up; every spawn loads the same program with seccomp(2), which a
 * clone3 child may do without allocating. Refused calls fail with EPERM. The caller owns *ret
 * and releases it with profile_seccomp_free(). */
int profile_seccomp_compile(struct sock_fprog **ret);
struct sock_fprog *profile_seccomp_free(struct sock_fprog *prog);
/* Loads prog into the calling thread with no_new_privs set. Async-signal-safe. */
int profile_seccomp_apply(const struct sock_fprog *prog);

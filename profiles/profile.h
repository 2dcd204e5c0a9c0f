/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Security profiles: what a sandbox may do beyond what its namespaces and capabilities allow.
 * Everything that parses, allocates or compiles runs in the daemon at start-up (or on a helper
 * thread); the functions marked async-signal-safe run in a clone3 child before exec and only
 * read what the parent prepared. */

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- seccomp ----------------------------------------------------------------------------- */

/* A compiled seccomp profile: at most two classic BPF programs. Refusals in `logged` are
 * loaded with SECCOMP_FILTER_FLAG_LOG, so that the kernel reports each one through audit (see
 * audit.h); `quiet` holds the rules a profile marks `nolog` (clone3's ENOSYS, which glibc
 * takes as "use clone" on every thread it starts) and is empty (len 0) when there are none.
 * Immutable once compiled: every spawn on every loop reads the same one. */
struct profile_seccomp {
	char name[64];
	struct sock_fprog logged;
	struct sock_fprog quiet;
	unsigned n_rules;       /* lines with a rule, for GET /v1/info */
};

/* The longest error message a profile function writes into its err buffer. Messages name the
 * file and line: "profiles/seccomp/x.profile:12: unknown system call 'ptrce'". */
#define PROFILE_ERROR_MAX 512

/* Parses one profile text and compiles it with libseccomp. origin names the text in errors (a
 * path, or "builtin:seccomp/container.profile"); name is the profile's name. -EINVAL with a message
 * in err for a text that is not a valid profile, other -errno for the host's failures. The
 * text is untrusted: any byte sequence gets an answer, never a crash. The caller owns *ret. */
int profile_seccomp_parse(const char *name, const char *text, size_t len, const char *origin,
			  struct profile_seccomp **ret, char err[PROFILE_ERROR_MAX]);
/* profile_seccomp_free(p) releases one (NULL-safe, returns NULL); see below. */

/* Loads p into the calling thread with no_new_privs set: the logged program with
 * SECCOMP_FILTER_FLAG_LOG, then the quiet one. The kernel runs the newest filter first and
 * keeps the first of equally strong actions, so a nolog rule's answer wins over the logged
 * program's for the same call, and it is not logged. Async-signal-safe. */
int profile_seccomp_load(const struct profile_seccomp *p);

/* The profiles of a node: every DIR/seccomp/NAME.profile, parsed and compiled once at
 * start-up; a sandbox picks one by name. When DIR has no container.profile, the copy built
 * into the binary (from profiles/seccomp/container.profile) stands in for it, so that a
 * daemon runs without an installed data directory. Main thread; the caller owns *ret. A file
 * that does not parse fails the whole set (-EINVAL, message in err): a node must not start
 * with a profile other than the one its operator wrote. */
struct profile_set;
#define PROFILE_DEFAULT_CONTAINER "container"
int profile_set_open(const char *dir, struct profile_set **ret, char err[PROFILE_ERROR_MAX]);
struct profile_set *profile_set_free(struct profile_set *set);
/* The compiled profile called name (NULL: the container tier's default), or NULL if the set
 * has none of that name. Any thread; valid until profile_set_free. */
const struct profile_seccomp *profile_seccomp_get(const struct profile_set *set, const char *name);
size_t profile_set_count(const struct profile_set *set);
const struct profile_seccomp *profile_set_at(const struct profile_set *set, size_t i);
/* The installed profile directory (meson's datadir/warren/profiles). */
const char *profile_default_dir(void);

/* NULL-safe, returns NULL. */
struct profile_seccomp *profile_seccomp_free(struct profile_seccomp *p);

/* ---- Landlock ---------------------------------------------------------------------------- */

/* What the container tier asks of Landlock on this kernel, computed by the parent before the
 * clone: every filesystem right the ABI knows is handled and granted only beneath the
 * sandbox's own root, so a host file reached any other way (a leaked descriptor, a cwd left
 * outside, CVE-2024-21626) is refused; from ABI 6 abstract unix sockets and signals are scoped
 * to the domain; from ABI 7 denials are logged through audit after exec. */
struct profile_landlock {
	int abi;                /* 0: the kernel has no Landlock; nothing is applied */
	uint64_t handled_fs;
	uint64_t scoped;
	uint32_t restrict_flags;
};

/* The Landlock ABI version of the running kernel (0 when it has none, or Landlock is not in
 * the active LSM list), probed once with landlock_create_ruleset(VERSION). Any thread. */
int profile_landlock_abi(void);
/* Fills *ret for this kernel; ret->abi == 0 when there is nothing to apply. Any thread. */
void profile_landlock_plan(struct profile_landlock *ret);
/* Restricts the calling thread (and what it execs) to the tree beneath its current root "/".
 * Sets no_new_privs. No-op when l->abi == 0. Async-signal-safe. */
int profile_landlock_apply(const struct profile_landlock *l);

/* ---- AppArmor ---------------------------------------------------------------------------- */

/* True when the running kernel enforces AppArmor (this node: no). Any thread. */
bool profile_apparmor_available(void);
/* The profile name for a sandbox: "warren-<id>". -ENAMETOOLONG, -EINVAL for an id that is not
 * [A-Za-z0-9_.-]. */
int profile_apparmor_name(const char *id, char *buf, size_t size);
/* The template (DIR/apparmor/warren-container, or the built-in copy) with the sandbox's id
 * substituted for every "{{id}}". The caller frees *ret. */
int profile_apparmor_generate(const char *dir, const char *id, char **ret);
/* Compiles text with apparmor_parser (-Q -K -S: no kernel load, no cache, binary to stdout).
 * Blocking (a child process, tens of ms): helper threads only. Errors go to err. With
 * ret == NULL, only validates. The caller frees *ret. */
int profile_apparmor_compile(const char *text, void **ret, size_t *ret_size,
			     char err[PROFILE_ERROR_MAX]);
/* Generates, compiles and loads (replaces) the sandbox's profile through libapparmor.
 * -EOPNOTSUPP when the kernel has no AppArmor. Blocking: helper threads only. */
int profile_apparmor_load(const char *dir, const char *id, char err[PROFILE_ERROR_MAX]);
/* Removes it again. -ENOENT if it was not loaded. Blocking: helper threads only. */
int profile_apparmor_unload(const char *id);
/* In the spawn child: asks the kernel to confine the next exec with profile (writes
 * "exec <profile>" to /proc/self/attr/apparmor/exec, or /proc/self/attr/exec before Linux
 * 5.8). Async-signal-safe. */
int profile_apparmor_exec(const char *profile);

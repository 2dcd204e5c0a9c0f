/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Between the profile parser (seccomp-parse.c: text -> rules, no libseccomp state) and the
 * compiler (seccomp.c: rules -> BPF with libseccomp). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define PROFILE_MAX_BYTES (1 << 20)  /* a profile file larger than this is refused */
#define PROFILE_MAX_LINE 1024
#define PROFILE_MAX_RULES 4096
#define PROFILE_MAX_SET 32           /* values in one "not in {...}" */
#define PROFILE_MAX_ARCHES 8

enum profile_op {
	PROFILE_OP_EQ,
	PROFILE_OP_NE,
	PROFILE_OP_LT,
	PROFILE_OP_LE,
	PROFILE_OP_GT,
	PROFILE_OP_GE,
	PROFILE_OP_MASKED_EQ, /* (arg & mask) == value */
	PROFILE_OP_NOT_IN,    /* (arg & mask) is none of set[] */
	_PROFILE_OP_MAX,
};

struct profile_cond {
	uint8_t arg;          /* 0-5 */
	enum profile_op op;
	uint64_t mask;        /* MASKED_EQ and NOT_IN; ~0 when the text wrote none */
	uint64_t value;
	uint8_t n_set;
	uint64_t set[PROFILE_MAX_SET];
};

struct profile_rule {
	unsigned line;
	char name[64];        /* as written, without a leading '?' */
	int nr;               /* libseccomp's number (negative pseudo-numbers for multiplexed calls) */
	uint32_t action;      /* SCMP_ACT_* */
	bool nolog;
	uint8_t n_conds;
	struct profile_cond conds[6];
};

struct profile_text {
	uint32_t default_action;
	unsigned default_line; /* 0: no "default" line */
	uint32_t arches[PROFILE_MAX_ARCHES]; /* libseccomp arch tokens; n_arches 0: the default set */
	char arch_names[PROFILE_MAX_ARCHES][16];
	unsigned arch_line;
	unsigned n_arches;
	struct profile_rule *rules;
	size_t n_rules;
	size_t n_skipped;      /* "?name" rules for calls this libseccomp does not know */
};

/* Parses a whole profile. -EINVAL with "origin:line: message" in err, -ENOMEM. */
int profile_text_parse(const char *text, size_t len, const char *origin, struct profile_text *ret,
		       char err[PROFILE_ERROR_MAX]);
void profile_text_done(struct profile_text *t);

/* The masked-equality patterns ("cubes") whose union is every value v with (v & mask) not in
 * set: the rules a "not in" condition compiles to. -E2BIG when more than max are needed. */
struct profile_cube {
	uint64_t mask, value;
};
int profile_not_in_cover(uint64_t mask, const uint64_t *set, unsigned n, struct profile_cube *out,
			 unsigned max);

/* The built-in copies of the files in profiles/, generated at build time (embed.py). */
extern const char profile_builtin_container[];
extern const size_t profile_builtin_container_len;
extern const char profile_builtin_apparmor[];
extern const size_t profile_builtin_apparmor_len;

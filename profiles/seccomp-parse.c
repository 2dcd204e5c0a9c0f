/* SPDX-License-Identifier: Apache-2.0 */
/* The seccomp profile language: one statement per line, '#' starts a comment.
 *
 *   default ACTION
 *   arch NAME...                       native, x86_64, x86, x32, aarch64, ... (libseccomp's)
 *   [?]SYSCALL ACTION [nolog] [if COND [and COND]...]
 *
 *   ACTION  allow | log | trap | kill | kill_process | kill_thread | errno (NAME | NUMBER)
 *   COND    argN [& VALUE] (== | != | < | <= | > | >=) VALUE
 *           argN [& VALUE] not in { VALUE, ... }
 *   VALUE   NUMBER (decimal, 0x hex, 0 octal) or CONSTANT, joined with |
 *
 * A leading '?' lets a profile name a call that this libseccomp does not know (it is skipped
 * rather than refused). Several lines for one call: the first that matches decides. The text
 * comes from files an operator writes: every error names the line, and nothing in here trusts
 * a length, a number or a name it has not checked. No libseccomp state is touched here except
 * its name tables. */
#include <errno.h>
#include <linux/fs.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>

#include "macro.h"
#include "seccomp-internal.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Constants a profile may name instead of writing the number. The ioctl requests are the
 * kernel's values; the kernel compares a request as an unsigned int. */
static const struct {
	const char *name;
	uint64_t value;
} constants[] = {
	{ "FICLONE", FICLONE },
	{ "FICLONERANGE", FICLONERANGE },
	{ "FIDEDUPERANGE", FIDEDUPERANGE },
	{ "XFS_IOC_SWAPEXT", 0xc0c0586dU },   /* _IOWR('X', 109, struct xfs_swapext) */
	{ "EXT4_IOC_MOVE_EXT", 0xc028660fU }, /* _IOWR('f', 15, struct move_extent) */
	{ "TIOCSTI", TIOCSTI },
	{ "TIOCLINUX", TIOCLINUX },
	{ "CLONE_NEWUSER", CLONE_NEWUSER },
	{ "CLONE_NEWNS", CLONE_NEWNS },
	{ "CLONE_NEWPID", CLONE_NEWPID },
	{ "CLONE_NEWNET", CLONE_NEWNET },
	{ "CLONE_NEWUTS", CLONE_NEWUTS },
	{ "CLONE_NEWIPC", CLONE_NEWIPC },
	{ "CLONE_NEWCGROUP", CLONE_NEWCGROUP },
	{ "CLONE_NEWTIME", CLONE_NEWTIME },
	{ "PER_LINUX", PER_LINUX },
	{ "PER_LINUX32", PER_LINUX32 },
	{ "UNAME26", UNAME26 },
	{ "ADDR_NO_RANDOMIZE", ADDR_NO_RANDOMIZE },
	{ "READ_IMPLIES_EXEC", READ_IMPLIES_EXEC },
	{ "MMAP_PAGE_ZERO", MMAP_PAGE_ZERO },
};

enum tok_type { T_END, T_WORD, T_NUM, T_OP, T_AMP, T_PIPE, T_LBRACE, T_RBRACE, T_COMMA };

struct tok {
	enum tok_type type;
	const char *s;
	size_t len;
	uint64_t num;        /* T_NUM */
	enum profile_op op;  /* T_OP */
};

#define MAX_TOKENS 256

struct parser {
	const char *origin;
	unsigned line;
	char *err;
	struct tok toks[MAX_TOKENS];
	unsigned n, pos;
};

static int fail(struct parser *p, const char *fmt, ...) _printf_(2, 3);
static int fail(struct parser *p, const char *fmt, ...)
{
	int n = snprintf(p->err, PROFILE_ERROR_MAX, "%s:%u: ", p->origin, p->line);
	va_list ap;

	if (n < 0 || n >= PROFILE_ERROR_MAX)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(p->err + n, PROFILE_ERROR_MAX - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A token as text for messages: at most 40 bytes, printable ASCII only (the text may hold any
 * bytes, and a message goes to logs and to API answers). */
static const char *tok_str(const struct tok *t, char buf[48])
{
	size_t n = 0;

	if (t->type == T_END)
		return "end of line";
	for (size_t i = 0; i < t->len && n < 40; i++)
		buf[n++] = (t->s[i] >= 0x20 && t->s[i] < 0x7f) ? t->s[i] : '?';
	buf[n] = '\0';
	return buf;
}

static bool is_word_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '?';
}

static bool is_word(char c)
{
	return is_word_start(c) || (c >= '0' && c <= '9');
}

/* Numbers as C writes them; anything that does not fit 64 bits is an error, not a wrap. */
static int lex_number(struct parser *p, const char *s, size_t len, struct tok *t)
{
	unsigned base = 10;
	size_t i = 0;
	uint64_t v = 0;

	if (len > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, i = 2;
	else if (len > 1 && s[0] == '0')
		base = 8, i = 1;
	if (i == len)
		return fail(p, "'%.*s' is not a number", (int)MIN(len, 40), s);
	for (; i < len; i++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			d = 99;
		if (d >= base)
			return fail(p, "'%.*s' is not a number", (int)MIN(len, 40), s);
		if (v > (UINT64_MAX - d) / base)
			return fail(p, "'%.*s' does not fit in 64 bits", (int)MIN(len, 40), s);
		v = v * base + d;
	}
	t->num = v;
	return 0;
}

static int lex(struct parser *p, const char *s, size_t len)
{
	size_t i = 0;

	p->n = p->pos = 0;
	while (i < len) {
		struct tok *t = &p->toks[p->n];
		char c = s[i];
		size_t start = i;

		if (c == ' ' || c == '\t' || c == '\r') {
			i++;
			continue;
		}
		if (c == '#')
			break;
		if (p->n >= MAX_TOKENS - 1)
			return fail(p, "more than %d tokens on one line", MAX_TOKENS - 1);
		*t = (struct tok){ .s = s + i };
		if (is_word_start(c)) {
			while (i < len && is_word(s[i]))
				i++;
			t->type = T_WORD;
		} else if (c >= '0' && c <= '9') {
			/* letters belong to the number so that "0x1g" or "12ab" is one bad token */
			while (i < len && is_word(s[i]))
				i++;
			t->type = T_NUM;
			t->len = i - start;
			if (lex_number(p, t->s, t->len, t) < 0)
				return -EINVAL;
		} else if ((c == '=' || c == '!' || c == '<' || c == '>') && i + 1 < len &&
			   s[i + 1] == '=') {
			t->type = T_OP;
			t->op = c == '=' ? PROFILE_OP_EQ : c == '!' ? PROFILE_OP_NE :
				c == '<' ? PROFILE_OP_LE : PROFILE_OP_GE;
			i += 2;
		} else if (c == '<' || c == '>') {
			t->type = T_OP;
			t->op = c == '<' ? PROFILE_OP_LT : PROFILE_OP_GT;
			i++;
		} else if (c == '&' || c == '|' || c == '{' || c == '}' || c == ',') {
			t->type = c == '&' ? T_AMP : c == '|' ? T_PIPE : c == '{' ? T_LBRACE :
				  c == '}' ? T_RBRACE : T_COMMA;
			i++;
		} else if (c >= 0x20 && c < 0x7f) {
			return fail(p, "unexpected character '%c'", c);
		} else {
			return fail(p, "unexpected byte 0x%02x", (unsigned char)c);
		}
		t->len = i - start;
		p->n++;
	}
	p->toks[p->n] = (struct tok){ .type = T_END, .s = s + len };
	return 0;
}

static const struct tok *peek(struct parser *p)
{
	return &p->toks[p->pos];
}

static const struct tok *next(struct parser *p)
{
	const struct tok *t = &p->toks[p->pos];

	if (t->type != T_END)
		p->pos++;
	return t;
}

static bool word_is(const struct tok *t, const char *w)
{
	return t->type == T_WORD && t->len == strlen(w) && memcmp(t->s, w, t->len) == 0;
}

/* A word into a NUL-terminated buffer; -EINVAL when it does not fit. */
static int word_copy(struct parser *p, const struct tok *t, char *buf, size_t size)
{
	char tb[48];

	if (t->len >= size)
		return fail(p, "'%s...' is too long", tok_str(t, tb));
	memcpy(buf, t->s, t->len);
	buf[t->len] = '\0';
	return 0;
}

static int parse_value(struct parser *p, uint64_t *ret)
{
	uint64_t v = 0;
	char tb[48];

	for (;;) {
		const struct tok *t = next(p);
		bool found = false;

		if (t->type == T_NUM) {
			v |= t->num;
		} else if (t->type == T_WORD) {
			for (size_t i = 0; i < ELEMENTSOF(constants); i++)
				if (word_is(t, constants[i].name)) {
					v |= constants[i].value;
					found = true;
					break;
				}
			if (!found)
				return fail(p, "unknown constant '%s' (write the number)",
					    tok_str(t, tb));
		} else {
			return fail(p, "expected a number or a constant, got '%s'", tok_str(t, tb));
		}
		if (peek(p)->type != T_PIPE)
			break;
		next(p);
	}
	*ret = v;
	return 0;
}

static int errno_from_name(const char *name)
{
	/* glibc knows every errno's name; errnos above 4095 cannot be returned by seccomp */
	for (int e = 1; e < 4096; e++) {
		const char *n = strerrorname_np(e);

		if (n && strcmp(n, name) == 0)
			return e;
	}
	return -1;
}

static int parse_action(struct parser *p, uint32_t *ret)
{
	const struct tok *t = next(p);
	char tb[48], name[32];

	if (word_is(t, "allow"))
		*ret = SCMP_ACT_ALLOW;
	else if (word_is(t, "log"))
		*ret = SCMP_ACT_LOG;
	else if (word_is(t, "trap"))
		*ret = SCMP_ACT_TRAP;
	else if (word_is(t, "kill") || word_is(t, "kill_process"))
		*ret = SCMP_ACT_KILL_PROCESS;
	else if (word_is(t, "kill_thread"))
		*ret = SCMP_ACT_KILL_THREAD;
	else if (word_is(t, "errno")) {
		const struct tok *e = next(p);
		int nr;

		if (e->type == T_NUM) {
			if (e->num < 1 || e->num > 4095)
				return fail(p, "errno %llu is out of range (1-4095)",
					    (unsigned long long)e->num);
			nr = (int)e->num;
		} else if (e->type == T_WORD) {
			if (word_copy(p, e, name, sizeof(name)) < 0)
				return -EINVAL;
			nr = errno_from_name(name);
			if (nr < 0)
				return fail(p, "unknown errno name '%s'", name);
		} else {
			return fail(p, "'errno' needs a name or a number, got '%s'", tok_str(e, tb));
		}
		*ret = SCMP_ACT_ERRNO(nr);
	} else
		return fail(p, "expected an action (allow, log, trap, kill, kill_thread or errno), "
			       "got '%s'", tok_str(t, tb));
	return 0;
}

static int parse_cond(struct parser *p, struct profile_cond *c)
{
	const struct tok *t = next(p);
	char tb[48];
	bool masked = false;

	if (t->type != T_WORD || t->len != 4 || memcmp(t->s, "arg", 3) != 0 || t->s[3] < '0' ||
	    t->s[3] > '5')
		return fail(p, "expected arg0 to arg5, got '%s'", tok_str(t, tb));
	*c = (struct profile_cond){ .arg = (uint8_t)(t->s[3] - '0'), .mask = UINT64_MAX };
	if (peek(p)->type == T_AMP) {
		next(p);
		if (parse_value(p, &c->mask) < 0)
			return -EINVAL;
		if (c->mask == 0)
			return fail(p, "arg%u & 0 is always 0", c->arg);
		masked = true;
	}

	t = next(p);
	if (t->type == T_OP) {
		c->op = t->op;
		if (parse_value(p, &c->value) < 0)
			return -EINVAL;
		if (masked) {
			if (c->op != PROFILE_OP_EQ)
				return fail(p, "a masked argument can only be compared with ==");
			if (c->value & ~c->mask)
				return fail(p, "arg%u & 0x%llx can never equal 0x%llx", c->arg,
					    (unsigned long long)c->mask,
					    (unsigned long long)c->value);
			c->op = PROFILE_OP_MASKED_EQ;
		}
		return 0;
	}
	if (!word_is(t, "not") || !word_is(next(p), "in") || next(p)->type != T_LBRACE)
		return fail(p, "expected a comparison (== != < <= > >=) or 'not in {...}' after "
			       "arg%u", c->arg);
	c->op = PROFILE_OP_NOT_IN;
	for (;;) {
		uint64_t v;

		if (peek(p)->type == T_RBRACE && c->n_set > 0) {
			next(p);
			break;
		}
		if (c->n_set >= PROFILE_MAX_SET)
			return fail(p, "more than %d values in 'not in'", PROFILE_MAX_SET);
		if (parse_value(p, &v) < 0)
			return -EINVAL;
		if (v & ~c->mask)
			return fail(p, "0x%llx has bits outside the mask 0x%llx",
				    (unsigned long long)v, (unsigned long long)c->mask);
		c->set[c->n_set++] = v;
		t = next(p);
		if (t->type == T_RBRACE)
			break;
		if (t->type != T_COMMA)
			return fail(p, "expected ',' or '}' in the set, got '%s'", tok_str(t, tb));
	}
	return 0;
}

static int parse_rule(struct parser *p, struct profile_text *pt, struct profile_rule *r)
{
	const struct tok *t = next(p);
	char tb[48];
	bool optional = false;
	unsigned not_in = 0;

	*r = (struct profile_rule){ .line = p->line };
	if (t->len > 0 && t->s[0] == '?')
		optional = true;
	if (t->len - optional == 0 || memchr(t->s + optional, '?', t->len - optional))
		return fail(p, "'%s' is not a system call name", tok_str(t, tb));
	if (t->len - optional >= sizeof(r->name))
		return fail(p, "'%s...' is too long for a system call name", tok_str(t, tb));
	memcpy(r->name, t->s + optional, t->len - optional);
	r->nr = seccomp_syscall_resolve_name(r->name);
	if (r->nr == __NR_SCMP_ERROR && !optional)
		return fail(p, "unknown system call '%s' (prefix it with '?' if this libseccomp "
			       "may not know it)", r->name);

	if (parse_action(p, &r->action) < 0)
		return -EINVAL;
	if (r->action == pt->default_action)
		return fail(p, "%s: the action is the default one; the rule would change nothing",
			    r->name);
	if (word_is(peek(p), "nolog")) {
		next(p);
		if (r->action == SCMP_ACT_ALLOW || r->action == SCMP_ACT_LOG)
			return fail(p, "%s: 'nolog' only applies to refusals", r->name);
		r->nolog = true;
	}
	if (word_is(peek(p), "if")) {
		next(p);
		for (;;) {
			struct profile_cond *c;

			if (r->n_conds >= ELEMENTSOF(r->conds))
				return fail(p, "%s: more than %zu conditions", r->name,
					    ELEMENTSOF(r->conds));
			c = &r->conds[r->n_conds];
			if (parse_cond(p, c) < 0)
				return -EINVAL;
			/* libseccomp compares each argument at most once per rule */
			for (unsigned i = 0; i < r->n_conds; i++)
				if (r->conds[i].arg == c->arg)
					return fail(p, "%s: arg%u is compared twice in one rule "
						       "(write two rules)", r->name, c->arg);
			not_in += c->op == PROFILE_OP_NOT_IN;
			if (not_in > 1)
				return fail(p, "%s: only one 'not in' per rule", r->name);
			r->n_conds++;
			if (!word_is(peek(p), "and"))
				break;
			next(p);
		}
	}
	t = next(p);
	if (t->type != T_END)
		return fail(p, "unexpected '%s' after the rule", tok_str(t, tb));
	if (r->nr == __NR_SCMP_ERROR)
		return 0; /* optional and unknown: parsed, then skipped by the caller */
	return 1;
}

static int parse_arch(struct parser *p, struct profile_text *pt)
{
	char name[16], tb[48];

	if (pt->n_arches > 0)
		return fail(p, "a second 'arch' line");
	if (peek(p)->type == T_END)
		return fail(p, "'arch' needs at least one name");
	while (peek(p)->type != T_END) {
		const struct tok *t = next(p);
		uint32_t a;

		if (t->type != T_WORD)
			return fail(p, "expected an architecture name, got '%s'", tok_str(t, tb));
		if (word_copy(p, t, name, sizeof(name)) < 0)
			return -EINVAL;
		a = strcmp(name, "native") == 0 ? seccomp_arch_native() :
						  seccomp_arch_resolve_name(name);
		if (a == 0)
			return fail(p, "unknown architecture '%s'", name);
		for (unsigned i = 0; i < pt->n_arches; i++)
			if (pt->arches[i] == a)
				return fail(p, "architecture '%s' named twice", name);
		if (pt->n_arches >= PROFILE_MAX_ARCHES)
			return fail(p, "more than %d architectures", PROFILE_MAX_ARCHES);
		snprintf(pt->arch_names[pt->n_arches], sizeof(pt->arch_names[0]), "%s", name);
		pt->arches[pt->n_arches++] = a;
	}
	pt->arch_line = p->line;
	return 0;
}

/* Field by field: the structs have padding. */
static bool same_conds(const struct profile_rule *a, const struct profile_rule *b)
{
	if (a->n_conds != b->n_conds)
		return false;
	for (unsigned i = 0; i < a->n_conds; i++) {
		const struct profile_cond *x = &a->conds[i], *y = &b->conds[i];

		if (x->arg != y->arg || x->op != y->op || x->mask != y->mask ||
		    x->value != y->value || x->n_set != y->n_set ||
		    memcmp(x->set, y->set, x->n_set * sizeof(x->set[0])) != 0)
			return false;
	}
	return true;
}

static int parse_line(struct parser *p, struct profile_text *pt, size_t *cap)
{
	const struct tok *t = peek(p);
	char tb[48];
	int r;

	if (t->type == T_END)
		return 0;
	if (t->type != T_WORD)
		return fail(p, "expected 'default', 'arch' or a system call, got '%s'",
			    tok_str(t, tb));
	if (word_is(t, "default")) {
		next(p);
		if (pt->default_line)
			return fail(p, "a second 'default' line (the first is line %u)",
				    pt->default_line);
		if (parse_action(p, &pt->default_action) < 0)
			return -EINVAL;
		if (next(p)->type != T_END)
			return fail(p, "unexpected words after the default action");
		pt->default_line = p->line;
		return 0;
	}
	if (word_is(t, "arch")) {
		next(p);
		return parse_arch(p, pt);
	}
	if (!pt->default_line)
		return fail(p, "a rule before the 'default' line");
	if (pt->n_rules >= PROFILE_MAX_RULES)
		return fail(p, "more than %d rules", PROFILE_MAX_RULES);
	if (pt->n_rules == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct profile_rule *rules = reallocarray(pt->rules, n, sizeof(*rules));

		if (!rules)
			return -ENOMEM;
		pt->rules = rules;
		*cap = n;
	}
	r = parse_rule(p, pt, &pt->rules[pt->n_rules]);
	if (r < 0)
		return r;
	if (r == 0) {
		pt->n_skipped++;
		return 0;
	}
	for (size_t i = 0; i < pt->n_rules; i++) {
		const struct profile_rule *o = &pt->rules[i], *n = &pt->rules[pt->n_rules];

		if (o->nr != n->nr)
			continue;
		/* The quiet and the logged program must not both answer for one call: which
		 * one wins would depend on their order. */
		if (o->nolog != n->nolog)
			return fail(p, "%s: rules with and without 'nolog' for one call (line %u)",
				    o->name, o->line);
		/* libseccomp lets an unconditional rule silently replace the others (and a
		 * second one the first): say so rather than compile something else. */
		if (o->n_conds == 0 || n->n_conds == 0)
			return fail(p, "%s: a rule without conditions and other rules for one "
				       "call (line %u)", o->name, o->line);
		if (same_conds(o, n))
			return fail(p, "%s: the same conditions as line %u", o->name, o->line);
	}
	pt->n_rules++;
	return 0;
}

int profile_text_parse(const char *text, size_t len, const char *origin, struct profile_text *ret,
		       char err[PROFILE_ERROR_MAX])
{
	_cleanup_free_ struct parser *p = NULL;
	struct profile_text pt = { 0 };
	size_t cap = 0;
	int r = 0;

	err[0] = '\0';
	if (len > PROFILE_MAX_BYTES) {
		snprintf(err, PROFILE_ERROR_MAX, "%s: larger than %d bytes", origin,
			 PROFILE_MAX_BYTES);
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->origin = origin;
	p->err = err;

	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;

		p->line++;
		if (memchr(text + i, '\0', end - i))
			r = fail(p, "NUL byte in the text");
		else if (end - i > PROFILE_MAX_LINE)
			r = fail(p, "line longer than %d bytes", PROFILE_MAX_LINE);
		else if ((r = lex(p, text + i, end - i)) >= 0)
			r = parse_line(p, &pt, &cap);
		if (r < 0) {
			free(pt.rules);
			return r;
		}
		i = end + 1;
	}
	if (!pt.default_line) {
		snprintf(err, PROFILE_ERROR_MAX,
			 "%s: no 'default' line: say what calls not named get (e.g. 'default "
			 "allow')", origin);
		free(pt.rules);
		return -EINVAL;
	}
	*ret = pt;
	return 0;
}

void profile_text_done(struct profile_text *t)
{
	free(t->rules);
	*t = (struct profile_text){ 0 };
}

/* "not in" as a union of masked matches, since libseccomp compares an argument at most once
 * per rule and rules for one call are OR'ed.
 *
 * The common shape, personality's allowed set {0, 8, 0x20000, 0x20008, 0xffffffff}, is every
 * subset of a few bits H plus the all-ones value. Its complement is covered by walking the other
 * bits O in a cycle: "o_i set and o_(i+1) clear" matches every value with some O bit set and
 * some clear; "o_0 set and h clear" for each h in H adds the values with all of O set other
 * than all-ones. |O| + |H| rules (32 for personality), plus one for all-ones when the set lacks
 * it.
 *
 * Any other set falls back to a binary trie over the mask's bits: at each prefix some members
 * share, a branch no member takes is one rule. At most |set| * popcount(mask) rules. */
static int add_cube(struct profile_cube *out, unsigned *n, unsigned max, uint64_t m, uint64_t v)
{
	if (*n >= max)
		return -E2BIG;
	out[(*n)++] = (struct profile_cube){ .mask = m, .value = v };
	return 0;
}

static int trie_cover(const uint64_t *bits, unsigned nbits, unsigned depth, uint64_t pmask,
		      uint64_t pval, const uint64_t *set, unsigned n, struct profile_cube *out,
		      unsigned *count, unsigned max)
{
	uint64_t sub[PROFILE_MAX_SET];
	unsigned k;
	int r;

	if (depth == nbits)
		return 0; /* this prefix is a member */
	for (int b = 0; b < 2; b++) {
		uint64_t m = pmask | bits[depth], v = pval | (b ? bits[depth] : 0);

		k = 0;
		for (unsigned i = 0; i < n; i++)
			if ((set[i] & m) == v)
				sub[k++] = set[i];
		if (k == 0)
			r = add_cube(out, count, max, m, v);
		else
			r = trie_cover(bits, nbits, depth + 1, m, v, sub, k, out, count, max);
		if (r < 0)
			return r;
	}
	return 0;
}

int profile_not_in_cover(uint64_t mask, const uint64_t *set, unsigned n, struct profile_cube *out,
			 unsigned max)
{
	uint64_t h = 0, bits[64], other[64], uniq[PROFILE_MAX_SET];
	unsigned nbits = 0, nother = 0, nuniq = 0, count = 0, hbits;
	bool has_ones = false;
	int r;

	if (n == 0 || n > PROFILE_MAX_SET)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		bool dup = false;

		for (unsigned j = 0; j < nuniq; j++)
			dup |= uniq[j] == (set[i] & mask);
		if (!dup)
			uniq[nuniq++] = set[i] & mask;
	}
	for (unsigned i = 0; i < nuniq; i++) {
		if (uniq[i] == mask)
			has_ones = true;
		else
			h |= uniq[i];
	}
	for (int b = 63; b >= 0; b--)
		if (mask & (1ULL << b)) {
			bits[nbits++] = 1ULL << b;
			if (!(h & (1ULL << b)))
				other[nother++] = 1ULL << b;
		}
	hbits = (unsigned)__builtin_popcountll(h);

	/* the members other than all-ones are exactly the subsets of H? */
	if (nother >= 2 && hbits < 6 && nuniq - has_ones == (1U << hbits)) {
		for (unsigned i = 0; i < nother; i++) {
			uint64_t a = other[i], b = other[(i + 1) % nother];

			if ((r = add_cube(out, &count, max, a | b, a)) < 0)
				return r;
		}
		for (unsigned i = 0; i < nbits; i++)
			if ((h & bits[i]) &&
			    (r = add_cube(out, &count, max, other[0] | bits[i], other[0])) < 0)
				return r;
		if (!has_ones && (r = add_cube(out, &count, max, mask, mask)) < 0)
			return r;
		return (int)count;
	}
	r = trie_cover(bits, nbits, 0, 0, 0, uniq, nuniq, out, &count, max);
	return r < 0 ? r : (int)count;
}

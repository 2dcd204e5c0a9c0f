/* SPDX-License-Identifier: Apache-2.0 */
/* Seccomp profiles: compiled from their text (seccomp-parse.c) to classic BPF with libseccomp,
 * once per node at start-up, and loaded by every spawn with seccomp(2), which a clone3 child
 * may do without allocating.
 *
 * Why refusals answer EPERM and are logged: programs that probe for a feature degrade instead
 * of crashing (Docker's choice), and SECCOMP_FILTER_FLAG_LOG makes the kernel write an audit
 * record for each one, which the daemon reads (audit.c) to answer "what did my agents try that
 * was refused?". The one refusal that is not a denial, clone3's ENOSYS (glibc then uses clone,
 * whose flags a rule can see), is marked nolog and goes into a second program without the
 * flag. */
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"
#include "profiles-config.h"
#include "seccomp-internal.h"

#ifndef SECCOMP_FILTER_FLAG_LOG
#define SECCOMP_FILTER_FLAG_LOG (1UL << 1) /* Linux 4.14 */
#endif

DEFINE_TRIVIAL_CLEANUP_FUNC(scmp_filter_ctx, seccomp_release)

#define MAX_CUBES 64 /* rules one "not in" may expand to */

/* Messages are cut to PROFILE_ERROR_MAX on purpose (a long path must not lose the error). */
static void set_err(char err[PROFILE_ERROR_MAX], const char *fmt, ...) _printf_(2, 3);
static void set_err(char err[PROFILE_ERROR_MAX], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, PROFILE_ERROR_MAX, fmt, ap);
	va_end(ap);
}

static int new_ctx(const struct profile_text *pt, uint32_t def, const char *origin,
		   scmp_filter_ctx *ret, char err[PROFILE_ERROR_MAX])
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
	int r;

	ctx = seccomp_init(def);
	if (!ctx)
		return -ENOMEM;
	/* The spawn sets no_new_privs itself, right before loading. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (r < 0)
		return r;
	/* A binary search over syscall numbers instead of a linear list. Loading pays for the
	 * kernel's action cache, which runs the filter once for every syscall of every arch:
	 * measured on the container profile, 74 us per load instead of 179 us. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (r < 0)
		return r;
	if (pt->n_arches == 0) {
		/* Without these, an i386 (int 0x80) or x32 call would miss every rule:
		 * libseccomp would kill the process, since foreign arches get the bad-arch
		 * action. Adding them applies the same rules under each arch's own numbers. */
		if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
			r = seccomp_arch_add(ctx, SCMP_ARCH_X86);
			if (r < 0 && r != -EEXIST)
				return r;
			r = seccomp_arch_add(ctx, SCMP_ARCH_X32);
			if (r < 0 && r != -EEXIST)
				return r;
		}
	} else {
		/* Exactly the arches the profile names: the native one goes if it is absent. */
		bool native = false;

		for (unsigned i = 0; i < pt->n_arches; i++) {
			native |= pt->arches[i] == seccomp_arch_native();
			r = seccomp_arch_add(ctx, pt->arches[i]);
			if (r < 0 && r != -EEXIST) {
				/* e.g. a big-endian arch next to a little-endian one */
				set_err(err, "%s:%u: libseccomp cannot filter '%s' here (%s)", origin,
					pt->arch_line, pt->arch_names[i], strerror(-r));
				return -EINVAL;
			}
		}
		if (!native) {
			r = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE);
			if (r < 0)
				return r;
		}
	}
	*ret = TAKE_PTR(ctx);
	return 0;
}

static enum scmp_compare cmp_of(enum profile_op op)
{
	switch (op) {
	case PROFILE_OP_EQ: return SCMP_CMP_EQ;
	case PROFILE_OP_NE: return SCMP_CMP_NE;
	case PROFILE_OP_LT: return SCMP_CMP_LT;
	case PROFILE_OP_LE: return SCMP_CMP_LE;
	case PROFILE_OP_GT: return SCMP_CMP_GT;
	case PROFILE_OP_GE: return SCMP_CMP_GE;
	default: return SCMP_CMP_MASKED_EQ;
	}
}

static int add_rule(scmp_filter_ctx ctx, const struct profile_rule *rule, const char *origin,
		    char err[PROFILE_ERROR_MAX])
{
	struct scmp_arg_cmp cmp[6];
	struct profile_cube cubes[MAX_CUBES];
	int not_in = -1, n_cubes = 1, r = 0;

	for (unsigned i = 0; i < rule->n_conds; i++) {
		const struct profile_cond *c = &rule->conds[i];

		cmp[i] = (struct scmp_arg_cmp){ .arg = c->arg, .op = cmp_of(c->op) };
		if (c->op == PROFILE_OP_MASKED_EQ) {
			cmp[i].datum_a = c->mask;
			cmp[i].datum_b = c->value;
		} else {
			cmp[i].datum_a = c->value;
		}
		if (c->op == PROFILE_OP_NOT_IN) {
			not_in = (int)i;
			n_cubes = profile_not_in_cover(c->mask, c->set, c->n_set, cubes, MAX_CUBES);
			if (n_cubes == -E2BIG) {
				set_err(err,
					 "%s:%u: %s: this 'not in' set needs more than %d rules; "
					 "split it", origin, rule->line, rule->name, MAX_CUBES);
				return -EINVAL;
			}
			if (n_cubes < 0)
				return n_cubes;
		}
	}
	/* n_cubes == 0: the set holds every value the mask allows; the rule never matches */
	for (int k = 0; k < n_cubes && r >= 0; k++) {
		if (not_in >= 0) {
			cmp[not_in].datum_a = cubes[k].mask;
			cmp[not_in].datum_b = cubes[k].value;
		}
		r = seccomp_rule_add_array(ctx, rule->action, rule->nr, rule->n_conds, cmp);
	}
	if (r < 0) {
		set_err(err, "%s:%u: %s: libseccomp refused the rule (%s)%s",
			 origin, rule->line, rule->name, strerror(-r),
			 r == -EEXIST ? ": another rule for the same arguments has another action" :
			 r == -EINVAL ? ": a value may not fit a 32-bit architecture's arguments" :
					"");
		return -EINVAL;
	}
	return 0;
}

/* libseccomp 2.5.4 exports only to an fd (seccomp_export_bpf_mem is 2.6): write the program
 * into a memfd and read it back into buf. */
static int export_prog(scmp_filter_ctx ctx, struct sock_fprog *ret)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ struct sock_filter *filter = NULL;
	off_t size;
	int r;

	fd = memfd_create("warren-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return r;
	size = lseek(fd, 0, SEEK_END);
	if (size < 0)
		return -errno;
	if (size == 0 || size % sizeof(struct sock_filter) != 0 ||
	    size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -E2BIG;
	filter = malloc(size);
	if (!filter)
		return -ENOMEM;
	if (pread(fd, filter, size, 0) != size)
		return errno_or(EIO);
	ret->len = size / sizeof(struct sock_filter);
	ret->filter = TAKE_PTR(filter);
	return 0;
}

static int compile(const struct profile_text *pt, bool split_nolog, const char *origin,
		   struct sock_fprog *logged, struct sock_fprog *quiet, char err[PROFILE_ERROR_MAX])
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx lctx = NULL, qctx = NULL;
	bool any_quiet = false;
	int r;

	err[0] = '\0';
	r = new_ctx(pt, pt->default_action, origin, &lctx, err);
	for (size_t i = 0; r >= 0 && i < pt->n_rules; i++)
		any_quiet |= pt->rules[i].nolog;
	if (r >= 0 && split_nolog && any_quiet)
		r = new_ctx(pt, SCMP_ACT_ALLOW, origin, &qctx, err);
	if (r == -EINVAL && err[0])
		return r;
	if (r < 0)
		goto libfail;
	for (size_t i = 0; i < pt->n_rules; i++) {
		const struct profile_rule *rule = &pt->rules[i];

		r = add_rule(rule->nolog && qctx ? qctx : lctx, rule, origin, err);
		if (r < 0)
			return r;
	}
	r = export_prog(lctx, logged);
	if (r >= 0 && qctx) {
		r = export_prog(qctx, quiet);
		if (r < 0)
			free(TAKE_PTR(logged->filter));
	}
	if (r == -E2BIG) {
		set_err(err, "%s: the compiled program is larger than the "
			 "kernel's %d instructions", origin, BPF_MAXINSNS);
		return -EINVAL;
	}
	if (r >= 0)
		return 0;
libfail:
	/* Whatever libseccomp refuses in an operator's profile is the profile's problem. */
	set_err(err, "%s: libseccomp: %s", origin, strerror(-r));
	return r == -ENOMEM ? r : -EINVAL;
}

int profile_seccomp_parse(const char *name, const char *text, size_t len, const char *origin,
			  struct profile_seccomp **ret, char err[PROFILE_ERROR_MAX])
{
	_cleanup_free_ struct profile_seccomp *p = NULL;
	struct profile_text pt;
	int r;

	err[0] = '\0';
	if (!name || strlen(name) >= sizeof(p->name)) {
		set_err(err, "%s: the profile name is too long", origin);
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	r = profile_text_parse(text, len, origin, &pt, err);
	if (r < 0)
		return r;
	r = compile(&pt, true, origin, &p->logged, &p->quiet, err);
	p->n_rules = (unsigned)pt.n_rules;
	profile_text_done(&pt);
	if (r < 0)
		return r;
	strcpy(p->name, name);
	*ret = TAKE_PTR(p);
	return 0;
}

struct profile_seccomp *profile_seccomp_free(struct profile_seccomp *p)
{
	if (!p)
		return NULL;
	free(p->logged.filter);
	free(p->quiet.filter);
	free(p);
	return NULL;
}

/* ---- sets ---------------------------------------------------------------------------------- */

struct profile_set {
	size_t n;
	struct profile_seccomp **v;
};

DEFINE_TRIVIAL_CLEANUP_FUNC(struct profile_set *, profile_set_free)

const char *profile_default_dir(void)
{
	return WARREN_PROFILES_DIR;
}

static bool valid_name(const char *s, size_t n)
{
	if (n == 0 || n >= sizeof(((struct profile_seccomp *)0)->name) || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_' || s[i] == '.'))
			return false;
	return true;
}

static int set_add(struct profile_set *set, struct profile_seccomp *p)
{
	struct profile_seccomp **v = reallocarray(set->v, set->n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	set->v = v;
	set->v[set->n++] = p;
	return 0;
}

/* Reads a whole profile file (at most PROFILE_MAX_BYTES + 1, so the parser sees "too large"). */
static int read_text(int dirfd, const char *file, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = PROFILE_MAX_BYTES + 1;
	struct stat st;

	fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EISDIR;
	if (st.st_size >= 0 && (size_t)st.st_size < cap)
		cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += n;
	}
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

int profile_set_open(const char *dir, struct profile_set **ret, char err[PROFILE_ERROR_MAX])
{
	_cleanup_(profile_set_freep) struct profile_set *set = NULL;
	_cleanup_close_ int dfd = -EBADF;
	char path[PATH_MAX];
	DIR *d = NULL;
	struct dirent *de;
	int r = 0;

	err[0] = '\0';
	if (!dir)
		dir = profile_default_dir();
	set = calloc(1, sizeof(*set));
	if (!set)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/seccomp", dir);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 && errno != ENOENT) {
		r = -errno;
		set_err(err, "%s: %s", path, strerror(-r));
		return r;
	}
	if (dfd >= 0) {
		int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);

		d = fd >= 0 ? fdopendir(fd) : NULL;
		if (!d) {
			r = -errno;
			if (fd >= 0)
				close(fd);
			set_err(err, "%s: %s", path, strerror(-r));
			return r;
		}
	}
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name), sl = strlen(".profile");
		_cleanup_free_ char *text = NULL;
		struct profile_seccomp *p = NULL;
		char name[64], origin[PATH_MAX + 16];
		size_t len = 0;

		if (n <= sl || strcmp(de->d_name + n - sl, ".profile") != 0)
			continue;
		snprintf(origin, sizeof(origin), "%s/%s", path, de->d_name);
		if (!valid_name(de->d_name, n - sl)) {
			set_err(err, "%s: a profile name is 1-63 characters of "
				 "[A-Za-z0-9._-], not starting with '.'", origin);
			r = -EINVAL;
			break;
		}
		memcpy(name, de->d_name, n - sl);
		name[n - sl] = '\0';
		r = read_text(dfd, de->d_name, &text, &len);
		if (r < 0) {
			set_err(err, "%s: %s", origin, strerror(-r));
			break;
		}
		r = profile_seccomp_parse(name, text, len, origin, &p, err);
		if (r >= 0)
			r = set_add(set, p);
		if (r < 0) {
			profile_seccomp_free(p);
			break;
		}
	}
	if (d)
		closedir(d);
	if (r < 0)
		return r;

	if (!profile_seccomp_get(set, PROFILE_DEFAULT_CONTAINER)) {
		struct profile_seccomp *p = NULL;

		r = profile_seccomp_parse(PROFILE_DEFAULT_CONTAINER, profile_builtin_container,
					  profile_builtin_container_len,
					  "builtin:seccomp/container.profile", &p, err);
		if (r >= 0)
			r = set_add(set, p);
		if (r < 0) {
			profile_seccomp_free(p);
			return r;
		}
	}
	*ret = TAKE_PTR(set);
	return 0;
}

struct profile_set *profile_set_free(struct profile_set *set)
{
	if (!set)
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		profile_seccomp_free(set->v[i]);
	free(set->v);
	free(set);
	return NULL;
}

const struct profile_seccomp *profile_seccomp_get(const struct profile_set *set, const char *name)
{
	if (!set)
		return NULL;
	if (!name)
		name = PROFILE_DEFAULT_CONTAINER;
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->v[i]->name, name) == 0)
			return set->v[i];
	return NULL;
}

size_t profile_set_count(const struct profile_set *set)
{
	return set ? set->n : 0;
}

const struct profile_seccomp *profile_set_at(const struct profile_set *set, size_t i)
{
	return set && i < set->n ? set->v[i] : NULL;
}

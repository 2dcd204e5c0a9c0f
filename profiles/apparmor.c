/* SPDX-License-Identifier: Apache-2.0 */
/* AppArmor for the container tier, where the kernel has it (this node does not): one profile
 * per sandbox, generated from the template apparmor/warren-container, compiled by
 * apparmor_parser and loaded through libapparmor; the sandbox's init asks for it at exec.
 *
 * libapparmor loads compiled (binary) policy only, so the text goes through apparmor_parser
 * first: -Q (no kernel load), -K (no cache), -S (the binary on stdout). That is a child process
 * of tens of milliseconds, which is why loading belongs on a helper thread, never a loop. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/apparmor.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "profile.h"
#include "seccomp-internal.h"

extern char **environ;

static pthread_once_t apparmor_once = PTHREAD_ONCE_INIT;
static bool apparmor_enabled;

static void apparmor_probe(void)
{
	/* aa_is_enabled() reads /sys/module/apparmor/parameters/enabled and checks that
	 * securityfs shows the policy interface. */
	apparmor_enabled = aa_is_enabled() == 1;
}

/* Once per process: the LSM is there from boot or not at all, and every create asks. */
bool profile_apparmor_available(void)
{
	pthread_once(&apparmor_once, apparmor_probe);
	return apparmor_enabled;
}

int profile_apparmor_name(const char *id, char *buf, size_t size)
{
	int n;

	if (!id || !*id)
		return -EINVAL;
	for (const char *c = id; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
			return -EINVAL;
	n = snprintf(buf, size, "warren-%s", id);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int read_template(const char *dir, char **ret)
{
	char path[4096];
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	struct stat st;

	snprintf(path, sizeof(path), "%s/apparmor/warren-container",
		 dir ? dir : profile_default_dir());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		*ret = strdup(profile_builtin_apparmor);
		return *ret ? 0 : -ENOMEM;
	}
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size > (1 << 20))
		return -EINVAL;
	buf = calloc(1, st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	if (read(fd, buf, st.st_size) != st.st_size)
		return errno_or(EIO);
	*ret = TAKE_PTR(buf);
	return 0;
}

int profile_apparmor_generate(const char *dir, const char *id, char **ret)
{
	_cleanup_free_ char *tmpl = NULL;
	char name[128];
	const char *mark = "{{id}}";
	size_t n_marks = 0, idlen, out_len;
	char *out, *o;
	int r;

	/* The id lands inside the policy text: only the characters a name may hold. */
	r = profile_apparmor_name(id, name, sizeof(name));
	if (r < 0)
		return r;
	r = read_template(dir, &tmpl);
	if (r < 0)
		return r;
	for (const char *p = tmpl; (p = strstr(p, mark)); p += strlen(mark))
		n_marks++;
	idlen = strlen(id);
	out_len = strlen(tmpl) + n_marks * idlen - n_marks * strlen(mark);
	out = o = malloc(out_len + 1);
	if (!out)
		return -ENOMEM;
	for (const char *p = tmpl;;) {
		const char *m = strstr(p, mark);
		size_t chunk = m ? (size_t)(m - p) : strlen(p);

		memcpy(o, p, chunk);
		o += chunk;
		if (!m)
			break;
		memcpy(o, id, idlen);
		o += idlen;
		p = m + strlen(mark);
	}
	*o = '\0';
	*ret = out;
	return 0;
}

static const char *find_parser(void)
{
	static const char *const paths[] = { "/usr/sbin/apparmor_parser", "/sbin/apparmor_parser" };

	for (size_t i = 0; i < ELEMENTSOF(paths); i++)
		if (access(paths[i], X_OK) == 0)
			return paths[i];
	return NULL;
}

/* The whole content of a memfd, NUL-terminated. */
static int slurp_fd(int fd, char **ret, size_t *ret_len)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *buf;

	if (size < 0)
		return -errno;
	buf = malloc(size + 1);
	if (!buf)
		return -ENOMEM;
	if (pread(fd, buf, size, 0) != size) {
		free(buf);
		return errno_or(EIO);
	}
	buf[size] = '\0';
	*ret = buf;
	*ret_len = size;
	return 0;
}

int profile_apparmor_compile(const char *text, void **ret, size_t *ret_size,
			     char err[PROFILE_ERROR_MAX])
{
	_cleanup_close_ int in = -EBADF, out = -EBADF, errfd = -EBADF;
	char *const argv[] = { (char *)"apparmor_parser", (char *)"-Q", (char *)"-K", (char *)"-S",
			       NULL };
	const char *parser = find_parser();
	posix_spawn_file_actions_t fa;
	size_t len = strlen(text), got;
	_cleanup_free_ char *msg = NULL;
	char *bin = NULL;
	int status, r;
	pid_t pid;

	err[0] = '\0';
	if (!parser) {
		snprintf(err, PROFILE_ERROR_MAX, "apparmor_parser not found (Debian package "
			 "'apparmor')");
		return -ENOENT;
	}
	/* memfds rather than pipes: no deadlock between a full stdout and an unread stderr */
	in = memfd_create("warren-aa-in", MFD_CLOEXEC);
	out = memfd_create("warren-aa-out", MFD_CLOEXEC);
	errfd = memfd_create("warren-aa-err", MFD_CLOEXEC);
	if (in < 0 || out < 0 || errfd < 0)
		return -errno;
	if (write(in, text, len) != (ssize_t)len || lseek(in, 0, SEEK_SET) < 0)
		return errno_or(EIO);

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in, 0);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	posix_spawn_file_actions_adddup2(&fa, errfd, 2);
	r = -posix_spawn(&pid, parser, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r < 0)
		return r;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;

	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (slurp_fd(errfd, &msg, &got) >= 0) {
			/* the parser's complaint, without its note about the missing cache */
			char *line = msg, *keep = NULL;

			for (char *nl; line && *line; line = nl ? nl + 1 : NULL) {
				nl = strchr(line, '\n');
				if (nl)
					*nl = '\0';
				if (!strstr(line, "Cache read/write disabled") && *line)
					keep = line;
				if (!nl)
					break;
			}
			snprintf(err, PROFILE_ERROR_MAX, "apparmor_parser: %s",
				 keep ? keep : "failed");
		}
		return -EINVAL;
	}
	if (!ret)
		return 0;
	r = slurp_fd(out, &bin, &got);
	if (r < 0)
		return r;
	if (got == 0) {
		free(bin);
		snprintf(err, PROFILE_ERROR_MAX, "apparmor_parser wrote no policy");
		return -EINVAL;
	}
	*ret = bin;
	*ret_size = got;
	return 0;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(aa_kernel_interface *, aa_kernel_interface_unref)

int profile_apparmor_load(const char *dir, const char *id, char err[PROFILE_ERROR_MAX])
{
	_cleanup_(aa_kernel_interface_unrefp) aa_kernel_interface *ki = NULL;
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ void *bin = NULL;
	size_t size;
	int r;

	err[0] = '\0';
	if (!profile_apparmor_available()) {
		snprintf(err, PROFILE_ERROR_MAX, "the kernel does not enforce AppArmor");
		return -EOPNOTSUPP;
	}
	r = profile_apparmor_generate(dir, id, &text);
	if (r < 0)
		return r;
	r = profile_apparmor_compile(text, &bin, &size, err);
	if (r < 0)
		return r;
	/* libapparmor answers -1 with errno */
	if (aa_kernel_interface_new(&ki, NULL, NULL) < 0 ||
	    aa_kernel_interface_replace_policy(ki, bin, size) < 0) {
		r = errno_or(EIO);
		snprintf(err, PROFILE_ERROR_MAX, "loading the AppArmor profile: %s", strerror(-r));
		return r;
	}
	return 0;
}

int profile_apparmor_unload(const char *id)
{
	_cleanup_(aa_kernel_interface_unrefp) aa_kernel_interface *ki = NULL;
	char name[128];
	int r;

	r = profile_apparmor_name(id, name, sizeof(name));
	if (r < 0)
		return r;
	if (!profile_apparmor_available())
		return -EOPNOTSUPP;
	if (aa_kernel_interface_new(&ki, NULL, NULL) < 0 ||
	    aa_kernel_interface_remove_policy(ki, name) < 0)
		return errno_or(EIO);
	return 0;
}

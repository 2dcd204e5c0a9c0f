/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "fake-server.h"
#include "macro.h"

/* Reads one request: the head, then Content-Length bytes of body. false on EOF or error. */
static bool read_request(int fd, char *buf, size_t size)
{
	size_t len = 0, want = 0;
	char *end = NULL;

	for (;;) {
		ssize_t n;

		if (end && len >= want)
			return true;
		if (len + 1 >= size)
			return false;
		n = recv(fd, buf + len, size - 1 - len, 0);
		if (n <= 0)
			return false;
		len += n;
		buf[len] = '\0';
		if (!end && (end = strstr(buf, "\r\n\r\n"))) {
			const char *cl = strcasestr(buf, "\r\ncontent-length:");

			want = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 17, NULL, 10) : 0);
		}
	}
}

static void *serve(void *userdata)
{
	struct fake_server *s = userdata;
	int fd = -EBADF;

	for (size_t i = 0; i < s->n_script; i++) {
		const struct fake_exchange *x = &s->script[i];

		if (fd < 0) {
			/* A client that never comes would hang the test: give up after 5 s. */
			struct timeval tv = { .tv_sec = 5 };

			fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd < 0)
				break;
			s->accepts++;
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		}
		if (!read_request(fd, s->requests[s->n_requests], sizeof(s->requests[0])))
			break;
		s->n_requests++;
		if (x->no_answer) {
			fd = safe_close(fd);
			continue;
		}
		for (size_t p = 0; p < ELEMENTSOF(x->pieces) && x->pieces[p]; p++) {
			if (p > 0)
				usleep(20 * 1000);
			if (send(fd, x->pieces[p], strlen(x->pieces[p]), MSG_NOSIGNAL) < 0)
				break;
		}
		if (x->close_after)
			fd = safe_close(fd);
	}
	safe_close(fd);
	return NULL;
}

int fake_server_start(struct fake_server *s, const struct fake_exchange *script, size_t n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };

	memset(s, 0, sizeof(*s));
	s->script = script;
	s->n_script = MIN(n, (size_t)FAKE_MAX_EXCHANGES);
	strcpy(s->dir, "/tmp/warren-fake-XXXXXX");
	if (!mkdtemp(s->dir))
		return -errno;
	snprintf(s->path, sizeof(s->path), "%s/sock", s->dir);
	strcpy(sa.sun_path, s->path);
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0)
		return -errno;
	/* accept() times out too (SO_RCVTIMEO applies to it on Linux). */
	setsockopt(s->listen_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(s->listen_fd, 8) < 0)
		return -errno;
	return -pthread_create(&s->thread, NULL, serve, s);
}

void fake_server_stop(struct fake_server *s)
{
	pthread_join(s->thread, NULL);
	s->listen_fd = safe_close(s->listen_fd);
	unlink(s->path);
	rmdir(s->dir);
}

const char *fake_request_body(const struct fake_server *s, size_t i)
{
	const char *e;

	if (i >= s->n_requests)
		return NULL;
	e = strstr(s->requests[i], "\r\n\r\n");
	return e ? e + 4 : NULL;
}

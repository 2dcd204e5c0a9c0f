/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

#include "config.h"
#include "macro.h"
#include "client-internal.h"
#include "response.h"

struct warren_client {
	char *path;
	int fd;      /* -EBADF between connections */
	bool reused; /* fd already carried a response: the daemon may have closed it since */
	int err_status;
	char err_code[64];
	char *err_message;
};

int client_fail(struct warren_client *c, int r, const char *fmt, ...)
{
	va_list ap;
	char *m;

	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	free(c->err_message);
	c->err_message = m;
	c->err_status = 0;
	c->err_code[0] = '\0';
	return r;
}

static void client_disconnect(struct warren_client *c)
{
	c->fd = safe_close(c->fd);
	c->reused = false;
}

const char *warren_default_socket(void)
{
	const char *e = secure_getenv("WARREN_SOCKET");

	return e && *e ? e : WARREN_DEFAULT_SOCKET;
}

static bool client_stale(struct warren_client *c);

static int client_open(struct warren_client *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -EBADF;

	if (strlen(c->path) >= sizeof(sa.sun_path))
		return client_fail(c, -ENAMETOOLONG, "socket path '%s' is longer than %zu bytes",
				   c->path, sizeof(sa.sun_path) - 1);
	strcpy(sa.sun_path, c->path);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return client_fail(c, -errno, "socket(AF_UNIX): %m");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		switch (r) {
		case -ENOENT:
		case -ECONNREFUSED:
		case -ENOTDIR:
			return client_fail(c, r,
					   "cannot connect to %s: %s: is warrend running? start it "
					   "with `warrend` or set --socket (or $WARREN_SOCKET)",
					   c->path, strerror(-r));
		case -EACCES:
		case -EPERM:
			return client_fail(c, r,
					   "cannot connect to %s: %s: run as root or as a member "
					   "of the socket's group",
					   c->path, strerror(-r));
		default:
			return client_fail(c, r, "cannot connect to %s: %s", c->path, strerror(-r));
		}
	}
	c->fd = TAKE_FD(fd);
	c->reused = false;
	return 0;
}

int warren_client_new(const char *path, struct warren_client **ret)
{
	struct warren_client *c;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = -EBADF;
	c->path = strdup(path ? path : warren_default_socket());
	if (!c->path) {
		free(c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

int warren_client_open(struct warren_client *c)
{
	if (c->fd >= 0 && !client_stale(c))
		return 0;
	client_disconnect(c);
	return client_open(c);
}

int warren_connect(const char *path, struct warren_client **ret)
{
	struct warren_client *c;
	int r;

	r = warren_client_new(path, &c);
	if (r < 0)
		return r;
	r = client_open(c);
	if (r < 0) {
		warren_client_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

struct warren_client *warren_client_free(struct warren_client *c)
{
	if (!c)
		return NULL;
	safe_close(c->fd);
	free(c->path);
	free(c->err_message);
	free(c);
	return NULL;
}

const char *warren_error_message(const struct warren_client *c)
{
	return c->err_message ? c->err_message : "unknown error";
}

const char *warren_error_code(const struct warren_client *c)
{
	return c->err_code;
}

int warren_error_status(const struct warren_client *c)
{
	return c->err_status;
}

/* A kept-alive connection the daemon has closed (idle timeout, restart) reads as EOF without
 * blocking; re-open it before sending rather than lose a request to it. */
static bool client_stale(struct warren_client *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN | POLLRDHUP };

	return poll(&p, 1, 0) != 0;
}

static int send_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = n };
		/* MSG_NOSIGNAL: a daemon that went away is an error to report, not a SIGPIPE. */
		ssize_t k = sendmsg(fd, &mh, MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (n > 0 && (size_t)k >= iov->iov_len) {
			k -= iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + k;
			iov->iov_len -= k;
		}
	}
	return 0;
}

static bool method_idempotent(const char *method)
{
	return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ||
	       strcmp(method, "DELETE") == 0 || strcmp(method, "PUT") == 0;
}

/* Reads until resp is complete. *got_any says whether any byte came back: a reused connection
 * that ends before one is the daemon's idle close racing our request, not a failed request. */
static int client_read_response(struct warren_client *c, struct response *resp, bool *got_any)
{
	char buf[64 * 1024];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
		int k;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			k = -errno;
			client_disconnect(c);
			return client_fail(c, k, "reading from %s: %s", c->path, strerror(-k));
		}
		*got_any = *got_any || n > 0;
		k = response_feed(resp, buf, n);
		if (n == 0)
			client_disconnect(c);
		if (k < 0) {
			/* Mid-message: the connection cannot carry another request. */
			client_disconnect(c);
			if (k == -EBADMSG && !*got_any)
				return client_fail(c, -ECONNRESET, "warrend closed the connection "
								   "without answering");
			if (k == -EBADMSG)
				return client_fail(c, k, "malformed response from warrend: %s",
						   n == 0 ? "connection closed mid-response"
							  : response_error(resp));
			if (k == -EFBIG)
				return client_fail(c, k, "response from warrend over %u MiB",
						   RESPONSE_BODY_MAX >> 20);
			return client_fail(c, k, "request aborted: %s", strerror(-k));
		}
		if (resp->complete) {
			/* Bytes after the response were not asked for: the framing is lost. */
			if (c->fd >= 0 && (size_t)k == (size_t)n && resp->keep_alive)
				c->reused = true;
			else
				client_disconnect(c);
			return 0;
		}
	}
}

/* One request and its response on the kept-alive connection. Retries once on a fresh connection
 * when a reused one turns out to be closed before any byte of the answer came back; a POST only
 * when the request itself could not be sent, so that a create never goes out twice. */
static int client_roundtrip(struct warren_client *c, const char *method, const char *path,
			    const char *body, struct response *resp)
{
	size_t body_len = body ? strlen(body) : 0;
	int r;

	for (int attempt = 0;; attempt++) {
		_cleanup_free_ char *head = NULL;
		bool was_reused, got_any = false;
		struct iovec iov[2];
		int n_iov = 1;

		if (c->fd >= 0 && client_stale(c))
			client_disconnect(c);
		if (c->fd < 0) {
			r = client_open(c);
			if (r < 0)
				return r;
		}
		was_reused = c->reused;

		if (asprintf(&head,
			     "%s %s HTTP/1.1\r\n"
			     "Host: warren\r\n"
			     "User-Agent: warren/" WARREN_VERSION "\r\n"
			     "Accept: application/json, application/x-ndjson, text/plain\r\n"
			     "%s"
			     "Content-Length: %zu\r\n"
			     "\r\n",
			     method, path, body ? "Content-Type: application/json\r\n" : "",
			     body_len) < 0)
			return client_fail(c, -ENOMEM, "out of memory");
		iov[0] = (struct iovec){ head, strlen(head) };
		if (body_len > 0)
			iov[n_iov++] = (struct iovec){ (void *)body, body_len };

		r = send_all(c->fd, iov, n_iov);
		if (r < 0) {
			client_disconnect(c);
			if (was_reused && attempt == 0 && (r == -EPIPE || r == -ECONNRESET))
				continue;
			return client_fail(c, r, "sending to %s: %s", c->path, strerror(-r));
		}

		r = client_read_response(c, resp, &got_any);
		if (r == -ECONNRESET && !got_any && was_reused && attempt == 0 &&
		    method_idempotent(method)) {
			/* Again on a fresh connection, with a fresh parser. */
			response_done(resp);
			response_init(resp, resp->fn, resp->userdata);
			continue;
		}
		return r;
	}
}

int warren_errno_from_status(int status, const char *code)
{
	static const struct {
		const char *code;
		int err;
	} codes[] = {
		{ "bad_request", EINVAL },  { "not_found", ENOENT },
		{ "method_not_allowed", EOPNOTSUPP }, { "conflict", EBUSY },
		{ "too_large", E2BIG },     { "too_many_sandboxes", EUSERS },
		{ "unavailable", EAGAIN },  { "internal", EIO },
	};

	for (size_t i = 0; code && i < ELEMENTSOF(codes); i++)
		if (strcmp(code, codes[i].code) == 0)
			return -codes[i].err;
	switch (status) {
	case 400: return -EINVAL;
	case 404: return -ENOENT;
	case 405: return -EOPNOTSUPP;
	case 409: return -EBUSY;
	case 413: return -E2BIG;
	case 429: return -EUSERS;
	case 500: return -EIO;
	case 503: return -EAGAIN;
	}
	if (status >= 400 && status <= 499)
		return -EINVAL;
	if (status >= 500 && status <= 599)
		return -EIO;
	return -EPROTO;
}

int warren_error_from_body(int status, const char *body, size_t len, char **ret_code,
			   char **ret_message)
{
	_cleanup_(json_decrefp) json_t *j = NULL;
	_cleanup_free_ char *code = NULL, *message = NULL;
	json_t *e;

	if (body && len > 0)
		j = json_loadb(body, len, 0, NULL);
	e = json_object_get(j, "error");
	if (json_is_string(json_object_get(e, "message"))) {
		const char *s = json_string_value(json_object_get(e, "code"));

		code = strdup(s ? s : "");
		message = strdup(json_string_value(json_object_get(e, "message")));
	} else {
		/* Not the daemon's error format (a proxy in between, a crash): show what came. */
		size_t line = 0;

		while (body && line < len && line < 200 && body[line] != '\n' && body[line] != '\r')
			line++;
		code = strdup("");
		if (asprintf(&message, "HTTP %d %s%s%.*s", status,
			     http_status_str((enum http_status)status), line ? ": " : "", (int)line,
			     body ? body : "") < 0)
			message = NULL;
	}
	if (!code || !message)
		return -ENOMEM;
	*ret_code = TAKE_PTR(code);
	*ret_message = TAKE_PTR(message);
	return 0;
}

int client_fail_api(struct warren_client *c, int status, const char *code, const char *message)
{
	client_fail(c, 0, "%s", message);
	c->err_status = status;
	snprintf(c->err_code, sizeof(c->err_code), "%s", code ? code : "");
	return warren_errno_from_status(status, code);
}

/* Turns an error response into the client's error state and its negative errno. */
static int client_fail_response(struct warren_client *c, const struct response *resp)
{
	_cleanup_free_ char *code = NULL, *message = NULL;
	int r;

	r = warren_error_from_body(resp->status, resp->body, resp->body_len, &code, &message);
	if (r < 0)
		return client_fail(c, r, "out of memory");
	return client_fail_api(c, resp->status, code, message);
}

static int client_send_request(struct warren_client *c, const char *method, const char *path,
			       json_t *body, struct response *resp)
{
	_cleanup_free_ char *s = NULL;

	if (body) {
		s = json_dumps(body, JSON_COMPACT);
		if (!s)
			return client_fail(c, -EINVAL, "request body cannot be serialised as JSON");
	}
	return client_roundtrip(c, method, path, s, resp);
}

int warren_request(struct warren_client *c, const char *method, const char *path, json_t *body,
		   struct warren_response *ret)
{
	struct response resp;
	json_t *j = NULL;
	int r;

	response_init(&resp, NULL, NULL);
	r = client_send_request(c, method, path, body, &resp);
	if (r >= 0 && (resp.status < 200 || resp.status > 299))
		r = client_fail_response(c, &resp);
	if (r >= 0 && resp.json && resp.body_len > 0) {
		json_error_t e;

		j = json_loadb(resp.body, resp.body_len, 0, &e);
		if (!j)
			r = client_fail(c, -EBADMSG, "malformed JSON from warrend: %s (line %d)",
					e.text, e.line);
	}
	if (r < 0) {
		response_done(&resp);
		return r;
	}
	*ret = (struct warren_response){
		.status = resp.status,
		.body = TAKE_PTR(resp.body),
		.body_len = resp.body_len,
		.json = j,
	};
	response_done(&resp);
	return 0;
}

void warren_response_done(struct warren_response *r)
{
	free(r->body);
	json_decref(r->json);
	*r = (struct warren_response){};
}

int warren_request_stream(struct warren_client *c, const char *method, const char *path,
			  json_t *body, warren_data_fn fn, void *userdata)
{
	struct response resp;
	int r;

	response_init(&resp, fn, userdata);
	r = client_send_request(c, method, path, body, &resp);
	if (r >= 0 && (resp.status < 200 || resp.status > 299))
		r = client_fail_response(c, &resp);
	if (r >= 0)
		r = resp.status;
	response_done(&resp);
	return r;
}

int warren_sandbox_path(const char *id, const char *suffix, char **ret)
{
	static const char hex[] = "0123456789ABCDEF";
	const char prefix[] = "/v1/sandboxes/";
	size_t n = strlen(id), sl = suffix ? strlen(suffix) : 0;
	char *p, *s;

	if (n == 0)
		return -EINVAL;
	s = malloc(sizeof(prefix) + 3 * n + sl);
	if (!s)
		return -ENOMEM;
	p = stpcpy(s, prefix);
	/* Everything but [A-Za-z0-9_~-] is encoded, dots included: "." and ".." are segments. */
	for (const unsigned char *i = (const unsigned char *)id; *i; i++) {
		if ((*i >= 'a' && *i <= 'z') || (*i >= 'A' && *i <= 'Z') ||
		    (*i >= '0' && *i <= '9') || *i == '_' || *i == '-' || *i == '~') {
			*p++ = *i;
		} else {
			*p++ = '%';
			*p++ = hex[*i >> 4];
			*p++ = hex[*i & 15];
		}
	}
	strcpy(p, suffix ? suffix : "");
	*ret = s;
	return 0;
}

int warren_wait(struct warren_client *c, const char *id, int *ret_exit_code,
		json_t **ret_sandbox)
{
	_cleanup_(warren_response_done) struct warren_response resp = {};
	_cleanup_free_ char *path = NULL;
	const char *state;
	json_t *code;
	int r;

	r = warren_sandbox_path(id, "/wait", &path);
	if (r < 0)
		return client_fail(c, r, "invalid sandbox id '%s'", id);
	/* No body: the daemon answers once the sandbox has exited, however long that takes. */
	r = warren_request(c, "POST", path, NULL, &resp);
	if (r < 0)
		return r;
	state = json_string_value(json_object_get(resp.json, "state"));
	code = json_object_get(resp.json, "exit_code");
	if (!state || strcmp(state, "exited") != 0 || !json_is_integer(code))
		return client_fail(c, -EPROTO,
				   "warrend answered the wait for %s without an exit (state '%s')",
				   id, state ? state : "(none)");
	if (ret_sandbox)
		*ret_sandbox = json_incref(resp.json);
	if (ret_exit_code)
		*ret_exit_code = (int)json_integer_value(code);
	return 0;
}

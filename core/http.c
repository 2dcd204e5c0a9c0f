/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <poll.h>
#include <sys/socket.h>

#include "api.h"
#include "daemon.h"
#include "denial.h"
#include "peer.h"
#include "http.h"
#include "log.h"

struct out_chunk {
	struct out_chunk *next;
	size_t len;
	char data[];
};

static void conn_read(struct conn *c);
static void conn_parse(struct conn *c);

/* ---- connection lifetime ---------------------------------------------------------------- */

static void conn_link(struct loop *l, struct conn *c)
{
	c->loop = l;
	c->prev = NULL;
	c->next = l->conns;
	if (l->conns)
		l->conns->prev = c;
	l->conns = c;
	l->n_conns++;
}

static void conn_unlink(struct conn *c)
{
	struct loop *l = c->loop;

	if (c->prev)
		c->prev->next = c->next;
	else
		l->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	l->n_conns--;
}

static void request_reset(struct conn *c)
{
	free(c->url);
	free(c->req.path);
	free(c->req.body);
	c->url = NULL;
	c->url_len = 0;
	memset(&c->req, 0, sizeof(c->req));
	c->hdr_name_len = 0;
	c->hdr_expect = c->expect_continue = c->req_done = c->too_large = false;
	c->responding = c->chunked = c->watching = false;
	c->hops = 0;
	c->req_start = 0;
	json_decref(c->scratch);
	c->scratch = NULL;
}

static bool conn_idle(const struct conn *c)
{
	return !c->read_op.busy && !c->write_op.busy && !c->move_op.busy && !c->hup_op.busy;
}

static void conn_maybe_free(struct conn *c)
{
	if (!c->dead || !conn_idle(c))
		return;
	conn_unlink(c);
	safe_close(c->fd);
	while (c->out) {
		struct out_chunk *n = c->out->next;
		free(c->out);
		c->out = n;
	}
	request_reset(c);
	free(c->in);
	free(c);
}

static void conn_kill(struct conn *c)
{
	if (c->dead) {
		conn_maybe_free(c);
		return;
	}
	c->dead = true;
	if (c->on_close) {
		void (*fn)(struct conn *) = c->on_close;
		c->on_close = NULL;
		fn(c);
		c->handler = NULL;
	}
	/* Wakes any read or send in flight; their completions then free the conn. */
	shutdown(c->fd, SHUT_RDWR);
	loop_cancel(c->loop, &c->read_op);
	loop_cancel(c->loop, &c->hup_op);
	conn_maybe_free(c);
}

/* ---- output ------------------------------------------------------------------------------ */

static void on_write(struct loop *l, struct io_op *op, int res, uint32_t flags);

/* Sends what is queued, up to the next end-of-response marker, in one sendmsg: a response
 * made of several chunks (a stream's last line and its terminator) reaches the client in one
 * wake-up. */
static void conn_flush(struct conn *c)
{
	unsigned n = 0;

	if (c->write_op.busy || !c->out || c->dead)
		return;
	for (struct out_chunk *o = c->out; o && o->len > 0 && n < CONN_OUT_IOV; o = o->next, n++)
		c->out_iov[n] = (struct iovec){ .iov_base = o->data + (n ? 0 : c->out_off),
						.iov_len = o->len - (n ? 0 : c->out_off) };
	c->out_msg = (struct msghdr){ .msg_iov = c->out_iov, .msg_iovlen = n };
	io_uring_prep_sendmsg(loop_sqe(c->loop, &c->write_op), c->fd, &c->out_msg, MSG_NOSIGNAL);
}

static void response_finished(struct conn *c)
{
	bool keep = c->req.keep_alive && !c->close_after && !c->dead;

	request_reset(c);
	if (!keep) {
		conn_kill(c);
		return;
	}
	/* The next request may move the conn to another loop, which needs it idle: let the
	 * hang-up watch finish first (on_hup resumes from here). */
	if (c->hup_op.busy) {
		loop_cancel(c->loop, &c->hup_op);
		return;
	}
	/* Pipelined bytes may already hold the next request. */
	http_parser_pause(&c->parser, 0);
	conn_parse(c);
}

static void on_hup(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct conn *c = container_of(op, struct conn, hup_op);

	if (c->dead) {
		conn_maybe_free(c);
		return;
	}
	if (c->responding || c->watching) {
		/* The client went away in the middle of a stream, or while its request waited:
		 * stop what serves it (on_close). */
		if (res > 0)
			conn_kill(c);
		return;
	}
	http_parser_pause(&c->parser, 0);
	conn_parse(c);
}

static void on_write(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct conn *c = container_of(op, struct conn, write_op);

	if (c->dead || res <= 0) {
		conn_kill(c);
		return;
	}
	/* res bytes went, across as many chunks. */
	for (size_t left = res; left > 0 || (c->out && c->out->len == 0);) {
		struct out_chunk *done = c->out;
		size_t take = MIN(left, done->len - c->out_off);
		bool end = done->len == 0; /* the marker that ends the response */

		c->out_off += take;
		left -= take;
		if (!end && c->out_off < done->len)
			break;
		c->out = done->next;
		if (!c->out)
			c->out_last = NULL;
		c->out_off = 0;
		free(done);
		if (end) {
			response_finished(c);
			return;
		}
	}
	conn_flush(c);
}

static void conn_queue(struct conn *c, const void *a, size_t alen, const void *b, size_t blen,
		       const void *z, size_t zlen)
{
	struct out_chunk *o;

	if (c->dead)
		return;
	o = malloc(sizeof(*o) + alen + blen + zlen);
	if (!o) {
		conn_kill(c);
		return;
	}
	o->next = NULL;
	o->len = alen + blen + zlen;
	memcpy(o->data, a, alen);
	if (blen)
		memcpy(o->data + alen, b, blen);
	if (zlen)
		memcpy(o->data + alen + blen, z, zlen);
	if (c->out_last)
		c->out_last->next = o;
	else
		c->out = o;
	c->out_last = o;
}

/* Queues the end-of-response marker: once everything before it is sent, the connection moves
 * on to the next request. */
static void conn_queue_end(struct conn *c)
{
	static const char nothing[1];

	if (!c->out) {
		response_finished(c);
		return;
	}
	conn_queue(c, nothing, 0, NULL, 0, NULL, 0);
}

static const char *status_text(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 413: return "Payload Too Large";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return "Unknown";
	}
}

static int format_head(struct conn *c, char *buf, size_t size, int status, const char *type,
		       const char *length_or_chunked)
{
	bool keep = c->req.keep_alive && !c->close_after;

	return snprintf(buf, size,
			"HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%s\r\nConnection: %s\r\n\r\n",
			status, status_text(status), type, length_or_chunked,
			keep ? "keep-alive" : "close");
}

void conn_respond(struct conn *c, int status, const char *content_type, const void *body,
		  size_t len)
{
	char head[512], length[64];
	int n;

	assert(!c->responding);
	c->responding = true;
	snprintf(length, sizeof(length), "Content-Length: %zu", len);
	n = format_head(c, head, sizeof(head), status, content_type, length);
	conn_queue(c, head, n, body, len, NULL, 0);
	conn_queue_end(c);
	conn_flush(c);
}

void conn_respond_json(struct conn *c, int status, json_t *body)
{
	char *s = json_dumps(body, JSON_COMPACT);
	size_t len;

	json_decref(body);
	if (!s) {
		c->close_after = true;
		conn_respond(c, 500, "application/json", "{}", 2);
		return;
	}
	len = strlen(s);
	conn_respond(c, status, "application/json", s, len);
	free(s);
}

void conn_respond_error(struct conn *c, int status, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	conn_respond_json(c, status,
			  json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg));
}

void conn_stream_begin(struct conn *c, int status, const char *content_type)
{
	char head[512];
	int n;

	assert(!c->responding);
	c->responding = true;
	c->chunked = true;
	n = format_head(c, head, sizeof(head), status, content_type, "Transfer-Encoding: chunked");
	conn_queue(c, head, n, NULL, 0, NULL, 0);
	conn_flush(c);
	/* Streams can be silent for long; POLLRDHUP tells that the client is gone. */
	io_uring_prep_poll_add(loop_sqe(c->loop, &c->hup_op), c->fd, POLLRDHUP);
}

void conn_watch_hangup(struct conn *c)
{
	c->watching = true;
	io_uring_prep_poll_add(loop_sqe(c->loop, &c->hup_op), c->fd, POLLRDHUP);
}

void conn_stream_chunk(struct conn *c, const void *data, size_t len)
{
	char size[32];
	int n;

	if (!len)
		return;
	n = snprintf(size, sizeof(size), "%zx\r\n", len);
	conn_queue(c, size, n, data, len, "\r\n", 2);
	conn_flush(c);
}

void conn_stream_end(struct conn *c)
{
	conn_queue(c, "0\r\n\r\n", 5, NULL, 0, NULL, 0);
	conn_queue_end(c);
	conn_flush(c);
}

/* ---- moving between loops ------------------------------------------------------------------ */

static void on_moved(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct conn *c = container_of(op, struct conn, move_op);

	conn_link(l, c);
	if (c->dead) {
		conn_maybe_free(c);
		return;
	}
	api_handle(c);
}

void conn_move(struct conn *c, struct loop *to)
{
	/* Nothing is in flight on c: its request is complete and no response has begun. */
	struct loop *from = c->loop;

	assert(conn_idle(c) && !c->responding);
	conn_unlink(c);
	io_op_init(&c->move_op, on_moved);
	loop_send(from, to, &c->move_op);
}

/* ---- input --------------------------------------------------------------------------------- */

static int append(char **buf, size_t *len, const char *at, size_t n, size_t max)
{
	char *p;

	if (*len + n > max)
		return -E2BIG;
	p = realloc(*buf, *len + n + 1);
	if (!p)
		return -ENOMEM;
	memcpy(p + *len, at, n);
	*len += n;
	p[*len] = '\0';
	*buf = p;
	return 0;
}

static int on_message_begin(http_parser *p)
{
	struct conn *c = p->data;

	c->req_start = now_mono();
	return 0;
}

static int on_url(http_parser *p, const char *at, size_t n)
{
	struct conn *c = p->data;

	if (append(&c->url, &c->url_len, at, n, 8192) < 0) {
		c->too_large = true;
		return -1;
	}
	return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t n)
{
	struct conn *c = p->data;

	/* Fields may arrive in pieces; a value in between starts a new name. */
	if (c->hdr_expect) {
		c->hdr_expect = false;
		c->hdr_name_len = 0;
	}
	if (c->hdr_name_len + n < sizeof(c->hdr_name)) {
		memcpy(c->hdr_name + c->hdr_name_len, at, n);
		c->hdr_name_len += n;
	} else
		c->hdr_name_len = sizeof(c->hdr_name); /* too long to be one we care about */
	return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
	struct conn *c = p->data;

	if (c->hdr_name_len == 6 && strncasecmp(c->hdr_name, "expect", 6) == 0 && n >= 3 &&
	    strncasecmp(at, "100", 3) == 0)
		c->expect_continue = true;
	c->hdr_expect = true; /* the next field starts a new name */
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	struct conn *c = p->data;

	if (p->content_length != ULLONG_MAX && p->content_length > HTTP_MAX_BODY) {
		c->too_large = true;
		return -1;
	}
	/* curl waits up to a second for this before sending a body over 1 KiB. It is a few bytes
	 * on a fresh socket, so a direct send cannot block. */
	if (c->expect_continue && c->fd >= 0)
		(void)send(c->fd, "HTTP/1.1 100 Continue\r\n\r\n", 25, MSG_NOSIGNAL | MSG_DONTWAIT);
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
	struct conn *c = p->data;

	if (append(&c->req.body, &c->req.body_len, at, n, HTTP_MAX_BODY) < 0) {
		c->too_large = true;
		return -1;
	}
	return 0;
}

static int on_message_complete(http_parser *p)
{
	struct conn *c = p->data;
	char *q;

	c->req.method = p->method;
	c->req.keep_alive = http_should_keep_alive(p);
	c->req.path = c->url ? c->url : strdup("");
	c->url = NULL;
	if (!c->req.path)
		return -1;
	q = strchr(c->req.path, '?');
	if (q) {
		*q = '\0';
		c->req.query = q + 1;
	}
	c->req_done = true;
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings settings = {
	.on_message_begin = on_message_begin,
	.on_url = on_url,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};

/* Runs the parser over what is buffered. Returns 1 when a request is complete, 0 when more
 * bytes are needed, or an HTTP status (400, 413) for a malformed request. */
static int parse_buffered(struct conn *c)
{
	size_t n;
	enum http_errno e;

	n = http_parser_execute(&c->parser, &settings, c->in + c->in_off, c->in_len - c->in_off);
	c->in_off += n;
	e = HTTP_PARSER_ERRNO(&c->parser);
	if (c->too_large)
		return 413;
	if (e == HPE_HEADER_OVERFLOW)
		return 413;
	if (e != HPE_OK && e != HPE_PAUSED)
		return 400;
	if (c->in_off == c->in_len)
		c->in_off = c->in_len = 0;
	return c->req_done ? 1 : 0;
}

static void conn_parse(struct conn *c)
{
	int r = parse_buffered(c);

	if (r == 1) {
		api_handle(c);
		return;
	}
	if (r > 1) {
		enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);

		c->close_after = true;
		c->req.keep_alive = false;
		if (r == 413)
			conn_respond_error(c, 413, "too_large",
					   "request headers over 80 KiB or body over %u bytes",
					   HTTP_MAX_BODY);
		else
			conn_respond_error(c, 400, "bad_request", "malformed HTTP request: %s",
					   http_errno_description(e));
		return;
	}
	conn_read(c);
}

static void on_read(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct conn *c = container_of(op, struct conn, read_op);

	if (c->dead || res <= 0) {
		/* -ECANCELED: the linked timeout fired; 0: the client closed. */
		conn_kill(c);
		return;
	}
	c->in_len += res;
	if (c->req_start > 0 && !c->req_done && now_mono() - c->req_start > HTTP_REQUEST_TIMEOUT_MS / 1000.0) {
		c->close_after = true;
		c->req.keep_alive = false;
		conn_respond_error(c, 408, "bad_request", "request not completed within %d s",
				   HTTP_REQUEST_TIMEOUT_MS / 1000);
		return;
	}
	conn_parse(c);
}

static void conn_read(struct conn *c)
{
	struct io_uring_sqe *sqe;

	if (c->in_cap - c->in_len < 4096) {
		size_t cap = c->in_cap ? c->in_cap * 2 : 16384;
		char *p;

		if (cap > HTTP_MAX_BODY + 128 * 1024) {
			conn_kill(c);
			return;
		}
		p = realloc(c->in, cap);
		if (!p) {
			conn_kill(c);
			return;
		}
		c->in = p;
		c->in_cap = cap;
	}
	sqe = loop_sqe(c->loop, &c->read_op);
	io_uring_prep_recv(sqe, c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
	sqe->flags |= IOSQE_IO_LINK;
	/* A slow or silent client loses its connection instead of holding it forever. */
	c->read_ts.tv_sec = (c->req_start > 0 ? HTTP_REQUEST_TIMEOUT_MS : HTTP_IDLE_TIMEOUT_MS) / 1000;
	c->read_ts.tv_nsec = 0;
	io_uring_prep_link_timeout(loop_sqe_noop(c->loop), &c->read_ts, 0);
}

/* ---- accepting ------------------------------------------------------------------------------ */

static void conn_new(struct loop *l, int fd)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	io_op_init(&c->read_op, on_read);
	io_op_init(&c->write_op, on_write);
	io_op_init(&c->hup_op, on_hup);
	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	conn_link(l, c);
	conn_read(c);
}

/* A refusal at accept time, before the conn exists: a few bytes on a fresh socket, so a
 * direct send cannot block. */
static void refuse(int fd, int status, const char *code, const char *msg)
{
	char body[256], buf[512];
	int bl, n;

	bl = snprintf(body, sizeof(body), "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n",
		      code, msg);
	n = snprintf(buf, sizeof(buf),
		     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nConnection: close\r\n"
		     "Content-Length: %d\r\n\r\n%s",
		     status, status_text(status), bl, body);
	(void)send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

static void on_accept(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	char id[16];

	if (res >= 0) {
		if (l->stop || atomic_load(&l->d->stopping) || l->n_conns >= l->d->max_conns) {
			refuse(res, 503, "unavailable", "too many connections or shutting down; retry later");
		} else if (sandbox_of_peer(l->d, res, id) > 0) {
			/* The socket should be out of a sandbox's reach; should it ever be reached
			 * (a bind mount by mistake, a leaked fd), no sandbox drives the node. */
			denial_record(id, DENIAL_API, "connect to the API socket",
				      "a sandbox's process connected to warrend; refused");
			refuse(res, 403, "forbidden", "sandboxes may not use the warren API");
		} else
			conn_new(l, res);
	} else if (res != -ECANCELED)
		log_debug_errno(res, "loop %u: accept", l->idx);
	/* Multishot accept ends on errors; re-arm it unless we are stopping. */
	if (!(flags & IORING_CQE_F_MORE) && !l->stop && !l->draining)
		http_start(l);
}

void http_start(struct loop *l)
{
	io_op_init(&l->accept_op, on_accept);
	io_uring_prep_multishot_accept(loop_sqe(l, &l->accept_op), l->d->listen_fd, NULL, NULL,
				       SOCK_CLOEXEC);
}

void http_close_all(struct loop *l)
{
	struct conn *next;

	loop_cancel(l, &l->accept_op);
	/* conn_kill may free c (never another conn), so take next first. */
	for (struct conn *c = l->conns; c; c = next) {
		next = c->next;
		if (!c->dead)
			conn_kill(c);
	}
}

/* ---- fuzzing -------------------------------------------------------------------------------- */

int http_fuzz_one(const char *data, size_t len)
{
	struct conn c = { .fd = -EBADF };
	int r, handled = 0;

	http_parser_init(&c.parser, HTTP_REQUEST);
	c.parser.data = &c;
	c.in = (char *)data;
	c.in_len = len;
	for (;;) {
		r = parse_buffered(&c);
		if (r != 1)
			break;
		api_validate(&c.req);
		handled++;
		request_reset(&c);
		http_parser_pause(&c.parser, 0);
		if (c.in_off >= c.in_len)
			break;
	}
	request_reset(&c);
	return handled;
}

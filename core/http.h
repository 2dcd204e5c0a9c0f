/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <http_parser.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "loop.h"
#include "macro.h"

#define HTTP_MAX_BODY (1u << 20)
#define HTTP_REQUEST_TIMEOUT_MS 30000 /* to receive a whole request once it has begun */
#define HTTP_IDLE_TIMEOUT_MS 120000   /* keep-alive connection with no request */

struct http_request {
	enum http_method method;
	char *path;   /* without the query; NUL-terminated */
	char *query;  /* after '?', or NULL */
	char *body;   /* NUL-terminated; NULL if empty */
	size_t body_len;
	bool keep_alive;
};

struct out_chunk;

#define CONN_OUT_IOV 16 /* chunks gathered into one send */

/* One client connection. It lives on one loop at a time; a request about a sandbox owned by
 * another loop moves the connection there (conn_move) while no I/O is in flight on it. */
struct conn {
	struct loop *loop;
	struct conn *prev, *next; /* loop->conns */
	int fd;
	struct io_op read_op, write_op, move_op;
	struct io_op hup_op;      /* watches for the client hanging up during a stream */
	struct __kernel_timespec read_ts;

	http_parser parser;
	char *in;                 /* bytes received, parsed up to in_off */
	size_t in_len, in_off, in_cap;
	struct http_request req;
	size_t url_len;
	char *url;
	char hdr_name[16];        /* the only header we act on is Expect */
	size_t hdr_name_len;
	bool hdr_expect, expect_continue, req_done, too_large;
	double req_start;

	struct out_chunk *out, *out_last;
	size_t out_off;
	struct iovec out_iov[CONN_OUT_IOV]; /* the sendmsg in flight */
	struct msghdr out_msg;
	bool chunked;             /* streaming a chunked response */
	bool responding;          /* a response has begun; the request is being answered */
	bool watching;            /* conn_watch_hangup() before any response */
	bool close_after;
	bool dead;

	/* The handler that answers later (exec, logs -f, delete) registers here; it is called
	 * once if the connection dies first, after which the handler must forget the conn. */
	void (*on_close)(struct conn *c);
	void *handler;

	/* For requests that visit every loop (the sandbox list). */
	unsigned hops;
	json_t *scratch;
};

/* Starts accepting on the daemon's listening socket. */
void http_start(struct loop *l);
/* Closes every connection of the loop (shutdown). */
void http_close_all(struct loop *l);

/* Answer the current request. conn_respond* take the whole body; the conn goes back to reading
 * the next request (keep-alive) or closes once it is sent. */
void conn_respond(struct conn *c, int status, const char *content_type, const void *body,
		  size_t len);
/* Steals the reference to body. */
void conn_respond_json(struct conn *c, int status, json_t *body);
void conn_respond_error(struct conn *c, int status, const char *code, const char *fmt, ...)
	_printf_(4, 5);
/* Chunked streaming: begin once, any number of chunks, then end. */
void conn_stream_begin(struct conn *c, int status, const char *content_type);
void conn_stream_chunk(struct conn *c, const void *data, size_t len);
void conn_stream_end(struct conn *c);
/* For a request whose answer may take long (it waits for an event): should the client hang
 * up before the answer begins, the conn is killed, on_close first. */
void conn_watch_hangup(struct conn *c);
/* Re-dispatches the current request on loop `to`, moving the connection there. */
void conn_move(struct conn *c, struct loop *to);

/* Feeds bytes through a detached parser and hands a complete request to the validation half
 * of the API, without touching the node. The fuzz target and its regression test use it. */
int http_fuzz_one(const char *data, size_t len);

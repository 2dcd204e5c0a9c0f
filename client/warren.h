/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* The warren client library: blocking HTTP/1.1 + JSON to warrend over its Unix socket.
 *
 * Conventions: every function returns a negative errno on failure and >= 0 on success; output
 * parameters are written only on success. When a call fails, warren_error_message() says why in
 * words a person can act on (the daemon's own message for API errors). A client is not thread
 * safe: use one per thread. One connection is kept alive and reused across requests; it is
 * re-opened transparently when the daemon closed it. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WARREN_DEFAULT_SOCKET "/run/warren/warren.sock"

struct warren_client;

/* A complete, successful (2xx) response. */
struct warren_response {
	int status;
	char *body;      /* NUL-terminated (the NUL is not counted in body_len); NULL when empty */
	size_t body_len;
	json_t *json;    /* the parsed body when the daemon sent JSON, else NULL; owned */
};

/* Called for each piece of a streamed body as it arrives (chunk boundaries are arbitrary).
 * Return a negative errno to abort the request; the connection is then closed. */
typedef int (*warren_data_fn)(const char *data, size_t len, void *userdata);

/* The socket to use when the caller names none: $WARREN_SOCKET, else WARREN_DEFAULT_SOCKET. */
const char *warren_default_socket(void);

/* A client for the socket at path (NULL: warren_default_socket()); no I/O yet: the first
 * request connects. Owned by the caller. */
int warren_client_new(const char *path, struct warren_client **ret);
/* Connects now, so that "nothing listens there" is found before any work; the message then
 * says what to do (start warrend, or point --socket elsewhere). Reuses a live connection. */
int warren_client_open(struct warren_client *c);
/* warren_client_new() + warren_client_open(). A caller that wants the reason of a failure in
 * words uses those two instead (the client holds the message). */
int warren_connect(const char *path, struct warren_client **ret);
struct warren_client *warren_client_free(struct warren_client *c);

/* Why the last call failed. The message is the daemon's when the daemon answered with an error;
 * code is its "code" ("not_found", "conflict"...) or "" for failures on this side; status is the
 * HTTP status or 0. Valid until the next call on this client. */
const char *warren_error_message(const struct warren_client *c);
const char *warren_error_code(const struct warren_client *c);
int warren_error_status(const struct warren_client *c);

/* Sends `method path` with body (may be NULL) serialised as JSON, and reads the whole response.
 * A 2xx fills ret; an error response returns its negative errno (see warren_errno_from_status)
 * with the daemon's message available from warren_error_message(). */
int warren_request(struct warren_client *c, const char *method, const char *path, json_t *body,
		   struct warren_response *ret);
void warren_response_done(struct warren_response *r);

/* Like warren_request(), but hands a 2xx body to fn piece by piece as it arrives (chunked
 * NDJSON of exec, logs?follow=1) instead of buffering it. Returns the HTTP status (>= 200). */
int warren_request_stream(struct warren_client *c, const char *method, const char *path,
			  json_t *body, warren_data_fn fn, void *userdata);

/* Sandbox paths: "/v1/sandboxes/<id><suffix>" with id percent-encoded, so that an id can never
 * name another route. suffix may be NULL. The string is owned by the caller. */
int warren_sandbox_path(const char *id, const char *suffix, char **ret);

/* --- exec ---------------------------------------------------------------------------------- */

struct warren_exec_ops {
	warren_data_fn on_stdout; /* decoded bytes (the *_b64 forms arrive already decoded) */
	warren_data_fn on_stderr;
};

struct warren_exec_result {
	int exit_code;  /* the command's code, or 128 + N when signal N killed it */
	bool timed_out; /* the daemon killed it at timeout_s */
};

/* POST /v1/sandboxes/{id}/exec with req (see docs/api.md) and streams its output to ops as it
 * arrives. A stream that ends without the final exit_code object is an error (-EPROTO). */
int warren_exec(struct warren_client *c, const char *id, json_t *req,
		const struct warren_exec_ops *ops, void *userdata, struct warren_exec_result *ret);

/* POST /v1/sandboxes/{id}/wait: blocks until the sandbox has exited (returns at once if it
 * has), then gives its exit code (the command's, or 128 + N when signal N killed it; a
 * sandbox deleted while running was killed: 137) and, if ret_sandbox is not NULL, its object
 * as GET shows it (owned by the caller). An answer without an exit is -EPROTO. */
int warren_wait(struct warren_client *c, const char *id, int *ret_exit_code,
		json_t **ret_sandbox);

/* GET /v1/sandboxes/{id}/logs[?follow=1], each piece to fn. */
int warren_logs(struct warren_client *c, const char *id, bool follow, warren_data_fn fn,
		void *userdata);

/* --- helpers, exposed for callers and tests ------------------------------------------------- */

/* The negative errno for an HTTP error status (and the daemon's code when known):
 * 400 -EINVAL, 404 -ENOENT, 405 -EOPNOTSUPP, 409 -EBUSY, 413 -E2BIG, 429 -EUSERS,
 * 500 -EIO, 503 -EAGAIN; other 4xx -EINVAL, other 5xx -EIO, anything else -EPROTO. */
int warren_errno_from_status(int status, const char *code);

/* Extracts {"error": {"code", "message"}} from an error body. A body that is not such JSON
 * gives code "" and a message made of the status line and the body's first line. Both strings
 * are owned by the caller. */
int warren_error_from_body(int status, const char *body, size_t len, char **ret_code,
			   char **ret_message);

/* "4096", "256M", "1G", "64KiB", "2gb": K/M/G/T are powers of 1024. */
int warren_parse_size(const char *s, uint64_t *ret);
/* The reverse, for people: "256M", "1.5G", "512B"; returns buf. */
char *warren_format_size(uint64_t bytes, char *buf, size_t len);

/* Splits a byte stream into NDJSON lines, across arbitrary chunk boundaries. */
typedef int (*warren_json_fn)(json_t *obj, void *userdata);
struct warren_ndjson {
	char *buf; /* the incomplete last line */
	size_t len, cap;
};
/* Calls fn for each complete line (the object is borrowed for the call); blank lines are
 * skipped; a line that is not a JSON object is -EBADMSG; a line over 16 MiB is -E2BIG. */
int warren_ndjson_feed(struct warren_ndjson *nd, const char *data, size_t len, warren_json_fn fn,
		       void *userdata);
/* End of stream: a final line without its newline still counts. */
int warren_ndjson_finish(struct warren_ndjson *nd, warren_json_fn fn, void *userdata);
void warren_ndjson_done(struct warren_ndjson *nd);

/* Standard base64 (RFC 4648, padding optional); ret is owned by the caller. -EINVAL on bad
 * input. */
int warren_base64_decode(const char *s, size_t len, char **ret, size_t *ret_len);

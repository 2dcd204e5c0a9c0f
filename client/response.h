/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Incremental parser of one HTTP/1.1 response (libhttp-parser underneath). Internal to the
 * client library; tests feed it canned responses. */

#include <http_parser.h>
#include <stdbool.h>

#include "warren.h"

/* A buffered body is capped: a list of thousands of sandboxes is a few MiB; anything near this
 * is a daemon bug, not data. Streamed bodies have no cap. */
#define RESPONSE_BODY_MAX (256u << 20)
/* What is kept of an error body that arrives while streaming (the JSON error object). */
#define RESPONSE_ERROR_BODY_MAX (64u << 10)

struct response {
	http_parser parser;
	int status;
	bool json;        /* Content-Type: application/json */
	bool headers_done;
	bool complete;
	bool keep_alive;  /* decided at message end */
	bool in_content_type;
	bool saw_header_value; /* header-field callbacks may come in several pieces */
	/* A 2xx body goes to fn when set; otherwise (or for an error status) into body. */
	warren_data_fn fn;
	void *userdata;
	int fn_error;     /* what fn returned when it aborted */
	char *body;
	size_t body_len, body_cap, body_max;
	char field[32];   /* the current header name, enough to recognise Content-Type */
	size_t field_len;
	char value[128];  /* the Content-Type value */
	size_t value_len;
};

/* fn may be NULL: the whole body is buffered. */
void response_init(struct response *r, warren_data_fn fn, void *userdata);
void response_done(struct response *r);

/* Feeds bytes read from the socket; len 0 means EOF. Returns the number of bytes consumed (less
 * than len only when the response completed before them), -EBADMSG for malformed HTTP, -EFBIG
 * for a buffered body over the cap, or what fn returned. */
int response_feed(struct response *r, const char *data, size_t len);

/* The HTTP parser's description of the error behind -EBADMSG. */
const char *response_error(const struct response *r);

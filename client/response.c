/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "macro.h"
#include "response.h"

static struct response *response_of(http_parser *p)
{
	return container_of(p, struct response, parser);
}

static int body_append(struct response *r, const char *data, size_t len)
{
	if (len > r->body_max - r->body_len)
		return -EFBIG;
	if (r->body_len + len + 1 > r->body_cap) {
		size_t cap = MAX(r->body_cap * 2, r->body_len + len + 1);
		char *b;

		cap = MAX(cap, (size_t)4096);
		b = realloc(r->body, cap);
		if (!b)
			return -ENOMEM;
		r->body = b;
		r->body_cap = cap;
	}
	memcpy(r->body + r->body_len, data, len);
	r->body_len += len;
	r->body[r->body_len] = '\0';
	return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
	struct response *r = response_of(p);

	/* A new field starts after a value; a field may also arrive in several pieces when it
	 * straddles two reads. */
	if (r->saw_header_value) {
		r->field_len = 0;
		r->saw_header_value = false;
	}
	if (len > sizeof(r->field) - 1 - r->field_len)
		len = sizeof(r->field) - 1 - r->field_len; /* not Content-Type anyway */
	memcpy(r->field + r->field_len, at, len);
	r->field_len += len;
	r->field[r->field_len] = '\0';
	return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
	struct response *r = response_of(p);

	if (!r->saw_header_value) {
		r->saw_header_value = true;
		r->in_content_type = strcasecmp(r->field, "content-type") == 0;
		if (r->in_content_type)
			r->value_len = 0;
	}
	if (!r->in_content_type)
		return 0;
	if (len > sizeof(r->value) - 1 - r->value_len)
		len = sizeof(r->value) - 1 - r->value_len;
	memcpy(r->value + r->value_len, at, len);
	r->value_len += len;
	r->value[r->value_len] = '\0';
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	struct response *r = response_of(p);

	r->status = p->status_code;
	r->headers_done = true;
	/* "application/json" with or without parameters (charset). */
	r->json = strncasecmp(r->value, "application/json", 16) == 0 &&
		  (r->value[16] == '\0' || r->value[16] == ';' || r->value[16] == ' ');
	/* Errors are always buffered: the caller wants the daemon's message, not a stream. */
	if (r->status < 200 || r->status > 299)
		r->body_max = RESPONSE_ERROR_BODY_MAX;
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
	struct response *r = response_of(p);
	int k;

	if (r->fn && r->status >= 200 && r->status <= 299) {
		k = r->fn(at, len, r->userdata);
		if (k < 0) {
			r->fn_error = k;
			return -1;
		}
		return 0;
	}
	if (r->body_max == RESPONSE_ERROR_BODY_MAX && len > r->body_max - r->body_len)
		len = r->body_max - r->body_len; /* the start of an error body is what matters */
	k = body_append(r, at, len);
	if (k < 0) {
		r->fn_error = k;
		return -1;
	}
	return 0;
}

static int on_message_complete(http_parser *p)
{
	struct response *r = response_of(p);

	r->complete = true;
	r->keep_alive = http_should_keep_alive(p);
	/* Stop at the message boundary: anything after it is not ours to parse. */
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings settings = {
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};

void response_init(struct response *r, warren_data_fn fn, void *userdata)
{
	*r = (struct response){
		.fn = fn,
		.userdata = userdata,
		.body_max = RESPONSE_BODY_MAX,
	};
	http_parser_init(&r->parser, HTTP_RESPONSE);
}

void response_done(struct response *r)
{
	free(r->body);
	r->body = NULL;
	r->body_len = r->body_cap = 0;
}

int response_feed(struct response *r, const char *data, size_t len)
{
	enum http_errno e;
	size_t n;

	if (r->complete)
		return 0;
	n = http_parser_execute(&r->parser, &settings, data, len);
	e = HTTP_PARSER_ERRNO(&r->parser);
	if (e == HPE_PAUSED) {
		http_parser_pause(&r->parser, 0);
		return (int)n;
	}
	if (e != HPE_OK)
		return r->fn_error < 0 ? r->fn_error : -EBADMSG;
	if (len == 0 && !r->complete)
		return -EBADMSG; /* EOF in the middle of a response */
	return (int)n;
}

const char *response_error(const struct response *r)
{
	return http_errno_description(HTTP_PARSER_ERRNO(&r->parser));
}

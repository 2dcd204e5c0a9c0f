/* SPDX-License-Identifier: Apache-2.0 */
/* Streamed responses: NDJSON line splitting, base64, exec and logs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client-internal.h"
#include "warren.h"

/* A line this long is not output framing but a daemon bug; the daemon splits output far below. */
#define NDJSON_LINE_MAX (16u << 20)

static int ndjson_line(const char *line, size_t len, warren_json_fn fn, void *userdata)
{
	_cleanup_(json_decrefp) json_t *o = NULL;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return 0;
	o = json_loadb(line, len, 0, NULL);
	if (!json_is_object(o))
		return -EBADMSG;
	return fn(o, userdata);
}

int warren_ndjson_feed(struct warren_ndjson *nd, const char *data, size_t len, warren_json_fn fn,
		       void *userdata)
{
	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		size_t piece = nl ? (size_t)(nl - data) : len;
		int r;

		/* A whole line in this piece with nothing pending: parse it in place, no copy. */
		if (nl && nd->len == 0) {
			if (piece > NDJSON_LINE_MAX)
				return -E2BIG;
			r = ndjson_line(data, piece, fn, userdata);
		} else {
			if (piece > NDJSON_LINE_MAX - nd->len)
				return -E2BIG;
			if (nd->len + piece > nd->cap) {
				size_t cap = MAX(MAX(nd->cap * 2, nd->len + piece), (size_t)1024);
				char *b = realloc(nd->buf, cap);

				if (!b)
					return -ENOMEM;
				nd->buf = b;
				nd->cap = cap;
			}
			memcpy(nd->buf + nd->len, data, piece);
			nd->len += piece;
			if (!nl)
				return 0;
			r = ndjson_line(nd->buf, nd->len, fn, userdata);
			nd->len = 0;
		}
		if (r < 0)
			return r;
		data += piece + 1;
		len -= piece + 1;
	}
	return 0;
}

int warren_ndjson_finish(struct warren_ndjson *nd, warren_json_fn fn, void *userdata)
{
	int r = 0;

	if (nd->len > 0)
		r = ndjson_line(nd->buf, nd->len, fn, userdata);
	nd->len = 0;
	return r;
}

void warren_ndjson_done(struct warren_ndjson *nd)
{
	free(nd->buf);
	*nd = (struct warren_ndjson){};
}

static int base64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int warren_base64_decode(const char *s, size_t len, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *out = NULL;
	uint32_t acc = 0;
	size_t n = 0, bits = 0, i;

	while (len > 0 && s[len - 1] == '=')
		len--;
	if (len % 4 == 1) /* one leftover character cannot carry a byte */
		return -EINVAL;
	out = malloc(len / 4 * 3 + 3 + 1);
	if (!out)
		return -ENOMEM;
	for (i = 0; i < len; i++) {
		int v = base64_value((unsigned char)s[i]);

		if (v < 0)
			return -EINVAL;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	out[n] = '\0';
	*ret = TAKE_PTR(out);
	*ret_len = n;
	return 0;
}

struct exec_state {
	const struct warren_exec_ops *ops;
	void *userdata;
	struct warren_ndjson nd;
	bool done;
	struct warren_exec_result result;
	/* An error the daemon reported in the stream (the command could not start...). */
	int err_status;
	char *err_code, *err_message;
	bool malformed; /* a line that is not what the API promises */
};

static int exec_output(warren_data_fn fn, void *userdata, json_t *s, bool b64)
{
	_cleanup_free_ char *raw = NULL;
	size_t len;
	int r;

	if (!json_is_string(s))
		return -EBADMSG;
	if (!fn)
		return 0;
	if (!b64)
		return fn(json_string_value(s), json_string_length(s), userdata);
	r = warren_base64_decode(json_string_value(s), json_string_length(s), &raw, &len);
	if (r < 0)
		return r == -EINVAL ? -EBADMSG : r;
	return fn(raw, len, userdata);
}

static int exec_line(json_t *o, void *userdata)
{
	struct exec_state *st = userdata;
	json_t *v;

	if ((v = json_object_get(o, "stdout")))
		return exec_output(st->ops->on_stdout, st->userdata, v, false);
	if ((v = json_object_get(o, "stdout_b64")))
		return exec_output(st->ops->on_stdout, st->userdata, v, true);
	if ((v = json_object_get(o, "stderr")))
		return exec_output(st->ops->on_stderr, st->userdata, v, false);
	if ((v = json_object_get(o, "stderr_b64")))
		return exec_output(st->ops->on_stderr, st->userdata, v, true);
	if ((v = json_object_get(o, "exit_code"))) {
		if (!json_is_integer(v))
			return -EBADMSG;
		st->result.exit_code = (int)json_integer_value(v);
		st->result.timed_out = json_is_true(json_object_get(o, "timed_out"));
		st->done = true;
		return 0;
	}
	if ((v = json_object_get(o, "error"))) {
		const char *code = json_string_value(json_object_get(v, "code"));
		const char *message = json_string_value(json_object_get(v, "message"));

		st->err_code = strdup(code ? code : "");
		st->err_message = strdup(message ? message : "exec failed");
		/* Mid-stream, after the 200: there is no status of its own. */
		st->err_status = 0;
		return st->err_code && st->err_message ? warren_errno_from_status(0, st->err_code)
							: -ENOMEM;
	}
	/* Unknown objects are newer daemons' additions: skip them. */
	return 0;
}

static int exec_data(const char *data, size_t len, void *userdata)
{
	struct exec_state *st = userdata;
	int r;

	r = warren_ndjson_feed(&st->nd, data, len, exec_line, st);
	if (r == -EBADMSG || r == -E2BIG)
		st->malformed = true;
	return r;
}

int warren_exec(struct warren_client *c, const char *id, json_t *req,
		const struct warren_exec_ops *ops, void *userdata, struct warren_exec_result *ret)
{
	struct exec_state st = { .ops = ops, .userdata = userdata };
	_cleanup_free_ char *path = NULL;
	int r;

	r = warren_sandbox_path(id, "/exec", &path);
	if (r < 0)
		return client_fail(c, r, "invalid sandbox id '%s'", id);
	r = warren_request_stream(c, "POST", path, req, exec_data, &st);
	if (r >= 0) {
		r = warren_ndjson_finish(&st.nd, exec_line, &st);
		if (r == -EBADMSG)
			st.malformed = true;
	}
	if (st.err_message)
		r = client_fail_api(c, st.err_status, st.err_code, st.err_message);
	else if (st.malformed)
		r = client_fail(c, r, "malformed exec output from warrend");
	else if (r >= 0 && !st.done)
		r = client_fail(c, -EPROTO, "exec output ended without an exit code");
	warren_ndjson_done(&st.nd);
	free(st.err_code);
	free(st.err_message);
	if (r < 0)
		return r;
	*ret = st.result;
	return 0;
}

int warren_logs(struct warren_client *c, const char *id, bool follow, warren_data_fn fn,
		void *userdata)
{
	_cleanup_free_ char *path = NULL;
	int r;

	r = warren_sandbox_path(id, follow ? "/logs?follow=1" : "/logs", &path);
	if (r < 0)
		return client_fail(c, r, "invalid sandbox id '%s'", id);
	r = warren_request_stream(c, "GET", path, NULL, fn, userdata);
	return r < 0 ? r : 0;
}

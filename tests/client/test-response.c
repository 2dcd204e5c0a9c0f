/* SPDX-License-Identifier: Apache-2.0 */
/* The response parser and the NDJSON splitter, fed canned bytes at every possible split. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "response.h"
#include "warren.h"

struct sink {
	char buf[4096];
	size_t len;
	int calls;
};

static int sink_data(const char *data, size_t len, void *userdata)
{
	struct sink *s = userdata;

	cr_assert_leq(s->len + len, sizeof(s->buf));
	memcpy(s->buf + s->len, data, len);
	s->len += len;
	s->calls++;
	return 0;
}

/* Feeds msg in pieces of `step` bytes (0: all at once), then EOF if eof. Returns the last
 * result of response_feed(). */
static int feed(struct response *r, const char *msg, size_t step, bool eof)
{
	size_t len = strlen(msg), off = 0;
	int k = 0;

	while (off < len) {
		size_t n = step ? MIN(step, len - off) : len - off;

		k = response_feed(r, msg + off, n);
		if (k < 0)
			return k;
		off += n;
	}
	if (eof)
		k = response_feed(r, NULL, 0);
	return k;
}

static const char content_length_response[] =
	"HTTP/1.1 201 Created\r\n"
	"Content-Type: application/json; charset=utf-8\r\n"
	"Content-Length: 26\r\n"
	"\r\n"
	"{\"id\":\"00a1\",\"state\":\"x\"}\n";

Test(response, content_length_at_every_split)
{
	for (size_t step = 0; step <= 9; step++) {
		struct response r;

		response_init(&r, NULL, NULL);
		cr_assert_geq(feed(&r, content_length_response, step, false), 0, "step %zu", step);
		cr_assert(r.complete, "step %zu", step);
		cr_assert_eq(r.status, 201);
		cr_assert(r.json, "Content-Type with a parameter is JSON (step %zu)", step);
		cr_assert(r.keep_alive);
		cr_assert_eq(r.body_len, 26);
		cr_assert_str_eq(r.body, "{\"id\":\"00a1\",\"state\":\"x\"}\n");
		response_done(&r);
	}
}

static const char chunked_response[] =
	"HTTP/1.1 200 OK\r\n"
	"Content-Type: application/x-ndjson\r\n"
	"Transfer-Encoding: chunked\r\n"
	"\r\n"
	"5\r\nhello\r\n"
	"7\r\n world\n\r\n"
	"0\r\n\r\n";

Test(response, chunked_body_streams_decoded)
{
	for (size_t step = 0; step <= 7; step++) {
		struct sink s = {};
		struct response r;

		response_init(&r, sink_data, &s);
		cr_assert_geq(feed(&r, chunked_response, step, false), 0);
		cr_assert(r.complete);
		cr_assert_eq(r.status, 200);
		cr_assert_not(r.json);
		cr_assert_eq(s.len, 12);
		cr_assert_eq(memcmp(s.buf, "hello world\n", 12), 0);
		cr_assert_eq(r.body_len, 0, "a streamed body is not buffered too");
		response_done(&r);
	}
}

Test(response, error_bodies_are_buffered_not_streamed)
{
	const char msg[] = "HTTP/1.1 404 Not Found\r\n"
			   "Content-Type: application/json\r\n"
			   "Transfer-Encoding: chunked\r\n"
			   "\r\n"
			   "10\r\n{\"error\": {\"code\r\n"
			   "29\r\n\": \"not_found\", \"message\": \"no sandbox\"}}\r\n"
			   "0\r\n\r\n";
	struct sink s = {};
	struct response r;

	response_init(&r, sink_data, &s);
	cr_assert_geq(feed(&r, msg, 3, false), 0);
	cr_assert(r.complete);
	cr_assert_eq(r.status, 404);
	cr_assert_eq(s.calls, 0);
	cr_assert_str_eq(r.body, "{\"error\": {\"code\": \"not_found\", \"message\": \"no sandbox\"}}");
	response_done(&r);
}

Test(response, huge_error_bodies_are_cut)
{
	const size_t n = RESPONSE_ERROR_BODY_MAX + 5000;
	char *msg = malloc(n + 200);
	int head = sprintf(msg, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: %zu\r\n\r\n", n);
	struct sink s = {};
	struct response r;

	memset(msg + head, 'x', n);
	msg[head + n] = '\0';
	response_init(&r, sink_data, &s);
	cr_assert_geq(feed(&r, msg, 1000, false), 0);
	cr_assert(r.complete);
	cr_assert_eq(r.body_len, RESPONSE_ERROR_BODY_MAX);
	response_done(&r);
	free(msg);
}

Test(response, connection_close_and_eof_delimited_bodies)
{
	const char msg[] = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end";
	struct response r;

	response_init(&r, NULL, NULL);
	cr_assert_geq(feed(&r, msg, 4, false), 0);
	cr_assert_not(r.complete, "without a length the body runs to EOF");
	cr_assert_geq(response_feed(&r, NULL, 0), 0);
	cr_assert(r.complete);
	cr_assert_not(r.keep_alive);
	cr_assert_str_eq(r.body, "until the end");
	response_done(&r);
}

Test(response, truncated_and_malformed_are_errors)
{
	struct response r;

	response_init(&r, NULL, NULL);
	cr_assert_eq(feed(&r, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0, true),
		     -EBADMSG);
	response_done(&r);

	response_init(&r, NULL, NULL);
	cr_assert_eq(feed(&r, "SSH-2.0-OpenSSH_9.2\r\n", 0, false), -EBADMSG);
	cr_assert_str_neq(response_error(&r), "success");
	response_done(&r);

	response_init(&r, NULL, NULL);
	cr_assert_eq(feed(&r, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0,
			  false),
		     -EBADMSG);
	response_done(&r);

	/* EOF before any byte: the caller tells this apart (a closed idle connection). */
	response_init(&r, NULL, NULL);
	cr_assert_eq(response_feed(&r, NULL, 0), -EBADMSG);
	response_done(&r);
}

Test(response, stops_at_the_message_boundary)
{
	const char two[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n";
	struct response r;
	int k;

	response_init(&r, NULL, NULL);
	k = response_feed(&r, two, strlen(two));
	cr_assert(r.complete);
	cr_assert_eq(k, (int)(strstr(two, "ok") + 2 - two), "consumed %d", k);
	cr_assert_str_eq(r.body, "ok");
	response_done(&r);
}

static int abort_data(const char *data, size_t len, void *userdata)
{
	return -EPIPE;
}

Test(response, callback_errors_abort)
{
	struct response r;

	response_init(&r, abort_data, NULL);
	cr_assert_eq(feed(&r, chunked_response, 0, false), -EPIPE);
	response_done(&r);
}

/* --- NDJSON ------------------------------------------------------------------------------- */

struct lines {
	char seen[1024];
	size_t len;
	int n;
};

static int collect(json_t *o, void *userdata)
{
	struct lines *l = userdata;
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);

	l->len += snprintf(l->seen + l->len, sizeof(l->seen) - l->len, "%s|", s);
	l->n++;
	free(s);
	return 0;
}

static const char stream[] = "{\"stdout\":\"out\\n\"}\n"
			     "\n"
			     "{\"stderr_b64\":\"AP8=\"}\r\n"
			     "{\"stdout\":\"caf\\u00e9 \\ud83d\\ude00\"}\n"
			     "{\"exit_code\":3,\"timed_out\":false}";
static const char expected[] = "{\"stdout\":\"out\\n\"}|{\"stderr_b64\":\"AP8=\"}|"
			       "{\"stdout\":\"café 😀\"}|"
			       "{\"exit_code\":3,\"timed_out\":false}|";

Test(ndjson, lines_survive_every_split_point)
{
	size_t len = strlen(stream);

	/* Two pieces, split at every byte. */
	for (size_t cut = 0; cut <= len; cut++) {
		struct warren_ndjson nd = {};
		struct lines l = {};

		cr_assert_eq(warren_ndjson_feed(&nd, stream, cut, collect, &l), 0);
		cr_assert_eq(warren_ndjson_feed(&nd, stream + cut, len - cut, collect, &l), 0);
		cr_assert_eq(warren_ndjson_finish(&nd, collect, &l), 0);
		cr_assert_str_eq(l.seen, expected, "cut at %zu", cut);
		warren_ndjson_done(&nd);
	}
	/* One byte at a time. */
	{
		struct warren_ndjson nd = {};
		struct lines l = {};

		for (size_t i = 0; i < len; i++)
			cr_assert_eq(warren_ndjson_feed(&nd, stream + i, 1, collect, &l), 0);
		cr_assert_eq(l.n, 3, "the last line has no newline yet");
		cr_assert_eq(warren_ndjson_finish(&nd, collect, &l), 0);
		cr_assert_str_eq(l.seen, expected);
		warren_ndjson_done(&nd);
	}
}

Test(ndjson, refuses_what_is_not_an_object_per_line)
{
	struct warren_ndjson nd = {};
	struct lines l = {};

	cr_assert_eq(warren_ndjson_feed(&nd, "{\"a\":1}\n[1,2]\n", 14, collect, &l), -EBADMSG);
	cr_assert_eq(l.n, 1);
	warren_ndjson_done(&nd);
	cr_assert_eq(warren_ndjson_feed(&nd, "{\"a\":", 5, collect, &l), 0);
	cr_assert_eq(warren_ndjson_finish(&nd, collect, &l), -EBADMSG, "a cut-off last line");
	warren_ndjson_done(&nd);
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "daemon.h"
#include "denial.h"
#include "audit-feed.h"
#include "log.h"
#include "network.h"
#include "sandbox.h"
#include "sandbox-wait.h"
#include "spec.h"


enum route {
	ROUTE_NONE,
	ROUTE_INFO,
	ROUTE_SANDBOXES,      /* /v1/sandboxes */
	ROUTE_SANDBOX,        /* /v1/sandboxes/{id} */
	ROUTE_SANDBOX_EXEC,
	ROUTE_SANDBOX_LOGS,
	ROUTE_SANDBOX_SIGNAL,
	ROUTE_SANDBOX_NETWORK,
	ROUTE_SANDBOX_WAIT,
	ROUTE_DENIALS,
	ROUTE_METRICS,
};

#define ID_ARG_MAX 64

/* Splits the path into a route and, for sandbox routes, the id as given. */
static enum route route_of(const char *path, char id[ID_ARG_MAX + 1])
{
	static const char prefix[] = "/v1/sandboxes/";
	const char *p, *rest;
	size_t n;

	if (strcmp(path, "/v1/info") == 0)
		return ROUTE_INFO;
	if (strcmp(path, "/v1/denials") == 0)
		return ROUTE_DENIALS;
	if (strcmp(path, "/metrics") == 0)
		return ROUTE_METRICS;
	if (strcmp(path, "/v1/sandboxes") == 0 || strcmp(path, "/v1/sandboxes/") == 0)
		return ROUTE_SANDBOXES;
	if (strncmp(path, prefix, sizeof(prefix) - 1) != 0)
		return ROUTE_NONE;
	p = path + sizeof(prefix) - 1;
	rest = strchrnul(p, '/');
	/* Any id is routed; one of the wrong form just names no sandbox (404). */
	n = MIN((size_t)(rest - p), (size_t)ID_ARG_MAX);
	memcpy(id, p, n);
	id[n] = '\0';
	if (!*rest)
		return ROUTE_SANDBOX;
	if (strcmp(rest, "/exec") == 0)
		return ROUTE_SANDBOX_EXEC;
	if (strcmp(rest, "/logs") == 0)
		return ROUTE_SANDBOX_LOGS;
	if (strcmp(rest, "/signal") == 0)
		return ROUTE_SANDBOX_SIGNAL;
	if (strcmp(rest, "/network") == 0)
		return ROUTE_SANDBOX_NETWORK;
	if (strcmp(rest, "/wait") == 0)
		return ROUTE_SANDBOX_WAIT;
	return ROUTE_NONE;
}

/* The value of name=value in a query string, copied into buf; NULL if absent. Values are
 * taken as they are: the ones warren reads (ids, numbers, 1/true) need no decoding. */
static const char *query_value(const char *query, const char *name, char *buf, size_t size)
{
	size_t n = strlen(name);

	for (const char *q = query; q && *q;) {
		if (strncmp(q, name, n) == 0 && (q[n] == '=' || q[n] == '&' || !q[n])) {
			const char *v = q[n] == '=' ? q + n + 1 : "";

			snprintf(buf, size, "%.*s", (int)strcspn(v, "&"), v);
			return buf;
		}
		q = strchr(q, '&');
		if (q)
			q++;
	}
	return NULL;
}

static bool query_flag(const char *query, const char *name)
{
	char buf[8];
	const char *v = query_value(query, name, buf, sizeof(buf));

	return v && (!*v || strcmp(v, "1") == 0 || strcmp(v, "true") == 0);
}

/* Parses a JSON body; an empty body is an empty object. */
static json_t *body_json(const struct http_request *req, char err[SPEC_ERR_MAX])
{
	json_error_t je;
	json_t *j;

	if (!req->body || req->body_len == 0)
		return json_object();
	j = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		snprintf(err, SPEC_ERR_MAX, "malformed JSON body at line %d column %d: %s",
			 je.line, je.column, je.text);
	return j;
}

/* The methods each route takes, for 405 and for validation. */
static bool method_ok(enum route r, enum http_method m)
{
	switch (r) {
	case ROUTE_INFO:
	case ROUTE_DENIALS:
	case ROUTE_METRICS:
		return m == HTTP_GET;
	case ROUTE_SANDBOXES:
		return m == HTTP_GET || m == HTTP_POST;
	case ROUTE_SANDBOX:
		return m == HTTP_GET || m == HTTP_DELETE;
	case ROUTE_SANDBOX_EXEC:
	case ROUTE_SANDBOX_SIGNAL:
	case ROUTE_SANDBOX_WAIT:
		return m == HTTP_POST;
	case ROUTE_SANDBOX_LOGS:
		return m == HTTP_GET;
	case ROUTE_SANDBOX_NETWORK:
		return m == HTTP_PATCH;
	default:
		return false;
	}
}

/* A wait takes no parameters: an empty body or {}. Anything else is refused rather than
 * ignored, so that a field added later cannot be mistaken for one that works now. */
static int wait_body_check(json_t *body, char err[SPEC_ERR_MAX])
{
	if (!json_is_object(body) || json_object_size(body) > 0) {
		snprintf(err, SPEC_ERR_MAX, "wait takes no fields: send an empty body or {}");
		return -EINVAL;
	}
	return 0;
}

/* Validates the body of a request that has one; pure. */
static int validate_body(enum route r, const struct http_request *req, char err[SPEC_ERR_MAX])
{
	_cleanup_(json_decrefp) json_t *body = NULL;
	int ret = 0;

	if (!(r == ROUTE_SANDBOXES && req->method == HTTP_POST) && r != ROUTE_SANDBOX_EXEC &&
	    r != ROUTE_SANDBOX_SIGNAL && r != ROUTE_SANDBOX_NETWORK && r != ROUTE_SANDBOX_WAIT)
		return 0;
	body = body_json(req, err);
	if (!body)
		return -EINVAL;
	if (r == ROUTE_SANDBOXES) {
		struct sandbox_spec s;

		ret = sandbox_spec_parse(body, &s, err);
		if (ret >= 0)
			sandbox_spec_done(&s);
	} else if (r == ROUTE_SANDBOX_EXEC) {
		struct exec_spec s;

		ret = exec_spec_parse(body, &s, err);
		if (ret >= 0)
			exec_spec_done(&s);
	} else if (r == ROUTE_SANDBOX_NETWORK) {
		struct net_spec n;

		ret = net_spec_parse(body, &n, err);
		if (ret >= 0)
			net_spec_done(&n);
	} else if (r == ROUTE_SANDBOX_WAIT) {
		ret = wait_body_check(body, err);
	}
	return ret;
}

int api_validate(const struct http_request *req)
{
	char id[ID_ARG_MAX + 1], err[SPEC_ERR_MAX] = "";
	enum route r = route_of(req->path, id);

	if (r == ROUTE_NONE)
		return 404;
	if (!method_ok(r, req->method))
		return 405;
	return validate_body(r, req, err) < 0 ? 400 : 200;
}

/* ---- handlers ------------------------------------------------------------------------------ */

static void respond_errno(struct conn *c, int r, const char *err)
{
	switch (r) {
	case -EINVAL:
		conn_respond_error(c, 400, "bad_request", "%s", err);
		break;
	case -EPERM:
		conn_respond_error(c, 403, "forbidden", "%s", err);
		break;
	case -ENOENT:
		conn_respond_error(c, 404, "not_found", "%s", err);
		break;
	case -EUSERS:
		conn_respond_error(c, 429, "too_many_sandboxes", "%s", err);
		break;
	case -EOPNOTSUPP:
	case -EAGAIN:
		conn_respond_error(c, 503, "unavailable", "%s", err);
		break;
	default:
		conn_respond_error(c, 500, "internal", "%s", err[0] ? err : strerror(-r));
	}
}

static void handle_info(struct conn *c)
{
	struct daemon *d = c->loop->d;
	json_t *info = json_deep_copy(d->info);

	json_object_set_new(info, "sandboxes", json_integer(atomic_load(&d->n_sandboxes)));
	json_object_set_new(info, "network", network_info(d));
	json_object_set_new(info, "audit", audit_feed_info(d));
	conn_respond_json(c, 200, info);
}

static void handle_denials(struct conn *c)
{
	char sandbox[ID_ARG_MAX + 1], limit_s[16];
	const char *sb = query_value(c->req.query, "sandbox", sandbox, sizeof(sandbox));
	const char *ls = query_value(c->req.query, "limit", limit_s, sizeof(limit_s));
	char *end;
	long limit = 50;

	if (ls) {
		limit = strtol(ls, &end, 10);
		if (!*ls || *end || limit < 1 || limit > 10000) {
			conn_respond_error(c, 400, "bad_request", "'limit' must be a number 1..10000");
			return;
		}
	}
	conn_respond_json(c, 200, denial_query(sb && *sb ? sb : NULL, (unsigned)limit));
}

/* Prometheus text format, version 0.0.4. */
static void handle_metrics(struct conn *c)
{
	struct daemon *d = c->loop->d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		conn_respond_error(c, 500, "internal", "out of memory");
		return;
	}
	fprintf(f, "# HELP warren_sandboxes Sandboxes on this node now.\n"
		   "# TYPE warren_sandboxes gauge\nwarren_sandboxes %u\n",
		atomic_load(&d->n_sandboxes));
	fprintf(f, "# HELP warren_sandboxes_created_total Sandboxes created since start-up.\n"
		   "# TYPE warren_sandboxes_created_total counter\n"
		   "warren_sandboxes_created_total %llu\n",
		(unsigned long long)atomic_load(&d->n_created));
	fprintf(f, "# HELP warren_denials_total Refusals by the access controls, by layer.\n"
		   "# TYPE warren_denials_total counter\n");
	for (int l = 0; l < _DENIAL_LAYER_MAX; l++)
		fprintf(f, "warren_denials_total{layer=\"%s\"} %llu\n", denial_layer_to_string(l),
			(unsigned long long)denial_count(l));
	fprintf(f, "# HELP warren_connections Open API connections on this loop.\n"
		   "# TYPE warren_connections gauge\nwarren_connections{loop=\"%u\"} %u\n",
		c->loop->idx, c->loop->n_conns);
	fclose(f);
	conn_respond(c, 200, "text/plain; version=0.0.4", buf, len);
	free(buf);
}

/* The list visits every loop in turn, each adding the sandboxes it owns. */
static void handle_list(struct conn *c)
{
	struct daemon *d = c->loop->d;

	if (!c->scratch)
		c->scratch = json_array();
	sandbox_list_append(c->loop, c->scratch);
	if (++c->hops < d->n_loops) {
		conn_move(c, &d->loops[(c->loop->idx + 1) % d->n_loops]);
		return;
	}
	conn_respond_json(c, 200, json_pack("{s:O}", "sandboxes", c->scratch));
}

static void handle_create(struct conn *c, json_t *body)
{
	char err[SPEC_ERR_MAX] = "";
	struct sandbox_spec spec;
	int r;

	if (atomic_load(&c->loop->d->stopping)) {
		conn_respond_error(c, 503, "unavailable", "warrend is shutting down");
		return;
	}
	/* One move at most: the sandbox lives on the loop it is made on. */
	struct loop *to = loop_for_create(c->loop);
	if (to != c->loop && c->hops++ == 0) {
		conn_move(c, to);
		return;
	}
	r = sandbox_spec_parse(body, &spec, err);
	if (r < 0) {
		respond_errno(c, r, err);
		return;
	}
	r = sandbox_create(c->loop, &spec, c, err);
	sandbox_spec_done(&spec);
	if (r < 0) {
		log_debug("create refused: %s", err);
		respond_errno(c, r, err);
	}
}

static void handle_exec(struct conn *c, struct sandbox *s, json_t *body)
{
	char err[SPEC_ERR_MAX] = "";
	struct exec_spec spec;
	int r;

	r = exec_spec_parse(body, &spec, err);
	if (r < 0) {
		respond_errno(c, r, err);
		return;
	}
	if (s->state != SANDBOX_RUNNING) {
		exec_spec_done(&spec);
		conn_respond_error(c, 409, "conflict", "sandbox %s is %s, not running", s->id,
				   sandbox_state_to_string(s->state));
		return;
	}
	r = sandbox_exec(s, &spec, c, err);
	exec_spec_done(&spec);
	if (r < 0)
		respond_errno(c, r, err);
}

static void handle_signal(struct conn *c, struct sandbox *s, json_t *body)
{
	json_t *v = json_object_get(body, "signal");
	int sig, r;

	if (json_is_integer(v))
		sig = json_integer_value(v) >= 1 && json_integer_value(v) <= 64 ?
			      (int)json_integer_value(v) :
			      -EINVAL;
	else if (json_is_string(v))
		sig = signal_from_string(json_string_value(v));
	else if (!v)
		sig = SIGTERM;
	else
		sig = -EINVAL;
	if (sig < 0) {
		conn_respond_error(c, 400, "bad_request",
				   "'signal' must be a name such as \"TERM\" or a number 1..64");
		return;
	}
	r = sandbox_signal(s, sig);
	if (r == -ESRCH) {
		conn_respond_error(c, 409, "conflict", "sandbox %s is %s, not running", s->id,
				   sandbox_state_to_string(s->state));
		return;
	}
	if (r < 0) {
		conn_respond_error(c, 500, "internal", "signalling %s: %s", s->id, strerror(-r));
		return;
	}
	conn_respond_json(c, 200, sandbox_to_json(s));
}

static void handle_network(struct conn *c, struct sandbox *s, json_t *body)
{
	char err[SPEC_ERR_MAX] = "";
	struct net_spec n;
	int r;

	r = net_spec_parse(body, &n, err);
	if (r < 0) {
		respond_errno(c, r, err);
		return;
	}
	if (s->state != SANDBOX_RUNNING) {
		net_spec_done(&n);
		conn_respond_error(c, 409, "conflict", "sandbox %s is %s, not running", s->id,
				   sandbox_state_to_string(s->state));
		return;
	}
	r = network_update(s, &n, err);
	net_spec_done(&n);
	if (r < 0) {
		respond_errno(c, r, err);
		return;
	}
	conn_respond_json(c, 200, sandbox_to_json(s));
}

/* Answered once the sandbox has exited: by sandbox-wait.c, on this (the owner's) loop. */
static void handle_wait(struct conn *c, struct sandbox *s, json_t *body)
{
	char err[SPEC_ERR_MAX] = "";

	if (wait_body_check(body, err) < 0) {
		conn_respond_error(c, 400, "bad_request", "%s", err);
		return;
	}
	sandbox_wait(s, c);
}

static void handle_sandbox(struct conn *c, enum route r, const char *id, json_t *body)
{
	struct loop *owner = strlen(id) == SANDBOX_ID_LEN ? loop_for_id(c->loop->d, id) : NULL;
	struct sandbox *s;

	if (owner && owner != c->loop) {
		conn_move(c, owner);
		return;
	}
	s = owner ? sandbox_find(c->loop, id) : NULL;
	if (!s || s->state == SANDBOX_REMOVED) {
		conn_respond_error(c, 404, "not_found",
				   "no sandbox '%s': list them with GET /v1/sandboxes", id);
		return;
	}
	switch (r) {
	case ROUTE_SANDBOX:
		if (c->req.method == HTTP_DELETE)
			sandbox_delete(s, c);
		else
			conn_respond_json(c, 200, sandbox_to_json(s));
		break;
	case ROUTE_SANDBOX_EXEC:
		handle_exec(c, s, body);
		break;
	case ROUTE_SANDBOX_LOGS:
		sandbox_logs(s, c, query_flag(c->req.query, "follow"));
		break;
	case ROUTE_SANDBOX_SIGNAL:
		handle_signal(c, s, body);
		break;
	case ROUTE_SANDBOX_NETWORK:
		handle_network(c, s, body);
		break;
	case ROUTE_SANDBOX_WAIT:
		handle_wait(c, s, body);
		break;
	default:
		assert(false);
	}
}

void api_handle(struct conn *c)
{
	char id[ID_ARG_MAX + 1] = "", err[SPEC_ERR_MAX] = "";
	_cleanup_(json_decrefp) json_t *body = NULL;
	enum route r = route_of(c->req.path, id);

	log_debug("loop %u: %s %s", c->loop->idx, http_method_str(c->req.method), c->req.path);
	if (r == ROUTE_NONE) {
		conn_respond_error(c, 404, "not_found", "no route %s %.200s: see docs/api.md",
				   http_method_str(c->req.method), c->req.path);
		return;
	}
	if (!method_ok(r, c->req.method)) {
		conn_respond_error(c, 405, "method_not_allowed", "%s is not allowed on %.200s",
				   http_method_str(c->req.method), c->req.path);
		return;
	}
	if (c->req.body_len || c->req.method == HTTP_POST || c->req.method == HTTP_PATCH) {
		body = body_json(&c->req, err);
		if (!body) {
			conn_respond_error(c, 400, "bad_request", "%s", err);
			return;
		}
	}
	switch (r) {
	case ROUTE_INFO:
		handle_info(c);
		break;
	case ROUTE_DENIALS:
		handle_denials(c);
		break;
	case ROUTE_METRICS:
		handle_metrics(c);
		break;
	case ROUTE_SANDBOXES:
		if (c->req.method == HTTP_GET)
			handle_list(c);
		else
			handle_create(c, body);
		break;
	default:
		handle_sandbox(c, r, id, body);
	}
}

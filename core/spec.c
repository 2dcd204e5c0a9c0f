/* SPDX-License-Identifier: Apache-2.0 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "macro.h"
#include "spec.h"

#define MAX_ARGS 4096
#define MAX_ARG_BYTES (256u * 1024)

static int fail(char err[SPEC_ERR_MAX], const char *fmt, const char *what)
{
	snprintf(err, SPEC_ERR_MAX, fmt, what);
	return -EINVAL;
}

char **strv_free(char **v)
{
	if (v)
		for (char **p = v; *p; p++)
			free(*p);
	free(v);
	return NULL;
}

static bool string_ok(const char *s, size_t len)
{
	/* NUL inside a string would silently cut an argument short. */
	return strlen(s) == len;
}

/* A JSON array of strings -> NULL-terminated vector. An empty array gives NULL. */
static int parse_argv(json_t *a, const char *field, char ***ret, char err[SPEC_ERR_MAX])
{
	char **v;
	size_t i, n, total = 0;
	json_t *e;

	*ret = NULL;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return fail(err, "'%s' must be an array of strings, e.g. [\"sh\", \"-c\", \"echo hi\"]",
			    field);
	n = json_array_size(a);
	if (n == 0)
		return 0;
	if (n > MAX_ARGS)
		return fail(err, "'%s' has more than 4096 arguments", field);
	v = calloc(n + 1, sizeof(char *));
	if (!v)
		return -ENOMEM;
	json_array_foreach(a, i, e) {
		if (!json_is_string(e) || !string_ok(json_string_value(e), json_string_length(e))) {
			strv_free(v);
			return fail(err, "'%s' must contain only strings without NUL bytes", field);
		}
		total += json_string_length(e) + 1;
		if (total > MAX_ARG_BYTES) {
			strv_free(v);
			return fail(err, "'%s' is over 256 KiB in all", field);
		}
		v[i] = strdup(json_string_value(e));
		if (!v[i]) {
			strv_free(v);
			return -ENOMEM;
		}
	}
	*ret = v;
	return 0;
}

static bool env_name_ok(const char *k)
{
	if (!*k || strchr(k, '='))
		return false;
	return true;
}

/* defaults, then the object's entries (which override a default of the same name). */
static int parse_env(json_t *o, char **defaults, char ***ret, char err[SPEC_ERR_MAX])
{
	size_t nd = 0, n = 0, total = 0;
	const char *k;
	json_t *val;
	char **v;

	if (o && !json_is_null(o) && !json_is_object(o))
		return fail(err, "'%s' must be an object of strings, e.g. {\"FOO\": \"bar\"}", "env");
	while (defaults && defaults[nd])
		nd++;
	v = calloc(nd + (o ? json_object_size(o) : 0) + 1, sizeof(char *));
	if (!v)
		return -ENOMEM;
	json_object_foreach(o, k, val) {
		char *kv;

		if (!env_name_ok(k) || !json_is_string(val) ||
		    !string_ok(json_string_value(val), json_string_length(val))) {
			strv_free(v);
			return fail(err, "'%s' needs names without '=' and string values without NUL",
				    "env");
		}
		total += strlen(k) + json_string_length(val) + 2;
		if (total > MAX_ARG_BYTES) {
			strv_free(v);
			return fail(err, "'%s' is over 256 KiB in all", "env");
		}
		if (asprintf(&kv, "%s=%s", k, json_string_value(val)) < 0) {
			strv_free(v);
			return -ENOMEM;
		}
		v[n++] = kv;
	}
	for (size_t i = 0; i < nd; i++) {
		size_t klen = strchr(defaults[i], '=') - defaults[i];
		bool overridden = false;

		for (size_t j = 0; j < n && !overridden; j++)
			overridden = strncmp(v[j], defaults[i], klen + 1) == 0;
		if (!overridden && !(v[n++] = strdup(defaults[i]))) {
			strv_free(v);
			return -ENOMEM;
		}
	}
	*ret = v;
	return 0;
}

static int parse_cwd(json_t *c, char **ret, char err[SPEC_ERR_MAX])
{
	*ret = NULL;
	if (!c || json_is_null(c))
		return 0;
	if (!json_is_string(c) || json_string_value(c)[0] != '/' ||
	    !string_ok(json_string_value(c), json_string_length(c)) || json_string_length(c) > 4095)
		return fail(err, "'%s' must be an absolute path inside the sandbox", "cwd");
	*ret = strdup(json_string_value(c));
	return *ret ? 0 : -ENOMEM;
}

static int parse_u64(json_t *o, const char *field, uint64_t min, uint64_t max, uint64_t def,
		     uint64_t *ret, char err[SPEC_ERR_MAX])
{
	json_t *v = json_object_get(o, field);
	json_int_t i;

	if (!v || json_is_null(v)) {
		*ret = def;
		return 0;
	}
	if (!json_is_integer(v))
		return fail(err, "limits.%s must be an integer", field);
	i = json_integer_value(v);
	if (i < 0 || (uint64_t)i < min || (uint64_t)i > max) {
		snprintf(err, SPEC_ERR_MAX, "limits.%s must be between %llu and %llu", field,
			 (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*ret = (uint64_t)i;
	return 0;
}

static int parse_string(json_t *o, const char *field, const char *def, char **ret,
			char err[SPEC_ERR_MAX])
{
	json_t *v = json_object_get(o, field);

	if (!v || json_is_null(v))
		*ret = strdup(def);
	else if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 64 ||
		 !string_ok(json_string_value(v), json_string_length(v)))
		return fail(err, "'%s' must be a non-empty string of at most 64 bytes", field);
	else
		*ret = strdup(json_string_value(v));
	return *ret ? 0 : -ENOMEM;
}

static int check_keys(json_t *o, const char *const *allowed, const char *where,
		      char err[SPEC_ERR_MAX])
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v) {
		bool ok = false;

		for (const char *const *a = allowed; *a && !ok; a++)
			ok = strcmp(*a, k) == 0;
		if (!ok) {
			snprintf(err, SPEC_ERR_MAX, "unknown field '%.64s' in %s", k, where);
			return -EINVAL;
		}
	}
	return 0;
}

static const char *const net_mode_names[_NET_MODE_MAX] = {
	[NET_MODE_NONE] = "none",
	[NET_MODE_ALLOWLIST] = "allowlist",
	[NET_MODE_HOST] = "host",
};

const char *net_mode_to_string(enum net_mode m)
{
	return m < _NET_MODE_MAX ? net_mode_names[m] : "unknown";
}

static const char *opt_string(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Whether one of the rules lets UDP datagrams to addr:port through. */
static bool rules_allow_udp(const struct net_spec *n, const struct allowlist_rule *host,
			    uint16_t port)
{
	for (size_t i = 0; i < n->n_rules; i++) {
		const struct allowlist_rule *r = &n->rules[i];
		const uint8_t *a = (const uint8_t *)&r->addr, *b = (const uint8_t *)&host->addr;
		unsigned bits = r->prefixlen;
		bool match = r->family == host->family;

		for (unsigned byte = 0; match && bits; byte++, bits = bits >= 8 ? bits - 8 : 0) {
			uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));

			match = (a[byte] & mask) == (b[byte] & mask);
		}
		if (match && port >= r->port_lo && port <= r->port_hi &&
		    (r->proto == ALLOWLIST_PROTO_UDP || r->proto == ALLOWLIST_PROTO_ANY))
			return true;
	}
	return false;
}

/* "dns": ["198.18.0.1"]: the only resolvers the sandbox is told of, each of which its rules
 * must already let it reach on UDP port 53, so names resolve there or nowhere. */
static int parse_dns(json_t *dns, struct net_spec *n, char err[SPEC_ERR_MAX])
{
	char *text = NULL;
	size_t len = 0, i;
	json_t *v;
	FILE *f;

	if (!dns || json_is_null(dns))
		return 0;
	if (n->mode != NET_MODE_ALLOWLIST)
		return fail(err, "%s", "network.dns needs network.mode \"allowlist\"");
	if (!json_is_array(dns) || json_array_size(dns) == 0 || json_array_size(dns) > 3)
		return fail(err, "%s", "network.dns must be an array of 1 to 3 resolver addresses");
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	json_array_foreach(dns, i, v) {
		struct allowlist_rule host;

		if (!json_is_string(v) || strchr(json_string_value(v), '/') ||
		    allowlist_rule_parse("udp", json_string_value(v), "53", &host) < 0) {
			fclose(f);
			free(text);
			return fail(err, "%s", "network.dns entries must be IP addresses");
		}
		if (!rules_allow_udp(n, &host, 53)) {
			fclose(f);
			free(text);
			snprintf(err, SPEC_ERR_MAX,
				 "resolver %.64s is not allowed: add a rule {\"proto\": \"udp\", "
				 "\"cidr\": \"%.64s\", \"ports\": \"53\"} to network.allow",
				 json_string_value(v), json_string_value(v));
			return -EINVAL;
		}
		fprintf(f, "nameserver %s\n", json_string_value(v));
	}
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	n->resolv_conf = text;
	n->dns = json_incref(dns);
	return 0;
}

int net_spec_parse(json_t *o, struct net_spec *ret, char err[SPEC_ERR_MAX])
{
	static const char *const keys[] = { "mode", "allow", "dns", NULL };
	static const char *const rule_keys[] = { "proto", "cidr", "ports", NULL };
	struct net_spec n = {};
	json_t *allow, *r;
	size_t i;
	int k;

	if (!o || json_is_null(o)) {
		*ret = n;
		return 0;
	}
	if (!json_is_object(o))
		return fail(err, "%s", "'network' must be an object, e.g. {\"mode\": \"none\"}");
	if ((k = check_keys(o, keys, "network", err)) < 0)
		return k;
	if (json_object_get(o, "mode")) {
		const char *m = opt_string(o, "mode");

		for (k = 0; m && k < _NET_MODE_MAX; k++)
			if (strcmp(m, net_mode_names[k]) == 0)
				break;
		if (!m || k == _NET_MODE_MAX)
			return fail(err, "%s", "network.mode must be \"none\", \"allowlist\" or \"host\"");
		n.mode = k;
	}
	allow = json_object_get(o, "allow");
	if (allow && !json_is_null(allow)) {
		if (n.mode != NET_MODE_ALLOWLIST)
			return fail(err, "%s", "network.allow needs network.mode \"allowlist\"");
		if (!json_is_array(allow) || json_array_size(allow) > ALLOWLIST_MAX_RULES)
			return fail(err, "%s", "network.allow must be an array of at most 256 rules");
		n.rules = calloc(json_array_size(allow) + 1, sizeof(*n.rules));
		if (!n.rules)
			return -ENOMEM;
		json_array_foreach(allow, i, r) {
			const char *cidr = opt_string(r, "cidr");

			if (!json_is_object(r) || check_keys(r, rule_keys, "a network.allow rule", err) < 0 ||
			    !cidr ||
			    allowlist_rule_parse(opt_string(r, "proto") ? opt_string(r, "proto") : "any",
						 cidr, opt_string(r, "ports"), &n.rules[i]) < 0) {
				free(n.rules);
				snprintf(err, SPEC_ERR_MAX,
					 "network.allow[%zu] is not a rule: it needs \"cidr\" (e.g. "
					 "\"198.18.0.0/15\", host bits zero), optional \"proto\" (tcp, udp, "
					 "icmp, any) and \"ports\" (\"443\", \"8000-8100\", \"any\")",
					 i);
				return -EINVAL;
			}
		}
		n.n_rules = json_array_size(allow);
		n.allow = json_incref(allow);
	}
	if ((k = parse_dns(json_object_get(o, "dns"), &n, err)) < 0) {
		net_spec_done(&n);
		return k;
	}
	*ret = n;
	return 0;
}

void net_spec_done(struct net_spec *n)
{
	free(n->rules);
	json_decref(n->allow);
	json_decref(n->dns);
	free(n->resolv_conf);
	memset(n, 0, sizeof(*n));
}

static char *default_env[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/root",
	"TERM=xterm",
	NULL,
};

int sandbox_spec_parse(json_t *body, struct sandbox_spec *ret, char err[SPEC_ERR_MAX])
{
	static const char *const top[] = { "tier", "image", "cmd", "env", "cwd", "limits", "network",
					   "seccomp_profile", NULL };
	static const char *const lim[] = { "memory_bytes", "pids", "cpu_weight", "disk_bytes",
					   "log_bytes", NULL };
	struct sandbox_spec s = {};
	json_t *limits;
	uint64_t w;
	int r;

	if (!json_is_object(body))
		return fail(err, "%s", "the body must be a JSON object");
	if ((r = check_keys(body, top, "the sandbox", err)) < 0)
		return r;
	limits = json_object_get(body, "limits");
	if (limits && !json_is_null(limits) && !json_is_object(limits))
		return fail(err, "%s", "'limits' must be an object");
	if (limits && json_is_object(limits) && (r = check_keys(limits, lim, "limits", err)) < 0)
		return r;
	if ((r = parse_string(body, "tier", "container", &s.tier, err)) < 0 ||
	    (r = parse_string(body, "image", "base", &s.image, err)) < 0 ||
	    (r = parse_argv(json_object_get(body, "cmd"), "cmd", &s.argv, err)) < 0 ||
	    (r = parse_env(json_object_get(body, "env"), default_env, &s.env, err)) < 0 ||
	    (r = parse_cwd(json_object_get(body, "cwd"), &s.cwd, err)) < 0 ||
	    (r = parse_u64(limits, "memory_bytes", 4ull << 20, 1ull << 40, 512ull << 20,
			   &s.cg.memory_bytes, err)) < 0 ||
	    (r = parse_u64(limits, "pids", 8, 32768, 1024, &s.cg.pids, err)) < 0 ||
	    (r = parse_u64(limits, "cpu_weight", 1, 10000, 100, &w, err)) < 0 ||
	    (r = parse_u64(limits, "disk_bytes", 1ull << 20, 64ull << 30, 1ull << 30,
			   &s.disk_bytes, err)) < 0 ||
	    (r = parse_u64(limits, "log_bytes", 4096, 1ull << 30, 8ull << 20, &s.log_bytes,
			   err)) < 0 ||
	    (r = net_spec_parse(json_object_get(body, "network"), &s.net, err)) < 0 ||
	    (json_object_get(body, "seccomp_profile") &&
	     (r = parse_string(body, "seccomp_profile", "", &s.seccomp_profile, err)) < 0)) {
		sandbox_spec_done(&s);
		return r;
	}
	s.cg.cpu_weight = (uint32_t)w;
	*ret = s;
	return 0;
}

void sandbox_spec_done(struct sandbox_spec *s)
{
	free(s->tier);
	free(s->image);
	strv_free(s->argv);
	strv_free(s->env);
	free(s->cwd);
	free(s->seccomp_profile);
	net_spec_done(&s->net);
	memset(s, 0, sizeof(*s));
}

int exec_spec_parse(json_t *body, struct exec_spec *ret, char err[SPEC_ERR_MAX])
{
	static const char *const top[] = { "cmd", "env", "cwd", "stdin", "timeout_s", NULL };
	struct exec_spec s = { .timeout_s = 60 };
	json_t *v;
	int r;

	if (!json_is_object(body))
		return fail(err, "%s", "the body must be a JSON object");
	if ((r = check_keys(body, top, "the exec request", err)) < 0)
		return r;
	if ((r = parse_argv(json_object_get(body, "cmd"), "cmd", &s.argv, err)) < 0)
		goto fail;
	if (!s.argv) {
		r = fail(err, "%s", "'cmd' is required: a non-empty array of strings");
		goto fail;
	}
	if ((r = parse_env(json_object_get(body, "env"), default_env, &s.env, err)) < 0 ||
	    (r = parse_cwd(json_object_get(body, "cwd"), &s.cwd, err)) < 0)
		goto fail;
	v = json_object_get(body, "stdin");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v)) {
			r = fail(err, "%s", "'stdin' must be a string");
			goto fail;
		}
		s.stdin_len = json_string_length(v);
		s.stdin_data = malloc(s.stdin_len + 1);
		if (!s.stdin_data) {
			r = -ENOMEM;
			goto fail;
		}
		memcpy(s.stdin_data, json_string_value(v), s.stdin_len + 1);
	}
	v = json_object_get(body, "timeout_s");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > 7 * 86400) {
			r = fail(err, "%s", "'timeout_s' must be an integer from 0 (none) to 604800");
			goto fail;
		}
		s.timeout_s = (unsigned)json_integer_value(v);
	}
	*ret = s;
	return 0;
fail:
	exec_spec_done(&s);
	return r;
}

void exec_spec_done(struct exec_spec *s)
{
	strv_free(s->argv);
	strv_free(s->env);
	free(s->cwd);
	free(s->stdin_data);
	memset(s, 0, sizeof(*s));
}

int signal_from_string(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = {
		{ "HUP", SIGHUP },   { "INT", SIGINT },   { "QUIT", SIGQUIT }, { "KILL", SIGKILL },
		{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "TERM", SIGTERM }, { "CONT", SIGCONT },
		{ "STOP", SIGSTOP }, { "WINCH", SIGWINCH }, { "ALRM", SIGALRM },
	};
	char *end;
	long n;

	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (strcasecmp(s, names[i].name) == 0)
			return names[i].sig;
	n = strtol(s, &end, 10);
	if (*s && !*end && n >= 1 && n <= 64)
		return (int)n;
	return -EINVAL;
}

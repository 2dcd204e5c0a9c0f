/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "allowlist.h"
#include "cgroup.h"

/* Validated request bodies. Parsing is pure: no node state is touched, so the fuzz target runs
 * it as is. On error, the functions return -EINVAL and write a message saying what was wrong
 * and what is accepted. */

#define SPEC_ERR_MAX 256

enum net_mode {
	NET_MODE_NONE,      /* loopback only */
	NET_MODE_ALLOWLIST, /* a veth into the node bridge, egress through the eBPF allowlist */
	NET_MODE_HOST,      /* the node's own network namespace, if the node allows it */
	_NET_MODE_MAX,
};

struct net_spec {
	enum net_mode mode;
	struct allowlist_rule *rules;
	size_t n_rules;
	json_t *allow;      /* the rules as given, for inspect */
	char *resolv_conf;  /* "nameserver ..." lines for the sandbox's /etc/resolv.conf, or NULL */
	json_t *dns;        /* the resolvers as given */
};

struct sandbox_spec {
	char *tier;       /* "container" */
	char *image;      /* "base" */
	char **argv;      /* NULL-terminated; NULL: idle until exec */
	char **env;       /* NULL-terminated KEY=VALUE, defaults included */
	char *cwd;
	char *seccomp_profile; /* a profile name; NULL: the tier's default */
	struct cg_limits cg;
	uint64_t disk_bytes;
	uint64_t log_bytes;
	struct net_spec net;
};

struct exec_spec {
	char **argv;
	char **env;
	char *cwd;
	char *stdin_data;
	size_t stdin_len;
	unsigned timeout_s; /* 0: none */
};

int sandbox_spec_parse(json_t *body, struct sandbox_spec *ret, char err[SPEC_ERR_MAX]);
void sandbox_spec_done(struct sandbox_spec *s);
int exec_spec_parse(json_t *body, struct exec_spec *ret, char err[SPEC_ERR_MAX]);
void exec_spec_done(struct exec_spec *s);
/* {"mode": "none"|"allowlist"|"host", "allow": [{"proto", "cidr", "ports"}, ...]}; absent: none.
 * Also the body of PATCH /v1/sandboxes/{id}/network. */
int net_spec_parse(json_t *o, struct net_spec *ret, char err[SPEC_ERR_MAX]);
void net_spec_done(struct net_spec *n);
const char *net_mode_to_string(enum net_mode m);

/* "TERM", "SIGTERM", "15" -> 15; -EINVAL otherwise. */
int signal_from_string(const char *s);
/* Frees a NULL-terminated string vector. NULL-safe, returns NULL. */
char **strv_free(char **v);

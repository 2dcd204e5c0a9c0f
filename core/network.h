/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "spec.h"

struct daemon;
struct loop;
struct sandbox;

/* The node's network: the eBPF allowlist (loaded once) and the bridge sandboxes' veths plug
 * into. Either may be missing on a node (no BPF, no rtnetlink rights): allowlist mode is then
 * refused with the reason, and GET /v1/info says it. Main thread, at start-up. */
void network_node_open(struct daemon *d);
void network_node_close(struct daemon *d);
json_t *network_info(const struct daemon *d);

/* Whether the node can give a sandbox this spec; -EOPNOTSUPP with the reason in err if not. */
int network_check(const struct daemon *d, const struct net_spec *n, char err[SPEC_ERR_MAX]);
/* Attaches the allowlist to the sandbox's cgroup, before anything runs in it. */
int network_prepare(struct sandbox *s);
/* Plugs the network namespace the sandbox will join (netns_fd) into the bridge, before the
 * sandbox exists: so it never runs without its network. */
int network_attach(struct sandbox *s, int netns_fd);
/* Undoes prepare and attach; safe after a partial setup. */
void network_release(struct sandbox *s);
/* Replaces the rules of a running allowlist sandbox. */
int network_update(struct sandbox *s, struct net_spec *n, char err[SPEC_ERR_MAX]);
json_t *network_to_json(const struct sandbox *s);
/* Loop 0 drains the allowlist's ring buffer into the denial journal. */
void network_denials_start(struct loop *l);

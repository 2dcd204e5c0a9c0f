/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <jansson.h>
#include <stdint.h>

/* The denial journal: every refusal of an access control becomes a record {time, sandbox, layer,
 * action, detail}, kept in a bounded ring in memory and appended to a bounded file on disk
 * (<state-dir>/denials.jsonl, rotated to .1 at half its cap). Repeats of the same refusal by
 * the same sandbox within a second fold into the last record's `repeats` count, so a sandbox
 * hammering a refused call costs a compare, not a record. Any loop thread may record; a mutex
 * guards the ring (records are rare and small next to what produced them). */

enum denial_layer {
	DENIAL_SECCOMP,
	DENIAL_LANDLOCK,
	DENIAL_APPARMOR,
	DENIAL_NETWORK,
	DENIAL_API,
	_DENIAL_LAYER_MAX,
};

struct denial {
	double time;         /* wall clock, seconds */
	char sandbox[16];    /* sandbox id, or "" when it could not be told */
	enum denial_layer layer;
	char action[96];     /* "syscall ptrace", "connect 198.18.0.9:80/tcp", "fs.read_file /x" */
	char detail[192];
	uint32_t repeats;    /* further identical refusals folded into this record */
};

const char *denial_layer_to_string(enum denial_layer l);

/* Opens the journal file under state_dir, keeping at most max_bytes on disk and `capacity`
 * records in memory. Main thread, at start-up. */
int denial_journal_open(const char *state_dir, uint64_t max_bytes, unsigned capacity);
void denial_journal_close(void);

/* Records one refusal. Any thread. */
void denial_record(const char *sandbox, enum denial_layer layer, const char *action,
		   const char *detail);

/* The newest `limit` records, newest first, of one sandbox or all (sandbox NULL), as
 * {"denials": [...], "total": N}. */
json_t *denial_query(const char *sandbox, unsigned limit);
/* Refusals counted since start-up, per layer (repeats included). */
uint64_t denial_count(enum denial_layer l);

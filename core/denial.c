/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "denial.h"
#include "log.h"
#include "loop.h"

#define FOLD_WINDOW_S 1.0
#define FOLD_LOOKBACK 32 /* how many recent records a new one is compared with */

static const char *const layer_names[_DENIAL_LAYER_MAX] = {
	[DENIAL_SECCOMP] = "seccomp",
	[DENIAL_LANDLOCK] = "landlock",
	[DENIAL_APPARMOR] = "apparmor",
	[DENIAL_NETWORK] = "network",
	[DENIAL_API] = "api",
};

static struct {
	pthread_mutex_t lock;
	struct denial *ring;
	unsigned capacity, head, n; /* head: next slot to write */
	int fd;
	char *path, *old_path;
	uint64_t max_bytes, file_bytes;
	atomic_uint_fast64_t counts[_DENIAL_LAYER_MAX];
} J = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -EBADF };

const char *denial_layer_to_string(enum denial_layer l)
{
	return l < _DENIAL_LAYER_MAX ? layer_names[l] : "unknown";
}

int denial_journal_open(const char *state_dir, uint64_t max_bytes, unsigned capacity)
{
	struct stat st;

	J.ring = calloc(capacity, sizeof(*J.ring));
	if (!J.ring)
		return -ENOMEM;
	J.capacity = capacity;
	J.max_bytes = max_bytes;
	if (asprintf(&J.path, "%s/denials.jsonl", state_dir) < 0 ||
	    asprintf(&J.old_path, "%s/denials.jsonl.1", state_dir) < 0)
		return -ENOMEM;
	/* Appending across restarts: the journal outlives a daemon restart. */
	J.fd = open(J.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (J.fd < 0)
		return -errno;
	if (fstat(J.fd, &st) == 0)
		J.file_bytes = st.st_size;
	return 0;
}

void denial_journal_close(void)
{
	J.fd = safe_close(J.fd);
	free(J.ring);
	free(J.path);
	free(J.old_path);
	J.ring = NULL;
	J.path = J.old_path = NULL;
}

static json_t *denial_to_json(const struct denial *d)
{
	return json_pack("{s:f,s:s?,s:s,s:s,s:s,s:i}", "time", d->time, "sandbox",
			 d->sandbox[0] ? d->sandbox : NULL, "layer", layer_names[d->layer], "action",
			 d->action, "detail", d->detail, "repeats", (int)d->repeats);
}

/* Under the lock. */
static void journal_append(const struct denial *d)
{
	char *line;
	size_t n;

	if (J.fd < 0)
		return;
	json_t *j = denial_to_json(d);

	line = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!line)
		return;
	n = strlen(line);
	line[n] = '\n';
	if (J.file_bytes + n + 1 > J.max_bytes / 2) {
		int fd;

		if (rename(J.path, J.old_path) == 0 &&
		    (fd = open(J.path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600)) >= 0) {
			safe_close(J.fd);
			J.fd = fd;
			J.file_bytes = 0;
		}
	}
	if (write(J.fd, line, n + 1) == (ssize_t)(n + 1))
		J.file_bytes += n + 1;
	free(line);
}

void denial_record(const char *sandbox, enum denial_layer layer, const char *action,
		   const char *detail)
{
	double now = now_wall();
	struct denial *d;

	atomic_fetch_add(&J.counts[layer], 1);
	if (!J.ring)
		return;
	pthread_mutex_lock(&J.lock);
	for (unsigned i = 1; i <= MIN(J.n, (unsigned)FOLD_LOOKBACK); i++) {
		d = &J.ring[(J.head + J.capacity - i) % J.capacity];
		if (now - d->time > FOLD_WINDOW_S)
			break;
		if (d->layer == layer && strcmp(d->sandbox, sandbox ? sandbox : "") == 0 &&
		    strcmp(d->action, action) == 0 && strcmp(d->detail, detail ? detail : "") == 0) {
			d->repeats++;
			pthread_mutex_unlock(&J.lock);
			return;
		}
	}
	d = &J.ring[J.head];
	*d = (struct denial){ .time = now, .layer = layer };
	snprintf(d->sandbox, sizeof(d->sandbox), "%s", sandbox ? sandbox : "");
	snprintf(d->action, sizeof(d->action), "%s", action);
	snprintf(d->detail, sizeof(d->detail), "%s", detail ? detail : "");
	J.head = (J.head + 1) % J.capacity;
	if (J.n < J.capacity)
		J.n++;
	journal_append(d);
	pthread_mutex_unlock(&J.lock);
	log_debug("denied: sandbox %s, %s: %s (%s)", sandbox ? sandbox : "?", layer_names[layer],
		  action, detail ? detail : "");
}

json_t *denial_query(const char *sandbox, unsigned limit)
{
	json_t *a = json_array();
	unsigned total = 0;

	pthread_mutex_lock(&J.lock);
	for (unsigned i = 1; i <= J.n; i++) {
		const struct denial *d = &J.ring[(J.head + J.capacity - i) % J.capacity];

		if (sandbox && strcmp(d->sandbox, sandbox) != 0)
			continue;
		total++;
		if (json_array_size(a) < limit)
			json_array_append_new(a, denial_to_json(d));
	}
	pthread_mutex_unlock(&J.lock);
	return json_pack("{s:o,s:i}", "denials", a, "total", (int)total);
}

uint64_t denial_count(enum denial_layer l)
{
	return atomic_load(&J.counts[l]);
}

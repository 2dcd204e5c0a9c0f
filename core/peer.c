/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon.h"
#include "peer.h"
#include "sandbox.h"

/* pid -> sandbox of the processes warrend started, indexed by pid: a newer process with the
 * same index replaces an older one. Consulted only for processes that are already gone. */
#define PID_NOTES 16384

static struct {
	pid_t pid;
	char id[SANDBOX_ID_LEN + 1];
} notes[PID_NOTES];
static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;

void pid_note(pid_t pid, const char *id)
{
	pthread_mutex_lock(&notes_lock);
	notes[pid % PID_NOTES].pid = pid;
	snprintf(notes[pid % PID_NOTES].id, sizeof(notes[0].id), "%s", id);
	pthread_mutex_unlock(&notes_lock);
}

static int noted(pid_t pid, char ret_id[16])
{
	int r = 0;

	pthread_mutex_lock(&notes_lock);
	if (notes[pid % PID_NOTES].pid == pid) {
		memcpy(ret_id, notes[pid % PID_NOTES].id, SANDBOX_ID_LEN + 1);
		r = 1;
	}
	pthread_mutex_unlock(&notes_lock);
	return r;
}

int sandbox_of_pid(const struct daemon *d, pid_t pid, char ret_id[16])
{
	char path[64], buf[4096], prefix[256];
	_cleanup_close_ int fd = -EBADF;
	ssize_t n;
	char *line;
	size_t plen;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		return -errno;
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n < 0 && fd >= 0 && errno != ESRCH)
		return -errno;
	if (n < 0) /* gone, or reaped between the open and the read */
		return noted(pid, ret_id) ?: -ESRCH;
	buf[n] = '\0';
	/* The cgroup2 line, "0::<path>", as the host's cgroup namespace shows it. */
	line = strstr(buf, "0::");
	if (line != buf && line && line[-1] != '\n')
		line = NULL;
	if (!line)
		return 0;
	plen = snprintf(prefix, sizeof(prefix), "0::/%s/", d->cgroup_name);
	if (strncmp(line, prefix, plen) != 0)
		return 0;
	line += plen;
	if (strcspn(line, "/\n") != SANDBOX_ID_LEN)
		return 0;
	memcpy(ret_id, line, SANDBOX_ID_LEN);
	ret_id[SANDBOX_ID_LEN] = '\0';
	return 1;
}

int sandbox_of_peer(const struct daemon *d, int fd, char ret_id[16])
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	return sandbox_of_pid(d, cred.pid, ret_id);
}

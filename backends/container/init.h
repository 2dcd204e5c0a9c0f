/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* warren-init's parts: init.c (signals, reaping, the sandbox's command) and init-exec.c (the
 * exec channel). One thread; nothing here is shared with the daemon but exec-proto.h. */

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Takes over fd, the listening socket of the exec channel, if it is one (else the sandbox
 * serves no exec) and makes it close-on-exec. mask: the signal mask commands get. */
void exec_channel_open(int fd, const sigset_t *mask);
/* Stops accepting execs (the sandbox is ending). */
void exec_channel_close(void);
/* Fills p with what the channel waits for; returns how many entries it used (at most
 * EXEC_CHANNEL_POLLFDS). */
#define EXEC_CHANNEL_POLLFDS 1025
unsigned exec_channel_pollfds(struct pollfd *p);
/* Handles what ppoll() reported for the n entries exec_channel_pollfds() filled in. */
void exec_channel_dispatch(const struct pollfd *p, unsigned n);
/* A child was reaped: if it was an exec's command, its exit code goes to the daemon. */
bool exec_channel_reaped(pid_t pid, int code);

/* execve() with a PATH search (path: ':'-separated, empty entries mean "."), on stack buffers
 * only (it runs in a vfork child); returns the most telling -errno. */
int init_execvpe(const char *file, char *const argv[], char *const envp[], const char *path);

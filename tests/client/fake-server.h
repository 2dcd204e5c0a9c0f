/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* A scripted HTTP server on a Unix socket in a temporary directory, run by a thread: it answers
 * each request with the next canned response, records what it was sent, and counts the
 * connections it accepted. Enough to test the client without warrend. */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define FAKE_MAX_EXCHANGES 8

struct fake_exchange {
	/* The response, sent in pieces with a pause between them so that the client sees them in
	 * separate reads; NULL ends the list. */
	const char *pieces[8];
	bool close_after; /* close the connection after answering (without saying so) */
	bool no_answer;   /* close the connection as soon as the request is read */
};

struct fake_server {
	char dir[64];
	char path[108];
	int listen_fd;
	pthread_t thread;
	const struct fake_exchange *script;
	size_t n_script;
	/* What happened, valid after fake_server_stop(). */
	int accepts;
	size_t n_requests;
	char requests[FAKE_MAX_EXCHANGES][8192]; /* head and body, as received */
};

/* Listens in a new temporary directory and serves script in a thread. 0 or negative errno. */
int fake_server_start(struct fake_server *s, const struct fake_exchange *script, size_t n);
/* Waits for the script to finish (or the client to hang up), then removes the socket. */
void fake_server_stop(struct fake_server *s);

/* The body of the i-th recorded request (after the blank line), or NULL. */
const char *fake_request_body(const struct fake_server *s, size_t i);

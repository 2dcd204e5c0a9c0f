/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* POST /v1/sandboxes/{id}/wait: requests that are answered once their sandbox has exited.
 *
 * Any number of connections may wait on one sandbox. Each waiter lives on the sandbox's loop
 * (the API moves the connection there first) and watches its socket for the client hanging
 * up (POLLRDHUP), since nothing else reads from a connection while its request waits. */

struct conn;
struct sandbox;
struct sandbox_waiter;

/* Answers c with the sandbox object (200) once s has exited, at once if it already has.
 * Loop thread of s only. */
void sandbox_wait(struct sandbox *s, struct conn *c);
/* Answers every waiter of s with its object. sandbox.c calls it where the exit is observed
 * and, should any waiter be left by then, when the sandbox is removed. Loop thread of s. */
void sandbox_wait_answer(struct sandbox *s);

/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* The exec channel of a container sandbox: the wire format between the daemon (exec.c) and the
 * sandbox's init (init-exec.c), which serves execs on a listening SOCK_SEQPACKET socket the
 * daemon bound at a host path before the spawn (fd 3 of the init).
 *
 * Per exec the daemon connects and sends one request: a struct exec_request, then argc + envc
 * + 1 NUL-terminated strings (argv, envp, the working directory), with the command's stdin,
 * stdout and stderr as SCM_RIGHTS. The init answers with struct exec_reply messages:
 *   EXEC_REPLY_PID      sent by the forked child itself before it execs, so that the kernel's
 *                       SCM_CREDENTIALS name the command's process for the daemon (in the
 *                       daemon's pid namespace; a sender can claim no pid but its own);
 *   EXEC_REPLY_STARTED  the command exec'd;  or EXEC_REPLY_FAILED: step, errno (nothing runs);
 *   EXEC_REPLY_EXITED   its exit code (128 + N if signal N killed it); then the init closes.
 * If the daemon shuts down its side of the connection while the command runs, the init kills
 * the command's process group and still answers EXITED.
 *
 * Both ends come from one build: the layout is the compiler's. The daemon checks every reply,
 * since the sandbox may control its init; the init trusts requests, which only the daemon can
 * send (the socket's path is in a root-only directory outside every sandbox). */

#include <stdint.h>

#define EXEC_PROTO_MAGIC 0x57455831u /* "WEX1" */

/* An HTTP body is at most 1 MiB and the API caps the command and the environment at 256 KiB
 * each: a request is never larger than this. */
#define EXEC_REQUEST_MAX ((1u << 20) + 4096)

struct exec_request {
	uint32_t magic;
	uint32_t argc, envc;        /* argc >= 1 */
	uint32_t strings;           /* bytes of strings after this header */
	/* The Landlock domain the child takes (profiles/profile.h); abi 0: none. */
	int32_t landlock_abi;
	uint32_t landlock_restrict_flags;
	uint64_t landlock_fs, landlock_scoped;
};

enum exec_reply_type {
	EXEC_REPLY_PID = 1,
	EXEC_REPLY_STARTED,
	EXEC_REPLY_FAILED,
	EXEC_REPLY_EXITED,
};

struct exec_reply {
	uint32_t type;
	int32_t a; /* FAILED: the step (enum child_step); EXITED: the exit code */
	int32_t b; /* FAILED: a positive errno */
	uint32_t zero;
};

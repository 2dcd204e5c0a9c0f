/* SPDX-License-Identifier: Apache-2.0 */
/* warren-init: pid 1 of every container sandbox, exec'd from a sealed memfd (static, so it
 * needs nothing from the image).
 *
 *   warren-init -- CMD [ARG...]   runs CMD, forwards signals to it, reaps every orphan, and
 *                                 when CMD exits kills what is left and exits with its code
 *                                 (128 + N if signal N killed it).
 *   warren-init                   idles as the namespace's anchor for exec, reaping orphans;
 *                                 SIGTERM or SIGINT kill everything left and exit 0.
 *
 * pid 1 of a pid namespace gets no signal whose action is the default (the kernel drops it),
 * so every signal we care about is blocked and taken synchronously with sigwaitinfo(): blocked
 * signals are queued, not dropped, and no handler runs at an awkward moment. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

static int status_to_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static void spawn_command(char **cmd, const sigset_t *old_mask)
{
	/* The command gets the signal mask we started with, and its own process group so that
	 * a terminal's job control does not confuse it with us. */
	sigprocmask(SIG_SETMASK, old_mask, NULL);
	setpgid(0, 0);
	if (!getenv("PATH"))
		setenv("PATH", DEFAULT_PATH, 1);
	execvp(cmd[0], cmd);
	dprintf(STDERR_FILENO, "warren-init: exec %s: %s\n", cmd[0], strerror(errno));
	_exit(127);
}

/* Kills every other process of the namespace (kill(-1) from its pid 1 reaches all of them and
 * spares the caller) and waits until none is left. */
static _Noreturn void finish(int code)
{
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	exit(code);
}

int main(int argc, char **argv)
{
	sigset_t set, old_mask;
	char **cmd = NULL;
	pid_t child = 0;

	/* Exec'd from a memfd, we would show as "memfd:warren-init" in ps. */
	prctl(PR_SET_NAME, "warren-init", 0, 0, 0);

	if (argc > 1) {
		if (strcmp(argv[1], "--") != 0 || argc < 3) {
			dprintf(STDERR_FILENO, "usage: warren-init [-- CMD [ARG...]]\n");
			return 2;
		}
		cmd = argv + 2;
	}

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&set, forwarded[i]);
	if (sigprocmask(SIG_BLOCK, &set, &old_mask) < 0) {
		dprintf(STDERR_FILENO, "warren-init: sigprocmask: %s\n", strerror(errno));
		return 127;
	}

	if (cmd) {
		child = fork();
		if (child < 0) {
			dprintf(STDERR_FILENO, "warren-init: fork: %s\n", strerror(errno));
			return 127;
		}
		if (child == 0)
			spawn_command(cmd, &old_mask);
	}

	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);

		if (sig < 0)
			continue; /* EINTR */
		if (sig != SIGCHLD) {
			if (child > 0)
				kill(child, sig);
			else if (sig == SIGTERM || sig == SIGINT)
				finish(0);
			continue;
		}
		/* SIGCHLD coalesces: reap everything that has exited. */
		for (;;) {
			int status;
			pid_t pid = waitpid(-1, &status, WNOHANG);

			if (pid <= 0)
				break;
			/* A command that asked to be traced (PTRACE_TRACEME, when the profile
			 * allows it) made us its tracer: let it go on untraced, with the signal
			 * that stopped it (the SIGTRAP of its exec would kill it). */
			if (WIFSTOPPED(status)) {
				int stop = WSTOPSIG(status);

				ptrace(PTRACE_DETACH, pid, NULL, stop == SIGTRAP ? 0 : stop);
				continue;
			}
			if (pid == child)
				finish(status_to_code(status));
		}
	}
}

/* SPDX-License-Identifier: Apache-2.0 */
/* warren-init: pid 1 of every container sandbox, exec'd from a sealed memfd (static, so it
 * needs nothing from the image).
 *
 *   warren-init [--landlock] -- CMD [ARG...]
 *                         runs CMD, forwards signals to it, reaps every orphan, and when CMD
 *                         exits kills what is left and exits with its code (128 + N if signal
 *                         N killed it). --landlock gives CMD a Landlock domain of its own
 *                         beneath ours, as every exec gets one: the command and the execs
 *                         cannot signal, ptrace or reach the abstract sockets of each other.
 *   warren-init           idles as the sandbox's anchor for exec, reaping orphans; SIGTERM or
 *                         SIGINT kill everything left and exit 0.
 *
 * Either way it serves execs on the listening socket it finds as fd 3 (init-exec.c).
 *
 * pid 1 of a pid namespace gets no signal whose action is the default (the kernel drops it),
 * so every signal we care about is blocked and read from a signalfd: blocked signals are
 * queued, not dropped, and no handler runs at an awkward moment. The loop is one ppoll() over
 * the signalfd and the exec channel. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init.h"
#include "profile.h"

static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

static int status_to_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static void spawn_command(char **cmd, const sigset_t *old_mask, bool landlock)
{
	struct profile_landlock plan;

	/* The command gets the signal mask we started with, and its own process group so that
	 * a terminal's job control does not confuse it with us. */
	sigprocmask(SIG_SETMASK, old_mask, NULL);
	setpgid(0, 0);
	/* Where a profile refuses the Landlock calls the command stays in our domain, as it
	 * always did before execs became ours: still beneath the sandbox's root, still scoped. */
	if (landlock) {
		profile_landlock_plan(&plan);
		(void)profile_landlock_apply(&plan);
	}
	if (!getenv("PATH"))
		setenv("PATH", DEFAULT_PATH, 1);
	execvp(cmd[0], cmd);
	dprintf(STDERR_FILENO, "warren-init: exec %s: %s\n", cmd[0], strerror(errno));
	_exit(127);
}

static void reaped(pid_t pid, int status)
{
	(void)exec_channel_reaped(pid, status_to_code(status));
}

/* Kills every other process of the namespace (kill(-1) from its pid 1 reaches all of them and
 * spares the caller) and waits until none is left; execs still running are told they were
 * killed. */
static _Noreturn void finish(int code)
{
	int status;
	pid_t pid;

	exec_channel_close();
	kill(-1, SIGKILL);
	while ((pid = waitpid(-1, &status, 0)) > 0 || errno == EINTR)
		if (pid > 0)
			reaped(pid, status);
	exit(code);
}

/* SIGCHLD coalesces: reaps everything that has exited. */
static void reap_all(pid_t command)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid <= 0)
			return;
		/* A command that asked to be traced (PTRACE_TRACEME, when the profile allows it)
		 * made us its tracer: let it go on untraced, with the signal that stopped it (the
		 * SIGTRAP of its exec would kill it). */
		if (WIFSTOPPED(status)) {
			int stop = WSTOPSIG(status);

			ptrace(PTRACE_DETACH, pid, NULL, stop == SIGTRAP ? 0 : stop);
			continue;
		}
		if (pid == command)
			finish(status_to_code(status));
		reaped(pid, status);
	}
}

int main(int argc, char **argv)
{
	static struct pollfd pfds[1 + EXEC_CHANNEL_POLLFDS];
	sigset_t set, old_mask;
	char **cmd = NULL;
	bool landlock = false;
	pid_t child = 0;
	int sfd, a = 1;

	/* Exec'd from a memfd, we would show as "memfd:warren-init" in ps. */
	prctl(PR_SET_NAME, "warren-init", 0, 0, 0);
	/* Not dumpable: no process of the sandbox, though it has our uid and capabilities, may
	 * ptrace us or open what /proc/1 links to (fd/, exe, cwd, root, environ, mem), where the
	 * exec channel is. /proc/1 then belongs to root of the sandbox. Our children are not
	 * affected: exec makes every program dumpable again. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

	if (a < argc && strcmp(argv[a], "--landlock") == 0) {
		landlock = true;
		a++;
	}
	if (a < argc) {
		if (strcmp(argv[a], "--") != 0 || a + 1 >= argc) {
			dprintf(STDERR_FILENO,
				"usage: warren-init [--landlock] [-- CMD [ARG...]]\n");
			return 2;
		}
		cmd = argv + a + 1;
	}

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&set, forwarded[i]);
	if (sigprocmask(SIG_BLOCK, &set, &old_mask) < 0 ||
	    (sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		dprintf(STDERR_FILENO, "warren-init: signals: %s\n", strerror(errno));
		return 127;
	}
	exec_channel_open(3, &old_mask);

	if (cmd) {
		child = fork();
		if (child < 0) {
			dprintf(STDERR_FILENO, "warren-init: fork: %s\n", strerror(errno));
			return 127;
		}
		if (child == 0)
			spawn_command(cmd, &old_mask, landlock);
	}

	for (;;) {
		struct signalfd_siginfo si;
		unsigned n;

		pfds[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		n = exec_channel_pollfds(pfds + 1);
		if (ppoll(pfds, 1 + n, NULL, NULL) < 0)
			continue; /* EINTR */
		while (pfds[0].revents && read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGCHLD)
				reap_all(child);
			else if (child > 0)
				kill(child, (int)si.ssi_signo);
			else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
				finish(0);
		}
		exec_channel_dispatch(pfds + 1, n);
	}
}

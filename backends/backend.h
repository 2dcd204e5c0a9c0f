/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"

struct msghdr;
struct profile_seccomp;

/* One isolation tier. The core prepares everything that needs allocation (paths, argv, the
 * cgroups, the pipes, the compiled seccomp program) and the backend does only the clone and
 * what runs in the child, which must not allocate (STYLE.md 23). */

struct spawn_config {
	const char *id;          /* sandbox id; also its hostname */
	const char *rootfs;      /* host path where the image is mounted read-only */
	const char *scratch;     /* empty host directory; inside the sandbox's own mount namespace
				  * a tmpfs is mounted on it to hold the upper layer and new root */
	uint64_t disk_bytes;     /* size cap of that tmpfs (the sandbox's writable layer) */
	char *const *argv;       /* command; NULL: init just keeps the sandbox alive for exec */
	char *const *envp;
	const char *cwd;         /* inside the sandbox; NULL: "/" */
	const struct cg *cg;
	int cgroup_fd;           /* cgroup2 directory fd for CLONE_INTO_CGROUP */
	int stdio_fd;            /* write end of the log pipe, becomes stdout and stderr */
	uid_t uid_base;          /* host uid (and gid) that root inside the sandbox maps to */
	uint32_t uid_count;      /* size of the mapped range */
	/* The seccomp profile, loaded last before exec (profiles/profile.h); NULL: no filter. */
	const struct profile_seccomp *seccomp_profile;
	/* Landlock, where the kernel has it (profile_landlock_abi() > 0): on unless this is set.
	 * Only tests turn it off, to show what it blocks. */
	bool no_landlock;
	/* AppArmor profile the init switches to at exec (profile_apparmor_load()); NULL: none. */
	const char *apparmor_profile;
	int init_fd;             /* sealed memfd holding the static warren-init */
	/* The network namespace the sandbox joins (an fd of the caller's, e.g. from a pool); the
	 * sandbox's user namespace does not own it, so root inside cannot reconfigure it. 0 (the
	 * zero default) or less: the child makes a new one (loopback up). Ignored with
	 * host_network. */
	int netns_fd;
	/* The sandbox's user namespace, its maps written (container_userns_new()); 0 (the zero
	 * default) or less: start makes one. */
	int userns_fd;
	/* Share the host's network namespace instead of a new one (network mode "host"). */
	bool host_network;
	/* Written to the sandbox's /etc/resolv.conf (its upper layer) before the command runs;
	 * NULL: the image's file stays. */
	const char *resolv_conf;
	/* A spawn zygote's socket (container_zygote_start()): it clones the init instead of the
	 * caller. 0 (the zero default) or less: the caller clones. If the zygote is gone, start()
	 * fails with -EPIPE, and the caller may start another and try again. */
	int zygote_fd;
	/* The listening end of the sandbox's exec channel (backend_ops.exec_listen()): its init
	 * serves execs on it. The child keeps its own copy; the caller closes its one once start
	 * returns. 0 (the zero default) or less: the sandbox takes no exec. */
	int exec_fd;
};

/* Why a start or an exec failed, for the caller's answer: the user's command or working
 * directory, or something on the node. */
enum exec_failure {
	EXEC_FAILURE_COMMAND, /* no such command, not executable */
	EXEC_FAILURE_CWD,     /* the working directory does not exist or is not one */
	EXEC_FAILURE_NODE,
};

/* An exec runs in a running sandbox through its init, which is already as confined as any
 * process of the sandbox (namespaces, cgroups, capabilities, seccomp, AppArmor): the init
 * forks, the child takes a Landlock domain of its own and execs the command. */
struct exec_config {
	const char *socket_path; /* where the sandbox's exec channel listens (exec_listen()) */
	char *const *argv;
	char *const *envp;       /* NULL: empty */
	const char *cwd;         /* NULL: "/" */
	int stdin_fd, stdout_fd, stderr_fd; /* the caller's; the init gets copies */
	/* As the sandbox's spawn_config.no_landlock: only tests set it. */
	bool no_landlock;
};

/* What a sandbox's init says about one exec, decoded by exec_event() from bytes the sandbox
 * may control: every value is checked, so a lying init can only misreport its own exec. */
enum exec_event_type {
	EXEC_EVENT_PID,     /* the command's process, as the kernel names its sender */
	EXEC_EVENT_STARTED, /* it exec'd */
	EXEC_EVENT_FAILED,  /* it could not: err, failure */
	EXEC_EVENT_EXITED,  /* exit_code */
	_EXEC_EVENT_MAX,
};

struct exec_event {
	enum exec_event_type type;
	pid_t pid;                 /* PID: in the caller's pid namespace, > 0 */
	int err;                   /* FAILED: a negative errno */
	enum exec_failure failure; /* FAILED */
	int exit_code;             /* EXITED: 0..255 (128 + N: signal N) */
};

/* The receive buffers for one message of the exec channel: data and control (ancillary). */
#define EXEC_EVENT_DATA_MAX 64
#define EXEC_EVENT_CONTROL_MAX 64

struct spawn_result {
	int pidfd;               /* owned by the caller; CLOEXEC */
	pid_t pid;
	int ready_fd;            /* start only: owned by the caller; see start_result() */
};

/* The exit status of a sandbox or an exec: the command's exit code, or 128 + signal number if
 * a signal killed it. */

struct backend_ops {
	const char *name;        /* tier name in the API: "container" */
	/* 0 if this node can run the tier, else -errno and a static reason in *ret_why. */
	int (*probe)(const char **ret_why);
	/* Starts the sandbox's init: clones it and does what only the host can (id maps, v1
	 * cgroups, before_start), then returns while the child builds its root and execs, so
	 * that the loop does not wait for it. On failure nothing is left behind. Loop thread. */
	int (*start)(const struct spawn_config *c, struct spawn_result *ret);
	/* The end of a start: the caller reads ret->ready_fd to EOF (at most a few bytes; EOF
	 * with nothing means the init runs) and passes what it read; -errno if the child failed,
	 * in which case it exits by itself and the caller reaps it through its pidfd. */
	int (*start_result)(const char *id, const void *report, size_t len,
			    enum exec_failure *ret_failure);
	/* The listening socket of a sandbox's exec channel, bound at path (in a directory that
	 * only the daemon can reach), for spawn_config.exec_fd; CLOEXEC. The caller unlinks path
	 * when the sandbox is removed. Loop thread. -errno. */
	int (*exec_listen)(const char *path);
	/* Starts a command inside a running sandbox (its namespaces, cgroups and profiles):
	 * connects to its exec channel and sends the request, without blocking. Returns the
	 * connected socket (CLOEXEC, non-blocking; the caller owns it), on which the init answers
	 * with one message per event, each to be received whole with its ancillary data and
	 * decoded by exec_event(): PID, then STARTED or FAILED, then EXITED; EOF at the end. While
	 * the command runs, shutting the socket down for writing (or closing it) kills it.
	 * -errno: -EAGAIN if the init has too many execs pending, -ECONNREFUSED or -ENOENT if it
	 * is gone. Loop thread. */
	int (*exec)(const struct exec_config *c);
	/* Decodes one received message (mh as recvmsg() filled it in, data and length): 0, or
	 * -EPROTO for anything an honest init does not send. Closes any descriptor the message
	 * carried. Any thread. */
	int (*exec_event)(const struct msghdr *mh, const void *data, size_t len,
			  struct exec_event *ret);
};

extern const struct backend_ops container_backend;

/* A sealed, close-on-exec memfd holding a copy of the static warren-init at path, for
 * spawn_config.init_fd (the fix for runc's CVE-2019-5736: a sandbox that reaches its init's
 * binary cannot change it). Main thread, at start-up; the caller owns the fd. -errno. */
int container_init_memfd(const char *path);

/* A user namespace mapping 0..count-1 inside to base.. on the host, for spawn_config.userns_fd
 * (and its network namespace, for netns_fd: loopback up). Each takes a few hundred
 * microseconds, so a daemon makes them ahead in a pool. Any thread; the caller owns the fd. */
int container_userns_new(uid_t base, uint32_t count);
int container_netns_new(void);

/* A spawn zygote: the static program at path (warren-zygote), started as the caller's child,
 * that clones sandbox inits on request through the returned socket (spawn_config.zygote_fd)
 * as children of the caller (CLONE_PARENT). It lives in a mount namespace of its own that
 * shows only dirs (absolute; at most 8, NULL-terminated: where the spawn configs' rootfs and
 * scratch paths are) and /proc. Cloning from it instead of from the grown daemon
 * spares each spawn the copy of the daemon's page tables and their teardown at exec. It exits
 * when the socket closes, or with the caller. It forks: in a threaded caller the child does
 * only async-signal-safe work until its exec. -errno (-ENOENT: no program at path). */
int container_zygote_start(const char *path, const char *const *dirs, pid_t *ret_pid);

/* NULL if no tier has that name. */
const struct backend_ops *backend_find(const char *tier);

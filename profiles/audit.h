/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* The kernel's records of what the security layers refused, read without blocking.
 *
 * Source: the audit netlink socket's read-only multicast group (AUDIT_NLGRP_READLOG, Linux
 * 3.16; needs CAP_AUDIT_READ), which receives every record whether or not auditd runs, and
 * reports its own overflow (ENOBUFS). /dev/kmsg is the fallback: it only gets the copies the
 * kernel prints when no auditd is registered, and those pass printk_ratelimit (10 per 5 s for
 * the whole node, shared with every other kernel message), so most records of a busy node
 * never reach it.
 *
 * Which records:
 *   1326 SECCOMP           a filter loaded with SECCOMP_FILTER_FLAG_LOG refused a call (pid,
 *                          comm, exe, arch, syscall, the action); one record per refusal.
 *   1423 LANDLOCK_ACCESS   Landlock refused something (blockers, path or target); its pid is
 *                          in the event's 1300 SYSCALL record, which follows with the same
 *                          serial, and the event ends with 1320 EOE.
 *   1424 LANDLOCK_DOMAIN   "allocated" (with the first denial: the pid that created the
 *                          domain, i.e. the sandbox's init or exec process) or "deallocated".
 *   1400 AVC               apparmor="DENIED" (on nodes with AppArmor).
 * Landlock writes records only while the kernel's audit is enabled (audit_kernel_set()); seccomp
 * writes them either way.
 *
 * The parser is pure (no I/O); the reader assembles a Landlock event's records into one denial
 * before handing it over. Pids are the host's: the caller maps them to sandboxes. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum audit_layer {
	AUDIT_LAYER_SECCOMP,
	AUDIT_LAYER_LANDLOCK,
	AUDIT_LAYER_APPARMOR,
	_AUDIT_LAYER_MAX,
};

const char *audit_layer_to_string(enum audit_layer l);

/* What one record is. */
enum audit_kind {
	AUDIT_KIND_OTHER,   /* not about a refusal (or not one we read) */
	AUDIT_KIND_DENIAL,  /* seccomp, Landlock access or AppArmor DENIED */
	AUDIT_KIND_DOMAIN,  /* Landlock domain allocated/deallocated */
	AUDIT_KIND_SYSCALL, /* the 1300 record of an event: pid, syscall */
	AUDIT_KIND_END,     /* 1320: the event's last record */
	_AUDIT_KIND_MAX,
};

/* Record types (linux/audit.h; Debian 12's headers predate the Landlock ones). */
#define AUDIT_TYPE_SYSCALL 1300
#define AUDIT_TYPE_EOE 1320
#define AUDIT_TYPE_SECCOMP 1326
#define AUDIT_TYPE_AVC 1400
#define AUDIT_TYPE_LANDLOCK_ACCESS 1423
#define AUDIT_TYPE_LANDLOCK_DOMAIN 1424

struct audit_denial {
	enum audit_layer layer;
	int type;               /* the record type that made this a denial */
	uint64_t serial;        /* the kernel's event serial; 0 if the record had none */
	uint64_t time_ms;       /* the kernel's wall-clock stamp, in ms since the epoch */
	pid_t pid;              /* host pid of the refused process; 0 if not known */
	uint32_t arch;          /* AUDIT_ARCH_* (0xc000003e: x86-64); 0 if not known */
	int syscall;            /* number in that arch's table; -1 if not known */
	char syscall_name[32];  /* "" if not known */
	char action[16];        /* seccomp: errno, kill_process, trap, ...; others: "denied" */
	char comm[32];
	char exe[256];
	/* Landlock */
	uint64_t domain;        /* domain id (hex in the records) */
	char blockers[128];     /* "fs.read_file", "fs.execute,fs.read_file", "scope.signal" */
	char path[256];         /* the object: a path, "@name" for an abstract socket */
	pid_t target_pid;       /* scope.signal, ptrace: the process it aimed at (opid) */
	char target_comm[32];
	pid_t domain_pid;       /* 1424 allocated: the process that created the domain */
	bool domain_freed;      /* 1424 deallocated */
	/* AppArmor */
	char operation[32];     /* operation= */
	char profile[96];       /* profile= */
	char mask[32];          /* denied_mask= */
};

/* Parses one record. type is its netlink message type; 0 to read it from a "type=N " or
 * "type=NAME msg=" prefix (the /dev/kmsg and audit.log forms). rec need not be NUL-terminated.
 * Returns the record's kind (ret filled as far as the record says), or -EINVAL for text that is
 * not an audit record. Any thread; untrusted input is fine. */
int audit_parse(int type, const char *rec, size_t len, struct audit_denial *ret);

/* ---- the reader ------------------------------------------------------------------------- */

enum audit_source {
	AUDIT_SOURCE_NETLINK, /* the multicast group */
	AUDIT_SOURCE_KMSG,    /* /dev/kmsg, from its end */
	_AUDIT_SOURCE_MAX,
};

struct audit_reader;
typedef void (*audit_denial_fn)(const struct audit_denial *d, void *userdata);

struct audit_reader_stats {
	uint64_t records;    /* records seen */
	uint64_t denials;    /* denials handed over */
	uint64_t overflows;  /* ENOBUFS (netlink) or EPIPE (kmsg): records the kernel dropped */
	uint64_t malformed;  /* records that did not parse */
};

/* Opens the source: a non-blocking, close-on-exec fd for an io_uring RECV/READ or POLL_ADD.
 * -EPERM without CAP_AUDIT_READ (netlink) or CAP_SYSLOG (kmsg). The caller owns *ret. */
int audit_reader_open(enum audit_source source, struct audit_reader **ret);
/* A reader around fd (owned from now on; -EBADF for one that is only fed, as in tests). */
int audit_reader_new(enum audit_source source, int fd, struct audit_reader **ret);
struct audit_reader *audit_reader_free(struct audit_reader *r);
int audit_reader_fd(const struct audit_reader *r);
enum audit_source audit_reader_source(const struct audit_reader *r);

/* Hands over what one recv (netlink: any number of messages) or one read (kmsg: one record)
 * returned. Landlock denials wait for their event's last record; the rest go at once. */
void audit_reader_feed(struct audit_reader *r, const void *buf, size_t len, audit_denial_fn fn,
		       void *userdata);
/* Reads until the fd would block, feeding each buffer (for a POLL_ADD-driven loop). Returns the
 * number of reads, or -errno other than EAGAIN/ENOBUFS/EPIPE. */
int audit_reader_read(struct audit_reader *r, audit_denial_fn fn, void *userdata);
/* The caller's read got ENOBUFS/EPIPE: records were lost; counted. */
void audit_reader_overflowed(struct audit_reader *r);
/* Hands over Landlock denials still waiting after min_age_ms (their event's other records never
 * came, as when a task has no audit context). Returns how many wait still. */
unsigned audit_reader_flush(struct audit_reader *r, unsigned min_age_ms, audit_denial_fn fn,
			    void *userdata);
void audit_reader_stats(const struct audit_reader *r, struct audit_reader_stats *ret);

/* ---- the kernel's audit settings (node-wide; need CAP_AUDIT_CONTROL) -------------------- */

struct audit_kernel_status {
	uint32_t enabled;           /* 0 off, 1 on, 2 locked */
	uint32_t pid;               /* auditd's pid, 0 if none */
	uint32_t rate_limit;        /* records per second, 0: unlimited */
	uint32_t backlog_limit;     /* records queued for kauditd */
	uint32_t lost;              /* dropped by the rate limit or the backlog */
	uint32_t backlog;
	uint32_t backlog_wait_time; /* jiffies a task waits when the backlog is full */
};

int audit_kernel_get(struct audit_kernel_status *ret);
/* which: AUDIT_STATUS_ENABLED, AUDIT_STATUS_RATE_LIMIT, AUDIT_STATUS_BACKLOG_LIMIT or
 * AUDIT_STATUS_BACKLOG_WAIT_TIME (linux/audit.h). */
int audit_kernel_set(uint32_t which, uint32_t value);

/* SPDX-License-Identifier: Apache-2.0 */
/* The audit record parser and the reader's event assembly, on records captured on this node
 * (tests/profiles/data), plus malformed and mutated records that must be refused, not crash. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"

#define MAX_LINES 128

struct lines {
	char *v[MAX_LINES];
	size_t n;
};

static void load(const char *name, struct lines *ret)
{
	const char *src = getenv("WARREN_SOURCE_DIR");
	char path[1024], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	cr_assert(src, "WARREN_SOURCE_DIR is not set: run with meson test");
	snprintf(path, sizeof(path), "%s/tests/profiles/data/%s", src, name);
	f = fopen(path, "re");
	cr_assert(f, "%s", path);
	ret->n = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[0] == '#')
			continue;
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		cr_assert_lt(ret->n, MAX_LINES);
		ret->v[ret->n++] = strdup(line);
	}
	free(line);
	fclose(f);
}

static void unload(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	l->n = 0;
}

/* The captured line of that type and serial, parsed. */
static int parse_serial(const struct lines *l, int type, const char *serial,
			struct audit_denial *d)
{
	char want[64];

	snprintf(want, sizeof(want), "type=%d ", type);
	for (size_t i = 0; i < l->n; i++)
		if (strncmp(l->v[i], want, strlen(want)) == 0 && strstr(l->v[i], serial))
			return audit_parse(0, l->v[i], strlen(l->v[i]), d);
	cr_assert_fail("no type %d record with %s", type, serial);
	return -1;
}

Test(audit_parse, every_captured_record_parses)
{
	struct lines l;
	struct audit_denial d;

	load("records-netlink.txt", &l);
	cr_assert_gt(l.n, 30);
	for (size_t i = 0; i < l.n; i++)
		cr_expect_geq(audit_parse(0, l.v[i], strlen(l.v[i]), &d), 0, "%s", l.v[i]);
	unload(&l);
}

Test(audit_parse, seccomp_record)
{
	struct lines l;
	struct audit_denial d;

	load("records-netlink.txt", &l);
	cr_assert_eq(parse_serial(&l, 1326, ":200160)", &d), AUDIT_KIND_DENIAL);
	cr_expect_eq(d.layer, AUDIT_LAYER_SECCOMP);
	cr_expect_eq(d.pid, 14193);
	cr_expect_eq(d.arch, AUDIT_ARCH_X86_64);
	cr_expect_eq(d.syscall, 250);
	cr_expect_str_eq(d.syscall_name, "keyctl");
	cr_expect_str_eq(d.action, "errno");
	cr_expect_str_eq(d.comm, "warren-probe");
	cr_expect_str_eq(d.exe, "/usr/bin/warren-probe");
	cr_expect_eq(d.serial, 200160);
	cr_expect_eq(d.time_ms, 1795945392517ULL);
	/* the i386 table (int 0x80), with its own numbers */
	cr_assert_eq(parse_serial(&l, 1326, ":200148)", &d), AUDIT_KIND_DENIAL);
	cr_expect_eq(d.arch, AUDIT_ARCH_I386);
	cr_expect_eq(d.syscall, 288);
	cr_expect_str_eq(d.syscall_name, "keyctl");
	unload(&l);
}

Test(audit_parse, landlock_records)
{
	struct lines l;
	struct audit_denial d;

	load("records-netlink.txt", &l);
	cr_assert_eq(parse_serial(&l, 1423, ":200151)", &d), AUDIT_KIND_DENIAL);
	cr_expect_eq(d.layer, AUDIT_LAYER_LANDLOCK);
	cr_expect_str_eq(d.blockers, "fs.read_file");
	cr_expect_str_eq(d.path, "/tmp/warren-ctr-6S8718/host/secret");
	cr_expect_eq(d.domain, 0x14085426cULL);
	cr_expect_eq(d.pid, 0, "an access record carries no pid: the SYSCALL record has it");

	cr_assert_eq(parse_serial(&l, 1423, ":200138)", &d), AUDIT_KIND_DENIAL);
	cr_expect_str_eq(d.blockers, "scope.abstract_unix_socket");
	cr_expect_str_eq(d.path, "@warren-test", "the hex-encoded abstract name");

	cr_assert_eq(parse_serial(&l, 1423, ":200154)", &d), AUDIT_KIND_DENIAL);
	cr_expect_str_eq(d.blockers, "scope.signal");
	cr_expect_eq(d.target_pid, 13861);
	cr_expect_str_eq(d.target_comm, "warren-init");

	cr_assert_eq(parse_serial(&l, 1424, ":200151)", &d), AUDIT_KIND_DOMAIN);
	cr_expect_eq(d.domain_pid, 13886);
	cr_expect(!d.domain_freed);
	cr_assert_eq(parse_serial(&l, 1424, ":200157)", &d), AUDIT_KIND_DOMAIN);
	cr_expect(d.domain_freed);

	cr_assert_eq(parse_serial(&l, 1300, ":200151)", &d), AUDIT_KIND_SYSCALL);
	cr_expect_eq(d.pid, 13886);
	cr_expect_str_eq(d.syscall_name, "openat");
	cr_assert_eq(parse_serial(&l, 1320, ":200151)", &d), AUDIT_KIND_END);
	cr_assert_eq(parse_serial(&l, 1327, ":200151)", &d), AUDIT_KIND_OTHER);
	unload(&l);
}

Test(audit_parse, kmsg_and_auditd_forms)
{
	struct lines l;
	struct audit_denial d;
	const char *line;
	static const char logfile[] =
		"type=SECCOMP msg=audit(1795945352.693:200076): auid=4294967295 uid=100000 "
		"gid=100000 ses=4294967295 pid=4871 comm=\"warren-probe\" exe=\"/usr/bin/warren-probe\" "
		"sig=0 arch=c000003e syscall=323 compat=0 ip=0x448659 code=0x50000";

	load("records-kmsg.txt", &l);
	cr_assert_eq(l.n, 2);
	line = strchr(l.v[0], ';') + 1;
	cr_assert_eq(audit_parse(0, line, strlen(line), &d), AUDIT_KIND_DENIAL);
	cr_expect_eq(d.pid, 4871);
	cr_expect_str_eq(d.syscall_name, "userfaultfd");
	line = strchr(l.v[1], ';') + 1;
	cr_assert_eq(audit_parse(0, line, strlen(line), &d), AUDIT_KIND_DENIAL);
	cr_expect_str_eq(d.syscall_name, "personality");
	/* auditd's log file names the type */
	cr_assert_eq(audit_parse(0, logfile, strlen(logfile), &d), AUDIT_KIND_DENIAL);
	cr_expect_eq(d.pid, 4871);
	unload(&l);
}

Test(audit_parse, apparmor_synthetic)
{
	struct lines l;
	struct audit_denial d;

	load("records-apparmor-synthetic.txt", &l);
	cr_assert_eq(l.n, 3);
	cr_assert_eq(audit_parse(0, l.v[0], strlen(l.v[0]), &d), AUDIT_KIND_DENIAL);
	cr_expect_eq(d.layer, AUDIT_LAYER_APPARMOR);
	cr_expect_eq(d.pid, 4242);
	cr_expect_str_eq(d.operation, "open");
	cr_expect_str_eq(d.profile, "warren-0123abcd");
	cr_expect_str_eq(d.path, "/proc/kcore");
	cr_expect_str_eq(d.mask, "r");
	cr_assert_eq(audit_parse(0, l.v[1], strlen(l.v[1]), &d), AUDIT_KIND_DENIAL);
	cr_expect_str_eq(d.operation, "signal");
	cr_assert_eq(audit_parse(0, l.v[2], strlen(l.v[2]), &d), AUDIT_KIND_OTHER,
		     "ALLOWED is not a denial");
	unload(&l);
}

Test(audit_parse, strings_are_decoded_and_sanitised)
{
	struct audit_denial d;
	/* comm "a b" and exe "/tmp/x\ny" in the kernel's hex form */
	static const char rec[] = "audit(1.000:7): pid=5 comm=612062 exe=2F746D702F780A79 sig=0 "
				  "arch=c000003e syscall=101 compat=0 ip=0x1 code=0x50000";

	cr_assert_eq(audit_parse(AUDIT_TYPE_SECCOMP, rec, sizeof(rec) - 1, &d), AUDIT_KIND_DENIAL);
	cr_expect_str_eq(d.comm, "a b");
	cr_expect_str_eq(d.exe, "/tmp/x?y");
	cr_expect_str_eq(d.syscall_name, "ptrace");
}

Test(audit_parse, malformed_records_are_refused)
{
	static const char *const bad[] = {
		"",
		"type=",
		"type=1326",
		"type=1326 hello",
		"type=1326 audit(",
		"type=1326 audit(1.2:3",
		"type=1326 audit(1.2:3)",
		"type=1326 audit(x.2:3): pid=1",
		"type=1326 audit(1.2000:3): pid=1 syscall=1 code=0x50000",
		"type=1326 audit(99999999999999999999.1:3): pid=1",
		"type=1326 audit(1.2:3): pid=1 syscall=1",            /* no code */
		"type=1326 audit(1.2:3): pid=-1 syscall=1 code=0x50000",
		"type=1326 audit(1.2:3): pid=1 syscall=zz code=0x50000",
		"type=1326 audit(1.2:3): pid=1 syscall=1 code=0x500000000",
		"type=1326 audit(1.2:3): pid=99999999999 syscall=1 code=0",
		"type=1423 audit(1.2:3): domain=1",                   /* no blockers */
		"type=1423 audit(1.2:3): domain=xyz blockers=fs.x",
		"audit(1.2:3): pid=1",                                /* no type at all */
	};
	struct audit_denial d;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(audit_parse(0, bad[i], strlen(bad[i]), &d), -EINVAL, "%s", bad[i]);
}

/* Mutations of real records: every one gets an answer, and whatever is filled in stays
 * NUL-terminated (ASan builds catch the rest). */
Test(audit_parse, mutated_records_never_crash)
{
	struct lines l;
	unsigned seed = 1;
	char buf[1024];

	load("records-netlink.txt", &l);
	for (int iter = 0; iter < 30000; iter++) {
		const char *src = l.v[rand_r(&seed) % l.n];
		size_t len = strlen(src);
		struct audit_denial d;
		int flips = 1 + rand_r(&seed) % 4;

		if (len > sizeof(buf))
			len = sizeof(buf);
		memcpy(buf, src, len);
		for (int k = 0; k < flips; k++) {
			size_t at = rand_r(&seed) % len;

			switch (rand_r(&seed) % 4) {
			case 0: buf[at] = (char)rand_r(&seed); break;
			case 1: buf[at] = "= \"():.0x"[rand_r(&seed) % 9]; break;
			case 2: len = at + 1; break;
			case 3: memmove(buf + at, buf + at + 1, len - at - 1), len--; break;
			}
			if (len == 0)
				break;
		}
		if (audit_parse(0, buf, len, &d) >= 0) {
			cr_assert_lt(strlen(d.comm), sizeof(d.comm));
			cr_assert_lt(strlen(d.exe), sizeof(d.exe));
			cr_assert_lt(strlen(d.path), sizeof(d.path));
			cr_assert_lt(strlen(d.blockers), sizeof(d.blockers));
		}
	}
	unload(&l);
}

/* ---- the reader's assembly ---- */

#define MAX_GOT 64
static struct audit_denial got[MAX_GOT];
static unsigned n_got;

static void collect(const struct audit_denial *d, void *userdata)
{
	cr_assert_lt(n_got, MAX_GOT);
	got[n_got++] = *d;
}

/* The captured lines as the netlink socket delivers them: nlmsghdr + payload, packed. */
static size_t frame(char *buf, size_t size, char *const *lines, const size_t *order, size_t n)
{
	size_t off = 0;

	for (size_t i = 0; i < n; i++) {
		const char *line = lines[order ? order[i] : i];
		int type = atoi(line + 5);
		const char *payload = strchr(line, ' ') + 1;
		size_t plen = strlen(payload);
		struct nlmsghdr *h = (struct nlmsghdr *)(buf + off);

		cr_assert_leq(off + NLMSG_SPACE(plen), size);
		memset(h, 0, NLMSG_SPACE(plen));
		h->nlmsg_len = NLMSG_LENGTH(plen);
		h->nlmsg_type = (unsigned short)type;
		memcpy(NLMSG_DATA(h), payload, plen);
		off += NLMSG_SPACE(plen);
	}
	return off;
}

static const struct audit_denial *got_serial(uint64_t serial)
{
	for (unsigned i = 0; i < n_got; i++)
		if (got[i].serial == serial)
			return &got[i];
	return NULL;
}

Test(audit_reader, landlock_events_are_assembled_with_their_pid)
{
	static char buf[64 * 1024];
	struct audit_reader *r;
	struct audit_reader_stats st;
	const struct audit_denial *d;
	struct lines l;
	size_t len, denials = 0;

	cr_assert_eq(audit_reader_new(AUDIT_SOURCE_NETLINK, -EBADF, &r), 0);
	load("records-netlink.txt", &l);
	for (size_t i = 0; i < l.n; i++)
		denials += strncmp(l.v[i], "type=1423", 9) == 0 || strncmp(l.v[i], "type=1326", 9) == 0;
	len = frame(buf, sizeof(buf), l.v, NULL, l.n);
	n_got = 0;
	audit_reader_feed(r, buf, len, collect, NULL);
	cr_expect_eq(audit_reader_flush(r, 0, collect, NULL), 0);
	cr_assert_eq(n_got, denials);

	d = got_serial(200137); /* the fchdir child: a pid no one spawned directly */
	cr_assert(d);
	cr_expect_eq(d->pid, 13110);
	cr_expect_str_eq(d->syscall_name, "openat");
	cr_expect_str_eq(d->comm, "warren-probe");
	cr_expect_eq(d->domain, 0x1408541feULL);
	d = got_serial(200136); /* the domain's first denial names who made the domain */
	cr_expect_eq(d->domain_pid, 13108);
	cr_expect_eq(d->pid, 13108);
	d = got_serial(200145);
	cr_expect_str_eq(d->blockers, "scope.signal");
	cr_expect_eq(d->pid, 13300);
	d = got_serial(200160);
	cr_expect_eq(d->layer, AUDIT_LAYER_SECCOMP);
	audit_reader_stats(r, &st);
	cr_expect_eq(st.records, l.n);
	cr_expect_eq(st.denials, denials);
	cr_expect_eq(st.malformed, 0);
	unload(&l);
	audit_reader_free(r);
}

/* Two events' records interleaved (two CPUs), and an event whose SYSCALL record never comes
 * (a task without an audit context): the first is still assembled right, the second handed
 * over by flush. */
Test(audit_reader, interleaved_and_incomplete_events)
{
	static char buf[16 * 1024];
	struct audit_reader *r;
	struct lines l;
	size_t idx[8], n = 0, len;
	const struct audit_denial *d;

	cr_assert_eq(audit_reader_new(AUDIT_SOURCE_NETLINK, -EBADF, &r), 0);
	load("records-netlink.txt", &l);
	/* 200144 and 200145: 1423, 1424, 1300, (1327,) 1320 each, interleaved */
	size_t a[4], b[4], na = 0, nb = 0;

	for (size_t i = 0; i < l.n; i++) {
		if (strstr(l.v[i], "type=1327"))
			continue;
		if (strstr(l.v[i], ":200144)") && na < 4)
			a[na++] = i;
		if (strstr(l.v[i], ":200145)") && nb < 4)
			b[nb++] = i;
	}
	cr_assert(na == 4 && nb == 4);
	for (size_t k = 0; k < 4; k++)
		idx[n++] = a[k], idx[n++] = b[k];
	cr_assert_eq(n, 8);
	len = frame(buf, sizeof(buf), l.v, idx, n);
	n_got = 0;
	audit_reader_feed(r, buf, len, collect, NULL);
	cr_assert_eq(n_got, 2);
	cr_expect_eq(got_serial(200144)->pid, 13292);
	cr_expect_eq(got_serial(200145)->pid, 13300);
	cr_expect_eq(got_serial(200145)->target_pid, 13275);

	n = 0;
	for (size_t i = 0; i < l.n; i++)
		if (strstr(l.v[i], ":200138)") && strstr(l.v[i], "type=1423"))
			idx[n++] = i;
	len = frame(buf, sizeof(buf), l.v, idx, n);
	n_got = 0;
	audit_reader_feed(r, buf, len, collect, NULL);
	cr_expect_eq(n_got, 0, "waits for the rest of the event");
	cr_expect_eq(audit_reader_flush(r, 60000, collect, NULL), 1);
	cr_expect_eq(audit_reader_flush(r, 0, collect, NULL), 0);
	cr_assert_eq(n_got, 1);
	d = &got[0];
	cr_expect_str_eq(d->path, "@warren-test");
	cr_expect_eq(d->pid, 0, "unknown without its SYSCALL record");
	unload(&l);
	audit_reader_free(r);
}

Test(audit_reader, kmsg_lines)
{
	struct audit_reader *r;
	struct lines l;
	cr_assert_eq(audit_reader_new(AUDIT_SOURCE_KMSG, -EBADF, &r), 0);
	load("records-kmsg.txt", &l);
	n_got = 0;
	for (size_t i = 0; i < l.n; i++)
		audit_reader_feed(r, l.v[i], strlen(l.v[i]), collect, NULL);
	/* not an audit line at all */
	audit_reader_feed(r, "6,1,2,-;eth0: link up\n", 22, collect, NULL);
	cr_assert_eq(n_got, 2);
	cr_expect_eq(got[0].pid, 4871);
	unload(&l);
	audit_reader_free(r);
}

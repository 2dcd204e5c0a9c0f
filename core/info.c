/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "config.h"
#include "backend.h"
#include "cgroup.h"
#include "daemon.h"
#include "image.h"
#include "info.h"
#include "macro.h"
#include "profile.h"

static const char *const uring_op_names[] = {
	"NOP", "READV", "WRITEV", "FSYNC", "READ_FIXED", "WRITE_FIXED", "POLL_ADD", "POLL_REMOVE",
	"SYNC_FILE_RANGE", "SENDMSG", "RECVMSG", "TIMEOUT", "TIMEOUT_REMOVE", "ACCEPT",
	"ASYNC_CANCEL", "LINK_TIMEOUT", "CONNECT", "FALLOCATE", "OPENAT", "CLOSE", "FILES_UPDATE",
	"STATX", "READ", "WRITE", "FADVISE", "MADVISE", "SEND", "RECV", "OPENAT2", "EPOLL_CTL",
	"SPLICE", "PROVIDE_BUFFERS", "REMOVE_BUFFERS", "TEE", "SHUTDOWN", "RENAMEAT", "UNLINKAT",
	"MKDIRAT", "SYMLINKAT", "LINKAT", "MSG_RING", "FSETXATTR", "SETXATTR", "FGETXATTR",
	"GETXATTR", "SOCKET", "URING_CMD", "SEND_ZC", "SENDMSG_ZC", "READ_MULTISHOT", "WAITID",
	"FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_WAITV", "FIXED_FD_INSTALL", "FTRUNCATE", "BIND", "LISTEN",
	"RECV_ZC", "EPOLL_WAIT", "READV_FIXED", "WRITEV_FIXED", "PIPE",
};

/* The ops warren's loops submit; a node without one of them cannot run warrend. */
static const int uring_needed[] = { IORING_OP_ACCEPT, IORING_OP_RECV, IORING_OP_SEND,
				    IORING_OP_READ, IORING_OP_WRITE, IORING_OP_TIMEOUT,
				    IORING_OP_LINK_TIMEOUT, IORING_OP_ASYNC_CANCEL,
				    IORING_OP_MSG_RING, WARREN_IORING_OP_WAITID };

static json_t *probe_uring(void)
{
	struct io_uring_probe *p = io_uring_get_probe();
	json_t *missing = json_array(), *needed_missing = json_array();
	int n = 0;

	if (!p)
		return json_pack("{s:b}", "available", 0);
	for (size_t op = 0; op < ELEMENTSOF(uring_op_names); op++) {
		if (io_uring_opcode_supported(p, op))
			n++;
		else
			json_array_append_new(missing, json_string(uring_op_names[op]));
	}
	for (size_t i = 0; i < ELEMENTSOF(uring_needed); i++)
		if (!io_uring_opcode_supported(p, uring_needed[i]))
			json_array_append_new(needed_missing,
					      json_string(uring_op_names[uring_needed[i]]));
	json_t *o = json_pack("{s:b,s:i,s:i,s:o,s:o,s:b}", "available", 1, "ops_supported", n,
			      "last_op", p->last_op, "missing", missing, "warren_needs_missing",
			      needed_missing, "waitid",
			      io_uring_opcode_supported(p, WARREN_IORING_OP_WAITID));
	io_uring_free_probe(p);
	return o;
}

static bool read_line(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

static bool list_has(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && *p;) {
		if (strncmp(p, word, n) == 0 && (p[n] == ',' || !p[n]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

static json_t *probe_lsm(void)
{
	char lsms[512] = "", aa[16] = "";
	long abi;
	bool apparmor;

	/* Without securityfs mounted the list is unknown; say so rather than "none". */
	bool known = read_line("/sys/kernel/security/lsm", lsms, sizeof(lsms));

	if (!known)
		snprintf(lsms, sizeof(lsms), "unknown (securityfs is not mounted)");
	/* AppArmor counts only when it is enabled, and listed where the list is known. */
	apparmor = (!known || list_has(lsms, "apparmor")) &&
		   read_line("/sys/module/apparmor/parameters/enabled", aa, sizeof(aa)) &&
		   aa[0] == 'Y';
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return json_pack("{s:s,s:b,s:o,s:b,s:b}", "active", lsms, "apparmor", apparmor, "landlock",
			 abi > 0 ? json_integer(abi) : json_false(), "selinux",
			 list_has(lsms, "selinux"), "bpf_lsm", list_has(lsms, "bpf"));
}

static json_t *probe_kvm(void)
{
	_cleanup_close_ int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	char flags[4096];
	FILE *f;
	bool hw = false;

	if (fd < 0)
		return json_pack("{s:b,s:b,s:s}", "present", 0, "usable", 0, "reason",
				 "no /dev/kvm: microVMs would run under TCG emulation only");
	/* KVM without vmx/svm is a paravirtual flavour (PVM here) that QEMU cannot drive. */
	f = fopen("/proc/cpuinfo", "re");
	while (f && fgets(flags, sizeof(flags), f))
		if (strncmp(flags, "flags", 5) == 0) {
			hw = strstr(flags, " vmx") || strstr(flags, " svm");
			break;
		}
	if (f)
		fclose(f);
	if (!hw)
		return json_pack("{s:b,s:b,s:i,s:s}", "present", 1, "usable", 0, "api_version",
				 ioctl(fd, KVM_GET_API_VERSION, 0), "reason",
				 "/dev/kvm exists but the CPU shows no vmx/svm: no hardware "
				 "virtualization; QEMU would have to use TCG");
	return json_pack("{s:b,s:b,s:i}", "present", 1, "usable", 1, "api_version",
			 ioctl(fd, KVM_GET_API_VERSION, 0));
}

/* Tiers the API names that this version cannot run yet. */
static const char *const planned_tiers[] = { "function", "microvm", "vm" };

bool info_tier_planned(const char *tier)
{
	for (size_t i = 0; i < ELEMENTSOF(planned_tiers); i++)
		if (strcmp(tier, planned_tiers[i]) == 0)
			return true;
	return false;
}

static json_t *probe_tiers(void)
{
	const char *why = NULL;
	json_t *t = json_object();
	int r = container_backend.probe(&why);

	json_object_set_new(t, "container",
			    r >= 0 ? json_pack("{s:b}", "available", 1) :
				     json_pack("{s:b,s:s}", "available", 0, "reason", why));
	for (size_t i = 0; i < ELEMENTSOF(planned_tiers); i++)
		json_object_set_new(t, planned_tiers[i],
				    json_pack("{s:b,s:s}", "available", 0, "reason",
					      INFO_TIER_PLANNED_REASON));
	return t;
}

/* The layers the container tier applies to every sandbox on this node, and those it does not,
 * so that nobody takes a layer for active that is not. */
static json_t *containment(const struct daemon *d)
{
	int abi = profile_landlock_abi();
	json_t *profiles = json_array();

	for (size_t i = 0; i < profile_set_count(d->profiles); i++)
		json_array_append_new(profiles, json_string(profile_set_at(d->profiles, i)->name));
	return json_pack("{s:b,s:b,s:o,s:b,s:b,s:b,s:b,s:s?,s:b}", "user_namespace", 1, "seccomp",
			 1, "seccomp_profiles", profiles, "no_new_privs", 1, "landlock", abi > 0,
			 "landlock_scoped", abi >= 6, "apparmor", profile_apparmor_available(),
			 "apparmor_unavailable",
			 profile_apparmor_available() ? NULL :
							"no AppArmor in this kernel: Landlock instead",
			 "network_allowlist", d->allowlist != NULL);
}

json_t *info_probe(const struct daemon *d)
{
	json_t *images = json_array();
	char actions[256] = "";

	for (size_t i = 0; i < image_store_count(d->images); i++)
		json_array_append_new(images, json_string(image_store_get(d->images, i)->name));
	read_line("/proc/sys/kernel/seccomp/actions_avail", actions, sizeof(actions));

	return json_pack(
		"{s:s,s:i,s:{s:s,s:s,s:s?},s:o,s:o,s:o,s:o,s:b,s:s,s:o,s:i,s:{s:I,s:I},s:s,s:o}",
		"version", WARREN_VERSION, "cores", (int)d->n_loops, "cgroup", "mode",
		cg_mode_to_string(cg_node_mode(d->cg)), "v2_path", cg_node_v2_path(d->cg),
		"favordynmods", cg_node_favordynmods(d->cg), "tiers",
		probe_tiers(), "lsm", probe_lsm(), "kvm", probe_kvm(), "io_uring", probe_uring(),
		"seccomp", actions[0] != '\0', "seccomp_actions", actions, "images", images,
		"max_sandboxes", (int)d->max_sandboxes, "uid_range", "base", (json_int_t)d->uid_base,
		"count", (json_int_t)d->uid_count, "socket", d->socket_path, "containment",
		containment(d));
}

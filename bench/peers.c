/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "peers.h"
#include "spawn.h"

static const char *const names[_PEER_MAX] = {
	[PEER_CRUN] = "crun",
	[PEER_RUNC] = "runc",
	[PEER_BWRAP] = "bwrap",
};

const char *peer_name(enum peer p)
{
	return p < _PEER_MAX ? names[p] : "?";
}

bool peer_available(const struct peers *p, enum peer which)
{
	return p->path[which][0] != '\0';
}

static void find_program(const char *name, char *ret, size_t size)
{
	const char *path = getenv("PATH");
	char buf[4096], *save = NULL;

	ret[0] = '\0';
	snprintf(buf, sizeof(buf), "%s:/usr/sbin:/usr/bin:/sbin:/bin", path ? path : "");
	for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char cand[512];

		snprintf(cand, sizeof(cand), "%s/%s", d, name);
		if (d[0] == '/' && access(cand, X_OK) == 0) {
			snprintf(ret, size, "%s", cand);
			return;
		}
	}
}

static void read_version(const char *prog, char *ret, size_t size)
{
	char cmd[600], line[256] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' --version 2>/dev/null", prog);
	ret[0] = '\0';
	f = popen(cmd, "re");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(ret, size, "%s", line);
	}
	pclose(f);
}

int peers_init(struct peers *p, const char *dir, const char *rootfs, const char *cgname,
	       int log_fd)
{
	*p = (struct peers){ .mntns_fd = -EBADF, .log_fd = log_fd };
	snprintf(p->dir, sizeof(p->dir), "%s/bundles", dir);
	snprintf(p->rootfs, sizeof(p->rootfs), "%s", rootfs);
	snprintf(p->cgparent, sizeof(p->cgparent), "%s-peers", cgname);
	if (mkdir(p->dir, 0711) < 0 && errno != EEXIST)
		return -errno;
	for (int i = 0; i < _PEER_MAX; i++) {
		find_program(names[i], p->path[i], sizeof(p->path[i]));
		if (!p->path[i][0])
			continue;
		read_version(p->path[i], p->version[i], sizeof(p->version[i]));
		snprintf(p->state[i], sizeof(p->state[i]), "%s/%s-state", dir, names[i]);
	}
	if (peer_available(p, PEER_CRUN) && strcmp(cgroup2_mount(), "/sys/fs/cgroup") != 0) {
		/* Hybrid node: crun 1.8.1 refuses it ("unsupported cgroup setup"); in a private
		 * mount namespace without the cgroup2 mount it sees pure v1 and works. */
		p->mntns_fd = mntns_without_cgroup2();
		if (p->mntns_fd < 0) {
			fprintf(stderr, "bench: crun: cannot make a mount namespace without "
					"/sys/fs/cgroup/unified (%s): skipping crun\n",
				strerror(-p->mntns_fd));
			p->path[PEER_CRUN][0] = '\0';
		}
	}
	return 0;
}

static json_t *strv(const char *const *v)
{
	json_t *a = json_array();

	for (; *v; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

static json_t *mount_entry(const char *dest, const char *type, const char *src,
			   const char *const *opts)
{
	json_t *m = json_pack("{s:s,s:s,s:s}", "destination", dest, "type", type, "source", src);

	if (opts)
		json_object_set_new(m, "options", strv(opts));
	return m;
}

/* An OCI config close to a warren sandbox, after runc's `runc spec` defaults. */
static json_t *oci_config(const char *rootfs, const char *const *args, bool netns,
			  const char *cgroups_path)
{
	static const char *const caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE",
					    NULL };
	static const char *const env[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
		NULL };
	static const char *const masked[] = {
		"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
		"/proc/scsi", NULL };
	static const char *const readonly[] = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
						"/proc/sysrq-trigger", NULL };
	static const char *const dev_opts[] = { "nosuid", "strictatime", "mode=755", "size=65536k",
						NULL };
	static const char *const pts_opts[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666",
						"mode=0620", NULL };
	static const char *const shm_opts[] = { "nosuid", "noexec", "nodev", "mode=1777",
						"size=65536k", NULL };
	static const char *const mq_opts[] = { "nosuid", "noexec", "nodev", NULL };
	static const char *const sys_opts[] = { "nosuid", "noexec", "nodev", "ro", NULL };
	static const char *const sys_bind_opts[] = { "rbind", "nosuid", "noexec", "nodev", "ro",
						     NULL };
	static const char *const ns[] = { "pid", "ipc", "uts", "mount", "user", "cgroup", NULL };
	json_t *c, *capsobj, *mounts, *nss, *map;

	capsobj = json_pack("{s:o,s:o,s:o}", "bounding", strv(caps), "effective", strv(caps),
			    "permitted", strv(caps));
	mounts = json_array();
	json_array_append_new(mounts, mount_entry("/proc", "proc", "proc", NULL));
	json_array_append_new(mounts, mount_entry("/dev", "tmpfs", "tmpfs", dev_opts));
	json_array_append_new(mounts, mount_entry("/dev/pts", "devpts", "devpts", pts_opts));
	json_array_append_new(mounts, mount_entry("/dev/shm", "tmpfs", "shm", shm_opts));
	json_array_append_new(mounts, mount_entry("/dev/mqueue", "mqueue", "mqueue", mq_opts));
	/* sysfs may only be mounted from a user namespace that owns the network namespace;
	 * without one, the rootless recipe: a read-only recursive bind of the host's /sys. */
	if (netns)
		json_array_append_new(mounts, mount_entry("/sys", "sysfs", "sysfs", sys_opts));
	else
		json_array_append_new(mounts, mount_entry("/sys", "bind", "/sys", sys_bind_opts));

	nss = json_array();
	for (const char *const *n = ns; *n; n++)
		json_array_append_new(nss, json_pack("{s:s}", "type", *n));
	if (netns)
		json_array_append_new(nss, json_pack("{s:s}", "type", "network"));
	map = json_pack("[{s:i,s:i,s:i}]", "containerID", 0, "hostID", 100000, "size", 65536);

	c = json_pack("{s:s, s:{s:b,s:{s:i,s:i},s:o,s:o,s:s,s:o,s:b}, s:{s:s,s:b}, s:s, s:o,"
		      " s:{s:{s:[{s:b,s:s}]}, s:o, s:O, s:O, s:s, s:o, s:o}}",
		      "ociVersion", "1.0.2",
		      "process", "terminal", 0, "user", "uid", 0, "gid", 0, "args", strv(args),
		      "env", strv(env), "cwd", "/", "capabilities", capsobj, "noNewPrivileges", 1,
		      "root", "path", rootfs, "readonly", 1,
		      "hostname", "peer",
		      "mounts", mounts,
		      "linux", "resources", "devices", "allow", 0, "access", "rwm",
		      "namespaces", nss, "uidMappings", map, "gidMappings", map,
		      "cgroupsPath", cgroups_path, "maskedPaths", strv(masked),
		      "readonlyPaths", strv(readonly));
	json_decref(map);
	return c;
}

static int write_bundle(const struct peers *p, const char *name, const char *const *args,
			bool netns)
{
	char bdir[400], file[450], cgpath[200];
	json_t *c;
	int r;

	snprintf(bdir, sizeof(bdir), "%s/%s", p->dir, name);
	snprintf(file, sizeof(file), "%s/config.json", bdir);
	snprintf(cgpath, sizeof(cgpath), "/%s/%s", p->cgparent, name);
	if (mkdir(bdir, 0711) < 0 && errno != EEXIST)
		return -errno;
	c = oci_config(p->rootfs, args, netns, cgpath);
	if (!c)
		return -ENOMEM;
	r = json_dump_file(c, file, JSON_INDENT(1)) < 0 ? -EIO : 0;
	json_decref(c);
	return r;
}

int peers_write_bundles(struct peers *p, int n_workers)
{
	static const char *const true_args[] = { "/bin/true", NULL };
	static const char *const idle_args[] = { "/bin/sleep", "100000", NULL };
	char name[32];
	int r;

	for (int w = p->n_bundles; w < n_workers; w++)
		for (int net = 0; net < 2; net++) {
			snprintf(name, sizeof(name), "%s-w%d", net ? "net" : "nonet", w);
			r = write_bundle(p, name, true_args, net);
			if (r < 0)
				return r;
		}
	if (p->n_bundles == 0) {
		r = write_bundle(p, "idle", idle_args, true);
		if (r < 0)
			return r;
	}
	if (n_workers > p->n_bundles)
		p->n_bundles = n_workers;
	return 0;
}

static int run_peer(const struct peers *p, enum peer which, char *const argv[])
{
	int fd = which == PEER_CRUN ? p->mntns_fd : -1;

	return spawn_run(argv, fd, p->log_fd);
}

static int status_to_r(int status)
{
	if (status < 0)
		return status;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

int peer_run_once(const struct peers *p, enum peer which, int worker, bool netns,
		  unsigned long seq)
{
	char bundle[400], name[48];

	snprintf(bundle, sizeof(bundle), "%s/%s-w%d", p->dir, netns ? "net" : "nonet", worker);
	snprintf(name, sizeof(name), "wb-%d-%lu", worker, seq);
	switch (which) {
	case PEER_CRUN:
	case PEER_RUNC: {
		char *const argv[] = { (char *)p->path[which], "--root", (char *)p->state[which],
				       "run", "--bundle", bundle, name, NULL };

		return status_to_r(run_peer(p, which, argv));
	}
	case PEER_BWRAP: {
		char *const argv[] = { (char *)p->path[which], "--unshare-user", "--unshare-pid",
				       "--unshare-ipc", "--unshare-uts", "--unshare-cgroup",
				       netns ? "--unshare-net" : "--share-net",
				       "--ro-bind", (char *)p->rootfs, "/", "--proc", "/proc",
				       "--dev", "/dev", "--hostname", "peer", "/bin/true", NULL };

		return status_to_r(run_peer(p, which, argv));
	}
	default:
		return -EINVAL;
	}
}

int peer_start_idle(const struct peers *p, enum peer which, const char *name)
{
	char bundle[400];

	if (which != PEER_CRUN && which != PEER_RUNC)
		return -EOPNOTSUPP;
	snprintf(bundle, sizeof(bundle), "%s/idle", p->dir);
	char *const argv[] = { (char *)p->path[which], "--root", (char *)p->state[which], "run",
			       "--detach", "--bundle", bundle, (char *)name, NULL };
	return status_to_r(run_peer(p, which, argv));
}

int peer_exec_true(const struct peers *p, enum peer which, const char *name)
{
	char *const argv[] = { (char *)p->path[which], "--root", (char *)p->state[which], "exec",
			       (char *)name, "/bin/true", NULL };

	return status_to_r(run_peer(p, which, argv));
}

void peer_remove(const struct peers *p, enum peer which, const char *name)
{
	char *const argv[] = { (char *)p->path[which], "--root", (char *)p->state[which], "delete",
			       "--force", (char *)name, NULL };

	run_peer(p, which, argv);
}

void peers_cleanup(struct peers *p)
{
	/* Containers an interrupted run left behind: each has a directory in the state root. */
	for (int i = PEER_CRUN; i <= PEER_RUNC; i++) {
		struct dirent *de;
		DIR *d;

		if (!p->path[i][0] || !(d = opendir(p->state[i])))
			continue;
		while ((de = readdir(d)))
			if (de->d_name[0] != '.' && de->d_type == DT_DIR)
				peer_remove(p, (enum peer)i, de->d_name);
		closedir(d);
	}
	p->mntns_fd = safe_close(p->mntns_fd);
	if (p->cgparent[0])
		cgroup_rmtree_everywhere(p->cgparent);
}

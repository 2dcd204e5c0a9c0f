/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "daemon.h"
#include "log.h"
#include "peer.h"
#include "sandbox.h"
#include "syscall.h"

#define LOG_BUF_SIZE 16384
#define EXEC_BUF_SIZE 16384
#define EXEC_DRAIN_MS 200 /* after exit, how long background children may hold the pipes */

/* ---- the console log ---------------------------------------------------------------------- */

struct follower {
	struct follower *next;
	struct sandbox *s;
	struct conn *c;
};

static void on_log_read(struct loop *l, struct io_op *op, int res, uint32_t flags);
static void on_log_write(struct loop *l, struct io_op *op, int res, uint32_t flags);

/* The file is made when the first bytes arrive (log_file_open()), not here: most sandboxes
 * idle, and an idle one keeps no descriptor (struct sandbox). Until then GET logs finds no file,
 * which reads as empty. */
int sandbox_log_open(struct sandbox *s)
{
	struct daemon *d = s->loop->d;

	if (asprintf(&s->log_path, "%s/%s.log", d->log_dir, s->id) < 0 ||
	    asprintf(&s->log_old_path, "%s/%s.log.1", d->log_dir, s->id) < 0)
		return -ENOMEM;
	s->log_buf = malloc(LOG_BUF_SIZE);
	if (!s->log_buf)
		return -ENOMEM;
	io_op_init(&s->log_read_op, on_log_read);
	io_op_init(&s->log_write_op, on_log_write);
	return 0;
}

/* Loop thread: the pipe's slot is in this loop's ring. */
void sandbox_log_close(struct sandbox *s)
{
	s->log_slot = loop_file_remove(s->loop, s->log_slot);
	s->log_fd = safe_close(s->log_fd);
	free(s->log_buf);
	free(s->log_path);
	free(s->log_old_path);
	s->log_buf = s->log_path = s->log_old_path = NULL;
}

static void log_read_next(struct sandbox *s)
{
	struct io_uring_sqe *sqe = loop_sqe(s->loop, &s->log_read_op);

	io_uring_prep_read(sqe, s->log_slot, s->log_buf, LOG_BUF_SIZE, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
}

void sandbox_log_start(struct sandbox *s)
{
	log_read_next(s);
}

static void followers_end(struct sandbox *s)
{
	while (s->followers) {
		struct follower *f = s->followers;

		s->followers = f->next;
		f->c->on_close = NULL;
		f->c->handler = NULL;
		conn_stream_end(f->c);
		free(f);
	}
}

static void log_eof(struct sandbox *s)
{
	s->log_eof = true;
	s->log_slot = loop_file_remove(s->loop, s->log_slot);
	followers_end(s);
	sandbox_exit_settle(s);
}

/* A new, empty current file: the first one, or after a rotation. */
static int log_file_open(struct sandbox *s)
{
	int fd = open(s->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);

	if (fd < 0)
		return -errno;
	safe_close(s->log_fd);
	s->log_fd = fd;
	s->log_size = 0;
	return 0;
}

/* Keeps at most log_bytes on disk: when the current half is full it becomes the old half. */
static int log_rotate(struct sandbox *s)
{
	if (rename(s->log_path, s->log_old_path) < 0)
		return -errno;
	return log_file_open(s);
}

static void on_log_read(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct sandbox *s = container_of(op, struct sandbox, log_read_op);
	int r;

	if (res <= 0 || s->state == SANDBOX_REMOVED) {
		log_eof(s);
		return;
	}
	if (s->log_fd < 0 && (r = log_file_open(s)) < 0) {
		/* Dropped, like bytes nobody can store; the next block tries again. */
		log_warn_errno(r, "sandbox %s: creating its log %s", s->id, s->log_path);
		log_read_next(s);
		return;
	}
	if (s->log_size + res > s->spec.log_bytes / 2 && (r = log_rotate(s)) < 0)
		log_warn_errno(r, "sandbox %s: rotating its log", s->id);
	io_uring_prep_write(loop_sqe(l, &s->log_write_op), s->log_fd, s->log_buf, res,
			    s->log_size);
}

static void on_log_write(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct sandbox *s = container_of(op, struct sandbox, log_write_op);

	if (res > 0) {
		s->log_size += res;
		/* Followers get bytes once they are in the file, so a follower that joins now
		 * reads the file and then gets exactly what comes after. */
		for (struct follower *f = s->followers; f; f = f->next)
			conn_stream_chunk(f->c, s->log_buf, res);
	} else if (res < 0)
		log_warn_errno(res, "sandbox %s: writing its log", s->id);
	if (s->state == SANDBOX_REMOVED || s->log_slot < 0) {
		sandbox_maybe_free(s);
		return;
	}
	log_read_next(s);
}

static void follower_closed(struct conn *c)
{
	struct follower *f = c->handler;

	for (struct follower **p = &f->s->followers; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	free(f);
}

/* Appends a file's contents to buf; a missing file is empty. */
static int slurp(const char *path, char **buf, size_t *len, size_t max)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *p;
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	for (;;) {
		if (*len >= max)
			return 0;
		p = realloc(*buf, *len + 65536);
		if (!p)
			return -ENOMEM;
		*buf = p;
		n = read(fd, *buf + *len, MIN((size_t)65536, max - *len));
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		*len += n;
	}
}

void sandbox_logs(struct sandbox *s, struct conn *c, bool follow)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	struct follower *f;
	int r;

	/* Bounded by log_bytes, which the create request capped. Of the current file only what
	 * a completed write put there: the ring may already have written the block in flight,
	 * which on_log_write() then sends to the followers, this one among them. */
	r = slurp(s->log_old_path, &buf, &len, s->spec.log_bytes);
	if (r >= 0)
		r = slurp(s->log_path, &buf, &len, MIN(s->spec.log_bytes, len + s->log_size));
	if (r < 0) {
		conn_respond_error(c, 500, "internal", "reading the log of %s: %s", s->id,
				   strerror(-r));
		return;
	}
	if (!follow || s->log_eof) {
		conn_respond(c, 200, "text/plain; charset=utf-8", buf ? buf : "", len);
		return;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		conn_respond_error(c, 500, "internal", "out of memory");
		return;
	}
	conn_stream_begin(c, 200, "text/plain; charset=utf-8");
	conn_stream_chunk(c, buf, len);
	f->s = s;
	f->c = c;
	f->next = s->followers;
	s->followers = f;
	c->handler = f;
	c->on_close = follower_closed;
}

/* ---- exec ------------------------------------------------------------------------------------ */

/* An exec is a conversation with the sandbox's init over its exec channel (backend_ops.exec):
 * the request goes out at once, then the init's messages arrive through the ring (PID, STARTED
 * or FAILED, EXITED), alongside the command's output. The HTTP answer begins once the init says
 * how the start went, so that a bad working directory is still a 400. Nothing here waits:
 * every step is a completion. The init is the sandbox's, so what it says is checked (by the
 * backend) and merely believed about this exec; a silent one is cut off by timers. */

#define EXEC_START_MS 10000 /* how long the init may take to say whether the command runs */
#define EXEC_KILL_MS 2000   /* and, once told to kill it, to report that it is gone */

/* One of an exec's output pipes. */
struct exec_stream {
	struct io_op op;
	struct exec_run *e;
	const char *name; /* "stdout", "stderr": the key of its NDJSON lines */
	int fd;
	char buf[EXEC_BUF_SIZE];
};

struct exec_run {
	struct exec_run *next;
	struct sandbox *s;
	struct conn *c;         /* NULL once the client is gone, or answered with an error */
	int sock;               /* the exec channel: our connection to the init */
	pid_t pid;              /* the command, in our pid namespace; 0 until the init tells */
	struct exec_stream out, err;
	int in_fd;
	struct io_op msg_op, in_op, start_op, timeout_op, drain_op, kill_op;
	struct __kernel_timespec start_ts, timeout_ts, drain_ts, kill_ts;
	/* one message of the init's at a time */
	struct msghdr mh;
	struct iovec iov;
	char msg[EXEC_EVENT_DATA_MAX];
	union {
		char buf[EXEC_EVENT_CONTROL_MAX];
		struct cmsghdr align;
	} control;
	char *stdin_data;
	size_t stdin_len, stdin_off;
	unsigned timeout_s;
	char *argv0, *cwd;      /* for the answer to a start that failed */
	bool started, exited, killing, timed_out, finished;
	int exit_code;
};

static bool exec_busy(const struct exec_run *e)
{
	return e->out.op.busy || e->err.op.busy || e->in_op.busy || e->msg_op.busy ||
	       e->start_op.busy || e->timeout_op.busy || e->drain_op.busy || e->kill_op.busy;
}

static void exec_maybe_free(struct exec_run *e)
{
	struct sandbox *s = e->s;

	if (!e->finished || exec_busy(e))
		return;
	for (struct exec_run **p = &s->execs; *p; p = &(*p)->next)
		if (*p == e) {
			*p = e->next;
			break;
		}
	safe_close(e->sock);
	safe_close(e->out.fd);
	safe_close(e->err.fd);
	safe_close(e->in_fd);
	free(e->stdin_data);
	free(e->argv0);
	free(e->cwd);
	free(e);
	sandbox_maybe_free(s);
}

/* One NDJSON line of a stream; takes the reference to line. */
static void send_line(struct conn *c, json_t *line)
{
	char *txt = c && line ? json_dumps(line, JSON_COMPACT) : NULL;
	size_t n;

	json_decref(line);
	if (!txt)
		return;
	n = strlen(txt);
	/* The newline goes into the same chunk: one send per line. */
	char *withnl = realloc(txt, n + 2);
	if (!withnl) {
		free(txt);
		return;
	}
	withnl[n] = '\n';
	conn_stream_chunk(c, withnl, n + 1);
	free(withnl);
}

static json_t *output_line(const char *stream, const char *data, size_t len)
{
	json_t *str = json_stringn(data, len);
	char key[16];

	if (str)
		return json_pack("{s:o}", stream, str);
	/* Not UTF-8 (or cut inside a character): send it base64-encoded. */
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	char *enc = malloc((len + 2) / 3 * 4 + 1);

	if (!enc)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (unsigned char)data[i] << 16;

		if (i + 1 < len)
			v |= (unsigned char)data[i + 1] << 8;
		if (i + 2 < len)
			v |= (unsigned char)data[i + 2];
		enc[o++] = b64[(v >> 18) & 63];
		enc[o++] = b64[(v >> 12) & 63];
		enc[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
		enc[o++] = i + 2 < len ? b64[v & 63] : '=';
	}
	enc[o] = '\0';
	snprintf(key, sizeof(key), "%s_b64", stream);
	json_t *line = json_pack("{s:s}", key, enc);
	free(enc);
	return line;
}

/* Lets go of the client without a final line (it got its answer, or it is gone). */
static void exec_detach(struct exec_run *e)
{
	if (!e->c)
		return;
	e->c->on_close = NULL;
	e->c->handler = NULL;
	e->c = NULL;
}

static void exec_finish(struct exec_run *e)
{
	struct loop *l = e->s->loop;

	if (e->finished) {
		exec_maybe_free(e);
		return;
	}
	e->finished = true;
	loop_cancel(l, &e->msg_op);
	loop_cancel(l, &e->start_op);
	loop_cancel(l, &e->timeout_op);
	loop_cancel(l, &e->drain_op);
	loop_cancel(l, &e->kill_op);
	loop_cancel(l, &e->out.op);
	loop_cancel(l, &e->err.op);
	loop_cancel(l, &e->in_op);
	if (e->c) {
		struct conn *c = e->c;

		exec_detach(e);
		send_line(c, json_pack("{s:i,s:b}", "exit_code", e->exit_code, "timed_out",
				       e->timed_out));
		conn_stream_end(c);
	}
	exec_maybe_free(e);
}

static void exec_check_done(struct exec_run *e)
{
	if (e->exited && e->out.fd < 0 && e->err.fd < 0)
		exec_finish(e);
	else
		exec_maybe_free(e);
}

/* Closing our side of the channel is how the init is told to kill the command (it still
 * answers EXITED on the other half); if it stays silent, the exec ends anyway. */
static void exec_kill(struct exec_run *e)
{
	if (e->killing || e->exited || e->finished)
		return;
	e->killing = true;
	(void)shutdown(e->sock, SHUT_WR);
	loop_timer(e->s->loop, &e->kill_op, &e->kill_ts, EXEC_KILL_MS);
}

static void exec_read(struct exec_stream *st)
{
	io_uring_prep_read(loop_sqe(st->e->s->loop, &st->op), st->fd, st->buf, EXEC_BUF_SIZE, 0);
}

static void on_exec_output(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct exec_stream *st = container_of(op, struct exec_stream, op);
	struct exec_run *e = st->e;

	if (res > 0 && !e->finished) {
		send_line(e->c, output_line(st->name, st->buf, res));
		exec_read(st);
		return;
	}
	st->fd = safe_close(st->fd);
	exec_check_done(e);
}

static void exec_write_stdin(struct exec_run *e)
{
	if (e->stdin_off >= e->stdin_len || e->finished) {
		e->in_fd = safe_close(e->in_fd);
		return;
	}
	io_uring_prep_write(loop_sqe(e->s->loop, &e->in_op), e->in_fd,
			    e->stdin_data + e->stdin_off, e->stdin_len - e->stdin_off, 0);
}

static void on_exec_in(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct exec_run *e = container_of(op, struct exec_run, in_op);

	/* EPIPE: the command stopped reading, which is its right. */
	if (res <= 0)
		e->stdin_off = e->stdin_len;
	else
		e->stdin_off += res;
	exec_write_stdin(e);
	exec_maybe_free(e);
}

static void on_exec_drain(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct exec_run *e = container_of(op, struct exec_run, drain_op);

	/* Children left in the background still hold the pipes: stop waiting for them. */
	if (res == -ETIME)
		exec_finish(e);
	else
		exec_maybe_free(e);
}

static void exec_exited(struct exec_run *e, int code)
{
	struct loop *l = e->s->loop;

	e->exited = true;
	e->exit_code = code;
	loop_cancel(l, &e->timeout_op);
	loop_cancel(l, &e->kill_op);
	if (e->out.fd >= 0 || e->err.fd >= 0)
		loop_timer(l, &e->drain_op, &e->drain_ts, EXEC_DRAIN_MS);
	exec_check_done(e);
}

/* The command runs: the answer begins, output flows, stdin goes in, the timeout starts. */
static void exec_started(struct exec_run *e)
{
	struct loop *l = e->s->loop;

	e->started = true;
	loop_cancel(l, &e->start_op);
	if (e->c)
		conn_stream_begin(e->c, 200, "application/x-ndjson");
	exec_read(&e->out);
	exec_read(&e->err);
	exec_write_stdin(e);
	if (e->timeout_s)
		loop_timer(l, &e->timeout_op, &e->timeout_ts, e->timeout_s * 1000ull);
}

/* No command ran: the answer is an error, or for a command that cannot be executed, what a
 * shell would say (127 for "not found", 126 for "not executable", the reason on stderr). */
static void exec_start_failed(struct exec_run *e, const struct exec_event *ev)
{
	struct conn *c = e->c;
	const char *id = e->s->id;

	exec_detach(e);
	if (c && ev->failure == EXEC_FAILURE_CWD)
		conn_respond_error(c, 400, "bad_request",
				   "cannot use '%s' as the working directory in %s: %s", e->cwd, id,
				   strerror(-ev->err));
	else if (c && ev->failure == EXEC_FAILURE_COMMAND) {
		char msg[SPEC_ERR_MAX + 64];

		snprintf(msg, sizeof(msg), "warren: %.200s: %s\n", e->argv0, strerror(-ev->err));
		conn_stream_begin(c, 200, "application/x-ndjson");
		send_line(c, output_line("stderr", msg, strlen(msg)));
		send_line(c, json_pack("{s:i,s:b}", "exit_code", ev->err == -ENOENT ? 127 : 126,
				       "timed_out", 0));
		conn_stream_end(c);
	} else if (c)
		conn_respond_error(c, 500, "internal", "starting '%.200s' in %s: %s", e->argv0, id,
				   strerror(-ev->err));
	exec_finish(e);
}

/* Before the start is settled the client still waits for an answer. */
static void exec_start_error(struct exec_run *e, int status, const char *why)
{
	struct conn *c = e->c;

	exec_detach(e);
	if (c && status == 409)
		conn_respond_error(c, 409, "conflict", "sandbox %s is %s, not running", e->s->id,
				   sandbox_state_to_string(e->s->state));
	else if (c)
		conn_respond_error(c, 500, "internal", "starting '%.200s' in %s: %s", e->argv0,
				   e->s->id, why);
	exec_finish(e);
}

static void exec_recv(struct exec_run *e)
{
	e->iov = (struct iovec){ .iov_base = e->msg, .iov_len = sizeof(e->msg) };
	e->mh = (struct msghdr){ .msg_iov = &e->iov, .msg_iovlen = 1,
				 .msg_control = e->control.buf,
				 .msg_controllen = sizeof(e->control.buf) };
	io_uring_prep_recvmsg(loop_sqe(e->s->loop, &e->msg_op), e->sock, &e->mh, MSG_CMSG_CLOEXEC);
}

/* Whether an honest init could have sent ev now. */
static bool exec_event_in_order(const struct exec_run *e, const struct exec_event *ev)
{
	switch (ev->type) {
	case EXEC_EVENT_PID:
		return !e->started && e->pid == 0;
	case EXEC_EVENT_STARTED:
	case EXEC_EVENT_FAILED:
		return !e->started;
	case EXEC_EVENT_EXITED:
		return e->started;
	default:
		return false;
	}
}

static void on_exec_msg(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct exec_run *e = container_of(op, struct exec_run, msg_op);
	struct exec_event ev;
	int r;

	if (e->finished || e->exited) {
		exec_maybe_free(e);
		return;
	}
	if (res <= 0) {
		/* EOF before EXITED: the init is gone, and its pid namespace with the command
		 * (cgroup.kill at delete, or the sandbox's command exited), or it hung up. */
		if (res < 0)
			log_debug_errno(res, "sandbox %s: exec channel", e->s->id);
		if (e->started)
			exec_exited(e, 128 + SIGKILL);
		else
			exec_start_error(e, e->s->state == SANDBOX_RUNNING ? 500 : 409,
					 "the sandbox's init closed the exec channel");
		return;
	}
	r = e->s->backend->exec_event(&e->mh, e->msg, (size_t)res, &ev);
	if (r < 0 || !exec_event_in_order(e, &ev)) {
		log_warn("sandbox %s: its init broke the exec protocol: ending the exec", e->s->id);
		(void)shutdown(e->sock, SHUT_RDWR);
		if (e->started)
			exec_exited(e, -1);
		else
			exec_start_error(e, 500, "the sandbox's init answered with nonsense");
		return;
	}
	switch (ev.type) {
	case EXEC_EVENT_PID:
		e->pid = ev.pid;
		pid_note(ev.pid, e->s->id);
		exec_recv(e);
		break;
	case EXEC_EVENT_STARTED:
		exec_started(e);
		exec_recv(e);
		break;
	case EXEC_EVENT_FAILED:
		exec_start_failed(e, &ev);
		break;
	case EXEC_EVENT_EXITED:
		exec_exited(e, ev.exit_code);
		break;
	default:
		break;
	}
}

static void on_exec_start_timer(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct exec_run *e = container_of(op, struct exec_run, start_op);

	if (res == -ETIME && !e->started && !e->finished) {
		log_warn("sandbox %s: its init did not answer an exec in %d ms", e->s->id,
			 EXEC_START_MS);
		(void)shutdown(e->sock, SHUT_RDWR);
		exec_start_error(e, 500, "the sandbox's init did not answer");
		return;
	}
	exec_maybe_free(e);
}

static void on_exec_timeout(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct exec_run *e = container_of(op, struct exec_run, timeout_op);

	if (res == -ETIME && !e->exited) {
		e->timed_out = true;
		exec_kill(e);
	}
	exec_maybe_free(e);
}

static void on_exec_kill_timer(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct exec_run *e = container_of(op, struct exec_run, kill_op);

	/* The init did not report the kill: take it as done. */
	if (res == -ETIME && !e->exited && !e->finished) {
		e->exited = true;
		e->exit_code = 128 + SIGKILL;
		exec_finish(e);
		return;
	}
	exec_maybe_free(e);
}

static void exec_conn_closed(struct conn *c)
{
	struct exec_run *e = c->handler;

	/* Nobody is listening: do not leave the command running unseen. */
	e->c = NULL;
	exec_kill(e);
}

/* <state-dir>/exec/<id>.sock: a directory of root's, mode 0700, outside every sandbox's mount
 * namespace. */
static int exec_socket_path(const struct sandbox *s, char buf[PATH_MAX])
{
	int n = snprintf(buf, PATH_MAX, "%s/%s.sock", s->loop->d->exec_dir, s->id);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

int sandbox_exec_dir_open(struct daemon *d)
{
	const char *dir = d->exec_dir;
	struct statfs sf;
	char opts[64];

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return log_errno(-errno, "mkdir %s", dir);
	if (chmod(dir, 0700) < 0)
		return log_errno(-errno, "chmod %s", dir);
	/* A socket file is made and removed per sandbox: on a disk filesystem that is an inode
	 * allocation each (ext4: ~5% of a create's CPU on the development VM). Where the state
	 * directory is not on a tmpfs (as /run is on most nodes), a small one of our own; one
	 * left by an earlier warrend is used again. */
	if (statfs(dir, &sf) < 0)
		return log_errno(-errno, "statfs %s", dir);
	if (sf.f_type == TMPFS_MAGIC) {
		struct statfs parent;

		/* On a tmpfs where the state directory is not: the one a killed warrend mounted,
		 * ours to unmount at the end. */
		if (statfs(d->state_dir, &parent) < 0)
			return log_errno(-errno, "statfs %s", d->state_dir);
		d->exec_dir_mounted = parent.f_type != TMPFS_MAGIC;
	} else {
		snprintf(opts, sizeof(opts), "mode=0700,size=64k,nr_inodes=%u",
			 d->max_sandboxes + 1024);
		if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
			return log_errno(-errno, "mounting a tmpfs on %s", dir);
		d->exec_dir_mounted = true;
	}
	return 0;
}

int sandbox_exec_listen(struct sandbox *s)
{
	char path[PATH_MAX];
	int r = exec_socket_path(s, path);

	return r < 0 ? r : s->backend->exec_listen(path);
}

void sandbox_exec_dir_close(struct daemon *d)
{
	if (d->exec_dir_mounted && umount2(d->exec_dir, MNT_DETACH) < 0)
		log_errno(-errno, "unmounting %s", d->exec_dir);
	d->exec_dir_mounted = false;
}

void sandbox_exec_unlink(struct sandbox *s)
{
	char path[PATH_MAX];

	if (exec_socket_path(s, path) == 0)
		(void)unlink(path);
}

int sandbox_exec(struct sandbox *s, struct exec_spec *spec, struct conn *c,
		 char err[SPEC_ERR_MAX])
{
	_cleanup_close_pair_ int out[2] = { -EBADF, -EBADF }, errp[2] = { -EBADF, -EBADF },
				 in[2] = { -EBADF, -EBADF };
	_cleanup_free_ struct exec_run *e = NULL;
	struct exec_config cfg;
	char path[PATH_MAX];
	int r;

	r = exec_socket_path(s, path);
	if (r < 0)
		return r;
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 || pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->argv0 = strdup(spec->argv[0]);
	e->cwd = strdup(spec->cwd ? spec->cwd : "/");
	if (!e->argv0 || !e->cwd) {
		free(e->argv0);
		free(e->cwd);
		return -ENOMEM;
	}
	cfg = (struct exec_config){
		.socket_path = path,
		.argv = spec->argv,
		.envp = spec->env,
		.cwd = spec->cwd,
		.stdin_fd = in[0],
		.stdout_fd = out[1],
		.stderr_fd = errp[1],
	};
	r = s->backend->exec(&cfg);
	if (r < 0) {
		free(e->argv0);
		free(e->cwd);
		switch (r) {
		case -ECONNREFUSED:
		case -ENOENT:
			/* The init is gone; its exit is on its way to this loop. */
			conn_respond_error(c, 409, "conflict", "sandbox %s is not running", s->id);
			return 0;
		case -EAGAIN:
			snprintf(err, SPEC_ERR_MAX, "sandbox %s has too many execs starting: retry",
				 s->id);
			return -EAGAIN;
		case -E2BIG:
			snprintf(err, SPEC_ERR_MAX, "the command and environment are too large");
			return -EINVAL;
		default:
			snprintf(err, SPEC_ERR_MAX, "starting '%.200s' in %s: %s", spec->argv[0],
				 s->id, strerror(-r));
			return -EIO;
		}
	}
	/* The init has its own copies of the command's ends of the pipes (ours close on return). */
	e->sock = r;
	e->s = s;
	e->c = c;
	e->out.e = e->err.e = e;
	e->out.name = "stdout";
	e->err.name = "stderr";
	e->out.fd = TAKE_FD(out[0]);
	e->err.fd = TAKE_FD(errp[0]);
	e->in_fd = TAKE_FD(in[1]);
	e->stdin_data = TAKE_PTR(spec->stdin_data);
	e->stdin_len = spec->stdin_len;
	e->timeout_s = spec->timeout_s;
	io_op_init(&e->out.op, on_exec_output);
	io_op_init(&e->err.op, on_exec_output);
	io_op_init(&e->in_op, on_exec_in);
	io_op_init(&e->msg_op, on_exec_msg);
	io_op_init(&e->start_op, on_exec_start_timer);
	io_op_init(&e->timeout_op, on_exec_timeout);
	io_op_init(&e->drain_op, on_exec_drain);
	io_op_init(&e->kill_op, on_exec_kill_timer);

	c->handler = e;
	c->on_close = exec_conn_closed;
	exec_recv(e);
	loop_timer(s->loop, &e->start_op, &e->start_ts, EXEC_START_MS);
	e->next = s->execs;
	s->execs = TAKE_PTR(e);
	return 0;
}

void sandbox_io_detach_all(struct sandbox *s)
{
	followers_end(s);
	/* Execs end on their own once the init, killed with the cgroup, closes their channels. */
	if (s->log_read_op.busy)
		loop_cancel(s->loop, &s->log_read_op);
	else
		s->log_slot = loop_file_remove(s->loop, s->log_slot);
}

bool sandbox_io_busy(const struct sandbox *s)
{
	return s->log_read_op.busy || s->log_write_op.busy || s->execs;
}

/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

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

int sandbox_log_open(struct sandbox *s)
{
	struct daemon *d = s->loop->d;

	if (asprintf(&s->log_path, "%s/%s.log", d->log_dir, s->id) < 0 ||
	    asprintf(&s->log_old_path, "%s/%s.log.1", d->log_dir, s->id) < 0)
		return -ENOMEM;
	s->log_buf = malloc(LOG_BUF_SIZE);
	if (!s->log_buf)
		return -ENOMEM;
	s->log_fd = open(s->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (s->log_fd < 0)
		return -errno;
	io_op_init(&s->log_read_op, on_log_read);
	io_op_init(&s->log_write_op, on_log_write);
	return 0;
}

void sandbox_log_close(struct sandbox *s)
{
	s->log_pipe = safe_close(s->log_pipe);
	s->log_fd = safe_close(s->log_fd);
	free(s->log_buf);
	free(s->log_path);
	free(s->log_old_path);
	s->log_buf = s->log_path = s->log_old_path = NULL;
}

static void log_read_next(struct sandbox *s)
{
	io_uring_prep_read(loop_sqe(s->loop, &s->log_read_op), s->log_pipe, s->log_buf,
			   LOG_BUF_SIZE, 0);
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
	s->log_pipe = safe_close(s->log_pipe);
	followers_end(s);
	sandbox_maybe_free(s);
}

/* Keeps at most log_bytes on disk: when the current half is full it becomes the old half. */
static int log_rotate(struct sandbox *s)
{
	int fd;

	if (rename(s->log_path, s->log_old_path) < 0)
		return -errno;
	fd = open(s->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	safe_close(s->log_fd);
	s->log_fd = fd;
	s->log_size = 0;
	return 0;
}

static void on_log_read(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct sandbox *s = container_of(op, struct sandbox, log_read_op);
	int r;

	if (res <= 0 || s->state == SANDBOX_REMOVED) {
		log_eof(s);
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
	if (s->state == SANDBOX_REMOVED || s->log_pipe < 0) {
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

	/* Bounded by log_bytes, which the create request capped. */
	r = slurp(s->log_old_path, &buf, &len, s->spec.log_bytes);
	if (r >= 0)
		r = slurp(s->log_path, &buf, &len, s->spec.log_bytes);
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
	struct conn *c;
	int pidfd;
	struct exec_stream out, err;
	int in_fd;
	struct io_op in_op, wait_op, timeout_op, drain_op;
	struct __kernel_timespec timeout_ts, drain_ts;
	siginfo_t info;
	char *stdin_data;
	size_t stdin_len, stdin_off;
	bool exited, timed_out, finished;
	int exit_code;
};

static bool exec_busy(const struct exec_run *e)
{
	return e->out.op.busy || e->err.op.busy || e->in_op.busy || e->wait_op.busy ||
	       e->timeout_op.busy || e->drain_op.busy;
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
	safe_close(e->pidfd);
	safe_close(e->out.fd);
	safe_close(e->err.fd);
	safe_close(e->in_fd);
	free(e->stdin_data);
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

static void exec_finish(struct exec_run *e)
{
	if (e->finished) {
		exec_maybe_free(e);
		return;
	}
	e->finished = true;
	loop_cancel(e->s->loop, &e->timeout_op);
	loop_cancel(e->s->loop, &e->drain_op);
	loop_cancel(e->s->loop, &e->out.op);
	loop_cancel(e->s->loop, &e->err.op);
	loop_cancel(e->s->loop, &e->in_op);
	if (e->c) {
		send_line(e->c, json_pack("{s:i,s:b}", "exit_code", e->exit_code, "timed_out",
				       e->timed_out));
		e->c->on_close = NULL;
		e->c->handler = NULL;
		conn_stream_end(e->c);
		e->c = NULL;
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

static void on_exec_waited(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct exec_run *e = container_of(op, struct exec_run, wait_op);

	e->exited = true;
	e->exit_code = res < 0 ? -1 : exit_code_from_siginfo(&e->info);
	loop_cancel(l, &e->timeout_op);
	if (e->out.fd >= 0 || e->err.fd >= 0)
		loop_timer(l, &e->drain_op, &e->drain_ts, EXEC_DRAIN_MS);
	exec_check_done(e);
}

static void on_exec_timeout(struct loop *l, struct io_op *op, int res, uint32_t flags)
{
	struct exec_run *e = container_of(op, struct exec_run, timeout_op);

	if (res == -ETIME && !e->exited) {
		e->timed_out = true;
		/* The helper's death takes the command with it (PDEATHSIG). */
		(void)sys_pidfd_send_signal(e->pidfd, SIGKILL, NULL, 0);
	}
	exec_maybe_free(e);
}

static void exec_conn_closed(struct conn *c)
{
	struct exec_run *e = c->handler;

	/* Nobody is listening: do not leave the command running unseen. */
	e->c = NULL;
	if (!e->exited)
		(void)sys_pidfd_send_signal(e->pidfd, SIGKILL, NULL, 0);
}

int sandbox_exec(struct sandbox *s, struct exec_spec *spec, struct conn *c,
		 char err[SPEC_ERR_MAX])
{
	struct daemon *d = s->loop->d;
	_cleanup_close_pair_ int out[2] = { -EBADF, -EBADF }, errp[2] = { -EBADF, -EBADF },
				 in[2] = { -EBADF, -EBADF };
	struct exec_run *e;
	struct exec_config cfg;
	struct spawn_result res;
	enum exec_failure failure = EXEC_FAILURE_NODE;
	int r;

	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 || pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	cfg = (struct exec_config){
		.sandbox_pidfd = s->pidfd,
		.cg = s->cg,
		.cgroup_fd = s->cgroup_fd,
		.argv = spec->argv,
		.envp = spec->env,
		.cwd = spec->cwd,
		.stdin_fd = in[0],
		.stdout_fd = out[1],
		.stderr_fd = errp[1],
		.uid_base = d->uid_base,
		.seccomp_profile = s->seccomp,
		.apparmor_profile = s->apparmor[0] ? s->apparmor : NULL,
	};
	r = s->backend->exec(&cfg, &res, &failure);
	if (r < 0 && failure == EXEC_FAILURE_CWD) {
		free(e);
		snprintf(err, SPEC_ERR_MAX, "cannot use '%s' as the working directory in %s: %s",
			 spec->cwd ? spec->cwd : "/", s->id, strerror(-r));
		return -EINVAL;
	}
	if (r < 0 && failure == EXEC_FAILURE_COMMAND) {
		/* The command could not be executed: answer as a shell would, 127 for "not
		 * found" and 126 for "not executable", with the reason on stderr. */
		char msg[SPEC_ERR_MAX + 64];

		free(e);
		snprintf(msg, sizeof(msg), "warren: %s: %s\n", spec->argv[0], strerror(-r));
		conn_stream_begin(c, 200, "application/x-ndjson");
		send_line(c, output_line("stderr", msg, strlen(msg)));
		send_line(c, json_pack("{s:i,s:b}", "exit_code", r == -ENOENT ? 127 : 126,
				       "timed_out", 0));
		conn_stream_end(c);
		return 0;
	}
	if (r < 0) {
		free(e);
		snprintf(err, SPEC_ERR_MAX, "starting '%s' in %s: %s", spec->argv[0], s->id,
			 strerror(-r));
		return r;
	}
	pid_note(res.pid, s->id);
	e->s = s;
	e->c = c;
	e->pidfd = res.pidfd;
	e->out.e = e->err.e = e;
	e->out.name = "stdout";
	e->err.name = "stderr";
	e->out.fd = TAKE_FD(out[0]);
	e->err.fd = TAKE_FD(errp[0]);
	e->in_fd = TAKE_FD(in[1]);
	e->stdin_data = TAKE_PTR(spec->stdin_data);
	e->stdin_len = spec->stdin_len;
	io_op_init(&e->out.op, on_exec_output);
	io_op_init(&e->err.op, on_exec_output);
	io_op_init(&e->in_op, on_exec_in);
	io_op_init(&e->wait_op, on_exec_waited);
	io_op_init(&e->timeout_op, on_exec_timeout);
	io_op_init(&e->drain_op, on_exec_drain);
	e->next = s->execs;
	s->execs = e;

	c->handler = e;
	c->on_close = exec_conn_closed;
	conn_stream_begin(c, 200, "application/x-ndjson");
	loop_waitid(s->loop, &e->wait_op, e->pidfd, &e->info);
	exec_read(&e->out);
	exec_read(&e->err);
	exec_write_stdin(e);
	if (spec->timeout_s)
		loop_timer(s->loop, &e->timeout_op, &e->timeout_ts, spec->timeout_s * 1000ull);
	return 0;
}

void sandbox_io_detach_all(struct sandbox *s)
{
	followers_end(s);
	/* Execs end on their own once their processes, killed with the cgroup, are reaped. */
	if (s->log_read_op.busy)
		loop_cancel(s->loop, &s->log_read_op);
	else
		s->log_pipe = safe_close(s->log_pipe);
}

bool sandbox_io_busy(const struct sandbox *s)
{
	return s->log_read_op.busy || s->log_write_op.busy || s->execs;
}

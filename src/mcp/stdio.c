/*
 * The stdio transport (MCP "Transports"): one JSON-RPC message per line
 * on stdin, one per line on stdout; nothing else is ever written to
 * stdout. A line longer than MCP_MAX_MESSAGE is answered with an error and
 * skipped to its end, never buffered whole.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/mcp_int.h"

#define MAX_NOTIFY_BACKLOG (1u << 20) /* queued notification bytes */
#define MAX_BACKLOG (16u << 20)       /* queued bytes before stdin waits */

/* What goes to stdout, written by a thread of its own: no caller (a
 * tool's report from inside the sandbox's supervision loop least of all)
 * ever waits on a client that does not read. Responses are always
 * queued; notifications past MAX_NOTIFY_BACKLOG queued bytes are dropped.
 * The queue is bounded where the work comes from: past MAX_BACKLOG queued
 * bytes, no more requests are read until the client reads its answers. */
struct line {
	struct line *next;
	size_t len;
	int notification;
	char text[];
};

struct out {
	int fd;
	int failed;                 /* errno of the write that failed */
	pthread_mutex_t lock;
	pthread_cond_t more;        /* a line queued, or stop */
	pthread_cond_t drained;     /* bytes at most MAX_BACKLOG, or failed */
	struct line *head, *tail;
	size_t bytes, notify_bytes;
	int stop;
	pthread_t writer;
};

/* 0, or the errno of the failed write. */
static int write_all(int fd, const char *text, size_t len)
{
	while (len) {
		ssize_t w = write(fd, text, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return errno ? errno : EIO;
		text += w;
		len -= (size_t)w;
	}
	return 0;
}

/* The writer's errno once it failed, else 0 when the queue is at most
 * MAX_BACKLOG bytes: waits for the client to read until then. */
static int out_wait(struct out *o)
{
	int failed;

	pthread_mutex_lock(&o->lock);
	while (!o->failed && o->bytes > MAX_BACKLOG)
		pthread_cond_wait(&o->drained, &o->lock);
	failed = o->failed;
	pthread_mutex_unlock(&o->lock);
	return failed;
}

static int out_failed(struct out *o)
{
	int failed;

	pthread_mutex_lock(&o->lock);
	failed = o->failed;
	pthread_mutex_unlock(&o->lock);
	return failed;
}

static void *writer_main(void *arg)
{
	struct out *o = arg;
	int e;

	pthread_mutex_lock(&o->lock);
	for (;;) {
		struct line *l;

		while (!o->head && !o->stop)
			pthread_cond_wait(&o->more, &o->lock);
		l = o->head;
		if (!l)
			break; /* stopped, all written */
		o->head = l->next;
		if (!o->head)
			o->tail = NULL;
		if (l->notification)
			o->notify_bytes -= l->len;
		o->bytes -= l->len;
		if (o->bytes <= MAX_BACKLOG)
			pthread_cond_signal(&o->drained);
		pthread_mutex_unlock(&o->lock);
		/* the line ends with its newline; after a failure, nothing more */
		e = o->failed ? 0 : write_all(o->fd, l->text, l->len);
		free(l);
		pthread_mutex_lock(&o->lock);
		if (e) {
			o->failed = e;
			pthread_cond_signal(&o->drained);
		}
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

/* One message, one line (JSON text from jansson has no raw newline: it
 * escapes them in strings). Queued, never written here. */
static void send_line(void *ctx, const char *text, size_t len)
{
	static const char notify[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/";
	struct out *o = ctx;
	struct line *l = malloc(sizeof(*l) + len + 1);

	if (!l)
		return;
	memcpy(l->text, text, len);
	l->text[len] = '\n';
	l->len = len + 1;
	l->next = NULL;
	l->notification = len >= sizeof(notify) - 1 && memcmp(text, notify, sizeof(notify) - 1) == 0;
	pthread_mutex_lock(&o->lock);
	if (o->failed || (l->notification && o->notify_bytes + l->len > MAX_NOTIFY_BACKLOG)) {
		pthread_mutex_unlock(&o->lock);
		free(l);
		return;
	}
	if (l->notification)
		o->notify_bytes += l->len;
	o->bytes += l->len;
	if (o->tail)
		o->tail->next = l;
	else
		o->head = l;
	o->tail = l;
	pthread_cond_signal(&o->more);
	pthread_mutex_unlock(&o->lock);
}

static void session_changed(void *ctx, const struct mcp_change *c)
{
	mcp_session_changed(ctx, c);
}

int tg_mcp_serve_stdio(struct tg_mcp *m, int in_fd, int out_fd, struct tg_error *err)
{
	struct mcp_watcher w;
	struct mcp_session s;
	struct out o = { .fd = out_fd };
	size_t cap = 64 << 10, len = 0, scan = 0;
	char *buf = malloc(cap);
	int skipping = 0, rc = 0;

	tg_error_clear(err);
	if (!buf)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	pthread_mutex_init(&o.lock, NULL);
	pthread_cond_init(&o.more, NULL);
	pthread_cond_init(&o.drained, NULL);
	rc = pthread_create(&o.writer, NULL, writer_main, &o);
	if (rc != 0) {
		pthread_cond_destroy(&o.drained);
		pthread_cond_destroy(&o.more);
		pthread_mutex_destroy(&o.lock);
		free(buf);
		return tg_error_sys(err, rc, "the thread that writes to the client");
	}
	mcp_session_init(&s, m, send_line, &o);
	/* the configured principal's scopes, with a policy (HTTP requests
	 * bring their token's instead, mcp_session_dispatch) */
	s.scopes = m->principal_scopes ? strdup(m->principal_scopes) : NULL;
	mcp_watch(m, &w, session_changed, &s);
	for (;;) {
		char *nl;
		ssize_t n;

		/* every complete line in the buffer */
		while ((nl = memchr(buf + scan, '\n', len - scan)) != NULL) {
			size_t line = (size_t)(nl - buf);

			if (skipping) {
				skipping = 0;
			} else if (line > 0 && !(line == 1 && buf[0] == '\r')) {
				mcp_session_handle(&s, buf, buf[line - 1] == '\r' ? line - 1 : line);
			}
			memmove(buf, nl + 1, len - line - 1);
			len -= line + 1;
			scan = 0;
		}
		scan = len;
		if (out_wait(&o))
			break;
		if (len > MCP_MAX_MESSAGE) {
			/* answered once, then the rest of the line is dropped */
			if (!skipping)
				mcp_session_handle(&s, buf, len); /* says "larger than" */
			skipping = 1;
			len = scan = 0;
		}
		if (len == cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger) {
				rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		n = read(in_fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* the client closed stdin: a last line without newline
			 * still counts */
			if (len && !skipping)
				mcp_session_handle(&s, buf, len);
			break;
		}
		len += (size_t)n;
	}
	/* the client closed stdin (the specification's shutdown): calls in
	 * flight finish, within their own time limits, and are answered;
	 * when writing failed, nobody would read their answers */
	mcp_unwatch(m, &w);
	mcp_session_release(&s, out_failed(&o) != 0);
	/* everything answered is written before the server goes */
	pthread_mutex_lock(&o.lock);
	o.stop = 1;
	pthread_cond_signal(&o.more);
	pthread_mutex_unlock(&o.lock);
	pthread_join(o.writer, NULL);
	pthread_cond_destroy(&o.drained);
	pthread_cond_destroy(&o.more);
	pthread_mutex_destroy(&o.lock);
	free(buf);
	if (o.failed && rc == 0)
		rc = tg_error_sys(err, o.failed, "writing to the client");
	return rc;
}

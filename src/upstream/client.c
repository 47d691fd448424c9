/*
 * The connection of MCP's client side over stdio (client.h describes the
 * behaviour): line framing with a ceiling, the parse and dispatch of one
 * line (upstream_client_handle_line, which the fuzzer drives), requests in
 * flight and their waiters, the queue of notifications and requests from
 * the server and the dispatcher thread that runs the callbacks.
 *
 * Must never: buffer a line past UPSTREAM_MAX_MESSAGE, queue past its
 * ceilings, run a callback on the reader thread, or block on a write to
 * the server without a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "upstream/client_int.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* *until: timeout_ms from now on the monotonic clock (the conds' own). */
static void deadline_in(struct timespec *until, int timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, until);
	until->tv_sec += timeout_ms / 1000;
	until->tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until->tv_nsec >= 1000000000) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000;
	}
}

void client_break(struct upstream_client *c, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&c->lock);
	if (!c->broken) {
		c->broken = 1;
		va_start(ap, fmt);
		vsnprintf(c->why, sizeof(c->why), fmt, ap);
		va_end(ap);
		pthread_cond_broadcast(&c->answered);
	}
	pthread_mutex_unlock(&c->lock);
}

/* 0, or the errno of the failed write (ETIMEDOUT past the deadline). The
 * descriptor is non-blocking: a server that does not read makes poll
 * wait, never write. SIGPIPE, should the server be gone, is blocked here
 * and taken back, so the write is EPIPE and the process lives. */
static int write_all(int fd, const char *p, size_t len, int64_t deadline)
{
	sigset_t pipe_set, old;
	int e = 0;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w > 0) {
			p += w;
			len -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };
			int64_t left = deadline - now_ms();

			if (left <= 0) {
				e = ETIMEDOUT;
				break;
			}
			if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR) {
				e = errno;
				break;
			}
			continue;
		}
		e = w < 0 ? errno : EIO;
		break;
	}
	if (e == EPIPE && !sigismember(&old, SIGPIPE)) {
		struct timespec zero = { 0, 0 };

		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return e;
}

/* Write one message (consumed: msg is freed) as one line. A message over
 * the ceiling is refused and the connection stays whole; a write that
 * fails or cannot finish breaks it, since the stream is now cut
 * mid-line. 0, or -1 and err. */
static int write_msg(struct upstream_client *c, json_t *msg, struct tg_error *err)
{
	char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	size_t len;
	int e, broken;

	json_decref(msg);
	if (!text)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	len = strlen(text);
	if (len > UPSTREAM_MAX_MESSAGE) {
		free(text);
		return tg_error_set(err, TG_ERR_LIMIT, "a message over %u bytes to the server",
				    UPSTREAM_MAX_MESSAGE);
	}
	pthread_mutex_lock(&c->wlock);
	pthread_mutex_lock(&c->lock);
	broken = c->broken;
	pthread_mutex_unlock(&c->lock);
	e = 0;
	if (!broken) {
		int64_t deadline = now_ms() + UPSTREAM_WRITE_TIMEOUT_MS;

		/* jansson's compact text has no raw newline: one line */
		e = write_all(c->out_fd, text, len, deadline);
		if (!e)
			e = write_all(c->out_fd, "\n", 1, deadline);
	}
	pthread_mutex_unlock(&c->wlock);
	free(text);
	if (e == ETIMEDOUT)
		client_break(c, "the server did not read its stdin for %d ms",
			     UPSTREAM_WRITE_TIMEOUT_MS);
	else if (e)
		client_break(c, "writing to the server: %s", strerror(e));
	if (broken || e) {
		pthread_mutex_lock(&c->lock);
		tg_error_set(err, TG_ERR_UNAVAILABLE, "upstream connection broken: %s", c->why);
		pthread_mutex_unlock(&c->lock);
		return -1;
	}
	return 0;
}

/* The answer to a server's request: its result, or an error. 0, or -1
 * and err (may be NULL) as write_msg's. */
static int answer(struct upstream_client *c, json_t *id, json_t *result, int code,
		  const char *message, struct tg_error *err)
{
	json_t *msg;

	if (result)
		msg = json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
	else
		msg = json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id, "error",
				"code", code, "message", message);
	return write_msg(c, msg, err);
}

int upstream_client_new(int in_fd, int out_fd, const struct upstream_client_ops *ops,
			struct upstream_client **out, struct tg_error *err)
{
	struct upstream_client *c = calloc(1, sizeof(*c));
	pthread_condattr_t attr;
	int flags;

	tg_error_clear(err);
	*out = NULL;
	if (!c) {
		close(in_fd);
		close(out_fd);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	c->in_fd = in_fd;
	c->out_fd = out_fd;
	if (ops)
		c->ops = *ops;
	flags = fcntl(out_fd, F_GETFL);
	if (flags < 0 || fcntl(out_fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
	    pipe2(c->stop_pipe, O_CLOEXEC) < 0) {
		tg_error_sys(err, errno, "the upstream client's descriptors");
		close(in_fd);
		close(out_fd);
		free(c);
		return -1;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->wlock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&c->answered, &attr);
	pthread_cond_init(&c->dispatched, &attr);
	pthread_condattr_destroy(&attr);
	pthread_cond_init(&c->queued, NULL);
	*out = c;
	return 0;
}

/* --- what the server sends --- */

/* Queue a notification or a request for the dispatcher; past the queue's
 * ceilings a notification is dropped and a request refused at once. */
static void enqueue(struct upstream_client *c, json_t *msg, size_t bytes)
{
	struct client_item *it;
	json_t *id = json_object_get(msg, "id");

	pthread_mutex_lock(&c->lock);
	if (c->items >= UPSTREAM_MAX_QUEUE || c->queued_bytes + bytes > UPSTREAM_MAX_QUEUE_BYTES ||
	    !(it = calloc(1, sizeof(*it)))) {
		if (!id)
			c->stats.dropped++;
		pthread_mutex_unlock(&c->lock);
		if (id)
			answer(c, id, NULL, UPSTREAM_RPC_INTERNAL_ERROR,
			       "client busy: too many messages queued", NULL);
		json_decref(msg);
		return;
	}
	it->msg = msg;
	it->bytes = bytes;
	if (c->tail)
		c->tail->next = it;
	else
		c->head = it;
	c->tail = it;
	c->items++;
	c->queued_bytes += bytes;
	it->seq = ++c->queued_seq;
	pthread_cond_signal(&c->queued);
	pthread_mutex_unlock(&c->lock);
}

/* A response: to its waiter, or counted when nobody waits for it. */
static void take_response(struct upstream_client *c, json_t *msg)
{
	json_t *id = json_object_get(msg, "id"), *error = json_object_get(msg, "error");
	struct client_pending *p = NULL;

	pthread_mutex_lock(&c->lock);
	if (json_is_integer(id))
		for (p = c->pending; p && p->id != json_integer_value(id); p = p->next)
			;
	if (!p || p->answered || p->cancelled) {
		c->stats.unexpected++;
	} else {
		p->is_error = error != NULL;
		p->answer = json_incref(error ? error : json_object_get(msg, "result"));
		p->answered = 1;
		pthread_cond_broadcast(&c->answered);
	}
	pthread_mutex_unlock(&c->lock);
}

/* What kind of message msg is, or NULL and why in *why when it is none. */
static const char *classify(json_t *msg, const char **why)
{
	json_t *id, *method, *params, *v = json_object_get(msg, "jsonrpc");

	*why = NULL;
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) {
		*why = "\"jsonrpc\" is not \"2.0\"";
		return NULL;
	}
	id = json_object_get(msg, "id");
	method = json_object_get(msg, "method");
	if (method) {
		params = json_object_get(msg, "params");
		if (!json_is_string(method))
			*why = "\"method\" is not a string";
		else if (params && !json_is_object(params))
			*why = "\"params\" is not an object";
		else if (id && !json_is_string(id) && !json_is_integer(id))
			*why = "\"id\" is neither a string nor an integer";
		else
			return id ? "request" : "notification";
		return NULL;
	}
	/* a response: an id (null when the server could not read ours) and
	 * exactly one of result and error */
	if (id && !json_object_get(msg, "result") != !json_object_get(msg, "error"))
		return "response";
	*why = "neither a request, a notification nor a response";
	return NULL;
}

static void garbage(struct upstream_client *c, const char *why)
{
	uint64_t n;

	pthread_mutex_lock(&c->lock);
	n = ++c->stats.garbage;
	pthread_mutex_unlock(&c->lock);
	if (n > UPSTREAM_MAX_GARBAGE)
		client_break(c,
			     "malformed: more than %u lines that are not JSON-RPC (the last: %s)",
			     UPSTREAM_MAX_GARBAGE, why);
}

void upstream_client_handle_line(struct upstream_client *c, const char *line, size_t len)
{
	json_error_t jerr;
	const char *kind, *why, *method;
	json_t *msg;

	if (len && line[len - 1] == '\r')
		len--;
	if (!len)
		return; /* an empty line: nothing, not even garbage */
	if (len > UPSTREAM_MAX_MESSAGE) {
		client_break(c, "a message over %u bytes", UPSTREAM_MAX_MESSAGE);
		return;
	}
	msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!msg || !json_is_object(msg)) {
		garbage(c, msg ? "not a JSON object" : "not JSON");
		json_decref(msg);
		return;
	}
	kind = classify(msg, &why);
	if (!kind) {
		garbage(c, why);
		json_decref(msg);
		return;
	}
	method = json_string_value(json_object_get(msg, "method"));
	if (strcmp(kind, "response") == 0) {
		take_response(c, msg);
		json_decref(msg);
		return;
	}
	if (strcmp(kind, "request") == 0 && strcmp(method, "ping") == 0) {
		/* answered at once, whoever the callbacks are (MCP "Ping") */
		answer(c, json_object_get(msg, "id"), json_object(), 0, NULL, NULL);
		json_decref(msg);
		return;
	}
	if (strcmp(method, "notifications/tools/list_changed") == 0 &&
	    strcmp(kind, "notification") == 0) {
		pthread_mutex_lock(&c->lock);
		c->stats.list_changed++;
		pthread_mutex_unlock(&c->lock);
	}
	enqueue(c, msg, len);
}

/* --- the dispatcher: callbacks --- */

static void dispatch(struct upstream_client *c, json_t *msg, uint64_t seq)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params"), *id = json_object_get(msg, "id"), *result;
	struct upstream_rpc_error e = { 0, "" };

	if (!id) {
		if (c->ops.notification)
			c->ops.notification(c->ops.ctx, method, params);
		pthread_mutex_lock(&c->lock);
		c->stats.notifications++;
		pthread_mutex_unlock(&c->lock);
		return;
	}
	result = NULL;
	if (c->ops.request)
		result = c->ops.request(c->ops.ctx, id, method, params, seq, &e);
	else
		snprintf(e.message, sizeof(e.message), "method not found: %.200s", method);
	if (!result && e.code == UPSTREAM_RPC_DEFERRED)
		return; /* upstream_client_answer will */
	if (!result && !e.code)
		e.code = c->ops.request ? UPSTREAM_RPC_INTERNAL_ERROR
					: UPSTREAM_RPC_METHOD_NOT_FOUND;
	if (!result && !e.message[0])
		snprintf(e.message, sizeof(e.message), "%s refused", method);
	upstream_client_answer(c, id, result, e.code, e.message, NULL);
}

int upstream_client_answer(struct upstream_client *c, json_t *id, json_t *result, int code,
			   const char *message, struct tg_error *err)
{
	struct tg_error mine;
	int rc;

	if (!err)
		err = &mine;
	tg_error_clear(err);
	/* counted before the answer goes: whoever sees the answer's effect
	 * sees the count */
	pthread_mutex_lock(&c->lock);
	c->stats.requests++;
	pthread_mutex_unlock(&c->lock);
	rc = answer(c, id, result, result || code ? code : UPSTREAM_RPC_INTERNAL_ERROR,
		    message ? message : "refused", err);
	if (rc < 0 && err->code == TG_ERR_LIMIT) {
		/* over the ceiling: nothing went, the request is not answered */
		pthread_mutex_lock(&c->lock);
		c->stats.requests--;
		pthread_mutex_unlock(&c->lock);
	}
	return rc;
}

uint64_t upstream_client_read_seq(struct upstream_client *c)
{
	uint64_t seq;

	pthread_mutex_lock(&c->lock);
	seq = c->queued_seq;
	pthread_mutex_unlock(&c->lock);
	return seq;
}

static struct client_item *pop_locked(struct upstream_client *c)
{
	struct client_item *it = c->head;

	if (it) {
		c->head = it->next;
		if (!c->head)
			c->tail = NULL;
		c->items--;
		c->queued_bytes -= it->bytes;
	}
	return it;
}

unsigned upstream_client_drain(struct upstream_client *c)
{
	struct client_item *it;
	unsigned n = 0;

	for (;;) {
		pthread_mutex_lock(&c->lock);
		it = pop_locked(c);
		pthread_mutex_unlock(&c->lock);
		if (!it)
			return n;
		dispatch(c, it->msg, it->seq);
		json_decref(it->msg);
		free(it);
		n++;
		pthread_mutex_lock(&c->lock);
		c->done_seq++;
		pthread_cond_broadcast(&c->dispatched);
		pthread_mutex_unlock(&c->lock);
	}
}

int upstream_client_flush(struct upstream_client *c, int timeout_ms)
{
	struct timespec until;
	uint64_t target;
	int rc = 0;

	deadline_in(&until, timeout_ms);
	pthread_mutex_lock(&c->lock);
	target = c->queued_seq;
	while (c->done_seq < target && !c->stopping && rc == 0)
		rc = pthread_cond_timedwait(&c->dispatched, &c->lock, &until);
	rc = c->done_seq >= target ? 0 : -1;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

static void *dispatcher_main(void *arg)
{
	struct upstream_client *c = arg;
	struct client_item *it;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->head && !c->stopping)
			pthread_cond_wait(&c->queued, &c->lock);
		if (c->stopping)
			break;
		it = pop_locked(c);
		pthread_mutex_unlock(&c->lock);
		dispatch(c, it->msg, it->seq);
		json_decref(it->msg);
		free(it);
		pthread_mutex_lock(&c->lock);
		c->done_seq++;
		pthread_cond_broadcast(&c->dispatched);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* --- the reader: framing --- */

/* Hand every complete line in buf[0, *len) to handle_line and keep the
 * rest at the start of buf. */
static void take_lines(struct upstream_client *c, char *buf, size_t *len, size_t *scan)
{
	size_t start = 0;
	char *nl;

	while ((nl = memchr(buf + *scan, '\n', *len - *scan)) != NULL) {
		size_t end = (size_t)(nl - buf);

		upstream_client_handle_line(c, buf + start, end - start);
		start = end + 1;
		*scan = start;
	}
	if (start) {
		memmove(buf, buf + start, *len - start);
		*len -= start;
	}
	*scan = *len;
}

static void *reader_main(void *arg)
{
	struct upstream_client *c = arg;
	size_t cap = 64u << 10, len = 0, scan = 0;
	char *buf = malloc(cap);

	if (!buf) {
		client_break(c, "out of memory");
		return NULL;
	}
	for (;;) {
		struct pollfd pfd[2] = { { .fd = c->in_fd, .events = POLLIN },
					 { .fd = c->stop_pipe[0], .events = POLLIN } };
		ssize_t n;

		take_lines(c, buf, &len, &scan);
		if (upstream_client_broken(c, NULL, 0))
			break; /* malformed, or a write failed: nothing more to read */
		if (len > UPSTREAM_MAX_MESSAGE) {
			client_break(c, "a message over %u bytes", UPSTREAM_MAX_MESSAGE);
			break;
		}
		if (len == cap) {
			/* at most one byte past the ceiling: enough to know */
			size_t bigger = cap * 2 > UPSTREAM_MAX_MESSAGE + 1
						? UPSTREAM_MAX_MESSAGE + 1 : cap * 2;
			char *b = realloc(buf, bigger);

			if (!b) {
				client_break(c, "out of memory");
				break;
			}
			buf = b;
			cap = bigger;
		}
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			client_break(c, "waiting for the server: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents)
			break; /* upstream_client_free */
		n = read(c->in_fd, buf + len, cap - len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			client_break(c, "reading from the server: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			/* a last line without its newline still counts */
			if (len)
				upstream_client_handle_line(c, buf, len);
			client_break(c, "EOF: the server closed its stdout");
			break;
		}
		len += (size_t)n;
	}
	free(buf);
	return NULL;
}

int upstream_client_start(struct upstream_client *c, struct tg_error *err)
{
	int rc;

	tg_error_clear(err);
	rc = pthread_create(&c->dispatcher, NULL, dispatcher_main, c);
	if (rc)
		return tg_error_sys(err, rc, "the upstream client's dispatcher thread");
	rc = pthread_create(&c->reader, NULL, reader_main, c);
	if (rc) {
		pthread_mutex_lock(&c->lock);
		c->stopping = 1;
		pthread_cond_signal(&c->queued);
		pthread_mutex_unlock(&c->lock);
		pthread_join(c->dispatcher, NULL);
		c->stopping = 0;
		return tg_error_sys(err, rc, "the upstream client's reader thread");
	}
	c->started = 1;
	return 0;
}

void upstream_client_free(struct upstream_client *c)
{
	struct client_pending *p;
	struct client_item *it;

	if (!c)
		return;
	if (c->started) {
		ssize_t w;

		pthread_mutex_lock(&c->lock);
		c->stopping = 1;
		pthread_cond_signal(&c->queued);
		pthread_cond_broadcast(&c->dispatched);
		pthread_mutex_unlock(&c->lock);
		do
			w = write(c->stop_pipe[1], "x", 1);
		while (w < 0 && errno == EINTR);
		pthread_join(c->reader, NULL);
		pthread_join(c->dispatcher, NULL);
	}
	while ((p = c->pending) != NULL) {
		c->pending = p->next;
		json_decref(p->answer);
		free(p);
	}
	while ((it = pop_locked(c)) != NULL) {
		json_decref(it->msg);
		free(it);
	}
	json_decref(c->init_result);
	json_decref(c->meta);
	close(c->in_fd);
	close(c->out_fd);
	close(c->stop_pipe[0]);
	close(c->stop_pipe[1]);
	pthread_cond_destroy(&c->queued);
	pthread_cond_destroy(&c->dispatched);
	pthread_cond_destroy(&c->answered);
	pthread_mutex_destroy(&c->wlock);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* --- requests --- */

static void unlink_pending(struct upstream_client *c, struct client_pending *p)
{
	struct client_pending **pp;

	for (pp = &c->pending; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			return;
		}
}

/* params (borrowed, may be NULL) with meta's members in its _meta, over
 * any of the caller's of the same name: a new reference, NULL out of
 * memory (the message is then sent without params, and refused). */
static json_t *with_meta(json_t *params, json_t *meta)
{
	json_t *p = params ? json_copy(params) : json_object();
	json_t *m = json_object_get(p, "_meta");

	m = json_is_object(m) ? json_copy(m) : json_object();
	if (!p || !m || json_object_update(m, meta) < 0) {
		json_decref(m);
		json_decref(p);
		return NULL;
	}
	if (json_object_set_new(p, "_meta", m) < 0) { /* m is gone either way */
		json_decref(p);
		return NULL;
	}
	return p;
}

int64_t upstream_client_send(struct upstream_client *c, const char *method, json_t *params,
			     struct tg_error *err)
{
	struct client_pending *p;
	json_t *msg;
	int64_t id;

	tg_error_clear(err);
	p = calloc(1, sizeof(*p));
	if (!p)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	pthread_mutex_lock(&c->lock);
	if (c->broken) {
		tg_error_set(err, TG_ERR_UNAVAILABLE, "%s: upstream connection broken: %s", method,
			     c->why);
		pthread_mutex_unlock(&c->lock);
		free(p);
		return -1;
	}
	if (!c->ready && strcmp(method, "initialize") != 0 && strcmp(method, "ping") != 0 &&
	    strcmp(method, "server/discover") != 0) {
		pthread_mutex_unlock(&c->lock);
		free(p);
		return tg_error_set(err, TG_ERR_INVALID, "%s: the upstream is not initialized",
				    method);
	}
	id = p->id = ++c->next_id;
	snprintf(p->method, sizeof(p->method), "%s", method);
	p->next = c->pending;
	c->pending = p;
	/* the 2026-07-28 era: the version and capabilities in every request */
	params = c->meta ? with_meta(params, c->meta) : json_incref(params);
	pthread_mutex_unlock(&c->lock);
	msg = json_pack("{s:s,s:I,s:s}", "jsonrpc", "2.0", "id", (json_int_t)id, "method", method);
	if (msg && params && json_object_set(msg, "params", params) < 0) {
		json_decref(msg);
		msg = NULL;
	}
	json_decref(params);
	if (write_msg(c, msg, err) < 0) {
		pthread_mutex_lock(&c->lock);
		unlink_pending(c, p);
		pthread_mutex_unlock(&c->lock);
		free(p);
		return tg_error_wrap(err, "%s", method);
	}
	return id;
}

/* notifications/cancelled for a request given up (never for initialize:
 * MCP "Cancellation" forbids it). A failure here changes nothing for the
 * caller: the request is forgotten either way. */
static void send_cancelled(struct upstream_client *c, const struct client_pending *p,
			   const char *reason)
{
	json_t *params;

	if (strcmp(p->method, "initialize") == 0)
		return;
	params = json_pack("{s:I,s:s}", "requestId", (json_int_t)p->id, "reason", reason);
	if (params)
		upstream_client_notify(c, "notifications/cancelled", params, NULL);
	json_decref(params);
}

/* The error a server answered with, in err: "METHOD: MESSAGE (code N)". */
static void rpc_error_message(const struct client_pending *p, struct tg_error *err)
{
	json_t *code = json_object_get(p->answer, "code");
	const char *message = json_string_value(json_object_get(p->answer, "message"));

	tg_error_set(err, TG_ERR_INVALID, "%s: the server answered an error: %.200s (code %lld)",
		     p->method, message ? message : "(no message)",
		     json_is_integer(code) ? (long long)json_integer_value(code) : 0LL);
}

/* id's request in flight, waited for (the caller holds lock) until it
 * is settled or ms have passed: NULL when none is in flight; *timed_out. */
static struct client_pending *settle_locked(struct upstream_client *c, int64_t id, int ms,
					    int *timed_out)
{
	struct client_pending *p;
	struct timespec until;

	deadline_in(&until, ms);
	*timed_out = 0;
	for (p = c->pending; p && p->id != id; p = p->next)
		;
	while (p && !p->answered && !p->cancelled && !c->broken && !*timed_out)
		*timed_out = pthread_cond_timedwait(&c->answered, &c->lock, &until) == ETIMEDOUT;
	return p;
}

int upstream_client_settled(struct upstream_client *c, int64_t id, int ms)
{
	struct client_pending *p;
	int timed_out, settled;

	pthread_mutex_lock(&c->lock);
	p = settle_locked(c, id, ms, &timed_out);
	settled = !p || p->answered || p->cancelled || c->broken;
	pthread_mutex_unlock(&c->lock);
	return settled;
}

int upstream_client_wait(struct upstream_client *c, int64_t id, int timeout_ms, json_t **result,
			 struct tg_error *err)
{
	struct client_pending *p;
	int timed_out, rc;
	char why[sizeof(c->why)];

	tg_error_clear(err);
	*result = NULL;
	pthread_mutex_lock(&c->lock);
	p = settle_locked(c, id, timeout_ms, &timed_out);
	if (!p) {
		pthread_mutex_unlock(&c->lock);
		return tg_error_set(err, TG_ERR_INVALID, "no request %lld in flight",
				    (long long)id);
	}
	unlink_pending(c, p);
	memcpy(why, c->why, sizeof(why));
	pthread_mutex_unlock(&c->lock);
	/* an answer that came wins over a break or a deadline after it */
	if (p->answered) {
		rc = p->is_error;
		if (rc)
			rpc_error_message(p, err);
		*result = p->answer;
		p->answer = NULL;
	} else if (p->cancelled) {
		send_cancelled(c, p, p->reason);
		rc = tg_error_set(err, TG_ERR_INVALID, "%s: cancelled: %s", p->method, p->reason);
	} else if (!timed_out) {
		rc = tg_error_set(err, TG_ERR_UNAVAILABLE, "%s: upstream connection broken: %s",
				  p->method, why);
	} else {
		send_cancelled(c, p, "timed out");
		rc = tg_error_set(err, TG_ERR_LIMIT, "%s: no answer within %d ms", p->method,
				  timeout_ms);
	}
	free(p);
	return rc;
}

int upstream_client_request(struct upstream_client *c, const char *method, json_t *params,
			    int timeout_ms, json_t **result, struct tg_error *err)
{
	int64_t id = upstream_client_send(c, method, params, err);

	*result = NULL;
	return id < 0 ? -1 : upstream_client_wait(c, id, timeout_ms, result, err);
}

void upstream_client_cancel(struct upstream_client *c, int64_t id, const char *reason)
{
	struct client_pending *p;

	pthread_mutex_lock(&c->lock);
	for (p = c->pending; p && p->id != id; p = p->next)
		;
	if (p && !p->answered && !p->cancelled) {
		p->cancelled = 1;
		snprintf(p->reason, sizeof(p->reason), "%s", reason ? reason : "cancelled");
		pthread_cond_broadcast(&c->answered);
	}
	pthread_mutex_unlock(&c->lock);
}

int upstream_client_notify(struct upstream_client *c, const char *method, json_t *params,
			   struct tg_error *err)
{
	json_t *msg = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method", method);

	tg_error_clear(err);
	if (msg && params && json_object_set(msg, "params", params) < 0) {
		json_decref(msg);
		msg = NULL;
	}
	if (write_msg(c, msg, err) < 0)
		return tg_error_wrap(err, "%s", method);
	return 0;
}

int upstream_client_broken(struct upstream_client *c, char *why, size_t size)
{
	int broken;

	pthread_mutex_lock(&c->lock);
	broken = c->broken;
	if (why && size)
		snprintf(why, size, "%s", broken ? c->why : "");
	pthread_mutex_unlock(&c->lock);
	return broken;
}

void upstream_client_get_stats(struct upstream_client *c, struct upstream_client_stats *s)
{
	pthread_mutex_lock(&c->lock);
	*s = c->stats;
	pthread_mutex_unlock(&c->lock);
}

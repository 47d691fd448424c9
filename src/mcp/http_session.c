/*
 * The session registry of the Streamable HTTP transport (docs/MCP.md,
 * "Sessions"): the legacy sessions initialize creates, named by 128
 * random bits in Mcp-Session-Id, each its principal's, ended by DELETE or
 * after max_idle of silence; the one-request sessions of the 2026-07-28
 * era, listed so that stop finds and waits for them; and the streams a
 * session keeps for resuming. A session in use stays listed, ended, until
 * its last user puts it back, and only then is freed.
 *
 * It owns the list and its ceilings (MAX_SESSIONS, and
 * MAX_SESSIONS_PER_PRINCIPAL so that one principal cannot take every
 * slot); it never reads a request nor writes an answer, and never frees
 * a session someone still uses.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "mcp/http_int.h"
#include "mcp/mcp_int.h"

#define MAX_SESSIONS 1024
#define MAX_SESSIONS_PER_PRINCIPAL 64

/* What a session sends outside any request: on its GET stream, when the
 * client opened one; else it is dropped (the caller holds s.lock). */
static void session_message(void *ctx, const char *text, size_t len)
{
	struct http_session *hs = ctx;

	(void)len;
	if (hs && hs->get)
		mcp_stream_send_text(hs->get, text);
}

static void session_free(struct http_session *hs)
{
	size_t i;

	mcp_session_release(&hs->s, 1);
	for (i = 0; i < hs->nstreams; i++)
		mcp_stream_unref(hs->kept[i]);
	mcp_stream_unref(hs->get);
	free(hs);
}

/* The bucket of by_id for id (FNV-1a). */
static unsigned id_bucket(const char *id)
{
	uint32_t x = 2166136261u;

	for (; *id; id++)
		x = (x ^ (unsigned char)*id) * 16777619u;
	return x % HTTP_ID_BUCKETS;
}

/* List hs (the caller holds lock); a named one in by_id too. */
static void link_session(struct tg_mcp_http *h, struct http_session *hs)
{
	hs->next = h->sessions;
	h->sessions = hs;
	h->nsessions++;
	if (hs->id[0]) {
		unsigned b = id_bucket(hs->id);

		hs->id_next = h->by_id[b];
		h->by_id[b] = hs;
	}
}

/* Unlink hs (the caller holds lock). */
static void unlink_session(struct tg_mcp_http *h, struct http_session *hs)
{
	struct http_session **p;

	if (hs->id[0])
		for (p = &h->by_id[id_bucket(hs->id)]; *p; p = &(*p)->id_next)
			if (*p == hs) {
				*p = hs->id_next;
				break;
			}
	for (p = &h->sessions; *p; p = &(*p)->next)
		if (*p == hs) {
			*p = hs->next;
			h->nsessions--;
			return;
		}
}

/* Sessions silent for longer than max_idle end; ended sessions nobody
 * uses any more are freed (the caller holds lock). A session in use
 * stays listed, ended, until its last user puts it back, so that stop
 * can find and wait for it. */
/* 1 if hs, unused, has been silent past max_idle at now (the caller
 * holds lock). */
static int idle_past(const struct tg_mcp_http *h, const struct http_session *hs, time_t now)
{
	return hs->users == 0 && now - hs->last_used > (time_t)h->max_idle;
}

void http_sessions_expire(struct tg_mcp_http *h, time_t now)
{
	struct http_session *hs, *next;

	for (hs = h->sessions; hs; hs = next) {
		next = hs->next;
		if (!hs->ended && idle_past(h, hs, now))
			hs->ended = 1;
		if (hs->ended && hs->users == 0) {
			unlink_session(h, hs);
			session_free(hs); /* nothing runs in it: no waiting */
		}
	}
}

static int live_sessions_of(const struct tg_mcp_http *h, const char *principal)
{
	const struct http_session *hs;
	int n = 0;

	for (hs = h->sessions; hs; hs = hs->next)
		if (!hs->ended && strcmp(hs->s.principal, principal) == 0)
			n++;
	return n;
}

struct http_session *http_session_new(struct tg_mcp_http *h, const char *principal,
				      const char **why)
{
	struct http_session *hs = calloc(1, sizeof(*hs));
	unsigned char rnd[16];
	size_t i;

	*why = "Service Unavailable: out of memory";
	if (!hs || getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		free(hs);
		return NULL;
	}
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(hs->id + 2 * i, 3, "%02x", rnd[i]);
	mcp_session_init(&hs->s, h->mcp, session_message, hs);
	snprintf(hs->s.principal, sizeof(hs->s.principal), "%s", principal);
	hs->s.transport = "tcp";
	hs->s.session_id = hs->id;
	hs->last_used = time(NULL);
	hs->users = 1;
	pthread_mutex_lock(&h->lock);
	http_sessions_expire(h, hs->last_used);
	/* one principal cannot take every slot from the others */
	if (h->stopping || h->nsessions >= MAX_SESSIONS ||
	    live_sessions_of(h, principal) >= MAX_SESSIONS_PER_PRINCIPAL) {
		*why = h->nsessions >= MAX_SESSIONS ? "Service Unavailable: too many sessions"
						     : "Service Unavailable: too many sessions for "
						       "this principal";
		pthread_mutex_unlock(&h->lock);
		session_free(hs);
		return NULL;
	}
	link_session(h, hs);
	pthread_mutex_unlock(&h->lock);
	return hs;
}

/* The live session named id, in use by the caller until http_session_put. */
struct http_session *http_session_get(struct tg_mcp_http *h, const char *id)
{
	struct http_session *hs;
	time_t now = time(NULL);

	pthread_mutex_lock(&h->lock);
	/* the list is swept once a second, not at each request (a thousand
	 * sessions walked under the lock); the one named is judged now */
	if (now != h->swept) {
		http_sessions_expire(h, now);
		h->swept = now;
	}
	for (hs = h->by_id[id_bucket(id)]; hs; hs = hs->id_next)
		if (!hs->ended && strcmp(hs->id, id) == 0)
			break;
	if (hs && idle_past(h, hs, now)) {
		hs->ended = 1; /* freed by the next sweep */
		hs = NULL;
	}
	if (hs) {
		hs->users++;
		hs->last_used = now;
	}
	pthread_mutex_unlock(&h->lock);
	return hs;
}

void http_session_put(struct tg_mcp_http *h, struct http_session *hs)
{
	int last;

	pthread_mutex_lock(&h->lock);
	hs->last_used = time(NULL);
	last = --hs->users == 0 && hs->ended;
	if (last)
		unlink_session(h, hs);
	pthread_cond_broadcast(&h->idle);
	pthread_mutex_unlock(&h->lock);
	if (last)
		session_free(hs);
}

/* Keep st for resuming (the caller holds lock). Past MAX_STREAMS, the
 * oldest kept stream nobody reads goes (ended: its call's further events
 * go nowhere), never the GET stream; when every one is read, st is not
 * kept (it cannot be resumed). */
void http_session_keep_stream(struct http_session *hs, struct mcp_stream *st)
{
	size_t i;

	if (hs->nstreams == MAX_STREAMS) {
		for (i = 0; i < hs->nstreams; i++)
			if (hs->kept[i] != hs->get && !mcp_stream_busy(hs->kept[i]))
				break;
		if (i == hs->nstreams)
			return;
		mcp_stream_end(hs->kept[i]);
		mcp_stream_unref(hs->kept[i]);
		memmove(hs->kept + i, hs->kept + i + 1, (--hs->nstreams - i) * sizeof(hs->kept[0]));
	}
	mcp_stream_ref(st);
	hs->kept[hs->nstreams++] = st;
}

/* Let st go (the caller holds lock). */
void http_session_forget_stream(struct http_session *hs, struct mcp_stream *st)
{
	size_t i;

	for (i = 0; i < hs->nstreams; i++)
		if (hs->kept[i] == st) {
			memmove(hs->kept + i, hs->kept + i + 1,
				(--hs->nstreams - i) * sizeof(hs->kept[0]));
			mcp_stream_unref(st);
			return;
		}
}

/* The session's streams end: their readers finish (the caller holds lock). */
static void end_streams(struct http_session *hs)
{
	size_t i;

	for (i = 0; i < hs->nstreams; i++)
		mcp_stream_end(hs->kept[i]);
	pthread_mutex_lock(&hs->s.lock);
	if (hs->get)
		mcp_stream_end(hs->get);
	pthread_mutex_unlock(&hs->s.lock);
}

/* Stopping: every session ends, its streams, then its calls (the caller
 * holds lock). */
void http_sessions_end_all(struct tg_mcp_http *h)
{
	struct http_session *hs;

	for (hs = h->sessions; hs; hs = hs->next) {
		hs->ended = 1;
		end_streams(hs);
		mcp_session_cancel(&hs->s);
	}
}

/* DELETE, or initialize refused: the session ends now, its calls
 * cancelled; the last user frees it. */
void http_session_end(struct tg_mcp_http *h, struct http_session *hs)
{
	pthread_mutex_lock(&h->lock);
	hs->ended = 1;
	end_streams(hs);
	pthread_mutex_unlock(&h->lock);
	mcp_session_cancel(&hs->s);
}

/* A session for one modern request: listed (so that stop finds and waits
 * for it) but ended from the start (no request can name it), freed when
 * its request is done. */
struct http_session *http_session_once(struct tg_mcp_http *h, const char *principal)
{
	struct http_session *hs = calloc(1, sizeof(*hs));

	if (!hs)
		return NULL;
	mcp_session_init(&hs->s, h->mcp, session_message, NULL);
	snprintf(hs->s.principal, sizeof(hs->s.principal), "%s", principal);
	hs->s.transport = "tcp";
	hs->users = 1;
	hs->ended = 1;
	pthread_mutex_lock(&h->lock);
	if (h->stopping) {
		pthread_mutex_unlock(&h->lock);
		session_free(hs);
		return NULL;
	}
	link_session(h, hs);
	pthread_mutex_unlock(&h->lock);
	return hs;
}

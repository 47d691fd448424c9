/*
 * The approval console's sign-in sessions (docs/CONSOLE.md): a session id
 * in an HttpOnly cookie maps, on the server only, to the bearer token the
 * person signed in with and to the CSRF token their page sends back with
 * every change. The token never returns to the browser: each request is
 * identified again by it (tg_gate_identify), so its expiry, its
 * revocation count at once, as for a bearer caller (the policy is the
 * one serve started with: SIGHUP reloads the catalogue only).
 *
 * Owns: the sessions, their lifetimes (idle and absolute), their bound.
 * Must never: compare an id or a CSRF token in variable time, keep a
 * token after its session ends without wiping it, or hold more than
 * CONSOLE_MAX_SESSIONS sessions (a principal's oldest gives way to its
 * newest past CONSOLE_MAX_PER_PRINCIPAL).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/console_int.h"
#include "util/sodium.h"

struct console_session {
	unsigned char id[CONSOLE_ID_BYTES];
	unsigned char csrf[CONSOLE_ID_BYTES];
	char principal[128];
	char *token;                 /* NULL: the slot is free */
	size_t token_len;
	int64_t created, used;
};

struct console_login {
	unsigned char state[CONSOLE_ID_BYTES];
	unsigned char binding[CONSOLE_ID_BYTES];
	char verifier[CONSOLE_VERIFIER];
	size_t idp;
	uint64_t client;             /* who began it (http_front_client) */
	int64_t created;             /* 0: the slot is free */
};

struct console_sessions {
	pthread_mutex_t lock;
	struct console_session v[CONSOLE_MAX_SESSIONS];
	struct console_login logins[CONSOLE_MAX_LOGINS];
};

struct console_sessions *console_sessions_new(void)
{
	struct console_sessions *s = calloc(1, sizeof(*s));

	if (s && pthread_mutex_init(&s->lock, NULL) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

static void drop(struct console_session *e)
{
	if (e->token) {
		sodium_memzero(e->token, e->token_len);
		free(e->token);
	}
	sodium_memzero(e, sizeof(*e));
}

void console_sessions_free(struct console_sessions *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < CONSOLE_MAX_SESSIONS; i++)
		drop(&s->v[i]);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static int alive(const struct console_session *e, int64_t now)
{
	return e->token && now - e->used < CONSOLE_IDLE_S && now - e->created < CONSOLE_ABSOLUTE_S;
}

/* 0 and the bytes of hex, or -1: not 2 * n hex digits. */
static int unhex(const char *hex, unsigned char *out, size_t n)
{
	size_t len;

	if (!hex || strlen(hex) != 2 * n)
		return -1;
	if (sodium_hex2bin(out, n, hex, 2 * n, NULL, &len, NULL) != 0 || len != n)
		return -1;
	return 0;
}

/* The slot for a new session of principal: a free or dead one, else the
 * principal's oldest once it has its share; NULL when every slot is
 * another's and alive. */
static struct console_session *slot_for(struct console_sessions *s, const char *principal,
					int64_t now)
{
	struct console_session *free_slot = NULL, *oldest = NULL;
	size_t i, mine = 0;

	for (i = 0; i < CONSOLE_MAX_SESSIONS; i++) {
		struct console_session *e = &s->v[i];

		if (!alive(e, now)) {
			drop(e);
			if (!free_slot)
				free_slot = e;
			continue;
		}
		if (strcmp(e->principal, principal) != 0)
			continue;
		mine++;
		if (!oldest || e->created < oldest->created)
			oldest = e;
	}
	if (oldest && mine >= CONSOLE_MAX_PER_PRINCIPAL) {
		drop(oldest);
		return oldest;
	}
	return free_slot;
}

int console_session_open(struct console_sessions *s, const char *principal, const char *token,
			 size_t len, int64_t now, char id_hex[CONSOLE_HEX], char csrf_hex[CONSOLE_HEX])
{
	struct console_session *e;
	char *copy = malloc(len + 1);

	if (!copy)
		return -1;
	memcpy(copy, token, len);
	copy[len] = '\0';
	pthread_mutex_lock(&s->lock);
	e = slot_for(s, principal, now);
	if (!e) {
		pthread_mutex_unlock(&s->lock);
		sodium_memzero(copy, len);
		free(copy);
		return 1;
	}
	randombytes_buf(e->id, sizeof(e->id));
	randombytes_buf(e->csrf, sizeof(e->csrf));
	snprintf(e->principal, sizeof(e->principal), "%s", principal);
	e->token = copy;
	e->token_len = len;
	e->created = e->used = now;
	sodium_bin2hex(id_hex, CONSOLE_HEX, e->id, sizeof(e->id));
	sodium_bin2hex(csrf_hex, CONSOLE_HEX, e->csrf, sizeof(e->csrf));
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* The session whose id is id (every slot looked at, in constant time
 * each); NULL if none. The lock is held. */
static struct console_session *find(struct console_sessions *s, const unsigned char *id)
{
	struct console_session *found = NULL;
	size_t i;

	for (i = 0; i < CONSOLE_MAX_SESSIONS; i++)
		if (s->v[i].token && sodium_memcmp(s->v[i].id, id, CONSOLE_ID_BYTES) == 0)
			found = &s->v[i];
	return found;
}

static int session_get(struct console_sessions *s, const char *id_hex, const char *csrf_hex,
		       int64_t now, int touch, char **token, char csrf_out[CONSOLE_HEX]);

int console_session_get(struct console_sessions *s, const char *id_hex, const char *csrf_hex,
			int64_t now, char **token, char csrf_out[CONSOLE_HEX])
{
	return session_get(s, id_hex, csrf_hex, now, 1, token, csrf_out);
}

int console_session_peek(struct console_sessions *s, const char *id_hex, int64_t now,
			 char **token)
{
	return session_get(s, id_hex, NULL, now, 0, token, NULL);
}

static int session_get(struct console_sessions *s, const char *id_hex, const char *csrf_hex,
		       int64_t now, int touch, char **token, char csrf_out[CONSOLE_HEX])
{
	unsigned char id[CONSOLE_ID_BYTES], csrf[CONSOLE_ID_BYTES];
	struct console_session *e;
	int rc = 0;

	*token = NULL;
	if (unhex(id_hex, id, sizeof(id)) < 0)
		return 1;
	pthread_mutex_lock(&s->lock);
	e = find(s, id);
	if (e && !alive(e, now)) {
		drop(e);
		e = NULL;
	}
	if (!e) {
		rc = 1;
	} else if (csrf_hex && (unhex(csrf_hex, csrf, sizeof(csrf)) < 0 ||
				sodium_memcmp(csrf, e->csrf, sizeof(csrf)) != 0)) {
		rc = 2;
	} else if (!(*token = strdup(e->token))) {
		rc = -1;
	} else {
		if (touch)
			e->used = now;
		if (csrf_out)
			sodium_bin2hex(csrf_out, CONSOLE_HEX, e->csrf, sizeof(e->csrf));
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void console_session_close(struct console_sessions *s, const char *id_hex)
{
	unsigned char id[CONSOLE_ID_BYTES];
	struct console_session *e;

	if (unhex(id_hex, id, sizeof(id)) < 0)
		return;
	pthread_mutex_lock(&s->lock);
	e = find(s, id);
	if (e)
		drop(e);
	pthread_mutex_unlock(&s->lock);
}

void console_token_free(char *token)
{
	if (token) {
		sodium_memzero(token, strlen(token));
		free(token);
	}
}

/* ---- sign-ins with an identity provider under way ------------------------------ */

/* The slot for a new sign-in of client (the caller holds the lock): a
 * free or lapsed one; else, all taken, the oldest of the client holding
 * the most, so that one who begins sign-ins by the hundred pushes out
 * their own, not another person's half-way at the provider. */
static struct console_login *login_slot(struct console_sessions *s, int64_t now)
{
	struct console_login *e = &s->logins[0];
	size_t i, k, most = 0;

	for (i = 0; i < CONSOLE_MAX_LOGINS; i++)
		if (!s->logins[i].created || now - s->logins[i].created >= CONSOLE_LOGIN_S)
			return &s->logins[i];
	for (i = 0; i < CONSOLE_MAX_LOGINS; i++) {
		struct console_login *l = &s->logins[i];
		size_t same = 0;

		for (k = 0; k < CONSOLE_MAX_LOGINS; k++)
			same += s->logins[k].client == l->client;
		if (same > most || (same == most && l->created < e->created)) {
			e = l;
			most = same;
		}
	}
	return e;
}

void console_login_begin(struct console_sessions *s, size_t idp, uint64_t client, int64_t now,
			 char state_hex[CONSOLE_HEX], char binding_hex[CONSOLE_HEX],
			 char verifier[CONSOLE_VERIFIER])
{
	unsigned char v[32];
	struct console_login *e;

	pthread_mutex_lock(&s->lock);
	e = login_slot(s, now);
	randombytes_buf(e->state, sizeof(e->state));
	randombytes_buf(e->binding, sizeof(e->binding));
	randombytes_buf(v, sizeof(v));
	/* RFC 7636 4.1: 43 characters of the unreserved set */
	sodium_bin2base64(e->verifier, sizeof(e->verifier), v, sizeof(v),
			  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	e->idp = idp;
	e->client = client;
	e->created = now;
	sodium_bin2hex(state_hex, CONSOLE_HEX, e->state, sizeof(e->state));
	sodium_bin2hex(binding_hex, CONSOLE_HEX, e->binding, sizeof(e->binding));
	memcpy(verifier, e->verifier, CONSOLE_VERIFIER);
	sodium_memzero(v, sizeof(v));
	pthread_mutex_unlock(&s->lock);
}

void console_login_drop(struct console_sessions *s, const char *state_hex)
{
	unsigned char state[CONSOLE_ID_BYTES];
	size_t i;

	if (unhex(state_hex, state, sizeof(state)) < 0)
		return;
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < CONSOLE_MAX_LOGINS; i++)
		if (s->logins[i].created &&
		    sodium_memcmp(s->logins[i].state, state, sizeof(state)) == 0)
			sodium_memzero(&s->logins[i], sizeof(s->logins[i]));
	pthread_mutex_unlock(&s->lock);
}

int console_login_take(struct console_sessions *s, const char *state_hex, const char *binding_hex,
		       int64_t now, size_t *idp, char verifier[CONSOLE_VERIFIER])
{
	unsigned char state[CONSOLE_ID_BYTES], binding[CONSOLE_ID_BYTES];
	struct console_login *found = NULL;
	size_t i;
	int rc = 1;

	if (unhex(state_hex, state, sizeof(state)) < 0 ||
	    unhex(binding_hex, binding, sizeof(binding)) < 0)
		return 1;
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < CONSOLE_MAX_LOGINS; i++)
		if (s->logins[i].created &&
		    sodium_memcmp(s->logins[i].state, state, sizeof(state)) == 0)
			found = &s->logins[i];
	if (found) {
		/* once, whatever comes of it; the browser that began it only */
		if (now - found->created < CONSOLE_LOGIN_S &&
		    sodium_memcmp(found->binding, binding, sizeof(binding)) == 0) {
			*idp = found->idp;
			memcpy(verifier, found->verifier, CONSOLE_VERIFIER);
			rc = 0;
		}
		sodium_memzero(found, sizeof(*found));
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/*
 * The approval console inside the HTTP transport (docs/CONSOLE.md):
 * its sessions (console_session.c) and its requests (http_console.c).
 */
#ifndef TG_MCP_CONSOLE_INT_H
#define TG_MCP_CONSOLE_INT_H

#include <stddef.h>
#include <stdint.h>

#define CONSOLE_ID_BYTES 32
#define CONSOLE_HEX (2 * CONSOLE_ID_BYTES + 1)
#define CONSOLE_MAX_SESSIONS 1024
#define CONSOLE_MAX_PER_PRINCIPAL 16
#define CONSOLE_IDLE_S (30 * 60)       /* a session unused this long ends */
#define CONSOLE_ABSOLUTE_S (12 * 3600) /* and any session this long after its sign-in */

struct console_sessions;

struct console_sessions *console_sessions_new(void);
void console_sessions_free(struct console_sessions *s);

/* A new session of principal holding token (copied): its id and CSRF
 * token in hex. 0; 1 when every slot is another principal's live
 * session; -1 out of memory. */
int console_session_open(struct console_sessions *s, const char *principal, const char *token,
			 size_t len, int64_t now, char id_hex[CONSOLE_HEX],
			 char csrf_hex[CONSOLE_HEX]);
/* The live session of id_hex, touched: OUT *token (malloc'd: free it with
 * console_token_free) and, when csrf_out is not NULL, its CSRF token.
 * With csrf_hex, that must be the session's. 0; 1 no such live session;
 * 2 the CSRF token is not the session's; -1 out of memory. */
int console_session_get(struct console_sessions *s, const char *id_hex, const char *csrf_hex,
			int64_t now, char **token, char csrf_out[CONSOLE_HEX]);
/* The same without touching it (an open event stream does not keep a
 * session from its idle end), and without a CSRF check. */
int console_session_peek(struct console_sessions *s, const char *id_hex, int64_t now,
			 char **token);
/* Sign-out: the session of id_hex ends (nothing when there is none). */
void console_session_close(struct console_sessions *s, const char *id_hex);
/* A token console_session_get gave, wiped and freed. */
void console_token_free(char *token);

/* ---- sign-ins with an identity provider under way ---- */

#define CONSOLE_MAX_LOGINS 256
#define CONSOLE_LOGIN_S 600          /* from the provider's page back, at most */
#define CONSOLE_VERIFIER 44          /* a PKCE verifier: 43 characters, and NUL */

/* A sign-in with provider idp begins, by client (http_front_client): its
 * state (sent to the provider and back), the binding its browser keeps
 * in a cookie, and the PKCE verifier, all new. When CONSOLE_MAX_LOGINS
 * are under way, the oldest of the client with the most gives way. */
void console_login_begin(struct console_sessions *s, size_t idp, uint64_t client, int64_t now,
			 char state_hex[CONSOLE_HEX], char binding_hex[CONSOLE_HEX],
			 char verifier[CONSOLE_VERIFIER]);
/* The sign-in state_hex names did not start (its provider's URL could not
 * be made): its slot is free again. */
void console_login_drop(struct console_sessions *s, const char *state_hex);
/* The sign-in state_hex names comes back, from the browser holding
 * binding_hex, within CONSOLE_LOGIN_S: 0, OUT *idp and verifier, and it
 * is over (a state is good once); 1 when not. */
int console_login_take(struct console_sessions *s, const char *state_hex, const char *binding_hex,
		       int64_t now, size_t *idp, char verifier[CONSOLE_VERIFIER]);

#endif

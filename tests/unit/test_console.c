/* Unit tests: the approval console's sessions (src/mcp/console_session.c):
 * a session gives back its token and CSRF token, a wrong or missing CSRF
 * token is refused, sessions end idle or at their absolute lifetime,
 * sign-out ends one, and the bounds hold: a principal's oldest session
 * gives way past its share, and a full table refuses another's; sign-ins
 * under way, a full table's shared fairly among clients, each known by
 * its address (http_front_key). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/console_int.h"
#include "mcp/http_int.h"
#include "unit.h"

static int opens_and_gets(void)
{
	struct console_sessions *s = console_sessions_new();
	char id[CONSOLE_HEX], csrf[CONSOLE_HEX], back[CONSOLE_HEX], other[CONSOLE_HEX], *tok;

	CHECK(s != NULL);
	CHECK(console_session_open(s, "alice", "tok-a", 5, 1000, id, csrf) == 0);
	CHECK(strlen(id) == 64 && strlen(csrf) == 64 && strcmp(id, csrf) != 0);
	CHECK(console_session_get(s, id, NULL, 1001, &tok, back) == 0);
	CHECK(strcmp(tok, "tok-a") == 0 && strcmp(back, csrf) == 0);
	console_token_free(tok);
	/* a change: the session's CSRF token, and no other */
	CHECK(console_session_get(s, id, csrf, 1002, &tok, NULL) == 0);
	console_token_free(tok);
	snprintf(other, sizeof(other), "%s", csrf);
	other[0] = other[0] == 'a' ? 'b' : 'a';
	CHECK(console_session_get(s, id, other, 1003, &tok, NULL) == 2 && !tok);
	CHECK(console_session_get(s, id, "", 1003, &tok, NULL) == 2 && !tok);
	CHECK(console_session_get(s, id, "zz", 1003, &tok, NULL) == 2 && !tok);
	/* another id, a malformed one, none */
	CHECK(console_session_get(s, csrf, NULL, 1004, &tok, NULL) == 1 && !tok);
	CHECK(console_session_get(s, "nothex", NULL, 1004, &tok, NULL) == 1);
	CHECK(console_session_get(s, NULL, NULL, 1004, &tok, NULL) == 1);
	/* signed out */
	console_session_close(s, id);
	CHECK(console_session_get(s, id, NULL, 1005, &tok, NULL) == 1);
	console_session_close(s, NULL);
	console_sessions_free(s);
	return 0;
}

static int lifetimes(void)
{
	struct console_sessions *s = console_sessions_new();
	char id[CONSOLE_HEX], csrf[CONSOLE_HEX], *tok;
	int64_t t = 5000, i;

	CHECK(s != NULL);
	CHECK(console_session_open(s, "alice", "tok", 3, t, id, csrf) == 0);
	/* idle: used just in time keeps it; peeking does not */
	CHECK(console_session_get(s, id, NULL, t + CONSOLE_IDLE_S - 1, &tok, NULL) == 0);
	console_token_free(tok);
	CHECK(console_session_peek(s, id, t + 2 * CONSOLE_IDLE_S - 2, &tok) == 0);
	console_token_free(tok);
	CHECK(console_session_peek(s, id, t + 2 * CONSOLE_IDLE_S - 1, &tok) == 1);
	/* absolute: however busy */
	CHECK(console_session_open(s, "alice", "tok", 3, t, id, csrf) == 0);
	for (i = t; i < t + CONSOLE_ABSOLUTE_S; i += CONSOLE_IDLE_S / 2) {
		CHECK(console_session_get(s, id, NULL, i, &tok, NULL) == 0);
		console_token_free(tok);
	}
	CHECK(console_session_get(s, id, NULL, t + CONSOLE_ABSOLUTE_S, &tok, NULL) == 1);
	console_sessions_free(s);
	return 0;
}

static int bounds(void)
{
	struct console_sessions *s = console_sessions_new();
	char first[CONSOLE_HEX], id[CONSOLE_HEX], csrf[CONSOLE_HEX], name[32], *tok;
	int i;

	CHECK(s != NULL);
	/* one principal: its oldest gives way to its newest */
	CHECK(console_session_open(s, "alice", "t", 1, 100, first, csrf) == 0);
	for (i = 1; i < CONSOLE_MAX_PER_PRINCIPAL; i++)
		CHECK(console_session_open(s, "alice", "t", 1, 100 + i, id, csrf) == 0);
	CHECK(console_session_get(s, first, NULL, 200, &tok, NULL) == 0);
	console_token_free(tok);
	CHECK(console_session_open(s, "alice", "t", 1, 300, id, csrf) == 0);
	CHECK(console_session_get(s, first, NULL, 301, &tok, NULL) == 1);
	CHECK(console_session_get(s, id, NULL, 301, &tok, NULL) == 0);
	console_token_free(tok);
	/* the table full of others' live sessions: refused, not evicted */
	for (i = 0; i < CONSOLE_MAX_SESSIONS; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		if (console_session_open(s, name, "t", 1, 400, id, csrf) != 0)
			break;
	}
	CHECK(i == CONSOLE_MAX_SESSIONS - CONSOLE_MAX_PER_PRINCIPAL);
	CHECK(console_session_open(s, "mallory", "t", 1, 401, id, csrf) == 1);
	/* once they end, there is room */
	CHECK(console_session_open(s, "mallory", "t", 1, 400 + CONSOLE_IDLE_S + 1, id, csrf) == 0);
	console_sessions_free(s);
	return 0;
}

/* A sign-in at a provider: its state comes back once, from the browser
 * that began it, within its time. */
static int logins(void)
{
	struct console_sessions *s = console_sessions_new();
	char state[CONSOLE_HEX], binding[CONSOLE_HEX], other[CONSOLE_HEX], drop[CONSOLE_HEX];
	char verifier[CONSOLE_VERIFIER], back[CONSOLE_VERIFIER];
	size_t idp = 9;
	int i;

	CHECK(s != NULL);
	console_login_begin(s, 3, 1, 1000, state, binding, verifier);
	CHECK(strlen(verifier) == 43 && strspn(verifier, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
					       "qrstuvwxyz0123456789-_") == 43);
	CHECK(console_login_take(s, state, binding, 1001, &idp, back) == 0);
	CHECK(idp == 3 && strcmp(back, verifier) == 0);
	CHECK(console_login_take(s, state, binding, 1002, &idp, back) == 1); /* once */
	/* another browser's binding: refused, and the state is spent */
	console_login_begin(s, 1, 1, 2000, state, binding, verifier);
	snprintf(other, sizeof(other), "%s", binding);
	other[5] = other[5] == '0' ? '1' : '0';
	CHECK(console_login_take(s, state, other, 2001, &idp, back) == 1);
	CHECK(console_login_take(s, state, binding, 2002, &idp, back) == 1);
	/* too late; malformed */
	console_login_begin(s, 1, 1, 3000, state, binding, verifier);
	CHECK(console_login_take(s, state, binding, 3000 + CONSOLE_LOGIN_S, &idp, back) == 1);
	CHECK(console_login_take(s, "zz", binding, 3001, &idp, back) == 1);
	CHECK(console_login_take(s, NULL, binding, 3001, &idp, back) == 1);
	/* past the bound, the oldest gives way */
	console_login_begin(s, 2, 1, 4000, state, binding, verifier);
	for (i = 0; i < CONSOLE_MAX_LOGINS; i++)
		console_login_begin(s, 2, 1, 4001 + i, other, other, back);
	CHECK(console_login_take(s, state, binding, 4500, &idp, back) == 1);
	/* a start that failed gives its slot back: it evicts no one (the
	 * table is full of live sign-ins here) */
	console_login_begin(s, 2, 1, 4600, state, binding, verifier);
	console_login_begin(s, 7, 1, 4601, drop, other, back);
	console_login_drop(s, drop);
	CHECK(console_login_take(s, drop, other, 4602, &idp, back) == 1);
	for (i = 0; i < CONSOLE_MAX_LOGINS; i++) {
		console_login_begin(s, 9, 1, 4603, drop, other, back);
		console_login_drop(s, drop);
	}
	CHECK(console_login_take(s, state, binding, 4604, &idp, back) == 0 && idp == 2);
	console_sessions_free(s);
	return 0;
}

/* Sign-ins begun by the thousand from one address push out their own,
 * not another person's, nor the second most eager's before the first's. */
static int logins_fair(void)
{
	struct console_sessions *s = console_sessions_new();
	char state[CONSOLE_HEX], binding[CONSOLE_HEX], verifier[CONSOLE_VERIFIER];
	char s2[CONSOLE_HEX], b2[CONSOLE_HEX], v2[CONSOLE_VERIFIER];
	char junk[CONSOLE_HEX], jb[CONSOLE_HEX], jv[CONSOLE_VERIFIER];
	size_t idp = 9;
	int i;

	CHECK(s != NULL);
	console_login_begin(s, 0, 0x100000007fULL, 5000, state, binding, verifier); /* a person */
	for (i = 0; i < 4; i++) /* someone with a few tabs open */
		console_login_begin(s, 1, 0x1000000080ULL, 5001, s2, b2, v2);
	for (i = 0; i < 10 * CONSOLE_MAX_LOGINS; i++) /* and a flood from one address */
		console_login_begin(s, 0, 0x1000000099ULL, 5002 + i / 100, junk, jb, jv);
	CHECK(console_login_take(s, state, binding, 5100, &idp, verifier) == 0 && idp == 0);
	CHECK(console_login_take(s, s2, b2, 5100, &idp, v2) == 0 && idp == 1);
	/* the flood's newest is there, its oldest gone */
	CHECK(console_login_take(s, junk, jb, 5100, &idp, jv) == 0);
	console_sessions_free(s);
	return 0;
}

/* A client's key: one per address, or per IPv6 /64; a dual-stack
 * proxy's ::ffff:a.b.c.d is a.b.c.d, not the one /64 all its IPv4
 * clients would share; two /64s apart in any bit are two clients. */
static int client_keys(void)
{
	uint64_t a = http_front_key("198.51.100.5");

	CHECK(a != 0 && a != http_front_key("198.51.100.6"));
	CHECK(http_front_key("::ffff:198.51.100.5") == a);
	CHECK(http_front_key("::ffff:203.0.113.9") != a);
	CHECK(http_front_key("2001:db8:0:1::5") == http_front_key("2001:db8:0:1:ffff::9"));
	CHECK(http_front_key("2001:db8:0:1::5") != http_front_key("2001:db8:0:2::5"));
	/* the last byte of the /64's high bit; then its first byte's */
	CHECK(http_front_key("2001:db8:0:1::5") != http_front_key("2001:db8:0:81::5"));
	CHECK(http_front_key("2001:db8::1") != http_front_key("3001:db8::1"));
	CHECK(http_front_key("::c633:6405") != a); /* not mapped: an IPv6 /64 */
	CHECK(http_front_key("2001:db8::1") != 0);
	CHECK(http_front_key("") == 0 && http_front_key("198.51.100.5:80") == 0 &&
	      http_front_key("[2001:db8::1]") == 0 && http_front_key("unknown") == 0);
	return 0;
}

const struct unit_test console_tests[] = {
	{ "console/logins", logins },
	{ "console/logins_fair", logins_fair },
	{ "console/client_keys", client_keys },
	{ "console/opens_and_gets", opens_and_gets },
	{ "console/lifetimes", lifetimes },
	{ "console/bounds", bounds },
	UNIT_TESTS_END,
};

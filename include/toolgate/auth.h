/*
 * toolgate auth: who may do what (docs/AUTH.md). A policy file names the
 * principals (agents and people) and their scopes; the gateway signs
 * short-lived tokens for them (JWT, EdDSA over Ed25519, libsodium) and
 * checks the tokens callers present: its own, and those of the OpenID
 * Connect providers the policy names (tg_idps_*).
 *
 * A scope is PATTERN:ACTION. PATTERN is a tool name, or a prefix ending
 * in "*" ("sql.*", "*"); ACTION is read, write (which includes read) or
 * approve (deciding other principals' write tickets).
 *
 *     struct tg_policy *p;   tg_policy_load("policy.json", &p, &err);
 *     struct tg_signer *s;   tg_signer_open("/var/lib/toolgate", 1, &s, &err);
 *     char *jwt;             tg_token_issue(s, p, &req, now, &jwt, &err);
 *     struct tg_claims c;    tg_token_verify(s, p, NULL, jwt, strlen(jwt), now, &c, &err);
 */
#ifndef TOOLGATE_AUTH_H
#define TOOLGATE_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "toolgate/error.h"
#include "toolgate/version.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tg_policy;
struct tg_signer;
struct tg_store;

#define TG_MAX_TOKEN 8192          /* bytes of a token a caller presents */
#define TG_MAX_SCOPES 64           /* scopes of one principal, or one token */
#define TG_MAX_PRINCIPAL_NAME 127
#define TG_TOKEN_SKEW 60           /* seconds of clock difference a check tolerates */

/* ---- policy ----------------------------------------------------------------- */

/* The policy file (JSON, at most 1 MiB): {"issuer"?, "audience"?,
 * "max_token_ttl"? ("1h"), "principals": {NAME: {"scopes": [...],
 * "max_token_ttl"?, "rate"? ("60/m")}}, "anomalies"?, "tickets"?,
 * "identity_providers"? (at most 16, docs/AUTH.md), "writes"?}.
 * Every field checked; OUT *out. */
TG_API int tg_policy_load(const char *path, struct tg_policy **out, struct tg_error *err);
TG_API void tg_policy_free(struct tg_policy *policy);
TG_API const char *tg_policy_issuer(const struct tg_policy *policy);
/* The policy's "anomalies" (toolgate/anomaly.h), NULL when it has none. */
struct tg_anomaly_config;
TG_API const struct tg_anomaly_config *tg_policy_anomalies(const struct tg_policy *policy);
/* What the approvers' queue and the store may hold (a policy's "tickets",
 * docs/PIPELINE.md, "Bounds of the queue"):
 *
 *   {"max_pending": 32, "max_pending_bytes": "16M", "max_bytes": "1M",
 *    "collect_every": "10m", "keep": "30d"}
 *
 * every field optional; a policy without the block has these defaults. */
struct tg_ticket_policy {
	uint64_t max_pending;        /* a principal's write tickets awaiting a decision */
	uint64_t max_pending_bytes;  /* their arguments, previews and findings together */
	uint64_t max_bytes;          /* one ticket's arguments and preview */
	uint64_t collect_every_s;    /* serve collects what expired this often; 0: never */
	uint64_t keep_s;             /* a ticket is kept this long after its decision or expiry */
	uint64_t lifetime_s;         /* a ticket's lifetime, unless tickets.lifetimes names its tool */
};
/* The defaults above, into *out. */
TG_API void tg_ticket_policy_defaults(struct tg_ticket_policy *out);
/* The policy's "tickets", its defaults where it says nothing. */
TG_API const struct tg_ticket_policy *tg_policy_tickets(const struct tg_policy *policy);
/* How long a ticket for tool (a name, or name@version) waits for its
 * decision before it expires (fail closed), in seconds: the longest
 * pattern of the policy's tickets.lifetimes that covers its name (a
 * scope's pattern: a name, or a prefix ending in "*"), else
 * tickets.lifetime (1 h when the policy does not say); 60 to 604,800. */
TG_API uint64_t tg_policy_ticket_lifetime(const struct tg_policy *policy, const char *tool);
/* What write calls need and how long a held call waits (a policy's
 * "writes", docs/PIPELINE.md, "Write calls"):
 *
 *   {"client_key": ["payments.*", "db.drop"], "wait": "50s"}
 *
 * tg_policy_client_key: 1 if a pattern of client_key (a scope's
 * pattern: a tool name, or a prefix ending in "*") covers tool, whose
 * write calls then need the client's own idempotency key (none is
 * derived). tg_policy_writes_wait_ms: how long a held call whose client
 * asked for no wait of its own waits for its decision (0: answered at
 * once), TG_WRITES_WAIT_DEFAULT_MS when the policy does not say; at most
 * TG_WRITES_WAIT_MAX_MS. */
#define TG_WRITES_WAIT_DEFAULT_MS 50000u
#define TG_WRITES_WAIT_MAX_MS 1800000u
TG_API int tg_policy_client_key(const struct tg_policy *policy, const char *tool);
TG_API uint64_t tg_policy_writes_wait_ms(const struct tg_policy *policy);
TG_API const char *tg_policy_audience(const struct tg_policy *policy);
TG_API uint64_t tg_policy_max_ttl(const struct tg_policy *policy); /* seconds */
/* 1 if name is a principal of the policy. */
TG_API int tg_policy_knows(const struct tg_policy *policy, const char *name);
/* 1 if name is a principal of the policy and one of its scopes covers
 * scope (a scope is covered by an equal or wider pattern with the same
 * action, or write for read). */
TG_API int tg_policy_grants(const struct tg_policy *policy, const char *name, const char *scope);

/* A principal's own max_token_ttl (seconds), 0 when it has none: a token
 * for it lives at most the smaller of this and the policy's. */
TG_API uint64_t tg_policy_principal_ttl(const struct tg_policy *policy, const char *name);
/* The principals, by index (0 to count-1), in the file's order. */
TG_API size_t tg_policy_count(const struct tg_policy *policy);
TG_API const char *tg_policy_name(const struct tg_policy *policy, size_t i);
/* name's rate ("rate": "N/m"): N calls of each tool a window (OUT
 * *window_ms, may be NULL); 0 when it has none. */
TG_API uint64_t tg_policy_rate(const struct tg_policy *policy, const char *name,
			       uint64_t *window_ms);
/* name's scopes, space-separated (malloc'd; "" for none or no such). */
TG_API char *tg_policy_scope_list(const struct tg_policy *policy, const char *name);

/* 1 if scope (PATTERN:ACTION) is well-formed. */
TG_API int tg_scope_valid(const char *scope);
/* The scope of a metrics scraper (docs/METRICS.md): GET /metrics, nothing
 * else; a principal holding it alone may have tokens that live up to 365
 * days, past the policy's max_token_ttl, when its own says so. */
#define TG_SCOPE_SCRAPE "metrics:scrape"
/* 1 if the policy's principal name holds metrics:scrape and nothing else. */
TG_API int tg_policy_scrape_only(const struct tg_policy *policy, const char *name);
/* 1 if scope have covers scope want (as wide a pattern, the same
 * action or write for read). */
TG_API int tg_scope_covers(const char *have, const char *want);
/* 1 if scope lets its holder call tool (write: a write tool). */
TG_API int tg_scope_allows_call(const char *scope, const char *tool, int write);
/* The same over a space-separated list of scopes (a token's "scope"):
 * 1 if any of them allows the call, or covers want. */
TG_API int tg_scopes_allow_call(const char *scopes, const char *tool, int write);
TG_API int tg_scopes_cover(const char *scopes, const char *want);
/* 1 if any scope of the list approves some tool (a person who decides,
 * or an operator): what the gateway-wide views (GET /metrics) ask of a
 * caller, since they show every principal's calls. */
TG_API int tg_scopes_approve_any(const char *scopes);

/* ---- notifications ------------------------------------------------------------ */

/* The policy's webhooks ("notify": {"webhooks": [...]}, docs/NOTIFY.md):
 * where the gateway POSTs a signed JSON body for each move of a ticket
 * of the tools and events each names. Checked when the policy loads: a
 * name of 1 to 64 of A-Z a-z 0-9 . _ - (each once), an https url (http
 * only to a loopback address; no userinfo; never a link-local or cloud
 * metadata address, in any spelling), tool patterns (a scope's), event
 * names, and a secret file that exists, is a regular file, and that
 * other users may neither read nor write (it is read when the gateway
 * starts delivering, not when the policy loads). */
#define TG_WEBHOOKS_MAX 16
#define TG_WEBHOOK_TOOLS_MAX 64
struct tg_webhook {
	char name[65];
	char *url;
	char rule[264];              /* the url's HOST:PORT: the one egress rule it is reached by */
	char **tools;                /* patterns; ntools 0: every tool */
	size_t ntools;
	unsigned events;             /* bit 1 << enum tg_ticket_state (toolgate/store.h) per event */
	char *secret_file;
};
/* The event names of the states, in enum tg_ticket_state's order
 * ("created" for pending): what a webhook's "events" and its body say. */
TG_API const char *tg_webhook_event_name(unsigned state);
TG_API size_t tg_policy_webhook_count(const struct tg_policy *policy);
/* The i-th webhook, in the file's order; NULL past the last. */
TG_API const struct tg_webhook *tg_policy_webhook(const struct tg_policy *policy, size_t i);
/* 1 if webhook w is told of tool's (name@version, or name) tickets. */
TG_API int tg_webhook_covers(const struct tg_webhook *w, const char *tool);

/* ---- rate limits ---------------------------------------------------------- */

/* Token buckets per principal and tool, by the policy's rates (the policy
 * must outlive the limiter). Thread-safe. OUT *out; -1 and err out of
 * memory. */
struct tg_limiter;
TG_API int tg_limiter_new(const struct tg_policy *policy, struct tg_limiter **out,
			  struct tg_error *err);
TG_API void tg_limiter_free(struct tg_limiter *limiter);
/* One call of tool by principal at now_ms (a monotonic clock): 1 allowed;
 * 0 limited, and OUT *retry_ms when a call would be allowed again. */
TG_API int tg_limiter_take(struct tg_limiter *limiter, const char *principal, const char *tool,
			   uint64_t now_ms, uint64_t *retry_ms);
/* The policy's rates divided among replicas gateways that share a store
 * (tg_store_replicas): each lets a principal through rate / replicas a
 * window, in bursts of as many, at least one (0 or 1: the whole rate). */
TG_API void tg_limiter_share(struct tg_limiter *limiter, unsigned replicas);

/* ---- signing ---------------------------------------------------------------- */

/* The gateway's Ed25519 key, in dir/signing.key (hex, mode 0600); with
 * create, made when missing. OUT *out. */
TG_API int tg_signer_open(const char *dir, int create, struct tg_signer **out,
			  struct tg_error *err);
TG_API void tg_signer_close(struct tg_signer *signer);
/* The key id tokens carry (hex of the public key's SHA-256, 16 chars). */
TG_API const char *tg_signer_kid(const struct tg_signer *signer);

/* ---- tokens ----------------------------------------------------------------- */

struct tg_token_request {
	const char *principal;
	const char *const *scopes;
	size_t nscopes;
	uint64_t ttl;                /* seconds */
	const char *audience;        /* NULL: the policy's */
};

/* A token for req, signed now (unix seconds): malloc'd JWT text. The
 * principal must be the policy's, each scope one the policy grants it,
 * the ttl at most the policy's maximum. */
TG_API int tg_token_issue(const struct tg_signer *signer, const struct tg_policy *policy,
			  const struct tg_token_request *req, int64_t now, char **out,
			  struct tg_error *err);

struct tg_claims {
	char sub[TG_MAX_PRINCIPAL_NAME + 1];
	char jti[33];
	int64_t iat, exp;
	char *scope;                 /* space-separated, malloc'd */
};

/* Check token (len bytes) at now: signature, algorithm, issuer, audience
 * (NULL: the policy's), lifetime (60 s of clock skew), revocation (when
 * store is given), principal and scopes still in the policy. 0 and OUT
 * *claims (release them); -1 and a specific err (TG_ERR_INVALID). */
TG_API int tg_token_verify(const struct tg_signer *signer, const struct tg_policy *policy,
			   struct tg_store *store, const char *token, size_t len,
			   const char *audience, int64_t now, struct tg_claims *claims,
			   struct tg_error *err);
TG_API void tg_claims_release(struct tg_claims *claims);

/* The "iss" claim of token, not verified (into iss, n bytes): only to
 * choose which key checks the token, the policy's own or an identity
 * provider's. 0, or -1 when the token has no readable string "iss". */
TG_API int tg_token_issuer(const char *token, size_t len, char *iss, size_t n);

/* ---- external identity providers ---------------------------------------------- */

/* Tokens of the OpenID Connect providers the policy's
 * "identity_providers" names (docs/AUTH.md, "External identity
 * providers"), validated locally with their published keys (RS256,
 * ES256, EdDSA). The keys are fetched by a thread of the set's own
 * (discovery, then the JWKS, bounded in size and time), cached, and
 * refreshed: when they age, and when a token names an unknown kid (at
 * most once per provider per 30 s). A provider that cannot be reached
 * delays nothing: its tokens are refused until its keys arrive. */
struct tg_idps;

/* The providers of policy (borrowed: it must outlive the set); resource
 * is this server's URL, the audience of a provider that names none
 * (NULL: none, and such a provider's tokens are refused). *out is NULL
 * when the policy names no provider; otherwise the thread that fetches
 * keys is started. -1 and err when it cannot start. */
TG_API int tg_idps_new(const struct tg_policy *policy, const char *resource,
		       struct tg_idps **out, struct tg_error *err);
TG_API void tg_idps_free(struct tg_idps *idps);
/* 1 if iss is the issuer of one of the providers. */
TG_API int tg_idps_knows(const struct tg_idps *idps, const char *iss);
/* The issuer of the i-th provider, in the policy's order; NULL past the
 * last (idps may be NULL: none). */
TG_API const char *tg_idps_issuer(const struct tg_idps *idps, size_t i);
/* Check token (len bytes) at now (unix seconds) against the provider
 * its "iss" names: signature by a key of the provider's, algorithm,
 * issuer, audience, lifetime (60 s of skew), and the principal the
 * policy maps it to. 0, OUT principal (plen bytes) and *scopes
 * (space-separated, malloc'd: the token's scopes the policy grants the
 * principal, or all it grants); -1 and a specific err (TG_ERR_INVALID).
 * Thread-safe; waits for a refresh of keys at most 2 s. A token seen
 * before is answered from a cache of results by its hash, while the
 * keys that verified it and its lifetime last. */
TG_API int tg_idps_verify(struct tg_idps *idps, const char *token, size_t len, int64_t now,
			  char *principal, size_t plen, char **scopes, struct tg_error *err);

/* The approval console's sign-in with provider i (docs/CONSOLE.md): the
 * authorization code flow with PKCE (S256) and the resource indicator
 * (the set's resource), as the client its "console" names. 1 if provider
 * i has one. tg_idps_login_url: the authorization request's URL
 * (malloc'd) for redirect_uri, state and the PKCE verifier (43 to 128
 * characters); tg_idps_login_token: the code exchanged at the token
 * endpoint, OUT *token the access token (malloc'd), to be verified like
 * any token (tg_idps_verify): nothing is trusted here. iss is the
 * authorization response's (RFC 9207; NULL when it had none): the code is
 * not sent when it names another issuer, nor without it when provider i
 * says it sends one (a mix-up between providers). Each discovers the
 * endpoints first; each request bounded to 5 s. -1 and err. */
TG_API int tg_idps_login_enabled(const struct tg_idps *idps, size_t i);
TG_API int tg_idps_login_url(struct tg_idps *idps, size_t i, const char *redirect_uri,
			     const char *state, const char *verifier, char **url,
			     struct tg_error *err);
TG_API int tg_idps_login_token(struct tg_idps *idps, size_t i, const char *code,
			       const char *iss, const char *verifier, const char *redirect_uri,
			       char **token, struct tg_error *err);

/* Who bearer token (len bytes) names at now, by the check its "iss" asks
 * for (read unverified, only to choose the keys): an identity provider's
 * of idps (NULL: none) when it is one of theirs and not the policy's own
 * issuer, tg_idps_verify; otherwise the policy's own token, signed by
 * signer's key and not revoked in store, tg_token_verify. 0, its
 * principal (into principal, plen bytes) and OUT *scopes (space-separated,
 * malloc'd); -1 and err saying why. The gate's identify hook
 * (tg_gate_identify) and the approvers' commands both check tokens so. */
TG_API int tg_token_identify(const struct tg_signer *signer, const struct tg_policy *policy,
			     struct tg_store *store, struct tg_idps *idps, const char *token,
			     size_t len, int64_t now, char *principal, size_t plen, char **scopes,
			     struct tg_error *err);

#ifdef __cplusplus
}
#endif
#endif

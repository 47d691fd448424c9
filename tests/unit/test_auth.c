/* Unit tests: src/auth/ (policy, scopes, tokens; docs/AUTH.md). */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "toolgate/auth.h"
#include "toolgate/store.h"
#include "unit.h"

static char dir[64];

static int fresh_dir(void)
{
	return unit_tmpdir(dir, "auth");
}

static void remove_dir(void)
{
	unit_rmtree(dir);
}

static int write_policy(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int load(const char *name, const char *text, struct tg_policy **p, struct tg_error *err)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (write_policy(name, text) < 0)
		return -2;
	return tg_policy_load(path, p, err);
}

#define POLICY "{\"audience\":\"gw\",\"max_token_ttl\":\"1h\",\"principals\":{" \
	"\"agent-1\":{\"scopes\":[\"sql.*:read\",\"fs.write:write\"]}," \
	"\"alice\":{\"scopes\":[\"*:approve\"]}}}"

static int policy_and_scopes(void)
{
	struct tg_policy *p;
	struct tg_error err;

	CHECK(fresh_dir() == 0);
	CHECK(load("p.json", POLICY, &p, &err) == 0);
	CHECK(strcmp(tg_policy_audience(p), "gw") == 0 && strcmp(tg_policy_issuer(p), "toolgate") == 0);
	CHECK(tg_policy_max_ttl(p) == 3600);
	CHECK(tg_policy_grants(p, "agent-1", "sql.query:read"));
	CHECK(tg_policy_grants(p, "agent-1", "sql.*:read"));
	CHECK(tg_policy_grants(p, "agent-1", "fs.write:read"));   /* write includes read */
	CHECK(!tg_policy_grants(p, "agent-1", "sql.query:write"));
	CHECK(!tg_policy_grants(p, "agent-1", "*:read"));          /* wider than granted */
	CHECK(!tg_policy_grants(p, "agent-1", "fs.write2:write"));
	CHECK(tg_policy_grants(p, "alice", "sql.execute:approve"));
	CHECK(!tg_policy_grants(p, "alice", "sql.execute:read"));
	CHECK(!tg_policy_grants(p, "mallory", "sql.query:read"));
	tg_policy_free(p);
	CHECK(tg_scope_valid("sql.*:read") && tg_scope_valid("*:approve") && tg_scope_valid("a:write"));
	CHECK(!tg_scope_valid("sql.*") && !tg_scope_valid(":read") && !tg_scope_valid("a*b:read") &&
	      !tg_scope_valid("a:delete") && !tg_scope_valid("a b:read"));
	CHECK(tg_scope_allows_call("sql.*:read", "sql.query", 0));
	CHECK(!tg_scope_allows_call("sql.*:read", "sql.execute", 1));
	CHECK(tg_scope_allows_call("sql.*:write", "sql.execute", 1));
	CHECK(!tg_scope_allows_call("*:approve", "sql.execute", 0));
	/* refusals, each naming what is wrong */
	CHECK(load("b1.json", "{\"principals\":{},\"x\":1}", &p, &err) < 0 &&
	      strstr(err.msg, "unknown field \"x\""));
	CHECK(load("b2.json", "{\"principals\":{\"a\":{\"scopes\":[\"fs:delete\"]}}}", &p, &err) < 0 &&
	      strstr(err.msg, "scope fs:delete"));
	CHECK(load("b3.json", "{\"principals\":{\"a b\":{\"scopes\":[]}}}", &p, &err) < 0 &&
	      strstr(err.msg, "principal 'a b'"));
	CHECK(load("b4.json", "{\"max_token_ttl\":\"90d\",\"principals\":{}}", &p, &err) < 0 &&
	      strstr(err.msg, "max_token_ttl"));
	CHECK(load("b5.json", "{\"principals\":{\"a\":{\"scopes\":[]},\"a\":{\"scopes\":[]}}}", &p,
		   &err) < 0);
	CHECK(load("b6.json", "[1]", &p, &err) < 0 && strstr(err.msg, "want a JSON object"));
	/* the anomaly configuration's reason, after the policy's name */
	CHECK(load("b7.json", "{\"principals\":{},\"anomalies\":{\"size_z\":0}}", &p, &err) < 0 &&
	      err.code == TG_ERR_INVALID && strstr(err.msg, "b7.json: anomalies: size_z"));
	/* "writes": each field checked, and named */
	CHECK(load("b8.json", "{\"principals\":{},\"writes\":{\"client\":[]}}", &p, &err) < 0 &&
	      strstr(err.msg, "writes: unknown field \"client\""));
	CHECK(load("b9.json", "{\"principals\":{},\"writes\":{\"client_key\":[\"a*b\"]}}", &p,
		   &err) < 0 && strstr(err.msg, "writes.client_key: a*b"));
	CHECK(load("b10.json", "{\"principals\":{},\"writes\":{\"wait\":\"31m\"}}", &p, &err) < 0 &&
	      strstr(err.msg, "writes.wait: a duration from 0"));
	CHECK(load("b11.json", "{\"principals\":{},\"writes\":[]}", &p, &err) < 0 &&
	      strstr(err.msg, "writes: want an object"));
	CHECK(load("w1.json", "{\"principals\":{},\"writes\":{\"wait\":\"0\",\"client_key\":"
		   "[\"pay.*\",\"db.drop\"]}}", &p, &err) == 0);
	CHECK(tg_policy_writes_wait_ms(p) == 0 && tg_policy_client_key(p, "pay.send") &&
	      tg_policy_client_key(p, "db.drop") && !tg_policy_client_key(p, "db.dropx") &&
	      !tg_policy_client_key(p, "sql.execute"));
	tg_policy_free(p);
	CHECK(load("w2.json", "{\"principals\":{}}", &p, &err) == 0);
	CHECK(tg_policy_writes_wait_ms(p) == TG_WRITES_WAIT_DEFAULT_MS &&
	      !tg_policy_client_key(p, "db.drop"));
	tg_policy_free(p);
	remove_dir();
	return 0;
}

/* A token whose header or claims are replaced, re-signed with key s. */
static char *forge(const char *head_json, const char *body_json, const unsigned char *sk)
{
	size_t hl = sodium_base64_ENCODED_LEN(strlen(head_json), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	size_t bl = sodium_base64_ENCODED_LEN(strlen(body_json), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	char *out = malloc(hl + bl + 200), sig64[100];
	unsigned char sig[crypto_sign_BYTES];

	sodium_bin2base64(out, hl, (const unsigned char *)head_json, strlen(head_json),
			  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	strcat(out, ".");
	sodium_bin2base64(out + strlen(out), bl, (const unsigned char *)body_json, strlen(body_json),
			  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	crypto_sign_detached(sig, NULL, (const unsigned char *)out, strlen(out), sk);
	sodium_bin2base64(sig64, sizeof(sig64), sig, sizeof(sig), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	strcat(out, ".");
	strcat(out, sig64);
	return out;
}

static int refused(const struct tg_signer *s, const struct tg_policy *p, struct tg_store *st,
		   const char *tok, int64_t now, const char *why)
{
	struct tg_claims c;
	struct tg_error err;

	if (tg_token_verify(s, p, st, tok, strlen(tok), NULL, now, &c, &err) == 0) {
		tg_claims_release(&c);
		fprintf(stderr, "accepted, want refused: %s\n", why);
		return 0;
	}
	if (!strstr(err.msg, why))
		fprintf(stderr, "refused with \"%s\", want \"%s\"\n", err.msg, why);
	return strstr(err.msg, why) != NULL;
}

static int tokens(void)
{
	const char *scopes[] = { "sql.query:read", "fs.write:write" };
	struct tg_token_request req = { "agent-1", scopes, 2, 600, NULL };
	struct tg_policy *p, *p2;
	struct tg_signer *s, *s2;
	struct tg_store *st;
	struct tg_claims c;
	struct tg_error err;
	char *tok, *bad, path[128];
	unsigned char sk[crypto_sign_SECRETKEYBYTES], pk[crypto_sign_PUBLICKEYBYTES];
	struct stat sb;
	FILE *f;
	size_t n;

	CHECK(fresh_dir() == 0);
	CHECK(load("p.json", POLICY, &p, &err) == 0);
	CHECK(tg_signer_open(dir, 0, &s, &err) < 0);                   /* no key, none made */
	CHECK(tg_signer_open(dir, 1, &s, &err) == 0);
	snprintf(path, sizeof(path), "%s/signing.key", dir);
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600);
	CHECK(tg_signer_open(dir, 0, &s2, &err) == 0 && strcmp(tg_signer_kid(s), tg_signer_kid(s2)) == 0);
	tg_signer_close(s2);
	CHECK(tg_store_open(dir, &st, &err) == 0);
	CHECK(tg_token_issue(s, p, &req, 1000, &tok, &err) == 0);
	CHECK(tg_token_verify(s, p, st, tok, strlen(tok), NULL, 1000, &c, &err) == 0);
	CHECK(strcmp(c.sub, "agent-1") == 0 && c.exp == 1600 && c.iat == 1000 &&
	      strcmp(c.scope, "sql.query:read fs.write:write") == 0 && strlen(c.jti) == 32);
	tg_claims_release(&c);
	/* issuing checks the policy */
	req.ttl = 7200;
	CHECK(tg_token_issue(s, p, &req, 1000, &bad, &err) < 0 && strstr(err.msg, "lifetime"));
	req.ttl = 600;
	req.principal = "mallory";
	CHECK(tg_token_issue(s, p, &req, 1000, &bad, &err) < 0 && strstr(err.msg, "not in the policy"));
	req.principal = "agent-1";
	scopes[0] = "sql.execute:write";
	CHECK(tg_token_issue(s, p, &req, 1000, &bad, &err) < 0 && strstr(err.msg, "does not grant"));
	scopes[0] = "sql.query:read";
	/* time */
	CHECK(refused(s, p, st, tok, 1600 + 61, "expired"));
	CHECK(tg_token_verify(s, p, st, tok, strlen(tok), NULL, 1600 + 30, &c, &err) == 0);
	tg_claims_release(&c);
	CHECK(refused(s, p, st, tok, 1000 - 61, "not valid yet"));
	/* the audience is the policy's, or the one asked for */
	CHECK(tg_token_verify(s, p, st, tok, strlen(tok), "other", 1000, &c, &err) < 0 &&
	      strstr(err.msg, "audience"));
	/* tampering: any byte of the claims, or another key */
	bad = strdup(tok);
	bad[strchr(bad, '.') - bad + 5] ^= 1;
	CHECK(refused(s, p, st, bad, 1000, "signature does not verify") ||
	      refused(s, p, st, bad, 1000, "malformed"));
	free(bad);
	crypto_sign_keypair(pk, sk);
	bad = forge("{\"alg\":\"EdDSA\",\"typ\":\"JWT\"}", "{\"iss\":\"toolgate\",\"sub\":\"agent-1\","
		    "\"aud\":\"gw\",\"iat\":1000,\"exp\":1600,\"jti\":\"x\",\"scope\":\"sql.query:read\"}", sk);
	CHECK(refused(s, p, st, bad, 1000, "signature does not verify"));
	free(bad);
	/* algorithm confusion: none, HS256 */
	bad = forge("{\"alg\":\"none\"}", "{}", sk);
	CHECK(refused(s, p, st, bad, 1000, "alg must be EdDSA"));
	free(bad);
	bad = forge("{\"alg\":\"HS256\"}", "{}", sk);
	CHECK(refused(s, p, st, bad, 1000, "alg must be EdDSA"));
	free(bad);
	/* shapes */
	CHECK(refused(s, p, st, "abc", 1000, "three base64url parts"));
	CHECK(refused(s, p, st, "a.b.c.d", 1000, "three base64url parts"));
	CHECK(refused(s, p, st, "!!.??.**", 1000, "malformed header"));
	bad = malloc(TG_MAX_TOKEN + 2);
	memset(bad, 'a', TG_MAX_TOKEN + 1);
	bad[TG_MAX_TOKEN + 1] = '\0';
	CHECK(refused(s, p, st, bad, 1000, "longer than 8192"));
	free(bad);
	CHECK(tg_token_verify(s, p, st, "a\0b.c.d", 7, NULL, 1000, &c, &err) < 0 &&
	      strstr(err.msg, "NUL"));
	/* the policy changed since: another issuer, the principal or a
	 * scope gone */
	CHECK(load("p2.json", "{\"issuer\":\"other\",\"audience\":\"gw\",\"principals\":{\"agent-1\":"
		   "{\"scopes\":[\"sql.*:read\",\"fs.write:write\"]}}}", &p2, &err) == 0);
	CHECK(refused(s, p2, st, tok, 1000, "another issuer"));
	tg_policy_free(p2);
	CHECK(load("p3.json", "{\"audience\":\"gw\",\"principals\":{\"agent-1\":{\"scopes\":"
		   "[\"sql.*:read\"]}}}", &p2, &err) == 0);
	CHECK(refused(s, p2, st, tok, 1000, "no longer in the policy"));
	tg_policy_free(p2);
	/* revoked, until it would have expired */
	CHECK(tg_token_verify(s, p, st, tok, strlen(tok), NULL, 1000, &c, &err) == 0);
	CHECK(tg_store_revoke(st, c.jti, c.exp, &err) == 0);
	tg_claims_release(&c);
	CHECK(refused(s, p, st, tok, 1001, "revoked"));
	/* revoked as long as a check would take it: exp and its skew */
	CHECK(tg_token_issue(s, p, &req, 1000, &bad, &err) == 0);
	CHECK(tg_token_verify(s, p, st, bad, strlen(bad), NULL, 1000, &c, &err) == 0);
	CHECK(tg_store_revoke(st, c.jti, c.exp + TG_TOKEN_SKEW, &err) == 0);
	tg_claims_release(&c);
	CHECK(refused(s, p, st, bad, 1600 + 30, "revoked"));
	free(bad);
	/* a policy that shortens lifetimes shortens the tokens it issued */
	CHECK(load("p4.json", "{\"audience\":\"gw\",\"max_token_ttl\":\"60s\",\"principals\":{"
		   "\"agent-1\":{\"scopes\":[\"sql.*:read\",\"fs.write:write\"]}}}", &p2, &err) == 0);
	CHECK(tg_token_issue(s, p, &req, 5000, &bad, &err) == 0);
	CHECK(refused(s, p2, NULL, bad, 5000, "lives longer than the policy now allows"));
	free(bad);
	tg_policy_free(p2);
	{
		struct tg_store_gc_stats gc;

		CHECK(tg_store_gc(st, 1700, -1, &gc, &err) == 0 && gc.revocations == 2);
	}
	/* a corrupted key file is refused, not replaced */
	f = fopen(path, "w");
	CHECK(f && fputs("zz\n", f) >= 0 && fclose(f) == 0);
	CHECK(tg_signer_open(dir, 1, &s2, &err) < 0 && strstr(err.msg, "hex digits"));
	n = strlen(tok);
	CHECK(n > 100);
	free(tok);
	tg_store_close(st);
	tg_signer_close(s);
	tg_policy_free(p);
	remove_dir();
	return 0;
}

static int rate_limits(void)
{
	struct tg_limiter *l;
	struct tg_policy *p;
	struct tg_error err;
	uint64_t retry, window;
	int i;

	CHECK(fresh_dir() == 0);
	CHECK(load("r.json", "{\"principals\":{\"agent-1\":{\"scopes\":[\"*:read\"],\"rate\":"
		   "\"3/s\"},\"free\":{\"scopes\":[\"*:read\"]}}}", &p, &err) == 0);
	CHECK(tg_policy_rate(p, "agent-1", &window) == 3 && window == 1000);
	CHECK(tg_policy_rate(p, "free", NULL) == 0);
	CHECK(tg_limiter_new(p, &l, &err) == 0);
	CHECK(l);
	for (i = 0; i < 3; i++)
		CHECK(tg_limiter_take(l, "agent-1", "sql.query", 10000, &retry) == 1);
	CHECK(tg_limiter_take(l, "agent-1", "sql.query", 10000, &retry) == 0);
	CHECK(retry >= 300 && retry <= 340);                  /* a token every 333 ms */
	CHECK(tg_limiter_take(l, "agent-1", "fs.read", 10000, &retry) == 1); /* per tool */
	CHECK(tg_limiter_take(l, "agent-1", "sql.query", 10000 + 340, &retry) == 1);
	CHECK(tg_limiter_take(l, "agent-1", "sql.query", 10000 + 340, &retry) == 0);
	/* a long pause refills to the burst, not beyond */
	for (i = 0; i < 3; i++)
		CHECK(tg_limiter_take(l, "agent-1", "sql.query", 99000, &retry) == 1);
	CHECK(tg_limiter_take(l, "agent-1", "sql.query", 99000, &retry) == 0);
	for (i = 0; i < 100; i++)
		CHECK(tg_limiter_take(l, "free", "sql.query", 10000, &retry) == 1);
	/* divided among 3 replicas: 1 a second each, in bursts of 1 */
	tg_limiter_share(l, 3);
	CHECK(tg_limiter_take(l, "agent-1", "ask.one", 300000, &retry) == 1);
	CHECK(tg_limiter_take(l, "agent-1", "ask.one", 300000, &retry) == 0);
	CHECK(retry >= 990 && retry <= 1001);
	CHECK(tg_limiter_take(l, "agent-1", "ask.one", 301000, &retry) == 1);
	/* a pause refills to this replica's burst (1), not the whole rate's (3) */
	CHECK(tg_limiter_take(l, "agent-1", "ask.one", 303500, &retry) == 1);
	CHECK(tg_limiter_take(l, "agent-1", "ask.one", 303500, &retry) == 0);
	/* among 10: a third of a call a second, yet a call at once when full */
	tg_limiter_share(l, 10);
	CHECK(tg_limiter_take(l, "agent-1", "ask.two", 300000, &retry) == 1);
	CHECK(tg_limiter_take(l, "agent-1", "ask.two", 300000, &retry) == 0);
	CHECK(retry >= 3300 && retry <= 3340);
	tg_limiter_share(l, 1);
	/* past the table's 65,536 buckets, old ones go: new pairs still start full */
	for (i = 0; i < 70000; i++) {
		char tool[32];

		snprintf(tool, sizeof(tool), "t.%d", i);
		CHECK(tg_limiter_take(l, "agent-1", tool, 200000 + (uint64_t)i, &retry) == 1);
	}
	tg_limiter_free(l);
	tg_policy_free(p);
	CHECK(load("r2.json", "{\"principals\":{\"a\":{\"scopes\":[],\"rate\":\"0/s\"}}}", &p,
		   &err) < 0 && strstr(err.msg, "rate"));
	CHECK(load("r3.json", "{\"principals\":{\"a\":{\"scopes\":[],\"rate\":\"5/d\"}}}", &p,
		   &err) < 0 && strstr(err.msg, "rate"));
	remove_dir();
	return 0;
}

/* The key's directory and file are refused unless private; two halves
 * that disagree are refused; processes racing to make the key all end
 * with the same one. */
static int signing_key_guarded(void)
{
	struct tg_signer *s;
	struct tg_error err;
	char path[128], kid[17], cmd[600];
	int i, status, same = 0;
	pid_t pids[6];
	FILE *f;

	CHECK(fresh_dir() == 0);
	CHECK(chmod(dir, 0777) == 0);
	CHECK(tg_signer_open(dir, 1, &s, &err) < 0 && strstr(err.msg, "writable by group or others"));
	CHECK(chmod(dir, 0700) == 0);
	CHECK(tg_signer_open(dir, 1, &s, &err) == 0);
	tg_signer_close(s);
	snprintf(path, sizeof(path), "%s/signing.key", dir);
	CHECK(chmod(path, 0644) == 0);
	CHECK(tg_signer_open(dir, 0, &s, &err) < 0 && strstr(err.msg, "not a private file"));
	CHECK(chmod(path, 0600) == 0);
	/* a symbolic link is never followed */
	snprintf(cmd, sizeof(cmd), "mv '%s' '%s.real' && ln -s '%s.real' '%s'", path, path, path,
		 path);
	CHECK(system(cmd) == 0);
	CHECK(tg_signer_open(dir, 0, &s, &err) < 0);
	snprintf(cmd, sizeof(cmd), "rm '%s' && mv '%s.real' '%s'", path, path, path);
	CHECK(system(cmd) == 0);
	/* the public half must be the seed's */
	f = fopen(path, "r+");
	CHECK(f && fseek(f, 127, SEEK_SET) == 0);
	i = fgetc(f);
	CHECK(fseek(f, 127, SEEK_SET) == 0 && fputc(i == '0' ? '1' : '0', f) != EOF);
	CHECK(fclose(f) == 0);
	CHECK(tg_signer_open(dir, 0, &s, &err) < 0 && strstr(err.msg, "does not match"));
	remove_dir();
	/* six processes make the key of a fresh directory at once */
	CHECK(fresh_dir() == 0);
	for (i = 0; i < 6; i++) {
		pids[i] = fork();
		CHECK(pids[i] >= 0);
		if (pids[i] == 0) {
			struct tg_signer *mine;

			if (tg_signer_open(dir, 1, &mine, &err) < 0) {
				fprintf(stderr, "signer: %s\n", err.msg);
				_exit(2);
			}
			/* the kid of the key this process signs with, against the file's */
			if (tg_signer_open(dir, 0, &s, &err) < 0)
				_exit(3);
			_exit(strcmp(tg_signer_kid(mine), tg_signer_kid(s)) == 0 ? 0 : 1);
		}
	}
	for (i = 0; i < 6; i++) {
		CHECK(waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status));
		same += WEXITSTATUS(status) == 0;
	}
	CHECK(same == 6);
	CHECK(tg_signer_open(dir, 0, &s, &err) == 0);
	snprintf(kid, sizeof(kid), "%s", tg_signer_kid(s));
	tg_signer_close(s);
	CHECK(strlen(kid) == 16);
	remove_dir();
	return 0;
}

/* The policy's "tickets": defaults when absent, each field checked by
 * name. */
static int ticket_policy(void)
{
	static const struct {
		const char *tickets, *says;
	} bad[] = {
		{ "[]", "tickets: want an object" },
		{ "{\"max_pendin\":3}", "tickets: unknown field \"max_pendin\"" },
		{ "{\"max_pending\":0}", "tickets.max_pending: an integer from 1" },
		{ "{\"max_pending\":\"3\"}", "tickets.max_pending: an integer from 1" },
		{ "{\"max_bytes\":\"1Q\"}", "tickets.max_bytes: a size from 1K to 1G" },
		{ "{\"max_bytes\":\"2G\"}", "tickets.max_bytes: a size from 1K to 1G" },
		{ "{\"max_bytes\":\"32M\"}", "max_bytes is more than tickets.max_pending_bytes" },
		{ "{\"keep\":\"1h\"}", "tickets.keep: a duration from 1d" },
		{ "{\"collect_every\":\"2d\"}", "tickets.collect_every: a duration from 0" },
		{ "{\"collect_every\":\"1500ms\"}", "tickets.collect_every: a duration from 0" },
		{ "{\"lifetime\":\"30s\"}", "tickets.lifetime: a duration from 1m to 7d" },
		{ "{\"lifetime\":\"8d\"}", "tickets.lifetime: a duration from 1m to 7d" },
		{ "{\"lifetime\":3600}", "tickets.lifetime: a duration from 1m to 7d" },
		{ "{\"lifetimes\":[]}", "tickets.lifetimes: want an object" },
		{ "{\"lifetimes\":{\"sql.*\":\"0s\"}}", "tickets.lifetimes.sql.*: a duration from 1m" },
		{ "{\"lifetimes\":{\"sql.*\":\"30d\"}}", "tickets.lifetimes.sql.*: a duration from 1m" },
		{ "{\"lifetimes\":{\"s*ql\":\"1h\"}}", "tickets.lifetimes: s*ql: want a tool name" },
	};
	const struct tg_ticket_policy *tp;
	struct tg_policy *p;
	struct tg_error err;
	char text[512];
	size_t i;

	CHECK(fresh_dir() == 0);
	CHECK(load("p.json", POLICY, &p, &err) == 0);
	tp = tg_policy_tickets(p);
	CHECK(tp->max_pending == 32 && tp->max_bytes == 1u << 20 &&
	      tp->max_pending_bytes == 16u << 20 && tp->collect_every_s == 600 &&
	      tp->keep_s == 30 * 86400 && tp->lifetime_s == 3600);
	CHECK(tg_policy_ticket_lifetime(p, "sql.execute@1.0.0") == 3600);
	tg_policy_free(p);
	/* a lifetime for every ticket, and the longest pattern of a tool's */
	CHECK(load("p.json", "{\"principals\":{},\"tickets\":{\"lifetime\":\"2h\",\"lifetimes\":"
		   "{\"sql.*\":\"10m\",\"sql.drop\":\"1m\",\"pay*\":\"7d\"}}}", &p, &err) == 0);
	CHECK(tg_policy_ticket_lifetime(p, "fs.write@1.0.0") == 7200);
	CHECK(tg_policy_ticket_lifetime(p, "sql.execute@1.0.0") == 600);
	CHECK(tg_policy_ticket_lifetime(p, "sql.drop@2.0.0") == 60);
	CHECK(tg_policy_ticket_lifetime(p, "sql.drop") == 60);
	CHECK(tg_policy_ticket_lifetime(p, "sql.dropx") == 600);
	CHECK(tg_policy_ticket_lifetime(p, "payments.refund") == 7 * 86400);
	tg_policy_free(p);
	CHECK(load("p.json", "{\"principals\":{},\"tickets\":{\"max_pending\":3,\"max_bytes\":"
		   "\"64K\",\"collect_every\":\"0\",\"keep\":\"2d\"}}", &p, &err) == 0);
	tp = tg_policy_tickets(p);
	CHECK(tp->max_pending == 3 && tp->max_bytes == 64u << 10 && tp->collect_every_s == 0 &&
	      tp->keep_s == 2 * 86400 && tp->max_pending_bytes == 16u << 20);
	tg_policy_free(p);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"principals\":{},\"tickets\":%s}", bad[i].tickets);
		p = NULL;
		if (load("p.json", text, &p, &err) == 0 || !strstr(err.msg, bad[i].says) ||
		    !strstr(err.msg, "p.json")) {
			fprintf(stderr, "%s: %s\n", bad[i].tickets, p ? "loaded" : err.msg);
			tg_policy_free(p);
			return -1;
		}
	}
	remove_dir();
	return 0;
}

const struct unit_test auth_tests[] = {
	{ "auth/ticket_policy", ticket_policy },
	{ "auth/signing_key_guarded", signing_key_guarded },
	{ "auth/rate_limits", rate_limits },
	{ "auth/policy_and_scopes", policy_and_scopes },
	{ "auth/tokens", tokens },
	UNIT_TESTS_END,
};

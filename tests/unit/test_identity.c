/* Unit tests: src/gate/identity.c, who calls and what they may, through
 * a gate composed as serve composes it (a real policy, signing key and
 * store in a temporary directory): a token into a principal and scopes,
 * a configured principal's scopes, the one scope decision that the
 * pipeline's stage 4 and a transport's early 403 share, and the rates
 * of the gate's own limiter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "toolgate/auth.h"
#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"
#include "unit.h"

#define POLICY "{\"audience\":\"gw\",\"max_token_ttl\":\"1h\",\"principals\":{" \
	"\"agent-1\":{\"scopes\":[\"echo.*:read\"],\"rate\":\"2/m\"}," \
	"\"alice\":{\"scopes\":[\"*:approve\"]}}}"

/* A read builtin named name in the catalogue directory. */
static int contract(const char *dir, const char *name)
{
	char path[192];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cat/%s.json", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "{\"name\":\"%s\",\"version\":\"1.0.0\",\"description\":\"d\",\"authority\":"
		"\"read\",\"owner\":{\"team\":\"t\",\"contact\":\"c\"},\"input_schema\":"
		"{\"type\":\"object\"},\"executor\":{\"kind\":\"builtin\",\"name\":\"echo\"}}", name);
	return fclose(f);
}

/* What serve composes: the policy, the key, the store; and a catalogue
 * of two read tools, echo.a and other.b. */
struct composed {
	char dir[64];
	struct tg_policy *policy;
	struct tg_signer *signer;
	struct tg_store *store;
	struct tg_catalog *cat;
	struct tg_gate *gate;
};

static int compose(struct composed *c, int with_policy)
{
	struct tg_gate_options o = { 0 };
	struct tg_error err;
	char path[128];
	FILE *f;

	memset(c, 0, sizeof(*c));
	if (unit_tmpdir(c->dir, "identity") < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/cat", c->dir);
	if (mkdir(path, 0700) < 0 || contract(c->dir, "echo.a") < 0 ||
	    contract(c->dir, "other.b") < 0 || tg_catalog_load_dir(path, NULL, &c->cat, &err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/policy.json", c->dir);
	f = fopen(path, "w");
	if (!f || fputs(POLICY, f) < 0 || fclose(f) != 0)
		return -1;
	if (with_policy) {
		if (tg_policy_load(path, &c->policy, &err) < 0 ||
		    tg_signer_open(c->dir, 1, &c->signer, &err) < 0 ||
		    tg_store_open(c->dir, &c->store, &err) < 0)
			return -1;
		o.policy = c->policy;
		o.signer = c->signer;
		o.store = c->store;
	}
	if (tg_gate_new(c->cat, &o, &c->gate, &err) < 0) {
		fprintf(stderr, "# %s\n", err.msg);
		return -1;
	}
	return 0;
}

static void release(struct composed *c)
{
	tg_gate_free(c->gate);
	tg_store_close(c->store);
	tg_signer_close(c->signer);
	tg_policy_free(c->policy);
	tg_catalog_free(c->cat);
	unit_rmtree(c->dir);
}

/* A token for principal with one scope, valid now. */
static char *token(struct composed *c, const char *principal, const char *scope)
{
	const char *scopes[] = { scope };
	struct tg_token_request req = { principal, scopes, 1, 600, NULL };
	struct tg_error err;
	char *tok = NULL;

	if (tg_token_issue(c->signer, c->policy, &req, (int64_t)time(NULL), &tok, &err) < 0)
		fprintf(stderr, "# %s\n", err.msg);
	return tok;
}

static int identify(void)
{
	struct composed c;
	struct tg_error err;
	char who[64], *scopes, *tok;

	CHECK(compose(&c, 1) == 0);
	CHECK(tg_gate_has_policy(c.gate) == 1);
	CHECK((tok = token(&c, "agent-1", "echo.*:read")) != NULL);
	CHECK(tg_gate_identify(c.gate, tok, strlen(tok), who, sizeof(who), &scopes, &err) == 0);
	CHECK(strcmp(who, "agent-1") == 0 && strcmp(scopes, "echo.*:read") == 0);
	free(scopes);
	/* one byte of the signature changed: refused, saying why */
	tok[strlen(tok) - 2] ^= 1;
	CHECK(tg_gate_identify(c.gate, tok, strlen(tok), who, sizeof(who), &scopes, &err) < 0 &&
	      !scopes && err.msg[0]);
	free(tok);
	CHECK(tg_gate_identify(c.gate, "x", 1, who, sizeof(who), &scopes, &err) < 0 && !scopes);
	/* revoked in the gate's store: refused from then on */
	CHECK((tok = token(&c, "agent-1", "echo.*:read")) != NULL);
	{
		struct tg_claims cl;

		CHECK(tg_token_verify(c.signer, c.policy, c.store, tok, strlen(tok), NULL,
				      (int64_t)time(NULL), &cl, &err) == 0);
		CHECK(tg_store_revoke(c.store, cl.jti, cl.exp, &err) == 0);
		tg_claims_release(&cl);
	}
	CHECK(tg_gate_identify(c.gate, tok, strlen(tok), who, sizeof(who), &scopes, &err) < 0 &&
	      strstr(err.msg, "revoked"));
	free(tok);
	release(&c);
	return 0;
}

static int principal_scopes(void)
{
	struct composed c;
	char *scopes;

	CHECK(compose(&c, 1) == 0);
	CHECK(tg_gate_principal_scopes(c.gate, "alice", &scopes) == 1 &&
	      strcmp(scopes, "*:approve") == 0);
	free(scopes);
	/* one the policy does not name holds nothing: fail closed */
	CHECK(tg_gate_principal_scopes(c.gate, "mallory", &scopes) == 0 && strcmp(scopes, "") == 0);
	free(scopes);
	/* the counters: to an approver only */
	CHECK(tg_gate_may_observe(c.gate, "*:approve") == 1);
	CHECK(tg_gate_may_observe(c.gate, "echo.*:read") == 0);
	CHECK(tg_gate_may_observe(c.gate, NULL) == 0);
	release(&c);
	/* without a policy there is nothing to ask, and nothing hidden */
	CHECK(compose(&c, 0) == 0);
	CHECK(tg_gate_has_policy(c.gate) == 0);
	CHECK(tg_gate_may_observe(c.gate, NULL) == 1);
	CHECK(tg_gate_principal_scopes(c.gate, "alice", &scopes) < 0 && !scopes);
	release(&c);
	return 0;
}

/* One call of tool by principal holding scopes: its answer's text. */
static int call(struct tg_gate *g, const char *principal, const char *scopes, const char *tool,
		char *text, size_t len)
{
	struct tg_call call = { 0 };
	struct tg_call_result r;
	struct tg_error err;
	int is_error;

	call.principal = principal;
	call.tool = tool;
	call.cancel_fd = -1;
	call.scopes = scopes;
	if (tg_gate_call(g, &call, &r, &err) < 0)
		return -1;
	snprintf(text, len, "%s", r.content_json);
	is_error = r.is_error;
	tg_call_result_release(&r);
	return is_error;
}

/* tg_gate_authorize and stage 4 are one decision: what one allows the
 * other runs, what one refuses the other refuses naming the same scope. */
static int authorize_is_stage_4(void)
{
	struct composed c;
	char need[200], text[1024];

	CHECK(compose(&c, 1) == 0);
	CHECK(tg_gate_authorize(c.gate, "echo.*:read", "echo.a", need, sizeof(need)) == 1);
	CHECK(call(c.gate, "agent-1", "echo.*:read", "echo.a", text, sizeof(text)) == 0);
	CHECK(tg_gate_authorize(c.gate, "echo.*:read", "other.b@1", need, sizeof(need)) == 0 &&
	      strcmp(need, "other.b:read") == 0);
	CHECK(call(c.gate, "agent-1", "echo.*:read", "other.b", text, sizeof(text)) == 1 &&
	      strstr(text, "it needs the scope other.b:read"));
	/* an approve scope calls nothing */
	CHECK(tg_gate_authorize(c.gate, "*:approve", "echo.a", need, sizeof(need)) == 0 &&
	      strcmp(need, "echo.a:read") == 0);
	/* with a policy, no scopes given is none held: fail closed, for a
	 * caller of the library that forgot them as for a transport */
	CHECK(tg_gate_authorize(c.gate, NULL, "other.b", need, sizeof(need)) == 0 &&
	      strcmp(need, "other.b:read") == 0);
	CHECK(call(c.gate, "agent-1", NULL, "echo.a", text, sizeof(text)) == 1 &&
	      strstr(text, "it needs the scope echo.a:read"));
	CHECK(call(c.gate, "mallory", NULL, "other.b", text, sizeof(text)) == 1);
	/* a tool that does not resolve is the call's to answer */
	CHECK(tg_gate_authorize(c.gate, "echo.*:read", "nope", need, sizeof(need)) == 1);
	release(&c);
	/* without a policy there is nothing to check */
	CHECK(compose(&c, 0) == 0);
	CHECK(tg_gate_authorize(c.gate, NULL, "other.b", need, sizeof(need)) == 1);
	CHECK(call(c.gate, "anyone", NULL, "other.b", text, sizeof(text)) == 0);
	release(&c);
	return 0;
}

/* The policy's rates come with it: agent-1 has 2 a minute, per tool. */
static int rates_of_the_policy(void)
{
	struct composed c;
	char text[1024];

	CHECK(compose(&c, 1) == 0);
	CHECK(call(c.gate, "agent-1", "echo.*:read", "echo.a", text, sizeof(text)) == 0);
	CHECK(call(c.gate, "agent-1", "echo.*:read", "echo.a", text, sizeof(text)) == 0);
	CHECK(call(c.gate, "agent-1", "echo.*:read", "echo.a", text, sizeof(text)) == 1 &&
	      strstr(text, "rate limited"));
	release(&c);
	/* no policy, no rate */
	CHECK(compose(&c, 0) == 0);
	for (int i = 0; i < 5; i++)
		CHECK(call(c.gate, "agent-1", NULL, "echo.a", text, sizeof(text)) == 0);
	release(&c);
	return 0;
}

/* A policy without the key that checks its tokens, or the store that
 * revokes them, is refused rather than half-checked. */
static int policy_needs_signer_and_store(void)
{
	struct composed c;
	struct tg_gate_options o = { 0 };
	struct tg_gate *g = NULL;
	struct tg_error err;

	CHECK(compose(&c, 1) == 0);
	o.policy = c.policy;
	o.store = c.store;
	CHECK(tg_gate_new(c.cat, &o, &g, &err) < 0 && !g && strstr(err.msg, "--state DIR"));
	o.signer = c.signer;
	o.store = NULL;
	CHECK(tg_gate_new(c.cat, &o, &g, &err) < 0 && !g);
	release(&c);
	return 0;
}

const struct unit_test identity_tests[] = {
	{ "identity/identify", identify },
	{ "identity/principal_scopes", principal_scopes },
	{ "identity/authorize_is_stage_4", authorize_is_stage_4 },
	{ "identity/rates_of_the_policy", rates_of_the_policy },
	{ "identity/policy_needs_signer_and_store", policy_needs_signer_and_store },
	UNIT_TESTS_END,
};

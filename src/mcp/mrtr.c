/*
 * Multi round-trip requests (MCP 2026-07-28, "Multi Round-Trip
 * Requests"): how an interactive tool asks the client in the stateless
 * era, where the server may not send requests of its own.
 *
 * The gateway keeps nothing between the rounds. When a tool asks
 * something the call's answers do not hold, the run is stopped and the
 * call ends with an InputRequiredResult: the question in inputRequests,
 * and a requestState that carries the answers gathered so far. The client
 * asks its user or model, then retries the call with inputResponses and
 * the requestState; the tool runs again from the start, and each question
 * it asks again is answered from the state at once. A question's key is
 * a digest of the question itself, so an answer only ever goes to the
 * question it was given for.
 *
 * The requestState is attacker-controlled input (the specification says
 * so): it is sealed with XChaCha20-Poly1305 under the server's key, and
 * bound to the principal, the tool, a digest of the arguments and an
 * expiry; a state that fails any of these is refused with -32602.
 * Replaying one within its life reruns a read tool with the same answers,
 * nothing more: write tools never run here (docs/MCP.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/mcp_int.h"
#include "util/json_wide.h"
#include "util/sodium.h"

#define STATE_VERSION 1
#define STATE_TTL 600                 /* seconds a requestState stays good */
#define MAX_STATE (1u << 20)          /* a requestState, encoded bytes */
#define MAX_ANSWERS 32                /* answers one call may gather */
#define STATE_AD "toolgate mrtr v1"

struct mrtr {
	const struct tg_mcp *m;
	const char *principal;
	char *tool;
	char digest[65];                  /* of the arguments */
	json_t *answers;                  /* key -> {"d": question digest, "a": result} */
	json_t *asked;                    /* key -> {method, params}: to ask now */
	json_t *asked_digests;            /* key -> the digest of its question */
	int caps;                         /* the client's: CAP_* bits */
	const char *missing;              /* a capability a question needed, undeclared */
	int overflow;                     /* asked more than MAX_ANSWERS */
	int holding;                      /* a question of this breath is unanswered */
	pthread_mutex_t lock;
};

enum { CAP_SAMPLING = 1, CAP_ELICITATION = 2, CAP_ROOTS = 4 };

static const struct {
	const char *method, *cap;
	int bit;
} questions[] = {
	{ "sampling/createMessage", "sampling", CAP_SAMPLING },
	{ "elicitation/create", "elicitation", CAP_ELICITATION },
	{ "roots/list", "roots", CAP_ROOTS },
};

static void hex_digest(const char *text, size_t len, char out[65])
{
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, (const unsigned char *)text, len);
	sodium_bin2hex(out, 65, h, sizeof(h));
}

/* SHA-256 of v's canonical text (sorted keys, compact); 0, or -1 out of memory. */
static int json_digest(json_t *v, char out[65])
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	if (!text)
		return -1;
	hex_digest(text, strlen(text), out);
	free(text);
	return 0;
}

/* SHA-256 of the arguments' canonical text: exact (their text, when the
 * call has it: util/json_wide.h) keeps digits jansson's copy rounds. */
static int arguments_digest(json_t *params, const char *exact, size_t exact_len, char out[65])
{
	json_t *args = json_object_get(params, "arguments");
	char *text;

	if (!exact)
		return json_digest(args ? args : json_null(), out);
	text = json_wide_canonical(exact, exact_len);
	if (!text)
		return -1;
	hex_digest(text, strlen(text), out);
	free(text);
	return 0;
}

static int bad(char *why, size_t len, const char *msg)
{
	snprintf(why, len, "%s", msg);
	return -1;
}

/* Open a requestState: the answers it carries and the keys it asked,
 * after checking it is ours, intact, in time and for this call. */
static int state_open(struct mrtr *r, const char *state, json_t **asked, char *why, size_t len)
{
	size_t n = strlen(state), bin_len;
	unsigned char *bin = NULL, *plain = NULL;
	unsigned long long plain_len;
	json_t *j = NULL;
	int rc = -1;

	if (n > MAX_STATE)
		return bad(why, len, "requestState: longer than this server ever issues");
	bin = malloc(n + 1);
	plain = malloc(n + 1);
	if (!bin || !plain) {
		bad(why, len, "out of memory");
		goto out;
	}
	if (sodium_base642bin(bin, n, state, n, NULL, &bin_len, NULL,
			      sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
	    bin_len < crypto_aead_xchacha20poly1305_ietf_NPUBBYTES +
			      crypto_aead_xchacha20poly1305_ietf_ABYTES ||
	    crypto_aead_xchacha20poly1305_ietf_decrypt(
		    plain, &plain_len, NULL, bin + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
		    bin_len - crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
		    (const unsigned char *)STATE_AD, strlen(STATE_AD), bin, r->m->state_key) != 0) {
		bad(why, len, "requestState: not one this server issued, or altered");
		goto out;
	}
	j = json_loadb((const char *)plain, plain_len, 0, NULL);
	if (!json_is_object(j) ||
	    json_integer_value(json_object_get(j, "v")) != STATE_VERSION) {
		bad(why, len, "requestState: not one this server issued, or altered");
		goto out;
	}
	if (json_integer_value(json_object_get(j, "exp")) < (json_int_t)time(NULL)) {
		bad(why, len, "requestState: expired; call the tool again without it");
		goto out;
	}
	if (!json_is_string(json_object_get(j, "p")) ||
	    strcmp(json_string_value(json_object_get(j, "p")), r->principal) != 0) {
		bad(why, len, "requestState: issued to another principal");
		goto out;
	}
	if (!json_is_string(json_object_get(j, "t")) || !json_is_string(json_object_get(j, "d")) ||
	    strcmp(json_string_value(json_object_get(j, "t")), r->tool) != 0 ||
	    strcmp(json_string_value(json_object_get(j, "d")), r->digest) != 0) {
		bad(why, len, "requestState: issued for another tool or other arguments");
		goto out;
	}
	if (!json_is_object(json_object_get(j, "a")) || !json_is_object(json_object_get(j, "q"))) {
		bad(why, len, "requestState: not one this server issued, or altered");
		goto out;
	}
	json_object_update(r->answers, json_object_get(j, "a"));
	*asked = json_incref(json_object_get(j, "q"));
	rc = 0;
out:
	json_decref(j);
	if (plain)
		sodium_memzero(plain, n + 1);
	free(plain);
	free(bin);
	return rc;
}

int mrtr_open(const struct tg_mcp *m, const char *principal, const char *tool, json_t *params,
	      const char *exact, size_t exact_len, json_t *caps, struct mrtr **out, char *why,
	      size_t len)
{
	json_t *state = json_object_get(params, "requestState");
	json_t *responses = json_object_get(params, "inputResponses");
	json_t *asked = NULL, *d, *v;
	const char *k;
	struct mrtr *r;
	size_t i;

	*out = NULL;
	if (state && !json_is_string(state))
		return bad(why, len, "requestState must be a string");
	if (responses && !json_is_object(responses))
		return bad(why, len, "inputResponses must be an object");
	r = calloc(1, sizeof(*r));
	if (!r)
		return bad(why, len, "out of memory");
	pthread_mutex_init(&r->lock, NULL);
	r->m = m;
	r->principal = principal;
	r->tool = strdup(tool);
	r->answers = json_object();
	r->asked = json_object();
	r->asked_digests = json_object();
	if (!r->tool || !r->answers || !r->asked || !r->asked_digests ||
	    arguments_digest(params, exact, exact_len, r->digest) < 0) {
		mrtr_free(r);
		return bad(why, len, "out of memory");
	}
	for (i = 0; i < sizeof(questions) / sizeof(questions[0]); i++)
		if (json_object_get(caps, questions[i].cap))
			r->caps |= questions[i].bit;
	if (state && state_open(r, json_string_value(state), &asked, why, len) < 0) {
		mrtr_free(r);
		return -1;
	}
	/* the answers to what the last round asked, each kept with its
	 * question's digest; anything else the client sent (or all it sent
	 * without a state) answers nothing asked, and is ignored, as the
	 * specification says */
	json_object_foreach(asked, k, d) {
		v = json_object_get(responses, k);
		if (json_is_object(v) && json_is_string(d))
			json_object_set_new(r->answers, k, json_pack("{s:O,s:O}", "d", d, "a", v));
	}
	json_decref(asked);
	if (json_object_size(r->answers) > MAX_ANSWERS) {
		mrtr_free(r);
		return bad(why, len, "requestState: more answers than one call may gather");
	}
	*out = r;
	return 0;
}

/* A key a tool may give its question: 1 to 64 of A-Z a-z 0-9 _ . - */
static int key_valid(const char *k)
{
	size_t n = k ? strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
		     : 0;

	return n > 0 && n <= 64 && k[n] == '\0';
}

static char *answer_text(const char *member, json_t *v)
{
	json_t *out = json_pack("{s:O}", member, v);
	char *text = out ? json_dumps(out, JSON_COMPACT) : NULL;

	json_decref(out);
	return text;
}

char *mrtr_ask(struct mrtr *r, const char *method, json_t *params, const char *tool_key,
	       int more, int *stop)
{
	json_t *q = json_pack("{s:s}", "method", method), *got;
	const char *cap = NULL;
	char key[80], digest[65], *text = NULL;
	size_t i;
	int bit = 0;

	*stop = 0;
	for (i = 0; i < sizeof(questions) / sizeof(questions[0]); i++)
		if (strcmp(method, questions[i].method) == 0) {
			cap = questions[i].cap;
			bit = questions[i].bit;
		}
	if (!q || !cap) {
		json_decref(q);
		return NULL; /* the caller checked the method: out of memory */
	}
	if (json_is_object(params))
		json_object_set(q, "params", params);
	if (json_digest(q, digest) < 0) {
		json_decref(q);
		return NULL;
	}
	/* the tool's own key, or one made of the question */
	if (key_valid(tool_key))
		snprintf(key, sizeof(key), "%s", tool_key);
	else
		snprintf(key, sizeof(key), "toolgate-%.24s", digest);
	pthread_mutex_lock(&r->lock);
	got = json_object_get(r->answers, key);
	if (got && strcmp(json_string_value(json_object_get(got, "d")), digest) != 0)
		got = NULL; /* given for another question under that key */
	if (!(r->caps & bit)) {
		/* the client cannot be asked: the tool hears why, and may do
		 * without; if the call then fails, it fails with -32021 */
		if (!r->missing)
			r->missing = cap;
		text = r->holding ? strdup("")
				  : answer_text("error", json_pack("{s:i,s:s}", "code",
						RPC_MISSING_CLIENT_CAPABILITY, "message",
						"the client did not declare that capability"));
	} else if (got) {
		/* answered in an earlier round; written unless a question
		 * before it in this breath waits (the tool reads in order) */
		text = r->holding ? strdup("") : answer_text("result", json_object_get(got, "a"));
	} else if (json_object_size(r->answers) + json_object_size(r->asked) >= MAX_ANSWERS) {
		r->overflow = 1; /* asks on and on: the call ends with an error */
		*stop = 1;
	} else {
		if (!json_object_get(r->asked, key)) {
			json_object_set(r->asked, key, q);
			json_object_set_new(r->asked_digests, key, json_string(digest));
		}
		r->holding = 1;
		if (more)
			text = strdup(""); /* more questions follow: asked together */
		else
			*stop = 1;
	}
	pthread_mutex_unlock(&r->lock);
	json_decref(q);
	if (!text && !*stop)
		return NULL; /* out of memory */
	return text;
}

/* The requestState for the next round (malloc'd), or NULL. */
static char *state_seal(struct mrtr *r)
{
	json_t *j = json_pack("{s:i,s:I,s:s,s:s,s:s,s:O,s:O}", "v", STATE_VERSION, "exp",
			      (json_int_t)time(NULL) + STATE_TTL, "p", r->principal, "t", r->tool,
			      "d", r->digest, "a", r->answers, "q", r->asked_digests);
	unsigned char *bin = NULL;
	char *plain = NULL, *out = NULL;
	size_t plain_len, bin_len, out_len;

	plain = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!plain)
		return NULL;
	plain_len = strlen(plain);
	bin_len = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES + plain_len +
		  crypto_aead_xchacha20poly1305_ietf_ABYTES;
	out_len = sodium_base64_ENCODED_LEN(bin_len, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	if (out_len <= MAX_STATE) {
		bin = malloc(bin_len);
		out = malloc(out_len);
	}
	if (bin && out) {
		randombytes_buf(bin, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
		crypto_aead_xchacha20poly1305_ietf_encrypt(
			bin + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, NULL,
			(const unsigned char *)plain, plain_len, (const unsigned char *)STATE_AD,
			strlen(STATE_AD), NULL, bin, r->m->state_key);
		sodium_bin2base64(out, out_len, bin, bin_len,
				  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	} else {
		free(out);
		out = NULL;
	}
	sodium_memzero(plain, plain_len);
	free(plain);
	free(bin);
	return out;
}

json_t *mrtr_missing_capability(struct mrtr *r, json_t *id)
{
	const char *missing;
	json_t *e;

	pthread_mutex_lock(&r->lock);
	missing = r->missing;
	pthread_mutex_unlock(&r->lock);
	if (!missing)
		return NULL;
	e = rpc_error_json(id, RPC_MISSING_CLIENT_CAPABILITY,
			   "the request needs a capability the client did not declare");
	if (e)
		json_object_set_new(json_object_get(e, "error"), "data",
				    json_pack("{s:{s:{}}}", "requiredCapabilities", missing));
	return e;
}

json_t *mrtr_response(struct mrtr *r, json_t *id)
{
	json_t *result;
	char *state;

	if (r->overflow)
		return rpc_error_json(id, RPC_INVALID_PARAMS,
				      "the tool asked more questions than one call may (32)");
	state = state_seal(r);
	if (!state)
		return rpc_error_json(id, RPC_INTERNAL_ERROR,
				      "the answers gathered exceed what a requestState may carry "
				      "(1 MiB), or out of memory");
	result = json_pack("{s:s,s:O,s:s}", "resultType", "input_required", "inputRequests",
			   r->asked, "requestState", state);
	free(state);
	return result ? rpc_result_json(id, result) : NULL;
}

void mrtr_free(struct mrtr *r)
{
	if (!r)
		return;
	json_decref(r->answers);
	json_decref(r->asked);
	json_decref(r->asked_digests);
	free(r->tool);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* Unit tests: the webhooks (docs/NOTIFY.md): the policy's "notify"
 * (src/auth/notify_config.c) and a delivery's body and signature
 * (src/gate/notify.c). */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gate/gate_int.h"
#include "toolgate/auth.h"
#include "toolgate/store.h"
#include "unit.h"

static char dir[64];

/* A policy whose notify is hooks (a JSON array's inside), with the
 * secret file dir/key as KEY names it; 0 loaded (*p), else -1 and err. */
static int load_hooks(const char *hooks, struct tg_policy **p, struct tg_error *err)
{
	char path[128], *text, *key, *s;
	size_t n;
	int rc;

	snprintf(path, sizeof(path), "%s/key", dir);
	/* KEY in hooks stands for the key file's path */
	n = strlen(hooks) + 1;
	for (s = strstr(hooks, "KEY"); s; s = strstr(s + 3, "KEY"))
		n += strlen(path);
	text = malloc(n + 64);
	key = text;
	if (!text)
		return -1;
	strcpy(key, "{\"principals\":{},\"notify\":{\"webhooks\":[");
	key += strlen(key);
	for (s = (char *)hooks; *s;) {
		if (strncmp(s, "KEY", 3) == 0) {
			key += sprintf(key, "%s", path);
			s += 3;
		} else {
			*key++ = *s++;
		}
	}
	strcpy(key, "]}}");
	rc = unit_put(dir, "p.json", text, 0600);
	free(text);
	if (rc < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/p.json", dir);
	return tg_policy_load(path, p, err);
}

#define HOOK(name, url) "{\"name\":\"" name "\",\"url\":\"" url "\",\"secret_file\":\"KEY\"}"

static int refused(const char *hooks, const char *want)
{
	struct tg_policy *p = NULL;
	struct tg_error err;

	if (load_hooks(hooks, &p, &err) == 0) {
		fprintf(stderr, "loaded: %s\n", hooks);
		tg_policy_free(p);
		return 0;
	}
	if (!strstr(err.msg, want)) {
		fprintf(stderr, "%s\n  said: %s\n  want: %s\n", hooks, err.msg, want);
		return 0;
	}
	return 1;
}

static int policy(void)
{
	struct tg_policy *p;
	const struct tg_webhook *w;
	struct tg_error err;
	char key[128];

	CHECK(unit_tmpdir(dir, "notify") == 0);
	CHECK(unit_put(dir, "key", "0123456789abcdef0123456789abcdef\n", 0600) == 0);
	CHECK(load_hooks("{\"name\":\"ops\",\"url\":\"https://hooks.example/x\",\"tools\":"
			 "[\"sql.*\",\"fs.write\"],\"events\":[\"created\",\"rejected\"],"
			 "\"secret_file\":\"KEY\"}," HOOK("loop", "http://127.0.0.1:8080/h") ","
			 HOOK("v6", "http://[::1]/h") "," HOOK("lan", "https://10.1.2.3:8443") ","
			 HOOK("pub6", "https://[2606:4700::1111]/h"),
			 &p, &err) == 0);
	CHECK(tg_policy_webhook_count(p) == 5 && tg_policy_webhook(p, 5) == NULL);
	w = tg_policy_webhook(p, 0);
	CHECK(strcmp(w->name, "ops") == 0 && strcmp(w->url, "https://hooks.example/x") == 0);
	CHECK(strcmp(w->rule, "hooks.example:443") == 0);
	CHECK(w->events == (1u << TG_TICKET_PENDING | 1u << TG_TICKET_REJECTED));
	CHECK(tg_webhook_covers(w, "sql.execute@1.0.0") && tg_webhook_covers(w, "fs.write") &&
	      !tg_webhook_covers(w, "fs.writer@1.0.0") && !tg_webhook_covers(w, "sq@1"));
	snprintf(key, sizeof(key), "%s/key", dir);
	CHECK(strcmp(w->secret_file, key) == 0);
	w = tg_policy_webhook(p, 1);
	CHECK(strcmp(w->rule, "127.0.0.1:8080") == 0 && w->events == 0xff && !w->ntools &&
	      tg_webhook_covers(w, "anything@1"));
	CHECK(strcmp(tg_policy_webhook(p, 2)->rule, "[::1]:80") == 0);
	CHECK(strcmp(tg_policy_webhook(p, 3)->rule, "10.1.2.3:8443") == 0);
	CHECK(strcmp(tg_policy_webhook(p, 4)->rule, "[2606:4700::1111]:443") == 0);
	CHECK(strcmp(tg_webhook_event_name(TG_TICKET_PENDING), "created") == 0 &&
	      strcmp(tg_webhook_event_name(TG_TICKET_EXECUTED), "executed") == 0);
	tg_policy_free(p);

	/* each refusal names the file's field */
	CHECK(refused("{\"name\":\"a\",\"url\":\"https://h/\",\"secret_file\":\"KEY\",\"x\":1}",
		      "notify.webhooks[0]: unknown field \"x\""));
	CHECK(refused(HOOK("a", "http://hooks.example/x"), "webhooks[0].url: must be https://"));
	CHECK(refused(HOOK("a", "http://10.0.0.1/x"), "webhooks[0].url: must be https://"));
	CHECK(refused(HOOK("a", "ftp://h/x"), "webhooks[0].url: must start with http"));
	CHECK(refused(HOOK("a", "https://u:p@h/x"), "webhooks[0].url: holds userinfo"));
	CHECK(refused(HOOK("a", "https://h:0/x"), "webhooks[0].url: a port is"));
	/* the metadata address, whatever its spelling or scheme */
	CHECK(refused(HOOK("a", "https://169.254.169.254/x"), "link-local and cloud metadata"));
	CHECK(refused(HOOK("a", "http://169.254.169.254/x"), "cloud metadata"));
	CHECK(refused(HOOK("a", "https://0xa9fea9fe/x"), "cloud metadata"));
	CHECK(refused(HOOK("a", "https://2852039166/x"), "cloud metadata"));
	CHECK(refused(HOOK("a", "https://0251.0376.0251.0376/x"), "cloud metadata"));
	CHECK(refused(HOOK("a", "https://[::ffff:169.254.169.254]/x"), "cloud metadata"));
	CHECK(refused(HOOK("a", "https://[fd00:ec2::254]/x"), "cloud metadata"));
	CHECK(refused(HOOK("a", "https://[fe80::1]/x"), "link-local"));
	/* IPv6 forms that carry it without being judged by it */
	CHECK(refused(HOOK("a", "https://[::169.254.169.254]/x"), "IPv4-compatible"));
	CHECK(refused(HOOK("a", "https://[::ffff:0:a9fe:a9fe]/x"), "IPv4-translated"));
	CHECK(refused(HOOK("a", "https://[2001:0:4136:e378:8000:63bf:5601:5601]/x"), "Teredo"));
	CHECK(refused(HOOK("a", "https://h/") "," HOOK("a", "https://g/"),
		      "webhooks[1].name: a is webhooks[0]'s already"));
	CHECK(refused(HOOK("a b", "https://h/"), "webhooks[0].name: required"));
	CHECK(refused("{\"name\":\"a\",\"url\":\"https://h/\"}", "webhooks[0].secret_file: "
		      "required"));
	CHECK(refused("{\"name\":\"a\",\"url\":\"https://h/\",\"secret_file\":\"/nonexistent/k\"}",
		      "webhooks[0].secret_file: /nonexistent/k: No such file"));
	CHECK(refused("{\"name\":\"a\",\"url\":\"https://h/\",\"secret_file\":\"/tmp\"}",
		      "not a regular file"));
	CHECK(refused("{\"name\":\"a\",\"url\":\"https://h/\",\"secret_file\":\"KEY\","
		      "\"events\":[\"decided\"]}", "webhooks[0].events[0]: want one of"));
	CHECK(refused("{\"name\":\"a\",\"url\":\"https://h/\",\"secret_file\":\"KEY\","
		      "\"tools\":[\"a*b\"]}", "webhooks[0].tools[0]: want a tool name"));
	CHECK(refused("{\"name\":\"a\",\"url\":\"https://h/\",\"secret_file\":\"KEY\","
		      "\"tools\":[]}", "webhooks[0].tools: want an array of 1"));
	CHECK(refused(HOOK("a", "https://h/") "," HOOK("b", "https://h/") "," HOOK("c", "https://h/")
		      "," HOOK("d", "https://h/") "," HOOK("e", "https://h/") "," HOOK("f", "https://h/")
		      "," HOOK("g", "https://h/") "," HOOK("h", "https://h/") "," HOOK("i", "https://h/")
		      "," HOOK("j", "https://h/") "," HOOK("k", "https://h/") "," HOOK("l", "https://h/")
		      "," HOOK("m", "https://h/") "," HOOK("n", "https://h/") "," HOOK("o", "https://h/")
		      "," HOOK("p", "https://h/") "," HOOK("q", "https://h/"),
		      "notify.webhooks: want an array of at most 16"));
	/* a secret others may read, or replace, or its group replace */
	CHECK(chmod(key, 0604) == 0);
	CHECK(refused(HOOK("a", "https://h/"), "every user may read this secret (mode 0604)"));
	CHECK(chmod(key, 0602) == 0);
	CHECK(refused(HOOK("a", "https://h/"), "every user may replace this secret"));
	CHECK(chmod(key, 0620) == 0);
	CHECK(refused(HOOK("a", "https://h/"), "its group may replace this secret (mode 0620)"));
	CHECK(chmod(key, 0640) == 0);
	CHECK(load_hooks(HOOK("a", "https://h/"), &p, &err) == 0);
	tg_policy_free(p);
	unit_rmtree(dir);
	return 0;
}

/* The signature: HMAC-SHA256 over "T." and the body, checked against a
 * value computed apart (RFC 4231's test case 2 key and a known body with
 * python3 -c 'import hmac,hashlib;print(hmac.new(b"Jefe",b"1700000000.{}",
 * hashlib.sha256).hexdigest())'), and against libsodium's one-shot. */
static int signature(void)
{
	const unsigned char key[] = "Jefe";
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	char sig[NOTIFY_SIGNATURE_MAX], hex[65];
	crypto_auth_hmacsha256_state st;

	CHECK(notify_signature(key, 4, 1700000000, "{}", 2, sig) == 0);
	CHECK(strcmp(sig, "t=1700000000,v1="
		     "d3793e2b4103edfbd98cc19591832f5fad701d413db9fcae0ae7dab8184ed207") == 0);
	crypto_auth_hmacsha256_init(&st, key, 4);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"1700000000.{}", 13);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_bin2hex(hex, sizeof(hex), mac, sizeof(mac));
	CHECK(strcmp(sig + strlen("t=1700000000,v1="), hex) == 0);
	/* another time or body, another signature */
	CHECK(notify_signature(key, 4, 1700000001, "{}", 2, sig) == 0 && !strstr(sig, hex));
	return 0;
}

/* A body: the ticket's facts and the summary, never more; the reason of
 * a rejection; the console's link from the MCP url's origin. */
static int body(void)
{
	struct tg_ticket_event e;
	char *b;

	memset(&e, 0, sizeof(e));
	e.seq = 42;
	strcpy(e.ticket, "0123456789abcdef0123456789abcdef");
	e.state = TG_TICKET_REJECTED;
	strcpy(e.tool, "sql.execute@1.0.0");
	strcpy(e.principal, "agent-1");
	strcpy(e.approver, "alice");
	e.created = 1000;
	e.expires = 4600;
	e.decided = 1100;
	b = notify_body(&e, "not <!here> & now", "https://gw.example:8443/mcp");
	CHECK(b != NULL);
	CHECK(strstr(b, "\"id\":\"42\"") && strstr(b, "\"event\":\"rejected\"") &&
	      strstr(b, "\"state\":\"rejected\"") && strstr(b, "\"approver\":\"alice\"") &&
	      strstr(b, "\"reason\":\"not <!here> & now\"") && strstr(b, "\"decided\":1100") &&
	      strstr(b, "\"created\":1000,") && strstr(b, "\"expires\":4600"));
	CHECK(strstr(b, "\"console\":\"https://gw.example:8443/console/#/ticket/"
		     "0123456789abcdef0123456789abcdef\""));
	/* the summary: one line, Slack's controls escaped */
	CHECK(strstr(b, "\"text\":\"agent-1's sql.execute@1.0.0 (ticket 01234567) rejected by "
		     "alice: not &lt;!here&gt; &amp; now <https://gw.example:8443/console/#/ticket/"));
	free(b);
	e.state = TG_TICKET_PENDING;
	e.approver[0] = '\0';
	e.decided = 0;
	b = notify_body(&e, NULL, NULL);
	CHECK(b && strstr(b, "\"event\":\"created\"") && strstr(b, "\"state\":\"pending\"") &&
	      !strstr(b, "approver") && !strstr(b, "decided") && !strstr(b, "console") &&
	      !strstr(b, "reason") && strstr(b, "waits for a decision"));
	free(b);
	return 0;
}

/* A reason of many-byte characters: whatever byte a cut falls on (the
 * summary's 200 bytes of it, the text's own bound with every other field
 * at its longest), the body is made, its text and reason whole
 * characters: a cut character would make no JSON string, and the event
 * would go without a body. */
static int body_utf8(void)
{
	struct tg_ticket_event e;
	char reason[1001], origin[400];
	size_t k, n;
	char *b;

	memset(&e, 0, sizeof(e));
	e.seq = 7;
	strcpy(e.ticket, "0123456789abcdef0123456789abcdef");
	e.state = TG_TICKET_REJECTED;
	memset(e.tool, 't', sizeof(e.tool) - 1);
	memset(e.principal, 'p', sizeof(e.principal) - 1);
	memset(e.approver, 'a', sizeof(e.approver) - 1);
	snprintf(origin, sizeof(origin), "https://%0250d.example/mcp", 0);
	for (k = 0; k < 12; k++) {
		/* k ASCII bytes (x, or & from 6 on: five bytes each in the
		 * text), then two- and three-byte characters to the end */
		memset(reason, k < 6 ? 'x' : '&', k % 6);
		for (n = k % 6; n + 5 <= 1000; n += 5)
			memcpy(reason + n, "\xc3\xa9\xe6\x97\xa5", 5);
		reason[n] = '\0';
		b = notify_body(&e, reason, k % 2 ? origin : NULL);
		CHECK(b != NULL && strstr(b, "\"reason\":\"") && strstr(b, "\"text\":\""));
		free(b);
	}
	/* a short reason, its 200th byte inside a character */
	memset(reason, 'x', 199);
	strcpy(reason + 199, "\xc3\xa9 and more");
	e.tool[20] = e.principal[20] = e.approver[20] = '\0';
	b = notify_body(&e, reason, NULL);
	CHECK(b != NULL && strstr(b, "\"reason\":\"xxx"));
	free(b);
	return 0;
}

const struct unit_test notify_tests[] = {
	{ "notify/policy", policy },
	{ "notify/signature", signature },
	{ "notify/body", body },
	{ "notify/body_utf8", body_utf8 },
	UNIT_TESTS_END,
};

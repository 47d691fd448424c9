/*
 * Unit tests: the secret redactor (src/obs/redact.c, redact_rules.c).
 * Each rule on a secret in its format (made here from a seeded generator:
 * no credential-shaped literal sits in the repository) and on its
 * look-alikes; the "[REDACTED:<rule>]" output; a stream fed in any
 * chunking writing what one call writes, a secret split across writes
 * included; binary and invalid UTF-8 input; a key block without its end;
 * the memory a stream holds on 64 MiB without a newline; overlapping and
 * repeated secrets.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "toolgate/redact.h"
#include "unit.h"

static const char ALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
static const char B62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static uint32_t seed = 12345;

static unsigned rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

/* prefix, then n bytes of alphabet, appended to out */
static void put(char *out, const char *prefix, const char *alphabet, size_t n)
{
	size_t len = strlen(out), k = strlen(alphabet), i;

	strcpy(out + len, prefix);
	len += strlen(prefix);
	for (i = 0; i < n && k; i++)
		out[len++] = alphabet[rnd() % k];
	out[len] = '\0';
}

static uint32_t crc32_of(const char *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		c ^= (unsigned char)p[i];
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

/* A GitHub-format token: 30 random base62 and their CRC32 in base62. */
static void put_crc_token(char *out, const char *prefix)
{
	char body[37];
	uint32_t crc;
	int i;

	body[0] = '\0';
	put(body, "", ALNUM, 30);
	crc = crc32_of(body, 30);
	for (i = 35; i >= 30; i--) {
		body[i] = B62[crc % 62];
		crc /= 62;
	}
	body[36] = '\0';
	strcat(out, prefix);
	strcat(out, body);
}

/* Redact text; the one finding's rule (NULL: none; "many" for several). */
static const char *rule_of(const char *text, char *redacted, size_t len)
{
	struct tg_redact_out o;
	struct tg_error err;
	const char *r;

	if (tg_redact(text, strlen(text), &o, &err) < 0)
		return "error";
	if (redacted)
		snprintf(redacted, len, "%s", o.text);
	r = o.nfindings == 0 ? NULL : o.nfindings > 1 ? "many" : o.findings[0].rule;
	tg_redact_out_release(&o);
	return r;
}

static int expect_rule(const char *text, const char *rule)
{
	char out[8192], marker[64];
	const char *got = rule_of(text, out, sizeof(out));
	int same = (!got && !rule) || (got && rule && strcmp(got, rule) == 0);

	if (!same) {
		fprintf(stderr, "%s: want %s, got %s\n", text, rule ? rule : "nothing",
			got ? got : "nothing");
		return -1;
	}
	snprintf(marker, sizeof(marker), "[REDACTED:%s]", rule ? rule : "");
	if (rule && !strstr(out, marker)) {
		fprintf(stderr, "%s: no %s in %s\n", text, marker, out);
		return -1;
	}
	return 0;
}

static int rules_positive(void)
{
	char s[4096];

#define POS(rule, ...)                                   \
	do {                                             \
		s[0] = '\0';                             \
		__VA_ARGS__;                             \
		CHECK(expect_rule(s, rule) == 0);        \
	} while (0)
	POS("aws_access_key_id", put(s, "id: AK", "", 0), put(s, "IA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16));
	POS("aws_secret_access_key", put(s, "aws_secret_access_key = ", ALNUM, 38), strcat(s, "+/"));
	POS("gcp_api_key", put(s, "key=AI", "", 0), put(s, "za", ALNUM, 35));
	POS("github_token", put_crc_token(s, "export GH=gh" "p_"));
	POS("github_token", put_crc_token(s, "token gh" "s_"));
	POS("github_token", put(s, "github" "_pat_", ALNUM, 22), put(s, "_", ALNUM, 59));
	POS("gitlab_token", put(s, "glp" "at-", ALNUM, 20));
	POS("slack_token", put(s, "xox" "b-123456789012-1234567890123-", ALNUM, 24));
	POS("slack_webhook", put(s, "https://hooks.slack.com/services/T0123ABCD/B0123ABCD/", ALNUM, 24));
	POS("stripe_key", put(s, "sk_" "live_", ALNUM, 24));
	POS("stripe_key", put(s, "rk_" "live_", ALNUM, 24));
	POS("openai_key", put(s, "sk-" "proj-", ALNUM, 40), put(s, "T3Blbk" "FJ", ALNUM, 40));
	POS("anthropic_key", put(s, "sk-" "ant-api03-", ALNUM, 93), strcat(s, "AA"));
	POS("npm_token", put_crc_token(s, "//registry.npmjs.org/:_authToken=np" "m_"));
	POS("pypi_token", put(s, "pypi-AgEIcHlwaS5vcmc", ALNUM, 120));
	POS("sendgrid_key", put(s, "SG.", ALNUM, 22), put(s, ".", ALNUM, 43));
	POS("twilio_key", put(s, "S" "K", "0123456789abcdef", 32));
	POS("private_key", strcat(s, "-----BEGIN RSA PRIVATE KEY-----\n"), put(s, "MIIE", ALNUM, 60),
	    strcat(s, "\n-----END RSA PRIVATE KEY-----\n"));
	POS("private_key", strcat(s, "-----BEGIN OPENSSH PRIVATE KEY-----\n"), put(s, "b3Bl", ALNUM, 60),
	    strcat(s, "\n-----END OPENSSH PRIVATE KEY-----"));
	POS("gcp_service_account", strcat(s, "{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n"),
	    put(s, "MIIE", ALNUM, 60), strcat(s, "\\n-----END PRIVATE KEY-----\\n\"}"));
	POS("gcp_service_account", put(s, "\"private_key_id\": \"", "0123456789abcdef", 40),
	    strcat(s, "\""));
	POS("azure_storage_key", put(s, "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=",
				     ALNUM, 86), strcat(s, "==;EndpointSuffix=core.windows.net"));
	POS("jwt", put(s, "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJ", ALNUM, 30),
	    put(s, ".", ALNUM, 43));
	POS("url_password", strcat(s, "DATABASE_URL=postgres://app:Xk2p9Lm4Qr@db:5432/orders"));
	POS("url_password", strcat(s, "redis://:s3cr3t-P4ss@cache:6379/0"));
	POS("connection_string",
	    strcat(s, "Server=db;Database=orders;User Id=app;Password=Hx7!kLm2;Encrypt=True"));
	POS("connection_string", strcat(s, "jdbc:mysql://db/orders?user=app&password=Hx7kLm2q&ssl=1"));
	POS("password_assignment", strcat(s, "DB_PASSWORD=Summer2024!"));
	POS("password_assignment", strcat(s, "  \"client_secret\": \"8fK2-pQ9_vLm3nR7\","));
	POS("password_assignment", strcat(s, "<password>Tr0ub4dor&3</password>"));
	POS("password_assignment", strcat(s, "curl -u admin:Tr0ub4dor3 https://x"));
	POS("password_assignment", strcat(s, "mycli --api-key 9f86d081884c7d659a2feaa0c55ad015 run"));
	POS("password_assignment", strcat(s, "mysql -u root -p'Tr0ub4dor&3' orders < dump.sql"));
	POS("password_assignment", strcat(s, "mysqldump -uroot -pTr0ub4dor3 orders"));
	POS("password_assignment", strcat(s, "sshpass -p 'Tr0ub4dor&3' ssh deploy@10.0.3.7"));
	POS("password_assignment", strcat(s, "<add key=\"ApiSecret\" value=\"Tr0ub4dor&3\" />"));
	POS("high_entropy", put(s, "started with ", ALNUM, 40));
#undef POS
	return 0;
}

static int rules_negative(void)
{
	static const char *const none[] = {
		"commit 3f2a9c1b7e4d8f6a0b5c2e9d1f7a3b8c4e6d0a2f",
		"image: app@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"request_id=0b6f7c1e-3d2a-4f5b-9c8d-7e6f5a4b3c2d",
		"\"integrity\": \"sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==\"",
		"aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"DB_PASSWORD=${DB_PASSWORD}", "password: <your-password>", "password: changeme",
		"GITHUB_TOKEN=xxxxxxxxxxxxxxxxxxxxxxxx", "password=********",
		"token: {{ .Values.apiToken }}", "secret_key = os.environ[\"SECRET_KEY\"]",
		"const apiKey = process.env.STRIPE_KEY;", "password = getpass.getpass()",
		"password_min_length: 12", "token_type: bearer", "max_tokens=4096",
		"secretName: tls-secret", "if password == confirm_password:",
		"https://github.com/acme/infra/pull/12", "postgres://localhost:5432/orders",
		"https://user@example.org/x", "git clone git@github.com:acme/infra.git",
		"echo SGVsbG8gV29ybGQsIHRoaXMgaXMganVzdCBzb21lIHRleHQgaW4gYmFzZTY0 | base64 -d",
		"at org.springframework.beans.factory.support.AbstractAutowireCapableBeanFactory.createBean",
		"/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
		"TestCheckoutService_ProcessPaymentWithExpiredCard_ReturnsDeclined2",
		"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----",
		"ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "sk-ant-api03-REDACTED",
		"bypass: true", "x=1&y=2", "a:b:c:d", "::1", "",
		"mysql -u root -p orders", "grep -p pattern file", "cp -pr a b",
		"<add key=\"PageSize\" value=\"Tr0ub4dor&3\" />",
	};
	size_t i;

	for (i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		CHECK(expect_rule(none[i], NULL) == 0);
	return 0;
}

static int output_format(void)
{
	char s[256] = "", want[256], out[512];

	put(s, "k=AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16);
	strcat(s, " next\nsecond line");
	CHECK(strcmp(rule_of(s, out, sizeof(out)), "aws_access_key_id") == 0);
	snprintf(want, sizeof(want), "k=[REDACTED:aws_access_key_id] next\nsecond line");
	CHECK(strcmp(out, want) == 0);
	return 0;
}

/* A text with a bit of everything, secrets and look-alikes. */
static char *mixed_text(size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	char *t = malloc(cap), line[4096];
	int i;

	if (!t)
		return NULL;
	t[0] = '\0';
	for (i = 0; n + 8192 < cap && i < 400; i++) {
		line[0] = '\0';
		switch (i % 9) {
		case 0:
			put_crc_token(line, "GITHUB_TOKEN=gh" "p_");
			break;
		case 1:
			strcpy(line, "2026-12-01T10:00:00Z INFO the request was served from cache");
			break;
		case 2:
			strcat(line, "-----BEGIN EC PRIVATE KEY-----\n");
			put(line, "MHcC", ALNUM, 200);
			strcat(line, "\n-----END EC PRIVATE KEY-----");
			break;
		case 3:
			strcpy(line, "DATABASE_URL=postgres://app:Xk2p9Lm4Qr@db:5432/orders");
			break;
		case 4:
			put(line, "started with ", ALNUM, 48);
			break;
		case 5:
			strcpy(line, "commit 3f2a9c1b7e4d8f6a0b5c2e9d1f7a3b8c4e6d0a2f \xff\xfe bytes \x01");
			break;
		case 6:
			put(line, "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJ", ALNUM, 30);
			put(line, ".", ALNUM, 43);
			break;
		case 7:
			strcpy(line, "password: \"Summer2024!\" and later Summer2024! again");
			break;
		default:
			put(line, "  \"description\": \"", "abcdefgh ijklmnop", 300);
			strcat(line, "\"");
		}
		n += (size_t)snprintf(t + n, cap - n, "%s\n", line);
	}
	*len = n;
	return t;
}

struct sink {
	char *p;
	size_t len, cap;
	int fail_after; /* fail the write after this many bytes (-1: never) */
};

static int sink_write(void *arg, const char *buf, size_t n, struct tg_error *err)
{
	struct sink *s = arg;

	if (s->fail_after >= 0 && s->len + n > (size_t)s->fail_after)
		return tg_error_set(err, TG_ERR_SYSTEM, "test sink: full");
	if (s->len + n + 1 > s->cap) {
		s->cap = (s->len + n + 1) * 2;
		s->p = realloc(s->p, s->cap);
		if (!s->p)
			return -1;
	}
	memcpy(s->p + s->len, buf, n);
	s->len += n;
	return 0;
}

/* Stream t in chunks of chunk bytes (0: varying) and compare with one call. */
static int stream_matches(const char *t, size_t n, size_t chunk)
{
	struct tg_redact_out one;
	struct tg_redact_stream *st;
	struct sink sink = { NULL, 0, 0, -1 };
	const struct tg_redact_finding *f;
	struct tg_error err;
	size_t off = 0, nf, i;
	uint64_t total;
	unsigned flags;
	int rc = -1;

	if (tg_redact(t, n, &one, &err) < 0 || tg_redact_stream_new(sink_write, &sink, &st, &err) < 0)
		return -1;
	while (off < n) {
		size_t c = chunk ? chunk : 1 + rnd() % 5000;

		if (c > n - off)
			c = n - off;
		if (tg_redact_stream_feed(st, t + off, c, &err) < 0)
			goto out;
		off += c;
	}
	if (tg_redact_stream_finish(st, &err) < 0)
		goto out;
	f = tg_redact_stream_findings(st, &nf, &total, &flags);
	if (sink.len != one.len || memcmp(sink.p, one.text, one.len) != 0 || nf != one.nfindings ||
	    total != one.total || flags != one.flags) {
		fprintf(stderr, "chunk %zu: stream %zu bytes %zu findings, one call %zu bytes %zu\n",
			chunk, sink.len, nf, one.len, one.nfindings);
		goto out;
	}
	for (i = 0; i < nf; i++)
		if (f[i].offset != one.findings[i].offset || f[i].length != one.findings[i].length ||
		    f[i].line != one.findings[i].line || strcmp(f[i].rule, one.findings[i].rule) != 0)
			goto out;
	rc = 0;
out:
	tg_redact_stream_free(st);
	tg_redact_out_release(&one);
	free(sink.p);
	return rc;
}

static int stream_equals_one_call(void)
{
	static const size_t chunks[] = { 1, 2, 3, 7, 64, 1000, 4096, 16384, 17000, 65536, 1 << 20, 0 };
	size_t n, i;
	char *t = mixed_text(&n);
	struct tg_redact_out o;
	struct tg_error err;

	CHECK(t);
	CHECK(tg_redact(t, n, &o, &err) == 0);
	CHECK(o.nfindings > 200); /* the text does hold secrets */
	tg_redact_out_release(&o);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
		CHECK(stream_matches(t, n, chunks[i]) == 0);
	for (i = 0; i < 5; i++)
		CHECK(stream_matches(t, n, 0) == 0);
	free(t);
	return 0;
}

/* A secret split across two writes, at every point. */
static int split_across_writes(void)
{
	char s[256] = "log: token=";
	size_t n, cut;

	put_crc_token(s, "gh" "p_");
	strcat(s, " done\n");
	n = strlen(s);
	for (cut = 0; cut <= n; cut++) {
		struct tg_redact_stream *st;
		struct sink sink = { NULL, 0, 0, -1 };
		struct tg_error err;

		CHECK(tg_redact_stream_new(sink_write, &sink, &st, &err) == 0);
		CHECK(tg_redact_stream_feed(st, s, cut, &err) == 0);
		CHECK(tg_redact_stream_feed(st, s + cut, n - cut, &err) == 0);
		CHECK(tg_redact_stream_finish(st, &err) == 0);
		sink.p[sink.len] = '\0';
		CHECK(strcmp(sink.p, "log: token=[REDACTED:github_token] done\n") == 0);
		tg_redact_stream_free(st);
		free(sink.p);
	}
	return 0;
}

static int binary_and_invalid_utf8(void)
{
	char s[512] = "\x00\x01\x02 ";
	size_t n;
	struct tg_redact_out o;
	struct tg_error err;

	/* NUL is a byte: a key after one is still found */
	n = 4;
	memcpy(s + n, "AKIA", 4);
	n += 4;
	s[n] = '\0';
	put(s + n, "", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16);
	n += 16;
	memcpy(s + n, "\x00\xff\xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80 end", 18);
	n += 18;
	CHECK(tg_redact(s, n, &o, &err) == 0);
	CHECK(o.nfindings == 1 && strcmp(o.findings[0].rule, "aws_access_key_id") == 0);
	CHECK(o.findings[0].offset == 4 && o.findings[0].length == 20);
	CHECK(o.flags & TG_REDACT_BINARY);
	CHECK(o.flags & TG_REDACT_INVALID_UTF8);
	CHECK(memcmp(o.text + 4, "[REDACTED:aws_access_key_id]\0\xff\xc3", 31) == 0);
	tg_redact_out_release(&o);
	/* valid UTF-8, no NUL: no flag; a sequence cut at the end is invalid */
	CHECK(tg_redact("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, &o, &err) == 0);
	CHECK(o.flags == 0);
	tg_redact_out_release(&o);
	CHECK(tg_redact("caf\xc3", 4, &o, &err) == 0);
	CHECK(o.flags == TG_REDACT_INVALID_UTF8);
	tg_redact_out_release(&o);
	CHECK(tg_redact("", 0, &o, &err) == 0);
	CHECK(o.len == 0 && o.text && o.text[0] == '\0' && o.nfindings == 0);
	tg_redact_out_release(&o);
	return 0;
}

/* A key block without its END: redacted up to the cap, flagged, and on
 * past it while the body goes on; what follows a body that stops is
 * shown again. */
static int key_without_end(void)
{
	size_t n = 40000, i;
	char *s = malloc(n + 64);
	struct tg_redact_out o;
	struct tg_error err;

	CHECK(s);
	strcpy(s, "-----BEGIN RSA PRIVATE KEY-----\n");
	for (i = strlen(s); i < n; i++)
		s[i] = (i % 65 == 64) ? '\n' : 'A' + (char)(i % 26);
	s[n] = '\0';
	CHECK(tg_redact(s, n, &o, &err) == 0);
	CHECK(o.nfindings == 3 && strcmp(o.findings[0].rule, "private_key") == 0);
	CHECK(o.findings[0].length == TG_REDACT_KEY_CAP);
	CHECK(o.findings[1].offset == TG_REDACT_KEY_CAP);
	CHECK(o.findings[2].offset + o.findings[2].length == n);
	for (i = 0; i < 3; i++)
		CHECK(o.findings[i].flags & TG_REDACT_TRUNCATED);
	CHECK(o.flags & TG_REDACT_TRUNCATED);
	CHECK(strcmp(o.text, "[REDACTED:private_key][REDACTED:private_key][REDACTED:private_key]") == 0);
	tg_redact_out_release(&o);
	/* cut short (the tool's output was): the key's lines go, the prose stays */
	strcpy(s, "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\nMHcCAQEEIIrYSSNQFaA2Hwf1\n"
		  "MIIBVwIBADANBgkqhkiG9w0BAQ\nerror: output truncated\n");
	CHECK(tg_redact(s, strlen(s), &o, &err) == 0);
	CHECK(o.nfindings == 1 && (o.findings[0].flags & TG_REDACT_TRUNCATED));
	CHECK(strcmp(o.text, "[REDACTED:private_key]\nerror: output truncated\n") == 0);
	tg_redact_out_release(&o);
	/* in a JSON string, up to its closing quote */
	strcpy(s, "{\"k\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkq\\nhkiG9w0B\", \"x\": 1}");
	CHECK(tg_redact(s, strlen(s), &o, &err) == 0);
	CHECK(strcmp(o.text, "{\"k\": \"[REDACTED:private_key]\", \"x\": 1}") == 0);
	tg_redact_out_release(&o);
	free(s);
	return 0;
}

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

struct lag {
	uint64_t written;
};

static int count_write(void *arg, const char *buf, size_t n, struct tg_error *err)
{
	(void)buf, (void)err;
	((struct lag *)arg)->written += n;
	return 0;
}

/* 64 MiB without a newline, in 64 KiB writes: what is held stays under
 * the window, the output keeps up, memory does not grow. Twice: one long
 * base64-like run, and text with a secret every MiB. */
static int memory_bound(void)
{
	static char chunk[65536];
	int pass;

	for (pass = 0; pass < 2; pass++) {
		struct tg_redact_stream *st;
		struct lag lag = { 0 };
		struct tg_error err;
		uint64_t fed = 0;
		long before = max_rss_kb();
		size_t nf;
		uint64_t total;
		int i;

		CHECK(tg_redact_stream_new(count_write, &lag, &st, &err) == 0);
		for (i = 0; i < 1024; i++) {
			size_t k;

			for (k = 0; k < sizeof(chunk); k++)
				chunk[k] = pass ? "the quick brown fox "[k % 20] : ALNUM[(k * 7 + i) % 62];
			if (pass && i % 16 == 0)
				memcpy(chunk + 1000, " password=Summer2024! ", 22);
			CHECK(tg_redact_stream_feed(st, chunk, sizeof(chunk), &err) == 0);
			fed += sizeof(chunk);
			/* no secret in pass 0: output bytes are input bytes */
			if (!pass)
				CHECK(fed - lag.written <= TG_REDACT_WINDOW + 96 + 4096);
		}
		CHECK(tg_redact_stream_finish(st, &err) == 0);
		tg_redact_stream_findings(st, &nf, &total, NULL);
		CHECK(pass ? total == 64 : total == 0);
		if (!pass)
			CHECK(lag.written == fed);
		tg_redact_stream_free(st);
		CHECK(max_rss_kb() - before < 16 * 1024);
	}
	return 0;
}

static int overlapping(void)
{
	char s[512], out[1024];

	/* a known format as a keyed value: its own rule names it */
	s[0] = '\0';
	put_crc_token(s, "password=gh" "p_");
	CHECK(strcmp(rule_of(s, NULL, 0), "github_token") == 0);
	/* two secrets side by side */
	s[0] = '\0';
	put(s, "AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16);
	put_crc_token(s, ":gh" "p_");
	CHECK(strcmp(rule_of(s, out, sizeof(out)), "many") == 0);
	CHECK(strcmp(out, "[REDACTED:aws_access_key_id]:[REDACTED:github_token]") == 0);
	/* a URL's password that is itself a token: one redaction */
	s[0] = '\0';
	put_crc_token(s, "https://x-access-token:gh" "s_");
	strcat(s, "@github.com/acme/infra.git");
	CHECK(strcmp(rule_of(s, out, sizeof(out)), "url_password") == 0);
	CHECK(strcmp(out, "https://x-access-token:[REDACTED:url_password]@github.com/acme/infra.git") == 0);
	/* a token as a URL's user, a password after it: both */
	s[0] = '\0';
	put(s, "https://AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16);
	strcat(s, ":Xk2p9Lm4Qr@s3.example.org/b");
	CHECK(strcmp(rule_of(s, out, sizeof(out)), "many") == 0);
	CHECK(strcmp(out, "https://[REDACTED:aws_access_key_id]:[REDACTED:url_password]@s3.example.org/b") == 0);
	/* "password=" inside a key block: the block wins */
	strcpy(s, "-----BEGIN PRIVATE KEY-----\npassword=Summer2024!\n-----END PRIVATE KEY-----\nok");
	CHECK(strcmp(rule_of(s, out, sizeof(out)), "private_key") == 0);
	CHECK(strcmp(out, "[REDACTED:private_key]\nok") == 0);
	/* a secret found once is redacted where it recurs, with the same rule */
	strcpy(s, "DB_PASSWORD=Summer2024!\necho Summer2024! | psql\n");
	CHECK(strcmp(rule_of(s, out, sizeof(out)), "many") == 0);
	CHECK(strcmp(out, "DB_PASSWORD=[REDACTED:password_assignment]\necho "
			  "[REDACTED:password_assignment] | psql\n") == 0);
	return 0;
}

static int lines_and_offsets(void)
{
	const char *t = "one\ntwo\npassword: \"Summer2024!\"\nfour\n";
	struct tg_redact_out o;
	struct tg_error err;

	CHECK(tg_redact(t, strlen(t), &o, &err) == 0);
	CHECK(o.nfindings == 1 && o.total == 1);
	CHECK(o.findings[0].line == 3);
	CHECK(o.findings[0].offset == (uint64_t)(strstr(t, "Summer") - t));
	CHECK(o.findings[0].length == 11);
	tg_redact_out_release(&o);
	return 0;
}

static int stream_errors(void)
{
	struct tg_redact_stream *st;
	struct sink sink = { NULL, 0, 0, 10 };
	struct tg_error err;
	char big[40000];

	memset(big, 'x', sizeof(big));
	CHECK(tg_redact_stream_new(NULL, NULL, &st, &err) < 0 && st == NULL);
	CHECK(err.code == TG_ERR_INVALID);
	/* the output failing is the caller's error, as it said it */
	CHECK(tg_redact_stream_new(sink_write, &sink, &st, &err) == 0);
	CHECK(tg_redact_stream_feed(st, big, sizeof(big), &err) < 0);
	CHECK(strstr(err.msg, "test sink: full"));
	CHECK(tg_redact_stream_feed(st, "x", 1, &err) < 0);
	tg_redact_stream_free(st);
	free(sink.p);
	/* feeding after the end */
	CHECK(tg_redact_stream_new(sink_write, &sink, &st, &err) == 0);
	sink.p = NULL, sink.len = sink.cap = 0, sink.fail_after = -1;
	CHECK(tg_redact_stream_finish(st, &err) == 0);
	CHECK(tg_redact_stream_feed(st, "x", 1, &err) < 0);
	CHECK(strstr(err.msg, "after its end"));
	tg_redact_stream_free(st);
	tg_redact_stream_free(NULL);
	tg_redact_out_release(NULL);
	free(sink.p);
	return 0;
}

static int rule_names(void)
{
	const char *const *r = tg_redact_rules();
	size_t n = 0;

	for (; *r; r++, n++)
		CHECK(strspn(*r, "abcdefghijklmnopqrstuvwxyz_") == strlen(*r));
	/* 22 hand-written rules, then the vendor rules' families */
	CHECK(n > 100 && strcmp(tg_redact_rules()[21], "high_entropy") == 0);
	return 0;
}


/* ---- encoded secrets ---------------------------------------------------- */

static const char UPNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/* in[0..n) in base64 (url: the URL-safe alphabet; pad: '=' at the end;
 * width: characters a line, brk between lines, 0: one line), appended. */
static void b64_put(char *out, const void *in, size_t n, int url, int pad, size_t width,
		    const char *brk)
{
	const char *d = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
			    : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *v = in;
	size_t len = strlen(out), i, k, line = 0;

	for (i = 0; i < n; i += 3) {
		unsigned x = (unsigned)v[i] << 16 | (i + 1 < n ? (unsigned)v[i + 1] << 8 : 0) |
			     (i + 2 < n ? v[i + 2] : 0);
		size_t emit = i + 2 < n ? 4 : i + 1 < n ? 3 : 2;

		for (k = 0; k < 4; k++) {
			if (k >= emit && !pad)
				break;
			if (width && line == width) {
				strcpy(out + len, brk);
				len += strlen(brk);
				line = 0;
			}
			out[len++] = k < emit ? d[(x >> (18 - 6 * k)) & 63] : '=';
			line++;
		}
	}
	out[len] = '\0';
}

/* Base64 (either alphabet) in s decoded, other bytes skipped; its length. */
static size_t b64_get(const char *s, unsigned char *out)
{
	unsigned acc = 0, bits = 0;
	size_t o = 0;

	for (; *s; s++) {
		const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *at = *s == '-' ? a + 62 : *s == '_' ? a + 63 : strchr(a, *s);

		if (!at || *s == '\0')
			continue;
		acc = (acc << 6 | (unsigned)(at - a)) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	out[o] = '\0';
	return o;
}

static void hex_put(char *out, const void *in, size_t n, int upper)
{
	const unsigned char *v = in;
	size_t len = strlen(out), i;

	for (i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, 3, upper ? "%02X" : "%02x", v[i]);
}

/* A .env as a tool reads it: an AWS key id, a GitHub token, a byte that
 * is not UTF-8. *tok: the token's 40 bytes. */
static void dot_env(char *env, char *tok)
{
	char *t;

	strcpy(env, "AWS_ACCESS_KEY_ID=AKIA");
	put(env, "", UPNUM, 16);
	strcat(env, "\nGITHUB_TOKEN=");
	t = env + strlen(env);
	put_crc_token(env, "gh" "p_");
	memcpy(tok, t, 40);
	tok[40] = '\0';
	strcat(env, "\nNAME=caf\xe9\n");
}

/* text = before + run + after; redacted, it is before + marker + after. */
static int run_redacted(const char *before, const char *run, const char *after, const char *rule)
{
	char text[8192], want[8192];
	struct tg_redact_out o;
	struct tg_error err;

	snprintf(text, sizeof(text), "%s%s%s", before, run, after);
	snprintf(want, sizeof(want), "%s[REDACTED:%s]%s", before, rule, after);
	CHECK(tg_redact(text, strlen(text), &o, &err) == 0);
	if (strcmp(o.text, want) != 0 || o.nfindings != 1 ||
	    !(o.findings[0].flags & TG_REDACT_ENCODED) || !(o.flags & TG_REDACT_ENCODED)) {
		fprintf(stderr, "%s\n  gave %s (%zu findings)\n  want %s\n", text, o.text,
			o.nfindings, want);
		tg_redact_out_release(&o);
		return -1;
	}
	tg_redact_out_release(&o);
	return stream_matches(text, strlen(text), 1) || stream_matches(text, strlen(text), 0);
}

/* base64 and hex of a .env in a tool's output, as Python and base64(1)
 * print them: the whole run is redacted, named by the first secret in it. */
static int encoded_in_text(void)
{
	char env[512], tok[41], run[4096];
	const char *prose = "The quick brown fox jumps over the lazy dog, and the dog sleeps on "
			    "while the fox goes home through the wood in the evening light.";
	const char *aws = "aws_access_key_id";
	struct tg_redact_out o;
	struct tg_error err;
	size_t k;

	dot_env(env, tok);
	run[0] = '\0';
	b64_put(run, env, strlen(env), 0, 1, 0, "");
	CHECK(run_redacted("stdout: b'", run, "'\n", aws) == 0);
	CHECK(run_redacted("", run, "", aws) == 0);
	run[0] = '\0';
	b64_put(run, env, strlen(env), 1, 0, 0, "");
	CHECK(run_redacted("token ", run, " end", aws) == 0);
	run[0] = '\0';
	hex_put(run, env, strlen(env), 0);
	CHECK(run_redacted("dump ", run, "\n", aws) == 0);
	run[0] = '\0';
	hex_put(run, env, strlen(env), 1);
	CHECK(run_redacted("dump ", run, "\n", aws) == 0);
	strcpy(run, "0x");
	hex_put(run, env, strlen(env), 0);
	CHECK(run_redacted("dump ", run, "\n", aws) == 0);
	/* wrapped as base64(1) and MIME do, and so in a JSON string */
	run[0] = '\0';
	b64_put(run, env, strlen(env), 0, 1, 76, "\n");
	CHECK(run_redacted("Content-Transfer-Encoding: base64\n\n", run, "\n--b--\n", aws) == 0);
	run[0] = '\0';
	b64_put(run, env, strlen(env), 0, 1, 64, "\r\n");
	CHECK(run_redacted("x:\r\n", run, "\r\n", aws) == 0);
	run[0] = '\0';
	b64_put(run, env, strlen(env), 0, 1, 76, "\\n");
	CHECK(run_redacted("{\"stdout\":\"", run, "\\n\",\"exit_code\":0}", aws) == 0);
	/* a JSON encoder that escapes '/' ("\\/"): the run goes on through
	 * it, from a first piece shorter than a run, and wrapped */
	{
		char esc[4096], *r, *e;
		size_t len = strlen(env);

		memmove(env + 3, env, len + 1);
		memcpy(env, "???", 3); /* "Pz8/" */
		for (k = 0; k < 2; k++) {
			run[0] = '\0';
			b64_put(run, env, strlen(env), 0, 1, k ? 64 : 0, "\\n");
			for (r = run, e = esc; *r; r++) {
				if (*r == '/')
					*e++ = '\\';
				*e++ = *r;
			}
			*e = '\0';
			CHECK(strstr(esc, "Pz8\\/"));
			CHECK(run_redacted("{\"out\":\"", esc, "\"}", aws) == 0);
		}
		memmove(env, env + 3, len + 1);
	}
	/* one secret alone, printed by b64encode(token) */
	run[0] = '\0';
	b64_put(run, tok, 40, 0, 1, 0, "");
	CHECK(run_redacted("b'", run, "'", "github_token") == 0);
	/* a run cut out of a longer one (a tail kept, an excerpt) decodes
	 * whatever its alignment */
	run[0] = '\0';
	b64_put(run, env, strlen(env), 0, 1, 0, "");
	CHECK(run_redacted("...", run + 1, "", aws) == 0);
	CHECK(run_redacted("", run + 2, "", aws) == 0);
	CHECK(run_redacted("tail: ", run + 3, "\n", aws) == 0);
	run[0] = '\0';
	hex_put(run, env, strlen(env), 0);
	CHECK(run_redacted("", run + 1, "", aws) == 0);
	/* a secret the text showed before: its base64 later is a repeat */
	snprintf(run, sizeof(run), "password: \"Xk2p9Lm4Qr77\"\nlater ");
	b64_put(run, "Xk2p9Lm4Qr77", 12, 0, 1, 0, "");
	CHECK(tg_redact(run, strlen(run), &o, &err) == 0);
	CHECK(o.nfindings == 2 && strcmp(o.findings[1].rule, "password_assignment") == 0);
	CHECK(strstr(o.text, "later [REDACTED:password_assignment]"));
	tg_redact_out_release(&o);
	/* a password of 8 to 11 bytes: its base64 (12 to 16 characters) too */
	snprintf(run, sizeof(run), "password: \"Xk2p9Lm4\"\nlater ");
	b64_put(run, "Xk2p9Lm4", 8, 0, 1, 0, "");
	strcat(run, " and ");
	b64_put(run, "Xk2p9Lm4", 8, 0, 0, 0, "");
	CHECK(tg_redact(run, strlen(run), &o, &err) == 0);
	CHECK(strstr(o.text, "later [REDACTED:password_assignment] and "
			     "[REDACTED:password_assignment]"));
	tg_redact_out_release(&o);
	CHECK(stream_matches(run, strlen(run), 1) == 0);
	/* a secret found in a decoded run: its bare repeat later too */
	snprintf(run, sizeof(run), "b'");
	b64_put(run, "db_password=Zq8vLm2pWx44\n", 25, 0, 1, 0, "");
	strcat(run, "'\nthen Zq8vLm2pWx44 again");
	CHECK(tg_redact(run, strlen(run), &o, &err) == 0);
	CHECK(strstr(o.text, "then [REDACTED:password_assignment] again"));
	tg_redact_out_release(&o);
	CHECK(stream_matches(run, strlen(run), 1) == 0);
	/* base64 of text without a secret, of a documented example key, of
	 * random bytes: left as they are */
	run[0] = '\0';
	b64_put(run, prose, strlen(prose), 0, 1, 0, "");
	strcat(run, " ");
	b64_put(run, "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n", 39, 0, 1, 0, "");
	strcat(run, "\n");
	hex_put(run, prose, strlen(prose), 0);
	CHECK(tg_redact(run, strlen(run), &o, &err) == 0);
	CHECK(o.nfindings == 0 && strcmp(o.text, run) == 0);
	tg_redact_out_release(&o);
	return 0;
}

/* A wrapped block whose first line a rule takes ("token=" + base64 of a
 * .env, "Authorization: Basic " + a block): its later lines are decoded
 * from the second, not skipped as lines of a block decoded already. */
static int encoded_block_after_rule(void)
{
	static const char *const before[] = { "token=", "Authorization: Basic " };
	char env[512], tok[41], text[4096];
	struct tg_redact_out o;
	struct tg_error err;
	size_t k;

	dot_env(env, tok);
	for (k = 0; k < sizeof(before) / sizeof(before[0]); k++) {
		const char *nl;

		strcpy(text, before[k]);
		b64_put(text, env, strlen(env), 0, 1, 76, "\n");
		strcat(text, "\n");
		CHECK(tg_redact(text, strlen(text), &o, &err) == 0);
		nl = strchr(o.text, '\n');
		/* the first line a marker, the rest one marker */
		if (!nl || strncmp(nl + 1, "[REDACTED:", 10) != 0 || o.nfindings != 2 ||
		    strchr(nl + 1, '\n') != o.text + o.len - 1) {
			fprintf(stderr, "%s\n  gave %s\n", text, o.text);
			tg_redact_out_release(&o);
			return -1;
		}
		tg_redact_out_release(&o);
		CHECK(stream_matches(text, strlen(text), 1) == 0);
		CHECK(stream_matches(text, strlen(text), 0) == 0);
	}
	return 0;
}

/* A run longer than one decision decodes: a secret anywhere in it, across
 * a cut too, is found, and the run is redacted from there to its end. */
static int encoded_long_run(void)
{
	static const size_t at[] = { 12270, 12282 - 20, 40000, 99000 };
	size_t n = 100000, k;
	char *plain = malloc(n + 64), *text = malloc(n * 2), tok[48];
	unsigned char *shown = malloc(n * 2);

	CHECK(plain && text && shown);
	for (k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
		struct tg_redact_out o;
		struct tg_error err;
		size_t i, visible;
		char *m;

		for (i = 0; i < n; i++)
			plain[i] = "the fox and the dog\n"[i % 20];
		tok[0] = '\0';
		put_crc_token(tok, "gh" "p_");
		memcpy(plain + at[k] - 1, " ", 1);
		memcpy(plain + at[k], tok, 40);
		memcpy(plain + at[k] + 40, "\n", 1);
		strcpy(text, "data: ");
		b64_put(text, plain, n, 0, 1, 0, "");
		strcat(text, "\nend\n");
		CHECK(tg_redact(text, strlen(text), &o, &err) == 0);
		CHECK(o.nfindings >= 1 && strcmp(o.findings[0].rule, "github_token") == 0);
		m = strstr(o.text, "[REDACTED:github_token]");
		CHECK(m);
		/* what is shown of the run decodes to text before the token */
		visible = (size_t)(m - o.text);
		memcpy(text, o.text, visible);
		text[visible] = '\0';
		CHECK(b64_get(text + 6, shown) <= at[k]);
		/* after the first marker, only markers up to the run's end */
		while (strncmp(m, "[REDACTED:github_token]", 23) == 0)
			m += 23;
		CHECK(strcmp(m, "\nend\n") == 0);
		tg_redact_out_release(&o);
		strcpy(text, "data: ");
		b64_put(text, plain, n, 0, 1, 0, "");
		strcat(text, "\nend\n");
		CHECK(stream_matches(text, strlen(text), 1000) == 0);
		CHECK(stream_matches(text, strlen(text), 0) == 0);
	}
	free(plain);
	free(text);
	free(shown);
	return 0;
}

/* A plain match in a long run across where its next decision decodes
 * again (a key-shaped "/AKIA..." in base64): the run is decoded on from
 * the match's end, and a token in its tail is found. */
static int encoded_match_across_redecode(void)
{
	size_t n = 40000, i, o;
	char *plain = malloc(n + 1), *text = malloc(n * 2), tok[48];

	CHECK(plain && text);
	for (i = 0; i < n; i++)
		plain[i] = "the fox and the dog\n"[i % 20];
	tok[0] = '\0';
	put_crc_token(tok, "gh" "p_");
	memcpy(plain + 30000, tok, 40);
	plain[30040] = '\n';
	for (o = 15690; o < 15760; o++) {
		struct tg_redact_out r;
		struct tg_error err;
		char *k;

		strcpy(text, "data: ");
		b64_put(text, plain, n, 0, 1, 0, "");
		strcat(text, "\nend\n");
		k = text + 6 + o;
		k[0] = k[21] = '/';
		memcpy(k + 1, "AKIA", 4);
		for (i = 5; i < 21; i++)
			k[i] = UPNUM[(o + i) % 32];
		CHECK(tg_redact(text, strlen(text), &r, &err) == 0);
		if (!strstr(r.text, "[REDACTED:aws_access_key_id]") ||
		    !strstr(r.text, "[REDACTED:github_token]")) {
			fprintf(stderr, "key at %zu: the token in the run's tail was shown\n", o);
			tg_redact_out_release(&r);
			return -1;
		}
		tg_redact_out_release(&r);
		if (o % 16 == 0)
			CHECK(stream_matches(text, strlen(text), 1000) == 0);
	}
	free(plain);
	free(text);
	return 0;
}

static int value_redacted(const char *in, const char *want_decoded, int (*shape)(const char *))
{
	unsigned char dec[4096];
	struct tg_redact_out o;
	struct tg_error err;
	size_t i;
	int hex = 1;

	CHECK(tg_redact_value(in, strlen(in), &o, &err) == 0);
	CHECK(o.flags & TG_REDACT_DECODED);
	CHECK(o.total == 2 && o.nfindings == 2);
	CHECK(strcmp(o.findings[0].rule, "aws_access_key_id") == 0);
	CHECK(strcmp(o.findings[1].rule, "github_token") == 0);
	for (i = 0; o.text[i]; i++)
		hex &= strchr("0123456789abcdefABCDEF", o.text[i]) != NULL;
	if (hex) {
		for (i = 0; o.text[2 * i]; i++) {
			unsigned x;

			CHECK(sscanf(o.text + 2 * i, "%2x", &x) == 1);
			dec[i] = (unsigned char)x;
		}
		dec[i] = '\0';
	} else {
		b64_get(o.text, dec);
	}
	if (strcmp((const char *)dec, want_decoded) != 0 || (shape && !shape(o.text))) {
		fprintf(stderr, "%s\n  gave %s\n  decoding to %s\n", in, o.text, dec);
		tg_redact_out_release(&o);
		return -1;
	}
	tg_redact_out_release(&o);
	return 0;
}

static int lines_of_76(const char *s)
{
	const char *nl;

	for (; (nl = strchr(s, '\n')) && nl[1]; s = nl + 1)
		if (nl - s != 76)
			return 0;
	return nl && nl - s <= 76 && nl[1] == '\0';
}

static int url_unpadded(const char *s)
{
	return !strpbrk(s, "+/=\n");
}

static int upper_hex(const char *s)
{
	return strspn(s, "0123456789ABCDEF") == strlen(s);
}

/* A value that is all base64 or hex (fs.read's content of a file that is
 * not UTF-8): decoded whole, redacted, encoded again the same way. */
static int value_decoded_whole(void)
{
	char env[512], tok[41], v[4096], want[1024], *t;
	struct tg_redact_out o;
	struct tg_error err;

	dot_env(env, tok);
	snprintf(want, sizeof(want), "AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key_id]\n"
				     "GITHUB_TOKEN=[REDACTED:github_token]\nNAME=caf\xe9\n");
	v[0] = '\0';
	b64_put(v, env, strlen(env), 0, 1, 0, "");
	CHECK(value_redacted(v, want, NULL) == 0);
	/* base64(1)'s lines and last newline; the URL-safe alphabet unpadded;
	 * hex, upper case */
	for (t = env + strlen(env); strlen(env) < 400; t = env + strlen(env))
		snprintf(t, 64, "# a comment line to make it longer %zu\n", strlen(env));
	snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s", strstr(env, "# a"));
	v[0] = '\0';
	b64_put(v, env, strlen(env), 0, 1, 76, "\n");
	strcat(v, "\n");
	CHECK(value_redacted(v, want, lines_of_76) == 0);
	v[0] = '\0';
	b64_put(v, env, strlen(env), 1, 0, 0, "");
	CHECK(value_redacted(v, want, url_unpadded) == 0);
	v[0] = '\0';
	hex_put(v, env, strlen(env), 1);
	CHECK(value_redacted(v, want, upper_hex) == 0);
	/* nothing in it: as it was, not flagged */
	v[0] = '\0';
	b64_put(v, "just some text, nothing secret in it at all", 43, 0, 1, 0, "");
	CHECK(tg_redact_value(v, strlen(v), &o, &err) == 0);
	CHECK(o.total == 0 && o.flags == 0 && strcmp(o.text, v) == 0);
	tg_redact_out_release(&o);
	/* not all encoded: redacted as text, the run by its marker */
	strcpy(v, "data ");
	b64_put(v, env, strlen(env), 0, 1, 0, "");
	CHECK(tg_redact_value(v, strlen(v), &o, &err) == 0);
	CHECK(strcmp(o.text, "data [REDACTED:aws_access_key_id]") == 0);
	CHECK(!(o.flags & TG_REDACT_DECODED));
	tg_redact_out_release(&o);
	/* misaligned (a value cut out of a longer one, "ab" + base64
	 * unpadded, "a" + hex): decoded from the alignment that reads */
	strcpy(v, "ab");
	b64_put(v, env, strlen(env), 0, 0, 0, "");
	CHECK(tg_redact_value(v, strlen(v), &o, &err) == 0);
	CHECK(o.total >= 1 && strcmp(o.text, "[REDACTED:aws_access_key_id]") == 0);
	tg_redact_out_release(&o);
	strcpy(v, "a");
	hex_put(v, env, strlen(env), 0);
	CHECK(tg_redact_value(v, strlen(v), &o, &err) == 0);
	CHECK(o.total >= 1 && strcmp(o.text, "[REDACTED:aws_access_key_id]") == 0);
	tg_redact_out_release(&o);
	/* binary (an image with a text chunk): a key in a format is found,
	 * an id that is only random-looking is not cut out of it */
	{
		unsigned char bin[600];
		size_t i;

		for (i = 0; i < sizeof(bin); i++)
			bin[i] = (unsigned char)(rnd() | 0x80);
		memcpy(bin + 200, "tEXtComment\0id ", 16);
		for (i = 0; i < 40; i++)
			bin[216 + i] = (unsigned char)ALNUM[rnd() % 62];
		memcpy(bin + 256, " key AKIA", 9);
		for (i = 0; i < 16; i++)
			bin[265 + i] = (unsigned char)UPNUM[rnd() % 32];
		bin[281] = ' ';
		v[0] = '\0';
		b64_put(v, bin, sizeof(bin), 0, 1, 76, "\n");
		CHECK(tg_redact_value(v, strlen(v), &o, &err) == 0);
		CHECK(o.total == 1 && strcmp(o.findings[0].rule, "aws_access_key_id") == 0);
		CHECK(o.flags & TG_REDACT_DECODED);
		tg_redact_out_release(&o);
		/* without the key: as it was */
		memset(bin + 256, ' ', 26);
		v[0] = '\0';
		b64_put(v, bin, sizeof(bin), 0, 1, 76, "\n");
		CHECK(tg_redact_value(v, strlen(v), &o, &err) == 0);
		CHECK(o.total == 0 && strcmp(o.text, v) == 0);
		tg_redact_out_release(&o);
	}
	/* a key that is itself the value: found as it always was */
	v[0] = '\0';
	put(v, "", ALNUM, 40);
	CHECK(tg_redact_value(v, strlen(v), &o, &err) == 0);
	CHECK(o.total == 1 && strcmp(o.findings[0].rule, "high_entropy") == 0);
	tg_redact_out_release(&o);
	return 0;
}

const struct unit_test redact_tests[] = {
	{ "redact/rules_positive", rules_positive },
	{ "redact/rules_negative", rules_negative },
	{ "redact/output_format", output_format },
	{ "redact/stream_equals_one_call", stream_equals_one_call },
	{ "redact/split_across_writes", split_across_writes },
	{ "redact/binary_and_invalid_utf8", binary_and_invalid_utf8 },
	{ "redact/key_without_end", key_without_end },
	{ "redact/memory_bound", memory_bound },
	{ "redact/overlapping", overlapping },
	{ "redact/lines_and_offsets", lines_and_offsets },
	{ "redact/stream_errors", stream_errors },
	{ "redact/rule_names", rule_names },
	{ "redact/encoded_in_text", encoded_in_text },
	{ "redact/encoded_long_run", encoded_long_run },
	{ "redact/encoded_block_after_rule", encoded_block_after_rule },
	{ "redact/encoded_match_across_redecode", encoded_match_across_redecode },
	{ "redact/value_decoded_whole", value_decoded_whole },
	UNIT_TESTS_END
};

/*
 * Unit tests: minisign's formats (src/skills/minisign.c). A key pair
 * signs and verifies; another key, a changed byte of the data, a changed
 * trusted comment are refused, each saying so; malformed signatures and
 * keys (cut short, not base64, another algorithm, a line missing, past a
 * ceiling) are refused with their messages; secret keys go round trip
 * unencrypted and under a password, and a wrong password is refused; and
 * files made once by minisign 0.11 itself (below) are read and verified,
 * without minisign installed.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/sign.h"
#include "unit.h"

/* Made with /usr/bin/minisign 0.11: `minisign -G -W -p pub -s sec`,
 * `printf 'hello toolgate\n' > file`, `minisign -S -s sec -m file -t
 * 'trusted text'`, and `minisign -S -l ...` for the legacy one. The secret
 * key is a test key, unencrypted, with the zero checksum `-W` leaves. */
#define MS_KEYID "89F9F02A7C33CEBA"
#define MS_DATA "hello toolgate\n"
static const char ms_pub[] =
	"untrusted comment: minisign public key 89F9F02A7C33CEBA\n"
	"RWS6zjN8KvD5iTZvaGD1xxpaEcQTlI1NKA6a1DFS9Vg/zC/tLBHGi7Sa\n";
static const char ms_sec[] =
	"untrusted comment: minisign encrypted secret key\n"
	"RWQAAEIyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAus4zfCrw+YmJf6AQ"
	"/PVVktX4oQHBNOWlYnaeNAcbCJ2e8FQEOqqeMjZvaGD1xxpaEcQTlI1NKA6a1DFS9Vg/zC/tLBHGi7SaAAAAAAAA"
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";
static const char ms_sig[] =
	"untrusted comment: signature from minisign secret key\n"
	"RUS6zjN8KvD5icVLYGdivjBl3Au2zwo0E3UnsGKxaf7q/bk4K0rTpCqNSN/pJgpULApGLEtgDy9YbPLdsZxOQcj7"
	"ZVVpCozVhQ4=\n"
	"trusted comment: trusted text\n"
	"Y/0x4w6JAUIivnMFxx58hiXOSODzqEeBhDroVXk8Wf5ZyA0wrWfCb7c45w96o6k/5MY9YULLwCzdf8cUQ2bNAg==\n";
static const char ms_sig_legacy[] =
	"untrusted comment: signature from minisign secret key\n"
	"RWS6zjN8KvD5icwHm2zY9OIYoqUwo+81O5yO1fX42hLv4cIkSSThW5oiOXwNPTGdtaLbWea5ziMmEqlRE48Cs2Sa"
	"5oSMoo2EiAo=\n"
	"trusted comment: legacy trusted\n"
	"hTfIp5B2Ik2ajoFKSabmZZh9AiaSsd7TMfBBRLHyjvQ1No2d5E3NHGDYyxhmw0ekGIlq87HMaZMXLXPtsw0wDg==\n";

static const char data[] = "the bytes of a skill bundle\n";

/* rc is a refusal whose message contains want; else say what came. */
static int refused_with(int rc, const struct tg_error *err, const char *want)
{
	if (rc == 0) {
		fprintf(stderr, "accepted; want a refusal with \"%s\"\n", want);
		return 0;
	}
	if (!strstr(err->msg, want)) {
		fprintf(stderr, "refused with \"%s\"; want \"%s\"\n", err->msg, want);
		return 0;
	}
	return 1;
}

static int verify(const struct tg_sign_pub *pub, const char *d, const char *sig,
		  struct tg_error *err)
{
	char tc[TG_SIGN_TRUSTED_MAX + 1];

	return tg_sign_verify(pub, d, strlen(d), sig, strlen(sig), tc, sizeof(tc), err);
}

/* text with its line no (from 1) replaced by repl (NULL: removed),
 * malloc'd. */
static char *with_line(const char *text, int no, const char *repl)
{
	const char *p = text, *nl;
	char *out;
	size_t before, after_off;
	int i;

	for (i = 1; i < no && p; i++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return NULL;
	nl = strchr(p, '\n');
	before = (size_t)(p - text);
	after_off = nl ? (size_t)(nl + 1 - text) : strlen(text);
	out = malloc(strlen(text) + (repl ? strlen(repl) : 0) + 2);
	if (!out)
		return NULL;
	memcpy(out, text, before);
	out[before] = '\0';
	if (repl)
		snprintf(out + before, strlen(repl) + 2, "%s\n", repl);
	memcpy(out + strlen(out), text + after_off, strlen(text + after_off) + 1);
	return out;
}

/* The bytes line no of text decodes to, into bin (max bytes): how many,
 * 0 if it does not. */
static size_t line_bytes(const char *text, int no, unsigned char *bin, size_t max)
{
	const char *p = text, *nl;
	size_t n = 0;
	int i;

	for (i = 1; i < no && p; i++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return 0;
	nl = strchr(p, '\n');
	if (sodium_base642bin(bin, max, p, nl ? (size_t)(nl - p) : strlen(p), NULL, &n, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0)
		return 0;
	return n;
}

/* text with line no re-encoded from bin (n bytes), malloc'd. */
static char *with_bytes(const char *text, int no, const unsigned char *bin, size_t n)
{
	char b64[1024];

	sodium_bin2base64(b64, sizeof(b64), bin, n, sodium_base64_VARIANT_ORIGINAL);
	return with_line(text, no, b64);
}

static int test_round_trip(void)
{
	struct tg_sign_pub pub, pub2;
	struct tg_sign_sec sec;
	struct tg_error err;
	unsigned char id[TG_SIGN_KEYID_LEN], bin[128];
	char tc[TG_SIGN_TRUSTED_MAX + 1], hex[17], *sig, *text, *nl;

	CHECK(tg_sign_keygen(&pub, &sec, &err) == 0);
	sig = tg_sign_data(&sec, data, strlen(data), "file:bundle.tar\tversion:1.2", &err);
	CHECK(sig);
	/* the prehashed form, minisign 0.11's default */
	CHECK(strncmp(sig, "untrusted comment: ", 19) == 0);
	CHECK(line_bytes(sig, 2, bin, sizeof(bin)) == 74 && memcmp(bin, "ED", 2) == 0);
	CHECK(tg_sign_verify(&pub, data, strlen(data), sig, strlen(sig), tc, sizeof(tc), &err) == 0);
	CHECK(strcmp(tc, "file:bundle.tar\tversion:1.2") == 0);
	CHECK(tg_sign_verify(&pub, data, strlen(data), sig, strlen(sig), NULL, 0, &err) == 0);
	CHECK(tg_sign_sig_keyid(sig, strlen(sig), id, &err) == 0);
	CHECK(memcmp(id, pub.id, sizeof(id)) == 0);
	/* the public half of the secret key is the public key */
	tg_sign_sec_pub(&sec, &pub2);
	CHECK(memcmp(&pub, &pub2, sizeof(pub)) == 0);
	/* the public key's file, and its base64 line alone, read back */
	text = tg_sign_pub_format(&pub);
	CHECK(text);
	tg_sign_keyid_hex(pub.id, hex);
	CHECK(strncmp(text, "untrusted comment: minisign public key ", 39) == 0);
	CHECK(strncmp(text + 39, hex, 16) == 0);
	CHECK(tg_sign_pub_parse(text, strlen(text), &pub2, &err) == 0);
	CHECK(memcmp(&pub, &pub2, sizeof(pub)) == 0);
	nl = strchr(text, '\n') + 1;
	CHECK(tg_sign_pub_parse(nl, strlen(nl) - 1, &pub2, &err) == 0);
	CHECK(memcmp(&pub, &pub2, sizeof(pub)) == 0);
	/* no trusted comment: minisign's default */
	free(sig);
	sig = tg_sign_data(&sec, "", 0, NULL, &err);
	CHECK(sig);
	CHECK(tg_sign_verify(&pub, NULL, 0, sig, strlen(sig), tc, sizeof(tc), &err) == 0);
	CHECK(strncmp(tc, "timestamp:", 10) == 0);
	free(sig);
	free(text);
	tg_sign_sec_release(&sec);
	return 0;
}

static int test_other_key(void)
{
	struct tg_sign_pub pub, other;
	struct tg_sign_sec sec, other_sec;
	struct tg_error err;
	char want[80], hex[17], ohex[17], *sig;

	CHECK(tg_sign_keygen(&pub, &sec, &err) == 0);
	CHECK(tg_sign_keygen(&other, &other_sec, &err) == 0);
	sig = tg_sign_data(&sec, data, strlen(data), "t", &err);
	CHECK(sig);
	tg_sign_keyid_hex(pub.id, hex);
	tg_sign_keyid_hex(other.id, ohex);
	snprintf(want, sizeof(want), "signature: signed by key %s, not %s", hex, ohex);
	CHECK(refused_with(verify(&other, data, sig, &err), &err, want));
	/* a key that claims the signer's id is no better */
	memcpy(other.id, pub.id, sizeof(other.id));
	CHECK(refused_with(verify(&other, data, sig, &err), &err, "signature: does not verify"));
	free(sig);
	return 0;
}

static int test_data_changed(void)
{
	struct tg_sign_pub pub;
	struct tg_sign_sec sec;
	struct tg_error err;
	char copy[sizeof(data)], *sig;
	size_t i;

	CHECK(tg_sign_keygen(&pub, &sec, &err) == 0);
	sig = tg_sign_data(&sec, data, strlen(data), "t", &err);
	CHECK(sig);
	for (i = 0; i < strlen(data); i += 7) {
		memcpy(copy, data, sizeof(data));
		copy[i] ^= 0x01;
		CHECK(refused_with(verify(&pub, copy, sig, &err), &err,
				   "signature: does not verify (the data was altered"));
	}
	/* one byte less */
	CHECK(tg_sign_verify(&pub, data, strlen(data) - 1, sig, strlen(sig), NULL, 0, &err) < 0);
	CHECK(verify(&pub, data, sig, &err) == 0);
	free(sig);
	return 0;
}

static int test_trusted_changed(void)
{
	struct tg_sign_pub pub;
	struct tg_sign_sec sec;
	struct tg_error err;
	char *sig, *bad;

	CHECK(tg_sign_keygen(&pub, &sec, &err) == 0);
	sig = tg_sign_data(&sec, data, strlen(data), "version:1.2", &err);
	CHECK(sig);
	bad = with_line(sig, 3, "trusted comment: version:1.3");
	CHECK(bad);
	CHECK(refused_with(verify(&pub, data, bad, &err), &err,
			   "signature: the trusted comment was altered (global signature fails)"));
	free(bad);
	bad = with_line(sig, 3, "trusted comment: version:1.2 ");
	CHECK(refused_with(verify(&pub, data, bad, &err), &err, "global signature fails"));
	free(bad);
	/* the untrusted comment is not signed: changing it changes nothing */
	bad = with_line(sig, 1, "untrusted comment: anything at all");
	CHECK(verify(&pub, data, bad, &err) == 0);
	free(bad);
	free(sig);
	return 0;
}

/* The malformed signatures each refused with their message. */
static int test_malformed_sig(void)
{
	struct tg_sign_pub pub;
	struct tg_sign_sec sec;
	struct tg_error err;
	unsigned char bin[128], id[TG_SIGN_KEYID_LEN];
	char big[TG_SIGN_FILE_MAX + 64], *sig, *bad, *line2;
	size_t n, cut;

	CHECK(tg_sign_keygen(&pub, &sec, &err) == 0);
	sig = tg_sign_data(&sec, data, strlen(data), "t", &err);
	CHECK(sig);
	/* cut short anywhere: refused, never accepted */
	for (cut = 0; cut < strlen(sig) - 1; cut++) {
		CHECK(tg_sign_verify(&pub, data, strlen(data), sig, cut, NULL, 0, &err) < 0);
		CHECK(err.msg[0]);
		CHECK(tg_sign_sig_keyid(sig, cut, id, &err) < 0);
	}
	/* all but its final newline: accepted, as minisign does */
	CHECK(tg_sign_verify(&pub, data, strlen(data), sig, strlen(sig) - 1, NULL, 0, &err) == 0);
	CHECK(refused_with(tg_sign_verify(&pub, data, strlen(data), sig, 0, NULL, 0, &err), &err,
			   "signature: line 1 (the untrusted comment) is missing"));
	cut = (size_t)(strstr(sig, "trusted comment: t\n") + 19 - sig);
	CHECK(refused_with(tg_sign_verify(&pub, data, strlen(data), sig, cut, NULL, 0, &err), &err,
			   "signature: line 4 (the global signature) is missing"));
	CHECK(refused_with(tg_sign_verify(&pub, data, strlen(data), sig, cut + 21, NULL, 0, &err),
			   &err, "signature: line 4: not base64"));
	bad = with_line(sig, 3, NULL);
	bad[strlen(bad) - 1] = '\0'; /* and no final newline: three lines */
	CHECK(refused_with(verify(&pub, data, bad, &err), &err, "signature: line 3: want "
			   "\"trusted comment: ...\""));
	free(bad);
	bad = with_line(sig, 4, NULL);
	CHECK(refused_with(verify(&pub, data, bad, &err), &err,
			   "signature: line 4 (the global signature) is missing"));
	free(bad);
	bad = with_line(sig, 2, "RUS this is not base64!");
	CHECK(refused_with(verify(&pub, data, bad, &err), &err, "signature: line 2: not base64"));
	free(bad);
	bad = with_line(sig, 2, "");
	CHECK(refused_with(verify(&pub, data, bad, &err), &err, "signature: line 2 is empty"));
	free(bad);
	/* a byte short, a byte over */
	n = line_bytes(sig, 2, bin, sizeof(bin));
	CHECK(n == 74);
	bad = with_bytes(sig, 2, bin, 73);
	CHECK(refused_with(verify(&pub, data, bad, &err), &err,
			   "signature: line 2: 73 bytes, a minisign signature has 74"));
	free(bad);
	bin[74] = 0;
	bad = with_bytes(sig, 2, bin, 75);
	CHECK(refused_with(verify(&pub, data, bad, &err), &err,
			   "signature: line 2: 75 bytes, a minisign signature has 74"));
	free(bad);
	/* another algorithm */
	memcpy(bin, "Xy", 2);
	bad = with_bytes(sig, 2, bin, 74);
	CHECK(refused_with(verify(&pub, data, bad, &err), &err,
			   "signature: algorithm 'Xy' is not Ed or ED"));
	CHECK(refused_with(tg_sign_sig_keyid(bad, strlen(bad), id, &err), &err, "'Xy'"));
	free(bad);
	memcpy(bin, "\0\n", 2);
	bad = with_bytes(sig, 2, bin, 74);
	CHECK(refused_with(verify(&pub, data, bad, &err), &err, "algorithm '\\x00\\x0a'"));
	free(bad);
	/* "Ed" in place of "ED": a legacy signature over the data itself, which
	 * this one is not */
	memcpy(bin, "Ed", 2);
	bad = with_bytes(sig, 2, bin, 74);
	CHECK(refused_with(verify(&pub, data, bad, &err), &err, "signature: does not verify"));
	free(bad);
	/* padding then more: nothing may trail the base64 */
	line2 = strchr(sig, '\n') + 1;
	snprintf(big, sizeof(big), "%.*sAAAA", (int)(strchr(line2, '\n') - line2), line2);
	bad = with_line(sig, 2, big);
	CHECK(refused_with(verify(&pub, data, bad, &err), &err, "signature: line 2: not base64"));
	free(bad);
	/* line 1 */
	bad = with_line(sig, 1, "untrusted: x");
	CHECK(refused_with(verify(&pub, data, bad, &err), &err,
			   "signature: line 1: want \"untrusted comment: ...\""));
	free(bad);
	/* text after the four lines */
	snprintf(big, sizeof(big), "%sextra\n", sig);
	CHECK(refused_with(verify(&pub, data, big, &err), &err, "signature: text after line 4"));
	/* past the ceiling, and a NUL byte */
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(refused_with(verify(&pub, data, big, &err), &err, "more than the 4096"));
	CHECK(err.code == TG_ERR_LIMIT);
	CHECK(refused_with(tg_sign_verify(&pub, data, strlen(data), sig, strlen(sig) + 1, NULL, 0,
					  &err), &err, "signature: a NUL byte"));
	free(sig);
	return 0;
}

/* The trusted comment's rules: CR-LF lines read, ceilings, control
 * characters refused on both sides, the caller's buffer. */
static int test_trusted_rules(void)
{
	struct tg_sign_pub pub;
	struct tg_sign_sec sec;
	struct tg_error err;
	char long_tc[TG_SIGN_TRUSTED_MAX + 2], small[8], crlf[1024], *sig, *bad, *p, *q;

	CHECK(tg_sign_keygen(&pub, &sec, &err) == 0);
	memset(long_tc, 'x', sizeof(long_tc) - 1);
	long_tc[sizeof(long_tc) - 1] = '\0';
	CHECK(refused_with(tg_sign_data(&sec, data, strlen(data), long_tc, &err) ? 0 : -1, &err,
			   "the trusted comment is 1025 bytes, more than 1024"));
	CHECK(refused_with(tg_sign_data(&sec, data, strlen(data), "two\nlines", &err) ? 0 : -1,
			   &err, "control character (U+000A"));
	CHECK(refused_with(tg_sign_data(&sec, data, strlen(data), "\x1b[2J", &err) ? 0 : -1, &err,
			   "control character (U+001B"));
	CHECK(refused_with(tg_sign_data(&sec, data, strlen(data), "bad \xff", &err) ? 0 : -1, &err,
			   "not UTF-8"));
	/* the longest allowed, UTF-8 and a tab: fine, and it must fit the buffer */
	long_tc[TG_SIGN_TRUSTED_MAX] = '\0';
	memcpy(long_tc, "caf\xc3\xa9\t", 6);
	sig = tg_sign_data(&sec, data, strlen(data), long_tc, &err);
	CHECK(sig);
	CHECK(verify(&pub, data, sig, &err) == 0);
	CHECK(refused_with(tg_sign_verify(&pub, data, strlen(data), sig, strlen(sig), small,
					  sizeof(small), &err), &err, "does not fit"));
	CHECK(small[0] == '\0');
	/* a trusted comment with an escape in it, signed by someone else's
	 * code: refused before its signature is looked at */
	bad = with_line(sig, 3, "trusted comment: \x1b]0;pwned\x07");
	CHECK(refused_with(verify(&pub, data, bad, &err), &err,
			   "signature: line 3: the trusted comment has a control character"));
	free(bad);
	free(sig);
	/* CR-LF line ends */
	sig = tg_sign_data(&sec, data, strlen(data), "crlf", &err);
	CHECK(sig);
	for (p = sig, q = crlf; *p && q < crlf + sizeof(crlf) - 2; p++) {
		if (*p == '\n')
			*q++ = '\r';
		*q++ = *p;
	}
	*q = '\0';
	CHECK(tg_sign_verify(&pub, data, strlen(data), crlf, strlen(crlf), long_tc,
			     sizeof(long_tc), &err) == 0);
	CHECK(strcmp(long_tc, "crlf") == 0);
	free(sig);
	return 0;
}

/* Files minisign 0.11 made, read and verified. */
static int test_minisign_vector(void)
{
	struct tg_sign_pub pub, derived;
	struct tg_sign_sec sec;
	struct tg_error err;
	unsigned char id[TG_SIGN_KEYID_LEN];
	char tc[TG_SIGN_TRUSTED_MAX + 1], hex[17], *sig, *text;

	CHECK(tg_sign_pub_parse(ms_pub, strlen(ms_pub), &pub, &err) == 0);
	tg_sign_keyid_hex(pub.id, hex);
	CHECK(strcmp(hex, MS_KEYID) == 0);
	CHECK(tg_sign_verify(&pub, MS_DATA, strlen(MS_DATA), ms_sig, strlen(ms_sig), tc,
			     sizeof(tc), &err) == 0);
	CHECK(strcmp(tc, "trusted text") == 0);
	CHECK(tg_sign_verify(&pub, MS_DATA, strlen(MS_DATA), ms_sig_legacy, strlen(ms_sig_legacy),
			     tc, sizeof(tc), &err) == 0);
	CHECK(strcmp(tc, "legacy trusted") == 0);
	CHECK(tg_sign_sig_keyid(ms_sig, strlen(ms_sig), id, &err) == 0);
	CHECK(memcmp(id, pub.id, sizeof(id)) == 0);
	CHECK(refused_with(tg_sign_verify(&pub, "hello toolgate!", 15, ms_sig, strlen(ms_sig),
					  NULL, 0, &err), &err, "does not verify"));
	CHECK(refused_with(tg_sign_verify(&pub, "hello toolgate!", 15, ms_sig_legacy,
					  strlen(ms_sig_legacy), NULL, 0, &err), &err,
			   "does not verify"));
	/* what toolgate writes of that public key is what minisign wrote */
	text = tg_sign_pub_format(&pub);
	CHECK(text && strcmp(text, ms_pub) == 0);
	free(text);
	/* minisign's unencrypted secret key: read, its public half the key
	 * above, and what it signs verifies */
	CHECK(tg_sign_sec_parse(ms_sec, strlen(ms_sec), NULL, &sec, &err) == 0);
	tg_sign_sec_pub(&sec, &derived);
	CHECK(memcmp(&derived, &pub, sizeof(pub)) == 0);
	sig = tg_sign_data(&sec, MS_DATA, strlen(MS_DATA), "trusted text", &err);
	CHECK(sig);
	CHECK(verify(&pub, MS_DATA, sig, &err) == 0);
	/* Ed25519 is deterministic: the same signature minisign made */
	CHECK(strcmp(strchr(sig, '\n'), strchr(ms_sig, '\n')) == 0);
	free(sig);
	tg_sign_sec_release(&sec);
	return 0;
}

static int test_sec_round_trip(void)
{
	struct tg_sign_pub pub;
	struct tg_sign_sec sec, back;
	struct tg_error err;
	char *text;

	CHECK(tg_sign_keygen(&pub, &sec, &err) == 0);
	/* unencrypted, as `minisign -G -W` writes it */
	text = tg_sign_sec_format(&sec, NULL, &err);
	CHECK(text);
	CHECK(strncmp(text, "untrusted comment: ", 19) == 0);
	CHECK(strstr(text, "\nRWQAAEIy")); /* "Ed", no KDF, "B2" */
	CHECK(tg_sign_sec_parse(text, strlen(text), NULL, &back, &err) == 0);
	CHECK(memcmp(&sec, &back, sizeof(sec)) == 0);
	CHECK(tg_sign_sec_parse(text, strlen(text), "ignored", &back, &err) == 0);
	CHECK(memcmp(&sec, &back, sizeof(sec)) == 0);
	sodium_memzero(text, strlen(text));
	free(text);
	/* under a password */
	text = tg_sign_sec_format(&sec, "correct horse", &err);
	CHECK(text);
	CHECK(strstr(text, "\nRWRTY0Iy")); /* "Ed", "Sc", "B2" */
	CHECK(tg_sign_sec_parse(text, strlen(text), "correct horse", &back, &err) == 0);
	CHECK(memcmp(&sec, &back, sizeof(sec)) == 0);
	CHECK(refused_with(tg_sign_sec_parse(text, strlen(text), "correct horsf", &back, &err),
			   &err, "secret key: wrong password (checksum mismatch)"));
	CHECK(sodium_is_zero((unsigned char *)&back, sizeof(back)));
	CHECK(refused_with(tg_sign_sec_parse(text, strlen(text), "", &back, &err), &err,
			   "wrong password"));
	CHECK(refused_with(tg_sign_sec_parse(text, strlen(text), NULL, &back, &err), &err,
			   "secret key: encrypted, and no password was given"));
	sodium_memzero(text, strlen(text));
	free(text);
	tg_sign_sec_release(&sec);
	CHECK(sodium_is_zero((unsigned char *)&sec, sizeof(sec)));
	return 0;
}

/* Secret keys refused: past the KDF's ceilings (before any memory is
 * taken), damaged, another algorithm. */
static int test_sec_refused(void)
{
	struct tg_sign_pub pub;
	struct tg_sign_sec sec, back;
	struct tg_error err;
	unsigned char bin[160];
	char *text, *bad;
	size_t n;

	CHECK(tg_sign_keygen(&pub, &sec, &err) == 0);
	text = tg_sign_sec_format(&sec, "pw", &err);
	CHECK(text);
	n = line_bytes(text, 2, bin, sizeof(bin));
	CHECK(n == 158);
	/* memlimit (bytes 46..53) past 1 GiB: 1 GiB + 1 */
	memcpy(bin + 46, "\x01\x00\x00\x40\x00\x00\x00\x00", 8);
	bad = with_bytes(text, 2, bin, n);
	CHECK(refused_with(tg_sign_sec_parse(bad, strlen(bad), "pw", &back, &err), &err,
			   "memlimit 1073741825; the most allowed is"));
	CHECK(err.code == TG_ERR_LIMIT);
	free(bad);
	/* opslimit (bytes 38..45): 2^40 */
	line_bytes(text, 2, bin, sizeof(bin));
	memcpy(bin + 38, "\x00\x00\x00\x00\x00\x01\x00\x00", 8);
	bad = with_bytes(text, 2, bin, n);
	CHECK(refused_with(tg_sign_sec_parse(bad, strlen(bad), "pw", &back, &err), &err,
			   "opslimit 1099511627776"));
	free(bad);
	free(text);
	/* unencrypted: a damaged checksum, a damaged public half */
	text = tg_sign_sec_format(&sec, NULL, &err);
	CHECK(text);
	line_bytes(text, 2, bin, sizeof(bin));
	bin[157] ^= 1;
	bad = with_bytes(text, 2, bin, n);
	CHECK(refused_with(tg_sign_sec_parse(bad, strlen(bad), NULL, &back, &err), &err,
			   "secret key: checksum mismatch (the key is damaged)"));
	free(bad);
	line_bytes(text, 2, bin, sizeof(bin));
	memset(bin + 126, 0, 32); /* no checksum, as -W writes */
	bin[125] ^= 1;            /* the public key's last byte */
	bad = with_bytes(text, 2, bin, n);
	CHECK(refused_with(tg_sign_sec_parse(bad, strlen(bad), NULL, &back, &err), &err,
			   "secret key: its public half does not match its seed"));
	free(bad);
	/* algorithms */
	line_bytes(text, 2, bin, sizeof(bin));
	memcpy(bin, "ED", 2);
	bad = with_bytes(text, 2, bin, n);
	CHECK(refused_with(tg_sign_sec_parse(bad, strlen(bad), NULL, &back, &err), &err,
			   "secret key: algorithm 'ED' is not Ed"));
	free(bad);
	line_bytes(text, 2, bin, sizeof(bin));
	memcpy(bin + 2, "Ar", 2);
	bad = with_bytes(text, 2, bin, n);
	CHECK(refused_with(tg_sign_sec_parse(bad, strlen(bad), NULL, &back, &err), &err,
			   "secret key: key derivation 'Ar' is not Sc (scrypt) or none"));
	free(bad);
	line_bytes(text, 2, bin, sizeof(bin));
	memcpy(bin + 4, "S2", 2);
	bad = with_bytes(text, 2, bin, n);
	CHECK(refused_with(tg_sign_sec_parse(bad, strlen(bad), NULL, &back, &err), &err,
			   "secret key: checksum algorithm 'S2' is not B2"));
	free(bad);
	/* shape */
	line_bytes(text, 2, bin, sizeof(bin));
	bad = with_bytes(text, 2, bin, 157);
	CHECK(refused_with(tg_sign_sec_parse(bad, strlen(bad), NULL, &back, &err), &err,
			   "secret key: line 2: 157 bytes, a minisign secret key has 158"));
	free(bad);
	bad = with_line(text, 1, NULL);
	CHECK(refused_with(tg_sign_sec_parse(bad, strlen(bad), NULL, &back, &err), &err,
			   "secret key: line 1: want \"untrusted comment: ...\""));
	free(bad);
	n = (size_t)(strchr(text, '\n') + 11 - text);
	CHECK(refused_with(tg_sign_sec_parse(text, n, NULL, &back, &err), &err,
			   "secret key: line 2: not base64"));
	CHECK(sodium_is_zero((unsigned char *)&back, sizeof(back)));
	sodium_memzero(text, strlen(text));
	free(text);
	return 0;
}

static int test_pub_refused(void)
{
	struct tg_sign_pub pub;
	struct tg_error err;
	unsigned char bin[64];
	char *bad, big[128];
	size_t n;

	n = line_bytes(ms_pub, 2, bin, sizeof(bin));
	CHECK(n == 42);
	bad = with_bytes(ms_pub, 2, bin, 40);
	CHECK(refused_with(tg_sign_pub_parse(bad, strlen(bad), &pub, &err), &err,
			   "public key: line 2: 40 bytes, a minisign public key has 42"));
	free(bad);
	memcpy(bin, "ED", 2);
	bad = with_bytes(ms_pub, 2, bin, 42);
	CHECK(refused_with(tg_sign_pub_parse(bad, strlen(bad), &pub, &err), &err,
			   "public key: algorithm 'ED' is not Ed"));
	free(bad);
	CHECK(refused_with(tg_sign_pub_parse("", 0, &pub, &err), &err,
			   "public key: line 1 (the key) is missing"));
	CHECK(refused_with(tg_sign_pub_parse(ms_pub, 56, &pub, &err), &err,
			   "public key: line 2 (the key) is missing"));
	CHECK(refused_with(tg_sign_pub_parse("RWS6zjN8KvD5iTZvaGD1xxpaEcQTlI1NKA6a1DFS9Vg/zC/tLBHGi7S",
					     55, &pub, &err), &err, "public key: line 1: not base64"));
	snprintf(big, sizeof(big), "%sRWS=\n", ms_pub);
	CHECK(refused_with(tg_sign_pub_parse(big, strlen(big), &pub, &err), &err,
			   "public key: text after line 2"));
	CHECK(sodium_is_zero((unsigned char *)&pub, sizeof(pub)));
	return 0;
}

const struct unit_test sign_tests[] = {
	{ "sign/round_trip", test_round_trip },
	{ "sign/other_key", test_other_key },
	{ "sign/data_changed", test_data_changed },
	{ "sign/trusted_changed", test_trusted_changed },
	{ "sign/malformed_sig", test_malformed_sig },
	{ "sign/trusted_rules", test_trusted_rules },
	{ "sign/minisign_vector", test_minisign_vector },
	{ "sign/sec_round_trip", test_sec_round_trip },
	{ "sign/sec_refused", test_sec_refused },
	{ "sign/pub_refused", test_pub_refused },
	UNIT_TESTS_END
};

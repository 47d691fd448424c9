/*
 * libFuzzer entry point: minisign's formats (src/skills/minisign.c), as a
 * skill's publisher or an operator hands them over: the bytes are read as
 * a public key, a secret key (with a password, and with none), and a
 * signature, checked against a fixed key (minisign's own test key of
 * tests/unit/test_sign.c, so a signature it made takes the whole path).
 * Any bytes give a key, a signature or a reason, never a crash; and what
 * is accepted holds: a key read is written back the same, an accepted
 * secret key makes signatures its public half verifies, an accepted
 * signature names the fixed key and hands back a bounded trusted comment.
 *
 *   make build-fuzz/fuzz_minisig && mkdir -p build-fuzz/corpus/fuzz_minisig &&
 *   build-fuzz/fuzz_minisig -max_total_time=60 build-fuzz/corpus/fuzz_minisig \
 *       tests/fuzz/seeds/fuzz_minisig
 *   (libFuzzer writes what it finds to the first directory: not the seeds)
 */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/sign.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PASSWORD "fuzz" /* seeds/fuzz_minisig/sec_encrypted's */
#define SIGNED "hello toolgate\n"

static const char fixed_pub[] =
	"untrusted comment: minisign public key 89F9F02A7C33CEBA\n"
	"RWS6zjN8KvD5iTZvaGD1xxpaEcQTlI1NKA6a1DFS9Vg/zC/tLBHGi7Sa\n";
static struct tg_sign_pub fixed;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct tg_error err;

	(void)argc;
	(void)argv;
	if (tg_sign_pub_parse(fixed_pub, strlen(fixed_pub), &fixed, &err) < 0)
		abort();
	return 0;
}

static void refused(const struct tg_error *err)
{
	if (!err->msg[0])
		abort(); /* a refusal says why */
}

static void pub(const char *text, size_t size)
{
	struct tg_sign_pub k, back;
	struct tg_error err;
	char *out;

	if (tg_sign_pub_parse(text, size, &k, &err) < 0) {
		refused(&err);
		return;
	}
	out = tg_sign_pub_format(&k);
	if (!out || tg_sign_pub_parse(out, strlen(out), &back, &err) < 0 ||
	    memcmp(&k, &back, sizeof(k)) != 0)
		abort();
	free(out);
}

/* The cost of a secret key's key derivation is the file's to ask, up to
 * the ceilings (unit-tested: sign/sec_refused); at seconds an input, a
 * fuzzer would do nothing else. Only a cheap one is derived here. */
static int kdf_cheap(const char *text, size_t size)
{
	const char *line = memchr(text, '\n', size), *end;
	unsigned char bin[256];
	uint64_t ops = 0, mem = 0;
	size_t n = 0;
	int i;

	if (!line)
		return 0;
	line++;
	end = memchr(line, '\n', size - (size_t)(line - text));
	if (!end)
		end = text + size;
	if (end > line && end[-1] == '\r')
		end--;
	if (sodium_base642bin(bin, sizeof(bin), line, (size_t)(end - line), NULL, &n, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0 || n != 158)
		return 1; /* refused before any derivation */
	for (i = 7; i >= 0; i--) {
		ops = ops << 8 | bin[38 + i];
		mem = mem << 8 | bin[46 + i];
	}
	return ops <= 65536 && mem <= 16777216;
}

static void sec(const char *text, size_t size, const char *password)
{
	struct tg_sign_sec k, back;
	struct tg_sign_pub half;
	struct tg_error err;
	char *out, *sig;

	if (tg_sign_sec_parse(text, size, password, &k, &err) < 0) {
		refused(&err);
		return;
	}
	/* written back unencrypted, it reads the same */
	out = tg_sign_sec_format(&k, NULL, &err);
	if (!out || tg_sign_sec_parse(out, strlen(out), NULL, &back, &err) < 0 ||
	    memcmp(&k, &back, sizeof(k)) != 0)
		abort();
	free(out);
	/* its seed and its public half agree: what it signs, that verifies */
	tg_sign_sec_pub(&k, &half);
	sig = tg_sign_data(&k, text, size, "fuzz", &err);
	if (!sig || tg_sign_verify(&half, text, size, sig, strlen(sig), NULL, 0, &err) < 0)
		abort();
	free(sig);
	tg_sign_sec_release(&k);
	tg_sign_sec_release(&back);
}

static void sig(const char *text, size_t size)
{
	unsigned char id[TG_SIGN_KEYID_LEN];
	char tc[TG_SIGN_TRUSTED_MAX + 1];
	struct tg_error err, verr;
	int named, ok;

	named = tg_sign_sig_keyid(text, size, id, &err) == 0;
	if (!named)
		refused(&err);
	ok = tg_sign_verify(&fixed, SIGNED, strlen(SIGNED), text, size, tc, sizeof(tc), &verr) == 0;
	if (!ok) {
		refused(&verr);
		return;
	}
	/* accepted: well formed, by the fixed key, its comment bounded */
	if (!named || memcmp(id, fixed.id, sizeof(id)) != 0 ||
	    strlen(tc) > TG_SIGN_TRUSTED_MAX || strchr(tc, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;

	pub(text, size);
	sec(text, size, NULL);
	if (kdf_cheap(text, size))
		sec(text, size, PASSWORD);
	sig(text, size);
	return 0;
}

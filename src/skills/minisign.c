/*
 * minisign's formats (include/toolgate/sign.h): public keys, secret keys
 * and signatures as minisign 0.11 reads and writes them, over libsodium.
 * Each file is lines of text, one of them (two for a signature) the
 * base64 of a packed binary record, laid out below as minisign lays it
 * out (src/minisign.h there). Every text arrives untrusted: a ceiling on
 * its size, exact line ends, base64 that decodes to exactly the record's
 * length, and a message naming the file, the line and what is wrong.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "toolgate/sign.h"
#include "util/sodium.h"
#include "util/utf8.h"

#define B64 sodium_base64_VARIANT_ORIGINAL
#define UNTRUSTED "untrusted comment: "
#define TRUSTED "trusted comment: "
#define ALG_ED "Ed"      /* keys, and legacy signatures: over the data itself */
#define ALG_HASHED "ED"  /* signatures over BLAKE2b-512 of the data */
#define KDF_SCRYPT "Sc"
#define KDF_NONE "\0\0"  /* `minisign -G -W` */
#define CHK_B2 "B2"

struct pub_bin {
	unsigned char alg[2], id[TG_SIGN_KEYID_LEN], pk[TG_SIGN_PK_LEN];
};

struct sig_bin {
	unsigned char alg[2], id[TG_SIGN_KEYID_LEN], sig[crypto_sign_BYTES];
};

struct sec_bin {
	unsigned char alg[2], kdf[2], chk_alg[2];
	unsigned char salt[crypto_pwhash_scryptsalsa208sha256_SALTBYTES], ops[8], mem[8];
	/* keynum_sk, XORed with the scrypt stream of the password under "Sc" */
	unsigned char id[TG_SIGN_KEYID_LEN], sk[TG_SIGN_SK_LEN], chk[crypto_generichash_BYTES];
};

#define KEYNUM_SK_OFF offsetof(struct sec_bin, id)
#define KEYNUM_SK_LEN (sizeof(struct sec_bin) - KEYNUM_SK_OFF)

/* the records are packed: byte arrays only, no padding */
_Static_assert(sizeof(struct pub_bin) == 42, "minisign's public key is 42 bytes");
_Static_assert(sizeof(struct sig_bin) == 74, "minisign's signature is 74 bytes");
_Static_assert(sizeof(struct sec_bin) == 158, "minisign's secret key is 158 bytes");
_Static_assert(KEYNUM_SK_LEN == 104, "minisign encrypts 104 bytes of its secret key");
_Static_assert(TG_SIGN_SK_LEN == crypto_sign_SECRETKEYBYTES, "Ed25519");
_Static_assert(TG_SIGN_PK_LEN == crypto_sign_PUBLICKEYBYTES, "Ed25519");
_Static_assert(TG_SIGN_KDF_OPSLIMIT == crypto_pwhash_scryptsalsa208sha256_OPSLIMIT_INTERACTIVE,
	       "the interactive opslimit");
_Static_assert(TG_SIGN_KDF_MEMLIMIT == crypto_pwhash_scryptsalsa208sha256_MEMLIMIT_INTERACTIVE,
	       "the interactive memlimit");

/* A text read a line at a time. */
struct lines {
	const char *what;   /* "signature", "public key", "secret key" */
	const char *p, *end;
	unsigned no;        /* the line last read, from 1 */
};

static int sign_start(struct tg_error *err)
{
	return tg_sodium_load("minisign signatures", err);
}

static uint64_t le64_load(const unsigned char p[8])
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void le64_store(unsigned char p[8], uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++, v >>= 8)
		p[i] = (unsigned char)(v & 0xff);
}

/* An algorithm's two bytes from an untrusted record, printable: "Ed",
 * "\x00\x00". */
static const char *alg_show(const unsigned char a[2], char out[9])
{
	size_t n = 0;
	int i;

	for (i = 0; i < 2; i++) {
		if (a[i] > 0x20 && a[i] < 0x7f && a[i] != '\'' && a[i] != '\\')
			out[n++] = (char)a[i];
		else
			n += (size_t)snprintf(out + n, 9 - n, "\\x%02x", a[i]);
	}
	out[n] = '\0';
	return out;
}

static int lines_start(struct lines *l, const char *what, const char *text, size_t len,
		       struct tg_error *err)
{
	if (!text)
		len = 0;
	l->what = what;
	l->p = text ? text : "";
	l->end = l->p + len;
	l->no = 0;
	if (sign_start(err) < 0)
		return -1;
	if (len > TG_SIGN_FILE_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "%s: %zu bytes, more than the %d a minisign "
				    "file may have here", what, len, TG_SIGN_FILE_MAX);
	if (len && memchr(l->p, '\0', len))
		return tg_error_set(err, TG_ERR_INVALID, "%s: a NUL byte (not a text file)", what);
	return 0;
}

/* The next line, without its "\n" or "\r\n", into OUT *line, *n; the
 * last line of the text may end at its end. name says what line is
 * expected, for the message when there is none. */
static int next_line(struct lines *l, const char *name, const char **line, size_t *n,
		     struct tg_error *err)
{
	const char *nl;

	l->no++;
	if (l->p == l->end)
		return tg_error_set(err, TG_ERR_INVALID, "%s: line %u (%s) is missing", l->what,
				    l->no, name);
	*line = l->p;
	nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
	if (nl) {
		*n = (size_t)(nl - l->p);
		l->p = nl + 1;
		if (*n && (*line)[*n - 1] == '\r')
			(*n)--;
	} else {
		*n = (size_t)(l->end - l->p);
		l->p = l->end;
	}
	return 0;
}

static int lines_end(const struct lines *l, struct tg_error *err)
{
	if (l->p != l->end)
		return tg_error_set(err, TG_ERR_INVALID, "%s: text after line %u, its last", l->what,
				    l->no);
	return 0;
}

static int has_prefix(const char *line, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && memcmp(line, prefix, k) == 0;
}

/* The line just read (n bytes) as the base64 of exactly want bytes (a
 * minisign name), into OUT out. The decoding buffer is zeroed: it may
 * hold a secret key. */
static int b64_line(const struct lines *l, const char *line, size_t n, void *out, size_t want,
		    const char *name, struct tg_error *err)
{
	unsigned char bin[TG_SIGN_FILE_MAX / 4 * 3 + 3];
	size_t got = 0;
	int rc = -1;

	/* no ignore set and no end pointer: anything after the padding fails */
	if (n == 0)
		tg_error_set(err, TG_ERR_INVALID, "%s: line %u is empty (want the base64 of a "
			     "minisign %s)", l->what, l->no, name);
	else if (sodium_base642bin(bin, sizeof(bin), line, n, NULL, &got, NULL, B64) != 0)
		tg_error_set(err, TG_ERR_INVALID, "%s: line %u: not base64", l->what, l->no);
	else if (got != want)
		tg_error_set(err, TG_ERR_INVALID, "%s: line %u: %zu bytes, a minisign %s has %zu",
			     l->what, l->no, got, name, want);
	else {
		memcpy(out, bin, want);
		rc = 0;
	}
	sodium_memzero(bin, sizeof(bin));
	return rc;
}

/* 0 if t (n bytes) may be a trusted comment: one minisign would sign and
 * show (it is printed to a terminal): at most TG_SIGN_TRUSTED_MAX bytes of
 * UTF-8 with no control character but tab. */
static int trusted_check(const char *where, const char *t, size_t n, struct tg_error *err)
{
	const unsigned char *s = (const unsigned char *)t;
	uint32_t cp = 0;
	size_t i = 0, k;

	if (n > TG_SIGN_TRUSTED_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "%s: the trusted comment is %zu bytes, more "
				    "than %d", where, n, TG_SIGN_TRUSTED_MAX);
	while (i < n) {
		k = utf8_char(s + i, n - i, &cp);
		if (!k)
			return tg_error_set(err, TG_ERR_INVALID, "%s: the trusted comment is not "
					    "UTF-8 (at byte %zu)", where, i);
		if ((cp < 0x20 && cp != '\t') || (cp >= 0x7f && cp <= 0x9f))
			return tg_error_set(err, TG_ERR_INVALID, "%s: the trusted comment has a "
					    "control character (U+%04X at byte %zu)", where,
					    (unsigned)cp, i);
		i += k;
	}
	return 0;
}

void tg_sign_keyid_hex(const unsigned char id[TG_SIGN_KEYID_LEN], char out[17])
{
	snprintf(out, 17, "%016" PRIX64, le64_load(id));
}

int tg_sign_keygen(struct tg_sign_pub *pub, struct tg_sign_sec *sec, struct tg_error *err)
{
	tg_error_clear(err);
	memset(pub, 0, sizeof(*pub));
	memset(sec, 0, sizeof(*sec));
	if (sign_start(err) < 0)
		return -1;
	randombytes_buf(sec->id, sizeof(sec->id));
	crypto_sign_keypair(pub->pk, sec->sk);
	memcpy(pub->id, sec->id, sizeof(pub->id));
	return 0;
}

void tg_sign_sec_pub(const struct tg_sign_sec *sec, struct tg_sign_pub *pub)
{
	memcpy(pub->id, sec->id, sizeof(pub->id));
	crypto_sign_ed25519_sk_to_pk(pub->pk, sec->sk);
}

void tg_sign_sec_release(struct tg_sign_sec *sec)
{
	if (sec)
		sodium_memzero(sec, sizeof(*sec));
}

/* head, the base64 of bin (n bytes) and "\n", malloc'd; NULL when out of
 * memory. Built in place, so no copy of a secret is left behind. */
static char *b64_text(const char *head, const void *bin, size_t n)
{
	size_t hl = strlen(head), bl = sodium_base64_ENCODED_LEN(n, B64); /* with its NUL */
	char *t = malloc(hl + bl + 1);

	if (!t)
		return NULL;
	memcpy(t, head, hl);
	sodium_bin2base64(t + hl, bl, bin, n, B64);
	t[hl + bl - 1] = '\n';
	t[hl + bl] = '\0';
	return t;
}

int tg_sign_pub_parse(const char *text, size_t len, struct tg_sign_pub *out, struct tg_error *err)
{
	struct lines l;
	struct pub_bin b;
	const char *line = NULL;
	char alg[9];
	size_t n = 0;

	tg_error_clear(err);
	memset(out, 0, sizeof(*out));
	if (lines_start(&l, "public key", text, len, err) < 0 ||
	    next_line(&l, "the key", &line, &n, err) < 0)
		return -1;
	/* a minisign.pub file, or the base64 line alone (`minisign -P`) */
	if (has_prefix(line, n, UNTRUSTED) && next_line(&l, "the key", &line, &n, err) < 0)
		return -1;
	if (b64_line(&l, line, n, &b, sizeof(b), "public key", err) < 0 || lines_end(&l, err) < 0)
		return -1;
	if (memcmp(b.alg, ALG_ED, 2) != 0)
		return tg_error_set(err, TG_ERR_INVALID, "public key: algorithm '%s' is not Ed",
				    alg_show(b.alg, alg));
	memcpy(out->id, b.id, sizeof(out->id));
	memcpy(out->pk, b.pk, sizeof(out->pk));
	return 0;
}

char *tg_sign_pub_format(const struct tg_sign_pub *pub)
{
	struct pub_bin b;
	char head[64], hex[17];

	memcpy(b.alg, ALG_ED, 2);
	memcpy(b.id, pub->id, sizeof(b.id));
	memcpy(b.pk, pub->pk, sizeof(b.pk));
	tg_sign_keyid_hex(pub->id, hex);
	snprintf(head, sizeof(head), UNTRUSTED "minisign public key %s\n", hex);
	return b64_text(head, &b, sizeof(b));
}

/* minisign's checksum of a secret key: BLAKE2b-256 of its algorithm, key
 * id and Ed25519 secret key, into OUT chk. */
static void sec_checksum(const struct sec_bin *b, unsigned char chk[crypto_generichash_BYTES])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, crypto_generichash_BYTES);
	crypto_generichash_update(&st, b->alg, sizeof(b->alg));
	crypto_generichash_update(&st, b->id, sizeof(b->id));
	crypto_generichash_update(&st, b->sk, sizeof(b->sk));
	crypto_generichash_final(&st, chk, crypto_generichash_BYTES);
	sodium_memzero(&st, sizeof(st));
}

/* XOR b's keynum_sk with the scrypt stream of password under b's salt,
 * opslimit and memlimit: encrypts, or decrypts. */
static int sec_xor(struct sec_bin *b, const char *password, struct tg_error *err)
{
	unsigned char stream[KEYNUM_SK_LEN], *p = (unsigned char *)b + KEYNUM_SK_OFF;
	uint64_t ops = le64_load(b->ops), mem = le64_load(b->mem);
	size_t i;

	/* the file says how much to spend: refuse before allocating it */
	if (ops > TG_SIGN_KDF_OPSLIMIT_MAX || mem > TG_SIGN_KDF_MEMLIMIT_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "secret key: its key derivation asks for "
				    "opslimit %" PRIu64 " and memlimit %" PRIu64 "; the most "
				    "allowed is %llu and %llu (1 GiB)", ops, mem,
				    TG_SIGN_KDF_OPSLIMIT_MAX, TG_SIGN_KDF_MEMLIMIT_MAX);
	if (crypto_pwhash_scryptsalsa208sha256(stream, sizeof(stream), password, strlen(password),
					       b->salt, (unsigned long long)ops,
					       (size_t)mem) != 0)
		return tg_error_set(err, TG_ERR_NOMEM, "secret key: the key derivation failed "
				    "(scrypt could not have %" PRIu64 " bytes of memory)", mem);
	for (i = 0; i < sizeof(stream); i++)
		p[i] ^= stream[i];
	sodium_memzero(stream, sizeof(stream));
	return 0;
}

/* The two lines of a secret key file, decoded into OUT *b. */
static int sec_read(const char *text, size_t len, struct sec_bin *b, struct tg_error *err)
{
	struct lines l;
	const char *line = NULL;
	size_t n = 0;

	if (lines_start(&l, "secret key", text, len, err) < 0 ||
	    next_line(&l, "the untrusted comment", &line, &n, err) < 0)
		return -1;
	if (!has_prefix(line, n, UNTRUSTED))
		return tg_error_set(err, TG_ERR_INVALID, "secret key: line 1: want \"" UNTRUSTED
				    "...\"");
	if (next_line(&l, "the key", &line, &n, err) < 0 ||
	    b64_line(&l, line, n, b, sizeof(*b), "secret key", err) < 0)
		return -1;
	return lines_end(&l, err);
}

/* b decrypted (under "Sc"), its checksum and its halves checked. */
static int sec_open(struct sec_bin *b, const char *password, struct tg_error *err)
{
	unsigned char chk[crypto_generichash_BYTES], pk[crypto_sign_PUBLICKEYBYTES];
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	int encrypted = memcmp(b->kdf, KDF_SCRYPT, 2) == 0, rc = -1;
	char alg[9];

	if (memcmp(b->alg, ALG_ED, 2) != 0)
		return tg_error_set(err, TG_ERR_INVALID, "secret key: algorithm '%s' is not Ed",
				    alg_show(b->alg, alg));
	if (memcmp(b->chk_alg, CHK_B2, 2) != 0)
		return tg_error_set(err, TG_ERR_INVALID, "secret key: checksum algorithm '%s' is "
				    "not B2", alg_show(b->chk_alg, alg));
	if (!encrypted && memcmp(b->kdf, KDF_NONE, 2) != 0)
		return tg_error_set(err, TG_ERR_INVALID, "secret key: key derivation '%s' is not "
				    "Sc (scrypt) or none", alg_show(b->kdf, alg));
	if (encrypted && !password)
		return tg_error_set(err, TG_ERR_INVALID, "secret key: encrypted, and no password "
				    "was given");
	if (encrypted && sec_xor(b, password, err) < 0)
		return -1;
	sec_checksum(b, chk);
	if (encrypted && sodium_memcmp(chk, b->chk, sizeof(chk)) != 0) {
		tg_error_set(err, TG_ERR_INVALID, "secret key: wrong password (checksum mismatch)");
		goto out;
	}
	/* `minisign -G -W` leaves an unencrypted key's checksum zero */
	if (!encrypted && !sodium_is_zero(b->chk, sizeof(b->chk)) &&
	    sodium_memcmp(chk, b->chk, sizeof(chk)) != 0) {
		tg_error_set(err, TG_ERR_INVALID, "secret key: checksum mismatch (the key is "
			     "damaged)");
		goto out;
	}
	/* an Ed25519 secret key is its seed and its public key: they must agree,
	 * or signatures would name a public key that does not verify them */
	crypto_sign_seed_keypair(pk, sk, b->sk);
	if (sodium_memcmp(sk, b->sk, sizeof(sk)) != 0) {
		tg_error_set(err, TG_ERR_INVALID, "secret key: its public half does not match its "
			     "seed (the key is damaged)");
		goto out;
	}
	rc = 0;
out:
	sodium_memzero(chk, sizeof(chk));
	sodium_memzero(sk, sizeof(sk));
	return rc;
}

int tg_sign_sec_parse(const char *text, size_t len, const char *password,
		      struct tg_sign_sec *out, struct tg_error *err)
{
	struct sec_bin b;
	int rc = -1;

	tg_error_clear(err);
	memset(out, 0, sizeof(*out));
	memset(&b, 0, sizeof(b));
	if (sec_read(text, len, &b, err) < 0 || sec_open(&b, password, err) < 0)
		goto out;
	memcpy(out->id, b.id, sizeof(out->id));
	memcpy(out->sk, b.sk, sizeof(out->sk));
	rc = 0;
out:
	sodium_memzero(&b, sizeof(b));
	return rc;
}

char *tg_sign_sec_format(const struct tg_sign_sec *sec, const char *password,
			 struct tg_error *err)
{
	struct sec_bin b;
	char head[80], hex[17], *text = NULL;

	tg_error_clear(err);
	if (sign_start(err) < 0)
		return NULL;
	memset(&b, 0, sizeof(b));
	memcpy(b.alg, ALG_ED, 2);
	memcpy(b.kdf, password ? KDF_SCRYPT : KDF_NONE, 2);
	memcpy(b.chk_alg, CHK_B2, 2);
	memcpy(b.id, sec->id, sizeof(b.id));
	memcpy(b.sk, sec->sk, sizeof(b.sk));
	sec_checksum(&b, b.chk);
	if (password) {
		randombytes_buf(b.salt, sizeof(b.salt));
		le64_store(b.ops, TG_SIGN_KDF_OPSLIMIT);
		le64_store(b.mem, TG_SIGN_KDF_MEMLIMIT);
		if (sec_xor(&b, password, err) < 0)
			goto out;
	}
	tg_sign_keyid_hex(sec->id, hex);
	snprintf(head, sizeof(head), UNTRUSTED "minisign %s secret key %s\n",
		 password ? "encrypted" : "unencrypted", hex);
	text = b64_text(head, &b, sizeof(b));
	if (!text)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
out:
	sodium_memzero(&b, sizeof(b));
	return text;
}

/* The message an "ED" signature signs: BLAKE2b-512 of the data. */
static void prehash(const void *data, size_t len, unsigned char h[crypto_generichash_BYTES_MAX])
{
	crypto_generichash(h, crypto_generichash_BYTES_MAX,
			   len ? (const unsigned char *)data : (const unsigned char *)"", len, NULL, 0);
}

char *tg_sign_data(const struct tg_sign_sec *sec, const void *data, size_t len,
		   const char *trusted_comment, struct tg_error *err)
{
	unsigned char h[crypto_generichash_BYTES_MAX], global[crypto_sign_BYTES];
	unsigned char signed_tc[crypto_sign_BYTES + TG_SIGN_TRUSTED_MAX];
	char dflt[40], hex[17], b1[sodium_base64_ENCODED_LEN(sizeof(struct sig_bin), B64)];
	char b2[sodium_base64_ENCODED_LEN(crypto_sign_BYTES, B64)], *text = NULL;
	const char *tc = trusted_comment;
	struct sig_bin s;
	size_t tc_len;

	tg_error_clear(err);
	if (sign_start(err) < 0)
		return NULL;
	if (!tc || !*tc) {
		/* minisign's default, but for the file name it cannot know here */
		snprintf(dflt, sizeof(dflt), "timestamp:%lld", (long long)time(NULL));
		tc = dflt;
	}
	tc_len = strlen(tc);
	if (trusted_check("signing", tc, tc_len, err) < 0)
		return NULL;
	memcpy(s.alg, ALG_HASHED, 2);
	memcpy(s.id, sec->id, sizeof(s.id));
	prehash(data, len, h);
	crypto_sign_detached(s.sig, NULL, h, sizeof(h), sec->sk);
	/* the global signature: over the signature and the trusted comment */
	memcpy(signed_tc, s.sig, sizeof(s.sig));
	memcpy(signed_tc + sizeof(s.sig), tc, tc_len);
	crypto_sign_detached(global, NULL, signed_tc, sizeof(s.sig) + tc_len, sec->sk);
	sodium_bin2base64(b1, sizeof(b1), (const unsigned char *)&s, sizeof(s), B64);
	sodium_bin2base64(b2, sizeof(b2), global, sizeof(global), B64);
	tg_sign_keyid_hex(sec->id, hex);
	if (asprintf(&text, UNTRUSTED "signature from minisign secret key %s\n%s\n" TRUSTED
		     "%s\n%s\n", hex, b1, tc, b2) < 0) {
		text = NULL;
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	return text;
}

/* A .minisig file, read. */
struct sig_text {
	struct sig_bin s;
	unsigned char global[crypto_sign_BYTES];
	const char *tc;   /* the trusted comment, in the text read */
	size_t tc_len;
};

static int sig_read(const char *text, size_t len, struct sig_text *st, struct tg_error *err)
{
	struct lines l;
	const char *line = NULL;
	char alg[9];
	size_t n = 0;

	memset(st, 0, sizeof(*st));
	st->tc = ""; /* never NULL, even after a refusal */
	if (lines_start(&l, "signature", text, len, err) < 0 ||
	    next_line(&l, "the untrusted comment", &line, &n, err) < 0)
		return -1;
	if (!has_prefix(line, n, UNTRUSTED))
		return tg_error_set(err, TG_ERR_INVALID, "signature: line 1: want \"" UNTRUSTED
				    "...\"");
	if (next_line(&l, "the signature", &line, &n, err) < 0 ||
	    b64_line(&l, line, n, &st->s, sizeof(st->s), "signature", err) < 0)
		return -1;
	if (memcmp(st->s.alg, ALG_ED, 2) != 0 && memcmp(st->s.alg, ALG_HASHED, 2) != 0)
		return tg_error_set(err, TG_ERR_INVALID, "signature: algorithm '%s' is not Ed or ED",
				    alg_show(st->s.alg, alg));
	if (next_line(&l, "the trusted comment", &line, &n, err) < 0)
		return -1;
	if (!has_prefix(line, n, TRUSTED))
		return tg_error_set(err, TG_ERR_INVALID, "signature: line 3: want \"" TRUSTED
				    "...\"");
	st->tc = line + strlen(TRUSTED);
	st->tc_len = n - strlen(TRUSTED);
	if (trusted_check("signature: line 3", st->tc, st->tc_len, err) < 0)
		return -1;
	if (next_line(&l, "the global signature", &line, &n, err) < 0 ||
	    b64_line(&l, line, n, st->global, sizeof(st->global), "global signature", err) < 0)
		return -1;
	return lines_end(&l, err);
}

int tg_sign_sig_keyid(const char *sig, size_t sig_len, unsigned char id[TG_SIGN_KEYID_LEN],
		      struct tg_error *err)
{
	struct sig_text st;

	tg_error_clear(err);
	memset(id, 0, TG_SIGN_KEYID_LEN);
	if (sig_read(sig, sig_len, &st, err) < 0)
		return -1;
	memcpy(id, st.s.id, TG_SIGN_KEYID_LEN);
	return 0;
}

int tg_sign_sig_prehashed(const char *sig, size_t sig_len)
{
	struct sig_text st;

	if (sig_read(sig, sig_len, &st, NULL) < 0)
		return -1;
	return st.s.alg[1] == 'D';
}

int tg_sign_verify(const struct tg_sign_pub *pub, const void *data, size_t len, const char *sig,
		   size_t sig_len, char *trusted, size_t trusted_len, struct tg_error *err)
{
	unsigned char h[crypto_generichash_BYTES_MAX];
	unsigned char signed_tc[crypto_sign_BYTES + TG_SIGN_TRUSTED_MAX];
	const unsigned char *msg = len ? (const unsigned char *)data : (const unsigned char *)"";
	char theirs[17], ours[17];
	struct sig_text st;
	size_t msg_len = len;

	tg_error_clear(err);
	if (trusted && trusted_len)
		trusted[0] = '\0';
	if (sig_read(sig, sig_len, &st, err) < 0)
		return -1;
	tg_sign_keyid_hex(st.s.id, theirs);
	tg_sign_keyid_hex(pub->id, ours);
	if (memcmp(st.s.id, pub->id, sizeof(pub->id)) != 0)
		return tg_error_set(err, TG_ERR_INVALID, "signature: signed by key %s, not %s",
				    theirs, ours);
	/* "ED": over BLAKE2b-512 of the data; "Ed", legacy: over the data itself */
	if (memcmp(st.s.alg, ALG_HASHED, 2) == 0) {
		prehash(data, len, h);
		msg = h;
		msg_len = sizeof(h);
	}
	if (crypto_sign_verify_detached(st.s.sig, msg, msg_len, pub->pk) != 0)
		return tg_error_set(err, TG_ERR_INVALID, "signature: does not verify (the data "
				    "was altered, or key %s did not sign it)", ours);
	memcpy(signed_tc, st.s.sig, sizeof(st.s.sig));
	memcpy(signed_tc + sizeof(st.s.sig), st.tc, st.tc_len);
	if (crypto_sign_verify_detached(st.global, signed_tc, sizeof(st.s.sig) + st.tc_len,
					pub->pk) != 0)
		return tg_error_set(err, TG_ERR_INVALID, "signature: the trusted comment was "
				    "altered (global signature fails)");
	if (trusted) {
		if (st.tc_len >= trusted_len)
			return tg_error_set(err, TG_ERR_LIMIT, "signature: the trusted comment (%zu "
					    "bytes) does not fit the %zu bytes given for it",
					    st.tc_len, trusted_len);
		memcpy(trusted, st.tc, st.tc_len);
		trusted[st.tc_len] = '\0';
	}
	return 0;
}

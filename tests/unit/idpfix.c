/*
 * A fake OpenID Connect provider for the unit tests (idpfix.h): keys,
 * their JWKS and tokens made here, and a loopback HTTP server for
 * discovery and the JWKS, one connection at a time, on a thread.
 */
#include <arpa/inet.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "idpfix.h"

#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING

struct idp_key {
	enum idp_key_type type;
	char kid[64];
	gnutls_privkey_t priv;       /* RSA, EC */
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
};

char *idp_b64(const void *p, size_t n)
{
	size_t len = sodium_base64_ENCODED_LEN(n, B64);
	char *out = malloc(len);

	if (out)
		sodium_bin2base64(out, len, p, n, B64);
	return out;
}

struct idp_key *idp_key_new(enum idp_key_type type, unsigned bits, const char *kid)
{
	struct idp_key *k = calloc(1, sizeof(*k));
	int rc = 0;

	if (!k || sodium_init() < 0)
		return NULL;
	k->type = type;
	snprintf(k->kid, sizeof(k->kid), "%s", kid);
	if (type == IDP_ED) {
		crypto_sign_keypair(k->pk, k->sk);
		return k;
	}
	if (gnutls_privkey_init(&k->priv) < 0)
		rc = -1;
	else if (type == IDP_RSA)
		rc = gnutls_privkey_generate(k->priv, GNUTLS_PK_RSA, bits, 0);
	else
		rc = gnutls_privkey_generate(k->priv, GNUTLS_PK_ECDSA,
					     GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
	if (rc < 0) {
		idp_key_free(k);
		return NULL;
	}
	return k;
}

void idp_key_free(struct idp_key *k)
{
	if (!k)
		return;
	if (k->priv)
		gnutls_privkey_deinit(k->priv);
	free(k);
}

/* d left-padded with zeros to n bytes, base64url. */
static char *b64_padded(const gnutls_datum_t *d, size_t n)
{
	unsigned char buf[1024] = { 0 };

	if (d->size > n || n > sizeof(buf))
		return NULL;
	memcpy(buf + n - d->size, d->data, d->size);
	return idp_b64(buf, n);
}

char *idp_key_jwk(const struct idp_key *k, const char *extra)
{
	gnutls_datum_t a = { 0 }, b = { 0 };
	gnutls_ecc_curve_t curve;
	char *x = NULL, *y = NULL, *out = NULL;
	int rc = -1;

	if (k->type == IDP_ED) {
		x = idp_b64(k->pk, sizeof(k->pk));
		if (x && asprintf(&out, "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"kid\":\"%s\","
				  "\"x\":\"%s\"%s}", k->kid, x, extra) < 0)
			out = NULL;
		free(x);
		return out;
	}
	if (k->type == IDP_RSA)
		rc = gnutls_privkey_export_rsa_raw2(k->priv, &a, &b, NULL, NULL, NULL, NULL, NULL,
						    NULL, GNUTLS_EXPORT_FLAG_NO_LZ);
	else
		rc = gnutls_privkey_export_ecc_raw2(k->priv, &curve, &a, &b, NULL,
						    GNUTLS_EXPORT_FLAG_NO_LZ);
	if (rc < 0)
		return NULL;
	x = k->type == IDP_RSA ? idp_b64(a.data, a.size) : b64_padded(&a, 32);
	y = k->type == IDP_RSA ? idp_b64(b.data, b.size) : b64_padded(&b, 32);
	if (x && y && k->type == IDP_RSA &&
	    asprintf(&out, "{\"kty\":\"RSA\",\"kid\":\"%s\",\"n\":\"%s\",\"e\":\"%s\"%s}", k->kid,
		     x, y, extra) < 0)
		out = NULL;
	if (x && y && k->type == IDP_EC &&
	    asprintf(&out, "{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"%s\",\"x\":\"%s\","
		     "\"y\":\"%s\"%s}", k->kid, x, y, extra) < 0)
		out = NULL;
	free(x);
	free(y);
	gnutls_free(a.data);
	gnutls_free(b.data);
	return out;
}

/* The JWS signature of k over data (alg's form), base64url. */
static char *sign(const struct idp_key *k, const char *data)
{
	gnutls_datum_t d = { (unsigned char *)data, (unsigned)strlen(data) }, sig = { 0 };
	gnutls_datum_t r = { 0 }, s = { 0 };
	unsigned char ed[crypto_sign_BYTES], rs[64] = { 0 };
	char *out = NULL;

	if (k->type == IDP_ED) {
		crypto_sign_detached(ed, NULL, d.data, d.size, k->sk);
		return idp_b64(ed, sizeof(ed));
	}
	if (gnutls_privkey_sign_data2(k->priv, k->type == IDP_RSA ? GNUTLS_SIGN_RSA_SHA256
								   : GNUTLS_SIGN_ECDSA_SHA256,
				      0, &d, &sig) < 0)
		return NULL;
	if (k->type == IDP_RSA) {
		out = idp_b64(sig.data, sig.size);
	} else if (gnutls_decode_rs_value(&sig, &r, &s) == 0) {
		/* DER's integers to JWS's r||s, 32 bytes each */
		unsigned char *rp = r.data, *sp = s.data;
		unsigned rn = r.size, sn = s.size;

		while (rn > 32 && rp[0] == 0)
			rp++, rn--;
		while (sn > 32 && sp[0] == 0)
			sp++, sn--;
		if (rn <= 32 && sn <= 32) {
			memcpy(rs + 32 - rn, rp, rn);
			memcpy(rs + 64 - sn, sp, sn);
			out = idp_b64(rs, 64);
		}
		gnutls_free(r.data);
		gnutls_free(s.data);
	}
	gnutls_free(sig.data);
	return out;
}

char *idp_token(const struct idp_key *k, const char *alg, const char *header,
		const char *claims, const char *sig_b64)
{
	char *h = idp_b64(header, strlen(header)), *c = idp_b64(claims, strlen(claims));
	char *signing = NULL, *sig = NULL, *out = NULL;

	(void)alg;
	if (h && c && asprintf(&signing, "%s.%s", h, c) < 0)
		signing = NULL;
	if (signing)
		sig = k ? sign(k, signing) : strdup(sig_b64 ? sig_b64 : "");
	if (sig && asprintf(&out, "%s.%s", signing, sig) < 0)
		out = NULL;
	free(h);
	free(c);
	free(signing);
	free(sig);
	return out;
}

/* ---- the server ------------------------------------------------------------- */

struct idp_server {
	int fd;
	volatile int stop;
	char url[64];
	pthread_t thread;
	pthread_mutex_t lock;
	char *jwks;
	enum idp_mode mode;
	unsigned hits[2];
};

static void answer(int c, int status, const char *body)
{
	char head[256];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, strlen(body));

	if (send(c, head, (size_t)n, MSG_NOSIGNAL) < 0 || send(c, body, strlen(body), MSG_NOSIGNAL) < 0)
		return;
}

static void serve_one(struct idp_server *s, int c)
{
	char req[4096], doc[256], *jwks;
	size_t n = 0;
	ssize_t r;
	enum idp_mode mode;
	int i;

	while (n < sizeof(req) - 1 && (r = read(c, req + n, sizeof(req) - 1 - n)) > 0) {
		n += (size_t)r;
		req[n] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	req[n] = '\0';
	pthread_mutex_lock(&s->lock);
	mode = s->mode;
	jwks = strdup(s->jwks ? s->jwks : "{\"keys\":[]}");
	if (strncmp(req, "GET /jwks ", 10) == 0)
		s->hits[1]++;
	else
		s->hits[0]++;
	pthread_mutex_unlock(&s->lock);
	if (strncmp(req, "GET /.well-known/openid-configuration ", 38) == 0) {
		snprintf(doc, sizeof(doc), "{\"issuer\":\"%s\",\"jwks_uri\":\"%s/jwks\"}", s->url,
			 s->url);
		answer(c, 200, doc);
	} else if (strncmp(req, "GET /jwks ", 10) != 0) {
		answer(c, 404, "{}");
	} else if (mode == IDP_SLOW) {
		for (i = 0; i < 40 && !s->stop; i++) /* 4 s, past any bound */
			usleep(100000);
		answer(c, 200, jwks);
	} else {
		answer(c, mode == IDP_ERROR ? 503 : 200, mode == IDP_GARBAGE ? "<html>garbage" : jwks);
	}
	free(jwks);
}

static void *server_main(void *arg)
{
	struct idp_server *s = arg;
	struct pollfd p = { s->fd, POLLIN, 0 };
	int c;

	while (!s->stop) {
		if (poll(&p, 1, 100) <= 0)
			continue;
		c = accept(s->fd, NULL, NULL);
		if (c < 0)
			continue;
		serve_one(s, c);
		close(c);
	}
	return NULL;
}

struct idp_server *idp_server_start(void)
{
	struct idp_server *s = calloc(1, sizeof(*s));
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	if (!s)
		return NULL;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s->fd, 64) < 0 || getsockname(s->fd, (struct sockaddr *)&a, &len) < 0) {
		free(s);
		return NULL;
	}
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%u", ntohs(a.sin_port));
	pthread_mutex_init(&s->lock, NULL);
	if (pthread_create(&s->thread, NULL, server_main, s) != 0) {
		close(s->fd);
		free(s);
		return NULL;
	}
	return s;
}

void idp_server_stop(struct idp_server *s)
{
	if (!s)
		return;
	s->stop = 1;
	pthread_join(s->thread, NULL);
	close(s->fd);
	free(s->jwks);
	free(s);
}

const char *idp_server_url(const struct idp_server *s)
{
	return s->url;
}

void idp_server_set_jwks(struct idp_server *s, const char *jwks)
{
	pthread_mutex_lock(&s->lock);
	free(s->jwks);
	s->jwks = strdup(jwks);
	pthread_mutex_unlock(&s->lock);
}

void idp_server_set_mode(struct idp_server *s, enum idp_mode mode)
{
	pthread_mutex_lock(&s->lock);
	s->mode = mode;
	pthread_mutex_unlock(&s->lock);
}

unsigned idp_server_hits(struct idp_server *s, int jwks)
{
	unsigned n;

	pthread_mutex_lock(&s->lock);
	n = s->hits[jwks ? 1 : 0];
	pthread_mutex_unlock(&s->lock);
	return n;
}

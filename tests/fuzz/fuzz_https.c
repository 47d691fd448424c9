/*
 * libFuzzer entry point: the Streamable HTTP transport over TLS
 * (src/mcp/http_tls.c, http_front.c, and http*.c behind them), as a
 * client reaches it. The server runs in this process with a certificate
 * made at start, a public URL and a trusted proxy (loopback), so Host,
 * Origin and X-Forwarded-* are all checked. The input's first byte
 * chooses: odd, a TLS client (GnuTLS) completes the handshake and sends
 * the rest as the request ("PORT" becomes the port); even, the rest goes
 * raw on the socket, garbage where a ClientHello belongs. "TOKEN" is the
 * bearer token the server's token file accepts. Every
 * connection must end with an HTTP answer or closed, within the timeout.
 */
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <sys/stat.h>
#include <time.h>

#include "http_peer.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gnutls_certificate_credentials_t client_cred;

/* A self-signed P-256 certificate for localhost and its key, as PEM
 * files cert and key (0600). */
static void make_pair(const char *cert, const char *key)
{
	gnutls_x509_privkey_t k;
	gnutls_x509_crt_t c;
	gnutls_datum_t d;
	unsigned char serial[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	time_t now = time(NULL);
	FILE *f;
	int fd;

	if (gnutls_x509_privkey_init(&k) < 0 ||
	    gnutls_x509_privkey_generate(k, GNUTLS_PK_ECDSA,
					 GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0 ||
	    gnutls_x509_crt_init(&c) < 0 || gnutls_x509_crt_set_version(c, 3) < 0 ||
	    gnutls_x509_crt_set_serial(c, serial, sizeof(serial)) < 0 ||
	    gnutls_x509_crt_set_activation_time(c, now - 3600) < 0 ||
	    gnutls_x509_crt_set_expiration_time(c, now + 86400) < 0 ||
	    gnutls_x509_crt_set_dn(c, "CN=localhost", NULL) < 0 ||
	    gnutls_x509_crt_set_key(c, k) < 0 ||
	    gnutls_x509_crt_sign2(c, c, k, GNUTLS_DIG_SHA256, 0) < 0)
		abort();
	if (gnutls_x509_crt_export2(c, GNUTLS_X509_FMT_PEM, &d) < 0 || !(f = fopen(cert, "w")))
		abort();
	fwrite(d.data, 1, d.size, f);
	fclose(f);
	gnutls_free(d.data);
	if (gnutls_x509_privkey_export2(k, GNUTLS_X509_FMT_PEM, &d) < 0 ||
	    (fd = open(key, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0 ||
	    write(fd, d.data, d.size) != (ssize_t)d.size)
		abort();
	close(fd);
	gnutls_free(d.data);
	gnutls_x509_crt_deinit(c);
	gnutls_x509_privkey_deinit(k);
}

static long read_tls(void *ctx, char *buf, size_t n)
{
	ssize_t r;

	do
		r = gnutls_record_recv(ctx, buf, n);
	while (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED);
	return (long)r;
}

static long read_raw(void *ctx, char *buf, size_t n)
{
	struct pollfd p = { *(int *)ctx, POLLIN, 0 };

	if (poll(&p, 1, 2000) <= 0)
		return 0;
	return (long)read(p.fd, buf, n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/tg-fuzz-https-XXXXXX", cert[64], key[64], url[64], tokens[64];
	FILE *f;
	struct tg_mcp_http_options o = { 0 };

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	make_pair(cert, key);
	snprintf(url, sizeof(url), "https://localhost/mcp");
	o.tls_cert = cert;
	o.tls_key = key;
	o.public_url = url;
	o.trust_proxy = "127.0.0.0/30"; /* half the fuzzer's addresses */
	/* a proxy or a public URL needs its callers authenticated */
	snprintf(tokens, sizeof(tokens), "%s/tokens", dir);
	f = fopen(tokens, "w");
	if (!f)
		abort();
	fprintf(f, "%s fuzzer\n", PEER_TOKEN_HASH);
	fclose(f);
	server_start(&o, tokens);
	unlink(tokens);
	unlink(cert);
	unlink(key);
	rmdir(dir);
	/* the client verifies nothing: the server's certificate is its own */
	if (gnutls_certificate_allocate_credentials(&client_cred) < 0)
		abort();
	return 0;
}

/* Over TLS: handshake, send, read the answer. */
static void exchange_tls(int fd, const char *req, size_t len, char *out, size_t cap)
{
	gnutls_session_t s;
	int rc;

	out[0] = '\0';
	if (gnutls_init(&s, GNUTLS_CLIENT) < 0)
		abort();
	gnutls_set_default_priority(s);
	gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, client_cred);
	gnutls_transport_set_int(s, fd);
	gnutls_handshake_set_timeout(s, 2000);
	gnutls_record_set_timeout(s, 2000);
	do
		rc = gnutls_handshake(s);
	while (rc < 0 && !gnutls_error_is_fatal(rc));
	/* the server's own certificate and TLS 1.2 or 1.3: a handshake fails
	 * only when the machine is too loaded for 2 s */
	if (rc == 0 && (len == 0 || gnutls_record_send(s, req, len) >= 0)) {
		/* close_notify: the request's end, as a plain client's
		 * shutdown(SHUT_WR) is (the server answers, then closes) */
		gnutls_bye(s, GNUTLS_SHUT_WR);
		read_answer(read_tls, s, out, cap);
	}
	gnutls_deinit(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char resp[1 << 16];
	size_t len;
	char *req;
	int fd;

	if (size < 1)
		return 0;
	req = request_of(data + 1, size - 1, "none", &len);
	if (!req)
		return 0;
	fd = connect_retry();
	if (data[0] & 1) {
		exchange_tls(fd, req, len, resp, sizeof(resp));
		/* an answer is an HTTP status line, or nothing (closed) */
		if (resp[0] && strncmp(resp, "HTTP/1.", 7) != 0)
			abort();
	} else {
		/* bytes where a ClientHello belongs: an alert or a close */
		if (send(fd, req, len, MSG_NOSIGNAL) >= 0) {
			shutdown(fd, SHUT_WR);
			read_answer(read_raw, &fd, resp, sizeof(resp));
		}
	}
	close(fd);
	free(req);
	return 0;
}

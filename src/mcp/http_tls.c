/*
 * HTTPS for the Streamable HTTP listener (docs/MCP.md, "Serving beyond
 * loopback"): the certificate chain and key that `serve --tls-cert FILE
 * --tls-key FILE` names, read and checked here, and handed to GnuTLS
 * (through libmicrohttpd) for each handshake by a certificate callback,
 * so that tg_mcp_http_reload_tls (SIGHUP) can rotate them without
 * dropping a connection: a handshake after the reload gets the new pair,
 * a connection made before keeps the one it has.
 *
 * A pair is never freed while its server runs: GnuTLS keeps pointers to
 * what the callback returned for the session's life, and a session may
 * outlive any number of reloads. Each reload that changes the pair keeps
 * one more, a few kilobytes, until the server stops.
 *
 * The callback has no closure of its own (gnutls_certificate_retrieve_
 * function2): libmicrohttpd sets each session's pointer to its
 * connection, whose daemon finds the server's certificates in a list
 * kept here. A server is listed before its daemon accepts anything
 * (under the list's lock, which the callback waits for).
 *
 * It never reads a private key that others may read, nor serves a key
 * that does not match its certificate, nor anything older than TLS 1.2.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/mhd.h"
#include "mcp/http_int.h"

#define MAX_PEM (1u << 20) /* a certificate chain or key file */
#define MAX_CHAIN 16       /* certificates in a chain */

/* TLS 1.3 and 1.2 only, forward-secret AEAD suites only (no static-RSA key
 * exchange, no CBC) */
const char http_tls_priorities[] =
	"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-RSA:"
	"-CIPHER-ALL:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-GCM";

struct pair {
	gnutls_pcert_st chain[MAX_CHAIN];
	unsigned n;
	gnutls_privkey_t key;
	struct pair *older;
};

struct http_tls {
	char *cert_path, *key_path;
	struct pair *current;           /* under tls_lock; older ones kept */
	const struct MHD_Daemon *daemon; /* the server's, once listed */
	struct http_tls *next;
};

static pthread_mutex_t tls_lock = PTHREAD_MUTEX_INITIALIZER;
static struct http_tls *tls_servers; /* listed, under tls_lock */

static void pair_free(struct pair *p)
{
	unsigned i;

	while (p) {
		struct pair *older = p->older;

		for (i = 0; i < p->n; i++)
			gnutls_pcert_deinit(&p->chain[i]);
		if (p->key)
			gnutls_privkey_deinit(p->key);
		free(p);
		p = older;
	}
}

/* The whole of path (at most MAX_PEM bytes) into *data; what names the
 * file is opt, for the messages. A key (secret) must not be readable by
 * others than its owner and group. */
static int read_pem(const char *opt, const char *path, int secret, gnutls_datum_t *data,
		    struct tg_error *err)
{
	struct stat st;
	ssize_t got = 0, r;
	char *buf;
	int fd;

	data->data = NULL;
	data->size = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return tg_error_sys(err, errno, "%s %s", opt, path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return tg_error_set(err, TG_ERR_INVALID, "%s %s: not a regular file", opt, path);
	}
	if (secret && (st.st_mode & (S_IROTH | S_IWOTH))) {
		close(fd);
		return tg_error_set(err, TG_ERR_INVALID, "%s %s: every user may %s this private "
				    "key (mode %04o): chmod 600 (or 640 for a group of readers)",
				    opt, path, st.st_mode & S_IROTH ? "read" : "replace",
				    (unsigned)(st.st_mode & 07777));
	}
	if (st.st_size > MAX_PEM) {
		close(fd);
		return tg_error_set(err, TG_ERR_INVALID, "%s %s: %lld bytes, more than a PEM file "
				    "may have here (%u)", opt, path, (long long)st.st_size,
				    MAX_PEM);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	while (got < st.st_size && (r = read(fd, buf + got, (size_t)(st.st_size - got))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return tg_error_sys(err, e, "%s %s", opt, path);
		}
		got += r;
	}
	close(fd);
	buf[got] = '\0';
	data->data = (unsigned char *)buf;
	data->size = (unsigned)got;
	return 0;
}

/* The key ID (a hash of the public key) of a public key, for matching. */
static int key_id(gnutls_pubkey_t pub, unsigned char *id, size_t *len)
{
	return gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, id, len) < 0 ? -1 : 0;
}

/* The key matches the chain's first certificate, which is valid now. */
static int pair_check(const struct http_tls *t, struct pair *p, struct tg_error *err)
{
	unsigned char a[64], b[64];
	size_t alen = sizeof(a), blen = sizeof(b);
	gnutls_pubkey_t pub = NULL;
	gnutls_x509_crt_t crt = NULL;
	time_t now = time(NULL), from, until;
	int ok;

	if (gnutls_pubkey_init(&pub) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	ok = gnutls_pubkey_import_privkey(pub, p->key, 0, 0) >= 0 && key_id(pub, a, &alen) == 0 &&
	     key_id(p->chain[0].pubkey, b, &blen) == 0 && alen == blen && memcmp(a, b, alen) == 0;
	gnutls_pubkey_deinit(pub);
	if (!ok)
		return tg_error_set(err, TG_ERR_INVALID, "--tls-key %s is not the key of the "
				    "certificate in --tls-cert %s (the first of its chain)",
				    t->key_path, t->cert_path);
	if (gnutls_pcert_export_x509(&p->chain[0], &crt) < 0)
		return tg_error_set(err, TG_ERR_INVALID, "--tls-cert %s: its certificate cannot be "
				    "read back", t->cert_path);
	from = gnutls_x509_crt_get_activation_time(crt);
	until = gnutls_x509_crt_get_expiration_time(crt);
	gnutls_x509_crt_deinit(crt);
	if (until != (time_t)-1 && until < now)
		return tg_error_set(err, TG_ERR_INVALID, "--tls-cert %s: the certificate expired "
				    "%lld s ago: renew it", t->cert_path, (long long)(now - until));
	if (from != (time_t)-1 && from > now + 60)
		return tg_error_set(err, TG_ERR_INVALID, "--tls-cert %s: the certificate is not "
				    "valid for another %lld s (is the clock right?)", t->cert_path,
				    (long long)(from - now));
	return 0;
}

/* The pair the files hold now, checked. OUT *out. */
static int pair_load(const struct http_tls *t, struct pair **out, struct tg_error *err)
{
	gnutls_datum_t cert = { NULL, 0 }, key = { NULL, 0 };
	struct pair *p;
	int rc = -1, e;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (read_pem("--tls-cert", t->cert_path, 0, &cert, err) < 0 ||
	    read_pem("--tls-key", t->key_path, 1, &key, err) < 0)
		goto out;
	p->n = MAX_CHAIN;
	e = gnutls_pcert_list_import_x509_raw(p->chain, &p->n, &cert, GNUTLS_X509_FMT_PEM,
					      GNUTLS_X509_CRT_LIST_FAIL_IF_UNSORTED |
						      GNUTLS_X509_CRT_LIST_IMPORT_FAIL_IF_EXCEED);
	if (e < 0) {
		p->n = 0;
		tg_error_set(err, TG_ERR_INVALID, "--tls-cert %s: %s (PEM certificates, the "
			     "server's first and then its issuers', at most %d)", t->cert_path,
			     e == GNUTLS_E_SHORT_MEMORY_BUFFER ? "too many certificates"
							       : gnutls_strerror(e), MAX_CHAIN);
		goto out;
	}
	if (p->n == 0) {
		tg_error_set(err, TG_ERR_INVALID, "--tls-cert %s: no PEM certificate in it",
			     t->cert_path);
		goto out;
	}
	if (gnutls_privkey_init(&p->key) < 0) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	e = gnutls_privkey_import_x509_raw(p->key, &key, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (e == GNUTLS_E_DECRYPTION_FAILED) {
		tg_error_set(err, TG_ERR_INVALID, "--tls-key %s: the key is encrypted: give it "
			     "unencrypted, mode 0600 (openssl pkey -in KEY -out PLAIN)", t->key_path);
		goto out;
	}
	if (e < 0) {
		tg_error_set(err, TG_ERR_INVALID, "--tls-key %s: %s (an unencrypted PEM private "
			     "key)", t->key_path, gnutls_strerror(e));
		goto out;
	}
	if (pair_check(t, p, err) < 0)
		goto out;
	*out = p;
	p = NULL;
	rc = 0;
out:
	if (key.data)
		explicit_bzero(key.data, key.size); /* the secret leaves no copy */
	free(cert.data);
	free(key.data);
	pair_free(p);
	return rc;
}

/* GnuTLS's question for each handshake: this server's current pair. */
static int retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
		    const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
		    gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *privkey)
{
	struct MHD_Connection *c = gnutls_session_get_ptr(session);
	const union MHD_ConnectionInfo *ci;
	const struct http_tls *t;
	int rc = -1;

	(void)req_ca_rdn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
	ci = c ? MHD_get_connection_info(c, MHD_CONNECTION_INFO_DAEMON) : NULL;
	if (!ci)
		return -1;
	pthread_mutex_lock(&tls_lock);
	for (t = tls_servers; t; t = t->next)
		if (t->daemon == ci->daemon) {
			*pcert = t->current->chain;
			*pcert_length = t->current->n;
			*privkey = t->current->key;
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&tls_lock);
	return rc;
}

void *http_tls_callback(void)
{
	return (void *)retrieve;
}

int http_tls_new(const char *cert, const char *key, struct http_tls **out, struct tg_error *err)
{
	struct http_tls *t;

	*out = NULL;
	if (!MHD_is_feature_supported(MHD_FEATURE_TLS))
		return tg_error_set(err, TG_ERR_UNAVAILABLE, "--tls-cert: this libmicrohttpd was "
				    "built without TLS");
	t = calloc(1, sizeof(*t));
	if (!t || !(t->cert_path = strdup(cert)) || !(t->key_path = strdup(key))) {
		http_tls_free(t);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	if (pair_load(t, &t->current, err) < 0) {
		http_tls_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

void http_tls_lock(void)
{
	pthread_mutex_lock(&tls_lock);
}

void http_tls_list(struct http_tls *t, const struct MHD_Daemon *daemon)
{
	/* the caller holds the lock since before the daemon started */
	t->daemon = daemon;
	t->next = tls_servers;
	tls_servers = t;
}

void http_tls_unlock(void)
{
	pthread_mutex_unlock(&tls_lock);
}

/* The same chain (so the same key: pair_check matched it to the first). */
static int pair_same(const struct pair *a, const struct pair *b)
{
	unsigned i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->chain[i].cert.size != b->chain[i].cert.size ||
		    memcmp(a->chain[i].cert.data, b->chain[i].cert.data, a->chain[i].cert.size) != 0)
			return 0;
	return 1;
}

int http_tls_reload(struct http_tls *t, struct tg_error *err)
{
	struct pair *p;

	if (pair_load(t, &p, err) < 0)
		return -1;
	/* most SIGHUPs reload the catalogue: an unchanged pair is not kept
	 * twice (t->current changes only here, on the one reloading thread) */
	if (pair_same(p, t->current)) {
		pair_free(p);
		return 0;
	}
	pthread_mutex_lock(&tls_lock);
	p->older = t->current;
	t->current = p;
	pthread_mutex_unlock(&tls_lock);
	return 0;
}

void http_tls_free(struct http_tls *t)
{
	struct http_tls **pp;

	if (!t)
		return;
	pthread_mutex_lock(&tls_lock);
	for (pp = &tls_servers; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	pthread_mutex_unlock(&tls_lock);
	pair_free(t->current);
	free(t->cert_path);
	free(t->key_path);
	free(t);
}

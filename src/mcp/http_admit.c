/*
 * Admission to the Streamable HTTP listener (docs/MCP.md, "Connections";
 * docs/SECURITY.md): which connections libmicrohttpd keeps, decided as
 * they are accepted and while their headers arrive, so that a local
 * process without a token cannot lock the others out by opening
 * connections and sending nothing, or sending headers a byte at a time.
 *
 * A connection waits while its request's headers are not in: from its
 * start, and again after each request that carried no token that
 * verified (a keep-alive wait). A waiting connection has header_timeout
 * seconds, counted from when it began to wait, not from its last byte
 * (libmicrohttpd's own timeout is reset by every byte, so a slowloris
 * would never meet it); and at most HTTP_MAX_WAITING wait at once: a new
 * connection past that closes the one that has waited longest, so a
 * client that sends its headers promptly is served however many sit
 * idle. Connections that serve a request, or hold a token holder's
 * between requests (libmicrohttpd's 120 s of silence ends those), share
 * the rest of HTTP_MAX_CONNECTIONS; one client address holds at most
 * HTTP_MAX_PER_ADDRESS, one principal HTTP_MAX_PER_PRINCIPAL (its own
 * longest-idle is closed for one more). A new connection past either of
 * the first two closes the longest-waiting connection (of its address,
 * or of all), else the longest-idle: it is refused only when every one
 * serves a request, so neither idle token holders nor waiting strangers
 * keep an approver out. With tokens, a connection whose request was
 * refused (no token that verified) is shut down once answered; and a
 * request whose connection was shut down here while it came in is not
 * served (http_admit_request).
 *
 * It never reads or writes a connection, nor closes a descriptor: a
 * connection is ended with shutdown(2), which libmicrohttpd's thread for
 * it sees as the client leaving. The descriptor stays libmicrohttpd's,
 * closed only after its CLOSED notification has unlisted it here under
 * the same lock (libmicrohttpd 0.9.75, MHD_cleanup_connections), so a
 * descriptor that may have been reused is never shut down.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mcp/http_int.h"

enum phase {
	WAITING,  /* for a request's headers: deadline and budget */
	SERVING,  /* a request's headers are in */
	IDLE,     /* a token holder's, between requests: closed for room */
	CLOSING,  /* shut down here, or ending: not counted against anything */
	NPHASES
};

enum { CLOSED_TIMEOUT, CLOSED_BUDGET, CLOSED_ROOM, CLOSED_PRINCIPAL, NCLOSED };
enum { REFUSED_ADDRESS, REFUSED_LIMIT, REFUSED_PRINCIPAL, NREFUSED };

#define STR_(x) #x
#define STR(x) STR_(x)
#define PRINCIPAL_MAX 128 /* MCP_MAX_PRINCIPAL: rq->principal's size */

struct conn {
	int fd;
	uint32_t addr;              /* IPv4, network order; 0: another family */
	enum phase phase;
	int trusted;                /* the request's bearer token verified */
	char principal[PRINCIPAL_MAX]; /* whose token, when trusted */
	uint64_t since;             /* ms (monotonic) when it began to wait */
	uint64_t turn;              /* when its phase began: the lowest, longest */
	struct conn *prev, *next;   /* every connection */
	struct conn *wprev, *wnext; /* the waiting ones, oldest first */
};

struct http_admit {
	pthread_mutex_t lock;       /* everything below */
	pthread_cond_t wake;        /* the closer: stop */
	pthread_t closer;
	int stopping;
	int tokens;                 /* every request needs a token */
	const struct http_front *front; /* its trusted proxies have no address limit */
	uint64_t timeout_ms;
	struct conn *all;
	struct conn *whead, *wtail;
	unsigned n;                 /* listed connections, closing ones too */
	uint64_t turns;             /* phases begun */
	unsigned count[NPHASES];
	unsigned long long closed[NCLOSED], refused[NREFUSED];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void set_phase(struct http_admit *a, struct conn *k, enum phase p);

/* End k now: its thread in libmicrohttpd reads the end of the stream
 * and closes it (the caller holds lock). */
static void close_conn(struct http_admit *a, struct conn *k, int why)
{
	set_phase(a, k, CLOSING);
	shutdown(k->fd, SHUT_RDWR);
	a->closed[why]++;
}

/* k goes to phase p (the caller holds lock). A connection that begins to
 * wait goes last in line; past the budget, the first in line is closed. */
static void set_phase(struct http_admit *a, struct conn *k, enum phase p)
{
	if (k->phase == WAITING) {
		*(k->wprev ? &k->wprev->wnext : &a->whead) = k->wnext;
		*(k->wnext ? &k->wnext->wprev : &a->wtail) = k->wprev;
		k->wprev = k->wnext = NULL;
	}
	a->count[k->phase]--;
	a->count[p]++;
	k->phase = p;
	k->turn = ++a->turns;
	if (p != WAITING)
		return;
	k->since = now_ms();
	k->wprev = a->wtail;
	*(a->wtail ? &a->wtail->wnext : &a->whead) = k;
	a->wtail = k;
	/* the closer is not told: its next look is never after this one's
	 * deadline (closer_main), so that a keep-alive connection's every
	 * request wakes no thread */
	while (a->count[WAITING] > HTTP_MAX_WAITING)
		close_conn(a, a->whead, CLOSED_BUDGET);
}

/* The closer: connections that waited header_timeout are closed, the
 * oldest first; it sleeps until the next one's deadline, or with nobody
 * waiting a whole header_timeout: a connection that begins to wait in
 * that time has its deadline after the closer's next look, so that a
 * keep-alive connection's every request does not wake it (set_phase). */
static void *closer_main(void *arg)
{
	struct http_admit *a = arg;
	struct timespec ts;
	uint64_t at;

	pthread_mutex_lock(&a->lock);
	while (!a->stopping) {
		at = now_ms();
		while (a->whead && at - a->whead->since >= a->timeout_ms)
			close_conn(a, a->whead, CLOSED_TIMEOUT);
		at = a->whead ? a->whead->since + a->timeout_ms : at + a->timeout_ms;
		ts.tv_sec = (time_t)(at / 1000);
		ts.tv_nsec = (long)(at % 1000) * 1000000;
		pthread_cond_timedwait(&a->wake, &a->lock, &ts);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

int http_admit_new(unsigned header_timeout, int tokens, const struct http_front *front,
		   struct http_admit **out, struct tg_error *err)
{
	struct http_admit *a;
	pthread_condattr_t ca;
	int rc;

	*out = NULL;
	if (header_timeout > HTTP_MAX_HEADER_TIMEOUT)
		return tg_error_set(err, TG_ERR_INVALID, "--header-timeout %u: at most %d seconds",
				    header_timeout, HTTP_MAX_HEADER_TIMEOUT);
	a = calloc(1, sizeof(*a));
	if (!a)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	a->timeout_ms = 1000ull * (header_timeout ? header_timeout : HTTP_HEADER_TIMEOUT);
	a->tokens = tokens;
	a->front = front;
	pthread_mutex_init(&a->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* deadlines are monotonic */
	pthread_cond_init(&a->wake, &ca);
	pthread_condattr_destroy(&ca);
	rc = pthread_create(&a->closer, NULL, closer_main, a);
	if (rc != 0) {
		pthread_cond_destroy(&a->wake);
		pthread_mutex_destroy(&a->lock);
		free(a);
		return tg_error_sys(err, rc, "the HTTP listener's connection closer");
	}
	*out = a;
	return 0;
}

void http_admit_free(struct http_admit *a)
{
	struct conn *k;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stopping = 1;
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->closer, NULL);
	/* the daemon stopped: every connection was notified closed; none
	 * is left but in an allocation's failure path */
	while ((k = a->all)) {
		a->all = k->next;
		free(k);
	}
	pthread_cond_destroy(&a->wake);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

static uint32_t address_of(const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)addr;

	return addr && addr->sa_family == AF_INET && len >= sizeof(*in) ? in->sin_addr.s_addr : 0;
}

/* Room for one more connection (the caller holds lock), among address
 * ip's or, with all, every address's: the one that has waited longest
 * for its headers is closed, else the token holder's idle longest. 0;
 * -1 when every one serves a request (or is closing already). */
static int make_room(struct http_admit *a, int all, uint32_t ip)
{
	struct conn *k, *v;

	for (v = a->whead; v && !all && v->addr != ip; v = v->wnext) /* oldest first */
		;
	for (k = v ? NULL : a->all; k; k = k->next)
		if (k->phase == IDLE && (all || k->addr == ip) && (!v || k->turn < v->turn))
			v = k;
	if (!v)
		return -1;
	close_conn(a, v, CLOSED_ROOM);
	return 0;
}

enum MHD_Result http_admit_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct http_admit *a = cls;
	uint32_t ip = address_of(addr, len);
	struct conn *k;
	unsigned same = 0;
	int why = -1;

	pthread_mutex_lock(&a->lock);
	for (k = a->all; k; k = k->next)
		same += k->addr == ip && k->phase != CLOSING;
	/* past a limit, the longest-waiting or longest-idle there makes
	 * room: refused only when every one there serves a request, or
	 * when too many closed here have not gone yet */
	if (a->n >= HTTP_MAX_CONNECTIONS + HTTP_MAX_CLOSING)
		/* NOLINTNEXTLINE(bugprone-branch-clone): the address's turn is between */
		why = REFUSED_LIMIT;
	else if (same >= HTTP_MAX_PER_ADDRESS && !http_front_is_proxy(a->front, addr) &&
		 make_room(a, 0, ip) < 0)
		why = REFUSED_ADDRESS;
	else if (a->n - a->count[CLOSING] >= HTTP_MAX_CONNECTIONS && make_room(a, 1, 0) < 0)
		why = REFUSED_LIMIT;
	if (why >= 0)
		a->refused[why]++;
	pthread_mutex_unlock(&a->lock);
	return why < 0 ? MHD_YES : MHD_NO;
}

/* Started: listed, waiting; closed: unlisted (before libmicrohttpd
 * closes its descriptor). */
void http_admit_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode code)
{
	struct http_admit *a = cls;
	const union MHD_ConnectionInfo *fd, *addr;
	struct conn *k;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		k = *socket_context;
		*socket_context = NULL;
		if (!k)
			return;
		pthread_mutex_lock(&a->lock);
		set_phase(a, k, CLOSING);
		a->count[CLOSING]--;
		a->n--;
		*(k->prev ? &k->prev->next : &a->all) = k->next;
		if (k->next)
			k->next->prev = k->prev;
		pthread_mutex_unlock(&a->lock);
		free(k);
		return;
	}
	fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	k = fd ? calloc(1, sizeof(*k)) : NULL;
	*socket_context = k;
	if (!k) {
		/* out of memory: a connection nothing would watch is not served */
		if (fd)
			shutdown(fd->connect_fd, SHUT_RDWR);
		return;
	}
	k->fd = fd->connect_fd;
	k->addr = addr ? address_of(addr->client_addr, sizeof(struct sockaddr_in)) : 0;
	k->phase = CLOSING;
	pthread_mutex_lock(&a->lock);
	k->next = a->all;
	if (a->all)
		a->all->prev = k;
	a->all = k;
	a->n++;
	a->count[CLOSING]++;
	set_phase(a, k, WAITING);
	pthread_mutex_unlock(&a->lock);
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

int http_admit_request(struct http_admit *a, struct MHD_Connection *c)
{
	struct conn *k = conn_of(c);
	int rc = 0;

	if (!k)
		return 0;
	pthread_mutex_lock(&a->lock);
	k->trusted = 0;
	/* a connection closed here while its headers came in (libmicrohttpd
	 * may have had them whole) is closing: its request is not served,
	 * so that no tool runs for a client that sees its connection reset */
	if (k->phase == CLOSING)
		rc = -1;
	else
		set_phase(a, k, SERVING);
	pthread_mutex_unlock(&a->lock);
	return rc;
}

const char *http_admit_trust(struct http_admit *a, struct MHD_Connection *c,
			     const char *principal)
{
	struct conn *k = conn_of(c), *j, *idlest = NULL;
	unsigned held = 0;
	const char *why = NULL;

	if (!k)
		return NULL;
	pthread_mutex_lock(&a->lock);
	/* the principal's other connections: only its own make room for it */
	for (j = a->all; j; j = j->next) {
		if (j == k || !j->trusted || (j->phase != SERVING && j->phase != IDLE) ||
		    strcmp(j->principal, principal) != 0)
			continue;
		held++;
		if (j->phase == IDLE && (!idlest || j->turn < idlest->turn))
			idlest = j;
	}
	if (held >= HTTP_MAX_PER_PRINCIPAL && idlest) {
		close_conn(a, idlest, CLOSED_PRINCIPAL);
	} else if (held >= HTTP_MAX_PER_PRINCIPAL) {
		a->refused[REFUSED_PRINCIPAL]++;
		why = "Too Many Requests: this principal's " STR(HTTP_MAX_PER_PRINCIPAL)
		      " connections all serve requests; one must end first";
	}
	if (!why) {
		k->trusted = 1;
		snprintf(k->principal, sizeof(k->principal), "%s", principal);
	}
	pthread_mutex_unlock(&a->lock);
	return why;
}

void http_admit_done(struct http_admit *a, struct MHD_Connection *c, int ok)
{
	struct conn *k = conn_of(c);

	if (!k)
		return;
	pthread_mutex_lock(&a->lock);
	if (k->phase != SERVING) {
		/* closing already */
	} else if (ok && k->trusted) {
		set_phase(a, k, IDLE);
	} else if (ok && !a->tokens) {
		set_phase(a, k, WAITING);
	} else {
		/* with tokens, an answer without one that verified was a
		 * refusal, queued at the handler's first call: libmicrohttpd
		 * (0.9.75) closes such a connection once it is sent. It is
		 * shut down here as well, so that it never waits uncounted;
		 * its answer is sent already (a FIN follows it) */
		set_phase(a, k, CLOSING);
		if (ok)
			shutdown(k->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&a->lock);
}

char *http_admit_metrics(struct http_admit *a, char *text)
{
	char add[2400];
	size_t len, n;
	char *out;

	if (!text)
		return NULL;
	pthread_mutex_lock(&a->lock);
	n = (size_t)snprintf(
		add, sizeof(add),
		"# HELP toolgate_http_connections Open HTTP connections: waiting for a request's "
		"headers, serving a request, or a token holder's idle between requests.\n"
		"# TYPE toolgate_http_connections gauge\n"
		"toolgate_http_connections{state=\"waiting\"} %u\n"
		"toolgate_http_connections{state=\"serving\"} %u\n"
		"toolgate_http_connections{state=\"idle\"} %u\n"
		"# HELP toolgate_http_connections_closed_total HTTP connections closed by the server: "
		"waiting for a request's headers past the deadline, or the oldest waiting past the "
		"budget; waiting or idle, to make room for a new one; a principal's idle longest, for "
		"one more of its own.\n"
		"# TYPE toolgate_http_connections_closed_total counter\n"
		"toolgate_http_connections_closed_total{reason=\"header_timeout\"} %llu\n"
		"toolgate_http_connections_closed_total{reason=\"waiting_budget\"} %llu\n"
		"toolgate_http_connections_closed_total{reason=\"room\"} %llu\n"
		"toolgate_http_connections_closed_total{reason=\"per_principal\"} %llu\n"
		"# HELP toolgate_http_connections_refused_total HTTP connections refused: as they were "
		"accepted, too many of one client address or in all, every one serving a request; or "
		"at a request (429), its principal's every connection serving one.\n"
		"# TYPE toolgate_http_connections_refused_total counter\n"
		"toolgate_http_connections_refused_total{reason=\"per_address\"} %llu\n"
		"toolgate_http_connections_refused_total{reason=\"limit\"} %llu\n"
		"toolgate_http_connections_refused_total{reason=\"per_principal\"} %llu\n",
		a->count[WAITING], a->count[SERVING], a->count[IDLE], a->closed[CLOSED_TIMEOUT],
		a->closed[CLOSED_BUDGET], a->closed[CLOSED_ROOM], a->closed[CLOSED_PRINCIPAL],
		a->refused[REFUSED_ADDRESS], a->refused[REFUSED_LIMIT], a->refused[REFUSED_PRINCIPAL]);
	pthread_mutex_unlock(&a->lock);
	len = strlen(text);
	out = n < sizeof(add) ? realloc(text, len + n + 1) : NULL;
	if (!out) {
		free(text);
		return NULL;
	}
	memcpy(out + len, add, n + 1);
	return out;
}

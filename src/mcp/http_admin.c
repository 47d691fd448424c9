/*
 * /admin, /metrics, /healthz and /readyz on the Streamable HTTP
 * listener: the admin API's requests (docs/ADMIN.md), answered by the
 * gate's router (tg_gate_admin), with a person's decisions and every
 * refusal put on the record; GET /metrics, the gateway's counters with
 * the listener's connections (docs/METRICS.md); and the probes, alive
 * and ready (docs/MCP.md, "Health"), which the gate answers
 * (tg_gate_ready). No answer is ever cached.
 *
 * It owns the translation between HTTP and the gate's admin calls; it
 * never decides an approval itself, nor who may ask: the caller is
 * identified, and /metrics' scope checked, before a request comes here.
 * The probes need no token, are not recorded, and say why a gateway is
 * not ready only to a request that names this server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/http_int.h"
#include "mcp/mcp_int.h"

/* A body of type, never cached (copied: the caller keeps body). */
static enum MHD_Result reply_nocache(struct MHD_Connection *c, unsigned status, const char *type,
				     const char *body)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* An answer of the admin API: JSON, never cached. */
enum MHD_Result http_admin_reply(struct MHD_Connection *c, unsigned status, const char *json)
{
	return reply_nocache(c, status, "application/json", json);
}

/* GET /metrics (docs/METRICS.md): the gateway's counters. */
enum MHD_Result http_metrics_reply(struct tg_mcp_http *h, struct MHD_Connection *c,
				   const char *method)
{
	char *text = strcmp(method, "GET") == 0
			     ? http_admit_metrics(h->admit, tg_gate_metrics(h->mcp->gate))
			     : NULL;
	enum MHD_Result rc;

	if (strcmp(method, "GET") != 0)
		return http_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, RPC_INVALID_REQUEST,
				  "Method Not Allowed: GET /metrics");
	if (!text)
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR,
				  "out of memory");
	rc = reply_nocache(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text);
	free(text);
	return rc;
}

int http_admin_call(struct tg_mcp_http *h, const char *principal, const char *scopes,
		    const char *method, const char *path, const char *body, size_t len,
		    char **out)
{
	int status = tg_gate_admin(h->mcp->gate, principal, scopes ? scopes : "", method, path,
				   body, len, out);

	/* a person's decisions, and every refusal, go on the record */
	if (strcmp(method, "GET") != 0 || status >= 300) {
		char outcome[48];
		json_t *ans = *out ? json_loads(*out, 0, NULL) : NULL;
		const char *reason = json_string_value(
			json_object_get(json_object_get(ans, "error"), "message"));

		snprintf(outcome, sizeof(outcome), "admin %s %d", method, status);
		/* a refusal is queued, and recorded at a bounded rate; what
		 * was done is answered once it is on the record */
		if (status >= 400) {
			tg_gate_record_refusal(h->mcp->gate, principal, path, outcome, reason);
		} else if (tg_gate_record_event(h->mcp->gate, principal, path, outcome, reason) <
			   0) {
			free(*out);
			*out = strdup("{\"error\":{\"code\":\"unavailable\",\"message\":\"done, "
				      "but its record could not be written: the audit log stopped\"}}");
			status = 503;
		}
		json_decref(ans);
	}
	return status;
}

/* A request of the admin API (docs/ADMIN.md), its body read: answered
 * by the gate's router. */
enum MHD_Result http_admin_answer(struct tg_mcp_http *h, struct MHD_Connection *c,
				  const struct request *rq, const char *url, const char *method)
{
	char *out = NULL;
	const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "state");
	char path[512];
	int status;
	enum MHD_Result res;

	/* libmicrohttpd took the query off the URL: put the one parameter
	 * there is back for the router */
	snprintf(path, sizeof(path), "%.400s%s%.64s", url, q ? "?state=" : "", q ? q : "");
	status = http_admin_call(h, rq->principal, rq->scopes, method, path, rq->body, rq->len,
				 &out);
	res = http_admin_reply(c, (unsigned)status, out ? out : "{}");
	free(out);
	return res;
}

int http_is_probe(const char *url)
{
	return strcmp(url, "/healthz") == 0 || strcmp(url, "/readyz") == 0;
}

enum MHD_Result http_probe_reply(struct tg_mcp_http *h, struct MHD_Connection *c,
				 const char *url, const char *method, int named)
{
	char why[512], body[600];
	int ready = 1;

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		struct MHD_Response *r = MHD_create_response_from_buffer(
			0, (void *)"", MHD_RESPMEM_PERSISTENT);
		enum MHD_Result rc;

		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, "Allow", "GET, HEAD");
		MHD_add_response_header(r, "Cache-Control", "no-store");
		rc = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
		MHD_destroy_response(r);
		return rc;
	}
	/* alive: this thread answers, so the process serves */
	if (strcmp(url, "/readyz") == 0)
		ready = tg_gate_ready(h->mcp->gate, why, sizeof(why));
	if (ready)
		snprintf(body, sizeof(body), "ok\n");
	else if (named)
		snprintf(body, sizeof(body), "not ready: %s\n", why);
	else
		snprintf(body, sizeof(body), "not ready\n");
	return reply_nocache(c, ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
			     "text/plain; charset=utf-8", body);
}

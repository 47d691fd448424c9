/*
 * Traces (docs/TRACING.md): OpenTelemetry spans for each MCP request and
 * each tool execution, after the GenAI and MCP semantic conventions,
 * exported as OTLP/HTTP JSON to a collector by a thread of the tracer's
 * own: batched, and never waited for by a call. A span that finds the
 * queue full is dropped and counted; a collector that is down costs the
 * spans of the batches it refused, nothing else.
 *
 * Every function takes NULL for its tracer or span and then does nothing,
 * so that instrumented code need not ask whether tracing is on.
 */
#ifndef TOOLGATE_TRACE_H
#define TOOLGATE_TRACE_H

#include <stdint.h>
#include <stddef.h>

#include "toolgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* W3C Trace Context: a span's identity, as it travels (traceparent,
 * tracestate). */
#define TG_TRACESTATE_MAX 512
struct tg_trace_ctx {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t flags;                      /* trace-flags: 1, sampled */
	char state[TG_TRACESTATE_MAX + 1];  /* tracestate as received, or "" */
	int valid;
	int local;                          /* a span of this process (tg_span_context) */
};

/* Parse a traceparent header value (version 00: "00-<32 hex>-<16 hex>-<2
 * hex>", lowercase; a later version's first four fields are read, as the
 * W3C says) and an optional tracestate (at most TG_TRACESTATE_MAX bytes of
 * printable ASCII; dropped, not an error, when it is not). 0 and *out
 * valid, or -1 and err: a caller ignores an invalid one and starts a new
 * trace. */
TG_API int tg_trace_parse(const char *traceparent, const char *tracestate,
			  struct tg_trace_ctx *out, struct tg_error *err);
/* The traceparent of ctx (56 bytes and a NUL). */
TG_API void tg_trace_format(const struct tg_trace_ctx *ctx, char out[56]);

struct tg_tracer_options {
	/* OTLP/HTTP traces endpoint: http://host:port/v1/traces (or https) */
	const char *endpoint;
	const char *service_name;    /* resource service.name; NULL: "toolgate" */
	/* headers for every export, as OTEL_EXPORTER_OTLP_HEADERS has them:
	 * "key=value,key2=value2" (values URL-encoded); NULL: none */
	const char *headers;
	unsigned batch;              /* spans an export at most; 0: 512 */
	unsigned interval_ms;        /* an export at least this often; 0: 1000 */
	unsigned queue_max;          /* spans waiting at most; 0: 4096 */
	unsigned timeout_ms;         /* an export's time; 0: 5000 */
};

struct tg_tracer;
/* A tracer exporting to o->endpoint; -1 and err for a malformed endpoint
 * or headers. Nothing is sent until spans end. */
TG_API int tg_tracer_new(const struct tg_tracer_options *o, struct tg_tracer **out,
			 struct tg_error *err);
/* Export what waits (each batch once, within the timeout), stop, free. */
TG_API void tg_tracer_free(struct tg_tracer *t);

struct tg_tracer_stats {
	uint64_t ended;            /* spans ended */
	uint64_t exported;         /* spans the collector took (a 2xx) */
	uint64_t dropped;          /* spans lost: queue full, or refused */
	uint64_t exports;          /* export requests made */
	uint64_t export_failures;  /* of those, not a 2xx (or no answer) */
	char last_error[256];      /* the last failure's reason */
};
TG_API void tg_tracer_get_stats(struct tg_tracer *t, struct tg_tracer_stats *st);

enum tg_span_kind {
	TG_SPAN_INTERNAL = 1,
	TG_SPAN_SERVER = 2,
	TG_SPAN_CLIENT = 3,
};

struct tg_span;
/* A span begun now: child of parent (a span of ours), else of remote (a
 * caller's context), else the root of a new trace. NULL when t is NULL or
 * out of memory. name is cut at 128 bytes. */
TG_API struct tg_span *tg_span_start(struct tg_tracer *t, const char *name,
				     enum tg_span_kind kind, const struct tg_span *parent,
				     const struct tg_trace_ctx *remote);
/* Its name, known only later (cut at 128 bytes). */
TG_API void tg_span_set_name(struct tg_span *s, const char *name);
/* Attributes: at most 32 a span (more are dropped); a string value is cut
 * at 1,024 bytes, where a UTF-8 character begins. */
TG_API void tg_span_set_str(struct tg_span *s, const char *key, const char *value);
TG_API void tg_span_set_int(struct tg_span *s, const char *key, int64_t value);
TG_API void tg_span_set_bool(struct tg_span *s, const char *key, int value);
/* The operation failed: error.type (low-cardinality: a JSON-RPC code, an
 * outcome) and status ERROR with message (NULL: none). */
TG_API void tg_span_error(struct tg_span *s, const char *type, const char *message);
/* The span's own context, for its children elsewhere (valid 0 for NULL). */
TG_API void tg_span_context(const struct tg_span *s, struct tg_trace_ctx *out);
/* Its trace and span ids in hex (33 and 17 bytes); "" for NULL. */
TG_API void tg_span_ids(const struct tg_span *s, char trace_hex[33], char span_hex[17]);
/* End now: queued for export (or dropped, counted, when the queue is
 * full), and freed. */
TG_API void tg_span_end(struct tg_span *s);

#ifdef __cplusplus
}
#endif

#endif

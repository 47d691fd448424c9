/*
 * libFuzzer entry point: W3C Trace Context as a client sends it in
 * params._meta (src/obs/trace.c). Whatever arrives (the input split at
 * its first NUL into traceparent and tracestate), parsing answers valid
 * or not, never crashes; a context it accepts formats back to the same
 * version-00 fields, has no all-zero id, and keeps a tracestate only
 * within its bound and printable.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *tp = malloc(size + 1), *ts, out[56];
	struct tg_trace_ctx c, again;
	struct tg_error err;
	size_t i;

	if (!tp)
		return 0;
	memcpy(tp, data, size);
	tp[size] = '\0';
	ts = strlen(tp) < size ? tp + strlen(tp) + 1 : NULL;
	if (tg_trace_parse(tp, ts, &c, &err) == 0) {
		if (!c.valid || strlen(c.state) > TG_TRACESTATE_MAX)
			abort();
		for (i = 0; c.state[i]; i++)
			if (c.state[i] < 0x20 || c.state[i] > 0x7e)
				abort();
		tg_trace_format(&c, out);
		if (tg_trace_parse(out, NULL, &again, &err) != 0 ||
		    memcmp(again.trace_id, c.trace_id, 16) != 0 ||
		    memcmp(again.span_id, c.span_id, 8) != 0 || again.flags != c.flags ||
		    memcmp(out + 3, tp + 3, 49) != 0)
			abort();
	} else if (c.valid) {
		abort();
	}
	free(tp);
	return 0;
}

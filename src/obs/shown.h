/*
 * Text from outside shown in the gateway's log or an error a caller
 * reads (what an upstream server says, its schemas' faults): redacted
 * first, then made safe for a terminal. obs/shown.c owns it.
 */
#ifndef TG_OBS_SHOWN_H
#define TG_OBS_SHOWN_H

#include <stddef.h>

/* in (n bytes) as the log may show it: redacted (docs/REDACTION.md), then
 * each character a terminal acts on or a reader does not see (C0 and C1
 * controls, escapes, bidi controls, zero-width characters: util/hidden.h)
 * as '?', a tab kept; at most cap - 1 bytes, NUL-terminated. 0, or -1
 * when it could not be redacted (out is then a note saying so, never the
 * text). */
int obs_shown(const char *in, size_t n, char *out, size_t cap);

#endif

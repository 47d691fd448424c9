/*
 * Text from outside made fit to show (obs/shown.h): the redactor, then
 * the hidden-character scanner; tg_redact_shown is the same for the
 * toolgate command (toolgate/redact.h). Never shows a byte of the text
 * when the redactor fails.
 */
#include <stdio.h>
#include <string.h>

#include "obs/shown.h"
#include "toolgate/redact.h"
#include "util/hidden.h"

int obs_shown(const char *in, size_t n, char *out, size_t cap)
{
	struct tg_redact_out o;
	struct hidden_scan h;
	struct hidden c;
	struct tg_error e;
	size_t from = 0, k = 0;

	if (cap == 0)
		return -1;
	memset(&o, 0, sizeof(o));
	if (tg_redact(in, n, &o, &e) < 0) {
		snprintf(out, cap, "(not shown: %s)", e.msg);
		return -1;
	}
	hidden_scan_init(&h, o.text, o.len);
	while (k + 1 < cap) {
		int more = hidden_scan_next(&h, &c);
		size_t end = more ? c.at : o.len, take = end - from;

		if (take > cap - 1 - k)
			take = cap - 1 - k;
		memcpy(out + k, o.text + from, take);
		k += take;
		if (!more || k + 1 >= cap)
			break;
		/* a tab is the one control a line may keep */
		out[k++] = c.cp == '\t' ? '\t' : '?';
		from = c.at + c.len;
	}
	out[k] = '\0';
	tg_redact_out_release(&o);
	return 0;
}

int tg_redact_shown(const char *in, size_t n, char *out, size_t cap)
{
	return obs_shown(in, n, out, cap);
}

/*
 * The stdio transport (MCP "Transports"): one JSON-RPC message per line
 * on stdin, one per line on stdout; nothing else is ever written to
 * stdout. A line longer than MCP_MAX_MESSAGE is answered with an error and
 * skipped to its end, never buffered whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/mcp_int.h"

struct out {
	int fd;
	int failed;
};

static void write_all(struct out *o, const char *text, size_t len)
{
	while (len && !o->failed) {
		ssize_t w = write(o->fd, text, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->failed = errno ? errno : EIO;
			return;
		}
		text += w;
		len -= (size_t)w;
	}
}

/* Called with the session's lock held: one message, one line. JSON text
 * from jansson has no raw newline (it escapes them in strings). */
static void send_line(void *ctx, const char *text, size_t len)
{
	struct out *o = ctx;

	write_all(o, text, len);
	write_all(o, "\n", 1);
}

int tg_mcp_serve_stdio(struct tg_mcp *m, int in_fd, int out_fd, struct tg_error *err)
{
	struct mcp_session s;
	struct out o = { out_fd, 0 };
	size_t cap = 64 << 10, len = 0, scan = 0;
	char *buf = malloc(cap);
	int skipping = 0, rc = 0;

	tg_error_clear(err);
	if (!buf)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	mcp_session_init(&s, m, send_line, &o);
	for (;;) {
		char *nl;
		ssize_t n;

		/* every complete line in the buffer */
		while ((nl = memchr(buf + scan, '\n', len - scan)) != NULL) {
			size_t line = (size_t)(nl - buf);

			if (skipping) {
				skipping = 0;
			} else if (line > 0 && !(line == 1 && buf[0] == '\r')) {
				mcp_session_handle(&s, buf, buf[line - 1] == '\r' ? line - 1 : line);
			}
			memmove(buf, nl + 1, len - line - 1);
			len -= line + 1;
			scan = 0;
		}
		scan = len;
		if (o.failed)
			break;
		if (len > MCP_MAX_MESSAGE) {
			/* answered once, then the rest of the line is dropped */
			if (!skipping)
				mcp_session_handle(&s, buf, len); /* says "larger than" */
			skipping = 1;
			len = scan = 0;
		}
		if (len == cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger) {
				rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		n = read(in_fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* the client closed stdin: a last line without newline
			 * still counts */
			if (len && !skipping)
				mcp_session_handle(&s, buf, len);
			break;
		}
		len += (size_t)n;
	}
	/* the client closed stdin (the specification's shutdown): calls in
	 * flight finish, within their own time limits, and are answered;
	 * when writing failed, nobody would read their answers */
	mcp_session_release(&s, o.failed != 0);
	free(buf);
	if (o.failed && rc == 0)
		rc = tg_error_sys(err, o.failed, "writing to the client");
	return rc;
}

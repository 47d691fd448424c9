/*
 * libFuzzer entry point: MCP's JSON-RPC framing and dispatch
 * (src/mcp/session.c), as the stdio transport drives it: each input line
 * is a message. Whatever arrives, each request gets one well-formed
 * JSON-RPC answer (or none for notifications), and the session survives.
 * The catalogue holds one builtin echo tool, so tools/call runs the whole
 * pipeline without a sandbox.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/mcp_int.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tg_catalog *catalog;
static struct tg_gate *gate;
static struct tg_mcp *mcp;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/tg-fuzz-jsonrpc-XXXXXX", path[64];
	struct tg_error err;
	FILE *f;

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/echo.json", dir);
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs("{\"name\":\"echo\",\"version\":\"1.0.0\",\"description\":\"d\",\"owner\":{\"team\":\"t\","
	      "\"contact\":\"c\"},\"authority\":\"read\",\"tasks\":\"optional\",\"input_schema\":{\"type\":\"object\","
	      "\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":100}}},"
	      "\"output_schema\":{\"type\":\"object\"},\"executor\":{\"kind\":\"builtin\",\"name\":\"echo\"}}",
	      f);
	fclose(f);
	if (tg_catalog_load_dir(dir, NULL, &catalog, &err) < 0 ||
	    tg_gate_new(catalog, NULL, &gate, &err) < 0 || tg_mcp_new(gate, NULL, &mcp, &err) < 0)
		abort();
	unlink(path);
	rmdir(dir);
	return 0;
}

/* Every message the session sends must be a JSON-RPC answer (a result or
 * an error), or a notification (a subscription's acknowledgment): never
 * a request, which the echo tool has no way to cause. */
static void check_sent(void *ctx, const char *text, size_t len)
{
	json_t *m = json_loadb(text, len, 0, NULL);

	(void)ctx;
	if (!m)
		abort();
	if (json_is_object(m) && json_object_get(m, "method")) {
		if (!json_is_string(json_object_get(m, "method")) || json_object_get(m, "id"))
			abort();
	} else if (json_is_object(m) &&
		   (!json_object_get(m, "result")) == (!json_object_get(m, "error"))) {
		abort();
	}
	json_decref(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_session s;
	const char *p = (const char *)data, *end = p + size;

	mcp_session_init(&s, mcp, check_sent, NULL);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		mcp_session_handle(&s, p, len);
		p += len + 1;
	}
	mcp_session_release(&s, 0);
	return 0;
}

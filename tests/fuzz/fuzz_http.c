/*
 * libFuzzer entry point: the Streamable HTTP transport (src/mcp/http*.c)
 * as a client reaches it, bytes on a socket: libmicrohttpd parses them
 * and toolgate's handler answers (sessions, header checks, bodies,
 * JSON-RPC). The server runs in this process on a loopback port, so a
 * crash or a leak there is the fuzzer's finding. "SID" in the input
 * becomes the id of a live session (made at start), so the fuzzer reaches
 * past the session check. Every request must get an HTTP answer or a
 * closed connection, within the timeout. fuzz_https.c does the same
 * over TLS.
 */
#include "http_peer.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char sid[64] = "none";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char req[1024], resp[4096], *h;
	static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
				   "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}";
	int n;

	(void)argc;
	(void)argv;
	server_start(NULL, NULL);
	n = snprintf(req, sizeof(req),
		     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
		     "Accept: application/json, text/event-stream\r\nContent-Length: %zu\r\n\r\n%s",
		     port, strlen(body), body);
	exchange(req, (size_t)n, resp, sizeof(resp));
	h = strcasestr(resp, "Mcp-Session-Id: ");
	if (!h || sscanf(h + 16, "%63[0-9a-f]", sid) != 1)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char resp[1 << 16];
	size_t len;
	char *req = request_of(data, size, sid, &len);

	if (!req)
		return 0;
	exchange(req, len, resp, sizeof(resp));
	/* an answer is an HTTP status line, or nothing (connection closed) */
	if (resp[0] && strncmp(resp, "HTTP/1.", 7) != 0)
		abort();
	free(req);
	return 0;
}

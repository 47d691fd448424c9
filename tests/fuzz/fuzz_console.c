/*
 * libFuzzer entry point: the approval console's HTTP side
 * (src/mcp/http_console.c, console_session.c) as a browser or an attacker
 * reaches it, bytes on a socket to a server with a policy, a store and a
 * pending ticket. "COOKIE" in the input becomes a live session's cookie
 * (tg_console=...), "CSRF" its CSRF token, "TICKET" the pending ticket's
 * id, "TOKEN" an approver's token, "PORT" the port: so the fuzzer reaches
 * past the sign-in, the CSRF check and the ticket's lookup. Every request
 * must get an HTTP answer or a closed connection, within the timeout.
 */
#include <sys/stat.h>
#include <time.h>

#include "http_peer.h"
#include "toolgate/auth.h"
#include "toolgate/store.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char cookie[128] = "tg_console=none", csrf[80] = "none", ticket[40] = "none";
static char *approver;

static void put(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0 || chmod(path, mode) < 0)
		abort();
}

/* A server with a policy and a store holding one pending ticket; a
 * session signed in with alice's token, its cookie and CSRF token. */
static void start(void)
{
	static const char *const scopes[] = { "*:approve" };
	struct tg_token_request tr = { "alice", scopes, 1, 3600, NULL };
	struct tg_gate_options go = { 0 };
	struct tg_mcp_options mo = { 0 };
	struct tg_ticket t = { 0 }, made;
	struct tg_policy *policy;
	struct tg_signer *signer;
	struct tg_store *store;
	struct tg_error err;
	char dir[] = "/tmp/tg-fuzz-console-XXXXXX", cat[300], state[300], req[20000], resp[8192];
	char *h;
	int n;

	if (!mkdtemp(dir))
		abort();
	snprintf(cat, sizeof(cat), "%s/cat", dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	if (mkdir(cat, 0700) < 0 || mkdir(state, 0700) < 0)
		abort();
	put(cat, "echo.json", "{\"name\":\"echo\",\"version\":\"1.0.0\",\"description\":\"d\","
	    "\"owner\":{\"team\":\"t\",\"contact\":\"c\"},\"authority\":\"read\",\"input_schema\":"
	    "{\"type\":\"object\"},\"executor\":{\"kind\":\"builtin\",\"name\":\"echo\"}}", 0600);
	put(dir, "policy.json", "{\"principals\":{\"alice\":{\"scopes\":[\"*:approve\"]},"
	    "\"agent\":{\"scopes\":[\"*:read\"]}}}", 0600);
	snprintf(req, sizeof(req), "%s/policy.json", dir);
	if (tg_policy_load(req, &policy, &err) < 0 || tg_signer_open(state, 1, &signer, &err) < 0 ||
	    tg_store_open(state, &store, &err) < 0 ||
	    tg_token_issue(signer, policy, &tr, (int64_t)time(NULL), &approver, &err) < 0)
		goto fail;
	/* a ticket to look at and decide */
	snprintf(t.principal, sizeof(t.principal), "agent");
	snprintf(t.tool, sizeof(t.tool), "echo@1.0.0");
	memset(t.args_sha256, 'a', 64);
	t.arguments = (char *)"{\"x\":\"\\u202e<script>\"}";
	t.preview = (char *)"{\"diff\":\"+a\\n-b\"}";
	if (tg_store_ticket_create(store, &t, (int64_t)time(NULL), 3600, &made, &err) < 0)
		goto fail;
	snprintf(ticket, sizeof(ticket), "%s", made.id);
	tg_ticket_release(&made);
	go.policy = policy;
	go.signer = signer;
	go.store = store;
	if (tg_catalog_load_dir(cat, NULL, &catalog, &err) < 0 ||
	    tg_gate_new(catalog, &go, &gate, &err) < 0 || tg_mcp_new(gate, &mo, &mcp, &err) < 0 ||
	    tg_mcp_http_start(mcp, "127.0.0.1", 0, NULL, &http, &err) < 0)
		goto fail;
	port = tg_mcp_http_port(http);
	n = snprintf(req, sizeof(req), "POST /console/api/session HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		     "Origin: http://127.0.0.1:%u\r\nContent-Type: application/json\r\n"
		     "Content-Length: %zu\r\n\r\n{\"token\":\"%s\"}", port, port,
		     strlen(approver) + 12, approver);
	exchange(req, (size_t)n, resp, sizeof(resp));
	h = strstr(resp, "Set-Cookie: ");
	if (!h || sscanf(h + 12, "%127[^;]", cookie) != 1 || !(h = strstr(resp, "\"csrf\":\"")) ||
	    sscanf(h + 8, "%79[0-9a-f]", csrf) != 1) {
		fprintf(stderr, "fuzz_console: no session: %.300s\n", resp);
		abort();
	}
	return;
fail:
	fprintf(stderr, "fuzz_console: %s\n", err.msg);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	start();
	return 0;
}

/* The request: the input with its placeholders put in. */
static char *request(const uint8_t *data, size_t size, size_t *len)
{
	static const struct {
		const char *mark;
		const char *value;
	} marks[] = { { "COOKIE", cookie }, { "CSRF", csrf }, { "TICKET", ticket }, { "TOKEN", NULL } };
	/* a mark of 4 or more bytes becomes at most the longest value */
	char *req = size <= 1 << 16 ? malloc(size * (strlen(approver) / 4 + 40) + 1) : NULL;
	char *o = req;
	size_t i, k, m;

	if (!req)
		return NULL;
	for (i = 0; i < size; i++) {
		for (k = 0; k < sizeof(marks) / sizeof(marks[0]); k++) {
			m = strlen(marks[k].mark);
			if (i + m <= size && memcmp(data + i, marks[k].mark, m) == 0)
				break;
		}
		if (k < sizeof(marks) / sizeof(marks[0])) {
			o += sprintf(o, "%s", marks[k].value ? marks[k].value : approver);
			i += strlen(marks[k].mark) - 1;
		} else if (i + 4 <= size && memcmp(data + i, "PORT", 4) == 0) {
			o += sprintf(o, "%u", port);
			i += 3;
		} else {
			*o++ = (char)data[i];
		}
	}
	*len = (size_t)(o - req);
	return req;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char resp[8192];
	size_t len;
	char *req = request(data, size, &len);

	if (!req)
		return 0;
	exchange(req, len, resp, sizeof(resp));
	free(req);
	return 0;
}

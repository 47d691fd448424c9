/*
 * libFuzzer entry point: what an upstream MCP server sends to toolgate's
 * client (src/upstream/client.c), one line at a time through
 * upstream_client_handle_line, the queue then drained through the
 * callbacks, as the reader and dispatcher threads would, without them.
 * Two pings are in flight (ids 1 and 2) so that responses find waiters.
 * Whatever arrives: no crash, no leak, and each waiter gets exactly one
 * outcome. What the client writes goes to /dev/null.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "upstream/client.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int devnull = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0)
		abort();
	return 0;
}

static void on_notification(void *ctx, const char *method, json_t *params)
{
	(void)ctx;
	if (!method || (params && !json_is_object(params)))
		abort(); /* the client promised a string method, object params */
}

static json_t *on_request(void *ctx, json_t *id, const char *method, json_t *params,
			  uint64_t seq, struct upstream_rpc_error *e)
{
	(void)ctx;
	(void)seq;
	(void)id;
	(void)params;
	if (strcmp(method, "roots/list") == 0)
		return json_pack("{s:[]}", "roots");
	e->code = -32000;
	return NULL;
}

static const struct upstream_client_ops ops = { on_notification, on_request, NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	struct upstream_client *c;
	struct tg_error err;
	json_t *res;
	int64_t id[2];
	int i;

	if (upstream_client_new(dup(devnull), dup(devnull), &ops, &c, &err) < 0)
		abort();
	for (i = 0; i < 2; i++) {
		id[i] = upstream_client_send(c, "ping", NULL, &err);
		if (id[i] != i + 1)
			abort();
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		upstream_client_handle_line(c, p, len);
		upstream_client_drain(c);
		p += len + 1;
	}
	for (i = 0; i < 2; i++) {
		int rc = upstream_client_wait(c, id[i], 0, &res, &err);

		if ((rc < 0) != (res == NULL))
			abort();
		json_decref(res);
	}
	upstream_client_free(c);
	return 0;
}

/* Unit tests: src/upstream/ (the declaration loader, and lint.c: what
 * loads but would not work) and the catalogue's upstreams
 * (src/catalog/upstreams.c): what loads, each refusal naming the file and
 * the field, lint's findings, and the namespace shared with contracts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "toolgate/sandbox.h"
#include "toolgate/upstream.h"
#include "unit.h"

#define ORIGIN "cat/upstreams/t.json"

static int parse(const char *text, struct tg_upstream **u, struct tg_error *err)
{
	return tg_upstream_parse(text, strlen(text), ORIGIN, u, err);
}

/* text is refused, the message naming the file and holding want. */
static int refused(const char *text, const char *want)
{
	struct tg_upstream *u = NULL;
	struct tg_error err;
	int ok = parse(text, &u, &err) < 0 && strstr(err.msg, "upstream " ORIGIN ": ") &&
		 strstr(err.msg, want);

	if (!ok)
		fprintf(stderr, "%s\n  wanted '%s', got: %s\n", text, want, u ? "loaded" : err.msg);
	tg_upstream_free(u);
	return ok;
}

static int loads(const char *text)
{
	struct tg_upstream *u = NULL;
	struct tg_error err;
	int ok = parse(text, &u, &err) == 0;

	if (!ok)
		fprintf(stderr, "%s\n  refused: %s\n", text, err.msg);
	tg_upstream_free(u);
	return ok;
}

/* server-everything over stdio, with all a stdio declaration may say. */
static int stdio_loads(void)
{
	struct tg_upstream *u;
	struct tg_error err;
	char dir[64], text[2048], path[128];

	CHECK(unit_tmpdir(dir, "upstream") == 0);
	CHECK(mkdir(strcat(strcpy(path, dir), "/upstreams"), 0700) == 0);
	CHECK(unit_put(dir, "token", "s3cret\n", 0600) == 0);
	snprintf(text, sizeof(text),
		 "{\"name\":\"everything\",\"transport\":\"stdio\","
		 "\"argv\":[\"npx\",\"-y\",\"@modelcontextprotocol/server-everything\"],"
		 "\"env\":{\"LOG_LEVEL\":\"info\"},\"workdir\":\"/srv\","
		 "\"sandbox\":{\"mounts\":[{\"host\":\"%s\",\"inside\":\"/data\"},"
		 "{\"host\":\"%s\",\"writable\":true}],\"egress\":[\"registry.npmjs.org:443\"],"
		 "\"limits\":{\"memory\":\"512M\",\"cpus\":0.5,\"pids\":64,\"timeout\":\"30s\","
		 "\"output\":\"1M\"}},"
		 "\"credentials\":{\"env\":{\"API_TOKEN\":\"%s/token\"}},"
		 "\"tools\":{\"echo\":{\"authority\":\"read\"},\"add\":{\"authority\":\"read\","
		 "\"rename\":\"sum\"},\"longRunningOperation\":{\"tasks\":\"required\","
		 "\"dry_run\":{\"argument\":\"dryRun\"},\"compensation\":{\"tool\":\"everything.undo\","
		 "\"arguments\":{\"id\":\"${call_id}\"}}},\"printEnv\":{\"hide\":true}},"
		 "\"per_call\":true}", dir, dir, dir);
	CHECK(unit_put(dir, "upstreams/everything.json", text, 0644) == 0);
	snprintf(path, sizeof(path), "%s/upstreams/everything.json", dir);
	CHECK(tg_upstream_load(path, &u, &err) == 0);
	CHECK(strcmp(u->name, "everything") == 0 && strcmp(u->file, path) == 0);
	CHECK(u->transport == TG_UPSTREAM_STDIO && !u->url && !u->url_rule);
	CHECK(strcmp(u->argv[0], "npx") == 0 && strcmp(u->argv[2], "@modelcontextprotocol/"
							 "server-everything") == 0 && !u->argv[3]);
	CHECK(strcmp(u->env[0], "LOG_LEVEL=info") == 0 && !u->env[1]);
	CHECK(strcmp(u->workdir, "/srv") == 0 && u->per_call);
	/* standard by default; read-only unless said; inside defaults to host */
	CHECK(u->tier == TG_TIER_STANDARD && u->nmounts == 2);
	CHECK(strcmp(u->mounts[0].inside, "/data") == 0 && !u->mounts[0].writable);
	CHECK(strcmp(u->mounts[1].inside, dir) == 0 && u->mounts[1].writable);
	CHECK(strcmp(u->egress[0], "registry.npmjs.org:443") == 0 && !u->egress[1]);
	CHECK(u->memory == 512u << 20 && u->millicpus == 500 && u->pids == 64);
	CHECK(u->timeout_ms == 30000 && u->output == 1u << 20);
	/* the credential is a path: the secret is not in the declaration */
	CHECK(u->ncredentials == 1 && strcmp(u->credentials[0].name, "API_TOKEN") == 0);
	snprintf(path, sizeof(path), "%s/token", dir);
	CHECK(strcmp(u->credentials[0].path, path) == 0);
	CHECK(u->ntools == 4 && u->pin == TG_UPSTREAM_PIN_STRICT);
	CHECK(strcmp(u->tools[0].exposed, "everything.echo") == 0);
	CHECK(u->tools[0].authority == TG_UPSTREAM_READ);
	CHECK(u->tools[0].tasks == TG_UPSTREAM_TASKS_FORBIDDEN && u->tools[0].dry_run == 0);
	CHECK(strcmp(u->tools[1].name, "add") == 0);
	CHECK(strcmp(u->tools[1].exposed, "everything.sum") == 0);
	/* no authority given: a write */
	CHECK(u->tools[2].authority == TG_UPSTREAM_WRITE && u->tools[2].dry_run == 1 &&
	      strcmp(u->tools[2].dry_run_argument, "dryRun") == 0);
	CHECK(u->tools[2].tasks == TG_UPSTREAM_TASKS_REQUIRED);
	CHECK(strcmp(u->tools[2].compensation_tool, "everything.undo") == 0);
	CHECK(strcmp(u->tools[2].compensation_args, "{\"id\":\"${call_id}\"}") == 0);
	CHECK(u->tools[3].hide && u->tools[3].authority == TG_UPSTREAM_WRITE);
	CHECK(u->tools[3].tasks == TG_UPSTREAM_TASKS_OPTIONAL);
	tg_upstream_free(u);
	tg_upstream_free(NULL);
	/* the same file with the token readable by others: refused */
	CHECK(chmod(strcat(strcpy(path, dir), "/token"), 0644) == 0);
	snprintf(path, sizeof(path), "%s/upstreams/everything.json", dir);
	CHECK(tg_upstream_load(path, &u, &err) < 0 && strstr(err.msg, path) &&
	      strstr(err.msg, "credentials.env.API_TOKEN: ") && strstr(err.msg, "has mode 0644"));
	unit_rmtree(dir);
	return 0;
}

static int http_loads(void)
{
	struct tg_upstream *u;
	struct tg_error err;
	char dir[64], text[1024];

	CHECK(unit_tmpdir(dir, "upstream-http") == 0);
	CHECK(unit_put(dir, "auth", "Bearer x\n", 0400) == 0);
	snprintf(text, sizeof(text), "{\"transport\":\"http\",\"url\":\"https://mcp.example.test/mcp"
		 "?a=1\",\"credentials\":{\"header\":{\"Authorization\":\"%s/auth\","
		 "\"X-Api-Key\":\"%s/auth\"}},\"pin\":\"review\",\"tools\":{\"echo\":{}}}", dir, dir);
	CHECK(parse(text, &u, &err) == 0);
	CHECK(strcmp(u->name, "t") == 0 && u->transport == TG_UPSTREAM_HTTP);
	CHECK(strcmp(u->url, "https://mcp.example.test/mcp?a=1") == 0);
	CHECK(strcmp(u->url_rule, "mcp.example.test:443") == 0 && !u->argv && !u->nmounts);
	CHECK(u->ncredentials == 2 && strcmp(u->credentials[1].name, "X-Api-Key") == 0);
	CHECK(u->pin == TG_UPSTREAM_PIN_REVIEW && strcmp(tg_upstream_pin_name(u->pin), "review") == 0);
	CHECK(strcmp(tg_upstream_transport_name(u->transport), "http") == 0);
	tg_upstream_free(u);
	CHECK(parse("{\"transport\":\"http\",\"url\":\"http://127.0.0.1:8080\",\"pin\":\"off\"}", &u,
		    &err) == 0);
	CHECK(strcmp(u->url_rule, "127.0.0.1:8080") == 0 && u->pin == TG_UPSTREAM_PIN_OFF);
	/* nothing relayed unless named */
	CHECK(u->relay == 0);
	tg_upstream_free(u);
	CHECK(parse("{\"transport\":\"http\",\"url\":\"http://h.test\",\"relay\":[\"roots\","
		    "\"sampling\"]}", &u, &err) == 0);
	CHECK(u->relay == (TG_UPSTREAM_RELAY_ROOTS | TG_UPSTREAM_RELAY_SAMPLING));
	tg_upstream_free(u);
	CHECK(parse("{\"transport\":\"http\",\"url\":\"http://[::1]:3001/mcp\"}", &u, &err) == 0);
	CHECK(strcmp(u->url_rule, "[::1]:3001") == 0);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

#define STDIO "{\"transport\":\"stdio\",\"argv\":[\"srv\"],"
#define HTTP "{\"transport\":\"http\",\"url\":\"https://h.test/mcp\","

/* The shape of the file, transport by transport. */
static int refusals(void)
{
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char *big;
	size_t i;

	CHECK(refused(STDIO "\"bogus\":1}", "bogus: unknown field"));
	CHECK(refused(STDIO "\"sandbox\":{\"mounts\":[{\"host\":\"/\"},{\"hots\":\"/\"}]}}",
		      "sandbox.mounts[1].hots: unknown field"));
	CHECK(refused(STDIO "\"name\":\"other\"}", "name: must be \"t\""));
	CHECK(refused("{\"argv\":[\"x\"]}", "transport: required"));
	CHECK(refused("{\"transport\":\"sse\"}", "transport: must be stdio or http"));
	CHECK(refused("{\"transport\":\"stdio\"}", "argv: required"));
	CHECK(refused("{\"transport\":\"stdio\",\"argv\":[]}", "argv: required"));
	CHECK(refused("{\"transport\":\"stdio\",\"argv\":[\"\"]}", "argv: required"));
	CHECK(refused("{\"transport\":\"stdio\",\"argv\":[1]}", "argv[0]: must be a string"));
	CHECK(refused(STDIO "\"url\":\"https://h.test\"}", "url: is for http upstreams"));
	CHECK(refused(STDIO "\"workdir\":\"srv\"}", "workdir: must be an absolute path"));
	CHECK(refused(STDIO "\"env\":{\"1X\":\"v\"}}", "env.1X: a variable's name"));
	CHECK(refused(STDIO "\"env\":{\"TOOLGATE_CALL_ID\":\"v\"}}", "env.TOOLGATE_CALL_ID: "));
	CHECK(refused(STDIO "\"env\":{\"A\":1}}", "env.A: must be a string"));
	CHECK(refused(STDIO "\"per_call\":\"yes\"}", "per_call: must be true or false"));
	CHECK(refused(STDIO "\"pin\":\"loose\"}", "pin: must be strict (the default)"));
	CHECK(refused(STDIO "\"relay\":\"sampling\"}", "relay: must be an array of sampling"));
	CHECK(refused(STDIO "\"relay\":[\"sampling\",\"tools\"]}",
		      "relay[1]: must be sampling, elicitation or roots"));
	CHECK(refused(HTTP "\"relay\":[1]}", "relay[0]: must be sampling, elicitation or roots"));
	CHECK(refused(STDIO "\"relay\":[\"roots\",\"roots\"]}", "relay[1]: roots is named twice"));
	CHECK(refused(STDIO "\"sandbox\":{\"tier\":\"none\"}}", "sandbox.tier: "));
	CHECK(refused(STDIO "\"sandbox\":{\"mounts\":[{\"host\":\"/nonexistent-tg-up\"}]}}",
		      "sandbox.mounts[0].host: /nonexistent-tg-up: No such file"));
	CHECK(refused(STDIO "\"sandbox\":{\"mounts\":[{\"host\":\"tmp\"}]}}",
		      "sandbox.mounts[0].host: tmp: must be an absolute path"));
	CHECK(refused(STDIO "\"sandbox\":{\"mounts\":[{\"inside\":\"/x\"}]}}",
		      "sandbox.mounts[0].host: required"));
	CHECK(refused(STDIO "\"sandbox\":{\"mounts\":[{\"host\":\"/\",\"writable\":\"yes\"}]}}",
		      "sandbox.mounts[0].writable: must be true or false"));
	CHECK(refused(STDIO "\"sandbox\":{\"egress\":[\"a.test:443\",\"example.com\"]}}",
		      "sandbox.egress[1]: \"example.com\" has no port"));
	CHECK(refused(STDIO "\"sandbox\":{\"egress\":[\"exa mple.com:80\"]}}",
		      "sandbox.egress[0]: "));
	CHECK(refused(STDIO "\"sandbox\":{\"tier\":\"strict\",\"egress\":[\"a.test:443\"]}}",
		      "sandbox.egress: is for the standard tier"));
	CHECK(refused(STDIO "\"sandbox\":{\"limits\":{\"disk\":\"1G\"}}}",
		      "sandbox.limits.disk: unknown field"));
	CHECK(refused(STDIO "\"sandbox\":{\"limits\":{\"output\":\"1\"}}}", "sandbox.limits.output"));
	CHECK(refused(STDIO "\"sandbox\":{\"limits\":{\"pids\":0}}}", "sandbox.limits.pids"));
	CHECK(refused(STDIO "\"sandbox\":{\"limits\":{\"cpus\":0}}}", "sandbox.limits.cpus"));
	/* out of range before it is an integer: no conversion of -1 or 1e300 */
	CHECK(refused(STDIO "\"sandbox\":{\"limits\":{\"cpus\":-1}}}", "sandbox.limits.cpus"));
	CHECK(refused(STDIO "\"sandbox\":{\"limits\":{\"cpus\":1e300}}}", "sandbox.limits.cpus"));
	CHECK(refused(STDIO "\"sandbox\":{\"limits\":[]}}", "sandbox.limits: must be an object"));
	CHECK(refused(STDIO "\"sandbox\":{\"limits\":{\"memory\":12}}}", "sandbox.limits.memory"));
	CHECK(refused(HTTP "\"sandbox\":{}}", "sandbox: is for stdio upstreams"));
	CHECK(refused(HTTP "\"argv\":[\"x\"]}", "argv: is for stdio upstreams"));
	CHECK(refused(HTTP "\"per_call\":true}", "per_call: is for stdio upstreams"));
	CHECK(refused("{\"transport\":\"http\"}", "url: required"));
	CHECK(refused("{\"transport\":\"http\",\"url\":\"ftp://h.test/\"}",
		      "url: must start with http:// or https://"));
	CHECK(refused("{\"transport\":\"http\",\"url\":\"https://u:p@h.test/\"}",
		      "url: holds userinfo"));
	CHECK(refused("{\"transport\":\"http\",\"url\":\"https:///mcp\"}", "url: must name a host"));
	CHECK(refused("{\"transport\":\"http\",\"url\":\"https://h.test:0/\"}", "url: a port"));
	CHECK(refused("{\"transport\":\"http\",\"url\":\"https://h.test:99999/\"}", "url: a port"));
	CHECK(refused("{\"transport\":\"http\",\"url\":\"https://h test/\"}", "url: holds a space"));
	CHECK(refused(STDIO "\"credentials\":{\"header\":{\"A\":\"/x\"}}}",
		      "credentials.header: is for http upstreams"));
	CHECK(refused(HTTP "\"credentials\":{\"env\":{\"A\":\"/x\"}}}",
		      "credentials.env: is for stdio upstreams"));
	CHECK(refused(HTTP "\"credentials\":{\"header\":{\"Host\":\"/x\"}}}",
		      "credentials.header.Host: is a header the gateway's transport sets"));
	CHECK(refused(HTTP "\"credentials\":{\"header\":{\"Bad Header\":\"/x\"}}}",
		      "credentials.header.Bad Header: a header's name"));
	CHECK(refused(STDIO "\"env\":{\"K\":\"v\"},\"credentials\":{\"env\":{\"K\":\"/x\"}}}",
		      "credentials.env.K: is also set in env"));
	CHECK(refused(STDIO "\"credentials\":{\"env\":{\"K\":\"key.txt\"}}}",
		      "credentials.env.K: key.txt: must be an absolute path"));
	CHECK(refused(STDIO "\"credentials\":{\"env\":{\"K\":\"/nonexistent-tg-key\"}}}",
		      "credentials.env.K: /nonexistent-tg-key: No such file"));
	CHECK(refused(STDIO "\"credentials\":{\"env\":{\"K\":\"/\"}}}",
		      "credentials.env.K: / is not a regular file"));
	CHECK(refused(STDIO "\"credentials\":{\"vault\":{}}}", "credentials.vault: unknown field"));
	CHECK(refused("[1]", "(top): must be a JSON object"));
	CHECK(refused("{\"a\":1,\"a\":2}", "line 1"));
	/* a file name that cannot be a namespace */
	CHECK(tg_upstream_parse(STDIO "\"pin\":\"off\"}", strlen(STDIO "\"pin\":\"off\"}"),
				"cat/upstreams/Bad_Name.json", &u,
				&err) < 0 && strstr(err.msg, "upstreams/Bad_Name.json: name: "));
	CHECK(tg_upstream_parse("{}", 2, "cat/upstreams/t.yaml", &u, &err) < 0 &&
	      strstr(err.msg, "name: the file is upstreams/NAME.json"));
	/* ceilings */
	big = malloc(TG_UPSTREAM_MAX_BYTES + 64);
	CHECK(big);
	memset(big, ' ', TG_UPSTREAM_MAX_BYTES + 1);
	CHECK(tg_upstream_parse(big, TG_UPSTREAM_MAX_BYTES + 1, ORIGIN, &u, &err) < 0 &&
	      err.code == TG_ERR_LIMIT && strstr(err.msg, ORIGIN));
	i = (size_t)snprintf(big, 64, "{\"transport\":\"http\",\"url\":\"https://h.test/");
	memset(big + i, 'a', TG_UPSTREAM_MAX_URL);
	memcpy(big + i + TG_UPSTREAM_MAX_URL, "\"}", 3);
	CHECK(refused(big, "url: longer than 2048 bytes"));
	/* at most 64 arguments */
	i = (size_t)snprintf(big, 64, "{\"transport\":\"stdio\",\"argv\":[\"a\"");
	for (size_t k = 0; k < TG_UPSTREAM_MAX_ARGV; k++)
		i += (size_t)snprintf(big + i, 8, ",\"a\"");
	memcpy(big + i, "]}", 3);
	CHECK(refused(big, "argv: must be an array of at most 64 strings"));
	free(big);
	return 0;
}

/* tools: authority, rename, hide, compensation, tasks; their ceilings. */
static int tool_refusals(void)
{
	char *big;
	size_t i, n;

	CHECK(refused(STDIO "\"tools\":{\"echo\":{\"authority\":\"admin\"}}}",
		      "tools.echo.authority: must be read or write"));
	CHECK(refused(STDIO "\"tools\":{\"echo\":{\"descripton\":\"x\"}}}",
		      "tools.echo.descripton: unknown field"));
	CHECK(refused(STDIO "\"tools\":{\"bad name\":{}}}", "tools.bad name: a tool's name"));
	CHECK(refused(STDIO "\"tools\":{\"echo\":[]}}", "tools.echo: must be an object"));
	CHECK(refused(STDIO "\"tools\":{\"echo\":{\"rename\":\"no/slash\"}}}",
		      "tools.echo.rename: a tool's name"));
	CHECK(refused(STDIO "\"tools\":{\"a\":{\"rename\":\"b\"},\"b\":{}}}",
		      "tools.b: exposed as t.b, as tools.a is"));
	CHECK(refused(STDIO "\"tools\":{\"echo\":{\"authority\":\"read\",\"compensation\":"
		      "{\"irreversible\":\"x\"}}}}", "tools.echo.compensation: is a write's"));
	CHECK(refused(STDIO "\"tools\":{\"w\":{\"compensation\":{\"tool\":\"t.u\","
		      "\"irreversible\":\"x\"}}}}", "tools.w.compensation: either a tool"));
	CHECK(refused(STDIO "\"tools\":{\"w\":{\"compensation\":{}}}}",
		      "tools.w.compensation: either a tool"));
	CHECK(refused(STDIO "\"tools\":{\"w\":{\"compensation\":{\"tool\":\"t.u\",\"arguments\":"
		      "{\"a\":\"${env.HOME}\"}}}}}", "tools.w.compensation.arguments: a placeholder"));
	CHECK(refused(STDIO "\"tools\":{\"w\":{\"compensation\":{\"tool\":\"t.u\",\"why\":1}}}}",
		      "tools.w.compensation.why: unknown field"));
	CHECK(refused(STDIO "\"tools\":{\"w\":{\"tasks\":\"sometimes\"}}}",
		      "tools.w.tasks: must be forbidden, optional or required"));
	CHECK(refused(STDIO "\"tools\":{\"w\":{\"dry_run\":\"overlay\"}}}",
		      "tools.w.dry_run: must be unsupported (the default) or {\"argument\""));
	CHECK(refused(STDIO "\"tools\":{\"w\":{\"dry_run\":\"supported\"}}}",
		      "tools.w.dry_run: name the boolean argument"));
	CHECK(refused(STDIO "\"tools\":{\"w\":{\"dry_run\":{\"arg\":\"x\"}}}}",
		      "tools.w.dry_run.arg: unknown field"));
	CHECK(refused(STDIO "\"tools\":{\"w\":{\"dry_run\":{}}}}",
		      "tools.w.dry_run: argument: required"));
	CHECK(refused(STDIO "\"tools\":{\"w\":{\"hide\":\"yes\"}}}",
		      "tools.w.hide: must be true or false"));
	CHECK(refused(STDIO "\"tools\":[]}", "tools: must be an object of at most 1024"));
	/* a hidden tool is exposed under no name: no clash */
	CHECK(loads(STDIO "\"tools\":{\"a\":{\"rename\":\"b\",\"hide\":true},\"b\":{}}}"));
	/* an exposed name is an MCP tool name: at most 128 */
	big = malloc(64 * 1024);
	CHECK(big);
	n = (size_t)snprintf(big, 64, STDIO "\"tools\":{\"");
	memset(big + n, 'a', 127);
	memcpy(big + n + 127, "\":{}}}", 7);
	CHECK(refused(big, "longer than 128 characters"));
	/* at most 1024 tools */
	n = (size_t)snprintf(big, 64, STDIO "\"tools\":{");
	for (i = 0; i <= TG_UPSTREAM_MAX_TOOLS; i++)
		n += (size_t)snprintf(big + n, 64, "%s\"t%zu\":{}", i ? "," : "", i);
	memcpy(big + n, "}}", 3);
	CHECK(refused(big, "tools: must be an object of at most 1024"));
	free(big);
	return 0;
}

/* A credential that resolves under /proc or /dev is refused, whatever its
 * mode: /proc/self/environ is a regular 0400 file of the caller's. */
static int credential_paths(void)
{
	char dir[64], link[128], text[512];

	CHECK(refused(STDIO "\"credentials\":{\"env\":{\"K\":\"/proc/self/environ\"}}}",
		      "credentials.env.K: /proc/self/environ is under /proc or /dev"));
	CHECK(refused(STDIO "\"credentials\":{\"env\":{\"K\":\"/proc/self/fd/0\"}}}",
		      "credentials.env.K: /proc/self/fd/0 is under /proc or /dev"));
	CHECK(refused(STDIO "\"credentials\":{\"env\":{\"K\":\"/dev/stdin\"}}}",
		      "credentials.env.K: /dev/stdin is under /proc or /dev"));
	/* by where it resolves, not by how it is spelt */
	CHECK(unit_tmpdir(dir, "upstream-cred") == 0);
	snprintf(link, sizeof(link), "%s/environ", dir);
	CHECK(symlink("/proc/self/environ", link) == 0);
	snprintf(text, sizeof(text), HTTP "\"credentials\":{\"header\":{\"X-Key\":\"%s\"}}}",
		 link);
	CHECK(refused(text, "credentials.header.X-Key: "));
	CHECK(refused(text, "is under /proc or /dev"));
	unit_rmtree(dir);
	return 0;
}

/* Headers that speak to a proxy or to the connection, any case. */
static int reserved_headers(void)
{
	static const char *const reserved[] = {
		"Proxy-Authorization", "proxy-connection", "Connection", "upgrade", "TE",
		"Trailer", "Keep-Alive", "Expect", "transfer-encoding", "Content-Length",
		"Accept-Encoding", "Mcp-Method", "mcp-name", "Mcp-Param-Region", NULL,
	};
	char text[512];
	size_t i;

	for (i = 0; reserved[i]; i++) {
		snprintf(text, sizeof(text), HTTP "\"credentials\":{\"header\":{\"%s\":\"/x\"}}}",
			 reserved[i]);
		CHECK(refused(text, "is a header the gateway's transport sets"));
	}
	return 0;
}

/* A key of the file reaches a message with its control bytes escaped. */
static int field_escapes(void)
{
	struct tg_upstream *u = NULL;
	struct tg_error err;
	const char *text = STDIO "\"env\":{\"A\\nB\\u007f\":\"v\"}}";

	CHECK(refused(text, "env.A\\x0aB\\x7f: a variable's name"));
	CHECK(parse(text, &u, &err) < 0 && !strchr(err.msg, '\n') && !strchr(err.msg, 0x7f));
	CHECK(refused(STDIO "\"tools\":{\"x\\r\":{}}}", "tools.x\\x0d: a tool's name"));
	return 0;
}

/* compensation.arguments: keys at most 256 bytes, at most 16 KiB. */
static int compensation_bounds(void)
{
	char *big = malloc(32 * 1024);
	size_t n;

	CHECK(big);
	n = (size_t)snprintf(big, 128, STDIO "\"tools\":{\"w\":{\"compensation\":{\"tool\":"
			     "\"t.u\",\"arguments\":{\"");
	memset(big + n, 'k', 257);
	memcpy(big + n + 257, "\":1}}}}}", 9);
	CHECK(refused(big, "tools.w.compensation.arguments: "));
	memset(big + n, 'k', 256);
	memcpy(big + n + 256, "\":1}}}}}", 9);
	CHECK(loads(big));
	/* each string is under 4096, the whole over 16 KiB */
	n = (size_t)snprintf(big, 128, STDIO "\"tools\":{\"w\":{\"compensation\":{\"tool\":"
			     "\"t.u\",\"arguments\":{");
	for (int k = 0; k < 5; k++) {
		n += (size_t)snprintf(big + n, 16, "%s\"a%d\":\"", k ? "," : "", k);
		memset(big + n, 'v', 4000);
		n += 4000;
		big[n++] = '"';
	}
	memcpy(big + n, "}}}}}", 6);
	CHECK(refused(big, "tools.w.compensation.arguments: at most 16384 bytes"));
	free(big);
	return 0;
}

static int write_contract(const char *dir, const char *file, const char *name,
			  const char *extra)
{
	char text[1024];

	snprintf(text, sizeof(text), "{\"name\":\"%s\",\"version\":\"1.0.0\",\"description\":\"d\","
		 "\"owner\":{\"team\":\"t\",\"contact\":\"c\"},\"input_schema\":{\"type\":\"object\"},"
		 "\"executor\":{\"kind\":\"builtin\",\"name\":\"echo\"},%s}", name, extra);
	return unit_put(dir, file, text, 0644);
}

/* The catalogue loads d, refusing it with a message that holds a and b
 * (NULL: loads). */
static int catalogue_says(const char *d, const char *a, const char *b)
{
	struct tg_catalog *c = NULL;
	struct tg_error err;
	int ok;

	if (!a) {
		ok = tg_catalog_load_dir(d, NULL, &c, &err) == 0;
		if (!ok)
			fprintf(stderr, "refused: %s\n", err.msg);
	} else {
		ok = tg_catalog_load_dir(d, NULL, &c, &err) < 0 && strstr(err.msg, a) &&
		     strstr(err.msg, b);
		if (!ok)
			fprintf(stderr, "wanted '%s' and '%s', got: %s\n", a, b, c ? "loaded" : err.msg);
	}
	tg_catalog_free(c);
	return ok;
}

static const char READ[] = "\"authority\":\"read\"";

/* The namespace NAME. is the upstream's: a contract in it is refused at
 * load, naming both files; what is ignored and what is fine. */
static int catalogue_namespace(void)
{
	struct tg_catalog *c;
	struct tg_error err;
	char d[64], up[128], ct[128];

	CHECK(unit_tmpdir(d, "upstream-cat") == 0);
	/* no upstreams/ folder: none */
	CHECK(write_contract(d, "echo.json", "echo", READ) == 0);
	CHECK(tg_catalog_load_dir(d, NULL, &c, &err) == 0 && tg_catalog_upstream_count(c) == 0);
	tg_catalog_free(c);
	snprintf(up, sizeof(up), "%s/upstreams", d);
	CHECK(mkdir(up, 0700) == 0);
	snprintf(up, sizeof(up), "%s/upstreams/gh.json", d);
	snprintf(ct, sizeof(ct), "%s/search.json", d);
	CHECK(unit_put(d, "upstreams/notes.txt", "not a declaration", 0644) == 0);
	CHECK(unit_put(d, "upstreams/gh.json", STDIO "\"tools\":{\"search\":{\"authority\":"
			 "\"read\"},\"find\":{\"rename\":\"lookup\"},\"hidden\":{\"hide\":true}}}",
			 0644) == 0);
	/* a contract named like the upstream, or one that only starts alike,
	 * is not in its namespace */
	CHECK(write_contract(d, "gh.json", "gh", READ) == 0);
	CHECK(write_contract(d, "ghx.json", "ghx.search", READ) == 0);
	CHECK(tg_catalog_load_dir(d, NULL, &c, &err) == 0);
	CHECK(tg_catalog_upstream_count(c) == 1 && tg_catalog_count(c) == 3);
	CHECK(strcmp(tg_catalog_upstream_at(c, 0)->name, "gh") == 0 && !tg_catalog_upstream_at(c, 1));
	tg_catalog_free(c);
	/* a contract equal to an exposed name: both files named */
	CHECK(write_contract(d, "search.json", "gh.search", READ) == 0);
	CHECK(catalogue_says(d, "upstream ", "tools.search: exposed as gh.search, the name of "
			     "contract "));
	CHECK(catalogue_says(d, up, ct));
	/* ... equal to a renamed one */
	CHECK(write_contract(d, "search.json", "gh.lookup", READ) == 0);
	CHECK(catalogue_says(d, "tools.find: exposed as gh.lookup", ct));
	/* ... or anywhere in the namespace, a hidden tool's name included */
	CHECK(write_contract(d, "search.json", "gh.hidden", READ) == 0);
	CHECK(catalogue_says(d, "name: gh.hidden lies in the namespace gh. of upstream ", up));
	CHECK(write_contract(d, "search.json", "gh.find", READ) == 0);
	CHECK(catalogue_says(d, "contract ", "gh.find lies in the namespace gh."));
	CHECK(unlink(ct) == 0);
	/* a declaration refused refuses the catalogue */
	CHECK(unit_put(d, "upstreams/gh.json", STDIO "\"sandbox\":{\"egress\":[\"a.test\"]}}",
			 0644) == 0);
	CHECK(catalogue_says(d, up, "sandbox.egress[0]: \"a.test\" has no port"));
	unit_rmtree(d);
	return 0;
}

/* upstreams/fs.json, its tool w compensated by ref and the tools of
 * catalogue_compensation, is refused with want. */
static int comp_says(const char *d, const char *ref, const char *want)
{
	char text[512];

	snprintf(text, sizeof(text), STDIO "\"tools\":{\"list\":{\"authority\":\"read\","
		 "\"rename\":\"ls\"},\"peek\":{\"hide\":true},\"mv\":{\"rename\":\"move\"},"
		 "\"w\":{\"compensation\":{\"tool\":\"%s\"}}}}", ref);
	return unit_put(d, "upstreams/fs.json", text, 0644) == 0 &&
	       catalogue_says(d, "upstreams/fs.json: tools.w.compensation.tool: ", want);
}

/* A compensation names a write: an upstream's tool (one not declared is a
 * write) or a write contract. */
static int catalogue_compensation(void)
{
	char d[64], mkd[128];

	CHECK(unit_tmpdir(d, "upstream-comp") == 0);
	CHECK(mkdir(strcat(strcpy(mkd, d), "/upstreams"), 0700) == 0);
	CHECK(write_contract(d, "undo.json", "files.undo", "\"authority\":\"write\",\"dry_run\":"
			     "\"supported\",\"compensation\":{\"irreversible\":\"the undo\"}") == 0);
	CHECK(write_contract(d, "read.json", "files.read", READ) == 0);
	CHECK(unit_put(d, "upstreams/fs.json", STDIO "\"tools\":{\"read\":{\"authority\":"
			 "\"read\"},\"write\":{\"compensation\":{\"tool\":\"fs.restore\"}},"
			 "\"move\":{\"compensation\":{\"tool\":\"files.undo@1\"}}}}", 0644) == 0);
	CHECK(catalogue_says(d, NULL, NULL));
	CHECK(unit_put(d, "upstreams/fs.json", STDIO "\"tools\":{\"read\":{\"authority\":"
			 "\"read\"},\"write\":{\"compensation\":{\"tool\":\"fs.read\"}}}}",
			 0644) == 0);
	CHECK(catalogue_says(d, "tools.write.compensation.tool: fs.read is a read tool", "fs.json"));
	CHECK(unit_put(d, "upstreams/fs.json", STDIO "\"tools\":{\"write\":{\"compensation\":"
			 "{\"tool\":\"files.read\"}}}}", 0644) == 0);
	CHECK(catalogue_says(d, "tools.write.compensation.tool: files.read@1.0.0 is a read tool",
			     "fs.json"));
	CHECK(unit_put(d, "upstreams/fs.json", STDIO "\"tools\":{\"write\":{\"compensation\":"
			 "{\"tool\":\"nowhere\"}}}}", 0644) == 0);
	CHECK(catalogue_says(d, "tools.write.compensation.tool: tool 'nowhere': no such tool",
			     "fs.json"));
	/* in an upstream's namespace: one of its exposed, non-hidden writes */
	CHECK(unit_put(d, "upstreams/fs.json", STDIO "\"tools\":{\"list\":{\"authority\":"
			 "\"read\",\"rename\":\"ls\"},\"peek\":{\"hide\":true},\"mv\":{\"rename\":"
			 "\"move\"},\"w\":{\"compensation\":{\"tool\":\"fs.w\"}},\"u\":{\"compensation\":"
			 "{\"tool\":\"fs.move\"}},\"v\":{\"compensation\":{\"tool\":\"fs.other\"}}}}",
			 0644) == 0);
	CHECK(catalogue_says(d, NULL, NULL));
	CHECK(comp_says(d, "fs.list", "fs.list is a renamed tool's own name"));
	CHECK(comp_says(d, "fs.mv", "fs.mv is a renamed tool's own name"));
	CHECK(comp_says(d, "fs.ls", "fs.ls is a read tool"));
	CHECK(comp_says(d, "fs.peek", "fs.peek is a hidden tool"));
	CHECK(comp_says(d, "fs.no such@1", "the name is not a tool's"));
	CHECK(comp_says(d, "fs.", "the name is not a tool's"));
	unit_rmtree(d);
	return 0;
}

struct lines {
	int n;
	char text[16][512];
};

static void keep(const char *line, void *ctx)
{
	struct lines *l = ctx;

	if (l->n < 16)
		snprintf(l->text[l->n], sizeof(l->text[0]), "%s", line);
	l->n++;
}

/* lint reports every declaration's problem, each naming its file; the
 * gate carries a catalogue with upstreams as any other. */
static int lint_and_gate(void)
{
	struct lines lines = { 0 };
	struct tg_catalog *c, *first;
	struct tg_error err;
	struct tg_gate *g;
	size_t files, ups;
	char d[64], mkd[128];
	int problems;

	CHECK(unit_tmpdir(d, "upstream-lint") == 0);
	CHECK(mkdir(strcat(strcpy(mkd, d), "/upstreams"), 0700) == 0);
	CHECK(write_contract(d, "echo.json", "echo", READ) == 0);
	CHECK(write_contract(d, "x.json", "ok.x", READ) == 0);
	CHECK(unit_put(d, "upstreams/ok.json", HTTP "\"tools\":{\"x\":{}}}", 0644) == 0);
	CHECK(unit_put(d, "upstreams/a.json", STDIO "\"sandbox\":{\"mounts\":[{\"hots\":\"/\"}]}}",
			 0644) == 0);
	CHECK(unit_put(d, "upstreams/b.json", "{\"transport\":\"stdio\"}", 0644) == 0);
	problems = tg_catalog_lint(d, NULL, keep, &lines, &files, &ups, &err);
	CHECK(problems == 3 && files == 2 && ups == 3 && lines.n == 3);
	CHECK(strstr(lines.text[0], "upstreams/a.json: sandbox.mounts[0].hots: unknown field"));
	CHECK(strstr(lines.text[1], "upstreams/b.json: argv: required"));
	CHECK(strstr(lines.text[2], "tools.x: exposed as ok.x, the name of contract "));
	CHECK(unlink(strcat(strcpy(mkd, d), "/x.json")) == 0);
	CHECK(unlink(strcat(strcpy(mkd, d), "/upstreams/a.json")) == 0);
	CHECK(unlink(strcat(strcpy(mkd, d), "/upstreams/b.json")) == 0);
	CHECK(tg_catalog_lint(d, NULL, keep, &lines, &files, &ups, &err) == 0 && ups == 1);
	/* the gate takes it, and reloads it: upstreams are carried, not run */
	CHECK(tg_catalog_load_dir(d, NULL, &first, &err) == 0);
	CHECK(tg_gate_new(first, NULL, &g, &err) == 0);
	CHECK(tg_catalog_load_dir(d, NULL, &c, &err) == 0);
	CHECK(tg_gate_reload(g, c, &err) == 0);
	CHECK(tg_catalog_upstream_count(tg_gate_catalog(g)) == 1);
	tg_gate_free(g); /* frees c, the gate's since the reload */
	tg_catalog_free(first);
	unit_rmtree(d);
	return 0;
}

#define GHP "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"

/* What tg_upstream_lint says of text (a declaration), into *l. -1 when
 * it does not load. */
static int lint_of(const char *text, struct lines *l)
{
	struct tg_upstream *u;
	struct tg_error err;
	int n;

	memset(l, 0, sizeof(*l));
	if (parse(text, &u, &err) < 0) {
		fprintf(stderr, "%s\n  refused: %s\n", text, err.msg);
		return -1;
	}
	n = tg_upstream_lint(u, keep, l);
	tg_upstream_free(u);
	return n == l->n ? n : -1;
}

/* What loads but fails at its start, or shows a secret: a launcher that
 * fetches its package in a sandbox without a network; a secret typed
 * into argv, env or the url, named by the redactor's rule, never quoted. */
static int lint_mistakes(void)
{
	struct lines l;
	struct tg_error err;
	size_t files, ups;
	char d[64], mkd[128];
	int i;

	CHECK(lint_of("{\"transport\":\"stdio\",\"argv\":[\"npx\",\"-y\",\"@x/server\"]}",
		      &l) == 1);
	CHECK(strcmp(l.text[0], "argv[0]: npx fetches the server at each start, and the sandbox "
		     "has no network: install the package and name its entry point "
		     "(docs/UPSTREAMS.md, \"Examples\")") == 0);
	CHECK(lint_of("{\"transport\":\"stdio\",\"argv\":[\"/usr/local/bin/uvx\",\"x\"]}",
		      &l) == 1 && strncmp(l.text[0], "argv[0]: uvx fetches", 20) == 0);
	CHECK(lint_of("{\"transport\":\"stdio\",\"argv\":[\"npm\",\"exec\",\"x\"]}", &l) == 1 &&
	      strncmp(l.text[0], "argv[0]: npm exec fetches", 25) == 0);
	/* after env and its settings, named where it stands */
	CHECK(lint_of("{\"transport\":\"stdio\",\"argv\":[\"/usr/bin/env\",\"-i\",\"A=1\","
		      "\"npx\",\"x\"]}", &l) == 1 && strncmp(l.text[0], "argv[3]: npx fetches", 20) == 0);
	CHECK(lint_of("{\"transport\":\"stdio\",\"argv\":[\"uv\",\"tool\",\"run\",\"x\"]}", &l) == 1 &&
	      strncmp(l.text[0], "argv[0]: uv tool fetches", 24) == 0);
	CHECK(lint_of("{\"transport\":\"stdio\",\"argv\":[\"env\",\"A=1\"]}", &l) == 0);
	/* an installed server, npm for something else, or a sandbox given
	 * egress (which may name a registry): nothing said */
	CHECK(lint_of("{\"transport\":\"stdio\",\"argv\":[\"node\",\"/opt/x.js\"],"
		      "\"env\":{\"NODE_ENV\":\"production\",\"LOG_LEVEL\":\"debug\"}}", &l) == 0);
	CHECK(lint_of("{\"transport\":\"stdio\",\"argv\":[\"npm\",\"start\"]}", &l) == 0);
	CHECK(lint_of("{\"transport\":\"stdio\",\"argv\":[\"npx\",\"x\"],\"sandbox\":"
		      "{\"egress\":[\"registry.npmjs.org:443\"]}}", &l) == 0);
	/* secrets: the rule named, the value never */
	CHECK(lint_of("{\"transport\":\"stdio\",\"argv\":[\"srv\",\"--token=" GHP "\"],"
		      "\"env\":{\"GITHUB_TOKEN\":\"" GHP "\",\"NODE_ENV\":\"production\","
		      "\"DB_PASSWORD\":\"S3cr3t!pa55\"}}", &l) == 3);
	CHECK(strcmp(l.text[0], "argv[1]: holds what looks like a secret (github_token): put it "
		     "in a 0600 file and name it in credentials.env") == 0);
	CHECK(strcmp(l.text[1], "env.GITHUB_TOKEN: holds what looks like a secret (github_token): "
		     "put it in a 0600 file and name it in credentials.env") == 0);
	CHECK(strncmp(l.text[2], "env.DB_PASSWORD: holds what looks like a secret (", 49) == 0);
	for (i = 0; i < l.n; i++)
		CHECK(!strstr(l.text[i], "ghp_") && !strstr(l.text[i], "S3cr3t"));
	CHECK(lint_of("{\"transport\":\"http\",\"url\":\"https://h.test/mcp?token="
		      "abcdef0123456789abcdef0123456789\"}", &l) == 1);
	CHECK(strncmp(l.text[0], "url: holds what looks like a secret (", 37) == 0 &&
	      strstr(l.text[0], "): put it in a 0600 file and name it in credentials.header") &&
	      !strstr(l.text[0], "abcdef"));
	CHECK(lint_of(HTTP "\"tools\":{}}", &l) == 0);

	/* catalog lint counts them, each naming its file */
	CHECK(unit_tmpdir(d, "upstream-lintm") == 0);
	CHECK(mkdir(strcat(strcpy(mkd, d), "/upstreams"), 0700) == 0);
	CHECK(unit_put(d, "upstreams/gh.json", "{\"transport\":\"stdio\",\"argv\":[\"npx\","
		       "\"-y\",\"@x/server-github\"],\"env\":{\"GITHUB_TOKEN\":\"" GHP "\"}}",
		       0644) == 0);
	memset(&l, 0, sizeof(l));
	CHECK(tg_catalog_lint(d, NULL, keep, &l, &files, &ups, &err) == 2 && ups == 1 && l.n == 2);
	CHECK(strstr(l.text[0], "upstreams/gh.json: argv[0]: npx fetches the server"));
	CHECK(strstr(l.text[1], "upstreams/gh.json: env.GITHUB_TOKEN: holds what looks like a "
		     "secret (github_token)"));
	unit_rmtree(d);
	return 0;
}

/* A declared tool the listing lacks is named, with the nearest listed
 * name when it is close, a name that is a tool's only. */
static int listing_mistakes(void)
{
	static const char *const listed[] = {
		"get-env", "echo", NULL, "la", "ab\x1b[cdef", "abcfed", "write_file",
		"long_tool_name_for_the_band_check", "a_forty_character_tool_name_0123456789ab",
	};
	struct tg_upstream *u;
	struct tg_error err;
	struct lines l = { 0 };

	CHECK(parse(STDIO "\"tools\":{\"get_env\":{\"hide\":true},\"ech0\":{\"authority\":"
		    "\"read\"},\"echo\":{\"authority\":\"read\"},\"ls\":{},\"abcdef\":{},"
		    "\"hgfedcba\":{},\"writefile\":{},\"zzzq\":{},"
		    "\"xlong_tool_name_for_the_band_check\":{},"
		    "\"a_forty_character_tool_name_0123456789xy\":{},"
		    "\"a_forty_character_tool_name_0123456xyz89ab\":{}}}", &u, &err) == 0);
	CHECK(tg_upstream_check_listing(u, listed, sizeof(listed) / sizeof(listed[0]), keep,
					&l) == 10 && l.n == 10);
	CHECK(strcmp(l.text[0], "tools.get_env: declared, but the server lists no such tool "
		     "(did you mean get-env?)") == 0);
	CHECK(strcmp(l.text[1], "tools.ech0: declared, but the server lists no such tool "
		     "(did you mean echo?)") == 0);
	/* too short for an edit to be a slip; the control character's name
	 * is never offered; two edits of six is near, of eight too far */
	CHECK(strcmp(l.text[2], "tools.ls: declared, but the server lists no such tool") == 0);
	CHECK(strcmp(l.text[3], "tools.abcdef: declared, but the server lists no such tool "
		     "(did you mean abcfed?)") == 0);
	CHECK(strcmp(l.text[4], "tools.hgfedcba: declared, but the server lists no such tool") == 0);
	CHECK(strcmp(l.text[5], "tools.writefile: declared, but the server lists no such tool "
		     "(did you mean write_file?)") == 0);
	CHECK(strcmp(l.text[6], "tools.zzzq: declared, but the server lists no such tool") == 0);
	/* long names, only the band of the diagonal computed: an edit at
	 * the start, two at the end, three in the middle (too far) */
	CHECK(strcmp(l.text[7], "tools.xlong_tool_name_for_the_band_check: declared, but the "
		     "server lists no such tool (did you mean long_tool_name_for_the_band_check?)")
	      == 0);
	CHECK(strcmp(l.text[8], "tools.a_forty_character_tool_name_0123456789xy: declared, but "
		     "the server lists no such tool (did you mean "
		     "a_forty_character_tool_name_0123456789ab?)") == 0);
	CHECK(strcmp(l.text[9], "tools.a_forty_character_tool_name_0123456xyz89ab: declared, but "
		     "the server lists no such tool") == 0);
	/* all listed: nothing */
	memset(&l, 0, sizeof(l));
	CHECK(tg_upstream_check_listing(u, listed, 2, keep, &l) == 10);
	tg_upstream_free(u);
	CHECK(parse(STDIO "\"tools\":{\"echo\":{}}}", &u, &err) == 0);
	memset(&l, 0, sizeof(l));
	CHECK(tg_upstream_check_listing(u, listed, 2, keep, &l) == 0 && l.n == 0);
	tg_upstream_free(u);
	return 0;
}

/* A writable mount the sandbox's user cannot write is said, with the
 * chown that lets it (nobody for a root caller, the caller itself
 * otherwise), and no more once it can. */
static int mount_mistakes(void)
{
	unsigned uid = geteuid() == 0 ? 65534 : (unsigned)geteuid();
	unsigned gid = geteuid() == 0 ? 65534 : (unsigned)getegid();
	struct tg_sandbox_spec *spec;
	struct tg_upstream *u;
	struct tg_error err;
	struct lines l = { 0 };
	char d[64], text[512], want[512], why[256];

	CHECK(unit_tmpdir(d, "upstream-mount") == 0);
	CHECK(chmod(d, geteuid() == 0 ? 0755 : 0555) == 0);
	snprintf(text, sizeof(text), STDIO "\"sandbox\":{\"mounts\":[{\"host\":\"/usr\"},"
		 "{\"host\":\"%s\",\"inside\":\"/data\",\"writable\":true}]}}", d);
	CHECK(parse(text, &u, &err) == 0);
	CHECK(tg_upstream_check_mounts(u, keep, &l) == 1 && l.n == 1);
	snprintf(want, sizeof(want), "sandbox.mounts[1]: writable, but %s is not writable by the "
		 "sandbox's user (uid %u: chown %u:%u %s)", d, uid, uid, gid, d);
	CHECK(strcmp(l.text[0], want) == 0);
	if (geteuid() == 0) {
		/* a spec's own host ids are the ones asked about */
		CHECK(chown(d, 4321, 4321) == 0);
		CHECK(tg_sandbox_bind_writable(NULL, d, why, sizeof(why)) == 0);
		CHECK((spec = unit_spec()) != NULL);
		CHECK(tg_sandbox_spec_set_host_id(spec, 4321, 4321, &err) == 0);
		CHECK(tg_sandbox_bind_writable(spec, d, why, sizeof(why)) == 1);
		tg_sandbox_spec_free(spec);
		CHECK(chown(d, uid, gid) == 0);
	} else {
		CHECK(chmod(d, 0755) == 0);
	}
	memset(&l, 0, sizeof(l));
	CHECK(tg_upstream_check_mounts(u, keep, &l) == 0 && l.n == 0);
	CHECK(tg_sandbox_bind_writable(NULL, "/no/such/dir", why, sizeof(why)) == -1 &&
	      strstr(why, "/no/such/dir: No such file"));
	tg_upstream_free(u);
	if (geteuid() == 0)
		CHECK(chown(d, 0, 0) == 0);
	unit_rmtree(d);
	return 0;
}

const struct unit_test upstream_tests[] = {
	{ "upstream/lint_mistakes", lint_mistakes },
	{ "upstream/listing_mistakes", listing_mistakes },
	{ "upstream/mount_mistakes", mount_mistakes },
	{ "upstream/stdio_loads", stdio_loads },
	{ "upstream/http_loads", http_loads },
	{ "upstream/refusals", refusals },
	{ "upstream/tool_refusals", tool_refusals },
	{ "upstream/credential_paths", credential_paths },
	{ "upstream/reserved_headers", reserved_headers },
	{ "upstream/field_escapes", field_escapes },
	{ "upstream/compensation_bounds", compensation_bounds },
	{ "upstream/catalogue_namespace", catalogue_namespace },
	{ "upstream/catalogue_compensation", catalogue_compensation },
	{ "upstream/lint_and_gate", lint_and_gate },
	UNIT_TESTS_END,
};

// A 2026-07-28-era MCP server (npm @modelcontextprotocol/server 2.x, which
// tests/mcp/run.sh installs) for testing toolgate's CLIENT side of that era:
// an upstream that answers server/discover, wants the per-request _meta
// envelope, asks for input the multi round-trip way (input_required with
// inputRequests and requestState, fulfilled by the client and retried) and
// delivers tools/list_changed on a subscriptions/listen stream: the upstream
// of tests/mcp/upstreams2026.mjs.
//
// Usage: node server2026.mjs stdio [--only2026]
//        node server2026.mjs http PORT [--only2026]
// http serves Streamable HTTP at http://127.0.0.1:PORT/mcp (127.0.0.1 only;
// PORT 0 = any) and prints the bound port on stdout, one line, once
// listening. Without --only2026 the SDK's entries serve both eras: an
// `initialize` opens a 2025-era connection (stdio) or is answered by a
// stateless 2025-era instance (http), and a tool asking for input then gets
// its answer from a real elicitation/create request (the SDK's legacy shim).
// (Over http a 2025-era client cannot be asked: the stateless legacy
// instances have no way back to it, so confirm answers isError there.)
// With --only2026 (legacy: "reject" on both entries) a 2025-era request,
// `initialize` included, is refused with the unsupported-protocol-version
// error (-32022; HTTP 400) and only envelope-carrying requests are served.
// Over http the SDK also wants the MCP-Protocol-Version, Mcp-Method and
// (tools/call) Mcp-Name headers to match the body (else -32020, HTTP 400),
// and a call is cancelled by closing its response: a notifications/cancelled
// POST reaches a fresh instance, not the one running the call.
//
// Tools: echo {text} answers the text; confirm {message} asks the client a
// form elicitation (a boolean field "ok") and answers "answered: " + the
// JSON of the response; progress {n} sends n progress notifications (when
// the request carries a progressToken) then answers; slow {ms} answers after
// ms, or, cancelled, logs "cancelled" on stderr; change changes echo's
// description and sends notifications/tools/list_changed to subscribers.
import http from "node:http";
import {
	McpServer, createMcpHandler, fromJsonSchema, inputRequired,
	hostHeaderValidationResponse, localhostAllowedHostnames,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

const args = process.argv.slice(2);
const only2026 = args.includes("--only2026");
const [mode, portArg] = args.filter((a) => a !== "--only2026");
if (mode !== "stdio" && !(mode === "http" && /^\d+$/.test(portArg ?? ""))) {
	console.error("usage: node server2026.mjs stdio|http PORT [--only2026]");
	process.exit(2);
}

// State outlives one server instance: over http the factory builds an
// instance per request, over stdio one per connection (and one for the
// discover probe), so what `change` changed lives here.
let changes = 0;
const echoDescription = () => (changes ? `Echoes the text (changed ${changes} times)` : "Echoes the text");
// How a change reaches subscriptions/listen: over stdio the pinned
// instance's own list_changed is routed onto the connection's subscriptions
// by serveStdio; over http the instances are per request, so the handler's
// notify (its event bus) carries it to every open listen stream.
let httpNotify;

const obj = (properties, required) => fromJsonSchema({ type: "object", properties, required });
const text = (t) => ({ content: [{ type: "text", text: t }] });
const sleep = (ms, signal) => new Promise((resolve, reject) => {
	const t = setTimeout(resolve, ms);
	signal.addEventListener("abort", () => { clearTimeout(t); reject(signal.reason ?? new Error("aborted")); },
		{ once: true });
});

function build() {
	const server = new McpServer({ name: "toolgate-test-2026", version: "1.0.0" });
	const echo = server.registerTool("echo", {
		description: echoDescription(),
		inputSchema: obj({ text: { type: "string" } }, ["text"]),
	}, async ({ text: t }) => text(t));
	server.registerTool("confirm", {
		description: "Asks the client to confirm (form elicitation, boolean ok), answers with its response",
		inputSchema: obj({ message: { type: "string" } }, ["message"]),
	}, async ({ message }, ctx) => {
		const answer = ctx.mcpReq.inputResponses?.confirm;
		if (answer === undefined) {
			// requestState is plain text here: it steers nothing (a test
			// peer), it is only there so the retry's echo can be seen
			return inputRequired({
				inputRequests: {
					confirm: inputRequired.elicit({
						message,
						requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
					}),
				},
				requestState: `confirm:${message}`,
			});
		}
		return text(`answered: ${JSON.stringify(answer)}`);
	});
	server.registerTool("progress", {
		description: "Sends n progress notifications, then answers",
		inputSchema: obj({ n: { type: "integer", minimum: 0 } }, ["n"]),
	}, async ({ n }, ctx) => {
		const token = ctx.mcpReq._meta?.progressToken;
		for (let i = 1; i <= n && token !== undefined; i++)
			await ctx.mcpReq.notify({ method: "notifications/progress",
				params: { progressToken: token, progress: i, total: n, message: `step ${i}` } });
		// the SDK clients (1.x and 2.4.0) can drop a progress notification
		// read in the same chunk as the result; a pause keeps counts exact
		if (n && token !== undefined)
			await new Promise((resolve) => setTimeout(resolve, 20));
		return text(`progressed ${n}`);
	});
	server.registerTool("slow", {
		description: "Answers after ms milliseconds",
		inputSchema: obj({ ms: { type: "integer", minimum: 0 } }, ["ms"]),
	}, async ({ ms }, ctx) => {
		try {
			await sleep(ms, ctx.mcpReq.signal);
		} catch (e) {
			console.error("cancelled");
			throw e;
		}
		return text(`slept ${ms}`);
	});
	server.registerTool("change", {
		description: "Changes echo's description and announces tools/list_changed",
		inputSchema: obj({}, []),
	}, async () => {
		changes++;
		if (httpNotify)
			httpNotify.toolsChanged();
		else
			echo.update({ description: echoDescription() }); // sends list_changed itself
		return text(echoDescription());
	});
	return server;
}

const onerror = (e) => console.error(`server2026: ${e.message}`);

if (mode === "stdio") {
	serveStdio(build, { legacy: only2026 ? "reject" : "serve", onerror });
} else {
	const handler = createMcpHandler(build, { legacy: only2026 ? "reject" : "stateless", onerror });
	httpNotify = handler.notify;
	const httpServer = http.createServer(async (req, res) => {
		// the client closing its side is how a request is cancelled over
		// http: the abort reaches the handler through Request.signal
		const abort = new AbortController();
		res.on("close", () => { if (!res.writableFinished) abort.abort(); });
		const chunks = [];
		for await (const c of req)
			chunks.push(c);
		const headers = new Headers();
		for (const [k, v] of Object.entries(req.headers))
			headers.set(k, Array.isArray(v) ? v.join(", ") : v);
		const request = new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url}`, {
			method: req.method, headers, signal: abort.signal,
			body: req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks),
		});
		let response;
		if (new URL(request.url).pathname !== "/mcp")
			response = new Response("not found\n", { status: 404 });
		else
			response = hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
				await handler.fetch(request);
		res.writeHead(response.status, Object.fromEntries(response.headers));
		res.flushHeaders();
		if (!response.body) { res.end(); return; }
		const reader = response.body.getReader();
		res.on("close", () => reader.cancel().catch(() => {}));
		try {
			for (;;) {
				const { done, value } = await reader.read();
				if (done) break;
				res.write(value);
			}
		} catch { /* the client went away */ }
		res.end();
	});
	httpServer.listen(Number(portArg), "127.0.0.1", () => console.log(httpServer.address().port));
}

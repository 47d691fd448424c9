// Upstreams: real MCP servers from npm behind `toolgate serve`, driven by
// the official TypeScript SDK's 1.x client, over stdio and Streamable HTTP.
// Three upstreams in a temporary catalogue (docs/UPSTREAMS.md, "Examples"):
//   everything      @modelcontextprotocol/server-everything over stdio, in
//                   the sandbox, its code bound read-only;
//   everythinghttp  the same package started here as a Streamable HTTP
//                   server on a loopback port, reached through the egress
//                   proxy;
//   files           @modelcontextprotocol/server-filesystem over stdio, one
//                   host directory bound read-write, its allowed directory
//                   the parent of that one, where a secret lies on the host
//                   but not in the sandbox.
// Prints "ok - mcp-upstreams/MODE/NAME" or "not ok - ...", and one "#"
// line a mode with how long serve took to list each upstream.
// Usage: node upstreams.mjs TOOLGATE-BINARY (run.sh installs the servers)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serveHttp, tap } from "./harness.mjs";

const [toolgate] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, "node_modules");
const pkg = (name) => join(modules, "@modelcontextprotocol", name, "dist", "index.js");
let mode = "setup";
const { check, failures } = tap(() => `mcp-upstreams/${mode}`);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (r) => (r.content || []).map((c) => c.text || "").join("");
const code = (r) => r._meta?.["dev.toolgate/error"]?.code;

const tmp = mkdtempSync("/tmp/tg-upstreams.");
const children = [];
process.on("exit", () => {
	for (const c of children) c.kill("SIGKILL");
	rmSync(tmp, { recursive: true, force: true });
});

// The filesystem server's allowed directory is files/, but only
// files/bound is bound (at the same path): files/secret.txt is on the host
// and inside the server's allowed directory, yet not in its sandbox.
const files = join(tmp, "files");
const bound = join(files, "bound");
const secret = `upstream-secret-${process.pid}-${Date.now()}`;
mkdirSync(bound, { recursive: true });
// a root caller's sandbox writes as the host's nobody (docs/SANDBOX.md,
// "Identity"): the bound directory is nobody's, as an operator would make it
if (process.getuid() === 0) chownSync(bound, 65534, 65534);
writeFileSync(join(bound, "hello.txt"), "hello from the bound directory\n");
writeFileSync(join(files, "secret.txt"), secret + "\n");

// A free loopback port for the HTTP server. server-everything takes only
// PORT and would listen on every address: a listen on a bare port is
// made one on 127.0.0.1 before it loads (tests touch loopback only).
const loopback = "data:text/javascript," + encodeURIComponent(`import net from "node:net";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (port, ...rest) {
	return /^[0-9]+$/.test(String(port)) ? listen.call(this, Number(port), "127.0.0.1", ...rest)
		: listen.call(this, port, ...rest);
};`);
const port = await new Promise((resolve, reject) => {
	const s = createServer();
	s.on("error", reject);
	s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); });
});
const everythingHttp = spawn("/usr/bin/node", ["--import", loopback, pkg("server-everything"), "streamableHttp"], {
	env: { PATH: "/usr/bin:/bin", PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"],
});
children.push(everythingHttp);
const httpUp = new Promise((resolve, reject) => {
	let err = "";
	everythingHttp.stderr.on("data", (d) => {
		err += d;
		if (/listening on port/.test(err)) resolve();
	});
	everythingHttp.on("exit", (c) => reject(new Error(`server-everything exited ${c}: ${err}`)));
});

const catalog = join(tmp, "catalog");
mkdirSync(join(catalog, "upstreams"), { recursive: true });
mkdirSync(join(tmp, "workspace"));
const declare = (name, decl) =>
	writeFileSync(join(catalog, "upstreams", `${name}.json`), JSON.stringify(decl, null, 2));
const reads = (...names) => Object.fromEntries(names.map((n) => [n, { authority: "read" }]));
const everythingTools = reads("echo", "trigger-long-running-operation");
declare("everything", {
	transport: "stdio",
	argv: ["/usr/bin/node", pkg("server-everything"), "stdio"],
	sandbox: { mounts: [{ host: modules }] },
	// its sampling tool asks the agent's model: relayed, as declared
	relay: ["sampling"],
	tools: { ...everythingTools, ...reads("trigger-sampling-request") },
});
declare("everythinghttp", {
	transport: "http",
	url: `http://127.0.0.1:${port}/mcp`,
	tools: everythingTools,
});
declare("files", {
	transport: "stdio",
	argv: ["/usr/bin/node", pkg("server-filesystem"), files],
	sandbox: { mounts: [{ host: modules }, { host: bound, writable: true }] },
	tools: reads("read_text_file", "list_directory", "list_allowed_directories"),
});
const policy = join(tmp, "policy.json");
const agentScopes = ["everything.*:read", "everythinghttp.*:read", "files.*:read", "files.write_file:write"];
// a held write is answered at once (writes.wait 0): the test approves it itself
writeFileSync(policy, JSON.stringify({ principals: {
	"agent-1": { scopes: agentScopes },
	alice: { scopes: ["files.*:approve"] },
}, writes: { wait: "0" } }));

async function run(serveMode) {
	mode = serveMode;
	const state = join(tmp, `state-${mode}`);
	const serve = ["serve", "--catalog", catalog, "--workspace", join(tmp, "workspace"),
		"--policy", policy, "--state", state];
	const issue = (principal, scopes) => execFileSync(toolgate, ["token", "issue", "--state", state,
		"--policy", policy, "--principal", principal, ...scopes.flatMap((s) => ["--scope", s])])
		.toString().trim();
	let stderr = "", serverStderr = () => stderr;
	let transport, httpServer;
	const t0 = Date.now();
	if (mode === "http") {
		const token = issue("agent-1", agentScopes);
		const { server, url, stderr: err } = await serveHttp(toolgate, serve, "ignore");
		children.push(server);
		serverStderr = err;
		transport = new StreamableHTTPClientTransport(new URL(url),
			{ requestInit: { headers: { Authorization: `Bearer ${token}` } } });
		httpServer = server;
	} else {
		transport = new StdioClientTransport({ command: toolgate,
			args: ["serve", "--stdio", ...serve.slice(1), "--principal", "agent-1"], stderr: "pipe" });
		transport.stderr.on("data", (d) => { stderr += d; });
	}
	const client = new Client({ name: "toolgate-upstreams", version: "1.0.0" },
		{ capabilities: { sampling: {} } });
	// the agent's model, as far as server-everything can tell
	const sampled = [];
	client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
		sampled.push(req.params);
		return { role: "assistant", model: "test-model",
			content: { type: "text", text: "sampled by the agent's client" } };
	});
	await client.connect(transport);
	// what toolgate sent, in order: the SDK's client hands a notification
	// to its handler a microtask later but a response at once, so a
	// progress notification that arrives with its call's answer is lost to
	// onprogress (typescript-sdk issue 2580); the wire says what was relayed
	const wire = [];
	const onmessage = transport.onmessage;
	transport.onmessage = (m, extra) => { wire.push(m); onmessage(m, extra); };
	const call = (name, args, opts, meta) =>
		client.callTool({ name, arguments: args, _meta: meta }, undefined, opts);

	// serve does not wait for its upstreams: each one's tools appear once
	// its server has listed them
	const listed = {};
	let tools = [];
	while (Date.now() - t0 < 15000 && Object.keys(listed).length < 3) {
		tools = (await client.listTools()).tools;
		for (const up of ["everything", "everythinghttp", "files"])
			if (!listed[up] && tools.some((t) => t.name.startsWith(`${up}.`)))
				listed[up] = Date.now() - t0;
		await sleep(50);
	}
	console.log(`# ${mode}: serve start to first listing: ` +
		Object.entries(listed).map(([u, ms]) => `${u} ${ms} ms`).join(", "));
	const names = tools.map((t) => t.name);
	const tool = (name) => tools.find((t) => t.name === name);

	await check("tools_list_namespaced", () => {
		const want = ["everything.echo", "everything.trigger-long-running-operation",
			"everythinghttp.echo", "everythinghttp.trigger-long-running-operation",
			"files.read_text_file", "files.write_file", "files.list_allowed_directories"];
		const missing = want.filter((n) => !names.includes(n));
		if (missing.length) return `missing ${missing.join(",")} of ${names.join(",")}`;
		// every tool is an upstream's, under its namespace
		if (!names.every((n) => /^(everything|everythinghttp|files)\./.test(n))) return names.join(",");
		// what it may do is the declaration's: echo read, write_file (undeclared) a write
		return (tool("everything.echo").annotations.readOnlyHint === true &&
			tool("files.write_file").annotations.readOnlyHint === false &&
			tool("files.write_file").annotations.destructiveHint === true) ||
			JSON.stringify([tool("everything.echo").annotations, tool("files.write_file").annotations]);
	});
	for (const up of ["everything", "everythinghttp"]) {
		await check(`${up}_echo`, async () => {
			const r = await call(`${up}.echo`, { message: `hello ${up}` });
			return (!r.isError && text(r) === `Echo: hello ${up}`) || JSON.stringify(r);
		});
		await check(`${up}_progress_relayed`, async () => {
			const seen = [], from = wire.length;
			const r = await call(`${up}.trigger-long-running-operation`, { duration: 0.8, steps: 4 },
				{ onprogress: (p) => seen.push(p) });
			const got = wire.slice(from);
			const progress = (m) => m.method === "notifications/progress";
			const steps = got.filter(progress).map((m) => `${m.params.progress}/${m.params.total}`);
			// each step, in order, before the answer; the SDK saw them but
			// perhaps the last
			return (!r.isError && /completed/.test(text(r)) && steps.join(",") === "1/4,2/4,3/4,4/4" &&
				got.findLastIndex(progress) < got.findIndex((m) => m.result) && seen.length >= 3) ||
				JSON.stringify([r, steps, seen.length]);
		});
	}
	await check("everything_sampling_relayed", async () => {
		const from = sampled.length;
		const r = await call("everything.trigger-sampling-request", { prompt: "hi", maxTokens: 5 });
		const asked = sampled.slice(from);
		return (!r.isError && /sampled by the agent's client/.test(text(r)) && asked.length === 1 &&
			/hi/.test(JSON.stringify(asked[0].messages)) && asked[0].includeContext === undefined) ||
			JSON.stringify([r, asked]);
	});
	await check("everything_cancel_is_prompt", async () => {
		const abort = new AbortController();
		const seen = [];
		let t = 0;
		// aborted at its first progress (at 0.5 s): it runs upstream by then
		const pending = call("everything.trigger-long-running-operation", { duration: 30, steps: 60 },
			{ signal: abort.signal, onprogress: (p) => { seen.push(p); t = Date.now(); abort.abort(); } });
		let why = "not cancelled";
		try {
			await pending;
		} catch (e) {
			why = /abort/i.test(String(e && (e.name + e.message))) || String(e);
		}
		const ms = Date.now() - t;
		if (why !== true) return why;
		if (ms > 2000 || seen.length !== 1) return `took ${ms} ms, ${seen.length} progress`;
		// the gateway is free at once, and the same server answers the next call
		const r = await call("everything.echo", { message: "after" });
		return (!r.isError && text(r) === "Echo: after" && Date.now() - t < 4000) || JSON.stringify(r);
	});

	const target = join(bound, `written-${mode}.txt`);
	const key = { "dev.toolgate/idempotencyKey": `write-${mode}` };
	let ticket;
	await check("files_write_held_for_approval", async () => {
		const r = await call("files.write_file", { path: target, content: "written" }, undefined, key);
		ticket = r._meta?.["dev.toolgate/error"]?.ticket;
		return (r.isError && code(r) === "awaiting_approval" && typeof ticket === "string" &&
			!existsSync(target)) || JSON.stringify(r);
	});
	if (mode === "stdio") {
		// the check above can fail: once approved, the retry writes through
		// the bound directory onto the host
		await check("files_write_once_approved", async () => {
			const alice = issue("alice", ["files.*:approve"]);
			execFileSync(toolgate, ["approvals", "approve", ticket, "--state", state, "--policy", policy,
				"--token", alice], { stdio: "ignore" });
			const r = await call("files.write_file", { path: target, content: "written" }, undefined, key);
			return (!r.isError && existsSync(target) && readFileSync(target, "utf8") === "written") ||
				JSON.stringify(r);
		});
	}
	await check("files_read_bound", async () => {
		const r = await call("files.read_text_file", { path: join(bound, "hello.txt") });
		return (!r.isError && text(r) === "hello from the bound directory\n") || JSON.stringify(r);
	});
	await check("files_secret_not_in_sandbox", async () => {
		// the server allows its parent directory (so its own check passes),
		// but the sandbox has no such file: ENOENT, not "Access denied"
		const allowed = await call("files.list_allowed_directories", {});
		const r = await call("files.read_text_file", { path: join(files, "secret.txt") });
		const all = JSON.stringify(r);
		return (text(allowed).includes(files) && r.isError && /ENOENT|no such file/i.test(all) &&
			!/denied|outside/i.test(all) && !all.includes(secret)) || JSON.stringify([allowed, r]);
	});

	await client.close();
	if (httpServer)
		await new Promise((resolve) => { httpServer.on("exit", resolve); httpServer.kill("SIGTERM"); });
	// its stderr has the servers' own lines (the check can fail), not the secret
	await check("secret_nowhere_in_the_log", () =>
		(/upstream files: Secure MCP Filesystem Server/.test(serverStderr()) &&
			!serverStderr().includes(secret)) || serverStderr().slice(0, 400));
	await check("recorded", () => {
		const calls = readFileSync(join(state, "audit.log"), "utf8").trim().split("\n")
			.map((l) => JSON.parse(l)).filter((l) => l.kind === "call");
		const outcome = (tool) => calls.filter((c) => c.tool === tool).map((c) => c.outcome).join(",");
		// the gateway ended the aborted call at once (the SDK's promise
		// rejects at the abort whatever the gateway does): recorded then
		const cancelled = calls.find((c) => c.outcome === "cancelled");
		if (!cancelled || cancelled.duration_us > 2500000) return JSON.stringify(cancelled);
		console.log(`# ${mode}: the aborted call recorded cancelled after ` +
			`${Math.round(cancelled.duration_us / 1000)} ms (aborted at 500)`);
		const want = { "everything.trigger-long-running-operation": "ok,cancelled",
			"files.write_file": mode === "stdio" ? "held,ok" : "held",
			"files.read_text_file": "ok,tool_error" };
		return Object.entries(want).every(([t, o]) => outcome(t) === o) ||
			JSON.stringify(Object.keys(want).map(outcome));
	});
	console.log(`# ${mode}: ${Date.now() - t0} ms`);
}

const start = Date.now();
await httpUp;
for (const m of ["stdio", "http"]) await run(m);
console.log(`# mcp-upstreams: ${Date.now() - start} ms`);
process.exit(failures() ? 1 : 0);

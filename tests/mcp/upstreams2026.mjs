// Both protocol eras on both sides of the gateway (docs/UPSTREAMS.md,
// "Protocol eras"): a 2026-07-28-only upstream (server2026.mjs, on the
// official 2026 server package) behind `toolgate serve --stdio`, called by
// the 1.x SDK's client (the session era) and by the 2026 client package;
// and a 2025-era upstream (server-everything) asking its client for input
// behind the 2026 client, answered by multi round-trip requests.
//   modern      server2026.mjs over stdio in the sandbox, --only2026
//   modernhttp  server2026.mjs over Streamable HTTP on a loopback port,
//               --only2026, reached through the egress proxy
//   everything  server-everything over stdio, relaying elicitation, per_call
// Prints "ok - mcp-upstreams2026/CLIENT/NAME" or "not ok - ...".
// Usage: node upstreams2026.mjs TOOLGATE-BINARY (run.sh installs the packages)
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as Stdio1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as Client2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as Stdio2 } from "@modelcontextprotocol/client/stdio";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { tap } from "./harness.mjs";

const [toolgate] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, "node_modules");
const pkg = (name) => join(modules, "@modelcontextprotocol", name, "dist", "index.js");
let who = "setup";
const { check, failures } = tap(() => `mcp-upstreams2026/${who}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (r) => (r.content || []).map((c) => c.text || "").join("");

const tmp = mkdtempSync("/tmp/tg-upstreams2026.");
const children = [];
process.on("exit", () => {
	for (const c of children) c.kill("SIGKILL");
	rmSync(tmp, { recursive: true, force: true });
});

// the HTTP server: it says its port once listening
const httpServer = spawn("/usr/bin/node", [join(here, "server2026.mjs"), "http", "0", "--only2026"],
	{ env: { PATH: "/usr/bin:/bin" }, stdio: ["ignore", "pipe", "pipe"] });
children.push(httpServer);
let httpStderr = "";
httpServer.stderr.on("data", (d) => { httpStderr += d; });
const port = await new Promise((resolve, reject) => {
	let out = "";
	httpServer.stdout.on("data", (d) => {
		out += d;
		const m = /^(\d+)\s*$/m.exec(out);
		if (m) resolve(Number(m[1]));
	});
	httpServer.on("exit", (c) => reject(new Error(`server2026 http exited ${c}`)));
});

const catalog = join(tmp, "catalog");
mkdirSync(join(catalog, "upstreams"), { recursive: true });
const declare = (name, decl) =>
	writeFileSync(join(catalog, "upstreams", `${name}.json`), JSON.stringify(decl, null, 2));
const reads = (...names) => Object.fromEntries(names.map((n) => [n, { authority: "read" }]));
const modernTools = reads("echo", "confirm", "progress", "slow", "change");
declare("modern", {
	transport: "stdio",
	argv: ["/usr/bin/node", join(here, "server2026.mjs"), "stdio", "--only2026"],
	sandbox: { mounts: [{ host: here }] },
	protocol: "2026-07-28",
	relay: ["elicitation"],
	tools: modernTools,
});
declare("modernhttp", {
	transport: "http",
	url: `http://127.0.0.1:${port}/mcp`,
	protocol: "2026-07-28",
	relay: ["elicitation"],
	tools: modernTools,
});
// per_call, as docs/UPSTREAMS.md ("Relay") asks of a session-era server
// that asks its client: a call stopped to ask a 2026-07-28 client first
// leaves a long-lived one unable to tell whose its next request is
declare("everything", {
	transport: "stdio",
	argv: ["/usr/bin/node", pkg("server-everything"), "stdio"],
	sandbox: { mounts: [{ host: modules }] },
	per_call: true,
	relay: ["elicitation"],
	tools: reads("echo", "trigger-elicitation-request"),
});
const serve = ["serve", "--stdio", "--catalog", catalog, "--record", "/dev/null"];
let stderr = "";

// Tools listed once every upstream's server listed them.
async function listed(client, ups) {
	const t0 = Date.now();
	let tools = [];
	while (Date.now() - t0 < 20000) {
		tools = (await client.listTools()).tools;
		if (ups.every((u) => tools.some((t) => t.name.startsWith(`${u}.`)))) break;
		await sleep(100);
	}
	return tools;
}

// ---- the session era's client (SDK 1.x) ----
who = "session-client";
{
	const transport = new Stdio1({ command: toolgate, args: serve, stderr: "pipe" });
	transport.stderr.on("data", (d) => { stderr += d; });
	const client = new Client1({ name: "toolgate-2025", version: "1.0.0" },
		{ capabilities: { elicitation: {} } });
	const asked = [];
	client.setRequestHandler(ElicitRequestSchema, async (req) => {
		asked.push(req.params.message);
		return { action: "accept", content: { ok: true } };
	});
	let changed = 0;
	client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
	await client.connect(transport);
	const wire = [];
	const onmessage = transport.onmessage;
	transport.onmessage = (m, extra) => { wire.push(m); onmessage(m, extra); };
	const tools = await listed(client, ["modern", "modernhttp"]);
	for (const up of ["modern", "modernhttp"]) {
		await check(`${up}/listed`, () => ["echo", "confirm", "progress"].every((t) =>
			tools.some((x) => x.name === `${up}.${t}`)) || tools.map((t) => t.name).join(","));
		await check(`${up}/echo`, async () => {
			const r = await client.callTool({ name: `${up}.echo`, arguments: { text: "hi 2026" } });
			return text(r) === "hi 2026" || JSON.stringify(r);
		});
		// the upstream's input_required asked of this client as a request
		await check(`${up}/confirm`, async () => {
			const n = asked.length;
			const r = await client.callTool({ name: `${up}.confirm`, arguments: { message: `sure (${up})?` } });
			return (text(r).startsWith("answered: ") && JSON.parse(text(r).slice(10)).content.ok === true &&
				asked.length === n + 1 && asked[n] === `sure (${up})?`) || JSON.stringify([r, asked]);
		});
		await check(`${up}/progress`, async () => {
			const from = wire.length;
			const r = await client.callTool({ name: `${up}.progress`, arguments: { n: 3 } }, undefined,
				{ onprogress: () => {} });
			const got = wire.slice(from).filter((m) => m.method === "notifications/progress").length;
			return (!r.isError && got >= 1) || JSON.stringify([r, got]);
		});
		// closing the call: the server is told (stdio: notifications/cancelled;
		// HTTP: its stream closed), and its handler sees the abort
		await check(`${up}/cancel`, async () => {
			const said = () => (up === "modern" ? stderr : httpStderr);
			const from = said().length;
			const ac = new AbortController();
			setTimeout(() => ac.abort(), 500);
			await client.callTool({ name: `${up}.slow`, arguments: { ms: 8000 } }, undefined,
				{ signal: ac.signal }).then(() => "answered", (e) => e.name || "error");
			for (let i = 0; i < 50 && !/cancelled/.test(said().slice(from)); i++) await sleep(100);
			return /cancelled/.test(said().slice(from)) || said().slice(-600);
		});
	}
	// a change heard on the upstream's subscription (its own stream over
	// HTTP): withdrawn (pin strict); the two servers keep their own state
	for (const up of ["modern", "modernhttp"]) await check(`${up}/list_changed`, async () => {
		const before = changed;
		await client.callTool({ name: `${up}.change`, arguments: {} });
		let names = [];
		for (let i = 0; i < 50; i++) {
			names = (await client.listTools()).tools.map((t) => t.name);
			if (!names.includes(`${up}.echo`) && changed > before) break;
			await sleep(100);
		}
		return (!names.includes(`${up}.echo`) && changed > before) || JSON.stringify([changed, names]);
	});
	await client.close();
}

// ---- the 2026-07-28 client ----
who = "modern-client";
{
	const transport = new Stdio2({ command: toolgate, args: serve, stderr: "pipe" });
	transport.stderr.on("data", (d) => { stderr += d; });
	const client = new Client2({ name: "toolgate-2026", version: "1.0.0" }, {
		capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } });
	const asked = [];
	client.setRequestHandler("elicitation/create", async (req) => {
		asked.push(req.params.message);
		if (req.params.requestedSchema?.properties?.ok)
			return { action: "accept", content: { ok: true } };
		return { action: "decline" };
	});
	await client.connect(transport);
	await check("era", () => client.getServerVersion()?.name === "toolgate" || "not 2026");
	await listed(client, ["modernhttp", "everything"]);
	// 2026 upstream, 2026 client: toolgate's own MRTR round, the
	// upstream's answered from it when the call runs again
	await check("modernhttp/confirm", async () => {
		const n = asked.length;
		const r = await client.callTool({ name: "modernhttp.confirm", arguments: { message: "2026 both?" } });
		return (text(r).startsWith("answered: ") && asked.length === n + 1) || JSON.stringify([r, asked]);
	});
	// 2025 upstream (a request of its own), 2026 client (MRTR)
	await check("everything/elicitation", async () => {
		const n = asked.length;
		const r = await client.callTool({ name: "everything.trigger-elicitation-request", arguments: {} });
		return (/decline/i.test(text(r)) && asked.length === n + 1) || JSON.stringify([r, asked]);
	});
	await client.close();
}

// two serves list it once each, and the call runs it twice (the second
// round answered): a per_call server that says its tools changed as it
// starts is not listed again for it, at every start, forever
who = "setup";
await check("everything/starts", () => {
	const n = (stderr.match(/upstream everything: Starting/g) || []).length;
	return n <= 6 || `${n} starts`;
});
if (failures()) console.log(`# serve's stderr (last 2000 bytes):\n# ${stderr.slice(-2000).replace(/\n/g, "\n# ")}`);
process.exit(failures() ? 1 : 0);

// Interop: the official TypeScript MCP SDK's client (npm
// @modelcontextprotocol/sdk) against `toolgate serve` on the example
// catalogue, over stdio or Streamable HTTP (on loopback).
// Prints "ok - mcp-interop/TRANSPORT/NAME" or "not ok - ...".
// Usage: node client.mjs TOOLGATE-BINARY REPO-DIR RECORD-FILE stdio|http
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serveHttp, tap } from "./harness.mjs";
import { readFileSync } from "node:fs";

const [toolgate, repo, record, mode] = process.argv.slice(2);
const { check, failures } = tap(`mcp-interop/${mode}`);

const serveArgs = ["serve", "--catalog", `${repo}/examples/catalog`,
		   "--workspace", `${repo}/examples/workspace`, "--record", record];
let transport, server;
if (mode === "http") {
	let url;
	({ server, url } = await serveHttp(toolgate, serveArgs));
	transport = new StreamableHTTPClientTransport(new URL(url));
} else {
	transport = new StdioClientTransport({ command: toolgate, args: ["serve", "--stdio", ...serveArgs.slice(1)], stderr: "inherit" });
}
const client = new Client({ name: "toolgate-interop", version: "1.0.0" });
await client.connect(transport);
const call = (name, args, opts) => client.callTool({ name, arguments: args }, undefined, opts);
const text = (r) => r.content.map((c) => c.text).join("");

await check("initialize", () => {
	const v = client.getServerVersion();
	return v.name === "toolgate" && client.getServerCapabilities().tools ? true : JSON.stringify(v);
});
await check("ping", async () => JSON.stringify(await client.ping()) === "{}" || "no empty result");
await check("tools_list", async () => {
	const { tools } = await client.listTools();
	const names = tools.map((t) => t.name).sort().join(",");
	if (names !== "fs.delete,fs.read,fs.search,fs.undo,fs.write,plan.run,plan.undo,python.run,sql.execute,sql.query,sql.undo")
		return names;
	// the hints come from the contracts: reads are read-only, writes are not
	const writes = ["fs.delete", "fs.undo", "fs.write", "plan.run", "plan.undo", "sql.execute", "sql.undo"];
	return tools.every((t) => t.annotations.readOnlyHint === !writes.includes(t.name) && t.outputSchema) ||
		"hints";
});
await check("fs_read", async () => {
	const r = await call("fs.read", { path: "src/hello.py" });
	return (!r.isError && r.structuredContent.content.includes("def greet")) || JSON.stringify(r);
});
await check("fs_read_traversal_refused_as_anomalous", async () => {
	// a ".." path is an anomaly, held for review, and with no approval
	// gate to hold it (no --policy --state) refused before the tool runs;
	// the tool's own refusal (outside_workspace) is tests/integration/anomalies.py's
	const r = await call("fs.read", { path: "../../../etc/passwd" });
	return (r.isError && r._meta["dev.toolgate/error"].code === "anomalous_arguments") || JSON.stringify(r);
});
await check("fs_search", async () => {
	const r = await call("fs.search", { pattern: "TODO", glob: "*.py" });
	const m = r.structuredContent.matches;
	return (m.length === 1 && m[0].path === "src/hello.py" && m[0].line === 2) || JSON.stringify(r);
});
await check("sql_query", async () => {
	const r = await call("sql.query", { sql: "select name from customers where country = ? order by id", params: ["US"] });
	return JSON.stringify(r.structuredContent.rows) === '[["Grace"],["Margaret"]]' || JSON.stringify(r);
});
await check("sql_query_read_only_by_construction", async () => {
	const r = await call("sql.query", { sql: "DROP TABLE orders" });
	const after = await call("sql.query", { sql: "select count(*) from orders" });
	return (r.isError && /readonly/.test(text(r)) && after.structuredContent.rows[0][0] === 5) ||
		JSON.stringify([r, after]);
});
await check("python_run", async () => {
	const r = await call("python.run", { code: "print(sum(range(10)))" });
	return (r.structuredContent.stdout === "45\n" && r.structuredContent.exit_code === 0) || JSON.stringify(r);
});
await check("python_run_no_network", async () => {
	// loopback inside the sandbox's own network namespace: nothing listens,
	// and nothing leaves it
	const r = await call("python.run", { code: "import socket\ntry:\n socket.create_connection(('127.0.0.1', 9), timeout=2)\n print('connected')\nexcept OSError as e:\n print('refused', e.errno)" });
	return /refused/.test(r.structuredContent.stdout) || JSON.stringify(r);
});
await check("invalid_arguments_are_a_tool_error", async () => {
	const r = await call("sql.query", { sql: 42 });
	return (r.isError && /do not match the input schema/.test(text(r)) && /\/sql/.test(text(r))) || JSON.stringify(r);
});
await check("unknown_tool_is_a_protocol_error", async () => {
	try {
		await call("no.such.tool", {});
		return "no error";
	} catch (e) {
		return e.code === -32602 || `code ${e.code}`;
	}
});
await check("cancellation_kills_the_run", async () => {
	const t0 = Date.now();
	try {
		await call("python.run", { code: "while True: pass" }, { signal: AbortSignal.timeout(1000) });
		return "not cancelled";
	} catch (e) {
		// the server answers the next request at once: the call is gone
		await client.ping();
		return Date.now() - t0 < 5000 || `took ${Date.now() - t0} ms`;
	}
});
await check("resources", async () => {
	const { resources } = await client.listResources();
	const { resourceTemplates } = await client.listResourceTemplates();
	const r = await client.readResource({ uri: "data://shop/schema.sql" });
	const t = await client.readResource({ uri: "guide://toolgate/tools/sql.query" });
	return (resources.length === 1 && resourceTemplates.length === 1 &&
		/CREATE TABLE orders/.test(r.contents[0].text) && /A call of sql\.query goes/.test(t.contents[0].text)) ||
		JSON.stringify([resources, resourceTemplates, r, t]).slice(0, 400);
});
await check("resource_not_found", async () => {
	try {
		await client.readResource({ uri: "data://shop/nope" });
		return "no error";
	} catch (e) {
		return e.code === -32002 || `code ${e.code}`;
	}
});
await check("prompts", async () => {
	const { prompts } = await client.listPrompts();
	const p = await client.getPrompt({ name: "ask_the_shop", arguments: { question: "who spent most?" } });
	return (prompts.length === 1 && p.messages[0].content.resource.text.includes("CREATE TABLE") &&
		p.messages[1].content.text.includes("who spent most?")) || JSON.stringify(p).slice(0, 400);
});
await check("completion", async () => {
	const r = await client.complete({ ref: { type: "ref/prompt", name: "ask_the_shop" }, argument: { name: "country", value: "G" } });
	return JSON.stringify(r.completion.values) === '["GB"]' || JSON.stringify(r);
});
await client.close();
if (server) {
	await new Promise((resolve) => { server.on("exit", resolve); server.kill("SIGTERM"); });
}
await check("every_call_recorded", () => {
	const lines = readFileSync(record, "utf8").trim().split("\n").map((l) => JSON.parse(l))
		.filter((l) => l.kind === "call"); /* the loads are records too */
	const outcomes = lines.map((l) => l.outcome);
	return (lines.length >= 10 && outcomes.includes("ok") && outcomes.includes("tool_error") &&
		outcomes.includes("invalid_arguments") && lines.every((l) => l.principal === "local")) ||
		JSON.stringify(outcomes);
});
process.exit(failures() ? 1 : 0);

// docs/HOSTS.md, used as written: every configuration block of the page
// (```json host=... transport=...), with the test's binary, paths, URL and
// token in place of the examples', connected to with the TypeScript SDK's
// client as the host would: stdio blocks start `toolgate serve` with their
// command and args; HTTP blocks with a token send their headers over
// HTTPS; HTTP blocks for the provider's sign-in get the 401 that starts it.
//
// Usage: node hosts_config.mjs TOOLGATE REPO
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { tap } from "./harness.mjs";

const T = tap("hosts_config");
const [toolgate, repo, child] = process.argv.slice(2);
const run = (cmd, args) => execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"] }).toString();

// The page's blocks: [{ host, transport, auth, json }].
function blocks() {
	const page = fs.readFileSync(path.join(repo, "docs/HOSTS.md"), "utf8");
	const out = [];
	for (const m of page.matchAll(/```json ([^\n]*)\n([\s\S]*?)```/g)) {
		const attrs = Object.fromEntries(m[1].trim().split(/\s+/).map((a) => a.split("=")));
		out.push({ ...attrs, json: m[2] });
	}
	return out;
}

// The block's text with the test's values in place of the examples'.
function localise(text, t) {
	const swaps = [["/usr/local/bin/toolgate", toolgate], ["/etc/toolgate/catalog", `${t.dir}/catalog`],
		["/etc/toolgate/policy.json", `${t.dir}/policy.json`], ["/var/lib/toolgate", `${t.dir}/state`],
		["/srv/work", `${t.dir}/ws`], ["https://gw.example.com/mcp", t.url],
		["${TOOLGATE_TOKEN}", t.token], ["${input:toolgate-token}", t.token],
		["${env:TOOLGATE_TOKEN}", t.token]];
	for (const [a, b] of swaps) text = text.split(a).join(b);
	return JSON.parse(text);
}

async function hostSide(t) {
	const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
	const { StreamableHTTPClientTransport } =
		await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
	const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
	const want = "fs.read,fs.search,fs.write";
	const all = blocks();
	await T.check("page_has_every_host", async () => {
		const got = new Set(all.filter((b) => b.host).map((b) => `${b.host}/${b.transport}`));
		const need = ["claude-desktop/stdio", "claude-code/stdio", "claude-code/http", "vscode/stdio",
			"vscode/http", "cursor/stdio", "cursor/http"];
		const missing = need.filter((n) => !got.has(n));
		return missing.length ? `missing ${missing}` : true;
	});
	for (const b of all.filter((x) => x.host)) {
		const name = `${b.host}_${b.transport}${b.auth ? "_" + b.auth : ""}`;
		await T.check(name, async () => {
			const conf = localise(b.json, t);
			const entry = (conf.mcpServers || conf.servers || {}).toolgate;
			if (!entry) return "no toolgate entry";
			if (b.transport === "stdio") {
				const client = new Client({ name: b.host, version: "1.0.0" });
				await client.connect(new StdioClientTransport({ command: entry.command,
					args: entry.args, stderr: "ignore" }));
				const names = (await client.listTools()).tools.map((x) => x.name).sort().join(",");
				await client.close();
				return names === want ? true : names;
			}
			if (b.auth === "oauth") {
				if (entry.headers) return "an OAuth block with headers";
				const r = await fetch(entry.url, { method: "POST", body: "{}", headers: {
					"content-type": "application/json", accept: "application/json, text/event-stream" } });
				const h = r.headers.get("www-authenticate") || "";
				return r.status === 401 && h.includes("resource_metadata=") ? true : `${r.status} ${h}`;
			}
			const client = new Client({ name: b.host, version: "1.0.0" });
			await client.connect(new StreamableHTTPClientTransport(new URL(entry.url),
				{ requestInit: { headers: entry.headers } }));
			const names = (await client.listTools()).tools.map((x) => x.name).sort().join(",");
			await client.close();
			return names === want ? true : names;
		});
	}
	process.exit(T.failures() ? 1 : 0);
}

async function gatewaySide() {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tg-hostcfg-"));
	let server;
	try {
		fs.cpSync(path.join(repo, "examples/catalog"), `${dir}/catalog`, { recursive: true });
		fs.mkdirSync(`${dir}/ws`);
		fs.mkdirSync(`${dir}/data`); // the sql tools' ../data: there, as serve checks at start
		if (process.getuid() === 0) for (const d of ["ws", "data"]) fs.chownSync(`${dir}/${d}`, 65534, 65534);
		fs.mkdirSync(`${dir}/state`, { mode: 0o700 });
		fs.writeFileSync(`${dir}/policy.json`, JSON.stringify({ principals: {
			alice: { scopes: ["fs.read:read", "fs.search:read", "fs.write:write"] } } }));
		const [cert, key] = [`${dir}/tls.crt`, `${dir}/tls.key`];
		run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
			"-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
			"-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"]);
		fs.chmodSync(key, 0o600);
		const token = run(toolgate, ["token", "issue", "--state", `${dir}/state`, "--policy",
			`${dir}/policy.json`, "--principal", "alice", "--scope", "fs.read:read",
			"--scope", "fs.search:read", "--scope", "fs.write:write"]).trim();
		server = spawn(toolgate, ["serve", "--catalog", `${dir}/catalog`, "--workspace", `${dir}/ws`,
			"--policy", `${dir}/policy.json`, "--state", `${dir}/state`, "--record", "/dev/null",
			"--http", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key],
		{ stdio: ["ignore", "ignore", "pipe"] });
		let err = "";
		server.stderr.on("data", (d) => (err += d));
		for (let i = 0; i < 100 && !/MCP on https:\/\/\S+/.test(err); i++)
			await new Promise((r) => setTimeout(r, 100));
		const m = /MCP on (https:\/\/\S+)/.exec(err);
		if (!m) throw new Error(`serve did not start: ${err.slice(-300)}`);
		// the host's side trusts the test's certificate from its start
		const file = `${dir}/t.json`;
		fs.writeFileSync(file, JSON.stringify({ dir, url: m[1].replace("127.0.0.1", "localhost"), token }));
		const p = spawn(process.execPath, [new URL(import.meta.url).pathname, toolgate, repo, file],
			{ stdio: "inherit", env: { ...process.env, NODE_EXTRA_CA_CERTS: cert } });
		const code = await new Promise((ok) => p.on("exit", ok));
		process.exitCode = code;
	} finally {
		if (server) { server.kill("SIGTERM"); await new Promise((ok) => server.on("exit", ok)); }
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

if (child) await hostSide(JSON.parse(fs.readFileSync(child, "utf8")));
else await gatewaySide();

// Stock agent hosts against toolgate (docs/HOSTS.md), as the TypeScript
// SDK client behaves in Claude Desktop or Code, VS Code and Cursor: no
// _meta, no idempotency key, and its own OAuth flow.
//
// Over HTTPS: serve with a certificate made by openssl and a policy that
// takes tokens from a real OpenID provider (oidc-provider from npm, idp.mjs,
// over https too). The client (in a network namespace the test makes,
// when root) connects, gets 401 with the resource metadata, discovers the
// provider, registers itself (dynamic client registration), signs in with
// PKCE and the resource parameter, lists only the tools its scopes allow,
// and writes without a key: the call waits for a person, who approves it
// through the admin API with the gateway's own token, and the host's retry
// gets the same result, the write done once. A pre-registered client does
// the same sign-in. Over stdio: the host's command line, the same write.
//
// Usage: node hosts.mjs TOOLGATE REPO        (the parent: servers, person)
//        node hosts.mjs --client CONFIG.json  (the host; run by the parent)
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { tap } from "./harness.mjs";

const T = tap("hosts");
const argv = process.argv.slice(2);

// ---- the host (child) ---------------------------------------------------
async function host(cfg) {
	const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
	const { StreamableHTTPClientTransport } =
		await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
	const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
	const { UnauthorizedError } = await import("@modelcontextprotocol/sdk/client/auth.js");
	const { browse } = await import("./idp.mjs");
	const redirect = "http://127.0.0.1:33418/callback";

	// what a host keeps between its OAuth steps (its OAuthClientProvider)
	class HostAuth {
		constructor(info) { this.info = info; this.tok = undefined; this.verifier = ""; }
		get redirectUrl() { return redirect; }
		get clientMetadata() {
			return { client_name: "stock host (test)", redirect_uris: [redirect],
				 grant_types: ["authorization_code", "refresh_token"],
				 response_types: ["code"], token_endpoint_auth_method: "none",
				 application_type: "native" };
		}
		clientInformation() { return this.info; }
		saveClientInformation(info) { this.info = info; }
		tokens() { return this.tok; }
		saveTokens(t) { this.tok = t; }
		redirectToAuthorization(url) { this.authUrl = url; }
		saveCodeVerifier(v) { this.verifier = v; }
		codeVerifier() { return this.verifier; }
	}

	const signIn = async (auth, name) => {
		let transport = new StreamableHTTPClientTransport(new URL(cfg.url), { authProvider: auth });
		let client = new Client({ name: "stock-host", version: "1.0.0" });
		await T.check(`${name}_401_then_sign_in`, async () => {
			try {
				await client.connect(transport);
				return "connected without a token";
			} catch (e) {
				if (!(e instanceof UnauthorizedError)) throw e;
			}
			const u = auth.authUrl;
			if (!u) return "no authorization URL";
			if (u.searchParams.get("resource") !== cfg.url) return `resource ${u.searchParams.get("resource")}`;
			if (u.searchParams.get("code_challenge_method") !== "S256") return "no PKCE";
			const back = await browse(u, cfg.login, redirect);
			await transport.finishAuth(new URL(back).searchParams.get("code"));
			return auth.tok?.access_token ? true : "no token";
		});
		await T.check(`${name}_token_for_this_resource`, async () => {
			const claims = JSON.parse(Buffer.from(auth.tok.access_token.split(".")[1], "base64url"));
			return claims.aud === cfg.url && claims.iss === cfg.issuer && claims.sub === cfg.login
				? true : JSON.stringify(claims);
		});
		transport = new StreamableHTTPClientTransport(new URL(cfg.url), { authProvider: auth });
		client = new Client({ name: "stock-host", version: "1.0.0" });
		await client.connect(transport);
		return client;
	};

	const writes = async (client, name, file, auth) => {
		await T.check(`${name}_lists_only_its_tools`, async () => {
			const names = (await client.listTools()).tools.map((t) => t.name).sort().join(",");
			return names === "fs.read,fs.search,fs.write" ? true : names;
		});
		const args = { path: file, content: `written by ${name}\n` };
		let first;
		await T.check(`${name}_write_without_key_waits_then_runs`, async () => {
			console.log(`# ${name}: fs.write, no key; the person approves it meanwhile`);
			first = await client.callTool({ name: "fs.write", arguments: args });
			const key = first._meta?.["dev.toolgate/idempotencyKey"];
			if (first.isError) return JSON.stringify(first).slice(0, 400);
			return key?.derived === true ? true : `no derived key: ${JSON.stringify(first._meta)}`;
		});
		await T.check(`${name}_retry_same_result_once`, async () => {
			const again = await client.callTool({ name: "fs.write", arguments: args });
			const k1 = first?._meta?.["dev.toolgate/idempotencyKey"]?.key;
			const k2 = again._meta?.["dev.toolgate/idempotencyKey"]?.key;
			return !again.isError && k1 && k1 === k2 ? true : JSON.stringify(again).slice(0, 400);
		});
		await T.check(`${name}_read_tool_runs`, async () => {
			const r = await client.callTool({ name: "fs.read", arguments: { path: file } });
			return !r.isError && JSON.stringify(r).includes(`written by ${name}`) ? true
				: JSON.stringify(r).slice(0, 300);
		});
		await T.check(`${name}_tool_out_of_scope_refused`, async () => {
			if (auth) auth.authUrl = undefined; // the first sign-in's
			try {
				const r = await client.callTool({ name: "sql.query", arguments: { sql: "SELECT 1" } });
				return r.isError ? true : "ran";
			} catch (e) {
				// 403 insufficient_scope: the SDK steps up, asking the
				// provider for the scope the 403 named
				const asked = auth?.authUrl?.searchParams.get("scope") || "";
				return e instanceof UnauthorizedError && asked.includes("sql.query:read") ? true
					: `${e} (asked for ${asked})`;
			}
		});
	};

	if (cfg.mode === "http") {
		const auth = new HostAuth(undefined);
		const dcr = await signIn(auth, "registered_dynamically");
		await writes(dcr, "http", "by-http.txt", auth);
		await dcr.close();
		const pre = await signIn(new HostAuth({ client_id: "stock-host" }), "preregistered");
		await pre.close();
	} else {
		const client = new Client({ name: "stock-host", version: "1.0.0" });
		await client.connect(new StdioClientTransport({ command: cfg.command, args: cfg.args,
								stderr: "ignore" }));
		await writes(client, "stdio", "by-stdio.txt");
		await client.close();
	}
	process.exit(T.failures() ? 1 : 0);
}

// ---- the servers and the person (parent) -----------------------------------
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"], ...opts }).toString();

function freePort(host) {
	return new Promise((ok) => {
		const s = net.createServer().listen(0, host, () => {
			const { port } = s.address();
			s.close(() => ok(port));
		});
	});
}

// A network namespace with a veth pair: this side .1, the client's .2.
function netns() {
	if (process.getuid() !== 0) return null;
	const name = `tghosts${process.pid}`, a = `tgha${process.pid % 100000}`, b = `tghb${process.pid % 100000}`;
	const steps = [["netns", "add", name], ["link", "add", a, "type", "veth", "peer", "name", b],
		["link", "set", b, "netns", name], ["addr", "add", "10.254.214.1/30", "dev", a],
		["link", "set", a, "up"], ["netns", "exec", name, "ip", "addr", "add", "10.254.214.2/30", "dev", b],
		["netns", "exec", name, "ip", "link", "set", b, "up"],
		["netns", "exec", name, "ip", "link", "set", "lo", "up"]];
	const close = () => {
		try { run("ip", ["link", "del", a]); } catch { /* gone with the namespace */ }
		try { run("ip", ["netns", "del", name]); } catch { /* never made */ }
	};
	try {
		for (const s of steps) run("ip", s);
	} catch (e) {
		close();
		console.log(`# no network namespace (${String(e.stderr || e).trim()}): the client stays on loopback`);
		return null;
	}
	return { name, addr: "10.254.214.1", close };
}

// request over https trusting ca: { status, body }
function request(url, { method = "GET", token, ca, body } = {}) {
	return new Promise((ok, fail) => {
		const r = https.request(url, { method, ca, headers: {
			...(token ? { authorization: `Bearer ${token}` } : {}),
			...(body ? { "content-type": "application/json" } : {}) } }, (res) => {
			let text = "";
			res.on("data", (d) => (text += d));
			res.on("end", () => ok({ status: res.statusCode, headers: res.headers, body: text }));
		});
		r.on("error", fail);
		r.end(body);
	});
}

// The person: approves every pending ticket of fs.write as bob, until stopped.
function approver(base, token, ca) {
	let stop = false;
	const loop = async () => {
		while (!stop) {
			try {
				const list = JSON.parse((await request(`${base}/admin/tickets`, { token, ca })).body);
				for (const t of list.tickets || [])
					if (t.tool.startsWith("fs.write"))
						await request(`${base}/admin/tickets/${t.id}/approve`, { method: "POST", token, ca, body: "{}" });
			} catch { /* the server starts or stops */ }
			await new Promise((r) => setTimeout(r, 300));
		}
	};
	const done = loop();
	return async () => { stop = true; await done; };
}

function child(cfg, ns, ca) {
	const file = path.join(cfg.dir, `client-${cfg.mode}.json`);
	fs.writeFileSync(file, JSON.stringify(cfg));
	const cmd = [process.execPath, new URL(import.meta.url).pathname, "--client", file];
	const p = spawn(ns ? "ip" : cmd[0], ns ? ["netns", "exec", ns.name, ...cmd] : cmd.slice(1),
		{ stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, NODE_EXTRA_CA_CERTS: ca } });
	let out = "";
	p.stdout.on("data", (d) => { out += d; process.stdout.write(d); });
	return new Promise((ok) => p.on("exit", (code) => ok({ code, out })));
}

async function parent(toolgate, repo) {
	const { startIdp } = await import("./idp.mjs");
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tg-hosts-"));
	fs.chmodSync(dir, 0o755);
	const ns = netns();
	const addr = ns ? ns.addr : "127.0.0.1";
	let server, idp, stopApprover, failed = 0;
	try {
		fs.cpSync(path.join(repo, "examples/catalog"), `${dir}/catalog`, { recursive: true });
		fs.mkdirSync(`${dir}/ws`);
		fs.mkdirSync(`${dir}/data`); // the sql tools' ../data: there, as serve checks at start
		if (process.getuid() === 0) for (const d of ["ws", "data"]) fs.chownSync(`${dir}/${d}`, 65534, 65534);
		fs.mkdirSync(`${dir}/state`, { mode: 0o700 });
		const [cert, key] = [`${dir}/tls.crt`, `${dir}/tls.key`];
		run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
			"-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=toolgate-test",
			"-addext", `subjectAltName=IP:${addr},IP:127.0.0.1,DNS:localhost`]);
		fs.chmodSync(key, 0o600);
		const ca = fs.readFileSync(cert);
		const port = await freePort(addr);
		const url = `https://${addr}:${port}/mcp`;
		// the organisation's provider knows every scope the gateway's
		// metadata lists (a host asks for them all); the policy decides
		// which of them alice holds
		const scopes = fs.readdirSync(`${dir}/catalog`).filter((f) => f.endsWith(".json")).map((f) => {
			const k = JSON.parse(fs.readFileSync(`${dir}/catalog/${f}`, "utf8"));
			return `${k.name}:${k.authority}`;
		});
		idp = await startIdp({ resource: url, scopes,
			host: addr, tls: { cert: ca, key: fs.readFileSync(key) } });
		const policy = {
			principals: { alice: { scopes: ["fs.read:read", "fs.search:read", "fs.write:write"] },
				bob: { scopes: ["*:approve"] } },
			identity_providers: [{ issuer: idp.issuer, ca_file: cert }],
			writes: { wait: "30s" },
		};
		fs.writeFileSync(`${dir}/policy.json`, JSON.stringify(policy));
		const common = ["--catalog", `${dir}/catalog`, "--workspace", `${dir}/ws`, "--policy",
			`${dir}/policy.json`, "--state", `${dir}/state`];
		const bob = run(toolgate, ["token", "issue", "--state", `${dir}/state`, "--policy",
			`${dir}/policy.json`, "--principal", "bob", "--scope", "*:approve"]).trim();

		server = spawn(toolgate, ["serve", ...common, "--record", `${dir}/record`, "--http", `${addr}:${port}`,
			"--tls-cert", cert, "--tls-key", key], { stdio: ["ignore", "ignore", "pipe"] });
		let err = "";
		server.stderr.on("data", (d) => (err += d));
		for (let i = 0; i < 100 && !err.includes("MCP on"); i++) await new Promise((r) => setTimeout(r, 100));
		await T.check("serve_https_started", async () => err.includes(`MCP on ${url}`) ? true : err.slice(-400));
		await T.check("metadata_names_the_provider", async () => {
			const r = await request(url, { method: "POST", ca, body: "{}" });
			const m = /resource_metadata="([^"]+)"/.exec(r.headers["www-authenticate"] || "");
			if (r.status !== 401 || !m) return `${r.status} ${r.headers["www-authenticate"]}`;
			const prm = JSON.parse((await request(m[1], { ca })).body);
			return prm.resource === url && prm.authorization_servers?.[0] === idp.issuer ? true : JSON.stringify(prm);
		});

		stopApprover = approver(`https://${addr}:${port}`, bob, ca);
		const base = { dir, issuer: idp.issuer, login: "alice", url };
		let r = await child({ ...base, mode: "http" }, ns, cert);
		failed += r.code !== 0;
		if (ns) console.log(`# the http host ran in network namespace ${ns.name} (${addr} is the gateway)`);
		r = await child({ ...base, mode: "stdio", command: toolgate,
			args: ["serve", ...common, "--principal", "alice", "--record", `${dir}/record-stdio`] }, null, cert);
		failed += r.code !== 0;
		await T.check("each_write_done_once", async () => {
			const rec = fs.readFileSync(`${dir}/record`, "utf8") + fs.readFileSync(`${dir}/record-stdio`, "utf8");
			const ran = rec.split("\n").filter((l) => l.includes('"tool":"fs.write') && l.includes('"outcome":"ok"'));
			const files = ["by-http.txt", "by-stdio.txt"].map((f) => fs.existsSync(`${dir}/ws/${f}`));
			return ran.length === 2 && files.every(Boolean) ? true : `${ran.length} runs, files ${files}`;
		});
		await T.check("no_sanitizer_report", async () => /Sanitizer|runtime error/.test(err) ? err.slice(-500) : true);
	} finally {
		if (stopApprover) await stopApprover();
		if (server) { server.kill("SIGTERM"); await new Promise((ok) => server.on("exit", ok)); }
		if (idp) await idp.close();
		if (ns) ns.close();
		fs.rmSync(dir, { recursive: true, force: true });
	}
	process.exit(T.failures() || failed ? 1 : 0);
}

if (argv[0] === "--client") await host(JSON.parse(fs.readFileSync(argv[1], "utf8")));
else await parent(argv[0], argv[1]);

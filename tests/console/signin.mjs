// The approval console's sign-in at an identity provider (docs/CONSOLE.md,
// "Signing in"), in a real browser: Debian's chromium, headless, driven by
// puppeteer-core, through the login and consent pages of a real OpenID
// provider (oidc-provider from npm, tests/mcp/idp.mjs) on loopback. The
// person clicks "Sign in with ...", signs in at the provider, consents, and
// lands on the console signed in as the principal the policy maps them
// to; a callback this browser did not begin is refused, and so is a person
// the policy does not know, and so is an authorization response naming
// another issuer, or coming back to another provider's redirect URI (a
// mix-up).
//
// Usage: node signin.mjs TOOLGATE REPO
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { tap } from "../mcp/harness.mjs";
import { startIdp } from "../mcp/idp.mjs";

const [toolgate, repo] = process.argv.slice(2);
// this script's own requests each on a connection of their own (as in
// console.mjs: a kept one the gateway closes at its header timeout is not
// retried by fetch)
const fetch = (url, opts = {}) => globalThis.fetch(url,
	{ ...opts, headers: { ...(opts.headers || {}), Connection: "close" } });
const T = tap("console-signin");
const puppeteer = (await import("puppeteer-core")).default;

// a port known before the start: the provider must know the redirect URI
// and the resource (this gateway's URL) the tokens are for
const port = await new Promise((ok) => {
	const s = net.createServer().listen(0, "127.0.0.1", () => {
		const p = s.address().port;
		s.close(() => ok(p));
	});
});
const origin = `http://127.0.0.1:${port}`;
const idp = await startIdp({
	resource: `${origin}/mcp`, scopes: [], accounts: { carol: {}, mallory: {} }, alg: "RS256",
	clients: [{ client_id: "toolgate-console", token_endpoint_auth_method: "none",
		    application_type: "native", grant_types: ["authorization_code"],
		    response_types: ["code"],
		    redirect_uris: [`${origin}/console/api/login/callback/0`] }],
});

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tg-signin-"));
fs.mkdirSync(path.join(dir, "state"), { mode: 0o700 });
fs.writeFileSync(path.join(dir, "policy.json"), JSON.stringify({
	principals: { carol: { scopes: ["*:approve"] } },
	identity_providers: [{ issuer: idp.issuer, scopes: "policy",
			       console: { client_id: "toolgate-console" } }],
}));
// the example catalogue, with the workspace and ../data its write tools may
// write (serve checks at start what they will need)
fs.cpSync(path.join(repo, "examples/catalog"), path.join(dir, "catalog"), { recursive: true });
for (const d of ["data", "ws"]) {
	fs.mkdirSync(path.join(dir, d));
	if (process.getuid() === 0) fs.chownSync(path.join(dir, d), 65534, 65534);
}
const server = spawn(toolgate, ["serve", "--catalog", path.join(dir, "catalog"),
	"--workspace", path.join(dir, "ws"), "--policy", path.join(dir, "policy.json"), "--state", path.join(dir, "state"),
	"--http", `127.0.0.1:${port}`], { stdio: ["ignore", "ignore", "pipe"] });
let stderr = "";
server.stderr.on("data", (d) => { stderr += d; });
await new Promise((ok, no) => {
	const t = setInterval(() => { if (stderr.includes("MCP on")) { clearInterval(t); ok(); } }, 50);
	server.on("exit", (code) => no(new Error(`toolgate exited ${code}: ${stderr}`)));
});

const browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", headless: true,
	args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
async function signIn(login) {
	const ctx = await browser.createBrowserContext();
	const page = await ctx.newPage();
	await page.goto(`${origin}/console/`);
	await page.waitForSelector("#providers a", { visible: true });
	await Promise.all([page.waitForNavigation(), page.click("#providers a")]);
	// the provider's own pages: sign in, then consent
	await page.waitForSelector("input[name=login]");
	await page.type("input[name=login]", login);
	await page.type("input[name=password]", "any");
	await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
	if (await page.$("button[autofocus], form button[type=submit]"))
		await Promise.all([page.waitForNavigation(),
			page.click("button[autofocus], form button[type=submit]")]);
	await page.waitForFunction((o) => location.href.startsWith(o + "/console/"), {}, origin);
	return page;
}

try {
	await T.check("provider_offered", async () => {
		const r = await (await fetch(`${origin}/console/api/login/providers`)).json();
		return (r.providers.length === 1 && r.providers[0].issuer === idp.issuer) || JSON.stringify(r);
	});
	const page = await signIn("carol");
	await T.check("signed_in_through_the_provider", async () => {
		await page.waitForSelector("#list", { visible: true, timeout: 10000 });
		return (await page.$eval("#who", (e) => e.textContent)) === "carol" ||
			page.$eval("#status", (e) => e.textContent);
	});
	await T.check("session_cookie_strict_httponly", async () => {
		const c = (await page.cookies()).find((x) => x.name === "tg_console");
		const binding = (await page.cookies(`${origin}/console/api/login/callback/0`))
			.find((x) => x.name === "tg_login");
		return (c && c.httpOnly && c.sameSite === "Strict" && !binding) || JSON.stringify([c, binding]);
	});
	await T.check("list_readable", async () =>
		(await page.evaluate(async () => (await fetch("api/tickets")).status)) === 200);

	// a callback this browser did not begin (no binding cookie, a made-up
	// state): refused, said on the sign-in page
	const other = await (await browser.createBrowserContext()).newPage();
	await other.goto(`${origin}/console/api/login/callback/0?code=x&state=${"ab".repeat(32)}`);
	await T.check("foreign_callback_refused", async () => {
		await other.waitForSelector("#signin", { visible: true });
		const said = await other.$eval("#status", (e) => e.textContent);
		return said.includes("another browser") || said;
	});
	// a person the provider knows and the policy does not
	const stranger = await signIn("mallory");
	await T.check("unknown_person_refused", async () => {
		await stranger.waitForSelector("#signin", { visible: true });
		const said = await stranger.$eval("#status", (e) => e.textContent);
		return said.includes("does not know you") || said;
	});
	// a mix-up (RFC 9700 4.4): an authorization response that names
	// another issuer than the state's provider, or none though this
	// provider sends one (RFC 9207), is refused before its code is sent
	// another provider's redirect URI (RFC 9700 4.4.2): one the sign-in
	// did not begin with gets no code, whatever the response says
	for (const [name, iss, at, want] of [
		["other_issuer_not_exchanged", "https://idp.attacker.example", 0, "(a mix-up, RFC 9207)"],
		["missing_iss_not_exchanged", null, 0, "has no iss"],
		["other_redirect_uri_not_exchanged", idp.issuer, 1, "came back to provider 1's"]]) {
		const r0 = await fetch(`${origin}/console/api/login?idp=0`, { redirect: "manual" });
		const state = new URL(r0.headers.get("location")).searchParams.get("state");
		const cookie = r0.headers.getSetCookie().find((c) => c.startsWith("tg_login="))
			.split(";")[0];
		const q = `code=x&state=${state}${iss ? "&iss=" + encodeURIComponent(iss) : ""}`;
		const r = await fetch(`${origin}/console/api/login/callback/${at}?${q}`,
			{ redirect: "manual", headers: { cookie } });
		await T.check(name, async () => {
			// refusals are recorded by a queue of their own: wait for it
			const log = () => fs.readFileSync(path.join(dir, "state", "audit.log"), "utf8");
			for (let i = 0; i < 50 && !log().includes(want); i++)
				await new Promise((ok) => setTimeout(ok, 100));
			return (r.headers.get("location") === "/console/#/signin/token" &&
				log().includes(want)) || `${r.headers.get("location")} ${log().slice(-400)}`;
		});
	}
	// a flood of sign-ins from one address (300, past the 256 under way)
	// pushes out its own, not one begun from another (127.0.0.2): that one
	// still gets to the token exchange (refused there: its code is made up)
	const get = (url, from, headers = {}) => new Promise((ok, no) => {
		http.get(url, { localAddress: from, headers: { ...headers, Connection: "close" } },
			(r) => { r.resume(); r.on("end", () => ok(r)); }).on("error", no);
	});
	const mine = await get(`${origin}/console/api/login?idp=0`, "127.0.0.2");
	for (let i = 0; i < 300; i++)
		await get(`${origin}/console/api/login?idp=0`, "127.0.0.1");
	await T.check("a_flood_of_sign_ins_pushes_out_its_own", async () => {
		const state = new URL(mine.headers.location).searchParams.get("state");
		const cookie = mine.headers["set-cookie"].find((c) => c.startsWith("tg_login="))
			.split(";")[0];
		const r = await get(`${origin}/console/api/login/callback/0?code=x&state=${state}` +
			`&iss=${encodeURIComponent(idp.issuer)}`, "127.0.0.2", { cookie });
		return r.headers.location === "/console/#/signin/token" || r.headers.location;
	});
	await T.check("redirect_uri_is_the_providers", async () => {
		const r = await fetch(`${origin}/console/api/login?idp=0`, { redirect: "manual" });
		const u = new URL(r.headers.get("location")).searchParams.get("redirect_uri");
		return u === `${origin}/console/api/login/callback/0` || u;
	});
} catch (e) {
	console.log(`not ok - console-signin/ran_to_the_end: ${e && e.stack}`);
	process.exitCode = 1;
} finally {
	await browser.close();
	const gone = new Promise((r) => server.on("exit", r));
	server.kill("SIGTERM");
	await gone;
	await idp.close();
	fs.rmSync(dir, { recursive: true, force: true });
}
await T.check("no_sanitizer_report", async () =>
	!/Sanitizer|runtime error/.test(stderr) || stderr.slice(-2000));
if (T.failures()) process.exitCode = 1;

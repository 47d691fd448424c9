// The approval console (docs/CONSOLE.md) in a real browser: Debian's
// chromium, headless, driven by puppeteer-core (npm, a test peer). An agent
// (plain JSON-RPC over HTTP, as a stock host sends it: no idempotency key)
// asks for writes that wait for a person; the person signs in with their
// approver token, sees the tickets appear live, reads a preview, rejects
// one with a reason, approves another and sees the agent's call complete.
// Then what must fail does: approving one's own ticket, a change without
// the CSRF token, or from another origin; an argument holding <script>
// renders as text. axe-core checks the list and a ticket.
//
// Usage: node console.mjs TOOLGATE REPO [SCREENSHOT-DIR]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serveHttp, tap } from "../mcp/harness.mjs";

const [toolgate, repo, shots] = process.argv.slice(2);
// this script's own requests each on a connection of their own: a kept one
// idle past the gateway's header timeout (10 s) may be closed by it just
// as it is used again, and fetch does not retry ("fetch failed")
const fetch = (url, opts = {}) => globalThis.fetch(url,
	{ ...opts, headers: { ...(opts.headers || {}), Connection: "close" } });
const T = tap("console");
const puppeteer = (await import("puppeteer-core")).default;
const axeSource = fs.readFileSync(path.join(repo, "tests/console/node_modules/axe-core/axe.min.js"), "utf8");

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tg-console-"));
fs.mkdirSync(path.join(dir, "state"), { mode: 0o700 });
fs.chmodSync(dir, 0o755);
fs.cpSync(path.join(repo, "examples/workspace"), path.join(dir, "ws"), { recursive: true });
// the sandbox writes as 65534 when toolgate runs as root (docs/SANDBOX.md)
if (process.getuid() === 0) execFileSync("chown", ["-R", "65534:65534", path.join(dir, "ws")]);
fs.writeFileSync(path.join(dir, "policy.json"), JSON.stringify({
	principals: {
		agent: { scopes: ["*:read", "fs.write:write"] },
		alice: { scopes: ["*:approve"] },
		bob: { scopes: ["*:approve", "fs.write:write"] },
	},
}));
const tg = (...args) => execFileSync(toolgate, args, { encoding: "utf8" }).trim();
const token = (who, ...scopes) => tg("token", "issue", "--state", path.join(dir, "state"),
	"--policy", path.join(dir, "policy.json"), "--principal", who,
	...scopes.flatMap((s) => ["--scope", s]), "--ttl", "1h");

// the example catalogue, with a ../data its write tools may write (serve
// checks at start what they will need)
fs.cpSync(path.join(repo, "examples/catalog"), path.join(dir, "catalog"), { recursive: true });
fs.mkdirSync(path.join(dir, "data"));
if (process.getuid() === 0) fs.chownSync(path.join(dir, "data"), 65534, 65534);
const { server, url, stderr } = await serveHttp(toolgate, ["serve", "--catalog",
	path.join(dir, "catalog"), "--workspace", path.join(dir, "ws"),
	"--policy", path.join(dir, "policy.json"), "--state", path.join(dir, "state")], "ignore");
const origin = new URL(url).origin;
const AGENT = token("agent", "fs.write:write", "*:read");
const ALICE = token("alice", "*:approve");
const BOB = token("bob", "*:approve", "fs.write:write");

// ---- an agent, as a stock host: JSON-RPC over HTTP, no key ------------------
async function rpc(tok, session, msg) {
	const r = await fetch(url, { method: "POST", body: JSON.stringify(msg), headers: {
		"Content-Type": "application/json", Accept: "application/json, text/event-stream",
		Authorization: `Bearer ${tok}`, ...(session ? { "Mcp-Session-Id": session,
			"MCP-Protocol-Version": "2025-06-18" } : {}) } });
	const text = await r.text();
	const data = r.headers.get("content-type")?.startsWith("text/event-stream")
		? text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6))
			.filter((l) => l.includes('"id"')).pop() : text;
	return { session: r.headers.get("mcp-session-id"), body: data ? JSON.parse(data) : null };
}
async function agent(tok) {
	const init = await rpc(tok, null, { jsonrpc: "2.0", id: 1, method: "initialize", params: {
		protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "host", version: "1" } } });
	await rpc(tok, init.session, { jsonrpc: "2.0", method: "notifications/initialized" });
	let id = 2;
	return (name, args) => rpc(tok, init.session, { jsonrpc: "2.0", id: id++, method: "tools/call",
		params: { name, arguments: args } }).then((r) => r.body);
}

// ---- the person, in the browser ------------------------------------------
const browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", headless: true,
	args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
const dialogs = [];
let confirming = false; /* accept the next confirmation (a rollback's) */
async function signedIn(tok) {
	const ctx = await browser.createBrowserContext();
	const page = await ctx.newPage();
	page.on("dialog", (d) => {
		if (d.type() === "confirm" && confirming) return d.accept();
		dialogs.push(d.message());
		return d.dismiss();
	});
	await page.goto(`${origin}/console/`);
	await page.waitForSelector("#token", { visible: true });
	await page.type("#token", tok);
	await page.click("#signin-form button[type=submit]");
	await page.waitForSelector("#list", { visible: true });
	return page;
}
const rows = (page) => page.$$eval("#list-table tbody tr", (trs) => trs.map((tr) => tr.innerText));
const until = async (fn, ms = 10000) => {
	for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100)))
		if (await fn()) return true;
	return false;
};
// the page shows ticket id (a hash change keeps the page: wait for it)
const shows = (page, id) => page.waitForFunction((i) =>
	!document.getElementById("ticket").hidden &&
	document.getElementById("ticket-title").textContent.includes(i.slice(0, 8)), {}, id);
async function axe(page) {
	await page.evaluate(axeSource);
	const r = await page.evaluate(() => axe.run(document, { resultTypes: ["violations"] }));
	const bad = r.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
	return bad.length === 0 || JSON.stringify(bad.map((v) => [v.id, v.nodes.map((n) => n.target)]));
}

let page, call1, call2, call3, ticket1, ticket2;
try {
	const host = await agent(AGENT);
	page = await signedIn(ALICE);
	await T.check("signed_in_cookie_httponly_strict", async () => {
		const c = (await page.cookies()).find((x) => x.name === "tg_console");
		return (c && c.httpOnly && c.sameSite === "Strict" &&
			!(await page.evaluate(() => document.cookie.includes("tg_console")))) ||
			JSON.stringify(c);
	});
	await T.check("list_empty_at_first", async () =>
		(await rows(page)).length === 0 || JSON.stringify(await rows(page)));

	// two writes the agent asks for: each waits for a person
	call1 = host("fs.write", { path: "notes/first.txt", content: "one\n" });
	await T.check("ticket_appears_live", async () =>
		(await until(async () => (await rows(page)).some((r) => r.includes("fs.write")))) ||
		JSON.stringify(await rows(page)));
	call2 = host("fs.write", { path: "notes/second.txt", content: "two\n<script>alert('x')</script><img src=x onerror=alert(2)>\n" });
	await T.check("second_ticket_appears_live", async () =>
		(await until(async () => (await rows(page)).length === 2)) || JSON.stringify(await rows(page)));
	if (shots) await page.screenshot({ path: path.join(shots, "console-list.png") });
	await T.check("axe_list_no_serious_violation", () => axe(page));

	// which ticket is which: by the path in its arguments (two made in the
	// same second have no order by time)
	const links = await page.$$eval("#list-table tbody a", (as) => as.map((a) => a.getAttribute("href")));
	for (const id of links.map((h) => h.slice("#/ticket/".length))) {
		const t = await page.evaluate(async (i) => (await fetch(`api/tickets/${i}`)).json(), id);
		if (t.arguments.path === "notes/first.txt") ticket1 = id;
		else ticket2 = id;
	}
	await page.click(`a[href="#/ticket/${ticket1}"]`);
	await shows(page, ticket1);
	await T.check("ticket_shows_preview_diff_and_hash", async () => {
		const text = await page.$eval("#ticket-body", (e) => e.innerText);
		const adds = await page.$$eval("#ticket-body .diff .add", (s) => s.map((x) => x.textContent));
		return (adds.includes("+one") && /SHA-256 of the arguments: [0-9a-f]{64}/.test(text) &&
			text.includes("notes/first.txt") && text.includes("Asked by")) || text;
	});
	await T.check("axe_ticket_no_serious_violation", () => axe(page));

	// reject the first, with a reason: the agent's call ends rejected
	await page.click("#reject");
	await T.check("reject_needs_a_reason", async () =>
		(await page.$eval("#ticket-state", (e) => e.textContent)) === "pending");
	// a reason holding a bidi override: shown escaped, never reordering
	await page.type("#reason", "not in the notes folder, please \u202Egnp.exe");
	await page.click("#reject");
	await T.check("rejected_with_reason", async () =>
		(await until(async () => (await page.$eval("#ticket-state", (e) => e.textContent)) === "rejected")) &&
		(await page.$eval("#ticket-body", (e) => e.innerText)).includes("not in the notes folder, please \\u{202E}gnp.exe") ||
		page.$eval("#ticket-body", (e) => e.innerText));
	await T.check("agent_call_ends_rejected", async () => {
		const r = await call1;
		return (r.result && r.result.isError && JSON.stringify(r.result).includes("reject")) ||
			JSON.stringify(r);
	});

	// the second: <script> in its arguments is text, then approve it
	await page.goto(`${origin}/console/#/ticket/${ticket2}`);
	await shows(page, ticket2);
	if (shots) await page.screenshot({ path: path.join(shots, "console-ticket.png"), fullPage: true });
	await T.check("script_in_arguments_is_text", async () => {
		const scripts = await page.$$eval("script", (s) => s.map((x) => x.src));
		const imgs = await page.$$eval("#ticket-body img", (i) => i.length);
		const text = await page.$eval("#ticket-body", (e) => e.innerText);
		return (scripts.length === 1 && imgs === 0 && dialogs.length === 0 &&
			text.includes("<script>alert('x')</script>")) || JSON.stringify({ scripts, imgs, dialogs });
	});
	await page.click("#approve");
	await T.check("approved_and_agent_call_completes", async () => {
		const r = await call2;
		const file = fs.readFileSync(path.join(dir, "ws/notes/second.txt"), "utf8");
		return (r.result && !r.result.isError && file.startsWith("two\n")) || JSON.stringify(r);
	});
	await T.check("decided_ticket_updates_in_place", async () =>
		until(async () => ["approved", "executed"].includes(
			await page.$eval("#ticket-state", (e) => e.textContent))));
	// roll it back from its ticket, after the confirmation: the file goes
	await page.goto(`${origin}/console/#/history`);
	await page.goto(`${origin}/console/#/ticket/${ticket2}`);
	await shows(page, ticket2);
	await T.check("rollback_from_the_ticket", async () => {
		confirming = true;
		// the ticket's view is drawn again as the ticket changes: a button
		// found may be replaced before the click reaches it ("Node is
		// detached from document", "Node is either not clickable or not an
		// Element"); found again and clicked, a few times
		for (let i = 0; ; i++) {
			try {
				await page.waitForSelector("#rollback", { visible: true });
				await page.click("#rollback");
				break;
			} catch (e) {
				if (i >= 9 || !/detached|not clickable|not an Element/i.test(e.message)) throw e;
				await new Promise((r) => setTimeout(r, 100));
			}
		}
		const gone = await until(async () => !fs.existsSync(path.join(dir, "ws/notes/second.txt")));
		confirming = false;
		return gone || (await page.$eval("#status", (e) => e.textContent));
	});
	await T.check("history_filters", async () => {
		await page.goto(`${origin}/console/#/history`);
		await page.waitForSelector("#history", { visible: true });
		await until(async () => (await page.$$("#history-table tbody tr")).length >= 2);
		await page.select("#f-state", "rejected");
		const left = await page.$$eval("#history-table tbody tr", (t) => t.map((r) => r.innerText));
		return (left.length === 1 && left[0].includes("rejected")) || JSON.stringify(left);
	});

	// bob asks for a write himself: he may not approve it
	const bobHost = await agent(BOB);
	call3 = bobHost("fs.write", { path: "notes/bob.txt", content: "bob\n" });
	const bobPage = await signedIn(BOB);
	await until(async () => (await rows(bobPage)).length === 1);
	const own = (await bobPage.$$eval("#list-table tbody a", (as) => as.map((a) => a.getAttribute("href"))))[0];
	await bobPage.click(`a[href="${own}"]`);
	await shows(bobPage, own.slice(9));
	await T.check("own_ticket_approve_disabled", async () =>
		bobPage.$eval("#approve", (b) => b.disabled));
	await T.check("own_ticket_approve_refused_by_server", async () => {
		const r = await bobPage.evaluate(async (id) => {
			const me = await (await fetch("api/session")).json();
			const a = await fetch(`api/tickets/${id}/approve`, { method: "POST", body: "{}",
				headers: { "Content-Type": "application/json", "X-CSRF-Token": me.csrf } });
			return [a.status, await a.text()];
		}, own.slice("#/ticket/".length));
		return r[0] === 409 || JSON.stringify(r);
	});
	await T.check("change_without_csrf_refused", async () => {
		const r = await page.evaluate(async (id) => {
			const a = await fetch(`api/tickets/${id}/approve`, { method: "POST", body: "{}",
				headers: { "Content-Type": "application/json" } });
			return [a.status, await a.text()];
		}, own.slice("#/ticket/".length));
		return (r[0] === 403 && r[1].includes("CSRF")) || JSON.stringify(r);
	});
	await T.check("change_from_another_origin_refused", async () => {
		// the session's own cookie and CSRF token, from a page of another origin
		const cookie = (await page.cookies()).find((x) => x.name === "tg_console").value;
		const me = await page.evaluate(async () => (await fetch("api/session")).json());
		const r = await fetch(`${origin}/console/api/tickets/${own.slice(9)}/approve`, {
			method: "POST", body: "{}", headers: { "Content-Type": "application/json",
				"X-CSRF-Token": me.csrf, Cookie: `tg_console=${cookie}`,
				Origin: "http://evil.example" } });
		return r.status === 403 || r.status;
	});
	await T.check("form_post_without_json_refused", async () => {
		const cookie = (await page.cookies()).find((x) => x.name === "tg_console").value;
		const r = await fetch(`${origin}/console/api/tickets/${own.slice(9)}/approve`, {
			method: "POST", body: "a=1", headers: { "Content-Type": "application/x-www-form-urlencoded",
				Cookie: `tg_console=${cookie}`, Origin: origin } });
		return r.status === 403 || r.status;
	});
	// alice approves bob's with the keyboard alone: Tab to its link in
	// the list, Enter, Tab to Approve, Enter
	await page.goto(`${origin}/console/#/`);
	await page.waitForSelector(`#list-table a[href="${own}"]`, { visible: true });
	const tabTo = async (sel) => {
		for (let i = 0; i < 40; i++) {
			await page.keyboard.press("Tab");
			if (await page.evaluate((q) => document.activeElement &&
				document.activeElement.matches(q), sel)) return true;
		}
		return false;
	};
	await T.check("keyboard_reaches_the_ticket", async () => {
		const ok = await tabTo(`a[href="${own}"]`);
		await page.keyboard.press("Enter");
		await shows(page, own.slice(9));
		return ok && (await tabTo("#approve"));
	});
	await page.keyboard.press("Enter");
	await T.check("another_approver_decides_it", async () => {
		const r = await call3;
		return (r.result && !r.result.isError) || JSON.stringify(r);
	});
	await T.check("security_headers", async () => {
		const r = await fetch(`${origin}/console/`);
		const csp = r.headers.get("content-security-policy") || "";
		return (csp.includes("script-src 'self'") && !csp.includes("unsafe") &&
			csp.includes("frame-ancestors 'none'") && r.headers.get("x-content-type-options") === "nosniff" &&
			r.headers.get("referrer-policy") === "no-referrer") || csp;
	});
	// live lists: one principal (the agent, who decides nothing) holds at
	// most 8, so an approver's still opens; a page refused one backs off
	const streams = new AbortController();
	const listen = (cookie) => fetch(`${origin}/console/api/events`, { signal: streams.signal,
		headers: { Cookie: cookie } }).then((r) => r.status);
	const si = await fetch(`${origin}/console/api/session`, { method: "POST", body: JSON.stringify(
		{ token: AGENT }), headers: { "Content-Type": "application/json", Origin: origin } });
	const agentCookie = si.headers.get("set-cookie").split(";")[0];
	await T.check("one_principal_holds_8_streams", async () => {
		const got = [];
		for (let i = 0; i < 9; i++) got.push(await listen(agentCookie));
		const alice = await listen(`tg_console=${(await page.cookies()).find((x) => x.name === "tg_console").value}`);
		return (got.slice(0, 8).every((s) => s === 200) && got[8] === 429 && alice === 200) ||
			JSON.stringify({ got, alice });
	});
	await T.check("refused_stream_backs_off", async () => {
		const bobCookie = `tg_console=${(await bobPage.cookies()).find((x) => x.name === "tg_console").value}`;
		const n = await bobPage.evaluate(() => performance.getEntriesByType("resource").length);
		for (let i = 0; i < 8; i++) await listen(bobCookie);
		await bobPage.reload();
		await new Promise((r) => setTimeout(r, 3000));
		const asked = await bobPage.evaluate(() => performance.getEntriesByType("resource")
			.filter((e) => e.name.endsWith("/api/events")).length);
		const said = await bobPage.$eval("#status", (e) => e.textContent);
		return (asked <= 3 && said.includes("live list")) || JSON.stringify({ n, asked, said });
	});
	streams.abort();
	await T.check("signed_out_then_refused", async () => {
		await page.click("#signout");
		await page.waitForSelector("#signin", { visible: true });
		const r = await page.evaluate(async () => (await fetch("api/tickets")).status);
		// signed out, no navigation nor Sign out button is shown
		const nav = await page.$eval("#nav", (e) => e.offsetParent !== null);
		return (r === 401 && !nav) || JSON.stringify({ r, nav });
	});
} catch (e) {
	console.log(`not ok - console/ran_to_the_end: ${e && e.stack}`);
	process.exitCode = 1;
} finally {
	await browser.close();
	const gone = new Promise((r) => server.on("exit", r));
	server.kill("SIGTERM");
	await gone;
	fs.rmSync(dir, { recursive: true, force: true });
}
await T.check("no_sanitizer_report", async () =>
	!/Sanitizer|runtime error/.test(stderr()) || stderr().slice(-2000));
if (T.failures()) process.exitCode = 1;

// make demo, the write path: an agent (the official TypeScript MCP SDK's
// client, principal agent-1) asks for destructive SQL statements; each is
// held with its dry run's preview; a person (alice, with her own token)
// reads the ticket and approves one, rejects the other, from the CLI; the
// agent's retry under the same idempotency key runs the approved one once;
// then alice rolls it back, and the agent sees every row again.
// Usage: node demo-writes.mjs TOOLGATE-BINARY DIR (scripts/demo.sh prepares
// DIR: a copy of the example catalogue, data and workspace, a policy, and
// alice's token).
import { execFileSync } from "node:child_process";
import { connect, step } from "./demo-common.mjs";

const [toolgate, dir] = process.argv.slice(2);
const state = ["--state", `${dir}/state`];
const policy = ["--policy", `${dir}/policy.json`];
const alice = ["--token", execFileSync("cat", [`${dir}/alice.token`]).toString().trim()];

// a person at the terminal: the command and what it prints
const person = (args, shown = args, quiet = false) => {
	console.log(`\x1b[2m$ toolgate ${shown.join(" ")}\x1b[0m`);
	const print = (text) => text.trim() && console.log(text.trimEnd().replace(/^/gm, "  "));
	try {
		const out = execFileSync(toolgate, args, { stdio: ["ignore", "pipe", "pipe"] }).toString();
		if (!quiet) print(out);
		return out;
	} catch (e) {
		print(e.stdout.toString() + e.stderr.toString());
		return "";
	}
};
const hidden = ["--token", "<alice's token>"];

const client = await connect(toolgate, ["serve", "--stdio", "--catalog", `${dir}/catalog`,
	"--workspace", `${dir}/workspace`, ...state, ...policy, "--principal", "agent-1",
	"--record", `${dir}/record`]);
const call = (name, args, meta) => client.callTool({ name, arguments: args, _meta: meta });
const summary = (r) => {
	const e = r._meta?.["dev.toolgate/error"];
	console.log(`   => ${r.isError ? (e ? e.code : "error") : "ok"}: ${r.content[0].text.slice(0, 300)}`);
	return e;
};

const purge = { sql: "DELETE FROM orders WHERE placed_at < ?", params: ["2026-11-05"] };
const key = { "dev.toolgate/idempotencyKey": "purge-old-orders-1" };

step("The agent asks for a destructive statement: sql.execute is a write tool, so it is held");
const held = summary(await call("sql.execute", purge, key));
const ticket = held.ticket;
console.log(`   the dry run says: ${held.preview.structured.rows_changed} rows of ` +
	`${held.preview.structured.tables.join(", ")} would go`);

step("A person reads the ticket: the exact arguments and the dry run's preview");
// what a person reads (a terminal's table and preview; --json for scripts)
person(["approvals", "show", ticket, ...state]);

step("The agent may not approve its own call, and its retry before a decision is still held");
person(["approvals", "approve", ticket, ...state, ...policy, "--token",
	execFileSync("cat", [`${dir}/agent.token`]).toString().trim()],
	["approvals", "approve", ticket, "--token", "<agent-1's token>"]);
summary(await call("sql.execute", purge, key));

step("Alice approves it");
person(["approvals", "approve", ticket, ...state, ...policy, ...alice],
	["approvals", "approve", ticket, ...hidden]);

step("The agent retries under the same key: the statement runs, once");
const ran = await call("sql.execute", purge, key);
summary(ran);

step("Another retry (a flaky network, say): the same answer, byte for byte, nothing runs again");
const again = await call("sql.execute", purge, key);
console.log(`   => identical to the first: ${JSON.stringify(again) === JSON.stringify(ran)}`);

step("The agent tries DROP TABLE customers: held; alice rejects it with a reason");
const drop = { "dev.toolgate/idempotencyKey": "drop-customers-1" };
const dropTicket = summary(await call("sql.execute", { sql: "DROP TABLE customers" }, drop)).ticket;
person(["approvals", "reject", dropTicket, ...state, ...policy, ...alice, "--reason",
	"customers is the system of record"], ["approvals", "reject", dropTicket, ...hidden,
	"--reason", "'customers is the system of record'"]);
summary(await call("sql.execute", { sql: "DROP TABLE customers" }, drop));

step("Alice rolls the purge back: sql.undo restores the rows sql.execute kept");
person(["rollback", ticket, "--catalog", `${dir}/catalog`, ...state, ...policy, ...alice,
	"--record", `${dir}/record`], ["rollback", ticket, ...hidden]);
person(["rollback", "list", ...state]);

step("The agent counts the orders again: all five are back");
summary(await call("sql.query", { sql: "SELECT count(*) AS orders FROM orders" }));
await client.close();

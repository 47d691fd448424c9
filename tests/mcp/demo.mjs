// make demo: the official TypeScript MCP SDK's client drives `toolgate
// serve` on the example catalogue, and every JSON-RPC message is printed
// as it crosses stdio (-> to toolgate, <- from it).
// Usage: node demo.mjs TOOLGATE-BINARY REPO-DIR
import { connect, step } from "./demo-common.mjs";

const [toolgate, repo] = process.argv.slice(2);
step("Connect: initialize, then the initialized notification");
const client = await connect(toolgate, ["serve", "--stdio", "--catalog", `${repo}/examples/catalog`,
	"--workspace", `${repo}/examples/workspace`, "--record", "/dev/null"]);
const call = (name, args, opts) => client.callTool({ name, arguments: args }, undefined, opts);

step("What can this agent do? tools/list");
await client.listTools();
step("Read a file of the workspace (fs.read, in the strict sandbox, workspace read-only)");
await call("fs.read", { path: "src/hello.py" });
step("Try to leave the workspace: a \"..\" path is an anomaly, held for a person (here, with no approval gate, refused)");
await call("fs.read", { path: "../../../etc/shadow" });
step("Search the workspace (fs.search)");
await call("fs.search", { pattern: "TODO" });
step("Query the database (sql.query)");
await call("sql.query", { sql: "select c.name, sum(o.quantity * p.price_cents) / 100.0 as spent from orders o join customers c on c.id = o.customer_id join products p on p.id = o.product_id group by c.name order by spent desc" });
step("DROP TABLE through a read tool: SQLite itself refuses (read-only by construction)");
await call("sql.query", { sql: "DROP TABLE orders" });
step("Run code a model wrote (python.run): no network, no host files");
await call("python.run", { code: "import os, socket\nprint(os.listdir('/'))\ntry:\n    socket.create_connection(('127.0.0.1', 22), timeout=1)\nexcept OSError as e:\n    print('network:', e)" });
step("Arguments that break the tool's input schema become a tool error the model can read");
await call("sql.query", { sql: 42 });
step("A call the client gives up on: notifications/cancelled kills its sandbox");
try {
	await call("python.run", { code: "while True: pass" }, { signal: AbortSignal.timeout(800) });
} catch (e) {
	console.log(`   (the client gave up: ${e.name})`);
}
await client.ping();
await client.close();

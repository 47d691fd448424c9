// What the demo's scripts share (demo.mjs, demo-writes.mjs): an MCP client
// on `toolgate serve` over stdio that prints every JSON-RPC message as it
// crosses (-> to toolgate, <- from it), and the step titles.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const width = process.stdout.columns || 100;

export const show = (dir, msg) => {
	let text = JSON.stringify(msg);
	if (text.length > width * 3) text = text.slice(0, width * 3 - 3) + "...";
	console.log(`${dir} ${text}`);
};

export const step = (title) => console.log(`\n\x1b[1m== ${title}\x1b[0m`);

class LoggedTransport extends StdioClientTransport {
	async send(msg) { show("->", msg); return super.send(msg); }
}

// A client connected to `toolgate ARGS...`, printing what it sends and gets.
export async function connect(toolgate, args) {
	const transport = new LoggedTransport({ command: toolgate, args });
	const client = new Client({ name: "toolgate-demo", version: "1.0.0" });
	for (const m of ["_onresponse", "_onrequest", "_onnotification"]) {
		const orig = client[m].bind(client);
		client[m] = (msg, extra) => { show("<-", msg); return orig(msg, extra); };
	}
	await client.connect(transport);
	return client;
}

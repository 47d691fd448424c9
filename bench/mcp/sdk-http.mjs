// The Streamable HTTP side the TypeScript SDK peers of the benchmarks share:
// express, the SDK's StreamableHTTPServerTransport with stateful sessions
// and JSON answers, a new McpServer per session from newServer().
// Usage: serveMcp(port, newServer, label) logs "LABEL on PORT" once listening.
import express from "express";
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

export function serveMcp(port, newServer, label) {
	const transports = {};
	const app = express();
	app.use(express.json({ limit: "4mb" }));
	app.post("/mcp", async (req, res) => {
		const sid = req.headers["mcp-session-id"];
		let transport = sid ? transports[sid] : undefined;
		if (!transport && !sid && isInitializeRequest(req.body)) {
			transport = new StreamableHTTPServerTransport({
				sessionIdGenerator: () => randomUUID(),
				enableJsonResponse: true,
				onsessioninitialized: (id) => { transports[id] = transport; },
			});
			await newServer().connect(transport);
		}
		if (!transport) {
			res.status(400).json({ jsonrpc: "2.0", error: { code: -32000, message: "no session" }, id: null });
			return;
		}
		await transport.handleRequest(req, res, req.body);
	});
	app.listen(port, "127.0.0.1", () => console.error(`${label} on ${port}`));
}

// The peer of bench/mcp.sh: the official TypeScript MCP SDK's server
// (npm @modelcontextprotocol/sdk, McpServer and its Streamable HTTP
// transport, stateful sessions, JSON answers) exposing the same echo tool
// as bench/mcp/catalog/echo.json: the same input and output schemas.
// Usage: node sdk-server.mjs PORT
import express from "express";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const port = Number(process.argv[2]);
const transports = {};

function newServer() {
	const server = new McpServer({ name: "sdk-echo", version: "1.0.0" });
	server.registerTool("echo", {
		description: "Echo the arguments",
		inputSchema: { text: z.string().max(1000) },
		outputSchema: { text: z.string() },
		annotations: { readOnlyHint: true },
	}, async ({ text }) => ({
		content: [{ type: "text", text: JSON.stringify({ text }) }],
		structuredContent: { text },
	}));
	return server;
}

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
app.listen(port, "127.0.0.1", () => console.error(`sdk-server on ${port}`));

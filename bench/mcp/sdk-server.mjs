// The peer of bench/mcp.sh: the official TypeScript MCP SDK's server
// (npm @modelcontextprotocol/sdk, McpServer and its Streamable HTTP
// transport, stateful sessions, JSON answers) exposing the same echo tool
// as bench/mcp/catalog/echo.json: the same input and output schemas.
// Usage: node sdk-server.mjs PORT
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serveMcp } from "./sdk-http.mjs";

const port = Number(process.argv[2]);

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

serveMcp(port, newServer, "sdk-server");

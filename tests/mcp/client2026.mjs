// Interop with the official 2026-07-28 client package (npm
// @modelcontextprotocol/client 2.x) against `toolgate serve` on the
// conformance fixture catalogue, over stdio or Streamable HTTP: the era
// probe (server/discover), stateless requests with their _meta, multi
// round-trip requests the client fulfils itself (elicitation, sampling,
// roots; a prompt that asks), Mcp-Param headers the client mirrors, a
// subscription. Prints "ok - mcp-2026/TRANSPORT/NAME" or "not ok - ...".
// Usage: node client2026.mjs TOOLGATE-BINARY REPO-DIR stdio|http
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { serveHttp, tap } from "./harness.mjs";

const [toolgate, repo, mode] = process.argv.slice(2);
const { check, failures } = tap(`mcp-2026/${mode}`);

const serveArgs = ["serve", "--catalog", `${repo}/tests/conformance/catalog`, "--record", "/dev/null"];
let transport, server;
if (mode === "http") {
	let url;
	({ server, url } = await serveHttp(toolgate, serveArgs));
	transport = new StreamableHTTPClientTransport(new URL(url));
} else {
	transport = new StdioClientTransport({ command: toolgate, args: serveArgs, stderr: "inherit" });
}
const asked = [];
const client = new Client({ name: "toolgate-2026", version: "1.0.0" }, {
	capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
	versionNegotiation: { mode: "auto" },
});
client.setRequestHandler("elicitation/create", async (req) => {
	asked.push(req.params.message);
	const props = Object.keys(req.params.requestedSchema.properties);
	const content = {};
	for (const p of props) content[p] = req.params.requestedSchema.properties[p].type === "boolean" ? true : `${p}-value`;
	return { action: "accept", content };
});
client.setRequestHandler("sampling/createMessage", async () => ({
	role: "assistant", model: "test-model", content: { type: "text", text: "Paris" } }));
client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///work", name: "work" }] }));
await client.connect(transport);
const text = (r) => r.content.map((c) => c.text).join("");

await check("modern_era_negotiated", () => {
	const v = client.getServerVersion();
	return (v && v.name === "toolgate") || JSON.stringify(v);
});
await check("tools_list", async () => {
	const { tools } = await client.listTools();
	return tools.some((t) => t.name === "test_input_required_result_multi_round") || tools.map((t) => t.name).join(",");
});
await check("call_simple", async () => text(await client.callTool({ name: "test_simple_text", arguments: {} })).length > 0 || "empty");
await check("mrtr_elicitation", async () => {
	const r = await client.callTool({ name: "test_input_required_result_elicitation", arguments: {} });
	return text(r) === "Hello, name-value!" || text(r);
});
await check("mrtr_sampling", async () => {
	const r = await client.callTool({ name: "test_input_required_result_sampling", arguments: {} });
	return text(r) === "Paris" || text(r);
});
await check("mrtr_roots", async () => {
	const r = await client.callTool({ name: "test_input_required_result_list_roots", arguments: {} });
	return text(r) === "Roots: file:///work" || text(r);
});
await check("mrtr_three_at_once", async () => {
	const r = await client.callTool({ name: "test_input_required_result_multiple_inputs", arguments: {} });
	return text(r) === "Paris, name-value (1 roots)" || text(r);
});
await check("mrtr_two_rounds", async () => {
	const r = await client.callTool({ name: "test_input_required_result_multi_round", arguments: {} });
	return text(r) === "name-value likes color-value" || text(r);
});
await check("prompt_that_asks", async () => {
	const r = await client.getPrompt({ name: "test_input_required_result_prompt" });
	return r.messages[0].content.text === "Answer in this context: context-value" || JSON.stringify(r);
});
await check("param_headers_mirrored", async () => {
	const r = await client.callTool({ name: "test_custom_headers",
		arguments: { region: "eu-west 1", priority: 7, query: "x" } });
	return (!r.isError && r.structuredContent.region === "eu-west 1") || JSON.stringify(r);
});
await check("resource_read", async () => {
	const r = await client.readResource({ uri: "test://static-text" });
	return r.contents[0].text.length > 0 || JSON.stringify(r);
});
await check("listen_acknowledged", async () => {
	const sub = await client.listen({ toolsListChanged: true });
	const ok = sub.honoredFilter.toolsListChanged === true;
	await sub.close();
	return ok || JSON.stringify(sub.honoredFilter);
});
await client.close();
if (server) server.kill();
process.exit(failures() ? 1 : 0);

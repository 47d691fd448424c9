// The peer of bench/mcp-sandbox.sh: what a user would write without
// toolgate to run a command sandboxed behind MCP. The official TypeScript
// MCP SDK's server (as bench/mcp/sdk-server.mjs: McpServer, its Streamable
// HTTP transport, stateful sessions, JSON answers) whose echo tool spawns
// bubblewrap for each call, with the isolation bench/sandbox-start gives
// it (every namespace, a new session, no capabilities, read-only /usr,
// a fresh /proc, /dev and /tmp, an empty environment, toolgate's own
// seccomp programs), and runs /bin/cat in it: the arguments as JSON on its
// stdin, its stdout parsed as the result, as toolgate runs a command tool.
// Usage: node sdk-bwrap-server.mjs PORT BPF-DIR   (BPF-DIR: main.bpf and
// ioctl.bpf, from build/bench/seccomp-export); BPF-DIR "bare": /bin/cat
// spawned without a sandbox, the floor of the comparison
import { spawn } from "node:child_process";
import { openSync, closeSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serveMcp } from "./sdk-http.mjs";

const port = Number(process.argv[2]);
const bpf = process.argv[3];

const bwrapArgs = [
	"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
	"--ro-bind", "/usr", "/usr",
	"--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
	"--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
	"--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
	"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--clearenv",
	"--add-seccomp-fd", "3", "--add-seccomp-fd", "4",
	"--", "/bin/cat",
];

// One sandboxed run: the arguments on stdin, stdout back as JSON.
function runSandboxed(args) {
	return new Promise((resolve, reject) => {
		let child;
		if (bpf === "bare") {
			child = spawn("/bin/cat", [], { stdio: "pipe", env: {} });
		} else {
			const ioctl = openSync(`${bpf}/ioctl.bpf`, "r");
			const main = openSync(`${bpf}/main.bpf`, "r");
			child = spawn("bwrap", bwrapArgs, { stdio: ["pipe", "pipe", "pipe", ioctl, main] });
			closeSync(ioctl);
			closeSync(main);
		}
		const out = [];
		child.stdout.on("data", (b) => out.push(b));
		child.stderr.resume();
		child.on("error", reject);
		child.on("close", (code) => {
			if (code !== 0) {
				reject(new Error(`the sandbox exited with ${code}`));
				return;
			}
			try {
				resolve(JSON.parse(Buffer.concat(out).toString()));
			} catch (e) {
				reject(e);
			}
		});
		child.stdin.end(JSON.stringify(args) + "\n");
	});
}

function newServer() {
	const server = new McpServer({ name: "sdk-bwrap-echo", version: "1.0.0" });
	server.registerTool("echo", {
		description: "Echo the arguments, through /bin/cat in a bubblewrap sandbox",
		inputSchema: { text: z.string().max(1000) },
		outputSchema: { text: z.string() },
		annotations: { readOnlyHint: true },
	}, async ({ text }) => {
		const result = await runSandboxed({ text });
		return {
			content: [{ type: "text", text: JSON.stringify(result) }],
			structuredContent: result,
		};
	});
	return server;
}

serveMcp(port, newServer, "sdk-bwrap-server");

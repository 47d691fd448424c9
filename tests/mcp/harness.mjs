// What the interop scripts share (client.mjs, client2026.mjs,
// upstreams.mjs): their TAP lines, and `toolgate serve --http` started on
// a loopback port of its choosing.
import { spawn } from "node:child_process";

// check(name, fn) prints "ok - PREFIX/name" when fn resolves to true,
// else "not ok - PREFIX/name: " and what it gave or threw; prefix is a
// string or a function giving one. failures() counts the not oks.
export function tap(prefix) {
	let failures = 0;
	const say = (name) => `${typeof prefix === "function" ? prefix() : prefix}/${name}`;
	async function check(name, fn) {
		try {
			const why = await fn();
			if (why === true) console.log(`ok - ${say(name)}`);
			else { failures++; console.log(`not ok - ${say(name)}: ${why}`); }
		} catch (e) {
			failures++;
			console.log(`not ok - ${say(name)}: threw ${e && e.message}`);
		}
	}
	return { check, failures: () => failures };
}

// toolgate ARGS... --http 127.0.0.1:0: port 0, the server picks one and
// says which on stderr. Resolves to { server, url, stderr() } (all its
// stderr so far); stdout is as stdio[1] says ("inherit" by default).
export function serveHttp(toolgate, args, stdout = "inherit") {
	const server = spawn(toolgate, [...args, "--http", "127.0.0.1:0"], { stdio: ["ignore", stdout, "pipe"] });
	let err = "";
	return new Promise((resolve, reject) => {
		server.stderr.on("data", (d) => {
			err += d;
			const m = /MCP on (http:\/\/\S+)/.exec(err);
			if (m) resolve({ server, url: m[1], stderr: () => err });
		});
		server.on("exit", (code) => reject(new Error(`toolgate exited ${code}: ${err}`)));
	});
}

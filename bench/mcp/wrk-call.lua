-- wrk's script for bench/mcp-wrk.sh: POST one JSON-RPC request to /mcp
-- in an MCP session, again and again, each answer checked.
-- Environment: MCP_SESSIONS (session ids, comma-separated: one id is
-- shared by every request; several are taken in turn, request by
-- request, so that each is one client's among as many), MCP_METHOD
-- (tools/call or ping).
local sessions = {}
for s in string.gmatch(os.getenv("MCP_SESSIONS") or "", "[^,]+") do
	sessions[#sessions + 1] = s
end
local method = os.getenv("MCP_METHOD") or "tools/call"
local made = 0
local threads = {}

function setup(thread)
	made = made + 1
	thread:set("first", made)
	threads[#threads + 1] = thread
end

function init(args)
	wrk.method = "POST"
	wrk.headers["Content-Type"] = "application/json"
	wrk.headers["Accept"] = "application/json, text/event-stream"
	wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
	wrk.headers["Mcp-Session-Id"] = sessions[1]
	turn = first
	if method == "ping" then
		wrk.body = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
	else
		wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call",' ..
			'"params":{"name":"echo","arguments":{"text":"hello"}}}'
	end
	bad = 0
end

if #sessions > 1 then
	function request()
		turn = turn % #sessions + 1
		wrk.headers["Mcp-Session-Id"] = sessions[turn]
		return wrk.format()
	end
end

function response(status, headers, body)
	if status ~= 200 or not string.find(body, '"result"', 1, true) or
	    string.find(body, '"isError":true', 1, true) then
		bad = bad + 1
	end
end

function done(summary, latency, requests)
	local b = 0
	for _, t in ipairs(threads) do
		b = b + t:get("bad")
	end
	local e = summary.errors
	io.write(string.format('{"rps":%.0f,"p50_us":%.1f,"p99_us":%.1f,"bad":%d}\n',
		summary.requests / (summary.duration / 1e6), latency:percentile(50),
		latency:percentile(99), b + e.connect + e.read + e.write + e.status + e.timeout))
end

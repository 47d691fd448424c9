#!/usr/bin/env python3
"""The conformance suite's fixture tools (@modelcontextprotocol/conformance
names them): each prints the MCP tool result the suite expects. They run
like every command tool, in the strict sandbox, "output": "mcp"."""
import json
import sys

# a 1x1 PNG and a tiny WAV, base64
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="
RESOURCE = {"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain",
                                             "text": "This is an embedded resource content."}}

results = {
    "simple_text": {"content": [{"type": "text", "text": "This is a simple text response for testing."}]},
    "image": {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]},
    "audio": {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]},
    "embedded_resource": {"content": [RESOURCE]},
    "mixed": {"content": [{"type": "text", "text": "Multiple content types test:"},
                          {"type": "image", "data": PNG, "mimeType": "image/png"}, RESOURCE]},
    "error": {"content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}],
              "isError": True},
    "reconnection": {"content": [{"type": "text", "text": "Reconnection test completed successfully"}]},
}
json.load(sys.stdin)
json.dump(results[sys.argv[1]], sys.stdout)

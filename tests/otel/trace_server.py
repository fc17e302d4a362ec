#!/usr/bin/env python3
"""A minimal MCP server on stdio (JSON-RPC, one message a line, standard library only) whose
one tool, `echo`, answers with the `params` of the request it received, `_meta` included: the
OpenTelemetry test reads from it the trace context metagate passed on to the server."""
import json
import sys

TOOLS = [
    {
        "name": "echo",
        "description": "Answers with the request's params.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}, "token": {"type": "string"}},
            "required": ["message"],
        },
    }
]


def answer(request_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if "id" not in message or method is None:
        continue
    if method == "initialize":
        answer(
            message["id"],
            {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "trace-echo", "version": "1"},
            },
        )
    elif method == "tools/list":
        answer(message["id"], {"tools": TOOLS})
    elif method == "tools/call":
        text = json.dumps(message["params"], sort_keys=True)
        answer(message["id"], {"content": [{"type": "text", "text": text}]})
    else:
        sys.stdout.write(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {"code": -32601, "message": "method not found"},
                }
            )
            + "\n"
        )
        sys.stdout.flush()

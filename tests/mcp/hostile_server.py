#!/usr/bin/env python3
"""A hostile MCP server of our own, on the standard library alone: what a malicious or broken
server sends that the official SDK never would. metagate's hardening tests run it behind
`metagate mcp` and read what it was sent from LOG.

Usage: hostile_server.py MODE LOG
  MODE plain    answers as a server should: one tool, `echo`;
       forge    also answers ids the client never sent (before the real answer);
       endless  pages tools/list forever, every page holding PAGE_TOOLS tools.
Every line received is appended to LOG as it came.
"""
import json
import sys

MODE, LOG = sys.argv[1], sys.argv[2]
PAGE_TOOLS = 200

ECHO = {
    "name": "echo",
    "description": "Echoes its message.",
    "inputSchema": {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tools_page(params):
    if MODE != "endless":
        return {"tools": [ECHO]}
    page = int((params or {}).get("cursor") or 0)
    tools = [
        dict(ECHO, name=f"tool_{page}_{i}", description="x" * 200) for i in range(PAGE_TOOLS)
    ]
    return {"tools": tools, "nextCursor": str(page + 1)}


def main():
    for line in sys.stdin:
        with open(LOG, "a") as log:
            log.write(line)
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "id" not in message or "method" not in message:
            continue
        method, rid = message["method"], message["id"]
        if method == "initialize":
            result = {
                "protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
        elif method == "tools/list":
            result = tools_page(message.get("params"))
        elif method.lower() == "tools/call":
            result = {"content": [{"type": "text", "text": "ran " + json.dumps(message["params"])}]}
        else:
            result = {}
        if MODE == "forge":
            send({"jsonrpc": "2.0", "id": 424242, "result": {"content": [{"type": "text", "text": "forged"}]}})
            send({"jsonrpc": "2.0", "id": "never-sent", "result": {}})
        send({"jsonrpc": "2.0", "id": rid, "result": result})
        if MODE == "forge":
            # A second answer to the same id: the client asked once.
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "again"}]}})


main()

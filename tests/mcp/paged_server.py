#!/usr/bin/env python3
"""An MCP server that lists its tools over several pages, built on the official MCP Python
SDK's server (the real npm servers never paginate tools/list). metagate's end-to-end tests use
it to check that a paginated tools/list passes through and that every page reaches the
registry. Its tools echo their arguments; each page holds PAGE_SIZE of them.

Usage: paged_server.py [TOOLS] (default 7)
"""
import json
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PAGE_SIZE = 3
COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 7

TOOLS = [
    types.Tool(
        name=f"tool_{i}",
        description=f"Echoes its arguments (tool {i} of {COUNT}).",
        input_schema={
            "type": "object",
            "properties": {"message": {"type": "string"}, "repeat": {"type": "integer"}},
            "required": ["message"],
        },
    )
    for i in range(1, COUNT + 1)
]


async def list_tools(ctx, params):
    start = int(params.cursor) if params and params.cursor else 0
    end = start + PAGE_SIZE
    return types.ListToolsResult(
        tools=TOOLS[start:end], next_cursor=str(end) if end < len(TOOLS) else None
    )


async def call_tool(ctx, params):
    text = json.dumps({"tool": params.name, "arguments": params.arguments}, sort_keys=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def main():
    server = Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)

#!/usr/bin/env python3
"""Drives an MCP server with the official MCP Python SDK's client, for metagate's end-to-end
tests (tests/mcp.rs) and its benchmark (scripts/mcp-bench.py).

Usage: driver.py SCENARIO [JSON] -- COMMAND [ARGS...]
       driver.py SCENARIO [JSON] -- http://HOST:PORT/mcp      (Streamable HTTP)
       driver.py SCENARIO [JSON] -- sse:http://HOST:PORT/sse  (the 2024-11-05 HTTP+SSE transport)
Runs COMMAND as the server over stdio (with this process's environment), or connects to the
URL (with `Authorization: Bearer $MCP_TOKEN` when MCP_TOKEN is set), plays SCENARIO and
prints one JSON report on stdout. Scenarios:
  list           every page of tools/list: {"tools": [...], "pages": N}
  calls JSON     tools/call for each [name, arguments] in JSON: {"results": [...]}
  notifications  toggles the everything server's simulated logging: the log messages and
                 the server notifications the client saw
  progress       a long-running everything-server call with a progress token: the progress seen
  sampling       an everything-server tool that asks the client to sample: what it asked, what
                 it got back
  elicitation    an everything-server tool that asks the client for input
  bench JSON     {"tool","arguments","warmup","count"}: round-trip times of tools/call, in µs
"""
import json
import os
import sys
import time

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def result(r):
    texts = [c.text for c in r.content if getattr(c, "type", None) == "text"]
    out = {"isError": bool(r.is_error), "text": "\n".join(texts)}
    if r.meta:
        out["meta"] = r.meta
    return out


async def list_all(client):
    tools, cursor, pages = [], None, 0
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        pages += 1
        tools += [dump(t) for t in page.tools]
        cursor = page.next_cursor
        if cursor is None:
            return tools, pages


async def run(scenario, arg, params):
    report = {}
    logs, notes, progress, asked = [], [], [], []

    async def on_log(p):
        logs.append({"level": p.level, "data": p.data})

    async def on_message(m):
        if not isinstance(m, Exception):
            notes.append(m.method)

    async def on_progress(done, total, message):
        progress.append([done, total])

    async def sample(context, p):
        asked.append(dump(p))
        text = p.messages[0].content.text
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"sampled: {text}"),
            model="metagate-test-model",
            stop_reason="endTurn",
        )

    async def elicit(context, p):
        asked.append(p.message)
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace"})

    async with Client(
        params,
        logging_callback=on_log,
        message_handler=on_message,
        sampling_callback=sample,
        elicitation_callback=elicit,
    ) as client:
        report["protocol"] = client.protocol_version
        if scenario == "list":
            report["tools"], report["pages"] = await list_all(client)
        elif scenario == "calls":
            report["results"] = [
                result(await client.call_tool(name, args)) for name, args in json.loads(arg)
            ]
        elif scenario == "notifications":
            await client.call_tool("toggle-simulated-logging", {})
            with anyio.move_on_after(15):
                while not logs:
                    await anyio.sleep(0.05)
            await client.call_tool("toggle-simulated-logging", {})
        elif scenario == "progress":
            r = await client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.4, "steps": 4},
                progress_callback=on_progress,
            )
            report["result"] = result(r)
        elif scenario == "sampling":
            r = await client.call_tool("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20})
            report["result"] = result(r)
        elif scenario == "elicitation":
            r = await client.call_tool("trigger-elicitation-request", {})
            report["result"] = result(r)
        elif scenario == "bench":
            spec = json.loads(arg)
            for _ in range(spec["warmup"]):
                await client.call_tool(spec["tool"], spec["arguments"])
            times = []
            for _ in range(spec["count"]):
                started = time.perf_counter_ns()
                r = await client.call_tool(spec["tool"], spec["arguments"])
                times.append((time.perf_counter_ns() - started) / 1000)
                if r.is_error:
                    raise SystemExit(f"the benchmark's call failed: {result(r)}")
            report["us"] = times
        else:
            raise SystemExit(f"unknown scenario {scenario!r}")
    report["logs"], report["notifications"] = logs, notes
    report["progress"], report["asked"] = progress, asked
    return report


def main():
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == 0:
        raise SystemExit(__doc__)
    cut = argv.index("--")
    scenario, arg = argv[0], (argv[1] if cut > 1 else None)
    command = argv[cut + 1 :]
    print(json.dumps(anyio.run(run, scenario, arg, server(command))))


def server(command):
    """What Client connects to: a stdio server, or an HTTP endpoint."""
    token = os.environ.get("MCP_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else None
    if command[0].startswith("sse:"):
        from mcp.client.sse import sse_client

        return sse_client(command[0][4:], headers=headers)
    if command[0].startswith("http://") or command[0].startswith("https://"):
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        return streamable_http_client(command[0], http_client=create_mcp_http_client(headers=headers))
    return StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))


if __name__ == "__main__":
    main()

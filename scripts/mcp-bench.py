#!/usr/bin/env python3
"""What `metagate mcp` adds to a tools/call round trip (DESIGN.md §4: at most 1 ms).

The official MCP Python SDK client (tests/mcp/driver.py, scenario `bench`) calls the real
filesystem server's `read_text_file` on a small file, COUNT times after WARMUP calls, once
directly and once through `metagate mcp` with a policy that checks the `path` argument and a
telemetry store (every decision committed before the call goes on, every outcome recorded).
Each round runs both (every other round metagate first); the report gives p50 and p99 of each
and the difference. The machine's load moves p99 far more than metagate does: compare p50s.

With --http, over Streamable HTTP instead: the client calls the everything server's `echo`
in its streamableHttp mode directly, and through `metagate mcp --listen … --upstream URL`
(the client authenticated by a bearer token). With --sessions N, metagate --listen in front of
that server holds N sessions open at once (each initialized, then left idle) and the report
gives its resident memory before and after.

Usage: scripts/mcp-bench.py [--bin target/release/metagate] [--count 2000] [--warmup 200]
                            [--rounds 2] [--no-telemetry] [--http] [--sessions N] [--json]
Needs scripts/mcp-deps.sh run first, and the binary built (`cargo build --release --locked`).
"""
import argparse
import hashlib
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def run(python, server, spec, env):
    out = subprocess.run(
        [python, str(ROOT / "tests/mcp/driver.py"), "bench", json.dumps(spec), "--", *server],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"the benchmark client failed:\n{out.stderr}")
    return json.loads(out.stdout)["us"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def started(command, env, marker):
    """Starts `command` and waits for `marker` on its stderr."""
    proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if marker in line:
            return proc
    raise SystemExit(f"{command[0]} ended before it listened")


def rss_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def open_session(port, token):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "Authorization": f"Bearer {token}"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", "/mcp", body, headers)
    response = conn.getresponse()
    session = response.getheader("Mcp-Session-Id")
    response.read()
    headers["Mcp-Session-Id"] = session
    conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), headers)
    conn.getresponse().read()
    conn.close()
    return session


def http_main(args, python, everything):
    token = "bench-token"
    with tempfile.TemporaryDirectory() as tmp:
        policy = Path(tmp, "metagate.toml")
        policy.write_text(f'[mcp.tokens]\n"sha256:{hashlib.sha256(token.encode()).hexdigest()}" = "bench"\n')
        env = dict(os.environ, HOME=tmp, XDG_STATE_HOME=tmp, XDG_CONFIG_HOME=tmp, MCP_TOKEN=token)
        up_port, port = free_port(), free_port()
        upstream = started([everything, "streamableHttp"], dict(env, PORT=str(up_port)), "listening on port")
        url = f"http://127.0.0.1:{up_port}/mcp"
        telemetry = ["--no-telemetry"] if args.no_telemetry else []
        proxy = started([args.bin, "--policy", str(policy), "--db", str(Path(tmp, "bench.db")), "mcp", "--quiet",
                         *telemetry, "--listen", f"127.0.0.1:{port}", "--upstream", url], env, "listening on")
        try:
            if args.sessions:
                before = rss_kib(proxy.pid)
                started_at = time.monotonic()
                with ThreadPoolExecutor(32) as pool:
                    ids = list(pool.map(lambda _: open_session(port, token), range(args.sessions)))
                took = time.monotonic() - started_at
                time.sleep(1)
                after = rss_kib(proxy.pid)
                threads = len(os.listdir(f"/proc/{proxy.pid}/task"))
                report = {"sessions": len(set(ids)), "rss_before_kib": before, "rss_after_kib": after,
                          "kib_per_session": (after - before) / max(1, len(ids)), "threads": threads,
                          "seconds_to_open": round(took, 2)}
                print(json.dumps(report, indent=2))
                return
            spec = {"tool": "echo", "arguments": {"message": "hi"}, "warmup": args.warmup, "count": args.count}
            rounds = []
            for i in range(args.rounds):
                order = [("d", url), ("t", f"http://127.0.0.1:{port}/mcp")]
                if i % 2:
                    order.reverse()
                got = {k: run(python, [target], spec, env) for k, target in order}
                d, t = got["d"], got["t"]
                rounds.append({
                    "direct_us": {"p50": percentile(d, 0.5), "p99": percentile(d, 0.99), "mean": statistics.fmean(d)},
                    "metagate_us": {"p50": percentile(t, 0.5), "p99": percentile(t, 0.99), "mean": statistics.fmean(t)},
                })
            for r in rounds:
                r["added_us"] = {k: r["metagate_us"][k] - r["direct_us"][k] for k in ("p50", "p99")}
            report = {"transport": "streamable-http", "calls_per_run": args.count, "telemetry": not args.no_telemetry,
                      "rounds": rounds, "budget_us": 1000,
                      "within_budget": all(r["added_us"]["p50"] < 1000 for r in rounds)}
            print(json.dumps(report, indent=2))
            sys.exit(0 if report["within_budget"] else 1)
        finally:
            proxy.terminate()
            upstream.terminate()
            proxy.wait()
            upstream.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target/release/metagate"))
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-telemetry", action="store_true")
    parser.add_argument("--json", action="store_true", help="one JSON document instead of a table")
    parser.add_argument("--http", action="store_true", help="over Streamable HTTP (--listen/--upstream)")
    parser.add_argument("--sessions", type=int, default=0, help="with --http: hold this many sessions, report memory")
    args = parser.parse_args()

    deps = Path(os.environ.get("METAGATE_MCP_DEPS", ROOT / "target/mcp-deps"))
    if not (deps / "installed").is_file():
        raise SystemExit(f"no MCP software in {deps}: run scripts/mcp-deps.sh first")
    if not os.access(args.bin, os.X_OK):
        raise SystemExit(f"no binary at {args.bin}: run `cargo build --release --locked`")
    python = str(deps / "venv/bin/python")
    filesystem = str(deps / "node/node_modules/.bin/mcp-server-filesystem")
    if args.http or args.sessions:
        return http_main(args, python, str(deps / "node/node_modules/.bin/mcp-server-everything"))

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp, "data")
        data.mkdir()
        (data / "a.txt").write_text("hello\n")
        policy = Path(tmp, "metagate.toml")
        policy.write_text(
            f'[paths]\nroot = "{data}"\ndeny = ["**/.env"]\n\n'
            "[tools.read_text_file.args.path]\nkind = \"path\"\n"
        )
        env = dict(os.environ, HOME=tmp, XDG_STATE_HOME=tmp, XDG_CONFIG_HOME=tmp)
        direct = [filesystem, str(data)]
        telemetry = ["--no-telemetry"] if args.no_telemetry else []
        through = [
            args.bin, "--policy", str(policy), "--db", str(Path(tmp, "bench.db")),
            "mcp", "--quiet", *telemetry, "--", *direct,
        ]
        spec = {
            "tool": "read_text_file",
            "arguments": {"path": str(data / "a.txt")},
            "warmup": args.warmup,
            "count": args.count,
        }
        rounds = []
        for i in range(args.rounds):
            # Every other round runs metagate first, so neither side always runs on a machine
            # the other has just warmed (or left busy).
            if i % 2 == 0:
                d = run(python, direct, spec, env)
                t = run(python, through, spec, env)
            else:
                t = run(python, through, spec, env)
                d = run(python, direct, spec, env)
            rounds.append({
                "direct_us": {"p50": percentile(d, 0.5), "p99": percentile(d, 0.99), "mean": statistics.fmean(d)},
                "metagate_us": {"p50": percentile(t, 0.5), "p99": percentile(t, 0.99), "mean": statistics.fmean(t)},
            })
    for r in rounds:
        r["added_us"] = {k: r["metagate_us"][k] - r["direct_us"][k] for k in ("p50", "p99")}
    report = {
        "calls_per_run": args.count,
        "telemetry": not args.no_telemetry,
        "rounds": rounds,
        "budget_us": 1000,
        "within_budget": all(r["added_us"]["p50"] < 1000 for r in rounds),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"tools/call round trips, Python SDK client -> filesystem server, {args.count} calls per run"
              f" (telemetry {'on' if report['telemetry'] else 'off'})")
        print(f"{'round':>5}  {'direct p50':>11} {'p99':>9}  {'metagate p50':>12} {'p99':>9}  {'added p50':>10} {'p99':>9}")
        for i, r in enumerate(rounds, 1):
            d, m, a = r["direct_us"], r["metagate_us"], r["added_us"]
            print(f"{i:>5}  {d['p50']:>9.0f}µs {d['p99']:>7.0f}µs  {m['p50']:>10.0f}µs {m['p99']:>7.0f}µs"
                  f"  {a['p50']:>8.0f}µs {a['p99']:>7.0f}µs")
        print("within the 1 ms budget (added p50):", "yes" if report["within_budget"] else "NO")
    sys.exit(0 if report["within_budget"] else 1)


if __name__ == "__main__":
    main()

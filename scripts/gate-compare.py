#!/usr/bin/env python3
"""Two or more metagate binaries on the mix of `cargo bench --bench throughput -- gate`.

Each binary runs `gate --jsonl --quiet --no-telemetry` over the same 1,000,000 calls
(the MIX of benches/throughput.rs, built-in policy), the binaries taking turns so that a
busy machine slows them alike. Prints the best wall-clock rate and the best and median
CPU rate (user + system) of each: on a shared machine the CPU figures are the steadier.

    scripts/gate-compare.py [--rounds N] BINARY BINARY...
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINES = 1_000_000


def mix():
    source = (ROOT / "benches" / "throughput.rs").read_text()
    block = source[source.index("const MIX: &[&str] = &["):]
    return re.findall(r'r#"(.*?)"#', block[: block.index("];")])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gate-compare-"))
    calls = work / "calls.jsonl"
    lines = mix()
    with calls.open("w") as out:
        for i in range(LINES):
            out.write(lines[i % len(lines)].replace("@", str(i)) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "METAGATE_POLICY"}
    env["XDG_CONFIG_HOME"] = str(work / "no-config")
    wall = {b: [] for b in args.binaries}
    cpu = {b: [] for b in args.binaries}
    for _ in range(args.rounds):
        for binary in args.binaries:
            with calls.open("rb") as stdin:
                started = time.perf_counter()
                child = subprocess.Popen(
                    [binary, "gate", "--jsonl", "--quiet", "--no-telemetry"],
                    stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    cwd=work, env=env)
                _, status, usage = os.wait4(child.pid, 0)
                wall[binary].append(time.perf_counter() - started)
                cpu[binary].append(usage.ru_utime + usage.ru_stime)
                if status != 0:
                    raise SystemExit(f"{binary} failed: status {status}")
    for binary in args.binaries:
        print(f"{binary}: best {LINES / min(wall[binary]):,.0f} calls/s wall; "
              f"{LINES / min(cpu[binary]):,.0f} calls/s of CPU at best, "
              f"{LINES / statistics.median(cpu[binary]):,.0f} median")


if __name__ == "__main__":
    main()

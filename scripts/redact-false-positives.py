#!/usr/bin/env python3
"""Counts ordinary lines of text that redaction changes: the false positives of a build.

    scripts/redact-false-positives.py [--baseline OLD_BIN] BIN PATH...

Every line of at least 8 bytes of every text file under each PATH is sent through
`BIN gate --jsonl --db` as the one argument of a call; the stored argument is read back from the
store and compared with the line. With --baseline, only the lines that BIN changes and OLD_BIN
leaves as written (or changes differently) are printed: what a change of the rules adds.
Point it at text that holds no secrets (system headers, /etc, shell scripts, docs); the last
line of output is the count.
"""

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

MAX_LINES = 1_000_000


def text_files(paths):
    for root in paths:
        if os.path.isfile(root):
            yield root
            continue
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(folder, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    yield path


def read_lines(paths):
    lines = []
    for path in text_files(paths):
        try:
            with open(path, "rb") as f:
                data = f.read(4 << 20)
        except OSError:
            continue
        if b"\0" in data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        lines.extend(line for line in text.splitlines() if len(line.encode()) >= 8)
        if len(lines) >= MAX_LINES:
            return lines[:MAX_LINES]
    return lines


def stored(binary, lines):
    """What `gate --db` stores for each line, in order."""
    with tempfile.TemporaryDirectory() as home:
        db = os.path.join(home, "fp.db")
        calls = "".join(
            json.dumps({"tool_name": "probe", "tool_args": {"text": line}}) + "\n"
            for line in lines
        )
        subprocess.run(
            [binary, "gate", "--jsonl", "--quiet", "--db", db],
            input=calls.encode(),
            stdout=subprocess.DEVNULL,
            env={"HOME": home, "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            check=True,
        )
        with sqlite3.connect(db) as conn:
            rows = [
                json.loads(args)["text"]
                for (args,) in conn.execute("select args from decisions order by rowid")
            ]
    if len(rows) != len(lines):
        sys.exit(f"{binary}: {len(rows)} decisions stored for {len(lines)} lines")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="an older build to compare with")
    parser.add_argument("binary")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    lines = read_lines(args.paths)
    new = stored(args.binary, lines)
    old = stored(args.baseline, lines) if args.baseline else lines
    changed = 0
    for line, after, before in zip(lines, new, old):
        if after != line and after != before:
            changed += 1
            print(f"{line[:200]}\n  => {after[:200]}")
    what = "changed by the new rules only" if args.baseline else "changed"
    print(f"{changed} of {len(lines)} lines {what}")


if __name__ == "__main__":
    main()

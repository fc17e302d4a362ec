#!/usr/bin/env bash
# Loads every tool set the Berkeley Function Calling Leaderboard ships (PyPI's bfcl-eval) with
# `metagate tools check`, and counts those that are not tool definitions at all (exit 2), those
# read with problems (exit 1) and those clean (exit 0).
# usage: scripts/bfcl-tools.sh [VERSION]   (needs pip and the package index; metagate built)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-2026.3.23}
bin=${METAGATE_BIN:-target/release/metagate}
[ -x "$bin" ] || bin=target/debug/metagate
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pip download --quiet --no-deps "bfcl-eval==$version" -d "$work"
python3 - "$work" <<'PY'
import glob, hashlib, json, os, sys, zipfile
work = sys.argv[1]
wheel = glob.glob(os.path.join(work, "*.whl"))[0]
sets = os.path.join(work, "sets")
os.makedirs(sets)
seen = set()
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if not (name.startswith("bfcl_eval/data/BFCL_") and name.endswith(".json")):
            continue
        for line in z.read(name).decode().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            functions = entry.get("function") if isinstance(entry, dict) else None
            if not functions:
                continue
            tools = [{"type": "function", "function": f} for f in functions]
            key = hashlib.sha1(json.dumps(tools, sort_keys=True).encode()).hexdigest()
            if key not in seen:
                seen.add(key)
                with open(os.path.join(sets, key + ".json"), "w") as out:
                    json.dump(tools, out)
PY
clean=0 problems=0 fatal=0
for f in "$work"/sets/*.json; do
  status=0
  "$bin" tools check "$f" > /dev/null 2>&1 || status=$?
  case $status in
    0) clean=$((clean + 1)) ;;
    1) problems=$((problems + 1)) ;;
    *) fatal=$((fatal + 1)) ;;
  esac
done
echo "bfcl-eval $version: $((clean + problems + fatal)) tool sets: $clean clean, $problems read with problems, $fatal not read"

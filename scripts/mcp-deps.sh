#!/usr/bin/env bash
# Installs the real MCP software the end-to-end tests of `metagate mcp` drive, into a cache
# folder under target/ (or $METAGATE_MCP_DEPS):
#   node/  the servers @modelcontextprotocol/server-filesystem and server-everything, from
#          scripts/mcp-deps/package.json and its lock file (exact versions and integrity hashes);
#   venv/  the official MCP Python SDK (`mcp`), the tests' client, with every package it pulls
#          in pinned by scripts/mcp-deps/requirements.txt.
# Idempotent: a finished install leaves a stamp naming what it installed, and a run that finds
# that stamp does nothing (so it works offline once installed). A run that fails part way
# leaves no stamp and is retried whole next time.
# Usage: scripts/mcp-deps.sh   (from anywhere; needs node >= 20, npm and python3 >= 3.10)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
spec="$here/mcp-deps"
dest="${METAGATE_MCP_DEPS:-$root/target/mcp-deps}"
stamp="$dest/installed"

want=$(cat "$spec/package.json" "$spec/package-lock.json" "$spec/requirements.txt" | sha256sum | cut -d' ' -f1)
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "mcp-deps: up to date in $dest"
    exit 0
fi

for tool in node npm python3; do
    command -v "$tool" >/dev/null || { echo "mcp-deps: $tool is not installed" >&2; exit 1; }
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
if (( node_major < 20 )); then
    echo "mcp-deps: node $node_major is too old; the MCP servers need node 20 or newer" >&2
    exit 1
fi

rm -f "$stamp"
mkdir -p "$dest/node"
cp "$spec/package.json" "$spec/package-lock.json" "$dest/node/"
echo "mcp-deps: installing the MCP servers (npm ci) into $dest/node"
# The lock file pins every package and its hash; no package needs an install script.
(cd "$dest/node" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)

echo "mcp-deps: installing the MCP Python SDK into $dest/venv"
rm -rf "$dest/venv"
python3 -m venv "$dest/venv"
"$dest/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "$spec/requirements.txt"
"$dest/venv/bin/python" -c 'import mcp.client.stdio'

echo "$want" >"$stamp"
echo "mcp-deps: installed in $dest"

#!/usr/bin/env bash
# Installs the OTLP receiver the OpenTelemetry export test sends to (tests/cli/otel.rs):
# Arize Phoenix, from PyPI, pinned, into a virtual environment under target/ (or
# $METAGATE_OTEL_DEPS). It runs locally and needs no network once installed.
# Idempotent: a finished install leaves a stamp naming what it installed.
# Usage: scripts/otel-deps.sh   (from anywhere; needs python3 >= 3.10)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest="${METAGATE_OTEL_DEPS:-$root/target/otel-deps}"
stamp="$dest/installed"
want="arize-phoenix==20.26.1"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "otel-deps: up to date in $dest"
    exit 0
fi
rm -f "$stamp"
python3 -m venv "$dest/venv"
echo "otel-deps: installing $want into $dest/venv"
"$dest/venv/bin/pip" install -q --disable-pip-version-check "$want"
echo "$want" > "$stamp"

#!/usr/bin/env bash
# Runs the examples of README.md (or of the Markdown files named) as a reader would, and fails
# when one answers differently from what the page says.
#
#   scripts/readme-examples.sh [FILE.md]...      (default: README.md)
#
# For each file: a fresh temporary HOME (no XDG_* or METAGATE_* variables), a fresh working
# folder holding a copy of fixtures/, and on PATH a folder whose `metagate` is the freshly built
# binary ($METAGATE_BIN, default target/debug/metagate, which `cargo test --locked` builds: what
# `cargo install --locked --path .` would put on PATH, without installing anything). The file's
# code blocks then run in order, each in its own process, sharing that HOME and folder (a store
# one block records into is the one the next block evaluates).
#
# Fences (their info string: the language, then words this script reads):
#   ```sh          run with bash -e, stdin from /dev/null; must exit 0
#   ```sh exit=N   must exit N (the block stops at its first failing command, as bash -e does)
#   ```python      run with python3 (exit= as for sh)
#   ```sh no-run   NOT run: a block that cannot run here (a cron line, a systemd unit, an
#                  interactive prompt, `cargo install` and other builds). Every other language
#                  (toml, json, yaml, text, …) is not run either.
#   ```text output the combined stdout and stderr the block before it must print, exactly,
#                  except that a line holding only `...` stands for any number of lines
#   ```LANG file=NAME   a block that is not run is also written to NAME in the working folder
#                  (a policy a page tells you to save, used by the blocks after it)
#
# Only fences that start at the beginning of a line count.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
bin="${METAGATE_BIN:-$repo/target/debug/metagate}"
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
if [[ ! -x "$bin" ]]; then
    echo "readme-examples: no binary at $bin: run \`cargo build --locked\` (or set METAGATE_BIN)" >&2
    exit 2
fi
[[ $# -gt 0 ]] || set -- README.md
run_timeout=60
have_timeout=$(command -v timeout || true)

failures=0
total_run=0
total_skipped=0

# One file. Blocks are cut out with awk into numbered files: NNN.meta (the info string) and
# NNN.body (the lines between the fences).
run_file() {
    local page="$1" page_path
    case "$page" in /*) page_path="$page" ;; *) page_path="$repo/$page" ;; esac
    if [[ ! -f "$page_path" ]]; then
        echo "readme-examples: $page: no such file" >&2
        failures=$((failures + 1))
        return
    fi

    local tmp
    tmp="$(mktemp -d "${TMPDIR:-/tmp}/readme-examples.XXXXXX")"
    mkdir -p "$tmp/home" "$tmp/bin" "$tmp/work" "$tmp/blocks"
    ln -s "$bin" "$tmp/bin/metagate"
    cp -R "$repo/fixtures" "$tmp/work/fixtures"

    awk -v dir="$tmp/blocks" '
        function start(line,    m) {
            match(line, /^`+/); fence = substr(line, 1, RLENGTH)
            info = substr(line, RLENGTH + 1); sub(/^[ \t]+/, "", info); sub(/[ \t]+$/, "", info)
            n++; name = sprintf("%s/%03d", dir, n)
            printf "%s\n%d\n", info, NR > (name ".meta")
            close(name ".meta")
            printf "" > (name ".body")
            inblock = 1
        }
        {
            if (!inblock) {
                if ($0 ~ /^```/) start($0)
                next
            }
            if ($0 == fence) { inblock = 0; close(name ".body"); next }
            print >> (name ".body")
        }
        END { if (inblock) { print "unterminated code fence at end of file" > "/dev/stderr"; exit 1 } }
    ' "$page_path"

    local blocks=("$tmp"/blocks/*.meta) meta info line lang words w expect_exit norun file
    local i=0 count=${#blocks[@]} prev_out="" prev_where="" ran_prev=0
    [[ -e "${blocks[0]}" ]] || count=0
    while ((i < count)); do
        meta="${blocks[$i]}"
        info="$(sed -n 1p "$meta")"
        line="$(sed -n 2p "$meta")"
        local body="${meta%.meta}.body"
        read -r -a words <<<"$info" || true
        lang="${words[0]:-}"
        expect_exit=0 norun=0 file=""
        for w in "${words[@]:1}"; do
            case "$w" in
                no-run) norun=1 ;;
                exit=*) expect_exit="${w#exit=}" ;;
                file=*) file="${w#file=}" ;;
                output) ;;
                *) ;;
            esac
        done
        local where="$page:$line"

        if [[ "$lang" == text && " ${words[*]} " == *" output "* ]]; then
            if ((ran_prev == 0)); then
                echo "FAIL $where: an output block with no run block just before it" >&2
                failures=$((failures + 1))
            elif ! compare "$body" "$prev_out"; then
                echo "FAIL $prev_where: its output differs from the block at $where:" >&2
                diff -u --label "expected ($where)" --label "printed" "$body" "$prev_out" >&2 || true
                failures=$((failures + 1))
            fi
            ran_prev=0
            i=$((i + 1))
            continue
        fi
        ran_prev=0

        if [[ -n "$file" ]]; then
            mkdir -p "$(dirname "$tmp/work/$file")"
            cp "$body" "$tmp/work/$file"
        fi

        local runner=()
        case "$lang" in
            sh | bash) runner=(bash -e) ;;
            python | python3)
                if ! command -v python3 >/dev/null; then
                    echo "skip $where: python3 is not installed" >&2
                    total_skipped=$((total_skipped + 1))
                    i=$((i + 1))
                    continue
                fi
                runner=(python3)
                ;;
        esac
        if ((${#runner[@]} == 0)); then
            i=$((i + 1))
            continue
        fi
        if ((norun)); then
            total_skipped=$((total_skipped + 1))
            i=$((i + 1))
            continue
        fi

        prev_out="$tmp/blocks/out.$i"
        prev_where="$where"
        local status=0
        (
            cd "$tmp/work"
            exec env -i \
                HOME="$tmp/home" PATH="$tmp/bin:$PATH" USER="${USER:-user}" \
                LANG="${LANG:-C.UTF-8}" TERM=dumb TMPDIR="$tmp" \
                ${have_timeout:+"$have_timeout" "$run_timeout"} "${runner[@]}" "$body"
        ) </dev/null >"$prev_out" 2>&1 || status=$?
        total_run=$((total_run + 1))
        ran_prev=1
        if [[ "$status" != "$expect_exit" ]]; then
            echo "FAIL $where: exit status $status, the page says $expect_exit; it printed:" >&2
            sed 's/^/  | /' "$prev_out" >&2
            failures=$((failures + 1))
        fi
        i=$((i + 1))
    done
    rm -rf "$tmp"
}

# compare EXPECTED ACTUAL: exact, line by line, where an expected line `...` matches any run of
# lines (the shortest that lets the rest match).
compare() {
    awk '
        FNR == NR { want[++w] = $0; next }
        { got[++g] = $0 }
        function match_from(i, j,    k) {
            while (i <= w) {
                if (want[i] == "...") {
                    if (i == w) return 1
                    for (k = j; k <= g + 1; k++) if (match_from(i + 1, k)) return 1
                    return 0
                }
                if (j > g || want[i] != got[j]) return 0
                i++; j++
            }
            return j > g
        }
        END { exit match_from(1, 1) ? 0 : 1 }
    ' "$1" "$2"
}

for page in "$@"; do
    run_file "$page"
done

if ((failures > 0)); then
    echo "readme-examples: $failures failure(s); $total_run block(s) run, $total_skipped not run (no-run)" >&2
    exit 1
fi
echo "readme-examples: $total_run block(s) ran as written in $*; $total_skipped marked no-run"

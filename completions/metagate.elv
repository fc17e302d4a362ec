# metagate completions, written from metagate's command line, not by hand: docs/development.md says how to write them again.
# Install: cp metagate.elv ~/.config/elvish/lib/ and add `use metagate` to rc.elv

use builtin;
use str;

set edit:completion:arg-completer[metagate] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'metagate'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'metagate'= {
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand gate 'Correct or reject a tool call read on stdin'
            cand mcp 'Gate every tool call between an MCP client and an MCP server (stdio)'
            cand run 'Decide a shell tool''s call as gate does, and run its command inside a boundary the kernel enforces'
            cand record 'Append tool outcomes and user turns to the telemetry store'
            cand lint 'Check recorded tool-call traces with the gate''s rules, for CI'
            cand policy 'Show or check policy files'
            cand db 'Look at the telemetry store'
            cand evaluate 'The out-of-band pass: tool health, user corrections, recommendations, learned aliases'
            cand tools 'Look at tools: health and cohesion, for people and prompts'
            cand permit 'Grant, list and revoke time-boxed capability grants that gate enforces'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;gate'= {
            cand --emit 'Write calls in this envelope instead of the one they came in'
            cand --tools 'Import tool definitions: an OpenAI tools array, an MCP tools/list result or an Anthropic tools array (repeatable)'
            cand --session 'Session the calls belong to (recorded with each decision)'
            cand --caller 'Who is calling: an agent, persona or user (recorded with each decision)'
            cand --intent 'What the caller is doing: one of the policy''s intents, which decides the tools it may use (recorded with each decision)'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand --jsonl 'Read one call per line and answer each with one line, until end of input'
            cand --replay 'With --jsonl: each line is a recorded call, {"call": CALL, "ts": TIME, "session": ID, "caller": NAME} (all but "call" optional), decided and recorded as made then, there, by that caller, so a recorded day replays through one process'
            cand --report 'Write a report envelope per call: verdict, call, corrections, warnings, error, feedback'
            cand -q 'Do not write a line on stderr per correction, warning or rejection'
            cand --quiet 'Do not write a line on stderr per correction, warning or rejection'
            cand --no-telemetry 'Do not record decisions in the telemetry store'
            cand --explain 'Write every stage''s decision on stderr: envelope, corrections, each policy check with the rule it applied, limits with counts, the verdict'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'metagate;mcp'= {
            cand --session 'Session the calls belong to (recorded with each decision and outcome)'
            cand --caller 'Who is calling: an agent, persona or user (recorded with each decision)'
            cand --intent 'What the caller is doing: one of the policy''s intents. Tools it does not allow are left out of tools/list, and refused if called'
            cand --listen 'Serve MCP''s Streamable HTTP transport on ADDR (HOST:PORT; port 0 picks one, said on stderr) instead of stdio: each HTTP session runs its own SERVER_COMMAND and is a metagate session of its own, its caller the bearer token''s ([mcp] tokens in the policy); a request without a known token gets 401 unless [mcp] unauthenticated_loopback = true lets loopback requests in as --caller'
            cand --upstream 'Relay to the MCP server at URL (http://…, its Streamable HTTP endpoint) instead of running SERVER_COMMAND; with --listen, each session gets an upstream session of its own'
            cand --print-config 'Write the snippet that starts this proxy, as it is configured now (--db, --policy and the server command made absolute), into CLIENT''s MCP configuration; the file it goes in on each platform is said on stderr'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand --no-telemetry 'Do not record decisions and tool outcomes in the telemetry store'
            cand --explain 'Write every stage of each tools/call decision on stderr: envelope, corrections, each policy check with the rule it applied, the verdict'
            cand -q 'Do not write a line on stderr per correction, warning or refusal'
            cand --quiet 'Do not write a line on stderr per correction, warning or refusal'
            cand --sandbox 'Run the server inside the boundary `metagate run` runs commands in (the policy''s [run]: it writes only under the path root and [run] write, reads none of metagate''s own files, reaches no network unless [run] network = true); [run] sandbox_mcp = true does too'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'metagate;run'= {
            cand --tools 'Import tool definitions (repeatable), as gate does'
            cand --session 'Session the calls belong to (recorded with each decision and outcome)'
            cand --caller 'Who is calling (recorded with each decision)'
            cand --intent 'What the caller is doing: one of the policy''s intents'
            cand --timeout 'Seconds a command may run before it and everything it started are killed [default: [run] timeout_secs, else 120]'
            cand --memory 'Address space per process, in MiB [default: [run] memory_mb, else 16384]'
            cand --processes 'Processes at once [default: [run] processes, else 1024]'
            cand --output 'KiB of stdout and of stderr kept, each; the rest is cut [default: [run] output_kb, else 1024]'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand --jsonl 'Read one call per line and answer each with one line (after its command ended), until end of input'
            cand -q 'Do not write a line on stderr per correction, warning or rejection'
            cand --quiet 'Do not write a line on stderr per correction, warning or rejection'
            cand --explain 'Write every stage of each decision on stderr, and what the kernel enforces'
            cand --no-telemetry 'Do not record decisions and outcomes in the telemetry store'
            cand --network 'Let the command reach the network (the policy''s [run] network = true does too)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'metagate;record'= {
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand --strict 'All or nothing: one bad line and no line is stored'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'metagate;lint'= {
            cand --format 'Output format'
            cand --deny 'Fail (exit 1) on findings at or above this severity'
            cand --ignore 'Drop the findings of this code, e.g. MG110 (repeatable)'
            cand --tools 'Import tool definitions, as gate does (repeatable)'
            cand --explain 'Explain a diagnostic code (MG003, or its name); `all` lists every code'
            cand --caller 'Check every call as made by this caller: its allow and deny lists and its own intent'
            cand --intent 'Check every call under this intent of the policy, as `gate --intent` does'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand --exit-zero 'Exit 0 even when there are findings (report-only jobs); failures still exit 2'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'metagate;policy'= {
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help'
            cand --help 'Print help'
            cand show 'Print the effective policy as TOML, every default filled in'
            cand which 'Say which policy file is in force and why (--policy, $METAGATE_POLICY, the nearest metagate.toml here or above, the user''s file, or the built-in policy)'
            cand check 'Validate a policy file; errors name the key and line (exit 2 when invalid)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;policy;show'= {
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'metagate;policy;which'= {
            cand --format 'Output format'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'metagate;policy;check'= {
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'metagate;policy;help'= {
            cand show 'Print the effective policy as TOML, every default filled in'
            cand which 'Say which policy file is in force and why (--policy, $METAGATE_POLICY, the nearest metagate.toml here or above, the user''s file, or the built-in policy)'
            cand check 'Validate a policy file; errors name the key and line (exit 2 when invalid)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;policy;help;show'= {
        }
        &'metagate;policy;help;which'= {
        }
        &'metagate;policy;help;check'= {
        }
        &'metagate;policy;help;help'= {
        }
        &'metagate;db'= {
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help'
            cand --help 'Print help'
            cand copy 'Copy one store into another, SQLite or PostgreSQL either way, or merge its history in'
            cand info 'Path, schema version, rows per table and the time span the store covers'
            cand prune 'Delete telemetry older than a cutoff, keeping what a stored evaluate run still needs'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;db;copy'= {
            cand --format 'Output format'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand --merge 'Add the source''s history to the target''s own, under new ids'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'metagate;db;info'= {
            cand --format 'Output format'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'metagate;db;prune'= {
            cand --before 'The cutoff: a duration back from now (90d, 12w, 24h) or an RFC 3339 time'
            cand --format 'Output format'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand --dry-run 'Count what would be deleted, delete nothing'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'metagate;db;help'= {
            cand copy 'Copy one store into another, SQLite or PostgreSQL either way, or merge its history in'
            cand info 'Path, schema version, rows per table and the time span the store covers'
            cand prune 'Delete telemetry older than a cutoff, keeping what a stored evaluate run still needs'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;db;help;copy'= {
        }
        &'metagate;db;help;info'= {
        }
        &'metagate;db;help;prune'= {
        }
        &'metagate;db;help;help'= {
        }
        &'metagate;evaluate'= {
            cand --since 'Start of the window: a duration back from now (7d, 24h, 30m, 90s, 2w), a date (2026-11-25: its midnight, UTC) or an RFC 3339 time'
            cand --until 'End of the window (exclusive), as --since [default: now]'
            cand --format 'Output format: a table, JSON, or one self-contained HTML page (each tool''s nights as a chart, change points marked, findings with their evidence and sessions)'
            cand --emit-policy-patch 'Write the proposed argument aliases as a policy fragment (usable alone: it carries the policy''s imports; or merge its alias tables into your policy)'
            cand --accept 'Mark a recommendation accepted (by its id) instead of running the pass'
            cand --reject 'Mark a recommendation rejected (by its id) instead of running the pass: it is muted until its rate worsens past the policy''s mute_margin (25% and a point, by default)'
            cand --fail-on 'Exit with status 1 when, since the previous stored run, a finding at or above the confidence floor is new or reopened (new), new, reopened or worse (worse), or anything changed (any); findings under the floor are listed apart and never fail the run'
            cand --confidence-floor 'The confidence a finding needs to count for --fail-on (0 to 1) [default: the policy''s [evaluate] confidence_floor, 0.5]'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand --dry-run 'Compute and report, but store nothing (every store''s bytes stay as they are)'
            cand --all 'Show muted (rejected) recommendations too'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand show 'One stored recommendation with its evidence (and the re-asks stored against its tool)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;evaluate;show'= {
            cand --format 'Output format'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'metagate;evaluate;help'= {
            cand show 'One stored recommendation with its evidence (and the re-asks stored against its tool)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;evaluate;help;show'= {
        }
        &'metagate;evaluate;help;help'= {
        }
        &'metagate;tools'= {
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help'
            cand --help 'Print help'
            cand health 'One row per tool and method: calls, shares, referrals, user corrections, utility, cohesion'
            cand check 'Check tool definitions before a model meets them: contradictions, JSON Schema the gate reads around, and constructs known to break constrained decoding (exit 1 when any is found; notes, constraints decoding leaves to the model, never fail it)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;tools;health'= {
            cand --format 'Output format'
            cand --top 'At most this many entries [default: 12 for known-tools, else all]'
            cand --budget 'known-tools: the block is never longer than this many characters'
            cand --sort 'Row order (known-tools always ranks)'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'metagate;tools;check'= {
            cand --format 'Output format'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'metagate;tools;help'= {
            cand health 'One row per tool and method: calls, shares, referrals, user corrections, utility, cohesion'
            cand check 'Check tool definitions before a model meets them: contradictions, JSON Schema the gate reads around, and constructs known to break constrained decoding (exit 1 when any is found; notes, constraints decoding leaves to the model, never fail it)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;tools;help;health'= {
        }
        &'metagate;tools;help;check'= {
        }
        &'metagate;tools;help;help'= {
        }
        &'metagate;permit'= {
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand grant 'Allow a capability for a while'
            cand list 'Show grants: the live ones, or (--all) every one with the audit trail'
            cand revoke 'End a grant now, or (--all) every grant not yet revoked'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;permit;grant'= {
            cand --capability 'The capability to allow (one the policy''s [permit] require names)'
            cand --scope 'Limit the grant to a file or folder (inside the policy''s path root; path:NAME is never read as a glob), a path glob (./docs/*.md) or a host (example.com, *.example.com, host:NAME); repeatable'
            cand --for 'How long the grant lasts: 90s, 5m, 15m, 1h (at most 30d)'
            cand --session 'Bind the grant to one session (gate --session / METAGATE_SESSION)'
            cand --reason 'Why, for the audit trail'
            cand --format 'Output format'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'metagate;permit;list'= {
            cand --format 'Output format'
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand --all 'Every grant (expired and revoked too) and every granted, revoked, used and denied event'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'metagate;permit;revoke'= {
            cand --policy 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]'
            cand --db 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards'
            cand --all 'Revoke every grant not yet revoked: live, dated later, and expired (so that none comes back if the clock moves back); prints how many were live'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'metagate;permit;help'= {
            cand grant 'Allow a capability for a while'
            cand list 'Show grants: the live ones, or (--all) every one with the audit trail'
            cand revoke 'End a grant now, or (--all) every grant not yet revoked'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;permit;help;grant'= {
        }
        &'metagate;permit;help;list'= {
        }
        &'metagate;permit;help;revoke'= {
        }
        &'metagate;permit;help;help'= {
        }
        &'metagate;help'= {
            cand gate 'Correct or reject a tool call read on stdin'
            cand mcp 'Gate every tool call between an MCP client and an MCP server (stdio)'
            cand run 'Decide a shell tool''s call as gate does, and run its command inside a boundary the kernel enforces'
            cand record 'Append tool outcomes and user turns to the telemetry store'
            cand lint 'Check recorded tool-call traces with the gate''s rules, for CI'
            cand policy 'Show or check policy files'
            cand db 'Look at the telemetry store'
            cand evaluate 'The out-of-band pass: tool health, user corrections, recommendations, learned aliases'
            cand tools 'Look at tools: health and cohesion, for people and prompts'
            cand permit 'Grant, list and revoke time-boxed capability grants that gate enforces'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'metagate;help;gate'= {
        }
        &'metagate;help;mcp'= {
        }
        &'metagate;help;run'= {
        }
        &'metagate;help;record'= {
        }
        &'metagate;help;lint'= {
        }
        &'metagate;help;policy'= {
            cand show 'Print the effective policy as TOML, every default filled in'
            cand which 'Say which policy file is in force and why (--policy, $METAGATE_POLICY, the nearest metagate.toml here or above, the user''s file, or the built-in policy)'
            cand check 'Validate a policy file; errors name the key and line (exit 2 when invalid)'
        }
        &'metagate;help;policy;show'= {
        }
        &'metagate;help;policy;which'= {
        }
        &'metagate;help;policy;check'= {
        }
        &'metagate;help;db'= {
            cand copy 'Copy one store into another, SQLite or PostgreSQL either way, or merge its history in'
            cand info 'Path, schema version, rows per table and the time span the store covers'
            cand prune 'Delete telemetry older than a cutoff, keeping what a stored evaluate run still needs'
        }
        &'metagate;help;db;copy'= {
        }
        &'metagate;help;db;info'= {
        }
        &'metagate;help;db;prune'= {
        }
        &'metagate;help;evaluate'= {
            cand show 'One stored recommendation with its evidence (and the re-asks stored against its tool)'
        }
        &'metagate;help;evaluate;show'= {
        }
        &'metagate;help;tools'= {
            cand health 'One row per tool and method: calls, shares, referrals, user corrections, utility, cohesion'
            cand check 'Check tool definitions before a model meets them: contradictions, JSON Schema the gate reads around, and constructs known to break constrained decoding (exit 1 when any is found; notes, constraints decoding leaves to the model, never fail it)'
        }
        &'metagate;help;tools;health'= {
        }
        &'metagate;help;tools;check'= {
        }
        &'metagate;help;permit'= {
            cand grant 'Allow a capability for a while'
            cand list 'Show grants: the live ones, or (--all) every one with the audit trail'
            cand revoke 'End a grant now, or (--all) every grant not yet revoked'
        }
        &'metagate;help;permit;grant'= {
        }
        &'metagate;help;permit;list'= {
        }
        &'metagate;help;permit;revoke'= {
        }
        &'metagate;help;help'= {
        }
    ]
    $completions[$command]
}

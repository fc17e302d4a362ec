# metagate completions, written from metagate's command line, not by hand: docs/development.md says how to write them again.
# Install: add `. /path/to/_metagate.ps1` to the file $PROFILE names

using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'metagate' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'metagate'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'metagate' {
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('gate', 'gate', [CompletionResultType]::ParameterValue, 'Correct or reject a tool call read on stdin')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Gate every tool call between an MCP client and an MCP server (stdio)')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Decide a shell tool''s call as gate does, and run its command inside a boundary the kernel enforces')
            [CompletionResult]::new('record', 'record', [CompletionResultType]::ParameterValue, 'Append tool outcomes and user turns to the telemetry store')
            [CompletionResult]::new('lint', 'lint', [CompletionResultType]::ParameterValue, 'Check recorded tool-call traces with the gate''s rules, for CI')
            [CompletionResult]::new('policy', 'policy', [CompletionResultType]::ParameterValue, 'Show or check policy files')
            [CompletionResult]::new('db', 'db', [CompletionResultType]::ParameterValue, 'Look at the telemetry store')
            [CompletionResult]::new('evaluate', 'evaluate', [CompletionResultType]::ParameterValue, 'The out-of-band pass: tool health, user corrections, recommendations, learned aliases')
            [CompletionResult]::new('tools', 'tools', [CompletionResultType]::ParameterValue, 'Look at tools: health and cohesion, for people and prompts')
            [CompletionResult]::new('permit', 'permit', [CompletionResultType]::ParameterValue, 'Grant, list and revoke time-boxed capability grants that gate enforces')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;gate' {
            [CompletionResult]::new('--emit', '--emit', [CompletionResultType]::ParameterName, 'Write calls in this envelope instead of the one they came in')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'Import tool definitions: an OpenAI tools array, an MCP tools/list result or an Anthropic tools array (repeatable)')
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Session the calls belong to (recorded with each decision)')
            [CompletionResult]::new('--caller', '--caller', [CompletionResultType]::ParameterName, 'Who is calling: an agent, persona or user (recorded with each decision)')
            [CompletionResult]::new('--intent', '--intent', [CompletionResultType]::ParameterName, 'What the caller is doing: one of the policy''s intents, which decides the tools it may use (recorded with each decision)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('--jsonl', '--jsonl', [CompletionResultType]::ParameterName, 'Read one call per line and answer each with one line, until end of input')
            [CompletionResult]::new('--replay', '--replay', [CompletionResultType]::ParameterName, 'With --jsonl: each line is a recorded call, {"call": CALL, "ts": TIME, "session": ID, "caller": NAME} (all but "call" optional), decided and recorded as made then, there, by that caller, so a recorded day replays through one process')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Write a report envelope per call: verdict, call, corrections, warnings, error, feedback')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Do not write a line on stderr per correction, warning or rejection')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Do not write a line on stderr per correction, warning or rejection')
            [CompletionResult]::new('--no-telemetry', '--no-telemetry', [CompletionResultType]::ParameterName, 'Do not record decisions in the telemetry store')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Write every stage''s decision on stderr: envelope, corrections, each policy check with the rule it applied, limits with counts, the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'metagate;mcp' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Session the calls belong to (recorded with each decision and outcome)')
            [CompletionResult]::new('--caller', '--caller', [CompletionResultType]::ParameterName, 'Who is calling: an agent, persona or user (recorded with each decision)')
            [CompletionResult]::new('--intent', '--intent', [CompletionResultType]::ParameterName, 'What the caller is doing: one of the policy''s intents. Tools it does not allow are left out of tools/list, and refused if called')
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Serve MCP''s Streamable HTTP transport on ADDR (HOST:PORT; port 0 picks one, said on stderr) instead of stdio: each HTTP session runs its own SERVER_COMMAND and is a metagate session of its own, its caller the bearer token''s ([mcp] tokens in the policy); a request without a known token gets 401 unless [mcp] unauthenticated_loopback = true lets loopback requests in as --caller')
            [CompletionResult]::new('--upstream', '--upstream', [CompletionResultType]::ParameterName, 'Relay to the MCP server at URL (http://…, its Streamable HTTP endpoint) instead of running SERVER_COMMAND; with --listen, each session gets an upstream session of its own')
            [CompletionResult]::new('--print-config', '--print-config', [CompletionResultType]::ParameterName, 'Write the snippet that starts this proxy, as it is configured now (--db, --policy and the server command made absolute), into CLIENT''s MCP configuration; the file it goes in on each platform is said on stderr')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('--no-telemetry', '--no-telemetry', [CompletionResultType]::ParameterName, 'Do not record decisions and tool outcomes in the telemetry store')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Write every stage of each tools/call decision on stderr: envelope, corrections, each policy check with the rule it applied, the verdict')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Do not write a line on stderr per correction, warning or refusal')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Do not write a line on stderr per correction, warning or refusal')
            [CompletionResult]::new('--sandbox', '--sandbox', [CompletionResultType]::ParameterName, 'Run the server inside the boundary `metagate run` runs commands in (the policy''s [run]: it writes only under the path root and [run] write, reads none of metagate''s own files, reaches no network unless [run] network = true); [run] sandbox_mcp = true does too')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'metagate;run' {
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'Import tool definitions (repeatable), as gate does')
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Session the calls belong to (recorded with each decision and outcome)')
            [CompletionResult]::new('--caller', '--caller', [CompletionResultType]::ParameterName, 'Who is calling (recorded with each decision)')
            [CompletionResult]::new('--intent', '--intent', [CompletionResultType]::ParameterName, 'What the caller is doing: one of the policy''s intents')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds a command may run before it and everything it started are killed [default: [run] timeout_secs, else 120]')
            [CompletionResult]::new('--memory', '--memory', [CompletionResultType]::ParameterName, 'Address space per process, in MiB [default: [run] memory_mb, else 16384]')
            [CompletionResult]::new('--processes', '--processes', [CompletionResultType]::ParameterName, 'Processes at once [default: [run] processes, else 1024]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'KiB of stdout and of stderr kept, each; the rest is cut [default: [run] output_kb, else 1024]')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('--jsonl', '--jsonl', [CompletionResultType]::ParameterName, 'Read one call per line and answer each with one line (after its command ended), until end of input')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Do not write a line on stderr per correction, warning or rejection')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Do not write a line on stderr per correction, warning or rejection')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Write every stage of each decision on stderr, and what the kernel enforces')
            [CompletionResult]::new('--no-telemetry', '--no-telemetry', [CompletionResultType]::ParameterName, 'Do not record decisions and outcomes in the telemetry store')
            [CompletionResult]::new('--network', '--network', [CompletionResultType]::ParameterName, 'Let the command reach the network (the policy''s [run] network = true does too)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'metagate;record' {
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'All or nothing: one bad line and no line is stored')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'metagate;lint' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--deny', '--deny', [CompletionResultType]::ParameterName, 'Fail (exit 1) on findings at or above this severity')
            [CompletionResult]::new('--ignore', '--ignore', [CompletionResultType]::ParameterName, 'Drop the findings of this code, e.g. MG110 (repeatable)')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'Import tool definitions, as gate does (repeatable)')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Explain a diagnostic code (MG003, or its name); `all` lists every code')
            [CompletionResult]::new('--caller', '--caller', [CompletionResultType]::ParameterName, 'Check every call as made by this caller: its allow and deny lists and its own intent')
            [CompletionResult]::new('--intent', '--intent', [CompletionResultType]::ParameterName, 'Check every call under this intent of the policy, as `gate --intent` does')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('--exit-zero', '--exit-zero', [CompletionResultType]::ParameterName, 'Exit 0 even when there are findings (report-only jobs); failures still exit 2')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'metagate;policy' {
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print the effective policy as TOML, every default filled in')
            [CompletionResult]::new('which', 'which', [CompletionResultType]::ParameterValue, 'Say which policy file is in force and why (--policy, $METAGATE_POLICY, the nearest metagate.toml here or above, the user''s file, or the built-in policy)')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Validate a policy file; errors name the key and line (exit 2 when invalid)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;policy;show' {
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'metagate;policy;which' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'metagate;policy;check' {
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'metagate;policy;help' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print the effective policy as TOML, every default filled in')
            [CompletionResult]::new('which', 'which', [CompletionResultType]::ParameterValue, 'Say which policy file is in force and why (--policy, $METAGATE_POLICY, the nearest metagate.toml here or above, the user''s file, or the built-in policy)')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Validate a policy file; errors name the key and line (exit 2 when invalid)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;policy;help;show' {
            break
        }
        'metagate;policy;help;which' {
            break
        }
        'metagate;policy;help;check' {
            break
        }
        'metagate;policy;help;help' {
            break
        }
        'metagate;db' {
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('copy', 'copy', [CompletionResultType]::ParameterValue, 'Copy one store into another, SQLite or PostgreSQL either way, or merge its history in')
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Path, schema version, rows per table and the time span the store covers')
            [CompletionResult]::new('prune', 'prune', [CompletionResultType]::ParameterValue, 'Delete telemetry older than a cutoff, keeping what a stored evaluate run still needs')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;db;copy' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('--merge', '--merge', [CompletionResultType]::ParameterName, 'Add the source''s history to the target''s own, under new ids')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'metagate;db;info' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'metagate;db;prune' {
            [CompletionResult]::new('--before', '--before', [CompletionResultType]::ParameterName, 'The cutoff: a duration back from now (90d, 12w, 24h) or an RFC 3339 time')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Count what would be deleted, delete nothing')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'metagate;db;help' {
            [CompletionResult]::new('copy', 'copy', [CompletionResultType]::ParameterValue, 'Copy one store into another, SQLite or PostgreSQL either way, or merge its history in')
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Path, schema version, rows per table and the time span the store covers')
            [CompletionResult]::new('prune', 'prune', [CompletionResultType]::ParameterValue, 'Delete telemetry older than a cutoff, keeping what a stored evaluate run still needs')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;db;help;copy' {
            break
        }
        'metagate;db;help;info' {
            break
        }
        'metagate;db;help;prune' {
            break
        }
        'metagate;db;help;help' {
            break
        }
        'metagate;evaluate' {
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Start of the window: a duration back from now (7d, 24h, 30m, 90s, 2w), a date (2026-11-25: its midnight, UTC) or an RFC 3339 time')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'End of the window (exclusive), as --since [default: now]')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: a table, JSON, or one self-contained HTML page (each tool''s nights as a chart, change points marked, findings with their evidence and sessions)')
            [CompletionResult]::new('--emit-policy-patch', '--emit-policy-patch', [CompletionResultType]::ParameterName, 'Write the proposed argument aliases as a policy fragment (usable alone: it carries the policy''s imports; or merge its alias tables into your policy)')
            [CompletionResult]::new('--accept', '--accept', [CompletionResultType]::ParameterName, 'Mark a recommendation accepted (by its id) instead of running the pass')
            [CompletionResult]::new('--reject', '--reject', [CompletionResultType]::ParameterName, 'Mark a recommendation rejected (by its id) instead of running the pass: it is muted until its rate worsens past the policy''s mute_margin (25% and a point, by default)')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit with status 1 when, since the previous stored run, a finding at or above the confidence floor is new or reopened (new), new, reopened or worse (worse), or anything changed (any); findings under the floor are listed apart and never fail the run')
            [CompletionResult]::new('--confidence-floor', '--confidence-floor', [CompletionResultType]::ParameterName, 'The confidence a finding needs to count for --fail-on (0 to 1) [default: the policy''s [evaluate] confidence_floor, 0.5]')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Compute and report, but store nothing (every store''s bytes stay as they are)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Show muted (rejected) recommendations too')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'One stored recommendation with its evidence (and the re-asks stored against its tool)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;evaluate;show' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'metagate;evaluate;help' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'One stored recommendation with its evidence (and the re-asks stored against its tool)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;evaluate;help;show' {
            break
        }
        'metagate;evaluate;help;help' {
            break
        }
        'metagate;tools' {
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('health', 'health', [CompletionResultType]::ParameterValue, 'One row per tool and method: calls, shares, referrals, user corrections, utility, cohesion')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check tool definitions before a model meets them: contradictions, JSON Schema the gate reads around, and constructs known to break constrained decoding (exit 1 when any is found; notes, constraints decoding leaves to the model, never fail it)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;tools;health' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--top', '--top', [CompletionResultType]::ParameterName, 'At most this many entries [default: 12 for known-tools, else all]')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'known-tools: the block is never longer than this many characters')
            [CompletionResult]::new('--sort', '--sort', [CompletionResultType]::ParameterName, 'Row order (known-tools always ranks)')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'metagate;tools;check' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'metagate;tools;help' {
            [CompletionResult]::new('health', 'health', [CompletionResultType]::ParameterValue, 'One row per tool and method: calls, shares, referrals, user corrections, utility, cohesion')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check tool definitions before a model meets them: contradictions, JSON Schema the gate reads around, and constructs known to break constrained decoding (exit 1 when any is found; notes, constraints decoding leaves to the model, never fail it)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;tools;help;health' {
            break
        }
        'metagate;tools;help;check' {
            break
        }
        'metagate;tools;help;help' {
            break
        }
        'metagate;permit' {
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('grant', 'grant', [CompletionResultType]::ParameterValue, 'Allow a capability for a while')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Show grants: the live ones, or (--all) every one with the audit trail')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'End a grant now, or (--all) every grant not yet revoked')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;permit;grant' {
            [CompletionResult]::new('--capability', '--capability', [CompletionResultType]::ParameterName, 'The capability to allow (one the policy''s [permit] require names)')
            [CompletionResult]::new('--scope', '--scope', [CompletionResultType]::ParameterName, 'Limit the grant to a file or folder (inside the policy''s path root; path:NAME is never read as a glob), a path glob (./docs/*.md) or a host (example.com, *.example.com, host:NAME); repeatable')
            [CompletionResult]::new('--for', '--for', [CompletionResultType]::ParameterName, 'How long the grant lasts: 90s, 5m, 15m, 1h (at most 30d)')
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Bind the grant to one session (gate --session / METAGATE_SESSION)')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why, for the audit trail')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'metagate;permit;list' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Every grant (expired and revoked too) and every granted, revoked, used and denied event')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'metagate;permit;revoke' {
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy''s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Revoke every grant not yet revoked: live, dated later, and expired (so that none comes back if the clock moves back); prints how many were live')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'metagate;permit;help' {
            [CompletionResult]::new('grant', 'grant', [CompletionResultType]::ParameterValue, 'Allow a capability for a while')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Show grants: the live ones, or (--all) every one with the audit trail')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'End a grant now, or (--all) every grant not yet revoked')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;permit;help;grant' {
            break
        }
        'metagate;permit;help;list' {
            break
        }
        'metagate;permit;help;revoke' {
            break
        }
        'metagate;permit;help;help' {
            break
        }
        'metagate;help' {
            [CompletionResult]::new('gate', 'gate', [CompletionResultType]::ParameterValue, 'Correct or reject a tool call read on stdin')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Gate every tool call between an MCP client and an MCP server (stdio)')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Decide a shell tool''s call as gate does, and run its command inside a boundary the kernel enforces')
            [CompletionResult]::new('record', 'record', [CompletionResultType]::ParameterValue, 'Append tool outcomes and user turns to the telemetry store')
            [CompletionResult]::new('lint', 'lint', [CompletionResultType]::ParameterValue, 'Check recorded tool-call traces with the gate''s rules, for CI')
            [CompletionResult]::new('policy', 'policy', [CompletionResultType]::ParameterValue, 'Show or check policy files')
            [CompletionResult]::new('db', 'db', [CompletionResultType]::ParameterValue, 'Look at the telemetry store')
            [CompletionResult]::new('evaluate', 'evaluate', [CompletionResultType]::ParameterValue, 'The out-of-band pass: tool health, user corrections, recommendations, learned aliases')
            [CompletionResult]::new('tools', 'tools', [CompletionResultType]::ParameterValue, 'Look at tools: health and cohesion, for people and prompts')
            [CompletionResult]::new('permit', 'permit', [CompletionResultType]::ParameterValue, 'Grant, list and revoke time-boxed capability grants that gate enforces')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'metagate;help;gate' {
            break
        }
        'metagate;help;mcp' {
            break
        }
        'metagate;help;run' {
            break
        }
        'metagate;help;record' {
            break
        }
        'metagate;help;lint' {
            break
        }
        'metagate;help;policy' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print the effective policy as TOML, every default filled in')
            [CompletionResult]::new('which', 'which', [CompletionResultType]::ParameterValue, 'Say which policy file is in force and why (--policy, $METAGATE_POLICY, the nearest metagate.toml here or above, the user''s file, or the built-in policy)')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Validate a policy file; errors name the key and line (exit 2 when invalid)')
            break
        }
        'metagate;help;policy;show' {
            break
        }
        'metagate;help;policy;which' {
            break
        }
        'metagate;help;policy;check' {
            break
        }
        'metagate;help;db' {
            [CompletionResult]::new('copy', 'copy', [CompletionResultType]::ParameterValue, 'Copy one store into another, SQLite or PostgreSQL either way, or merge its history in')
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Path, schema version, rows per table and the time span the store covers')
            [CompletionResult]::new('prune', 'prune', [CompletionResultType]::ParameterValue, 'Delete telemetry older than a cutoff, keeping what a stored evaluate run still needs')
            break
        }
        'metagate;help;db;copy' {
            break
        }
        'metagate;help;db;info' {
            break
        }
        'metagate;help;db;prune' {
            break
        }
        'metagate;help;evaluate' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'One stored recommendation with its evidence (and the re-asks stored against its tool)')
            break
        }
        'metagate;help;evaluate;show' {
            break
        }
        'metagate;help;tools' {
            [CompletionResult]::new('health', 'health', [CompletionResultType]::ParameterValue, 'One row per tool and method: calls, shares, referrals, user corrections, utility, cohesion')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check tool definitions before a model meets them: contradictions, JSON Schema the gate reads around, and constructs known to break constrained decoding (exit 1 when any is found; notes, constraints decoding leaves to the model, never fail it)')
            break
        }
        'metagate;help;tools;health' {
            break
        }
        'metagate;help;tools;check' {
            break
        }
        'metagate;help;permit' {
            [CompletionResult]::new('grant', 'grant', [CompletionResultType]::ParameterValue, 'Allow a capability for a while')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Show grants: the live ones, or (--all) every one with the audit trail')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'End a grant now, or (--all) every grant not yet revoked')
            break
        }
        'metagate;help;permit;grant' {
            break
        }
        'metagate;help;permit;list' {
            break
        }
        'metagate;help;permit;revoke' {
            break
        }
        'metagate;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}

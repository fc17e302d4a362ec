# metagate completions, written from metagate's command line, not by hand: docs/development.md says how to write them again.
# Install: cp metagate.fish ~/.config/fish/completions/
# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_metagate_global_optspecs
    string join \n policy= db= h/help V/version
end

function __fish_metagate_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_metagate_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_metagate_using_subcommand
    set -l cmd (__fish_metagate_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c metagate -n "__fish_metagate_needs_command" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_needs_command" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_needs_command" -s V -l version -d 'Print version'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "gate" -d 'Correct or reject a tool call read on stdin'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "mcp" -d 'Gate every tool call between an MCP client and an MCP server (stdio)'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "run" -d 'Decide a shell tool\'s call as gate does, and run its command inside a boundary the kernel enforces'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "record" -d 'Append tool outcomes and user turns to the telemetry store'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "lint" -d 'Check recorded tool-call traces with the gate\'s rules, for CI'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "policy" -d 'Show or check policy files'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "db" -d 'Look at the telemetry store'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "evaluate" -d 'The out-of-band pass: tool health, user corrections, recommendations, learned aliases'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "tools" -d 'Look at tools: health and cohesion, for people and prompts'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "permit" -d 'Grant, list and revoke time-boxed capability grants that gate enforces'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l emit -d 'Write calls in this envelope instead of the one they came in' -r -f -a "agent-zero\t'{"tool_name", "tool_args"}'
openai\t'OpenAI chat tool_calls item'
openai-responses\t'OpenAI Responses function_call item'
anthropic\t'Anthropic tool_use block'
mcp\t'MCP tools/call request'
gemini\t'Gemini functionCall part'
plain\t'{"name", "arguments"}'
llama\t'{"name", "parameters"} (Llama)'
langchain\t'{"name", "args", "type": "tool_call"} (LangChain)'"
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l tools -d 'Import tool definitions: an OpenAI tools array, an MCP tools/list result or an Anthropic tools array (repeatable)' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l session -d 'Session the calls belong to (recorded with each decision)' -r
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l caller -d 'Who is calling: an agent, persona or user (recorded with each decision)' -r
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l intent -d 'What the caller is doing: one of the policy\'s intents, which decides the tools it may use (recorded with each decision)' -r
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l jsonl -d 'Read one call per line and answer each with one line, until end of input'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l replay -d 'With --jsonl: each line is a recorded call, {"call": CALL, "ts": TIME, "session": ID, "caller": NAME} (all but "call" optional), decided and recorded as made then, there, by that caller, so a recorded day replays through one process'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l report -d 'Write a report envelope per call: verdict, call, corrections, warnings, error, feedback'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -s q -l quiet -d 'Do not write a line on stderr per correction, warning or rejection'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l no-telemetry -d 'Do not record decisions in the telemetry store'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l explain -d 'Write every stage\'s decision on stderr: envelope, corrections, each policy check with the rule it applied, limits with counts, the verdict'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -l session -d 'Session the calls belong to (recorded with each decision and outcome)' -r
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -l caller -d 'Who is calling: an agent, persona or user (recorded with each decision)' -r
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -l intent -d 'What the caller is doing: one of the policy\'s intents. Tools it does not allow are left out of tools/list, and refused if called' -r
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -l listen -d 'Serve MCP\'s Streamable HTTP transport on ADDR (HOST:PORT; port 0 picks one, said on stderr) instead of stdio: each HTTP session runs its own SERVER_COMMAND and is a metagate session of its own, its caller the bearer token\'s ([mcp] tokens in the policy); a request without a known token gets 401 unless [mcp] unauthenticated_loopback = true lets loopback requests in as --caller' -r
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -l upstream -d 'Relay to the MCP server at URL (http://…, its Streamable HTTP endpoint) instead of running SERVER_COMMAND; with --listen, each session gets an upstream session of its own' -r
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -l print-config -d 'Write the snippet that starts this proxy, as it is configured now (--db, --policy and the server command made absolute), into CLIENT\'s MCP configuration; the file it goes in on each platform is said on stderr' -r -f -a "claude-desktop\t'Claude Desktop\'s claude_desktop_config.json (`mcpServers`)'
cursor\t'Cursor\'s mcp.json (`mcpServers`)'
vscode\t'VS Code\'s mcp.json (`servers`, type stdio)'
zed\t'Zed\'s settings.json (`context_servers`)'"
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -l no-telemetry -d 'Do not record decisions and tool outcomes in the telemetry store'
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -l explain -d 'Write every stage of each tools/call decision on stderr: envelope, corrections, each policy check with the rule it applied, the verdict'
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -s q -l quiet -d 'Do not write a line on stderr per correction, warning or refusal'
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -l sandbox -d 'Run the server inside the boundary `metagate run` runs commands in (the policy\'s [run]: it writes only under the path root and [run] write, reads none of metagate\'s own files, reaches no network unless [run] network = true); [run] sandbox_mcp = true does too'
complete -c metagate -n "__fish_metagate_using_subcommand mcp" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand run" -l tools -d 'Import tool definitions (repeatable), as gate does' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand run" -l session -d 'Session the calls belong to (recorded with each decision and outcome)' -r
complete -c metagate -n "__fish_metagate_using_subcommand run" -l caller -d 'Who is calling (recorded with each decision)' -r
complete -c metagate -n "__fish_metagate_using_subcommand run" -l intent -d 'What the caller is doing: one of the policy\'s intents' -r
complete -c metagate -n "__fish_metagate_using_subcommand run" -l timeout -d 'Seconds a command may run before it and everything it started are killed [default: [run] timeout_secs, else 120]' -r
complete -c metagate -n "__fish_metagate_using_subcommand run" -l memory -d 'Address space per process, in MiB [default: [run] memory_mb, else 16384]' -r
complete -c metagate -n "__fish_metagate_using_subcommand run" -l processes -d 'Processes at once [default: [run] processes, else 1024]' -r
complete -c metagate -n "__fish_metagate_using_subcommand run" -l output -d 'KiB of stdout and of stderr kept, each; the rest is cut [default: [run] output_kb, else 1024]' -r
complete -c metagate -n "__fish_metagate_using_subcommand run" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand run" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand run" -l jsonl -d 'Read one call per line and answer each with one line (after its command ended), until end of input'
complete -c metagate -n "__fish_metagate_using_subcommand run" -s q -l quiet -d 'Do not write a line on stderr per correction, warning or rejection'
complete -c metagate -n "__fish_metagate_using_subcommand run" -l explain -d 'Write every stage of each decision on stderr, and what the kernel enforces'
complete -c metagate -n "__fish_metagate_using_subcommand run" -l no-telemetry -d 'Do not record decisions and outcomes in the telemetry store'
complete -c metagate -n "__fish_metagate_using_subcommand run" -l network -d 'Let the command reach the network (the policy\'s [run] network = true does too)'
complete -c metagate -n "__fish_metagate_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand record" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand record" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand record" -l strict -d 'All or nothing: one bad line and no line is stored'
complete -c metagate -n "__fish_metagate_using_subcommand record" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l format -d 'Output format' -r -f -a "human\t'Compiler-style lines and a summary (colour on a terminal)'
json\t'One JSON document: diagnostics, failures, summary'
sarif\t'SARIF 2.1.0, for code-scanning services'
github\t'GitHub Actions workflow commands (annotations)'"
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l deny -d 'Fail (exit 1) on findings at or above this severity' -r -f -a "error\t'Calls the gate would reject'
warning\t'Calls the gate would correct, and rejections'"
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l ignore -d 'Drop the findings of this code, e.g. MG110 (repeatable)' -r
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l tools -d 'Import tool definitions, as gate does (repeatable)' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l explain -d 'Explain a diagnostic code (MG003, or its name); `all` lists every code' -r
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l caller -d 'Check every call as made by this caller: its allow and deny lists and its own intent' -r
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l intent -d 'Check every call under this intent of the policy, as `gate --intent` does' -r
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l exit-zero -d 'Exit 0 even when there are findings (report-only jobs); failures still exit 2'
complete -c metagate -n "__fish_metagate_using_subcommand lint" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show which check help" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show which check help" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show which check help" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show which check help" -f -a "show" -d 'Print the effective policy as TOML, every default filled in'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show which check help" -f -a "which" -d 'Say which policy file is in force and why (--policy, $METAGATE_POLICY, the nearest metagate.toml here or above, the user\'s file, or the built-in policy)'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show which check help" -f -a "check" -d 'Validate a policy file; errors name the key and line (exit 2 when invalid)'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show which check help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from show" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from show" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from which" -l format -d 'Output format' -r -f -a "text\t''
json\t''"
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from which" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from which" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from which" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from check" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from check" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print the effective policy as TOML, every default filled in'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "which" -d 'Say which policy file is in force and why (--policy, $METAGATE_POLICY, the nearest metagate.toml here or above, the user\'s file, or the built-in policy)'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "check" -d 'Validate a policy file; errors name the key and line (exit 2 when invalid)'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from copy info prune help" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from copy info prune help" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from copy info prune help" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from copy info prune help" -f -a "copy" -d 'Copy one store into another, SQLite or PostgreSQL either way, or merge its history in'
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from copy info prune help" -f -a "info" -d 'Path, schema version, rows per table and the time span the store covers'
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from copy info prune help" -f -a "prune" -d 'Delete telemetry older than a cutoff, keeping what a stored evaluate run still needs'
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from copy info prune help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from copy" -l format -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from copy" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from copy" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from copy" -l merge -d 'Add the source\'s history to the target\'s own, under new ids'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from copy" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from info" -l format -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from info" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from info" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from info" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from prune" -l before -d 'The cutoff: a duration back from now (90d, 12w, 24h) or an RFC 3339 time' -r
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from prune" -l format -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from prune" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from prune" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from prune" -l dry-run -d 'Count what would be deleted, delete nothing'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from prune" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "copy" -d 'Copy one store into another, SQLite or PostgreSQL either way, or merge its history in'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "info" -d 'Path, schema version, rows per table and the time span the store covers'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "prune" -d 'Delete telemetry older than a cutoff, keeping what a stored evaluate run still needs'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l since -d 'Start of the window: a duration back from now (7d, 24h, 30m, 90s, 2w), a date (2026-11-25: its midnight, UTC) or an RFC 3339 time' -r
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l until -d 'End of the window (exclusive), as --since [default: now]' -r
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l format -d 'Output format: a table, JSON, or one self-contained HTML page (each tool\'s nights as a chart, change points marked, findings with their evidence and sessions)' -r -f -a "table\t'Tables for people'
json\t'One JSON object'
html\t'One self-contained HTML page with inline SVG charts'"
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l emit-policy-patch -d 'Write the proposed argument aliases as a policy fragment (usable alone: it carries the policy\'s imports; or merge its alias tables into your policy)' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l accept -d 'Mark a recommendation accepted (by its id) instead of running the pass' -r
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l reject -d 'Mark a recommendation rejected (by its id) instead of running the pass: it is muted until its rate worsens past the policy\'s mute_margin (25% and a point, by default)' -r
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l fail-on -d 'Exit with status 1 when, since the previous stored run, a finding at or above the confidence floor is new or reopened (new), new, reopened or worse (worse), or anything changed (any); findings under the floor are listed apart and never fail the run' -r -f -a "new\t'A new finding, or a rejected one whose rate worsened past the mute margin (reopened)'
worse\t'A new or reopened finding, or one whose confidence rose'
any\t'Any change since the previous run: new, worse, better or resolved'"
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l confidence-floor -d 'The confidence a finding needs to count for --fail-on (0 to 1) [default: the policy\'s [evaluate] confidence_floor, 0.5]' -r
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l dry-run -d 'Compute and report, but store nothing (every store\'s bytes stay as they are)'
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -l all -d 'Show muted (rejected) recommendations too'
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -f -a "show" -d 'One stored recommendation with its evidence (and the re-asks stored against its tool)'
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and not __fish_seen_subcommand_from show help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and __fish_seen_subcommand_from show" -l format -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and __fish_seen_subcommand_from show" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and __fish_seen_subcommand_from show" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and __fish_seen_subcommand_from help" -f -a "show" -d 'One stored recommendation with its evidence (and the re-asks stored against its tool)'
complete -c metagate -n "__fish_metagate_using_subcommand evaluate; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand tools; and not __fish_seen_subcommand_from health check help" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand tools; and not __fish_seen_subcommand_from health check help" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand tools; and not __fish_seen_subcommand_from health check help" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand tools; and not __fish_seen_subcommand_from health check help" -f -a "health" -d 'One row per tool and method: calls, shares, referrals, user corrections, utility, cohesion'
complete -c metagate -n "__fish_metagate_using_subcommand tools; and not __fish_seen_subcommand_from health check help" -f -a "check" -d 'Check tool definitions before a model meets them: contradictions, JSON Schema the gate reads around, and constructs known to break constrained decoding (exit 1 when any is found; notes, constraints decoding leaves to the model, never fail it)'
complete -c metagate -n "__fish_metagate_using_subcommand tools; and not __fish_seen_subcommand_from health check help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from health" -l format -d 'Output format' -r -f -a "table\t''
json\t''
known-tools\t'A <known_tools> block for a Tool Builder prompt'"
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from health" -l top -d 'At most this many entries [default: 12 for known-tools, else all]' -r
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from health" -l budget -d 'known-tools: the block is never longer than this many characters' -r
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from health" -l sort -d 'Row order (known-tools always ranks)' -r -f -a "calls\t'Most calls first'
utility\t'Lowest utility first'
corrections\t'Most user corrections first'
boundary\t'Most boundary referrals first'
name\t'By name'
rank\t'Degraded last, then utility x recency'"
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from health" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from health" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from health" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from check" -l format -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from check" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from check" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from help" -f -a "health" -d 'One row per tool and method: calls, shares, referrals, user corrections, utility, cohesion'
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from help" -f -a "check" -d 'Check tool definitions before a model meets them: contradictions, JSON Schema the gate reads around, and constructs known to break constrained decoding (exit 1 when any is found; notes, constraints decoding leaves to the model, never fail it)'
complete -c metagate -n "__fish_metagate_using_subcommand tools; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and not __fish_seen_subcommand_from grant list revoke help" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand permit; and not __fish_seen_subcommand_from grant list revoke help" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand permit; and not __fish_seen_subcommand_from grant list revoke help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and not __fish_seen_subcommand_from grant list revoke help" -f -a "grant" -d 'Allow a capability for a while'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and not __fish_seen_subcommand_from grant list revoke help" -f -a "list" -d 'Show grants: the live ones, or (--all) every one with the audit trail'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and not __fish_seen_subcommand_from grant list revoke help" -f -a "revoke" -d 'End a grant now, or (--all) every grant not yet revoked'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and not __fish_seen_subcommand_from grant list revoke help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from grant" -l capability -d 'The capability to allow (one the policy\'s [permit] require names)' -r
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from grant" -l scope -d 'Limit the grant to a file or folder (inside the policy\'s path root; path:NAME is never read as a glob), a path glob (./docs/*.md) or a host (example.com, *.example.com, host:NAME); repeatable' -r
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from grant" -l for -d 'How long the grant lasts: 90s, 5m, 15m, 1h (at most 30d)' -r
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from grant" -l session -d 'Bind the grant to one session (gate --session / METAGATE_SESSION)' -r
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from grant" -l reason -d 'Why, for the audit trail' -r
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from grant" -l format -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from grant" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from grant" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from grant" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from list" -l format -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from list" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from list" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from list" -l all -d 'Every grant (expired and revoked too) and every granted, revoked, used and denied event'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from revoke" -l policy -d 'Policy file [default: $METAGATE_POLICY, the nearest metagate.toml in the working folder or above it (up to $HOME when inside it), $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy; `policy which` says which]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from revoke" -l db -d 'Telemetry store: an SQLite file, or a postgres://USER@HOST/DB URL shared by a fleet [default: $METAGATE_DB, else the policy\'s [store] url, else $XDG_STATE_HOME/metagate/metagate.db]; `evaluate` takes several, files and URLs mixed, to merge shards' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from revoke" -l all -d 'Revoke every grant not yet revoked: live, dated later, and expired (so that none comes back if the clock moves back); prints how many were live'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from revoke" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from help" -f -a "grant" -d 'Allow a capability for a while'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from help" -f -a "list" -d 'Show grants: the live ones, or (--all) every one with the audit trail'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from help" -f -a "revoke" -d 'End a grant now, or (--all) every grant not yet revoked'
complete -c metagate -n "__fish_metagate_using_subcommand permit; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate mcp run record lint policy db evaluate tools permit help" -f -a "gate" -d 'Correct or reject a tool call read on stdin'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate mcp run record lint policy db evaluate tools permit help" -f -a "mcp" -d 'Gate every tool call between an MCP client and an MCP server (stdio)'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate mcp run record lint policy db evaluate tools permit help" -f -a "run" -d 'Decide a shell tool\'s call as gate does, and run its command inside a boundary the kernel enforces'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate mcp run record lint policy db evaluate tools permit help" -f -a "record" -d 'Append tool outcomes and user turns to the telemetry store'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate mcp run record lint policy db evaluate tools permit help" -f -a "lint" -d 'Check recorded tool-call traces with the gate\'s rules, for CI'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate mcp run record lint policy db evaluate tools permit help" -f -a "policy" -d 'Show or check policy files'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate mcp run record lint policy db evaluate tools permit help" -f -a "db" -d 'Look at the telemetry store'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate mcp run record lint policy db evaluate tools permit help" -f -a "evaluate" -d 'The out-of-band pass: tool health, user corrections, recommendations, learned aliases'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate mcp run record lint policy db evaluate tools permit help" -f -a "tools" -d 'Look at tools: health and cohesion, for people and prompts'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate mcp run record lint policy db evaluate tools permit help" -f -a "permit" -d 'Grant, list and revoke time-boxed capability grants that gate enforces'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate mcp run record lint policy db evaluate tools permit help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "show" -d 'Print the effective policy as TOML, every default filled in'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "which" -d 'Say which policy file is in force and why (--policy, $METAGATE_POLICY, the nearest metagate.toml here or above, the user\'s file, or the built-in policy)'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "check" -d 'Validate a policy file; errors name the key and line (exit 2 when invalid)'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "copy" -d 'Copy one store into another, SQLite or PostgreSQL either way, or merge its history in'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "info" -d 'Path, schema version, rows per table and the time span the store covers'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "prune" -d 'Delete telemetry older than a cutoff, keeping what a stored evaluate run still needs'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from evaluate" -f -a "show" -d 'One stored recommendation with its evidence (and the re-asks stored against its tool)'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from tools" -f -a "health" -d 'One row per tool and method: calls, shares, referrals, user corrections, utility, cohesion'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from tools" -f -a "check" -d 'Check tool definitions before a model meets them: contradictions, JSON Schema the gate reads around, and constructs known to break constrained decoding (exit 1 when any is found; notes, constraints decoding leaves to the model, never fail it)'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from permit" -f -a "grant" -d 'Allow a capability for a while'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from permit" -f -a "list" -d 'Show grants: the live ones, or (--all) every one with the audit trail'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from permit" -f -a "revoke" -d 'End a grant now, or (--all) every grant not yet revoked'

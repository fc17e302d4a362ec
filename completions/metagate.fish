# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_metagate_global_optspecs
    string join \n policy= db= now= h/help V/version
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

complete -c metagate -n "__fish_metagate_needs_command" -l policy -d 'Policy file [default: $METAGATE_POLICY, ./metagate.toml, $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy]' -r -F
complete -c metagate -n "__fish_metagate_needs_command" -l db -d 'Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db]' -r -F
complete -c metagate -n "__fish_metagate_needs_command" -l now -d 'Use this time as now (RFC 3339); for tests that need a clock they control' -r
complete -c metagate -n "__fish_metagate_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_needs_command" -s V -l version -d 'Print version'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "gate" -d 'Correct or reject a tool call read on stdin'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "record" -d 'Append tool outcomes and user turns to the telemetry store'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "lint" -d 'Check recorded tool-call traces with the gate\'s rules, for CI'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "policy" -d 'Show or check policy files'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "db" -d 'Look at the telemetry store'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "generate" -d 'Write shell completions and man pages (for packagers and the repository)'
complete -c metagate -n "__fish_metagate_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l emit -d 'Write calls in this envelope instead of the one they came in' -r -f -a "agent-zero\t'{"tool_name", "tool_args"}'
openai\t'OpenAI chat tool_calls item'
openai-responses\t'OpenAI Responses function_call item'
anthropic\t'Anthropic tool_use block'
mcp\t'MCP tools/call request'
gemini\t'Gemini functionCall part'
plain\t'{"name", "arguments"}'"
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l tools -d 'Import tool definitions: an OpenAI tools array, an MCP tools/list result or an Anthropic tools array (repeatable)' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l session -d 'Session the calls belong to (recorded with each decision)' -r
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l caller -d 'Who is calling: an agent, persona or user (recorded with each decision)' -r
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l intent -d 'What the caller is doing: one of the policy\'s intents, which decides the tools it may use (recorded with each decision)' -r
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l policy -d 'Policy file [default: $METAGATE_POLICY, ./metagate.toml, $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l db -d 'Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l now -d 'Use this time as now (RFC 3339); for tests that need a clock they control' -r
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l jsonl -d 'Read one call per line and answer each with one line, until end of input'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l report -d 'Write a report envelope per call: verdict, call, corrections, warnings, error, feedback'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -s q -l quiet -d 'Do not write a line on stderr per correction, warning or rejection'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l no-telemetry -d 'Do not record decisions in the telemetry store'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -l explain -d 'Write every stage\'s decision on stderr: envelope, corrections, each policy check with the rule it applied, limits with counts, the verdict'
complete -c metagate -n "__fish_metagate_using_subcommand gate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand record" -l policy -d 'Policy file [default: $METAGATE_POLICY, ./metagate.toml, $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand record" -l db -d 'Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand record" -l now -d 'Use this time as now (RFC 3339); for tests that need a clock they control' -r
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
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l policy -d 'Policy file [default: $METAGATE_POLICY, ./metagate.toml, $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l db -d 'Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l now -d 'Use this time as now (RFC 3339); for tests that need a clock they control' -r
complete -c metagate -n "__fish_metagate_using_subcommand lint" -l exit-zero -d 'Exit 0 even when there are findings (report-only jobs); failures still exit 2'
complete -c metagate -n "__fish_metagate_using_subcommand lint" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show check help" -l policy -d 'Policy file [default: $METAGATE_POLICY, ./metagate.toml, $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show check help" -l db -d 'Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show check help" -l now -d 'Use this time as now (RFC 3339); for tests that need a clock they control' -r
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show check help" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show check help" -f -a "show" -d 'Print the effective policy as TOML, every default filled in'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show check help" -f -a "check" -d 'Validate a policy file; errors name the key and line (exit 2 when invalid)'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and not __fish_seen_subcommand_from show check help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from show" -l policy -d 'Policy file [default: $METAGATE_POLICY, ./metagate.toml, $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from show" -l db -d 'Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from show" -l now -d 'Use this time as now (RFC 3339); for tests that need a clock they control' -r
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from check" -l policy -d 'Policy file [default: $METAGATE_POLICY, ./metagate.toml, $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from check" -l db -d 'Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from check" -l now -d 'Use this time as now (RFC 3339); for tests that need a clock they control' -r
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print the effective policy as TOML, every default filled in'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "check" -d 'Validate a policy file; errors name the key and line (exit 2 when invalid)'
complete -c metagate -n "__fish_metagate_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from info help" -l policy -d 'Policy file [default: $METAGATE_POLICY, ./metagate.toml, $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from info help" -l db -d 'Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from info help" -l now -d 'Use this time as now (RFC 3339); for tests that need a clock they control' -r
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from info help" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from info help" -f -a "info" -d 'Path, schema version, rows per table and the time span the store covers'
complete -c metagate -n "__fish_metagate_using_subcommand db; and not __fish_seen_subcommand_from info help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from info" -l format -d 'Output format' -r -f -a "table\t''
json\t''"
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from info" -l policy -d 'Policy file [default: $METAGATE_POLICY, ./metagate.toml, $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from info" -l db -d 'Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from info" -l now -d 'Use this time as now (RFC 3339); for tests that need a clock they control' -r
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from info" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "info" -d 'Path, schema version, rows per table and the time span the store covers'
complete -c metagate -n "__fish_metagate_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand generate" -l out -d 'Directory that receives completions/ and man/' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand generate" -l policy -d 'Policy file [default: $METAGATE_POLICY, ./metagate.toml, $XDG_CONFIG_HOME/metagate/metagate.toml, else the built-in policy]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand generate" -l db -d 'Telemetry store [default: $METAGATE_DB, else $XDG_STATE_HOME/metagate/metagate.db]' -r -F
complete -c metagate -n "__fish_metagate_using_subcommand generate" -l now -d 'Use this time as now (RFC 3339); for tests that need a clock they control' -r
complete -c metagate -n "__fish_metagate_using_subcommand generate" -s h -l help -d 'Print help'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate record lint policy db generate help" -f -a "gate" -d 'Correct or reject a tool call read on stdin'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate record lint policy db generate help" -f -a "record" -d 'Append tool outcomes and user turns to the telemetry store'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate record lint policy db generate help" -f -a "lint" -d 'Check recorded tool-call traces with the gate\'s rules, for CI'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate record lint policy db generate help" -f -a "policy" -d 'Show or check policy files'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate record lint policy db generate help" -f -a "db" -d 'Look at the telemetry store'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate record lint policy db generate help" -f -a "generate" -d 'Write shell completions and man pages (for packagers and the repository)'
complete -c metagate -n "__fish_metagate_using_subcommand help; and not __fish_seen_subcommand_from gate record lint policy db generate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "show" -d 'Print the effective policy as TOML, every default filled in'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "check" -d 'Validate a policy file; errors name the key and line (exit 2 when invalid)'
complete -c metagate -n "__fish_metagate_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "info" -d 'Path, schema version, rows per table and the time span the store covers'

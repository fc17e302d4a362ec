//! The EXAMPLES section of each man page, and the lines that open each generated file: how to
//! install it, and where the command that regenerates it is written down.

/// (what it does, the command) for the page of `name` (`metagate-db-prune`); every page has
/// some, and the tests run each command's words up to its first flag with `--help`.
pub fn for_page(name: &str) -> &'static [(&'static str, &'static str)] {
    match name {
        "metagate" => &[
            (
                "Correct one tool call; the corrected call is written on stdout:",
                "echo '{\"tool_name\":\"response\",\"tool_args\":{\"message\":\"hi\"}}' | metagate gate",
            ),
            (
                "Try things without recording them in the telemetry store:",
                "metagate gate --no-telemetry < call.json",
            ),
            (
                "Say which policy file is in force here, and why:",
                "metagate policy which",
            ),
        ],
        "metagate-gate" => &[
            (
                "Correct or reject one call; exit 1 when it is rejected:",
                "metagate gate < call.json",
            ),
            (
                "Keep one gate beside an agent loop, one call per line in and out:",
                "metagate gate --jsonl --quiet --session loop-1",
            ),
            (
                "Show every stage of the decision on stderr, recording nothing:",
                "metagate gate --explain --no-telemetry < call.json",
            ),
        ],
        "metagate-mcp" => &[
            (
                "Put the gate in front of an MCP server, as a client's configuration would:",
                "metagate --policy filesystem.toml mcp -- npx -y @modelcontextprotocol/server-filesystem /home/me/notes",
            ),
            (
                "Run the server inside the boundary metagate run runs commands in:",
                "metagate mcp --sandbox -- npx -y @modelcontextprotocol/server-filesystem /home/me/notes",
            ),
            (
                "Only the tools an intent allows are listed to the client:",
                "metagate mcp --intent reading -- npx -y @modelcontextprotocol/server-filesystem /home/me/notes",
            ),
        ],
        "metagate-run" => &[
            (
                "Decide a shell tool's call and run its command inside the boundary:",
                "metagate run --session loop-1 < call.json",
            ),
            (
                "Keep one beside an agent loop, a call per line, each command bounded to 30 s:",
                "metagate run --jsonl --timeout 30 --session loop-1",
            ),
        ],
        "metagate-record" => &[
            (
                "Record how a tool call went:",
                "echo '{\"type\":\"outcome\",\"session\":\"loop-1\",\"tool\":\"search_engine\",\"status\":\"ok\"}' | metagate record",
            ),
            (
                "Record a day's events, all or nothing:",
                "metagate record --strict events.jsonl",
            ),
        ],
        "metagate-lint" => &[
            ("Lint every trace under a folder:", "metagate lint traces/"),
            (
                "SARIF for code scanning, whatever was found:",
                "metagate lint --format sarif --exit-zero traces/ > lint.sarif",
            ),
            (
                "Explain a diagnostic code:",
                "metagate lint --explain MG003",
            ),
        ],
        "metagate-policy" => &[
            ("The effective policy:", "metagate policy show"),
            (
                "Check a policy for an MCP server against the server's own tools:",
                "metagate policy check filesystem.toml -- npx -y @modelcontextprotocol/server-filesystem /home/me/notes",
            ),
        ],
        "metagate-policy-show" => &[(
            "The policy a file makes, every default filled in:",
            "metagate --policy metagate.toml policy show",
        )],
        "metagate-policy-which" => &[
            (
                "Which policy file is in force here:",
                "metagate policy which",
            ),
            (
                "The same, for a script:",
                "metagate policy which --format json",
            ),
        ],
        "metagate-policy-check" => &[
            (
                "Check a policy file:",
                "metagate policy check metagate.toml",
            ),
            (
                "Check it with the tools an MCP server lists:",
                "metagate policy check filesystem.toml -- npx -y @modelcontextprotocol/server-filesystem /home/me/notes",
            ),
        ],
        "metagate-db" => &[
            ("What the store holds:", "metagate db info"),
            (
                "Keep 90 days of telemetry:",
                "metagate db prune --before 90d",
            ),
        ],
        "metagate-db-info" => &[
            ("What the default store holds:", "metagate db info"),
            (
                "Another store, for a script:",
                "metagate --db /tmp/try.db db info --format json",
            ),
        ],
        "metagate-db-prune" => &[
            (
                "Count what a 90-day cutoff would delete:",
                "metagate db prune --before 90d --dry-run",
            ),
            ("Delete it:", "metagate db prune --before 90d"),
        ],
        "metagate-db-copy" => &[
            (
                "Move a host's store to a fleet's PostgreSQL, its history merged in:",
                "metagate db copy --merge ~/.local/state/metagate/metagate.db postgres://metagate@db.internal/metagate",
            ),
            (
                "Copy a store to another file:",
                "metagate db copy metagate.db backup.db",
            ),
        ],
        "metagate-evaluate" => &[
            (
                "The nightly pass over the last week, under the agent's policy:",
                "metagate --policy ~/agent/metagate.toml evaluate --since 7d",
            ),
            (
                "Write the learned aliases as a policy fragment, storing nothing:",
                "metagate evaluate --dry-run --emit-policy-patch aliases.toml",
            ),
        ],
        "metagate-evaluate-show" => &[(
            "One recommendation with its evidence:",
            "metagate evaluate show rec_0451615ccfa8365f",
        )],
        "metagate-tools" => &[
            ("Health per tool and method:", "metagate tools health"),
            (
                "Check tool definitions before a model meets them:",
                "metagate tools check tools.json",
            ),
        ],
        "metagate-tools-health" => &[
            ("Health per tool and method:", "metagate tools health"),
            (
                "A bounded block for a model's prompt:",
                "metagate tools health --format known-tools",
            ),
        ],
        "metagate-tools-check" => &[
            (
                "Check an MCP tools/list result:",
                "metagate tools check tools.json",
            ),
            (
                "The same, for a script:",
                "metagate tools check --format json tools.json",
            ),
        ],
        "metagate-permit" => &[
            (
                "Grant at a terminal, answering its questions:",
                "metagate permit",
            ),
            ("The live grants:", "metagate permit list"),
        ],
        "metagate-permit-grant" => &[(
            "Allow running commands for 15 minutes, in one session:",
            "metagate permit grant --capability system_execute --for 15m --session loop-1 --reason 'deploy'",
        )],
        "metagate-permit-list" => &[
            ("The live grants:", "metagate permit list"),
            (
                "Every grant, with its audit trail:",
                "metagate permit list --all",
            ),
        ],
        "metagate-permit-revoke" => &[
            (
                "End one grant now (its id is in permit list):",
                "metagate permit revoke 0123456789abcdef0123456789abcdef",
            ),
            (
                "End every grant not yet revoked:",
                "metagate permit revoke --all",
            ),
        ],
        _ => &[],
    }
}

/// Where the command that regenerates these files is written down (one place).
const REGENERATE: &str = "written from metagate's command line, not by hand: docs/development.md says how to write them again";

/// The comment lines that open a man page.
pub fn man_header(page: &str) -> String {
    format!(
        ".\\\" {page}: {REGENERATE}.\n\
         .\\\" Install: install -Dm644 man/*.1 -t ~/.local/share/man/man1 (then `man {}`).\n",
        page.trim_end_matches(".1")
    )
}

/// The comment lines that open a completion script, by its file name; none for a format
/// that has no comments.
pub fn completion_header(file: &str) -> Option<String> {
    let install = match file {
        "metagate.bash" => {
            "cp metagate.bash ~/.local/share/bash-completion/completions/metagate (bash-completion loads it in new shells)"
        }
        "_metagate" => {
            "cp _metagate into a folder on $fpath, e.g. ~/.zfunc, with `fpath=(~/.zfunc $fpath); autoload -U compinit; compinit` in ~/.zshrc"
        }
        "metagate.fish" => "cp metagate.fish ~/.config/fish/completions/",
        "_metagate.ps1" => "add `. /path/to/_metagate.ps1` to the file $PROFILE names",
        "metagate.elv" => "cp metagate.elv ~/.config/elvish/lib/ and add `use metagate` to rc.elv",
        _ => return None,
    };
    Some(format!(
        "# metagate completions, {REGENERATE}.\n# Install: {install}\n"
    ))
}

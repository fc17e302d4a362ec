use std::path::{Path, PathBuf};

use super::*;

const CONSTRUCTS: &[&str] = &["$(", "`", "<(", ">(", "<<<"];
const DENIED: &[&str] = &[
    "sudo",
    "su",
    "doas",
    "eval",
    "mkfs",
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "pkexec",
    "sudoedit",
    "run0",
    "systemctl poweroff",
    "systemctl reboot",
    "init 0",
    "kill -9 1",
    "kill -9 -1",
    "parallel sudo",
    "metagate",
];
const PROTECTED: &[&str] = &[
    "/home/u/.local/state/metagate/metagate.db",
    "/home/u/.config/metagate/metagate.toml",
];
const VARS: &[&str] = &["METAGATE_DB", "METAGATE_POLICY"];

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A world where `./mg`, `/opt/mg` and `mg` on the path are the metagate binary, and
/// redirections may not write under `/etc`.
struct TestWorld;

impl World for TestWorld {
    fn redirect(&self, path: &str) -> Result<(), Refusal> {
        if path.starts_with("/etc") || path.contains(".env") {
            Err(Refusal(
                "it is outside the root or denied ([paths])".to_string(),
            ))
        } else {
            Ok(())
        }
    }
    fn is_own_binary(&self, command: &[u8]) -> bool {
        matches!(command, b"./mg" | b"/opt/mg" | b"mg")
    }
    fn program(&self, command: &[u8]) -> Option<Resolved> {
        let (name, forwards): (&[u8], _) = match command {
            b"editor" | b"vimdiff" | b"/usr/bin/editor" => (b"vim.basic", None),
            b"ls" => (b"busybox", None),
            b"command" | b"/usr/bin/command" => (
                b"command",
                Some(Forward {
                    builtin: true,
                    name: (*b"command").into(),
                }),
            ),
            b"py" => (b"python3.11", None),
            _ => return None,
        };
        Some(Resolved {
            name: name.into(),
            forwards,
        })
    }
}

pub(super) struct Setup {
    pub(super) constructs: Vec<String>,
    pub(super) denied: CommandList,
    allowed: Option<Vec<CommandPattern>>,
    pub(super) protected: Protected,
}

impl Setup {
    pub(super) fn new(allowed: Option<&[&str]>) -> Setup {
        let paths: Vec<PathBuf> = PROTECTED.iter().map(PathBuf::from).collect();
        Setup {
            constructs: strings(CONSTRUCTS),
            denied: patterns(DENIED).unwrap().into(),
            allowed: allowed.map(|a| patterns(a).unwrap()),
            protected: Protected::new(&paths, &strings(VARS), Some(Path::new("/home/u"))),
        }
    }

    pub(super) fn check(&self, command: &str) -> Option<Finding> {
        let rules = ShellRules {
            constructs: &self.constructs,
            denied: &self.denied,
            allowed: self.allowed.as_deref(),
            protected: &self.protected,
            world: &TestWorld,
        };
        check(command, &rules)
    }
}

pub(super) fn default_check(command: &str) -> Option<Finding> {
    Setup::new(None).check(command)
}

#[track_caller]
pub(super) fn expect_pass(command: &str) {
    if let Some(f) = default_check(command) {
        panic!("{command:?} was refused: {}", f.rule());
    }
}

#[track_caller]
pub(super) fn expect_refused(command: &str) -> Finding {
    match default_check(command) {
        Some(f) => f,
        None => panic!("{command:?} passed"),
    }
}

/// Every case issue 23 names, with what its refusal names: each passed the denylist reader
/// this check replaces, and bash runs what it hides.
pub(super) const ISSUE_CASES: &[(&str, &str)] = &[
    ("test -v 'a[$(sudo id)]'", "`test -v`"),
    ("[ -v 'a[$(sudo id)]' ]", "`[ -v`"),
    ("[[ -v 'a[$(sudo id)]' ]]", "`[[ … ]]`"),
    ("[[ 'a[$(sudo id)]' -eq 1 ]]", "`[[ … ]]`"),
    ("let 'a[$(sudo id)]'", "`let`"),
    ("printf -v 'a[$(sudo id)]' x", "`printf -v`"),
    ("echo x | read 'a[$(sudo id)]'", "`read`"),
    ("declare 'a[$(sudo id)]=1'", "`declare a["),
    ("export 'a[$(sudo id)]=1'", "`export a["),
    ("mapfile 'a[$(sudo id)]' < /dev/null", "`mapfile`"),
    ("getopts a 'a[$(sudo id)]' -a", "`getopts`"),
    ("shift 'a[$(sudo id)]'", "`shift a["),
    ("return 'a[$(sudo id)]'", "`return a["),
    ("exit 'a[$(sudo id)]'", "`exit a["),
    ("x=1; echo ${x:'a[$(sudo id)]'}", "`${X:offset}`"),
    ("sleep 1 & wait -n -p 'a[$(sudo id)]'", "`wait -p`"),
    ("printf -v x '%s' 'a[$(sudo id)]'; (( x ))", "`printf -v`"),
    (
        "test -v 'a[$(metagate permit grant --capability system_execute --for 30d --reason x)]'",
        "`test -v`",
    ),
    ("history -s 'xudo id'; fc -s x=s xudo", "`history`"),
    (
        "BASH_ENV=/dev/stdin bash -c : <<EOF\nsudo id\nEOF",
        "`BASH_ENV`",
    ),
    (
        "BASH_ENV=/proc/self/fd/0 bash -c : <<EOF\nsudo id\nEOF",
        "`BASH_ENV`",
    ),
    (
        "env BASH_ENV=/dev/stdin bash -c : <<EOF\nsudo id\nEOF",
        "`BASH_ENV`",
    ),
    (
        "export BASH_ENV=/dev/stdin; bash -c : <<EOF\nsudo id\nEOF",
        "`BASH_ENV`",
    ),
    ("ENV=/dev/stdin sh -ic : <<EOF\nsudo id\nEOF", "`ENV`"),
    ("ENV=/dev/stdin dash -i -c : <<EOF\nsudo id\nEOF", "`ENV`"),
    ("echo \"-c 'sudo id'\" | xargs bash", "`bash`"),
    (
        "GIT_EXTERNAL_DIFF='sudo id' git diff",
        "`GIT_EXTERNAL_DIFF`",
    ),
    (
        "git -c core.sshCommand='sudo id' fetch origin",
        "`core.sshCommand`",
    ),
    ("git -c core.pager='sudo id' log", "`core.pager`"),
    ("git -c diff.external='sudo id' diff", "`diff.external`"),
    ("awk 'BEGIN{system(\"sudo id\")}'", "`system`"),
    ("python3 -c 'import os; os.system(\"sudo id\")'", "-c`"),
    ("perl -e 'system(\"sudo id\")'", "`perl -e`"),
    (
        "node -e 'require(\"child_process\").execSync(\"sudo id\")'",
        "`node -e`",
    ),
    (
        "./mg permit grant --capability system_execute",
        "`metagate`",
    ),
    ("pkexec id", "`pkexec`"),
    ("sudoedit /etc/hosts", "`sudoedit`"),
    ("run0 id", "`run0`"),
    ("systemctl poweroff", "`systemctl poweroff`"),
    ("init 0", "`init 0`"),
    ("kill -9 1", "`kill -9 1`"),
    ("parallel sudo ::: id", "`parallel`"),
];

#[test]
fn issue_cases_are_refused() {
    for (case, names) in ISSUE_CASES {
        let finding = expect_refused(case);
        assert!(!finding.is_too_large(), "{case}");
        let rule = finding.rule();
        assert!(
            rule.contains(names),
            "{case:?}: {rule:?} does not name {names:?}"
        );
    }
}

/// Issue 24: removing or moving a folder that holds the store or the policy loses them as
/// surely as naming the file, and the limits, the loop breaker and the grant audit with them.
#[test]
fn removing_a_folder_that_holds_metagates_files_is_refused() {
    let refused = [
        "rm -rf ~/.local/state",
        "rm -rf ~/.local/state/",
        "rm -rf /home/u/.local",
        "rm -rf \"$HOME/.local\"",
        "rm -rf ~",
        "rm -rf /",
        "rm -rf /home",
        "cd ~/.local/state && rm -r metagate",
        "cd ~/.local && rm -rf st*",
        "cd ~ && rm -rf .l*",
        "cd ~/.config && rmdir metagate",
        "mv ~/.config ~/old",
        "srm -r ~/.local/state",
        "unlink ~/.config",
        "rm -rf .",
        "rm -rf ../..",
        "rm -rf /home/*/.local",
    ];
    for command in refused {
        match expect_refused(command) {
            Finding::Protected { path } => assert!(path.contains("metagate"), "{command}: {path}"),
            other => panic!("{command:?}: refused as {}", other.rule()),
        }
    }
    for command in [
        "rm -rf target",
        "rm -f build/*.o",
        "rm -rf ./dist node_modules",
        "rm notes.txt",
        "rm -rf /tmp/scratch",
        "mv a.txt b.txt",
        "rm -rf ~/.cache/pip",
        "rm -f -- -x",
        "ls ~",
        "du -sh ~/.local",
    ] {
        expect_pass(command);
    }
}

/// A refusal names the builtin it met, for every builtin the check models.
#[test]
fn every_modelled_builtin_is_named() {
    for name in super::builtins::MODELLED {
        let kind = super::builtins::lookup(name.as_bytes());
        assert!(
            kind.is_some_and(|k| !matches!(k, super::builtins::Kind::Refused { .. })),
            "{name}"
        );
    }
    for name in ["shift", "return", "exit", "break", "ulimit", "fg"] {
        expect_rule(&format!("{name} 'a[$(id)]'"), &format!("`{name} a["));
    }
}

/// Ordinary work passes, alone, in pipelines and in lists.
pub(super) const ORDINARY: &[&str] = &[
    "ls -la",
    "grep -r foo src",
    "python3 script.py",
    "cargo test",
    "git status",
    "make -j4",
    "find . -name '*.rs'",
    "ls -la | grep foo | wc -l",
    "cargo build && cargo test",
    "git status && git diff --stat",
    "make -j4 || echo failed",
    "find . -name '*.rs' | xargs wc -l",
    "cd src && ls",
    "python3 script.py --n 5 > out.txt 2>&1",
    "grep -rn 'fn main' src | head -n 5",
    "git log --oneline -n 10",
    "echo done",
    "echo \"Done!\"",
    "echo $HOME ${USER} ${LANG:-C}",
    "ls *.rs src/*.rs",
    "mkdir -p build/{debug,release}",
    "cat <<'EOF' > notes.txt\n$(not run) `nor this`\nEOF",
    "cat <<EOF\nhello $USER\nEOF",
    "if [ -f Cargo.toml ]; then cargo build; else echo none; fi",
    "for f in *.rs; do wc -l \"$f\"; done",
    "while false; do :; done",
    "( cd src && ls ) | sort",
    "{ echo a; echo b; } > out.txt",
    "export RUST_LOG=debug; cargo run",
    "RUST_BACKTRACE=1 cargo test -- --nocapture",
    "sed -i 's/foo/bar/g' src/main.rs",
    "awk '{print $1}' file.txt",
    "find . -name '*.tmp' -exec rm {} +",
    "find . -type f -exec grep -l foo {} \\;",
    "timeout 10 cargo test",
    "env LANG=C sort file.txt",
    "nohup python3 server.py > server.log 2>&1 &",
    "git commit -m 'fix: a (b)'",
    "python3 -m pytest -x tests/",
    "node build.js",
    "[ -d target ] || mkdir target",
    "test -n \"$x\" || echo empty",
    "printf '%s\\n' a b",
    "command -v cargo",
    "set -euo pipefail; ls",
    "ls \\\n  -la",
    "echo a # a comment with $(stuff)",
    "docker ps --format '{{.Names}}'",
    "curl -s https://example.com | head",
    "xargs -I {} echo {} < list.txt",
    "git -c color.ui=always log -1",
    "git config user.name 'A B'",
    "tar czf out.tgz src",
    "echo $'tab\\there'",
    "! grep -q x file",
    "time -p ls",
];

#[test]
fn ordinary_commands_pass() {
    for command in ORDINARY {
        expect_pass(command);
    }
}

/// The rule a refusal names, for tables.
fn refusal(command: &str) -> String {
    expect_refused(command).rule()
}

#[track_caller]
fn expect_rule(command: &str, says: &str) {
    let rule = refusal(command);
    assert!(
        rule.contains(says),
        "{command:?}: {rule:?} does not say {says:?}"
    );
}

/// Every spelling bash reads as the command word `sudo` is the denied command `sudo`.
#[test]
fn command_words_are_read_as_bash_reads_them() {
    for spelling in [
        "sudo",
        "'sudo'",
        "\"sudo\"",
        "s'u'do",
        "s\"\"udo",
        "s\\udo",
        "\\sudo",
        "su\\\ndo",
        "$'sudo'",
        "$'\\x73udo'",
        "$'\\163\\165do'",
        "su$'d'o",
        "/usr/bin/sudo",
        "./sudo",
        "../bin/sudo",
        "/usr/bin/../bin/sudo",
    ] {
        for form in [
            "{} id",
            "ls; {} id",
            "env {} id",
            "X=1 {} id",
            "echo | xargs {} id",
        ] {
            let command = form.replace("{}", spelling);
            match default_check(&command) {
                Some(Finding::Word { word, .. }) => assert_eq!(word, "sudo", "{command:?}"),
                other => panic!("{command:?}: {other:?}"),
            }
        }
    }
    // Names bash decides only when it runs.
    for command in [
        "$C id",
        "${C} id",
        "\"$C\" id",
        "${C:-sudo} id",
        "${!P} id",
        "$1 id",
        "\"$@\"",
        "/usr/bin/su? id",
        "/usr/bin/s*o id",
        "/usr/bin/[s]udo id",
        "{sudo,x} id",
        "su{do,} id",
        "~/bin/sudo id",
        "env $C id",
        "echo x | xargs -I{} {} id",
        "find . -exec {} \\;",
    ] {
        let rule = refusal(command);
        assert!(
            rule.contains("not written out") || rule.contains("indirect"),
            "{command:?}: {rule}"
        );
    }
}

/// What the check passes is exactly what it reads: a quoted or escaped operator is a letter.
#[test]
fn quoting_decides_what_is_code() {
    for command in [
        "echo ';sudo id'",
        "echo \";sudo id\"",
        "echo \\;sudo id",
        "echo $';sudo id'",
        "echo '$(sudo id)'",
        "echo 'a\nsudo id'",
        "echo x # ; sudo id",
        "echo x #\\\nsudo",
        "cat <<'EOF'\nsudo id\n$(sudo id)\nEOF",
        "cat <<\\EOF\n`sudo id`\nEOF",
        "cat <<-\"EOF\"\n\tsudo id\n\tEOF",
        "echo a#;sudo",
    ] {
        let got = default_check(command);
        let sudo_ran = matches!(&got, Some(Finding::Word { .. }));
        // `echo x #\` + new line: the comment ends at the new line, `sudo` is a command.
        if command.contains("#\\\n") || command == "echo a#;sudo" {
            assert!(sudo_ran, "{command:?}: {got:?}");
        } else {
            assert_eq!(got, None, "{command:?}");
        }
    }
    // A continuation joins what it splits, everywhere but in single quotes and comments.
    for command in [
        "echo x;su\\\ndo id",
        "echo x &\\\n& sudo id",
        "echo \"a\\\n\" ; sudo id",
        "echo $\\\n(sudo id)",
        "echo x |\\\n sudo id",
    ] {
        assert!(default_check(command).is_some(), "{command:?}");
    }
}

/// Refused by name: each rule says what it met.
#[test]
fn outside_the_subset_is_refused_by_name() {
    for (command, says) in [
        ("echo $(id)", "command substitution `$(…)`"),
        ("echo \"$(id)\"", "command substitution"),
        ("echo `id`", "backticks"),
        ("cat <(ls)", "process substitution"),
        ("ls > >(cat)", "process substitution"),
        ("echo $((1+2))", "arithmetic expansion"),
        ("echo $[1+2]", "arithmetic expansion"),
        ("(( x = 1 ))", "arithmetic command"),
        ("echo ${x:1}", "substring"),
        ("echo ${a[1]}", "array subscript"),
        ("echo ${!x}", "indirect"),
        ("echo ${#x}", "length"),
        ("echo ${x@P}", "transformation"),
        ("echo ${x:=y}", "substring expansion `${X:offset}` (or `:=`"),
        ("echo ${x:-$y}", "not plain letters"),
        ("echo $\"hello\"", "locale translation"),
        ("a[1]=x", "array element assignment"),
        ("a=(1 2)", "array assignment"),
        ("f() { ls; }", "function definition"),
        ("function f { ls; }", "function definition"),
        ("case x in x) ls;; esac", "`case … esac`"),
        ("select x in a; do ls; done", "`select`"),
        ("coproc ls", "`coproc`"),
        ("[[ -f x ]]", "`[[ … ]]`"),
        ("eval ls", "`eval`"),
        ("source x.sh", "`source`"),
        (". x.sh", "`.`"),
        ("fc -s", "`fc`"),
        ("trap ls EXIT", "`trap`"),
        ("let x=1", "`let`"),
        ("read x", "`read`"),
        ("mapfile lines", "`mapfile`"),
        ("getopts a x", "`getopts`"),
        ("enable -f x.so y", "`enable`"),
        ("alias ll='ls -l'", "`alias`"),
        ("bind -x '\"\\C-x\": ls'", "`bind`"),
        ("complete -C ls x", "`complete`"),
        ("history -s x", "`history`"),
        ("printf -v x %s y", "`printf -v`"),
        ("test -v x", "`test -v`"),
        ("[ -v x ]", "`[ -v`"),
        ("declare -i x=1", "`declare -i`"),
        ("declare -n r=x", "`declare -n`"),
        ("declare -f", "`declare -f`"),
        ("export -f f", "`export -f`"),
        ("unset 'a[1]'", "plain variable names"),
        ("shift 'a[1]'", "arithmetic"),
        ("set -k", "`set -k`"),
        ("set -o history", "`set -o history`"),
        ("shopt -s extglob", "`shopt -s extglob`"),
        ("echo !x", "history expansion"),
        ("echo \"a!b\"", "history expansion"),
        ("^a^b", "history substitution"),
        ("ls ?(a)", "extended glob"),
        ("echo a\rb", "control character"),
        ("echo a\u{1b}b", "control character"),
        ("echo 'a\u{7f}'", "control character"),
        ("echo x >/dev/tcp/1.2.3.4/80", "network redirection"),
        ("echo x > $f", "not written out"),
        ("echo x > /etc/passwd", "outside the root"),
        ("echo x {fd}> f", "named file descriptor"),
        ("cat <<$E\nx\n$E", "here-document delimiter"),
        ("cat <<EOF\n$(id)\nEOF", "command substitution"),
        (
            "cat <<EOF\na\\\nEOF",
            "line continuation inside an unquoted here-document",
        ),
        ("echo $'\\u0041'", "`\\u`"),
        ("echo $'\\0'", "NUL"),
        ("PATH=/tmp ls", "setting `PATH`"),
        ("BASH_ENV=x bash", "setting `BASH_ENV`"),
        ("export PROMPT_COMMAND=ls", "setting `PROMPT_COMMAND`"),
        ("LD_PRELOAD=x.so ls", "setting `LD_PRELOAD`"),
        (
            "GIT_EXTERNAL_DIFF=x git diff",
            "setting `GIT_EXTERNAL_DIFF`",
        ),
        ("env PAGER=x man ls", "setting `PAGER`"),
        ("for PATH in a; do ls; done", "setting `PATH`"),
        ("bash -c ls", "`bash`"),
        ("sh", "`sh`"),
        ("busybox sh", "`busybox`"),
        ("python3 -c 'print(1)'", "`python -c`"),
        ("python3", "without a script"),
        ("python3 -", "standard input"),
        ("python3 /dev/stdin", "standard input"),
        ("python3 -m timeit 'x'", "`python -m timeit`"),
        ("perl -e 'print 1'", "`perl -e`"),
        ("perl -lne 'print'", "`perl -lne`"),
        ("ruby -e 'p 1'", "`ruby -e`"),
        ("node -e '1'", "`node -e`"),
        ("node --eval=1", "`node --eval=1`"),
        ("deno eval 1", "`deno`"),
        ("awk 'BEGIN{system(\"id\")}'", "`system`"),
        ("awk '{print | \"sh\"}'", "a pipe"),
        ("awk '{\"id\" | getline x}'", "a pipe"),
        ("awk '@f()'", "indirect call"),
        ("awk -f prog.awk", "`awk -f`"),
        ("sed 's/a/b/e' f", "`e` flag"),
        ("sed e f", "the sed command `e`"),
        ("sed '1e id' f", "the sed command `e`"),
        ("sed -f s.sed f", "`sed -f`"),
        ("sed -e 's/a/b/' -e 's/x/y/e' f", "`e` flag"),
        ("sed 's/[/]/x/e' f", "bracket expression"),
        ("xargs sh -c 'ls'", "`sh`"),
        ("echo x | xargs env", "not written out"),
        ("xargs --process-slot-var=X ls", "does not model it"),
        ("find . -exec sh -c ls \\;", "`sh`"),
        ("find . -exec ls", "without its `;`"),
        ("find . -name $x", "not written out"),
        ("env -S 'ls -l'", "`env -S`"),
        ("env --split-string='ls'", "`env -S`"),
        ("timeout --bogus 5 ls", "does not model it"),
        ("git -c core.pager=less log", "`core.pager`"),
        ("git -c alias.x='!ls' x", "`alias.x`"),
        ("git --config-env=core.pager=P log", "not model"),
        ("git --exec-path=/tmp log", "not model"),
        ("git config core.editor vim", "`core.editor`"),
        ("git config --global alias.x '!ls'", "`alias.x`"),
        ("git config --edit", "`git config --edit`"),
        ("git clone --upload-pack=x h:r", "runs a command"),
        ("git clone -u x h:r", "runs a command"),
        ("git fetch --upload-p=x", "runs a command"),
        ("git rebase --exec ls", "runs a command"),
        ("git rebase -x ls", "runs a command"),
        ("git grep -O foo", "runs a command"),
        ("git bisect run ls", "`git bisect run`"),
        ("git submodule foreach ls", "`git submodule foreach`"),
        ("git difftool", "`git difftool`"),
        ("git fetch ext::ls", "`ext::`"),
        ("tar -I zstd -cf x.tar.zst d", "`-I`"),
        ("tar --to-command=cat -xf x.tar", "`--to-command=cat`"),
        ("tar --to-com=cat -xf x.tar", "`--to-com=cat`"),
        ("tar --checkpoint-action=exec=ls -cf x d", "checkpoint"),
        ("sort --compress-program=gzip f", "compress"),
        ("make SHELL=/bin/zsh", "setting `SHELL`"),
        ("make -f - all", "standard input"),
        ("make --eval='x:'", "`--eval"),
        ("apt-get -o APT::Update::Pre-Invoke::=ls update", "`-o`"),
        ("less '+!ls' f", "`+` word"),
        ("man -P ls ls", "`-P`"),
        ("ssh host ls", "`ssh`"),
        ("watch ls", "`watch`"),
        ("flock /tmp/l ls", "`flock`"),
        ("nsenter -t 1 ls", "`nsenter`"),
        ("unshare -r ls", "`unshare`"),
        ("vim -c '!ls'", "`vim`"),
        ("ed f", "`ed`"),
        ("command eval ls", "`eval`"),
        ("builtin eval ls", "`eval`"),
        ("builtin ls", "not a shell builtin"),
        ("exec bash", "`bash`"),
        ("command -x ls", "`command -x`"),
        ("jobs -x ls", "`jobs -x`"),
        ("hash -p /bin/sh ls", "`hash -p`"),
        ("wait -p x", "`wait -p`"),
        ("uv run pytest", "`uv run`"),
        ("pyenv exec python", "`pyenv exec`"),
        ("npm exec cowsay", "`npm exec`"),
        ("npx cowsay", "`npx`"),
        (
            "/lib64/ld-linux-x86-64.so.2 /bin/ls",
            "`ld-linux-x86-64.so.2`",
        ),
    ] {
        expect_rule(command, says);
    }
}

/// Syntax bash refuses is refused: the check never guesses what a broken command means.
#[test]
fn broken_commands_are_unreadable() {
    for command in [
        "echo 'x",
        "echo \"x",
        "echo $'x",
        "echo ${x",
        "if true; then ls",
        "if true; ls; fi",
        "while true; do ls",
        "for x in a b; ls; done",
        "{ ls",
        "{ ls }",
        "( ls",
        "ls )",
        "fi",
        "; ls",
        "ls ;; ls",
        "ls | | wc",
        "ls &&",
        "ls >",
        "X=1 if true; then ls; fi",
        "> f { ls; }",
        "ls | ! wc",
        "{ }",
        "( )",
        "echo a (b)",
        "echo 99999999999999>f",
    ] {
        let got = default_check(command);
        assert!(got.is_some(), "{command:?} passed");
    }
}

/// Code of another language sent as a command: bash's syntax error, said as such, with the
/// language it looks like for the model's feedback.
#[test]
fn other_languages_are_syntax_errors() {
    for (command, language) in [
        ("print(sum(range(10)))", Some("Python")),
        ("console.log(1+1)", Some("JavaScript")),
        ("import os\nos.listdir('.')", Some("Python")),
        ("f(x)", None),
    ] {
        match default_check(command) {
            Some(Finding::Unreadable { reason }) => {
                assert!(reason.contains("syntax error"), "{command:?}: {reason}");
            }
            // `import os` is a command name bash would look up: no syntax error, only a hint.
            other => assert!(command.starts_with("import"), "{command:?}: {other:?}"),
        }
        assert_eq!(super::other_language(command), language, "{command:?}");
    }
    // `name ()` is still a function definition.
    assert!(matches!(
        default_check("f () { ls; }"),
        Some(Finding::Unsupported { .. })
    ));
    assert_eq!(super::other_language("ls -la"), None);
}

/// Grammar the check models passes, nested.
#[test]
fn compound_commands_pass() {
    for command in [
        "if true; then if false; then ls; elif true; then pwd; else echo; fi; fi",
        "while false; do until true; do :; done; done",
        "for x in a \"b c\" 'd' $HOME *.rs {1,2}; do echo \"$x\"; done",
        "for x\ndo\necho $x\ndone",
        "for x; do echo $x; done",
        "( ( ls ) )",
        "{ { ls; }; } 2>/dev/null",
        "! { ls; }",
        "time { ls; } 2>&1 | cat",
        "ls |& cat",
        "ls &\nwait",
        "if true\nthen\n  ls\nfi",
        "ls &&\n\n  pwd ||\n  echo no",
        "ls |\n  wc",
        "{ ls\n}",
        "exec 3>out.txt; echo x >&3; exec 3>&-",
        "echo x 2>&1 >/dev/null",
        "echo x >&2",
        "echo x &>out.txt",
        "echo x >>out.txt 2>>err.txt",
        "cat < in.txt > out.txt",
        "cat <<A <<B\na\nA\nb\nB",
        "cat <<-A\n\t\ta\n\tA\necho after",
        "echo ${HOME} ${1} ${?} $? $# $$ $! $@ $* $- $0",
        "echo \"${x:-a.b/c-d,e@f%g+h=i:j}\"",
        "x=1 y=2; echo $x$y",
        "x+=1",
        "export A B=c",
        "readonly A=1",
        "local x=1",
        "declare -x A=1",
        "declare -p A",
        "unset A B",
        "unset -f f",
        "set -- a b; echo $1",
        "set +e -x",
        "shopt -s nullglob globstar",
        "shopt -p",
        "cd - && cd ~ && cd ..",
        "pushd /tmp && popd",
        "kill -TERM 1234",
        "kill %1",
        "wait",
        "ulimit -n 1024",
        "umask 022",
        "type -a ls",
        "hash -r",
        "exit 0",
        "[ \"$a\" = \"$b\" ]",
        "[ -f \"$f\" ] && [ \"$x\" ]",
        "test ! \"$x\"",
        "test \"$a\" -eq \"$b\"",
        "command ls",
        "command -p ls",
        "builtin echo hi",
        "exec ls",
        "exec -a name ls",
        "\\time -v ls",
        "nice -n 10 ls",
        "nice -5 ls",
        "nohup ls",
        "setsid -w ls",
        "stdbuf -oL -eL ls",
        "timeout -s KILL -k 5 10 ls",
        "env -i LANG=C ls",
        "env -u HOME ls",
        "env -C /tmp ls",
        "env",
        "xargs -0 -n 1 -P 4 ls",
        "xargs -I% echo %",
        "xargs --max-args=1 echo",
        "find . -name x -print0 | xargs -0 rm",
        "find . -exec env ls {} \\;",
        "find . -execdir echo {} ';'",
        "find . -ok echo {} \\;",
        "git -C sub --no-pager log -p -- file",
        "git config --get core.pager",
        "git config --list",
        "git config set user.email a@b",
        "git clone https://example.com/r.git",
        "git push -u origin main",
        "sed -n '/a/,/b/p' f",
        "sed -i.bak -e 's/a/b/' -e '/x/d' f",
        "sed -E 's#a(b)#\\1#g; y/abc/xyz/' f",
        "sed '1i\\\nhello' f",
        "sed '$a end' f",
        "sed -ne 's/x/y/p' f",
        "awk -F, -v OFS=: '{ $1 = $1; print } END { if (a || b) print \"x\" }' f",
        "python3 -u -W ignore script.py",
        "python3 -mhttp.server",
        "python3 -V",
        "perl -w script.pl",
        "perl -i.bak -pw script.pl",
        "ruby script.rb",
        "node --version",
        "make -C sub -j 4 all CFLAGS_X=1",
        "tar -xzf a.tgz -C out",
        "tar cvf a.tar d",
        "sort -u -k2 f",
        "apt-get install -y curl",
        "less f",
    ] {
        expect_pass(command);
    }
}

/// `allow_commands`: each command of a list or pipeline must be named, through wrappers too;
/// an entry may name the first arguments; builtins the check models need no entry.
#[test]
fn the_allowlist_names_every_program() {
    let setup = Setup::new(Some(&[
        "ls",
        "grep",
        "git status",
        "git log",
        "python3",
        "python3 -c",
        "env",
        "xargs",
        "find",
        "awk",
        "/usr/bin/make",
    ]));
    for command in [
        "ls -la | grep x",
        "git status --short && git log -1",
        "python3 script.py",
        "python3 -c 'print(1)'",
        "env X=1 ls",
        "ls | xargs grep x",
        "find . -exec grep -l x {} +",
        "cd src && echo $PWD && [ -d x ] || true",
        "/usr/bin/make -j2",
        "awk '{print}' f",
    ] {
        assert_eq!(setup.check(command), None, "{command:?}");
    }
    for (command, says) in [
        ("curl x", "`curl` is not in"),
        ("ls | curl x", "`curl`"),
        ("git push", "allow_commands"),
        ("git -C x status", "allow_commands"),
        ("env curl x", "`curl`"),
        ("find . -exec curl {} \\;", "`curl`"),
        ("xargs curl", "`curl`"),
        ("/bin/ls", "`/bin/ls`"),
        ("make", "`make`"),
        ("./ls", "`./ls`"),
        ("python3 -m timeit 1", "timeit"),
        ("awk 'BEGIN{system(\"x\")}'", "`system`"),
        ("echo x | python3", "without a script"),
        ("git $x", "allow_commands"),
        ("sudo ls", "denied command `sudo`"),
        ("bash -c ls", "`bash` is not in"),
    ] {
        let rule = setup.check(command).map(|f| f.rule()).unwrap_or_default();
        assert!(rule.contains(says), "{command:?}: {rule:?}");
    }
}

/// Deny entries may name the first arguments, and a word not written out that could be one
/// of them is refused.
#[test]
fn deny_entries_with_arguments() {
    for command in [
        "kill -9 1",
        "/bin/kill -9 1",
        "env kill -9 1",
        "kill -9 $PID",
        "systemctl poweroff",
        "systemctl $ACTION",
        "init 0",
        "mkfs.ext4 /dev/x",
        "metagate permit grant",
        "./mg permit grant",
        "mg gate",
        "/opt/mg x",
        "env mg",
        "xargs mg < x",
        "perl /usr/bin/sudo",
        "perl -S sudo",
        "perl ./mg",
        "perl mg",
    ] {
        match default_check(command) {
            Some(Finding::Word { .. }) => {}
            other => panic!("{command:?}: {other:?}"),
        }
    }
    for command in [
        "kill -9 1234",
        "systemctl status",
        "init",
        "echo sudo",
        "ls metagate",
    ] {
        expect_pass(command);
    }
}

/// `[shell] deny` constructs are matched where they take effect: in the code, and for `$`
/// constructs in double quotes and here-documents too.
#[test]
fn denied_constructs() {
    expect_rule("cat <<< x", "denied construct `<<<`");
    expect_rule("cat <\\\n<< x", "denied construct `<<<`");
    expect_pass("echo '<<<'");
    expect_pass("echo \\<<<x");
    let mut setup = Setup::new(None);
    setup.constructs = strings(&[">", "${"]);
    for (command, construct) in [
        ("ls > f", ">"),
        ("ls 2>&1", ">"),
        ("echo ${HOME}", "${"),
        ("echo \"${HOME}\"", "${"),
        ("cat <<EOF\n${HOME}\nEOF", "${"),
    ] {
        assert_eq!(
            setup.check(command),
            Some(Finding::Construct {
                construct: construct.to_string()
            }),
            "{command:?}"
        );
    }
    for command in [
        "echo '>'",
        "echo \">\"",
        "echo '${x}'",
        "cat <<'EOF'\n${x}\nEOF",
    ] {
        assert_eq!(setup.check(command), None, "{command:?}");
    }
}

#[test]
fn protected_files_and_variables() {
    for command in [
        "rm ~/.local/state/metagate/metagate.db",
        "sqlite3 \"$METAGATE_DB\" 'delete from decisions'",
        "cat /home/u/.config/metagate/metagate.toml",
        "echo x > metagate.toml",
        "cp x '/home/u/.local/state/metagate/'",
        "cp x ~/.local/state/metagate/",
        "rm -rf \"$HOME/.local/state/metagate\"",
        "rm -rf ${HOME}/.local/state/metagate",
        "rm /home/u/.local//state/./metagate/x",
        "rm /home/u/.local/state/x/../metagate/x",
        "rm meta\"gate\".db",
        "rm meta\\gate.db",
        "rm meta\\\ngate.db",
        "rm $'metagate\\x2edb'",
        "rm metagate.{db,bak}",
        "rm METAGATE.DB",
        "rm ~/.local/state/metagat?/*",
        "rm /home/*/.local/state/metagate/*.db",
        "rm metagate.d*",
        "echo ${METAGATE_POLICY}",
        "printenv METAGATE_DB",
        "cat <<EOF\n$METAGATE_DB\nEOF",
        "ls # metagate.db",
    ] {
        match default_check(command) {
            Some(Finding::Protected { .. }) => {}
            other => panic!("{command:?}: {other:?}"),
        }
    }
    for command in [
        "ls ~/projects",
        "ls ~/.local/state/other",
        "echo METAGATE_DBX",
        "rm *.db",
        "ls src/*.rs",
        "cargo test -p metagate",
        "cat ~/.config/other.toml",
    ] {
        expect_pass(command);
    }
}

/// The running binary is protected by its whole path, not by its name.
#[test]
fn the_binary_is_protected_by_its_path() {
    let protected = Protected::with_binary(&[], &[], None, Some(Path::new("/opt/bin/metagate")));
    let rules = ShellRules {
        constructs: &[],
        denied: &CommandList::default(),
        allowed: None,
        protected: &protected,
        world: &OpenWorld,
    };
    for command in [
        "cp /opt/bin/metagate x",
        "ln -s /opt/bin/metagate m",
        "cp /opt/bin/meta* x",
    ] {
        assert!(
            matches!(check(command, &rules), Some(Finding::Protected { .. })),
            "{command:?}"
        );
    }
    for command in ["cargo test -p metagate", "cd ~/src/metagate", "ls /opt/bin"] {
        assert_eq!(check(command, &rules), None, "{command:?}");
    }
}

#[test]
fn large_commands_are_refused_for_their_size() {
    let big = "a".repeat(MAX_COMMAND_BYTES + 1);
    assert!(default_check(&big).is_some_and(|f| f.is_too_large()));
    // Just under the cap, the check reads it all: a chain of 100,000 `env` is refused
    // for its nesting, at the 101st.
    let chain = format!("{}ls", "env A=1 ".repeat(100_000));
    assert!(default_check(&chain).is_some_and(|f| f.rule().contains("nested deeper")));
    let chain = format!("env {}ls", "A=1 ".repeat(200_000));
    assert_eq!(default_check(&chain), None);
    let words = "a ".repeat(MAX_COMMAND_BYTES / 2 - 1);
    assert_eq!(default_check(&words), None);
    let nested = format!(
        "{}ls{}",
        "(".repeat(MAX_DEPTH + 1),
        ")".repeat(MAX_DEPTH + 1)
    );
    assert!(default_check(&nested).is_some());
}

#[test]
fn findings_say_what_they_found() {
    assert_eq!(
        Finding::Construct {
            construct: "<<<".into()
        }
        .rule(),
        "denied construct `<<<`"
    );
    match default_check("ls && sudo rm -rf /tmp/x") {
        Some(Finding::Word { word, command }) => {
            assert_eq!(word, "sudo");
            assert_eq!(command, "sudo rm -rf /tmp/x");
        }
        other => panic!("{other:?}"),
    }
    let long = format!("sudo {}", "a".repeat(200));
    match default_check(&long) {
        Some(Finding::Word { command, .. }) => assert_eq!(command.chars().count(), SHOWN_CHARS),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        refusal("echo $(id)"),
        "command substitution `$(…)` is not allowed: the check cannot know what it runs"
    );
    assert_eq!(refusal("echo 'x"), "unterminated single quote");
    assert_eq!(
        Setup::new(Some(&["ls"])).check("curl x").map(|f| f.rule()),
        Some("`curl` is not in [shell] allow_commands".to_string())
    );
}

#[test]
fn command_patterns_read_plain_words_only() {
    assert_eq!(
        CommandPattern::parse("  git   status ").unwrap().as_str(),
        "git status"
    );
    for bad in ["", "  ", "git 'status'", "a;b", "$x", "ls *", "a\\b"] {
        assert!(CommandPattern::parse(bad).is_err(), "{bad:?}");
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// A deny entry names a program when the program is its command word or a variant of it.
    fn names(entry: &[u8], base: &[u8]) -> bool {
        base.starts_with(entry) && matches!(base.get(entry.len()), None | Some(b'.'))
    }

    proptest! {
        /// The hash lookup finds exactly the entries that name the program, in list order.
        #[test]
        fn deny_entries_are_found_as_by_reading_them_all(
            entries in proptest::collection::vec("[ab.]{1,4}( [ab]{1,2})?", 0..12),
            base in "[ab.]{0,6}",
        ) {
            let list = CommandList::new(patterns(&entries).unwrap());
            let all: Vec<usize> = (0..entries.len())
                .filter(|&e| names(&list.patterns()[e].words()[0], base.as_bytes()))
                .collect();
            prop_assert_eq!(list.naming(base.as_bytes()).to_vec(), all);
        }
    }

    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("ls".to_string()),
            Just("sudo".to_string()),
            Just("echo".to_string()),
            Just("env".to_string()),
            Just("xargs".to_string()),
            Just("find".to_string()),
            Just("-exec".to_string()),
            Just("sh".to_string()),
            Just("-c".to_string()),
            Just("$x".to_string()),
            Just("${x:-y}".to_string()),
            Just("'a b'".to_string()),
            Just("\"a $x\"".to_string()),
            Just("$'\\x41'".to_string()),
            Just("*".to_string()),
            Just("{a,b}".to_string()),
            Just("<<EOF".to_string()),
            Just("EOF".to_string()),
            Just("\\\n".to_string()),
            Just("\\".to_string()),
            Just("'".to_string()),
            Just("\"".to_string()),
            Just(";".to_string()),
            Just("&&".to_string()),
            Just("|".to_string()),
            Just("(".to_string()),
            Just(")".to_string()),
            Just("{".to_string()),
            Just("}".to_string()),
            Just("if".to_string()),
            Just("then".to_string()),
            Just("fi".to_string()),
            Just("\n".to_string()),
            Just(">".to_string()),
            Just("2>&1".to_string()),
            Just("#".to_string()),
            Just("!".to_string()),
            Just("$(".to_string()),
            Just("`".to_string()),
            "[ -~]{0,6}".prop_map(|s| s),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whatever the input, the check answers (no panic) in both modes.
        #[test]
        fn never_panics(tokens in proptest::collection::vec(token(), 0..24), spaces in any::<u32>()) {
            let mut command = String::new();
            for (i, t) in tokens.iter().enumerate() {
                if spaces >> (i % 32) & 1 == 1 {
                    command.push(' ');
                }
                command.push_str(t);
            }
            let _ = default_check(&command);
            let _ = Setup::new(Some(&["ls", "echo", "env"])).check(&command);
        }

        /// Arbitrary bytes too.
        #[test]
        fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let command = String::from_utf8_lossy(&bytes);
            let _ = default_check(&command);
        }
    }
}

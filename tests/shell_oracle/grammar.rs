//! Commands generated from a grammar of bash constructs, with a canary command (`mgcanary`)
//! in every position a command could hide, spelled every way bash accepts a command word;
//! and ordinary commands where the canary is only data, so that bash is exercised on what
//! the check passes, not only on what it refuses.

/// The canary's name. In the default mode it is a denied command; in the allowlist mode it
/// is not listed.
pub const CANARY: &str = "mgcanary";

/// Commands that run no canary: ordinary work, and the canary's name only as data (an
/// argument, a quoted string, a comment, a here-document).
pub const BENIGN: &[&str] = &[
    "echo hi",
    "true",
    ":",
    "ls >/dev/null",
    "cat a.txt",
    "printf '%s\\n' x",
    "grep -c a a.txt",
    "wc -l a.txt",
    "test -f a.txt",
    "[ -n \"$HOME\" ]",
    "echo $HOME ${HOME} ${U:-d}",
    "x=1",
    "export Y=2",
    "cd .",
    "cd sub && pwd && cd ..",
    "echo 'mgcanary'",
    "echo mgcanary",
    "printf %s mgcanary",
    "echo \"# mgcanary\"",
    ": mgcanary",
    "true # ; mgcanary",
    "echo x #mgcanary",
    "cat <<'EOF'\nmgcanary $(mgcanary) `mgcanary`\nEOF",
    "cat <<EOF\nmgcanary $HOME\nEOF",
    "cat <<-EOF\n\tmgcanary\n\tEOF",
    "env echo hi",
    "env X=mgcanary true",
    "nice echo hi",
    "timeout 5 echo hi",
    "xargs echo < a.txt",
    "xargs -n1 echo < a.txt",
    "echo mgcanary | xargs echo",
    "find . -maxdepth 0 -exec echo {} \\;",
    "find . -maxdepth 1 -name '*.txt' -exec cat {} +",
    "git diff --stat",
    "git log -1 --format=%s",
    "git -c color.ui=never status --short",
    "sed 's/a/b/' a.txt",
    "sed -n '/mgcanary/p' a.txt",
    "awk '{print $1}' a.txt",
    "awk -F: '$1 ~ /mgcanary/ {print}' a.txt",
    "sort a.txt",
    "tar -cf /dev/null a.txt",
    "echo \"a;mgcanary\"",
    "echo a\\;mgcanary",
    "echo 'a\nmgcanary'",
    "[ mgcanary = x ] || true",
    "test -n mgcanary",
    "echo $'mg\\x63anary'",
    "printf '%s\\n' mgcanary >out.txt",
    "{ echo a; echo b; } | cat",
    "( echo a ) > out.txt",
    "if true; then echo y; else echo n; fi",
    "for w in a b; do echo $w; done",
    "while false; do :; done",
    "! false",
    "time -p true",
    "echo a && echo b || echo c",
    "true & wait",
    "command -v echo",
    "type echo",
    "python3 -V",
    "set -e; true",
    "echo \"Done!\"",
    "stdbuf -oL echo hi",
    "setsid -w true",
    "nohup true >/dev/null 2>&1",
    "grep mgcanary a.txt",
];

/// Lexical corners where a check that misread bash would see data and bash a command (or
/// the other way round); `C` stands for the canary's name.
pub const CORNERS: &[&str] = &[
    "echo x\\\n;C",
    "echo \"x\\\n\";C",
    "echo 'x\\\n';C",
    "echo $'a\\'b';C",
    "echo \"a\\\"b\";C",
    "echo a\\ b;C",
    "cat <<E\nE;C\nE",
    "cat <<E;C\nbody\nE",
    "cat <<'E'\n$(C)\nE",
    "cat <<E\n\\$(C)\nE",
    "cat <<E >/dev/null; C\nx\nE",
    "cat <<E\nx\nE\nC",
    "cat <<E <<F\nE\nC\nF",
    "cat <<-E\n\tE\nC",
    "echo x#;C",
    "echo x \\#;C",
    "echo x #;C",
    "echo x;#;C",
    "echo {C}",
    "echo ${x:-C}",
    "echo x>/dev/null;C",
    "echo x 2>/dev/null;C",
    "echo x>&2;C",
    "echo x |C",
    "a=b;C",
    "a=b C",
    "a=b\\\nC",
    "echo $'\\'';C",
    "echo $'\\x27;C'",
    "echo \"'\";C;'\"",
    "echo '\"';C;\"'",
    "echo ''\"\";C",
    "echo \\\\;C",
    "echo \\\\\\;C",
    "echo x&C",
    "echo x&&C",
    "echo x||C",
    "echo x|&C",
    "(echo x)C",
    "(echo x);C",
    "{ echo x;}C",
    "{ echo x;};C",
    "if true;then C;fi",
    "if true;then :;fi;C",
    "for x in a;do C;done",
    "for x in a C;do :;done",
    "while C;do break;done",
    "echo x\rC",
    "echo x\tC",
    "echo x\t;\tC",
    "echo\t\tx\n\t  C",
    "echo x\\\n\\\nC",
    "echo x \\\n\n C",
    "time\tC",
    "! C",
    "!C",
    "echo $'\\n';C",
    "echo $'\\012';C",
    "echo \"$'x'\";C",
    "echo '$'\"'\";C",
    "echo ${HOME}C",
    "echo $HOME;C",
    "echo $HOME\\;C",
];

/// A small deterministic generator (splitmix64): the same seed gives the same commands.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// One generated command.
pub struct Generated {
    pub text: String,
    /// The canary runs from a file the command writes (a script, a makefile): the default
    /// mode lets such files run by design, so only the allowlist mode is judged.
    pub allowlist_only: bool,
}

/// Where the sandbox keeps things, as the generated commands name them.
pub struct Places {
    /// The folder holding the canary (first on `PATH`), absolute.
    pub bin: String,
}

pub struct Grammar<'p> {
    rng: Rng,
    places: &'p Places,
    allowlist_only: bool,
}

/// `s` in single quotes.
fn single_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `s` in double quotes (for text holding no `!`).
fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

impl<'p> Grammar<'p> {
    pub fn new(seed: u64, places: &'p Places) -> Grammar<'p> {
        Grammar {
            rng: Rng::new(seed),
            places,
            allowlist_only: false,
        }
    }

    /// A plain word (letters, digits, `.`, `-`, `_`, `/`), spelled another way bash reads
    /// as the same word: quotes inside, backslashes, `$'…'` escapes.
    fn spell(&mut self, word: &str) -> String {
        if self.rng.chance(35) {
            return word.to_string();
        }
        match self.rng.below(8) {
            0 => single_quoted(word),
            1 => double_quoted(word),
            2 => format!(
                "$'{}'",
                word.bytes()
                    .map(|b| if self.rng.chance(50) {
                        format!("\\x{b:02x}")
                    } else if self.rng.chance(50) {
                        format!("\\{b:03o}")
                    } else {
                        char::from(b).to_string()
                    })
                    .collect::<String>()
            ),
            _ => {
                let mut out = String::new();
                for (i, c) in word.chars().enumerate() {
                    match self.rng.below(9) {
                        0 => out.push_str(&format!("\\{c}")),
                        1 => out.push_str(&format!("'{c}'")),
                        2 => out.push_str(&format!("\"{c}\"")),
                        3 if i > 0 => out.push_str(&format!("''{c}")),
                        4 if i > 0 => out.push_str(&format!("\"\"{c}")),
                        5 if i > 0 => out.push_str(&format!("\\\n{c}")),
                        6 if c.is_ascii_alphanumeric() => {
                            out.push_str(&format!("$'\\x{:02x}'", c as u32))
                        }
                        _ => out.push(c),
                    }
                }
                out
            }
        }
    }

    /// The canary as a command word, and what must come before it in the same command
    /// (an assignment, `set --`).
    fn canary_word(&mut self) -> (String, String) {
        let bin = self.places.bin.clone();
        let c = CANARY;
        let none = String::new();
        match self.rng.below(20) {
            0..=4 => (none, self.spell(c)),
            5 => ("C=mgcanary; ".into(), "$C".into()),
            6 => (format!("C={}; ", self.spell(c)), "\"${C}\"".into()),
            7 => (none, "${U:-mgcanary}".into()),
            8 => ("C=mgcanary P=C; ".into(), "${!P}".into()),
            9 => (
                none,
                self.pick(&[
                    format!("{bin}/mgcan*"),
                    "~/bin/mgcanar?".to_string(),
                    "~/bin/m[g]canary".to_string(),
                    "$HOME/bin/mgc*ary".to_string(),
                    "../bin/mgcan?ry".to_string(),
                ]),
            ),
            10 => (
                none,
                self.pick(&[
                    "{mgcanary,}".to_string(),
                    "mgcan{ary,}".to_string(),
                    "{mg,}canary".to_string(),
                    "mgcanar{y,y}".to_string(),
                ]),
            ),
            11 => (
                none,
                self.pick(&[
                    "~/bin/mgcanary".to_string(),
                    "$HOME/bin/mgcanary".to_string(),
                    format!("{bin}/mgcanary"),
                    "../bin/mgcanary".to_string(),
                    "./../bin/mgcanary".to_string(),
                    format!("{bin}/./mgcanary"),
                    format!("{bin}//mgcanary"),
                    format!("{bin}/../bin/mgcanary"),
                ]),
            ),
            12 => (
                "set -- mgcanary; ".into(),
                self.rng.pick(&["$1", "\"$@\"", "$*", "${1}"]).to_string(),
            ),
            13 => ("C=mgca D=nary; ".into(), "$C$D".into()),
            14 => ("V='mgcanary x'; ".into(), "$V".into()),
            15 => (none, "$(echo mgcanary)".into()),
            16 => (none, "`echo mgcanary`".into()),
            17 => ("IFS=_; V=mgcanary_x; ".into(), "$V".into()),
            18 => (
                none,
                format!("{}{}", self.spell("mgca"), self.spell("nary")),
            ),
            _ => ("C=mgcanary; ".into(), "${C:-x}".into()),
        }
    }

    fn pick(&mut self, items: &[String]) -> String {
        self.rng.pick(items).clone()
    }

    /// The canary as shell code inside a string (for `sh -c`, `eval`, …).
    fn canary_code(&mut self) -> String {
        let (prefix, word) = self.canary_word();
        format!("{prefix}{word}")
    }

    /// A benign command word.
    fn benign(&mut self) -> String {
        let forms = BENIGN;
        let form = self.rng.pick(forms).to_string();
        // The first word spelled some other way, sometimes.
        if self.rng.chance(30) {
            let end = form
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(form.len());
            if end > 0 && !form.starts_with("x=") {
                let first = self.spell(&form[..end]);
                return format!("{first}{}", &form[end..]);
            }
        }
        form
    }

    /// A command running the canary directly, through a wrapper, or hidden somewhere bash
    /// or a program finds a command.
    fn canary_item(&mut self) -> String {
        let (prefix, word) = self.canary_word();
        let code = self.canary_code();
        let sq = single_quoted(&code);
        let kind = self.rng.below(13);
        let body = match kind {
            0..=2 => self.position(&word),
            3..=4 => {
                let wrapped = self.wrapped(&word);
                self.position(&wrapped)
            }
            5 => self.shell_code(&code, &sq),
            6 => self.substitution(&code),
            7 => self.subscript(&code),
            8 => self.program(&sq),
            9 => self.runner(&word, &sq),
            10 => self.written_and_run(&code),
            11 => {
                let corner = *self.rng.pick(CORNERS);
                corner.replace('C', &word)
            }
            _ => {
                let inner = self.canary_item();
                return self.position(&inner);
            }
        };
        format!("{prefix}{body}")
    }

    /// `cmd` in a position of a list, pipeline or compound command.
    fn position(&mut self, cmd: &str) -> String {
        let forms = [
            "{}".to_string(),
            "{} x".to_string(),
            "X=1 {}".to_string(),
            ">/dev/null {}".to_string(),
            "2>&1 {} </dev/null".to_string(),
            "! {}".to_string(),
            "time {}".to_string(),
            "time -p {}".to_string(),
            "time -- {}".to_string(),
            "time -p -- {}".to_string(),
            "time -- -p {}".to_string(),
            "! -- {}".to_string(),
            "time\t{}".to_string(),
            "{ {}; }".to_string(),
            "( {} )".to_string(),
            "({})".to_string(),
            "if {}; then :; fi".to_string(),
            "if true; then {}; fi".to_string(),
            "if false; then :; elif true; then {}; fi".to_string(),
            "if false; then :; else {}; fi".to_string(),
            "while {}; do break; done".to_string(),
            "until {}; do :; done".to_string(),
            "for v in a; do {}; done".to_string(),
            "for v in a\ndo\n{}\ndone".to_string(),
            "true && {}".to_string(),
            "false || {}".to_string(),
            "true; {}".to_string(),
            "true\n{}".to_string(),
            "echo x | {}".to_string(),
            "{} | cat".to_string(),
            "{} |& cat".to_string(),
            "{} & wait".to_string(),
            "{ {}; } 2>/dev/null".to_string(),
            "if true\nthen\n{}\nfi".to_string(),
            "true &&\n{}".to_string(),
            "echo x |\n{}".to_string(),
        ];
        let form = self.rng.pick(&forms).clone();
        form.replacen("{}", cmd, 1)
    }

    /// `word` run by a program that runs commands.
    fn wrapped(&mut self, word: &str) -> String {
        let env = self.spell("env");
        let nice = self.spell("nice");
        let forms = [
            format!("{env} {word}"),
            format!("{env} X=1 {word}"),
            format!("{env} -u X {word}"),
            format!("{env} -i PATH={}:/usr/bin:/bin {word}", self.places.bin),
            format!("{env} -- {word}"),
            format!("{env} -S {}", single_quoted(word)),
            format!("{nice} {word}"),
            format!("{nice} -n 5 {word}"),
            format!("{nice} -5 {word}"),
            format!("nohup {word} >/dev/null 2>&1"),
            format!("timeout 5 {word}"),
            format!("timeout -k 1 5 {word}"),
            format!("timeout -s KILL 5 {word}"),
            format!("stdbuf -oL {word}"),
            format!("stdbuf -o L -e L {word}"),
            format!("setsid -w {word}"),
            format!("command {word}"),
            format!("command -p {word}"),
            format!("command -- {word}"),
            format!("exec {word}"),
            format!("exec -a x {word}"),
            format!("builtin {word}"),
            format!("\\time -q {word}"),
            format!("/usr/bin/time -q {word}"),
            format!("xargs {word} </dev/null"),
            format!("echo x | xargs {word}"),
            format!("echo x | xargs -n1 {word}"),
            format!("echo x | xargs -I{{}} {word} {{}}"),
            format!("echo x | xargs -I {{}} {word}"),
            format!("echo x | xargs -0 -r {word}"),
            format!("find . -maxdepth 0 -exec {word} \\;"),
            format!("find . -maxdepth 0 -exec {word} {{}} +"),
            format!("find . -maxdepth 0 -execdir {word} ';'"),
            format!("find . -maxdepth 0 -exec env {word} \\;"),
            format!("{env} {nice} timeout 5 {word}"),
            format!("command env {word}"),
            format!("exec env {word}"),
            // Options after the operands: these programs stop reading options at the first
            // operand, so the words after it are the command.
            format!("timeout 5 -k 1 {word}"),
            format!("{env} X=1 -i {word}"),
            format!("{nice} -- -n 1 {word}"),
            format!("echo x | xargs -- -n1 {word}"),
            format!("stdbuf -oL -- {word}"),
            format!("setsid -- {word}"),
            format!("\\time -- {word}"),
        ];
        self.rng.pick(&forms).clone()
    }

    /// The canary as text a shell reads as code.
    fn shell_code(&mut self, code: &str, sq: &str) -> String {
        let sh = self.pick(&["sh".into(), "bash".into(), "dash".into()]);
        let sh = self.spell(&sh);
        let forms = [
            format!("{sh} -c {sq}"),
            format!("{sh} -c {}", double_quoted(code)),
            format!("echo {sq} | {sh}"),
            format!("{sh} <<< {sq}"),
            format!("{sh} <<EOF\n{code}\nEOF"),
            format!("{sh} -s <<'EOF'\n{code}\nEOF"),
            format!("eval {sq}"),
            format!("eval {}", double_quoted(code)),
            format!("eval \"$(echo {sq})\""),
            format!("source /dev/stdin <<< {sq}"),
            format!(". /dev/stdin <<EOF\n{code}\nEOF"),
            format!("trap {sq} EXIT"),
            format!("trap {sq} DEBUG; :"),
            format!("echo {sq} > f.sh; BASH_ENV=f.sh bash -c :"),
            format!("echo {sq} > f.sh; export BASH_ENV=f.sh; bash -c :"),
            format!("echo {sq} > f.sh; ENV=f.sh sh -i -c : 2>/dev/null"),
            format!("BASH_ENV=/dev/stdin bash -c : <<EOF\n{code}\nEOF"),
            format!("echo {sq} > f.sh; . ./f.sh"),
            format!("echo {sq} > f.sh; source f.sh"),
            format!(
                "echo {} | xargs {sh}",
                single_quoted(&format!("-c '{code}'"))
            ),
            format!("echo {sq} | xargs -I% {sh} -c %"),
            format!("find . -maxdepth 0 -exec {sh} -c {sq} \\;"),
            format!("PROMPT_COMMAND={sq} bash -i -c : 2>/dev/null"),
            format!("history -s {sq}; fc -s"),
            format!("alias a={sq}; a"),
            format!("f() {{ {code}; }}; f"),
            format!("function f {{ {code}; }}; f"),
            format!("coproc {code}"),
            format!("case x in x) {code};; esac"),
            format!("select v in a; do {code}; break; done <<< 1"),
        ];
        self.rng.pick(&forms).clone()
    }

    fn substitution(&mut self, code: &str) -> String {
        let forms = [
            format!("echo $({code})"),
            format!("echo `{code}`"),
            format!("x=$({code})"),
            format!("echo \"$({code})\""),
            format!("cat <({code})"),
            format!("echo x > >({code})"),
            format!("echo $(( $({code}) ))"),
            format!(": ${{x:-$({code})}}"),
            format!(": \"${{x:-$({code})}}\""),
            format!("echo $[$({code})]"),
            format!("a[$({code})]=1"),
            format!("cat <<EOF\n$({code})\nEOF"),
            format!("cat <<EOF\n`{code}`\nEOF"),
            format!("echo \"${{x:-`{code}`}}\""),
        ];
        self.rng.pick(&forms).clone()
    }

    /// Array subscripts bash evaluates, each running the canary in `$(…)`.
    fn subscript(&mut self, code: &str) -> String {
        let sub = format!("a[$({code})]");
        let pipestatus = format!("PIPESTATUS[$({code})]");
        let forms = [
            format!("test -v {}", single_quoted(&sub)),
            format!("[ -v {} ]", single_quoted(&sub)),
            format!("[[ -v {} ]]", single_quoted(&sub)),
            format!("[[ {} -eq 1 ]]", single_quoted(&sub)),
            format!("printf -v {} x", single_quoted(&sub)),
            format!("read {} <<< x", single_quoted(&sub)),
            format!("echo x | read {}", single_quoted(&sub)),
            format!("declare {}", single_quoted(&format!("{sub}=1"))),
            format!("let {}", single_quoted(&sub)),
            format!("(( {sub} ))"),
            format!("unset {}", single_quoted(&pipestatus)),
            format!("x={}; echo ${{!x}}", single_quoted(&pipestatus)),
            format!("x={}; echo $((x))", single_quoted(&sub)),
            format!("x={}; [[ x -eq 1 ]]", single_quoted(&sub)),
            format!("printf -v x %s {}; (( x ))", single_quoted(&sub)),
            format!("true & wait -n -p {}", single_quoted(&sub)),
            format!("x={}; test \"$x\" -eq 1", single_quoted(&sub)),
            format!("v=-v; test $v {}", single_quoted(&sub)),
            format!("v=-v; s={}; [ \"$v\" \"$s\" ]", single_quoted(&sub)),
            format!("mapfile {} < /dev/null", single_quoted(&sub)),
        ];
        self.rng.pick(&forms).clone()
    }

    /// Programs given the canary as code in their own language.
    fn program(&mut self, sq: &str) -> String {
        let c = CANARY;
        let forms = [
            format!("awk 'BEGIN{{system(\"{c}\")}}'"),
            format!("mawk 'BEGIN{{system(\"{c}\")}}'"),
            format!("awk 'BEGIN{{\"{c}\" | getline}}'"),
            format!("awk 'BEGIN{{print \"\" | \"{c}\"}}'"),
            format!("awk -v p={c} 'BEGIN{{system(p)}}'"),
            format!("sed 's/x/{c}/e' <<< x"),
            format!("echo x | sed 's/x/{c}/e'"),
            format!("echo {c} | sed e"),
            format!("echo x | sed '1e {c}'"),
            format!("echo x | sed -n 's/.*/{c}/ep'"),
            format!("echo x | sed -e 's/a/b/' -e 's/x/{c}/e'"),
            format!("python3 -c 'import os; os.system(\"{c}\")'"),
            format!("echo 'import os; os.system(\"{c}\")' | python3"),
            format!("python3 - <<'EOF'\nimport os; os.system(\"{c}\")\nEOF"),
            format!("perl -e 'system(\"{c}\")'"),
            format!("perl -le 'system(\"{c}\")'"),
            format!("node -e 'require(\"child_process\").execSync(\"{c}\")'"),
            format!("git -c core.pager={c} -p log -1"),
            format!("GIT_PAGER={c} git -p log -1"),
            format!("GIT_EXTERNAL_DIFF={c} git diff"),
            format!("git -c diff.external={c} diff"),
            format!("git -c alias.x='!{c}' x"),
            format!("git -c core.sshCommand={c} fetch ssh://h/x 2>/dev/null"),
            "git --config-env=core.pager=C -p log -1".to_string(),
            format!("tar -I {c} -cf /dev/null a.txt"),
            format!("tar --use-compress-program={c} -cf /dev/null a.txt"),
            format!("tar -cf t.tar a.txt; tar --to-command={c} -xf t.tar"),
            format!("make SHELL={c}"),
            format!("make -f - <<'EOF'\nall:\n\t{c}\nEOF"),
            format!("env -S {sq}"),
            format!("{c}=1 true; echo {c}"),
            // A repository's own folder: its settings and hooks run programs.
            format!(
                "printf '[core]\\n\\tfsmonitor = {c}\\n' > f.cfg; cp f.cfg .git/config; git status --short"
            ),
            format!(
                "printf '#!/bin/sh\\n{c}\\n' > h; chmod +x h; cp h .git/hooks/pre-commit; git -c user.name=o -c user.email=o@o commit -q --allow-empty -m x"
            ),
            format!(
                "printf '#!/bin/sh\\n{c}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; git -c user.name=o -c user.email=o@o commit -q --allow-empty -m x"
            ),
            format!(
                "cd .git/hooks && printf '#!/bin/sh\\n{c}\\n' > pre-commit && chmod +x pre-commit && cd ../.. && git -c user.name=o -c user.email=o@o commit -q --allow-empty -m x"
            ),
            format!("printf '[core]\\n\\tpager = {c}\\n' >> .gi?/config; git -p log -1"),
            // The sandbox's forwarding script and link (`fwd`, `lnk`).
            format!("env fwd {c}"),
            format!("fwd {c}"),
            format!("find . -maxdepth 0 -exec fwd {c} \\;"),
            "lnk".to_string(),
            "env lnk".to_string(),
        ];
        self.rng.pick(&forms).clone()
    }

    /// Programs that run commands in ways the check does not follow.
    fn runner(&mut self, word: &str, sq: &str) -> String {
        let forms = [
            format!("flock /dev/null {word}"),
            format!("watch -n 1 -e {word}"),
            format!("script -qc {sq} /dev/null"),
            format!("unshare -r {word}"),
            format!("prlimit {word}"),
            format!("taskset 1 {word}"),
            format!("chrt -o 0 {word}"),
            format!("ionice -c 3 {word}"),
            format!("strace -o /dev/null {word}"),
            format!("busybox sh -c {sq}"),
        ];
        self.rng.pick(&forms).clone()
    }

    /// A file written and then run: the default mode lets files run by design, the
    /// allowlist mode lists neither `./f.sh` nor the interpreters.
    fn written_and_run(&mut self, code: &str) -> String {
        self.allowlist_only = true;
        let c = CANARY;
        let sq = single_quoted(code);
        let forms = [
            format!("echo {sq} > f.sh; chmod +x f.sh; ./f.sh"),
            format!("printf '#!/bin/sh\\n{c}\\n' > f.sh; chmod +x f.sh; ./f.sh"),
            format!("echo 'import os; os.system(\"{c}\")' > f.py; python3 f.py"),
            format!("printf 'all:\\n\\t{c}\\n' > Makefile; make"),
            format!("echo 'BEGIN{{system(\"{c}\")}}' > f.awk; awk -f f.awk"),
            format!("echo '1e {c}' > f.sed; sed -f f.sed a.txt"),
            format!("echo {sq} > f.sh; bash f.sh"),
            format!("cp {}/{c} ./renamed; ./renamed", self.places.bin),
        ];
        self.rng.pick(&forms).clone()
    }

    /// One generated command: a few items in a list, some split across lines, some
    /// mutated a character or two.
    pub fn command(&mut self) -> Generated {
        self.allowlist_only = false;
        let items = 1 + self.rng.below(3);
        let canaries = self.rng.chance(55);
        let mut text = String::new();
        for i in 0..items {
            if i > 0 {
                let sep = self
                    .rng
                    .pick(&["; ", " && ", " || ", " | ", "\n", " & ", ";\n"]);
                text.push_str(sep);
            }
            let item = if canaries && (i + 1 == items || self.rng.chance(30)) {
                self.canary_item()
            } else {
                self.benign()
            };
            text.push_str(&item);
        }
        if self.rng.chance(20) {
            text = self.position(&text);
        }
        if self.rng.chance(15) {
            self.split_lines(&mut text);
        }
        if self.rng.chance(25) {
            self.mutate(&mut text);
        }
        Generated {
            text,
            allowlist_only: self.allowlist_only,
        }
    }

    /// Line continuations at random places.
    fn split_lines(&mut self, text: &mut String) {
        for _ in 0..1 + self.rng.below(3) {
            let at = self.rng.below(text.len() + 1);
            if text.is_char_boundary(at) {
                text.insert_str(at, "\\\n");
            }
        }
    }

    /// A character or two inserted or removed.
    fn mutate(&mut self, text: &mut String) {
        const INSERTED: &[&str] = &[
            "\\", "'", "\"", ";", "&", "|", "(", ")", "{", "}", "$", "#", "!", "<", ">", " ", "\n",
            "`", "*", "=", "~", "$'", "\\\n", "}", "${", "-",
        ];
        for _ in 0..1 + self.rng.below(2) {
            let at = self.rng.below(text.len() + 1);
            if !text.is_char_boundary(at) {
                continue;
            }
            if self.rng.chance(70) {
                let s = *self.rng.pick(INSERTED);
                text.insert_str(at, s);
            } else if at < text.len() && text.is_char_boundary(at + 1) {
                text.remove(at);
            }
        }
    }
}

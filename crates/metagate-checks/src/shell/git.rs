//! git: its settings can name commands (`core.pager`, `core.sshCommand`, `diff.external`,
//! `alias.x = !cmd`, …), and some of its commands run commands they are given. A setting
//! passes only when it is one of the plain ones listed here; those commands and options are
//! refused.

use super::command::{Arg, Step};
use super::{Finding, shown, unsupported};

/// Settings that change only how git shows, names or stores things. Every other setting
/// is refused: too many of them name a program (`core.pager`, `core.editor`,
/// `core.sshCommand`, `core.fsmonitor`, `core.hooksPath`, `diff.external`,
/// `diff.*.textconv`, `filter.*.clean`, `credential.helper`, `gpg.program`, `alias.*`, …).
const PLAIN_SETTINGS: &[&str] = &[
    "core.quotepath",
    "core.autocrlf",
    "core.safecrlf",
    "core.filemode",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.longpaths",
    "core.abbrev",
    "user.name",
    "user.email",
    "user.useconfigonly",
    "init.defaultbranch",
    "pull.rebase",
    "pull.ff",
    "merge.ff",
    "commit.gpgsign",
    "tag.gpgsign",
    "protocol.version",
    "http.sslverify",
    "safe.directory",
    "diff.noprefix",
    "diff.renames",
    "diff.algorithm",
    "diff.colormoved",
    "fetch.prune",
    "rebase.autostash",
    "status.showuntrackedfiles",
    "i18n.commitencoding",
    "i18n.logoutputencoding",
    "gc.auto",
    "maintenance.auto",
    "column.ui",
    "feature.manyfiles",
    "index.version",
    "log.decorate",
    "log.showsignature",
    "format.pretty",
];

/// Sections whose every setting is plain.
const PLAIN_SECTIONS: &[&str] = &["color", "advice"];

/// Commands of git that run commands they are given, or other programs by design.
const RUNNING_COMMANDS: &[&str] = &[
    "difftool",
    "mergetool",
    "filter-branch",
    "filter-repo",
    "send-email",
    "instaweb",
    "web--browse",
    "daemon",
    "shell",
    "credential",
    "credential-cache",
    "credential-store",
    "fsmonitor--daemon",
    "remote-ext",
    "remote-fd",
    "archimport",
    "cvsimport",
    "cvsexportcommit",
    "cvsserver",
    "svn",
    "p4",
    "quiltimport",
    "imap-send",
    "upload-pack",
    "receive-pack",
    "upload-archive",
    "http-backend",
    "sh-setup",
];

/// Long options that name a command to run, in any git command (git accepts their
/// abbreviations, so a prefix of one is refused too).
const RUNNING_OPTIONS: &[&str] = &[
    "upload-pack",
    "receive-pack",
    "exec",
    "extcmd",
    "open-files-in-pager",
    "template",
    "config",
    "config-env",
];

/// A setting's name, as git compares it: the section and the key ignore case.
fn plain_setting(key: &[u8]) -> bool {
    let key = String::from_utf8_lossy(key).to_ascii_lowercase();
    let section = key.split('.').next().unwrap_or_default();
    PLAIN_SETTINGS.contains(&key.as_str())
        || (PLAIN_SECTIONS.contains(&section) && key.len() > section.len() + 1)
}

fn setting_refused(key: &[u8]) -> Finding {
    unsupported(
        format!("the git setting `{}`", shown(key, 40)),
        "git settings can name commands to run; only plain ones are modelled",
    )
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Options before the command.
    #[default]
    Global,
    /// The value of `-C`, `--git-dir`, …
    GlobalPath,
    /// The `key=value` of `-c`.
    Setting,
    /// The command's own words.
    Command,
}

#[derive(Default)]
pub(super) struct Git {
    stage: Stage,
    /// The git command (`status`, `config`, …).
    command: Vec<u8>,
    /// Past `--`: paths only.
    paths: bool,
    /// `git config`: a reading option came first, or the operands read so far.
    config_reads: bool,
    config_operands: usize,
}

fn refuse(finding: Finding) -> Step {
    Step::Refuse {
        finding,
        liftable: true,
    }
}

impl Git {
    pub(crate) fn arg(&mut self, arg: &Arg<'_>, _index: usize) -> Step {
        match self.stage {
            Stage::Global => self.global(arg),
            Stage::GlobalPath => {
                if arg.value.is_none() {
                    return refuse(not_written());
                }
                self.stage = Stage::Global;
                Step::Next
            }
            Stage::Setting => {
                let Some(v) = arg.value else {
                    return refuse(not_written());
                };
                self.stage = Stage::Global;
                let key = match memchr::memchr(b'=', v) {
                    Some(eq) => &v[..eq],
                    None => v,
                };
                if plain_setting(key) {
                    Step::Next
                } else {
                    refuse(setting_refused(key))
                }
            }
            Stage::Command => self.command_word(arg),
        }
    }

    fn global(&mut self, arg: &Arg<'_>) -> Step {
        let Some(v) = arg.value else {
            return refuse(not_written());
        };
        match v {
            b"-c" => {
                self.stage = Stage::Setting;
                return Step::Next;
            }
            b"-C" | b"--git-dir" | b"--work-tree" | b"--namespace" | b"--attr-source" => {
                self.stage = Stage::GlobalPath;
                return Step::Next;
            }
            b"--bare"
            | b"--no-replace-objects"
            | b"--literal-pathspecs"
            | b"--glob-pathspecs"
            | b"--noglob-pathspecs"
            | b"--icase-pathspecs"
            | b"--no-optional-locks"
            | b"--no-pager"
            | b"-P"
            | b"-p"
            | b"--paginate"
            | b"--no-advice"
            | b"--version"
            | b"-v"
            | b"--help"
            | b"-h"
            | b"--html-path"
            | b"--man-path"
            | b"--info-path"
            | b"--exec-path" => return Step::Next,
            _ => {}
        }
        for prefix in [
            &b"--git-dir="[..],
            b"--work-tree=",
            b"--namespace=",
            b"--attr-source=",
            b"--list-cmds=",
        ] {
            if v.starts_with(prefix) {
                return Step::Next;
            }
        }
        if v.first() == Some(&b'-') {
            return refuse(unsupported(
                format!("the git option `{}`", shown(v, 30)),
                "the check does not model it (`--exec-path=` and `--config-env` run programs)",
            ));
        }
        let Ok(command) = std::str::from_utf8(v) else {
            return Step::Next;
        };
        if RUNNING_COMMANDS.contains(&command) {
            return refuse(unsupported(
                format!("`git {command}`"),
                "it runs commands or programs the check cannot see",
            ));
        }
        self.command = v.to_vec();
        self.stage = Stage::Command;
        Step::Next
    }

    /// Whether this git command has options that run commands.
    fn runs_commands(&self) -> bool {
        matches!(
            self.command.as_slice(),
            b"clone"
                | b"fetch"
                | b"pull"
                | b"push"
                | b"ls-remote"
                | b"archive"
                | b"rebase"
                | b"grep"
                | b"submodule"
                | b"bisect"
                | b"remote"
                | b"config"
        )
    }

    fn command_word(&mut self, arg: &Arg<'_>) -> Step {
        if self.paths {
            return Step::Next;
        }
        let Some(v) = arg.value else {
            if arg.may_be_option && self.runs_commands() {
                return refuse(not_written());
            }
            return Step::Next;
        };
        if v == b"--" {
            self.paths = true;
            return Step::Next;
        }
        if v.starts_with(b"ext::") || v.starts_with(b"fd::") {
            return refuse(unsupported(
                "a git `ext::` address",
                "it runs the command it names",
            ));
        }
        if self.command == b"config" {
            return self.config(v);
        }
        if let Some(long) = v.strip_prefix(b"--") {
            let name = match memchr::memchr(b'=', long) {
                Some(eq) => &long[..eq],
                None => long,
            };
            if !name.is_empty()
                && RUNNING_OPTIONS
                    .iter()
                    .any(|o| o.as_bytes().starts_with(name))
            {
                return refuse(running_option(&self.command, v));
            }
            return Step::Next;
        }
        if v.len() > 1 && v[0] == b'-' {
            let letters: &[u8] = match self.command.as_slice() {
                b"clone" => b"uc",
                b"ls-remote" => b"u",
                b"rebase" => b"x",
                b"grep" => b"O",
                _ => b"",
            };
            if v[1..].iter().any(|b| letters.contains(b)) {
                return refuse(running_option(&self.command, v));
            }
            return Step::Next;
        }
        let first = matches!(
            (self.command.as_slice(), v),
            (b"bisect", b"run") | (b"submodule", b"foreach")
        );
        if first {
            return refuse(unsupported(
                format!("`git {} {}`", shown(&self.command, 20), shown(v, 20)),
                "it runs the command it is given",
            ));
        }
        Step::Next
    }

    /// `git config`: reading any setting, writing plain ones.
    fn config(&mut self, v: &[u8]) -> Step {
        let reading = matches!(
            v,
            b"--get"
                | b"--get-all"
                | b"--get-regexp"
                | b"--get-urlmatch"
                | b"-l"
                | b"--list"
                | b"--unset"
                | b"--unset-all"
                | b"--remove-section"
                | b"get"
                | b"list"
                | b"unset"
                | b"remove-section"
        ) && self.config_operands == 0;
        if reading {
            self.config_reads = true;
            if v[0] != b'-' {
                self.config_operands = usize::MAX / 2;
            }
            return Step::Next;
        }
        let plain_option = matches!(
            v,
            b"--show-origin"
                | b"--show-scope"
                | b"--name-only"
                | b"-z"
                | b"--null"
                | b"--includes"
                | b"--no-includes"
                | b"--global"
                | b"--local"
                | b"--system"
                | b"--worktree"
                | b"--bool"
                | b"--int"
                | b"--bool-or-int"
                | b"--path"
                | b"--expiry-date"
        ) || v.starts_with(b"--type=")
            || v.starts_with(b"--default=");
        if plain_option {
            return Step::Next;
        }
        if v.first() == Some(&b'-') {
            return refuse(unsupported(
                format!("`git config {}`", shown(v, 30)),
                "the check does not model it (`--edit` runs an editor, `--file` writes any file)",
            ));
        }
        self.config_operands += 1;
        if v == b"set" && self.config_operands == 1 {
            self.config_operands = 0;
            return Step::Next;
        }
        if self.config_operands == 1 && !self.config_reads && !plain_setting(v) {
            return refuse(setting_refused(v));
        }
        Step::Next
    }

    pub(crate) fn finish(&mut self) -> Option<Finding> {
        None
    }
}

fn not_written() -> Finding {
    unsupported(
        "a word of `git` that is not written out",
        "bash would decide only when it runs whether it is an option naming a command",
    )
}

fn running_option(command: &[u8], option: &[u8]) -> Finding {
    unsupported(
        format!("`git {} {}`", shown(command, 20), shown(option, 30)),
        "this option runs a command",
    )
}

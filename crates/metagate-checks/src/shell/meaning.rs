//! `deny_commands` entries with arguments, matched by what the command means rather than by
//! how it is spelled: `kill`'s signal and process ids as bash's builtin and `/bin/kill` read
//! them (`kill -9 -1` is `kill -SIGKILL -1`, `kill -s 9 -1`, `kill -n 9 -1`, `kill -sKILL -1`,
//! `kill -kill -1`, `kill -9 -- -1`, `kill -9 ' -1'`, `kill -9 -01`, `kill -KILL 999999 -1`),
//! and the verbs and targets of `systemctl`, `init`, `shutdown` and their kin wherever they
//! stand (`systemctl --no-block poweroff`, `systemctl start poweroff.target`).
//!
//! Every other entry keeps matching its words one by one from the command word on.

use super::CommandPattern;
use super::command::Arg;

/// Programs whose entries are read here.
fn kind_of(program: &[u8]) -> Option<Kind> {
    match program {
        b"kill" => Some(Kind::Kill),
        b"systemctl" => Some(Kind::Systemctl),
        b"init" | b"telinit" | b"shutdown" | b"halt" | b"reboot" | b"poweroff" => {
            Some(Kind::Anywhere)
        }
        _ => None,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Kill,
    Systemctl,
    /// The entry's words, each anywhere in the command, in any case.
    Anywhere,
}

/// Whether `entry` (with arguments) is matched by meaning here.
pub(super) fn reads(entry: &CommandPattern) -> bool {
    let words = entry.words();
    match kind_of(&words[0]) {
        Some(Kind::Kill) => KillReading::of_entry(&words[1..]).is_some(),
        Some(_) => words.len() > 1,
        None => false,
    }
}

/// The entries a command is held against by meaning, each with its reading of the words so
/// far. A handful of entries, a few bytes of state each: constant memory per command.
pub(super) struct Meanings {
    readers: Vec<(usize, Reader)>,
}

enum Reader {
    Kill {
        want: KillReading,
        seen: KillState,
    },
    Words {
        systemctl: bool,
        want: Vec<Box<[u8]>>,
        found: Vec<bool>,
        seen: VerbState,
    },
}

impl Meanings {
    /// The readers for `entries` (index and entry, each one [`reads`] accepts), for a command
    /// that is bash's builtin (`builtin`) or a program.
    pub(super) fn new<'p>(
        entries: impl Iterator<Item = (usize, &'p CommandPattern)>,
        builtin: bool,
    ) -> Meanings {
        let mut readers = Vec::new();
        for (e, entry) in entries {
            let words = entry.words();
            let reader = match kind_of(&words[0]) {
                Some(Kind::Kill) => match KillReading::of_entry(&words[1..]) {
                    Some(want) => Reader::Kill {
                        want,
                        seen: KillState::new(builtin),
                    },
                    None => continue,
                },
                Some(kind) => Reader::Words {
                    systemctl: kind == Kind::Systemctl,
                    want: words[1..].to_vec(),
                    found: vec![false; words.len() - 1],
                    seen: VerbState::default(),
                },
                None => continue,
            };
            readers.push((e, reader));
        }
        Meanings { readers }
    }

    /// The next word of the command; the entry it now matches, if any.
    pub(super) fn arg(&mut self, arg: &Arg<'_>) -> Option<usize> {
        for (e, reader) in &mut self.readers {
            let matched = match reader {
                Reader::Kill { want, seen } => seen.arg(arg, want),
                Reader::Words {
                    systemctl,
                    want,
                    found,
                    seen,
                } => words_arg(*systemctl, want, found, seen, arg),
            };
            if matched {
                return Some(*e);
            }
        }
        None
    }
}

// ---------------------------------------------------------------------------
// kill

/// Signals a command may send: the numbers known, or any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Signals {
    bits: u128,
    any: bool,
}

impl Signals {
    fn one(n: u32) -> Signals {
        Signals {
            bits: 1u128 << n,
            any: false,
        }
    }

    fn any() -> Signals {
        Signals { bits: 0, any: true }
    }

    fn meets(&self, other: &Signals) -> bool {
        self.any || other.any || self.bits & other.bits != 0
    }
}

/// The highest signal number Linux has (`SIGRTMAX`); bash's `NSIG` is one more.
const MAX_SIGNAL: u32 = 64;

/// Linux's signal names, as bash and `kill` accept them (without `SIG`, in any case).
const SIGNALS: &[(&str, u32)] = &[
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("ILL", 4),
    ("TRAP", 5),
    ("ABRT", 6),
    ("IOT", 6),
    ("BUS", 7),
    ("FPE", 8),
    ("KILL", 9),
    ("USR1", 10),
    ("SEGV", 11),
    ("USR2", 12),
    ("PIPE", 13),
    ("ALRM", 14),
    ("TERM", 15),
    ("STKFLT", 16),
    ("CHLD", 17),
    ("CLD", 17),
    ("CONT", 18),
    ("STOP", 19),
    ("TSTP", 20),
    ("TTIN", 21),
    ("TTOU", 22),
    ("URG", 23),
    ("XCPU", 24),
    ("XFSZ", 25),
    ("VTALRM", 26),
    ("PROF", 27),
    ("WINCH", 28),
    ("IO", 29),
    ("POLL", 29),
    ("PWR", 30),
    ("SYS", 31),
];

/// bash's `legal_number` (and `strtol` as `/bin/kill` uses it): blanks around, a sign,
/// decimal digits; `-01` is -1 and `' -1'` is -1.
fn legal_number(word: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(word).ok()?;
    let text = text.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r'));
    let digits = text
        .strip_prefix('-')
        .or_else(|| text.strip_prefix('+'))
        .unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i64>().ok()
}

/// The signal a specification names (`9`, `KILL`, `SIGKILL`, `kill`); any signal when the
/// check cannot tell (a real-time signal's offset, a name it does not know), so that a
/// spelling it does not read still meets every entry.
fn decode_signal(spec: &[u8]) -> Signals {
    if let Some(n) = legal_number(spec) {
        return match u32::try_from(n) {
            Ok(n) if n <= MAX_SIGNAL => Signals::one(n),
            _ => Signals::any(),
        };
    }
    let upper = String::from_utf8_lossy(spec).to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    match SIGNALS.iter().find(|(n, _)| *n == name) {
        Some((_, n)) => Signals::one(*n),
        None => Signals::any(),
    }
}

/// What a `kill` entry means: these signals to these processes (any process when none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct KillReading {
    signals: Signals,
    pids: Vec<i64>,
}

impl KillReading {
    /// An entry's words after `kill`, read as bash reads them; None when a word is one the
    /// reading cannot pin down (the entry then matches word by word).
    fn of_entry(words: &[Box<[u8]>]) -> Option<KillReading> {
        let mut state = KillState::new(true);
        let mut pids = Vec::new();
        for w in words {
            let arg = Arg {
                value: Some(w),
                may_be_option: w.first() == Some(&b'-'),
                may_split: false,
            };
            match state.read(&arg) {
                KillWord::Pid(Some(p)) => pids.push(p),
                KillWord::Pid(None) => return None,
                KillWord::Option | KillWord::NoTarget => {}
            }
        }
        if state.signals.any || state.listing || state.want != Want::Nothing {
            return None;
        }
        Some(KillReading {
            signals: state.signals,
            pids,
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Want {
    Nothing,
    Signal,
    /// A value to skip (`-q VALUE`), then perhaps a signal (`--timeout MS SIGNAL`).
    Skip {
        then_signal: bool,
    },
}

/// Where a `kill` command stands.
pub(super) struct KillState {
    builtin: bool,
    signals: Signals,
    /// The signal was given (bash reads a later `-N` as a process group).
    signal_given: bool,
    pids: bool,
    want: Want,
    /// `-l`/`-L`: signals are listed, nothing is sent.
    listing: bool,
    /// A word not written out came first: nothing is certain.
    unsure: bool,
}

enum KillWord {
    Option,
    /// A process to signal, None when any could be.
    Pid(Option<i64>),
    /// A word that signals nothing (a job, a bad id).
    NoTarget,
}

impl KillState {
    fn new(builtin: bool) -> KillState {
        KillState {
            builtin,
            signals: Signals::one(15),
            signal_given: false,
            pids: false,
            want: Want::Nothing,
            listing: false,
            unsure: false,
        }
    }

    fn set_signal(&mut self, s: Signals) {
        // A second signal option: bash takes the last, `/bin/kill` may not; either may run.
        self.signals = if self.signal_given {
            Signals {
                bits: self.signals.bits | s.bits,
                any: self.signals.any || s.any,
            }
        } else {
            s
        };
        self.signal_given = true;
    }

    /// Whether the command now sends one of `want`'s signals to one of its processes.
    fn arg(&mut self, arg: &Arg<'_>, want: &KillReading) -> bool {
        if arg.may_split && arg.value.is_none() && (self.unsure || !self.signal_given) {
            // Several words, or none, before the signal is known: a signal and a process
            // among them. Once the signal is given, they are read as processes (`kill -TERM
            // $pid`): a variable the command set to `-s KILL -1` would escape this reading.
            return !self.listing;
        }
        let before = self.signals;
        let pid = match self.read(arg) {
            KillWord::Pid(pid) => pid,
            KillWord::Option | KillWord::NoTarget => return false,
        };
        // A word not written out before the processes is a process sent the signal given
        // so far, or a signal for the processes after it (which later words meet).
        let signals = if arg.value.is_none() {
            before
        } else {
            self.signals
        };
        !self.listing
            && signals.meets(&want.signals)
            && (want.pids.is_empty() || pid.is_none_or(|p| want.pids.contains(&p)))
    }

    fn read(&mut self, arg: &Arg<'_>) -> KillWord {
        let Some(v) = arg.value else {
            if self.pids {
                return KillWord::Pid(None);
            }
            match self.want {
                Want::Signal => {
                    self.want = Want::Nothing;
                    self.set_signal(Signals::any());
                    return KillWord::Option;
                }
                Want::Skip { then_signal } => {
                    self.want = if then_signal {
                        Want::Signal
                    } else {
                        Want::Nothing
                    };
                    return KillWord::Option;
                }
                Want::Nothing => {}
            }
            if self.signal_given && !self.unsure {
                // After the signal, bash reads processes.
                self.pids = true;
                return KillWord::Pid(None);
            }
            // A signal or a process: both, from here on.
            self.set_signal(Signals::any());
            self.unsure = true;
            return KillWord::Pid(None);
        };
        if self.pids {
            return self.pid(v);
        }
        match self.want {
            Want::Signal => {
                self.want = Want::Nothing;
                self.set_signal(decode_signal(v));
                return KillWord::Option;
            }
            Want::Skip { then_signal } => {
                self.want = if then_signal {
                    Want::Signal
                } else {
                    Want::Nothing
                };
                return KillWord::Option;
            }
            Want::Nothing => {}
        }
        if v.first() != Some(&b'-') || v.len() < 2 {
            self.pids = true;
            return self.pid(v);
        }
        match v {
            b"--" => {
                self.pids = true;
                return KillWord::Option;
            }
            b"-l" | b"-L" | b"--list" | b"--table" if !self.unsure => {
                self.listing = true;
                return KillWord::Option;
            }
            b"-s" | b"-n" | b"--signal" => {
                self.want = Want::Signal;
                return KillWord::Option;
            }
            b"-q" | b"--queue" => {
                self.want = Want::Skip { then_signal: false };
                return KillWord::Option;
            }
            b"--timeout" => {
                self.want = Want::Skip { then_signal: true };
                return KillWord::Option;
            }
            b"-a" | b"--all" | b"-p" | b"--pid" | b"--verbose" | b"-r" | b"--require-handler"
                if !self.builtin =>
            {
                return KillWord::Option;
            }
            _ => {}
        }
        if let Some(value) = v.strip_prefix(b"--signal=") {
            self.set_signal(decode_signal(value));
            return KillWord::Option;
        }
        if v.starts_with(b"--") {
            // An option of some `kill` the check does not know: any signal.
            self.set_signal(Signals::any());
            return KillWord::Option;
        }
        if v.len() > 2 && v[1] == b's' && v[2].is_ascii_alphabetic()
            || v.len() > 2 && v[1] == b'n' && v[2].is_ascii_digit()
        {
            self.set_signal(decode_signal(&v[2..]));
            return KillWord::Option;
        }
        if !self.signal_given {
            self.set_signal(decode_signal(&v[1..]));
            return KillWord::Option;
        }
        // A second `-N`: a process group.
        self.pids = true;
        self.pid(v)
    }

    fn pid(&self, v: &[u8]) -> KillWord {
        if let Some(p) = legal_number(v) {
            return KillWord::Pid(Some(p));
        }
        if v.first() == Some(&b'%') && self.builtin {
            return KillWord::NoTarget;
        }
        if self.builtin {
            // bash refuses it and goes on with the next.
            return KillWord::NoTarget;
        }
        // `/bin/kill` from util-linux signals processes by name.
        KillWord::Pid(None)
    }
}

// ---------------------------------------------------------------------------
// systemctl, init, shutdown: words anywhere

/// Where a `systemctl` command stands: its verb (the first word that is no option), and
/// whether an option the check does not know may have taken the next word.
#[derive(Default)]
struct VerbState {
    verb: Option<Box<[u8]>>,
    /// An option whose value comes next.
    value_next: bool,
    /// An option the check does not know came before the verb: the verb is uncertain.
    unsure: bool,
}

/// systemctl's options that take a value as the next word.
const SYSTEMCTL_VALUES: &[&[u8]] = &[
    b"-t",
    b"--type",
    b"-p",
    b"--property",
    b"-s",
    b"--signal",
    b"-H",
    b"--host",
    b"-M",
    b"--machine",
    b"-n",
    b"--lines",
    b"-o",
    b"--output",
    b"--root",
    b"--image",
    b"--kill-whom",
    b"--kill-value",
    b"--what",
    b"--job-mode",
    b"--state",
    b"--preset-mode",
    b"--boot-loader-entry",
    b"--boot-loader-menu",
    b"--reboot-argument",
    b"--message",
    b"--timestamp",
    b"--when",
    b"--drop-in",
    b"--check-inhibitors",
    b"--image-policy",
];

/// Verbs that only look: a word not written out after one of them names a unit to show,
/// never one to start.
const LOOKING_VERBS: &[&[u8]] = &[
    b"status",
    b"show",
    b"cat",
    b"help",
    b"list-units",
    b"list-unit-files",
    b"list-sockets",
    b"list-timers",
    b"list-jobs",
    b"list-dependencies",
    b"list-machines",
    b"list-automounts",
    b"list-paths",
    b"is-active",
    b"is-enabled",
    b"is-failed",
    b"is-system-running",
    b"show-environment",
    b"get-default",
];

/// Units that do what a verb does when started: `poweroff.target` is `poweroff`.
fn unit_verb(unit: &[u8]) -> Option<&'static [u8]> {
    let unit = unit.strip_suffix(b".target").or_else(|| {
        unit.strip_prefix(b"systemd-")
            .and_then(|u| u.strip_suffix(b".service"))
    })?;
    Some(match unit {
        b"poweroff" | b"runlevel0" => b"poweroff",
        b"reboot" | b"runlevel6" | b"ctrl-alt-del" => b"reboot",
        b"halt" => b"halt",
        b"kexec" => b"kexec",
        b"soft-reboot" => b"soft-reboot",
        b"suspend" => b"suspend",
        b"hibernate" => b"hibernate",
        b"hybrid-sleep" => b"hybrid-sleep",
        b"suspend-then-hibernate" => b"suspend-then-hibernate",
        b"rescue" | b"runlevel1" => b"rescue",
        b"emergency" => b"emergency",
        _ => return None,
    })
}

fn has_glob(word: &[u8]) -> bool {
    word.iter().any(|b| b"*?[".contains(b))
}

/// One more word of a command held against an entry whose words may stand anywhere.
fn words_arg(
    systemctl: bool,
    want: &[Box<[u8]>],
    found: &mut [bool],
    seen: &mut VerbState,
    arg: &Arg<'_>,
) -> bool {
    let Some(v) = arg.value.filter(|_| !arg.may_split) else {
        // Not written out: it could be any of the words. After a verb that only looks, it
        // names a unit to show.
        let looking = systemctl
            && !seen.unsure
            && seen
                .verb
                .as_deref()
                .is_some_and(|verb| LOOKING_VERBS.contains(&verb));
        return !looking;
    };
    if systemctl {
        if seen.value_next {
            seen.value_next = false;
        } else if v.first() == Some(&b'-') {
            if SYSTEMCTL_VALUES.contains(&v) {
                seen.value_next = true;
            } else if seen.verb.is_none() && !v.contains(&b'=') && !is_systemctl_flag(v) {
                seen.unsure = true;
            }
        } else if seen.verb.is_none() {
            seen.verb = Some(v.into());
        }
        if has_glob(v) && seen.verb.as_deref() != Some(v) {
            return true;
        }
    }
    for (w, found) in want.iter().zip(found.iter_mut()) {
        let same = v.eq_ignore_ascii_case(w)
            || (systemctl && unit_verb(v).is_some_and(|verb| verb == &w[..]));
        if same {
            *found = true;
        }
    }
    found.iter().all(|f| *f)
}

/// systemctl's options that take no value.
fn is_systemctl_flag(v: &[u8]) -> bool {
    matches!(
        v,
        b"-a"
            | b"--all"
            | b"-r"
            | b"--recursive"
            | b"-q"
            | b"--quiet"
            | b"--no-block"
            | b"--wait"
            | b"--no-wall"
            | b"--no-reload"
            | b"--no-ask-password"
            | b"--no-pager"
            | b"--no-legend"
            | b"--now"
            | b"-f"
            | b"--force"
            | b"-i"
            | b"--ignore-inhibitors"
            | b"--user"
            | b"--system"
            | b"--global"
            | b"--runtime"
            | b"--full"
            | b"-l"
            | b"--failed"
            | b"--show-types"
            | b"--plain"
            | b"--firmware-setup"
            | b"--dry-run"
            | b"--read-only"
            | b"--mkdir"
            | b"--marked"
            | b"--show-transaction"
            | b"-T"
            | b"--version"
            | b"-h"
            | b"--help"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> CommandPattern {
        CommandPattern::parse(text).unwrap()
    }

    fn matches(entry_text: &str, words: &[&str], builtin: bool) -> bool {
        let e = entry(entry_text);
        assert!(reads(&e), "{entry_text} is read by meaning");
        let mut m = Meanings::new(std::iter::once((0, &e)), builtin);
        words.iter().any(|w| {
            let arg = if *w == "$x" {
                Arg {
                    value: None,
                    may_be_option: true,
                    may_split: false,
                }
            } else {
                Arg {
                    value: Some(w.as_bytes()),
                    may_be_option: w.starts_with('-'),
                    may_split: false,
                }
            };
            m.arg(&arg).is_some()
        })
    }

    #[test]
    fn kill_is_read_as_bash_reads_it() {
        let refused: &[&[&str]] = &[
            &["-9", "-1"],
            &["-SIGKILL", "-1"],
            &["-s", "9", "-1"],
            &["-n", "9", "-1"],
            &["-sKILL", "-1"],
            &["-kill", "-1"],
            &["-9", "--", "-1"],
            &["-9", " -1"],
            &["-9", "-01"],
            &["-KILL", "999999", "-1"],
            &["-s", "sigkill", "-1"],
            &["--signal=KILL", "-1"],
            &["-9", "$x"],
            &["$x", "-1"],
        ];
        for words in refused {
            assert!(matches("kill -9 -1", words, true), "kill {words:?} passed");
        }
        let passed: &[&[&str]] = &[
            &["%1"],
            &["-TERM", "$x"],
            &["-9", "1234"],
            &["-l", "9"],
            &["-1"],
            &["-HUP", "-1"],
            &["-9", "%1"],
            &["$x", "1234"],
            &["-TERM", "$x", "1"],
        ];
        for words in passed {
            assert!(
                !matches("kill -9 -1", words, true),
                "kill {words:?} refused"
            );
        }
        // The program signals processes by name; bash's builtin refuses a name.
        assert!(matches("kill -9 -1", &["-9", "init"], false));
        assert!(!matches("kill -9 -1", &["-9", "init"], true));
    }

    #[test]
    fn systemctl_verbs_and_targets_stand_anywhere() {
        let refused: &[&[&str]] = &[
            &["poweroff"],
            &["--no-block", "poweroff"],
            &["-q", "poweroff"],
            &["start", "poweroff.target"],
            &["isolate", "runlevel0.target"],
            &["start", "systemd-poweroff.service"],
            &["$x"],
            &["start", "$x"],
            &["start", "power*"],
            &["--frobnicate", "status", "$x"],
        ];
        for words in refused {
            assert!(
                matches("systemctl poweroff", words, false),
                "{words:?} passed"
            );
        }
        let passed: &[&[&str]] = &[
            &["status", "nginx"],
            &["restart", "nginx"],
            &["status", "$x"],
            &["-t", "service", "status", "$x"],
            &["list-units"],
        ];
        for words in passed {
            assert!(
                !matches("systemctl poweroff", words, false),
                "{words:?} refused"
            );
        }
        assert!(matches("init 0", &["--no-wall", "0"], false));
        assert!(!matches("init 0", &["q"], false));
    }
}

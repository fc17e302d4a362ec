//! A throwaway folder where real bash runs the commands the check passed: `HOME` inside
//! it, a `PATH` shim that records whether the canary ran, resource limits, a timeout, and
//! every file a command made removed before the next one.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a command may run.
const TIMEOUT: Duration = Duration::from_secs(5);

use super::grammar::CANARY;

pub struct Sandbox {
    root: PathBuf,
    home: PathBuf,
    bin: PathBuf,
    work: PathBuf,
    mark: PathBuf,
    shim: String,
}

/// Which runs' canaries wrote their mark while a command ran: each run's number, as the
/// shim read it from `MG_RUN` (a canary a command left running in the background may write
/// during a later run, and is told apart so). `None`: a canary that found no run number.
pub struct Ran {
    pub marks: Vec<Option<u64>>,
}

/// The canary's first lines: its run number from `MG_RUN`, or, when a command cleared the
/// environment on the way (`env -i`), from the nearest process above it that has one, or
/// else the run going on as the canary starts (`run`, beside the mark file). Programs by
/// their full paths: the command may have set any `PATH`.
const SHIM: &str = r#"#!/bin/sh
run=$MG_RUN
pid=$$
while [ -z "$run" ] && [ "$pid" -gt 1 ] 2>/dev/null; do
    pid=$(/usr/bin/sed -n 's/^PPid:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
    [ -n "$pid" ] || break
    run=$(/usr/bin/tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | /usr/bin/sed -n 's/^MG_RUN=//p')
done
[ -n "$run" ] || run=$(/usr/bin/cat 'RUN_FILE' 2>/dev/null)
"#;

const FIXTURE_TEXT: &str = "a b\nmgcanary x\nc d\n";

fn run_quietly(cmd: &mut Command) {
    let _ = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

impl Sandbox {
    pub fn new(root: &Path) -> Sandbox {
        let home = root.join("home");
        let bin = home.join("bin");
        let work = home.join("work");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(work.join("sub")).unwrap();
        let mark = root.join("mark");
        let shim = format!(
            "{}echo \"${{run:-unknown}}\" >> '{}'\nexit 0\n",
            SHIM.replace("RUN_FILE", &root.join("run").display().to_string()),
            mark.display()
        );
        let sandbox = Sandbox {
            root: root.to_path_buf(),
            home,
            bin,
            work,
            mark,
            shim,
        };
        // A repository whose `a.txt` differs from what is committed, so `git diff` runs a
        // diff program.
        std::fs::write(sandbox.work.join("a.txt"), "committed\n").unwrap();
        for args in [
            &["init", "-q"][..],
            &["add", "a.txt"],
            &[
                "-c",
                "user.name=o",
                "-c",
                "user.email=o@o",
                "commit",
                "-qm",
                "x",
            ],
        ] {
            run_quietly(sandbox.git().args(args));
        }
        sandbox.restore();
        sandbox
    }

    fn git(&self) -> Command {
        let mut c = Command::new("git");
        c.current_dir(&self.work)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.home);
        c
    }

    /// The folder holding the canary, as commands name it.
    pub fn bin(&self) -> String {
        self.bin.display().to_string()
    }

    /// Where redirections may write: inside the sandbox.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn work(&self) -> &Path {
        &self.work
    }

    /// Puts back the canary and the files commands read, and removes what they made.
    fn restore(&self) {
        let keep = |dir: &Path, names: &[&str]| {
            if let Ok(entries) = std::fs::read_dir(dir) {
                for e in entries.flatten() {
                    let name = e.file_name();
                    if names.iter().any(|n| name == *n) {
                        continue;
                    }
                    let path = e.path();
                    if path.is_dir() && !path.is_symlink() {
                        let _ = std::fs::remove_dir_all(&path);
                    } else {
                        let _ = std::fs::remove_file(&path);
                    }
                }
            }
        };
        keep(&self.root, &["home", "mark", "run"]);
        keep(&self.home, &["bin", "work"]);
        keep(&self.bin, &[]);
        keep(&self.work, &[".git", "sub"]);
        let canary = self.bin.join(CANARY);
        std::fs::write(&canary, &self.shim).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&canary, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A forwarding script as Fedora's bash ships them, and a link to the canary.
        let forward = self.bin.join("fwd");
        std::fs::write(&forward, "#!/bin/bash\nbuiltin command \"$@\"\n").unwrap();
        std::fs::set_permissions(&forward, std::fs::Permissions::from_mode(0o755)).unwrap();
        let _ = std::os::unix::fs::symlink(&canary, self.bin.join("lnk"));
        // The repository's own settings and hooks, as the sandbox made them.
        let git = self.work.join(".git");
        let _ = std::fs::write(
            git.join("config"),
            "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n",
        );
        keep(&git.join("hooks"), &[]);
        let _ = std::fs::remove_file(git.join("info").join("attributes"));
        std::fs::write(self.work.join("a.txt"), FIXTURE_TEXT).unwrap();
        std::fs::write(self.work.join("list.txt"), "one\ntwo\n").unwrap();
        std::fs::write(self.work.join("Makefile"), "all:\n\t@true\n").unwrap();
    }

    /// Runs `command` with `bash --norc --noprofile -c` as run number `id`, and says which
    /// runs' canaries ran meanwhile.
    pub fn run(&self, command: &str, id: u64) -> Ran {
        let mut marks = self.take_marks();
        std::fs::write(self.root.join("run"), id.to_string()).unwrap();
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", self.bin.display());
        // Limits first (CPU, memory, file size), then bash, in a process group of its own
        // that a timeout kills whole.
        let child = Command::new("/bin/sh")
            .arg("-c")
            // Not `exec`: this shell stays above bash with `MG_RUN` in its environment, where
            // a canary started through `env -i` finds it even when bash execs its last command.
            .arg("ulimit -t 5; ulimit -v 4000000; ulimit -f 20000; \"$0\" --norc --noprofile -c \"$1\"")
            .arg("/usr/bin/bash")
            .arg(command)
            .current_dir(&self.work)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", &self.home)
            .env("LANG", "C.UTF-8")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("MG_RUN", id.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn();
        match child {
            Ok(child) => {
                let group = child.id();
                // Reading the output to its end also waits for what the command left
                // running in the background with it.
                let (done, finished) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    let _ = done.send(child.wait_with_output());
                });
                if finished.recv_timeout(TIMEOUT).is_err() {
                    run_quietly(Command::new("kill").args(["-KILL", "--", &format!("-{group}")]));
                    let _ = finished.recv_timeout(Duration::from_secs(5));
                }
            }
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "could not run bash for {command:?}: {e}");
            }
        }
        if command.contains('&') || command.contains("setsid") || command.contains("nohup") {
            // Something in the background may run a moment later.
            std::thread::sleep(Duration::from_millis(30));
        }
        marks.extend(self.take_marks());
        self.restore();
        Ran { marks }
    }

    /// The runs whose canaries have written since the last look, and a clean mark file.
    fn take_marks(&self) -> Vec<Option<u64>> {
        let Ok(text) = std::fs::read_to_string(&self.mark) else {
            return Vec::new();
        };
        let _ = std::fs::remove_file(&self.mark);
        text.lines().map(|l| l.trim().parse().ok()).collect()
    }
}

//! Commands run in containers and pods: `docker exec C CMD`, `docker run IMAGE CMD`,
//! `kubectl exec POD -- CMD` (and `podman`, `nerdctl`, `oc`) run CMD, which is checked as a
//! command of its own; the flags that hand a container the host (`--privileged`,
//! `-v /:/host`, `--pid=host`, `--cap-add`, `--device`, …) are refused. Every other
//! subcommand is the engine's own business.

use super::command::{Arg, Inner, Step};
use super::programs::{not_written, refusal, unknown_option};
use super::{Finding, shown, unsupported};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Engine {
    /// docker, podman, nerdctl.
    Docker,
    /// kubectl, oc.
    Kube,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Options before the subcommand.
    Global,
    /// `docker container …`: the subcommand comes next.
    Group,
    /// `run`/`create` (or `exec`) options, before the image (or container, pod).
    Options { exec: bool },
    /// The image, container or pod was named; the command comes next (kubectl: after `--`).
    Target,
    /// `kubectl run NAME`: options until `--`.
    KubeRun,
    /// Nothing more to read.
    Rest,
}

pub(super) struct Container {
    name: &'static str,
    engine: Engine,
    stage: Stage,
    /// An option whose value comes next, and which one.
    value: Option<&'static str>,
}

/// Which engine `name` is.
pub(super) fn engine(name: &str) -> Option<Container> {
    let (name, engine) = match name {
        "docker" => ("docker", Engine::Docker),
        "docker-compose" | "podman-compose" => {
            return Some(Container {
                name: "docker-compose",
                engine: Engine::Docker,
                stage: Stage::Group,
                value: None,
            });
        }
        "podman" => ("podman", Engine::Docker),
        "nerdctl" => ("nerdctl", Engine::Docker),
        "kubectl" => ("kubectl", Engine::Kube),
        "oc" => ("oc", Engine::Kube),
        _ => return None,
    };
    Some(Container {
        name,
        engine,
        stage: Stage::Global,
        value: None,
    })
}

/// docker's options before the subcommand that take a value.
const DOCKER_GLOBAL_VALUES: &[&str] = &[
    "-H",
    "--host",
    "--context",
    "-c",
    "--config",
    "-l",
    "--log-level",
    "--tlscacert",
    "--tlscert",
    "--tlskey",
    "--url",
    "--connection",
    "--root",
    "--runroot",
    "--storage-driver",
    "--cgroup-manager",
    "--namespace",
    "-n",
    "--address",
    "-a",
];

/// kubectl's options (anywhere) that take a value.
const KUBE_VALUES: &[&str] = &[
    "-n",
    "--namespace",
    "--context",
    "--cluster",
    "--kubeconfig",
    "--user",
    "-s",
    "--server",
    "--token",
    "--as",
    "--as-group",
    "--as-uid",
    "-c",
    "--container",
    "-f",
    "--filename",
    "--pod-running-timeout",
    "--image",
    "--restart",
    "--env",
    "--port",
    "--labels",
    "-l",
    "--image-pull-policy",
    "--serviceaccount",
    "--request-timeout",
    "-v",
    "--dry-run",
    "--timeout",
    "--annotations",
    "--pod-running-timeout",
    "--field-manager",
    "-o",
    "--output",
];

const KUBE_FLAGS: &[&str] = &[
    "-i",
    "-t",
    "-it",
    "-ti",
    "--stdin",
    "--tty",
    "-q",
    "--quiet",
    "--rm",
    "--attach",
    "--command",
    "--leave-stdin-open",
    "--wait",
    "--insecure-skip-tls-verify",
];

/// `docker run`/`create` options that take no value.
const RUN_FLAGS: &[&str] = &[
    "-i",
    "-t",
    "-d",
    "-P",
    "-q",
    "--rm",
    "--init",
    "--read-only",
    "--tty",
    "--interactive",
    "--detach",
    "--publish-all",
    "--no-healthcheck",
    "--quiet",
    "--oom-kill-disable",
    "--sig-proxy",
    "--help",
    "--replace",
    "--tls-verify",
];

/// `docker run`/`create` options that take a value, and are harmless whatever it is.
const RUN_VALUES: &[&str] = &[
    "-a",
    "--attach",
    "-c",
    "--cpu-shares",
    "-e",
    "--env",
    "--env-file",
    "-h",
    "--hostname",
    "-l",
    "--label",
    "--label-file",
    "-m",
    "--memory",
    "-p",
    "--publish",
    "-u",
    "--user",
    "-w",
    "--workdir",
    "--name",
    "--add-host",
    "--annotation",
    "--blkio-weight",
    "--cgroup-parent",
    "--cidfile",
    "--cpu-period",
    "--cpu-quota",
    "--cpus",
    "--cpuset-cpus",
    "--cpuset-mems",
    "--dns",
    "--dns-option",
    "--dns-search",
    "--domainname",
    "--expose",
    "--gpus",
    "--group-add",
    "--health-interval",
    "--health-retries",
    "--health-timeout",
    "--health-start-period",
    "--ip",
    "--ip6",
    "--link",
    "--log-driver",
    "--log-opt",
    "--mac-address",
    "--memory-reservation",
    "--memory-swap",
    "--memory-swappiness",
    "--network-alias",
    "--platform",
    "--pull",
    "--restart",
    "--shm-size",
    "--stop-signal",
    "--stop-timeout",
    "--tmpfs",
    "--ulimit",
    "--oom-score-adj",
    "--pids-limit",
    "--cap-drop",
    "--detach-keys",
    "--arch",
    "--os",
];

/// Options that hand the container the host, or run what the check cannot see, refused
/// whatever their value.
const HOST_OPTIONS: &[&str] = &[
    "--privileged",
    "--cap-add",
    "--device",
    "--device-cgroup-rule",
    "--security-opt",
    "--volumes-from",
    "--sysctl",
    "--runtime",
    "--use-api-socket",
    "--entrypoint",
    "--health-cmd",
    "--rootfs",
    "--hooks-dir",
    "--oci-hooks-dir",
    "--overrides",
    "--cgroup-conf",
    "--mount-propagation",
];

/// Options whose value `host` shares the host's namespace.
const NAMESPACE_OPTIONS: &[&str] = &[
    "--network",
    "--net",
    "--pid",
    "--ipc",
    "--uts",
    "--userns",
    "--cgroupns",
];

/// `exec`'s options.
const EXEC_FLAGS: &[&str] = &[
    "-d",
    "-i",
    "-t",
    "-T",
    "--detach",
    "--interactive",
    "--tty",
    "--no-TTY",
];
const EXEC_VALUES: &[&str] = &[
    "-e",
    "--env",
    "--env-file",
    "-u",
    "--user",
    "-w",
    "--workdir",
    "--detach-keys",
];

fn host_refused(engine: &str, option: &str) -> Step {
    refusal(
        unsupported(
            format!("`{engine}` with `{}`", shown(option.as_bytes(), 60)),
            "it gives the container the host (privileges, devices, the host's files or namespaces), or runs a command the check cannot see",
        ),
        true,
    )
}

/// Whether a bind mount's source is on the host outside the working folder: an absolute
/// path, the home folder, or a way up (`..`). A named volume or a path below the working
/// folder is the container's own.
fn host_source(source: &[u8]) -> bool {
    source.starts_with(b"/")
        || source.starts_with(b"~")
        || source.split(|b| *b == b'/').any(|c| c == b"..")
}

/// The source of `-v SOURCE:TARGET[:OPTIONS]`, when it has one.
fn volume_source(value: &[u8]) -> Option<&[u8]> {
    let colon = memchr::memchr(b':', value)?;
    Some(&value[..colon])
}

/// The source of `--mount type=bind,source=/,target=/h`.
fn mount_source(value: &[u8]) -> Option<&[u8]> {
    value.split(|b| *b == b',').find_map(|kv| {
        kv.strip_prefix(b"source=")
            .or_else(|| kv.strip_prefix(b"src="))
    })
}

impl Container {
    pub(super) fn arg(&mut self, arg: &Arg<'_>) -> Step {
        if self.stage == Stage::Rest {
            return Step::Next;
        }
        let Some(v) = arg.value else {
            return refusal(not_written(self.name), true);
        };
        if let Some(option) = self.value.take() {
            return self.option_value(option, v);
        }
        match self.stage {
            Stage::Global => self.global(v),
            Stage::Group if v.first() == Some(&b'-') => {
                // `docker compose -f FILE -p NAME exec …`: compose's own options.
                if matches!(
                    v,
                    b"-f"
                        | b"--file"
                        | b"-p"
                        | b"--project-name"
                        | b"--profile"
                        | b"--env-file"
                        | b"--project-directory"
                        | b"--ansi"
                        | b"--progress"
                        | b"--parallel"
                ) {
                    self.value = Some("a compose option");
                }
                Step::Next
            }
            Stage::Group => self.subcommand(v),
            Stage::Options { exec } => self.option(v, exec),
            Stage::KubeRun => {
                if v == b"--" {
                    self.stage = Stage::Target;
                    return Step::Next;
                }
                if v.first() == Some(&b'-') {
                    return self.option(v, false);
                }
                Step::Next
            }
            Stage::Target => {
                if self.engine == Engine::Kube && v == b"--" {
                    return Step::Next;
                }
                if self.engine == Engine::Kube && v.first() == Some(&b'-') {
                    return self.option(v, true);
                }
                self.stage = Stage::Rest;
                Step::Runs(Inner {
                    by_program: true,
                    ..Inner::default()
                })
            }
            Stage::Rest => Step::Next,
        }
    }

    fn global(&mut self, v: &[u8]) -> Step {
        let text = String::from_utf8_lossy(v);
        if v.first() == Some(&b'-') {
            let (name, inline) = match text.split_once('=') {
                Some((n, _)) => (n.to_string(), true),
                None => (text.to_string(), false),
            };
            let values = match self.engine {
                Engine::Docker => DOCKER_GLOBAL_VALUES,
                Engine::Kube => KUBE_VALUES,
            };
            if let Some(o) = values.iter().find(|o| **o == name)
                && !inline
            {
                self.value = Some(o);
            }
            return Step::Next;
        }
        self.subcommand(v)
    }

    fn subcommand(&mut self, v: &[u8]) -> Step {
        let group = self.stage == Stage::Global;
        self.stage = match (self.engine, v) {
            (Engine::Docker, b"container" | b"compose") if group => Stage::Group,
            (Engine::Docker, b"run" | b"create") => Stage::Options { exec: false },
            (Engine::Docker, b"exec") => Stage::Options { exec: true },
            (Engine::Kube, b"exec") => Stage::Options { exec: true },
            (Engine::Kube, b"run") => Stage::KubeRun,
            (Engine::Kube, b"debug" | b"rsh" | b"node-shell") => {
                return refusal(
                    unsupported(
                        format!("`{} {}`", self.name, shown(v, 20)),
                        "it runs a shell in a pod or on a node (`debug node/…` mounts the host), which the check cannot follow",
                    ),
                    true,
                );
            }
            _ => Stage::Rest,
        };
        Step::Next
    }

    fn option(&mut self, v: &[u8], exec: bool) -> Step {
        if v.first() != Some(&b'-') || v == b"-" {
            self.stage = Stage::Target;
            return Step::Next;
        }
        if v == b"--" {
            self.stage = Stage::Target;
            return Step::Next;
        }
        let text = String::from_utf8_lossy(v).into_owned();
        let (name, inline) = match text.split_once('=') {
            Some((n, value)) => (n.to_string(), Some(value.to_string())),
            None => (text.clone(), None),
        };
        if HOST_OPTIONS.contains(&name.as_str()) {
            return host_refused(self.name, &text);
        }
        let (flags, values): (&[&str], &[&str]) = match (self.engine, exec) {
            (Engine::Kube, _) => (KUBE_FLAGS, KUBE_VALUES),
            (Engine::Docker, true) => (EXEC_FLAGS, EXEC_VALUES),
            (Engine::Docker, false) => (RUN_FLAGS, RUN_VALUES),
        };
        let checked: &[&'static str] = &[
            "-v",
            "--volume",
            "--mount",
            "--network",
            "--net",
            "--pid",
            "--ipc",
            "--uts",
            "--userns",
            "--cgroupns",
        ];
        let known = |n: &str| -> Option<&'static str> {
            values
                .iter()
                .chain(if exec || self.engine == Engine::Kube {
                    &[][..]
                } else {
                    checked
                })
                .find(|o| **o == n)
                .copied()
        };
        if let Some(option) = known(&name) {
            return match inline {
                Some(value) => self.option_value(option, value.as_bytes()),
                None => {
                    self.value = Some(option);
                    Step::Next
                }
            };
        }
        if flags.contains(&name.as_str()) {
            return Step::Next;
        }
        // Short flags together (`-it`, `-dit`), the last perhaps taking a value (`-p80:80`).
        if !name.starts_with("--") && name.len() > 2 {
            for (i, c) in name[1..].char_indices() {
                let one = format!("-{c}");
                if let Some(option) = known(&one) {
                    let rest = &name[i + 1 + c.len_utf8()..];
                    if rest.is_empty() {
                        self.value = Some(option);
                        return Step::Next;
                    }
                    return self.option_value(option, rest.as_bytes());
                }
                if !flags.contains(&one.as_str()) {
                    return refusal(unknown_option(self.name, v), true);
                }
            }
            return Step::Next;
        }
        refusal(unknown_option(self.name, v), true)
    }

    fn option_value(&mut self, option: &str, value: &[u8]) -> Step {
        let refused = match option {
            "-v" | "--volume" => volume_source(value).is_some_and(host_source),
            "--mount" => mount_source(value).is_some_and(host_source),
            _ if NAMESPACE_OPTIONS.contains(&option) => {
                value == b"host" || value.starts_with(b"host:") || value.starts_with(b"ns:")
            }
            _ => false,
        };
        if refused {
            return host_refused(
                self.name,
                &format!("{option} {}", String::from_utf8_lossy(value)),
            );
        }
        Step::Next
    }

    pub(super) fn finish(&mut self) -> Option<Finding> {
        None
    }
}

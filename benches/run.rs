//! What `metagate run` adds to a command's run, against the same command run plainly, in the
//! same run: `bash -c 'echo hi'` spawned N times by this bench, and the same command sent N
//! times as calls to one `metagate run --jsonl` (the loop an agent keeps), with telemetry on
//! (each call's decision and outcome committed to a store) and off, and to `metagate run` once
//! per call. Wall-clock times, medians of rounds: `cargo bench --bench run`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_metagate");
const CODE: &str = "echo hi";
const CALLS: usize = 200;
const ROUNDS: usize = 5;

fn call() -> String {
    format!(
        "{{\"tool_name\":\"code_execution_tool\",\"tool_args\":{{\"runtime\":\"terminal\",\"code\":\"{CODE}\"}}}}\n"
    )
}

fn plain() -> Duration {
    let start = Instant::now();
    for _ in 0..CALLS {
        let out = Command::new("bash").args(["-c", CODE]).output().unwrap();
        assert!(out.status.success());
    }
    start.elapsed() / CALLS as u32
}

fn looped(home: &std::path::Path, telemetry: bool) -> Duration {
    let mut c = Command::new(BIN);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .current_dir(home)
        .args(["run", "--jsonl", "-q"]);
    if !telemetry {
        c.arg("--no-telemetry");
    }
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // One call first: the store opened, the kernel asked, before the clock starts.
    stdin.write_all(call().as_bytes()).unwrap();
    lines.next().unwrap().unwrap();
    let start = Instant::now();
    for _ in 0..CALLS {
        stdin.write_all(call().as_bytes()).unwrap();
        let line = lines.next().unwrap().unwrap();
        assert!(line.contains("[exit status 0]"), "{line}");
    }
    let took = start.elapsed() / CALLS as u32;
    drop(stdin);
    child.wait().unwrap();
    took
}

fn single(home: &std::path::Path) -> Duration {
    let n = CALLS / 4;
    let start = Instant::now();
    for _ in 0..n {
        let mut child = Command::new(BIN)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home)
            .current_dir(home)
            .args(["run", "-q"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(call().as_bytes())
            .unwrap();
        assert!(child.wait_with_output().unwrap().status.success());
    }
    start.elapsed() / n as u32
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let home = tempfile::tempdir().unwrap();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (mut p, mut lt, mut ln, mut s) = (vec![], vec![], vec![], vec![]);
    for _ in 0..ROUNDS {
        p.push(plain());
        lt.push(looped(home.path(), true));
        ln.push(looped(home.path(), false));
        s.push(single(home.path()));
    }
    let (p, lt, ln, s) = (median(p), median(lt), median(ln), median(s));
    println!(
        "bash -c '{CODE}' plainly:                 {:.2} ms per run",
        ms(p)
    );
    println!(
        "through run --jsonl (telemetry on):     {:.2} ms per call, +{:.2} ms",
        ms(lt),
        ms(lt) - ms(p)
    );
    println!(
        "through run --jsonl --no-telemetry:     {:.2} ms per call, +{:.2} ms",
        ms(ln),
        ms(ln) - ms(p)
    );
    println!(
        "one metagate run per call (telemetry):  {:.2} ms per call, +{:.2} ms",
        ms(s),
        ms(s) - ms(p)
    );
}

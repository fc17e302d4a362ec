//! The `url` kind against real URL parsers (issue 24, item 4): a URL the check passes must
//! name the same host to every parser a tool may use, or a parser-differential URL
//! (`http://x#@169.254.169.254/`) would be checked as one host and fetched from another.
//! The parsers: WHATWG's, as browsers, Node, Deno and Rust's `url` crate implement it (the
//! `url` crate, a dev-dependency for this test alone), and, when Python is installed,
//! `urllib.parse.urlsplit` and, for http and https, `urllib3.util.parse_url` (what
//! `requests` sends with).
//! Hosts are compared in the spelling the check compares them in (`canonical_host`): lower
//! case, an IPv4 address in dotted decimal however it was written, so that only a different
//! host counts as a disagreement, not another spelling of the same one.

use std::io::Write;
use std::process::{Command, Stdio};

use metagate_checks::host::{canonical_host, url_host};
use serde_json::Value;

/// How URLs begin: schemes WHATWG treats as special and not, and broken separators.
const STARTS: &[&str] = &[
    "http://",
    "https://",
    "HTTPS://",
    "ws://",
    "ftp://",
    "git+ssh://",
    "a.b-c://",
    "http:",
    "http:/",
    "http:\\\\",
    "http:///",
    "",
];

/// What comes after: host names and addresses in many spellings, and every character that
/// ends, splits or escapes an authority somewhere.
const PIECES: &[&str] = &[
    "example.com",
    "Example.COM",
    "169.254.169.254",
    "0xa9fea9fe",
    "0251.0376.0251.0376",
    "2852039166",
    "127.1",
    "[::1]",
    "[::ffff:169.254.169.254]",
    "[fd00:ec2::254]",
    "[::169.254.169.254]",
    "x",
    "a-b_c",
    "1",
    "0x",
    "08",
    "256",
    ".",
    "..",
    ":",
    ":80",
    ":0080",
    ":99999",
    "/",
    "//",
    "?",
    "#",
    "@",
    "\\",
    "%40",
    "%2e",
    "%2F",
    "%",
    "[",
    "]",
    ";",
    ",",
    "!",
    "$",
    "&",
    "'",
    "(",
    "*",
    "+",
    "=",
    "~",
    "|",
    "^",
    "`",
    "{",
    "\"",
    "<",
    " ",
    "\t",
    "\u{3002}",
    "\u{ff0e}",
    "\u{ad}",
    "é",
    "xn--bcher-kva",
];

/// Classic parser-differential URLs (Orange Tsai's "A New Era of SSRF" and since), beside
/// the generated ones.
const CLASSIC: &[&str] = &[
    "http://x#@169.254.169.254/",
    "http://x?@169.254.169.254/",
    "http://x#@169.254.169.254",
    "http://example.com#@169.254.169.254/",
    "http://example.com?@169.254.169.254/",
    "http://example.com:80#@169.254.169.254/",
    "http://1.1.1.1 &@2.2.2.2# @3.3.3.3/",
    "http://127.0.0.1:11211:80/",
    "http://foo@evil.com:80@google.com/",
    "http://foo@127.0.0.1 @google.com/",
    "http://evil.com\\@good.com/",
    "http://good.com\\evil.com/",
    "http:\\\\evil.com/",
    "http:/\\evil.com/",
    "http:evil.com/",
    "http:///evil.com/",
    "http://evil.com%2f@good.com/",
    "http://evil.com%23@good.com/",
    "http://evil.com%40good.com/",
    "http://ev\til.com/",
    "http://ev\nil.com/",
    "http://ev\u{ad}il.com/",
    "http://ｅｖｉｌ.com/",
    "http://evil。com/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[::169.254.169.254]/",
    "http://0x7f.1/",
    "http://0177.0.0.1/",
    "http://2130706433/",
    "http://127.0.0.1./",
    "http://[fe80::1%25eth0]/",
    "http://good.com:@evil.com/",
    "http://good.com:80\\@evil.com/",
    "http://good.com;@evil.com/",
    "http://good.com&@evil.com/",
    "https://example.com/?email=a@example.org",
    "https://medium.com/@someone/post",
    "https://example.com#frag",
    "https://example.com?q=1",
    "https://EXAMPLE.com:443/",
];

/// A small deterministic generator (xorshift64*): the same URLs on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
}

fn urls() -> Vec<String> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out: Vec<String> = CLASSIC.iter().map(|s| s.to_string()).collect();
    for _ in 0..40_000 {
        let mut url = rng.pick(STARTS).to_string();
        for _ in 0..(rng.next() % 7) {
            url.push_str(rng.pick(PIECES));
        }
        out.push(url);
    }
    out
}

/// A host another parser gave, in the check's spelling; `None` when the check could not
/// read it as a host at all (then it cannot be the host the check passed).
fn compared(host: &str) -> Option<String> {
    let bracketed = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    canonical_host(&bracketed).ok().map(|h| h.into_owned())
}

#[test]
fn every_parser_reads_the_host_the_check_passes() {
    let urls = urls();
    let passed: Vec<(&str, String)> = urls
        .iter()
        .filter_map(|u| {
            url_host(u)
                .ok()
                .map(|(_, host)| (u.as_str(), host.into_owned()))
        })
        .collect();
    // The generator reaches both sides: many URLs pass, many more are refused.
    assert!(
        passed.len() > 1_000 && passed.len() < urls.len() / 2,
        "{} of {} passed",
        passed.len(),
        urls.len()
    );
    let mut disagreements = Vec::new();
    for (u, host) in &passed {
        let whatwg = url::Url::parse(u)
            .ok()
            .and_then(|p| p.host_str().map(str::to_string));
        if whatwg.as_deref().and_then(compared).as_ref() != Some(host) {
            disagreements.push(format!("{u:?}: check {host}, WHATWG {whatwg:?}"));
        }
    }
    for (u, host, python) in python_hosts(&passed) {
        disagreements.push(format!("{u:?}: check {host}, Python {python}"));
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}

/// The URLs whose host Python's `urlsplit` or `urllib3` reads otherwise than the check:
/// (url, the check's host, what Python read). Empty, with a note, where Python or urllib3
/// is not installed.
fn python_hosts<'u>(passed: &[(&'u str, String)]) -> Vec<(&'u str, String, String)> {
    const SCRIPT: &str = r#"
import json, sys
from urllib.parse import urlsplit
from urllib3.util import parse_url
for line in sys.stdin:
    url = json.loads(line)
    out = {}
    try:
        out["urlsplit"] = urlsplit(url).hostname
    except Exception as e:
        out["urlsplit"] = None
    try:
        out["urllib3"] = parse_url(url).host
    except Exception as e:
        out["urllib3"] = None
    print(json.dumps(out))
"#;
    let child = Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("note: no python3: the Python parsers were not compared");
        return Vec::new();
    };
    let mut input = Vec::new();
    for (u, _) in passed {
        serde_json::to_writer(&mut input, u).unwrap();
        input.push(b'\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    if !out.status.success() {
        eprintln!(
            "note: Python's parsers could not run ({}): not compared",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
        return Vec::new();
    }
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), passed.len(), "one answer per URL");
    let mut differ = Vec::new();
    for ((u, host), answer) in passed.iter().zip(&answers) {
        // requests fetches http and https only, and urllib3 reads no other scheme with a
        // `.` in it: it is asked about those two.
        let web = ["http:", "https:"]
            .iter()
            .any(|s| u.get(..s.len()).is_some_and(|p| p.eq_ignore_ascii_case(s)));
        let parsers: &[&str] = if web {
            &["urlsplit", "urllib3"]
        } else {
            &["urlsplit"]
        };
        for &parser in parsers {
            let read = answer[parser].as_str();
            if read.and_then(compared).as_ref() != Some(host) {
                differ.push((*u, host.clone(), format!("{parser} {read:?}")));
            }
        }
    }
    differ
}

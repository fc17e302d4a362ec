use std::path::PathBuf;

use proptest::prelude::*;

use super::*;

const MIN: i64 = 60_000;

fn grant(scope: &[&str], session: Option<&str>) -> Grant {
    Grant {
        id: GrantId::from_bytes([7; 16]),
        capability: "system_execute".into(),
        scope: scope.iter().map(|s| ScopeEntry::from_text(s)).collect(),
        unreadable: None,
        session: session.map(str::to_string),
        granted_at_ms: 1000 * MIN,
        expires_at_ms: 1005 * MIN,
        revoked_at_ms: None,
        granted_by: Some("op".into()),
        reason: None,
        mac: None,
        forged: false,
    }
}

fn need<'a>(session: Option<&'a str>, paths: &[&str], hosts: &[&str]) -> Need<'a> {
    Need {
        capability: "system_execute",
        session,
        paths: paths.iter().map(PathBuf::from).collect(),
        hosts: hosts.iter().map(|h| h.to_string()).collect(),
        unresolved: Vec::new(),
    }
}

/// A need whose one path could not be resolved, with the path `resolved` beside it.
fn unresolved<'a>(resolved: &[&str], text: &str) -> Need<'a> {
    Need {
        unresolved: vec![Unresolved {
            what: "path",
            text: text.to_string(),
            why: "outside the root /w".to_string(),
        }],
        ..need(None, resolved, &[])
    }
}

#[test]
fn coverage_table() {
    let t = 1001 * MIN;
    let mut revoked = grant(&[], None);
    revoked.revoked_at_ms = Some(1000 * MIN + 1);
    let mut other_cap = grant(&[], None);
    other_cap.capability = "screen_read".into();
    #[allow(clippy::type_complexity)]
    let cases: Vec<(&str, Grant, Need<'_>, i64, Result<(), &str>)> = vec![
        (
            "live, unscoped",
            grant(&[], None),
            need(None, &[], &[]),
            t,
            Ok(()),
        ),
        (
            "at granted_at",
            grant(&[], None),
            need(None, &[], &[]),
            1000 * MIN,
            Ok(()),
        ),
        (
            "last ms",
            grant(&[], None),
            need(None, &[], &[]),
            1005 * MIN - 1,
            Ok(()),
        ),
        (
            "at expires_at",
            grant(&[], None),
            need(None, &[], &[]),
            1005 * MIN,
            Err("expired"),
        ),
        (
            "after expiry",
            grant(&[], None),
            need(None, &[], &[]),
            2000 * MIN,
            Err("expired"),
        ),
        ("revoked", revoked, need(None, &[], &[]), t, Err("revoked")),
        (
            "clock moved back",
            grant(&[], None),
            need(None, &[], &[]),
            999 * MIN,
            Err("future"),
        ),
        (
            "other capability",
            other_cap,
            need(None, &[], &[]),
            t,
            Err("another capability"),
        ),
        (
            "session matches",
            grant(&[], Some("s1")),
            need(Some("s1"), &[], &[]),
            t,
            Ok(()),
        ),
        (
            "other session",
            grant(&[], Some("s1")),
            need(Some("s2"), &[], &[]),
            t,
            Err("bound to session"),
        ),
        (
            "no session",
            grant(&[], Some("s1")),
            need(None, &[], &[]),
            t,
            Err("no session"),
        ),
        (
            "unbound, any session",
            grant(&[], None),
            need(Some("s9"), &[], &[]),
            t,
            Ok(()),
        ),
        (
            "scope: the folder",
            grant(&["/w/a"], None),
            need(None, &["/w/a"], &[]),
            t,
            Ok(()),
        ),
        (
            "scope: under it",
            grant(&["/w/a"], None),
            need(None, &["/w/a/b/c.txt"], &[]),
            t,
            Ok(()),
        ),
        (
            "scope: prefix sibling",
            grant(&["/w/a"], None),
            need(None, &["/w/ab"], &[]),
            t,
            Err("does not cover the path \"/w/ab\""),
        ),
        (
            "scope: sibling file",
            grant(&["/w/a"], None),
            need(None, &["/w/a.txt"], &[]),
            t,
            Err("does not cover the path"),
        ),
        (
            "scope: parent",
            grant(&["/w/a"], None),
            need(None, &["/w"], &[]),
            t,
            Err("does not cover"),
        ),
        (
            "scope: every path",
            grant(&["/w/a"], None),
            need(None, &["/w/a/x", "/w/b"], &[]),
            t,
            Err("/w/b"),
        ),
        (
            "scope: two entries",
            grant(&["/w/a", "/w/b"], None),
            need(None, &["/w/a/x", "/w/b"], &[]),
            t,
            Ok(()),
        ),
        (
            "scope: nothing to check",
            grant(&["/w/a"], None),
            need(None, &[], &[]),
            t,
            Err("names no path"),
        ),
        (
            "scope: an unresolved path, lexically inside",
            grant(&["/w/a"], None),
            unresolved(&[], "/w/a/../../etc/passwd"),
            t,
            Err("cannot be resolved"),
        ),
        (
            "scope: an unresolved path beside a covered one",
            grant(&["/w/a", "/w/a/**"], None),
            unresolved(&["/w/a/x"], "/w/a/../../etc/passwd"),
            t,
            Err("\"/w/a/../../etc/passwd\" cannot be resolved"),
        ),
        (
            "unscoped: the whole capability, paths unread",
            grant(&[], None),
            unresolved(&[], "/etc/passwd"),
            t,
            Ok(()),
        ),
        (
            "unreadable scope: nothing",
            Grant {
                unreadable: Some("the stored scope is not a JSON list of strings".into()),
                ..grant(&[], None)
            },
            need(None, &["/w/a"], &[]),
            t,
            Err("unreadable"),
        ),
        (
            "host: exact",
            grant(&["host:example.com"], None),
            need(None, &[], &["example.com"]),
            t,
            Ok(()),
        ),
        (
            "host: case and dot",
            grant(&["host:example.com"], None),
            need(None, &[], &["EXAMPLE.com."]),
            t,
            Ok(()),
        ),
        (
            "host: subdomain needs *.",
            grant(&["host:example.com"], None),
            need(None, &[], &["a.example.com"]),
            t,
            Err("host a.example.com"),
        ),
        (
            "host: wildcard",
            grant(&["host:*.example.com"], None),
            need(None, &[], &["a.example.com"]),
            t,
            Ok(()),
        ),
        (
            "host: wildcard not apex",
            grant(&["host:*.example.com"], None),
            need(None, &[], &["example.com"]),
            t,
            Err("host"),
        ),
        (
            "host: suffix lookalike",
            grant(&["host:*.example.com"], None),
            need(None, &[], &["badexample.com"]),
            t,
            Err("host"),
        ),
        (
            "host: wildcard, empty label",
            grant(&["host:*.example.com"], None),
            need(None, &[], &["a..example.com"]),
            t,
            Err("host"),
        ),
        (
            "host: wildcard, empty labels only",
            grant(&["host:*.example.com"], None),
            need(None, &[], &["..example.com"]),
            t,
            Err("host"),
        ),
        (
            "host: wildcard, two labels",
            grant(&["host:*.example.com"], None),
            need(None, &[], &["a.b.example.com"]),
            t,
            Ok(()),
        ),
        (
            "host scope, path call",
            grant(&["host:example.com"], None),
            need(None, &["/w/a"], &[]),
            t,
            Err("path"),
        ),
        (
            "glob: one level",
            grant(&["/w/docs/*.md"], None),
            need(None, &["/w/docs/a.md"], &[]),
            t,
            Ok(()),
        ),
        (
            "glob: * stays in its folder",
            grant(&["/w/docs/*.md"], None),
            need(None, &["/w/docs/sub/a.md"], &[]),
            t,
            Err("does not cover"),
        ),
        (
            "glob: ** crosses folders",
            grant(&["/w/docs/**/*.md"], None),
            need(None, &["/w/docs/sub/a.md"], &[]),
            t,
            Ok(()),
        ),
        (
            "glob: other extension",
            grant(&["/w/docs/*.md"], None),
            need(None, &["/w/docs/a.txt"], &[]),
            t,
            Err("does not cover"),
        ),
        (
            "glob: sibling folder",
            grant(&["/w/docs/**"], None),
            need(None, &["/w/docs2/a.md"], &[]),
            t,
            Err("does not cover"),
        ),
    ];
    for (name, g, n, now, want) in cases {
        let got = covers(&g, &n, now).map_err(|m| m.describe(&g.id));
        match (got, want) {
            (Ok(()), Ok(())) => {}
            (Err(msg), Err(part)) => assert!(msg.contains(part), "{name}: {msg:?} lacks {part:?}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn find_takes_a_covering_grant_else_names_the_nearest_miss() {
    let t = 1001 * MIN;
    let old = grant(&[], Some("s1"));
    let mut newer = grant(&["/w/a"], None);
    newer.id = GrantId::from_bytes([9; 16]);
    newer.granted_at_ms += 1;
    let grants = vec![old.clone(), newer.clone()];
    let Err(Refusal::Near(id, miss)) = find(&grants, &need(Some("s2"), &["/w/b"], &[]), t) else {
        panic!("no nearest miss");
    };
    assert_eq!(id, newer.id);
    assert!(matches!(miss, Miss::PathOutside(_)));
    assert_eq!(
        find(&grants, &need(Some("s1"), &["/w/b"], &[]), t)
            .unwrap()
            .id,
        old.id
    );
    assert_eq!(
        find(&[], &need(None, &[], &[]), t).unwrap_err(),
        Refusal::NoGrant
    );
}

/// The reason comes from a grant the caller's session could use, however recent another
/// session's grant is, whatever that one's miss; other sessions' grants are never named.
#[test]
fn find_never_explains_with_another_sessions_grant() {
    let t = 1001 * MIN;
    let mut own = grant(&["/w/docs"], Some("alice"));
    own.id = GrantId::from_bytes([1; 16]);
    let mut unbound = grant(&["/w/notes"], None);
    unbound.id = GrantId::from_bytes([2; 16]);
    unbound.granted_at_ms -= 1;
    let mut bobs = grant(&[], Some("bob"));
    bobs.granted_at_ms += 2;
    let mut bobs_expired = bobs.clone();
    bobs_expired.expires_at_ms = t - 1;
    let mut bobs_revoked = bobs.clone();
    bobs_revoked.revoked_at_ms = Some(t - 1);
    for other in [bobs, bobs_expired, bobs_revoked] {
        let grants = vec![other.clone(), own.clone(), unbound.clone()];
        let alice = need(Some("alice"), &["/w/secret"], &[]);
        match find(&grants, &alice, t) {
            Err(Refusal::Near(id, Miss::PathOutside(_))) => assert_eq!(id, own.id),
            got => panic!("{got:?}"),
        }
        // Without its own grant, the session-less one explains.
        let grants = vec![other.clone(), unbound.clone()];
        match find(&grants, &alice, t) {
            Err(Refusal::Near(id, _)) => assert_eq!(id, unbound.id),
            got => panic!("{got:?}"),
        }
        // With only another session's grant, it is not named.
        for session in [Some("alice"), None] {
            assert_eq!(
                find(std::slice::from_ref(&other), &need(session, &[], &[]), t).unwrap_err(),
                Refusal::OtherSessions
            );
        }
    }
}

proptest! {
    /// Whatever the grant and the clock, it covers only inside [granted_at, expires_at) and
    /// never once revoked.
    #[test]
    fn live_only_inside_its_window(start in -1_000_000i64..1_000_000, len in 1i64..100_000, now in -2_000_000i64..2_000_000, revoked in proptest::option::of(-2_000_000i64..2_000_000)) {
        let mut g = grant(&[], None);
        g.granted_at_ms = start;
        g.expires_at_ms = start + len;
        g.revoked_at_ms = revoked;
        let ok = covers(&g, &need(None, &[], &[]), now).is_ok();
        prop_assert_eq!(ok, revoked.is_none() && start <= now && now < start + len);
    }

    /// A path scope never covers a sibling whose name merely starts with the scope's name.
    #[test]
    fn no_prefix_siblings(base in "[a-z]{1,8}", extra in "[a-z0-9._-]{1,8}") {
        let scope = format!("/w/{base}");
        let g = grant(&[&scope], None);
        let sibling = format!("/w/{base}{extra}");
        prop_assert!(covers(&g, &need(None, &[&sibling], &[]), 1001 * MIN).is_err());
    }
}

#[test]
fn durations() {
    let ok = [
        ("90s", 90_000),
        ("5m", 300_000),
        ("15m", 900_000),
        ("1h", 3_600_000),
        ("1h30m", 5_400_000),
        (" 2 hours ", 7_200_000),
        ("30d", MAX_DURATION_MS),
    ];
    for (t, ms) in ok {
        assert_eq!(parse_duration(t), Ok(ms), "{t}");
    }
    let bad = [
        ("", "empty"),
        ("0s", "zero"),
        ("0m", "zero"),
        ("-5m", "negative"),
        ("5", "no unit"),
        ("soon", "cannot read"),
        ("5x", "cannot read"),
        ("31d", "30 days"),
        ("99999999999999999999s", "30 days"),
        ("9223372036854775807s", "30 days"),
        ("1ms", "second"),
    ];
    for (t, part) in bad {
        let e = parse_duration(t).unwrap_err().to_string();
        assert!(e.contains(part), "{t}: {e}");
    }
    assert_eq!(human_duration(299_000), "4m 59s");
    assert_eq!(human_duration(3_600_000), "1h");
    assert_eq!(human_duration(0), "0s");
    assert_eq!(human_duration(90_061_000), "1d 1h");
}

#[test]
fn scopes() {
    use ScopeInput::{Host, Literal, Path};
    let cases = [
        ("./src", Ok(Path("./src".into()))),
        ("src/", Ok(Path("src/".into()))),
        ("/etc", Ok(Path("/etc".into()))),
        (".", Ok(Path(".".into()))),
        ("example.com", Ok(Host("example.com".into()))),
        ("host:LocalHost", Ok(Host("localhost".into()))),
        (
            "https://Docs.Example.com/a/b",
            Ok(Host("docs.example.com".into())),
        ),
        ("host:*.example.com", Ok(Host("*.example.com".into()))),
        ("path:./rep[1]/*.md", Ok(Literal("./rep[1]/*.md".into()))),
        ("path:src", Ok(Literal("src".into()))),
        // Every host a call's URL can name, as `url_host` spells it.
        ("host:[::1]", Ok(Host("[::1]".into()))),
        ("host:::1", Ok(Host("[::1]".into()))),
        ("host:[0:0::1]", Ok(Host("[::1]".into()))),
        (
            "host:my_host.example.com",
            Ok(Host("my_host.example.com".into())),
        ),
        (
            "my_host.example.com",
            Ok(Host("my_host.example.com".into())),
        ),
        ("host:0x7f000001", Ok(Host("127.0.0.1".into()))),
        ("127.0.0.1", Ok(Host("127.0.0.1".into()))),
        (
            "host:*.my_zone.example.com",
            Ok(Host("*.my_zone.example.com".into())),
        ),
    ];
    for (t, want) in cases {
        assert_eq!(parse_scope(t), want, "{t}");
    }
    for (t, part) in [
        ("src", "./src"),
        ("", "empty"),
        ("host:", "not a host"),
        ("host:a b", "not a host"),
        ("path: ", "names no file"),
        ("host:[::1", "not a host"),
        ("host:[nope]", "not a host"),
        ("host:*.1.2.3", "not of an address"),
        ("host:1.2.3.999", "not a host"),
    ] {
        let e = parse_scope(t).unwrap_err().to_string();
        assert!(e.contains(part), "{t}: {e}");
    }
    // A wildcard over a whole public suffix is refused, however it is spelled.
    for t in [
        "host:*.com",
        "*.com",
        "host:*.COM.",
        "*.co.uk",
        "host:*.github.io",
        "*.s3.amazonaws.com",
        "host:*.localhost",
    ] {
        let e = parse_scope(t).unwrap_err().to_string();
        assert!(e.contains("public suffix"), "{t}: {e}");
    }
    for t in [
        "*.example.co.uk",
        "*.me.github.io",
        "host:co.uk",
        "host:com",
    ] {
        assert!(matches!(parse_scope(t), Ok(Host(_))), "{t}");
    }
    // A port is refused, with a spelling for the host that is taken as written.
    for (t, host) in [
        ("docs.example.com:8443", "host:docs.example.com"),
        ("host:docs.example.com:8443", "host:docs.example.com"),
        ("localhost:80", "host:localhost"),
        ("host:[::1]:8443", "host:[::1]"),
        ("*.example.com:443", "host:*.example.com"),
    ] {
        let e = parse_scope(t).unwrap_err().to_string();
        assert!(e.contains(&format!("write {host}")), "{t}: {e}");
        assert!(matches!(parse_scope(host), Ok(Host(_))), "{t}: {host}");
    }
    // The spelling the message offers for "the folder of that name" means exactly that, for
    // names a pattern reader would take otherwise.
    for t in ["src", "[::1]", "rep*", "a{b}"] {
        let e = parse_scope(t).unwrap_err().to_string();
        let offered = e
            .split("write ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap();
        match parse_scope(offered) {
            Ok(ScopeInput::Literal(p)) => assert_eq!(p, format!("./{t}"), "{e}"),
            Ok(ScopeInput::Path(p)) => {
                assert!(!has_glob(&p), "{t}: {offered} is a pattern");
                assert_eq!(p, format!("./{t}"));
            }
            other => panic!("{t}: {offered} reads as {other:?}"),
        }
    }
}

#[test]
fn ids_are_mg_and_32_hex() {
    let id = GrantId::from_bytes([0xab; 16]);
    assert_eq!(id.as_str().len(), 35);
    assert_eq!(
        GrantId::parse(&id.as_str().to_uppercase().replace("MG_", "mg_")),
        Ok(id.clone())
    );
    assert!(looks_like_grant_id(id.as_str()));
    for bad in [
        "mg_",
        "mg_abc",
        "xx_abababababababababababababababab",
        "mg_zzabababababababababababababababab",
    ] {
        assert!(GrantId::parse(bad).is_err(), "{bad}");
        assert!(!looks_like_grant_id(bad), "{bad}");
    }
}

#[test]
fn suggested_scopes_read_back_as_what_they_name() {
    for (entry, flag) in [
        (ScopeEntry::Path("/w/docs".into()), "/w/docs"),
        (
            ScopeEntry::Path("/w/rep[1]/a.txt".into()),
            "path:/w/rep[1]/a.txt",
        ),
        (ScopeEntry::Path("/w/{a,b}".into()), "path:/w/{a,b}"),
        (ScopeEntry::Glob("/w/docs/*.md".into()), "/w/docs/*.md"),
        (ScopeEntry::Host("example.com".into()), "host:example.com"),
        (ScopeEntry::Host("[::1]".into()), "host:[::1]"),
        (
            ScopeEntry::Host("[fd00:ec2::254]".into()),
            "host:[fd00:ec2::254]",
        ),
        (
            ScopeEntry::Host("my_host.example.com".into()),
            "host:my_host.example.com",
        ),
        (ScopeEntry::Host("127.0.0.1".into()), "host:127.0.0.1"),
    ] {
        assert_eq!(entry.to_flag(), flag);
        let read = parse_scope(flag).unwrap();
        match (&entry, read) {
            (ScopeEntry::Path(p), ScopeInput::Literal(t) | ScopeInput::Path(t)) => {
                assert_eq!(p.to_str().unwrap(), t);
                assert_eq!(flag.starts_with("path:"), has_glob(&t), "{flag}");
            }
            (ScopeEntry::Glob(g), ScopeInput::Path(t)) => assert_eq!(g, &t),
            (ScopeEntry::Host(h), ScopeInput::Host(t)) => assert_eq!(h, &t),
            (entry, read) => panic!("{entry:?} came back as {read:?}"),
        }
    }
}

#[test]
fn stored_scope_entries_read_back_or_say_why_not() {
    for entry in [
        ScopeEntry::Path("/w/docs".into()),
        ScopeEntry::Path("/w/rep[1]".into()),
        ScopeEntry::Glob("/w/docs/*.md".into()),
        ScopeEntry::Host("example.com".into()),
        ScopeEntry::Host("*.example.com".into()),
    ] {
        assert_eq!(ScopeEntry::from_stored(&entry.to_stored()), Ok(entry));
    }
    // Read back as shown, without the kind spelled out.
    assert_eq!(
        ScopeEntry::from_stored("/w/docs"),
        Ok(ScopeEntry::Path("/w/docs".into()))
    );
    for bad in [
        "path:",
        "path:docs",
        "",
        "docs",
        "glob:",
        "glob:docs/*.md",
        "glob:/w/[",
        "host:",
        "host:*.",
        "host:a b",
        "host:Example.com",
    ] {
        assert!(ScopeEntry::from_stored(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn commands_are_quoted_for_a_shell() {
    let cmd = grant_command(
        "file_access",
        Some("s 1"),
        &[
            ScopeEntry::Path("/w/it's".into()),
            ScopeEntry::Host("example.com".into()),
        ],
        Some(std::path::Path::new("/p/policy.toml")),
        Some(std::path::Path::new("/s/grants db")),
    );
    assert_eq!(
        cmd,
        r"metagate --policy /p/policy.toml --db '/s/grants db' permit grant --capability file_access --scope '/w/it'\''s' --scope host:example.com --session 's 1' --for 5m"
    );
    // A word holding control characters stays on one line, in `$'…'`.
    assert_eq!(
        shell_word("/w/x\nretryable: it's\\\u{1b}[2J\u{202e}"),
        r"$'/w/x\nretryable: it\'s\\\033[2J\342\200\256'"
    );
    // A session that starts with `-` is the flag's value, not a flag.
    let cmd = grant_command("system_execute", Some("-k3x"), &[], None, None);
    assert_eq!(
        cmd,
        "metagate permit grant --capability system_execute --session=-k3x --for 5m"
    );
}

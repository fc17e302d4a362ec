use super::cached_fs::Folder;
use super::globs::{GlobList, expand_glob, required_literal};
use super::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// [`DEFAULT_DENY`] as owned strings, for [`PathRules::new`].
fn default_deny() -> Vec<String> {
    DEFAULT_DENY.iter().map(|g| (*g).to_string()).collect()
}

/// Depth of the directory chain above `base`, so generated `..` chains (fewer than this)
/// never leave the temporary directory, even when a check is wrong.
const DEPTH: usize = 40;

struct Fixture {
    _tmp: TempDir,
    /// The temporary directory (canonical).
    top: PathBuf,
    /// `top/d/d/…/d`, holding `root`, `root2` and `outside`.
    base: PathBuf,
    root: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let top = std::fs::canonicalize(tmp.path()).unwrap();
    let mut base = top.clone();
    for _ in 0..DEPTH {
        base.push("d");
    }
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("sub/dir")).unwrap();
    write(&root.join("src/main.rs"), "fn main() {}");
    write(&root.join("src/lib.rs"), "");
    write(&root.join("docs/a.md"), "");
    write(&root.join("README.md"), "");
    write(&root.join(".env"), "KEY=1");
    write(&root.join("a/secrets/db.txt"), "pw");
    write(&base.join("root2/x"), "sibling");
    write(&outside.join("secret.txt"), "outside");
    write(&outside.join("dir/f.txt"), "outside");
    symlink("../outside/secret.txt", root.join("link_out_file")).unwrap();
    symlink(outside.join("dir"), root.join("link_out_dir")).unwrap();
    symlink("src/main.rs", root.join("link_in")).unwrap();
    symlink("src", root.join("link_in_dir")).unwrap();
    symlink("sub/dir", root.join("link_sub")).unwrap();
    symlink("chain2", root.join("chain1")).unwrap();
    symlink("chain3", root.join("chain2")).unwrap();
    symlink("../outside/dir", root.join("chain3")).unwrap();
    symlink("../root2", root.join("link_root2")).unwrap();
    symlink("../outside/newfile", root.join("dangle_out")).unwrap();
    symlink("../outside/newdir/x", root.join("dangle_out_deep")).unwrap();
    symlink("src/new.rs", root.join("dangle_in")).unwrap();
    symlink("loop_b", root.join("loop_a")).unwrap();
    symlink("loop_a", root.join("loop_b")).unwrap();
    symlink(".env", root.join("innocent")).unwrap();
    Fixture {
        _tmp: tmp,
        top,
        base,
        root,
    }
}

fn rules(f: &Fixture, deny: &[String], allow: &[String]) -> PathRules {
    PathRules::new(&f.root, deny, allow, &RealFs).unwrap()
}

/// `mkdir -p` would create a missing folder before `..` climbs out of it: outside the
/// root that is an escape, inside it is harmless.
#[test]
fn a_missing_folder_before_dotdot_must_be_inside() {
    let f = fixture();
    let r = rules(&f, &[], &[]);
    let outside = format!("{}/new/../root/src", f.base.display());
    assert!(
        matches!(check(&outside, &r, &RealFs), Err(PathError::Outside { .. })),
        "{outside}"
    );
    assert_eq!(
        check("new/../src/main.rs", &r, &RealFs).unwrap(),
        "src/main.rs"
    );
    assert_eq!(check("a/b/../../docs", &r, &RealFs).unwrap(), "docs");
}

/// Answers are kept for the time to live and no longer.
/// A file system that remembers answers what the real one answers, whatever it has
/// seen before: each pass checks every path under new rules (so no whole answer is
/// reused) against a memory the earlier passes filled, in another order each time.
#[test]
fn cached_answers_are_the_real_answers() {
    let f = fixture();
    let mut corpus = escape_corpus(&f);
    corpus.extend(
        [
            "src/main.rs",
            "src/new.rs",
            "src/main.rs/x",
            "README.md",
            "docs/a.md",
            "docs/b.md",
            "new/dir/file.txt",
            "new/dir/other.txt",
            "new/x",
            "new",
            "link_in",
            "link_in/x",
            "link_in_dir/lib.rs",
            "link_in_dir/new.rs",
            "link_sub/x",
            "link_out_dir/new.txt",
            "link_out_dir/deeper/new.txt",
            "dangle_in",
            "dangle_in/x",
            "dangle_out/x",
            "loop_a/b",
            "innocent",
            "innocent/x",
            ".env",
            "a/secrets/db.txt",
            "a/secrets/new.txt",
            "a/b/c",
            "sub/dir/x",
            "sub/dir",
            "sub",
            "chain1/new.txt",
            "C:/x",
        ]
        .map(String::from),
    );
    let deny = default_deny();
    let real: Vec<_> = {
        let r = rules(&f, &deny, &[]);
        corpus.iter().map(|raw| check(raw, &r, &RealFs)).collect()
    };
    let now = Instant::now();
    let fs = CachedFs::new(|| now, Duration::from_secs(3600));
    let forward: Vec<usize> = (0..corpus.len()).collect();
    let backward: Vec<usize> = forward.iter().rev().copied().collect();
    let strided: Vec<usize> = forward.iter().map(|i| (i * 7) % corpus.len()).collect();
    for order in [&forward, &backward, &strided, &forward] {
        let r = rules(&f, &deny, &[]);
        for &i in order {
            assert_eq!(check(&corpus[i], &r, &fs), real[i], "{:?}", corpus[i]);
        }
    }
}

#[test]
fn cached_fs_forgets_after_its_time() {
    let f = fixture();
    let r = rules(&f, &[], &[]);
    let now = std::cell::Cell::new(Instant::now());
    let fs = CachedFs::new(|| now.get(), Duration::from_secs(1));
    // Enough new names for the root (known through `README.md`) to be read whole: its
    // listing ages the same way.
    check("README.md", &r, &fs).unwrap();
    for i in 0..12 {
        check(&format!("new{i}"), &r, &fs).unwrap();
    }
    assert!(matches!(
        fs.memory.borrow().folders.get(f.root.as_os_str()),
        Some(Folder::Listed(_))
    ));
    assert_eq!(check("later", &r, &fs).unwrap(), "later");
    symlink(f.base.join("outside"), f.root.join("later")).unwrap();
    symlink(f.base.join("outside"), f.root.join("later2")).unwrap();
    assert_eq!(check("later2", &r, &fs).unwrap(), "later2");
    // Within the second the memory still says `later` does not exist.
    now.set(now.get() + Duration::from_millis(900));
    assert_eq!(check("later", &r, &fs).unwrap(), "later");
    now.set(now.get() + Duration::from_millis(200));
    for name in ["later", "later2"] {
        assert!(matches!(
            check(name, &r, &fs),
            Err(PathError::Outside { .. })
        ));
    }
}

/// A folder asked about often is read whole; its listing answers as `lstat` would, for
/// names there and not, plain and symlinked (dangling, inside, outside, looping), and a
/// folder too big to list is still asked name by name.
#[test]
fn listed_folders_answer_as_lstat_does() {
    type Cached = CachedFs<fn() -> Instant>;
    let f = fixture();
    let big = f.root.join("big");
    std::fs::create_dir(&big).unwrap();
    for i in 0..=Cached::MAX_LISTED {
        std::fs::write(big.join(format!("f{i}")), "").unwrap();
    }
    symlink("../../outside/secret.txt", big.join("zz_out")).unwrap();
    let deny = default_deny();
    let r = rules(&f, &deny, &[]);
    let fs: Cached = CachedFs::new(Instant::now, Duration::from_secs(3600));
    // Plain new names first, so each folder is listed before the links are asked for.
    let mut names: Vec<String> = Vec::new();
    for folder in ["", "src/", "big/"] {
        for i in 0..Cached::LIST_AFTER + 2 {
            names.push(format!("{folder}new{i}.txt"));
        }
    }
    names.extend(
        [
            "link_out_file",
            "link_out_dir",
            "link_in",
            "dangle_out",
            "dangle_in",
            "loop_a",
            "innocent",
            "chain1",
            "README.md",
            ".env",
            "src/main.rs",
            "big/f3",
            "big/zz_out",
            "sub",
            "sub/dir",
        ]
        .map(String::from),
    );
    for raw in &names {
        assert_eq!(check(raw, &r, &fs), check(raw, &r, &RealFs), "{raw:?}");
    }
    let memory = fs.memory.borrow();
    let listed = |folder: &Path| memory.folders.get(folder.as_os_str());
    assert!(matches!(listed(&f.root), Some(Folder::Listed(_))));
    assert!(matches!(
        listed(&f.root.join("src")),
        Some(Folder::Listed(_))
    ));
    assert!(matches!(listed(&big), Some(Folder::Unlisted)));
}

/// A remembered check answers for the rules it was made under only.
#[test]
fn cached_checks_belong_to_their_rules() {
    let f = fixture();
    let open = rules(&f, &[], &[]);
    let strict = rules(&f, &strings(&["*.rs"]), &[]);
    let fs = CachedFs::new(Instant::now, Duration::from_secs(60));
    for _ in 0..2 {
        assert_eq!(check("src/main.rs", &open, &fs).unwrap(), "src/main.rs");
        assert!(matches!(
            check("src/main.rs", &strict, &fs),
            Err(PathError::Denied { .. })
        ));
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_string()).collect()
}

/// Paths that must never be admitted, for the fixture's root.
fn escape_corpus(f: &Fixture) -> Vec<String> {
    let root = f.root.display().to_string();
    let base = f.base.display().to_string();
    let long = "a/".repeat(2500);
    let long_component = "b".repeat(300);
    vec![
        "../x".into(),
        "..".into(),
        "a/../../x".into(),
        "src/../../x".into(),
        "../../../../../../../../../../../../etc/passwd".into(),
        "a/b/c/../../../../x".into(),
        "/etc/passwd".into(),
        "/".into(),
        "/tmp".into(),
        base.clone(),
        format!("{base}/outside/secret.txt"),
        format!("{root}2"),
        format!("{root}2/x"),
        "../root2".into(),
        "../root2/x".into(),
        format!("{root}/../root2/x"),
        "link_out_file".into(),
        "link_out_dir".into(),
        "link_out_dir/f.txt".into(),
        "link_out_dir/new.txt".into(),
        "link_root2/x".into(),
        "chain1".into(),
        "chain1/f.txt".into(),
        "link_out_dir/../secret.txt".into(),
        "link_out_dir/../../x".into(),
        "link_sub/../../x".into(),
        "link_sub/../../../x".into(),
        "dangle_out".into(),
        "dangle_out_deep".into(),
        "loop_a".into(),
        "loop_a/x".into(),
        "./././../x".into(),
        "%2e%2e/x".into(),
        "%2E%2E/x".into(),
        "..%2fx".into(),
        "..%2Fx".into(),
        "%252e%252e/x".into(),
        "%25252e%25252e/x".into(),
        "%c0%ae%c0%ae/x".into(),
        "%e0%80%ae%e0%80%ae/x".into(),
        "%E0%80%AE%E0%80%AE/x".into(),
        "%25e0%2580%25ae%25e0%2580%25ae/x".into(),
        "%f0%80%80%ae%f0%80%80%ae/x".into(),
        "file:///etc/passwd".into(),
        "file:/etc/passwd".into(),
        "FILE:../x".into(),
        "git+ssh://host/x".into(),
        "%00".into(),
        "..\\x".into(),
        "C:\\x".into(),
        "\\\\server\\share".into(),
        "x\0y".into(),
        "\0".into(),
        long,
        format!("a/{long_component}/x"),
        "~/x".into(),
        "~".into(),
        "~root/x".into(),
        "src/../..".into(),
        "link_out_dir/..".into(),
        "sub/dir/../../..".into(),
        format!("{root}/.."),
        String::new(),
    ]
}

#[test]
fn escape_corpus_yields_zero_escapes() {
    let f = fixture();
    let r = rules(&f, &[], &[]);
    let root = f.root.display().to_string();
    let corpus = escape_corpus(&f);
    for raw in &corpus {
        let result = check(raw, &r, &RealFs);
        assert!(result.is_err(), "escaped: {raw:?} -> {result:?}");
    }
    // A few specific reasons.
    let reason = |raw: &str| check(raw, &r, &RealFs).unwrap_err();
    assert!(matches!(reason("../root2/x"), PathError::Outside { .. }));
    assert!(matches!(
        reason("link_out_dir/../secret.txt"),
        PathError::Outside { .. }
    ));
    assert!(matches!(reason("dangle_out"), PathError::Outside { .. }));
    assert!(matches!(reason("loop_a"), PathError::SymlinkLoop { .. }));
    assert_eq!(
        reason("%252e%252e/x"),
        PathError::Encoded {
            sequence: "%252e".into()
        }
    );
    assert_eq!(reason("..\\x"), PathError::Backslash);
    assert_eq!(reason("~/x"), PathError::Tilde);
    assert_eq!(
        reason("%e0%80%ae%e0%80%ae/x"),
        PathError::Encoded {
            sequence: "%e0%80".into()
        }
    );
    assert_eq!(
        reason("file:///etc/passwd"),
        PathError::Scheme {
            scheme: "file".into()
        }
    );
    assert!(
        reason("file:/etc/passwd")
            .rule()
            .contains("URI scheme `file:`")
    );
    assert_eq!(reason(""), PathError::Empty);
    assert_eq!(reason("a\0"), PathError::Nul);
    assert_eq!(reason(&"a".repeat(5000)), PathError::TooLong);
    match reason(&format!("{root}2/x")) {
        PathError::Outside { resolved, .. } => assert_eq!(resolved, f.base.join("root2/x")),
        other => panic!("{other:?}"),
    }
    let text = reason("../x").rule();
    assert!(
        text.starts_with(&format!("outside the root {root} (resolves to ")),
        "{text}"
    );
}

#[test]
fn mirror_images_pass() {
    let f = fixture();
    let r = rules(&f, &[], &[]);
    let root = f.root.display().to_string();
    let cases: Vec<(String, &str)> = vec![
        ("src/main.rs".into(), "src/main.rs"),
        ("./src/../src/main.rs".into(), "src/main.rs"),
        (".".into(), "."),
        ("./".into(), "."),
        (root.clone(), "."),
        (format!("{root}/"), "."),
        (format!("{root}/src/main.rs"), "src/main.rs"),
        (format!("{root}/../root/src/main.rs"), "src/main.rs"),
        ("src//main.rs".into(), "src/main.rs"),
        ("src/".into(), "src"),
        ("src/..".into(), "."),
        ("link_in".into(), "src/main.rs"),
        ("link_in_dir/lib.rs".into(), "src/lib.rs"),
        ("link_sub/../x".into(), "sub/x"),
        ("dangle_in".into(), "src/new.rs"),
        ("new/dir/file.txt".into(), "new/dir/file.txt"),
        ("new/../file.txt".into(), "file.txt"),
        ("100%done.txt".into(), "100%done.txt"),
        ("%41.txt".into(), "%41.txt"),
        ("a~b".into(), "a~b"),
        ("C:/x".into(), "C:/x"),
        // Not a scheme: a digit first, a `/` before the `:`, or a character beyond ASCII.
        ("2024:notes".into(), "2024:notes"),
        ("src/a:b".into(), "src/a:b"),
        ("é:x".into(), "é:x"),
        // Encoded UTF-8 that is not overlong: `%e0%a4%85` is `अ`.
        ("%e0%a4%85.txt".into(), "%e0%a4%85.txt"),
        ("%f0%9f%98%80".into(), "%f0%9f%98%80"),
    ];
    for (raw, expected) in &cases {
        assert_eq!(check(raw, &r, &RealFs).as_deref(), Ok(*expected), "{raw}");
    }
}

#[test]
fn root_given_through_a_symlink_and_odd_names() {
    use std::os::unix::ffi::OsStrExt;
    let f = fixture();
    let alias = f.base.join("alias");
    symlink(&f.root, &alias).unwrap();
    let r = PathRules::new(&alias, &[], &[], &RealFs).unwrap();
    assert_eq!(r.root(), f.root);
    let via_alias = format!("{}/src/main.rs", alias.display());
    assert_eq!(check(&via_alias, &r, &RealFs).as_deref(), Ok("src/main.rs"));
    let outside_alias = format!("{}/../root2/x", alias.display());
    assert!(matches!(
        check(&outside_alias, &r, &RealFs),
        Err(PathError::Outside { .. })
    ));
    // A symlink to a name that is not UTF-8 cannot be reported as text: refused.
    let odd = f.root.join(std::ffi::OsStr::from_bytes(b"odd\xff"));
    std::fs::write(&odd, "").unwrap();
    symlink(&odd, f.root.join("weird")).unwrap();
    assert!(matches!(
        check("weird", &r, &RealFs),
        Err(PathError::NotUtf8 { .. })
    ));
}

#[test]
fn required_literals() {
    for (pattern, literal) in [
        ("**/.env", Some(".env")),
        ("**/secrets/**", Some("secrets")),
        ("**/secrets.{json,yaml}", Some("secrets.")),
        ("**/*private*key*", Some("private")),
        ("**/.git/config", Some("config")),
        ("a[bc]d", Some("a")),
        ("[!]x]yz*", Some("yz")),
        ("[^]x]yz*", Some("yz")),
        ("{abc,def}/q*", Some("q")),
        ("**/*", None),
        ("**/*.{pem,key}", Some(".")),
        ("*{ab,cd}?", None),
        ("a\\*b", None),
    ] {
        assert_eq!(required_literal(pattern), literal, "{pattern}");
    }
}

fn glob_list_without_prefilter(globs: &[String]) -> GlobList {
    GlobList {
        required: None,
        ..GlobList::new(globs).unwrap()
    }
}

#[test]
fn deny_corpus() {
    let f = fixture();
    let r = rules(&f, &default_deny(), &[]);
    let denied = [
        (".env", ".env*"),
        ("config/.env.local", ".env*"),
        ("CONFIG/.ENV", ".env*"),
        (".env.example", ".env*"),
        (".env~", ".env*"),
        (".env-local", ".env*"),
        (".env_prod", ".env*"),
        (".ENV2", ".env*"),
        ("a/.envrc", ".env*"),
        (".git/config", "**/.git/**/config"),
        ("vendor/x/.git/config", "**/.git/**/config"),
        (".git/modules/m/config", "**/.git/**/config"),
        (".GIT/modules/a/modules/b/CONFIG", "**/.git/**/config"),
        ("a/secrets/db.txt", "**/secrets/**"),
        ("a/secrets", "**/secrets/**"),
        ("secret/x", "**/secret/**"),
        (
            "config/secrets.yml",
            "secrets.{json,yaml,yml,toml,env,ini,txt}",
        ),
        ("keys/server.pem", "*.pem"),
        ("keys/SERVER.PEM", "*.pem"),
        ("tls/server.key", "*.key"),
        ("cert.p12", "*.p12"),
        ("home/.ssh/id_ed25519", "id_ed25519*"),
        ("home/.ssh/id_rsa", "id_rsa*"),
        ("home/.ssh/id_rsa.pub", "id_rsa*"),
        ("home/.ssh/identity", "**/.ssh/identity"),
        (".ssh/identity", "**/.ssh/identity"),
        ("keys/putty.ppk", "*.ppk"),
        ("keys/AuthKey_ABC.p8", "*.p8"),
        (
            "my_private_key.txt",
            "*private*key*.{txt,json,yaml,yml,toml,ini,cfg,conf,env,asc,gpg,der,b64,base64}",
        ),
        (
            "PrivateKey.ASC",
            "*private*key*.{txt,json,yaml,yml,toml,ini,cfg,conf,env,asc,gpg,der,b64,base64}",
        ),
        ("keys/private_key", "*private*key"),
        ("private_keys/a", "*private*keys"),
        ("keys/private_key.pem", "*.pem"),
        (
            "deploy/passwords.txt",
            "*password*.{txt,csv,json,yaml,yml,toml,ini,cfg,conf,env}",
        ),
        ("deploy/passwords", "*passwords"),
        ("passwords/db", "*passwords"),
        (
            "db_password.yml",
            "*password*.{txt,csv,json,yaml,yml,toml,ini,cfg,conf,env}",
        ),
        (".netrc", ".netrc"),
        (".htpasswd", ".htpasswd"),
        (".pgpass", ".pgpass"),
        (".git-credentials", ".git-credentials"),
        ("home/.aws/credentials", "**/.aws/credentials"),
        // Through a symlink: judged on what it resolves to.
        ("innocent", ".env*"),
    ];
    for (raw, glob) in denied {
        match check(raw, &r, &RealFs) {
            Err(PathError::Denied { glob: g, .. }) => assert_eq!(g, glob, "{raw}"),
            other => panic!("{raw}: {other:?}"),
        }
    }
    let err = check("keys/server.pem", &r, &RealFs).unwrap_err();
    assert_eq!(err.rule(), "matches deny rule `*.pem` (keys/server.pem)");

    for raw in [
        "README.md",
        "src/environment.rs",
        "docs/secretary.md",
        "src/secret_santa.rs",
        "src/secrets.rs",
        "src/keyboard.rs",
        "src/password.rs",
        "src/reset_password.py",
        "src/private_key.rs",
        "crypto/PrivateKeyParser.java",
        "src/passwords.rs",
        "tests/test_passwords.py",
        "keys/server.pub",
        "src/identity/mod.rs",
        ".gitmodules",
        ".github/config",
        ".",
        ".github/workflows/ci.yml",
        ".gitignore",
    ] {
        assert_eq!(check(raw, &r, &RealFs).as_deref(), Ok(raw), "{raw}");
    }
}

#[test]
fn allow_list() {
    let f = fixture();
    let r = rules(&f, &default_deny(), &strings(&["src/**"]));
    assert_eq!(check("src/a.rs", &r, &RealFs).as_deref(), Ok("src/a.rs"));
    assert_eq!(check("src", &r, &RealFs).as_deref(), Ok("src"));
    assert_eq!(check("link_in", &r, &RealFs).as_deref(), Ok("src/main.rs"));
    assert_eq!(
        check("docs/a.md", &r, &RealFs),
        Err(PathError::NotAllowed {
            relative: "docs/a.md".into()
        })
    );
    assert!(matches!(
        check(".", &r, &RealFs),
        Err(PathError::NotAllowed { .. })
    ));
    assert_eq!(
        check("src/.env", &r, &RealFs),
        Err(PathError::Denied {
            glob: ".env*".into(),
            relative: "src/.env".into()
        })
    );
    // A directory name allows what is under it; `/` anchors.
    let r = rules(&f, &[], &strings(&["/docs", "*.rs"]));
    assert_eq!(check("docs/a.md", &r, &RealFs).as_deref(), Ok("docs/a.md"));
    assert!(check("x/docs/a.md", &r, &RealFs).is_err());
    assert_eq!(
        check("deep/x/y.RS", &r, &RealFs).as_deref(),
        Ok("deep/x/y.RS")
    );
}

#[test]
fn rule_errors() {
    let f = fixture();
    let err = PathRules::new(&f.root, &strings(&["ok/**", "a["]), &[], &RealFs).unwrap_err();
    assert_eq!(err.glob, "a[");
    let err = PathRules::new(&f.root, &[], &strings(&[""]), &RealFs).unwrap_err();
    assert_eq!(err.glob, "");
    let err = PathRules::new(Path::new("relative/root"), &[], &[], &RealFs).unwrap_err();
    assert_eq!(err.glob, "relative/root");
    let missing = f.base.join("missing");
    let err = PathRules::new(&missing, &[], &[], &RealFs).unwrap_err();
    assert_eq!(err.glob, missing.display().to_string());
    for glob in DEFAULT_DENY {
        assert!(expand_glob(glob).is_ok(), "{glob}");
    }
    // The root is canonicalized.
    let r = PathRules::new(&f.root.join("src/.."), &[], &[], &RealFs).unwrap();
    assert_eq!(r.root(), f.root);
}

/// A fake file system: `canonical` maps existing paths to their canonical form, `links`
/// holds symlink targets (for `read_link`).
#[derive(Default)]
struct FakeFs {
    canonical: HashMap<PathBuf, PathBuf>,
    links: HashMap<PathBuf, PathBuf>,
}

impl FakeFs {
    fn exists(mut self, path: &str, canonical: &str) -> Self {
        self.canonical.insert(path.into(), canonical.into());
        self
    }
    fn link(mut self, path: &str, target: &str) -> Self {
        self.links.insert(path.into(), target.into());
        self
    }
}

impl Fs for FakeFs {
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.canonical
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.links
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))
    }
    // The fake file system has no hard links: every file has one name.
    fn file_links(&self, _: &Path) -> io::Result<Option<FileLinks>> {
        Ok(None)
    }
}

#[test]
fn fake_fs_link_then_dotdot_follows_the_target() {
    let fs = FakeFs::default()
        .exists("/srv/app", "/srv/app")
        .exists("/srv/app/link", "/other/d")
        .exists("/other", "/other")
        .exists("/srv/app/in", "/srv/app/a/b")
        .exists("/srv/app/a", "/srv/app/a");
    let r = PathRules::new(Path::new("/srv/app"), &[], &[], &fs).unwrap();
    // Lexically `/srv/app/x`; the kernel opens `/other/x`.
    assert_eq!(
        check("link/../x", &r, &fs),
        Err(PathError::Outside {
            root: "/srv/app".into(),
            resolved: "/other/x".into()
        })
    );
    assert_eq!(
        check("link/../x", &r, &fs).unwrap_err().rule(),
        "outside the root /srv/app (resolves to /other/x)"
    );
    // Kernel: /srv/app/a/b/.. = /srv/app/a, then x.
    assert_eq!(check("in/../x", &r, &fs).as_deref(), Ok("a/x"));
    // Kernel view inside (/srv/app/x), lexical view outside (/srv/x): refused.
    assert!(matches!(
        check("in/../../x", &r, &fs),
        Err(PathError::Outside { .. })
    ));
    // Prefix sibling.
    assert!(matches!(
        check("/srv/app2/x", &r, &fs),
        Err(PathError::Outside { .. })
    ));
}

#[test]
fn fake_fs_dangling_links_and_odd_answers() {
    let fs = FakeFs::default()
        .exists("/r", "/r")
        .exists("/r/rel", "not/absolute")
        .link("/r/dangle", "/elsewhere/new")
        .link("/r/dangle_in", "sub/new")
        .link("/r/up", "../escape")
        .link("/r/l1", "/r/l2")
        .link("/r/l2", "/r/l1");
    let r = PathRules::new(Path::new("/r"), &[], &[], &fs).unwrap();
    assert!(matches!(
        check("dangle", &r, &fs),
        Err(PathError::Outside { .. })
    ));
    assert!(matches!(
        check("up", &r, &fs),
        Err(PathError::Outside { .. })
    ));
    assert_eq!(check("dangle_in/x", &r, &fs).as_deref(), Ok("sub/new/x"));
    assert!(matches!(
        check("l1", &r, &fs),
        Err(PathError::SymlinkLoop { .. })
    ));
    // A canonical form that is not absolute is ignored (treated as missing).
    assert_eq!(check("rel/x", &r, &fs).as_deref(), Ok("rel/x"));
    // A relative root answer is an error, not a panic.
    let odd = FakeFs::default().exists("/q", "q");
    assert!(PathRules::new(Path::new("/q"), &[], &[], &odd).is_err());
}

#[test]
fn root_slash_and_errors_display() {
    let fs = FakeFs::default().exists("/", "/");
    let r = PathRules::new(Path::new("/"), &default_deny(), &[], &fs).unwrap();
    assert_eq!(check("/etc/hosts", &r, &fs).as_deref(), Ok("etc/hosts"));
    assert_eq!(check("../..", &r, &fs).as_deref(), Ok("."));
    for e in [
        PathError::Empty,
        PathError::Nul,
        PathError::Encoded {
            sequence: "%2e".into(),
        },
        PathError::Backslash,
        PathError::TooLong,
        PathError::Tilde,
        PathError::Scheme {
            scheme: "file".into(),
        },
        PathError::NotAllowed {
            relative: "x".into(),
        },
    ] {
        assert!(!e.to_string().is_empty());
    }
}

/// Every path under `top` outside `root`, with file sizes.
fn snapshot(top: &Path, root: &Path) -> BTreeMap<PathBuf, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![top.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.starts_with(root) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            out.insert(path.clone(), meta.len());
            if meta.is_dir() {
                stack.push(path);
            }
        }
    }
    out
}

/// Simulates a tool that creates parent directories and appends to `target`, after making
/// sure (with the real kernel) that nothing can land outside `top`.
fn simulate_write(f: &Fixture, target: &Path) -> Result<(), TestCaseError> {
    prop_assert!(
        lexical_normalize(target).starts_with(&f.top),
        "would write outside the sandbox: {}",
        target.display()
    );
    if let Some(existing) = target
        .ancestors()
        .find_map(|a| std::fs::canonicalize(a).ok())
    {
        prop_assert!(existing.starts_with(&f.root), "{}", target.display());
    }
    if let Some(parent) = target.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(target)
    {
        let _ = file.write_all(b"x");
    }
    if let Ok(landed) = std::fs::canonicalize(target) {
        prop_assert!(
            landed.starts_with(&f.root),
            "landed at {}",
            landed.display()
        );
    }
    Ok(())
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("..".to_string()),
        1 => Just(".".to_string()),
        1 => Just(String::new()),
        6 => prop::sample::select(vec![
            "src", "main.rs", "new", "sub", "dir", "link_out_file", "link_out_dir",
            "link_in", "link_in_dir", "link_sub", "chain1", "link_root2", "dangle_out",
            "dangle_out_deep", "dangle_in", "loop_a", "root", "root2", "outside", "d",
            "secret.txt", "f.txt", "x", "%2e%2e", "%252e", "~", "..\\x", ".env",
        ])
        .prop_map(str::to_string),
        3 => "[a-z./\\\\%~]{0,6}",
    ]
}

/// A raw path and where it starts: 0 relative, 1 the root, 2 `base`, 3 the tempdir.
fn raw_path() -> impl Strategy<Value = (u8, String)> {
    prop_oneof![
        (0u8..4, "[a-z./\\\\%~]{0,40}"),
        (0u8..4, prop::collection::vec(segment(), 0..10)).prop_map(|(s, v)| (s, v.join("/"))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The required-literal screen never changes which glob matches first.
    #[test]
    fn the_literal_screen_agrees_with_the_glob_set(
        pieces in prop::collection::vec(prop::sample::select(vec![
            "a", "/", ".", "-", "_", "env", ".ENV", "Secrets", "secret", "key", "Key",
            "private", "password", "s", ".pem", "id_rsa", "config", ".git", "yz", "q",
            "abc", "x", "]", "K", "\u{212a}", "\u{17f}", "é",
        ]), 0..8),
    ) {
        let mut globs = default_deny();
        globs.extend(["[^]x]yz*", "{abc,def}/q*", "a[bc]d", "/docs/*.md"].map(String::from));
        let screened = GlobList::new(&globs).unwrap();
        prop_assert!(screened.required.is_some());
        let plain = glob_list_without_prefilter(&globs);
        let path = pieces.concat();
        prop_assert_eq!(screened.first_match(&path), plain.first_match(&path), "{:?}", path);
    }

    /// For generated paths: `check` never panics, and when it says Ok, nothing a tool
    /// does with the raw argument (kernel or lexical reading) or with the returned path
    /// lands outside the root.
    #[test]
    fn never_escapes((start, tail) in raw_path()) {
        let f = fixture();
        let r = rules(&f, &[], &[]);
        let raw = match start {
            0 => tail,
            1 => format!("{}/{tail}", f.root.display()),
            2 => format!("{}/{tail}", f.base.display()),
            _ => format!("{}/{tail}", f.top.display()),
        };
        let result = check(&raw, &r, &RealFs);
        // The cached file system answers alike, asked cold and again warm.
        let cached = CachedFs::new(Instant::now, Duration::from_secs(60));
        for _ in 0..2 {
            prop_assert_eq!(format!("{:?}", check(&raw, &r, &cached)), format!("{result:?}"));
        }
        let Ok(relative) = result else { return Ok(()); };
        let rel = Path::new(&*relative);
        prop_assert!(rel.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)));
        let raw_target = f.root.join(&raw);
        if let Ok(kernel) = std::fs::canonicalize(&raw_target) {
            prop_assert!(kernel.starts_with(&f.root), "{raw:?} -> {}", kernel.display());
        }
        let before = snapshot(&f.top, &f.root);
        simulate_write(&f, &raw_target)?;
        simulate_write(&f, &lexical_normalize(&raw_target))?;
        simulate_write(&f, &f.root.join(rel))?;
        prop_assert_eq!(before, snapshot(&f.top, &f.root), "{:?} wrote outside", raw);
    }

    /// Arbitrary text never panics, and Ok is always a clean relative path.
    #[test]
    fn never_panics(raw in any::<String>(), raw2 in "[a-z./\\\\%~\u{0}-\u{1f}\u{e9}]{0,80}") {
        let fs = FakeFs::default().exists("/r", "/r").link("/r/l", "/x");
        let r = PathRules::new(Path::new("/r"), &default_deny(), &[], &fs).unwrap();
        for raw in [raw, raw2] {
            if let Ok(rel) = check(&raw, &r, &fs) {
                prop_assert!(Path::new(&*rel).components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)));
                prop_assert!(rel == "." || !rel.starts_with('/'));
            }
        }
    }
}

/// Links the kernel resolves per process (issue 24). Resolved in metagate's own process they
/// lead back into the root, so each of these passed, and satisfied a grant scoped to a folder
/// they reach (`docs` through an open descriptor); in the tool's process they name the tool's
/// working folder, root and descriptors instead. Refused wherever the walk meets one: written
/// out, after `..`, or as a symlink's target.
#[test]
fn per_process_links_are_refused() {
    use std::os::fd::AsRawFd;
    let f = fixture();
    let r = rules(&f, &[], &[]);
    let root = f.root.display().to_string();
    let pid = std::process::id();
    let file = std::fs::File::open(f.root.join("src/main.rs")).unwrap();
    let docs = std::fs::File::open(f.root.join("docs")).unwrap();
    let (file_fd, docs_fd) = (file.as_raw_fd(), docs.as_raw_fd());
    // From this process's working folder up to `/` (at least three `..`, so the lexical
    // reading of `/proc/self/cwd/..…` reaches `/` too), then down into the root.
    let depth = std::env::current_dir().unwrap().components().count().max(4);
    let up = "../".repeat(depth);
    let to_top = "../".repeat(f.root.components().count());
    symlink("/proc/self/root", f.root.join("self_root")).unwrap();
    symlink(format!("/proc/self/fd/{docs_fd}"), f.root.join("docs_fd")).unwrap();
    symlink("self_root", f.root.join("self_root_again")).unwrap();
    let cases = [
        format!("/proc/self/root{root}/src/main.rs"),
        format!("/proc/thread-self/root{root}/src/main.rs"),
        format!("/proc/{pid}/root{root}/src/main.rs"),
        format!("/proc/{pid}/task/{pid}/root{root}/src/main.rs"),
        format!("/proc/self/cwd/{up}{root}/src/main.rs"),
        format!("/proc/{pid}/cwd/{up}{root}/README.md"),
        format!("/proc/thread-self/cwd/{up}{root}/README.md"),
        format!("/proc/self/fd/{file_fd}"),
        format!("/proc/{pid}/fd/{file_fd}"),
        format!("/dev/fd/{file_fd}"),
        format!("/proc/self/fd/{docs_fd}/a.md"),
        format!("/dev/fd/{docs_fd}/a.md"),
        format!("/proc/./self/root{root}/README.md"),
        format!("/proc/self/../self/root{root}/README.md"),
        format!("{root}/{to_top}proc/self/root{root}/README.md"),
        format!("self_root{root}/README.md"),
        format!("self_root_again{root}/README.md"),
        "docs_fd/a.md".to_string(),
        "/dev/stdin".to_string(),
        "/proc/self/exe".to_string(),
        "/proc/self/ns/net".to_string(),
        "/proc/self".to_string(),
        "/proc/thread-self".to_string(),
    ];
    let cached = CachedFs::new(Instant::now, Duration::from_secs(60));
    for raw in &cases {
        for fs in [&RealFs as &dyn Fs, &cached] {
            let result = check(raw, &r, fs);
            assert!(
                matches!(result, Err(PathError::ProcessLink { .. })),
                "{raw:?} -> {result:?}"
            );
        }
    }
    let text = check("/dev/stdin", &r, &RealFs).unwrap_err().rule();
    assert!(text.starts_with("goes through /dev/stdin, "), "{text}");
    drop((file, docs));
}

/// The names themselves, on a file system that has no `/proc` at all: refused as written.
#[test]
fn process_links_are_told_by_name() {
    let fs = FakeFs::default().exists("/", "/");
    let r = PathRules::new(Path::new("/"), &[], &[], &fs).unwrap();
    for raw in [
        "/proc/self",
        "/proc/self/environ",
        "/proc/thread-self/cwd",
        "/proc/1/cwd",
        "/proc/1/root/etc",
        "/proc/1/fd",
        "/proc/1/fd/0",
        "/proc/1/exe",
        "/proc/1/map_files/x",
        "/proc/1/ns/net",
        "/proc/1/task/1/cwd",
        "/proc/1/task/2/fd/3",
        "/dev/fd",
        "/dev/fd/0",
        "/dev/stdin",
        "/dev/stdout",
        "/dev/stderr",
        "proc/self/cwd",
        "dev/fd/1",
    ] {
        assert!(
            matches!(check(raw, &r, &fs), Err(PathError::ProcessLink { .. })),
            "{raw}"
        );
    }
    // Their neighbours are ordinary paths.
    for raw in [
        "/proc/cpuinfo",
        "/proc/1/status",
        "/proc/1/fdinfo/0",
        "/proc/1/task/1/status",
        "/dev/null",
        "/dev/fdx",
        "/srv/proc/self/cwd",
        "/home/proc/1/cwd",
        "docs/fd",
    ] {
        assert!(check(raw, &r, &fs).is_ok(), "{raw}");
    }
}

/// Whitespace around a path (issue 24): the check reads `" ../x"` as a folder named ` ..`
/// inside the root, a tool that trims its arguments opens `../x`. Each is refused, whatever
/// the language's idea of white space; inner spaces are ordinary.
#[test]
fn outer_whitespace_is_refused_not_trimmed() {
    let f = fixture();
    let r = rules(&f, &[], &[]);
    let fs = CachedFs::new(Instant::now, Duration::from_secs(60));
    for raw in [
        " ../x",
        "../x ",
        "  ../../etc/passwd",
        "docs/.. ",
        "\t../x",
        "docs/..\n",
        "\r\n../x",
        "\u{b}../x",
        "\u{c}../x",
        "\u{a0}../x",
        "\u{2003}../x",
        "\u{3000}../x",
        "\u{2028}../x",
        "\u{85}../x",
        "\u{feff}../x",
        "\u{1c}../x",
        "../x\u{1f}",
        " ",
        "src/main.rs ",
        " src/main.rs",
    ] {
        for fs in [&RealFs as &dyn Fs, &fs] {
            assert_eq!(
                check(raw, &r, fs),
                Err(PathError::OuterWhitespace),
                "{raw:?}"
            );
        }
    }
    for raw in ["my notes.md", "docs/a b/c.md", "src/main.rs"] {
        assert_eq!(check(raw, &r, &RealFs).as_deref(), Ok(raw), "{raw:?}");
    }
}

/// Protected files (issue 24): the file, its companions, every folder on the way to it (an
/// ancestor deleted or moved takes the file with it) and anything below it are refused, by
/// path components after `..` and symlinks, whether the file exists yet or not. Here the root
/// is a home folder: the store under `.local/state`, a user policy not written yet under
/// `.config` (itself a symlink into `dotfiles`), a project's `metagate.toml` not written yet.
#[test]
fn protected_files_and_the_folders_on_the_way_are_refused() {
    let f = fixture();
    let files = protected_home(&f);
    let home = &f.root;
    let home_text = home.display().to_string();
    let r = rules(&f, &default_deny(), &[]).protecting(&files, &RealFs);
    let refused = [
        ".",
        "./",
        &home_text,
        ".local",
        ".local/state",
        ".local/state/",
        "./.local//state",
        ".local/state/metagate",
        ".local/state/metagate/metagate.db",
        ".local/state/metagate/metagate.db-wal",
        ".local/state/metagate/metagate.db-journal",
        "src/../.local/state",
        "st",
        "st/metagate",
        "st/metagate/metagate.db-shm",
        ".config",
        ".config/metagate",
        ".config/metagate/metagate.toml",
        ".config/metagate/metagate.toml/x",
        "dotfiles",
        "dotfiles/config",
        "dotfiles/config/metagate/metagate.toml",
        "proj",
        "proj/metagate.toml",
        "proj/../proj/./metagate.toml",
        // Case-insensitive file systems open these as the same files.
        ".LOCAL/State",
        "PROJ/MetaGate.toml",
        ".local/state/metagate/METAGATE.DB-WAL",
    ];
    let cached = CachedFs::new(Instant::now, Duration::from_secs(60));
    for raw in refused {
        for fs in [&RealFs as &dyn Fs, &cached] {
            let result = check(raw, &r, fs);
            assert!(
                matches!(result, Err(PathError::Protected { .. })),
                "{raw:?} -> {result:?}"
            );
        }
    }
    let passes = [
        "src/main.rs",
        "README.md",
        "proj/notes.md",
        "proj/metagate.toml.bak",
        ".local/share/x",
        ".local/state/other-app/log.txt",
        ".local/state/metagate.db",
        ".config/other/x.toml",
        "dotfiles/other",
        "st2",
    ];
    for raw in passes {
        for fs in [&RealFs as &dyn Fs, &cached] {
            assert!(
                check(raw, &r, fs).is_ok(),
                "{raw:?}: {:?}",
                check(raw, &r, fs)
            );
        }
    }
    // Without protected files (or with all of them outside the root) nothing changes.
    let open = rules(&f, &default_deny(), &[]);
    let elsewhere = open
        .clone()
        .protecting(&[f.base.join("outside/metagate.db")], &RealFs);
    for raw in refused.iter().chain(&passes) {
        assert_eq!(
            check(raw, &elsewhere, &RealFs),
            check(raw, &open, &RealFs),
            "{raw:?}"
        );
    }
    let text = check(".local", &r, &RealFs).unwrap_err().rule();
    assert!(
        text.starts_with("names .local, on the way to the protected file "),
        "{text}"
    );
}

/// A home folder holding a store, the XDG config (through a symlink) and a project's policy
/// file: the files [`PathRules::protecting`] is given, the store's companions included.
fn protected_home(f: &Fixture) -> Vec<PathBuf> {
    let home = &f.root;
    let store = home.join(".local/state/metagate/metagate.db");
    write(&store, "");
    std::fs::create_dir_all(home.join(".local/state/other-app")).unwrap();
    std::fs::create_dir_all(home.join(".local/share")).unwrap();
    std::fs::create_dir_all(home.join("dotfiles/config")).unwrap();
    symlink("dotfiles/config", home.join(".config")).unwrap();
    std::fs::create_dir_all(home.join("proj")).unwrap();
    write(&home.join("proj/notes.md"), "");
    symlink(".local/state", home.join("st")).unwrap();
    let mut files = vec![
        home.join(".config/metagate/metagate.toml"),
        home.join("proj/metagate.toml"),
        // Spelled the way an operator might: through `..`.
        home.join("src/../.local/state/metagate/metagate.db"),
    ];
    for suffix in ["-wal", "-shm", "-journal"] {
        files.push(home.join(format!(".local/state/metagate/metagate.db{suffix}")));
    }
    files
}

/// A tool declared `access = "read"` may name the folders on the way to metagate's own files
/// (list the root, search `.local`), never the files, their companions or a place below one.
/// Each folder below was refused before reading was told from writing.
#[test]
fn a_tool_that_only_reads_may_name_the_folders_but_not_the_files() {
    let f = fixture();
    let files = protected_home(&f);
    let home_text = f.root.display().to_string();
    let writing = rules(&f, &default_deny(), &[]).protecting(&files, &RealFs);
    let reading = writing.clone().for_access(Access::Read);
    assert_eq!(
        (writing.access(), reading.access()),
        (Access::Write, Access::Read)
    );
    let folders = [
        ".",
        "./",
        &home_text,
        ".local",
        ".local/state",
        "./.local//state",
        ".local/state/metagate",
        "src/../.local/state",
        "st",
        "st/metagate",
        ".config",
        ".config/metagate",
        "dotfiles/config",
        "proj",
        "proj/../proj/.",
        ".LOCAL/State",
    ];
    let files = [
        ".local/state/metagate/metagate.db",
        ".local/state/metagate/metagate.db-wal",
        ".local/state/metagate/metagate.db-shm",
        ".local/state/metagate/metagate.db-journal",
        "st/metagate/metagate.db",
        "st/metagate/../metagate/metagate.db-wal",
        ".config/metagate/metagate.toml",
        ".config/metagate/metagate.toml/x",
        "dotfiles/config/metagate/metagate.toml",
        "proj/metagate.toml",
        "proj/../proj/./metagate.toml",
        "PROJ/MetaGate.toml",
        ".local/state/metagate/METAGATE.DB-WAL",
    ];
    let cached = CachedFs::new(Instant::now, Duration::from_secs(60));
    for fs in [&RealFs as &dyn Fs, &cached] {
        for raw in folders {
            let written = check(raw, &writing, fs);
            assert!(
                matches!(written, Err(PathError::Protected { .. })),
                "{raw:?} written -> {written:?}"
            );
            assert!(
                check(raw, &reading, fs).is_ok(),
                "{raw:?} read -> {:?}",
                check(raw, &reading, fs)
            );
        }
        for raw in files {
            for r in [&writing, &reading] {
                let result = check(raw, r, fs);
                assert!(
                    matches!(result, Err(PathError::Protected { .. })),
                    "{raw:?} {:?} -> {result:?}",
                    r.access()
                );
            }
        }
        // Reading changes nothing else: the deny rules and the root still hold.
        for raw in [".env", "../x", "/etc/passwd", "proj/secrets/k"] {
            assert_eq!(
                check(raw, &reading, fs),
                check(raw, &writing, fs),
                "{raw:?}"
            );
        }
    }
}

/// The root `/` (`rm -rf /`) holds everything: it is refused as soon as any file is protected.
#[test]
fn the_top_folder_holds_every_protected_file() {
    let fs = FakeFs::default()
        .exists("/", "/")
        .exists("/home", "/home")
        .exists("/home/u", "/home/u");
    let r = PathRules::new(Path::new("/"), &[], &[], &fs)
        .unwrap()
        .protecting(
            &[PathBuf::from("/home/u/.local/state/metagate/metagate.db")],
            &fs,
        );
    for raw in [
        "/",
        ".",
        "/home",
        "/home/u",
        "/home/u/.local/state",
        "home/u/.local",
    ] {
        assert!(
            matches!(check(raw, &r, &fs), Err(PathError::Protected { .. })),
            "{raw}"
        );
    }
    for raw in ["/etc/hosts", "/home/v", "/home/u/notes.md"] {
        assert!(check(raw, &r, &fs).is_ok(), "{raw}");
    }
}

/// A leading `$` (issue 24): the check reads `$HOME/.local/state` as a folder named `$HOME`
/// inside the root; a tool that expands variables opens the home folder's. Refused as `~` is;
/// past the start a variable holding an absolute path stays below what comes before it.
#[test]
fn a_leading_dollar_is_refused_as_a_tilde_is() {
    let f = fixture();
    let r = rules(&f, &[], &[]);
    for raw in [
        "$HOME/.local/state",
        "${HOME}/.config/metagate/metagate.toml",
        "$XDG_STATE_HOME/metagate/metagate.db",
        "$METAGATE_DB",
        "$PWD/../x",
        "$1/etc/passwd",
        "$(pwd)/x",
        "$'..'/x",
        "$",
    ] {
        assert_eq!(check(raw, &r, &RealFs), Err(PathError::Dollar), "{raw:?}");
    }
    for raw in [
        "./$types.d.ts",
        "src/$types.d.ts",
        "a$HOME",
        "docs/../$HOME",
    ] {
        assert!(check(raw, &r, &RealFs).is_ok(), "{raw:?}");
    }
}

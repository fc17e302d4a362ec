use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use super::*;
use crate::Options;
use crate::location::Location;
use crate::pg::PgStore;
use crate::pg::tls_test_server::{PASSWORD, plain_tcp_server, tls_server};

fn pg_url(text: &str) -> PgUrl {
    match Location::postgres(text) {
        Location::Postgres(url) => url,
        Location::File(_) => unreachable!(),
    }
}

fn no_password() -> PasswordSources {
    PasswordSources::default()
}

fn mode_of(text: &str) -> Result<SslMode, String> {
    prepare(&pg_url(text), &no_password())
        .map(|p| p.mode)
        .map_err(|e| e.to_string())
}

#[test]
fn the_default_mode_depends_on_where_the_server_is() {
    assert_eq!(
        mode_of("postgres://u@db.example/d"),
        Ok(SslMode::VerifyFull)
    );
    assert_eq!(
        mode_of("postgres://u@10.0.0.7:6543/d"),
        Ok(SslMode::VerifyFull)
    );
    assert_eq!(mode_of("postgres://u@localhost/d"), Ok(SslMode::Prefer));
    assert_eq!(mode_of("postgres://u@127.0.0.1/d"), Ok(SslMode::Prefer));
    assert_eq!(mode_of("postgres://u@[::1]/d"), Ok(SslMode::Prefer));
    assert_eq!(mode_of("postgres://u@%2Ftmp%2Fpg/d"), Ok(SslMode::Disable));
    // One network host among loopback ones is enough to ask for the strict mode.
    assert_eq!(
        mode_of("postgres://u@localhost,db.example/d"),
        Ok(SslMode::VerifyFull)
    );
}

#[test]
fn the_url_chooses_the_mode_and_bad_modes_are_named() {
    assert_eq!(
        mode_of("postgres://u@db.example/d?sslmode=disable"),
        Ok(SslMode::Disable)
    );
    assert_eq!(
        mode_of("postgres://u@db.example/d?sslmode=require"),
        Ok(SslMode::Require)
    );
    assert_eq!(
        mode_of("postgres://u@localhost/d?sslmode=verify-ca&sslrootcert=system"),
        Ok(SslMode::VerifyCa)
    );
    let err = mode_of("postgres://u:s3cret@h/d?sslmode=allow").unwrap_err();
    assert!(err.contains("sslmode=allow is not supported"), "{err}");
    assert!(
        err.contains("postgres://u:***@h/d") && !err.contains("s3cret"),
        "{err}"
    );
    let err = mode_of("postgres://u@h/d?sslmode=strict").unwrap_err();
    assert!(err.contains("\"strict\" is not one of"), "{err}");
}

#[test]
fn an_sslrootcert_is_read_and_makes_require_check_the_chain() {
    if !crate::pg::test_server::available() {
        return;
    }
    let ca = tls_server().ca();
    let url = |mode: &str| {
        format!(
            "postgres://u@h/d?sslmode={mode}&sslrootcert={}",
            ca.display()
        )
    };
    // As libpq: naming an authority with `require` means checking the certificate by it.
    assert_eq!(mode_of(&url("require")), Ok(SslMode::VerifyCa));
    assert_eq!(mode_of(&url("verify-full")), Ok(SslMode::VerifyFull));
    let err =
        mode_of("postgres://u@h/d?sslmode=verify-full&sslrootcert=/no/such/ca.pem").unwrap_err();
    assert!(
        err.contains("sslrootcert /no/such/ca.pem cannot be read"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let err = mode_of(&format!(
        "postgres://u@h/d?sslmode=verify-ca&sslrootcert={}",
        empty.display()
    ))
    .unwrap_err();
    assert!(err.contains("holds no certificate"), "{err}");
    // A socket uses no TLS, so its authorities are not read.
    assert_eq!(
        mode_of("postgres://u@%2Ftmp%2Fpg/d?sslmode=verify-full&sslrootcert=/no/such/ca.pem"),
        Ok(SslMode::VerifyFull)
    );
}

/// A password file holding `line`, with `mode`, in a fresh home folder.
fn home_with_pgpass(line: &str, mode: u32) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(".pgpass");
    std::fs::write(&path, format!("{line}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    home
}

#[test]
fn the_password_comes_from_the_url_then_pgpassword_then_the_file() {
    let home = home_with_pgpass("db.example:5432:d:u:from-file", 0o600);
    let sources = PasswordSources {
        pgpassword: Some("from-env".into()),
        pgpassfile: None,
        home: Some(home.path().to_path_buf()),
    };
    let settle = |url: &str, sources: &PasswordSources| {
        let prepared = prepare(&pg_url(url), sources).unwrap();
        let password = prepared
            .config
            .get_password()
            .map(|p| String::from_utf8(p.to_vec()).unwrap());
        (password, prepared.password, prepared.warnings)
    };
    let (password, source, _) = settle("postgres://u:from-url@db.example/d", &sources);
    assert_eq!(
        (password.as_deref(), source),
        (Some("from-url"), PasswordSource::Url)
    );
    let (password, source, _) = settle("postgres://u@db.example/d", &sources);
    assert_eq!(
        (password.as_deref(), source),
        (Some("from-env"), PasswordSource::Environment)
    );
    // An empty $PGPASSWORD is no password, as in libpq.
    let file_only = PasswordSources {
        pgpassword: Some(String::new()),
        ..sources.clone()
    };
    let (password, source, _) = settle("postgres://u@db.example/d", &file_only);
    assert_eq!(
        (password.as_deref(), source),
        (
            Some("from-file"),
            PasswordSource::File(home.path().join(".pgpass"))
        )
    );
    // Another database: no line matches.
    let (password, source, warnings) = settle("postgres://u@db.example/other", &file_only);
    assert_eq!(
        (password, source, warnings),
        (None, PasswordSource::None, vec![])
    );
    // $PGPASSFILE names another file.
    let elsewhere = home_with_pgpass("*:*:*:*:from-pgpassfile", 0o600);
    let named = PasswordSources {
        pgpassword: None,
        pgpassfile: Some(elsewhere.path().join(".pgpass")),
        home: Some(home.path().to_path_buf()),
    };
    let (password, _, _) = settle("postgres://u@db.example/d", &named);
    assert_eq!(password.as_deref(), Some("from-pgpassfile"));
}

#[test]
fn a_socket_is_looked_up_as_localhost_and_the_database_defaults_to_the_user() {
    let home = home_with_pgpass("localhost:5433:agent:agent:sock", 0o600);
    let sources = PasswordSources {
        home: Some(home.path().to_path_buf()),
        ..PasswordSources::default()
    };
    let prepared = prepare(&pg_url("postgres://agent@%2Ftmp%2Fpg:5433"), &sources).unwrap();
    assert_eq!(prepared.config.get_password(), Some(&b"sock"[..]));
}

#[test]
fn a_password_file_others_may_read_is_ignored_with_a_warning() {
    let home = home_with_pgpass("*:*:*:*:s3cret", 0o644);
    let sources = PasswordSources {
        home: Some(home.path().to_path_buf()),
        ..PasswordSources::default()
    };
    let prepared = prepare(&pg_url("postgres://u@db.example/d"), &sources).unwrap();
    assert_eq!(prepared.config.get_password(), None);
    assert_eq!(prepared.warnings.len(), 1);
    assert!(prepared.warnings[0].contains("group or world access"));
    assert!(!prepared.warnings[0].contains("s3cret"));
}

fn with_password() -> PasswordSources {
    PasswordSources {
        pgpassword: Some(PASSWORD.to_string()),
        ..PasswordSources::default()
    }
}

fn options() -> Options {
    Options {
        busy_timeout: Duration::from_secs(5),
        ..Options::default()
    }
}

/// Connects to `url` with the test role's password; whether the connection is encrypted.
fn connect_and_ask_ssl(url: &str) -> Result<bool, String> {
    let mut store = PgStore::connect_with(&pg_url(url), options(), &with_password())
        .map_err(|e| e.to_string())?;
    let row = store
        .client()
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .map_err(|e| e.to_string())?;
    Ok(row.get(0))
}

#[test]
fn require_connects_over_tls_and_disable_in_plaintext() {
    if !crate::pg::test_server::available() {
        return;
    }
    let server = tls_server();
    let db = server.fresh_database();
    assert_eq!(
        connect_and_ask_ssl(&server.url(&db, "sslmode=require")),
        Ok(true)
    );
    assert_eq!(
        connect_and_ask_ssl(&server.url(&db, "sslmode=prefer")),
        Ok(true)
    );
    assert_eq!(
        connect_and_ask_ssl(&server.url(&db, "sslmode=disable")),
        Ok(false)
    );
}

#[test]
fn verify_full_connects_only_to_the_host_its_authority_vouches_for() {
    if !crate::pg::test_server::available() {
        return;
    }
    let server = tls_server();
    let db = server.fresh_database();
    let ca = server.ca().display().to_string();
    assert_eq!(
        connect_and_ask_ssl(&server.url(&db, &format!("sslmode=verify-full&sslrootcert={ca}"))),
        Ok(true)
    );
    let other = server.other_ca().display().to_string();
    let err =
        connect_and_ask_ssl(&server.url(&db, &format!("sslmode=verify-full&sslrootcert={other}")))
            .unwrap_err();
    assert!(
        err.contains("no TLS connection with sslmode=verify-full") && err.contains("UnknownIssuer"),
        "{err}"
    );
    // The right authority, the wrong name: the host is named, the address given beside it.
    let misnamed = format!(
        "postgres://agent@wrong.invalid:{}/{db}?hostaddr=127.0.0.1&sslrootcert={ca}&sslmode=",
        server.port()
    );
    let err = connect_and_ask_ssl(&format!("{misnamed}verify-full")).unwrap_err();
    assert!(err.contains("not valid for name"), "{err}");
    // verify-ca checks the authority, not the name.
    assert_eq!(
        connect_and_ask_ssl(&format!("{misnamed}verify-ca")),
        Ok(true)
    );
    let err =
        connect_and_ask_ssl(&server.url(&db, &format!("sslmode=verify-ca&sslrootcert={other}")))
            .unwrap_err();
    assert!(err.contains("UnknownIssuer"), "{err}");
}

#[test]
fn require_refuses_a_server_without_tls_and_prefer_falls_back() {
    if !crate::pg::test_server::available() {
        return;
    }
    let server = plain_tcp_server();
    let db = server.fresh_database();
    let err = connect_and_ask_ssl(&server.url(&db, "sslmode=require")).unwrap_err();
    assert!(
        err.contains("no TLS connection with sslmode=require")
            && err.contains("server does not support TLS"),
        "{err}"
    );
    assert_eq!(
        connect_and_ask_ssl(&server.url(&db, "sslmode=prefer")),
        Ok(false)
    );
    assert_eq!(
        connect_and_ask_ssl(&server.url(&db, "sslmode=disable")),
        Ok(false)
    );
}

#[test]
fn a_wrong_or_missing_password_fails_at_once_naming_its_source_not_itself() {
    if !crate::pg::test_server::available() {
        return;
    }
    let server = tls_server();
    let db = server.fresh_database();
    let url = pg_url(&server.url(&db, "sslmode=require"));
    let wrong = PasswordSources {
        pgpassword: Some("not-the-pw-77".into()),
        ..PasswordSources::default()
    };
    let started = std::time::Instant::now();
    let err = PgStore::connect_with(&url, options(), &wrong)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("password authentication failed")
            && err.contains("$PGPASSWORD")
            && !err.contains("not-the-pw-77"),
        "{err}"
    );
    // Not retried until the busy timeout: no retry mends a password.
    assert!(started.elapsed() < Duration::from_secs(4));
    let err = PgStore::connect_with(&url, options(), &no_password())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("no password was given"), "{err}");
}

#[test]
fn a_lost_connection_is_opened_again_with_the_same_tls_and_password() {
    if !crate::pg::test_server::available() {
        return;
    }
    let server = tls_server();
    let db = server.fresh_database();
    let url = pg_url(&server.url(&db, "sslmode=require"));
    let mut store = PgStore::connect_with(&url, options(), &with_password()).unwrap();
    let first: i32 = store
        .client()
        .query_one("SELECT pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    // The server ends this very connection, as a restart or a failover would; the store's
    // code names every error through `err`, which notes that the connection is gone.
    let ended = store
        .client()
        .batch_execute("SELECT pg_terminate_backend(pg_backend_pid())")
        .map_err(|e| store.err(e));
    assert!(ended.is_err());
    let row = store
        .client()
        .query_one(
            "SELECT pg_backend_pid(), ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap();
    let (second, ssl): (i32, bool) = (row.get(0), row.get(1));
    assert_ne!(first, second);
    assert!(ssl);
}

//! Test PostgreSQL servers reached over TCP, for TLS and passwords: one with TLS (`ssl = on`,
//! a certificate for 127.0.0.1 signed by a throwaway authority made here), one without. Each
//! listens on 127.0.0.1 on a free port, and on a Unix socket in its folder where the
//! superuser sets things up; over TCP only the role [`ROLE`] may log in, with [`PASSWORD`]
//! (scram-sha-256), so the password's sources are tried for real. Started once per test
//! process, at the first test that asks, and stopped by the same watchdog as the plain server
//! (`postgres.rs`, which the includer names `postgres_server`).

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::postgres_server::{binaries, give_to_server_user, initdb, server_folder, start_watched};

/// The role tests connect as over TCP.
pub const ROLE: &str = "agent";
/// Its password.
pub const PASSWORD: &str = "agent-pw-5d41402abc";

/// A server listening on 127.0.0.1.
pub struct TcpServer {
    root: PathBuf,
    port: u16,
}

static TLS_SERVER: OnceLock<Result<TcpServer, String>> = OnceLock::new();
static PLAIN_SERVER: OnceLock<Result<TcpServer, String>> = OnceLock::new();
static NEXT_DATABASE: AtomicUsize = AtomicUsize::new(0);

/// The server offering TLS, started on first use.
pub fn tls_server() -> &'static TcpServer {
    match TLS_SERVER.get_or_init(|| start(true)) {
        Ok(server) => server,
        Err(why) => panic!("the TLS test PostgreSQL server could not start: {why}"),
    }
}

/// The server offering no TLS, started on first use.
pub fn plain_tcp_server() -> &'static TcpServer {
    match PLAIN_SERVER.get_or_init(|| start(false)) {
        Ok(server) => server,
        Err(why) => panic!("the plaintext TCP test PostgreSQL server could not start: {why}"),
    }
}

impl TcpServer {
    /// A new database owned by [`ROLE`]; its name.
    pub fn fresh_database(&self) -> String {
        let name = format!(
            "tls{}_{}",
            std::process::id(),
            NEXT_DATABASE.fetch_add(1, Ordering::Relaxed)
        );
        self.superuser(&format!("CREATE DATABASE {name} OWNER {ROLE}"));
        name
    }

    /// `postgres://agent@127.0.0.1:PORT/DATABASE?QUERY` (no password: the tests choose where
    /// it comes from).
    pub fn url(&self, database: &str, query: &str) -> String {
        format!(
            "postgres://{ROLE}@127.0.0.1:{}/{database}?{query}",
            self.port
        )
    }

    /// The port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The authority that signed the server's certificate (PEM).
    pub fn ca(&self) -> PathBuf {
        self.root.join("ca.pem")
    }

    /// An authority that signed nothing here (PEM).
    pub fn other_ca(&self) -> PathBuf {
        self.root.join("other-ca.pem")
    }

    fn superuser(&self, sql: &str) {
        let mut admin = postgres::Config::new()
            .host_path(&self.root)
            .port(self.port)
            .user("postgres")
            .dbname("postgres")
            .connect(postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot reach the TCP test server's socket: {e}"));
        admin
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

fn free_port() -> Result<u16, String> {
    // Closed again before the server binds it: another process could take it in between,
    // which on a test machine would show as a server that fails to start, not a wrong result.
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port on 127.0.0.1: {e}"))
}

/// Writes `text` to `path` for the server user alone (PostgreSQL refuses a key others read).
fn write_private(path: &Path, text: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    give_to_server_user(path)
}

/// A throwaway authority named `authority`, and a certificate it signs for 127.0.0.1 and
/// `localhost`: the authority's PEM, the certificate's and its key's.
fn certificates(authority: &str) -> Result<(String, String, String), String> {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair,
        KeyUsagePurpose,
    };
    let fail = |e: rcgen::Error| format!("making the test certificates: {e}");
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(fail)?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, authority);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let authority =
        CertifiedIssuer::self_signed(ca, KeyPair::generate().map_err(fail)?).map_err(fail)?;
    let server_key = KeyPair::generate().map_err(fail)?;
    let mut server = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .map_err(fail)?;
    server
        .distinguished_name
        .push(DnType::CommonName, "127.0.0.1");
    let certificate = server.signed_by(&server_key, &authority).map_err(fail)?;
    Ok((
        authority.pem(),
        certificate.pem(),
        server_key.serialize_pem(),
    ))
}

fn start(ssl: bool) -> Result<TcpServer, String> {
    let bin = binaries()?;
    let root = server_folder("metagate-pg-tcp-")?;
    let data = root.join("data");
    initdb(
        &bin,
        &data,
        &["--auth-local=trust", "--auth-host=scram-sha-256"],
    )?;
    // `hostssl` first, as a real server would list it; `host` lets the plaintext tests in.
    write_private(
        &data.join("pg_hba.conf"),
        "local all all trust\n\
         hostssl all all 127.0.0.1/32 scram-sha-256\n\
         host all all 127.0.0.1/32 scram-sha-256\n",
    )?;
    let port = free_port()?;
    let mut options = format!(
        "-c listen_addresses='127.0.0.1' -c port={port} -k {} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c password_encryption=scram-sha-256",
        root.display()
    );
    let (authority, other_authority) = if ssl {
        let (ca, cert, key) = certificates("metagate test authority")?;
        write_private(&data.join("server.crt"), &cert)?;
        write_private(&data.join("server.key"), &key)?;
        options.push_str(" -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key");
        (ca, certificates("another authority")?.0)
    } else {
        options.push_str(" -c ssl=off");
        (String::new(), certificates("another authority")?.0)
    };
    std::fs::write(root.join("ca.pem"), authority).map_err(|e| format!("ca.pem: {e}"))?;
    std::fs::write(root.join("other-ca.pem"), other_authority)
        .map_err(|e| format!("other-ca.pem: {e}"))?;
    start_watched(&bin, &root, &options)?;
    let server = TcpServer { root, port };
    server.superuser(&format!("CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'"));
    Ok(server)
}

//! How a connection to the PostgreSQL store is set up before it is made: TLS as the URL's
//! `sslmode` asks (libpq's modes, through rustls), and the password from the URL, else
//! `$PGPASSWORD`, else the password file (`$PGPASSFILE`, else `~/.pgpass`), in libpq's order.
//! docs/postgres.md ("Connecting: TLS and passwords") says the same for operators.
//!
//! The default mode is stricter than libpq's `prefer` for a network host: `verify-full`. A
//! fleet's store holds its grants and the counts its limits rest on; a connection that anyone
//! on the path may read or rewrite, taken silently when TLS fails, would make every check a
//! suggestion. A loopback host keeps libpq's `prefer` (nothing off the machine is on that
//! path), and a Unix socket never uses TLS (PostgreSQL offers none there; the socket's own
//! permissions guard it).

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

use postgres::config::{Host, SslMode as ClientSslMode};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::pgpass;
use crate::StoreError;
use crate::location::{PgUrl, TlsSettings};

#[cfg(test)]
mod tests;

/// libpq's `sslmode`s, less `allow` (plaintext first, TLS only if the server insists), which a
/// tool that fails closed has no use for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plaintext only.
    Disable,
    /// TLS if the server offers it, else plaintext; the certificate is not checked.
    Prefer,
    /// TLS or no connection; the certificate is not checked.
    Require,
    /// TLS, with a certificate signed by a trusted authority (for any host name).
    VerifyCa,
    /// TLS, with a certificate signed by a trusted authority for the host named.
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str) -> Result<SslMode, String> {
        Ok(match text {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            "allow" => {
                return Err(
                    "sslmode=allow is not supported (it would connect in plaintext whenever the server allows); use prefer, require, verify-ca or verify-full, or disable".to_string(),
                );
            }
            other => {
                return Err(format!(
                    "sslmode={other:?} is not one of disable, prefer, require, verify-ca, verify-full"
                ));
            }
        })
    }

    /// The mode for hosts the URL gives no `sslmode` for: see the module's comment.
    fn default_for(hosts: &[Host], addresses: &[IpAddr]) -> SslMode {
        let network = hosts.iter().any(|h| match h {
            Host::Tcp(name) => !is_loopback(name),
            #[cfg(unix)]
            Host::Unix(_) => false,
        }) || addresses.iter().any(|a| !a.is_loopback());
        let loopback = hosts.iter().any(|h| matches!(h, Host::Tcp(_))) || !addresses.is_empty();
        if network {
            SslMode::VerifyFull
        } else if loopback {
            SslMode::Prefer
        } else {
            SslMode::Disable
        }
    }

    fn checks_the_certificate(self) -> bool {
        matches!(self, SslMode::VerifyCa | SslMode::VerifyFull)
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        })
    }
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|a| a.is_loopback())
}

/// The environment a connection's password may come from (the process's, or a test's).
#[derive(Debug, Clone, Default)]
pub struct PasswordSources {
    /// `$PGPASSWORD`.
    pub pgpassword: Option<String>,
    /// `$PGPASSFILE`.
    pub pgpassfile: Option<PathBuf>,
    /// The home folder, where `.pgpass` is looked for.
    pub home: Option<PathBuf>,
}

impl PasswordSources {
    /// This process's.
    pub fn of_process() -> PasswordSources {
        PasswordSources {
            pgpassword: std::env::var("PGPASSWORD").ok(),
            pgpassfile: std::env::var_os("PGPASSFILE").map(PathBuf::from),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .or_else(|| {
                    nix::unistd::User::from_uid(nix::unistd::geteuid())
                        .ok()
                        .flatten()
                        .map(|u| u.dir)
                }),
        }
    }
}

/// Where the password came from, for messages (which never show the password itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PasswordSource {
    /// None was found: the server may not ask for one.
    None,
    /// The URL.
    Url,
    /// `$PGPASSWORD`.
    Environment,
    /// A password file's line.
    File(PathBuf),
}

impl fmt::Display for PasswordSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PasswordSource::None => f.write_str(
                "no password was given (none in the URL, $PGPASSWORD unset, no matching line in the password file)",
            ),
            PasswordSource::Url => f.write_str("the password came from the URL"),
            PasswordSource::Environment => f.write_str("the password came from $PGPASSWORD"),
            PasswordSource::File(p) => {
                write!(f, "the password came from the password file {}", p.display())
            }
        }
    }
}

/// A connection ready to be made: the client's configuration, its TLS connector, and what
/// messages about it say.
pub struct Prepared {
    /// The client's configuration, password and TLS mode set.
    pub config: postgres::Config,
    /// The TLS connector the mode asks for (unused with `disable`).
    pub tls: MakeRustlsConnect,
    /// The mode in force.
    pub mode: SslMode,
    /// Where the password came from.
    pub password: PasswordSource,
    /// Warnings for stderr (a password file not read, and why).
    pub warnings: Vec<String>,
}

/// Reads `url` into a client configuration with its TLS and password settled.
pub fn prepare(url: &PgUrl, sources: &PasswordSources) -> Result<Prepared, StoreError> {
    let bad = |why: String| StoreError::BadUrl {
        url: url.to_string(),
        why,
    };
    let (client_url, settings) = url.split_tls();
    let mut config: postgres::Config = client_url
        .parse()
        .map_err(|e: postgres::Error| bad(super::reason(&e)))?;
    let mode = requested_mode(&config, &settings).map_err(bad)?;
    let tcp = config.get_hosts().iter().any(|h| matches!(h, Host::Tcp(_)))
        || !config.get_hostaddrs().is_empty();
    config.ssl_mode(match mode {
        // A Unix socket never offers TLS: a mode asking for it would only refuse every
        // connection, so sockets go without, as libpq's do.
        _ if !tcp => ClientSslMode::Disable,
        SslMode::Disable => ClientSslMode::Disable,
        SslMode::Prefer => ClientSslMode::Prefer,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => ClientSslMode::Require,
    });
    // Authorities are read only for a connection that will use them: a `gate` on a socket
    // reads no certificate file.
    let uses_tls = tcp && mode != SslMode::Disable;
    let checked = if uses_tls { mode } else { SslMode::Disable };
    let tls = MakeRustlsConnect::new(tls_config(checked, &settings).map_err(bad)?);
    let (password, warnings) = settle_password(&mut config, sources);
    Ok(Prepared {
        config,
        tls,
        mode,
        password,
        warnings,
    })
}

/// The mode the URL asks for, or the default for its hosts. An explicit `sslrootcert` with
/// `prefer` or `require` checks the certificate against it, as libpq does (`verify-ca`).
fn requested_mode(config: &postgres::Config, settings: &TlsSettings) -> Result<SslMode, String> {
    let mode = match &settings.sslmode {
        Some(text) => SslMode::parse(text)?,
        None => SslMode::default_for(config.get_hosts(), config.get_hostaddrs()),
    };
    Ok(match mode {
        SslMode::Prefer | SslMode::Require if settings.sslrootcert.is_some() => SslMode::VerifyCa,
        other => other,
    })
}

/// The rustls configuration for `mode`: which certificates it accepts.
fn tls_config(mode: SslMode, settings: &TlsSettings) -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let chain = if mode.checks_the_certificate() {
        let roots = Arc::new(trusted_roots(settings.sslrootcert.as_deref())?);
        let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| format!("TLS: {e}"))?;
        Some(webpki)
    } else {
        None
    };
    let verifier: Arc<dyn ServerCertVerifier> = match chain {
        Some(webpki) if mode == SslMode::VerifyFull => webpki,
        chain => Arc::new(LaxCheck { provider, chain }),
    };
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// The authorities a certificate may be signed by: `sslrootcert`'s file, else (or with
/// `sslrootcert=system`) the system's.
fn trusted_roots(sslrootcert: Option<&str>) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    match sslrootcert {
        Some(file) if file != "system" => {
            let certificates = CertificateDer::pem_file_iter(file)
                .map_err(|e| format!("sslrootcert {file} cannot be read: {e}"))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("sslrootcert {file} is not a PEM certificate file: {e}"))?;
            let (added, _) = roots.add_parsable_certificates(certificates);
            if added == 0 {
                return Err(format!(
                    "sslrootcert {file} holds no certificate this client can use"
                ));
            }
        }
        _ => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(
                    "the system has no trusted root certificates (install ca-certificates), and the URL names no sslrootcert=FILE".to_string(),
                );
            }
        }
    }
    Ok(roots)
}

/// Puts the password in `config` when the URL gives none, from `$PGPASSWORD` or the password
/// file, in libpq's order (an empty one counts as none). The file is looked up for the first
/// host: one password serves every host of the URL.
fn settle_password(
    config: &mut postgres::Config,
    sources: &PasswordSources,
) -> (PasswordSource, Vec<String>) {
    if config.get_password().is_some_and(|p| !p.is_empty()) {
        return (PasswordSource::Url, Vec::new());
    }
    if let Some(password) = sources.pgpassword.as_deref().filter(|p| !p.is_empty()) {
        config.password(password);
        return (PasswordSource::Environment, Vec::new());
    }
    let Some(path) = pgpass::file_path(sources.pgpassfile.clone(), sources.home.clone()) else {
        return (PasswordSource::None, Vec::new());
    };
    match pgpass::lookup(&path, &wanted(config)) {
        pgpass::Lookup::Found(password) if !password.is_empty() => {
            config.password(password);
            (PasswordSource::File(path), Vec::new())
        }
        pgpass::Lookup::Found(_) | pgpass::Lookup::NotFound => (PasswordSource::None, Vec::new()),
        pgpass::Lookup::Ignored(warning) => (PasswordSource::None, vec![warning]),
    }
}

/// What the password file is searched for: libpq looks a socket up as `localhost`, and a
/// database not named as the user's own.
fn wanted(config: &postgres::Config) -> pgpass::Wanted {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        #[cfg(unix)]
        Some(Host::Unix(_)) => "localhost".to_string(),
        None => config
            .get_hostaddrs()
            .first()
            .map_or_else(|| "localhost".to_string(), ToString::to_string),
    };
    let user = config.get_user().map(str::to_string).unwrap_or_else(|| {
        nix::unistd::User::from_uid(nix::unistd::geteuid())
            .ok()
            .flatten()
            .map(|u| u.name)
            .unwrap_or_default()
    });
    pgpass::Wanted {
        host,
        port: config
            .get_ports()
            .first()
            .copied()
            .unwrap_or(5432)
            .to_string(),
        database: config
            .get_dbname()
            .map_or_else(|| user.clone(), str::to_string),
        user,
    }
}

/// What `prefer`, `require` and `verify-ca` accept (`verify-full` is webpki's own check).
/// Without `chain`, any certificate, as in libpq: the connection is private from those who
/// only listen, not from one who stands in the middle. With it, a certificate its authorities
/// signed, for any host name (webpki checks the name after the chain, so a name error means
/// the chain was good). Either way the handshake's signatures are checked: the server must
/// hold the key of the certificate it shows.
#[derive(Debug)]
struct LaxCheck {
    provider: Arc<CryptoProvider>,
    chain: Option<Arc<WebPkiServerVerifier>>,
}

impl ServerCertVerifier for LaxCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Whether a failure to connect is one no retry mends: TLS refused or not trusted, the
/// password missing or wrong. `None` for any other (which the caller judges).
pub fn lasting_failure(e: &postgres::Error, prepared: &Prepared) -> Option<String> {
    let text = e.to_string();
    let why = super::reason(e);
    if text.starts_with("error performing TLS handshake") {
        let hint = match prepared.mode {
            SslMode::VerifyFull => {
                "; the certificate must be signed by an authority of sslrootcert (else the system's) for the host name of the URL"
            }
            SslMode::VerifyCa => {
                "; the certificate must be signed by an authority of sslrootcert (else the system's)"
            }
            _ => "",
        };
        return Some(format!(
            "no TLS connection with sslmode={} ({why}){hint}; metagate never falls back to plaintext where the mode forbids it",
            prepared.mode
        ));
    }
    let auth = e.code().is_some_and(|c| {
        *c == postgres::error::SqlState::INVALID_PASSWORD
            || *c == postgres::error::SqlState::INVALID_AUTHORIZATION_SPECIFICATION
    });
    if auth || text.starts_with("invalid configuration") {
        return Some(format!("{why} ({})", prepared.password));
    }
    None
}

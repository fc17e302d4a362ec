//! Where the store is: an SQLite file (the embedded default), or a PostgreSQL database named
//! by a `postgres://` URL (a fleet's shared store; see docs/postgres.md).

use std::fmt;
use std::path::{Path, PathBuf};

/// A store's place, as `--db`, `$METAGATE_DB` or `[store] url` gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file.
    File(PathBuf),
    /// A PostgreSQL database.
    Postgres(PgUrl),
}

/// A PostgreSQL connection URL. Shown without its password (`Display`); the whole text is
/// kept for connecting.
#[derive(Clone, PartialEq, Eq)]
pub struct PgUrl(String);

impl PgUrl {
    /// The URL as given, password included: only for connecting.
    pub fn secret_text(&self) -> &str {
        &self.0
    }

    /// The URL for the PostgreSQL client, password included, without the TLS settings that
    /// metagate reads itself (the client knows neither `sslrootcert` nor libpq's `verify-ca`
    /// and `verify-full`), and those settings. The last of a repeated setting counts.
    pub fn split_tls(&self) -> (String, TlsSettings) {
        let mut settings = TlsSettings::default();
        let Some((head, query)) = self.0.split_once('?') else {
            return (self.0.clone(), settings);
        };
        let mut kept = Vec::new();
        for pair in query.split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "sslmode" => settings.sslmode = Some(percent_decoded(value)),
                "sslrootcert" => settings.sslrootcert = Some(percent_decoded(value)),
                _ => kept.push(pair),
            }
        }
        let url = if kept.is_empty() {
            head.to_string()
        } else {
            format!("{head}?{}", kept.join("&"))
        };
        (url, settings)
    }
}

/// The TLS settings of a URL's query (see [`PgUrl::split_tls`]), as written.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    /// `sslmode`: `disable`, `prefer`, `require`, `verify-ca` or `verify-full`.
    pub sslmode: Option<String>,
    /// `sslrootcert`: a file of PEM certificates, or `system`.
    pub sslrootcert: Option<String>,
}

/// `%2Ftmp` as `/tmp`; a `%` not followed by two hex digits stands for itself.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl fmt::Display for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&without_password(&self.0))
    }
}

impl fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PgUrl({self})")
    }
}

/// The URL schemes PostgreSQL's own clients accept.
const SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

/// Whether `text` names a PostgreSQL database rather than a file.
pub fn is_postgres_url(text: &str) -> bool {
    SCHEMES
        .iter()
        .any(|s| text.len() >= s.len() && text[..s.len()].eq_ignore_ascii_case(s))
}

impl Location {
    /// A path or URL as the operator wrote it. A file literally named `postgres://…` cannot be
    /// named this way; `./postgres:/…` still can.
    pub fn of(written: &Path) -> Location {
        match written.to_str() {
            Some(text) if is_postgres_url(text) => Location::Postgres(PgUrl(text.to_string())),
            _ => Location::File(written.to_path_buf()),
        }
    }

    /// A PostgreSQL location from its URL text.
    pub fn postgres(url: &str) -> Location {
        Location::Postgres(PgUrl(url.to_string()))
    }

    /// The file, for a file store.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Location::File(p) => Some(p),
            Location::Postgres(_) => None,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File(p) => write!(f, "{}", p.display()),
            Location::Postgres(url) => write!(f, "{url}"),
        }
    }
}

/// `postgres://user:secret@host/db` as `postgres://user:***@host/db`: URLs are shown in
/// messages and stored in suggestions, never their passwords. A `password=` parameter too.
fn without_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let (head, rest) = url.split_at(scheme_end);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => {
            let (userinfo, host) = authority.split_at(at);
            match userinfo.find(':') {
                Some(colon) => format!("{}:***{host}", &userinfo[..colon]),
                None => authority.to_string(),
            }
        }
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                        format!("{key}=***")
                    }
                    _ => pair.to_string(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{head}{authority}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_files_and_shown_without_passwords() {
        assert!(matches!(
            Location::of(Path::new("postgres://u@h/db")),
            Location::Postgres(_)
        ));
        assert!(matches!(
            Location::of(Path::new("PostgreSQL://h/db")),
            Location::Postgres(_)
        ));
        assert!(matches!(
            Location::of(Path::new("./postgres://h")),
            Location::File(_)
        ));
        let shown = Location::of(Path::new(
            "postgres://u:s3cret@h:5/db?password=x&sslmode=disable",
        ));
        assert_eq!(
            shown.to_string(),
            "postgres://u:***@h:5/db?password=***&sslmode=disable"
        );
        assert!(!format!("{shown:?}").contains("s3cret"));
        assert_eq!(
            Location::of(Path::new("postgres://u@%2Ftmp%2Fs/db")).to_string(),
            "postgres://u@%2Ftmp%2Fs/db"
        );
    }

    #[test]
    fn tls_settings_are_taken_out_of_the_url_the_client_reads() {
        let url = |text: &str| PgUrl(text.to_string()).split_tls();
        assert_eq!(
            url(
                "postgres://u:pw@h/db?sslmode=verify-full&connect_timeout=3&sslrootcert=%2Fetc%2Fca.pem"
            ),
            (
                "postgres://u:pw@h/db?connect_timeout=3".to_string(),
                TlsSettings {
                    sslmode: Some("verify-full".into()),
                    sslrootcert: Some("/etc/ca.pem".into()),
                }
            )
        );
        assert_eq!(
            url("postgres://h/db?sslmode=disable&sslmode=require"),
            (
                "postgres://h/db".to_string(),
                TlsSettings {
                    sslmode: Some("require".into()),
                    sslrootcert: None,
                }
            )
        );
        assert_eq!(
            url("postgres://h/db"),
            ("postgres://h/db".to_string(), TlsSettings::default())
        );
        assert_eq!(percent_decoded("a%2"), "a%2");
        assert_eq!(percent_decoded("%zz%41"), "%zzA");
    }
}

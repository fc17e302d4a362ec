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
}

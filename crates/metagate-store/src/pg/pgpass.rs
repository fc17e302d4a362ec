//! PostgreSQL's password file (`~/.pgpass`, or `$PGPASSFILE`), read as libpq reads it, so a
//! password need not be written in the `--db` URL, where `ps` shows it to every user.
//!
//! Each line is `hostname:port:database:username:password`; each of the first four fields may
//! be `*`, matching anything; `\:` and `\\` stand for a colon and a backslash (`\*` for a
//! literal star); lines starting with `#` are comments. The first line matching the connection
//! gives the password. A file that its group or others may read, write or run is ignored, with
//! a warning, as libpq ignores it: a password there is no secret.

use std::path::{Path, PathBuf};

/// What a connection is looked up by: the first four fields of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// The host name, or `localhost` for a Unix socket (as libpq looks it up).
    pub host: String,
    /// The port, as digits.
    pub port: String,
    /// The database.
    pub database: String,
    /// The user.
    pub user: String,
}

/// One field of a line's first four: `*`, or a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// `*`: any value.
    Any,
    /// This value, unescaped.
    Exactly(String),
}

impl Field {
    fn matches(&self, value: &str) -> bool {
        match self {
            Field::Any => true,
            Field::Exactly(v) => v == value,
        }
    }
}

/// A line of the file, unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The host field.
    pub host: Field,
    /// The port field.
    pub port: Field,
    /// The database field.
    pub database: Field,
    /// The user field.
    pub user: Field,
    /// The password.
    pub password: String,
}

impl Entry {
    fn matches(&self, wanted: &Wanted) -> bool {
        self.host.matches(&wanted.host)
            && self.port.matches(&wanted.port)
            && self.database.matches(&wanted.database)
            && self.user.matches(&wanted.user)
    }
}

/// One line read: `None` for a comment, a blank line, or a line with fewer than five fields
/// (which libpq skips as well). A password ends at the first unescaped colon, as in libpq.
pub fn parse_line(line: &str) -> Option<Entry> {
    let line = line.trim_end_matches(['\n', '\r']);
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let mut fields = Vec::with_capacity(5);
    let mut current = String::new();
    // Whether the field so far is a lone unescaped `*`.
    let mut lone_star = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                // A backslash at the very end stands for itself, as in libpq.
                current.push(chars.next().unwrap_or('\\'));
                lone_star = false;
            }
            ':' if fields.len() < 4 => {
                let field = if lone_star && current == "*" {
                    Field::Any
                } else {
                    Field::Exactly(std::mem::take(&mut current))
                };
                current.clear();
                fields.push(field);
                lone_star = false;
            }
            ':' => break,
            _ => {
                lone_star = current.is_empty() && c == '*';
                current.push(c);
            }
        }
    }
    if fields.len() < 4 {
        return None;
    }
    let mut fields = fields.into_iter();
    let mut next = || fields.next().unwrap_or(Field::Any);
    Some(Entry {
        host: next(),
        port: next(),
        database: next(),
        user: next(),
        password: current,
    })
}

/// A value as a field of a line: `\` and `:` escaped, a lone `*` (which would match anything)
/// written `\*`, and a leading `#` (which would make the line a comment) written `\#`.
pub fn escape(value: &str) -> String {
    if value == "*" {
        return "\\*".to_string();
    }
    let mut out = String::with_capacity(value.len() + 1);
    if value.starts_with('#') {
        out.push('\\');
    }
    for c in value.chars() {
        if c == '\\' || c == ':' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// An entry as a line of the file (without its newline).
pub fn format_line(entry: &Entry) -> String {
    let field = |f: &Field| match f {
        Field::Any => "*".to_string(),
        Field::Exactly(v) => escape(v),
    };
    format!(
        "{}:{}:{}:{}:{}",
        field(&entry.host),
        field(&entry.port),
        field(&entry.database),
        field(&entry.user),
        escape(&entry.password)
    )
}

/// The password of the first line of `text` matching `wanted`.
pub fn find(text: &str, wanted: &Wanted) -> Option<String> {
    text.lines()
        .filter_map(parse_line)
        .find(|e| e.matches(wanted))
        .map(|e| e.password)
}

/// The password file: `$PGPASSFILE`, else `.pgpass` in the home folder.
pub fn file_path(pgpassfile: Option<PathBuf>, home: Option<PathBuf>) -> Option<PathBuf> {
    pgpassfile
        .filter(|p| !p.as_os_str().is_empty())
        .or_else(|| home.map(|h| h.join(".pgpass")))
}

/// What reading the password file gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A matching line's password.
    Found(String),
    /// No file, or no matching line.
    NotFound,
    /// The file was not read; the warning says why (it never holds a password).
    Ignored(String),
}

/// Looks `wanted` up in the file at `path`, as libpq does: a file that is not a regular file,
/// or that its group or others may use, is ignored with a warning.
pub fn lookup(path: &Path, wanted: &Wanted) -> Lookup {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) => return Lookup::NotFound,
    };
    if !meta.is_file() {
        return Lookup::Ignored(format!(
            "password file {} is not a plain file; not read",
            path.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            return Lookup::Ignored(format!(
                "password file {} has group or world access (mode {:04o}); permissions should be u=rw (0600) or less; not read",
                path.display(),
                mode & 0o7777
            ));
        }
    }
    match std::fs::read(path) {
        Ok(bytes) => match find(&String::from_utf8_lossy(&bytes), wanted) {
            Some(password) => Lookup::Found(password),
            None => Lookup::NotFound,
        },
        Err(e) => Lookup::Ignored(format!(
            "password file {} cannot be read ({e}); not read",
            path.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn wanted(host: &str, port: &str, database: &str, user: &str) -> Wanted {
        Wanted {
            host: host.into(),
            port: port.into(),
            database: database.into(),
            user: user.into(),
        }
    }

    #[test]
    fn the_first_matching_line_gives_the_password() {
        let text = "# the fleet's store\n\
                    \n\
                    db.example:5432:metagate:agent:first\n\
                    *:*:metagate:agent:second\n\
                    *:*:*:*:any\n";
        let find_for = |h, p, d, u| find(text, &wanted(h, p, d, u));
        assert_eq!(
            find_for("db.example", "5432", "metagate", "agent").as_deref(),
            Some("first")
        );
        assert_eq!(
            find_for("other", "6543", "metagate", "agent").as_deref(),
            Some("second")
        );
        assert_eq!(
            find_for("other", "6543", "other", "someone").as_deref(),
            Some("any")
        );
        assert_eq!(find("h:1:d:u:p\n", &wanted("h", "2", "d", "u")), None);
    }

    #[test]
    fn escapes_comments_and_short_lines_read_as_libpq_reads_them() {
        let entry = parse_line("h\\:1:5432:d\\\\b:\\*:pa\\:ss:ignored").unwrap();
        assert_eq!(entry.host, Field::Exactly("h:1".into()));
        assert_eq!(entry.database, Field::Exactly("d\\b".into()));
        // `\*` is a literal star, not a wildcard.
        assert_eq!(entry.user, Field::Exactly("*".into()));
        assert_eq!(entry.password, "pa:ss");
        assert_eq!(
            parse_line("*x:5432:d:u:p").unwrap().host,
            Field::Exactly("*x".into())
        );
        assert_eq!(parse_line("# h:5432:d:u:p"), None);
        assert_eq!(parse_line("h:5432:d:u"), None);
        assert_eq!(parse_line(""), None);
        assert_eq!(parse_line("h:5432:d:u:pw\r\n").unwrap().password, "pw");
        assert_eq!(parse_line("h:5432:d:u:").unwrap().password, "");
    }

    #[test]
    fn the_file_is_pgpassfile_else_the_home_folders() {
        assert_eq!(
            file_path(Some("/x/pass".into()), Some("/home/a".into())),
            Some(PathBuf::from("/x/pass"))
        );
        assert_eq!(
            file_path(Some(PathBuf::new()), Some("/home/a".into())),
            Some(PathBuf::from("/home/a/.pgpass"))
        );
        assert_eq!(file_path(None, None), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_may_read_is_ignored_with_a_warning_naming_no_password() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pgpass");
        std::fs::write(&path, "*:*:*:*:s3cret\n").unwrap();
        let want = wanted("h", "5432", "d", "u");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(lookup(&path, &want), Lookup::Found("s3cret".into()));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        match lookup(&path, &want) {
            Lookup::Ignored(warning) => {
                assert!(warning.contains("0644"), "{warning}");
                assert!(!warning.contains("s3cret"), "{warning}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(lookup(&dir.path().join("none"), &want), Lookup::NotFound);
        assert!(matches!(lookup(dir.path(), &want), Lookup::Ignored(_)));
    }

    fn field() -> impl Strategy<Value = Field> {
        prop_oneof![
            1 => Just(Field::Any),
            4 => "[a-z*:\\\\#\\r ]{0,8}".prop_map(Field::Exactly),
        ]
    }

    proptest! {
        /// A line written by `format_line` parses back to the same fields, whatever colons,
        /// backslashes and stars they hold.
        #[test]
        fn a_written_line_parses_back(
            host in field(),
            port in field(),
            database in field(),
            user in field(),
            password in "[a-z*:\\\\# ]{0,12}",
        ) {
            let entry = Entry { host, port, database, user, password };
            prop_assert_eq!(parse_line(&format_line(&entry)), Some(entry));
        }
    }
}

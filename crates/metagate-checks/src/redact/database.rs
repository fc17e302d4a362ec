//! Database passwords in text: SQL that sets one (`CREATE USER … IDENTIFIED BY '…'`,
//! `ALTER ROLE … WITH PASSWORD '…'`), and `.pgpass` lines (`host:port:db:user:password`),
//! which also count inside base64 (the entropy rule decodes it and asks these rules).

/// Pushes the password spans of SQL statements and `.pgpass` lines in `b`.
pub(super) fn scan_database(b: &[u8], out: &mut Vec<(usize, usize)>) {
    scan_sql(b, out);
    scan_pgpass(b, out);
}

fn word_at(b: &[u8], i: usize, word: &[u8]) -> bool {
    b.len() >= i + word.len()
        && b[i..i + word.len()].eq_ignore_ascii_case(word)
        && (i == 0 || !b[i - 1].is_ascii_alphanumeric() && b[i - 1] != b'_')
        && b.get(i + word.len())
            .is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_')
}

fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// `PASSWORD '…'` (PostgreSQL's `WITH PASSWORD`, MySQL's `IDENTIFIED BY PASSWORD`) and
/// `IDENTIFIED BY '…'`, `IDENTIFIED WITH plugin BY '…'` (MySQL, Oracle): the quoted text.
fn scan_sql(b: &[u8], out: &mut Vec<(usize, usize)>) {
    let mut i = 0;
    while i < b.len() {
        let c = b[i] | 0x20;
        // `PASSWORD 'x'`: a space, then an SQL string (single quotes), never a quoted word
        // (`"password" sends passwords in clear text`, pg_hba.conf's comments).
        let after = if c == b'p' && word_at(b, i, b"password") && (i == 0 || b[i - 1] != b'"') {
            let j = skip_spaces(b, i + 8);
            (j > i + 8 && b.get(j) == Some(&b'\'')).then_some(j)
        } else if c == b'i' && word_at(b, i, b"identified") {
            // An SQL string: `identified by "code"` is prose (a comment in <linux/bpf.h>).
            by_after(b, i + 10)
                .map(|j| skip_spaces(b, j))
                .filter(|&j| b.get(j) == Some(&b'\''))
        } else {
            None
        };
        match after.and_then(|j| quoted_at(b, j)) {
            Some((start, end)) => {
                out.push((start, end));
                i = end + 1;
            }
            None => i += 1,
        }
    }
}

/// Past `BY` (and a `PASSWORD` after it) following `IDENTIFIED`, with at most one word
/// between them (`WITH mysql_native_password`).
fn by_after(b: &[u8], i: usize) -> Option<usize> {
    let mut j = skip_spaces(b, i);
    if word_at(b, j, b"with") {
        j = skip_spaces(b, j + 4);
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
        j = skip_spaces(b, j);
    }
    if !word_at(b, j, b"by") {
        return None;
    }
    j = skip_spaces(b, j + 2);
    Some(if word_at(b, j, b"password") { j + 8 } else { j })
}

/// The text inside a quote opening at `i` (`'…'`, `"…"`, with SQL's doubled quotes), up to
/// its closing quote or the end of the line.
fn quoted_at(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let q = *b.get(i)?;
    if q != b'\'' && q != b'"' {
        return None;
    }
    let start = i + 1;
    let mut k = start;
    while k < b.len() && b[k] != b'\n' {
        if b[k] == q {
            if b.get(k + 1) == Some(&q) {
                k += 2;
                continue;
            }
            break;
        }
        k += 1;
    }
    (k > start && !b[start..k].starts_with(super::REDACTED_B)).then_some((start, k))
}

/// `hostname:port:database:username:password`, one to a word (whitespace and quotes end
/// one): five fields split on unescaped `:`, the port digits or `*`. The password field runs
/// to the end of the word.
fn scan_pgpass(b: &[u8], out: &mut Vec<(usize, usize)>) {
    let ends = |c: u8| c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'`');
    let mut i = 0;
    while i < b.len() {
        if ends(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !ends(b[i]) {
            i += 1;
        }
        if let Some(span) = pgpass_password(&b[start..i]) {
            out.push((start + span.0, start + span.1));
        }
    }
}

fn pgpass_password(word: &[u8]) -> Option<(usize, usize)> {
    if word.len() < 9 || memchr::memchr(b':', word).is_none() {
        return None;
    }
    let mut colons = Vec::with_capacity(4);
    let mut k = 0;
    while k < word.len() {
        match word[k] {
            b'\\' => k += 1,
            b':' if colons.len() == 4 => return None,
            b':' => colons.push(k),
            _ => {}
        }
        k += 1;
    }
    let &[a, p, d, u] = colons.as_slice() else {
        return None;
    };
    let port = &word[a + 1..p];
    let port_ok = port == b"*"
        || (!port.is_empty() && port.len() <= 5 && port.iter().all(u8::is_ascii_digit));
    let host = &word[..a];
    // A name, an address or `*`: not a number (`12:30:45:00:11` is a time).
    let host_ok = host.iter().any(|&c| !c.is_ascii_digit())
        && host
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || b".-_*[]".contains(&c));
    let filled = d > p + 1 && u > d + 1 && word.len() > u + 1;
    (port_ok && host_ok && filled && !word[u + 1..].starts_with(super::REDACTED_B))
        .then_some((u + 1, word.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        scan_database(text.as_bytes(), &mut out);
        out.iter().map(|&(s, e)| &text[s..e]).collect()
    }

    #[test]
    fn sql_and_pgpass_passwords() {
        for (text, want) in [
            (
                "CREATE USER app IDENTIFIED BY 'Xk9$mP2v';",
                vec!["Xk9$mP2v"],
            ),
            ("create user app identified by 'q''w';", vec!["q''w"]),
            ("the commands identified by \"code\" are jumps", vec![]),
            (
                "ALTER USER 'a'@'%' IDENTIFIED WITH mysql_native_password BY 'Zq7#wE1'",
                vec!["Zq7#wE1"],
            ),
            (
                "CREATE ROLE deploy WITH LOGIN PASSWORD 'Rt5%yU8i'",
                vec!["Rt5%yU8i"],
            ),
            ("ALTER ROLE x WITH PASSWORD 'it''s-Pw9'", vec!["it''s-Pw9"]),
            ("SET PASSWORD FOR u = PASSWORD('x')", vec![]),
            (
                "IDENTIFIED BY PASSWORD '*2470C0C06DEE'",
                vec!["*2470C0C06DEE"],
            ),
            (
                "db.example.com:5432:app:appuser:Xk9mP2vQ7rL",
                vec!["Xk9mP2vQ7rL"],
            ),
            (
                "echo '*:*:*:postgres:pg\\:Pw7' >> ~/.pgpass",
                vec!["pg\\:Pw7"],
            ),
            ("the password field is empty", vec![]),
            ("root:x:0:0:root:/root:/bin/bash", vec![]),
            ("12:30:45:00:11", vec![]),
            ("deb http://deb.debian.org/debian bookworm main", vec![]),
            ("a:b:c:d:e", vec![]),
            ("PASSWORD = 'x'", vec![]),
            (
                "# Note that \"password\" sends passwords in clear text; \"md5\" or",
                vec![],
            ),
            (
                "METHOD can be \"md5\", \"password\", \"scram-sha-256\",",
                vec![],
            ),
            ("password \"x\"", vec![]),
        ] {
            assert_eq!(spans(text), want, "{text}");
        }
    }
}

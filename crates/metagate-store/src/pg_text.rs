//! Text bound to PostgreSQL. Its `text` cannot hold U+0000 (the server refuses the whole
//! statement), where SQLite's can: a tool name, caller or error message holding a NUL would
//! leave a decision unrecorded, and `gate` would fail closed on a call SQLite lets through.
//! So every text parameter sent to PostgreSQL, written or looked up, goes through [`PgText`],
//! which sends each NUL as U+FFFD (the replacement character): the same text is always sent
//! the same way, so a caller named with a NUL is counted under the name it was stored under.

use std::borrow::Cow;
use std::error::Error;

use bytes::BytesMut;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};

/// What PostgreSQL holds in place of a NUL.
const REPLACEMENT: &str = "\u{fffd}";

/// The longest key (a tool, method, caller, error type, argument name or capability) stored
/// as it is. A btree index entry holds at most about 2,700 bytes, and those columns are
/// indexed: one call naming a tool of 10 kB would otherwise fail its group's commit, and every
/// other call of the group with it.
const KEY_LIMIT: usize = 1024;

/// How much of a longer key is kept before its hash.
const KEY_KEPT: usize = 1000;

/// A text parameter (or NULL) as PostgreSQL is sent it: each U+0000 replaced by U+FFFD, with
/// no copy made.
#[derive(Debug, Clone, Copy)]
pub struct PgText<'a>(pub Option<&'a str>);

/// A key column's parameter (or NULL): as [`PgText`], and bounded as [`as_key`] says, written
/// and looked up alike.
#[derive(Debug, Clone, Copy)]
pub struct PgKey<'a>(pub Option<&'a str>);

/// Text of any form as a [`PgText`] or [`PgKey`] parameter: `&e.note.pg_text()`,
/// `&e.tool.pg_key()`.
pub trait ToPgText {
    /// The text (or NULL).
    fn text_or_null(&self) -> Option<&str>;

    /// The text (or NULL) as PostgreSQL is to be sent it.
    fn pg_text(&self) -> PgText<'_> {
        PgText(self.text_or_null())
    }

    /// The text (or NULL) as a key column holds it.
    fn pg_key(&self) -> PgKey<'_> {
        PgKey(self.text_or_null())
    }
}

impl ToPgText for str {
    fn text_or_null(&self) -> Option<&str> {
        Some(self)
    }
}

impl ToPgText for String {
    fn text_or_null(&self) -> Option<&str> {
        Some(self)
    }
}

impl ToPgText for Option<String> {
    fn text_or_null(&self) -> Option<&str> {
        self.as_deref()
    }
}

impl ToPgText for Option<&str> {
    fn text_or_null(&self) -> Option<&str> {
        *self
    }
}

/// `text` as PostgreSQL stores it in a key column: as [`as_stored`], and when that is longer
/// than [`KEY_LIMIT`] bytes, its first [`KEY_KEPT`] bytes (to a character's end), `…`, and 16
/// hex digits of a hash of the whole, so that two long keys stay two. A key stored so is
/// stored so again (it is short enough), and looked up the same way.
pub fn as_key(text: &str) -> Cow<'_, str> {
    let stored = as_stored(text);
    if stored.len() <= KEY_LIMIT {
        return stored;
    }
    let mut cut = KEY_KEPT;
    while !stored.is_char_boundary(cut) {
        cut -= 1;
    }
    // FNV-1a, 64 bits: stable across builds and platforms, as a stored key must be.
    let hash = stored.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    Cow::Owned(format!("{}\u{2026}{hash:016x}", &stored[..cut]))
}

impl ToSql for PgKey<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match self.0 {
            Some(text) => PgText(Some(&as_key(text))).to_sql(ty, out),
            None => Ok(IsNull::Yes),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <PgText<'_> as ToSql>::accepts(ty)
    }

    to_sql_checked!();
}

/// `text` as PostgreSQL stores it (see the module's comment); borrowed when it holds no NUL.
pub fn as_stored(text: &str) -> Cow<'_, str> {
    if text.as_bytes().contains(&0) {
        Cow::Owned(text.replace('\0', REPLACEMENT))
    } else {
        Cow::Borrowed(text)
    }
}

impl ToSql for PgText<'_> {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        let Some(text) = self.0 else {
            return Ok(IsNull::Yes);
        };
        // The text format PostgreSQL's binary protocol takes for `text` is its UTF-8 bytes.
        let mut rest = text.as_bytes();
        while let Some(at) = memchr::memchr(0, rest) {
            out.extend_from_slice(&rest[..at]);
            out.extend_from_slice(REPLACEMENT.as_bytes());
            rest = &rest[at + 1..];
        }
        out.extend_from_slice(rest);
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        // Only PostgreSQL's plain text types: ltree and its kin have encodings of their own.
        matches!(
            *ty,
            Type::VARCHAR | Type::TEXT | Type::BPCHAR | Type::NAME | Type::UNKNOWN
        )
    }

    to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(text: PgText<'_>) -> (IsNull, Vec<u8>) {
        let mut out = BytesMut::new();
        let null = text.to_sql(&Type::TEXT, &mut out).unwrap();
        (null, out.to_vec())
    }

    #[test]
    fn text_without_a_nul_is_sent_as_it_is() {
        for text in ["", "read_file", "é ✓ \u{fffd}", "a\u{1}b"] {
            let (null, bytes) = sent(text.pg_text());
            assert!(matches!(null, IsNull::No));
            assert_eq!(bytes, text.as_bytes());
            assert!(matches!(as_stored(text), Cow::Borrowed(t) if t == text));
        }
    }

    #[test]
    fn each_nul_is_sent_as_the_replacement_character() {
        for (text, stored) in [
            ("\0", "\u{fffd}"),
            ("a\0b", "a\u{fffd}b"),
            ("\0\0x\0", "\u{fffd}\u{fffd}x\u{fffd}"),
        ] {
            let (_, bytes) = sent(text.pg_text());
            assert_eq!(bytes, stored.as_bytes(), "{text:?}");
            assert_eq!(as_stored(text), stored, "{text:?}");
        }
    }

    #[test]
    fn a_long_key_is_bounded_and_stays_apart_from_another() {
        let short = "read_file";
        assert!(matches!(as_key(short), Cow::Borrowed(t) if t == short));
        let at_limit = "k".repeat(KEY_LIMIT);
        assert_eq!(as_key(&at_limit), at_limit);
        let long = format!("{}{}", "é".repeat(700), "a");
        let other = format!("{}{}", "é".repeat(700), "b");
        let (key, other_key) = (as_key(&long), as_key(&other));
        assert!(key.len() <= KEY_LIMIT, "{}", key.len());
        assert!(key.starts_with(&"é".repeat(500)));
        assert_ne!(key, other_key);
        assert_eq!(as_key(&key), key, "bounded again, unchanged");
        assert_eq!(as_key(&long), key, "the same key each time");
        let mut out = BytesMut::new();
        let null = PgKey(Some(&long)).to_sql(&Type::TEXT, &mut out).unwrap();
        assert!(matches!(null, IsNull::No));
        assert_eq!(&out[..], key.as_bytes());
        assert!(matches!(as_key("a\0b"), Cow::Owned(t) if t == "a\u{fffd}b"));
    }

    #[test]
    fn none_is_null_and_only_text_types_are_accepted() {
        assert!(matches!(sent(PgText(None)).0, IsNull::Yes));
        assert!(<PgText<'_> as ToSql>::accepts(&Type::TEXT));
        assert!(<Vec<Option<PgText<'_>>> as ToSql>::accepts(
            &Type::TEXT_ARRAY
        ));
        assert!(!<PgText<'_> as ToSql>::accepts(&Type::INT8));
    }
}

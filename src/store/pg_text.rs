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

/// A text parameter (or NULL) as PostgreSQL is sent it: each U+0000 replaced by U+FFFD, with
/// no copy made.
#[derive(Debug, Clone, Copy)]
pub struct PgText<'a>(pub Option<&'a str>);

/// Text of any form as a [`PgText`] parameter: `&e.tool.pg_text()`.
pub trait ToPgText {
    /// The text (or NULL) as PostgreSQL is to be sent it.
    fn pg_text(&self) -> PgText<'_>;
}

impl ToPgText for str {
    fn pg_text(&self) -> PgText<'_> {
        PgText(Some(self))
    }
}

impl ToPgText for String {
    fn pg_text(&self) -> PgText<'_> {
        PgText(Some(self))
    }
}

impl ToPgText for Option<String> {
    fn pg_text(&self) -> PgText<'_> {
        PgText(self.as_deref())
    }
}

impl ToPgText for Option<&str> {
    fn pg_text(&self) -> PgText<'_> {
        PgText(*self)
    }
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
    fn none_is_null_and_only_text_types_are_accepted() {
        assert!(matches!(sent(PgText(None)).0, IsNull::Yes));
        assert!(<PgText<'_> as ToSql>::accepts(&Type::TEXT));
        assert!(<Vec<Option<PgText<'_>>> as ToSql>::accepts(
            &Type::TEXT_ARRAY
        ));
        assert!(!<PgText<'_> as ToSql>::accepts(&Type::INT8));
    }
}

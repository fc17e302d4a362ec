//! Text from telemetry, traces and grants made safe to show on one terminal line, and counts
//! put in words.
//!
//! Tool names, error messages and grant details come from models and agents: a newline in
//! one would split a table row in two, and an escape sequence would move the cursor, retitle
//! the window or clear the screen of whoever reads the report.

use std::borrow::Cow;

/// `text` on one line with no control character left: line breaks (Unicode's too) become
/// spaces; other control characters, and the marks that reorder text on screen (bidi
/// overrides, which can make a name read as another), are shown as `\u{…}`. Borrowed when
/// there was nothing to change.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unsafe_on_screen) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}' => out.push(' '),
            c if unsafe_on_screen(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `text` with every character [`unsafe_on_screen`] escaped as Rust writes it (`\n`, `\t`,
/// `\u{1b}`), everything else as it is: for a model's text (a path, a host) inside a message
/// whose lines mean something, such as a rejection's `feedback`. Borrowed when there was
/// nothing to change.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unsafe_on_screen) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if unsafe_on_screen(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Control characters, line and paragraph separators, and bidirectional formatting marks.
pub fn unsafe_on_screen(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{61c}'
                | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `1 call`, `2 calls`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::one_line;
    use std::borrow::Cow;

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let cases: &[(&str, &str)] = &[
            ("web_search", "web_search"),
            ("naïve 工具", "naïve 工具"),
            ("bad\nname", "bad name"),
            ("a\r\nb", "a  b"),
            ("tab\there", "tab\\u{9}here"),
            ("\u{1b}[2Jevil", "\\u{1b}[2Jevil"),
            ("bell\u{7}", "bell\\u{7}"),
            ("del\u{7f}", "del\\u{7f}"),
            ("c1\u{9b}31m", "c1\\u{9b}31m"),
            ("a\u{2028}b\u{2029}c\u{85}d", "a b c d"),
            ("abc\u{202e}fdp.exe", "abc\\u{202e}fdp.exe"),
            ("x\u{2066}y\u{200f}", "x\\u{2066}y\\u{200f}"),
            ("", ""),
        ];
        for (text, shown) in cases {
            assert_eq!(one_line(text), *shown, "{text:?}");
            assert!(!one_line(text).chars().any(char::is_control), "{text:?}");
        }
    }

    #[test]
    fn escaped_text_keeps_to_one_line() {
        use super::escape_controls;
        for (text, shown) in [
            ("/w/docs", "/w/docs"),
            ("a\nretryable: true", "a\\nretryable: true"),
            ("t\tr\r", "t\\tr\\r"),
            ("\u{1b}[2J", "\\u{1b}[2J"),
            ("x\u{2028}y\u{202e}", "x\\u{2028}y\\u{202e}"),
            ("naïve", "naïve"),
        ] {
            assert_eq!(escape_controls(text), shown, "{text:?}");
            assert!(!escape_controls(text).chars().any(super::unsafe_on_screen));
        }
        assert!(matches!(escape_controls("/w/a"), Cow::Borrowed(_)));
    }

    #[test]
    fn clean_text_is_not_copied() {
        assert!(matches!(one_line("file_read"), Cow::Borrowed(_)));
        assert!(matches!(one_line("a\nb"), Cow::Owned(_)));
    }
}

//! Walking JSON values: arrays whose items are flags and their values, whole-value redaction.

use serde_json::Value;

use super::bytes::is_key_byte;
use super::key_names::{KeyKind, classify_key};
use super::spans::redact_text_counted;
use super::{MAX_TEXT_KEY_LEN, REDACTED, redact_value};

pub(super) fn redact_array(items: &mut [Value]) -> usize {
    let mut count = 0;
    let mut after_secret_flag = false;
    for item in items.iter_mut() {
        let follows_flag = std::mem::take(&mut after_secret_flag);
        if let Value::String(s) = item {
            if follows_flag && !s.starts_with('-') {
                count += redact_whole(item);
                continue;
            }
            after_secret_flag = is_secret_flag(s);
        }
        count += redact_value(item);
    }
    count
}

/// `--password`, `--api-key`, … (a long option naming a secret, without `=value`).
fn is_secret_flag(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 2
        && b.len() <= MAX_TEXT_KEY_LEN
        && b.starts_with(b"--")
        && b[2..].iter().all(|&c| is_key_byte(c))
        && classify_key(&b[2..]) != KeyKind::Plain
}

pub(super) fn redact_whole(v: &mut Value) -> usize {
    match v {
        Value::Null | Value::Bool(_) => 0,
        Value::String(s) if s.is_empty() || s == REDACTED => 0,
        _ => {
            *v = Value::String(REDACTED.to_owned());
            1
        }
    }
}

pub(super) fn redact_string(s: &mut String) -> usize {
    match redact_text_counted(s) {
        Some((redacted, count)) => {
            *s = redacted;
            count
        }
        None => 0,
    }
}

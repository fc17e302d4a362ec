//! Walking JSON values: objects and the kind of their keys, arrays whose items are flags and
//! their values, whole-value redaction.

use serde_json::{Map, Value};

use super::bytes::is_key_byte;
use super::commands::{argv_password_spans, names_command};
use super::key_names::{KeyKind, classify_key};
use super::key_values::is_number_or_path;
use super::spans::redact_text_counted;
use super::{MAX_TEXT_KEY_LEN, MIN_SCAN_LEN, REDACTED, redact_value};

pub(super) fn redact_object(map: &mut Map<String, Value>) -> usize {
    let mut count = redact_keys(map);
    let pair = named_pair_kind(map);
    for (key, v) in map.iter_mut() {
        let kind = match classify_key(key.as_bytes()) {
            KeyKind::Plain if pair != KeyKind::Plain && key.eq_ignore_ascii_case("value") => pair,
            kind => kind,
        };
        count += redact_for_kind(kind, v);
    }
    count
}

/// Keys that hold a secret (a token sent as an argument name, a `metadata` key): the key is
/// redacted as a text would be, and made unique again when that makes it another's
/// (`[REDACTED]`, `[REDACTED]#2`). Returns how many spans were redacted.
fn redact_keys(map: &mut Map<String, Value>) -> usize {
    if !map.keys().any(|k| k.len() >= MIN_SCAN_LEN) {
        return 0;
    }
    let renamed: Vec<Option<(String, usize)>> =
        map.keys().map(|k| redact_text_counted(k)).collect();
    if renamed.iter().all(Option::is_none) {
        return 0;
    }
    let mut count = 0;
    let old = std::mem::take(map);
    for ((key, value), new) in old.into_iter().zip(renamed) {
        let key = match new {
            Some((redacted, n)) => {
                count += n;
                redacted
            }
            None => key,
        };
        // Unique again, or one entry would take another's place and its value be lost.
        let mut unique = key.clone();
        let mut k = 2;
        while map.contains_key(&unique) {
            unique = format!("{key}#{k}");
            k += 1;
        }
        map.insert(unique, value);
    }
    count
}

/// `{"name": "DB_PASSWORD", "value": …}`, `{"key": "ApiKey", "value": …}`: the kind of the
/// secret the `value` beside such a name holds, or `Plain`.
fn named_pair_kind(map: &Map<String, Value>) -> KeyKind {
    // Objects are small: comparing keys is cheaper than hashing for a lookup.
    if !map
        .keys()
        .any(|key| key.len() == 5 && key.eq_ignore_ascii_case("value"))
    {
        return KeyKind::Plain;
    }
    map.iter()
        .filter(|(key, _)| key.eq_ignore_ascii_case("name") || key.eq_ignore_ascii_case("key"))
        .find_map(|(_, name)| match name {
            Value::String(name) => Some(classify_key(name.as_bytes())),
            _ => None,
        })
        .unwrap_or(KeyKind::Plain)
}

/// Redacts the value of an entry whose key is of `kind`.
pub(super) fn redact_for_kind(kind: KeyKind, v: &mut Value) -> usize {
    match kind {
        KeyKind::Plain => redact_value(v),
        KeyKind::Ambiguous => match v {
            Value::Number(_) => 0,
            Value::String(s) if is_number_or_path(s.as_bytes()) => 0,
            _ => redact_whole(v),
        },
        KeyKind::Secret | KeyKind::Header => redact_whole(v),
    }
}

pub(super) fn redact_array(items: &mut [Value]) -> usize {
    let mut count = redact_argv(items);
    let mut after_secret_flag = KeyKind::Plain;
    for item in items.iter_mut() {
        let flag = std::mem::replace(&mut after_secret_flag, KeyKind::Plain);
        if let Value::String(s) = item {
            if flag != KeyKind::Plain && !s.starts_with('-') {
                count += redact_for_kind(flag, item);
                continue;
            }
            after_secret_flag = secret_flag_kind(s);
        }
        count += redact_value(item);
    }
    count
}

/// The passwords known commands take as options in an argv-style array:
/// `["mysql", "-uroot", "-pX"]`, `["sshpass", "-p", "X", "ssh", "host"]`.
fn redact_argv(items: &mut [Value]) -> usize {
    let names_command = |v: &Value| v.as_str().is_some_and(|s| names_command(s.as_bytes()));
    if items.len() < 2 || !items.iter().any(names_command) {
        return 0;
    }
    let words: Vec<&str> = items.iter().map(|v| v.as_str().unwrap_or("")).collect();
    let spans = argv_password_spans(&words);
    for &(index, start, end) in &spans {
        if let Value::String(s) = &mut items[index] {
            s.replace_range(start..end, REDACTED);
        }
    }
    spans.len()
}

/// `--password`, `--api-key`, … (a long option naming a secret, without `=value`): the kind
/// of its key, else `Plain`.
fn secret_flag_kind(s: &str) -> KeyKind {
    let b = s.as_bytes();
    if b.len() > 2
        && b.len() <= MAX_TEXT_KEY_LEN
        && b.starts_with(b"--")
        && b[2..].iter().all(|&c| is_key_byte(c))
    {
        classify_key(&b[2..])
    } else {
        KeyKind::Plain
    }
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

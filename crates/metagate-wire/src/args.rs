//! A tool call's arguments: ordered fields whose values stay the JSON text they came in
//! until a rule needs them as values. Most calls are fine as sent, so most values are never
//! built, and untouched values go back out byte for byte.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use crate::scan;

/// One argument's value: the JSON text it came in, or a value the gate set or had to read.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue<'a> {
    /// A value not yet parsed: its JSON text.
    Raw(Cow<'a, str>),
    /// A parsed value.
    Value(Value),
}

/// The JSON type of a value, read from its first byte when it is still text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonType {
    /// The type of a value already read.
    pub fn of(value: &Value) -> JsonType {
        match value {
            Value::Null => JsonType::Null,
            Value::Bool(_) => JsonType::Bool,
            Value::Number(_) => JsonType::Number,
            Value::String(_) => JsonType::String,
            Value::Array(_) => JsonType::Array,
            Value::Object(_) => JsonType::Object,
        }
    }
}

impl<'a> ArgValue<'a> {
    /// The JSON type, without parsing a raw value.
    pub fn json_type(&self) -> JsonType {
        match self {
            ArgValue::Raw(text) => match text.as_bytes().first() {
                Some(b'"') => JsonType::String,
                Some(b'{') => JsonType::Object,
                Some(b'[') => JsonType::Array,
                Some(b't' | b'f') => JsonType::Bool,
                Some(b'n') => JsonType::Null,
                _ => JsonType::Number,
            },
            ArgValue::Value(v) => JsonType::of(v),
        }
    }

    /// The string this value holds, if it is one (borrowed when it has no escapes).
    pub fn as_str(&self) -> Option<Cow<'_, str>> {
        match self {
            ArgValue::Raw(text) if text.starts_with('"') => scan::decode_string(text),
            ArgValue::Value(Value::String(s)) => Some(Cow::Borrowed(s)),
            _ => None,
        }
    }

    /// The number this value holds, if it is one.
    fn as_number(&self) -> Option<Cow<'_, Number>> {
        match self {
            ArgValue::Raw(text) if self.json_type() == JsonType::Number => {
                text.parse::<Number>().ok().map(Cow::Owned)
            }
            ArgValue::Value(Value::Number(n)) => Some(Cow::Borrowed(n)),
            _ => None,
        }
    }

    /// How this number reads as an integer ([`integer_fit`]); `None` when it is not a number.
    pub fn integer_fit(&self) -> Option<IntegerFit> {
        match self {
            ArgValue::Raw(text) if self.json_type() == JsonType::Number => Some(integer_fit(text)),
            ArgValue::Value(Value::Number(n)) => Some(integer_fit(n.as_str())),
            _ => None,
        }
    }

    /// Whether this is a number the `integer` type holds: no fractional part (`5`, `5.0`, `1e3`,
    /// as JSON Schema counts integers) and within i64.
    pub fn is_i64_integer(&self) -> bool {
        // Most integers are short plain digits, which always fit.
        if let ArgValue::Raw(text) = self
            && text.len() <= 18
            && text.bytes().all(|b| b.is_ascii_digit() || b == b'-')
            && self.json_type() == JsonType::Number
        {
            return true;
        }
        self.integer_fit() == Some(IntegerFit::Fits)
    }

    /// Whether this is a number the `number` type holds: finite as an f64 ([`fits_f64`]).
    pub fn is_f64_number(&self) -> bool {
        match self {
            ArgValue::Raw(text) if self.json_type() == JsonType::Number => {
                // Without an exponent, 308 characters hold at most 308 integer digits, which
                // stay below f64::MAX (1.8e308): no need to read the number.
                (!text.contains(['e', 'E']) && text.len() <= 308)
                    || self.as_number().is_some_and(|n| fits_f64(&n))
            }
            ArgValue::Value(Value::Number(n)) => fits_f64(n),
            _ => false,
        }
    }

    /// The value, read from its text if need be.
    pub fn to_value(&self) -> Value {
        match self {
            ArgValue::Raw(text) => serde_json::from_str(text).expect("argument text was validated"),
            ArgValue::Value(v) => v.clone(),
        }
    }

    /// The value, parsed if it was raw.
    pub fn into_value(self) -> Value {
        match self {
            ArgValue::Raw(text) => {
                serde_json::from_str(&text).expect("argument text was validated")
            }
            ArgValue::Value(v) => v,
        }
    }

    /// Absent-like: `null`, or a string of only whitespace.
    pub fn is_blank(&self) -> bool {
        // Most strings start with a visible ASCII character: not blank, nothing to decode.
        if let ArgValue::Raw(text) = self
            && let [b'"', first, ..] = text.as_bytes()
            && first.is_ascii_graphic()
            && !matches!(first, b'"' | b'\\')
        {
            return false;
        }
        match self.json_type() {
            JsonType::Null => true,
            JsonType::String => self.as_str().is_some_and(|s| s.trim().is_empty()),
            _ => false,
        }
    }

    /// Equal as JSON values to `v`.
    pub fn equals(&self, v: &Value) -> bool {
        match (self, v) {
            (ArgValue::Value(mine), _) => mine == v,
            (ArgValue::Raw(_), Value::String(s)) => self.as_str().is_some_and(|m| m == s.as_str()),
            (ArgValue::Raw(text), Value::Bool(b)) => text == if *b { "true" } else { "false" },
            (ArgValue::Raw(text), Value::Null) => text == "null",
            (ArgValue::Raw(_), _) => self.to_value() == *v,
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            // Output is one line: a value that spans lines is written compactly.
            ArgValue::Raw(text) if memchr::memchr2(b'\n', b'\r', text.as_bytes()).is_some() => {
                scan::write_value(&self.to_value(), out);
            }
            ArgValue::Raw(text) => out.extend_from_slice(text.as_bytes()),
            ArgValue::Value(v) => scan::write_value(v, out),
        }
    }
}

/// How a number reads as an integer of the `integer` type (a 64-bit signed integer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntegerFit {
    /// A whole number within i64: `5`, `-0`, `5.0`, `1e3`, `-9223372036854775808`.
    Fits,
    /// A fractional part remains: `5.5`, `1e-400`, `1.0000000000000000001`.
    HasFraction,
    /// A whole number outside i64: `9223372036854775808`, `1e19`, `1e99999999`, 100,000 digits.
    OutsideI64,
}

/// How a JSON number's text reads as an integer, decided on its decimal digits: no rounding
/// through an f64, which would take `1e-400` for 0 and `-9223372036854775809.0` for i64::MIN.
/// The contract (docs/corrections.md, "Rules"): a number beyond what the type can hold is a
/// type mismatch, never read lossily.
fn integer_fit(number: &str) -> IntegerFit {
    let unsigned = number.strip_prefix('-').unwrap_or(number);
    let (mantissa, exponent) = unsigned.split_once(['e', 'E']).unwrap_or((unsigned, "0"));
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // An exponent too long for an i64 is far beyond any digit count: saturate.
    let exponent =
        exponent
            .trim_start_matches('+')
            .parse::<i64>()
            .unwrap_or(if exponent.starts_with('-') {
                i64::MIN / 2
            } else {
                i64::MAX / 2
            });
    let digits = || whole.bytes().chain(fraction.bytes());
    let count = whole.len() + fraction.len();
    let leading_zeros = digits().take_while(|&b| b == b'0').count();
    if leading_zeros == count {
        return IntegerFit::Fits;
    }
    let trailing_zeros = digits().rev().take_while(|&b| b == b'0').count();
    let significant = count - leading_zeros - trailing_zeros;
    // The value is the significant digits times 10^scale.
    let scale = exponent
        .saturating_sub(fraction.len() as i64)
        .saturating_add(trailing_zeros as i64);
    if scale < 0 {
        return IntegerFit::HasFraction;
    }
    // 19 digits hold every i64 and numbers up to 10^19 - 1, which an i128 holds.
    if (significant as i64).saturating_add(scale) > 19 {
        return IntegerFit::OutsideI64;
    }
    let mut value = digits()
        .skip(leading_zeros)
        .take(significant)
        .fold(0i128, |v, b| v * 10 + i128::from(b - b'0'));
    for _ in 0..scale {
        value *= 10;
    }
    if number.starts_with('-') {
        value = -value;
    }
    if i64::try_from(value).is_ok() {
        IntegerFit::Fits
    } else {
        IntegerFit::OutsideI64
    }
}

/// Whether a number is an integer the `integer` type holds ([`integer_fit`]).
pub fn is_i64_integer(n: &Number) -> bool {
    integer_fit(n.as_str()) == IntegerFit::Fits
}

/// Whether a number is finite as a 64-bit float, as the `number` type needs: `1e308` and
/// `1e-400` (read as 0) are; `1e309`, `1e99999999` and a 400-digit integer are not.
pub fn fits_f64(n: &Number) -> bool {
    n.as_f64().is_some_and(f64::is_finite)
}

/// The arguments of one call, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args<'a> {
    fields: Vec<(Cow<'a, str>, ArgValue<'a>)>,
}

impl<'a> Args<'a> {
    pub(crate) fn new() -> Args<'a> {
        Args { fields: Vec::new() }
    }

    /// The arguments of a JSON object's text, or `None` when it is not one strict object.
    /// Repeated keys are resolved as JSON readers do: the last value, in the first place.
    pub fn from_text(text: &'a str) -> Option<Args<'a>> {
        scan::object_fields(text).map(Args::from_fields)
    }

    /// The arguments of an object already split by [`scan`].
    pub(crate) fn from_fields(found: Vec<scan::Field<'a>>) -> Args<'a> {
        // Room for the defaults the gate may add.
        let mut fields: Vec<(Cow<'a, str>, ArgValue<'a>)> = Vec::with_capacity(found.len() + 4);
        let small = found.len() <= 16;
        let mut index = (!small).then(std::collections::HashMap::<Cow<'a, str>, usize>::new);
        for f in found {
            let existing = match &mut index {
                None => fields.iter().position(|(k, _)| *k == f.key),
                Some(map) => map.get(&f.key).copied(),
            };
            match existing {
                Some(i) => fields[i].1 = ArgValue::Raw(Cow::Borrowed(f.value)),
                None => {
                    if let Some(map) = &mut index {
                        map.insert(f.key.clone(), fields.len());
                    }
                    fields.push((f.key, ArgValue::Raw(Cow::Borrowed(f.value))));
                }
            }
        }
        Args { fields }
    }

    /// The arguments of a JSON object's text that will not outlive this call (a decoded
    /// `arguments` string): the fields' text is copied, values are still not built.
    pub(crate) fn from_text_owned(text: &str) -> Option<Args<'a>> {
        let borrowed = Args::from_text(text)?;
        let fields = borrowed
            .fields
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    ArgValue::Raw(t) => ArgValue::Raw(Cow::Owned(t.into_owned())),
                    ArgValue::Value(v) => ArgValue::Value(v),
                };
                (Cow::Owned(k.into_owned()), v)
            })
            .collect();
        Some(Args { fields })
    }

    /// Arguments from a parsed JSON object, in its order.
    pub fn from_map(map: Map<String, Value>) -> Args<'a> {
        Args {
            fields: map
                .into_iter()
                .map(|(k, v)| (Cow::Owned(k), ArgValue::Value(v)))
                .collect(),
        }
    }

    /// How many arguments there are.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The argument names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(k, _)| k.as_ref())
    }

    /// The arguments, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ArgValue<'a>)> {
        self.fields.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// Where the argument of that name is, if present.
    pub fn position(&self, key: &str) -> Option<usize> {
        self.fields.iter().position(|(k, _)| k == key)
    }

    /// The argument of that name, if present.
    pub fn get(&self, key: &str) -> Option<&ArgValue<'a>> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The name at a position.
    pub fn key_at(&self, index: usize) -> &str {
        &self.fields[index].0
    }

    /// The value at a position.
    pub fn value_at(&self, index: usize) -> &ArgValue<'a> {
        &self.fields[index].1
    }

    /// Replaces a value, returning the old one.
    pub fn set_at(&mut self, index: usize, value: Value) -> ArgValue<'a> {
        std::mem::replace(&mut self.fields[index].1, ArgValue::Value(value))
    }

    /// Renames a key in place.
    pub fn rename_at(&mut self, index: usize, key: String) {
        self.fields[index].0 = Cow::Owned(key);
    }

    /// Adds a field at the end (the caller makes sure the key is new).
    pub fn push(&mut self, key: String, value: Value) {
        self.fields.push((Cow::Owned(key), ArgValue::Value(value)));
    }

    /// Takes the argument of that name out.
    pub fn remove(&mut self, key: &str) -> Option<ArgValue<'a>> {
        let i = self.position(key)?;
        Some(self.fields.remove(i).1)
    }

    /// Keeps only the arguments whose names `keep` accepts, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.fields.retain(|(k, _)| keep(k));
    }

    /// The arguments as a JSON map (for telemetry and schema validation).
    pub fn to_map(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_value()))
            .collect()
    }

    /// Writes the arguments as one compact JSON object.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (i, (key, value)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            scan::write_string(key, out);
            out.push(b':');
            value.write(out);
        }
        out.push(b'}');
    }

    /// The arguments as one JSON object.
    pub fn to_json_string(&self) -> String {
        let mut out =
            Vec::with_capacity(16 + self.fields.iter().map(|(k, _)| k.len() + 24).sum::<usize>());
        self.write_json(&mut out);
        String::from_utf8(out).expect("JSON is UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn untouched_values_keep_their_text() {
        let text = r#"{"a":1.50,"b":"\u00e9","c":[1, 2]}"#;
        let args = Args::from_text(text).unwrap();
        assert_eq!(args.to_json_string(), text);
        let theirs: Value = serde_json::from_str(text).unwrap();
        assert_eq!(Value::Object(args.to_map()), theirs);
        assert_eq!(args.get("b").unwrap().as_str().unwrap(), "é");
    }

    #[test]
    fn repeated_keys_resolve_like_json_readers() {
        let text = r#"{"a":1,"b":2,"a":3}"#;
        let args = Args::from_text(text).unwrap();
        let theirs: Map<String, Value> = serde_json::from_str(text).unwrap();
        assert_eq!(args.to_map(), theirs);
        assert_eq!(args.keys().collect::<Vec<_>>(), ["a", "b"]);
        let many: String = (0..40).map(|i| format!("\"k{}\":{i},", i % 20)).collect();
        let text = format!("{{{many}\"z\":0}}");
        let theirs: Map<String, Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(Args::from_text(&text).unwrap().to_map(), theirs);
    }

    proptest::proptest! {
        /// Blank is decided on the raw text as on the decoded string: `null`, or only
        /// whitespace (Unicode's, as `str::trim` counts it).
        #[test]
        fn blank_strings_are_told_from_the_raw_text(s in "[ \t\n\u{a0}\u{2003}a\"\\\\é]{0,6}") {
            let text = serde_json::to_string(&s).unwrap();
            let value = ArgValue::Raw(Cow::Borrowed(&text));
            proptest::prop_assert_eq!(value.is_blank(), s.trim().is_empty());
            proptest::prop_assert_eq!(ArgValue::Value(Value::String(s.clone())).is_blank(), s.trim().is_empty());
        }
    }

    #[test]
    fn values_are_read_without_building_them() {
        let args = Args::from_text(r#"{"s":"  ","n":null,"t":true,"x":5,"e":"a\"b"}"#).unwrap();
        assert!(args.get("s").unwrap().is_blank());
        assert!(args.get("n").unwrap().is_blank());
        assert_eq!(args.get("t").unwrap().json_type(), JsonType::Bool);
        assert!(args.get("t").unwrap().equals(&json!(true)));
        assert!(args.get("x").unwrap().equals(&json!(5)));
        assert_eq!(args.get("e").unwrap().as_str().unwrap(), "a\"b");
    }

    /// (number text, holds as `integer`, holds as `number`): the raw text's quick answers and
    /// the read value's agree, and the ends of each range are where they should be.
    #[test]
    fn numbers_fit_their_type_only_within_its_range() {
        let long = |n: usize| format!("1{}", "0".repeat(n - 1));
        let (d309, d310, d100k) = (long(309), long(310), long(100_000));
        let cases: Vec<(&str, bool, bool)> = vec![
            ("0", true, true),
            ("-0", true, true),
            ("5", true, true),
            ("5.5", false, true),
            ("5.0", true, true),
            ("1e3", true, true),
            ("999999999999999999", true, true),
            ("9223372036854775807", true, true),
            ("-9223372036854775808", true, true),
            ("9223372036854775808", false, true),
            ("-9223372036854775809", false, true),
            ("12345678901234567890", false, true),
            ("9.2e18", true, true),
            ("9.3e18", false, true),
            // Read on the digits, not through an f64 (which makes both of these i64::MIN).
            ("-9223372036854775808.0", true, true),
            ("-9223372036854775809.0", false, true),
            ("9223372036854775807e0", true, true),
            ("922337203685477580.7e1", true, true),
            ("922337203685477580.8e1", false, true),
            ("10000000000000000000e-1", true, true),
            ("1.5e1", true, true),
            ("0e99999999", true, true),
            ("-0.000e-5", true, true),
            ("1e+3", true, true),
            ("1E3", true, true),
            ("1.0000000000000000001", false, true),
            ("1e19", false, true),
            ("1e308", false, true),
            ("-1.7976931348623157e308", false, true),
            ("1e309", false, false),
            ("-1e309", false, false),
            ("1e99999999", false, false),
            ("1e-400", false, true),
            ("1e-99999999999999999999", false, true),
            ("1e99999999999999999999", false, false),
            // 10^308 is below f64::MAX (1.8e308), 10^309 above.
            (&d309, false, true),
            (&d310, false, false),
            (&d100k, false, false),
        ];
        for (text, integer, number) in cases {
            let shown = &text[..text.len().min(24)];
            let raw = ArgValue::Raw(Cow::Borrowed(text));
            let read = ArgValue::Value(serde_json::from_str(text).unwrap());
            assert_eq!(raw.is_i64_integer(), integer, "{shown} as integer, raw");
            assert_eq!(read.is_i64_integer(), integer, "{shown} as integer, read");
            assert_eq!(raw.is_f64_number(), number, "{shown} as number, raw");
            assert_eq!(read.is_f64_number(), number, "{shown} as number, read");
        }
    }

    #[test]
    fn multi_line_values_are_written_on_one_line() {
        let args = Args::from_text("{\"a\": [1,\n 2]}").unwrap();
        assert_eq!(args.to_json_string(), r#"{"a":[1,2]}"#);
    }
}

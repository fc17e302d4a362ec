//! W3C trace context as a `traceparent` value carries it: read from `TRACEPARENT` and from an
//! MCP request's `params._meta`, written into the request passed on to the server.

/// A span's place in a trace: which trace, which span, and whether it was sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ids {
    /// 16 bytes, never all zero.
    pub trace: [u8; 16],
    /// 8 bytes, never all zero.
    pub span: [u8; 8],
    /// The `sampled` flag.
    pub sampled: bool,
}

impl Ids {
    /// Reads a `traceparent` value (`00-<32 hex>-<16 hex>-<2 hex>`). A later version may
    /// append fields after the flags (the W3C rule); version `ff`, all-zero ids, upper-case
    /// hex and any other shape are refused, as the recommendation says to.
    pub fn parse(text: &str) -> Option<Ids> {
        let text = text.trim();
        let mut parts = text.split('-');
        let version = parts.next()?;
        let trace = parts.next()?;
        let span = parts.next()?;
        let flags = parts.next()?;
        let rest = parts.next();
        if version.len() != 2 || version == "ff" || (version == "00" && rest.is_some()) {
            return None;
        }
        hex::<1>(version)?;
        let ids = Ids {
            trace: hex::<16>(trace)?,
            span: hex::<8>(span)?,
            sampled: hex::<1>(flags)?[0] & 1 == 1,
        };
        if ids.trace == [0; 16] || ids.span == [0; 8] {
            return None;
        }
        Some(ids)
    }

    /// The `traceparent` value naming this span as the parent.
    pub fn traceparent(&self) -> String {
        let mut out = String::with_capacity(55);
        out.push_str("00-");
        push_hex(&self.trace, &mut out);
        out.push('-');
        push_hex(&self.span, &mut out);
        out.push_str(if self.sampled { "-01" } else { "-00" });
        out
    }
}

fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    fn digit(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    let bytes = text.as_bytes();
    if bytes.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

fn push_hex(bytes: &[u8], out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_round_trips_and_refuses_what_the_recommendation_refuses() {
        let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let ids = Ids::parse(text).expect("valid");
        assert!(ids.sampled);
        assert_eq!(ids.traceparent(), text);
        assert_eq!(
            Ids::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-later")
                .map(|i| i.sampled),
            Some(false)
        );
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(Ids::parse(bad), None, "{bad}");
        }
    }
}

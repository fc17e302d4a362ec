//! How sure a recommendation is, and how much it matters.
//!
//! A recommendation rests on `n` pieces of evidence among `of` chances for them (its tool's
//! calls, outcomes or pairs, by kind). Its confidence is
//!
//! ```text
//! confidence = min(1, wilson_lower(n, of) / full_rate)
//! ```
//!
//! where `wilson_lower` is the lower bound of the 95% Wilson score interval of the rate
//! `n / of`: the rate the evidence shows with near certainty. It grows with the evidence *and*
//! with the volume behind it (2 of 2 is less sure than 40 of 40; 14 of 294 is a small rate
//! whatever its count), and `full_rate` is the rate at which the kind is certain. Severity,
//! which orders a report, is confidence × the kind's weight.

/// z for a two-sided 95% interval.
const Z: f64 = 1.96;

/// The lower bound of the 95% Wilson score interval of `n` successes in `of` trials (0 when
/// there are no trials). `n` above `of` counts as `of`.
fn wilson_lower(n: f64, of: f64) -> f64 {
    if of <= 0.0 || n <= 0.0 {
        return 0.0;
    }
    let n = n.min(of);
    let p = n / of;
    let z2 = Z * Z;
    let centre = p + z2 / (2.0 * of);
    let spread = Z * (p * (1.0 - p) / of + z2 / (4.0 * of * of)).sqrt();
    ((centre - spread) / (1.0 + z2 / of)).max(0.0)
}

/// What each kind rests on, the rate at which it is certain, and how much it weighs in a
/// report's order.
#[derive(Debug, Clone, Copy, PartialEq)]
struct KindScale {
    kind: &'static str,
    /// What `n` counts, and what `of` counts (for the documentation and `counts`).
    evidence: &'static str,
    out_of: &'static str,
    full_rate: f64,
    weight: f64,
}

/// Every kind, most severe first (the kinds docs/evaluate.md lists).
const SCALES: [KindScale; 9] = [
    KindScale {
        kind: "change_point",
        evidence: "events after the change (confidence: 1 − p × tests, Fisher's exact test)",
        out_of: "trials after the change",
        full_rate: 1.0,
        weight: 1.0,
    },
    KindScale {
        kind: "fix_caller",
        evidence: "the caller's failures",
        out_of: "the caller's judged outcomes",
        full_rate: 0.75,
        weight: 0.95,
    },
    KindScale {
        kind: "demote",
        evidence: "failures (or low-utility signals)",
        out_of: "judged outcomes",
        full_rate: 0.75,
        weight: 1.0,
    },
    KindScale {
        kind: "sharpen_descriptions",
        evidence: "referrals followed by the other tool's success",
        out_of: "calls",
        full_rate: 0.25,
        weight: 0.85,
    },
    KindScale {
        kind: "split_boundary",
        evidence: "weighted boundary referrals",
        out_of: "calls",
        full_rate: 0.5,
        weight: 0.9,
    },
    KindScale {
        kind: "tighten_acceptance",
        evidence: "low-utility referrals and user corrections",
        out_of: "calls",
        full_rate: 0.5,
        weight: 0.8,
    },
    KindScale {
        kind: "review_schema",
        evidence: "rejections naming the argument",
        out_of: "gate calls",
        full_rate: 0.5,
        weight: 0.7,
    },
    KindScale {
        kind: "deprecate_alias",
        evidence: "rejected or failed calls of the method",
        out_of: "calls of the method",
        full_rate: 0.75,
        weight: 0.6,
    },
    KindScale {
        kind: "learn_alias",
        evidence: "pairs unknown → declared",
        out_of: "pairs of the unknown name",
        full_rate: 0.75,
        weight: 0.5,
    },
];

/// The scale of `kind` (an unknown kind weighs least and is certain at a rate of 1).
fn scale(kind: &str) -> KindScale {
    SCALES
        .iter()
        .copied()
        .find(|s| s.kind == kind)
        .unwrap_or(KindScale {
            kind: "unknown",
            evidence: "",
            out_of: "",
            full_rate: 1.0,
            weight: 0.1,
        })
}

/// `min(1, wilson_lower(n, of) / full_rate)`, rounded to two decimals.
pub(crate) fn confidence(kind: &str, n: f64, of: f64) -> f64 {
    let full = scale(kind).full_rate;
    super::round2((wilson_lower(n, of) / full).clamp(0.0, 1.0))
}

/// Confidence × the kind's weight: what orders a report, most severe first.
pub fn severity(kind: &str, confidence: f64) -> f64 {
    super::round2(confidence * scale(kind).weight)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lower_bound_grows_with_evidence_and_with_volume() {
        assert_eq!(wilson_lower(0.0, 10.0), 0.0);
        assert_eq!(wilson_lower(3.0, 0.0), 0.0);
        let four = wilson_lower(4.0, 4.0);
        let forty = wilson_lower(40.0, 40.0);
        assert!(four < forty && forty < 1.0, "{four} {forty}");
        // The rate matters, not the count: 14 of 294 is a small rate.
        assert!(wilson_lower(14.0, 294.0) < 0.05);
        assert!(wilson_lower(57.0, 130.0) > 0.35);
        // More than `of` is read as `of`.
        assert_eq!(wilson_lower(9.0, 3.0), wilson_lower(3.0, 3.0));
    }

    #[test]
    fn confidence_is_bounded_and_scaled_by_kind() {
        assert_eq!(confidence("tighten_acceptance", 14.0, 294.0), 0.06);
        assert_eq!(confidence("tighten_acceptance", 40.0, 40.0), 1.0);
        assert!(confidence("tighten_acceptance", 2.0, 2.0) < 0.7);
        assert!(confidence("demote", 38.0, 48.0) > 0.8);
        assert!(severity("demote", 0.5) > severity("learn_alias", 0.5));
        assert_eq!(severity("nonsense", 1.0), 0.1);
    }
}

//! Change points: when a rate (a tool's failures among its judged outcomes, its low-utility
//! signals among its calls) moved within the window, from what to what, and how sure that is.
//!
//! The test is **Fisher's exact test**, one-sided, on the 2×2 table of events and non-events
//! before and after a split: conditional on the events of both sides, the events after the
//! split are hypergeometric under "nothing changed". It is exact at any volume (no normal
//! approximation that fails for a rare tool's three calls, no prior to argue about), and it
//! accounts for the uncertainty of *both* sides: a baseline of 40 calls proves less than one of
//! 4,000, so the same jump needs more evidence against it. Where the split falls is searched
//! hour by hour (the split that explains the data best, by the likelihood ratio), then the
//! segment after it is searched again for a later change, [`MAX_DEPTH`] levels deep; the last
//! change found is the tool's current regime.
//!
//! The false-alarm rate is stated per night: a run raises a change where nothing changed with
//! a chance of at most `false_alarm_rate` (default 1%), split by Bonferroni over every test it
//! could make ([`Family`]: series × hours of the window × two directions × levels). A test is
//! significant when its p-value is at most that share; its confidence is `1 − p × tests`.

/// How many times the segment after a change is searched for a later one.
pub const MAX_DEPTH: usize = 3;

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, nine terms: 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

fn ln_choose(n: u64, k: u64) -> f64 {
    if k > n {
        return f64::NEG_INFINITY;
    }
    ln_gamma(n as f64 + 1.0) - ln_gamma(k as f64 + 1.0) - ln_gamma((n - k) as f64 + 1.0)
}

/// The chance, with nothing changed, of at least `a` events among `na` trials after a split
/// when `b` of `nb` fell before it (`worse`), or of at most `a` (`!worse`): Fisher's exact
/// test, one-sided.
pub fn fisher(a: u64, na: u64, b: u64, nb: u64, worse: bool) -> f64 {
    let (a, b) = (a.min(na), b.min(nb));
    let n = na + nb;
    let k = a + b;
    if na == 0 || nb == 0 || n == 0 {
        return 1.0;
    }
    let lo = k.saturating_sub(nb);
    let hi = k.min(na);
    let ln_total = ln_choose(n, na);
    let ln_pmf = |x: u64| ln_choose(k, x) + ln_choose(n - k, na - x) - ln_total;
    // Summed from `a` away from the centre, the ratio of one term to the next by recurrence:
    // each term costs a few operations, and the sum stops once the terms no longer count.
    let mut term = ln_pmf(a).exp();
    let mut sum = term;
    let mut x = a;
    loop {
        let next = if worse {
            if x >= hi {
                break;
            }
            // pmf(x+1)/pmf(x) = (k−x)(na−x) / ((x+1)(n−k−na+x+1))
            let r = ((k - x) as f64 * (na - x) as f64) / ((x + 1) as f64 * (nb + x + 1 - k) as f64);
            x += 1;
            term * r
        } else {
            if x <= lo {
                break;
            }
            // pmf(x−1)/pmf(x) = x(n−k−na+x) / ((k−x+1)(na−x+1))
            let r = (x as f64 * (nb + x - k) as f64) / ((k - x + 1) as f64 * (na - x + 1) as f64);
            x -= 1;
            term * r
        };
        term = next;
        sum += term;
        if term < sum * 1e-17 {
            break;
        }
    }
    sum.clamp(0.0, 1.0)
}

/// How many tests a run makes, for the Bonferroni split of its false-alarm rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Family {
    /// The false-alarm rate of the whole run.
    pub rate: f64,
    /// How many tests it is split over.
    pub tests: f64,
}

impl Family {
    /// `series` series over a window of `hours` hours, each searched both ways [`MAX_DEPTH`]
    /// levels deep.
    pub fn new(rate: f64, series: usize, hours: i64) -> Family {
        let tests = (series.max(1) as f64) * (hours.max(1) as f64) * 2.0 * MAX_DEPTH as f64;
        Family { rate, tests }
    }

    /// Whether a p-value is significant within the family.
    pub fn significant(&self, p: f64) -> bool {
        p * self.tests <= self.rate
    }

    /// How sure a change is: `1 − p × tests`, in [0, 1].
    pub fn confidence(&self, p: f64) -> f64 {
        (1.0 - p * self.tests).clamp(0.0, 1.0)
    }
}

/// A change of a rate: from the hour `at_ms` on, `after` (events, trials) against `before`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// The first hour after the change (its start, ms since the epoch).
    pub at_ms: i64,
    /// Events and trials from the previous change (or the window's start) to this one.
    pub before: [u64; 2],
    /// Events and trials from this change to the window's end.
    pub after: [u64; 2],
    /// Whether the rate rose.
    pub worse: bool,
    /// The one-sided p-value of the split.
    pub p: f64,
}

impl Shift {
    /// The rate before the change.
    pub fn rate_before(&self) -> f64 {
        rate(self.before)
    }

    /// The rate after it.
    pub fn rate_after(&self) -> f64 {
        rate(self.after)
    }
}

fn rate(kn: [u64; 2]) -> f64 {
    if kn[1] == 0 {
        0.0
    } else {
        kn[0].min(kn[1]) as f64 / kn[1] as f64
    }
}

/// `k ln(k/n) + (n−k) ln(1−k/n)`: the binomial log-likelihood at its best rate.
fn log_lik(k: u64, n: u64) -> f64 {
    let k = k.min(n);
    let part = |x: u64| {
        if x == 0 {
            0.0
        } else {
            x as f64 * (x as f64 / n as f64).ln()
        }
    };
    if n == 0 { 0.0 } else { part(k) + part(n - k) }
}

/// The last significant change of a rate over `points` (hour start, events, trials; in
/// time order), or none.
pub fn last_shift(points: &[(i64, u64, u64)], family: &Family) -> Option<Shift> {
    let mut last = None;
    let mut from = 0;
    for _ in 0..MAX_DEPTH {
        let Some((i, shift)) = best_split(&points[from..], family) else {
            break;
        };
        last = Some(shift);
        from += i;
    }
    last
}

/// The split of `points` the likelihood ratio favours, when it is significant: its index (the
/// first point after it) and the change.
fn best_split(points: &[(i64, u64, u64)], family: &Family) -> Option<(usize, Shift)> {
    if points.len() < 2 {
        return None;
    }
    let total_k: u64 = points.iter().map(|p| p.1.min(p.2)).sum();
    let total_n: u64 = points.iter().map(|p| p.2).sum();
    let whole = log_lik(total_k, total_n);
    let (mut k1, mut n1) = (0u64, 0u64);
    let mut best: Option<(f64, usize)> = None;
    for (i, p) in points.iter().enumerate().take(points.len() - 1) {
        k1 += p.1.min(p.2);
        n1 += p.2;
        let (k2, n2) = (total_k - k1, total_n - n1);
        if n1 == 0 || n2 == 0 {
            continue;
        }
        let g = log_lik(k1, n1) + log_lik(k2, n2) - whole;
        if best.is_none_or(|(b, _)| g > b + 1e-12) {
            best = Some((g, i + 1));
        }
    }
    let (_, i) = best?;
    let before_k: u64 = points[..i].iter().map(|p| p.1.min(p.2)).sum();
    let before_n: u64 = points[..i].iter().map(|p| p.2).sum();
    let (after_k, after_n) = (total_k - before_k, total_n - before_n);
    let worse = after_k as f64 * before_n as f64 > before_k as f64 * after_n as f64;
    let p = fisher(after_k, after_n, before_k, before_n, worse);
    family.significant(p).then(|| {
        (
            i,
            Shift {
                at_ms: points[i].0,
                before: [before_k, before_n],
                after: [after_k, after_n],
                worse,
                p,
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut f = 1.0f64;
        for n in 1..30u32 {
            f *= n as f64;
            assert!((ln_gamma(n as f64 + 1.0) - f.ln()).abs() < 1e-9, "{n}");
        }
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }

    #[test]
    fn fisher_matches_the_hypergeometric_tail_summed_directly() {
        // 1 of 10 before, 6 of 10 after: the classic tea-tasting shape.
        let direct = |a: u64, na: u64, b: u64, nb: u64| {
            let (n, k) = (na + nb, a + b);
            (a..=k.min(na))
                .map(|x| (ln_choose(k, x) + ln_choose(n - k, na - x) - ln_choose(n, na)).exp())
                .sum::<f64>()
        };
        for (a, na, b, nb) in [
            (6, 10, 1, 10),
            (3, 3, 0, 50),
            (0, 5, 0, 5),
            (40, 400, 8, 4000),
        ] {
            let p = fisher(a, na, b, nb, true);
            let d = direct(a, na, b, nb);
            assert!(
                (p - d).abs() < 1e-9 * d.max(1e-300) + 1e-15,
                "{a}/{na} {b}/{nb}: {p} {d}"
            );
        }
        // Nothing happened: the whole distribution.
        assert!((fisher(0, 5, 0, 5, true) - 1.0).abs() < 1e-12);
        // The two tails of a table overlap in its own term: they add up to 1 plus it.
        let (up, down) = (fisher(3, 20, 5, 30, true), fisher(3, 20, 5, 30, false));
        assert!(up + down > 1.0 && up + down < 1.5);
        // Too little evidence: three failures of three after none of twelve is no proof at 1%.
        assert!(fisher(3, 3, 0, 12, true) > 1e-3);
    }

    /// The stated false-alarm rate holds: a rate that never changed raises a change in at
    /// most about 1% of the nights, over many simulated nights of varied volume.
    #[test]
    fn nothing_changed_raises_within_the_stated_rate() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let family = Family::new(0.01, 1, 168);
        let nights = 600;
        let mut alarms = 0;
        for night in 0..nights {
            let rate = [0.01, 0.05, 0.2][night % 3];
            let volume = [1u64, 5, 40][(night / 3) % 3];
            let points: Vec<(i64, u64, u64)> = (0..168)
                .map(|h| {
                    let k = (0..volume).filter(|_| next() < rate).count() as u64;
                    (h * 3_600_000, k, volume)
                })
                .collect();
            alarms += usize::from(last_shift(&points, &family).is_some());
        }
        assert!(alarms <= nights / 50, "{alarms} of {nights}");
    }

    #[test]
    fn a_step_is_found_where_it_happened_and_a_fix_after_it() {
        let family = Family::new(0.01, 40, 168);
        let h = 3_600_000;
        // 2% for six days, then 40% from hour 150.
        let points: Vec<(i64, u64, u64)> = (0..168)
            .map(|i| {
                let (k, n) = if i < 150 {
                    (u64::from(i % 12 == 0), 6)
                } else {
                    (2, 5)
                };
                (i * h, k, n)
            })
            .collect();
        let s = last_shift(&points, &family).unwrap();
        assert!(s.worse);
        assert_eq!(s.at_ms, 150 * h);
        assert!(s.rate_before() < 0.05 && s.rate_after() > 0.35, "{s:?}");
        // The same, fixed at hour 160: the last change is the fix.
        let fixed: Vec<(i64, u64, u64)> = points
            .iter()
            .map(|&(t, k, n)| if t >= 160 * h { (t, 0, 8) } else { (t, k, n) })
            .collect();
        let s = last_shift(&fixed, &family).unwrap();
        assert!(!s.worse, "{s:?}");
        assert_eq!(s.at_ms, 160 * h);
        // A rare tool: two failures of two after none of ten proves nothing.
        let rare = [(0, 0, 5), (h, 0, 5), (2 * h, 2, 2)];
        assert_eq!(last_shift(&rare, &family), None);
    }
}

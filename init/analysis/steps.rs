//! Change points of a series counted by the icount meter: exact steps.
//! A kernel's figure repeats to within 0.05% from boot to boot under
//! icount, so a night that moved by more than the threshold moved, whatever
//! came before it; no test over many results is needed, and none may hide a
//! step behind a later one (a staircase). E-divisive (`changepoint`) stays
//! for the time meter, whose nights scatter by several percent.
//!
//! The rule, for consecutive results a, b, c of a series:
//! - a step at b: b differs from a by more than the threshold, and c (when
//!   there is one) differs from a by more than the threshold the same way;
//!   a c that does not is a return, b a one-night excursion, left out (the
//!   next result is measured against a again);
//! - a drift at b: b is within the threshold of a, but differs by more than
//!   it from the first result after the last change point (or the first of
//!   the series), confirmed by c in the same way: steps each under the
//!   threshold that add up to more. A drift that goes on is reported again
//!   each time it adds up to the threshold anew;
//! - a step or drift at the last result is `pending`: it shows, and is
//!   confirmed or dropped by the next result.
//!
//! A confirmed change point depends on three results that later nights do
//! not change, so a history never loses one it reported.

use trig_schema::stats;

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Index of the first point after the change.
    pub index: usize,
    /// The point it is measured from: the one before a step, the first of
    /// the level a drift left.
    pub from: usize,
    /// Medians of the segments before and after, up to the neighbouring
    /// change points.
    pub before: f64,
    pub after: f64,
    /// after / before - 1, in percent, and the range of every figure's
    /// ratio across the two segments.
    pub change_pct: f64,
    pub range_pct: (f64, f64),
    /// The last point, not yet confirmed by a next one.
    pub pending: bool,
    /// Steps each under the threshold that added up to more.
    pub drift: bool,
}

/// The smallest step: relative (0.0025 for 0.25%), or absolute for exact
/// counts that may be zero (traps per event: 0 to 1 is a step).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    Relative(f64),
    Absolute(f64),
}

/// The direction in which `b` differs from `a` by more than `threshold`,
/// if it does.
fn beyond(a: f64, b: f64, threshold: Threshold) -> Option<bool> {
    match threshold {
        Threshold::Relative(t) => {
            let rel = b / a - 1.0;
            (a != 0.0 && rel.abs() > t).then_some(rel > 0.0)
        }
        Threshold::Absolute(t) => ((b - a).abs() >= t).then_some(b > a),
    }
}

/// The change points of `x` at `threshold`, in order. `open` says
/// whether later results may still extend `x`; when not (a break
/// follows), a change at its last point needs no confirmation.
pub fn detect(x: &[f64], threshold: Threshold, open: bool) -> Vec<Step> {
    // (index, from, pending, drift)
    let mut found: Vec<(usize, usize, bool, bool)> = Vec::new();
    // the last point that was not an excursion, and the first of the level
    let (mut prev, mut level) = (0, 0);
    for i in 1..x.len() {
        let (from, up, drift) = match (
            beyond(x[prev], x[i], threshold),
            beyond(x[level], x[i], threshold),
        ) {
            (Some(up), _) => (prev, up, false),
            (None, Some(up)) => (level, up, true),
            (None, None) => {
                prev = i;
                continue;
            }
        };
        let confirmed = x
            .get(i + 1)
            .map(|&next| beyond(x[from], next, threshold) == Some(up));
        if confirmed == Some(false) {
            continue;
        }
        found.push((i, from, confirmed.is_none() && open, drift));
        (prev, level) = (i, i);
    }
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(found.iter().map(|f| f.0))
        .chain(std::iter::once(x.len()))
        .collect();
    found
        .iter()
        .enumerate()
        .map(|(k, &(index, from, pending, drift))| {
            let (before, after) = (&x[bounds[k]..index], &x[index..bounds[k + 2]]);
            let (b, a) = (stats::median(before), stats::median(after));
            // the lowest after over the highest before, and the other way
            let (top, bottom) = (fold(before, f64::max), fold(before, f64::min));
            Step {
                index,
                from,
                before: b,
                after: a,
                change_pct: (a / b - 1.0) * 100.0,
                range_pct: (
                    (fold(after, f64::min) / top - 1.0) * 100.0,
                    (fold(after, f64::max) / bottom - 1.0) * 100.0,
                ),
                pending,
                drift,
            }
        })
        .collect()
}

fn fold(x: &[f64], f: fn(f64, f64) -> f64) -> f64 {
    x.iter().copied().reduce(f).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Threshold = Threshold::Relative(0.0025);

    fn at(x: &[f64], open: bool) -> Vec<(usize, bool, bool)> {
        detect(x, T, open)
            .iter()
            .map(|s| (s.index, s.pending, s.drift))
            .collect()
    }

    #[test]
    fn a_step_after_any_history_is_found_where_it_is() {
        let mut x = vec![1.0; 25];
        x.extend([0.99; 2]);
        x.extend([0.975; 2]);
        assert_eq!(at(&x, true), vec![(25, false, false), (27, false, false)]);
        let s = &detect(&x, T, true)[1];
        assert_eq!(s.from, 26);
        assert!((s.change_pct + 1.515).abs() < 0.01, "{s:?}");
        assert!(s.range_pct.0 <= s.change_pct && s.change_pct <= s.range_pct.1);
    }

    #[test]
    fn the_newest_step_is_pending_until_the_next_result() {
        let x = [1.0, 1.0, 1.0, 0.99];
        assert_eq!(at(&x, true), vec![(3, true, false)]);
        // a break follows: nothing will confirm it
        assert_eq!(at(&x, false), vec![(3, false, false)]);
        // confirmed, or an excursion that the next result returns from
        assert_eq!(
            at(&[1.0, 1.0, 1.0, 0.99, 0.99], true),
            vec![(3, false, false)]
        );
        assert!(at(&[1.0, 1.0, 1.0, 0.99, 1.0, 1.0], true).is_empty());
    }

    #[test]
    fn noise_under_the_threshold_is_no_step() {
        let mut rng = fastrand::Rng::with_seed(5);
        let x: Vec<f64> = (0..200)
            .map(|_| 1.0 + 0.0005 * (rng.f64() * 2.0 - 1.0))
            .collect();
        assert!(at(&x, true).is_empty());
    }

    #[test]
    fn small_steps_that_add_up_are_a_drift() {
        // 0.1% a night: each step under 0.25%, 0.3% after three
        let x: Vec<f64> = (0..10usize)
            .map(|i| 1.0 - 0.001 * i.saturating_sub(4) as f64)
            .collect();
        let found = detect(&x, T, true);
        let at: Vec<(usize, usize, bool)> =
            found.iter().map(|s| (s.index, s.from, s.drift)).collect();
        assert_eq!(at, vec![(7, 0, true)], "{found:?}");
    }

    #[test]
    fn an_entry_count_steps_from_none_on_an_absolute_threshold() {
        // no relative change from none
        assert!(detect(&[0.0, 0.0, 1.0002, 1.0], T, false).is_empty());
        let traps = [0.0, 0.0001, 0.0, 1.0002, 1.0];
        let steps = detect(&traps, Threshold::Absolute(0.5), false);
        assert_eq!(steps.len(), 1, "{steps:?}");
        assert_eq!((steps[0].index, steps[0].from), (3, 2));
        // what lands in a window by chance is no step
        assert!(detect(&[0.0003, 0.0006, 0.0004], Threshold::Absolute(0.5), false).is_empty());
    }
}

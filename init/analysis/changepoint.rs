//! Change points in a series: E-divisive means (Matteson and James, "A
//! Nonparametric Approach for Multiple Change Point Analysis of
//! Multivariate Data", 2014), the method behind MongoDB's signal
//! processing and Apache Otava (Hunter). Splits are found one at a time
//! where the energy distance between the two sides peaks, kept when a
//! permutation test finds the peak significant, and then only when the
//! series really steps there: a slow drift also makes the two halves
//! differ, but a line fitted to each side meets the other at the split.

use trig_schema::stats;

#[derive(Debug, Clone)]
pub struct Detection {
    /// Significance level of the permutation test.
    pub alpha: f64,
    /// Smallest step, relative to the level before it, that is reported.
    pub min_change: f64,
    /// Smallest step of an entry count (traps, syscalls, interrupts per
    /// event), absolute: exact counts, often from none.
    pub min_entries: f64,
    /// Permutations per test.
    pub permutations: usize,
    /// Fewest points on each side of a split.
    pub min_size: usize,
    pub seed: u64,
}

impl Default for Detection {
    fn default() -> Self {
        Detection {
            alpha: 0.01,
            min_change: 0.05,
            min_entries: crate::assessment::DEFAULT_THRESHOLD_ENTRIES,
            permutations: 999,
            min_size: 3,
            seed: 0x7419,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// Index of the first point after the change.
    pub index: usize,
    pub p: f64,
    /// Medians of the segments before and after, up to the neighbouring
    /// change points.
    pub before: f64,
    pub after: f64,
    /// after / before - 1, in percent, with a bootstrap interval.
    pub change_pct: f64,
    pub ci_pct: (f64, f64),
}

/// The fewest points in which any change point can be found: even a step
/// that sets the last `min_size` points perfectly apart from the rest is
/// matched by 2 of the C(n, min_size) orders a permutation can take (the
/// same points at that end or at the other), so its p cannot fall below
/// 2 / C(n, min_size), and must fall below alpha.
pub fn min_points(s: &Detection) -> usize {
    let m = s.min_size.max(1);
    let orders = |n: usize| (1..=m).fold(1.0, |c, i| c * (n - m + i) as f64 / i as f64);
    (2 * m..100_000)
        .find(|&n| 2.0 / orders(n) < s.alpha)
        .unwrap_or(100_000)
}

/// The split of `x` with the largest energy statistic Q, and Q. The
/// distance sums move one point from the right side to the left per
/// split, so the scan is O(n^2).
fn best_split(x: &[f64], min_size: usize) -> Option<(usize, f64)> {
    let n = x.len();
    if n < 2 * min_size || min_size == 0 {
        return None;
    }
    let d = |i: usize, j: usize| (x[i] - x[j]).abs();
    // sums of |x_i - x_j| within the left [0, tau), within the right
    // [tau, n), and between them, starting at tau = 0
    let (mut left, mut between) = (0.0, 0.0);
    let mut right: f64 = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .map(|(i, j)| d(i, j))
        .sum();
    let mut best: Option<(usize, f64)> = None;
    for tau in 1..=n - min_size {
        // point tau - 1 moves from the right side to the left
        let p = tau - 1;
        let to_left: f64 = (0..p).map(|i| d(i, p)).sum();
        let to_right: f64 = (tau..n).map(|j| d(p, j)).sum();
        left += to_left;
        right -= to_right;
        between += to_right - to_left;
        if tau < min_size {
            continue;
        }
        let (m, k) = (tau as f64, (n - tau) as f64);
        let mean_within = |sum: f64, size: f64| {
            if size < 2.0 {
                0.0
            } else {
                sum / (size * (size - 1.0) / 2.0)
            }
        };
        let e = 2.0 * between / (m * k) - mean_within(left, m) - mean_within(right, k);
        let q = m * k / (m + k) * e;
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((tau, q));
        }
    }
    best
}

/// Least-squares line through (first + i, y_i): its value at `at`, and
/// that value's variance.
fn line_at(y: &[f64], first: f64, at: f64) -> (f64, f64) {
    let n = y.len() as f64;
    let xs: Vec<f64> = (0..y.len()).map(|i| first + i as f64).collect();
    let (mx, my) = (stats::mean(&xs), stats::mean(y));
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let sxy: f64 = xs.iter().zip(y).map(|(x, y)| (x - mx) * (y - my)).sum();
    let slope = if sxx == 0.0 { 0.0 } else { sxy / sxx };
    let rss: f64 = xs
        .iter()
        .zip(y)
        .map(|(x, y)| (y - my - slope * (x - mx)).powi(2))
        .sum();
    let s2 = if n > 2.0 { rss / (n - 2.0) } else { 0.0 };
    let var = s2
        * (1.0 / n
            + if sxx == 0.0 {
                0.0
            } else {
                (at - mx).powi(2) / sxx
            });
    (my + slope * (at - mx), var)
}

/// The jump at `tau` between lines fitted to each side, relative to the
/// left side's level there, and whether it stands out of the fits' noise
/// (three standard errors, as the split is where the data jump most):
/// a drift has none, a step has one.
fn jump(x: &[f64], tau: usize) -> (f64, bool) {
    let at = tau as f64 - 0.5;
    let (left, vl) = line_at(&x[..tau], 0.0, at);
    let (right, vr) = line_at(&x[tau..], tau as f64, at);
    if left == 0.0 {
        return (0.0, false);
    }
    let d = right - left;
    (d / left.abs(), d.abs() > 3.0 * (vl + vr).sqrt())
}

/// Finds the change points of `x`, in order of position.
pub fn detect(x: &[f64], s: &Detection) -> Vec<ChangePoint> {
    let mut rng = fastrand::Rng::with_seed(s.seed);
    // segments still to examine, as [lo, hi)
    let mut todo = vec![(0, x.len())];
    let mut splits: Vec<(usize, f64)> = Vec::new();
    while let Some((lo, hi)) = todo.pop() {
        let seg = &x[lo..hi];
        let Some((tau, q)) = best_split(seg, s.min_size) else {
            continue;
        };
        let mut shuffled = seg.to_vec();
        let exceed = (0..s.permutations)
            .filter(|_| {
                rng.shuffle(&mut shuffled);
                // the same split in another order sums its distances in
                // another order: a tie must not hide in the rounding
                best_split(&shuffled, s.min_size).is_some_and(|(_, qp)| qp >= q * (1.0 - 1e-9))
            })
            .count();
        let p = (exceed + 1) as f64 / (s.permutations + 1) as f64;
        let (step, clear) = jump(seg, tau);
        if p >= s.alpha || step.abs() < s.min_change || !clear {
            continue;
        }
        splits.push((lo + tau, p));
        todo.push((lo, lo + tau));
        todo.push((lo + tau, hi));
    }
    splits.sort_by_key(|(i, _)| *i);
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(splits.iter().map(|(i, _)| *i))
        .chain(std::iter::once(x.len()))
        .collect();
    splits
        .iter()
        .enumerate()
        .map(|(k, &(index, p))| {
            let before = &x[bounds[k]..index];
            let after = &x[index..bounds[k + 2]];
            let (b, a) = (stats::median(before), stats::median(after));
            let (lo, hi) = stats::bootstrap_ci(
                &[before, after],
                |d| stats::median(&d[1]) / stats::median(&d[0]),
                0.05,
                s.seed.wrapping_add(index as u64),
            );
            ChangePoint {
                index,
                p,
                before: b,
                after: a,
                change_pct: (a / b - 1.0) * 100.0,
                ci_pct: ((lo - 1.0) * 100.0, (hi - 1.0) * 100.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` values around `level` with relative noise `cv`, seeded.
    fn noisy(rng: &mut fastrand::Rng, n: usize, level: impl Fn(usize) -> f64, cv: f64) -> Vec<f64> {
        (0..n)
            .map(|i| {
                let (u1, u2) = (rng.f64().max(1e-300), rng.f64());
                level(i) * (1.0 + cv * stats::box_muller(u1, u2))
            })
            .collect()
    }

    #[test]
    fn a_step_is_found_where_it_is() {
        let mut rng = fastrand::Rng::with_seed(1);
        let x = noisy(&mut rng, 30, |i| if i < 17 { 2.0 } else { 1.7 }, 0.02);
        let cps = detect(&x, &Detection::default());
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert_eq!(cps[0].index, 17);
        assert!((cps[0].change_pct + 15.0).abs() < 3.0, "{cps:?}");
        let (lo, hi) = cps[0].ci_pct;
        assert!(lo <= cps[0].change_pct && cps[0].change_pct <= hi);
    }

    #[test]
    fn two_steps_are_both_found() {
        let mut rng = fastrand::Rng::with_seed(2);
        let level = |i: usize| match i {
            0..12 => 1.0,
            12..25 => 0.8,
            _ => 1.1,
        };
        let x = noisy(&mut rng, 36, level, 0.02);
        let at: Vec<usize> = detect(&x, &Detection::default())
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(at, vec![12, 25]);
    }

    #[test]
    fn noise_at_boot_to_boot_spread_has_no_change_point() {
        // the 6-33% spread between boots of one kernel under TCG
        for (seed, cv) in [(3, 0.06), (4, 0.15), (5, 0.33)] {
            let mut rng = fastrand::Rng::with_seed(seed);
            let x = noisy(&mut rng, 30, |_| 2.0, cv);
            let cps = detect(&x, &Detection::default());
            assert!(cps.is_empty(), "cv {cv}: {cps:?}");
        }
    }

    #[test]
    fn a_slow_drift_is_not_a_step() {
        let mut rng = fastrand::Rng::with_seed(6);
        let x = noisy(&mut rng, 40, |i| 1.0 + 0.3 * i as f64 / 40.0, 0.01);
        let cps = detect(&x, &Detection::default());
        assert!(cps.is_empty(), "{cps:?}");
    }

    #[test]
    fn min_points_is_where_a_clean_step_can_first_be_found() {
        let s = Detection::default();
        // C(12, 3) = 220 orders: p can reach 2/220 < 0.01; C(11, 3) = 165
        assert_eq!(min_points(&s), 12);
        let step = |n: usize| -> Vec<f64> {
            (0..n)
                .map(|i| if i + 3 < n { 2.0 } else { 1.0 } + 0.001 * (i % 3) as f64)
                .collect()
        };
        assert!(detect(&step(11), &s).is_empty());
        let at_20: Vec<usize> = detect(&step(20), &s).iter().map(|c| c.index).collect();
        assert_eq!(at_20, vec![17]);
        assert_eq!(min_points(&Detection { alpha: 0.05, ..s }), 8);
    }

    #[test]
    fn too_short_series_have_none() {
        assert!(detect(&[1.0, 2.0, 3.0], &Detection::default()).is_empty());
        assert!(detect(&[], &Detection::default()).is_empty());
    }

    /// How often, over 100 seeded series each: false alarms on noise and
    /// on drift, and a step found within one point of where it is.
    fn rate(
        seed: u64,
        n: usize,
        level: impl Fn(usize) -> f64,
        cv: f64,
        hit: impl Fn(&[ChangePoint]) -> bool,
    ) -> usize {
        (0..100)
            .filter(|k| {
                let mut rng = fastrand::Rng::with_seed(seed + k);
                let x = noisy(&mut rng, n, &level, cv);
                hit(&detect(
                    &x,
                    &Detection {
                        seed: *k,
                        ..Detection::default()
                    },
                ))
            })
            .count()
    }

    #[test]
    fn detection_rates() {
        let any = |c: &[ChangePoint]| !c.is_empty();
        for cv in [0.06, 0.15, 0.33] {
            let fp = rate(1000, 30, |_| 2.0, cv, any);
            trig_schema::stderrln!("pure noise, cv {cv}: {fp}/100 with a change point");
            assert!(fp <= 3, "noise cv {cv}: {fp}/100");
        }
        for cv in [0.01, 0.03, 0.06] {
            let fp = rate(2000, 40, |i| 1.0 + 0.3 * i as f64 / 40.0, cv, any);
            trig_schema::stderrln!(
                "30% linear drift over 40 points, cv {cv}: {fp}/100 with a change point"
            );
            assert!(fp <= 8, "drift cv {cv}: {fp}/100");
        }
        let near = |c: &[ChangePoint]| c.iter().any(|c| c.index.abs_diff(15) <= 1);
        for (step, cv, min) in [
            (0.1, 0.03, 85),
            (0.1, 0.06, 20),
            (0.2, 0.06, 90),
            (0.3, 0.15, 50),
        ] {
            let found = rate(
                3000,
                30,
                |i| if i < 15 { 2.0 } else { 2.0 * (1.0 - step) },
                cv,
                near,
            );
            trig_schema::stderrln!("{}% step, cv {cv}: found in {found}/100", step * 100.0);
            assert!(found >= min, "step {step} cv {cv}: {found}/100");
        }
    }
}

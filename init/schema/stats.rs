//! Statistics: upstream's per-second summary (mean, sample sd, CV) and the
//! tools `compare` and `history` judge with (median, bootstrap intervals,
//! rank tests, Welch's t).

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Arithmetic mean; 0 for no values.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance (n-1 in the denominator); 0 below two values.
pub fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Sample standard deviation; 0 below two values.
pub fn stddev(xs: &[f64]) -> f64 {
    variance(xs).sqrt()
}

/// stddev / mean; 0 when the mean is 0.
pub fn cv(xs: &[f64]) -> f64 {
    let m = mean(xs);
    if m == 0.0 {
        0.0
    } else {
        stddev(xs) / m.abs()
    }
}

/// What every list of figures is summed up by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub n: usize,
    pub mean: f64,
    pub stddev: f64,
    pub cv: f64,
    pub median: f64,
}

/// The count, [`mean`], [`stddev`], [`cv`] and [`median`] of `xs`.
pub fn summarize(xs: &[f64]) -> Spread {
    Spread {
        n: xs.len(),
        mean: mean(xs),
        stddev: stddev(xs),
        cv: cv(xs),
        median: median(xs),
    }
}

/// A standard normal draw from two uniform ones in (0, 1] and [0, 1)
/// (Box-Muller), for simulations with a seeded generator.
pub fn box_muller(u1: f64, u2: f64) -> f64 {
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// The median (mean of the middle two for an even count); NaN when empty.
pub fn median(xs: &[f64]) -> f64 {
    let v = sorted(xs);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The `q` quantile of sorted values, linear between neighbours.
fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Resamples drawn by the bootstrap; enough for stable 2.5% tails.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// Percentile bootstrap interval (level `1 - alpha`) of `estimate` over
/// resamples of `samples`, each drawn with replacement and the same size
/// as its original. The seed makes every report reproducible.
pub fn bootstrap_ci(
    samples: &[&[f64]],
    estimate: impl Fn(&[Vec<f64>]) -> f64,
    alpha: f64,
    seed: u64,
) -> (f64, f64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut stats: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            let draw: Vec<Vec<f64>> = samples
                .iter()
                .map(|s| (0..s.len()).map(|_| s[rng.usize(..s.len())]).collect())
                .collect();
            estimate(&draw)
        })
        .filter(|x| x.is_finite())
        .collect();
    if stats.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    stats.sort_by(f64::total_cmp);
    (
        quantile_sorted(&stats, alpha / 2.0),
        quantile_sorted(&stats, 1.0 - alpha / 2.0),
    )
}

/// Ranks from 1, ties given their average rank; also the tie-correction
/// sum of t^3 - t over tied groups.
fn ranks(xs: &[f64]) -> (Vec<f64>, f64) {
    let mut idx: Vec<usize> = (0..xs.len()).collect();
    idx.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut r = vec![0.0; xs.len()];
    let mut ties = 0.0;
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && xs[idx[j + 1]] == xs[idx[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            r[k] = avg;
        }
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    (r, ties)
}

fn normal_two_sided(z: f64) -> f64 {
    let n = Normal::standard();
    (2.0 * (1.0 - n.cdf(z.abs()))).min(1.0)
}

/// Below this many values per side, rank tests use their exact null
/// distributions (when there are no ties).
const EXACT_MAX: usize = 30;

/// A test's statistic and two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Test {
    pub statistic: f64,
    pub p: f64,
}

/// Mann-Whitney U test of `a` against `b`, two-sided. U is `a`'s statistic
/// (pairs with a > b, ties counting half). Exact for small samples without
/// ties, else the normal approximation with tie and continuity corrections.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Test {
    let (n1, n2) = (a.len(), b.len());
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let (r, ties) = ranks(&all);
    let r1: f64 = r[..n1].iter().sum();
    let u = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let (f1, f2) = (n1 as f64, n2 as f64);
    let p = if ties == 0.0 && n1 <= EXACT_MAX && n2 <= EXACT_MAX {
        // counts[k] = arrangements with U = k, built up one value at a time
        let counts = u_distribution(n1, n2);
        let total: f64 = counts.iter().sum();
        let lo = u.min(f1 * f2 - u).round() as usize;
        (2.0 * counts[..=lo].iter().sum::<f64>() / total).min(1.0)
    } else {
        let n = f1 + f2;
        let var = f1 * f2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
        let d = (u - f1 * f2 / 2.0).abs() - 0.5;
        if var <= 0.0 {
            1.0
        } else {
            normal_two_sided(d.max(0.0) / var.sqrt())
        }
    };
    Test { statistic: u, p }
}

/// The null distribution of U for sample sizes m and n, as counts.
fn u_distribution(m: usize, n: usize) -> Vec<f64> {
    // f[i][j] = counts over U for sizes i and j: the largest value is from
    // the first sample (adds j to U) or from the second (adds nothing).
    let mut f: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); n + 1]; m + 1];
    for i in 0..=m {
        for j in 0..=n {
            f[i][j] = if i == 0 || j == 0 {
                vec![1.0]
            } else {
                let mut v = vec![0.0; i * j + 1];
                for (k, c) in f[i - 1][j].iter().enumerate() {
                    v[k + j] += c;
                }
                for (k, c) in f[i][j - 1].iter().enumerate() {
                    v[k] += c;
                }
                v
            };
        }
    }
    std::mem::take(&mut f[m][n])
}

/// Wilcoxon signed-rank test of paired differences against zero,
/// two-sided; zero differences are dropped. The statistic is W+.
pub fn wilcoxon_signed_rank(diffs: &[f64]) -> Test {
    let d: Vec<f64> = diffs.iter().copied().filter(|x| *x != 0.0).collect();
    let n = d.len();
    if n == 0 {
        return Test {
            statistic: 0.0,
            p: 1.0,
        };
    }
    let abs: Vec<f64> = d.iter().map(|x| x.abs()).collect();
    let (r, ties) = ranks(&abs);
    let w_plus: f64 = r
        .iter()
        .zip(&d)
        .filter(|(_, x)| **x > 0.0)
        .map(|(r, _)| r)
        .sum();
    let nf = n as f64;
    let max = nf * (nf + 1.0) / 2.0;
    let p = if ties == 0.0 && n <= EXACT_MAX {
        // counts[s] = subsets of 1..=n whose ranks sum to s
        let mut counts = vec![0.0; max as usize + 1];
        counts[0] = 1.0;
        for k in 1..=n {
            for s in (k..counts.len()).rev() {
                counts[s] += counts[s - k];
            }
        }
        let total = 2f64.powi(n as i32);
        let lo = w_plus.min(max - w_plus).round() as usize;
        (2.0 * counts[..=lo].iter().sum::<f64>() / total).min(1.0)
    } else {
        let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - ties / 48.0;
        let d = (w_plus - max / 2.0).abs() - 0.5;
        if var <= 0.0 {
            1.0
        } else {
            normal_two_sided(d.max(0.0) / var.sqrt())
        }
    };
    Test {
        statistic: w_plus,
        p,
    }
}

/// The smallest two-sided p the exact Wilcoxon signed-rank test can give
/// with `n` pairs (all of them one way): below alpha, it can decide.
pub fn wilcoxon_min_p(n: usize) -> f64 {
    (2.0 / 2f64.powi(n.min(1000) as i32)).min(1.0)
}

/// The smallest two-sided p of the exact Mann-Whitney U test with sizes
/// `n1` and `n2` (the sides fully separated): 2 / C(n1 + n2, n1).
pub fn mann_whitney_min_p(n1: usize, n2: usize) -> f64 {
    let (k, n) = (n1.min(n2), n1 + n2);
    let arrangements = (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64);
    (2.0 / arrangements).min(1.0)
}

/// Welch's unequal-variance t-test, two-sided; p is 1 when either side
/// has fewer than two values or no spread.
pub fn welch(a: &[f64], b: &[f64]) -> Test {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let (v1, v2) = (variance(a) / n1, variance(b) / n2);
    if a.len() < 2 || b.len() < 2 || v1 + v2 == 0.0 {
        return Test {
            statistic: 0.0,
            p: 1.0,
        };
    }
    let t = (mean(a) - mean(b)) / (v1 + v2).sqrt();
    let df = (v1 + v2).powi(2) / (v1 * v1 / (n1 - 1.0) + v2 * v2 / (n2 - 1.0));
    // figures near f64's range overflow the variances: no evidence then
    match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) if t.is_finite() => Test {
            statistic: t,
            p: (2.0 * (1.0 - dist.cdf(t.abs()))).min(1.0),
        },
        _ => Test {
            statistic: t,
            p: 1.0,
        },
    }
}

/// Benjamini–Hochberg adjusted p-values (q-values) of a family of tests,
/// in the order given: q of the i-th smallest of m p-values is the least
/// p_(j) m / j over j >= i, at most 1. Deciding on q < alpha keeps the
/// expected share of false discoveries among those made at alpha, and the
/// chance of any when nothing changed at alpha.
pub fn benjamini_hochberg(ps: &[f64]) -> Vec<f64> {
    let m = ps.len() as f64;
    let mut order: Vec<usize> = (0..ps.len()).collect();
    order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
    let mut q = vec![1.0; ps.len()];
    let mut least = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        least = least.min(ps[i] * m / (rank + 1) as f64);
        q[i] = least;
    }
    q
}

#[cfg(test)]
mod tests {

    #[test]
    fn benjamini_hochberg_by_hand() {
        // sorted 0.01 0.02 0.03 0.04 0.20, m = 5: p m / rank = 0.05 0.05
        // 0.05 0.05 0.20; the 0.04 carries the three below it
        let q = benjamini_hochberg(&[0.04, 0.01, 0.20, 0.03, 0.02]);
        let want = [0.05, 0.05, 0.20, 0.05, 0.05];
        for (q, w) in q.iter().zip(want) {
            assert!((q - w).abs() < 1e-12, "{q} vs {w}");
        }
        // 0.001 0.012 0.014 0.5 0.9 1.0, m = 6: 0.006, 0.036, 0.028 (so
        // 0.028 for both), 0.75, 1.08 -> 1, 1.0
        let q = benjamini_hochberg(&[0.9, 0.012, 1.0, 0.001, 0.5, 0.014]);
        let want = [1.0, 0.028, 1.0, 0.006, 0.75, 0.028];
        for (q, w) in q.iter().zip(want) {
            assert!((q - w).abs() < 1e-12, "{q} vs {w}");
        }
        // a family of one is its own p; none is none
        assert_eq!(benjamini_hochberg(&[0.03]), vec![0.03]);
        assert!(benjamini_hochberg(&[]).is_empty());
    }

    #[test]
    fn smallest_reachable_p() {
        assert_eq!(wilcoxon_min_p(2), 0.5);
        assert!(wilcoxon_min_p(5) > 0.05 && wilcoxon_min_p(6) < 0.05);
        // 2 / C(8, 4) = 2 / 70
        assert!((mann_whitney_min_p(4, 4) - 2.0 / 70.0).abs() < 1e-12);
        assert!(mann_whitney_min_p(3, 3) > 0.05);
        assert_eq!(mann_whitney_min_p(1, 1), 1.0);
        assert!(
            mann_whitney_min_p(10_000, 10_000) < 1e-300
                || mann_whitney_min_p(10_000, 10_000) == 0.0
        );
    }
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn known_values() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), 5.0);
        // population sd is 2; sample sd is sqrt(32/7)
        assert!(close(stddev(&xs), (32.0f64 / 7.0).sqrt(), 1e-12));
        assert!(close(cv(&xs), (32.0f64 / 7.0).sqrt() / 5.0, 1e-12));
        assert_eq!(median(&xs), 4.5);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(mean(&[]), 0.0);
        assert_eq!(stddev(&[3.0]), 0.0);
        assert_eq!(cv(&[0.0, 0.0]), 0.0);
        assert!(median(&[]).is_nan());
        assert_eq!(welch(&[1.0], &[2.0, 3.0]).p, 1.0);
        assert_eq!(wilcoxon_signed_rank(&[0.0, 0.0]).p, 1.0);
    }

    #[test]
    fn mann_whitney_exact_small_samples() {
        // complete separation of 3 vs 3: U = 0 and p = 2/C(6,3) = 0.1
        let t = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert_eq!(t.statistic, 0.0);
        assert!(close(t.p, 0.1, 1e-12), "{t:?}");
        // 5 vs 5 separated: p = 2/252
        let t = mann_whitney(&[6.0, 7.0, 8.0, 9.0, 10.0], &[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(t.statistic, 25.0);
        assert!(close(t.p, 2.0 / 252.0, 1e-12), "{t:?}");
        // a textbook case: U = 3 for 4 vs 5 values, exact p = 0.1111
        let t = mann_whitney(&[1.1, 2.2, 3.3, 7.5], &[4.4, 5.5, 6.6, 8.8, 9.9]);
        assert_eq!(t.statistic, 3.0);
        assert!(close(t.p, 14.0 / 126.0, 1e-12), "{t:?}");
    }

    #[test]
    fn mann_whitney_with_ties_uses_normal_approximation() {
        let t = mann_whitney(&[1.0, 2.0, 2.0, 3.0], &[2.0, 4.0, 5.0, 6.0]);
        assert_eq!(t.statistic, 2.0);
        // scipy.stats.mannwhitneyu(a, b, method="asymptotic"): 0.10375
        assert!(close(t.p, 0.10375, 1e-4), "{t:?}");
    }

    #[test]
    fn wilcoxon_exact_and_normal() {
        // all 6 positive: p = 2/64
        let t = wilcoxon_signed_rank(&[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]);
        assert_eq!(t.statistic, 21.0);
        assert!(close(t.p, 2.0 / 64.0, 1e-12), "{t:?}");
        // mixed signs: W+ = 1+3+4+5 = 13 of 21 for n = 6; exact p = 0.6875
        let t = wilcoxon_signed_rank(&[-0.2, 0.1, 0.3, 0.4, 0.5, -0.6]);
        assert_eq!(t.statistic, 13.0);
        assert!(close(t.p, 0.6875, 1e-12), "{t:?}");
        // tied magnitudes: scipy.stats.wilcoxon(d, method="approx",
        // correction=True) gives W- = 5, p = 0.07969
        let t = wilcoxon_signed_rank(&[0.1, 0.2, 0.2, 0.4, -0.5, 0.6, 0.7, 0.8]);
        assert_eq!(t.statistic, 31.0);
        assert!(close(t.p, 0.07969, 1e-4), "{t:?}");
    }

    #[test]
    fn welch_known_value() {
        // scipy.stats.ttest_ind(a, b, equal_var=False): t = -2.0357, p = 0.05925
        let a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6];
        let b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2];
        let t = welch(&a, &b);
        assert!(close(t.statistic, -2.0357, 1e-4), "{t:?}");
        assert!(close(t.p, 0.05925, 1e-4), "{t:?}");
    }

    /// Normal draws by Box-Muller from a seeded generator.
    fn normal(rng: &mut fastrand::Rng, mu: f64, sd: f64) -> f64 {
        let (u1, u2) = (rng.f64().max(1e-300), rng.f64());
        mu + sd * box_muller(u1, u2)
    }

    #[test]
    fn bootstrap_interval_covers_the_truth() {
        // 200 synthetic comparisons of 8 runs each with a true median ratio
        // of 0.9; a 95% percentile interval should cover it most times
        // (percentile bootstraps run a little narrow at this size).
        let mut rng = fastrand::Rng::with_seed(42);
        let mut covered = 0;
        for i in 0..200 {
            let base: Vec<f64> = (0..8).map(|_| normal(&mut rng, 2.0, 0.1)).collect();
            let new: Vec<f64> = (0..8).map(|_| normal(&mut rng, 1.8, 0.09)).collect();
            let (lo, hi) = bootstrap_ci(&[&base, &new], |d| median(&d[1]) / median(&d[0]), 0.05, i);
            assert!(lo <= hi);
            covered += usize::from(lo <= 0.9 && 0.9 <= hi);
        }
        assert!((170..=200).contains(&covered), "covered {covered} of 200");
    }

    #[test]
    fn overflowing_variance_is_no_evidence() {
        let t = welch(&[1e300, 1.1e300, 0.9e300], &[1e300, 1.2e300, 0.8e300]);
        assert_eq!(t.p, 1.0);
    }

    mod fuzz {
        use super::super::*;
        use proptest::prelude::*;

        fn figures() -> impl Strategy<Value = Vec<f64>> {
            let extreme = prop_oneof![
                Just(1e300),
                Just(f64::MAX),
                Just(5e-324),
                Just(0.0),
                Just(-1.0),
                Just(f64::INFINITY),
                Just(f64::NAN),
                any::<f64>(),
                0.1f64..10.0,
            ];
            proptest::collection::vec(extreme, 0..12)
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(500))]
            #[test]
            fn statistics_never_panic(a in figures(), b in figures()) {
                let _ = (mean(&a), stddev(&a), cv(&a), median(&a));
                let _ = (mann_whitney(&a, &b), welch(&a, &b), wilcoxon_signed_rank(&a));
                if !a.is_empty() && !b.is_empty() {
                    let _ = bootstrap_ci(&[&a, &b], |d| median(&d[1]) / median(&d[0]), 0.05, 1);
                }
            }
        }
    }

    #[test]
    fn bootstrap_is_reproducible() {
        let a = [1.0, 2.0, 3.0, 4.0];
        let est = |d: &[Vec<f64>]| median(&d[0]);
        assert_eq!(
            bootstrap_ci(&[&a], est, 0.05, 7),
            bootstrap_ci(&[&a], est, 0.05, 7)
        );
    }
}

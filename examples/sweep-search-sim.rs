//! The search of `trig-init sweep next` on a simulated merge window:
//! `cargo run --release --example sweep-search-sim -- [COMMITS] [STEPS] [SEEDS]`
//! (default 12,000 commits, ten steps, 20 seeds). Each seed plants STEPS
//! steps, each in a benchmark of its own, at random commits; the figures
//! are exact (icount), so two commits differ where a step lies between
//! them. For 1, 4 and 16 runners it prints the rounds and boots the
//! search needed (the worst seed and the mean), after checking that it
//! found every step at its commit. scripts/bench/sweep-search-sim.sh holds the
//! targets.

// an example prints for a person at a terminal
#![allow(clippy::disallowed_macros)]

use std::collections::BTreeSet;
use trig_analysis::sweep::search::{next, Known};

/// Rounds and boots of one search, after checking its steps.
fn simulate(commits: usize, steps: &[usize], runners: usize) -> (usize, usize) {
    // a step at `at` (its first commit) of benchmark `k`
    let moved = |a: usize, b: usize| -> Result<BTreeSet<String>, trig_schema::error::Error> {
        Ok(steps
            .iter()
            .enumerate()
            .filter(|(_, &at)| a < at && at <= b)
            .map(|(k, _)| k.to_string())
            .collect())
    };
    let mut f = moved;
    let mut known = vec![Known::Untried; commits];
    let (mut rounds, mut boots) = (0, 0);
    loop {
        let ask = next(&known, runners, &mut f).expect("exact figures compare");
        if ask.is_empty() {
            break;
        }
        rounds += 1;
        boots += ask.len();
        for i in ask {
            known[i] = Known::Measured;
        }
    }
    let measured: Vec<usize> = (0..commits)
        .filter(|&i| known[i] == Known::Measured)
        .collect();
    let found: BTreeSet<usize> = measured
        .windows(2)
        .filter(|w| !f(w[0], w[1]).unwrap().is_empty())
        .map(|w| {
            assert_eq!(w[0] + 1, w[1], "a step between {} and {}", w[0], w[1]);
            w[1]
        })
        .collect();
    assert_eq!(found, steps.iter().copied().collect(), "the steps found");
    (rounds, boots)
}

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .map(|a| a.parse().expect("a number"))
            .unwrap_or(default)
    };
    let (commits, steps, seeds) = (arg(1, 12_000), arg(2, 10), arg(3, 20));
    println!("{commits} commits, {steps} steps, {seeds} seeds (exhaustive: {commits} boots)");
    println!("runners  rounds (max, mean)  boots (max, mean)");
    for runners in [1, 4, 16] {
        let runs: Vec<(usize, usize)> = (0..seeds as u64)
            .map(|seed| {
                let mut rng = fastrand::Rng::with_seed(seed);
                let mut at = BTreeSet::new();
                while at.len() < steps {
                    at.insert(rng.usize(1..commits));
                }
                simulate(commits, &at.into_iter().collect::<Vec<_>>(), runners)
            })
            .collect();
        let max = |f: fn(&(usize, usize)) -> usize| runs.iter().map(f).max().unwrap_or(0);
        let mean = |f: fn(&(usize, usize)) -> usize| {
            runs.iter().map(f).sum::<usize>() as f64 / seeds as f64
        };
        println!(
            "{runners:>7}  {:>6} {:>6.1}  {:>9} {:>7.1}",
            max(|r| r.0),
            mean(|r| r.0),
            max(|r| r.1),
            mean(|r| r.1)
        );
    }
}

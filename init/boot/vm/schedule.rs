//! The order of a command's boots: every kernel once a round, rounds
//! pairing the boots of several kernels, and where each boot sits.

use trig_guest::split::Part;
use trig_schema::error::{usage, Error};

/// In which order the boots of several kernels go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// A B A B ...: each round boots every kernel once, in the given order.
    Alternate,
    /// Each round boots every kernel once, in a seeded random order.
    Random(u64),
}

impl std::str::FromStr for Order {
    type Err = Error;

    /// `--order`, as argh parses it into the typed flag: random with seed
    /// 1 until [`Order::seeded`].
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "alternate" => Ok(Order::Alternate),
            "random" => Ok(Order::Random(1)),
            _ => Err(usage(format!(
                "--order must be alternate or random, not '{s}'"
            ))),
        }
    }
}

impl Order {
    /// This order with `--seed`.
    pub fn seeded(self, seed: u64) -> Self {
        match self {
            Order::Random(_) => Order::Random(seed),
            o => o,
        }
    }

    /// The kernel index of each boot, round by round: (round, kernel).
    /// Every round holds each kernel once, so rounds pair the boots.
    pub fn schedule(self, kernels: usize, rounds: usize) -> Vec<(usize, usize)> {
        let mut rng = match self {
            Order::Random(seed) => Some(fastrand::Rng::with_seed(seed)),
            Order::Alternate => None,
        };
        (1..=rounds)
            .flat_map(|round| {
                let mut ks: Vec<usize> = (0..kernels).collect();
                if let Some(rng) = rng.as_mut() {
                    rng.shuffle(&mut ks);
                }
                ks.into_iter().map(move |k| (round, k))
            })
            .collect()
    }
}

/// Where a boot sits in the command's schedule.
pub(super) struct Scheduled {
    /// Its place in the whole schedule, from 0.
    pub(super) n: usize,
    pub(super) round: usize,
    /// The kernel's index.
    pub(super) k: usize,
    /// Which part of the kernel's matrix it runs (`--split`).
    pub(super) part: Part,
    pub(super) label: String,
    /// Added to the results file's name, with several kernels.
    pub(super) tag: String,
}

/// Every boot of the command, in order: `runs` rounds of `kernels`
/// kernels, each split into `parts` boots that follow each other (to run
/// side by side), each labelled for the progress lines ("3/8 k2", or
/// "2/4" with one kernel; "part 1/2" after it when split).
pub(super) fn boots(order: Order, kernels: usize, runs: usize, parts: usize) -> Vec<Scheduled> {
    let schedule = order.schedule(kernels, runs);
    let many = kernels > 1;
    let whole = schedule.len();
    schedule
        .iter()
        .enumerate()
        .flat_map(|(n, &(round, k))| {
            (1..=parts).map(move |index| {
                // one kernel boots once a round
                let mut label = if many {
                    format!("{}/{} k{}", n + 1, whole, k + 1)
                } else {
                    format!("{round}/{runs}")
                };
                let part = Part { index, of: parts };
                if parts > 1 {
                    label.push_str(&format!(" part {part}"));
                }
                (round, k, part, label)
            })
        })
        .enumerate()
        .map(|(n, (round, k, part, label))| Scheduled {
            n,
            round,
            k,
            part,
            label,
            tag: if many {
                format!("-k{}", k + 1)
            } else {
                String::new()
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_round_boots_every_kernel_once() {
        assert_eq!(
            Order::Alternate.schedule(2, 3),
            vec![(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)]
        );
        let s = Order::Random(7).schedule(3, 20);
        assert_eq!(s, Order::Random(7).schedule(3, 20), "seeded");
        for round in 1..=20 {
            let mut ks: Vec<usize> = s
                .iter()
                .filter(|(r, _)| *r == round)
                .map(|(_, k)| *k)
                .collect();
            ks.sort();
            assert_eq!(ks, vec![0, 1, 2]);
        }
        // not always A first
        assert!(s.chunks(3).any(|c| c[0].1 != 0));
        assert!("sideways".parse::<Order>().is_err());
    }

    #[test]
    fn boots_are_labelled_by_place_and_kernel() {
        let labels = |kernels, runs| -> Vec<(String, String)> {
            boots(Order::Alternate, kernels, runs, 1)
                .into_iter()
                .map(|b| (b.label, b.tag))
                .collect()
        };
        let two = labels(2, 2);
        assert_eq!(two[1], ("2/4 k2".to_string(), "-k2".to_string()));
        assert_eq!(two.len(), 4);
        assert_eq!(
            labels(1, 3),
            [("1/3", ""), ("2/3", ""), ("3/3", "")].map(|(l, t)| (l.to_string(), t.to_string()))
        );
        // a split run's parts follow each other, then the next round's
        let split = boots(Order::Alternate, 2, 1, 2);
        let got: Vec<(usize, usize, String, String)> = split
            .into_iter()
            .map(|b| (b.n, b.k, b.part.to_string(), b.label))
            .collect();
        assert_eq!(
            got,
            [
                (0, 0, "1/2", "1/2 k1 part 1/2"),
                (1, 0, "2/2", "1/2 k1 part 2/2"),
                (2, 1, "1/2", "2/2 k2 part 1/2"),
                (3, 1, "2/2", "2/2 k2 part 2/2")
            ]
            .map(|(n, k, p, l)| (n, k, p.to_string(), l.to_string()))
        );
    }
}

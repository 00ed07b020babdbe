//! Where a change went: for a benchmark profiled on both sides
//! (`vm --profile`), the change of its instructions per event function by
//! function, largest first.

use crate::report::{BenchResult, Profile};
use serde::Serialize;
use std::collections::BTreeMap;

/// Functions shown per benchmark.
pub const TOP: usize = 8;

/// Smaller changes are not listed: two boots of one kernel move no
/// function by more than this (README, "Attribution").
pub const MIN_MOVE: f64 = 0.05;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Movers {
    /// NEW − BASE of every instruction per event: the measured change.
    pub total: f64,
    /// Of which in the kernel (BPF programs included).
    pub kernel: f64,
    /// The functions that moved by [`MIN_MOVE`] or more, largest change
    /// first, at most [`TOP`].
    pub functions: Vec<FunctionMove>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FunctionMove {
    pub name: String,
    pub base: f64,
    pub new: f64,
    pub change: f64,
}

impl Movers {
    /// The listed functions' changes together.
    pub fn listed(&self) -> f64 {
        self.functions.iter().map(|f| f.change).sum()
    }
}

/// The mean over boots of each figure; a function a boot does not list
/// costs it nothing there.
fn mean(ps: &[&Profile]) -> (f64, f64, BTreeMap<String, f64>) {
    let n = ps.len() as f64;
    let mut fns: BTreeMap<String, f64> = BTreeMap::new();
    for p in ps {
        for f in &p.functions {
            *fns.entry(f.name.clone()).or_default() += f.insn / n;
        }
    }
    let avg = |get: fn(&Profile) -> f64| ps.iter().map(|p| get(p)).sum::<f64>() / n;
    (avg(|p| p.total), avg(|p| p.kernel), fns)
}

/// The movers of NEW against BASE, when every result of both is profiled.
pub fn of<'a>(
    base: impl IntoIterator<Item = &'a BenchResult>,
    new: impl IntoIterator<Item = &'a BenchResult>,
) -> Option<Movers> {
    let profiles = |rs: Vec<&'a BenchResult>| -> Option<Vec<&'a Profile>> {
        let ps: Option<Vec<_>> = rs.iter().map(|r| r.profile.as_ref()).collect();
        ps.filter(|ps| !ps.is_empty())
    };
    let base = profiles(base.into_iter().collect())?;
    let new = profiles(new.into_iter().collect())?;
    let ((bt, bk, bf), (nt, nk, nf)) = (mean(&base), mean(&new));
    let names: std::collections::BTreeSet<&String> = bf.keys().chain(nf.keys()).collect();
    let mut functions: Vec<FunctionMove> = names
        .into_iter()
        .map(|name| {
            let (b, n) = (bf.get(name).copied(), nf.get(name).copied());
            let (b, n) = (b.unwrap_or(0.0), n.unwrap_or(0.0));
            FunctionMove {
                name: name.clone(),
                base: b,
                new: n,
                change: n - b,
            }
        })
        .filter(|f| f.change.abs() >= MIN_MOVE)
        .collect();
    functions.sort_by(|a, b| {
        b.change
            .abs()
            .total_cmp(&a.change.abs())
            .then(a.name.cmp(&b.name))
    });
    functions.truncate(TOP);
    Some(Movers {
        total: nt - bt,
        kernel: nk - bk,
        functions,
    })
}

/// Text lines that explain `m` for benchmark `name`.
pub fn lines(name: &str, m: &Movers) -> Vec<String> {
    let mut out = vec![format!(
        "{name}: {:+.2} insn/event: kernel {:+.2}, user space {:+.2}; {}",
        m.total,
        m.kernel,
        m.total - m.kernel,
        match m.functions.len() {
            0 => format!("no kernel function moved by {MIN_MOVE} or more"),
            n => format!(
                "the {n} listed {:+.2}, other kernel functions {:+.2}",
                m.listed(),
                m.kernel - m.listed()
            ),
        }
    )];
    let width = m.functions.iter().map(|f| f.name.len()).max().unwrap_or(0);
    out.extend(m.functions.iter().map(|f| {
        format!(
            "  {:<width$}  {:>+9.2}  ({:.2} -> {:.2})",
            f.name, f.change, f.base, f.new
        )
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Better, FunctionCost};

    fn profiled(total: f64, fns: &[(&str, f64)]) -> BenchResult {
        let mut r = BenchResult::new("rename-base", "rename-base", "rename", 1, Better::Higher);
        let functions: Vec<FunctionCost> = fns
            .iter()
            .map(|&(name, insn)| FunctionCost {
                name: name.into(),
                insn,
            })
            .collect();
        r.profile = Some(Profile {
            total,
            kernel: functions.iter().map(|f| f.insn).sum(),
            functions,
        });
        r
    }

    #[test]
    fn largest_moves_first_and_small_ones_left_out() {
        let base = profiled(
            1060.0,
            &[
                ("strscpy", 46.0),
                ("__fget_light", 52.0),
                ("vfs_write", 103.0),
            ],
        );
        let new = profiled(
            1180.0,
            &[
                ("sized_strscpy", 81.0),
                ("strnlen", 79.0),
                ("vfs_write", 103.01),
                ("fdget_pos", 64.0),
            ],
        );
        let m = of([&base], [&new]).unwrap();
        assert_eq!(m.total, 120.0);
        let names: Vec<&str> = m.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sized_strscpy",
                "strnlen",
                "fdget_pos",
                "__fget_light",
                "strscpy"
            ]
        );
        assert!(
            (m.listed() - m.kernel).abs() < 0.02,
            "{} vs {}",
            m.listed(),
            m.kernel
        );
        let text = lines("rename-base", &m).join("\n");
        assert!(
            text.contains("sized_strscpy") && text.contains("+81.00"),
            "{text}"
        );
    }

    #[test]
    fn unprofiled_sides_have_no_movers() {
        let plain = BenchResult::new("trig-base", "trig-base", "trigger", 1, Better::Higher);
        let p = profiled(300.0, &[]);
        assert!(of([&plain], [&p]).is_none());
        assert!(of([&p], []).is_none());
        assert_eq!(of([&p], [&p]).unwrap().functions.len(), 0);
    }
}

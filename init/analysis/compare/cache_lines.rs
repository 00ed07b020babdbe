//! Which shared lines moved (`-p N` under icount, the coherence model):
//! each side's most-missed lines (`profile.contention.lines`), matched by
//! name, and their coherence misses per event compared, so that a line a
//! change made shared is named by compare itself, with the functions that
//! write it. A static line's name is its symbol and offset; slab, page
//! and per-CPU lines are all `[dynamic]` (user ones `[user]`, static ones
//! past any symbol `[static, unnamed]`), so those are told apart by the
//! functions that take a tenth of their misses or more: one that touches
//! a line now and then (a switch, a tick) does not make it another line.

use super::MIN_MOVE;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use trig_schema::contention::SharedCacheLine;
use trig_schema::Profile;

/// Shared lines shown per benchmark.
pub const TOP_SHARED: usize = 4;

/// One shared line's move, in coherence misses per event.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CacheLineMove {
    /// `symbol+0xOFF`, `[dynamic]` or `[user]`.
    pub name: String,
    pub base: f64,
    pub new: f64,
    pub change: f64,
    /// The functions whose stores missed on it, on the side where it
    /// missed more, most first.
    pub writers: Vec<String>,
    /// The functions whose loads missed on it, likewise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub readers: Vec<String>,
}

/// A line as both sides can name it: a named static line by its symbol;
/// any other by its name and the functions that take [`MAIN_SHARE`] of
/// its misses or more. Two lines of one profile with one key are added
/// together (the functions shown are those of the one that missed more).
type Key = (String, BTreeSet<String>);

/// The share of a line's misses that makes a function one of its own.
const MAIN_SHARE: f64 = 0.1;

fn key(l: &SharedCacheLine) -> Key {
    let touched = match l.name.starts_with('[') {
        false => BTreeSet::new(),
        true => {
            let least = MAIN_SHARE * l.misses.misses;
            l.writers
                .iter()
                .chain(&l.readers)
                .filter(|(_, m)| *m >= least)
                .map(|(f, _)| f.clone())
                .collect()
        }
    };
    (l.name.clone(), touched)
}

/// One side's mean misses per event of each line it listed, with the
/// functions of the boot where it missed most.
#[derive(Debug, Default, Clone)]
pub struct MeanCacheLines(BTreeMap<Key, (f64, SharedCacheLine)>);

impl MeanCacheLines {
    /// The mean over `ps` (a line a profile does not list counts 0 there:
    /// each boot lists its most-missed lines only).
    pub fn of(ps: &[&Profile]) -> MeanCacheLines {
        let n = ps.len().max(1) as f64;
        let mut m = MeanCacheLines::default();
        for l in ps
            .iter()
            .filter_map(|p| p.contention.as_ref())
            .flat_map(|c| &c.lines)
        {
            let (sum, most) = m.0.entry(key(l)).or_insert_with(|| (0.0, l.clone()));
            *sum += l.misses.misses / n;
            if l.misses.misses > most.misses.misses {
                *most = l.clone();
            }
        }
        m
    }
}

/// The lines whose misses per event moved by [`MIN_MOVE`] or more, the
/// largest change first, at most [`TOP_SHARED`].
pub fn top(base: &MeanCacheLines, new: &MeanCacheLines) -> Vec<CacheLineMove> {
    let keys: BTreeSet<&Key> = base.0.keys().chain(new.0.keys()).collect();
    let mut moved: Vec<CacheLineMove> = keys
        .into_iter()
        .map(|k| {
            let (b, bl) = base.0.get(k).map_or((0.0, None), |(m, l)| (*m, Some(l)));
            let (n, nl) = new.0.get(k).map_or((0.0, None), |(m, l)| (*m, Some(l)));
            let line = if n >= b { nl.or(bl) } else { bl.or(nl) };
            let names = |fs: &[(String, f64)]| fs.iter().map(|(f, _)| f.clone()).collect();
            CacheLineMove {
                name: k.0.clone(),
                base: b,
                new: n,
                change: n - b,
                writers: line.map_or_else(Vec::new, |l| names(&l.writers)),
                readers: line.map_or_else(Vec::new, |l| names(&l.readers)),
            }
        })
        .filter(|m| m.change.abs() >= MIN_MOVE)
        .collect();
    moved.sort_by(|a, b| {
        b.change
            .abs()
            .total_cmp(&a.change.abs())
            .then(a.name.cmp(&b.name))
    });
    moved.truncate(TOP_SHARED);
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_schema::contention::{CoherenceMisses, Contention, Weights, MODEL};

    fn line(name: &str, kind: &str, misses: f64, writers: &[&str]) -> SharedCacheLine {
        SharedCacheLine {
            name: name.into(),
            kind: kind.into(),
            misses: CoherenceMisses {
                misses,
                hitm: misses,
            },
            readers: Vec::new(),
            writers: writers.iter().map(|w| (w.to_string(), misses)).collect(),
        }
    }

    fn profile(lines: Vec<SharedCacheLine>) -> Profile {
        let none = CoherenceMisses {
            misses: 0.0,
            hitm: 0.0,
        };
        Profile {
            total: 0.0,
            kernel: 0.0,
            functions: Vec::new(),
            entries: None,
            memory: None,
            contention: Some(Contention {
                model: MODEL.into(),
                weights: Weights::MODEL,
                producers: 4,
                kernel: none,
                user: none,
                insn: 0.0,
                spin: 0.0,
                cycles: 0.0,
                rate: 0.0,
                per_producer: 0.0,
                bound_by: None,
                lines,
            }),
            source: None,
        }
    }

    #[test]
    fn a_line_made_shared_is_named_with_its_writer() {
        let lock = |m| line("[dynamic]", "dynamic", m, &["down_read", "up_read"]);
        let base = profile(vec![lock(3.6)]);
        let new = profile(vec![
            lock(3.62),
            line(
                "trig_syscall_count+0x0",
                "static",
                0.887,
                &["do_syscall_64"],
            ),
        ]);
        let moved = top(&MeanCacheLines::of(&[&base]), &MeanCacheLines::of(&[&new]));
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert_eq!(moved[0].name, "trig_syscall_count+0x0");
        assert_eq!((moved[0].base, moved[0].new), (0.0, 0.887));
        assert_eq!(moved[0].writers, ["do_syscall_64"]);
    }

    #[test]
    fn dynamic_lines_are_told_apart_by_their_functions() {
        let base = profile(vec![line("[dynamic]", "dynamic", 2.0, &["down_read"])]);
        let new = profile(vec![
            line("[dynamic]", "dynamic", 2.0, &["down_read"]),
            line("[dynamic]", "dynamic", 1.0, &["_raw_read_lock"]),
        ]);
        let moved = top(&MeanCacheLines::of(&[&base]), &MeanCacheLines::of(&[&new]));
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert_eq!(moved[0].writers, ["_raw_read_lock"]);
        // one that touches a line now and then does not make it another
        let mut switched = line("[dynamic]", "dynamic", 2.01, &["down_read"]);
        switched.writers.push(("__schedule".into(), 0.01));
        let moved = top(
            &MeanCacheLines::of(&[&base]),
            &MeanCacheLines::of(&[&profile(vec![switched])]),
        );
        assert!(moved.is_empty(), "{moved:?}");
        // unnamed static lines are told apart alike
        let unnamed = |w| profile(vec![line("[static, unnamed]", "static", 1.0, &[w])]);
        let moved = top(
            &MeanCacheLines::of(&[&unnamed("foo_a")]),
            &MeanCacheLines::of(&[&unnamed("bar_b")]),
        );
        assert_eq!(moved.len(), 2, "{moved:?}");
        // a line that went away moves down, named from BASE
        let gone = top(&MeanCacheLines::of(&[&new]), &MeanCacheLines::of(&[&base]));
        assert_eq!(
            (gone[0].change, gone[0].writers.clone()),
            (-1.0, vec!["_raw_read_lock".to_string()])
        );
    }

    #[test]
    fn boots_are_averaged() {
        let a = profile(vec![line("x+0x0", "static", 1.0, &["f"])]);
        let b = profile(Vec::new());
        let mean = MeanCacheLines::of(&[&a, &b]);
        let moved = top(&MeanCacheLines::default(), &mean);
        assert_eq!(moved[0].new, 0.5);
    }
}

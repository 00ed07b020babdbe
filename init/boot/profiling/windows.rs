//! What the plugin writes: per measured window, the kernel's blocks with
//! their instructions and executions, and with `--cache` their accesses
//! and misses; with the coherence model, its counts.

use super::coherence::{self, WindowCounts};
use std::collections::BTreeMap;
use trig_schema::Accesses;

/// One block's counts in a window: its start address, the instructions,
/// the executions and, with `--cache`, its accesses and misses.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockCount {
    pub addr: u64,
    pub insns: u64,
    pub execs: u64,
    pub memory: Option<Accesses>,
}

/// One window's counts: the kernel's blocks and, with `--cache`, user
/// space's accesses and misses; with the coherence model, its counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    pub blocks: Vec<BlockCount>,
    pub user: Option<Accesses>,
    pub coherence: Option<WindowCounts>,
}

/// The plugin's columns of accesses and misses: loads, stores, L1i, L1d
/// and last-level misses.
fn accesses(fields: &[&str]) -> Option<Accesses> {
    let n: Vec<f64> = fields
        .iter()
        .map(|f| f.parse::<u64>().ok().map(|n| n as f64))
        .collect::<Option<_>>()?;
    let [loads, stores, l1i_misses, l1d_misses, ll_misses] = n[..] else {
        return None;
    };
    Some(Accesses {
        loads,
        stores,
        l1i_misses,
        l1d_misses,
        ll_misses,
    })
}

/// The plugin's output: per window, the kernel's instructions and
/// executions per block start address (and with `--cache` accesses and
/// misses); only windows with their `end` line are complete.
pub(crate) fn parse_windows(text: &str) -> Result<BTreeMap<u32, Window>, String> {
    let mut done = BTreeMap::new();
    let mut open: Option<(u32, Window)> = None;
    for (i, line) in text.lines().enumerate() {
        let bad = || format!("profile line {}: '{line}' is not plugin output", i + 1);
        let fields: Vec<&str> = line.split(' ').collect();
        match fields[..] {
            ["window", w] => open = Some((w.parse().map_err(|_| bad())?, Window::default())),
            ["end", w] => {
                let (n, counts) = open.take().ok_or_else(bad)?;
                if w.parse() != Ok(n) {
                    return Err(bad());
                }
                done.insert(n, counts);
            }
            // a block's instruction offsets, for its source lines (source_lines/)
            ["shape", ..] => {}
            ["user", ref rest @ ..] => {
                open.as_mut().ok_or_else(bad)?.1.user = Some(accesses(rest).ok_or_else(bad)?);
            }
            [first, ..] if coherence::is_coherence_line(first) => {
                let w = &mut open.as_mut().ok_or_else(bad)?.1;
                w.coherence
                    .get_or_insert_default()
                    .take(&fields)
                    .ok_or_else(bad)?;
            }
            // an older plugin's lines have no executions: refused, not
            // read as none
            [addr, n, execs, ref rest @ ..] if rest.is_empty() || rest.len() == 5 => {
                let block = BlockCount {
                    addr: u64::from_str_radix(addr, 16).map_err(|_| bad())?,
                    insns: n.parse().map_err(|_| bad())?,
                    execs: execs.parse().map_err(|_| bad())?,
                    memory: match rest {
                        [] => None,
                        _ => Some(accesses(rest).ok_or_else(bad)?),
                    },
                };
                open.as_mut().ok_or_else(bad)?.1.blocks.push(block);
            }
            _ => return Err(bad()),
        }
    }
    Ok(done)
}

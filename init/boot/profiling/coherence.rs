//! `-p N` under icount: what the plugin's coherence directory
//! (`trig_model::coherence`) counted in a window, read from its `coh`, `vcpu` and
//! `line` lines, and turned into a result's [`Contention`]: coherence
//! misses per event, the shared lines named, and the modelled throughput.

use std::collections::HashMap;
use trig_schema::contention::{CoherenceMisses as Misses, SharedCacheLine, Weights, MODEL};
use trig_schema::Contention;

/// Lines a result lists, the most missed first.
const LINES: usize = 8;

/// The kernel's lock slow paths: instructions there are a vCPU waiting
/// for another's turn to end, not work an event costs (arm64's and
/// x86-64's; a trailing `*` matches any rest).
const SPIN_WAITS: [&str; 8] = [
    "native_queued_spin_lock_slowpath",
    "queued_spin_lock_slowpath",
    "__pv_queued_spin_lock_slowpath",
    "queued_read_lock_slowpath",
    "queued_write_lock_slowpath",
    "osq_lock",
    "mutex_spin_on_owner",
    "rwsem_spin_on_owner",
];

pub fn is_spin_wait(function: &str) -> bool {
    SPIN_WAITS.contains(&function)
}

/// One vCPU's counts in a window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct VcpuCounts {
    pub kernel_insns: u64,
    pub user_insns: u64,
    pub kernel: (u64, u64),
    pub user: (u64, u64),
    /// Its clock in the merge: instructions and the cycles misses
    /// stalled it.
    pub clock: u64,
}

/// Who missed on a line: a kernel block (by address) or user space, and
/// whether by a store.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Site {
    pub block: Option<u64>,
    pub store: bool,
    pub misses: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CacheLineCounts {
    pub addr: u64,
    pub misses: u64,
    pub hitm: u64,
    pub sites: Vec<Site>,
}

/// A window's coherence counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowCounts {
    /// Per kernel block address: coherence misses, HITMs.
    pub blocks: HashMap<u64, (u64, u64)>,
    pub vcpus: Vec<VcpuCounts>,
    pub lines: Vec<CacheLineCounts>,
    /// The clock up to which every busy vCPU ran: what was counted.
    pub span: Option<u64>,
}

fn num(s: &str) -> Option<u64> {
    s.parse().ok()
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s, 16).ok()
}

fn site(s: &str) -> Option<Site> {
    let mut f = s.split(':');
    let (Some(at), Some(rw), Some(n), None) = (f.next(), f.next(), f.next(), f.next()) else {
        return None;
    };
    Some(Site {
        block: if at == "user" { None } else { Some(hex(at)?) },
        store: match rw {
            "w" => true,
            "r" => false,
            _ => return None,
        },
        misses: num(n)?,
    })
}

impl WindowCounts {
    /// The events of the window's common span, the plugin having counted
    /// no access past it: each producer's events (run on
    /// `producer_cpus`) up to where its clock passed the span, as if
    /// spread evenly over its clock; `events`, the window's, without a
    /// span or the producers' events.
    pub fn events_in_span(
        &self,
        events: f64,
        producer_events: &[u64],
        producer_cpus: &[usize],
    ) -> f64 {
        let (Some(span), false) = (self.span, producer_events.is_empty()) else {
            return events;
        };
        let clock = |cpu: usize| self.vcpus.get(cpu).map_or(0, |v| v.clock);
        let (mut all, mut inside) = (0.0, 0.0);
        for (i, &e) in producer_events.iter().enumerate() {
            let cpu = producer_cpus.get(i).copied().unwrap_or(i);
            let share = match clock(cpu) {
                0 => 1.0,
                c => (span as f64 / c as f64).min(1.0),
            };
            all += e as f64;
            inside += e as f64 * share;
        }
        if all > 0.0 {
            events * inside / all
        } else {
            events
        }
    }

    /// Takes one of the plugin's coherence lines; None if `fields` is not
    /// one, or a malformed one.
    pub fn take(&mut self, fields: &[&str]) -> Option<()> {
        match *fields {
            ["coh", addr, misses, hitm] => {
                // a block translated anew in another shape has a slot of its
                // own, and a line of its own at the same address
                let (m, h) = (num(misses)?, num(hitm)?);
                let at = self.blocks.entry(hex(addr)?).or_default();
                *at = (at.0 + m, at.1 + h);
            }
            ["vcpu", i, ki, ui, km, kh, um, uh, clock] => {
                let i: usize = i.parse().ok().filter(|&i| i < 1024)?;
                if self.vcpus.len() <= i {
                    self.vcpus.resize(i + 1, VcpuCounts::default());
                }
                self.vcpus[i] = VcpuCounts {
                    kernel_insns: num(ki)?,
                    user_insns: num(ui)?,
                    kernel: (num(km)?, num(kh)?),
                    user: (num(um)?, num(uh)?),
                    clock: num(clock)?,
                };
            }
            ["span", clock] => self.span = Some(num(clock)?),
            ["line", addr, misses, hitm, ref sites @ ..] => self.lines.push(CacheLineCounts {
                addr: hex(addr)?,
                misses: num(misses)?,
                hitm: num(hitm)?,
                sites: sites.iter().map(|s| site(s)).collect::<Option<_>>()?,
            }),
            _ => return None,
        }
        Some(())
    }
}

/// Whether a line's first line word is one of the coherence model's.
pub fn is_coherence_line(first: &str) -> bool {
    matches!(first, "coh" | "vcpu" | "line" | "span")
}

/// The function a kernel code address is in.
pub type TextNames<'a> = &'a dyn Fn(u64) -> String;

/// The data symbol a kernel address is in, and the offset into it.
pub type DataNames<'a> = &'a dyn Fn(u64) -> Option<(String, u64)>;

/// What a line is: a static kernel symbol with its offset, else the kind
/// of memory it lies in.
fn line_name(addr: u64, data: DataNames) -> (String, &'static str) {
    // x86-64's and arm64's user halves both end below bit 63
    if addr >> 63 == 0 {
        return ("[user]".into(), "user");
    }
    match data(addr) {
        Some((sym, off)) if off < UNNAMED_PAST => (format!("{sym}+{off:#x}"), "static"),
        // kallsyms lists no object there: the nearest symbol below is
        // someone else's (Debian 7.2's jiffies line fell 0xa5368 past a
        // `__BTF_ID__` placeholder)
        Some(_) => ("[static, unnamed]".into(), "static"),
        None => ("[dynamic]".into(), "dynamic"),
    }
}

/// How far past the symbol below it a line may lie and still be named
/// by it: larger than any object whose lines are worth naming.
const UNNAMED_PAST: u64 = 64 << 10;

/// The functions that missed on a line, loads and stores apart, per
/// event, most first.
fn who(l: &CacheLineCounts, text: TextNames, events: f64, stores: bool) -> Vec<(String, f64)> {
    let mut by: HashMap<String, u64> = HashMap::new();
    for s in l.sites.iter().filter(|s| s.store == stores) {
        let name = match s.block {
            Some(b) => text(b),
            None => "[user]".to_string(),
        };
        *by.entry(name).or_default() += s.misses;
    }
    let mut v: Vec<(String, f64)> = by
        .into_iter()
        .map(|(n, m)| (n, m as f64 / events))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// What a window's [`Contention`] is made of.
pub struct Inputs<'a> {
    pub counts: &'a WindowCounts,
    pub text: TextNames<'a>,
    pub data: DataNames<'a>,
    /// The benchmark's events in the window.
    pub events: f64,
    /// Its events in the span the misses were counted in
    /// ([`WindowCounts::events_in_span`]).
    pub counted: f64,
    pub producers: usize,
    /// Instructions per event in the kernel's lock slow paths.
    pub spin: f64,
}

impl Inputs<'_> {
    fn per_event(&self, misses: u64, hitm: u64) -> Misses {
        Misses {
            misses: misses as f64 / self.counted,
            hitm: hitm as f64 / self.counted,
        }
    }

    /// Every vCPU's misses of one side (kernel or user) per event.
    fn side(&self, of: fn(&VcpuCounts) -> (u64, u64)) -> Misses {
        let (m, h) = self
            .counts
            .vcpus
            .iter()
            .map(of)
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        self.per_event(m, h)
    }

    /// The producers' instructions per event, spin-waiting left out:
    /// they run pinned on the first vCPUs.
    fn insn(&self) -> f64 {
        let insns: u64 = self
            .counts
            .vcpus
            .iter()
            .take(self.producers)
            .map(|v| v.kernel_insns + v.user_insns)
            .sum();
        (insns as f64 / self.events - self.spin).max(0.0)
    }

    /// The cycles per event the busiest line is kept moving, and its name.
    fn busiest(&self, weights: &Weights) -> Option<(f64, String)> {
        let line = self
            .counts
            .lines
            .iter()
            .map(|l| (weights.cycles(&self.per_event(l.misses, l.hitm)), l.addr))
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))?;
        Some((line.0, line_name(line.1, self.data).0))
    }

    /// The most missed lines, named, with who missed on them.
    fn lines(&self) -> Vec<SharedCacheLine> {
        let lines = self.counts.lines.iter().take(LINES);
        lines
            .map(|l| {
                let (name, kind) = line_name(l.addr, self.data);
                SharedCacheLine {
                    name,
                    kind: kind.into(),
                    misses: self.per_event(l.misses, l.hitm),
                    readers: who(l, self.text, self.counted, false),
                    writers: who(l, self.text, self.counted, true),
                }
            })
            .collect()
    }
}

/// The window's contention per event, and the modelled throughput: each
/// producer's cycles are its instructions plus its weighted misses, and
/// a line's transfers queue, so the total is also bounded by the line
/// busiest with transfers.
pub fn contention(w: &Inputs) -> Contention {
    let (kernel, user) = (w.side(|v| v.kernel), w.side(|v| v.user));
    let insn = w.insn();
    let weights = Weights::MODEL;
    let all = Misses {
        misses: kernel.misses + user.misses,
        hitm: kernel.hitm + user.hitm,
    };
    let cycles = insn + weights.cycles(&all);
    let unbounded = w.producers as f64 * 1e3 / cycles.max(1e-9);
    let (rate, bound_by) = match w.busiest(&weights) {
        Some((busy, name)) if busy > 0.0 && 1e3 / busy < unbounded => (1e3 / busy, Some(name)),
        _ => (unbounded, None),
    };
    Contention {
        model: MODEL.into(),
        weights,
        producers: w.producers,
        kernel,
        user,
        insn,
        spin: w.spin,
        cycles,
        rate,
        per_producer: rate / w.producers.max(1) as f64,
        bound_by,
        lines: w.lines(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(text: &str) -> WindowCounts {
        let mut w = WindowCounts::default();
        for line in text.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            w.take(&fields).unwrap_or_else(|| panic!("{line}"));
        }
        w
    }

    #[test]
    fn the_plugin_s_lines_parse_and_bad_ones_are_refused() {
        let w = window(
            "coh ffffffff81000000 12 3\n\
             vcpu 1 900 100 12 3 0 0 1000\n\
             line ffffffff82000040 40 20 ffffffff81000000:w:20 user:r:20",
        );
        assert_eq!(w.blocks[&0xffffffff81000000], (12, 3));
        assert_eq!(w.vcpus[1].kernel, (12, 3));
        assert_eq!(w.vcpus[0], VcpuCounts::default());
        assert_eq!(w.lines[0].sites[1].block, None);
        let mut w = WindowCounts::default();
        for bad in [
            "coh zz 1 2",
            "vcpu 99999999 1 1 1 1 1 1 1",
            "line 40 1 1 user:x:1",
            "line 40 1 1 user:r",
        ] {
            let fields: Vec<&str> = bad.split(' ').collect();
            assert_eq!(w.take(&fields), None, "{bad}");
        }
    }

    /// Two functions and two data symbols.
    fn text(a: u64) -> String {
        let f = if a >= 0xffffffff81000100 {
            "inc_counter"
        } else {
            "do_syscall_64"
        };
        f.to_string()
    }

    fn data(a: u64) -> Option<(String, u64)> {
        match a {
            0xffffffff82000000..0xffffffff82000040 => {
                Some(("syscall_count".into(), a - 0xffffffff82000000))
            }
            0xffffffff82000040..0xffffffff83000000 => {
                Some(("other".into(), a - 0xffffffff82000040))
            }
            _ => None,
        }
    }

    #[test]
    fn misses_are_per_event_of_the_span_every_producer_ran() {
        // CPU 1 ran twice CPU 0's clock: past the span (100) it ran alone
        // and nothing was counted, so half its events are out
        let counts = window(
            "vcpu 0 100 0 100 0 0 0 100\n\
             vcpu 1 200 0 100 0 0 0 200\n\
             span 100",
        );
        let counted = counts.events_in_span(300.0, &[100, 200], &[0, 1]);
        assert_eq!(counted, 200.0);
        let c = contention(&Inputs {
            counts: &counts,
            text: &text,
            data: &data,
            events: 300.0,
            counted,
            producers: 2,
            spin: 0.0,
        });
        assert_eq!(c.kernel.misses, 1.0);
        assert_eq!(c.insn, 1.0);
    }

    #[test]
    fn a_line_every_producer_writes_bounds_the_total() {
        // four producers, 1000 events, 1000 instructions each; one
        // global counter moved on every event, modified each time
        // four vCPUs of `insns` instructions, a quarter of the misses each,
        // and the line missed by `site`
        let four_vcpus = |insns: u64, site: &str| {
            let vcpus: String = (0..4)
                .map(|v| format!("vcpu {v} {insns} 0 250 250 0 0 {insns}\n"))
                .collect();
            window(&format!("{vcpus}line ffffffff82000008 1000 1000 {site}"))
        };
        let counts = four_vcpus(250000, "ffffffff81000110:r:1000");
        let four = |counts: &WindowCounts| {
            contention(&Inputs {
                counts,
                text: &text,
                data: &data,
                events: 1000.0,
                counted: 1000.0,
                producers: 4,
                spin: 0.0,
            })
        };
        let c = four(&counts);
        assert_eq!(c.kernel.misses, 1.0);
        assert_eq!(c.insn, 1000.0);
        // 1000 instructions and one HITM (100 cycles) an event
        assert_eq!(c.cycles, 1100.0);
        // four producers would do 3.6 M/Gcycle, but the line moves 100
        // cycles an event: at most 10 M/Gcycle... so they do not bind here
        assert!((c.rate - 4e3 / 1100.0).abs() < 1e-9, "{}", c.rate);
        assert_eq!(c.bound_by, None);
        assert_eq!(c.lines[0].name, "syscall_count+0x8");
        assert_eq!(c.lines[0].kind, "static");
        assert_eq!(c.lines[0].readers, [("inc_counter".to_string(), 1.0)]);
        // with cheap events the line is the limit
        let cheap = four_vcpus(12500, "ffffffff81000110:w:1000");
        let c = four(&cheap);
        assert!((c.rate - 10.0).abs() < 1e-9, "{}", c.rate);
        assert_eq!(c.per_producer, 2.5);
        assert_eq!(c.bound_by.as_deref(), Some("syscall_count+0x8"));
        assert_eq!(c.lines[0].writers[0].0, "inc_counter");
    }

    #[test]
    fn lines_without_a_symbol_say_what_memory_they_are() {
        assert_eq!(line_name(0x7fff_0000_0040, &data).1, "user");
        assert_eq!(line_name(0xffff_8880_0000_0040, &data).1, "dynamic");
        assert_eq!(line_name(0xffffffff82000040, &|_| None).1, "dynamic");
        assert_eq!(line_name(0xffffffff82000050, &data).0, "other+0x10");
        let far = |a: u64| Some(("__BTF_ID__func__x__1".to_string(), a - 0xffffffff82000000));
        assert_eq!(
            line_name(0xffffffff820a5368, &far),
            ("[static, unnamed]".to_string(), "static")
        );
    }
}

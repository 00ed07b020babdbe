//! The coherence model of several producers under icount: a MESI-like
//! directory of 64-byte lines, private caches of unbounded size (so every
//! miss it counts is one of communication, never of capacity), fed in an
//! order of its own rather than QEMU's.
//!
//! Under icount one host thread runs the vCPUs in turns of up to a
//! million instructions, so in QEMU's order a shared line would move once
//! a turn. Here each vCPU's accesses are stamped with its own instruction
//! count (as if the vCPUs ran side by side at one instruction a cycle)
//! and the streams are interleaved by stamp, ties by CPU number: the order,
//! and so the counts, do not depend on how long QEMU's turns are. A miss
//! stalls its vCPU for the transfer's cycles ([`Stall`]): every later
//! access of it comes that much later, so producers that fight over a
//! line fall into a queue, as on hardware, whatever their phases when
//! they met. A vCPU's clock stands still while it waits for another (a
//! block that pauses in a spin loop): under icount it may wait out a
//! whole turn of a lock holder's, as no hardware would, and its waiting
//! would otherwise move it out of step with the others by as much.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};

/// Bytes a line, as log2: the coherence unit of x86-64 and arm64 cores.
pub const CACHE_LINE_SHIFT: u32 = 6;

/// vCPUs the directory tells apart (a line's holders are a bit mask).
pub const MAX_VCPUS: usize = 64;

/// What one access cost in coherence: whether it moved the line between
/// caches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Transfer {
    /// The access needed another vCPU's cache: a miss on a line another
    /// vCPU wrote since this one held it, or holds modified, or a store
    /// that must invalidate other holders.
    pub coherence: bool,
    /// Of those, the line was modified in another vCPU's cache (perf
    /// c2c's HITM).
    pub hitm: bool,
}

#[derive(Debug, Clone, Copy, Default)]
struct CacheLine {
    /// The vCPUs holding the line.
    holders: u64,
    /// The one holder has written it since anyone else read it.
    modified: bool,
    /// vCPUs whose copy another vCPU's store invalidated.
    lost: u64,
}

/// The holders of every line touched since the last [`Directory::clear`],
/// in a map hashed by `S`: std's by default, and the plugin's choice
/// where every access of a window comes through (a line number is no
/// outside input, so no hash need resist one).
#[derive(Default)]
pub struct Directory<S = RandomState> {
    lines: HashMap<u64, CacheLine, S>,
}

impl<S: BuildHasher> Directory<S> {
    pub fn clear(&mut self) {
        self.lines.clear();
    }

    /// `vcpu` loads or stores (`store`) in `line` (an address shifted by
    /// [`CACHE_LINE_SHIFT`]).
    pub fn access(&mut self, vcpu: usize, line: u64, store: bool) -> Transfer {
        let me = 1u64 << (vcpu % MAX_VCPUS);
        let l = self.lines.entry(line).or_default();
        let held = l.holders & me != 0;
        let others = l.holders & !me;
        let other_modified = l.modified && others != 0;
        let lost = l.lost & me != 0;
        let out = if store {
            if held && others == 0 {
                Transfer::default()
            } else {
                Transfer {
                    coherence: others != 0 || lost,
                    hitm: other_modified,
                }
            }
        } else if held {
            Transfer::default()
        } else {
            Transfer {
                coherence: other_modified || lost,
                hitm: other_modified,
            }
        };
        if store {
            l.lost = (l.lost | others) & !me;
            l.holders = me;
            l.modified = true;
        } else if !held {
            l.holders |= me;
            l.lost &= !me;
            l.modified = false;
        }
        out
    }
}

/// One access, stamped with its vCPU's instruction count; `site` is the
/// caller's (the plugin's: the block it came from).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub stamp: u64,
    pub line: u64,
    pub store: bool,
    pub site: u32,
}

#[derive(Default)]
struct Vcpu {
    /// Instructions this vCPU has run, up to the end of its current block.
    clock: u64,
    /// Where its current block started: no access of it is earlier.
    block: u64,
    /// Running, not halted: the interleaving waits for it.
    running: bool,
    /// What breaks a tie of stamps: the CPU's place in the machine,
    /// whatever number the vCPU was given.
    cpu: u64,
    /// Cycles its misses stalled it so far: added to every stamp of its
    /// that has not gone through.
    stalled: u64,
    pending: VecDeque<Access>,
}

/// What a coherence miss stalls its vCPU, in cycles (an instruction is
/// one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stall {
    pub miss: u64,
    /// A miss on a line another vCPU holds modified.
    pub hitm: u64,
}

impl Stall {
    fn of(self, t: Transfer) -> u64 {
        match (t.coherence, t.hitm) {
            (_, true) => self.hitm,
            (true, false) => self.miss,
            _ => 0,
        }
    }
}

/// The vCPUs' access streams, interleaved by stamp into the directory.
#[derive(Default)]
pub struct Interleaver<S = RandomState> {
    stall: Stall,
    vcpus: Vec<Vcpu>,
    /// Every access stamped before this has been through the directory.
    done: u64,
    pub directory: Directory<S>,
}

impl<S: BuildHasher + Default> Interleaver<S> {
    /// An interleaver whose misses stall their vCPUs `stall`.
    pub fn new(stall: Stall) -> Self {
        Interleaver {
            stall,
            ..Interleaver::default()
        }
    }

    fn vcpu(&mut self, vcpu: usize) -> &mut Vcpu {
        let i = vcpu % MAX_VCPUS;
        if self.vcpus.len() <= i {
            self.vcpus.resize_with(i + 1, Vcpu::default);
        }
        &mut self.vcpus[i]
    }

    /// Starts over at a window's start: clocks at zero, nothing pending,
    /// no line held.
    pub fn restart(&mut self) {
        for v in &mut self.vcpus {
            (v.clock, v.block, v.stalled) = (0, 0, 0);
            v.pending.clear();
        }
        self.done = 0;
        self.directory.clear();
    }

    /// `vcpu` starts a block of `insns` instructions; 0 for a block that
    /// waits (spins), whose clock stands still and whose accesses are
    /// stamped at its start. A vCPU that wakes from a halt joins at the
    /// interleaving's point: its halt took the time the others ran.
    pub fn block(&mut self, vcpu: usize, insns: u64) {
        let done = self.done;
        let v = self.vcpu(vcpu);
        if !v.running {
            v.running = true;
            v.clock = v.clock.max(done.saturating_sub(v.stalled));
        }
        v.block = v.clock;
        v.clock += insns;
    }

    /// Ties of `vcpu`'s stamps with another's go by `cpu` (then by the
    /// vCPUs' numbers): producers that run one loop from one start
    /// stamp tie at every access, and a tie's order must not depend on
    /// the order the vCPUs were first seen in.
    pub fn tie_by(&mut self, vcpu: usize, cpu: u64) {
        self.vcpu(vcpu).cpu = cpu;
    }

    /// `vcpu` halts (x86 `hlt`, arm64 `wfi`): the interleaving stops waiting
    /// for it.
    pub fn halt(&mut self, vcpu: usize) {
        self.vcpu(vcpu).running = false;
    }

    /// The access of the `index`th instruction of `vcpu`'s current block.
    pub fn access(&mut self, vcpu: usize, index: u64, line: u64, store: bool, site: u32) {
        let v = self.vcpu(vcpu);
        let stamp = v.block + index.min(v.clock - v.block);
        v.pending.push_back(Access {
            stamp,
            line,
            store,
            site,
        });
    }

    /// Where a window's common span ends: the least clock of the vCPUs
    /// `busy` names. Past it the vCPUs QEMU gave more of the window ran
    /// without the others, as no side-by-side run would.
    pub fn span(&self, busy: impl Fn(usize) -> bool) -> u64 {
        let clocks = (0..self.vcpus.len()).filter(|&i| busy(i));
        clocks.map(|i| self.clock(i)).min().unwrap_or(u64::MAX)
    }

    /// The stamp below which no running vCPU can still add an access.
    pub fn limit(&self) -> u64 {
        self.vcpus
            .iter()
            .filter(|v| v.running)
            .map(|v| v.block + v.stalled)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// A vCPU's clock: its instructions and the cycles its misses
    /// stalled it.
    pub fn clock(&self, vcpu: usize) -> u64 {
        self.vcpus
            .get(vcpu % MAX_VCPUS)
            .map_or(0, |v| v.clock + v.stalled)
    }

    /// Drops every access not yet through (those past the span).
    pub fn drop_pending(&mut self) {
        for v in &mut self.vcpus {
            v.pending.clear();
        }
    }

    /// Runs every access stamped before `limit` through the directory,
    /// in stamp order, and hands each to `seen`: [`Interleaver::limit`] while
    /// the vCPUs run, `u64::MAX` for every pending one.
    pub fn advance_to(&mut self, limit: u64, seen: &mut impl FnMut(usize, &Access, Transfer)) {
        loop {
            let next = self
                .vcpus
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.pending.front().map(|a| (a.stamp + v.stalled, v.cpu, i)))
                .filter(|&(stamp, ..)| stamp < limit)
                .min();
            let Some((stamp, _, i)) = next else { break };
            let v = &mut self.vcpus[i];
            let mut a = v.pending.pop_front().expect("a front");
            // an instruction that loads and stores one line (an atomic,
            // a read-modify-write) takes it once, for writing, as
            // hardware's read-for-ownership does
            if let Some(next) = v.pending.front() {
                if !a.store && next.store && (next.stamp, next.line) == (a.stamp, a.line) {
                    a = v.pending.pop_front().expect("a front");
                }
            }
            let out = self.directory.access(i, a.line, a.store);
            self.vcpus[i].stalled += self.stall.of(out);
            self.done = self.done.max(stamp);
            seen(i, &a, out);
        }
        if limit == u64::MAX {
            // nobody runs: a waking vCPU joins where the others stopped
            self.done = self.done.max(
                self.vcpus
                    .iter()
                    .map(|v| v.clock + v.stalled)
                    .max()
                    .unwrap_or(0),
            );
        } else {
            self.done = self.done.max(limit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Coherence misses and HITMs of `trace`'s accesses (vCPU, line,
    /// store) run through a directory in that order.
    fn run(trace: &[(usize, u64, bool)]) -> (usize, usize) {
        let mut d: Directory = Directory::default();
        trace.iter().fold((0, 0), |(c, h), &(v, l, s)| {
            let o = d.access(v, l, s);
            (c + o.coherence as usize, h + o.hitm as usize)
        })
    }

    #[test]
    fn a_line_written_in_turn_moves_every_time() {
        // ping-pong: two vCPUs increment one counter in turn
        let mut t = Vec::new();
        for _ in 0..100 {
            for v in 0..2 {
                t.push((v, 7, false));
                t.push((v, 7, true));
            }
        }
        let (coh, hitm) = run(&t);
        // every load but the very first finds it modified by the other,
        // and the store after it must take the other's copy away
        assert_eq!((coh, hitm), (398, 199));
    }

    #[test]
    fn lines_only_read_are_shared_for_free() {
        let mut t = Vec::new();
        for _ in 0..100 {
            for v in 0..4 {
                t.push((v, 1, false));
                t.push((v, 2, false));
            }
        }
        assert_eq!(run(&t), (0, 0));
        // a private line written over and over: no one else wants it
        let private: Vec<_> = (0..100).map(|i| (i % 2, 10 + i as u64 % 2, true)).collect();
        assert_eq!(run(&private), (0, 0));
    }

    #[test]
    fn two_counters_in_one_line_share_it_falsely() {
        // vCPU 0 writes bytes 0..8, vCPU 1 bytes 8..16: one line
        let line = |addr: u64| addr >> CACHE_LINE_SHIFT;
        let mut t = Vec::new();
        for _ in 0..50 {
            t.push((0, line(0x1000), true));
            t.push((1, line(0x1008), true));
        }
        let (coh, hitm) = run(&t);
        assert_eq!((coh, hitm), (99, 99));
        // padded to a line each, no miss
        let mut padded = Vec::new();
        for _ in 0..50 {
            padded.push((0, line(0x1000), true));
            padded.push((1, line(0x1040), true));
        }
        assert_eq!(run(&padded), (0, 0));
    }

    #[test]
    fn a_reader_of_a_line_written_since_misses_without_hitm_once_it_is_shared() {
        // 0 writes, 1 reads (HITM), 2 reads (shared: served clean), 0
        // writes (invalidates 1 and 2), 2 reads (HITM), 1 reads (lost it:
        // coherence, the line now shared)
        let t = [
            (0, 5, true),
            (1, 5, false),
            (2, 5, false),
            (0, 5, true),
            (2, 5, false),
            (1, 5, false),
        ];
        let mut d: Directory = Directory::default();
        let outs: Vec<Transfer> = t.iter().map(|&(v, l, s)| d.access(v, l, s)).collect();
        let hitm = Transfer {
            coherence: true,
            hitm: true,
        };
        let clean = Transfer {
            coherence: true,
            hitm: false,
        };
        assert_eq!(
            outs,
            [
                Transfer::default(),
                hitm,
                Transfer::default(),
                clean,
                hitm,
                clean
            ]
        );
    }

    /// A vCPU's blocks: (instructions, accesses as (index, line, store)).
    type Stream = Vec<(u64, Vec<(u64, u64, bool)>)>;

    /// Feeds `streams` to an interleaver that stalls a miss `stall` as QEMU
    /// would in turns of `turn` blocks, and counts coherence misses.
    fn interleaved(streams: &[Stream], turn: usize, stall: Stall) -> (usize, usize) {
        let mut m: Interleaver = Interleaver::new(stall);
        let (mut coh, mut hitm) = (0, 0);
        let mut seen = |_: usize, _: &Access, o: Transfer| {
            coh += o.coherence as usize;
            hitm += o.hitm as usize;
        };
        // every vCPU was running when the window opened
        for v in 0..streams.len() {
            m.block(v, 0);
        }
        let mut next = vec![0; streams.len()];
        while next.iter().zip(streams).any(|(n, s)| *n < s.len()) {
            for (v, s) in streams.iter().enumerate() {
                for (insns, accesses) in s.iter().skip(next[v]).take(turn) {
                    m.block(v, *insns);
                    for &(i, line, store) in accesses {
                        m.access(v, i, line, store, 0);
                    }
                    m.advance_to(m.limit(), &mut seen);
                }
                next[v] += turn;
            }
        }
        m.advance_to(u64::MAX, &mut seen);
        (coh, hitm)
    }

    #[test]
    fn the_count_does_not_depend_on_qemu_s_turns() {
        // three vCPUs, each a loop of 10-instruction blocks that read a
        // shared lock word and write it, with private work between
        let stream = |v: u64| {
            (0..300)
                .map(|k| {
                    let accesses = vec![(2, 100, false), (3, 100, true), (6, 200 + v, true)];
                    (10 + (k % 3 == 0) as u64, accesses)
                })
                .collect::<Vec<_>>()
        };
        let streams: Vec<_> = (0..3).map(stream).collect();
        let fine = interleaved(&streams, 1, Stall::default());
        let stall = Stall {
            miss: 60,
            hitm: 100,
        };
        let stalled = interleaved(&streams, 1, stall);
        for turn in [2, 7, 50, 300] {
            let of = |stall| interleaved(&streams, turn, stall);
            assert_eq!(of(Stall::default()), fine, "turns of {turn} blocks");
            assert_eq!(of(stall), stalled, "turns of {turn} blocks, stalled");
        }
        // side by side, the lock moves nearly every iteration of every vCPU
        assert!(fine.0 > 800, "{fine:?}");
        // in QEMU's order, turn after turn, it moves about once a turn
        assert!(qemu_order(&streams, 50).0 * 20 < fine.0);
    }

    /// The coherence misses of `streams` run in QEMU's order: each vCPU's
    /// `turn` blocks in a row.
    fn qemu_order(streams: &[Stream], turn: usize) -> (usize, usize) {
        let mut trace = Vec::new();
        for start in (0..)
            .step_by(turn)
            .take_while(|s| streams.iter().any(|x| x.len() > *s))
        {
            for (v, s) in streams.iter().enumerate() {
                for (_, accesses) in s.iter().skip(start).take(turn) {
                    trace.extend(accesses.iter().map(|&(_, line, store)| (v, line, store)));
                }
            }
        }
        run(&trace)
    }

    #[test]
    fn a_vcpu_that_spins_out_a_turn_stays_in_step() {
        // two vCPUs increment a shared counter line and a private one;
        // vCPU 1 first spins on a lock word (line 7) for `spins` blocks of
        // 4 instructions, as it would wait out another vCPU's turn
        let counted = |spins: usize| {
            let mut m: Interleaver = Interleaver::default();
            let (mut coh, mut order) = (0, Vec::new());
            let mut seen = |v: usize, a: &Access, o: Transfer| {
                if a.line != 7 {
                    coh += o.coherence as usize;
                }
                if a.line == 100 {
                    order.push(v);
                }
            };
            m.block(0, 0);
            m.block(1, 0);
            for _ in 0..spins {
                m.block(1, 0);
                m.access(1, 3, 7, false, 0);
                m.advance_to(m.limit(), &mut seen);
            }
            for k in 0..40u64 {
                let v = (k % 2) as usize;
                m.block(v, 10);
                m.access(v, 2, 100, true, 0);
                m.access(v, 5, 200 + v as u64, true, 0);
                m.advance_to(m.limit(), &mut seen);
            }
            m.advance_to(u64::MAX, &mut seen);
            (coh, order)
        };
        let alone = counted(0);
        assert_eq!(counted(1), alone);
        assert_eq!(counted(10_000), alone);
        // the counter alternates between the two at every increment
        assert_eq!(alone.1.windows(2).filter(|w| w[0] != w[1]).count(), 39);
    }

    #[test]
    fn a_miss_stalls_its_vcpu() {
        // vCPU 0 writes a line every 10 instructions, vCPU 1 reads it 5
        // after each: side by side at an instruction a cycle every access
        // misses; when a miss stalls its vCPU, the reader falls behind
        // and finds the line written many times between its reads
        let count = |stall: Stall| {
            let mut m: Interleaver = Interleaver::new(stall);
            let (mut coh, mut reads) = (0, Vec::new());
            let mut seen = |v: usize, a: &Access, o: Transfer| {
                coh += o.coherence as usize;
                if v == 1 {
                    reads.push(a.stamp);
                }
            };
            for _ in 0..100 {
                m.block(0, 10);
                m.access(0, 0, 9, true, 0);
                m.block(1, 10);
                m.access(1, 5, 9, false, 0);
                m.advance_to(m.limit(), &mut seen);
            }
            m.advance_to(u64::MAX, &mut seen);
            (coh, reads.len())
        };
        assert_eq!(count(Stall::default()), (199, 100));
        let (stalled, reads) = count(Stall {
            miss: 60,
            hitm: 100,
        });
        assert_eq!(reads, 100);
        // each of the reader's misses (HITM) stalls it 100 cycles, ten of
        // the writer's iterations, of which only the first misses; once the
        // writer is done, the reader's reads hit
        assert!((20..60).contains(&stalled), "{stalled}");
    }

    #[test]
    fn ties_go_by_cpu_whatever_the_vcpus_numbers() {
        // vCPUs 0 and 1 store to one line at the same stamp: CPU 1 (vCPU 0)
        // goes first either way round they were numbered
        let mut m: Interleaver = Interleaver::default();
        m.tie_by(0, 1);
        m.tie_by(1, 0);
        for v in [0, 1] {
            m.block(v, 4);
            m.access(v, 2, 5, true, 0);
        }
        let mut order = Vec::new();
        m.advance_to(u64::MAX, &mut |v, _, _| order.push(v));
        assert_eq!(order, [1, 0]);
    }

    #[test]
    fn a_read_modify_write_costs_one_transfer() {
        // two vCPUs take turns at `lock incq` (a load and a store of one
        // instruction), then at a load and a store in two instructions
        let feed = |index_of_store: u64| {
            let mut m: Interleaver = Interleaver::default();
            let mut coh = 0;
            for k in 0..10u64 {
                let v = (k % 2) as usize;
                m.block(v, 10);
                m.access(v, 0, 9, false, 0);
                m.access(v, index_of_store, 9, true, 0);
                m.halt(v);
                m.advance_to(m.limit(), &mut |_, _, o| coh += o.coherence as usize);
            }
            coh
        };
        assert_eq!(feed(0), 9);
        assert_eq!(feed(1), 18);
    }

    #[test]
    fn a_halted_vcpu_does_not_hold_the_interleaving_up() {
        let mut m: Interleaver = Interleaver::default();
        let mut n = 0;
        let mut seen = |_: usize, _: &Access, _: Transfer| n += 1;
        m.block(1, 5);
        m.halt(1);
        for _ in 0..10 {
            m.block(0, 10);
            m.access(0, 1, 3, true, 0);
            m.advance_to(m.limit(), &mut seen);
        }
        // all but the current block's access went through
        assert_eq!(n, 9);
        // vCPU 1 wakes: it joins at the interleaving's point, not at its own 5
        m.block(1, 10);
        m.access(1, 0, 3, false, 0);
        let mut order = Vec::new();
        m.advance_to(u64::MAX, &mut |v, a, _| order.push((v, a.stamp)));
        assert_eq!(order, [(1, 90), (0, 91)]);
    }
}

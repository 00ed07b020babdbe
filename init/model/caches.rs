//! The simulated caches of `vm --cache`: set-associative, least recently
//! used, as cachegrind's: a private L1i and L1d per vCPU and one
//! last-level cache they share, indexed and tagged by virtual address, no
//! prefetcher. The QEMU plugin (plugin/) runs it on every kernel and user
//! access inside the measured windows; the host picks the geometry of the
//! pinned CPU model and records it.

use std::fmt;
use std::io;

/// One cache's size, associativity and line size, in bytes and ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub size: u64,
    pub ways: u64,
    pub line: u64,
}

impl Geometry {
    /// `SIZE:WAYS:LINE`, the plugin's argument (`profile::qemu_arg`); an
    /// invalid one is an `InvalidInput` error, which the plugin gives
    /// QEMU to refuse it by.
    pub fn parse(s: &str) -> Result<Geometry, io::Error> {
        let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
        let bad = || {
            invalid(format!(
                "cache geometry '{s}' is not SIZE:WAYS:LINE (bytes, ways, bytes)"
            ))
        };
        let mut f = s.split(':').map(|n| n.parse::<u64>().map_err(|_| bad()));
        let (Some(size), Some(ways), Some(line), None) = (f.next(), f.next(), f.next(), f.next())
        else {
            return Err(bad());
        };
        let g = Geometry {
            size: size?,
            ways: ways?,
            line: line?,
        };
        let sets = g.size / g.ways.max(1) / g.line.max(1);
        if g.ways == 0 || !g.line.is_power_of_two() || sets == 0 || sets * g.ways * g.line != g.size
        {
            return Err(invalid(format!(
                "cache geometry '{s}': the size must be ways x sets x a power-of-two line"
            )));
        }
        Ok(g)
    }
}

impl fmt::Display for Geometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = if self.size.is_multiple_of(1 << 20) {
            format!("{} MiB", self.size >> 20)
        } else {
            format!("{} KiB", self.size >> 10)
        };
        write!(f, "{size} {}-way", self.ways)
    }
}

/// One cache: `ways` tags a set, most recently used first.
pub struct Cache {
    tags: Vec<u64>,
    ways: usize,
    sets: u64,
    line_shift: u32,
}

impl Cache {
    pub fn new(g: Geometry) -> Cache {
        let sets = g.size / g.ways / g.line;
        Cache {
            // no address is line u64::MAX: an empty way
            tags: vec![u64::MAX; (sets * g.ways) as usize],
            ways: g.ways as usize,
            sets,
            line_shift: g.line.trailing_zeros(),
        }
    }

    /// The line of `addr`.
    pub fn line_of(&self, addr: u64) -> u64 {
        addr >> self.line_shift
    }

    /// Looks `line` up and makes it the most recently used of its set;
    /// true on a hit.
    pub fn access(&mut self, line: u64) -> bool {
        let set = (line % self.sets) as usize * self.ways;
        let ways = &mut self.tags[set..set + self.ways];
        match ways.iter().position(|&t| t == line) {
            Some(i) => {
                ways[..=i].rotate_right(1);
                true
            }
            None => {
                ways.rotate_right(1);
                ways[0] = line;
                false
            }
        }
    }
}

/// The misses of one access: in its L1, and in the last level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Misses {
    pub l1: u64,
    pub ll: u64,
}

/// The caches of a machine: L1i and L1d per vCPU, the last level shared.
pub struct Hierarchy {
    l1i: Geometry,
    l1d: Geometry,
    cpus: Vec<(Cache, Cache)>,
    ll: Cache,
}

impl Hierarchy {
    pub fn new(l1i: Geometry, l1d: Geometry, ll: Geometry) -> Hierarchy {
        Hierarchy {
            l1i,
            l1d,
            cpus: Vec::new(),
            ll: Cache::new(ll),
        }
    }

    /// The lines of `len` bytes at `addr` through an L1 and the last
    /// level; an access that straddles lines misses once if any of them
    /// does, as cachegrind counts it.
    fn lines(&mut self, vcpu: usize, data: bool, addr: u64, len: u64) -> Misses {
        while self.cpus.len() <= vcpu {
            self.cpus.push((Cache::new(self.l1i), Cache::new(self.l1d)));
        }
        let (i, d) = &mut self.cpus[vcpu];
        let l1 = if data { d } else { i };
        let mut m = Misses::default();
        for line in l1.line_of(addr)..=l1.line_of(addr + len.max(1) - 1) {
            if !l1.access(line) {
                m.l1 = 1;
                let at = line << l1.line_shift;
                if !self.ll.access(self.ll.line_of(at)) {
                    m.ll = 1;
                }
            }
        }
        m
    }

    /// A block's instruction fetch: `len` bytes of code at `addr`. Its
    /// lines are fetched once each, which misses as often as fetching
    /// each instruction would.
    pub fn fetch(&mut self, vcpu: usize, addr: u64, len: u64) -> Misses {
        let mut m = Misses::default();
        let line = self.l1i.line;
        let mut at = addr;
        while at < addr + len {
            let next = (at / line + 1) * line;
            let one = self.lines(vcpu, false, at, next.min(addr + len) - at);
            m.l1 += one.l1;
            m.ll += one.ll;
            at = next;
        }
        m
    }

    /// A load or a store of `size` bytes at `addr`.
    pub fn data(&mut self, vcpu: usize, addr: u64, size: u64) -> Misses {
        self.lines(vcpu, true, addr, size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L1: Geometry = Geometry {
        size: 1024,
        ways: 2,
        line: 64,
    };
    const LL: Geometry = Geometry {
        size: 4096,
        ways: 4,
        line: 64,
    };

    #[test]
    fn geometry_parses_and_refuses_what_no_cache_is() {
        assert_eq!(
            Geometry::parse("65536:2:64").unwrap(),
            Geometry {
                size: 65536,
                ways: 2,
                line: 64
            }
        );
        for bad in [
            "65536:2",
            "65536:2:64:1",
            "x:2:64",
            "65536:0:64",
            "65536:2:48",
            "100:2:64",
        ] {
            let e = Geometry::parse(bad).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad}");
        }
        assert_eq!(
            Geometry::parse("16777216:16:64").unwrap().to_string(),
            "16 MiB 16-way"
        );
    }

    #[test]
    fn a_set_keeps_its_most_recently_used_lines() {
        // 8 sets of 2 ways: lines 0, 8 and 16 share set 0
        let mut c = Cache::new(L1);
        assert!(!c.access(0));
        assert!(!c.access(8));
        assert!(c.access(0));
        // 16 evicts 8, the least recently used, not 0
        assert!(!c.access(16));
        assert!(c.access(0));
        assert!(!c.access(8));
        // other sets are untouched
        assert!(!c.access(1));
        assert!(c.access(1));
    }

    #[test]
    fn misses_go_to_the_last_level_and_straddles_count_once() {
        let mut h = Hierarchy::new(L1, L1, LL);
        assert_eq!(h.data(0, 0, 8), Misses { l1: 1, ll: 1 });
        assert_eq!(h.data(0, 8, 8), Misses::default());
        // 60..68 straddles lines 0 and 1: one access, one miss
        assert_eq!(h.data(0, 60, 8), Misses { l1: 1, ll: 1 });
        // another vCPU has its own L1 but shares the last level
        assert_eq!(h.data(1, 0, 8), Misses { l1: 1, ll: 0 });
        // code and data have their own L1s
        assert_eq!(h.fetch(0, 0, 4), Misses { l1: 1, ll: 0 });
    }

    #[test]
    fn a_fetch_misses_once_a_line_it_spans() {
        let mut h = Hierarchy::new(L1, L1, LL);
        // 100 bytes from 60: lines 0, 1 and 2
        assert_eq!(h.fetch(0, 60, 100), Misses { l1: 3, ll: 3 });
        assert_eq!(h.fetch(0, 60, 100), Misses::default());
    }

    #[test]
    fn a_ring_larger_than_the_l1_misses_it_every_access() {
        // the planted change of scripts/proofs/cache-proof.sh, in small: a ring of
        // 32 lines through a 16-line L1 held by a 64-line last level
        let mut h = Hierarchy::new(L1, L1, LL);
        let ring: Vec<u64> = (0..32).map(|i| i * 64).collect();
        for &a in &ring {
            h.data(0, a, 8);
        }
        let second: Vec<Misses> = ring.iter().map(|&a| h.data(0, a, 8)).collect();
        assert!(
            second.iter().all(|m| *m == Misses { l1: 1, ll: 0 }),
            "{second:?}"
        );
    }
}

//! Run options: what to run and how, from the command line of `trig-init
//! run` or from `trig.*` kernel parameters, which the host writes with
//! [`RunOptions::to_kernel_args`] and the guest reads back.

use crate::report::Params;

pub const DEFAULT_STR_LENS: &[u32] = &[1, 8, 64, 512, 2048, 4095];
pub const MAX_STR_LEN: u32 = 4095;
/// Bounds of `-w` and `-d`: an hour each is more than any benchmark wants,
/// and keeps every derived figure (samples, watchdog) far from overflow.
pub const MAX_SECONDS: f64 = 3600.0;
/// Below a millisecond the sampling thread's own wake-ups dominate.
pub const MIN_DURATION: f64 = 0.001;
/// A watchdog longer than a week is a typo.
pub const MAX_TIMEOUT: u32 = 7 * 24 * 3600;

#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    pub filter: Vec<String>,
    /// Seconds; fractions allowed (sub-second runs suit the icount meter).
    pub warmup: f64,
    pub duration: f64,
    pub producers: Vec<usize>,
    pub affinity: bool,
    pub batch_iters: u32,
    pub cmp_str_lens: Vec<u32>,
    /// Run the rename producer on the main thread instead of a worker.
    pub rename_on_main: bool,
    /// Overall watchdog in seconds; 0 picks one from the matrix size.
    pub timeout: u32,
    /// Per-second progress lines and libbpf's messages on stderr.
    pub verbose: bool,
    /// After the matrix, time a bare getpgid loop that counts nothing, to
    /// put trig-base's counting overhead in the report.
    pub harness: bool,
    /// Mark each measured window for the QEMU plugin behind `--profile`,
    /// and hand the host the kernel's symbols.
    pub profile: bool,
    /// Known slowdowns for validating comparisons: spin iterations per
    /// triggered call in the named benchmarks' producers.
    pub inject: Vec<Inject>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Inject {
    pub bench: String,
    pub spins: u32,
}

impl std::fmt::Display for Inject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.bench, self.spins)
    }
}

fn parse_inject(v: &str) -> Result<Inject, String> {
    let (bench, spins) = v
        .rsplit_once(':')
        .ok_or_else(|| format!("inject: '{v}' is not BENCH:SPINS"))?;
    if crate::registry::find(bench).is_none() {
        return Err(format!("inject: unknown benchmark '{bench}'"));
    }
    Ok(Inject {
        bench: bench.into(),
        spins: num("inject", spins)?,
    })
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            filter: Vec::new(),
            warmup: 1.0,
            duration: 5.0,
            producers: vec![1],
            affinity: false,
            batch_iters: 100,
            cmp_str_lens: DEFAULT_STR_LENS.to_vec(),
            rename_on_main: false,
            timeout: 0,
            verbose: false,
            harness: false,
            profile: false,
            inject: Vec::new(),
        }
    }
}

fn list<T: std::str::FromStr>(key: &str, v: &str) -> Result<Vec<T>, String> {
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse()
                .map_err(|_| format!("{key}: '{s}' is not a valid number"))
        })
        .collect()
}

fn num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{key}: '{v}' is not a valid number"))
}

/// Warm-up and duration under the icount meter, when not given: a tenth
/// of a guest second settles caches and the first calls, and 0.2 s (four
/// 50 ms samples) of counted instructions repeat from boot to boot to the
/// last digit, at a fifth of the wall time of upstream's 1 + 5 s.
pub const ICOUNT_WARMUP: f64 = 0.1;
pub const ICOUNT_DURATION: f64 = 0.2;

impl RunOptions {
    /// Applies one `key=value` option (the `trig.` prefix already removed).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "filter" => self.filter = value.split(',').map(str::to_string).collect(),
            "warmup" => self.warmup = num(key, value)?,
            "duration" => self.duration = num(key, value)?,
            "producers" => self.producers = list(key, value)?,
            "affinity" => self.affinity = matches!(value, "1" | "true" | "yes"),
            "batch_iters" => self.batch_iters = num(key, value)?,
            "cmp_str_len" => self.cmp_str_lens = list(key, value)?,
            "rename_thread" => self.rename_on_main = parse_rename_thread(value)?,
            "timeout" => self.timeout = num(key, value)?,
            "verbose" => self.verbose = matches!(value, "1" | "true" | "yes"),
            "harness" => self.harness = matches!(value, "1" | "true" | "yes"),
            "profile" => self.profile = matches!(value, "1" | "true" | "yes"),
            "inject" => {
                self.inject = value
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(parse_inject)
                    .collect::<Result<_, _>>()?
            }
            _ => return Err(format!("unknown option trig.{key}")),
        }
        Ok(())
    }

    /// Reads `trig.*` parameters from a kernel command line.
    pub fn from_kernel_cmdline(cmdline: &str) -> Result<Self, String> {
        let mut opts = RunOptions::default();
        for word in cmdline.split_whitespace() {
            if let Some(kv) = word.strip_prefix("trig.") {
                let (k, v) = kv.split_once('=').unwrap_or((kv, "1"));
                opts.set(k, v)?;
            }
        }
        opts.validate()?;
        Ok(opts)
    }

    /// The `trig.*` kernel parameters that reproduce these options.
    pub fn to_kernel_args(&self) -> Vec<String> {
        let join = |xs: Vec<String>| xs.join(",");
        let mut args = vec![
            format!("trig.warmup={}", self.warmup),
            format!("trig.duration={}", self.duration),
            format!(
                "trig.producers={}",
                join(self.producers.iter().map(|p| p.to_string()).collect())
            ),
            format!("trig.batch_iters={}", self.batch_iters),
            format!(
                "trig.cmp_str_len={}",
                join(self.cmp_str_lens.iter().map(|p| p.to_string()).collect())
            ),
            format!("trig.rename_thread={}", self.rename_thread()),
        ];
        if !self.filter.is_empty() {
            args.push(format!("trig.filter={}", self.filter.join(",")));
        }
        if self.affinity {
            args.push("trig.affinity=1".into());
        }
        if self.timeout > 0 {
            args.push(format!("trig.timeout={}", self.timeout));
        }
        if self.verbose {
            args.push("trig.verbose=1".into());
        }
        if self.harness {
            args.push("trig.harness=1".into());
        }
        if self.profile {
            args.push("trig.profile=1".into());
        }
        if !self.inject.is_empty() {
            args.push(format!("trig.inject={}", self.inject_list()));
        }
        args
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(MIN_DURATION..=MAX_SECONDS).contains(&self.duration) {
            return Err(format!(
                "duration {} s is not in {MIN_DURATION}..{MAX_SECONDS} s",
                self.duration
            ));
        }
        if !(0.0..=MAX_SECONDS).contains(&self.warmup) {
            return Err(format!(
                "warmup {} s is not in 0..{MAX_SECONDS} s",
                self.warmup
            ));
        }
        if self.timeout > MAX_TIMEOUT {
            return Err(format!(
                "timeout {} s is over {MAX_TIMEOUT} s",
                self.timeout
            ));
        }
        if self.producers.is_empty() || self.producers.contains(&0) {
            return Err("producers must be a list of counts of at least 1".into());
        }
        if !(1..=1000).contains(&self.batch_iters) {
            return Err(format!(
                "batch_iters {} is not in 1..1000",
                self.batch_iters
            ));
        }
        if self.cmp_str_lens.is_empty()
            || self.cmp_str_lens.iter().any(|&l| l == 0 || l > MAX_STR_LEN)
        {
            return Err(format!("cmp_str_len must be in 1..{MAX_STR_LEN}"));
        }
        for pattern in &self.filter {
            if pattern.is_empty() || pattern.contains(char::is_whitespace) {
                return Err(format!("invalid benchmark filter '{pattern}'"));
            }
        }
        Ok(())
    }

    /// `BENCH:SPINS,...`, as `trig.inject=` takes it.
    pub fn inject_list(&self) -> String {
        let items: Vec<String> = self.inject.iter().map(ToString::to_string).collect();
        items.join(",")
    }

    /// Spin iterations injected into `bench`'s producers (0: none).
    pub fn spins(&self, bench: &str) -> u32 {
        self.inject
            .iter()
            .filter(|i| i.bench == bench)
            .map(|i| i.spins)
            .sum()
    }

    pub fn rename_thread(&self) -> &'static str {
        if self.rename_on_main {
            "main"
        } else {
            "worker"
        }
    }

    /// The watchdog for `points` benchmark runs: each one's time with room
    /// for loading and attaching, plus a minute; saturates rather than
    /// wraps for absurd inputs.
    pub fn watchdog_secs(&self, points: usize) -> u32 {
        if self.timeout > 0 {
            return self.timeout;
        }
        let secs = (self.warmup + self.duration + 10.0).ceil() * points as f64 + 60.0;
        secs.min(f64::from(u32::MAX)) as u32
    }

    pub fn params(&self, points: usize) -> Params {
        Params {
            filter: self.filter.clone(),
            warmup_s: self.warmup,
            duration_s: self.duration,
            producers: self.producers.clone(),
            affinity: self.affinity,
            batch_iters: self.batch_iters,
            cmp_str_lens: self.cmp_str_lens.clone(),
            rename_thread: self.rename_thread().into(),
            timeout_s: self.watchdog_secs(points),
            inject: (!self.inject.is_empty()).then(|| self.inject_list()),
        }
    }
}

pub fn parse_rename_thread(v: &str) -> Result<bool, String> {
    match v {
        "main" => Ok(true),
        "worker" => Ok(false),
        _ => Err(format!(
            "rename_thread must be 'main' or 'worker', not '{v}'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_upstream() {
        let o = RunOptions::from_kernel_cmdline("console=ttyS0 quiet").unwrap();
        assert_eq!((o.warmup, o.duration, o.batch_iters), (1.0, 5.0, 100));
        assert_eq!(o.producers, vec![1]);
        assert!(!o.affinity && !o.rename_on_main);
    }

    #[test]
    fn kernel_args_round_trip() {
        let o = RunOptions {
            filter: vec!["trig-*".into(), "rename-base".into()],
            warmup: 0.05,
            duration: 0.2,
            producers: vec![1, 2, 4],
            affinity: true,
            batch_iters: 50,
            cmp_str_lens: vec![8, 4095],
            rename_on_main: true,
            timeout: 99,
            verbose: true,
            harness: true,
            profile: true,
            inject: vec![
                Inject {
                    bench: "trig-kprobe".into(),
                    spins: 300,
                },
                Inject {
                    bench: "rename-base".into(),
                    spins: 7,
                },
            ],
        };
        let line = format!("console=ttyS0 {} panic=-1", o.to_kernel_args().join(" "));
        assert_eq!(RunOptions::from_kernel_cmdline(&line).unwrap(), o);
    }

    #[test]
    fn bad_options_are_named() {
        let e = RunOptions::from_kernel_cmdline("trig.durration=3").unwrap_err();
        assert!(e.contains("trig.durration"), "{e}");
        let e = RunOptions::from_kernel_cmdline("trig.producers=1,x").unwrap_err();
        assert!(e.contains("'x'"), "{e}");
        assert!(RunOptions::from_kernel_cmdline("trig.batch_iters=0").is_err());
        assert!(RunOptions::from_kernel_cmdline("trig.cmp_str_len=4096").is_err());
        assert!(RunOptions::from_kernel_cmdline("trig.producers=0").is_err());
        assert!(RunOptions::from_kernel_cmdline("trig.rename_thread=both").is_err());
        let e = RunOptions::from_kernel_cmdline("trig.inject=trig-nope:10").unwrap_err();
        assert!(e.contains("unknown benchmark 'trig-nope'"), "{e}");
        assert!(RunOptions::from_kernel_cmdline("trig.inject=trig-base").is_err());
    }

    #[test]
    fn absurd_durations_are_refused_before_anything_runs() {
        for bad in [
            "trig.duration=0",
            "trig.duration=-1",
            "trig.duration=NaN",
            "trig.duration=inf",
            "trig.duration=200000000",
            "trig.warmup=-0.5",
            "trig.warmup=1e12",
            "trig.timeout=4294967295",
        ] {
            assert!(RunOptions::from_kernel_cmdline(bad).is_err(), "{bad}");
        }
        let o = RunOptions::from_kernel_cmdline("trig.warmup=3600 trig.duration=3600").unwrap();
        // the largest accepted options keep the watchdog arithmetic finite
        assert!(o.watchdog_secs(usize::MAX) == u32::MAX);
        assert!(o.watchdog_secs(100) > 720_000);
    }
}

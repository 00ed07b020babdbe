//! KernelCI's common database (KCIDB) I/O schema v5.3, as PyPI's
//! `kcidb-io` holds it: a checkout per kernel (commit, or release when no
//! commit is known), a build per architecture and configuration, and one
//! test per benchmark and metric, its figure in `number`. Figures are
//! performance results, so a test is `DONE`; in a comparison a regression
//! is `FAIL`, and its verdict is in `misc`. IDs are `ORIGIN:...`, each
//! unique among its kind from this origin: a checkout names its commit or
//! release, a build adds the architecture and configuration, a test the
//! results file (a comparison: both sides') and the benchmark and metric,
//! so that submitting the same file again merges rather than duplicates.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use trig_analysis::compare::{Comparison, Metric, MetricComparison, SideInfo, Verdict};
use trig_analysis::gate;
use trig_analysis::history::{History, Point};
use trig_schema::error::{usage, Error};
use trig_schema::stats;
use trig_schema::{BenchResult, ContentionKind, Meter, RunSet, Status};

/// The schema version written.
pub const VERSION: (u32, u32) = (5, 3);

/// The test tree's root: tests are `trig_init.BENCH.METRIC`.
const PATH_ROOT: &str = "trig_init";

/// What the results do not say: who submits, and what was built from
/// where.
#[derive(Debug, Clone, PartialEq)]
pub struct KcidbOptions {
    /// The CI system's name, the prefix of every ID (`[a-z0-9_]+`).
    pub origin: String,
    /// The checkout's tree name (e.g. mainline, net-next).
    pub tree: Option<String>,
    /// The checkout's repository, an https URL.
    pub repo: Option<String>,
    /// The build's configuration name (e.g. defconfig); a Debian kernel's
    /// defaults to its package.
    pub config: Option<String>,
}

impl KcidbOptions {
    pub const DEFAULT_ORIGIN: &'static str = "trig_init";

    /// From `TRIG_INIT_KCIDB_ORIGIN`, `_TREE`, `_REPO` and `_CONFIG`; one
    /// set but empty is unset (an empty name is no name).
    pub fn from_env() -> Result<KcidbOptions, Error> {
        let var = |name: &str| {
            std::env::var(format!("TRIG_INIT_KCIDB_{name}"))
                .ok()
                .filter(|v| !v.is_empty())
        };
        KcidbOptions::new(var("ORIGIN"), var("TREE"), var("REPO"), var("CONFIG"))
    }

    /// Checks what KCIDB would refuse: the origin's characters and a
    /// repository that is not https.
    pub fn new(
        origin: Option<String>,
        tree: Option<String>,
        repo: Option<String>,
        config: Option<String>,
    ) -> Result<KcidbOptions, Error> {
        let origin = origin.unwrap_or_else(|| Self::DEFAULT_ORIGIN.into());
        let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
        if origin.is_empty() || !origin.chars().all(ok) {
            return Err(usage(format!(
                "TRIG_INIT_KCIDB_ORIGIN='{origin}': a KCIDB origin is lowercase letters, digits and _"
            )));
        }
        if let Some(r) = repo.as_deref().filter(|r| !r.starts_with("https://")) {
            return Err(usage(format!(
                "TRIG_INIT_KCIDB_REPO='{r}': KCIDB takes only https repository URLs"
            )));
        }
        Ok(KcidbOptions {
            origin,
            tree,
            repo,
            config,
        })
    }
}

/// The KCIDB exporter.
pub struct Kcidb(pub KcidbOptions);

/// `vm`'s and `ab`'s document: each results file written and its set.
pub struct Runs<'a> {
    pub files: &'a [std::path::PathBuf],
    pub sets: &'a [RunSet],
}

/// `ab`'s document: its results files and each kernel's comparison with
/// the first.
pub struct AbRuns<'a> {
    pub runs: Runs<'a>,
    pub comparisons: &'a [Comparison],
}

/// `history`'s document: every results file of the history and the
/// change points found in it.
pub struct HistoryRuns<'a> {
    pub entries: &'a [(Point, Vec<RunSet>)],
    pub history: &'a History,
}

/// The kernel and machine of a set of figures.
struct Kernel<'a> {
    release: &'a str,
    commit: Option<&'a str>,
    package: Option<&'a str>,
    arch: &'a str,
    accel: &'a str,
    meter: Meter,
    cpus: usize,
    /// `--icount-shift`: other figures than shift 0's.
    icount_shift: u32,
    created: Option<&'a str>,
}

impl<'a> Kernel<'a> {
    fn of_set(s: &'a RunSet) -> Self {
        Kernel {
            release: &s.kernel.release,
            commit: s.kernel.commit.as_deref(),
            package: s.kernel.package.as_deref(),
            arch: &s.vm.arch,
            accel: &s.vm.accel,
            meter: s.vm.meter,
            cpus: s.vm.cpus,
            icount_shift: s.vm.icount_shift,
            created: s.created.as_deref(),
        }
    }

    /// A side of a comparison: its newest kernel where it has several.
    fn of_side(s: &'a SideInfo, meter: Meter) -> Self {
        let last = |v: &'a [String]| v.last().map_or("", String::as_str);
        Kernel {
            release: last(&s.releases),
            commit: s.commits.last().map(String::as_str),
            package: s.packages.last().map(String::as_str),
            arch: last(&s.arch),
            accel: last(&s.accel),
            meter,
            cpus: s.cpus.last().copied().unwrap_or(0),
            icount_shift: s.icount_shift.last().copied().unwrap_or(0),
            created: None,
        }
    }

    fn environment(&self) -> Value {
        let shift = match self.icount_shift {
            0 => String::new(),
            n => format!(", icount shift {n}"),
        };
        let mut env = json!({
            "comment": format!(
                "QEMU {} {}, {} CPU(s), {} meter{shift}",
                self.accel, self.arch, self.cpus, self.meter.as_str()
            ),
            "misc": {
                "qemu": {"accel": self.accel, "arch": self.arch, "cpus": self.cpus},
                "meter": self.meter.as_str(),
            },
        });
        if self.icount_shift > 0 {
            env["misc"]["icount_shift"] = json!(self.icount_shift);
        }
        env
    }
}

/// A document being built: objects by ID, so that a checkout or build
/// shared by several results files appears once.
struct Doc<'a> {
    opts: &'a KcidbOptions,
    checkouts: BTreeMap<String, Value>,
    builds: BTreeMap<String, Value>,
    tests: Vec<Value>,
}

/// One test: a benchmark's metric, or the benchmark when it has no
/// figure.
struct Test<'a> {
    key: &'a str,
    bench: &'a str,
    metric: Option<Metric>,
    status: &'static str,
    value: Option<f64>,
    misc: Value,
}

impl<'a> Test<'a> {
    /// A benchmark without figures (it failed, is missing, or could not
    /// run): its verdict alone is its test's status.
    fn no_figures(key: &'a str, bench: &'a str, verdict: Verdict, misc: Value) -> Self {
        Test {
            key,
            bench,
            metric: None,
            status: gate::exported(verdict, false),
            value: None,
            misc,
        }
    }

    /// NEW's figure of one metric, with its verdict against BASE and
    /// what it rests on; `base` names BASE's kernels and files.
    fn compared(
        key: &'a str,
        bench: &'a str,
        m: &MetricComparison,
        meter: Meter,
        base: &Value,
    ) -> Self {
        let misc = json!({
            "verdict": m.verdict.as_str(),
            "change_pct": finite(m.change_pct),
            "ci_pct": [finite(m.ci_pct.0), finite(m.ci_pct.1)],
            "q": m.q.and_then(finite),
            "threshold_pct": m.threshold_pct,
            "base_median": finite(m.base.median),
            "boots": m.new.values,
            "unit": m.metric.unit(meter),
            "base": base,
        });
        Test {
            key,
            bench,
            metric: Some(m.metric),
            status: gate::exported(m.verdict, false),
            value: Some(m.new.median),
            misc,
        }
    }
}

impl<'a> Doc<'a> {
    fn new(opts: &'a KcidbOptions) -> Self {
        Doc {
            opts,
            checkouts: BTreeMap::new(),
            builds: BTreeMap::new(),
            tests: Vec::new(),
        }
    }

    fn id(&self, rest: &str) -> String {
        format!("{}:{rest}", self.opts.origin)
    }

    /// Adds the kernel's checkout and build; returns the build's ID. A
    /// kernel that never said its release (no boot reported) is named by
    /// the results' `key`.
    fn kernel(&mut self, k: &Kernel, key: &str) -> String {
        let origin = &self.opts.origin;
        let hash = k.commit.filter(|c| is_commit_hash(c));
        // vm records "unknown" until a boot reports its release
        let release = Some(k.release).filter(|r| !r.is_empty() && *r != "unknown");
        let name = k
            .commit
            .filter(|c| !c.is_empty())
            .or(release)
            .unwrap_or(key);
        let checkout_id = self.id(name);
        let mut checkout = json!({"id": checkout_id, "origin": origin});
        let mut misc = Map::new();
        if let Some(r) = release {
            misc.insert("release".into(), r.into());
        }
        if let Some(c) = k.commit.filter(|_| hash.is_none()) {
            misc.insert("commit".into(), c.into());
        }
        put(&mut checkout, "git_commit_hash", hash);
        // uname -r: git describe's output where the kernel was built with
        // CONFIG_LOCALVERSION_AUTO, the package's version otherwise
        put(&mut checkout, "git_commit_name", release);
        put(&mut checkout, "tree_name", self.opts.tree.as_deref());
        put(
            &mut checkout,
            "git_repository_url",
            self.opts.repo.as_deref(),
        );
        put(
            &mut checkout,
            "start_time",
            k.created.and_then(rfc3339).as_deref(),
        );
        checkout["misc"] = misc.into();
        let config = self.opts.config.as_deref().or(k.package);
        let arch = kernel_arch(k.arch);
        let build_id = self.id(&format!("{name}/{arch}/{}", config.unwrap_or("unknown")));
        let mut build = json!({
            "id": build_id, "origin": origin, "checkout_id": checkout_id,
            "architecture": arch,
        });
        put(&mut build, "config_name", config);
        self.checkouts.entry(checkout_id).or_insert(checkout);
        self.builds.entry(build_id.clone()).or_insert(build);
        build_id
    }

    fn test(&mut self, build_id: &str, k: &Kernel, t: Test) {
        let mut path = format!("{PATH_ROOT}.{}", path_part(t.bench));
        let mut id = format!("{}/{}", t.key, t.bench);
        if let Some(m) = t.metric {
            path = format!("{path}.{}", m.as_str());
            id = format!("{id}/{}", m.as_str());
        }
        let mut test = json!({
            "id": self.id(&id), "origin": self.opts.origin, "build_id": build_id,
            "path": path, "status": t.status, "environment": k.environment(),
            "misc": without_nulls(t.misc),
        });
        if let (Some(m), Some(v)) = (t.metric, t.value.filter(|v| v.is_finite())) {
            test["number"] = number(m, k.meter, v);
        }
        put(
            &mut test,
            "start_time",
            k.created.and_then(rfc3339).as_deref(),
        );
        self.tests.push(test);
    }

    /// Every benchmark and metric of one results file.
    fn set(&mut self, key: &str, set: &RunSet, verdicts: &BTreeMap<(&str, &str), Value>) {
        let k = Kernel::of_set(set);
        let build = self.kernel(&k, key);
        // each result with its boot's, where its baseline is
        let results: Vec<_> = set
            .runs
            .iter()
            .filter_map(|r| r.report.as_ref())
            .flat_map(|r| r.results.iter().map(|b| (b, r.results.as_slice())))
            .collect();
        let mut names: Vec<&str> = Vec::new();
        for (r, _) in &results {
            if !names.contains(&r.name.as_str()) {
                names.push(&r.name);
            }
        }
        for bench in names {
            let boots: Vec<_> = results.iter().filter(|(r, _)| r.name == bench).collect();
            let of: Vec<_> = boots.iter().map(|(r, _)| *r).collect();
            if !of.iter().any(|r| r.status == Status::Ok) {
                self.unmeasured(&build, &k, key, bench, &of);
                continue;
            }
            // the kernel's instructions where it was profiled
            for metric in Metric::ALL {
                let values: Vec<f64> = boots
                    .iter()
                    .filter_map(|(r, boot)| metric.value(r, boot))
                    .collect();
                if values.is_empty() {
                    continue;
                }
                let mut misc = json!({"boots": values, "unit": metric.unit(k.meter)});
                let mut status = "DONE";
                if let Some(found) = verdicts.get(&(bench, metric.as_str())) {
                    // a pending step waits for the next result: never FAIL yet
                    let pending = found["pending"] == true;
                    if found["regression"] == true {
                        status = gate::exported(Verdict::Regressed, pending);
                    }
                    misc["change_point"] = found.clone();
                    misc["pending"] = json!(pending);
                }
                let value = Some(stats::median(&values));
                self.test(
                    &build,
                    &k,
                    Test {
                        key,
                        bench,
                        metric: Some(metric),
                        status,
                        value,
                        misc,
                    },
                );
            }
        }
    }

    /// A benchmark no boot measured: skipped where unsupported throughout,
    /// else an error, with the reason of a boot.
    fn unmeasured(&mut self, build: &str, k: &Kernel, key: &str, bench: &str, of: &[&BenchResult]) {
        let skip = of.iter().all(|r| r.status == Status::Unsupported);
        let why = of.iter().find_map(|r| r.reason.clone());
        let verdict = if skip {
            Verdict::Unsupported
        } else {
            Verdict::Failed
        };
        let misc = json!({"reason": why.unwrap_or_else(|| of[0].status.as_str().into())});
        self.test(build, k, Test::no_figures(key, bench, verdict, misc));
    }

    /// NEW's figures of a comparison, each with its verdict against BASE.
    fn comparison(&mut self, c: &Comparison) {
        let key = format!("{}-vs-{}", side_key(&c.new), side_key(&c.base));
        let k = Kernel::of_side(&c.new, c.meter);
        let build = self.kernel(&k, &side_key(&c.new));
        let base = json!({
            "releases": c.base.releases, "commits": c.base.commits, "files": c.base.files,
        });
        for b in &c.benches {
            let bench = b.name.as_str();
            if matches!(
                b.verdict,
                Verdict::Missing | Verdict::Failed | Verdict::Unsupported
            ) {
                let misc = json!({"verdict": b.verdict.as_str(), "reason": b.reason, "base": base});
                self.test(&build, &k, Test::no_figures(&key, bench, b.verdict, misc));
                continue;
            }
            for m in &b.metrics {
                self.test(&build, &k, Test::compared(&key, bench, m, c.meter, &base));
            }
        }
    }

    fn finish(self) -> String {
        let doc = json!({
            "version": {"major": VERSION.0, "minor": VERSION.1},
            "checkouts": self.checkouts.into_values().collect::<Vec<_>>(),
            "builds": self.builds.into_values().collect::<Vec<_>>(),
            "tests": self.tests,
        });
        serde_json::to_string_pretty(&without_nul(doc)).expect("KCIDB serializes") + "\n"
    }
}

impl crate::Exporter<Runs<'_>> for Kcidb {
    fn export(&self, r: &Runs<'_>) -> String {
        let mut doc = Doc::new(&self.0);
        for (file, set) in r.files.iter().zip(r.sets) {
            doc.set(&file_key(file), set, &BTreeMap::new());
        }
        doc.finish()
    }
}

impl crate::Exporter<HistoryRuns<'_>> for Kcidb {
    /// Every result of the history; a test at a change point carries it,
    /// and fails when the change is for the worse.
    fn export(&self, h: &HistoryRuns<'_>) -> String {
        let mut doc = Doc::new(&self.0);
        for (i, (point, sets)) in h.entries.iter().enumerate() {
            let found: BTreeMap<(&str, &str), Value> = h
                .history
                .found
                .iter()
                .filter(|f| f.at == i)
                .map(|f| {
                    let c = &f.change;
                    let v = json!({
                        "before": c.before, "after": c.after, "change_pct": c.change_pct,
                        "p": c.p, "regression": f.regression, "new": f.new,
                        "pending": f.pending,
                    });
                    ((f.bench.as_str(), f.metric.as_str()), v)
                })
                .collect();
            for set in sets {
                doc.set(&file_key(Path::new(&point.file)), set, &found);
            }
        }
        doc.finish()
    }
}

impl crate::Exporter<Comparison> for Kcidb {
    fn export(&self, c: &Comparison) -> String {
        let mut doc = Doc::new(&self.0);
        doc.comparison(c);
        doc.finish()
    }
}

impl crate::Exporter<AbRuns<'_>> for Kcidb {
    /// The first kernel's figures, then each other's with its verdicts.
    fn export(&self, ab: &AbRuns<'_>) -> String {
        let mut doc = Doc::new(&self.0);
        if let (Some(file), Some(set)) = (ab.runs.files.first(), ab.runs.sets.first()) {
            doc.set(&file_key(file), set, &BTreeMap::new());
        }
        for c in ab.comparisons {
            doc.comparison(c);
        }
        doc.finish()
    }
}

/// KCIDB allows no nulls; a figure not known is left out.
fn without_nulls(v: Value) -> Value {
    match v {
        Value::Object(o) => o
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k, without_nulls(v)))
            .collect::<Map<_, _>>()
            .into(),
        v => v,
    }
}

/// KCIDB's strings hold anything but NUL, and outside text (a release,
/// a commit, a benchmark's name, in IDs too) may: shown as `\0`, the
/// same in every string, so that IDs still match.
fn without_nul(v: Value) -> Value {
    let text = |s: String| {
        if s.contains('\0') {
            s.replace('\0', "\\0")
        } else {
            s
        }
    };
    match v {
        Value::String(s) => text(s).into(),
        Value::Array(a) => a.into_iter().map(without_nul).collect(),
        Value::Object(o) => o
            .into_iter()
            .map(|(k, v)| (text(k), without_nul(v)))
            .collect::<Map<_, _>>()
            .into(),
        v => v,
    }
}

/// JSON has no NaN or infinity: those are left out.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn put(obj: &mut Value, key: &str, v: Option<&str>) {
    if let Some(v) = v {
        obj[key] = v.into();
    }
}

/// A benchmark's name as nodes of KCIDB's test tree: a result's
/// parameter after `/` is a node of its own (`strncmp-baseline/len=8`:
/// `strncmp-baseline.len_8`), and what a node cannot hold becomes `_`;
/// a node of nothing (an empty name, `a//b`) is `_` too, as KCIDB takes
/// no empty node.
fn path_part(bench: &str) -> String {
    let nodes: Vec<String> = bench
        .split('/')
        .map(|node| match node {
            "" => "_".into(),
            n => n
                .chars()
                .map(|c| match c {
                    c if c.is_ascii_alphanumeric() || c == '-' || c == '_' => c,
                    _ => '_',
                })
                .collect(),
        })
        .collect();
    nodes.join(".")
}

fn is_commit_hash(c: &str) -> bool {
    c.len() == 40 && trig_schema::is_object_name(c)
}

/// The kernel's name for the architecture, as KCIDB's builds use it.
fn kernel_arch(arch: &str) -> &str {
    match arch {
        "aarch64" => "arm64",
        a => a,
    }
}

/// A side of a comparison as a key: its results files' names joined by
/// `+`.
fn side_key(s: &SideInfo) -> String {
    let keys: Vec<String> = s.files.iter().map(|f| file_key(Path::new(f))).collect();
    keys.join("+")
}

/// A results file's name without its directory and `.json`.
fn file_key(file: &Path) -> String {
    file.file_stem().map_or_else(
        || file.display().to_string(),
        |s| s.to_string_lossy().into(),
    )
}

/// `20261130T012345Z` as RFC 3339; None when it is not that form.
fn rfc3339(t: &str) -> Option<String> {
    trig_schema::is_timestamp(t).then(|| {
        format!(
            "{}-{}-{}T{}:{}:{}Z",
            &t[0..4],
            &t[4..6],
            &t[6..8],
            &t[9..11],
            &t[11..13],
            &t[13..15]
        )
    })
}

/// KCIDB's `number`: a rate in events per unit, scaled by the display's
/// metric prefix (M events per second shows as such); a cost as is.
fn number(metric: Metric, meter: Meter, value: f64) -> Value {
    match (metric, meter) {
        (Metric::Rate, Meter::Time) => {
            json!({"value": value * 1e6, "unit": "events/s", "prefix": "metric"})
        }
        (Metric::Rate, Meter::Icount) => {
            json!({"value": value * 1e6, "unit": "events/Ginsn", "prefix": "metric"})
        }
        (Metric::Overhead, _) => json!({"value": value, "unit": meter.cost_unit()}),
        (Metric::Kernel | Metric::KernelOverhead, _) => {
            json!({"value": value, "unit": "insn/event"})
        }
        // traps/event, syscalls/event, interrupts/event, kernel L1d
        // misses/event, ...
        (m @ (Metric::Entries(_) | Metric::EntriesOverhead(_) | Metric::Memory(_)), _) => {
            json!({"value": value, "unit": m.unit(meter).trim_end_matches(" over baseline")})
        }
        (Metric::Contention(ContentionKind::Rate), _) => {
            json!({"value": value * 1e6, "unit": "events/Gcycle per producer (model)", "prefix": "metric"})
        }
        (m @ (Metric::Contention(_) | Metric::Figure(_)), _) => {
            json!({"value": value, "unit": m.unit(meter)})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exporter;
    use trig_analysis::changepoint;
    use trig_analysis::fixtures::nights;
    use trig_analysis::history::analyse;
    use trig_schema::{BenchResult, Better};

    fn kcidb() -> Kcidb {
        Kcidb(
            KcidbOptions::new(
                None,
                Some("mainline".into()),
                None,
                Some("defconfig".into()),
            )
            .unwrap(),
        )
    }

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    // tests/cli.rs validates the documents with kcidb-io
    #[test]
    fn a_history_fails_the_tests_at_a_step_for_the_worse() {
        let entries = nights(20, 12);
        let h = analyse(
            "h",
            entries.clone(),
            &[Metric::Rate],
            &changepoint::Detection::default(),
            3,
        );
        let doc = parse(&kcidb().export(&HistoryRuns {
            entries: &entries,
            history: &h,
        }));
        assert_eq!(doc["checkouts"].as_array().unwrap().len(), 20);
        let c = &doc["checkouts"][0];
        assert_eq!(c["git_commit_hash"], format!("00{}", "ab".repeat(19)));
        assert_eq!(c["tree_name"], "mainline");
        assert_eq!(c["start_time"], "2026-11-01T00:00:00Z");
        let failed: Vec<&str> = doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["status"] == "FAIL")
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(
            failed,
            [
                "trig_init:n12/trig-kprobe/rate",
                "trig_init:n12/trig-kretprobe/rate"
            ]
        );
        let t = doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == failed[0])
            .unwrap();
        assert!(t["misc"]["change_point"]["change_pct"].as_f64().unwrap() < -10.0);
        assert_eq!(
            t["number"],
            json!({"value": 0.8 * 1.02 * 0.85 * 1e6, "unit": "events/s", "prefix": "metric"})
        );
        assert!(t["build_id"]
            .as_str()
            .unwrap()
            .ends_with("/x86_64/defconfig"));
    }

    #[test]
    fn a_benchmark_without_figures_is_an_error_or_a_skip() {
        let (_, mut sets) = nights(1, 9).remove(0);
        let report = sets[0].runs[0].report.as_mut().unwrap();
        let mut add = |name: &str, status: Status, reason: &str| {
            report.results.push(BenchResult {
                status,
                reason: Some(reason.into()),
                ..BenchResult::new(name, name, "trigger", 1, Better::Higher)
            })
        };
        add("trig-fentry", Status::Failed, "attach: EINVAL");
        add(
            "strncmp-baseline/len=8",
            Status::Unsupported,
            "no such helper",
        );
        let doc = parse(&kcidb().export(&Runs {
            files: &["r/x-k1.json".into()],
            sets: &sets,
        }));
        let test = |path: &str| {
            doc["tests"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["path"] == path)
                .unwrap()
                .clone()
        };
        let env = &test("trig_init.trig-base.rate")["environment"];
        assert!(env["misc"].get("icount_shift").is_none(), "{env}");
        sets[0].vm.icount_shift = 2;
        let shifted = parse(&kcidb().export(&Runs {
            files: &["r/x-k1.json".into()],
            sets: &sets,
        }));
        let env = &shifted["tests"][0]["environment"];
        assert_eq!(env["misc"]["icount_shift"], 2, "{env}");
        assert!(
            env["comment"]
                .as_str()
                .unwrap()
                .ends_with(", icount shift 2"),
            "{env}"
        );
        let fentry = test("trig_init.trig-fentry");
        assert_eq!(
            (&fentry["status"], &fentry["misc"]["reason"]),
            (&json!("ERROR"), &json!("attach: EINVAL"))
        );
        assert!(fentry.get("number").is_none());
        assert_eq!(test("trig_init.strncmp-baseline.len_8")["status"], "SKIP");
        assert_eq!(
            test("trig_init.trig-base.rate")["id"],
            "trig_init:x-k1/trig-base/rate"
        );
    }

    #[test]
    fn settings_kcidb_would_refuse_are_named() {
        let e = KcidbOptions::new(Some("Trig-Init".into()), None, None, None).unwrap_err();
        assert!(e.message.contains("'Trig-Init'"), "{e}");
        let e = KcidbOptions::new(None, None, Some("git://x".into()), None).unwrap_err();
        assert!(e.message.contains("https"), "{e}");
        assert_eq!(
            rfc3339("20261130T012345Z").as_deref(),
            Some("2026-11-30T01:23:45Z")
        );
        assert_eq!(rfc3339("2026-11-30"), None);
    }
}

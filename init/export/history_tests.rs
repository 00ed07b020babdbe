//! The tests of `history`: the change points it finds in synthetic
//! nights, and how its table and Markdown say so.

use crate::people::history_table::render;
use trig_analysis::changepoint;
use trig_analysis::compare::Metric;
use trig_analysis::fixtures::*;
use trig_analysis::history::*;
use trig_schema::*;

#[test]
fn finds_the_step_and_what_moved_with_it() {
    let h = analyse(
        "h",
        nights(20, 12),
        &[Metric::Rate],
        &changepoint::Detection::default(),
        3,
    );
    let benches: Vec<&str> = h.found.iter().map(|f| f.bench.as_str()).collect();
    assert_eq!(
        benches,
        vec!["trig-kprobe", "trig-kretprobe"],
        "{}",
        render(&h, false)
    );
    let f = &h.found[0];
    assert_eq!(f.at, 12);
    assert!(f.regression && !f.new);
    assert_eq!(f.moved_with, vec!["trig-kretprobe rate".to_string()]);
    let (good, bad) = f.bisect.clone().unwrap();
    assert!(
        good.starts_with("11") && bad.starts_with("12"),
        "{good} {bad}"
    );
    assert!((f.change.change_pct + 15.0).abs() < 3.0);
    let table = render(&h, false);
    assert!(table.contains("#13 6.1.12 @12ababababab"), "{table}");
    assert!(render(&h, true).contains("| trig-kprobe | rate |"));
}

#[test]
fn a_recent_change_is_new() {
    let h = analyse(
        "h",
        nights(15, 11),
        &[Metric::Rate],
        &changepoint::Detection::default(),
        5,
    );
    assert!(
        h.found.iter().all(|f| f.new && f.at == 11),
        "{}",
        render(&h, false)
    );
    assert!(!h.found.is_empty());
}

/// Runs `history --alert` night after night over `nights`, from night
/// `from` on: the alerts each night raised. Every night's history still
/// holds every change point alerted before: none is forgotten.
fn alerts_per_night(nights: &[(Point, Vec<RunSet>)], from: usize) -> Vec<Vec<Alert>> {
    let mut recorded: Vec<Alert> = Vec::new();
    (from..=nights.len())
        .map(|n| {
            let s = changepoint::Detection {
                min_change: default_min_change_pct(&nights[..n]) / 100.0,
                ..changepoint::Detection::default()
            };
            let mut h = analyse("h", nights[..n].to_vec(), &[Metric::Rate], &s, 3);
            let fresh = match_alerts(&mut h, &recorded);
            let remembered = h.found.iter().filter(|f| f.alerted.is_some()).count();
            assert_eq!(
                remembered,
                recorded.len(),
                "night {n} forgot an alerted change point: {recorded:?}\n{}",
                render(&h, false)
            );
            if !fresh.is_empty() {
                assert!(render(&h, true).contains("**ALERT**: trig-kprobe rate"));
            }
            recorded.extend(fresh.iter().cloned());
            fresh
        })
        .collect()
}

#[test]
fn a_step_is_alerted_exactly_once() {
    // trig-kprobe and trig-kretprobe step at result 10 of 24
    let per_night: Vec<usize> = alerts_per_night(&nights(24, 10), 4)
        .iter()
        .map(Vec::len)
        .collect();
    trig_schema::stderrln!("alerts per night, nights 4 to 24: {per_night:?}");
    assert_eq!(per_night.iter().sum::<usize>(), 2, "{per_night:?}");
    let first = per_night.iter().position(|&a| a > 0).unwrap() + 4;
    // result 10 is the first after the step: alerted once 3 follow it
    assert_eq!(first, 13, "{per_night:?}");
}

/// The results of a history, each with its point.
type Nights = Vec<(Point, Vec<RunSet>)>;

/// One benchmark under icount on nights of these lengths at these levels
/// (`(nights, level)` in order), with 0.01% of seeded noise.
fn staircase(levels: &[(usize, f64)]) -> Nights {
    let level: Vec<f64> = levels
        .iter()
        .flat_map(|&(n, l)| std::iter::repeat_n(l, n))
        .collect();
    let mut rng = fastrand::Rng::with_seed(25);
    let noise: Vec<f64> = level
        .iter()
        .map(|_| 1.0 + 0.0001 * (rng.f64() * 2.0 - 1.0))
        .collect();
    nights_of(level.len(), Meter::Icount, |i| {
        vec![("trig-kprobe", 7.0 * level[i] * noise[i])]
    })
}

/// The staircases of issue 25: 25 nights at 1.0, then 12 or 5 at 0.99,
/// then the rest at 0.975.
fn staircases() -> Vec<(&'static str, Nights, Vec<usize>)> {
    [
        ("25/12/3", 12, 3),
        ("25/12/6", 12, 6),
        ("25/5/3", 5, 3),
        ("25/5/4", 5, 4),
        ("25/5/5", 5, 5),
    ]
    .into_iter()
    .map(|(name, mid, last)| {
        let nights = staircase(&[(25, 1.0), (mid, 0.99), (last, 0.975)]);
        (name, nights, vec![25, 25 + mid])
    })
    .collect()
}

#[test]
fn icount_finds_every_step_of_a_staircase() {
    for (name, nights, steps) in staircases() {
        let s = changepoint::Detection {
            min_change: default_min_change_pct(&nights) / 100.0,
            ..changepoint::Detection::default()
        };
        let h = analyse("h", nights, &[Metric::Rate], &s, 3);
        let at: Vec<usize> = h.found.iter().map(|f| f.at).collect();
        assert_eq!(at, steps, "{name}: {}", render(&h, false));
        let pct: Vec<f64> = h.found.iter().map(|f| f.change.change_pct).collect();
        assert!((pct[0] + 1.0).abs() < 0.05, "{name}: {pct:?}");
        assert!((pct[1] + 1.515).abs() < 0.05, "{name}: {pct:?}");
    }
}

#[test]
fn icount_alerts_each_step_the_night_after_it() {
    for (name, nights, steps) in staircases() {
        let alerts = alerts_per_night(&nights, 2);
        // nights counted from 1: night k is the history of the first k
        let alerted: Vec<(usize, String)> = alerts
            .iter()
            .enumerate()
            .flat_map(|(k, fresh)| fresh.iter().map(move |a| (k + 2, a.file.clone())))
            .collect();
        trig_schema::stderrln!("{name}: alerted (night, first result after the step): {alerted:?}");
        // the step's first result is night at + 1; the next one confirms it
        let expected: Vec<(usize, String)> = steps
            .iter()
            .map(|&at| (at + 2, format!("n{at}.json")))
            .collect();
        assert_eq!(alerted, expected, "{name}");
    }
}

#[test]
fn a_short_history_says_what_it_needs() {
    let h = analyse(
        "h",
        nights(4, 2),
        &[Metric::Rate],
        &changepoint::Detection::default(),
        3,
    );
    let t = render(&h, false);
    assert!(
        t.contains("4 results, and a change point needs at least 12 (3 after the step"),
        "{t}"
    );
}

#[test]
fn icount_finds_a_half_percent_step_at_its_noise() {
    // icount's boots agree to 0.01-0.05%: a 0.5% step is far above it,
    // and far below the time meter's 5%
    for cv in [0.0001, 0.0005] {
        let mut rng = fastrand::Rng::with_seed(11);
        let jitter: Vec<f64> = (0..20)
            .map(|_| cv * 1.7 * (rng.f64() - 0.5) * 2.0)
            .collect();
        let nights = nights_of(20, Meter::Icount, |i| {
            let step = if i >= 12 { 0.995 } else { 1.0 };
            vec![
                ("trig-base", 40.0),
                ("trig-kprobe", 7.0 * step * (1.0 + jitter[i])),
            ]
        });
        assert_eq!(default_min_change_pct(&nights), 0.25);
        let s = changepoint::Detection {
            min_change: 0.0025,
            ..changepoint::Detection::default()
        };
        let h = analyse("h", nights, &[Metric::Rate], &s, 3);
        assert_eq!(h.meter, Meter::Icount);
        let at: Vec<(&str, usize)> = h.found.iter().map(|f| (f.bench.as_str(), f.at)).collect();
        assert_eq!(
            at,
            vec![("trig-kprobe", 12)],
            "cv {cv}: {}",
            render(&h, false)
        );
        assert!((h.found[0].change.change_pct + 0.5).abs() < 0.1);
    }
}

#[test]
fn an_incomparable_result_splits_the_series() {
    let mut h = nights(20, 99);
    for (_, sets) in &mut h[10..] {
        // another machine, ten times slower
        sets[0].vm.arch = "aarch64".into();
        for r in sets[0].runs.iter_mut().filter_map(|r| r.report.as_mut()) {
            for b in &mut r.results {
                b.summary.as_mut().unwrap().mean /= 10.0;
            }
        }
    }
    let h = analyse(
        "h",
        h,
        &[Metric::Rate],
        &changepoint::Detection::default(),
        3,
    );
    assert!(h.found.is_empty(), "{}", render(&h, false));
    assert_eq!(h.breaks.len(), 1);
    assert_eq!(h.breaks[0].at, 10);
    assert!(
        h.breaks[0].why.iter().any(|w| w.contains("architecture")),
        "{:?}",
        h.breaks
    );
    assert!(
        render(&h, false).contains("results from #11 6.1.10"),
        "{}",
        render(&h, false)
    );
}

#[test]
fn a_flat_history_has_none() {
    let h = analyse(
        "h",
        nights(20, 99),
        &[Metric::Rate, Metric::Overhead],
        &changepoint::Detection::default(),
        3,
    );
    assert!(h.found.is_empty(), "{}", render(&h, false));
    assert!(render(&h, false).contains("no change points"));
    // in Markdown a blank line ends the table first, or the sentence
    // renders as one more row of it
    let md = render(&h, true);
    let at = md.find("no change points").unwrap();
    assert!(md[..at].ends_with("|\n\n"), "{md}");
}

/// An update of trig-init at result 8 moves trig-kprobe's rate (its own
/// code); a kernel change at 14 adds 10 of the kernel's instructions per
/// event (issue 26): the rate series splits at the update and finds
/// nothing, the kernel series, in all and over the baseline, run on
/// across it and find the step.
#[test]
fn the_kernel_metrics_continue_across_a_trig_init_update() {
    let mut entries = nights_of(20, Meter::Icount, |i| {
        vec![
            ("trig-base", 2.0),
            ("trig-kprobe", if i >= 8 { 0.79 } else { 0.8 }),
        ]
    });
    for (i, (_, sets)) in entries.iter_mut().enumerate() {
        let rep = sets[0].runs[0].report.as_mut().unwrap();
        if i >= 8 {
            rep.tool.git_rev = "updated".into();
        }
        for r in &mut rep.results {
            let kernel = match (r.name.as_str(), i >= 14) {
                ("trig-kprobe", true) => 660.0,
                ("trig-kprobe", false) => 650.0,
                _ => 316.0,
            };
            r.profile = Some(Profile {
                total: 700.0,
                kernel,
                functions: Vec::new(),
                entries: None,
                memory: None,
                contention: None,
                source: None,
            });
            // the baseline a guest records
            trig_schema::upgrade::fill(r);
        }
        trig_schema::add_overheads(&mut rep.results);
    }
    let settings = changepoint::Detection {
        min_change: 0.0025,
        ..changepoint::Detection::default()
    };
    let metrics = [Metric::Rate, Metric::Kernel, Metric::KernelOverhead];
    let h = analyse("h", entries, &metrics, &settings, 3);
    assert_eq!(h.breaks.len(), 1, "{}", render(&h, false));
    assert!(h.breaks[0].at == 8 && h.breaks[0].build_only);
    assert!(render(&h, false)
        .contains("only with results of its own kind, but for the kernel's instructions"));
    let found: Vec<_> = h
        .found
        .iter()
        .map(|f| (f.bench.as_str(), f.metric, f.at))
        .collect();
    assert_eq!(
        found,
        [
            ("trig-kprobe", Metric::Kernel, 14),
            ("trig-kprobe", Metric::KernelOverhead, 14)
        ],
        "{}",
        render(&h, false)
    );
}

/// A count of entries steps by how many an event gained, from none too:
/// its size is absolute (it read "+inf%").
#[test]
fn an_entry_step_from_none_reads_as_what_an_event_gained() {
    let step = |metric: Metric, before: f64, after: f64| Found {
        bench: "trig-uretprobe-nop".into(),
        metric,
        at: 1,
        change: ChangePointOut {
            before,
            after,
            change_pct: (after / before - 1.0) * 100.0,
            ci_pct: (0.0, 0.0),
            p: None,
        },
        regression: true,
        new: true,
        moved_with: Vec::new(),
        bisect: None,
        alerted: None,
        pending: false,
        drift: false,
    };
    let syscalls = step(Metric::Entries(EntryKind::Syscall), 0.0, 0.99998);
    assert_eq!(syscalls.size(), "+1.00/event");
    assert_eq!(step(Metric::Rate, 2.0, 1.9).size(), "-5.0%");
}

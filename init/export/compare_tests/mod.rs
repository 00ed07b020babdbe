//! The tests of compare, by topic, and the results sets they share.

mod comparable;
mod formats;
mod icount;
mod inputs;
mod verdicts;

use crate::machines::json;
use crate::people::{email, markdown, pieces, table};
use std::collections::BTreeMap;
use trig_analysis::compare::*;
use trig_analysis::input::{parse, Side};
use trig_schema::stats;
use trig_schema::*;

/// A results set of boots whose benchmarks ran at the given rates, with
/// trig-kprobe's overhead against trig-base filled in as the guest does.
fn set(rates: &[&[(&str, f64)]], session: Option<&str>) -> RunSet {
    let runs = rates
        .iter()
        .enumerate()
        .map(|(i, boot)| {
            let mut results: Vec<BenchResult> = boot
                .iter()
                .map(|(name, mean)| {
                    let mut r = BenchResult::new(name, name, "trigger", 1, Better::Higher);
                    // the baseline and attach kind a guest records (every
                    // benchmark named here was in schema 4's registry)
                    upgrade::fill(&mut r);
                    if *mean < 0.0 {
                        r.status = Status::Unsupported;
                        r.reason = Some("no kprobe_multi (EOPNOTSUPP)".into());
                    } else {
                        r.summary = Some(Summary {
                            mean: *mean,
                            stddev: 0.0,
                            per_producer: *mean,
                            cv: 0.0,
                            samples: 5,
                        });
                        r.samples = (0..5)
                            .map(|k| Sample {
                                t_s: k as f64,
                                interval_s: 1.0,
                                sampler_s: 0.0,
                                warmup: false,
                                bpf: 0,
                                user: 0,
                                mps: mean * (1.0 + 0.004 * (k as f64 - 2.0)),
                                ..Sample::default()
                            })
                            .collect();
                    }
                    r
                })
                .collect();
            trig_schema::add_overheads(&mut results);
            RunRecord {
                index: i + 1,
                status: BootStatus::Ok,
                message: None,
                console_log: String::new(),
                wall_s: 1.0,
                boot_s: None,
                pairing: session.map(|s| Pairing {
                    session: s.into(),
                    round: i + 1,
                }),
                report: Some(Report {
                    schema_version: SCHEMA_VERSION,
                    tool: Tool {
                        name: "trig-init".into(),
                        version: "0.1.0".into(),
                        git_rev: "test".into(),
                    },
                    system: System {
                        release: "6.1.0-test".into(),
                        version: String::new(),
                        machine: "x86_64".into(),
                        cmdline: String::new(),
                        cpus: 2,
                        pid1: true,
                        cpu: Some(Cpu {
                            model: "Intel Core Processor (Haswell, no TSX, IBRS)".into(),
                            flags: vec!["avx2".into(), "fpu".into()],
                            cpuid: Some("1.0:306c1,0,fffa3203,178bfbff".into()),
                        }),
                    },
                    capabilities: BTreeMap::new(),
                    params: Params::run_defaults(),
                    mounts: vec![],
                    results,
                    harness: None,
                    outcome: Outcome {
                        status: RunEnd::Complete,
                        message: None,
                    },
                }),
                timeline: None,
                parts: Vec::new(),
            }
        })
        .collect();
    RunSet {
        schema_version: SCHEMA_VERSION,
        created: None,
        kernel: KernelInfo {
            spec: "test".into(),
            path: String::new(),
            package: None,
            release: "6.1.0-test".into(),
            commit: None,
        },
        vm: VmInfo {
            meter: Default::default(),
            arch: "x86_64".into(),
            accel: "tcg".into(),
            cpus: 2,
            memory: "1G".into(),
            append: String::new(),
            qemu: Some("10.0.2".into()),
            machine: Some("pc-i440fx-10.0".into()),
            cpu: Some("Haswell-v4".into()),
            cache: None,
            icount_shift: 0,
        },
        runs,
    }
}

fn side(s: RunSet) -> Side {
    Side::of_file("test.json".as_ref(), vec![s])
}

/// Boots of trig-base and trig-kprobe with small boot-to-boot noise;
/// `scale` multiplies trig-kprobe's rate.
fn boots(n: usize, kprobe_scale: f64, drift: f64) -> Vec<Vec<(&'static str, f64)>> {
    let noise = [1.0, 1.012, 0.991, 1.006, 0.995, 1.009, 0.997, 1.003];
    (0..n)
        .map(|i| {
            let d = (1.0 + drift * i as f64) * noise[i % noise.len()];
            vec![
                ("trig-base", 2.0 * d),
                ("trig-kprobe", 0.8 * d * kprobe_scale),
                ("trig-kprobe-multi", -1.0),
            ]
        })
        .collect()
}

fn as_slices<'a>(b: &'a [Vec<(&'static str, f64)>]) -> Vec<&'a [(&'static str, f64)]> {
    b.iter().map(Vec::as_slice).collect()
}

fn verdict_of(c: &Comparison, name: &str) -> Verdict {
    c.benches.iter().find(|b| b.name == name).unwrap().verdict
}

/// Sets as the icount meter gives them: every boot's figures equal to
/// within `aa` (a fraction), samples within 1e-5 of their mean.
fn counted(rates: &[&[(&str, f64)]], session: Option<&str>, aa: f64) -> RunSet {
    let mut s = set(rates, session);
    s.vm.meter = Meter::Icount;
    for (i, run) in s.runs.iter_mut().enumerate() {
        for r in &mut run.report.as_mut().unwrap().results {
            let wobble = 1.0 + aa * (i % 2) as f64;
            if let Some(sum) = r.summary.as_mut() {
                sum.mean *= wobble;
            }
            for (k, x) in r.samples.iter_mut().enumerate() {
                x.mps = r.summary.as_ref().unwrap().mean * (1.0 + 1e-5 * (k as f64 - 2.0));
            }
        }
        trig_schema::add_overheads(&mut run.report.as_mut().unwrap().results);
    }
    s
}

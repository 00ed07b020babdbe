//! The command line on the host: errors that name their cause.

// a test's own output: a failed write there fails the test
#![allow(clippy::disallowed_macros)]

mod common;
mod synth;
use common::{assert_kcidb_valid, stderr, trig_init};
use std::process::Command;

#[test]
fn list_shows_all_three_matrices() {
    let o = trig_init(&["list"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for name in [
        "trig-base",
        "trig-batch-fentry",
        "trig-uretprobe-multi-ret",
        "rename-fexit",
        "strncmp-helper",
    ] {
        assert!(out.contains(name), "{name} not listed");
    }
}

#[test]
fn list_names_upstream_benchmarks_for_a_kernel_version() {
    let line = |version: &str, bench: &str| {
        let o = trig_init(&["list", "--kernel", version]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(out.starts_with("BENCHMARK"), "{out}");
        assert!(out.contains(&format!("UPSTREAM {version}")), "{out}");
        let row = out.lines().find(|l| l.starts_with(&format!("{bench} ")));
        row.unwrap_or_else(|| panic!("{bench} not listed"))
            .to_string()
    };
    // 6.10 renamed trig-base and gave the syscall-driven names to the
    // batched benchmarks
    assert!(line("6.1", "trig-base").contains(" trig-base "));
    assert!(line("6.12", "trig-base").contains(" trig-syscall-count "));
    assert!(line("6.12", "trig-batch-kprobe").contains(" trig-kprobe "));
    assert!(line("6.1", "trig-batch-kprobe").contains(" - "));
    assert!(line("6.1", "trig-fentry-sleep").contains(" fentry.s/"));
    assert!(line("6.12", "trig-usdt").contains(" usdt/"));
    // the newest bench's: upstream's names in a 7.2 tree, and ours for
    // the nop10 benchmarks, which it lacks
    for same in ["trig-kprobe-multi-all", "trig-kretprobe-multi-all"] {
        assert!(line("7.2", same).contains(&format!(" {same} ")), "{same}");
    }
    assert!(line("7.2", "trig-usdt").contains(" trig-usdt-nop "));
    // x86-64 only
    if cfg!(target_arch = "x86_64") {
        for same in [
            "trig-uprobe-multi-nop5",
            "trig-uretprobe-multi-nop5",
            "trig-usdt-nop5",
        ] {
            assert!(line("7.2", same).contains(&format!(" {same} ")), "{same}");
        }
        for ours in [
            "trig-uprobe-nop10",
            "trig-uretprobe-nop10",
            "trig-uprobe-multi-nop10",
            "trig-uretprobe-multi-nop10",
            "trig-usdt-nop10",
        ] {
            assert!(line("7.2", ours).contains(" - "), "{ours}");
        }
    }
    let o = trig_init(&["list", "--kernel", "latest"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--kernel latest"), "{}", stderr(&o));
}

#[test]
fn unknown_benchmark_lists_valid_names() {
    let o = trig_init(&["run", "--filter", "trig-nosuch", "-d", "1"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("no benchmark matches 'trig-nosuch'") && e.contains("trig-kprobe"),
        "{e}"
    );
}

#[test]
fn bad_run_option_is_named() {
    let o = trig_init(&["run", "--batch-iters", "5000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("batch_iters 5000"), "{}", stderr(&o));
}

/// `vm -k KERNEL` must stop with a usage error that says `message`.
fn vm_rejects(kernel: &str, message: &str) {
    let o = trig_init(&["vm", "-k", kernel, "--out", "/tmp/trig-init-test-out"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(message), "{}", stderr(&o));
}

#[test]
fn missing_kernel_is_a_usage_error() {
    vm_rejects("/nonexistent/bzImage", "/nonexistent/bzImage: no such file");
}

#[test]
fn non_kernel_file_is_named() {
    let p = std::env::temp_dir().join("trig-init-cli-not-a-kernel");
    std::fs::write(&p, b"not a kernel at all").unwrap();
    vm_rejects(p.to_str().unwrap(), "is not a kernel image");
}

#[test]
fn plain_run_writes_json_even_without_bpf() {
    // trig-base and trig-usermode-count need no BPF program to count
    let out = std::env::temp_dir().join("trig-init-plain.json");
    let _alone = host_bench();
    let o = trig_init(&[
        "run",
        "--filter",
        "trig-base",
        "--filter",
        "trig-usermode-count",
        "-w",
        "0",
        "-d",
        "1",
        "--json",
        out.to_str().unwrap(),
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap())
        .unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    assert_eq!(doc["outcome"]["status"], "complete");
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert!(!doc["system"]["pid1"].as_bool().unwrap());
    // a function call is far cheaper than a syscall
    let rate = |i: usize| results[i]["summary"]["mean"].as_f64().unwrap();
    assert!(
        rate(1) > 3.0 * rate(0),
        "usermode {} vs base {}",
        rate(1),
        rate(0)
    );
}

#[test]
fn compare_names_unreadable_and_malformed_files() {
    let dir = std::env::temp_dir().join(format!("trig-cli-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, b"{\"runs\": [").unwrap();
    let bad = bad.to_str().unwrap();
    let o = trig_init(&["compare", "/nonexistent.json", bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/nonexistent.json: No such file"),
        "{}",
        stderr(&o)
    );
    let o = trig_init(&["compare", bad, bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.json: truncated JSON"),
        "{}",
        stderr(&o)
    );
    let o = trig_init(&["compare", "--previous", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let o = trig_init(&["compare", bad]);
    assert!(stderr(&o).contains("give BASE and NEW"), "{}", stderr(&o));
    let o = trig_init(&["history", "/nonexistent-dir"]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ab_needs_two_kernels() {
    let o = trig_init(&["ab", "-k", "debian:6.1.0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("at least two kernels"),
        "{}",
        stderr(&o)
    );
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("trig-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// BASE and NEW results files (`synth::regressed_pair`) as strings for
/// command lines.
fn regressed_pair(dir: &std::path::Path) -> (String, String) {
    let (base, new) = synth::regressed_pair(dir);
    let s = |p: std::path::PathBuf| p.to_str().unwrap().to_string();
    (s(base), s(new))
}

/// Two icount runners on different QEMUs: compare names the field and
/// both versions and exits 2; --force compares.
#[test]
fn compare_refuses_another_qemu_under_icount() {
    let dir = scratch("identity");
    let write = |name: &str, qemu: &str| {
        let mut doc = synth::results("6.1.0", "aaaa", "20261101T000000Z", 0.8, 1, 0.0);
        doc["vm"]["meter"] = "icount".into();
        doc["vm"]["qemu"] = qemu.into();
        let p = dir.join(name);
        std::fs::write(&p, doc.to_string()).unwrap();
        p.to_str().unwrap().to_string()
    };
    let (a, b) = (write("a.json", "10.0.2"), write("b.json", "7.2.22"));
    let o = trig_init(&["compare", &a, &b]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("QEMU version: BASE 10.0.2 vs NEW 7.2.22"),
        "{}",
        stderr(&o)
    );
    let o = trig_init(&["compare", "--force", &a, &b]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("QEMU version"), "{table}");
}

#[test]
fn parse_errors_are_usage_errors() {
    for args in [
        &["compare", "--bogus"][..],
        &["compare", "--threshold", "abc", "a", "b"],
        &["history"],
        &["vm", "--bogus"],
        &["ab", "--bogus"],
        &["run", "--bogus"],
        &["bogus"],
        &["report"],
        &["compare", "--color", "sometimes", "a", "b"],
    ] {
        let o = trig_init(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).is_empty(), "{args:?}");
    }
}

#[test]
fn version_and_help() {
    let o = trig_init(&["--version"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with(&format!("trig-init {} (", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    let o = trig_init(&["--help"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("With no subcommand, runs the whole matrix"),
        "{out}"
    );
    let o = trig_init(&["ab", "--help"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("Usage: trig-init ab")
            && out.contains("Boot two or more kernels interleaved")
            && out.contains("--kernel-append"),
        "{out}"
    );
}

#[test]
fn no_arguments_says_it_runs_the_matrix() {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_trig-init"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        first.starts_with("trig-init: no command given: running the whole matrix"),
        "{first}"
    );
}

#[test]
fn colour_follows_no_color_and_the_flag() {
    let dir = scratch("colour");
    let (base, new) = regressed_pair(&dir);
    let run = |color: &str, no_color: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_trig-init"));
        cmd.args(["compare", &base, &new, "--color", color]);
        if no_color {
            cmd.env("NO_COLOR", "1");
        } else {
            cmd.env_remove("NO_COLOR");
        }
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).contains("\x1b[")
    };
    assert!(run("always", false) && run("always", true));
    assert!(!run("never", false) && !run("auto", false) && !run("auto", true));
    // auto on a terminal: `script` gives the command one
    let on_tty = |no_color: &str| {
        std::process::Command::new("script")
            .args([
                "-qec",
                &format!(
                    "NO_COLOR={no_color} {} compare {base} {new}",
                    env!("CARGO_BIN_EXE_trig-init")
                ),
                "/dev/null",
            ])
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("\x1b[1;31m"))
    };
    if let (Some(plain), Some(coloured)) = (on_tty("1"), on_tty("")) {
        assert!(
            !plain && coloured,
            "NO_COLOR=1 {plain}, NO_COLOR= {coloured}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compare_writes_several_formats_in_one_run() {
    let dir = scratch("exports");
    let (base, new) = regressed_pair(&dir);
    let path = |f: &str| dir.join(f).to_str().unwrap().to_string();
    let o = trig_init(&[
        "compare",
        &base,
        &new,
        "--color",
        "always",
        "-o",
        &path("out.txt"),
        "--export-json",
        &path("c.json"),
        "--export-markdown",
        &path("c.md"),
        "--export-bmf",
        &path("c.bmf"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    // the file is never coloured, stdout is when asked
    assert!(!read("out.txt").contains('\x1b') && read("out.txt").contains("trig-kprobe"));
    let json: serde_json::Value = serde_json::from_str(&read("c.json")).unwrap();
    assert!(json["benches"].as_array().is_some_and(|b| !b.is_empty()));
    assert!(read("c.md").contains("| trig-kprobe"), "{}", read("c.md"));
    let bmf = assert_bmf(&read("c.bmf"));
    let v = bmf["trig-kprobe"]["rate-m-per-s"]["value"]
        .as_f64()
        .unwrap();
    assert!((v - 0.68).abs() < 0.01, "{v}");
    // the same through --format, and from a history
    let o = trig_init(&["compare", &base, &new, "--format", "bmf"]);
    assert_bmf(&String::from_utf8_lossy(&o.stdout));
    std::fs::remove_file(dir.join("c.json")).unwrap();
    let o = trig_init(&["history", dir.to_str().unwrap(), "--format", "bmf"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bmf = assert_bmf(&String::from_utf8_lossy(&o.stdout));
    assert!(bmf["trig-base"]["rate-m-per-s"]["value"].as_f64().is_some());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// trig-init with the KCIDB origin set.
fn trig_init_origin(origin: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_trig-init"))
        .args(args)
        .env("TRIG_INIT_KCIDB_ORIGIN", origin)
        .output()
        .unwrap()
}

/// `compare` and `history` write KCIDB documents that kcidb-io accepts:
/// a regression is a FAIL with its verdict, every figure a number, every
/// ID the origin's.
#[test]
fn kcidb_exports_validate() {
    let dir = scratch("kcidb");
    let (base, new) = regressed_pair(&dir);
    let (c, h) = (dir.join("c.kcidb.json"), dir.join("h.kcidb.json"));
    let o = trig_init_origin(
        "ci_test",
        &[
            "compare",
            &base,
            &new,
            "--export-kcidb",
            c.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // into a directory of its own: the history holds only results
    let hist = dir.join("history");
    std::fs::create_dir(&hist).unwrap();
    for f in [&base, &new] {
        let name = std::path::Path::new(f).file_name().unwrap();
        std::fs::copy(f, hist.join(name)).unwrap();
    }
    let o = trig_init_origin(
        "ci_test",
        &[
            "history",
            hist.to_str().unwrap(),
            "--export-kcidb",
            h.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_kcidb_valid(&[&c, &h]);
    let read = |p: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let doc = read(&c);
    assert_eq!(doc["version"], serde_json::json!({"major": 5, "minor": 3}));
    let tests = doc["tests"].as_array().unwrap();
    let test = |path: &str| {
        tests
            .iter()
            .find(|t| t["path"] == path)
            .unwrap_or_else(|| panic!("{path}: {doc}"))
    };
    let kprobe = test("trig_init.trig-kprobe.rate");
    assert_eq!(kprobe["status"], "FAIL");
    assert_eq!(kprobe["misc"]["verdict"], "regressed");
    let v = kprobe["number"]["value"].as_f64().unwrap();
    assert!((v - 0.68e6).abs() < 0.01e6, "{v}");
    assert_eq!(test("trig_init.trig-base.rate")["status"], "DONE");
    for kind in ["checkouts", "builds", "tests"] {
        for obj in doc[kind].as_array().unwrap() {
            assert!(obj["id"].as_str().unwrap().starts_with("ci_test:"), "{obj}");
        }
    }
    // every boot of both results, one test per benchmark and metric
    let doc = read(&h);
    assert_eq!(doc["checkouts"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(doc["tests"].as_array().unwrap().len(), 4, "{doc}");
    // a bad origin is refused before anything is compared
    let o = trig_init_origin(
        "Not-An-Origin",
        &["compare", &base, &new, "--export-kcidb", "x"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("TRIG_INIT_KCIDB_ORIGIN='Not-An-Origin'"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Bencher Metric Format as bencher.dev documents it: benchmarks, each of
/// measures, each with a numeric `value` and optional numeric
/// `lower_value` and `upper_value` around it, and nothing else.
fn assert_bmf(text: &str) -> serde_json::Map<String, serde_json::Value> {
    let doc: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let doc = doc.as_object().expect("an object of benchmarks").clone();
    assert!(!doc.is_empty());
    for (bench, measures) in &doc {
        let measures = measures.as_object().unwrap_or_else(|| panic!("{bench}"));
        for (slug, m) in measures {
            assert!(!slug.is_empty() && slug.len() <= 64, "{slug}");
            let m = m.as_object().unwrap();
            let num = |k: &str| m.get(k).map(|v| v.as_f64().expect("a number"));
            let value = num("value").expect("value");
            assert!(num("lower_value").is_none_or(|l| l <= value));
            assert!(num("upper_value").is_none_or(|u| value <= u));
            assert!(m
                .keys()
                .all(|k| ["value", "lower_value", "upper_value"].contains(&k.as_str())));
        }
    }
    doc
}

/// `bisect effect` and `bisect verdict` on real compare exports: what
/// scripts/bisect.sh asks them, and every way they answer.
#[test]
fn bisect_effect_and_verdict() {
    let dir = scratch("bisect");
    let (base, new) = regressed_pair(&dir);
    let path = |f: &str| dir.join(f).to_str().unwrap().to_string();
    for (name, b, n) in [("bad", &base, &new), ("same", &base, &base)] {
        let o = trig_init(&[
            "compare",
            b,
            n,
            "--export-json",
            &path(&format!("{name}.json")),
        ]);
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    }
    let effect = |c: &str| {
        let o = trig_init(&["bisect", "effect", &path(c)]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let bad: serde_json::Value = serde_json::from_str(&effect("bad.json")).unwrap();
    let change = bad["trig-kprobe rate"].as_f64().unwrap();
    assert!((change + 15.0).abs() < 0.5, "{bad}");
    assert_eq!(effect("same.json"), "{}\n");
    std::fs::write(path("effect.json"), bad.to_string()).unwrap();
    std::fs::write(path("none.json"), effect("same.json")).unwrap();

    let verdict = |effect: &str, c: &str| {
        let o = trig_init(&["bisect", "verdict", "--effect", &path(effect), &path(c)]);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr(&o),
        )
    };
    let (code, out, _) = verdict("effect.json", "bad.json");
    assert_eq!(code, Some(0));
    assert!(
        out.starts_with("bad: trig-kprobe ") && out.ends_with("median fraction 1.00\n"),
        "{out}"
    );
    let (code, out, _) = verdict("effect.json", "same.json");
    assert_eq!(code, Some(0));
    assert!(
        out == "good: trig-kprobe rate +0.0% of -15.0%: median fraction 0.00\n",
        "{out}"
    );
    let (code, out, _) = verdict("effect.json", "nosuch.json");
    assert_eq!(code, Some(0));
    assert!(
        out.starts_with("skip: unreadable comparison: ") && out.contains("nosuch.json"),
        "{out}"
    );
    // no effect to judge against, or none readable: an error (2), never
    // a verdict, and never 1, which git bisect run reads as "bad"
    for effect in ["none.json", "nosuch.json", "bad.json"] {
        let (code, out, err) = verdict(effect, "bad.json");
        assert_eq!(code, Some(2), "{effect}: {out}");
        assert!(out.is_empty() && err.contains(effect), "{effect}: {err}");
    }
    for args in [
        &["bisect"][..],
        &["bisect", "verdict", "c.json"],
        &["bisect", "effect"],
        &["ab-proof"],
    ] {
        let o = trig_init(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ab_proof_reads_an_ab_run() {
    let dir = scratch("ab-proof");
    let o = trig_init(&["ab-proof", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no *-k1.json and *-k2.json"),
        "{}",
        stderr(&o)
    );
    let (base, new) = regressed_pair(&dir);
    std::fs::copy(&base, dir.join("r-k1.json")).unwrap();
    std::fs::copy(&base, dir.join("r-k2.json")).unwrap();
    std::fs::copy(&new, dir.join("r-k3.json")).unwrap();
    let o = trig_init(&["ab-proof", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("A/A: 2 benchmarks judged, 5 + 5 boots, meter time"),
        "{out}"
    );
    assert!(out.contains("\nk3 (6.1.0): flagged trig-kprobe ("), "{out}");
    assert!(
        out.ends_with("smallest change flagged (overhead): none\n"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Each class of error gives its status on each command (docs/faults.md,
/// "Exit statuses"): what the caller got wrong (usage, bad input) exits 2, an
/// output that cannot be written exits 4. The unwritable paths are under
/// a directory that does not exist, which holds for root too.
#[test]
fn each_error_class_has_its_status() {
    let dir = scratch("classes");
    let (base, new) = regressed_pair(&dir);
    // twelve nights at 0.8 M/s, then three at 0.68: a new change point
    let history = dir.join("history");
    std::fs::create_dir_all(&history).unwrap();
    for night in 1..=15 {
        let created = format!("202611{night:02}T000000Z");
        let wobble = [1.0, 1.01, 0.99, 1.005, 0.995][night % 5];
        let kprobe = if night <= 12 { 0.8 } else { 0.68 } * wobble;
        let doc = synth::results("6.1.0", &format!("c{night}"), &created, kprobe, 5, 0.01);
        std::fs::write(history.join(format!("{created}.json")), doc.to_string()).unwrap();
    }
    let history = history.to_str().unwrap();
    let nowhere = dir.join("no-such-dir/out");
    let nowhere = nowhere.to_str().unwrap();
    let garbage = dir.join("garbage.json");
    std::fs::write(&garbage, "{").unwrap();
    let garbage = garbage.to_str().unwrap();
    let mut wrong = Vec::new();
    for (args, status) in [
        // usage
        (&["compare", "--threshold", "-1", &base, &new][..], 2),
        (&["history", history, "--format", "bogus"], 2),
        (&["report"], 2),
        (&["bisect", "effect"], 2),
        (&["list", "--kernel", "x"], 2),
        // bad input
        (&["compare", garbage, &new], 2),
        (&["history", "/nonexistent-dir"], 2),
        (&["report", "/nonexistent-dir"], 2),
        (&["bisect", "effect", garbage], 2),
        (&["ab-proof", "/nonexistent-dir"], 2),
        // could not write
        (&["compare", &base, &new, "--export-json", nowhere], 4),
        (&["compare", &base, &new, "-o", nowhere], 4),
        (&["report", history, "-o", nowhere], 4),
    ] {
        let o = trig_init(args);
        assert!(!stderr(&o).is_empty(), "{args:?}: says nothing");
        if o.status.code() != Some(status) {
            wrong.push(format!("{args:?}: {:?}, not {status}", o.status.code()));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_non_utf8_argument_is_a_usage_error_not_a_panic() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"nu\xff\xfe");
    for args in [
        &["compare"][..],
        &["vm", "--out"],
        &["list", "--kernel"],
        &["history"],
    ] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_trig-init"))
            .args(args)
            .arg(bad)
            .arg("somewhere")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("UTF-8") && e.contains("nu"), "{args:?}: {e}");
    }
}

#[test]
fn an_empty_or_cut_off_file_in_a_directory_is_skipped_with_a_warning() {
    let dir = scratch("cut-off");
    regressed_pair(&dir);
    // what an older trig-init left when the disk filled on its first write
    std::fs::write(dir.join("empty.json"), "").unwrap();
    std::fs::write(dir.join("cut.json"), "{\"schema_version\": 1, \"ru").unwrap();
    std::fs::write(dir.join("alerts.json"), "").unwrap();
    let d = dir.to_str().unwrap();
    // the page goes to the scratch directory, not into the checkout
    let page = dir.join("page.html");
    let page = page.to_str().unwrap();
    for args in [
        &["history", d][..],
        &["history", "--alert", d],
        &["report", d, "-o", page],
        &["compare", "--previous", d],
    ] {
        let o = trig_init(args);
        let e = stderr(&o);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{args:?}: {e}");
        assert!(
            e.contains("skipped") && e.contains("empty.json") && e.contains("cut.json"),
            "{args:?}: {e}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_refuses_a_side_of_two_kernels_and_names_them() {
    let dir = scratch("two-kernels");
    let (base, new) = regressed_pair(&dir);
    let mixed = dir.join("mixed");
    std::fs::create_dir_all(&mixed).unwrap();
    std::fs::copy(&base, mixed.join("a.json")).unwrap();
    std::fs::write(
        mixed.join("b.json"),
        synth::results("6.12.0", "cccc", "20261103T000000Z", 0.8, 1, 0.0).to_string(),
    )
    .unwrap();
    let o = trig_init(&["compare", &base, mixed.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("NEW holds the results of 2 kernels") && e.contains("6.1.0, 6.12.0"),
        "{e}"
    );
    let _ = new;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_says_why_movers_and_overheads_are_missing() {
    let dir = scratch("unexplained");
    let mut base = synth::results("6.1.0", "aaaa", "20261101T000000Z", 0.8, 1, 0.0);
    for r in base["runs"][0]["report"]["results"].as_array_mut().unwrap() {
        r["profile"] = serde_json::json!({"total": 500.0, "kernel": 400.0, "functions": []});
    }
    let mut new = synth::results("6.1.0", "bbbb", "20261102T000000Z", 0.7, 1, 0.0);
    // `--filter trig-kprobe` without its baseline, by an older trig-init
    new["runs"][0]["report"]["results"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["name"] != "trig-base");
    let (b, n) = (dir.join("base.json"), dir.join("new.json"));
    std::fs::write(&b, base.to_string()).unwrap();
    std::fs::write(&n, new.to_string()).unwrap();
    let o = trig_init(&["compare", b.to_str().unwrap(), n.to_str().unwrap()]);
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(
        all.contains("no movers: BASE was profiled (--profile) and NEW was not"),
        "{all}"
    );
    assert!(
        all.contains("no overhead in NEW for trig-kprobe (no trig-base)"),
        "{all}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn misleading_messages_say_what_is_wrong() {
    let dir = scratch("messages");
    let (base, new) = regressed_pair(&dir);
    let d = dir.to_str().unwrap();
    for args in [
        &["compare", "--alpha", "0", &base, &new][..],
        &["history", "--alpha", "0", d],
    ] {
        let o = trig_init(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("--alpha must be in (0,1)"),
            "{}",
            stderr(&o)
        );
    }
    // results without a commit, ordered by a tree's history
    let bare = scratch("messages-bare");
    let mut doc = synth::results("6.1.0", "aaaa", "20261101T000000Z", 0.8, 1, 0.0);
    doc["kernel"].as_object_mut().unwrap().remove("commit");
    std::fs::write(bare.join("a.json"), doc.to_string()).unwrap();
    let tree = env!("CARGO_MANIFEST_DIR");
    let o = trig_init(&["history", "--git", tree, bare.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("no kernel commit recorded"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&bare);
}

/// `--metric kernel-overhead` (issue 26) wherever --metric is taken, on
/// `synth::updated_history`: compare and history take the two trig-init
/// builds on it without --force and find the kernel's step alone, report
/// draws it; a bad choice exits 2 naming the choices (ab's before any
/// boot), and vm, which compares nothing, refuses --metric.
#[test]
fn kernel_overhead_is_a_metric_of_compare_ab_history_and_report() {
    let dir = scratch("kernel-overhead");
    let history = dir.join("history");
    std::fs::create_dir_all(&history).unwrap();
    let nights: Vec<String> = synth::updated_history(&history)
        .iter()
        .map(|p| p.to_str().unwrap().to_string())
        .collect();
    let stdout = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).to_string();
    let o = trig_init(&["compare", &nights[2], &nights[3]]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("trig-init build"), "{}", stderr(&o));
    let over = ["compare", "--metric", "kernel-overhead", "--color", "never"];
    let o = trig_init(&[&over[..], &[&nights[2], &nights[3]]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("kernel insn/event over baseline"),
        "{}",
        stdout(&o)
    );
    let o = trig_init(&[&over[..], &[&nights[5], &nights[6]]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o)
            .contains("+3.00 insn/event in the kernel over the baseline regression of trig-kprobe"),
        "{}",
        stdout(&o)
    );
    let h = history.to_str().unwrap();
    let args = [
        "history",
        h,
        "--metric",
        "kernel-overhead",
        "--format",
        "json",
    ];
    let o = trig_init(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let found: Vec<(&str, &str, u64)> = doc["found"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap();
            (s("bench"), s("metric"), f["at"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(found, [("trig-kprobe", "kernel-overhead", 6)]);
    let page = dir.join("report.html");
    let page_arg = page.to_str().unwrap();
    let o = trig_init(&["report", h, "--metric", "kernel-overhead", "-o", page_arg]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("kernel insn/event over baseline"), "{html}");
    for args in [
        &[
            "compare",
            "--metric",
            "kernel-total",
            &nights[0],
            &nights[1],
        ][..],
        &["history", h, "--metric", "kernel-total"],
        &["report", h, "--metric", "kernel-total", "-o", page_arg],
        &[
            "ab",
            "--metric",
            "kernel-total",
            "-k",
            "/nonexistent-a",
            "-k",
            "/nonexistent-b",
        ],
    ] {
        let o = trig_init(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("important-hits, memory or peak-memory, not 'kernel-total'"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    let o = trig_init(&["vm", "--metric", "kernel", "-k", "/nonexistent-a"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--metric is ab's"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The kernel metrics of results that were not profiled, and the
/// simulated caches' of results booted without `--cache` (profiled or
/// not): compare, history and report exit 2 naming the flag, where they
/// said `no-change` or found no change point and exited 0; ab refuses
/// them before any boot (the cache metrics also with --profile alone).
#[test]
fn the_kernel_metrics_of_unprofiled_results_are_refused() {
    let dir = scratch("unprofiled");
    let (base, new) = regressed_pair(&dir);
    let (d, page) = (dir.to_str().unwrap(), dir.join("page.html"));
    let needs = [
        ("kernel", "--profile"),
        ("kernel-overhead", "--profile"),
        ("loads", "--cache"),
        ("l1d-misses", "--cache"),
        ("cycles", "--cache"),
    ];
    for (metric, flag) in needs {
        // ab's cache metrics are refused even with --profile
        let profiled = (flag == "--cache").then_some("--profile");
        let ab: Vec<&str> = ["ab"]
            .into_iter()
            .chain(profiled)
            .chain([
                "--metric",
                metric,
                "-k",
                "/nonexistent-a",
                "-k",
                "/nonexistent-b",
            ])
            .collect();
        for args in [
            &["compare", "--metric", metric, &base, &new][..],
            &["history", "--metric", metric, d],
            &[
                "report",
                "--metric",
                metric,
                d,
                "-o",
                page.to_str().unwrap(),
            ],
            &ab,
        ] {
            let o = trig_init(args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
            assert!(stderr(&o).contains(flag), "{args:?}: {}", stderr(&o));
        }
    }
    assert!(!page.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A history whose newest night was not profiled (a nightly that lost its
/// plugin) warns that the kernel series end before it, where it said
/// nothing and found no change (hostile trial).
#[test]
fn a_newest_result_without_kernel_figures_is_named() {
    let dir = scratch("newest-unprofiled");
    synth::updated_history(&dir);
    let d = dir.to_str().unwrap();
    let o = trig_init(&["history", "--metric", "kernel", d]);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let night = synth::results("6.1.0", "c9", "20261110T000000Z", 0.792, 1, 0.0);
    std::fs::write(dir.join("20261110T000000Z.json"), night.to_string()).unwrap();
    let o = trig_init(&["history", "--metric", "kernel", d]);
    let e = stderr(&o);
    assert!(
        e.contains("warning: the newest result, #10") && e.contains("--profile"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Held by every test that runs benchmarks on this host: a BPF program
/// counts every process's events (all PIDs, as upstream's), so another
/// test's getpgid or uprobe loop beside it breaks its hit check.
static HOST_BENCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn host_bench() -> std::sync::MutexGuard<'static, ()> {
    HOST_BENCH.lock().unwrap_or_else(|e| e.into_inner())
}

/// A directory holding `bench`, a link to trig-init as upstream's binary
/// is named, and a `sudo` that runs its arguments where the machine has
/// none (upstream's scripts call `sudo ./bench`).
fn bench_dir(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_trig-init"), dir.join("bench")).unwrap();
    let has_sudo = Command::new("sh")
        .args(["-c", "command -v sudo"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_sudo {
        std::fs::write(dir.join("sudo"), "#!/bin/sh\nexec \"$@\"\n").unwrap();
        std::fs::set_permissions(
            dir.join("sudo"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
    }
    dir
}

/// `trig-init run ARGS`'s report, which must succeed.
fn run_here(args: &[&str]) -> serde_json::Value {
    let o = trig_init(&[&["run"], args].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `./bench ARGS` in `dir`.
fn bench(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new("./bench")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run ./bench")
}

/// The stdout of bash running `script` in `dir`, which comes first on
/// PATH (its `sudo`); a failure fails the test.
fn shell(dir: &std::path::Path, script: &str) -> String {
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("bash")
        .args(["-c", script])
        .env("PATH", path)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{script}\n{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// upstream's summary: `Summary: hits X ± YM/s (ZM/prod), drops ...`
fn is_upstream_summary(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("Summary: hits ") else {
        return false;
    };
    let (total, tail) = rest.split_once(" \u{b1} ").unwrap_or_default();
    total.trim().parse::<f64>().is_ok_and(|t| t > 0.0)
        && tail.contains("M/s (")
        && tail.contains("M/prod), drops    0.000 \u{b1} 0.000M/s, total operations ")
}

#[test]
fn bench_takes_upstreams_command_line_and_prints_its_lines() {
    let _alone = host_bench();
    // trig-syscall-count (our trig-base) needs no BPF: any machine runs it
    let dir = bench_dir("bench-cli");
    let o = bench(&dir, &["-w0.1", "-d0.2", "trig-syscall-count"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Setting up benchmark 'trig-syscall-count'...");
    assert_eq!(lines[1], "Benchmark 'trig-syscall-count' started.");
    // a sample every 50 ms of 0.3 s, warm-up ones too, numbered from 0
    let iters: Vec<&&str> = lines.iter().filter(|l| l.starts_with("Iter ")).collect();
    assert_eq!(iters.len(), 6, "{out}");
    assert!(iters[5].starts_with("Iter   5 ("), "{out}");
    assert!(iters
        .iter()
        .all(|l| l.contains("M/prod), drops    0.000M/s, total operations ")));
    assert!(is_upstream_summary(lines.last().unwrap()), "{out}");
    assert_eq!(lines.len(), 9, "nothing else on stdout: {out}");
    // -q drops the setup lines; trig-init bench is the same command
    let json = dir.join("report.json");
    let o = trig_init(&[
        "bench",
        "-q",
        "-w0",
        "-d0.2",
        "--json",
        json.to_str().unwrap(),
        "trig-base",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.lines()
            .all(|l| l.starts_with("Iter ") || is_upstream_summary(l)),
        "{out}"
    );
    // the JSON report where asked, and the baseline not run unasked
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let names: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["trig-base"]);
    // upstream's list
    let o = bench(&dir, &["--list"]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.starts_with("Available benchmarks:\n- "), "{out}");
    assert!(out.contains("\n- trig-uprobe-nop\n"), "{out}");
}

#[test]
fn bench_refuses_as_upstream_does_naming_the_cause() {
    let dir = bench_dir("bench-refusals");
    for (args, status, says) in [
        (&["trig-nosuch"][..], 1, "benchmark 'trig-nosuch' not found"),
        // what reaches a terminal acts on nothing (docs/faults.md)
        (
            &["trig-\u{1b}[2J\r"][..],
            1,
            "benchmark 'trig-\\u{1b}[2J\\r' not found",
        ),
        (
            &["--\u{1b}]0;x\u{7}"][..],
            64,
            "invalid option '--\\u{1b}]0;x\\u{7}'",
        ),
        (&["-w1"][..], 1, "benchmark name is not specified"),
        (
            &["-c1", "trig-base"][..],
            1,
            "benchmark doesn't support consumer!",
        ),
        (
            &["-p2", "rename-base"][..],
            1,
            "benchmark doesn't support multi-producer!",
        ),
        // argp's usage errors exit 64 (EX_USAGE)
        (
            &["--bogus", "trig-base"][..],
            64,
            "invalid option '--bogus'",
        ),
        (&["-l", "--bogus"][..], 64, "invalid option '--bogus'"),
        (&["-p", "x", "trig-base"][..], 64, "-p: 'x' is not a number"),
        (&["-p", "99999999999", "trig-base"][..], 64, "producers"),
        (&["-d0", "trig-base"][..], 64, "duration 0"),
        (
            &["trig-base", "-w"][..],
            64,
            "missing argument for option '-w'",
        ),
        (
            &["--cons-affinity", "x", "trig-base"][..],
            64,
            "--cons-affinity x",
        ),
        (
            &["--json", "/nonexistent/r.json", "trig-base"][..],
            64,
            "/nonexistent/r.json",
        ),
        (&["--json", "/tmp", "trig-base"][..], 64, "--json /tmp"),
    ] {
        let o = bench(&dir, args);
        assert_eq!(o.status.code(), Some(status), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        // refused before anything ran
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            !out.contains("Iter") && !out.contains("started"),
            "{args:?}: {out}"
        );
    }
}

#[test]
fn bench_faults_end_as_upstreams_would() {
    let _alone = host_bench();
    let dir = bench_dir("bench-faults");
    let sh = |script: &str| {
        Command::new("bash")
            .args(["-c", script])
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    // a reader that goes away ends the run quietly, as SIGPIPE ends
    // upstream's: no panic, no failed benchmark
    let o = sh("set -o pipefail; ./bench -w0 -d0.2 trig-syscall-count | head -n1");
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "Setting up benchmark 'trig-syscall-count'...\n"
    );
    // a hangup that the caller ignores (nohup, a background job) is
    // ignored, as it is by upstream's
    let o =
        sh("trap '' HUP; ./bench -w0 -d1 trig-syscall-count & sleep 0.5; kill -HUP $!; wait $!");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().last().is_some_and(is_upstream_summary), "{out}");
    // a benchmark this kernel cannot attach ends the run with status 1
    let o = bench(&dir, &["-w0", "-d0.1", "trig-kprobe"]);
    if stderr(&o).contains("unsupported") {
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    } else {
        assert!(o.status.success(), "{}", stderr(&o));
    }
}

/// `bench` as PID 1 of a PID namespace (a container's entry point) is
/// still upstream's bench, not the appliance.
#[test]
fn bench_as_pid_1_of_a_namespace_runs_what_it_is_asked() {
    let _alone = host_bench();
    let dir = bench_dir("bench-pid1");
    let can = Command::new("unshare").args(["-p", "-f", "true"]).output();
    if !can.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: no PID namespaces here (unshare -p needs root)");
        return;
    }
    let o = Command::new("unshare")
        .args([
            "-p",
            "-f",
            "--mount-proc",
            // no option: what the kernel would pass an init
            "./bench",
            "trig-syscall-count",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !out.contains("@@TRIG") && !stderr(&o).contains("as PID 1"),
        "{out}"
    );
    assert!(out.lines().last().is_some_and(is_upstream_summary), "{out}");
}

/// Whether uprobes can be attached here: root, on a kernel with them. CI
/// runs as root on such a kernel: there a test that needs them never
/// skips.
fn uprobes_here() -> bool {
    let o = trig_init(&["bench", "-q", "-w0", "-d0.05", "trig-uprobe-nop"]);
    assert!(
        o.status.success() || std::env::var_os("CI").is_none(),
        "CI runs as root with uprobes: {}",
        stderr(&o)
    );
    if !o.status.success() {
        eprintln!("skipped: no uprobes here (run as root on a kernel with uprobes)");
    }
    o.status.success()
}

#[test]
fn upstreams_bench_scripts_run_unchanged() {
    let _alone = host_bench();
    if !uprobes_here() {
        return;
    }
    let dir = bench_dir("bench-scripts");
    // -v: libbpf's debug messages on stderr, stdout as without
    let o = bench(&dir, &["-q", "-v", "-w0", "-d0.05", "trig-uprobe-nop"]);
    assert!(stderr(&o).contains("libbpf: "), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines()
            .all(|l| l.starts_with("Iter ") || is_upstream_summary(l)),
        "{out}"
    );
    // two runs at once: each program counts the other's hits too, and the
    // failed hit check says so
    let o = Command::new("bash")
        .args([
            "-c",
            "./bench -w0 -d1 trig-uprobe-nop & ./bench -w0 -d1 trig-uprobe-nop; wait",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("another process hit the same attach point"),
        "{}",
        stderr(&o)
    );
    let sh = |script: &str| shell(&dir, script);
    // run_bench_trigger.sh and run_bench_uprobes.sh, with what this host
    // attaches (no fentry or kprobes on it) and shorter runs
    let trigger = sh(r#"set -eufo pipefail
for t in usermode-count kernel-count syscall-count rawtp tp; do
	summary=$(sudo ./bench -w0.1 -d0.2 -a -p${PROD_CNT:-1} trig-$t | tail -n1 | cut -d'(' -f1 | cut -d' ' -f3-)
	printf "%-15s: %s\n" $t "$summary"
done"#);
    let uprobes = sh(r#"set -eufo pipefail
for i in usermode-count syscall-count {uprobe,uretprobe}-{nop,push,ret} usdt-nop
do
	summary=$(sudo ./bench -w0.1 -d0.2 -a trig-$i | tail -n1 | cut -d'(' -f1 | cut -d' ' -f3-)
	printf "%-15s: %s\n" $i "$summary"
done"#);
    for (out, lines) in [(&trigger, 5), (&uprobes, 9)] {
        assert_eq!(out.lines().count(), lines, "{out}");
        for line in out.lines() {
            // "uprobe-nop     :    2.068 ± 0.202M/s "
            let figure = line
                .split(": ")
                .nth(1)
                .and_then(|f| f.split(" \u{b1} ").next());
            assert!(
                figure.is_some_and(|f| f.trim().parse::<f64>().is_ok_and(|f| f > 0.0)),
                "{line}"
            );
        }
    }
    // the loop of the commit that added the multi-uprobe benchmarks, as it
    // stands there (docs/upstream-bench.md shows its table on this machine)
    let table = sh(r#"for p in 1 8 16 32; do
    for i in uprobe-nop uretprobe-nop uprobe-multi-nop uretprobe-multi-nop; do
        summary=$(sudo ./bench -w1 -d3 -p$p -a trig-$i | tail -n1)
        total=$(echo "$summary" | cut -d'(' -f1 | cut -d' ' -f3-)
        percpu=$(echo "$summary" | cut -d'(' -f2 | cut -d')' -f1 | cut -d'/' -f1)
        printf "%-21s (%2d cpus): %s (%s/s/cpu)\n" $i $p "$total" "$percpu"
    done
done"#);
    eprintln!("{table}");
    assert_eq!(table.lines().count(), 16, "{table}");
    for line in table.lines() {
        // "uprobe-nop            ( 8 cpus):    4.706 ± 0.044M/s  (  0.588M/s/cpu)"
        let (_, figures) = line.split_once("cpus): ").unwrap_or_default();
        let total = figures.split(" \u{b1} ").next().unwrap_or_default().trim();
        let percpu = figures
            .rsplit_once('(')
            .map(|(_, p)| p.trim_start())
            .unwrap_or_default();
        assert!(total.parse::<f64>().is_ok_and(|t| t > 0.0), "{line}");
        let percpu = percpu.strip_suffix("M/s/cpu)").unwrap_or_default().trim();
        assert!(percpu.parse::<f64>().is_ok_and(|p| p > 0.0), "{line}");
    }
}

/// The loop and count families on this host (as root: the tracepoints and
/// bpf_loop()): every iteration counted, upstream's lines as its
/// run_common.sh reads them, and its rules for their options.
#[test]
fn loops_and_counts_run_here_with_upstreams_lines() {
    let _alone = host_bench();
    if !uprobes_here() {
        return;
    }
    // every iteration of every loop call of every getpgid(), exactly
    let doc = run_here(&[
        "--filter",
        "bpf-loop",
        "--filter",
        "bpf-for",
        "--filter",
        "count-*",
        "-w",
        "0.05",
        "-d",
        "0.2",
        "--nr-loops",
        "50",
    ]);
    assert_eq!(doc["params"]["nr_loops"], 50);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(
        common::names(results),
        ["count-global", "count-local", "bpf-loop", "bpf-for"]
    );
    for r in results {
        assert_eq!(r["status"], "ok", "{r}");
        if r["group"] == "loops" {
            assert_eq!(r["extra"]["nr_loops"], "50", "{r}");
            let (bpf, user) = (r["hits"]["bpf"].as_u64(), r["hits"]["user"].as_u64());
            assert_eq!(bpf, user, "{r}");
            // a getpgid() is 1000 loop calls of 50 iterations
            assert_eq!(user.unwrap() % (1000 * 50), 0, "{r}");
        } else {
            assert_eq!(r["group"], "count", "{r}");
            assert!(r["hits"].is_null(), "no program counts: {r}");
        }
    }
    let dir = bench_dir("bench-loops");
    let sh = |script: &str| shell(&dir, script);
    // run_bench_bpf_loop.sh's line, and its summarize_ops's sed
    let ops = sh(r#"set -eufo pipefail
for b in bpf-loop bpf-for; do
	out=$(./bench -w0.1 -d0.2 -a -p 2 --nr_loops 20 $b)
	echo $out | sed -E "s/.*throughput\s+([0-9]+\.[0-9]+ ± [0-9]+\.[0-9]+\sM\sops\/s).*/\1/"
	echo $out | sed -E "s/.*latency\s+([0-9]+\.[0-9]+\sns\/op).*/\1/"
done"#);
    let lines: Vec<&str> = ops.lines().collect();
    assert_eq!(lines.len(), 4, "{ops}");
    for pair in lines.chunks(2) {
        let (mean, rest) = pair[0].split_once(" \u{b1} ").unwrap_or_default();
        assert!(mean.parse::<f64>().is_ok_and(|m| m > 0.0), "{ops}");
        assert!(rest.ends_with(" M ops/s"), "{ops}");
        assert!(pair[1].ends_with(" ns/op"), "{ops}");
    }
    // the count family reports hits, as its run_common.sh hits() reads them
    let hits = sh(r#"./bench -w0.1 -d0.2 -p 2 count-local | tail -n1 |
	sed -E "s/.*hits\s+([0-9]+\.[0-9]+ ± [0-9]+\.[0-9]+M\/s).*/\1/""#);
    assert!(
        hits.trim_end().ends_with("M/s") && hits.contains(" \u{b1} "),
        "{hits}"
    );
    // another family's option: upstream's second parse refuses it; a family
    // without a parser of its own takes any
    let o = bench(&dir, &["-d0.1", "--nr_loops", "5", "trig-syscall-count"]);
    assert_eq!(o.status.code(), Some(64));
    assert!(
        stderr(&o).contains("unrecognized option '--nr_loops'"),
        "{}",
        stderr(&o)
    );
    let o = bench(
        &dir,
        &["-q", "-w0", "-d0.1", "--nr_loops", "5", "count-global"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // a getpgid() of 10^7 iterations: the producers stop after the one in
    // flight (64 a batch took 7 s here, past the stop's grace: timeout)
    let o = bench(
        &dir,
        &["-q", "-w0", "-d0.2", "--nr_loops", "10000", "bpf-loop"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // bpf_loop()'s limit, and consumers as upstream's refuse them
    let o = bench(&dir, &["--nr_loops", "8388609", "bpf-loop"]);
    assert_eq!(o.status.code(), Some(64));
    assert!(stderr(&o).contains("out of range"), "{}", stderr(&o));
    for (name, why) in [
        ("count-local", "benchmark doesn't support consumers!"),
        ("bpf-loop", "benchmark doesn't support consumer!"),
    ] {
        let o = bench(&dir, &["-q", "-c", "1", name]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(stderr(&o).trim_end(), why);
    }
}

/// The Bloom filter family on this host's kernel: every operation counted
/// by BPF and by the producers alike, the false positives a figure of
/// their own, and the lines run_bench_bloom_filter_map.sh cuts with
/// run_common.sh's seds.
#[test]
fn bloom_filters_run_here_with_upstreams_lines() {
    let _alone = host_bench();
    if !uprobes_here() {
        return;
    }
    let doc = run_here(&[
        "--filter",
        "bloom-*",
        "--filter",
        "hashmap-*",
        "-w",
        "0.05",
        "-d",
        "0.2",
        "--nr-entries",
        "5000",
        "--nr-hash-funcs",
        "4",
    ]);
    assert_eq!(doc["params"]["nr_entries"], 5000);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    for r in results {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["extra"]["nr_hash_funcs"], "4", "{r}");
        let (bpf, user) = (r["hits"]["bpf"].as_u64(), r["hits"]["user"].as_u64());
        assert_eq!(bpf, user, "{r}");
        // every entry a getpgid(), or 1024 lookups
        let per_call = if r["bench"] == "bloom-lookup" || r["bench"] == "bloom-update" {
            5000
        } else {
            1024
        };
        assert_eq!(user.unwrap() % per_call, 0, "{r}");
    }
    let fp = &results[2];
    assert_eq!(fp["bench"], "bloom-false-positive");
    // 4 hashes, 5000 entries in 2^15 bits: about 1.9% of absent keys pass
    let rate = fp["figures"]["false_positives"].as_f64().unwrap();
    assert!(rate > 0.001 && rate < 0.1, "{fp}");
    // the hash map's lookups of random keys find nothing: all drops
    let without = &results[3];
    let dropped = without["samples"].as_array().unwrap().iter();
    assert!(
        dropped.into_iter().all(|s| s["drops"] == s["bpf"]),
        "{without}"
    );
    let dir = bench_dir("bench-bloom");
    let sh = |script: &str| shell(&dir, script);
    let lines = sh(r#"set -eufo pipefail
percentage() { echo "$*" | sed -E "s/.*Percentage\s=\s+([0-9]+\.[0-9]+).*/\1/"; }
total() { echo "$*" | sed -E "s/.*total operations\s+([0-9]+\.[0-9]+ ± [0-9]+\.[0-9]+M\/s).*/\1/"; }
drops() { echo "$*" | sed -E "s/.*drops\s+([0-9]+\.[0-9]+ ± [0-9]+\.[0-9]+M\/s).*/\1/"; }
r="./bench -w0.05 -d0.2 -a --nr_hash_funcs 2 --nr_entries 2000 --value_size 4"
s=$($r bloom-false-positive | tail -n1); percentage $s
s=$($r -p 2 hashmap-with-bloom | tail -n1); total $s
s=$($r bloom-lookup | tail -n1); drops $s"#);
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[0].parse::<f64>().is_ok_and(|p| p > 0.0 && p < 50.0),
        "{lines:?}"
    );
    for l in &lines[1..] {
        let (mean, rest) = l.split_once(" \u{b1} ").unwrap_or_default();
        assert!(mean.trim().parse::<f64>().is_ok(), "{lines:?}");
        assert!(rest.ends_with("M/s"), "{lines:?}");
    }
    // upstream's check_args: two bytes hold 65536 values
    let o = bench(
        &dir,
        &["--value_size", "2", "--nr_entries", "65537", "bloom-lookup"],
    );
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not enough unique values"),
        "{}",
        stderr(&o)
    );
    for bad in [
        ["--nr_hash_funcs", "16"],
        ["--value_size", "257"],
        ["--nr_entries", "0"],
    ] {
        let o = bench(&dir, &[bad[0], bad[1], "bloom-lookup"]);
        assert_eq!(o.status.code(), Some(64), "{bad:?}");
        assert!(stderr(&o).contains("out of range"), "{}", stderr(&o));
    }
    let o = bench(&dir, &["-q", "-c", "1", "hashmap-with-bloom"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).trim_end(),
        "The bloom filter benchmarks do not support consumer"
    );
}

/// The hash map benchmarks on this host's kernel: every update and lookup
/// counted by BPF and by the producers alike, the program's own timing a
/// figure, and upstream's per-CPU lines as run_bench_bpf_hashmap_full_update.sh
/// prints them.
#[test]
fn hash_maps_run_here_with_upstreams_lines() {
    let _alone = host_bench();
    if !uprobes_here() {
        return;
    }
    let doc = run_here(&[
        "--filter",
        "bpf-hashmap-*",
        "-w",
        "0.05",
        "-d",
        "0.2",
        "--nr-loops",
        "20000",
        "--nr-entries",
        "200",
        "--key-size",
        "16",
    ]);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(
        common::names(results),
        ["bpf-hashmap-full-update", "bpf-hashmap-lookup"]
    );
    for (r, per_run) in results.iter().zip([20_000, 20_000]) {
        assert_eq!(r["status"], "ok", "{r}");
        let (bpf, user) = (r["hits"]["bpf"].as_u64(), r["hits"]["user"].as_u64());
        assert_eq!(bpf, user, "{r}");
        assert_eq!(user.unwrap() % per_run, 0, "{r}");
        let timed = r["figures"]["timed_per_op"].as_f64().unwrap();
        assert!(timed > 1.0 && timed < 100_000.0, "{r}");
        let runs = r["figures"]["timed_runs"].as_array().unwrap();
        assert!(
            runs.iter().all(|c| c["ns"].as_array().unwrap().len() <= 32),
            "{r}"
        );
    }
    assert_eq!(results[1]["extra"]["key_size"], "16");
    let dir = bench_dir("bench-hashmap");
    let sh = |script: &str| shell(&dir, script);
    // run_bench_bpf_hashmap_full_update.sh, shorter: its output is the lines
    let full = sh(r#"set -eufo pipefail
summary=$(sudo ./bench -w0.05 -d0.2 -a -p 1 bpf-hashmap-full-update)
printf "$summary"
printf "\n""#);
    let lines: Vec<&str> = full.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "Setting up benchmark 'bpf-hashmap-full-update'...",
            "Benchmark 'bpf-hashmap-full-update' started."
        ],
        "{full}"
    );
    for l in &lines[2..] {
        let (cpu, rest) = l.split_once(":hash_map_full_perf ").expect(l);
        assert!(cpu.parse::<usize>().is_ok(), "{full}");
        let n = rest.strip_suffix(" events per sec").expect(l);
        assert!(n.parse::<u64>().is_ok_and(|n| n > 0), "{full}");
    }
    let o = bench(
        &dir,
        &[
            "-w0.05",
            "-d0.2",
            "--nr_loops",
            "10000",
            "bpf-hashmap-lookup",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out.lines().find(|l| l.starts_with("cpu")).expect(&out);
    assert!(
        line.contains(": lookup ") && line.contains("M events/sec (approximated from "),
        "{out}"
    );
    // -q -a: the mean alone; flags in hex; upstream's checks
    let o = bench(
        &dir,
        &[
            "-q",
            "-a",
            "-w0.05",
            "-d0.1",
            "--map_flags",
            "0x0",
            "--nr_loops",
            "1000",
            "bpf-hashmap-lookup",
        ],
    );
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .parse::<f64>()
            .is_ok(),
        "{o:?}"
    );
    let o = bench(&dir, &["--nr_entries", "2000", "bpf-hashmap-lookup"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("args.nr_entries is too big! (max 1000, got 2000)"),
        "{}",
        stderr(&o)
    );
    let o = bench(&dir, &["--key_size", "1025", "bpf-hashmap-lookup"]);
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
    // full-update has no parser upstream: it takes another family's knob
    let o = bench(
        &dir,
        &[
            "-q",
            "-w0",
            "-d0.05",
            "--nr_hash_funcs",
            "2",
            "bpf-hashmap-full-update",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = bench(&dir, &["--nr_hash_funcs", "2", "bpf-hashmap-lookup"]);
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
}

/// An output path that names no file (`''`, `.`) is refused before the
/// work, naming it, and leaves nothing behind: `run --json ''` measured
/// first and failed to write after, and a killed one left `..tmp-PID` in
/// the working directory (found in a test run's checkout).
#[test]
fn an_output_path_that_names_no_file_is_refused_before_the_work() {
    let dir = scratch("no-file");
    for path in ["", "."] {
        let o = Command::new(env!("CARGO_BIN_EXE_trig-init"))
            .args([
                "run",
                "--filter",
                "count-local",
                "-w",
                "0",
                "-d",
                "0.05",
                "--json",
                path,
            ])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
        assert!(stderr(&o).contains("names no file"), "{}", stderr(&o));
        assert!(
            !stderr(&o).contains("count-local"),
            "measured first: {}",
            stderr(&o)
        );
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

/// The local storage family runs here (task storage and the syscall
/// tracepoint work on this host): hits and important hits are the gets'
/// counts a getpgid() to the one, and `bench` prints upstream's lines,
/// which run_bench_local_storage.sh's local_storage() seds read.
#[test]
fn local_storage_runs_here_with_upstreams_lines() {
    let _alone = host_bench();
    if !uprobes_here() {
        return;
    }
    let doc = run_here(&[
        "--filter",
        "local-storage-*",
        "-w",
        "0.05",
        "-d",
        "0.2",
        "--nr-maps",
        "20",
        "--hashmap-nr-keys-used",
        "100",
    ]);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(
        common::names(results),
        [
            "local-storage-cache-seq-get",
            "local-storage-cache-int-get",
            "local-storage-cache-hashmap-control"
        ]
    );
    // 1000 gets of 20 maps: 50 of the first; interleaved, 1350 gets and
    // 400 of the first; the control's, as the first
    for (r, (per_call, important)) in results.iter().zip([(1000, 50), (1350, 400), (1000, 50)]) {
        assert_eq!(r["status"], "ok", "{r}");
        let (bpf, user) = (r["hits"]["bpf"].as_u64(), r["hits"]["user"].as_u64());
        assert_eq!(bpf, user, "{r}");
        let calls = user.unwrap() / per_call;
        assert_eq!(user.unwrap() % per_call, 0, "{r}");
        let samples = r["samples"].as_array().unwrap();
        let sum = |k: &str| {
            samples
                .iter()
                .map(|s| s[k].as_u64().unwrap_or(0))
                .sum::<u64>()
        };
        // the program adds its two counts one after the other: a read
        // between them moves one getpgid()'s important hits
        let (important_hits, gets) = (sum("important_hits"), sum("bpf"));
        assert!(
            (important_hits * per_call).abs_diff(gets * important) <= important * per_call,
            "{r}"
        );
        assert!(calls > 0 && r["figures"]["important_hits"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(results[2]["extra"]["hashmap_nr_keys_used"], "100");
    assert_eq!(results[0]["attach"], "tp", "{}", results[0]);
    let dir = bench_dir("bench-local-storage");
    // run_bench_local_storage.sh's lines, shorter, through its seds
    let out = shell(
        &dir,
        r#"set -eufo pipefail
function local_storage()
{
	echo -n "hits throughput: "
	echo -n "$*" | sed -E "s/.* hits throughput\s+([0-9]+\.[0-9]+ ± [0-9]+\.[0-9]+\sM\sops\/s).*/\1/"
	echo -n -e ", hits latency: "
	echo -n "$*" | sed -E "s/.* hits latency\s+([0-9]+\.[0-9]+\sns\/op).*/\1/"
	echo -n ", important_hits throughput: "
	echo "$*" | sed -E "s/.*important_hits throughput\s+([0-9]+\.[0-9]+ ± [0-9]+\.[0-9]+\sM\sops\/s).*/\1/"
}
summary=$(./bench -w0.05 -d0.2 --nr_maps 1 --hashmap_nr_keys_used=10 local-storage-cache-hashmap-control | tail -n1)
printf "%-20s %s\n" "control" "$(local_storage $summary)"
summary=$(./bench -w0.05 -d0.2 --nr_maps 17 local-storage-cache-int-get | tail -n1)
printf "%-20s %s\n" "int" "$(local_storage $summary)""#,
    );
    for line in out.lines() {
        let (_, figures) = line.split_once("hits throughput: ").expect(line);
        let parts: Vec<&str> = figures.split(", ").collect();
        assert_eq!(parts.len(), 3, "{out}");
        assert!(
            parts[0].ends_with(" M ops/s") && parts[0].contains(" \u{b1} "),
            "{out}"
        );
        assert!(
            parts[1].starts_with("hits latency: ") && parts[1].ends_with(" ns/op"),
            "{out}"
        );
        let important = parts[2]
            .strip_prefix("important_hits throughput: ")
            .expect(line);
        assert!(important.ends_with(" M ops/s"), "{out}");
    }
    assert_eq!(out.lines().count(), 2, "{out}");
    // upstream's rules: one producer, no consumers, at most 1000 maps
    let o = bench(&dir, &["-p", "2", "local-storage-cache-seq-get"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("benchmark doesn't support multi-producer!"));
    let o = bench(&dir, &["--nr_maps", "1001", "local-storage-cache-seq-get"]);
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
    let o = bench(&dir, &["--key_size", "8", "local-storage-cache-seq-get"]);
    assert!(
        stderr(&o).contains("unrecognized option '--key_size'"),
        "{}",
        stderr(&o)
    );
}

/// The LPM trie family runs here (XDP test runs work on this host):
/// every operation counted by the program and by the producers, the
/// trie emptied and refilled between insert's and delete's runs, and
/// `bench` prints upstream's lines and refuses what upstream refuses.
#[test]
fn lpm_tries_run_here_with_upstreams_lines() {
    let _alone = host_bench();
    if !uprobes_here() {
        return;
    }
    // all but lpm-trie-free, whose fentry this host refuses
    let names: Vec<String> = ["noop", "baseline", "lookup", "insert", "update", "delete"]
        .iter()
        .map(|op| format!("lpm-trie-{op}"))
        .collect();
    let mut args = vec![
        "-w",
        "0.05",
        "-d",
        "0.2",
        "--nr-entries",
        "3000",
        "--prefix-len",
        "24",
    ];
    for name in &names {
        args.extend(["--filter", name.as_str()]);
    }
    let doc = run_here(&args);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(common::names(results), names);
    for r in results {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["hits"]["bpf"], r["hits"]["user"], "{r}");
        let timed = r["figures"]["timed_per_op"].as_f64().unwrap();
        assert!(timed > 0.0 && timed < 1e6, "{r}");
        assert_eq!(r["extra"]["prefix_len"], "24", "{r}");
    }
    // insert's 3000 keys are gone through several times: the trie was reset
    let insert = &results[3];
    assert!(
        insert["hits"]["bpf"].as_u64().unwrap() > 3 * 3000,
        "{insert}"
    );
    let dir = bench_dir("bench-lpm");
    let o = bench(
        &dir,
        &["-w0.05", "-d0.2", "--nr_entries", "1000", "lpm-trie-delete"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let last = out.lines().last().unwrap_or_default();
    let (throughput, latency) = last
        .strip_prefix("Summary: throughput ")
        .and_then(|l| l.split_once("M ops/prod), latency "))
        .expect(&out);
    assert!(
        throughput.contains(" \u{b1} ") && throughput.contains(" M ops/s ("),
        "{out}"
    );
    assert!(latency.ends_with(" ns/op"), "{out}");
    // upstream's rules, in its words
    let refused = |args: &[&str], why: &str| {
        let o = bench(&dir, args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    };
    refused(&["lpm-trie-lookup"], "Missing --nr_entries parameter");
    // (the free's checked before its fentry, which this host refuses)
    for name in ["lpm-trie-insert", "lpm-trie-delete", "lpm-trie-free"] {
        refused(
            &["-p", "2", "--nr_entries", "10", name],
            &format!("{name} requires a single producer"),
        );
        refused(
            &["--random", "--nr_entries", "10", name],
            &format!("{name} does not support --random"),
        );
    }
    refused(
        &[
            "--nr_entries",
            "300",
            "--prefix_len",
            "8",
            "lpm-trie-update",
        ],
        "prefix_len value too small for nr_entries",
    );
    let o = bench(&dir, &["--random", "bloom-lookup"]);
    assert!(
        stderr(&o).contains("unrecognized option '--random'"),
        "{}",
        stderr(&o)
    );
}

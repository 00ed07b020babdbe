//! The command line on the host: errors that name their cause.

mod common;
mod synth;
use common::{stderr, trig_init};

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

/// BASE and NEW results files, trig-kprobe 15% slower in NEW, five boots
/// a side: compare flags it.
fn regressed_pair(dir: &std::path::Path) -> (String, String) {
    let write = |name: &str, doc: serde_json::Value| {
        let p = dir.join(name);
        std::fs::write(&p, doc.to_string()).unwrap();
        p.to_str().unwrap().to_string()
    };
    (
        write(
            "base.json",
            synth::results("6.1.0", "aaaa", "20261101T000000Z", 0.8, 5, 0.01),
        ),
        write(
            "new.json",
            synth::results("6.1.0", "bbbb", "20261102T000000Z", 0.68, 5, 0.01),
        ),
    )
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

/// Each class of error gives its status on each command (README's exit
/// table): what the caller got wrong (usage, bad input) exits 2, an
/// output that cannot be written exits 4. The unwritable paths are under
/// a directory that does not exist, or a dangling link, which hold for
/// root too.
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
    // an alerts file that cannot be saved: the change point is found, the
    // record of it is not kept
    std::os::unix::fs::symlink(nowhere, dir.join("history/alerts.json")).unwrap();
    let o = trig_init(&["history", history, "--alert"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("ALERT"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("alerts.json"), "{}", stderr(&o));
    if o.status.code() != Some(4) {
        wrong.push(format!("unsaved alerts: {:?}, not 4", o.status.code()));
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

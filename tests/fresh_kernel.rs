//! Kernels built from kconfigs/ (scripts/proofs/kernel-test.sh builds them and
//! runs these): every benchmark a kernel's version and architecture support
//! is `ok`, including the kprobe_multi and fmod_ret ones that Debian's 6.1
//! lacks, and the binary runs as a plain command through vmtest, x86-64 and
//! arm64. Slow, so ignored by default.

mod common;
use common::{stderr, trig_init};
use serde_json::Value;
use std::process::Command;
use trig_guest::caps::Feature;
use trig_guest::registry;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name}: run scripts/proofs/kernel-test.sh"))
}

/// The feature a benchmark needs, from the registry.
fn feature(bench: &str) -> Feature {
    registry::BENCHES
        .iter()
        .find(|b| b.name == bench)
        .unwrap_or_else(|| panic!("{bench} is in no registry row"))
        .feature
}

/// What a kernel cannot run whatever its config, by version: open-coded
/// iterators (bpf-for) came in 6.4, uprobe_multi in 6.6, may_goto
/// (bpf-nop) in 6.9, the batched
/// tp/rawtp/fmodret driver's kfunc and tracepoint in 6.10, uprobes on the
/// 10-byte nop and the resizable hash map in 7.2.
fn too_old(release: &str, bench: &str) -> bool {
    let v = version(release);
    let nop10 = registry::BENCHES.iter().any(|b| {
        b.name == bench && matches!(b.trigger, registry::Trigger::Call(t) if t.needs().is_some())
    });
    if nop10 && v < (7, 2) {
        return true;
    }
    match feature(bench) {
        Feature::OpenCodedIterators => v < (6, 4),
        Feature::UprobeMulti => v < (6, 6),
        Feature::TestKfunc => v < (6, 10),
        Feature::ResizableHash | Feature::ResizableHashMemory => v < (7, 2),
        Feature::MayGoto => v < (6, 9),
        _ => false,
    }
}

/// What arm64 cannot run: trampolines (fentry, fexit, fmod_ret) before
/// ftrace direct calls (6.4); kprobe_multi, which needs FPROBE, which
/// depends on DYNAMIC_FTRACE_WITH_REGS until fprobe moved onto the
/// function-graph tracer (6.14): arm64 has no FPROBE in 6.1 or 6.12
/// (build-kernel.sh --keep-going reports it dropped).
fn arm64_lacks(release: &str, bench: &str) -> bool {
    let v = version(release);
    match feature(bench) {
        Feature::Trampolines | Feature::ErrorInjection => v < (6, 4),
        Feature::KprobeMulti => v < (6, 14),
        _ => too_old(release, bench),
    }
}

/// "6.12.95" -> (6, 12)
fn version(release: &str) -> (u32, u32) {
    registry::version_of(release).unwrap_or((0, 0))
}

/// Boots `kernel` with `vm_args` over the whole matrix and checks every
/// benchmark: `unsupported` exactly where `lacks` (release, benchmark)
/// says the kernel cannot run it, else `ok` with hit counts that agree.
/// Returns the results.
fn whole_matrix(kernel: &str, vm_args: &[&str], lacks: &dyn Fn(&str, &str) -> bool) -> Vec<Value> {
    let out = std::env::temp_dir().join(format!("trig-fresh-{}", std::process::id()));
    let out = out.display().to_string();
    let mut args = vec!["vm", "-k", kernel, "--out", &out, "--json", "-"];
    args.extend(vm_args);
    // the icount meter's sub-second defaults
    args.extend(["--", "--cmp-str-len", "8"]);
    let o = trig_init(&args);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("results JSON");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report = &doc["runs"][0]["report"];
    let release = report["system"]["release"].as_str().unwrap();
    let results = report["results"].as_array().unwrap().clone();
    for r in &results {
        let name = r["name"].as_str().unwrap();
        let want = if lacks(release, r["bench"].as_str().unwrap()) {
            "unsupported"
        } else {
            "ok"
        };
        assert_eq!(r["status"], want, "{name} on {release}: {}", r["reason"]);
        if let Some(h) = r.get("hits") {
            assert_eq!(h["agree"], true, "{name}: {h}");
        }
    }
    results
}

#[test]
#[ignore]
fn x86_64_every_supported_benchmark_is_ok() {
    let results = whole_matrix(&env("TRIG_FRESH_KERNEL"), &[], &too_old);
    for name in [
        "trig-kprobe-multi",
        "trig-kretprobe-multi",
        "trig-fmodret",
        "trig-fentry-sleep",
        "trig-batch-kprobe-multi",
    ] {
        assert!(
            results
                .iter()
                .any(|r| r["name"] == name && r["status"] == "ok"),
            "{name}"
        );
    }
}

/// The arm64 binary scripts/build.sh --arch aarch64 makes.
const ARM64_INIT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/target/aarch64-unknown-linux-musl/release/trig-init"
);

#[test]
#[ignore]
fn arm64_every_supported_benchmark_is_ok() {
    let results = whole_matrix(
        &env("TRIG_FRESH_ARM64_IMAGE"),
        &["--arch", "aarch64", "--init", ARM64_INIT],
        &arm64_lacks,
    );
    assert!(
        results
            .iter()
            .all(|r| !r["name"].as_str().unwrap().contains("nop5")),
        "x86-only nop5 benchmarks in the arm64 matrix"
    );
}

/// The JSON document in vmtest's output: from the first line that is `{`
/// to the last that is `}`.
fn json_in(text: &str) -> Value {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_end() == "{")
        .expect("JSON start in vmtest output");
    let end = lines
        .iter()
        .rposition(|l| l.trim_end() == "}")
        .expect("JSON end in vmtest output");
    serde_json::from_str(&lines[start..=end].join("\n")).expect("valid JSON")
}

/// vmtest with `args` (a kernel, architecture, root, QEMU wrapper and a
/// command; or a config and a target filter), run from the top of the
/// repository, which vmtest shares with the guest.
fn vmtest(args: &[&str]) -> std::process::Output {
    Command::new("vmtest")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("VMTEST_NO_UI", "1")
        .args(args)
        .output()
        .expect("vmtest (cargo install vmtest)")
}

/// trig-init `bin` through vmtest: not PID 1, the JSON on stdout with hit
/// counts that agree, and a failing run's exit status back on the host.
fn through_vmtest(vm_args: &[&str], bin: &str) {
    let run = format!(
        "{bin} run -w 0 -d 1 --filter trig-base --filter trig-kprobe --filter rename-rawtp"
    );
    let o = vmtest(&[vm_args, &[run.as_str()]].concat());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "vmtest failed: {text}{}", stderr(&o));
    let doc = json_in(&text);
    assert_eq!(doc["system"]["pid1"], false);
    assert_eq!(doc["outcome"]["status"], "complete");
    let results = doc["results"].as_array().unwrap();
    // the three asked for, and rename-rawtp's baseline that it brings
    assert_eq!(
        common::names(results),
        ["trig-base", "trig-kprobe", "rename-base", "rename-rawtp"]
    );
    for r in results {
        assert_eq!(r["status"], "ok", "{r}");
        if let Some(h) = r.get("hits") {
            assert_eq!(h["agree"], true, "{r}");
        }
    }
    let bad = format!("{bin} run --filter no-such-bench");
    let o = vmtest(&[vm_args, &[bad.as_str()]].concat());
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// vmtest.toml's target `name` as docs/kernels.md runs it (`vmtest -c -f`): the
/// kernel, root and binary paths it names are the ones kernel-test.sh
/// builds; the whole matrix's JSON must come back complete.
fn toml_target(name: &str) {
    // a relative config path (vmtest's default, `vmtest.toml`) leaves the
    // guest's working directory at / instead of this one
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/vmtest.toml");
    let o = vmtest(&["-c", config, "-f", &format!("^{name}$")]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "vmtest -f {name}: {text}{}", stderr(&o));
    let doc = json_in(&text);
    assert_eq!(doc["outcome"]["status"], "complete", "{name}");
    let results = doc["results"].as_array().unwrap();
    assert!(results.len() > 30, "{name}: {} results", results.len());
    for r in results {
        assert!(
            r["status"] == "ok" || r["status"] == "unsupported",
            "{name}: {r}"
        );
    }
}

#[test]
#[ignore]
fn x86_64_runs_through_vmtest() {
    toml_target("x86_64-tcg");
    through_vmtest(
        &[
            "-q",
            "./scripts/qemu-tcg.sh",
            "-k",
            &env("TRIG_FRESH_BZIMAGE"),
        ],
        env!("CARGO_BIN_EXE_trig-init"),
    );
}

/// vmtest.toml's arm64 target: the fragment-built Image on the arm64 root
/// of scripts/vmtest-rootfs-arm64.sh (the x86-64 host's root cannot run
/// qemu-ga in an arm64 guest).
#[test]
#[ignore]
fn arm64_runs_through_vmtest() {
    let image = env("TRIG_FRESH_ARM64_IMAGE");
    let rootfs = env("TRIG_ARM64_ROOTFS");
    toml_target("arm64");
    through_vmtest(
        &["-a", "aarch64", "-r", &rootfs, "-k", &image],
        // vmtest shares its working directory at /mnt/vmtest, and cds there
        // only on the host's own root
        "/mnt/vmtest/target/aarch64-unknown-linux-musl/release/trig-init",
    );
}

/// The number that follows `key` in `line` (`1.234` of `key 1.234 ± ...`).
fn number_after(line: &str, key: &str) -> Option<f64> {
    let (_, rest) = line.split_once(key)?;
    let n: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    n.parse().ok()
}

/// What each script printed, by name, from the `== NAME` lines the
/// guest's loop writes before each.
fn sections(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        match line.strip_prefix("== ") {
            Some(name) => out.push((name.to_string(), Vec::new())),
            None => {
                if let Some((_, lines)) = out.last_mut() {
                    lines.push(line.to_string());
                }
            }
        }
    }
    out
}

/// Upstream's run_bench_local_storage.sh, run_bench_htab_mem.sh and
/// run_bench_bpf_hashmap_full_update.sh, unchanged, from the newest
/// Debian linux-source (scripts/upstream-scripts.sh), whole in the
/// vmtest guest on the fragments' kernel, `./bench` a link to trig-init
/// and `sudo` a pass-through: each line their seds cut holds its figures
/// (a sed that missed leaves upstream's raw `Summary:` line instead).
#[test]
#[ignore]
fn x86_64_upstream_scripts_run_whole_through_vmtest() {
    let scripts = std::path::PathBuf::from(env("TRIG_UPSTREAM_SCRIPTS")).join("benchs");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("upstream-scripts");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("benchs")).unwrap();
    std::fs::create_dir_all(dir.join("shim")).unwrap();
    for script in std::fs::read_dir(&scripts).expect("the scripts' directory") {
        let script = script.unwrap().path();
        std::fs::copy(
            &script,
            dir.join("benchs").join(script.file_name().unwrap()),
        )
        .unwrap();
    }
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_trig-init"), dir.join("bench")).unwrap();
    // the guest runs as root: upstream's `sudo ./bench` needs no sudo
    let sudo = dir.join("shim/sudo");
    std::fs::write(&sudo, "#!/bin/sh\nexec \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&sudo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = format!(
        "cd {d} && export PATH={d}/shim:$PATH && \
         for s in local_storage htab_mem bpf_hashmap_full_update; do \
         echo \"== $s\"; bash benchs/run_bench_$s.sh || echo \"== $s failed: $?\"; done",
        d = dir.display()
    );
    let o = vmtest(&[
        "-q",
        "./scripts/qemu-tcg.sh",
        "-k",
        &env("TRIG_FRESH_BZIMAGE"),
        &run,
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    // what they printed, kept for docs/upstream-bench.md
    std::fs::write(dir.join("output.txt"), text.as_bytes()).unwrap();
    assert!(o.status.success(), "vmtest failed: {}", stderr(&o));
    let sections = sections(&text);
    let names: Vec<&str> = sections.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["local_storage", "htab_mem", "bpf_hashmap_full_update"],
        "{text}"
    );
    let cut = |name: &str, marker: &str| -> Vec<String> {
        let (_, lines) = sections.iter().find(|(n, _)| n == name).unwrap();
        assert!(
            lines.iter().all(|l| !l.contains("Summary")),
            "{name}: {lines:?}"
        );
        lines
            .iter()
            .filter(|l| l.contains(marker))
            .cloned()
            .collect()
    };
    // 5 key counts of the control, 8 map counts of each cache benchmark
    let storage = cut("local_storage", " get: ");
    assert_eq!(storage.len(), 5 + 2 * 8, "{storage:?}");
    for l in &storage {
        assert!(
            number_after(l, "hits throughput: ").is_some_and(|t| t > 0.0),
            "{l}"
        );
        assert!(
            number_after(l, "hits latency: ").is_some_and(|t| t > 0.0),
            "{l}"
        );
        assert!(
            number_after(l, "important_hits throughput: ").is_some(),
            "{l}"
        );
    }
    // three use cases, preallocated and not
    let htab = cut("htab_mem", "per-prod-op: ");
    assert_eq!(htab.len(), 6, "{htab:?}");
    for l in &htab {
        assert!(
            number_after(l, "per-prod-op: ").is_some_and(|t| t > 0.0),
            "{l}"
        );
        assert!(number_after(l, "avg mem: ").is_some_and(|m| m > 0.0), "{l}");
        assert!(
            number_after(l, "peak mem: ").is_some_and(|m| m > 0.0),
            "{l}"
        );
    }
    // each CPU's line: `N:hash_map_full_perf X events per sec`
    let full = cut("bpf_hashmap_full_update", ":hash_map_full_perf ");
    assert!(!full.is_empty(), "{text}");
    for l in &full {
        assert!(
            number_after(l, ":hash_map_full_perf ").is_some_and(|n| n > 0.0),
            "{l}"
        );
    }
}

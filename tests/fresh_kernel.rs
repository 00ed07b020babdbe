//! A kernel built from kconfigs/ (scripts/kernel-test.sh builds it and runs
//! these): every benchmark its version supports is `ok`, including the
//! kprobe_multi and fmod_ret ones that Debian's 6.1 lacks, and the binary
//! runs as a plain command through vmtest. Slow, so ignored by default.

mod common;
use common::{stderr, trig_init};
use serde_json::Value;
use std::process::Command;

/// The vmlinux (or bzImage) built by scripts/build-kernel.sh --vmtest.
fn kernel() -> String {
    std::env::var("TRIG_FRESH_KERNEL").expect("TRIG_FRESH_KERNEL: run scripts/kernel-test.sh")
}

/// What a 6.1 kernel cannot run whatever its config: uprobe_multi came in
/// 6.6, the batched tp/rawtp/fmodret driver's kfunc and tracepoint in 6.10.
const NEWER_THAN_6_1: &[&str] = &[
    "trig-batch-fmodret",
    "trig-batch-tp",
    "trig-batch-rawtp",
    "trig-uprobe-multi-",
    "trig-uretprobe-multi-",
];

#[test]
#[ignore]
fn every_supported_benchmark_is_ok() {
    let out = std::env::temp_dir().join(format!("trig-fresh-{}", std::process::id()));
    let out = out.display().to_string();
    let k = kernel();
    let o = trig_init(&[
        "vm",
        "-k",
        &k,
        "--out",
        &out,
        "--json",
        "-",
        "--",
        "-w",
        "0",
        "-d",
        "1",
        "--cmp-str-len",
        "8",
    ]);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("results JSON");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let results = doc["runs"][0]["report"]["results"].as_array().unwrap();
    let release = doc["runs"][0]["report"]["system"]["release"]
        .as_str()
        .unwrap();
    for r in results {
        let name = r["name"].as_str().unwrap();
        let older =
            release.starts_with("6.1.") && NEWER_THAN_6_1.iter().any(|p| name.starts_with(p));
        let want = if older { "unsupported" } else { "ok" };
        assert_eq!(r["status"], want, "{name} on {release}: {}", r["reason"]);
    }
    for name in [
        "trig-kprobe-multi",
        "trig-kretprobe-multi",
        "trig-fmodret",
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

#[test]
#[ignore]
fn runs_through_vmtest() {
    let bzimage = std::env::var("TRIG_FRESH_BZIMAGE")
        .expect("TRIG_FRESH_BZIMAGE: run scripts/kernel-test.sh");
    let root = env!("CARGO_MANIFEST_DIR");
    let bin = env!("CARGO_BIN_EXE_trig-init");
    let o = Command::new("vmtest")
        .current_dir(root)
        .args(["-q", "./scripts/qemu-tcg.sh", "-k", &bzimage])
        .arg(format!(
            "{bin} run -w 0 -d 1 --filter trig-base --filter trig-kprobe --filter trig-fmodret"
        ))
        .output()
        .expect("vmtest (cargo install vmtest)");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "vmtest failed: {text}{}", stderr(&o));
    let doc = json_in(&text);
    assert_eq!(doc["system"]["pid1"], false);
    assert_eq!(doc["outcome"]["status"], "complete");
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    for r in results {
        assert_eq!(r["status"], "ok", "{r}");
        if let Some(h) = r.get("hits") {
            let (b, u) = (h["bpf"].as_u64().unwrap(), h["user"].as_u64().unwrap());
            assert!(
                b.abs_diff(u) * 100 <= u,
                "{}: BPF {b} vs user {u}",
                r["name"]
            );
        }
    }
    // a failing run's status reaches the host through vmtest
    let o = Command::new("vmtest")
        .current_dir(root)
        .args(["-q", "./scripts/qemu-tcg.sh", "-k", &bzimage])
        .arg(format!("{bin} run --filter no-such-bench"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

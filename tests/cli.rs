//! The command line on the host: errors that name their cause.

mod common;
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

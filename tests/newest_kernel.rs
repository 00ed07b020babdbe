//! The newest Debian kernel, unstable's, through `-k debian:unstable`:
//! a few benchmarks of each family must be `ok` with hit counts that
//! agree, on x86-64 and arm64, so that a new kernel that breaks one shows
//! up as a failed CI run (.ci/run runs these); and fetching it through
//! trig-init's private apt configuration leaves the host's apt sources,
//! lists and package cache as they were. Slow and networked (an `apt-get
//! update` of unstable and a 14 MB download each), so ignored by default.

mod common;
use common::stderr;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

/// Every file under the host's apt directories, with its length and
/// modification time.
fn apt_state() -> BTreeMap<String, (u64, Option<SystemTime>)> {
    fn walk(dir: &Path, out: &mut BTreeMap<String, (u64, Option<SystemTime>)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                walk(&path, out);
            } else {
                out.insert(
                    path.display().to_string(),
                    (meta.len(), meta.modified().ok()),
                );
            }
        }
    }
    let mut state = BTreeMap::new();
    for dir in ["/etc/apt", "/var/lib/apt/lists", "/var/cache/apt"] {
        walk(Path::new(dir), &mut state);
    }
    state
}

/// Boots unstable's newest kernel with `vm_args` and the `benches`, from
/// an empty cache (so that apt runs), and checks each is `ok` and that
/// the host's apt is untouched. Returns the release booted.
fn unstable(vm_args: &[&str], benches: &[&str]) -> String {
    // one directory per test: the two may run side by side
    let tmp = std::env::temp_dir().join(format!(
        "trig-newest-{}-{}",
        std::process::id(),
        vm_args.len()
    ));
    let cache = tmp.join("cache");
    let out = tmp.join("out").display().to_string();
    let before = apt_state();
    let mut args = vec!["vm", "-k", "debian:unstable", "--out", &out, "--json", "-"];
    args.extend(vm_args);
    args.extend(["--", "--cmp-str-len", "8"]);
    for b in benches {
        args.extend(["--filter", b]);
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_trig-init"))
        .env("TRIG_CACHE", &cache)
        .args(&args)
        .output()
        .expect("run trig-init");
    let after = apt_state();
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(before, after, "the host's apt changed");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("results JSON");
    let report = &doc["runs"][0]["report"];
    let results = report["results"].as_array().unwrap();
    // by benchmark: strncmp's results are named by their length
    for b in benches {
        assert!(results.iter().any(|r| r["bench"] == *b), "{b} did not run");
    }
    for r in results {
        assert_eq!(r["status"], "ok", "{}: {}", r["name"], r["reason"]);
        if let Some(h) = r.get("hits") {
            assert_eq!(h["agree"], true, "{}: {h}", r["name"]);
            // a probe in trig-init's own code fires on its calls only:
            // every event counted once, on both sides (an arm64 boot once
            // had 1.2% more in BPF, from producers that started before
            // the counts were reset)
            let name = r["name"].as_str().unwrap();
            if name.contains("uprobe") || name.contains("usdt") {
                assert_eq!(h["bpf"], h["user"], "{name}: {h}");
            }
        }
    }
    report["system"]["release"].as_str().unwrap().to_string()
}

/// Each family, and each design and attach kind of the trigger family.
const FAMILIES: &[&str] = &[
    "trig-kprobe",
    "trig-fentry",
    "trig-batch-kprobe-multi",
    "trig-batch-rawtp",
    "trig-uprobe-nop",
    "trig-uretprobe-multi-push",
    "trig-usdt",
    "rename-rawtp",
    "strncmp-helper",
    "count-global",
    "bpf-loop",
    "bpf-for",
    "bloom-false-positive",
    "hashmap-with-bloom",
    "bpf-hashmap-full-update",
    "bpf-hashmap-lookup",
    "bpf-rhashmap-full-update",
    "bpf-rhashmap-lookup",
    "local-storage-cache-int-get",
    "lpm-trie-delete",
    "lpm-trie-free",
    "htab-mem",
    "rhtab-mem",
    "bpf-nop",
];

#[test]
#[ignore]
fn x86_64_unstable_runs_each_family_and_leaves_apt_alone() {
    let newest = [
        "trig-kprobe-multi-all",
        "trig-uprobe-nop10",
        "trig-usdt-nop5",
    ];
    let release = unstable(&[], &[FAMILIES, &newest[..]].concat());
    // a suite's kernel, not the host's (Debian 12's are 6.1 and 6.12)
    let version = trig_guest::registry::version_of(&release).unwrap();
    assert!(version > (6, 12), "{release}");
}

/// The arm64 binary scripts/build.sh --arch aarch64 makes.
const ARM64_INIT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/target/aarch64-unknown-linux-musl/release/trig-init"
);

#[test]
#[ignore]
fn arm64_unstable_runs_each_family_and_leaves_apt_alone() {
    let release = unstable(&["--arch", "aarch64", "--init", ARM64_INIT], FAMILIES);
    assert!(release.contains("arm64"), "{release}");
}

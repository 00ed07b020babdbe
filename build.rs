//! Compiles every `bpf/*.bpf.c` into a libbpf skeleton under OUT_DIR, and
//! writes `skels.rs`: one module per object (its skeleton) and the section
//! of every program, as compiled, so that a new object needs no include
//! and attach points are never repeated by hand.

// cargo reads build.rs's directives from its stdout
#![allow(clippy::disallowed_macros)]
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use std::{env, fmt::Write as _, fs};

use libbpf_cargo::SkeletonBuilder;

fn main() {
    // The guest crate (init/guest) builds with this script; bpf/ lies at
    // the top, beside it. Cargo takes relative rerun paths from the
    // crate's directory, so those printed below are absolute.
    let top = Path::new(&env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the top of the tree");
    env::set_current_dir(&top).expect("cd to the top of the tree");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    // vmlinux.h differs per architecture; pick the one of the target.
    let arch = match env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
        Ok("aarch64") => "arm64",
        _ => "x86",
    };
    let clang = env::var_os("BPF_CLANG").unwrap_or_else(|| "clang".into());
    println!("cargo:rerun-if-env-changed=BPF_CLANG");
    println!("cargo:rerun-if-changed={}", top.join("bpf").display());
    println!("cargo:rustc-env=TRIG_GIT_REV={}", git_rev());
    // A rerun for the revision alone (a commit) compiles no BPF: the
    // objects are kept until bpf/, build.rs, the target or clang change.
    let stamp = out.join("bpf.stamp");
    let key = format!("{arch} {}", clang.to_string_lossy());
    if !up_to_date(&stamp, &key) {
        compile(&out, arch, &clang);
        fs::write(&stamp, key).expect("writing bpf.stamp");
    }
}

/// `git describe` of the tree, and the files whose change moves it: HEAD
/// and the branch it names, wherever git keeps them (in a worktree `.git`
/// is a file, and a path that does not exist would rerun this script,
/// and every BPF compile, on every build).
fn git_rev() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let head = git(&["symbolic-ref", "-q", "HEAD"]);
    for name in ["HEAD"].into_iter().chain(head.as_deref()) {
        if let Some(path) = git(&["rev-parse", "--git-path", name]) {
            if let Ok(path) = Path::new(&path).canonicalize() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    git(&["describe", "--always", "--dirty", "--abbrev=12"]).unwrap_or_else(|| "unknown".into())
}

/// Whether the objects of the last compile (`stamp`, written after it,
/// holding `key`) are newer than build.rs and everything under bpf/.
fn up_to_date(stamp: &Path, key: &str) -> bool {
    fn newest(path: &Path) -> Option<SystemTime> {
        let meta = fs::metadata(path).ok()?;
        let own = meta.modified().ok()?;
        if !meta.is_dir() {
            return Some(own);
        }
        fs::read_dir(path)
            .ok()?
            .map(|e| e.ok().and_then(|e| newest(&e.path())))
            .try_fold(own, |a, b| Some(a.max(b?)))
    }
    let compiled = fs::metadata(stamp).and_then(|m| m.modified()).ok();
    let inputs = newest(Path::new("bpf")).zip(newest(Path::new("build.rs")));
    match (fs::read_to_string(stamp), compiled, inputs) {
        (Ok(k), Some(at), Some((bpf, script))) => k == key && at > bpf.max(script),
        _ => false,
    }
}

/// Compiles every object and writes its skeleton and `skels.rs`.
fn compile(out: &Path, arch: &str, clang: &OsStr) {
    let mut sources: Vec<PathBuf> = fs::read_dir("bpf")
        .expect("bpf/ directory")
        .map(|e| e.expect("bpf/ entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".bpf.c"))
        .collect();
    sources.sort();
    let include = format!("bpf/{arch}");
    // v3 (32-bit ALU and jumps, kernels since 5.1), as upstream's selftests
    // compile: v1 zero-extends every 32-bit value with two shifts, 8
    // instructions a lookup more in hashmap-with-bloom
    let clang_args = ["-I", "bpf", "-I", &include, "-Wall", "-mcpu=v3"];
    let mut modules = String::new();
    let mut sections = String::new();
    for src in sources {
        let name = src
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".bpf.c"))
            .expect("utf-8 name")
            .to_string();
        let obj = out.join(format!("{name}.bpf.o"));
        SkeletonBuilder::new()
            .source(&src)
            .obj(&obj)
            .clang(clang)
            .clang_args(clang_args)
            .build_and_generate(out.join(format!("{name}.skel.rs")))
            .unwrap_or_else(|e| panic!("building {}: {e:#}", src.display()));
        writeln!(
            modules,
            "pub mod {name} {{\n    include!(concat!(env!(\"OUT_DIR\"), \"/{name}.skel.rs\"));\n}}"
        )
        .unwrap();
        let opened = libbpf_rs::ObjectBuilder::default()
            .open_file(&obj)
            .unwrap_or_else(|e| panic!("opening {}: {e:#}", obj.display()));
        for prog in opened.progs() {
            // libbpf drops the "?" (autoload off) of a section name already
            let section = prog.section().to_string_lossy();
            let section = section.trim_start_matches('?');
            writeln!(
                sections,
                "    ({name:?}, {:?}, {section:?}),",
                prog.name().to_string_lossy()
            )
            .unwrap();
        }
    }
    fs::write(out.join("skels.rs"), modules).expect("writing skels.rs");
    // apart from the skeletons: the registry reads it without the loader
    let sections = format!(
        "/// (object, program, section) of every BPF program, as compiled.\n\
         pub const SECTIONS: &[(&str, &str, &str)] = &[\n{sections}];\n"
    );
    fs::write(out.join("sections.rs"), sections).expect("writing sections.rs");
}

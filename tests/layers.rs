//! The dependencies go one way (ARCHITECTURE.md, "Dependencies"): what
//! reads results (analysis, export) and the schema both sides share
//! (report) use none of the guest's modules; the registry is data that the
//! runners read, not the reverse; the host plans with the registry, never
//! with the runners. Each test names the file and line that breaks a rule.

use std::path::{Path, PathBuf};

/// The `.rs` files under `dir`, recursively, in a stable order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
    files
}

/// The crate's modules that `text` names, with their line numbers:
/// `crate::NAME` (the library) and `trig_init::NAME` (the binary's
/// modules), both also as `crate::{A, B::c}`.
fn modules(text: &str) -> Vec<(usize, String)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for root in ["crate::", "trig_init::"] {
            for (at, _) in line.match_indices(root) {
                let rest = &line[at + root.len()..];
                match rest.strip_prefix('{') {
                    // a group: each item's first name, at the group's top level
                    Some(group) => {
                        let mut depth = 0;
                        let mut item_start = true;
                        for (k, c) in group.char_indices() {
                            match c {
                                '{' => depth += 1,
                                '}' if depth == 0 => break,
                                '}' => depth -= 1,
                                ',' if depth == 0 => item_start = true,
                                c if item_start && !c.is_whitespace() => {
                                    found.push((i + 1, ident(&group[k..])));
                                    item_start = false;
                                }
                                _ => {}
                            }
                        }
                    }
                    None => found.push((i + 1, ident(rest))),
                }
            }
        }
    }
    found
}

/// Every use under `dirs` (folders or files) of a crate module that
/// `allowed` rejects, as `path:line: crate::NAME`.
fn breaches(dirs: &[&str], allowed: impl Fn(&str) -> bool) -> Vec<String> {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for d in dirs {
        let path = top.join(d);
        let files = if path.is_dir() {
            rust_files(&path)
        } else {
            vec![path]
        };
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (line, module) in modules(&text) {
                if !allowed(&module) {
                    let rel = f.strip_prefix(top).unwrap().display();
                    out.push(format!("{rel}:{line}: crate::{module}"));
                }
            }
        }
    }
    out
}

fn assert_none(breaches: Vec<String>, rule: &str) {
    assert!(breaches.is_empty(), "{rule}:\n{}", breaches.join("\n"));
}

/// Results carry what analysis needs (baselines, attach kinds, the
/// parameters), so analysis, export and the schema build without the
/// guest's modules (registry, options, matrix, sampler, guest, runner,
/// caps, bpf, cpu) and without the host's.
#[test]
fn what_reads_results_uses_no_guest_module() {
    const SHARED: &[&str] = &[
        "analysis", "export", "report", "stats", "files", "error", "exit",
    ];
    assert_none(
        breaches(&["init/analysis", "init/export", "init/report"], |m| {
            SHARED.contains(&m)
        }),
        "analysis, export and report may use only the shared modules",
    );
}

/// The registry is data: the runners of matrix/ read it, and it names
/// which runner a family takes without importing it.
#[test]
fn the_registry_imports_no_runner() {
    const DATA: &[&str] = &["caps", "report"];
    assert_none(
        breaches(&["init/registry.rs"], |m| DATA.contains(&m)),
        "the registry may use only features and the schema (the programs' sections are its own)",
    );
}

/// The host counts and names points with the registry; matrix/ and the
/// sampler run them, in the guest only.
#[test]
fn the_host_plans_without_the_runners() {
    assert_none(
        breaches(&["init/boot", "init/commands"], |m| {
            !["matrix", "sampler"].contains(&m)
        }),
        "the host may not use matrix/ or the sampler",
    );
}

#[test]
fn the_scan_finds_grouped_and_qualified_uses() {
    let text = "use crate::{registry, report::{Better, Meter}};\n\
                let x = trig_init::matrix::points();\n\
                // crate::options in a comment counts too\n";
    let names: Vec<(usize, String)> = modules(text);
    let want = [
        (1, "registry"),
        (1, "report"),
        (2, "matrix"),
        (3, "options"),
    ];
    let want: Vec<(usize, String)> = want.iter().map(|&(l, m)| (l, m.into())).collect();
    assert_eq!(names, want);
}

/// One meaning per name: no public type (`pub` or `pub(...)` struct,
/// enum, trait or type alias) is defined twice under init/, so that a
/// name found in one file means the same in another.
#[test]
fn every_public_type_name_is_defined_once() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut defined: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for f in rust_files(&top.join("init")) {
        let rel = f.strip_prefix(top).unwrap().display().to_string();
        for line in std::fs::read_to_string(&f).unwrap().lines() {
            let Some(rest) = line.trim_start().strip_prefix("pub") else {
                continue;
            };
            // pub(crate), pub(super), ...
            let rest = match rest.strip_prefix('(') {
                Some(r) => r.split_once(')').map_or("", |(_, after)| after),
                None => rest,
            };
            let mut words = rest.split_whitespace();
            if let (Some("struct" | "enum" | "trait" | "type"), Some(name)) =
                (words.next(), words.next())
            {
                let name: String = name
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let files = defined.entry(name).or_default();
                if !files.contains(&rel) {
                    files.push(rel.clone());
                }
            }
        }
    }
    let twice: Vec<String> = defined
        .iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(name, files)| format!("{name}: {}", files.join(" ")))
        .collect();
    assert_none(twice, "public type names defined more than once");
}

/// What the scripts share lives in scripts/lib.sh: the proofs' git
/// identity is written there alone, and no script reads compare's text
/// (its headings are for people; scripts read `--export-json`).
#[test]
fn scripts_share_lib_sh_and_read_no_compare_text() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let mut breaches = Vec::new();
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sh"))
        .collect();
    scripts.sort();
    for p in scripts {
        let text = std::fs::read_to_string(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        for (i, line) in text.lines().enumerate() {
            let identity = line.contains("user.email=") && name != "lib.sh";
            let scraped = line.contains("Where the instructions went");
            if identity || scraped {
                breaches.push(format!("scripts/{name}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert_none(
        breaches,
        "the git identity only in scripts/lib.sh, and compare's JSON, not its text",
    );
}

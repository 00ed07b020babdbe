//! What the crates' manifests cannot say (ARCHITECTURE.md,
//! "Dependencies"). Cargo keeps the crates apart: schema <- guest <- boot,
//! schema <- analysis <- export, and the binary on top, so the guest
//! cannot reach analysis or export, nor analysis export; the first test
//! keeps the manifests so. Inside the guest crate, and in what the host
//! takes from it, the rules are the modules': the registry is data that
//! the runners read, not the reverse; the host plans with the registry and
//! the options, never with the runners. Each test names the file and line
//! that breaks a rule.

use std::path::{Path, PathBuf};

pub(crate) fn top() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `.rs` files under `dir`, recursively, in a stable order.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    files_ending(dir, "rs")
}

/// The files under `dir` whose extension is `ext`, recursively, in a
/// stable order.
fn files_ending(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files.extend(files_ending(&p, ext));
        } else if p.extension().is_some_and(|x| x == ext) {
            files.push(p);
        }
    }
    files
}

/// The workspace crates that the manifest `text` depends on, outside its
/// dev-dependencies (what ships).
fn shipped_dependencies(text: &str) -> Vec<String> {
    let mut section = "";
    let mut deps = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[dependencies]" && line.starts_with("trig-") {
            let name: String = line
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            deps.push(name);
        }
    }
    deps.sort();
    deps
}

/// The crates along the data's way, and what each may build on: no path
/// from the guest to analysis or export, none from analysis to export.
#[test]
fn the_crates_follow_the_data() {
    let want: &[(&str, &[&str])] = &[
        ("init/model", &[]),
        ("init/schema", &[]),
        ("init/guest", &["trig-model", "trig-schema"]),
        ("init/boot", &["trig-guest", "trig-model", "trig-schema"]),
        ("init/analysis", &["trig-schema"]),
        ("init/export", &["trig-analysis", "trig-schema"]),
        ("plugin", &["trig-model"]),
    ];
    let mut wrong = Vec::new();
    for (dir, allowed) in want {
        let text = std::fs::read_to_string(top().join(dir).join("Cargo.toml")).unwrap();
        let deps = shipped_dependencies(&text);
        if deps != *allowed {
            wrong.push(format!("{dir}/Cargo.toml: {deps:?}, not {allowed:?}"));
        }
    }
    assert_none(wrong, "the crates' dependencies");
}

/// The modules of `crate_name` (or, with `local`, of this crate) that
/// `text` names before its tests, with their line numbers, also inside
/// `use` groups: `NAME` of `crate_name::NAME` and `crate_name::{NAME, ..}`.
pub(crate) fn modules(text: &str, root: &str) -> Vec<(usize, String)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        // a test may build what the guest would (a report, its symbols)
        if line.trim() == "#[cfg(test)]" {
            break;
        }
        let root = format!("{root}::");
        for (at, _) in line.match_indices(&root) {
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
    found
}

/// Every use under `dirs` (folders or files) of a module of `root` (a
/// crate's name, or `crate`) that `allowed` rejects, as
/// `path:line: root::NAME`.
fn breaches(dirs: &[&str], root: &str, allowed: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    for d in dirs {
        let path = top().join(d);
        let files = if path.is_dir() {
            rust_files(&path)
        } else {
            vec![path]
        };
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (line, module) in modules(&text, root) {
                if !allowed(&module) {
                    let rel = f.strip_prefix(top()).unwrap().display();
                    out.push(format!("{rel}:{line}: {root}::{module}"));
                }
            }
        }
    }
    out
}

pub(crate) fn assert_none(breaches: Vec<String>, rule: &str) {
    assert!(breaches.is_empty(), "{rule}:\n{}", breaches.join("\n"));
}

/// The registry is data: the runners of matrix/ read it, and it names
/// which runner a family takes without importing it.
#[test]
fn the_registry_imports_no_runner() {
    const DATA: &[&str] = &["caps"];
    assert_none(
        breaches(&["init/guest/registry.rs"], "crate", |m| DATA.contains(&m)),
        "the registry may use only features and the schema (the programs' sections are its own)",
    );
}

/// The host counts and names points with the registry, writes the run
/// options as kernel arguments and plans a split run as its guests do
/// (`split`, the registry's selection in parts); the runners, the sampler and PID 1
/// are the guest's (`run`, `bench` and PID 1 themselves are the binary's:
/// they run the matrix in the running kernel).
#[test]
fn the_host_plans_with_the_registry_and_options_alone() {
    let mut host = vec!["init/boot".to_string()];
    for f in rust_files(&top().join("init/app/commands")) {
        let rel = f.strip_prefix(top()).unwrap().display().to_string();
        if !["init/app/commands/run.rs", "init/app/commands/bench.rs"].contains(&rel.as_str()) {
            host.push(rel);
        }
    }
    let host: Vec<&str> = host.iter().map(String::as_str).collect();
    assert_none(
        breaches(&host, "trig_guest", |m| {
            ["registry", "options", "split"].contains(&m)
        }),
        "the host may use the guest's registry, options and split plan alone",
    );
}

#[test]
fn the_scan_finds_grouped_and_qualified_uses() {
    let text = "use trig_guest::{registry, options::{RunOptions}};\n\
                let x = trig_guest::matrix::points();\n\
                // trig_guest::runner in a comment counts too\n\
                #[cfg(test)]\n\
                use trig_guest::pid1;\n";
    let names: Vec<(usize, String)> = modules(text, "trig_guest");
    let want = [
        (1, "registry"),
        (1, "options"),
        (2, "matrix"),
        (3, "runner"),
    ];
    let want: Vec<(usize, String)> = want.iter().map(|&(l, m)| (l, m.into())).collect();
    assert_eq!(names, want);
    assert_eq!(
        shipped_dependencies("[dependencies]\ntrig-schema.workspace = true\nnix = 1\n[dev-dependencies]\ntrig-guest = 1\n"),
        ["trig-schema"]
    );
}

/// One meaning per name: no public type (`pub` or `pub(...)` struct,
/// enum, trait or type alias) is defined twice under init/, so that a
/// name found in one file means the same in another.
#[test]
fn every_public_type_name_is_defined_once() {
    let top = top();
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
/// identity is written there alone; bisect.sh, sweep.sh and nightly.sh
/// build a commit with its `build_commit` and read vm's exit status with
/// its `vm_outcome`, not each their own way; and no script reads
/// compare's text (its headings are for people; scripts read
/// `--export-json`).
#[test]
fn scripts_share_lib_sh_and_read_no_compare_text() {
    let mut breaches = Vec::new();
    for p in files_ending(&top().join("scripts"), "sh") {
        let text = std::fs::read_to_string(&p).unwrap();
        let name = p.strip_prefix(top()).unwrap().display().to_string();
        let measures = [
            "scripts/bisect.sh",
            "scripts/sweep.sh",
            "scripts/nightly.sh",
        ]
        .contains(&name.as_str());
        for (i, line) in text.lines().enumerate() {
            let code = line.split('#').next().unwrap_or("");
            let identity = line.contains("user.email=") && name != "scripts/lib.sh";
            let scraped = line.contains("Where the instructions went");
            let own_build = measures && code.contains("build-kernel.sh");
            let own_status = measures && code.contains("$vm -");
            if identity || scraped || own_build || own_status {
                breaches.push(format!("{name}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert_none(
        breaches,
        "the git identity, a commit's build and vm's exit status only in scripts/lib.sh, \
         and compare's JSON, not its text",
    );
}

/// scripts/ is split by audience: the user's at its top (setup, build,
/// test, bisect, sweep, nightly), the proofs and slow tests in
/// scripts/proofs/, the development benchmarks in scripts/bench/. Every
/// script a document, the CI, a workflow or the code names is where it
/// says, so a move cannot leave a stale path behind.
#[test]
fn every_script_named_is_there() {
    let mut texts: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", ".ci/run", "vmtest.toml"]
        .iter()
        .map(|p| top().join(p))
        .collect();
    for (dir, ext) in [
        ("docs", "md"),
        ("examples", "yml"),
        ("examples", "rs"),
        ("init", "rs"),
        ("tests", "rs"),
        ("scripts", "sh"),
    ] {
        texts.extend(files_ending(&top().join(dir), ext));
    }
    let mut missing = Vec::new();
    for p in texts {
        let text = std::fs::read_to_string(&p).unwrap();
        for (at, _) in text.match_indices("scripts/") {
            // this checkout's scripts/, not a kernel tree's ($src/scripts/)
            let before = text[..at]
                .rsplit(|c: char| c.is_whitespace() || "\"'`(".contains(c))
                .next()
                .unwrap_or("");
            if !["", "./", "$top/"].contains(&before) && !before.ends_with("trig-init/") {
                continue;
            }
            let named: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "/._-".contains(*c))
                .collect();
            let named = named.trim_end_matches('.');
            if !named.ends_with(".sh") && !named.ends_with(".py") {
                continue;
            }
            if !top().join(named).is_file() {
                let file = p.strip_prefix(top()).unwrap().display();
                missing.push(format!("{file}: {named}"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert_none(missing, "scripts named that are not there");
}

/// Errors get their class where they arise (`trig_schema::error`): no
/// public function returns, or takes, a `Result` whose error is a bare
/// `String`, which would leave the class to whoever catches it.
#[test]
fn no_public_function_has_a_string_error() {
    let mut found = Vec::new();
    for f in rust_files(&top().join("init")) {
        let text = std::fs::read_to_string(&f).unwrap();
        // a test module's helpers are not the crate's interface
        let code = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        for (at, _) in code.match_indices("pub fn ") {
            let sig = &code[at..];
            let sig = &sig[..sig.find(['{', ';']).unwrap_or(sig.len())];
            if sig.contains(", String>") {
                let line = code[..at].lines().count() + 1;
                let rel = f.strip_prefix(top()).unwrap().display();
                let name = sig["pub fn ".len()..].split('(').next().unwrap_or("");
                found.push(format!("{rel}:{line}: {name}"));
            }
        }
    }
    assert_none(found, "public functions with a String error");
}

/// The simulated machine is one crate of std alone, which the plugin,
/// the guest and the host reach through Cargo: no source is compiled
/// into another crate by path, where Cargo would not see the tie.
#[test]
fn the_simulated_machine_is_a_crate_of_std_alone() {
    let manifest = std::fs::read_to_string(top().join("init/model/Cargo.toml")).unwrap();
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .expect("a [dependencies] section");
    let named: Vec<&str> = deps
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with('['))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(named.is_empty(), "init/model depends on {named:?}");
    let mut pathed = Vec::new();
    for f in rust_files(&top().join("init"))
        .into_iter()
        .chain(rust_files(&top().join("plugin/src")))
    {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("#[path") {
                pathed.push(format!("{}:{}", f.display(), i + 1));
            }
        }
    }
    assert_none(pathed, "sources compiled in by #[path]");
}

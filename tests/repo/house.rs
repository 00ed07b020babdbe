//! The house rules of the sources (issues 51 and 60): no production
//! function over 60 lines (but the tables named here), no production file
//! over 700 lines (but the registry's and the run options' tables), no
//! circle of imports between the children of any module at any depth, no
//! folder of 15 sources or more.
//! Each keeps the code easy to find one's way in.

use crate::layers::{assert_none, modules, rust_files, top};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LONGEST: usize = 60;
const CROWDED: usize = 15;
/// Longer functions allowed, one by one (`path:name`): tables, whose
/// rows read best together. None today.
const TABLES: &[&str] = &[];
/// No production file is longer, but the two tables that each family
/// grows: the registry's rows and the run options'.
const LONGEST_FILE: usize = 700;
const TABLE_FILES: &[&str] = &["init/guest/registry.rs", "init/guest/options.rs"];

fn rel(p: &Path) -> String {
    p.strip_prefix(top()).unwrap().display().to_string()
}

/// `src` with what cannot hold code blanked (comments, strings, char
/// literals), lines kept, so braces count as the compiler reads them.
fn code(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |out: &mut String, s: &[u8]| {
        out.extend(s.iter().map(|&c| if c == b'\n' { '\n' } else { ' ' }))
    };
    while i < b.len() {
        let rest = &b[i..];
        let end = if rest.starts_with(b"//") {
            rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            rest.windows(2)
                .position(|w| w == b"*/")
                .map_or(rest.len(), |k| k + 2)
        } else if rest.starts_with(b"r#\"") || rest.starts_with(b"r\"") {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            let close: Vec<u8> = std::iter::once(b'"').chain(vec![b'#'; hashes]).collect();
            let from = 2 + hashes;
            rest[from..]
                .windows(close.len())
                .position(|w| w == close)
                .map_or(rest.len(), |k| from + k + close.len())
        } else if rest[0] == b'"' {
            let mut k = 1;
            while k < rest.len() && rest[k] != b'"' {
                k += if rest[k] == b'\\' { 2 } else { 1 };
            }
            k + 1
        } else if rest[0] == b'\'' && (rest.get(2) == Some(&b'\'') || rest.get(1) == Some(&b'\\')) {
            rest[2..]
                .iter()
                .position(|&c| c == b'\'')
                .map_or(1, |k| k + 3)
        } else {
            0
        };
        if end == 0 {
            out.push(rest[0] as char);
            i += 1;
        } else {
            blank(&mut out, &rest[..end.min(rest.len())]);
            i += end;
        }
    }
    out
}

/// The line after `at` where the item starting there closes its braces;
/// None for a declaration without a body.
fn closing(lines: &[&str], at: usize) -> Option<usize> {
    let (mut depth, mut nested) = (0i32, 0i32);
    let mut opened = false;
    for (k, line) in lines.iter().enumerate().skip(at) {
        for c in line.chars() {
            match c {
                // the signature's parameters and types: `{ cmd }: Cmd`, `[u8; 4]`
                '(' | '[' if !opened => nested += 1,
                ')' | ']' if !opened => nested -= 1,
                _ if nested > 0 => {}
                ';' if !opened => return None,
                '{' => (depth, opened) = (depth + 1, true),
                '}' => depth -= 1,
                _ => {}
            }
            if opened && depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// Whether `line` starts a function: `fn` after nothing but its qualifiers.
fn starts_fn(line: &str) -> bool {
    let Some((before, _)) = line.split_once("fn ") else {
        return false;
    };
    before.split_whitespace().all(|w| {
        matches!(
            w,
            "pub" | "const" | "async" | "unsafe" | "extern" | "\"" | "\"\""
        ) || w.starts_with("pub(")
            || w.chars().all(|c| c == '"' || c == ' ')
    })
}

/// The production sources: the crates, the plugin and build.rs, but not
/// the tests beside them (`*_tests.rs`, `*_tests/`).
fn production() -> Vec<PathBuf> {
    let mut files = rust_files(&top().join("init"));
    files.extend(rust_files(&top().join("plugin/src")));
    files.push(top().join("build.rs"));
    files.retain(|f| !rel(f).contains("_tests"));
    files
}

/// `path:line: NAME, N lines` for each function longer than LONGEST,
/// outside `#[cfg(test)]` modules and not one of the [`TABLES`].
fn long_functions(path: &Path) -> Vec<String> {
    let text = code(&std::fs::read_to_string(path).unwrap());
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let t = lines[k].trim();
        let attr_before = |want: &str| {
            lines[..k]
                .iter()
                .rev()
                .map(|l| l.trim())
                .take_while(|l| l.starts_with("#["))
                .any(|l| l.contains(want))
        };
        if t.starts_with("mod ") && t.ends_with('{') && attr_before("cfg(test)") {
            k = closing(&lines, k).unwrap_or(k) + 1;
            continue;
        }
        if starts_fn(t) {
            if let Some(end) = closing(&lines, k) {
                let name: String = t
                    .split_once("fn ")
                    .unwrap()
                    .1
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let table = TABLES.contains(&format!("{}:{name}", rel(path)).as_str());
                if end - k + 1 > LONGEST && !table {
                    out.push(format!(
                        "{}:{}: {name}, {} lines",
                        rel(path),
                        k + 1,
                        end - k + 1
                    ));
                }
            }
        }
        k += 1;
    }
    out
}

#[test]
fn no_production_function_is_over_60_lines() {
    let long: Vec<String> = production()
        .iter()
        .flat_map(|f| long_functions(f))
        .collect();
    assert_none(
        long,
        &format!("functions over {LONGEST} lines (split them along their meaning; a table is named in TABLES)"),
    );
}

/// The production lines of a file: up to its tests.
fn production_lines(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .count()
}

#[test]
fn no_production_file_is_over_700_lines_but_the_two_tables() {
    let long: Vec<String> = production()
        .iter()
        .filter(|f| !TABLE_FILES.contains(&rel(f).as_str()))
        .map(|f| (rel(f), production_lines(f)))
        .filter(|(_, n)| *n > LONGEST_FILE)
        .map(|(f, n)| format!("{f}: {n} lines"))
        .collect();
    assert_none(long, &format!("production files over {LONGEST_FILE} lines"));
}

/// The crates' roots: each one's modules are the `mod NAME;` of its root
/// file and theirs, outside tests.
const ROOTS: &[&str] = &[
    "init/app/main.rs",
    "init/schema/lib.rs",
    "init/guest/lib.rs",
    "init/boot/lib.rs",
    "init/analysis/lib.rs",
    "init/export/lib.rs",
    "plugin/src/lib.rs",
];

/// A module's folder: where the files of its child modules lie.
fn folder_of(file: &Path) -> PathBuf {
    let dir = file.parent().unwrap();
    match file.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "main.rs" | "mod.rs") => dir.to_path_buf(),
        _ => dir.join(file.file_stem().unwrap()),
    }
}

/// The child modules `file` declares (`mod NAME;`, outside tests), with
/// the files of each.
fn children(file: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let dir = folder_of(file);
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = BTreeMap::new();
    for (k, line) in lines.iter().enumerate() {
        let decl = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        let Some(name) = decl.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) else {
            continue;
        };
        if k > 0 && lines[k - 1] == "#[cfg(test)]" {
            continue;
        }
        let mut files = vec![dir.join(format!("{name}.rs"))];
        if dir.join(name).is_dir() {
            files.extend(rust_files(&dir.join(name)));
        }
        files.retain(|f| f.exists());
        out.insert(name.to_string(), files);
    }
    out
}

/// A child module's own file: `NAME.rs`, or `NAME/mod.rs`.
fn own_file(files: &[PathBuf], dir: &Path, name: &str) -> Option<PathBuf> {
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|f| files.contains(f))
}

/// Each module of the crate whose root file is `file` (at module path
/// `path`) that has children: the graph of which child imports which
/// sibling, by name (`super::`, `crate::PATH::`) or through the parent's
/// own imports of a sibling's items (`super::Metric` where the parent has
/// `use metric::Metric`).
fn graphs(
    file: &Path,
    path: &[String],
    out: &mut Vec<(String, BTreeMap<String, BTreeSet<String>>)>,
) {
    let kids = children(file);
    if kids.is_empty() {
        return;
    }
    let dir = folder_of(file);
    let parent_text = code(&std::fs::read_to_string(file).unwrap());
    // the parent's imports of a child's items: item -> child
    let mut through: BTreeMap<String, String> = BTreeMap::new();
    for kid in kids.keys() {
        for (_, item) in modules(&parent_text, kid) {
            through.entry(item).or_insert_with(|| kid.clone());
        }
    }
    let crate_path = std::iter::once("crate".to_string())
        .chain(path.iter().cloned())
        .collect::<Vec<_>>()
        .join("::");
    let mut graph = BTreeMap::new();
    for (kid, files) in &kids {
        let mut to = BTreeSet::new();
        for f in files {
            let rel = f.strip_prefix(&dir).unwrap();
            let depth = rel.components().count() - usize::from(f.ends_with("mod.rs"));
            let up = vec!["super"; depth].join("::");
            let text = code(&std::fs::read_to_string(f).unwrap());
            for (_, name) in modules(&text, &up)
                .into_iter()
                .chain(modules(&text, &crate_path))
            {
                let sibling = if kids.contains_key(&name) {
                    Some(name)
                } else {
                    through.get(&name).cloned()
                };
                to.extend(sibling.filter(|s| s != kid));
            }
        }
        graph.insert(kid.clone(), to);
    }
    let name = if path.is_empty() {
        "crate".to_string()
    } else {
        path.join("::")
    };
    let shown = file
        .strip_prefix(top())
        .unwrap_or(file)
        .display()
        .to_string();
    out.push((format!("{shown} ({name})"), graph));
    for (kid, files) in &kids {
        if let Some(own) = own_file(files, &dir, kid) {
            let mut deeper = path.to_vec();
            deeper.push(kid.clone());
            graphs(&own, &deeper, out);
        }
    }
}

/// A circle through `graph` that starts at `from`, if any.
fn circle(
    graph: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    let last = path.last().unwrap().clone();
    for next in &graph[&last] {
        if let Some(at) = path.iter().position(|p| p == next) {
            let mut c = path[at..].to_vec();
            c.push(next.clone());
            return Some(c);
        }
        path.push(next.clone());
        if let Some(c) = circle(graph, path) {
            return Some(c);
        }
        path.pop();
    }
    None
}

/// No circle of imports among the children of any module, at any depth
/// of any crate (compare's assess and evidence imported each other, two
/// folders down, where a check of the top-level modules alone saw none).
#[test]
fn no_module_has_a_circle_of_imports_at_any_depth() {
    let mut circles = Vec::new();
    for root in ROOTS {
        let mut found = Vec::new();
        graphs(&top().join(root), &[], &mut found);
        for (module, graph) in found {
            for m in graph.keys() {
                if let Some(c) = circle(&graph, &mut vec![m.clone()]) {
                    circles.push(format!("{module}: {}", c.join(" -> ")));
                    break;
                }
            }
        }
    }
    assert_none(circles, "circles of imports between a module's children");
}

/// The check sees a circle two folders down, through a parent's import
/// of a child's item, and none where a child imports its parent's own.
#[test]
fn the_circle_check_sees_through_a_parents_imports() {
    let dir = std::env::temp_dir().join(format!("trig-house-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod a;\n").unwrap();
    std::fs::write(
        dir.join("a/mod.rs"),
        "mod x;\nmod y;\nuse y::Y;\npub const K: u8 = 1;\n",
    )
    .unwrap();
    std::fs::write(dir.join("a/x.rs"), "use super::Y;\nuse super::K;\n").unwrap();
    std::fs::write(dir.join("a/y.rs"), "use crate::a::x::X;\n").unwrap();
    let mut found = Vec::new();
    graphs(&dir.join("lib.rs"), &[], &mut found);
    let (_, graph) = found
        .iter()
        .find(|(m, _)| m.ends_with("(a)"))
        .expect("module a");
    assert_eq!(graph["x"], BTreeSet::from(["y".to_string()]));
    assert_eq!(graph["y"], BTreeSet::from(["x".to_string()]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The folders of the repository's sources, and each one's source files.
fn sources_by_folder(dir: &Path, out: &mut Vec<(PathBuf, usize)>) {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy();
        if p.is_dir() {
            if !name.starts_with('.') && name != "target" {
                sources_by_folder(&p, out);
            }
        } else if [".rs", ".sh", ".py", ".c", ".h"]
            .iter()
            .any(|x| name.ends_with(x))
        {
            n += 1;
        }
    }
    out.push((dir.to_path_buf(), n));
}

#[test]
fn no_folder_holds_15_sources_or_more() {
    let mut folders = Vec::new();
    sources_by_folder(top(), &mut folders);
    let crowded: Vec<String> = folders
        .into_iter()
        .filter(|(_, n)| *n >= CROWDED)
        .map(|(d, n)| format!("{}: {n} sources", rel(&d)))
        .collect();
    assert_none(
        crowded,
        "folders of 15 sources or more (group them by what a reader looks for)",
    );
}

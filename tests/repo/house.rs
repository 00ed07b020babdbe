//! The house rules of the sources (issue 51): no production function over
//! 80 lines (a table may say why it is longer), no circle of imports
//! between a crate's top-level modules, no folder of 15 sources or more.
//! Each keeps the code easy to find one's way in.

use crate::layers::{assert_none, modules, rust_files, top};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LONGEST: usize = 80;
const CROWDED: usize = 15;

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
/// outside `#[cfg(test)]` modules and not marked as a table.
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
        if starts_fn(t) && !attr_before("too_many_lines") {
            if let Some(end) = closing(&lines, k) {
                let name: String = t
                    .split_once("fn ")
                    .unwrap()
                    .1
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if end - k + 1 > LONGEST {
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
fn no_production_function_is_over_80_lines() {
    let long: Vec<String> = production()
        .iter()
        .flat_map(|f| long_functions(f))
        .collect();
    assert_none(long, &format!("functions over {LONGEST} lines (split them, or mark a table #[allow(clippy::too_many_lines)])"));
}

/// The crates' roots: each one's top-level modules are the `mod NAME;` of
/// its root file, outside tests.
const ROOTS: &[&str] = &[
    "init/main.rs",
    "init/schema/lib.rs",
    "init/guest/lib.rs",
    "init/boot/lib.rs",
    "init/analysis/lib.rs",
    "init/export/lib.rs",
    "plugin/src/lib.rs",
];

/// The top-level modules of the crate at `root` and the files of each.
fn top_modules(root: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let dir = root.parent().unwrap();
    let text = std::fs::read_to_string(root).unwrap();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = BTreeMap::new();
    for (k, line) in lines.iter().enumerate() {
        let Some(name) = line
            .strip_prefix("pub ")
            .unwrap_or(line)
            .strip_prefix("mod ")
        else {
            continue;
        };
        let Some(name) = name.strip_suffix(';') else {
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

/// Which of the crate's other top-level modules `file` imports (`crate::`,
/// and `super::` where that is the crate's root).
fn imports(
    file: &Path,
    crate_dir: &Path,
    mods: &BTreeMap<String, Vec<PathBuf>>,
) -> BTreeSet<String> {
    let text: String = code(&std::fs::read_to_string(file).unwrap());
    let parent = file.parent().unwrap();
    let at_top =
        parent == crate_dir || (file.ends_with("mod.rs") && parent.parent() == Some(crate_dir));
    let mut found: Vec<(usize, String)> = modules(&text, "crate");
    if at_top {
        found.extend(modules(&text, "super"));
    }
    found
        .into_iter()
        .map(|(_, m)| m)
        .filter(|m| mods.contains_key(m))
        .collect()
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

#[test]
fn no_crate_has_a_circle_of_imports() {
    let mut circles = Vec::new();
    for root in ROOTS {
        let root = top().join(root);
        let mods = top_modules(&root);
        let graph: BTreeMap<String, BTreeSet<String>> = mods
            .iter()
            .map(|(m, files)| {
                let mut to: BTreeSet<String> = files
                    .iter()
                    .flat_map(|f| imports(f, root.parent().unwrap(), &mods))
                    .collect();
                to.remove(m);
                (m.clone(), to)
            })
            .collect();
        for m in graph.keys() {
            if let Some(c) = circle(&graph, &mut vec![m.clone()]) {
                circles.push(format!("{}: {}", rel(&root), c.join(" -> ")));
                break;
            }
        }
    }
    assert_none(
        circles,
        "circles of imports between a crate's top-level modules",
    );
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

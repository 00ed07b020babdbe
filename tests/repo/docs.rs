//! Every relative link in README.md, ARCHITECTURE.md and docs/*.md names a
//! file that exists and, with `#anchor`, a heading in it, and every path of
//! the repository these pages name in code (`init/boot/judge.rs`) exists:
//! pages move and files get split, and a dead link or a file that is not
//! there is what a newcomer meets first.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The text outside fenced code blocks and inline code spans, where a
/// `[x](y)` is markdown and not an example.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            let mut in_code = false;
            for c in line.chars() {
                if c == '`' {
                    in_code = !in_code;
                } else if !in_code {
                    out.push(c);
                }
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of inline links `[text](target)`.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    prose
        .match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &prose[i + 2..];
            rest.find(')').map(|end| rest[..end].trim().to_string())
        })
        .collect()
}

/// GitHub's anchor for a heading: lower case, letters, digits, `-` and `_`
/// kept, spaces become `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> HashSet<String> {
    let mut fenced = false;
    let mut out = HashSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// What is wrong with one link of `page`, if anything.
fn check(page: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, anchor) = match target.split_once('#') {
        Some((f, a)) => (f, Some(a)),
        None => (target, None),
    };
    let path = if file.is_empty() {
        page.to_path_buf()
    } else {
        page.parent().expect("a page's folder").join(file)
    };
    if !path.exists() {
        return Some(format!("{target}: no file {}", path.display()));
    }
    let anchor = anchor?;
    if path.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let text = fs::read_to_string(&path).expect("a linked page");
    (!anchors(&text).contains(anchor)).then(|| format!("{target}: no heading #{anchor}"))
}

#[test]
fn every_relative_link_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dead = Vec::new();
    let mut seen = 0;
    for page in pages(root) {
        let text = fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        for target in links(&text) {
            seen += 1;
            if let Some(why) = check(&page, &target) {
                dead.push(format!("{}: {why}", page.display()));
            }
        }
    }
    // README alone links every docs page: far fewer means links went unseen
    assert!(seen > 20, "only {seen} links found");
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}

/// Inline code spans outside fenced blocks.
fn code_spans(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.extend(line.split('`').skip(1).step_by(2));
        }
    }
    out
}

/// The repository paths a page names in code: words that start with one
/// of the tracked top-level folders, less a test's `::name`; globs and
/// placeholders (`bpf/*.bpf.c`, `bpf/NAME.bpf.c`) are not paths.
fn repo_paths(text: &str) -> Vec<String> {
    const TOP: &[&str] = &[
        "init/",
        "tests/",
        "scripts/",
        "bpf/",
        "kconfigs/",
        "plugin/",
        "examples/",
        "docs/",
        ".ci/",
    ];
    code_spans(text)
        .into_iter()
        .flat_map(str::split_whitespace)
        .map(|w| w.trim_start_matches("./"))
        .map(|w| w.split("::").next().unwrap_or(w))
        .filter(|w| TOP.iter().any(|t| w.starts_with(t)))
        .filter(|w| !w.contains(['*', '{', '$']) && !w.chars().any(|c| c.is_ascii_uppercase()))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_path_named_in_code_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    for page in pages(root) {
        let text = fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        for path in repo_paths(&text) {
            if !root.join(&path).exists() {
                missing.push(format!("{}: {path}", page.display()));
            }
        }
    }
    assert!(missing.is_empty(), "no such files:\n{}", missing.join("\n"));
}

#[test]
fn the_checker_sees_links_anchors_and_code() {
    let text =
        "# A title (`x.sh`)\n\nSee [b](b.md#c) and `[not](a.link)`.\n```\n[nor](this)\n```\n";
    assert_eq!(links(text), ["b.md#c"]);
    assert!(anchors(text).contains("a-title-xsh"));
    let code = "`./scripts/build.sh --arch x` `tests/boot.rs::name` `bpf/*.bpf.c` `bpf/NAME.bpf.c`";
    assert_eq!(repo_paths(code), ["scripts/build.sh", "tests/boot.rs"]);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = root.join("README.md");
    assert!(check(&readme, "no-such-file.md").is_some());
    assert!(check(&readme, "#no-such-heading").is_some());
    assert!(check(&readme, "docs/meter.md").is_none());
}

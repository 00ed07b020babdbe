//! The kernel config fragments: well-formed, consistent per architecture,
//! covering what the matrix needs, free of performance-distorting debug
//! options. (Building a kernel from them is scripts/proofs/kernel-test.sh.)

use std::collections::BTreeMap;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/kconfigs");

/// What the matrix needs, and why; each must be set in common.config or
/// the architecture's fragment.
const REQUIRED: &[(&str, &str)] = &[
    ("BPF_SYSCALL", "bpf()"),
    ("BPF_JIT", "native speed, as in production"),
    ("BPF_EVENTS", "kprobe and tracepoint programs"),
    ("NET", "BPF_PROG_TEST_RUN for trig-batch-*"),
    ("DEBUG_INFO_BTF", "fentry/fexit, raw_tp BTF, CO-RE"),
    ("KPROBES", "trig-kprobe, rename-kprobe"),
    ("KPROBE_EVENTS", "kprobe perf events"),
    ("UPROBES", "trig-uprobe-*"),
    ("UPROBE_EVENTS", "uprobe perf events"),
    ("FUNCTION_TRACER", "fentry/fexit trampolines"),
    ("DYNAMIC_FTRACE", "trampolines patch function entries"),
    ("FPROBE", "kprobe_multi"),
    ("FUNCTION_ERROR_INJECTION", "fmod_ret on syscalls"),
    ("FTRACE_SYSCALLS", "tp/syscalls/sys_enter_getpgid"),
    ("DEBUG_FS", "mounted by PID 1"),
    ("DEVTMPFS", "mounted by PID 1"),
    ("BLK_DEV_INITRD", "trig-init is /init of an initramfs"),
    ("FUTEX", "producer threads"),
    ("POSIX_TIMERS", "clock_nanosleep of the sampler"),
    ("SMP", "multi-producer runs"),
    ("MEMCG", "htab-mem's memory cgroup"),
];

/// Debugging that distorts performance, never asked for: the options of
/// kconfigs/distorting.list, which scripts/build-kernel.sh warns about
/// in a base config. Each line is `NAME # why`.
fn distorting() -> Result<Vec<(String, String)>, String> {
    let name = "distorting.list";
    let text =
        std::fs::read_to_string(format!("{DIR}/{name}")).map_err(|e| format!("{name}: {e}"))?;
    parse_list(name, &text)
}

fn parse_list(name: &str, text: &str) -> Result<Vec<(String, String)>, String> {
    let mut list: Vec<(String, String)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{name}:{}: '{line}'", i + 1);
        let (option, why) = line.split_once('#').unwrap_or((line, ""));
        let option = option.trim();
        if option.is_empty() {
            continue;
        }
        if option.starts_with("CONFIG_")
            || !option
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(format!("{}: an option name without CONFIG_", at()));
        }
        if why.trim().is_empty() {
            return Err(format!("{}: say why after '#'", at()));
        }
        if list.iter().any(|(o, _)| o == option) {
            return Err(format!("{}: {option} listed twice", at()));
        }
        list.push((option.to_string(), why.trim().to_string()));
    }
    Ok(list)
}

/// A fragment's options: name to value (`n` for "is not set"); an error
/// names the first malformed line.
fn parse(name: &str) -> Result<BTreeMap<String, String>, String> {
    let text =
        std::fs::read_to_string(format!("{DIR}/{name}")).map_err(|e| format!("{name}: {e}"))?;
    parse_text(name, &text)
}

fn parse_text(name: &str, text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut opts = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{name}:{}: '{line}'", i + 1);
        let (key, value) = if let Some(rest) = line.strip_prefix("# CONFIG_") {
            match rest.strip_suffix(" is not set") {
                Some(k) => (k.to_string(), "n".to_string()),
                None => continue,
            }
        } else if line.is_empty() || line.starts_with('#') {
            continue;
        } else if let Some(rest) = line.strip_prefix("CONFIG_") {
            let (k, v) = rest.split_once('=').ok_or_else(at)?;
            let valid = matches!(v, "y" | "m" | "n")
                || v.parse::<i64>().is_ok()
                || v.starts_with("0x")
                || (v.len() >= 2 && v.starts_with('"') && v.ends_with('"'));
            if !valid {
                return Err(format!("{}: bad value", at()));
            }
            (k.to_string(), v.to_string())
        } else {
            return Err(format!("{}: neither an option nor a comment", at()));
        };
        if !key
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(format!("{}: bad option name", at()));
        }
        if let Some(old) = opts.insert(key.clone(), value.clone()) {
            return Err(format!(
                "{}: CONFIG_{key} given twice ({old}, {value})",
                at()
            ));
        }
    }
    Ok(opts)
}

fn merged(arch: &str, vmtest: bool) -> BTreeMap<String, String> {
    let mut names = vec!["common.config".to_string(), format!("{arch}.config")];
    if vmtest {
        names.push("vmtest.config".into());
    }
    let mut all: BTreeMap<String, (String, String)> = BTreeMap::new();
    for n in &names {
        for (k, v) in parse(n).unwrap() {
            if let Some((old, from)) = all.get(&k) {
                assert_eq!(old, &v, "CONFIG_{k} is {old} in {from} but {v} in {n}");
            }
            all.insert(k, (v, n.clone()));
        }
    }
    all.into_iter().map(|(k, (v, _))| (k, v)).collect()
}

#[test]
fn fragments_are_well_formed_and_say_why() {
    for name in [
        "common.config",
        "x86_64.config",
        "arm64.config",
        "vmtest.config",
    ] {
        parse(name).unwrap();
        let text = std::fs::read_to_string(format!("{DIR}/{name}")).unwrap();
        let head: String = text.lines().take(8).collect::<Vec<_>>().join(" ");
        assert!(
            head.contains("distort"),
            "{name} must say it adds no debugging"
        );
    }
}

#[test]
fn every_architecture_has_what_the_matrix_needs() {
    for arch in ["x86_64", "arm64"] {
        for vmtest in [false, true] {
            let opts = merged(arch, vmtest);
            for (k, why) in REQUIRED {
                assert_eq!(
                    opts.get(*k).map(String::as_str),
                    Some("y"),
                    "{arch}: CONFIG_{k} ({why})"
                );
            }
            for (k, why) in distorting().unwrap() {
                assert!(
                    !matches!(opts.get(&k).map(String::as_str), Some("y" | "m")),
                    "{arch}: CONFIG_{k} distorts performance ({why})"
                );
            }
        }
    }
}

#[test]
fn malformed_fragments_are_rejected() {
    let check = |text: &str| parse_text("bad.config", text);
    assert!(check("CONFIG_BPF=y\n# a comment\n").is_ok());
    assert!(check("CONFIG_BPF\n").unwrap_err().contains("bad.config:1"));
    assert!(check("CONFIG_BPF=yes\n").unwrap_err().contains("bad value"));
    assert!(check("BPF=y\n").unwrap_err().contains("neither an option"));
    let e = check("CONFIG_BPF=y\n# CONFIG_BPF is not set\n").unwrap_err();
    assert!(e.contains("given twice"), "{e}");
}

#[test]
fn one_list_of_distorting_options() {
    let list = distorting().unwrap();
    let names: Vec<&str> = list.iter().map(|(o, _)| o.as_str()).collect();
    for k in ["LOCKDEP", "KASAN"] {
        assert!(
            names.contains(&k),
            "CONFIG_{k} missing from distorting.list"
        );
    }
    for (k, why) in REQUIRED {
        assert!(
            !names.contains(k),
            "CONFIG_{k} is required ({why}) and listed as distorting"
        );
    }
    // build-kernel.sh reads the list instead of keeping its own
    let script = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/build-kernel.sh"
    ))
    .unwrap();
    assert!(
        script.contains("kconfigs/distorting.list"),
        "build-kernel.sh must read the list"
    );
    for k in &names {
        assert!(
            !script.contains(k),
            "build-kernel.sh names CONFIG_{k} itself: read it from the list"
        );
    }
}

#[test]
fn malformed_lists_are_rejected() {
    let check = |text: &str| parse_list("bad.list", text);
    assert_eq!(
        check("# a comment\n\nKASAN  # why\n").unwrap(),
        [("KASAN".to_string(), "why".to_string())]
    );
    assert!(check("KASAN\n").unwrap_err().contains("say why"));
    assert!(check("CONFIG_KASAN # why\n")
        .unwrap_err()
        .contains("without CONFIG_"));
    assert!(check("kasan # why\n").unwrap_err().contains("bad.list:1"));
    assert!(check("KASAN # a\nKASAN # b\n")
        .unwrap_err()
        .contains("listed twice"));
}

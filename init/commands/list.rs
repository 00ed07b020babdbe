//! `trig-init list`: the registry as a table.

use std::process::ExitCode;
use trig_init::registry;

pub fn list() -> Result<ExitCode, String> {
    println!(
        "{:<28} {:<8} {:<48} {:<30} NEEDS",
        "BENCHMARK", "GROUP", "ATTACHES TO", "TRIGGER"
    );
    for b in registry::all() {
        let trigger = match b.trigger {
            registry::Trigger::Getpgid => "getpgid() loop".to_string(),
            registry::Trigger::TestRun(p) => format!("test_run {p}"),
            registry::Trigger::Call(t) => format!("call {t:?} target").to_lowercase(),
            registry::Trigger::Rename => "write /proc/self/comm".into(),
        };
        println!(
            "{:<28} {:<8} {:<48} {:<30} {}",
            b.name,
            b.group.as_str(),
            b.point,
            trigger,
            b.feature.needs()
        );
    }
    Ok(ExitCode::SUCCESS)
}

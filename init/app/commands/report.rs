//! `trig-init report`: one HTML page for a history directory.

use crate::cli::ReportCmd;
use std::process::ExitCode;
use trig_analysis::compare;
use trig_analysis::history;
use trig_analysis::input::Side;
use trig_export::outside::text::line;
use trig_export::people::html;
use trig_export::{Exporter, Html, Page};
use trig_schema::error::Error;
use trig_schema::files;

pub fn report(cmd: ReportCmd) -> Result<ExitCode, Error> {
    // checked before the history is read
    let chosen = cmd.metric.as_ref().map(|m| m.0.clone());
    let mut settings = compare::Settings::default();
    if let Some(m) = &chosen {
        settings.metrics.clone_from(m);
    }
    let metrics = chosen.unwrap_or(compare::Metric::ALL.to_vec());
    files::check_outputs([std::path::Path::new(&cmd.output)])?;
    let (entries, warning) = history::read(
        cmd.dir.as_ref(),
        cmd.git.as_deref().map(AsRef::as_ref),
        &metrics,
    )?;
    if let Some(w) = warning {
        trig_schema::stderrln!("trig-init report: warning: {}", line(&w));
    }
    let latest = match entries.as_slice() {
        [.., (pb, base), (pn, new)] => {
            let side = |p: &history::Point, sets: &[trig_schema::RunSet]| {
                Side::of_file(p.file.as_ref(), sets.to_vec())
            };
            compare::compare(&side(pb, base), &side(pn, new), &settings)
                .map_err(|e| {
                    trig_schema::stderrln!(
                        "trig-init report: no latest comparison: {}",
                        line(&e.to_string())
                    )
                })
                .ok()
        }
        _ => None,
    };
    let detection = history::detection(&entries, None);
    let h = history::analyse(&cmd.dir, entries, &metrics, &detection, 3);
    let page = Html(html::PageOptions {
        repo_url: cmd.repo_url.clone(),
        common_scale: cmd.common_scale,
    });
    let doc = Page {
        history: &h,
        latest: latest.as_ref(),
    };
    files::write(&cmd.output, page.export(&doc))?;
    trig_schema::stderrln!(
        "trig-init report: wrote {} ({} results, {} change points)",
        cmd.output,
        h.points.len(),
        h.found.len()
    );
    Ok(ExitCode::SUCCESS)
}

//! The terminal side of `vm`: renders the [`BootEvent`]s of a command on
//! stderr (a progress line, each boot's verdict, notices) and the summary
//! table at the end. It decides nothing; `--quiet` keeps only failures.

use crate::machine::BootEvent;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use trig_schema::error::shown;
use trig_schema::{BootStatus, RunSet};

/// A thread that renders events until the last sender is gone; dropping
/// the `Ui` waits for it, so nothing is printed out of order after.
pub struct Ui {
    tx: Option<Sender<BootEvent>>,
    thread: Option<JoinHandle<()>>,
}

impl Ui {
    pub fn spawn(quiet: bool) -> Ui {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let mut view = View {
                quiet,
                tty: std::io::stderr().is_terminal(),
                running: Vec::new(),
                open: false,
            };
            for e in rx {
                view.render(&e);
            }
        });
        Ui {
            tx: Some(tx),
            thread: Some(thread),
        }
    }

    /// Where events for this UI go.
    pub fn events(&self) -> &Sender<BootEvent> {
        self.tx.as_ref().expect("until dropped")
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct View {
    quiet: bool,
    tty: bool,
    /// The boots under way, in the order they started, each with its
    /// latest progress (`--jobs` runs several side by side).
    running: Vec<(String, Option<String>)>,
    /// Whether the progress line is drawn and not ended yet.
    open: bool,
}

impl View {
    fn render(&mut self, e: &BootEvent) {
        match e {
            BootEvent::Started { label } => self.running.push((label.clone(), None)),
            BootEvent::Progress {
                label,
                i,
                n,
                name,
                t,
            } if !self.quiet => {
                let now = format!("[{i}/{n}] {name} ({t:.1} s)");
                if let Some((_, p)) = self.running.iter_mut().find(|(l, _)| l == label) {
                    *p = Some(now.clone());
                }
                if self.tty {
                    // one line, redrawn: every boot under way, cut to fit
                    let line = progress_line(&self.running);
                    trig_schema::stderr!("\r\x1b[K{}", fit(&shown(&line, false), terminal_width()));
                    self.open = true;
                } else {
                    trig_schema::stderrln!("{}", shown(&format!("[boot {label}] {now}"), false));
                }
                let _ = std::io::stderr().flush();
            }
            BootEvent::Notice(text) => {
                self.end_line();
                trig_schema::stderrln!("trig-init: {}", shown(text, false));
            }
            BootEvent::Judged {
                label,
                kernel,
                status,
                wall_s,
                message,
            } => {
                self.running.retain(|(l, _)| l != label);
                self.end_line();
                // quiet drops progress, never the reason of a failure
                if !self.quiet || *status != BootStatus::Ok {
                    // the release, the guest's reason and QEMU's last
                    // words are the kernel's and QEMU's text
                    let line = format!(
                        "trig-init: boot {label} ({kernel}): {status} in {wall_s:.1} s{}",
                        message
                            .as_ref()
                            .map(|m| format!(": {m}"))
                            .unwrap_or_default()
                    );
                    trig_schema::stderrln!("{}", shown(&line, false));
                }
            }
            BootEvent::Progress { .. }
            | BootEvent::Frame { .. }
            | BootEvent::Crash(_)
            | BootEvent::Finished { .. } => {}
        }
    }

    /// Ends the redrawn progress line, so that a whole line follows it.
    fn end_line(&mut self) {
        if std::mem::take(&mut self.open) {
            trig_schema::stderrln!();
        }
    }
}

/// The boots under way with their progress: `[boot 1/2 k1] [3/11]
/// trig-kprobe (40.2 s)` for one, shortened to `1/2 k1 3/11 trig-kprobe`
/// each when there are several.
fn progress_line(running: &[(String, Option<String>)]) -> String {
    let shown: Vec<(&String, &String)> = running
        .iter()
        .filter_map(|(l, p)| Some((l, p.as_ref()?)))
        .collect();
    match shown.as_slice() {
        [(label, p)] => format!("[boot {label}] {p}"),
        many => many
            .iter()
            .map(|(label, p)| {
                let short = p.split(" (").next().unwrap_or(p);
                format!(
                    "{label} {}",
                    short.trim_start_matches('[').replacen(']', "", 1)
                )
            })
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

/// `line` cut to `width` characters: a line that wraps cannot be redrawn.
fn fit(line: &str, width: usize) -> String {
    match line.char_indices().nth(width.saturating_sub(1)) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

/// Columns of the terminal on stderr; 80 when it cannot tell.
fn terminal_width() -> usize {
    let mut ws = nix::libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one winsize into the struct given
    let ok = unsafe { nix::libc::ioctl(2, nix::libc::TIOCGWINSZ, &mut ws) } == 0;
    if ok && ws.ws_col > 0 {
        usize::from(ws.ws_col)
    } else {
        80
    }
}

/// The table of each kernel's results (made by `tables`) and where they
/// are, unless quiet.
pub fn summary(
    quiet: bool,
    tables: Option<fn(&RunSet) -> String>,
    sets: &[(&RunSet, Option<&PathBuf>)],
) {
    if quiet {
        return;
    }
    for (set, path) in sets {
        if let Some(table) = tables {
            trig_schema::stderr!("{}", table(set));
        }
        if let Some(p) = path {
            trig_schema::stderrln!("results: {}", p.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_boot_shows_its_progress_several_share_the_line() {
        let one = vec![(
            "1/2".to_string(),
            Some("[3/11] trig-kprobe (4.0 s)".to_string()),
        )];
        assert_eq!(progress_line(&one), "[boot 1/2] [3/11] trig-kprobe (4.0 s)");
        let two = vec![
            (
                "1/4 k1".to_string(),
                Some("[3/11] trig-kprobe (4.0 s)".to_string()),
            ),
            ("2/4 k2".to_string(), None),
            (
                "3/4 k1".to_string(),
                Some("[1/11] trig-base (9.5 s)".to_string()),
            ),
        ];
        assert_eq!(
            progress_line(&two),
            "1/4 k1 3/11 trig-kprobe | 3/4 k1 1/11 trig-base"
        );
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }
}

//! The terminal side of `vm`: renders the [`BootEvent`]s of a command on
//! stderr (a progress line, each boot's verdict, notices) and the summary
//! table at the end. It decides nothing; `--quiet` keeps only failures.

use crate::boot::machine::BootEvent;
use crate::boot::table;
use crate::report::{BootStatus, RunSet};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;

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
                label: String::new(),
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
    /// The boot at hand.
    label: String,
}

impl View {
    fn render(&mut self, e: &BootEvent) {
        match e {
            BootEvent::Started { label } => self.label.clone_from(label),
            BootEvent::Progress { i, n, name, t } if !self.quiet => {
                let line = format!("[boot {}] [{i}/{n}] {name} ({t:.1} s)", self.label);
                if self.tty {
                    eprint!("\r\x1b[K{line}");
                } else {
                    eprintln!("{line}");
                }
                let _ = std::io::stderr().flush();
            }
            BootEvent::Notice(text) => eprintln!("trig-init: {text}"),
            BootEvent::Judged {
                label,
                kernel,
                status,
                wall_s,
                message,
            } => {
                if !self.quiet && self.tty {
                    eprintln!();
                }
                // quiet drops progress, never the reason of a failure
                if !self.quiet || *status != BootStatus::Ok {
                    eprintln!(
                        "trig-init: boot {label} ({kernel}): {status} in {wall_s:.1} s{}",
                        message
                            .as_ref()
                            .map(|m| format!(": {m}"))
                            .unwrap_or_default()
                    );
                }
            }
            BootEvent::Progress { .. }
            | BootEvent::Frame { .. }
            | BootEvent::Crash(_)
            | BootEvent::Finished { .. } => {}
        }
    }
}

/// The table of each kernel's results (with `tables`) and where they
/// are, unless quiet.
pub fn summary(quiet: bool, tables: bool, sets: &[(&RunSet, Option<&PathBuf>)]) {
    if quiet {
        return;
    }
    for (set, path) in sets {
        if tables {
            eprint!("{}", table::summary(set));
        }
        if let Some(p) = path {
            eprintln!("results: {}", p.display());
        }
    }
}

//! What `compare`, `history` and `report` write, as hyperfine's exporters:
//! one [`Exporter`] trait, one type per format, each implementing it for
//! the documents it can write; the commands pick one by `--format` name
//! and `trig_schema::files::write` puts the bytes where asked. Each format's text is
//! made in a file of its own, grouped by its reader: [`people`] (table,
//! markdown, email, html; `pieces` and `movers` hold what they share),
//! [`machines`] (json, bmf, kcidb), and [`outside`], which shows text from
//! results files as written, never acting (plain text and Markdown).
//! `sweep` and `ab_proof` write whole reports through them. A new
//! format is a type here, its file, and a name in the parser of each
//! command that offers it.

pub mod ab_proof;
#[cfg(test)]
mod compare_tests;
#[cfg(test)]
mod history_tests;
pub mod machines;
pub mod outside;
pub mod people;
pub mod sweep;

use trig_analysis::compare::Comparison;
use trig_analysis::history::History;
use trig_schema::error::{usage, Error};

/// Turns one kind of document (a comparison, a history, a report page)
/// into the text of one format.
pub trait Exporter<T: ?Sized> {
    fn export(&self, doc: &T) -> String;
}

/// `report`'s document: the history and its latest comparison, if any.
pub struct Page<'a> {
    pub history: &'a History,
    pub latest: Option<&'a Comparison>,
}

/// The aligned plain-text table (ANSI colours on request).
pub struct Table {
    pub color: bool,
}
pub struct Markdown;
/// Plain text in 72 columns for a mailing list.
pub struct Email;
pub struct Json;
/// Bencher Metric Format: NEW's (or the newest result's) figures.
pub struct Bmf;
/// One self-contained page.
pub struct Html(pub people::html::PageOptions);

impl Exporter<Comparison> for Table {
    fn export(&self, c: &Comparison) -> String {
        people::table::comparison(c, self.color)
    }
}

impl Exporter<Comparison> for Markdown {
    fn export(&self, c: &Comparison) -> String {
        people::markdown::comparison(c)
    }
}

impl Exporter<Comparison> for Email {
    fn export(&self, c: &Comparison) -> String {
        people::email::comparison(c)
    }
}

impl Exporter<Comparison> for Json {
    fn export(&self, c: &Comparison) -> String {
        machines::json::comparison(c)
    }
}

impl Exporter<Comparison> for Bmf {
    fn export(&self, c: &Comparison) -> String {
        machines::bmf::comparison(c)
    }
}

impl Exporter<History> for Table {
    fn export(&self, h: &History) -> String {
        people::history_table::render(h, false)
    }
}

impl Exporter<History> for Markdown {
    fn export(&self, h: &History) -> String {
        people::history_table::render(h, true)
    }
}

impl Exporter<History> for Json {
    fn export(&self, h: &History) -> String {
        serde_json::to_string_pretty(h).expect("history serializes") + "\n"
    }
}

impl Exporter<History> for Bmf {
    fn export(&self, h: &History) -> String {
        machines::bmf::history(h)
    }
}

impl Exporter<Page<'_>> for Html {
    fn export(&self, r: &Page<'_>) -> String {
        people::html::page(r.history, r.latest, &self.0)
    }
}

/// `compare --format` (and its `--export-*` files), parsed once by argh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ComparisonFormat {
    #[default]
    Table,
    Markdown,
    Email,
    Json,
    Bmf,
}

impl std::str::FromStr for ComparisonFormat {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Ok(match s {
            "table" => ComparisonFormat::Table,
            "markdown" | "md" => ComparisonFormat::Markdown,
            "email" => ComparisonFormat::Email,
            "json" => ComparisonFormat::Json,
            "bmf" => ComparisonFormat::Bmf,
            f => {
                return Err(usage(format!(
                    "--format must be table, markdown, email or json, not '{f}' (or bmf)"
                )))
            }
        })
    }
}

impl ComparisonFormat {
    /// Its exporter; `color` for the table.
    pub fn exporter(self, color: bool) -> Box<dyn Exporter<Comparison>> {
        match self {
            ComparisonFormat::Table => Box::new(Table { color }),
            ComparisonFormat::Markdown => Box::new(Markdown),
            ComparisonFormat::Email => Box::new(Email),
            ComparisonFormat::Json => Box::new(Json),
            ComparisonFormat::Bmf => Box::new(Bmf),
        }
    }
}

/// `history --format`, parsed once by argh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HistoryFormat {
    #[default]
    Table,
    Markdown,
    Json,
    Bmf,
}

impl std::str::FromStr for HistoryFormat {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Ok(match s {
            "table" => HistoryFormat::Table,
            "markdown" | "md" => HistoryFormat::Markdown,
            "json" => HistoryFormat::Json,
            "bmf" => HistoryFormat::Bmf,
            f => {
                return Err(usage(format!(
                    "--format must be table, markdown, json or bmf, not '{f}'"
                )))
            }
        })
    }
}

impl HistoryFormat {
    pub fn exporter(self) -> Box<dyn Exporter<History>> {
        match self {
            HistoryFormat::Table => Box::new(Table { color: false }),
            HistoryFormat::Markdown => Box::new(Markdown),
            HistoryFormat::Json => Box::new(Json),
            HistoryFormat::Bmf => Box::new(Bmf),
        }
    }
}

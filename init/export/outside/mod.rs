//! Outside text (benchmark names, errors, commit subjects read from
//! results files) shown as written, never acting: as plain text for a
//! terminal or a mail (`text`), and in Markdown (`md`).

pub mod md;
pub mod text;

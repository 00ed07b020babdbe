//! The formats for people: the terminal's tables (a comparison, a
//! history, a kernel's runs, several producers' contention), Markdown for CI comments, plain text for a
//! mailing list and the HTML report; `parts` and `movers` are what the
//! comparison's formats share.

pub mod contention;
pub mod email;
pub mod history_table;
pub mod html;
pub mod markdown;
pub mod mover_source_lines;
pub mod movers;
pub mod pieces;
pub mod source_line_diff;
pub mod table;
pub mod vm_table;

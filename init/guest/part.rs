//! Which part of one kernel's split matrix a boot runs (`trig.part=I/N`,
//! `vm --split`): an option of the run, so of its own, apart from the
//! plan (split.rs), which reads the run's options.

/// The most parts one kernel's matrix is split into.
pub const MAX_PARTS: usize = 64;

/// The `index`-th of `of` parts, from 1; 1/1 is the whole selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub index: usize,
    pub of: usize,
}

impl Part {
    pub const WHOLE: Part = Part { index: 1, of: 1 };

    /// `I/N`, as `trig.part=` takes it.
    pub(crate) fn parse(v: &str) -> Result<Part, String> {
        let bad = || format!("part '{v}' is not I/N with 1 <= I <= N <= {MAX_PARTS}");
        let (i, n) = v.split_once('/').ok_or_else(bad)?;
        let (index, of) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        if index == 0 || index > of || of > MAX_PARTS {
            return Err(bad());
        }
        Ok(Part { index, of })
    }
}

impl Default for Part {
    fn default() -> Self {
        Part::WHOLE
    }
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

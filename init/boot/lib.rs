//! Booting a kernel: the plan and schedule of a `vm` run, the QEMU machine
//! and its arguments, the initramfs, the console, the judge of each boot,
//! the results files, the terminal, kernel resolution, signals, and the
//! profiling wing (`profiling`: the plugin's counts made into profiles).

pub mod console;
mod debian;
pub mod initramfs;
pub mod judge;
pub mod kernel;
pub mod machine;
pub mod merge;
pub mod profiling;
pub mod qemu;
pub mod results;
pub mod signals;
pub mod ui;
pub mod vm;

/// The `width`-byte little-endian integer at `offset`, if `bytes` has it:
/// for reading a bzImage's boot protocol header.
pub fn le_uint(bytes: &[u8], offset: usize, width: usize) -> Option<usize> {
    let field = bytes.get(offset..offset.checked_add(width)?)?;
    Some(
        field
            .iter()
            .rev()
            .fold(0, |acc, &b| (acc << 8) | usize::from(b)),
    )
}

#[cfg(test)]
mod tests {
    use super::le_uint;

    #[test]
    fn little_endian_fields() {
        let b = [0x34, 0x12, 0x78, 0x56, 0xff];
        assert_eq!(le_uint(&b, 0, 2), Some(0x1234));
        assert_eq!(le_uint(&b, 0, 4), Some(0x5678_1234));
        assert_eq!(le_uint(&b, 4, 1), Some(0xff));
        assert_eq!(le_uint(&b, 3, 4), None);
        assert_eq!(le_uint(&b, usize::MAX, 2), None);
    }
}

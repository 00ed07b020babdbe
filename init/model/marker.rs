//! The instructions that open and close a profiled window. Each is a no-op
//! on the CPU; the QEMU plugin behind `--profile` (plugin/) recognises
//! their bytes when it translates them and counts kernel instructions only
//! between the two; the guest's sampler writes them.

/// The two kinds of mark, carried in the instruction's immediate.
pub const START: u8 = 1;
pub const END: u8 = 2;

/// x86-64: `nopl 0x747269KK(%rax)`, a 7-byte NOP whose displacement
/// carries "tri" and the kind.
pub const fn x86_64(kind: u8) -> [u8; 7] {
    [0x0f, 0x1f, 0x80, kind, 0x69, 0x72, 0x74]
}

/// arm64: `movz xzr, #(0x7400 | kind)`, a write to the zero register.
pub const fn aarch64(kind: u8) -> [u8; 4] {
    (0xd280_0000u32 | ((0x7400 | kind as u32) << 5) | 31).to_le_bytes()
}

/// Which mark `bytes` (one instruction) is, if any.
pub fn kind_of(bytes: &[u8]) -> Option<u8> {
    [START, END]
        .into_iter()
        .find(|&k| bytes == x86_64(k) || bytes == aarch64(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_known_no_ops_and_nothing_else_is_one() {
        // `movz xzr, #0x7401` (llvm-mc agrees) and `nopl 0x74726901(%rax)`
        assert_eq!(u32::from_le_bytes(aarch64(START)), 0xd28e_803f);
        assert_eq!(x86_64(END), [0x0f, 0x1f, 0x80, 0x02, 0x69, 0x72, 0x74]);
        for k in [START, END] {
            assert_eq!(kind_of(&x86_64(k)), Some(k));
            assert_eq!(kind_of(&aarch64(k)), Some(k));
        }
        // the 7-byte NOP compilers emit for alignment, and `nop` on arm64
        assert_eq!(kind_of(&[0x0f, 0x1f, 0x80, 0, 0, 0, 0]), None);
        assert_eq!(kind_of(&0xd503_201fu32.to_le_bytes()), None);
    }
}

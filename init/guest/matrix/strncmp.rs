//! bpf_strncmp() against a bounded loop, from bpf/strncmp.bpf.c.

use super::{hit_slots, mapped, open_failed, Ctx};
use crate::bpf::{skel::strncmp::StrncmpSkelBuilder, Failure};
use crate::sampler::Measured;
use libbpf_rs::skel::SkelBuilder;
use std::mem::MaybeUninit;

/// The target string: '1'..'9' repeated, NUL-terminated at the end of the
/// buffer (bpf_strncmp needs a terminated read-only string).
fn target_byte(i: usize, size: usize) -> u8 {
    if i + 1 == size {
        0
    } else {
        b'1' + (i % 9) as u8
    }
}

/// Fills `target` and `str_` so that they agree on the first `len - 1`
/// characters and str's last is one smaller: a full-length comparison
/// whose result must be negative.
pub fn fill(target: &mut [i8], str_: &mut [i8], len: usize) {
    let size = target.len();
    for (i, t) in target.iter_mut().enumerate() {
        *t = target_byte(i, size) as i8;
    }
    for (i, s) in str_.iter_mut().enumerate() {
        *s = match i {
            _ if i + 1 < len => target[i],
            _ if i + 1 == len => target[i] - 1,
            _ => 0,
        };
    }
}

pub fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    let len = ctx.point.str_len.unwrap_or(32);
    let mut obj = MaybeUninit::uninit();
    let mut open = StrncmpSkelBuilder::default()
        .open(&mut obj)
        .map_err(open_failed)?;
    let ro = mapped(open.maps.rodata_data.as_deref_mut(), ".rodata")?;
    ro.cmp_str_len = len;
    let bss = mapped(open.maps.bss_data.as_deref_mut(), ".bss")?;
    fill(&mut ro.target, &mut bss.str, len as usize);
    ctx.load_and_measure(open, None, |skel| hit_slots!(skel))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strncmp(a: &[i8], b: &[i8], n: usize) -> i32 {
        for i in 0..n {
            let d = a[i] as u8 as i32 - b[i] as u8 as i32;
            if d != 0 || a[i] == 0 {
                return d;
            }
        }
        0
    }

    #[test]
    fn whole_length_compared_and_negative() {
        for len in [1usize, 2, 8, 64, 4095] {
            let (mut t, mut s) = (vec![0i8; 4096], vec![0i8; 4096]);
            fill(&mut t, &mut s, len);
            assert_eq!(t[4095], 0);
            assert_eq!(s[len], 0);
            // equal up to len-1, smaller at len-1
            assert!(s[..len - 1] == t[..len - 1]);
            assert_eq!(s[len - 1] + 1, t[len - 1]);
            assert!(strncmp(&s, &t, len + 1) < 0);
        }
    }
}

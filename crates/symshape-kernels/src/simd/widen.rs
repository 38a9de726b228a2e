//! `f16` and `bf16` widened to `f32` in whole registers, for the reductions that accumulate
//! in `f32`: F16C (`vcvtph2ps`, 8 lanes) or AVX-512F (16 lanes) for `f16`; for `bf16`, whose
//! bits are the high half of the `f32`'s, a zero extension and a 16-bit shift in integer
//! registers (SSE2, AVX2, AVX-512F). Every conversion is exact, so each path gives the same
//! bits as the scalar one (`f16` NaNs come out quiet with their payload, as `half`'s
//! `f16::to_f32` and F16C make them; `bf16` NaNs keep every bit).

use super::Level;
use half::{bf16, f16};

/// `f16`s as `f32`s into `dst`, as far as the shorter slice goes, at the level of this CPU.
#[inline]
pub(crate) fn f16_to_f32(src: &[f16], dst: &mut [f32]) {
    f16_to_f32_at(super::level(), src, dst);
}

/// `bf16`s as `f32`s into `dst`, as far as the shorter slice goes, at the level of this CPU.
#[inline]
pub(crate) fn bf16_to_f32(src: &[bf16], dst: &mut [f32]) {
    bf16_to_f32_at(super::level(), src, dst);
}

/// A `bf16` as the `f32` of the same sign, exponent and leading significand bits: exact, NaN
/// payloads kept (the `half` crate's `to_f32` also sets a NaN's quiet bit, a branch that
/// keeps a loop of them from vectorizing).
#[inline(always)]
pub(crate) fn bf16_bits_to_f32(x: bf16) -> f32 {
    f32::from_bits(u32::from(x.to_bits()) << 16)
}

/// [`f16_to_f32`] at `level` (at most this CPU's): the vector kernel converts the longest
/// prefix of whole registers, the scalar loop the rest.
pub(crate) fn f16_to_f32_at(level: Level, src: &[f16], dst: &mut [f32]) {
    widen_at(src, dst, |s, d| vector_f16(level, s, d), f16::to_f32);
}

/// [`bf16_to_f32`] at `level` (at most this CPU's), as [`f16_to_f32_at`].
pub(crate) fn bf16_to_f32_at(level: Level, src: &[bf16], dst: &mut [f32]) {
    widen_at(src, dst, |s, d| vector_bf16(level, s, d), bf16_bits_to_f32);
}

/// `src` as `f32`s into `dst`, as far as the shorter slice goes: `vector` converts a prefix
/// of the two, cut to one length, and returns how many elements it did; `scalar` converts
/// the rest one by one.
#[inline(always)]
fn widen_at<T: Copy>(
    src: &[T],
    dst: &mut [f32],
    vector: impl FnOnce(&[T], &mut [f32]) -> usize,
    scalar: impl Fn(T) -> f32,
) {
    let n = src.len().min(dst.len());
    let (Some(src), Some(dst)) = (src.get(..n), dst.get_mut(..n)) else {
        return;
    };
    let done = vector(src, dst);
    for (d, &x) in dst.iter_mut().zip(src).skip(done) {
        *d = scalar(x);
    }
}

/// The elements of equally long `src` and `dst` that the vector kernel of `level` converted,
/// from the start (0 where there is none).
#[allow(unused_variables)]
fn vector_f16(level: Level, src: &[f16], dst: &mut [f32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let (sp, dp, n) = (src.as_ptr().cast::<u16>(), dst.as_mut_ptr(), src.len());
        // SAFETY: `src` and `dst` hold `n` elements each; the features are checked (a level
        // is at most the CPU's).
        unsafe {
            if level >= Level::Avx512 {
                return x86::f16_avx512(sp, dp, n);
            }
            if level >= Level::Avx2 && std::arch::is_x86_feature_detected!("f16c") {
                return x86::f16_f16c(sp, dp, n);
            }
        }
    }
    0
}

/// As [`vector_f16`], for `bf16`.
#[allow(unused_variables)]
fn vector_bf16(level: Level, src: &[bf16], dst: &mut [f32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let (sp, dp, n) = (src.as_ptr().cast::<u16>(), dst.as_mut_ptr(), src.len());
        // SAFETY: as in `vector_f16`; SSE2 is in the x86_64 baseline.
        unsafe {
            match level {
                Level::Portable => {}
                Level::Sse2 => return x86::bf16_sse2(sp, dp, n),
                Level::Avx2 => return x86::bf16_avx2(sp, dp, n),
                Level::Avx512 => return x86::bf16_avx512(sp, dp, n),
            }
        }
    }
    0
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// The conversion kernels: `$lanes` elements a register, `$body` turning the pointer to
    /// `$lanes` source elements into the `f32` register; each returns the elements done.
    macro_rules! widen {
        ($name:ident, $feature:literal, $lanes:expr, |$p:ident| $body:expr, $store:ident) => {
            /// # Safety
            /// The CPU has the target features; `sp..sp + n` readable, `dp..dp + n` writable.
            #[inline]
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $name(sp: *const u16, dp: *mut f32, n: usize) -> usize {
                let whole = n / $lanes * $lanes;
                let mut i = 0;
                while i < whole {
                    // SAFETY: `i + $lanes <= n`, within both buffers; the features are on.
                    unsafe {
                        let $p = sp.add(i);
                        $store(dp.add(i).cast(), $body);
                    }
                    i += $lanes;
                }
                whole
            }
        };
    }

    widen!(
        f16_f16c,
        "avx,f16c",
        8,
        |p| _mm256_cvtph_ps(_mm_loadu_si128(p.cast())),
        _mm256_storeu_ps
    );
    widen!(
        f16_avx512,
        "avx512f",
        16,
        |p| _mm512_cvtph_ps(_mm256_loadu_si256(p.cast())),
        _mm512_storeu_ps
    );
    widen!(
        bf16_avx512,
        "avx512f",
        16,
        |p| _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(
            _mm256_loadu_si256(p.cast())
        ))),
        _mm512_storeu_ps
    );
    widen!(
        bf16_avx2,
        "avx2",
        8,
        |p| _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(
            _mm_loadu_si128(p.cast())
        ))),
        _mm256_storeu_ps
    );
    // Four elements a register: each 16-bit element interleaved above a zero.
    widen!(
        bf16_sse2,
        "sse2",
        4,
        |p| _mm_castsi128_ps(_mm_unpacklo_epi16(
            _mm_setzero_si128(),
            _mm_loadl_epi64(p.cast())
        )),
        _mm_storeu_ps
    );
}

#[cfg(test)]
mod tests {
    use super::{bf16_to_f32_at, f16_to_f32_at};
    use crate::simd::supported;
    use half::{bf16, f16};

    /// The first element of `got` whose bits differ from `want`'s, named.
    fn assert_same(got: &[f32], want: &[u32], what: &str) {
        assert_eq!(got.len(), want.len(), "{what}");
        if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i]) {
            panic!(
                "{what}: element {i} is {:#x}, not {:#x}",
                got[i].to_bits(),
                want[i]
            );
        }
    }

    /// Every 16-bit pattern, rotated by `shift` so that each lands in every lane position
    /// over the shifts, then the conversions of each supported level against the scalar
    /// ones, bit for bit, at lengths around the register widths and at odd offsets.
    #[test]
    fn every_level_widens_every_pattern_exactly() {
        let bits: Vec<u16> = (0..=u16::MAX).chain(0..37).collect();
        let f16s: Vec<f16> = bits.iter().map(|&b| f16::from_bits(b)).collect();
        let bf16s: Vec<bf16> = bits.iter().map(|&b| bf16::from_bits(b)).collect();
        let want16: Vec<u32> = f16s.iter().map(|x| x.to_f32().to_bits()).collect();
        let wantb: Vec<u32> = bits.iter().map(|&b| u32::from(b) << 16).collect();
        for level in supported() {
            for off in [0, 1, 3, 7] {
                let mut got = vec![f32::NAN; f16s.len() - off];
                f16_to_f32_at(level, &f16s[off..], &mut got);
                assert_same(&got, &want16[off..], &format!("f16 {level:?} from {off}"));
                bf16_to_f32_at(level, &bf16s[off..], &mut got);
                assert_same(&got, &wantb[off..], &format!("bf16 {level:?} from {off}"));
            }
            for n in 0..=40 {
                let mut got = vec![-1.0f32; n + 1];
                f16_to_f32_at(level, &f16s[15_360..15_360 + n], &mut got[..n]);
                assert_eq!(got[n], -1.0, "{level:?} writes past {n}");
                assert_same(
                    &got[..n],
                    &want16[15_360..15_360 + n],
                    &format!("f16 {level:?} {n}"),
                );
                bf16_to_f32_at(level, &bf16s[16_256..16_256 + n], &mut got[..n]);
                assert_eq!(got[n], -1.0, "{level:?} writes past {n}");
                assert_same(
                    &got[..n],
                    &wantb[16_256..16_256 + n],
                    &format!("bf16 {level:?} {n}"),
                );
            }
            // The shorter slice bounds the conversion.
            let mut short = [0.0f32; 3];
            f16_to_f32_at(level, &f16s[15_360..15_400], &mut short);
            assert_eq!(
                short,
                [
                    1.0,
                    f16::from_bits(15_361).to_f32(),
                    f16::from_bits(15_362).to_f32()
                ]
            );
        }
    }
}

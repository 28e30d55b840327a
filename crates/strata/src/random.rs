//! Random numbers inside kernels: the counter-based generator Philox4x32-10 (Salmon et al.,
//! "Parallel random numbers: as easy as 1, 2, 3", SC 2011; Random123 and cuRAND have it),
//! recorded into kernels as plain integer arithmetic, so every backend computes the same bits,
//! and implemented on the host ([`philox4x32_10`]) to produce the same streams there.
//!
//! A counter-based generator has no state: the random block is a function of a counter and a
//! key. [`Philox`] keys it with a 64-bit `seed` and gives each `stream` (a work-item, say) its
//! own counters, so launches and work-items never share numbers and need no state kept between
//! launches:
//!
//! ```
//! use strata::prelude::*;
//! use strata::random::Philox;
//!
//! # fn main() -> strata::Result<()> {
//! let queue = Queue::new(&Device::from_spec("cpu")?)?;
//! let k = Kernel::build("noise", |k| {
//!     let seed = k.scalar::<u64>("seed");
//!     let out = k.write::<f32>("out");
//!     let i = global_id(0);
//!     let rng = Philox::new(seed, i.cast::<u64>());
//!     let [a, _, _, _] = rng.block(lit(0u32));
//!     out.set(i, Philox::unit_f32(a));
//! })?;
//! let out = Buffer::<f32>::new(queue.device(), 4)?;
//! queue.launch(&k, NdRange::new(4), args![42u64, &out])?;
//! let host: Vec<f32> = (0..4u64)
//!     .map(|i| strata::random::unit_f32(strata::random::Philox::host_block(42, i, 0)[0]))
//!     .collect();
//! assert_eq!(queue.read(&out)?, host);
//! # Ok(())
//! # }
//! ```
//!
//! The conversions are exact functions of the bits: [`unit_f32`] (24 random bits, in
//! `[0, 1)`), [`unit_f64`] (53 bits from two words), [`below`] (an integer in `[0, n)` by a
//! 64-bit multiply, Lemire's method without rejection: its bias is below `n / 2^32`). Normal
//! variates are not provided: they need transcendental functions, whose last bits differ
//! between backends (see [`crate::ir::MathFn::ulp_bound`]).

use crate::builder::Expr;

/// The multipliers and the key increments ("Weyl constants") of Philox4x32.
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Philox4x32 with 10 rounds on the host: four random words from a 128-bit counter and a
/// 64-bit key, as Random123's `philox4x32_R(10, ctr, key)`.
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (counter, key);
    for r in 0..10 {
        if r > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let p0 = u64::from(M0) * u64::from(c[0]);
        let p1 = u64::from(M1) * u64::from(c[2]);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// [`philox4x32_10`] recorded into the kernel being built: 20 multiplies and their high
/// halves, unrolled.
pub fn philox4x32_10_expr(counter: [Expr<u32>; 4], key: [Expr<u32>; 2]) -> [Expr<u32>; 4] {
    let (mut c, mut k) = (counter, key);
    for r in 0..10 {
        if r > 0 {
            k = [k[0] + W0, k[1] + W1];
        }
        let (m0, m1) = (Expr::from(M0), Expr::from(M1));
        let (hi0, lo0) = (m0.mul_hi(c[0]), m0 * c[0]);
        let (hi1, lo1) = (m1.mul_hi(c[2]), m1 * c[2]);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// A Philox stream in a kernel: the key is the 64-bit seed, and block `n` of stream `s` is
/// Philox of the counter `(n, 0, s_lo, s_hi)`. Streams of different `s` (and blocks of
/// different `n`) never overlap.
#[derive(Clone, Copy)]
pub struct Philox {
    key: [Expr<u32>; 2],
    stream: [Expr<u32>; 2],
}

/// The low and high words of a 64-bit value in a kernel.
fn words(x: Expr<u64>) -> [Expr<u32>; 2] {
    [x.cast::<u32>(), (x >> 32u64).cast::<u32>()]
}

impl Philox {
    /// The stream `stream` of the generator keyed by `seed`.
    pub fn new(seed: impl Into<Expr<u64>>, stream: impl Into<Expr<u64>>) -> Philox {
        Philox {
            key: words(seed.into()),
            stream: words(stream.into()),
        }
    }

    /// Block `n` of the stream: four random words.
    pub fn block(&self, n: impl Into<Expr<u32>>) -> [Expr<u32>; 4] {
        let [s0, s1] = self.stream;
        philox4x32_10_expr([n.into(), Expr::from(0u32), s0, s1], self.key)
    }

    /// Block `n` of stream `stream` of the generator keyed by `seed`, on the host: the same
    /// words as [`Philox::block`] in a kernel.
    pub fn host_block(seed: u64, stream: u64, n: u32) -> [u32; 4] {
        philox4x32_10(
            [n, 0, stream as u32, (stream >> 32) as u32],
            [seed as u32, (seed >> 32) as u32],
        )
    }

    /// [`unit_f32`] in a kernel.
    pub fn unit_f32(x: Expr<u32>) -> Expr<f32> {
        (x >> 8u32).cast::<f32>() * (1.0f32 / 16_777_216.0)
    }

    /// [`unit_f64`] in a kernel.
    pub fn unit_f64(hi: Expr<u32>, lo: Expr<u32>) -> Expr<f64> {
        let bits = (hi.cast::<u64>() << 21u64) ^ (lo >> 11u32).cast::<u64>();
        bits.cast::<f64>() * (1.0f64 / 9_007_199_254_740_992.0)
    }

    /// [`below`] in a kernel.
    pub fn below(x: Expr<u32>, n: impl Into<Expr<u32>>) -> Expr<u32> {
        ((x.cast::<u64>() * n.into().cast::<u64>()) >> 32u64).cast::<u32>()
    }
}

/// A float in `[0, 1)` from the top 24 bits of `x` (every value a multiple of 2^-24).
pub fn unit_f32(x: u32) -> f32 {
    (x >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// A double in `[0, 1)` from 53 bits of two words: the 32 bits of `hi` above the top 21 of
/// `lo` (every value a multiple of 2^-53).
pub fn unit_f64(hi: u32, lo: u32) -> f64 {
    ((u64::from(hi) << 21) ^ u64::from(lo >> 11)) as f64 * (1.0 / 9_007_199_254_740_992.0)
}

/// An integer in `[0, n)` from `x`: the high word of `x * n` (0 for `n == 0`).
pub fn below(x: u32, n: u32) -> u32 {
    ((u64::from(x) * u64::from(n)) >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known-answer vectors for philox4x32 with 10 rounds (`kat_vectors`).
    #[test]
    fn known_answers() {
        assert_eq!(
            philox4x32_10([0; 4], [0; 2]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    fn conversions_cover_their_ranges() {
        assert_eq!(unit_f32(0), 0.0);
        assert_eq!(unit_f32(u32::MAX), 1.0 - 1.0 / 16_777_216.0);
        assert_eq!(unit_f64(0, 0), 0.0);
        assert_eq!(
            unit_f64(u32::MAX, u32::MAX),
            1.0 - 1.0 / 9_007_199_254_740_992.0
        );
        assert_eq!(below(u32::MAX, 6), 5);
        assert_eq!(below(0, 6), 0);
        assert_eq!(below(123, 0), 0);
    }
}

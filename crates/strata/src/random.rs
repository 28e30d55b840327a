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
//! let out = Buffer::<f32>::new(&queue, 4)?;
//! k.launch(&queue, NdRange::new(4), args![42u64, &out])?;
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
//! 64-bit multiply, Lemire's method without rejection: its bias is below `n / 2^32`).
//!
//! Normal variates ([`normal_f32`], [`normal_f64`], and [`Philox::normal_f32`] in kernels) use
//! the Box-Muller transform with a logarithm, sine and cosine of strata's own: polynomials
//! evaluated with `+ - * /`, `sqrt`, `floor` and `frexp`, all exact or correctly rounded on
//! every backend (no contraction into FMA), so the variates are the same bits everywhere,
//! on the host too. The device libraries' `log` and `cos` would differ in the last bits.
//! The host and kernel forms of these functions are written side by side, with the same
//! operations in the same order, in the `portable_math!` macro (instantiated for `f32` and
//! `f64`).
//!
//! [`Well512`] is the stateful generator of Goopax: WELL512a (Panneton, L'Ecuyer and
//! Matsumoto) per work-item, its 16 words and index kept in a buffer between launches
//! ([`Well512::seed_states`] fills one on the host, [`Well512Host`] is the same generator on
//! the host).

use crate::builder::{private_array, var_named, BufferParam, Expr, PrivateArray, Var};

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

    /// A 64-bit integer from two words (`hi` the high half).
    pub fn u64(hi: Expr<u32>, lo: Expr<u32>) -> Expr<u64> {
        (hi.cast::<u64>() << 32u64) | lo.cast::<u64>()
    }

    /// [`normal_f32`] in a kernel: two standard normal variates from two words.
    pub fn normal_f32(a: Expr<u32>, b: Expr<u32>) -> [Expr<f32>; 2] {
        let u1 = Expr::from(1.0f32) - Philox::unit_f32(a);
        f32m::box_muller_expr(u1, Philox::unit_f32(b))
    }

    /// [`normal_f64`] in a kernel: two standard normal variates from a block's four words.
    pub fn normal_f64(w: [Expr<u32>; 4]) -> [Expr<f64>; 2] {
        let u1 = Expr::from(1.0f64) - Philox::unit_f64(w[0], w[1]);
        f64m::box_muller_expr(u1, Philox::unit_f64(w[2], w[3]))
    }
}

/// Two standard normal variates from two random words (Box-Muller: `u1 = 1 - unit_f32(a)` in
/// `(0, 1]`, `u2 = unit_f32(b)`; `sqrt(-2 ln u1) (cos 2 pi u2, sin 2 pi u2)`), the same bits
/// as [`Philox::normal_f32`] in a kernel on any backend.
pub fn normal_f32(a: u32, b: u32) -> [f32; 2] {
    f32m::box_muller(1.0 - unit_f32(a), unit_f32(b))
}

/// Two standard normal variates in `f64` from four words (53-bit uniforms from each pair).
pub fn normal_f64(w: [u32; 4]) -> [f64; 2] {
    f64m::box_muller(1.0 - unit_f64(w[0], w[1]), unit_f64(w[2], w[3]))
}

/// The Box-Muller transform with portable `ln`, `sin` and `cos`, on the host and recorded into
/// kernels, with the same operations in the same order. `ln(x)`: `x = m 2^e` with
/// `m` in `[sqrt(1/2), sqrt(2))`, `ln m = 2 atanh(s)`, `s = (m - 1) / (m + 1)`, by its series
/// to `s^21` (`|s| < 0.172`: the next term is below 2^-56 of the result); `sin`/`cos` of
/// `2 pi u` reduced exactly to a quadrant and an angle in `[0, pi/4]`, Taylor series to `x^17`
/// and `x^18`. Accuracy: a few ulp of the exact transform (`tests/random.rs`).
macro_rules! portable_math {
    ($m:ident, $t:ident, $ln2_hi:expr, $ln2_lo:expr) => {
        mod $m {
            use crate::builder::{lit, select, Expr};

            const SQRT_HALF: $t = std::f64::consts::FRAC_1_SQRT_2 as $t;
            const HALF_PI: $t = std::f64::consts::FRAC_PI_2 as $t;

            /// `1 / (2k + 1)`, `k = 0..=10`.
            fn ln_coefficients() -> [$t; 11] {
                std::array::from_fn(|k| 1.0 / (2 * k + 1) as $t)
            }
            /// `(-1)^k / (2k + 1)!` (sine) and `(-1)^k / (2k)!` (cosine).
            fn trig_coefficients() -> ([$t; 9], [$t; 10]) {
                let fact = |n: u32| (1..=n).map(f64::from).product::<f64>();
                let sign = |k: usize| if k % 2 == 0 { 1.0 } else { -1.0 };
                (
                    std::array::from_fn(|k| (sign(k) / fact(2 * k as u32 + 1)) as $t),
                    std::array::from_fn(|k| (sign(k) / fact(2 * k as u32)) as $t),
                )
            }

            pub(super) fn ln(x: $t) -> $t {
                let (m, e) = libm::Libm::<$t>::frexp(x);
                let (m, e) = if m < SQRT_HALF {
                    (m * 2.0, e - 1)
                } else {
                    (m, e)
                };
                let f = m - 1.0;
                let s = f / (2.0 + f);
                let z = s * s;
                let c = ln_coefficients();
                let mut p = c[10];
                for k in (0..10).rev() {
                    p = p * z + c[k];
                }
                let e = e as $t;
                e * $ln2_hi + (e * $ln2_lo + 2.0 * s * p)
            }

            pub(super) fn ln_expr(x: Expr<$t>) -> Expr<$t> {
                let (m0, e0) = x.frexp();
                let low = m0.lt(SQRT_HALF);
                let m: Expr<$t> = select(low, m0 * (2.0 as $t), m0);
                let e: Expr<i32> = select(low, e0 - 1i32, e0);
                let f = m - (1.0 as $t);
                let s = f / (lit(2.0 as $t) + f);
                let z = s * s;
                let c = ln_coefficients();
                let mut p: Expr<$t> = lit(c[10]);
                for k in (0..10).rev() {
                    p = p * z + c[k];
                }
                let e = e.cast::<$t>();
                e * $ln2_hi + (e * $ln2_lo + lit(2.0 as $t) * s * p)
            }

            /// `(sin 2 pi u, cos 2 pi u)` for `u` in `[0, 1)`.
            pub(super) fn sincos_2pi(u: $t) -> ($t, $t) {
                let t = u * 4.0;
                let q = t.floor();
                let r = t - q;
                let small = r < 0.5;
                let th = (if small { r } else { 1.0 - r }) * HALF_PI;
                let z = th * th;
                let (sc, cc) = trig_coefficients();
                let mut ps = sc[8];
                for k in (0..8).rev() {
                    ps = ps * z + sc[k];
                }
                let mut pc = cc[9];
                for k in (0..9).rev() {
                    pc = pc * z + cc[k];
                }
                let (s, c) = (th * ps, pc);
                let (sn, cs) = if small { (s, c) } else { (c, s) };
                match q as i32 {
                    0 => (sn, cs),
                    1 => (cs, -sn),
                    2 => (-sn, -cs),
                    _ => (-cs, sn),
                }
            }

            pub(super) fn sincos_2pi_expr(u: Expr<$t>) -> (Expr<$t>, Expr<$t>) {
                let t = u * (4.0 as $t);
                let q = t.floor();
                let r = t - q;
                let small = r.lt(0.5 as $t);
                let th = select::<$t>(small, r, lit(1.0 as $t) - r) * HALF_PI;
                let z = th * th;
                let (sc, cc) = trig_coefficients();
                let mut ps: Expr<$t> = lit(sc[8]);
                for k in (0..8).rev() {
                    ps = ps * z + sc[k];
                }
                let mut pc: Expr<$t> = lit(cc[9]);
                for k in (0..9).rev() {
                    pc = pc * z + cc[k];
                }
                let (s, c) = (th * ps, pc);
                let (sn, cs) = (select::<$t>(small, s, c), select::<$t>(small, c, s));
                let pick = |v0: Expr<$t>, v1: Expr<$t>, v2: Expr<$t>, v3: Expr<$t>| {
                    let v23 = select::<$t>(q.eq(2.0 as $t), v2, v3);
                    let v123 = select::<$t>(q.eq(1.0 as $t), v1, v23);
                    select::<$t>(q.eq(0.0 as $t), v0, v123)
                };
                (pick(sn, cs, -sn, -cs), pick(cs, -sn, -cs, sn))
            }

            pub(super) fn box_muller(u1: $t, u2: $t) -> [$t; 2] {
                let r = (-2.0 * ln(u1)).sqrt();
                let (s, c) = sincos_2pi(u2);
                [r * c, r * s]
            }

            pub(super) fn box_muller_expr(u1: Expr<$t>, u2: Expr<$t>) -> [Expr<$t>; 2] {
                let r = (lit(-2.0 as $t) * ln_expr(u1)).sqrt();
                let (s, c) = sincos_2pi_expr(u2);
                [r * c, r * s]
            }
        }
    };
}

// ln 2 split so that `e * hi` is exact for every exponent (musl's constants).
portable_math!(
    f32m,
    f32,
    f32::from_bits(0x3f31_7180),
    f32::from_bits(0x3717_f7d1)
);
portable_math!(
    f64m,
    f64,
    f64::from_bits(0x3fe6_2e42_fee0_0000),
    f64::from_bits(0x3dea_39ef_3579_3c76)
);

/// WELL512a on the host: the same numbers as [`Well512`] in a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Well512Host {
    /// The 16 words of state.
    pub state: [u32; 16],
    /// The current position in `state`.
    pub index: u32,
}

impl Well512Host {
    /// The state of work-item `stream` of the generator seeded by `seed`: 16 words from
    /// Philox blocks 0 to 3 of that stream, index 0.
    pub fn new(seed: u64, stream: u64) -> Well512Host {
        let mut state = [0u32; 16];
        for (n, chunk) in state.chunks_mut(4).enumerate() {
            chunk.copy_from_slice(&Philox::host_block(seed, stream, n as u32));
        }
        Well512Host { state, index: 0 }
    }

    /// The next word.
    pub fn next_u32(&mut self) -> u32 {
        let s = &mut self.state;
        let i = self.index as usize;
        let a = s[i];
        let c = s[(i + 13) & 15];
        let b = a ^ c ^ (a << 16) ^ (c << 15);
        let c = s[(i + 9) & 15];
        let c = c ^ (c >> 11);
        let a = b ^ c;
        s[i] = a;
        let d = a ^ ((a << 5) & 0xDA44_2D24);
        let i = (i + 15) & 15;
        let a = s[i];
        s[i] = a ^ b ^ d ^ (a << 2) ^ (b << 18) ^ (c << 28);
        self.index = i as u32;
        s[i]
    }
}

/// WELL512a in a kernel: a work-item's 16 words and index, loaded from a state buffer
/// ([`Well512::WORDS`] `u32` per work-item) into private memory, advanced by
/// [`next_u32`](Self::next_u32), and written back by [`store`](Self::store) so the next launch
/// continues the stream.
pub struct Well512 {
    state: PrivateArray<u32>,
    index: Var<u32>,
    buffer: BufferParam<u32>,
    base: Expr<u32>,
}

impl Well512 {
    /// `u32` words of state per work-item: 16 words and the index.
    pub const WORDS: u32 = 17;

    /// Host-side states for `items` work-items (item `i` is [`Well512Host::new`]`(seed, i)`),
    /// laid out as [`Well512::load`] reads them.
    pub fn seed_states(seed: u64, items: usize) -> Vec<u32> {
        (0..items as u64)
            .flat_map(|i| {
                let g = Well512Host::new(seed, i);
                g.state.into_iter().chain([g.index])
            })
            .collect()
    }

    /// Loads the state of work-item `item` from `states` (read-write).
    pub fn load(states: BufferParam<u32>, item: impl Into<Expr<u32>>) -> Well512 {
        let base = item.into() * Well512::WORDS;
        let state = private_array::<u32>("well_state", 16);
        for j in 0..16u32 {
            state.set(j, states.at(base + j));
        }
        let index = var_named("well_index", states.at(base + 16u32));
        Well512 {
            state,
            index,
            buffer: states,
            base,
        }
    }

    /// The next word (the same as [`Well512Host::next_u32`]).
    pub fn next_u32(&mut self) -> Expr<u32> {
        let s = self.state;
        let i = self.index.get();
        let a = s.at(i);
        let c = s.at((i + 13u32) & 15u32);
        let b = a ^ c ^ (a << 16u32) ^ (c << 15u32);
        let c = s.at((i + 9u32) & 15u32);
        let c = c ^ (c >> 11u32);
        let a = b ^ c;
        s.set(i, a);
        let d = a ^ ((a << 5u32) & 0xDA44_2D24u32);
        let i = (i + 15u32) & 15u32;
        let a = s.at(i);
        let out = a ^ b ^ d ^ (a << 2u32) ^ (b << 18u32) ^ (c << 28u32);
        s.set(i, out);
        self.index.set(i);
        out
    }

    /// A float in `[0, 1)` ([`unit_f32`] of the next word).
    pub fn next_f32(&mut self) -> Expr<f32> {
        Philox::unit_f32(self.next_u32())
    }

    /// Two standard normal variates from the next two words ([`normal_f32`]).
    pub fn normal_f32(&mut self) -> [Expr<f32>; 2] {
        let a = self.next_u32();
        let b = self.next_u32();
        Philox::normal_f32(a, b)
    }

    /// Writes the state back for the next launch.
    pub fn store(&self) {
        for j in 0..16u32 {
            self.buffer.set(self.base + j, self.state.at(j));
        }
        self.buffer.set(self.base + 16u32, self.index.get());
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

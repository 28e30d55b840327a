//! The float built-ins of strata's evaluator, the semantics every backend is held to, against a
//! reference computed with 320-bit floats (astro-float) and rounded to the type: each result
//! must lie within [`MathFn::ulp_bound`] units in the last place of the correctly rounded
//! result (OpenCL 1.2's bounds), for `f32` and `f64`, at edge cases (zeros, ones and their
//! neighbours, the ends of each domain, subnormals, the largest values, infinities, NaN) and at
//! random inputs over the whole range. Both paths through the evaluator are swept: the CPU
//! backend running a kernel on inputs loaded at run time, and constant folding of literal
//! arguments when the kernel is built.
//!
//! Found by this sweep (issue 18): Rust's `atanh` was 363,409 ulp off at `-0.99999994f32`,
//! and its `acosh` 239 ulp near 1.

use astro_float::{BigFloat, Consts, RoundingMode};
use strata::builder::{Float, FloatArith};
use strata::ir::MathFn;
use strata::prelude::*;

/// Working precision of the reference, in bits.
const P: usize = 320;
const RM: RoundingMode = RoundingMode::ToEven;

/// What the sweep needs of `f32` and `f64`.
trait Sample: Float + FloatArith<Int = i32> + std::str::FromStr + std::fmt::Debug {
    /// The value's place in the total order of the type's values as an integer, so that the
    /// distance in ulp between two values is the difference of their places.
    fn place(self) -> i128;
    fn to_f64(self) -> f64;
    fn of_f64(x: f64) -> Self;
    /// `x` at random over the type's finite values (uniform bit patterns).
    fn from_random_bits(r: u64) -> Self;
    const EPS: f64;
    const MIN_POSITIVE: f64;
    const MAX: f64;
    const NAME: &'static str;
}

impl Sample for f32 {
    fn place(self) -> i128 {
        let b = self.to_bits() as i32;
        (if b < 0 { i32::MIN - b } else { b }) as i128
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn of_f64(x: f64) -> Self {
        x as f32
    }
    fn from_random_bits(r: u64) -> Self {
        f32::from_bits(r as u32)
    }
    const EPS: f64 = f32::EPSILON as f64;
    const MIN_POSITIVE: f64 = f32::MIN_POSITIVE as f64;
    const MAX: f64 = f32::MAX as f64;
    const NAME: &'static str = "f32";
}

impl Sample for f64 {
    fn place(self) -> i128 {
        let b = self.to_bits() as i64;
        (if b < 0 { i64::MIN - b } else { b }) as i128
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn of_f64(x: f64) -> Self {
        x
    }
    fn from_random_bits(r: u64) -> Self {
        f64::from_bits(r)
    }
    const EPS: f64 = f64::EPSILON;
    const MIN_POSITIVE: f64 = f64::MIN_POSITIVE;
    const MAX: f64 = f64::MAX;
    const NAME: &'static str = "f64";
}

/// A float as a 320-bit float, exactly (astro-float's `from_f64` mishandles subnormals, so tiny
/// values are scaled up first and back down in the big type).
fn big(x: f64) -> BigFloat {
    if x != 0.0 && x.abs() < 1e-290 {
        let scaled = BigFloat::from_f64(x * 2f64.powi(200), P);
        scaled.mul(&BigFloat::from_f64(2f64.powi(-200), P), P, RM)
    } else {
        BigFloat::from_f64(x, P)
    }
}

/// The big float correctly rounded to `T` (through its decimal expansion, which has far more
/// digits than either type needs; Rust's parsing rounds correctly).
fn round<T: Sample>(r: &BigFloat) -> T {
    if r.is_nan() {
        return T::of_f64(f64::NAN);
    }
    if r.is_inf() {
        return T::of_f64(if r.is_inf_pos() {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        });
    }
    let text = format!("{r}");
    text.parse()
        .unwrap_or_else(|_| panic!("cannot parse the reference `{text}`"))
}

/// The exact value of `f(args)`, rounded to `T`.
fn reference<T: Sample>(f: MathFn, args: &[T], cc: &mut Consts) -> T {
    let a: Vec<f64> = args.iter().map(|x| x.to_f64()).collect();
    let x = big(a[0]);
    let one = BigFloat::from_f64(1.0, P);
    // Trigonometric functions of huge arguments need pi to more bits than the argument's
    // exponent: work wider there.
    let p = if a[0].abs() > 1e30 { 1400 } else { P };
    let r = match f {
        // IEEE 754 where the big type's special values differ: sqrt(-0) is -0, so
        // rsqrt(-0) = 1 / -0 = -inf; 2^-inf and 10^-inf are 0.
        MathFn::Rsqrt if a[0] == 0.0 => return T::of_f64(1.0 / a[0]),
        MathFn::Exp2 | MathFn::Exp10 if a[0].is_infinite() => return T::of_f64(a[0].exp()),
        MathFn::Sqrt => x.sqrt(P, RM),
        MathFn::Rsqrt => one.div(&x.sqrt(P, RM), P, RM),
        MathFn::Cbrt => x.cbrt(P, RM),
        MathFn::Exp => x.exp(P, RM, cc),
        MathFn::Exp2 => BigFloat::from_f64(2.0, P).pow(&x, P, RM, cc),
        MathFn::Exp10 => BigFloat::from_f64(10.0, P).pow(&x, P, RM, cc),
        // expm1 and log1p of tiny arguments: their series (1 + x loses x below 2^-320).
        MathFn::Expm1 if a[0].abs() < 1e-60 => {
            x.add(&x.mul(&x, P, RM).div(&big(2.0), P, RM), P, RM)
        }
        MathFn::Expm1 => x.exp(P, RM, cc).sub(&one, P, RM),
        MathFn::Log1p if a[0].abs() < 1e-60 => {
            x.sub(&x.mul(&x, P, RM).div(&big(2.0), P, RM), P, RM)
        }
        MathFn::Log1p if a[0] == f64::INFINITY => return T::of_f64(f64::INFINITY),
        MathFn::Log1p => x.add(&one, P, RM).ln(P, RM, cc),
        MathFn::Log => x.ln(P, RM, cc),
        MathFn::Log2 => x.log2(P, RM, cc),
        MathFn::Log10 => x.log10(P, RM, cc),
        MathFn::Sin => big_with(a[0], p).sin(p, RM, cc),
        MathFn::Cos => big_with(a[0], p).cos(p, RM, cc),
        MathFn::Tan => big_with(a[0], p).tan(p, RM, cc),
        MathFn::Asin => x.asin(P, RM, cc),
        MathFn::Acos => x.acos(P, RM, cc),
        MathFn::Atan => x.atan(P, RM, cc),
        MathFn::Sinh => x.sinh(P, RM, cc),
        MathFn::Cosh => x.cosh(P, RM, cc),
        MathFn::Tanh => x.tanh(P, RM, cc),
        MathFn::Asinh => x.asinh(P, RM, cc),
        MathFn::Acosh => x.acosh(P, RM, cc),
        MathFn::Atanh => x.atanh(P, RM, cc),
        MathFn::Degrees => x.mul(&big(180.0), P, RM).div(&cc.pi(P, RM), P, RM),
        MathFn::Radians => x.mul(&cc.pi(P, RM), P, RM).div(&big(180.0), P, RM),
        MathFn::Pow => x.pow(&big(a[1]), P, RM, cc),
        MathFn::Hypot => {
            let y = big(a[1]);
            x.mul(&x, P, RM).add(&y.mul(&y, P, RM), P, RM).sqrt(P, RM)
        }
        // atan2(y, x) for finite, nonzero x: atan(y / x), moved by pi into the right half.
        MathFn::Atan2 => atan2_big(a[0], a[1], cc),
        MathFn::Sinpi | MathFn::Cospi | MathFn::Tanpi => return pi_trig(f, a[0], cc),
        MathFn::Asinpi => x.asin(P, RM, cc).div(&cc.pi(P, RM), P, RM),
        MathFn::Acospi => x.acos(P, RM, cc).div(&cc.pi(P, RM), P, RM),
        MathFn::Atanpi => x.atan(P, RM, cc).div(&cc.pi(P, RM), P, RM),
        MathFn::Atan2pi => atan2_big(a[0], a[1], cc).div(&cc.pi(P, RM), P, RM),
        MathFn::Erf => erf_big(a[0], cc),
        MathFn::Erfc => erfc_big(a[0], cc),
        MathFn::Tgamma | MathFn::Lgamma => gamma_big(f, a[0], cc),
        MathFn::Powr => x.pow(&big(a[1]), P, RM, cc),
        MathFn::Pown => {
            let n = a[1] as i64;
            let r = x.powi(n.unsigned_abs() as usize, P, RM);
            if n < 0 {
                one.div(&r, P, RM)
            } else {
                r
            }
        }
        MathFn::Rootn => {
            let n = big(a[1]);
            let r = x.abs().pow(&one.div(&n, P, RM), P, RM, cc);
            if a[0] < 0.0 {
                r.neg()
            } else {
                r
            }
        }
        other => panic!("no reference for {}", other.name()),
    };
    round(&r)
}

/// `atan2(y, x)` in the big type, for finite nonzero `x`.
fn atan2_big(y: f64, x: f64, cc: &mut Consts) -> BigFloat {
    let t = big(y).div(&big(x), P, RM).atan(P, RM, cc);
    match (x > 0.0, y >= 0.0) {
        (true, _) => t,
        (false, true) => t.add(&cc.pi(P, RM), P, RM),
        (false, false) => t.sub(&cc.pi(P, RM), P, RM),
    }
}

/// sinpi, cospi, tanpi: `x` reduced exactly by the period in `f64` (`%` is exact), the exact
/// values at multiples of 1/2 (where the big type's pi is not exact), else the big function of
/// `pi r`.
fn pi_trig<T: Sample>(f: MathFn, x: f64, cc: &mut Consts) -> T {
    if !x.is_finite() {
        return T::of_f64(f64::NAN);
    }
    let r = x % 2.0;
    let exact = match f {
        MathFn::Sinpi if r % 1.0 == 0.0 => Some(0.0),
        MathFn::Sinpi if r.abs() == 0.5 || r.abs() == 1.5 => {
            Some(if (r > 0.0) == (r.abs() == 0.5) {
                1.0
            } else {
                -1.0
            })
        }
        MathFn::Cospi if r.abs() == 0.5 || r.abs() == 1.5 => Some(0.0),
        MathFn::Cospi if r % 1.0 == 0.0 => Some(if r == 0.0 { 1.0 } else { -1.0 }),
        MathFn::Tanpi if r % 1.0 == 0.0 => Some(0.0),
        // +inf where floor(x) is even, -inf where it is odd (OpenCL's and C23's rule).
        MathFn::Tanpi if (r % 1.0).abs() == 0.5 => Some(if x.floor() % 2.0 == 0.0 {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        }),
        _ => None,
    };
    if let Some(v) = exact {
        return T::of_f64(v);
    }
    let t = big(r).mul(&cc.pi(P, RM), P, RM);
    let v = match f {
        MathFn::Sinpi => t.sin(P, RM, cc),
        MathFn::Cospi => t.cos(P, RM, cc),
        _ => t.tan(P, RM, cc),
    };
    round(&v)
}

/// `erf(x)`: the Taylor series, whose largest term for `|x| <= 6` is below 2^53 (the working
/// precision has room to spare); beyond, `erf` is `±1` in both types.
fn erf_big(x: f64, cc: &mut Consts) -> BigFloat {
    if x.is_nan() {
        return BigFloat::nan(None);
    }
    if x.abs() > 6.0 {
        return big(x.signum());
    }
    let p = P + 128;
    let xb = big_with(x, p);
    let x2 = xb.mul(&xb, p, RM).neg();
    let mut term = xb.clone();
    let mut sum = xb.clone();
    for n in 1..400u64 {
        term = term.mul(&x2, p, RM).div(&BigFloat::from_u64(n, p), p, RM);
        sum = sum.add(&term.div(&BigFloat::from_u64(2 * n + 1, p), p, RM), p, RM);
    }
    let two_over_sqrt_pi = BigFloat::from_u64(2, p).div(&cc.pi(p, RM).sqrt(p, RM), p, RM);
    sum.mul(&two_over_sqrt_pi, p, RM)
}

/// `erfc(x)` as an `f64` correctly rounded: `1 - erf(x)` up to 4 (losing at most 26 of the
/// series' bits), the continued fraction `e^-x^2 / sqrt(pi) / (x + (1/2) / (x + 1 / (x + ...)))`
/// beyond, 0 past 28 (below half the smallest subnormal).
fn erfc_big(x: f64, cc: &mut Consts) -> BigFloat {
    if x.is_nan() {
        return BigFloat::nan(None);
    }
    if x <= 4.0 {
        return big(1.0).sub(&erf_big(x, cc), P, RM);
    }
    if x > 28.0 {
        return big(0.0);
    }
    let xb = big(x);
    let mut f = xb.clone();
    for k in (1..4000u64).rev() {
        let half_k = BigFloat::from_u64(k, P).div(&big(2.0), P, RM);
        f = xb.add(&half_k.div(&f, P, RM), P, RM);
    }
    let e = xb.mul(&xb, P, RM).neg().exp(P, RM, cc);
    e.div(&cc.pi(P, RM).sqrt(P, RM), P, RM).div(&f, P, RM)
}

/// `ln gamma(z)` for `z > 0`: Stirling's series (Bernoulli numbers B2..B30) after shifting `z`
/// up to at least 120, where its truncation error is below 10^-65 (absolute; lgamma's exact
/// zeros at 1 and 2 are returned exactly by the caller).
fn ln_gamma_pos(z: &BigFloat, cc: &mut Consts) -> BigFloat {
    let p = P + 64;
    let shifted_min = BigFloat::from_u64(120, p);
    let mut z = z.clone();
    let mut prod = BigFloat::from_u64(1, p);
    while z.cmp(&shifted_min).unwrap_or(0) < 0 {
        prod = prod.mul(&z, p, RM);
        z = z.add(&BigFloat::from_u64(1, p), p, RM);
    }
    // (numerator, denominator) of B_2k, k = 1..15.
    const B: [(i64, i64); 15] = [
        (1, 6),
        (-1, 30),
        (1, 42),
        (-1, 30),
        (5, 66),
        (-691, 2730),
        (7, 6),
        (-3617, 510),
        (43867, 798),
        (-174611, 330),
        (854513, 138),
        (-236364091, 2730),
        (8553103, 6),
        (-23749461029, 870),
        (8615841276005, 14322),
    ];
    let half = big(0.5);
    let ln_z = z.ln(p, RM, cc);
    let two_pi = cc.pi(p, RM).mul(&big(2.0), p, RM);
    let mut s = z.sub(&half, p, RM).mul(&ln_z, p, RM).sub(&z, p, RM).add(
        &two_pi.ln(p, RM, cc).mul(&half, p, RM),
        p,
        RM,
    );
    let z2 = z.mul(&z, p, RM);
    let mut zpow = z.clone();
    for (k, &(num, den)) in B.iter().enumerate() {
        let k2 = 2 * (k as i64 + 1);
        let c = BigFloat::from_i64(num, p).div(&BigFloat::from_i64(den * k2 * (k2 - 1), p), p, RM);
        s = s.add(&c.div(&zpow, p, RM), p, RM);
        zpow = zpow.mul(&z2, p, RM);
    }
    s.sub(&prod.ln(p, RM, cc), p, RM)
}

/// tgamma or lgamma of `x`: [`ln_gamma_pos`], and the reflection formula for negative `x`
/// with `sin(pi x)` of the exactly reduced argument.
fn gamma_big(f: MathFn, x: f64, cc: &mut Consts) -> BigFloat {
    let tgamma = f == MathFn::Tgamma;
    let special = |v: f64| big(v);
    if x.is_nan() {
        return BigFloat::nan(None);
    }
    if x.is_infinite() {
        return special(if tgamma && x < 0.0 {
            f64::NAN
        } else {
            f64::INFINITY
        });
    }
    if x == 0.0 {
        return special(if tgamma { 1.0 / x } else { f64::INFINITY });
    }
    if x < 0.0 && x.fract() == 0.0 {
        return special(if tgamma { f64::NAN } else { f64::INFINITY });
    }
    if tgamma && x > 200.0 {
        return special(f64::INFINITY);
    }
    if !tgamma && (x == 1.0 || x == 2.0) {
        return big(0.0);
    }
    if x > 0.0 {
        let l = ln_gamma_pos(&big(x), cc);
        return if tgamma { l.exp(P, RM, cc) } else { l };
    }
    // x < 0: gamma(x) = pi / (sin(pi x) gamma(1 - x)).
    let s = big(x % 2.0).mul(&cc.pi(P, RM), P, RM).sin(P, RM, cc);
    let l1 = ln_gamma_pos(&big(1.0).sub(&big(x), P, RM), cc);
    if tgamma {
        if x < -200.0 {
            return special(if s.is_negative() { -0.0 } else { 0.0 });
        }
        cc.pi(P, RM).div(&s.mul(&l1.exp(P, RM, cc), P, RM), P, RM)
    } else {
        cc.pi(P, RM)
            .div(&s.abs(), P, RM)
            .ln(P, RM, cc)
            .sub(&l1, P, RM)
    }
}

/// `x` as a big float of `p` bits (widening is exact).
fn big_with(x: f64, p: usize) -> BigFloat {
    let mut b = big(x);
    b.set_precision(p, RM).expect("widening is exact");
    b
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The inputs: edge cases, then `random` values at random over the finite values, uniform in
/// [-8, 8], and just inside +-1.
fn inputs<T: Sample>(random: usize, seed: u64) -> Vec<T> {
    let (eps, tiny, max) = (T::EPS, T::MIN_POSITIVE, T::MAX);
    let mut v: Vec<f64> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        10.0,
        1.0 + eps,
        1.0 - eps / 2.0,
        -(1.0 - eps / 2.0),
        -(1.0 + eps),
        1.0 + 1e3 * eps,
        1.0 - 1e3 * eps,
        tiny,
        -tiny,
        tiny * eps,
        tiny / 3.0,
        max,
        -max,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        std::f64::consts::PI,
        std::f64::consts::FRAC_PI_2,
        88.0,
        -87.0,
        700.0,
        1e10,
        1e30,
        -1e30,
    ];
    let mut r = Rng(seed);
    for k in 0..random {
        v.push(match k % 4 {
            0 | 1 => T::from_random_bits(r.next()).to_f64(),
            2 => 16.0 * r.unit() - 8.0,
            _ => (1.0 - r.unit() * 1e3 * eps) * if r.next() & 1 == 0 { 1.0 } else { -1.0 },
        });
    }
    v.into_iter().map(T::of_f64).collect()
}

/// A built-in as a builder method.
type Method<T> = fn(Expr<T>) -> Expr<T>;

/// The one-argument built-ins with an error bound, and the builder method of each.
fn unary<T: Sample>() -> Vec<(MathFn, Method<T>)> {
    vec![
        (MathFn::Sqrt, |x| x.sqrt()),
        (MathFn::Rsqrt, |x| x.rsqrt()),
        (MathFn::Cbrt, |x| x.cbrt()),
        (MathFn::Exp, |x| x.exp()),
        (MathFn::Exp2, |x| x.exp2()),
        (MathFn::Exp10, |x| x.exp10()),
        (MathFn::Expm1, |x| x.expm1()),
        (MathFn::Log, |x| x.log()),
        (MathFn::Log2, |x| x.log2()),
        (MathFn::Log10, |x| x.log10()),
        (MathFn::Log1p, |x| x.log1p()),
        (MathFn::Sin, |x| x.sin()),
        (MathFn::Cos, |x| x.cos()),
        (MathFn::Tan, |x| x.tan()),
        (MathFn::Asin, |x| x.asin()),
        (MathFn::Acos, |x| x.acos()),
        (MathFn::Atan, |x| x.atan()),
        (MathFn::Sinh, |x| x.sinh()),
        (MathFn::Cosh, |x| x.cosh()),
        (MathFn::Tanh, |x| x.tanh()),
        (MathFn::Asinh, |x| x.asinh()),
        (MathFn::Acosh, |x| x.acosh()),
        (MathFn::Atanh, |x| x.atanh()),
        (MathFn::Degrees, |x| x.degrees()),
        (MathFn::Radians, |x| x.radians()),
        (MathFn::Erf, |x| x.erf()),
        (MathFn::Erfc, |x| x.erfc()),
        (MathFn::Tgamma, |x| x.tgamma()),
        (MathFn::Lgamma, |x| x.lgamma()),
        (MathFn::Sinpi, |x| x.sinpi()),
        (MathFn::Cospi, |x| x.cospi()),
        (MathFn::Tanpi, |x| x.tanpi()),
        (MathFn::Asinpi, |x| x.asinpi()),
        (MathFn::Acospi, |x| x.acospi()),
        (MathFn::Atanpi, |x| x.atanpi()),
    ]
}

/// The two-argument built-ins, the builder method of each, and whether an argument pair is
/// one the reference covers (`pow` of a positive base, `atan2` of a finite nonzero `x`).
#[allow(clippy::type_complexity)]
fn binary<T: Sample>() -> Vec<(
    MathFn,
    fn(Expr<T>, Expr<T>) -> Expr<T>,
    fn(f64, f64) -> bool,
)> {
    vec![
        (
            MathFn::Pow,
            |x, y| x.pow(y),
            |x, y| x > 0.0 && x.is_finite() && y.is_finite(),
        ),
        (
            MathFn::Hypot,
            |x, y| x.hypot(y),
            |x, y| x.is_finite() && y.is_finite(),
        ),
        (
            MathFn::Atan2,
            |y, x| y.atan2(x),
            |y, x| y.is_finite() && x.is_finite() && x != 0.0,
        ),
        (
            MathFn::Atan2pi,
            |y, x| y.atan2pi(x),
            |y, x| y.is_finite() && x.is_finite() && x != 0.0,
        ),
        (
            MathFn::Powr,
            |x, y| x.powr(y),
            |x, y| x > 0.0 && x.is_finite() && y.is_finite(),
        ),
        // The exponent is the second input converted to an integer (the pairs cover small
        // integers in -20..=20).
        (
            MathFn::Pown,
            |x, n| x.pown(n.cast::<i32>()),
            |x, n| x.is_finite() && x != 0.0 && n.fract() == 0.0 && n.abs() <= 64.0,
        ),
        (
            MathFn::Rootn,
            |x, n| x.rootn(n.cast::<i32>()),
            |x, n| x.is_finite() && x > 0.0 && n.fract() == 0.0 && n != 0.0 && n.abs() <= 64.0,
        ),
    ]
}

/// Where `got` is more than `f`'s bound from the reference: a message, else `None`.
fn judge<T: Sample>(f: MathFn, args: &[T], got: T, want: T, how: &str) -> Option<String> {
    // lgamma is only absolutely accurate near its zeros at negative x (see its ulp_bound).
    let abs = if f == MathFn::Lgamma && args[0].to_f64() < 0.0 {
        if T::EPS < 1e-10 {
            2f64.powi(-48)
        } else {
            2f64.powi(-20)
        }
    } else {
        0.0
    };
    let ok = if want.to_f64().is_nan() {
        got.to_f64().is_nan()
    } else {
        !got.to_f64().is_nan()
            && ((got.place() - want.place()).unsigned_abs() <= u128::from(f.ulp_bound())
                || (got.to_f64() - want.to_f64()).abs() <= abs)
    };
    (!ok).then(|| {
        let ulp = if got.to_f64().is_nan() || want.to_f64().is_nan() {
            "NaN".to_string()
        } else {
            (got.place() - want.place()).unsigned_abs().to_string()
        };
        format!(
            "{}({args:?}) {how} = {got:?}; correctly rounded {want:?}: {ulp} ulp, bound {}",
            f.name(),
            f.ulp_bound()
        )
    })
}

/// Runs `y = f(x)` (or `f(x, z)`) on the CPU backend over `xs`.
fn run_on_cpu<T: Sample>(q: &Queue, k: &Kernel, xs: &[T], zs: Option<&[T]>) -> Vec<T> {
    let x = Buffer::from_slice(q, xs).unwrap();
    let z = Buffer::from_slice(q, zs.unwrap_or(xs)).unwrap();
    let y = Buffer::<T>::new(q.device(), xs.len()).unwrap();
    k.launch(q, NdRange::covering(xs.len(), 64), args![&x, &z, &y])
        .unwrap();
    q.read(&y).unwrap()
}

fn sweep<T: Sample>(random: usize, folded: usize) {
    let q = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let mut cc = Consts::new().expect("astro-float constants");
    let xs: Vec<T> = inputs(random, 0x5eed ^ T::NAME.len() as u64);
    let mut failures = Vec::new();
    let mut checked = 0usize;
    for (f, method) in unary::<T>() {
        // Inputs loaded at run time.
        let k = Kernel::build(&format!("sweep_{}", f.name()), |k| {
            let x = k.read::<T>("x");
            let _z = k.read::<T>("z");
            let y = k.write::<T>("y");
            let i = global_id(0);
            if_(i.lt(x.len()), || y.set(i, method(x.at(i))));
        })
        .unwrap();
        let got = run_on_cpu(&q, &k, &xs, None);
        for (x, g) in xs.iter().zip(got) {
            let want = reference(f, &[*x], &mut cc);
            failures.extend(judge(f, &[*x], g, want, "on the CPU backend"));
            checked += 1;
        }
        // Literal arguments, folded when the kernel is built.
        let lits = &xs[..folded.min(xs.len())];
        let k = Kernel::build(&format!("folded_{}", f.name()), |k| {
            let y = k.write::<T>("y");
            let _x = k.read::<T>("x");
            let _z = k.read::<T>("z");
            if_(global_id(0).eq(0u32), || {
                for (j, &x) in lits.iter().enumerate() {
                    y.set(j as u32, method(lit(x)));
                }
            });
        })
        .unwrap();
        assert!(
            !k.ir_text()
                .lines()
                .skip(1)
                .any(|l| l.contains(&format!("{}(", f.name()))),
            "{} was not folded:\n{}",
            f.name(),
            k.ir_text()
        );
        let x = Buffer::from_slice(&q, lits).unwrap();
        let y = Buffer::<T>::new(q.device(), lits.len()).unwrap();
        k.launch(&q, NdRange::new(1), args![&y, &x, &x]).unwrap();
        for (x, g) in lits.iter().zip(q.read(&y).unwrap()) {
            let want = reference(f, &[*x], &mut cc);
            failures.extend(judge(f, &[*x], g, want, "folded"));
            checked += 1;
        }
    }
    let mut r = Rng(7);
    for (f, method, covered) in binary::<T>() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        while a.len() < random {
            let pick = |r: &mut Rng| match r.next() % 3 {
                0 => T::from_random_bits(r.next()),
                1 => T::of_f64(64.0 * r.unit() - 32.0),
                _ => T::of_f64(r.unit() * 4.0),
            };
            let (x, mut y) = (pick(&mut r), pick(&mut r));
            if matches!(f, MathFn::Pown | MathFn::Rootn) {
                // An integer exponent in -20..=20.
                y = T::of_f64((y.to_f64().abs() % 41.0).floor() - 20.0);
            }
            if covered(x.to_f64(), y.to_f64()) {
                a.push(x);
                b.push(y);
            }
        }
        let k = Kernel::build(&format!("sweep_{}", f.name()), |k| {
            let x = k.read::<T>("x");
            let z = k.read::<T>("z");
            let y = k.write::<T>("y");
            let i = global_id(0);
            if_(i.lt(x.len()), || y.set(i, method(x.at(i), z.at(i))));
        })
        .unwrap();
        let got = run_on_cpu(&q, &k, &a, Some(&b));
        for ((x, z), g) in a.iter().zip(&b).zip(got) {
            let want = reference(f, &[*x, *z], &mut cc);
            failures.extend(judge(f, &[*x, *z], g, want, "on the CPU backend"));
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} {} results outside their bound:\n{}",
        failures.len(),
        T::NAME,
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn f32_built_ins_are_within_their_bounds() {
    sweep::<f32>(600, 48);
}

#[test]
fn f64_built_ins_are_within_their_bounds() {
    sweep::<f64>(400, 48);
}

/// The two cases the issue reported, exactly.
#[test]
fn atanh_and_acosh_near_one() {
    let mut cc = Consts::new().unwrap();
    let q = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let k = Kernel::build("edge_hyperbolic", |k| {
        let x = k.read::<f32>("x");
        let _z = k.read::<f32>("z");
        let y = k.write::<f32>("y");
        y.set(0u32, x.at(0u32).atanh());
        y.set(1u32, x.at(1u32).acosh());
    })
    .unwrap();
    let xs = [-0.99999994f32, 1.0000001];
    let got = run_on_cpu(&q, &k, &xs, None);
    assert_eq!(got[0], reference::<f32>(MathFn::Atanh, &[xs[0]], &mut cc));
    assert_eq!(got[0], -8.66434f32);
    let want = reference::<f32>(MathFn::Acosh, &[xs[1]], &mut cc);
    assert!(
        (got[1].place() - want.place()).abs() <= 1,
        "{} {}",
        got[1],
        want
    );
}

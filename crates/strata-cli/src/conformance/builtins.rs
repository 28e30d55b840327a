//! The rest of OpenCL 1.2's built-in set (issue 14, item 3): the special functions (`erf`,
//! `erfc`, `tgamma`, `lgamma`), the `pi` trigonometry, the exponent and remainder functions,
//! `powr`/`pown`/`rootn`, the common and relational extras, and the integer extras
//! (`mad_sat`, `mul24`, `abs_diff`, `upsample`, ...).
//!
//! References: the exact built-ins against independent host code (the `libm` crate, musl's
//! algorithms, or the defining formula); the rounded ones against the evaluator's `f64`
//! result, which `crates/strata/tests/math_accuracy.rs` holds within bound of a 320-bit
//! reference, rounded to the case's type. Rounded results may be off by the built-in's bound
//! ([`MathFn::ulp_bound`]) plus one ulp for the reference's own rounding.

use super::{case, Case};
use strata::ir::MathFn;

/// The evaluator's `f64` value of a one-argument float built-in.
fn ref1(f: MathFn, x: f64) -> f64 {
    <f64 as strata::ir::eval::Float>::math1(f, x)
}

/// The evaluator's `f64` value of a two-argument float built-in.
fn ref2(f: MathFn, x: f64, y: f64) -> f64 {
    <f64 as strata::ir::eval::Float>::math2(f, x, y)
}

/// The tolerance of a rounded built-in against an `f64` reference.
fn ulps(f: MathFn) -> u64 {
    1 + u64::from(f.ulp_bound())
}

macro_rules! float_builtins {
    ($($t:ident;)*) => {
        $(
        mod $t {
            use super::super::{expect_close, expect_eq, expect_same, has_f64, inputs, map1, map2, Rng};
            use super::{ref1, ref2, ulps};
            use strata::ir::MathFn;
            use strata::prelude::*;

            type F = $t;
            const IS_F64: bool = std::mem::size_of::<F>() == 8;

            fn skip(q: &Queue) -> bool {
                IS_F64 && !has_f64(q)
            }

            /// Inputs: `extra`, then uniform values in `[lo, hi]`.
            fn uniform(seed: u64, (lo, hi): (f64, f64), extra: &[F]) -> Vec<F> {
                let mut r = Rng::new(seed);
                let mut xs = extra.to_vec();
                while xs.len() < 400 {
                    xs.push(r.f64_in(lo, hi) as F);
                }
                xs
            }

            /// A rounded one-argument built-in against the `f64` reference, within its bound
            /// or `abs` (for results near a zero of the function).
            fn rounded(q: &Queue, f: MathFn, xs: &[F], dev: fn(Expr<F>) -> Expr<F>, abs: f64) -> Result<(), String> {
                let got = map1(q, &format!("{}_{}", f.name(), stringify!($t)), xs, dev)?;
                let want: Vec<F> = xs.iter().map(|&x| ref1(f, x as f64) as F).collect();
                expect_close(&format!("{} {}", stringify!($t), f.name()), &got, &want, ulps(f), abs)
            }

            pub(super) fn special(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let ex: &[F] = &[0.0, -0.0, 0.5, -0.5, 1.0, 2.0, F::INFINITY, F::NEG_INFINITY, F::NAN];
                rounded(q, MathFn::Erf, &uniform(1, (-6.0, 6.0), ex), |x| x.erf(), 0.0)?;
                let top = if IS_F64 { 27.0 } else { 10.0 };
                rounded(q, MathFn::Erfc, &uniform(2, (-5.0, top), ex), |x| x.erfc(), 0.0)?;
                let top = if IS_F64 { 170.0 } else { 34.0 };
                let gx: &[F] = &[0.5, 1.0, 2.0, 3.0, 10.0, -0.5, -1.5, F::INFINITY, F::NAN, 0.0, -0.0];
                rounded(q, MathFn::Tgamma, &uniform(3, (-10.3, top), gx), |x| x.tgamma(), 0.0)?;
                // Near its zeros at negative x, lgamma is only absolutely accurate.
                let abs = if IS_F64 { 2f64.powi(-48) } else { 2f64.powi(-20) };
                rounded(q, MathFn::Lgamma, &uniform(4, (-20.0, 1e4), gx), |x| x.lgamma(), abs)?;
                rounded(q, MathFn::Lgamma, &uniform(5, (0.01, 8.0), &[]), |x| x.lgamma(), 0.0)
            }

            pub(super) fn pi_trig(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let ex: &[F] = &[0.0, -0.0, 0.25, -0.75, 1e-30, F::INFINITY, F::NAN];
                let wide = uniform(11, (-100.0, 100.0), ex);
                rounded(q, MathFn::Sinpi, &wide, |x| x.sinpi(), 0.0)?;
                rounded(q, MathFn::Cospi, &wide, |x| x.cospi(), 0.0)?;
                rounded(q, MathFn::Tanpi, &uniform(12, (-10.0, 10.0), ex), |x| x.tanpi(), 0.0)?;
                let unit = uniform(13, (-1.0, 1.0), &[0.0, -0.0, 1.0, -1.0, 0.5, 2.0, F::NAN]);
                rounded(q, MathFn::Asinpi, &unit, |x| x.asinpi(), 0.0)?;
                rounded(q, MathFn::Acospi, &unit, |x| x.acospi(), 0.0)?;
                rounded(q, MathFn::Atanpi, &uniform(14, (-1e3, 1e3), ex), |x| x.atanpi(), 0.0)?;
                let ys = uniform(15, (-10.0, 10.0), &[0.0, 1.0, -1.0, 0.0, -0.0]);
                let xs = uniform(16, (-10.0, 10.0), &[1.0, 0.0, -1.0, -1.0, -1.0]);
                let got = map2(q, concat!("atan2pi_", stringify!($t)), &ys, &xs, |y: Expr<F>, x: Expr<F>| y.atan2pi(x))?;
                let want: Vec<F> = ys.iter().zip(&xs).map(|(&y, &x)| ref2(MathFn::Atan2pi, y as f64, x as f64) as F).collect();
                expect_close(concat!(stringify!($t), " atan2pi"), &got, &want, ulps(MathFn::Atan2pi), 0.0)?;
                // Exact at integers and half-integers, zeros with their rules' signs.
                let points: Vec<F> = (-16..=16).map(|k| k as F * 0.5).collect();
                let got = map1(q, concat!("pi_points_", stringify!($t)), &points, |x: Expr<F>| {
                    x.sinpi() + x.cospi() * lit(4.0 as F) + x.tanpi().copysign(lit(1.0 as F)).min(lit(100.0 as F)) * lit(16.0 as F)
                })?;
                let want: Vec<F> = points.iter().map(|&x| {
                    let (s, c, t) = (ref1(MathFn::Sinpi, x as f64), ref1(MathFn::Cospi, x as f64), ref1(MathFn::Tanpi, x as f64));
                    (s as F) + (c as F) * 4.0 + (t as F).copysign(1.0).min(100.0) * 16.0
                }).collect();
                expect_same(concat!(stringify!($t), " sinpi/cospi/tanpi at multiples of 1/2"), &got, &want)?;
                let got = map1(q, concat!("pi_zero_signs_", stringify!($t)), &points, |x: Expr<F>| {
                    x.sinpi().signbit().cast::<F>() + x.cospi().signbit().cast::<F>() * lit(2.0 as F) + x.tanpi().signbit().cast::<F>() * lit(4.0 as F)
                })?;
                let want: Vec<F> = points.iter().map(|&x| {
                    let s = |f| (ref1(f, x as f64) as F).is_sign_negative() as u8 as F;
                    s(MathFn::Sinpi) + s(MathFn::Cospi) * 2.0 + s(MathFn::Tanpi) * 4.0
                }).collect();
                expect_eq(concat!(stringify!($t), " signs of sinpi/cospi/tanpi at multiples of 1/2"), &got, &want)
            }

            /// The exponent and remainder built-ins, all exact.
            pub(super) fn exponent(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let mut xs: Vec<F> = inputs::<F>(21, 300, true);
                xs.extend([F::MIN_POSITIVE, F::MIN_POSITIVE / 3.0, -F::MIN_POSITIVE * F::EPSILON, F::MAX, -F::MAX, 0.9999, -2.5, 6.5]);
                let mut r = Rng::new(22);
                let ys: Vec<F> = xs.iter().enumerate().map(|(i, _)| match i % 4 {
                    0 => r.f64_in(-10.0, 10.0) as F,
                    1 => inputs::<F>(23 + i as u64, 13, true)[i % 13],
                    2 => (r.int(1, 9) as F) * 0.5,
                    _ => r.f64_in(-1e-3, 1e3) as F,
                }).collect();
                let ns: Vec<i32> = (0..xs.len()).map(|i| match i % 3 {
                    0 => r.int(-40, 40) as i32,
                    1 => r.int(-1100, 1100) as i32,
                    _ => [i32::MIN, i32::MAX, 0, 1, -1, 200, -200][i % 7],
                }).collect();
                let ldexp = map2(q, concat!("ldexp_", stringify!($t)), &xs, &ns, |x: Expr<F>, n: Expr<i32>| x.ldexp(n))?;
                let want: Vec<F> = xs.iter().zip(&ns).map(|(&x, &n)| libm::Libm::<F>::ldexp(x, n)).collect();
                expect_same(concat!(stringify!($t), " ldexp"), &ldexp, &want)?;
                let got = map1(q, concat!("frexp_", stringify!($t)), &xs, |x: Expr<F>| {
                    let (m, e) = x.frexp();
                    m + e.cast::<F>() * lit(4.0 as F)
                })?;
                let want: Vec<F> = xs.iter().map(|&x| { let (m, e) = libm::Libm::<F>::frexp(x); m + (e as F) * 4.0 }).collect();
                expect_same(concat!(stringify!($t), " frexp (m + 4 e)"), &got, &want)?;
                let got = map1(q, concat!("ilogb_", stringify!($t)), &xs, |x: Expr<F>| x.ilogb())?;
                let want: Vec<i32> = xs.iter().map(|&x| if x == 0.0 { i32::MIN } else if !x.is_finite() { i32::MAX } else { libm::Libm::<F>::ilogb(x) }).collect();
                expect_eq(concat!(stringify!($t), " ilogb"), &got, &want)?;
                let got = map1(q, concat!("logb_", stringify!($t)), &xs, |x: Expr<F>| x.logb())?;
                let want: Vec<F> = xs.iter().map(|&x| if x == 0.0 { F::NEG_INFINITY } else if !x.is_finite() { x.abs() } else { libm::Libm::<F>::ilogb(x) as F }).collect();
                expect_same(concat!(stringify!($t), " logb"), &got, &want)?;
                let got = map1(q, concat!("modf_", stringify!($t)), &xs, |x: Expr<F>| {
                    let (f, i) = x.modf();
                    f * lit(1e-3 as F) + i.signbit().cast::<F>() + f.signbit().cast::<F>() * lit(2.0 as F)
                })?;
                let want: Vec<F> = xs.iter().map(|&x| {
                    let (f, i) = libm::Libm::<F>::modf(x);
                    f * (1e-3 as F) + (i.is_sign_negative() as u8 as F) + (f.is_sign_negative() as u8 as F) * 2.0
                }).collect();
                expect_same(concat!(stringify!($t), " modf"), &got, &want)?;
                let got = map1(q, concat!("modf_int_", stringify!($t)), &xs, |x: Expr<F>| x.modf().1)?;
                let want: Vec<F> = xs.iter().map(|&x| libm::Libm::<F>::modf(x).1).collect();
                expect_same(concat!(stringify!($t), " modf integral part"), &got, &want)?;
                let got = map2(q, concat!("remquo_", stringify!($t)), &xs, &ys, |x: Expr<F>, y: Expr<F>| {
                    let (r, k) = x.remquo(y);
                    r + k.cast::<F>() * lit(1024.0 as F)
                })?;
                let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| {
                    let (r, k) = libm::Libm::<F>::remquo(x, y);
                    // musl keeps the low 31 bits of the quotient; OpenCL (and strata) 7.
                    let k = if r.is_nan() { 0 } else { k.signum() * (k.abs() & 127) };
                    r + (k as F) * 1024.0
                }).collect();
                expect_same(concat!(stringify!($t), " remquo (r + 1024 q)"), &got, &want)?;
                let got = map2(q, concat!("exact2_", stringify!($t)), &xs, &ys, |x: Expr<F>, y: Expr<F>| {
                    x.nextafter(y) - x.remainder(y) * lit(0.5 as F)
                })?;
                let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| libm::Libm::<F>::nextafter(x, y) - libm::Libm::<F>::remainder(x, y) * 0.5).collect();
                expect_same(concat!(stringify!($t), " nextafter - remainder / 2"), &got, &want)?;
                let got = map2(q, concat!("nextafter_", stringify!($t)), &xs, &ys, |x: Expr<F>, y: Expr<F>| x.nextafter(y))?;
                let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| libm::Libm::<F>::nextafter(x, y)).collect();
                expect_same(concat!(stringify!($t), " nextafter"), &got, &want)?;
                let got = map2(q, concat!("remainder_", stringify!($t)), &xs, &ys, |x: Expr<F>, y: Expr<F>| x.remainder(y))?;
                let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| libm::Libm::<F>::remainder(x, y)).collect();
                expect_same(concat!(stringify!($t), " remainder"), &got, &want)?;
                let got = map2(q, concat!("fdim_", stringify!($t)), &xs, &ys, |x: Expr<F>, y: Expr<F>| x.fdim(y))?;
                let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| libm::Libm::<F>::fdim(x, y)).collect();
                expect_same(concat!(stringify!($t), " fdim"), &got, &want)?;
                let got = map2(q, concat!("mag_", stringify!($t)), &xs, &ys, |x: Expr<F>, y: Expr<F>| {
                    x.maxmag(y) - x.minmag(y) * lit(3.0 as F)
                })?;
                let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| {
                    let (ax, ay) = (x.abs(), y.abs());
                    let max = if ax > ay { x } else if ay > ax { y } else { x.max(y) };
                    let min = if ax < ay { x } else if ay < ax { y } else { x.min(y) };
                    max - min * 3.0
                }).collect();
                expect_same(concat!(stringify!($t), " maxmag - 3 minmag"), &got, &want)?;
                let got = map1(q, concat!("rint_fract_", stringify!($t)), &xs, |x: Expr<F>| {
                    x.rint() + x.fract() * lit(0.25 as F)
                })?;
                let below_one: F = 1.0 - F::EPSILON / 2.0;
                let want: Vec<F> = xs.iter().map(|&x| {
                    let fract = if x.is_nan() || x == 0.0 { x } else if x.is_infinite() { (0.0 as F).copysign(x) } else { (x - x.floor()).min(below_one) };
                    x.round_ties_even() + fract * 0.25
                }).collect();
                expect_same(concat!(stringify!($t), " rint + fract / 4"), &got, &want)
            }

            pub(super) fn pow_root(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let mut r = Rng::new(31);
                let mut xs: Vec<F> = vec![0.0, -0.0, 1.0, F::INFINITY, 2.0, -8.0, -27.0, F::NAN, 0.5, -0.0, 16.0, 1e-3];
                let mut ns: Vec<i32> = vec![0, -3, 7, 2, -2, 3, 3, 2, 0, -4, 4, 5];
                let mut ys: Vec<F> = vec![0.0, 1.0, F::INFINITY, 0.0, 0.5, 2.0, 3.0, 1.0, -1.0, 0.0, 0.25, 2.0];
                while xs.len() < 400 {
                    let x = r.f64_in(-50.0, 50.0);
                    xs.push(x as F);
                    ns.push(r.int(-12, 12) as i32);
                    ys.push(r.f64_in(-8.0, 8.0) as F);
                }
                let got = map2(q, concat!("pown_", stringify!($t)), &xs, &ns, |x: Expr<F>, n: Expr<i32>| x.pown(n))?;
                let want: Vec<F> = xs.iter().zip(&ns).map(|(&x, &n)| libm::pow(x as f64, n as f64) as F).collect();
                expect_close(concat!(stringify!($t), " pown"), &got, &want, ulps(MathFn::Pown), 0.0)?;
                let got = map2(q, concat!("rootn_", stringify!($t)), &xs, &ns, |x: Expr<F>, n: Expr<i32>| x.rootn(n))?;
                let want: Vec<F> = xs.iter().zip(&ns).map(|(&x, &n)| <f64 as strata::ir::eval::Float>::math_int(MathFn::Rootn, x as f64, n) as F).collect();
                expect_close(concat!(stringify!($t), " rootn"), &got, &want, ulps(MathFn::Rootn), 0.0)?;
                // Large magnitudes, where pow(x, 1/n) alone would be hundreds of ulp off.
                let big: Vec<F> = (0..200).map(|_| (10f64.powf(r.f64_in(-30.0, 30.0))) as F).collect();
                let bn: Vec<i32> = (0..200).map(|_| r.int(2, 9) as i32).collect();
                let got = map2(q, concat!("rootn_big_", stringify!($t)), &big, &bn, |x: Expr<F>, n: Expr<i32>| x.rootn(n))?;
                let want: Vec<F> = big.iter().zip(&bn).map(|(&x, &n)| <f64 as strata::ir::eval::Float>::math_int(MathFn::Rootn, x as f64, n) as F).collect();
                expect_close(concat!(stringify!($t), " rootn of large and small values"), &got, &want, ulps(MathFn::Rootn), 0.0)?;
                let pos: Vec<F> = xs.iter().map(|x| x.abs()).collect();
                let got = map2(q, concat!("powr_", stringify!($t)), &pos, &ys, |x: Expr<F>, y: Expr<F>| x.powr(y))?;
                let want: Vec<F> = pos.iter().zip(&ys).map(|(&x, &y)| ref2(MathFn::Powr, x as f64, y as f64) as F).collect();
                expect_close(concat!(stringify!($t), " powr"), &got, &want, ulps(MathFn::Powr), 0.0)?;
                let got = map2(q, concat!("powr_neg_", stringify!($t)), &xs, &ys, |x: Expr<F>, y: Expr<F>| x.powr(y))?;
                let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| ref2(MathFn::Powr, x as f64, y as f64) as F).collect();
                expect_close(concat!(stringify!($t), " powr of negative bases (NaN)"), &got, &want, ulps(MathFn::Powr), 0.0)
            }

            /// `mad`, `step`, `smoothstep`, the relational tests, `bitselect`, and the vector
            /// `select_each`/`any`/`all`.
            pub(super) fn common(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let xs: Vec<F> = inputs::<F>(41, 200, true);
                let ys: Vec<F> = inputs::<F>(42, 200, false);
                let got = map2(q, concat!("common_", stringify!($t)), &xs, &ys, |x: Expr<F>, y: Expr<F>| {
                    let flags = x.is_normal().cast::<F>() + x.is_ordered(y).cast::<F>() * lit(2.0 as F) + x.is_unordered(y).cast::<F>() * lit(4.0 as F);
                    x.step(y) + flags * lit(8.0 as F) + y.smoothstep(lit(-10.0 as F), lit(30.0 as F)) * lit(64.0 as F) + x.bitselect(y, lit(F::from_bits(0x5555_5555_5555_5555u64 as _)))
                })?;
                let mask: F = F::from_bits(0x5555_5555_5555_5555u64 as _);
                let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| {
                    let flags = (x.is_normal() as u8 as F) + ((!x.is_nan() && !y.is_nan()) as u8 as F) * 2.0 + ((x.is_nan() || y.is_nan()) as u8 as F) * 4.0;
                    let step = if x < y { 0.0 } else { 1.0 };
                    let t = ((y - -10.0) / (30.0 - -10.0)).max(0.0).min(1.0);
                    let bits = (x.to_bits() & !mask.to_bits()) | (y.to_bits() & mask.to_bits());
                    step + flags * 8.0 + t * t * (3.0 - 2.0 * t) * 64.0 + F::from_bits(bits)
                }).collect();
                expect_same(concat!(stringify!($t), " step + flags + smoothstep + bitselect"), &got, &want)?;
                let got = map2(q, concat!("vector_select_", stringify!($t)), &xs, &ys, |x: Expr<F>, y: Expr<F>| {
                    let v: Expr<[F; 4]> = vec4(x, y, x + y, lit(1.0 as F));
                    let w: Expr<[F; 4]> = vec4(y, x, lit(0.0 as F), x);
                    let m: Expr<[bool; 4]> = v.lt(w);
                    let s: Expr<[F; 4]> = select_each(m, v, w);
                    s.x() + s.y() * lit(2.0 as F) + s.z() * lit(4.0 as F) + s.w() + m.any().cast::<F>() * lit(1000.0 as F) + m.all().cast::<F>() * lit(3000.0 as F)
                })?;
                let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| {
                    let v = [x, y, x + y, 1.0];
                    let w = [y, x, 0.0, x];
                    let m: Vec<bool> = (0..4).map(|i| v[i] < w[i]).collect();
                    let s: Vec<F> = (0..4).map(|i| if m[i] { v[i] } else { w[i] }).collect();
                    s[0] + s[1] * 2.0 + s[2] * 4.0 + s[3] + (m.iter().any(|&b| b) as u8 as F) * 1000.0 + (m.iter().all(|&b| b) as u8 as F) * 3000.0
                }).collect();
                expect_same(concat!(stringify!($t), " select_each, any, all"), &got, &want)
            }
        }
        )*

        /// The float cases.
        pub(super) fn cases() -> Vec<Case> {
            vec![
                $(
                    case(concat!("math/", stringify!($t), "_special"), $t::special),
                    case(concat!("math/", stringify!($t), "_pi_trig"), $t::pi_trig),
                    case(concat!("math/", stringify!($t), "_exponent"), $t::exponent),
                    case(concat!("math/", stringify!($t), "_pow_root"), $t::pow_root),
                    case(concat!("math/", stringify!($t), "_common"), $t::common),
                )*
                case("math/int_extras", ints::extras),
            ]
        }
    };
}

float_builtins! {
    f32;
    f64;
}

mod ints {
    use super::super::{expect_eq, inputs, map2, map3};
    use strata::prelude::*;

    /// `mad_sat` on every integer type against the exact product in `i128`.
    fn mad_sat<T>(q: &Queue, seed: u64) -> Result<(), String>
    where
        T: strata::builder::Integer + strata::builder::Value + super::super::Gen,
        T: Into<i128> + TryFrom<i128> + std::fmt::Debug + PartialEq,
        T: num_bounds::Bounds,
    {
        let xs: Vec<T> = inputs(seed, 300, true);
        let ys: Vec<T> = inputs(seed + 1, 300, true).into_iter().rev().collect();
        let zs: Vec<T> = inputs(seed + 2, 300, false);
        let got = map3(
            q,
            &format!("mad_sat_{}", std::any::type_name::<T>()),
            &xs,
            &ys,
            &zs,
            |x: Expr<T>, y: Expr<T>, z: Expr<T>| x.mad_sat(y, z),
        )?;
        let want: Vec<T> = (0..xs.len())
            .map(|i| {
                let (x, y): (i128, i128) = (xs[i].into(), ys[i].into());
                // Only u64 products leave i128, and they are positive.
                let r = x
                    .checked_mul(y)
                    .map_or(T::MAX_I128, |p| p + zs[i].into())
                    .clamp(T::MIN_I128, T::MAX_I128);
                T::try_from(r).ok().expect("clamped to the range")
            })
            .collect();
        expect_eq(
            &format!("mad_sat on {}", std::any::type_name::<T>()),
            &got,
            &want,
        )
    }

    /// The type range as `i128` (`u64::MAX` fits).
    mod num_bounds {
        pub trait Bounds {
            const MIN_I128: i128;
            const MAX_I128: i128;
        }
        macro_rules! bounds {
            ($($t:ty),*) => {$(
                impl Bounds for $t {
                    const MIN_I128: i128 = <$t>::MIN as i128;
                    const MAX_I128: i128 = <$t>::MAX as i128;
                }
            )*};
        }
        bounds!(i8, i16, i32, i64, u8, u16, u32, u64);
    }

    pub(super) fn extras(q: &Queue) -> Result<(), String> {
        mad_sat::<i8>(q, 1)?;
        mad_sat::<u8>(q, 4)?;
        mad_sat::<i16>(q, 7)?;
        mad_sat::<u16>(q, 10)?;
        mad_sat::<i32>(q, 13)?;
        mad_sat::<u32>(q, 16)?;
        mad_sat::<i64>(q, 19)?;
        mad_sat::<u64>(q, 22)?;
        let a: Vec<i32> = inputs(31, 300, true);
        let b: Vec<i32> = inputs(32, 300, true).into_iter().rev().collect();
        let c: Vec<i32> = inputs(33, 300, false);
        let got = map3(
            q,
            "int_extras_i32",
            &a,
            &b,
            &c,
            |x: Expr<i32>, y: Expr<i32>, z: Expr<i32>| {
                x.mul24(y)
                    ^ x.mad24(y, z).rotate_right(z)
                    ^ x.mad_hi(y, z)
                    ^ x.abs_diff(y).cast::<i32>()
            },
        )?;
        let low24 = |v: i32| (v << 8) >> 8;
        let want: Vec<i32> = (0..a.len())
            .map(|i| {
                let (x, y, z) = (a[i], b[i], c[i]);
                let mul24 = low24(x).wrapping_mul(low24(y));
                let mad24 = mul24.wrapping_add(z);
                let rot = mad24.rotate_right((z as u32) % 32);
                let mad_hi = ((x as i64 * y as i64) >> 32) as i32;
                mul24 ^ rot ^ mad_hi.wrapping_add(z) ^ x.abs_diff(y) as i32
            })
            .collect();
        expect_eq(
            "i32 mul24 ^ mad24.rotate_right ^ mad_hi ^ abs_diff",
            &got,
            &want,
        )?;
        let ua: Vec<u32> = inputs(34, 300, true);
        let ub: Vec<u32> = inputs(35, 300, false);
        let got = map2(
            q,
            "int_extras_u32",
            &ua,
            &ub,
            |x: Expr<u32>, y: Expr<u32>| x.mul24(y) ^ x.abs_diff(y) ^ x.rotate_right(y),
        )?;
        let want: Vec<u32> = ua
            .iter()
            .zip(&ub)
            .map(|(&x, &y)| {
                (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff) ^ x.abs_diff(y) ^ x.rotate_right(y % 32)
            })
            .collect();
        expect_eq("u32 mul24 ^ abs_diff ^ rotate_right", &got, &want)?;
        let ha: Vec<i16> = inputs(36, 300, true);
        let lo: Vec<u16> = inputs(37, 300, true);
        let got = map2(q, "upsample_i16", &ha, &lo, |h: Expr<i16>, l: Expr<u16>| {
            h.upsample(l)
        })?;
        let want: Vec<i32> = ha
            .iter()
            .zip(&lo)
            .map(|(&h, &l)| ((h as i32) << 16) | l as i32)
            .collect();
        expect_eq("upsample(i16, u16)", &got, &want)?;
        let ha: Vec<u32> = inputs(38, 300, true);
        let got = map2(q, "upsample_u32", &ha, &ua, |h: Expr<u32>, l: Expr<u32>| {
            h.upsample(l)
        })?;
        let want: Vec<u64> = ha
            .iter()
            .zip(&ua)
            .map(|(&h, &l)| ((h as u64) << 32) | l as u64)
            .collect();
        expect_eq("upsample(u32, u32)", &got, &want)?;
        let sa: Vec<i8> = inputs(39, 300, true);
        let sb: Vec<i8> = inputs(40, 300, false);
        let got = map2(q, "abs_diff_i8", &sa, &sb, |x: Expr<i8>, y: Expr<i8>| {
            x.abs_diff(y)
        })?;
        let want: Vec<u8> = sa.iter().zip(&sb).map(|(&x, &y)| x.abs_diff(y)).collect();
        expect_eq("abs_diff on i8", &got, &want)?;
        let la: Vec<i64> = inputs(41, 300, true);
        let lb: Vec<i64> = inputs(42, 300, true).into_iter().rev().collect();
        let got = map2(q, "abs_diff_i64", &la, &lb, |x: Expr<i64>, y: Expr<i64>| {
            x.abs_diff(y) ^ x.bitselect(y, lit(0x0f0f_0f0f_0f0f_0f0fi64)).cast::<u64>()
        })?;
        let want: Vec<u64> = la
            .iter()
            .zip(&lb)
            .map(|(&x, &y)| {
                x.abs_diff(y) ^ ((x & !0x0f0f_0f0f_0f0f_0f0f) | (y & 0x0f0f_0f0f_0f0f_0f0f)) as u64
            })
            .collect();
        expect_eq("abs_diff ^ bitselect on i64", &got, &want)
    }
}

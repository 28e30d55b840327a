//! Float arithmetic with zero operands that a driver's compiler sees as constants, and fences
//! in loops whose trip counts differ between work-items: IEEE results where shortcuts give
//! others. Found by the differential test on lavapipe (2026-11-27): its code generator built
//! `x * 0.0` and `0.0 / x` as 0 (even for infinite or NaN `x`), `x / 0.0` as 0, `x - x` as 0
//! for NaN and infinite `x`, `x + 0.0` and `x - -0.0` as `x` (so `-0 + 0` was -0), whether
//! the zero is a literal or a private variable holding one; a fence in such a loop lost the
//! later stores of other work-items; `log` of a subnormal `f32` was that of the smallest
//! normal; `f32` `sin`/`cos`/`tan` of huge arguments were 1 or -1; `f64` `expm1` past its
//! overflow threshold was NaN; `f64` `asinh` in a kernel with a barrier was 2^-1021; `atan2`
//! of a positive `y` and a zero `x` was NaN; `fma(0.0, inf, y)` was `y`; the
//! sign of a sign-extended `i32` in `i64` `add_sat` was lost; `pow(-inf, 0.5)` was NaN.

use super::{case, expect_close, expect_eq, expect_same, has_f64, Case};
use strata::prelude::*;

macro_rules! zero_suite {
    ($($t:ident, $name:literal;)*) => {
        $(
        fn $t(q: &Queue) -> Result<(), String> {
            type F = $t;
            if std::mem::size_of::<F>() == 8 && !has_f64(q) {
                return Ok(());
            }
            let xs: Vec<F> = vec![
                F::INFINITY,
                F::NEG_INFINITY,
                F::NAN,
                -0.0,
                0.0,
                1.0,
                -1.5,
                F::MAX,
                F::MIN_POSITIVE,
            ];
            const NAMES: [&str; 15] = [
                "x*0", "0*x", "x/0", "0/x", "x+0", "0+x", "x-(-0)", "0-x", "x-x", "x*z", "z/x",
                "x/z", "x*-z", "x+z", "mix(x,x,0)",
            ];
            let got = super::run3(q, concat!("zero_operands_", stringify!($t)), &xs, &xs, &xs, |x, _, _| {
                let z = var::<F>(0.0 as F);
                let z = z.get();
                [
                    x * lit(0.0 as F),
                    lit(0.0 as F) * x,
                    x / lit(0.0 as F),
                    lit(0.0 as F) / x,
                    x + lit(0.0 as F),
                    lit(0.0 as F) + x,
                    x - lit(-0.0 as F),
                    lit(0.0 as F) - x,
                    x - x,
                    x * z,
                    z / x,
                    x / z,
                    x * -z,
                    x + z,
                    x.mix(x, lit(0.0 as F)),
                ]
            })?;
            let z: F = 0.0;
            for (i, &x) in xs.iter().enumerate() {
                let want: [F; 15] = [
                    x * 0.0,
                    0.0 * x,
                    x / 0.0,
                    0.0 / x,
                    x + 0.0,
                    0.0 + x,
                    x - (-0.0),
                    0.0 - x,
                    x - x,
                    x * z,
                    z / x,
                    x / z,
                    x * -z,
                    x + z,
                    x + (x - x) * 0.0,
                ];
                for (j, w) in want.iter().enumerate() {
                    expect_same(
                        &format!("{} {} of {x:?}", $name, NAMES[j]),
                        &got[i * 15 + j..i * 15 + j + 1],
                        std::slice::from_ref(w),
                    )?;
                }
            }
            Ok(())
        }
        )*
    };
}

zero_suite! {
    f32, "f32";
    f64, "f64";
}

/// A fence in a loop whose trip count differs between work-items, then stores after the loop:
/// every work-item's stores land.
fn fence_in_divergent_loop(q: &Queue) -> Result<(), String> {
    let n = 64usize;
    let k = Kernel::build("fence_in_divergent_loop", |k| {
        let trips = k.read::<u32>("trips");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let c = var::<u32>(0u32);
        let t = trips.at(i);
        loop_(|| {
            if_(c.get().ge(t), break_);
            c.set(c.get() + 1u32);
            fence(MemOrder::SeqCst, MemScope::Device);
        });
        out.set(i, c.get() + 100u32);
    })
    .map_err(super::e)?;
    let trips: Vec<u32> = (0..n as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) & 7)
        .collect();
    let tb = Buffer::from_slice(q, &trips).map_err(super::e)?;
    let ob = Buffer::<u32>::new(q.device(), n).map_err(super::e)?;
    k.launch(q, NdRange::new(n).local(32), args![&tb, &ob])
        .map_err(super::e)?;
    let got = q.read(&ob).map_err(super::e)?;
    let want: Vec<u32> = trips.iter().map(|t| t + 100).collect();
    expect_eq("stores after a fence in a divergent loop", &got, &want)
}

/// `log` and `log2` of subnormal `f32` arguments (lavapipe read them as the smallest normal).
fn log_subnormal(q: &Queue) -> Result<(), String> {
    let xs: Vec<f32> = vec![
        1e-45,
        1e-40,
        5.3e-39,
        1.0e-39,
        f32::MIN_POSITIVE,
        2e-38,
        1.0,
    ];
    let got = super::run3(q, "log_subnormal", &xs, &xs, &xs, |x, _, _| {
        [x.log(), x.log2()]
    })?;
    let want: Vec<f32> = xs.iter().flat_map(|x| [x.ln(), x.log2()]).collect();
    expect_close("log/log2 of subnormals", &got, &want, 4, 0.0)
}

/// `f32` `sin`, `cos` and `tan` of huge arguments (lavapipe's were 1 or -1 from |x| of about
/// 1e10 on: no full argument reduction), against `f64`'s rounded once.
fn trig_huge(q: &Queue) -> Result<(), String> {
    // A sweep of magnitudes from 2^-8 to 2^127 (both signs), then chosen values.
    let mut xs: Vec<f32> = (0..540u32)
        .map(|i| {
            let m = 1.0 + ((i.wrapping_mul(2_654_435_761) >> 9) as f32) / 8_388_608.0;
            let v = m * 2f32.powi((i / 4) as i32 - 8);
            if i % 2 == 1 {
                -v
            } else {
                v
            }
        })
        .collect();
    xs.extend([
        -3.4e38,
        f32::MAX,
        1e10,
        -3.1e12,
        1.234_5e20,
        7e30,
        123_456.79,
        1e6,
        100.0,
        0.5,
        -1e-30,
        -0.0,
    ]);
    let got = super::run3(q, "trig_huge", &xs, &xs, &xs, |x, _, _| {
        [x.sin(), x.cos(), x.tan()]
    })?;
    let mut want = Vec::new();
    for &x in &xs {
        let d = x as f64;
        want.extend([d.sin() as f32, d.cos() as f32, d.tan() as f32]);
    }
    let (mut sc_got, mut sc_want, mut t_got, mut t_want) = (vec![], vec![], vec![], vec![]);
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        if i % 3 == 2 {
            t_got.push(g);
            t_want.push(w);
        } else {
            sc_got.push(g);
            sc_want.push(w);
        }
    }
    expect_close("sin/cos of huge f32", &sc_got, &sc_want, 4, 0.0)?;
    expect_close("tan of huge f32", &t_got, &t_want, 5, 0.0)?;
    // The sign of a zero's sine and tangent.
    let last = got.len() - 3;
    expect_same(
        "sin/tan of -0",
        &[got[last], got[last + 2]],
        &[-0.0f32, -0.0],
    )
}

/// `f64` `expm1` past its overflow threshold (lavapipe's was NaN: the SPIR-V writer's
/// TwoSum of `inf` and `-1`).
fn expm1_overflow(q: &Queue) -> Result<(), String> {
    if !has_f64(q) {
        return Ok(());
    }
    let xs: Vec<f64> = vec![
        709.0,
        709.78,
        709.8,
        710.0,
        800.0,
        1e300,
        f64::MAX,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -800.0,
        1.0,
        -0.0,
    ];
    let got = super::run3(q, "expm1_overflow", &xs, &xs, &xs, |x, _, _| [x.expm1()])?;
    let want: Vec<f64> = xs.iter().map(|x| x.exp_m1()).collect();
    expect_close("expm1 near and past overflow", &got, &want, 3, 0.0)
}

/// `f64` `asinh` in a kernel with a barrier and an `fmod` (difftest program 895 of seed
/// 0x5EED2024, minimised): lavapipe's result was 2^-1021 for every argument, its code generator
/// having mangled the bit operations of `copysign` on the computed magnitude.
fn asinh_after_barrier(q: &Queue) -> Result<(), String> {
    if !has_f64(q) {
        return Ok(());
    }
    let xs: Vec<f64> = (0..61).map(|i| i as f64 * 0.25 - 3.0).collect();
    let k = Kernel::build("asinh_after_barrier", |k| {
        let x = k.read::<f64>("x");
        let kf = k.scalar::<f64>("k");
        let out = k.write::<f64>("out");
        barrier();
        let g = global_id(0);
        let v = x.at((g * 11u32 + 38u32) % 61u32);
        let p = var::<f64>(select(
            kf.ge(local_id(0).cast::<f64>()),
            group_id(0).cast::<f64>(),
            v,
        ));
        p.set(p.get() + kf % v);
        out.set(g, p.get());
        out.set(g + 64u32, v.asinh());
    })
    .map_err(super::e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(super::e)?;
    let ob = Buffer::<f64>::new(q.device(), 128).map_err(super::e)?;
    k.launch(q, NdRange::new(64).local(32), args![&xb, -1.0f64, &ob])
        .map_err(super::e)?;
    let got = q.read(&ob).map_err(super::e)?;
    let want: Vec<f64> = (0..64).map(|g| xs[(g * 11 + 38) % 61].asinh()).collect();
    expect_close(
        "asinh after a barrier and an fmod",
        &got[64..],
        &want,
        4,
        0.0,
    )
}

/// `atan2` and `atan2pi` with a zero `x` (difftest program 1195 of seed 0x5EED2026 on
/// lavapipe: `atan2pi(y, fract(inf))` was NaN for `y > 0`, the SPIR-V writer's `y / x`
/// being folded with the constant zero divisor): `±pi/2` with `y`'s sign, `±0` or `±pi` for a
/// zero `y`.
macro_rules! atan2_zero_x {
    ($($t:ident, $f:ident;)*) => {
        $(
        fn $f(q: &Queue) -> Result<(), String> {
            type F = $t;
            if std::mem::size_of::<F>() == 8 && !has_f64(q) {
                return Ok(());
            }
            let ys: Vec<F> = vec![1.5, -2.0, F::MIN_POSITIVE, F::MAX, F::INFINITY, -0.0, 0.0, 1e-30];
            let got = super::run3(q, concat!("atan2_zero_x_", stringify!($t)), &ys, &ys, &ys, |y, _, _| {
                [
                    y.atan2(lit(0.0 as F)),
                    y.atan2(lit(-0.0 as F)),
                    y.atan2pi(lit(0.0 as F)),
                    y.atan2pi(lit(-0.0 as F)),
                ]
            })?;
            let pi = std::f64::consts::PI as F;
            let want: Vec<F> = ys
                .iter()
                .flat_map(|&y| {
                    [y.atan2(0.0), y.atan2(-0.0), y.atan2(0.0) / pi, y.atan2(-0.0) / pi]
                })
                .collect();
            expect_close(concat!(stringify!($t), " atan2 and atan2pi of y and ±0"), &got, &want, 2, 0.0)
        }
        )*
    };
}

atan2_zero_x! {
    f32, atan2_zero_x_f32;
    f64, atan2_zero_x_f64;
}

/// `fma` with a constant zero factor (difftest program 3882 of seed 0x5EED2026 on lavapipe:
/// `fma(0.0, inf, y)` gave `y`, the product inside the writer's `fma` folded to 0): NaN for
/// an infinite or NaN other factor.
macro_rules! fma_zero_factor {
    ($($t:ident, $f:ident;)*) => {
        $(
        fn $f(q: &Queue) -> Result<(), String> {
            type F = $t;
            if std::mem::size_of::<F>() == 8 && !has_f64(q) {
                return Ok(());
            }
            let xs: Vec<F> = vec![F::INFINITY, F::NEG_INFINITY, F::NAN, 1.0, -0.0, F::MAX, -2.5];
            let got = super::run3(q, concat!("fma_zero_factor_", stringify!($t)), &xs, &xs, &xs, |x, _, _| {
                [
                    lit(0.0 as F).fma(x, lit(1.5 as F)),
                    x.fma(lit(0.0 as F), lit(-1.0 as F)),
                    lit(-0.0 as F).fma(x, x),
                ]
            })?;
            let want: Vec<F> = xs
                .iter()
                .flat_map(|&x| [(0.0 as F).mul_add(x, 1.5), x.mul_add(0.0, -1.0), (-0.0 as F).mul_add(x, x)])
                .collect();
            expect_same(concat!(stringify!($t), " fma with a zero factor"), &got, &want)
        }
        )*
    };
}

fma_zero_factor! {
    f32, fma_zero_factor_f32;
    f64, fma_zero_factor_f64;
}

/// `i64` `add_sat` and `sub_sat` of sign-extended `i32` values (difftest program 4059 of seed
/// 0x5EED2026 on lavapipe: the writer's sign test `y < 0` of a sign-extended negative `i32`
/// was false there, so `add_sat(0, -1)` saturated to `i64::MAX`).
#[allow(clippy::eq_op)] // `x | x`: the difftest program's own expression, kept as found.
fn i64_sat_sign_extended(q: &Queue) -> Result<(), String> {
    let xs: Vec<i64> = vec![
        i64::MIN,
        i64::MAX,
        -1,
        0,
        1,
        i64::MIN + 5,
        i64::MAX - 7,
        -25,
    ];
    let ys: Vec<i64> = vec![i32::MIN as i64, i32::MAX as i64, -1, 0, 1, -25, 7, 100];
    let got = super::run3(q, "i64_sat_sign_extended", &xs, &ys, &xs, |x, y, _| {
        let y = y.cast::<i32>().cast::<i64>();
        [x.add_sat(y), x.sub_sat(y), (x | x).add_sat(y) + x]
    })?;
    let want: Vec<i64> = xs
        .iter()
        .zip(&ys)
        .flat_map(|(&x, &y)| {
            [
                x.saturating_add(y),
                x.saturating_sub(y),
                x.saturating_add(y).wrapping_add(x),
            ]
        })
        .collect();
    expect_eq("i64 add_sat and sub_sat of sign-extended i32", &got, &want)
}

/// `pow` of an infinite or zero base and every kind of exponent (difftest program 4409 of
/// seed 0x5EED2026: the SPIR-V writer's `pow(-inf, y)` was NaN for a non-integer `y`, its
/// "negative base, non-integer exponent" rule taking -inf for a finite base; C gives +0 for
/// `y < 0` and +inf for `y > 0`).
macro_rules! pow_inf_base {
    ($($t:ident, $f:ident;)*) => {
        $(
        fn $f(q: &Queue) -> Result<(), String> {
            type F = $t;
            if std::mem::size_of::<F>() == 8 && !has_f64(q) {
                return Ok(());
            }
            let bases: [F; 5] = [F::NEG_INFINITY, F::INFINITY, -0.0, 0.0, -2.0];
            let exps: [F; 10] = [-15.75, -16.0, -15.0, 0.5, -0.5, 3.0, 2.0, -2.5, F::INFINITY, F::NEG_INFINITY];
            let (xs, ys): (Vec<F>, Vec<F>) = bases
                .iter()
                .flat_map(|&x| exps.iter().map(move |&y| (x, y)))
                .unzip();
            let got = super::run3(q, concat!("pow_inf_base_", stringify!($t)), &xs, &ys, &xs, |x, y, _| [x.pow(y)])?;
            let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| x.powf(y)).collect();
            expect_same(concat!(stringify!($t), " pow of infinite and zero bases"), &got, &want)
        }
        )*
    };
}

pow_inf_base! {
    f32, pow_inf_base_f32;
    f64, pow_inf_base_f64;
}

/// `f64` `rootn` of subnormal, smallest-normal and huge arguments (difftest program 5662 of
/// seed 0x5EED2026 on lavapipe: `rootn(2^-1022, -5)` was 47 ulp off, the Newton step skipped
/// where `y^(n-1)` underflowed; the interpreter itself was 40-120 ulp off for subnormal and
/// huge `|x|`, and `n = i32::MIN` was 2e8 ulp off in SPIR-V). The expected values are
/// `exp(ln(x) / n)` computed with 60 decimal digits (Python's `decimal`, from the exact
/// `f64` arguments), rounded to `f64`.
fn rootn_extremes(q: &Queue) -> Result<(), String> {
    if !has_f64(q) {
        return Ok(());
    }
    let table: [(f64, i32, f64); 56] = [
        (f64::MIN_POSITIVE, -5, 3.3925879384346574e+61),
        (f64::MIN_POSITIVE, 3, 2.812644285236262e-103),
        (f64::MIN_POSITIVE, -3, 3.5553731598732904e+102),
        (f64::MIN_POSITIVE, 5, 2.9476022969692e-62),
        (f64::MIN_POSITIVE, 7, 1.1210387714598537e-44),
        (f64::MIN_POSITIVE, -64, 64131.69866097951),
        (f64::MIN_POSITIVE, 63, 1.3080505109452405e-05),
        (f64::MIN_POSITIVE, i32::MIN, 1.0000003298728426),
        (1e-308, -5, 3.9810717055349727e+61),
        (1e-308, 3, 2.1544346900318836e-103),
        (1e-308, -3, 4.641588833612779e+102),
        (1e-308, 5, 2.5118864315095802e-62),
        (1e-308, 7, 1e-44),
        (1e-308, -64, 64938.16315762113),
        (1e-308, 63, 1.2915496650148839e-05),
        (1e-308, i32::MIN, 1.000000330245274),
        (5e-324, -5, 4.583983741703409e+64),
        (5e-324, 3, 1.7031839360032603e-108),
        (5e-324, -3, 5.871356456934583e+107),
        (5e-324, 5, 2.181508609863437e-65),
        (5e-324, 7, 6.507254735509544e-47),
        (5e-324, -64, 112631.43432175471),
        (5e-324, 63, 7.381681659880765e-06),
        (5e-324, i32::MIN, 1.0000003466569822),
        (f64::MAX, -5, 2.2338648165001596e-62),
        (f64::MAX, 3, 5.643803094122362e+102),
        (f64::MAX, -3, 1.7718548704178432e-103),
        (f64::MAX, 5, 4.476546622757235e+61),
        (f64::MAX, 7, 1.087396515837749e+44),
        (f64::MAX, -64, 1.52587890625e-05),
        (f64::MAX, 63, 78150.54176107043),
        (f64::MAX, i32::MIN, 0.9999996694817228),
        (2.5e-310, -5, 8.32553207401872e+61),
        (2.5e-310, 3, 6.29960524947438e-104),
        (2.5e-310, -3, 1.587401051968196e+103),
        (2.5e-310, 5, 1.2011244339814328e-62),
        (2.5e-310, 7, 5.903836027749971e-45),
        (2.5e-310, -64, 68791.0894347777),
        (2.5e-310, 63, 1.21809619741186e-05),
        (2.5e-310, i32::MIN, 1.0000003319630428),
        (7.0, -5, 0.677610913400481),
        (7.0, 3, 1.9129311827723892),
        (7.0, -3, 0.5227579585747102),
        (7.0, 5, 1.475773161594552),
        (7.0, 7, 1.3204692477561237),
        (7.0, -64, 0.9700527319968274),
        (7.0, 63, 1.0313694298072769),
        (7.0, i32::MIN, 0.9999999990938649),
        (3e-300, -5, 8.027415617602306e+59),
        (3e-300, 3, 1.4422495703074084e-100),
        (3e-300, -3, 6.933612743506347e+99),
        (3e-300, 5, 1.2457309396155173e-60),
        (3e-300, 7, 1.6256135930564984e-43),
        (3e-300, -64, 47867.96671766607),
        (3e-300, 63, 1.760632001313152e-05),
        (3e-300, i32::MIN, 1.0000003211558919),
    ];
    let xs: Vec<f64> = table.iter().map(|t| t.0).collect();
    let ns: Vec<f64> = table.iter().map(|t| f64::from(t.1)).collect();
    let got = super::run3(q, "rootn_extremes", &xs, &ns, &xs, |x, n, _| {
        [x.rootn(n.cast::<i32>())]
    })?;
    let want: Vec<f64> = table.iter().map(|t| t.2).collect();
    expect_close("f64 rootn of extreme arguments", &got, &want, 2, 0.0)
}

/// `fmod` of a literal zero dividend keeps its sign (difftest program 2850 of seed
/// 0x5EED2027 on lavapipe: `-0.0 % 1.5` was +0 there, the negation of the writer's loop
/// result lost when the dividend was a constant).
macro_rules! fmod_zero_dividend {
    ($($t:ident, $f:ident;)*) => {
        $(
        fn $f(q: &Queue) -> Result<(), String> {
            type F = $t;
            if std::mem::size_of::<F>() == 8 && !has_f64(q) {
                return Ok(());
            }
            let ys: Vec<F> = vec![1.5, -2.0, F::INFINITY, F::MAX, F::MIN_POSITIVE, F::NAN, 0.0];
            let got = super::run3(q, concat!("fmod_zero_dividend_", stringify!($t)), &ys, &ys, &ys, |y, _, _| {
                [lit(-0.0 as F) % y, lit(0.0 as F) % y]
            })?;
            let want: Vec<F> = ys.iter().flat_map(|&y| [(-0.0 as F) % y, (0.0 as F) % y]).collect();
            expect_same(concat!(stringify!($t), " fmod of a literal ±0"), &got, &want)
        }
        )*
    };
}

fmod_zero_dividend! {
    f32, fmod_zero_dividend_f32;
    f64, fmod_zero_dividend_f64;
}

/// `pown` of a NaN the compiler can prove (difftest program 2312 of seed 16 on PoCL 3.1:
/// `pown(-9.8e13 - 0.5 % NaN, n)` was -1.0; its built-in is compiled for finite bases, so a
/// known NaN is poison, as for the other built-ins the OpenCL dialect's `nan_guarded` lists).
/// NaN to the power 0 is 1, to any other power NaN.
macro_rules! pown_nan_base {
    ($($t:ident, $f:ident;)*) => {
        $(
        fn $f(q: &Queue) -> Result<(), String> {
            type F = $t;
            if std::mem::size_of::<F>() == 8 && !has_f64(q) {
                return Ok(());
            }
            let ns: Vec<F> = vec![0.0, 1.0, -1.0, 2.0, -2.0, 3.0, 63.0, -64.0];
            let got = super::run3(q, concat!("pown_nan_base_", stringify!($t)), &ns, &ns, &ns, |n, _, _| {
                let n = n.cast::<i32>();
                [
                    lit(F::NAN).pown(n),
                    (lit(-9.8e13 as F) - lit(0.5 as F) % lit(F::NAN)).pown(n),
                ]
            })?;
            let want: Vec<F> = ns
                .iter()
                .flat_map(|&n| {
                    let p = F::NAN.powf(n);
                    [p, p]
                })
                .collect();
            expect_same(concat!(stringify!($t), " pown of a known NaN"), &got, &want)
        }
        )*
    };
}

pown_nan_base! {
    f32, pown_nan_base_f32;
    f64, pown_nan_base_f64;
}

/// `f64` `fma` with an infinite addend and finite factors whose product overflows (difftest
/// program 7300 of seed 0x5EED2027: `fma(1e300, 1e300, -inf)` was NaN in the SPIR-V writer,
/// whose fallback computed `a * b + c`; the exact product is finite, so the result is `c`).
fn fma_inf_addend(q: &Queue) -> Result<(), String> {
    if !has_f64(q) {
        return Ok(());
    }
    let a: Vec<f64> = vec![
        1e300,
        f64::MAX,
        3.0,
        f64::INFINITY,
        f64::NAN,
        -1e200,
        1e300,
        0.0,
    ];
    let b: Vec<f64> = vec![1e300, 2.0, 3.0, 2.0, 1.0, 1e200, -1e300, f64::INFINITY];
    let c: Vec<f64> = vec![
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::INFINITY,
        f64::INFINITY,
        f64::INFINITY,
    ];
    let got = super::run3(q, "fma_inf_addend", &a, &b, &c, |a, b, c| [a.fma(b, c)])?;
    let want: Vec<f64> = (0..a.len()).map(|i| a[i].mul_add(b[i], c[i])).collect();
    expect_same("f64 fma with an infinite addend", &got, &want)
}

/// The cases.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("float/zero_operands_f32", f32),
        case("float/zero_operands_f64", f64),
        case(
            "atomic_order/fence_in_divergent_loop",
            fence_in_divergent_loop,
        ),
        case("math/f32_log_subnormal", log_subnormal),
        case("math/f32_trig_huge", trig_huge),
        case("math/f64_expm1_overflow", expm1_overflow),
        case("math/f64_asinh_after_barrier", asinh_after_barrier),
        case("math/f32_atan2_zero_x", atan2_zero_x_f32),
        case("math/f64_atan2_zero_x", atan2_zero_x_f64),
        case("math/f32_fma_zero_factor", fma_zero_factor_f32),
        case("math/f64_fma_zero_factor", fma_zero_factor_f64),
        case("int/i64_sat_sign_extended", i64_sat_sign_extended),
        case("math/f32_pow_inf_base", pow_inf_base_f32),
        case("math/f64_pow_inf_base", pow_inf_base_f64),
        case("math/f64_rootn_extremes", rootn_extremes),
        case("float/f32_fmod_zero_dividend", fmod_zero_dividend_f32),
        case("float/f64_fmod_zero_dividend", fmod_zero_dividend_f64),
        case("math/f64_fma_inf_addend", fma_inf_addend),
        case("math/f32_pown_nan_base", pown_nan_base_f32),
        case("math/f64_pown_nan_base", pown_nan_base_f64),
    ]
}

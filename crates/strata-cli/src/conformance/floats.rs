//! Float arithmetic, NaN and infinity, and the float math built-ins on `f32` and `f64`,
//! against Rust's `std`. `+ - * / sqrt`, rounding functions, `fmod`, `copysign`, `fma` and
//! `min`/`max` are exact; transcendental functions are allowed a few ULP.

use super::{case, Case};

macro_rules! float_suite {
    ($($t:ident;)*) => {
        $(
        mod $t {
            use super::super::{
                expect_close, expect_eq_k, expect_same, has_f64, inputs, map1, map2, map3,
                pairs, Rng,
            };
            use strata::prelude::*;

            type F = $t;
            const IS_F64: bool = std::mem::size_of::<F>() == 8;

            fn skip(q: &Queue) -> bool {
                IS_F64 && !has_f64(q)
            }

            /// Runs `K` results per item on three inputs.
            fn run<const K: usize>(
                q: &Queue,
                name: &str,
                a: &[F],
                b: &[F],
                c: &[F],
                body: impl FnOnce(Expr<F>, Expr<F>, Expr<F>) -> [Expr<F>; K],
            ) -> Result<Vec<F>, String> {
                crate::conformance::run3(q, name, a, b, c, body)
            }

            /// Results whose sign of zero may differ (`min(0, -0)`).
            const ZERO_SIGN_FREE: [&str; 3] = ["min", "max", "clamp"];

            fn same_k(what: &str, names: &[&str], got: &[F], want: &[F]) -> Result<(), String> {
                let k = names.len();
                for j in 0..k {
                    let g: Vec<F> = got.iter().skip(j).step_by(k).copied().collect();
                    let w: Vec<F> = want.iter().skip(j).step_by(k).copied().collect();
                    let what = format!("{what} {}", names[j]);
                    if ZERO_SIGN_FREE.contains(&names[j]) {
                        // IEEE minNum/maxNum leave the sign of a zero result open.
                        expect_close(&what, &g, &w, 0, 0.0)?;
                    } else {
                        expect_same(&what, &g, &w)?;
                    }
                }
                Ok(())
            }

            pub(super) fn arith(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let (a, b) = pairs::<F>(41, 400);
                let c = inputs::<F>(42, a.len(), false);
                let got = run(q, concat!("farith_", stringify!($t)), &a, &b, &c, |x, y, z| {
                    [x + y, x - y, x * y, x / y, x % y, -x, x * y + z, (2.0 as F) * x, x / (4.0 as F)]
                })?;
                let mut want = Vec::new();
                for i in 0..a.len() {
                    let (x, y, z) = (a[i], b[i], c[i]);
                    want.extend([x + y, x - y, x * y, x / y, x % y, -x, x * y + z, 2.0 * x, x / 4.0]);
                }
                same_k(
                    concat!(stringify!($t), " arithmetic"),
                    &["a+b", "a-b", "a*b", "a/b", "a%b", "-a", "a*b+c (two roundings)", "2*a", "a/4"],
                    &got,
                    &want,
                )
            }

            pub(super) fn compare(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let (a, b) = pairs::<F>(51, 300);
                let got = map2(q, concat!("fcmp_", stringify!($t)), &a, &b, |x: Expr<F>, y: Expr<F>| {
                    x.lt(y).cast::<u32>()
                        | (x.le(y).cast::<u32>() << 1u32)
                        | (x.gt(y).cast::<u32>() << 2u32)
                        | (x.ge(y).cast::<u32>() << 3u32)
                        | (x.eq(y).cast::<u32>() << 4u32)
                        | (x.ne(y).cast::<u32>() << 5u32)
                        | (select(x.lt(y).or(x.is_nan()), 1u32, 0u32) << 6u32)
                        | (select(x.ge(y).and(y.gt(0.0 as F)).not(), 1u32, 0u32) << 7u32)
                })?;
                let want: Vec<u32> = a
                    .iter()
                    .zip(&b)
                    .map(|(&x, &y)| {
                        (x < y) as u32
                            | ((x <= y) as u32) << 1
                            | ((x > y) as u32) << 2
                            | ((x >= y) as u32) << 3
                            | ((x == y) as u32) << 4
                            | ((x != y) as u32) << 5
                            | ((x < y || x.is_nan()) as u32) << 6
                            | ((!(x >= y && y > 0.0)) as u32) << 7
                    })
                    .collect();
                super::super::expect_eq(concat!(stringify!($t), " comparison bits"), &got, &want)
            }

            pub(super) fn special(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let xs: Vec<F> = vec![0.0, -0.0, 1.0, -1.0, 2.0, F::INFINITY, F::NEG_INFINITY, F::NAN, 1e30, -7.5, 3e5, F::MIN_POSITIVE];
                let mut a = Vec::new();
                let mut b = Vec::new();
                for &x in &xs {
                    for &y in &xs {
                        a.push(x);
                        b.push(y);
                    }
                }
                let c = vec![0.0 as F; a.len()];
                let got = run(q, concat!("fspecial_", stringify!($t)), &a, &b, &c, |x, y, _| {
                    let one = lit(1.0 as F);
                    [
                        one / x,
                        x.sqrt(),
                        x.min(y),
                        x.max(y),
                        x - x,
                        x * y,
                        x.log(),
                        x.exp(),
                        select(x.is_nan(), one, lit(0.0 as F)),
                        select(x.is_inf(), one, lit(0.0 as F)),
                        select(x.is_finite(), one, lit(0.0 as F)),
                        select(x.signbit(), one, lit(0.0 as F)),
                        x.copysign(y),
                        x.abs(),
                    ]
                })?;
                let mut want = Vec::new();
                let t = |b: bool| if b { 1.0 as F } else { 0.0 };
                for i in 0..a.len() {
                    let (x, y) = (a[i], b[i]);
                    want.extend([
                        1.0 / x,
                        x.sqrt(),
                        x.min(y),
                        x.max(y),
                        x - x,
                        x * y,
                        x.ln(),
                        x.exp(),
                        t(x.is_nan()),
                        t(x.is_infinite()),
                        t(x.is_finite()),
                        t(x.is_sign_negative()),
                        x.copysign(y),
                        x.abs(),
                    ]);
                }
                let names = ["1/x", "sqrt", "min", "max", "x-x", "x*y", "log", "exp", "isnan", "isinf", "isfinite", "signbit", "copysign", "abs"];
                // log and exp of special values are exact by IEEE/OpenCL; compare the others bit for bit.
                let k = names.len();
                for j in 0..k {
                    let g: Vec<F> = got.iter().skip(j).step_by(k).copied().collect();
                    let w: Vec<F> = want.iter().skip(j).step_by(k).copied().collect();
                    let what = format!("{} {}", stringify!($t), names[j]);
                    if names[j] == "log" || names[j] == "exp" || ZERO_SIGN_FREE.contains(&names[j]) {
                        let ulps = if names[j] == "log" || names[j] == "exp" { 4 } else { 0 };
                        expect_close(&what, &g, &w, ulps, 0.0)?;
                    } else {
                        expect_same(&what, &g, &w)?;
                    }
                }
                Ok(())
            }

            /// Built-ins of a NaN the device's compiler could see: a product with a NaN
            /// literal, a private variable holding one, `-inf / -inf` of a private infinity.
            /// PoCL 3.1 turns `floor`, `ceil`, `trunc`, `round`, `exp`, `exp2` and `tanh` of
            /// such a NaN into 0; the OpenCL writer calls them through helpers that return a
            /// NaN argument itself (`Dialect::nan_guarded`).
            pub(super) fn nan_literal(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let a: Vec<F> = vec![1.5, -2.0, 0.0, F::INFINITY, F::NAN, 1e30];
                let zero = vec![0.0 as F; a.len()];
                let fns: [(&str, fn(Expr<F>) -> Expr<F>); 8] = [
                    ("floor", |x| x.floor()),
                    ("ceil", |x| x.ceil()),
                    ("trunc", |x| x.trunc()),
                    ("round", |x| x.round()),
                    ("exp", |x| x.exp()),
                    ("exp2", |x| x.exp2()),
                    ("tanh", |x| x.tanh()),
                    ("sin", |x| x.sin()),
                ];
                let got = run(q, concat!("fnan_literal_", stringify!($t)), &a, &zero, &zero, |x, _, _| {
                    let p = var::<F>(lit(F::NAN));
                    let held = p.get();
                    let q = var::<F>(lit(F::NEG_INFINITY));
                    let inf = q.get();
                    let mut r = Vec::new();
                    for (_, f) in fns {
                        r.push(f(x * F::NAN));
                        r.push(f(x + held));
                        r.push(f(inf / F::NEG_INFINITY));
                    }
                    let r: [Expr<F>; 24] = r.try_into().expect("three results per built-in");
                    r
                })?;
                // Two-argument built-ins of such a NaN, with IEEE's exceptions to "NaN in, NaN
                // out": pow(x, 0) = pow(1, y) = 1, hypot(inf, y) = inf.
                let two = run(q, concat!("fnan_literal2_", stringify!($t)), &a, &zero, &zero, |x, _, _| {
                    let n = x * F::NAN;
                    [
                        n.pow(lit(0.0 as F)),
                        lit(1.0 as F).pow(n),
                        lit(F::INFINITY).hypot(n),
                        n.pow(lit(2.0 as F)),
                        n.atan2(lit(1.0 as F)),
                        n.hypot(lit(3.0 as F)),
                        n.fmod(lit(2.0 as F)),
                    ]
                })?;
                let names = ["pow(NaN, 0)", "pow(1, NaN)", "hypot(inf, NaN)", "pow(NaN, 2)", "atan2(NaN, 1)", "hypot(NaN, 3)", "fmod(NaN, 2)"];
                let want = [1.0 as F, 1.0, F::INFINITY, F::NAN, F::NAN, F::NAN, F::NAN];
                for (i, g) in two.iter().enumerate() {
                    let w = want[i % 7];
                    if !(g == &w || (g.is_nan() && w.is_nan())) {
                        return Err(format!(
                            "{} {} with x = {:?} is {g:?}, not {w:?}",
                            stringify!($t),
                            names[i % 7],
                            a[i / 7]
                        ));
                    }
                }
                // `rint` of values the compiler can prove infinite or beyond 2^52 (strata
                // guards them on OpenCL since a random program with `rint(DBL_MAX)` made PoCL
                // 3.1 store nothing; `tests/differential.rs` pins that program).
                let huge = run(q, concat!("frint_literal_", stringify!($t)), &a, &zero, &zero, |x, _, _| {
                    [
                        lit(F::MAX).rint(),
                        lit(F::NEG_INFINITY).rint(),
                        lit(2.0 as F) / (lit(F::MAX) - lit(F::MAX).rint()) + x,
                    ]
                })?;
                for (i, g) in huge.iter().enumerate() {
                    let x = a[i / 3];
                    let w = [F::MAX, F::NEG_INFINITY, F::INFINITY + x][i % 3];
                    if !(g == &w || (g.is_nan() && w.is_nan())) {
                        let name = ["rint(MAX)", "rint(-inf)", "2 / (MAX - rint(MAX)) + x"][i % 3];
                        return Err(format!("{} {name} with x = {x:?} is {g:?}, not {w:?}", stringify!($t)));
                    }
                }
                // `rootn(x, 0)` with a literal 0 is NaN: PoCL 3.1's `rootn` of a literal 0 gave
                // 0 and lost the kernel's other stores (a random program with it never ended;
                // the OpenCL writer's `rootn` helper tests `n == 0` first).
                let roots = run(q, concat!("frootn_literal_", stringify!($t)), &a, &zero, &zero, |x, _, _| {
                    let n = var::<i32>(lit(0i32)).get();
                    [x.rootn(0), x * (2.0 as F), x.rootn(n)]
                })?;
                for (i, g) in roots.iter().enumerate() {
                    let x = a[i / 3];
                    let ok = match i % 3 {
                        1 => *g == x * 2.0 || (g.is_nan() && x.is_nan()),
                        _ => g.is_nan(),
                    };
                    if !ok {
                        let name = ["rootn(x, 0)", "x * 2 beside rootn(x, 0)", "rootn(x, a private 0)"][i % 3];
                        return Err(format!("{} {name} with x = {x:?} is {g:?}", stringify!($t)));
                    }
                }
                let hows = ["x * NaN", "x + a private NaN", "-inf / -inf"];
                for (i, g) in got.iter().enumerate() {
                    if !g.is_nan() {
                        let (name, how) = (fns[i % 24 / 3].0, hows[i % 3]);
                        return Err(format!(
                            "{} {name}({how}) with x = {:?} is {g:?}, not NaN",
                            stringify!($t),
                            a[i / 24]
                        ));
                    }
                }
                Ok(())
            }

            pub(super) fn exact_math(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let (a, b) = pairs::<F>(61, 400);
                let c = inputs::<F>(62, a.len(), false);
                let got = run(q, concat!("fexact_", stringify!($t)), &a, &b, &c, |x, y, z| {
                    let (lo, hi) = (y.min(z), y.max(z));
                    [
                        x.abs().sqrt(),
                        x.floor(),
                        x.ceil(),
                        x.round(),
                        x.trunc(),
                        x.fmod(y),
                        x.copysign(y),
                        x.fma(y, z),
                        x.abs(),
                        x.min(y),
                        x.max(y),
                        x.clamp(lo, hi),
                        x.sign(),
                    ]
                })?;
                let mut want = Vec::new();
                for i in 0..a.len() {
                    let (x, y, z) = (a[i], b[i], c[i]);
                    let (lo, hi) = (y.min(z), y.max(z));
                    let sign = if x.is_nan() {
                        0.0
                    } else if x > 0.0 {
                        1.0
                    } else if x < 0.0 {
                        -1.0
                    } else {
                        x
                    };
                    want.extend([
                        x.abs().sqrt(),
                        x.floor(),
                        x.ceil(),
                        x.round(),
                        x.trunc(),
                        x % y,
                        x.copysign(y),
                        x.mul_add(y, z),
                        x.abs(),
                        x.min(y),
                        x.max(y),
                        x.max(lo).min(hi),
                        sign,
                    ]);
                }
                same_k(
                    concat!(stringify!($t), " exact built-ins"),
                    &["sqrt", "floor", "ceil", "round", "trunc", "fmod", "copysign", "fma", "abs", "min", "max", "clamp", "sign"],
                    &got,
                    &want,
                )
            }

            /// One unary function over `n` inputs in `[lo, hi)`, plus `extra` inputs.
            #[allow(clippy::too_many_arguments)]
            fn unary(
                q: &Queue,
                name: &str,
                seed: u64,
                (lo, hi): (f64, f64),
                extra: &[F],
                dev: fn(Expr<F>) -> Expr<F>,
                host: fn(F) -> F,
                ulps: u64,
                abs: f64,
            ) -> Result<(), String> {
                let mut r = Rng::new(seed);
                let mut xs: Vec<F> = extra.to_vec();
                while xs.len() < 500 {
                    xs.push(r.f64_in(lo, hi) as F);
                }
                let got = map1(q, name, &xs, dev)?;
                let want: Vec<F> = xs.iter().map(|&x| host(x)).collect();
                expect_close(&format!("{} {name}", stringify!($t)), &got, &want, ulps, abs)
            }

            pub(super) fn exp_log(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let ex: &[F] = &[0.0, -0.0, 1.0, -1.0, 1e-5, -1e-5];
                unary(q, "exp", 1, (-50.0, 50.0), ex, |x| x.exp(), |x| x.exp(), 4, 0.0)?;
                unary(q, "exp2", 2, (-100.0, 100.0), ex, |x| x.exp2(), |x| x.exp2(), 4, 0.0)?;
                unary(q, "exp10", 3, (-30.0, 30.0), ex, |x| x.exp10(), |x| (10.0 as F).powf(x), 4, 0.0)?;
                unary(q, "expm1", 4, (-5.0, 5.0), ex, |x| x.expm1(), |x| x.exp_m1(), 4, 0.0)?;
                let pos: &[F] = &[1.0, 2.0, 10.0, 0.5, 1e-10, 1e10];
                unary(q, "log", 5, (1e-3, 1e6), pos, |x| x.log(), |x| x.ln(), 4, 0.0)?;
                unary(q, "log2", 6, (1e-3, 1e6), pos, |x| x.log2(), |x| x.log2(), 4, 0.0)?;
                unary(q, "log10", 7, (1e-3, 1e6), pos, |x| x.log10(), |x| x.log10(), 4, 0.0)?;
                unary(q, "log1p", 8, (-0.99, 10.0), ex, |x| x.log1p(), |x| x.ln_1p(), 4, 0.0)?;
                unary(q, "cbrt", 9, (-1e6, 1e6), ex, |x| x.cbrt(), |x| x.cbrt(), 4, 0.0)?;
                unary(q, "rsqrt", 10, (1e-6, 1e6), pos, |x| x.rsqrt(), |x| 1.0 / x.sqrt(), 4, 0.0)?;
                unary(q, "sqrt", 11, (0.0, 1e9), pos, |x| x.sqrt(), |x| x.sqrt(), 0, 0.0)?;
                // pow(x, y)
                let mut r = Rng::new(12);
                let mut xs: Vec<F> = vec![2.0, 2.0, 10.0, 0.5, 1.0, 4.0];
                let mut ys: Vec<F> = vec![10.0, -3.0, 0.0, 2.0, 1e6, 0.5];
                while xs.len() < 400 {
                    xs.push(r.f64_in(0.1, 10.0) as F);
                    ys.push(r.f64_in(-10.0, 10.0) as F);
                }
                let got = map2(q, "pow", &xs, &ys, |x: Expr<F>, y: Expr<F>| x.pow(y))?;
                let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| x.powf(y)).collect();
                expect_close(concat!(stringify!($t), " pow"), &got, &want, 16, 0.0)
            }

            pub(super) fn trig(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let ex: &[F] = &[0.0, -0.0, 0.5, -0.5, 1.0, -1.0];
                // Results near zero after cancellation get an absolute tolerance of a few ulp of 1.
                let a = if IS_F64 { 1e-15 } else { 1e-6 };
                unary(q, "sin", 21, (-10.0, 10.0), ex, |x| x.sin(), |x| x.sin(), 4, a)?;
                unary(q, "cos", 22, (-10.0, 10.0), ex, |x| x.cos(), |x| x.cos(), 4, a)?;
                unary(q, "tan", 23, (-1.5, 1.5), ex, |x| x.tan(), |x| x.tan(), 6, a)?;
                unary(q, "asin", 24, (-1.0, 1.0), ex, |x| x.asin(), |x| x.asin(), 6, a)?;
                unary(q, "acos", 25, (-1.0, 1.0), ex, |x| x.acos(), |x| x.acos(), 6, a)?;
                unary(q, "atan", 26, (-100.0, 100.0), ex, |x| x.atan(), |x| x.atan(), 6, a)?;
                let mut r = Rng::new(27);
                let mut ys: Vec<F> = vec![0.0, 1.0, -1.0, 1.0, -1.0, 0.0, -0.0];
                let mut xs: Vec<F> = vec![1.0, 0.0, 0.0, -1.0, -1.0, -1.0, -1.0];
                while ys.len() < 400 {
                    ys.push(r.f64_in(-10.0, 10.0) as F);
                    xs.push(r.f64_in(-10.0, 10.0) as F);
                }
                let got = map2(q, "atan2", &ys, &xs, |y: Expr<F>, x: Expr<F>| y.atan2(x))?;
                let want: Vec<F> = ys.iter().zip(&xs).map(|(&y, &x)| y.atan2(x)).collect();
                expect_close(concat!(stringify!($t), " atan2"), &got, &want, 8, a)
            }

            pub(super) fn hyperbolic(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let ex: &[F] = &[0.0, -0.0, 0.5, -0.5];
                let a = if IS_F64 { 1e-15 } else { 1e-6 };
                unary(q, "sinh", 31, (-10.0, 10.0), ex, |x| x.sinh(), |x| x.sinh(), 6, a)?;
                unary(q, "cosh", 32, (-10.0, 10.0), ex, |x| x.cosh(), |x| x.cosh(), 6, a)?;
                unary(q, "tanh", 33, (-10.0, 10.0), ex, |x| x.tanh(), |x| x.tanh(), 6, a)?;
                unary(q, "asinh", 34, (-100.0, 100.0), ex, |x| x.asinh(), |x| x.asinh(), 6, a)?;
                unary(q, "acosh", 35, (1.0, 100.0), &[1.0, 2.0], |x| x.acosh(), |x| x.acosh(), 6, a)?;
                // Near |x| = 1 atanh amplifies input rounding ~50x; neither Rust's formula nor
                // device libraries (PoCL: 9-10 ulp) are within 6 ulp of each other there.
                unary(q, "atanh", 36, (-0.99, 0.99), ex, |x| x.atanh(), |x| x.atanh(), 16, a)
            }

            pub(super) fn misc(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let a = if IS_F64 { 1e-15 } else { 1e-6 };
                unary(q, "degrees", 41, (-10.0, 10.0), &[0.0, 1.0], |x| x.degrees(), |x| x.to_degrees(), 2, a)?;
                unary(q, "radians", 42, (-720.0, 720.0), &[0.0, 180.0], |x| x.radians(), |x| x.to_radians(), 2, a)?;
                let mut r = Rng::new(43);
                let (mut xs, mut ys, mut ts) = (Vec::new(), Vec::new(), Vec::new());
                while xs.len() < 300 {
                    xs.push(r.f64_in(-1e3, 1e3) as F);
                    ys.push(r.f64_in(-1e3, 1e3) as F);
                    ts.push(r.f64_in(0.0, 1.0) as F);
                }
                let got = map2(q, "hypot", &xs, &ys, |x: Expr<F>, y: Expr<F>| x.hypot(y))?;
                let want: Vec<F> = xs.iter().zip(&ys).map(|(&x, &y)| x.hypot(y)).collect();
                expect_close(concat!(stringify!($t), " hypot"), &got, &want, 4, 0.0)?;
                let got = map3(q, "mix", &xs, &ys, &ts, |x: Expr<F>, y: Expr<F>, t: Expr<F>| x.mix(y, t))?;
                let want: Vec<F> = (0..xs.len()).map(|i| xs[i] + (ys[i] - xs[i]) * ts[i]).collect();
                // mix may be contracted to an fma on GPUs: a few ulp of the inputs' magnitude.
                expect_close(concat!(stringify!($t), " mix"), &got, &want, 4, if IS_F64 { 1e-10 } else { 1e-3 })?;
                // Compile-time constant math folds to the same values as run-time math.
                let xs: Vec<F> = vec![2.0; 3];
                let got = map1(q, "folded", &xs, |x: Expr<F>| {
                    x * lit(2.0 as F).sqrt() + lit(-3.5 as F).floor() + lit(0.25 as F).max(lit(F::NAN))
                })?;
                let want: Vec<F> = xs.iter().map(|&x| x * (2.0 as F).sqrt() + (-3.5 as F).floor() + 0.25).collect();
                expect_eq_k(concat!(stringify!($t), " folded constants"), &["value"], &got, &want)
            }
        }
        )*

        /// The float cases.
        pub(super) fn cases() -> Vec<Case> {
            vec![
                $(
                    case(concat!("float/", stringify!($t), "_arith"), $t::arith),
                    case(concat!("float/", stringify!($t), "_compare"), $t::compare),
                    case(concat!("float/", stringify!($t), "_nan_inf"), $t::special),
                    case(concat!("float/", stringify!($t), "_nan_literal"), $t::nan_literal),
                    case(concat!("math/", stringify!($t), "_exact"), $t::exact_math),
                    case(concat!("math/", stringify!($t), "_exp_log_pow"), $t::exp_log),
                    case(concat!("math/", stringify!($t), "_trig"), $t::trig),
                    case(concat!("math/", stringify!($t), "_hyperbolic"), $t::hyperbolic),
                    case(concat!("math/", stringify!($t), "_misc"), $t::misc),
                )*
            ]
        }
    };
}

float_suite! {
    f32;
    f64;
}

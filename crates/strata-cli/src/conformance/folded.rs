//! Float arithmetic with zero operands that a driver's compiler sees as constants, and fences
//! in loops whose trip counts differ between work-items: IEEE results where shortcuts give
//! others. Found by the differential test on lavapipe (2026-11-27): its code generator built
//! `x * 0.0` and `0.0 / x` as 0 (even for infinite or NaN `x`), `x / 0.0` as 0, `x - x` as 0
//! for NaN and infinite `x`, `x + 0.0` and `x - -0.0` as `x` (so `-0 + 0` was -0), whether
//! the zero is a literal or a private variable holding one; a fence in such a loop lost the
//! later stores of other work-items; `log` of a subnormal `f32` was that of the smallest
//! normal.

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
    ]
}

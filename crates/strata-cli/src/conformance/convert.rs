//! Conversions with rounding modes and saturation (`Expr::convert`, `Expr::cast_sat`; OpenCL's
//! `convert_T_sat_rte/rtz/rtp/rtn`), against host conversions computed exactly (`i128`, `f64`,
//! and Rust's saturating `as`).

use super::{case, e, expect_eq, has_f64, inputs, Gen};
use std::cmp::Ordering;
use strata::builder::Value;
use strata::prelude::*;

pub(super) fn cases() -> Vec<Case> {
    vec![
        case("cast/rounding_modes_to_float", to_float),
        case("cast/rounding_modes_to_int", to_int),
        case("cast/saturating_int", saturating_int),
    ]
}
use super::Case;

const MODES: [Rounding; 4] = [
    Rounding::NearestEven,
    Rounding::TowardZero,
    Rounding::Up,
    Rounding::Down,
];

/// `x.convert::<R>(mode)` for the four modes, four results per input.
fn run_modes<A: Value, R: Value>(q: &Queue, name: &str, xs: &[A]) -> Result<Vec<R>, String> {
    let k = Kernel::build(name, |k| {
        let x = k.read::<A>("x");
        let out = k.write::<R>("out");
        let i = global_id(0);
        if_(i.lt(x.len()), || {
            let v = x.at(i);
            for (j, &m) in MODES.iter().enumerate() {
                out.set(i * 4u32 + j as u32, v.convert::<R>(m));
            }
        });
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, xs).map_err(e)?;
    let ob = Buffer::<R>::new(q.device(), 4 * xs.len()).map_err(e)?;
    k.launch(q, NdRange::covering(xs.len(), 64), args![&xb, &ob])
        .map_err(e)?;
    q.read(&ob).map_err(e)
}

/// A float type's neighbours.
trait Neighbours: Copy {
    fn up(self) -> Self;
    fn down(self) -> Self;
    fn is_pos(self) -> bool;
    fn is_neg(self) -> bool;
}
impl Neighbours for f32 {
    fn up(self) -> f32 {
        self.next_up()
    }
    fn down(self) -> f32 {
        self.next_down()
    }
    fn is_pos(self) -> bool {
        self > 0.0
    }
    fn is_neg(self) -> bool {
        self < 0.0
    }
}
impl Neighbours for f64 {
    fn up(self) -> f64 {
        self.next_up()
    }
    fn down(self) -> f64 {
        self.next_down()
    }
    fn is_pos(self) -> bool {
        self > 0.0
    }
    fn is_neg(self) -> bool {
        self < 0.0
    }
}

/// The four roundings of a value whose nearest float is `r`, which compares with the exact
/// value as `c` (`Greater`: `r` is above it). Towards zero steps down only above a positive
/// value and up only below a negative one.
fn directed<F: Neighbours>(r: F, c: Option<Ordering>) -> [F; 4] {
    let (above, below) = (c == Some(Ordering::Greater), c == Some(Ordering::Less));
    let down = if above { r.down() } else { r };
    let up = if below { r.up() } else { r };
    let toward_zero = if above && r.is_pos() {
        r.down()
    } else if below && r.is_neg() {
        r.up()
    } else {
        r
    };
    [r, toward_zero, up, down]
}

fn to_float(q: &Queue) -> Result<(), String> {
    // Integers to f32 (beyond 2^24 not every integer is a float).
    macro_rules! int_to {
        ($a:ty, $f:ty, $seed:expr) => {{
            let mut xs: Vec<$a> = inputs($seed, 300, true);
            xs.extend([
                16_777_217 as $a,
                (1u64 << 53) as $a + 1,
                (1 << 24) as $a + 3,
            ]);
            let got = run_modes::<$a, $f>(
                q,
                concat!("round_", stringify!($a), "_", stringify!($f)),
                &xs,
            )?;
            let want: Vec<$f> = xs
                .iter()
                .flat_map(|&x| {
                    let r = x as $f;
                    directed(r, Some((r as i128).cmp(&(x as i128))))
                })
                .collect();
            expect_eq(
                concat!(
                    stringify!($a),
                    " to ",
                    stringify!($f),
                    " (rte, rtz, rtp, rtn)"
                ),
                &got,
                &want,
            )?;
        }};
    }
    int_to!(i32, f32, 1);
    int_to!(u32, f32, 2);
    int_to!(i64, f32, 3);
    int_to!(u64, f32, 4);
    if !has_f64(q) {
        return Ok(());
    }
    int_to!(i64, f64, 5);
    int_to!(u64, f64, 6);
    // f64 to f32, overflow and the subnormals included.
    let mut xs: Vec<f64> = inputs(7, 300, true);
    xs.extend([
        f32::MAX as f64 * (1.0 + 1e-12),
        f32::MAX as f64 * 1.5,
        -(f32::MAX as f64) * (1.0 + 1e-9),
        1e-46,
        -1e-46,
        f32::MIN_POSITIVE as f64 / 3.0,
        1.0 + 1e-12,
        -1.0 - 1e-12,
    ]);
    let got = run_modes::<f64, f32>(q, "round_f64_f32", &xs)?;
    let want: Vec<f32> = xs
        .iter()
        .flat_map(|&x| {
            let r = x as f32;
            directed(r, (r as f64).partial_cmp(&x))
        })
        .collect();
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    expect_eq(
        "f64 to f32 (rte, rtz, rtp, rtn), bits",
        &bits(&got),
        &bits(&want),
    )?;
    // Vectors convert component by component.
    let ys: Vec<[i64; 2]> = inputs::<i64>(8, 200, true)
        .chunks(2)
        .map(|c| [c[0], c[1]])
        .collect();
    let k = Kernel::build("round_i64x2_f32x2", |k| {
        let x = k.read::<[i64; 2]>("x");
        let out = k.write::<[f32; 2]>("out");
        let i = global_id(0);
        if_(i.lt(x.len()), || {
            out.set(i, x.at(i).convert::<[f32; 2]>(Rounding::Down))
        });
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &ys).map_err(e)?;
    let ob = Buffer::<[f32; 2]>::new(q.device(), ys.len()).map_err(e)?;
    k.launch(q, NdRange::covering(ys.len(), 32), args![&xb, &ob])
        .map_err(e)?;
    let got = q.read(&ob).map_err(e)?;
    let want: Vec<[f32; 2]> = ys
        .iter()
        .map(|v| {
            v.map(|x| {
                let r = x as f32;
                directed(r, Some((r as i128).cmp(&(x as i128))))[3]
            })
        })
        .collect();
    expect_eq("[i64; 2] to [f32; 2] rounding down", &got, &want)
}

fn to_int(q: &Queue) -> Result<(), String> {
    macro_rules! float_to {
        ($f:ty, $a:ty, $seed:expr) => {{
            let mut xs: Vec<$f> = inputs($seed, 300, true);
            xs.extend([2.5, -2.5, 3.5, -0.5, 0.5, 1e10, -1e10, 255.5, -128.5]);
            let got = run_modes::<$f, $a>(
                q,
                concat!("round_", stringify!($f), "_", stringify!($a)),
                &xs,
            )?;
            let want: Vec<$a> = xs
                .iter()
                .flat_map(|&x| {
                    [
                        x.round_ties_even() as $a,
                        x.trunc() as $a,
                        x.ceil() as $a,
                        x.floor() as $a,
                    ]
                })
                .collect();
            expect_eq(
                concat!(
                    stringify!($f),
                    " to ",
                    stringify!($a),
                    " (rte, rtz, rtp, rtn), saturating"
                ),
                &got,
                &want,
            )?;
        }};
    }
    float_to!(f32, i32, 11);
    float_to!(f32, u8, 12);
    float_to!(f32, i64, 13);
    if q.device().info().supports_f64 {
        float_to!(f64, i64, 14);
        float_to!(f64, u32, 15);
        float_to!(f64, i16, 16);
    }
    Ok(())
}

fn saturating_int(q: &Queue) -> Result<(), String> {
    fn sat<A: Value + Gen + Into<i128>, R: Value + TryFrom<i128> + PartialEq + std::fmt::Debug>(
        q: &Queue,
        name: &str,
        seed: u64,
        (lo, hi): (i128, i128),
    ) -> Result<(), String> {
        let xs: Vec<A> = inputs(seed, 300, true);
        let got = super::map1(q, name, &xs, |x: Expr<A>| x.cast_sat::<R>())?;
        let want: Vec<R> = xs
            .iter()
            .map(|&x| {
                let v: i128 = x.into();
                R::try_from(v.clamp(lo, hi))
                    .ok()
                    .expect("clamped into range")
            })
            .collect();
        expect_eq(name, &got, &want)
    }
    sat::<i32, u8>(q, "sat_i32_u8", 21, (0, 255))?;
    sat::<u32, i32>(q, "sat_u32_i32", 22, (0, i32::MAX as i128))?;
    sat::<i64, u32>(q, "sat_i64_u32", 23, (0, u32::MAX as i128))?;
    sat::<u64, i64>(q, "sat_u64_i64", 24, (0, i64::MAX as i128))?;
    sat::<i16, i8>(q, "sat_i16_i8", 25, (-128, 127))?;
    sat::<i8, u64>(q, "sat_i8_u64", 26, (0, u64::MAX as i128))?;
    sat::<u16, i16>(q, "sat_u16_i16", 27, (0, i16::MAX as i128))?;
    sat::<i64, i32>(q, "sat_i64_i32", 28, (i32::MIN as i128, i32::MAX as i128))
}

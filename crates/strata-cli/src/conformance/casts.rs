//! Conversions under strata's strict rules: implicit lossless widening (`.into()` and mixed
//! operators), explicit narrowing that wraps, float to integer that saturates and maps NaN to
//! 0, integer to float rounding to nearest, `f64` to `f32`, to and from `bool`, and bitcasts.

use super::{
    case, e, expect_eq, expect_eq_k, expect_same, has_f64, inputs, map1, Case, CloseFloat, Gen,
};
use std::fmt::Debug;
use strata::builder::Value;
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("cast/int_narrowing", int_narrowing),
        case("cast/int_sign_change", int_sign_change),
        case("cast/widening_into", widening_into),
        case("cast/mixed_operators", mixed_operators),
        case("cast/float_to_int_saturating", float_to_int),
        case("cast/int_to_float_rounding", int_to_float),
        case("cast/f64_f32", f64_f32),
        case("cast/bool", bools),
        case("cast/bitcast", bitcasts),
    ]
}

/// Float values around the limits of the integer types.
const F_EDGES: [f64; 34] = [
    0.5,
    -0.5,
    1.5,
    -1.5,
    2.5,
    -0.99,
    127.5,
    128.0,
    -128.5,
    -129.0,
    255.9,
    256.0,
    32767.5,
    65535.9,
    65536.0,
    2147483520.0,
    2147483648.0,
    -2147483648.0,
    -2147483904.0,
    4294967040.0,
    4294967296.0,
    9.223371487098962e18,
    9.223372036854776e18,
    -9.223372036854776e18,
    -9.223373136366404e18,
    1.8446742974197924e19,
    1.8446744073709552e19,
    1e20,
    -1e20,
    1e30,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    -0.0,
];

fn cast_int<A: Value + Gen + Debug, R: Value + PartialEq + Debug>(
    q: &Queue,
    name: &str,
    extra: &[A],
    host: fn(A) -> R,
) -> Result<(), String> {
    let mut xs = extra.to_vec();
    xs.extend(inputs::<A>(name.len() as u64 * 7 + 1, 300, true));
    let got = map1(q, name, &xs, |x: Expr<A>| x.cast::<R>())?;
    let want: Vec<R> = xs.iter().map(|&x| host(x)).collect();
    match got.iter().zip(&want).position(|(g, w)| g != w) {
        None => expect_eq(name, &got, &want),
        Some(i) => Err(format!(
            "{name}({:?}): got {:?}, expected {:?}",
            xs[i], got[i], want[i]
        )),
    }
}

fn cast_float<A: Value + Gen + Debug, R: Value + CloseFloat>(
    q: &Queue,
    name: &str,
    extra: &[A],
    host: fn(A) -> R,
) -> Result<(), String> {
    let mut xs = extra.to_vec();
    xs.extend(inputs::<A>(name.len() as u64 * 7 + 3, 300, true));
    let got = map1(q, name, &xs, |x: Expr<A>| x.cast::<R>())?;
    let want: Vec<R> = xs.iter().map(|&x| host(x)).collect();
    expect_same(name, &got, &want)
}

fn int_narrowing(q: &Queue) -> Result<(), String> {
    cast_int::<i32, i8>(q, "i32_to_i8", &[200, -200, 383], |x| x as i8)?;
    cast_int::<i32, u8>(q, "i32_to_u8", &[256, -1, 511], |x| x as u8)?;
    cast_int::<i32, i16>(q, "i32_to_i16", &[40000, -40000], |x| x as i16)?;
    cast_int::<u32, u16>(q, "u32_to_u16", &[65536, 65535, 70000], |x| x as u16)?;
    cast_int::<u32, u8>(q, "u32_to_u8", &[256, 300], |x| x as u8)?;
    cast_int::<i64, i32>(q, "i64_to_i32", &[1 << 31, -(1 << 31) - 1], |x| x as i32)?;
    cast_int::<i64, u16>(q, "i64_to_u16", &[-1, 1 << 40], |x| x as u16)?;
    cast_int::<u64, u32>(q, "u64_to_u32", &[1 << 32, (1 << 32) + 5], |x| x as u32)?;
    cast_int::<u64, i8>(q, "u64_to_i8", &[128, 255], |x| x as i8)?;
    cast_int::<i16, u8>(q, "i16_to_u8", &[-1, 256, -256], |x| x as u8)?;
    cast_int::<u16, i8>(q, "u16_to_i8", &[128, 65535], |x| x as i8)
}

fn int_sign_change(q: &Queue) -> Result<(), String> {
    cast_int::<i32, u32>(q, "i32_to_u32", &[-1], |x| x as u32)?;
    cast_int::<u32, i32>(q, "u32_to_i32", &[1 << 31], |x| x as i32)?;
    cast_int::<i8, u8>(q, "i8_to_u8", &[-128], |x| x as u8)?;
    cast_int::<u8, i8>(q, "u8_to_i8", &[200], |x| x as i8)?;
    cast_int::<i64, u64>(q, "i64_to_u64", &[-5], |x| x as u64)?;
    cast_int::<u64, i64>(q, "u64_to_i64", &[u64::MAX - 4], |x| x as i64)?;
    // Sign extension then reinterpretation, as in C and Rust.
    cast_int::<i8, u32>(q, "i8_to_u32", &[-1, -128], |x| x as u32)?;
    cast_int::<i16, u64>(q, "i16_to_u64", &[-1], |x| x as u64)?;
    cast_int::<u8, i64>(q, "u8_to_i64", &[255], |x| x as i64)?;
    cast_int::<i32, i64>(q, "i32_to_i64", &[i32::MIN], |x| x as i64)
}

fn widening_into(q: &Queue) -> Result<(), String> {
    let a = inputs::<i8>(71, 200, true);
    let b = inputs::<u16>(72, 200, true);
    let k = Kernel::build("widening_into", |k| {
        let xa = k.read::<i8>("a");
        let xb = k.read::<u16>("b");
        let o32 = k.write::<i32>("o32");
        let o64 = k.write::<u64>("o64");
        let of = k.write::<f64>("of");
        let i = global_id(0);
        if_(i.lt(xa.len()), || {
            let x = xa.at(i);
            let y = xb.at(i);
            let xi: Expr<i32> = x.into();
            let yi: Expr<i32> = y.into();
            let yu: Expr<u64> = y.into();
            let x16: Expr<i16> = x.into();
            let x64: Expr<i64> = x16.into();
            let xf: Expr<f32> = x.into();
            let xd: Expr<f64> = xf.into();
            let yd: Expr<f64> = y.into();
            o32.set(i * 2u32, xi);
            o32.set(i * 2u32 + 1u32, yi);
            o64.set(i * 2u32, yu);
            o64.set(i * 2u32 + 1u32, x64.cast::<u64>());
            of.set(i * 2u32, xd);
            of.set(i * 2u32 + 1u32, yd);
        });
    })
    .map_err(e)?;
    let n = a.len();
    let ab = Buffer::from_slice(q, &a).map_err(e)?;
    let bb = Buffer::from_slice(q, &b).map_err(e)?;
    let o32 = Buffer::<i32>::new(q.device(), 2 * n).map_err(e)?;
    let o64 = Buffer::<u64>::new(q.device(), 2 * n).map_err(e)?;
    let of = Buffer::<f64>::new(q.device(), 2 * n).map_err(e)?;
    if !has_f64(q) {
        return Ok(());
    }
    k.launch(
        q,
        NdRange::covering(n, 48),
        args![&ab, &bb, &o32, &o64, &of],
    )
    .map_err(e)?;
    let w32: Vec<i32> = (0..n)
        .flat_map(|i| [i32::from(a[i]), i32::from(b[i])])
        .collect();
    let w64: Vec<u64> = (0..n)
        .flat_map(|i| [u64::from(b[i]), i64::from(a[i]) as u64])
        .collect();
    let wf: Vec<f64> = (0..n)
        .flat_map(|i| [f64::from(a[i]), f64::from(b[i])])
        .collect();
    expect_eq_k("into i32", &["i8", "u16"], &q.read(&o32).map_err(e)?, &w32)?;
    expect_eq_k(
        "into u64",
        &["u16", "i8 via i16, i64"],
        &q.read(&o64).map_err(e)?,
        &w64,
    )?;
    expect_eq_k(
        "into f64",
        &["i8 via f32", "u16"],
        &q.read(&of).map_err(e)?,
        &wf,
    )
}

fn mixed_operators(q: &Queue) -> Result<(), String> {
    if !has_f64(q) {
        return Ok(());
    }
    let n = 257;
    let fa = inputs::<f64>(81, n, false);
    let fb = inputs::<f32>(82, n, false);
    let ic = inputs::<i32>(83, n, true);
    let id = inputs::<i64>(84, n, true);
    let ue = inputs::<u8>(85, n, true);
    let uf = inputs::<u32>(86, n, true);
    let k = Kernel::build("mixed_operators", |k| {
        let a = k.read::<f64>("a");
        let b = k.read::<f32>("b");
        let c = k.read::<i32>("c");
        let d = k.read::<i64>("d");
        let ee = k.read::<u8>("e");
        let f = k.read::<u32>("f");
        let of = k.write::<f64>("of");
        let oi = k.write::<i64>("oi");
        let ou = k.write::<u32>("ou");
        let i = global_id(0);
        if_(i.lt(a.len()), || {
            let (a, b, c, d, ee, f) = (a.at(i), b.at(i), c.at(i), d.at(i), ee.at(i), f.at(i));
            let j = i * 4u32;
            of.set(j, a + b);
            of.set(j + 1u32, b * a);
            of.set(j + 2u32, a - c);
            of.set(j + 3u32, b / a);
            oi.set(j, d + c);
            oi.set(j + 1u32, c * d);
            oi.set(j + 2u32, d - f);
            oi.set(j + 3u32, ee + d);
            ou.set(j, f + ee);
            ou.set(j + 1u32, ee * f);
            ou.set(j + 2u32, f - ee);
            ou.set(j + 3u32, ee.cast::<u32>() + 1u32);
        });
    })
    .map_err(e)?;
    let bufs = (
        Buffer::from_slice(q, &fa).map_err(e)?,
        Buffer::from_slice(q, &fb).map_err(e)?,
        Buffer::from_slice(q, &ic).map_err(e)?,
        Buffer::from_slice(q, &id).map_err(e)?,
        Buffer::from_slice(q, &ue).map_err(e)?,
        Buffer::from_slice(q, &uf).map_err(e)?,
    );
    let of = Buffer::<f64>::new(q.device(), 4 * n).map_err(e)?;
    let oi = Buffer::<i64>::new(q.device(), 4 * n).map_err(e)?;
    let ou = Buffer::<u32>::new(q.device(), 4 * n).map_err(e)?;
    k.launch(
        q,
        NdRange::covering(n, 64),
        args![&bufs.0, &bufs.1, &bufs.2, &bufs.3, &bufs.4, &bufs.5, &of, &oi, &ou],
    )
    .map_err(e)?;
    let mut wf = Vec::new();
    let mut wi = Vec::new();
    let mut wu = Vec::new();
    for i in 0..n {
        let (a, b, c, d, ee, f) = (fa[i], fb[i] as f64, ic[i], id[i], ue[i], uf[i]);
        wf.extend([a + b, b * a, a - c as f64, b / a]);
        wi.extend([
            d.wrapping_add(c as i64),
            (c as i64).wrapping_mul(d),
            d.wrapping_sub(f as i64),
            (ee as i64).wrapping_add(d),
        ]);
        wu.extend([
            f.wrapping_add(ee as u32),
            (ee as u32).wrapping_mul(f),
            f.wrapping_sub(ee as u32),
            ee as u32 + 1,
        ]);
    }
    expect_same("f64 op f32/i32", &q.read(&of).map_err(e)?, &wf)?;
    expect_eq_k(
        "i64 op i32/u32/u8",
        &["i64+i32", "i32*i64", "i64-u32", "u8+i64"],
        &q.read(&oi).map_err(e)?,
        &wi,
    )?;
    expect_eq_k(
        "u32 op u8",
        &["u32+u8", "u8*u32", "u32-u8", "cast+1"],
        &q.read(&ou).map_err(e)?,
        &wu,
    )
}

fn f32_edges() -> Vec<f32> {
    F_EDGES.iter().map(|&x| x as f32).collect()
}

fn float_to_int(q: &Queue) -> Result<(), String> {
    let e32 = f32_edges();
    cast_int::<f32, i32>(q, "f32_to_i32", &e32, |x| x as i32)?;
    cast_int::<f32, u32>(q, "f32_to_u32", &e32, |x| x as u32)?;
    cast_int::<f32, i8>(q, "f32_to_i8", &e32, |x| x as i8)?;
    cast_int::<f32, u8>(q, "f32_to_u8", &e32, |x| x as u8)?;
    cast_int::<f32, i16>(q, "f32_to_i16", &e32, |x| x as i16)?;
    cast_int::<f32, u16>(q, "f32_to_u16", &e32, |x| x as u16)?;
    cast_int::<f32, i64>(q, "f32_to_i64", &e32, |x| x as i64)?;
    cast_int::<f32, u64>(q, "f32_to_u64", &e32, |x| x as u64)?;
    if !has_f64(q) {
        return Ok(());
    }
    cast_int::<f64, i32>(q, "f64_to_i32", &F_EDGES, |x| x as i32)?;
    cast_int::<f64, u32>(q, "f64_to_u32", &F_EDGES, |x| x as u32)?;
    cast_int::<f64, i64>(q, "f64_to_i64", &F_EDGES, |x| x as i64)?;
    cast_int::<f64, u64>(q, "f64_to_u64", &F_EDGES, |x| x as u64)?;
    cast_int::<f64, u8>(q, "f64_to_u8", &F_EDGES, |x| x as u8)?;
    cast_int::<f64, i8>(q, "f64_to_i8", &F_EDGES, |x| x as i8)
}

fn int_to_float(q: &Queue) -> Result<(), String> {
    let big: Vec<u64> = (0..64)
        .map(|s| (1u64 << s) | ((1u64 << s) >> 25) | 1)
        .collect();
    let bigi: Vec<i64> = big.iter().map(|&x| x as i64).collect();
    let bigu32: Vec<u32> = big.iter().map(|&x| x as u32 | 0x8000_0001).collect();
    cast_float::<i32, f32>(q, "i32_to_f32", &[16_777_217, -16_777_219, i32::MAX], |x| {
        x as f32
    })?;
    cast_float::<u32, f32>(q, "u32_to_f32", &bigu32, |x| x as f32)?;
    cast_float::<i64, f32>(q, "i64_to_f32", &bigi, |x| x as f32)?;
    cast_float::<u64, f32>(q, "u64_to_f32", &big, |x| x as f32)?;
    cast_float::<i8, f32>(q, "i8_to_f32", &[], |x| x as f32)?;
    cast_float::<u16, f32>(q, "u16_to_f32", &[], |x| x as f32)?;
    if !has_f64(q) {
        return Ok(());
    }
    cast_float::<i64, f64>(q, "i64_to_f64", &bigi, |x| x as f64)?;
    cast_float::<u64, f64>(q, "u64_to_f64", &big, |x| x as f64)?;
    cast_float::<u32, f64>(q, "u32_to_f64", &bigu32, |x| x as f64)?;
    cast_float::<i32, f64>(q, "i32_to_f64", &[i32::MIN], |x| x as f64)
}

fn f64_f32(q: &Queue) -> Result<(), String> {
    if !has_f64(q) {
        return Ok(());
    }
    let mut ex = F_EDGES.to_vec();
    ex.extend([
        1.0 + f32::EPSILON as f64 / 2.0,
        1.0 + 3.0 * f32::EPSILON as f64 / 2.0,
        -(1.0 + f32::EPSILON as f64 / 2.0),
        0.1,
        1.0 / 3.0,
        3.4028235677973366e38,
        3.4028236e38,
        1e39,
        -1e39,
        1e-30,
    ]);
    cast_float::<f64, f32>(q, "f64_to_f32", &ex, |x| x as f32)?;
    cast_float::<f32, f64>(q, "f32_to_f64", &f32_edges(), |x| x as f64)
}

fn to_bool_u32<A: Value>(x: Expr<A>) -> Expr<u32> {
    x.cast::<bool>().cast::<u32>()
}

fn bools(q: &Queue) -> Result<(), String> {
    let xi = inputs::<i32>(91, 200, true);
    let got = map1(q, "i32_to_bool", &xi, to_bool_u32::<i32>)?;
    let want: Vec<u32> = xi.iter().map(|&x| (x != 0) as u32).collect();
    expect_eq("i32 as bool", &got, &want)?;
    let xu = inputs::<u8>(92, 200, true);
    let got = map1(q, "u8_to_bool", &xu, to_bool_u32::<u8>)?;
    let want: Vec<u32> = xu.iter().map(|&x| (x != 0) as u32).collect();
    expect_eq("u8 as bool", &got, &want)?;
    let mut xf = inputs::<f32>(93, 200, true);
    xf.extend([1e-30, -1e-30, f32::MIN_POSITIVE]);
    let got = map1(q, "f32_to_bool", &xf, to_bool_u32::<f32>)?;
    let want: Vec<u32> = xf.iter().map(|&x| (x != 0.0) as u32).collect();
    expect_eq("f32 as bool (NaN is true, -0 is false)", &got, &want)?;
    // bool to numbers: 0 or 1.
    let got = map1(q, "bool_to_numbers", &xi, |x: Expr<i32>| {
        let b = x.gt(0i32);
        b.cast::<f32>() * 2.0f32
            + b.cast::<i32>().cast::<f32>()
            + b.not().cast::<u8>().cast::<f32>() * 10.0f32
    })?;
    let want: Vec<f32> = xi
        .iter()
        .map(|&x| {
            let b = x > 0;
            b as u8 as f32 * 2.0 + b as i32 as f32 + (!b) as u8 as f32 * 10.0
        })
        .collect();
    expect_eq("bool as f32/i32/u8", &got, &want)
}

fn bitcasts(q: &Queue) -> Result<(), String> {
    let mut r = super::Rng::new(95);
    let mut bits: Vec<u32> = (0..300).map(|_| r.next_u64() as u32).collect();
    bits.extend([0, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0x3f80_0000, 1]);
    // u32 -> f32 -> u32 in one kernel keeps every bit pattern, NaN payloads included.
    let got = map1(q, "bitcast_roundtrip32", &bits, |x: Expr<u32>| {
        (x.bitcast::<f32>().bitcast::<u32>()) ^ 0x5555_5555u32
    })?;
    let want: Vec<u32> = bits.iter().map(|&b| b ^ 0x5555_5555).collect();
    expect_eq("u32 -> f32 -> u32", &got, &want)?;
    let fs = inputs::<f32>(96, 300, true);
    let got = map1(q, "bitcast_f32_u32", &fs, |x: Expr<f32>| x.bitcast::<u32>())?;
    let want: Vec<u32> = fs.iter().map(|x| x.to_bits()).collect();
    // NaN bit patterns may differ only in the payload on some devices: compare NaN-ness.
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let (gf, wf) = (f32::from_bits(g), f32::from_bits(w));
        if !(g == w || gf.is_nan() && wf.is_nan()) {
            return Err(format!(
                "f32 -> u32 [{i}] ({:?}): got {g:#x}, expected {w:#x}",
                fs[i]
            ));
        }
    }
    let ok: Vec<u32> = bits
        .iter()
        .copied()
        .filter(|&b| !f32::from_bits(b).is_nan())
        .collect();
    let got = map1(q, "bitcast_u32_f32", &ok, |x: Expr<u32>| {
        x.bitcast::<f32>() * 1.0f32
    })?;
    let want: Vec<f32> = ok.iter().map(|&b| f32::from_bits(b)).collect();
    let subnormal = |x: &f32| x.is_subnormal();
    let (g2, w2): (Vec<f32>, Vec<f32>) = got
        .iter()
        .zip(&want)
        .filter(|(_, w)| !subnormal(w))
        .map(|(g, w)| (*g, *w))
        .unzip();
    expect_same("u32 -> f32", &g2, &w2)?;
    let ints = inputs::<i32>(97, 100, true);
    let got = map1(q, "bitcast_i32_f32_u32", &ints, |x: Expr<i32>| {
        x.bitcast::<u32>().bitcast::<i32>() + 1i32
    })?;
    let want: Vec<i32> = ints.iter().map(|x| x.wrapping_add(1)).collect();
    expect_eq("i32 -> u32 -> i32", &got, &want)?;
    if !has_f64(q) {
        return Ok(());
    }
    let mut b64: Vec<u64> = (0..300).map(|_| r.next_u64()).collect();
    b64.extend([0, 1 << 63, 0x7ff0_0000_0000_0000, 0x3ff0_0000_0000_0000]);
    let got = map1(q, "bitcast_roundtrip64", &b64, |x: Expr<u64>| {
        x.bitcast::<f64>().bitcast::<u64>() ^ 0xAAAA_5555_0000_FFFFu64
    })?;
    let want: Vec<u64> = b64.iter().map(|&b| b ^ 0xAAAA_5555_0000_FFFF).collect();
    expect_eq("u64 -> f64 -> u64", &got, &want)?;
    let fd = inputs::<f64>(98, 300, true);
    let got = map1(q, "bitcast_f64_u64", &fd, |x: Expr<f64>| x.bitcast::<u64>())?;
    for (i, (&g, w)) in got.iter().zip(fd.iter().map(|x| x.to_bits())).enumerate() {
        if !(g == w || f64::from_bits(g).is_nan() && f64::from_bits(w).is_nan()) {
            return Err(format!(
                "f64 -> u64 [{i}] ({:?}): got {g:#x}, expected {w:#x}",
                fd[i]
            ));
        }
    }
    let okd: Vec<u64> = b64
        .iter()
        .copied()
        .filter(|&b| f64::from_bits(b).is_normal() || b == 0)
        .collect();
    let got = map1(q, "bitcast_u64_f64", &okd, |x: Expr<u64>| {
        x.bitcast::<f64>() + 0.0f64
    })?;
    let want: Vec<f64> = okd.iter().map(|&b| f64::from_bits(b) + 0.0).collect();
    expect_same("u64 -> f64", &got, &want)
}

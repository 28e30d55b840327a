//! Half precision `f16`: arithmetic bit for bit against the host (`half` crate conversions of
//! `f32` results, which round once more and so give the once-rounded `f16` result), conversions
//! both ways over every `f16` (NaN, infinities, subnormals, saturation), vectors, a kernel that
//! keeps `f16` in memory and computes in `f32`, and transcendental built-ins within 1 ulp of
//! `f16`. On a device without `f16` (an OpenCL device without `cl_khr_fp16`, like PoCL here)
//! each case checks instead that the launch fails with the typed error before compiling, and
//! is reported as unsupported.

use super::{case, check, map2, run3, Case, Rng};
use strata::f16;
use strata::ir::eval::f16_from_f64;
use strata::prelude::*;

pub(super) fn cases() -> Vec<Case> {
    vec![
        case("half/arith", arith),
        case("half/convert", convert),
        case("half/vectors", vectors),
        case("half/storage_widen", storage_widen),
        case("half/math_bound", math_bound),
    ]
}

/// The error a launch of an `f16` kernel gives on a device without `f16`.
const UNSUPPORTED: &str =
    "the kernel uses f16, which the device does not support (OpenCL needs the cl_khr_fp16 extension)";

/// `Some(results)` where the device has `f16`; `None` where it has not and the launch failed
/// with exactly the typed error (the case is then reported unsupported); an error otherwise.
fn on_device<T>(q: &Queue, r: Result<T, String>) -> Result<Option<T>, String> {
    let has = q.device().info().supports_f16;
    match r {
        Ok(v) if has => Ok(Some(v)),
        Ok(_) => Err("an f16 kernel ran on a device without f16".into()),
        Err(m) if !has && m.contains(UNSUPPORTED) && m.contains("cannot run on") => {
            super::unsupported("f16");
            Ok(None)
        }
        Err(m) => Err(m),
    }
}

/// Same bits, or both NaN.
fn same(a: f16, b: f16) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn expect_bits(
    what: &str,
    got: &[f16],
    want: &[f16],
    args: &dyn Fn(usize) -> String,
) -> Result<(), String> {
    check(got.len() == want.len(), || {
        format!("{what}: {} results, want {}", got.len(), want.len())
    })?;
    for i in 0..got.len() {
        check(same(got[i], want[i]), || {
            format!(
                "{what}({}) = {:?} (0x{:04x}), want {:?} (0x{:04x})",
                args(i),
                got[i],
                got[i].to_bits(),
                want[i],
                want[i].to_bits()
            )
        })?;
    }
    Ok(())
}

/// Every f16 (NaNs, infinities, subnormals, both zeros).
fn every_f16() -> Vec<f16> {
    (0..=u16::MAX).map(f16::from_bits).collect()
}

/// Random f16 of every kind, and `fma` triples where the `f32` `fma` rounded to `f16` would be
/// wrong (its rounding makes a tie): the backends must get those right too.
fn triples(seed: u64, n: usize) -> (Vec<f16>, Vec<f16>, Vec<f16>) {
    let mut r = Rng::new(seed);
    let any = |r: &mut Rng| f16::from_bits(r.next_u64() as u16);
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        a.push(any(&mut r));
        b.push(any(&mut r));
        c.push(any(&mut r));
    }
    let mut hard = 0;
    while hard < 64 {
        let (x, y, z) = (any(&mut r), any(&mut r), any(&mut r));
        let naive = f16::from_f32(x.to_f32().mul_add(y.to_f32(), z.to_f32()));
        if !same(naive, fma(x, y, z)) {
            a.push(x);
            b.push(y);
            c.push(z);
            hard += 1;
        }
    }
    (a, b, c)
}

/// `fma` in `f64` (exact but for terms far apart, see `ir::eval::f16_special`), rounded once.
fn fma(x: f16, y: f16, z: f16) -> f16 {
    f16_from_f64(x.to_f64().mul_add(y.to_f64(), z.to_f64()))
}

/// An `f32` result rounded to `f16` by the `half` crate.
fn via_f32(v: f32) -> f16 {
    f16::from_f32(v)
}

fn arith(q: &Queue) -> Result<(), String> {
    let (a, b, c) = triples(1601, 4000);
    let r = run3::<f16, 7>(q, "half_arith", &a, &b, &c, |x, y, z| {
        [x + y, x - y, x * y, x / y, x % y, x.sqrt(), x.fma(y, z)]
    });
    let Some(got) = on_device(q, r)? else {
        return Ok(());
    };
    type Op = fn(f16, f16, f16) -> f16;
    let ops: [(&str, Op); 7] = [
        ("+", |x, y, _| via_f32(x.to_f32() + y.to_f32())),
        ("-", |x, y, _| via_f32(x.to_f32() - y.to_f32())),
        ("*", |x, y, _| via_f32(x.to_f32() * y.to_f32())),
        ("/", |x, y, _| via_f32(x.to_f32() / y.to_f32())),
        ("%", |x, y, _| via_f32(x.to_f32() % y.to_f32())),
        ("sqrt", |x, _, _| via_f32(x.to_f32().sqrt())),
        ("fma", fma),
    ];
    let args = |i: usize| format!("{:?}, {:?}, {:?}", a[i], b[i], c[i]);
    for (j, (name, op)) in ops.iter().enumerate() {
        let g: Vec<f16> = got.iter().skip(j).step_by(7).copied().collect();
        let w: Vec<f16> = (0..a.len()).map(|i| op(a[i], b[i], c[i])).collect();
        expect_bits(name, &g, &w, &args)?;
    }
    Ok(())
}

fn convert(q: &Queue) -> Result<(), String> {
    let all = every_f16();
    let mut r = Rng::new(1602);
    let n = all.len();
    // f32 of every f16, near its neighbours' midpoints, beyond the largest, and random bits.
    let f: Vec<f32> = (0..n)
        .map(|i| match i % 4 {
            0 => all[i].to_f32(),
            1 => all[i].to_f32() * (1.0 + 1.0 / 2048.0),
            2 => f32::from_bits(r.next_u64() as u32),
            _ => (r.f64_in(-70000.0, 70000.0)) as f32,
        })
        .collect();
    // f64 at midpoints and just off them (where `half`'s own f64 conversion misrounds).
    let d: Vec<f64> = (0..n)
        .map(|i| {
            let x = all[i].to_f64();
            let up = f16::from_bits(all[i].to_bits().wrapping_add(1)).to_f64();
            match i % 3 {
                0 => (x + up) / 2.0,
                1 => (x + up) / 2.0 * (1.0 + 1e-12),
                _ => f64::from_bits(r.next_u64()),
            }
        })
        .collect();
    let ints: Vec<i32> = (0..n)
        .map(|i| match i % 3 {
            0 => i as i32 - 32768,
            1 => r.next_u64() as i32,
            _ => 65504 + (i as i32 % 40) - 20,
        })
        .collect();
    let results = (|| {
        Ok::<_, String>((
            map2::<f16, f16, f32>(q, "half_to_f32", &all, &all, |x, _| x.into())?,
            map2::<f16, f16, f64>(q, "half_to_f64", &all, &all, |x, _| x.into())?,
            map2::<f16, f16, i32>(q, "half_to_i32", &all, &all, |x, _| x.cast::<i32>())?,
            map2::<f16, f16, u8>(q, "half_to_u8", &all, &all, |x, _| x.cast::<u8>())?,
            map2::<f16, f16, u8>(q, "half_to_bool", &all, &all, |x, _| {
                x.cast::<bool>().cast::<u8>()
            })?,
            map2::<f32, f16, f16>(q, "half_from_f32", &f, &all, |x, _| x.cast::<f16>())?,
            map2::<f64, f16, f16>(q, "half_from_f64", &d, &all, |x, _| x.cast::<f16>())?,
            map2::<i32, f16, f16>(q, "half_from_i32", &ints, &all, |x, _| x.cast::<f16>())?,
        ))
    })();
    let Some((to_f, to_d, to_i, to_u8, to_b, from_f, from_d, from_i)) = on_device(q, results)?
    else {
        return Ok(());
    };
    for i in 0..n {
        let x = all[i];
        let wide = x.to_f32();
        check(
            to_f[i].to_bits() == wide.to_bits() || x.is_nan() && to_f[i].is_nan(),
            || format!("f32::from({x:?}) = {:?}", to_f[i]),
        )?;
        check(
            to_d[i].to_bits() == x.to_f64().to_bits() || x.is_nan() && to_d[i].is_nan(),
            || format!("f64::from({x:?}) = {:?}", to_d[i]),
        )?;
        check(to_i[i] == wide as i32, || {
            format!("{x:?} as i32 = {}, want {}", to_i[i], wide as i32)
        })?;
        check(to_u8[i] == wide as u8, || {
            format!("{x:?} as u8 = {}, want {}", to_u8[i], wide as u8)
        })?;
        check(to_b[i] == (wide != 0.0) as u8, || {
            format!("{x:?} as bool = {}", to_b[i])
        })?;
    }
    let want: Vec<f16> = f.iter().map(|&v| f16::from_f32(v)).collect();
    expect_bits("f16 from f32", &from_f, &want, &|i| format!("{:e}", f[i]))?;
    let want: Vec<f16> = d.iter().map(|&v| f16_from_f64(v)).collect();
    expect_bits("f16 from f64", &from_d, &want, &|i| format!("{:e}", d[i]))?;
    let want: Vec<f16> = ints.iter().map(|&v| f16::from_f32(v as f32)).collect();
    expect_bits("f16 from i32", &from_i, &want, &|i| ints[i].to_string())
}

fn vectors(q: &Queue) -> Result<(), String> {
    let (a, b, c) = triples(1603, 900);
    let v3 =
        |v: &[f16]| -> Vec<[f16; 3]> { v.chunks_exact(3).map(|w| [w[0], w[1], w[2]]).collect() };
    let (va, vb, vc) = (v3(&a), v3(&b), v3(&c));
    let r = run3::<[f16; 3], 4>(q, "half_vec3", &va, &vb, &vc, |x, y, z| {
        [x + y, x * y, x.fma(y, z), x.min(y)]
    });
    let Some(got) = on_device(q, r)? else {
        return Ok(());
    };
    type Op = fn(f16, f16, f16) -> f16;
    let ops: [(&str, Op); 4] = [
        ("+", |x, y, _| via_f32(x.to_f32() + y.to_f32())),
        ("*", |x, y, _| via_f32(x.to_f32() * y.to_f32())),
        ("fma", fma),
        ("min", |x, y, _| via_f32(x.to_f32().min(y.to_f32()))),
    ];
    for (j, (name, op)) in ops.iter().enumerate() {
        for i in 0..va.len() {
            let g = got[i * 4 + j];
            for k in 0..3 {
                let (x, y, z) = (va[i][k], vb[i][k], vc[i][k]);
                let w = op(x, y, z);
                // min(0, -0) may give either zero.
                let zeros = *name == "min" && g[k].to_f32() == 0.0 && w.to_f32() == 0.0;
                check(same(g[k], w) || zeros, || {
                    format!(
                        "{name}({x:?}, {y:?}, {z:?}) component {k} = {:?}, want {w:?}",
                        g[k]
                    )
                })?;
            }
        }
    }
    Ok(())
}

/// `f16` in memory, `f32` arithmetic: the mixed product widens the `f16` implicitly.
fn storage_widen(q: &Queue) -> Result<(), String> {
    let mut r = Rng::new(1604);
    let h: Vec<f16> = (0..3000)
        .map(|_| f16::from_bits(r.next_u64() as u16))
        .collect();
    let s: Vec<f32> = (0..3000).map(|_| r.f32_in(-4.0, 4.0)).collect();
    let got = map2::<f16, f32, f32>(q, "half_storage_widen", &h, &s, |x, y| x * y + 1.0f32);
    let Some(got) = on_device(q, got)? else {
        return Ok(());
    };
    for i in 0..h.len() {
        let w = h[i].to_f32() * s[i] + 1.0;
        check(
            got[i].to_bits() == w.to_bits() || w.is_nan() && got[i].is_nan(),
            || format!("{:?} * {} + 1 = {}, want {w}", h[i], s[i], got[i]),
        )?;
    }
    Ok(())
}

/// Distance in `f16` steps (bits ordered as the values are).
fn ulps(a: f16, b: f16) -> u32 {
    let key = |x: f16| {
        let b = x.to_bits() as i32;
        if b & 0x8000 != 0 {
            -(b & 0x7fff)
        } else {
            b
        }
    };
    key(a).abs_diff(key(b))
}

fn math_bound(q: &Queue) -> Result<(), String> {
    let all = every_f16();
    let r = run3::<f16, 5>(q, "half_math", &all, &all, &all, |x, _, _| {
        [x.exp(), x.log(), x.sin(), x.tanh(), x.cbrt()]
    });
    let Some(got) = on_device(q, r)? else {
        return Ok(());
    };
    type Exact = fn(f64) -> f64;
    let fns: [(&str, Exact); 5] = [
        ("exp", f64::exp),
        ("log", f64::ln),
        ("sin", f64::sin),
        ("tanh", f64::tanh),
        ("cbrt", f64::cbrt),
    ];
    for (j, (name, exact)) in fns.iter().enumerate() {
        for (i, &x) in all.iter().enumerate() {
            let g = got[i * 5 + j];
            let w = f16_from_f64(exact(x.to_f64()));
            let ok = if w.is_nan() {
                g.is_nan()
            } else {
                !g.is_nan() && ulps(g, w) <= 1
            };
            check(ok, || {
                format!("{name}({x:?}) = {g:?}, want {w:?} within 1 ulp")
            })?;
        }
    }
    Ok(())
}

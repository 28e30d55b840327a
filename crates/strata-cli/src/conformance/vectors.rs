//! Vectors `[T; 2]`, `[T; 3]` and `[T; 4]`: construction, components, elementwise and
//! vector-scalar operators, geometric functions, and buffers of vectors.

use super::{
    case, e, expect_close, expect_eq, expect_eq_k, expect_same, has_f64, inputs, map1, map2, Case,
    Rng,
};
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("vector/construct_and_components", construct),
        case("vector/f32x4_elementwise", f32x4_elementwise),
        case("vector/vector_scalar_ops", vector_scalar),
        case("vector/int_vectors", int_vectors),
        case("vector/geometric_f32", geometric_f32),
        case("vector/geometric_f64", geometric_f64),
        case("vector/buffers_of_vectors", vector_buffers),
        case("vector/buffers_of_3_vectors", vector3_buffers),
        case("vector/casts_and_math", vector_casts_math),
        case("swizzle/reads", swizzle_reads),
        case("swizzle/halves", swizzle_halves),
        case("swizzle/writes", swizzle_writes),
    ]
}

fn rand4(seed: u64, n: usize, lo: f32, hi: f32) -> Vec<[f32; 4]> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| [0; 4].map(|_| r.f32_in(lo, hi))).collect()
}

fn construct(q: &Queue) -> Result<(), String> {
    let xs = inputs::<i32>(101, 333, true);
    let got = map1(q, "vec_construct", &xs, |x: Expr<i32>| {
        let v2 = vec2::<i32>(x, x + 1i32);
        let v3 = vec3::<i32>(x * 2i32, lit(7i32), -x);
        let v4 = vec4::<i32>(x, x ^ 0x0f0fi32, lit(-3i32), x >> 3i32);
        let s: Expr<[i32; 4]> = splat(x - 5i32);
        let s3: Expr<[i32; 3]> = splat(x);
        // Mix every component so that a wrong one changes the result.
        let a = v2.x() * 3i32 + v2.y() * 5i32;
        let b = v3.x() * 7i32 + v3.y() * 11i32 + v3.z() * 13i32;
        let c = v4.x() * 17i32 + v4.y() * 19i32 + v4.z() * 23i32 + v4.w() * 29i32;
        let d = s.get(0) + s.get(1) * 2i32 + s.get(2) * 3i32 + s.get(3) * 4i32;
        let f = s3.z() * 31i32;
        vec4::<i32>(a, b, c, d + f)
    })?;
    let want: Vec<[i32; 4]> = xs
        .iter()
        .map(|&x| {
            let v2 = [x, x.wrapping_add(1)];
            let v3 = [x.wrapping_mul(2), 7, x.wrapping_neg()];
            let v4 = [x, x ^ 0x0f0f, -3, x >> 3];
            let s = x.wrapping_sub(5);
            let a = v2[0].wrapping_mul(3).wrapping_add(v2[1].wrapping_mul(5));
            let b = v3[0]
                .wrapping_mul(7)
                .wrapping_add(v3[1].wrapping_mul(11))
                .wrapping_add(v3[2].wrapping_mul(13));
            let c = v4[0]
                .wrapping_mul(17)
                .wrapping_add(v4[1].wrapping_mul(19))
                .wrapping_add(v4[2].wrapping_mul(23))
                .wrapping_add(v4[3].wrapping_mul(29));
            let d = s
                .wrapping_add(s.wrapping_mul(2))
                .wrapping_add(s.wrapping_mul(3))
                .wrapping_add(s.wrapping_mul(4));
            [a, b, c, d.wrapping_add(x.wrapping_mul(31))]
        })
        .collect();
    expect_eq("vector components", &got, &want)
}

/// `v` with its components picked by `idx` (the host side of a swizzle).
fn pick<const N: usize, const M: usize>(v: [i32; N], idx: [usize; M]) -> [i32; M] {
    idx.map(|i| v[i])
}

/// Named and indexed swizzles of 2-, 3- and 4-vectors, with repeated components, in every
/// output width, each result folded into the output so that one wrong component shows.
fn swizzle_reads(q: &Queue) -> Result<(), String> {
    let xs = inputs::<i32>(171, 257, true);
    let got = map1(q, "swizzle_reads", &xs, |x: Expr<i32>| {
        let v4 = vec4::<i32>(x, x ^ 0x5a5ai32, x >> 2i32, lit(9i32) - x);
        let v3 = vec3::<i32>(x * 3i32, x + 100i32, -x);
        let v2 = vec2::<i32>(x & 0xffi32, x | 7i32);
        let fold4 = |v: Expr<[i32; 4]>| v.x() * 3i32 + v.y() * 5i32 + v.z() * 7i32 + v.w() * 11i32;
        let fold3 = |v: Expr<[i32; 3]>| v.x() * 3i32 + v.y() * 5i32 + v.z() * 7i32;
        let fold2 = |v: Expr<[i32; 2]>| v.x() * 3i32 + v.y() * 5i32;
        let a = fold4(v4.wzyx()) + fold4(v4.xxyy()) * 2i32 + fold4(v4.zwxy()) * 4i32;
        let b = fold3(v4.zyx()) + fold3(v4.www()) * 2i32 + fold2(v4.wy()) * 4i32;
        let c = fold4(v3.zzyx()) + fold3(v3.yzx()) * 2i32 + fold2(v3.zx()) * 4i32;
        let d = fold4(v2.yxyx()) + fold3(v2.yyx()) * 2i32 + fold2(v2.yx()) * 4i32;
        let e = fold4(v4.swizzle([3, 3, 0, 2])) + fold2(v3.swizzle([2, 2])) * 2i32;
        vec4::<i32>(a, b + e, c, d)
    })?;
    let f4 = |v: [i32; 4]| {
        v[0].wrapping_mul(3)
            .wrapping_add(v[1].wrapping_mul(5))
            .wrapping_add(v[2].wrapping_mul(7))
            .wrapping_add(v[3].wrapping_mul(11))
    };
    let f3 = |v: [i32; 3]| {
        v[0].wrapping_mul(3)
            .wrapping_add(v[1].wrapping_mul(5))
            .wrapping_add(v[2].wrapping_mul(7))
    };
    let f2 = |v: [i32; 2]| v[0].wrapping_mul(3).wrapping_add(v[1].wrapping_mul(5));
    let want: Vec<[i32; 4]> = xs
        .iter()
        .map(|&x| {
            let v4 = [x, x ^ 0x5a5a, x >> 2, 9i32.wrapping_sub(x)];
            let v3 = [x.wrapping_mul(3), x.wrapping_add(100), x.wrapping_neg()];
            let v2 = [x & 0xff, x | 7];
            let a = f4(pick(v4, [3, 2, 1, 0]))
                .wrapping_add(f4(pick(v4, [0, 0, 1, 1])).wrapping_mul(2))
                .wrapping_add(f4(pick(v4, [2, 3, 0, 1])).wrapping_mul(4));
            let b = f3(pick(v4, [2, 1, 0]))
                .wrapping_add(f3(pick(v4, [3, 3, 3])).wrapping_mul(2))
                .wrapping_add(f2(pick(v4, [3, 1])).wrapping_mul(4));
            let c = f4(pick(v3, [2, 2, 1, 0]))
                .wrapping_add(f3(pick(v3, [1, 2, 0])).wrapping_mul(2))
                .wrapping_add(f2(pick(v3, [2, 0])).wrapping_mul(4));
            let d = f4(pick(v2, [1, 0, 1, 0]))
                .wrapping_add(f3(pick(v2, [1, 1, 0])).wrapping_mul(2))
                .wrapping_add(f2(pick(v2, [1, 0])).wrapping_mul(4));
            let e = f4(pick(v4, [3, 3, 0, 2])).wrapping_add(f2(pick(v3, [2, 2])).wrapping_mul(2));
            [a, b.wrapping_add(e), c, d]
        })
        .collect();
    expect_eq("swizzles", &got, &want)
}

/// Swizzle writes into vector variables: named (`set_zx`, `set_wyz`, `set_yx`), indexed, and a
/// full permutation, inside device control flow.
fn swizzle_writes(q: &Queue) -> Result<(), String> {
    let xs = inputs::<i32>(173, 201, true);
    let got = map1(q, "swizzle_writes", &xs, |x: Expr<i32>| {
        let a = var_named("a", vec4::<i32>(x, x + 1i32, x * 2i32, lit(5i32)));
        let b = var_named("b", vec3::<i32>(-x, x ^ 3i32, lit(8i32)));
        a.set_zx(vec2::<i32>(x * 7i32, lit(-2i32)));
        if_(x.gt(0i32), || {
            a.set_wyz(b.get());
            b.set_swizzle([2, 0], vec2::<i32>(x >> 1i32, lit(11i32)));
        });
        let c = var_named("c", vec2::<i32>(x, lit(4i32)));
        c.set_yx(c.get());
        let d = var_named("d", a.get());
        d.set_wzyx(a.get());
        vec4::<i32>(
            d.get().x() * 3i32 + d.get().y() * 5i32,
            d.get().z() * 7i32 + d.get().w() * 11i32,
            b.get().x() * 3i32 + b.get().y() * 5i32 + b.get().z() * 7i32,
            c.get().x() * 3i32 + c.get().y() * 5i32,
        )
    })?;
    let want: Vec<[i32; 4]> = xs
        .iter()
        .map(|&x| {
            let mut a = [x, x.wrapping_add(1), x.wrapping_mul(2), 5];
            let mut b = [x.wrapping_neg(), x ^ 3, 8];
            a[2] = x.wrapping_mul(7);
            a[0] = -2;
            if x > 0 {
                a[3] = b[0];
                a[1] = b[1];
                a[2] = b[2];
                b[2] = x >> 1;
                b[0] = 11;
            }
            let c = [4, x];
            let d = [a[3], a[2], a[1], a[0]];
            let w =
                |u: i32, v: i32, p: i32, r: i32| u.wrapping_mul(p).wrapping_add(v.wrapping_mul(r));
            [
                w(d[0], d[1], 3, 5),
                w(d[2], d[3], 7, 11),
                w(b[0], b[1], 3, 5).wrapping_add(b[2].wrapping_mul(7)),
                w(c[0], c[1], 3, 5),
            ]
        })
        .collect();
    expect_eq("swizzle writes", &got, &want)
}

/// `lo`, `hi`, `even` and `odd` of 4- and 2-vectors.
fn swizzle_halves(q: &Queue) -> Result<(), String> {
    let xs = inputs::<i32>(172, 129, true);
    let got = map1(q, "swizzle_halves", &xs, |x: Expr<i32>| {
        let v = vec4::<i32>(x, x * 3i32, x ^ 0x77i32, lit(1i32) - x);
        let h = vec2::<i32>(x >> 1i32, x + 5i32);
        let lo = v.lo();
        let hi = v.hi();
        let ev = v.even();
        let od = v.odd();
        vec4::<i32>(
            lo.x() * 3i32 + lo.y() * 5i32,
            hi.x() * 3i32 + hi.y() * 5i32,
            ev.x() * 3i32 + ev.y() * 5i32 + h.lo() * 7i32 + h.even() * 11i32,
            od.x() * 3i32 + od.y() * 5i32 + h.hi() * 7i32 + h.odd() * 11i32,
        )
    })?;
    let f2 = |a: i32, b: i32| a.wrapping_mul(3).wrapping_add(b.wrapping_mul(5));
    let want: Vec<[i32; 4]> = xs
        .iter()
        .map(|&x| {
            let v = [x, x.wrapping_mul(3), x ^ 0x77, 1i32.wrapping_sub(x)];
            let h = [x >> 1, x.wrapping_add(5)];
            [
                f2(v[0], v[1]),
                f2(v[2], v[3]),
                f2(v[0], v[2])
                    .wrapping_add(h[0].wrapping_mul(7))
                    .wrapping_add(h[0].wrapping_mul(11)),
                f2(v[1], v[3])
                    .wrapping_add(h[1].wrapping_mul(7))
                    .wrapping_add(h[1].wrapping_mul(11)),
            ]
        })
        .collect();
    expect_eq("vector halves", &got, &want)
}

/// A name, a device operation and the host operation it must match componentwise.
type ElementwiseOp = (
    &'static str,
    fn(Expr<[f32; 4]>, Expr<[f32; 4]>) -> Expr<[f32; 4]>,
    fn(f32, f32) -> f32,
);

fn f32x4_elementwise(q: &Queue) -> Result<(), String> {
    let a = rand4(111, 300, -100.0, 100.0);
    let mut b = rand4(112, 300, -100.0, 100.0);
    b[0] = [0.0, -0.0, f32::INFINITY, f32::NAN];
    let ops: [ElementwiseOp; 8] = [
        ("add", |x, y| x + y, |x, y| x + y),
        ("sub", |x, y| x - y, |x, y| x - y),
        ("mul", |x, y| x * y, |x, y| x * y),
        ("div", |x, y| x / y, |x, y| x / y),
        ("neg", |x, _| -x, |x, _| -x),
        ("min", |x, y| x.min(y), |x, y| x.min(y)),
        ("max", |x, y| x.max(y), |x, y| x.max(y)),
        (
            "lt_mask",
            |x, y| x.lt(y).cast::<[f32; 4]>() + x.ge(y).cast::<[f32; 4]>() * lit(2.0f32),
            |x, y| (x < y) as u8 as f32 + (x >= y) as u8 as f32 * 2.0,
        ),
    ];
    for (name, dev, host) in ops {
        let got = map2(q, name, &a, &b, dev)?;
        let want: Vec<[f32; 4]> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| [0, 1, 2, 3].map(|c| host(x[c], y[c])))
            .collect();
        let g: Vec<f32> = got.iter().flatten().copied().collect();
        let w: Vec<f32> = want.iter().flatten().copied().collect();
        if name == "min" || name == "max" {
            // The sign of a zero result of min/max is left open by IEEE minNum/maxNum.
            expect_close(&format!("[f32; 4] {name}"), &g, &w, 0, 0.0)?;
        } else {
            expect_same(&format!("[f32; 4] {name}"), &g, &w)?;
        }
    }
    Ok(())
}

fn vector_scalar(q: &Queue) -> Result<(), String> {
    let a = rand4(121, 257, -50.0, 50.0);
    let s = inputs::<f32>(122, 257, false);
    let got = map2(
        q,
        "vec_scalar",
        &a,
        &s,
        |v: Expr<[f32; 4]>, s: Expr<f32>| ((v * s + s) - s * 2.0f32) / (s.abs() + 1.0f32),
    )?;
    let want: Vec<[f32; 4]> = a
        .iter()
        .zip(&s)
        .map(|(v, &s)| v.map(|x| ((x * s + s) - s * 2.0) / (s.abs() + 1.0)))
        .collect();
    let g: Vec<f32> = got.iter().flatten().copied().collect();
    let w: Vec<f32> = want.iter().flatten().copied().collect();
    expect_same("(v * s + s - 2s) / (|s| + 1)", &g, &w)
}

fn int_vectors(q: &Queue) -> Result<(), String> {
    let mut r = Rng::new(131);
    let a: Vec<[u32; 4]> = (0..300)
        .map(|_| [0; 4].map(|_| r.next_u64() as u32))
        .collect();
    let b: Vec<[u32; 4]> = (0..300)
        .map(|_| [0; 4].map(|_| r.next_u64() as u32))
        .collect();
    let got = map2(
        q,
        "u32x4_ops",
        &a,
        &b,
        |x: Expr<[u32; 4]>, y: Expr<[u32; 4]>| {
            let t = (x & y) ^ (x | (y << splat(5u32))) ^ !(x >> y);
            t + x.clz() + y.popcount() + x.rotate(y) + x.max(y) - x.min(y) + x.mul_hi(y)
        },
    )?;
    let want: Vec<[u32; 4]> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| {
            [0, 1, 2, 3].map(|c| {
                let (x, y) = (x[c], y[c]);
                let t = (x & y) ^ (x | (y << 5)) ^ !(x >> (y % 32));
                t.wrapping_add(x.leading_zeros())
                    .wrapping_add(y.count_ones())
                    .wrapping_add(x.rotate_left(y % 32))
                    .wrapping_add(x.max(y))
                    .wrapping_sub(x.min(y))
                    .wrapping_add(((x as u64 * y as u64) >> 32) as u32)
            })
        })
        .collect();
    expect_eq("[u32; 4] ops", &got, &want)?;
    let c: Vec<[i32; 2]> = (0..300)
        .map(|_| [r.next_u64() as i32, (r.below(200) as i32) - 100])
        .collect();
    let got = map1(q, "i32x2_ops", &c, |v: Expr<[i32; 2]>| {
        let w = vec2::<i32>(v.y(), v.x());
        let m = v.lt(w).cast::<[i32; 2]>();
        m * (v * w) + (splat::<i32, 2>(1i32) - m) * (v - w) + v.abs() + splat::<i32, 2>(3i32)
    })?;
    let want: Vec<[i32; 2]> = c
        .iter()
        .map(|v| {
            let w = [v[1], v[0]];
            [0, 1].map(|k| {
                let s = if v[k] < w[k] {
                    v[k].wrapping_mul(w[k])
                } else {
                    v[k].wrapping_sub(w[k])
                };
                s.wrapping_add(v[k].wrapping_abs()).wrapping_add(3)
            })
        })
        .collect();
    expect_eq("[i32; 2] ops", &got, &want)?;
    let d: Vec<[u8; 4]> = (0..300)
        .map(|_| [0; 4].map(|_| r.next_u64() as u8))
        .collect();
    let got = map1(q, "u8x4_wrap", &d, |v: Expr<[u8; 4]>| {
        v + vec4::<u8>(lit(200u8), lit(100u8), lit(1u8), lit(255u8)) * splat(3u8)
    })?;
    let want: Vec<[u8; 4]> = d
        .iter()
        .map(|v| {
            let k = [200u8, 100, 1, 255];
            [0, 1, 2, 3].map(|c| v[c].wrapping_add(k[c].wrapping_mul(3)))
        })
        .collect();
    expect_eq("[u8; 4] wrap-around", &got, &want)
}

macro_rules! geometric {
    ($name:ident, $t:ident, $ulps:expr, $abs:expr) => {
        fn $name(q: &Queue) -> Result<(), String> {
            type F = $t;
            if std::mem::size_of::<F>() == 8 && !has_f64(q) {
                return Ok(());
            }
            let mut r = Rng::new(141);
            let a: Vec<[F; 4]> = (0..300)
                .map(|_| [0; 4].map(|_| r.f64_in(-10.0, 10.0) as F))
                .collect();
            let b: Vec<[F; 4]> = (0..300)
                .map(|_| [0; 4].map(|_| r.f64_in(-10.0, 10.0) as F))
                .collect();
            let k = Kernel::build(concat!("geometric_", stringify!($t)), |k| {
                let xa = k.read::<[F; 4]>("a");
                let xb = k.read::<[F; 4]>("b");
                let out = k.write::<F>("out");
                let vout = k.write::<[F; 4]>("vout");
                let i = global_id(0);
                if_(i.lt(xa.len()), || {
                    let (x, y) = (xa.at(i), xb.at(i));
                    let x3 = vec3::<F>(x.x(), x.y(), x.z());
                    let y3 = vec3::<F>(y.x(), y.y(), y.z());
                    let x2 = vec2::<F>(x.x(), x.y());
                    let y2 = vec2::<F>(y.z(), y.w());
                    let o = i * 8u32;
                    out.set(o, x.dot(y));
                    out.set(o + 1u32, x3.dot(y3));
                    out.set(o + 2u32, x2.dot(y2));
                    out.set(o + 3u32, x.length());
                    out.set(o + 4u32, x3.length());
                    out.set(o + 5u32, x2.length());
                    out.set(o + 6u32, x.distance(y));
                    out.set(o + 7u32, x3.distance(y3));
                    let c3 = x3.cross(y3);
                    let n3 = x3.normalize();
                    let v = i * 3u32;
                    vout.set(v, vec4::<F>(c3.x(), c3.y(), c3.z(), lit(0.0 as F)));
                    vout.set(v + 1u32, x.cross(y));
                    vout.set(
                        v + 2u32,
                        vec4::<F>(n3.x(), n3.y(), n3.z(), x.normalize().w()),
                    );
                });
            })
            .map_err(e)?;
            let n = a.len();
            let ab = Buffer::from_slice(q, &a).map_err(e)?;
            let bb = Buffer::from_slice(q, &b).map_err(e)?;
            let ob = Buffer::<F>::new(q.device(), n * 8).map_err(e)?;
            let vb = Buffer::<[F; 4]>::new(q.device(), n * 3).map_err(e)?;
            k.launch(&q, NdRange::covering(n, 64), args![&ab, &bb, &ob, &vb])
                .map_err(e)?;
            let dot = |x: &[F], y: &[F]| {
                x.iter()
                    .zip(y)
                    .map(|(a, b)| (*a as f64) * (*b as f64))
                    .sum::<f64>()
            };
            let len = |x: &[F]| dot(x, x).sqrt();
            let mut want = Vec::new();
            let mut vwant = Vec::new();
            for i in 0..n {
                let (x, y) = (&a[i], &b[i]);
                let d: Vec<F> = (0..4).map(|c| x[c] - y[c]).collect();
                want.extend(
                    [
                        dot(x, y),
                        dot(&x[..3], &y[..3]),
                        x[0] as f64 * y[2] as f64 + x[1] as f64 * y[3] as f64,
                        len(x),
                        len(&x[..3]),
                        len(&x[..2]),
                        len(&d),
                        len(&d[..3]),
                    ]
                    .map(|v| v as F),
                );
                let c = [
                    x[1] as f64 * y[2] as f64 - x[2] as f64 * y[1] as f64,
                    x[2] as f64 * y[0] as f64 - x[0] as f64 * y[2] as f64,
                    x[0] as f64 * y[1] as f64 - x[1] as f64 * y[0] as f64,
                ];
                let l3 = len(&x[..3]);
                let l4 = len(x);
                vwant.extend([c[0], c[1], c[2], 0.0, c[0], c[1], c[2], 0.0]);
                vwant.extend([
                    x[0] as f64 / l3,
                    x[1] as f64 / l3,
                    x[2] as f64 / l3,
                    x[3] as f64 / l4,
                ]);
            }
            let got = q.read(&ob).map_err(e)?;
            // Dot products cancel: allow an absolute error relative to the inputs' magnitude.
            expect_close(
                concat!(stringify!($t), " dot/length/distance"),
                &got,
                &want,
                $ulps,
                $abs,
            )?;
            let vgot: Vec<F> = q.read(&vb).map_err(e)?.into_iter().flatten().collect();
            let vwant: Vec<F> = vwant.into_iter().map(|v| v as F).collect();
            expect_close(
                concat!(stringify!($t), " cross/normalize"),
                &vgot,
                &vwant,
                $ulps,
                $abs,
            )
        }
    };
}
geometric!(geometric_f32, f32, 8, 1e-4);
geometric!(geometric_f64, f64, 8, 1e-12);

/// Buffers of 3-vectors, packed as in Rust (`[u8; 3]` is 3 bytes, `[f32; 3]` 12): RGB pixels
/// read and written, positions updated in place, fill with a 3-component pattern and copy.
fn vector3_buffers(q: &Queue) -> Result<(), String> {
    let n = 333;
    let mut r = Rng::new(161);
    let rgb: Vec<[u8; 3]> = (0..n).map(|_| [0; 3].map(|_| r.next_u64() as u8)).collect();
    let pos: Vec<[f32; 3]> = (0..n)
        .map(|_| [0; 3].map(|_| r.f32_in(-1e3, 1e3)))
        .collect();
    let k = Kernel::build("vector3_buffers", |k| {
        let rgb = k.read::<[u8; 3]>("rgb");
        let gray = k.write::<f32>("gray");
        let bgr = k.write::<[u8; 3]>("bgr");
        let pos = k.read_write::<[f32; 3]>("pos");
        let i = global_id(0);
        if_(i.lt(rgb.len()), || {
            let c = rgb.at(i);
            let f = c.cast::<[f32; 3]>();
            gray.set(i, f.x() * 0.25f32 + f.y() * 0.5f32 + f.z() * 0.25f32);
            bgr.set(i, c.zyx());
            let p = pos.at(i);
            pos.set(
                i,
                vec3::<f32>(p.y() * 2.0f32, p.z() * 2.0f32, p.x() * 2.0f32),
            );
        });
    })
    .map_err(e)?;
    let rb = Buffer::from_slice(q, &rgb).map_err(e)?;
    let gb = Buffer::<f32>::new(q.device(), n).map_err(e)?;
    let bb = Buffer::<[u8; 3]>::new(q.device(), n).map_err(e)?;
    let pb = Buffer::from_slice(q, &pos).map_err(e)?;
    k.launch(q, NdRange::covering(n, 64), args![&rb, &gb, &bb, &pb])
        .map_err(e)?;
    let gray: Vec<f32> = rgb
        .iter()
        .map(|c| c[0] as f32 * 0.25 + c[1] as f32 * 0.5 + c[2] as f32 * 0.25)
        .collect();
    expect_eq("gray from [u8; 3]", &q.read(&gb).map_err(e)?, &gray)?;
    let bgr: Vec<[u8; 3]> = rgb.iter().map(|c| [c[2], c[1], c[0]]).collect();
    expect_eq(
        "[u8; 3] swizzled and stored",
        &q.read(&bb).map_err(e)?,
        &bgr,
    )?;
    let moved: Vec<[f32; 3]> = pos
        .iter()
        .map(|p| [p[1] * 2.0, p[2] * 2.0, p[0] * 2.0])
        .collect();
    expect_eq(
        "[f32; 3] updated in place",
        &q.read(&pb).map_err(e)?,
        &moved,
    )?;
    // A 3-component pattern (6 bytes) over part of a buffer, then a copy of it.
    let wb = Buffer::<[u16; 3]>::new(q.device(), 100).map_err(e)?;
    q.fill(&wb, [0; 3], 0..100).map_err(e)?;
    q.fill(&wb, [1, 2, 0xfffe], 10..77).map_err(e)?;
    let cb = Buffer::<[u16; 3]>::new(q.device(), 100).map_err(e)?;
    q.fill(&cb, [7; 3], 0..100).map_err(e)?;
    q.copy(&wb, 5..95, &cb, 0..).map_err(e)?;
    let filled: Vec<[u16; 3]> = (0..100)
        .map(|i| {
            if (10..77).contains(&i) {
                [1, 2, 0xfffe]
            } else {
                [0; 3]
            }
        })
        .collect();
    expect_eq("[u16; 3] fill", &q.read(&wb).map_err(e)?, &filled)?;
    let copied: Vec<[u16; 3]> = (0..100)
        .map(|i| if i < 90 { filled[i + 5] } else { [7; 3] })
        .collect();
    expect_eq("[u16; 3] copy", &q.read(&cb).map_err(e)?, &copied)
}

fn vector_buffers(q: &Queue) -> Result<(), String> {
    // Loads and stores of [f32; 4], [i32; 2] and [u16; 4] elements, with a permutation.
    let n = 777;
    let a = rand4(151, n, -1e6, 1e6);
    let mut r = Rng::new(152);
    let b: Vec<[i32; 2]> = (0..n)
        .map(|_| [r.next_u64() as i32, r.next_u64() as i32])
        .collect();
    let c: Vec<[u16; 4]> = (0..n)
        .map(|_| [0; 4].map(|_| r.next_u64() as u16))
        .collect();
    let k = Kernel::build("vector_buffers", |k| {
        let xa = k.read::<[f32; 4]>("a");
        let xb = k.read::<[i32; 2]>("b");
        let xc = k.read_write::<[u16; 4]>("c");
        let oa = k.write::<[f32; 4]>("oa");
        let ob = k.write::<[i32; 2]>("ob");
        let i = global_id(0);
        if_(i.lt(xa.len()), || {
            let j = xa.len() - 1u32 - i;
            let v = xa.at(j);
            oa.set(i, vec4::<f32>(v.w(), v.z(), v.y(), v.x()));
            let w = xb.at(i);
            ob.set(j, vec2::<i32>(w.y(), w.x()));
            let u = xc.at(i);
            xc.set(
                i,
                u + vec4::<u16>(lit(1u16), lit(2u16), lit(3u16), lit(4u16)),
            );
        });
    })
    .map_err(e)?;
    let ab = Buffer::from_slice(q, &a).map_err(e)?;
    let bb = Buffer::from_slice(q, &b).map_err(e)?;
    let cb = Buffer::from_slice(q, &c).map_err(e)?;
    let oa = Buffer::<[f32; 4]>::new(q.device(), n).map_err(e)?;
    let ob = Buffer::<[i32; 2]>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::covering(n, 128), args![&ab, &bb, &cb, &oa, &ob])
        .map_err(e)?;
    let wa: Vec<[f32; 4]> = (0..n)
        .map(|i| {
            let v = a[n - 1 - i];
            [v[3], v[2], v[1], v[0]]
        })
        .collect();
    let wb: Vec<[i32; 2]> = (0..n).map(|j| [b[n - 1 - j][1], b[n - 1 - j][0]]).collect();
    let wc: Vec<[u16; 4]> = c
        .iter()
        .map(|u| [0, 1, 2, 3].map(|k| u[k].wrapping_add(k as u16 + 1)))
        .collect();
    expect_eq("[f32; 4] reversed", &q.read(&oa).map_err(e)?, &wa)?;
    expect_eq("[i32; 2] swapped", &q.read(&ob).map_err(e)?, &wb)?;
    expect_eq("[u16; 4] in place", &q.read(&cb).map_err(e)?, &wc)?;
    // Host-side fill and sub-range reads of vector buffers.
    q.fill(&oa, [1.0, 2.0, 3.0, 4.0], 10..20).map_err(e)?;
    let part = q.read_range(&oa, 5..25).map_err(e)?;
    let mut wp = wa[5..25].to_vec();
    for v in &mut wp[5..15] {
        *v = [1.0, 2.0, 3.0, 4.0];
    }
    expect_eq("[f32; 4] fill + read_range", &part, &wp)
}

fn vector_casts_math(q: &Queue) -> Result<(), String> {
    let mut a = rand4(161, 300, -3e9, 3e9);
    a[0] = [f32::NAN, f32::INFINITY, -0.5, 2.5];
    let got = map1(q, "f32x4_to_i32x4", &a, |v: Expr<[f32; 4]>| {
        v.cast::<[i32; 4]>()
    })?;
    let want: Vec<[i32; 4]> = a.iter().map(|v| v.map(|x| x as i32)).collect();
    expect_eq("[f32; 4] as [i32; 4]", &got, &want)?;
    let got = map1(q, "f32x4_bits", &a, |v: Expr<[f32; 4]>| {
        (v.abs().bitcast::<[u32; 4]>()) & splat(0xffff_fff0u32)
    })?;
    let want: Vec<[u32; 4]> = a
        .iter()
        .map(|v| v.map(|x| x.abs().to_bits() & 0xffff_fff0))
        .collect();
    let ok = got.iter().zip(&want).all(|(g, w)| {
        (0..4).all(|c| {
            g[c] == w[c]
                || f32::from_bits(g[c] | 0xf).is_nan() && f32::from_bits(w[c] | 0xf).is_nan()
        })
    });
    if !ok {
        expect_eq("[f32; 4] bitcast to [u32; 4]", &got, &want)?;
    }
    let b = rand4(162, 300, 0.0, 100.0);
    let got = map1(q, "f32x4_math", &b, |v: Expr<[f32; 4]>| {
        v.sqrt()
            + v.floor()
            + v.ceil().min(splat(50.0f32))
            + v.trunc().clamp(splat(10.0f32), splat(20.0f32))
            + v.round()
    })?;
    let want: Vec<[f32; 4]> = b
        .iter()
        .map(|v| {
            v.map(|x| {
                x.sqrt() + x.floor() + x.ceil().min(50.0) + x.trunc().clamp(10.0, 20.0) + x.round()
            })
        })
        .collect();
    let g: Vec<f32> = got.iter().flatten().copied().collect();
    let w: Vec<f32> = want.iter().flatten().copied().collect();
    expect_same("[f32; 4] sqrt/floor/ceil/min/trunc/clamp/round", &g, &w)?;
    let got = map1(q, "f32x4_transcendental", &b, |v: Expr<[f32; 4]>| {
        v.exp2() + v.sin()
    })?;
    let want: Vec<f32> = b
        .iter()
        .flat_map(|v| v.map(|x| x.exp2() + x.sin()))
        .collect();
    let g: Vec<f32> = got.iter().flatten().copied().collect();
    expect_close("[f32; 4] exp2 + sin", &g, &want, 8, 1e-5)?;
    let i2: Vec<[i32; 2]> = inputs::<i32>(163, 300, true)
        .chunks(2)
        .map(|c| [c[0], c[1]])
        .collect();
    let got = map1(q, "i32x2_to_f32x2", &i2, |v: Expr<[i32; 2]>| {
        v.cast::<[f32; 2]>()
    })?;
    let want: Vec<[f32; 2]> = i2.iter().map(|v| v.map(|x| x as f32)).collect();
    expect_eq_k("[i32; 2] as [f32; 2]", &["value"], &got, &want)
}

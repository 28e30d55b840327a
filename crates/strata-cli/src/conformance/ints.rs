//! Integer arithmetic, bitwise operators, shifts, comparisons and integer built-ins on every
//! integer type, with wrap-around at the edges (`MAX + 1`, `MIN - 1`, `MIN / -1`, shifts by at
//! least the bit width).

use super::{case, Case};

macro_rules! int_suite {
    ($($t:ident, $w:ty;)*) => {
        $(
        #[allow(unused_comparisons)]
        mod $t {
            use super::super::{expect_eq_k, pairs, Rng};
            use strata::prelude::*;

            type T = $t;
            type W = $w;
            const BITS: u32 = T::BITS;

            fn run<const K: usize>(
                q: &Queue,
                name: &str,
                a: &[T],
                b: &[T],
                c: &[T],
                body: impl FnOnce(Expr<T>, Expr<T>, Expr<T>) -> [Expr<T>; K],
            ) -> Result<Vec<T>, String> {
                crate::conformance::run3(q, name, a, b, c, body)
            }

            fn third(seed: u64, n: usize) -> Vec<T> {
                let mut r = Rng::new(seed);
                (0..n).map(|_| r.next_u64() as T).collect()
            }

            pub(super) fn arith(q: &Queue) -> Result<(), String> {
                let (a, b) = pairs::<T>(11, 333);
                let c = third(12, a.len());
                let got = run(q, concat!("arith_", stringify!($t)), &a, &b, &c, |x, y, _| {
                    let d: Expr<T> = select(y.eq(0 as T), lit(1 as T), y);
                    [x + y, x - y, x * y, x / d, x % d, -x, x + (1 as T), x - (1 as T), (3 as T) * x]
                })?;
                let mut want = Vec::new();
                for i in 0..a.len() {
                    let (x, y) = (a[i], b[i]);
                    let d = if y == 0 { 1 } else { y };
                    want.extend([
                        x.wrapping_add(y),
                        x.wrapping_sub(y),
                        x.wrapping_mul(y),
                        x.wrapping_div(d),
                        x.wrapping_rem(d),
                        x.wrapping_neg(),
                        x.wrapping_add(1),
                        x.wrapping_sub(1),
                        (3 as T).wrapping_mul(x),
                    ]);
                }
                expect_eq_k(
                    concat!(stringify!($t), " arithmetic"),
                    &["a+b", "a-b", "a*b", "a/b", "a%b", "-a", "a+1", "a-1", "3*a"],
                    &got,
                    &want,
                )
            }

            /// Division and remainder by literals, which compilers turn into shifts and
            /// multiplications: the type's edge (`MIN` where signed: Cranelift 0.125 read an
            /// `i32` literal `MIN` divisor as `2^31`, so `MIN / MIN` gave -1 on `cpu`, issue
            /// 31; `MAX` where unsigned), a power of two, its negation (a large unsigned
            /// literal), and 7; in work-groups of 64 and of 3 (on `cpu`, the vector code
            /// and the one-work-item-at-a-time code).
            pub(super) fn literal_divisors(q: &Queue) -> Result<(), String> {
                let (mut a, _) = pairs::<T>(41, 300);
                a.extend([T::MIN, T::MAX, 0 as T, 1 as T, (0 as T).wrapping_sub(1 as T)]);
                let edge: T = if T::MIN < (0 as T) { T::MIN } else { T::MAX };
                let p2: T = 16 as T;
                let neg: T = (0 as T).wrapping_sub(16 as T);
                let seven: T = 7 as T;
                let z = vec![0 as T; a.len()];
                let body = |x: Expr<T>, _, _| {
                    [
                        x / lit(edge),
                        x % lit(edge),
                        x / lit(p2),
                        x % lit(p2),
                        x / lit(neg),
                        x % lit(neg),
                        x / lit(seven),
                        x % lit(seven),
                    ]
                };
                let name = concat!("litdiv_", stringify!($t));
                let got = crate::conformance::run3_in(q, name, &a, &z, &z, 64, body)?;
                let got3 = crate::conformance::run3_in(q, name, &a, &z, &z, 3, body)?;
                let mut want = Vec::new();
                for &x in &a {
                    want.extend([
                        x.wrapping_div(edge),
                        x.wrapping_rem(edge),
                        x.wrapping_div(p2),
                        x.wrapping_rem(p2),
                        x.wrapping_div(neg),
                        x.wrapping_rem(neg),
                        x.wrapping_div(seven),
                        x.wrapping_rem(seven),
                    ]);
                }
                let names = ["a/EDGE", "a%EDGE", "a/16", "a%16", "a/-16", "a%-16", "a/7", "a%7"];
                expect_eq_k(concat!(stringify!($t), " division by literals"), &names, &got, &want)?;
                expect_eq_k(
                    concat!(stringify!($t), " division by literals, groups of 3"),
                    &names,
                    &got3,
                    &want,
                )
            }

            pub(super) fn bits(q: &Queue) -> Result<(), String> {
                let (a, _) = pairs::<T>(21, 300);
                let mut r = Rng::new(22);
                // Shift amounts: in range, at and beyond the bit width, and (signed) negative.
                let b: Vec<T> = (0..a.len())
                    .map(|i| match i % 4 {
                        0 => (i as u32 % BITS) as T,
                        1 => (BITS + (i as u32 % (2 * BITS))) as T,
                        2 if T::MIN < 0 => (0 as T).wrapping_sub((r.below(BITS as u64) + 1) as T),
                        _ => r.below(3 * BITS as u64) as T,
                    })
                    .collect();
                let c = third(23, a.len());
                let sh = (BITS + 3) as T;
                let got = run(q, concat!("bits_", stringify!($t)), &a, &b, &c, |x, y, z| {
                    let cmp = x.lt(z).cast::<T>()
                        | (x.le(z).cast::<T>() << (1 as T))
                        | (x.gt(z).cast::<T>() << (2 as T))
                        | (x.ge(z).cast::<T>() << (3 as T))
                        | (x.eq(z).cast::<T>() << (4 as T))
                        | (x.ne(z).cast::<T>() << (5 as T))
                        | (x.eq(x).cast::<T>() << (6 as T));
                    [x & z, x | z, x ^ z, !x, x << y, x >> y, x << sh, x >> sh, cmp]
                })?;
                let mut want = Vec::new();
                for i in 0..a.len() {
                    let (x, y, z) = (a[i], b[i], c[i]);
                    let m = ((y as u32) % BITS) as u32;
                    let cmp = (x < z) as T
                        | ((x <= z) as T) << 1
                        | ((x > z) as T) << 2
                        | ((x >= z) as T) << 3
                        | ((x == z) as T) << 4
                        | ((x != z) as T) << 5
                        | (1 as T) << 6;
                    want.extend([x & z, x | z, x ^ z, !x, x << m, x >> m, x << 3, x >> 3, cmp]);
                }
                expect_eq_k(
                    concat!(stringify!($t), " bitwise"),
                    &["a&c", "a|c", "a^c", "!a", "a<<b", "a>>b", "a<<(W+3)", "a>>(W+3)", "comparisons"],
                    &got,
                    &want,
                )
            }

            pub(super) fn builtins(q: &Queue) -> Result<(), String> {
                let (a, b) = pairs::<T>(31, 300);
                let c = third(32, a.len());
                let got = run(q, concat!("intfn_", stringify!($t)), &a, &b, &c, |x, y, z| {
                    let (lo, hi) = (y.min(z), y.max(z));
                    [
                        x.clz(),
                        x.popcount(),
                        x.rotate(y),
                        x.mul_hi(y),
                        x.add_sat(y),
                        x.sub_sat(y),
                        x.hadd(y),
                        x.rhadd(y),
                        x.abs(),
                        x.min(y),
                        x.max(y),
                        x.clamp(lo, hi),
                    ]
                })?;
                let mut want = Vec::new();
                for i in 0..a.len() {
                    let (x, y, z) = (a[i], b[i], c[i]);
                    let (lo, hi) = (y.min(z), y.max(z));
                    want.extend([
                        x.leading_zeros() as T,
                        x.count_ones() as T,
                        x.rotate_left((y as u32) & (BITS - 1)),
                        ((x as W * y as W) >> BITS) as T,
                        x.saturating_add(y),
                        x.saturating_sub(y),
                        (x >> 1).wrapping_add(y >> 1).wrapping_add(x & y & 1),
                        (x >> 1).wrapping_add(y >> 1).wrapping_add((x | y) & 1),
                        if x < 0 { x.wrapping_neg() } else { x },
                        x.min(y),
                        x.max(y),
                        if x < lo { lo } else if x > hi { hi } else { x },
                    ]);
                }
                expect_eq_k(
                    concat!(stringify!($t), " built-ins"),
                    &["clz", "popcount", "rotate", "mul_hi", "add_sat", "sub_sat", "hadd", "rhadd", "abs", "min", "max", "clamp"],
                    &got,
                    &want,
                )
            }

            /// Built-ins fed by other built-ins: results of `min`/`max`/`clamp`/`abs` as
            /// operands. C promotes narrow integers to `int` in CUDA's `min`/`max`, and
            /// compilers may assume `abs(x) >= 0`; strata's `abs(MIN)` is `MIN` and must stay
            /// so through whatever consumes it.
            pub(super) fn composed(q: &Queue) -> Result<(), String> {
                let (a, b) = pairs::<T>(41, 300);
                let c = third(42, a.len());
                let got = run(q, concat!("intcomp_", stringify!($t)), &a, &b, &c, |x, y, z| {
                    let (lo, hi) = (y.min(z), y.max(z));
                    let ax = x.abs();
                    [
                        x.min(y).popcount(),
                        x.clamp(lo, hi).rotate(y.max(z)),
                        x.max(y).add_sat(z),
                        z.rhadd(x.min(y)),
                        x.min(z).hadd(y.max(x)),
                        x.max(z).sub_sat(y.min(x)),
                        ax % (ax | (1 as T)),
                        ax.sub_sat(y),
                        ax.lt(0 as T).cast::<T>(),
                    ]
                })?;
                let mut want = Vec::new();
                for i in 0..a.len() {
                    let (x, y, z) = (a[i], b[i], c[i]);
                    let (lo, hi) = (y.min(z), y.max(z));
                    let ax = if x < 0 { x.wrapping_neg() } else { x };
                    let (m1, m2) = (x.min(z), y.max(x));
                    let clamped = if x < lo { lo } else if x > hi { hi } else { x };
                    want.extend([
                        x.min(y).count_ones() as T,
                        clamped.rotate_left((y.max(z) as u32) & (BITS - 1)),
                        x.max(y).saturating_add(z),
                        (z >> 1).wrapping_add(x.min(y) >> 1).wrapping_add((z | x.min(y)) & 1),
                        (m1 >> 1).wrapping_add(m2 >> 1).wrapping_add(m1 & m2 & 1),
                        x.max(z).saturating_sub(y.min(x)),
                        ax.wrapping_rem(ax | 1),
                        ax.saturating_sub(y),
                        (ax < 0) as T,
                    ]);
                }
                expect_eq_k(
                    concat!(stringify!($t), " composed built-ins"),
                    &["popcount(min)", "rotate(clamp, max)", "add_sat(max)", "rhadd(_, min)", "hadd(min, max)", "sub_sat(max, min)", "abs % (abs|1)", "sub_sat(abs)", "abs < 0"],
                    &got,
                    &want,
                )
            }
        }
        )*

        /// The integer cases.
        pub(super) fn cases() -> Vec<Case> {
            vec![
                $(
                    case(concat!("int/", stringify!($t), "_arith"), $t::arith),
                    case(concat!("int/", stringify!($t), "_literal_divisors"), $t::literal_divisors),
                    case(concat!("int/", stringify!($t), "_bits"), $t::bits),
                    case(concat!("int/", stringify!($t), "_builtins"), $t::builtins),
                    case(concat!("int/", stringify!($t), "_composed"), $t::composed),
                )*
            ]
        }
    };
}

int_suite! {
    i8, i16;
    i16, i32;
    i32, i64;
    i64, i128;
    u8, u16;
    u16, u32;
    u32, u64;
    u64, u128;
}

/// `hadd` and `rhadd` of a constant and a negated `mul_hi` by a constant: NVRTC 13.0 compiled
/// `hadd(1, -mul_hi(-659724457, 28))` to 4 (it is 3) when the CUDA code wrote `hadd` bitwise
/// (found by the differential generator on an H100, 2026-11-23).
pub(super) fn hadd_after_mul_hi(q: &strata::Queue) -> Result<(), String> {
    use super::{expect_eq_k, Rng};
    use strata::prelude::*;
    const C: i32 = -659_724_457;
    let mut r = Rng::new(47);
    let mut xs: Vec<i32> = vec![28, 0, 1, -1, 33, i32::MAX, i32::MIN];
    xs.extend((0..57).map(|_| r.next_u64() as i32));
    let ys: Vec<i32> = xs.iter().map(|&x| x.wrapping_mul(7)).collect();
    let got = super::run3(q, "hadd_after_mul_hi", &xs, &ys, &xs, |x, y, _| {
        let m = -lit(C).mul_hi(x);
        [lit(1i32).hadd(m), lit(1i32).rhadd(m), y.hadd(m), m.rhadd(y)]
    })?;
    let mut want = Vec::new();
    for (&x, &y) in xs.iter().zip(&ys) {
        let m = (((C as i64) * (x as i64)) >> 32) as i32;
        let m = m.wrapping_neg() as i64;
        let (h, rh) = (
            |a: i64, b: i64| ((a + b) >> 1) as i32,
            |a: i64, b: i64| ((a + b + 1) >> 1) as i32,
        );
        want.extend([h(1, m), rh(1, m), h(y as i64, m), rh(m, y as i64)]);
    }
    let got64 = super::run3(
        q,
        "hadd_after_mul_hi_i64",
        &[28i64, -5, 1 << 40],
        &[3i64, 4, 5],
        &[0i64; 3],
        |x, y, _| {
            let m = -lit(C as i64 * 4_294_967_296).mul_hi(x);
            [lit(1i64).hadd(m), lit(1i64).rhadd(m), y.hadd(m)]
        },
    )?;
    let mut want64 = Vec::new();
    for (&x, &y) in [28i64, -5, 1 << 40].iter().zip(&[3i64, 4, 5]) {
        let m = (((C as i64 * 4_294_967_296) as i128 * x as i128) >> 64) as i64;
        let m = m.wrapping_neg() as i128;
        let h = |a: i128, b: i128| ((a + b) >> 1) as i64;
        want64.extend([h(1, m), ((1 + m + 1) >> 1) as i64, h(y as i128, m)]);
    }
    expect_eq_k(
        "i32 hadd/rhadd of -mul_hi",
        &["hadd(1, m)", "rhadd(1, m)", "hadd(y, m)", "rhadd(m, y)"],
        &got,
        &want,
    )?;
    expect_eq_k(
        "i64 hadd/rhadd of -mul_hi",
        &["hadd(1, m)", "rhadd(1, m)", "hadd(y, m)"],
        &got64,
        &want64,
    )
}

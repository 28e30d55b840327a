//! Conformance kernels in both styles: each `#[kernel]` twin here must record exactly the IR of
//! the builder-style kernel that the conformance case (`strata::conformance`) builds. The
//! builder kernels are captured while the case runs on the CPU backend
//! (`strata::capture_kernels`), so the comparison is against the real conformance kernels.

use std::collections::BTreeSet;
use strata::builder::{Element, Numeric};
use strata::prelude::*;

// ---------------------------------------------------------------------------------------------
// Shared kernels: the `run3` / `map2` helpers of the conformance suite, as `#[kernel]`s that
// take the per-case computation as a callable.

/// `K` results per item of three inputs (`conformance::run3`).
#[kernel]
fn run3<T: Numeric, const K: usize>(
    a: &[T],
    b: &[T],
    c: &[T],
    #[write] out: &mut [T],
    body: impl Fn(T, T, T) -> [Expr<T>; K],
) {
    let i = global_id(0);
    if i < a.len() {
        let r = body(a[i], b[i], c[i]);
        for j in 0..K {
            out[i * K as u32 + j as u32] = r[j];
        }
    }
}

/// One result per item of two inputs (`conformance::map2`).
#[kernel]
fn map2<A: Element, B: Element, R: Element>(
    x: &[A],
    y: &[B],
    #[write] out: &mut [R],
    f: impl Fn(A, B) -> R,
) {
    let i = global_id(0);
    if i < x.len() {
        out[i] = f(x[i], y[i]);
    }
}

// ---------------------------------------------------------------------------------------------
// Integers: int/<T>_arith, int/<T>_bits, int/<T>_builtins for the eight integer types.

macro_rules! int_twins {
    ($($t:ident),*) => {$(
        #[allow(unused_comparisons, clippy::all)]
        mod $t {
            use super::*;
            type T = $t;
            const BITS: u32 = T::BITS;
            const SH: T = (BITS + 3) as T;

            #[kernel]
            fn arith(x: T, y: T, _z: T) -> [Expr<T>; 9] {
                let d = if y == 0 as T { 1 as T } else { y };
                [x + y, x - y, x * y, x / d, x % d, -x, x + 1 as T, x - 1 as T, 3 as T * x]
            }

            #[kernel]
            fn bits(x: T, y: T, z: T) -> [Expr<T>; 9] {
                let cmp = (x < z) as T
                    | ((x <= z) as T) << 1 as T
                    | ((x > z) as T) << 2 as T
                    | ((x >= z) as T) << 3 as T
                    | ((x == z) as T) << 4 as T
                    | ((x != z) as T) << 5 as T
                    | ((x == x) as T) << 6 as T;
                [x & z, x | z, x ^ z, !x, x << y, x >> y, x << SH, x >> SH, cmp]
            }

            #[kernel]
            fn builtins(x: T, y: T, z: T) -> [Expr<T>; 12] {
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
            }

            pub fn twins() -> Vec<(String, Vec<Kernel>)> {
                let n = stringify!($t);
                vec![
                    (format!("int/{n}_arith"), vec![run3::<T, 9>::build_named(&format!("arith_{n}"), arith).unwrap().kernel().clone()]),
                    (format!("int/{n}_bits"), vec![run3::<T, 9>::build_named(&format!("bits_{n}"), bits).unwrap().kernel().clone()]),
                    (format!("int/{n}_builtins"), vec![run3::<T, 12>::build_named(&format!("intfn_{n}"), builtins).unwrap().kernel().clone()]),
                ]
            }
        }
    )*};
}
int_twins!(i8, i16, i32, i64, u8, u16, u32, u64);

// ---------------------------------------------------------------------------------------------
// Floats: float/<F>_arith, float/<F>_compare, float/<F>_nan_inf, math/<F>_exact.

macro_rules! float_twins {
    ($($t:ident),*) => {$(
        #[allow(clippy::all)]
        mod $t {
            use super::*;
            type F = $t;

            #[kernel]
            fn arith(x: F, y: F, z: F) -> [Expr<F>; 9] {
                [x + y, x - y, x * y, x / y, x % y, -x, x * y + z, 2.0 as F * x, x / (4.0 as F)]
            }

            #[kernel]
            fn compare(x: F, y: F) -> u32 {
                (x < y) as u32
                    | ((x <= y) as u32) << 1u32
                    | ((x > y) as u32) << 2u32
                    | ((x >= y) as u32) << 3u32
                    | ((x == y) as u32) << 4u32
                    | ((x != y) as u32) << 5u32
                    | (if x < y || x.is_nan() { 1u32 } else { 0u32 }) << 6u32
                    | (if !(x >= y && y > 0.0 as F) { 1u32 } else { 0u32 }) << 7u32
            }

            #[kernel]
            fn special(x: F, y: F, _z: F) -> [Expr<F>; 14] {
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
                    if x.is_nan() { one } else { 0.0 as F },
                    if x.is_inf() { one } else { 0.0 as F },
                    if x.is_finite() { one } else { 0.0 as F },
                    if x.signbit() { one } else { 0.0 as F },
                    x.copysign(y),
                    x.abs(),
                ]
            }

            #[kernel]
            fn exact(x: F, y: F, z: F) -> [Expr<F>; 13] {
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
            }

            pub fn twins() -> Vec<(String, Vec<Kernel>)> {
                let n = stringify!($t);
                vec![
                    (format!("float/{n}_arith"), vec![run3::<F, 9>::build_named(&format!("farith_{n}"), arith).unwrap().kernel().clone()]),
                    (format!("float/{n}_compare"), vec![map2::<F, F, u32>::build_named(&format!("fcmp_{n}"), compare).unwrap().kernel().clone()]),
                    (format!("float/{n}_nan_inf"), vec![run3::<F, 14>::build_named(&format!("fspecial_{n}"), special).unwrap().kernel().clone()]),
                    (format!("math/{n}_exact"), vec![run3::<F, 13>::build_named(&format!("fexact_{n}"), exact).unwrap().kernel().clone()]),
                ]
            }
        }
    )*};
}
float_twins!(f32, f64);

// ---------------------------------------------------------------------------------------------

fn all_twins() -> Vec<(String, Vec<Kernel>)> {
    let mut v = Vec::new();
    for f in [
        i8::twins,
        i16::twins,
        i32::twins,
        i64::twins,
        u8::twins,
        u16::twins,
        u32::twins,
        u64::twins,
        f32::twins,
        f64::twins,
    ] {
        v.extend(f());
    }
    for f in [
        atomics::i32::twins,
        atomics::u32::twins,
        atomics::i64::twins,
        atomics::u64::twins,
    ] {
        v.extend(f());
    }
    v.extend(other_twins());
    v
}

#[test]
fn conformance_kernels_have_identical_macro_twins() {
    let device = Device::from_spec("cpu").unwrap();
    let queue = Queue::new(&device).unwrap();
    let cases = strata::conformance::cases();
    let total = cases.len();
    let mut covered = BTreeSet::new();
    for (case_name, twins) in all_twins() {
        let case = cases
            .iter()
            .find(|c| c.name == case_name)
            .unwrap_or_else(|| panic!("no conformance case {case_name}"));
        let (result, built) = strata::capture_kernels(|| (case.run)(&queue));
        result.unwrap_or_else(|e| panic!("{case_name} failed: {e}"));
        // One twin stands for a kernel the case builds several times.
        let twins = if twins.len() == 1 && built.len() > 1 {
            vec![twins[0].clone(); built.len()]
        } else {
            twins
        };
        assert_eq!(
            built
                .iter()
                .map(|k| k.name().to_string())
                .collect::<Vec<_>>(),
            twins
                .iter()
                .map(|k| k.name().to_string())
                .collect::<Vec<_>>(),
            "{case_name}: the twins must be the case's kernels, in build order"
        );
        for (b, t) in built.iter().zip(&twins) {
            assert_eq!(
                t.ir_text(),
                b.ir_text(),
                "{case_name}: kernel `{}` differs between the builder (right) and #[kernel] (left)",
                b.name()
            );
        }
        assert!(
            covered.insert(case_name.clone()),
            "{case_name} twinned twice"
        );
    }
    println!(
        "{} of {total} conformance cases have #[kernel] twins",
        covered.len()
    );
    // Every twin listed above must match; the count guards against twins being dropped.
    assert!(
        covered.len() >= 49,
        "only {} of {total} conformance cases have #[kernel] twins",
        covered.len()
    );
}

// ---------------------------------------------------------------------------------------------
// Atomics: atomic/<T>_global and atomic/<T>_local.

macro_rules! atomic_twins {
    ($($t:ident),*) => {$(
        #[allow(clippy::all)]
        pub mod $t {
            use super::*;
            type T = $t;

            #[kernel]
            fn global(x: &[T], acc: &mut [T], #[write] olds: &mut [T]) {
                let i = global_id(0);
                if i < x.len() {
                    let v = x[i];
                    acc.atomic_add(0u32, v);
                    acc.atomic_sub(1u32, v);
                    acc.atomic_min(2u32, v);
                    acc.atomic_max(3u32, v);
                    acc.atomic_and(4u32, v | (lit(1 as T) << v));
                    acc.atomic_or(5u32, v & (0xff as T));
                    acc.atomic_xor(6u32, v);
                    let id = i as T + 1 as T;
                    olds[i * 3u32] = acc.atomic_exchange(7u32, id);
                    olds[i * 3u32 + 1u32] = acc.atomic_compare_exchange(8u32, 5 as T, id);
                    olds[i * 3u32 + 2u32] = acc.atomic_add(9u32, 1 as T);
                }
            }

            #[kernel]
            fn local(x: &[T], init: &[T], #[write] out: &mut [T], #[write] olds: &mut [T]) {
                let acc = local_array::<T>(9);
                let l = local_id(0);
                let i = global_id(0);
                if l < 9u32 {
                    acc[l] = init[l];
                }
                barrier();
                let v = x[i];
                if i < x.len() {
                    acc.atomic_add(0u32, v);
                    acc.atomic_sub(1u32, v);
                    acc.atomic_min(2u32, v);
                    acc.atomic_max(3u32, v);
                    acc.atomic_and(4u32, v | (lit(1 as T) << v));
                    acc.atomic_or(5u32, v & (0xff as T));
                    acc.atomic_xor(6u32, v);
                    olds[i * 2u32] = acc.atomic_add(7u32, 1 as T);
                    olds[i * 2u32 + 1u32] = acc.atomic_compare_exchange(8u32, 0 as T, l as T + 1 as T);
                }
                barrier();
                if l < 9u32 {
                    out[group_id(0) * 9u32 + l] = acc[l];
                }
            }

            pub fn twins() -> Vec<(String, Vec<Kernel>)> {
                let n = stringify!($t);
                vec![
                    (format!("atomic/{n}_global"), vec![global::build_named(&format!("atomics_global_{n}")).unwrap().kernel().clone()]),
                    (format!("atomic/{n}_local"), vec![local::build_named(&format!("atomics_local_{n}")).unwrap().kernel().clone()]),
                ]
            }
        }
    )*};
}

mod atomics {
    use super::*;
    atomic_twins!(i32, u32, i64, u64);
}

// ---------------------------------------------------------------------------------------------
// Work-item ids: ids/*.

#[kernel]
fn all_ids(#[write] out: &mut [u32]) {
    let lin = (global_id(2) * global_size(1) + global_id(1)) * global_size(0) + global_id(0);
    let vals = [
        global_id(0),
        global_id(1),
        global_id(2),
        local_id(0),
        local_id(1),
        local_id(2),
        group_id(0),
        group_id(1),
        group_id(2),
        global_size(0),
        global_size(1),
        global_size(2),
        local_size(0),
        local_size(1),
        local_size(2),
        num_groups(0),
        num_groups(1),
        num_groups(2),
        local_linear_id(),
        group_linear_id(),
    ];
    for f in 0..20 {
        out[lin * 20u32 + f as u32] = vals[f];
    }
}

#[kernel]
fn guarded(nx: u32, ny: u32, nz: u32, out: &mut [u32]) {
    let (x, y, z) = (global_id(0), global_id(1), global_id(2));
    if x < nx && y < ny && z < nz {
        let i = (z * ny + y) * nx + x;
        out.atomic_add(i, (x << 20u32) | (y << 10u32) | z);
    }
}

#[kernel]
fn auto_local(out: &mut [u32]) {
    let i = global_id(1) * global_size(0) + global_id(0);
    let consistent = local_size(0) * num_groups(0) == global_size(0)
        && local_size(1) * num_groups(1) == global_size(1)
        && group_id(0) * local_size(0) + local_id(0) == global_id(0)
        && group_id(1) * local_size(1) + local_id(1) == global_id(1)
        && local_id(0) < local_size(0);
    out.atomic_add(i, if consistent { 1u32 } else { 1000u32 });
}

#[kernel]
fn unused_dims(#[write] out: &mut [u32]) {
    let i = global_id(0);
    if i < out.len() / 9u32 {
        let vals = [
            global_id(1),
            global_id(2),
            local_id(1),
            local_id(2),
            group_id(1),
            group_id(2),
            global_size(1),
            local_size(2),
            num_groups(1) + num_groups(2),
        ];
        for f in 0..9 {
            out[i * 9u32 + f as u32] = vals[f];
        }
    }
}

#[kernel]
fn empty_launch(#[write] out: &mut [u32]) {
    out[0u32] = 1u32;
    gather_add(lit(1u32));
    gather_min(global_id(0));
}

#[kernel]
fn empty_buffer(x: &[f32], #[write] y: &mut [f32], #[write] lens: &mut [u32]) {
    let i = global_id(0);
    if i < x.len() {
        y[i] = x[i] * 2.0f32;
    }
    if i < lens.len() {
        lens[i] = x.len() + y.len() * 10u32 + 1u32;
    }
}

fn k<K>(r: strata::Result<K>, get: impl Fn(&K) -> &Kernel) -> Kernel {
    get(&r.unwrap()).clone()
}

fn other_twins() -> Vec<(String, Vec<Kernel>)> {
    let ids = k(all_ids::build(), |k| k.kernel());
    let guarded = k(guarded::build(), |k| k.kernel());
    vec![
        ("ids/1d".into(), vec![ids.clone()]),
        ("ids/2d".into(), vec![ids.clone()]),
        ("ids/3d".into(), vec![ids]),
        ("ids/2d_guarded".into(), vec![guarded.clone()]),
        ("ids/3d_guarded".into(), vec![guarded]),
        (
            "ids/auto_local_size".into(),
            vec![k(auto_local::build(), |k| k.kernel())],
        ),
        (
            "ids/unused_dimensions".into(),
            vec![k(unused_dims::build(), |k| k.kernel())],
        ),
        (
            "ids/empty_launch".into(),
            vec![k(empty_launch::build(), |k| k.kernel())],
        ),
        (
            "ids/empty_buffer".into(),
            vec![k(empty_buffer::build(), |k| k.kernel())],
        ),
    ]
}

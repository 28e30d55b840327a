//! The CUDA dialect's preamble defines what OpenCL has built in and CUDA lacks (saturating
//! conversions, bit casts, the integer built-ins, `abs`, `degrees`, `radians`). Its semantics
//! must be the evaluator's (the CPU backend's), and that must hold even where no GPU runs
//! the code: so the preamble is compiled here as host C++ (with the CUDA intrinsics it calls
//! defined by their documented semantics), run on edge cases of every type, and compared bit
//! for bit with `strata::ir::eval`.
//!
//! Needs a host C++ compiler (`c++`); without one the test is skipped, unless `STRATA_REQUIRE`
//! names `nvrtc` (the README's test command), where that is a failure.

use std::fmt::Write as _;
use std::process::Command;
use strata::codegen::CUDA;
use strata::ir::eval::{fold_cast, fold_math};
use strata::ir::{Literal, MathFn, Scalar};
use strata::prelude::*;

/// Host definitions of the CUDA intrinsics the preamble calls.
const SHIMS: &str = r#"
#include <cstdio>
#include <cmath>
#define __device__
static int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static int __popc(unsigned x) { return __builtin_popcount(x); }
static int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static unsigned long long __umul64hi(unsigned long long a, unsigned long long b) { return (unsigned long long)(((unsigned __int128)a * b) >> 64); }
template <typename T> T atomicAdd(T*, T v) { return v; }
template <typename T> T atomicAnd(T*, T v) { return v; }
template <typename T> T atomicOr(T*, T v) { return v; }
template <typename T> T atomicXor(T*, T v) { return v; }
template <typename T> T atomicExch(T*, T v) { return v; }
template <typename T> T atomicCAS(T*, T, T v) { return v; }
template <typename T> T atomicMin(T*, T v) { return v; }
template <typename T> T atomicMax(T*, T v) { return v; }
"#;

const INTS: [Scalar; 8] = [
    Scalar::I8,
    Scalar::I16,
    Scalar::I32,
    Scalar::I64,
    Scalar::U8,
    Scalar::U16,
    Scalar::U32,
    Scalar::U64,
];

fn cname(s: Scalar) -> &'static str {
    CUDA.types[Scalar::ALL.iter().position(|&x| x == s).unwrap()]
}

/// A C++ expression of exactly the literal's bits and type.
fn c_lit(l: Literal) -> String {
    let (u, t) = match l.scalar.size() {
        1 => ("u8", cname(l.scalar)),
        2 => ("u16", cname(l.scalar)),
        4 => ("u32", cname(l.scalar)),
        _ => ("u64", cname(l.scalar)),
    };
    format!("strata_as<{t}>(({u}){}ull)", l.bits)
}

fn int_values(s: Scalar) -> Vec<Literal> {
    let bits = s.bits();
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let min = if s.is_signed() { 1u64 << (bits - 1) } else { 0 };
    let max = if s.is_signed() { min - 1 } else { mask };
    [
        0,
        1,
        2,
        3,
        7,
        100,
        mask,
        mask - 1,
        min,
        min + 1,
        max,
        max - 1,
        0x5a5a_5a5a_5a5a_5a5a,
    ]
    .into_iter()
    .map(|v| Literal::from_bits(s, v & mask))
    .collect()
}

fn float_values(s: Scalar) -> Vec<Literal> {
    let f = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        0.5,
        -0.5,
        -1.7,
        1.5,
        -2.25,
        1e-40,
        127.9,
        128.0,
        -128.9,
        -129.0,
        255.5,
        256.0,
        65535.9,
        65536.0,
        -32768.5,
        2147483647.0,
        2147483648.0,
        -2147483648.0,
        -2147483649.0,
        4294967295.0,
        4294967296.0,
        9.2e18,
        9.3e18,
        -9.3e18,
        1.8e19,
        1.9e19,
        3.0e38,
    ];
    f.iter()
        .map(|&v| match s {
            Scalar::F32 => Literal::from_bits(s, (v as f32).to_bits() as u64),
            _ => Literal::from_bits(s, v.to_bits()),
        })
        .collect()
}

#[test]
fn the_cuda_preamble_matches_the_evaluator() {
    // Each case: a C++ expression, printed as its bits, and the evaluator's bits.
    let mut cases: Vec<(String, String, u64)> = Vec::new();
    let mut add = |what: String, expr: String, want: Literal| cases.push((what, expr, want.bits));
    for s in INTS {
        let t = cname(s);
        let vals = int_values(s);
        for &a in &vals {
            for (f, name) in [
                (MathFn::Clz, "strata_clz"),
                (MathFn::Popcount, "strata_popcount"),
            ] {
                add(
                    format!("{}({t} {:#x})", f.name(), a.bits),
                    format!("{name}<{t}>({})", c_lit(a)),
                    fold_math(f, &[a]),
                );
            }
            if s.is_signed() {
                // No template argument: overload resolution must pick the exact helper.
                add(
                    format!("abs({t} {:#x})", a.bits),
                    format!("strata_abs({})", c_lit(a)),
                    fold_math(MathFn::Abs, &[a]),
                );
            }
            for &b in &vals {
                for (f, name) in [
                    (MathFn::Rotate, "strata_rotate"),
                    (MathFn::MulHi, "strata_mul_hi"),
                    (MathFn::AddSat, "strata_add_sat"),
                    (MathFn::SubSat, "strata_sub_sat"),
                    (MathFn::Hadd, "strata_hadd"),
                    (MathFn::Rhadd, "strata_rhadd"),
                ] {
                    add(
                        format!("{}({t} {:#x}, {:#x})", f.name(), a.bits, b.bits),
                        format!("{name}<{t}>({}, {})", c_lit(a), c_lit(b)),
                        fold_math(f, &[a, b]),
                    );
                }
            }
        }
    }
    for fs in [Scalar::F32, Scalar::F64] {
        let ft = cname(fs);
        for x in float_values(fs) {
            for s in INTS {
                add(
                    format!("convert_sat<{}>({ft} {:#x})", cname(s), x.bits),
                    format!("strata_convert_sat<{}>({})", cname(s), c_lit(x)),
                    fold_cast(x, s),
                );
            }
            for (f, name) in [
                (MathFn::Degrees, "strata_degrees"),
                (MathFn::Radians, "strata_radians"),
            ] {
                add(
                    format!("{}({ft} {:#x})", f.name(), x.bits),
                    format!("{name}({})", c_lit(x)),
                    fold_math(f, &[x]),
                );
            }
        }
    }
    let src = format!("{SHIMS}{}", CUDA.preamble);
    let exprs: Vec<String> = cases.iter().map(|c| c.1.clone()).collect();
    let Some(got) = run_host_cpp(&src, &exprs, "preamble") else {
        return;
    };
    assert_eq!(got.len(), cases.len());
    let wrong: Vec<String> = cases
        .iter()
        .zip(&got)
        .filter(|((_, _, want), got)| want != *got)
        .map(|((what, _, want), got)| format!("{what}: preamble {got:#x}, evaluator {want:#x}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} cases differ:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

/// Compiles `src` (with `main` appended from `exprs`) as host C++, runs it, and returns the bits
/// each expression printed; `None` when there is no host compiler and none is required.
fn run_host_cpp(src_head: &str, exprs: &[String], tag: &str) -> Option<Vec<u64>> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    if Command::new(&cxx).arg("--version").output().is_err() {
        let required = std::env::var("STRATA_REQUIRE")
            .is_ok_and(|v| v.split(',').any(|b| b.trim() == "nvrtc"));
        assert!(
            !required,
            "no host C++ compiler (`{cxx}`) to check CUDA code"
        );
        eprintln!("skipped: no host C++ compiler `{cxx}`");
        return None;
    }
    let mut src = String::from(src_head);
    src.push_str(
        "template <typename T> static void put(T v) {\n    unsigned long long b = 0;\n    __builtin_memcpy(&b, &v, sizeof v);\n    std::printf(\"%llu\\n\", b);\n}\nint main() {\n",
    );
    for expr in exprs {
        let _ = writeln!(src, "    put({expr});");
    }
    src.push_str("}\n");
    let dir = std::env::temp_dir().join(format!("strata-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cpp, exe) = (dir.join("helpers.cpp"), dir.join("helpers"));
    std::fs::write(&cpp, &src).unwrap();
    let built = Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-o"])
        .arg(&exe)
        .arg(&cpp)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "the CUDA code does not compile as host C++:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success(), "{run:?}");
    let _ = std::fs::remove_dir_all(&dir);
    Some(
        String::from_utf8(run.stdout)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect(),
    )
}

/// The helpers the CUDA writer emits per kernel for the built-ins CUDA lacks or answers
/// differently (`tanpi`, `asinpi`, `pown`, `rootn`, `ldexp`, `ilogb`, `fract`, `fdim`,
/// `maxmag`, `minmag`, `powr`, `mad_sat`), compiled as host C++ with the preamble and compared
/// with the evaluator: bit for bit where the built-in is exact, within its bound where it is
/// rounded (the host's `tan`, `asin`, `pow` stand in for CUDA's: this checks the helpers'
/// special cases, reductions and Newton step, not CUDA's library).
#[test]
fn the_cuda_math_helpers_match_the_evaluator() {
    // A kernel that uses every helper, so the writer emits them all.
    let k = Kernel::build("helpers", |k| {
        let xf = k.read::<f32>("xf");
        let xd = k.read::<f64>("xd");
        let n = k.read::<i32>("n");
        let of = k.write::<f32>("of");
        let od = k.write::<f64>("od");
        let oi = k.write::<i32>("oi");
        let i = global_id(0);
        let (a, b, m) = (xf.at(i), xd.at(i), n.at(i));
        of.set(
            i,
            a.tanpi() + a.asinpi() + a.acospi() + a.atanpi() + a.atan2pi(a),
        );
        of.set(
            i + 1u32,
            a.pown(m) + a.rootn(m) + a.ldexp(m) + a.fract() + a.fdim(a),
        );
        of.set(i + 2u32, a.maxmag(a) + a.minmag(a) + a.powr(a));
        od.set(
            i,
            b.tanpi() + b.asinpi() + b.acospi() + b.atanpi() + b.atan2pi(b),
        );
        od.set(
            i + 1u32,
            b.pown(m) + b.rootn(m) + b.ldexp(m) + b.fract() + b.fdim(b),
        );
        od.set(i + 2u32, b.maxmag(b) + b.minmag(b) + b.powr(b));
        oi.set(i, a.ilogb() + b.ilogb());
        macro_rules! mad_sat {
            ($($t:ty),*) => {$({
                let o = k.read_write::<$t>(concat!("o_", stringify!($t)));
                let x = o.at(i);
                o.set(i, x.mad_sat(x, x));
            })*};
        }
        mad_sat!(i8, i16, i32, i64, u8, u16, u32, u64);
    })
    .unwrap();
    let generated = strata::codegen::cuda(k.valid_function()).unwrap();
    let head = generated
        .source
        .split("extern \"C\" __global__")
        .next()
        .unwrap()
        .to_string();
    // (what, C++ expression, the evaluator's bits, the result type, ulps allowed)
    let mut cases: Vec<(String, String, u64, Scalar, u64)> = Vec::new();
    for fs in [Scalar::F32, Scalar::F64] {
        let t = cname(fs);
        let mut xs = float_values(fs);
        for v in [
            0.25, 0.75, -0.5, 1.0, 2.0, -3.0, 6.5, 1e-3, 0.9, -0.99, 27.0, 1e30,
        ] {
            xs.push(match fs {
                Scalar::F32 => Literal::from_bits(fs, (v as f32).to_bits() as u64),
                _ => Literal::from_bits(fs, f64::to_bits(v)),
            });
        }
        let ns: Vec<Literal> = [
            0i32,
            1,
            -1,
            2,
            3,
            -3,
            7,
            64,
            -150,
            300,
            -1100,
            2100,
            i32::MIN,
            i32::MAX,
        ]
        .iter()
        .map(|&n| Literal::from_bits(Scalar::I32, n as u32 as u64))
        .collect();
        for &x in &xs {
            for f in [
                MathFn::Tanpi,
                MathFn::Asinpi,
                MathFn::Acospi,
                MathFn::Atanpi,
                MathFn::Fract,
            ] {
                cases.push((
                    format!("{}({t} {:#x})", f.name(), x.bits),
                    format!("strata_{}_{t}({})", f.name(), c_lit(x)),
                    fold_math(f, &[x]).bits,
                    fs,
                    u64::from(f.ulp_bound()),
                ));
            }
            cases.push((
                format!("ilogb({t} {:#x})", x.bits),
                format!("strata_ilogb_{t}({})", c_lit(x)),
                fold_math(MathFn::Ilogb, &[x]).bits,
                Scalar::I32,
                0,
            ));
            for &y in &xs {
                for f in [
                    MathFn::Atan2pi,
                    MathFn::Fdim,
                    MathFn::Maxmag,
                    MathFn::Minmag,
                    MathFn::Powr,
                ] {
                    cases.push((
                        format!("{}({t} {:#x}, {:#x})", f.name(), x.bits, y.bits),
                        format!("strata_{}_{t}({}, {})", f.name(), c_lit(x), c_lit(y)),
                        fold_math(f, &[x, y]).bits,
                        fs,
                        u64::from(f.ulp_bound()),
                    ));
                }
            }
            for &n in &ns {
                for f in [MathFn::Ldexp, MathFn::Pown, MathFn::Rootn] {
                    cases.push((
                        format!("{}({t} {:#x}, {})", f.name(), x.bits, n.bits as u32 as i32),
                        format!("strata_{}_{t}({}, {})", f.name(), c_lit(x), c_lit(n)),
                        fold_math(f, &[x, n]).bits,
                        fs,
                        u64::from(f.ulp_bound()),
                    ));
                }
            }
        }
    }
    for s in INTS {
        let t = cname(s);
        let vals = int_values(s);
        for &a in &vals {
            for &b in &vals {
                for &c in &vals[..6] {
                    cases.push((
                        format!("mad_sat({t} {:#x}, {:#x}, {:#x})", a.bits, b.bits, c.bits),
                        format!(
                            "strata_mad_sat_{t}({}, {}, {})",
                            c_lit(a),
                            c_lit(b),
                            c_lit(c)
                        ),
                        fold_math(MathFn::MadSat, &[a, b, c]).bits,
                        s,
                        0,
                    ));
                }
            }
        }
    }
    // CUDA declares these in the global namespace; the host library in `std`.
    let src = format!("{SHIMS}using std::isinf; using std::signbit;\n{head}");
    let exprs: Vec<String> = cases.iter().map(|c| c.1.clone()).collect();
    let Some(got) = run_host_cpp(&src, &exprs, "helpers") else {
        return;
    };
    assert_eq!(got.len(), cases.len());
    // Distance in ulp of two floats of type `s` (NaN matches NaN only).
    let ulps = |s: Scalar, a: u64, b: u64| -> Option<u64> {
        let (x, y) = match s {
            Scalar::F32 => (
                f32::from_bits(a as u32) as f64,
                f32::from_bits(b as u32) as f64,
            ),
            _ => (f64::from_bits(a), f64::from_bits(b)),
        };
        if x.is_nan() || y.is_nan() {
            return (x.is_nan() && y.is_nan()).then_some(0);
        }
        if x == y {
            return Some(0);
        }
        if x.is_infinite() || y.is_infinite() || x.signum() != y.signum() {
            return None;
        }
        Some(a.abs_diff(b))
    };
    let wrong: Vec<String> = cases
        .iter()
        .zip(&got)
        .filter(|((_, _, want, s, tol), got)| match s {
            Scalar::F32 | Scalar::F64 => ulps(*s, **got, *want).is_none_or(|u| u > *tol),
            _ => want != *got,
        })
        .map(|((what, _, want, _, _), got)| format!("{what}: helper {got:#x}, evaluator {want:#x}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} cases differ:\n{}",
        wrong.len(),
        cases.len(),
        wrong
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

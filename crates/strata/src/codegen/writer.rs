//! The C-family writer and the dialects it writes.
//!
//! The writer walks the validated IR once and prints one C statement per line. It keeps the
//! IR's semantics exact on C targets:
//! - vectors are written component by component (the IR's vector operations are componentwise),
//!   so no dialect needs vector types and results match the CPU backend; local arrays of
//!   vectors are aligned to the vector's size, so that the target compiler can still merge the
//!   component accesses of one element into one vector access;
//! - signed `+ - * <<` and negation are computed in the unsigned type (C leaves signed overflow
//!   undefined); results narrower than `int` are cast back to their type; shift amounts are
//!   masked to the bit width; `MIN / -1` and `MIN % -1` go through helpers;
//! - float to integer conversions saturate and map NaN to 0; floats are printed so they read
//!   back exactly (NaN and infinities by their bits);
//! - `min`, `max`, `clamp` and `mix` are written out with the same formula the evaluator uses;
//! - work-group collectives are lowered as the dialect's [`Collectives`] says: a fold in
//!   local-id order in local memory (OpenCL; float sums bit-identical to the CPU backend) or
//!   warp shuffles (CUDA; the operand is first combined with the identity, as the evaluator's
//!   fold does, so a NaN operand of min/max vanishes the same way). Both are exact for
//!   integers, booleans and float `min`/`max`; a CUDA float sum associates as the shuffle tree
//!   does, which the IR allows (see [`GroupOp`]); broadcast goes through a local array.
//!
//! Expressions used once are written inline; expressions used more than once get a `const`
//! temporary where first needed (the same scoping rule as the CPU backend's lowering).

// Vector operands are written component by component: loops index several operands at once.
#![allow(clippy::needless_range_loop)]

use crate::error::{Error, Result};
use crate::ir::{
    self, AtomicOp, BinaryOp, Builtin, Expr, ExprId, Fence, GroupOp, GroupScope, Literal, LoopId,
    MathFn, MathKind, Mem, ParamKind, Scalar, Stmt, Type, UnaryOp, ValidFunction, ValueId,
};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

/// A target dialect of C, as data. Placeholders: `{d}` a dimension number, `{c}` its axis
/// letter (`x`, `y`, `z`), `{x}` an operand, `{t}` a type name.
pub struct Dialect {
    /// Name for comments and errors (`OpenCL C`).
    pub name: &'static str,
    /// Key of this dialect's sources in stub functions (`opencl`, `cuda`).
    pub key: &'static str,
    /// Lines at the top of every file.
    pub preamble: &'static str,
    /// Lines added when the kernel uses `f64`.
    pub f64_preamble: &'static str,
    /// Lines added when the kernel uses `f16`.
    pub f16_preamble: &'static str,
    /// Conversions of `{x}` between `f16` and the wider floats: `f16` to `f32`, `f32` to `f16`,
    /// `f16` to `f64`, `f64` to `f16` (rounding to nearest even). Kernels reach the writer
    /// with their `f16` arithmetic lowered to `f32` (`ir::passes::lower_f16`), so these,
    /// loads, stores and selects are all an `f16` meets.
    pub f16_casts: [&'static str; 4],
    /// Lines added when the kernel uses 64-bit integer atomics.
    pub int64_atomics_preamble: &'static str,
    /// What precedes the kernel's name.
    pub kernel_prefix: &'static str,
    /// Qualifier of buffer pointers.
    pub global: &'static str,
    /// Qualifier of local-memory declarations.
    pub local: &'static str,
    /// A constant buffer parameter (`{t}` its element type, `{n}` its name): OpenCL's
    /// `__constant` space; CUDA a `const __restrict__` pointer into global memory, which its
    /// compiler may read through the read-only data cache.
    pub constant_buffer: &'static str,
    /// Qualifier of pointers to local memory (CUDA has none: its pointers are generic).
    pub local_ptr: &'static str,
    /// A compile-time check (`{cond}` the condition, `{id}` a C identifier naming it): a
    /// negative array size in OpenCL C (C99 has no `_Static_assert`), `static_assert` in CUDA.
    pub static_check: &'static str,
    /// The compile-time `offsetof` of the dialect's compilers, if any (`{t}` the struct, `{f}`
    /// the field): clang's built-in for OpenCL (checked under `__clang__` only); NVRTC has
    /// none without the C++ headers, so CUDA checks the size and alignment of structs alone.
    pub offset_of: Option<&'static str>,
    /// How a launch-sized local array reaches the kernel: `None` as a pointer argument in
    /// [`Dialect::local_ptr`] space (OpenCL sets its size at launch); `Some(decl)` as a `uint`
    /// byte offset into one dynamically sized block that `decl` declares, named
    /// `strata_dyn_local` (CUDA's `extern __shared__`).
    pub dynamic_local: Option<&'static str>,
    /// Qualifier of helper functions.
    pub helper_prefix: &'static str,
    /// Type names, indexed like [`Scalar::ALL`].
    pub types: [&'static str; 12],
    /// Id built-ins: global id, local id, group id, global size, local size, number of groups.
    pub ids: [&'static str; 6],
    /// Barrier for (local, global, both) fences.
    pub barriers: [&'static str; 3],
    /// Memory fence for (local, global, both).
    pub fences: [&'static str; 3],
    /// A fence of work-group scope (CUDA's `__threadfence_block()`), where the dialect has one;
    /// otherwise every fence is one of [`Dialect::fences`] (OpenCL C 1.2's have no scope).
    pub work_group_fence: Option<&'static str>,
    /// Saturating, truncating float-to-integer conversion.
    pub convert_sat: &'static str,
    /// Whether [`Dialect::convert_sat`] needs a guard that maps NaN to 0 (OpenCL defines that
    /// result, but NVIDIA's OpenCL driver returns the type's minimum for `long`).
    pub convert_sat_nan_guard: bool,
    /// Reinterpretation of bits as type `{t}`.
    pub bitcast: &'static str,
    /// Atomic function names for 32-bit integers: add, sub, min, max, and, or, xor, exchange,
    /// compare-exchange (`(pointer, expected, new)`).
    pub atomics32: [&'static str; 9],
    /// The same for 64-bit integers.
    pub atomics64: [&'static str; 9],
    /// An atomic load of the integer at pointer `{p}`; `None`: an atomic or with 0 (a
    /// read-modify-write that returns the current value and changes nothing).
    pub atomic_load: Option<&'static str>,
    /// How work-group collectives are lowered (and sub-group ones: in local memory for
    /// [`Collectives::LocalSerial`], by warp intrinsics for [`Collectives::WarpShuffle`]).
    pub collectives: Collectives,
    /// The sub-group size kernels see (a power of two, at most 32; see
    /// [`GroupScope`](crate::ir::GroupScope)).
    pub sub_group_size: u32,
    /// Overrides of built-in function names (the default is [`MathFn::name`]).
    pub math_names: &'static [(MathFn, &'static str)],
    /// Float built-ins called through a helper that returns a NaN argument itself. PoCL 3.1
    /// returns 0 for some of them (seen: `floor`, `ceil`, `trunc`, `round`, `exp`, `exp2`,
    /// `expm1`, `tanh`) of a NaN its compiler (LLVM) can prove, however the NaN arose (a
    /// literal, `bitcast<f64>(-1)` of constants, `-inf / -inf`): its built-ins are compiled
    /// for finite values, so a known NaN operand becomes poison. The helper's test stays
    /// outside the built-in, where no such assumption holds. OpenCL guards every one-argument
    /// float built-in whose value at NaN is NaN (a compare and a select each), not only those
    /// seen failing: each new one was found by a random program, never by a user.
    pub nan_guarded: &'static [MathFn],
    /// Compiler options the dialect needs for exact results.
    pub options: &'static [&'static str],
}

/// How a dialect lowers the work-group collectives (reductions, scans, any/all; broadcast always
/// goes through a local array indexed by the source work-item). Both are exact for integers,
/// booleans and float `min`/`max`; float sums associate as the lowering does (see
/// [`GroupOp`](crate::ir::GroupOp)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collectives {
    /// The work-items' values in a local scratch array, folded in local-id order by the first
    /// work-item (two barriers, O(work-group size) steps): float sums equal the CPU backend's
    /// bit for bit. Every barrier is at the top level of the collective's code, which CPU
    /// OpenCL compilers (PoCL) turn into work-item loops cheaply; a log-step tree needs
    /// barriers inside a loop, which made PoCL's compile times explode on kernels with dozens
    /// of collectives (the differential tests').
    LocalSerial,
    /// CUDA warps of 32: `__shfl_down_sync` reductions and `__shfl_up_sync` scans within each
    /// warp, one value per warp through a 32-entry shared array, and the warp totals combined
    /// by shuffles again (every warp does it, so no third barrier); any/all are
    /// `__syncthreads_or` / `__syncthreads_and`. Two barriers per collective.
    WarpShuffle,
}

/// The first lines of every CUDA warp helper: the work-group size `n`, the local linear id
/// `lid`, the `lane`, how many lanes the warp has (`live`: the last warp of a work-group may be
/// partial) and the shuffles' `mask` of exactly those lanes.
const WARP_PROLOGUE: &str = "    const u32 n = blockDim.x * blockDim.y * blockDim.z;
    const u32 lid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const u32 lane = lid & 31u;
    const u32 live = min(32u, n - (lid & ~31u));
    const u32 mask = live == 32u ? 0xffffffffu : (1u << live) - 1u;
";

/// The combination of a collective.
#[derive(Clone, Copy)]
enum Comb {
    Add,
    Min,
    Max,
    Or,
    And,
}

/// OpenCL C 1.2.
pub static OPENCL: Dialect = Dialect {
    name: "OpenCL C",
    key: "opencl",
    preamble: "#pragma OPENCL FP_CONTRACT OFF\n",
    f64_preamble: "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
    f16_preamble: "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n",
    f16_casts: ["((float){x})", "((half){x})", "((double){x})", "((half){x})"],
    int64_atomics_preamble: "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n",
    kernel_prefix: "__kernel void",
    global: "__global",
    local: "__local",
    local_ptr: "__local",
    static_check: "typedef char {id}[({cond}) ? 1 : -1];",
    offset_of: Some("__builtin_offsetof({t}, {f})"),
    constant_buffer: "__constant const {t}* {n}",
    dynamic_local: None,
    helper_prefix: "static inline",
    types: ["bool", "char", "short", "int", "long", "uchar", "ushort", "uint", "ulong", "half", "float", "double"],
    ids: ["get_global_id({d})", "get_local_id({d})", "get_group_id({d})", "get_global_size({d})", "get_local_size({d})", "get_num_groups({d})"],
    barriers: ["barrier(CLK_LOCAL_MEM_FENCE)", "barrier(CLK_GLOBAL_MEM_FENCE)", "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)"],
    fences: ["mem_fence(CLK_LOCAL_MEM_FENCE)", "mem_fence(CLK_GLOBAL_MEM_FENCE)", "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)"],
    work_group_fence: None,
    convert_sat: "convert_{t}_sat_rtz({x})",
    convert_sat_nan_guard: true,
    bitcast: "as_{t}({x})",
    atomics32: ["atomic_add", "atomic_sub", "atomic_min", "atomic_max", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cmpxchg"],
    atomics64: ["atom_add", "atom_sub", "atom_min", "atom_max", "atom_and", "atom_or", "atom_xor", "atom_xchg", "atom_cmpxchg"],
    atomic_load: None,
    collectives: Collectives::LocalSerial,
    sub_group_size: 32,
    math_names: &[],
    nan_guarded: &[
        MathFn::Sqrt,
        MathFn::Rsqrt,
        MathFn::Cbrt,
        MathFn::Exp,
        MathFn::Exp2,
        MathFn::Exp10,
        MathFn::Expm1,
        MathFn::Log,
        MathFn::Log2,
        MathFn::Log10,
        MathFn::Log1p,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Asin,
        MathFn::Acos,
        MathFn::Atan,
        MathFn::Sinh,
        MathFn::Cosh,
        MathFn::Tanh,
        MathFn::Asinh,
        MathFn::Acosh,
        MathFn::Atanh,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Trunc,
        MathFn::Round,
        MathFn::Pow,
        MathFn::Atan2,
        MathFn::Hypot,
        MathFn::Fmod,
        MathFn::Erf,
        MathFn::Erfc,
        MathFn::Tgamma,
        MathFn::Lgamma,
        MathFn::Sinpi,
        MathFn::Cospi,
        MathFn::Tanpi,
        MathFn::Asinpi,
        MathFn::Acospi,
        MathFn::Atanpi,
        MathFn::Atan2pi,
        MathFn::Rint,
        MathFn::Logb,
        MathFn::Remainder,
        MathFn::Nextafter,
    ],
    options: &["-cl-std=CL1.2", "-cl-fp32-correctly-rounded-divide-sqrt"],
};

/// CUDA C++, compiled by NVRTC. The preamble gives the integer types short names and defines
/// what OpenCL has built in and CUDA lacks (bit casts, saturating conversions, the integer
/// built-ins, atomics over every integer width), each with the OpenCL semantics the evaluator
/// implements.
#[rustfmt::skip]
pub static CUDA: Dialect = Dialect {
    name: "CUDA C++",
    key: "cuda",
    preamble: CUDA_PREAMBLE,
    f64_preamble: "",
    f16_preamble: CUDA_F16_PREAMBLE,
    f16_casts: ["strata_h2f({x})", "strata_f2h({x})", "strata_h2d({x})", "strata_d2h({x})"],
    int64_atomics_preamble: "",
    kernel_prefix: "extern \"C\" __global__ void",
    global: "",
    local: "__shared__",
    local_ptr: "",
    static_check: "static_assert({cond}, \"{id}: the C layout differs from Rust's\");",
    offset_of: None,
    constant_buffer: "const {t}* __restrict__ {n}",
    dynamic_local: Some("extern __shared__ __align__(16) unsigned char strata_dyn_local[];"),
    helper_prefix: "static __device__ inline",
    types: ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "float", "double"],
    ids: ["(blockIdx.{c} * blockDim.{c} + threadIdx.{c})", "threadIdx.{c}", "blockIdx.{c}", "(gridDim.{c} * blockDim.{c})", "blockDim.{c}", "gridDim.{c}"],
    barriers: ["__syncthreads()", "__syncthreads()", "__syncthreads()"],
    fences: ["__threadfence_block()", "__threadfence()", "__threadfence()"],
    work_group_fence: Some("__threadfence_block()"),
    convert_sat: "strata_convert_sat<{t}>({x})",
    convert_sat_nan_guard: false,
    bitcast: "strata_as<{t}>({x})",
    atomics32: CUDA_ATOMICS,
    atomics64: CUDA_ATOMICS,
    atomic_load: Some("strata_atomic_load({p})"),
    collectives: Collectives::WarpShuffle,
    sub_group_size: 32,
    math_names: &[
        (MathFn::Exp10, "strata_exp10"),
        (MathFn::Degrees, "strata_degrees"),
        (MathFn::Radians, "strata_radians"),
        (MathFn::Clz, "strata_clz"),
        (MathFn::Popcount, "strata_popcount"),
        (MathFn::Rotate, "strata_rotate"),
        (MathFn::MulHi, "strata_mul_hi"),
        (MathFn::AddSat, "strata_add_sat"),
        (MathFn::SubSat, "strata_sub_sat"),
        (MathFn::Hadd, "strata_hadd"),
        (MathFn::Abs, "strata_abs"),
        (MathFn::Rhadd, "strata_rhadd"),
    ],
    nan_guarded: &[],
    options: &["--std=c++17", "--fmad=false"],
};

/// The CUDA preamble's atomics, overloaded for 32- and 64-bit integers.
const CUDA_ATOMICS: [&str; 9] = [
    "strata_atomic_add",
    "strata_atomic_sub",
    "strata_atomic_min",
    "strata_atomic_max",
    "strata_atomic_and",
    "strata_atomic_or",
    "strata_atomic_xor",
    "strata_atomic_xchg",
    "strata_atomic_cmpxchg",
];

/// The CUDA dialect's definitions (see [`CUDA`]). 64-bit integers are `long` so that the
/// writer's `L` and `ul` literals have exactly their type.
const CUDA_PREAMBLE: &str = r#"typedef signed char i8; typedef short i16; typedef int i32; typedef long i64;
typedef unsigned char u8; typedef unsigned short u16; typedef unsigned int u32; typedef unsigned long u64;
template <typename T> struct strata_int;
#define STRATA_INT(T, U, LO, HI) template <> struct strata_int<T> { typedef U u; static constexpr T lo = LO, hi = HI; };
STRATA_INT(i8, u8, -128, 127) STRATA_INT(i16, u16, -32768, 32767)
STRATA_INT(i32, u32, -2147483647 - 1, 2147483647) STRATA_INT(i64, u64, -9223372036854775807L - 1L, 9223372036854775807L)
STRATA_INT(u8, u8, 0, 255) STRATA_INT(u16, u16, 0, 65535) STRATA_INT(u32, u32, 0u, 4294967295u) STRATA_INT(u64, u64, 0ul, 18446744073709551615ul)
template <typename T, typename F> static __device__ inline T strata_as(F x) { union { F f; T t; } u; u.f = x; return u.t; }
template <typename T, typename F> static __device__ inline T strata_convert_sat(F x) {
    if (x != x) return (T)0;
    if (x <= (F)strata_int<T>::lo) return strata_int<T>::lo;
    if (x >= (F)strata_int<T>::hi) return strata_int<T>::hi;
    return (T)x;
}
static __device__ inline float strata_exp10(float x) { return exp10f(x); }
static __device__ inline double strata_exp10(double x) { return exp10(x); }
static __device__ inline float strata_degrees(float x) { return x * 57.2957795130823208767981548141051703f; }
static __device__ inline double strata_degrees(double x) { return x * (180.0 / 3.14159265358979323846264338327950288); }
static __device__ inline float strata_radians(float x) { return x * (3.14159265358979323846264338327950288f / 180.0f); }
static __device__ inline double strata_radians(double x) { return x * (3.14159265358979323846264338327950288 / 180.0); }
template <typename T> static __device__ inline T strata_clz(T x) {
    typedef typename strata_int<T>::u U;
    if (sizeof(T) == 8) return (T)__clzll((long long)(U)x);
    return (T)(__clz((int)(u32)(U)x) - (32 - 8 * (int)sizeof(T)));
}
template <typename T> static __device__ inline T strata_popcount(T x) {
    typedef typename strata_int<T>::u U;
    return sizeof(T) == 8 ? (T)__popcll((unsigned long long)(U)x) : (T)__popc((u32)(U)x);
}
template <typename T> static __device__ inline T strata_rotate(T x, T n) {
    typedef typename strata_int<T>::u U;
    const u32 bits = 8 * sizeof(T), k = (u32)((u64)(U)n % bits);
    const u64 v = (U)x;
    return k == 0 ? x : (T)(U)((v << k) | (v >> (bits - k)));
}
template <typename T> static __device__ inline T strata_mul_hi(T a, T b) {
    if (sizeof(T) < 4) return (T)(((i32)a * (i32)b) >> (8 * sizeof(T)));
    return (T)(((i64)a * (i64)b) >> 32);
}
template <> __device__ inline u32 strata_mul_hi(u32 a, u32 b) { return __umulhi(a, b); }
template <> __device__ inline i64 strata_mul_hi(i64 a, i64 b) { return (i64)__mul64hi((long long)a, (long long)b); }
template <> __device__ inline u64 strata_mul_hi(u64 a, u64 b) { return (u64)__umul64hi((unsigned long long)a, (unsigned long long)b); }
template <typename T> static __device__ inline T strata_add_sat(T a, T b) {
    typedef typename strata_int<T>::u U;
    const T r = (T)((U)a + (U)b);
    if (strata_int<T>::lo == 0) return r < a ? strata_int<T>::hi : r;
    if (a > 0 && b > 0 && r < 0) return strata_int<T>::hi;
    if (a < 0 && b < 0 && r >= 0) return strata_int<T>::lo;
    return r;
}
template <typename T> static __device__ inline T strata_sub_sat(T a, T b) {
    typedef typename strata_int<T>::u U;
    const T r = (T)((U)a - (U)b);
    if (strata_int<T>::lo == 0) return b > a ? (T)0 : r;
    if (a >= 0 && b < 0 && r < 0) return strata_int<T>::hi;
    if (a < 0 && b > 0 && r >= 0) return strata_int<T>::lo;
    return r;
}
#ifdef __CUDA_ARCH__
#define STRATA_OPAQUE(v, c) asm("" : "+" c(v))
#else
#define STRATA_OPAQUE(v, c) (void)0
#endif
template <typename T> static __device__ inline T strata_abs(T x) { u32 n = 0u - (u32)(i32)x; STRATA_OPAQUE(n, "r"); return x < 0 ? (T)n : x; }
static __device__ inline i32 strata_abs(i32 x) { u32 n = 0u - (u32)x; STRATA_OPAQUE(n, "r"); return x < 0 ? (i32)n : x; }
static __device__ inline i64 strata_abs(i64 x) { u64 n = 0ul - (u64)x; STRATA_OPAQUE(n, "l"); return x < 0 ? (i64)n : x; }
// Up to 32 bits through a 64-bit sum: NVRTC 13.0 miscompiled the bitwise form of
// hadd(1, -mul_hi(c, k)) (conformance case int/hadd_after_mul_hi).
template <typename T> static __device__ inline T strata_hadd(T a, T b) {
    if (sizeof(T) < 8) return (T)(((i64)a + (i64)b) >> 1);
    return (T)((a >> 1) + (b >> 1) + (a & b & 1));
}
template <typename T> static __device__ inline T strata_rhadd(T a, T b) {
    if (sizeof(T) < 8) return (T)(((i64)a + (i64)b + 1) >> 1);
    return (T)((a >> 1) + (b >> 1) + ((a | b) & 1));
}
#define STRATA_ATOMICS(T, C) \
static __device__ inline T strata_atomic_add(volatile T* p, T v) { return (T)atomicAdd((C*)p, (C)v); } \
static __device__ inline T strata_atomic_sub(volatile T* p, T v) { return (T)atomicAdd((C*)p, (C)0 - (C)v); } \
static __device__ inline T strata_atomic_and(volatile T* p, T v) { return (T)atomicAnd((C*)p, (C)v); } \
static __device__ inline T strata_atomic_or(volatile T* p, T v) { return (T)atomicOr((C*)p, (C)v); } \
static __device__ inline T strata_atomic_xor(volatile T* p, T v) { return (T)atomicXor((C*)p, (C)v); } \
static __device__ inline T strata_atomic_xchg(volatile T* p, T v) { return (T)atomicExch((C*)p, (C)v); } \
static __device__ inline T strata_atomic_cmpxchg(volatile T* p, T c, T v) { return (T)atomicCAS((C*)p, (C)c, (C)v); }
STRATA_ATOMICS(i32, unsigned int) STRATA_ATOMICS(u32, unsigned int) STRATA_ATOMICS(i64, unsigned long long) STRATA_ATOMICS(u64, unsigned long long)
static __device__ inline i32 strata_atomic_min(volatile i32* p, i32 v) { return atomicMin((int*)p, v); }
static __device__ inline i32 strata_atomic_max(volatile i32* p, i32 v) { return atomicMax((int*)p, v); }
static __device__ inline u32 strata_atomic_min(volatile u32* p, u32 v) { return atomicMin((unsigned int*)p, v); }
static __device__ inline u32 strata_atomic_max(volatile u32* p, u32 v) { return atomicMax((unsigned int*)p, v); }
static __device__ inline i64 strata_atomic_min(volatile i64* p, i64 v) { return (i64)atomicMin((long long*)p, (long long)v); }
static __device__ inline i64 strata_atomic_max(volatile i64* p, i64 v) { return (i64)atomicMax((long long*)p, (long long)v); }
static __device__ inline u64 strata_atomic_min(volatile u64* p, u64 v) { return (u64)atomicMin((unsigned long long*)p, (unsigned long long)v); }
static __device__ inline u64 strata_atomic_max(volatile u64* p, u64 v) { return (u64)atomicMax((unsigned long long*)p, (unsigned long long)v); }
template <typename T> static __device__ inline T strata_atomic_load(const volatile T* p) { return *p; }
"#;

/// The CUDA dialect's `f16`: its bits in an `unsigned short` (NVRTC finds no `cuda_fp16.h`
/// without the CUDA toolkit), converted by the PTX `cvt` instructions, which round to nearest
/// even (`.rn`) and keep NaN, infinities and subnormals.
const CUDA_F16_PREAMBLE: &str = r#"typedef unsigned short f16;
static __device__ inline float strata_h2f(f16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
static __device__ inline f16 strata_f2h(float f) { f16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
static __device__ inline double strata_h2d(f16 h) { double d; asm("cvt.f64.f16 %0, %1;" : "=d"(d) : "h"(h)); return d; }
static __device__ inline f16 strata_d2h(double d) { f16 h; asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d)); return h; }
"#;

/// Generated source for one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// The whole translation unit.
    pub source: String,
    /// The kernel's entry point.
    pub entry: String,
    /// Compiler options the dialect needs (the runtime may add its own).
    pub options: Vec<String>,
}

/// OpenCL C for `f`.
pub fn opencl(f: &ValidFunction) -> Result<Generated> {
    write(f, &OPENCL)
}

/// CUDA C++ for `f`.
pub fn cuda(f: &ValidFunction) -> Result<Generated> {
    write(f, &CUDA)
}

/// C source for `f` in `dialect`.
///
/// Fails when the kernel calls a stub function that has no source for this dialect.
pub fn write(vf: &ValidFunction, dialect: &'static Dialect) -> Result<Generated> {
    let f = vf.function();
    let mut w = Writer::new(vf, dialect);
    w.kernel();
    if !w.missing.is_empty() {
        return Err(Error::Unsupported {
            kernel: f.name.clone(),
            device: dialect.name.into(),
            reason: w.missing.join("; "),
        });
    }
    let mut src = String::new();
    let _ = writeln!(
        src,
        "// Generated by strata from kernel `{}` ({}).",
        f.name, dialect.name
    );
    src.push_str(dialect.preamble);
    if vf.info().uses_f64 {
        src.push_str(dialect.f64_preamble);
    }
    if vf.info().uses_f16 {
        src.push_str(dialect.f16_preamble);
    }
    if vf.info().uses_int64_atomics {
        src.push_str(dialect.int64_atomics_preamble);
    }
    if w.uses_scratch {
        src.push_str("#ifndef STRATA_MAX_GROUP\n#define STRATA_MAX_GROUP 1024\n#endif\n");
    }
    src.push_str(&w.structs());
    for h in &w.helpers {
        src.push('\n');
        src.push_str(h);
    }
    src.push('\n');
    src.push_str(&w.out);
    Ok(Generated {
        source: src,
        entry: entry_name(&f.name),
        options: dialect.options.iter().map(|s| s.to_string()).collect(),
    })
}

const RESERVED: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "half",
    "kernel",
    "global",
    "local",
    "constant",
    "private",
    "read_only",
    "write_only",
    "barrier",
    "class",
    "template",
    "new",
    "delete",
    "this",
    "true",
    "false",
    "namespace",
    "using",
    "operator",
    "public",
    "protected",
    "virtual",
    "friend",
    "typename",
    "explicit",
    "mutable",
    "asm",
    "nullptr",
    "constexpr",
    "decltype",
    "noexcept",
    "and",
    "or",
    "not",
    "xor",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
];

/// A struct field's name in C: the Rust name unless it is reserved in C or in the dialects
/// (then with a trailing `_`). Field names live in their struct's scope, so no other name can
/// clash with them.
fn field_ident(name: &str) -> String {
    if RESERVED.contains(&name) || name.starts_with("__") {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

fn ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    // Names the writer generates itself: temporaries `eN`, values `vN` and `name_N`, buffer
    // lengths `name_len`. A user name of that shape gets a trailing `_`.
    let generated_shape = {
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        (s.starts_with('e') || s.starts_with('v')) && digits(&s[1..])
            || s.rsplit_once('_').is_some_and(|(_, t)| digits(t))
            || s.ends_with("_len")
    };
    if generated_shape
        || RESERVED.contains(&s.as_str())
        || s.starts_with("get_")
        || s.starts_with("strata_")
        || s.starts_with("__")
    {
        s.push('_');
    }
    s
}

/// The entry-point name for a kernel: its name, unless that is a built-in function or a
/// reserved word of the target, in which case `_kernel` is appended.
fn entry_name(name: &str) -> String {
    const BUILTINS: &[&str] = &[
        "select",
        "bitselect",
        "fabs",
        "fmin",
        "fmax",
        "fdim",
        "fract",
        "modf",
        "frexp",
        "ldexp",
        "ilogb",
        "logb",
        "nan",
        "nextafter",
        "remainder",
        "remquo",
        "rint",
        "rootn",
        "sincos",
        "tgamma",
        "lgamma",
        "erf",
        "erfc",
        "maxmag",
        "minmag",
        "step",
        "smoothstep",
        "any",
        "all",
        "abs",
        "abs_diff",
        "min",
        "max",
        "clamp",
        "dot",
        "cross",
        "length",
        "mad",
        "mad24",
        "mul24",
        "mad_hi",
        "mad_sat",
        "upsample",
        "ctz",
        "printf",
        "shuffle",
        "shuffle2",
        "prefetch",
        "mem_fence",
        "read_mem_fence",
        "write_mem_fence",
        "wait_group_events",
        "async_work_group_copy",
        "async_work_group_strided_copy",
        "isequal",
        "isnotequal",
        "isgreater",
        "isgreaterequal",
        "isless",
        "islessequal",
        "islessgreater",
        "isnormal",
        "isordered",
        "isunordered",
        "main",
    ];
    const PREFIXES: &[&str] = &[
        "atomic_",
        "atom_",
        "convert_",
        "as_",
        "native_",
        "half_",
        "vload",
        "vstore",
        "work_group_",
        "sub_group_",
        "fast_",
        "__",
    ];
    let builtin = ir::MathFn::ALL.iter().any(|m| m.name() == name)
        || BUILTINS.contains(&name)
        || PREFIXES.iter().any(|p| name.starts_with(p));
    if builtin || RESERVED.contains(&name) {
        format!("{name}_kernel")
    } else {
        ident(name)
    }
}

struct Writer<'a> {
    f: &'a ir::Function,
    d: &'static Dialect,
    out: String,
    helpers: BTreeSet<String>,
    uses: Vec<u32>,
    avail: HashSet<ExprId>,
    scopes: Vec<Vec<ExprId>>,
    temps: HashMap<ExprId, String>,
    indent: usize,
    /// Enclosing loops, innermost last, with whether a goto label is needed for break / continue.
    loops: Vec<LoopId>,
    labels: HashSet<(LoopId, bool)>,
    uses_scratch: bool,
    /// Stub functions without a source for this dialect.
    missing: Vec<String>,
    scratch_types: BTreeSet<Scalar>,
    param_names: Vec<String>,
    local_names: Vec<String>,
    private_names: Vec<String>,
    struct_names: Vec<String>,
}

fn axis(d: u8) -> char {
    ['x', 'y', 'z'][d as usize % 3]
}

impl<'a> Writer<'a> {
    fn new(vf: &'a ValidFunction, d: &'static Dialect) -> Self {
        let f = vf.function();
        let uses = ir::expr_uses(f);
        let mut labels = HashSet::new();
        find_labels(&f.body, &mut Vec::new(), &mut labels);
        let mut taken: HashSet<String> = HashSet::new();
        let mut unique = |base: String| {
            let mut n = base.clone();
            let mut k = 1;
            while !taken.insert(n.clone()) {
                n = format!("{base}_{k}");
                k += 1;
            }
            n
        };
        let param_names = f.params.iter().map(|p| unique(ident(&p.name))).collect();
        let local_names = f.locals.iter().map(|l| unique(ident(&l.name))).collect();
        let private_names = f.privates.iter().map(|p| unique(ident(&p.name))).collect();
        let struct_names = f.structs.iter().map(|d| unique(ident(&d.name))).collect();
        Writer {
            f,
            d,
            out: String::new(),
            helpers: BTreeSet::new(),
            uses,
            avail: HashSet::new(),
            scopes: vec![Vec::new()],
            temps: HashMap::new(),
            indent: 1,
            loops: Vec::new(),
            labels,
            uses_scratch: false,
            missing: Vec::new(),
            scratch_types: BTreeSet::new(),
            param_names,
            local_names,
            private_names,
            struct_names,
        }
    }

    /// The declarations of the structs buffers hold, in Rust's `#[repr(C)]` layout: scalar
    /// fields, vectors as arrays of their components (a `float2` would be aligned to 8 bytes,
    /// Rust's `[f32; 2]` is aligned to 4), nested structs and fixed arrays, the struct aligned
    /// as in Rust; then a check of every offset and size that fails to compile (a negative array
    /// size) if the C compiler laid the struct out otherwise.
    fn structs(&self) -> String {
        let mut out = String::new();
        for (i, d) in self.f.structs.iter().enumerate() {
            let n = &self.struct_names[i];
            let _ = writeln!(
                out,
                "typedef struct __attribute__((aligned({}))) {n} {{",
                d.align
            );
            for fd in &d.fields {
                let (t, width) = match fd.ty {
                    ir::Elem::Value(t) => (self.ty(t.scalar), t.width as u32),
                    ir::Elem::Struct(k) => (self.struct_names[k as usize].as_str(), 1),
                };
                let count = fd.len.unwrap_or(1) * width;
                let name = field_ident(&fd.name);
                if fd.len.is_none() && width == 1 {
                    let _ = writeln!(out, "    {t} {name};");
                } else {
                    let _ = writeln!(out, "    {t} {name}[{count}];");
                }
            }
            let _ = writeln!(out, "}} {n};");
            let check = |id: String, cond: String| {
                self.d
                    .static_check
                    .replace("{id}", &id)
                    .replace("{cond}", &cond)
                    + "\n"
            };
            out.push_str(&check(
                format!("strata_layout_{n}"),
                format!("sizeof({n}) == {}", d.size),
            ));
            if let Some(offset_of) = self.d.offset_of {
                out.push_str("#ifdef __clang__\n");
                for fd in &d.fields {
                    let name = field_ident(&fd.name);
                    let off = offset_of.replace("{t}", n).replace("{f}", &name);
                    out.push_str(&check(
                        format!("strata_layout_{n}_{name}"),
                        format!("{off} == {}", fd.offset),
                    ));
                }
                out.push_str("#endif\n");
            } else {
                out.push_str(&check(
                    format!("strata_layout_{n}_align"),
                    format!("alignof({n}) == {}", d.align),
                ));
            }
        }
        out
    }

    fn ty(&self, s: Scalar) -> &'static str {
        self.d.types[Scalar::ALL.iter().position(|&x| x == s).expect("scalar")]
    }

    fn unsigned_of(s: Scalar) -> Scalar {
        match s {
            Scalar::I8 => Scalar::U8,
            Scalar::I16 => Scalar::U16,
            Scalar::I32 => Scalar::U32,
            Scalar::I64 => Scalar::U64,
            s => s,
        }
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn value_name(&self, v: ValueId) -> String {
        match self
            .f
            .values
            .get(v.0 as usize)
            .and_then(|d| d.name.as_deref())
        {
            Some(n) => format!("{}_{}", ident(n), v.0),
            None => format!("v{}", v.0),
        }
    }

    fn id(&self, b: usize, d: u8) -> String {
        format!(
            "({}){}",
            self.ty(Scalar::U32),
            self.d.ids[b]
                .replace("{d}", &d.to_string())
                .replace("{c}", &axis(d).to_string())
        )
    }

    fn builtin(&self, b: Builtin) -> String {
        match b {
            Builtin::GlobalId(d) => self.id(0, d),
            Builtin::LocalId(d) => self.id(1, d),
            Builtin::GroupId(d) => self.id(2, d),
            Builtin::GlobalSize(d) => self.id(3, d),
            Builtin::LocalSize(d) => self.id(4, d),
            Builtin::NumGroups(d) => self.id(5, d),
            Builtin::LocalLinearId => format!(
                "({} + {} * ({} + {} * {}))",
                self.id(1, 0),
                self.id(4, 0),
                self.id(1, 1),
                self.id(4, 1),
                self.id(1, 2)
            ),
            Builtin::GroupLinearId => format!(
                "({} + {} * ({} + {} * {}))",
                self.id(2, 0),
                self.id(5, 0),
                self.id(2, 1),
                self.id(5, 1),
                self.id(2, 2)
            ),
            // The formulas of `Builtin::sub_group_value`.
            Builtin::MaxSubGroupSize => format!("{}u", self.d.sub_group_size),
            Builtin::SubGroupId
            | Builtin::SubGroupLocalId
            | Builtin::NumSubGroups
            | Builtin::SubGroupSize => {
                let (size, lid) = self.group_size_and_id();
                let sg = self.d.sub_group_size;
                match b {
                    Builtin::SubGroupId => format!("({lid} / {sg}u)"),
                    Builtin::SubGroupLocalId => format!("({lid} % {sg}u)"),
                    Builtin::NumSubGroups => format!("(({size} + {}u) / {sg}u)", sg - 1),
                    _ => format!("min({sg}u, {size} - {lid} / {sg}u * {sg}u)"),
                }
            }
        }
    }

    /// The dialect's reinterpretation of the integer expression `bits` as type `t`.
    fn bits_as(&self, t: &str, bits: &str) -> String {
        self.d.bitcast.replace("{t}", t).replace("{x}", bits)
    }

    fn literal(&self, l: Literal) -> String {
        let t = self.ty(l.scalar);
        match l.scalar {
            Scalar::Bool => if l.bits != 0 { "true" } else { "false" }.into(),
            Scalar::F32 => {
                let v = f32::from_bits(l.bits as u32);
                if v.is_finite() {
                    format!("{v:?}f")
                } else {
                    self.bits_as(t, &format!("0x{:08x}u", l.bits))
                }
            }
            Scalar::F64 => {
                let v = f64::from_bits(l.bits);
                if v.is_finite() {
                    format!("{v:?}")
                } else {
                    self.bits_as(t, &format!("0x{:016x}ul", l.bits))
                }
            }
            Scalar::I32 => {
                let v = l.as_i128() as i32;
                if v == i32::MIN {
                    "(-2147483647 - 1)".into()
                } else {
                    v.to_string()
                }
            }
            Scalar::I64 => {
                let v = l.as_i128() as i64;
                if v == i64::MIN {
                    "(-9223372036854775807L - 1L)".into()
                } else {
                    format!("{v}L")
                }
            }
            Scalar::U32 => format!("{}u", l.bits),
            Scalar::U64 => format!("{}ul", l.bits),
            Scalar::F16 => {
                let u = self.ty(Scalar::U16);
                self.bits_as(t, &format!("(({u})0x{:04x})", l.bits))
            }
            _ => format!("(({t}){})", l.as_i128()),
        }
    }

    /// The components of an expression: one C expression per component.
    fn expr(&mut self, id: ExprId) -> Vec<String> {
        if let Some(t) = self.temps.get(&id) {
            let w = self.f.exprs.ty(id).width;
            return if w == 1 {
                vec![t.clone()]
            } else {
                (0..w).map(|c| format!("{t}_{c}")).collect()
            };
        }
        self.render(id)
    }

    fn render(&mut self, id: ExprId) -> Vec<String> {
        let ty = self.f.exprs.ty(id);
        let w = ty.width as usize;
        let e = self.f.exprs.get(id).clone();
        match e {
            Expr::Literal(l) => vec![self.literal(l)],
            Expr::Param(p) => {
                let n = self.param_names[p as usize].clone();
                vec![if ty.scalar == Scalar::Bool {
                    format!("({n} != 0)")
                } else {
                    n
                }]
            }
            Expr::BufferLen(p) => vec![format!("{}_len", self.param_names[p as usize])],
            Expr::Value(v) => {
                let n = self.value_name(v);
                if w == 1 {
                    vec![n]
                } else {
                    (0..w).map(|c| format!("{n}_{c}")).collect()
                }
            }
            Expr::Builtin(b) => vec![self.builtin(b)],
            Expr::Unary(op, a) => {
                let a = self.expr(a);
                a.iter().map(|x| self.unary(op, ty.scalar, x)).collect()
            }
            Expr::Binary(op, a, b) => {
                let s = self.f.exprs.ty(a).scalar;
                let (a, b) = (self.expr(a), self.expr(b));
                (0..w).map(|c| self.binary(op, s, &a[c], &b[c])).collect()
            }
            Expr::Select(c, a, b) => {
                let (cv, a, b) = (self.expr(c), self.expr(a), self.expr(b));
                // `?:` promotes types narrower than `int` to `int`; cast back so that overloaded
                // built-ins taking the result (`min`, `mul_hi`, ...) see the IR's type.
                let narrow = ty.scalar.is_int() && ty.scalar.size() < 4;
                let t = self.ty(ty.scalar);
                (0..w)
                    .map(|k| {
                        let sel = format!("{} ? {} : {}", cv[k % cv.len()], a[k], b[k]);
                        if narrow {
                            format!("(({t})({sel}))")
                        } else {
                            format!("({sel})")
                        }
                    })
                    .collect()
            }
            Expr::Cast(a, to) => {
                let from = self.f.exprs.ty(a).scalar;
                let a = self.expr(a);
                a.iter().map(|x| self.cast(from, to, x)).collect()
            }
            Expr::Bitcast(a, to) => {
                let t = self.ty(to.scalar);
                let a = self.expr(a);
                a.iter()
                    .map(|x| self.d.bitcast.replace("{t}", t).replace("{x}", x))
                    .collect()
            }
            Expr::Math(m, args) => {
                let at = self.f.exprs.ty(args[0]);
                let vals: Vec<Vec<String>> = args.iter().map(|&a| self.expr(a)).collect();
                self.math(m, at, &vals)
            }
            Expr::Splat(a, n) => {
                let a = self.expr(a);
                vec![a[0].clone(); n as usize]
            }
            Expr::Compose(parts) => parts.iter().map(|&p| self.expr(p)[0].clone()).collect(),
            Expr::Extract(a, i) => {
                let a = self.expr(a);
                vec![a[i as usize].clone()]
            }
            Expr::Stub(n, args) => {
                let stub = &self.f.stubs[n as usize];
                match stub.source(self.d.key) {
                    Some(src) => {
                        self.helpers.insert(format!("{}\n", src.trim()));
                    }
                    None => self.missing.push(format!(
                        "stub function `{}` has no {} source; give it one with `Stub::source(\"{}\", ...)`",
                        stub.name, self.d.name, self.d.key
                    )),
                }
                let name = stub.name.clone();
                let a: Vec<String> = args.iter().map(|&x| self.expr(x)[0].clone()).collect();
                vec![format!("{name}({})", a.join(", "))]
            }
        }
    }

    fn unary(&mut self, op: UnaryOp, s: Scalar, x: &str) -> String {
        let t = self.ty(s);
        match (op, s) {
            (UnaryOp::Not, Scalar::Bool) => format!("(!{x})"),
            (UnaryOp::Not, _) => format!("(({t})~{x})"),
            (UnaryOp::Neg, _) if s.is_float() => format!("(-{x})"),
            (UnaryOp::Neg, _) => {
                let u = self.ty(Self::unsigned_of(s));
                format!("(({t})(({u})0 - ({u}){x}))")
            }
        }
    }

    fn binary(&mut self, op: BinaryOp, s: Scalar, a: &str, b: &str) -> String {
        use BinaryOp::*;
        let t = self.ty(s);
        if op.is_comparison() || s == Scalar::Bool {
            let sym = match (op, s) {
                (And, Scalar::Bool) => "&&",
                (Or, Scalar::Bool) => "||",
                (Xor, Scalar::Bool) => "!=",
                _ => op.symbol(),
            };
            return format!("({a} {sym} {b})");
        }
        if s.is_float() {
            return match op {
                Rem => format!("fmod({a}, {b})"),
                _ => format!("({a} {} {b})", op.symbol()),
            };
        }
        let bits = s.bits();
        let narrow = s.size() < 4;
        // The unsigned type the operation is computed in: C promotes narrow types to `int`, where
        // `ushort * ushort` and left shifts of negative values are undefined.
        let wide_u = if narrow {
            self.ty(Scalar::U32)
        } else {
            self.ty(Self::unsigned_of(s))
        };
        match op {
            Add | Sub | Mul if s.is_signed() && !narrow => {
                format!("(({t})(({wide_u}){a} {} ({wide_u}){b}))", op.symbol())
            }
            Mul if narrow => format!("(({t})(({wide_u}){a} * ({wide_u}){b}))"),
            Shl => format!("(({t})(({wide_u}){a} << ({b} & {})))", bits - 1),
            Shr => format!("(({t})({a} >> ({b} & {})))", bits - 1),
            Div | Rem if s.is_signed() && !narrow => {
                let name = format!("strata_{}_{t}", if op == Div { "div" } else { "rem" });
                let body = if op == Div {
                    format!(
                        "return b == -1 ? ({t})(({u})0 - ({u})a) : a / b;",
                        u = self.ty(Self::unsigned_of(s))
                    )
                } else {
                    "return b == -1 ? 0 : a % b;".to_string()
                };
                self.helpers.insert(format!(
                    "{} {t} {name}({t} a, {t} b) {{ {body} }}\n",
                    self.d.helper_prefix
                ));
                format!("{name}({a}, {b})")
            }
            _ if narrow => format!("(({t})({a} {} {b}))", op.symbol()),
            _ => format!("({a} {} {b})", op.symbol()),
        }
    }

    fn cast(&mut self, from: Scalar, to: Scalar, x: &str) -> String {
        let t = self.ty(to);
        if from == to {
            return x.to_string();
        }
        if from == Scalar::F16 || to == Scalar::F16 {
            let k = match (from, to) {
                (Scalar::F16, Scalar::F32) => 0,
                (Scalar::F32, Scalar::F16) => 1,
                (Scalar::F16, Scalar::F64) => 2,
                (Scalar::F64, Scalar::F16) => 3,
                // Through f32, as `lower_f16` writes them (exact; see there).
                (Scalar::F16, _) => {
                    let w = self.cast(from, Scalar::F32, x);
                    return self.cast(Scalar::F32, to, &w);
                }
                _ => {
                    let w = self.cast(from, Scalar::F32, x);
                    return self.cast(Scalar::F32, to, &w);
                }
            };
            return self.d.f16_casts[k].replace("{x}", x);
        }
        if to == Scalar::Bool {
            return format!("({x} != 0)");
        }
        if from.is_float() && to.is_int() {
            if !self.d.convert_sat_nan_guard {
                return self.d.convert_sat.replace("{t}", t).replace("{x}", x);
            }
            let f = self.ty(from);
            let name = format!("strata_{t}_sat_{f}");
            let convert = self.d.convert_sat.replace("{t}", t).replace("{x}", "x");
            self.helpers.insert(format!(
                "{} {t} {name}({f} x) {{ return x != x ? ({t})0 : {convert}; }}\n",
                self.d.helper_prefix
            ));
            return format!("{name}({x})");
        }
        format!("(({t}){x})")
    }

    fn fname(&self, m: MathFn) -> &'static str {
        self.d
            .math_names
            .iter()
            .find(|(f, _)| *f == m)
            .map_or(m.name(), |(_, n)| n)
    }

    /// The helper that computes built-in `m` on component type `s` where strata defines the
    /// value itself (special cases that targets answer differently) or the target lacks the
    /// built-in (CUDA has no `tanpi`, `pown`, `rootn`, `mad_sat`, ...): its definition is
    /// added to the kernel's helpers and its name returned; `None` for the target's built-in.
    /// Each follows the evaluator's definition (`ir::eval`, `ir::special`).
    fn defined_helper(&mut self, m: MathFn, s: Scalar) -> Option<String> {
        // Most calls have no helper: decide before formatting anything.
        let cuda = self.d.key == "cuda";
        let helped = match m {
            MathFn::Fract | MathFn::Fdim | MathFn::Maxmag | MathFn::Minmag => s.is_float(),
            MathFn::Ilogb | MathFn::Powr | MathFn::Sinpi | MathFn::Cospi | MathFn::Tanpi => true,
            MathFn::Rint => !cuda && s.is_float(),
            MathFn::Asinpi | MathFn::Acospi | MathFn::Atanpi | MathFn::Atan2pi => cuda,
            MathFn::Ldexp | MathFn::Pown | MathFn::Rootn | MathFn::MadSat => cuda,
            _ => false,
        };
        if !helped {
            return None;
        }
        let t = self.ty(s);
        let name = format!("strata_{}_{t}", m.name());
        let lit = |v: f64| {
            if s == Scalar::F32 {
                format!("{:?}f", v as f32)
            } else {
                format!("{v:?}")
            }
        };
        let special = |v: f64| {
            let bits = if s == Scalar::F32 {
                (v as f32).to_bits() as u64
            } else {
                v.to_bits()
            };
            self.literal(Literal::from_bits(s, bits))
        };
        let (nan, inf) = (special(f64::NAN), special(f64::INFINITY));
        // f32 results that CUDA's float functions would leave near the bound are computed in
        // double and rounded once.
        let wide = if s == Scalar::F32 { "(double)" } else { "" };
        let pi = "3.141592653589793";
        let (x1, x2, xn) = (
            format!("{t} x"),
            format!("{t} x, {t} y"),
            format!("{t} x, i32 n"),
        );
        let [z, one, two, half, quarter, tq] = [0.0, 1.0, 2.0, 0.5, 0.25, 0.75].map(lit);
        let ret = if m == MathFn::Ilogb {
            self.ty(Scalar::I32)
        } else {
            t
        };
        let (params, body) = match m {
            MathFn::Fract if s.is_float() => (
                x1.clone(),
                format!(
                    "return (x != x || x == {z}) ? x : isinf(x) ? copysign({z}, x) : fmin(x - floor(x), {below});",
                    below = lit(if s == Scalar::F32 {
                        1.0 - f64::from(f32::EPSILON) / 2.0
                    } else {
                        1.0 - f64::EPSILON / 2.0
                    })
                ),
            ),
            MathFn::Fdim if s.is_float() => (
                x2.clone(),
                format!("return (x != x || y != y) ? x + y : x > y ? x - y : {};", z),
            ),
            MathFn::Maxmag | MathFn::Minmag if s.is_float() => {
                let (gt, f) = if m == MathFn::Maxmag { (">", "fmax") } else { ("<", "fmin") };
                (
                    x2.clone(),
                        format!("{t} ax = fabs(x), ay = fabs(y); return ax {gt} ay ? x : ay {gt} ax ? y : {f}(x, y);"),
                )
            }
            MathFn::Ilogb => (
                x1.clone(),
                format!("return (x != x || isinf(x)) ? 2147483647 : x == {} ? (-2147483647 - 1) : ilogb(x);", z),
            ),
            // PoCL 3.1's `rint` of a value its compiler can prove is infinite or beyond 2^52
            // (`rint(DBL_MAX)`) made the whole kernel store nothing (seen in the differential
            // tests): such values are already integers, and only the others reach `rint`.
            MathFn::Rint => (
                x1.clone(),
                format!(
                    "return fabs(x) < {} ? rint(x) : x;",
                    lit(if s == Scalar::F32 { 8388608.0 } else { 4503599627370496.0 })
                ),
            ),
            MathFn::Powr => (
                x2.clone(),
                format!(
                    "if (x != x || y != y || x < {z}) return {nan};\n    if (y == {z} && (x == {z} || isinf(x))) return {nan};\n    if (x == {one} && isinf(y)) return {nan};\n    return pow(x, y);",
                ),
            ),
            MathFn::Tanpi if cuda => (
                x1.clone(),
                format!(
                    "if (x != x || isinf(x)) return {nan};\n    {t} r = fmod(x, {one}), a = fabs(r);\n    bool odd = fabs(fmod(x, {two})) >= {one};\n    if (a == {z}) {{ {t} q = copysign({z}, x); return odd ? -q : q; }}\n    if (a == {half}) return fmod(floor(x), {two}) == {z} ? {inf} : -{inf};\n    double d = (double)a;\n    {t} v = ({t})(a <= {quarter} ? tan({pi} * d) : a <= {tq} ? 1.0 / tan({pi} * (0.5 - d)) : -tan({pi} * (1.0 - d)));\n    return r < {z} ? -v : v;",
                ),
            ),
            // The zeros of sinpi, cospi and tanpi carry signs by rule (OpenCL 1.2 section
            // 7.5.1): PoCL 3.1 returns sinpi(-7) = +0, cospi(-6.5) = -0 and tanpi(-7) = -0;
            // the built-in's zero is replaced by the rule's.
            MathFn::Sinpi => (
                x1.clone(),
                format!(
                    "if (x != x) return x;\n    {t} r = sinpi(x);\n    return r == {z} ? copysign({z}, x) : r;",
                ),
            ),
            MathFn::Cospi => (
                x1.clone(),
                format!(
                    "if (x != x) return x;\n    {t} r = cospi(x);\n    return r == {z} ? {z} : r;",
                ),
            ),
            MathFn::Tanpi if !cuda => (
                x1.clone(),
                format!(
                    "if (x != x) return x;\n    {t} r = tanpi(x);\n    return r == {z} ? copysign({z}, fmod(x, {two}) != {z} ? -x : x) : r;",
                ),
            ),
            MathFn::Asinpi | MathFn::Acospi | MathFn::Atanpi if cuda => (
                x1.clone(),
                format!("return ({t})({}({wide}x) / {pi});", &m.name()[..4]),
            ),
            MathFn::Atan2pi if cuda => (
                format!("{t} y, {t} x"),
                format!("return ({t})(atan2({wide}y, {wide}x) / {pi});"),
            ),
            // CUDA's ldexp takes |n| with PTX `abs.s32`, which ptxas may assume non-negative
            // (the golden test keeps integer `abs` out of every kernel): scale by powers of two
            // instead, as musl's scalbn does (exact; one rounding into the subnormals).
            MathFn::Ldexp if cuda => {
                let (max, min, mant, p_max, p_low, u) = if s == Scalar::F32 {
                    (127, -126, 24, "0x1p127f", "0x1p-102f", "u32")
                } else {
                    (1023, -1022, 53, "0x1p1023", "0x1p-969", "u64")
                };
                let shift = if s == Scalar::F32 { 23 } else { 52 };
                let two_n = self.bits_as(t, &format!("(({u})({max} + n) << {shift})"));
                (
                    xn.clone(),
                        format!(
                        "if (n > {max}) {{ x *= {p_max}; n -= {max}; if (n > {max}) {{ x *= {p_max}; n -= {max}; if (n > {max}) n = {max}; }} }}\n    else if (n < {min}) {{ x *= {p_low}; n += {d}; if (n < {min}) {{ x *= {p_low}; n += {d}; if (n < {min}) n = {min}; }} }}\n    return x * {two_n};",
                        d = -min - mant
                    ),
                )
            }
            MathFn::Pown if cuda => (
                xn.clone(),
                format!("return ({t})pow({wide}x, (double)n);"),
            ),
            MathFn::Rootn if cuda => (
                xn.clone(),
                format!(
                    "if (n == 0 || x != x || (x < {z} && n % 2 == 0)) return {nan};\n    bool neg = n % 2 != 0 && signbit(x);\n    double ax = fabs((double)x), y;\n    if (ax == 0.0) y = n < 0 ? (double){inf} : 0.0;\n    else if (isinf(ax)) y = n < 0 ? 0.0 : (double){inf};\n    else {{\n        y = pow(ax, 1.0 / (double)n);\n        double q = pow(y, (double)n) / ax;\n        if (!isinf(q) && q != 0.0 && q == q && ax >= 2.2250738585072014e-308 && y >= 2.2250738585072014e-308) y = y - y * (q - 1.0) / (double)n;\n    }}\n    return ({t})(neg ? -y : y);",
                ),
            ),
            MathFn::MadSat if cuda => {
                let body = match s {
                    Scalar::U64 => "u64 hi = __umul64hi(a, b), lo = a * b, r = lo + c;
    return (hi != 0 || r < lo) ? 18446744073709551615ul : r;".to_string(),
                    Scalar::I64 => "u64 lo = (u64)a * (u64)b, r = lo + (u64)c;
    i64 hi = __mul64hi(a, b) + (c < 0 ? -1L : 0L) + (r < lo ? 1L : 0L);
    if (hi == ((i64)r < 0 ? -1L : 0L)) return (i64)r;
    return hi < 0 ? (-9223372036854775807L - 1L) : 9223372036854775807L;".to_string(),
                    Scalar::U32 | Scalar::U16 | Scalar::U8 => format!("u64 r = (u64)a * (u64)b + (u64)c;
    return r > (u64)strata_int<{t}>::hi ? strata_int<{t}>::hi : ({t})r;"),
                    _ => format!("i64 r = (i64)a * (i64)b + (i64)c;
    return r > (i64)strata_int<{t}>::hi ? strata_int<{t}>::hi : r < (i64)strata_int<{t}>::lo ? strata_int<{t}>::lo : ({t})r;"),
                };
                (format!("{t} a, {t} b, {t} c"), body)
            }
            _ => return None,
        };
        self.helpers.insert(format!(
            "{} {ret} {name}({params}) {{\n    {body}\n}}\n",
            self.d.helper_prefix
        ));
        Some(name)
    }

    fn math(&mut self, m: MathFn, at: Type, v: &[Vec<String>]) -> Vec<String> {
        let w = at.width as usize;
        let s = at.scalar;
        let t = self.ty(s);
        let float = s.is_float();
        let zero = if s == Scalar::F32 { "0.0f" } else { "0.0" };
        match m.kind() {
            MathKind::Reduce => {
                // acc = 0; acc += x*y per component, in order: the evaluator's formula.
                let mut acc = zero.to_string();
                for c in 0..w {
                    let term = match m {
                        MathFn::Dot => format!("({} * {})", v[0][c], v[1][c]),
                        MathFn::Distance => {
                            let d = format!("({} - {})", v[0][c], v[1][c]);
                            format!("({d} * {d})")
                        }
                        _ => format!("({} * {})", v[0][c], v[0][c]),
                    };
                    acc = format!("({acc} + {term})");
                }
                vec![if m == MathFn::Dot {
                    acc
                } else {
                    format!("sqrt({acc})")
                }]
            }
            MathKind::Geometric if m == MathFn::Cross => {
                let (a, b) = (&v[0], &v[1]);
                let mut r = vec![
                    format!("(({} * {}) - ({} * {}))", a[1], b[2], a[2], b[1]),
                    format!("(({} * {}) - ({} * {}))", a[2], b[0], a[0], b[2]),
                    format!("(({} * {}) - ({} * {}))", a[0], b[1], a[1], b[0]),
                ];
                if w == 4 {
                    r.push(zero.to_string());
                }
                r
            }
            MathKind::Geometric => {
                let mut acc = zero.to_string();
                for c in 0..w {
                    acc = format!("({acc} + ({} * {}))", v[0][c], v[0][c]);
                }
                (0..w)
                    .map(|c| format!("({} / sqrt({acc}))", v[0][c]))
                    .collect()
            }
            _ => {
                let helper = self.defined_helper(m, s);
                (0..w)
                .map(|c| {
                    let a: Vec<&str> = v.iter().map(|x| x[c].as_str()).collect();
                    match (m, float) {
                        (MathFn::Min, true) => format!("fmin({}, {})", a[0], a[1]),
                        (MathFn::Max, true) => format!("fmax({}, {})", a[0], a[1]),
                        (MathFn::Clamp, true) => {
                            format!("fmin(fmax({}, {}), {})", a[0], a[1], a[2])
                        }
                        // C's `min`/`max` on narrow integers may return `int` (CUDA has no
                        // narrow overloads): cast back, so that overloaded callers see `t`.
                        (MathFn::Clamp, false) if s.size() < 4 => {
                            format!("(({t})min(max({}, {}), {}))", a[0], a[1], a[2])
                        }
                        (MathFn::Clamp, false) => format!("min(max({}, {}), {})", a[0], a[1], a[2]),
                        (MathFn::Min | MathFn::Max, false) if s.size() < 4 => {
                            format!("(({t}){}({}, {}))", self.fname(m), a[0], a[1])
                        }
                        (MathFn::Abs, true) => format!("fabs({})", a[0]),
                        _ if helper.is_some() => {
                            format!("{}({})", helper.as_deref().unwrap_or(""), a.join(", "))
                        }
                        (_, true) if self.d.nan_guarded.contains(&m) => {
                            let f = self.fname(m);
                            let name = format!("strata_{f}_{t}");
                            // The value with a NaN argument, as IEEE 754 (and the evaluator)
                            // defines it: NaN, but pow(x, 0) = pow(1, y) = 1 and
                            // hypot(inf, y) = inf.
                            let body = match m.arity() {
                                1 => format!("return isnan(x) ? x : {f}(x);"),
                                _ => {
                                    let special = match m {
                                        MathFn::Pow => {
                                            format!("(y == ({t})0 || x == ({t})1) ? ({t})1 : ")
                                        }
                                        MathFn::Hypot => format!(
                                            "(isinf(x) || isinf(y)) ? ({t})INFINITY : "
                                        ),
                                        _ => String::new(),
                                    };
                                    format!(
                                        "return (isnan(x) || isnan(y)) ? ({special}x + y) : {f}(x, y);"
                                    )
                                }
                            };
                            let params = if m.arity() == 1 {
                                format!("{t} x")
                            } else {
                                format!("{t} x, {t} y")
                            };
                            self.helpers.insert(format!(
                                "{} {t} {name}({params}) {{ {body} }}\n",
                                self.d.helper_prefix
                            ));
                            format!("{name}({})", a.join(", "))
                        }
                        (MathFn::Sign, true) => {
                            // A helper, not the built-in: NVIDIA's OpenCL returns +0 for
                            // sign(-0.0); strata (and OpenCL) return the zero itself.
                            let name = format!("strata_sign_{t}");
                            self.helpers.insert(format!(
                                "{} {t} {name}({t} x) {{ return x != x ? ({t})0 : x > ({t})0 ? ({t})1 : x < ({t})0 ? ({t})-1 : x; }}\n",
                                self.d.helper_prefix
                            ));
                            format!("{name}({})", a[0])
                        }
                        (MathFn::Abs, false) if s.is_signed() && self.fname(m) != m.name() => {
                            // The dialect's own exact helper (CUDA: ptxas may assume that the
                            // result of PTX `abs` is never negative, which breaks abs(MIN)).
                            format!("{}({})", self.fname(m), a[0])
                        }
                        (MathFn::Abs, false) if s.is_signed() => {
                            // Not the built-in: Clang lowers it to an intrinsic for which
                            // abs(MIN) is poison; strata defines abs(MIN) == MIN. NVIDIA's
                            // OpenCL compiler turns even this form into PTX `abs`, whose
                            // result ptxas treats as never negative (seen on an H100): there
                            // an empty `asm` hides the negation (narrow types in `uint`).
                            let (u, reg) = if s.size() == 8 {
                                (self.ty(Self::unsigned_of(s)), "l")
                            } else {
                                (self.ty(Scalar::U32), "r")
                            };
                            let i = if s.size() == 8 { t } else { self.ty(Scalar::I32) };
                            let name = format!("strata_abs_{t}");
                            self.helpers.insert(format!(
                                "{} {t} {name}({t} x) {{\n    {u} n = ({u})0 - ({u})({i})x;\n#if defined(__NV_CL_C_VERSION) || defined(cl_nv_pragma_unroll)\n    __asm__ volatile(\"\" : \"+{reg}\"(n));\n#endif\n    return x < 0 ? ({t})n : x;\n}}\n",
                                self.d.helper_prefix
                            ));
                            format!("{name}({})", a[0])
                        }
                        (MathFn::Abs, false) => a[0].to_string(),
                        (MathFn::Mix, _) => format!("({0} + ({1} - {0}) * {2})", a[0], a[1], a[2]),
                        (MathFn::Rsqrt, _) => format!(
                            "(1.0{} / sqrt({}))",
                            if s == Scalar::F32 { "f" } else { "" },
                            a[0]
                        ),
                        (MathFn::IsNan | MathFn::IsInf | MathFn::IsFinite | MathFn::Signbit, _) => {
                            format!("({}({}) != 0)", self.fname(m), a[0])
                        }
                        (
                            MathFn::Clz
                            | MathFn::Popcount
                            | MathFn::Rotate
                            | MathFn::MulHi
                            | MathFn::AddSat
                            | MathFn::SubSat
                            | MathFn::Hadd
                            | MathFn::Rhadd,
                            _,
                        ) => {
                            format!("(({t}){}({}))", self.fname(m), a.join(", "))
                        }
                        _ => format!("{}({})", self.fname(m), a.join(", ")),
                    }
                })
                .collect()
            }
        }
    }

    /// Emits temporaries for the multi-use expressions `id` needs, operands first.
    fn need(&mut self, id: ExprId) {
        if self.avail.contains(&id) || self.temps.contains_key(&id) {
            return;
        }
        let e = self.f.exprs.get(id).clone();
        if matches!(
            e,
            Expr::Literal(_) | Expr::Param(_) | Expr::BufferLen(_) | Expr::Value(_)
        ) {
            return;
        }
        for o in ir::expr_operands(&e) {
            self.need(o);
        }
        if self.uses[id.0 as usize] > 1 {
            let ty = self.f.exprs.ty(id);
            let name = format!("e{}", id.0);
            let comps = self.render(id);
            let t = self.ty(ty.scalar);
            for (c, x) in comps.iter().enumerate() {
                let n = if ty.width == 1 {
                    name.clone()
                } else {
                    format!("{name}_{c}")
                };
                self.line(&format!("const {t} {n} = {x};"));
            }
            self.temps.insert(id, name);
            self.avail.insert(id);
            self.scopes.last_mut().expect("scope").push(id);
        }
    }

    fn operands(&mut self, s: &Stmt) {
        for o in ir::stmt_operands(s) {
            self.need(o);
        }
    }

    fn block(&mut self, b: &ir::Block) {
        self.scopes.push(Vec::new());
        self.indent += 1;
        for s in b {
            self.stmt(s);
        }
        self.indent -= 1;
        for id in self.scopes.pop().expect("scope") {
            self.avail.remove(&id);
            self.temps.remove(&id);
        }
    }

    fn mem_ref(&mut self, mem: Mem, index: ExprId, c: usize) -> String {
        let w = self.f.mem_elem(mem).expect("validated").width as usize;
        let i = self.expr(index)[0].clone();
        let (name, scalar_var) = match mem {
            Mem::Field(v) => {
                let v = &self.f.fields[v as usize];
                let base = &self.param_names[v.buffer as usize];
                let suffix = self.f.path_suffix_named(v, field_ident);
                return match w {
                    1 => format!("{base}[{i}]{suffix}"),
                    _ => format!("{base}[{i}]{suffix}[{c}]"),
                };
            }
            Mem::Buffer(p) => (self.param_names[p as usize].clone(), false),
            Mem::Local(l) => (self.local_names[l as usize].clone(), false),
            Mem::Private(p) => (
                self.private_names[p as usize].clone(),
                self.f.privates[p as usize].len.is_none(),
            ),
        };
        match (scalar_var, w) {
            (true, 1) => name,
            (true, _) => format!("{name}[{c}]"),
            (false, 1) => format!("{name}[{i}]"),
            (false, _) => format!("{name}[({i}) * {w} + {c}]"),
        }
    }

    fn decl(&mut self, v: ValueId, comps: &[String]) {
        let ty = self.f.values[v.0 as usize].ty;
        let t = self.ty(ty.scalar);
        let n = self.value_name(v);
        if ty.width == 1 {
            self.line(&format!("const {t} {n} = {};", comps[0]));
        } else {
            for (c, x) in comps.iter().enumerate() {
                self.line(&format!("const {t} {n}_{c} = {x};"));
            }
        }
    }

    fn jump(&mut self, id: LoopId, brk: bool) {
        if self.loops.last() == Some(&id) {
            self.line(if brk { "break;" } else { "continue;" });
        } else {
            self.line(&format!(
                "goto L{}_{};",
                id.0,
                if brk { "break" } else { "continue" }
            ));
        }
    }

    /// The dialect's fence of memory `spaces` at `scope`.
    fn fence(&self, spaces: Fence, scope: ir::MemScope) -> &'static str {
        match (scope, self.d.work_group_fence) {
            (ir::MemScope::WorkGroup, Some(f)) => f,
            _ => self.d.fences[Self::fence_index(spaces)],
        }
    }

    /// The fence an atomic of `order` needs before it (`before`: when it releases) or after
    /// it (when it acquires), if any: atomics themselves are relaxed in both dialects (see
    /// [`ir::AtomicOrder`]).
    fn order_fence(&mut self, order: ir::AtomicOrder, before: bool) {
        let needed = if before {
            order.order.releases()
        } else {
            order.order.acquires()
        };
        if needed {
            let all = Fence {
                local: true,
                global: true,
            };
            let f = self.fence(all, order.scope);
            self.line(&format!("{f};"));
        }
    }

    fn fence_index(f: Fence) -> usize {
        match (f.local, f.global) {
            (true, false) => 0,
            (false, true) => 1,
            _ => 2,
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        self.operands(s);
        match s {
            Stmt::Let { value, expr } => {
                let c = self.expr(*expr);
                self.decl(*value, &c);
            }
            Stmt::Load {
                value, mem, index, ..
            } => {
                let w = self.f.values[value.0 as usize].ty.width as usize;
                let comps: Vec<String> = (0..w).map(|c| self.mem_ref(*mem, *index, c)).collect();
                self.decl(*value, &comps);
            }
            Stmt::Store {
                mem, index, value, ..
            } => {
                let v = self.expr(*value);
                for (c, x) in v.iter().enumerate() {
                    let r = self.mem_ref(*mem, *index, c);
                    self.line(&format!("{r} = {x};"));
                }
            }
            Stmt::AtomicLoad {
                value,
                mem,
                index,
                order,
                ..
            } => {
                let p = format!("&{}", self.mem_ref(*mem, *index, 0));
                let read = match self.d.atomic_load {
                    Some(f) => f.replace("{p}", &p),
                    None => {
                        let elem = self.f.mem_elem(*mem).expect("validated").scalar;
                        let or = if elem.size() == 8 {
                            self.d.atomics64[5]
                        } else {
                            self.d.atomics32[5]
                        };
                        format!("{or}({p}, ({})0)", self.ty(elem))
                    }
                };
                self.decl(*value, &[read]);
                self.order_fence(*order, false);
            }
            Stmt::Atomic {
                result,
                mem,
                index,
                op,
                operand,
                compare,
                order,
                ..
            } => {
                let call = self.atomic(*mem, *index, *op, *operand, *compare);
                self.order_fence(*order, true);
                match result {
                    Some(r) => self.decl(*r, &[call]),
                    None => self.line(&format!("(void){call};")),
                }
                self.order_fence(*order, false);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(*cond)[0].clone();
                self.line(&format!("if ({}) {{", strip_parens(&c)));
                self.block(then);
                if !otherwise.is_empty() {
                    self.line("} else {");
                    self.block(otherwise);
                }
                self.line("}");
            }
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => {
                let s = self.f.values[var.0 as usize].ty.scalar;
                let t = self.ty(s);
                let n = self.value_name(*var);
                let (a, e, st) = (
                    self.expr(*start)[0].clone(),
                    self.expr(*end)[0].clone(),
                    self.expr(*step)[0].clone(),
                );
                let cond = match self.f.exprs.literal(*step) {
                    Some(l) if l.as_i128() > 0 => format!("{n} < {e}"),
                    Some(_) => format!("{n} > {e}"),
                    // An unsigned step cannot be negative (a zero step is an error in the IR).
                    None if !s.is_signed() => format!("{n} < {e}"),
                    None => format!("({st} > 0 ? {n} < {e} : {n} > {e})"),
                };
                let u = self.ty(Self::unsigned_of(s));
                let inc = if self
                    .f
                    .exprs
                    .literal(*step)
                    .is_some_and(|l| l.as_i128() == 1)
                {
                    format!("{n}++")
                } else if s.is_signed() || s.size() < 4 {
                    format!("{n} = ({t})(({u}){n} + ({u}){st})")
                } else {
                    format!("{n} += {st}")
                };
                self.line(&format!("for ({t} {n} = {a}; {cond}; {inc}) {{"));
                self.loop_body(*id, body);
                self.line("}");
                if self.labels.contains(&(*id, true)) {
                    self.line(&format!("L{}_break:;", id.0));
                }
            }
            Stmt::Loop { id, body } => {
                self.line("for (;;) {");
                self.loop_body(*id, body);
                self.line("}");
                if self.labels.contains(&(*id, true)) {
                    self.line(&format!("L{}_break:;", id.0));
                }
            }
            Stmt::Break(id) => self.jump(*id, true),
            Stmt::Continue(id) => self.jump(*id, false),
            Stmt::Return => self.line("return;"),
            Stmt::Barrier(f) => {
                let b = self.d.barriers[Self::fence_index(*f)];
                self.line(&format!("{b};"));
            }
            Stmt::MemFence { spaces, order } => {
                let b = self.fence(*spaces, order.scope);
                self.line(&format!("{b};"));
            }
            Stmt::Group {
                value,
                op,
                scope: GroupScope::WorkGroup,
                arg,
                source,
            } => self.group(*value, *op, *arg, *source),
            Stmt::Group {
                value,
                op,
                scope: GroupScope::SubGroup,
                arg,
                source,
            } => match self.d.collectives {
                Collectives::LocalSerial => self.sub_group_local(*value, *op, *arg, *source),
                Collectives::WarpShuffle => self.sub_group_warp(*value, *op, *arg, *source),
            },
        }
    }

    fn loop_body(&mut self, id: LoopId, body: &ir::Block) {
        self.loops.push(id);
        if self.labels.contains(&(id, false)) {
            // The body in its own block, so that `goto` to the label skips no declaration in
            // the label's scope (C++ forbids that).
            self.indent += 1;
            self.line("{");
            self.block(body);
            self.line("}");
            self.line(&format!("L{}_continue:;", id.0));
            self.indent -= 1;
        } else {
            self.block(body);
        }
        self.loops.pop();
    }

    fn atomic(
        &mut self,
        mem: Mem,
        index: ExprId,
        op: AtomicOp,
        operand: ExprId,
        compare: Option<ExprId>,
    ) -> String {
        let elem = self.f.mem_elem(mem).expect("validated").scalar;
        let p = format!("&{}", self.mem_ref(mem, index, 0));
        let v = self.expr(operand)[0].clone();
        let k = match op {
            AtomicOp::Add => 0,
            AtomicOp::Sub => 1,
            AtomicOp::Min => 2,
            AtomicOp::Max => 3,
            AtomicOp::And => 4,
            AtomicOp::Or => 5,
            AtomicOp::Xor => 6,
            AtomicOp::Exchange => 7,
            AtomicOp::CompareExchange => 8,
        };
        let space = match mem {
            Mem::Local(_) => self.d.local_ptr,
            _ => self.d.global,
        };
        if elem.is_float() {
            // Float add, min, max and exchange as a compare-exchange loop on the bits (min and
            // max with the evaluator's NaN rule, `fmin`/`fmax`).
            let t = self.ty(elem);
            let (bits, names) = if elem == Scalar::F32 {
                (Scalar::U32, &self.d.atomics32)
            } else {
                (Scalar::U64, &self.d.atomics64)
            };
            let u = self.ty(bits);
            let cas = names[8];
            let as_u = self.d.bitcast.replace("{t}", u);
            let as_f = self.d.bitcast.replace("{t}", t);
            let f = as_f.replace("{x}", "old");
            let (what, new) = match op {
                AtomicOp::Min => ("min", format!("fmin({f}, v)")),
                AtomicOp::Max => ("max", format!("fmax({f}, v)")),
                AtomicOp::Exchange => ("xchg", "v".to_string()),
                _ => ("add", format!("({f} + v)")),
            };
            let name = format!("strata_atomic_{what}_{t}_{}", space.trim_start_matches('_'));
            self.helpers.insert(format!(
                "{pre} {t} {name}(volatile {space} {t}* p, {t} v) {{\n    {u} old = {load};\n    for (;;) {{\n        {u} seen = {cas}((volatile {space} {u}*)p, old, {new});\n        if (seen == old) return {ret};\n        old = seen;\n    }}\n}}\n",
                pre = self.d.helper_prefix,
                load = as_u.replace("{x}", "*p"),
                new = as_u.replace("{x}", &new),
                ret = as_f.replace("{x}", "old"),
            ));
            return format!("{name}({p}, {v})");
        }
        let f = if elem.size() == 8 {
            self.d.atomics64[k]
        } else {
            self.d.atomics32[k]
        };
        match compare {
            Some(c) => {
                let c = self.expr(c)[0].clone();
                format!("{f}({p}, {c}, {v})")
            }
            None => format!("{f}({p}, {v})"),
        }
    }

    fn group(&mut self, value: ValueId, op: GroupOp, arg: ExprId, source: Option<ExprId>) {
        let ty = self.f.exprs.ty(arg);
        if op == GroupOp::Broadcast {
            return self.group_broadcast(value, ty, arg, source.expect("validated"));
        }
        match self.d.collectives {
            Collectives::WarpShuffle => self.group_warp(value, op, ty.scalar, arg),
            Collectives::LocalSerial => self.group_serial(value, op, ty.scalar, arg),
        }
    }

    /// The combination of a collective on scratch type `s` and its identity.
    fn group_comb(&self, op: GroupOp, s: Scalar) -> (Comb, String) {
        match op {
            GroupOp::ReduceAdd | GroupOp::ScanInclusiveAdd | GroupOp::ScanExclusiveAdd => (
                Comb::Add,
                if s.is_float() {
                    self.literal(Literal::from_bits(s, 0))
                } else {
                    format!("({})0", self.ty(s))
                },
            ),
            GroupOp::ReduceMin | GroupOp::ScanInclusiveMin | GroupOp::ScanExclusiveMin => {
                (Comb::Min, self.extreme(s, true))
            }
            GroupOp::ReduceMax | GroupOp::ScanInclusiveMax | GroupOp::ScanExclusiveMax => {
                (Comb::Max, self.extreme(s, false))
            }
            GroupOp::Any => (Comb::Or, format!("({})0", self.ty(s))),
            // All, and the operations that fold nothing.
            _ => (Comb::And, format!("({})1", self.ty(s))),
        }
    }

    /// `a` combined with `b` (`a` from the lower local ids) in type `s`, as the evaluator
    /// computes it (integer sums wrap).
    fn comb(&self, c: Comb, s: Scalar, a: &str, b: &str) -> String {
        let t = self.ty(s);
        match c {
            Comb::Add if s.is_float() => format!("({a} + {b})"),
            Comb::Add if s.is_signed() && s.size() >= 4 => {
                let u = self.ty(Self::unsigned_of(s));
                format!("({t})(({u}){a} + ({u}){b})")
            }
            Comb::Add => format!("({t})({a} + {b})"),
            Comb::Min if s.is_float() => format!("fmin({a}, {b})"),
            Comb::Max if s.is_float() => format!("fmax({a}, {b})"),
            Comb::Min => format!("({t})min({a}, {b})"),
            Comb::Max => format!("({t})max({a}, {b})"),
            Comb::Or => format!("({t})({a} | {b})"),
            Comb::And => format!("({t})({a} & {b})"),
        }
    }

    /// The work-group size and the local linear id, as `u32` expressions.
    fn group_size_and_id(&self) -> (String, String) {
        let size = format!(
            "({} * {} * {})",
            self.id(4, 0),
            self.id(4, 1),
            self.id(4, 2)
        );
        (size, self.builtin(Builtin::LocalLinearId))
    }

    /// Broadcast through a local array indexed by local linear id (any type, any width).
    fn group_broadcast(&mut self, value: ValueId, ty: Type, arg: ExprId, source: ExprId) {
        self.uses_scratch = true;
        let s = if ty.scalar == Scalar::Bool {
            Scalar::U8
        } else {
            ty.scalar
        };
        self.scratch_types.insert(s);
        let t = self.ty(s);
        let vt = self.ty(ty.scalar);
        let u = self.ty(Scalar::U32);
        let scratch = format!("strata_scratch_{t}");
        let (_, lid) = self.group_size_and_id();
        let bl = self.d.barriers[0];
        let a = self.expr(arg);
        let src = self.expr(source)[0].clone();
        let n = self.value_name(value);
        for (c, x) in a.iter().enumerate() {
            let r = if ty.width == 1 {
                n.clone()
            } else {
                format!("{n}_{c}")
            };
            self.line(&format!("{vt} {r};"));
            self.line("{");
            self.indent += 1;
            self.line(&format!("const {t} strata_x = ({t}){x};"));
            self.line(&format!("const {u} strata_src = {src};"));
            self.line(&format!("{scratch}[{lid}] = strata_x;"));
            self.line(&format!("{bl};"));
            let read = format!("{scratch}[strata_src]");
            let read = if ty.scalar == Scalar::Bool {
                format!("({read} != 0)")
            } else {
                read
            };
            self.line(&format!("{r} = {read};"));
            self.line(&format!("{bl};"));
            self.indent -= 1;
            self.line("}");
        }
    }

    /// [`Collectives::LocalSerial`]: the work-items' values in a local scratch array, folded in
    /// local-id order by the first work-item (see there).
    fn group_serial(&mut self, value: ValueId, op: GroupOp, vs: Scalar, arg: ExprId) {
        self.uses_scratch = true;
        let s = if vs == Scalar::Bool { Scalar::U8 } else { vs };
        self.scratch_types.insert(s);
        let (t, vt, u) = (self.ty(s), self.ty(vs), self.ty(Scalar::U32));
        let sc = format!("strata_scratch_{t}");
        let (size, lid) = self.group_size_and_id();
        let bl = self.d.barriers[0];
        let (c, id) = self.group_comb(op, s);
        let x = self.expr(arg)[0].clone();
        let r = self.value_name(value);
        self.line(&format!("{vt} {r};"));
        self.line("{");
        self.indent += 1;
        let x = if vs == Scalar::Bool {
            format!("({t})({x} ? 1 : 0)")
        } else {
            x
        };
        self.line(&format!("const {u} strata_lid = {lid};"));
        self.line(&format!("{sc}[strata_lid] = {x};"));
        self.line(&format!("{bl};"));
        self.line("if (strata_lid == 0u) {");
        self.indent += 1;
        self.line(&format!("{t} strata_acc = {id};"));
        self.line(&format!("const {u} strata_n = {size};"));
        self.line(&format!(
            "for ({u} strata_k = 0u; strata_k < strata_n; strata_k++) {{"
        ));
        self.indent += 1;
        self.line(&format!("const {t} strata_v = {sc}[strata_k];"));
        let acc = self.comb(c, s, "strata_acc", "strata_v");
        let scan = op.is_fold() && !op.is_reduce();
        if op.is_exclusive() {
            self.line(&format!("{sc}[strata_k] = strata_acc;"));
        }
        self.line(&format!("strata_acc = {acc};"));
        if scan && !op.is_exclusive() {
            self.line(&format!("{sc}[strata_k] = strata_acc;"));
        }
        self.indent -= 1;
        self.line("}");
        self.line(&format!("{sc}[STRATA_MAX_GROUP] = strata_acc;"));
        self.indent -= 1;
        self.line("}");
        self.line(&format!("{bl};"));
        let read = if scan {
            format!("{sc}[strata_lid]")
        } else {
            format!("{sc}[STRATA_MAX_GROUP]")
        };
        let read = if vs == Scalar::Bool {
            format!("({read} != 0)")
        } else {
            read
        };
        self.line(&format!("{r} = {read};"));
        self.line(&format!("{bl};"));
        self.indent -= 1;
        self.line("}");
    }

    /// [`Collectives::WarpShuffle`]: a call of a helper per operation and type (see there).
    fn group_warp(&mut self, value: ValueId, op: GroupOp, vs: Scalar, arg: ExprId) {
        let x = self.expr(arg)[0].clone();
        let call = match op {
            GroupOp::Any => format!("(__syncthreads_or({x} ? 1 : 0) != 0)"),
            GroupOp::All => format!("(__syncthreads_and({x} ? 1 : 0) != 0)"),
            _ => {
                let name = self.warp_helper(op, vs);
                format!("{name}({x})")
            }
        };
        self.decl(value, &[call]);
    }

    /// Defines (once) the CUDA helper for a reduction or scan over type `s` and returns its
    /// name. Within a warp of `live` lanes (the last warp of a work-group may be partial; the
    /// shuffles' mask names exactly the lanes present) values move by shuffles; each warp's
    /// total goes to `strata_part[warp]`; after a barrier, every warp combines the totals it
    /// needs (all of them, or those of the warps before it) with shuffles again, and a second
    /// barrier frees `strata_part` for the next call.
    fn warp_helper(&mut self, op: GroupOp, s: Scalar) -> String {
        let t = self.ty(s);
        let name = format!("strata_{}_{t}", op.name(GroupScope::WorkGroup));
        let st = self.shuffled_type(s);
        let (c, id) = self.group_comb(op, s);
        let comb = |a: &str, b: &str| self.comb(c, s, a, b);
        let warp_reduce = |v: &str| self.warp_tree(c, s, v);
        let mut b = format!(
            "{pre} {t} {name}({t} x) {{\n    __shared__ {t} strata_part[32];\n{WARP_PROLOGUE}    const u32 warp = lid >> 5;\n    x = {norm};\n",
            pre = self.d.helper_prefix,
            norm = comb(&id, "x"),
        );
        let scan = !op.is_reduce();
        if scan {
            b.push_str(&self.warp_scan_steps(c, s));
            let _ = write!(
                b,
                "    if (lane == live - 1u) strata_part[warp] = x;\n    __syncthreads();\n    {t} p = {id};\n    for (u32 j = lane; j < warp; j += live) p = {};\n",
                comb("p", "strata_part[j]"),
            );
            b.push_str(&warp_reduce("p"));
            let _ = writeln!(b, "    p = ({t})__shfl_sync(mask, ({st})p, 0);");
            if op.is_exclusive() {
                let _ = write!(
                    b,
                    "    const {t} e = ({t})__shfl_up_sync(mask, ({st})x, 1);\n    __syncthreads();\n    return lane == 0u ? p : {};\n}}\n",
                    comb("p", "e")
                );
            } else {
                let _ = write!(
                    b,
                    "    __syncthreads();\n    return {};\n}}\n",
                    comb("p", "x")
                );
            }
        } else {
            b.push_str(&warp_reduce("x"));
            let _ = write!(
                b,
                "    if (lane == 0u) strata_part[warp] = x;\n    __syncthreads();\n    {t} r = {id};\n    for (u32 j = lane; j < (n + 31u) >> 5; j += live) r = {};\n",
                comb("r", "strata_part[j]"),
            );
            b.push_str(&warp_reduce("r"));
            let _ = write!(
                b,
                "    r = ({t})__shfl_sync(mask, ({st})r, 0);\n    __syncthreads();\n    return r;\n}}\n"
            );
        }
        self.helpers.insert(b);
        name
    }

    /// CUDA: the `__shfl_down_sync` tree that combines the warp's values of `v` into lane 0
    /// (lanes past `live` take no part).
    fn warp_tree(&self, c: Comb, s: Scalar, v: &str) -> String {
        let (t, st) = (self.ty(s), self.shuffled_type(s));
        format!(
            "    #pragma unroll\n    for (u32 d = 16u; d > 0u; d >>= 1) {{\n        const {t} y = ({t})__shfl_down_sync(mask, ({st}){v}, d);\n        if (lane + d < live) {v} = {};\n    }}\n",
            self.comb(c, s, v, "y")
        )
    }

    /// CUDA: the `__shfl_up_sync` steps that turn `x` into the warp's inclusive scan.
    fn warp_scan_steps(&self, c: Comb, s: Scalar) -> String {
        let (t, st) = (self.ty(s), self.shuffled_type(s));
        format!(
            "    #pragma unroll\n    for (u32 d = 1u; d < 32u; d <<= 1) {{\n        const {t} y = ({t})__shfl_up_sync(mask, ({st})x, d);\n        if (lane >= d) x = {};\n    }}\n",
            self.comb(c, s, "y", "x")
        )
    }

    /// The type a value of `s` is shuffled as: `__shfl_*_sync` take 32- and 64-bit types.
    fn shuffled_type(&self, s: Scalar) -> &'static str {
        match (s.size(), s.is_float(), s.is_signed()) {
            (8, false, true) => "long long",
            (8, false, false) => "unsigned long long",
            (_, true, _) | (4, _, _) => self.ty(s),
            (_, _, true) => "int",
            _ => "unsigned int",
        }
    }

    /// A lane's source for a shuffle-like `op` with second operand `strata_s`, as C: whether
    /// the source is a lane of the sub-group (of `len` lanes; this work-item is `lane`), and
    /// which lane. The conditions avoid unsigned wrap-around.
    fn shuffle_source(op: GroupOp, lane: &str, len: &str) -> (String, String) {
        match op {
            GroupOp::ShuffleXor => (
                format!("(({lane} ^ strata_s) < {len})"),
                format!("({lane} ^ strata_s)"),
            ),
            GroupOp::ShuffleUp => (
                format!("(strata_s <= {lane})"),
                format!("({lane} - strata_s)"),
            ),
            GroupOp::ShuffleDown => (
                format!("(strata_s < {len} - {lane})"),
                format!("({lane} + strata_s)"),
            ),
            // Shuffle, and broadcast (whose source outside the sub-group is unspecified).
            _ => (format!("(strata_s < {len})"), "strata_s".into()),
        }
    }

    /// A sub-group collective through local memory ([`Collectives::LocalSerial`]): each
    /// component goes to the scratch array at the local linear id; after a barrier, every
    /// work-item computes its result from its sub-group's entries, folding in lane order (so
    /// float sums equal the CPU backend's bit for bit); a second barrier frees the scratch.
    fn sub_group_local(
        &mut self,
        value: ValueId,
        op: GroupOp,
        arg: ExprId,
        source: Option<ExprId>,
    ) {
        self.uses_scratch = true;
        let ty = self.f.exprs.ty(arg);
        let vs = ty.scalar;
        let s = if vs == Scalar::Bool { Scalar::U8 } else { vs };
        self.scratch_types.insert(s);
        let (t, u) = (self.ty(s), self.ty(Scalar::U32));
        let rt = op.result_type(ty);
        let sc = format!("strata_scratch_{t}");
        let (size, lid) = self.group_size_and_id();
        let sg = self.d.sub_group_size;
        let bl = self.d.barriers[0];
        let a = self.expr(arg);
        let src = source.map(|x| self.expr(x)[0].clone());
        let r = self.value_name(value);
        let names: Vec<String> = if rt.width == 1 {
            vec![r]
        } else {
            (0..rt.width).map(|c| format!("{r}_{c}")).collect()
        };
        for n in &names {
            self.line(&format!("{} {n};", self.ty(rt.scalar)));
        }
        self.line("{");
        self.indent += 1;
        self.line(&format!("const {u} strata_lid = {lid};"));
        self.line(&format!(
            "const {u} strata_base = strata_lid / {sg}u * {sg}u;"
        ));
        self.line(&format!(
            "const {u} strata_lane = strata_lid - strata_base;"
        ));
        self.line(&format!(
            "const {u} strata_len = min({sg}u, {size} - strata_base);"
        ));
        if let Some(src) = src {
            let (ok, from) = Self::shuffle_source(op, "strata_lane", "strata_len");
            self.line(&format!("const {u} strata_s = {src};"));
            self.line(&format!(
                "const {u} strata_from = {ok} ? strata_base + {from} : strata_lid;"
            ));
        }
        let as_bool = |x: String| {
            if vs == Scalar::Bool {
                format!("({x} != 0)")
            } else {
                x
            }
        };
        for (c, x) in a.iter().enumerate() {
            let x = if vs == Scalar::Bool {
                format!("({t})({x} ? 1 : 0)")
            } else {
                x.clone()
            };
            self.line(&format!("{sc}[strata_lid] = {x};"));
            self.line(&format!("{bl};"));
            if op.takes_source() {
                let read = as_bool(format!("{sc}[strata_from]"));
                self.line(&format!("{} = {read};", names[c]));
            } else if op == GroupOp::Ballot {
                self.line(&format!("{u} strata_m = 0u;"));
                self.line(&format!(
                    "for ({u} strata_k = 0u; strata_k < strata_len; strata_k++) strata_m |= ({u})({sc}[strata_base + strata_k] != 0) << strata_k;"
                ));
                self.line(&format!("{} = strata_m;", names[0]));
            } else {
                let (cb, id) = self.group_comb(op, s);
                let end = if op.is_reduce() || !op.is_fold() {
                    "strata_len"
                } else if op.is_exclusive() {
                    "strata_lane"
                } else {
                    "strata_lane + 1u"
                };
                self.line(&format!("{t} strata_acc = {id};"));
                let acc = self.comb(
                    cb,
                    s,
                    "strata_acc",
                    &format!("{sc}[strata_base + strata_k]"),
                );
                self.line(&format!(
                    "for ({u} strata_k = 0u; strata_k < {end}; strata_k++) strata_acc = {acc};"
                ));
                self.line(&format!("{} = {};", names[0], as_bool("strata_acc".into())));
            }
            self.line(&format!("{bl};"));
        }
        self.indent -= 1;
        self.line("}");
    }

    /// A sub-group collective by CUDA warp intrinsics ([`Collectives::WarpShuffle`]): a call of
    /// a helper per operation and type (per component for vectors). The shuffles' and
    /// ballot's mask names exactly the warp's lanes present (the last warp of a work-group may
    /// be partial); reductions combine `__shfl_down_sync` in a tree and take lane 0's result,
    /// scans step by `__shfl_up_sync`.
    fn sub_group_warp(&mut self, value: ValueId, op: GroupOp, arg: ExprId, source: Option<ExprId>) {
        let ty = self.f.exprs.ty(arg);
        let s = ty.scalar;
        let t = self.ty(s);
        let st = self.shuffled_type(s);
        let name = format!("strata_{}_{t}", op.name(GroupScope::SubGroup));
        let pre = self.d.helper_prefix;
        let rt = self.ty(op.result_type(ty).scalar);
        let param = if op.takes_source() {
            ", u32 strata_s"
        } else {
            ""
        };
        let mut b = format!("{pre} {rt} {name}({t} x{param}) {{\n{WARP_PROLOGUE}");
        match op {
            GroupOp::Ballot => b.push_str("    return __ballot_sync(mask, x);\n"),
            GroupOp::Any => b.push_str("    return __any_sync(mask, x) != 0;\n"),
            GroupOp::All => b.push_str("    return __all_sync(mask, x) != 0;\n"),
            _ if op.takes_source() => {
                let (ok, from) = Self::shuffle_source(op, "lane", "live");
                let _ = writeln!(
                    b,
                    "    return ({t})__shfl_sync(mask, ({st})x, {ok} ? {from} : lane);"
                );
            }
            _ => {
                let (c, id) = self.group_comb(op, s);
                let comb = |a: &str, b: &str| self.comb(c, s, a, b);
                let _ = writeln!(b, "    x = {};", comb(&id, "x"));
                if op.is_reduce() {
                    b.push_str(&self.warp_tree(c, s, "x"));
                    let _ = writeln!(b, "    return ({t})__shfl_sync(mask, ({st})x, 0);");
                } else {
                    b.push_str(&self.warp_scan_steps(c, s));
                    if op.is_exclusive() {
                        let _ = write!(
                            b,
                            "    const {t} e = ({t})__shfl_up_sync(mask, ({st})x, 1);\n    return lane == 0u ? {id} : e;\n"
                        );
                    } else {
                        b.push_str("    return x;\n");
                    }
                }
            }
        }
        b.push_str("}\n");
        self.helpers.insert(b);
        let a = self.expr(arg);
        let src = source.map(|x| format!(", {}", self.expr(x)[0]));
        let calls: Vec<String> = a
            .iter()
            .map(|x| format!("{name}({x}{})", src.as_deref().unwrap_or("")))
            .collect();
        self.decl(value, &calls);
    }

    fn extreme(&self, s: Scalar, max: bool) -> String {
        let l = match (s, max) {
            (Scalar::F32, true) => Literal::from_bits(s, f32::INFINITY.to_bits() as u64),
            (Scalar::F32, false) => Literal::from_bits(s, f32::NEG_INFINITY.to_bits() as u64),
            (Scalar::F64, true) => Literal::from_bits(s, f64::INFINITY.to_bits()),
            (Scalar::F64, false) => Literal::from_bits(s, f64::NEG_INFINITY.to_bits()),
            _ => {
                use crate::ir::eval::{with_int, Num};
                let bits = with_int!(s, T => if max { T::greatest().to_lit().bits } else { T::least().to_lit().bits }, _ => 0);
                Literal::from_bits(s, bits)
            }
        };
        self.literal(l)
    }

    fn kernel(&mut self) {
        let f = self.f;
        let mut params = Vec::new();
        let mut dynamic = Vec::new();
        for (i, p) in f.params.iter().enumerate() {
            let n = self.param_names[i].clone();
            match p.kind {
                ParamKind::Buffer { elem, access, .. } => {
                    let t = match elem {
                        ir::Elem::Value(t) => self.ty(t.scalar),
                        ir::Elem::Struct(k) => self.struct_names[k as usize].as_str(),
                    };
                    let c = if access.is_read_only() { "const " } else { "" };
                    let space = match self.d.global {
                        "" => String::new(),
                        q => format!("{q} "),
                    };
                    if access == ir::Access::Constant {
                        params.push(self.d.constant_buffer.replace("{t}", t).replace("{n}", &n));
                    } else {
                        params.push(format!("{space}{c}{t}* {n}"));
                    }
                    params.push(format!("const {} {n}_len", self.ty(Scalar::U32)));
                }
                ParamKind::Scalar(t) => {
                    let t = if t.scalar == Scalar::Bool {
                        self.ty(Scalar::U8)
                    } else {
                        self.ty(t.scalar)
                    };
                    params.push(format!("const {t} {n}"));
                }
                ParamKind::LocalLen => {
                    let (li, l) = f
                        .locals
                        .iter()
                        .enumerate()
                        .find(|(_, l)| l.len == ir::ArrayLen::Param(i as u32))
                        .expect("validated");
                    let t = self.ty(l.elem.scalar);
                    let n = &self.local_names[li];
                    match self.d.dynamic_local {
                        None => params.push(format!("{} {t}* {n}", self.d.local_ptr)),
                        Some(_) => {
                            let u = self.ty(Scalar::U32);
                            params.push(format!("const {u} strata_offset_{n}"));
                            dynamic.push(format!(
                                "{t}* const {n} = ({t}*)(strata_dyn_local + strata_offset_{n});"
                            ));
                        }
                    }
                }
            }
        }
        // The body first (it decides which helpers and scratch arrays are needed).
        let mut body = std::mem::take(&mut self.out);
        if let (Some(decl), false) = (self.d.dynamic_local, dynamic.is_empty()) {
            self.line(decl);
            for line in &dynamic {
                self.line(line);
            }
        }
        for (i, l) in f.locals.iter().enumerate() {
            if let ir::ArrayLen::Fixed(n) = l.len {
                let t = self.ty(l.elem.scalar);
                // An array of 2- or 4-vectors is aligned to the vector's size, so that the
                // compiler may merge the component accesses of one element into one vector
                // access (`ld.shared.v4`); both dialects take the GNU attribute.
                let w = l.elem.width as usize;
                let align = if w > 1 {
                    format!(" __attribute__((aligned({})))", w * l.elem.scalar.size())
                } else {
                    String::new()
                };
                let line = format!(
                    "{} {t} {}[{}]{align};",
                    self.d.local,
                    self.local_names[i],
                    n as usize * w
                );
                self.line(&line);
            }
        }
        for (i, p) in f.privates.iter().enumerate() {
            let t = self.ty(p.elem.scalar);
            let n = self.private_names[i].clone();
            let count = p.count() as usize * p.elem.width as usize;
            match p.len {
                None if p.elem.width == 1 => self.line(&format!("{t} {n} = 0;")),
                _ => self.line(&format!("{t} {n}[{count}] = {{0}};")),
            }
        }
        let decls = std::mem::take(&mut self.out);
        for s in &f.body {
            self.stmt(s);
        }
        let stmts = std::mem::take(&mut self.out);
        let mut scratch = String::new();
        for s in &self.scratch_types {
            let t = self.ty(*s);
            let _ = writeln!(
                scratch,
                "    {} {t} strata_scratch_{t}[STRATA_MAX_GROUP + 1];",
                self.d.local
            );
        }
        let _ = writeln!(body, "{} {}(", self.d.kernel_prefix, entry_name(&f.name));
        for (i, p) in params.iter().enumerate() {
            let _ = writeln!(
                body,
                "    {p}{}",
                if i + 1 < params.len() { "," } else { "" }
            );
        }
        body.push_str(") {\n");
        body.push_str(&scratch);
        body.push_str(&decls);
        body.push_str(&stmts);
        body.push_str("}\n");
        self.out = body;
    }
}

/// Finds the loops that need goto labels: a `break` or `continue` aimed past an inner loop.
fn find_labels(b: &ir::Block, loops: &mut Vec<LoopId>, out: &mut HashSet<(LoopId, bool)>) {
    for s in b {
        match s {
            Stmt::Break(id) | Stmt::Continue(id) if loops.last() != Some(id) => {
                out.insert((*id, matches!(s, Stmt::Break(_))));
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                find_labels(then, loops, out);
                find_labels(otherwise, loops, out);
            }
            Stmt::For { id, body, .. } | Stmt::Loop { id, body } => {
                loops.push(*id);
                find_labels(body, loops, out);
                loops.pop();
            }
            _ => {}
        }
    }
}

/// `(x)` without its outer parentheses, for `if (...)`.
fn strip_parens(s: &str) -> &str {
    let b = s.as_bytes();
    if b.first() == Some(&b'(') && b.last() == Some(&b')') {
        let mut depth = 0;
        for (i, &c) in b.iter().enumerate() {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 && i != b.len() - 1 {
                        return s;
                    }
                }
                _ => {}
            }
        }
        return &s[1..s.len() - 1];
    }
    s
}

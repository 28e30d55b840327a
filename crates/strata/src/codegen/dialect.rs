//! The dialects of C the writer targets, as data: the [`Dialect`] struct, which says how a
//! target spells each construct and what it has built in, and its two tables, [`OPENCL`] and
//! [`CUDA`]. Every difference between the generated OpenCL C and CUDA C++ is a field here;
//! the writer asks the dialect what to emit, never which dialect it is. The CUDA preamble,
//! C source that defines what OpenCL has built in and CUDA lacks, is in `cuda_preamble.cuh`
//! and `cuda_f16.cuh` beside this file.
//!
//! **The CUDA preamble** gives the integer types the short names the writer uses (`i8` ..
//! `u64`, the 64-bit ones as `long`, so that the writer's `L` and `ul` literals have exactly
//! their type) and defines, with the evaluator's semantics: bit casts (`strata_as<T>`),
//! saturating conversions (`strata_convert_sat<T>`), the integer built-ins OpenCL has (`clz`,
//! `rotate`, `mul_hi`, `add_sat`, `hadd`, ...), `sign`, `degrees` and `radians`, and the
//! integer atomics overloaded for every 32- and 64-bit type. `tests/cuda_preamble.rs`
//! compiles the preamble, and the writer's CUDA helpers, as host C++ and compares them with
//! the evaluator on edge cases of every type.

use crate::ir::MathFn;

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
    /// none without the C++ headers, so CUDA checks the size and alignment
    /// ([`Dialect::align_of`]) of structs alone.
    pub offset_of: Option<&'static str>,
    /// The compile-time alignment of struct `{t}`, if the dialect has it (C++'s `alignof` in
    /// CUDA; OpenCL C 1.2 has none, and its [`Dialect::offset_of`] checks cover the layout).
    pub align_of: Option<&'static str>,
    /// How a launch-sized local array reaches the kernel: `None` as a pointer argument in
    /// [`Dialect::local_ptr`] space (OpenCL sets its size at launch); `Some(decl)` as a `uint`
    /// byte offset into one dynamically sized block that `decl` declares, named
    /// `strata_dyn_local` (CUDA's `extern __shared__`).
    pub dynamic_local: Option<&'static str>,
    /// Qualifier of helper functions.
    pub helper_prefix: &'static str,
    /// Type names, indexed like [`Scalar::ALL`](crate::ir::Scalar::ALL).
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
    /// Built-ins the writer defines itself, from other built-ins and as the evaluator defines
    /// them: those the target lacks (CUDA has no `tanpi`, `asinpi`, `acospi`, `atanpi`,
    /// `atan2pi`, `pown`, `rootn`) and those whose results a call cannot repair (CUDA's
    /// `ldexp`). The writer has definitions of these eight (in `helpers.rs`); any other entry
    /// is ignored. A target's own `tanpi` is still called through a helper that fixes the sign
    /// of its zeros, like `sinpi` and `cospi` on every target.
    pub defined_math: &'static [MathFn],
    /// Where the target lacks `mad_sat`, the body of the helper that defines it (`{t}` the
    /// type; arguments `a`, `b`, `c`): for `u64`, for `i64`, for the narrower unsigned types
    /// and for the narrower signed types. `None`: the built-in.
    pub mad_sat: Option<[&'static str; 4]>,
    /// The exact `abs` of a signed integer that the writer defines where a kernel needs it,
    /// named `strata_abs_{t}` (`{t}` the type, `{u}` the unsigned type the negation is
    /// computed in, `{i}` the type the argument is widened to first, `{reg}` the inline
    /// assembly register class of `{u}`); `None` where the preamble defines it under the name
    /// [`Dialect::math_names`] gives `Abs`. The built-ins are never called on signed integers:
    /// strata defines abs(MIN) == MIN, and compilers assume otherwise (Clang lowers `abs` to an
    /// intrinsic for which abs(MIN) is poison; ptxas may assume that PTX `abs` is never
    /// negative).
    pub abs_helper: Option<&'static str>,
    /// Whether `rint` is called only on values below 2^23 (`f32`) or 2^52 (`f64`) in
    /// magnitude, the others (integers already, infinities included) returned as they are:
    /// PoCL 3.1's `rint` of a value its compiler could prove infinite or beyond 2^52
    /// (`rint(DBL_MAX)`) made the whole kernel store nothing (seen in the differential tests).
    pub rint_range_guard: bool,
    /// Float built-ins called through a helper that returns a NaN argument itself. PoCL 3.1
    /// returns 0 for some of them (seen: `floor`, `ceil`, `trunc`, `round`, `exp`, `exp2`,
    /// `expm1`, `tanh`) of a NaN its compiler (LLVM) can prove, however the NaN arose (a
    /// literal, `bitcast<f64>(-1)` of constants, `-inf / -inf`): its built-ins are compiled
    /// for finite values, so a known NaN operand becomes poison. The helper's test stays
    /// outside the built-in, where no such assumption holds. OpenCL guards every one-argument
    /// float built-in whose value at NaN is NaN (a compare and a select each), not only those
    /// seen failing: each new one was found by a random program, never by a user. Two
    /// helpers test more: `rootn`'s returns NaN for `n == 0` too (PoCL's `rootn` of a literal
    /// 0 is poison, which lost the kernel's other stores), `pown`'s returns 1 for a NaN to the
    /// power 0 (PoCL's `pown` of a known NaN gave 1.0 and -1.0), and `rsqrt`'s computes `1 / sqrt(x)`,
    /// the evaluator's definition, not the target's `rsqrt` (NVIDIA's is an ulp off for
    /// `f64`).
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
    /// Warps of 32 lanes, by the dialect's [`Warp`] intrinsics: reductions by shuffles down
    /// and scans by shuffles up within each warp, one value per warp through a 32-entry local
    /// array, and the warp totals combined by shuffles again (every warp does it, so no third
    /// barrier); any/all are the work-group votes. Two barriers per collective. Sub-group
    /// collectives are the warp's own shuffles, votes and ballot.
    WarpShuffle(&'static Warp),
}

/// The warp intrinsics of a dialect whose collectives are [`Collectives::WarpShuffle`] (CUDA's
/// `__shfl_sync` family). Every shuffle, vote and ballot takes the mask of the lanes that take
/// part as its first argument; a shuffle then takes the value and the source lane or the
/// distance to it.
#[derive(Debug, PartialEq, Eq)]
pub struct Warp {
    /// The first lines of every warp helper: they define the work-group size `n`, the local
    /// linear id `lid`, the `lane`, how many lanes the warp has (`live`: the last warp of a
    /// work-group may be partial) and the `mask` of exactly those lanes.
    pub prologue: &'static str,
    /// The value of a given lane.
    pub shuffle: &'static str,
    /// The value of the lane `d` below.
    pub shuffle_up: &'static str,
    /// The value of the lane `d` above.
    pub shuffle_down: &'static str,
    /// The types values are shuffled as, where not as themselves (32-bit integers and floats
    /// are): 64-bit signed and unsigned integers, narrower signed and unsigned integers.
    pub shuffle_types: [&'static str; 4],
    /// A mask of the lanes whose value is true.
    pub ballot: &'static str,
    /// Whether any lane's value is true.
    pub any: &'static str,
    /// Whether every lane's value is true.
    pub all: &'static str,
    /// Whether any work-item of the work-group passes a non-zero `int`, with a barrier (no
    /// mask).
    pub group_any: &'static str,
    /// Whether every work-item of the work-group passes a non-zero `int`, with a barrier.
    pub group_all: &'static str,
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
    align_of: None,
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
    defined_math: &[],
    mad_sat: Some(OPENCL_MAD_SAT),
    abs_helper: Some(OPENCL_ABS),
    rint_range_guard: true,
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
        MathFn::Rootn,
        MathFn::Pown,
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
    align_of: Some("alignof({t})"),
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
    collectives: Collectives::WarpShuffle(&CUDA_WARP),
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
    defined_math: &[
        MathFn::Tanpi,
        MathFn::Asinpi,
        MathFn::Acospi,
        MathFn::Atanpi,
        MathFn::Atan2pi,
        MathFn::Ldexp,
        MathFn::Pown,
        MathFn::Rootn,
    ],
    mad_sat: Some(CUDA_MAD_SAT),
    abs_helper: None,
    rint_range_guard: false,
    nan_guarded: &[],
    options: &["--std=c++17", "--fmad=false"],
};

/// OpenCL's exact `abs` of a signed integer (see [`Dialect::abs_helper`]). NVIDIA's OpenCL
/// compiler turns even this form into PTX `abs`, whose result ptxas treats as never negative
/// (seen on an H100): there an empty `asm` hides the negation (narrow types in `uint`).
const OPENCL_ABS: &str = "{t} strata_abs_{t}({t} x) {
    {u} n = ({u})0 - ({u})({i})x;
#if defined(__NV_CL_C_VERSION) || defined(cl_nv_pragma_unroll)
    __asm__ volatile(\"\" : \"+{reg}\"(n));
#endif
    return x < 0 ? ({t})n : x;
}
";

/// CUDA's warps (see [`Collectives::WarpShuffle`]).
static CUDA_WARP: Warp = Warp {
    prologue: "    const u32 n = blockDim.x * blockDim.y * blockDim.z;
    const u32 lid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const u32 lane = lid & 31u;
    const u32 live = min(32u, n - (lid & ~31u));
    const u32 mask = live == 32u ? 0xffffffffu : (1u << live) - 1u;
",
    shuffle: "__shfl_sync",
    shuffle_up: "__shfl_up_sync",
    shuffle_down: "__shfl_down_sync",
    shuffle_types: ["long long", "unsigned long long", "int", "unsigned int"],
    ballot: "__ballot_sync",
    any: "__any_sync",
    all: "__all_sync",
    group_any: "__syncthreads_or",
    group_all: "__syncthreads_and",
};

/// OpenCL's `mad_sat` (see [`Dialect::mad_sat`]): 64 bits through the high half of the
/// product (`mul_hi`), as CUDA's; the narrower types call the built-in. NVIDIA's OpenCL
/// built-in returned 3018339201743133596 for an `i64` result that saturates to `i64::MIN`
/// (seen on an H100, conformance case `math/int_extras`).
const OPENCL_MAD_SAT: [&str; 4] = [
    "ulong hi = mul_hi(a, b), lo = a * b, r = lo + c;
    return (hi != 0 || r < lo) ? 18446744073709551615ul : r;",
    "ulong lo = (ulong)a * (ulong)b, r = lo + (ulong)c;
    long hi = mul_hi(a, b) + (c < 0 ? -1L : 0L) + (r < lo ? 1L : 0L);
    if (hi == ((long)r < 0 ? -1L : 0L)) return (long)r;
    return hi < 0 ? (-9223372036854775807L - 1L) : 9223372036854775807L;",
    "return mad_sat(a, b, c);",
    "return mad_sat(a, b, c);",
];

/// CUDA's `mad_sat` (see [`Dialect::mad_sat`]): 64 bits through the high half of the product
/// (`__umul64hi`, `__mul64hi`), narrower types in 64 bits, clamped to the preamble's
/// `strata_int` limits.
const CUDA_MAD_SAT: [&str; 4] = [
    "u64 hi = __umul64hi(a, b), lo = a * b, r = lo + c;
    return (hi != 0 || r < lo) ? 18446744073709551615ul : r;",
    "u64 lo = (u64)a * (u64)b, r = lo + (u64)c;
    i64 hi = __mul64hi(a, b) + (c < 0 ? -1L : 0L) + (r < lo ? 1L : 0L);
    if (hi == ((i64)r < 0 ? -1L : 0L)) return (i64)r;
    return hi < 0 ? (-9223372036854775807L - 1L) : 9223372036854775807L;",
    "u64 r = (u64)a * (u64)b + (u64)c;
    return r > (u64)strata_int<{t}>::hi ? strata_int<{t}>::hi : ({t})r;",
    "i64 r = (i64)a * (i64)b + (i64)c;
    return r > (i64)strata_int<{t}>::hi ? strata_int<{t}>::hi : r < (i64)strata_int<{t}>::lo ? strata_int<{t}>::lo : ({t})r;",
];

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
const CUDA_PREAMBLE: &str = include_str!("cuda_preamble.cuh");

/// The CUDA dialect's `f16`: its bits in an `unsigned short` (NVRTC finds no `cuda_fp16.h`
/// without the CUDA toolkit), converted by the PTX `cvt` instructions, which round to nearest
/// even (`.rn`) and keep NaN, infinities and subnormals.
const CUDA_F16_PREAMBLE: &str = include_str!("cuda_f16.cuh");

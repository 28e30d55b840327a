//! Differential testing: seeded random, well-typed kernels whose results must agree between a
//! reference device (the interpreter, `interp`, in the tests and in `strata difftest`) and
//! another device (`cpu`, an OpenCL or a CUDA device).
//!
//! [`generate`] builds an [`ir::Function`](strata::ir::Function) from a seed; [`run()`] (and
//! [`run_with`], which reports progress) generates `programs` random *programs*, batches many
//! of them into each kernel (each program is a block of statements at the top level of the
//! kernel body writing its own output slots, so one compile covers many programs), runs every
//! kernel on both queues with the same inputs and compares every output.
//!
//! **What a program contains.** Loads from random input buffers (with edge values: 0, ±1, MIN,
//! MAX, NaN, ±inf, -0.0, the smallest normal, large and small magnitudes) at masked indices;
//! scalar parameters; work-item ids; expressions over `i32`, `u32`, `i64`, `u64`, `f32` (and
//! `f64` when both devices support it) with `i8`/`u8`/`i16`/`u16` as intermediate types:
//! arithmetic, bitwise operations and shifts (any amount: the IR takes it modulo the width),
//! comparisons and `select`, value casts in every direction (float to integer saturates),
//! bitcasts, integer and exact float built-ins; private variables and a private array;
//! `if`/`else` nested up to three deep; `for` loops with literal or data-dependent trip counts,
//! counting up or down; endless loops left with `break`; `break`/`continue` of the innermost or
//! an enclosing loop; local memory written by one work-item and read by another after a barrier;
//! atomics on global and local counters whose final value does not depend on the order of the
//! work-items (add, sub, min, max, and, or, xor; checked after the kernel), and atomics on a
//! work-item's own element whose old value is used (including exchange and compare-exchange),
//! sometimes followed by an atomic load of that element;
//! every work-group collective. Transcendental built-ins appear only as the last operation of a
//! stored result, so their error cannot be amplified by later operations; their arguments may
//! be NaN (PoCL 3.1 returns 0 for `exp`, `exp2`, `floor`, `ceil`, `trunc`, `round` and `tanh` of
//! a NaN its compiler can prove; the OpenCL writer calls them through helpers that return a NaN
//! argument itself, see `Dialect::nan_guarded`). Private arrays are read
//! at computed indices but written only at literal ones: PoCL 3.1's default `loopvec`
//! work-group method miscompiles a store at a computed index followed by a read at another
//! (`POCL_WORK_GROUP_METHOD=cbs` gives the right result).
//!
//! **Avoiding undefined behaviour.** Integer divisors are `x | 1`; indices are taken modulo the
//! length (or masked with a power of two); barriers and collectives occur only at the top level
//! of a program (never under divergent control flow, never inside a loop); loop trip counts are
//! bounded; the sign and payload of a NaN are never observed (`bitcast`, `copysign`'s sign
//! argument and `signbit` see `select(isnan(x), 1, x)`), because hardware and compilers produce
//! different NaNs.
//!
//! Float collectives are stored and not used further (a sum's rounding depends on the backend's
//! association order, see [`GroupOp`](strata::ir::GroupOp)); a float sum is stored beside the same collective
//! over the operands' magnitudes, which bounds its difference.
//!
//! **Comparison.** Integers and booleans must match exactly. Floats: NaN matches any NaN. The
//! exactly rounded operations (`+ - * /`, `sqrt`, `rsqrt` as `1/sqrt`, `fma`, `fmod`, `min`,
//! `max`, `clamp`, `abs`, `floor`, `ceil`, `trunc`, `round`, `copysign`, `sign`, `mix`, casts)
//! must match bit for bit, except that `+0.0` and `-0.0` are equal and that every value of
//! magnitude below the smallest normal number counts as zero, on both sides: OpenCL devices
//! may flush denormals to zero. A transcendental built-in's result may differ by at most
//! [`ulp_bound`] units in the last place (the OpenCL 1.2 bound plus one for the reference's own
//! rounding), or, for functions whose results cross zero (trigonometric, logarithms, inverse
//! hyperbolic), by that many multiples of the type's epsilon in absolute terms (results that are
//! tiny after cancellation). A float sum collective may differ by the bound of any summation
//! order (see `sum_diff`).
//!
//! The rooms: this file holds what the generator, the runner and the comparator share (the
//! options, the output layout, the random literals); `gen` builds programs (its `expr`
//! submodule their expressions), `run` runs them on two queues, and `compare`
//! compares their outputs.

mod compare;
mod gen;
mod run;

pub use compare::ulp_bound;
pub use run::{
    kernel_timeout, process_cpu_time, programs_per_kernel, run, run_from, run_one, run_with,
    run_with_timeout, wait_bounded, Report, Waited, PROGRAMS_PER_KERNEL,
    PROGRAMS_PER_KERNEL_LOOP_LIMIT, STARVED_FACTOR,
};

use crate::conformance::Rng;
use gen::build;
use strata::ir::{Function, Literal, MathFn, Scalar};

/// Number of work-items of every generated kernel's launch.
pub const GLOBAL_SIZE: u32 = 64;
/// Number of elements of every input buffer.
pub const INPUT_LEN: u32 = 61;

/// What [`generate`] may use.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Programs in the kernel.
    pub programs: usize,
    /// Use `f64`.
    pub f64: bool,
    /// Use 64-bit integer atomics.
    pub int64_atomics: bool,
    /// The work-group size the kernel is launched with (a power of two dividing
    /// [`GLOBAL_SIZE`]); local arrays and broadcasts depend on it.
    pub local_size: u32,
    /// The sub-group size of the devices compared, if they share one: sub-group collectives
    /// are generated only then (their results depend on it).
    pub sub_group_size: Option<u32>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            programs: 1,
            f64: true,
            int64_atomics: true,
            local_size: 16,
            sub_group_size: Some(32),
        }
    }
}

/// The seed of program `index` of a run with seed `seed`.
pub fn program_seed(seed: u64, index: usize) -> u64 {
    Rng::new(seed ^ (index as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)).next_u64()
}

/// A kernel of `opts.programs` random programs, program `i` generated from
/// [`program_seed`]`(seed, i)`. Launch it with [`GLOBAL_SIZE`] work-items in groups of
/// `opts.local_size`; its parameters are, per type `T` used (`i32`, `u32`, `i64`, `u64`, `f32`,
/// then `f64`): an input buffer `in_T` of [`INPUT_LEN`] elements and a scalar `k_T`; then an
/// output buffer `out_T` per type; then an atomic-counter buffer `atom_T` per integer type.
pub fn generate(seed: u64, opts: &Options) -> Function {
    let seeds: Vec<u64> = (0..opts.programs).map(|i| program_seed(seed, i)).collect();
    build(&seeds, opts, "difftest").0
}

/// The kernel that [`run()`] builds for programs `programs` of a run with seed `seed` (it runs
/// them [`PROGRAMS_PER_KERNEL`] at a time: batch `b` is programs `100 b .. 100 b + 100`;
/// [`PROGRAMS_PER_KERNEL_LOOP_LIMIT`] at a time on a device with a loop limit), with
/// `opts.programs` ignored. For compiling exactly what a run compiles, e.g. with NVRTC alone.
pub fn generate_range(seed: u64, programs: std::ops::Range<usize>, opts: &Options) -> Function {
    let seeds: Vec<u64> = programs.clone().map(|i| program_seed(seed, i)).collect();
    build(
        &seeds,
        opts,
        &format!("difftest_{}", programs.start / PROGRAMS_PER_KERNEL),
    )
    .0
}

/// A kernel holding only the program with seed `program_seed` (as [`run()`] reports it in a
/// mismatch), for reproducing one program.
pub fn program(program_seed: u64, opts: &Options) -> Function {
    build(&[program_seed], opts, "difftest_program").0
}

/// How a stored float result is compared.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Check {
    /// Bit for bit (after the zero rules of the module docs).
    Exact,
    /// The result of a transcendental built-in.
    Approx(MathFn),
    /// A float sum collective over at most `terms` operands, which backends may associate
    /// differently: within `2 gamma(terms - 1)` times the reference's value in slot `mag` of
    /// the same type (the same collective over the operands' magnitudes), see `sum_diff` in
    /// `compare.rs`.
    Sum {
        /// The slot holding the sum of magnitudes.
        mag: u32,
        /// The largest number of operands.
        terms: u32,
    },
}

/// One output element per work-item: which program wrote it and how to compare it.
#[derive(Clone, Debug)]
struct Slot {
    program: usize,
    check: Check,
}

/// The buffers a kernel uses and which program owns each slot.
#[derive(Clone, Debug, Default)]
struct Layout {
    /// Buffer element types, in parameter order.
    types: Vec<Scalar>,
    /// Output slots per type (slot `s` is elements `s*G..(s+1)*G`).
    outs: Vec<Vec<Slot>>,
    /// Integer types with atomic-counter buffers.
    atom_types: Vec<Scalar>,
    /// Atomic slots per atomic type: the owning program.
    atoms: Vec<Vec<usize>>,
}

/// The outputs of one kernel run (what the runner gives the comparator), as bits: per type, then per atomic type.
struct Outputs {
    outs: Vec<Vec<u64>>,
    atoms: Vec<Vec<u64>>,
}

const INTS: [Scalar; 4] = [Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64];
const NARROW: [Scalar; 4] = [Scalar::I8, Scalar::U8, Scalar::I16, Scalar::U16];

fn lit(s: Scalar, bits: u64) -> Literal {
    Literal::from_bits(s, bits)
}

/// An interesting or random value of type `s`.
fn random_literal(r: &mut Rng, s: Scalar) -> Literal {
    match s {
        Scalar::Bool => Literal::bool(r.below(2) == 1),
        Scalar::F32 => {
            let v: f32 = match r.below(16) {
                0 => 0.0,
                1 => -0.0,
                2 => f32::NAN,
                3 => f32::INFINITY,
                4 => f32::NEG_INFINITY,
                5 => f32::MAX,
                6 => f32::MIN_POSITIVE,
                7 => -1.0,
                8 => 1.0,
                9 => 0.5,
                10 | 11 => r.int(-64, 64) as f32 * 0.25,
                12 => f32::from_bits(r.next_u64() as u32),
                13 => {
                    let m = 10f64.powf(r.f64_in(-30.0, 30.0));
                    (if r.below(2) == 0 { m } else { -m }) as f32
                }
                // Just inside and outside +-1, where `acosh`, `atanh`, `asin`, `acos` and
                // `log1p` are near the ends of their domains.
                14 => {
                    let v = 1.0 + r.int(-64, 64) as f32 * f32::EPSILON;
                    if r.below(2) == 0 {
                        v
                    } else {
                        -v
                    }
                }
                _ => r.f64_in(-100.0, 100.0) as f32,
            };
            lit(s, v.to_bits() as u64)
        }
        Scalar::F64 => {
            let v: f64 = match r.below(16) {
                0 => 0.0,
                1 => -0.0,
                2 => f64::NAN,
                3 => f64::INFINITY,
                4 => f64::NEG_INFINITY,
                5 => f64::MAX,
                6 => f64::MIN_POSITIVE,
                7 => -1.0,
                8 => 1.0,
                9 => 0.5,
                10 | 11 => r.int(-64, 64) as f64 * 0.25,
                12 => f64::from_bits(r.next_u64()),
                13 => {
                    let m = 10f64.powf(r.f64_in(-200.0, 200.0));
                    if r.below(2) == 0 {
                        m
                    } else {
                        -m
                    }
                }
                // Just inside and outside +-1, where `acosh`, `atanh`, `asin`, `acos` and
                // `log1p` are near the ends of their domains.
                14 => {
                    let v = 1.0 + r.int(-64, 64) as f64 * f64::EPSILON;
                    if r.below(2) == 0 {
                        v
                    } else {
                        -v
                    }
                }
                _ => r.f64_in(-100.0, 100.0),
            };
            lit(s, v.to_bits())
        }
        _ => {
            let bits = s.bits();
            let min = if s.is_signed() { 1u64 << (bits - 1) } else { 0 };
            let v = match r.below(10) {
                0 => 0,
                1 => 1,
                2 => u64::MAX,                  // -1 / all ones
                3 => min,                       // MIN
                4 => min.wrapping_sub(1),       // MAX
                5 | 6 => r.int(-40, 40) as u64, // small
                7 => 1u64 << r.below(bits as u64),
                _ => r.next_u64(),
            };
            lit(s, v)
        }
    }
}

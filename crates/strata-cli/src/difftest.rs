//! Differential testing: seeded random, well-typed kernels whose results must agree between a
//! reference device (the CPU backend) and another device.
//!
//! [`generate`] builds an [`ir::Function`] from a seed; [`run`] (and [`run_with`], which reports
//! progress) generates `programs` random *programs*, batches many of them into each kernel (each
//! program is a block of statements at the top level of the kernel body writing its own output
//! slots, so one compile covers many programs), runs every kernel on both queues with the same
//! inputs and compares every output.
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
//! association order, see [`GroupOp`]); a float sum is stored beside the same collective
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

use crate::conformance::Rng;
use std::fmt::Write as _;
use strata::builder::Value;
use strata::ir::eval::Num;
use strata::ir::{
    Access, ArrayLen, AtomicOp, AtomicOrder, BinaryOp, Builtin, Expr, ExprId, Fence, Function,
    GroupOp, GroupScope, Literal, LocalDecl, LoopId, MathFn, Mem, MemOrder, MemScope, Param,
    ParamKind, PrivateDecl, Scalar, Stmt, Type, UnaryOp, ValueId,
};
use strata::{Buffer, Kernel, KernelArg, NdRange, Queue};

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

/// The kernel that [`run`] builds for programs `programs` of a run with seed `seed` (it runs
/// them [`PROGRAMS_PER_KERNEL`] at a time: batch `b` is programs `100 b .. 100 b + 100`), with
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

/// A kernel holding only the program with seed `program_seed` (as [`run`] reports it in a
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
    /// the same type (the same collective over the operands' magnitudes), see [`sum_diff`].
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

const INTS: [Scalar; 4] = [Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64];
const NARROW: [Scalar; 4] = [Scalar::I8, Scalar::U8, Scalar::I16, Scalar::U16];

/// The ULP bound of a transcendental built-in: [`MathFn::ulp_bound`] (OpenCL 1.2's bound,
/// the same for `f32` and `f64`) plus one for the reference's rounding. Every other built-in
/// and operation the generator uses is compared exactly.
pub fn ulp_bound(f: MathFn) -> u64 {
    match f.ulp_bound() {
        0 => 0,
        b => 1 + u64::from(b),
    }
}

/// Whether `f`'s results may be tiny after cancellation, so an absolute tolerance applies.
fn crosses_zero(f: MathFn) -> bool {
    matches!(
        f,
        MathFn::Sin
            | MathFn::Cos
            | MathFn::Tan
            | MathFn::Log
            | MathFn::Log2
            | MathFn::Log10
            | MathFn::Asin
            | MathFn::Acos
            | MathFn::Atan
            | MathFn::Atan2
            | MathFn::Asinh
            | MathFn::Acosh
            | MathFn::Atanh
            | MathFn::Sinh
            | MathFn::Tanh
            | MathFn::Sinpi
            | MathFn::Cospi
            | MathFn::Tanpi
            | MathFn::Asinpi
            | MathFn::Atanpi
            | MathFn::Atan2pi
            | MathFn::Lgamma
    )
}

const APPROX1: [MathFn; 32] = [
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
    MathFn::Degrees,
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
];
const APPROX2: [MathFn; 5] = [
    MathFn::Pow,
    MathFn::Atan2,
    MathFn::Hypot,
    MathFn::Atan2pi,
    MathFn::Powr,
];
/// Rounded built-ins of a float and an `i32`.
const APPROX_INT: [MathFn; 2] = [MathFn::Pown, MathFn::Rootn];

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

/// Builds one kernel from the programs with seeds `seeds`.
fn build(seeds: &[u64], opts: &Options, name: &str) -> (Function, Layout) {
    let mut types = vec![
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::F32,
    ];
    if opts.f64 {
        types.push(Scalar::F64);
    }
    let atom_types: Vec<Scalar> = if opts.int64_atomics {
        INTS.to_vec()
    } else {
        vec![Scalar::I32, Scalar::U32]
    };
    let mut f = Function::new(name);
    for &t in &types {
        f.params.push(Param {
            name: format!("in_{t}"),
            kind: ParamKind::Buffer {
                elem: strata::ir::Elem::Value(Type::scalar(t)),
                access: Access::Read,
                len: Some(INPUT_LEN as u64),
            },
        });
        f.params.push(Param {
            name: format!("k_{t}"),
            kind: ParamKind::Scalar(Type::scalar(t)),
        });
    }
    for &t in &types {
        f.params.push(Param {
            name: format!("out_{t}"),
            kind: ParamKind::Buffer {
                elem: strata::ir::Elem::Value(Type::scalar(t)),
                access: Access::Write,
                len: None,
            },
        });
    }
    for &t in &atom_types {
        f.params.push(Param {
            name: format!("atom_{t}"),
            kind: ParamKind::Buffer {
                elem: strata::ir::Elem::Value(Type::scalar(t)),
                access: Access::ReadWrite,
                len: None,
            },
        });
    }
    let mut layout = Layout {
        outs: vec![Vec::new(); types.len()],
        atoms: vec![Vec::new(); atom_types.len()],
        types,
        atom_types,
    };
    let mut body = Vec::new();
    for (p, &seed) in seeds.iter().enumerate() {
        let mut g = Gen {
            f: &mut f,
            layout: &mut layout,
            r: Rng::new(seed),
            program: p,
            opts,
            blocks: vec![Vec::new()],
            scopes: vec![Vec::new()],
            loops: Vec::new(),
            privates: Vec::new(),
            group_ops: false,
        };
        g.program();
        body.extend(g.blocks.pop().unwrap());
    }
    f.body = body;
    (f, layout)
}

/// A private variable or array of the program being generated.
#[derive(Clone, Copy)]
struct Private {
    index: u32,
    ty: Scalar,
    len: Option<u32>,
}

/// The generator of one program.
struct Gen<'a> {
    f: &'a mut Function,
    layout: &'a mut Layout,
    r: Rng,
    program: usize,
    opts: &'a Options,
    /// Blocks being filled; statements go into the last one.
    blocks: Vec<Vec<Stmt>>,
    /// Values in scope, per block: expression and type.
    scopes: Vec<Vec<(ExprId, Scalar)>>,
    /// Enclosing loops, innermost last.
    loops: Vec<LoopId>,
    /// The program's private variables.
    privates: Vec<Private>,
    /// Whether the program may use barriers and collectives (only some do: they make OpenCL
    /// compilers slow).
    group_ops: bool,
}

impl Gen<'_> {
    // ----- expression helpers -----

    fn intern(&mut self, e: Expr, s: Scalar) -> ExprId {
        self.f.exprs.intern(e, Type::scalar(s))
    }
    fn lit(&mut self, s: Scalar, bits: u64) -> ExprId {
        self.intern(Expr::Literal(lit(s, bits)), s)
    }
    fn u32(&mut self, v: u32) -> ExprId {
        self.lit(Scalar::U32, v as u64)
    }
    fn bin(&mut self, op: BinaryOp, a: ExprId, b: ExprId) -> ExprId {
        let s = if op.is_comparison() {
            Scalar::Bool
        } else {
            self.ty(a)
        };
        self.intern(Expr::Binary(op, a, b), s)
    }
    fn math(&mut self, m: MathFn, args: Vec<ExprId>) -> ExprId {
        let s = m.result_scalar(self.ty(args[0]));
        self.intern(Expr::Math(m, args), s)
    }
    /// An `i32` in -64..64 from a random expression: the exponent of `pown`, `rootn`, `ldexp`.
    fn small_int(&mut self) -> ExprId {
        let x = self.expr(Scalar::I32, 2);
        let m = self.lit(Scalar::I32, 127);
        let x = self.bin(BinaryOp::And, x, m);
        let off = self.lit(Scalar::I32, 64);
        self.bin(BinaryOp::Sub, x, off)
    }
    fn cast(&mut self, a: ExprId, to: Scalar) -> ExprId {
        if self.ty(a) == to {
            return a;
        }
        self.intern(Expr::Cast(a, to), to)
    }
    fn select(&mut self, c: ExprId, a: ExprId, b: ExprId) -> ExprId {
        let s = self.ty(a);
        self.intern(Expr::Select(c, a, b), s)
    }
    fn builtin(&mut self, b: Builtin) -> ExprId {
        self.intern(Expr::Builtin(b), Scalar::U32)
    }
    fn ty(&self, e: ExprId) -> Scalar {
        self.f.exprs.ty(e).scalar
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.r.below(v.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.r.below(100) < percent
    }
    fn float_types(&self) -> Vec<Scalar> {
        if self.opts.f64 {
            vec![Scalar::F32, Scalar::F64]
        } else {
            vec![Scalar::F32]
        }
    }
    fn base_types(&self) -> Vec<Scalar> {
        let mut v = INTS.to_vec();
        v.extend(self.float_types());
        v
    }
    fn param_index(&self, name: &str) -> u32 {
        self.f.params.iter().position(|p| p.name == name).unwrap() as u32
    }
    /// `x` with NaN replaced by 1 and `-0.0` by `+0.0` (`x + 0.0` changes nothing else), so
    /// neither a NaN's sign and payload nor the sign of a zero is observed: IEEE leaves the zero
    /// that `min(-0.0, +0.0)` returns open, and devices differ.
    fn no_nan(&mut self, x: ExprId) -> ExprId {
        let s = self.ty(x);
        let nan = self.math(MathFn::IsNan, vec![x]);
        let (one, zero) = match s {
            Scalar::F32 => (self.lit(s, 1f32.to_bits() as u64), self.lit(s, 0)),
            _ => (self.lit(s, 1f64.to_bits()), self.lit(s, 0)),
        };
        let x = self.select(nan, one, x);
        self.bin(BinaryOp::Add, x, zero)
    }

    // ----- statement helpers -----

    fn emit(&mut self, s: Stmt) {
        self.blocks.last_mut().unwrap().push(s);
    }
    fn bind(&mut self, v: ValueId, s: Scalar) -> ExprId {
        let e = self.intern(Expr::Value(v), s);
        self.scopes.last_mut().unwrap().push((e, s));
        e
    }
    /// `let v = e`, in scope from here on.
    fn let_(&mut self, e: ExprId) -> ExprId {
        let s = self.ty(e);
        let v = self.f.new_value(Type::scalar(s), None);
        self.emit(Stmt::Let { value: v, expr: e });
        self.bind(v, s)
    }
    fn load(&mut self, mem: Mem, index: ExprId, s: Scalar) -> ExprId {
        let v = self.f.new_value(Type::scalar(s), None);
        self.emit(Stmt::Load {
            value: v,
            mem,
            index,
            at: strata::ir::SourceLoc::NONE,
        });
        self.bind(v, s)
    }
    /// Runs `body` in a new block and scope, returning the block.
    fn block(&mut self, body: impl FnOnce(&mut Self)) -> Vec<Stmt> {
        self.blocks.push(Vec::new());
        self.scopes.push(Vec::new());
        body(self);
        self.scopes.pop();
        self.blocks.pop().unwrap()
    }
    fn new_loop(&mut self) -> LoopId {
        self.f.loop_count += 1;
        LoopId(self.f.loop_count - 1)
    }

    // ----- expressions -----

    /// A leaf of type `s`.
    fn leaf(&mut self, s: Scalar) -> ExprId {
        let here: Vec<ExprId> = self
            .scopes
            .iter()
            .flatten()
            .filter(|(_, t)| *t == s)
            .map(|(e, _)| *e)
            .collect();
        let roll = self.r.below(100);
        if !here.is_empty() && roll < 65 {
            return self.pick(&here);
        }
        if roll < 80 || s == Scalar::Bool {
            let l = random_literal(&mut self.r, s);
            return self.intern(Expr::Literal(l), s);
        }
        if roll < 88 && self.base_types().contains(&s) {
            let p = self.param_index(&format!("k_{s}"));
            return self.intern(Expr::Param(p), s);
        }
        let b = match self.r.below(5) {
            0 => Builtin::GlobalId(0),
            1 => Builtin::LocalId(0),
            2 => Builtin::GroupId(0),
            3 => Builtin::LocalLinearId,
            _ => Builtin::LocalSize(0),
        };
        let b = self.builtin(b);
        self.cast(b, s)
    }

    /// A random expression of type `s`, at most `depth` operations deep, computed exactly on
    /// every backend.
    fn expr(&mut self, s: Scalar, depth: u32) -> ExprId {
        if depth == 0 || self.chance(25) {
            return self.leaf(s);
        }
        let d = depth - 1;
        if s == Scalar::Bool {
            return self.bool_expr(d);
        }
        // Shared by every type: select and casts.
        match self.r.below(12) {
            0 => {
                let c = self.bool_expr(d);
                let a = self.expr(s, d);
                let b = self.expr(s, d);
                return self.select(c, a, b);
            }
            1 => {
                let mut from = self.base_types();
                from.extend(NARROW);
                from.push(Scalar::Bool);
                let from = self.pick(&from);
                let x = self.expr(from, d);
                return self.cast(x, s);
            }
            _ => {}
        }
        if s.is_float() {
            self.float_expr(s, d)
        } else {
            self.int_expr(s, d)
        }
    }

    fn bool_expr(&mut self, d: u32) -> ExprId {
        match self.r.below(8) {
            0..=3 => {
                let mut ts = self.base_types();
                ts.extend(NARROW);
                let t = self.pick(&ts);
                let op = self.pick(&[
                    BinaryOp::Eq,
                    BinaryOp::Ne,
                    BinaryOp::Lt,
                    BinaryOp::Le,
                    BinaryOp::Gt,
                    BinaryOp::Ge,
                ]);
                let a = self.expr(t, d);
                let b = self.expr(t, d);
                self.bin(op, a, b)
            }
            4 => {
                let op = self.pick(&[BinaryOp::And, BinaryOp::Or, BinaryOp::Xor, BinaryOp::Eq]);
                let a = self.expr(Scalar::Bool, d);
                let b = self.expr(Scalar::Bool, d);
                self.bin(op, a, b)
            }
            5 => {
                let a = self.expr(Scalar::Bool, d);
                self.intern(Expr::Unary(UnaryOp::Not, a), Scalar::Bool)
            }
            6 => {
                let t = self.pick(&self.float_types());
                let m = self.pick(&[
                    MathFn::IsNan,
                    MathFn::IsInf,
                    MathFn::IsFinite,
                    MathFn::Signbit,
                ]);
                let mut x = self.expr(t, d);
                if m == MathFn::Signbit {
                    x = self.no_nan(x);
                }
                self.math(m, vec![x])
            }
            _ => self.leaf(Scalar::Bool),
        }
    }

    fn int_expr(&mut self, s: Scalar, d: u32) -> ExprId {
        use BinaryOp::*;
        match self.r.below(20) {
            0..=8 => {
                let op = self.pick(&[Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr]);
                let a = self.expr(s, d);
                let mut b = self.expr(s, d);
                if matches!(op, Div | Rem) {
                    let one = self.lit(s, 1);
                    b = self.bin(Or, b, one);
                }
                self.bin(op, a, b)
            }
            9 | 10 => {
                let op = self.pick(&[UnaryOp::Neg, UnaryOp::Not]);
                let a = self.expr(s, d);
                self.intern(Expr::Unary(op, a), s)
            }
            11..=15 => {
                let m = self.pick(&[
                    MathFn::Abs,
                    MathFn::Min,
                    MathFn::Max,
                    MathFn::Clamp,
                    MathFn::Clz,
                    MathFn::Popcount,
                    MathFn::Rotate,
                    MathFn::MulHi,
                    MathFn::AddSat,
                    MathFn::SubSat,
                    MathFn::Hadd,
                    MathFn::Rhadd,
                    MathFn::MadSat,
                ]);
                let args = (0..m.arity()).map(|_| self.expr(s, d)).collect();
                self.math(m, args)
            }
            18 if s == Scalar::I32 => {
                // The exponent of a float (never NaN: ilogb(NaN) is defined, but keep the
                // NaN rules in one place, `no_nan`).
                let from = if self.opts.f64 && self.chance(50) {
                    Scalar::F64
                } else {
                    Scalar::F32
                };
                let x = self.expr(from, d);
                self.math(MathFn::Ilogb, vec![x])
            }
            16 if s.size() >= 4 => {
                // Reinterpret a float of the same size (never a NaN).
                let from = if s.size() == 4 {
                    Scalar::F32
                } else if self.opts.f64 {
                    Scalar::F64
                } else {
                    return self.expr(s, d);
                };
                let x = self.expr(from, d);
                let x = self.no_nan(x);
                self.intern(Expr::Bitcast(x, Type::scalar(s)), s)
            }
            17 if s.size() >= 4 => {
                // Through a narrow type.
                let n = self.pick(&NARROW);
                let x = self.expr(n, d);
                self.cast(x, s)
            }
            _ => self.leaf(s),
        }
    }

    fn float_expr(&mut self, s: Scalar, d: u32) -> ExprId {
        use BinaryOp::*;
        match self.r.below(20) {
            0..=8 => {
                let op = self.pick(&[Add, Sub, Mul, Div, Rem]);
                let a = self.expr(s, d);
                let b = self.expr(s, d);
                self.bin(op, a, b)
            }
            9 => {
                let a = self.expr(s, d);
                self.intern(Expr::Unary(UnaryOp::Neg, a), s)
            }
            10..=15 => {
                let m = self.pick(&[
                    MathFn::Sqrt,
                    MathFn::Rsqrt,
                    MathFn::Floor,
                    MathFn::Ceil,
                    MathFn::Trunc,
                    MathFn::Round,
                    MathFn::Fma,
                    MathFn::Copysign,
                    MathFn::Min,
                    MathFn::Max,
                    MathFn::Clamp,
                    MathFn::Abs,
                    MathFn::Sign,
                    MathFn::Mix,
                    MathFn::Fmod,
                    MathFn::Rint,
                    MathFn::Logb,
                    MathFn::Fract,
                    MathFn::Fdim,
                    MathFn::Maxmag,
                    MathFn::Minmag,
                    MathFn::Nextafter,
                    MathFn::Remainder,
                    MathFn::Ldexp,
                ]);
                let mut args: Vec<ExprId> = (0..m.arity()).map(|_| self.expr(s, d)).collect();
                if m == MathFn::Copysign {
                    args[1] = self.no_nan(args[1]);
                }
                if m == MathFn::Ldexp {
                    args[1] = self.small_int();
                }
                let r = self.math(m, args);
                if matches!(
                    m,
                    MathFn::Min | MathFn::Max | MathFn::Clamp | MathFn::Maxmag | MathFn::Minmag
                ) {
                    // IEEE leaves open which zero `min(-0.0, +0.0)` returns, and devices differ:
                    // `+ 0.0` makes every zero result +0.0 so no later division or sign test
                    // observes it (nothing else changes).
                    let zero = self.lit(s, 0);
                    self.bin(BinaryOp::Add, r, zero)
                } else {
                    r
                }
            }
            16 => {
                // Reinterpret an integer of the same size.
                let from = if s == Scalar::F32 {
                    self.pick(&[Scalar::I32, Scalar::U32])
                } else {
                    self.pick(&[Scalar::I64, Scalar::U64])
                };
                let x = self.expr(from, d);
                self.intern(Expr::Bitcast(x, Type::scalar(s)), s)
            }
            _ => self.leaf(s),
        }
    }

    /// An integer index in `0..n` from a random expression (`n` a power of two, or any `n` with
    /// `modulo`).
    fn index(&mut self, n: u32) -> ExprId {
        let src = self.pick(&[Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64]);
        let x = self.expr(src, 2);
        let x = self.cast(x, Scalar::U32);
        let n = self.u32(n);
        self.bin(BinaryOp::Rem, x, n)
    }

    // ----- statements -----

    fn program(&mut self) {
        self.group_ops = self.chance(40);
        // Inputs: a few loads at masked indices.
        for _ in 0..self.r.int(2, 4) {
            let t = self.pick(&self.base_types());
            let p = self.param_index(&format!("in_{t}"));
            let gid = self.builtin(Builtin::GlobalId(0));
            let idx = match self.r.below(3) {
                0 => {
                    let n = self.u32(INPUT_LEN);
                    self.bin(BinaryOp::Rem, gid, n)
                }
                1 => {
                    let m = self.r.below(7) as u32 * 2 + 1;
                    let m = self.u32(m);
                    let c = self.r.below(INPUT_LEN as u64) as u32;
                    let c = self.u32(c);
                    let x = self.bin(BinaryOp::Mul, gid, m);
                    let x = self.bin(BinaryOp::Add, x, c);
                    let n = self.u32(INPUT_LEN);
                    self.bin(BinaryOp::Rem, x, n)
                }
                _ => self.index(INPUT_LEN),
            };
            self.load(Mem::Buffer(p), idx, t);
        }
        // Private variables (and sometimes an array), initialized.
        for _ in 0..self.r.int(1, 3) {
            let t = self.pick(&self.base_types());
            let len = self.chance(25).then_some(4);
            let index = self.f.privates.len() as u32;
            self.f.privates.push(PrivateDecl {
                name: format!("p{}_{index}", self.program),
                elem: Type::scalar(t),
                len,
            });
            for i in 0..len.unwrap_or(1) {
                let e = self.expr(t, 1);
                let i = self.u32(i);
                self.emit(Stmt::Store {
                    mem: Mem::Private(index),
                    index: i,
                    value: e,
                    at: strata::ir::SourceLoc::NONE,
                });
            }
            self.privates.push(Private { index, ty: t, len });
        }
        let n = self.r.int(2, 5);
        for _ in 0..n {
            self.stmt(0);
        }
        // Results: the private variables, then a few expressions.
        for p in self.privates.clone() {
            let i = if let Some(n) = p.len {
                self.index(n)
            } else {
                self.u32(0)
            };
            let v = self.load(Mem::Private(p.index), i, p.ty);
            self.output(v, Check::Exact);
        }
        for _ in 0..self.r.int(1, 3) {
            let t = self.pick(&self.base_types());
            if t.is_float() && self.chance(50) {
                let (m, args) = match self.r.below(8) {
                    0..=5 => {
                        let m = self.pick(&APPROX1);
                        (m, vec![self.expr(t, 2)])
                    }
                    6 => {
                        let m = self.pick(&APPROX2);
                        (m, vec![self.expr(t, 2), self.expr(t, 2)])
                    }
                    _ => {
                        let m = self.pick(&APPROX_INT);
                        (m, vec![self.expr(t, 2), self.small_int()])
                    }
                };
                // NaN arguments included: PoCL 3.1 returns 0 for `exp(x * NaN)` once LLVM can
                // prove the NaN; the OpenCL writer guards those built-ins
                // (`Dialect::nan_guarded`).
                let e = self.math(m, args);
                self.output(e, Check::Approx(m));
            } else {
                let e = self.expr(t, 3);
                self.output(e, Check::Exact);
            }
        }
    }

    /// Stores `e` into a new output slot of the program.
    fn output(&mut self, e: ExprId, check: Check) {
        let s = self.ty(e);
        let ti = self.layout.types.iter().position(|&t| t == s).unwrap();
        let slot = self.layout.outs[ti].len() as u32;
        self.layout.outs[ti].push(Slot {
            program: self.program,
            check,
        });
        let p = self.param_index(&format!("out_{s}"));
        let gid = self.builtin(Builtin::GlobalId(0));
        let base = self.u32(slot * GLOBAL_SIZE);
        let idx = self.bin(BinaryOp::Add, base, gid);
        self.emit(Stmt::Store {
            mem: Mem::Buffer(p),
            index: idx,
            value: e,
            at: strata::ir::SourceLoc::NONE,
        });
    }

    /// One statement at nesting depth `depth` (0: the program's top level, where barriers may
    /// be).
    fn stmt(&mut self, depth: u32) {
        let top = depth == 0 && self.group_ops;
        let nest = depth < 2;
        loop {
            match self.r.below(22) {
                0..=3 => {
                    let t = self.pick(&self.base_types());
                    let e = self.expr(t, 3);
                    self.let_(e);
                }
                4..=7 => self.update_private(),
                8..=10 if nest => self.if_(depth),
                11 | 12 if nest => self.for_(depth),
                13 if nest => self.endless(depth),
                14 if !self.loops.is_empty() => self.jump(),
                15 | 16 => self.global_atomic(),
                17 if top => self.exchange(),
                18 if top => self.local_atomic(),
                19 | 20 if top => self.collective(),
                21 => {
                    // Read a private variable into a value.
                    let p = self.pick(&self.privates.clone());
                    let i = match p.len {
                        Some(n) => self.index(n),
                        None => self.u32(0),
                    };
                    self.load(Mem::Private(p.index), i, p.ty);
                }
                _ => continue,
            }
            return;
        }
    }

    /// `p = f(p, ...)` for a private variable (or an element of a private array).
    fn update_private(&mut self) {
        let p = self.pick(&self.privates.clone());
        // A literal index: see the module docs on PoCL and private arrays.
        let i = match p.len {
            Some(n) => {
                let i = self.r.below(n as u64) as u32;
                self.u32(i)
            }
            None => self.u32(0),
        };
        let old = self.load(Mem::Private(p.index), i, p.ty);
        let e = self.expr(p.ty, 2);
        let op = if p.ty.is_float() {
            self.pick(&[BinaryOp::Add, BinaryOp::Mul, BinaryOp::Sub])
        } else {
            self.pick(&[BinaryOp::Add, BinaryOp::Xor, BinaryOp::Mul, BinaryOp::Sub])
        };
        let v = self.bin(op, old, e);
        let v = if self.chance(30) { e } else { v };
        self.emit(Stmt::Store {
            mem: Mem::Private(p.index),
            index: i,
            value: v,
            at: strata::ir::SourceLoc::NONE,
        });
    }

    fn sub_block(&mut self, depth: u32, lo: i64, hi: i64) -> Vec<Stmt> {
        let n = self.r.int(lo, hi);
        self.block(|g| {
            for _ in 0..n {
                g.stmt(depth + 1);
            }
        })
    }

    fn if_(&mut self, depth: u32) {
        let cond = self.expr(Scalar::Bool, 3);
        let then = self.sub_block(depth, 1, 3);
        let otherwise = if self.chance(60) {
            self.sub_block(depth, 1, 3)
        } else {
            Vec::new()
        };
        self.emit(Stmt::If {
            cond,
            then,
            otherwise,
        });
    }

    /// A counted loop: literal or data-dependent bounds, up or down.
    fn for_(&mut self, depth: u32) {
        let (s, start, end, step) = match self.r.below(4) {
            0 => {
                let s = Scalar::U32;
                let n = self.r.int(0, 5) as u64;
                (s, self.lit(s, 0), self.lit(s, n), self.lit(s, 1))
            }
            1 => {
                // Up to 7 iterations, depending on the data.
                let s = self.pick(&[Scalar::U32, Scalar::I32]);
                let x = self.expr(s, 2);
                let seven = self.lit(s, 7);
                let n = self.bin(BinaryOp::And, x, seven);
                let st = self.r.int(1, 2) as u64;
                let first = self.r.int(0, 1) as u64;
                (s, self.lit(s, first), n, self.lit(s, st))
            }
            2 => {
                // Down from a literal to a data-dependent bound in -2..=5.
                let s = Scalar::I32;
                let x = self.expr(s, 2);
                let seven = self.lit(s, 7);
                let x = self.bin(BinaryOp::And, x, seven);
                let two = self.lit(s, 2);
                let end = self.bin(BinaryOp::Sub, x, two);
                let st = self.pick(&[-1i64, -2, -3]) as u64;
                (s, self.lit(s, 6), end, self.lit(s, st))
            }
            _ => {
                let s = self.pick(&[Scalar::I64, Scalar::U64]);
                let n = self.r.int(1, 4) as u64;
                (s, self.lit(s, 0), self.lit(s, n), self.lit(s, 1))
            }
        };
        let id = self.new_loop();
        let var = self.f.new_value(Type::scalar(s), None);
        self.loops.push(id);
        let n = self.r.int(1, 3);
        let body = self.block(|g| {
            g.bind(var, s);
            for _ in 0..n {
                g.stmt(depth + 1);
            }
        });
        self.loops.pop();
        self.emit(Stmt::For {
            id,
            var,
            start,
            end,
            step,
            body,
        });
    }

    /// `loop { if c >= n { break } c += 1; ... }` with a private counter.
    fn endless(&mut self, depth: u32) {
        let index = self.f.privates.len() as u32;
        self.f.privates.push(PrivateDecl {
            name: format!("c{}_{index}", self.program),
            elem: Type::U32,
            len: None,
        });
        let zero = self.u32(0);
        self.emit(Stmt::Store {
            mem: Mem::Private(index),
            index: zero,
            value: zero,
            at: strata::ir::SourceLoc::NONE,
        });
        let n = if self.chance(50) {
            let n = self.r.int(0, 5) as u32;
            self.u32(n)
        } else {
            let x = self.expr(Scalar::U32, 2);
            let m = self.u32(7);
            self.bin(BinaryOp::And, x, m)
        };
        let id = self.new_loop();
        self.loops.push(id);
        let k = self.r.int(1, 3);
        let body = self.block(|g| {
            let c = g.load(Mem::Private(index), zero, Scalar::U32);
            let done = g.bin(BinaryOp::Ge, c, n);
            g.emit(Stmt::If {
                cond: done,
                then: vec![Stmt::Break(id)],
                otherwise: Vec::new(),
            });
            let one = g.u32(1);
            let c1 = g.bin(BinaryOp::Add, c, one);
            g.emit(Stmt::Store {
                mem: Mem::Private(index),
                index: zero,
                value: c1,
                at: strata::ir::SourceLoc::NONE,
            });
            for _ in 0..k {
                g.stmt(depth + 1);
            }
        });
        self.loops.pop();
        self.emit(Stmt::Loop { id, body });
    }

    /// `if cond { break | continue }` of the innermost or an enclosing loop.
    fn jump(&mut self) {
        let id = if self.chance(75) {
            *self.loops.last().unwrap()
        } else {
            self.pick(&self.loops.clone())
        };
        let cond = self.expr(Scalar::Bool, 2);
        let j = if self.chance(50) {
            Stmt::Break(id)
        } else {
            Stmt::Continue(id)
        };
        self.emit(Stmt::If {
            cond,
            then: vec![j],
            otherwise: Vec::new(),
        });
    }

    fn atomic_slot(&mut self, s: Scalar) -> u32 {
        let ai = self.layout.atom_types.iter().position(|&t| t == s).unwrap();
        self.layout.atoms[ai].push(self.program);
        self.layout.atoms[ai].len() as u32 - 1
    }

    /// An atomic on a global counter shared by several work-items (order-independent
    /// operations, old value unused), or on the work-item's own element (old value used).
    fn global_atomic(&mut self) {
        let s = self.pick(&self.layout.atom_types.clone());
        let slot = self.atomic_slot(s);
        let p = self.param_index(&format!("atom_{s}"));
        let gid = self.builtin(Builtin::GlobalId(0));
        let base = self.u32(slot * GLOBAL_SIZE);
        let operand = self.expr(s, 3);
        if self.chance(60) {
            let m = self.pick(&[1u32, 2, 4, 64]);
            let m = self.u32(m);
            let lane = self.bin(BinaryOp::Rem, gid, m);
            let index = self.bin(BinaryOp::Add, base, lane);
            let op = self.pick(&[
                AtomicOp::Add,
                AtomicOp::Sub,
                AtomicOp::Min,
                AtomicOp::Max,
                AtomicOp::And,
                AtomicOp::Or,
                AtomicOp::Xor,
            ]);
            let order = self.atomic_order(false);
            self.emit(Stmt::Atomic {
                result: None,
                mem: Mem::Buffer(p),
                index,
                op,
                operand,
                compare: None,
                order,
                at: strata::ir::SourceLoc::NONE,
            });
        } else {
            let index = self.bin(BinaryOp::Add, base, gid);
            let op = self.pick(&[
                AtomicOp::Add,
                AtomicOp::Sub,
                AtomicOp::Min,
                AtomicOp::Max,
                AtomicOp::And,
                AtomicOp::Or,
                AtomicOp::Xor,
                AtomicOp::Exchange,
                AtomicOp::CompareExchange,
            ]);
            let compare = (op == AtomicOp::CompareExchange).then(|| self.expr(s, 1));
            let v = self.f.new_value(Type::scalar(s), None);
            let order = self.atomic_order(false);
            self.emit(Stmt::Atomic {
                result: Some(v),
                mem: Mem::Buffer(p),
                index,
                op,
                operand,
                compare,
                order,
                at: strata::ir::SourceLoc::NONE,
            });
            self.bind(v, s);
            if self.chance(40) {
                // The element's new value, read back atomically.
                let w = self.f.new_value(Type::scalar(s), None);
                let order = self.atomic_order(true);
                self.emit(Stmt::AtomicLoad {
                    value: w,
                    mem: Mem::Buffer(p),
                    index,
                    order,
                    at: strata::ir::SourceLoc::NONE,
                });
                self.bind(w, s);
            }
        }
    }

    /// The memory order of an atomic (of a load: relaxed, acquire or seq_cst), relaxed more
    /// often than not; sometimes a fence before it. Orders change no value a program computes
    /// (its atomics touch its own elements only), so they test the code the orders generate.
    fn atomic_order(&mut self, load: bool) -> AtomicOrder {
        let scope = self.pick(&[MemScope::WorkGroup, MemScope::Device]);
        if self.chance(15) {
            let order = self.pick(&[
                MemOrder::Acquire,
                MemOrder::Release,
                MemOrder::AcqRel,
                MemOrder::SeqCst,
            ]);
            let spaces = self.pick(&[(true, false), (false, true), (true, true)]);
            self.emit(Stmt::MemFence {
                spaces: Fence {
                    local: spaces.0,
                    global: spaces.1,
                },
                order: AtomicOrder { order, scope },
            });
        }
        if self.chance(60) {
            return AtomicOrder::RELAXED;
        }
        let order = if load {
            self.pick(&[MemOrder::Relaxed, MemOrder::Acquire, MemOrder::SeqCst])
        } else {
            self.pick(&[
                MemOrder::Relaxed,
                MemOrder::Acquire,
                MemOrder::Release,
                MemOrder::AcqRel,
                MemOrder::SeqCst,
            ])
        };
        AtomicOrder { order, scope }
    }

    fn new_local(&mut self, s: Scalar, len: u32) -> u32 {
        let i = self.f.locals.len() as u32;
        self.f.locals.push(LocalDecl {
            name: format!("l{}_{i}", self.program),
            elem: Type::scalar(s),
            len: ArrayLen::Fixed(len),
        });
        i
    }

    fn barrier(&mut self) {
        let fence = if self.chance(70) {
            Fence {
                local: true,
                global: false,
            }
        } else {
            Fence {
                local: true,
                global: true,
            }
        };
        self.emit(Stmt::Barrier(fence));
    }

    /// Every work-item writes its element of a local array; after a barrier each reads another
    /// work-item's element.
    fn exchange(&mut self) {
        let s = self.pick(&self.base_types());
        let l = self.opts.local_size;
        let a = self.new_local(s, l);
        let lid = self.builtin(Builtin::LocalLinearId);
        let v = self.expr(s, 3);
        self.emit(Stmt::Store {
            mem: Mem::Local(a),
            index: lid,
            value: v,
            at: strata::ir::SourceLoc::NONE,
        });
        self.barrier();
        let idx = match self.r.below(3) {
            0 => {
                let k = self.r.int(1, l as i64 - 1) as u32;
                let k = self.u32(k);
                let x = self.bin(BinaryOp::Add, lid, k);
                let n = self.u32(l);
                self.bin(BinaryOp::Rem, x, n)
            }
            1 => {
                let last = self.u32(l - 1);
                self.bin(BinaryOp::Sub, last, lid)
            }
            _ => self.index(l),
        };
        self.load(Mem::Local(a), idx, s);
    }

    /// A local counter: set by work-item 0, updated atomically by (some) work-items between
    /// barriers, then read by all.
    fn local_atomic(&mut self) {
        let s = self.pick(&self.layout.atom_types.clone());
        let a = self.new_local(s, 1);
        let lid = self.builtin(Builtin::LocalLinearId);
        let zero = self.u32(0);
        let first = self.bin(BinaryOp::Eq, lid, zero);
        let init = random_literal(&mut self.r, s);
        let init = self.intern(Expr::Literal(init), s);
        self.emit(Stmt::If {
            cond: first,
            then: vec![Stmt::Store {
                mem: Mem::Local(a),
                index: zero,
                value: init,
                at: strata::ir::SourceLoc::NONE,
            }],
            otherwise: Vec::new(),
        });
        self.barrier();
        let op = self.pick(&[
            AtomicOp::Add,
            AtomicOp::Sub,
            AtomicOp::Min,
            AtomicOp::Max,
            AtomicOp::And,
            AtomicOp::Or,
            AtomicOp::Xor,
        ]);
        let operand = self.expr(s, 3);
        let order = self.atomic_order(false);
        let atomic = Stmt::Atomic {
            result: None,
            mem: Mem::Local(a),
            index: zero,
            op,
            operand,
            compare: None,
            order,
            at: strata::ir::SourceLoc::NONE,
        };
        if self.chance(40) {
            let cond = self.expr(Scalar::Bool, 2);
            self.emit(Stmt::If {
                cond,
                then: vec![atomic],
                otherwise: Vec::new(),
            });
        } else {
            self.emit(atomic);
        }
        self.barrier();
        self.load(Mem::Local(a), zero, s);
    }

    /// A collective of the work-group or (half the time, where the devices share a sub-group
    /// size) of the sub-group.
    fn collective(&mut self) {
        let local = self.opts.local_size;
        let sub_group = self.opts.sub_group_size.filter(|_| self.chance(50));
        let (scope, smallest) = match sub_group {
            // The smallest group's size bounds a broadcast's source.
            Some(sg) => (
                GroupScope::SubGroup,
                Builtin::SubGroupSize
                    .sub_group_value(local - 1, local, sg)
                    .expect("a sub-group built-in"),
            ),
            _ => (GroupScope::WorkGroup, local),
        };
        let ops: Vec<GroupOp> = GroupOp::ALL
            .into_iter()
            .filter(|op| scope == GroupScope::SubGroup || !op.sub_group_only())
            .collect();
        let op = self.pick(&ops);
        let s = match op {
            GroupOp::Any | GroupOp::All | GroupOp::Ballot => Scalar::Bool,
            _ => self.pick(&self.base_types()),
        };
        let arg = self.expr(s, 3);
        let source = match op {
            GroupOp::Broadcast => {
                let src = self.r.below(smallest as u64) as u32;
                Some(self.u32(src))
            }
            // Shuffles take any lane, mask or delta: out-of-range ones give the own value.
            _ if op.takes_source() => Some(if self.chance(50) {
                let src = self.r.below(40) as u32;
                self.u32(src)
            } else {
                self.expr(Scalar::U32, 2)
            }),
            _ => None,
        };
        let ty = op.result_type(Type::scalar(s));
        let v = self.f.new_value(ty, None);
        self.emit(Stmt::Group {
            value: v,
            op,
            scope,
            arg,
            source,
        });
        if !s.is_float() || !op.is_fold() {
            self.bind(v, ty.scalar);
            return;
        }
        if !s.is_float() || op == GroupOp::Broadcast {
            self.bind(v, s);
            return;
        }
        // A float reduction or scan is stored, never computed with further: a sum's rounding
        // depends on the backend's order (and a min or max of zeros may pick either sign), and
        // later operations could amplify that without bound.
        let ve = self.intern(Expr::Value(v), s);
        if matches!(
            op,
            GroupOp::ReduceAdd | GroupOp::ScanInclusiveAdd | GroupOp::ScanExclusiveAdd
        ) {
            let ti = self.layout.types.iter().position(|&t| t == s).unwrap();
            let mag = self.layout.outs[ti].len() as u32 + 1;
            let abs = self.math(MathFn::Abs, vec![arg]);
            let m = self.f.new_value(Type::scalar(s), None);
            self.emit(Stmt::Group {
                value: m,
                op,
                scope,
                arg: abs,
                source: None,
            });
            let me = self.intern(Expr::Value(m), s);
            let check = Check::Sum {
                mag,
                terms: self.opts.local_size,
            };
            self.output(ve, check);
            self.output(me, check);
        } else {
            self.output(ve, Check::Exact);
        }
    }
}

// ----- running -----

/// The result of a differential run.
#[derive(Debug, Default)]
pub struct Report {
    /// Programs whose every result agreed.
    pub passed: usize,
    /// Programs with a mismatch or a device error (a kernel that fails on the device fails all
    /// its programs).
    pub failed_programs: usize,
    /// The mismatches: a description with the seed, the program's IR and the values (one per
    /// mismatching program, one per kernel that failed on the device).
    pub failed: Vec<String>,
    /// Kernels launched on each device.
    pub kernels: usize,
    /// Values compared.
    pub compared: usize,
}

impl Report {
    /// `N passed, M failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed_programs)
    }
}

/// Programs per kernel: PoCL compiles one kernel in 0.1 to 1 s, so many programs share one.
pub const PROGRAMS_PER_KERNEL: usize = 100;

/// Runs `programs` random programs from `seed` on `reference` and `other` and compares their
/// results (see the module docs); `Err` describes the first mismatch (with the seed, the
/// program's IR and the values) or a device error.
pub fn run(reference: &Queue, other: &Queue, seed: u64, programs: usize) -> Result<Report, String> {
    let report = run_with(reference, other, seed, programs, |_, _| {})?;
    match report.failed.first() {
        Some(m) => Err(format!(
            "{} of {} programs disagree; the first:\n{m}",
            report.failed_programs, programs
        )),
        None => Ok(report),
    }
}

/// Like [`run`], but keeps going after mismatches (they are collected in the report) and calls
/// `progress(programs_done, report_so_far)` after each kernel. `Err` is a device error (an
/// error on one device only is a mismatch).
pub fn run_with(
    reference: &Queue,
    other: &Queue,
    seed: u64,
    programs: usize,
    progress: impl FnMut(usize, &Report),
) -> Result<Report, String> {
    let all: Vec<usize> = (0..programs).collect();
    run_programs(reference, other, seed, &all, progress)
}

/// Runs only program `index` of the run with seed `seed`, alone in its kernel (with the same
/// inputs), to reproduce a reported mismatch.
pub fn run_one(
    reference: &Queue,
    other: &Queue,
    seed: u64,
    index: usize,
) -> Result<Report, String> {
    run_programs(reference, other, seed, &[index], |_, _| {})
}

fn run_programs(
    reference: &Queue,
    other: &Queue,
    seed: u64,
    indices: &[usize],
    mut progress: impl FnMut(usize, &Report),
) -> Result<Report, String> {
    let (ri, oi) = (reference.device().info(), other.device().info());
    let mut r = Rng::new(seed);
    let opts = Options {
        programs: 0,
        f64: ri.supports_f64 && oi.supports_f64,
        int64_atomics: ri.supports_int64_atomics && oi.supports_int64_atomics,
        local_size: 1 << r.int(3, 6),
        sub_group_size: (ri.sub_group_size == oi.sub_group_size).then_some(ri.sub_group_size),
    };
    let inputs = Inputs::new(&mut r, &opts);
    // Compile every batch's kernel for a compiling device first, on all cores: compiling
    // (NVRTC, an OpenCL driver) is most of a run's time, and launches then find the kernels in
    // the device's cache. A kernel that fails to compile fails again, and is reported, below.
    if !oi.backend.is_builtin_cpu() {
        use rayon::prelude::*;
        let batches: Vec<&[usize]> = indices.chunks(PROGRAMS_PER_KERNEL).collect();
        batches.par_iter().enumerate().for_each(|(b, batch)| {
            let seeds: Vec<u64> = batch.iter().map(|&i| program_seed(seed, i)).collect();
            let (f, _) = build(&seeds, &opts, &format!("difftest_{b}"));
            if let Ok(k) = Kernel::from_ir(f) {
                let _ = other.device().compile(&k);
            }
        });
    }
    let mut report = Report::default();
    let mut done = 0;
    let mut batch = 0;
    while done < indices.len() {
        let n = PROGRAMS_PER_KERNEL.min(indices.len() - done);
        let batch_indices = &indices[done..done + n];
        let seeds: Vec<u64> = batch_indices
            .iter()
            .map(|&i| program_seed(seed, i))
            .collect();
        let (f, layout) = build(&seeds, &opts, &format!("difftest_{batch}"));
        let want = execute(reference, f.clone(), &layout, &inputs, opts.local_size)
            .map_err(|e| format!("seed {seed}: the reference device failed: {e}"))?;
        let got = execute(other, f, &layout, &inputs, opts.local_size);
        report.kernels += 1;
        let mut bad: Vec<(usize, String)> = Vec::new();
        let failed = match got {
            Err(e) => {
                bad.push((0, format!("the device failed on the whole kernel of {n} programs (programs {}..={}): {e}", batch_indices[0], batch_indices[n - 1])));
                n
            }
            Ok(got) => {
                compare(&layout, &want, &got, &mut bad, &mut report.compared);
                bad.sort_by_key(|b| b.0);
                bad.dedup_by_key(|b| b.0);
                bad.len()
            }
        };
        for (p, what) in &bad {
            let index = batch_indices[*p];
            let ps = program_seed(seed, index);
            let one = program(ps, &opts);
            report.failed.push(format!(
                "seed {seed}, program {index} (program seed {ps:#x}, local size {}) on {} vs {}: {what}\n--- program ---\n{one}",
                opts.local_size,
                oi.spec(),
                ri.spec()
            ));
        }
        report.passed += n - failed;
        report.failed_programs += failed;
        done += n;
        batch += 1;
        progress(done, &report);
    }
    Ok(report)
}

/// A generated kernel's inputs: buffer contents and scalar arguments per type.
struct Inputs {
    buffers: Vec<Vec<Literal>>,
    scalars: Vec<Literal>,
    /// Initial contents of the atomic counters.
    atoms: Vec<Literal>,
}

impl Inputs {
    fn new(r: &mut Rng, opts: &Options) -> Inputs {
        let mut types = vec![
            Scalar::I32,
            Scalar::U32,
            Scalar::I64,
            Scalar::U64,
            Scalar::F32,
        ];
        if opts.f64 {
            types.push(Scalar::F64);
        }
        let buffers = types
            .iter()
            .map(|&t| {
                (0..INPUT_LEN)
                    .map(|_| random_literal(r, t))
                    .collect::<Vec<_>>()
            })
            .collect();
        let scalars = types.iter().map(|&t| random_literal(r, t)).collect();
        let atoms = INTS.iter().map(|&t| random_literal(r, t)).collect();
        Inputs {
            buffers,
            scalars,
            atoms,
        }
    }
}

/// A buffer of any element type.
enum AnyBuffer {
    I32(Buffer<i32>),
    U32(Buffer<u32>),
    I64(Buffer<i64>),
    U64(Buffer<u64>),
    F32(Buffer<f32>),
    F64(Buffer<f64>),
}

macro_rules! any_buffer {
    ($s:expr, $T:ident, $V:ident => $body:expr) => {
        match $s {
            Scalar::I32 => {
                type $T = i32;
                let $V = AnyBuffer::I32;
                $body
            }
            Scalar::U32 => {
                type $T = u32;
                let $V = AnyBuffer::U32;
                $body
            }
            Scalar::I64 => {
                type $T = i64;
                let $V = AnyBuffer::I64;
                $body
            }
            Scalar::U64 => {
                type $T = u64;
                let $V = AnyBuffer::U64;
                $body
            }
            Scalar::F32 => {
                type $T = f32;
                let $V = AnyBuffer::F32;
                $body
            }
            Scalar::F64 => {
                type $T = f64;
                let $V = AnyBuffer::F64;
                $body
            }
            other => unreachable!("no buffers of {other}"),
        }
    };
}

fn upload<T: Value + Num>(q: &Queue, data: &[Literal]) -> strata::Result<Buffer<T>> {
    let v: Vec<T> = data.iter().map(|&l| T::from_lit(l)).collect();
    Buffer::from_slice(q, &v)
}

fn bits<T: Value + Num>(q: &Queue, b: &Buffer<T>) -> strata::Result<Vec<u64>> {
    Ok(q.read(b)?.into_iter().map(|x| x.to_lit().bits).collect())
}

impl AnyBuffer {
    fn new(q: &Queue, s: Scalar, data: &[Literal]) -> strata::Result<AnyBuffer> {
        any_buffer!(s, T, ctor => Ok(ctor(upload::<T>(q, data)?)))
    }
    fn arg(&self) -> KernelArg<'_> {
        match self {
            AnyBuffer::I32(b) => b.into(),
            AnyBuffer::U32(b) => b.into(),
            AnyBuffer::I64(b) => b.into(),
            AnyBuffer::U64(b) => b.into(),
            AnyBuffer::F32(b) => b.into(),
            AnyBuffer::F64(b) => b.into(),
        }
    }
    fn read(&self, q: &Queue) -> strata::Result<Vec<u64>> {
        match self {
            AnyBuffer::I32(b) => bits(q, b),
            AnyBuffer::U32(b) => bits(q, b),
            AnyBuffer::I64(b) => bits(q, b),
            AnyBuffer::U64(b) => bits(q, b),
            AnyBuffer::F32(b) => bits(q, b),
            AnyBuffer::F64(b) => bits(q, b),
        }
    }
}

fn scalar_arg(l: Literal) -> KernelArg<'static> {
    any_buffer!(l.scalar, T, _ctor => KernelArg::from(T::from_lit(l)))
}

/// The outputs of one kernel run, as bits: per type, then per atomic type.
struct Outputs {
    outs: Vec<Vec<u64>>,
    atoms: Vec<Vec<u64>>,
}

/// Runs `f` once on `q`.
fn execute(
    q: &Queue,
    f: Function,
    layout: &Layout,
    inputs: &Inputs,
    local: u32,
) -> strata::Result<Outputs> {
    let k = Kernel::from_ir(f)?;
    let g = GLOBAL_SIZE as usize;
    let mut ins = Vec::new();
    for (i, &t) in layout.types.iter().enumerate() {
        ins.push(AnyBuffer::new(q, t, &inputs.buffers[i])?);
    }
    let mut outs = Vec::new();
    for (i, &t) in layout.types.iter().enumerate() {
        let n = layout.outs[i].len().max(1) * g;
        outs.push(AnyBuffer::new(q, t, &vec![lit(t, 0); n])?);
    }
    let mut atoms = Vec::new();
    for (i, &t) in layout.atom_types.iter().enumerate() {
        let n = layout.atoms[i].len().max(1) * g;
        let init = inputs.atoms[INTS.iter().position(|&x| x == t).unwrap()];
        atoms.push(AnyBuffer::new(q, t, &vec![init; n])?);
    }
    let mut args: Vec<KernelArg<'_>> = Vec::new();
    for (i, b) in ins.iter().enumerate() {
        args.push(b.arg());
        args.push(scalar_arg(inputs.scalars[i]));
    }
    args.extend(outs.iter().map(AnyBuffer::arg));
    args.extend(atoms.iter().map(AnyBuffer::arg));
    q.launch(&k, NdRange::new(g).local(local as usize), &args)?;
    Ok(Outputs {
        outs: outs
            .iter()
            .map(|b| b.read(q))
            .collect::<strata::Result<_>>()?,
        atoms: atoms
            .iter()
            .map(|b| b.read(q))
            .collect::<strata::Result<_>>()?,
    })
}

/// Float comparison per the module docs; `None` when equal.
fn float_diff(s: Scalar, check: Check, g: u64, w: u64) -> Option<String> {
    let (gf, wf, tiny, eps, sign) = match s {
        Scalar::F32 => (
            f32::from_bits(g as u32) as f64,
            f32::from_bits(w as u32) as f64,
            f32::MIN_POSITIVE as f64,
            f32::EPSILON as f64,
            1u64 << 31,
        ),
        _ => (
            f64::from_bits(g),
            f64::from_bits(w),
            f64::MIN_POSITIVE,
            f64::EPSILON,
            1u64 << 63,
        ),
    };
    if gf.is_nan() || wf.is_nan() {
        return (gf.is_nan() != wf.is_nan()).then(|| "NaN against a number".into());
    }
    if gf.abs() < tiny && wf.abs() < tiny {
        return None; // zeros and denormals are all zero
    }
    let key = |b: u64| -> i128 {
        let mag = (b & !sign) as i128;
        if b & sign != 0 {
            -mag
        } else {
            mag
        }
    };
    let ulps = (key(g) - key(w)).unsigned_abs();
    let (bound, abs) = match check {
        Check::Exact | Check::Sum { .. } => (0, 0.0),
        Check::Approx(m) => {
            let b = ulp_bound(m);
            (b, if crosses_zero(m) { b as f64 * eps } else { 0.0 })
        }
    };
    if ulps <= bound as u128 || (gf - wf).abs() <= abs {
        None
    } else {
        Some(format!(
            "off by {ulps} ulp (allowed {bound}{})",
            if abs > 0.0 {
                format!(" or {abs:e}")
            } else {
                String::new()
            }
        ))
    }
}

/// Comparison of a float sum collective (`got` against the reference's `want`), given the
/// reference's sum of the operands' magnitudes `mag`: both are within `gamma(terms - 1) * mag`
/// of the exact sum whatever their association, so they may differ by twice that, plus
/// `terms` times the smallest normal number (devices may flush subnormal operands). A NaN
/// magnitude (a NaN operand) requires a NaN; an infinite one, or one so large that another
/// order may overflow, allows anything. `None` when the results agree.
fn sum_diff(s: Scalar, terms: u32, got: u64, want: u64, mag: u64) -> Option<String> {
    let (g, w, m, u, tiny, max) = match s {
        Scalar::F32 => (
            f32::from_bits(got as u32) as f64,
            f32::from_bits(want as u32) as f64,
            f32::from_bits(mag as u32) as f64,
            f32::EPSILON as f64 / 2.0,
            f32::MIN_POSITIVE as f64,
            f32::MAX as f64,
        ),
        _ => (
            f64::from_bits(got),
            f64::from_bits(want),
            f64::from_bits(mag),
            f64::EPSILON / 2.0,
            f64::MIN_POSITIVE,
            f64::MAX,
        ),
    };
    if m.is_nan() {
        return (!g.is_nan()).then(|| "a number where a NaN operand makes the sum NaN".into());
    }
    if m.is_infinite() || m > max / 2.0 {
        return None;
    }
    let k = terms.saturating_sub(1) as f64;
    let allowed = 2.0 * k * u / (1.0 - k * u) * m + terms as f64 * tiny;
    let err = (g - w).abs();
    // A NaN difference (a NaN result) is not within anything.
    let within = err <= allowed;
    (!within).then(|| {
        format!(
            "a sum in some association order may differ by {allowed:e} (sum of magnitudes {m:e}), this one by {err:e}"
        )
    })
}

fn show(s: Scalar, bits: u64) -> String {
    format!("{} ({bits:#x})", lit(s, bits))
}

/// Compares two runs, pushing `(program, description)` for each mismatching value.
fn compare(
    layout: &Layout,
    want: &Outputs,
    got: &Outputs,
    bad: &mut Vec<(usize, String)>,
    compared: &mut usize,
) {
    let g = GLOBAL_SIZE as usize;
    for (ti, &s) in layout.types.iter().enumerate() {
        for (slot, meta) in layout.outs[ti].iter().enumerate() {
            for item in 0..g {
                let i = slot * g + item;
                let (w, o) = (want.outs[ti][i], got.outs[ti][i]);
                *compared += 1;
                let diff = if let Check::Sum { mag, terms } = meta.check {
                    sum_diff(s, terms, o, w, want.outs[ti][mag as usize * g + item])
                } else if s.is_float() {
                    float_diff(s, meta.check, o, w)
                } else {
                    (w != o).then(String::new)
                };
                if let Some(d) = diff {
                    let what = match meta.check {
                        Check::Exact => "exact".to_string(),
                        Check::Approx(m) => format!("result of {}", m.name()),
                        Check::Sum { .. } => "float sum collective".to_string(),
                    };
                    let mut m = String::new();
                    let _ = write!(
                        m,
                        "out_{s} slot {slot} ({what}), work-item {item}: got {}, expected {}",
                        show(s, o),
                        show(s, w)
                    );
                    if !d.is_empty() {
                        let _ = write!(m, ", {d}");
                    }
                    bad.push((meta.program, m));
                    break;
                }
            }
        }
    }
    for (ai, &s) in layout.atom_types.iter().enumerate() {
        for (slot, &program) in layout.atoms[ai].iter().enumerate() {
            for item in 0..g {
                let i = slot * g + item;
                let (w, o) = (want.atoms[ai][i], got.atoms[ai][i]);
                *compared += 1;
                if w != o {
                    bad.push((
                        program,
                        format!(
                            "atom_{s} slot {slot} element {item} after the kernel: got {}, expected {}",
                            show(s, o),
                            show(s, w)
                        ),
                    ));
                    break;
                }
            }
        }
    }
}

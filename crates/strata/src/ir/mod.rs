//! The kernel IR: typed, pure, interned expressions and a tree of statements that carry every
//! side effect and all control flow.
//!
//! A [`Function`] is one kernel. Its expressions live in an [`ExprArena`] where identical
//! expressions are one [`ExprId`] (common-subexpression elimination for free, and cheap equality
//! of whole kernels). Expressions read only immutable things: literals, scalar parameters,
//! work-item ids and [`ValueId`]s, the single-assignment results of statements. Everything that
//! reads or writes memory is a [`Stmt`]: reading a variable or a buffer snapshots it into a value
//! with [`Stmt::Load`].
//!
//! Semantics written here hold on every backend:
//! - integer `+ - *` wrap (two's complement); shifts take the amount modulo the bit width;
//! - integer division or remainder by zero is an error on the CPU backend (undefined on GPUs);
//!   `MIN / -1` wraps to `MIN` and `MIN % -1` is 0;
//! - float to integer casts saturate and map NaN to 0 (Rust `as`, OpenCL `convert_*_sat_rtz`);
//! - integer to float and `f64` to `f32` casts round to nearest even;
//! - float `min`/`max` return the other operand when one is NaN (IEEE `minNum`/`maxNum`).
//!
//! `f16` (IEEE binary16, `half::f16`) is an arithmetic type with these rules:
//! - `+ - * /`, `%` (`fmod`), `sqrt` and `fma` give the exact result rounded to nearest even,
//!   like `f32` and `f64`; conversions to `f16` (from every type) round to nearest even, with
//!   overflow to infinity; conversions from `f16` follow the rules above (to integers
//!   saturating, NaN to 0);
//! - comparisons, `min`, `max`, `abs`, `copysign`, `floor`, `ceil`, `trunc`, `round`, `rint`,
//!   `ilogb`, `logb` and `remainder` are exact as for the other float types, `ldexp` rounds
//!   once; `nextafter` steps to the neighbouring `f16`, `fract` is at most `1 - 2^-11`;
//! - every other built-in (the transcendentals, `pow`, `mix`, `dot`, `length`, ...) is the
//!   `f32` built-in of the widened arguments, rounded to `f16`: within 1 ulp of `f16` of the
//!   exact result wherever the `f32` built-in is within 2^-11 relative of it (every built-in on
//!   every backend away from overflow and cancellation);
//! - work-group and sub-group collectives and atomics do not take `f16` (widen to `f32`).
//!
//! Backends implement `f16` through [`passes::lower_f16`], which rewrites every `f16` operation
//! into `f32` operations between conversions (exact for the rounded operations: `f32` has
//! `2 * 11 + 2` bits, so rounding twice gives the once-rounded result), so that a backend only
//! converts between `f16` and `f32` or `f64`, and loads, stores and selects `f16` values.
//! The compiled CPU backend keeps an `f16` as its 16 bits and converts through the evaluator;
//! OpenCL C uses `half` (`cl_khr_fp16`, checked against the device before compiling); CUDA C++
//! keeps `unsigned short` bits and converts with PTX `cvt` (no `cuda_fp16.h` needed).
//!
//! The rooms: `id` (the typed indices), `expr` (expressions and their arena), `math` (the
//! built-in functions), `memory` (what statements access, memory orders, atomics), `group`
//! (collectives), `stmt` (statements and walks over them), `function` (the kernel and its
//! tables), `fingerprint` (the kernel caches' key); every item is re-exported here. Beside
//! them: [`abi`] (the launch ABI), [`types`], [`validate`](mod@validate), [`eval`] (the one
//! evaluator of operations), [`passes`], [`checked`] (checked mode's instrumentation),
//! [`ranges`] (which accesses are proven in bounds) and [`print`](mod@print) (the text form).

pub mod abi;
pub mod checked;
pub mod eval;
mod expr;
mod fingerprint;
mod function;
mod group;
mod id;
mod math;
mod memory;
pub mod passes;
pub mod print;
pub mod ranges;
mod special;
mod stmt;
pub mod types;
pub mod validate;

pub use abi::{ElementLayout, Gather, GatherOp, HiddenParam, HiddenRole, ShapePart};
pub use expr::{
    all_exprs, expr_operands, visit_exprs, BinaryOp, Builtin, Expr, ExprArena, UnaryOp,
};
pub use function::{
    expr_uses, ArrayLen, Elem, FieldDecl, FieldStep, FieldView, Function, LocalDecl, Param,
    ParamKind, PrivateDecl, StructDecl, StubCpuBody, StubDecl, ValueDecl,
};
pub use group::{GroupOp, GroupScope};
pub use id::{
    ExprId, FieldId, Id, IdVec, Key, LocalId, Loop, LoopId, ParamId, PrivateId, StructId, StubId,
    ValueId,
};
pub use math::{MathFn, MathKind};
pub use memory::{AtomicOp, AtomicOrder, Fence, Mem, MemOrder, MemScope};
pub use stmt::{source_suffix, stmt_operands, walk_block, walk_exprs, Block, SourceLoc, Stmt};
pub use types::{Access, AddressSpace, Literal, Scalar, Type};
pub use validate::{validate, validate_keeping, ValidFunction, ValidationError, ValidationErrors};

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

pub mod abi;
pub mod checked;
pub mod eval;
pub mod passes;
pub mod print;
mod special;
pub mod types;
pub mod validate;

use std::collections::HashMap;
use std::fmt;

pub use abi::{ElementLayout, Gather, GatherOp, HiddenParam, HiddenRole, ShapePart};
pub use types::{Access, AddressSpace, Literal, Scalar, Type};
pub use validate::{validate, validate_keeping, ValidFunction, ValidationError, ValidationErrors};

/// Index of an expression in its function's [`ExprArena`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ExprId(pub u32);

/// A single-assignment value defined by a statement (a `let`, a load, an atomic's old value, a
/// collective's result, a `for` counter).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ValueId(pub u32);

/// Identifies a loop, the target of `break` and `continue`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct LoopId(pub u32);

/// Work-item coordinates and sizes. The dimension is 0, 1 or 2; dimensions beyond the launch's
/// have id 0 and size 1.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Builtin {
    /// Index of the work-item in the whole launch (`u32`).
    GlobalId(u8),
    /// Index of the work-item in its work-group (`u32`).
    LocalId(u8),
    /// Index of the work-group (`u32`).
    GroupId(u8),
    /// Number of work-items in the launch (`u32`).
    GlobalSize(u8),
    /// Number of work-items in a work-group (`u32`).
    LocalSize(u8),
    /// Number of work-groups (`u32`).
    NumGroups(u8),
    /// Linear index of the work-item in its work-group: `x + y*lx + z*lx*ly` (`u32`).
    LocalLinearId,
    /// Linear index of the work-group: `x + y*gx + z*gx*gy` (`u32`).
    GroupLinearId,
    /// Number of work-items in this work-item's sub-group (`u32`): the device's sub-group size,
    /// or less in the last sub-group of a work-group whose size is not a multiple of it. See
    /// [`GroupScope::SubGroup`].
    SubGroupSize,
    /// The device's sub-group size (`u32`, at most 32): the size of every sub-group but
    /// perhaps the last.
    MaxSubGroupSize,
    /// Number of sub-groups in the work-group (`u32`).
    NumSubGroups,
    /// Index of this work-item's sub-group in the work-group: `local_linear_id / size` (`u32`).
    SubGroupId,
    /// Index of the work-item in its sub-group, its *lane*: `local_linear_id % size` (`u32`).
    SubGroupLocalId,
}

impl Builtin {
    /// Name used by the text form and the builder.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::GlobalId(_) => "global_id",
            Builtin::LocalId(_) => "local_id",
            Builtin::GroupId(_) => "group_id",
            Builtin::GlobalSize(_) => "global_size",
            Builtin::LocalSize(_) => "local_size",
            Builtin::NumGroups(_) => "num_groups",
            Builtin::LocalLinearId => "local_linear_id",
            Builtin::GroupLinearId => "group_linear_id",
            Builtin::SubGroupSize => "sub_group_size",
            Builtin::MaxSubGroupSize => "max_sub_group_size",
            Builtin::NumSubGroups => "num_sub_groups",
            Builtin::SubGroupId => "sub_group_id",
            Builtin::SubGroupLocalId => "sub_group_local_id",
        }
    }

    /// The value of a sub-group built-in for the work-item with local linear id `lid` in a
    /// work-group of `group_size` work-items, on a device whose sub-group size is `sg`; `None`
    /// for the other built-ins. The one definition of these values: the CPU backends call it,
    /// the code generators write the same formulas.
    pub fn sub_group_value(self, lid: u32, group_size: u32, sg: u32) -> Option<u32> {
        Some(match self {
            Builtin::SubGroupSize => sg.min(group_size - lid / sg * sg),
            Builtin::MaxSubGroupSize => sg,
            Builtin::NumSubGroups => group_size.div_ceil(sg),
            Builtin::SubGroupId => lid / sg,
            Builtin::SubGroupLocalId => lid % sg,
            _ => return None,
        })
    }

    /// Whether this is one of the sub-group built-ins, whose values depend on the device's
    /// sub-group size.
    pub fn is_sub_group(self) -> bool {
        self.sub_group_value(0, 1, 1).is_some()
    }

    /// The dimension argument, if the built-in takes one.
    pub fn dim(self) -> Option<u8> {
        match self {
            Builtin::GlobalId(d)
            | Builtin::LocalId(d)
            | Builtin::GroupId(d)
            | Builtin::GlobalSize(d)
            | Builtin::LocalSize(d)
            | Builtin::NumGroups(d) => Some(d),
            Builtin::LocalLinearId
            | Builtin::GroupLinearId
            | Builtin::SubGroupSize
            | Builtin::MaxSubGroupSize
            | Builtin::NumSubGroups
            | Builtin::SubGroupId
            | Builtin::SubGroupLocalId => None,
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UnaryOp {
    /// Arithmetic negation (wrapping for integers).
    Neg,
    /// Bitwise complement for integers, logical not for `bool`.
    Not,
}

/// Binary operators. Both operands have the same type; comparisons yield `bool` (of the same
/// width); shifts take an unsigned or signed amount of the same type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integers round towards zero)
    Div,
    /// `%` (sign of the dividend; floats: `fmod`)
    Rem,
    /// `&` (logical and for `bool`)
    And,
    /// `|` (logical or for `bool`)
    Or,
    /// `^`
    Xor,
    /// `<<`
    Shl,
    /// `>>` (arithmetic for signed integers)
    Shr,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl BinaryOp {
    /// `true` for the six comparisons.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }

    /// The operator's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::And => "&",
            BinaryOp::Or => "|",
            BinaryOp::Xor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
        }
    }
}

macro_rules! math_fns {
    ($( $(#[$doc:meta])* $name:ident = $text:literal, $arity:literal, $kind:ident; )*) => {
        /// Built-in functions of the OpenCL 1.2 math, integer, common, relational and geometric
        /// families that exist on all three targets. Each is defined once here; the evaluator,
        /// the validator and the code generators dispatch on this enum.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        pub enum MathFn { $( $(#[$doc])* $name, )* }

        impl MathFn {
            /// Every built-in.
            pub const ALL: &'static [MathFn] = &[ $( MathFn::$name, )* ];
            /// The built-in's name (OpenCL spelling).
            pub fn name(self) -> &'static str { match self { $( MathFn::$name => $text, )* } }
            /// Number of arguments.
            pub fn arity(self) -> usize { match self { $( MathFn::$name => $arity, )* } }
            /// Which argument and result types the built-in takes.
            pub fn kind(self) -> MathKind { match self { $( MathFn::$name => MathKind::$kind, )* } }
        }
    };
}

impl MathFn {
    /// How far a backend's result of this float built-in may be from the exact result, in
    /// units in the last place of the result type: OpenCL 1.2's bounds for the full profile
    /// (section 7.4, the same for `f32` and `f64`), which strata holds every backend to, the
    /// CPU evaluator and constant folding included (`tests/math_accuracy.rs` sweeps them). 0
    /// for the built-ins whose result is exact or correctly rounded (`sqrt` included: strata
    /// asks every compiler for a correctly rounded square root), for integer and test
    /// built-ins, and for the geometric ones, whose error follows from their arithmetic.
    pub fn ulp_bound(self) -> u32 {
        match self {
            MathFn::Cbrt | MathFn::Log1p | MathFn::Rsqrt | MathFn::Degrees | MathFn::Radians => 2,
            MathFn::Exp | MathFn::Exp2 | MathFn::Exp10 | MathFn::Expm1 => 3,
            MathFn::Log | MathFn::Log2 | MathFn::Log10 => 3,
            MathFn::Sin | MathFn::Cos | MathFn::Sinh | MathFn::Cosh => 4,
            MathFn::Asin | MathFn::Acos | MathFn::Asinh | MathFn::Acosh | MathFn::Hypot => 4,
            MathFn::Tan | MathFn::Tanh | MathFn::Atan | MathFn::Atanh => 5,
            MathFn::Atan2 | MathFn::Atan2pi | MathFn::Tanpi => 6,
            MathFn::Asinpi | MathFn::Acospi | MathFn::Atanpi => 5,
            MathFn::Sinpi | MathFn::Cospi => 4,
            MathFn::Pow | MathFn::Powr | MathFn::Pown | MathFn::Rootn => 16,
            MathFn::Erf | MathFn::Erfc | MathFn::Tgamma => 16,
            // OpenCL gives lgamma no bound; strata holds it to 16 ulp for x > 0 and to an
            // absolute 2^-20 (f32) or 2^-48 (f64) near its zeros at negative x.
            MathFn::Lgamma => 16,
            _ => 0,
        }
    }
}

/// The typing rule of a [`MathFn`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MathKind {
    /// Float arguments, result of the same type (componentwise on vectors).
    Float,
    /// Integer arguments, result of the same type.
    Int,
    /// Any numeric type, result of the same type.
    Numeric,
    /// Float arguments, `bool` result of the same width.
    FloatTest,
    /// Float vectors, scalar float result (`dot`, `length`, `distance`).
    Reduce,
    /// Float vectors, vector result (`normalize`, `cross`).
    Geometric,
    /// A float and an `i32` of the same width, result of the float's type (`ldexp`, `pown`,
    /// `rootn`).
    FloatInt,
    /// A float, result `i32` of the same width (`ilogb`).
    FloatToInt,
}

impl MathFn {
    /// The result's component type for arguments whose first has component type `s`.
    pub fn result_scalar(self, s: Scalar) -> Scalar {
        match self.kind() {
            MathKind::FloatTest => Scalar::Bool,
            MathKind::FloatToInt => Scalar::I32,
            _ => s,
        }
    }

    /// The component type argument `i` must have when the first has `s`.
    pub fn arg_scalar(self, i: usize, s: Scalar) -> Scalar {
        match self.kind() {
            MathKind::FloatInt if i == 1 => Scalar::I32,
            _ => s,
        }
    }
}

math_fns! {
    /// `sqrt(x)`
    Sqrt = "sqrt", 1, Float;
    /// `1 / sqrt(x)`
    Rsqrt = "rsqrt", 1, Float;
    /// Cube root.
    Cbrt = "cbrt", 1, Float;
    /// `e^x`
    Exp = "exp", 1, Float;
    /// `2^x`
    Exp2 = "exp2", 1, Float;
    /// `10^x`
    Exp10 = "exp10", 1, Float;
    /// `e^x - 1`
    Expm1 = "expm1", 1, Float;
    /// Natural logarithm.
    Log = "log", 1, Float;
    /// Base-2 logarithm.
    Log2 = "log2", 1, Float;
    /// Base-10 logarithm.
    Log10 = "log10", 1, Float;
    /// `ln(1 + x)`
    Log1p = "log1p", 1, Float;
    /// Sine.
    Sin = "sin", 1, Float;
    /// Cosine.
    Cos = "cos", 1, Float;
    /// Tangent.
    Tan = "tan", 1, Float;
    /// Arc sine.
    Asin = "asin", 1, Float;
    /// Arc cosine.
    Acos = "acos", 1, Float;
    /// Arc tangent.
    Atan = "atan", 1, Float;
    /// Hyperbolic sine.
    Sinh = "sinh", 1, Float;
    /// Hyperbolic cosine.
    Cosh = "cosh", 1, Float;
    /// Hyperbolic tangent.
    Tanh = "tanh", 1, Float;
    /// Inverse hyperbolic sine.
    Asinh = "asinh", 1, Float;
    /// Inverse hyperbolic cosine.
    Acosh = "acosh", 1, Float;
    /// Inverse hyperbolic tangent.
    Atanh = "atanh", 1, Float;
    /// Round down.
    Floor = "floor", 1, Float;
    /// Round up.
    Ceil = "ceil", 1, Float;
    /// Round half away from zero.
    Round = "round", 1, Float;
    /// Round towards zero.
    Trunc = "trunc", 1, Float;
    /// `x^y`
    Pow = "pow", 2, Float;
    /// `atan(y / x)` in the right quadrant; arguments `(y, x)`.
    Atan2 = "atan2", 2, Float;
    /// Float remainder with the sign of `x` (C `fmod`).
    Fmod = "fmod", 2, Float;
    /// `sqrt(x*x + y*y)` without undue overflow.
    Hypot = "hypot", 2, Float;
    /// Magnitude of `x` with the sign of `y`.
    Copysign = "copysign", 2, Float;
    /// `x * y + z` with one rounding.
    Fma = "fma", 3, Float;
    /// `x + (y - x) * a`
    Mix = "mix", 3, Float;
    /// `-1`, `0` or `1` (`0` keeps its sign, NaN gives 0).
    Sign = "sign", 1, Float;
    /// Degrees from radians.
    Degrees = "degrees", 1, Float;
    /// Radians from degrees.
    Radians = "radians", 1, Float;
    /// The error function.
    Erf = "erf", 1, Float;
    /// `1 - erf(x)` without cancellation.
    Erfc = "erfc", 1, Float;
    /// The gamma function.
    Tgamma = "tgamma", 1, Float;
    /// `ln |gamma(x)|`
    Lgamma = "lgamma", 1, Float;
    /// `sin(pi x)`, with the argument reduced exactly.
    Sinpi = "sinpi", 1, Float;
    /// `cos(pi x)`, with the argument reduced exactly.
    Cospi = "cospi", 1, Float;
    /// `tan(pi x)`, with the argument reduced exactly.
    Tanpi = "tanpi", 1, Float;
    /// `asin(x) / pi`
    Asinpi = "asinpi", 1, Float;
    /// `acos(x) / pi`
    Acospi = "acospi", 1, Float;
    /// `atan(x) / pi`
    Atanpi = "atanpi", 1, Float;
    /// `atan2(y, x) / pi`; arguments `(y, x)`.
    Atan2pi = "atan2pi", 2, Float;
    /// Round to the nearest integer, ties to even.
    Rint = "rint", 1, Float;
    /// The exponent of `x` as a float (`floor(log2 |x|)`, exact; subnormals included).
    Logb = "logb", 1, Float;
    /// `x - floor(x)`, at most the largest value below 1 (OpenCL `fract` without the pointer:
    /// the floor is `floor(x)`); `fract(±inf) = ±0`, `fract(±0) = ±0`.
    Fract = "fract", 1, Float;
    /// `x - y` when `x > y`, else `+0`.
    Fdim = "fdim", 2, Float;
    /// The argument of larger magnitude (`fmax` of both when the magnitudes are equal).
    Maxmag = "maxmag", 2, Float;
    /// The argument of smaller magnitude (`fmin` of both when the magnitudes are equal).
    Minmag = "minmag", 2, Float;
    /// The next representable value after `x` towards `y`.
    Nextafter = "nextafter", 2, Float;
    /// IEEE remainder: `x - n y` with `n` the integer nearest `x / y` (ties to even), exact.
    Remainder = "remainder", 2, Float;
    /// `x^y` for `x >= 0` (NaN for negative `x`, `powr(0, 0)`, `powr(inf, 0)`, `powr(1, inf)`).
    Powr = "powr", 2, Float;
    /// `x * 2^n`, exact (rounded once where the result is subnormal).
    Ldexp = "ldexp", 2, FloatInt;
    /// `x^n` for an integer `n`.
    Pown = "pown", 2, FloatInt;
    /// `x^(1/n)` for an integer `n` (negative `x` only for odd `n`).
    Rootn = "rootn", 2, FloatInt;
    /// The exponent of `x` as an `i32` (`ilogb(±0) = i32::MIN`, `ilogb(±inf) = ilogb(NaN) =
    /// i32::MAX`).
    Ilogb = "ilogb", 1, FloatToInt;
    /// Absolute value (integers wrap: `abs(MIN) == MIN`).
    Abs = "abs", 1, Numeric;
    /// Smaller of two values.
    Min = "min", 2, Numeric;
    /// Larger of two values.
    Max = "max", 2, Numeric;
    /// `min(max(x, lo), hi)`
    Clamp = "clamp", 3, Numeric;
    /// Leading zero bits.
    Clz = "clz", 1, Int;
    /// Set bits.
    Popcount = "popcount", 1, Int;
    /// Rotate left by `y` modulo the bit width.
    Rotate = "rotate", 2, Int;
    /// High half of the full product.
    MulHi = "mul_hi", 2, Int;
    /// Saturating add.
    AddSat = "add_sat", 2, Int;
    /// Saturating subtract.
    SubSat = "sub_sat", 2, Int;
    /// `(x + y) >> 1` without overflow.
    Hadd = "hadd", 2, Int;
    /// `(x + y + 1) >> 1` without overflow.
    Rhadd = "rhadd", 2, Int;
    /// `x * y + z`, saturated to the type's range (computed exactly).
    MadSat = "mad_sat", 3, Int;
    /// `x` is NaN.
    IsNan = "isnan", 1, FloatTest;
    /// `x` is infinite.
    IsInf = "isinf", 1, FloatTest;
    /// `x` is neither NaN nor infinite.
    IsFinite = "isfinite", 1, FloatTest;
    /// The sign bit of `x` is set.
    Signbit = "signbit", 1, FloatTest;
    /// Dot product.
    Dot = "dot", 2, Reduce;
    /// Euclidean length.
    Length = "length", 1, Reduce;
    /// `length(x - y)`
    Distance = "distance", 2, Reduce;
    /// `x / length(x)`
    Normalize = "normalize", 1, Geometric;
    /// Cross product of 3-vectors.
    Cross = "cross", 2, Geometric;
}

/// A pure expression.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Expr {
    /// A scalar constant.
    Literal(Literal),
    /// The value of scalar parameter `n` (an index into [`Function::params`]).
    Param(u32),
    /// The number of elements of buffer parameter `n` (`u32`).
    BufferLen(u32),
    /// A value defined by a statement.
    Value(ValueId),
    /// A work-item coordinate or size.
    Builtin(Builtin),
    /// A unary operation.
    Unary(UnaryOp, ExprId),
    /// A binary operation.
    Binary(BinaryOp, ExprId, ExprId),
    /// `cond ? a : b`, componentwise when `cond` is a vector of the same width.
    Select(ExprId, ExprId, ExprId),
    /// Value conversion to another component type (same width); see the module docs.
    Cast(ExprId, Scalar),
    /// Reinterpretation of the bits as another type of the same size.
    Bitcast(ExprId, Type),
    /// A built-in function.
    Math(MathFn, Vec<ExprId>),
    /// A vector with every component equal to a scalar.
    Splat(ExprId, u8),
    /// A vector from its scalar components.
    Compose(Vec<ExprId>),
    /// Component `n` of a vector.
    Extract(ExprId, u8),
    /// A call of stub function `n` ([`Function::stubs`]).
    Stub(u32, Vec<ExprId>),
}

/// The expressions of one function, interned: adding an expression that already exists returns
/// the existing id.
#[derive(Clone, Default, Debug)]
pub struct ExprArena {
    exprs: Vec<(Expr, Type)>,
    index: HashMap<Expr, ExprId>,
}

impl ExprArena {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `expr` of type `ty`, or returns the id it already has.
    pub fn intern(&mut self, expr: Expr, ty: Type) -> ExprId {
        if let Some(&id) = self.index.get(&expr) {
            return id;
        }
        let id = ExprId(self.exprs.len() as u32);
        self.exprs.push((expr.clone(), ty));
        self.index.insert(expr, id);
        id
    }

    /// The expression with id `id`.
    pub fn get(&self, id: ExprId) -> &Expr {
        &self.exprs[id.0 as usize].0
    }

    /// The type of expression `id`.
    pub fn ty(&self, id: ExprId) -> Type {
        self.exprs[id.0 as usize].1
    }

    /// Number of expressions.
    pub fn len(&self) -> usize {
        self.exprs.len()
    }

    /// `true` when there are no expressions.
    pub fn is_empty(&self) -> bool {
        self.exprs.is_empty()
    }

    /// Iterates over `(id, expr, type)` in creation order (operands before their users).
    pub fn iter(&self) -> impl Iterator<Item = (ExprId, &Expr, Type)> {
        self.exprs
            .iter()
            .enumerate()
            .map(|(i, (e, t))| (ExprId(i as u32), e, *t))
    }

    /// The literal value of `id`, if it is a literal.
    pub fn literal(&self, id: ExprId) -> Option<Literal> {
        match self.get(id) {
            Expr::Literal(l) => Some(*l),
            _ => None,
        }
    }
}

/// A memory object a statement reads or writes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Mem {
    /// Buffer parameter `n` (global memory).
    Buffer(u32),
    /// Local-memory array `n` ([`Function::locals`]).
    Local(u32),
    /// Private variable or array `n` ([`Function::privates`]).
    Private(u32),
    /// Field view `n` ([`Function::fields`]): one scalar or vector field of every element of a
    /// buffer of structs, indexed by the element's index.
    Field(u32),
}

/// A user-defined struct that buffers hold (`#[derive(Element)]`): its C layout, the same as
/// Rust's `#[repr(C)]` one. Offsets and sizes are in bytes.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct StructDecl {
    /// The name (a C identifier), unique in a kernel.
    pub name: String,
    /// `size_of` the struct (a multiple of `align`).
    pub size: u32,
    /// `align_of` the struct.
    pub align: u32,
    /// The fields, in declaration order.
    pub fields: Vec<FieldDecl>,
}

/// One field of a [`StructDecl`].
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FieldDecl {
    /// The name (a C identifier).
    pub name: String,
    /// Byte offset from the start of the struct.
    pub offset: u32,
    /// What it holds.
    pub ty: Elem,
    /// `Some(n)` for a fixed array of `n` of `ty`.
    pub len: Option<u32>,
}

/// What a buffer element or struct field is: a scalar or vector, or a struct
/// ([`Function::structs`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Elem {
    /// A scalar or vector.
    Value(Type),
    /// Struct `n` of [`Function::structs`].
    Struct(u32),
}

impl Elem {
    /// The scalar or vector type, if the element is not a struct.
    pub fn value(self) -> Option<Type> {
        match self {
            Elem::Value(t) => Some(t),
            Elem::Struct(_) => None,
        }
    }
}

/// One step of a [`FieldView`]'s path into a struct.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FieldStep {
    /// Field `n` of the struct reached so far.
    Field(u32),
    /// Element `n` of the fixed array (or component `n` of the vector) reached so far.
    Elem(u32),
}

/// A field of a buffer of structs seen as memory of its own ([`Mem::Field`]): element `i` of
/// the view is the field of element `i` of the buffer. Loads, stores and atomics address it
/// like any memory; its bounds are the buffer's.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FieldView {
    /// The buffer parameter.
    pub buffer: u32,
    /// The path from the buffer's element to the field (never empty).
    pub path: Vec<FieldStep>,
    /// The field's type (a scalar or vector, never a struct).
    pub ty: Type,
    /// Byte offset of the field in the element (computed from the path).
    pub offset: u32,
}

/// Memory-ordering scope of a barrier or fence.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Fence {
    /// Orders accesses to local memory.
    pub local: bool,
    /// Orders accesses to global memory.
    pub global: bool,
}

/// The memory order of an atomic operation or a fence, as in C++ and OpenCL 2.0: what the
/// work-item's other memory accesses may not be reordered across.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MemOrder {
    /// Only the atomicity of the operation itself.
    Relaxed,
    /// Later accesses stay after it (loads and read-modify-writes).
    Acquire,
    /// Earlier accesses stay before it (read-modify-writes).
    Release,
    /// Both (read-modify-writes and fences).
    AcqRel,
    /// Both, and one total order of all `SeqCst` operations.
    SeqCst,
}

impl MemOrder {
    /// Name used by the text form.
    pub fn name(self) -> &'static str {
        match self {
            MemOrder::Relaxed => "relaxed",
            MemOrder::Acquire => "acquire",
            MemOrder::Release => "release",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::SeqCst => "seq_cst",
        }
    }

    /// Whether earlier accesses must stay before the operation (release, acq_rel, seq_cst).
    pub fn releases(self) -> bool {
        matches!(
            self,
            MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }

    /// Whether later accesses must stay after the operation (acquire, acq_rel, seq_cst).
    pub fn acquires(self) -> bool {
        matches!(
            self,
            MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }
}

/// Which work-items an atomic operation or fence orders memory with.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MemScope {
    /// The work-items of the work-group.
    WorkGroup,
    /// Every work-item of the launch (and the device's other launches).
    Device,
}

impl MemScope {
    /// Name used by the text form.
    pub fn name(self) -> &'static str {
        match self {
            MemScope::WorkGroup => "work_group",
            MemScope::Device => "device",
        }
    }
}

/// The memory order and scope of an atomic operation or a fence.
///
/// Backends implement an order at least as strong as the one asked for: OpenCL C 1.2 has no
/// ordered atomics, so a relaxed atomic gets a `mem_fence` (of local and global memory) before
/// it when it releases and after it when it acquires; CUDA does the same with
/// `__threadfence_block()` (work-group scope) or `__threadfence()` (device scope), which are
/// sequentially consistent fences; the CPU backends make every atomic and fence sequentially
/// consistent. A program that is correct under the order it asks for is correct on all of them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct AtomicOrder {
    /// The order.
    pub order: MemOrder,
    /// The scope.
    pub scope: MemScope,
}

impl AtomicOrder {
    /// Relaxed, device scope: what atomics without an order are.
    pub const RELAXED: AtomicOrder = AtomicOrder {
        order: MemOrder::Relaxed,
        scope: MemScope::Device,
    };
}

impl fmt::Display for AtomicOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.order.name(), self.scope.name())
    }
}

/// Read-modify-write atomic operations. Each returns the old value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AtomicOp {
    /// `old + v` (integers wrap; `f32`/`f64` add is allowed)
    Add,
    /// `old - v`
    Sub,
    /// `min(old, v)`
    Min,
    /// `max(old, v)`
    Max,
    /// `old & v`
    And,
    /// `old | v`
    Or,
    /// `old ^ v`
    Xor,
    /// `v`
    Exchange,
    /// `if old == compare { v } else { old }`
    CompareExchange,
}

impl AtomicOp {
    /// Name used by the text form.
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Sub => "atomic_sub",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Max => "atomic_max",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
            AtomicOp::Exchange => "atomic_xchg",
            AtomicOp::CompareExchange => "atomic_cmpxchg",
        }
    }
}

/// Collective operations of a work-group or of a sub-group (see [`GroupScope`]). Every
/// work-item of the work-group must reach them together (like a barrier), sub-group
/// operations included. Scans run in local-linear-id order (lane order in a sub-group).
///
/// **Results.** A reduction or scan is defined as the fold, from the operation's identity
/// (`0`, the type's greatest value for `min`, its least for `max`; `±inf` for floats), over the
/// operands of the work-items concerned (those of the work-group, or of the sub-group): the
/// reduction over all of them, the inclusive scan of work-item `l` over work-items `0..=l`, the
/// exclusive scan over `0..l` (the identity for the first). Backends may combine
/// the operands in any order and grouping (the CPU backend and OpenCL fold in local-id order,
/// CUDA combines warp shuffles in a tree), which changes nothing for the
/// exact operations: integer `add` (wrapping), `min` and `max`, `any`, `all`, and float `min`
/// and `max` (NaN operands are dropped; an all-NaN fold gives the identity; only the sign of a
/// zero result may differ when both zeros occur, as for `min`/`max` themselves). **Float
/// `add` is the one inexact case:** the result is the sum in *some* association order, so it
/// may differ between backends (and between launch shapes) by rounding, within the bound of
/// any summation order: `|result - exact| <= gamma(k) * sum(|x|)` over the `k + 1` operands,
/// `gamma(k) = k u / (1 - k u)`, `u` the unit roundoff (`2^-24` for `f32`, `2^-53` for
/// `f64`), plus what flushing subnormal operands to zero changes. The conformance suite and
/// the differential tests hold every backend to exactly this rule. A result that must be
/// reproducible bit for bit should reduce integers (or fixed-point values), or use the patterns
/// layer's `reduce` with a user operator, which combines in index order with a grouping fixed
/// by its staging.
///
/// **Data movement** (broadcast, the shuffles) takes any type, vectors included, and is exact.
/// The shuffles and `Ballot` exist for sub-groups only.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GroupOp {
    /// Sum over the group (integers wrap; floats in some association order).
    ReduceAdd,
    /// Minimum over the group.
    ReduceMin,
    /// Maximum over the group.
    ReduceMax,
    /// Sum of the values of work-items `0..=self` (floats in some association order).
    ScanInclusiveAdd,
    /// Sum of the values of work-items `0..self` (0 for the first; floats in some association
    /// order).
    ScanExclusiveAdd,
    /// Minimum over work-items `0..=self`.
    ScanInclusiveMin,
    /// Maximum over work-items `0..=self`.
    ScanInclusiveMax,
    /// Minimum over work-items `0..self` (the type's greatest value, `+inf` for floats, for
    /// the first).
    ScanExclusiveMin,
    /// Maximum over work-items `0..self` (the type's least value, `-inf` for floats, for the
    /// first).
    ScanExclusiveMax,
    /// The value of the work-item whose local linear id (lane, in a sub-group) is the second
    /// operand. A source outside the group is an error on the CPU backends and an unspecified
    /// value on the others.
    Broadcast,
    /// `true` if the value is `true` in any work-item.
    Any,
    /// `true` if the value is `true` in every work-item.
    All,
    /// Sub-groups only: the value of lane `source` (the second operand); the work-item's own
    /// value when `source` is not a lane of the sub-group.
    Shuffle,
    /// Sub-groups only: the value of lane `lane ^ mask` (the second operand is the mask); the
    /// own value when that is not a lane of the sub-group.
    ShuffleXor,
    /// Sub-groups only: the value of lane `lane - delta` (the second operand is the delta);
    /// the own value when that is below 0.
    ShuffleUp,
    /// Sub-groups only: the value of lane `lane + delta`; the own value when that is not a
    /// lane of the sub-group.
    ShuffleDown,
    /// Sub-groups only: a `u32` whose bit `l` is the `bool` operand of lane `l` (bits of lanes
    /// the sub-group does not have are 0).
    Ballot,
}

/// Which work-items a collective ([`Stmt::Group`]) spans.
///
/// **Sub-groups.** A work-group is cut into sub-groups of consecutive local linear ids: the
/// device's sub-group size `S` ([`Builtin::MaxSubGroupSize`], at most 32, reported as the
/// runtime's `DeviceInfo::sub_group_size`), the last one smaller when the work-group's size is
/// not a multiple of `S`. Sub-group `g` holds the work-items `g*S .. min((g+1)*S, size)`; a
/// work-item's lane is its index in its sub-group. On CUDA a sub-group is a warp; OpenCL
/// (without native sub-groups) and the CPU backends compute the same thing in local memory
/// or in runs of consecutive lanes. Results are the same on every backend of the same `S`.
/// Like a work-group collective, a sub-group collective must be reached by every work-item of
/// the work-group (the rule OpenCL devices without sub-groups need; the CPU backends check it).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GroupScope {
    /// The whole work-group.
    WorkGroup,
    /// The work-item's sub-group.
    SubGroup,
}

macro_rules! group_op_names {
    ($($op:ident => $name:literal),* $(,)?) => {
        impl GroupOp {
            /// Every operation.
            pub const ALL: [GroupOp; 17] = [$(GroupOp::$op),*];

            /// Name used by the text form and the builder: `group_` or `sub_group_` and the
            /// operation (`sub_group_reduce_add`).
            pub fn name(self, scope: GroupScope) -> &'static str {
                match (scope, self) {
                    $(
                        (GroupScope::WorkGroup, GroupOp::$op) => concat!("group_", $name),
                        (GroupScope::SubGroup, GroupOp::$op) => concat!("sub_group_", $name),
                    )*
                }
            }
        }
    };
}

group_op_names! {
    ReduceAdd => "reduce_add",
    ReduceMin => "reduce_min",
    ReduceMax => "reduce_max",
    ScanInclusiveAdd => "scan_inclusive_add",
    ScanExclusiveAdd => "scan_exclusive_add",
    ScanInclusiveMin => "scan_inclusive_min",
    ScanInclusiveMax => "scan_inclusive_max",
    ScanExclusiveMin => "scan_exclusive_min",
    ScanExclusiveMax => "scan_exclusive_max",
    Broadcast => "broadcast",
    Any => "any",
    All => "all",
    Shuffle => "shuffle",
    ShuffleXor => "shuffle_xor",
    ShuffleUp => "shuffle_up",
    ShuffleDown => "shuffle_down",
    Ballot => "ballot",
}

impl GroupOp {
    /// Whether the operation takes a second operand, a `u32` ([`Stmt::Group`]'s `source`):
    /// broadcast and the shuffles.
    pub fn takes_source(self) -> bool {
        matches!(
            self,
            GroupOp::Broadcast
                | GroupOp::Shuffle
                | GroupOp::ShuffleXor
                | GroupOp::ShuffleUp
                | GroupOp::ShuffleDown
        )
    }

    /// Whether the operation exists for sub-groups only (the shuffles and ballot).
    pub fn sub_group_only(self) -> bool {
        (self.takes_source() && self != GroupOp::Broadcast) || self == GroupOp::Ballot
    }

    /// Whether the operation is a reduction or a scan (a fold with an identity).
    pub fn is_fold(self) -> bool {
        matches!(
            self,
            GroupOp::ReduceAdd
                | GroupOp::ReduceMin
                | GroupOp::ReduceMax
                | GroupOp::ScanInclusiveAdd
                | GroupOp::ScanExclusiveAdd
                | GroupOp::ScanInclusiveMin
                | GroupOp::ScanInclusiveMax
                | GroupOp::ScanExclusiveMin
                | GroupOp::ScanExclusiveMax
        )
    }

    /// Whether the operation is a reduction (every work-item gets the same fold).
    pub fn is_reduce(self) -> bool {
        matches!(
            self,
            GroupOp::ReduceAdd | GroupOp::ReduceMin | GroupOp::ReduceMax
        )
    }

    /// Whether the operation is an exclusive scan.
    pub fn is_exclusive(self) -> bool {
        matches!(
            self,
            GroupOp::ScanExclusiveAdd | GroupOp::ScanExclusiveMin | GroupOp::ScanExclusiveMax
        )
    }

    /// The result type for an operand of type `arg` (`u32` for ballot, `arg` otherwise).
    pub fn result_type(self, arg: Type) -> Type {
        if self == GroupOp::Ballot {
            Type::U32
        } else {
            arg
        }
    }
}

/// A sequence of statements.
pub type Block = Vec<Stmt>;

/// Where in the user's source a statement was recorded: the caller of the builder function
/// (`#[track_caller]`), which is a line of the kernel closure, or of the `#[kernel]` function
/// (the macro gives its calls the user's spans); [`SourceLoc::NONE`] for IR written by hand.
/// Error messages of kernel faults name it.
///
/// A location is not part of what a kernel computes: any two compare equal, and their `Debug`
/// form is the same, so the same kernel recorded at two places has one
/// [`Function::fingerprint`] and is compiled once per device.
#[derive(Clone, Copy, Default)]
pub struct SourceLoc(pub Option<&'static std::panic::Location<'static>>);

impl SourceLoc {
    /// No location.
    pub const NONE: SourceLoc = SourceLoc(None);

    /// The caller of the function calling this (`#[track_caller]` all the way up).
    #[track_caller]
    pub fn caller() -> SourceLoc {
        SourceLoc(Some(std::panic::Location::caller()))
    }

    /// The line, if known.
    pub fn line(self) -> Option<u32> {
        self.0.map(|l| l.line())
    }

    /// The file, if known.
    pub fn file(self) -> Option<&'static str> {
        self.0.map(|l| l.file())
    }
}

impl PartialEq for SourceLoc {
    fn eq(&self, _: &SourceLoc) -> bool {
        true
    }
}

impl Eq for SourceLoc {}

impl fmt::Debug for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("_")
    }
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(l) => write!(f, "{}:{}:{}", l.file(), l.line(), l.column()),
            None => f.write_str("(unknown)"),
        }
    }
}

/// `, line FILE:LINE:COLUMN`, or nothing for an unknown location: the suffix error messages
/// put after the work-item.
pub fn source_suffix(at: SourceLoc) -> String {
    match at.0 {
        Some(_) => format!(", line {at}"),
        None => String::new(),
    }
}

/// A statement.
#[derive(Clone, PartialEq, Debug)]
pub enum Stmt {
    /// Defines `value` as the current value of a pure expression.
    Let {
        /// The value defined.
        value: ValueId,
        /// Its expression.
        expr: ExprId,
    },
    /// Defines `value` as element `index` of `mem`.
    Load {
        /// The value defined.
        value: ValueId,
        /// The memory read.
        mem: Mem,
        /// Element index (any integer type; negative is out of bounds).
        index: ExprId,
        /// Where the user's code recorded it ([`SourceLoc`]).
        at: SourceLoc,
    },
    /// Writes `value` to element `index` of `mem`.
    Store {
        /// The memory written.
        mem: Mem,
        /// Element index.
        index: ExprId,
        /// The value stored (of the element type).
        value: ExprId,
        /// Where the user's code recorded it ([`SourceLoc`]).
        at: SourceLoc,
    },
    /// An atomic read-modify-write of element `index` of a buffer or local array; `result`, if
    /// present, receives the old value.
    Atomic {
        /// Receives the old value.
        result: Option<ValueId>,
        /// The memory.
        mem: Mem,
        /// Element index.
        index: ExprId,
        /// The operation.
        op: AtomicOp,
        /// The operand.
        operand: ExprId,
        /// The expected value of a compare-exchange.
        compare: Option<ExprId>,
        /// Memory order and scope.
        order: AtomicOrder,
        /// Where the user's code recorded it ([`SourceLoc`]).
        at: SourceLoc,
    },
    /// Defines `value` as element `index` of a buffer or local array, read atomically: the
    /// read is never torn and never served from a stale copy, so a loop that polls a word
    /// another work-group writes with an [`Stmt::Atomic`] eventually sees the new value (a
    /// plain [`Stmt::Load`] in such a loop may be hoisted out of it by a C compiler). It
    /// orders other accesses as its `order` says (relaxed, acquire or seq_cst). 32- and 64-bit
    /// integers, in `read_write` buffers or local memory, like the read-modify-write atomics.
    AtomicLoad {
        /// The value defined.
        value: ValueId,
        /// The memory read.
        mem: Mem,
        /// Element index.
        index: ExprId,
        /// Memory order (relaxed or acquire or seq_cst) and scope.
        order: AtomicOrder,
        /// Where the user's code recorded it ([`SourceLoc`]).
        at: SourceLoc,
    },
    /// Conditional execution.
    If {
        /// A scalar `bool`.
        cond: ExprId,
        /// Runs when `cond` is true.
        then: Block,
        /// Runs when `cond` is false.
        otherwise: Block,
    },
    /// A counted loop: `var` runs from `start` while `var < end` (or `var > end` when `step` is
    /// negative), adding `step` after each iteration (wrapping). `var` is read-only in `body`.
    For {
        /// The loop's id.
        id: LoopId,
        /// The counter.
        var: ValueId,
        /// First value.
        start: ExprId,
        /// Bound, exclusive.
        end: ExprId,
        /// Increment; a zero step is an error.
        step: ExprId,
        /// The body.
        body: Block,
    },
    /// A loop that runs until a `break`.
    Loop {
        /// The loop's id.
        id: LoopId,
        /// The body.
        body: Block,
    },
    /// Leaves loop `id` (which encloses this statement).
    Break(LoopId),
    /// Ends the current iteration of loop `id`.
    Continue(LoopId),
    /// Ends the work-item.
    Return,
    /// Waits until every work-item of the work-group reaches this barrier, ordering memory as
    /// given.
    Barrier(Fence),
    /// Orders this work-item's accesses to the memory `spaces` name, with the order (not
    /// relaxed) and scope given.
    MemFence {
        /// The address spaces ordered.
        spaces: Fence,
        /// Order and scope.
        order: AtomicOrder,
    },
    /// A collective of the work-group or of the sub-group; `value` receives the result.
    Group {
        /// Receives the result.
        value: ValueId,
        /// The operation.
        op: GroupOp,
        /// Which work-items it spans.
        scope: GroupScope,
        /// The work-item's contribution.
        arg: ExprId,
        /// For broadcast, the source's local linear id (its lane, in a sub-group); for the
        /// shuffles, the lane, mask or delta ([`GroupOp::takes_source`]).
        source: Option<ExprId>,
    },
}

/// A kernel parameter.
#[derive(Clone, PartialEq, Debug)]
pub struct Param {
    /// Name, carried into generated code.
    pub name: String,
    /// What the parameter is.
    pub kind: ParamKind,
}

/// What a kernel parameter is.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum ParamKind {
    /// A buffer of elements in global memory.
    Buffer {
        /// Element type: a scalar or vector, or a struct whose fields are accessed through
        /// [`Mem::Field`] views.
        elem: Elem,
        /// How the kernel uses it.
        access: Access,
        /// If set, the launch checks that the buffer has exactly this many elements.
        len: Option<u64>,
    },
    /// A scalar passed by value.
    Scalar(Type),
    /// The element count of a local-memory array whose size is chosen at launch.
    LocalLen,
}

/// The length of a local-memory array.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ArrayLen {
    /// Fixed when the kernel is built.
    Fixed(u32),
    /// Given at launch through [`ParamKind::LocalLen`] parameter `n`.
    Param(u32),
}

/// A local-memory (work-group shared) array.
#[derive(Clone, PartialEq, Debug)]
pub struct LocalDecl {
    /// Name.
    pub name: String,
    /// Element type.
    pub elem: Type,
    /// Number of elements.
    pub len: ArrayLen,
}

/// A private variable (`len == None`) or private array.
#[derive(Clone, PartialEq, Debug)]
pub struct PrivateDecl {
    /// Name.
    pub name: String,
    /// Element type.
    pub elem: Type,
    /// `None` for a variable, the element count for an array.
    pub len: Option<u32>,
}

impl PrivateDecl {
    /// Number of elements (1 for a variable).
    pub fn count(&self) -> u32 {
        self.len.unwrap_or(1)
    }
}

/// A value's declaration: its type and, where the user gave one, its name.
#[derive(Clone, PartialEq, Debug)]
pub struct ValueDecl {
    /// Name from the user's code, if known.
    pub name: Option<String>,
    /// Type.
    pub ty: Type,
}

/// One kernel.
#[derive(Clone, Debug)]
pub struct Function {
    /// Kernel name (a C identifier).
    pub name: String,
    /// Parameters in launch order.
    pub params: Vec<Param>,
    /// Pure expressions.
    pub exprs: ExprArena,
    /// Values defined by statements.
    pub values: Vec<ValueDecl>,
    /// Local-memory arrays.
    pub locals: Vec<LocalDecl>,
    /// Private variables and arrays.
    pub privates: Vec<PrivateDecl>,
    /// Number of loop ids used.
    pub loop_count: u32,
    /// Stub functions the kernel calls.
    pub stubs: Vec<StubDecl>,
    /// Structs held by buffers, nested structs before the structs holding them.
    pub structs: Vec<StructDecl>,
    /// Field views of buffers of structs ([`Mem::Field`]).
    pub fields: Vec<FieldView>,
    /// The body.
    pub body: Block,
    /// The parameters that the launch fills in, with what each holds (the launch ABI: see
    /// [`abi`]); the others the caller passes.
    pub hidden: Vec<HiddenParam>,
}

impl Function {
    /// An empty kernel called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Function {
            name: name.into(),
            params: Vec::new(),
            exprs: ExprArena::new(),
            values: Vec::new(),
            locals: Vec::new(),
            privates: Vec::new(),
            loop_count: 0,
            stubs: Vec::new(),
            structs: Vec::new(),
            fields: Vec::new(),
            body: Vec::new(),
            hidden: Vec::new(),
        }
    }

    /// Declares a new value of type `ty`.
    pub fn new_value(&mut self, ty: Type, name: Option<String>) -> ValueId {
        self.values.push(ValueDecl { name, ty });
        ValueId(self.values.len() as u32 - 1)
    }

    /// The element type of a memory object (`None` for a buffer of structs, which is accessed
    /// through its field views).
    pub fn mem_elem(&self, mem: Mem) -> Option<Type> {
        match mem {
            Mem::Buffer(p) => match self.params.get(p as usize)?.kind {
                ParamKind::Buffer { elem, .. } => elem.value(),
                _ => None,
            },
            Mem::Local(l) => self.locals.get(l as usize).map(|d| d.elem),
            Mem::Private(v) => self.privates.get(v as usize).map(|d| d.elem),
            Mem::Field(v) => self.fields.get(v as usize).map(|d| d.ty),
        }
    }

    /// The buffer parameter behind a buffer or a field view.
    pub fn mem_buffer(&self, mem: Mem) -> Option<u32> {
        match mem {
            Mem::Buffer(p) => Some(p),
            Mem::Field(v) => self.fields.get(v as usize).map(|d| d.buffer),
            Mem::Local(_) | Mem::Private(_) => None,
        }
    }

    /// The size in bytes of one element of a buffer (a struct's size for a buffer of
    /// structs), or `None` when `param` is not a buffer.
    pub fn buffer_elem_size(&self, param: u32) -> Option<usize> {
        match self.params.get(param as usize)?.kind {
            ParamKind::Buffer { elem, .. } => Some(self.elem_size(elem)),
            _ => None,
        }
    }

    /// The size in bytes of an element.
    pub fn elem_size(&self, elem: Elem) -> usize {
        match elem {
            Elem::Value(t) => t.size(),
            Elem::Struct(s) => self.structs.get(s as usize).map_or(0, |d| d.size as usize),
        }
    }

    /// The name of an element type (`f32`, `[f32; 3]`, a struct's name).
    pub fn elem_name(&self, elem: Elem) -> String {
        match elem {
            Elem::Value(t) => t.to_string(),
            Elem::Struct(s) => self
                .structs
                .get(s as usize)
                .map_or(format!("struct{s}"), |d| d.name.clone()),
        }
    }

    /// Where a field view's path leads from a buffer element of struct `root`: its type and
    /// byte offset, or why the path is invalid.
    pub fn resolve_path(&self, root: u32, path: &[FieldStep]) -> Result<(Type, u32), String> {
        let mut at = (Elem::Struct(root), None::<u32>);
        let mut offset = 0u32;
        for step in path {
            at = match (at, *step) {
                ((Elem::Struct(s), None), FieldStep::Field(i)) => {
                    let d = self
                        .structs
                        .get(s as usize)
                        .ok_or_else(|| format!("struct {s} is not declared"))?;
                    let f = d
                        .fields
                        .get(i as usize)
                        .ok_or_else(|| format!("struct `{}` has no field {i}", d.name))?;
                    offset += f.offset;
                    (f.ty, f.len)
                }
                ((e, Some(n)), FieldStep::Elem(k)) if k < n => {
                    offset += k * self.elem_size(e) as u32;
                    (e, None)
                }
                ((Elem::Value(t), None), FieldStep::Elem(k))
                    if t.width > 1 && k < t.width as u32 =>
                {
                    offset += k * t.scalar.size() as u32;
                    (Elem::Value(Type::scalar(t.scalar)), None)
                }
                (_, step) => return Err(format!("the step {step:?} does not apply here")),
            };
        }
        match at {
            (Elem::Value(t), None) => Ok((t, offset)),
            _ => Err("the path ends at a struct or an array, not at a scalar or vector".into()),
        }
    }

    /// A field view of buffer `buffer` at `path` (an existing one when the same view was made
    /// before).
    pub fn field_view(&mut self, buffer: u32, path: Vec<FieldStep>) -> Result<Mem, String> {
        let root = match self.params.get(buffer as usize).map(|p| p.kind) {
            Some(ParamKind::Buffer {
                elem: Elem::Struct(s),
                ..
            }) => s,
            _ => return Err(format!("parameter {buffer} is not a buffer of structs")),
        };
        let (ty, offset) = self.resolve_path(root, &path)?;
        if let Some(i) = self
            .fields
            .iter()
            .position(|v| v.buffer == buffer && v.path == path)
        {
            return Ok(Mem::Field(i as u32));
        }
        self.fields.push(FieldView {
            buffer,
            path,
            ty,
            offset,
        });
        Ok(Mem::Field(self.fields.len() as u32 - 1))
    }

    /// A readable name for a memory object.
    pub fn mem_name(&self, mem: Mem) -> String {
        match mem {
            Mem::Buffer(p) => self
                .params
                .get(p as usize)
                .map_or(format!("param{p}"), |d| d.name.clone()),
            Mem::Local(l) => self
                .locals
                .get(l as usize)
                .map_or(format!("local{l}"), |d| d.name.clone()),
            Mem::Private(v) => self
                .privates
                .get(v as usize)
                .map_or(format!("private{v}"), |d| d.name.clone()),
            Mem::Field(v) => match self.fields.get(v as usize) {
                Some(d) => {
                    let mut name = self.mem_name(Mem::Buffer(d.buffer));
                    name.push_str("[]");
                    name.push_str(&self.path_suffix(d));
                    name
                }
                None => format!("field{v}"),
            },
        }
    }

    /// A field view's path as C spells it after the element: `.vel`, `.pos[2]`, `.a.b[1]`.
    pub fn path_suffix(&self, view: &FieldView) -> String {
        self.path_suffix_named(view, |n| n.to_string())
    }

    /// [`path_suffix`](Self::path_suffix) with each field's name as `name` spells it (the C
    /// writer's escaping of reserved words).
    pub fn path_suffix_named(&self, view: &FieldView, name: impl Fn(&str) -> String) -> String {
        let mut out = String::new();
        let Some(ParamKind::Buffer {
            elem: Elem::Struct(mut s),
            ..
        }) = self.params.get(view.buffer as usize).map(|p| p.kind)
        else {
            return out;
        };
        for step in &view.path {
            match *step {
                FieldStep::Field(i) => {
                    let Some(f) = self
                        .structs
                        .get(s as usize)
                        .and_then(|d| d.fields.get(i as usize))
                    else {
                        return out;
                    };
                    out.push('.');
                    out.push_str(&name(&f.name));
                    if let Elem::Struct(n) = f.ty {
                        s = n;
                    }
                }
                FieldStep::Elem(k) => out.push_str(&format!("[{k}]")),
            }
        }
        out
    }
}

/// The CPU body of a stub function: scalar arguments in, scalar result out.
pub type StubCpuBody = std::sync::Arc<dyn Fn(&[Literal]) -> Literal + Send + Sync>;

/// A helper function whose body is target source (Concurnas' `GPUStubFunction`): a pure
/// function of scalars, with one body per dialect (`opencl`, `cuda`) and optionally a Rust body
/// for the CPU backend. A backend without a body for itself rejects the kernel with a clear
/// error. Stubs are identified by name and sources: two stubs of one name in one kernel must
/// be the same.
#[derive(Clone)]
pub struct StubDecl {
    /// The function's name in the sources (a C identifier).
    pub name: String,
    /// Parameter types (scalars).
    pub params: Vec<Type>,
    /// Result type (a scalar).
    pub ret: Type,
    /// Source per dialect key (`opencl`, `cuda`): a complete function definition.
    pub sources: Vec<(String, String)>,
    /// The body on the CPU backend.
    pub cpu: Option<StubCpuBody>,
}

impl StubDecl {
    /// The source for a dialect, if any.
    pub fn source(&self, dialect: &str) -> Option<&str> {
        self.sources
            .iter()
            .find(|(d, _)| d == dialect)
            .map(|(_, s)| s.as_str())
    }
}

impl std::fmt::Debug for StubDecl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StubDecl")
            .field("name", &self.name)
            .field("params", &self.params)
            .field("ret", &self.ret)
            .field("sources", &self.sources)
            .field("cpu", &self.cpu.is_some())
            .finish()
    }
}

impl Function {
    /// A 128-bit fingerprint of the whole function (name, parameters, every expression of the
    /// arena in order with its literals' bits, values, declarations, stubs with their sources
    /// and the identity of their CPU bodies, the statement tree, and the hidden parameters
    /// with their roles, a custom gather's combining function by its fingerprint), linear in
    /// its size.
    /// Equal functions have equal fingerprints; the device kernel caches key on it. (The IR
    /// text is no key: it prints shared sub-expressions once per use, which grows
    /// exponentially with chains of `select`s that each use the previous one twice.)
    pub fn fingerprint(&self) -> u128 {
        use std::hash::{Hash, Hasher};
        // The parts without `Hash`; their `Debug` form is linear (it names expressions by id).
        let rest = format!(
            "{:?}{:?}{:?}{:?}{}{:?}{:?}",
            self.params,
            self.values,
            self.locals,
            self.privates,
            self.loop_count,
            self.stubs,
            self.body,
        );
        let mut hs = [1u8, 2].map(|salt| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            salt.hash(&mut h);
            h
        });
        // A stub's CPU body is Rust code, known by identity: the same `Stub` (its one `Arc`)
        // is the same body, two stubs of one name with other bodies are other kernels.
        let bodies: Vec<usize> = self
            .stubs
            .iter()
            .map(|s| {
                s.cpu
                    .as_ref()
                    .map_or(0, |b| std::sync::Arc::as_ptr(b) as *const () as usize)
            })
            .collect();
        for h in &mut hs {
            self.name.hash(h);
            self.exprs.exprs.hash(h);
            rest.hash(h);
            bodies.hash(h);
            self.hidden.hash(h);
        }
        (u128::from(hs[0].finish()) << 64) | u128::from(hs[1].finish())
    }
}

impl Function {
    /// A hash of the source locations of the statements ([`SourceLoc`]), which
    /// [`Function::fingerprint`] leaves out: with it, the same kernel recorded at two places
    /// is told apart where its error messages matter (the runtime's cache of built kernels).
    pub fn locations_fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        fn walk(b: &Block, h: &mut impl Hasher) {
            for s in b {
                match s {
                    Stmt::Load { at, .. }
                    | Stmt::Store { at, .. }
                    | Stmt::Atomic { at, .. }
                    | Stmt::AtomicLoad { at, .. } => {
                        at.0.map(|l| (l.file(), l.line(), l.column())).hash(h)
                    }
                    Stmt::If {
                        then, otherwise, ..
                    } => {
                        walk(then, h);
                        walk(otherwise, h);
                    }
                    Stmt::For { body, .. } | Stmt::Loop { body, .. } => walk(body, h),
                    _ => {}
                }
            }
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        walk(&self.body, &mut h);
        h.finish()
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print::function_to_string(self))
    }
}

/// Calls `f` on every statement of `block`, depth first, parents before children.
pub fn walk_block(block: &[Stmt], f: &mut impl FnMut(&Stmt)) {
    for stmt in block {
        f(stmt);
        match stmt {
            Stmt::If {
                then, otherwise, ..
            } => {
                walk_block(then, f);
                walk_block(otherwise, f);
            }
            Stmt::For { body, .. } | Stmt::Loop { body, .. } => walk_block(body, f),
            Stmt::Let { .. }
            | Stmt::Load { .. }
            | Stmt::Store { .. }
            | Stmt::Atomic { .. }
            | Stmt::AtomicLoad { .. }
            | Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::Return
            | Stmt::Barrier(_)
            | Stmt::MemFence { .. }
            | Stmt::Group { .. } => {}
        }
    }
}

/// How many times each expression of `f`'s arena is used: as an operand of another
/// expression (once per occurrence) or of a statement. Operands outside the arena (only in
/// malformed IR) are not counted.
pub fn expr_uses(f: &Function) -> Vec<u32> {
    let mut uses = vec![0u32; f.exprs.len()];
    let mut count = |id: ExprId| {
        if let Some(u) = uses.get_mut(id.0 as usize) {
            *u = u.saturating_add(1);
        }
    };
    for (_, e, _) in f.exprs.iter() {
        expr_operands(e).into_iter().for_each(&mut count);
    }
    walk_block(&f.body, &mut |s| {
        stmt_operands(s).into_iter().for_each(&mut count)
    });
    uses
}

/// The expressions a statement uses directly (not those of nested blocks).
pub fn stmt_operands(stmt: &Stmt) -> Vec<ExprId> {
    match stmt {
        Stmt::Let { expr, .. } => vec![*expr],
        Stmt::Load { index, .. } | Stmt::AtomicLoad { index, .. } => vec![*index],
        Stmt::Store { index, value, .. } => vec![*index, *value],
        Stmt::Atomic {
            index,
            operand,
            compare,
            ..
        } => {
            let mut v = vec![*index, *operand];
            v.extend(compare.iter().copied());
            v
        }
        Stmt::If { cond, .. } => vec![*cond],
        Stmt::For {
            start, end, step, ..
        } => vec![*start, *end, *step],
        Stmt::Group { arg, source, .. } => {
            let mut v = vec![*arg];
            v.extend(source.iter().copied());
            v
        }
        Stmt::Loop { .. }
        | Stmt::Break(_)
        | Stmt::Continue(_)
        | Stmt::Return
        | Stmt::Barrier(_)
        | Stmt::MemFence { .. } => vec![],
    }
}

/// The operands of an expression.
pub fn expr_operands(expr: &Expr) -> Vec<ExprId> {
    match expr {
        Expr::Literal(_)
        | Expr::Param(_)
        | Expr::BufferLen(_)
        | Expr::Value(_)
        | Expr::Builtin(_) => vec![],
        Expr::Unary(_, a)
        | Expr::Cast(a, _)
        | Expr::Bitcast(a, _)
        | Expr::Splat(a, _)
        | Expr::Extract(a, _) => vec![*a],
        Expr::Binary(_, a, b) => vec![*a, *b],
        Expr::Select(c, a, b) => vec![*c, *a, *b],
        Expr::Math(_, args) | Expr::Compose(args) | Expr::Stub(_, args) => args.clone(),
    }
}

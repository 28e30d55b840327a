//! The table of built-in functions ([`MathFn`]): each one's name, arity, typing rule
//! ([`MathKind`]) and accuracy bound, defined once for the evaluator, the validator and the
//! code generators.

use super::Scalar;

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

//! Built-in functions as methods on [`Expr`] (`x.sqrt()`, `x.min(y)`, `v.dot(w)`), vector
//! construction and component access. Every method maps to one [`MathFn`]; the semantics are
//! defined once, in [`crate::ir::eval`].
//!
//! The built-ins that are compositions of others are built here from IR operations, not added
//! to the IR: `frexp`, `modf` and `remquo` (which return tuples), `smoothstep`, `bitselect`,
//! `mul24`, `abs_diff`, `upsample`, the `native_` and `half_` names (the exact functions),
//! `select_each`, and `any`/`all` of a mask.

use super::types::{
    Arith, FloatArith, HasBits, Int32, IntArith, KernelType, Numeric, ScalarType, Upsample,
};
use super::{expr_of, id_of, node, node_typed, Expr};
use crate::ir::{eval, Expr as IrExpr, ExprId, Literal, MathFn, Scalar, Type};

#[track_caller]
fn call<T: KernelType, R: KernelType>(f: MathFn, args: &[Expr<T>]) -> Expr<R> {
    let ids = args.iter().map(|&a| id_of(a)).collect();
    node(IrExpr::Math(f, ids))
}

macro_rules! methods {
    ($bound:ident; $( $(#[$doc:meta])* $name:ident = $f:ident ( $($arg:ident),* ); )*) => {
        impl<T: $bound> Expr<T> {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $name(self $(, $arg: impl Into<Expr<T>>)*) -> Expr<T> {
                    call(MathFn::$f, &[self $(, $arg.into())*])
                }
            )*
        }
    };
}

methods! { Arith;
    /// Smaller of two values (floats: the non-NaN one).
    min = Min(other);
    /// Larger of two values (floats: the non-NaN one).
    max = Max(other);
    /// `self.max(lo).min(hi)`
    clamp = Clamp(lo, hi);
    /// Absolute value (integers wrap: `abs(MIN) == MIN`).
    abs = Abs();
}

methods! { FloatArith;
    /// Square root.
    sqrt = Sqrt();
    /// `1 / sqrt(x)`
    rsqrt = Rsqrt();
    /// Cube root.
    cbrt = Cbrt();
    /// `e^x`
    exp = Exp();
    /// `2^x`
    exp2 = Exp2();
    /// `10^x`
    exp10 = Exp10();
    /// `e^x - 1`
    expm1 = Expm1();
    /// Natural logarithm (OpenCL `log`, Rust `ln`).
    log = Log();
    /// Base-2 logarithm.
    log2 = Log2();
    /// Base-10 logarithm.
    log10 = Log10();
    /// `ln(1 + x)`
    log1p = Log1p();
    /// Sine.
    sin = Sin();
    /// Cosine.
    cos = Cos();
    /// Tangent.
    tan = Tan();
    /// Arc sine.
    asin = Asin();
    /// Arc cosine.
    acos = Acos();
    /// Arc tangent.
    atan = Atan();
    /// Hyperbolic sine.
    sinh = Sinh();
    /// Hyperbolic cosine.
    cosh = Cosh();
    /// Hyperbolic tangent.
    tanh = Tanh();
    /// Inverse hyperbolic sine.
    asinh = Asinh();
    /// Inverse hyperbolic cosine.
    acosh = Acosh();
    /// Inverse hyperbolic tangent.
    atanh = Atanh();
    /// Round down.
    floor = Floor();
    /// Round up.
    ceil = Ceil();
    /// Round half away from zero.
    round = Round();
    /// Round towards zero.
    trunc = Trunc();
    /// `-1`, `0` or `1` (zero keeps its sign; NaN gives 0).
    sign = Sign();
    /// Degrees from radians.
    degrees = Degrees();
    /// Radians from degrees.
    radians = Radians();
    /// `self^y`
    pow = Pow(y);
    /// `atan(self / x)` in the right quadrant (`self` is y).
    atan2 = Atan2(x);
    /// Float remainder with the sign of `self` (C `fmod`).
    fmod = Fmod(y);
    /// `sqrt(self^2 + y^2)`
    hypot = Hypot(y);
    /// Magnitude of `self` with the sign of `y`.
    copysign = Copysign(y);
    /// `self * y + z` rounded once.
    fma = Fma(y, z);
    /// `self + (y - self) * a`
    mix = Mix(y, a);
}

methods! { FloatArith;
    /// The error function.
    erf = Erf();
    /// `1 - erf(x)`, accurate where `erf` is near 1.
    erfc = Erfc();
    /// The gamma function.
    tgamma = Tgamma();
    /// `ln |gamma(x)|`
    lgamma = Lgamma();
    /// `sin(pi x)`, exact at integers and half-integers.
    sinpi = Sinpi();
    /// `cos(pi x)`, exact at integers and half-integers.
    cospi = Cospi();
    /// `tan(pi x)`, exact at integers and quarter-integers.
    tanpi = Tanpi();
    /// `asin(x) / pi`
    asinpi = Asinpi();
    /// `acos(x) / pi`
    acospi = Acospi();
    /// `atan(x) / pi`
    atanpi = Atanpi();
    /// `atan2(self, x) / pi` (`self` is y).
    atan2pi = Atan2pi(x);
    /// Round to the nearest integer, ties to even (Rust `round_ties_even`).
    rint = Rint();
    /// The exponent as a float: `floor(log2 |x|)`, exact (`-inf` at 0).
    logb = Logb();
    /// `x - floor(x)`, below 1 (OpenCL `fract`; the floor is `self.floor()`).
    fract = Fract();
    /// `self - y` where `self > y`, else `+0`.
    fdim = Fdim(y);
    /// The argument of larger magnitude.
    maxmag = Maxmag(y);
    /// The argument of smaller magnitude.
    minmag = Minmag(y);
    /// The next representable value after `self` towards `y`.
    nextafter = Nextafter(y);
    /// IEEE remainder `self - n y`, `n` the integer nearest `self / y` (ties to even); exact.
    remainder = Remainder(y);
    /// `self^y` for `self >= 0` (NaN for a negative base and for `0^0`, `inf^0`, `1^inf`).
    powr = Powr(y);
}

methods! { IntArith;
    /// `self * b + c` computed exactly and saturated to the type's range.
    mad_sat = MadSat(b, c);
}

/// `v` as a literal of component type `s`, converted as the IR converts.
pub(super) fn literal_of(v: f64, s: Scalar) -> Literal {
    eval::fold_cast(Literal::from_bits(Scalar::F64, v.to_bits()), s)
}

/// Literal `l` splatted to `width` components (the literal itself for width 1).
#[track_caller]
pub(super) fn literal_splat(l: Literal, width: u8) -> ExprId {
    let one = id_of(node_typed::<()>(IrExpr::Literal(l), Type::scalar(l.scalar)));
    if width == 1 {
        one
    } else {
        let ty = Type {
            scalar: l.scalar,
            width,
        };
        id_of(node_typed::<()>(IrExpr::Splat(one, width), ty))
    }
}

/// A constant of type `T`: `v` converted to the component type (as the IR converts), splatted
/// for vectors.
#[track_caller]
fn constant<T: KernelType>(v: f64) -> Expr<T> {
    expr_of(literal_splat(literal_of(v, T::TYPE.scalar), T::TYPE.width))
}

/// `mask ? a : b`, component by component.
#[track_caller]
fn sel<T: Arith>(mask: Expr<T::Mask>, a: Expr<T>, b: Expr<T>) -> Expr<T> {
    node(IrExpr::Select(id_of(mask), id_of(a), id_of(b)))
}

/// `mask ? a : b` component by component, for vectors (`mask` is `[bool; N]`) as for scalars
/// (OpenCL's `select` on vectors, with a `bool` mask rather than sign bits).
#[track_caller]
pub fn select_each<T: Arith>(
    mask: impl Into<Expr<T::Mask>>,
    a: impl Into<Expr<T>>,
    b: impl Into<Expr<T>>,
) -> Expr<T> {
    sel(mask.into(), a.into(), b.into())
}

impl<T: FloatArith> Expr<T> {
    #[track_caller]
    fn with_int(self, f: MathFn, n: Expr<T::Int>) -> Expr<T> {
        node(IrExpr::Math(f, vec![id_of(self), id_of(n)]))
    }
    /// `self * 2^n`, exact (rounded once where the result is subnormal).
    #[track_caller]
    pub fn ldexp(self, n: impl Into<Expr<T::Int>>) -> Expr<T> {
        self.with_int(MathFn::Ldexp, n.into())
    }
    /// `self^n` for an integer `n`.
    #[track_caller]
    pub fn pown(self, n: impl Into<Expr<T::Int>>) -> Expr<T> {
        self.with_int(MathFn::Pown, n.into())
    }
    /// `self^(1/n)` for an integer `n` (a negative base only for odd `n`).
    #[track_caller]
    pub fn rootn(self, n: impl Into<Expr<T::Int>>) -> Expr<T> {
        self.with_int(MathFn::Rootn, n.into())
    }
    /// The exponent as an `i32`: `floor(log2 |x|)` (`i32::MIN` at 0, `i32::MAX` for infinities
    /// and NaN).
    #[track_caller]
    pub fn ilogb(self) -> Expr<T::Int> {
        node(IrExpr::Math(MathFn::Ilogb, vec![id_of(self)]))
    }
    /// `(m, e)` with `self == m * 2^e` and `0.5 <= |m| < 1` (OpenCL `frexp`); zeros,
    /// infinities and NaN give `(self, 0)`.
    #[track_caller]
    pub fn frexp(self) -> (Expr<T>, Expr<T::Int>) {
        let special = !self.is_finite() | self.eq(constant::<T>(0.0));
        let e = sel(
            special,
            constant::<T::Int>(0.0),
            self.ilogb() + constant::<T::Int>(1.0),
        );
        (sel(special, self, self.ldexp(-e)), e)
    }
    /// `(fractional, integral)` parts, both with the sign of `self` (C `modf`): `(±0, ±inf)`
    /// for infinities.
    #[track_caller]
    pub fn modf(self) -> (Expr<T>, Expr<T>) {
        let i = self.trunc();
        let f = sel(self.is_inf(), constant::<T>(0.0), self - i).copysign(self);
        (f, i)
    }
    /// `(self.remainder(y), q)` where `q` has the sign of `self / y` and the low 7 bits of the
    /// magnitude of the integer quotient the remainder used (OpenCL `remquo`); `q` is 0 where
    /// the remainder is NaN.
    #[track_caller]
    pub fn remquo(self, y: impl Into<Expr<T>>) -> (Expr<T>, Expr<T::Int>) {
        let y = y.into();
        let (ax, ay) = (self.abs(), y.abs());
        // |x| = K (128 |y|) + m exactly, so the quotient is congruent modulo 128 to the
        // integer j = (m - r) / |y| in 0..=128, which the division finds to far better than 1/2.
        let big = ay * constant::<T>(128.0);
        let m = sel(big.is_finite(), ax.fmod(big), ax);
        let j = ((m - ax.remainder(ay)) / ay).rint().cast::<T::Int>() & constant(127.0);
        let q = sel(self.signbit() ^ y.signbit(), -j, j);
        let r = self.remainder(y);
        (r, sel(r.is_nan(), constant(0.0), q))
    }
    /// `(sin, cos)`.
    #[track_caller]
    pub fn sincos(self) -> (Expr<T>, Expr<T>) {
        (self.sin(), self.cos())
    }
    /// `self * b + c` rounded twice (OpenCL `mad`, at its most accurate).
    #[track_caller]
    pub fn mad(self, b: impl Into<Expr<T>>, c: impl Into<Expr<T>>) -> Expr<T> {
        self * b.into() + c.into()
    }
    /// `0` where `self < edge`, else `1` (OpenCL `step(edge, x)`).
    #[track_caller]
    pub fn step(self, edge: impl Into<Expr<T>>) -> Expr<T> {
        sel(self.lt(edge), constant(0.0), constant(1.0))
    }
    /// Hermite interpolation between 0 at `e0` and 1 at `e1`: `t * t * (3 - 2 t)` with
    /// `t = clamp((self - e0) / (e1 - e0), 0, 1)` (OpenCL `smoothstep(e0, e1, x)`).
    #[track_caller]
    pub fn smoothstep(self, e0: impl Into<Expr<T>>, e1: impl Into<Expr<T>>) -> Expr<T> {
        let e0 = e0.into();
        let t = ((self - e0) / (e1.into() - e0)).clamp(constant::<T>(0.0), constant::<T>(1.0));
        t * t * (constant::<T>(3.0) - constant::<T>(2.0) * t)
    }
    /// `true` where the value is normal (finite, not zero, not subnormal).
    #[track_caller]
    pub fn is_normal(self) -> Expr<T::Mask> {
        let min = match T::TYPE.scalar {
            Scalar::F16 => half::f16::MIN_POSITIVE.to_f64(),
            Scalar::F32 => f32::MIN_POSITIVE as f64,
            _ => f64::MIN_POSITIVE,
        };
        self.is_finite() & self.abs().ge(constant::<T>(min))
    }
    /// `true` where neither value is NaN.
    #[track_caller]
    pub fn is_ordered(self, y: impl Into<Expr<T>>) -> Expr<T::Mask> {
        self.eq(self) & {
            let y = y.into();
            y.eq(y)
        }
    }
    /// `true` where either value is NaN.
    #[track_caller]
    pub fn is_unordered(self, y: impl Into<Expr<T>>) -> Expr<T::Mask> {
        !self.is_ordered(y)
    }
    /// `1 / self` (OpenCL `native_recip`, computed exactly rounded).
    #[track_caller]
    pub fn recip(self) -> Expr<T> {
        constant::<T>(1.0) / self
    }
}

/// OpenCL's `native_` and `half_` variants. Their accuracy is the implementation's choice in
/// OpenCL; strata computes each as the full-precision built-in, so results stay within the
/// full built-in's bound on every backend.
macro_rules! relaxed {
    ($( $native:ident, $half:ident => $full:ident ( $($arg:ident),* ); )*) => {
        impl<T: FloatArith> Expr<T> {
            $(
                #[doc = concat!("OpenCL `", stringify!($native), "`: [`Expr::", stringify!($full), "`].")]
                #[track_caller]
                pub fn $native(self $(, $arg: impl Into<Expr<T>>)*) -> Expr<T> {
                    self.$full($($arg),*)
                }
                #[doc = concat!("OpenCL `", stringify!($half), "`: [`Expr::", stringify!($full), "`].")]
                #[track_caller]
                pub fn $half(self $(, $arg: impl Into<Expr<T>>)*) -> Expr<T> {
                    self.$full($($arg),*)
                }
            )*
        }
    };
}
relaxed! {
    native_sin, half_sin => sin();
    native_cos, half_cos => cos();
    native_tan, half_tan => tan();
    native_exp, half_exp => exp();
    native_exp2, half_exp2 => exp2();
    native_exp10, half_exp10 => exp10();
    native_log, half_log => log();
    native_log2, half_log2 => log2();
    native_log10, half_log10 => log10();
    native_sqrt, half_sqrt => sqrt();
    native_rsqrt, half_rsqrt => rsqrt();
    native_recip, half_recip => recip();
    native_powr, half_powr => powr(y);
}

impl<T: FloatArith> Expr<T> {
    /// OpenCL `native_divide`: `self / y`.
    #[track_caller]
    pub fn native_divide(self, y: impl Into<Expr<T>>) -> Expr<T> {
        self / y.into()
    }
    /// OpenCL `half_divide`: `self / y`.
    #[track_caller]
    pub fn half_divide(self, y: impl Into<Expr<T>>) -> Expr<T> {
        self / y.into()
    }
}

impl<T: HasBits> Expr<T> {
    /// Each bit from `b` where the bit of `mask` is set, else from `self` (OpenCL
    /// `bitselect(self, b, mask)`; floats select their bits).
    #[track_caller]
    pub fn bitselect(self, b: impl Into<Expr<T>>, mask: impl Into<Expr<T>>) -> Expr<T> {
        let bits = |x: Expr<T>| x.bitcast::<T::Bits>();
        let m = bits(mask.into());
        ((bits(self) & !m) | (bits(b.into()) & m)).bitcast::<T>()
    }
}

impl<T: IntArith> Expr<T> {
    /// `self.mul_hi(b) + c` (wrapping).
    #[track_caller]
    pub fn mad_hi(self, b: impl Into<Expr<T>>, c: impl Into<Expr<T>>) -> Expr<T> {
        self.mul_hi(b) + c.into()
    }
    /// Rotate right by `n` modulo the bit width.
    #[track_caller]
    pub fn rotate_right(self, n: impl Into<Expr<T>>) -> Expr<T> {
        self.rotate(constant::<T>(0.0) - n.into())
    }
    /// `|self - y|` as the unsigned type of the same size, without overflow.
    #[track_caller]
    pub fn abs_diff(self, y: impl Into<Expr<T>>) -> Expr<T::Unsigned> {
        let y = y.into();
        let (ux, uy) = (self.bitcast::<T::Unsigned>(), y.bitcast::<T::Unsigned>());
        sel(self.gt(y), ux - uy, uy - ux)
    }
}

impl<T: Int32> Expr<T> {
    /// The product of the low 24 bits of each (sign-extended for `i32`), wrapping: OpenCL
    /// `mul24` and CUDA `__mul24` where the inputs fit in 24 bits, and defined beyond.
    #[track_caller]
    pub fn mul24(self, y: impl Into<Expr<T>>) -> Expr<T> {
        let low24 = |x: Expr<T>| (x << constant::<T>(8.0)) >> constant::<T>(8.0);
        low24(self) * low24(y.into())
    }
    /// `self.mul24(y) + z` (wrapping).
    #[track_caller]
    pub fn mad24(self, y: impl Into<Expr<T>>, z: impl Into<Expr<T>>) -> Expr<T> {
        self.mul24(y) + z.into()
    }
}

impl<T: Upsample> Expr<T> {
    /// `self` as the high half and `lo` as the low half of the type twice as wide (OpenCL
    /// `upsample(hi, lo)`).
    #[track_caller]
    pub fn upsample(self, lo: impl Into<Expr<T::Unsigned>>) -> Expr<T::Wide> {
        let bits = 8.0 * T::TYPE.scalar.size() as f64;
        (self.cast::<T::Wide>() << constant::<T::Wide>(bits)) | lo.into().cast::<T::Wide>()
    }
}

impl<const N: usize> Expr<[bool; N]>
where
    [bool; N]: KernelType,
{
    /// `true` where any component is (OpenCL `any`).
    #[track_caller]
    pub fn any(self) -> Expr<bool> {
        let a = id_of(self);
        (0..N as u8)
            .map(|i| node::<bool>(IrExpr::Extract(a, i)))
            .reduce(|x, y| x | y)
            .expect("vectors have components")
    }
    /// `true` where every component is (OpenCL `all`).
    #[track_caller]
    pub fn all(self) -> Expr<bool> {
        let a = id_of(self);
        (0..N as u8)
            .map(|i| node::<bool>(IrExpr::Extract(a, i)))
            .reduce(|x, y| x & y)
            .expect("vectors have components")
    }
}

methods! { IntArith;
    /// Leading zero bits.
    clz = Clz();
    /// Set bits.
    popcount = Popcount();
    /// Rotate left by `n` modulo the bit width.
    rotate = Rotate(n);
    /// High half of the full product.
    mul_hi = MulHi(y);
    /// Saturating add.
    add_sat = AddSat(y);
    /// Saturating subtract.
    sub_sat = SubSat(y);
    /// `(self + y) >> 1` without overflow.
    hadd = Hadd(y);
    /// `(self + y + 1) >> 1` without overflow.
    rhadd = Rhadd(y);
}

impl<T: FloatArith> Expr<T> {
    #[track_caller]
    fn test(self, f: MathFn) -> Expr<T::Mask> {
        call(f, &[self])
    }
    /// `true` where the value is NaN.
    #[track_caller]
    pub fn is_nan(self) -> Expr<T::Mask> {
        self.test(MathFn::IsNan)
    }
    /// `true` where the value is infinite.
    #[track_caller]
    pub fn is_inf(self) -> Expr<T::Mask> {
        self.test(MathFn::IsInf)
    }
    /// `true` where the value is neither NaN nor infinite.
    #[track_caller]
    pub fn is_finite(self) -> Expr<T::Mask> {
        self.test(MathFn::IsFinite)
    }
    /// `true` where the sign bit is set.
    #[track_caller]
    pub fn signbit(self) -> Expr<T::Mask> {
        self.test(MathFn::Signbit)
    }
}

impl<T: Numeric, const N: usize> Expr<[T; N]>
where
    [T; N]: KernelType,
{
    /// Component `i` (0 to N-1).
    #[track_caller]
    pub fn get(self, i: u8) -> Expr<T> {
        if i as usize >= N {
            super::record_error(format!("component {i} of a {N}-vector"));
        }
        let a = id_of(self);
        node(IrExpr::Extract(a, i))
    }
    /// Component 0.
    #[track_caller]
    pub fn x(self) -> Expr<T> {
        self.get(0)
    }
    /// Component 1.
    #[track_caller]
    pub fn y(self) -> Expr<T> {
        self.get(1)
    }
    /// Component 2.
    #[track_caller]
    pub fn z(self) -> Expr<T> {
        self.get(2)
    }
    /// Component 3.
    #[track_caller]
    pub fn w(self) -> Expr<T> {
        self.get(3)
    }
}

impl<F: Numeric + crate::builder::types::Float, const N: usize> Expr<[F; N]>
where
    [F; N]: FloatArith,
{
    /// Dot product.
    #[track_caller]
    pub fn dot(self, o: Expr<[F; N]>) -> Expr<F> {
        call(MathFn::Dot, &[self, o])
    }
    /// Euclidean length.
    #[track_caller]
    pub fn length(self) -> Expr<F> {
        call(MathFn::Length, &[self])
    }
    /// `(self - o).length()`
    #[track_caller]
    pub fn distance(self, o: Expr<[F; N]>) -> Expr<F> {
        call(MathFn::Distance, &[self, o])
    }
    /// `self / self.length()`
    #[track_caller]
    pub fn normalize(self) -> Expr<[F; N]> {
        call(MathFn::Normalize, &[self])
    }
    /// Cross product (3- and 4-vectors; the fourth component of the result is 0).
    #[track_caller]
    pub fn cross(self, o: Expr<[F; N]>) -> Expr<[F; N]> {
        if N < 3 {
            super::record_error("cross needs 3- or 4-vectors".into());
        }
        call(MathFn::Cross, &[self, o])
    }
}

/// A vector with every component equal to `x`.
#[track_caller]
pub fn splat<T: ScalarType, const N: usize>(x: impl Into<Expr<T>>) -> Expr<[T; N]>
where
    [T; N]: KernelType,
{
    let a = id_of(x.into());
    node_typed(IrExpr::Splat(a, N as u8), Type::vector(T::SCALAR, N as u8))
}

#[track_caller]
pub(super) fn compose<T: ScalarType, const N: usize>(parts: [Expr<T>; N]) -> Expr<[T; N]>
where
    [T; N]: KernelType,
{
    let ids = parts.iter().map(|&p| id_of(p)).collect();
    node(IrExpr::Compose(ids))
}

/// A 2-vector.
#[track_caller]
pub fn vec2<T: ScalarType>(x: impl Into<Expr<T>>, y: impl Into<Expr<T>>) -> Expr<[T; 2]>
where
    [T; 2]: KernelType,
{
    compose([x.into(), y.into()])
}

/// A 3-vector.
#[track_caller]
pub fn vec3<T: ScalarType>(
    x: impl Into<Expr<T>>,
    y: impl Into<Expr<T>>,
    z: impl Into<Expr<T>>,
) -> Expr<[T; 3]>
where
    [T; 3]: KernelType,
{
    compose([x.into(), y.into(), z.into()])
}

/// A 4-vector.
#[track_caller]
pub fn vec4<T: ScalarType>(
    x: impl Into<Expr<T>>,
    y: impl Into<Expr<T>>,
    z: impl Into<Expr<T>>,
    w: impl Into<Expr<T>>,
) -> Expr<[T; 4]>
where
    [T; 4]: KernelType,
{
    compose([x.into(), y.into(), z.into(), w.into()])
}

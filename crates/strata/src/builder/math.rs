//! Built-in functions as methods on [`Expr`] (`x.sqrt()`, `x.min(y)`, `v.dot(w)`), vector
//! construction and component access. Every method maps to one [`MathFn`]; the semantics are
//! defined once, in [`crate::ir::eval`].

use super::types::{Arith, FloatArith, IntArith, KernelType, Numeric, ScalarType};
use super::{id_of, node, node_typed, Expr};
use crate::ir::{Expr as IrExpr, MathFn, Type};

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

//! The one evaluator of IR operations, shared by constant folding and the CPU backend.
//!
//! Operations work on [`Column`]s: a run of components of one scalar type. The CPU backend keeps
//! one column per register holding a value for every work-item of a work-group (vectors store
//! component `c` of lane `l` at `c * lanes + l`); constant folding uses columns of one lane.
//! Because both go through the same functions, a constant folded at build time and the same
//! expression computed at run time agree bit for bit.
//!
//! The arithmetic itself is defined once, by the [`Num`], [`Int`] and [`Float`] traits.
//!
//! **`f16`** is `half::f16` here, with the IR's rules: `+ - * / %`, `sqrt` and `fma` are
//! computed in `f64` and rounded once to `f16` by strata's own [`f16_from_f64`] (its docs say
//! why not the `half` crate's conversion); the other built-ins are the `f32` built-in rounded
//! to `f16`, except those [`f16_special`] lists. These direct operations are the definition
//! that the `f16` lowering of the backends ([`passes::lower_f16`](super::passes::lower_f16)) is
//! tested against.

use super::{special, BinaryOp, Literal, MathFn, Scalar, UnaryOp};
use bytemuck::Pod;

/// An error raised while evaluating an operation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EvalError {
    /// Integer division or remainder by zero, at this component index.
    DivisionByZero(usize),
}

/// A growable run of components of one scalar type, 8-byte aligned so it can be viewed as a
/// slice of any scalar type.
#[derive(Clone, Default, Debug)]
pub struct Column {
    words: Vec<u64>,
}

impl Column {
    /// A zeroed column of `bytes` bytes.
    pub fn zeroed(bytes: usize) -> Column {
        Column {
            words: vec![0; bytes.div_ceil(8)],
        }
    }

    /// Makes room for at least `bytes` bytes (new bytes are zero).
    pub fn reserve_bytes(&mut self, bytes: usize) {
        let words = bytes.div_ceil(8);
        if self.words.len() < words {
            self.words.resize(words, 0);
        }
    }

    /// A one-component column holding `lit`.
    pub fn from_literal(lit: Literal) -> Column {
        let mut c = Column::zeroed(8);
        let s = lit.scalar;
        with_scalar!(s, T => { c.slice_mut::<T>(1)[0] = T::from_lit(lit); });
        c
    }

    /// Component `i`, as a literal of type `s`.
    pub fn literal(&self, s: Scalar, i: usize) -> Literal {
        let bits = with_scalar!(s, T => self.slice::<T>(i + 1)[i].to_lit().bits);
        Literal::from_bits(s, bits)
    }

    /// The first `n` components viewed as `T`.
    pub fn slice<T: Pod>(&self, n: usize) -> &[T] {
        &bytemuck::cast_slice::<u64, T>(&self.words)[..n]
    }

    /// The first `n` components viewed as `T`, mutably.
    pub fn slice_mut<T: Pod>(&mut self, n: usize) -> &mut [T] {
        &mut bytemuck::cast_slice_mut::<u64, T>(&mut self.words)[..n]
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.words)
    }

    /// The raw bytes, mutably.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.words)
    }
}

/// Runs `$body` with `$T` bound to the Rust type that stores scalar `$s` (`bool` is `u8`).
macro_rules! with_scalar {
    ($s:expr, $T:ident => $body:expr) => {
        match $s {
            $crate::ir::Scalar::Bool => {
                type $T = $crate::ir::eval::BoolByte;
                $body
            }
            $crate::ir::Scalar::I8 => {
                type $T = i8;
                $body
            }
            $crate::ir::Scalar::I16 => {
                type $T = i16;
                $body
            }
            $crate::ir::Scalar::I32 => {
                type $T = i32;
                $body
            }
            $crate::ir::Scalar::I64 => {
                type $T = i64;
                $body
            }
            $crate::ir::Scalar::U8 => {
                type $T = u8;
                $body
            }
            $crate::ir::Scalar::U16 => {
                type $T = u16;
                $body
            }
            $crate::ir::Scalar::U32 => {
                type $T = u32;
                $body
            }
            $crate::ir::Scalar::U64 => {
                type $T = u64;
                $body
            }
            $crate::ir::Scalar::F16 => {
                type $T = half::f16;
                $body
            }
            $crate::ir::Scalar::F32 => {
                type $T = f32;
                $body
            }
            $crate::ir::Scalar::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}

/// Runs `$body` with `$T` bound to an integer type; other scalars run `$other`.
macro_rules! with_int {
    ($s:expr, $T:ident => $body:expr, _ => $other:expr) => {
        match $s {
            $crate::ir::Scalar::I8 => {
                type $T = i8;
                $body
            }
            $crate::ir::Scalar::I16 => {
                type $T = i16;
                $body
            }
            $crate::ir::Scalar::I32 => {
                type $T = i32;
                $body
            }
            $crate::ir::Scalar::I64 => {
                type $T = i64;
                $body
            }
            $crate::ir::Scalar::U8 => {
                type $T = u8;
                $body
            }
            $crate::ir::Scalar::U16 => {
                type $T = u16;
                $body
            }
            $crate::ir::Scalar::U32 => {
                type $T = u32;
                $body
            }
            $crate::ir::Scalar::U64 => {
                type $T = u64;
                $body
            }
            _ => $other,
        }
    };
}

/// Runs `$body` with `$T` bound to `f32` or `f64`; other scalars run `$other`.
macro_rules! with_float {
    ($s:expr, $T:ident => $body:expr, _ => $other:expr) => {
        match $s {
            $crate::ir::Scalar::F32 => {
                type $T = f32;
                $body
            }
            $crate::ir::Scalar::F64 => {
                type $T = f64;
                $body
            }
            _ => $other,
        }
    };
}

#[allow(unused_imports)]
pub(crate) use {with_float, with_int, with_scalar};

/// The storage of a `bool`: one byte, 0 or 1.
pub type BoolByte = u8;

/// Arithmetic shared by every scalar type. The methods are the semantics of the IR.
pub trait Num: Copy + Pod + PartialOrd + Send + Sync + 'static {
    /// Whether this is a float type.
    const FLOAT: bool;
    /// Whether this is a signed type.
    const SIGNED: bool;
    /// Decodes a literal of this type.
    fn from_lit(l: Literal) -> Self;
    /// Encodes as a literal.
    fn to_lit(self) -> Literal;
    /// `+`
    fn add(self, o: Self) -> Self;
    /// `-`
    fn sub(self, o: Self) -> Self;
    /// `*`
    fn mul(self, o: Self) -> Self;
    /// `/`; `None` on integer division by zero.
    fn div(self, o: Self) -> Option<Self>;
    /// `%`; `None` on integer division by zero.
    fn rem(self, o: Self) -> Option<Self>;
    /// Negation.
    fn neg(self) -> Self;
    /// Smaller value (float: the non-NaN one).
    fn min_(self, o: Self) -> Self;
    /// Larger value (float: the non-NaN one).
    fn max_(self, o: Self) -> Self;
    /// Absolute value (integers wrap).
    fn abs_(self) -> Self;
    /// Value as `f64` (Rust `as`).
    fn as_f64(self) -> f64;
    /// Value as `i64` (Rust `as`).
    fn as_i64(self) -> i64;
    /// Value as `u64` (Rust `as`).
    fn as_u64(self) -> u64;
    /// From `f64` (Rust `as`: saturating, NaN to 0).
    fn from_f64(v: f64) -> Self;
    /// From `f32` (Rust `as`).
    fn from_f32(v: f32) -> Self;
    /// From `i64` (Rust `as`: wrapping or rounding to nearest).
    fn from_i64(v: i64) -> Self;
    /// From `u64` (Rust `as`).
    fn from_u64(v: u64) -> Self;
    /// Whether the value is zero.
    fn is_zero(self) -> bool;
    /// The additive identity.
    fn zero() -> Self;
    /// The largest value (`+inf` for floats), identity of `min`.
    fn greatest() -> Self;
    /// The smallest value (`-inf` for floats), identity of `max`.
    fn least() -> Self;
}

/// Operations of the integer types.
pub trait Int: Num + Ord {
    /// Bit width.
    const BITS: u32;
    /// `&`
    fn and(self, o: Self) -> Self;
    /// `|`
    fn or(self, o: Self) -> Self;
    /// `^`
    fn xor(self, o: Self) -> Self;
    /// Bitwise complement.
    fn not(self) -> Self;
    /// `<<`, amount modulo the width.
    fn shl(self, o: Self) -> Self;
    /// `>>`, amount modulo the width.
    fn shr(self, o: Self) -> Self;
    /// Leading zeros.
    fn clz(self) -> Self;
    /// Set bits.
    fn popcount(self) -> Self;
    /// Rotate left, amount modulo the width.
    fn rotate(self, o: Self) -> Self;
    /// High half of the full product.
    fn mul_hi(self, o: Self) -> Self;
    /// Saturating `+`.
    fn add_sat(self, o: Self) -> Self;
    /// Saturating `-`.
    fn sub_sat(self, o: Self) -> Self;
    /// `(a + b) >> 1` without overflow.
    fn hadd(self, o: Self) -> Self;
    /// `(a + b + 1) >> 1` without overflow.
    fn rhadd(self, o: Self) -> Self;
    /// `a * b + c` computed exactly, saturated to the type's range.
    fn mad_sat(self, b: Self, c: Self) -> Self;
}

/// Operations of the float types.
pub trait Float: Num {
    /// Applies a one-argument math built-in.
    fn math1(f: MathFn, x: Self) -> Self;
    /// Applies a two-argument math built-in.
    fn math2(f: MathFn, x: Self, y: Self) -> Self;
    /// Applies a three-argument math built-in.
    fn math3(f: MathFn, x: Self, y: Self, z: Self) -> Self;
    /// Applies a built-in of a float and an `i32` (`ldexp`, `pown`, `rootn`).
    fn math_int(f: MathFn, x: Self, n: i32) -> Self;
    /// Applies a built-in with an `i32` result (`ilogb`).
    fn to_int(f: MathFn, x: Self) -> i32;
    /// Applies a float test (`isnan`, ...).
    fn test(f: MathFn, x: Self) -> bool;
    /// `sqrt`
    fn sqrt_(self) -> Self;
}

macro_rules! num_common {
    ($t:ty, $s:ident) => {
        fn from_lit(l: Literal) -> Self {
            bytemuck::cast::<[u8; std::mem::size_of::<$t>()], $t>(
                l.bits.to_le_bytes()[..std::mem::size_of::<$t>()]
                    .try_into()
                    .unwrap(),
            )
        }
        fn to_lit(self) -> Literal {
            let mut b = [0u8; 8];
            b[..std::mem::size_of::<$t>()].copy_from_slice(bytemuck::bytes_of(&self));
            Literal::from_bits(Scalar::$s, u64::from_le_bytes(b))
        }
        fn as_f64(self) -> f64 {
            self as f64
        }
        fn as_i64(self) -> i64 {
            self as i64
        }
        fn as_u64(self) -> u64 {
            self as u64
        }
        fn from_f64(v: f64) -> Self {
            v as $t
        }
        fn from_f32(v: f32) -> Self {
            v as $t
        }
        fn from_i64(v: i64) -> Self {
            v as $t
        }
        fn from_u64(v: u64) -> Self {
            v as $t
        }
    };
}

macro_rules! int_impl {
    ($t:ty, $s:ident, $signed:expr, $wide:ty) => {
        impl Num for $t {
            const FLOAT: bool = false;
            const SIGNED: bool = $signed;
            num_common!($t, $s);
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn div(self, o: Self) -> Option<Self> {
                (o != 0).then(|| self.wrapping_div(o))
            }
            fn rem(self, o: Self) -> Option<Self> {
                (o != 0).then(|| self.wrapping_rem(o))
            }
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
            fn min_(self, o: Self) -> Self {
                Ord::min(self, o)
            }
            fn max_(self, o: Self) -> Self {
                Ord::max(self, o)
            }
            #[allow(unused_comparisons)]
            fn abs_(self) -> Self {
                if self < 0 {
                    self.wrapping_neg()
                } else {
                    self
                }
            }
            fn is_zero(self) -> bool {
                self == 0
            }
            fn zero() -> Self {
                0
            }
            fn greatest() -> Self {
                <$t>::MAX
            }
            fn least() -> Self {
                <$t>::MIN
            }
        }
        impl Int for $t {
            const BITS: u32 = <$t>::BITS;
            fn and(self, o: Self) -> Self {
                self & o
            }
            fn or(self, o: Self) -> Self {
                self | o
            }
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
            fn not(self) -> Self {
                !self
            }
            fn shl(self, o: Self) -> Self {
                self.wrapping_shl(o as u32)
            }
            fn shr(self, o: Self) -> Self {
                self.wrapping_shr(o as u32)
            }
            fn clz(self) -> Self {
                self.leading_zeros() as $t
            }
            fn popcount(self) -> Self {
                self.count_ones() as $t
            }
            fn rotate(self, o: Self) -> Self {
                self.rotate_left((o as u64 % Self::BITS as u64) as u32)
            }
            fn mul_hi(self, o: Self) -> Self {
                ((self as $wide * o as $wide) >> Self::BITS) as $t
            }
            fn add_sat(self, o: Self) -> Self {
                self.saturating_add(o)
            }
            fn sub_sat(self, o: Self) -> Self {
                self.saturating_sub(o)
            }
            fn hadd(self, o: Self) -> Self {
                ((self as $wide + o as $wide) >> 1) as $t
            }
            fn rhadd(self, o: Self) -> Self {
                ((self as $wide + o as $wide + 1) >> 1) as $t
            }
            fn mad_sat(self, b: Self, c: Self) -> Self {
                // Exact in the wide type: |a b| < 2^128 for u64, 2^126 for i64, and + c fits.
                let r = self as $wide * b as $wide + c as $wide;
                r.clamp(<$t>::MIN as $wide, <$t>::MAX as $wide) as $t
            }
        }
    };
}

int_impl!(i8, I8, true, i128);
int_impl!(i16, I16, true, i128);
int_impl!(i32, I32, true, i128);
int_impl!(i64, I64, true, i128);
int_impl!(u8, U8, false, u128);
int_impl!(u16, U16, false, u128);
int_impl!(u32, U32, false, u128);
int_impl!(u64, U64, false, u128);

macro_rules! float_impl {
    ($t:ty, $s:ident) => {
        impl Num for $t {
            const FLOAT: bool = true;
            const SIGNED: bool = true;
            num_common!($t, $s);
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn div(self, o: Self) -> Option<Self> {
                Some(self / o)
            }
            fn rem(self, o: Self) -> Option<Self> {
                Some(self % o)
            }
            fn neg(self) -> Self {
                -self
            }
            fn min_(self, o: Self) -> Self {
                self.min(o)
            }
            fn max_(self, o: Self) -> Self {
                self.max(o)
            }
            fn abs_(self) -> Self {
                self.abs()
            }
            fn is_zero(self) -> bool {
                self == 0.0
            }
            fn zero() -> Self {
                0.0
            }
            fn greatest() -> Self {
                <$t>::INFINITY
            }
            fn least() -> Self {
                <$t>::NEG_INFINITY
            }
        }
        impl Float for $t {
            fn math1(f: MathFn, x: Self) -> Self {
                match f {
                    MathFn::Sqrt => x.sqrt(),
                    MathFn::Rsqrt => 1.0 / x.sqrt(),
                    MathFn::Cbrt => x.cbrt(),
                    MathFn::Exp => x.exp(),
                    MathFn::Exp2 => x.exp2(),
                    MathFn::Exp10 => (10.0 as $t).powf(x),
                    MathFn::Expm1 => x.exp_m1(),
                    MathFn::Log => x.ln(),
                    MathFn::Log2 => x.log2(),
                    MathFn::Log10 => x.log10(),
                    MathFn::Log1p => x.ln_1p(),
                    MathFn::Sin => x.sin(),
                    MathFn::Cos => x.cos(),
                    MathFn::Tan => x.tan(),
                    MathFn::Asin => x.asin(),
                    MathFn::Acos => x.acos(),
                    MathFn::Atan => x.atan(),
                    MathFn::Sinh => x.sinh(),
                    MathFn::Cosh => x.cosh(),
                    MathFn::Tanh => x.tanh(),
                    // Rust's `asinh`/`acosh` overflow to infinity for |x| near MAX (they
                    // square x); beyond 2^28, `ln(2|x|)` is the correctly rounded formula.
                    MathFn::Asinh if x.abs() > (1u64 << 28) as $t => {
                        (x.abs().ln() + std::f64::consts::LN_2 as $t).copysign(x)
                    }
                    MathFn::Asinh => x.asinh(),
                    MathFn::Acosh if x > (1u64 << 28) as $t => {
                        x.ln() + std::f64::consts::LN_2 as $t
                    }
                    // Rust's `acosh` is `ln(x + sqrt(x^2 - 1))`, which loses most of its bits
                    // near 1 (239 ulp in f32); with `t = x - 1` (exact there),
                    // `log1p(t + sqrt(t * (t + 2)))` keeps them.
                    MathFn::Acosh if x >= 1.0 => {
                        let t = x - 1.0;
                        (t + (t * (t + 2.0)).sqrt()).ln_1p()
                    }
                    MathFn::Acosh => x.acosh(),
                    // Rust's `atanh` is `log1p(2x / (1 - x)) / 2`, whose rounded quotient is
                    // amplified near +-1 (363,409 ulp in f32 at -0.99999994). Both `log1p`s
                    // below are accurate and never cancel (their signs differ).
                    MathFn::Atanh if x.abs() < 1.0 => 0.5 * (x.ln_1p() - (-x).ln_1p()),
                    MathFn::Atanh => x.atanh(),
                    MathFn::Floor => x.floor(),
                    MathFn::Ceil => x.ceil(),
                    MathFn::Round => x.round(),
                    MathFn::Trunc => x.trunc(),
                    MathFn::Sign => {
                        if x.is_nan() {
                            0.0
                        } else if x > 0.0 {
                            1.0
                        } else if x < 0.0 {
                            -1.0
                        } else {
                            x
                        }
                    }
                    MathFn::Degrees => x.to_degrees(),
                    MathFn::Radians => x.to_radians(),
                    MathFn::Abs => x.abs(),
                    MathFn::Erf => special::erf(x as f64) as $t,
                    MathFn::Erfc => special::erfc(x as f64) as $t,
                    MathFn::Tgamma => special::tgamma(x as f64) as $t,
                    MathFn::Lgamma => special::lgamma(x as f64) as $t,
                    MathFn::Sinpi => special::sinpi(x as f64) as $t,
                    MathFn::Cospi => special::cospi(x as f64) as $t,
                    MathFn::Tanpi => special::tanpi(x as f64) as $t,
                    // Rust's `asin`, `acos`, `atan` are within an ulp; one division by pi
                    // (rounded) adds about one more.
                    MathFn::Asinpi => ((x as f64).asin() / std::f64::consts::PI) as $t,
                    MathFn::Acospi => ((x as f64).acos() / std::f64::consts::PI) as $t,
                    MathFn::Atanpi => ((x as f64).atan() / std::f64::consts::PI) as $t,
                    MathFn::Rint => x.round_ties_even(),
                    MathFn::Logb if x == 0.0 => <$t>::NEG_INFINITY,
                    MathFn::Logb if !x.is_finite() => x.abs(),
                    MathFn::Logb => Self::to_int(MathFn::Ilogb, x) as $t,
                    MathFn::Fract if x.is_nan() || x == 0.0 => x,
                    MathFn::Fract if x.is_infinite() => (0.0 as $t).copysign(x),
                    // The largest value below 1: 1 - 2^-(mantissa bits + 1).
                    MathFn::Fract => (x - x.floor()).min(1.0 - <$t>::EPSILON / 2.0),
                    other => unreachable!("{} is not a one-argument float built-in", other.name()),
                }
            }
            fn math2(f: MathFn, x: Self, y: Self) -> Self {
                match f {
                    MathFn::Pow => x.powf(y),
                    MathFn::Atan2 => x.atan2(y),
                    MathFn::Fmod => x % y,
                    MathFn::Hypot => x.hypot(y),
                    MathFn::Copysign => x.copysign(y),
                    MathFn::Min => x.min(y),
                    MathFn::Max => x.max(y),
                    MathFn::Atan2pi => ((x as f64).atan2(y as f64) / std::f64::consts::PI) as $t,
                    MathFn::Fdim if x.is_nan() || y.is_nan() => x + y,
                    MathFn::Fdim => {
                        if x > y {
                            x - y
                        } else {
                            0.0
                        }
                    }
                    MathFn::Maxmag if x.abs() > y.abs() => x,
                    MathFn::Maxmag if y.abs() > x.abs() => y,
                    MathFn::Maxmag => x.max(y),
                    MathFn::Minmag if x.abs() < y.abs() => x,
                    MathFn::Minmag if y.abs() < x.abs() => y,
                    MathFn::Minmag => x.min(y),
                    MathFn::Nextafter if x.is_nan() || y.is_nan() => x + y,
                    MathFn::Nextafter if x == y => y,
                    MathFn::Nextafter if x == 0.0 => <$t>::from_bits(1).copysign(y),
                    // Away from zero when y is further out on x's side, else towards zero.
                    MathFn::Nextafter => {
                        let away = (y > x) == (x > 0.0);
                        let b = x.to_bits();
                        <$t>::from_bits(if away { b + 1 } else { b - 1 })
                    }
                    // Exact in f64, and the remainder of two f32 is an f32.
                    MathFn::Remainder => libm::remainder(x as f64, y as f64) as $t,
                    MathFn::Powr => special::powr(x as f64, y as f64) as $t,
                    other => unreachable!("{} is not a two-argument float built-in", other.name()),
                }
            }
            fn math3(f: MathFn, x: Self, y: Self, z: Self) -> Self {
                match f {
                    MathFn::Fma => x.mul_add(y, z),
                    MathFn::Mix => x + (y - x) * z,
                    MathFn::Clamp => x.max(y).min(z),
                    other => {
                        unreachable!("{} is not a three-argument float built-in", other.name())
                    }
                }
            }
            fn math_int(f: MathFn, x: Self, n: i32) -> Self {
                match f {
                    // Exact in f64 (or out of its range, as of f32's); one rounding to f32.
                    MathFn::Ldexp => libm::scalbn(x as f64, n) as $t,
                    MathFn::Pown => PowInt::pown(x, n),
                    MathFn::Rootn => PowInt::rootn(x, n),
                    other => unreachable!("{} is not a float-and-int built-in", other.name()),
                }
            }
            fn to_int(f: MathFn, x: Self) -> i32 {
                match f {
                    MathFn::Ilogb if x == 0.0 => i32::MIN,
                    MathFn::Ilogb if !x.is_finite() => i32::MAX,
                    // f32 subnormals are normal in f64.
                    MathFn::Ilogb => libm::ilogb(x as f64),
                    other => unreachable!("{} has no integer result", other.name()),
                }
            }
            fn test(f: MathFn, x: Self) -> bool {
                match f {
                    MathFn::IsNan => x.is_nan(),
                    MathFn::IsInf => x.is_infinite(),
                    MathFn::IsFinite => x.is_finite(),
                    MathFn::Signbit => x.is_sign_negative(),
                    other => unreachable!("{} is not a float test", other.name()),
                }
            }
            fn sqrt_(self) -> Self {
                self.sqrt()
            }
        }
    };
}

float_impl!(f32, F32);
float_impl!(f64, F64);

/// `f16` from `f64`, rounded once to nearest even (overflow to infinity, NaN stays NaN with the
/// quiet bit set and the top payload bits). The `half` crate's conversions from `f64` are not
/// this: `from_f64` goes through `f32` where the CPU has F16C (two roundings), and its
/// portable code ignores the low 32 bits of the `f64`, so it misrounds near ties.
pub fn f16_from_f64(v: f64) -> half::f16 {
    let b = v.to_bits();
    let sign = ((b >> 48) & 0x8000) as u16;
    let exp = ((b >> 52) & 0x7ff) as i32;
    let man = b & ((1u64 << 52) - 1);
    if exp == 0x7ff {
        let nan = if man == 0 {
            0
        } else {
            0x200 | (man >> 42) as u16
        };
        return half::f16::from_bits(sign | 0x7c00 | nan);
    }
    if exp == 0 {
        // Zero or an f64 subnormal: far below half the smallest f16.
        return half::f16::from_bits(sign);
    }
    let e = exp - 1023;
    if e > 15 {
        return half::f16::from_bits(sign | 0x7c00);
    }
    // The value is `full * 2^(e - 52)`; the result counts units of 2^(e - 10) (normal) or
    // 2^-24 (subnormal).
    let full = man | (1u64 << 52);
    let unit = if e >= -14 { e - 10 } else { -24 };
    let shift = (unit - (e - 52)) as u32;
    if shift >= 64 {
        return half::f16::from_bits(sign);
    }
    let q = full >> shift;
    let rem = full & ((1u64 << shift) - 1);
    let halfway = 1u64 << (shift - 1);
    let q = q + u64::from(rem > halfway || (rem == halfway && q & 1 == 1));
    let bits = if e >= -14 {
        // A carry out of the significand steps the exponent, up to infinity (0x7c00).
        (((e + 15) as u64) << 10) + (q - 1024)
    } else {
        q
    };
    half::f16::from_bits(sign | bits as u16)
}

/// `f16`, the definition: `+ - * /` of two `f16` are computed in `f64` and rounded once more to
/// `f16`. Sums and products of two `f16` are exact in `f64` (at most 40 and 22 significant
/// bits); a quotient is rounded twice, which gives the once-rounded result because `f64` has at
/// least `2 * 11 + 2` bits (Figueroa, "When is double rounding innocuous?", 1995).
impl Num for half::f16 {
    const FLOAT: bool = true;
    const SIGNED: bool = true;
    fn from_lit(l: Literal) -> Self {
        half::f16::from_bits(l.bits as u16)
    }
    fn to_lit(self) -> Literal {
        Literal::from_bits(Scalar::F16, self.to_bits() as u64)
    }
    fn add(self, o: Self) -> Self {
        f16_from_f64(self.to_f64() + o.to_f64())
    }
    fn sub(self, o: Self) -> Self {
        f16_from_f64(self.to_f64() - o.to_f64())
    }
    fn mul(self, o: Self) -> Self {
        f16_from_f64(self.to_f64() * o.to_f64())
    }
    fn div(self, o: Self) -> Option<Self> {
        Some(f16_from_f64(self.to_f64() / o.to_f64()))
    }
    fn rem(self, o: Self) -> Option<Self> {
        // `fmod` is exact: the remainder of two f16 is an f16.
        Some(f16_from_f64(self.to_f64() % o.to_f64()))
    }
    fn neg(self) -> Self {
        -self
    }
    fn min_(self, o: Self) -> Self {
        f16_from_f64(self.to_f32().min(o.to_f32()) as f64)
    }
    fn max_(self, o: Self) -> Self {
        f16_from_f64(self.to_f32().max(o.to_f32()) as f64)
    }
    fn abs_(self) -> Self {
        half::f16::from_bits(self.to_bits() & 0x7fff)
    }
    fn as_f64(self) -> f64 {
        self.to_f64()
    }
    fn as_i64(self) -> i64 {
        self.to_f64() as i64
    }
    fn as_u64(self) -> u64 {
        self.to_f64() as u64
    }
    fn from_f64(v: f64) -> Self {
        f16_from_f64(v)
    }
    fn from_f32(v: f32) -> Self {
        f16_from_f64(v as f64)
    }
    fn from_i64(v: i64) -> Self {
        // Exact in f64 up to 2^53; beyond, the rounded f64 still rounds to infinity.
        f16_from_f64(v as f64)
    }
    fn from_u64(v: u64) -> Self {
        f16_from_f64(v as f64)
    }
    fn is_zero(self) -> bool {
        self.to_bits() & 0x7fff == 0
    }
    fn zero() -> Self {
        half::f16::ZERO
    }
    fn greatest() -> Self {
        half::f16::INFINITY
    }
    fn least() -> Self {
        half::f16::NEG_INFINITY
    }
}

/// The `f16` built-ins that are not the `f32` built-in rounded (see the IR's module docs):
/// `sqrt` (rounded once), `fma` (rounded once), `nextafter` (a step in `f16`) and `fract`
/// (below 1 in `f16`). `None` for the others.
pub fn f16_special(f: MathFn, a: &[half::f16]) -> Option<half::f16> {
    let w = |i: usize| a[i].to_f64();
    Some(match f {
        // Rounded twice (f64 has 2 * 11 + 2 bits or more): innocuous.
        MathFn::Sqrt => f16_from_f64(w(0).sqrt()),
        // `a * b` is exact in f64 (22 bits). `a * b + c` is exact too unless the terms are more
        // than 53 bits apart, which (f16 spans 2^-24 to 2^16, and a product below 2^17 for a
        // finite result) happens only when |a * b| < 2^-29 |c|: then both the exact and the f64
        // sum round to c or its neighbour the same way, far from an f16 rounding boundary.
        MathFn::Fma => f16_from_f64(w(0).mul_add(w(1), w(2))),
        MathFn::Nextafter => {
            let (x, y) = (a[0], a[1]);
            if x.is_nan() || y.is_nan() {
                x.add(y)
            } else if x == y {
                y
            } else if x.is_zero() {
                half::f16::from_bits(1 | (y.to_bits() & 0x8000))
            } else {
                let away = (y > x) == (x > half::f16::ZERO);
                let b = x.to_bits();
                half::f16::from_bits(if away { b + 1 } else { b - 1 })
            }
        }
        MathFn::Fract => {
            let r = f16_from_f64(<f32 as Float>::math1(MathFn::Fract, a[0].to_f32()) as f64);
            // The largest f16 below 1.
            let below = half::f16::from_bits(0x3bff);
            if r > below {
                below
            } else {
                r
            }
        }
        _ => return None,
    })
}

/// The `f16` built-ins: [`f16_special`] where it applies, otherwise the `f32` built-in of the
/// widened arguments, rounded (see the IR's module docs).
impl Float for half::f16 {
    fn math1(f: MathFn, x: Self) -> Self {
        f16_special(f, &[x]).unwrap_or_else(|| <Self as Num>::from_f32(f32::math1(f, x.to_f32())))
    }
    fn math2(f: MathFn, x: Self, y: Self) -> Self {
        f16_special(f, &[x, y])
            .unwrap_or_else(|| <Self as Num>::from_f32(f32::math2(f, x.to_f32(), y.to_f32())))
    }
    fn math3(f: MathFn, x: Self, y: Self, z: Self) -> Self {
        f16_special(f, &[x, y, z]).unwrap_or_else(|| {
            <Self as Num>::from_f32(f32::math3(f, x.to_f32(), y.to_f32(), z.to_f32()))
        })
    }
    fn math_int(f: MathFn, x: Self, n: i32) -> Self {
        <Self as Num>::from_f32(f32::math_int(f, x.to_f32(), n))
    }
    fn to_int(f: MathFn, x: Self) -> i32 {
        f32::to_int(f, x.to_f32())
    }
    fn test(f: MathFn, x: Self) -> bool {
        f32::test(f, x.to_f32())
    }
    fn sqrt_(self) -> Self {
        Self::math1(MathFn::Sqrt, self)
    }
}

/// `f16` built-ins over columns: [`f16_special`] where it applies, otherwise the `f32` built-in
/// of the widened arguments with float results rounded to `f16`.
fn f16_math(f: MathFn, args: &[&Column], out: &mut Column, lanes: usize, width: usize) {
    let n = lanes * width;
    if f16_special(f, &[half::f16::ZERO; 3]).is_some() {
        out.reserve_bytes(n * 2);
        let cols: Vec<&[half::f16]> = args.iter().map(|c| c.slice::<half::f16>(n)).collect();
        for (i, o) in out.slice_mut::<half::f16>(n).iter_mut().enumerate() {
            let a: Vec<half::f16> = cols.iter().map(|c| c[i]).collect();
            *o = f16_special(f, &a).expect("a special built-in");
        }
        return;
    }
    let wide: Vec<Column> = args
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if f.kind() == crate::ir::MathKind::FloatInt && i == 1 {
                return (*c).clone();
            }
            let mut w = Column::default();
            cast(Scalar::F16, Scalar::F32, c, &mut w, n);
            w
        })
        .collect();
    let refs: Vec<&Column> = wide.iter().collect();
    let mut r = Column::default();
    float_math::<f32>(f, &refs, &mut r, n, lanes, width);
    if f.result_scalar(Scalar::F32) == Scalar::F32 {
        let m = match f.kind() {
            crate::ir::MathKind::Reduce => lanes,
            _ => n,
        };
        cast(Scalar::F32, Scalar::F16, &r, out, m);
    } else {
        *out = r;
    }
}

/// `pown` and `rootn` per type: `f32` through `f64` (`pow(x, n)` there is far inside `f32`'s
/// bound), `f64` through `pow` with the exact exponent and [`special::rootn`].
trait PowInt: Sized {
    fn pown(self, n: i32) -> Self;
    fn rootn(self, n: i32) -> Self;
}
impl PowInt for f32 {
    fn pown(self, n: i32) -> f32 {
        (self as f64).powf(f64::from(n)) as f32
    }
    fn rootn(self, n: i32) -> f32 {
        special::rootn(self as f64, n) as f32
    }
}
impl PowInt for f64 {
    fn pown(self, n: i32) -> f64 {
        self.powf(f64::from(n))
    }
    fn rootn(self, n: i32) -> f64 {
        special::rootn(self, n)
    }
}

fn map1<A: Pod, R: Pod>(a: &Column, out: &mut Column, n: usize, f: impl Fn(A) -> R) {
    out.reserve_bytes(n * std::mem::size_of::<R>());
    let a = a.slice::<A>(n);
    for (o, &x) in out.slice_mut::<R>(n).iter_mut().zip(a) {
        *o = f(x);
    }
}

fn map2<A: Pod, R: Pod>(a: &Column, b: &Column, out: &mut Column, n: usize, f: impl Fn(A, A) -> R) {
    map2_mixed(a, b, out, n, f)
}

/// [`map2`] with arguments of two types.
fn map2_mixed<A: Pod, B: Pod, R: Pod>(
    a: &Column,
    b: &Column,
    out: &mut Column,
    n: usize,
    f: impl Fn(A, B) -> R,
) {
    out.reserve_bytes(n * std::mem::size_of::<R>());
    let (a, b) = (a.slice::<A>(n), b.slice::<B>(n));
    for ((o, &x), &y) in out.slice_mut::<R>(n).iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

fn map3<A: Pod>(
    a: &Column,
    b: &Column,
    c: &Column,
    out: &mut Column,
    n: usize,
    f: impl Fn(A, A, A) -> A,
) {
    out.reserve_bytes(n * std::mem::size_of::<A>());
    let (a, b, c) = (a.slice::<A>(n), b.slice::<A>(n), c.slice::<A>(n));
    for (i, o) in out.slice_mut::<A>(n).iter_mut().enumerate() {
        *o = f(a[i], b[i], c[i]);
    }
}

/// `out = op(a)` over `n` components of type `s`.
pub fn unary(op: UnaryOp, s: Scalar, a: &Column, out: &mut Column, n: usize) {
    match (op, s) {
        (UnaryOp::Not, Scalar::Bool) => map1(a, out, n, |x: u8| x ^ 1),
        (UnaryOp::Not, _) => {
            with_int!(s, T => map1(a, out, n, |x: T| x.not()), _ => unreachable!("validated: `!` on {s}"))
        }
        (UnaryOp::Neg, _) => with_scalar!(s, T => map1(a, out, n, |x: T| x.neg())),
    }
}

/// Divides `a` by `b` componentwise with `f`; a zero integer divisor in a component for which
/// `active` is true is an error, in other components the result is 0.
fn divide<T: Num>(
    a: &Column,
    b: &Column,
    out: &mut Column,
    n: usize,
    active: &dyn Fn(usize) -> bool,
    f: fn(T, T) -> Option<T>,
) -> Result<(), EvalError> {
    out.reserve_bytes(n * std::mem::size_of::<T>());
    let (a, b) = (a.slice::<T>(n), b.slice::<T>(n));
    let o = out.slice_mut::<T>(n);
    for i in 0..n {
        o[i] = match f(a[i], b[i]) {
            Some(v) => v,
            None if active(i) => return Err(EvalError::DivisionByZero(i)),
            None => T::zero(),
        };
    }
    Ok(())
}

fn compare<T: Num>(op: BinaryOp, a: &Column, b: &Column, out: &mut Column, n: usize) {
    match op {
        BinaryOp::Eq => map2(a, b, out, n, |x: T, y: T| (x == y) as u8),
        BinaryOp::Ne => map2(a, b, out, n, |x: T, y: T| (x != y) as u8),
        BinaryOp::Lt => map2(a, b, out, n, |x: T, y: T| (x < y) as u8),
        BinaryOp::Le => map2(a, b, out, n, |x: T, y: T| (x <= y) as u8),
        BinaryOp::Gt => map2(a, b, out, n, |x: T, y: T| (x > y) as u8),
        BinaryOp::Ge => map2(a, b, out, n, |x: T, y: T| (x >= y) as u8),
        _ => unreachable!(),
    }
}

fn int_binary<T: Int>(op: BinaryOp, a: &Column, b: &Column, out: &mut Column, n: usize) {
    match op {
        BinaryOp::And => map2(a, b, out, n, T::and),
        BinaryOp::Or => map2(a, b, out, n, T::or),
        BinaryOp::Xor => map2(a, b, out, n, T::xor),
        BinaryOp::Shl => map2(a, b, out, n, T::shl),
        BinaryOp::Shr => map2(a, b, out, n, T::shr),
        _ => unreachable!(),
    }
}

/// `out = a op b` over `n` components of operand type `s`. `active(i)` tells whether component
/// `i` belongs to a work-item that is executing (only those may fail).
pub fn binary(
    op: BinaryOp,
    s: Scalar,
    a: &Column,
    b: &Column,
    out: &mut Column,
    n: usize,
    active: &dyn Fn(usize) -> bool,
) -> Result<(), EvalError> {
    use BinaryOp::*;
    if s == Scalar::Bool {
        match op {
            And => map2(a, b, out, n, |x: u8, y: u8| x & y),
            Or => map2(a, b, out, n, |x: u8, y: u8| x | y),
            Xor | Ne => map2(a, b, out, n, |x: u8, y: u8| x ^ y),
            Eq => map2(a, b, out, n, |x: u8, y: u8| (x == y) as u8),
            _ => unreachable!("validated: {} on bool", op.symbol()),
        }
        return Ok(());
    }
    with_scalar!(s, T => {
        match op {
            Add => map2(a, b, out, n, T::add),
            Sub => map2(a, b, out, n, T::sub),
            Mul => map2(a, b, out, n, T::mul),
            Div => return divide::<T>(a, b, out, n, active, T::div),
            Rem => return divide::<T>(a, b, out, n, active, T::rem),
            Eq | Ne | Lt | Le | Gt | Ge => compare::<T>(op, a, b, out, n),
            And | Or | Xor | Shl | Shr => {
                with_int!(s, I => int_binary::<I>(op, a, b, out, n), _ => unreachable!("validated: {} on {s}", op.symbol()))
            }
        }
    });
    Ok(())
}

/// `out = cond ? a : b` over `n` components of type `s`. `cond` has `cond_n` components; when it
/// is shorter than `n` (a scalar condition selecting vectors) it is repeated.
pub fn select(
    s: Scalar,
    cond: &Column,
    a: &Column,
    b: &Column,
    out: &mut Column,
    n: usize,
    cond_n: usize,
) {
    with_scalar!(s, T => {
        out.reserve_bytes(n * std::mem::size_of::<T>());
        let c = cond.slice::<u8>(cond_n);
        let (a, b) = (a.slice::<T>(n), b.slice::<T>(n));
        let o = out.slice_mut::<T>(n);
        for i in 0..n {
            o[i] = if c[i % cond_n] != 0 { a[i] } else { b[i] };
        }
    })
}

// `<D as Num>`: `half::f16` has inherent `from_f64`/`from_f32` of its own, which a path through
// the concrete type would call instead (and which misround, see `f16_from_f64`).
fn cast_from<S: Num>(to: Scalar, a: &Column, out: &mut Column, n: usize) {
    if to == Scalar::Bool {
        return map1(a, out, n, |x: S| (!x.is_zero()) as u8);
    }
    with_scalar!(to, D => {
        if S::FLOAT {
            map1(a, out, n, |x: S| <D as Num>::from_f64(x.as_f64()))
        } else if S::SIGNED {
            map1(a, out, n, |x: S| <D as Num>::from_i64(x.as_i64()))
        } else {
            map1(a, out, n, |x: S| <D as Num>::from_u64(x.as_u64()))
        }
    })
}

/// Converts `n` components from `from` to `to` (see the IR's module docs for the rules).
pub fn cast(from: Scalar, to: Scalar, a: &Column, out: &mut Column, n: usize) {
    with_scalar!(from, S => cast_from::<S>(to, a, out, n))
}

fn float_math<T: Float>(
    f: MathFn,
    args: &[&Column],
    out: &mut Column,
    n: usize,
    lanes: usize,
    width: usize,
) {
    match f.kind() {
        crate::ir::MathKind::FloatTest => map1(args[0], out, n, |x: T| T::test(f, x) as u8),
        crate::ir::MathKind::FloatToInt => map1(args[0], out, n, |x: T| T::to_int(f, x)),
        crate::ir::MathKind::FloatInt => map2_mixed(args[0], args[1], out, n, |x: T, k: i32| {
            T::math_int(f, x, k)
        }),
        crate::ir::MathKind::Reduce => {
            out.reserve_bytes(lanes * std::mem::size_of::<T>());
            let a = args[0].slice::<T>(n);
            let b = args.get(1).map(|c| c.slice::<T>(n));
            let o = out.slice_mut::<T>(lanes);
            for (l, o) in o.iter_mut().enumerate() {
                let mut acc = T::zero();
                for c in 0..width {
                    let x = a[c * lanes + l];
                    let v = match (f, b) {
                        (MathFn::Dot, Some(b)) => x.mul(b[c * lanes + l]),
                        (MathFn::Distance, Some(b)) => {
                            let d = x.sub(b[c * lanes + l]);
                            d.mul(d)
                        }
                        _ => x.mul(x),
                    };
                    acc = acc.add(v);
                }
                *o = if f == MathFn::Dot { acc } else { acc.sqrt_() };
            }
        }
        crate::ir::MathKind::Geometric => {
            out.reserve_bytes(n * std::mem::size_of::<T>());
            let a = args[0].slice::<T>(n);
            let o = out.slice_mut::<T>(n);
            if f == MathFn::Cross {
                let b = args[1].slice::<T>(n);
                let at = |c: usize, l: usize| a[c * lanes + l];
                let bt = |c: usize, l: usize| b[c * lanes + l];
                for l in 0..lanes {
                    o[l] = at(1, l).mul(bt(2, l)).sub(at(2, l).mul(bt(1, l)));
                    o[lanes + l] = at(2, l).mul(bt(0, l)).sub(at(0, l).mul(bt(2, l)));
                    o[2 * lanes + l] = at(0, l).mul(bt(1, l)).sub(at(1, l).mul(bt(0, l)));
                    if width == 4 {
                        o[3 * lanes + l] = T::zero();
                    }
                }
            } else {
                for l in 0..lanes {
                    let mut acc = T::zero();
                    for c in 0..width {
                        acc = acc.add(a[c * lanes + l].mul(a[c * lanes + l]));
                    }
                    let len = acc.sqrt_();
                    for c in 0..width {
                        o[c * lanes + l] = a[c * lanes + l].div(len).unwrap_or(T::zero());
                    }
                }
            }
        }
        _ => match f.arity() {
            1 => map1(args[0], out, n, |x: T| T::math1(f, x)),
            2 => map2(args[0], args[1], out, n, |x: T, y: T| T::math2(f, x, y)),
            _ => map3(args[0], args[1], args[2], out, n, |x: T, y: T, z: T| {
                T::math3(f, x, y, z)
            }),
        },
    }
}

fn int_math<T: Int>(f: MathFn, args: &[&Column], out: &mut Column, n: usize) {
    match f {
        MathFn::Abs => map1(args[0], out, n, T::abs_),
        MathFn::Clz => map1(args[0], out, n, T::clz),
        MathFn::Popcount => map1(args[0], out, n, T::popcount),
        MathFn::Min => map2(args[0], args[1], out, n, T::min_),
        MathFn::Max => map2(args[0], args[1], out, n, T::max_),
        MathFn::Rotate => map2(args[0], args[1], out, n, T::rotate),
        MathFn::MulHi => map2(args[0], args[1], out, n, T::mul_hi),
        MathFn::AddSat => map2(args[0], args[1], out, n, T::add_sat),
        MathFn::SubSat => map2(args[0], args[1], out, n, T::sub_sat),
        MathFn::Hadd => map2(args[0], args[1], out, n, T::hadd),
        MathFn::Rhadd => map2(args[0], args[1], out, n, T::rhadd),
        MathFn::Clamp => map3(args[0], args[1], args[2], out, n, |x: T, lo: T, hi: T| {
            x.max_(lo).min_(hi)
        }),
        MathFn::MadSat => map3(args[0], args[1], args[2], out, n, T::mad_sat),
        other => unreachable!("validated: {} on integers", other.name()),
    }
}

/// Applies built-in `f` to arguments of component type `s` and width `width`, over `lanes`
/// work-items (`n == lanes * width` components per argument).
pub fn math(f: MathFn, s: Scalar, args: &[&Column], out: &mut Column, lanes: usize, width: usize) {
    let n = lanes * width;
    if s == Scalar::F16 {
        return f16_math(f, args, out, lanes, width);
    }
    with_float!(s, F => float_math::<F>(f, args, out, n, lanes, width), _ => {
        with_int!(s, I => int_math::<I>(f, args, out, n), _ => unreachable!("validated: {} on {s}", f.name()))
    })
}

/// Folds a unary operation on a literal.
pub fn fold_unary(op: UnaryOp, a: Literal) -> Literal {
    let mut out = Column::default();
    unary(op, a.scalar, &Column::from_literal(a), &mut out, 1);
    out.literal(a.scalar, 0)
}

/// Folds a binary operation on literals; `None` when it would fail at run time (division by
/// zero), which is then left for the backend to report.
pub fn fold_binary(op: BinaryOp, a: Literal, b: Literal) -> Option<Literal> {
    let mut out = Column::default();
    binary(
        op,
        a.scalar,
        &Column::from_literal(a),
        &Column::from_literal(b),
        &mut out,
        1,
        &|_| true,
    )
    .ok()?;
    let rs = if op.is_comparison() {
        Scalar::Bool
    } else {
        a.scalar
    };
    Some(out.literal(rs, 0))
}

/// Folds a cast of a literal.
pub fn fold_cast(a: Literal, to: Scalar) -> Literal {
    let mut out = Column::default();
    cast(a.scalar, to, &Column::from_literal(a), &mut out, 1);
    out.literal(to, 0)
}

/// Folds a scalar built-in call on literals (not the vector-only geometric ones).
pub fn fold_math(f: MathFn, args: &[Literal]) -> Literal {
    let cols: Vec<Column> = args.iter().map(|&l| Column::from_literal(l)).collect();
    let refs: Vec<&Column> = cols.iter().collect();
    let mut out = Column::default();
    let s = args[0].scalar;
    math(f, s, &refs, &mut out, 1, 1);
    out.literal(f.result_scalar(s), 0)
}

/// Folds a select of literals.
pub fn fold_select(c: Literal, a: Literal, b: Literal) -> Literal {
    if c.bits != 0 {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_agree_with_rust() {
        let a = 7i32.to_lit();
        let b = (-2i32).to_lit();
        assert_eq!(fold_binary(BinaryOp::Div, a, b), Some((-3i32).to_lit()));
        assert_eq!(fold_binary(BinaryOp::Rem, a, b), Some(1i32.to_lit()));
        assert_eq!(fold_binary(BinaryOp::Div, a, 0i32.to_lit()), None);
        assert_eq!(
            fold_binary(BinaryOp::Add, i32::MAX.to_lit(), 1i32.to_lit()),
            Some(i32::MIN.to_lit())
        );
        assert_eq!(
            fold_binary(BinaryOp::Shl, 1u32.to_lit(), 33u32.to_lit()),
            Some(2u32.to_lit())
        );
        assert_eq!(fold_cast(f32::NAN.to_lit(), Scalar::I32), 0i32.to_lit());
        assert_eq!(fold_cast(1e10f32.to_lit(), Scalar::I32), i32::MAX.to_lit());
        assert_eq!(fold_cast((-1i32).to_lit(), Scalar::U8), 255u8.to_lit());
        assert_eq!(
            fold_math(MathFn::MulHi, &[u32::MAX.to_lit(), 2u32.to_lit()]),
            1u32.to_lit()
        );
        assert_eq!(fold_math(MathFn::Clz, &[1u64.to_lit()]), 63u64.to_lit());
        assert_eq!(
            fold_math(MathFn::Hadd, &[i8::MAX.to_lit(), i8::MAX.to_lit()]),
            i8::MAX.to_lit()
        );
        assert_eq!(
            fold_math(MathFn::IsNan, &[f64::NAN.to_lit()]),
            Literal::bool(true)
        );
    }
}

//! Rust operators on [`Expr`]: arithmetic, bitwise and shift operators through `std::ops`,
//! comparisons and logical operators as methods (Rust's comparison traits must return `bool`),
//! casts, and compound assignment on [`Var`].
//!
//! Mixed operands follow the implicit-conversion rule of [`Scalar::widens_to`](crate::ir::Scalar::widens_to):
//! `Expr<f64> + Expr<f32>` is an `Expr<f64>`; `Expr<f32> + Expr<f64>` too; anything lossy needs
//! an explicit [`Expr::cast`].

use super::types::{Arith, Bits, IntArith, Integer, KernelType, Numeric, ScalarType};
use super::{id_of, lit, node, node_typed, Expr, Var};
use crate::ir::{BinaryOp, Expr as IrExpr, Type, UnaryOp};
use std::ops::*;

#[track_caller]
fn bin<T: KernelType, R: KernelType>(op: BinaryOp, a: Expr<T>, b: Expr<T>) -> Expr<R> {
    let (a, b) = (id_of(a), id_of(b));
    node(IrExpr::Binary(op, a, b))
}

macro_rules! arith_op {
    ($Tr:ident, $m:ident, $op:ident, $bound:ident) => {
        impl<T: $bound> $Tr<Expr<T>> for Expr<T> {
            type Output = Expr<T>;
            #[track_caller]
            fn $m(self, r: Expr<T>) -> Expr<T> {
                bin(BinaryOp::$op, self, r)
            }
        }
    };
}
macro_rules! scalar_rhs_op {
    ($Tr:ident, $m:ident, $op:ident, $bound:ident) => {
        impl<T: $bound + ScalarType> $Tr<T> for Expr<T> {
            type Output = Expr<T>;
            #[track_caller]
            fn $m(self, r: T) -> Expr<T> {
                bin(BinaryOp::$op, self, lit(r))
            }
        }
    };
}

arith_op!(Add, add, Add, Arith);
arith_op!(Sub, sub, Sub, Arith);
arith_op!(Mul, mul, Mul, Arith);
arith_op!(Div, div, Div, Arith);
arith_op!(Rem, rem, Rem, Arith);
arith_op!(BitAnd, bitand, And, Bits);
arith_op!(BitOr, bitor, Or, Bits);
arith_op!(BitXor, bitxor, Xor, Bits);
arith_op!(Shl, shl, Shl, IntArith);
arith_op!(Shr, shr, Shr, IntArith);
scalar_rhs_op!(Add, add, Add, Numeric);
scalar_rhs_op!(Sub, sub, Sub, Numeric);
scalar_rhs_op!(Mul, mul, Mul, Numeric);
scalar_rhs_op!(Div, div, Div, Numeric);
scalar_rhs_op!(Rem, rem, Rem, Numeric);
scalar_rhs_op!(BitAnd, bitand, And, Integer);
scalar_rhs_op!(BitOr, bitor, Or, Integer);
scalar_rhs_op!(BitXor, bitxor, Xor, Integer);
scalar_rhs_op!(Shl, shl, Shl, Integer);
scalar_rhs_op!(Shr, shr, Shr, Integer);

impl BitAnd<bool> for Expr<bool> {
    type Output = Expr<bool>;
    #[track_caller]
    fn bitand(self, r: bool) -> Expr<bool> {
        bin(BinaryOp::And, self, lit(r))
    }
}
impl BitOr<bool> for Expr<bool> {
    type Output = Expr<bool>;
    #[track_caller]
    fn bitor(self, r: bool) -> Expr<bool> {
        bin(BinaryOp::Or, self, lit(r))
    }
}

/// Vector times scalar (and the other arithmetic operators): the scalar is splatted.
macro_rules! vec_scalar_op {
    ($Tr:ident, $m:ident, $op:ident) => {
        impl<T: Numeric, const N: usize> $Tr<Expr<T>> for Expr<[T; N]>
        where
            [T; N]: Arith,
        {
            type Output = Expr<[T; N]>;
            #[track_caller]
            fn $m(self, r: Expr<T>) -> Expr<[T; N]> {
                bin(BinaryOp::$op, self, super::splat::<T, N>(r))
            }
        }
    };
}
vec_scalar_op!(Add, add, Add);
vec_scalar_op!(Sub, sub, Sub);
vec_scalar_op!(Mul, mul, Mul);
vec_scalar_op!(Div, div, Div);

/// Literal on the left: `2.0 * x`.
macro_rules! lhs_literal {
    ($($t:ty),*) => {$(
        impl Add<Expr<$t>> for $t { type Output = Expr<$t>; fn add(self, r: Expr<$t>) -> Expr<$t> { lit(self) + r } }
        impl Sub<Expr<$t>> for $t { type Output = Expr<$t>; fn sub(self, r: Expr<$t>) -> Expr<$t> { lit(self) - r } }
        impl Mul<Expr<$t>> for $t { type Output = Expr<$t>; fn mul(self, r: Expr<$t>) -> Expr<$t> { lit(self) * r } }
        impl Div<Expr<$t>> for $t { type Output = Expr<$t>; fn div(self, r: Expr<$t>) -> Expr<$t> { lit(self) / r } }
        impl Rem<Expr<$t>> for $t { type Output = Expr<$t>; fn rem(self, r: Expr<$t>) -> Expr<$t> { lit(self) % r } }
    )*};
}
lhs_literal!(i8, i16, i32, i64, u8, u16, u32, u64, half::f16, f32, f64);

/// Mixed-type arithmetic where one side widens losslessly into the other.
macro_rules! widening_ops {
    ($($a:ty => $($b:ty),*;)*) => {$($(
        impl Add<Expr<$a>> for Expr<$b> { type Output = Expr<$b>; fn add(self, r: Expr<$a>) -> Expr<$b> { self + r.cast::<$b>() } }
        impl Sub<Expr<$a>> for Expr<$b> { type Output = Expr<$b>; fn sub(self, r: Expr<$a>) -> Expr<$b> { self - r.cast::<$b>() } }
        impl Mul<Expr<$a>> for Expr<$b> { type Output = Expr<$b>; fn mul(self, r: Expr<$a>) -> Expr<$b> { self * r.cast::<$b>() } }
        impl Div<Expr<$a>> for Expr<$b> { type Output = Expr<$b>; fn div(self, r: Expr<$a>) -> Expr<$b> { self / r.cast::<$b>() } }
        impl Add<Expr<$b>> for Expr<$a> { type Output = Expr<$b>; fn add(self, r: Expr<$b>) -> Expr<$b> { self.cast::<$b>() + r } }
        impl Sub<Expr<$b>> for Expr<$a> { type Output = Expr<$b>; fn sub(self, r: Expr<$b>) -> Expr<$b> { self.cast::<$b>() - r } }
        impl Mul<Expr<$b>> for Expr<$a> { type Output = Expr<$b>; fn mul(self, r: Expr<$b>) -> Expr<$b> { self.cast::<$b>() * r } }
        impl Div<Expr<$b>> for Expr<$a> { type Output = Expr<$b>; fn div(self, r: Expr<$b>) -> Expr<$b> { self.cast::<$b>() / r } }
    )*)*};
}
widening_ops! {
    i8 => i16, i32, i64, f32, f64;
    i16 => i32, i64, f32, f64;
    i32 => i64, f64;
    u8 => u16, u32, u64, i16, i32, i64, f32, f64;
    u16 => u32, u64, i32, i64, f32, f64;
    u32 => u64, i64, f64;
    f32 => f64;
    half::f16 => f32, f64;
}

impl<T: Arith> Neg for Expr<T> {
    type Output = Expr<T>;
    #[track_caller]
    fn neg(self) -> Expr<T> {
        let a = id_of(self);
        node(IrExpr::Unary(UnaryOp::Neg, a))
    }
}

impl<T: Bits> Not for Expr<T> {
    type Output = Expr<T>;
    #[track_caller]
    fn not(self) -> Expr<T> {
        let a = id_of(self);
        node(IrExpr::Unary(UnaryOp::Not, a))
    }
}

impl<T: Arith> Expr<T> {
    /// `self == r`
    #[track_caller]
    pub fn eq(self, r: impl Into<Expr<T>>) -> Expr<T::Mask> {
        bin(BinaryOp::Eq, self, r.into())
    }
    /// `self != r`
    #[track_caller]
    pub fn ne(self, r: impl Into<Expr<T>>) -> Expr<T::Mask> {
        bin(BinaryOp::Ne, self, r.into())
    }
    /// `self < r`
    #[track_caller]
    pub fn lt(self, r: impl Into<Expr<T>>) -> Expr<T::Mask> {
        bin(BinaryOp::Lt, self, r.into())
    }
    /// `self <= r`
    #[track_caller]
    pub fn le(self, r: impl Into<Expr<T>>) -> Expr<T::Mask> {
        bin(BinaryOp::Le, self, r.into())
    }
    /// `self > r`
    #[track_caller]
    pub fn gt(self, r: impl Into<Expr<T>>) -> Expr<T::Mask> {
        bin(BinaryOp::Gt, self, r.into())
    }
    /// `self >= r`
    #[track_caller]
    pub fn ge(self, r: impl Into<Expr<T>>) -> Expr<T::Mask> {
        bin(BinaryOp::Ge, self, r.into())
    }
}

impl Expr<bool> {
    /// Logical and (both sides are evaluated; they have no side effects).
    #[track_caller]
    pub fn and(self, r: impl Into<Expr<bool>>) -> Expr<bool> {
        self & r.into()
    }
    /// Logical or.
    #[track_caller]
    pub fn or(self, r: impl Into<Expr<bool>>) -> Expr<bool> {
        self | r.into()
    }
    /// Logical not.
    #[track_caller]
    #[allow(clippy::should_implement_trait)] // `Not` is implemented too; this is for chaining
    pub fn not(self) -> Expr<bool> {
        !self
    }
    /// `self == r`
    #[track_caller]
    pub fn eq(self, r: impl Into<Expr<bool>>) -> Expr<bool> {
        bin(BinaryOp::Eq, self, r.into())
    }
    /// `self != r`
    #[track_caller]
    pub fn ne(self, r: impl Into<Expr<bool>>) -> Expr<bool> {
        bin(BinaryOp::Ne, self, r.into())
    }
}

impl<T: KernelType> Expr<T> {
    /// Converts the value to another component type of the same width (`Expr<f32>` to
    /// `Expr<i32>`, `Expr<[f32; 4]>` to `Expr<[u8; 4]>`). Float to integer saturates and maps
    /// NaN to 0; integer narrowing wraps; to `bool` is `!= 0`.
    #[track_caller]
    pub fn cast<U: KernelType>(self) -> Expr<U> {
        if U::TYPE.width != T::TYPE.width {
            super::record_error(format!(
                "cast from {} to {}: casts keep the width; use a vector constructor or extract",
                T::TYPE,
                U::TYPE
            ));
        }
        let a = id_of(self);
        node_typed(
            IrExpr::Cast(a, U::TYPE.scalar),
            Type {
                scalar: U::TYPE.scalar,
                width: T::TYPE.width,
            },
        )
    }

    /// Reinterprets the bits as another type of the same size (`f32` as `u32`, ...).
    #[track_caller]
    pub fn bitcast<U: KernelType>(self) -> Expr<U> {
        if U::TYPE.size() != T::TYPE.size() || U::TYPE.width != T::TYPE.width {
            super::record_error(format!(
                "bitcast from {} to {}: the types must have the same width and size",
                T::TYPE,
                U::TYPE
            ));
        }
        let a = id_of(self);
        node(IrExpr::Bitcast(a, U::TYPE))
    }
}

macro_rules! var_assign {
    ($Tr:ident, $m:ident, $op:tt, $bound:ident) => {
        impl<T: $bound, R: Into<Expr<T>>> $Tr<R> for Var<T> {
            #[track_caller]
            fn $m(&mut self, r: R) {
                let v = bin::<T, T>(BinaryOp::$op, self.get(), r.into());
                self.set(v);
            }
        }
    };
}
var_assign!(AddAssign, add_assign, Add, Arith);
var_assign!(SubAssign, sub_assign, Sub, Arith);
var_assign!(MulAssign, mul_assign, Mul, Arith);
var_assign!(DivAssign, div_assign, Div, Arith);
var_assign!(RemAssign, rem_assign, Rem, Arith);
var_assign!(BitAndAssign, bitand_assign, And, Bits);
var_assign!(BitOrAssign, bitor_assign, Or, Bits);
var_assign!(BitXorAssign, bitxor_assign, Xor, Bits);
var_assign!(ShlAssign, shl_assign, Shl, IntArith);
var_assign!(ShrAssign, shr_assign, Shr, IntArith);

//! Typed host values (constants) beside device values: `#[kernel]` wraps a host operand whose
//! Rust type is fixed by its definition (a `const W: usize`, `u32::MAX`, a suffixed literal, a
//! `#[stage]` parameter, a `let` with a type or initialized from those) in [`Staged`] when it
//! meets a device value in an operator, a comparison, the bounds of a device `for` loop or an
//! assignment to a device variable or memory element (`acc = W`, `acc += W`, `y[i] = W`). The value then converts to the
//! device value's type when it fits: integers to any integer type whose range holds the
//! value, integers to floats that represent it exactly, `f32` to `f64`.
//! A value that does not fit is an error of [`Kernel::build`](crate::Kernel::build) naming
//! the value, both types and the line; a pair of types that never converts (`f64` to `f32`)
//! is a compile error saying to write `as`.
//!
//! Untyped host values (`2`, `let k = 4;`) are not wrapped: Rust infers their type from the
//! device value beside them, as without `Staged`.

use super::types::{Integer, Numeric, ScalarType};
use super::{lit, Expr, Var};
use std::ops::*;

/// A typed host value used beside a device value in a `#[kernel]` (see the module docs). Only
/// generated code makes these; it converts to the other operand's type when its value fits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Staged<H>(pub H);

/// A host value of type `Self` that converts to a device value of type `T` when it fits (the
/// conversions of [`Staged`]).
#[diagnostic::on_unimplemented(
    message = "a host value of type `{Self}` cannot be used as a `{T}` beside a device value",
    label = "a `{Self}` host value beside a `{T}` device value",
    note = "strata converts a typed host value (a `const`, a `#[stage]` parameter) to the device value's type when that cannot lose it: integers to integers (the value is checked when the kernel is built) and to floats that hold it exactly, `f32` to `f64`; convert it yourself here, e.g. `W as {T}`"
)]
pub trait StagedAs<T: ScalarType>: Copy {
    /// The value as a literal of type `T`; a value that does not fit records a build error
    /// (at the caller's line) and gives `T`'s zero.
    #[track_caller]
    fn staged(self) -> Expr<T>;
}

macro_rules! int_to_int {
    ($($h:ty),*) => {$(
        int_to_int!(@to $h: i8, i16, i32, i64, u8, u16, u32, u64);
    )*};
    (@to $h:ty: $($t:ty),*) => {$(
        impl StagedAs<$t> for $h {
            #[track_caller]
            fn staged(self) -> Expr<$t> {
                match <$t>::try_from(self) {
                    Ok(v) => lit(v),
                    Err(_) => {
                        super::record_error(format!(
                            "the host value {self} ({}) does not fit the device value's type {}, beside which it is used; convert the device value (`.cast::<{}>()`) or use a smaller value",
                            stringify!($h),
                            stringify!($t),
                            stringify!($h),
                        ));
                        lit(0 as $t)
                    }
                }
            }
        }
    )*};
}
int_to_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! int_to_float {
    ($($h:ty),*) => {$(
        int_to_float!(@to $h: f32, f64);
    )*};
    (@to $h:ty: $($t:ty),*) => {$(
        impl StagedAs<$t> for $h {
            #[track_caller]
            fn staged(self) -> Expr<$t> {
                let f = self as $t;
                // Exact when converting back gives the value (`as` saturates, so a value past
                // the float's integer range comes back different).
                if f.is_finite() && f as i128 == self as i128 {
                    lit(f)
                } else {
                    super::record_error(format!(
                        "the host value {self} ({}) is not exactly a {}, beside which it is used; convert it yourself (`{} as {}`) if rounding is meant",
                        stringify!($h),
                        stringify!($t),
                        self,
                        stringify!($t),
                    ));
                    lit(0.0)
                }
            }
        }
    )*};
}
int_to_float!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! same {
    ($($h:ty => $t:ty),*) => {$(
        impl StagedAs<$t> for $h {
            #[track_caller]
            fn staged(self) -> Expr<$t> {
                lit(<$t>::from(self))
            }
        }
    )*};
}
same!(f32 => f32, f64 => f64, f32 => f64, bool => bool);

/// A typed host value assigned to a device variable (`x = W`, `x += W`), converted to the
/// variable's type.
#[track_caller]
pub fn staged_for<T: ScalarType, H: StagedAs<T>>(_var: &Var<T>, host: Staged<H>) -> Expr<T> {
    host.0.staged()
}

/// Memory whose elements a typed host value can be stored into (`y[i] = W`).
pub trait StagedStore {
    /// The element type.
    type Elem: ScalarType;
}

macro_rules! staged_store {
    ($($ty:ident),*) => {$(
        impl<T: ScalarType> StagedStore for super::$ty<T> {
            type Elem = T;
        }
    )*};
}
staged_store!(BufferParam, LocalArray, PrivateArray);

/// A typed host value stored into an element of `mem` (`y[i] = W`), converted to the
/// element type.
#[track_caller]
pub fn staged_elem<M: StagedStore, H: StagedAs<M::Elem>>(
    _mem: &M,
    host: Staged<H>,
) -> Expr<M::Elem> {
    host.0.staged()
}

/// A device value and a typed host value beside it in a comparison or a logical operator,
/// the host value converted to the device value's type.
#[track_caller]
pub fn staged_pair<T: ScalarType, H: StagedAs<T>>(
    device: Expr<T>,
    host: Staged<H>,
) -> (Expr<T>, Expr<T>) {
    (device, host.0.staged())
}

macro_rules! staged_op {
    ($Tr:ident, $m:ident, $bound:ident) => {
        impl<T: $bound, H: StagedAs<T>> $Tr<Staged<H>> for Expr<T> {
            type Output = Expr<T>;
            #[track_caller]
            fn $m(self, r: Staged<H>) -> Expr<T> {
                self.$m(r.0.staged())
            }
        }
        impl<T: $bound, H: StagedAs<T>> $Tr<Expr<T>> for Staged<H> {
            type Output = Expr<T>;
            #[track_caller]
            fn $m(self, r: Expr<T>) -> Expr<T> {
                self.0.staged().$m(r)
            }
        }
    };
}
staged_op!(Add, add, Numeric);
staged_op!(Sub, sub, Numeric);
staged_op!(Mul, mul, Numeric);
staged_op!(Div, div, Numeric);
staged_op!(Rem, rem, Numeric);
staged_op!(BitAnd, bitand, Integer);
staged_op!(BitOr, bitor, Integer);
staged_op!(BitXor, bitxor, Integer);
staged_op!(Shl, shl, Integer);
staged_op!(Shr, shr, Integer);

macro_rules! staged_bool_op {
    ($Tr:ident, $m:ident) => {
        impl $Tr<Staged<bool>> for Expr<bool> {
            type Output = Expr<bool>;
            #[track_caller]
            fn $m(self, r: Staged<bool>) -> Expr<bool> {
                self.$m(r.0)
            }
        }
        impl $Tr<Expr<bool>> for Staged<bool> {
            type Output = Expr<bool>;
            #[track_caller]
            fn $m(self, r: Expr<bool>) -> Expr<bool> {
                lit(self.0).$m(r)
            }
        }
    };
}
staged_bool_op!(BitAnd, bitand);
staged_bool_op!(BitOr, bitor);

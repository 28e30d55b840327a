//! Rust types that kernels compute with, and how they map to IR types.
//!
//! Scalars are Rust's own (`f32`, `u32`, `bool`, ...) and `half::f16` (re-exported as
//! `strata::f16`); vectors are Rust arrays `[T; 2]`,
//! `[T; 3]` and `[T; 4]`. [`Element`]s are the types a [`Buffer`](crate::Buffer) can hold.

use crate::ir::{ElementLayout, Literal, Scalar, Type};

/// Private supertraits: nothing outside strata implements the kernel types, and the
/// evaluator's arithmetic ([`crate::ir::eval`]) that strata's generic code uses on them
/// (folding gathers on the host, the CPU bodies of stubs) is not part of their contract.
mod sealed {
    pub trait Sealed {}
    /// A numeric scalar's arithmetic in the evaluator.
    pub trait SealedNum: crate::ir::eval::Num {}
    /// An integer's arithmetic in the evaluator.
    pub trait SealedInt: crate::ir::eval::Int {}
    /// A float's arithmetic in the evaluator.
    pub trait SealedFloat: crate::ir::eval::Float {}
    impl<T: crate::ir::eval::Num> SealedNum for T {}
    impl<T: crate::ir::eval::Int> SealedInt for T {}
    impl<T: crate::ir::eval::Float> SealedFloat for T {}
}

/// A type a kernel value can have: a scalar or a vector of 2 to 4 scalars.
pub trait KernelType: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The IR type.
    const TYPE: Type;
}

/// A scalar kernel type.
pub trait ScalarType: KernelType {
    /// The IR scalar.
    const SCALAR: Scalar;
    /// The value as an IR literal.
    fn literal(self) -> Literal;
}

/// A numeric scalar (integers and floats). It implies [`Element`] and [`Arith`], so generic
/// code over `T: Numeric` (or `Integer`, `Float`) can use buffers of `T` and the operators on
/// `Expr<T>`. Sealed: implemented for strata's scalar types only.
pub trait Numeric:
    ScalarType + Value + Arith<Mask = bool> + bytemuck::Pod + PartialOrd + sealed::SealedNum
{
}
/// An integer scalar (implies [`IntArith`] and [`Bits`]). Sealed.
pub trait Integer: Numeric + IntArith + Bits + sealed::SealedInt {}
/// A float scalar (`f16`, `f32`, `f64`; implies [`FloatArith`]). Sealed.
pub trait Float: Numeric + FloatArith + sealed::SealedFloat {}

/// A type a buffer can hold: numeric scalars, 2-, 3- or 4-vectors of them, and user structs
/// with `#[derive(Element)]`. A 3-vector is packed as in Rust (`[f32; 3]` is 12 bytes: RGB
/// pixels, positions), not padded to 4 components as OpenCL's `float3`.
///
/// # Safety
/// [`LAYOUT`](Element::LAYOUT) must describe `Self`'s memory exactly (size, alignment, and each
/// field's offset and type): kernels on every backend address the buffer's bytes by it.
/// Implement it with `#[derive(Element)]`, which checks all of that at compile time.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a buffer element",
    note = "buffers hold numeric scalars, their 2-, 3- and 4-vectors (`[f32; 3]`), and `#[repr(C)]` structs of those with `#[derive(strata::Element)]`"
)]
pub unsafe trait Element: bytemuck::Pod + Send + Sync + 'static {
    /// How the element is laid out.
    const LAYOUT: ElementLayout;
    /// The element's value inside a kernel: [`Expr<Self>`](super::Expr) for scalars and
    /// vectors, a struct of device values for a struct.
    type Dev;
    /// The element (or a field of that type) at a place in a buffer of structs, read with
    /// `load` and written with `store` ([`Place`](super::Place) for scalars and vectors).
    type Place: super::FieldAccess<Value = Self::Dev>;
    /// The place at `at` (called by the place of the enclosing struct).
    #[doc(hidden)]
    fn place(at: super::FieldPlace) -> Self::Place;
    /// Declares the by-value parameter(s) `name` of this type (a field of a struct passed by
    /// value): one per scalar.
    #[doc(hidden)]
    fn declare_value(name: &str) -> Self::Dev;
    /// Reads element `index` of `buf` (a struct field by field).
    #[doc(hidden)]
    #[track_caller]
    fn load_elem(buf: &super::BufferParam<Self>, index: crate::ir::ExprId) -> Self::Dev {
        super::FieldAccess::load(&buf.item_at(index))
    }
    /// Writes element `index` of `buf` (a struct field by field).
    #[doc(hidden)]
    #[track_caller]
    fn store_elem(buf: &super::BufferParam<Self>, index: crate::ir::ExprId, v: Self::Dev) {
        super::FieldAccess::store(&buf.item_at(index), v)
    }
}

/// A buffer element that is also a kernel value: a scalar or a vector (every [`Element`]
/// except structs).
pub trait Value: Element<Dev = super::Expr<Self>, Place = super::Place<Self>> + KernelType {}
impl<T: Element<Dev = super::Expr<T>, Place = super::Place<T>> + KernelType> Value for T {}

macro_rules! value_element {
    ($($t:ty),*) => {$(
        // SAFETY: a scalar or vector's layout is its IR type's (size and alignment of the
        // component, components packed).
        unsafe impl Element for $t {
            const LAYOUT: ElementLayout = ElementLayout::Value(<$t as KernelType>::TYPE);
            type Dev = super::Expr<$t>;
            type Place = super::Place<$t>;
            fn place(at: super::FieldPlace) -> Self::Place {
                super::Place::new(at)
            }
            fn declare_value(name: &str) -> Self::Dev {
                super::structs::value_param::<$t>(name)
            }
            #[track_caller]
            fn load_elem(buf: &super::BufferParam<Self>, index: crate::ir::ExprId) -> Self::Dev {
                buf.load_value(index)
            }
            #[track_caller]
            fn store_elem(buf: &super::BufferParam<Self>, index: crate::ir::ExprId, v: Self::Dev) {
                buf.store_value(index, v)
            }
        }
    )*};
}

macro_rules! scalar {
    ($t:ty, $s:ident, $($marker:ident),*) => {
        impl sealed::Sealed for $t {}
        impl KernelType for $t {
            const TYPE: Type = Type::scalar(Scalar::$s);
        }
        impl ScalarType for $t {
            const SCALAR: Scalar = Scalar::$s;
            fn literal(self) -> Literal {
                crate::ir::eval::Num::to_lit(self)
            }
        }
        value_element!($t, [$t; 2], [$t; 3], [$t; 4]);
        impl Numeric for $t {}
        $( impl $marker for $t {} )*
        impl sealed::Sealed for [$t; 2] {}
        impl sealed::Sealed for [$t; 3] {}
        impl sealed::Sealed for [$t; 4] {}
        impl KernelType for [$t; 2] {
            const TYPE: Type = Type::vector(Scalar::$s, 2);
        }
        impl KernelType for [$t; 3] {
            const TYPE: Type = Type::vector(Scalar::$s, 3);
        }
        impl KernelType for [$t; 4] {
            const TYPE: Type = Type::vector(Scalar::$s, 4);
        }
    };
}

scalar!(i8, I8, Integer);
scalar!(i16, I16, Integer);
scalar!(i32, I32, Integer);
scalar!(i64, I64, Integer);
scalar!(u8, U8, Integer);
scalar!(u16, U16, Integer);
scalar!(u32, U32, Integer);
scalar!(u64, U64, Integer);
scalar!(half::f16, F16, Float);
scalar!(f32, F32, Float);
scalar!(f64, F64, Float);

impl sealed::Sealed for bool {}
impl KernelType for bool {
    const TYPE: Type = Type::BOOL;
}
impl ScalarType for bool {
    const SCALAR: Scalar = Scalar::Bool;
    fn literal(self) -> Literal {
        Literal::bool(self)
    }
}
impl sealed::Sealed for [bool; 2] {}
impl sealed::Sealed for [bool; 3] {}
impl sealed::Sealed for [bool; 4] {}
impl KernelType for [bool; 2] {
    const TYPE: Type = Type::vector(Scalar::Bool, 2);
}
impl KernelType for [bool; 3] {
    const TYPE: Type = Type::vector(Scalar::Bool, 3);
}
impl KernelType for [bool; 4] {
    const TYPE: Type = Type::vector(Scalar::Bool, 4);
}

/// A vector kernel type `[T; N]`.
pub trait VectorType: KernelType {
    /// Component type.
    type Component: ScalarType;
    /// Number of components.
    const WIDTH: u8;
}

impl<T: ScalarType, const N: usize> VectorType for [T; N]
where
    [T; N]: KernelType,
{
    type Component = T;
    const WIDTH: u8 = N as u8;
}

/// Implemented by `From` when a conversion is lossless, which is when strata converts
/// implicitly (see [`Scalar::widens_to`]).
pub trait WidensTo<T> {}

macro_rules! widens {
    ($from:ty => $($to:ty),*) => { $( impl WidensTo<$to> for $from {} )* };
}
widens!(i8 => i16, i32, i64, f32, f64);
widens!(i16 => i32, i64, f32, f64);
widens!(i32 => i64, f64);
widens!(u8 => u16, u32, u64, i16, i32, i64, f32, f64);
widens!(u16 => u32, u64, i32, i64, f32, f64);
widens!(u32 => u64, i64, f64);
widens!(f32 => f64);
widens!(half::f16 => f32, f64);

/// Types with arithmetic (`+ - * / %`, `min`, `max`, comparisons): numeric scalars and vectors.
pub trait Arith: KernelType {
    /// The matching `bool` type: `bool` for scalars, `[bool; N]` for vectors.
    type Mask: Bits;
    /// The component type.
    type Component: Numeric;
}
/// Integer scalars and vectors (bitwise operators, shifts, integer built-ins).
pub trait IntArith: Arith + Bits {
    /// The unsigned type of the same size and width (the result of `abs_diff`).
    type Unsigned: IntArith<Mask = Self::Mask>;
}
/// Float scalars and vectors (the float math built-ins).
pub trait FloatArith: Arith {
    /// `i32` of the same width: the exponent argument of `ldexp`, `pown`, `rootn` and the
    /// result of `ilogb`.
    type Int: IntArith<Mask = Self::Mask>;
}
/// Types with `& | ^ !`: integers, `bool`, and vectors of them.
pub trait Bits: KernelType {}

macro_rules! arith_types {
    ($($t:ty),*) => {$(
        impl Arith for $t { type Mask = bool; type Component = $t; }
        impl Arith for [$t; 2] { type Mask = [bool; 2]; type Component = $t; }
        impl Arith for [$t; 3] { type Mask = [bool; 3]; type Component = $t; }
        impl Arith for [$t; 4] { type Mask = [bool; 4]; type Component = $t; }
    )*};
}
arith_types!(i8, i16, i32, i64, u8, u16, u32, u64, half::f16, f32, f64);

/// Implements `$tr` for scalar `$t` and its 2-, 3- and 4-vectors, each associated type the
/// scalar or the vector of the same width of the type given.
macro_rules! for_widths {
    ($tr:ident for $($t:ty { $($name:ident = $a:ty),* });* $(;)?) => {$(
        impl $tr for $t { $(type $name = $a;)* }
        impl $tr for [$t; 2] { $(type $name = [$a; 2];)* }
        impl $tr for [$t; 3] { $(type $name = [$a; 3];)* }
        impl $tr for [$t; 4] { $(type $name = [$a; 4];)* }
    )*};
}
for_widths!(IntArith for
    i8 { Unsigned = u8 }; i16 { Unsigned = u16 }; i32 { Unsigned = u32 }; i64 { Unsigned = u64 };
    u8 { Unsigned = u8 }; u16 { Unsigned = u16 }; u32 { Unsigned = u32 }; u64 { Unsigned = u64 });
for_widths!(FloatArith for half::f16 { Int = i32 }; f32 { Int = i32 }; f64 { Int = i32 });

/// Types whose bits can be selected (`bitselect`): integers, and floats through the unsigned
/// integer of the same size.
pub trait HasBits: Arith {
    /// The unsigned integer type with the same bits.
    type Bits: IntArith<Mask = Self::Mask>;
}
/// 32-bit integer scalars and vectors (`mul24`, `mad24`).
pub trait Int32: IntArith {}
/// 8-, 16- and 32-bit integers, which `upsample` joins into the type twice as wide.
pub trait Upsample: IntArith {
    /// The type twice as wide (signed when `Self` is).
    type Wide: IntArith<Mask = Self::Mask>;
}
for_widths!(HasBits for
    i8 { Bits = u8 }; i16 { Bits = u16 }; i32 { Bits = u32 }; i64 { Bits = u64 };
    u8 { Bits = u8 }; u16 { Bits = u16 }; u32 { Bits = u32 }; u64 { Bits = u64 };
    half::f16 { Bits = u16 }; f32 { Bits = u32 }; f64 { Bits = u64 });
for_widths!(Upsample for
    i8 { Wide = i16 }; i16 { Wide = i32 }; i32 { Wide = i64 };
    u8 { Wide = u16 }; u16 { Wide = u32 }; u32 { Wide = u64 });
for_widths!(Int32 for i32 {}; u32 {});

macro_rules! bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {}
        impl Bits for [$t; 2] {}
        impl Bits for [$t; 3] {}
        impl Bits for [$t; 4] {}
    )*};
}
bits!(bool, i8, i16, i32, i64, u8, u16, u32, u64);

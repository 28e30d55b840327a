//! Types of the kernel IR: scalars, small vectors, literals, address spaces and access modes.
//!
//! Every expression in a [`Function`](super::Function) carries one [`Type`]: a scalar or a vector
//! of 2, 3 or 4 scalars of the same kind. Memory (buffers, local arrays, private arrays) holds
//! elements of a `Type`; arrays are not values.
//!
//! [`Scalar::widens_to`] is the one definition of the implicit-conversion rule (the builder's
//! mixed operators and `#[kernel]`'s typed host values follow it). A [`Literal`] keeps its
//! value as bits, so a folded `-0.0` or NaN payload is the one the program wrote.

use std::fmt;

/// A scalar type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Scalar {
    /// A truth value. In memory a `bool` is one byte, 0 or 1.
    Bool,
    /// Signed two's-complement integers.
    I8,
    /// 16-bit signed integer.
    I16,
    /// 32-bit signed integer.
    I32,
    /// 64-bit signed integer.
    I64,
    /// Unsigned integers.
    U8,
    /// 16-bit unsigned integer.
    U16,
    /// 32-bit unsigned integer.
    U32,
    /// 64-bit unsigned integer.
    U64,
    /// IEEE-754 binary16 (half precision, `half::f16`): every operation is the exact result
    /// rounded to nearest even (see the IR's module docs). Kernels that use it need a device
    /// with `DeviceInfo::supports_f16`.
    F16,
    /// IEEE-754 binary32.
    F32,
    /// IEEE-754 binary64.
    F64,
}

impl Scalar {
    /// Every scalar type, in declaration order.
    pub const ALL: [Scalar; 12] = [
        Scalar::Bool,
        Scalar::I8,
        Scalar::I16,
        Scalar::I32,
        Scalar::I64,
        Scalar::U8,
        Scalar::U16,
        Scalar::U32,
        Scalar::U64,
        Scalar::F16,
        Scalar::F32,
        Scalar::F64,
    ];

    /// Size in bytes.
    pub const fn size(self) -> usize {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }

    /// Size in bits.
    pub const fn bits(self) -> u32 {
        self.size() as u32 * 8
    }

    /// `true` for `f16`, `f32` and `f64`.
    pub const fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::F32 | Scalar::F64)
    }

    /// `true` for the signed and unsigned integer types (not `bool`).
    pub const fn is_int(self) -> bool {
        !self.is_float() && !matches!(self, Scalar::Bool)
    }

    /// `true` for signed integers and floats.
    pub const fn is_signed(self) -> bool {
        matches!(
            self,
            Scalar::I8
                | Scalar::I16
                | Scalar::I32
                | Scalar::I64
                | Scalar::F16
                | Scalar::F32
                | Scalar::F64
        )
    }

    /// `true` for numeric types (integers and floats).
    pub const fn is_numeric(self) -> bool {
        !matches!(self, Scalar::Bool)
    }

    /// The Rust spelling of the type (`f32`, `u64`, ...), also used by the text form.
    pub const fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::F16 => "f16",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// Whether a value of `self` converts to `to` without loss, which is when strata converts
    /// implicitly (Goopax's rule): integer widening that keeps the sign rules (unsigned may widen
    /// into a larger signed type, signed never becomes unsigned), `f16` to `f32` and `f64`, `f32`
    /// to `f64`, and integers
    /// into a float type whose mantissa holds every value (8- and 16-bit into `f32`, up to
    /// 32-bit into `f64`). Narrowing, float to integer and signed to unsigned need a cast.
    pub const fn widens_to(self, to: Scalar) -> bool {
        use Scalar::*;
        if self as u8 == to as u8 {
            return true;
        }
        matches!(
            (self, to),
            (I8, I16 | I32 | I64)
                | (I16, I32 | I64)
                | (I32, I64)
                | (U8, U16 | U32 | U64 | I16 | I32 | I64)
                | (U16, U32 | U64 | I32 | I64)
                | (U32, U64 | I64)
                | (F32, F64)
                | (F16, F32 | F64)
                | (I8 | I16 | U8 | U16, F32 | F64)
                | (I32 | U32, F64)
        )
    }
}

/// A value type: a scalar (`width == 1`) or a vector of 2, 3 or 4 scalars.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Type {
    /// Component type.
    pub scalar: Scalar,
    /// Number of components: 1, 2, 3 or 4.
    pub width: u8,
}

impl Type {
    /// `bool`.
    pub const BOOL: Type = Type::scalar(Scalar::Bool);
    /// `i32`.
    pub const I32: Type = Type::scalar(Scalar::I32);
    /// `u32`.
    pub const U32: Type = Type::scalar(Scalar::U32);
    /// `i64`.
    pub const I64: Type = Type::scalar(Scalar::I64);
    /// `u64`.
    pub const U64: Type = Type::scalar(Scalar::U64);
    /// `f32`.
    pub const F32: Type = Type::scalar(Scalar::F32);
    /// `f64`.
    pub const F64: Type = Type::scalar(Scalar::F64);

    /// A scalar type.
    pub const fn scalar(scalar: Scalar) -> Type {
        Type { scalar, width: 1 }
    }

    /// A vector type of `width` components (2, 3 or 4).
    pub const fn vector(scalar: Scalar, width: u8) -> Type {
        Type { scalar, width }
    }

    /// `true` when `width > 1`.
    pub const fn is_vector(self) -> bool {
        self.width > 1
    }

    /// The type of one component.
    pub const fn component(self) -> Type {
        Type::scalar(self.scalar)
    }

    /// Size in bytes of the packed components: a 3-vector is 3 components, in registers and in
    /// buffers alike (the code generators index buffers of vectors by component, so no C
    /// vector type pads them to 4; local memory holds no 3-vectors).
    pub const fn size(self) -> usize {
        self.scalar.size() * self.width as usize
    }

    /// The same shape with another component type.
    pub const fn with_scalar(self, scalar: Scalar) -> Type {
        Type {
            scalar,
            width: self.width,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.width == 1 {
            write!(f, "{}", self.scalar)
        } else {
            write!(f, "{}x{}", self.scalar, self.width)
        }
    }
}

/// A scalar constant: its type and its bits, zero-extended to 64 bits (floats as their IEEE
/// bit patterns, so `-0.0`, `0.0` and every NaN payload stay distinct).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Literal {
    /// The scalar type.
    pub scalar: Scalar,
    /// The bits, zero-extended.
    pub bits: u64,
}

impl Literal {
    /// A literal from its type and bits; bits beyond the type's size are cleared.
    pub const fn from_bits(scalar: Scalar, bits: u64) -> Literal {
        let b = scalar.bits();
        let bits = if b == 64 {
            bits
        } else {
            bits & ((1u64 << b) - 1)
        };
        Literal { scalar, bits }
    }

    /// `true` or `false`.
    pub const fn bool(v: bool) -> Literal {
        Literal::from_bits(Scalar::Bool, v as u64)
    }

    /// The value as a signed 128-bit integer (integers and bool only; floats give their value
    /// truncated towards zero).
    pub fn as_i128(self) -> i128 {
        match self.scalar {
            Scalar::Bool | Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 => {
                self.bits as i128
            }
            Scalar::I8 => self.bits as u8 as i8 as i128,
            Scalar::I16 => self.bits as u16 as i16 as i128,
            Scalar::I32 => self.bits as u32 as i32 as i128,
            Scalar::I64 => self.bits as i64 as i128,
            Scalar::F16 => half::f16::from_bits(self.bits as u16).to_f64() as i128,
            Scalar::F32 => f32::from_bits(self.bits as u32) as i128,
            Scalar::F64 => f64::from_bits(self.bits) as i128,
        }
    }

    /// The value as `f64` (exact for every type but 64-bit integers beyond 2^53).
    pub fn as_f64(self) -> f64 {
        match self.scalar {
            Scalar::F16 => half::f16::from_bits(self.bits as u16).to_f64(),
            Scalar::F32 => f32::from_bits(self.bits as u32) as f64,
            Scalar::F64 => f64::from_bits(self.bits),
            _ => self.as_i128() as f64,
        }
    }

    /// `true` when the value is zero (`-0.0` counts as zero).
    pub fn is_zero(self) -> bool {
        match self.scalar {
            Scalar::F16 => self.bits & 0x7fff == 0,
            Scalar::F32 => f32::from_bits(self.bits as u32) == 0.0,
            Scalar::F64 => f64::from_bits(self.bits) == 0.0,
            _ => self.bits == 0,
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.scalar {
            Scalar::Bool => write!(f, "{}", self.bits != 0),
            Scalar::F16 => {
                let v = half::f16::from_bits(self.bits as u16);
                if v.is_nan() {
                    write!(f, "NaN(0x{:04x})f16", self.bits)
                } else {
                    write!(f, "{:?}f16", v.to_f32())
                }
            }
            Scalar::F32 => {
                let v = f32::from_bits(self.bits as u32);
                write!(f, "{v:?}f32")
            }
            Scalar::F64 => {
                let v = f64::from_bits(self.bits);
                write!(f, "{v:?}f64")
            }
            s => write!(f, "{}{}", self.as_i128(), s.name()),
        }
    }
}

/// Where memory lives.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AddressSpace {
    /// Device memory visible to every work-item (buffers). OpenCL `__global`, CUDA global.
    Global,
    /// Memory shared by the work-items of one work-group. OpenCL `__local`, CUDA `__shared__`.
    Local,
    /// Memory of one work-item (variables, private arrays).
    Private,
    /// Read-only device memory. OpenCL `__constant`, CUDA `__constant__`.
    Constant,
}

/// How a kernel may use a buffer parameter.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Access {
    /// Loads only.
    Read,
    /// Stores only (loads are a validation error).
    Write,
    /// Loads, stores and atomics.
    ReadWrite,
    /// Loads only, from a small buffer in the constant address space (OpenCL `__constant`;
    /// elsewhere a read-only buffer): for coefficients every work-item reads. Its size is
    /// checked at launch against the device's limit (`DeviceInfo::max_constant_buffer_size`).
    Constant,
}

impl Access {
    /// `true` for `Read`, `ReadWrite` and `Constant`.
    pub const fn can_read(self) -> bool {
        matches!(self, Access::Read | Access::ReadWrite | Access::Constant)
    }
    /// `true` for `Read` and `Constant`: the kernel never writes it.
    pub const fn is_read_only(self) -> bool {
        matches!(self, Access::Read | Access::Constant)
    }
    /// `true` for `Write` and `ReadWrite`.
    pub const fn can_write(self) -> bool {
        matches!(self, Access::Write | Access::ReadWrite)
    }
    /// `read`, `write`, `read_write` or `constant`.
    pub const fn name(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::ReadWrite => "read_write",
            Access::Constant => "constant",
        }
    }
}

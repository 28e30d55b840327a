//! The kernel builder: kernels written as Rust closures over handle types.
//!
//! A kernel body is an ordinary Rust closure that runs once, when the kernel is built, and
//! *records* what it does into the IR. Values of type [`Expr<T>`] stand for values computed on
//! the device; ordinary Rust values and loops are compile-time constants and unrolled code
//! (multi-staging): `for k in 0..4 { acc += x.at(i * 4 + k) }` emits four loads, while
//! [`for_range`] emits a device loop.
//!
//! ```
//! use strata::prelude::*;
//! let saxpy = Kernel::build("saxpy", |k| {
//!     let a = k.scalar::<f32>("a");
//!     let x = k.read::<f32>("x");
//!     let y = k.read_write::<f32>("y");
//!     let i = global_id(0);
//!     if_(i.lt(x.len()), || y.set(i, a * x.at(i) + y.at(i)));
//! })
//! .unwrap();
//! ```
//!
//! Recording uses a per-thread context that [`Kernel::build`](crate::Kernel::build) opens and
//! closes; the free functions ([`global_id`], [`if_`], [`barrier`], ...) and the operators on
//! `Expr` append to the kernel being built. Calling them outside a build panics with a message
//! saying so: that is a bug in the calling program, not bad input.

mod collectives;
mod control;
mod convert;
mod gather;
mod math;
mod memory;
mod ops;
mod pitched;
pub(crate) mod staged;
mod structs;
pub mod stub;
mod subgroup;
mod swizzle;
mod trace;
pub use math::{splat, vec2, vec3, vec4};
pub use pitched::{BufferParam2, BufferParam3, Coords, PitchedParam};
pub use stub::{Stub, StubArgs};
pub mod types;

pub use crate::ir::abi::{ElementLayout, FieldLayout, StructLayout};
pub use crate::ir::{GatherOp, MemOrder, MemScope};
pub use convert::Rounding;
pub use math::select_each;
pub use structs::{array_places, ByValue, FieldAccess, FieldPlace, Place};
pub use subgroup::{
    max_sub_group_size, num_sub_groups, sub_group_all, sub_group_any, sub_group_ballot,
    sub_group_broadcast, sub_group_id, sub_group_local_id, sub_group_reduce_add,
    sub_group_reduce_max, sub_group_reduce_min, sub_group_scan_exclusive_add,
    sub_group_scan_exclusive_max, sub_group_scan_exclusive_min, sub_group_scan_inclusive_add,
    sub_group_scan_inclusive_max, sub_group_scan_inclusive_min, sub_group_shuffle,
    sub_group_shuffle_down, sub_group_shuffle_up, sub_group_shuffle_xor, sub_group_size,
};
pub use types::{
    Arith, Bits, Element, Float, FloatArith, HasBits, Int32, IntArith, Integer, KernelType,
    Numeric, ScalarType, Upsample, Value, VectorType, WidensTo,
};

pub use collectives::{
    barrier, barrier_global, barrier_local, fence, group_all, group_any, group_broadcast,
    group_reduce_add, group_reduce_max, group_reduce_min, group_reduce_with,
    group_scan_exclusive_add, group_scan_exclusive_max, group_scan_exclusive_min,
    group_scan_inclusive_add, group_scan_inclusive_max, group_scan_inclusive_min, mem_fence,
};
pub use control::{
    break_, continue_, current_loop, for_range, for_step, if_, loop_, return_, select, while_,
    IfChain, LoopLabel,
};
pub use gather::GatherHandle;
pub use memory::{
    private_array, var, var_named, BufferParam, Index, KernelDef, LocalArray, Ordered,
    PrivateArray, Var,
};
pub use trace::{record, RecordError};

pub(crate) use control::block_path;
pub(crate) use memory::{declare_var, kernel_def};
pub(crate) use trace::{expr_of, id_of, node, node_typed, record_error};
// For the other rooms of the builder.
use collectives::collective;
use memory::{declare_param, load, store};
use trace::{at_str, check_handle, with};

use crate::ir::{Builtin, Expr as IrExpr, ExprId, Stmt, Type};
use std::marker::PhantomData;
use std::panic::Location;

/// A value computed on the device, of kernel type `T`. Cheap to copy.
#[derive(Clone, Copy)]
pub struct Expr<T> {
    pub(crate) id: ExprId,
    trace: u32,
    _t: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Expr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Expr(%{})", self.id)
    }
}

impl<T: KernelType> Expr<T> {
    /// Gives the value a name that appears in the IR text and in generated code, and computes it
    /// at this point.
    #[track_caller]
    pub fn named(self, name: &str) -> Expr<T> {
        let at = Location::caller();
        with(|t| {
            let id = t.check(self, at);
            let v = t.new_value(T::TYPE, Some(name.to_string()));
            t.push(Stmt::Let { value: v, expr: id });
            t.value_expr(v, T::TYPE)
        })
    }

    /// The IR type of the value.
    pub fn ty(self) -> Type {
        T::TYPE
    }
}

/// A constant.
pub fn lit<T: ScalarType>(v: T) -> Expr<T> {
    node(IrExpr::Literal(v.literal()))
}

impl<T: ScalarType> From<T> for Expr<T> {
    fn from(v: T) -> Self {
        lit(v)
    }
}

/// A value that is, or becomes, an `Expr<T>` of exactly the type `T`: an `Expr<T>` or a Rust
/// scalar of type `T` (recorded as a literal). Unlike `Into<Expr<T>>`, which also widens
/// (`Expr<u8>` into `Expr<u32>`), it has one `T` for each value, so a generic function taking
/// it infers `T` from its arguments: [`select`]`(c, lit(255u8), lit(0u8))` is an `Expr<u8>`,
/// and `select(c, x, 0.0)` takes the type of `x`.
pub trait IntoExpr<T: KernelType> {
    /// The value as an expression.
    fn into_expr(self) -> Expr<T>;
}

impl<T: KernelType> IntoExpr<T> for Expr<T> {
    fn into_expr(self) -> Expr<T> {
        self
    }
}

impl<T: ScalarType> IntoExpr<T> for T {
    fn into_expr(self) -> Expr<T> {
        lit(self)
    }
}

macro_rules! widening_from {
    ($($from:ty => $($to:ty),*;)*) => {$($(
        impl From<Expr<$from>> for Expr<$to> {
            /// Lossless implicit conversion.
            fn from(e: Expr<$from>) -> Self {
                e.cast::<$to>()
            }
        }
    )*)*};
}
widening_from! {
    i8 => i16, i32, i64, f32, f64;
    i16 => i32, i64, f32, f64;
    i32 => i64, f64;
    u8 => u16, u32, u64, i16, i32, i64, f32, f64;
    u16 => u32, u64, i32, i64, f32, f64;
    u32 => u64, i64, f64;
    f32 => f64;
    half::f16 => f32, f64;
}

// ---------------------------------------------------------------------------------------------
// Work-item ids

#[track_caller]
pub(crate) fn builtin(b: Builtin) -> Expr<u32> {
    if let Some(d) = b.dim() {
        if d > 2 {
            record_error(format!(
                "{}({d}): the dimension must be 0, 1 or 2",
                b.name()
            ));
        }
    }
    node(IrExpr::Builtin(b))
}

/// Index of this work-item in the launch, in dimension `dim` (0, 1 or 2). OpenCL
/// `get_global_id`; CUDA `blockIdx * blockDim + threadIdx`.
#[track_caller]
pub fn global_id(dim: u8) -> Expr<u32> {
    builtin(Builtin::GlobalId(dim))
}
/// Index of this work-item in its work-group. OpenCL `get_local_id`; CUDA `threadIdx`.
#[track_caller]
pub fn local_id(dim: u8) -> Expr<u32> {
    builtin(Builtin::LocalId(dim))
}
/// Index of this work-group. OpenCL `get_group_id`; CUDA `blockIdx`.
#[track_caller]
pub fn group_id(dim: u8) -> Expr<u32> {
    builtin(Builtin::GroupId(dim))
}
/// Number of work-items in the launch. OpenCL `get_global_size`; CUDA `gridDim * blockDim`.
#[track_caller]
pub fn global_size(dim: u8) -> Expr<u32> {
    builtin(Builtin::GlobalSize(dim))
}
/// Number of work-items in a work-group. OpenCL `get_local_size`; CUDA `blockDim`.
#[track_caller]
pub fn local_size(dim: u8) -> Expr<u32> {
    builtin(Builtin::LocalSize(dim))
}
/// Number of work-groups. OpenCL `get_num_groups`; CUDA `gridDim`.
#[track_caller]
pub fn num_groups(dim: u8) -> Expr<u32> {
    builtin(Builtin::NumGroups(dim))
}
/// Linear index of this work-item in its work-group.
#[track_caller]
pub fn local_linear_id() -> Expr<u32> {
    builtin(Builtin::LocalLinearId)
}
/// Linear index of this work-group.
#[track_caller]
pub fn group_linear_id() -> Expr<u32> {
    builtin(Builtin::GroupLinearId)
}
/// The work-item's global id in dimensions 0 and 1, as a vector (`.x()`, `.y()`).
#[track_caller]
pub fn global_id2() -> Expr<[u32; 2]> {
    vec2::<u32>(global_id(0), global_id(1))
}
/// The work-item's global id in dimensions 0, 1 and 2, as a vector.
#[track_caller]
pub fn global_id3() -> Expr<[u32; 3]> {
    math::vec3::<u32>(global_id(0), global_id(1), global_id(2))
}
/// Whether every coordinate of `id` is below `extent`'s: the guard of an n-D launch that
/// [`NdRange::covering`](crate::NdRange::covering) rounded up, such as
/// `in_bounds(global_id2(), vec2(w, h))`.
#[track_caller]
pub fn in_bounds<const N: usize>(
    id: Expr<[u32; N]>,
    extent: impl Into<Expr<[u32; N]>>,
) -> Expr<bool>
where
    [u32; N]: Arith<Mask = [bool; N]>,
    [bool; N]: KernelType,
{
    id.lt(extent).all()
}

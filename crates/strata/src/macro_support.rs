//! Hooks for the code that `#[kernel]` generates (the `strata-macros` crate), as
//! `strata::__macro_support` (hidden from the docs: not part of strata's API).
//!
//! Everything here is a thin, type-inference-friendly wrapper over the builder API, so that a
//! kernel written as a plain Rust function records exactly the IR that the same kernel written
//! with the builder records. The generics differ from the builder's in one way: a value that
//! becomes an `Expr<T>` is taken as [`IntoExpr<T>`], which (unlike `Into<Expr<T>>`) has no
//! widening conversions, so `T` is inferred from whichever argument fixes it
//! (`for_range(0, n, ..)` with `n: Expr<u32>` counts in `u32`).
//!
//! These functions are public because generated code calls them from the user's crate; they
//! are not meant to be called by hand, although doing so is harmless. The module sits beside
//! the builder, not in it: the builder's public API stays what users call.

use crate::builder::{
    self, BufferParam, Coords, Element, Expr, FieldAccess, GatherHandle, Index, Integer, IntoExpr,
    KernelDef, KernelType, LocalArray, Numeric, PitchedParam, PrivateArray, ScalarType, Value, Var,
};
use crate::ir;
use std::cell::Cell;
use std::marker::PhantomData;

/// `ps[i].f = v`: writes a field of an element of a buffer of structs.
#[track_caller]
pub fn store_field<P: FieldAccess>(place: &P, v: impl Into<P::Value>) {
    place.store(v.into())
}

pub use crate::builder::staged::{
    staged_elem, staged_for, staged_pair, Staged, StagedAs, StagedStore,
};

/// A typed host value beside a device value converts when it fits (see [`Staged`]): the
/// bounds of a device `for` loop take it like an operator does.
impl<T: ScalarType, H: StagedAs<T>> IntoExpr<T> for Staged<H> {
    #[track_caller]
    fn into_expr(self) -> Expr<T> {
        self.0.staged()
    }
}

/// `v` as a device expression.
#[track_caller]
pub fn dev<T: KernelType>(v: impl IntoExpr<T>) -> Expr<T> {
    v.into_expr()
}

/// `let mut name = init;` for a device variable: a private variable named `name`.
#[track_caller]
pub fn var<T: KernelType>(name: &str, init: impl IntoExpr<T>) -> Var<T> {
    builder::var_named(name, init.into_expr())
}

/// `if c { a } else { b }` as a value, where both arms are pure: `select`.
#[track_caller]
pub fn select<T: KernelType>(
    c: impl IntoExpr<bool>,
    a: impl IntoExpr<T>,
    b: impl IntoExpr<T>,
) -> Expr<T> {
    builder::select(c.into_expr(), a.into_expr(), b.into_expr())
}

/// A device `for i in start..end` loop.
#[track_caller]
pub fn for_range<T: Integer>(
    start: impl IntoExpr<T>,
    end: impl IntoExpr<T>,
    body: impl FnOnce(Expr<T>),
) {
    builder::for_range(start.into_expr(), end.into_expr(), body)
}

/// A device `for i in (start..end).step_by(step)` loop.
#[track_caller]
pub fn for_step<T: Integer>(
    start: impl IntoExpr<T>,
    end: impl IntoExpr<T>,
    step: impl IntoExpr<T>,
    body: impl FnOnce(Expr<T>),
) {
    builder::for_step(start.into_expr(), end.into_expr(), step.into_expr(), body)
}

/// The [`KernelDef`] of the kernel being recorded (device functions have no `k` handle; local
/// memory and gathers are declared through this).
#[track_caller]
pub fn kernel_def() -> KernelDef {
    builder::kernel_def()
}

/// `local_array::<T>(len)` bound to `name`: a local-memory array of `len` elements.
#[track_caller]
pub fn local_array<T: Value>(name: &str, len: u32) -> LocalArray<T> {
    kernel_def().local_array(name, len)
}

/// A launch-sized local-memory array parameter (`#[local] name: &mut [T]`).
#[track_caller]
pub fn local_array_dyn<T: Value>(name: &str) -> LocalArray<T> {
    kernel_def().local_array_dyn(name)
}

/// `private_array::<T>(len)` bound to `name`.
pub fn private_array<T: KernelType>(name: &str, len: u32) -> PrivateArray<T> {
    builder::private_array(name, len)
}

/// `let mut name = [init; len];`: a private array with every element set to `init`.
#[track_caller]
pub fn private_array_init<T: KernelType>(
    name: &str,
    len: u32,
    init: impl IntoExpr<T>,
) -> PrivateArray<T> {
    let a = builder::private_array::<T>(name, len);
    let init = init.into_expr();
    for i in 0..len {
        a.set(i, init);
    }
    a
}

/// `gather_add(v)`: see [`KernelDef::gather_add`].
#[track_caller]
pub fn gather_add<T: Numeric>(v: impl IntoExpr<T>) -> GatherHandle<T> {
    kernel_def().gather_add(v.into_expr())
}

/// `gather_min(v)`: see [`KernelDef::gather_min`].
#[track_caller]
pub fn gather_min<T: Numeric>(v: impl IntoExpr<T>) -> GatherHandle<T> {
    kernel_def().gather_min(v.into_expr())
}

/// `gather_max(v)`: see [`KernelDef::gather_max`].
#[track_caller]
pub fn gather_max<T: Numeric>(v: impl IntoExpr<T>) -> GatherHandle<T> {
    kernel_def().gather_max(v.into_expr())
}

/// `gather_with(v, identity, |a, b| ...)`: see [`KernelDef::gather_with`].
#[track_caller]
pub fn gather_with<T: Numeric>(
    v: impl IntoExpr<T>,
    identity: T,
    op: impl Fn(Expr<T>, Expr<T>) -> Expr<T>,
) -> GatherHandle<T> {
    kernel_def().gather_with(v.into_expr(), identity, op)
}

/// The value of an `if` used as an expression whose arms are not pure values: a private
/// variable, declared by the first arm that assigns it and read after the `if`.
pub struct Slot<T> {
    name: &'static str,
    var: Cell<Option<Var<T>>>,
    _t: PhantomData<fn() -> T>,
}

impl<T: KernelType> Slot<T> {
    /// A slot whose variable will be called `name`.
    pub fn new(name: &'static str) -> Self {
        Slot {
            name,
            var: Cell::new(None),
            _t: PhantomData,
        }
    }

    /// Assigns the value of the arm being recorded.
    #[track_caller]
    pub fn put(&self, v: impl IntoExpr<T>) {
        let v = v.into_expr();
        let var = match self.var.get() {
            Some(var) => var,
            None => {
                let var = builder::declare_var::<T>(self.name);
                self.var.set(Some(var));
                var
            }
        };
        var.set(v);
    }

    /// The value after the `if`.
    #[track_caller]
    pub fn get(&self) -> Expr<T> {
        match self.var.get() {
            Some(var) => var.get(),
            None => {
                builder::record_error(format!(
                    "the value of `if` for `{}` was never assigned by any arm",
                    self.name
                ));
                builder::node_typed(
                    ir::Expr::Literal(ir::Literal::from_bits(T::TYPE.scalar, 0)),
                    T::TYPE,
                )
            }
        }
    }
}

/// `x[i]` on a device value: a load from a buffer, local or private array, or an element of a
/// Rust array of device values (a host index).
pub trait Load<I> {
    /// The element type.
    type Out;
    /// Reads element `i`.
    fn load(&self, i: I) -> Self::Out;
}

macro_rules! load_mem {
    ($($ty:ident),*) => {$(
        impl<T: KernelType, I: Index> Load<I> for $ty<T> {
            type Out = Expr<T>;
            #[track_caller]
            fn load(&self, i: I) -> Expr<T> {
                self.at(i)
            }
        }
    )*};
}
load_mem!(LocalArray, PrivateArray);

impl<T: Element, I: Index> Load<I> for BufferParam<T> {
    type Out = T::Dev;
    #[track_caller]
    fn load(&self, i: I) -> T::Dev {
        self.at(i)
    }
}

impl<T: Element, C: Coords<D>, const D: usize> Load<C> for PitchedParam<T, D> {
    type Out = T::Dev;
    #[track_caller]
    fn load(&self, c: C) -> T::Dev {
        self.at(c)
    }
}

/// An index into a Rust array (a host value).
pub trait HostIndex: Copy {
    /// The index as `usize`.
    fn to_usize(self) -> usize;
}
macro_rules! host_index {
    ($($t:ty),*) => {$(
        impl HostIndex for $t {
            fn to_usize(self) -> usize {
                self as usize
            }
        }
    )*};
}
host_index!(usize, u32, i32, u64, i64, u8, u16, i8, i16);

impl<T: Copy, I: HostIndex, const N: usize> Load<I> for [T; N] {
    type Out = T;
    fn load(&self, i: I) -> T {
        self[i.to_usize()]
    }
}

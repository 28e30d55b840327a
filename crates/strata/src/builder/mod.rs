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

mod convert;
mod math;
mod ops;
mod pitched;
pub(crate) mod staged;
mod structs;
pub mod stub;
mod subgroup;
mod swizzle;
pub use math::{splat, vec2, vec3, vec4};
pub use pitched::{BufferParam2, BufferParam3, Coords, PitchedParam};
pub use stub::{Stub, StubArgs};
pub mod types;

use crate::ir::{
    self, AtomicOp, AtomicOrder, Builtin, Expr as IrExpr, ExprId, Fence, GroupOp, GroupScope, Mem,
    ParamKind, Stmt, Type, ValueId,
};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::panic::Location;

/// ` (at file:line:column)`: where the kernel body made the call that recorded an error.
fn at_str(l: &Location) -> String {
    format!(" (at {}:{}:{})", l.file(), l.line(), l.column())
}
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

/// A value computed on the device, of kernel type `T`. Cheap to copy.
#[derive(Clone, Copy)]
pub struct Expr<T> {
    pub(crate) id: ExprId,
    trace: u32,
    _t: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Expr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Expr(%{})", self.id.0)
    }
}

/// The function of a user-defined gather or work-group reduction.
type CombineFn<'a, T> = dyn Fn(Expr<T>, Expr<T>) -> Expr<T> + 'a;

/// A typed handle of a gather reduction, returned where the kernel declares it
/// ([`KernelDef::gather_add`] and the others): its position among the kernel's gathers and
/// its element type. [`Run::gathered`](crate::Run::gathered) reads the launch's result
/// through it, so the type cannot be mistaken (the positional
/// [`Run::gather`](crate::Run::gather) checks it at run time). `#[kernel]` launches with named
/// gathers (`let total = gather_add::<u32>(v);`) return a run with one typed field per name.
pub struct GatherHandle<T> {
    index: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> GatherHandle<T> {
    /// The gather's position among the kernel's gathers (declaration order), as
    /// [`Run::gather`](crate::Run::gather) takes it.
    pub fn index(&self) -> usize {
        self.index
    }
}

impl<T> Clone for GatherHandle<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for GatherHandle<T> {}

impl<T> std::fmt::Debug for GatherHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GatherHandle<{}>({})",
            std::any::type_name::<T>(),
            self.index
        )
    }
}

/// Why recording a kernel failed: what the kernel body did wrong, each with the place in the
/// body that did it. Its text is `kernel `name` is invalid:` and one line per error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    /// The kernel's name.
    pub kernel: String,
    /// The errors, in the order they were recorded.
    pub errors: Vec<String>,
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "kernel `{}` is invalid:\n  {}",
            self.kernel,
            self.errors.join("\n  ")
        )
    }
}

impl std::error::Error for RecordError {}

struct Trace {
    id: u32,
    f: ir::Function,
    blocks: Vec<Vec<Stmt>>,
    loops: Vec<ir::LoopId>,
    errors: Vec<String>,
    /// A serial number per open block, outermost first (see [`block_path`]).
    serials: Vec<u64>,
    next_serial: u64,
}

thread_local! {
    static TRACES: RefCell<Vec<Trace>> = const { RefCell::new(Vec::new()) };
}

/// The id of the next recording, process-wide: an `Expr` (or handle) carries its recording's
/// id, so one taken from a kernel recorded on another thread is told apart too.
static NEXT_TRACE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

fn with<R>(f: impl FnOnce(&mut Trace) -> R) -> R {
    TRACES.with(|t| {
        let mut t = t.borrow_mut();
        let tr = t.last_mut().expect(
            "strata: kernel functions (global_id, if_, barrier, operators on Expr, ...) can only be used inside the closure given to Kernel::build",
        );
        f(tr)
    })
}

/// Records the kernel `name` (a C identifier) by running `body` once: its IR, not yet
/// validated, with the hidden parameters its features added listed in
/// [`ir::Function::hidden`], or every error the body recorded.
/// [`Kernel::build`](crate::Kernel::build) records through this and then validates and
/// optimizes the IR.
pub fn record(name: &str, body: impl FnOnce(&mut KernelDef)) -> Result<ir::Function, RecordError> {
    // Zero is never an id (wrapping skips it).
    let id = loop {
        let v = NEXT_TRACE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if v != 0 {
            break v;
        }
    };
    TRACES.with(|t| {
        t.borrow_mut().push(Trace {
            id,
            f: ir::Function::new(name),
            blocks: vec![Vec::new()],
            loops: Vec::new(),
            errors: Vec::new(),
            serials: Vec::new(),
            next_serial: 0,
        })
    });
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            TRACES.with(|t| {
                t.borrow_mut().pop();
            });
        }
    }
    let guard = Pop;
    body(&mut KernelDef { _private: () });
    let mut tr = TRACES.with(|t| t.borrow_mut().pop()).expect("trace stack");
    std::mem::forget(guard);
    tr.f.body = tr.blocks.pop().unwrap_or_default();
    if !tr.blocks.is_empty() {
        tr.errors.push(
            "a control-flow closure did not finish (was a panic caught inside the kernel body?)"
                .into(),
        );
    }
    if tr.errors.is_empty() {
        Ok(tr.f)
    } else {
        Err(RecordError {
            kernel: tr.f.name,
            errors: tr.errors,
        })
    }
}

impl Trace {
    fn intern(&mut self, e: IrExpr, ty: Type) -> ExprId {
        self.f.exprs.intern(e, ty)
    }
    fn push(&mut self, s: Stmt) {
        self.blocks.last_mut().expect("block").push(s);
    }
    fn check<T>(&mut self, e: Expr<T>, at: &Location) -> ExprId {
        if e.trace != self.id {
            self.errors.push(format!(
                "an Expr recorded for another kernel (expression %{}) was used in kernel `{}`; values cannot cross kernels, pass them as parameters{}",
                e.id.0, self.f.name, at_str(at)
            ));
        }
        e.id
    }
    fn expr<T>(&self, id: ExprId) -> Expr<T> {
        Expr {
            id,
            trace: self.id,
            _t: PhantomData,
        }
    }
    fn new_value(&mut self, ty: Type, name: Option<String>) -> ValueId {
        self.f.new_value(ty, name)
    }
    fn value_expr<T>(&mut self, v: ValueId, ty: Type) -> Expr<T> {
        let id = self.intern(IrExpr::Value(v), ty);
        self.expr(id)
    }
}

/// Builds an expression node of type `R` from IR pieces.
pub(crate) fn node<R: KernelType>(e: IrExpr) -> Expr<R> {
    with(|t| {
        let id = t.intern(e, R::TYPE);
        t.expr(id)
    })
}

/// The expression with id `id` of the kernel being built, as an `Expr<R>` (the caller knows its
/// type is `R`).
pub(crate) fn expr_of<R>(id: ExprId) -> Expr<R> {
    with(|t| t.expr(id))
}

/// Builds an expression node with an explicit type (for generic code whose result type is
/// computed).
pub(crate) fn node_typed<R>(e: IrExpr, ty: Type) -> Expr<R> {
    with(|t| {
        let id = t.intern(e, ty);
        t.expr(id)
    })
}

/// The id of `e` in the current kernel (recording an error if it belongs to another).
#[track_caller]
pub(crate) fn id_of<T>(e: Expr<T>) -> ExprId {
    let at = Location::caller();
    with(|t| t.check(e, at))
}

/// Records an error of the kernel body, at the caller's place.
#[track_caller]
pub(crate) fn record_error(msg: String) {
    let at = at_str(Location::caller());
    with(|t| t.errors.push(msg + &at));
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

// ---------------------------------------------------------------------------------------------
// Parameters and memory

/// Appends a parameter to the kernel being built; returns its index and the kernel's trace id.
fn declare_param(name: &str, kind: ParamKind) -> (u32, u32) {
    with(|t| {
        t.f.params.push(ir::Param {
            name: name.to_string(),
            kind,
        });
        (t.f.params.len() as u32 - 1, t.id)
    })
}

/// Handle given to the kernel closure; declares parameters, local memory and gathers, in
/// launch order.
pub struct KernelDef {
    _private: (),
}

/// A buffer parameter holding elements of type `T`.
#[derive(Clone, Copy, Debug)]
pub struct BufferParam<T> {
    param: u32,
    trace: u32,
    _t: PhantomData<fn() -> T>,
}

/// A local-memory array shared by the work-items of a work-group.
#[derive(Clone, Copy, Debug)]
pub struct LocalArray<T> {
    index: u32,
    trace: u32,
    _t: PhantomData<fn() -> T>,
}

/// A private array: each work-item has its own.
#[derive(Clone, Copy, Debug)]
pub struct PrivateArray<T> {
    index: u32,
    trace: u32,
    _t: PhantomData<fn() -> T>,
}

/// A private mutable variable. Reading it ([`Var::get`]) snapshots its current value.
#[derive(Clone, Copy, Debug)]
pub struct Var<T> {
    index: u32,
    trace: u32,
    _t: PhantomData<fn() -> T>,
}

impl KernelDef {
    fn param(&mut self, name: &str, kind: ParamKind) -> (u32, u32) {
        declare_param(name, kind)
    }

    /// A parameter passed by value at launch: a scalar, or a `#[derive(Element)]` struct
    /// (`k.by_value::<Particle>("p")` gives its fields as device values; the launch argument
    /// is the struct, one scalar parameter per scalar of its fields).
    #[track_caller]
    pub fn by_value<T: ByValue>(&mut self, name: &str) -> T::Dev {
        T::declare(name)
    }

    /// A scalar parameter passed by value at launch.
    pub fn scalar<T: ScalarType>(&mut self, name: &str) -> Expr<T> {
        let (p, _) = self.param(name, ParamKind::Scalar(T::TYPE));
        node(IrExpr::Param(p))
    }

    /// A buffer parameter with the given access.
    pub fn buffer<T: Element>(&mut self, name: &str, access: ir::Access) -> BufferParam<T> {
        let elem = structs::declare(T::LAYOUT);
        let (param, trace) = self.param(
            name,
            ParamKind::Buffer {
                elem,
                access,
                len: None,
            },
        );
        BufferParam {
            param,
            trace,
            _t: PhantomData,
        }
    }

    /// A buffer the kernel only reads.
    pub fn read<T: Element>(&mut self, name: &str) -> BufferParam<T> {
        self.buffer(name, ir::Access::Read)
    }

    /// A small buffer the kernel only reads, in the constant address space where the device
    /// has one (OpenCL `__constant`: coefficients, filter taps, lookup tables every work-item
    /// reads); `#[constant] w: &[T]` in `#[kernel]`. A launch with a buffer over the device's
    /// limit (`DeviceInfo::max_constant_buffer_size`) fails with a typed error.
    pub fn constant<T: Element>(&mut self, name: &str) -> BufferParam<T> {
        self.buffer(name, ir::Access::Constant)
    }

    /// A buffer the kernel only writes.
    pub fn write<T: Element>(&mut self, name: &str) -> BufferParam<T> {
        self.buffer(name, ir::Access::Write)
    }

    /// A buffer the kernel reads and writes (also needed for atomics).
    pub fn read_write<T: Element>(&mut self, name: &str) -> BufferParam<T> {
        self.buffer(name, ir::Access::ReadWrite)
    }

    /// A local-memory array of `len` elements, fixed when the kernel is built.
    pub fn local_array<T: Value>(&mut self, name: &str, len: u32) -> LocalArray<T> {
        with(|t| {
            t.f.locals.push(ir::LocalDecl {
                name: name.to_string(),
                elem: T::TYPE,
                len: ir::ArrayLen::Fixed(len),
            });
            LocalArray {
                index: t.f.locals.len() as u32 - 1,
                trace: t.id,
                _t: PhantomData,
            }
        })
    }

    /// A local-memory array whose length is given at launch with [`LocalMem`](crate::LocalMem)
    /// (it takes a parameter slot at this position).
    pub fn local_array_dyn<T: Value>(&mut self, name: &str) -> LocalArray<T> {
        let (p, _) = self.param(&format!("{name}_len"), ParamKind::LocalLen);
        with(|t| {
            t.f.locals.push(ir::LocalDecl {
                name: name.to_string(),
                elem: T::TYPE,
                len: ir::ArrayLen::Param(p),
            });
            LocalArray {
                index: t.f.locals.len() as u32 - 1,
                trace: t.id,
                _t: PhantomData,
            }
        })
    }

    #[track_caller]
    fn gather<T: Numeric>(
        &mut self,
        value: Expr<T>,
        op: GatherOp,
        custom: Option<(T, &CombineFn<'_, T>)>,
    ) -> GatherHandle<T> {
        let n = with(|t| {
            t.f.hidden
                .iter()
                .filter(|h| matches!(h.role, ir::HiddenRole::Gather(_)))
                .count()
        });
        let handle = GatherHandle {
            index: n,
            _t: PhantomData,
        };
        let (param, _) = self.param(
            &format!("gather{n}"),
            ParamKind::Buffer {
                elem: ir::Elem::Value(T::TYPE),
                access: ir::Access::Write,
                len: None,
            },
        );
        let (total, identity, combine) = match (op, custom) {
            (GatherOp::Add, _) => (group_op(GroupOp::ReduceAdd, value, None), T::zero(), None),
            (GatherOp::Min, _) => (
                group_op(GroupOp::ReduceMin, value, None),
                T::greatest(),
                None,
            ),
            (GatherOp::Max, _) => (group_op(GroupOp::ReduceMax, value, None), T::least(), None),
            (_, Some((identity, f))) => {
                // The kernel that folds the partials, recorded here from the same `op`; the
                // runtime builds it with this kernel.
                let name = with(|t| format!("{}_gather{n}_combine", t.f.name));
                let combine = record(&name, |k| {
                    let parts = k.read::<T>("parts");
                    let out = k.write::<T>("out");
                    if_(global_id(0).eq(0u32), || {
                        let acc = var(lit(identity));
                        for_range(0u32, parts.len(), |j| acc.set(f(acc.get(), parts.at(j))));
                        out.set(0u32, acc.get());
                    });
                });
                let combine = match combine {
                    Ok(c) => c,
                    Err(e) => {
                        with(|t| {
                            t.errors
                                .push(format!("the combining function of gather {n}: {e}"))
                        });
                        return handle;
                    }
                };
                (
                    group_reduce_with(value, f),
                    identity,
                    Some(std::sync::Arc::new(combine)),
                )
            }
            (GatherOp::Custom, None) => unreachable!("a custom gather has its function"),
        };
        let out = BufferParam::<T> {
            param,
            trace: with(|t| t.id),
            _t: PhantomData,
        };
        if_(local_linear_id().eq(0u32), || {
            out.set(group_linear_id(), total)
        });
        with(|t| {
            t.f.hidden.push(ir::HiddenParam {
                param,
                role: ir::HiddenRole::Gather(ir::Gather {
                    index: n as u32,
                    op,
                    ty: T::TYPE,
                    identity: identity.literal(),
                    combine,
                }),
            })
        });
        handle
    }

    /// Combines `value` over all work-items with `op`, a function that must be associative and
    /// commutative with `identity` as its identity (a product, a bitwise and, an argmax
    /// packed into a `u64`, ...); the launch returns the result through
    /// [`Run::gathered`](crate::Run::gathered) with the returned handle, like
    /// [`gather_add`](Self::gather_add). Each
    /// work-group folds its values with [`group_reduce_with`]; its partial result goes to a
    /// hidden buffer, which a second kernel (recorded here from the same `op`, into
    /// [`ir::Gather::combine`], and built with this kernel) folds in work-group order on the
    /// launch's device. Every work-item must reach this point.
    #[track_caller]
    pub fn gather_with<T: Numeric>(
        &mut self,
        value: Expr<T>,
        identity: T,
        op: impl Fn(Expr<T>, Expr<T>) -> Expr<T>,
    ) -> GatherHandle<T> {
        self.gather(value, GatherOp::Custom, Some((identity, &op)))
    }

    /// Adds `value` over all work-items (Goopax `gather_add`); the launch returns the total
    /// through [`Run::gathered`](crate::Run::gathered) with the returned handle (or by
    /// position, [`Run::gather`](crate::Run::gather)). Every work-item must reach this point.
    #[track_caller]
    pub fn gather_add<T: Numeric>(&mut self, value: Expr<T>) -> GatherHandle<T> {
        self.gather(value, GatherOp::Add, None)
    }

    /// The minimum of `value` over all work-items (Goopax `gather_min`).
    #[track_caller]
    pub fn gather_min<T: Numeric>(&mut self, value: Expr<T>) -> GatherHandle<T> {
        self.gather(value, GatherOp::Min, None)
    }

    /// The maximum of `value` over all work-items (Goopax `gather_max`).
    #[track_caller]
    pub fn gather_max<T: Numeric>(&mut self, value: Expr<T>) -> GatherHandle<T> {
        self.gather(value, GatherOp::Max, None)
    }
}

/// Something that can index memory: an integer `Expr` or an integer constant.
pub trait Index: Copy {
    /// The index expression.
    fn index_id(self) -> ExprId;
}
impl<T: Integer> Index for Expr<T> {
    #[track_caller]
    fn index_id(self) -> ExprId {
        id_of(self)
    }
}
macro_rules! const_index {
    ($($t:ty),*) => {$(
        impl Index for $t {
            fn index_id(self) -> ExprId {
                id_of(lit(self))
            }
        }
    )*};
}
const_index!(i32, u32, i64, u64);
impl Index for usize {
    fn index_id(self) -> ExprId {
        id_of(lit(self as u64))
    }
}

#[track_caller]
fn load<T: KernelType>(mem: Mem, index: ExprId) -> Expr<T> {
    let at = ir::SourceLoc::caller();
    with(|t| {
        let v = t.new_value(T::TYPE, None);
        t.push(Stmt::Load {
            value: v,
            mem,
            index,
            at,
        });
        t.value_expr(v, T::TYPE)
    })
}

#[track_caller]
fn store<T: KernelType>(mem: Mem, index: ExprId, value: Expr<T>) {
    let at = Location::caller();
    with(|t| {
        let value = t.check(value, at);
        t.push(Stmt::Store {
            mem,
            index,
            value,
            at: ir::SourceLoc(Some(at)),
        });
    })
}

#[track_caller]
fn atomic<T: KernelType>(
    (mem, order): (Mem, AtomicOrder),
    index: ExprId,
    op: AtomicOp,
    operand: Expr<T>,
    compare: Option<Expr<T>>,
) -> Expr<T> {
    let at = Location::caller();
    with(|t| {
        let operand = t.check(operand, at);
        let compare = compare.map(|c| t.check(c, at));
        let v = t.new_value(T::TYPE, None);
        t.push(Stmt::Atomic {
            result: Some(v),
            mem,
            index,
            op,
            operand,
            compare,
            order,
            at: ir::SourceLoc(Some(at)),
        });
        t.value_expr(v, T::TYPE)
    })
}

#[track_caller]
fn atomic_load<T: KernelType>((mem, order): (Mem, AtomicOrder), index: ExprId) -> Expr<T> {
    let at = ir::SourceLoc::caller();
    with(|t| {
        let v = t.new_value(T::TYPE, None);
        t.push(Stmt::AtomicLoad {
            value: v,
            mem,
            index,
            order,
            at,
        });
        t.value_expr(v, T::TYPE)
    })
}

#[track_caller]
fn check_handle(trace: u32, what: &str) {
    let at = Location::caller();
    with(|t| {
        if t.id != trace {
            t.errors.push(format!(
                "a {what} of another kernel was used in kernel `{}`{}",
                t.f.name,
                at_str(at)
            ));
        }
    })
}

impl<T> BufferParam<T> {
    #[track_caller]
    fn mem(&self) -> Mem {
        check_handle(self.trace, "buffer parameter");
        Mem::Buffer(self.param)
    }
}

impl<T: Element> BufferParam<T> {
    /// Reads element `i` (a snapshot: later stores do not change the returned value): an
    /// [`Expr`] for scalars and vectors, the struct's device form for a struct (every field
    /// read; [`item`](Self::item) reads one field).
    #[track_caller]
    pub fn at(&self, i: impl Index) -> T::Dev {
        T::load_elem(self, i.index_id())
    }
    /// Writes `value` to element `i` (a struct field by field).
    #[track_caller]
    pub fn set(&self, i: impl Index, value: impl Into<T::Dev>) {
        T::store_elem(self, i.index_id(), value.into())
    }
    /// Reads element `index` of a buffer of scalars or vectors.
    #[track_caller]
    pub(crate) fn load_value(&self, index: ExprId) -> Expr<T>
    where
        T: KernelType,
    {
        load(self.mem(), index)
    }
    /// Writes element `index` of a buffer of scalars or vectors.
    #[track_caller]
    pub(crate) fn store_value(&self, index: ExprId, v: Expr<T>)
    where
        T: KernelType,
    {
        store(self.mem(), index, v)
    }
}

macro_rules! memory_api {
    ($ty:ident, $field:ident, $mem:expr, $what:literal) => {
        impl<T: KernelType> $ty<T> {
            #[track_caller]
            fn mem(&self) -> Mem {
                check_handle(self.trace, $what);
                #[allow(clippy::redundant_closure_call)]
                ($mem)(self.$field)
            }
            /// Reads element `i` (a snapshot: later stores do not change the returned value).
            #[track_caller]
            pub fn at(&self, i: impl Index) -> Expr<T> {
                load(self.mem(), i.index_id())
            }
            /// Writes `value` to element `i`.
            #[track_caller]
            pub fn set(&self, i: impl Index, value: impl Into<Expr<T>>) {
                store(self.mem(), i.index_id(), value.into())
            }
        }
    };
}

memory_api!(LocalArray, index, Mem::Local, "local array");
memory_api!(PrivateArray, index, Mem::Private, "private array");

macro_rules! atomics_api {
    ($ty:ident) => {
        impl<T: Numeric> $ty<T> {
            /// Atomically adds `v` to element `i`; returns the old value. Integers wrap; `f32`
            /// and `f64` are allowed.
            #[track_caller]
            pub fn atomic_add(&self, i: impl Index, v: impl Into<Expr<T>>) -> Expr<T> {
                atomic(self.target(), i.index_id(), AtomicOp::Add, v.into(), None)
            }
            /// Atomic minimum; returns the old value. On floats a NaN operand leaves the
            /// element unchanged and a NaN element is replaced, like [`Expr::min`].
            #[track_caller]
            pub fn atomic_min(&self, i: impl Index, v: impl Into<Expr<T>>) -> Expr<T> {
                atomic(self.target(), i.index_id(), AtomicOp::Min, v.into(), None)
            }
            /// Atomic maximum; returns the old value (floats as [`atomic_min`](Self::atomic_min)).
            #[track_caller]
            pub fn atomic_max(&self, i: impl Index, v: impl Into<Expr<T>>) -> Expr<T> {
                atomic(self.target(), i.index_id(), AtomicOp::Max, v.into(), None)
            }
            /// Atomically replaces element `i` by `v`; returns the old value (floats
            /// included, bit for bit).
            #[track_caller]
            pub fn atomic_exchange(&self, i: impl Index, v: impl Into<Expr<T>>) -> Expr<T> {
                atomic(
                    self.target(),
                    i.index_id(),
                    AtomicOp::Exchange,
                    v.into(),
                    None,
                )
            }
        }
        impl<T: Integer> $ty<T> {
            /// Reads element `i` atomically (32- and 64-bit integers). Unlike
            /// `at`, a loop polling this read sees the writes that other
            /// work-groups make with atomics: the compiler may not hoist it and the read is
            /// never served from a stale cache. On CUDA a `volatile` load, on OpenCL an atomic
            /// or with 0. Relaxed, unless read through [`ordered`](BufferParam::ordered).
            #[track_caller]
            pub fn atomic_load(&self, i: impl Index) -> Expr<T> {
                atomic_load(self.target(), i.index_id())
            }
            /// Atomically subtracts; returns the old value.
            #[track_caller]
            pub fn atomic_sub(&self, i: impl Index, v: impl Into<Expr<T>>) -> Expr<T> {
                atomic(self.target(), i.index_id(), AtomicOp::Sub, v.into(), None)
            }
            /// Atomic bitwise and; returns the old value.
            #[track_caller]
            pub fn atomic_and(&self, i: impl Index, v: impl Into<Expr<T>>) -> Expr<T> {
                atomic(self.target(), i.index_id(), AtomicOp::And, v.into(), None)
            }
            /// Atomic bitwise or; returns the old value.
            #[track_caller]
            pub fn atomic_or(&self, i: impl Index, v: impl Into<Expr<T>>) -> Expr<T> {
                atomic(self.target(), i.index_id(), AtomicOp::Or, v.into(), None)
            }
            /// Atomic bitwise xor; returns the old value.
            #[track_caller]
            pub fn atomic_xor(&self, i: impl Index, v: impl Into<Expr<T>>) -> Expr<T> {
                atomic(self.target(), i.index_id(), AtomicOp::Xor, v.into(), None)
            }
            /// Atomically replaces element `i` by `new` if it equals `expected`; returns the old
            /// value (equal to `expected` when the exchange happened).
            #[track_caller]
            pub fn atomic_compare_exchange(
                &self,
                i: impl Index,
                expected: impl Into<Expr<T>>,
                new: impl Into<Expr<T>>,
            ) -> Expr<T> {
                atomic(
                    self.target(),
                    i.index_id(),
                    AtomicOp::CompareExchange,
                    new.into(),
                    Some(expected.into()),
                )
            }
        }
    };
}
atomics_api!(BufferParam);
atomics_api!(LocalArray);
atomics_api!(Ordered);

macro_rules! ordered_api {
    ($ty:ident) => {
        impl<T: KernelType> $ty<T> {
            /// The memory and order its atomics use: relaxed, device scope.
            #[track_caller]
            fn target(&self) -> (Mem, AtomicOrder) {
                (self.mem(), AtomicOrder::RELAXED)
            }
            /// The same memory, with atomics of memory order `order` at scope `scope`:
            /// `flags.ordered(MemOrder::Release, MemScope::Device).atomic_exchange(i, 1u32)`
            /// publishes the stores made before it to the work-items that read the flag with
            /// `ordered(MemOrder::Acquire, ..).atomic_load(i)`. See [`ir::AtomicOrder`] for how
            /// each backend implements the orders.
            #[track_caller]
            pub fn ordered(&self, order: MemOrder, scope: MemScope) -> Ordered<T> {
                Ordered {
                    mem: self.mem(),
                    order: AtomicOrder { order, scope },
                    _t: PhantomData,
                }
            }
        }
    };
}
ordered_api!(BufferParam);
ordered_api!(LocalArray);

/// A buffer or local array whose atomics have a memory order and scope (see
/// [`BufferParam::ordered`]): the same atomic methods.
#[derive(Clone, Copy)]
pub struct Ordered<T> {
    mem: Mem,
    order: AtomicOrder,
    _t: PhantomData<T>,
}

impl<T: KernelType> Ordered<T> {
    fn target(&self) -> (Mem, AtomicOrder) {
        (self.mem, self.order)
    }
}

impl<T: Element> BufferParam<T> {
    /// Number of elements of the buffer passed at launch.
    #[track_caller]
    pub fn len(&self) -> Expr<u32> {
        check_handle(self.trace, "buffer parameter");
        node(IrExpr::BufferLen(self.param))
    }

    /// Requires the buffer passed at launch to have exactly `n` elements (checked at launch).
    pub fn expect_len(self, n: u64) -> Self {
        with(|t| {
            if let Some(ir::Param {
                kind: ParamKind::Buffer { len, .. },
                ..
            }) = t.f.params.get_mut(self.param as usize)
            {
                *len = Some(n);
            }
        });
        self
    }
}

/// A private array of `len` elements.
pub fn private_array<T: KernelType>(name: &str, len: u32) -> PrivateArray<T> {
    with(|t| {
        t.f.privates.push(ir::PrivateDecl {
            name: name.to_string(),
            elem: T::TYPE,
            len: Some(len),
        });
        PrivateArray {
            index: t.f.privates.len() as u32 - 1,
            trace: t.id,
            _t: PhantomData,
        }
    })
}

/// A [`KernelDef`] for the kernel being recorded (device functions of `#[kernel]` have no `k`
/// handle; they declare local memory and gathers through this). Panics with the builder's
/// message when no kernel is being recorded.
#[track_caller]
pub(crate) fn kernel_def() -> KernelDef {
    with(|_| ());
    KernelDef { _private: () }
}

/// A private variable named `name`, not initialised (the first store sets it).
pub(crate) fn declare_var<T: KernelType>(name: &str) -> Var<T> {
    with(|t| {
        t.f.privates.push(ir::PrivateDecl {
            name: name.to_string(),
            elem: T::TYPE,
            len: None,
        });
        Var {
            index: t.f.privates.len() as u32 - 1,
            trace: t.id,
            _t: PhantomData,
        }
    })
}

/// A private variable initialised to `init`.
#[track_caller]
pub fn var<T: KernelType>(init: impl Into<Expr<T>>) -> Var<T> {
    var_named("v", init)
}

/// A private variable with a name for the generated code.
#[track_caller]
pub fn var_named<T: KernelType>(name: &str, init: impl Into<Expr<T>>) -> Var<T> {
    let init = init.into();
    let v = with(|t| {
        t.f.privates.push(ir::PrivateDecl {
            name: name.to_string(),
            elem: T::TYPE,
            len: None,
        });
        Var {
            index: t.f.privates.len() as u32 - 1,
            trace: t.id,
            _t: PhantomData,
        }
    });
    v.set(init);
    v
}

impl<T: KernelType> Var<T> {
    fn zero() -> ExprId {
        id_of(lit(0u32))
    }
    /// The current value.
    #[track_caller]
    pub fn get(&self) -> Expr<T> {
        check_handle(self.trace, "variable");
        load(Mem::Private(self.index), Self::zero())
    }
    /// Assigns a new value.
    #[track_caller]
    pub fn set(&self, v: impl Into<Expr<T>>) {
        check_handle(self.trace, "variable");
        store(Mem::Private(self.index), Self::zero(), v.into())
    }
}

// ---------------------------------------------------------------------------------------------
// Control flow

fn block(body: impl FnOnce()) -> Vec<Stmt> {
    with(|t| {
        t.blocks.push(Vec::new());
        t.next_serial += 1;
        let s = t.next_serial;
        t.serials.push(s);
    });
    body();
    with(|t| {
        t.serials.pop();
        t.blocks.pop().unwrap_or_default()
    })
}

/// Where the recording is: one serial number per open control-flow block, outermost first.
/// A value recorded at path `a` may be used wherever the path starts with `a` (the same block or
/// one nested in it, later); the fields layer uses this to reuse a load it already made.
pub(crate) fn block_path() -> Vec<u64> {
    with(|t| t.serials.clone())
}

/// The continuation of an [`if_`], to add `else if` and `else` branches.
pub struct IfChain {
    depth: usize,
    block_depth: usize,
    block_len: usize,
}

/// Runs `then` on the work-items for which `cond` is true.
#[track_caller]
pub fn if_(cond: impl Into<Expr<bool>>, then: impl FnOnce()) -> IfChain {
    let cond = id_of(cond.into());
    let then = block(then);
    with(|t| {
        t.push(Stmt::If {
            cond,
            then,
            otherwise: Vec::new(),
        });
        IfChain {
            depth: 0,
            block_depth: t.blocks.len(),
            block_len: t.blocks.last().map_or(0, Vec::len),
        }
    })
}

impl IfChain {
    #[track_caller]
    fn attach(&self, otherwise: Vec<Stmt>) -> bool {
        let at = Location::caller();
        with(|t| {
            if t.blocks.len() != self.block_depth
                || t.blocks.last().map_or(0, Vec::len) != self.block_len
            {
                t.errors.push(format!("else_ / else_if must directly follow their if_ (nothing may be recorded in between){}", at_str(at)));
                return false;
            }
            let mut s = t.blocks.last_mut().and_then(|b| b.last_mut());
            for _ in 0..self.depth {
                s = match s {
                    Some(Stmt::If { otherwise, .. }) => otherwise.last_mut(),
                    _ => None,
                };
            }
            match s {
                Some(Stmt::If { otherwise: o, .. }) => {
                    *o = otherwise;
                    true
                }
                _ => false,
            }
        })
    }

    /// Adds an `else if` branch.
    #[track_caller]
    pub fn else_if(self, cond: impl Into<Expr<bool>>, then: impl FnOnce()) -> IfChain {
        let cond = cond.into();
        let inner = block(|| {
            let c = id_of(cond);
            let then = block(then);
            with(|t| {
                t.push(Stmt::If {
                    cond: c,
                    then,
                    otherwise: Vec::new(),
                })
            });
        });
        self.attach(inner);
        IfChain {
            depth: self.depth + 1,
            ..self
        }
    }

    /// Adds the `else` branch.
    #[track_caller]
    pub fn else_(self, otherwise: impl FnOnce()) {
        let b = block(otherwise);
        self.attach(b);
    }
}

/// A loop, to `break` out of or `continue` from nested loops.
#[derive(Clone, Copy, Debug)]
pub struct LoopLabel {
    id: ir::LoopId,
    trace: u32,
}

impl LoopLabel {
    /// Leaves this loop.
    #[track_caller]
    pub fn break_(self) {
        self.jump(true)
    }
    /// Ends this loop's current iteration.
    #[track_caller]
    pub fn continue_(self) {
        self.jump(false)
    }
    #[track_caller]
    fn jump(self, brk: bool) {
        let at = Location::caller();
        with(|t| {
            if t.id != self.trace || !t.loops.contains(&self.id) {
                t.errors.push(format!(
                    "{} of a loop that does not enclose this point{}",
                    if brk { "break_" } else { "continue_" },
                    at_str(at)
                ));
                return;
            }
            t.push(if brk {
                Stmt::Break(self.id)
            } else {
                Stmt::Continue(self.id)
            });
        })
    }
}

fn open_loop() -> ir::LoopId {
    with(|t| {
        let id = ir::LoopId(t.f.loop_count);
        t.f.loop_count += 1;
        t.loops.push(id);
        id
    })
}

fn close_loop() {
    with(|t| {
        t.loops.pop();
    });
}

/// The innermost loop enclosing this point, to break out of it from deeper loops.
#[track_caller]
pub fn current_loop() -> LoopLabel {
    let at = Location::caller();
    with(|t| match t.loops.last() {
        Some(&id) => LoopLabel { id, trace: t.id },
        None => {
            t.errors
                .push(format!("current_loop() outside of any loop{}", at_str(at)));
            LoopLabel {
                id: ir::LoopId(u32::MAX),
                trace: t.id,
            }
        }
    })
}

/// Leaves the innermost loop.
#[track_caller]
pub fn break_() {
    let at = Location::caller();
    with(|t| match t.loops.last() {
        Some(&id) => t.push(Stmt::Break(id)),
        None => t
            .errors
            .push(format!("break_() outside of a loop{}", at_str(at))),
    })
}

/// Ends the innermost loop's current iteration.
#[track_caller]
pub fn continue_() {
    let at = Location::caller();
    with(|t| match t.loops.last() {
        Some(&id) => t.push(Stmt::Continue(id)),
        None => t
            .errors
            .push(format!("continue_() outside of a loop{}", at_str(at))),
    })
}

/// Ends this work-item.
pub fn return_() {
    with(|t| t.push(Stmt::Return))
}

/// A device loop `for i in start..end` (step 1).
#[track_caller]
pub fn for_range<T: Integer>(
    start: impl Into<Expr<T>>,
    end: impl Into<Expr<T>>,
    body: impl FnOnce(Expr<T>),
) {
    for_step(start, end, lit(num_one::<T>()), body)
}

fn num_one<T: Integer>() -> T {
    crate::ir::eval::Num::from_i64(1)
}

/// A device loop from `start` while below `end` (or above, for a negative `step`), adding
/// `step` after each iteration. A zero step is an error.
#[track_caller]
pub fn for_step<T: Integer>(
    start: impl Into<Expr<T>>,
    end: impl Into<Expr<T>>,
    step: impl Into<Expr<T>>,
    body: impl FnOnce(Expr<T>),
) {
    let (start, end, step) = (id_of(start.into()), id_of(end.into()), id_of(step.into()));
    let id = open_loop();
    let (var, i) = with(|t| {
        let v = t.new_value(T::TYPE, Some("i".into()));
        (v, t.value_expr::<T>(v, T::TYPE))
    });
    let body = block(|| body(i));
    close_loop();
    with(|t| {
        t.push(Stmt::For {
            id,
            var,
            start,
            end,
            step,
            body,
        })
    });
}

/// A device loop that runs `body` while `cond()` is true; `cond` is recorded at the top of
/// every iteration.
#[track_caller]
pub fn while_(cond: impl FnOnce() -> Expr<bool>, body: impl FnOnce()) {
    let id = open_loop();
    let body = block(|| {
        let c = cond();
        if_(!c, || with(|t| t.push(Stmt::Break(id))));
        body();
    });
    close_loop();
    with(|t| t.push(Stmt::Loop { id, body }));
}

/// A device loop that runs until [`break_`].
pub fn loop_(body: impl FnOnce()) {
    let id = open_loop();
    let body = block(body);
    close_loop();
    with(|t| t.push(Stmt::Loop { id, body }));
}

/// `if cond { a } else { b }` as a value, computed without branching.
#[track_caller]
pub fn select<T: KernelType>(
    cond: impl Into<Expr<bool>>,
    a: impl Into<Expr<T>>,
    b: impl Into<Expr<T>>,
) -> Expr<T> {
    let (c, a, b) = (id_of(cond.into()), id_of(a.into()), id_of(b.into()));
    node(IrExpr::Select(c, a, b))
}

// ---------------------------------------------------------------------------------------------
// Synchronisation and collectives

/// Waits for every work-item of the work-group, and orders local and global memory.
/// OpenCL `barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)`; CUDA `__syncthreads()`.
pub fn barrier() {
    with(|t| {
        t.push(Stmt::Barrier(Fence {
            local: true,
            global: true,
        }))
    })
}
/// A barrier that orders local memory only.
pub fn barrier_local() {
    with(|t| {
        t.push(Stmt::Barrier(Fence {
            local: true,
            global: false,
        }))
    })
}
/// A barrier that orders global memory only.
pub fn barrier_global() {
    with(|t| {
        t.push(Stmt::Barrier(Fence {
            local: false,
            global: true,
        }))
    })
}
/// Orders this work-item's memory accesses (local and global), sequentially consistent at
/// device scope. OpenCL `mem_fence`; CUDA `__threadfence()`.
pub fn mem_fence() {
    fence(MemOrder::SeqCst, MemScope::Device)
}
/// A fence of memory order `order` (not relaxed: that is an error at build time) and scope
/// `scope`, ordering this work-item's accesses to local and global memory: with `Release`,
/// the accesses before it stay before the atomic stores after it; with `Acquire`, the
/// accesses after it stay after the atomic loads before it. OpenCL `mem_fence` (OpenCL C 1.2
/// has no scopes); CUDA `__threadfence_block()` or `__threadfence()`.
pub fn fence(order: MemOrder, scope: MemScope) {
    with(|t| {
        t.push(Stmt::MemFence {
            spaces: Fence {
                local: true,
                global: true,
            },
            order: AtomicOrder { order, scope },
        })
    })
}

/// Records collective `op` of `scope` on `arg` (and `source`, see
/// [`GroupOp::takes_source`]); its result has type `R` ([`GroupOp::result_type`]).
#[track_caller]
fn collective<T: KernelType, R: KernelType>(
    op: GroupOp,
    scope: GroupScope,
    arg: Expr<T>,
    source: Option<Expr<u32>>,
) -> Expr<R> {
    debug_assert_eq!(op.result_type(T::TYPE), R::TYPE);
    let at = Location::caller();
    with(|t| {
        let arg = t.check(arg, at);
        let source = source.map(|s| t.check(s, at));
        let v = t.new_value(R::TYPE, None);
        t.push(Stmt::Group {
            value: v,
            op,
            scope,
            arg,
            source,
        });
        t.value_expr(v, R::TYPE)
    })
}

#[track_caller]
fn group_op<T: KernelType>(op: GroupOp, arg: Expr<T>, source: Option<Expr<u32>>) -> Expr<T> {
    collective(op, GroupScope::WorkGroup, arg, source)
}

/// The fold of `x` over the work-group with `op`, which must be associative and commutative:
/// every work-item gets the same result, combined in a fixed tree (so one launch shape gives
/// the same bits on every backend of the same sub-group size, floats included). Built from
/// the collectives: sub-group shuffles fold each sub-group's values into its first lane, a
/// broadcast brings those partials together, and so on until one value is left. Every
/// work-item must call it.
#[track_caller]
pub fn group_reduce_with<T: KernelType>(
    x: Expr<T>,
    op: impl Fn(Expr<T>, Expr<T>) -> Expr<T>,
) -> Expr<T> {
    let size = local_size(0) * local_size(1) * local_size(2);
    let lid = local_linear_id();
    let sg = max_sub_group_size();
    let base = lid - sub_group_local_id();
    let lane = sub_group_local_id();
    let v = var(x);
    // The values left: `count` of them, value k held by work-item k * stride.
    let count = var::<u32>(size);
    let stride = var::<u32>(lit(1u32));
    while_(
        || count.get().gt(1u32),
        || {
            let n = count.get();
            let y = var(group_broadcast(v.get(), lid.min(n - 1u32) * stride.get()));
            // Values k < n are now at work-items k; each sub-group folds its own into lane 0.
            let live = select::<u32>(base.lt(n), sg.min(n - base), 0u32);
            let d = var(sg / 2u32);
            while_(
                || d.get().gt(0u32),
                || {
                    let other = sub_group_shuffle_down(y.get(), d.get());
                    if_((lane + d.get()).lt(live), || y.set(op(y.get(), other)));
                    d.set(d.get() / 2u32);
                },
            );
            v.set(y.get());
            count.set((n + sg - 1u32) / sg);
            stride.set(sg);
        },
    );
    group_broadcast(v.get(), 0u32)
}

/// Sum of `x` over the work-group (every work-item must call it).
#[track_caller]
pub fn group_reduce_add<T: Numeric>(x: Expr<T>) -> Expr<T> {
    group_op(GroupOp::ReduceAdd, x, None)
}
/// Minimum of `x` over the work-group.
#[track_caller]
pub fn group_reduce_min<T: Numeric>(x: Expr<T>) -> Expr<T> {
    group_op(GroupOp::ReduceMin, x, None)
}
/// Maximum of `x` over the work-group.
#[track_caller]
pub fn group_reduce_max<T: Numeric>(x: Expr<T>) -> Expr<T> {
    group_op(GroupOp::ReduceMax, x, None)
}
/// Sum of `x` over work-items `0..=local_linear_id()`.
#[track_caller]
pub fn group_scan_inclusive_add<T: Numeric>(x: Expr<T>) -> Expr<T> {
    group_op(GroupOp::ScanInclusiveAdd, x, None)
}
/// Sum of `x` over work-items `0..local_linear_id()`.
#[track_caller]
pub fn group_scan_exclusive_add<T: Numeric>(x: Expr<T>) -> Expr<T> {
    group_op(GroupOp::ScanExclusiveAdd, x, None)
}
/// Minimum of `x` over work-items `0..=local_linear_id()`.
#[track_caller]
pub fn group_scan_inclusive_min<T: Numeric>(x: Expr<T>) -> Expr<T> {
    group_op(GroupOp::ScanInclusiveMin, x, None)
}
/// Maximum of `x` over work-items `0..=local_linear_id()`.
#[track_caller]
pub fn group_scan_inclusive_max<T: Numeric>(x: Expr<T>) -> Expr<T> {
    group_op(GroupOp::ScanInclusiveMax, x, None)
}
/// Minimum of `x` over work-items `0..local_linear_id()` (the type's greatest value, `+inf`
/// for floats, in the first).
#[track_caller]
pub fn group_scan_exclusive_min<T: Numeric>(x: Expr<T>) -> Expr<T> {
    group_op(GroupOp::ScanExclusiveMin, x, None)
}
/// Maximum of `x` over work-items `0..local_linear_id()` (the type's least value, `-inf` for
/// floats, in the first).
#[track_caller]
pub fn group_scan_exclusive_max<T: Numeric>(x: Expr<T>) -> Expr<T> {
    group_op(GroupOp::ScanExclusiveMax, x, None)
}
/// The value of `x` in the work-item whose local linear id is `source`.
#[track_caller]
pub fn group_broadcast<T: KernelType>(x: Expr<T>, source: impl Into<Expr<u32>>) -> Expr<T> {
    group_op(GroupOp::Broadcast, x, Some(source.into()))
}
/// `true` if `b` is true in any work-item of the work-group.
#[track_caller]
pub fn group_any(b: impl Into<Expr<bool>>) -> Expr<bool> {
    group_op(GroupOp::Any, b.into(), None)
}
/// `true` if `b` is true in every work-item of the work-group.
#[track_caller]
pub fn group_all(b: impl Into<Expr<bool>>) -> Expr<bool> {
    group_op(GroupOp::All, b.into(), None)
}

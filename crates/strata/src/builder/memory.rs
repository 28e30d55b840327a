//! Parameters and memory: [`KernelDef`]'s declarations of parameters and local arrays, the
//! memory handles ([`BufferParam`], [`LocalArray`], [`PrivateArray`], [`Var`], [`Ordered`])
//! with their loads, stores and atomics, and [`Index`], what indexes them.

use super::structs::{self, ByValue};
use super::trace::{check_handle, id_of, node, with};
use super::types::{Element, Integer, KernelType, Numeric, ScalarType, Value};
use super::{lit, Expr};
use crate::ir::{
    self, AtomicOp, AtomicOrder, Expr as IrExpr, ExprId, LocalId, Mem, MemOrder, MemScope, ParamId,
    ParamKind, PrivateId, Stmt,
};
use std::marker::PhantomData;
use std::panic::Location;

/// Appends a parameter to the kernel being built; returns its index and the kernel's trace id.
pub(super) fn declare_param(name: &str, kind: ParamKind) -> (ParamId, u32) {
    with(|t| {
        let p = t.f.params.push(ir::Param {
            name: name.to_string(),
            kind,
        });
        (p, t.id)
    })
}

/// Handle given to the kernel closure; declares parameters, local memory and gathers, in
/// launch order.
pub struct KernelDef {
    pub(super) _private: (),
}

/// A buffer parameter holding elements of type `T`.
#[derive(Clone, Copy, Debug)]
pub struct BufferParam<T> {
    pub(super) param: ParamId,
    pub(super) trace: u32,
    pub(super) _t: PhantomData<fn() -> T>,
}

/// A local-memory array shared by the work-items of a work-group.
#[derive(Clone, Copy, Debug)]
pub struct LocalArray<T> {
    pub(super) index: LocalId,
    pub(super) trace: u32,
    pub(super) _t: PhantomData<fn() -> T>,
}

/// A private array: each work-item has its own.
#[derive(Clone, Copy, Debug)]
pub struct PrivateArray<T> {
    pub(super) index: PrivateId,
    pub(super) trace: u32,
    pub(super) _t: PhantomData<fn() -> T>,
}

/// A private mutable variable. Reading it ([`Var::get`]) snapshots its current value.
#[derive(Clone, Copy, Debug)]
pub struct Var<T> {
    pub(super) index: PrivateId,
    pub(super) trace: u32,
    pub(super) _t: PhantomData<fn() -> T>,
}

impl KernelDef {
    pub(super) fn param(&mut self, name: &str, kind: ParamKind) -> (ParamId, u32) {
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
            let index = t.f.locals.push(ir::LocalDecl {
                name: name.to_string(),
                elem: T::TYPE,
                len: ir::ArrayLen::Fixed(len),
            });
            LocalArray {
                index,
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
            let index = t.f.locals.push(ir::LocalDecl {
                name: name.to_string(),
                elem: T::TYPE,
                len: ir::ArrayLen::Param(p),
            });
            LocalArray {
                index,
                trace: t.id,
                _t: PhantomData,
            }
        })
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
pub(super) fn load<T: KernelType>(mem: Mem, index: ExprId) -> Expr<T> {
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
pub(super) fn store<T: KernelType>(mem: Mem, index: ExprId, value: Expr<T>) {
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
            }) = t.f.params.get_mut(self.param)
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
        let index = t.f.privates.push(ir::PrivateDecl {
            name: name.to_string(),
            elem: T::TYPE,
            len: Some(len),
        });
        PrivateArray {
            index,
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
        let index = t.f.privates.push(ir::PrivateDecl {
            name: name.to_string(),
            elem: T::TYPE,
            len: None,
        });
        Var {
            index,
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
        let index = t.f.privates.push(ir::PrivateDecl {
            name: name.to_string(),
            elem: T::TYPE,
            len: None,
        });
        Var {
            index,
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

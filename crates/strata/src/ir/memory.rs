//! What statements read and write ([`Mem`]) and how they order memory: fences, memory orders
//! and scopes, and the atomic read-modify-write operations.

use super::{FieldId, LocalId, ParamId, PrivateId};
use std::fmt;

/// A memory object a statement reads or writes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Mem {
    /// Buffer parameter `n` (global memory).
    Buffer(ParamId),
    /// Local-memory array `n` ([`Function::locals`](super::Function::locals)).
    Local(LocalId),
    /// Private variable or array `n` ([`Function::privates`](super::Function::privates)).
    Private(PrivateId),
    /// Field view `n` ([`Function::fields`](super::Function::fields)): one scalar or vector
    /// field of every element of a buffer of structs, indexed by the element's index.
    Field(FieldId),
}

/// Memory-ordering scope of a barrier or fence.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Fence {
    /// Orders accesses to local memory.
    pub local: bool,
    /// Orders accesses to global memory.
    pub global: bool,
}

/// The memory order of an atomic operation or a fence, as in C++ and OpenCL 2.0: what the
/// work-item's other memory accesses may not be reordered across.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MemOrder {
    /// Only the atomicity of the operation itself.
    Relaxed,
    /// Later accesses stay after it (loads and read-modify-writes).
    Acquire,
    /// Earlier accesses stay before it (read-modify-writes).
    Release,
    /// Both (read-modify-writes and fences).
    AcqRel,
    /// Both, and one total order of all `SeqCst` operations.
    SeqCst,
}

impl MemOrder {
    /// Name used by the text form.
    pub fn name(self) -> &'static str {
        match self {
            MemOrder::Relaxed => "relaxed",
            MemOrder::Acquire => "acquire",
            MemOrder::Release => "release",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::SeqCst => "seq_cst",
        }
    }

    /// Whether earlier accesses must stay before the operation (release, acq_rel, seq_cst).
    pub fn releases(self) -> bool {
        matches!(
            self,
            MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }

    /// Whether later accesses must stay after the operation (acquire, acq_rel, seq_cst).
    pub fn acquires(self) -> bool {
        matches!(
            self,
            MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }
}

/// Which work-items an atomic operation or fence orders memory with.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MemScope {
    /// The work-items of the work-group.
    WorkGroup,
    /// Every work-item of the launch (and the device's other launches).
    Device,
}

impl MemScope {
    /// Name used by the text form.
    pub fn name(self) -> &'static str {
        match self {
            MemScope::WorkGroup => "work_group",
            MemScope::Device => "device",
        }
    }
}

/// The memory order and scope of an atomic operation or a fence.
///
/// Backends implement an order at least as strong as the one asked for: OpenCL C 1.2 has no
/// ordered atomics, so a relaxed atomic gets a `mem_fence` (of local and global memory) before
/// it when it releases and after it when it acquires; CUDA does the same with
/// `__threadfence_block()` (work-group scope) or `__threadfence()` (device scope), which are
/// sequentially consistent fences; the CPU backends make every atomic and fence sequentially
/// consistent. A program that is correct under the order it asks for is correct on all of them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct AtomicOrder {
    /// The order.
    pub order: MemOrder,
    /// The scope.
    pub scope: MemScope,
}

impl AtomicOrder {
    /// Relaxed, device scope: what atomics without an order are.
    pub const RELAXED: AtomicOrder = AtomicOrder {
        order: MemOrder::Relaxed,
        scope: MemScope::Device,
    };
}

impl fmt::Display for AtomicOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.order.name(), self.scope.name())
    }
}

/// Read-modify-write atomic operations. Each returns the old value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AtomicOp {
    /// `old + v` (integers wrap; `f32`/`f64` add is allowed)
    Add,
    /// `old - v`
    Sub,
    /// `min(old, v)`
    Min,
    /// `max(old, v)`
    Max,
    /// `old & v`
    And,
    /// `old | v`
    Or,
    /// `old ^ v`
    Xor,
    /// `v`
    Exchange,
    /// `if old == compare { v } else { old }`
    CompareExchange,
}

impl AtomicOp {
    /// Name used by the text form.
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Sub => "atomic_sub",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Max => "atomic_max",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
            AtomicOp::Exchange => "atomic_xchg",
            AtomicOp::CompareExchange => "atomic_cmpxchg",
        }
    }
}

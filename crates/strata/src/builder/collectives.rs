//! Synchronisation and work-group collectives: barriers and fences, the work-group
//! reductions, scans and broadcasts ([`group_reduce_add`] ...), and [`group_reduce_with`], a
//! reduction by a user's function built from the sub-group collectives. (The sub-group
//! collectives are in `subgroup.rs`.)

use super::control::{if_, select, while_};
use super::memory::var;
use super::subgroup::{max_sub_group_size, sub_group_local_id, sub_group_shuffle_down};
use super::trace::with;
use super::types::{KernelType, Numeric};
use super::{lit, local_linear_id, local_size, Expr};
use crate::ir::{AtomicOrder, Fence, GroupOp, GroupScope, MemOrder, MemScope, Stmt};
use std::panic::Location;

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
pub(super) fn collective<T: KernelType, R: KernelType>(
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
pub(super) fn group_op<T: KernelType>(
    op: GroupOp,
    arg: Expr<T>,
    source: Option<Expr<u32>>,
) -> Expr<T> {
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

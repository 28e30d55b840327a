//! Sub-groups (warps): the ids, and the collectives of [`GroupScope::SubGroup`] (its docs say
//! what a sub-group is on each backend). Like the work-group collectives, every sub-group
//! collective must be reached by every work-item of the work-group.

use super::{builtin, collective, Expr, KernelType, Numeric};
use crate::ir::{Builtin, GroupOp, GroupScope};

/// Number of work-items in this sub-group: the device's sub-group size
/// ([`max_sub_group_size`]), or less in the last sub-group of a work-group whose size is not a
/// multiple of it. OpenCL `get_sub_group_size`.
#[track_caller]
pub fn sub_group_size() -> Expr<u32> {
    builtin(Builtin::SubGroupSize)
}
/// The device's sub-group size (32 on CUDA, where a sub-group is a warp; see
/// `DeviceInfo::sub_group_size`). OpenCL `get_max_sub_group_size`.
#[track_caller]
pub fn max_sub_group_size() -> Expr<u32> {
    builtin(Builtin::MaxSubGroupSize)
}
/// Number of sub-groups in the work-group. OpenCL `get_num_sub_groups`.
#[track_caller]
pub fn num_sub_groups() -> Expr<u32> {
    builtin(Builtin::NumSubGroups)
}
/// Index of this work-item's sub-group: `local_linear_id() / max_sub_group_size()`. OpenCL
/// `get_sub_group_id`; CUDA the warp index.
#[track_caller]
pub fn sub_group_id() -> Expr<u32> {
    builtin(Builtin::SubGroupId)
}
/// This work-item's lane: `local_linear_id() % max_sub_group_size()`. OpenCL
/// `get_sub_group_local_id`; CUDA the lane index.
#[track_caller]
pub fn sub_group_local_id() -> Expr<u32> {
    builtin(Builtin::SubGroupLocalId)
}

#[track_caller]
fn sub<T: KernelType>(op: GroupOp, x: Expr<T>, source: Option<Expr<u32>>) -> Expr<T> {
    collective(op, GroupScope::SubGroup, x, source)
}

/// Sum of `x` over the sub-group (integers wrap; a float sum associates as the backend does,
/// see [`GroupOp`]).
#[track_caller]
pub fn sub_group_reduce_add<T: Numeric>(x: Expr<T>) -> Expr<T> {
    sub(GroupOp::ReduceAdd, x, None)
}
/// Minimum of `x` over the sub-group.
#[track_caller]
pub fn sub_group_reduce_min<T: Numeric>(x: Expr<T>) -> Expr<T> {
    sub(GroupOp::ReduceMin, x, None)
}
/// Maximum of `x` over the sub-group.
#[track_caller]
pub fn sub_group_reduce_max<T: Numeric>(x: Expr<T>) -> Expr<T> {
    sub(GroupOp::ReduceMax, x, None)
}
/// Sum of `x` over lanes `0..=sub_group_local_id()`.
#[track_caller]
pub fn sub_group_scan_inclusive_add<T: Numeric>(x: Expr<T>) -> Expr<T> {
    sub(GroupOp::ScanInclusiveAdd, x, None)
}
/// Minimum of `x` over lanes `0..=sub_group_local_id()`.
#[track_caller]
pub fn sub_group_scan_inclusive_min<T: Numeric>(x: Expr<T>) -> Expr<T> {
    sub(GroupOp::ScanInclusiveMin, x, None)
}
/// Maximum of `x` over lanes `0..=sub_group_local_id()`.
#[track_caller]
pub fn sub_group_scan_inclusive_max<T: Numeric>(x: Expr<T>) -> Expr<T> {
    sub(GroupOp::ScanInclusiveMax, x, None)
}
/// Sum of `x` over lanes `0..sub_group_local_id()` (0 in lane 0).
#[track_caller]
pub fn sub_group_scan_exclusive_add<T: Numeric>(x: Expr<T>) -> Expr<T> {
    sub(GroupOp::ScanExclusiveAdd, x, None)
}
/// Minimum of `x` over lanes `0..sub_group_local_id()` (the type's greatest value, `+inf` for
/// floats, in lane 0).
#[track_caller]
pub fn sub_group_scan_exclusive_min<T: Numeric>(x: Expr<T>) -> Expr<T> {
    sub(GroupOp::ScanExclusiveMin, x, None)
}
/// Maximum of `x` over lanes `0..sub_group_local_id()` (the type's least value, `-inf` for
/// floats, in lane 0).
#[track_caller]
pub fn sub_group_scan_exclusive_max<T: Numeric>(x: Expr<T>) -> Expr<T> {
    sub(GroupOp::ScanExclusiveMax, x, None)
}
/// The value of `x` in lane `lane` of this sub-group (any type, vectors included). A lane the
/// sub-group does not have is an error on the CPU backends; prefer [`sub_group_shuffle`] when
/// the lane may be out of range. OpenCL `sub_group_broadcast`.
#[track_caller]
pub fn sub_group_broadcast<T: KernelType>(x: Expr<T>, lane: impl Into<Expr<u32>>) -> Expr<T> {
    sub(GroupOp::Broadcast, x, Some(lane.into()))
}
/// The value of `x` in lane `lane` (which may differ between work-items); `x` itself where
/// `lane` is not a lane of the sub-group. CUDA `__shfl_sync`.
#[track_caller]
pub fn sub_group_shuffle<T: KernelType>(x: Expr<T>, lane: impl Into<Expr<u32>>) -> Expr<T> {
    sub(GroupOp::Shuffle, x, Some(lane.into()))
}
/// The value of `x` in lane `sub_group_local_id() ^ mask`; `x` itself where that is not a lane
/// of the sub-group. CUDA `__shfl_xor_sync`.
#[track_caller]
pub fn sub_group_shuffle_xor<T: KernelType>(x: Expr<T>, mask: impl Into<Expr<u32>>) -> Expr<T> {
    sub(GroupOp::ShuffleXor, x, Some(mask.into()))
}
/// The value of `x` in lane `sub_group_local_id() - delta`; `x` itself where that is below 0.
/// CUDA `__shfl_up_sync`.
#[track_caller]
pub fn sub_group_shuffle_up<T: KernelType>(x: Expr<T>, delta: impl Into<Expr<u32>>) -> Expr<T> {
    sub(GroupOp::ShuffleUp, x, Some(delta.into()))
}
/// The value of `x` in lane `sub_group_local_id() + delta`; `x` itself where that is not a lane
/// of the sub-group. CUDA `__shfl_down_sync`.
#[track_caller]
pub fn sub_group_shuffle_down<T: KernelType>(x: Expr<T>, delta: impl Into<Expr<u32>>) -> Expr<T> {
    sub(GroupOp::ShuffleDown, x, Some(delta.into()))
}
/// The predicate of every lane as a bit mask: bit `l` is `b` in lane `l` (bits above
/// `sub_group_size()` are 0). CUDA `__ballot_sync`.
#[track_caller]
pub fn sub_group_ballot(b: impl Into<Expr<bool>>) -> Expr<u32> {
    collective(GroupOp::Ballot, GroupScope::SubGroup, b.into(), None)
}
/// `true` if `b` is true in any lane of the sub-group. CUDA `__any_sync`.
#[track_caller]
pub fn sub_group_any(b: impl Into<Expr<bool>>) -> Expr<bool> {
    sub(GroupOp::Any, b.into(), None)
}
/// `true` if `b` is true in every lane of the sub-group. CUDA `__all_sync`.
#[track_caller]
pub fn sub_group_all(b: impl Into<Expr<bool>>) -> Expr<bool> {
    sub(GroupOp::All, b.into(), None)
}

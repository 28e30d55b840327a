//! Collectives of a work-group or a sub-group ([`GroupOp`], [`GroupScope`]): their
//! operations, names and result rules.

use super::Type;

/// Collective operations of a work-group or of a sub-group (see [`GroupScope`]). Every
/// work-item of the work-group must reach them together (like a barrier), sub-group
/// operations included. Scans run in local-linear-id order (lane order in a sub-group).
///
/// **Results.** A reduction or scan is defined as the fold, from the operation's identity
/// (`0`, the type's greatest value for `min`, its least for `max`; `±inf` for floats), over the
/// operands of the work-items concerned (those of the work-group, or of the sub-group): the
/// reduction over all of them, the inclusive scan of work-item `l` over work-items `0..=l`, the
/// exclusive scan over `0..l` (the identity for the first). Backends may combine
/// the operands in any order and grouping (the CPU backend and OpenCL fold in local-id order,
/// CUDA combines warp shuffles in a tree), which changes nothing for the
/// exact operations: integer `add` (wrapping), `min` and `max`, `any`, `all`, and float `min`
/// and `max` (NaN operands are dropped; an all-NaN fold gives the identity; only the sign of a
/// zero result may differ when both zeros occur, as for `min`/`max` themselves). **Float
/// `add` is the one inexact case:** the result is the sum in *some* association order, so it
/// may differ between backends (and between launch shapes) by rounding, within the bound of
/// any summation order: `|result - exact| <= gamma(k) * sum(|x|)` over the `k + 1` operands,
/// `gamma(k) = k u / (1 - k u)`, `u` the unit roundoff (`2^-24` for `f32`, `2^-53` for
/// `f64`), plus what flushing subnormal operands to zero changes. The conformance suite and
/// the differential tests hold every backend to exactly this rule. A result that must be
/// reproducible bit for bit should reduce integers (or fixed-point values), or use the patterns
/// layer's `reduce` with a user operator, which combines in index order with a grouping fixed
/// by its staging.
///
/// **Data movement** (broadcast, the shuffles) takes any type, vectors included, and is exact.
/// The shuffles and `Ballot` exist for sub-groups only.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GroupOp {
    /// Sum over the group (integers wrap; floats in some association order).
    ReduceAdd,
    /// Minimum over the group.
    ReduceMin,
    /// Maximum over the group.
    ReduceMax,
    /// Sum of the values of work-items `0..=self` (floats in some association order).
    ScanInclusiveAdd,
    /// Sum of the values of work-items `0..self` (0 for the first; floats in some association
    /// order).
    ScanExclusiveAdd,
    /// Minimum over work-items `0..=self`.
    ScanInclusiveMin,
    /// Maximum over work-items `0..=self`.
    ScanInclusiveMax,
    /// Minimum over work-items `0..self` (the type's greatest value, `+inf` for floats, for
    /// the first).
    ScanExclusiveMin,
    /// Maximum over work-items `0..self` (the type's least value, `-inf` for floats, for the
    /// first).
    ScanExclusiveMax,
    /// The value of the work-item whose local linear id (lane, in a sub-group) is the second
    /// operand. A source outside the group is an error on the CPU backends and an unspecified
    /// value on the others.
    Broadcast,
    /// `true` if the value is `true` in any work-item.
    Any,
    /// `true` if the value is `true` in every work-item.
    All,
    /// Sub-groups only: the value of lane `source` (the second operand); the work-item's own
    /// value when `source` is not a lane of the sub-group.
    Shuffle,
    /// Sub-groups only: the value of lane `lane ^ mask` (the second operand is the mask); the
    /// own value when that is not a lane of the sub-group.
    ShuffleXor,
    /// Sub-groups only: the value of lane `lane - delta` (the second operand is the delta);
    /// the own value when that is below 0.
    ShuffleUp,
    /// Sub-groups only: the value of lane `lane + delta`; the own value when that is not a
    /// lane of the sub-group.
    ShuffleDown,
    /// Sub-groups only: a `u32` whose bit `l` is the `bool` operand of lane `l` (bits of lanes
    /// the sub-group does not have are 0).
    Ballot,
}

/// Which work-items a collective ([`Stmt::Group`](super::Stmt::Group)) spans.
///
/// **Sub-groups.** A work-group is cut into sub-groups of consecutive local linear ids: the
/// device's sub-group size `S` ([`Builtin::MaxSubGroupSize`](super::Builtin::MaxSubGroupSize),
/// at most 32, reported as the runtime's `DeviceInfo::sub_group_size`), the last one smaller
/// when the work-group's size is not a multiple of `S`. Sub-group `g` holds the work-items
/// `g*S .. min((g+1)*S, size)`; a work-item's lane is its index in its sub-group. On CUDA a
/// sub-group is a warp; OpenCL (without native sub-groups) and the CPU backends compute the
/// same thing in local memory or in runs of consecutive lanes. Results are the same on every
/// backend of the same `S`. Like a work-group collective, a sub-group collective must be
/// reached by every work-item of the work-group (the rule OpenCL devices without sub-groups
/// need; the CPU backends check it).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GroupScope {
    /// The whole work-group.
    WorkGroup,
    /// The work-item's sub-group.
    SubGroup,
}

macro_rules! group_op_names {
    ($($op:ident => $name:literal),* $(,)?) => {
        impl GroupOp {
            /// Every operation.
            pub const ALL: [GroupOp; 17] = [$(GroupOp::$op),*];

            /// Name used by the text form and the builder: `group_` or `sub_group_` and the
            /// operation (`sub_group_reduce_add`).
            pub fn name(self, scope: GroupScope) -> &'static str {
                match (scope, self) {
                    $(
                        (GroupScope::WorkGroup, GroupOp::$op) => concat!("group_", $name),
                        (GroupScope::SubGroup, GroupOp::$op) => concat!("sub_group_", $name),
                    )*
                }
            }
        }
    };
}

group_op_names! {
    ReduceAdd => "reduce_add",
    ReduceMin => "reduce_min",
    ReduceMax => "reduce_max",
    ScanInclusiveAdd => "scan_inclusive_add",
    ScanExclusiveAdd => "scan_exclusive_add",
    ScanInclusiveMin => "scan_inclusive_min",
    ScanInclusiveMax => "scan_inclusive_max",
    ScanExclusiveMin => "scan_exclusive_min",
    ScanExclusiveMax => "scan_exclusive_max",
    Broadcast => "broadcast",
    Any => "any",
    All => "all",
    Shuffle => "shuffle",
    ShuffleXor => "shuffle_xor",
    ShuffleUp => "shuffle_up",
    ShuffleDown => "shuffle_down",
    Ballot => "ballot",
}

impl GroupOp {
    /// Whether the operation takes a second operand, a `u32`
    /// ([`Stmt::Group`](super::Stmt::Group)'s `source`): broadcast and the shuffles.
    pub fn takes_source(self) -> bool {
        matches!(
            self,
            GroupOp::Broadcast
                | GroupOp::Shuffle
                | GroupOp::ShuffleXor
                | GroupOp::ShuffleUp
                | GroupOp::ShuffleDown
        )
    }

    /// Whether the operation exists for sub-groups only (the shuffles and ballot).
    pub fn sub_group_only(self) -> bool {
        (self.takes_source() && self != GroupOp::Broadcast) || self == GroupOp::Ballot
    }

    /// Whether the operation is a reduction or a scan (a fold with an identity).
    pub fn is_fold(self) -> bool {
        matches!(
            self,
            GroupOp::ReduceAdd
                | GroupOp::ReduceMin
                | GroupOp::ReduceMax
                | GroupOp::ScanInclusiveAdd
                | GroupOp::ScanExclusiveAdd
                | GroupOp::ScanInclusiveMin
                | GroupOp::ScanInclusiveMax
                | GroupOp::ScanExclusiveMin
                | GroupOp::ScanExclusiveMax
        )
    }

    /// Whether the operation is a reduction (every work-item gets the same fold).
    pub fn is_reduce(self) -> bool {
        matches!(
            self,
            GroupOp::ReduceAdd | GroupOp::ReduceMin | GroupOp::ReduceMax
        )
    }

    /// Whether the operation is an exclusive scan.
    pub fn is_exclusive(self) -> bool {
        matches!(
            self,
            GroupOp::ScanExclusiveAdd | GroupOp::ScanExclusiveMin | GroupOp::ScanExclusiveMax
        )
    }

    /// The result type for an operand of type `arg` (`u32` for ballot, `arg` otherwise).
    pub fn result_type(self, arg: Type) -> Type {
        if self == GroupOp::Ballot {
            Type::U32
        } else {
            arg
        }
    }
}

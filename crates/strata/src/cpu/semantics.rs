//! The meaning both CPU backends share: the results of the collectives, the read-modify-write
//! of the atomics, the order of the work-groups, and the errors both report the same way.
//!
//! The interpreter ([`super::exec`]) and the compiled backend ([`super::jit`]) each call these,
//! so that a kernel gives the same bits and the same errors on both.
//!
//! **Memory order.** Both backends implement every order the IR can ask for by the strongest:
//! every read-modify-write and every fence is sequentially consistent; an atomic load is
//! Cranelift's (sequentially consistent) in the compiled code, and in the interpreter a
//! relaxed load followed by a sequentially consistent fence when it acquires.
//!
//! **Collectives** fold in local-id order, over the work-group or over each sub-group (runs of
//! [`SUB_GROUP_SIZE`](super::SUB_GROUP_SIZE) consecutive work-items), so float sums are the
//! same bits on both backends.

use crate::error::{Error, Result};
use crate::ir::eval::{with_scalar, Column, Num};
use crate::ir::{AtomicOp, GroupOp, GroupScope, Type};
use std::sync::atomic::Ordering;

/// The message of a kernel fault for a `for` loop whose step is 0.
pub(super) const ZERO_STEP: &str = "for loop step is 0; the loop would never end";

/// The message of a kernel fault for an integer division (`div`) or remainder by zero.
pub(super) fn div_by_zero(div: bool) -> String {
    format!(
        "integer {} by zero",
        if div { "division" } else { "remainder" }
    )
}

/// The id of work-group `g` of a launch of `groups` work-groups, which both backends number
/// with x fastest, then y, then z.
pub(super) fn group_id(g: usize, groups: [usize; 3]) -> [u32; 3] {
    let [gx, gy, _] = groups;
    [
        (g % gx) as u32,
        ((g / gx) % gy) as u32,
        (g / (gx * gy)) as u32,
    ]
}

/// The index in `0..total` of the work-group with ids `group`: the inverse of [`group_id`].
pub(super) fn group_index(group: [u32; 3], groups: [usize; 3]) -> usize {
    let [gx, gy, _] = groups;
    group[0] as usize + gx * (group[1] as usize + gy * group[2] as usize)
}

/// Checks that every one of the `size` work-items of work-group `group` of kernel `kernel`
/// reached a barrier or collective (`what`), `reached` of them did: a barrier reached by part of
/// a work-group is an error on the CPU backends, where on a GPU it would hang or be undefined.
pub(super) fn check_uniform(
    kernel: &str,
    what: &str,
    reached: usize,
    size: usize,
    group: [u32; 3],
) -> Result<()> {
    if reached != size {
        return Err(Error::BarrierDivergence {
            kernel: kernel.into(),
            what: what.into(),
            reached,
            size,
            group,
        });
    }
    Ok(())
}

/// Runs `$body` with `$W` the unsigned integer of `$size` bytes (1, 2, 4, else 8) and `$A`
/// its atomic type: memory is read and written in words of the element's size.
macro_rules! words {
    ($size:expr, $W:ident, $A:ident => $body:expr) => {
        match $size {
            1 => {
                type $W = u8;
                type $A = std::sync::atomic::AtomicU8;
                $body
            }
            2 => {
                type $W = u16;
                type $A = std::sync::atomic::AtomicU16;
                $body
            }
            4 => {
                type $W = u32;
                type $A = std::sync::atomic::AtomicU32;
                $body
            }
            _ => {
                type $W = u64;
                type $A = std::sync::atomic::AtomicU64;
                $body
            }
        }
    };
}
pub(super) use words;

/// Computes collective `op` of `scope` over the `n` work-items of a work-group, cut into
/// sub-groups of [`SUB_GROUP_SIZE`](super::SUB_GROUP_SIZE) for [`GroupScope::SubGroup`]:
/// `arg` holds each work-item's operand (of type `ty`, component-major: component `c` of
/// work-item `l` at `c * n + l`), `source` each one's second operand (see
/// [`GroupOp::takes_source`]); the results go to `out` in the same layout. The one definition
/// of the collectives' results on the CPU backends (the interpreter and the compiled backend).
/// A broadcast from outside the group fails with the work-item and a message.
pub(super) fn collective(
    op: GroupOp,
    scope: GroupScope,
    ty: Type,
    n: usize,
    arg: &Column,
    source: Option<&[u32]>,
    out: &mut Column,
) -> std::result::Result<(), (usize, String)> {
    let run = match scope {
        GroupScope::WorkGroup => n,
        GroupScope::SubGroup => super::SUB_GROUP_SIZE as usize,
    };
    // The groups: runs of consecutive work-items.
    let groups = (0..n).step_by(run.max(1)).map(|b| b..(b + run).min(n));
    out.reserve_bytes(n * op.result_type(ty).size());
    if op.takes_source() {
        let src = source.expect("validated: the operation has a second operand");
        let size = ty.scalar.size();
        let a = arg.bytes();
        let o = out.bytes_mut();
        for g in groups {
            let len = g.len();
            for l in g.clone() {
                let (lane, s) = (l - g.start, src[l] as usize);
                let from = match op {
                    GroupOp::Broadcast if s >= len => {
                        let message = match scope {
                            GroupScope::WorkGroup => format!(
                                "group_broadcast from work-item {s}, but the work-group has {len}"
                            ),
                            GroupScope::SubGroup => format!(
                                "sub_group_broadcast from lane {s}, but the sub-group has {len}"
                            ),
                        };
                        return Err((l, message));
                    }
                    GroupOp::Broadcast | GroupOp::Shuffle => Some(s),
                    GroupOp::ShuffleXor => Some(lane ^ s),
                    GroupOp::ShuffleUp => lane.checked_sub(s),
                    _ => lane.checked_add(s),
                };
                let from = g.start + from.filter(|&f| f < len).unwrap_or(lane);
                for c in 0..ty.width as usize {
                    let (from, to) = ((c * n + from) * size, (c * n + l) * size);
                    o[to..to + size].copy_from_slice(&a[from..from + size]);
                }
            }
        }
        return Ok(());
    }
    if matches!(op, GroupOp::Any | GroupOp::All | GroupOp::Ballot) {
        let a = arg.slice::<u8>(n);
        let mut bits = vec![0u32; n];
        let mut flags = vec![0u8; n];
        for g in groups {
            let r = match op {
                GroupOp::Any => a[g.clone()].iter().any(|&x| x != 0),
                GroupOp::All => a[g.clone()].iter().all(|&x| x != 0),
                _ => {
                    let m = (g.clone())
                        .filter(|&l| a[l] != 0)
                        .fold(0u32, |m, l| m | 1 << (l - g.start));
                    bits[g].fill(m);
                    continue;
                }
            };
            flags[g].fill(r as u8);
        }
        if op == GroupOp::Ballot {
            out.slice_mut::<u32>(n).copy_from_slice(&bits);
        } else {
            out.slice_mut::<u8>(n).copy_from_slice(&flags);
        }
        return Ok(());
    }
    let s = ty.scalar;
    with_scalar!(s, T => {
        let a = arg.slice::<T>(n);
        let o = out.slice_mut::<T>(n);
        let (init, f) = fold_op::<T>(op);
        for g in groups {
            let mut acc = init;
            if op.is_reduce() {
                for &x in &a[g.clone()] {
                    acc = f(acc, x);
                }
                o[g].fill(acc);
            } else if op.is_exclusive() {
                for l in g {
                    o[l] = acc;
                    acc = f(acc, a[l]);
                }
            } else {
                for l in g {
                    acc = f(acc, a[l]);
                    o[l] = acc;
                }
            }
        }
    });
    Ok(())
}

/// The identity and the function with which a reduction or scan `op` folds its values, in
/// local-id order (the compiled backend's group level folds records with them directly,
/// [`crate::cpu::jit`]).
pub(super) fn fold_op<T: Num>(op: GroupOp) -> (T, fn(T, T) -> T) {
    match op {
        GroupOp::ReduceAdd | GroupOp::ScanInclusiveAdd | GroupOp::ScanExclusiveAdd => {
            (T::zero(), T::add)
        }
        GroupOp::ReduceMin | GroupOp::ScanInclusiveMin | GroupOp::ScanExclusiveMin => {
            (T::greatest(), T::min_)
        }
        _ => (T::least(), T::max_),
    }
}

/// The new value of an atomic `op` on `old` with operand `v` (and, for a compare-exchange, the
/// value `cmp` compared with `old`, bit for bit): the one definition of the atomics' results on
/// the CPU backends.
pub(super) fn apply_atomic<T: Num>(op: AtomicOp, old: T, v: T, cmp: Option<T>) -> T {
    let bits = |x: T| -> u64 {
        let mut b = [0u8; 8];
        b[..std::mem::size_of::<T>()].copy_from_slice(bytemuck::bytes_of(&x));
        u64::from_le_bytes(b)
    };
    let from_bits = |b: u64| -> T {
        bytemuck::pod_read_unaligned(&b.to_le_bytes()[..std::mem::size_of::<T>()])
    };
    match op {
        AtomicOp::Add => old.add(v),
        AtomicOp::Sub => old.sub(v),
        AtomicOp::Min => old.min_(v),
        AtomicOp::Max => old.max_(v),
        AtomicOp::And => from_bits(bits(old) & bits(v)),
        AtomicOp::Or => from_bits(bits(old) | bits(v)),
        AtomicOp::Xor => from_bits(bits(old) ^ bits(v)),
        AtomicOp::Exchange => v,
        AtomicOp::CompareExchange => {
            if bits(old) == bits(cmp.expect("validated")) {
                v
            } else {
                old
            }
        }
    }
}

/// Atomically replaces element `i` (of `T`'s size) at `base` by `f(old)`; returns the old value.
///
/// # Safety
/// `base` must point to memory that holds at least `i + 1` elements of `T` and is only accessed
/// atomically.
pub(super) unsafe fn atomic_rmw<T: Num>(base: *const u8, i: usize, f: impl Fn(T) -> T) -> T {
    words!(std::mem::size_of::<T>(), W, A => {
        let cell = &*(base as *const A).add(i);
        let mut cur: W = cell.load(Ordering::Relaxed);
        loop {
            let old: T = bytemuck::pod_read_unaligned(&bytemuck::bytes_of(&cur)[..std::mem::size_of::<T>()]);
            let new: W = bytemuck::pod_read_unaligned(&bytemuck::bytes_of(&f(old))[..std::mem::size_of::<W>()]);
            // Sequentially consistent whatever the IR asks for (`ir::AtomicOrder`).
            match cell.compare_exchange_weak(cur, new, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => return old,
                Err(x) => cur = x,
            }
        }
    })
}

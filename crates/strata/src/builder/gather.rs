//! Gather reductions: a value combined over all work-items of a launch (`gather_add`,
//! `gather_min`, `gather_max`, and `gather_with` a user's function). Each work-group folds its
//! values with a work-group collective and writes its partial to a hidden buffer parameter,
//! listed in [`ir::Function::hidden`] with the gather's operation, identity and (for
//! `gather_with`) the recorded kernel that folds the partials; the runtime combines them after
//! the launch ([`Run::gathered`](crate::Run::gathered)).
//!
//! The partials' buffer comes from the device's pool of such buffers and is reset to the
//! operation's identity by a fill on the launch's queue before the launch, so a work-group
//! that returns before reaching the gather contributes the identity, not what the buffer held.

use super::collectives::{group_op, group_reduce_with};
use super::control::{for_range, if_};
use super::memory::var;
use super::trace::{record, with};
use super::types::Numeric;
use super::{global_id, group_linear_id, lit, local_linear_id, BufferParam, Expr, KernelDef};
use crate::ir::{self, GatherOp, GroupOp, ParamKind};
use std::marker::PhantomData;

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

impl KernelDef {
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

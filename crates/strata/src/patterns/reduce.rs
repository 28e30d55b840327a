//! Reductions: `reduce` with a user operator (and through it `sum`, `min`, `max`, `count`,
//! `any`, `all`) and `argmin` / `argmax`.
//!
//! A reduction is one block pass over the view (the view's chain is traced into it, so a
//! `zip + map + reduce` is one kernel) writing one total per work-group, then, when there was
//! more than one work-group, one more pass by a single work-group over those totals. Both
//! passes run on the device; the host reads the one result. Built-in operators (`sum`, `min`,
//! `max`, and user operators on integers that are exactly `+`, `min` or `max`) combine the
//! work-items' totals with the work-group reductions ([`crate::builder::group_reduce_add`],
//! warp shuffles on CUDA); other operators with a scan in local memory, in index order.

use super::algorithms::prepare;
use super::scan::{block_pass, plan, plan_one, recognize, BuiltinOp, Mode, Pass};
use super::sort::ArgKey;
use super::tune::TunedOp;
use super::{type_key, DeviceVec, Exec, Reads, View};
use crate::builder::{lit, Expr, Numeric};
use crate::error::Result;
use crate::Event;
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// `builtin`: the operator is that built-in one (`sum`, `min`, `max` and their users), so the
/// strided layout and the work-group reductions may be used; a user operator on integers that
/// is exactly one of them is recognized as such.
pub(crate) fn reduce<T, V, F>(
    ex: &Exec,
    view: &V,
    init: T,
    op: &F,
    builtin: Option<BuiltinOp>,
) -> Result<T>
where
    T: Numeric,
    V: View<Item = Expr<T>>,
    F: Fn(Expr<T>, Expr<T>) -> Expr<T>,
{
    let reads = prepare("reduce", view)?;
    let n = view.len();
    if n == 0 {
        return Ok(init);
    }
    let ex = &ex.tuned_for(TunedOp::Reduce, T::TYPE, n);
    let builtin = builtin.or_else(|| recognized(op));
    let p = plan(ex, n);
    // Temporaries from the exec's scratch, kept again for the next call once the result is
    // read (a new allocation costs more than a small reduction).
    let scratch = ex.scratch();
    let partials = scratch.take::<T>(ex.device(), p.groups)?;
    let e1 = block_pass(
        ex,
        "pattern_reduce",
        view,
        op,
        &p,
        &reads,
        Pass {
            mode: Mode::Reduce,
            builtin,
            init: Some(init),
            carries: None,
            out: &partials,
            out_off: 0,
        },
    )?;
    if p.groups == 1 {
        e1.wait()?;
        let r = ex.queue().read_range(&partials, 0..1)?[0];
        scratch.keep(partials);
        return Ok(r);
    }
    let result = scratch.take::<T>(ex.device(), 1)?;
    let pv = DeviceVec::from_parts(ex, partials.clone(), 0, p.groups);
    let mut preads = Reads::default();
    pv.reads(true, &mut preads);
    let e2 = block_pass(
        ex,
        "pattern_reduce",
        &&pv,
        op,
        &plan_one(ex, p.groups),
        &preads,
        Pass {
            mode: Mode::Reduce,
            builtin,
            init: None,
            carries: None,
            out: &result,
            out_off: 0,
        },
    )?;
    Event::wait_all(&[e1, e2])?;
    let r = ex.queue().read_range(&result, 0..1)?[0];
    drop(pv);
    scratch.keep(partials);
    scratch.keep(result);
    Ok(r)
}

/// [`recognize`], remembered by the operator's type where it captures nothing (its type is
/// then all there is to it): a user's `reduce` in a loop records its operator once.
fn recognized<T, F>(op: &F) -> Option<BuiltinOp>
where
    T: Numeric,
    F: Fn(Expr<T>, Expr<T>) -> Expr<T>,
{
    type Known = HashMap<TypeId, Option<BuiltinOp>>;
    static KNOWN: LazyLock<Mutex<Known>> = LazyLock::new(Default::default);
    if std::mem::size_of::<F>() != 0 {
        return recognize(op);
    }
    let key = type_key::<(F, T)>();
    if let Some(&b) = KNOWN.lock().unwrap().get(&key) {
        return b;
    }
    let b = recognize(op);
    let mut known = KNOWN.lock().unwrap();
    if known.len() >= 1024 {
        known.clear();
    }
    known.insert(key, b);
    b
}

/// The largest (`largest`) or smallest element, `None` for no elements: a commutative
/// reduction from the type's least or greatest value.
pub(crate) fn extreme<T, V>(ex: &Exec, view: &V, largest: bool) -> Result<Option<T>>
where
    T: Numeric,
    V: View<Item = Expr<T>>,
{
    if view.is_empty() {
        view.check()?;
        return Ok(None);
    }
    // One closure per operator, capturing nothing: the kernel is then found without recording
    // it after the first call (see `launch_fast`).
    if largest {
        let max = |a: Expr<T>, b: Expr<T>| a.max(b);
        let least = crate::ir::eval::Num::least();
        reduce(ex, view, least, &max, Some(BuiltinOp::Max)).map(Some)
    } else {
        let min = |a: Expr<T>, b: Expr<T>| a.min(b);
        let greatest = crate::ir::eval::Num::greatest();
        reduce(ex, view, greatest, &min, Some(BuiltinOp::Min)).map(Some)
    }
}

/// The first index of the smallest (or largest) element: a `u64` reduction of
/// `order_bits(x) << 32 | i` (for the largest, `| (u32::MAX - i)`), fused with the view.
pub(crate) fn arg_extreme<T, V>(ex: &Exec, view: &V, largest: bool) -> Result<Option<(usize, T)>>
where
    T: ArgKey,
    V: View<Item = Expr<T>>,
{
    view.check()?;
    if view.is_empty() {
        return Ok(None);
    }
    let packed = view.clone().enumerate().map(move |(i, x)| {
        let key = T::order_bits(x).cast::<u64>() << lit(32u64);
        let idx = if largest { lit(u32::MAX) - i } else { i };
        key | idx.cast::<u64>()
    });
    let r = if largest {
        let max = |a: Expr<u64>, b| a.max(b);
        reduce(ex, &packed, 0u64, &max, Some(BuiltinOp::Max))?
    } else {
        let min = |a: Expr<u64>, b| a.min(b);
        reduce(ex, &packed, u64::MAX, &min, Some(BuiltinOp::Min))?
    };
    let low = r as u32;
    let index = if largest { u32::MAX - low } else { low };
    Ok(Some((index as usize, T::from_order_bits((r >> 32) as u32))))
}

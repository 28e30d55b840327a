//! Reductions: `reduce` with a user operator (and through it `sum`, `min`, `max`, `count`,
//! `any`, `all`) and `argmin` / `argmax`.
//!
//! A reduction is one block pass over the view (the view's chain is traced into it, so a
//! `zip + map + reduce` is one kernel) writing one total per work-group, then, when there was
//! more than one work-group, one more pass by a single work-group over those totals. Both
//! passes run on the device; the host reads the one result.

use super::algorithms::prepare;
use super::scan::{block_pass, plan, plan_one, Mode, Pass};
use super::sort::ArgKey;
use super::{DeviceVec, Exec, Reads, View};
use crate::builder::{lit, Expr, Numeric};
use crate::error::Result;
use crate::{Buffer, Event};

/// `commutative`: the operator is a built-in commutative one, so the strided layout may be used.
pub(crate) fn reduce<T, V, F>(ex: &Exec, view: &V, init: T, op: &F, commutative: bool) -> Result<T>
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
    let p = plan(ex, n);
    let partials = Buffer::<T>::new(ex.device(), p.groups)?;
    let e1 = block_pass(
        ex,
        "pattern_reduce",
        view,
        op,
        &p,
        &reads,
        Pass {
            mode: Mode::Reduce,
            commutative,
            init: Some(init),
            carries: None,
            out: &partials,
            out_off: 0,
        },
    )?;
    if p.groups == 1 {
        e1.wait()?;
        return Ok(ex.queue().read_range(&partials, 0..1)?[0]);
    }
    let result = Buffer::<T>::new(ex.device(), 1)?;
    let pv = DeviceVec::from_parts(ex, partials, 0, p.groups);
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
            commutative,
            init: None,
            carries: None,
            out: &result,
            out_off: 0,
        },
    )?;
    Event::wait_all(&[e1, e2])?;
    Ok(ex.queue().read_range(&result, 0..1)?[0])
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
    let op = |a: Expr<T>, b: Expr<T>| if largest { a.max(b) } else { a.min(b) };
    let init = if largest {
        crate::ir::eval::Num::least()
    } else {
        crate::ir::eval::Num::greatest()
    };
    reduce(ex, view, init, &op, true).map(Some)
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
        reduce(ex, &packed, 0u64, &|a: Expr<u64>, b| a.max(b), true)?
    } else {
        reduce(ex, &packed, u64::MAX, &|a: Expr<u64>, b| a.min(b), true)?
    };
    let low = r as u32;
    let index = if largest { u32::MAX - low } else { low };
    Ok(Some((index as usize, T::from_order_bits((r >> 32) as u32))))
}

//! Selection and grouping: `filter` (copy_if), `partition`, `histogram`, `reduce_by_key`.
//!
//! `filter` and `partition` scan the predicate's 0/1 flags (the predicate and the input views
//! are traced into the scan kernels) and scatter the elements by the scanned positions in one
//! more kernel. `histogram` counts into a local-memory histogram per work-group (at most
//! [`LOCAL_BINS`] bins; more go straight to global atomics) and adds the work-groups'
//! histograms atomically. `reduce_by_key` flags the first element of each run of equal
//! consecutive keys, scans the flags into run numbers, writes each run's key and start, and
//! reduces each run in order (one work-item per run).

use super::algorithms::{elementwise, prepare};
use super::scan::{part, plan, seq};
use super::{check_u32, counting, launch, mem_id, zip, DeviceVec, Exec, Reads, View};
use crate::builder::{barrier, for_range, for_step, if_, lit, local_id, select, var_named, Expr};
use crate::builder::{Numeric, ScalarType};
use crate::error::{Error, Result};

/// Largest histogram kept in local memory per work-group (a staged size).
pub(crate) const LOCAL_BINS: usize = 2048;

fn flag<T: ScalarType, P: Fn(Expr<T>) -> Expr<bool>>(pred: &P, x: Expr<T>) -> Expr<u32> {
    select(pred(x), 1u32, 0u32)
}

/// Inclusive scan of the predicate's flags; returns it and the number of `true`.
fn positions<T, V, P>(ex: &Exec, view: &V, pred: &P) -> Result<(DeviceVec<u32>, usize)>
where
    T: Numeric,
    V: View<Item = Expr<T>>,
    P: Fn(Expr<T>) -> Expr<bool> + Clone,
{
    let n = view.len();
    let pos = DeviceVec::<u32>::zeroed(ex, n)?;
    let p = pred.clone();
    view.clone()
        .map(move |x| flag(&p, x))
        .inclusive_scan_into(ex, &pos, |a, b| a + b)?;
    let count = ex.queue().read_range(pos.buffer(), n - 1..n)?[0] as usize;
    Ok((pos, count))
}

fn scatter<T, V, P>(
    ex: &Exec,
    name: &str,
    view: &V,
    pred: &P,
    pos: &DeviceVec<u32>,
    out: &DeviceVec<T>,
    count: Option<usize>,
) -> Result<()>
where
    T: Numeric,
    V: View<Item = Expr<T>>,
    P: Fn(Expr<T>) -> Expr<bool>,
{
    let mut reads = Reads::default();
    view.reads(true, &mut reads);
    (&pos).reads(true, &mut reads);
    elementwise(
        ex,
        name,
        view.len(),
        &reads,
        &[mem_id(out.buffer())],
        |cx| {
            let o = cx.write(out.buffer());
            let c = count.map(|c| cx.size("count", c));
            (o, c)
        },
        |cx, (o, c), i| {
            let x = view.at(cx, i);
            let keep = pred(x);
            let at = (&pos).at(cx, i);
            match c {
                None => {
                    if_(keep, || o.set(at - 1u32, x));
                }
                Some(c) => o.set(select::<u32>(keep, at - 1u32, *c + i - at), x),
            }
        },
    )?
    .wait()
}

pub(crate) fn filter<T, V, P>(ex: &Exec, view: &V, pred: P) -> Result<DeviceVec<T>>
where
    T: Numeric,
    V: View<Item = Expr<T>>,
    P: Fn(Expr<T>) -> Expr<bool> + Clone,
{
    prepare("filter", view)?;
    if view.is_empty() {
        return DeviceVec::zeroed(ex, 0);
    }
    let (pos, count) = positions(ex, view, &pred)?;
    let out = DeviceVec::zeroed(ex, count)?;
    if count > 0 {
        scatter(ex, "pattern_filter", view, &pred, &pos, &out, None)?;
    }
    Ok(out)
}

pub(crate) fn partition<T, V, P>(ex: &Exec, view: &V, pred: P) -> Result<(DeviceVec<T>, usize)>
where
    T: Numeric,
    V: View<Item = Expr<T>>,
    P: Fn(Expr<T>) -> Expr<bool> + Clone,
{
    prepare("partition", view)?;
    if view.is_empty() {
        return Ok((DeviceVec::zeroed(ex, 0)?, 0));
    }
    let (pos, count) = positions(ex, view, &pred)?;
    let out = DeviceVec::zeroed(ex, view.len())?;
    scatter(
        ex,
        "pattern_partition",
        view,
        &pred,
        &pos,
        &out,
        Some(count),
    )?;
    Ok((out, count))
}

pub(crate) fn histogram<V: View<Item = Expr<u32>>>(
    ex: &Exec,
    view: &V,
    bins: usize,
) -> Result<DeviceVec<u32>> {
    let reads = prepare("histogram", view)?;
    check_u32("histogram", bins)?;
    let out = DeviceVec::<u32>::zeroed(ex, bins)?;
    let n = view.len();
    if n == 0 || bins == 0 {
        return Ok(out);
    }
    let st = ex.staging();
    let (gs, k) = (st.group_size, st.items_per_thread);
    let outputs = [mem_id(out.buffer())];
    let event = if bins <= LOCAL_BINS {
        let p = plan(ex, n);
        launch(ex, "pattern_histogram", p.groups, &reads, &outputs, |cx| {
            let o = cx.read_write(out.buffer());
            let nb = cx.size("bins", bins);
            let local = cx.local::<u32>("hist", bins as u32);
            let l = local_id(0);
            for_step::<u32>(l, lit(bins as u32), lit(gs), |b| local.set(b, 0u32));
            barrier();
            let (start, end) = part(cx, n, p.block, p.per);
            seq(cx, start, end, k, &mut |cx, j| {
                let b = view.at(cx, j);
                if_(b.lt(nb), || {
                    local.atomic_add(b, 1u32);
                });
            });
            barrier();
            for_step::<u32>(l, lit(bins as u32), lit(gs), |b| {
                let c = local.at(b);
                if_(c.gt(0u32), || {
                    o.atomic_add(b, c);
                });
            });
        })?
    } else {
        elementwise(
            ex,
            "pattern_histogram_global",
            n,
            &reads,
            &outputs,
            |cx| (cx.read_write(out.buffer()), cx.size("bins", bins)),
            |cx, (o, nb), i| {
                let b = view.at(cx, i);
                if_(b.lt(*nb), || {
                    o.atomic_add(b, 1u32);
                });
            },
        )?
    };
    event.wait()?;
    Ok(out)
}

/// Reduces each run of equal consecutive keys to one value with the associative operator `op`
/// (Thrust's `reduce_by_key`): returns the runs' keys and their values' reductions, in order.
/// `keys` and `values` must have the same length.
pub fn reduce_by_key<K, V, KV, VV, F>(
    ex: &Exec,
    keys: KV,
    values: VV,
    op: F,
) -> Result<(DeviceVec<K>, DeviceVec<V>)>
where
    K: Numeric,
    V: Numeric,
    KV: View<Item = Expr<K>>,
    VV: View<Item = Expr<V>>,
    F: Fn(Expr<V>, Expr<V>) -> Expr<V>,
{
    prepare("reduce_by_key", &keys)?;
    prepare("reduce_by_key", &values)?;
    let n = keys.len();
    if values.len() != n {
        return Err(Error::BufferRange {
            op: "reduce_by_key",
            detail: format!("{n} keys but {} values; they must be equal", values.len()),
        });
    }
    if n == 0 {
        return Ok((DeviceVec::zeroed(ex, 0)?, DeviceVec::zeroed(ex, 0)?));
    }
    // 1 where a run starts.
    let previous = keys
        .clone()
        .gather(counting(0, n).map(|i| select(i.gt(0u32), i - 1u32, 0u32)));
    let heads = zip(keys.clone(), previous)
        .enumerate()
        .map(|(i, (k, p))| select(i.eq(0u32).or(k.ne(p)), 1u32, 0u32));
    // Run number (1-based) of every element.
    let run = DeviceVec::<u32>::zeroed(ex, n)?;
    heads.inclusive_scan_into(ex, &run, |a, b| a + b)?;
    let runs = ex.queue().read_range(run.buffer(), n - 1..n)?[0] as usize;
    let keys_out = DeviceVec::<K>::zeroed(ex, runs)?;
    let starts = DeviceVec::<u32>::zeroed(ex, runs + 1)?;
    let mut reads = Reads::default();
    heads.reads(true, &mut reads);
    run.reads(true, &mut reads);
    elementwise(
        ex,
        "pattern_run_starts",
        n,
        &reads,
        &[mem_id(keys_out.buffer()), mem_id(starts.buffer())],
        |cx| {
            (
                cx.write(keys_out.buffer()),
                cx.write(starts.buffer()),
                cx.size("n", n),
            )
        },
        |cx, (ko, so, nn), i| {
            let head = heads.at(cx, i);
            let r = run.at(cx, i) - 1u32;
            let k = keys.at(cx, i);
            if_(head.eq(1u32), || {
                ko.set(r, k);
                so.set(r, i);
            });
            if_(i.eq(*nn - 1u32), || so.set(r + 1u32, *nn));
        },
    )?
    .wait()?;
    let vals_out = DeviceVec::<V>::zeroed(ex, runs)?;
    let mut reads = Reads::default();
    values.reads(false, &mut reads);
    starts.reads(false, &mut reads);
    elementwise(
        ex,
        "pattern_reduce_runs",
        runs,
        &reads,
        &[mem_id(vals_out.buffer())],
        |cx| cx.write(vals_out.buffer()),
        |cx, vo, r| {
            let s = starts.at(cx, r);
            let e = starts.at(cx, r + 1u32);
            let acc = var_named("acc", values.at(cx, s));
            for_range(s + 1u32, e, |j| acc.set(op(acc.get(), values.at(cx, j))));
            vo.set(r, acc.get());
        },
    )?
    .wait()?;
    Ok((keys_out, vals_out))
}

//! The block pass shared by reductions and scans, and the scans themselves.
//!
//! A pass splits the `n` elements into `groups` contiguous blocks of `block` elements, one per
//! work-group, and each block into contiguous parts of `per` elements, one per work-item. A
//! work-item first combines its part in order; the work-group then scans the work-items'
//! totals in local memory (Hillis–Steele, `log2(group_size)` steps, combining left with
//! right, so only associativity is needed). A *reduce* pass writes each block's total; a
//! *scan* pass goes over the part again, writing the running value from the work-item's
//! prefix and the block's carry-in.
//!
//! Scans are reduce-then-scan: with one block, one scan pass; otherwise a reduce pass (block
//! totals), a scan of the totals by one work-group (the carries), and a scan pass that starts
//! each block from its carry. Every pass runs on the device.

use super::algorithms::{prepare, same_device};
use super::tune::TunedOp;
use super::{
    check_alias, fast, launch_fast, mem_id, type_key, Cx, DeviceVec, Exec, Layout, Reads,
    ScanAlgorithm, View,
};
use crate::builder::{
    barrier, for_range, for_step, group_id, group_reduce_add, group_reduce_max, group_reduce_min,
    group_scan_inclusive_add, group_scan_inclusive_max, group_scan_inclusive_min, if_, lit,
    local_id, select, var_named, Expr, LocalArray, Numeric,
};
use crate::error::{Error, Result};
use crate::ir::eval::Num;
use crate::ir::{BinaryOp, Expr as IrExpr, ExprId, MathFn, Stmt};
use crate::{Buffer, Event};

/// An operator that is one of the work-group collectives' own: exact and commutative for
/// integers (and `min`/`max` for floats), so reductions and scans may use
/// [`group_reduce_add`] and its siblings, which CUDA lowers to warp shuffles.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BuiltinOp {
    Add,
    Min,
    Max,
}

impl BuiltinOp {
    /// The operator's identity.
    pub(crate) fn identity<T: Numeric>(self) -> Expr<T> {
        lit(match self {
            BuiltinOp::Add => Num::zero(),
            BuiltinOp::Min => Num::greatest(),
            BuiltinOp::Max => Num::least(),
        })
    }

    /// The work-group reduction (every work-item must call it).
    pub(crate) fn group_reduce<T: Numeric>(self, x: Expr<T>) -> Expr<T> {
        match self {
            BuiltinOp::Add => group_reduce_add(x),
            BuiltinOp::Min => group_reduce_min(x),
            BuiltinOp::Max => group_reduce_max(x),
        }
    }

    /// The work-group inclusive scan (every work-item must call it).
    pub(crate) fn group_scan<T: Numeric>(self, x: Expr<T>) -> Expr<T> {
        match self {
            BuiltinOp::Add => group_scan_inclusive_add(x),
            BuiltinOp::Min => group_scan_inclusive_min(x),
            BuiltinOp::Max => group_scan_inclusive_max(x),
        }
    }
}

/// Recognizes an operator on an integer type that is exactly `a + b`, `a.min(b)` or
/// `a.max(b)` (either operand first) by recording it once, on two parameters, in a throwaway
/// trace: for integers these equal the collectives bit for bit, whatever their order. Float
/// operators are never recognized (a user's float `+` keeps its index-order combination).
pub(crate) fn recognize<T, F>(op: &F) -> Option<BuiltinOp>
where
    T: Numeric,
    F: Fn(Expr<T>, Expr<T>) -> Expr<T>,
{
    if !T::TYPE.scalar.is_int() {
        return None;
    }
    let recorded = crate::builder::record("operator_probe", |kd| {
        let a = kd.scalar::<T>("a");
        let b = kd.scalar::<T>("b");
        let out = kd.write::<T>("out");
        out.set(0u32, op(a, b));
    });
    let Ok(f) = &recorded else {
        return None;
    };
    let [Stmt::Store { value, .. }] = f.body.as_slice() else {
        return None;
    };
    let params = |x: ExprId, y: ExprId| match (f.exprs.get(x), f.exprs.get(y)) {
        (IrExpr::Param(a), IrExpr::Param(b)) => {
            matches!([a.raw(), b.raw()], [0, 1] | [1, 0])
        }
        _ => false,
    };
    match f.exprs.get(*value) {
        IrExpr::Binary(BinaryOp::Add, x, y) if params(*x, *y) => Some(BuiltinOp::Add),
        IrExpr::Math(MathFn::Min, a) if a.len() == 2 && params(a[0], a[1]) => Some(BuiltinOp::Min),
        IrExpr::Math(MathFn::Max, a) if a.len() == 2 && params(a[0], a[1]) => Some(BuiltinOp::Max),
        _ => None,
    }
}

/// What a block pass writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    /// One total per block (`init` combined into block 0's).
    Reduce,
    /// The inclusive scan (the carry-in of block 0 is `init` if any).
    Inclusive,
    /// The exclusive scan from `init`.
    Exclusive,
}

/// How a pass divides its elements.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    pub n: usize,
    pub groups: usize,
    pub block: usize,
    pub per: usize,
}

/// Blocks of at least `group_size * items_per_thread` elements, at most `max_groups` of them
/// (more where the device's loop limit needs them: [`Exec::groups_for_loops`], two loop
/// iterations per element of a work-item), none empty (`n > 0`).
pub(crate) fn plan(ex: &Exec, n: usize) -> Plan {
    let st = ex.staging();
    let (gs, k) = (st.group_size as usize, st.items_per_thread as usize);
    let groups = n
        .div_ceil(gs * k)
        .clamp(1, st.max_groups as usize)
        .max(ex.groups_for_loops(n.div_ceil(gs), 2));
    let block = n.div_ceil(groups);
    Plan {
        n,
        groups: n.div_ceil(block),
        block,
        per: block.div_ceil(gs),
    }
}

/// One block (one work-group) for `n > 0` elements.
pub(crate) fn plan_one(ex: &Exec, n: usize) -> Plan {
    let gs = ex.staging().group_size as usize;
    Plan {
        n,
        groups: 1,
        block: n,
        per: n.div_ceil(gs),
    }
}

/// A pass's mode and destination.
pub(crate) struct Pass<'a, T> {
    pub mode: Mode,
    /// The operator is this built-in one (commutative): with the strided layout, a reduce pass
    /// gives work-item `l` the block's elements `l, l + group_size, ...` (coalesced), and it
    /// combines the work-items' totals with the work-group reduction.
    pub builtin: Option<BuiltinOp>,
    pub init: Option<T>,
    /// Inclusive scan of the block totals (scan passes after a reduce pass).
    pub carries: Option<&'a Buffer<T>>,
    pub out: &'a Buffer<T>,
    pub out_off: usize,
}

/// The work-item's part of its work-group's block (as in the block passes).
pub(crate) fn part(cx: &mut Cx, n: usize, block: usize, per: usize) -> (Expr<u32>, Expr<u32>) {
    let n = cx.size("n", n);
    let bsz = cx.size("block", block);
    let per = cx.size("per", per);
    let b0 = group_id(0) * bsz;
    let bend = (b0 + bsz).min(n);
    let start = (b0 + local_id(0) * per).min(bend).named("part_start");
    let end = (start + per).min(bend).named("part_end");
    (start, end)
}

/// Records `body(j)` for `j` in `start..end`, in order: a device loop stepping by `k` with `k`
/// copies of the body (staged), then the remainder.
pub(crate) fn seq(
    cx: &mut Cx,
    start: Expr<u32>,
    end: Expr<u32>,
    k: u32,
    body: &mut dyn FnMut(&mut Cx, Expr<u32>),
) {
    if k == 1 {
        for_range(start, end, |j| body(cx, j));
        return;
    }
    let count = select(end.gt(start), end - start, 0u32);
    let main_end = start + count / k * k;
    for_step(start, main_end, lit(k), |j| {
        for t in 0..k {
            body(cx, j + t)
        }
    });
    for_range(main_end, end, |j| body(cx, j));
}

/// The inclusive scan of `sc[0..gs]` (one value per work-item, just stored by each work-item)
/// in local-id order, in place: `log2(gs)` Hillis–Steele steps that combine left with right.
/// Every work-item of the work-group must call it.
pub(crate) fn group_scan<T: Numeric>(
    sc: LocalArray<T>,
    gs: u32,
    op: &dyn Fn(Expr<T>, Expr<T>) -> Expr<T>,
) {
    let l = local_id(0);
    barrier();
    let mut s = 1u32;
    while s < gs {
        let mine = sc.at(l);
        let has_left = l.ge(s);
        let left = sc.at(select::<u32>(has_left, l - s, l));
        barrier();
        sc.set(l, select(has_left, op(left, mine), mine));
        barrier();
        s *= 2;
    }
}

/// Records `body(j)` for `j = start, start + step, ...` below `end`, in order: a device loop
/// with `k` copies of the body (staged), then the remainder.
pub(crate) fn seq_by(
    cx: &mut Cx,
    start: Expr<u32>,
    end: Expr<u32>,
    step: u32,
    k: u32,
    body: &mut dyn FnMut(&mut Cx, Expr<u32>),
) {
    if step == 1 {
        return seq(cx, start, end, k, body);
    }
    let count = select(end.gt(start), (end - start + (step - 1)) / step, 0u32);
    let main = count / k * k;
    for_step(0u32, main, lit(k), |c| {
        for t in 0..k {
            body(cx, start + (c + t) * step)
        }
    });
    for_range(main, count, |c| body(cx, start + c * step));
}

/// Enqueues one block pass over `view` (see the module docs).
pub(crate) fn block_pass<T, V, F>(
    ex: &Exec,
    name: &str,
    view: &V,
    op: &F,
    plan: &Plan,
    reads: &Reads,
    pass: Pass<'_, T>,
) -> Result<Event>
where
    T: Numeric,
    V: View<Item = Expr<T>>,
    F: Fn(Expr<T>, Expr<T>) -> Expr<T>,
{
    let st = ex.staging();
    let (gs, k) = (st.group_size, st.items_per_thread);
    let outputs = [mem_id(pass.out)];
    // Found without recording after the first call (see `launch_fast`): the walk gives the
    // parameters in the order the recording below declares them.
    let flags = pass.mode as u64
        | (pass.builtin.map_or(0, |b| b as u64 + 1) << 2)
        | (u64::from(pass.init.is_some()) << 4)
        | (u64::from(pass.carries.is_some()) << 5);
    let walk = fast(type_key::<(V, F, T)>(), flags, |w| {
        w.closure(op);
        w.write(pass.out);
        w.size("out_off", pass.out_off);
        if let Some(c) = pass.carries {
            w.read(c);
        }
        if let Some(v) = pass.init {
            w.scalar("init", v);
        }
        w.size("n", plan.n);
        w.size("block", plan.block);
        w.size("per", plan.per);
        view.walk(w);
    });
    launch_fast(ex, name, plan.groups, reads, &outputs, Some(walk), |cx| {
        let out = cx.write(pass.out);
        let out_off = cx.size("out_off", pass.out_off);
        let carries = pass.carries.map(|c| cx.read(c));
        let init = pass.init.map(|v| cx.scalar("init", v));
        let n = cx.size("n", plan.n);
        let bsz = cx.size("block", plan.block);
        let per = cx.size("per", plan.per);
        let (g, l) = (group_id(0), local_id(0));
        let b0 = (g * bsz).named("blk_start");
        let bend = (b0 + bsz).min(n).named("blk_end");
        let strided = pass.builtin.is_some()
            && pass.mode == Mode::Reduce
            && st.reduce_layout == Layout::Strided;
        let (start, end, step) = if strided {
            ((b0 + l).min(bend).named("part_start"), bend, gs)
        } else {
            let start = (b0 + l * per).min(bend).named("part_start");
            (start, (start + per).min(bend).named("part_end"), 1)
        };
        // 1. The work-item's total, in order.
        let acc = var_named("acc", lit(crate::ir::eval::Num::zero()));
        if_(start.lt(end), || {
            acc.set(view.at(cx, start));
            seq_by(cx, start + step, end, step, k, &mut |cx, j| {
                acc.set(op(acc.get(), view.at(cx, j)))
            });
        });
        if let (Mode::Reduce, Some(b)) = (pass.mode, pass.builtin) {
            // 2. The work-group reduction of the work-items' totals (the identity for those
            // without elements).
            let total = b.group_reduce(select(start.lt(end), acc.get(), b.identity()));
            let total = match init {
                Some(i) => select(g.eq(0u32), op(i, total), total),
                None => total,
            };
            if_(l.eq(0u32), || out.set(out_off + g, total));
            return;
        }
        // 2. Inclusive scan of the work-items' totals, in local-id order.
        let sc = cx.local::<T>("scan", gs);
        sc.set(l, acc.get());
        group_scan(sc, gs, op);
        match pass.mode {
            Mode::Reduce => {
                // Work-items past the block's end hold no total: the block's total is that of
                // the last work-item with elements.
                let items = if strided {
                    (bend - b0).min(lit(gs))
                } else {
                    ((bend - b0 + per - 1u32) / per).min(lit(gs))
                };
                let total = sc.at(items - 1u32);
                let total = match init {
                    Some(i) => select(g.eq(0u32), op(i, total), total),
                    None => total,
                };
                if_(l.eq(0u32), || out.set(out_off + g, total));
            }
            Mode::Inclusive | Mode::Exclusive => {
                let zero = lit(crate::ir::eval::Num::zero());
                // The block's carry-in.
                let (carry, has_carry) = match (carries, init) {
                    (Some(c), init) => {
                        let prev = c.at(select(g.gt(0u32), g - 1u32, 0u32));
                        match init {
                            Some(i) => (select(g.gt(0u32), prev, i), lit(true)),
                            None => (prev, g.gt(0u32)),
                        }
                    }
                    (None, Some(i)) => (i, lit(true)),
                    (None, None) => (zero, lit(false)),
                };
                // The work-item's prefix: the carry, then the work-items before it.
                let before = sc.at(select(l.gt(0u32), l - 1u32, 0u32));
                let prefix = select(
                    l.gt(0u32),
                    select(has_carry, op(carry, before), before),
                    carry,
                );
                let has_prefix = l.gt(0u32).or(has_carry);
                let run = var_named("run", prefix);
                if pass.mode == Mode::Exclusive {
                    seq(cx, start, end, k, &mut |cx, j| {
                        let v = view.at(cx, j);
                        out.set(out_off + j, run.get());
                        run.set(op(run.get(), v));
                    });
                } else {
                    if_(start.lt(end), || {
                        let v = view.at(cx, start);
                        let r = select(has_prefix, op(prefix, v), v);
                        out.set(out_off + start, r);
                        run.set(r);
                        seq(cx, start + 1u32, end, k, &mut |cx, j| {
                            let r = op(run.get(), view.at(cx, j));
                            out.set(out_off + j, r);
                            run.set(r);
                        });
                    });
                }
            }
        }
    })
}

/// Scans `view` into `dst`: exclusive from `init` if given, else inclusive.
pub(crate) fn scan<T, V, F>(
    ex: &Exec,
    view: &V,
    op: &F,
    init: Option<T>,
    dst: &DeviceVec<T>,
) -> Result<()>
where
    T: Numeric,
    V: View<Item = Expr<T>>,
    F: Fn(Expr<T>, Expr<T>) -> Expr<T>,
{
    let reads = prepare("scan", view)?;
    same_device("scan", ex, dst)?;
    let n = view.len();
    if dst.len() != n {
        return Err(Error::BufferRange {
            op: "scan",
            detail: format!(
                "the output has {} elements but the input has {n}; they must be equal",
                dst.len()
            ),
        });
    }
    check_alias("scan", &reads, dst)?;
    if n == 0 {
        return Ok(());
    }
    let mode = if init.is_some() {
        Mode::Exclusive
    } else {
        Mode::Inclusive
    };
    let ex = &ex.tuned_for(TunedOp::Scan, T::TYPE, n);
    if ex.scan_algorithm_for(std::mem::size_of::<T>()) == ScanAlgorithm::LookBack {
        return super::lookback::scan(ex, view, op, init, dst, &reads);
    }
    let p = plan(ex, n);
    let out = dst.buffer();
    if p.groups == 1 {
        let e = block_pass(
            ex,
            "pattern_scan",
            view,
            op,
            &p,
            &reads,
            Pass {
                mode,
                builtin: None,
                init,
                carries: None,
                out,
                out_off: dst.offset(),
            },
        )?;
        return e.wait();
    }
    // Temporaries from the exec's scratch, kept again once the scan has completed.
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
            builtin: None,
            init,
            carries: None,
            out: &partials,
            out_off: 0,
        },
    )?;
    let carries = scratch.take::<T>(ex.device(), p.groups)?;
    let pv = DeviceVec::from_parts(ex, partials.clone(), 0, p.groups);
    let mut preads = Reads::default();
    pv.reads(true, &mut preads);
    let e2 = block_pass(
        ex,
        "pattern_scan",
        &&pv,
        op,
        &plan_one(ex, p.groups),
        &preads,
        Pass {
            mode: Mode::Inclusive,
            builtin: None,
            init: None,
            carries: None,
            out: &carries,
            out_off: 0,
        },
    )?;
    let e3 = block_pass(
        ex,
        "pattern_scan",
        view,
        op,
        &p,
        &reads,
        Pass {
            mode,
            builtin: None,
            init,
            carries: Some(&carries),
            out,
            out_off: dst.offset(),
        },
    )?;
    Event::wait_all(&[e1, e2, e3])?;
    drop(pv);
    scratch.keep(partials);
    scratch.keep(carries);
    Ok(())
}

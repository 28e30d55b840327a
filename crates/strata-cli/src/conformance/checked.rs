//! Planted bugs: one kernel per defect kind that checked mode finds, each run on the given
//! queue's device *in checked mode* ([`Device::checked`]), whatever the spec (so `strata
//! check --device X` and `--device X+checked` both run them), asserting the exact error kind
//! and that the message names the work-items and the source line of the fault.
//!
//! Out-of-bounds accesses, barrier divergence (under an `if`, in a loop whose trip counts
//! differ, after a `return`, after a `continue`), zero loop steps and integer division by zero are found on every
//! backend (on OpenCL and CUDA by the instrumentation, `strata::ir::checked`; a zero step or
//! a divergent barrier there would hang or crash without it). Data races and uninitialized
//! reads of local memory and private arrays are found on every backend too
//! ([`Device::finds_races`]); reads of `Buffer::uninit` elements nothing wrote by
//! `interp+checked` ([`Device::finds_uninit_buffer_reads`]), and on the other devices that
//! case checks that the kernel runs without a false report.

use super::{case, check, e, expect_eq, Case};
use strata::prelude::*;
use strata::{Error, Run};

pub(super) fn cases() -> Vec<Case> {
    vec![
        case("checked/oob_global_read", oob_global_read),
        case("checked/oob_global_write", oob_global_write),
        case("checked/oob_local_read", oob_local_read),
        case("checked/oob_local_write", oob_local_write),
        case("checked/race_write_write", race_write_write),
        case("checked/race_read_write", race_read_write),
        case("checked/race_across_groups", race_across_groups),
        case("checked/uninit_local", uninit_local),
        case("checked/uninit_private", uninit_private),
        case("checked/uninit_buffer", uninit_buffer),
        case("checked/barrier_divergence", barrier_divergence),
        case("checked/zero_loop_step", zero_loop_step),
        case("checked/loop_barrier_divergence", loop_barrier_divergence),
        case("checked/barrier_after_return", barrier_after_return),
        case("checked/division_by_zero", division_by_zero),
        case("checked/clean_exchange", clean_exchange),
        case("checked/clean_loops", clean_loops),
        case("checked/barrier_after_continue", barrier_after_continue),
        case("checked/clean_break_continue", clean_break_continue),
    ]
}

/// A queue on the device of `q` in checked mode.
fn checked(q: &Queue) -> Result<Queue, String> {
    Queue::new(&q.device().checked()).map_err(e)
}

/// `file:line:` of a line of this file, as error messages write it.
fn here(line: u32) -> String {
    format!("{}:{line}:", file!())
}

/// The launch failed with the error `is` accepts, whose message contains every one of `parts`.
fn expect_fault(
    what: &str,
    r: strata::Result<Run>,
    is: fn(&Error) -> bool,
    parts: &[&str],
) -> Result<(), String> {
    match r {
        Ok(_) => Err(format!("{what}: the launch succeeded; expected an error")),
        Err(err) if is(&err) => {
            let m = err.to_string();
            match parts.iter().find(|p| !m.contains(**p)) {
                Some(p) => Err(format!("{what}: the message lacks `{p}`: {m}")),
                None => Ok(()),
            }
        }
        Err(err) => Err(format!(
            "{what}: expected another kind of error, got: {err}"
        )),
    }
}

fn oob(e: &Error) -> bool {
    matches!(e, Error::OutOfBounds { .. })
}

fn race(e: &Error) -> bool {
    matches!(e, Error::DataRace { .. })
}

fn uninit(e: &Error) -> bool {
    matches!(e, Error::UninitializedRead { .. })
}

fn oob_global_read(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let mut line = 0;
    let k = Kernel::build("planted_oob_global_read", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        line = line!() + 1;
        let v = x.at(i + 1u32);
        out.set(i, v);
    })
    .map_err(e)?;
    let x = Buffer::from_slice(&q, &[10u32, 11, 12, 13, 14, 15, 16, 17]).map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    let at = here(line);
    expect_fault(
        "read past the end",
        k.launch(&q, NdRange::new(8).local(4), args![&x, &out]),
        oob,
        &[
            "kernel `planted_oob_global_read`",
            "index 8 is out of bounds for buffer `x` of length 8",
            "global (7, 0, 0), local (3, 0, 0) in work-group (1, 0, 0)",
            &at,
        ],
    )?;
    // The faulting read gave 0; the others ran.
    expect_eq(
        "out after the faulting launch",
        &q.read(&out).map_err(e)?,
        &[11, 12, 13, 14, 15, 16, 17, 0],
    )
}

fn oob_global_write(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let mut line = 0;
    let k = Kernel::build("planted_oob_global_write", |k| {
        let out = k.write::<u32>("out");
        let i = global_id(0);
        if_(i.eq(5u32), || {
            line = line!() + 1;
            out.set(i + 100u32, 1u32);
        });
        if_(i.ne(5u32), || out.set(i, i));
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    let at = here(line);
    expect_fault(
        "write past the end",
        k.launch(&q, NdRange::new(8).local(4), args![&out]),
        oob,
        &[
            "index 105 is out of bounds for buffer `out` of length 8",
            "global (5, 0, 0), local (1, 0, 0) in work-group (1, 0, 0)",
            &at,
        ],
    )?;
    expect_eq(
        "out after the skipped write",
        &q.read(&out).map_err(e)?,
        &[0, 1, 2, 3, 4, 0, 6, 7],
    )
}

fn oob_local_read(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let mut line = 0;
    let k = Kernel::build("planted_oob_local_read", |k| {
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", 8);
        let l = local_id(0);
        tile.set(l, l + 1u32);
        barrier();
        let j = select::<u32>(l.eq(6u32), 8u32, l);
        line = line!() + 1;
        let v = tile.at(j);
        out.set(global_id(0), v);
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    let at = here(line);
    expect_fault(
        "a read past the end of local memory",
        k.launch(&q, NdRange::new(8).local(8), args![&out]),
        oob,
        &[
            "index 8 is out of bounds for local array `tile` of length 8",
            "global (6, 0, 0), local (6, 0, 0) in work-group (0, 0, 0)",
            &at,
        ],
    )?;
    expect_eq(
        "out after the faulting read",
        &q.read(&out).map_err(e)?,
        &[1, 2, 3, 4, 5, 6, 0, 8],
    )
}

fn oob_local_write(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let mut line = 0;
    let k = Kernel::build("planted_oob_local_write", |k| {
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", 4);
        let l = local_id(0);
        if_(l.lt(4u32), || tile.set(l, l));
        if_(l.eq(4u32), || {
            line = line!() + 1;
            tile.set(l, 99u32);
        });
        barrier();
        out.set(global_id(0), tile.at(l % 4u32));
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    let at = here(line);
    expect_fault(
        "write past the end of local memory",
        k.launch(&q, NdRange::new(8).local(8), args![&out]),
        oob,
        &[
            "index 4 is out of bounds for local array `tile` of length 4",
            "global (4, 0, 0), local (4, 0, 0) in work-group (0, 0, 0)",
            &at,
        ],
    )?;
    expect_eq(
        "out after the skipped write",
        &q.read(&out).map_err(e)?,
        &[0, 1, 2, 3, 0, 1, 2, 3],
    )
}

/// On devices that do not look for races: the kernel runs, and nothing is reported.
fn runs_clean(q: &Queue, r: strata::Result<Run>) -> Result<(), String> {
    check(!q.device().finds_uninit_buffer_reads(), || {
        format!("{} finds races but reported none", q.device().spec())
    })?;
    r.map(|_| ())
        .map_err(|err| format!("{}: a false report: {err}", q.device().spec()))
}

fn race_write_write(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let mut line = 0;
    let k = Kernel::build("planted_race_write_write", |k| {
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", 4);
        let l = local_id(0);
        tile.set(l, 0u32);
        barrier();
        // Every work-item writes element 0, with no barrier in between.
        line = line!() + 1;
        tile.set(0u32, l);
        barrier();
        out.set(global_id(0), tile.at(0u32));
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 4).map_err(e)?;
    let r = k.launch(&q, NdRange::new(4).local(4), args![&out]);
    if !q.device().finds_races() {
        return runs_clean(&q, r);
    }
    let at = here(line);
    expect_fault(
        "two writes of one local element",
        r,
        race,
        &[
            "data race on element 0 of local array `tile`",
            "write by work-item global (1, 0, 0), local (1, 0, 0) in work-group (0, 0, 0)",
            "write by work-item global (0, 0, 0), local (0, 0, 0) in work-group (0, 0, 0)",
            &at,
            "with no barrier between them",
        ],
    )
}

fn race_read_write(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let (mut read_line, mut write_line) = (0, 0);
    let k = Kernel::build("planted_race_read_write", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        // Shift left in place: work-item i reads x[i + 1], which work-item i + 1 writes.
        let next = select::<u32>(i.lt(7u32), i + 1u32, i);
        read_line = line!() + 1;
        let v = x.at(next);
        write_line = line!() + 1;
        x.set(i, v);
    })
    .map_err(e)?;
    let x = Buffer::from_slice(&q, &[0u32, 1, 2, 3, 4, 5, 6, 7]).map_err(e)?;
    let r = k.launch(&q, NdRange::new(8).local(8), args![&x]);
    if !q.device().finds_races() {
        return runs_clean(&q, r);
    }
    let (rd, wr) = (here(read_line), here(write_line));
    expect_fault(
        "a read and a write of one element",
        r,
        race,
        &[
            "data race on element 1 of buffer `x`",
            "write by work-item global (1, 0, 0), local (1, 0, 0)",
            "read by work-item global (0, 0, 0), local (0, 0, 0)",
            &rd,
            &wr,
        ],
    )
}

fn race_across_groups(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let mut line = 0;
    let k = Kernel::build("planted_race_across_groups", |k| {
        let out = k.write::<u32>("out");
        let l = local_id(0);
        // The first work-item of every work-group writes element 0: barriers order work-items
        // of one work-group only.
        if_(l.eq(0u32), || {
            line = line!() + 1;
            out.set(0u32, group_id(0));
        });
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 1).map_err(e)?;
    let r = k.launch(&q, NdRange::new(8).local(4), args![&out]);
    if !q.device().finds_races() {
        return runs_clean(&q, r);
    }
    let at = here(line);
    // The work-groups run in parallel: either may be the second.
    expect_fault(
        "writes of one element from two work-groups",
        r,
        race,
        &[
            "data race on element 0 of buffer `out`",
            "global (0, 0, 0), local (0, 0, 0) in work-group (0, 0, 0)",
            "global (4, 0, 0), local (0, 0, 0) in work-group (1, 0, 0)",
            &at,
            "in different work-groups of one launch",
        ],
    )
}

fn uninit_local(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let mut line = 0;
    let k = Kernel::build("planted_uninit_local", |k| {
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", 8);
        let l = local_id(0);
        // Only the first half is written.
        if_(l.lt(4u32), || tile.set(l, l));
        barrier();
        line = line!() + 1;
        let v = tile.at(7u32 - l);
        out.set(global_id(0), v);
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    let r = k.launch(&q, NdRange::new(8).local(8), args![&out]);
    if !q.device().finds_races() {
        return runs_clean(&q, r);
    }
    let at = here(line);
    expect_fault(
        "a read of local memory nobody wrote",
        r,
        uninit,
        &[
            "element 7 of local array `tile` is read before anything wrote it (in this work-group)",
            "global (0, 0, 0), local (0, 0, 0)",
            &at,
        ],
    )
}

fn uninit_private(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let mut line = 0;
    let k = Kernel::build("planted_uninit_private", |k| {
        let out = k.write::<u32>("out");
        let p = private_array::<u32>("p", 4);
        let i = global_id(0);
        p.set(0u32, i);
        p.set(2u32, i);
        line = line!() + 1;
        let v = p.at(i % 4u32);
        out.set(i, v);
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 4).map_err(e)?;
    let r = k.launch(&q, NdRange::new(4).local(4), args![&out]);
    if !q.device().finds_races() {
        return runs_clean(&q, r);
    }
    let at = here(line);
    expect_fault(
        "a read of a private element nobody wrote",
        r,
        uninit,
        &[
            "element 1 of private array `p` is read before anything wrote it (by this work-item)",
            "global (1, 0, 0), local (1, 0, 0)",
            &at,
        ],
    )
}

fn uninit_buffer(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let mut line = 0;
    let k = Kernel::build("planted_uninit_buffer", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        line = line!() + 1;
        let v = x.at(i);
        out.set(i, v);
    })
    .map_err(e)?;
    let x = Buffer::<u32>::uninit(&q, 8).map_err(e)?;
    // Only the first six elements are written.
    q.fill(&x, 3u32, 0..6).map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    let r = k.launch(&q, NdRange::new(8).local(8), args![&x, &out]);
    if !q.device().finds_uninit_buffer_reads() {
        return runs_clean(&q, r);
    }
    let at = here(line);
    expect_fault(
        "a read of a buffer element nobody wrote",
        r,
        uninit,
        &[
            "element 6 of buffer `x` is read before anything wrote it (since the buffer was made by Buffer::uninit)",
            "global (6, 0, 0), local (6, 0, 0)",
            &at,
        ],
    )?;
    // Written in full, the buffer reads clean.
    q.fill(&x, 4u32, 6..).map_err(e)?;
    k.launch(&q, NdRange::new(8).local(8), args![&x, &out])
        .map_err(e)?;
    expect_eq("out", &q.read(&out).map_err(e)?, &[3, 3, 3, 3, 3, 3, 4, 4])
}

fn barrier_divergence(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let k = Kernel::build("planted_barrier_divergence", |k| {
        let out = k.write::<u32>("out");
        let l = local_id(0);
        if_(l.lt(3u32), || {
            barrier();
            out.set(global_id(0), 1u32);
        });
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    match k.launch(&q, NdRange::new(8).local(8), args![&out]) {
        Err(Error::BarrierDivergence {
            kernel,
            what,
            reached,
            size,
            group,
            ..
        }) if kernel == "planted_barrier_divergence"
            && what == "barrier"
            && reached == 3
            && size == 8
            && group == [0, 0, 0] =>
        {
            Ok(())
        }
        r => Err(format!(
            "expected the barrier reached by 3 of 8 work-items, got {r:?}"
        )),
    }
}

/// No false report: local memory exchanged through a barrier, global memory each element
/// written by one work-item and read by the same one, atomics on a shared counter.
fn clean_exchange(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let k = Kernel::build("checked_clean_exchange", |k| {
        let x = k.read_write::<u32>("x");
        let count = k.read_write::<u32>("count");
        let tile = k.local_array::<u32>("tile", 8);
        let (i, l) = (global_id(0), local_id(0));
        tile.set(l, x.at(i));
        barrier();
        let v = tile.at(7u32 - l);
        barrier();
        tile.set(l, v + 1u32);
        barrier();
        x.set(i, tile.at(l));
        count.atomic_add(0u32, 1u32);
    })
    .map_err(e)?;
    let x = Buffer::from_slice(&q, &(0..16).collect::<Vec<u32>>()).map_err(e)?;
    let count = Buffer::<u32>::new(&q, 1).map_err(e)?;
    k.launch(&q, NdRange::new(16).local(8), args![&x, &count])
        .map_err(e)?;
    let want: Vec<u32> = (0..16u32).map(|i| (i / 8) * 8 + 7 - i % 8 + 1).collect();
    expect_eq("x", &q.read(&x).map_err(e)?, &want)?;
    expect_eq("count", &q.read(&count).map_err(e)?, &[16])
}

/// The launch failed with a [`Error::BarrierDivergence`] at a barrier of kernel `kernel`,
/// reached by `reached` of the 8 work-items of work-group 0.
fn expect_divergence(kernel: &str, reached: usize, r: strata::Result<Run>) -> Result<(), String> {
    match r {
        Err(Error::BarrierDivergence {
            kernel: k,
            what,
            reached: n,
            size: 8,
            group: [0, 0, 0],
        }) if k == kernel && what == "barrier" && n == reached => Ok(()),
        r => Err(format!(
            "expected the barrier reached by {reached} of 8 work-items, got {r:?}"
        )),
    }
}

/// The launch failed with a [`Error::KernelFault`] whose message contains `message`, at
/// global id `item`.
fn expect_kernel_fault(message: &str, item: u32, r: strata::Result<Run>) -> Result<(), String> {
    match r {
        Err(Error::KernelFault {
            message: m,
            item: w,
            ..
        }) if m.contains(message) && w.global == [item, 0, 0] => Ok(()),
        r => Err(format!(
            "expected the fault `{message}` at work-item {item}, got {r:?}"
        )),
    }
}

/// A `for` loop whose step, a parameter, is 0 (it would never end: OpenCL hung on it).
fn zero_loop_step(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let k = Kernel::build("planted_zero_step", |k| {
        let out = k.write::<u32>("out");
        let step = k.scalar::<u32>("step");
        let i = global_id(0);
        let s = select::<u32>(i.eq(5u32), step, 1u32);
        let acc = var::<u32>(0u32);
        for_step(0u32, 4u32, s, |j| acc.set(acc.get() + j));
        out.set(i, acc.get());
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    let r = k.launch(&q, NdRange::new(8).local(8), args![&out, 0u32]);
    expect_kernel_fault("for loop step is 0", 5, r)
}

/// A barrier in a loop whose trip count differs between work-items (1, 2 or 3: 5 of the 8
/// work-items reach the second iteration's barrier). PoCL crashed on it.
fn loop_barrier_divergence(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let k = Kernel::build("planted_loop_barrier", |k| {
        let out = k.write::<u32>("out");
        let l = local_id(0);
        let acc = var::<u32>(0u32);
        for_range(0u32, l % 3u32 + 1u32, |j| {
            barrier();
            acc.set(acc.get() + j);
        });
        out.set(global_id(0), acc.get());
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    let r = k.launch(&q, NdRange::new(8).local(8), args![&out]);
    expect_divergence("planted_loop_barrier", 5, r)
}

/// A barrier after 3 of 8 work-items returned (on OpenCL it gave garbage).
fn barrier_after_return(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let k = Kernel::build("planted_return_barrier", |k| {
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", 8);
        let l = local_id(0);
        tile.set(l, l);
        if_(l.lt(3u32), return_);
        barrier();
        out.set(global_id(0), tile.at(7u32 - l));
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    let r = k.launch(&q, NdRange::new(8).local(8), args![&out]);
    expect_divergence("planted_return_barrier", 5, r)
}

/// A barrier later in a loop's body than a `continue` 3 of 8 work-items take.
fn barrier_after_continue(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let k = Kernel::build("planted_continue_barrier", |k| {
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", 8);
        let l = local_id(0);
        for_range(0u32, 2u32, |j| {
            tile.set(l, l + j);
            if_(l.lt(3u32), continue_);
            barrier();
            out.set(global_id(0), tile.at(7u32 - l));
            barrier();
        });
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    let r = k.launch(&q, NdRange::new(8).local(8), args![&out]);
    expect_divergence("planted_continue_barrier", 5, r)
}

/// No false report: a `break` taken by some work-items of a loop without barriers, then a
/// barrier loop whose `continue` comes after its last barrier, then a work-group collective.
/// Work-items that leave a loop by `break` meet the others again after it; one that
/// `continue`s after the last barrier misses none (difftest seed 7 found the first one
/// reported as divergence).
fn clean_break_continue(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let k = Kernel::build("checked_clean_break_continue", |k| {
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", 8);
        let l = local_id(0);
        let acc = var::<u32>(0u32);
        for_range(0u32, 8u32, |j| {
            if_(j.ge(l), break_);
            acc.set(acc.get() + j);
        });
        for_range(0u32, 3u32, |j| {
            barrier();
            tile.set(l, acc.get() + j);
            barrier();
            if_(((l + j) % 2u32).eq(0u32), continue_);
            acc.set(acc.get() + tile.at(7u32 - l));
        });
        let total = group_reduce_add(acc.get());
        out.set(global_id(0), acc.get() * 1000u32 + total % 1000u32);
    })
    .map_err(e)?;
    let out = Buffer::<u32>::new(&q, 8).map_err(e)?;
    k.launch(&q, NdRange::new(8).local(8), args![&out])
        .map_err(e)?;
    // The same on the host: the first loop adds 0 .. l; each iteration of the second reads
    // every work-item's value before any changes it.
    let mut acc: Vec<u32> = (0..8u32).map(|l| (0..l).sum()).collect();
    for j in 0..3u32 {
        let tile: Vec<u32> = acc.iter().map(|a| a + j).collect();
        for l in 0..8u32 {
            if (l + j) % 2 != 0 {
                acc[l as usize] += tile[7 - l as usize];
            }
        }
    }
    let total: u32 = acc.iter().sum();
    let want: Vec<u32> = acc.iter().map(|a| a * 1000 + total % 1000).collect();
    expect_eq("out", &q.read(&out).map_err(e)?, &want)
}

/// An integer division by zero (OpenCL gave 100 / 0 = 100).
fn division_by_zero(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let k = Kernel::build("planted_div_zero", |k| {
        let d = k.read::<i32>("d");
        let out = k.write::<i32>("out");
        let i = global_id(0);
        out.set(i, lit(100i32) / d.at(i));
    })
    .map_err(e)?;
    let d = Buffer::from_slice(&q, &[1i32, 2, 3, 0, 5, 6, 7, 8]).map_err(e)?;
    let out = Buffer::<i32>::new(&q, 8).map_err(e)?;
    let r = k.launch(&q, NdRange::new(8).local(8), args![&d, &out]);
    expect_kernel_fault("integer division by zero", 3, r)
}

/// No false report: barriers in loops whose trip counts agree (though computed from
/// work-item ids), a return taken by a whole work-group before a barrier, a data-dependent
/// division whose divisor is never 0, a `break` taken by every work-item at once.
fn clean_loops(q: &Queue) -> Result<(), String> {
    let q = checked(q)?;
    let k = Kernel::build("checked_clean_loops", |k| {
        let x = k.read_write::<u32>("x");
        let tile = k.local_array::<u32>("tile", 8);
        let (i, l) = (global_id(0), local_id(0));
        if_(group_id(0).eq(1u32), return_);
        let acc = var::<u32>(0u32);
        for_range(l, l + 3u32, |j| {
            tile.set(l, j);
            barrier();
            acc.set(acc.get() + tile.at(7u32 - l) / (j + 1u32));
            barrier();
        });
        loop_(|| {
            barrier();
            if_(acc.get().ge(0u32), break_);
        });
        x.set(i, acc.get());
    })
    .map_err(e)?;
    let x = Buffer::<u32>::new(&q, 16).map_err(e)?;
    k.launch(&q, NdRange::new(16).local(8), args![&x])
        .map_err(e)?;
    // Work-group 1 returned as a whole; in work-group 0, iteration t reads 7 - l + t.
    let want: Vec<u32> = (0..16u32)
        .map(|i| match i {
            0..8 => (0..3).map(|t| (7 - i + t) / (i + t + 1)).sum::<u32>(),
            _ => 0,
        })
        .collect();
    expect_eq("x", &q.read(&x).map_err(e)?, &want)
}

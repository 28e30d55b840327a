//! Queue and buffer operations: sub-range reads and writes, copies, fills, non-blocking
//! commands with wait lists across queues, events and profiling, `read_into`, and the range
//! checks of every operation.

use super::{case, check, e, expect_eq, inputs, Case};
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("queue/read_range_write_offset", read_write_ranges),
        case("queue/copy", copies),
        case("queue/fill", fills),
        case("queue/enqueue_wait_lists", wait_lists),
        case("queue/events_and_profiling", profiling),
        case("queue/read_into", read_into),
        case("queue/range_errors", range_errors),
    ]
}

fn read_write_ranges(q: &Queue) -> Result<(), String> {
    let n = 1234;
    let xs = inputs::<u32>(701, n, true);
    let b = Buffer::from_slice(q, &xs).map_err(e)?;
    let mut want = xs.clone();
    expect_eq(
        "read_range 100..250",
        &q.read_range(&b, 100..250).map_err(e)?,
        &want[100..250],
    )?;
    expect_eq(
        "read_range n-1..n",
        &q.read_range(&b, n - 1..n).map_err(e)?,
        &want[n - 1..],
    )?;
    check(q.read_range(&b, 7..7).map_err(e)?.is_empty(), || {
        "empty range".into()
    })?;
    let patch: Vec<u32> = (0..77).map(|i| i * 1000 + 1).collect();
    q.write(&b, 333.., &patch).map_err(e)?;
    want[333..410].copy_from_slice(&patch);
    q.write(&b, n - 3.., &[9, 8, 7]).map_err(e)?;
    want[n - 3..].copy_from_slice(&[9, 8, 7]);
    // Odd offsets of 1-byte elements.
    let bytes = Buffer::<u8>::from_slice(q, &[0u8; 37]).map_err(e)?;
    q.write(&bytes, 3.., &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
        .map_err(e)?;
    let mut wb = vec![0u8; 37];
    wb[3..14].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect_eq("u8 write at offset 3", &q.read(&bytes).map_err(e)?, &wb)?;
    expect_eq(
        "u8 read_range 5..13",
        &q.read_range(&bytes, 5..13).map_err(e)?,
        &wb[5..13],
    )?;
    // A kernel sees the written data.
    let k = Kernel::build("plus_one", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        if_(i.lt(x.len()), || x.set(i, x.at(i) + 1u32));
    })
    .map_err(e)?;
    k.launch(q, NdRange::covering(n, 64), args![&b])
        .map_err(e)?;
    let want: Vec<u32> = want.iter().map(|v| v.wrapping_add(1)).collect();
    expect_eq("after write + kernel", &b.to_vec(q).map_err(e)?, &want)
}

fn copies(q: &Queue) -> Result<(), String> {
    let n = 1000;
    let xs = inputs::<i64>(711, n, true);
    let a = Buffer::from_slice(q, &xs).map_err(e)?;
    let b = Buffer::<i64>::new(q.device(), n + 10).map_err(e)?;
    q.copy(&a, 0..n, &b, 10..).map_err(e)?;
    let mut want = vec![0i64; 10];
    want.extend(&xs);
    expect_eq("whole copy at offset 10", &q.read(&b).map_err(e)?, &want)?;
    q.copy(&a, 100..105, &b, 0..).map_err(e)?;
    want[..5].copy_from_slice(&xs[100..105]);
    expect_eq("sub-range copy", &q.read(&b).map_err(e)?, &want)?;
    // Within one buffer, non-overlapping ranges.
    q.copy(&b, 500..610, &b, 900..).map_err(e)?;
    let moved = want[500..610].to_vec();
    want[900..1010].copy_from_slice(&moved);
    expect_eq("copy within a buffer", &q.read(&b).map_err(e)?, &want)?;
    q.copy(&a, 3..3, &b, 7..).map_err(e)?;
    expect_eq("empty copy", &q.read(&b).map_err(e)?, &want)?;
    // A clone shares the memory.
    let c = b.clone();
    check(c.same_memory(&b) && !c.same_memory(&a), || {
        "same_memory".into()
    })?;
    q.write(&c, 0.., &[42]).map_err(e)?;
    expect_eq(
        "write through a clone",
        &q.read_range(&b, 0..1).map_err(e)?,
        &[42],
    )
}

fn fills(q: &Queue) -> Result<(), String> {
    let b = Buffer::<u16>::new(q.device(), 1001).map_err(e)?;
    q.fill(&b, 0xbeef, ..).map_err(e)?;
    expect_eq(
        "whole fill",
        &q.read(&b).map_err(e)?,
        &vec![0xbeefu16; 1001],
    )?;
    q.fill(&b, 7, 3..10).map_err(e)?;
    q.fill(&b, 9, 1000..).map_err(e)?;
    q.fill(&b, 1, 500..500).map_err(e)?;
    q.fill(&b, 5, ..=1).map_err(e)?;
    let mut want = vec![0xbeefu16; 1001];
    want[..=1].fill(5);
    want[3..10].fill(7);
    want[1000] = 9;
    expect_eq("range fills", &q.read(&b).map_err(e)?, &want)?;
    let d = Buffer::<f64>::new(q.device(), 333).map_err(e)?;
    q.fill(&d, -1.5, 1..332).map_err(e)?;
    let mut wd = vec![-1.5f64; 333];
    wd[0] = 0.0;
    wd[332] = 0.0;
    expect_eq("f64 fill", &q.read(&d).map_err(e)?, &wd)?;
    let v = Buffer::<[i32; 2]>::new(q.device(), 10).map_err(e)?;
    let ev = q.enqueue_fill(&v, [1, -2], 2..9, &[]).map_err(e)?;
    ev.wait().map_err(e)?;
    let mut wv = vec![[0, 0]; 10];
    wv[2..9].fill([1, -2]);
    expect_eq("vector fill", &q.read(&v).map_err(e)?, &wv)
}

fn wait_lists(q: &Queue) -> Result<(), String> {
    // Two queues on one device; ordering between them only through wait lists.
    let q2 = Queue::new(q.device()).map_err(e)?;
    let n = 5000;
    let xs = inputs::<u32>(721, n, true);
    let k = Kernel::build("times3", |k| {
        let x = k.read::<u32>("x");
        let y = k.write::<u32>("y");
        let i = global_id(0);
        if_(i.lt(x.len()), || y.set(i, x.at(i) * 3u32));
    })
    .map_err(e)?;
    let a = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    let b = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    let c = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    let w = q.enqueue_write(&a, 0.., &xs, &[]).map_err(e)?;
    let r1 = k
        .enqueue(&q2, NdRange::covering(n, 128), args![&a, &b], &[&w])
        .map_err(e)?;
    let cp = q
        .enqueue_copy(&b, 0..n, &c, 0.., &[r1.event()])
        .map_err(e)?;
    let r2 = k
        .enqueue(&q2, NdRange::covering(n, 128), args![&c, &b], &[&cp])
        .map_err(e)?;
    let fl = q.enqueue_fill(&c, 1, 0..10, &[r2.event()]).map_err(e)?;
    let read = q.enqueue_read(&b, 0..n, &[r2.event(), &fl]).map_err(e)?;
    let read_c = q2.enqueue_read(&c, 0..20, &[&fl]).map_err(e)?;
    let got = read.wait().map_err(e)?;
    let want: Vec<u32> = xs.iter().map(|v| v.wrapping_mul(9)).collect();
    expect_eq(
        "write -> kernel -> copy -> kernel across queues",
        &got,
        &want,
    )?;
    let mut wc: Vec<u32> = xs[..20].iter().map(|v| v.wrapping_mul(3)).collect();
    wc[..10].fill(1);
    expect_eq(
        "fill after the second kernel",
        &read_c.wait().map_err(e)?,
        &wc,
    )?;
    q.finish().map_err(e)?;
    q2.finish().map_err(e)?;
    for ev in [&w, r1.event(), &cp, r2.event(), &fl] {
        check(ev.is_complete(), || {
            "an event is not complete after finish".into()
        })?;
    }
    Ok(())
}

fn profiling(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("busy", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        let mut acc = var::<u32>(i);
        for_range(0u32, 200u32, |j| acc += acc.get() * 3u32 + j);
        if_(i.lt(x.len()), || x.set(i, acc.get()));
    })
    .map_err(e)?;
    let n = 4096;
    let x = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    let run = k.enqueue(q, NdRange::new(n), args![&x], &[]).map_err(e)?;
    let pending = q.enqueue_read(&x, 0..4, &[run.event()]).map_err(e)?;
    run.wait().map_err(e)?;
    let ev = run.event();
    check(ev.is_complete(), || "event not complete after wait".into())?;
    let p = ev.profile().ok_or("no profile after wait")?;
    let d = ev.duration().map_err(e)?;
    check(d == p.duration, || {
        format!("duration {d:?} differs from profile {p:?}")
    })?;
    check(p.duration.as_secs() < 600, || {
        format!("implausible duration {p:?}")
    })?;
    let pe = pending.event().clone();
    let got = pending.wait().map_err(e)?;
    check(pe.is_complete() && pe.profile().is_some(), || {
        "read event not complete after wait".into()
    })?;
    check(
        p.submitted <= p.start && p.start <= p.end && p.end - p.start == p.duration,
        || format!("profile timestamps out of order: {p:?}"),
    )?;
    let rp = pe.profile().ok_or("no profile for the read")?;
    check(rp.start >= p.end, || {
        format!(
            "the read waited for the launch but started at {:?}, before the launch ended at {:?}",
            rp.start, p.end
        )
    })?;
    let want: Vec<u32> = (0..4u32)
        .map(|i| {
            let mut acc = i;
            for j in 0..200 {
                acc = acc.wrapping_add(acc.wrapping_mul(3).wrapping_add(j));
            }
            acc
        })
        .collect();
    expect_eq("result", &got, &want)?;
    let done = Event::completed();
    check(done.is_complete() && done.profile().is_some(), || {
        "Event::completed".into()
    })?;
    done.wait().map_err(e)
}

fn read_into(q: &Queue) -> Result<(), String> {
    let xs = inputs::<f32>(731, 555, true);
    let b = Buffer::from_slice(q, &xs).map_err(e)?;
    let mut out = vec![0.0f32; 555];
    q.read_into(&b, &mut out).map_err(e)?;
    let same = out.iter().zip(&xs).all(|(a, b)| a.to_bits() == b.to_bits());
    check(same, || "read_into returned other bits".into())?;
    let mut short = vec![0.0f32; 554];
    check(q.read_into(&b, &mut short).is_err(), || {
        "read_into a slice of the wrong length succeeded".into()
    })
}

fn range_errors(q: &Queue) -> Result<(), String> {
    let b = Buffer::<u32>::new(q.device(), 100).map_err(e)?;
    let c = Buffer::<u32>::new(q.device(), 50).map_err(e)?;
    let cases: Vec<(&str, bool)> = vec![
        ("read 90..101", q.read_range(&b, 90..101).is_err()),
        ("read 101..101", q.read_range(&b, 101..101).is_err()),
        ("write 95 + 6", q.write(&b, 95.., &[0; 6]).is_err()),
        ("write 101 + 0", q.write(&b, 101.., &[]).is_err()),
        ("fill 0..101", q.fill(&b, 1, 0..101).is_err()),
        ("fill ..=100", q.fill(&b, 1, ..=100).is_err()),
        ("fill 101..", q.fill(&b, 1, 101..).is_err()),
        ("fill 100..", q.fill(&b, 1, 100..).is_ok()),
        ("copy src 60 + 41", q.copy(&b, 60..101, &c, 0..).is_err()),
        ("copy dst 10 + 41", q.copy(&b, 0..41, &c, 10..).is_err()),
        ("copy overlapping", q.copy(&b, 0..20, &b, 10..).is_err()),
        (
            "enqueue_read 0..200",
            q.enqueue_read(&b, 0..200, &[]).is_err(),
        ),
        ("read 100..100", q.read_range(&b, 100..100).is_ok()),
        ("write 100 + 0", q.write(&b, 100.., &[]).is_ok()),
        ("copy adjacent", q.copy(&b, 0..10, &b, 10..).is_ok()),
    ];
    for (what, ok) in cases {
        check(ok, || format!("{what}: unexpected result"))?;
    }
    expect_eq(
        "buffer untouched by rejected commands",
        &q.read(&b).map_err(e)?,
        &[0u32; 100],
    )
}

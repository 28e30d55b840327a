//! Work-group collectives (reductions, scans, broadcast, any/all) in 1-D and 2-D work-groups,
//! and gather reductions read back through [`Run::gather`](strata::Run::gather).

use super::{case, check, e, expect_eq, expect_eq_k, has_f64, Case, Rng};
use strata::builder::{Float, Value};
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("group/reduce_1d", reduce_1d),
        case("group/scan_1d", scan_1d),
        case("group/reduce_scan_2d", reduce_scan_2d),
        case("group/broadcast", broadcast),
        case("group/any_all", any_all),
        case("group/wide_types", wide_types),
        case("group/float_add_bound", float_add_bound),
        case("group/float_min_max_exact", float_min_max_exact),
        case("group/reduce_with", reduce_with),
        case("gather/add_u32", gather_add_u32),
        case("gather/user_defined", gather_user_defined),
        case("gather/several", gather_several),
        case("gather/float_and_2d", gather_float_2d),
        case("gather/groups_that_return", gather_groups_that_return),
    ]
}

/// `(sum, min, max)` of a group.
fn red(v: &[i32]) -> (i32, i32, i32) {
    (
        v.iter().fold(0i32, |a, &b| a.wrapping_add(b)),
        *v.iter().min().unwrap(),
        *v.iter().max().unwrap(),
    )
}

fn reduce_1d(q: &Queue) -> Result<(), String> {
    const L: usize = 96;
    let groups = 7;
    let n = L * groups;
    let mut r = Rng::new(601);
    let xs: Vec<i32> = (0..n)
        .map(|_| r.int(-1_000_000, 1_000_000) as i32)
        .collect();
    let k = Kernel::build("reduce_1d", |k| {
        let x = k.read::<i32>("x");
        let out = k.write::<i32>("out");
        let fout = k.write::<f32>("fout");
        let i = global_id(0);
        let v = x.at(i);
        let f = (v % 1000i32).cast::<f32>();
        out.set(i * 3u32, group_reduce_add(v));
        out.set(i * 3u32 + 1u32, group_reduce_min(v));
        out.set(i * 3u32 + 2u32, group_reduce_max(v));
        fout.set(i * 3u32, group_reduce_add(f));
        fout.set(i * 3u32 + 1u32, group_reduce_min(f));
        fout.set(i * 3u32 + 2u32, group_reduce_max(f));
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<i32>::new(q.device(), 3 * n).map_err(e)?;
    let fb = Buffer::<f32>::new(q.device(), 3 * n).map_err(e)?;
    k.launch(q, NdRange::new(n).local(L), args![&xb, &ob, &fb])
        .map_err(e)?;
    let mut want = Vec::new();
    let mut fwant = Vec::new();
    for g in xs.chunks(L) {
        let (s, mn, mx) = red(g);
        let fs: Vec<i32> = g.iter().map(|v| v % 1000).collect();
        let (fs_, fmn, fmx) = red(&fs);
        for _ in 0..L {
            want.extend([s, mn, mx]);
            fwant.extend([fs_ as f32, fmn as f32, fmx as f32]);
        }
    }
    let names = ["reduce_add", "reduce_min", "reduce_max"];
    expect_eq_k(
        "i32 group reductions",
        &names,
        &q.read(&ob).map_err(e)?,
        &want,
    )?;
    expect_eq_k(
        "f32 group reductions",
        &names,
        &q.read(&fb).map_err(e)?,
        &fwant,
    )
}

/// Host scans of one group: inclusive add, min, max, exclusive add.
fn scans(v: &[i32]) -> Vec<[i32; 4]> {
    let (mut s, mut mn, mut mx) = (0i32, i32::MAX, i32::MIN);
    v.iter()
        .map(|&x| {
            let ex = s;
            s = s.wrapping_add(x);
            mn = mn.min(x);
            mx = mx.max(x);
            [s, mn, mx, ex]
        })
        .collect()
}

fn scan_1d(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("scan_1d", |k| {
        let x = k.read::<i32>("x");
        let out = k.write::<i32>("out");
        let i = global_id(0);
        // The launch is rounded up: out-of-range work-items take part with neutral values.
        let inr = i.lt(x.len());
        let v = x.at(i.min(x.len() - 1u32));
        let a = group_scan_inclusive_add(select::<i32>(inr, v, 0i32));
        let mn = group_scan_inclusive_min(select::<i32>(inr, v, i32::MAX));
        let mx = group_scan_inclusive_max(select::<i32>(inr, v, i32::MIN));
        let ex = group_scan_exclusive_add(select::<i32>(inr, v, 0i32));
        if_(inr, || {
            out.set(i * 4u32, a);
            out.set(i * 4u32 + 1u32, mn);
            out.set(i * 4u32 + 2u32, mx);
            out.set(i * 4u32 + 3u32, ex);
        });
    })
    .map_err(e)?;
    let mut r = Rng::new(611);
    for (n, l) in [(1000usize, 64usize), (250, 250), (37, 1)] {
        let xs: Vec<i32> = (0..n).map(|_| r.next_u64() as i32 >> 4).collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let ob = Buffer::<i32>::new(q.device(), 4 * n).map_err(e)?;
        k.launch(q, NdRange::covering(n, l), args![&xb, &ob])
            .map_err(e)?;
        let want: Vec<i32> = xs.chunks(l).flat_map(scans).flatten().collect();
        expect_eq_k(
            &format!("scans, {n} items in groups of {l}"),
            &[
                "inclusive_add",
                "inclusive_min",
                "inclusive_max",
                "exclusive_add",
            ],
            &q.read(&ob).map_err(e)?,
            &want,
        )?;
    }
    Ok(())
}

fn reduce_scan_2d(q: &Queue) -> Result<(), String> {
    // Work-groups of 8 x 6; the scan order is local_linear_id = x + 8 y.
    let (gx, gy, lx, ly) = (32usize, 18usize, 8usize, 6usize);
    let mut r = Rng::new(621);
    let xs: Vec<i32> = (0..gx * gy).map(|_| r.int(-5000, 5000) as i32).collect();
    let k = Kernel::build("reduce_scan_2d", |k| {
        let x = k.read::<i32>("x");
        let out = k.write::<i32>("out");
        let i = global_id(1) * global_size(0) + global_id(0);
        let v = x.at(i);
        out.set(i * 4u32, group_reduce_add(v));
        out.set(i * 4u32 + 1u32, group_reduce_max(v));
        out.set(i * 4u32 + 2u32, group_scan_inclusive_add(v));
        out.set(i * 4u32 + 3u32, group_scan_exclusive_add(v * 2i32));
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<i32>::new(q.device(), 4 * gx * gy).map_err(e)?;
    k.launch(q, NdRange::new([gx, gy]).local([lx, ly]), args![&xb, &ob])
        .map_err(e)?;
    let mut want = vec![0i32; 4 * gx * gy];
    for by in 0..gy / ly {
        for bx in 0..gx / lx {
            let ids: Vec<usize> = (0..lx * ly)
                .map(|ll| (by * ly + ll / lx) * gx + bx * lx + ll % lx)
                .collect();
            let vals: Vec<i32> = ids.iter().map(|&i| xs[i]).collect();
            let (s, _, mx) = red(&vals);
            let (mut inc, mut ex) = (0i32, 0i32);
            for (&i, &v) in ids.iter().zip(&vals) {
                inc += v;
                want[i * 4..i * 4 + 4].copy_from_slice(&[s, mx, inc, ex]);
                ex += 2 * v;
            }
        }
    }
    expect_eq_k(
        "2-D work-group collectives",
        &[
            "reduce_add",
            "reduce_max",
            "scan_inclusive_add",
            "scan_exclusive_add(2x)",
        ],
        &q.read(&ob).map_err(e)?,
        &want,
    )
}

fn broadcast(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("broadcast", |k| {
        let x = k.read::<f32>("x");
        let out = k.write::<f32>("out");
        let i = global_id(1) * global_size(0) + global_id(0);
        let n = local_size(0) * local_size(1);
        let src = (group_linear_id() * 7u32 + 3u32) % n;
        let v = x.at(i);
        let b = group_broadcast(v, src);
        let own = group_broadcast(vec2::<f32>(v, v * 2.0f32), local_linear_id());
        let last = group_broadcast(local_linear_id(), n - 1u32);
        out.set(i * 3u32, b);
        out.set(i * 3u32 + 1u32, own.y() - own.x());
        out.set(i * 3u32 + 2u32, last.cast::<f32>());
    })
    .map_err(e)?;
    let mut r = Rng::new(631);
    for (g, l) in [([300usize, 1usize], [60usize, 1usize]), ([20, 12], [5, 4])] {
        let total = g[0] * g[1];
        let xs: Vec<f32> = (0..total).map(|_| r.f32_in(-100.0, 100.0)).collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let ob = Buffer::<f32>::new(q.device(), 3 * total).map_err(e)?;
        let range = if g[1] == 1 {
            NdRange::new(g[0]).local(l[0])
        } else {
            NdRange::new(g).local(l)
        };
        k.launch(q, range, args![&xb, &ob]).map_err(e)?;
        let ng = [g[0] / l[0], g[1] / l[1]];
        let n = l[0] * l[1];
        let mut want = vec![0.0f32; 3 * total];
        for y in 0..g[1] {
            for x in 0..g[0] {
                let (bx, by) = (x / l[0], y / l[1]);
                let glin = bx + by * ng[0];
                let src = (glin * 7 + 3) % n;
                let (sx, sy) = (bx * l[0] + src % l[0], by * l[1] + src / l[0]);
                let i = y * g[0] + x;
                let v = xs[i];
                want[3 * i] = xs[sy * g[0] + sx];
                want[3 * i + 1] = v * 2.0 - v;
                want[3 * i + 2] = (n - 1) as f32;
            }
        }
        expect_eq_k(
            &format!("broadcast in groups of {l:?}"),
            &["from (group*7+3) % n", "own vector", "last id"],
            &q.read(&ob).map_err(e)?,
            &want,
        )?;
    }
    Ok(())
}

fn any_all(q: &Queue) -> Result<(), String> {
    const L: usize = 50;
    let groups = 8;
    let n = L * groups;
    // Group g: all true (g % 4 == 0), none (1), one (2), all but one (3).
    let xs: Vec<u32> = (0..n)
        .map(|i| {
            let (g, l) = (i / L, i % L);
            match g % 4 {
                0 => 1,
                1 => 0,
                2 => (l == 17) as u32,
                _ => (l != 3 + g) as u32,
            }
        })
        .collect();
    let k = Kernel::build("any_all", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let b = x.at(i).ne(0u32);
        let any = group_any(b);
        let all = group_all(b);
        let none = group_all(b.not());
        out.set(
            i,
            any.cast::<u32>() | (all.cast::<u32>() << 1u32) | (none.cast::<u32>() << 2u32),
        );
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::new(n).local(L), args![&xb, &ob])
        .map_err(e)?;
    let want: Vec<u32> = xs
        .chunks(L)
        .flat_map(|c| {
            let any = c.iter().any(|&v| v != 0);
            let all = c.iter().all(|&v| v != 0);
            let none = c.iter().all(|&v| v == 0);
            std::iter::repeat_n(any as u32 | (all as u32) << 1 | (none as u32) << 2, L)
        })
        .collect();
    expect_eq("group_any / group_all", &q.read(&ob).map_err(e)?, &want)
}

fn wide_types(q: &Queue) -> Result<(), String> {
    if !has_f64(q) {
        return Ok(());
    }
    const L: usize = 40;
    let n = L * 5;
    let mut r = Rng::new(641);
    let xs: Vec<u64> = (0..n).map(|_| r.next_u64()).collect();
    let k = Kernel::build("wide_collectives", |k| {
        let x = k.read::<u64>("x");
        let out = k.write::<u64>("out");
        let fout = k.write::<f64>("fout");
        let i = global_id(0);
        let v = x.at(i);
        out.set(i * 3u32, group_reduce_add(v));
        out.set(i * 3u32 + 1u32, group_scan_inclusive_max(v));
        out.set(i * 3u32 + 2u32, group_reduce_min(v));
        let f = (v >> 40u64).cast::<f64>();
        fout.set(i * 2u32, group_scan_inclusive_add(f));
        fout.set(i * 2u32 + 1u32, group_scan_inclusive_min(f));
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<u64>::new(q.device(), 3 * n).map_err(e)?;
    let fb = Buffer::<f64>::new(q.device(), 2 * n).map_err(e)?;
    k.launch(q, NdRange::new(n).local(L), args![&xb, &ob, &fb])
        .map_err(e)?;
    let mut want = Vec::new();
    let mut fwant = Vec::new();
    for c in xs.chunks(L) {
        let s = c.iter().fold(0u64, |a, &b| a.wrapping_add(b));
        let mn = *c.iter().min().unwrap();
        let (mut mx, mut fs, mut fmn) = (0u64, 0.0f64, f64::INFINITY);
        for &v in c {
            mx = mx.max(v);
            fs += (v >> 40) as f64;
            fmn = fmn.min((v >> 40) as f64);
            want.extend([s, mx, mn]);
            fwant.extend([fs, fmn]);
        }
    }
    expect_eq_k(
        "u64 collectives",
        &["reduce_add", "scan_max", "reduce_min"],
        &q.read(&ob).map_err(e)?,
        &want,
    )?;
    expect_eq_k(
        "f64 scans",
        &["scan_add", "scan_min"],
        &q.read(&fb).map_err(e)?,
        &fwant,
    )
}

fn gather_add_u32(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("gather_add_u32", |k| {
        let x = k.read::<u32>("x");
        let i = global_id(0);
        let inr = i.lt(x.len());
        k.gather_add(select::<u32>(inr, x.at(i.min(x.len() - 1u32)), 0u32));
    })
    .map_err(e)?;
    let mut r = Rng::new(651);
    for (n, l) in [
        (1000usize, Some(64usize)),
        (4099, None),
        (1, Some(1)),
        (777, Some(256)),
    ] {
        let xs: Vec<u32> = (0..n).map(|_| r.next_u64() as u32).collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let range = match l {
            Some(l) => NdRange::covering(n, l),
            None => NdRange::new(n),
        };
        let run = k.launch(q, range, args![&xb]).map_err(e)?;
        let got = run.gather::<u32>(0).map_err(e)?.get().map_err(e)?;
        let want = xs.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        check(got == want, || {
            format!("gather_add over {n} items: got {got}, expected {want}")
        })?;
    }
    Ok(())
}

/// `group_reduce_with` with integer and float functions, in work-groups of many shapes: whole
/// and partial sub-groups, several levels of partials, a single work-item, 2-D groups.
fn reduce_with(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("group_reduce_with", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let fout = k.write::<f32>("fout");
        let i = global_id(1) * global_size(0) + global_id(0);
        let v = x.at(i);
        out.set(i * 2u32, group_reduce_with(v | 1u32, |a, b| a * b));
        out.set(
            i * 2u32 + 1u32,
            group_reduce_with(v, |a, b| a ^ (b >> 1u32)),
        );
        let f = (v % 1000u32).cast::<f32>() - 500.0f32;
        fout.set(i, group_reduce_with(f, |a, b| a.max(b)));
    })
    .map_err(e)?;
    let mut r = Rng::new(671);
    for (g, l) in [
        ([192usize, 1usize], [64usize, 1usize]),
        ([300, 1], [100, 1]),
        ([1024, 1], [1024, 1]),
        ([5, 1], [1, 1]),
        ([24, 10], [8, 5]),
    ] {
        let n = g[0] * g[1];
        let xs: Vec<u32> = (0..n).map(|_| r.next_u64() as u32).collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let ob = Buffer::<u32>::new(q.device(), 2 * n).map_err(e)?;
        let fb = Buffer::<f32>::new(q.device(), n).map_err(e)?;
        k.launch(q, NdRange::new(g).local(l), args![&xb, &ob, &fb])
            .map_err(e)?;
        let got = q.read(&ob).map_err(e)?;
        let fgot = q.read(&fb).map_err(e)?;
        // The work-group of item (x, y) and its members.
        let group = |x: usize, y: usize| {
            let (gx, gy) = (x / l[0], y / l[1]);
            let mut m = Vec::new();
            for yy in gy * l[1]..(gy + 1) * l[1] {
                for xx in gx * l[0]..(gx + 1) * l[0] {
                    m.push(xs[yy * g[0] + xx]);
                }
            }
            m
        };
        for y in 0..g[1] {
            for x in 0..g[0] {
                let i = y * g[0] + x;
                let m = group(x, y);
                let prod = m.iter().fold(1u32, |a, &b| a.wrapping_mul(b | 1));
                let fmax = m
                    .iter()
                    .map(|v| (v % 1000) as f32 - 500.0)
                    .fold(f32::NEG_INFINITY, f32::max);
                check(got[2 * i] == prod && fgot[i] == fmax, || {
                    format!(
                        "group_reduce_with, global {g:?}, local {l:?}, item ({x}, {y}): product {} (expected {prod}), max {} (expected {fmax})",
                        got[2 * i], fgot[i]
                    )
                })?;
                // `a ^ (b >> 1)` is neither associative nor commutative: only agreement
                // within the work-group is required of it (one value, the same everywhere).
                check(
                    got[2 * i + 1] == got[2 * (y / l[1] * l[1] * g[0] + x / l[0] * l[0]) + 1],
                    || {
                        format!("group_reduce_with gave work-items of one group different values, global {g:?}, local {l:?}, item ({x}, {y})")
                    },
                )?;
            }
        }
    }
    Ok(())
}

/// Gathers with user functions: a wrapping product of odd values, a bitwise and, and a float
/// maximum, over launches of several shapes (the work-items out of range contribute the
/// identity).
fn gather_user_defined(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("gather_user_defined", |k| {
        let x = k.read::<u32>("x");
        let i = global_id(0);
        let inr = i.lt(x.len());
        let v = x.at(i.min(x.len() - 1u32));
        k.gather_with(select::<u32>(inr, v | 1u32, 1u32), 1u32, |a, b| a * b);
        k.gather_with(select::<u32>(inr, v, u32::MAX), u32::MAX, |a, b| a & b);
        let f = (v % 100_000u32).cast::<f32>() * 0.25f32;
        k.gather_with(
            select::<f32>(inr, f, f32::NEG_INFINITY),
            f32::NEG_INFINITY,
            |a, b| a.max(b),
        );
    })
    .map_err(e)?;
    let mut r = Rng::new(681);
    for (n, l) in [(1000usize, 64usize), (4099, 256), (1, 1), (777, 100)] {
        // Mostly ones in the high bits, so that the and is not simply 0.
        let xs: Vec<u32> = (0..n).map(|_| r.next_u64() as u32 | 0xfff0_0000).collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let run = k
            .launch(q, NdRange::covering(n, l), args![&xb])
            .map_err(e)?;
        let prod = run.gather::<u32>(0).map_err(e)?.get().map_err(e)?;
        let and = run.gather::<u32>(1).map_err(e)?.get().map_err(e)?;
        let fmax = run.gather::<f32>(2).map_err(e)?.get().map_err(e)?;
        let want = (
            xs.iter().fold(1u32, |a, &b| a.wrapping_mul(b | 1)),
            xs.iter().fold(u32::MAX, |a, &b| a & b),
            xs.iter()
                .map(|v| (v % 100_000) as f32 * 0.25)
                .fold(f32::NEG_INFINITY, f32::max),
        );
        check((prod, and, fmax) == want, || {
            format!("gathers with user functions over {n} items in groups of {l}: got (product, and, max) = {:?}, expected {want:?}", (prod, and, fmax))
        })?;
    }
    Ok(())
}

fn gather_several(q: &Queue) -> Result<(), String> {
    let n = 3001;
    let mut r = Rng::new(661);
    let xs: Vec<i32> = (0..n).map(|_| r.next_u64() as i32).collect();
    let k = Kernel::build("gather_several", |k| {
        let x = k.read::<i32>("x");
        let i = global_id(0);
        let inr = i.lt(x.len());
        let v = x.at(i.min(x.len() - 1u32));
        k.gather_add(select::<i64>(inr, v.cast::<i64>(), 0i64));
        k.gather_min(select::<i32>(inr, v, i32::MAX));
        k.gather_max(select::<i32>(inr, v, i32::MIN));
        k.gather_max(select::<u32>(inr, i, 0u32));
        k.gather_add(select::<u32>(inr, 1u32, 0u32));
    })
    .map_err(e)?;
    check(k.gathers().len() == 5, || {
        format!("{} gathers declared", k.gathers().len())
    })?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let run = k
        .launch(q, NdRange::covering(n, 128), args![&xb])
        .map_err(e)?;
    let sum = run.gather::<i64>(0).map_err(e)?.get().map_err(e)?;
    let mn = run.gather::<i32>(1).map_err(e)?.get().map_err(e)?;
    let mx = run.gather::<i32>(2).map_err(e)?.get().map_err(e)?;
    let last = run.gather::<u32>(3).map_err(e)?.get().map_err(e)?;
    let count = run.gather::<u32>(4).map_err(e)?.get().map_err(e)?;
    let want = (
        xs.iter().map(|&v| v as i64).sum::<i64>(),
        *xs.iter().min().unwrap(),
        *xs.iter().max().unwrap(),
        n as u32 - 1,
        n as u32,
    );
    check((sum, mn, mx, last, count) == want, || {
        format!(
            "gathers (sum, min, max, max id, count): got {:?}, expected {want:?}",
            (sum, mn, mx, last, count)
        )
    })?;
    check(run.gather::<u32>(0).is_err(), || {
        "gather 0 read with the wrong type".into()
    })?;
    check(run.gather::<u32>(5).is_err(), || {
        "gather 5 does not exist".into()
    })
}

/// Work-groups whose work-items all return before the gathers write no partial; they must not
/// change the result: each gather's skipped partials count as its operation's identity (not as
/// zero, and not as what an earlier launch left in reused memory).
fn gather_groups_that_return(q: &Queue) -> Result<(), String> {
    const L: usize = 32;
    let groups = 9;
    let k = Kernel::build("gather_groups_that_return", |k| {
        let x = k.read::<i32>("x");
        let skip = k.scalar::<u32>("skip");
        // Groups whose bit is set in `skip` leave at once, all their work-items together.
        if_(((skip >> group_id(0)) & 1u32).eq(1u32), return_);
        let v = x.at(global_id(0));
        k.gather_add(v);
        k.gather_min(v);
        k.gather_max(v);
        k.gather_min(v.cast::<f32>());
    })
    .map_err(e)?;
    let mut r = Rng::new(681);
    // Positive values first (a partial of zero would be a wrong minimum), then negative ones (a
    // wrong maximum), then mixed; each launch reuses the partials of the one before.
    for (lo, hi, skip) in [
        (1, 1000, 0b0_1010_0110u32),
        (-1000, -1, 0b1_0001_0001),
        (-1000, 1000, 0b0_0000_0000),
        (5, 9, 0b0_1111_1110),
        (5, 9, 0b1_1111_1111),
    ] {
        let xs: Vec<i32> = (0..L * groups).map(|_| r.int(lo, hi) as i32).collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let run = k
            .launch(q, NdRange::new(L * groups).local(L), args![&xb, skip])
            .map_err(e)?;
        let got = (
            run.gather::<i32>(0).map_err(e)?.get().map_err(e)?,
            run.gather::<i32>(1).map_err(e)?.get().map_err(e)?,
            run.gather::<i32>(2).map_err(e)?.get().map_err(e)?,
            run.gather::<f32>(3).map_err(e)?.get().map_err(e)?,
        );
        let kept: Vec<i32> = xs
            .chunks(L)
            .enumerate()
            .filter(|(g, _)| skip >> g & 1 == 0)
            .flat_map(|(_, c)| c.iter().copied())
            .collect();
        let want = (
            kept.iter().sum::<i32>(),
            kept.iter().copied().min().unwrap_or(i32::MAX),
            kept.iter().copied().max().unwrap_or(i32::MIN),
            kept.iter().map(|&v| v as f32).fold(f32::INFINITY, f32::min),
        );
        check(got == want, || {
            format!(
                "gathers (sum, min, max, min as f32) skipping groups {skip:#b}: got {got:?}, expected {want:?}"
            )
        })?;
    }
    Ok(())
}

fn gather_float_2d(q: &Queue) -> Result<(), String> {
    let (gx, gy) = (48usize, 20usize);
    let mut r = Rng::new(671);
    // Integer-valued floats: the sum is exact in any order.
    let xs: Vec<f32> = (0..gx * gy).map(|_| r.int(-1000, 1000) as f32).collect();
    let k = Kernel::build("gather_2d", |k| {
        let x = k.read::<f32>("x");
        let i = global_id(1) * global_size(0) + global_id(0);
        let v = x.at(i);
        k.gather_add(v);
        k.gather_max(v);
        k.gather_min(global_id(1).cast::<i32>() - global_id(0).cast::<i32>());
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    for local in [Some([8usize, 4usize]), Some([48, 1]), None] {
        let range = match local {
            Some(l) => NdRange::new([gx, gy]).local(l),
            None => NdRange::new([gx, gy]),
        };
        let run = k.launch(q, range, args![&xb]).map_err(e)?;
        let s = run.gather::<f32>(0).map_err(e)?.get().map_err(e)?;
        let m = run.gather::<f32>(1).map_err(e)?.get().map_err(e)?;
        let d = run.gather::<i32>(2).map_err(e)?.get().map_err(e)?;
        let want = (
            xs.iter().sum::<f32>(),
            xs.iter().copied().fold(f32::MIN, f32::max),
            -(gx as i32 - 1),
        );
        check((s, m, d) == want, || {
            format!(
                "2-D gathers with local {local:?}: got {:?}, expected {want:?}",
                (s, m, d)
            )
        })?;
    }
    Ok(())
}

/// Work-group sizes that cover one partial warp, several full and partial warps, and (where the
/// device allows) 32 warps.
fn float_shapes(q: &Queue) -> Vec<(usize, usize)> {
    let max = q.device().info().max_work_group_size.min(1024);
    let mut v = vec![(37usize, 3usize), (96, 5), (250, 2)];
    if max >= 1024 {
        v.push((1024, 2));
    }
    v.retain(|&(l, _)| l <= max);
    v
}

/// A float type of the float-add bound test.
trait BoundFloat: Float + Value + Copy + strata::ir::eval::Num {
    /// The unit roundoff.
    const U: f64;
    fn to64(self) -> f64;
    fn from64(v: f64) -> Self;
}
impl BoundFloat for f32 {
    const U: f64 = 1.0 / (1u64 << 24) as f64;
    fn to64(self) -> f64 {
        self as f64
    }
    fn from64(v: f64) -> Self {
        v as f32
    }
}
impl BoundFloat for f64 {
    const U: f64 = 1.0 / (1u64 << 53) as f64;
    fn to64(self) -> f64 {
        self
    }
    fn from64(v: f64) -> Self {
        v
    }
}

/// The exact-enough sum of `xs` (Neumaier's compensated sum in `f64`: error about `2^-53`
/// times the sum of magnitudes, far below the `f32` bound and half the `f64` one, which is
/// why the `f64` check allows twice the bound) and the sum of their magnitudes.
fn sum_and_mag(xs: &[f64]) -> (f64, f64) {
    let (mut s, mut c, mut m) = (0.0f64, 0.0f64, 0.0f64);
    for &x in xs {
        let t = s + x;
        c += if s.abs() >= x.abs() {
            (s - t) + x
        } else {
            (x - t) + s
        };
        s = t;
        m += x.abs();
    }
    (s + c, m)
}

/// Float sums in some association order: reductions and both scans of non-integer values of
/// mixed signs and magnitudes, each within `gamma(k) * sum |x|` of the exact sum of its `k + 1`
/// operands (the rule in [`GroupOp`](strata::ir::GroupOp)'s docs).
fn float_add_bound(q: &Queue) -> Result<(), String> {
    float_add_bound_of::<f32>(q, 701)?;
    if q.device().info().supports_f64 {
        float_add_bound_of::<f64>(q, 702)?;
    }
    Ok(())
}

fn float_add_bound_of<T: BoundFloat>(q: &Queue, seed: u64) -> Result<(), String> {
    let k = Kernel::build("float_add_bound", |k| {
        let x = k.read::<T>("x");
        let out = k.write::<T>("out");
        let i = global_id(0);
        let v = x.at(i);
        out.set(i * 3u32, group_reduce_add(v));
        out.set(i * 3u32 + 1u32, group_scan_inclusive_add(v));
        out.set(i * 3u32 + 2u32, group_scan_exclusive_add(v));
    })
    .map_err(e)?;
    let mut r = Rng::new(seed);
    // f64 references carry their own rounding (see `sum_and_mag`).
    let slack = if T::U < 1e-10 { 2.0 } else { 1.0 };
    for (l, groups) in float_shapes(q) {
        let n = l * groups;
        let xs: Vec<T> = (0..n)
            .map(|_| {
                let m = r.f64_in(0.5, 1.0) * 2f64.powi(r.int(-12, 12) as i32);
                T::from64(if r.below(2) == 0 { -m } else { m })
            })
            .collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let ob = Buffer::<T>::new(q.device(), 3 * n).map_err(e)?;
        k.launch(q, NdRange::new(n).local(l), args![&xb, &ob])
            .map_err(e)?;
        let got = q.read(&ob).map_err(e)?;
        for (g, c) in xs.chunks(l).enumerate() {
            let c64: Vec<f64> = c.iter().map(|v| v.to64()).collect();
            for lid in 0..l {
                let i = g * l + lid;
                let checks = [
                    ("reduce_add", &c64[..], got[3 * i]),
                    ("scan_inclusive_add", &c64[..=lid], got[3 * i + 1]),
                    ("scan_exclusive_add", &c64[..lid], got[3 * i + 2]),
                ];
                for (what, ops, v) in checks {
                    let (exact, mag) = sum_and_mag(ops);
                    let terms = ops.len().saturating_sub(1) as f64;
                    let gamma = terms * T::U / (1.0 - terms * T::U);
                    let bound = slack * gamma * mag;
                    let err = (v.to64() - exact).abs();
                    check(err <= bound, || {
                        format!(
                            "{what} of {} in groups of {l}, work-item {lid} of group {g}: got {:e}, exact {exact:e}, error {err:e} exceeds the bound {bound:e} for {} operands",
                            std::any::type_name::<T>(),
                            v.to64(),
                            ops.len()
                        )
                    })?;
                }
            }
        }
    }
    Ok(())
}

/// Float `min`/`max` reductions and scans of non-integer values with NaNs (and one all-NaN
/// group, whose fold is the identity) are exact on every backend, whatever the order.
fn float_min_max_exact(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("float_min_max_exact", |k| {
        let x = k.read::<f32>("x");
        let out = k.write::<f32>("out");
        let i = global_id(0);
        let v = x.at(i);
        out.set(i * 4u32, group_reduce_min(v));
        out.set(i * 4u32 + 1u32, group_reduce_max(v));
        out.set(i * 4u32 + 2u32, group_scan_inclusive_min(v));
        out.set(i * 4u32 + 3u32, group_scan_inclusive_max(v));
    })
    .map_err(e)?;
    let mut r = Rng::new(711);
    for (l, groups) in float_shapes(q) {
        let n = l * groups;
        let xs: Vec<f32> = (0..n)
            .map(|i| {
                if i < l || r.below(8) == 0 {
                    f32::NAN
                } else {
                    r.f32_in(-1000.0, 1000.0)
                }
            })
            .collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let ob = Buffer::<f32>::new(q.device(), 4 * n).map_err(e)?;
        k.launch(q, NdRange::new(n).local(l), args![&xb, &ob])
            .map_err(e)?;
        let mut want = Vec::with_capacity(4 * n);
        for c in xs.chunks(l) {
            let mn = c.iter().fold(f32::INFINITY, |a, &b| a.min(b));
            let mx = c.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
            let (mut smn, mut smx) = (f32::INFINITY, f32::NEG_INFINITY);
            for &v in c {
                smn = smn.min(v);
                smx = smx.max(v);
                want.extend([mn, mx, smn, smx]);
            }
        }
        let got = q.read(&ob).map_err(e)?;
        let names = [
            "reduce_min",
            "reduce_max",
            "scan_inclusive_min",
            "scan_inclusive_max",
        ];
        if let Some(i) = (0..4 * n).find(|&i| got[i].to_bits() != want[i].to_bits()) {
            return Err(format!(
                "float {} in groups of {l}, work-item {}: got {:e}, expected {:e}",
                names[i % 4],
                i / 4,
                got[i],
                want[i]
            ));
        }
    }
    Ok(())
}

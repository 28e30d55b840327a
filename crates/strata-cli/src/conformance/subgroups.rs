//! Sub-groups: the ids, reductions, scans, shuffles (by lane, xor, up, down, with lanes out of
//! range), broadcast, ballot, any/all, in work-groups whose size is not a multiple of the
//! sub-group size; and the exclusive min/max scans of work-groups. Every expectation is
//! computed on the host from the device's sub-group size (`DeviceInfo::sub_group_size`) and the
//! rule of [`GroupScope`](strata::ir::GroupScope): sub-groups are runs of that many
//! consecutive local linear ids, the last one perhaps shorter.

use super::{case, check, e, expect_eq_k, Case, Rng};
use std::ops::Range;
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("subgroup/ids", ids),
        case("subgroup/reduce", reduce),
        case("subgroup/scan", scan),
        case("subgroup/shuffle", shuffle),
        case("subgroup/broadcast_ballot_vote", vote),
        case("group/scan_exclusive_min_max", group_exclusive_min_max),
    ]
}

/// The device's sub-group size.
fn sg(q: &Queue) -> usize {
    q.device().info().sub_group_size as usize
}

/// The sub-groups of every work-group of a 1-D launch of `n` work-items in groups of `l`: the
/// ranges of global ids they hold.
fn sub_groups(n: usize, l: usize, sg: usize) -> Vec<Range<usize>> {
    let mut v = Vec::new();
    for g in (0..n).step_by(l) {
        let end = (g + l).min(n);
        for s in (g..end).step_by(sg) {
            v.push(s..(s + sg).min(end));
        }
    }
    v
}

fn ids(q: &Queue) -> Result<(), String> {
    let sg = sg(q);
    let k = Kernel::build("subgroup_ids", |k| {
        let out = k.write::<u32>("out");
        let i = global_id(1) * global_size(0) + global_id(0);
        let vals = [
            sub_group_size(),
            max_sub_group_size(),
            num_sub_groups(),
            sub_group_id(),
            sub_group_local_id(),
            local_linear_id(),
        ];
        for (f, v) in vals.into_iter().enumerate() {
            out.set(i * 6u32 + f as u32, v);
        }
    })
    .map_err(e)?;
    for (g, l) in [([240, 1], [80, 1]), ([16, 10], [8, 5]), ([7, 1], [7, 1])] {
        let n = g[0] * g[1];
        let ob = Buffer::<u32>::new(q.device(), 6 * n).map_err(e)?;
        k.launch(q, NdRange::new(g).local(l), args![&ob])
            .map_err(e)?;
        let size = l[0] * l[1];
        let mut want = vec![0u32; 6 * n];
        for y in 0..g[1] {
            for x in 0..g[0] {
                let lid = x % l[0] + l[0] * (y % l[1]);
                let (id, lane) = (lid / sg, lid % sg);
                let i = y * g[0] + x;
                want[6 * i..6 * i + 6].copy_from_slice(&[
                    sg.min(size - id * sg) as u32,
                    sg as u32,
                    size.div_ceil(sg) as u32,
                    id as u32,
                    lane as u32,
                    lid as u32,
                ]);
            }
        }
        expect_eq_k(
            &format!("sub-group ids, global {g:?}, local {l:?}, sub-group size {sg}"),
            &[
                "sub_group_size",
                "max_sub_group_size",
                "num_sub_groups",
                "sub_group_id",
                "sub_group_local_id",
                "local_linear_id",
            ],
            &q.read(&ob).map_err(e)?,
            &want,
        )?;
    }
    Ok(())
}

fn reduce(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("subgroup_reduce", |k| {
        let x = k.read::<i32>("x");
        let out = k.write::<i32>("out");
        let fout = k.write::<f32>("fout");
        let i = global_id(0);
        let v = x.at(i);
        let f = (v % 1000i32).cast::<f32>();
        let b = v.cast::<u8>();
        out.set(i * 4u32, sub_group_reduce_add(v));
        out.set(i * 4u32 + 1u32, sub_group_reduce_min(v));
        out.set(i * 4u32 + 2u32, sub_group_reduce_max(v));
        out.set(i * 4u32 + 3u32, sub_group_reduce_add(b).cast::<i32>());
        // Sums of integers below 2^24 are exact in any order.
        fout.set(i * 3u32, sub_group_reduce_add(f));
        fout.set(i * 3u32 + 1u32, sub_group_reduce_min(f));
        fout.set(i * 3u32 + 2u32, sub_group_reduce_max(f));
    })
    .map_err(e)?;
    folds(
        q,
        &k,
        (1401, 0),
        (
            "reductions",
            &["reduce_add", "reduce_min", "reduce_max", "reduce_add(u8)"],
        ),
        &["reduce_add", "reduce_min", "reduce_max"],
        |xs, s, want, fwant| {
            let v = &xs[s.clone()];
            let add = v.iter().fold(0i32, |a, &b| a.wrapping_add(b));
            let bytes = v.iter().fold(0u8, |a, &b| a.wrapping_add(b as u8));
            let fs: Vec<i32> = v.iter().map(|x| x % 1000).collect();
            for i in s {
                want[4 * i..4 * i + 4].copy_from_slice(&[
                    add,
                    *v.iter().min().unwrap(),
                    *v.iter().max().unwrap(),
                    bytes as i32,
                ]);
                fwant[3 * i..3 * i + 3].copy_from_slice(&[
                    fs.iter().sum::<i32>() as f32,
                    *fs.iter().min().unwrap() as f32,
                    *fs.iter().max().unwrap() as f32,
                ]);
            }
        },
    )
}

/// Runs a fold case's kernel `k` (reading `x`, writing `names.len()` i32 results and
/// `fnames.len()` f32 results per work-item) on random inputs (seed, right shift) in
/// work-groups of several sizes, and compares with what `expect` writes for each sub-group.
fn folds(
    q: &Queue,
    k: &Kernel,
    (seed, shift): (u64, u32),
    (kind, names): (&str, &[&str]),
    fnames: &[&str],
    expect: impl Fn(&[i32], Range<usize>, &mut [i32], &mut [f32]),
) -> Result<(), String> {
    let sg = sg(q);
    let (ki, kf) = (names.len(), fnames.len());
    let mut r = Rng::new(seed);
    for (n, l) in [(240usize, 80usize), (60, 20), (64, 64)] {
        let xs: Vec<i32> = (0..n).map(|_| r.next_u64() as i32 >> shift).collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let ob = Buffer::<i32>::new(q.device(), ki * n).map_err(e)?;
        let fb = Buffer::<f32>::new(q.device(), kf * n).map_err(e)?;
        k.launch(q, NdRange::new(n).local(l), args![&xb, &ob, &fb])
            .map_err(e)?;
        let (mut want, mut fwant) = (vec![0; ki * n], vec![0.0; kf * n]);
        for s in sub_groups(n, l, sg) {
            expect(&xs, s, &mut want, &mut fwant);
        }
        let what = format!("{n} items in groups of {l}, sub-group size {sg}");
        expect_eq_k(
            &format!("i32 sub-group {kind}, {what}"),
            names,
            &q.read(&ob).map_err(e)?,
            &want,
        )?;
        expect_eq_k(
            &format!("f32 sub-group {kind}, {what}"),
            fnames,
            &q.read(&fb).map_err(e)?,
            &fwant,
        )?;
    }
    Ok(())
}

fn scan(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("subgroup_scan", |k| {
        let x = k.read::<i32>("x");
        let out = k.write::<i32>("out");
        let fout = k.write::<f32>("fout");
        let i = global_id(0);
        let v = x.at(i);
        let f = (v % 1000i32).cast::<f32>();
        let vals = [
            sub_group_scan_inclusive_add(v),
            sub_group_scan_inclusive_min(v),
            sub_group_scan_inclusive_max(v),
            sub_group_scan_exclusive_add(v),
            sub_group_scan_exclusive_min(v),
            sub_group_scan_exclusive_max(v),
        ];
        for (j, r) in vals.into_iter().enumerate() {
            out.set(i * 6u32 + j as u32, r);
        }
        fout.set(i * 3u32, sub_group_scan_inclusive_add(f));
        fout.set(i * 3u32 + 1u32, sub_group_scan_exclusive_min(f));
        fout.set(i * 3u32 + 2u32, sub_group_scan_exclusive_max(f));
    })
    .map_err(e)?;
    folds(
        q,
        &k,
        (1402, 2),
        (
            "scans",
            &[
                "inclusive_add",
                "inclusive_min",
                "inclusive_max",
                "exclusive_add",
                "exclusive_min",
                "exclusive_max",
            ],
        ),
        &["inclusive_add", "exclusive_min", "exclusive_max"],
        |xs, s, want, fwant| {
            let (mut add, mut mn, mut mx) = (0i32, i32::MAX, i32::MIN);
            let (mut fadd, mut fmn, mut fmx) = (0.0f32, f32::INFINITY, f32::NEG_INFINITY);
            for i in s {
                let (v, f) = (xs[i], (xs[i] % 1000) as f32);
                fwant[3 * i + 1] = fmn;
                fwant[3 * i + 2] = fmx;
                let (ex_add, ex_mn, ex_mx) = (add, mn, mx);
                add = add.wrapping_add(v);
                mn = mn.min(v);
                mx = mx.max(v);
                fadd += f;
                fmn = fmn.min(f);
                fmx = fmx.max(f);
                want[6 * i..6 * i + 6].copy_from_slice(&[add, mn, mx, ex_add, ex_mn, ex_mx]);
                fwant[3 * i] = fadd;
            }
        },
    )
}

/// Which lane a shuffle of lane `lane` in a sub-group of `len` lanes reads, by the rule of
/// [`GroupOp`](strata::ir::GroupOp): `None` where the source is not a lane (the own value).
enum Shuffle {
    Lane,
    Xor,
    Up,
    Down,
}

fn shuffle_from(kind: Shuffle, lane: usize, s: u32, len: usize) -> usize {
    let s = s as usize;
    let from = match kind {
        Shuffle::Lane => Some(s),
        Shuffle::Xor => Some(lane ^ s),
        Shuffle::Up => lane.checked_sub(s),
        Shuffle::Down => Some(lane + s),
    };
    from.filter(|&f| f < len).unwrap_or(lane)
}

fn shuffle(q: &Queue) -> Result<(), String> {
    let sg = sg(q);
    const K: usize = 15;
    let k = Kernel::build("subgroup_shuffle", |k| {
        let x = k.read::<i32>("x");
        let out = k.write::<i32>("out");
        let wout = k.write::<i64>("wout");
        let vout = k.write::<[f32; 4]>("vout");
        let i = global_id(0);
        let v = x.at(i);
        let lane = sub_group_local_id();
        let w = v.cast::<i64>() * 1_000_003i64;
        let f = (v % 4096i32).cast::<f32>();
        let vals = [
            sub_group_shuffle(v, (lane * 7u32 + 3u32) % 37u32),
            sub_group_shuffle(v, 0u32),
            sub_group_shuffle_xor(v, 1u32),
            sub_group_shuffle_xor(v, 6u32),
            sub_group_shuffle_xor(v, 31u32),
            sub_group_shuffle_xor(v, 32u32),
            sub_group_shuffle_up(v, 1u32),
            sub_group_shuffle_up(v, 5u32),
            sub_group_shuffle_up(v, u32::MAX),
            sub_group_shuffle_down(v, 1u32),
            sub_group_shuffle_down(v, 7u32),
            sub_group_shuffle_down(v, u32::MAX),
            sub_group_shuffle_down(v, lane),
            sub_group_shuffle_xor(v.cast::<u8>(), 2u32).cast::<i32>(),
            select::<i32>(sub_group_shuffle(v.gt(0i32), lane + 1u32), 1i32, 0i32),
        ];
        for (j, r) in vals.into_iter().enumerate() {
            out.set(i * K as u32 + j as u32, r);
        }
        wout.set(i, sub_group_shuffle_up(w, 2u32));
        let s = sub_group_shuffle_xor(vec3::<f32>(f, f + 0.5f32, -f), 3u32);
        vout.set(i, vec4::<f32>(s.x(), s.y(), s.z(), lit(1.0f32)));
    })
    .map_err(e)?;
    let mut r = Rng::new(1403);
    for (n, l) in [(96usize, 48usize), (40, 40), (64, 64)] {
        let xs: Vec<i32> = (0..n).map(|_| r.next_u64() as i32).collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let ob = Buffer::<i32>::new(q.device(), K * n).map_err(e)?;
        let wb = Buffer::<i64>::new(q.device(), n).map_err(e)?;
        let vb = Buffer::<[f32; 4]>::new(q.device(), n).map_err(e)?;
        k.launch(q, NdRange::new(n).local(l), args![&xb, &ob, &wb, &vb])
            .map_err(e)?;
        let (mut want, mut wwant, mut vwant) = (vec![0; K * n], vec![0; n], vec![[0.0; 4]; n]);
        for s in sub_groups(n, l, sg) {
            let len = s.len();
            for i in s.clone() {
                let lane = i - s.start;
                let at = |kind, src: u32| xs[s.start + shuffle_from(kind, lane, src, len)];
                want[K * i..K * i + K].copy_from_slice(&[
                    at(Shuffle::Lane, (lane as u32 * 7 + 3) % 37),
                    at(Shuffle::Lane, 0),
                    at(Shuffle::Xor, 1),
                    at(Shuffle::Xor, 6),
                    at(Shuffle::Xor, 31),
                    at(Shuffle::Xor, 32),
                    at(Shuffle::Up, 1),
                    at(Shuffle::Up, 5),
                    at(Shuffle::Up, u32::MAX),
                    at(Shuffle::Down, 1),
                    at(Shuffle::Down, 7),
                    at(Shuffle::Down, u32::MAX),
                    at(Shuffle::Down, lane as u32),
                    at(Shuffle::Xor, 2) as u8 as i32,
                    (at(Shuffle::Lane, lane as u32 + 1) > 0) as i32,
                ]);
                wwant[i] = at(Shuffle::Up, 2) as i64 * 1_000_003;
                let f = (at(Shuffle::Xor, 3) % 4096) as f32;
                vwant[i] = [f, f + 0.5, -f, 1.0];
            }
        }
        let what = format!("{n} items in groups of {l}, sub-group size {sg}");
        expect_eq_k(
            &format!("sub-group shuffles, {what}"),
            &[
                "shuffle(lane * 7 + 3) % 37)",
                "shuffle(0)",
                "shuffle_xor(1)",
                "shuffle_xor(6)",
                "shuffle_xor(31)",
                "shuffle_xor(32)",
                "shuffle_up(1)",
                "shuffle_up(5)",
                "shuffle_up(u32::MAX)",
                "shuffle_down(1)",
                "shuffle_down(7)",
                "shuffle_down(u32::MAX)",
                "shuffle_down(lane)",
                "shuffle_xor(u8, 2)",
                "shuffle(bool, lane + 1)",
            ],
            &q.read(&ob).map_err(e)?,
            &want,
        )?;
        expect_eq_k(
            &format!("i64 shuffle_up(2), {what}"),
            &["shuffle_up(2)"],
            &q.read(&wb).map_err(e)?,
            &wwant,
        )?;
        expect_eq_k(
            &format!("[f32; 3] shuffle_xor(3), {what}"),
            &["shuffle_xor(3)"],
            &q.read(&vb).map_err(e)?,
            &vwant,
        )?;
    }
    Ok(())
}

fn vote(q: &Queue) -> Result<(), String> {
    let sg = sg(q);
    const K: usize = 6;
    let k = Kernel::build("subgroup_vote", |k| {
        let x = k.read::<i32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let v = x.at(i);
        let lane = sub_group_local_id();
        let vals = [
            sub_group_broadcast(v, 3u32).cast::<u32>(),
            sub_group_broadcast(v, lane * 5u32 % sub_group_size()).cast::<u32>(),
            sub_group_ballot((v % 3i32).eq(0i32)),
            sub_group_ballot(lit(true)),
            select::<u32>(sub_group_any((v % 31i32).eq(0i32)), 1u32, 0u32),
            select::<u32>(sub_group_all((v % 16i32).ne(0i32)), 1u32, 0u32),
        ];
        for (j, r) in vals.into_iter().enumerate() {
            out.set(i * K as u32 + j as u32, r);
        }
    })
    .map_err(e)?;
    let mut r = Rng::new(1404);
    let (mut anys, mut alls) = ([0; 2], [0; 2]);
    for (n, l) in [(320usize, 40usize), (64, 64), (100, 100)] {
        let xs: Vec<i32> = (0..n).map(|_| r.int(-5000, 5000) as i32).collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let ob = Buffer::<u32>::new(q.device(), K * n).map_err(e)?;
        k.launch(q, NdRange::new(n).local(l), args![&xb, &ob])
            .map_err(e)?;
        let mut want = vec![0; K * n];
        for s in sub_groups(n, l, sg) {
            let v = &xs[s.clone()];
            let ballot = |p: &dyn Fn(i32) -> bool| {
                v.iter()
                    .enumerate()
                    .filter(|(_, &x)| p(x))
                    .fold(0u32, |m, (k, _)| m | 1 << k)
            };
            let any = v.iter().any(|x| x % 31 == 0);
            let all = v.iter().all(|x| x % 16 != 0);
            anys[any as usize] += 1;
            alls[all as usize] += 1;
            for (lane, i) in s.clone().enumerate() {
                want[K * i..K * i + K].copy_from_slice(&[
                    v[3] as u32,
                    v[lane * 5 % v.len()] as u32,
                    ballot(&|x| x % 3 == 0),
                    ballot(&|_| true),
                    any as u32,
                    all as u32,
                ]);
            }
        }
        expect_eq_k(
            &format!("sub-group broadcast, ballot, any, all: {n} items in groups of {l}, sub-group size {sg}"),
            &[
                "broadcast(3)",
                "broadcast(lane * 5 % size)",
                "ballot(x % 3 == 0)",
                "ballot(true)",
                "any(x % 31 == 0)",
                "all(x % 16 != 0)",
            ],
            &q.read(&ob).map_err(e)?,
            &want,
        )?;
    }
    // The inputs make both answers occur, so that a constant result cannot pass.
    check(anys.iter().chain(&alls).all(|&c| c > 0), || {
        format!("the inputs gave any = [false, true] {anys:?} times, all {alls:?} times")
    })
}

fn group_exclusive_min_max(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("group_scan_exclusive_min_max", |k| {
        let x = k.read::<i32>("x");
        let out = k.write::<i32>("out");
        let fout = k.write::<f32>("fout");
        let i = global_id(0);
        // The launch is rounded up: out-of-range work-items take part with neutral values.
        let inr = i.lt(x.len());
        let v = x.at(i.min(x.len() - 1u32));
        let f = v.cast::<f32>();
        let mn = group_scan_exclusive_min(select::<i32>(inr, v, i32::MAX));
        let mx = group_scan_exclusive_max(select::<i32>(inr, v, i32::MIN));
        let fmn = group_scan_exclusive_min(f);
        let fmx = group_scan_exclusive_max(f);
        if_(inr, || {
            out.set(i * 2u32, mn);
            out.set(i * 2u32 + 1u32, mx);
            fout.set(i * 2u32, fmn);
            fout.set(i * 2u32 + 1u32, fmx);
        });
    })
    .map_err(e)?;
    let mut r = Rng::new(1405);
    for (n, l) in [(1000usize, 64usize), (250, 250), (37, 1)] {
        let xs: Vec<i32> = (0..n).map(|_| r.next_u64() as i32 >> 8).collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let ob = Buffer::<i32>::new(q.device(), 2 * n).map_err(e)?;
        let fb = Buffer::<f32>::new(q.device(), 2 * n).map_err(e)?;
        k.launch(q, NdRange::covering(n, l), args![&xb, &ob, &fb])
            .map_err(e)?;
        let (mut want, mut fwant) = (Vec::new(), Vec::new());
        for g in xs.chunks(l) {
            let (mut mn, mut mx) = (i32::MAX, i32::MIN);
            let (mut fmn, mut fmx) = (f32::INFINITY, f32::NEG_INFINITY);
            for &v in g {
                want.extend([mn, mx]);
                fwant.extend([fmn, fmx]);
                (mn, mx) = (mn.min(v), mx.max(v));
                (fmn, fmx) = (fmn.min(v as f32), fmx.max(v as f32));
            }
        }
        let what = format!("{n} items in groups of {l}");
        expect_eq_k(
            &format!("i32 exclusive min/max scans, {what}"),
            &["exclusive_min", "exclusive_max"],
            &q.read(&ob).map_err(e)?,
            &want,
        )?;
        expect_eq_k(
            &format!("f32 exclusive min/max scans, {what}"),
            &["exclusive_min", "exclusive_max"],
            &q.read(&fb).map_err(e)?,
            &fwant,
        )?;
    }
    Ok(())
}

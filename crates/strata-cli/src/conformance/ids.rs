//! Work-item ids and sizes in 1, 2 and 3 dimensions, launches whose size is not a multiple of
//! the work-group (covering + guard), automatic work division, empty launches and empty
//! buffers.

use super::{case, check, e, expect_eq, expect_eq_k, Case};
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("ids/1d", ids_1d),
        case("ids/2d", ids_2d),
        case("ids/3d", ids_3d),
        case("ids/2d_guarded", guarded_2d),
        case("ids/3d_guarded", guarded_3d),
        case("ids/covering_2d", covering_2d),
        case("ids/covering_3d", covering_3d),
        case("ids/auto_local_size", auto_local),
        case("ids/unused_dimensions", unused_dims),
        case("ids/empty_launch", empty_launch),
        case("ids/empty_buffer", empty_buffer),
    ]
}

const FIELDS: [&str; 20] = [
    "global_id(0)",
    "global_id(1)",
    "global_id(2)",
    "local_id(0)",
    "local_id(1)",
    "local_id(2)",
    "group_id(0)",
    "group_id(1)",
    "group_id(2)",
    "global_size(0)",
    "global_size(1)",
    "global_size(2)",
    "local_size(0)",
    "local_size(1)",
    "local_size(2)",
    "num_groups(0)",
    "num_groups(1)",
    "num_groups(2)",
    "local_linear_id",
    "group_linear_id",
];

/// Launches `range` (global size `g`, local size `l`) and checks every id and size of every
/// work-item.
fn all_ids(
    q: &Queue,
    name: &str,
    range: NdRange,
    g: [usize; 3],
    l: [usize; 3],
) -> Result<(), String> {
    let k = Kernel::build("all_ids", |k| {
        let out = k.write::<u32>("out");
        let lin = (global_id(2) * global_size(1) + global_id(1)) * global_size(0) + global_id(0);
        let vals = [
            global_id(0),
            global_id(1),
            global_id(2),
            local_id(0),
            local_id(1),
            local_id(2),
            group_id(0),
            group_id(1),
            group_id(2),
            global_size(0),
            global_size(1),
            global_size(2),
            local_size(0),
            local_size(1),
            local_size(2),
            num_groups(0),
            num_groups(1),
            num_groups(2),
            local_linear_id(),
            group_linear_id(),
        ];
        for (f, v) in vals.into_iter().enumerate() {
            out.set(lin * 20u32 + f as u32, v);
        }
    })
    .map_err(e)?;
    let total = g[0] * g[1] * g[2];
    let out = Buffer::<u32>::new(q.device(), total * 20).map_err(e)?;
    q.fill(&out, u32::MAX, 0..total * 20).map_err(e)?;
    k.launch(q, range, args![&out]).map_err(e)?;
    let ng = [0, 1, 2].map(|d| g[d] / l[d]);
    let mut want = Vec::with_capacity(total * 20);
    for z in 0..g[2] {
        for y in 0..g[1] {
            for x in 0..g[0] {
                let id = [x, y, z];
                let lid: Vec<usize> = (0..3).map(|d| id[d] % l[d]).collect();
                let grp: Vec<usize> = (0..3).map(|d| id[d] / l[d]).collect();
                let v = [
                    x,
                    y,
                    z,
                    lid[0],
                    lid[1],
                    lid[2],
                    grp[0],
                    grp[1],
                    grp[2],
                    g[0],
                    g[1],
                    g[2],
                    l[0],
                    l[1],
                    l[2],
                    ng[0],
                    ng[1],
                    ng[2],
                    lid[0] + lid[1] * l[0] + lid[2] * l[0] * l[1],
                    grp[0] + grp[1] * ng[0] + grp[2] * ng[0] * ng[1],
                ];
                want.extend(v.map(|v| v as u32));
            }
        }
    }
    expect_eq_k(name, &FIELDS, &q.read(&out).map_err(e)?, &want)
}

fn ids_1d(q: &Queue) -> Result<(), String> {
    all_ids(
        q,
        "1-D 1000 in groups of 40",
        NdRange::new(1000).local(40),
        [1000, 1, 1],
        [40, 1, 1],
    )?;
    all_ids(
        q,
        "1-D covering(1000, 64)",
        NdRange::covering(1000, 64),
        [1024, 1, 1],
        [64, 1, 1],
    )
}

fn ids_2d(q: &Queue) -> Result<(), String> {
    all_ids(
        q,
        "2-D [36, 20] / [12, 4]",
        NdRange::new([36, 20]).local([12, 4]),
        [36, 20, 1],
        [12, 4, 1],
    )?;
    all_ids(
        q,
        "2-D [7, 33] / [1, 11]",
        NdRange::new([7, 33]).local([1, 11]),
        [7, 33, 1],
        [1, 11, 1],
    )
}

fn ids_3d(q: &Queue) -> Result<(), String> {
    all_ids(
        q,
        "3-D [12, 10, 6] / [4, 5, 3]",
        NdRange::new([12, 10, 6]).local([4, 5, 3]),
        [12, 10, 6],
        [4, 5, 3],
    )?;
    all_ids(
        q,
        "3-D [5, 3, 8] / [5, 1, 2]",
        NdRange::new([5, 3, 8]).local([5, 1, 2]),
        [5, 3, 8],
        [5, 1, 2],
    )
}

/// A kernel over an `n[0] x n[1] x n[2]` grid, launched rounded up to `local` and guarded:
/// every cell is written exactly once with its coordinates.
fn guarded(q: &Queue, n: [usize; 3], local: [usize; 3], dims: u8) -> Result<(), String> {
    let k = Kernel::build("guarded", |k| {
        let nx = k.scalar::<u32>("nx");
        let ny = k.scalar::<u32>("ny");
        let nz = k.scalar::<u32>("nz");
        let out = k.read_write::<u32>("out");
        let (x, y, z) = (global_id(0), global_id(1), global_id(2));
        if_(x.lt(nx).and(y.lt(ny)).and(z.lt(nz)), || {
            let i = (z * ny + y) * nx + x;
            out.atomic_add(i, (x << 20u32) | (y << 10u32) | z);
        });
    })
    .map_err(e)?;
    let round = |d: usize| n[d].div_ceil(local[d]) * local[d];
    let range = match dims {
        2 => NdRange::new([round(0), round(1)]).local([local[0], local[1]]),
        _ => NdRange::new([round(0), round(1), round(2)]).local(local),
    };
    let total = n[0] * n[1] * n[2];
    let out = Buffer::<u32>::new(q.device(), total).map_err(e)?;
    k.launch(q, range, args![n[0] as u32, n[1] as u32, n[2] as u32, &out])
        .map_err(e)?;
    let mut want = Vec::with_capacity(total);
    for z in 0..n[2] {
        for y in 0..n[1] {
            for x in 0..n[0] {
                want.push(((x << 20) | (y << 10) | z) as u32);
            }
        }
    }
    expect_eq(
        &format!("grid {n:?} in groups of {local:?}"),
        &q.read(&out).map_err(e)?,
        &want,
    )
}

fn guarded_2d(q: &Queue) -> Result<(), String> {
    guarded(q, [50, 23, 1], [16, 8, 1], 2)?;
    guarded(q, [129, 3, 1], [32, 2, 1], 2)
}

fn guarded_3d(q: &Queue) -> Result<(), String> {
    guarded(q, [13, 7, 5], [4, 4, 2], 3)?;
    guarded(q, [3, 17, 9], [2, 8, 4], 3)
}

/// `NdRange::covering` in 2-D: the global size rounded up per dimension, and the guard
/// `in_bounds(global_id2(), ...)` lets every cell of a 100 x 37 grid be visited exactly once.
fn covering_2d(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("covering_2d", |k| {
        let w = k.scalar::<u32>("w");
        let h = k.scalar::<u32>("h");
        let out = k.read_write::<u32>("out");
        let p = global_id2();
        if_(in_bounds(p, vec2::<u32>(w, h)), || {
            out.atomic_add(p.y() * w + p.x(), (p.x() << 16u32) + p.y() + 1u32);
        });
    })
    .map_err(e)?;
    let (w, h) = (100usize, 37usize);
    let range = NdRange::covering([w, h], [16, 8]);
    check(range.global_size() == [112, 40, 1], || {
        format!(
            "covering([100, 37], [16, 8]) has global size {:?}",
            range.global_size()
        )
    })?;
    let ob = Buffer::<u32>::new(q.device(), w * h).map_err(e)?;
    q.fill(&ob, 0, 0..w * h).map_err(e)?;
    k.launch(q, range, args![w as u32, h as u32, &ob])
        .map_err(e)?;
    let want: Vec<u32> = (0..w * h)
        .map(|i| (((i % w) << 16) + i / w + 1) as u32)
        .collect();
    expect_eq(
        "2-D covering, each cell once",
        &q.read(&ob).map_err(e)?,
        &want,
    )
}

/// The same in 3-D, with `global_id3()`.
fn covering_3d(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("covering_3d", |k| {
        let n = k.scalar::<u32>("n");
        let out = k.read_write::<u32>("out");
        let p = global_id3();
        let (w, h) = (10u32, 7u32);
        if_(in_bounds(p, vec3::<u32>(lit(w), lit(h), n)), || {
            let i = (p.z() * h + p.y()) * w + p.x();
            out.atomic_add(i, i + 1u32);
        });
    })
    .map_err(e)?;
    let (w, h, d) = (10usize, 7usize, 5usize);
    let range = NdRange::covering([w, h, d], [4, 4, 2]);
    check(range.global_size() == [12, 8, 6], || {
        format!(
            "covering([10, 7, 5], [4, 4, 2]) has global size {:?}",
            range.global_size()
        )
    })?;
    let ob = Buffer::<u32>::new(q.device(), w * h * d).map_err(e)?;
    q.fill(&ob, 0, 0..w * h * d).map_err(e)?;
    k.launch(q, range, args![d as u32, &ob]).map_err(e)?;
    let want: Vec<u32> = (1..=(w * h * d) as u32).collect();
    expect_eq(
        "3-D covering, each cell once",
        &q.read(&ob).map_err(e)?,
        &want,
    )
}

fn auto_local(q: &Queue) -> Result<(), String> {
    // Each work-item records its global id and checks the size relations itself.
    let k = Kernel::build("auto_local", |k| {
        let out = k.read_write::<u32>("out");
        let i = global_id(1) * global_size(0) + global_id(0);
        let consistent = (local_size(0) * num_groups(0))
            .eq(global_size(0))
            .and((local_size(1) * num_groups(1)).eq(global_size(1)))
            .and((group_id(0) * local_size(0) + local_id(0)).eq(global_id(0)))
            .and((group_id(1) * local_size(1) + local_id(1)).eq(global_id(1)))
            .and(local_id(0).lt(local_size(0)));
        out.atomic_add(i, select(consistent, 1u32, 1000u32));
    })
    .map_err(e)?;
    for g in [
        [1000usize, 1],
        [997, 1],
        [1, 1],
        [4096, 1],
        [30, 7],
        [2, 50],
    ] {
        let n = g[0] * g[1];
        let range = if g[1] == 1 {
            NdRange::new(g[0])
        } else {
            NdRange::new(g)
        };
        let out = Buffer::<u32>::new(q.device(), n).map_err(e)?;
        k.launch(q, range, args![&out]).map_err(e)?;
        expect_eq(
            &format!("automatic work division of {g:?}: 1 per work-item"),
            &q.read(&out).map_err(e)?,
            &vec![1u32; n],
        )?;
    }
    Ok(())
}

fn unused_dims(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("unused_dims", |k| {
        let out = k.write::<u32>("out");
        let i = global_id(0);
        if_(i.lt(out.len() / 9u32), || {
            let vals = [
                global_id(1),
                global_id(2),
                local_id(1),
                local_id(2),
                group_id(1),
                group_id(2),
                global_size(1),
                local_size(2),
                num_groups(1) + num_groups(2),
            ];
            for (f, v) in vals.into_iter().enumerate() {
                out.set(i * 9u32 + f as u32, v);
            }
        });
    })
    .map_err(e)?;
    let n = 100;
    let out = Buffer::<u32>::new(q.device(), n * 9).map_err(e)?;
    k.launch(q, NdRange::covering(n, 32), args![&out])
        .map_err(e)?;
    let want: Vec<u32> = (0..n).flat_map(|_| [0, 0, 0, 0, 0, 0, 1, 1, 2]).collect();
    expect_eq_k(
        "dimensions beyond the launch",
        &[
            "gid1", "gid2", "lid1", "lid2", "grp1", "grp2", "gsz1", "lsz2", "ng1+ng2",
        ],
        &q.read(&out).map_err(e)?,
        &want,
    )
}

fn empty_launch(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("empty_launch", |k| {
        let out = k.write::<u32>("out");
        // One writer: every work-item writing element 0 would be a data race.
        if_(global_id(0).eq(0u32), || out.set(0u32, 1u32));
        k.gather_add(lit(1u32));
        k.gather_min(global_id(0));
    })
    .map_err(e)?;
    let out = Buffer::<u32>::from_slice(q, &[7]).map_err(e)?;
    for range in [
        NdRange::new(0),
        NdRange::covering(0, 64),
        NdRange::new([0, 5]),
        NdRange::new([4, 0, 3]).local([2, 1, 3]),
        NdRange::new([4, 2, 0]),
    ] {
        let run = k.launch(q, range, args![&out]).map_err(e)?;
        check(run.event().is_complete(), || {
            "event of an empty launch not complete".into()
        })?;
        let sum = run.gather::<u32>(0).map_err(e)?.get().map_err(e)?;
        let min = run.gather::<u32>(1).map_err(e)?.get().map_err(e)?;
        check(sum == 0 && min == u32::MAX, || {
            format!("gathers of the empty launch {range:?}: sum {sum}, min {min}; expected 0 and u32::MAX")
        })?;
        expect_eq(
            &format!("buffer after empty launch {range:?}"),
            &q.read(&out).map_err(e)?,
            &[7],
        )?;
    }
    let run = k.launch(q, NdRange::new(5), args![&out]).map_err(e)?;
    let sum = run.gather::<u32>(0).map_err(e)?.get().map_err(e)?;
    check(sum == 5, || {
        format!("control launch: gather_add gave {sum}, expected 5")
    })?;
    expect_eq(
        "buffer after a non-empty launch",
        &q.read(&out).map_err(e)?,
        &[1],
    )
}

fn empty_buffer(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("empty_buffer", |k| {
        let x = k.read::<f32>("x");
        let y = k.write::<f32>("y");
        let lens = k.write::<u32>("lens");
        let i = global_id(0);
        if_(i.lt(x.len()), || y.set(i, x.at(i) * 2.0f32));
        if_(i.lt(lens.len()), || {
            lens.set(i, x.len() + y.len() * 10u32 + 1u32)
        });
    })
    .map_err(e)?;
    let x = Buffer::<f32>::new(q.device(), 0).map_err(e)?;
    let y = Buffer::<f32>::from_slice(q, &[]).map_err(e)?;
    check(x.is_empty() && y.is_empty(), || {
        "empty buffers report a length".into()
    })?;
    let lens = Buffer::<u32>::new(q.device(), 70).map_err(e)?;
    k.launch(q, NdRange::covering(70, 32), args![&x, &y, &lens])
        .map_err(e)?;
    expect_eq(
        "lengths seen by the kernel",
        &q.read(&lens).map_err(e)?,
        &vec![1u32; 70],
    )?;
    k.launch(q, NdRange::covering(0, 32), args![&x, &y, &lens])
        .map_err(e)?;
    check(q.read(&x).map_err(e)?.is_empty(), || {
        "reading an empty buffer".into()
    })?;
    q.write(&y, 0.., &[]).map_err(e)?;
    q.fill(&x, 1.0, 0..0).map_err(e)?;
    q.copy(&x, 0..0, &y, 0..).map_err(e)?;
    q.finish().map_err(e)
}

//! The compiled CPU backend (`cpu`) against the interpreter (`interp`), on what its two code
//! paths do differently: the 4-lane SIMD variant (work-groups whose first dimension is a
//! multiple of 4) and the one-work-item-at-a-time code (other work-groups, and kernels with
//! barriers). Results must be the interpreter's bit for bit, and faults must name the same
//! work-item, whichever path runs.

use strata::prelude::*;
use strata::Error;

/// The two devices, with the settings of the environment (`STRATA_CPU_DISASM=1` prints what
/// the compiled backend makes of each kernel, its 4-lane regions marked).
fn queues() -> (Queue, Queue) {
    let q = |s: &str| {
        let d = Device::from_spec(s).unwrap();
        d.set_settings(strata::Settings::from_env());
        Queue::new(&d).unwrap()
    };
    (q("cpu"), q("interp"))
}

/// Divergent control flow of every kind, integer division (hoisted out of a loop),
/// per-lane shifts, casts, selects, a load at one index for all lanes and gathers.
fn divergent() -> Kernel {
    Kernel::build("divergent", |k| {
        let x = k.read::<u32>("x");
        let f = k.read::<f32>("f");
        let out = k.write::<u32>("out");
        let fo = k.write::<f32>("fo");
        let d = k.scalar::<u32>("d");
        let i = global_id(0);
        if_(i.lt(out.len()), || {
            let acc = var_named("acc", 0u32);
            let s = var_named("s", 0.0f32);
            let v = x.at(i);
            for_range(0u32, v % 7u32, |j| {
                if_((j & 1u32).eq(1u32), || continue_());
                acc.set(acc.get() + (v / d) + (j << (v % 5u32)));
                if_(acc.get().gt(40u32), || break_());
            });
            let it = var_named("it", 0u32);
            while_(
                || it.get().lt(v % 11u32),
                || {
                    s.set(s.get() + f.at(it.get()) * f.at(i % 16u32));
                    it.set(it.get() + 1u32);
                },
            );
            if_(v.eq(13u32), || {
                out.set(i, 999u32);
                return_();
            });
            let pick: Expr<u32> = select(
                v.gt(50u32),
                acc.get() ^ v,
                acc.get().cast::<f32>().cast::<u32>(),
            );
            out.set(i, pick + it.get());
            fo.set((i * 7u32) % out.len(), s.get() + (v.cast::<f32>()).sqrt());
        });
    })
    .unwrap()
}

#[test]
fn both_code_paths_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = divergent();
    let n = 211u32; // prime: `7 i % n` is a permutation
    let xs: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2654435761) % 97).collect();
    let fs: Vec<f32> = (0..n).map(|i| (i as f32) * 0.37 - 11.0).collect();
    let run = |q: &Queue, local: usize| {
        let x = Buffer::from_slice(q, &xs).unwrap();
        let f = Buffer::from_slice(q, &fs).unwrap();
        let out = Buffer::<u32>::new(q.device(), n as usize).unwrap();
        let fo = Buffer::<f32>::new(q.device(), n as usize).unwrap();
        k.launch(
            q,
            NdRange::covering(n as usize, local),
            args![&x, &f, &out, &fo, 3u32],
        )
        .unwrap();
        let bits: Vec<u32> = q.read(&fo).unwrap().iter().map(|v| v.to_bits()).collect();
        (q.read(&out).unwrap(), bits)
    };
    let want = run(&interp, 8);
    // Local sizes that are multiples of 4 take the SIMD variant, the others the scalar code.
    for local in [4, 8, 64, 1, 3, 7] {
        assert_eq!(run(&cpu, local), want, "local size {local}");
    }
}

/// 64-bit integers and floats in a kernel: an `f64` axpy with `i64` and `u64` arithmetic and
/// conversions between 32- and 64-bit lanes takes the vector variant
/// ([`Kernel::cpu_vector_variant`]) and agrees with the interpreter bit for bit on both paths.
#[test]
fn kernels_with_64_bit_values_take_the_vector_variant() {
    let (cpu, interp) = queues();
    let k = Kernel::build("axpy64", |k| {
        let x = k.read::<f64>("x");
        let y = k.read::<f64>("y");
        let l = k.read::<i64>("l");
        let out = k.write::<f64>("out");
        let lo = k.write::<i64>("lo");
        let uo = k.write::<u64>("uo");
        let a = k.scalar::<f64>("a");
        let i = global_id(0);
        if_(i.lt(out.len()), || {
            let v = l.at(i);
            out.set(i, a * x.at(i) + y.at(i) + v.cast::<f64>() - i.cast::<f64>());
            let w = (v * 3i64 - i.cast::<i64>()) ^ (v >> 7i64);
            lo.set(i, select(v.gt(0i64), w, -w) / 5i64);
            uo.set(
                i,
                v.cast::<u64>() + (x.at(i).cast::<f32>().cast::<u32>().cast::<u64>()),
            );
        });
    })
    .unwrap();
    assert_eq!(k.cpu_vector_variant(), Ok(()));
    let n = 203usize;
    let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.37 - 11.0).collect();
    let ys: Vec<f64> = (0..n).map(|i| (i as f64).sqrt() * 1e10).collect();
    let ls: Vec<i64> = (0..n as i64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64) >> (i % 40))
        .collect();
    let run = |q: &Queue, local: usize| {
        let x = Buffer::from_slice(q, &xs).unwrap();
        let y = Buffer::from_slice(q, &ys).unwrap();
        let l = Buffer::from_slice(q, &ls).unwrap();
        let out = Buffer::<f64>::new(q.device(), n).unwrap();
        let lo = Buffer::<i64>::new(q.device(), n).unwrap();
        let uo = Buffer::<u64>::new(q.device(), n).unwrap();
        k.launch(
            q,
            NdRange::covering(n, local),
            args![&x, &y, &l, &out, &lo, &uo, 2.5f64],
        )
        .unwrap();
        let bits: Vec<u64> = q.read(&out).unwrap().iter().map(|v| v.to_bits()).collect();
        (bits, q.read(&lo).unwrap(), q.read(&uo).unwrap())
    };
    let want = run(&interp, 8);
    for local in [4, 8, 64, 1, 3] {
        assert_eq!(run(&cpu, local), want, "local size {local}");
    }
}

/// A store past the end by the last work-items: the same error and work-item on both
/// backends and both paths.
#[test]
fn out_of_bounds_names_the_same_work_item() {
    let (cpu, interp) = queues();
    let k = Kernel::build("shifted", |k| {
        let x = k.read::<f32>("x");
        let y = k.write::<f32>("y");
        let i = global_id(0);
        y.set(i + 2u32, x.at(i));
    })
    .unwrap();
    let fail = |q: &Queue, local: usize| {
        let x = Buffer::from_slice(q, &[1.0f32; 12]).unwrap();
        let y = Buffer::<f32>::new(q.device(), 12).unwrap();
        k.launch(q, NdRange::new(12).local(local), args![&x, &y])
            .unwrap_err()
    };
    for local in [4, 12, 2, 3] {
        let want = fail(&interp, local);
        assert!(
            matches!(want, Error::OutOfBounds { index: 12, .. }),
            "{want}"
        );
        let got = fail(&cpu, local);
        assert_eq!(got.to_string(), want.to_string(), "local size {local}");
    }
}

/// Division by zero: only by a work-item that divides. Work-items that skip the division
/// (inactive lanes of the SIMD variant), and a loop that never runs its hoisted division,
/// are not faults.
#[test]
fn division_by_zero_only_where_a_work_item_divides() {
    let (cpu, interp) = queues();
    let k = Kernel::build("divide", |k| {
        let x = k.read::<u32>("x");
        let y = k.write::<u32>("y");
        let i = global_id(0);
        let acc = var(0u32);
        for_range(0u32, x.at(i), |_| acc.set(acc.get() + 100u32 / x.at(i)));
        if_(x.at(i).gt(0u32), || acc.set(acc.get() + 7u32 % x.at(i)));
        y.set(i, acc.get());
    })
    .unwrap();
    let go = |q: &Queue, xs: &[u32], local: usize| {
        let x = Buffer::from_slice(q, xs).unwrap();
        let y = Buffer::<u32>::new(q.device(), xs.len()).unwrap();
        k.launch(q, NdRange::new(xs.len()).local(local), args![&x, &y])
            .map(|_| q.read(&y).unwrap())
    };
    let xs = [0u32, 3, 0, 5, 1, 0, 0, 2];
    let want = go(&interp, &xs, 4).unwrap();
    assert_eq!(want[1], 3 * 33 + 1);
    for local in [4, 8, 1, 2] {
        assert_eq!(go(&cpu, &xs, local).unwrap(), want, "local size {local}");
    }
    // A zero divisor where the division runs is the interpreter's error.
    let zk = Kernel::build("divide_by_param", |k| {
        let y = k.write::<u32>("y");
        let d = k.scalar::<u32>("d");
        let i = global_id(0);
        if_(i.ge(5u32), || y.set(i, i / d));
    })
    .unwrap();
    let fail = |q: &Queue, local: usize| {
        let y = Buffer::<u32>::new(q.device(), 8).unwrap();
        zk.launch(q, NdRange::new(8).local(local), args![&y, 0u32])
            .unwrap_err()
            .to_string()
    };
    // Work-items 5, 6 and 7 all divide by zero. With one work-group the first of them is
    // reported; with several, work-groups run in parallel and the one reported is whichever
    // failed first (`cpu::run_groups`), so the message is compared up to the work-item, which
    // must be one that divides.
    let failing = |m: &str| -> (String, u32) {
        let (head, at) = m.split_once(", at work-item global (").expect(m);
        let x = at.split(',').next().and_then(|x| x.parse().ok()).expect(m);
        (head.to_string(), x)
    };
    for local in [8, 4, 1] {
        let want = fail(&interp, local);
        assert!(want.contains("integer division by zero"), "{want}");
        let got = fail(&cpu, local);
        let ((wh, wx), (gh, gx)) = (failing(&want), failing(&got));
        assert_eq!(gh, wh, "local size {local}");
        assert!(wx >= 5 && gx >= 5, "local size {local}: {want} / {got}");
        if local == 8 {
            assert_eq!(
                (wx, gx),
                (5, 5),
                "one work-group: the first failing work-item"
            );
        }
    }
}

/// Nested loops whose inner loop leaves or continues the outer one, a `return` deep inside,
/// and a `loop` left by `break`: the masks of the SIMD variant against the interpreter.
#[test]
fn nested_loops_leave_each_other_as_on_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("nested", |k| {
        let x = k.read::<i32>("x");
        let out = k.write::<i32>("out");
        let i = global_id(0);
        let acc = var_named("acc", 0i32);
        let v = x.at(i);
        for_range(0i32, 6i32, |a| {
            let outer = current_loop();
            let b = var_named("b", 0i32);
            loop_(|| {
                b.set(b.get() + 1i32);
                if_(v.eq(-7i32 * a), || {
                    out.set(i, -1i32);
                    return_();
                });
                if_(b.get().gt(v % 5i32 + a), || break_());
                if_((v + b.get() * a).eq(17i32), || outer.continue_());
                if_((v * a + b.get()).gt(90i32), || outer.break_());
                acc.set(acc.get() * 3i32 + b.get() - a);
            });
            acc.set(acc.get() ^ (a << 3i32));
        });
        out.set(i, acc.get());
    })
    .unwrap();
    let xs: Vec<i32> = (0..96).map(|i| (i * 37 % 61) - 20).collect();
    let run = |q: &Queue, local: usize| {
        let x = Buffer::from_slice(q, &xs).unwrap();
        let out = Buffer::<i32>::new(q.device(), xs.len()).unwrap();
        k.launch(q, NdRange::new(xs.len()).local(local), args![&x, &out])
            .unwrap();
        q.read(&out).unwrap()
    };
    let want = run(&interp, 8);
    assert!(want.contains(&-1), "some work-item returns early");
    for local in [8, 4, 32, 3] {
        assert_eq!(run(&cpu, local), want, "local size {local}");
    }
}

/// Indices the four lanes of the vector variant share (one scalar load there): the ids in
/// dimensions 1 and 2, `for` counters and `let`s of them, under four active lanes and under
/// partial masks (a divergent `if`, lanes that left a loop), in a one-region kernel and in a
/// tiled product between barriers with a launch-sized local array; 2-D and 3-D launches,
/// against the interpreter bit for bit, and a shared index out of bounds for some work-items
/// only: the same error, naming the same work-item.
#[test]
fn shared_indices_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let rows = Kernel::build("rows", |k| {
        let a = k.read::<f32>("a");
        let out = k.write::<f32>("out");
        let n = k.scalar::<u32>("n");
        let lim = k.scalar::<u32>("lim");
        let (x, y, z) = (global_id(0), global_id(1), global_id(2));
        let w = global_size(0);
        let row = y * n + z;
        let acc = var_named("acc", 0.0f32);
        // Four active lanes: the counter, the row, the local row.
        for_range(0u32, n, |j| {
            acc.set(acc.get() * 0.5f32 + a.at(row + j) + a.at(local_id(1) * 3u32 + j));
        });
        // Four lanes entering a loop that some leave early (then the others go on alone).
        for_range(0u32, n, |j| {
            acc.set(acc.get() + a.at(j + local_id(2)));
            if_(j.ge(x % 4u32), || break_());
            acc.set(acc.get() * 0.75f32);
        });
        // A partial mask: odd work-items only, and lanes leaving the loop early.
        if_((x & 1u32).eq(1u32), || {
            for_range(0u32, n, |j| {
                if_(j.gt(x % 5u32), || break_());
                acc.set(acc.get() + a.at(row * 2u32 + j) * a.at(j + group_id(0)));
            });
        });
        // A shared index past the end for the work-items of rows `y >= lim` (under a mask).
        if_((x % 3u32).eq(1u32), || {
            acc.set(acc.get() + a.at(y * 64u32 + lim));
        });
        out.set((z * global_size(1) + y) * w + x, acc.get());
    })
    .unwrap();
    let na = 200usize;
    let av: Vec<f32> = (0..na).map(|i| (i as f32) * 0.25 - 7.0).collect();
    let run = |q: &Queue, global: [usize; 3], local: [usize; 3], lim: u32| {
        let a = Buffer::from_slice(q, &av).unwrap();
        let out = Buffer::<f32>::new(q.device(), global.iter().product()).unwrap();
        rows.launch(
            q,
            NdRange::new(global).local(local),
            args![&a, &out, 5u32, lim],
        )
        .map_err(|e| e.to_string())?;
        let bits: Vec<u32> = q.read(&out).unwrap().iter().map(|v| v.to_bits()).collect();
        Ok::<_, String>(bits)
    };
    for (global, local) in [
        ([16, 4, 2], [8, 2, 1]),
        ([12, 3, 1], [4, 3, 1]),
        ([8, 6, 2], [4, 1, 2]),
        ([9, 4, 1], [3, 2, 1]),
    ] {
        for lim in [0u32, 2, 150] {
            let want = run(&interp, global, local, lim);
            let got = run(&cpu, global, local, lim);
            assert_eq!(got, want, "global {global:?}, local {local:?}, lim {lim}");
        }
    }
    // A tiled product: local arrays of launch size, the shared row of one tile, the
    // consecutive column of the other, the accumulator a private variable.
    let tiled = Kernel::build("tiled_dyn", |k| {
        let a = k.read::<f32>("a");
        let b = k.read::<f32>("b");
        let c = k.write::<f32>("c");
        let n = k.scalar::<u32>("n");
        let at = k.local_array_dyn::<f32>("at");
        let bt = k.local_array_dyn::<f32>("bt");
        let (tx, ty) = (local_id(0), local_id(1));
        let ts = local_size(0);
        let col = global_id(0);
        let row = global_id(1);
        let acc = var_named("acc", 0.0f32);
        for_range(0u32, n / ts, |t| {
            at.set(ty * ts + tx, a.at(row * n + t * ts + tx));
            bt.set(ty * ts + tx, b.at((t * ts + ty) * n + col));
            barrier_local();
            for_range(0u32, ts, |p| {
                acc.set(acc.get() + at.at(ty * ts + p) * bt.at(p * ts + tx));
            });
            barrier_local();
        });
        c.set(row * n + col, acc.get());
    })
    .unwrap();
    let n = 16usize;
    let am: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let bm: Vec<f32> = (0..n * n).map(|i| ((i * 5) % 11) as f32 * 0.5).collect();
    let run = |q: &Queue, ts: usize, tile: usize| {
        let a = Buffer::from_slice(q, &am).unwrap();
        let b = Buffer::from_slice(q, &bm).unwrap();
        let c = Buffer::<f32>::new(q.device(), n * n).unwrap();
        tiled
            .launch(
                q,
                NdRange::new([n, n]).local([ts, ts]),
                args![
                    &a,
                    &b,
                    &c,
                    n as u32,
                    LocalMem::<f32>::new(tile),
                    LocalMem::<f32>::new(tile)
                ],
            )
            .map_err(|e| e.to_string())?;
        let bits: Vec<u32> = q.read(&c).unwrap().iter().map(|v| v.to_bits()).collect();
        Ok::<_, String>(bits)
    };
    // The bench's shape: fixed 8x8 tiles, the inner product unrolled, `bt[p * 8 + tx]` in
    // bounds when `local_size(0) <= 8` (tested once per launch); 16-wide groups fault.
    let fixed = Kernel::build("tiled_fixed", |k| {
        let a = k.read::<f32>("a");
        let b = k.read::<f32>("b");
        let c = k.write::<f32>("c");
        let n = k.scalar::<u32>("n");
        let at = k.local_array::<f32>("at", 64);
        let bt = k.local_array::<f32>("bt", 64);
        let (tx, ty) = (local_id(0), local_id(1));
        let (col, row) = (global_id(0), global_id(1));
        let acc = var_named("acc", 0.0f32);
        for_range(0u32, n / 8u32, |t| {
            at.set(ty * 8u32 + tx, a.at(row * n + t * 8u32 + tx));
            bt.set(ty * 8u32 + tx, b.at((t * 8u32 + ty) * n + col));
            barrier_local();
            for p in 0..8u32 {
                acc.set(acc.get() + at.at(ty * 8u32 + p) * bt.at(p * 8u32 + tx));
            }
            barrier_local();
        });
        c.set(row * n + col, acc.get());
    })
    .unwrap();
    let run_fixed = |q: &Queue, local: [usize; 2]| {
        let a = Buffer::from_slice(q, &am).unwrap();
        let b = Buffer::from_slice(q, &bm).unwrap();
        let c = Buffer::<f32>::new(q.device(), n * n).unwrap();
        fixed
            .launch(
                q,
                NdRange::new([n, n]).local(local),
                args![&a, &b, &c, n as u32],
            )
            .map_err(|e| e.to_string())?;
        let bits: Vec<u32> = q.read(&c).unwrap().iter().map(|v| v.to_bits()).collect();
        Ok::<_, String>(bits)
    };
    for local in [[8, 8], [16, 4], [16, 8]] {
        let want = run_fixed(&interp, local);
        assert_eq!(want.is_ok(), local == [8, 8], "{want:?}");
        assert_eq!(run_fixed(&cpu, local), want, "tiled_fixed, local {local:?}");
    }
    // Tiles of 4x4 and 8x8 (the vector variant), 2x2 (the scalar code); local arrays one
    // element short: the same fault.
    for ts in [4, 8, 2] {
        for tile in [ts * ts, ts * ts - 1] {
            let want = run(&interp, ts, tile);
            assert_eq!(want.is_ok(), tile == ts * ts, "{want:?}");
            assert_eq!(
                run(&cpu, ts, tile),
                want,
                "tile {ts}, local arrays of {tile}"
            );
        }
    }
}

/// The showcase's tiled matmul (16 x 16 tiles of fixed size, the inner product unrolled):
/// `a_tile[ty * 16 + p]` is in bounds when `16 * local_size(1) <= 256`, `b_tile[p * 16 + tx]`
/// when `local_size(0) + 240 <= 256` (tested once per work-group, so that the 32 loads of the
/// inner product are plain vector loads). Full and partial tiles (`n` not a multiple of 16),
/// groups of other shapes, and groups too large for the tiles (the interpreter's fault, same
/// work-item and line); a skewed row of `a_tile` faults in the inner product itself.
#[test]
fn tiled_matmul_with_fixed_tiles_agrees_with_the_interpreter() {
    const TILE: u32 = 16;
    let (cpu, interp) = queues();
    let k = Kernel::build("matmul_tiled", |k| {
        let a = k.read::<f32>("a");
        let b = k.read::<f32>("b");
        let c = k.write::<f32>("c");
        let n = k.scalar::<u32>("n");
        let skew = k.scalar::<u32>("skew");
        let a_tile = k.local_array::<f32>("a_tile", TILE * TILE);
        let b_tile = k.local_array::<f32>("b_tile", TILE * TILE);
        let (tx, ty) = (local_id(0), local_id(1));
        let col = group_id(0) * TILE + tx;
        let row = group_id(1) * TILE + ty;
        let acc = var_named("acc", 0.0f32);
        for_range(0u32, (n + (TILE - 1)) / TILE, |t| {
            let (a_col, b_row) = (t * TILE + tx, t * TILE + ty);
            if_(row.lt(n).and(a_col.lt(n)), || {
                a_tile.set(ty * TILE + tx, a.at(row * n + a_col))
            })
            .else_(|| a_tile.set(ty * TILE + tx, 0.0f32));
            if_(b_row.lt(n).and(col.lt(n)), || {
                b_tile.set(ty * TILE + tx, b.at(b_row * n + col))
            })
            .else_(|| b_tile.set(ty * TILE + tx, 0.0f32));
            barrier_local();
            for p in 0..TILE {
                acc.set(acc.get() + a_tile.at(ty * TILE + p + skew) * b_tile.at(p * TILE + tx));
            }
            barrier_local();
        });
        if_(row.lt(n).and(col.lt(n)), || c.set(row * n + col, acc.get()));
    })
    .unwrap();
    let run = |q: &Queue, n: usize, local: [usize; 2], skew: u32| {
        let am: Vec<f32> = (0..n * n)
            .map(|i| ((i * 37) % 17) as f32 / 8.0 - 1.0)
            .collect();
        let bm: Vec<f32> = (0..n * n)
            .map(|i| ((i * 11) % 13) as f32 / 6.0 - 1.0)
            .collect();
        let a = Buffer::from_slice(q, &am).unwrap();
        let b = Buffer::from_slice(q, &bm).unwrap();
        let c = Buffer::<f32>::new(q.device(), n * n).unwrap();
        // Whole groups covering `n` rounded up to the tile's edge.
        let t = n.div_ceil(TILE as usize) * TILE as usize;
        let global = local.map(|l| t.div_ceil(l) * l);
        k.launch(
            q,
            NdRange::new(global).local(local),
            args![&a, &b, &c, n as u32, skew],
        )
        .map_err(|e| e.to_string())?;
        let bits: Vec<u32> = q.read(&c).unwrap().iter().map(|v| v.to_bits()).collect();
        Ok::<_, String>(bits)
    };
    for (n, local, skew, ok) in [
        // Whole tiles, then partial ones, on the vector variant.
        (32, [16, 16], 0, true),
        (45, [16, 16], 0, true),
        (16, [16, 16], 0, true),
        // Narrower and lower groups (tiles partly filled), and the scalar code (6 wide).
        (32, [8, 16], 0, true),
        (40, [16, 8], 0, true),
        (20, [6, 16], 0, true),
        // Rows of `a_tile` shifted: in bounds for the first rows, past the end for the last.
        (32, [16, 16], 3, false),
        (32, [16, 4], 3, true),
        (32, [6, 16], 3, false),
        // Groups too high or too wide for the tiles: out of bounds.
        (32, [16, 32], 0, false),
        (32, [32, 16], 0, false),
        (64, [32, 8], 0, false),
    ] {
        let want = run(&interp, n, local, skew);
        assert_eq!(
            want.is_ok(),
            ok,
            "n {n}, local {local:?}, skew {skew}: {want:?}"
        );
        let got = run(&cpu, n, local, skew);
        assert_eq!(got, want, "n {n}, local {local:?}, skew {skew}");
    }
}

/// The tile loads of a tiled matmul, `a[row * n + col]` under `row < n && col < n`: proven
/// in bounds (the analysis's pitched indices) when `a` holds `n * n` elements, so the 4-lane
/// variant loads four elements without a test; with `a` one element short, or a guard that
/// lets `col` reach `n` (`slack`), or a pitch other than the guard's bound, tested per access:
/// the interpreter's results, and its error (same work-item, same line) where one faults.
#[test]
fn pitched_tile_loads_agree_with_the_interpreter() {
    const TILE: u32 = 16;
    let (cpu, interp) = queues();
    let k = Kernel::build("tile_loads", |k| {
        let a = k.read::<f32>("a");
        // `a`'s elements again (a verdict holds for every occurrence of an access: the
        // unproven load at `row * n + a_col` must not be of `a`).
        let s = k.read::<f32>("s");
        let c = k.write::<f32>("c");
        let n = k.scalar::<u32>("n");
        let slack = k.scalar::<u32>("slack");
        let pitch = k.scalar::<u32>("pitch");
        let tile = k.local_array::<f32>("tile", TILE * TILE);
        let (tx, ty) = (local_id(0), local_id(1));
        let col = group_id(0) * TILE + tx;
        let row = group_id(1) * TILE + ty;
        let acc = var_named("acc", 0.0f32);
        for_range(0u32, (n + (TILE - 1)) / TILE, |t| {
            let a_col = t * TILE + tx;
            // Proven where `a` has `n * n` elements.
            if_(row.lt(n).and(a_col.lt(n)), || {
                tile.set(ty * TILE + tx, a.at(row * n + a_col))
            })
            .else_(|| tile.set(ty * TILE + tx, 0.0f32));
            barrier_local();
            acc.set(acc.get() + tile.at(tx * TILE + ty) * 2.0f32);
            barrier_local();
            // Not proven: `a_col` may reach `n + slack - 1`; `pitch` is not the guard's bound.
            if_(row.lt(n).and(a_col.lt(n + slack)), || {
                acc.set(acc.get() + s.at(row * n + a_col))
            });
            if_(row.lt(n).and(a_col.lt(n)), || {
                acc.set(acc.get() - a.at(row * pitch + a_col))
            });
        });
        if_(row.lt(n).and(col.lt(n)), || c.set(row * n + col, acc.get()));
    })
    .unwrap();
    let run = |q: &Queue, n: usize, short: usize, slack: u32, pitch: u32| {
        let am: Vec<f32> = (0..n * n - short)
            .map(|i| ((i * 37) % 17) as f32 / 8.0 - 1.0)
            .collect();
        let a = Buffer::from_slice(q, &am).unwrap();
        let sm: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32).collect();
        let s = Buffer::from_slice(q, &sm).unwrap();
        let c = Buffer::<f32>::new(q.device(), n * n).unwrap();
        let t = n.div_ceil(TILE as usize) * TILE as usize;
        k.launch(
            q,
            NdRange::new([t, t]).local([16, 16]),
            args![&a, &s, &c, n as u32, slack, pitch],
        )
        .map_err(|e| e.to_string())?;
        let bits: Vec<u32> = q.read(&c).unwrap().iter().map(|v| v.to_bits()).collect();
        Ok::<_, String>(bits)
    };
    for (n, short, slack, pitch, ok) in [
        // Whole tiles, then partial ones (lanes that fail the guard load nothing).
        (32, 0, 0, 32, true),
        (45, 0, 0, 45, true),
        (20, 0, 0, 19, true),
        // `a` one element short: the last row's last element faults in the first load.
        (32, 1, 0, 32, false),
        (45, 1, 0, 45, false),
        // The guard lets `a_col` reach `n`: in bounds but for the last row.
        (20, 0, 1, 20, false),
        (36, 0, 1, 36, false),
        // A pitch past `n`: the last rows fault in the third load.
        (32, 0, 0, 33, false),
        (40, 0, 0, 41, false),
    ] {
        let want = run(&interp, n, short, slack, pitch);
        assert_eq!(
            want.is_ok(),
            ok,
            "n {n}, short {short}, slack {slack}, pitch {pitch}: {want:?}"
        );
        let got = run(&cpu, n, short, slack, pitch);
        assert_eq!(
            got, want,
            "n {n}, short {short}, slack {slack}, pitch {pitch}"
        );
    }
}

/// A stencil's neighbours clamped at the borders (`min(max(col + dc, 0), hi)`, the rows'
/// likewise, as the tensor fields read them): the vector code loads four (or eight)
/// neighbours at once where no clamp binds and they lie in the buffer, lane by lane
/// elsewhere. The interpreter's results at every border and local size (4 and 8 lanes, and
/// the one-work-item code), and its error where the clamp's bound `hi` lets the last row's
/// last column read one element past the end (consecutive lanes, the last out of bounds).
#[test]
fn clamped_neighbour_loads_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("clamped", |k| {
        let x = k.read::<f32>("x");
        let y = k.write::<f32>("y");
        let rows = k.scalar::<i32>("rows");
        let cols = k.scalar::<i32>("cols");
        let hi = k.scalar::<i32>("hi");
        let (c, r) = (global_id(0).cast::<i32>(), global_id(1).cast::<i32>());
        let at = |dr: i32, dc: i32| {
            let rr = (r + dr).max(lit(0i32)).min(rows - 1i32);
            let cc = (c + dc).max(lit(0i32)).min(hi);
            x.at((rr * cols + cc).cast::<u32>())
        };
        // Unsigned, one clamp: `min(col + 1, hi)`.
        let right = x.at((r.min(rows - 1i32) * cols).cast::<u32>()
            + (c.cast::<u32>() + 1u32).min(hi.cast::<u32>()));
        if_(r.lt(rows).and(c.lt(cols)), || {
            let v = at(0, 1) - at(0, -1) * 2.0f32 + at(1, 0) * 3.0f32 - at(-1, 0) + right * 0.5f32;
            y.set((r * cols + c).cast::<u32>(), v);
        });
    })
    .unwrap();
    let run = |q: &Queue, rows: usize, cols: usize, hi: i32, local: [usize; 2]| {
        let xm: Vec<f32> = (0..rows * cols)
            .map(|i| ((i * 37) % 23) as f32 / 8.0 - 1.0)
            .collect();
        let x = Buffer::from_slice(q, &xm).unwrap();
        let y = Buffer::from_slice(q, &vec![0.0f32; rows * cols]).unwrap();
        let range = NdRange::new([
            cols.div_ceil(local[0]) * local[0],
            rows.div_ceil(local[1]) * local[1],
        ])
        .local(local);
        k.launch(q, range, args![&x, &y, rows as i32, cols as i32, hi])
            .map_err(|e| e.to_string())?;
        let bits: Vec<u32> = q.read(&y).unwrap().iter().map(|v| v.to_bits()).collect();
        Ok::<_, String>(bits)
    };
    for local in [[4, 2], [8, 2], [32, 1], [3, 2]] {
        for (rows, cols, hi_off, ok) in [
            (5, 16, -1, true),
            (7, 13, -1, true),
            (3, 40, -1, true),
            (6, 5, -1, true),
            // Clamped short of the last column: the neighbours repeat it.
            (4, 20, -3, true),
            // `hi = cols`: the last row's last column reads past the end.
            (5, 16, 0, false),
            (7, 13, 0, false),
        ] {
            let hi = cols as i32 + hi_off;
            let want = run(&interp, rows, cols, hi, local);
            assert_eq!(
                want.is_ok(),
                ok,
                "{rows}x{cols}, hi {hi}, local {local:?}: {want:?}"
            );
            let got = run(&cpu, rows, cols, hi, local);
            assert_eq!(got, want, "{rows}x{cols}, hi {hi}, local {local:?}");
        }
    }
}

/// A group-level `for` whose bounds every work-item shares (one counter for the group,
/// written into the records of the work-items that read it) across barriers: trip counts that
/// differ per launch (zero among them), local sizes that fill the blocks of four and sizes
/// that do not, and a counter read in two regions and after a barrier. The interpreter's
/// results, and its error for a counter that indexes past the end.
#[test]
fn uniform_loop_counters_across_barriers_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("uniform_counter", |k| {
        let out = k.write::<u32>("out");
        let trips = k.scalar::<u32>("trips");
        let start = k.scalar::<u32>("start");
        let sh = k.local_array::<u32>("sh", 64);
        let l = local_id(0);
        let ls = local_size(0);
        let acc = var_named("acc", 7u32);
        for_range(start, start + trips, |i| {
            sh.set(l, i * 3u32 + l);
            barrier();
            acc.set(acc.get() * 5u32 + sh.at((l + i) % ls) + i);
            barrier();
            for_range(0u32, i % 3u32, |j| {
                sh.set(l, acc.get() ^ j);
                barrier();
                acc.set(acc.get() + sh.at((l + 1u32) % ls) * (i + j));
                barrier();
            });
        });
        out.set(global_id(0) * 8u32 + start, acc.get());
    })
    .unwrap();
    let run = |q: &Queue, local: usize, trips: u32, start: u32| {
        let n = local * 3;
        let out = Buffer::<u32>::new(q.device(), n * 8).unwrap();
        k.launch(q, NdRange::new(n).local(local), args![&out, trips, start])
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(q.read(&out).unwrap())
    };
    for local in [4, 6, 8, 13, 64] {
        for (trips, start) in [(0, 0), (1, 2), (5, 1), (3, 7), (0, 5), (9, 4)] {
            let want = run(&interp, local, trips, start).unwrap();
            assert_eq!(
                run(&cpu, local, trips, start).unwrap(),
                want,
                "local {local}, trips {trips}, start {start}"
            );
        }
        // `start` 8: the last work-item's store lies past the end.
        let want = run(&interp, local, 2, 8).unwrap_err();
        assert_eq!(run(&cpu, local, 2, 8).unwrap_err(), want, "local {local}");
    }
}

/// Random kernels the SIMD variant takes (32-bit values and `bool`s only, no barriers): every
/// kind of divergence, loads at consecutive, shared and random indices, private variables,
/// integer division and shifts, casts, selects and built-ins. (The difftest generator's
/// kernels batch many programs with barriers and 64-bit values, so they run on the scalar
/// path; this is the SIMD path's random differential test.)
mod random {
    use strata::ir::{
        Access, ArrayLen, BinaryOp, Builtin, Expr, ExprId, Fence, Function, GroupOp, GroupScope,
        Literal, LocalDecl, LocalId, LoopId, MathFn, Mem, Param, ParamId, ParamKind, PrivateDecl,
        PrivateId, Scalar, Stmt, Type, UnaryOp,
    };

    pub const N: u32 = 64;
    pub const TYPES: [Scalar; 10] = [
        Scalar::I32,
        Scalar::U32,
        Scalar::F32,
        Scalar::I64,
        Scalar::U64,
        Scalar::F64,
        Scalar::I8,
        Scalar::U8,
        Scalar::I16,
        Scalar::U16,
    ];
    /// The parameter `k` (after an input and an output buffer of each type).
    const K: usize = 2 * TYPES.len();

    /// A small deterministic generator (xorshift).
    pub struct Rng(pub u64);
    impl Rng {
        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn pick<T: Copy>(&mut self, v: &[T]) -> T {
            v[self.below(v.len() as u64) as usize]
        }
    }

    pub struct Gen {
        pub f: Function,
        r: Rng,
        blocks: Vec<Vec<Stmt>>,
        scope: Vec<Vec<(ExprId, Scalar)>>,
        loops: Vec<LoopId>,
        /// The `u32` counters of the enclosing `for` loops (indices the lanes share).
        counters: Vec<ExprId>,
        /// Kernels with barriers: the phase (segments between barriers), which picks the
        /// half of each local array this phase writes (its own element) and the half it
        /// reads (any element), so no two work-items race.
        phase: Option<u32>,
        /// Whether a `return` may be generated (not before a barrier: a divergence error).
        may_return: bool,
        /// The types of the values, variables and stores it generates ([`TYPES`], or its
        /// 32-bit ones for [`Gen::new_32`]).
        types: &'static [Scalar],
        /// Whether expressions may go through vectors ([`Gen::vector_expr`]).
        pub vectors: bool,
        /// Whether an index may be the id clamped at borders (`min(max(gid + o, lo), hi)`).
        pub clamps: bool,
        /// Whether a top-level statement may be a register tile ([`Gen::tile`]).
        pub tiles: bool,
    }

    /// The local arrays of a kernel with barriers: `u32`, launch-sized (two halves of the
    /// work-group's size), and `f32`, fixed (two halves of 16).
    const LOCALS: [Scalar; 2] = [Scalar::U32, Scalar::F32];

    impl Gen {
        pub fn new(seed: u64) -> Gen {
            let mut f = Function::new("random_simd");
            for t in TYPES {
                f.params.push(Param {
                    name: format!("in_{t}"),
                    kind: ParamKind::Buffer {
                        elem: strata::ir::Elem::Value(Type::scalar(t)),
                        access: Access::Read,
                        len: None,
                    },
                });
            }
            for t in TYPES {
                f.params.push(Param {
                    name: format!("out_{t}"),
                    kind: ParamKind::Buffer {
                        elem: strata::ir::Elem::Value(Type::scalar(t)),
                        // The 32- and 64-bit outputs also take atomics ([`Gen::atomic`]).
                        access: if t.size() >= 4 {
                            Access::ReadWrite
                        } else {
                            Access::Write
                        },
                        len: None,
                    },
                });
            }
            f.params.push(Param {
                name: "k".into(),
                kind: ParamKind::Scalar(Type::scalar(Scalar::U32)),
            });
            for t in TYPES {
                f.privates.push(PrivateDecl {
                    name: format!("p_{t}"),
                    elem: Type::scalar(t),
                    len: None,
                });
            }
            Gen {
                f,
                r: Rng(seed | 1),
                blocks: vec![Vec::new()],
                scope: vec![Vec::new()],
                loops: Vec::new(),
                counters: Vec::new(),
                phase: None,
                may_return: true,
                types: &TYPES,
                vectors: false,
                clamps: false,
                tiles: false,
            }
        }

        /// A generator of kernels whose values are 32-bit (`i32`, `u32`, `f32`) or `bool`:
        /// those the eight-lane variant takes (the buffers and private variables of the other
        /// types are declared, never used).
        pub fn new_32(seed: u64) -> Gen {
            let mut g = Gen::new(seed);
            g.f.name = "random_simd_32".into();
            g.types = &TYPES[..3];
            g
        }

        /// A generator of kernels with barriers, collectives and local memory.
        pub fn with_barriers(seed: u64) -> Gen {
            let mut g = Gen::new(seed);
            g.f.name = "random_simd_barriers".into();
            let n = g.f.params.push(Param {
                name: "nloc".into(),
                kind: ParamKind::LocalLen,
            });
            g.f.locals.push(LocalDecl {
                name: "loc_u32".into(),
                elem: Type::scalar(Scalar::U32),
                len: ArrayLen::Param(n),
            });
            g.f.locals.push(LocalDecl {
                name: "loc_f32".into(),
                elem: Type::scalar(Scalar::F32),
                len: ArrayLen::Fixed(32),
            });
            // `s`: a private every store of which is uniform (the bound of guarded blocks).
            g.f.privates.push(PrivateDecl {
                name: "s".into(),
                elem: Type::scalar(Scalar::U32),
                len: None,
            });
            g.phase = Some(0);
            g.may_return = false;
            g
        }

        /// The uniform private `s` (kernels with barriers).
        fn s_private(&self) -> Mem {
            Mem::Private(PrivateId::new(TYPES.len()))
        }

        /// Sets `s` to a uniform value: `k % 13`, or `s / 2`, or `s * 3 + 1`.
        fn set_s(&mut self) {
            let k = self.e(Expr::Param(ParamId::new(K)), Scalar::U32);
            let v = self.f.new_value(Type::scalar(Scalar::U32), None);
            let zero = self.u32_lit(0);
            self.emit(Stmt::Load {
                value: v,
                mem: self.s_private(),
                index: zero,
                at: strata::ir::SourceLoc::NONE,
            });
            let old = self.e(Expr::Value(v), Scalar::U32);
            let value = match self.r.below(3) {
                0 => {
                    let m = self.u32_lit(13);
                    self.e(Expr::Binary(BinaryOp::Rem, k, m), Scalar::U32)
                }
                1 => {
                    let two = self.u32_lit(2);
                    self.e(Expr::Binary(BinaryOp::Div, old, two), Scalar::U32)
                }
                _ => {
                    let three = self.u32_lit(3);
                    let one = self.u32_lit(1);
                    let x = self.e(Expr::Binary(BinaryOp::Mul, old, three), Scalar::U32);
                    self.e(Expr::Binary(BinaryOp::Add, x, one), Scalar::U32)
                }
            };
            self.emit(Stmt::Store {
                mem: self.s_private(),
                index: zero,
                value,
                at: strata::ir::SourceLoc::NONE,
            });
        }

        /// A block only the work-items below a uniform bound run (the `cpu` backend's
        /// guarded regions): `lid < b`, `lid <= b`, `b > lid`, `b >= lid`, of the local id or
        /// the linear one, as `u32` or `i32`, with `b` a literal (below, at and above the
        /// group size, negative, `u32::MAX`), `k`, the local size, a uniform `let` (wrapping),
        /// or the private `s`; or (no guard) a bound that is not uniform.
        fn guarded(&mut self) {
            let signed = self.r.below(3) == 0;
            let t = if signed { Scalar::I32 } else { Scalar::U32 };
            let id = if self.r.below(3) == 0 {
                Builtin::LocalLinearId
            } else {
                Builtin::LocalId(0)
            };
            let mut lid = self.e(Expr::Builtin(id), Scalar::U32);
            if signed {
                lid = self.e(Expr::Cast(lid, Scalar::I32), Scalar::I32);
            }
            let k = self.e(Expr::Param(ParamId::new(K)), Scalar::U32);
            let bound = match self.r.below(7) {
                // Not uniform: the private `p_u32` (stored anything), or the id itself.
                6 => {
                    let v = self.f.new_value(Type::scalar(Scalar::U32), None);
                    let zero = self.u32_lit(0);
                    self.emit(Stmt::Load {
                        value: v,
                        mem: Mem::Private(PrivateId::new(Self::ty_index(Scalar::U32))),
                        index: zero,
                        at: strata::ir::SourceLoc::NONE,
                    });
                    let x = self.e(Expr::Value(v), Scalar::U32);
                    let seven = self.u32_lit(7);
                    let x = self.e(Expr::Binary(BinaryOp::Rem, x, seven), Scalar::U32);
                    let mut x = self.value(x, Scalar::U32);
                    if self.r.below(2) == 0 {
                        let lid = self.e(Expr::Builtin(Builtin::LocalId(0)), Scalar::U32);
                        let two = self.u32_lit(2);
                        let l2 = self.e(Expr::Binary(BinaryOp::Rem, lid, two), Scalar::U32);
                        x = self.value(l2, Scalar::U32);
                    }
                    if signed {
                        x = self.e(Expr::Cast(x, Scalar::I32), Scalar::I32);
                    }
                    x
                }
                0 => {
                    let bits: u64 =
                        self.r
                            .pick(&[0, 1, 2, 3, 4, 5, 6, 8, 9, 16, 17, 0xffff_ffff, 0xffff_fffe]);
                    self.e(Expr::Literal(Literal::from_bits(t, bits)), t)
                }
                1 if !signed => k,
                2 if !signed => self.e(Expr::Builtin(Builtin::LocalSize(0)), Scalar::U32),
                3 => {
                    // k - 40 (wraps, or -3), k / 5 (7), k % 6 (1), as a `let`.
                    let op = self.r.pick(&[BinaryOp::Sub, BinaryOp::Div, BinaryOp::Rem]);
                    let c = self.u32_lit(match op {
                        BinaryOp::Sub => 40,
                        BinaryOp::Div => 5,
                        _ => 6,
                    });
                    let mut x = self.e(Expr::Binary(op, k, c), Scalar::U32);
                    if signed {
                        x = self.e(Expr::Cast(x, Scalar::I32), Scalar::I32);
                    }
                    let v = self.f.new_value(Type::scalar(t), None);
                    self.emit(Stmt::Let { value: v, expr: x });
                    self.e(Expr::Value(v), t)
                }
                _ => {
                    let v = self.f.new_value(Type::scalar(Scalar::U32), None);
                    let zero = self.u32_lit(0);
                    self.emit(Stmt::Load {
                        value: v,
                        mem: self.s_private(),
                        index: zero,
                        at: strata::ir::SourceLoc::NONE,
                    });
                    let mut x = self.e(Expr::Value(v), Scalar::U32);
                    if signed {
                        x = self.e(Expr::Cast(x, Scalar::I32), Scalar::I32);
                    }
                    x
                }
            };
            let op = self
                .r
                .pick(&[BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge]);
            let cond = if matches!(op, BinaryOp::Lt | BinaryOp::Le) {
                self.e(Expr::Binary(op, lid, bound), Scalar::Bool)
            } else {
                self.e(Expr::Binary(op, bound, lid), Scalar::Bool)
            };
            let then = self.block(1, 3);
            self.emit(Stmt::If {
                cond,
                then,
                otherwise: Vec::new(),
            });
        }

        fn u32_lit(&mut self, v: u32) -> ExprId {
            self.e(
                Expr::Literal(Literal::from_bits(Scalar::U32, v as u64)),
                Scalar::U32,
            )
        }

        /// Half `h` of local array `a`: its first element and its length.
        fn half(&mut self, a: usize, h: u32) -> (ExprId, ExprId) {
            let w = if a == 0 {
                self.e(Expr::Builtin(Builtin::LocalSize(0)), Scalar::U32)
            } else {
                self.u32_lit(16)
            };
            let hh = self.u32_lit(h);
            (self.e(Expr::Binary(BinaryOp::Mul, hh, w), Scalar::U32), w)
        }

        /// An index into the half of local array `a` this phase reads: the work-item's own
        /// element, a neighbour's, or any.
        fn local_read_index(&mut self, a: usize) -> ExprId {
            let p = self.phase.expect("kernel with barriers");
            let (base, w) = self.half(a, (p + 1) % 2);
            let lid = self.e(Expr::Builtin(Builtin::LocalId(0)), Scalar::U32);
            let x = match self.r.below(3) {
                0 => lid,
                1 => {
                    let k = self.e(Expr::Param(ParamId::new(K)), Scalar::U32);
                    self.e(Expr::Binary(BinaryOp::Add, lid, k), Scalar::U32)
                }
                _ => self.expr(Scalar::U32, 1),
            };
            let x = self.e(Expr::Binary(BinaryOp::Rem, x, w), Scalar::U32);
            self.e(Expr::Binary(BinaryOp::Add, base, x), Scalar::U32)
        }

        fn local_load(&mut self, t: Scalar) -> ExprId {
            let a = LOCALS.iter().position(|&x| x == t).unwrap();
            let i = self.local_read_index(a);
            let v = self.f.new_value(Type::scalar(t), None);
            self.emit(Stmt::Load {
                value: v,
                mem: Mem::Local(LocalId::new(a)),
                index: i,
                at: strata::ir::SourceLoc::NONE,
            });
            self.e(Expr::Value(v), t)
        }

        /// Stores to the work-item's own element of the half this phase writes.
        fn local_store(&mut self) {
            let a = self.r.below(2) as usize;
            let p = self.phase.expect("kernel with barriers");
            let (base, _) = self.half(a, p % 2);
            let lid = self.e(Expr::Builtin(Builtin::LocalId(0)), Scalar::U32);
            let i = self.e(Expr::Binary(BinaryOp::Add, base, lid), Scalar::U32);
            let v = self.expr(LOCALS[a], 2);
            self.emit(Stmt::Store {
                mem: Mem::Local(LocalId::new(a)),
                index: i,
                value: v,
                at: strata::ir::SourceLoc::NONE,
            });
        }

        /// A barrier (the next phase), or a collective whose value joins the scope, then a
        /// barrier.
        fn sync(&mut self) {
            if self.r.below(3) == 0 {
                self.set_s();
            }
            if self.r.below(2) == 0 {
                self.guarded();
            }
            if self.r.below(2) == 0 {
                use GroupOp::*;
                let op = self.r.pick(&[
                    ReduceAdd,
                    ReduceMin,
                    ReduceMax,
                    ScanInclusiveAdd,
                    ScanExclusiveAdd,
                    ScanExclusiveMax,
                    Broadcast,
                    Any,
                    All,
                ]);
                let t = if matches!(op, Any | All) {
                    Scalar::Bool
                } else {
                    self.r.pick(self.types)
                };
                let arg = self.expr(t, 2);
                let source = (op == Broadcast).then(|| {
                    let k = self.e(Expr::Param(ParamId::new(K)), Scalar::U32);
                    let w = self.e(Expr::Builtin(Builtin::LocalSize(0)), Scalar::U32);
                    self.e(Expr::Binary(BinaryOp::Rem, k, w), Scalar::U32)
                });
                let value = self.f.new_value(Type::scalar(t), None);
                self.emit(Stmt::Group {
                    value,
                    op,
                    scope: GroupScope::WorkGroup,
                    arg,
                    source,
                });
                let x = self.e(Expr::Value(value), t);
                self.scope.last_mut().unwrap().push((x, t));
            }
            self.emit(Stmt::Barrier(Fence {
                local: true,
                global: true,
            }));
            *self.phase.as_mut().unwrap() += 1;
        }

        /// Leaves or ends the iteration of group loop `id` together (a uniform condition on
        /// its counter), or not.
        fn group_jump(&mut self, id: LoopId, ct: Scalar, counter: ExprId) {
            let k = self.e(Expr::Param(ParamId::new(K)), Scalar::U32);
            if self.r.below(3) != 0 {
                let two = self.e(Expr::Literal(Literal::from_bits(ct, 2)), ct);
                let kc = if ct == Scalar::U32 {
                    k
                } else {
                    self.e(Expr::Cast(k, ct), ct)
                };
                let km = self.e(Expr::Binary(BinaryOp::Rem, kc, two), ct);
                let cond = self.e(Expr::Binary(BinaryOp::Eq, counter, km), Scalar::Bool);
                let jump = if self.r.below(2) == 0 {
                    Stmt::Break(id)
                } else {
                    Stmt::Continue(id)
                };
                self.emit(Stmt::If {
                    cond,
                    then: vec![jump],
                    otherwise: Vec::new(),
                });
            }
        }

        /// A loop at the group level (the same trip count in every work-item, a barrier in
        /// it) that every work-item leaves or continues together.
        fn group_loop(&mut self, n: u32) {
            let id = LoopId::from_raw(self.f.loop_count);
            self.f.loop_count += 1;
            let k = self.e(Expr::Param(ParamId::new(K)), Scalar::U32);
            let one = self.u32_lit(1);
            let three = self.u32_lit(3);
            // Bounds the same in every work-item (one counter for the group on `cpu`),
            // counting down in `i32`, wrapping, or (rarely: errors) different per work-item
            // or with a zero step.
            let lit = |g: &mut Self, t: Scalar, v: i64| {
                g.e(
                    Expr::Literal(Literal::from_bits(t, v as u64 & 0xffff_ffff)),
                    t,
                )
            };
            let (ct, start, end, step) = match self.r.below(12) {
                0..=4 => {
                    let zero = self.u32_lit(0);
                    let m = self.e(Expr::Binary(BinaryOp::Rem, k, three), Scalar::U32);
                    let end = self.e(Expr::Binary(BinaryOp::Add, m, one), Scalar::U32);
                    (Scalar::U32, zero, end, one)
                }
                5 | 6 => {
                    let five = self.u32_lit(5);
                    let start = self.e(Expr::Binary(BinaryOp::Rem, k, five), Scalar::U32);
                    (
                        Scalar::U32,
                        start,
                        lit(self, Scalar::U32, 7),
                        lit(self, Scalar::U32, 2),
                    )
                }
                7 | 8 => (
                    Scalar::I32,
                    lit(self, Scalar::I32, 5),
                    lit(self, Scalar::I32, -1),
                    lit(self, Scalar::I32, -2),
                ),
                9 => (
                    Scalar::U32,
                    lit(self, Scalar::U32, 0xffff_fffd),
                    lit(self, Scalar::U32, 0xffff_ffff),
                    one,
                ),
                10 => {
                    let lid = self.e(Expr::Builtin(Builtin::LocalId(0)), Scalar::U32);
                    let two = self.u32_lit(2);
                    let end = self.e(Expr::Binary(BinaryOp::Rem, lid, two), Scalar::U32);
                    let end = self.e(Expr::Binary(BinaryOp::Add, end, one), Scalar::U32);
                    (Scalar::U32, self.u32_lit(0), end, one)
                }
                _ => {
                    let hundred = self.u32_lit(100);
                    let zero_step = self.e(Expr::Binary(BinaryOp::Div, k, hundred), Scalar::U32);
                    (Scalar::U32, self.u32_lit(0), three, zero_step)
                }
            };
            let var = self.f.new_value(Type::scalar(ct), None);
            let counter = self.e(Expr::Value(var), ct);
            self.blocks.push(Vec::new());
            self.scope.push(vec![(counter, ct)]);
            if ct == Scalar::U32 {
                self.counters.push(counter);
            }
            let phase = self.phase.unwrap();
            // The jump before the barrier in the middle (the rest of the body skipped) or at
            // the end.
            let early = self.r.below(2) == 0;
            for _ in 0..n {
                self.stmt(1);
            }
            if early {
                self.group_jump(id, ct, counter);
            }
            self.sync();
            for _ in 0..n {
                self.stmt(1);
            }
            if !early {
                self.group_jump(id, ct, counter);
            }
            self.emit(Stmt::Barrier(Fence {
                local: true,
                global: true,
            }));
            // Every iteration starts in the same phase.
            self.phase = Some(phase);
            self.scope.pop();
            if ct == Scalar::U32 {
                self.counters.pop();
            }
            let body = self.blocks.pop().unwrap();
            self.emit(Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            });
        }

        fn ty_index(t: Scalar) -> usize {
            TYPES.iter().position(|&x| x == t).unwrap()
        }
        fn e(&mut self, e: Expr, t: Scalar) -> ExprId {
            self.f.exprs.intern(e, Type::scalar(t))
        }
        fn lit(&mut self, t: Scalar) -> ExprId {
            let bits = match t {
                Scalar::F32 => (self.r.below(2000) as f32 / 16.0 - 60.0).to_bits() as u64,
                Scalar::F64 => (self.r.below(2000) as f64 / 16.0 - 60.0).to_bits(),
                Scalar::Bool => self.r.below(2),
                Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => match self.r.below(3) {
                    0 => self.r.next(),
                    _ => self.r.below(40),
                },
                Scalar::I64 | Scalar::U64 => match self.r.below(4) {
                    0 => self.r.next(),
                    1 => (self.r.below(80) as i64 - 40) as u64,
                    _ => self.r.below(40),
                },
                _ => match self.r.below(4) {
                    0 => self.r.next() & 0xffff_ffff,
                    _ => self.r.below(40),
                },
            };
            self.e(Expr::Literal(Literal::from_bits(t, bits)), t)
        }
        fn emit(&mut self, s: Stmt) {
            self.blocks.last_mut().unwrap().push(s);
        }
        fn value(&mut self, e: ExprId, t: Scalar) -> ExprId {
            let v = self.f.new_value(Type::scalar(t), None);
            self.emit(Stmt::Let { value: v, expr: e });
            let x = self.e(Expr::Value(v), t);
            self.scope.last_mut().unwrap().push((x, t));
            x
        }
        fn gid(&mut self) -> ExprId {
            self.e(Expr::Builtin(Builtin::GlobalId(0)), Scalar::U32)
        }
        /// An index in `0..N`: the work-item's own, one all work-items share, or any.
        fn index(&mut self) -> ExprId {
            let n = self.e(
                Expr::Literal(Literal::from_bits(Scalar::U32, N as u64)),
                Scalar::U32,
            );
            match self.r.below(5) {
                // Sometimes a stencil's neighbour clamped at the borders, `min(max(gid + o,
                // lo), hi)`: consecutive lanes where no clamp binds (one vector load, in
                // the copy of the region for blocks where none binds). Also in `i32`, with
                // `gid - o` (binding below 0), and with an offset that wraps `gid + o`
                // around 2^32 (lanes not consecutive there: no clamp may count as free).
                0 if self.clamps && self.r.below(3) == 0 => {
                    let g = self.gid();
                    let hi = N - 1 - self.r.below(6) as u32;
                    let lo = self.r.below(8) as u32;
                    match self.r.below(4) {
                        0 => {
                            let o = self.r.below(4) as i64;
                            let g = self.e(Expr::Cast(g, Scalar::I32), Scalar::I32);
                            let o = self.e(
                                Expr::Literal(Literal::from_bits(Scalar::I32, o as u64)),
                                Scalar::I32,
                            );
                            let x = self.e(Expr::Binary(BinaryOp::Sub, g, o), Scalar::I32);
                            let [lo, hi] = [lo as i64, hi as i64].map(|v| {
                                self.e(
                                    Expr::Literal(Literal::from_bits(Scalar::I32, v as u64)),
                                    Scalar::I32,
                                )
                            });
                            let x = self.e(Expr::Math(MathFn::Max, vec![x, lo]), Scalar::I32);
                            let x = self.e(Expr::Math(MathFn::Min, vec![hi, x]), Scalar::I32);
                            self.e(Expr::Cast(x, Scalar::U32), Scalar::U32)
                        }
                        // `max(gid + (2^32 - 1 - r), lo) + r + 1`: the lanes' sums wrap
                        // (`gid` for the large ids), and the first `r + 1` ids' do not, so
                        // that there `max` keeps a lane past 2^32 beside one it raised to
                        // `lo`: not consecutive, and every index in bounds.
                        3 => {
                            let r = self.r.below(4) as u32;
                            let o = self.u32_lit(u32::MAX - r);
                            let x = self.e(Expr::Binary(BinaryOp::Add, g, o), Scalar::U32);
                            let lo = self.u32_lit(lo);
                            let x = self.e(Expr::Math(MathFn::Max, vec![x, lo]), Scalar::U32);
                            let k = self.u32_lit(r + 1);
                            self.e(Expr::Binary(BinaryOp::Add, x, k), Scalar::U32)
                        }
                        k => {
                            let o = if k == 1 {
                                u32::MAX - self.r.below(6) as u32
                            } else {
                                self.r.below(4) as u32
                            };
                            let o = self.u32_lit(o);
                            let x = self.e(Expr::Binary(BinaryOp::Add, g, o), Scalar::U32);
                            let lo = self.u32_lit(lo);
                            let x = self.e(Expr::Math(MathFn::Max, vec![x, lo]), Scalar::U32);
                            let hi = self.u32_lit(hi);
                            self.e(Expr::Math(MathFn::Min, vec![x, hi]), Scalar::U32)
                        }
                    }
                }
                0 => self.gid(),
                1 => {
                    let k = self.e(Expr::Param(ParamId::new(K)), Scalar::U32);
                    self.e(Expr::Binary(BinaryOp::Rem, k, n), Scalar::U32)
                }
                // Shared by the lanes without a division: a counter (below 7) or the
                // work-group's size in dimension 1 (1: the results must not depend on the
                // local size), times 1, 2, 3 or 5 (a tile's row), plus the ids in dimension
                // 1 and 2 (0 here) and a literal; or a `let` of it.
                k @ (2 | 3) => {
                    let c = match self.counters.clone().as_slice() {
                        [] => self.e(Expr::Builtin(Builtin::LocalSize(1)), Scalar::U32),
                        cs => self.r.pick(cs),
                    };
                    let c = match self.r.pick(&[1u32, 2, 3, 5]) {
                        1 => c,
                        m => {
                            let m = self.u32_lit(m);
                            self.e(Expr::Binary(BinaryOp::Mul, c, m), Scalar::U32)
                        }
                    };
                    let d = self.r.pick(&[1u8, 2]);
                    let y = self.e(Expr::Builtin(Builtin::GlobalId(d)), Scalar::U32);
                    let l = self.e(Expr::Builtin(Builtin::LocalId(d)), Scalar::U32);
                    let y = self.e(Expr::Binary(BinaryOp::Add, y, l), Scalar::U32);
                    let o = self.r.below(24) as u32;
                    let o = self.u32_lit(o);
                    // Without the ids, sometimes: an index proven in bounds under its
                    // counter's range, at a constant offset from `c * m`.
                    let x = match self.r.below(3) {
                        0 => c,
                        _ => self.e(Expr::Binary(BinaryOp::Add, c, y), Scalar::U32),
                    };
                    let x = self.e(Expr::Binary(BinaryOp::Add, x, o), Scalar::U32);
                    if k == 2 {
                        x
                    } else {
                        self.value(x, Scalar::U32)
                    }
                }
                _ => {
                    let x = self.expr(Scalar::U32, 2);
                    self.e(Expr::Binary(BinaryOp::Rem, x, n), Scalar::U32)
                }
            }
        }
        fn load(&mut self, t: Scalar) -> ExprId {
            let i = self.index();
            let v = self.f.new_value(Type::scalar(t), None);
            self.emit(Stmt::Load {
                value: v,
                mem: Mem::Buffer(ParamId::new(Self::ty_index(t))),
                index: i,
                at: strata::ir::SourceLoc::NONE,
            });
            let x = self.e(Expr::Value(v), t);
            self.scope.last_mut().unwrap().push((x, t));
            x
        }
        fn leaf(&mut self, t: Scalar) -> ExprId {
            let mine: Vec<ExprId> = self
                .scope
                .iter()
                .flatten()
                .filter(|(_, s)| *s == t)
                .map(|(e, _)| *e)
                .collect();
            match self.r.below(4) {
                0 if !mine.is_empty() => self.r.pick(&mine),
                1 if t != Scalar::Bool => self.load(t),
                2 if t == Scalar::U32 => self.gid(),
                _ => self.lit(t),
            }
        }
        pub fn expr(&mut self, t: Scalar, d: u32) -> ExprId {
            use BinaryOp::*;
            if d == 0 {
                return self.leaf(t);
            }
            let d = d - 1;
            if t == Scalar::Bool {
                return match self.r.below(4) {
                    0 => {
                        let a = self.expr(Scalar::Bool, d);
                        let b = self.expr(Scalar::Bool, d);
                        let op = self.r.pick(&[And, Or, Xor, Eq]);
                        self.e(Expr::Binary(op, a, b), t)
                    }
                    1 => {
                        let a = self.expr(Scalar::Bool, d);
                        self.e(Expr::Unary(UnaryOp::Not, a), t)
                    }
                    _ => {
                        let s = self.r.pick(self.types);
                        let a = self.expr(s, d);
                        let b = self.expr(s, d);
                        let op = self.r.pick(&[Eq, Ne, Lt, Le, Gt, Ge]);
                        self.e(Expr::Binary(op, a, b), t)
                    }
                };
            }
            match self.r.below(10) {
                0..=3 => {
                    let a = self.expr(t, d);
                    let mut b = self.expr(t, d);
                    let ops: &[BinaryOp] = if t.is_float() {
                        &[Add, Sub, Mul, Div]
                    } else {
                        &[Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr]
                    };
                    let op = self.r.pick(ops);
                    if !t.is_float() && matches!(op, Div | Rem) {
                        // Never by zero.
                        let one = self.e(Expr::Literal(Literal::from_bits(t, 1)), t);
                        b = self.e(Expr::Binary(Or, b, one), t);
                    }
                    self.e(Expr::Binary(op, a, b), t)
                }
                4 => {
                    let c = self.expr(Scalar::Bool, d);
                    let a = self.expr(t, d);
                    let b = self.expr(t, d);
                    self.e(Expr::Select(c, a, b), t)
                }
                5 => {
                    let froms: Vec<Scalar> = [
                        Scalar::I32,
                        Scalar::U32,
                        Scalar::F32,
                        Scalar::I64,
                        Scalar::U64,
                        Scalar::F64,
                        Scalar::I8,
                        Scalar::U8,
                        Scalar::I16,
                        Scalar::U16,
                        Scalar::Bool,
                    ]
                    .into_iter()
                    .filter(|s| *s == Scalar::Bool || self.types.contains(s))
                    .collect();
                    let from = self.r.pick(&froms);
                    let a = self.expr(from, d);
                    if from == t {
                        a
                    } else {
                        self.e(Expr::Cast(a, t), t)
                    }
                }
                6 if t.is_float() => {
                    let m = self.r.pick(&[
                        MathFn::Sqrt,
                        MathFn::Abs,
                        MathFn::Floor,
                        MathFn::Sin,
                        MathFn::Min,
                        MathFn::Mix,
                    ]);
                    let args = (0..m.arity()).map(|_| self.expr(t, d)).collect();
                    self.e(Expr::Math(m, args), t)
                }
                6 => {
                    let m = self
                        .r
                        .pick(&[MathFn::Min, MathFn::Max, MathFn::Abs, MathFn::Clz]);
                    let args = (0..m.arity()).map(|_| self.expr(t, d)).collect();
                    self.e(Expr::Math(m, args), t)
                }
                7 if self.phase.is_some() && LOCALS.contains(&t) && self.r.below(2) == 0 => {
                    self.local_load(t)
                }
                7 => {
                    let p = Self::ty_index(t);
                    let v = self.f.new_value(Type::scalar(t), None);
                    let zero = self.e(
                        Expr::Literal(Literal::from_bits(Scalar::U32, 0)),
                        Scalar::U32,
                    );
                    self.emit(Stmt::Load {
                        value: v,
                        mem: Mem::Private(PrivateId::new(p)),
                        index: zero,
                        at: strata::ir::SourceLoc::NONE,
                    });
                    self.e(Expr::Value(v), t)
                }
                8 if self.vectors => self.vector_expr(t, d),
                _ => self.leaf(t),
            }
        }

        /// A scalar of type `t` (not `bool`) through a vector of width 2 to 4: composed of
        /// random expressions, a swizzle of it (extracts composed), a splat, an element-wise
        /// operator, a compare into a `bool` vector selecting between them, a cast to
        /// another lane type and back (where the kernel has one), the vector a value of its
        /// own (`let`), and one of its components.
        fn vector_expr(&mut self, t: Scalar, d: u32) -> ExprId {
            use BinaryOp::*;
            let w = 2 + self.r.below(3) as u8;
            let vt = Type::vector(t, w);
            let parts: Vec<ExprId> = (0..w).map(|_| self.expr(t, d)).collect();
            let a = self.f.exprs.intern(Expr::Compose(parts), vt);
            let s = self.expr(t, d);
            let b = self.f.exprs.intern(Expr::Splat(s, w), vt);
            let sw: Vec<ExprId> = (0..w)
                .map(|_| {
                    let k = self.r.below(w as u64) as u8;
                    self.e(Expr::Extract(a, k), t)
                })
                .collect();
            let c = self.f.exprs.intern(Expr::Compose(sw), vt);
            let ops: &[BinaryOp] = if t.is_float() {
                &[Add, Sub, Mul]
            } else {
                &[Add, Sub, Mul, And, Or, Xor, Shl, Shr]
            };
            let op = self.r.pick(ops);
            let x = self.f.exprs.intern(Expr::Binary(op, b, c), vt);
            let cmp = self.r.pick(&[Eq, Ne, Lt, Le, Gt, Ge]);
            let m = self
                .f
                .exprs
                .intern(Expr::Binary(cmp, a, x), Type::vector(Scalar::Bool, w));
            let mut y = self.f.exprs.intern(Expr::Select(m, x, a), vt);
            let other = self.r.pick(self.types);
            if other != t && self.r.below(2) == 0 {
                let z = self
                    .f
                    .exprs
                    .intern(Expr::Cast(y, other), Type::vector(other, w));
                y = self.f.exprs.intern(Expr::Cast(z, t), vt);
            }
            let v = self.f.new_value(vt, None);
            self.emit(Stmt::Let { value: v, expr: y });
            let vy = self.f.exprs.intern(Expr::Value(v), vt);
            let k = self.r.below(w as u64) as u8;
            self.e(Expr::Extract(vy, k), t)
        }

        fn block(&mut self, depth: u32, n: u32) -> Vec<Stmt> {
            self.blocks.push(Vec::new());
            self.scope.push(Vec::new());
            for _ in 0..n {
                self.stmt(depth);
            }
            self.scope.pop();
            self.blocks.pop().unwrap()
        }

        /// A register tile (with [`Gen::tiles`]): twelve private variables of the kernel's
        /// types, declared here and set, then each updated once in each of three steps from
        /// the step's loads (`v + y`, `v * y`, `v - y`, for floats also `fma(y, z, v)` and
        /// `fma(z, y, v)` with `z` one load the step's updates share), then added into the
        /// variable of its type that the kernel writes out: the run that the `cpu` backend's
        /// vector variant lowers a group of variables at a time (`cpu/jit/sched.rs`).
        fn tile(&mut self) {
            let zero = self.u32_lit(0);
            let vars: Vec<(Mem, Scalar)> = (0..12)
                .map(|_| {
                    let t = self.r.pick(self.types);
                    let name = format!("tile{}", self.f.privates.len());
                    let p = self.f.privates.push(PrivateDecl {
                        name,
                        elem: Type::scalar(t),
                        len: None,
                    });
                    (Mem::Private(p), t)
                })
                .collect();
            let read = |g: &mut Self, mem: Mem, t: Scalar| {
                let v = g.f.new_value(Type::scalar(t), None);
                g.emit(Stmt::Load {
                    value: v,
                    mem,
                    index: zero,
                    at: strata::ir::SourceLoc::NONE,
                });
                g.e(Expr::Value(v), t)
            };
            let write = |g: &mut Self, mem: Mem, value: ExprId| {
                g.emit(Stmt::Store {
                    mem,
                    index: zero,
                    value,
                    at: strata::ir::SourceLoc::NONE,
                })
            };
            for &(m, t) in &vars {
                let e = self.leaf(t);
                write(self, m, e);
            }
            for _ in 0..3 {
                let mut shared: Vec<(Scalar, ExprId)> = Vec::new();
                for &(m, t) in &vars {
                    let old = read(self, m, t);
                    let y = self.load(t);
                    let e = match self.r.below(if t.is_float() { 5 } else { 3 }) {
                        k @ (0..=2) => {
                            let op = [BinaryOp::Add, BinaryOp::Mul, BinaryOp::Sub][k as usize];
                            Expr::Binary(op, old, y)
                        }
                        k => {
                            let z = match shared.iter().find(|&&(st, _)| st == t) {
                                Some(&(_, z)) => z,
                                None => {
                                    let z = self.load(t);
                                    shared.push((t, z));
                                    z
                                }
                            };
                            let args = if k == 3 {
                                vec![y, z, old]
                            } else {
                                vec![z, y, old]
                            };
                            Expr::Math(MathFn::Fma, args)
                        }
                    };
                    let e = self.e(e, t);
                    write(self, m, e);
                }
            }
            for &(m, t) in &vars {
                let x = read(self, m, t);
                let out = Mem::Private(PrivateId::new(Self::ty_index(t)));
                let old = read(self, out, t);
                let sum = self.e(Expr::Binary(BinaryOp::Add, old, x), t);
                write(self, out, sum);
            }
        }

        /// An atomic on the work-item's own element of a 32- or 64-bit output (so its old
        /// values do not depend on the order of the work-items): any operation its type
        /// allows, the old value kept as a value for later expressions. Only in kernels of
        /// [`Gen::new`], which take four lanes with it (an atomic keeps a kernel from eight
        /// lanes, and one with barriers from the vector variant: `simd::scalar_reason`).
        fn atomic(&mut self) {
            use strata::ir::{AtomicOp, AtomicOrder};
            let t = self.r.pick(&TYPES[..6]);
            let op = if t.is_float() {
                self.r.pick(&[
                    AtomicOp::Add,
                    AtomicOp::Min,
                    AtomicOp::Max,
                    AtomicOp::Exchange,
                ])
            } else {
                self.r.pick(&[
                    AtomicOp::Add,
                    AtomicOp::Sub,
                    AtomicOp::Min,
                    AtomicOp::Max,
                    AtomicOp::And,
                    AtomicOp::Or,
                    AtomicOp::Xor,
                    AtomicOp::Exchange,
                    AtomicOp::CompareExchange,
                ])
            };
            let operand = self.expr(t, 2);
            let compare = (op == AtomicOp::CompareExchange).then(|| self.expr(t, 1));
            let index = self.gid();
            let v = self.f.new_value(Type::scalar(t), None);
            self.emit(Stmt::Atomic {
                result: Some(v),
                mem: Mem::Buffer(ParamId::new(TYPES.len() + Self::ty_index(t))),
                index,
                op,
                operand,
                compare,
                order: AtomicOrder::RELAXED,
                at: strata::ir::SourceLoc::NONE,
            });
            let x = self.e(Expr::Value(v), t);
            self.scope.last_mut().unwrap().push((x, t));
        }

        /// An escape loop: the 32-bit private variable of its type (`it`) stored from a
        /// literal or `k` before it, counted by a literal or `k` in its body (at the top or
        /// the end), which it leaves when `it` reaches a limit or a lane's own condition
        /// fails (`if !c break`, or the `break` in the `else`), its body a random block
        /// that may break out of it or continue it (its stores of `it` and escape loops
        /// dropped: the loop must end). The vector code keeps `it` as one scalar for the active lanes
        /// (`simd::trip_counters`) where no `continue` of the loop or a `break` of an outer
        /// one or `return` in it forbids, the lanes' own values taken as they leave.
        fn counted_loop(&mut self, depth: u32) {
            let id = LoopId::from_raw(self.f.loop_count);
            self.f.loop_count += 1;
            let t = self.r.pick(&[Scalar::U32, Scalar::I32]);
            let p = Mem::Private(PrivateId::new(Self::ty_index(t)));
            let lit = |g: &mut Self, v: i64| {
                g.e(
                    Expr::Literal(Literal::from_bits(t, v as u64 & 0xffff_ffff)),
                    t,
                )
            };
            let k = self.e(Expr::Param(ParamId::new(K)), Scalar::U32);
            // Starts below the limit (48) and steps of at least 1: at most 52 iterations.
            let start = match (t, self.r.below(3)) {
                (Scalar::U32, 0) => k,
                (_, 0) => lit(self, -4),
                (_, 1) => lit(self, 5),
                _ => lit(self, 0),
            };
            let zero = self.u32_lit(0);
            self.emit(Stmt::Store {
                mem: p,
                index: zero,
                value: start,
                at: strata::ir::SourceLoc::NONE,
            });
            let step = match (t, self.r.below(4)) {
                (Scalar::U32, 0) => k,
                (_, n) => lit(self, n.max(1) as i64),
            };
            self.blocks.push(Vec::new());
            self.scope.push(Vec::new());
            let v = self.f.new_value(Type::scalar(t), None);
            self.emit(Stmt::Load {
                value: v,
                mem: p,
                index: zero,
                at: strata::ir::SourceLoc::NONE,
            });
            let x = self.e(Expr::Value(v), t);
            self.scope.last_mut().unwrap().push((x, t));
            let limit = lit(self, 48);
            let below = self.e(Expr::Binary(BinaryOp::Lt, x, limit), Scalar::Bool);
            let own = self.expr(Scalar::Bool, 2);
            let stay = self.e(Expr::Binary(BinaryOp::And, below, own), Scalar::Bool);
            let test = if self.r.below(2) == 0 {
                let leave = self.e(Expr::Unary(UnaryOp::Not, stay), Scalar::Bool);
                Stmt::If {
                    cond: leave,
                    then: vec![Stmt::Break(id)],
                    otherwise: Vec::new(),
                }
            } else {
                Stmt::If {
                    cond: stay,
                    then: Vec::new(),
                    otherwise: vec![Stmt::Break(id)],
                }
            };
            self.emit(test);
            let sum = if self.r.below(2) == 0 {
                Expr::Binary(BinaryOp::Add, x, step)
            } else {
                Expr::Binary(BinaryOp::Add, step, x)
            };
            let next = self.e(sum, t);
            let count = Stmt::Store {
                mem: p,
                index: zero,
                value: next,
                at: strata::ir::SourceLoc::NONE,
            };
            self.loops.push(id);
            let mut rest = self.block(depth + 1, 3);
            self.loops.pop();
            // No other store of the count (one could hold it below the limit for ever), and
            // no escape loop inside (which could count the same variable).
            fn keep_count(block: &mut Vec<Stmt>, p: Mem) {
                block.retain(|s| {
                    !matches!(s, Stmt::Store { mem, .. } if *mem == p)
                        && !matches!(s, Stmt::Loop { .. })
                });
                for s in block.iter_mut() {
                    match s {
                        Stmt::If {
                            then, otherwise, ..
                        } => {
                            keep_count(then, p);
                            keep_count(otherwise, p);
                        }
                        Stmt::For { body, .. } | Stmt::Loop { body, .. } => keep_count(body, p),
                        _ => {}
                    }
                }
            }
            keep_count(&mut rest, p);
            // At the end only where no `continue` of the loop would skip it (and loop for
            // ever).
            let mut continued = false;
            strata::ir::walk_block(&rest, &mut |s| {
                continued |= matches!(s, Stmt::Continue(c) if *c == id)
            });
            if continued || self.r.below(2) == 0 {
                self.emit(count);
                self.blocks.last_mut().unwrap().append(&mut rest);
            } else {
                self.blocks.last_mut().unwrap().append(&mut rest);
                self.emit(count);
            }
            self.scope.pop();
            let body = self.blocks.pop().unwrap();
            self.emit(Stmt::Loop { id, body });
        }

        pub fn stmt(&mut self, depth: u32) {
            if self.tiles && depth == 0 && self.r.below(4) == 0 {
                return self.tile();
            }
            let zero = self.e(
                Expr::Literal(Literal::from_bits(Scalar::U32, 0)),
                Scalar::U32,
            );
            match self.r.below(12) {
                0..=2 => {
                    let t = self.r.pick(self.types);
                    let e = self.expr(t, 3);
                    self.value(e, t);
                }
                3 | 4 => {
                    let t = self.r.pick(self.types);
                    let e = self.expr(t, 3);
                    self.emit(Stmt::Store {
                        mem: Mem::Private(PrivateId::new(Self::ty_index(t))),
                        index: zero,
                        value: e,
                        at: strata::ir::SourceLoc::NONE,
                    });
                }
                5 if self.types.len() == TYPES.len()
                    && self.phase.is_none()
                    && self.r.below(3) == 0 =>
                {
                    self.atomic()
                }
                5 => {
                    let t = self.r.pick(self.types);
                    let e = self.expr(t, 2);
                    let i = self.gid();
                    self.emit(Stmt::Store {
                        mem: Mem::Buffer(ParamId::new(TYPES.len() + Self::ty_index(t))),
                        index: i,
                        value: e,
                        at: strata::ir::SourceLoc::NONE,
                    });
                }
                6 | 7 if depth < 3 => {
                    let cond = self.expr(Scalar::Bool, 2);
                    let then = self.block(depth + 1, 3);
                    let otherwise = if self.r.below(2) == 0 {
                        Vec::new()
                    } else {
                        self.block(depth + 1, 2)
                    };
                    self.emit(Stmt::If {
                        cond,
                        then,
                        otherwise,
                    });
                }
                // (Not in kernels with barriers: there the first fault in a divergent
                // loop need not be the interpreter's, a difference this generator found and
                // the changelog records.)
                8 if depth < 3 && self.phase.is_none() && self.r.below(3) == 0 => {
                    self.counted_loop(depth)
                }
                8 if depth < 3 => {
                    let id = LoopId::from_raw(self.f.loop_count);
                    self.f.loop_count += 1;
                    // Counters of 8 to 64 bits (32 for [`Gen::new_32`]).
                    let ct = if self.types.len() == TYPES.len() {
                        self.r.pick(&[
                            Scalar::U32,
                            Scalar::U32,
                            Scalar::I64,
                            Scalar::U64,
                            Scalar::I8,
                            Scalar::U16,
                        ])
                    } else {
                        self.r.pick(&[Scalar::U32, Scalar::U32, Scalar::I32])
                    };
                    let var = self.f.new_value(Type::scalar(ct), None);
                    let x = self.expr(ct, 1);
                    let seven = self.e(Expr::Literal(Literal::from_bits(ct, 7)), ct);
                    let trips = self.e(Expr::Binary(BinaryOp::Rem, x, seven), ct);
                    let one = self.e(Expr::Literal(Literal::from_bits(ct, 1)), ct);
                    // From 0, or from a value of each work-item's own (a chunk's start:
                    // the lanes run the same iterations where their trip counts agree).
                    let from_zero = self.r.below(2) == 0;
                    // Or a loop unrolled by hand (a 32-bit counter from each work-item's
                    // own start, step 4, trips the same for the lanes or not): a row of four
                    // loads of consecutive elements at the top of its body.
                    let row = !from_zero
                        && matches!(ct, Scalar::U32 | Scalar::I32)
                        && self.r.below(4) != 0;
                    // Or a striped loop (a 32-bit counter from the global id plus something
                    // uniform, a uniform step of 4, 8 or `k % 3 + 3`, an end the lanes share
                    // or not).
                    let striped = !from_zero
                        && !row
                        && matches!(ct, Scalar::U32 | Scalar::I32)
                        && self.r.below(2) == 0;
                    let mut striped_step = None;
                    let (zero, end) = if striped {
                        let as_ct = |g: &mut Self, e: ExprId| match ct {
                            Scalar::U32 => e,
                            _ => g.e(Expr::Cast(e, ct), ct),
                        };
                        let k = self.e(Expr::Param(ParamId::new(K)), Scalar::U32);
                        let k = as_ct(self, k);
                        let nine = self.e(Expr::Literal(Literal::from_bits(ct, 9)), ct);
                        let u = self.e(Expr::Binary(BinaryOp::Rem, k, nine), ct);
                        // (The global id: the results must not depend on the local size.)
                        let id = self.gid();
                        let id = as_ct(self, id);
                        let start = self.e(Expr::Binary(BinaryOp::Add, id, u), ct);
                        let step = match self.r.below(3) {
                            0 => self.e(Expr::Literal(Literal::from_bits(ct, 4)), ct),
                            1 => self.e(Expr::Literal(Literal::from_bits(ct, 8)), ct),
                            _ => {
                                let three = self.e(Expr::Literal(Literal::from_bits(ct, 3)), ct);
                                let r = self.e(Expr::Binary(BinaryOp::Rem, k, three), ct);
                                self.e(Expr::Binary(BinaryOp::Add, r, three), ct)
                            }
                        };
                        striped_step = Some(step);
                        let trips = match self.r.below(3) {
                            0 => trips,
                            _ => {
                                let r = self.e(Expr::Binary(BinaryOp::Rem, k, seven), ct);
                                self.e(Expr::Binary(BinaryOp::Add, r, one), ct)
                            }
                        };
                        let span = self.e(Expr::Binary(BinaryOp::Mul, trips, step), ct);
                        (start, self.e(Expr::Binary(BinaryOp::Add, u, span), ct))
                    } else if from_zero {
                        let zero = self.e(Expr::Literal(Literal::from_bits(ct, 0)), ct);
                        // Sometimes bounds the lanes share (`k % 7`): one counter for all
                        // lanes where they all enter.
                        let trips = match self.r.below(3) {
                            0 => {
                                let k = self.e(Expr::Param(ParamId::new(K)), Scalar::U32);
                                let k = match ct {
                                    Scalar::U32 => k,
                                    _ => self.e(Expr::Cast(k, ct), ct),
                                };
                                self.e(Expr::Binary(BinaryOp::Rem, k, seven), ct)
                            }
                            _ => trips,
                        };
                        (zero, trips)
                    } else {
                        let mut x = self.expr(ct, 1);
                        let as_ct = |g: &mut Self, e: ExprId| match ct {
                            Scalar::U32 => e,
                            _ => g.e(Expr::Cast(e, ct), ct),
                        };
                        if row {
                            // Each work-item's own start (the rows' fast loop needs four
                            // lanes whose bounds differ).
                            let id = self.gid();
                            let id = as_ct(self, id);
                            x = self.e(Expr::Binary(BinaryOp::Add, id, x), ct);
                        }
                        let nine = self.e(Expr::Literal(Literal::from_bits(ct, 9)), ct);
                        let start = self.e(Expr::Binary(BinaryOp::Rem, x, nine), ct);
                        let trips = match row {
                            true => {
                                // Mostly the same for the lanes: `k % 7 + 1`.
                                let trips = match self.r.below(4) {
                                    0 => trips,
                                    _ => {
                                        let k = self.e(Expr::Param(ParamId::new(K)), Scalar::U32);
                                        let k = as_ct(self, k);
                                        let r = self.e(Expr::Binary(BinaryOp::Rem, k, seven), ct);
                                        self.e(Expr::Binary(BinaryOp::Add, r, one), ct)
                                    }
                                };
                                let four = self.e(Expr::Literal(Literal::from_bits(ct, 4)), ct);
                                self.e(Expr::Binary(BinaryOp::Mul, trips, four), ct)
                            }
                            false => trips,
                        };
                        (start, self.e(Expr::Binary(BinaryOp::Add, start, trips), ct))
                    };
                    let one = match (row, striped_step) {
                        (true, _) => self.e(Expr::Literal(Literal::from_bits(ct, 4)), ct),
                        (false, Some(step)) => step,
                        (false, None) => one,
                    };
                    // A striped loop's body leaves neither it nor a loop around it, nor the
                    // kernel (a `break`, `continue` or `return` would send it to the
                    // general loop): its lanes run together wherever their trip counts agree.
                    let hidden = striped_step.map(|_| {
                        let ret = std::mem::replace(&mut self.may_return, false);
                        (std::mem::take(&mut self.loops), ret)
                    });
                    if hidden.is_none() {
                        self.loops.push(id);
                    }
                    let counter = self.e(Expr::Value(var), ct);
                    self.scope.push(vec![(counter, ct)]);
                    // The row's loads: `in[(counter + o) + j]`, below 8 + 28 + 23 + 3.
                    let mut row_loads = Vec::new();
                    let mut row_values = Vec::new();
                    let t = self.r.pick(&[Scalar::I32, Scalar::U32, Scalar::F32]);
                    if row {
                        let o = self.r.below(24);
                        let o = self.e(Expr::Literal(Literal::from_bits(ct, o)), ct);
                        let base = self.e(Expr::Binary(BinaryOp::Add, counter, o), ct);
                        for j in 0..4 {
                            let j = self.e(Expr::Literal(Literal::from_bits(ct, j)), ct);
                            let index = self.e(Expr::Binary(BinaryOp::Add, base, j), ct);
                            let v = self.f.new_value(Type::scalar(t), None);
                            row_loads.push(Stmt::Load {
                                value: v,
                                mem: Mem::Buffer(ParamId::new(Self::ty_index(t))),
                                index,
                                at: strata::ir::SourceLoc::NONE,
                            });
                            let x = self.e(Expr::Value(v), t);
                            self.scope.last_mut().unwrap().push((x, t));
                            row_values.push(x);
                        }
                    }
                    // (A counter from a work-item's own start is no shared index below 7.)
                    let shared = ct == Scalar::U32 && from_zero;
                    if shared {
                        self.counters.push(counter);
                    }
                    let mut body = self.block(depth + 1, 3);
                    if shared {
                        self.counters.pop();
                    }
                    self.scope.pop();
                    match hidden {
                        Some((loops, ret)) => {
                            self.loops = loops;
                            self.may_return = ret;
                        }
                        None => {
                            self.loops.pop();
                        }
                    }
                    row_loads.append(&mut body);
                    if striped_step.is_some() {
                        // Every iteration counts: the counter added to the private variable
                        // of its type (which the kernel writes out).
                        let p = Mem::Private(PrivateId::new(Self::ty_index(ct)));
                        let zero = self.u32_lit(0);
                        let old = self.f.new_value(Type::scalar(ct), None);
                        row_loads.push(Stmt::Load {
                            value: old,
                            mem: p,
                            index: zero,
                            at: strata::ir::SourceLoc::NONE,
                        });
                        let old = self.e(Expr::Value(old), ct);
                        let sum = self.e(Expr::Binary(BinaryOp::Add, old, counter), ct);
                        row_loads.push(Stmt::Store {
                            mem: p,
                            index: zero,
                            value: sum,
                            at: strata::ir::SourceLoc::NONE,
                        });
                    }
                    if let Some(&first) = row_values.first() {
                        // The row's sum added to the private variable of its type (which the
                        // kernel writes out), so that every element read counts.
                        let p = Mem::Private(PrivateId::new(Self::ty_index(t)));
                        let zero = self.u32_lit(0);
                        let old = self.f.new_value(Type::scalar(t), None);
                        row_loads.push(Stmt::Load {
                            value: old,
                            mem: p,
                            index: zero,
                            at: strata::ir::SourceLoc::NONE,
                        });
                        let mut sum = self.e(Expr::Value(old), t);
                        for &x in std::iter::once(&first).chain(&row_values[1..]) {
                            sum = self.e(Expr::Binary(BinaryOp::Add, sum, x), t);
                        }
                        row_loads.push(Stmt::Store {
                            mem: p,
                            index: zero,
                            value: sum,
                            at: strata::ir::SourceLoc::NONE,
                        });
                    }
                    let body = row_loads;
                    self.emit(Stmt::For {
                        id,
                        var,
                        start: zero,
                        end,
                        step: one,
                        body,
                    });
                }
                9 if !self.loops.is_empty() => {
                    let cond = self.expr(Scalar::Bool, 2);
                    let target = self.r.pick(&self.loops.clone());
                    let jump = if self.r.below(2) == 0 {
                        Stmt::Break(target)
                    } else {
                        Stmt::Continue(target)
                    };
                    self.emit(Stmt::If {
                        cond,
                        then: vec![jump],
                        otherwise: Vec::new(),
                    });
                }
                10 if self.phase.is_some() && self.r.below(2) == 0 => self.local_store(),
                10 if self.may_return && self.r.below(4) == 0 => {
                    let cond = self.expr(Scalar::Bool, 2);
                    self.emit(Stmt::If {
                        cond,
                        then: vec![Stmt::Return],
                        otherwise: Vec::new(),
                    });
                }
                _ => {
                    let t = self.r.pick(self.types);
                    self.load(t);
                }
            }
        }

        /// The kernel: `n` statements (with barriers, collectives and a loop at the group
        /// level between them, for a kernel with barriers), then every private variable stored
        /// to the work-item's element of its output.
        pub fn kernel(mut self, n: u32) -> Function {
            if self.phase.is_some() {
                let parts = 2 + self.r.below(3) as u32;
                for p in 0..parts {
                    for _ in 0..n / parts {
                        self.stmt(0);
                    }
                    if p + 1 == parts {
                        self.may_return = true;
                        for _ in 0..2 {
                            self.stmt(0);
                        }
                    } else if self.r.below(3) == 0 {
                        self.group_loop(2);
                    } else {
                        self.sync();
                    }
                }
            } else {
                for _ in 0..n {
                    self.stmt(0);
                }
            }
            for &t in self.types {
                let p = Self::ty_index(t);
                let v = self.f.new_value(Type::scalar(t), None);
                let zero = self.e(
                    Expr::Literal(Literal::from_bits(Scalar::U32, 0)),
                    Scalar::U32,
                );
                self.emit(Stmt::Load {
                    value: v,
                    mem: Mem::Private(PrivateId::new(p)),
                    index: zero,
                    at: strata::ir::SourceLoc::NONE,
                });
                let x = self.e(Expr::Value(v), t);
                let i = self.gid();
                self.emit(Stmt::Store {
                    mem: Mem::Buffer(ParamId::new(TYPES.len() + p)),
                    index: i,
                    value: x,
                    at: strata::ir::SourceLoc::NONE,
                });
            }
            self.f.body = self.blocks.pop().unwrap();
            self.f
        }
    }
}

/// The inputs of the random kernels, one buffer of each type of [`random::TYPES`] (with a
/// NaN, an infinity and a negative zero among the floats, large and negative 64-bit
/// integers), and the run of one on a device.
mod random_run {
    use super::random::N;
    use strata::prelude::*;

    /// The outputs of one run, floats as bits (every NaN one: the interpreter's and the
    /// backend's NaNs agree in being NaNs).
    pub type Out = (
        Vec<i32>,
        Vec<u32>,
        Vec<u32>,
        Vec<i64>,
        Vec<u64>,
        Vec<u64>,
        Vec<i8>,
        Vec<u8>,
        Vec<i16>,
        Vec<u16>,
    );

    /// Runs `k` (the random kernel of `seed`, printed as `text`) on `cpu` and `interp` over
    /// the largest multiple of each local size in `locals` up to `N` work-items, and fails
    /// where the two differ (results or errors).
    pub fn agree(
        (cpu, interp): &(&Queue, &Queue),
        inputs: &Inputs,
        k: &Kernel,
        (seed, text): (u64, &str),
        locals: &[usize],
        barriers: bool,
    ) {
        let n = N as usize;
        for &local in locals {
            let len = n - n % local;
            let want = inputs.run(interp, k, len, local, barriers);
            let got = inputs.run(cpu, k, len, local, barriers);
            assert!(
                got == want,
                "seed {seed}, local size {local}: cpu {got:?}\ninterp {want:?}\n{text}"
            );
        }
    }

    pub struct Inputs {
        ints: Vec<i32>,
        uints: Vec<u32>,
        floats: Vec<f32>,
        longs: Vec<i64>,
        ulongs: Vec<u64>,
        doubles: Vec<f64>,
        i8s: Vec<i8>,
        u8s: Vec<u8>,
        i16s: Vec<i16>,
        u16s: Vec<u16>,
    }

    impl Inputs {
        pub fn new() -> Inputs {
            let n = N as usize;
            let mut floats: Vec<f32> = (0..n).map(|i| i as f32 * 1.25 - 30.0).collect();
            floats[5] = f32::NAN;
            floats[9] = f32::INFINITY;
            floats[13] = -0.0;
            let mut doubles: Vec<f64> = (0..n).map(|i| i as f64 * 0.75 - 20.0).collect();
            doubles[3] = f64::NAN;
            doubles[11] = f64::NEG_INFINITY;
            doubles[17] = -0.0;
            doubles[21] = 1e300;
            Inputs {
                ints: (0..n as i32).map(|i| (i * 7919) % 201 - 100).collect(),
                uints: (0..N)
                    .map(|i| i.wrapping_mul(2_654_435_761) >> (i % 29))
                    .collect(),
                floats,
                longs: (0..n as i64)
                    .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64) >> (i % 61))
                    .collect(),
                ulongs: (0..n as u64)
                    .map(|i| i.wrapping_mul(0xC2B2_AE3D_27D4_EB4F) >> (i % 53))
                    .collect(),
                doubles,
                i8s: (0..n).map(|i| (i * 37 % 256) as u8 as i8).collect(),
                u8s: (0..n).map(|i| (i * 91 % 256) as u8).collect(),
                i16s: (0..n).map(|i| (i * 7919 % 65536) as u16 as i16).collect(),
                u16s: (0..n).map(|i| (i * 40503 % 65536) as u16).collect(),
            }
        }

        /// Runs `k` on `q` over `global` work-items in groups of `local` (a kernel with
        /// barriers also gets its local array of `2 * local` elements).
        pub fn run(
            &self,
            q: &Queue,
            k: &Kernel,
            global: usize,
            local: usize,
            barriers: bool,
        ) -> Result<Out, String> {
            let n = N as usize;
            let i = Buffer::from_slice(q, &self.ints).unwrap();
            let u = Buffer::from_slice(q, &self.uints).unwrap();
            let fl = Buffer::from_slice(q, &self.floats).unwrap();
            let l = Buffer::from_slice(q, &self.longs).unwrap();
            let ul = Buffer::from_slice(q, &self.ulongs).unwrap();
            let d = Buffer::from_slice(q, &self.doubles).unwrap();
            let oi = Buffer::<i32>::new(q.device(), n).unwrap();
            let ou = Buffer::<u32>::new(q.device(), n).unwrap();
            let of = Buffer::<f32>::new(q.device(), n).unwrap();
            let ol = Buffer::<i64>::new(q.device(), n).unwrap();
            let oul = Buffer::<u64>::new(q.device(), n).unwrap();
            let od = Buffer::<f64>::new(q.device(), n).unwrap();
            let b8 = Buffer::from_slice(q, &self.i8s).unwrap();
            let bu8 = Buffer::from_slice(q, &self.u8s).unwrap();
            let b16 = Buffer::from_slice(q, &self.i16s).unwrap();
            let bu16 = Buffer::from_slice(q, &self.u16s).unwrap();
            let o8 = Buffer::<i8>::new(q.device(), n).unwrap();
            let ou8 = Buffer::<u8>::new(q.device(), n).unwrap();
            let o16 = Buffer::<i16>::new(q.device(), n).unwrap();
            let ou16 = Buffer::<u16>::new(q.device(), n).unwrap();
            let range = NdRange::new(global).local(local);
            let r = if barriers {
                k.launch(
                    q,
                    range,
                    args![
                        &i,
                        &u,
                        &fl,
                        &l,
                        &ul,
                        &d,
                        &b8,
                        &bu8,
                        &b16,
                        &bu16,
                        &oi,
                        &ou,
                        &of,
                        &ol,
                        &oul,
                        &od,
                        &o8,
                        &ou8,
                        &o16,
                        &ou16,
                        37u32,
                        LocalMem::<u32>::new(2 * local)
                    ],
                )
            } else {
                k.launch(
                    q,
                    range,
                    args![
                        &i, &u, &fl, &l, &ul, &d, &b8, &bu8, &b16, &bu16, &oi, &ou, &of, &ol, &oul,
                        &od, &o8, &ou8, &o16, &ou16, 37u32
                    ],
                )
            };
            r.map_err(|e| e.to_string())?;
            let f32s = q
                .read(&of)
                .unwrap()
                .iter()
                .map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() })
                .collect();
            let f64s = q
                .read(&od)
                .unwrap()
                .iter()
                .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
                .collect();
            Ok((
                q.read(&oi).unwrap(),
                q.read(&ou).unwrap(),
                f32s,
                q.read(&ol).unwrap(),
                q.read(&oul).unwrap(),
                f64s,
                q.read(&o8).unwrap(),
                q.read(&ou8).unwrap(),
                q.read(&o16).unwrap(),
                q.read(&ou16).unwrap(),
            ))
        }
    }
}

/// The random kernels of [`random::Gen::with_barriers`]: regions between barriers,
/// collectives and group-level loops, values and private variables across them, local memory,
/// loads at clamped indices; the vector variant (local sizes 4, 8, 16) and the scalar code
/// (2, 6) against the
/// interpreter at the same local size (the results depend on it).
#[test]
fn random_simd_kernels_with_barriers_agree_with_the_interpreter() {
    use random::{Gen, N};
    let (cpu, interp) = queues();
    let n = N as usize;
    let inputs = random_run::Inputs::new();
    let (mut runs, mut failed, mut vector) = (0, 0, 0);
    for seed in 1..=200u64 {
        let mut g = Gen::with_barriers(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        // Stencil loads too: in a region entered by part of the lanes, the copy for blocks
        // where no clamp binds still tests the mask.
        g.clamps = true;
        let f = g.kernel(9);
        let text = f.to_string();
        let k = Kernel::from_ir(f).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        vector += k.cpu_vector_variant().is_ok() as u32;
        for local in [4, 8, 16, 2, 6] {
            let want = inputs.run(&interp, &k, n - n % local, local, true);
            let got = inputs.run(&cpu, &k, n - n % local, local, true);
            runs += 1;
            failed += want.is_err() as u32;
            assert!(
                got == want,
                "seed {seed}, local size {local}: cpu {got:?}\ninterp {want:?}\n{text}"
            );
        }
    }
    // Errors (a barrier some work-items skip after a `return`) agree too, but most runs
    // must compare results.
    assert!(failed * 4 < runs, "{failed} of {runs} runs failed");
    // Most have the vector variant (the others gather lane by lane in a loop).
    assert!(
        vector > 150,
        "{vector} of 200 kernels have the vector variant"
    );
}

/// The random kernels of [`random::Gen::new`] and [`random::Gen::with_barriers`] with
/// expressions through vectors ([`random::Gen::vector_expr`]: every lane type, widths 2 to
/// 4, swizzles, splats, element-wise operators, compares and selects of vectors, casts,
/// vector values): every one without barriers has the vector variant (the vector types
/// split), and the vector variant and the scalar code agree with the interpreter bit for bit.
#[test]
fn random_simd_kernels_with_vector_types_agree_with_the_interpreter() {
    use random::Gen;
    let (cpu, interp) = queues();
    let inputs = random_run::Inputs::new();
    let mut vector = 0;
    for seed in 1..=120u64 {
        let barriers = seed % 2 == 0;
        let s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5eed;
        let mut g = if barriers {
            Gen::with_barriers(s)
        } else {
            Gen::new(s)
        };
        g.vectors = true;
        let f = g.kernel(8);
        let text = f.to_string();
        assert!(
            text.contains("x4") || text.contains("x2") || text.contains("x3"),
            "{text}"
        );
        let k = Kernel::from_ir(f).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        if !barriers {
            k.cpu_vector_variant()
                .unwrap_or_else(|why| panic!("seed {seed}: no vector variant: {why}\n{text}"));
        }
        vector += k.cpu_vector_variant().is_ok() as u32;
        let locals: &[usize] = if barriers { &[4, 8, 2] } else { &[8, 16, 2] };
        random_run::agree(
            &(&cpu, &interp),
            &inputs,
            &k,
            (seed, &text),
            locals,
            barriers,
        );
    }
    assert!(
        vector > 90,
        "{vector} of 120 kernels have the vector variant"
    );
}

/// The random kernels of [`random::Gen::new`] (values, buffers, private variables and
/// conversions of 8-, 16-, 32- and 64-bit integers and of floats, divergent control flow): the vector
/// variant (local sizes 8, 16) and the scalar code (2) against the interpreter, bit for bit.
#[test]
fn random_simd_kernels_agree_with_the_interpreter() {
    use random::{Gen, N};
    let (cpu, interp) = queues();
    let n = N as usize;
    let inputs = random_run::Inputs::new();
    for seed in 1..=300u64 {
        let mut g = Gen::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        g.clamps = true;
        let f = g.kernel(8);
        let text = f.to_string();
        let k = Kernel::from_ir(f).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        // Every one of them has the vector variant (64-bit lanes included).
        k.cpu_vector_variant()
            .unwrap_or_else(|why| panic!("seed {seed}: no vector variant: {why}\n{text}"));
        let want = inputs
            .run(&interp, &k, n, 8, false)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        for local in [8, 16, 2] {
            let got = inputs
                .run(&cpu, &k, n, local, false)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
            assert!(
                got == want,
                "seed {seed}, local size {local}: cpu {got:?}\ninterp {want:?}\n{text}"
            );
        }
    }
}

/// The random kernels of [`random::Gen::new`] and [`random::Gen::with_barriers`] with
/// register tiles ([`random::Gen::tile`]: twelve private variables of random types, each
/// updated in three steps, the run that the vector variant lowers a group of variables at a
/// time): the vector variant (four and eight lanes) and the scalar code against the
/// interpreter, bit for bit.
#[test]
fn random_register_tiles_agree_with_the_interpreter() {
    use random::Gen;
    let (cpu, interp) = queues();
    let inputs = random_run::Inputs::new();
    let mut tiles = 0;
    for seed in 1..=80u64 {
        let barriers = seed % 3 == 0;
        let s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x711e;
        let mut g = if barriers {
            Gen::with_barriers(s)
        } else if seed % 3 == 1 {
            Gen::new_32(s)
        } else {
            Gen::new(s)
        };
        g.tiles = true;
        let f = g.kernel(6);
        let text = f.to_string();
        tiles += text.contains("tile") as u32;
        let k = Kernel::from_ir(f).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        if !barriers {
            k.cpu_vector_variant()
                .unwrap_or_else(|why| panic!("seed {seed}: no vector variant: {why}\n{text}"));
        }
        let locals: &[usize] = if barriers { &[4, 8, 2] } else { &[8, 4, 16, 2] };
        random_run::agree(
            &(&cpu, &interp),
            &inputs,
            &k,
            (seed, &text),
            locals,
            barriers,
        );
    }
    assert!(tiles > 40, "{tiles} of 80 kernels have a register tile");
}

/// The random kernels of [`random::Gen::new_32`] (32-bit values and `bool`s: divergent
/// control flow, loops whose lanes leave at different iterations, gathers, shifts, integer
/// division, casts, selects): every one has the eight-lane variant, which runs where the
/// work-group's size in dimension 0 is a multiple of 8 (8, 16, 24, 64), but those with a
/// loop whose lanes four lanes run together from their own starts, reading its loads as
/// tiles (or, unrolled by hand, as rows of tiles: 37 of the 150 in all); 4 and 12 run the
/// four-lane variant and 2 the scalar code; each against the interpreter at the same launch,
/// bit for bit.
#[test]
fn random_kernels_of_32_bit_values_take_eight_lanes_and_agree_with_the_interpreter() {
    use random::{Gen, N};
    let (cpu, interp) = queues();
    let n = N as usize;
    let inputs = random_run::Inputs::new();
    let mut four = 0;
    for seed in 1..=150u64 {
        let mut g = Gen::new_32(seed.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        g.clamps = true;
        let f = g.kernel(8);
        let text = f.to_string();
        let k = Kernel::from_ir(f).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        if let Err(why) = k.cpu_eight_lane_variant() {
            assert!(
                why.contains("same iterations"),
                "seed {seed}: no eight-lane variant: {why}\n{text}"
            );
            four += 1;
        }
        for local in [8, 16, 24, 64, 4, 12, 2] {
            let global = n - n % local;
            let want = inputs.run(&interp, &k, global, local, false);
            let got = inputs.run(&cpu, &k, global, local, false);
            assert!(
                got == want,
                "seed {seed}, local size {local}: cpu {got:?}\ninterp {want:?}\n{text}"
            );
        }
    }
    // (At most 15 before the loops unrolled by hand kept four lanes too.)
    assert!(
        four <= 40,
        "{four} of 150 kernels without the eight-lane variant"
    );
}

/// Which kernels have the eight-lane variant: 32-bit values and `bool`s in one region; not a
/// kernel with a 64-bit or 8-bit value, nor one with a barrier, nor one whose work-items each
/// loop over their own stretch of a buffer (each with the reason).
#[test]
fn eight_lanes_take_one_region_kernels_of_32_bit_values() {
    let plain = Kernel::build("plain", |k| {
        let x = k.read::<f32>("x");
        let y = k.write::<f32>("y");
        let i = global_id(0);
        y.set(i, x.at(i) * 2.0f32);
    })
    .unwrap();
    assert_eq!(plain.cpu_eight_lane_variant(), Ok(()));
    let wide = Kernel::build("wide", |k| {
        let x = k.read::<f64>("x");
        let y = k.write::<f64>("y");
        let i = global_id(0);
        y.set(i, x.at(i) * 2.0f64);
    })
    .unwrap();
    assert_eq!(wide.cpu_vector_variant(), Ok(()));
    let why = wide.cpu_eight_lane_variant().unwrap_err();
    assert!(why.contains("f64"), "{why}");
    let bytes = Kernel::build("bytes", |k| {
        let x = k.read::<u8>("x");
        let y = k.write::<u8>("y");
        let i = global_id(0);
        y.set(i, x.at(i) + 1u8);
    })
    .unwrap();
    let why = bytes.cpu_eight_lane_variant().unwrap_err();
    assert!(why.contains("u8"), "{why}");
    let synced = Kernel::build("synced", |k| {
        let x = k.read::<u32>("x");
        let y = k.write::<u32>("y");
        let i = global_id(0);
        let v = x.at(i);
        barrier();
        y.set(i, v + 1u32);
    })
    .unwrap();
    assert_eq!(synced.cpu_vector_variant(), Ok(()));
    assert_eq!(
        synced.cpu_eight_lane_variant(),
        Err("barriers or collectives".to_string())
    );
    // Each work-item summing its own chunk: four lanes read the chunks as tiles (the same
    // iterations from each lane's start), eight would gather them lane by lane (7x slower
    // at 2^24), so groups of eight run the four-lane code; the interpreter's sums, bit for
    // bit, in groups of 8, 4 and 3.
    let chunks = Kernel::build("chunks", |k| {
        let x = k.read::<f32>("x");
        let out = k.write::<f32>("out");
        let acc = var(0.0f32);
        let chunk = (x.len() + global_size(0) - 1u32) / global_size(0);
        let start = global_id(0) * chunk;
        for_range(
            start.min(x.len()),
            (start + chunk).min(x.len()),
            |i: Expr<u32>| acc.set(acc.get() + x.at(i)),
        );
        out.set(global_id(0), acc.get());
    })
    .unwrap();
    assert_eq!(chunks.cpu_vector_variant(), Ok(()));
    let why = chunks.cpu_eight_lane_variant().unwrap_err();
    assert!(why.contains("same iterations"), "{why}");
    let (cpu, interp) = queues();
    let xs: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.731).sin()).collect();
    for local in [8, 4, 3] {
        let run = |q: &Queue| {
            let x = Buffer::from_slice(q, &xs).unwrap();
            let out = Buffer::<f32>::new(q.device(), 24).unwrap();
            chunks
                .launch(q, NdRange::new(24).local(local), args![&x, &out])
                .unwrap();
            q.read(&out)
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(&cpu), run(&interp), "local {local}");
    }
    // The same with the chunk's loop unrolled by hand (a step of 16, sixteen loads of
    // `x[i + j]`): four lanes read its loads as rows of tiles, eight would gather them (14.0
    // against 2.6 ms for 2^24 `u32`, one thread; a step-1 loop for the rest of a chunk,
    // which four lanes read as tiles, kept eight lanes off already); the last chunk is short
    // (24 elements: one iteration, its last eight elements not read).
    let unrolled = Kernel::build("unrolled", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let start = global_id(0) * 32u32;
        let end = (start + 32u32).min(x.len());
        let count = select(end.gt(start), end - start, 0u32);
        let main_end = start + count / 16u32 * 16u32;
        let acc = var(0u32);
        for_step(start, main_end, 16u32, |i: Expr<u32>| {
            for j in 0..16u32 {
                acc.set(acc.get() * 3u32 + x.at(i + j));
            }
        });
        out.set(global_id(0), acc.get());
    })
    .unwrap();
    assert_eq!(unrolled.cpu_vector_variant(), Ok(()));
    let why = unrolled.cpu_eight_lane_variant().unwrap_err();
    assert!(why.contains("same iterations"), "{why}");
    let xs: Vec<u32> = (0..760u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    for local in [8, 4, 3] {
        let run = |q: &Queue| {
            let x = Buffer::from_slice(q, &xs).unwrap();
            let out = Buffer::<u32>::new(q.device(), 24).unwrap();
            unrolled
                .launch(q, NdRange::new(24).local(local), args![&x, &out])
                .unwrap();
            q.read(&out).unwrap()
        };
        assert_eq!(run(&cpu), run(&interp), "local {local}");
    }
}

/// An escape-time loop (the Mandelbrot iteration) and a counted `while` whose lanes leave at
/// different iterations in either half of eight (one half all done before the other starts,
/// alternate lanes, one lane far longer, none entering), with a `break` and a `continue`:
/// the eight-lane variant (8, 16, 24, 64), the four-lane one (4, 12) and the scalar code (1)
/// against the interpreter, bit for bit.
/// Iteration counts that the vector code keeps as one scalar for the active lanes
/// (`simd::trip_counters`): counted by a parameter (`k + it`), down from a parameter, from
/// a negative `i32`; read inside the loop (in an index, a comparison with a lane's own
/// value, a sum, a store) and after it; left by the `while` test, by a `break` after a store in an `if`, and
/// by a `break` of the outer loop from an inner one (the lanes' own counts taken as they
/// leave). And two that are not (a count stored in an `if`; a start that differs per lane).
/// The interpreter's results bit for bit, in eight lanes, four and one at a time.
#[test]
fn iteration_counts_kept_as_scalars_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("counts", |k| {
        let t = k.read::<u32>("t");
        let out = k.write::<u32>("out");
        let seen = k.write::<u32>("seen");
        let step = k.scalar::<u32>("step");
        let top = k.scalar::<u32>("top");
        let i = global_id(0);
        if_(i.lt(out.len()), || {
            let n = t.at(i);
            // Up by a parameter, `step + a`; the count as an index and in a sum.
            let a = var_named("a", 0u32);
            let sum = var_named("sum", 0u32);
            while_(
                || a.get().lt(n * 3u32),
                || {
                    let x = a.get();
                    seen.set(i, x + i);
                    sum.set(sum.get() * 3u32 + x + t.at((i * 7u32 + x) % t.len()));
                    a.set(step + x);
                },
            );
            // Down from a parameter; left by a break after a store in an `if`.
            let b = var_named("b", 0u32);
            b.set(top);
            let hit = var_named("hit", 0u32);
            loop_(|| {
                let x = b.get();
                if_(x.le(n), || {
                    hit.set(x * 100u32 + n);
                    break_();
                });
                b.set(x - 2u32);
                if_(x.lt(3u32), break_);
            });
            // From a negative `i32`, compared with each lane's own value; an inner loop
            // breaks out of the outer one.
            let c = var_named("c", 0i32);
            c.set(-5i32);
            let inner = var_named("inner", 0u32);
            loop_(|| {
                let outer = current_loop();
                let x = c.get();
                if_(x.ge(n.cast::<i32>() - 2i32), break_);
                let j = var_named("j", 0u32);
                loop_(|| {
                    inner.set(inner.get() + 1u32);
                    j.set(j.get() + 1u32);
                    if_(j.get().gt(2u32), break_);
                    if_(
                        (x + j.get().cast::<i32>()).eq(n.cast::<i32>() % 4i32),
                        || outer.break_(),
                    );
                });
                c.set(x + 1i32);
            });
            // Not iteration counts: a step in an `if`, a start of the lane's own.
            let d = var_named("d", 0u32);
            let e = var_named("e", 0u32);
            e.set(n % 3u32);
            while_(
                || d.get().lt(n).and(e.get().lt(40u32)),
                || {
                    if_((d.get() & 1u32).eq(0u32), || e.set(e.get() + 3u32));
                    d.set(d.get() + 1u32);
                    e.set(e.get() + 1u32);
                },
            );
            let mix = a.get() ^ (sum.get() << 3u32) ^ (b.get() << 7u32) ^ (hit.get() << 11u32);
            let mix = mix ^ (c.get().cast::<u32>() << 13u32) ^ (inner.get() << 17u32);
            out.set(i, mix ^ (d.get() << 21u32) ^ (e.get() << 25u32));
        });
    })
    .unwrap();
    assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
    let n = 200usize;
    let ts: Vec<u32> = (0..n as u32).map(|i| (i * 7 + i / 8) % 23).collect();
    let run = |q: &Queue, local: usize| {
        let t = Buffer::from_slice(q, &ts).unwrap();
        let out = Buffer::<u32>::new(q.device(), n).unwrap();
        let seen = Buffer::<u32>::new(q.device(), n).unwrap();
        k.launch(
            q,
            NdRange::new(n).local(local),
            args![&t, &out, &seen, 5u32, 41u32],
        )
        .unwrap();
        (q.read(&out).unwrap(), q.read(&seen).unwrap())
    };
    let want = run(&interp, 8);
    for local in [8, 40, 4, 20, 1] {
        assert_eq!(run(&cpu, local), want, "local size {local}");
    }
}

#[test]
fn eight_lanes_run_divergent_loops_as_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("escape", |k| {
        let trips = k.read::<u32>("trips");
        let out = k.write::<u32>("out");
        let fo = k.write::<f32>("fo");
        let w = k.scalar::<u32>("w");
        let i = global_id(0);
        if_(i.lt(out.len()), || {
            let cx = (i % w).cast::<f32>() * 0.125f32 - 2.0f32;
            let cy = (i / w).cast::<f32>() * 0.1875f32 - 1.5f32;
            let x = var_named("x", 0.0f32);
            let y = var_named("y", 0.0f32);
            let it = var_named("it", 0u32);
            while_(
                || {
                    let (zx, zy) = (x.get(), y.get());
                    it.get().lt(64u32).and((zx * zx + zy * zy).le(4.0f32))
                },
                || {
                    let (zx, zy) = (x.get(), y.get());
                    x.set(zx * zx - zy * zy + cx);
                    y.set(2.0f32 * zx * zy + cy);
                    it.set(it.get() + 1u32);
                },
            );
            let n = trips.at(i);
            let j = var_named("j", 0u32);
            let acc = var_named("acc", 0.0f32);
            while_(
                || j.get().lt(n),
                || {
                    j.set(j.get() + 1u32);
                    if_((j.get() % 5u32).eq(0u32), continue_);
                    acc.set(acc.get() * 0.75f32 + j.get().cast::<f32>());
                    if_(j.get().eq(n / 2u32 + 7u32), break_);
                },
            );
            out.set(i, it.get() * 1000u32 + j.get());
            fo.set(i, acc.get() + x.get());
        });
    })
    .unwrap();
    assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
    let n = 384usize;
    // Per group of eight: a pattern of trip counts.
    let patterns: [[u32; 8]; 7] = [
        [0, 0, 0, 0, 5, 9, 1, 30],
        [30, 2, 9, 4, 0, 0, 0, 0],
        [3, 3, 3, 3, 3, 3, 3, 3],
        [0; 8],
        [1, 0, 2, 0, 3, 0, 40, 0],
        [0, 25, 0, 1, 0, 2, 0, 3],
        [50, 1, 1, 1, 1, 1, 1, 19],
    ];
    let ts: Vec<u32> = (0..n)
        .map(|i| patterns[(i / 8 + i / 64) % patterns.len()][i % 8])
        .collect();
    let run = |q: &Queue, local: usize| {
        let t = Buffer::from_slice(q, &ts).unwrap();
        let out = Buffer::<u32>::new(q.device(), n).unwrap();
        let fo = Buffer::<f32>::new(q.device(), n).unwrap();
        k.launch(q, NdRange::new(n).local(local), args![&t, &out, &fo, 24u32])
            .unwrap();
        let f: Vec<u32> = q.read(&fo).unwrap().iter().map(|x| x.to_bits()).collect();
        (q.read(&out).unwrap(), f)
    };
    let want = run(&interp, 8);
    // Lanes left the escape loop at many different iterations.
    let its: std::collections::BTreeSet<u32> = want.0.iter().map(|v| v / 1000).collect();
    assert!(its.len() > 10, "{its:?}");
    for local in [8, 16, 24, 64, 4, 12, 1] {
        assert_eq!(run(&cpu, local), want, "local size {local}");
    }
}

/// Out-of-bounds loads and stores in either half of eight lanes, in straight-line code and in
/// a divergent loop: the error names the interpreter's work-item (the first faulting one in
/// local-id order) and line, on the eight-lane variant (8, 16, 24), the four-lane one (4,
/// 12) and the scalar code (1).
#[test]
fn eight_lanes_fault_as_the_interpreter_in_either_half() {
    let (cpu, interp) = queues();
    let k = Kernel::build("halves", |k| {
        let x = k.read::<u32>("x");
        let idx = k.read::<u32>("idx");
        let y = k.write::<u32>("y");
        let at = k.read::<u32>("at");
        let i = global_id(0);
        let v = x.at(idx.at(i));
        y.set(at.at(i), v + 1u32);
        let j = var_named("j", 0u32);
        let s = var_named("s", 0u32);
        while_(
            || j.get().lt(i % 5u32 + 1u32),
            || {
                s.set(s.get() + x.at(idx.at(i) + j.get() * 20u32));
                j.set(j.get() + 1u32);
            },
        );
        y.set(i, s.get());
    })
    .unwrap();
    assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
    // `idx[w] = bad` (a load past the end at `w`), `at[w] = bad` (a store), `idx[w] = 70`
    // (in bounds until the loop's third turn, `70 + 2 * 20`); the other work-items stay in
    // bounds (at most `6 + 4 * 20`).
    let run = |q: &Queue, local: usize, faults: &[(usize, u32, u32)]| {
        let n = local;
        let xs: Vec<u32> = (0..100).collect();
        let mut idx: Vec<u32> = (0..n as u32).map(|i| i % 7).collect();
        let mut at: Vec<u32> = (0..n as u32).collect();
        for &(w, kind, bad) in faults {
            if w < n {
                match kind {
                    0 => idx[w] = bad,
                    1 => at[w] = bad,
                    _ => idx[w] = 70,
                }
            }
        }
        let x = Buffer::from_slice(q, &xs).unwrap();
        let ib = Buffer::from_slice(q, &idx).unwrap();
        let ab = Buffer::from_slice(q, &at).unwrap();
        let y = Buffer::<u32>::new(q.device(), n).unwrap();
        k.launch(q, NdRange::new(n).local(local), args![&x, &ib, &y, &ab])
            .map(|_| q.read(&y).unwrap())
            .map_err(|e| e.to_string())
    };
    // (Faults at different statements in one work-group are left out: the interpreter runs
    // each statement for the whole group, the compiled code a vector of work-items at a
    // time, so they may name different work-items, on four lanes as on eight.)
    let cases: [&[(usize, u32, u32)]; 10] = [
        &[],
        &[(5, 0, 100)],
        &[(6, 0, 1000), (2, 0, 100)],
        &[(7, 1, 500)],
        &[(4, 1, u32::MAX), (13, 1, 200)],
        &[(12, 0, 100)],
        &[(21, 1, 99), (22, 0, 500)],
        // In the loop: work-items 7 (3 turns) and 3 (4 turns) at their third.
        &[(7, 2, 0)],
        &[(3, 2, 0), (8, 2, 0)],
        &[(13, 2, 0), (22, 2, 0)],
    ];
    for local in [8, 16, 24, 4, 12, 1] {
        for (c, faults) in cases.iter().enumerate() {
            let want = run(&interp, local, faults);
            if faults.iter().any(|&(w, ..)| w < local) {
                assert!(want.is_err(), "local {local}, case {c}: {want:?}");
            }
            assert_eq!(run(&cpu, local, faults), want, "local {local}, case {c}");
        }
    }
}

/// Divisions hoisted out of a divergent loop (`i / d` at the top of the body, `i % e` under an
/// `if` on odd turns), their zero-divisor tests made once before the loop (which lanes could
/// fault) and at the uses only then: a zero divisor faults where and when the interpreter's
/// does (the work-item, the message, the line), and not in a lane that leaves the loop (or
/// skips the `if`) before the division would run; a loop that runs zero times with a zero
/// divisor, for some lanes or all, does not fault. The eight-lane variant (8, 16, 24), the
/// four-lane one (4, 12) and the scalar code (1) against the interpreter.
#[test]
fn hoisted_divisions_in_divergent_loops_fault_as_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("hoisted", |k| {
        let d = k.read::<u32>("d");
        let e = k.read::<u32>("e");
        let t = k.read::<u32>("t");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        if_(i.lt(out.len()), || {
            let (dv, ev, n) = (d.at(i), e.at(i), t.at(i));
            let j = var_named("j", 0u32);
            let s = var_named("s", 0u32);
            while_(
                || j.get().lt(n),
                || {
                    s.set(s.get() + (i + 100u32) / dv + j.get());
                    if_((j.get() & 1u32).eq(1u32), || {
                        s.set(s.get() ^ ((i * 7u32 + 3u32) % ev));
                    });
                    j.set(j.get() + 1u32);
                },
            );
            out.set(i, s.get() * 3u32 + j.get());
        });
    })
    .unwrap();
    assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
    let n = 48usize;
    // Trip counts `i % 5`; `(w, 0)`: `d[w] = 0`, `(w, 1)`: `e[w] = 0`; `all_d`: every `d`
    // zero, `trips`: every trip count this. The flag: whether the interpreter faults.
    type Case = (&'static [(usize, u32)], bool, Option<u32>, bool);
    let cases: [Case; 12] = [
        (&[], false, None, false),
        // Zero trips (work-item 5): the division never runs.
        (&[(5, 0)], false, None, false),
        // One trip (6): the remainder's `if` (odd turns) never runs.
        (&[(6, 1)], false, None, false),
        // Two trips (7): the remainder faults on the second turn.
        (&[(7, 1)], false, None, true),
        (&[(3, 0)], false, None, true),
        // Both halves of eight, on the first turn: the first work-item.
        (&[(9, 0), (2, 0)], false, None, true),
        (&[(12, 0)], false, None, true),
        // A zero remainder divisor that faults, a zero divisor that never runs.
        (&[(13, 1), (20, 0)], false, None, true),
        // Every divisor zero: no trips, then the trips of `i % 5`.
        (&[], true, Some(0), false),
        (&[], true, None, true),
        // Every divisor zero, one trip each: the division faults for work-item 0.
        (&[], true, Some(1), true),
        // Zero trips everywhere but the upper half of the second eight.
        (&[(12, 0), (13, 0)], false, Some(0), false),
    ];
    let run = |q: &Queue, local: usize, c: &Case| {
        let (zeros, all_d, trips, _) = *c;
        let mut d: Vec<u32> = (0..n as u32).map(|i| i % 3 + 1).collect();
        let mut e: Vec<u32> = (0..n as u32).map(|i| i % 4 + 1).collect();
        let t: Vec<u32> = (0..n as u32).map(|i| trips.unwrap_or(i % 5)).collect();
        if all_d {
            d.fill(0);
        }
        for &(w, which) in zeros {
            if which == 0 {
                d[w] = 0;
            } else {
                e[w] = 0;
            }
        }
        let db = Buffer::from_slice(q, &d).unwrap();
        let eb = Buffer::from_slice(q, &e).unwrap();
        let tb = Buffer::from_slice(q, &t).unwrap();
        let out = Buffer::<u32>::new(q.device(), n).unwrap();
        k.launch(q, NdRange::new(n).local(local), args![&db, &eb, &tb, &out])
            .map(|_| q.read(&out).unwrap())
            .map_err(|e| e.to_string())
    };
    for local in [8, 16, 24, 4, 12, 1] {
        for (ci, c) in cases.iter().enumerate() {
            let want = run(&interp, local, c);
            assert_eq!(want.is_err(), c.3, "local {local}, case {ci}: {want:?}");
            if let Err(e) = &want {
                assert!(e.contains("by zero"), "{e}");
            }
            assert_eq!(run(&cpu, local, c), want, "local {local}, case {ci}");
        }
    }
}

/// Loops whose lanes leave only by their own `break` (the mask after them is the one before,
/// their breaks not recorded) beside loops that lose lanes otherwise (a `return` inside, an
/// inner loop's `break` of the outer one): counts stepped by 1 and by 3 and a float
/// accumulated under the loop's mask (a count's step is `old - mask` or `old + (k & mask)`),
/// then divergent code after each loop, on 32-bit values (eight lanes, four, scalar) and
/// 64-bit ones (four lanes, scalar), against the interpreter, bit for bit.
#[test]
fn loops_that_lose_lanes_by_break_or_otherwise_keep_the_interpreters_masks() {
    let (cpu, interp) = queues();
    let k = Kernel::build("leaving", |k| {
        let t = k.read::<u32>("t");
        let out = k.write::<u32>("out");
        let fo = k.write::<f32>("fo");
        let i = global_id(0);
        let n = t.at(i);
        let c = var_named("c", 0u32);
        let a = var_named("a", 5u32);
        let f = var_named("f", 0.5f32);
        loop_(|| {
            if_(c.get().ge(n), break_);
            c.set(c.get() + 1u32);
            a.set(a.get() + 3u32);
            f.set(f.get() * 1.5f32 + 0.25f32);
        });
        if_((i & 1u32).eq(0u32), || a.set(a.get() + 100u32));
        let m = var_named("m", 0u32);
        let g = var_named("g", 0u32);
        while_(
            || m.get().lt(n + 2u32),
            || {
                m.set(m.get() + 1u32);
                if_(m.get().eq(3u32).and((i % 3u32).eq(0u32)), || {
                    out.set(i, 7777u32 + g.get());
                    fo.set(i, f.get());
                    return_();
                });
                g.set(g.get() + m.get() * 2u32);
            },
        );
        let o = var_named("o", 0u32);
        let p = var_named("p", 0u32);
        let q = var_named("q", 0u32);
        loop_(|| {
            let outer = current_loop();
            o.set(o.get() + 1u32);
            p.set(0u32);
            loop_(|| {
                p.set(p.get() + 1u32);
                q.set(q.get() + 1u32);
                if_(p.get().gt(o.get()), break_);
                if_((o.get() + p.get()).gt(n + 3u32), || outer.break_());
            });
            if_(o.get().gt(12u32), break_);
        });
        if_((i % 4u32).eq(1u32), || q.set(q.get() * 5u32));
        out.set(
            i,
            c.get() * 1_000_000u32 + a.get() * 1000u32 + g.get() + o.get() * 7u32 + q.get(),
        );
        fo.set(i, f.get());
    })
    .unwrap();
    assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
    let k64 = Kernel::build("leaving64", |k| {
        let t = k.read::<u64>("t");
        let out = k.write::<u64>("out");
        let i = global_id(0);
        let n = t.at(i);
        let c = var_named("c", 0u64);
        let a = var_named("a", u64::MAX - 4);
        loop_(|| {
            if_(c.get().ge(n), break_);
            c.set(c.get() + 1u64);
            a.set(a.get() + 3u64);
        });
        if_((i & 1u32).eq(0u32), || c.set(c.get() + 100u64));
        out.set(i, c.get() * 1000u64 + a.get());
    })
    .unwrap();
    let n = 96usize;
    let patterns: [[u32; 8]; 5] = [
        [0, 0, 0, 0, 5, 9, 1, 30],
        [30, 2, 9, 4, 0, 0, 0, 0],
        [3, 3, 3, 3, 3, 3, 3, 3],
        [0; 8],
        [1, 0, 2, 0, 3, 0, 20, 0],
    ];
    let ts: Vec<u32> = (0..n)
        .map(|i| patterns[(i / 8) % patterns.len()][i % 8])
        .collect();
    let run = |q: &Queue, local: usize| {
        let t = Buffer::from_slice(q, &ts).unwrap();
        let out = Buffer::<u32>::new(q.device(), n).unwrap();
        let fo = Buffer::<f32>::new(q.device(), n).unwrap();
        k.launch(q, NdRange::new(n).local(local), args![&t, &out, &fo])
            .unwrap();
        let f: Vec<u32> = q.read(&fo).unwrap().iter().map(|x| x.to_bits()).collect();
        let t64: Vec<u64> = ts.iter().map(|&x| x as u64).collect();
        let t64 = Buffer::from_slice(q, &t64).unwrap();
        let out64 = Buffer::<u64>::new(q.device(), n).unwrap();
        k64.launch(q, NdRange::new(n).local(local), args![&t64, &out64])
            .unwrap();
        (q.read(&out).unwrap(), f, q.read(&out64).unwrap())
    };
    let want = run(&interp, 8);
    for local in [8, 16, 24, 4, 12, 1] {
        assert_eq!(run(&cpu, local), want, "local size {local}");
    }
}

/// Small `if`s reached with every lane active (a tile's guarded loads): where the condition
/// holds in all lanes, the vector code runs only the `then` side, for all of them; where it
/// holds in some or none, both sides under their masks. Conditions true in every lane of
/// some blocks (of four and of eight work-items), in part of others, in none of the rest;
/// `then` sides that store, update a private, load a buffer, `return`, `break` a loop or
/// `continue` it, with and without an `else`; in a one-region kernel (four and eight lanes)
/// and around a barrier; one side's load out of bounds in some launches (the interpreter's
/// error, same work-item). Bit for bit with `interp`, on every group size.
#[test]
fn small_ifs_taken_by_every_lane_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let body = |t: &BufferParam<u32>,
                f: &BufferParam<f32>,
                out: &BufferParam<u32>,
                fo: &BufferParam<f32>,
                lim: Expr<u32>,
                i: Expr<u32>| {
        let v = t.at(i);
        let acc = var_named("acc", 1u32);
        let s = var_named("s", 0.25f32);
        // Stores and a load on each side.
        if_(v.lt(lim), || out.set(i, v * 3u32)).else_(|| out.set(i, 7u32));
        if_(v.lt(lim).and(i.ge(4u32)), || {
            s.set(s.get() + f.at(v));
            acc.set(acc.get() * 5u32 + v);
        });
        // A side that leaves a loop, or ends its iteration.
        for_range(0u32, 6u32, |j| {
            if_((v + j).gt(lim), break_);
            if_((v ^ j).lt(2u32), continue_);
            acc.set(acc.get() + j * 11u32);
        });
        fo.set(i, s.get());
        // A side that returns (after its store).
        if_(v.ge(lim / 2u32), || {
            out.set(i, out.at(i) + acc.get() * 1000u32);
            return_();
        });
        out.set(i, out.at(i) + acc.get());
    };
    let k = Kernel::build("small_ifs", |k| {
        let t = k.read::<u32>("t");
        let f = k.read::<f32>("f");
        let out = k.read_write::<u32>("out");
        let fo = k.write::<f32>("fo");
        let lim = k.scalar::<u32>("lim");
        body(&t, &f, &out, &fo, lim, global_id(0));
    })
    .unwrap();
    assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
    let kb = Kernel::build("small_ifs_barrier", |k| {
        let t = k.read::<u32>("t");
        let f = k.read::<f32>("f");
        let out = k.read_write::<u32>("out");
        let fo = k.write::<f32>("fo");
        let lim = k.scalar::<u32>("lim");
        let i = global_id(0);
        let seen = k.local_array::<u32>("seen", 64);
        if_(t.at(i).lt(lim), || seen.set(local_id(0), 1u32)).else_(|| seen.set(local_id(0), 0u32));
        barrier_local();
        body(
            &t,
            &f,
            &out,
            &fo,
            lim + seen.at((local_id(0) + 1u32) % local_size(0)),
            i,
        );
    })
    .unwrap();
    assert!(kb.cpu_vector_variant().is_ok());
    let n = 96usize;
    // Per block of eight: all below `lim`, none, half, one, all but one ...
    let patterns: [[u32; 8]; 6] = [
        [1, 2, 3, 4, 5, 6, 7, 8],
        [40, 41, 42, 43, 44, 45, 46, 47],
        [1, 40, 2, 41, 3, 42, 4, 43],
        [1, 2, 3, 4, 40, 41, 42, 43],
        [40, 2, 3, 4, 5, 6, 7, 8],
        [9, 9, 9, 9, 9, 9, 9, 39],
    ];
    let ts: Vec<u32> = (0..n)
        .map(|i| patterns[(i / 8) % patterns.len()][i % 8])
        .collect();
    let fs: Vec<f32> = (0..48).map(|i| i as f32 * 0.75 - 3.0).collect();
    let run = |q: &Queue, k: &Kernel, local: usize, lim: u32| {
        let t = Buffer::from_slice(q, &ts).unwrap();
        // `f` one element short of the largest `t` below `lim` at 48 and 10: a fault in a
        // side (in the lanes' first block that reaches it).
        let f = Buffer::from_slice(q, &fs[..(lim as usize - 1).min(fs.len())]).unwrap();
        let out = Buffer::<u32>::new(q.device(), n).unwrap();
        let fo = Buffer::<f32>::new(q.device(), n).unwrap();
        k.launch(
            q,
            NdRange::new(n).local(local),
            args![&t, &f, &out, &fo, lim],
        )
        .map_err(|e| e.to_string())?;
        let bits: Vec<u32> = q.read(&fo).unwrap().iter().map(|x| x.to_bits()).collect();
        Ok::<_, String>((q.read(&out).unwrap(), bits))
    };
    for kern in [&k, &kb] {
        for (lim, ok) in [(30u32, true), (48, false), (10, false), (100, true)] {
            for local in [8, 16, 32, 4, 12, 1] {
                // The error names the work-item's place in its work-group.
                let want = run(&interp, kern, local, lim);
                assert_eq!(want.is_ok(), ok, "{}: lim {lim}: {want:?}", kern.name());
                let got = run(&cpu, kern, local, lim);
                assert_eq!(got, want, "{}: local size {local}, lim {lim}", kern.name());
            }
        }
    }
}

/// A guarded streaming kernel, `if i < n { out[i] = a[i] * 2 + b[i] }`, whose accesses are
/// proven in bounds given `n <= len(a)` (and `b`, `out`): where every lane takes the guard,
/// the accesses have no test only where the launch's arguments pass those preconditions.
/// With `a` or `out` shorter than `n`, the interpreter's error (same work-item, same
/// buffer); with `n` below the launch's size, the lanes past it skip the body.
#[test]
fn guarded_accesses_proven_under_preconditions_fault_as_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("guarded_axpb", |k| {
        let a = k.read::<f32>("a");
        let b = k.read::<f32>("b");
        let out = k.write::<f32>("out");
        let n = k.scalar::<u32>("n");
        let i = global_id(0);
        if_(i.lt(n), || out.set(i, a.at(i) * 2.0f32 + b.at(i)));
    })
    .unwrap();
    assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
    let global = 96usize;
    let run = |q: &Queue, local: usize, n: u32, la: usize, lo: usize| {
        let av: Vec<f32> = (0..la).map(|i| i as f32 * 0.5 - 7.0).collect();
        let bv: Vec<f32> = (0..global).map(|i| i as f32 * 0.25).collect();
        let a = Buffer::from_slice(q, &av).unwrap();
        let b = Buffer::from_slice(q, &bv).unwrap();
        let out = Buffer::from_slice(q, &vec![-1.0f32; lo]).unwrap();
        k.launch(q, NdRange::new(global).local(local), args![&a, &b, &out, n])
            .map_err(|e| e.to_string())?;
        let bits: Vec<u32> = q.read(&out).unwrap().iter().map(|x| x.to_bits()).collect();
        Ok::<_, String>(bits)
    };
    for (n, la, lo, ok) in [
        (96u32, 96usize, 96usize, true),
        (61, 96, 96, true),
        (96, 61, 96, false),
        (96, 96, 70, false),
        (64, 63, 96, false),
        (40, 41, 40, true),
    ] {
        for local in [8, 16, 4, 12, 1] {
            let want = run(&interp, local, n, la, lo);
            assert_eq!(
                want.is_ok(),
                ok,
                "n {n}, len(a) {la}, len(out) {lo}: {want:?}"
            );
            let got = run(&cpu, local, n, la, lo);
            assert_eq!(
                got, want,
                "local {local}, n {n}, len(a) {la}, len(out) {lo}"
            );
        }
    }
}

/// Unsigned `<` and `>` of `u32` lanes (`!(max(x, y) == x)`, `!(min(x, y) == x)`) at the
/// edges of the sign bit (0, 1, 2^31 - 1, 2^31, 2^31 + 1, 2^32 - 1), each way round, as
/// values, as `if` conditions, in `select`, negated, and as a divergent loop's condition
/// against a uniform bound: eight lanes, four and the scalar code against the interpreter.
#[test]
fn unsigned_compares_at_the_sign_bit_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("ucmp", |k| {
        let a = k.read::<u32>("a");
        let b = k.read::<u32>("b");
        let out = k.write::<u32>("out");
        let lim = k.scalar::<u32>("lim");
        let i = global_id(0);
        let (x, y) = (a.at(i), b.at(i));
        let r = var_named("r", 0u32);
        r.set(
            x.lt(y).cast::<u32>()
                | (x.gt(y).cast::<u32>() << 1u32)
                | (x.le(y).cast::<u32>() << 2u32)
                | (x.ge(y).cast::<u32>() << 3u32),
        );
        if_(x.lt(y), || r.set(r.get() + 16u32));
        if_(x.gt(y).not(), || r.set(r.get() + 32u32));
        r.set(r.get() + select(y.gt(x), 64u32, 128u32));
        let j = var_named("j", x);
        let n = var_named("n", 0u32);
        while_(
            || j.get().lt(lim).and(n.get().lt(6u32)),
            || {
                j.set(j.get() + 0x4000_0000u32);
                n.set(n.get() + 1u32);
            },
        );
        out.set(i, r.get() + (n.get() << 8u32));
    })
    .unwrap();
    assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
    let edges = [0u32, 1, 0x7fff_ffff, 0x8000_0000, 0x8000_0001, u32::MAX];
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for &x in &edges {
        for &y in &edges {
            xs.push(x);
            ys.push(y);
        }
    }
    xs.extend([5u32, 0x7fff_fffe, 0xc000_0000, 3]);
    ys.extend([5u32, 0x8000_0000, 0x4000_0000, 0xffff_fff0]);
    let n = xs.len();
    assert_eq!(n % 8, 0);
    let run = |q: &Queue, local: usize, lim: u32| {
        let a = Buffer::from_slice(q, &xs).unwrap();
        let b = Buffer::from_slice(q, &ys).unwrap();
        let out = Buffer::<u32>::new(q.device(), n).unwrap();
        k.launch(q, NdRange::new(n).local(local), args![&a, &b, &out, lim])
            .unwrap();
        q.read(&out).unwrap()
    };
    for lim in [0u32, 0x8000_0000, 0xc000_0001] {
        let want = run(&interp, 8, lim);
        for local in [8, 40, 4, 20, 1] {
            assert_eq!(run(&cpu, local, lim), want, "local {local}, lim {lim:#x}");
        }
    }
}

/// A kernel with no parameters and an empty body (no region to compile) runs on every
/// device, `cpu` included (it indexed its empty list of region functions and panicked).
#[test]
fn an_empty_kernel_runs_everywhere() {
    let k = Kernel::build("empty", |_k| {}).unwrap();
    for dev in strata::devices() {
        let q = Queue::new(&dev).unwrap();
        k.launch(&q, NdRange::new(64).local(8), args![])
            .and_then(|r| r.wait())
            .unwrap_or_else(|e| panic!("{}: {e}", dev.spec()));
    }
}

/// `u32` to `f32` in the vector variant (one vector conversion, two 16-bit halves added) and in
/// the scalar code: rounded as the interpreter rounds, at the values where rounding shows
/// (above 2^24, halfway cases, the top bit, `u32::MAX`), bit for bit.
#[test]
fn u32_to_f32_rounds_as_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("u32_to_f32", |k| {
        let x = k.read::<u32>("x");
        let y = k.write::<f32>("y");
        let i = global_id(0);
        if_(i.lt(y.len()), || y.set(i, x.at(i).cast::<f32>()));
    })
    .unwrap();
    let xs: Vec<u32> = vec![
        0,
        1,
        65_535,
        65_536,
        (1 << 24) - 1,
        1 << 24,
        (1 << 24) + 1,
        (1 << 24) + 3,
        (1 << 25) + 2,
        (1 << 25) + 6,
        0x7fff_ff80,
        0x7fff_ffc0,
        0x7fff_ffff,
        0x8000_0000,
        0x8000_0001,
        0x8000_0080,
        0x8000_0180,
        0xffff_ff7f,
        0xffff_ff80,
        0xffff_fffe,
        u32::MAX,
        0x1234_5678,
        0x0f0f_0f0f,
        0xdead_beef,
    ];
    let run = |q: &Queue, local: usize| {
        let x = Buffer::from_slice(q, &xs).unwrap();
        let y = Buffer::<f32>::new(q.device(), xs.len()).unwrap();
        k.launch(q, NdRange::new(xs.len()).local(local), args![&x, &y])
            .unwrap();
        q.read(&y).unwrap()
    };
    let want = run(&interp, 4);
    for (x, w) in xs.iter().zip(&want) {
        assert_eq!(w.to_bits(), (*x as f32).to_bits(), "interp: {x}");
    }
    for local in [4, 8, 2, 3] {
        let got = run(&cpu, local);
        let (gb, wb): (Vec<u32>, Vec<u32>) = (
            got.iter().map(|v| v.to_bits()).collect(),
            want.iter().map(|v| v.to_bits()).collect(),
        );
        assert_eq!(gb, wb, "local size {local}");
    }
}

/// An `f64` axpy over `STRATA_AXPY_N` elements (default 2^20), launched `STRATA_AXPY_LAUNCHES`
/// times (default 2) in groups of `STRATA_AXPY_LOCAL` (default 64; one not a multiple of 4
/// runs the scalar code): the streaming 64-bit kernel whose instructions per element
/// docs/BENCHMARKS.md counts with callgrind (two launch counts, the difference over the
/// difference of launches and elements). Not a check: run it by name with `--ignored`.
#[test]
#[ignore]
fn f64_axpy_for_callgrind() {
    let n: usize = std::env::var("STRATA_AXPY_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1 << 20);
    let var = |name: &str, default: usize| -> usize {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let (local, launches) = (var("STRATA_AXPY_LOCAL", 64), var("STRATA_AXPY_LAUNCHES", 2));
    let k = Kernel::build("axpy_f64", |k| {
        let x = k.read::<f64>("x");
        let y = k.read::<f64>("y");
        let out = k.write::<f64>("out");
        let a = k.scalar::<f64>("a");
        let i = global_id(0);
        if_(i.lt(out.len()), || out.set(i, a * x.at(i) + y.at(i)));
    })
    .unwrap();
    let q = queues().0;
    let xs: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let x = Buffer::from_slice(&q, &xs).unwrap();
    let y = Buffer::from_slice(&q, &xs).unwrap();
    let out = Buffer::<f64>::new(q.device(), n).unwrap();
    for _ in 0..launches {
        k.launch(&q, NdRange::covering(n, local), args![&x, &y, &out, 2.0f64])
            .and_then(|r| r.wait())
            .unwrap();
    }
    assert_eq!(q.read(&out).unwrap()[n - 1], 3.0 * (n - 1) as f64);
}

/// Work-item 0's work (`if l == 0`, and `1 == l` with the literal first: regions whose
/// work-item loop stops after that work-item) and a loop of the whole group with barriers, a
/// collective and an exit read from local memory (the look-back scan's shape), on work-group
/// sizes with and without a partial last block of four work-items: the interpreter's results,
/// and a fault in a work-item's own region names the same work-item.
#[test]
fn one_work_items_regions_and_group_loops_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("leader_loop", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let bad = k.scalar::<u32>("bad");
        let sh = k.local_array::<u32>("sh", 4);
        let l = local_id(0);
        let g = global_id(0);
        let v = x.at(g);
        if_(l.eq(0u32), || {
            sh.set(0u32, v);
            sh.set(1u32, 0u32);
            sh.set(3u32, 0u32);
        });
        barrier();
        if_(lit(1u32).eq(l), || sh.set(1u32, v * 3u32));
        barrier();
        let acc = var_named("acc", 0u32);
        // At most 9 turns (the same in every work-item), whatever the local memory holds.
        let turns = var_named("turns", 0u32);
        loop_(|| {
            if_(
                sh.at(3u32).gt(sh.at(0u32) % 7u32) | turns.get().gt(8u32),
                break_,
            );
            turns.set(turns.get() + 1u32);
            let s = group_reduce_add(v ^ sh.at(3u32));
            acc.set(acc.get() + s + sh.at(1u32));
            barrier();
            if_(l.eq(0u32), || sh.set(3u32, sh.at(3u32) + 1u32));
            barrier();
        });
        // Only work-item `bad` writes past the end.
        if_(l.eq(bad), || out.set(g + out.len(), 1u32));
        out.set(g, acc.get() * 31u32 + sh.at(3u32));
    })
    .unwrap();
    let run = |q: &Queue, local: usize, bad: u32| {
        let n = local * 5;
        let xs: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2654435761) >> 7)
            .collect();
        let x = Buffer::from_slice(q, &xs).unwrap();
        let out = Buffer::<u32>::new(q.device(), n).unwrap();
        k.launch(q, NdRange::new(n).local(local), args![&x, &out, bad])
            .map(|_| q.read(&out).unwrap())
    };
    for local in [1, 3, 6, 8, 64] {
        let want = run(&interp, local, u32::MAX).unwrap();
        assert!(want.iter().any(|&v| v != 0));
        assert_eq!(
            run(&cpu, local, u32::MAX).unwrap(),
            want,
            "local size {local}"
        );
        let bad = (local as u32 - 1).min(2);
        let want = run(&interp, local, bad).unwrap_err();
        assert!(matches!(want, Error::OutOfBounds { .. }), "{want}");
        let got = run(&cpu, local, bad).unwrap_err();
        assert_eq!(got.to_string(), want.to_string(), "local size {local}");
    }
}

/// A work-group that waits for another (spinning in a group-level loop on a word the
/// work-group before it in ticket order writes, as the look-back scan does), with many more
/// work-groups than threads: every wait ends, and the results are the interpreter's.
#[test]
fn work_groups_waiting_for_each_other_finish() {
    let (cpu, interp) = queues();
    let k = Kernel::build("chain", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let status = k.read_write::<u32>("status");
        let counter = k.read_write::<u32>("counter");
        let sh = k.local_array::<u32>("sh", 3);
        let l = local_id(0);
        if_(l.eq(0u32), || {
            sh.set(0u32, counter.atomic_add(0u32, 1u32));
            sh.set(2u32, 0u32);
        });
        barrier();
        let t = sh.at(0u32);
        let mine = group_reduce_add(x.at(t * local_size(0) + l));
        // Wait until the ticket before has published its running total (plus one).
        loop_(|| {
            if_(sh.at(2u32).ne(0u32), break_);
            if_(l.eq(0u32), || {
                if_(t.eq(0u32), || sh.set(1u32, 0u32)).else_(|| {
                    sh.set(1u32, status.atomic_load(t - 1u32));
                });
                if_(t.eq(0u32) | sh.at(1u32).ne(0u32), || sh.set(2u32, 1u32));
            });
            barrier();
        });
        let before = select(t.eq(0u32), lit(0u32), sh.at(1u32) - 1u32);
        if_(l.eq(0u32), || {
            status.atomic_exchange(t, before + mine + 1u32);
        });
        out.set(t * local_size(0) + l, before + mine);
    })
    .unwrap();
    let (groups, local) = (97usize, 4usize);
    let xs: Vec<u32> = (0..(groups * local) as u32).map(|i| i % 13).collect();
    let run = |q: &Queue| {
        let x = Buffer::from_slice(q, &xs).unwrap();
        let out = Buffer::<u32>::new(q.device(), xs.len()).unwrap();
        let status = Buffer::<u32>::new(q.device(), groups).unwrap();
        let counter = Buffer::<u32>::new(q.device(), 1).unwrap();
        k.launch(
            q,
            NdRange::new(xs.len()).local(local),
            args![&x, &out, &status, &counter],
        )
        .unwrap();
        q.read(&out).unwrap()
    };
    let want = run(&interp);
    let mut total = 0u32;
    let sums: Vec<u32> = xs
        .chunks(local)
        .map(|c| {
            total += c.iter().sum::<u32>();
            total
        })
        .collect();
    assert_eq!(
        want.iter().step_by(local).copied().collect::<Vec<_>>(),
        sums
    );
    for _ in 0..3 {
        assert_eq!(run(&cpu), want);
    }
}

/// A work-group that waits for a later one which fails before publishing (the wait of a
/// look-back whose predecessor faulted) does not hang the launch: it is stopped once the
/// grace an earlier work-group gets to reach a fault of its own has passed, and the launch
/// reports the later work-group's fault, on `cpu` (the wait in compiled code and in a
/// group-level loop) and on the interpreter.
#[test]
fn a_work_group_waiting_for_a_failed_one_is_stopped() {
    if rayon::current_num_threads() < 2 {
        return; // work-group 0 would wait for a work-group 1 that nobody runs
    }
    let (cpu, interp) = queues();
    for group_level in [false, true] {
        let k = Kernel::build("waits", |k| {
            let x = k.read::<u32>("x");
            let status = k.read_write::<u32>("status");
            let sh = k.local_array::<u32>("sh", 1);
            let (l, g) = (local_id(0), group_id(0));
            // Work-group 1 reads out of bounds before it publishes.
            let mine = x.at(g * local_size(0) + l + select(g.eq(1u32), lit(1000u32), lit(0u32)));
            if_(g.eq(0u32), || {
                if group_level {
                    // Every work-item turns, with a barrier in the loop: the group level.
                    loop_(|| {
                        if_(l.eq(0u32), || sh.set(0u32, status.atomic_load(1u32)));
                        barrier();
                        if_(sh.at(0u32).ne(0u32), break_);
                        barrier();
                    });
                } else {
                    // Work-item 0 alone spins: a loop in compiled code.
                    if_(l.eq(0u32), || {
                        loop_(|| {
                            if_(status.atomic_load(1u32).ne(0u32), break_);
                        });
                    });
                }
            })
            .else_(|| {
                status.atomic_exchange(1u32, mine + 1u32);
            });
        })
        .unwrap();
        for q in [&cpu, &interp] {
            let x = Buffer::from_slice(q, &[1u32; 8]).unwrap();
            let status = Buffer::<u32>::new(q.device(), 2).unwrap();
            let run = k
                .enqueue(q, NdRange::new(8).local(4), args![&x, &status], &[])
                .unwrap();
            // Bounded, not a hang, should the wait not be stopped.
            let err = run
                .wait_timeout(std::time::Duration::from_secs(60))
                .unwrap_err();
            assert!(
                matches!(err, Error::OutOfBounds { .. }),
                "{} group level {group_level}: {err}",
                q.device().name()
            );
            assert!(
                err.to_string().contains("work-group (1, 0, 0)"),
                "{} group level {group_level}: {err}",
                q.device().name()
            );
        }
    }
}

/// The chunked reduction of `strata bench` (`sum`, `dot` on CPU devices): each work-item
/// adds its own contiguous chunk (`x[id * chunk + j]`, the bounds clamped to the length)
/// into a private `f32`, writes it and `gather_add`s it. The four lanes gather from four
/// chunks; where they run the same iterations (all but the work-items at the end) the vector
/// variant runs the loop as one of four lanes, four scalar loads without tests, four
/// work-items' additions in one vector. Each work-item's own order of additions stays the
/// interpreter's: its sum (written out) and the gathered total agree bit for bit, on
/// lengths where every chunk is whole, where the last ones are short or empty, and with a
/// `continue` in the loop. With a collective, the sum and the dot (two such loads per
/// iteration) take the vector variant and a product of three chunks (three streams) the
/// scalar code; without one (always the vector variant), the dot and a copy of the chunk (a
/// scatter) too.
#[test]
fn chunked_reductions_take_the_vector_variant_and_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let build = |dot: bool, skip: bool, copy: bool, synced: bool, third: bool| {
        Kernel::build("chunked", |k| {
            let x = k.read::<f32>("x");
            let y = k.read::<f32>("y");
            let z = k.read::<f32>("z");
            let out = k.write::<f32>("copy");
            let sums = k.write::<f32>("sums");
            let acc = var_named("acc", 0.0f32);
            let chunk = (x.len() + global_size(0) - 1u32) / global_size(0);
            let start = global_id(0) * chunk;
            for_range(
                start.min(x.len()),
                (start + chunk).min(x.len()),
                |i: Expr<u32>| {
                    let v = x.at(i);
                    if skip {
                        if_(v.gt(0.75f32), continue_);
                    }
                    if copy {
                        out.set(i, v * 2.0f32);
                    }
                    if third {
                        acc.set(acc.get() + v * y.at(i) * z.at(i));
                    } else if dot {
                        acc.set(acc.get() + v * y.at(i));
                    } else {
                        acc.set(acc.get() + v);
                    }
                },
            );
            sums.set(global_id(0), acc.get());
            if synced {
                k.gather_add(acc.get());
            }
        })
        .unwrap()
    };
    for (dot, skip, copy, synced, third) in [
        (false, false, false, true, false),
        (false, true, false, true, false),
        (true, false, false, true, false),
        (true, true, false, true, false),
        (true, false, false, true, true),
        (true, true, true, false, false),
    ] {
        let case = format!("dot {dot}, skip {skip}, copy {copy}, synced {synced}, three {third}");
        let k = build(dot, skip, copy, synced, third);
        assert_eq!(
            k.cpu_vector_variant().is_ok(),
            !(third && synced),
            "{case}: {:?}",
            k.cpu_vector_variant()
        );
        if third && synced {
            let why = k.cpu_vector_variant().unwrap_err();
            assert!(why.contains("gather lane by lane"), "{case}: {why}");
        }
        // 64 work-items: 4096 and 6400 elements give every one a whole chunk; 4001 leaves
        // the last chunk short, 3000 the last few empty, 50 most of them empty.
        for n in [4096usize, 6400, 4001, 3000, 50] {
            let xs: Vec<f32> = (0..n)
                .map(|i| ((i * 7919) % 1009) as f32 / 1009.0)
                .collect();
            let ys: Vec<f32> = (0..n)
                .map(|i| ((i * 31) % 97) as f32 * 0.173 - 5.0)
                .collect();
            let run = |q: &Queue| {
                let x = Buffer::from_slice(q, &xs).unwrap();
                let y = Buffer::from_slice(q, &ys).unwrap();
                let z = Buffer::from_slice(q, &xs).unwrap();
                let out = Buffer::<f32>::new(q.device(), n).unwrap();
                let sums = Buffer::<f32>::new(q.device(), 64).unwrap();
                let r = k
                    .enqueue(
                        q,
                        NdRange::new(64).local(16),
                        args![&x, &y, &z, &out, &sums],
                        &[],
                    )
                    .unwrap();
                let total = if synced {
                    r.gather::<f32>(0).unwrap().get().unwrap().to_bits()
                } else {
                    r.wait().unwrap();
                    0
                };
                let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
                (
                    total,
                    bits(sums.to_vec(q).unwrap()),
                    bits(out.to_vec(q).unwrap()),
                )
            };
            let (want, got) = (run(&interp), run(&cpu));
            assert_eq!(got.1, want.1, "per-work-item sums, {case}, n {n}");
            assert_eq!(got.2, want.2, "copy, {case}, n {n}");
            assert_eq!(got.0, want.0, "total, {case}, n {n}");
        }
    }
}

/// A chunk per work-item read one past its end: not proven in bounds (the loop's end is
/// clamped to the length, the index is the counter plus one), so the lanes are tested and
/// the fault is the interpreter's (the same work-item, line and index), with and without a
/// barrier after the loop, on the vector variant (local size 16) and the scalar code (6).
#[test]
fn chunked_loops_one_past_the_end_fault_as_on_the_interpreter() {
    for synced in [false, true] {
        let k = Kernel::build("chunked_past", |k| {
            let x = k.read::<f32>("x");
            let sums = k.write::<f32>("sums");
            let acc = var_named("acc", 0.0f32);
            let chunk = (x.len() + global_size(0) - 1u32) / global_size(0);
            let start = global_id(0) * chunk;
            for_range(
                start.min(x.len()),
                (start + chunk).min(x.len()),
                |i: Expr<u32>| {
                    acc.set(acc.get() + x.at(i + 1u32));
                },
            );
            sums.set(global_id(0), acc.get());
            if synced {
                k.gather_add(acc.get());
            }
        })
        .unwrap();
        let cases = [(4096usize, 16usize), (4096, 6), (1000, 16)];
        faults_one_past_the_end_as_the_interpreter(&k, &cases, synced);
    }
}

/// Chunk loops whose loads from read-only buffers at the counter are read as 4x4 tiles
/// (four iterations of four work-items per tiled iteration, each lane's four elements one
/// vector load, transposed; the last iterations in the loop of one at a time): bit for bit
/// the interpreter's, per work-item and in the gathered total, for chunks of 0, 1, 3, 4, 5,
/// 7, 8 and 37 iterations (all whole, the last ones clamped short at the buffer's end, most
/// of them empty), with one, two and three tiles (an `f32` sum, a dot, an `i32` sum that
/// wraps), with and without a store in the body, with and without a collective (with one,
/// a third stream keeps the scalar code, as the assertion says; a store lane by lane too). A buffer the kernel also writes (read at the counter, written one ahead: a
/// tile read before the write would see the old value) is read in every iteration, as the
/// interpreter does.
#[test]
fn tiled_chunk_loops_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let build = |dot: bool, int: bool, store: bool, synced: bool| {
        Kernel::build("tiled_chunks", |k| {
            let x = k.read::<f32>("x");
            let y = k.read::<f32>("y");
            let xi = k.read::<i32>("xi");
            let z = k.read_write::<f32>("z");
            let out = k.write::<f32>("copy");
            let sums = k.write::<f32>("sums");
            let isums = k.write::<i32>("isums");
            let chunk = k.scalar::<u32>("chunk");
            let acc = var_named("acc", 0.0f32);
            let iacc = var_named("iacc", 0i32);
            let start = global_id(0) * chunk;
            // Clamped to every length read (the same here): each load proven in bounds.
            let len = x.len().min(y.len()).min(xi.len());
            for_range(start.min(len), (start + chunk).min(len), |i: Expr<u32>| {
                let v = x.at(i);
                if dot {
                    acc.set(acc.get() + v * y.at(i));
                } else {
                    acc.set(acc.get() + v);
                }
                if int {
                    iacc.set(iacc.get() + xi.at(i) * 3i32);
                }
                if store {
                    out.set(i, v * 2.0f32);
                }
            });
            // The written buffer (without the collective: with one, its lane-by-lane
            // stores would make the kernel take the scalar code): each work-item's chunk
            // of `z` becomes running sums, each element stored one iteration before it is
            // read at the counter (proven in bounds).
            if !synced {
                let hi = (start + chunk).min(z.len());
                for_range(start.min(z.len()), hi, |i: Expr<u32>| {
                    let v = z.at(i);
                    if_((i + 1u32).lt(hi), || z.set(i + 1u32, v + z.at(i + 1u32)));
                });
            }
            sums.set(global_id(0), acc.get());
            isums.set(global_id(0), iacc.get());
            if synced {
                k.gather_add(acc.get());
            }
        })
        .unwrap()
    };
    for (dot, int, store, synced) in [
        (false, false, false, true),
        (false, false, false, false),
        (true, false, false, false),
        (false, true, false, false),
        (true, true, true, false),
        (false, false, true, false),
        (true, false, false, true),
        (false, true, false, true),
        (true, true, false, true),
    ] {
        let case = format!("dot {dot}, i32 {int}, store {store}, synced {synced}");
        let k = build(dot, int, store, synced);
        assert_eq!(
            k.cpu_vector_variant().is_ok(),
            !(synced && dot && int),
            "{case}: {:?}",
            k.cpu_vector_variant()
        );
        // 64 work-items: every chunk whole, the last one short, the last ones empty; in
        // work-groups of 16 (without a collective: the eight-lane variant, which has no
        // tiled loops) and of 4 (the four-lane variant).
        let sizes = [0usize, 1, 3, 4, 5, 7, 8, 37]
            .into_iter()
            .flat_map(|chunk| {
                [64 * chunk, (64 * chunk).saturating_sub(5).max(1), 50]
                    .into_iter()
                    .flat_map(move |n| [(chunk, n, 16usize), (chunk, n, 4)])
            });
        for (chunk, n, local) in sizes {
            {
                let xs: Vec<f32> = (0..n)
                    .map(|i| ((i * 7919) % 1009) as f32 / 1009.0)
                    .collect();
                let ys: Vec<f32> = (0..n)
                    .map(|i| ((i * 31) % 97) as f32 * 0.173 - 5.0)
                    .collect();
                let is: Vec<i32> = (0..n)
                    .map(|i| (i as i32).wrapping_mul(0x3779_b1f1))
                    .collect();
                let run = |q: &Queue| {
                    let x = Buffer::from_slice(q, &xs).unwrap();
                    let y = Buffer::from_slice(q, &ys).unwrap();
                    let xi = Buffer::from_slice(q, &is).unwrap();
                    let z = Buffer::from_slice(q, &ys).unwrap();
                    let out = Buffer::<f32>::new(q.device(), n).unwrap();
                    let sums = Buffer::<f32>::new(q.device(), 64).unwrap();
                    let isums = Buffer::<i32>::new(q.device(), 64).unwrap();
                    let r = k
                        .enqueue(
                            q,
                            NdRange::new(64).local(local),
                            args![&x, &y, &xi, &z, &out, &sums, &isums, chunk as u32],
                            &[],
                        )
                        .unwrap();
                    let total = if synced {
                        r.gather::<f32>(0).unwrap().get().unwrap().to_bits()
                    } else {
                        r.wait().unwrap();
                        0
                    };
                    let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
                    (
                        total,
                        bits(sums.to_vec(q).unwrap()),
                        isums.to_vec(q).unwrap(),
                        bits(out.to_vec(q).unwrap()),
                        bits(z.to_vec(q).unwrap()),
                    )
                };
                let (want, got) = (run(&interp), run(&cpu));
                let at = format!("{case}, chunk {chunk}, n {n}, local {local}");
                assert_eq!(got.1, want.1, "per-work-item f32 sums, {at}");
                assert_eq!(got.2, want.2, "per-work-item i32 sums, {at}");
                assert_eq!(got.3, want.3, "copy, {at}");
                assert_eq!(got.4, want.4, "written buffer, {at}");
                assert_eq!(got.0, want.0, "total, {at}");
            }
        }
    }
}

/// A tiled chunk loop (the load at the counter, proven) that also reads one past its chunk
/// (not proven: the lanes are tested): the fault is the interpreter's, the same work-item,
/// line and index, whether the last chunk's iterations run in the tiled loop (chunks of
/// 64) or in the loop after it (43, 11), and on the other code paths.
#[test]
fn tiled_chunk_loops_fault_as_on_the_interpreter() {
    let (cpu, interp) = queues();
    for synced in [false, true] {
        let k = Kernel::build("tiled_past", |k| {
            let x = k.read::<f32>("x");
            let sums = k.write::<f32>("sums");
            // With the collective, the chunks end at a parameter (the buffer's length):
            // the load one past is then proven where `n + 1 <= len(x)`, which fails at run
            // time (a load one past `len(x)` is never proven: a kernel with barriers and
            // such a load in a loop keeps the scalar code, one work-item at a time).
            let n = if synced {
                k.scalar::<u32>("n")
            } else {
                x.len()
            };
            let acc = var_named("acc", 0.0f32);
            let chunk = (n + global_size(0) - 1u32) / global_size(0);
            let start = global_id(0) * chunk;
            for_range(start.min(n), (start + chunk).min(n), |i: Expr<u32>| {
                acc.set(acc.get() + x.at(i) * x.at(i + 1u32));
            });
            sums.set(global_id(0), acc.get());
            if synced {
                k.gather_add(acc.get());
            }
        })
        .unwrap();
        // With the collective too (two streams: the tile and the load lane by lane).
        assert_eq!(k.cpu_vector_variant(), Ok(()), "synced {synced}");
        // Chunks of 64 (a multiple of four), 43 and 11; without the collective, the
        // four-lane variant with the tiled loop (local size 4), the eight-lane one (16) and
        // the scalar code (6).
        for (n, local) in [
            (4096usize, 16usize),
            (4096, 4),
            (4096, 6),
            (2750, 16),
            (2750, 4),
            (700, 16),
            (700, 4),
        ] {
            let fail = |q: &Queue| {
                let x = Buffer::from_slice(q, &vec![1.0f32; n]).unwrap();
                let sums = Buffer::<f32>::new(q.device(), 64).unwrap();
                let range = NdRange::new(64 / local * local).local(local);
                match synced {
                    true => k.launch(q, range, args![&x, &sums, n as u32]),
                    false => k.launch(q, range, args![&x, &sums]),
                }
                .unwrap_err()
            };
            let want = fail(&interp);
            assert!(
                matches!(want, Error::OutOfBounds { index, .. } if index == n as i64),
                "{want}"
            );
            let got = fail(&cpu);
            assert_eq!(
                got.to_string(),
                want.to_string(),
                "synced {synced}, n {n}, local {local}"
            );
        }
    }
}

/// A chunk loop unrolled by hand, as the patterns' block passes write it: step `k` (4, 8,
/// 16), `k` loads of consecutive elements per iteration at `off + (i + j)` (not proven in
/// bounds: `off` is any `u32`) and `k` stores of a running value at `off + (i + j)` of
/// another buffer (a scan's), then the last iterations one at a time; with a barrier and
/// a collective (a kernel of regions, which takes the vector variant only because the
/// unrolled loads are one stream, read as rows of 4x4 tiles, and the stores a row written
/// as tiles) and without. Bit for bit the interpreter's, per work-item, in the written
/// buffer and in the total, for chunks from 0 to 37 elements, `off` 0 and 3, and an `i32`
/// counter and index beside the `u32` ones; and where the last chunks read or write past
/// a buffer's end (the test on entry fails, the general loop faults), the interpreter's
/// error.
#[test]
fn unrolled_rows_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let build = |k: u32, synced: bool, signed: bool| {
        Kernel::build("unrolled_rows", |kb| {
            let x = kb.read::<f32>("x");
            let xi = kb.read::<i32>("xi");
            let ys = kb.write::<f32>("ys");
            let sums = kb.write::<f32>("sums");
            let isums = kb.write::<i32>("isums");
            let chunk = kb.scalar::<u32>("chunk");
            let off = kb.scalar::<u32>("off");
            let n = kb.scalar::<u32>("n");
            let acc = var_named("acc", 0.0f32);
            let iacc = var_named("iacc", 0i32);
            let start = (global_id(0) * chunk).min(n);
            let end = (start + chunk).min(n);
            let count = select(end.gt(start), end - start, 0u32);
            let main = start + count / k * k;
            // A second row (two streams) only in the kernel of one region: with barriers,
            // two streams keep the scalar code.
            let body = |i: Expr<u32>| {
                acc.set(acc.get() * 0.5f32 + x.at(off + i));
                ys.set(off + i, acc.get());
                if !synced {
                    iacc.set(iacc.get() * 3i32 + xi.at(off + i));
                }
            };
            if signed {
                let (s, m, e) = (start.cast::<i32>(), main.cast::<i32>(), end.cast::<i32>());
                let o = off.cast::<i32>();
                let body = |at: Expr<i32>| {
                    acc.set(acc.get() * 0.5f32 + x.at(at));
                    ys.set(at, acc.get());
                    if !synced {
                        iacc.set(iacc.get() * 3i32 + xi.at(at));
                    }
                };
                for_step(s, m, k as i32, |i: Expr<i32>| {
                    for j in 0..k as i32 {
                        body(o + (i + j));
                    }
                });
                for_range(m, e, |i: Expr<i32>| body(o + i));
            } else {
                for_step(start, main, k, |i: Expr<u32>| {
                    for j in 0..k {
                        body(i + j);
                    }
                });
                for_range(main, end, body);
            }
            sums.set(global_id(0), acc.get());
            isums.set(global_id(0), iacc.get());
            if synced {
                kb.gather_add(acc.get());
            }
        })
        .unwrap()
    };
    for (k, synced, signed) in [
        (4, true, false),
        (4, false, false),
        (8, true, false),
        (16, false, false),
        (4, false, true),
        (8, true, true),
    ] {
        let kernel = build(k, synced, signed);
        let case = format!("k {k}, synced {synced}, signed {signed}");
        assert!(
            kernel.cpu_vector_variant().is_ok(),
            "{case}: {:?}",
            kernel.cpu_vector_variant()
        );
        for (chunk, off) in [0u32, 1, 3, 4, 5, 8, 16, 17, 37]
            .into_iter()
            .flat_map(|c| [(c, 0u32), (c, 3)])
        {
            for n in [64 * chunk, (64 * chunk).saturating_sub(5), 50] {
                // `x` and `ys` hold `n + off` elements: every access in bounds; one less
                // (`x`, then `ys`): the last element read or written is one past the end
                // (when anything is).
                for short in [0, 1, 2] {
                    let len = ((n + off) as usize).saturating_sub((short == 1) as usize);
                    let ylen = ((n + off) as usize).saturating_sub((short == 2) as usize);
                    let xs: Vec<f32> = (0..len)
                        .map(|i| ((i * 7919) % 1009) as f32 / 1009.0)
                        .collect();
                    let is: Vec<i32> = (0..len)
                        .map(|i| (i as i32).wrapping_mul(0x3779_b1f1))
                        .collect();
                    type Out = (u32, Vec<u32>, Vec<i32>, Vec<u32>);
                    let run = |q: &Queue| -> strata::Result<Out> {
                        let x = Buffer::from_slice(q, &xs)?;
                        let xi = Buffer::from_slice(q, &is)?;
                        let ys = Buffer::from_slice(q, &vec![-1.0f32; ylen])?;
                        let sums = Buffer::<f32>::new(q.device(), 64)?;
                        let isums = Buffer::<i32>::new(q.device(), 64)?;
                        let r = kernel.enqueue(
                            q,
                            NdRange::new(64).local(16),
                            args![&x, &xi, &ys, &sums, &isums, chunk, off, n],
                            &[],
                        )?;
                        let total = if synced {
                            r.gather::<f32>(0)?.get()?.to_bits()
                        } else {
                            r.wait()?;
                            0
                        };
                        let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect();
                        Ok((
                            total,
                            bits(sums.to_vec(q)?),
                            isums.to_vec(q)?,
                            bits(ys.to_vec(q)?),
                        ))
                    };
                    let at = format!("{case}, chunk {chunk}, off {off}, n {n}, short {short}");
                    match (run(&interp), run(&cpu)) {
                        (Ok(want), Ok(got)) => assert_eq!(got, want, "{at}"),
                        (Err(want), Err(got)) => {
                            assert!(matches!(want, Error::OutOfBounds { .. }), "{at}: {want}");
                            assert_eq!(got.to_string(), want.to_string(), "{at}");
                        }
                        (want, got) => panic!("{at}: interpreter {want:?}, cpu {got:?}"),
                    }
                }
            }
        }
    }
}

/// Vector values (issue 31): `f32`, `u32`, `i32`, `f64` and `i64` vectors of widths 2, 3
/// and 4, built from components, splats and swizzles, with element-wise operators, compares,
/// selects, casts, bit casts and built-ins (`fma`, `min`, `sqrt`), a vector private variable
/// updated in a divergent loop with `continue` and `break`, and `any`/`all` of a compare as
/// a divergent condition: the kernel takes the vector variant ([`Kernel::cpu_vector_variant`],
/// its vector types split into components) and agrees with the interpreter bit for bit on
/// both paths.
#[test]
fn vector_values_take_the_vector_variant_and_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("vectors", |k| {
        let x = k.read::<f32>("x");
        let u = k.read::<u32>("u");
        let d = k.read::<f64>("d");
        let fo = k.write::<f32>("fo");
        let uo = k.write::<u32>("uo");
        let io = k.write::<i32>("io");
        let dout = k.write::<f64>("dout");
        let lo = k.write::<i64>("lo");
        let i = global_id(0);
        if_(i.lt(u.len()), || {
            let (xi, ui, di) = (x.at(i), u.at(i), d.at(i));
            // f32x4: construction, swizzle, fma, compare and select, min and sqrt.
            let a = vec4(xi, xi * 2.0f32, -xi, xi + 0.5f32);
            let b = a.wzyx() + splat::<f32, 4>(0.25f32);
            let c = a.fma(b, splat(1.5f32));
            let s = select_each(c.lt(b), c, b * splat::<f32, 4>(2.0f32));
            let acc = var_named("acc", splat::<f32, 4>(0.0f32));
            for_range(0u32, ui % 7u32, |j| {
                if_((j & 1u32).eq(1u32), continue_);
                acc.set(acc.get() + s * j.cast::<f32>());
                if_(acc.get().x().gt(6.0f32), break_);
            });
            let r = acc.get().min(s).abs().sqrt();
            for c in 0..4u8 {
                fo.set(i * 4u32 + c as u32, r.get(c));
            }
            // u32x3 and i32x2: shifts, remainders, xor, casts between them, bit casts.
            let v = vec3(ui, ui * 3u32, ui ^ 0x55u32);
            let w = v.zxy();
            let m = ((v << splat::<u32, 3>(3u32)) + w % (v + splat::<u32, 3>(1u32))) ^ w.yyx();
            let p = vec2(ui.cast::<i32>() - 40i32, -(ui.cast::<i32>()));
            let q = select_each(p.gt(splat(0i32)), p * p.yx(), p - splat::<i32, 2>(7i32));
            // `any` of a vector compare as a divergent condition, a vector value set in it.
            let z = var_named("z", m);
            if_(m.gt(splat(100u32)).any(), || {
                z.set(m.zyx() / splat::<u32, 3>(3u32))
            });
            for c in 0..3u8 {
                uo.set(i * 4u32 + c as u32, z.get().get(c));
            }
            uo.set(i * 4u32 + 3u32, a.bitcast::<[u32; 4]>().w());
            let qf = q.cast::<[f32; 2]>() * splat::<f32, 2>(0.5f32);
            io.set(i * 2u32, qf.cast::<[i32; 2]>().x() + q.y());
            io.set(i * 2u32 + 1u32, (a.xy().cast::<[i32; 2]>() + q).y());
            // f64x4 and i64x2 (two registers per component).
            let e = vec4(di, di * 3.0f64, di - 1.0f64, ui.cast::<f64>());
            let f = e.zwxy().fma(e, splat(0.125f64)) / (e.abs() + splat::<f64, 4>(1.0f64));
            let g = select_each(f.lt(e), f, e.yxwz());
            for c in 0..4u8 {
                dout.set(i * 4u32 + c as u32, g.get(c));
            }
            let l = vec2(di.cast::<i64>(), ui.cast::<i64>() * -3i64);
            let h = (l * l.yx() + splat::<i64, 2>(5i64)) >> splat(2i64);
            if_(h.lt(splat(0i64)).all(), || lo.set(i * 2u32, h.x()));
            if_(!h.lt(splat(0i64)).all(), || lo.set(i * 2u32, h.y()));
            lo.set(i * 2u32 + 1u32, g.cast::<[i64; 4]>().z() ^ h.x());
        });
    })
    .unwrap();
    assert_eq!(k.cpu_vector_variant(), Ok(()));
    let n = 203usize;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 11.0).collect();
    let us: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) % 97)
        .collect();
    let ds: Vec<f64> = (0..n).map(|i| (i as f64).sqrt() * 1e3 - 7e3).collect();
    let run = |q: &Queue, local: usize| {
        let x = Buffer::from_slice(q, &xs).unwrap();
        let u = Buffer::from_slice(q, &us).unwrap();
        let d = Buffer::from_slice(q, &ds).unwrap();
        let fo = Buffer::<f32>::new(q.device(), 4 * n).unwrap();
        let uo = Buffer::<u32>::new(q.device(), 4 * n).unwrap();
        let io = Buffer::<i32>::new(q.device(), 2 * n).unwrap();
        let dout = Buffer::<f64>::new(q.device(), 4 * n).unwrap();
        let lo = Buffer::<i64>::new(q.device(), 2 * n).unwrap();
        k.launch(
            q,
            NdRange::covering(n, local),
            args![&x, &u, &d, &fo, &uo, &io, &dout, &lo],
        )
        .unwrap();
        let fb: Vec<u32> = q.read(&fo).unwrap().iter().map(|v| v.to_bits()).collect();
        let db: Vec<u64> = q.read(&dout).unwrap().iter().map(|v| v.to_bits()).collect();
        (
            fb,
            q.read(&uo).unwrap(),
            q.read(&io).unwrap(),
            db,
            q.read(&lo).unwrap(),
        )
    };
    let want = run(&interp, 8);
    for local in [4, 8, 64, 1, 3] {
        assert_eq!(run(&cpu, local), want, "local size {local}");
    }
}

/// Local arrays of vectors (issue 31), kept as a structure of arrays in the vector variant:
/// stores and loads at consecutive, reversed and scattered indices, across barriers, under
/// divergent control flow, a vector value read in one region and used in the next, and a
/// `u32` local array beside them: the interpreter's results bit for bit on both paths.
#[test]
fn local_arrays_of_vectors_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("vector_tiles", |k| {
        let x = k.read::<f32>("x");
        let u = k.read::<u32>("u");
        let out = k.write::<f32>("out");
        let uo = k.write::<u32>("uo");
        let tile = k.local_array::<[f32; 4]>("tile", 64);
        let pairs = k.local_array::<[u32; 2]>("pairs", 64);
        let plain = k.local_array::<u32>("plain", 64);
        let (g, l, ls) = (global_id(0), local_id(0), local_size(0));
        let xi = x.at(g);
        let ui = u.at(g);
        tile.set(l, vec4(xi, xi * 2.0f32, xi - 3.0f32, ui.cast::<f32>()));
        pairs.set(ls - 1u32 - l, vec2(ui, l));
        plain.set(l, ui * 7u32);
        barrier_local();
        let a = tile.at(l);
        let b = tile.at((l * 5u32 + 3u32) % ls);
        let p = pairs.at((l + 1u32) % ls);
        let acc = var_named("acc", a * b.yzwx());
        if_((ui % 3u32).eq(0u32), || {
            let c = tile.at((ls - 1u32) - l);
            acc.set(acc.get().fma(c, splat(0.5f32)));
        });
        acc.set(acc.get() + tile.at((l + ui) % ls).xxyy());
        barrier_local();
        // Stored back by part of the group, at scattered indices.
        if_(p.x().gt(30u32), || {
            tile.set((l * 3u32) % ls, acc.get() - splat::<f32, 4>(1.0f32));
        });
        pairs.set(l, p.yx() + vec2(plain.at((l + 2u32) % ls), 1u32));
        barrier_local();
        let r = tile.at(l) + acc.get();
        for c in 0..4u8 {
            out.set(g * 4u32 + c as u32, r.get(c));
        }
        let q = pairs.at(l);
        uo.set(g * 2u32, q.x());
        uo.set(g * 2u32 + 1u32, q.y() + a.bitcast::<[u32; 4]>().z());
    })
    .unwrap();
    assert_eq!(k.cpu_vector_variant(), Ok(()));
    let n = 192usize;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 11.0).collect();
    let us: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) % 97)
        .collect();
    let run = |q: &Queue, local: usize| {
        let x = Buffer::from_slice(q, &xs).unwrap();
        let u = Buffer::from_slice(q, &us).unwrap();
        let out = Buffer::<f32>::new(q.device(), 4 * n).unwrap();
        let uo = Buffer::<u32>::new(q.device(), 2 * n).unwrap();
        k.launch(q, NdRange::new(n).local(local), args![&x, &u, &out, &uo])
            .unwrap();
        let bits: Vec<u32> = q.read(&out).unwrap().iter().map(|v| v.to_bits()).collect();
        (bits, q.read(&uo).unwrap())
    };
    for local in [64, 16, 8, 4, 32, 3, 6] {
        let want = run(&interp, local);
        assert_eq!(run(&cpu, local), want, "local size {local}");
    }
}

/// An access out of bounds of a local array of vectors (a load, then a store, by the last
/// work-items of each group): the interpreter's error, naming the user's array, index,
/// length, work-item and line, on both paths.
#[test]
fn out_of_bounds_vector_local_access_is_the_interpreters_error() {
    let (cpu, interp) = queues();
    for store in [false, true] {
        let k = Kernel::build("vector_tile_oob", |k| {
            let out = k.write::<f32>("out");
            // Split before `tile`: its components are not the split kernel's first arrays.
            let pad = k.local_array::<[u32; 2]>("pad", 4);
            let tile = k.local_array::<[f32; 4]>("tile", 8);
            let (g, l) = (global_id(0), local_id(0));
            pad.set(l % 4u32, splat(l));
            tile.set(
                l % 8u32,
                splat(g.cast::<f32>() + pad.at(0u32).y().cast::<f32>()),
            );
            barrier_local();
            if store {
                tile.set(l + 6u32, vec4(1.0f32, 2.0f32, 3.0f32, 4.0f32));
                out.set(g, tile.at(l).y());
            } else {
                out.set(g, tile.at(l + 6u32).z());
            }
        })
        .unwrap();
        assert_eq!(k.cpu_vector_variant(), Ok(()));
        let fail = |q: &Queue, local: usize| {
            let out = Buffer::<f32>::new(q.device(), 24).unwrap();
            k.launch(q, NdRange::new(24).local(local), args![&out])
                .unwrap_err()
        };
        for local in [8, 4, 12, 6] {
            let want = fail(&interp, local);
            assert!(matches!(&want, Error::OutOfBounds { len: 8, .. }), "{want}");
            let msg = want.to_string();
            assert!(msg.contains("tile"), "{msg}");
            let got = fail(&cpu, local);
            assert_eq!(got.to_string(), msg, "local size {local}, store {store}");
        }
    }
}

/// A kernel of the one-work-item-at-a-time code (a private array of `bool`s: no vector
/// variant), and the same kernel without it (the vector variant), whose loop reads `a[off + j]` over the work-item's part `start..end` of `0..n` (tested: a sum
/// that may wrap is not proven) and counts digits into a fixed local
/// table `counts[d * 8 + local_id(0)]` (proven where the group is at most 8 wide), then moves
/// each element to its digit's next position through the private array (the radix sort's
/// scatter, issue 31). The loop runs in two copies, the preconditions tested on entry: with
/// them met, the interpreter's results bit for bit; with `a` one element short, an offset
/// past it, an offset that wraps the `u32` index around (in bounds again but for the first
/// element), or a group too wide for the table, the interpreter's results or error (same
/// work-item, same line).
#[test]
fn loops_proven_under_preconditions_agree_with_the_interpreter() {
    const DIGITS: u32 = 16;
    const WIDTH: u32 = 8;
    let (cpu, interp) = queues();
    for scalar in [true, false] {
        let k = Kernel::build("parts", |k| {
            let a = k.read::<u32>("a");
            let out = k.write::<u32>("out");
            let n = k.scalar::<u32>("n");
            let off = k.scalar::<u32>("off");
            let per = k.scalar::<u32>("per");
            let counts = k.local_array::<u32>("counts", DIGITS * WIDTH);
            let l = local_id(0);
            let start: Expr<u32> = (global_id(0) * per).min(n);
            let end = (start + per).min(n);
            for_range(0u32, DIGITS, |d: Expr<u32>| counts.set(d * WIDTH + l, 0u32));
            for_range(start, end, |j: Expr<u32>| {
                let at = (a.at(off + j) & (DIGITS - 1)) * WIDTH + l;
                counts.set(at, counts.at(at) + 1u32);
            });
            let pos = private_array::<u32>("pos", DIGITS);
            // A private array of `bool`s (no lane type: the scalar code), which adds 0.
            let zero = if scalar {
                let keep = private_array::<bool>("keep", 1);
                keep.set(0u32, lit(true));
                select(keep.at(0u32), 0u32, n)
            } else {
                lit(0u32)
            };
            let first = var_named::<u32>("first", start + zero);
            for_range(0u32, DIGITS, |d: Expr<u32>| {
                pos.set(d, first.get());
                first.set(first.get() + counts.at(d * WIDTH + l));
            });
            for_range(start, end, |j: Expr<u32>| {
                let x = a.at(off + j);
                let d = x & (DIGITS - 1);
                out.set(pos.at(d), x);
                pos.set(d, pos.at(d) + 1u32);
            });
        })
        .unwrap();
        assert_eq!(k.cpu_vector_variant().is_err(), scalar);
        let run = |q: &Queue, len: usize, n: u32, off: u32, local: usize| {
            let am: Vec<u32> = (0..len as u32)
                .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
                .collect();
            let a = Buffer::from_slice(q, &am).unwrap();
            let out = Buffer::from_slice(q, &vec![7u32; n as usize]).unwrap();
            let items = 16;
            let per = n.div_ceil(items as u32);
            k.launch(
                q,
                NdRange::new(items).local(local),
                args![&a, &out, n, off, per],
            )
            .map_err(|e| e.to_string())?;
            Ok::<_, String>(q.read(&out).unwrap())
        };
        for (len, n, off, local, ok) in [
            // Every access in bounds, the group at most 8 wide: the copy without the table's tests.
            (100, 100, 0, 8, true),
            (130, 100, 30, 4, true),
            (130, 97, 33, 2, true),
            // `a` one element short: the last work-item's last load faults.
            (100, 100, 1, 8, false),
            (99, 100, 0, 4, false),
            // An offset that wraps `off + j` around to `j - 1`: in bounds but for `j = 0`.
            (100, 60, u32::MAX, 8, false),
            // A group of 16 is too wide for the table (`counts[d * 8 + l]`).
            (100, 100, 0, 16, false),
        ] {
            let want = run(&interp, len, n, off, local);
            assert_eq!(want.is_ok(), ok, "len {len}, n {n}, off {off}: {want:?}");
            let got = run(&cpu, len, n, off, local);
            assert_eq!(
                got, want,
                "len {len}, n {n}, off {off}, local {local}, scalar {scalar}"
            );
        }
    }
}

/// Local-array indices that only a bound on the work-group's width keeps in bounds (issue
/// 31): SGEMM's layout of register tiles, a row `ty` and column `tx` from `local_id(0)` by
/// divisions and remainders, into a double-buffered padded tile; proven for groups up to 256
/// wide (`local_size(0) <= 256` tested once on entry, not each access). Bit for bit the
/// interpreter's results on the vector path (groups of 256, 64, 12) and the scalar one
/// (groups of 6, 30); a group of 512, too wide, runs the tested code: in bounds in the first
/// buffer (`t = 0`), and in the second faults where the interpreter does (same work-item,
/// same line).
#[test]
fn local_indices_bounded_by_the_group_width_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("layout", |k| {
        let a = k.read::<f32>("a");
        let out = k.write::<f32>("out");
        let t = k.scalar::<u32>("t");
        let tile = k.local_array::<f32>("tile", 2 * 16 * 17);
        let l = local_id(0);
        let (lane, warp) = (l % 32u32, l / 32u32);
        let ty = warp / 2u32 * 4u32 + lane / 8u32;
        let tx = warp % 2u32 * 8u32 + lane % 8u32;
        let buf = (t & 1u32) * (16 * 17);
        tile.set(buf + ty * 17u32 + tx, a.at(global_id(0)));
        barrier();
        let s = var_named("s", 0.0f32);
        for kk in 0..4u32 {
            s.set(s.get() * 0.5f32 + tile.at(buf + ty * 17u32 + (tx + kk) % 16u32));
        }
        out.set(global_id(0), s.get());
    })
    .unwrap();
    assert_eq!(k.cpu_vector_variant(), Ok(()));
    let run = |q: &Queue, n: usize, local: usize, t: u32| {
        let am: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
        let a = Buffer::from_slice(q, &am).unwrap();
        let out = Buffer::from_slice(q, &vec![f32::NAN; n]).unwrap();
        k.launch(q, NdRange::new(n).local(local), args![&a, &out, t])
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(
            q.read(&out)
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect::<Vec<_>>(),
        )
    };
    for (n, local, ok) in [
        (512, 256, true),
        (256, 64, true),
        (48, 12, true),
        (36, 6, true),
        (60, 30, true),
        (512, 512, false),
    ] {
        for t in [0, 1] {
            let want = run(&interp, n, local, t);
            assert_eq!(want.is_ok(), ok || t == 0, "local {local}, t {t}: {want:?}");
            assert_eq!(run(&cpu, n, local, t), want, "local {local}, t {t}");
        }
    }
}

/// An atomic whose index is proven under a precondition of its own (`i + off` under `i < n`:
/// `n + off <= len(h)`), in a loop whose copy for four active lanes takes the preconditions
/// of its accesses as tested on entry: the atomic's is among them, so a histogram too short
/// faults where the interpreter does (same work-item, same line) rather than writing past
/// it; in bounds, the interpreter's counts.
#[test]
fn atomics_proven_under_preconditions_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("hist", |k| {
        let x = k.read::<u32>("x");
        let h = k.read_write::<u32>("h");
        let n = k.scalar::<u32>("n");
        let off = k.scalar::<u32>("off");
        let i = global_id(0);
        if_(i.lt(n), || {
            for_range(0u32, 3u32, |j: Expr<u32>| {
                h.atomic_add(i + off, x.at(i) + j);
            });
        });
    })
    .unwrap();
    assert_eq!(k.cpu_vector_variant(), Ok(()));
    let run = |q: &Queue, n: u32, off: u32, len: usize| {
        let x = Buffer::from_slice(q, &(0..64u32).collect::<Vec<_>>()).unwrap();
        let h = Buffer::from_slice(q, &vec![0u32; len]).unwrap();
        k.launch(q, NdRange::new(64).local(16), args![&x, &h, n, off])
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(q.read(&h).unwrap())
    };
    for (n, off, len, ok) in [
        (64, 0, 64, true),
        (40, 8, 48, true),
        (40, 9, 48, false),
        (64, 4, 64, false),
    ] {
        let want = run(&interp, n, off, len);
        assert_eq!(want.is_ok(), ok, "n {n}, off {off}: {want:?}");
        assert_eq!(run(&cpu, n, off, len), want, "n {n}, off {off}, len {len}");
    }
}

/// What keeps a kernel with vector types on the scalar path says so: a buffer of vectors, a
/// reducing built-in of vectors.
#[test]
fn vector_types_that_stay_scalar_say_why() {
    let k = Kernel::build("vector_buffer", |k| {
        let v = k.read::<[f32; 4]>("v");
        let out = k.write::<f32>("out");
        out.set(global_id(0), v.at(global_id(0)).x());
    })
    .unwrap();
    assert_eq!(
        k.cpu_vector_variant(),
        Err("the buffer `v` of f32x4".to_string())
    );
    let k = Kernel::build("vector_dot", |k| {
        let x = k.read::<f32>("x");
        let out = k.write::<f32>("out");
        let a = vec4(x.at(global_id(0)), 1.0f32, 2.0f32, 3.0f32);
        out.set(global_id(0), a.dot(a.wzyx()));
    })
    .unwrap();
    assert_eq!(
        k.cpu_vector_variant(),
        Err("the built-in `dot` of f32x4".to_string())
    );
    // A private array of vectors is split too (its components keep the user's name), into
    // private arrays of `f32`, which take the vector variant (tests/cpu_private.rs).
    let k = Kernel::build("vector_private_array", |k| {
        let out = k.write::<f32>("out");
        let pa = private_array::<[f32; 4]>("pa", 3);
        pa.set(1u32, splat(global_id(0).cast::<f32>()));
        out.set(global_id(0), pa.at(global_id(0) % 3u32).y());
    })
    .unwrap();
    assert_eq!(k.cpu_vector_variant(), Ok(()));
    let (cpu, interp) = queues();
    let run = |q: &Queue| {
        let out = Buffer::<f32>::new(q.device(), 64).unwrap();
        k.launch(q, NdRange::new(64).local(8), args![&out]).unwrap();
        q.read(&out).unwrap()
    };
    assert_eq!(run(&cpu), run(&interp));
}

/// Work-item layouts (issue 31): `tid / 8`, `tid % 8`, `tid & 15`, a warp layout
/// `(tid / 32) * 8 + tid % 32 % 8`, `tid >> 3` and their neighbours that are not aligned
/// (`tid % 6`, `tid / 6`, `(tid + 1) % 8`), as indices of a buffer and a local array and in
/// branch conditions: the vector variant reads an aligned run of four modulo a multiple of
/// four as consecutive and divided by one as uniform; every layout agrees with the
/// interpreter bit for bit, with work-groups of 4, 8, 12, 16, 64 and 3.
#[test]
fn work_item_layouts_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("layouts", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", 64);
        let (g, tid, ls) = (global_id(0), local_id(0), local_size(0));
        tile.set(tid, x.at(g) * 3u32);
        barrier_local();
        let idx: Vec<Expr<u32>> = vec![
            tid / 8u32,
            tid % 8u32,
            tid & 15u32,
            (tid / 32u32) * 8u32 + tid % 32u32 % 8u32,
            tid >> 3u32,
            tid % 6u32,
            tid / 6u32,
            (tid + 1u32) % 8u32,
            g % 4u32 + (g / 4u32) * 4u32,
        ];
        let acc = var_named("acc", 0u32);
        for (j, &i) in idx.iter().enumerate() {
            let i = i % ls;
            acc.set(acc.get() * 7u32 + tile.at(i) + x.at((g - tid) + i));
            if_((i & 1u32).eq(1u32), || acc.set(acc.get() + j as u32));
        }
        out.set(g, acc.get());
    })
    .unwrap();
    assert_eq!(k.cpu_vector_variant(), Ok(()));
    let n = 192usize;
    let xs: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) % 1013)
        .collect();
    let run = |q: &Queue, local: usize| {
        let x = Buffer::from_slice(q, &xs).unwrap();
        let out = Buffer::<u32>::new(q.device(), n).unwrap();
        k.launch(q, NdRange::new(n).local(local), args![&x, &out])
            .unwrap();
        q.read(&out).unwrap()
    };
    for local in [4, 8, 12, 16, 64, 3] {
        assert_eq!(run(&cpu, local), run(&interp, local), "local size {local}");
    }
}

/// `x`'s bits spread over 64 bits (test data: a type's values through `as`).
fn spread(i: u64) -> u64 {
    let x = i
        .wrapping_add(0x9e37_79b9_7f4a_7c15)
        .wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^ (x >> 29)
}

/// The operands of the integer atomics tests for `groups` work-groups of `local`: each
/// work-item's value, the slots' first values (`ops` slots of four a work-group) and what
/// each work-item's compare-exchange (slot `ops - 1`) expects: what the work-item four before
/// it stored (the slot's first value for the first four), every third time off by `flip`.
fn atomic_operands<T: Copy>(
    groups: usize,
    local: usize,
    ops: usize,
    of: impl Fn(u64) -> T,
    flip: impl Fn(T) -> T,
) -> (Vec<T>, Vec<T>, Vec<T>) {
    let n = groups * local;
    let xs: Vec<T> = (0..n as u64).map(|i| of(spread(i))).collect();
    let init: Vec<T> = (0..(groups * ops * 4) as u64)
        .map(|i| of(spread(i + 1000)))
        .collect();
    let es = (0..n)
        .map(|i| {
            let (gr, l) = (i / local, i % local);
            let want = if l < 4 {
                init[gr * ops * 4 + (ops - 1) * 4 + l % 4]
            } else {
                xs[i - 4]
            };
            if i % 3 == 2 {
                flip(want)
            } else {
                want
            }
        })
        .collect();
    (xs, init, es)
}

/// Every integer atomic (add, sub, min, max, and, or, xor, exchange, compare-exchange) on a
/// buffer and on local memory, inline in the compiled code (`Gen::atomic_inline`: a
/// sequentially consistent `atomic_rmw`/`atomic_cas` on buffers, a plain load, operation and
/// store on local memory), against the interpreter bit for bit: each work-group works on four
/// slots per operation of its own (four work-items on each, in work-item order, so the old
/// values returned are the interpreter's), with results used and unused; compare-exchange both
/// succeeds and fails; an out-of-bounds atomic on either memory is the interpreter's error.
macro_rules! int_atomics_test {
    ($name:ident, $t:ty) => {
        #[test]
        fn $name() {
            let (cpu, interp) = queues();
            const OPS: u32 = 9;
            let build = |used: bool| {
                Kernel::build("atomics", |k| {
                    let x = k.read::<$t>("x");
                    let e = k.read::<$t>("e");
                    let g = k.read_write::<$t>("g");
                    let out = k.write::<$t>("out");
                    let lo = k.write::<$t>("lo");
                    let bad = k.scalar::<u32>("bad");
                    let sh = k.local_array::<$t>("sh", OPS * 4);
                    let (i, l, gr) = (global_id(0), local_id(0), group_id(0));
                    for_range(0u32, OPS * 4, |j| {
                        if_((j % local_size(0)).eq(l), || {
                            sh.set(j, g.at(gr * (OPS * 4) + j))
                        });
                    });
                    barrier();
                    let s = l % 4u32;
                    let v = x.at(i);
                    let c = e.at(i);
                    let gs = |op: u32| gr * (OPS * 4) + op * 4 + s;
                    let ls = |op: u32| s + op * 4;
                    // Past the end of `g` for work-item `bad`, of `sh` for `bad - 100`.
                    let og = select(l.eq(bad), g.len(), lit(0u32));
                    let ol = select((l + 100u32).eq(bad), lit(OPS * 4), lit(0u32));
                    let olds = [
                        g.atomic_add(gs(0) + og, v),
                        g.atomic_sub(gs(1), v),
                        g.atomic_min(gs(2), v),
                        g.atomic_max(gs(3), v),
                        g.atomic_and(gs(4), v),
                        g.atomic_or(gs(5), v),
                        g.atomic_xor(gs(6), v),
                        g.atomic_exchange(gs(7), v),
                        g.atomic_compare_exchange(gs(8), c, v),
                        sh.atomic_add(ls(0), v),
                        sh.atomic_sub(ls(1), v),
                        sh.atomic_min(ls(2), v),
                        sh.atomic_max(ls(3), v),
                        sh.atomic_and(ls(4), v),
                        sh.atomic_or(ls(5), v),
                        sh.atomic_xor(ls(6) + ol, v),
                        sh.atomic_exchange(ls(7), v),
                        sh.atomic_compare_exchange(ls(8), c, v),
                    ];
                    if used {
                        for (n, o) in olds.into_iter().enumerate() {
                            out.set(i * 18u32 + n as u32, o);
                        }
                    }
                    barrier();
                    for_range(0u32, OPS * 4, |j| {
                        if_((j % local_size(0)).eq(l), || {
                            lo.set(gr * (OPS * 4) + j, sh.at(j))
                        });
                    });
                })
                .unwrap()
            };
            for used in [true, false] {
                let k = build(used);
                assert_eq!(
                    k.cpu_vector_variant(),
                    Err("a local atomic in a kernel with barriers or collectives".into())
                );
                let run = |q: &Queue, local: usize, bad: u32| {
                    let groups = 5;
                    let n = groups * local;
                    let (xs, init, es) =
                        atomic_operands(groups, local, OPS as usize, |v| v as $t, |v| v ^ 1);
                    let x = Buffer::from_slice(q, &xs).unwrap();
                    let e = Buffer::from_slice(q, &es).unwrap();
                    let g = Buffer::from_slice(q, &init).unwrap();
                    let out = Buffer::<$t>::new(q.device(), n * 18).unwrap();
                    let lo = Buffer::<$t>::new(q.device(), init.len()).unwrap();
                    k.launch(
                        q,
                        NdRange::new(n).local(local),
                        args![&x, &e, &g, &out, &lo, bad],
                    )
                    .map(|_| {
                        (
                            q.read(&g).unwrap(),
                            q.read(&out).unwrap(),
                            q.read(&lo).unwrap(),
                            es,
                        )
                    })
                };
                for local in [1, 3, 8, 64] {
                    let want = run(&interp, local, u32::MAX).unwrap();
                    if used && local == 64 {
                        // Compare-exchange succeeded and failed, on both memories.
                        for op in [8, 17] {
                            let hits = (0..want.1.len() / 18)
                                .filter(|&i| want.1[i * 18 + op] == want.3[i])
                                .count();
                            assert!(hits > 0 && hits < want.3.len(), "{op}: {hits}");
                        }
                    }
                    assert!(run(&cpu, local, u32::MAX).unwrap() == want, "local {local}");
                    // The buffer's atomic (work-item 2 or 0), then the local one (1 or 0).
                    for bad in [local.min(3) as u32 - 1, 100 + local.min(2) as u32 - 1] {
                        let want = run(&interp, local, bad).unwrap_err();
                        assert!(matches!(want, Error::OutOfBounds { .. }), "{want}");
                        let got = run(&cpu, local, bad).unwrap_err();
                        assert_eq!(got.to_string(), want.to_string(), "local {local}");
                    }
                }
            }
        }
    };
}
int_atomics_test!(inline_atomics_on_i32_agree_with_the_interpreter, i32);
int_atomics_test!(inline_atomics_on_u32_agree_with_the_interpreter, u32);
int_atomics_test!(inline_atomics_on_i64_agree_with_the_interpreter, i64);
int_atomics_test!(inline_atomics_on_u64_agree_with_the_interpreter, u64);

/// Atomics on buffers that no work-item reads (a histogram's bins: add and subtract, and, or,
/// xor, min, max, each on a buffer of its own, with unused old values, some under a divergent
/// `if`), which a launch with at least four work-items per element keeps per thread
/// (`cpu/jit/privatize.rs`: plain updates of a copy filled with the operation's identity,
/// merged into the buffer when the thread is done): against the interpreter bit for bit,
/// from buffers that do not start at the identity, with 64 bins (kept) and 2048 (too few
/// work-items per bin: atomic), in work-groups of 64 and 8 (the vector variant, lanes one by
/// one) and 3 (one work-item at a time), twice each (the copies of the first launch reused);
/// an out-of-bounds atomic on a kept buffer is the interpreter's error.
macro_rules! kept_atomics_test {
    ($name:ident, $t:ty) => {
        #[test]
        fn $name() {
            let (cpu, interp) = queues();
            let k = Kernel::build("bins", |k| {
                let x = k.read::<$t>("x");
                let add = k.read_write::<$t>("add");
                let and = k.read_write::<$t>("and");
                let or = k.read_write::<$t>("or");
                let xor = k.read_write::<$t>("xor");
                let min = k.read_write::<$t>("min");
                let max = k.read_write::<$t>("max");
                let bins = k.scalar::<u32>("bins");
                let bad = k.scalar::<u32>("bad");
                let i = global_id(0);
                if_(i.lt(x.len()), || {
                    let v = x.at(i);
                    let b = (v.cast::<u32>() >> 7u32) % bins;
                    let over = select(i.eq(bad), add.len(), lit(0u32));
                    add.atomic_add(b + over, v);
                    add.atomic_sub((b + 1u32) % bins, v >> (3 as $t));
                    and.atomic_and(b, v);
                    or.atomic_or(b, v);
                    xor.atomic_xor(b, v);
                    min.atomic_min(b, v);
                    max.atomic_max(b, v);
                    if_((v.cast::<u32>() & 3u32).eq(0u32), || {
                        add.atomic_add(b, v);
                        min.atomic_min((b + 2u32) % bins, v);
                    });
                });
            })
            .unwrap();
            let n = 4096usize;
            let xs: Vec<$t> = (0..n as u64).map(|i| spread(i) as $t).collect();
            let run = |q: &Queue, bins: usize, local: usize, bad: u32| {
                let x = Buffer::from_slice(q, &xs).unwrap();
                let hs: Vec<Buffer<$t>> = (0..6u64)
                    .map(|j| {
                        let init: Vec<$t> = (0..bins as u64)
                            .map(|b| spread(b + 7919 * j) as $t)
                            .collect();
                        Buffer::from_slice(q, &init).unwrap()
                    })
                    .collect();
                k.launch(
                    q,
                    NdRange::covering(n, local),
                    args![
                        &x,
                        &hs[0],
                        &hs[1],
                        &hs[2],
                        &hs[3],
                        &hs[4],
                        &hs[5],
                        bins as u32,
                        bad
                    ],
                )
                .map(|_| hs.iter().map(|h| q.read(h).unwrap()).collect::<Vec<_>>())
            };
            for bins in [64, 2048] {
                for local in [64, 8, 3] {
                    let want = run(&interp, bins, local, u32::MAX).unwrap();
                    for _ in 0..2 {
                        let got = run(&cpu, bins, local, u32::MAX).unwrap();
                        assert!(got == want, "{bins} bins, local {local}");
                    }
                    let want = run(&interp, bins, local, 100).unwrap_err();
                    assert!(matches!(want, Error::OutOfBounds { .. }), "{want}");
                    let got = run(&cpu, bins, local, 100).unwrap_err();
                    assert_eq!(
                        got.to_string(),
                        want.to_string(),
                        "{bins} bins, local {local}"
                    );
                }
            }
        }
    };
}
kept_atomics_test!(kept_atomics_on_i32_agree_with_the_interpreter, i32);
kept_atomics_test!(kept_atomics_on_u32_agree_with_the_interpreter, u32);
kept_atomics_test!(kept_atomics_on_i64_agree_with_the_interpreter, i64);
kept_atomics_test!(kept_atomics_on_u64_agree_with_the_interpreter, u64);

/// A guarded 3 x 3 stencil on a pitched image (`(j + dj - 1) * w + i + di - 1` under `1 <= i,
/// j` and `i + 1, j + 1 < w`; the column's constants inside or outside the sum), whose loads
/// `ir/ranges.rs` proves in bounds when `w * w` fits the buffer: against the interpreter bit
/// for bit in work-groups of 8 x 2 (eight lanes), 4 x 1 (four) and 3 x 1 (one work-item at a
/// time), with an image that fits and one an element short, where the interpreter's
/// out-of-bounds error (same work-item, same line) must come from the copy that tests. (One
/// element: only the last work-item's last load is out of bounds. Where two work-items of a
/// work-group fault at different loads, the one-work-item-at-a-time code names the first
/// work-item to fault in its order, the interpreter the first load to fault in any: a
/// difference of the compiled backend this test does not cover.)
#[test]
fn pitched_stencils_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    for inside in [false, true] {
        let k = Kernel::build("blur", |k| {
            let x = k.read::<f32>("x");
            let y = k.write::<f32>("y");
            let w = k.scalar::<u32>("w");
            let (i, j) = (global_id(0), global_id(1));
            let inner = i
                .ge(1u32)
                .and(j.ge(1u32))
                .and((i + 1u32).lt(w))
                .and((j + 1u32).lt(w));
            if_(inner, || {
                let mut s = lit(0.0f32);
                for dj in 0..3u32 {
                    for di in 0..3u32 {
                        let at = if inside {
                            (j + dj - 1u32) * w + (i + di - 1u32)
                        } else {
                            (j + dj - 1u32) * w + i + di - 1u32
                        };
                        s = s + x.at(at) * (1.0f32 + (dj * 3 + di) as f32);
                    }
                }
                y.set(j * w + i, s);
            });
        })
        .unwrap();
        assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
        let w = 37usize;
        let run = |q: &Queue, local: [usize; 2], short: usize| {
            let xs: Vec<f32> = (0..(w * w - short) as u64)
                .map(|i| (spread(i) % 1000) as f32 / 7.0)
                .collect();
            let x = Buffer::from_slice(q, &xs).unwrap();
            let y = Buffer::from_slice(q, &vec![-1.0f32; w * w]).unwrap();
            k.launch(
                q,
                NdRange::covering([40, 38], local),
                args![&x, &y, w as u32],
            )
            .map(|_| q.read(&y).unwrap())
            .map_err(|e| e.to_string())
        };
        for local in [[8, 2], [4, 1], [3, 1]] {
            let want = run(&interp, local, 0);
            assert!(want.is_ok(), "{want:?}");
            let got = run(&cpu, local, 0);
            let bits = |v: &Result<Vec<f32>, String>| {
                v.as_ref()
                    .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
                    .ok()
            };
            assert_eq!(bits(&got), bits(&want), "inside {inside}, local {local:?}");
            let want = run(&interp, local, 1);
            assert!(
                want.as_ref().is_err_and(|e| e.contains("out of bounds")),
                "{want:?}"
            );
            assert_eq!(
                run(&cpu, local, 1),
                want,
                "inside {inside}, local {local:?}"
            );
        }
    }
}

/// Shifts by an amount the lanes share (a literal, a scalar argument) are one vector shift in
/// the vector variant (`simd.rs`' `vbinary`): the IR's masked amounts (`x << 35` is `x << 3`
/// for 32 bits, `<< 70` is `<< 6` for 64), arithmetic shifts of signed values, logical of
/// unsigned, against the interpreter bit for bit, in four and eight lanes and one work-item
/// at a time; amounts that differ per lane still shift lane by lane.
#[test]
fn shifts_by_shared_amounts_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k32 = Kernel::build("shifts32", |k| {
        let x = k.read::<u32>("x");
        let o = k.write::<u32>("o");
        let a = k.scalar::<u32>("a");
        let i = global_id(0);
        let (v, s) = (x.at(i), x.at(i).cast::<i32>());
        let outs = [
            v >> 24u32,
            v << 35u32,
            (s >> 31i32).cast::<u32>(),
            (s >> a.cast::<i32>()).cast::<u32>(),
            v << a,
            v >> a,
            v >> (v & 7u32),
        ];
        for (j, e) in outs.into_iter().enumerate() {
            o.set(i * 7u32 + j as u32, e);
        }
    })
    .unwrap();
    let k64 = Kernel::build("shifts64", |k| {
        let w = k.read::<u64>("w");
        let o = k.write::<u64>("o");
        let b = k.scalar::<u64>("b");
        let i = global_id(0);
        let (u, t) = (w.at(i), w.at(i).cast::<i64>());
        let outs = [
            u >> 40u64,
            u << 70u64,
            (t >> 63i64).cast::<u64>(),
            (t >> b.cast::<i64>()).cast::<u64>(),
            u << b,
            u >> b,
        ];
        for (j, e) in outs.into_iter().enumerate() {
            o.set(i * 6u32 + j as u32, e);
        }
    })
    .unwrap();
    assert_eq!(k32.cpu_eight_lane_variant(), Ok(()));
    assert_eq!(k64.cpu_vector_variant(), Ok(()));
    let n = 256usize;
    let xs: Vec<u32> = (0..n as u64).map(|i| spread(i) as u32).collect();
    let ws: Vec<u64> = (0..n as u64).map(|i| spread(i + 99)).collect();
    let run = |q: &Queue, local: usize, a: u32, b: u64| {
        let x = Buffer::from_slice(q, &xs).unwrap();
        let w = Buffer::from_slice(q, &ws).unwrap();
        let o32 = Buffer::<u32>::new(q.device(), n * 7).unwrap();
        let o64 = Buffer::<u64>::new(q.device(), n * 6).unwrap();
        let range = NdRange::new(n).local(local);
        k32.launch(q, range, args![&x, &o32, a]).unwrap();
        k64.launch(q, range, args![&w, &o64, b]).unwrap();
        (q.read(&o32).unwrap(), q.read(&o64).unwrap())
    };
    for (a, b) in [(0, 0), (5, 13), (31, 63), (33, 70)] {
        let want = run(&interp, 64, a, b);
        // Eight lanes (32 bits), four, one work-item at a time.
        for local in [64, 4, 1] {
            assert!(
                run(&cpu, local, a, b) == want,
                "a {a}, b {b}, local {local}"
            );
        }
    }
}

/// Atomics on a buffer in a kernel with barriers (the look-back scan's shape: a tile number
/// taken by work-item 0 and shared through local memory, status words exchanged and read),
/// which the vector variant runs lane by lane in its regions (only local atomics keep such a
/// kernel scalar): every integer atomic, by all work-items and by a divergent subset, old
/// values used across a barrier, against the interpreter bit for bit, with work-groups of 4,
/// 8, 12 and 64 (four lanes) and 3 (one work-item at a time); an out-of-bounds atomic is the
/// interpreter's error, in the first region and after a barrier.
macro_rules! buffer_atomics_with_barriers_test {
    ($name:ident, $t:ty) => {
        #[test]
        fn $name() {
            let (cpu, interp) = queues();
            const OPS: u32 = 9;
            let k = Kernel::build("buffer_atomics_barriers", |k| {
                let x = k.read::<$t>("x");
                let e = k.read::<$t>("e");
                let g = k.read_write::<$t>("g");
                let counter = k.read_write::<u32>("counter");
                let out = k.write::<$t>("out");
                let bad = k.scalar::<u32>("bad");
                let (i, l, gr) = (global_id(0), local_id(0), group_id(0));
                let ticket = k.local_array::<u32>("ticket", 1);
                // Each work-group's own counter (work-groups run in any order), past the end of
                // `counter` for the work-group `bad`: the even work-items count in order.
                if_((l % 2u32).eq(0u32), || {
                    let oc = select(gr.eq(bad), counter.len() + 1000u32, lit(0u32));
                    let old = counter.atomic_add(gr + oc, 1u32);
                    if_(l.eq(2u32), || ticket.set(0u32, old));
                });
                barrier();
                let t = ticket.at(0u32);
                let s = l % 4u32;
                let v = x.at(i);
                let c = e.at(i);
                let gs = |op: u32| gr * (OPS * 4) + op * 4 + s;
                // Past the end of `g` for work-item `bad - 100` (after the barrier).
                let og = select(i.eq(bad - 100u32), g.len(), lit(0u32));
                let olds = [
                    g.atomic_add(gs(0) + og, v),
                    g.atomic_sub(gs(1), v),
                    g.atomic_min(gs(2), v),
                    g.atomic_max(gs(3), v),
                    g.atomic_and(gs(4), v),
                    g.atomic_or(gs(5), v),
                    g.atomic_xor(gs(6), v),
                    g.atomic_exchange(gs(7), v),
                    g.atomic_compare_exchange(gs(8), c, v),
                ];
                let kept: Vec<Expr<$t>> = olds.iter().map(|o| o.named("old")).collect();
                barrier();
                for (n, o) in kept.into_iter().enumerate() {
                    out.set(i * 11u32 + n as u32, o);
                }
                // A divergent subset (every third work-item) reads and swaps a status word.
                let w = var_named::<$t>("w", lit(<$t>::default()));
                if_((l % 3u32).eq(1u32), || {
                    w.set(g.atomic_load(gr * (OPS * 4) + s));
                    g.atomic_exchange(gr * (OPS * 4) + 4u32 + s, w.get());
                });
                barrier();
                out.set(i * 11u32 + 9u32, w.get());
                out.set(i * 11u32 + 10u32, t.cast::<$t>());
            })
            .unwrap();
            assert_eq!(k.cpu_vector_variant(), Ok(()));
            let run = |q: &Queue, local: usize, bad: u32| {
                let groups = 5;
                let n = groups * local;
                let (xs, init, es) =
                    atomic_operands(groups, local, OPS as usize, |v| v as $t, |v| v ^ 1);
                let x = Buffer::from_slice(q, &xs).unwrap();
                let e = Buffer::from_slice(q, &es).unwrap();
                let g = Buffer::from_slice(q, &init).unwrap();
                let counter = Buffer::from_slice(q, &vec![0u32; groups]).unwrap();
                let out = Buffer::<$t>::new(q.device(), n * 11).unwrap();
                k.launch(
                    q,
                    NdRange::new(n).local(local),
                    args![&x, &e, &g, &counter, &out, bad],
                )
                .map(|_| {
                    (
                        q.read(&g).unwrap(),
                        q.read(&out).unwrap(),
                        q.read(&counter).unwrap(),
                    )
                })
            };
            for local in [4, 8, 12, 64, 3] {
                let want = run(&interp, local, u32::MAX).unwrap();
                assert_eq!(want.2, [local.div_ceil(2) as u32; 5], "local {local}");
                assert!(run(&cpu, local, u32::MAX).unwrap() == want, "local {local}");
                // The counter of work-group 2 (before the barrier), then `g` for the
                // work-item `local + 2` (after it).
                for bad in [2, 100 + local as u32 + 2] {
                    let want = run(&interp, local, bad).unwrap_err();
                    assert!(matches!(want, Error::OutOfBounds { .. }), "{want}");
                    let got = run(&cpu, local, bad).unwrap_err();
                    assert_eq!(got.to_string(), want.to_string(), "local {local} bad {bad}");
                }
            }
        }
    };
}
buffer_atomics_with_barriers_test!(
    buffer_atomics_with_barriers_agree_with_the_interpreter_u32,
    u32
);
buffer_atomics_with_barriers_test!(
    buffer_atomics_with_barriers_agree_with_the_interpreter_i64,
    i64
);

/// The float atomics (add, min, max, exchange) on a buffer and on local memory against the
/// interpreter bit for bit, as the integer ones above: add (a loop of `fadd` and
/// compare-exchange on the bits on a buffer, a plain `fadd` on local memory) and exchange
/// inline, min and max through the helper (`Num::min_`'s rules), with NaN, -0.0, 0.0 and
/// infinity among the operands and the slots' first values, results used and unused.
macro_rules! float_atomics_test {
    ($name:ident, $t:ty) => {
        #[test]
        fn $name() {
            let (cpu, interp) = queues();
            const OPS: u32 = 4;
            let build = |used: bool| {
                Kernel::build("float_atomics", |k| {
                    let x = k.read::<$t>("x");
                    let g = k.read_write::<$t>("g");
                    let out = k.write::<$t>("out");
                    let lo = k.write::<$t>("lo");
                    let sh = k.local_array::<$t>("sh", OPS * 4);
                    let (i, l, gr) = (global_id(0), local_id(0), group_id(0));
                    for_range(0u32, OPS * 4, |j| {
                        if_((j % local_size(0)).eq(l), || {
                            sh.set(j, g.at(gr * (OPS * 4) + j))
                        });
                    });
                    barrier();
                    let s = l % 4u32;
                    let v = x.at(i);
                    let gs = |op: u32| gr * (OPS * 4) + op * 4 + s;
                    let ls = |op: u32| s + op * 4;
                    let olds = [
                        g.atomic_add(gs(0), v),
                        g.atomic_min(gs(1), v),
                        g.atomic_max(gs(2), v),
                        g.atomic_exchange(gs(3), v),
                        sh.atomic_add(ls(0), v),
                        sh.atomic_min(ls(1), v),
                        sh.atomic_max(ls(2), v),
                        sh.atomic_exchange(ls(3), v),
                    ];
                    if used {
                        for (n, o) in olds.into_iter().enumerate() {
                            out.set(i * 8u32 + n as u32, o);
                        }
                    }
                    barrier();
                    for_range(0u32, OPS * 4, |j| {
                        if_((j % local_size(0)).eq(l), || {
                            lo.set(gr * (OPS * 4) + j, sh.at(j))
                        });
                    });
                })
                .unwrap()
            };
            // One NaN (an add of two NaNs then has one answer whichever operand it keeps).
            let special = [<$t>::NAN, -0.0, 0.0, <$t>::INFINITY, 1.5, -2.25];
            let val = |i: u64| match spread(i) % 9 {
                n @ 0..=5 => special[n as usize],
                _ => (spread(i + 7) % 2001) as $t * 0.125 - 125.0,
            };
            for used in [true, false] {
                let k = build(used);
                let run = |q: &Queue, local: usize| {
                    let groups = 5;
                    let n = groups * local;
                    let xs: Vec<$t> = (0..n as u64).map(val).collect();
                    let init: Vec<$t> = (0..groups as u64 * OPS as u64 * 4)
                        .map(|i| val(i + 1000))
                        .collect();
                    let x = Buffer::from_slice(q, &xs).unwrap();
                    let g = Buffer::from_slice(q, &init).unwrap();
                    let out = Buffer::<$t>::new(q.device(), n * 8).unwrap();
                    let lo = Buffer::<$t>::new(q.device(), init.len()).unwrap();
                    k.launch(q, NdRange::new(n).local(local), args![&x, &g, &out, &lo])
                        .unwrap();
                    let bits = |b: &Buffer<$t>| -> Vec<u64> {
                        q.read(b)
                            .unwrap()
                            .iter()
                            .map(|v| v.to_bits() as u64)
                            .collect()
                    };
                    (bits(&g), bits(&out), bits(&lo))
                };
                for local in [1, 3, 8, 64] {
                    let want = run(&interp, local);
                    assert_eq!(run(&cpu, local), want, "local {local}");
                }
            }
        }
    };
}
float_atomics_test!(inline_atomics_on_f32_agree_with_the_interpreter, f32);
float_atomics_test!(inline_atomics_on_f64_agree_with_the_interpreter, f64);

/// Atomics from many work-groups at once (more than threads, so they run concurrently on
/// `cpu`), with no barrier (the kernel is one region, in four lanes: `simd::Gen::vatomic`,
/// lane by lane): a ticket counter (the old values
/// returned are 0 to n - 1, once each), sub, min, max, and, or and xor, a compare-exchange
/// loop counting to n, and float adds of whole numbers (exact, so any order gives the same
/// sum): every final value is the interpreter's and the host's.
#[test]
fn contended_inline_atomics_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("contended", |k| {
        let x = k.read::<i64>("x");
        let c = k.read_write::<u32>("c");
        let w = k.read_write::<i64>("w");
        let f = k.read_write::<f32>("f");
        let d = k.read_write::<f64>("d");
        let tickets = k.write::<u32>("tickets");
        let i = global_id(0);
        let v = x.at(i);
        tickets.set(i, c.atomic_add(0u32, 1u32));
        c.atomic_sub(1u32, 3u32);
        w.atomic_min(0u32, v);
        w.atomic_max(1u32, v);
        w.atomic_and(2u32, v);
        w.atomic_or(3u32, v);
        w.atomic_xor(4u32, v);
        w.atomic_add(5u32, v);
        loop_(|| {
            let cur = c.atomic_load(2u32);
            if_(
                c.atomic_compare_exchange(2u32, cur, cur + 1u32).eq(cur),
                break_,
            );
        });
        f.atomic_add(0u32, (v & 255i64).cast::<f32>());
        d.atomic_add(0u32, (v >> 20i64).cast::<f64>());
    })
    .unwrap();
    // Four lanes, each active lane's atomic in turn; not eight.
    assert_eq!(k.cpu_vector_variant(), Ok(()));
    assert_eq!(k.cpu_eight_lane_variant(), Err("an atomic".into()));
    let n = 64 * 1024;
    let xs: Vec<i64> = (0..n as u64).map(|i| (spread(i) as i64) >> 20).collect();
    let run = |q: &Queue| {
        let x = Buffer::from_slice(q, &xs).unwrap();
        let c = Buffer::<u32>::new(q.device(), 3).unwrap();
        let w = Buffer::from_slice(q, &[i64::MAX, i64::MIN, -1, 0, 0, 0]).unwrap();
        let f = Buffer::<f32>::new(q.device(), 1).unwrap();
        let d = Buffer::<f64>::new(q.device(), 1).unwrap();
        let t = Buffer::<u32>::new(q.device(), n).unwrap();
        k.launch(q, NdRange::new(n).local(64), args![&x, &c, &w, &f, &d, &t])
            .unwrap();
        let mut t = q.read(&t).unwrap();
        t.sort_unstable();
        (
            q.read(&c).unwrap(),
            q.read(&w).unwrap(),
            q.read(&f).unwrap()[0].to_bits(),
            q.read(&d).unwrap()[0].to_bits(),
            t,
        )
    };
    let want = run(&interp);
    let host = (
        vec![
            n as u32,
            (n as u32).wrapping_mul(3).wrapping_neg(),
            n as u32,
        ],
        vec![
            *xs.iter().min().unwrap(),
            *xs.iter().max().unwrap(),
            xs.iter().fold(-1, |a, &b| a & b),
            xs.iter().fold(0, |a, &b| a | b),
            xs.iter().fold(0, |a, &b| a ^ b),
            xs.iter().fold(0i64, |a, &b| a.wrapping_add(b)),
        ],
        (xs.iter().map(|&v| v & 255).sum::<i64>() as f32).to_bits(),
        (xs.iter().map(|&v| v >> 20).sum::<i64>() as f64).to_bits(),
        (0..n as u32).collect::<Vec<_>>(),
    );
    assert_eq!(want, host);
    for _ in 0..3 {
        assert_eq!(run(&cpu), want);
    }
}

/// A 2-D launch of a kernel whose barriers sit in a `for` loop runs its work-groups in bands
/// of rows on `cpu` (the tiled matmul's order): the results are the interpreter's, and of
/// several failing work-groups the error is still the first in index order, also where a
/// later one (in index order) runs first (work-group (0, 5) comes before (1, 0) in a band of
/// eight rows).
#[test]
fn work_groups_in_bands_fault_as_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("banded_tiles", |k| {
        let x = k.read::<u32>("x");
        let bad = k.read::<u32>("bad");
        let y = k.write::<u32>("y");
        // A run-time trip count: a loop of literal bounds is unrolled, and then the kernel
        // has no loop with barriers (nor the bands).
        let tiles = k.scalar::<u32>("tiles");
        let tile = k.local_array::<u32>("tile", 16);
        let gx = num_groups(0);
        let g = group_id(1) * gx + group_id(0);
        let l = local_id(1) * 4u32 + local_id(0);
        let acc = var_named("acc", 0u32);
        for_range(0u32, tiles, |t| {
            // A failing work-group reads past the end of `x` in its second tile.
            let i = (g * 16u32 + l) * 3u32 + t + bad.at(g) * t * 100_000u32;
            tile.set(l, x.at(i));
            barrier_local();
            acc.set(acc.get() + tile.at(15u32 - l));
            barrier_local();
        });
        y.set(g * 16u32 + l, acc.get());
    })
    .unwrap();
    let (gx, gy) = (3usize, 10usize);
    let run = |q: &Queue, failing: &[usize]| {
        let n = gx * gy * 16;
        let xs: Vec<u32> = (0..3 * n as u32)
            .map(|i| i.wrapping_mul(2654435761))
            .collect();
        let mut flags = vec![0u32; gx * gy];
        for &f in failing {
            flags[f] = 1;
        }
        let x = Buffer::from_slice(q, &xs).unwrap();
        let b = Buffer::from_slice(q, &flags).unwrap();
        let y = Buffer::<u32>::new(q.device(), n).unwrap();
        k.launch(
            q,
            NdRange::new([gx * 4, gy * 4]).local([4, 4]),
            args![&x, &b, &y, 3u32],
        )
        .map_err(|e| e.to_string())?;
        Ok::<_, String>(q.read(&y).unwrap())
    };
    // Group index = row * 3 + column: (1, 0) is 1, (0, 5) is 15, (2, 9) is 29.
    for failing in [vec![], vec![1, 15], vec![15, 29], vec![29], vec![1]] {
        let want = run(&interp, &failing);
        assert_eq!(want.is_ok(), failing.is_empty(), "{failing:?}: {want:?}");
        assert_eq!(run(&cpu, &failing), want, "{failing:?}");
    }
}

/// Integer divisions and remainders whose operands are the same in every work-item (a
/// chunk's length, `(len + size - 1) / size`, of `u32`, `i32`, `u16` and `i64` operands,
/// `i32::MIN / -1` among them), where all four or eight lanes are active: one scalar
/// division for the lanes (issue 31). Bit for bit the interpreter's, on the eight-lane
/// variant (a kernel of 32-bit values, local size 8), the four-lane one (64-bit values, or
/// a barrier: regions) and the scalar code (local size 6); a zero divisor is the
/// interpreter's error: work-item 0 where every work-item divides, and the first work-item
/// that divides where a divergent `if` holds the division (there the lanes are not all
/// active: lane by lane).
#[test]
fn uniform_divisions_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let build = |wide: bool, synced: bool| {
        Kernel::build("uniform_div", |k| {
            let x = k.read::<u32>("x");
            let out = k.write::<u32>("out");
            let side = k.write::<i32>("side");
            let d = k.scalar::<u32>("d");
            let a = k.scalar::<i32>("a");
            let di = k.scalar::<i32>("di");
            let dz = k.scalar::<i32>("dz");
            let g = global_id(0);
            let chunk = (x.len() + d - 1u32) / d;
            let r = (x.len() * 7u32) % d;
            let qi = a / di;
            let ri = a % di;
            let mut v = chunk * 1000u32 + r * 10u32 + qi.cast::<u32>() * 3u32 + ri.cast::<u32>();
            if !wide {
                let h = ((x.len() + 5u32).cast::<u16>() / d.cast::<u16>()).cast::<u32>();
                let w = (a.cast::<i64>() * 100_003i64 / di.cast::<i64>()).cast::<u32>();
                v = v + h * 17u32 + w;
            }
            if synced {
                barrier();
            }
            out.set(g, v + x.at(g));
            // Not every lane active: lane by lane, the first active lane's fault.
            if_((g % 3u32).eq(1u32), || {
                side.set(g, a / dz + g.cast::<i32>())
            });
        })
        .unwrap()
    };
    for (wide, synced) in [(true, false), (false, false), (true, true)] {
        let k = build(wide, synced);
        assert!(
            k.cpu_vector_variant().is_ok(),
            "{:?}",
            k.cpu_vector_variant()
        );
        assert_eq!(
            k.cpu_eight_lane_variant().is_ok(),
            wide && !synced,
            "{:?}",
            k.cpu_eight_lane_variant()
        );
        let n = 48usize;
        let xs: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
        let run = |q: &Queue, local: usize, d: u32, a: i32, di: i32, dz: i32| {
            let x = Buffer::from_slice(q, &xs).unwrap();
            let out = Buffer::<u32>::new(q.device(), n).unwrap();
            let side = Buffer::<i32>::new(q.device(), n).unwrap();
            k.launch(
                q,
                NdRange::new(n).local(local),
                args![&x, &out, &side, d, a, di, dz],
            )
            .map(|_| (q.read(&out).unwrap(), q.read(&side).unwrap()))
        };
        for local in [8usize, 4, 6, 16] {
            let case = format!("wide {wide}, synced {synced}, local {local}");
            for (d, a, di) in [(7u32, -1000i32, 3i32), (5, i32::MIN, -1), (48, 77, -9)] {
                let want = run(&interp, local, d, a, di, 3).unwrap();
                assert_eq!(
                    run(&cpu, local, d, a, di, 3).unwrap(),
                    want,
                    "{case}, d {d}"
                );
            }
            // Every work-item divides by `d` and `di`: work-item 0 faults; `dz` divides only
            // in the work-items of the `if` (the first is 1).
            for (d, di, dz, item) in [(0u32, 3i32, 3i32, 0usize), (7, 0, 3, 0), (7, 3, 0, 1)] {
                let want = run(&interp, local, d, 5, di, dz).unwrap_err();
                assert!(
                    want.to_string().contains("division by zero")
                        && want.to_string().contains(&format!("global ({item}")),
                    "{want}"
                );
                let got = run(&cpu, local, d, 5, di, dz).unwrap_err();
                let at = format!("{case}, d {d}, di {di}, dz {dz}");
                assert_eq!(got.to_string(), want.to_string(), "{at}");
            }
        }
    }
}

/// Work-group reductions (`group_reduce_add`, `_min`, `_max`) of `f32`, `f64`, `i32`
/// (wrapping) and `u32` values, which the group level folds straight from the records
/// (issue 31): the interpreter's results bit for bit (a float sum's order is the local-id
/// order: values of mixed magnitude and sign make any other order round differently), on
/// work-groups of 4, 6 (a last block of records half full, the scalar code), 64 and 1024;
/// and a reduction that not every work-item reaches is the interpreter's error.
#[test]
fn group_reductions_fold_in_local_id_order_as_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("group_reductions", |k| {
        let x = k.read::<f32>("x");
        let xd = k.read::<f64>("xd");
        let xi = k.read::<i32>("xi");
        let out = k.write::<f32>("out");
        let outd = k.write::<f64>("outd");
        let outi = k.write::<i32>("outi");
        let outu = k.write::<u32>("outu");
        let skip = k.scalar::<u32>("skip");
        let g = global_id(0);
        if_(g.eq(skip), return_);
        let v = x.at(g);
        let s = group_reduce_add(v);
        let lo = group_reduce_min(v);
        let hi = group_reduce_max(v);
        out.set(g, s + lo * 3.0f32 - hi);
        outd.set(g, group_reduce_add(xd.at(g)) + group_reduce_max(xd.at(g)));
        outi.set(g, group_reduce_add(xi.at(g)) ^ group_reduce_min(xi.at(g)));
        outu.set(g, group_reduce_max(xi.at(g).cast::<u32>()) + local_id(0));
    })
    .unwrap();
    let run = |q: &Queue, n: usize, local: usize, skip: u32| {
        let xs: Vec<f32> = (0..n)
            .map(|i| {
                let m = ((i * 7919) % 1013) as f32 / 7.0;
                let big = if i % 5 == 0 { 1.0e7 } else { 1.0 };
                if i % 3 == 0 {
                    -m * big
                } else {
                    m * big
                }
            })
            .collect();
        let xd: Vec<f64> = xs.iter().map(|&v| v as f64 * 1.0e10 + 0.1).collect();
        let xi: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(0x3779_b1f1)).collect();
        let x = Buffer::from_slice(q, &xs).unwrap();
        let xd = Buffer::from_slice(q, &xd).unwrap();
        let xi = Buffer::from_slice(q, &xi).unwrap();
        let out = Buffer::<f32>::new(q.device(), n).unwrap();
        let outd = Buffer::<f64>::new(q.device(), n).unwrap();
        let outi = Buffer::<i32>::new(q.device(), n).unwrap();
        let outu = Buffer::<u32>::new(q.device(), n).unwrap();
        k.launch(
            q,
            NdRange::new(n).local(local),
            args![&x, &xd, &xi, &out, &outd, &outi, &outu, skip],
        )
        .map(|_| {
            (
                q.read(&out)
                    .unwrap()
                    .into_iter()
                    .map(f32::to_bits)
                    .collect::<Vec<_>>(),
                q.read(&outd)
                    .unwrap()
                    .into_iter()
                    .map(f64::to_bits)
                    .collect::<Vec<_>>(),
                q.read(&outi).unwrap(),
                q.read(&outu).unwrap(),
            )
        })
    };
    for local in [4usize, 6, 64, 1024] {
        let n = local * 3;
        let want = run(&interp, n, local, u32::MAX).unwrap();
        assert_eq!(
            run(&cpu, n, local, u32::MAX).unwrap(),
            want,
            "local {local}"
        );
        let want = run(&interp, n, local, 1).unwrap_err();
        assert!(matches!(want, Error::BarrierDivergence { .. }), "{want}");
        let got = run(&cpu, n, local, 1).unwrap_err();
        assert_eq!(got.to_string(), want.to_string(), "local {local}");
    }
}

/// Fills on the CPU backends (a gather's reset of its partials before every launch is one):
/// whole elements of 1, 8 and 12 bytes (a pattern that does not divide the 64 KiB the fill
/// writes at a time), over ranges shorter than an element's pattern repeated a few times
/// and longer than 64 KiB, from offsets inside the buffer: the pattern everywhere in the
/// range, and nothing outside it.
#[test]
fn fills_write_whole_patterns_on_the_cpu_backends() {
    let (cpu, interp) = queues();
    for q in [cpu, interp] {
        for (len, range) in [(10usize, 3..5), (7000, 1..6999), (30_000, 5..29_000)] {
            let b = Buffer::<[f32; 3]>::new(q.device(), len).unwrap();
            q.fill(&b, [1.5, -2.0, 3.25], range.clone()).unwrap();
            let v = q.read(&b).unwrap();
            for (i, e) in v.iter().enumerate() {
                let want = if range.contains(&i) {
                    [1.5, -2.0, 3.25]
                } else {
                    [0.0; 3]
                };
                assert_eq!(
                    *e,
                    want,
                    "{}: [f32; 3], element {i} of {len}",
                    q.device().name()
                );
            }
            let b = Buffer::<u8>::new(q.device(), len * 12).unwrap();
            q.fill(&b, 0xa7, range.start * 12 + 1..range.end * 12 - 1)
                .unwrap();
            let v = q.read(&b).unwrap();
            for (i, &e) in v.iter().enumerate() {
                let want = if (range.start * 12 + 1..range.end * 12 - 1).contains(&i) {
                    0xa7
                } else {
                    0
                };
                assert_eq!(e, want, "{}: u8, element {i}", q.device().name());
            }
            let b = Buffer::<f64>::new(q.device(), len * 2).unwrap();
            q.fill(&b, -0.5, range.start..len * 2 - 1).unwrap();
            let v = q.read(&b).unwrap();
            for (i, &e) in v.iter().enumerate() {
                let want = if (range.start..len * 2 - 1).contains(&i) {
                    -0.5
                } else {
                    0.0
                };
                assert_eq!(e, want, "{}: f64, element {i}", q.device().name());
            }
        }
    }
}

/// A kernel of two regions on 3-D work-groups (issue 31: a region's work-items run as one
/// loop, `x` in steps of the lanes, then the next row, then the next plane, the row's first
/// linear id carried along): every work-item writes its own element, from a local array its
/// neighbour filled; groups whose rows are four or eight wide (the vector variant), one
/// row of four (`y` and `z` of one), and odd ones (the scalar code). A fault in either
/// region, in a later plane of a later group, names the interpreter's work-item.
#[test]
fn regions_of_3d_groups_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("planes", |k| {
        let x = k.read::<f32>("x");
        let out = k.write::<f32>("out");
        let bad_load = k.scalar::<u32>("bad_load");
        let bad_tile = k.scalar::<u32>("bad_tile");
        let tile = k.local_array::<f32>("tile", 64);
        let (w, h) = (global_size(0), global_size(1));
        let gi = (global_id(2) * h + global_id(1)) * w + global_id(0);
        let lin = local_linear_id();
        let size = local_size(0) * local_size(1) * local_size(2);
        let far = select(gi.eq(bad_load), 1_000_000u32, 0u32);
        tile.set(lin, x.at(gi + far) * 2.0f32 + lin.cast::<f32>());
        barrier_local();
        let next = select(gi.eq(bad_tile), 64u32, (lin + 1u32) % size);
        out.set(
            gi,
            tile.at(next) - tile.at(lin) * 0.5f32 + local_id(2).cast::<f32>(),
        );
    })
    .unwrap();
    let run = |q: &Queue, local: [usize; 3], bad: (u32, u32)| {
        let global = [local[0] * 2, local[1] * 3, local[2] * 2];
        let n: usize = global.iter().product();
        let xs: Vec<f32> = (0..n)
            .map(|i| ((i * 29) % 23) as f32 * 0.25 - 2.0)
            .collect();
        let xb = Buffer::from_slice(q, &xs).unwrap();
        let out = Buffer::<f32>::new(q.device(), n).unwrap();
        k.launch(
            q,
            NdRange::new(global).local(local),
            args![&xb, &out, bad.0, bad.1],
        )
        .map_err(|e| e.to_string())?;
        let bits: Vec<u32> = q.read(&out).unwrap().iter().map(|v| v.to_bits()).collect();
        Ok::<_, String>(bits)
    };
    for local in [
        [4, 3, 2],
        [8, 2, 3],
        [4, 1, 1],
        [16, 2, 2],
        [3, 2, 2],
        [6, 1, 3],
    ] {
        let n: u32 = local.iter().product::<usize>() as u32 * 12;
        // The last work-item of the launch, one in the middle of a later plane, none.
        for bad in [n - 1, n / 2 + 5, u32::MAX] {
            for faults in [(bad, u32::MAX), (u32::MAX, bad)] {
                let want = run(&interp, local, faults);
                assert_eq!(
                    want.is_ok(),
                    bad == u32::MAX,
                    "{local:?} {faults:?}: {want:?}"
                );
                let got = run(&cpu, local, faults);
                assert_eq!(got, want, "local {local:?}, faults {faults:?}");
            }
        }
    }
}

/// Integer multiplication, division and remainder by literal powers of two (shifts and
/// masks in the vector variants, issue 31: a division lane by lane took four `div`s a
/// vector) against the interpreter bit for bit: every integer type, powers from `2^0` up to
/// the type's top bit (the signed types' `MIN`, a negative literal, takes the general path),
/// the literal on either side of a product, negative dividends (their quotients rounded
/// towards zero, remainders negative) and the types' extremes, in four lanes, in eight
/// (32-bit types) and one work-item at a time.
macro_rules! pow2_arith_test {
    ($name:ident, $t:ty, $bits:expr) => {
        #[test]
        fn $name() {
            let (cpu, interp) = queues();
            let ks: Vec<u32> = (0..$bits).collect();
            let per = ks.len() as u32 * 4;
            let k = Kernel::build("pow2", |kb| {
                let x = kb.read::<$t>("x");
                let out = kb.write::<$t>("out");
                let i = global_id(0);
                let v = x.at(i);
                for (j, &e) in ks.iter().enumerate() {
                    let p: $t = (1 as $t).wrapping_shl(e);
                    let at = i * per + j as u32 * 4;
                    out.set(at, v / p);
                    out.set(at + 1u32, v % p);
                    out.set(at + 2u32, v * p);
                    out.set(at + 3u32, lit(p) * v);
                }
            })
            .unwrap();
            assert_eq!(k.cpu_vector_variant(), Ok(()));
            // Work-groups of 8 (eight lanes for the 32-bit types), 4 and 3.
            if $bits == 32 {
                assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
            }
            let n = 48usize;
            let mut xs: Vec<$t> = vec![
                0,
                1,
                <$t>::MAX,
                <$t>::MIN,
                <$t>::MIN.wrapping_add(1),
                <$t>::MAX.wrapping_sub(1),
                (0 as $t).wrapping_sub(1),
                (0 as $t).wrapping_sub(2),
                (0 as $t).wrapping_sub(8),
                (0 as $t).wrapping_sub(9),
                7,
                8,
            ];
            xs.extend((0..(n - xs.len()) as u64).map(|i| spread(i) as $t));
            let run = |q: &Queue, local: usize| {
                let x = Buffer::from_slice(q, &xs).unwrap();
                let out = Buffer::<$t>::new(q.device(), n * per as usize).unwrap();
                k.launch(q, NdRange::new(n).local(local), args![&x, &out])
                    .unwrap();
                q.read(&out).unwrap()
            };
            let want = run(&interp, 8);
            for local in [8, 4, 3] {
                let got = run(&cpu, local);
                if let Some(at) = (0..want.len()).find(|&i| got[i] != want[i]) {
                    let (item, j) = (at / per as usize, at % per as usize);
                    panic!(
                        "local {local}: x = {}, 2^{} op {}: {} (interp {})",
                        xs[item],
                        j / 4,
                        j % 4,
                        got[at],
                        want[at]
                    );
                }
            }
        }
    };
}
pow2_arith_test!(pow2_arithmetic_on_u8_agrees_with_the_interpreter, u8, 8);
pow2_arith_test!(pow2_arithmetic_on_i8_agrees_with_the_interpreter, i8, 8);
pow2_arith_test!(pow2_arithmetic_on_u16_agrees_with_the_interpreter, u16, 16);
pow2_arith_test!(pow2_arithmetic_on_i16_agrees_with_the_interpreter, i16, 16);
pow2_arith_test!(pow2_arithmetic_on_u32_agrees_with_the_interpreter, u32, 32);
pow2_arith_test!(pow2_arithmetic_on_i32_agrees_with_the_interpreter, i32, 32);
pow2_arith_test!(pow2_arithmetic_on_u64_agrees_with_the_interpreter, u64, 64);
pow2_arith_test!(pow2_arithmetic_on_i64_agrees_with_the_interpreter, i64, 64);

/// A division and a remainder of consecutive `u32`s by a uniform divisor (a row-major
/// image's `i / width`, `i % width`; `Gen::consecutive_div`: one division a register, the
/// other lanes from it) against the interpreter bit for bit: divisors 1 to 9, 16 and 1000,
/// ids offset so that a register's lanes wrap past `u32::MAX` (lane by lane there), in four
/// and eight lanes and one work-item at a time; a zero divisor is the interpreter's error.
#[test]
fn consecutive_division_by_a_uniform_divisor_agrees_with_the_interpreter() {
    let (cpu, interp) = queues();
    // At the top of the kernel (every lane active), and as the Mandelbrot kernel's pixels:
    // under an `if` on the lanes' own condition.
    let build = |guarded: bool| {
        Kernel::build("rows", |kb| {
            let out = kb.write::<u32>("out");
            let width = kb.scalar::<u32>("width");
            let off = kb.scalar::<u32>("off");
            let i = global_id(0);
            let p = i + off;
            let body = || {
                let (q, r) = (p / width, p % width);
                let t = var_named("t", 0u32);
                // Read in a loop (as the Mandelbrot kernel's `cx`, `cy`): there the
                // divisions are hoisted out of it, their zero tests deferred to the use.
                for_range(0u32, i % 3u32 + 1u32, |j| t.set(t.get() + j * q + r));
                out.set(i * 3u32, q);
                out.set(i * 3u32 + 1u32, r);
                out.set(i * 3u32 + 2u32, t.get());
            };
            if guarded {
                if_(i.lt(out.len() / 3u32), body);
            } else {
                body();
            }
        })
        .unwrap()
    };
    let n = 96usize;
    for guarded in [false, true] {
        let k = build(guarded);
        assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
        let run = |q: &Queue, local: usize, width: u32, off: u32| {
            let out = Buffer::<u32>::new(q.device(), 3 * n).unwrap();
            k.launch(q, NdRange::new(n).local(local), args![&out, width, off])
                .map(|_| q.read(&out).unwrap())
        };
        for width in [1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 1000] {
            for off in [0, 5, u32::MAX - 40, u32::MAX - 50] {
                let want = run(&interp, 8, width, off).unwrap();
                for local in [8, 4, 3] {
                    assert!(
                        run(&cpu, local, width, off).unwrap() == want,
                        "guarded {guarded} width {width} off {off} local {local}"
                    );
                }
            }
        }
        let want = run(&interp, 8, 0, 0).unwrap_err();
        assert!(matches!(want, Error::KernelFault { .. }), "{want}");
        for local in [8, 4, 3] {
            let got = run(&cpu, local, 0, 0).unwrap_err();
            assert_eq!(got.to_string(), want.to_string(), "local {local}");
        }
    }
}

/// The six work-group scans of `T` (inclusive and exclusive; add, min, max), each into its
/// own output, around a barrier so that they sit at the group level between regions, for
/// work-groups of 4, 6 (a partial last block of four records), 32 and 64 work-items: bit for
/// bit the interpreter's (floats folded in local-id order: the values below make the order
/// show in the sums).
fn scans_agree<T: strata::builder::Numeric + std::fmt::Debug>(xs: impl Fn(u32) -> T) {
    use strata::builder::Expr;
    let (cpu, interp) = queues();
    type Scan<T> = fn(Expr<T>) -> Expr<T>;
    let ops: [(&str, Scan<T>); 6] = [
        ("inclusive_add", group_scan_inclusive_add),
        ("exclusive_add", group_scan_exclusive_add),
        ("inclusive_min", group_scan_inclusive_min),
        ("exclusive_min", group_scan_exclusive_min),
        ("inclusive_max", group_scan_inclusive_max),
        ("exclusive_max", group_scan_exclusive_max),
    ];
    let k = Kernel::build("scans", |k| {
        let x = k.read::<T>("x");
        let outs: Vec<_> = ops.iter().map(|(name, _)| k.write::<T>(name)).collect();
        let g = global_id(0);
        let v = x.at(g);
        barrier();
        for ((_, op), out) in ops.iter().zip(&outs) {
            out.set(g, op(v));
        }
    })
    .unwrap();
    let run = |q: &Queue, local: usize| -> Vec<Vec<u8>> {
        let n = local * 3;
        let x = Buffer::from_slice(q, &(0..n as u32).map(&xs).collect::<Vec<T>>()).unwrap();
        let outs: Vec<Buffer<T>> = (0..ops.len())
            .map(|_| Buffer::<T>::new(q.device(), n).unwrap())
            .collect();
        let mut a = vec![strata::KernelArg::from(&x)];
        a.extend(outs.iter().map(strata::KernelArg::from));
        k.launch(q, NdRange::new(n).local(local), &a[..]).unwrap();
        outs.iter()
            .map(|o| bytemuck::cast_slice(&q.read(o).unwrap()).to_vec())
            .collect()
    };
    for local in [4, 6, 32, 64] {
        let (got, want) = (run(&cpu, local), run(&interp, local));
        for ((name, _), (g, w)) in ops.iter().zip(got.iter().zip(&want)) {
            assert_eq!(g, w, "{name}, local size {local}");
        }
    }
}

#[test]
fn work_group_scans_agree_with_the_interpreter() {
    // Large and negative values: additions wrap.
    scans_agree(|i| (i.wrapping_mul(2654435761) as i32) >> (i % 3));
    scans_agree(|i| i.wrapping_mul(2654435761) >> (i % 5));
    // Magnitudes from 1e-3 to 1e7 and both signs: a sum in another order rounds otherwise.
    scans_agree(|i| {
        let h = i.wrapping_mul(2654435761);
        let m = (h >> 8) as f32 / 16_777_216.0;
        let s = if h & 1 == 0 { 1.0 } else { -1.0 };
        s * m * [1e-3, 1.0, 1e7][(h >> 1) as usize % 3]
    });
}

/// A work-group scan that only some work-items reach fails with the interpreter's message.
#[test]
fn work_group_scans_in_divergent_code_fail_as_on_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("half_scan", |k| {
        let x = k.read_write::<u32>("x");
        let l = local_id(0);
        if_(l.ge(5u32), || {
            let s = group_scan_exclusive_add(l);
            x.set(global_id(0), s);
        });
    })
    .unwrap();
    let run = |q: &Queue| {
        let x = Buffer::<u32>::new(q.device(), 16).unwrap();
        k.launch(q, NdRange::new(16).local(8), args![&x])
            .unwrap_err()
            .to_string()
    };
    let want = run(&interp);
    assert!(
        want.contains("group_scan_exclusive_add reached by only 3 of the 8 work-items"),
        "{want}"
    );
    assert_eq!(run(&cpu), want);
}

/// A signed division by a literal `MIN` hoisted out of a loop (its divisor under the
/// hoisting's `select`), in the one-work-item code and in four and eight lanes: the
/// interpreter's quotients (1 for `MIN`, else 0; Cranelift 0.125 computed -1 for `MIN`).
#[test]
fn hoisted_division_by_min_agrees_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("min_div", |kb| {
        let x = kb.read::<i32>("x");
        let out = kb.write::<i32>("out");
        let i = global_id(0);
        let v = x.at(i);
        let acc = var_named("acc", 0i32);
        for_range(0u32, i % 3u32 + 1u32, |_| acc.set(acc.get() + v / i32::MIN));
        out.set(i, acc.get());
    })
    .unwrap();
    let xs: Vec<i32> = (0..24)
        .map(|i| match i % 4 {
            0 => i32::MIN,
            1 => i32::MIN + 1,
            2 => -1,
            _ => i32::MAX - i,
        })
        .collect();
    let run = |q: &Queue, local: usize| {
        let x = Buffer::from_slice(q, &xs).unwrap();
        let out = Buffer::<i32>::new(q.device(), xs.len()).unwrap();
        k.launch(q, NdRange::new(xs.len()).local(local), args![&x, &out])
            .unwrap();
        q.read(&out).unwrap()
    };
    let want = run(&interp, 8);
    assert_eq!(want[0], 1, "{want:?}");
    for local in [8, 4, 3] {
        assert_eq!(run(&cpu, local), want, "local {local}");
    }
}

/// A striped loop: each work-group reads its stretch of a buffer with the work-items side
/// by side (`for i in (start + local_id .. end).step_by(step)`, `start` the group's stretch,
/// `step` the group's size or a parameter), so that the four lanes' loads are consecutive.
/// Where the lanes run the same number of iterations, the vector variant runs them together
/// (one test on entry); where they do not (a stretch that is not a multiple of the step, the
/// last one clamped short at the buffer's end, a step of 1 or 3 that makes the lanes
/// overlap) or a counter could wrap, the general loop. Bit for bit the interpreter's, per
/// work-item (sum and trip count) and in the gathered total, for `u32` and `i32` counters,
/// one region and with a collective after the loop, groups of 4, 8, 16 (the vector
/// variant: eight lanes for 8 and 16 in one region, each register of lanes tested) and 6
/// (the scalar code).
#[test]
fn striped_loops_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let build = |signed: bool, synced: bool, param_step: bool| {
        Kernel::build("striped", |k| {
            let x = k.read::<f32>("x");
            let sums = k.write::<f32>("sums");
            let trips = k.write::<u32>("trips");
            let chunk = k.scalar::<u32>("chunk");
            let step = k.scalar::<u32>("step");
            let acc = var_named("acc", 0.0f32);
            let count = var_named("count", 0u32);
            let start = group_id(0) * chunk;
            let end = (start + chunk).min(x.len());
            let st = if param_step { step } else { local_size(0) };
            let body = |i: Expr<u32>| {
                acc.set(acc.get() + x.at(i) * (i % 7u32).cast::<f32>());
                count.set(count.get() + 1u32);
            };
            if signed {
                for_step(
                    (start + local_id(0)).cast::<i32>(),
                    end.cast::<i32>(),
                    st.cast::<i32>(),
                    |i: Expr<i32>| body(i.cast::<u32>()),
                );
            } else {
                for_step(start + local_id(0), end, st, body);
            }
            sums.set(global_id(0), acc.get());
            trips.set(global_id(0), count.get());
            if synced {
                k.gather_add(acc.get());
            }
        })
        .unwrap()
    };
    let groups = 6usize;
    for signed in [false, true] {
        for synced in [false, true] {
            for param_step in [false, true] {
                let k = build(signed, synced, param_step);
                assert!(
                    k.cpu_vector_variant().is_ok(),
                    "{:?}",
                    k.cpu_vector_variant()
                );
                for local in [4usize, 8, 16, 6] {
                    let steps: &[u32] = if param_step { &[1, 3, 4, 8, 64] } else { &[0] };
                    for &step in steps {
                        // Whole multiples of the group (the lanes together), not (the last
                        // lanes one iteration short), and stretches clamped at the end.
                        for (chunk, n) in [
                            (local * 40, groups * local * 40),
                            (local * 40 + 3, groups * (local * 40 + 3)),
                            (local * 40, groups * local * 40 - 5),
                            (local * 9, local * 20),
                            (1, 3),
                        ] {
                            let case = format!(
                                "signed {signed}, synced {synced}, local {local}, step {step}, \
                                 chunk {chunk}, n {n}"
                            );
                            let xs: Vec<f32> = (0..n)
                                .map(|i| ((i * 7919) % 1009) as f32 / 1009.0 - 0.25)
                                .collect();
                            let run = |q: &Queue| {
                                let x = Buffer::from_slice(q, &xs).unwrap();
                                let g = groups * local;
                                let sums = Buffer::<f32>::new(q.device(), g).unwrap();
                                let trips = Buffer::<u32>::new(q.device(), g).unwrap();
                                let r = k
                                    .enqueue(
                                        q,
                                        NdRange::new(g).local(local),
                                        args![&x, &sums, &trips, chunk as u32, step],
                                        &[],
                                    )
                                    .unwrap();
                                let total = if synced {
                                    r.gather::<f32>(0).unwrap().get().unwrap().to_bits()
                                } else {
                                    r.wait().unwrap();
                                    0
                                };
                                let sums = sums.to_vec(q).unwrap();
                                let sums: Vec<u32> = sums.into_iter().map(f32::to_bits).collect();
                                (total, sums, trips.to_vec(q).unwrap())
                            };
                            let (want, got) = (run(&interp), run(&cpu));
                            assert_eq!(got.2, want.2, "trips, {case}");
                            assert_eq!(got.1, want.1, "sums, {case}");
                            assert_eq!(got.0, want.0, "total, {case}");
                        }
                    }
                }
            }
        }
    }
}

/// Striped loops whose counters wrap: with `step` 0x9000_0000 from 0xE000_0000 + local id
/// below 0xF000_0000, each lane's counter wraps and comes back below the end eight times
/// before it passes it (nine iterations; one if the counter did not wrap); with a step of
/// 0x1000_0000 from 0xEFFF_FFF0 it passes the end without wrapping (one iteration); with a
/// step of 0x0FFF_FFFE from 0xF000_0000 below 0xF000_0010 the counters of local ids 0 and 1
/// pass the end without wrapping (one iteration), the others wrap (seventeen). The lanes
/// run the same number of iterations without wrapping only in the second case, the only
/// one that may run them together. A zero step is the interpreter's fault.
#[test]
fn striped_loops_that_wrap_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("striped_wrap", |k| {
        let trips = k.write::<u32>("trips");
        let seen = k.write::<u32>("seen");
        let base = k.scalar::<u32>("base");
        let end = k.scalar::<u32>("end");
        let step = k.scalar::<u32>("step");
        let count = var_named("count", 0u32);
        let sum = var_named("sum", 0u32);
        for_step(base + local_id(0), end, step, |i: Expr<u32>| {
            count.set(count.get() + 1u32);
            sum.set(sum.get() ^ (i >> 28u32) << (count.get() % 8u32 * 4u32));
        });
        trips.set(global_id(0), count.get());
        seen.set(global_id(0), sum.get());
    })
    .unwrap();
    assert!(
        k.cpu_vector_variant().is_ok(),
        "{:?}",
        k.cpu_vector_variant()
    );
    for (base, end, step, iterations) in [
        (0xE000_0000u32, 0xF000_0000u32, 0x9000_0000u32, [9u32, 9]),
        (0xEFFF_FFF0, 0xF000_0000, 0x1000_0000, [1, 1]),
        (0xF000_0000, 0xF000_0010, 0x0FFF_FFFE, [1, 17]),
    ] {
        for local in [4usize, 8, 6] {
            let run = |q: &Queue| {
                let trips = Buffer::<u32>::new(q.device(), 24).unwrap();
                let seen = Buffer::<u32>::new(q.device(), 24).unwrap();
                k.launch(
                    q,
                    NdRange::new(24 / local * local).local(local),
                    args![&trips, &seen, base, end, step],
                )
                .unwrap();
                (trips.to_vec(q).unwrap(), seen.to_vec(q).unwrap())
            };
            let (want, got) = (run(&interp), run(&cpu));
            let expected: Vec<u32> = (0..24 / local * local)
                .map(|g| iterations[(g % local >= 2) as usize])
                .collect();
            assert_eq!(
                want.0[..expected.len()],
                expected[..],
                "interpreter, local {local}"
            );
            assert_eq!(got, want, "base {base:#x}, step {step:#x}, local {local}");
        }
    }
    for local in [4usize, 6] {
        let fail = |q: &Queue| {
            let trips = Buffer::<u32>::new(q.device(), 24).unwrap();
            let seen = Buffer::<u32>::new(q.device(), 24).unwrap();
            k.launch(
                q,
                NdRange::new(24 / local * local).local(local),
                args![&trips, &seen, 0u32, 100u32, 0u32],
            )
            .unwrap_err()
        };
        let want = fail(&interp);
        assert!(want.to_string().contains("step"), "{want}");
        assert_eq!(fail(&cpu).to_string(), want.to_string(), "local {local}");
    }
}

/// A striped loop reading one past its stretch: not proven in bounds, so the lanes are
/// tested in the copy that runs them together as in the general loop, and the fault is the
/// interpreter's (the same work-item, line and index), with and without a collective after
/// the loop, on the vector variant (groups of 4 and 16) and the scalar code (6).
#[test]
fn striped_loops_one_past_the_end_fault_as_on_the_interpreter() {
    for synced in [false, true] {
        let k = Kernel::build("striped_past", |k| {
            let x = k.read::<f32>("x");
            let sums = k.write::<f32>("sums");
            let acc = var_named("acc", 0.0f32);
            let chunk = (x.len() + num_groups(0) - 1u32) / num_groups(0);
            let start = group_id(0) * chunk;
            for_step(
                start + local_id(0),
                (start + chunk).min(x.len()),
                local_size(0),
                |i: Expr<u32>| acc.set(acc.get() + x.at(i + 1u32)),
            );
            sums.set(global_id(0), acc.get());
            if synced {
                k.gather_add(acc.get());
            }
        })
        .unwrap();
        let cases = [(4096usize, 4usize), (4096, 16), (4096, 6), (1000, 4)];
        faults_one_past_the_end_as_the_interpreter(&k, &cases, synced);
    }
}

/// Launches `k` (a buffer `x` of `n` ones it reads one past the end, 96 sums) with 96 work-items
/// (rounded down to the local size) for each `(n, local)`: the interpreter's fault is the
/// out-of-bounds read of element `n`, and `cpu`'s is the same, word for word.
fn faults_one_past_the_end_as_the_interpreter(k: &Kernel, cases: &[(usize, usize)], synced: bool) {
    let (cpu, interp) = queues();
    for &(n, local) in cases {
        let fail = |q: &Queue| {
            let x = Buffer::from_slice(q, &vec![1.0f32; n]).unwrap();
            let sums = Buffer::<f32>::new(q.device(), 96).unwrap();
            k.launch(
                q,
                NdRange::new(96 / local * local).local(local),
                args![&x, &sums],
            )
            .unwrap_err()
        };
        let want = fail(&interp);
        assert!(
            matches!(want, Error::OutOfBounds { index, .. } if index == n as i64),
            "{want}"
        );
        let got = fail(&cpu);
        assert_eq!(
            got.to_string(),
            want.to_string(),
            "synced {synced}, n {n}, local {local}"
        );
    }
}

/// Register tiles: many accumulators, each updated once per step of a loop unrolled when
/// the kernel was built (SGEMM's shape), which the vector variant lowers a group of
/// accumulators at a time (`cpu/jit/sched.rs`): twenty `f32` accumulators (eight a group
/// in four lanes) and ten `f64` ones (four a group), fused multiply-adds with the shared
/// factor first and second, one accumulator that reads another mid-way, a load the proof
/// cannot put in bounds (at a parameter's offset: it ends the movable runs and faults as the
/// interpreter's), the values kept across a barrier or written before it. Bit for bit the
/// interpreter's on four, eight and twelve lanes a group, and one, three; the same fault.
#[test]
fn register_tiles_lowered_group_by_group_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let build = |cross: bool| {
        Kernel::build("register_tile", move |k| {
            let a = k.read::<f32>("a");
            let b = k.read::<f32>("b");
            let c = k.read::<f64>("c");
            let out = k.write::<f32>("out");
            let out64 = k.write::<f64>("out64");
            let off = k.scalar::<u32>("off");
            let tile = k.local_array::<f32>("tile", 64);
            let (l, g) = (local_id(0), global_id(0));
            tile.set(l, a.at(g));
            barrier_local();
            let acc: Vec<Var<f32>> = (0..20)
                .map(|j| var_named(&format!("c{j}"), j as f32 * 0.5))
                .collect();
            let acc64: Vec<Var<f64>> = (0..10)
                .map(|j| var_named(&format!("d{j}"), j as f64 - 3.0))
                .collect();
            for s in 0..6u32 {
                let x = tile.at((l + s) % 64u32);
                for (j, v) in acc.iter().enumerate() {
                    let y = b.at(lit(s * 20 + j as u32));
                    if j % 2 == 0 {
                        v.set(x.fma(y, v.get()));
                    } else {
                        v.set(y.fma(x, v.get()));
                    }
                }
                if s == 3 {
                    acc[5].set(acc[5].get() + acc[19].get());
                }
                let w = c.at(off + s);
                for (j, v) in acc64.iter().enumerate() {
                    let y = c.at(lit(s * 10 + j as u32));
                    v.set(w.fma(y, v.get()) + x.cast::<f64>());
                }
            }
            if cross {
                barrier_local();
            }
            for (j, v) in acc.iter().enumerate() {
                out.set(g * 20u32 + j as u32, v.get());
            }
            for (j, v) in acc64.iter().enumerate() {
                out64.set(g * 10u32 + j as u32, v.get());
            }
        })
        .unwrap()
    };
    let global = 48usize;
    let av: Vec<f32> = (0..global).map(|i| (i as f32 * 0.37).sin()).collect();
    let bv: Vec<f32> = (0..120).map(|i| 1.0 + (i as f32 * 0.11).cos()).collect();
    let cv: Vec<f64> = (0..64).map(|i| 0.5 + (i as f64 * 0.23).sin()).collect();
    for cross in [false, true] {
        let k = build(cross);
        assert_eq!(k.cpu_vector_variant(), Ok(()));
        let run = |q: &Queue, local: usize, off: u32| {
            let a = Buffer::from_slice(q, &av).unwrap();
            let b = Buffer::from_slice(q, &bv).unwrap();
            let c = Buffer::from_slice(q, &cv).unwrap();
            let out = Buffer::<f32>::new(q.device(), global * 20).unwrap();
            let out64 = Buffer::<f64>::new(q.device(), global * 10).unwrap();
            k.launch(
                q,
                NdRange::new(global).local(local),
                args![&a, &b, &c, &out, &out64, off],
            )
            .map_err(|e| e.to_string())?;
            let mut bits: Vec<u64> = q
                .read(&out)
                .unwrap()
                .iter()
                .map(|x| x.to_bits() as u64)
                .collect();
            bits.extend(q.read(&out64).unwrap().iter().map(|x| x.to_bits()));
            Ok::<_, String>(bits)
        };
        for local in [4, 8, 12, 16, 48, 1, 3] {
            for off in [0u32, 58, 59] {
                let want = run(&interp, local, off);
                assert_eq!(want.is_ok(), off < 59, "off {off}: {want:?}");
                let got = run(&cpu, local, off);
                // The first difference, not both vectors: they are 1,440 numbers long.
                let first = match (&got, &want) {
                    (Ok(g), Ok(w)) => g.iter().zip(w).position(|(x, y)| x != y),
                    _ => None,
                };
                assert!(
                    got.is_ok() == want.is_ok() && first.is_none() && (got.is_ok() || got == want),
                    "barrier {cross}, local {local}, off {off}: first difference at {first:?}, \
                     errors {:?} against {:?}",
                    got.as_ref().err(),
                    want.as_ref().err()
                );
            }
        }
    }
}

/// A loop that reads more of the launch's tables than registers hold (four buffers, a local
/// array and four scalar arguments: the sorts' `Parts` scatter's shape), whose scalar code
/// loads them in its body each iteration instead of keeping them across it
/// (`cpu/jit/lower.rs`, `Gen::reload_tables`), with a `while` loop of the same kind nested in
/// it: results bit for bit the interpreter's at every local size (the kernel runs one
/// work-item at a time: its loop gathers lane by lane), and where the scatter's index passes
/// the end of its buffer in the middle of the loop, the interpreter's error.
#[test]
fn loops_reading_many_table_entries_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("scatter_many", |k| {
        let keys = k.read::<u32>("keys");
        let vals = k.read::<f32>("vals");
        let keys_out = k.write::<u32>("keys_out");
        let vals_out = k.write::<f32>("vals_out");
        let koff = k.scalar::<u32>("koff");
        let voff = k.scalar::<u32>("voff");
        let ooff = k.scalar::<u32>("ooff");
        let shift = k.scalar::<u32>("shift");
        let per = k.scalar::<u32>("per");
        let seen = k.local_array::<u32>("seen", 64);
        seen.set(local_id(0), 0u32);
        barrier();
        let start = global_id(0) * per;
        for_range(start, start + per, |i| {
            let key = keys.at(koff + i);
            let d = (key >> shift) & 7u32;
            let at = ooff + i * 8u32 + d;
            keys_out.set(at, key + seen.at(d));
            let j = var_named("j", 0u32);
            let s = var_named("s", vals.at(voff + i));
            while_(
                || j.get().lt(d),
                || {
                    s.set(s.get() * 0.5f32 + vals.at(voff + i + j.get()));
                    j.set(j.get() + 1u32);
                },
            );
            vals_out.set(at, s.get());
        });
    })
    .unwrap();
    // The scalar code is what this test is about.
    assert!(k.cpu_vector_variant().is_err());
    let (items, per) = (24u32, 5u32);
    let n = items * per;
    let keys: Vec<u32> = (0..n + 16).map(|i| i.wrapping_mul(2654435761)).collect();
    let vals: Vec<f32> = (0..n + 32).map(|i| i as f32 * 0.25 - 3.0).collect();
    let run = |q: &Queue, local: usize, out_len: u32| {
        let kb = Buffer::from_slice(q, &keys).unwrap();
        let vb = Buffer::from_slice(q, &vals).unwrap();
        let ko = Buffer::<u32>::new(q.device(), out_len as usize).unwrap();
        let vo = Buffer::<f32>::new(q.device(), out_len as usize).unwrap();
        let r = k.launch(
            q,
            NdRange::new(items as usize).local(local),
            args![&kb, &vb, &ko, &vo, 16u32, 7u32, 3u32, 29u32, per],
        );
        r.map(|_| {
            let bits: Vec<u32> = q.read(&vo).unwrap().iter().map(|v| v.to_bits()).collect();
            (q.read(&ko).unwrap(), bits)
        })
        .map_err(|e| e.to_string())
    };
    let full = 3 + 8 * n;
    let want = run(&interp, 4, full).unwrap();
    for local in [4, 8, 1, 3, 6] {
        assert_eq!(run(&cpu, local, full).unwrap(), want, "local size {local}");
    }
    // The last work-item's third element writes past the end of `keys_out` (where its
    // digit is 2 or more, else its fourth); no other work-item passes the end.
    let short = 3 + 8 * ((items - 1) * per + 2) + 2;
    for local in [4, 8, 1, 3, 6] {
        let want = run(&interp, local, short).unwrap_err();
        assert!(
            want.contains("out of bounds for buffer `keys_out`"),
            "{want}"
        );
        assert_eq!(
            run(&cpu, local, short).unwrap_err(),
            want,
            "local size {local}"
        );
    }
}

/// A long chain of arithmetic on a private variable, stored every tenth step: plainly (the
/// store's vector path and its lane-by-lane paths each used the value) or from both sides of
/// an `if` (the sides and the code after it each used it). Cranelift computes a pure value
/// in every block that uses it unless a block above them does, so each store (each `if`)
/// computed the whole chain again: at 1,000 steps the eight-lane variant of the plain kernel
/// did not fit Cranelift's limit on a function's size (`CodeTooLarge`, a failed launch).
/// Both must launch at every local size and agree with the interpreter bit for bit. (The
/// `if` kernel's vector variants still grow with the square of its length, anchored only in
/// the one-work-item code: 150 steps keep the test short.)
#[test]
fn long_chains_stored_in_branches_compile_once() {
    let chain = |steps: usize, with_if: bool| {
        Kernel::build(if with_if { "chain_if" } else { "chain" }, |k| {
            let x = k.read_write::<u32>("x");
            let i = global_id(0);
            let a = var_named("a", x.at(i));
            for j in 0..steps {
                a.set(a.get() * 3u32 + j as u32);
                if j % 10 == 0 {
                    if with_if {
                        if_((i & 1u32).eq(0u32), || x.set(i, a.get()))
                            .else_(|| x.set(i, a.get() ^ 1u32));
                    } else {
                        x.set(i, a.get());
                    }
                }
            }
            x.set(i, x.at(i) + a.get());
        })
        .unwrap()
    };
    let (cpu, interp) = queues();
    let xs: Vec<u32> = (0..48u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
    for (steps, with_if) in [(1000, false), (150, true)] {
        let k = chain(steps, with_if);
        assert_eq!(k.cpu_eight_lane_variant(), Ok(()), "{steps} {with_if}");
        for local in [8, 4, 3] {
            let run = |q: &Queue| {
                let x = Buffer::from_slice(q, &xs).unwrap();
                k.launch(q, NdRange::new(48).local(local), args![&x])
                    .unwrap_or_else(|e| panic!("{steps} steps, if {with_if}, local {local}: {e}"));
                q.read(&x).unwrap()
            };
            assert_eq!(
                run(&cpu),
                run(&interp),
                "{steps} steps, if {with_if}, local {local}"
            );
        }
    }
}

/// A group-level `for` counter that every work-item holds alike, read by the regions of the
/// loop's body from the group's shared word (`cpu`'s shared counters): counters of 8-, 16-,
/// 32- and 64-bit types, signed ones stepping down, bounds from the launch's arguments (zero
/// trips among them); the loop run by the group level's one counter, and, with a `break`
/// every work-item takes at the same counter, by its general loop, which steps each
/// work-item's counter. Local sizes that fill the blocks of four (the vector code) and one
/// that does not (the scalar code); the interpreter's results bit for bit.
#[test]
fn shared_loop_counters_of_every_type_agree_with_the_interpreter() {
    macro_rules! counters {
        ($t:ty, $brk:expr, $cases:expr) => {{
            let k = Kernel::build("shared_counter", |k| {
                let out = k.write::<u32>("out");
                let start = k.scalar::<$t>("start");
                let end = k.scalar::<$t>("end");
                let step = k.scalar::<$t>("step");
                let stop = k.scalar::<$t>("stop");
                let sh = k.local_array::<u32>("sh", 64);
                let l = local_id(0);
                let ls = local_size(0);
                let acc = var_named("acc", 7u32);
                for_step::<$t>(start, end, step, |i| {
                    let iu = i.cast::<u32>();
                    sh.set(l, iu * 3u32 + l);
                    barrier();
                    acc.set(acc.get() * 5u32 + sh.at((l + iu) % ls) + iu);
                    barrier();
                    if $brk {
                        if_(i.le(stop).and(i.ge(stop)), || break_());
                    }
                });
                out.set(global_id(0), acc.get());
            })
            .unwrap();
            let cases: Vec<[$t; 4]> = $cases;
            let (cpu, interp) = queues();
            for local in [8usize, 4, 3] {
                for &[start, end, step, stop] in &cases {
                    let run = |q: &Queue| {
                        let out = Buffer::<u32>::new(q.device(), local * 3).unwrap();
                        k.launch(
                            q,
                            NdRange::new(local * 3).local(local),
                            args![&out, start, end, step, stop],
                        )
                        .unwrap();
                        q.read(&out).unwrap()
                    };
                    assert_eq!(
                        run(&cpu),
                        run(&interp),
                        "{} break {}, local {local}, {start}..{end} by {step}, stop {stop}",
                        stringify!($t),
                        $brk
                    );
                }
            }
        }};
    }
    for brk in [false, true] {
        counters!(
            i8,
            brk,
            vec![[5, -3, -1, 0], [-100, 100, 37, 11], [3, 3, 1, 0]]
        );
        counters!(u8, brk, vec![[250, 255, 1, 253], [0, 200, 45, 90]]);
        counters!(i16, brk, vec![[-7, 9, 4, 1], [300, -300, -123, 54]]);
        counters!(u16, brk, vec![[65530, 65535, 1, 65534], [10, 0, 1, 0]]);
        counters!(u32, brk, vec![[0, 9, 1, 4], [u32::MAX - 6, u32::MAX, 2, 0]]);
        counters!(
            i64,
            brk,
            vec![[1 << 40, (1 << 40) - 9, -2, (1 << 40) - 4], [-5, 5, 3, 1]]
        );
        counters!(
            u64,
            brk,
            vec![[(1 << 33) - 2, (1 << 33) + 3, 1, 1 << 33], [7, 7, 1, 7]]
        );
    }
}

/// A shared counter that is also the bound of a guarded region (`if local_id < i`, a region
/// of its own whose work-item loop stops at the bound, which the group level reads from the
/// records) and read by it: the interpreter's results at every local size.
#[test]
fn a_shared_counter_bounding_a_guarded_region_agrees_with_the_interpreter() {
    let k = Kernel::build("guarded_by_counter", |k| {
        let out = k.write::<u32>("out");
        let trips = k.scalar::<u32>("trips");
        let sh = k.local_array::<u32>("sh", 64);
        let l = local_id(0);
        let ls = local_size(0);
        let acc = var_named("acc", 1u32);
        for_range(0u32, trips, |i| {
            sh.set(l, l * 7u32 + i);
            barrier();
            if_(l.lt(i), || {
                acc.set(acc.get() * 3u32 + sh.at((l + i) % ls) + i)
            });
            barrier();
        });
        out.set(global_id(0), acc.get());
    })
    .unwrap();
    let (cpu, interp) = queues();
    for local in [16usize, 8, 4, 5] {
        for trips in [0u32, 3, 9, 20] {
            let run = |q: &Queue| {
                let out = Buffer::<u32>::new(q.device(), local * 2).unwrap();
                k.launch(q, NdRange::new(local * 2).local(local), args![&out, trips])
                    .unwrap();
                q.read(&out).unwrap()
            };
            assert_eq!(run(&cpu), run(&interp), "local {local}, trips {trips}");
        }
    }
}

/// Conditions of small `if`s that every lane reaches, which the vector code tests on
/// scalars where they compare consecutive indices with a bound every lane shares (the first
/// or last lane against the bound) or two shared values: below, above and at the bounds,
/// where the four lanes' indices wrap past `u32::MAX` or `i32::MAX` (the scalar test must
/// then leave the decision to the lanes), flipped comparisons and conjunctions. The
/// interpreter's results at local sizes of eight, four and three.
#[test]
fn scalar_tests_of_every_lane_agree_with_the_interpreter_at_wrapping_indices() {
    let k = Kernel::build("every_lane", |k| {
        let x = k.read_write::<u32>("x");
        let off = k.scalar::<u32>("off");
        let n = k.scalar::<u32>("n");
        let so = k.scalar::<i32>("so");
        let sn = k.scalar::<i32>("sn");
        let i = global_id(0);
        let g = group_id(0);
        if_((i + off).lt(n), || x.set(i, x.at(i) + 1u32));
        if_((i + off).ge(n), || x.set(i, x.at(i) ^ 2u32));
        if_(n.gt(off + i), || x.set(i, x.at(i) + 4u32));
        if_(n.le(i - off), || x.set(i, x.at(i) ^ 8u32));
        if_((i.cast::<i32>() + so).lt(sn), || x.set(i, x.at(i) + 16u32));
        if_((i.cast::<i32>() + so).gt(sn), || x.set(i, x.at(i) ^ 32u32));
        if_(sn.ge(so - i.cast::<i32>()), || x.set(i, x.at(i) + 64u32));
        if_((i + off).lt(n).and(g.lt(n)).and((g * 4u32).ne(off)), || {
            x.set(i, x.at(i) + 128u32)
        });
        if_((g + off).eq(n), || x.set(i, x.at(i) ^ 256u32));
    })
    .unwrap();
    let (cpu, interp) = queues();
    let xs: Vec<u32> = (0..48u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
    let offs = [0, 3, 10, u32::MAX - 1, u32::MAX - 3, u32::MAX - 20, 1 << 31];
    let ns = [0, 5, 12, 13, 100, u32::MAX, u32::MAX - 2];
    let sos = [0, -3, i32::MAX - 1, i32::MAX - 20, i32::MIN, i32::MIN + 2];
    let sns = [0, 10, i32::MAX, i32::MIN, -5];
    for local in [8usize, 4, 3] {
        for (c, &off) in offs.iter().enumerate() {
            for (d, &n) in ns.iter().enumerate() {
                let so = sos[(c + d) % sos.len()];
                let sn = sns[(c * 3 + d) % sns.len()];
                let run = |q: &Queue| {
                    let x = Buffer::from_slice(q, &xs).unwrap();
                    k.launch(q, NdRange::new(48).local(local), args![&x, off, n, so, sn])
                        .unwrap();
                    q.read(&x).unwrap()
                };
                assert_eq!(
                    run(&cpu),
                    run(&interp),
                    "local {local}, off {off}, n {n}, so {so}, sn {sn}"
                );
            }
        }
    }
}

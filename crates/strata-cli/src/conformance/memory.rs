//! Memory: global buffers (gathers, scatters, small element types, index types), private
//! variables and arrays, local memory of fixed and launch-time size, barriers and fences.

use super::{case, check, e, expect_eq, expect_eq_k, inputs, map1, Case, Rng};
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("memory/saxpy", saxpy),
        case("memory/private_variables", private_vars),
        case("memory/private_array", private_array_case),
        case("memory/local_fixed", local_fixed),
        case("memory/local_dyn", local_dyn),
        case("memory/local_tree_reduction", local_tree),
        case("memory/barrier_variants", barrier_variants),
        case("memory/mem_fence", fence),
        case("memory/gather_scatter", gather_scatter),
        case("memory/small_element_types", small_types),
        case("memory/index_types", index_types),
        case("memory/in_place_and_expect_len", in_place),
        case("memory/constant_buffer", constant_buffer),
    ]
}

/// A 1-D convolution whose taps are a constant buffer (OpenCL `__constant`); where the device
/// limits constant buffers, one over the limit is a typed launch error.
fn constant_buffer(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("constant_taps", |k| {
        let x = k.read::<f32>("x");
        let taps = k.constant::<f32>("taps");
        let out = k.write::<f32>("out");
        let i = global_id(0);
        if_(i.lt(out.len()), || {
            let acc = var(0.0f32);
            for_range(0u32, taps.len(), |j| {
                acc.set(acc.get() + x.at(i + j) * taps.at(j));
            });
            out.set(i, acc.get());
        });
    })
    .map_err(e)?;
    let mut r = Rng::new(171);
    let taps: Vec<f32> = (0..9).map(|_| r.int(-8, 8) as f32 * 0.125).collect();
    let n = 500;
    let xs: Vec<f32> = (0..n + taps.len() - 1)
        .map(|_| r.int(-1000, 1000) as f32)
        .collect();
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let tb = Buffer::from_slice(q, &taps).map_err(e)?;
    let ob = Buffer::<f32>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::covering(n, 64), args![&xb, &tb, &ob])
        .map_err(e)?;
    // Products of integers and eighths, summed in order: exact.
    let want: Vec<f32> = (0..n)
        .map(|i| (0..taps.len()).fold(0.0f32, |a, j| a + xs[i + j] * taps[j]))
        .collect();
    expect_eq(
        "convolution with constant taps",
        &q.read(&ob).map_err(e)?,
        &want,
    )?;
    if let Some(max) = q.device().info().max_constant_buffer_size {
        // One element over the limit (only where the limit is small enough to allocate).
        if max <= 64 << 20 {
            let big = Buffer::<f32>::new(q.device(), max as usize / 4 + 1).map_err(e)?;
            let m = match k.launch(q, NdRange::covering(n, 64), args![&xb, &big, &ob]) {
                Ok(_) => {
                    return Err(format!(
                        "a constant buffer over the device's {max} bytes was accepted"
                    ))
                }
                Err(err) => err.to_string(),
            };
            check(
                m.contains(&format!("a constant buffer of at most {max} bytes")),
                || format!("the error for a constant buffer over the limit says: {m}"),
            )?;
        }
    }
    Ok(())
}

fn saxpy(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("saxpy", |k| {
        let a = k.scalar::<f32>("a");
        let x = k.read::<f32>("x");
        let y = k.read_write::<f32>("y");
        let i = global_id(0);
        if_(i.lt(x.len()), || y.set(i, a * x.at(i) + y.at(i)));
    })
    .map_err(e)?;
    let n = 1000;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let ys: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
    let x = Buffer::from_slice(q, &xs).map_err(e)?;
    let y = Buffer::from_slice(q, &ys).map_err(e)?;
    k.launch(q, NdRange::covering(n, 64), args![3.0f32, &x, &y])
        .map_err(e)?;
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| 3.0 * x + y).collect();
    expect_eq("y", &q.read(&y).map_err(e)?, &want)
}

fn private_vars(q: &Queue) -> Result<(), String> {
    let xs = inputs::<i32>(401, 500, true);
    let got = map1(q, "private_vars", &xs, |x: Expr<i32>| {
        let mut v = var::<i32>(x);
        v += 12345i32;
        v -= x >> 3i32;
        v *= 7i32;
        v /= select::<i32>(x.eq(0i32), lit(3i32), x.abs().max(lit(1i32)) | 1i32);
        v %= 1000i32;
        v &= !0x10i32;
        v |= 0x100i32;
        v ^= x;
        v <<= 3i32;
        v >>= 1i32;
        let mut f = var_named::<f32>("f", x.cast::<f32>());
        f += 0.5f32;
        f *= 2.0f32;
        f -= 1.0f32;
        f /= 4.0f32;
        v.get() ^ f.get().cast::<i32>()
    })?;
    let want: Vec<i32> = xs
        .iter()
        .map(|&x| {
            let mut v = x.wrapping_add(12345);
            v = v.wrapping_sub(x >> 3);
            v = v.wrapping_mul(7);
            let d = if x == 0 {
                3
            } else {
                x.wrapping_abs().max(1) | 1
            };
            v = v.wrapping_div(d);
            v %= 1000;
            v &= !0x10;
            v |= 0x100;
            v ^= x;
            v <<= 3;
            v >>= 1;
            let f = ((x as f32 + 0.5) * 2.0 - 1.0) / 4.0;
            v ^ (f as i32)
        })
        .collect();
    expect_eq("compound assignment on variables", &got, &want)
}

fn private_array_case(q: &Queue) -> Result<(), String> {
    // Each work-item sorts its own 9 values in a private array (dynamic indices).
    const M: u32 = 9;
    let n = 300;
    let mut r = Rng::new(411);
    let xs: Vec<i32> = (0..n * M as usize)
        .map(|_| r.int(-1000, 1000) as i32)
        .collect();
    let k = Kernel::build("private_sort", |k| {
        let x = k.read::<i32>("x");
        let out = k.write::<i32>("out");
        let i = global_id(0);
        if_(i.lt(x.len() / M), || {
            let a = private_array::<i32>("a", M);
            let b = private_array::<[f32; 2]>("b", 3);
            for_range(0u32, M, |j| a.set(j, x.at(i * M + j)));
            for_range(0u32, M, |p| {
                for_range(0u32, M - 1u32 - p, |j| {
                    let (u, w) = (a.at(j), a.at(j + 1u32));
                    if_(u.gt(w), || {
                        a.set(j, w);
                        a.set(j + 1u32, u);
                    });
                });
            });
            for_range(0u32, 3u32, |j| {
                b.set(
                    j,
                    vec2::<f32>(a.at(j).cast::<f32>(), a.at(M - 1u32 - j).cast::<f32>()),
                )
            });
            for_range(0u32, M, |j| out.set(i * (M + 1u32) + j, a.at(j)));
            let s = b.at(0u32) + b.at(1u32) + b.at(2u32);
            out.set(i * (M + 1u32) + M, (s.x() - s.y()).cast::<i32>());
        });
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<i32>::new(q.device(), n * (M as usize + 1)).map_err(e)?;
    k.launch(q, NdRange::covering(n, 64), args![&xb, &ob])
        .map_err(e)?;
    let mut want = Vec::new();
    for i in 0..n {
        let mut a = xs[i * M as usize..(i + 1) * M as usize].to_vec();
        a.sort();
        let m = M as usize;
        let sx: f32 = (0..3).map(|j| a[j] as f32).sum();
        let sy: f32 = (0..3).map(|j| a[m - 1 - j] as f32).sum();
        want.extend(a);
        want.push((sx - sy) as i32);
    }
    expect_eq("private arrays", &q.read(&ob).map_err(e)?, &want)
}

fn local_fixed(q: &Queue) -> Result<(), String> {
    // Reverse each work-group's slice through a fixed local array.
    const L: u32 = 96;
    let n = L as usize * 7;
    let xs = inputs::<u32>(421, n, true);
    let k = Kernel::build("local_reverse", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", L);
        let l = local_id(0);
        let i = global_id(0);
        tile.set(l, x.at(i));
        barrier();
        let v = tile.at(L - 1u32 - l);
        barrier();
        // Reuse the array after the barrier: rotate by 5.
        tile.set((l + 5u32) % L, v);
        barrier();
        out.set(i, tile.at(l) ^ group_id(0));
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::new(n).local(L as usize), args![&xb, &ob])
        .map_err(e)?;
    let l = L as usize;
    let want: Vec<u32> = (0..n)
        .map(|i| {
            let (g, li) = (i / l, i % l);
            let src = (li + l - 5) % l; // the lane that wrote position li
            xs[g * l + (l - 1 - src)] ^ g as u32
        })
        .collect();
    expect_eq("local reverse + rotate", &q.read(&ob).map_err(e)?, &want)
}

fn local_dyn(q: &Queue) -> Result<(), String> {
    // Two launch-sized local arrays and a fixed one: a prefix sum per work-group.
    let k = Kernel::build("local_dyn", |k| {
        let x = k.read::<i32>("x");
        let out = k.write::<i32>("out");
        let a = k.local_array_dyn::<i32>("a");
        let b = k.local_array_dyn::<i64>("b");
        let fixed = k.local_array::<i32>("fixed", 1);
        let l = local_id(0);
        let n = local_size(0);
        let i = global_id(0);
        a.set(l, x.at(i));
        b.set(l, x.at(i).cast::<i64>() * 3i64);
        if_(l.eq(0u32), || fixed.set(0u32, 17i32));
        barrier_local();
        let mut s = var::<i32>(0i32);
        let mut t = var::<i64>(0i64);
        for_range(0u32, l + 1u32, |j| {
            s += a.at(j);
            t += b.at(j);
        });
        out.set(i * 2u32, s.get() + fixed.at(0u32));
        out.set(i * 2u32 + 1u32, (t.get() - b.at(n - 1u32)).cast::<i32>());
    })
    .map_err(e)?;
    let mut r = Rng::new(431);
    for l in [32usize, 100, 256] {
        let n = l * 5;
        let xs: Vec<i32> = (0..n).map(|_| r.int(-1000, 1000) as i32).collect();
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let ob = Buffer::<i32>::new(q.device(), 2 * n).map_err(e)?;
        k.launch(
            q,
            NdRange::new(n).local(l),
            args![
                &xb,
                &ob,
                LocalMem::<i32>::new(l),
                LocalMem::<i64>::new(l + 3)
            ],
        )
        .map_err(e)?;
        let mut want = Vec::new();
        for g in 0..5 {
            let xs = &xs[g * l..(g + 1) * l];
            let mut s = 0i32;
            let mut t = 0i64;
            for &v in xs.iter() {
                s += v;
                t += v as i64 * 3;
                want.push(s + 17);
                want.push((t - xs[l - 1] as i64 * 3) as i32);
            }
        }
        expect_eq_k(
            &format!("dynamic local arrays, groups of {l}"),
            &["prefix + fixed", "prefix*3 - last*3"],
            &q.read(&ob).map_err(e)?,
            &want,
        )?;
    }
    Ok(())
}

fn local_tree(q: &Queue) -> Result<(), String> {
    // A tree reduction whose loop bound is a launch parameter: a barrier inside a device loop
    // with a uniform trip count.
    let k = Kernel::build("local_tree", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let half = k.scalar::<u32>("half");
        let tile = k.local_array_dyn::<u32>("tile");
        let l = local_id(0);
        let i = global_id(0);
        tile.set(
            l,
            select::<u32>(i.lt(x.len()), x.at(i.min(x.len() - 1u32)), 0u32),
        );
        barrier();
        let s = var::<u32>(half);
        while_(
            || s.get().gt(0u32),
            || {
                if_(l.lt(s.get()), || {
                    tile.set(l, tile.at(l) + tile.at(l + s.get()))
                });
                barrier();
                s.set(s.get() >> 1u32);
            },
        );
        if_(l.eq(0u32), || out.set(group_id(0), tile.at(0u32)));
    })
    .map_err(e)?;
    let n = 5000;
    let xs = inputs::<u32>(441, n, true);
    for l in [64usize, 256] {
        let groups = n.div_ceil(l);
        let xb = Buffer::from_slice(q, &xs).map_err(e)?;
        let ob = Buffer::<u32>::new(q.device(), groups).map_err(e)?;
        k.launch(
            q,
            NdRange::covering(n, l),
            args![&xb, &ob, l as u32 / 2, LocalMem::<u32>::new(l)],
        )
        .map_err(e)?;
        let want: Vec<u32> = xs
            .chunks(l)
            .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
            .collect();
        expect_eq(
            &format!("tree sums, groups of {l}"),
            &q.read(&ob).map_err(e)?,
            &want,
        )?;
    }
    Ok(())
}

fn barrier_variants(q: &Queue) -> Result<(), String> {
    const L: u32 = 48;
    let n = L as usize * 9;
    let xs = inputs::<u32>(451, n, true);
    let k = Kernel::build("barrier_variants", |k| {
        let x = k.read::<u32>("x");
        let scratch = k.read_write::<u32>("scratch");
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", L);
        let l = local_id(0);
        let i = global_id(0);
        let base = group_id(0) * L;
        // Exchange through local memory ...
        tile.set(l, x.at(i));
        barrier_local();
        let a = tile.at((l + 1u32) % L);
        // ... through global memory, within the work-group ...
        scratch.set(i, a * 3u32);
        barrier_global();
        let b = scratch.at(base + (l + 7u32) % L);
        // ... and through both with the full barrier.
        barrier();
        tile.set(l, b);
        scratch.set(i, b + 1u32);
        barrier();
        out.set(i, tile.at(L - 1u32 - l) ^ scratch.at(base + (l * 5u32) % L));
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let sb = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    let ob = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::new(n).local(L as usize), args![&xb, &sb, &ob])
        .map_err(e)?;
    let l = L as usize;
    let want: Vec<u32> = (0..n)
        .map(|i| {
            let (g, li) = (i / l, i % l);
            let a = |j: usize| xs[g * l + (j + 1) % l];
            let b = |j: usize| a((j + 7) % l).wrapping_mul(3);
            b(l - 1 - li) ^ b((li * 5) % l).wrapping_add(1)
        })
        .collect();
    expect_eq(
        "barrier, barrier_local, barrier_global",
        &q.read(&ob).map_err(e)?,
        &want,
    )
}

fn fence(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("mem_fence", |k| {
        let data = k.read_write::<u32>("data");
        let flags = k.read_write::<u32>("flags");
        let i = global_id(0);
        if_(i.lt(data.len()), || {
            data.set(i, i * 3u32 + 1u32);
            mem_fence();
            flags.atomic_exchange(i, 1u32);
            mem_fence();
            flags.atomic_add(i, data.at(i));
        });
    })
    .map_err(e)?;
    let n = 333;
    let d = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    let f = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::covering(n, 64), args![&d, &f])
        .map_err(e)?;
    let wd: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
    let wf: Vec<u32> = wd.iter().map(|v| v + 1).collect();
    expect_eq("data", &q.read(&d).map_err(e)?, &wd)?;
    expect_eq("flags", &q.read(&f).map_err(e)?, &wf)
}

fn gather_scatter(q: &Queue) -> Result<(), String> {
    let n = 2000;
    let mut r = Rng::new(461);
    let mut perm: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        perm.swap(i, r.below(i as u64 + 1) as usize);
    }
    let xs = inputs::<f32>(462, n, false);
    let k = Kernel::build("gather_scatter", |k| {
        let x = k.read::<f32>("x");
        let p = k.read::<u32>("perm");
        let gathered = k.write::<f32>("gathered");
        let scattered = k.write::<f32>("scattered");
        let i = global_id(0);
        if_(i.lt(x.len()), || {
            let j = p.at(i);
            gathered.set(i, x.at(j));
            scattered.set(j, x.at(i) + 1.0f32);
        });
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let pb = Buffer::from_slice(q, &perm).map_err(e)?;
    let gb = Buffer::<f32>::new(q.device(), n).map_err(e)?;
    let sb = Buffer::<f32>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::covering(n, 128), args![&xb, &pb, &gb, &sb])
        .map_err(e)?;
    let wg: Vec<f32> = perm.iter().map(|&j| xs[j as usize]).collect();
    let mut ws = vec![0.0f32; n];
    for i in 0..n {
        ws[perm[i] as usize] = xs[i] + 1.0;
    }
    expect_eq("gather x[perm[i]]", &q.read(&gb).map_err(e)?, &wg)?;
    expect_eq(
        "scatter y[perm[i]] = x[i] + 1",
        &q.read(&sb).map_err(e)?,
        &ws,
    )
}

fn small_types(q: &Queue) -> Result<(), String> {
    // Neighbouring 1- and 2-byte elements written by different work-items.
    let n = 1001;
    let a = inputs::<u8>(471, n, true);
    let b = inputs::<i16>(472, n, true);
    let k = Kernel::build("small_types", |k| {
        let a = k.read::<u8>("a");
        let b = k.read::<i16>("b");
        let oa = k.write::<i8>("oa");
        let ob = k.write::<u16>("ob");
        let i = global_id(0);
        if_(i.lt(a.len()), || {
            oa.set(i, (a.at(i) + 100u8).cast::<i8>() >> 1i8);
            ob.set(i, b.at(i).cast::<u16>() * 3u16 + a.at(i));
        });
    })
    .map_err(e)?;
    let ab = Buffer::from_slice(q, &a).map_err(e)?;
    let bb = Buffer::from_slice(q, &b).map_err(e)?;
    let oa = Buffer::<i8>::new(q.device(), n).map_err(e)?;
    let ob = Buffer::<u16>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::covering(n, 64), args![&ab, &bb, &oa, &ob])
        .map_err(e)?;
    let wa: Vec<i8> = a
        .iter()
        .map(|&x| (x.wrapping_add(100) as i8) >> 1)
        .collect();
    let wb: Vec<u16> = (0..n)
        .map(|i| (b[i] as u16).wrapping_mul(3).wrapping_add(a[i] as u16))
        .collect();
    expect_eq("i8 out", &q.read(&oa).map_err(e)?, &wa)?;
    expect_eq("u16 out", &q.read(&ob).map_err(e)?, &wb)
}

fn index_types(q: &Queue) -> Result<(), String> {
    let n = 500;
    let xs = inputs::<i64>(481, n, true);
    let k = Kernel::build("index_types", |k| {
        let x = k.read::<i64>("x");
        let out = k.write::<i64>("out");
        let i = global_id(0);
        if_(i.lt(x.len()), || {
            let i32i = i.cast::<i32>();
            let i64i: Expr<i64> = i.into();
            let u64i: Expr<u64> = i.into();
            let v = x.at(i32i) + x.at(u64i) * 2i64 - x.at(i64i) + x.at(0u32) + x.at(1i32)
                - x.at(2u64)
                + x.at(3i64)
                + x.at(4usize);
            out.set(u64i, v);
        });
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<i64>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::covering(n, 100), args![&xb, &ob])
        .map_err(e)?;
    let c = xs[0]
        .wrapping_add(xs[1])
        .wrapping_sub(xs[2])
        .wrapping_add(xs[3])
        .wrapping_add(xs[4]);
    let want: Vec<i64> = xs
        .iter()
        .map(|&v| {
            v.wrapping_add(v.wrapping_mul(2))
                .wrapping_sub(v)
                .wrapping_add(c)
        })
        .collect();
    expect_eq(
        "indices of every integer type",
        &q.read(&ob).map_err(e)?,
        &want,
    )
}

fn in_place(q: &Queue) -> Result<(), String> {
    let n = 640;
    let xs = inputs::<u32>(491, n, true);
    let k = Kernel::build("in_place", |k| {
        let x = k.read_write::<u32>("x").expect_len(640);
        let i = global_id(0);
        x.set(i, x.at(i).rotate(i) + 1u32);
        x.set(i, x.at(i) * 5u32);
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    k.launch(q, NdRange::new(n).local(64), args![&xb])
        .map_err(e)?;
    let want: Vec<u32> = xs
        .iter()
        .enumerate()
        .map(|(i, &v)| v.rotate_left(i as u32 % 32).wrapping_add(1).wrapping_mul(5))
        .collect();
    expect_eq("in place", &q.read(&xb).map_err(e)?, &want)?;
    let short = Buffer::<u32>::new(q.device(), n - 1).map_err(e)?;
    let r = k.launch(q, NdRange::new(n - 1), args![&short]);
    check(r.is_err(), || {
        "a buffer of the wrong length was accepted by expect_len".into()
    })
}

//! Atomics on global and local memory: every operation on `i32`, `u32`, `i64` and `u64`,
//! contended (every work-item on one address) and returning old values, compare-exchange
//! loops, and float atomic add.

use super::{case, check, e, expect_eq, Case, Rng};
use strata::prelude::*;

macro_rules! atomic_suite {
    ($($t:ident;)*) => {
        $(
        mod $t {
            use super::super::{check, e, expect_eq, Rng};
            use strata::prelude::*;

            type T = $t;
            const SLOTS: usize = 7;

            fn skip(q: &Queue) -> bool {
                let skip = std::mem::size_of::<T>() == 8 && !q.device().info().supports_int64_atomics;
                if skip {
                    super::super::unsupported("64-bit atomics");
                }
                skip
            }

            fn values(seed: u64, n: usize) -> Vec<T> {
                let mut r = Rng::new(seed);
                (0..n)
                    .map(|i| match i % 3 {
                        0 => r.next_u64() as T,
                        1 => (r.below(1000) as T).wrapping_sub(500 as T),
                        _ => (r.next_u64() >> 20) as T,
                    })
                    .collect()
            }

            fn inits() -> [T; SLOTS] {
                [
                    (12345 as T).wrapping_mul(1 << 20),
                    (0 as T).wrapping_sub(7),
                    T::MAX / 3,
                    T::MIN / 3,
                    T::MAX,
                    (0x0f0f as T),
                    (0x3c3c_5a5a as T),
                ]
            }

            /// Folds the seven operations over `vals` like the kernels do.
            fn host(init: [T; SLOTS], vals: &[T]) -> [T; SLOTS] {
                let mut s = init;
                for &v in vals {
                    s[0] = s[0].wrapping_add(v);
                    s[1] = s[1].wrapping_sub(v);
                    s[2] = s[2].min(v);
                    s[3] = s[3].max(v);
                    s[4] &= v | (1 as T).wrapping_shl(v as u32 % T::BITS);
                    s[5] |= v & (0xff as T);
                    s[6] ^= v;
                }
                s
            }

            /// Checks exchange results: the old values and the final value together are the
            /// initial value and every value written, once each.
            fn exchanges(init: T, olds: &[T], last: T, written: impl Iterator<Item = T>) -> Result<(), String> {
                let mut a: Vec<T> = olds.to_vec();
                a.push(last);
                a.sort();
                let mut b: Vec<T> = written.collect();
                b.push(init);
                b.sort();
                expect_eq(concat!(stringify!($t), " exchange: old values and final value"), &a, &b)
            }

            pub(super) fn global(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                let k = Kernel::build(concat!("atomics_global_", stringify!($t)), |k| {
                    let x = k.read::<T>("x");
                    let acc = k.read_write::<T>("acc");
                    let olds = k.write::<T>("olds");
                    let i = global_id(0);
                    if_(i.lt(x.len()), || {
                        let v = x.at(i);
                        acc.atomic_add(0u32, v);
                        acc.atomic_sub(1u32, v);
                        acc.atomic_min(2u32, v);
                        acc.atomic_max(3u32, v);
                        acc.atomic_and(4u32, v | (lit(1 as T) << v));
                        acc.atomic_or(5u32, v & (0xff as T));
                        acc.atomic_xor(6u32, v);
                        let id = i.cast::<T>() + (1 as T);
                        olds.set(i * 3u32, acc.atomic_exchange(7u32, id));
                        olds.set(i * 3u32 + 1u32, acc.atomic_compare_exchange(8u32, 5 as T, id));
                        // A counter: the old values are a permutation of 0..n.
                        olds.set(i * 3u32 + 2u32, acc.atomic_add(9u32, 1 as T));
                    });
                })
                .map_err(e)?;
                let n = 1000;
                let xs = values(501, n);
                let init = inits();
                let mut start = init.to_vec();
                start.extend([77 as T, 5 as T, 0 as T]);
                let xb = Buffer::from_slice(q, &xs).map_err(e)?;
                let ab = Buffer::from_slice(q, &start).map_err(e)?;
                let ob = Buffer::<T>::new(q.device(), 3 * n).map_err(e)?;
                k.launch(&q, NdRange::covering(n, 64), args![&xb, &ab, &ob]).map_err(e)?;
                let got = q.read(&ab).map_err(e)?;
                let olds = q.read(&ob).map_err(e)?;
                let want = host(init, &xs);
                super::super::expect_eq_k(
                    concat!(stringify!($t), " contended atomics"),
                    &["add", "sub", "min", "max", "and", "or", "xor"],
                    &got[..SLOTS],
                    &want,
                )?;
                let xch: Vec<T> = olds.iter().step_by(3).copied().collect();
                exchanges(77 as T, &xch, got[7], (1..=n).map(|i| i as T))?;
                let cas: Vec<T> = olds.iter().skip(1).step_by(3).copied().collect();
                let winners: Vec<usize> = (0..n).filter(|&i| cas[i] == 5 as T).collect();
                check(winners.len() == 1, || format!("{} work-items saw the expected value of compare_exchange, expected 1", winners.len()))?;
                let w = winners[0];
                check(got[8] == (w + 1) as T, || format!("compare_exchange: final {:?}, winner wrote {}", got[8], w + 1))?;
                check(cas.iter().enumerate().all(|(i, &c)| i == w || c == got[8]), || "compare_exchange: a loser did not see the winner's value".into())?;
                let mut cnt: Vec<T> = olds.iter().skip(2).step_by(3).copied().collect();
                cnt.sort();
                let perm: Vec<T> = (0..n).map(|i| i as T).collect();
                expect_eq("counter old values", &cnt, &perm)?;
                check(got[9] == n as T, || format!("counter final {:?}, expected {n}", got[9]))
            }

            pub(super) fn local(q: &Queue) -> Result<(), String> {
                if skip(q) {
                    return Ok(());
                }
                const L: u32 = 80;
                let k = Kernel::build(concat!("atomics_local_", stringify!($t)), |k| {
                    let x = k.read::<T>("x");
                    let init = k.read::<T>("init");
                    let out = k.write::<T>("out");
                    let olds = k.write::<T>("olds");
                    let acc = k.local_array::<T>("acc", 9);
                    let l = local_id(0);
                    let i = global_id(0);
                    if_(l.lt(9u32), || acc.set(l, init.at(l)));
                    barrier();
                    let v = x.at(i);
                    if_(i.lt(x.len()), || {
                        acc.atomic_add(0u32, v);
                        acc.atomic_sub(1u32, v);
                        acc.atomic_min(2u32, v);
                        acc.atomic_max(3u32, v);
                        acc.atomic_and(4u32, v | (lit(1 as T) << v));
                        acc.atomic_or(5u32, v & (0xff as T));
                        acc.atomic_xor(6u32, v);
                        olds.set(i * 2u32, acc.atomic_add(7u32, 1 as T));
                        olds.set(i * 2u32 + 1u32, acc.atomic_compare_exchange(8u32, 0 as T, l.cast::<T>() + (1 as T)));
                    });
                    barrier();
                    if_(l.lt(9u32), || out.set(group_id(0) * 9u32 + l, acc.at(l)));
                })
                .map_err(e)?;
                let groups = 6;
                let n = L as usize * groups;
                let xs = values(511, n);
                let mut init = inits().to_vec();
                init.extend([0 as T, 0 as T]);
                let xb = Buffer::from_slice(q, &xs).map_err(e)?;
                let ib = Buffer::from_slice(q, &init).map_err(e)?;
                let ob = Buffer::<T>::new(q.device(), groups * 9).map_err(e)?;
                let olds = Buffer::<T>::new(q.device(), 2 * n).map_err(e)?;
                k.launch(&q, NdRange::new(n).local(L as usize), args![&xb, &ib, &ob, &olds]).map_err(e)?;
                let got = q.read(&ob).map_err(e)?;
                let olds = q.read(&olds).map_err(e)?;
                let l = L as usize;
                for g in 0..groups {
                    let want = host(inits(), &xs[g * l..(g + 1) * l]);
                    super::super::expect_eq_k(
                        &format!("{} local atomics, group {g}", stringify!($t)),
                        &["add", "sub", "min", "max", "and", "or", "xor"],
                        &got[g * 9..g * 9 + SLOTS],
                        &want,
                    )?;
                    let mut cnt: Vec<T> = (0..l).map(|j| olds[2 * (g * l + j)]).collect();
                    cnt.sort();
                    expect_eq(&format!("local counter of group {g}"), &cnt, &(0..l).map(|j| j as T).collect::<Vec<_>>())?;
                    let cas: Vec<T> = (0..l).map(|j| olds[2 * (g * l + j) + 1]).collect();
                    let win: Vec<usize> = (0..l).filter(|&j| cas[j] == 0 as T).collect();
                    check(win.len() == 1 && got[g * 9 + 8] == (win[0] + 1) as T, || {
                        format!("local compare_exchange in group {g}: winners {win:?}, final {:?}", got[g * 9 + 8])
                    })?;
                }
                Ok(())
            }
        }
        )*

        /// The typed atomic cases.
        fn typed_cases() -> Vec<Case> {
            vec![
                $(
                    case(concat!("atomic/", stringify!($t), "_global"), $t::global),
                    case(concat!("atomic/", stringify!($t), "_local"), $t::local),
                )*
            ]
        }
    };
}

atomic_suite! {
    i32;
    u32;
    i64;
    u64;
}

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    let mut v = typed_cases();
    v.extend([
        case("atomic/histogram", histogram),
        case("atomic/global_bins", global_bins),
        case("atomic/compare_exchange_loop", cas_loop),
        case("atomic/f32_add", f32_add),
        case("atomic/u64_wide_contended", wide_u64),
        case("atomic/load", atomic_load),
    ]);
    v
}

/// `atomic_load` of a counter every work-item of the group added to (after a barrier), of a
/// local counter, and of the work-item's own element right after its own atomics, in 32 and
/// (where the device has 64-bit atomics) 64 bits.
fn atomic_load(q: &Queue) -> Result<(), String> {
    const L: usize = 48;
    let groups = 9;
    let n = L * groups;
    let wide = q.device().info().supports_int64_atomics;
    let k = Kernel::build("atomic_load", |k| {
        let counts = k.read_write::<u32>("counts");
        let own = k.read_write::<i32>("own");
        let own64 = k.read_write::<u64>("own64");
        let out = k.write::<u32>("out");
        let out64 = k.write::<u64>("out64");
        let local = k.local_array::<u32>("local_count", 1);
        let (g, l, i) = (group_id(0), local_id(0), global_id(0));
        if_(l.eq(0u32), || local.set(0u32, 0u32));
        barrier();
        counts.atomic_add(g, l + 1u32);
        local.atomic_add(0u32, 2u32);
        barrier();
        out.set(i * 4u32, counts.atomic_load(g));
        out.set(i * 4u32 + 1u32, local.atomic_load(0u32));
        own.atomic_xor(i, (i * 7u32).cast::<i32>() - 1000i32);
        own.atomic_max(i, -5i32);
        out.set(i * 4u32 + 2u32, own.atomic_load(i).cast::<u32>());
        // A value never written by an atomic reads as stored.
        out.set(
            i * 4u32 + 3u32,
            own.atomic_load((i + 1u32) % own.len()).cast::<u32>(),
        );
        if wide {
            own64.atomic_add(i, (i.cast::<u64>() << 40u64) | 3u64);
            out64.set(i, own64.atomic_load(i));
        }
    })
    .map_err(e)?;
    let counts = Buffer::<u32>::new(q.device(), groups).map_err(e)?;
    let init: Vec<i32> = (0..n as i32).map(|v| v * 3 - 200).collect();
    let own = Buffer::from_slice(q, &init).map_err(e)?;
    let own64 = Buffer::<u64>::new(q.device(), n).map_err(e)?;
    let out = Buffer::<u32>::new(q.device(), 4 * n).map_err(e)?;
    let out64 = Buffer::<u64>::new(q.device(), n).map_err(e)?;
    k.launch(
        q,
        NdRange::new(n).local(L),
        args![&counts, &own, &own64, &out, &out64],
    )
    .map_err(e)?;
    let own_after: Vec<i32> = init
        .iter()
        .enumerate()
        .map(|(i, &v)| (v ^ (i as i32 * 7 - 1000)).max(-5))
        .collect();
    let got = q.read(&out).map_err(e)?;
    let mut want = Vec::with_capacity(4 * n);
    for i in 0..n {
        // Work-item i + 1 may have run none, one or both of its atomics when i reads its
        // element (in another work-group, running at the same time): each value is right.
        let next = (i + 1) % n;
        let seen = got[4 * i + 3] as i32;
        let between = init[next] ^ (next as i32 * 7 - 1000);
        let next_ok = seen == init[next] || seen == between || seen == own_after[next];
        check(next_ok, || {
            format!(
                "atomic_load of element {next} by work-item {i}: got {seen}, expected {}, {} or {}",
                init[next], between, own_after[next]
            )
        })?;
        want.extend([
            (L * (L + 1) / 2) as u32,
            2 * L as u32,
            own_after[i] as u32,
            seen as u32,
        ]);
    }
    expect_eq(
        "atomic_load (group counter, local counter, own element, neighbour)",
        &got,
        &want,
    )?;
    if wide {
        let want64: Vec<u64> = (0..n as u64).map(|i| (i << 40) | 3).collect();
        expect_eq("atomic_load of u64", &q.read(&out64).map_err(e)?, &want64)?;
    }
    Ok(())
}

fn histogram(q: &Queue) -> Result<(), String> {
    const BINS: u32 = 37;
    let n = 5003;
    let mut r = Rng::new(521);
    let xs: Vec<u32> = (0..n).map(|_| r.next_u64() as u32).collect();
    let k = Kernel::build("histogram", |k| {
        let x = k.read::<u32>("x");
        let hist = k.read_write::<u32>("hist");
        let local = k.local_array::<u32>("local_hist", BINS);
        let l = local_id(0);
        if_(l.lt(BINS), || local.set(l, 0u32));
        barrier();
        let i = global_id(0);
        if_(i.lt(x.len()), || {
            local.atomic_add(x.at(i) % BINS, 1u32);
        });
        barrier();
        if_(l.lt(BINS), || {
            hist.atomic_add(l, local.at(l));
        });
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let hb = Buffer::<u32>::new(q.device(), BINS as usize).map_err(e)?;
    k.launch(q, NdRange::covering(n, 128), args![&xb, &hb])
        .map_err(e)?;
    let mut want = vec![0u32; BINS as usize];
    for &x in &xs {
        want[(x % BINS) as usize] += 1;
    }
    expect_eq("histogram", &q.read(&hb).map_err(e)?, &want)
}

/// Bins updated with global atomics only, one work-item per element, old values unused (the
/// `cpu` backend keeps such buffers per thread): counts, the largest value per bin, and the
/// bits seen per bin (64-bit where the device has 64-bit atomics), from bins that do not start
/// at the operations' identities.
fn global_bins(q: &Queue) -> Result<(), String> {
    const BINS: u32 = 61;
    let n = 4099;
    let wide = q.device().info().supports_int64_atomics;
    let mut r = Rng::new(733);
    let xs: Vec<u32> = (0..n).map(|_| r.next_u64() as u32).collect();
    let k = Kernel::build(if wide { "global_bins64" } else { "global_bins" }, |k| {
        let x = k.read::<u32>("x");
        let count = k.read_write::<u32>("count");
        let top = k.read_write::<i32>("top");
        let bits = wide.then(|| k.read_write::<u64>("bits"));
        let i = global_id(0);
        if_(i.lt(x.len()), || {
            let v = x.at(i);
            let b = v % BINS;
            count.atomic_add(b, 1u32);
            top.atomic_max(b, v.cast::<i32>());
            if let Some(bits) = &bits {
                bits.atomic_or(b, lit(1u64) << (v >> 26u32).cast::<u64>());
            }
        });
    })
    .map_err(e)?;
    let count0: Vec<u32> = (0..BINS).map(|b| b * 3).collect();
    let top0: Vec<i32> = (0..BINS).map(|b| i32::MIN + b as i32).collect();
    let bits0: Vec<u64> = (0..BINS as u64).map(|b| 1 << (b % 64)).collect();
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let cb = Buffer::from_slice(q, &count0).map_err(e)?;
    let tb = Buffer::from_slice(q, &top0).map_err(e)?;
    let bb = Buffer::from_slice(q, &bits0).map_err(e)?;
    let range = NdRange::covering(n, 64);
    match wide {
        true => k.launch(q, range, args![&xb, &cb, &tb, &bb]),
        false => k.launch(q, range, args![&xb, &cb, &tb]),
    }
    .map_err(e)?;
    let (mut count, mut top, mut bits) = (count0, top0, bits0);
    for &x in &xs {
        let b = (x % BINS) as usize;
        count[b] += 1;
        top[b] = top[b].max(x as i32);
        bits[b] |= 1 << (x >> 26);
    }
    expect_eq("global_bins counts", &q.read(&cb).map_err(e)?, &count)?;
    expect_eq("global_bins maxima", &q.read(&tb).map_err(e)?, &top)?;
    if wide {
        expect_eq("global_bins bits", &q.read(&bb).map_err(e)?, &bits)?;
    }
    Ok(())
}

fn cas_loop(q: &Queue) -> Result<(), String> {
    // A lock-free add through compare_exchange retries, the old value feeding the next try.
    let n = 700;
    let mut r = Rng::new(531);
    let xs: Vec<i32> = (0..n).map(|_| r.int(-100000, 100000) as i32).collect();
    let k = Kernel::build("cas_loop", |k| {
        let x = k.read::<i32>("x");
        let acc = k.read_write::<i32>("acc");
        let tries = k.read_write::<u32>("tries");
        let i = global_id(0);
        if_(i.lt(x.len()), || {
            let v = x.at(i);
            let cur = var::<i32>(acc.at(0u32));
            loop_(|| {
                let c = cur.get();
                let prev = acc.atomic_compare_exchange(0u32, c, c + v);
                tries.atomic_add(0u32, 1u32);
                if_(prev.eq(c), break_);
                cur.set(prev);
            });
        });
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ab = Buffer::from_slice(q, &[1000i32]).map_err(e)?;
    let tb = Buffer::<u32>::new(q.device(), 1).map_err(e)?;
    k.launch(q, NdRange::covering(n, 64), args![&xb, &ab, &tb])
        .map_err(e)?;
    let want = xs.iter().fold(1000i32, |a, &b| a.wrapping_add(b));
    expect_eq(
        "sum by compare_exchange loop",
        &q.read(&ab).map_err(e)?,
        &[want],
    )?;
    let tries = q.read(&tb).map_err(e)?[0];
    check(tries >= n as u32, || {
        format!("{tries} attempts for {n} work-items")
    })
}

fn f32_add(q: &Queue) -> Result<(), String> {
    let n: usize = 3000;
    let mut r = Rng::new(541);
    let xs: Vec<f32> = (0..n).map(|_| r.f32_in(-10.0, 100.0)).collect();
    let k = Kernel::build("f32_atomic_add", |k| {
        let x = k.read::<f32>("x");
        let acc = k.read_write::<f32>("acc");
        let per = k.read_write::<f32>("per");
        let lsum = k.local_array::<f32>("lsum", 1);
        let l = local_id(0);
        let i = global_id(0);
        if_(l.eq(0u32), || lsum.set(0u32, 0.0f32));
        barrier();
        if_(i.lt(x.len()), || {
            let v = x.at(i);
            acc.atomic_add(0u32, v);
            lsum.atomic_add(0u32, v);
            // Uncontended: exact.
            per.atomic_add(i, v);
        });
        barrier();
        if_(l.eq(0u32), || {
            acc.atomic_add(1u32 + group_id(0), lsum.at(0u32));
        });
    })
    .map_err(e)?;
    let groups = n.div_ceil(100);
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ab = Buffer::<f32>::new(q.device(), 1 + groups).map_err(e)?;
    let pinit: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let pb = Buffer::from_slice(q, &pinit).map_err(e)?;
    k.launch(q, NdRange::covering(n, 100), args![&xb, &ab, &pb])
        .map_err(e)?;
    let got = q.read(&ab).map_err(e)?;
    let total: f64 = xs.iter().map(|&v| v as f64).sum();
    let abs_sum: f64 = xs.iter().map(|&v| v.abs() as f64).sum();
    // Any order of n additions is within n * eps * sum(|x|) of the exact sum.
    let tol = abs_sum * n as f64 * f32::EPSILON as f64 / 4.0;
    check((got[0] as f64 - total).abs() <= tol, || {
        format!(
            "contended f32 atomic add: got {}, expected {total} within {tol}",
            got[0]
        )
    })?;
    for g in 0..groups {
        let part: f64 = xs[g * 100..(g + 1) * 100].iter().map(|&v| v as f64).sum();
        let pabs: f64 = xs[g * 100..(g + 1) * 100]
            .iter()
            .map(|&v| v.abs() as f64)
            .sum();
        let t = pabs * 100.0 * f32::EPSILON as f64 / 4.0;
        check((got[1 + g] as f64 - part).abs() <= t, || {
            format!(
                "local f32 atomic add, group {g}: got {}, expected {part}",
                got[1 + g]
            )
        })?;
    }
    let want: Vec<f32> = (0..n).map(|i| pinit[i] + xs[i]).collect();
    expect_eq(
        "uncontended f32 atomic add",
        &q.read(&pb).map_err(e)?,
        &want,
    )
}

fn wide_u64(q: &Queue) -> Result<(), String> {
    if !q.device().info().supports_int64_atomics {
        super::unsupported("64-bit atomics");
        return Ok(());
    }
    // Additions that carry across the 32-bit halves, and min/max that differ only in the high
    // half, all on one address.
    let n = 2000;
    let k = Kernel::build("wide_u64", |k| {
        let acc = k.read_write::<u64>("acc");
        let i = global_id(0);
        if_(i.lt(2000u32), || {
            let v = (i.cast::<u64>() << 32u64) | 0xffff_ffffu64;
            acc.atomic_add(0u32, v);
            acc.atomic_max(1u32, v ^ 0xffff_ffffu64);
            acc.atomic_min(2u32, (i.cast::<u64>() + 1u64) << 33u64);
            acc.atomic_sub(3u32, 0x1_0000_0001u64);
        });
    })
    .map_err(e)?;
    let ab = Buffer::from_slice(q, &[1u64, 0, u64::MAX, 0]).map_err(e)?;
    k.launch(q, NdRange::covering(n, 64), args![&ab])
        .map_err(e)?;
    let mut want = [1u64, 0, u64::MAX, 0];
    for i in 0..n as u64 {
        let v = (i << 32) | 0xffff_ffff;
        want[0] = want[0].wrapping_add(v);
        want[1] = want[1].max(v ^ 0xffff_ffff);
        want[2] = want[2].min((i + 1) << 33);
        want[3] = want[3].wrapping_sub(0x1_0000_0001);
    }
    expect_eq("contended 64-bit atomics", &q.read(&ab).map_err(e)?, &want)
}

//! Control flow: `if_` / `else_if` / `else_` chains, divergence inside a work-group, device
//! loops (`for_range`, `for_step`, `while_`, `loop_`) with `break_` / `continue_` (also out of
//! nested loops through `current_loop`), early `return_`, and Rust-level staging.

use super::{case, check, e, expect_eq, inputs, map1, map2, Case, Rng};
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("control/if_else_chain", if_chain),
        case("control/divergent_branches", divergent),
        case("control/select_and_logic", select_logic),
        case("control/for_range_divergent", for_divergent),
        case("control/for_step", for_steps),
        case("control/for_constant_bounds", for_constant),
        case("control/for_counter_types", for_counter_types),
        case("control/while_loop", while_loop),
        case("control/loop_break", loop_break),
        case("control/continue", continue_case),
        case("control/nested_break", nested_break),
        case("control/nested_continue", nested_continue),
        case("control/nested_divergent_loops", nested_divergent),
        case("control/early_return", early_return),
        case("control/staging_unrolled", staging_unrolled),
        case("control/staged_constants", staged_constants),
        case("control/deeply_shared_expressions", deeply_shared),
    ]
}

fn if_chain(q: &Queue) -> Result<(), String> {
    let xs = inputs::<i32>(201, 1000, true);
    let got = map1(q, "if_chain", &xs, |x: Expr<i32>| {
        let r = var::<i32>(0i32);
        if_(x.lt(0i32), || {
            if_(x.lt(-1000i32), || r.set(-2i32)).else_(|| r.set(-1i32));
        })
        .else_if(x.eq(0i32), || r.set(10i32))
        .else_if(x.lt(100i32), || r.set(x * 2i32))
        .else_if((x % 2i32).eq(0i32), || r.set(x / 2i32))
        .else_(|| r.set(7i32));
        // A chain without else: unmatched work-items keep the value.
        if_(x.eq(1i32), || r.set(r.get() + 1000i32))
            .else_if(x.eq(2i32), || r.set(r.get() + 2000i32));
        r.get()
    })?;
    let want: Vec<i32> = xs
        .iter()
        .map(|&x| {
            let mut r = if x < 0 {
                if x < -1000 {
                    -2
                } else {
                    -1
                }
            } else if x == 0 {
                10
            } else if x < 100 {
                x * 2
            } else if x % 2 == 0 {
                x / 2
            } else {
                7
            };
            if x == 1 {
                r += 1000;
            } else if x == 2 {
                r += 2000;
            }
            r
        })
        .collect();
    expect_eq("if / else_if / else_", &got, &want)
}

fn divergent(q: &Queue) -> Result<(), String> {
    // Branches on the local id: every work-group has work-items on every path.
    let k = Kernel::build("divergent", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let l = local_id(0);
        if_(i.lt(x.len()), || {
            let v = var::<u32>(x.at(i));
            if_((l % 3u32).eq(0u32), || {
                v.set(v.get() * 3u32);
                if_((l & 4u32).ne(0u32), || v.set(v.get() + 100u32)).else_(|| {
                    if_(v.get().gt(1000u32), || v.set(v.get() - 1000u32));
                });
            })
            .else_if((l % 3u32).eq(1u32), || v.set(v.get() ^ 0xffu32))
            .else_(|| v.set(v.get().rotate(l)));
            out.set(i, v.get());
        });
    })
    .map_err(e)?;
    let n = 1000;
    let xs: Vec<u32> = inputs::<u32>(202, n, true);
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::covering(n, 60), args![&xb, &ob])
        .map_err(e)?;
    let want: Vec<u32> = (0..n)
        .map(|i| {
            let l = (i % 60) as u32;
            let mut v = xs[i];
            if l.is_multiple_of(3) {
                v = v.wrapping_mul(3);
                if l & 4 != 0 {
                    v = v.wrapping_add(100);
                } else if v > 1000 {
                    v -= 1000;
                }
            } else if l % 3 == 1 {
                v ^= 0xff;
            } else {
                v = v.rotate_left(l % 32);
            }
            v
        })
        .collect();
    expect_eq("divergent branches", &q.read(&ob).map_err(e)?, &want)
}

fn select_logic(q: &Queue) -> Result<(), String> {
    let a = inputs::<i32>(211, 500, true);
    let b = inputs::<i32>(212, 500, true);
    let got = map2(q, "select_logic", &a, &b, |x: Expr<i32>, y: Expr<i32>| {
        let p = x.lt(y);
        let r = x.gt(0i32);
        let s = y.eq(7i32).or(y.lt(-5i32));
        let bits = [
            p.and(r),
            p.or(r),
            p.not(),
            p ^ r,
            p.eq(r),
            p.ne(s),
            (p & s) | r.not(),
            p & true,
            r | false,
        ];
        let mut acc = lit(0i32);
        for (k, b) in bits.into_iter().enumerate() {
            acc = acc | (select::<i32>(b, 1i32, 0i32) << k as i32);
        }
        acc + select::<i32>(p, x, y) * 1024i32
            + select::<f32>(r, lit(1.5f32), lit(-2.0f32)).cast::<i32>()
    })?;
    let want: Vec<i32> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| {
            let (p, r, s) = (x < y, x > 0, y == 7 || y < -5);
            let bits = [
                p && r,
                p || r,
                !p,
                p ^ r,
                p == r,
                p != s,
                (p && s) || !r,
                p,
                r,
            ];
            let mut acc = 0i32;
            for (k, b) in bits.into_iter().enumerate() {
                acc |= (b as i32) << k;
            }
            acc.wrapping_add((if p { x } else { y }).wrapping_mul(1024))
                .wrapping_add(if r { 1 } else { -2 })
        })
        .collect();
    expect_eq("logic and select", &got, &want)
}

fn for_divergent(q: &Queue) -> Result<(), String> {
    let mut r = Rng::new(221);
    let xs: Vec<u32> = (0..700).map(|_| r.below(40) as u32).collect();
    let got = map1(q, "for_divergent", &xs, |n: Expr<u32>| {
        let mut acc = var::<u32>(1u32);
        for_range(0u32, n, |j| {
            acc += j * j + 1u32;
        });
        for_range(n, 3u32, |j| acc += j * 1000u32);
        acc.get()
    })?;
    let want: Vec<u32> = xs
        .iter()
        .map(|&n| {
            let mut acc = 1u32;
            for j in 0..n {
                acc += j * j + 1;
            }
            for j in n..3 {
                acc += j * 1000;
            }
            acc
        })
        .collect();
    expect_eq("for_range with per-item trip counts", &got, &want)
}

/// `(count, sum, last)` of a host `for_step`.
fn host_steps(start: i32, end: i32, step: i32) -> [i32; 3] {
    let (mut i, mut c, mut s, mut last) = (start, 0, 0i32, -12345);
    while (step > 0 && i < end) || (step < 0 && i > end) {
        c += 1;
        s = s.wrapping_add(i.wrapping_mul(i).wrapping_add(3));
        last = i;
        i += step;
    }
    [c, s, last]
}

fn for_steps(q: &Queue) -> Result<(), String> {
    // Bounds from launch parameters (a device loop) ...
    let k = Kernel::build("for_step_dyn", |k| {
        let start = k.scalar::<i32>("start");
        let end = k.scalar::<i32>("end");
        let step = k.scalar::<i32>("step");
        let out = k.write::<i32>("out");
        let i = global_id(0);
        let (mut c, mut s, last) = (var::<i32>(0i32), var::<i32>(0i32), var::<i32>(-12345i32));
        // Each work-item starts at a different offset: divergent trip counts.
        for_step(start + i.cast::<i32>(), end, step, |j: Expr<i32>| {
            c += 1i32;
            s += j * j + 3i32;
            last.set(j);
        });
        out.set(i * 3u32, c.get());
        out.set(i * 3u32 + 1u32, s.get());
        out.set(i * 3u32 + 2u32, last.get());
    })
    .map_err(e)?;
    let combos = [
        (10, -5, -3),
        (0, 20, 7),
        (5, 5, 1),
        (5, 0, 1),
        (0, 5, -1),
        (-3, 3, 2),
        (100, -100, -17),
        (-50, 60, 1),
        (0, 1000, 333),
    ];
    let items = 24;
    let out = Buffer::<i32>::new(q.device(), items * 3).map_err(e)?;
    for (a, b, st) in combos {
        k.launch(q, NdRange::new(items).local(8), args![a, b, st, &out])
            .map_err(e)?;
        let want: Vec<i32> = (0..items as i32)
            .flat_map(|i| host_steps(a + i, b, st))
            .collect();
        expect_eq(
            &format!("for_step({a} + i, {b}, {st}): count, sum, last"),
            &q.read(&out).map_err(e)?,
            &want,
        )?;
    }
    // ... and constant bounds, which strata may unroll.
    for (a, b, st) in combos {
        let k = Kernel::build("for_step_const", |k| {
            let out = k.write::<i32>("out");
            let (mut c, mut s, last) = (var::<i32>(0i32), var::<i32>(0i32), var::<i32>(-12345i32));
            for_step(a, b, st, |j: Expr<i32>| {
                c += 1i32;
                s += j * j + 3i32;
                last.set(j);
            });
            out.set(0u32, c.get());
            out.set(1u32, s.get());
            out.set(2u32, last.get());
        })
        .map_err(e)?;
        let o = Buffer::<i32>::new(q.device(), 3).map_err(e)?;
        k.launch(q, NdRange::new(1), args![&o]).map_err(e)?;
        expect_eq(
            &format!("for_step({a}, {b}, {st}) with constant bounds"),
            &q.read(&o).map_err(e)?,
            &host_steps(a, b, st),
        )?;
    }
    Ok(())
}

fn for_constant(q: &Queue) -> Result<(), String> {
    let xs = inputs::<u32>(231, 300, true);
    let got = map1(q, "for_constant", &xs, |x: Expr<u32>| {
        let mut acc = var::<u32>(x);
        // Short constant loop (unrolled by the optimizer), long one (kept as a loop), a
        // constant loop with its own continue (not unrolled), and a zero-trip loop.
        for_range(0u32, 8u32, |j| acc += (x >> j) & 1u32);
        for_range(0u32, 100u32, |j| acc += j ^ x);
        for_range(0u32, 6u32, |j| {
            if_(j.eq(2u32), continue_);
            acc *= 3u32;
        });
        for_range(5u32, 5u32, |_| acc.set(0u32));
        for_step(3i32, 3i32, -1i32, |_| acc.set(1u32));
        acc.get()
    })?;
    let want: Vec<u32> = xs
        .iter()
        .map(|&x| {
            let mut acc = x;
            for j in 0..8 {
                acc = acc.wrapping_add((x >> j) & 1);
            }
            for j in 0..100 {
                acc = acc.wrapping_add(j ^ x);
            }
            for j in 0..6 {
                if j == 2 {
                    continue;
                }
                acc = acc.wrapping_mul(3);
            }
            acc
        })
        .collect();
    expect_eq("loops with constant bounds", &got, &want)
}

fn for_counter_types(q: &Queue) -> Result<(), String> {
    let xs: Vec<i64> = inputs::<i64>(241, 200, false)
        .into_iter()
        .map(|v| v.rem_euclid(50))
        .collect();
    let got = map1(q, "for_counter_types", &xs, |n: Expr<i64>| {
        let mut acc = var::<i64>(0i64);
        for_range(-n, n, |j| acc += j * j);
        for_step(n.cast::<i8>(), -100i8, -7i8, |j| acc += j.cast::<i64>());
        for_step(lit(1u64 << 40), (1u64 << 40) + 5u64, 2u64, |j| {
            acc += j.cast::<i64>()
        });
        for_step(lit(250u8), 255u8, 3u8, |j| acc += j.cast::<i64>() * 1000i64);
        acc.get()
    })?;
    let want: Vec<i64> = xs
        .iter()
        .map(|&n| {
            let mut acc = 0i64;
            for j in -n..n {
                acc += j * j;
            }
            let mut j = n as i8;
            while j > -100 {
                acc += j as i64;
                j -= 7;
            }
            let mut j = 1u64 << 40;
            while j < (1 << 40) + 5 {
                acc += j as i64;
                j += 2;
            }
            // The u8 counter wraps past 255 (250, 253, 0, 3, ..., 252), as in C.
            let mut j = 250u8;
            while j < 255 {
                acc += j as i64 * 1000;
                j = j.wrapping_add(3);
            }
            acc
        })
        .collect();
    expect_eq("i64, i8, u64 and u8 loop counters", &got, &want)
}

fn collatz(mut v: u32) -> [u32; 2] {
    let mut steps = 0;
    while v != 1 && steps < 300 {
        v = if v.is_multiple_of(2) {
            v / 2
        } else {
            3 * v + 1
        };
        steps += 1;
    }
    [steps, v]
}

fn while_loop(q: &Queue) -> Result<(), String> {
    let xs: Vec<u32> = (1..=777).collect();
    let got = map1(q, "collatz", &xs, |x: Expr<u32>| {
        let v = var::<u32>(x);
        let steps = var::<u32>(0u32);
        while_(
            || v.get().ne(1u32).and(steps.get().lt(300u32)),
            || {
                let c = v.get();
                v.set(select::<u32>(
                    (c % 2u32).eq(0u32),
                    c / 2u32,
                    c * 3u32 + 1u32,
                ));
                let mut s = steps;
                s += 1u32;
            },
        );
        // A while loop whose condition is false at once.
        while_(|| v.get().gt(1_000_000u32), || v.set(0u32));
        vec2::<u32>(steps.get(), v.get())
    })?;
    let want: Vec<[u32; 2]> = xs.iter().map(|&x| collatz(x)).collect();
    expect_eq("collatz steps (divergent while_)", &got, &want)
}

fn loop_break(q: &Queue) -> Result<(), String> {
    let xs = inputs::<u32>(251, 500, true);
    let got = map1(q, "loop_break", &xs, |x: Expr<u32>| {
        let v = var::<u32>(x);
        let mut n = var::<u32>(0u32);
        loop_(|| {
            if_(v.get().eq(0u32), break_);
            v.set(v.get() & (v.get() - 1u32));
            n += 1u32;
        });
        n.get()
    })?;
    let want: Vec<u32> = xs.iter().map(|x| x.count_ones()).collect();
    expect_eq("bit count by loop_ / break_", &got, &want)
}

fn continue_case(q: &Queue) -> Result<(), String> {
    let xs = inputs::<u32>(261, 400, false)
        .into_iter()
        .map(|v| v % 64)
        .collect::<Vec<_>>();
    let got = map1(q, "continue", &xs, |n: Expr<u32>| {
        let mut acc = var::<u32>(0u32);
        for_range(0u32, n, |j| {
            if_((j % 3u32).eq(0u32), continue_);
            acc += j;
            if_(j.gt(40u32), continue_);
            acc += 1000u32;
        });
        let k = var::<u32>(0u32);
        loop_(|| {
            k.set(k.get() + 1u32);
            if_(k.get().gt(n), break_);
            if_((k.get() & 1u32).eq(1u32), continue_);
            acc += k.get() * 7u32;
        });
        acc.get()
    })?;
    let want: Vec<u32> = xs
        .iter()
        .map(|&n| {
            let mut acc = 0u32;
            for j in 0..n {
                if j % 3 == 0 {
                    continue;
                }
                acc += j;
                if j > 40 {
                    continue;
                }
                acc += 1000;
            }
            let mut k = 0;
            loop {
                k += 1;
                if k > n {
                    break;
                }
                if k & 1 == 1 {
                    continue;
                }
                acc += k * 7;
            }
            acc
        })
        .collect();
    expect_eq("continue_ in for_range and loop_", &got, &want)
}

const ROWS: u32 = 9;
const COLS: u32 = 11;

fn matrices(seed: u64, items: usize) -> (Vec<i32>, Vec<i32>) {
    let mut r = Rng::new(seed);
    let m: Vec<i32> = (0..items * (ROWS * COLS) as usize)
        .map(|_| r.int(-20, 60) as i32)
        .collect();
    let t: Vec<i32> = (0..items).map(|_| r.int(-20, 80) as i32).collect();
    (m, t)
}

fn nested_break(q: &Queue) -> Result<(), String> {
    // Each work-item searches its own matrix for its target and leaves both loops when found.
    let items = 300;
    let (m, t) = matrices(271, items);
    let k = Kernel::build("nested_break", |k| {
        let mb = k.read::<i32>("m");
        let tb = k.read::<i32>("t");
        let out = k.write::<i32>("out");
        let i = global_id(0);
        if_(i.lt(tb.len()), || {
            let target = tb.at(i);
            let found = var::<i32>(-1i32);
            let mut visited = var::<i32>(0i32);
            for_range(0u32, ROWS, |r| {
                let outer = current_loop();
                for_range(0u32, COLS, |c| {
                    visited += 1i32;
                    let idx = r * COLS + c;
                    if_(mb.at(i * (ROWS * COLS) + idx).eq(target), || {
                        found.set(idx.cast::<i32>());
                        outer.break_();
                    });
                });
            });
            out.set(i * 2u32, found.get());
            out.set(i * 2u32 + 1u32, visited.get());
        });
    })
    .map_err(e)?;
    let mb = Buffer::from_slice(q, &m).map_err(e)?;
    let tb = Buffer::from_slice(q, &t).map_err(e)?;
    let ob = Buffer::<i32>::new(q.device(), items * 2).map_err(e)?;
    k.launch(q, NdRange::covering(items, 64), args![&mb, &tb, &ob])
        .map_err(e)?;
    let want: Vec<i32> = (0..items)
        .flat_map(|i| {
            let mat = &m[i * (ROWS * COLS) as usize..][..(ROWS * COLS) as usize];
            let (mut found, mut visited) = (-1, 0);
            'outer: for r in 0..ROWS {
                for c in 0..COLS {
                    visited += 1;
                    let idx = r * COLS + c;
                    if mat[idx as usize] == t[i] {
                        found = idx as i32;
                        break 'outer;
                    }
                }
            }
            [found, visited]
        })
        .collect();
    expect_eq("break out of two loops", &q.read(&ob).map_err(e)?, &want)
}

fn nested_continue(q: &Queue) -> Result<(), String> {
    // Sum of the positive prefix of each row; a negative element continues the outer loop.
    let items = 257;
    let (m, t) = matrices(281, items);
    let k = Kernel::build("nested_continue", |k| {
        let mb = k.read::<i32>("m");
        let tb = k.read::<i32>("t");
        let out = k.write::<i32>("out");
        let i = global_id(0);
        if_(i.lt(tb.len()), || {
            let mut sum = var::<i32>(0i32);
            let r = var::<u32>(0u32);
            loop_(|| {
                let outer = current_loop();
                let row = r.get();
                if_(row.ge(ROWS), break_);
                r.set(row + 1u32);
                for_range(0u32, COLS, |c| {
                    let v = mb.at(i * (ROWS * COLS) + row * COLS + c);
                    if_(v.lt(0i32), || outer.continue_());
                    if_(v.gt(tb.at(i)), continue_);
                    sum += v;
                });
                sum += 1000i32;
            });
            out.set(i, sum.get());
        });
    })
    .map_err(e)?;
    let mb = Buffer::from_slice(q, &m).map_err(e)?;
    let tb = Buffer::from_slice(q, &t).map_err(e)?;
    let ob = Buffer::<i32>::new(q.device(), items).map_err(e)?;
    k.launch(q, NdRange::covering(items, 32), args![&mb, &tb, &ob])
        .map_err(e)?;
    let want: Vec<i32> = (0..items)
        .map(|i| {
            let mat = &m[i * (ROWS * COLS) as usize..][..(ROWS * COLS) as usize];
            let mut sum = 0;
            'outer: for row in 0..ROWS {
                for c in 0..COLS {
                    let v = mat[(row * COLS + c) as usize];
                    if v < 0 {
                        continue 'outer;
                    }
                    if v > t[i] {
                        continue;
                    }
                    sum += v;
                }
                sum += 1000;
            }
            sum
        })
        .collect();
    expect_eq(
        "continue of the outer loop",
        &q.read(&ob).map_err(e)?,
        &want,
    )
}

fn nested_divergent(q: &Queue) -> Result<(), String> {
    let mut r = Rng::new(291);
    let a: Vec<u32> = (0..600).map(|_| r.below(12) as u32).collect();
    let b: Vec<u32> = (0..600).map(|_| r.below(9) as u32).collect();
    let got = map2(
        q,
        "nested_divergent",
        &a,
        &b,
        |n: Expr<u32>, m: Expr<u32>| {
            let mut acc = var::<u32>(0u32);
            for_range(0u32, n, |j| {
                let k = var::<u32>(0u32);
                while_(
                    || k.get().lt(j + m),
                    || {
                        if_((k.get() + j).eq(7u32), break_);
                        acc += k.get() * (j + 1u32);
                        k.set(k.get() + 1u32);
                    },
                );
                for_range(0u32, j % 4u32, |l| {
                    if_(l.eq(m % 3u32), continue_);
                    acc += 100u32;
                });
            });
            acc.get()
        },
    )?;
    let want: Vec<u32> = a
        .iter()
        .zip(&b)
        .map(|(&n, &m)| {
            let mut acc = 0;
            for j in 0..n {
                let mut k = 0;
                while k < j + m {
                    if k + j == 7 {
                        break;
                    }
                    acc += k * (j + 1);
                    k += 1;
                }
                for l in 0..j % 4 {
                    if l == m % 3 {
                        continue;
                    }
                    acc += 100;
                }
            }
            acc
        })
        .collect();
    expect_eq("nested loops with per-item trip counts", &got, &want)
}

fn early_return(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("early_return", |k| {
        let x = k.read::<u32>("x");
        let out = k.read_write::<u32>("out");
        let i = global_id(0);
        if_(i.ge(x.len()), return_);
        let v = x.at(i);
        if_((v % 5u32).eq(0u32), || {
            out.set(i, 100u32);
            return_();
        });
        for_range(0u32, 10u32, |j| {
            if_(j.eq(v % 7u32), || {
                out.set(i, 200u32 + j);
                return_();
            });
        });
        out.set(i, 999u32);
    })
    .map_err(e)?;
    let n = 1000;
    let xs = inputs::<u32>(301, n, true);
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<u32>::from_slice(q, &vec![5u32; n + 3]).map_err(e)?;
    // The buffer is longer than the input: the extra elements are never written.
    k.launch(q, NdRange::covering(n, 64), args![&xb, &ob])
        .map_err(e)?;
    let mut want: Vec<u32> = xs
        .iter()
        .map(|&v| if v % 5 == 0 { 100 } else { 200 + v % 7 })
        .collect();
    want.extend([5, 5, 5]);
    expect_eq("early return_", &q.read(&ob).map_err(e)?, &want)?;
    // return_ from inside a loop_ with per-item trip counts.
    let k2 = Kernel::build("return_in_loop", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        if_(i.ge(x.len()), return_);
        let v = x.at(i);
        let c = var::<u32>(0u32);
        loop_(|| {
            c.set(c.get() + 1u32);
            if_(c.get().eq(v % 11u32 + 20u32), || {
                out.set(i, 300u32 + c.get());
                return_();
            });
        });
        out.set(i, 999u32);
    })
    .map_err(e)?;
    let ob2 = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    k2.launch(q, NdRange::covering(n, 64), args![&xb, &ob2])
        .map_err(e)?;
    let want2: Vec<u32> = xs.iter().map(|&v| 300 + v % 11 + 20).collect();
    expect_eq("return_ inside loop_", &q.read(&ob2).map_err(e)?, &want2)
}

fn staging_unrolled(q: &Queue) -> Result<(), String> {
    let n = 333;
    let xs = inputs::<f32>(311, n * 4, false);
    let weights = [0.5f32, -1.0, 2.0, 0.25];
    let k = Kernel::build("staging", |k| {
        let x = k.read::<f32>("x");
        let out = k.write::<f32>("out");
        let i = global_id(0);
        if_(i.lt(x.len() / 4u32), || {
            let mut acc = lit(0.0f32);
            // A Rust loop: four loads and four multiply-adds in the kernel.
            for (j, w) in weights.iter().enumerate() {
                acc = acc + x.at(i * 4u32 + j as u32) * *w;
            }
            // A Rust `if` on a build-time value: only one branch is recorded.
            if weights[0] > 0.0 {
                acc = acc * 2.0f32;
            } else {
                acc = acc * 1000.0f32;
            }
            out.set(i, acc);
        });
    })
    .map_err(e)?;
    let loads = k.ir_text().matches("load").count();
    check(loads >= 4, || {
        format!("expected 4 unrolled loads in the IR, found {loads}")
    })?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<f32>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::covering(n, 64), args![&xb, &ob])
        .map_err(e)?;
    let want: Vec<f32> = (0..n)
        .map(|i| {
            let mut acc = 0.0f32;
            for (j, w) in weights.iter().enumerate() {
                acc += xs[i * 4 + j] * w;
            }
            acc * 2.0
        })
        .collect();
    expect_eq("unrolled Rust loop", &q.read(&ob).map_err(e)?, &want)
}

fn staged_constants(q: &Queue) -> Result<(), String> {
    let xs = inputs::<i32>(321, 300, true);
    let build = |c: i32, shift: u32| {
        Kernel::build("staged", move |k| {
            let x = k.read::<i32>("x");
            let out = k.write::<i32>("out");
            let i = global_id(0);
            if_(i.lt(x.len()), || {
                let mut v = x.at(i) * c;
                for _ in 0..shift {
                    v = v + (v >> 1i32);
                }
                out.set(i, v);
            });
        })
        .map_err(e)
    };
    let a = build(3, 2)?;
    let a2 = build(3, 2)?;
    check(a.ir_text() == a2.ir_text(), || {
        "the same staged values gave different IR".into()
    })?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<i32>::new(q.device(), xs.len()).map_err(e)?;
    for (c, shift) in [(3, 2), (-7, 0), (1, 5), (0, 1), (i32::MAX, 3)] {
        let k = build(c, shift)?;
        k.launch(q, NdRange::covering(xs.len(), 64), args![&xb, &ob])
            .map_err(e)?;
        let want: Vec<i32> = xs
            .iter()
            .map(|&x| {
                let mut v = x.wrapping_mul(c);
                for _ in 0..shift {
                    v = v.wrapping_add(v >> 1);
                }
                v
            })
            .collect();
        expect_eq(
            &format!("staged c = {c}, {shift} steps"),
            &q.read(&ob).map_err(e)?,
            &want,
        )?;
    }
    Ok(())
}

/// Rust-level staging that shares each value with the next levels (`a, b = b, a + b`; `c = c *
/// c + c`) builds expressions whose trees are exponential in their depth and whose graphs are
/// linear: every pass and writer must walk the graph. Sixty levels (a tree of 10^12 nodes and
/// more) as an `if` condition, a local memory index across a barrier, a loop bound and a
/// `select`, in the kernel's every region.
fn deeply_shared(q: &Queue) -> Result<(), String> {
    const DEPTH: usize = 60;
    const L: u32 = 64;
    let n = L as usize * 4;
    let xs = inputs::<u32>(761, n, true);
    let k = Kernel::build("deeply_shared", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", L);
        let i = global_id(0);
        let l = local_id(0);
        let v = x.at(i);
        let (mut a, mut b) = (v, v ^ 0x9e37_79b9u32);
        let mut c = v;
        // `i * 2^60`, 0 in 32 bits: an index the backends see as affine in the id.
        let mut z = i;
        // `i < len` and itself sixty times: a guard the bounds analysis takes apart.
        let mut g = i.lt(x.len());
        for _ in 0..DEPTH {
            let s = a + b;
            a = b;
            b = s;
            c = c * c + c;
            z = z + z;
            g = g.and(g);
        }
        let r = var_named("r", 0u32);
        if_(g, || r.set(x.at(i) ^ x.at(z)));
        if_((a & 1u32).eq(0u32), || r.set(r.get() + b)).else_(|| r.set(r.get() + c));
        // An adjacent `if` on the same condition (the two may merge).
        if_((a & 1u32).eq(0u32), || r.set(r.get() + 1u32));
        tile.set(l, r.get() ^ c);
        barrier();
        let acc = var_named("acc", tile.at(b & (L - 1)));
        for_range(0u32, c & 7u32, |j| acc.set(acc.get() * 3u32 + j));
        out.set(i + z, acc.get() + select(c.lt(b), a, b));
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    k.launch(q, NdRange::new(n).local(L as usize), args![&xb, &ob])
        .map_err(e)?;
    let chains: Vec<(u32, u32, u32)> = xs
        .iter()
        .map(|&v| {
            let (mut a, mut b, mut c) = (v, v ^ 0x9e37_79b9, v);
            for _ in 0..DEPTH {
                (a, b) = (b, a.wrapping_add(b));
                c = c.wrapping_mul(c).wrapping_add(c);
            }
            (a, b, c)
        })
        .collect();
    let tile: Vec<u32> = chains
        .iter()
        .zip(&xs)
        .map(|(&(a, b, c), &x)| {
            let r = x ^ xs[0];
            let r = if a & 1 == 0 {
                r.wrapping_add(b).wrapping_add(1)
            } else {
                r.wrapping_add(c)
            };
            r ^ c
        })
        .collect();
    let want: Vec<u32> = (0..n)
        .map(|i| {
            let (a, b, c) = chains[i];
            let group = i - i % L as usize;
            let mut acc = tile[group + (b & (L - 1)) as usize];
            for j in 0..c & 7 {
                acc = acc.wrapping_mul(3).wrapping_add(j);
            }
            acc.wrapping_add(if c < b { a } else { b })
        })
        .collect();
    expect_eq("deeply shared", &q.read(&ob).map_err(e)?, &want)?;
    deeply_shared_uniform(q)
}

/// [`deeply_shared`]'s chains on a scalar argument (the same in every work-item), in 64 bits
/// and through a variable assigned sixty times (which passes may turn into `let`s): offsets
/// of consecutive, clamped and strided indices, which the backends' patterns (lanes
/// consecutive, a uniform offset, rows of a loop) take apart.
fn deeply_shared_uniform(q: &Queue) -> Result<(), String> {
    const DEPTH: usize = 60;
    let n = 200usize;
    let xs = inputs::<u32>(762, n + 64, true);
    let k = Kernel::build("deeply_shared_uniform", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let m = k.scalar::<u32>("m");
        let i = global_id(0);
        let (mut a, mut b, mut u) = (m, m ^ 0x9e37_79b9u32, m);
        let mut w = m.cast::<u64>();
        let y = var_named("y", m);
        for _ in 0..DEPTH {
            let s = a + b;
            a = b;
            b = s;
            u = u * u + u;
            w = w * w + w;
            let t = y.get();
            y.set(t * t + (t ^ 5u32));
        }
        let off = (u & 16u32) + (b & 8u32) + (a & 4u32) + (y.get() & 2u32);
        if_(i.lt(out.len()), || {
            let j = i + off;
            let acc = var_named("acc", x.at(j) + x.at((j + 1u32).min(x.len() - 1u32)));
            for_range(0u32, 4u32, |t| {
                acc.set(acc.get() * 5u32 + x.at(j + t + (u & 32u32)))
            });
            out.set(i, acc.get() ^ (w >> 32u64).cast::<u32>() ^ w.cast::<u32>());
        });
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<u32>::new(q.device(), n).map_err(e)?;
    for m in [0u32, 3, 0x8000_0001, u32::MAX] {
        k.launch(q, NdRange::covering(n, 64), args![&xb, &ob, m])
            .map_err(e)?;
        let (mut a, mut b, mut u) = (m, m ^ 0x9e37_79b9, m);
        let mut w = m as u64;
        let mut y = m;
        for _ in 0..DEPTH {
            (a, b) = (b, a.wrapping_add(b));
            u = u.wrapping_mul(u).wrapping_add(u);
            w = w.wrapping_mul(w).wrapping_add(w);
            y = y.wrapping_mul(y).wrapping_add(y ^ 5);
        }
        let off = ((u & 16) + (b & 8) + (a & 4) + (y & 2)) as usize;
        let want: Vec<u32> = (0..n)
            .map(|i| {
                let j = i + off;
                let mut acc = xs[j].wrapping_add(xs[(j + 1).min(xs.len() - 1)]);
                for t in 0..4 {
                    acc = acc
                        .wrapping_mul(5)
                        .wrapping_add(xs[j + t + (u & 32) as usize]);
                }
                acc ^ (w >> 32) as u32 ^ w as u32
            })
            .collect();
        expect_eq(
            &format!("deeply shared, m = {m}"),
            &q.read(&ob).map_err(e)?,
            &want,
        )?;
    }
    deeply_shared_kinds(q)
}

/// Sixty levels of shared `select`s, `min`s and `max`s, `f32` and vector (`[u32; 4]`)
/// arithmetic.
fn deeply_shared_kinds(q: &Queue) -> Result<(), String> {
    const DEPTH: usize = 60;
    let xs = inputs::<u32>(763, 300, true);
    let got = map1(q, "deeply_shared_kinds", &xs, |x: Expr<u32>| {
        let (mut s, mut m) = (x, x);
        let mut f = (x & 0xffffu32).cast::<f32>() * (1.0f32 / 65536.0);
        let mut v = vec4::<u32>(x, x + 1u32, x ^ 7u32, x >> 3u32);
        for _ in 0..DEPTH {
            s = select(s.lt(x ^ 0x5555_5555u32), s + 1u32, s * 3u32);
            m = (m * 5u32 + 1u32).min(m ^ 0xdead_beefu32).max(m >> 1u32);
            f = f * f * 0.25f32 + f * 0.5f32;
            v = v * v + v;
        }
        s ^ m ^ f.bitcast::<u32>() ^ v.x() ^ v.w()
    })?;
    let want: Vec<u32> = xs
        .iter()
        .map(|&x| {
            let (mut s, mut m) = (x, x);
            let mut f = (x & 0xffff) as f32 * (1.0f32 / 65536.0);
            let mut v = [x, x.wrapping_add(1), x ^ 7, x >> 3];
            for _ in 0..DEPTH {
                s = if s < x ^ 0x5555_5555 {
                    s.wrapping_add(1)
                } else {
                    s.wrapping_mul(3)
                };
                m = (m.wrapping_mul(5).wrapping_add(1))
                    .min(m ^ 0xdead_beef)
                    .max(m >> 1);
                f = f * f * 0.25 + f * 0.5;
                v = v.map(|c| c.wrapping_mul(c).wrapping_add(c));
            }
            s ^ m ^ f.to_bits() ^ v[0] ^ v[3]
        })
        .collect();
    expect_eq(
        "deeply shared selects, min, max, f32, [u32; 4]",
        &got,
        &want,
    )
}

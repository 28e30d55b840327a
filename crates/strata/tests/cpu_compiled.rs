//! The compiled CPU backend (`cpu`) against the interpreter (`interp`), on what its two code
//! paths do differently: the 4-lane SIMD variant (work-groups whose first dimension is a
//! multiple of 4) and the one-work-item-at-a-time code (other work-groups, and kernels with
//! barriers). Results must be the interpreter's bit for bit, and faults must name the same
//! work-item, whichever path runs.

use strata::prelude::*;
use strata::Error;

fn queues() -> (Queue, Queue) {
    let q = |s: &str| Queue::new(&Device::from_spec(s).unwrap()).unwrap();
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
        q.launch(
            &k,
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
        q.launch(&k, NdRange::new(12).local(local), args![&x, &y])
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
        q.launch(&k, NdRange::new(xs.len()).local(local), args![&x, &y])
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
        q.launch(&zk, NdRange::new(8).local(local), args![&y, 0u32])
            .unwrap_err()
            .to_string()
    };
    for local in [8, 4, 1] {
        let want = fail(&interp, local);
        assert!(
            want.contains("integer division by zero") && want.contains("global (5, 0, 0)"),
            "{want}"
        );
        assert_eq!(fail(&cpu, local), want, "local size {local}");
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
        q.launch(&k, NdRange::new(xs.len()).local(local), args![&x, &out])
            .unwrap();
        q.read(&out).unwrap()
    };
    let want = run(&interp, 8);
    assert!(want.contains(&-1), "some work-item returns early");
    for local in [8, 4, 32, 3] {
        assert_eq!(run(&cpu, local), want, "local size {local}");
    }
}

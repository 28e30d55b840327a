//! Private arrays on the compiled CPU backend (`cpu`, issue 31): a kernel with private
//! arrays of integers or floats takes the vector variant (four work-items per SIMD vector;
//! each element's four lanes side by side in the work-items' records), and agrees with the
//! interpreter (`interp`) bit for bit, on the vector variant (work-groups whose size is a
//! multiple of four) and on the one-work-item-at-a-time code (the others); a fault names
//! the same work-item, line and index.

use strata::prelude::*;

/// The two devices, with the settings of the environment (`STRATA_CPU_DISASM=1` prints what
/// the compiled backend makes of each kernel).
fn queues() -> (Queue, Queue) {
    let q = |s: &str| {
        let d = Device::from_spec(s).unwrap();
        d.set_settings(strata::Settings::from_env());
        Queue::new(&d).unwrap()
    };
    (q("cpu"), q("interp"))
}

/// Private arrays of `f32`, `i32`, `u8`, `i16`, `f64` and `i64` used every way the vector
/// code lowers differently: stored and loaded at a loop counter (an index the lanes
/// share: one vector access, without the mask where four lanes are active), at an index
/// that differs between the lanes (each lane's element alone), under a divergent `if` (a
/// shared index with some lanes inactive: their elements kept), in a loop whose trip count
/// differs between the lanes, and with an index read from a buffer (`pick`, tested lane by
/// lane). Every element is written out.
fn mixed(synced: bool) -> Kernel {
    Kernel::build("private_mixed", |k| {
        let x = k.read::<u32>("x");
        let pick = k.read::<u32>("pick");
        let fo = k.write::<f32>("fo");
        let io = k.write::<i32>("io");
        let bo = k.write::<u32>("bo");
        let d64 = k.write::<f64>("d64");
        let i64o = k.write::<i64>("i64o");
        let tile = k.local_array::<u32>("tile", 64);
        let i = global_id(0);
        let l = local_id(0);
        let fa = private_array::<f32>("fa", 8);
        let ia = private_array::<i32>("ia", 5);
        let ba = private_array::<u8>("ba", 6);
        let ha = private_array::<i16>("ha", 3);
        let da = private_array::<f64>("da", 4);
        let la = private_array::<i64>("la", 4);
        let v = x.at(i);
        for_range(0u32, 8u32, |j: Expr<u32>| {
            fa.set(j, (v + j).cast::<f32>() * 0.37f32);
        });
        for_range(0u32, 5u32, |j: Expr<u32>| {
            ia.set(j, (v * 7u32 + j).cast::<i32>() - 40i32);
        });
        for_range(0u32, 6u32, |j: Expr<u32>| {
            ba.set(j, (v * 13u32 + j * 101u32).cast::<u8>());
        });
        for_range(0u32, 4u32, |j: Expr<u32>| {
            da.set(j, v.cast::<f64>() / (j + 3u32).cast::<f64>());
            la.set(j, (v.cast::<i64>() - 9i64) * (1i64 << 40) + j.cast::<i64>());
        });
        // Divergent: some lanes change a shared element, the others keep theirs.
        if_((v % 3u32).eq(0u32), || {
            fa.set(2u32, fa.at(2u32) + 100.0f32);
            ba.set(5u32, ba.at(5u32) + 200u8);
            ha.set(1u32, -1234i16);
            la.set(3u32, la.at(3u32) * 3i64);
        });
        if synced {
            // The arrays cross a barrier in the records.
            tile.set(l, v);
            barrier_local();
            let nb = tile.at((l + 1u32) % local_size(0));
            fa.set(7u32, fa.at(7u32) + nb.cast::<f32>());
        }
        // An index of each lane's own.
        let own = v % 5u32;
        ia.set(own, ia.at(own) * 3i32 + 1i32);
        ha.set(v % 3u32, (v.cast::<i32>() - 500i32).cast::<i16>());
        da.set(v % 4u32, da.at((v + 1u32) % 4u32) * 2.5f64);
        // A loop with a trip count per lane, indexing by its counter and by a sum.
        for_range(0u32, v % 6u32, |j: Expr<u32>| {
            fa.set(j, fa.at(j) * 1.5f32 + fa.at((j + v) % 8u32));
            ba.set(j, ba.at(j) ^ (j * 17u32).cast::<u8>());
        });
        // An index from memory: in bounds here (the fault test passes others).
        let p = pick.at(i);
        io.set(i * 5u32, ia.at(p % 5u32));
        for_range(0u32, 8u32, |j: Expr<u32>| fo.set(i * 8u32 + j, fa.at(j)));
        for_range(1u32, 5u32, |j: Expr<u32>| io.set(i * 5u32 + j, ia.at(j)));
        for_range(0u32, 6u32, |j: Expr<u32>| {
            bo.set(i * 9u32 + j, ba.at(j).cast::<u32>())
        });
        for_range(0u32, 3u32, |j: Expr<u32>| {
            bo.set(i * 9u32 + 6u32 + j, ha.at(j).cast::<i32>().cast::<u32>())
        });
        for_range(0u32, 4u32, |j: Expr<u32>| {
            d64.set(i * 4u32 + j, da.at(j));
            i64o.set(i * 4u32 + j, la.at(j));
        });
    })
    .unwrap()
}

type Outputs = (Vec<u32>, Vec<i32>, Vec<u32>, Vec<u64>, Vec<i64>);

fn run(q: &Queue, k: &Kernel, n: usize, local: usize, pick: &[u32]) -> Result<Outputs, String> {
    let xs: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 20)
        .collect();
    let x = Buffer::from_slice(q, &xs).unwrap();
    let p = Buffer::from_slice(q, pick).unwrap();
    let fo = Buffer::<f32>::new(q.device(), n * 8).unwrap();
    let io = Buffer::<i32>::new(q.device(), n * 5).unwrap();
    let bo = Buffer::<u32>::new(q.device(), n * 9).unwrap();
    let d64 = Buffer::<f64>::new(q.device(), n * 4).unwrap();
    let i64o = Buffer::<i64>::new(q.device(), n * 4).unwrap();
    k.launch(
        q,
        NdRange::new(n).local(local),
        args![&x, &p, &fo, &io, &bo, &d64, &i64o],
    )
    .map_err(|e| e.to_string())?;
    Ok((
        q.read(&fo).unwrap().iter().map(|v| v.to_bits()).collect(),
        q.read(&io).unwrap(),
        q.read(&bo).unwrap(),
        q.read(&d64).unwrap().iter().map(|v| v.to_bits()).collect(),
        q.read(&i64o).unwrap(),
    ))
}

/// [`mixed`], with and without a barrier, on work-groups of 4, 8 and 64 (the vector
/// variant) and 2, 6 (the scalar code): the interpreter's bits.
#[test]
fn private_arrays_take_the_vector_variant_and_agree_with_the_interpreter() {
    let (cpu, interp) = queues();
    for synced in [false, true] {
        let k = mixed(synced);
        assert_eq!(k.cpu_vector_variant(), Ok(()), "synced {synced}");
        // Private arrays keep a kernel to four lanes (their layout is the records').
        assert_eq!(
            k.cpu_eight_lane_variant(),
            Err(if synced {
                "barriers or collectives".to_string()
            } else {
                "the local array `tile`".to_string()
            })
        );
        let n = 192;
        let pick: Vec<u32> = (0..n as u32).map(|i| i * 7 + 3).collect();
        for local in [4, 8, 64, 2, 6] {
            let want = run(&interp, &k, n, local, &pick).unwrap();
            let got = run(&cpu, &k, n, local, &pick).unwrap();
            assert!(got == want, "synced {synced}, local {local}");
        }
    }
}

/// An index out of a private array's bounds faults as on the interpreter, on every path: an
/// index from memory that is out of bounds in one lane (each lane tested alone), and a
/// shared index out of bounds (the loop's bound from a parameter: the one scalar test fails,
/// and the first active lane faults), in a divergent `if` where lane 0 is inactive.
#[test]
fn private_arrays_out_of_bounds_fault_as_on_the_interpreter() {
    let (cpu, interp) = queues();
    let k = Kernel::build("private_fault", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let m = k.scalar::<u32>("m");
        let a = private_array::<u32>("a", 4);
        let i = global_id(0);
        let v = x.at(i);
        if_(v.ne(0u32), || {
            for_range(0u32, m, |j: Expr<u32>| a.set(j, v + j));
        });
        out.set(i, a.at(v % 8u32));
    })
    .unwrap();
    assert_eq!(k.cpu_vector_variant(), Ok(()));
    let go = |q: &Queue, xs: &[u32], m: u32, local: usize| {
        let n = xs.len();
        let x = Buffer::from_slice(q, xs).unwrap();
        let out = Buffer::<u32>::new(q.device(), n).unwrap();
        k.launch(q, NdRange::new(n).local(local), args![&x, &out, m])
            .map_err(|e| e.to_string())
            .map(|_| q.read(&out).unwrap())
    };
    // In bounds: indices 0..4 only.
    let fine: Vec<u32> = (0..64u32).map(|i| (i * 9) % 4 + 8 * (i % 3)).collect();
    // Work-item 22 (lane 2 of its quad) reads element 6.
    let mut one = fine.clone();
    one[22] = 6;
    // Lane 0 of every quad inactive in the `if` (x = 0); the shared index reaches 4.
    let lane0_off: Vec<u32> = (0..64u32)
        .map(|i| if i % 4 == 0 { 0 } else { 1 + i % 3 })
        .collect();
    for (xs, m, ok) in [
        (&fine, 4u32, true),
        (&one, 4, false),
        (&lane0_off, 5, false),
        (&lane0_off, 4, true),
    ] {
        for local in [4, 16, 2] {
            let want = go(&interp, xs, m, local);
            assert_eq!(want.is_ok(), ok, "m {m}: {want:?}");
            if let Err(e) = &want {
                assert!(e.contains("for private array `a` of length 4"), "{e}");
            }
            assert_eq!(go(&cpu, xs, m, local), want, "m {m}, local {local}");
        }
    }
}

/// What keeps a kernel with a private array on the scalar path says so: an array of `bool`s
/// (a byte an element, not a lane type).
#[test]
fn private_arrays_of_bools_stay_scalar_and_say_why() {
    let k = Kernel::build("private_bools", |k| {
        let out = k.write::<u32>("out");
        let seen = private_array::<bool>("seen", 4);
        seen.set(global_id(0) % 4u32, lit(true));
        out.set(global_id(0), select(seen.at(1u32), 1u32, 0u32));
    })
    .unwrap();
    assert_eq!(
        k.cpu_vector_variant(),
        Err("the private array `seen` of bool".to_string())
    );
}

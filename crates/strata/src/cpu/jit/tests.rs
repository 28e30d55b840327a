//! Which kernels get the four-lane variant ([`super::simd`]), and when it is compiled: at the
//! first launch whose work-groups can use it, not with the scalar code.

use super::JitProgram;
use crate::prelude::*;

/// A tiled matrix product with two local arrays and barriers in a loop (the `matmul`
/// benchmark's shape, 8x8 tiles).
fn tiled() -> Kernel {
    Kernel::build("tiled", |k| {
        let a = k.read::<f32>("a");
        let b = k.read::<f32>("b");
        let c = k.write::<f32>("c");
        let n = k.scalar::<u32>("n");
        let at = k.local_array::<f32>("at", 64);
        let bt = k.local_array::<f32>("bt", 64);
        let (tx, ty) = (local_id(0), local_id(1));
        let col = group_id(0) * 8u32 + tx;
        let row = group_id(1) * 8u32 + ty;
        let mut acc = var_named("acc", 0.0f32);
        for_range(0u32, (n + 7u32) / 8u32, |t| {
            at.set(ty * 8u32 + tx, a.at(row * n + t * 8u32 + tx));
            bt.set(ty * 8u32 + tx, b.at((t * 8u32 + ty) * n + col));
            barrier_local();
            for p in 0..8u32 {
                acc += at.at(ty * 8u32 + p) * bt.at(p * 8u32 + tx);
            }
            barrier_local();
        });
        c.set(row * n + col, acc.get());
    })
    .unwrap()
}

fn compile(k: &Kernel) -> JitProgram {
    JitProgram::compile(k.valid_function(), false).unwrap()
}

#[test]
fn the_vector_variant_waits_for_a_launch_that_uses_it() {
    let p = compile(&tiled());
    assert!(p.has_vector_variant());
    let v = p.vector.as_ref().unwrap();
    assert!(v.code.get().is_none(), "compiled with the scalar code");
    // Work-groups of 6 run the scalar code and compile nothing.
    assert!(std::ptr::eq(p.variant([6, 8, 1]).unwrap(), &p.scalar));
    assert!(v.code.get().is_none());
    let x = p.variant([8, 8, 1]).unwrap() as *const _;
    assert!(!std::ptr::eq(x, &p.scalar));
    assert_eq!(
        x,
        p.variant([4, 2, 1]).unwrap() as *const _,
        "compiled once"
    );
}

#[test]
fn the_vector_variant_is_compiled_once_by_concurrent_launches() {
    let p = compile(&tiled());
    let ptrs: Vec<usize> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| s.spawn(|| p.variant([8, 8, 1]).unwrap() as *const _ as usize))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(ptrs.iter().all(|&x| x == ptrs[0]));
}

/// The compile times of the two variants of the tiled kernel (printed, not asserted: run with
/// `--nocapture` in a release build to see what a launch that vectorizes adds).
#[test]
fn compile_times_of_the_two_variants() {
    let k = tiled();
    let t = std::time::Instant::now();
    let p = compile(&k);
    let scalar = t.elapsed();
    let t = std::time::Instant::now();
    p.variant([8, 8, 1]).unwrap();
    let vector = t.elapsed();
    eprintln!("tiled: scalar code {scalar:?}, vector variant {vector:?}");
}

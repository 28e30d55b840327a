//! Drivers that end loops early. Mesa's llvmpipe (lavapipe, `vulkan:N` in CI) counts every
//! loop iteration of a sub-group in one counter and leaves every loop once it reaches 65,535,
//! silently: a kernel running a loop of 70,000 iterations computed 65,535 there. Devices with
//! such a limit ([`DeviceInfo::loop_iteration_limit`]) launch every kernel with a test after
//! each loop (`ir::checked::instrument_cutting_loops`), so a cut loop fails the launch with
//! `KernelFault` instead; loops that end by themselves, `break` and `continue` included, are
//! never reported; and the patterns stage their work so each work-item stays under the limit.
//!
//! Every present device runs these: on devices without a limit the long loops give the right
//! results. When `STRATA_REQUIRE` names `vulkan`, a Vulkan device must be there.

use strata::patterns::*;
use strata::prelude::*;
use strata::{BackendKind, Error};

/// Every device, plain and checked, with its limit.
fn devices() -> Vec<Device> {
    let all = strata::devices();
    if std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "vulkan")) {
        assert!(
            all.iter().any(|d| d.info().backend == BackendKind::Vulkan),
            "STRATA_REQUIRE names vulkan, but no Vulkan device is listed"
        );
    }
    all.into_iter()
        .filter(|d| d.info().backend != BackendKind::Cuda || cfg!(feature = "cuda"))
        .flat_map(|d| [d.clone(), d.checked()])
        .collect()
}

/// `out[i]`: the iterations run by a `for` loop of `n` iterations, then by a `loop` of `m`
/// iterations left by a `break`.
fn counting_kernel() -> Kernel {
    Kernel::build("count_iterations", |k| {
        let n = k.scalar::<u32>("n");
        let m = k.scalar::<u32>("m");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let acc = var(0u32);
        for_range(0u32, n, |_| acc.set(acc.get() + 1u32));
        let j = var(0u32);
        loop_(|| {
            if_(j.get().ge(m), break_);
            acc.set(acc.get() + 1u32);
            j.set(j.get() + 1u32);
        });
        out.set(i, acc.get());
    })
    .unwrap()
}

fn run_count(dev: &Device, n: u32, m: u32) -> strata::Result<Vec<u32>> {
    let q = Queue::new(dev)?;
    let out = Buffer::<u32>::new(&q, 16)?;
    counting_kernel()
        .launch(&q, NdRange::new(16).local(8), args![n, m, &out])?
        .wait()?;
    q.read(&out)
}

#[test]
fn a_loop_the_driver_cuts_fails_the_launch_instead_of_giving_a_wrong_result() {
    let mut limited = 0;
    for dev in devices() {
        let spec = dev.spec();
        // Under the limit, in either loop or both: right everywhere.
        for (n, m) in [(1000, 0), (0, 1000), (30_000, 30_000)] {
            let got = run_count(&dev, n, m).unwrap_or_else(|e| panic!("{spec} {n}+{m}: {e}"));
            assert_eq!(got, vec![n + m; 16], "{spec} {n}+{m}");
        }
        // Over it: in the `for` loop, in the `loop`, across both.
        for (n, m) in [(70_000, 0), (0, 70_000), (40_000, 40_000)] {
            let r = run_count(&dev, n, m);
            match dev.info().loop_iteration_limit {
                None => assert_eq!(r.unwrap(), vec![n + m; 16], "{spec} {n}+{m}"),
                Some(limit) => {
                    assert!(u64::from(n + m) > limit, "{spec}: limit {limit}");
                    let e = r.expect_err(&format!("{spec} {n}+{m}: a cut loop succeeded"));
                    assert!(matches!(e, Error::KernelFault { .. }), "{spec}: {e}");
                    let msg = e.to_string();
                    for part in [
                        "kernel `count_iterations`",
                        "a loop ended before its condition or a `break` ended it",
                        "65,535",
                    ] {
                        assert!(msg.contains(part), "{spec}: `{msg}` lacks `{part}`");
                    }
                    limited += 1;
                }
            }
        }
        // The queue runs the next launch.
        assert_eq!(run_count(&dev, 5, 6).unwrap(), vec![11; 16], "{spec}");
    }
    eprintln!("{limited} cut loops reported");
}

/// `continue`, `break` of an outer loop from an inner one, a `for` loop with a negative and a
/// computed step, a loop that ends by `return`: none is taken for a cut loop, under the limit.
#[test]
fn loops_that_end_by_themselves_are_never_reported() {
    let k = Kernel::build("exits", |k| {
        let n = k.scalar::<i32>("n");
        let step = k.scalar::<i32>("step");
        let out = k.write::<i32>("out");
        let i = global_id(0);
        let acc = var(0i32);
        for_range(0i32, n, |a| {
            if_((a % 3i32).eq(0i32), continue_);
            for_range(0i32, 10i32, |b| {
                if_((a + b).eq(50i32), break_);
                acc.set(acc.get() + 1i32);
            });
            acc.set(acc.get() + 2i32);
        });
        for_step(n, 0i32, -3i32, |a| acc.set(acc.get() + a));
        for_step(0i32, n, step, |a| acc.set(acc.get() ^ a));
        loop_(|| {
            acc.set(acc.get() + 7i32);
            if_(acc.get().gt(0i32), || {
                out.set(i, acc.get());
                return_();
            });
            continue_();
        });
    })
    .unwrap();
    let mut want = None;
    for dev in devices() {
        let spec = dev.spec();
        let q = Queue::new(&dev).unwrap();
        let out = Buffer::<i32>::new(&q, 16).unwrap();
        k.launch(&q, NdRange::new(16).local(8), args![3000i32, 5i32, &out])
            .and_then(|r| r.wait())
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        let got = q.read(&out).unwrap();
        assert!(got.iter().all(|&x| x == got[0]), "{spec}: {got:?}");
        match want {
            None => want = Some(got[0]),
            Some(w) => assert_eq!(got[0], w, "{spec}"),
        }
    }
}

/// Sorts and sums whose stagings would give one work-item more loop iterations than the
/// limit (one work-group for 2^24 elements; four for a parts sort of 2^22 keys) get more
/// work-groups on such devices, and the right results; elsewhere they run as staged.
#[test]
fn patterns_stay_under_the_loop_limit() {
    let n = 1usize << 22;
    let keys: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761).rotate_left(13))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    let values: Vec<u32> = (0..1usize << 24).map(|i| (i % 7) as u32).collect();
    let total: u32 = values.iter().sum();
    for dev in strata::devices() {
        if dev.info().loop_iteration_limit.is_none() {
            continue;
        }
        let spec = dev.spec();
        let ex = Exec::new(&Queue::new(&dev).unwrap()).untuned();
        let parts = ex
            .with_sort_staging(SortStaging {
                method: SortMethod::Parts,
                max_groups: 4,
                ..ex.sort_staging()
            })
            .unwrap();
        let v = DeviceVec::from_slice(&parts, &keys).unwrap();
        v.sort().unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert!(v.to_vec().unwrap() == sorted, "{spec}: parts sort");
        let one = ex
            .with_staging(Staging {
                max_groups: 1,
                ..ex.staging()
            })
            .unwrap();
        let d = DeviceVec::from_slice(&one, &values).unwrap();
        let s: u32 = d.sum(&one).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(s, total, "{spec}: sum");
    }
}

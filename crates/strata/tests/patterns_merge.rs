//! The comparator sort (`DeviceVec::sort_by`, `merge_sort_by_key`: a stable merge sort by a
//! comparison in the kernel language) against the host's stable `sort_by` with the same
//! comparison, on every device (the CPU backend, the interpreter, each OpenCL device): sizes
//! 0, 1, odd, and many work-groups' worth; ascending, descending, by a part of the key
//! (stability shows), a lexicographic order of two fields packed in a `u64`, floats; keys
//! alone and key-value pairs. Its kernels are compiled by NVRTC too (no GPU needed).
//!
//! When `STRATA_REQUIRE` contains `opencl`, having no OpenCL device is a failure.

use strata::patterns::*;
use strata::prelude::*;
use strata::BackendKind;

fn required(what: &str) -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == what))
}

/// Every device, the interpreter included, each with a small staging (work-groups of at
/// most 64), so that the larger sizes span many work-groups.
fn execs() -> Vec<Exec> {
    let mut devices = strata::devices();
    if !devices
        .iter()
        .any(|d| d.info().backend == BackendKind::Interp)
    {
        devices.push(Device::from_spec("interp").unwrap());
    }
    assert!(
        !required("opencl")
            || devices
                .iter()
                .any(|d| d.info().backend == BackendKind::OpenCl),
        "STRATA_REQUIRE names opencl, but no OpenCL device is listed"
    );
    devices
        .iter()
        .map(|d| {
            let ex = Exec::new(&Queue::new(d).unwrap()).untuned();
            let st = ex.staging();
            ex.with_staging(Staging {
                group_size: st.group_size.min(64),
                ..st
            })
            .unwrap()
        })
        .collect()
}

/// Sizes: empty, one, two, odd, a power of two, and beyond many work-groups.
fn sizes(ex: &Exec) -> Vec<usize> {
    let mut s = vec![0, 1, 2, 3, 7, 64, 257, 1000];
    if ex.device().info().backend != BackendKind::Interp {
        s.push(20_001);
    }
    s
}

/// Pseudo-random `u32`s below `range` (many ties when `range` is small).
fn data(n: usize, seed: u64, range: u32) -> Vec<u32> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 16) as u32 % range
        })
        .collect()
}

#[test]
fn sort_by_matches_the_hosts_stable_sort() {
    for ex in execs() {
        let spec = ex.device().spec();
        for n in sizes(&ex) {
            let keys = data(n, n as u64 + 1, 1000);
            // Ascending and descending.
            let v = DeviceVec::from_slice(&ex, &keys).unwrap();
            v.sort_by(|a, b| a.lt(b)).unwrap();
            let mut want = keys.clone();
            want.sort();
            assert_eq!(v.to_vec().unwrap(), want, "ascending, {n} on {spec}");
            let v = DeviceVec::from_slice(&ex, &keys).unwrap();
            v.sort_by(|a, b| a.gt(b)).unwrap();
            want.reverse();
            assert_eq!(v.to_vec().unwrap(), want, "descending, {n} on {spec}");
            // By the low 4 bits only: equal keys of other values must keep their order.
            let v = DeviceVec::from_slice(&ex, &keys).unwrap();
            v.sort_by(|a, b| (a & 15u32).lt(b & 15u32)).unwrap();
            let mut want = keys.clone();
            want.sort_by_key(|k| k & 15);
            assert_eq!(
                v.to_vec().unwrap(),
                want,
                "by low bits (stable), {n} on {spec}"
            );
        }
    }
}

#[test]
fn sort_by_packed_fields_and_floats() {
    for ex in execs() {
        let spec = ex.device().spec();
        for n in [0, 1, 5, 333, 4097] {
            // A tuple-like key: (major, minor) packed as major << 32 | minor, ordered by
            // major descending, then minor ascending.
            let major = data(n, 7, 9);
            let minor = data(n, 8, 50);
            let keys: Vec<u64> = major
                .iter()
                .zip(&minor)
                .map(|(&a, &b)| (u64::from(a) << 32) | u64::from(b))
                .collect();
            let v = DeviceVec::from_slice(&ex, &keys).unwrap();
            v.sort_by(|a, b| {
                let (ha, hb) = (a >> 32u64, b >> 32u64);
                let (la, lb) = (a & 0xffff_ffffu64, b & 0xffff_ffffu64);
                ha.gt(hb) | (ha.eq(hb) & la.lt(lb))
            })
            .unwrap();
            let mut want = keys.clone();
            want.sort_by(|a, b| {
                (b >> 32)
                    .cmp(&(a >> 32))
                    .then((a & 0xffff_ffff).cmp(&(b & 0xffff_ffff)))
            });
            assert_eq!(v.to_vec().unwrap(), want, "packed fields, {n} on {spec}");
            // Floats by absolute value (ties between x and -x keep their order).
            let f: Vec<f32> = data(n, 9, 41).iter().map(|&x| x as f32 - 20.0).collect();
            let v = DeviceVec::from_slice(&ex, &f).unwrap();
            v.sort_by(|a, b| a.abs().lt(b.abs())).unwrap();
            let mut want = f.clone();
            want.sort_by(|a, b| a.abs().partial_cmp(&b.abs()).unwrap());
            assert_eq!(v.to_vec().unwrap(), want, "floats by |x|, {n} on {spec}");
        }
    }
}

#[test]
fn merge_sort_by_key_moves_the_values() {
    for ex in execs() {
        let spec = ex.device().spec();
        for n in sizes(&ex) {
            let keys = data(n, 3 * n as u64 + 5, 17);
            let vals: Vec<u32> = (0..n as u32).collect();
            let k = DeviceVec::from_slice(&ex, &keys).unwrap();
            let v = DeviceVec::from_slice(&ex, &vals).unwrap();
            merge_sort_by_key(&ex, &k, &v, |a, b| a.gt(b)).unwrap();
            let mut want: Vec<(u32, u32)> = keys.iter().copied().zip(vals).collect();
            want.sort_by_key(|b| std::cmp::Reverse(b.0));
            let (wk, wv): (Vec<u32>, Vec<u32>) = want.into_iter().unzip();
            assert_eq!(k.to_vec().unwrap(), wk, "keys, {n} on {spec}");
            assert_eq!(v.to_vec().unwrap(), wv, "values (stable), {n} on {spec}");
        }
        // Sub-slices sort in place, the rest untouched.
        let all = DeviceVec::from_slice(&ex, &[9u32, 8, 7, 6, 5, 4, 3]).unwrap();
        all.slice(2..6).unwrap().sort_by(|a, b| a.lt(b)).unwrap();
        assert_eq!(all.to_vec().unwrap(), vec![9, 8, 4, 5, 6, 7, 3], "{spec}");
        // Mismatched lengths are an error, not a partial sort.
        let k = DeviceVec::from_slice(&ex, &[2u32, 1]).unwrap();
        let v = DeviceVec::from_slice(&ex, &[0u32]).unwrap();
        assert!(merge_sort_by_key(&ex, &k, &v, |a, b| a.lt(b)).is_err());
    }
}

#[test]
fn merge_kernels_compile_with_nvrtc() {
    #[cfg(feature = "cuda")]
    {
        if let Err(why) = strata::cuda::nvrtc_path() {
            assert!(!required("nvrtc"), "STRATA_REQUIRE names nvrtc, but: {why}");
            eprintln!("skipped: NVRTC cannot be loaded: {why}");
            return;
        }
        let ex = Exec::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap());
        let ((), kernels) = strata::capture_kernels(|| {
            let k = DeviceVec::from_slice(&ex, &data(100, 1, 10)).unwrap();
            let v = DeviceVec::from_slice(&ex, &data(100, 2, 10)).unwrap();
            k.sort_by(|a, b| a.gt(b)).unwrap();
            merge_sort_by_key(&ex, &k, &v, |a, b| a.lt(b)).unwrap();
        });
        assert!(!kernels.is_empty());
        for k in kernels {
            let generated = strata::codegen::cuda(k.valid_function()).unwrap();
            strata::cuda::compile_ptx(k.name(), &generated, 90, &[]).unwrap();
        }
    }
}

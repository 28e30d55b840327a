//! The radix sort's methods and orders against the host's stable sort, on every device: the
//! Onesweep sort forced on the interpreter and the compiled CPU backend (both guarantee the
//! progress its look-back needs; OpenCL devices refuse it) beside the tile and parts sorts; ascending and descending; `u32`, `i32`, `f32`, `u64`, `i64`, `f64` keys, with
//! negative floats, `-0.0` and `+0.0`, NaNs of both signs and infinities; pairs with few
//! distinct keys (stability); sizes 0, 1, partial tiles, many tiles, odd pass counts and more
//! than two passes.
//!
//! When `STRATA_REQUIRE` contains `opencl`, having no OpenCL device is a failure.

use strata::patterns::*;
use strata::prelude::*;
use strata::{BackendKind, Error};

fn required() -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "opencl"))
}

/// The interpreter, then every other listed device (the CPU backend, the OpenCL devices).
fn devices() -> Vec<Device> {
    let all = strata::devices();
    assert!(
        !required() || all.iter().any(|d| d.info().backend == BackendKind::OpenCl),
        "STRATA_REQUIRE names opencl, but no OpenCL device is listed"
    );
    // The interpreter once (the listed devices may include it).
    let mut v = vec![Device::from_spec("interp").unwrap()];
    v.extend(
        all.into_iter()
            .filter(|d| d.info().backend != BackendKind::Interp),
    );
    v
}

/// Held by each test: the tests of this file run one at a time (the look-back of one sort
/// spins on a thread that the other's work-groups could use).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The stagings of one device: Onesweep (where it may run: not on OpenCL) with tiles small enough that the
/// sizes cover many tiles, an odd pass count (5-bit digits: 7 passes for 32-bit keys, 13 for
/// 64-bit ones), a work-group size that is not a multiple of 32, and the GPU defaults; the
/// tile and parts sorts for comparison.
fn stagings(d: &Device) -> Vec<(SortStaging, Vec<usize>)> {
    let interp = d.info().backend == BackendKind::Interp;
    let small = if interp {
        vec![0, 1, 2, 3, 63, 65, 300, 1001]
    } else {
        vec![0, 1, 2, 3, 63, 65, 257, 1000, 5003]
    };
    let st = |method, digit_bits, keys_per_thread, group_size, max_groups| SortStaging {
        method,
        digit_bits,
        keys_per_thread,
        group_size,
        max_groups,
    };
    let mut v = vec![
        (st(SortMethod::Onesweep, 8, 2, 64, 4), small.clone()),
        (st(SortMethod::Onesweep, 5, 3, 48, 3), small.clone()),
        (st(SortMethod::Onesweep, 4, 4, 32, 2), small.clone()),
        (
            st(SortMethod::Onesweep, 8, 16, 256, 3),
            if interp {
                vec![3, 4097]
            } else {
                vec![3, 4097, 20_000]
            },
        ),
        // The interpreter runs the tile sort's many barriers slowly: fewer sizes there.
        (
            st(SortMethod::Tiles, 8, 2, 64, 4),
            if interp {
                vec![0, 1, 65, 300]
            } else {
                small.clone()
            },
        ),
        (st(SortMethod::Parts, 5, 1, 16, 4), small),
    ];
    // Onesweep only where the device guarantees the progress its look-back needs.
    v.retain(|(s, _)| s.method != SortMethod::Onesweep || onesweep_safe(d.info()));
    v
}

/// The host's stable sort in `desc` order by `f(key)`.
fn host_sort<T: Copy, K: Ord>(v: &mut [T], desc: bool, f: impl Fn(&T) -> K) {
    if desc {
        v.sort_by_key(|a| std::cmp::Reverse(f(a)));
    } else {
        v.sort_by_key(|a| f(a));
    }
}

/// Sorts `keys` on the device in `desc` order (with the original positions as values when
/// `pairs`) and checks keys (and values: stability) against the host's stable sort by `ord`.
fn check<K, O>(ex: &Exec, keys: &[K], desc: bool, ord: impl Fn(&K) -> O + Copy, what: &str)
where
    K: SortKey + PartialEq + std::fmt::Debug,
    O: Ord,
{
    let at = format!(
        "{} {:?} n={} {what} {}",
        ex.device().info().spec(),
        ex.sort_staging(),
        keys.len(),
        if desc { "desc" } else { "asc" }
    );
    let mut want: Vec<(K, u32)> = keys.iter().copied().zip(0u32..).collect();
    host_sort(&mut want, desc, |p| ord(&p.0));
    let (wk, wv): (Vec<K>, Vec<u32>) = want.into_iter().unzip();
    let same = |got: &[K]| got.iter().map(ord).eq(wk.iter().map(ord));
    // Keys alone.
    let d = DeviceVec::from_slice(ex, keys).unwrap();
    if desc {
        d.sort_desc().unwrap();
    } else {
        d.sort().unwrap();
    }
    assert!(same(&d.to_vec().unwrap()), "keys {at}");
    // Pairs: the values are the positions, so equal keys must keep them ascending.
    let dk = DeviceVec::from_slice(ex, keys).unwrap();
    let dv = DeviceVec::from_slice(ex, &(0..keys.len() as u32).collect::<Vec<_>>()).unwrap();
    if desc {
        sort_by_key_desc(ex, &dk, &dv).unwrap();
    } else {
        sort_by_key(ex, &dk, &dv).unwrap();
    }
    assert!(same(&dk.to_vec().unwrap()), "pair keys {at}");
    assert_eq!(dv.to_vec().unwrap(), wv, "pair values (stable) {at}");
}

/// Random floats from random bits (NaNs of both signs among them), with the special values.
fn f32s(rng: &mut Rng, n: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..n)
        .map(|i| match i % 4 {
            0 => f32::from_bits(rng.next() as u32),
            1 => (rng.next() % 7) as f32 - 3.0,
            _ => (rng.next() % 2001) as f32 * 0.25 - 250.0,
        })
        .collect();
    let special = [
        -0.0,
        0.0,
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
    ];
    for (x, s) in v.iter_mut().zip(special) {
        *x = s;
    }
    v
}

fn f64s(rng: &mut Rng, n: usize) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n)
        .map(|i| match i % 4 {
            0 => f64::from_bits(rng.next()),
            1 => (rng.next() % 7) as f64 - 3.0,
            _ => (rng.next() % 2001) as f64 * 0.25 - 250.0,
        })
        .collect();
    let special = [
        -0.0,
        0.0,
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
    ];
    for (x, s) in v.iter_mut().zip(special) {
        *x = s;
    }
    v
}

/// Every staging of every device, both orders, every key type: keys and pairs against the
/// host. Floats compare by their bits in `total_cmp` order (NaN placement: `-NaN` first and
/// `+NaN` last ascending, the reverse descending; `-0.0` before `+0.0` ascending).
#[test]
fn sorts_against_the_host() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = Rng(99);
    for d in devices() {
        let ex = Exec::new(&Queue::new(&d).unwrap()).untuned();
        for (st, sizes) in stagings(&d) {
            let ex = ex.with_sort_staging(st).unwrap();
            let t = std::time::Instant::now();
            eprintln!("{} {st:?}", d.info().spec());
            for n in sizes {
                for desc in [false, true] {
                    // Few distinct keys: long runs of equal keys (stability).
                    let u: Vec<u32> = (0..n)
                        .map(|_| match rng.next() % 3 {
                            0 => (rng.next() % 5) as u32,
                            1 => u32::MAX - (rng.next() % 2) as u32,
                            _ => rng.next() as u32,
                        })
                        .collect();
                    check(&ex, &u, desc, |k| *k, "u32");
                    let i: Vec<i32> = u.iter().map(|&k| k.rotate_left(7) as i32).collect();
                    check(&ex, &i, desc, |k| *k, "i32");
                    let f = f32s(&mut rng, n);
                    check(&ex, &f, desc, |k| TotalF32(*k), "f32");
                    // u64 and i64 on the larger stagings only (the interpreter is slow).
                    let l: Vec<u64> = (0..n)
                        .map(|_| match rng.next() % 3 {
                            0 => u64::MAX,
                            1 => rng.next() % 3,
                            _ => rng.next(),
                        })
                        .collect();
                    check(&ex, &l, desc, |k| *k, "u64");
                    let s: Vec<i64> = l.iter().map(|&k| k.rotate_left(13) as i64).collect();
                    check(&ex, &s, desc, |k| *k, "i64");
                    let g = f64s(&mut rng, n);
                    check(&ex, &g, desc, |k| TotalF64(*k), "f64");
                }
            }
            eprintln!("  {:.1} s", t.elapsed().as_secs_f64());
        }
    }
}

/// `f32` in `total_cmp` order, compared by its bits (NaNs included).
#[derive(Clone, Copy, Debug)]
struct TotalF32(f32);
impl PartialEq for TotalF32 {
    fn eq(&self, o: &Self) -> bool {
        self.0.to_bits() == o.0.to_bits()
    }
}
impl Eq for TotalF32 {}
impl PartialOrd for TotalF32 {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for TotalF32 {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// `f64` in `total_cmp` order, compared by its bits (NaNs included).
#[derive(Clone, Copy, Debug)]
struct TotalF64(f64);
impl PartialEq for TotalF64 {
    fn eq(&self, o: &Self) -> bool {
        self.0.to_bits() == o.0.to_bits()
    }
}
impl Eq for TotalF64 {}
impl PartialOrd for TotalF64 {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for TotalF64 {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// Onesweep is one histogram launch, one starts launch and one launch per digit (a copy back
/// after an odd pass count); its status words and counters are reused by the next sort (new
/// tags), also after the scratch is released; it is the default nowhere here (CPU devices
/// keep the parts sort) and refused where the device does not guarantee progress.
#[test]
fn onesweep_launches_reuse_and_classification() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = Rng(5);
    for d in devices() {
        let info = d.info();
        let ex = Exec::new(&Queue::new(&d).unwrap()).untuned();
        assert_eq!(
            ex.sort_staging().method,
            SortMethod::Parts,
            "{}",
            info.spec()
        );
        let forced = ex.with_sort_staging(SortStaging {
            method: SortMethod::Onesweep,
            digit_bits: 8,
            keys_per_thread: 2,
            group_size: 32,
            max_groups: 4,
        });
        if !onesweep_safe(info) {
            let e = forced.unwrap_err();
            assert!(matches!(e, Error::Unsupported { .. }), "{e}");
            assert!(e.to_string().contains("Onesweep"), "{e}");
            continue;
        }
        let os = forced.unwrap();
        let n = 1000;
        assert_eq!(
            os.sort_shape(n, 4).unwrap(),
            LaunchShape {
                local_size: 32,
                groups: n.div_ceil(64)
            }
        );
        for round in 0..3 {
            let u: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
            let v = DeviceVec::from_slice(&os, &u).unwrap();
            let before = os.queue().launch_count();
            v.sort().unwrap();
            assert_eq!(os.queue().launch_count() - before, 2 + 4, "u32: 4 digits");
            let mut want = u.clone();
            want.sort();
            assert_eq!(v.to_vec().unwrap(), want, "{} round {round}", info.spec());
            if round == 1 {
                os.release_scratch();
            }
        }
    }
}

//! The patterns layer (`strata::patterns`) against sequential Rust on random inputs, on every
//! device present: empty input, one element, sizes that are not powers of two, and sizes beyond
//! one work-group times the number of work-groups (with a small staging: 64 work-items, 2
//! elements each, at most 4 work-groups). Kernel launches are counted to prove that views fuse
//! into the algorithm that consumes them, and compilations to prove multi-staging.
//!
//! When `STRATA_REQUIRE` contains `opencl`, having no OpenCL device is a failure.

use strata::patterns::*;
use strata::prelude::*;
use strata::{BackendKind, Error};

fn required() -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "opencl"))
}

/// Every device: the CPU backend and each OpenCL device (required when `STRATA_REQUIRE` says).
fn devices() -> Vec<Device> {
    let all = strata::devices();
    if !all.iter().any(|d| d.info().backend == BackendKind::OpenCl) {
        let why = strata::unavailable_backends()
            .into_iter()
            .find(|(b, _)| *b == BackendKind::OpenCl)
            .map_or("(no reason given)".into(), |(_, w)| w);
        assert!(
            !required(),
            "STRATA_REQUIRE names opencl, but no OpenCL device is listed: {why}"
        );
        eprintln!("no OpenCL device, patterns checked on the CPU backend only: {why}");
    }
    all
}

/// The small staging: more elements than work-groups times work-items at modest sizes.
fn small(ex: &Exec) -> Exec {
    let gs = ex.staging().group_size.min(64);
    ex.with_staging(Staging {
        group_size: gs,
        items_per_thread: 2,
        max_groups: 4,
        layout: Layout::Strided,
        reduce_layout: Layout::Strided,
        scan_items_per_thread: 2,
    })
    .unwrap()
}

/// For each device: the small exec with every size of [`SIZES`], and the device's default
/// exec with a few sizes (plus a large one where kernels run natively, not interpreted).
fn cases() -> Vec<(Exec, Vec<usize>)> {
    let mut v = Vec::new();
    for d in devices() {
        let ex = Exec::new(&Queue::new(&d).unwrap());
        v.push((small(&ex), SIZES.to_vec()));
        let mut sizes = vec![0, 1, 1000];
        if d.info().backend != BackendKind::Cpu {
            sizes.push(300_001);
        }
        v.push((ex, sizes));
    }
    v
}

/// Sizes beyond the small staging's coverage (4 groups x 64 work-items x 2 elements = 512).
const SIZES: [usize; 9] = [0, 1, 2, 3, 63, 65, 257, 1000, 5003];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn u32s(&mut self, n: usize, below: u32) -> Vec<u32> {
        (0..n)
            .map(|_| (self.next() % below as u64) as u32)
            .collect()
    }
    fn i32s(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| self.next() as i32).collect()
    }
    /// Small integers as floats: sums are exact in any order.
    fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| (self.next() % 2001) as f32 - 1000.0)
            .collect()
    }
}

fn label(ex: &Exec, n: usize) -> String {
    format!(
        "{} group {} x{} groups<={} {:?} scan, n={n}",
        ex.device().info().spec(),
        ex.staging().group_size,
        ex.staging().items_per_thread,
        ex.staging().max_groups,
        ex.scan_algorithm_for(4),
    )
}

#[test]
fn device_vec_host_slices_sub_slices_and_buffers() {
    for (ex, _) in cases() {
        let data: Vec<u32> = (0..100).collect();
        let v = DeviceVec::from_slice(&ex, &data).unwrap();
        assert_eq!(v.len(), 100);
        assert_eq!(v.to_vec().unwrap(), data);
        let s = v.slice(10..20).unwrap();
        assert_eq!((s.offset(), s.len()), (10, 10));
        assert_eq!(s.to_vec().unwrap(), data[10..20]);
        assert_eq!(v.slice(..).unwrap().len(), 100);
        assert!(v.slice(100..).unwrap().is_empty());
        // Sub-slices share memory.
        s.copy_from_slice(&[7; 10]).unwrap();
        assert_eq!(
            v.to_vec().unwrap()[9..21],
            [9, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 20]
        );
        // Buffer round trip without copying.
        let buf = v.clone().into_buffer().unwrap();
        assert!(buf.same_memory(v.buffer()));
        let back = DeviceVec::from_buffer(&ex, buf.clone()).unwrap();
        assert!(back.buffer().same_memory(&buf));
        assert_eq!(back.len(), 100);
        // A copy is new memory.
        let c = s.to_owned_vec().unwrap();
        assert!(!c.buffer().same_memory(v.buffer()));
        assert_eq!(c.to_vec().unwrap(), vec![7; 10]);
        let e: DeviceVec<f32> = DeviceVec::from_slice(&ex, &[]).unwrap();
        assert!(e.is_empty() && e.to_vec().unwrap().is_empty());
    }
}

#[test]
fn views_against_rust() {
    let mut rng = Rng(1);
    for (ex, sizes) in cases() {
        for n in sizes {
            let at = label(&ex, n);
            let x = rng.f32s(n);
            let y = rng.f32s(n);
            let z = rng.f32s(n);
            let w = rng.f32s(n);
            let dx = DeviceVec::from_slice(&ex, &x).unwrap();
            let dy = DeviceVec::from_slice(&ex, &y).unwrap();
            let dz = DeviceVec::from_slice(&ex, &z).unwrap();
            let dw = DeviceVec::from_slice(&ex, &w).unwrap();
            let q = ex.queue();
            // zip + map: one kernel.
            let before = q.launch_count();
            let got = zip(&dx, &dy)
                .map(|(a, b)| a * 2.0f32 + b)
                .collect(&ex)
                .unwrap()
                .to_vec()
                .unwrap();
            assert_eq!(q.launch_count() - before, (n > 0) as u64, "{at}");
            let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a * 2.0 + b).collect();
            assert_eq!(got, want, "zip+map {at}");
            // zip3, zip4
            let got = zip3(&dx, &dy, &dz)
                .map(|(a, b, c)| a - b * c)
                .collect(&ex)
                .unwrap()
                .to_vec()
                .unwrap();
            let want: Vec<f32> = (0..n).map(|i| x[i] - y[i] * z[i]).collect();
            assert_eq!(got, want, "zip3 {at}");
            let before = q.launch_count();
            let got = zip4(&dx, &dy, &dz, &dw)
                .map(|(a, b, c, d)| (a + b) * (c - d))
                .rev()
                .collect(&ex)
                .unwrap()
                .to_vec()
                .unwrap();
            assert_eq!(q.launch_count() - before, (n > 0) as u64, "{at}");
            let want: Vec<f32> = (0..n)
                .rev()
                .map(|i| (x[i] + y[i]) * (z[i] - w[i]))
                .collect();
            assert_eq!(got, want, "zip4+rev {at}");
            // counting, constant, enumerate
            let got = zip(counting(5, n), constant(3u32, n))
                .enumerate()
                .map(|(i, (c, k))| c * k + i)
                .collect(&ex)
                .unwrap()
                .to_vec()
                .unwrap();
            let want: Vec<u32> = (0..n as u32).map(|i| (i + 5) * 3 + i).collect();
            assert_eq!(got, want, "counting+constant+enumerate {at}");
            // slice / take / skip / strided
            let (a, b) = (n / 3, n - n / 4);
            let got = (&dx).subrange(a..b).collect(&ex).unwrap().to_vec().unwrap();
            assert_eq!(got, x[a..b], "slice {at}");
            let got = (&dx)
                .skip(2)
                .take(7)
                .collect(&ex)
                .unwrap()
                .to_vec()
                .unwrap();
            let want: Vec<f32> = x.iter().copied().skip(2).take(7).collect();
            assert_eq!(got, want, "skip+take {at}");
            for step in [1, 3, 64] {
                let got = (&dx).strided(step).collect(&ex).unwrap().to_vec().unwrap();
                let want: Vec<f32> = x.iter().copied().step_by(step).collect();
                assert_eq!(got, want, "strided {step} {at}");
            }
            // gather by an index range (a permutation from the host), fused with a map
            let idx: Vec<u32> = (0..n as u32)
                .map(|i| (i * 7 + 3) % n.max(1) as u32)
                .collect();
            let didx = DeviceVec::from_slice(&ex, &idx).unwrap();
            let before = q.launch_count();
            let got = (&dx)
                .gather(&didx)
                .map(|v| -v)
                .collect(&ex)
                .unwrap()
                .to_vec()
                .unwrap();
            assert_eq!(q.launch_count() - before, (n > 0) as u64, "{at}");
            let want: Vec<f32> = idx.iter().map(|&i| -x[i as usize]).collect();
            assert_eq!(got, want, "gather {at}");
        }
    }
}

#[test]
fn for_each_and_async_collect() {
    let mut rng = Rng(2);
    for (ex, sizes) in cases() {
        for n in sizes {
            let at = label(&ex, n);
            let x = rng.i32s(n);
            let dx = DeviceVec::from_slice(&ex, &x).unwrap();
            let out = DeviceVec::<i32>::zeroed(&ex, n).unwrap();
            let before = ex.queue().launch_count();
            zip(&dx, out.slots())
                .for_each(&ex, |(v, slot)| slot.set(v.wrapping_mul_hack()))
                .unwrap();
            assert_eq!(ex.queue().launch_count() - before, (n > 0) as u64);
            let want: Vec<i32> = x.iter().map(|v| v.wrapping_mul(3)).collect();
            assert_eq!(out.to_vec().unwrap(), want, "for_each {at}");
            let pending = (&dx).map(|v| v + 1i32).collect_async(&ex).unwrap();
            pending.event().wait().unwrap();
            assert!(pending.is_complete());
            let want: Vec<i32> = x.iter().map(|v| v.wrapping_add(1)).collect();
            assert_eq!(
                pending.wait().unwrap().to_vec().unwrap(),
                want,
                "async {at}"
            );
        }
    }
}

/// `v * 3` through the traced operators (a helper so the closure above reads plainly).
trait MulHack {
    fn wrapping_mul_hack(self) -> Expr<i32>;
}
impl MulHack for Expr<i32> {
    fn wrapping_mul_hack(self) -> Expr<i32> {
        self * 3i32
    }
}

#[test]
fn reductions_against_rust() {
    let mut rng = Rng(3);
    for (ex, sizes) in cases() {
        for n in sizes {
            let at = label(&ex, n);
            let q = ex.queue();
            let xi = rng.i32s(n);
            let xu = rng.u32s(n, 1000);
            let xf = rng.f32s(n);
            let (di, du, df) = (
                DeviceVec::from_slice(&ex, &xi).unwrap(),
                DeviceVec::from_slice(&ex, &xu).unwrap(),
                DeviceVec::from_slice(&ex, &xf).unwrap(),
            );
            let before = q.launch_count();
            let s: i32 = di.sum(&ex).unwrap();
            let passes = q.launch_count() - before;
            assert_eq!(s, xi.iter().fold(0i32, |a, b| a.wrapping_add(*b)), "{at}");
            let groups =
                n.div_ceil((ex.staging().group_size * ex.staging().items_per_thread) as usize);
            let want_passes = match n {
                0 => 0,
                _ if groups.min(ex.staging().max_groups as usize) > 1 => 2,
                _ => 1,
            };
            assert_eq!(passes, want_passes, "reduce passes {at}");
            assert_eq!(du.sum::<u32>(&ex).unwrap(), xu.iter().sum::<u32>(), "{at}");
            assert_eq!(df.sum::<f32>(&ex).unwrap(), xf.iter().sum::<f32>(), "{at}");
            // dot: zip + map + reduce fused (same pass count as a plain sum)
            let before = q.launch_count();
            let dot = zip(&df, &df).map(|(a, b)| a * b).sum::<f32>(&ex).unwrap();
            assert_eq!(q.launch_count() - before, want_passes, "{at}");
            let want = xf.iter().map(|v| (v * v) as f64).sum::<f64>();
            assert!(
                (dot as f64 - want).abs() <= 1e-5 * want.abs(),
                "dot {at}: {dot} vs {want}"
            );
            // user operator and init
            let m = di.reduce(&ex, 17, |a, b| a.max(b)).unwrap();
            assert_eq!(m, xi.iter().copied().fold(17, i32::max), "{at}");
            // an associative, non-commutative operator: order is kept
            let last = du.reduce(&ex, 12345, |_, b| b).unwrap();
            assert_eq!(last, xu.last().copied().unwrap_or(12345), "last {at}");
            let first = du.reduce(&ex, 7, |a, _| a).unwrap();
            assert_eq!(first, 7, "first {at}");
            assert_eq!(df.min(&ex).unwrap(), xf.iter().copied().reduce(f32::min));
            assert_eq!(df.max(&ex).unwrap(), xf.iter().copied().reduce(f32::max));
            assert_eq!(di.min(&ex).unwrap(), xi.iter().copied().min());
            assert_eq!(du.max(&ex).unwrap(), xu.iter().copied().max());
            // argmin / argmax: first index among equals
            let want_min = xu
                .iter()
                .enumerate()
                .min_by_key(|(_, v)| **v)
                .map(|(i, v)| (i, *v));
            assert_eq!(du.argmin(&ex).unwrap(), want_min, "argmin {at}");
            let want_max = xu
                .iter()
                .enumerate()
                .rev()
                .max_by_key(|(_, v)| **v)
                .map(|(i, v)| (i, *v));
            assert_eq!(du.argmax(&ex).unwrap(), want_max, "argmax {at}");
            let want_fmin = xf
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .map(|(i, v)| (i, *v));
            assert_eq!(df.argmin(&ex).unwrap(), want_fmin, "argmin f32 {at}");
            let want_imax = xi
                .iter()
                .enumerate()
                .rev()
                .max_by_key(|(_, v)| **v)
                .map(|(i, v)| (i, *v));
            assert_eq!(di.argmax(&ex).unwrap(), want_imax, "argmax i32 {at}");
            // count / any / all
            let c = du.count(&ex, |v| v.lt(500u32)).unwrap();
            assert_eq!(c, xu.iter().filter(|v| **v < 500).count(), "{at}");
            assert_eq!(du.any(&ex, |v| v.eq(999u32)).unwrap(), xu.contains(&999));
            assert!(du.all(&ex, |v| v.lt(1000u32)).unwrap(), "all {at}");
            assert_eq!(
                di.all(&ex, |v| v.ge(0i32)).unwrap(),
                xi.iter().all(|v| *v >= 0)
            );
        }
    }
}

/// [`cases`], plus the CPU backend's execs with the look-back scan forced (the CPU backend
/// guarantees the progress it needs), with sizes of many tiles.
fn scan_cases() -> Vec<(Exec, Vec<usize>)> {
    let mut v = cases();
    let cpu: Vec<(Exec, Vec<usize>)> = v
        .iter()
        .filter(|(ex, _)| ex.device().info().backend == BackendKind::Cpu)
        .map(|(ex, sizes)| {
            let mut sizes = sizes.clone();
            sizes.push(20_011);
            (
                ex.with_scan_algorithm(ScanAlgorithm::LookBack).unwrap(),
                sizes,
            )
        })
        .collect();
    v.extend(cpu);
    v
}

#[test]
fn scans_against_rust() {
    let mut rng = Rng(4);
    for (ex, sizes) in scan_cases() {
        for n in sizes {
            let at = label(&ex, n);
            let xi = rng.i32s(n);
            let xf = rng.f32s(n);
            let di = DeviceVec::from_slice(&ex, &xi).unwrap();
            let df = DeviceVec::from_slice(&ex, &xf).unwrap();
            let mut acc = 0i32;
            let incl: Vec<i32> = xi
                .iter()
                .map(|v| {
                    acc = acc.wrapping_add(*v);
                    acc
                })
                .collect();
            let got = di.inclusive_scan(&ex, |a, b| a + b).unwrap();
            assert_eq!(got.to_vec().unwrap(), incl, "inclusive {at}");
            let mut acc = 5i32;
            let excl: Vec<i32> = xi
                .iter()
                .map(|v| {
                    let o = acc;
                    acc = acc.wrapping_add(*v);
                    o
                })
                .collect();
            let got = di.exclusive_scan(&ex, 5, |a, b| a + b).unwrap();
            assert_eq!(got.to_vec().unwrap(), excl, "exclusive {at}");
            // max-scan of floats, fused with a map
            let mut m = f32::NEG_INFINITY;
            let want: Vec<f32> = xf
                .iter()
                .map(|v| {
                    m = m.max(v * 2.0);
                    m
                })
                .collect();
            let got = (&df)
                .map(|v| v * 2.0f32)
                .inclusive_scan(&ex, |a, b| a.max(b))
                .unwrap();
            assert_eq!(got.to_vec().unwrap(), want, "max scan {at}");
            // non-commutative: `last` makes the inclusive scan the identity, the exclusive one
            // a shift by one
            let got = di.inclusive_scan(&ex, |_, b| b).unwrap();
            assert_eq!(got.to_vec().unwrap(), xi, "last-scan {at}");
            let got = di.exclusive_scan(&ex, -1, |_, b| b).unwrap();
            let want: Vec<i32> = std::iter::once(-1)
                .chain(xi.iter().copied())
                .take(n)
                .collect();
            assert_eq!(got.to_vec().unwrap(), want, "last-exclusive {at}");
            // into a sub-slice of a larger vector
            let big = DeviceVec::<i32>::zeroed(&ex, n + 10).unwrap();
            di.inclusive_scan_into(&ex, &big.slice(3..3 + n).unwrap(), |a, b| a + b)
                .unwrap();
            let got = big.to_vec().unwrap();
            assert_eq!(got[3..3 + n], incl, "scan into slice {at}");
            assert!(got[..3].iter().chain(&got[3 + n..]).all(|v| *v == 0));
        }
    }
}

/// Which scan each device runs, in how many launches; the look-back scan forced on the CPU
/// backend (several tiles, waiting on predecessors from two threads) against Rust and against
/// the multi-pass scan, repeatedly on one exec (its status words are reused, tagged with a new
/// sequence number each time), and refused where progress between work-groups is not
/// guaranteed.
#[test]
fn scan_algorithm_per_device() {
    let mut rng = Rng(44);
    for d in devices() {
        let info = d.info();
        let q = Queue::new(&d).unwrap();
        let ex = Exec::new(&q);
        // By default the look-back scan runs on CUDA only (the faster scan there; the
        // multi-pass scan is faster on the CPU backend, and the only one OpenCL can run).
        assert_eq!(ex.scan_algorithm(), ScanAlgorithm::Auto);
        assert_eq!(
            ex.scan_algorithm_for(4),
            if info.backend == BackendKind::Cuda {
                ScanAlgorithm::LookBack
            } else {
                ScanAlgorithm::MultiPass
            },
            "{}",
            info.spec()
        );
        assert_eq!(ex.scan_algorithm_for(8), ScanAlgorithm::MultiPass);
        let no_progress = matches!(info.backend, BackendKind::OpenCl | BackendKind::Vulkan);
        assert_eq!(info.group_forward_progress(), !no_progress);
        let forced = ex.with_scan_algorithm(ScanAlgorithm::LookBack);
        if no_progress {
            let e = forced.unwrap_err();
            assert!(matches!(e, Error::Unsupported { .. }), "{e}");
            assert!(e.to_string().contains("look-back"), "{e}");
            continue;
        }
        let lb = small(&forced.unwrap());
        let mp = small(&ex)
            .with_scan_algorithm(ScanAlgorithm::MultiPass)
            .unwrap();
        assert_eq!(lb.scan_algorithm_for(4), ScanAlgorithm::LookBack);
        assert_eq!(lb.scan_algorithm_for(2), ScanAlgorithm::MultiPass);
        for n in [1usize, 127, 128, 129, 3000, 50_000] {
            let at = label(&lb, n);
            let xu = rng.u32s(n, u32::MAX);
            let du = DeviceVec::from_slice(&lb, &xu).unwrap();
            let mut acc = 0u32;
            let want: Vec<u32> = xu
                .iter()
                .map(|v| {
                    acc = acc.wrapping_add(*v);
                    acc
                })
                .collect();
            // Three times on one exec: the status words of earlier scans must not leak in.
            for rep in 0..3 {
                let before = q.launch_count();
                let got = du.inclusive_scan(&lb, |a, b| a + b).unwrap();
                assert_eq!(q.launch_count() - before, 1, "one launch, {at}");
                assert_eq!(
                    got.to_vec().unwrap(),
                    want,
                    "look-back u32 +, rep {rep}, {at}"
                );
            }
            let before = q.launch_count();
            let got = du.inclusive_scan(&mp, |a, b| a + b).unwrap();
            // The small staging's blocks hold `group_size` x 2 elements (64 x 2; 32 x 2 on
            // the CPU backend, whose default work-groups are 32): one block is one launch.
            let block = (mp.staging().group_size * mp.staging().items_per_thread) as usize;
            let launches = if n <= block { 1 } else { 3 };
            assert_eq!(q.launch_count() - before, launches, "multi-pass, {at}");
            assert_eq!(got.to_vec().unwrap(), want, "multi-pass u32 +, {at}");
            // A user operator that is not a built-in one (the local-memory scan of the
            // work-items' totals), non-commutative and exclusive.
            let got = du.exclusive_scan(&lb, 7, |_, b| b).unwrap();
            let shifted: Vec<u32> = std::iter::once(7)
                .chain(xu.iter().copied())
                .take(n)
                .collect();
            assert_eq!(
                got.to_vec().unwrap(),
                shifted,
                "look-back last-exclusive, {at}"
            );
            // Exclusive min from an init, a recognized built-in.
            let mut m = 1u32 << 31;
            let want_min: Vec<u32> = xu
                .iter()
                .map(|v| {
                    let o = m;
                    m = m.min(*v);
                    o
                })
                .collect();
            let got = du.exclusive_scan(&lb, 1 << 31, |a, b| b.min(a)).unwrap();
            assert_eq!(
                got.to_vec().unwrap(),
                want_min,
                "look-back exclusive min, {at}"
            );
            // In place, signed, through a map.
            let xi: Vec<i32> = xu.iter().map(|&v| v as i32).collect();
            let di = DeviceVec::from_slice(&lb, &xi).unwrap();
            di.inclusive_scan_in_place(|a, b| a.max(b)).unwrap();
            let mut m = i32::MIN;
            let want_max: Vec<i32> = xi
                .iter()
                .map(|v| {
                    m = m.max(*v);
                    m
                })
                .collect();
            assert_eq!(
                di.to_vec().unwrap(),
                want_max,
                "look-back max in place, {at}"
            );
        }
        // More tiles than the scratch held: it grows.
        let n = 70_000;
        let xs = rng.u32s(n, 1000);
        let got = DeviceVec::from_slice(&lb, &xs)
            .unwrap()
            .inclusive_scan(&lb, |a, b| a + b)
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(got[n - 1], xs.iter().sum::<u32>(), "grown scratch");
    }
}

#[test]
fn filter_partition_histogram_against_rust() {
    let mut rng = Rng(5);
    for (ex, sizes) in cases() {
        for n in sizes {
            let at = label(&ex, n);
            let x = rng.u32s(n, 100);
            let dx = DeviceVec::from_slice(&ex, &x).unwrap();
            let got = dx.filter(&ex, |v| v.lt(30u32)).unwrap();
            let want: Vec<u32> = x.iter().copied().filter(|v| *v < 30).collect();
            assert_eq!(got.to_vec().unwrap(), want, "filter {at}");
            let got = (&dx)
                .map(|v| v * 2u32)
                .filter(&ex, |v| v.gt(1000u32))
                .unwrap();
            assert!(got.is_empty(), "filter none {at}");
            let (p, k) = dx.partition(&ex, |v| (v % 3u32).eq(0u32)).unwrap();
            let (mut yes, no): (Vec<u32>, Vec<u32>) = x.iter().partition(|v| *v % 3 == 0);
            assert_eq!(k, yes.len(), "{at}");
            yes.extend(no);
            assert_eq!(p.to_vec().unwrap(), yes, "partition {at}");
            for bins in [1usize, 10, 64, 100, 5000] {
                let h = (&dx)
                    .map(move |v| v * 37u32 % 5001u32)
                    .histogram(&ex, bins)
                    .unwrap();
                let mut want = vec![0u32; bins];
                for v in &x {
                    let b = (v * 37 % 5001) as usize;
                    if b < bins {
                        want[b] += 1;
                    }
                }
                assert_eq!(h.to_vec().unwrap(), want, "histogram {bins} {at}");
            }
        }
    }
}

#[test]
fn reduce_by_key_against_rust() {
    let mut rng = Rng(6);
    for (ex, sizes) in cases() {
        for n in sizes {
            let at = label(&ex, n);
            // runs of random lengths
            let mut keys = Vec::new();
            let mut k = 0i32;
            while keys.len() < n {
                let len = (rng.next() % 9 + 1) as usize;
                k += (rng.next() % 3) as i32 + 1;
                keys.extend(std::iter::repeat_n(k, len.min(n - keys.len())));
            }
            let vals = rng.i32s(n);
            let dk = DeviceVec::from_slice(&ex, &keys).unwrap();
            let dv = DeviceVec::from_slice(&ex, &vals).unwrap();
            let (rk, rv) = reduce_by_key(&ex, &dk, &dv, |a, b| a + b).unwrap();
            let mut wk: Vec<i32> = Vec::new();
            let mut wv: Vec<i32> = Vec::new();
            for (k, v) in keys.iter().zip(&vals) {
                if wk.last() == Some(k) {
                    let l = wv.last_mut().unwrap();
                    *l = l.wrapping_add(*v);
                } else {
                    wk.push(*k);
                    wv.push(*v);
                }
            }
            assert_eq!(rk.to_vec().unwrap(), wk, "keys {at}");
            assert_eq!(rv.to_vec().unwrap(), wv, "values {at}");
            // non-commutative: the first value of each run
            let (_, first) = reduce_by_key(&ex, &dk, &dv, |a, _| a).unwrap();
            let mut wf = Vec::new();
            for i in 0..n {
                if i == 0 || keys[i] != keys[i - 1] {
                    wf.push(vals[i]);
                }
            }
            assert_eq!(first.to_vec().unwrap(), wf, "first of runs {at}");
        }
    }
}

/// The sort's stagings on every device, with the small sizes: both methods, with tiles and
/// parts small enough that the sizes cover several tiles per work-group, partial tiles and
/// several work-groups, an odd pass count (5-bit digits: 7 passes for 32-bit keys, 13 for
/// 64-bit ones; 3-bit digits: 11 and 22), a work-group size that is not a multiple of 32 and
/// keys per work-item that do not divide 32 (the general padding arithmetic); then the
/// device's default sort staging with a few sizes.
fn sort_cases() -> Vec<(Exec, Vec<usize>)> {
    let mut v = Vec::new();
    let stagings = [
        (SortMethod::Tiles, 8, 2, 64, 4),
        (SortMethod::Tiles, 5, 3, 48, 3),
        (SortMethod::Tiles, 4, 4, 32, 2),
        (SortMethod::Parts, 8, 1, 16, 4),
        (SortMethod::Parts, 3, 1, 8, 3),
    ];
    for d in devices() {
        let ex = Exec::new(&Queue::new(&d).unwrap());
        for (method, digit_bits, keys_per_thread, group_size, max_groups) in stagings {
            let st = SortStaging {
                method,
                digit_bits,
                keys_per_thread,
                group_size,
                max_groups,
            };
            v.push((ex.with_sort_staging(st).unwrap(), SIZES.to_vec()));
        }
        // The GPU defaults: 4096-key tiles, two per work-group at the largest size.
        let gpu = SortStaging {
            method: SortMethod::Tiles,
            digit_bits: 8,
            keys_per_thread: 16,
            group_size: 256,
            max_groups: 3,
        };
        v.push((ex.with_sort_staging(gpu).unwrap(), vec![3, 4097, 20_000]));
        let mut sizes = vec![0, 1, 1000];
        if d.info().backend != BackendKind::Cpu {
            sizes.push(300_001);
        }
        v.push((ex, sizes));
    }
    v
}

fn sort_label(ex: &Exec, n: usize) -> String {
    format!(
        "{} {:?}, n={n}",
        ex.device().info().spec(),
        ex.sort_staging()
    )
}

#[test]
fn radix_sort_against_rust() {
    let mut rng = Rng(7);
    for (ex, sizes) in sort_cases() {
        for n in sizes {
            let at = sort_label(&ex, n);
            let u = rng.u32s(n, u32::MAX);
            let d = DeviceVec::from_slice(&ex, &u).unwrap();
            d.sort().unwrap();
            let mut want = u.clone();
            want.sort();
            assert_eq!(d.to_vec().unwrap(), want, "u32 {at}");
            let i = rng.i32s(n);
            let got = DeviceVec::from_slice(&ex, &i).unwrap();
            got.sort().unwrap();
            let mut want = i.clone();
            want.sort();
            assert_eq!(got.to_vec().unwrap(), want, "i32 {at}");
            let mut f: Vec<f32> = (0..n).map(|_| f32::from_bits(rng.next() as u32)).collect();
            if n > 4 {
                f[0] = -0.0;
                f[1] = 0.0;
                f[2] = f32::INFINITY;
                f[3] = f32::NEG_INFINITY;
            }
            let got = DeviceVec::from_slice(&ex, &f)
                .unwrap()
                .sort()
                .unwrap()
                .to_vec()
                .unwrap();
            let mut want = f.clone();
            want.sort_by(f32::total_cmp);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "f32 {at}");
            let l: Vec<u64> = (0..n).map(|_| rng.next()).collect();
            let got = DeviceVec::from_slice(&ex, &l).unwrap().sorted(&ex).unwrap();
            let mut want = l.clone();
            want.sort();
            assert_eq!(got.to_vec().unwrap(), want, "u64 {at}");
            let s: Vec<i64> = (0..n).map(|_| rng.next() as i64).collect();
            let got = DeviceVec::from_slice(&ex, &s).unwrap();
            got.sort().unwrap();
            let mut want = s.clone();
            want.sort();
            assert_eq!(got.to_vec().unwrap(), want, "i64 {at}");
            // pairs: few distinct keys, values are the original positions: stability
            let keys = rng.u32s(n, 16);
            let vals: Vec<u32> = (0..n as u32).collect();
            let (dk, dv) = (
                DeviceVec::from_slice(&ex, &keys).unwrap(),
                DeviceVec::from_slice(&ex, &vals).unwrap(),
            );
            sort_by_key(&ex, &dk, &dv).unwrap();
            let mut want: Vec<(u32, u32)> = keys.iter().copied().zip(vals).collect();
            want.sort_by_key(|p| p.0);
            let (wk, wv): (Vec<u32>, Vec<u32>) = want.into_iter().unzip();
            assert_eq!(dk.to_vec().unwrap(), wk, "pair keys {at}");
            assert_eq!(dv.to_vec().unwrap(), wv, "pair values (stable) {at}");
            // 64-bit keys with 64-bit values (the largest pairs); many largest keys, which
            // the sort also pads partial tiles with: the padding must stay behind them.
            let keys: Vec<u64> = (0..n)
                .map(|_| match rng.next() % 4 {
                    0 => u64::MAX,
                    1 => rng.next() % 3,
                    _ => rng.next(),
                })
                .collect();
            let vals: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
            let (dk, dv) = (
                DeviceVec::from_slice(&ex, &keys).unwrap(),
                DeviceVec::from_slice(&ex, &vals).unwrap(),
            );
            sort_by_key(&ex, &dk, &dv).unwrap();
            let mut want: Vec<(u64, f64)> = keys.iter().copied().zip(vals).collect();
            want.sort_by_key(|p| p.0);
            let (wk, wv): (Vec<u64>, Vec<f64>) = want.into_iter().unzip();
            assert_eq!(dk.to_vec().unwrap(), wk, "u64 pair keys {at}");
            assert_eq!(dv.to_vec().unwrap(), wv, "f64 pair values (stable) {at}");
            // a sub-slice sorts in place and leaves the rest alone
            if n > 10 {
                let d = DeviceVec::from_slice(&ex, &u).unwrap();
                d.slice(3..n - 2).unwrap().sort().unwrap();
                let mut want = u.clone();
                want[3..n - 2].sort();
                assert_eq!(d.to_vec().unwrap(), want, "sub-slice {at}");
            }
            // The sorts above reused the temporaries of the ones before (larger and smaller,
            // with stale contents); from here on they start afresh once.
            if n == 257 {
                ex.release_scratch();
            }
        }
    }
}

#[test]
fn actions_chain() {
    let mut rng = Rng(8);
    for (ex, _) in cases() {
        for n in [0usize, 1, 1000] {
            let x = rng.i32s(n);
            let v = DeviceVec::from_slice(&ex, &x).unwrap();
            let before = ex.queue().launch_count();
            v.transform(|a| a / 1024i32)
                .unwrap()
                .transform(|a| a * 2i32)
                .unwrap();
            assert_eq!(ex.queue().launch_count() - before, 2 * (n > 0) as u64);
            let mut want: Vec<i32> = x.iter().map(|a| a / 1024 * 2).collect();
            assert_eq!(v.to_vec().unwrap(), want);
            v.sort()
                .unwrap()
                .inclusive_scan_in_place(|a, b| a + b)
                .unwrap();
            want.sort();
            let mut acc = 0i32;
            for w in want.iter_mut() {
                acc = acc.wrapping_add(*w);
                *w = acc;
            }
            assert_eq!(v.to_vec().unwrap(), want);
            v.exclusive_scan_in_place(1, |a, b| a.max(b)).unwrap();
            let mut m = 1i32;
            for w in want.iter_mut() {
                let o = m;
                m = m.max(*w);
                *w = o;
            }
            assert_eq!(v.to_vec().unwrap(), want);
            v.fill(9).unwrap().transform(|a| a + 1i32).unwrap();
            assert_eq!(v.to_vec().unwrap(), vec![10; n]);
        }
    }
}

#[test]
fn bad_input_gives_typed_errors() {
    let devs = devices();
    let cpu = Exec::new(&Queue::new(&devs[0]).unwrap());
    let x = DeviceVec::from_slice(&cpu, &[1.0f32, 2.0, 3.0]).unwrap();
    let y = DeviceVec::from_slice(&cpu, &[1.0f32, 2.0]).unwrap();
    let msg = |e: Error| e.to_string();
    let e = zip(&x, &y).map(|(a, b)| a + b).collect(&cpu).unwrap_err();
    assert!(matches!(e, Error::BufferRange { op: "zip", .. }), "{e}");
    assert!(msg(e).contains("different lengths [3, 2]"));
    let e = x.inclusive_scan_into(&cpu, &y, |a, b| a + b).unwrap_err();
    assert!(
        msg(e).contains("scan: the output has 2 elements but the input has 3"),
        "scan"
    );
    let e = (&x).map(|a| a).collect_into(&cpu, &y).unwrap_err();
    assert!(msg(e).contains("the destination has 2 elements but the view has 3"));
    let e = x.slice(2..5).unwrap_err();
    assert!(msg(e).contains("range 2..5 does not fit a vector of 3 elements"));
    let e = (&x).subrange(1..4).sum::<f32>(&cpu).unwrap_err();
    assert!(msg(e).contains("subrange: range 1..4 does not fit a view of 3 elements"));
    let e = (&x).strided(0).collect(&cpu).unwrap_err();
    assert!(msg(e).contains("a step of 0"));
    let e = x.slice(1..).unwrap().into_buffer().unwrap_err();
    assert!(msg(e).contains("not a whole buffer"));
    // Sizes at the overflow edges: a view of `usize::MAX` elements, and `u32::MAX` elements
    // in work-groups of 3 elements per work-item, whose last index would pass 2^32 - 1.
    let e = counting(0, usize::MAX).for_each(&cpu, |_| {}).unwrap_err();
    assert!(
        msg(e).contains("18446744073709551615 elements; pattern indices are u32"),
        "usize::MAX"
    );
    let threes = cpu
        .with_staging(Staging {
            items_per_thread: 3,
            ..cpu.staging()
        })
        .unwrap();
    let e = counting(0, u32::MAX as usize)
        .for_each(&threes, |_| {})
        .unwrap_err();
    let gs = cpu.staging().group_size;
    assert!(
        msg(e).contains(&format!(
            "map: 4294967295 elements in work-groups of {gs} work-items with 3 elements each: the indices would pass 2^32 - 1"
        )),
        "u32::MAX"
    );
    // The output overlaps what the view reads at other positions.
    let e = (&x).rev().collect_into(&cpu, &x).unwrap_err();
    assert!(msg(e).contains("overlaps elements 0..3"), "alias");
    let e = x.inclusive_scan_into(&cpu, &x, |a, b| a + b);
    assert!(e.is_ok(), "an in-place scan is allowed");
    let keys = DeviceVec::from_slice(&cpu, &[3u32, 1, 2]).unwrap();
    let vals = DeviceVec::from_slice(&cpu, &[1u32, 2]).unwrap();
    let e = sort_by_key(&cpu, &keys, &vals).unwrap_err();
    assert!(msg(e).contains("3 keys but 2 values"));
    let e = sort_by_key(&cpu, &keys, &keys).unwrap_err();
    assert!(msg(e).contains("share memory"));
    let e = reduce_by_key(&cpu, &keys, &vals, |a, b| a + b).unwrap_err();
    assert!(msg(e).contains("3 keys but 2 values"));
    let e = cpu.with_items_per_thread(0).unwrap_err();
    assert!(matches!(e, Error::InvalidWorkSize { .. }));
    assert!(msg(e).contains("items per thread 0"));
    let e = cpu
        .with_staging(Staging {
            group_size: 1 << 20,
            ..cpu.staging()
        })
        .unwrap_err();
    assert!(msg(e).contains("staged work-group size 1048576"));
    // Vectors and buffers of another device.
    if let Some(other) = devs.get(1) {
        let oex = Exec::new(&Queue::new(other).unwrap());
        let buf = Buffer::from_slice(oex.queue(), &[1u32, 2]).unwrap();
        let e = DeviceVec::from_buffer(&cpu, buf).unwrap_err();
        assert!(matches!(e, Error::WrongDevice { .. }), "{e}");
        assert!(msg(e).contains("DeviceVec::from_buffer: the buffer lives on"));
        let ov = DeviceVec::from_slice(&oex, &[1.0f32, 2.0, 3.0]).unwrap();
        let e = zip(&x, &ov).map(|(a, b)| a + b).collect(&cpu).unwrap_err();
        assert!(matches!(e, Error::WrongDevice { .. }), "{e}");
        let e = (&x).map(|a| a).collect_into(&cpu, &ov).unwrap_err();
        assert!(msg(e).contains("collect: the buffer lives on"), "collect");
    }
    // A map closure that misuses the builder is an invalid kernel, not a panic.
    let e = (&x)
        .map(|a| {
            let _ = global_id(7);
            a
        })
        .collect(&cpu)
        .unwrap_err();
    assert!(matches!(e, Error::InvalidKernel(_)), "{e}");
}

/// A pattern call finds its kernel without recording it when it was built before for the same
/// view types, staging and parameter sharing (the fast path of the host overhead, issue 33):
/// calls in a loop with other captured values, other data, sizes, offsets, aliasing and equal
/// or unequal launch values each give their own, right results. (Builds with debug assertions,
/// as the tests are, also record every kernel and check that the kernel and arguments found
/// are the recorded ones.)
#[test]
fn repeated_calls_find_the_right_kernel() {
    for d in devices() {
        let ex = Exec::new(&Queue::new(&d).unwrap()).untuned();
        let x = DeviceVec::from_slice(&ex, &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let y = DeviceVec::from_slice(&ex, &[10.0f32, 20.0, 30.0, 40.0]).unwrap();
        // A captured value is a constant of the kernel: each value its own kernel and result.
        for a in [2.0f32, 3.0, 2.0, -1.0] {
            let z = (&x).map(move |v| v * a).collect(&ex).unwrap();
            assert_eq!(
                z.to_vec().unwrap(),
                [a, 2.0 * a, 3.0 * a, 4.0 * a],
                "{a} on {d:?}"
            );
            let s: f32 = (&x).map(move |v| v * a).sum(&ex).unwrap();
            assert_eq!(s, 10.0 * a, "{a} on {d:?}");
        }
        // The same closure (capturing nothing) on other vectors, sub-slices and outputs.
        let z = DeviceVec::<f32>::zeroed(&ex, 4).unwrap();
        for (i, (p, q)) in [(&x, &y), (&y, &x), (&x, &x), (&y, &y)]
            .into_iter()
            .enumerate()
        {
            zip(p, q)
                .map(|(a, b)| a * 2.0 + b)
                .collect_into(&ex, &z)
                .unwrap();
            let (p, q) = (p.to_vec().unwrap(), q.to_vec().unwrap());
            let want: Vec<f32> = p.iter().zip(&q).map(|(a, b)| a * 2.0 + b).collect();
            assert_eq!(z.to_vec().unwrap(), want, "pair {i} on {d:?}");
        }
        for (lo, hi) in [(0, 4), (1, 3), (2, 4), (3, 4)] {
            let (xs, ys) = (x.slice(lo..hi).unwrap(), y.slice(lo..hi).unwrap());
            let s: f32 = zip(&xs, &ys).map(|(a, b)| a - b).sum(&ex).unwrap();
            let want: f32 = (lo..hi)
                .map(|i| (i + 1) as f32 - 10.0 * (i + 1) as f32)
                .sum();
            assert_eq!(s, want, "{lo}..{hi} on {d:?}");
            let m = (&xs).map(|v| v + 1.0).max(&ex).unwrap();
            assert_eq!(m, Some(hi as f32 + 1.0), "{lo}..{hi} on {d:?}");
        }
        // In place (the output is the input: read-write) and not, with the same types.
        let w = DeviceVec::from_slice(&ex, &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let v = DeviceVec::<f32>::zeroed(&ex, 4).unwrap();
        for _ in 0..2 {
            (&w).map(|a| a + 1.0).collect_into(&ex, &v).unwrap();
            (&w).map(|a| a + 1.0).collect_into(&ex, &w).unwrap();
        }
        assert_eq!(v.to_vec().unwrap(), [3.0, 4.0, 5.0, 6.0], "{d:?}");
        assert_eq!(w.to_vec().unwrap(), [3.0, 4.0, 5.0, 6.0], "{d:?}");
        // Equal launch values of one name are one parameter, unequal ones two.
        for (s0, s1) in [(3, 3), (3, 5), (7, 7), (0, 1)] {
            let c = zip(counting(s0, 3), counting(s1, 3)).map(|(a, b)| a * 100u32 + b);
            let got = c.collect::<u32>(&ex).unwrap().to_vec().unwrap();
            let want: Vec<u32> = (0..3).map(|i| (s0 + i) * 100 + s1 + i).collect();
            assert_eq!(got, want, "{s0}, {s1} on {d:?}");
        }
        // A user reduction with a captured value, then without.
        for k in [1u32, 5, 2, 7] {
            let xs = DeviceVec::from_slice(&ex, &[1u32, 2, 3]).unwrap();
            let r = xs.reduce(&ex, 0, move |a, b| a.max(b).max(k)).unwrap();
            assert_eq!(r, k.max(3), "{k} on {d:?}");
            let r = xs.reduce(&ex, k, |a, b| a + b).unwrap();
            assert_eq!(r, 6 + k, "{k} on {d:?}");
        }
    }
}

/// The look-back scan on the compiled CPU backend (`cpu`, whose kernel has each work-item
/// read its own elements twice: for its total, then for its results) against the
/// interpreter (`interp`, which runs the GPUs' kernel with the tile in local memory), bit for
/// bit, with the stagings of the bench rows (`k` elements per work-item, work-groups of 32
/// and 512; and `k` of 1 and 2, unrolled by nothing, by work-groups of 8 and 12): sizes of 0 and 1 element, less than one tile, exactly one, and several with a
/// partial last tile; `i32`, `u32` and `f32` (floats whose sums round, so a change in the
/// grouping of the additions shows); built-in operators (`+`, `max`) and users' (a wrapping
/// product, the non-commutative `last`, `+` on floats, an affine map before the scan),
/// inclusive and exclusive; and scans chained on one exec (each takes a new sequence tag).
#[test]
fn lookback_scan_cpu_against_interp() {
    let exec = |spec: &str, gs: u32, k: u32| {
        let d = Device::from_spec(spec).unwrap();
        let ex = Exec::new(&Queue::new(&d).unwrap());
        let ex = ex
            .with_staging(Staging {
                group_size: gs,
                scan_items_per_thread: k,
                ..ex.staging()
            })
            .unwrap()
            .with_scan_algorithm(ScanAlgorithm::LookBack)
            .unwrap();
        assert_eq!(ex.scan_algorithm_for(4), ScanAlgorithm::LookBack, "{spec}");
        ex
    };
    let mut rng = Rng(31);
    for (gs, k) in [
        (32, 32),
        (32, 4),
        (32, 8),
        (32, 12),
        (512, 8),
        (512, 16),
        (8, 1),
        (12, 2),
    ] {
        let (cpu, interp) = (exec("cpu", gs, k), exec("interp", gs, k));
        let tile = (gs * k) as usize;
        let sizes = [0, 1, 2, k as usize + 1, tile - 3, tile, 3 * tile + 5];
        for n in sizes {
            let at = format!("group {gs} k {k} n {n}");
            let xu = rng.u32s(n, u32::MAX);
            let xi = rng.i32s(n);
            // Floats of 24 significant bits and various exponents: their sums round.
            let xf: Vec<f32> = rng
                .u32s(n, 1 << 24)
                .iter()
                .map(|v| *v as f32 / 3.0e3 - 2.0e3)
                .collect();
            let run = |ex: &Exec| {
                let du = DeviceVec::from_slice(ex, &xu).unwrap();
                let di = DeviceVec::from_slice(ex, &xi).unwrap();
                let df = DeviceVec::from_slice(ex, &xf).unwrap();
                let u = vec![
                    du.inclusive_scan(ex, |a, b| a + b).unwrap(),
                    du.exclusive_scan(ex, 7, |a, b| a + b).unwrap(),
                    du.inclusive_scan(ex, |a, b| a.max(b)).unwrap(),
                    du.inclusive_scan(ex, |a, b| a * b).unwrap(),
                    du.exclusive_scan(ex, 3, |a, b| a * b).unwrap(),
                    du.inclusive_scan(ex, |_, b| b).unwrap(),
                    du.exclusive_scan(ex, 9, |_, b| b).unwrap(),
                    (&du)
                        .map(|v| v * 3u32 + 1u32)
                        .inclusive_scan(ex, |a, b| a + b)
                        .unwrap(),
                ];
                // Chained: the scan of a scan's result, on the same exec.
                let twice = u[0].inclusive_scan(ex, |a, b| a + b).unwrap();
                let i = [
                    di.inclusive_scan(ex, |a, b| a + b).unwrap(),
                    di.exclusive_scan(ex, -5, |a, b| a + b).unwrap(),
                    di.inclusive_scan(ex, |a, b| a.min(b)).unwrap(),
                    di.inclusive_scan(ex, |a, b| a ^ b).unwrap(),
                ];
                let f = vec![
                    df.inclusive_scan(ex, |a, b| a + b).unwrap(),
                    df.exclusive_scan(ex, 0.25, |a, b| a + b).unwrap(),
                    df.inclusive_scan(ex, |a, b| a.max(b)).unwrap(),
                    df.inclusive_scan(ex, |_, b| b).unwrap(),
                    (&df)
                        .map(|v| v * 1.5f32)
                        .inclusive_scan(ex, |a, b| a + b)
                        .unwrap(),
                ];
                let host = |v: Vec<DeviceVec<u32>>| -> Vec<Vec<u32>> {
                    v.iter().map(|d| d.to_vec().unwrap()).collect()
                };
                let bits = |v: Vec<DeviceVec<f32>>| -> Vec<Vec<u32>> {
                    v.iter()
                        .map(|d| d.to_vec().unwrap().iter().map(|x| x.to_bits()).collect())
                        .collect()
                };
                let ints: Vec<Vec<i32>> = i.iter().map(|d| d.to_vec().unwrap()).collect();
                (host(u), host(vec![twice]), ints, bits(f))
            };
            let (c, i) = (run(&cpu), run(&interp));
            assert_eq!(c.0, i.0, "u32 {at}");
            assert_eq!(c.1, i.1, "chained u32 {at}");
            assert_eq!(c.2, i.2, "i32 {at}");
            assert_eq!(c.3, i.3, "f32 bits {at}");
            // And against Rust, for the sums of u32.
            let mut acc = 0u32;
            let want: Vec<u32> = xu
                .iter()
                .map(|v| {
                    acc = acc.wrapping_add(*v);
                    acc
                })
                .collect();
            assert_eq!(c.0[0], want, "u32 + {at}");
        }
    }
}

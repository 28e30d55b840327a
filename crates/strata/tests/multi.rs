//! Several devices in one process (`strata::multi`): the partition of work by weights, copies
//! between every pair of devices, events waited for across devices, and the patterns over a
//! set (collect, reduce, sum, scans, sort) against the same pattern on one device, on the set
//! `cpu` + `opencl:0` + `interp` (OpenCL required when `STRATA_REQUIRE` contains `opencl`).
//! Integers must match bit for bit; float sums within a stated bound.

use strata::multi::{self, DeviceSet, DeviceSetError, Part, SplitVec};
use strata::patterns::*;
use strata::prelude::*;
use strata::Error;

fn required() -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "opencl"))
}

/// `cpu`, `opencl:0` and `vulkan:0` (each required when `STRATA_REQUIRE` names its backend)
/// and `interp`.
fn specs() -> Vec<&'static str> {
    let mut s = vec!["cpu"];
    match Device::from_spec("opencl:0") {
        Ok(_) => s.push("opencl:0"),
        Err(e) => {
            assert!(!required(), "STRATA_REQUIRE names opencl, but: {e}");
            eprintln!("no OpenCL device, the set is without opencl:0: {e}");
        }
    }
    match Device::from_spec("vulkan:0") {
        Ok(_) => s.push("vulkan:0"),
        Err(e) => {
            let vulkan_required = std::env::var("STRATA_REQUIRE")
                .is_ok_and(|v| v.split(',').any(|b| b.trim() == "vulkan"));
            assert!(!vulkan_required, "STRATA_REQUIRE names vulkan, but: {e}");
            eprintln!("no Vulkan device, the set is without vulkan:0: {e}");
        }
    }
    s.push("interp");
    s
}

fn set() -> DeviceSet {
    DeviceSet::from_specs(&specs()).unwrap()
}

/// The sets the patterns are checked on: equal weights, uneven weights, and a device of weight
/// 0 (an empty part in the middle).
fn sets() -> Vec<DeviceSet> {
    let s = set();
    let n = s.len();
    let uneven: Vec<f64> = (0..n).map(|i| (i + 1) as f64 * 1.5).collect();
    let mut zero = vec![1.0; n];
    zero[1] = 0.0;
    vec![
        s.clone(),
        s.with_weights(&uneven).unwrap(),
        s.with_weights(&zero).unwrap(),
    ]
}

const SIZES: &[usize] = &[0, 1, 2, 3, 1000, 10_007];

/// Deterministic pseudo-random `u32`s.
fn data(n: usize, seed: u32) -> Vec<u32> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(12345);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        })
        .collect()
}

#[test]
fn partition_follows_the_weights() {
    let s = set();
    let n = s.len();
    for len in [0usize, 1, 2, 7, 100, 1001] {
        let r = s.partition(len);
        assert_eq!(r.len(), n);
        assert_eq!(r[0].start, 0);
        assert_eq!(r[n - 1].end, len);
        for w in r.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        // equal weights: lengths differ by at most one
        let lens: Vec<usize> = r.iter().map(|r| r.len()).collect();
        assert!(
            lens.iter().max().unwrap() - lens.iter().min().unwrap() <= 1,
            "{lens:?}"
        );
    }
    let mut w = vec![0.0; n];
    w[0] = 3.0;
    w[n - 1] = 1.0;
    let r = s.with_weights(&w).unwrap().partition(1000);
    assert_eq!(r[0], 0..750);
    assert_eq!(r[n - 1], 750..1000);
    for mid in &r[1..n - 1] {
        assert!(mid.is_empty());
    }
}

#[test]
fn bad_sets_and_weights_are_typed_errors() {
    let e = DeviceSet::new(&[]).unwrap_err();
    assert!(e.layer::<DeviceSetError>().is_some(), "{e}");
    assert!(e.to_string().contains("no devices given"), "{e}");
    let s = set();
    let e = s.with_weights(&[1.0]).unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("1 weights for {} devices", s.len())),
        "{e}"
    );
    let mut w = vec![1.0; s.len()];
    w[0] = -1.0;
    let e = s.with_weights(&w).unwrap_err();
    assert!(e.to_string().contains("weight 0 is -1"), "{e}");
    w[0] = f64::NAN;
    assert!(s.with_weights(&w).unwrap_err().to_string().contains("NaN"));
    let e = s.with_weights(&vec![0.0; s.len()]).unwrap_err();
    assert!(e.to_string().contains("sum to 0"), "{e}");
    let e = DeviceSet::from_specs(&["cpu", "nonsense"]).unwrap_err();
    assert!(matches!(e, Error::InvalidDeviceSpec(_)), "{e}");
}

#[test]
fn throughput_weights_cover_the_work() {
    let s = set();
    let kernel = Kernel::build("busy", |k| {
        let out = k.write::<u32>("out");
        let i = global_id(0);
        if_(i.lt(out.len()), || out.set(i, i * 3u32));
    })
    .unwrap();
    let t = s
        .with_throughput(4096, |ex, r| {
            let b = Buffer::<u32>::new(ex.queue(), r.len())?;
            kernel.launch(ex.queue(), NdRange::new(r.len()), args![&b])?;
            Ok(())
        })
        .unwrap();
    let w = t.weights();
    assert!(w.iter().all(|w| w.is_finite() && *w > 0.0), "{w:?}");
    let r = t.partition(100_000);
    assert_eq!(r.last().unwrap().end, 100_000);
}

#[test]
fn copies_between_every_pair_of_devices() {
    let s = set();
    let n = 1000;
    let src_data = data(n, 7);
    for a in 0..s.len() {
        for b in 0..s.len() {
            let (qa, qb) = (s.queue(a), s.queue(b));
            let src = Buffer::from_slice(qa, &src_data).unwrap();
            let dst = Buffer::<u32>::new(qb, n + 10).unwrap();
            qb.fill(&dst, 9u32, ..).unwrap();
            multi::copy(qa, &src, 100..900, qb, &dst, 5..).unwrap();
            let got = qb.read(&dst).unwrap();
            assert_eq!(&got[5..805], &src_data[100..900], "{a} -> {b}");
            assert!(got[..5].iter().chain(&got[805..]).all(|&x| x == 9));
        }
    }
    // bad inputs
    let (q0, q1) = (s.queue(0), s.queue(1));
    let src = Buffer::<u32>::new(q0, 10).unwrap();
    let dst = Buffer::<u32>::new(q1, 10).unwrap();
    let e = multi::copy(q0, &src, 5..11, q1, &dst, 0..).unwrap_err();
    assert!(matches!(e, Error::BufferRange { .. }), "{e}");
    assert!(e.to_string().contains("source range 5..11"), "{e}");
    let e = multi::copy(q0, &src, 0..3, q1, &dst, 8..).unwrap_err();
    assert!(e.to_string().contains("destination range 8..11"), "{e}");
    let e = multi::copy(q1, &src, 0..3, q1, &dst, 0..).unwrap_err();
    assert!(matches!(e, Error::WrongDevice { .. }), "{e}");
}

/// A kernel on one device, a copy to another that waits for it, and a kernel there that waits
/// for the copy: the events of one device's queue in the wait lists of another's. The first
/// kernel loops long enough (on the interpreter) that a copy not waiting would read zeros.
#[test]
fn events_wait_across_devices() {
    let s = set();
    let n = 4096usize;
    let slow = Kernel::build("slow_fill", |k| {
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let acc = var(0u32);
        for_range(0u32, 200u32, |j| acc.set(acc.get() + j));
        if_(i.lt(out.len()), || out.set(i, i + acc.get()));
    })
    .unwrap();
    let double = Kernel::build("double", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        if_(i.lt(x.len()), || x.set(i, x.at(i) * 2u32));
    })
    .unwrap();
    let acc: u32 = (0..200).sum();
    for a in 0..s.len() {
        for b in 0..s.len() {
            if a == b {
                continue;
            }
            let (qa, qb) = (s.queue(a), s.queue(b));
            let src = Buffer::<u32>::new(qa, n).unwrap();
            let dst = Buffer::<u32>::new(qb, n).unwrap();
            let run = slow.enqueue(qa, NdRange::new(n), args![&src], &[]).unwrap();
            // The copy is issued on qa after the launch, and also names its event.
            let copied =
                multi::enqueue_copy(qa, &src, 0..n, qb, &dst, 0.., &[run.event()]).unwrap();
            let doubled = double
                .enqueue(qb, NdRange::new(n), args![&dst], &[&copied])
                .unwrap();
            doubled.wait().unwrap();
            let got = qb.read(&dst).unwrap();
            let want: Vec<u32> = (0..n as u32).map(|i| (i + acc) * 2).collect();
            assert_eq!(got, want, "{a} -> {b}");
            // a launch on b waiting directly for an event of a
            let run = slow.enqueue(qa, NdRange::new(n), args![&src], &[]).unwrap();
            let marker = Buffer::<u32>::new(qb, 1).unwrap();
            let after = double
                .enqueue(qb, NdRange::new(1), args![&marker], &[run.event()])
                .unwrap();
            after.wait().unwrap();
            assert!(run.event().is_complete(), "{a} -> {b}");
        }
    }
    s.finish().unwrap();
}

#[test]
fn collect_over_a_set_equals_one_device() {
    let one = Exec::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap());
    for s in sets() {
        for &n in SIZES {
            let x = data(n, n as u32);
            let xs = SplitVec::from_slice(&s, &x).unwrap();
            assert_eq!(xs.to_vec().unwrap(), x);
            let y = s
                .collect(n, |p: &Part| {
                    zip(xs.part(p.index), counting(p.start() as u32, p.len()))
                        .map(|(v, i)| (v ^ i) * 3u32 + 1u32)
                })
                .unwrap();
            let xv = DeviceVec::from_slice(&one, &x).unwrap();
            let want = zip(&xv, counting(0, n))
                .map(|(v, i)| (v ^ i) * 3u32 + 1u32)
                .collect(&one)
                .unwrap()
                .to_vec()
                .unwrap();
            assert_eq!(y.to_vec().unwrap(), want, "n = {n}, {s:?}");
            assert_eq!(y.ranges(), s.partition(n).as_slice());
        }
    }
}

#[test]
fn reductions_over_a_set_equal_one_device() {
    let one = Exec::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap());
    for s in sets() {
        for &n in SIZES {
            let x = data(n, 3 + n as u32);
            let xs = SplitVec::from_slice(&s, &x).unwrap();
            let xv = DeviceVec::from_slice(&one, &x).unwrap();
            // wrapping sum
            let got: u32 = s.sum(n, |p: &Part| xs.part(p.index)).unwrap();
            assert_eq!(got, xv.sum(&one).unwrap(), "sum n = {n}");
            // a non-commutative associative operator: (a, b) -> a * 3 + b fails associativity,
            // so use the last-non-zero-wins composition instead: op(a, b) = b if b != 0 else a
            let op = |a: Expr<u32>, b: Expr<u32>| select(b.ne(0u32), b, a);
            let masked = |v: Expr<u32>| select((v & 7u32).eq(0u32), v, lit(0u32));
            let got = s
                .reduce(n, |p: &Part| xs.part(p.index).map(masked), 5u32, op)
                .unwrap();
            let want = (&xv).map(masked).reduce(&one, 5u32, op).unwrap();
            assert_eq!(got, want, "reduce n = {n}");
            let host = x
                .iter()
                .map(|&v| if v & 7 == 0 { v } else { 0 })
                .fold(5u32, |a, b| if b != 0 { b } else { a });
            assert_eq!(got, host);
            // max
            let got = s
                .reduce(n, |p: &Part| xs.part(p.index), 0u32, |a, b| a.max(b))
                .unwrap();
            assert_eq!(got, x.iter().copied().max().unwrap_or(0));
            // float sum: the parts' sums are combined in another association order than one
            // device's, so the bound is the rule's: within gamma(n) * sum |x|.
            let f: Vec<f32> = x.iter().map(|&v| (v % 2001) as f32 / 7.0 - 100.0).collect();
            let fs = SplitVec::from_slice(&s, &f).unwrap();
            let got: f32 = s.sum(n, |p: &Part| fs.part(p.index)).unwrap();
            let exact: f64 = f.iter().map(|&v| v as f64).sum();
            let abs: f64 = f.iter().map(|&v| (v as f64).abs()).sum();
            let gamma = n as f64 * f32::EPSILON as f64 / 2.0;
            assert!(
                (got as f64 - exact).abs() <= gamma * abs * 1.01 + 1e-30,
                "float sum n = {n}: {got} vs {exact}"
            );
        }
    }
}

#[test]
fn scans_over_a_set_equal_one_device() {
    let one = Exec::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap());
    for s in sets() {
        for &n in SIZES {
            let x: Vec<u32> = data(n, 11 + n as u32).iter().map(|v| v % 1000).collect();
            let xs = SplitVec::from_slice(&s, &x).unwrap();
            let xv = DeviceVec::from_slice(&one, &x).unwrap();
            let add = |a: Expr<u32>, b: Expr<u32>| a + b;
            let got = s
                .inclusive_scan(n, |p: &Part| xs.part(p.index), add)
                .unwrap();
            let want = xv.inclusive_scan(&one, add).unwrap().to_vec().unwrap();
            assert_eq!(got.to_vec().unwrap(), want, "inclusive n = {n}");
            let got = s
                .exclusive_scan(n, |p: &Part| xs.part(p.index), 17u32, add)
                .unwrap();
            let want = xv
                .exclusive_scan(&one, 17u32, add)
                .unwrap()
                .to_vec()
                .unwrap();
            assert_eq!(got.to_vec().unwrap(), want, "exclusive n = {n}");
            // an order-sensitive operator (last non-zero wins) over a mapped view
            let op = |a: Expr<u32>, b: Expr<u32>| select(b.ne(0u32), b, a);
            let m = |v: Expr<u32>| select(v.lt(100u32), v, lit(0u32));
            let got = s
                .inclusive_scan(n, |p: &Part| xs.part(p.index).map(m), op)
                .unwrap();
            let want = (&xv).map(m).inclusive_scan(&one, op).unwrap();
            assert_eq!(got.to_vec().unwrap(), want.to_vec().unwrap(), "n = {n}");
            let got = s
                .exclusive_scan(n, |p: &Part| xs.part(p.index).map(m), 9u32, op)
                .unwrap();
            let want = (&xv).map(m).exclusive_scan(&one, 9u32, op).unwrap();
            assert_eq!(got.to_vec().unwrap(), want.to_vec().unwrap(), "n = {n}");
        }
    }
}

#[test]
fn sort_over_a_set_equals_one_device() {
    let one = Exec::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap());
    for s in sets() {
        for &n in SIZES {
            let x = data(n, 5 + n as u32);
            let xs = SplitVec::from_slice(&s, &x).unwrap();
            let got = s.sorted(n, |p: &Part| xs.part(p.index)).unwrap();
            let mut want = x.clone();
            want.sort();
            assert_eq!(got.to_vec().unwrap(), want, "u32 n = {n}");
            let f: Vec<f32> = x
                .iter()
                .map(|&v| match v % 50 {
                    0 => -0.0,
                    1 => 0.0,
                    2 => f32::INFINITY,
                    3 => f32::NEG_INFINITY,
                    _ => (v as i32) as f32 / 1e6,
                })
                .collect();
            let fs = SplitVec::from_slice(&s, &f).unwrap();
            let got = s.sorted(n, |p: &Part| fs.part(p.index)).unwrap();
            let fv = DeviceVec::from_slice(&one, &f).unwrap();
            let want = fv.sorted(&one).unwrap().to_vec().unwrap();
            let bits = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(got.to_vec().unwrap()), bits(want), "f32 n = {n}");
            let i: Vec<i64> = x.iter().map(|&v| (v as i64 - (1 << 31)) * 3).collect();
            let is = SplitVec::from_slice(&s, &i).unwrap();
            let got = s.sorted(n, |p: &Part| is.part(p.index)).unwrap();
            let mut want = i.clone();
            want.sort();
            assert_eq!(got.to_vec().unwrap(), want, "i64 n = {n}");
        }
    }
}

#[test]
fn a_view_of_the_wrong_length_is_a_typed_error() {
    let s = set();
    let x = SplitVec::from_slice(&s, &data(100, 1)).unwrap();
    // a vector split by other weights does not fit this set's parts
    let mut w = vec![1.0; s.len()];
    w[0] = 5.0;
    let other = s.with_weights(&w).unwrap();
    let e = other
        .collect(100, |p: &Part| x.part(p.index).map(|v| v + 1u32))
        .unwrap_err();
    assert!(
        matches!(e.layer(), Some(DeviceSetError { op: "collect", .. })),
        "{e}"
    );
    assert!(e.to_string().contains("the view for part 0 has"), "{e}");
    let e = s.sum(99, |p: &Part| x.part(p.index)).unwrap_err();
    assert!(
        e.to_string().contains("device set: sum: the view for part"),
        "{e}"
    );
}

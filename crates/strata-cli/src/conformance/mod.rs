//! The conformance suite: one list of cases, written once, run on every backend present (from
//! `cargo test` and from `strata check --device SPEC`).
//!
//! Each case builds its kernels, runs them on the given queue's device and compares the results
//! with values computed on the host in plain Rust. Integer results must match exactly; float
//! results within the tolerance the case states (the CPU backend is exact for `+ - * /` and
//! `sqrt`, GPU math libraries are allowed a few ULP on transcendental functions).

use std::panic::{catch_unwind, AssertUnwindSafe};
use strata::builder::Value;
use strata::prelude::*;

mod atomics;
mod builtins;
mod casts;
mod checked;
mod collectives;
mod control;
mod convert;
mod floats;
mod folded;
mod half;
mod ids;
mod ints;
mod memory;
mod ordering;
mod pitched;
mod queue_ops;
mod random;
pub mod structs;
mod stubs;
mod subgroups;
mod vectors;

/// One conformance case.
pub struct Case {
    /// Unique name, `area/feature` (e.g. `control/nested_break`).
    pub name: &'static str,
    /// Runs the case on a queue; `Err` explains the first mismatch.
    pub run: fn(&Queue) -> Result<(), String>,
}

/// The outcome of running the suite.
#[derive(Debug, Default)]
pub struct Report {
    /// Names of the cases that passed.
    pub passed: Vec<&'static str>,
    /// Names and messages of the cases that failed.
    pub failed: Vec<(&'static str, String)>,
    /// Names of the cases the device cannot run, with what it lacks (`f16`, `f64`, 64-bit
    /// atomics); neither passed nor failed.
    pub unsupported: Vec<(&'static str, String)>,
}

impl Report {
    /// `N passed, M failed`, and `, K unsupported (f16: 5)` when the device lacks something
    /// a case needs (the count per missing feature).
    pub fn summary(&self) -> String {
        let mut s = format!("{} passed, {} failed", self.passed.len(), self.failed.len());
        if !self.unsupported.is_empty() {
            let mut kinds: Vec<(&str, usize)> = Vec::new();
            for (_, what) in &self.unsupported {
                match kinds.iter_mut().find(|(k, _)| k == what) {
                    Some((_, n)) => *n += 1,
                    None => kinds.push((what, 1)),
                }
            }
            let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k}: {n}")).collect();
            s.push_str(&format!(
                ", {} unsupported by the device ({})",
                self.unsupported.len(),
                kinds.join(", ")
            ));
        }
        s
    }
}

/// What one case gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The results were right.
    Passed,
    /// The first mismatch or error.
    Failed(String),
    /// The device lacks what the case needs (`f16`, `f64`, `64-bit atomics`); the case
    /// checked at most that the lack is reported as a typed error.
    Unsupported(String),
}

thread_local! {
    /// What the running case found the device lacks ([`unsupported`]).
    static LACKS: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    /// The last typed [`strata::Error::Unsupported`] that [`e`] turned into a case's error
    /// string: that string and the error's reason.
    static TYPED_UNSUPPORTED: std::cell::RefCell<Option<(String, String)>> =
        const { std::cell::RefCell::new(None) };
}

/// Marks the running case as one the device cannot run, for lack of `what`; the case then
/// returns `Ok(())` without checking results and is reported as unsupported.
pub(crate) fn unsupported(what: &str) {
    LACKS.with(|l| *l.borrow_mut() = Some(what.to_string()));
}

/// Every case, in a stable order.
pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    v.extend(stubs::cases());
    v.extend(ids::cases());
    v.extend(ints::cases());
    v.push(case("int/hadd_after_mul_hi", ints::hadd_after_mul_hi));
    v.extend(floats::cases());
    v.extend(folded::cases());
    v.extend(half::cases());
    v.extend(builtins::cases());
    v.extend(casts::cases());
    v.extend(convert::cases());
    v.extend(vectors::cases());
    v.extend(control::cases());
    v.extend(memory::cases());
    v.extend(atomics::cases());
    v.extend(ordering::cases());
    v.extend(collectives::cases());
    v.extend(subgroups::cases());
    v.extend(queue_ops::cases());
    v.extend(pitched::cases());
    v.extend(random::cases());
    v.extend(structs::cases());
    v.extend(checked::cases());
    v.sort_by_key(|c| c.name);
    v
}

/// The cases whose name contains `filter` (every case without one), in [`cases`]' order.
pub fn matching(filter: Option<&str>) -> Vec<Case> {
    cases()
        .into_iter()
        .filter(|c| filter.is_none_or(|f| c.name.contains(f)))
        .collect()
}

/// Runs every case whose name contains `filter` on `queue`, calling `progress` after each
/// (unsupported cases count as `Ok` there; [`run_cases`] tells them apart). A case that
/// panics counts as failed.
pub fn run(
    queue: &Queue,
    filter: Option<&str>,
    mut progress: impl FnMut(&str, &Result<(), String>),
) -> Report {
    run_cases(queue, filter, |name, o| {
        progress(
            name,
            &match o {
                Outcome::Failed(m) => Err(m.clone()),
                _ => Ok(()),
            },
        )
    })
}

/// Like [`run`], giving `progress` each case's [`Outcome`].
pub fn run_cases(
    queue: &Queue,
    filter: Option<&str>,
    mut progress: impl FnMut(&str, &Outcome),
) -> Report {
    let mut report = Report::default();
    for case in matching(filter) {
        LACKS.with(|l| l.borrow_mut().take());
        TYPED_UNSUPPORTED.with(|l| l.borrow_mut().take());
        let r = match catch_unwind(AssertUnwindSafe(|| (case.run)(queue))) {
            Ok(r) => r,
            Err(p) => Err(format!("panicked: {}", strata::error::panic_message(&*p))),
        };
        let lacks = LACKS.with(|l| l.borrow_mut().take());
        let outcome = match (r, lacks) {
            (Err(m), _) => match writer_lacks(queue, &m) {
                Some(why) => Outcome::Unsupported(why),
                None => Outcome::Failed(m),
            },
            (Ok(()), Some(what)) => Outcome::Unsupported(what),
            (Ok(()), None) => Outcome::Passed,
        };
        progress(case.name, &outcome);
        match outcome {
            Outcome::Passed => report.passed.push(case.name),
            Outcome::Failed(m) => report.failed.push((case.name, m)),
            Outcome::Unsupported(what) => report.unsupported.push((case.name, what)),
        }
    }
    report
}

/// On a Vulkan device, the reason of the typed [`strata::Error::Unsupported`] that a case's
/// failure `message` carries (the error [`e`] recorded while the case ran, found in the
/// message): a construct the SPIR-V writer does not lower, or the device lacks, counted apart
/// as unsupported with its reason (`SPIR-V: <reason>`) rather than failed. On other backends,
/// which lower every construct, every failure stays a failure.
fn writer_lacks(queue: &Queue, message: &str) -> Option<String> {
    if queue.device().info().backend != strata::BackendKind::Vulkan {
        return None;
    }
    let (text, reason) = TYPED_UNSUPPORTED.with(|l| l.borrow_mut().take())?;
    message.contains(&text).then(|| {
        format!(
            "SPIR-V: {}",
            reason.lines().next().unwrap_or(&reason).trim()
        )
    })
}

/// Runs a kernel that computes `K` results per item from the items of three input buffers
/// (results of item `i` land at `out[i * K..][..K]`), and returns the results.
pub(crate) fn run3<T: strata::builder::Value, const K: usize>(
    q: &Queue,
    name: &str,
    a: &[T],
    b: &[T],
    c: &[T],
    body: impl FnOnce(Expr<T>, Expr<T>, Expr<T>) -> [Expr<T>; K],
) -> Result<Vec<T>, String> {
    run3_in(q, name, a, b, c, 64, body)
}

/// [`run3`] in work-groups of `local` work-items (on `cpu`, a multiple of four runs the
/// vector code, others the one-work-item-at-a-time code).
pub(crate) fn run3_in<T: strata::builder::Value, const K: usize>(
    q: &Queue,
    name: &str,
    a: &[T],
    b: &[T],
    c: &[T],
    local: usize,
    body: impl FnOnce(Expr<T>, Expr<T>, Expr<T>) -> [Expr<T>; K],
) -> Result<Vec<T>, String> {
    let k = Kernel::build(name, |k| {
        let xa = k.read::<T>("a");
        let xb = k.read::<T>("b");
        let xc = k.read::<T>("c");
        let out = k.write::<T>("out");
        let i = global_id(0);
        if_(i.lt(xa.len()), || {
            let r = body(xa.at(i), xb.at(i), xc.at(i));
            for (j, v) in r.into_iter().enumerate() {
                out.set(i * K as u32 + j as u32, v);
            }
        });
    })
    .map_err(e)?;
    let ab = Buffer::from_slice(q, a).map_err(e)?;
    let bb = Buffer::from_slice(q, b).map_err(e)?;
    let cb = Buffer::from_slice(q, c).map_err(e)?;
    let ob = Buffer::<T>::new(q.device(), a.len() * K).map_err(e)?;
    k.launch(
        q,
        NdRange::covering(a.len(), local),
        args![&ab, &bb, &cb, &ob],
    )
    .map_err(e)?;
    q.read(&ob).map_err(e)
}

/// Turns any displayable error into the case's error string. A typed
/// [`strata::Error::Unsupported`] is remembered with its reason, so that the case runner
/// counts a case that fails with it as unsupported on Vulkan (see [`run_cases`]).
pub fn e<E: std::fmt::Display + 'static>(err: E) -> String {
    let text = err.to_string();
    if let Some(strata::Error::Unsupported { reason, .. }) =
        (&err as &dyn std::any::Any).downcast_ref::<strata::Error>()
    {
        TYPED_UNSUPPORTED.with(|l| *l.borrow_mut() = Some((text.clone(), reason.clone())));
    }
    text
}

/// Compares two slices exactly, reporting the first difference.
pub fn expect_eq<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    want: &[T],
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: got {} elements, expected {}",
            got.len(),
            want.len()
        ));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}[{i}]: got {:?}, expected {:?}",
            got[i], want[i]
        )),
    }
}

/// A float type that [`expect_close`] and [`expect_same`] compare (`f32`, `f64`).
pub trait CloseFloat: Copy + PartialEq + std::fmt::Debug {
    /// Distance in units in the last place, counting `+0` and `-0` as equal.
    fn ulps_to(self, o: Self) -> u64;
    /// Whether the value is NaN.
    fn nan(self) -> bool;
    /// Whether the value is infinite.
    fn inf(self) -> bool;
    /// Absolute difference, as `f64`.
    fn diff(self, o: Self) -> f64;
    /// The raw bits, widened to `u64`.
    fn raw(self) -> u64;
}

macro_rules! close_float {
    ($t:ty, $u:ty, $sign:expr) => {
        impl CloseFloat for $t {
            fn ulps_to(self, o: Self) -> u64 {
                let key = |x: $t| -> i128 {
                    let b = x.to_bits();
                    let mag = (b & !$sign) as i128;
                    if b & $sign != 0 {
                        -mag
                    } else {
                        mag
                    }
                };
                (key(self) - key(o)).unsigned_abs() as u64
            }
            fn nan(self) -> bool {
                self.is_nan()
            }
            fn inf(self) -> bool {
                self.is_infinite()
            }
            fn diff(self, o: Self) -> f64 {
                (self as f64 - o as f64).abs()
            }
            fn raw(self) -> u64 {
                self.to_bits() as u64
            }
        }
    };
}
close_float!(f32, u32, 1u32 << 31);
close_float!(f64, u64, 1u64 << 63);

/// Compares float slices within a tolerance, reporting the first difference: NaN must meet
/// NaN, an infinity the same infinity; other values may differ by at most `ulps` units in the
/// last place or by at most `abs` (for results near zero after cancellation).
pub fn expect_close<F: CloseFloat>(
    what: &str,
    got: &[F],
    want: &[F],
    ulps: u64,
    abs: f64,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: got {} elements, expected {}",
            got.len(),
            want.len()
        ));
    }
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.nan() || g.nan() {
            w.nan() && g.nan()
        } else if w.inf() || g.inf() {
            g == w
        } else {
            g.ulps_to(w) <= ulps || g.diff(w) <= abs
        };
        if !ok {
            return Err(format!(
                "{what}[{i}]: got {g:?}, expected {w:?} (within {ulps} ulp or {abs:e}; off by {} ulp)",
                g.ulps_to(w)
            ));
        }
    }
    Ok(())
}

/// Compares float slices bit for bit (so `-0.0` differs from `0.0`), except that any NaN
/// matches any NaN.
pub fn expect_same<F: CloseFloat>(what: &str, got: &[F], want: &[F]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: got {} elements, expected {}",
            got.len(),
            want.len()
        ));
    }
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.nan() || g.nan() {
            w.nan() && g.nan()
        } else {
            g.raw() == w.raw()
        };
        if !ok {
            return Err(format!("{what}[{i}]: got {g:?}, expected {w:?}"));
        }
    }
    Ok(())
}

/// Like [`expect_eq`] for results stored `k` per work-item: a mismatch is reported with the
/// name of the result (`names[i % k]`) and the work-item (`i / k`).
fn expect_eq_k<T: PartialEq + std::fmt::Debug>(
    what: &str,
    names: &[&str],
    got: &[T],
    want: &[T],
) -> Result<(), String> {
    let k = names.len().max(1);
    if got.len() != want.len() {
        return Err(format!(
            "{what}: got {} elements, expected {}",
            got.len(),
            want.len()
        ));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: {} of item {}: got {:?}, expected {:?}",
            names.get(i % k).copied().unwrap_or("?"),
            i / k,
            got[i],
            want[i]
        )),
    }
}

/// Checks a condition, with a message when it does not hold.
pub(crate) fn check(cond: bool, msg: impl FnOnce() -> String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(msg())
    }
}

/// A small deterministic generator (SplitMix64) for case inputs.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x9E37_79B9_7F4A_7C15)
    }
    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
    /// A number in `lo..=hi`.
    pub(crate) fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    /// A float uniform in `[lo, hi)`.
    pub(crate) fn f64_in(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
    /// A float uniform in `[lo, hi)`.
    pub(crate) fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        (self.f64_in(lo as f64, hi as f64) as f32).clamp(lo, hi)
    }
}

/// Values a case feeds to kernels: edge cases first, then random ones.
trait Gen: Copy {
    /// The interesting values of the type.
    fn edges() -> Vec<Self>;
    /// A random value (floats: no NaN, infinity or subnormal).
    fn random(r: &mut Rng) -> Self;
}

macro_rules! gen_int {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn edges() -> Vec<Self> {
                vec![<$t>::MIN, <$t>::MAX, 0, 1, <$t>::MIN.wrapping_add(1), <$t>::MAX.wrapping_sub(1), (0 as $t).wrapping_sub(1), 2, 7, <$t>::MAX / 2]
            }
            fn random(r: &mut Rng) -> Self {
                match r.below(4) {
                    0 => (r.below(64) as $t).wrapping_sub(32 as $t),
                    _ => r.next_u64() as $t,
                }
            }
        }
    )*};
}
gen_int!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! gen_float {
    ($($t:ident),*) => {$(
        impl Gen for $t {
            fn edges() -> Vec<Self> {
                vec![0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e30, -1e30, $t::INFINITY, $t::NEG_INFINITY, $t::NAN]
            }
            fn random(r: &mut Rng) -> Self {
                match r.below(3) {
                    0 => r.f64_in(-1000.0, 1000.0) as $t,
                    1 => {
                        let m = 10f64.powf(r.f64_in(-20.0, 20.0));
                        (if r.below(2) == 0 { m } else { -m }) as $t
                    }
                    _ => r.int(-50, 50) as $t * 0.25,
                }
            }
        }
    )*};
}
gen_float!(f32, f64);

/// `n` inputs: the edge values of `T` (when `edges`), then random values.
fn inputs<T: Gen>(seed: u64, n: usize, edges: bool) -> Vec<T> {
    let mut v = if edges { T::edges() } else { Vec::new() };
    v.truncate(n);
    let mut r = Rng::new(seed);
    while v.len() < n {
        v.push(T::random(&mut r));
    }
    v
}

/// Every pair of edge values of `T`, then random pairs, `n` pairs at least.
fn pairs<T: Gen>(seed: u64, n: usize) -> (Vec<T>, Vec<T>) {
    let e = T::edges();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &e {
        for &y in &e {
            a.push(x);
            b.push(y);
        }
    }
    let mut r = Rng::new(seed);
    while a.len() < n {
        a.push(T::random(&mut r));
        b.push(T::random(&mut r));
    }
    (a, b)
}

/// Runs `out[i] = f(x[i])` over `xs` (work-groups of 64, guarded) and returns `out`.
fn map1<A: Value, R: Value>(
    q: &Queue,
    name: &str,
    xs: &[A],
    f: impl FnOnce(Expr<A>) -> Expr<R>,
) -> Result<Vec<R>, String> {
    let k = Kernel::build(name, |k| {
        let x = k.read::<A>("x");
        let out = k.write::<R>("out");
        let i = global_id(0);
        if_(i.lt(x.len()), || out.set(i, f(x.at(i))));
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, xs).map_err(e)?;
    let ob = Buffer::<R>::new(q.device(), xs.len()).map_err(e)?;
    k.launch(q, NdRange::covering(xs.len(), 64), args![&xb, &ob])
        .map_err(e)?;
    q.read(&ob).map_err(e)
}

/// Runs `out[i] = f(x[i], y[i])` (work-groups of 96, guarded) and returns `out`.
fn map2<A: Value, B: Value, R: Value>(
    q: &Queue,
    name: &str,
    xs: &[A],
    ys: &[B],
    f: impl FnOnce(Expr<A>, Expr<B>) -> Expr<R>,
) -> Result<Vec<R>, String> {
    let k = Kernel::build(name, |k| {
        let x = k.read::<A>("x");
        let y = k.read::<B>("y");
        let out = k.write::<R>("out");
        let i = global_id(0);
        if_(i.lt(x.len()), || out.set(i, f(x.at(i), y.at(i))));
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, xs).map_err(e)?;
    let yb = Buffer::from_slice(q, ys).map_err(e)?;
    let ob = Buffer::<R>::new(q.device(), xs.len()).map_err(e)?;
    k.launch(q, NdRange::covering(xs.len(), 96), args![&xb, &yb, &ob])
        .map_err(e)?;
    q.read(&ob).map_err(e)
}

/// Runs `out[i] = f(x[i], y[i], z[i])` (work-groups of 32, guarded) and returns `out`.
fn map3<A: Value, R: Value>(
    q: &Queue,
    name: &str,
    xs: &[A],
    ys: &[A],
    zs: &[A],
    f: impl FnOnce(Expr<A>, Expr<A>, Expr<A>) -> Expr<R>,
) -> Result<Vec<R>, String> {
    let k = Kernel::build(name, |k| {
        let x = k.read::<A>("x");
        let y = k.read::<A>("y");
        let z = k.read::<A>("z");
        let out = k.write::<R>("out");
        let i = global_id(0);
        if_(i.lt(x.len()), || out.set(i, f(x.at(i), y.at(i), z.at(i))));
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, xs).map_err(e)?;
    let yb = Buffer::from_slice(q, ys).map_err(e)?;
    let zb = Buffer::from_slice(q, zs).map_err(e)?;
    let ob = Buffer::<R>::new(q.device(), xs.len()).map_err(e)?;
    k.launch(
        q,
        NdRange::covering(xs.len(), 32),
        args![&xb, &yb, &zb, &ob],
    )
    .map_err(e)?;
    q.read(&ob).map_err(e)
}

/// Whether the queue's device supports `f64`; where it does not, the running case is marked
/// [`unsupported`] (cases on `f64` then return at once).
pub(crate) fn has_f64(q: &Queue) -> bool {
    let has = q.device().info().supports_f64;
    if !has {
        unsupported("f64");
    }
    has
}

/// Shorthand for building a [`Case`].
fn case(name: &'static str, run: fn(&Queue) -> Result<(), String>) -> Case {
    Case { name, run }
}

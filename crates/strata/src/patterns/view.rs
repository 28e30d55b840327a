//! Lazy views: traced functions from an index to a value, and their adapters.
//!
//! A [`View`] knows its length and how to *record* the computation of element `i` into the
//! kernel being built ([`View::at`]). Adapters wrap views (`Map` calls a Rust closure on the
//! traced element, `Zip2` pairs elements, `Reverse` rewrites the index, ...), so when an
//! algorithm records its kernel, the whole chain of views is inlined into it: views never
//! launch anything, and a chain of views plus one algorithm is one kernel per algorithm pass.
//! Values the views hold (buffers, offsets, lengths, [`constant`]s) become kernel parameters;
//! Rust values captured by `map` closures are compile-time constants (multi-staging).
//!
//! Before anything runs, a view checks itself ([`View::check`]: lengths of zipped views,
//! slice bounds) and reports the memory it reads ([`View::reads`]), so that an algorithm can
//! refuse an output that overlaps its input: an output may be the very vector an input reads
//! element for element (an in-place transform or scan), nothing else it reads.

use super::algorithms::{self, AsyncVec};
use super::{reduce, scan, select, sort, Cx, DeviceVec, Exec, Walk};
use crate::builder::{BufferParam, Expr, Numeric, ScalarType, Value};
use crate::error::{Error, Result};
use crate::Buffer;

/// One memory region a view reads.
#[derive(Clone, Debug)]
pub(crate) struct ReadEntry {
    pub mem: usize,
    pub offset: usize,
    pub len: usize,
    /// Element `i` of the view reads element `offset + i` of the region (so an output that is
    /// this very region can be written in place).
    pub direct: bool,
}

/// The memory a chain of views reads and writes, collected before its kernel is recorded (to
/// declare parameters read-write where needed and to refuse outputs that overlap inputs).
#[derive(Default, Debug)]
pub struct Reads {
    pub(crate) list: Vec<ReadEntry>,
    pub(crate) writes: Vec<usize>,
}

impl Reads {
    /// Records that the view reads elements `offset..offset + len` of `b`; `direct` when view
    /// element `i` is buffer element `offset + i`.
    pub fn buffer<T>(&mut self, b: &Buffer<T>, offset: usize, len: usize, direct: bool) {
        self.list.push(ReadEntry {
            mem: super::mem_id(b),
            offset,
            len,
            direct,
        });
    }

    /// Records that the view's elements are written (a view of [`Slot`]s).
    pub fn written<T>(&mut self, b: &Buffer<T>) {
        self.writes.push(super::mem_id(b));
    }
}

/// A lazily computed range of `len()` elements of type `Item`, element `i` being recorded into
/// the kernel being built by [`at`](View::at). See the [module docs](super).
///
/// Adapters (`map`, `enumerate`, `slice`, ...) and algorithms (`collect`, `reduce`, `sum`,
/// ...) are provided methods. Algorithms run on an [`Exec`]; every one checks the view first
/// ([`check`](View::check): zipped lengths, slice bounds, ...) and returns a typed error for bad
/// input.
pub trait View: Clone {
    /// The traced element: an [`Expr`], a tuple of them (zip, enumerate), a [`Slot`], or what a
    /// `map` closure returns.
    type Item: Clone;

    /// Number of elements.
    fn len(&self) -> usize;

    /// Records the computation of element `i` (`i < len()`) into the kernel being built.
    fn at(&self, cx: &mut Cx, i: Expr<u32>) -> Self::Item;

    /// Checks the view before anything runs (lengths of zipped views, slice bounds, ...).
    fn check(&self) -> Result<()> {
        Ok(())
    }

    /// Reports the memory the view reads and writes; `direct` is whether element `i` of this
    /// view is element `i` of the consumer.
    fn reads(&self, direct: bool, out: &mut Reads) {
        let _ = (direct, out);
    }

    /// Collects the launch arguments that [`at`](View::at) gives, without recording: the
    /// same calls of [`Walk`] in the same order as `at` makes of [`Cx`] (see [`Walk`]), and
    /// [`Walk::closure`] for each closure it calls. With it, a pattern call finds its kernel
    /// without recording it after the first call. The default says that the view cannot
    /// ([`Walk::opaque`]): its pattern calls record their kernel every time.
    fn walk<'a>(&'a self, w: &mut Walk<'a>) {
        w.opaque()
    }

    /// `true` when the view has no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    // -----------------------------------------------------------------------------------------
    // Adapters

    /// Element `i` is `f(self[i])`; `f` runs once per use while the kernel is recorded, on
    /// traced values (the PACXX / range-v3 `view::transform`). Values `f` captures are
    /// constants of the kernel; what it records must depend only on them and on its
    /// arguments (not on a global variable read while recording): a call with an `f` that
    /// captures nothing reuses the kernel that the first call with `f`'s type recorded (see
    /// [`Walk`]).
    fn map<R: Clone, F: Fn(Self::Item) -> R + Clone>(self, f: F) -> Map<Self, F> {
        Map { inner: self, f }
    }

    /// Element `i` is `(i, self[i])` with `i` an `Expr<u32>`.
    fn enumerate(self) -> Enumerate<Self> {
        Enumerate { inner: self }
    }

    /// Elements `range` (range-v3's `view::slice`; checked when an algorithm runs). Named
    /// `subrange` so as not to collide with [`DeviceVec::slice`], which makes a vector of the
    /// same elements sharing memory.
    fn subrange(self, range: std::ops::Range<usize>) -> Slice<Self> {
        Slice {
            inner: self,
            start: range.start,
            end: range.end,
        }
    }

    /// The first `n` elements (all of them if there are fewer).
    fn take(self, n: usize) -> Slice<Self> {
        let end = n.min(self.len());
        self.subrange(0..end)
    }

    /// All but the first `n` elements (none if there are fewer).
    fn skip(self, n: usize) -> Slice<Self> {
        let len = self.len();
        self.subrange(n.min(len)..len)
    }

    /// The elements in reverse order.
    fn rev(self) -> Reverse<Self> {
        Reverse { inner: self }
    }

    /// Every `step`-th element, starting with the first (`step` 0 is an error when an
    /// algorithm runs).
    fn strided(self, step: usize) -> Strided<Self> {
        Strided { inner: self, step }
    }

    /// Element `i` is `self[indices[i]]` (the permutation / gather view); the length is that
    /// of `indices`. Indices must be below `self.len()`: an index beyond the memory a vector
    /// reads is reported by the CPU backend and is undefined on others.
    fn gather<I: View<Item = Expr<u32>>>(self, indices: I) -> Gather<Self, I> {
        Gather {
            inner: self,
            indices,
        }
    }

    // -----------------------------------------------------------------------------------------
    // Algorithms

    /// Runs `f` on every element, in one kernel (`f` records side effects, usually through
    /// [`Slot`]s or atomics; the order across elements is unspecified).
    fn for_each<F: Fn(Self::Item)>(&self, ex: &Exec, f: F) -> Result<()> {
        algorithms::for_each(ex, self, f)
    }

    /// Evaluates the view into a new vector, in one kernel (transform).
    fn collect<T: Value>(&self, ex: &Exec) -> Result<DeviceVec<T>>
    where
        Self: View<Item = Expr<T>>,
    {
        self.collect_async(ex)?.wait()
    }

    /// Evaluates the view into `dst`, which must have the view's length and may be an input
    /// only where the view reads it element for element (in-place transform).
    fn collect_into<T: Value>(&self, ex: &Exec, dst: &DeviceVec<T>) -> Result<()>
    where
        Self: View<Item = Expr<T>>,
    {
        algorithms::collect_into(ex, self, dst)?.wait()
    }

    /// Starts evaluating the view into a new vector and returns at once; the result carries the
    /// launch's [`Event`](crate::Event).
    fn collect_async<T: Value>(&self, ex: &Exec) -> Result<AsyncVec<T>>
    where
        Self: View<Item = Expr<T>>,
    {
        let dst = DeviceVec::zeroed(ex, self.len())?;
        let event = algorithms::collect_into(ex, self, &dst)?;
        Ok(AsyncVec::new(dst, event))
    }

    /// Combines all elements with the associative operator `op`, starting from `init`:
    /// `op(...op(op(init, x0), x1)..., xn)` up to associativity; `init` for no elements.
    fn reduce<T: Numeric, F: Fn(Expr<T>, Expr<T>) -> Expr<T>>(
        &self,
        ex: &Exec,
        init: T,
        op: F,
    ) -> Result<T>
    where
        Self: View<Item = Expr<T>>,
    {
        reduce::reduce(ex, self, init, &op, None)
    }

    /// The sum (integers wrap; 0 for no elements).
    fn sum<T: Numeric>(&self, ex: &Exec) -> Result<T>
    where
        Self: View<Item = Expr<T>>,
    {
        let add = |a, b| a + b;
        reduce::reduce(
            ex,
            self,
            crate::ir::eval::Num::zero(),
            &add,
            Some(scan::BuiltinOp::Add),
        )
    }

    /// The smallest element (`None` for no elements; NaN is ignored as by `f32::min`).
    fn min<T: Numeric>(&self, ex: &Exec) -> Result<Option<T>>
    where
        Self: View<Item = Expr<T>>,
    {
        reduce::extreme(ex, self, false)
    }

    /// The largest element (`None` for no elements; NaN is ignored as by `f32::max`).
    fn max<T: Numeric>(&self, ex: &Exec) -> Result<Option<T>>
    where
        Self: View<Item = Expr<T>>,
    {
        reduce::extreme(ex, self, true)
    }

    /// Index and value of the smallest element, the first one among equals (floats compare by
    /// IEEE total order, like `f32::total_cmp`); `None` for no elements.
    fn argmin<T: sort::ArgKey>(&self, ex: &Exec) -> Result<Option<(usize, T)>>
    where
        Self: View<Item = Expr<T>>,
    {
        reduce::arg_extreme(ex, self, false)
    }

    /// Index and value of the largest element, the first one among equals (floats by IEEE
    /// total order); `None` for no elements.
    fn argmax<T: sort::ArgKey>(&self, ex: &Exec) -> Result<Option<(usize, T)>>
    where
        Self: View<Item = Expr<T>>,
    {
        reduce::arg_extreme(ex, self, true)
    }

    /// Number of elements for which `pred` is true.
    fn count<P: Fn(Self::Item) -> Expr<bool> + Clone>(&self, ex: &Exec, pred: P) -> Result<usize> {
        let n: u32 = self
            .clone()
            .map(move |x| crate::builder::select(pred(x), 1u32, 0u32))
            .sum(ex)?;
        Ok(n as usize)
    }

    /// Whether `pred` is true for some element (false for no elements).
    fn any<P: Fn(Self::Item) -> Expr<bool> + Clone>(&self, ex: &Exec, pred: P) -> Result<bool> {
        Ok(self.count(ex, pred)? > 0)
    }

    /// Whether `pred` is true for every element (true for no elements).
    fn all<P: Fn(Self::Item) -> Expr<bool> + Clone>(&self, ex: &Exec, pred: P) -> Result<bool> {
        Ok(self.count(ex, pred)? == self.len())
    }

    /// The inclusive scan with the associative operator `op`: element `i` is
    /// `x0 op x1 op ... op xi`.
    fn inclusive_scan<T: Numeric, F: Fn(Expr<T>, Expr<T>) -> Expr<T>>(
        &self,
        ex: &Exec,
        op: F,
    ) -> Result<DeviceVec<T>>
    where
        Self: View<Item = Expr<T>>,
    {
        let dst = DeviceVec::zeroed(ex, self.len())?;
        scan::scan(ex, self, &op, None, &dst)?;
        Ok(dst)
    }

    /// The exclusive scan from `init`: element 0 is `init`, element `i` is
    /// `init op x0 op ... op x(i-1)`.
    fn exclusive_scan<T: Numeric, F: Fn(Expr<T>, Expr<T>) -> Expr<T>>(
        &self,
        ex: &Exec,
        init: T,
        op: F,
    ) -> Result<DeviceVec<T>>
    where
        Self: View<Item = Expr<T>>,
    {
        let dst = DeviceVec::zeroed(ex, self.len())?;
        scan::scan(ex, self, &op, Some(init), &dst)?;
        Ok(dst)
    }

    /// [`inclusive_scan`](View::inclusive_scan) into `dst`, which must have the view's length
    /// (it may be the vector the view reads, element for element: a scan in place).
    fn inclusive_scan_into<T: Numeric, F: Fn(Expr<T>, Expr<T>) -> Expr<T>>(
        &self,
        ex: &Exec,
        dst: &DeviceVec<T>,
        op: F,
    ) -> Result<()>
    where
        Self: View<Item = Expr<T>>,
    {
        scan::scan(ex, self, &op, None, dst)
    }

    /// [`exclusive_scan`](View::exclusive_scan) into `dst`, which must have the view's length.
    fn exclusive_scan_into<T: Numeric, F: Fn(Expr<T>, Expr<T>) -> Expr<T>>(
        &self,
        ex: &Exec,
        dst: &DeviceVec<T>,
        init: T,
        op: F,
    ) -> Result<()>
    where
        Self: View<Item = Expr<T>>,
    {
        scan::scan(ex, self, &op, Some(init), dst)
    }

    /// The elements for which `pred` is true, in order (copy_if).
    fn filter<T: Numeric, P: Fn(Expr<T>) -> Expr<bool> + Clone>(
        &self,
        ex: &Exec,
        pred: P,
    ) -> Result<DeviceVec<T>>
    where
        Self: View<Item = Expr<T>>,
    {
        select::filter(ex, self, pred)
    }

    /// A stable partition: the elements for which `pred` is true, in order, then the others, in
    /// order; and the number of the former.
    fn partition<T: Numeric, P: Fn(Expr<T>) -> Expr<bool> + Clone>(
        &self,
        ex: &Exec,
        pred: P,
    ) -> Result<(DeviceVec<T>, usize)>
    where
        Self: View<Item = Expr<T>>,
    {
        select::partition(ex, self, pred)
    }

    /// Counts of the bin indices `0..bins` among the elements (elements `>= bins` are not
    /// counted). Map values to bins with [`map`](View::map) first.
    fn histogram(&self, ex: &Exec, bins: usize) -> Result<DeviceVec<u32>>
    where
        Self: View<Item = Expr<u32>>,
    {
        select::histogram(ex, self, bins)
    }

    /// The elements in ascending order, in a new vector (stable LSD radix sort; see
    /// [`DeviceVec::sort`]).
    fn sorted<T: sort::SortKey>(&self, ex: &Exec) -> Result<DeviceVec<T>>
    where
        Self: View<Item = Expr<T>>,
    {
        let v = self.collect(ex)?;
        sort::sort_keys(ex, &v, None::<&DeviceVec<u32>>)?;
        Ok(v)
    }
}

// ---------------------------------------------------------------------------------------------
// Leaves

/// `start, start + 1, ...` (`len` values): iota.
#[derive(Clone, Copy, Debug)]
pub struct Counting {
    start: u32,
    len: usize,
}

/// The view `start, start + 1, ..., start + len - 1` of `u32` (wrapping past `u32::MAX`).
pub fn counting(start: u32, len: usize) -> Counting {
    Counting { start, len }
}

impl View for Counting {
    type Item = Expr<u32>;
    fn len(&self) -> usize {
        self.len
    }
    fn at(&self, cx: &mut Cx, i: Expr<u32>) -> Expr<u32> {
        cx.scalar("start", self.start) + i
    }
    fn walk<'a>(&'a self, w: &mut Walk<'a>) {
        w.scalar("start", self.start)
    }
}

/// `len` copies of one value (repeat).
#[derive(Clone, Copy, Debug)]
pub struct Constant<T> {
    value: T,
    len: usize,
}

/// The view of `len` copies of `value`, passed at launch (so other values reuse the kernel).
pub fn constant<T: ScalarType>(value: T, len: usize) -> Constant<T> {
    Constant { value, len }
}

impl<T: ScalarType> View for Constant<T> {
    type Item = Expr<T>;
    fn len(&self) -> usize {
        self.len
    }
    fn at(&self, cx: &mut Cx, _i: Expr<u32>) -> Expr<T> {
        cx.scalar("c", self.value)
    }
    fn walk<'a>(&'a self, w: &mut Walk<'a>) {
        w.scalar("c", self.value)
    }
}

/// A writable element of a vector, given to [`View::for_each`] bodies by [`Slots`].
#[derive(Clone, Copy, Debug)]
pub struct Slot<T> {
    buf: BufferParam<T>,
    index: Expr<u32>,
}

impl<T: Value> Slot<T> {
    /// The element's current value.
    pub fn get(&self) -> Expr<T> {
        self.buf.at(self.index)
    }
    /// Stores `v` into the element.
    pub fn set(&self, v: impl Into<Expr<T>>) {
        self.buf.set(self.index, v)
    }
    /// The element's index in its buffer.
    pub fn index(&self) -> Expr<u32> {
        self.index
    }
}

impl<T: Numeric> Slot<T> {
    /// Atomically adds `v` to the element; returns the old value.
    pub fn atomic_add(&self, v: impl Into<Expr<T>>) -> Expr<T> {
        self.buf.atomic_add(self.index, v)
    }
}

/// The writable elements of a vector ([`DeviceVec::slots`]).
pub struct Slots<T> {
    vec: DeviceVec<T>,
}

impl<T> Clone for Slots<T> {
    fn clone(&self) -> Self {
        Slots {
            vec: self.vec.clone(),
        }
    }
}

impl<T: Value> Slots<T> {
    pub(crate) fn new(vec: DeviceVec<T>) -> Self {
        Slots { vec }
    }
}

impl<T: Value> View for Slots<T> {
    type Item = Slot<T>;
    fn len(&self) -> usize {
        self.vec.len()
    }
    fn reads(&self, direct: bool, out: &mut Reads) {
        out.buffer(self.vec.buffer(), self.vec.offset(), self.vec.len(), direct);
        out.written(self.vec.buffer());
    }
    fn at(&self, cx: &mut Cx, i: Expr<u32>) -> Slot<T> {
        let buf = cx.read_write(self.vec.buffer());
        let off = cx.size("off", self.vec.offset());
        Slot {
            buf,
            index: off + i,
        }
    }
    fn walk<'a>(&'a self, w: &mut Walk<'a>) {
        w.read_write(self.vec.buffer());
        w.size("off", self.vec.offset());
    }
}

// ---------------------------------------------------------------------------------------------
// Adapters

fn same_len(op: &'static str, lens: &[usize]) -> Result<()> {
    if lens.iter().any(|&l| l != lens[0]) {
        return Err(Error::BufferRange {
            op,
            detail: format!(
                "the zipped views have different lengths {lens:?}; slice them to one length"
            ),
        });
    }
    Ok(())
}

macro_rules! zip_view {
    ($name:ident, $f:ident, $op:literal, $($v:ident : $t:ident),+) => {
        /// Elements of several views side by side, as a tuple of their elements.
        #[derive(Clone, Debug)]
        pub struct $name<$($t),+> { $($v: $t),+ }

        /// Zips views of equal length (checked when an algorithm runs); element `i` is the
        /// tuple of their elements `i`.
        pub fn $f<$($t: View),+>($($v: $t),+) -> $name<$($t),+> {
            $name { $($v),+ }
        }

        impl<$($t: View),+> View for $name<$($t),+> {
            type Item = ($($t::Item),+);
            fn len(&self) -> usize {
                zip_view!(@first $(self.$v),+).len()
            }
            fn check(&self) -> Result<()> {
                $(self.$v.check()?;)+
                same_len($op, &[$(self.$v.len()),+])
            }
            fn reads(&self, direct: bool, out: &mut Reads) {
                $(self.$v.reads(direct, out);)+
            }
            fn at(&self, cx: &mut Cx, i: Expr<u32>) -> Self::Item {
                ($(self.$v.at(cx, i)),+)
            }
            fn walk<'w>(&'w self, w: &mut Walk<'w>) {
                $(self.$v.walk(w);)+
            }
        }
    };
    (@first $a:expr $(, $rest:expr)*) => { $a };
}

zip_view!(Zip2, zip, "zip", a: A, b: B);
zip_view!(Zip3, zip3, "zip3", a: A, b: B, c: C);
zip_view!(Zip4, zip4, "zip4", a: A, b: B, c: C, d: D);

/// [`View::map`].
#[derive(Clone)]
pub struct Map<V, F> {
    inner: V,
    f: F,
}

impl<V: View, R: Clone, F: Fn(V::Item) -> R + Clone> View for Map<V, F> {
    type Item = R;
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn check(&self) -> Result<()> {
        self.inner.check()
    }
    fn reads(&self, direct: bool, out: &mut Reads) {
        self.inner.reads(direct, out)
    }
    fn at(&self, cx: &mut Cx, i: Expr<u32>) -> R {
        (self.f)(self.inner.at(cx, i))
    }
    fn walk<'a>(&'a self, w: &mut Walk<'a>) {
        w.closure(&self.f);
        self.inner.walk(w)
    }
}

/// [`View::enumerate`].
#[derive(Clone, Debug)]
pub struct Enumerate<V> {
    inner: V,
}

impl<V: View> View for Enumerate<V> {
    type Item = (Expr<u32>, V::Item);
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn check(&self) -> Result<()> {
        self.inner.check()
    }
    fn reads(&self, direct: bool, out: &mut Reads) {
        self.inner.reads(direct, out)
    }
    fn at(&self, cx: &mut Cx, i: Expr<u32>) -> Self::Item {
        (i, self.inner.at(cx, i))
    }
    fn walk<'a>(&'a self, w: &mut Walk<'a>) {
        self.inner.walk(w)
    }
}

/// [`View::subrange`], [`View::take`], [`View::skip`].
#[derive(Clone, Debug)]
pub struct Slice<V> {
    inner: V,
    start: usize,
    end: usize,
}

impl<V: View> View for Slice<V> {
    type Item = V::Item;
    fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }
    fn check(&self) -> Result<()> {
        self.inner.check()?;
        if self.start > self.end || self.end > self.inner.len() {
            return Err(Error::BufferRange {
                op: "subrange",
                detail: format!(
                    "range {}..{} does not fit a view of {} elements",
                    self.start,
                    self.end,
                    self.inner.len()
                ),
            });
        }
        Ok(())
    }
    fn reads(&self, direct: bool, out: &mut Reads) {
        self.inner.reads(direct && self.start == 0, out)
    }
    fn at(&self, cx: &mut Cx, i: Expr<u32>) -> V::Item {
        let s = cx.size("start", self.start);
        self.inner.at(cx, s + i)
    }
    fn walk<'a>(&'a self, w: &mut Walk<'a>) {
        w.size("start", self.start);
        self.inner.walk(w)
    }
}

/// [`View::rev`].
#[derive(Clone, Debug)]
pub struct Reverse<V> {
    inner: V,
}

impl<V: View> View for Reverse<V> {
    type Item = V::Item;
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn check(&self) -> Result<()> {
        self.inner.check()
    }
    fn reads(&self, _direct: bool, out: &mut Reads) {
        self.inner.reads(false, out)
    }
    fn at(&self, cx: &mut Cx, i: Expr<u32>) -> V::Item {
        let last = cx.size("last", self.inner.len().saturating_sub(1));
        self.inner.at(cx, last - i)
    }
    fn walk<'a>(&'a self, w: &mut Walk<'a>) {
        w.size("last", self.inner.len().saturating_sub(1));
        self.inner.walk(w)
    }
}

/// [`View::strided`].
#[derive(Clone, Debug)]
pub struct Strided<V> {
    inner: V,
    step: usize,
}

impl<V: View> View for Strided<V> {
    type Item = V::Item;
    fn len(&self) -> usize {
        self.inner.len().div_ceil(self.step.max(1))
    }
    fn check(&self) -> Result<()> {
        self.inner.check()?;
        if self.step == 0 {
            return Err(Error::BufferRange {
                op: "strided",
                detail: "a step of 0; steps are at least 1".into(),
            });
        }
        Ok(())
    }
    fn reads(&self, direct: bool, out: &mut Reads) {
        self.inner.reads(direct && self.step == 1, out)
    }
    fn at(&self, cx: &mut Cx, i: Expr<u32>) -> V::Item {
        let s = cx.size("step", self.step);
        self.inner.at(cx, i * s)
    }
    fn walk<'a>(&'a self, w: &mut Walk<'a>) {
        w.size("step", self.step);
        self.inner.walk(w)
    }
}

/// [`View::gather`].
#[derive(Clone, Debug)]
pub struct Gather<V, I> {
    inner: V,
    indices: I,
}

impl<V: View, I: View<Item = Expr<u32>>> View for Gather<V, I> {
    type Item = V::Item;
    fn len(&self) -> usize {
        self.indices.len()
    }
    fn check(&self) -> Result<()> {
        self.inner.check()?;
        self.indices.check()
    }
    fn reads(&self, direct: bool, out: &mut Reads) {
        self.indices.reads(direct, out);
        self.inner.reads(false, out);
    }
    fn at(&self, cx: &mut Cx, i: Expr<u32>) -> V::Item {
        let j = self.indices.at(cx, i);
        self.inner.at(cx, j)
    }
    fn walk<'a>(&'a self, w: &mut Walk<'a>) {
        self.indices.walk(w);
        self.inner.walk(w)
    }
}

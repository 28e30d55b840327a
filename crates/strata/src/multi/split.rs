//! Vectors split over a [`DeviceSet`] and the patterns over a set: partition, run the
//! single-device algorithm on every part at once, combine.
//!
//! Every combining step runs on the set's first device with the same pattern algorithm as the
//! parts (a reduction of the parts' partial results, a scan of them), so a user's operator is
//! only ever traced into kernels and applied in index order: results equal the one-device
//! results exactly for integers and for operators that are exact (min, max, bit operations);
//! float sums differ only by association order, as between two work-group sizes on one
//! device.

use super::{DeviceSet, DeviceSetError};
use crate::builder::{Expr, Numeric, Value};
use crate::error::Result;
use crate::patterns::{constant, zip, DeviceVec, SortKey, View};
use std::ops::Range;

/// One device's part of a split computation: the device's index in the set and the range of
/// global indices it computes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// The device's index in the set.
    pub index: usize,
    /// The global indices of this part.
    pub range: Range<usize>,
}

impl Part {
    /// The first global index of the part.
    pub fn start(&self) -> usize {
        self.range.start
    }
    /// Number of elements of the part.
    pub fn len(&self) -> usize {
        self.range.len()
    }
    /// `true` for a part of no elements (a device of weight 0, or fewer elements than devices).
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }
}

/// A vector split over the devices of a [`DeviceSet`]: part `i` (a [`DeviceVec`] on device
/// `i`) holds the elements [`DeviceSet::partition`] gives that device. Cloning shares memory.
#[derive(Clone)]
pub struct SplitVec<T> {
    set: DeviceSet,
    parts: Vec<DeviceVec<T>>,
    ranges: Vec<Range<usize>>,
}

impl<T> std::fmt::Debug for SplitVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SplitVec<{}>{:?}",
            std::any::type_name::<T>(),
            self.ranges
        )
    }
}

impl<T: Value + Send + Sync> SplitVec<T> {
    /// `data` split over `set` by its weights, each part uploaded to its device (all at once).
    pub fn from_slice(set: &DeviceSet, data: &[T]) -> Result<SplitVec<T>> {
        let ranges = set.partition(data.len());
        let parts = set.each(|i, ex| DeviceVec::from_slice(ex, &data[ranges[i].clone()]))?;
        Ok(SplitVec {
            set: set.clone(),
            parts,
            ranges,
        })
    }

    /// A zeroed vector of `len` elements split over `set`.
    pub fn zeroed(set: &DeviceSet, len: usize) -> Result<SplitVec<T>> {
        let ranges = set.partition(len);
        let parts = set.each(|i, ex| DeviceVec::zeroed(ex, ranges[i].len()))?;
        Ok(SplitVec {
            set: set.clone(),
            parts,
            ranges,
        })
    }

    /// All elements, read from every device (at once) and joined in order.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let parts = self.set.each(|i, _| self.parts[i].to_vec())?;
        Ok(parts.concat())
    }
}

impl<T> SplitVec<T> {
    /// Number of elements, over all parts.
    pub fn len(&self) -> usize {
        self.ranges.last().map_or(0, |r| r.end)
    }

    /// `true` for a vector of no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Part `i`, on device `i` of the set.
    pub fn part(&self, i: usize) -> &DeviceVec<T> {
        &self.parts[i]
    }

    /// The parts, in device order.
    pub fn parts(&self) -> &[DeviceVec<T>] {
        &self.parts
    }

    /// The global index range of every part.
    pub fn ranges(&self) -> &[Range<usize>] {
        &self.ranges
    }

    /// The set the vector is split over.
    pub fn set(&self) -> &DeviceSet {
        &self.set
    }
}

/// A sort key with an order-preserving encoding on the host, used to merge the sorted parts
/// of [`DeviceSet::sorted`]: the order of the radix sort (`f32` by IEEE total order, like
/// `f32::total_cmp`).
pub trait HostKey: SortKey {
    /// The key as an unsigned number of the same order.
    fn host_key(self) -> u64;
}
impl HostKey for u32 {
    fn host_key(self) -> u64 {
        self as u64
    }
}
impl HostKey for i32 {
    fn host_key(self) -> u64 {
        ((self as u32) ^ 0x8000_0000) as u64
    }
}
impl HostKey for f32 {
    fn host_key(self) -> u64 {
        let b = self.to_bits();
        (if b >> 31 == 1 { !b } else { b ^ 0x8000_0000 }) as u64
    }
}
impl HostKey for u64 {
    fn host_key(self) -> u64 {
        self
    }
}
impl HostKey for i64 {
    fn host_key(self) -> u64 {
        (self as u64) ^ 0x8000_0000_0000_0000
    }
}

fn check_part_len(op: &'static str, part: &Part, len: usize) -> Result<()> {
    if len != part.len() {
        return Err(DeviceSetError {
            op,
            detail: format!(
                "the view for part {} has {len} elements but the part is {:?} ({} elements); build each part's view over that part (a SplitVec of this set, or counting(part.start(), part.len()))",
                part.index,
                part.range,
                part.len()
            ),
        }.into());
    }
    Ok(())
}

impl DeviceSet {
    fn parts_of(&self, len: usize) -> Vec<Part> {
        self.partition(len)
            .into_iter()
            .enumerate()
            .map(|(index, range)| Part { index, range })
            .collect()
    }

    /// Runs `f` on every device at once with the index and view of the device's part of `len`
    /// elements (`view` of the part, which must have the part's length: else an
    /// [`DeviceSetError`] naming `op`); the parts and `f`'s results, in device order.
    fn each_part<V, F, R>(
        &self,
        op: &'static str,
        len: usize,
        view: &F,
        f: impl Fn(usize, V, &crate::patterns::Exec) -> Result<R> + Sync,
    ) -> Result<(Vec<Part>, Vec<R>)>
    where
        V: View,
        F: Fn(&Part) -> V + Sync,
        R: Send,
    {
        let parts = self.parts_of(len);
        let results = self.each(|i, ex| {
            let v = view(&parts[i]);
            check_part_len(op, &parts[i], v.len())?;
            f(i, v, ex)
        })?;
        Ok((parts, results))
    }

    /// Evaluates a view split over the set into a new [`SplitVec`] of `len` elements: `view`
    /// gives each part's view (of the part's length: the part of a [`SplitVec`] of this set, or
    /// `counting(part.start() as u32, part.len())`, mapped as on one device), and every device
    /// evaluates its part at once, in one kernel as [`View::collect`] does.
    pub fn collect<T, V, F>(&self, len: usize, view: F) -> Result<SplitVec<T>>
    where
        T: Value + Send + Sync,
        V: View<Item = Expr<T>>,
        F: Fn(&Part) -> V + Sync,
    {
        let (parts, vecs) = self.each_part("collect", len, &view, |_, v, ex| v.collect(ex))?;
        Ok(SplitVec {
            set: self.clone(),
            parts: vecs,
            ranges: parts.into_iter().map(|p| p.range).collect(),
        })
    }

    /// The reduction of the split view with the associative operator `op` from `init`, as
    /// [`View::reduce`]: every device reduces its part (starting from the part's first
    /// element), then the first device reduces the parts' results from `init`.
    pub fn reduce<T, V, F, Op>(&self, len: usize, view: F, init: T, op: Op) -> Result<T>
    where
        T: Numeric + Send + Sync,
        V: View<Item = Expr<T>>,
        F: Fn(&Part) -> V + Sync,
        Op: Fn(Expr<T>, Expr<T>) -> Expr<T> + Sync,
    {
        let partials = self.partials(len, &view, &op)?;
        let ex = self.exec(0);
        DeviceVec::from_slice(ex, &partials)?.reduce(ex, init, &op)
    }

    /// Each non-empty part's reduction (from its first element), in device order.
    fn partials<T, V, F, Op>(&self, len: usize, view: &F, op: &Op) -> Result<Vec<T>>
    where
        T: Numeric + Send + Sync,
        V: View<Item = Expr<T>>,
        F: Fn(&Part) -> V + Sync,
        Op: Fn(Expr<T>, Expr<T>) -> Expr<T> + Sync,
    {
        let (_, partials) = self.each_part("reduce", len, view, |_, v, ex| {
            if v.is_empty() {
                return Ok(None);
            }
            let first = v.clone().take(1).collect(ex)?.to_vec()?[0];
            Ok(Some(v.skip(1).reduce(ex, first, op)?))
        })?;
        Ok(partials.into_iter().flatten().collect())
    }

    /// The sum of the split view, as [`View::sum`]: every device sums its part, then the first
    /// device sums the parts' sums (integers wrap; a float sum is a sum in some association
    /// order).
    pub fn sum<T, V, F>(&self, len: usize, view: F) -> Result<T>
    where
        T: Numeric + Send + Sync,
        V: View<Item = Expr<T>>,
        F: Fn(&Part) -> V + Sync,
    {
        let (_, sums) = self.each_part("sum", len, &view, |_, v, ex| v.sum(ex))?;
        let ex = self.exec(0);
        DeviceVec::from_slice(ex, &sums)?.sum(ex)
    }

    /// The inclusive scan of the split view with the associative operator `op`, as
    /// [`View::inclusive_scan`]: every device scans its part; the first device scans the parts'
    /// last elements; every device but the first combines its part with the carry from the
    /// parts before it (one more kernel each).
    pub fn inclusive_scan<T, V, F, Op>(&self, len: usize, view: F, op: Op) -> Result<SplitVec<T>>
    where
        T: Numeric + Send + Sync,
        V: View<Item = Expr<T>>,
        F: Fn(&Part) -> V + Sync,
        Op: Fn(Expr<T>, Expr<T>) -> Expr<T> + Sync + Clone,
    {
        let (parts, scanned) = self.each_part("inclusive_scan", len, &view, |_, v, ex| {
            let y = v.inclusive_scan(ex, &op)?;
            let last = match y.len() {
                0 => None,
                n => Some(y.slice(n - 1..)?.to_vec()?[0]),
            };
            Ok((y, last))
        })?;
        let lasts: Vec<T> = scanned.iter().filter_map(|(_, l)| *l).collect();
        let ex0 = self.exec(0);
        let totals = DeviceVec::from_slice(ex0, &lasts)?
            .inclusive_scan(ex0, &op)?
            .to_vec()?;
        // The carry into each part: the scan of the last elements of the non-empty parts
        // before it.
        let mut carries = Vec::with_capacity(scanned.len());
        let mut k = 0;
        for (_, last) in &scanned {
            carries.push(if k > 0 && last.is_some() {
                Some(totals[k - 1])
            } else {
                None
            });
            if last.is_some() {
                k += 1;
            }
        }
        self.each(|i, ex| {
            let (y, _) = &scanned[i];
            if let Some(c) = carries[i] {
                let op = op.clone();
                zip(constant(c, y.len()), y)
                    .map(move |(c, y)| op(c, y))
                    .collect_into(ex, y)?;
            }
            Ok(())
        })?;
        Ok(SplitVec {
            set: self.clone(),
            parts: scanned.into_iter().map(|(y, _)| y).collect(),
            ranges: parts.into_iter().map(|p| p.range).collect(),
        })
    }

    /// The exclusive scan of the split view from `init`, as [`View::exclusive_scan`]: every
    /// device reduces its part; the first device scans the parts' reductions from `init`; every
    /// device scans its part from its carry.
    pub fn exclusive_scan<T, V, F, Op>(
        &self,
        len: usize,
        view: F,
        init: T,
        op: Op,
    ) -> Result<SplitVec<T>>
    where
        T: Numeric + Send + Sync,
        V: View<Item = Expr<T>>,
        F: Fn(&Part) -> V + Sync,
        Op: Fn(Expr<T>, Expr<T>) -> Expr<T> + Sync,
    {
        let partials = self.partials(len, &view, &op)?;
        let ex0 = self.exec(0);
        let carries = DeviceVec::from_slice(ex0, &partials)?
            .exclusive_scan(ex0, init, &op)?
            .to_vec()?;
        let parts = self.parts_of(len);
        // Part i's carry: the scan of the non-empty parts before it.
        let before: Vec<usize> = parts
            .iter()
            .scan(0, |k, p| {
                let here = *k;
                *k += usize::from(!p.is_empty());
                Some(here)
            })
            .collect();
        let (parts, vecs) = self.each_part("exclusive_scan", len, &view, |i, v, ex| {
            let c = carries.get(before[i]).copied().unwrap_or(init);
            v.exclusive_scan(ex, c, &op)
        })?;
        Ok(SplitVec {
            set: self.clone(),
            parts: vecs,
            ranges: parts.into_iter().map(|p| p.range).collect(),
        })
    }

    /// The elements of the split view in ascending order, as [`View::sorted`] (a stable sort):
    /// every device sorts its part, the host merges the sorted parts (equal keys keep their
    /// order), and the result is split over the set again.
    pub fn sorted<T, V, F>(&self, len: usize, view: F) -> Result<SplitVec<T>>
    where
        T: HostKey + Send + Sync,
        V: View<Item = Expr<T>>,
        F: Fn(&Part) -> V + Sync,
    {
        let (_, sorted) =
            self.each_part("sorted", len, &view, |_, v, ex| v.sorted(ex)?.to_vec())?;
        let merged = merge(&sorted);
        SplitVec::from_slice(self, &merged)
    }
}

/// The stable merge of sorted runs: on equal keys, the earlier run first.
fn merge<T: HostKey>(runs: &[Vec<T>]) -> Vec<T> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut heap: BinaryHeap<Reverse<(u64, usize, usize)>> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .map(|(k, r)| Reverse((r[0].host_key(), k, 0)))
        .collect();
    let mut out = Vec::with_capacity(runs.iter().map(Vec::len).sum());
    while let Some(Reverse((_, k, j))) = heap.pop() {
        out.push(runs[k][j]);
        if let Some(&next) = runs[k].get(j + 1) {
            heap.push(Reverse((next.host_key(), k, j + 1)));
        }
    }
    out
}

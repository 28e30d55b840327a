//! The comparator sort: a stable merge sort ordered by a comparison written in the kernel
//! language ([`DeviceVec::sort_by`], [`merge_sort_by_key`]), for keys the radix sort cannot
//! take (an order that is not that of the key's bits: descending, by a part of the key, by a
//! computed value, a lexicographic order of packed fields) and for any [`Value`] element.
//!
//! **Algorithm.** Bottom-up: pass `p` merges neighbouring sorted runs of `w = 2^p` elements
//! into runs of `2w`, from `src` into `dst` (the vector and a scratch buffer take turns), so
//! `ceil(log2 n)` passes of one launch each. Each work-item of a pass writes an equal share of
//! the output, `c = min(chunk, 2w)` consecutive elements (`c` divides `2w`, so a share never
//! spans two merges): it finds where its share starts in the two input runs by a binary search
//! on the merge path (the *co-rank*: the number `i` of elements of the first run among the
//! first `k` outputs, the only `i` with `A[i-1] <= B[k-i]` and `B[k-i-1] < A[i]`), then merges
//! `c` elements sequentially. Ties take the first run's element first: the sort is stable.
//! The comparator is `less(a, b)`, "`a` goes strictly before `b`"; it must be a strict weak
//! order (as for `slice::sort_by` with `a.cmp(b) == Less`), or the order of the result is
//! unspecified (it is still a permutation of the input).
//!
//! The width, the length and the share are launch parameters: one kernel per comparator,
//! element types and staging is compiled for all passes and sizes.
//!
//! Not done yet: sorting tiles in local memory before the first global pass (the first
//! `log2(tile)` passes each read and write the whole vector here).

use super::{check_u32, launch, DeviceVec, Exec, Reads};
use crate::builder::{for_range, global_id, if_, lit, var, Expr, Value};
use crate::error::{Error, Result};
use crate::{Buffer, Event};

/// Elements each work-item merges per pass (once the runs are long enough).
const CHUNK: u32 = 8;

/// One side of a pass: keys, and values when sorting pairs.
#[derive(Clone, Copy)]
struct Side<'a, K, V> {
    keys: &'a Buffer<K>,
    koff: usize,
    vals: Option<(&'a Buffer<V>, usize)>,
}

/// One merge pass of runs of `w` elements from `src` into `dst` (`n` elements each).
fn pass<K, V, F>(
    ex: &Exec,
    src: Side<K, V>,
    dst: Side<K, V>,
    n: usize,
    w: usize,
    less: &F,
) -> Result<Event>
where
    K: Value,
    V: Value,
    F: Fn(Expr<K>, Expr<K>) -> Expr<bool>,
{
    let c = (CHUNK as usize).min(2 * w);
    let items = n.div_ceil(c);
    let gs = ex.staging().group_size as usize;
    let groups = items.div_ceil(gs);
    launch(ex, "pattern_merge", groups, &Reads::default(), &[], |cx| {
        let sk = cx.read(src.keys);
        let dk = cx.write(dst.keys);
        let sv = src.vals.map(|(b, _)| cx.read(b));
        let dv = dst.vals.map(|(b, _)| cx.write(b));
        let n = cx.size("n", n);
        let w = cx.size("w", w);
        let c = cx.size("c", c);
        let soff = cx.size("src_off", src.koff);
        let doff = cx.size("dst_off", dst.koff);
        let svoff = cx.size("src_voff", src.vals.map_or(0, |v| v.1));
        let dvoff = cx.size("dst_voff", dst.vals.map_or(0, |v| v.1));
        let g = global_id(0);
        let o0 = g * c;
        if_(o0.lt(n), || {
            let two_w = w + w;
            let p = (o0 / two_w) * two_w;
            let la = w.min(n - p);
            let b0 = p + la;
            let lb = w.min(n - b0);
            let k = o0 - p;
            let a = |i: Expr<u32>| sk.at(soff + p + i);
            let b = |j: Expr<u32>| sk.at(soff + b0 + j);
            // The co-rank of `k`: the smallest `i` in `[max(0, k - lb), min(k, la)]` whose
            // `A[i]` goes after `B[k - i - 1]`.
            let lo = var::<u32>(select_u32(k.gt(lb), k - lb, lit(0u32)));
            let hi = var::<u32>(k.min(la));
            crate::builder::while_(
                || lo.get().lt(hi.get()),
                || {
                    let mid = (lo.get() + hi.get()) >> lit(1u32);
                    // `B[k - mid - 1] < A[mid]`: A[mid] comes after, `i <= mid`.
                    if_(less(b(k - mid - 1u32), a(mid)), || hi.set(mid)).else_(|| {
                        lo.set(mid + 1u32);
                    });
                },
            );
            let i = var::<u32>(lo.get());
            let j = var::<u32>(k - lo.get());
            let end = c.min(la + lb - k);
            for_range::<u32>(0u32, end, |t| {
                let out = doff + p + k + t;
                let from_a = var::<bool>(lit(false));
                if_(i.get().lt(la), || {
                    if_(j.get().ge(lb), || from_a.set(lit(true))).else_(|| {
                        // Stable: on a tie the first run's element goes first.
                        from_a.set(!less(b(j.get()), a(i.get())));
                    });
                });
                if_(from_a.get(), || {
                    dk.set(out, a(i.get()));
                    if let (Some(sv), Some(dv)) = (sv, dv) {
                        dv.set(dvoff + p + k + t, sv.at(svoff + p + i.get()));
                    }
                    i.set(i.get() + 1u32);
                })
                .else_(|| {
                    dk.set(out, b(j.get()));
                    if let (Some(sv), Some(dv)) = (sv, dv) {
                        dv.set(dvoff + p + k + t, sv.at(svoff + b0 + j.get()));
                    }
                    j.set(j.get() + 1u32);
                });
            });
        });
    })
}

fn select_u32(c: Expr<bool>, a: Expr<u32>, b: Expr<u32>) -> Expr<u32> {
    crate::builder::select(c, a, b)
}

/// The merge sort of `keys` (and `values` alongside) by `less`, in place.
fn merge_sort<K, V, F>(
    ex: &Exec,
    keys: &DeviceVec<K>,
    values: Option<&DeviceVec<V>>,
    less: &F,
) -> Result<()>
where
    K: Value,
    V: Value,
    F: Fn(Expr<K>, Expr<K>) -> Expr<bool>,
{
    let n = keys.len();
    check_u32("sort_by", n)?;
    // `2w` must fit the kernel's u32 indices.
    if n > 1 << 31 {
        return Err(Error::BufferRange {
            op: "sort_by",
            detail: format!("{n} elements; the merge sort takes at most 2^31"),
        });
    }
    if let Some(v) = values {
        if v.len() != n {
            return Err(Error::BufferRange {
                op: "merge_sort_by_key",
                detail: format!("{n} keys but {} values", v.len()),
            });
        }
        if super::mem_id(v.buffer()) == super::mem_id(keys.buffer()) {
            return Err(Error::BufferRange {
                op: "merge_sort_by_key",
                detail: "the keys and the values share memory; pass two vectors".into(),
            });
        }
    }
    for v in [Some(keys.buffer().device())]
        .into_iter()
        .chain([values.map(|v| v.buffer().device())])
        .flatten()
    {
        if v != ex.device() {
            return Err(Error::WrongDevice {
                op: "sort_by",
                buffer_device: v.info().spec(),
                queue_device: ex.device().info().spec(),
            });
        }
    }
    if n <= 1 {
        return Ok(());
    }
    let dev = ex.device();
    let scratch = ex.scratch();
    let tmp_keys = scratch.take::<K>(dev, n)?;
    let tmp_vals = match values {
        Some(_) => Some(scratch.take::<V>(dev, n)?),
        None => None,
    };
    let home = Side {
        keys: keys.buffer(),
        koff: keys.offset(),
        vals: values.map(|v| (v.buffer(), v.offset())),
    };
    let away = Side {
        keys: &tmp_keys,
        koff: 0,
        vals: tmp_vals.as_ref().map(|t| (t, 0)),
    };
    let mut events = Vec::new();
    let (mut src, mut dst) = (home, away);
    let mut w = 1usize;
    while w < n {
        events.push(pass(ex, src, dst, n, w, less)?);
        std::mem::swap(&mut src, &mut dst);
        w *= 2;
    }
    // After an odd number of passes the result is in the scratch buffers.
    if super::mem_id(src.keys) == super::mem_id(&tmp_keys) {
        let q = ex.queue();
        events.push(q.enqueue_copy(&tmp_keys, 0..n, keys.buffer(), keys.offset().., &[])?);
        if let (Some(v), Some(t)) = (values, &tmp_vals) {
            events.push(q.enqueue_copy(t, 0..n, v.buffer(), v.offset().., &[])?);
        }
    }
    Event::wait_all(&events)?;
    scratch.keep(tmp_keys);
    if let Some(t) = tmp_vals {
        scratch.keep(t);
    }
    Ok(())
}

impl<T: Value> DeviceVec<T> {
    /// Sorts the elements in place, stably, by the comparison `less(a, b)` ("`a` goes strictly
    /// before `b`"), written in the kernel language: a merge sort (see the `merge` module docs)
    /// for orders the radix sort ([`DeviceVec::sort`]) does not give. `less` must be a strict
    /// weak order; equal elements keep their order.
    ///
    /// ```
    /// use strata::patterns::*;
    /// use strata::prelude::*;
    /// # fn main() -> strata::Result<()> {
    /// let ex = Exec::new(&Queue::new(&Device::from_spec("cpu")?)?);
    /// let v = DeviceVec::from_slice(&ex, &[3u32, 1, 4, 1, 5, 9, 2, 6])?;
    /// v.sort_by(|a, b| a.gt(b))?; // descending
    /// assert_eq!(v.to_vec()?, vec![9, 6, 5, 4, 3, 2, 1, 1]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn sort_by<F: Fn(Expr<T>, Expr<T>) -> Expr<bool>>(&self, less: F) -> Result<&Self> {
        merge_sort::<T, u32, F>(self.exec(), self, None, &less)?;
        Ok(self)
    }
}

/// Sorts `keys` in place, stably, by the comparison `less` on keys (see
/// [`DeviceVec::sort_by`]) and applies the same permutation to `values`. Both must live on the
/// exec's device and have the same length, in different memory.
pub fn merge_sort_by_key<K, V, F>(
    ex: &Exec,
    keys: &DeviceVec<K>,
    values: &DeviceVec<V>,
    less: F,
) -> Result<()>
where
    K: Value,
    V: Value,
    F: Fn(Expr<K>, Expr<K>) -> Expr<bool>,
{
    merge_sort(ex, keys, Some(values), &less)
}

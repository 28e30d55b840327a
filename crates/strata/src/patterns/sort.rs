//! Stable LSD radix sort of keys and of key-value pairs, and the key encodings it uses.
//!
//! Keys are compared through an order-preserving unsigned encoding ([`SortKey::sort_bits`]):
//! unsigned integers as they are, signed integers with the sign bit flipped, floats with the
//! sign bit flipped for positive values and all bits flipped for negative ones (IEEE total
//! order, as `f32::total_cmp`: `-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN`). The
//! encoding is applied when a digit is extracted: keys are stored unchanged.
//!
//! Each pass sorts by one 4-bit digit (8 passes for 32-bit keys, 16 for 64-bit keys) with the
//! block division of the reductions (one contiguous block per work-group, one contiguous part
//! per work-item) and three steps: a *count* kernel writes each block's 16 digit counts,
//! digit-major (`hist[d * groups + g]`); an exclusive scan of those counts (the scan
//! algorithm) gives every (digit, block) its first output position; a *scatter* kernel counts
//! again per work-item into local memory, scans those counts in (digit, work-item) order, and
//! writes each element to its position, in order within the work-item, so the sort is stable.
//! Passes alternate between the vector and a temporary; the pass count is even, so the result
//! ends in the vector.

use super::scan::{group_scan, part, plan};
use super::{check_u32, launch, mem_id, Cx, DeviceVec, Exec, Reads, Staging, View};
use crate::builder::{
    barrier, for_range, for_step, group_id, lit, local_id, private_array, select, BufferParam,
    Element, Expr, Integer, LocalArray, Numeric,
};
use crate::error::{Error, Result};
use crate::{Buffer, Event};

/// A key type the radix sort orders (ascending): `u32`, `i32`, `f32`, `u64`, `i64`.
pub trait SortKey: Numeric {
    /// The unsigned type of the encoding.
    type Bits: Integer;
    /// Number of bits of the encoding.
    const BITS: u32;
    /// The order-preserving encoding of `x` (see the module docs).
    fn sort_bits(x: Expr<Self>) -> Expr<Self::Bits>;
}

/// A 32-bit key that [`View::argmin`] and [`View::argmax`] can pack with an index into a
/// `u64`: `u32`, `i32`, `f32`.
pub trait ArgKey: SortKey {
    /// The order-preserving encoding as `u32`.
    fn order_bits(x: Expr<Self>) -> Expr<u32>;
    /// The inverse of the encoding, on the host.
    fn from_order_bits(u: u32) -> Self;
}

impl SortKey for u32 {
    type Bits = u32;
    const BITS: u32 = 32;
    fn sort_bits(x: Expr<u32>) -> Expr<u32> {
        x
    }
}
impl ArgKey for u32 {
    fn order_bits(x: Expr<u32>) -> Expr<u32> {
        x
    }
    fn from_order_bits(u: u32) -> u32 {
        u
    }
}
impl SortKey for i32 {
    type Bits = u32;
    const BITS: u32 = 32;
    fn sort_bits(x: Expr<i32>) -> Expr<u32> {
        x.bitcast::<u32>() ^ 0x8000_0000u32
    }
}
impl ArgKey for i32 {
    fn order_bits(x: Expr<i32>) -> Expr<u32> {
        i32::sort_bits(x)
    }
    fn from_order_bits(u: u32) -> i32 {
        (u ^ 0x8000_0000) as i32
    }
}
impl SortKey for f32 {
    type Bits = u32;
    const BITS: u32 = 32;
    fn sort_bits(x: Expr<f32>) -> Expr<u32> {
        let b = x.bitcast::<u32>();
        let negative = (b >> lit(31u32)).eq(1u32);
        b ^ select(negative, lit(u32::MAX), lit(0x8000_0000u32))
    }
}
impl ArgKey for f32 {
    fn order_bits(x: Expr<f32>) -> Expr<u32> {
        f32::sort_bits(x)
    }
    fn from_order_bits(u: u32) -> f32 {
        f32::from_bits(if u & 0x8000_0000 != 0 {
            u ^ 0x8000_0000
        } else {
            !u
        })
    }
}
impl SortKey for u64 {
    type Bits = u64;
    const BITS: u32 = 64;
    fn sort_bits(x: Expr<u64>) -> Expr<u64> {
        x
    }
}
impl SortKey for i64 {
    type Bits = u64;
    const BITS: u32 = 64;
    fn sort_bits(x: Expr<i64>) -> Expr<u64> {
        x.bitcast::<u64>() ^ 0x8000_0000_0000_0000u64
    }
}

/// Bits per pass and digits.
const DIGIT_BITS: u32 = 4;
const DIGITS: u32 = 1 << DIGIT_BITS;

/// The digit of `x` at `shift`.
fn digit<K: SortKey>(x: Expr<K>, shift: Expr<K::Bits>) -> Expr<u32> {
    let mask: K::Bits = crate::ir::eval::Num::from_i64(DIGITS as i64 - 1);
    ((K::sort_bits(x) >> shift) & mask).cast::<u32>()
}

/// One side of a pass: a buffer and where the elements start in it.
struct Side<'a, T> {
    buf: &'a Buffer<T>,
    off: usize,
}

/// Counts the digits of the work-item's part (`start..end`) into local memory, `counts[d * gs
/// + l]`, then turns the counts into their exclusive scan in (digit, work-item) order: entry
/// `(d, l)` becomes the number of the block's elements with a smaller digit, or with digit `d`
/// in the parts of work-items before `l`. Returns the array and the block's element count.
fn digit_scan<K: SortKey>(
    cx: &mut Cx,
    keys: BufferParam<K>,
    koff: Expr<u32>,
    shift: Expr<K::Bits>,
    start: Expr<u32>,
    end: Expr<u32>,
    gs: u32,
) -> (LocalArray<u32>, Expr<u32>) {
    let l = local_id(0);
    let cnt = cx.local::<u32>("counts", DIGITS * gs);
    let sc = cx.local::<u32>("scan", gs);
    for d in 0..DIGITS {
        cnt.set(l + d * gs, 0u32);
    }
    for_range::<u32>(start, end, |j| {
        let c = digit::<K>(keys.at(koff + j), shift) * gs + l;
        cnt.set(c, cnt.at(c) + 1u32);
    });
    barrier();
    // Work-item l scans entries 16 l .. 16 l + 16, then the work-items' totals are scanned.
    let mine = private_array::<u32>("mine", DIGITS);
    let total = crate::builder::var_named("total", 0u32);
    for t in 0..DIGITS {
        let c = cnt.at(l * DIGITS + t);
        mine.set(t, total.get());
        total.set(total.get() + c);
    }
    sc.set(l, total.get());
    group_scan(sc, gs, &|a, b| a + b);
    let before = select(l.gt(0u32), sc.at(select(l.gt(0u32), l - 1u32, 0u32)), 0u32);
    let all = sc.at(gs - 1);
    barrier();
    for t in 0..DIGITS {
        cnt.set(l * DIGITS + t, before + mine.at(t));
    }
    barrier();
    (cnt, all)
}

/// Sorts `keys` (and `values` alongside, if given) in place, stably.
pub(crate) fn sort_keys<K: SortKey, V: Element>(
    ex: &Exec,
    keys: &DeviceVec<K>,
    values: Option<&DeviceVec<V>>,
) -> Result<()> {
    let n = keys.len();
    super::algorithms::same_device("sort", ex, keys)?;
    if let Some(v) = values {
        super::algorithms::same_device("sort", ex, v)?;
        if v.len() != n {
            return Err(Error::BufferRange {
                op: "sort_by_key",
                detail: format!("{n} keys but {} values; they must be equal", v.len()),
            });
        }
        if v.buffer().same_memory(keys.buffer()) {
            return Err(Error::BufferRange {
                op: "sort_by_key",
                detail: "the keys and the values share memory; sort a copy of one".into(),
            });
        }
    }
    check_u32("sort", n.saturating_mul(DIGITS as usize))?;
    if n <= 1 {
        return Ok(());
    }
    // Local memory holds 16 counts per work-item: at most 256 work-items.
    let st = ex.staging();
    let ex = ex.with_staging(Staging {
        group_size: st.group_size.min(256),
        ..st
    })?;
    let gs = ex.staging().group_size;
    let p = plan(&ex, n);
    let g = p.groups;
    let hist = DeviceVec::<u32>::zeroed(&ex, DIGITS as usize * g)?;
    let offsets = DeviceVec::<u32>::zeroed(&ex, DIGITS as usize * g)?;
    let tmp_keys = Buffer::<K>::new(ex.device(), n)?;
    let tmp_vals = match values {
        Some(_) => Some(Buffer::<V>::new(ex.device(), n)?),
        None => None,
    };
    let mut events: Vec<Event> = Vec::new();
    let passes = K::BITS / DIGIT_BITS;
    for pass in 0..passes {
        let shift = pass * DIGIT_BITS;
        let (src, dst) = if pass % 2 == 0 {
            (
                Side {
                    buf: keys.buffer(),
                    off: keys.offset(),
                },
                Side {
                    buf: &tmp_keys,
                    off: 0,
                },
            )
        } else {
            (
                Side {
                    buf: &tmp_keys,
                    off: 0,
                },
                Side {
                    buf: keys.buffer(),
                    off: keys.offset(),
                },
            )
        };
        let vals = match (values, &tmp_vals) {
            (Some(v), Some(t)) => Some(if pass % 2 == 0 {
                (
                    Side {
                        buf: v.buffer(),
                        off: v.offset(),
                    },
                    Side { buf: t, off: 0 },
                )
            } else {
                (
                    Side { buf: t, off: 0 },
                    Side {
                        buf: v.buffer(),
                        off: v.offset(),
                    },
                )
            }),
            _ => None,
        };
        let shift_bits: K::Bits = crate::ir::eval::Num::from_i64(shift as i64);
        // 1. Digit counts per block, digit-major.
        events.push(launch(
            &ex,
            "pattern_sort_count",
            g,
            &Reads::default(),
            &[mem_id(hist.buffer())],
            |cx| {
                let keys = cx.read(src.buf);
                let koff = cx.size("keys_off", src.off);
                let out = cx.write(hist.buffer());
                let groups = cx.size("groups", g);
                let shift = cx.scalar("shift", shift_bits);
                let (start, end) = part(cx, n, p.block, p.per);
                let (cnt, total) = digit_scan::<K>(cx, keys, koff, shift, start, end, gs);
                // Digit d's count in the block: the next digit's start minus its own.
                for_step::<u32>(local_id(0), lit(DIGITS), lit(gs), |d| {
                    let next = select::<u32>(
                        d.lt(DIGITS - 1),
                        cnt.at(select(d.lt(DIGITS - 1), d + 1u32, d) * gs),
                        total,
                    );
                    out.set(d * groups + group_id(0), next - cnt.at(d * gs));
                });
            },
        )?);
        // 2. First output position of every (digit, block).
        hist.exclusive_scan_into(&ex, &offsets, 0u32, |a, b| a + b)?;
        // 3. Stable scatter.
        let mut outputs = vec![mem_id(dst.buf)];
        if let Some((_, vd)) = &vals {
            outputs.push(mem_id(vd.buf));
        }
        events.push(launch(
            &ex,
            "pattern_sort_scatter",
            g,
            &Reads::default(),
            &outputs,
            |cx| {
                let keys = cx.read(src.buf);
                let koff = cx.size("keys_off", src.off);
                let kout = cx.write(dst.buf);
                let kout_off = cx.size("keys_out_off", dst.off);
                let vio = vals.as_ref().map(|(vs, vd)| {
                    (
                        cx.read(vs.buf),
                        cx.size("vals_off", vs.off),
                        cx.write(vd.buf),
                        cx.size("vals_out_off", vd.off),
                    )
                });
                let offs = cx.read(offsets.buffer());
                let groups = cx.size("groups", g);
                let shift = cx.scalar("shift", shift_bits);
                let (start, end) = part(cx, n, p.block, p.per);
                let l = local_id(0);
                let (cnt, _) = digit_scan::<K>(cx, keys, koff, shift, start, end, gs);
                // Where this work-item's elements of each digit go.
                let pos = private_array::<u32>("pos", DIGITS);
                for d in 0..DIGITS {
                    let first = offs.at(groups * d + group_id(0));
                    pos.set(d, first + cnt.at(l + d * gs) - cnt.at(d * gs));
                }
                for_range::<u32>(start, end, |j| {
                    let x = keys.at(koff + j);
                    let d = digit::<K>(x, shift);
                    let at = pos.at(d);
                    kout.set(kout_off + at, x);
                    if let Some((vin, voff, vout, vout_off)) = vio {
                        vout.set(vout_off + at, vin.at(voff + j));
                    }
                    pos.set(d, at + 1u32);
                });
            },
        )?);
    }
    Event::wait_all(&events)
}

/// Sorts `keys` ascending and applies the same permutation to `values`, stably (equal keys
/// keep their order), in place. Both must live on the exec's device and have the same length,
/// in different memory.
pub fn sort_by_key<K: SortKey, V: Element>(
    ex: &Exec,
    keys: &DeviceVec<K>,
    values: &DeviceVec<V>,
) -> Result<()> {
    sort_keys(ex, keys, Some(values))
}

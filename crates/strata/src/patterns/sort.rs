//! Stable LSD radix sort of keys and of key-value pairs, ascending or descending
//! ([`SortOrder`]), and the key encodings it uses.
//!
//! Keys (`u32`, `i32`, `f32`, `u64`, `i64`, `f64`) are compared through an order-preserving
//! unsigned encoding ([`SortKey::sort_bits`]): unsigned integers as they are, signed integers
//! with the sign bit flipped, floats with the sign bit flipped for positive values and all bits
//! flipped for negative ones (IEEE total order, as `f32::total_cmp` and `f64::total_cmp`:
//! `-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN`, so NaNs with the sign bit set come
//! first and the others last, ordered by their payload). A descending sort ranks by the
//! inverted encoding: the exact reverse of that order, still stable (equal keys, and only
//! bit-identical floats are equal, keep their input order). The encoding is applied when a
//! digit is extracted: keys are stored unchanged.
//!
//! **Methods** ([`SortMethod`]): [`SortMethod::Tiles`] and [`SortMethod::Parts`] below, the
//! portable ones (no work-group waits for another), and [`SortMethod::Onesweep`] (module
//! `onesweep`), which reads the keys once per digit and ranks tiles as `Tiles` does (the
//! shared `TileRanker`), for devices whose work-groups make progress while others wait
//! ([`onesweep_safe`](super::onesweep_safe)).
//!
//! **Passes.** Each pass sorts stably by one digit of
//! [`SortStaging::digit_bits`](super::SortStaging::digit_bits) bits (8 by default: 4 passes
//! for 32-bit keys, 8 for 64-bit keys), lowest digit first, alternating between the vector and
//! a temporary (a final copy when the pass count is odd). A pass is three launches, with no
//! host synchronization between them: a *count* kernel writes every work-group's digit counts
//! digit-major (`counts[d * groups + g]`); a *row scan* (`pattern_sort_scan`, one work-group
//! per digit) turns each digit's row into exclusive prefixes and writes the row's total; a
//! *move* kernel scans the digit totals (the digits' first output positions), adds its row
//! prefixes and writes every key (and value) to its place. The
//! [`SortMethod`] decides how the count and move kernels divide the work.
//!
//! **[`SortMethod::Tiles`]** (GPUs). The keys are cut into *tiles*
//! of `group_size * keys_per_thread` keys; each of at most
//! [`SortStaging::max_groups`](super::SortStaging::max_groups) work-groups owns a run of whole
//! tiles.
//!
//! 1. *upsweep* (`pattern_sort_upsweep`): each work-group counts the digits of its run
//!    (coalesced loads, local atomics into 32 interleaved copies of the histogram, so that
//!    the work-items of a warp never contend for one counter);
//! 2. *downsweep* (`pattern_sort_downsweep`): for each of its tiles in order, the work-group
//!    loads the tile coalesced into local memory (counting its digits with local atomics),
//!    ranks it stably in local memory, and writes every key to its digit's running output
//!    position. The positions of a digit's keys within the tile are consecutive, so
//!    neighbouring work-items write neighbouring addresses.
//!
//! *Ranking a tile* is an LSD sort of the tile in local memory by the pass's digit, in
//! sub-digits of at most 4 bits (two for an 8-bit digit). Per sub-digit, work-item `l` takes
//! the keys `l * k .. l * k + k` of the tile's current order (`k` keys per work-item, held in
//! registers) and counts them per sub-digit value `b` into its own column of a `(2^bits + 1) x
//! group_size` table (no atomics; the work-items of a warp hit distinct banks); the table is
//! scanned in (value, work-item) order (each work-item sums a segment of `2^bits + 1`
//! consecutive entries, an odd length, so the segments' banks are distinct; a work-group scan
//! of the sums; the segments rewritten as prefixes); then each work-item takes its keys in
//! order again and moves each to its entry, counting the entry up. That order is stable, so
//! after the last sub-digit the tile is sorted by the digit, stably. Tile positions in local
//! memory are padded by one slot every 32 so that both the strided and the blocked accesses
//! avoid bank conflicts. Positions past the end of the last tile hold the largest key
//! ([`SortKey::LARGEST`]), which ranks behind every real key (stability) and is never written.
//! Work-group scans are Hillis–Steele over two arrays with a half of zeros, so a neighbour at
//! any distance is a load at a constant offset.
//!
//! **[`SortMethod::Parts`]** (CPU devices). Each work-group owns a
//! contiguous block and each work-item a contiguous part of it; a work-item counts its part's
//! digits into its own column of a `2^bits x group_size` table, the table is scanned in
//! (digit, work-item) order (`pattern_sort_part_count` writes the block's counts from it),
//! and `pattern_sort_part_scatter` counts and scans again, then moves its part's keys in
//! order, each to its digit's next position (a private array of positions). Work-items stream
//! their own parts with no barrier between keys, which suits CPUs, whose work-items run their
//! loops one after another; on a GPU the same loads would not coalesce.

use super::tune::TunedOp;
use super::{check_u32, launch, mem_id, Cx, DeviceVec, Exec, Reads, SortMethod, Staging};
use crate::builder::{
    barrier_local, for_range, for_step, group_id, if_, lit, local_id, select, var_named,
    BufferParam, Expr, Integer, LocalArray, Numeric, Value,
};
use crate::error::{Error, Result};
use crate::{Buffer, Event};

/// A key type the radix sort orders: `u32`, `i32`, `f32`, `u64`, `i64`, `f64`.
pub trait SortKey: Numeric {
    /// The unsigned type of the encoding.
    type Bits: Integer;
    /// Number of bits of the encoding.
    const BITS: u32;
    /// The key whose encoding is all ones (a largest key: an ascending sort pads partial
    /// tiles with it).
    const LARGEST: Self;
    /// The key whose encoding is all zeros (a smallest key: a descending sort pads partial
    /// tiles with it).
    const SMALLEST: Self;
    /// The order-preserving encoding of `x` (see the module docs).
    fn sort_bits(x: Expr<Self>) -> Expr<Self::Bits>;
}

/// A 32-bit key that [`View::argmin`](super::View::argmin) and
/// [`View::argmax`](super::View::argmax) can pack with an index into a
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
    const LARGEST: u32 = u32::MAX;
    const SMALLEST: u32 = 0;
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
    const LARGEST: i32 = i32::MAX;
    const SMALLEST: i32 = i32::MIN;
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
    const LARGEST: f32 = f32::from_bits(0x7FFF_FFFF);
    const SMALLEST: f32 = f32::from_bits(0xFFFF_FFFF);
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
    const LARGEST: u64 = u64::MAX;
    const SMALLEST: u64 = 0;
    fn sort_bits(x: Expr<u64>) -> Expr<u64> {
        x
    }
}
impl SortKey for i64 {
    type Bits = u64;
    const BITS: u32 = 64;
    const LARGEST: i64 = i64::MAX;
    const SMALLEST: i64 = i64::MIN;
    fn sort_bits(x: Expr<i64>) -> Expr<u64> {
        x.bitcast::<u64>() ^ 0x8000_0000_0000_0000u64
    }
}

impl SortKey for f64 {
    type Bits = u64;
    const BITS: u32 = 64;
    const LARGEST: f64 = f64::from_bits(0x7FFF_FFFF_FFFF_FFFF);
    const SMALLEST: f64 = f64::from_bits(u64::MAX);
    fn sort_bits(x: Expr<f64>) -> Expr<u64> {
        let b = x.bitcast::<u64>();
        let negative = (b >> lit(63u64)).eq(1u64);
        b ^ select(negative, lit(u64::MAX), lit(0x8000_0000_0000_0000u64))
    }
}

/// Widest sub-digit a tile is ranked by at once: `2^4 + 1` counters per work-item.
const SUB_BITS: u32 = 4;
/// Most interleaved copies of the upsweep's histogram.
const MAX_LANES: u32 = 32;

/// The order of a sort: ascending ([`DeviceVec::sort`], [`sort_by_key`]) or descending
/// ([`DeviceVec::sort_desc`], [`sort_by_key_desc`]). Both are stable: equal keys keep their
/// input order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SortOrder {
    /// Smallest key first.
    Ascending,
    /// Largest key first.
    Descending,
}

impl SortOrder {
    /// The key that ranks behind every other in this order (partial tiles are padded with it).
    pub(super) fn padding<K: SortKey>(self) -> K {
        match self {
            SortOrder::Ascending => K::LARGEST,
            SortOrder::Descending => K::SMALLEST,
        }
    }
}

/// The digit of `x` at `shift`, `bits` wide, in `order` (descending: of the inverted encoding,
/// so that a larger key has a smaller digit string).
pub(super) fn digit<K: SortKey>(
    x: Expr<K>,
    shift: Expr<K::Bits>,
    bits: u32,
    order: SortOrder,
) -> Expr<u32> {
    let mask: K::Bits = crate::ir::eval::Num::from_i64((1i64 << bits) - 1);
    let enc = match order {
        SortOrder::Ascending => K::sort_bits(x),
        SortOrder::Descending => K::sort_bits(x) ^ lit(crate::ir::eval::Num::from_i64(-1)),
    };
    ((enc >> shift) & mask).cast::<u32>()
}

/// The local-memory slot of tile position `p`: one padding slot every 32 positions.
fn pad(p: Expr<u32>) -> Expr<u32> {
    p + (p >> 5u32)
}

/// Slots of a padded tile of `tile` positions.
pub(super) fn padded_len(tile: u32) -> u32 {
    tile + tile / 32 + 1
}

/// The sub-digits (shift within the digit, bits) a `width`-bit digit is ranked by, lowest
/// first: as few as possible, each at most [`SUB_BITS`] wide, widths as even as possible.
fn sub_digits(width: u32) -> Vec<(u32, u32)> {
    let parts = width.div_ceil(SUB_BITS);
    let mut out = Vec::new();
    let mut shift = 0;
    for i in 0..parts {
        let bits = (width - shift).div_ceil(parts - i);
        out.push((shift, bits));
        shift += bits;
    }
    out
}

/// How a sort divides its keys.
#[derive(Clone, Copy, Debug)]
pub(super) struct SortPlan {
    pub n: usize,
    /// Work-items per work-group.
    pub gs: u32,
    /// Keys per work-item per tile.
    pub kpt: u32,
    /// Tiles (the last may be partial).
    pub tiles: usize,
    /// Work-groups; work-group `g` owns tiles `g * per_group ..`.
    pub groups: usize,
    pub per_group: usize,
    /// Interleaved copies of the upsweep's histogram.
    pub lanes: u32,
}

impl SortPlan {
    /// Keys per tile.
    pub(super) fn tile(&self) -> u32 {
        self.gs * self.kpt
    }
}

/// Rows of the ranking table for a `width`-bit digit: values of its widest sub-digit, plus one.
pub(super) fn table_rows(width: u32) -> u32 {
    (1u32 << sub_digits(width).iter().map(|s| s.1).max().unwrap_or(1)) + 1
}

/// Local memory of the downsweep, in bytes, for digits of `bits` bits and `pair` bytes per
/// key and value.
fn downsweep_bytes(gs: u32, kpt: u32, pair: u64, bits: u32) -> u64 {
    let (gs, radix) = (gs as u64, 1u64 << bits);
    padded_len(gs as u32 * kpt) as u64 * pair
        + table_rows(bits) as u64 * gs * 4
        + 3 * radix * 4
        + 4 * gs * 4
}

/// Local memory a sort kernel may use: the device's, at most 48 KiB (CUDA's limit for the
/// fixed-size local arrays strata's kernels declare).
pub(super) fn local_budget(ex: &Exec) -> u64 {
    ex.device().info().local_mem_size.min(48 * 1024)
}

/// The plan for `n > 1` keys: the staged tile, lowered until the downsweep fits the local
/// memory budget (keys per work-item first, to powers of two, then the work-group size).
fn sort_plan(ex: &Exec, n: usize, pair: u64) -> Result<SortPlan> {
    let st = ex.sort_staging();
    let mem = local_budget(ex);
    let bits = st.digit_bits;
    let mut gs = st.group_size;
    let mut kpt = st.keys_per_thread;
    while downsweep_bytes(gs, kpt, pair, bits) > mem {
        if kpt > 1 {
            // Lowered to a power of two: a work-item's keys then never straddle a padding
            // slot (cheaper slot arithmetic), and fewer registers than the largest fit.
            kpt = if kpt.is_power_of_two() {
                kpt / 2
            } else {
                1 << kpt.ilog2()
            };
        } else if gs > 1 {
            gs /= 2;
            kpt = st.keys_per_thread;
        } else {
            return Err(Error::InvalidWorkSize {
                kernel: "pattern_sort_downsweep".into(),
                reason: format!(
                    "{mem} bytes of local memory do not hold a one-key tile of {pair}-byte keys and values"
                ),
            });
        }
    }
    let tile = (gs * kpt) as usize;
    check_u32("sort", n.saturating_add(tile))?;
    let tiles = n.div_ceil(tile);
    // A work-item's loop iterations per tile: a few per key and per digit it ranks.
    let per_tile = 4 * kpt as usize + 4 * (1usize << bits).div_ceil(gs as usize) + 32;
    let groups = tiles
        .min(st.max_groups as usize)
        .max(ex.groups_for_loops(tiles, per_tile).min(tiles));
    let per_group = tiles.div_ceil(groups);
    let mut lanes = MAX_LANES;
    while lanes > 1 && (4u64 << bits) * lanes as u64 > mem {
        lanes /= 2;
    }
    Ok(SortPlan {
        n,
        gs,
        kpt,
        tiles,
        groups: tiles.div_ceil(per_group),
        per_group,
        lanes,
    })
}

/// Two local arrays for work-group prefix sums of one `u32` per work-item, `2 * gs` each with
/// the first `gs` entries zero: a work-item's left neighbour at any distance is then a plain
/// load at a constant offset (no clamped index to keep live across the sort's loops).
#[derive(Clone, Copy)]
pub(super) struct GroupScan {
    a: LocalArray<u32>,
    b: LocalArray<u32>,
    gs: u32,
}

impl GroupScan {
    /// Declares the arrays and zeroes their halves of zeros; call it before the kernel's first
    /// barrier.
    pub(super) fn new(cx: &mut Cx, gs: u32) -> GroupScan {
        let a = cx.local::<u32>("scan_a", 2 * gs);
        let b = cx.local::<u32>("scan_b", 2 * gs);
        let l = local_id(0);
        a.set(l, 0u32);
        b.set(l, 0u32);
        GroupScan { a, b, gs }
    }

    /// The exclusive prefix sum of `x` over the work-items before this one, and the total
    /// (Hillis–Steele, one barrier per step). Every work-item must call it; a barrier must
    /// separate its last reads from the next call.
    fn exclusive_sum(&self, x: Expr<u32>) -> (Expr<u32>, Expr<u32>) {
        let gs = self.gs;
        let at = local_id(0) + gs;
        self.a.set(at, x);
        barrier_local();
        let (mut src, mut dst) = (self.a, self.b);
        let mut s = 1u32;
        while s < gs {
            dst.set(at, src.at(at) + src.at(at - s));
            barrier_local();
            std::mem::swap(&mut src, &mut dst);
            s *= 2;
        }
        (src.at(at) - x, src.at(2 * gs - 1))
    }

    /// [`GroupScan::exclusive_sum`] of two values at once, each of whose totals is below
    /// 2^16: one scan of `x + (y << 16)`.
    fn exclusive_sum2(&self, x: Expr<u32>, y: Expr<u32>) -> (Expr<u32>, Expr<u32>) {
        let (p, _) = self.exclusive_sum(x + (y << 16u32));
        (p & 0xFFFFu32, p >> 16u32)
    }

    /// The exclusive scan of `len` values `value(e)`: work-item `l` owns `ceil(len / gs)`
    /// consecutive values, the owners' sums are scanned, and each owner calls `write(e,
    /// prefix)` for its values (unrolled when every work-item owns the same few values; else
    /// device loops that read each value twice).
    pub(super) fn scan_owned(
        &self,
        len: u32,
        value: &dyn Fn(Expr<u32>) -> Expr<u32>,
        write: &dyn Fn(Expr<u32>, Expr<u32>),
    ) {
        let l = local_id(0);
        let per = len.div_ceil(self.gs);
        if len.is_multiple_of(self.gs) && per <= 8 {
            // Every work-item owns `per` values: unrolled, no bounds.
            let e: Vec<Expr<u32>> = (0..per).map(|j| l * per + j).collect();
            let v: Vec<Expr<u32>> = e.iter().map(|&e| value(e)).collect();
            let sum = v.iter().skip(1).fold(v[0], |a, b| a + *b);
            let (mut run, _) = self.exclusive_sum(sum);
            for (e, v) in e.iter().zip(&v) {
                write(*e, run);
                run = run + *v;
            }
            return;
        }
        let e0 = (l * per).min(lit(len));
        let e1 = (e0 + per).min(lit(len));
        let sum = var_named::<u32>("owned_sum", 0u32);
        for_range(e0, e1, |e: Expr<u32>| sum.set(sum.get() + value(e)));
        let (before, _) = self.exclusive_sum(sum.get());
        let run = var_named::<u32>("prefix", before);
        for_range(e0, e1, |e: Expr<u32>| {
            let v = value(e);
            write(e, run.get());
            run.set(run.get() + v);
        });
    }
}

/// One side of a pass: a buffer and where the elements start in it.
#[derive(Clone, Copy)]
pub(super) struct Side<'a, T> {
    pub buf: &'a Buffer<T>,
    pub off: usize,
}

/// The upsweep: each work-group's digit counts, digit-major, into `counts`.
fn upsweep<K: SortKey>(
    ex: &Exec,
    p: &SortPlan,
    src: Side<'_, K>,
    counts: &Buffer<u32>,
    (shift, width): (K::Bits, u32),
    order: SortOrder,
) -> Result<Event> {
    let radix = 1u32 << width;
    let (gs, w) = (p.gs, p.lanes);
    let span = p.per_group * p.tile() as usize;
    launch(
        ex,
        "pattern_sort_upsweep",
        p.groups,
        &Reads::default(),
        &[mem_id(counts)],
        |cx| {
            let keys = cx.read(src.buf);
            let koff = cx.size("keys_off", src.off);
            let out = cx.write(counts);
            let groups = cx.size("groups", p.groups);
            let n = cx.size("n", p.n);
            let span = cx.size("span", span);
            let shift = cx.scalar("shift", shift);
            let (l, g) = (local_id(0), group_id(0));
            let h = cx.local::<u32>("digit_counts", radix * w);
            for_step(l, lit(radix * w), lit(gs), |e: Expr<u32>| h.set(e, 0u32));
            barrier_local();
            let start = g * span;
            let end = start + span.min(n - start);
            let lane = l & (w - 1);
            super::scan::seq_by(cx, start + l, end, gs, p.kpt, &mut |_, j| {
                let d = digit::<K>(keys.at(koff + j), shift, width, order);
                h.atomic_add(d * w + lane, 1u32);
            });
            barrier_local();
            // Work-item d sums digit d's copies, each starting at another copy (distinct
            // banks for neighbouring work-items).
            for_step(l, lit(radix), lit(gs), |d: Expr<u32>| {
                let mut sum = h.at(d * w + (d & (w - 1)));
                for c in 1..w {
                    sum = sum + h.at(d * w + ((d + c) & (w - 1)));
                }
                out.set(d * groups + g, sum);
            });
        },
    )
}

/// The row scan: one work-group per digit; `offsets[d * groups + g]` = the counts of digit
/// `d` in the work-groups before `g`, `totals[d]` = all of digit `d`.
fn row_scan(
    ex: &Exec,
    (gs, groups): (u32, usize),
    counts: &Buffer<u32>,
    offsets: &Buffer<u32>,
    totals: &Buffer<u32>,
    radix: u32,
) -> Result<Event> {
    launch(
        ex,
        "pattern_sort_scan",
        radix as usize,
        &Reads::default(),
        &[mem_id(offsets), mem_id(totals)],
        |cx| {
            let c = cx.read(counts);
            let o = cx.write(offsets);
            let t = cx.write(totals);
            let groups = cx.size("groups", groups);
            let (l, d) = (local_id(0), group_id(0));
            let scan = GroupScan::new(cx, gs);
            let row = d * groups;
            let per = (groups + (gs - 1)) / gs;
            let e0 = (l * per).min(groups);
            let e1 = (e0 + per).min(groups);
            let sum = var_named::<u32>("owned_sum", 0u32);
            for_range(e0, e1, |e: Expr<u32>| sum.set(sum.get() + c.at(row + e)));
            let (before, total) = scan.exclusive_sum(sum.get());
            let run = var_named::<u32>("prefix", before);
            for_range(e0, e1, |e: Expr<u32>| {
                let v = c.at(row + e);
                o.set(row + e, run.get());
                run.set(run.get() + v);
            });
            if_(l.eq(0u32), || t.set(d, total));
        },
    )
}

/// Key and value input and output of a downsweep.
pub(super) struct Moves<'a, K, V> {
    pub keys: (Side<'a, K>, Side<'a, K>),
    pub values: Option<(Side<'a, V>, Side<'a, V>)>,
}

/// The kernel parameters of a pass's key (and value) input and output: buffers and offsets.
pub(super) struct PassIo<K: Value, V: Value> {
    pub kin: BufferParam<K>,
    pub kin_off: Expr<u32>,
    pub kout: BufferParam<K>,
    pub kout_off: Expr<u32>,
    pub vio: Option<ValueIo<V>>,
}

/// Values in, their offset, values out, their offset.
pub(super) type ValueIo<V> = (BufferParam<V>, Expr<u32>, BufferParam<V>, Expr<u32>);

impl<K: SortKey, V: Value> PassIo<K, V> {
    /// Declares the parameters of `mv` (in this order: keys in, keys out, values).
    pub(super) fn declare(cx: &mut Cx, mv: &Moves<'_, K, V>) -> PassIo<K, V> {
        let (ks, kd) = mv.keys;
        let kin = cx.read(ks.buf);
        let kin_off = cx.size("keys_off", ks.off);
        let kout = cx.write(kd.buf);
        let kout_off = cx.size("keys_out_off", kd.off);
        let vio = mv.values.map(|(vs, vd)| {
            (
                cx.read(vs.buf),
                cx.size("vals_off", vs.off),
                cx.write(vd.buf),
                cx.size("vals_out_off", vd.off),
            )
        });
        PassIo {
            kin,
            kin_off,
            kout,
            kout_off,
            vio,
        }
    }
}

/// The local memory and staged shape with which a work-group ranks one tile by one digit (the
/// downsweep's steps 1 to 4, shared with the Onesweep pass).
pub(super) struct TileRanker<K: SortKey, V: Value> {
    pub gs: u32,
    pub kpt: u32,
    pub width: u32,
    pub order: SortOrder,
    pub shift: Expr<K::Bits>,
    pub skeys: LocalArray<K>,
    pub svals: Option<LocalArray<V>>,
    pub table: LocalArray<u32>,
    /// The tile's count of each digit.
    pub tcount: LocalArray<u32>,
    /// Per digit: the output position of a tile position (added to it).
    pub shift_to: LocalArray<u32>,
    pub scan: GroupScan,
}

impl<K: SortKey, V: Value> TileRanker<K, V> {
    /// The tile's slot of tile position `l + i * gs` (strided), as a base plus a constant
    /// where the padding allows.
    fn strided(&self, i: u32) -> Expr<u32> {
        let (gs, l) = (self.gs, local_id(0));
        if gs % 32 == 0 {
            pad(l) + i * (gs + gs / 32)
        } else {
            pad(l + i * gs)
        }
    }

    /// The tile's slot of tile position `l * kpt + i` (blocked).
    fn blocked(&self, i: u32) -> Expr<u32> {
        let (kpt, l) = (self.kpt, local_id(0));
        if 32 % kpt == 0 {
            pad(l * kpt) + i
        } else {
            pad(l * kpt + i)
        }
    }

    /// Whether the tile's digit starts ride on the first ranking scan: when every work-item
    /// owns the same few digits and no sum reaches 2^16.
    fn fused_starts(&self) -> bool {
        let radix = 1u32 << self.width;
        self.gs * self.kpt < 1 << 16 && radix.is_multiple_of(self.gs) && radix / self.gs <= 8
    }

    /// Steps 1 to 3 for the tile of `valid` keys at `base`: loads it, counts its digits into
    /// `tcount`, calls `starts(d, before)` for every digit `d` (`before`: the tile's keys with
    /// a smaller digit; several work-items call it, before a barrier) and ranks the tile
    /// stably in local memory. Ends with a barrier.
    pub(super) fn rank(
        &self,
        io: &PassIo<K, V>,
        base: Expr<u32>,
        valid: Expr<u32>,
        starts: &dyn Fn(Expr<u32>, Expr<u32>),
    ) {
        let (gs, kpt, width, shift) = (self.gs, self.kpt, self.width, self.shift);
        let radix = 1u32 << width;
        let l = local_id(0);
        let (skeys, svals, table, tcount, scan) =
            (self.skeys, self.svals, self.table, self.tcount, &self.scan);
        let order = self.order;
        let last = valid - 1u32;
        for_step(l, lit(radix), lit(gs), |d: Expr<u32>| tcount.set(d, 0u32));
        barrier_local();
        // 1. The tile into local memory: every load first (coalesced; positions past the end
        // read the last key and become the padding key), then the digit counts and the local
        // stores.
        let loaded: Vec<(Expr<K>, Option<Expr<V>>)> = (0..kpt)
            .map(|i| {
                let q = (l + i * gs).min(last);
                let v = io.vio.map(|(vin, voff, _, _)| vin.at(voff + base + q));
                (io.kin.at(io.kin_off + base + q), v)
            })
            .collect();
        for (i, (k, v)) in (0..kpt).zip(&loaded) {
            let k = select((l + i * gs).lt(valid), *k, lit(order.padding::<K>()));
            tcount.atomic_add(digit::<K>(k, shift, width, order), 1u32);
            skeys.set(self.strided(i), k);
            if let (Some(sv), Some(v)) = (svals, v) {
                sv.set(self.strided(i), *v);
            }
        }
        barrier_local();
        // 2. Where each digit starts in the sorted tile; when the counts allow, computed by
        // the first sub-digit's work-group scan (both sums in one word) instead of one more.
        let fused = self.fused_starts();
        if !fused {
            scan.scan_owned(radix, &|d| tcount.at(d), starts);
        }
        // 3. Rank the tile by each sub-digit in turn (see the module docs).
        let load = |i: u32| {
            (
                skeys.at(self.blocked(i)),
                svals.map(|sv| sv.at(self.blocked(i))),
            )
        };
        let subs = sub_digits(width);
        let mut mine: Vec<_> = (0..kpt).map(load).collect();
        for (si, &(sshift, sbits)) in subs.iter().enumerate() {
            let nb = 1u32 << sbits;
            let seg = nb + 1;
            let column =
                |k: Expr<K>| ((digit::<K>(k, shift, width, order) >> sshift) & (nb - 1)) * gs + l;
            for r in 0..seg {
                table.set(l + r * gs, 0u32);
            }
            for (k, _) in &mine {
                let at = column(*k);
                table.set(at, table.at(at) + 1u32);
            }
            barrier_local();
            let s0 = l * seg;
            let own: Vec<Expr<u32>> = (0..seg).map(|j| table.at(s0 + j)).collect();
            let sum = own.iter().skip(1).fold(own[0], |a, v| a + *v);
            let before = if fused && si == 0 {
                let per = radix / gs;
                let d: Vec<Expr<u32>> = (0..per).map(|j| l * per + j).collect();
                let c: Vec<Expr<u32>> = d.iter().map(|&d| tcount.at(d)).collect();
                let csum = c.iter().skip(1).fold(c[0], |a, v| a + *v);
                let (before, cbefore) = scan.exclusive_sum2(sum, csum);
                let mut run = cbefore;
                for (d, c) in d.iter().zip(&c) {
                    starts(*d, run);
                    run = run + *c;
                }
                before
            } else {
                scan.exclusive_sum(sum).0
            };
            let mut run = before;
            for (j, v) in (0..seg).zip(&own) {
                table.set(s0 + j, run);
                run = run + *v;
            }
            barrier_local();
            // A key's position: its entry, counting up over the work-item's keys.
            for (k, v) in &mine {
                let at = column(*k);
                let to = table.at(at);
                table.set(at, to + 1u32);
                skeys.set(pad(to), *k);
                if let (Some(sv), Some(v)) = (svals, v) {
                    sv.set(pad(to), *v);
                }
            }
            barrier_local();
            if si + 1 < subs.len() {
                mine = (0..kpt).map(load).collect();
            }
        }
    }

    /// Step 4: every key of the ranked tile (`valid` keys) to its digit's output position,
    /// tile position plus `shift_to[digit]` (coalesced per digit).
    pub(super) fn scatter(&self, io: &PassIo<K, V>, valid: Expr<u32>) {
        let (gs, width, shift, order) = (self.gs, self.width, self.shift, self.order);
        let l = local_id(0);
        for i in 0..self.kpt {
            let q = l + i * gs;
            if_(q.lt(valid), || {
                let k = self.skeys.at(self.strided(i));
                let d = digit::<K>(k, shift, width, order);
                let to = self.shift_to.at(d) + q;
                io.kout.set(io.kout_off + to, k);
                if let (Some((_, _, vout, vout_off)), Some(sv)) = (io.vio, self.svals) {
                    vout.set(vout_off + to, sv.at(self.strided(i)));
                }
            });
        }
    }
}

/// The downsweep (see the module docs).
#[allow(clippy::too_many_arguments)]
fn downsweep<K: SortKey, V: Value>(
    ex: &Exec,
    p: &SortPlan,
    mv: &Moves<'_, K, V>,
    offsets: &Buffer<u32>,
    totals: &Buffer<u32>,
    shift: K::Bits,
    width: u32,
    order: SortOrder,
) -> Result<Event> {
    let radix = 1u32 << width;
    let gs = p.gs;
    let tile = p.tile();
    let rows = table_rows(width);
    let mut outputs = vec![mem_id(mv.keys.1.buf)];
    if let Some((_, vd)) = &mv.values {
        outputs.push(mem_id(vd.buf));
    }
    launch(
        ex,
        "pattern_sort_downsweep",
        p.groups,
        &Reads::default(),
        &outputs,
        |cx| {
            let io = PassIo::declare(cx, mv);
            let offs = cx.read(offsets);
            let tot = cx.read(totals);
            let groups = cx.size("groups", p.groups);
            let n = cx.size("n", p.n);
            let per_group = cx.size("tiles_per_group", p.per_group);
            let ntiles = cx.size("tiles", p.tiles);
            let shift = cx.scalar("shift", shift);
            let (l, g) = (local_id(0), group_id(0));
            let skeys = cx.local::<K>("tile_keys", padded_len(tile));
            let svals = io.vio.map(|_| cx.local::<V>("tile_vals", padded_len(tile)));
            let table = cx.local::<u32>("rank_table", rows * gs);
            let tcount = cx.local::<u32>("tile_counts", radix);
            let next = cx.local::<u32>("digit_next", radix);
            let shift_to = cx.local::<u32>("digit_shift", radix);
            let scan = GroupScan::new(cx, gs);
            let r = TileRanker {
                gs,
                kpt: p.kpt,
                width,
                order,
                shift,
                skeys,
                svals,
                table,
                tcount,
                shift_to,
                scan,
            };
            // Where the work-group's first key of each digit goes: the digits before it, plus
            // this digit's keys in the work-groups before this one.
            r.scan.scan_owned(radix, &|d| tot.at(d), &|d, before| {
                next.set(d, before + offs.at(d * groups + g))
            });
            let t0 = g * per_group;
            let t1 = (t0 + per_group).min(ntiles);
            for_range(t0, t1, |t: Expr<u32>| {
                let base = t * tile;
                let valid = (n - base).min(lit(tile));
                // The shift from a tile position to its output position.
                let starts = |d: Expr<u32>, before: Expr<u32>| shift_to.set(d, next.at(d) - before);
                r.rank(&io, base, valid, &starts);
                r.scatter(&io, valid);
                barrier_local();
                for_step(l, lit(radix), lit(gs), |d: Expr<u32>| {
                    next.set(d, next.at(d) + tcount.at(d))
                });
            });
        },
    )
}

/// How [`SortMethod::Parts`] divides its keys: `groups` blocks of `block` keys, one per
/// work-group, each cut into parts of `per` keys, one per work-item.
#[derive(Clone, Copy, Debug)]
struct PartsPlan {
    n: usize,
    gs: u32,
    groups: usize,
    block: usize,
    per: usize,
}

/// Local memory of the parts kernels, in bytes, for digits of `bits` bits.
fn parts_bytes(gs: u32, bits: u32) -> u64 {
    let (gs, radix) = (gs as u64, 1u64 << bits);
    radix * gs * 4 + radix * 4 + 4 * gs * 4
}

/// The plan of [`SortMethod::Parts`] for `n > 1` keys: the staged work-group size, halved
/// until the counts fit the local memory budget; work-groups so that each work-item's part
/// has at least `2^bits` keys where possible (its count scan costs that much).
fn parts_plan(ex: &Exec, n: usize) -> Result<PartsPlan> {
    let st = ex.sort_staging();
    let mem = local_budget(ex);
    let mut gs = st.group_size;
    while parts_bytes(gs, st.digit_bits) > mem {
        if gs == 1 {
            return Err(Error::InvalidWorkSize {
                kernel: "pattern_sort_parts".into(),
                reason: format!(
                    "{mem} bytes of local memory do not hold the counts of one work-item"
                ),
            });
        }
        gs /= 2;
    }
    let min_part = 1usize << st.digit_bits;
    // Two loops over a work-item's part (count, scatter).
    let groups = n
        .div_ceil(gs as usize * min_part)
        .clamp(1, st.max_groups as usize)
        .max(ex.groups_for_loops(n.div_ceil(gs as usize), 2));
    let block = n.div_ceil(groups);
    Ok(PartsPlan {
        n,
        gs,
        groups: n.div_ceil(block),
        block,
        per: block.div_ceil(gs as usize),
    })
}

/// [`SortMethod::Parts`]: the work-item's part of its block (`start..end`), its digit counts
/// in `table[d * gs + l]`, then the table scanned in (digit, work-item) order: entry `(d, l)`
/// becomes the number of the block's keys with a smaller digit, or with digit `d` in the parts
/// before `l`. Ends with a barrier.
#[allow(clippy::too_many_arguments)]
fn part_counts<K: SortKey>(
    keys: crate::builder::BufferParam<K>,
    koff: Expr<u32>,
    (shift, width): (Expr<K::Bits>, u32),
    order: SortOrder,
    start: Expr<u32>,
    end: Expr<u32>,
    table: LocalArray<u32>,
    scan: &GroupScan,
) {
    let gs = scan.gs;
    let radix = 1u32 << width;
    let l = local_id(0);
    for_range(0u32, radix, |d: Expr<u32>| table.set(d * gs + l, 0u32));
    for_range(start, end, |j: Expr<u32>| {
        let at = digit::<K>(keys.at(koff + j), shift, width, order) * gs + l;
        table.set(at, table.at(at) + 1u32);
    });
    barrier_local();
    scan.scan_owned(radix * gs, &|e| table.at(e), &|e, before| {
        table.set(e, before)
    });
    barrier_local();
}

/// The part of work-item `l` in its work-group's block.
fn part_range(cx: &mut Cx, p: &PartsPlan) -> (Expr<u32>, Expr<u32>, Expr<u32>, Expr<u32>) {
    let n = cx.size("n", p.n);
    let bsz = cx.size("block", p.block);
    let per = cx.size("per", p.per);
    let b0 = group_id(0) * bsz;
    let bend = (b0 + bsz).min(n);
    let start = (b0 + local_id(0) * per).min(bend);
    let end = (start + per).min(bend);
    (b0, bend, start, end)
}

/// [`SortMethod::Parts`]: each block's digit counts, digit-major, into `counts`.
fn parts_count<K: SortKey>(
    ex: &Exec,
    p: &PartsPlan,
    src: Side<'_, K>,
    counts: &Buffer<u32>,
    (shift, width): (K::Bits, u32),
    order: SortOrder,
) -> Result<Event> {
    let radix = 1u32 << width;
    let gs = p.gs;
    launch(
        ex,
        "pattern_sort_part_count",
        p.groups,
        &Reads::default(),
        &[mem_id(counts)],
        |cx| {
            let keys = cx.read(src.buf);
            let koff = cx.size("keys_off", src.off);
            let out = cx.write(counts);
            let groups = cx.size("groups", p.groups);
            let shift = cx.scalar("shift", shift);
            let (b0, bend, start, end) = part_range(cx, p);
            let table = cx.local::<u32>("counts", radix * gs);
            let scan = GroupScan::new(cx, gs);
            part_counts::<K>(keys, koff, (shift, width), order, start, end, table, &scan);
            // Digit d's count: where the next digit starts minus where d starts.
            for_step(local_id(0), lit(radix), lit(gs), |d: Expr<u32>| {
                let has_next = d.lt(radix - 1);
                let next = select::<u32>(
                    has_next,
                    table.at(select::<u32>(has_next, d + 1u32, d) * gs),
                    bend - b0,
                );
                out.set(d * groups + group_id(0), next - table.at(d * gs));
            });
        },
    )
}

/// [`SortMethod::Parts`]: every key (and value) to its position, in order within each part.
fn parts_scatter<K: SortKey, V: Value>(
    ex: &Exec,
    p: &PartsPlan,
    mv: &Moves<'_, K, V>,
    offsets: &Buffer<u32>,
    totals: &Buffer<u32>,
    (shift, width): (K::Bits, u32),
    order: SortOrder,
) -> Result<Event> {
    let radix = 1u32 << width;
    let gs = p.gs;
    let mut outputs = vec![mem_id(mv.keys.1.buf)];
    if let Some((_, vd)) = &mv.values {
        outputs.push(mem_id(vd.buf));
    }
    launch(
        ex,
        "pattern_sort_part_scatter",
        p.groups,
        &Reads::default(),
        &outputs,
        |cx| {
            let (ks, kd) = mv.keys;
            let kin = cx.read(ks.buf);
            let kin_off = cx.size("keys_off", ks.off);
            let kout = cx.write(kd.buf);
            let kout_off = cx.size("keys_out_off", kd.off);
            let vio = mv.values.map(|(vs, vd)| {
                (
                    cx.read(vs.buf),
                    cx.size("vals_off", vs.off),
                    cx.write(vd.buf),
                    cx.size("vals_out_off", vd.off),
                )
            });
            let offs = cx.read(offsets);
            let tot = cx.read(totals);
            let groups = cx.size("groups", p.groups);
            let shift = cx.scalar("shift", shift);
            let (_, _, start, end) = part_range(cx, p);
            let (l, g) = (local_id(0), group_id(0));
            let table = cx.local::<u32>("counts", radix * gs);
            let first = cx.local::<u32>("digit_first", radix);
            let scan = GroupScan::new(cx, gs);
            part_counts::<K>(
                kin,
                kin_off,
                (shift, width),
                order,
                start,
                end,
                table,
                &scan,
            );
            scan.scan_owned(radix, &|d| tot.at(d), &|d, before| {
                first.set(d, before + offs.at(d * groups + g))
            });
            barrier_local();
            let pos = crate::builder::private_array::<u32>("pos", radix);
            for_range(0u32, radix, |d: Expr<u32>| {
                pos.set(d, first.at(d) + table.at(d * gs + l) - table.at(d * gs))
            });
            for_range(start, end, |j: Expr<u32>| {
                let k = kin.at(kin_off + j);
                let d = digit::<K>(k, shift, width, order);
                let at = pos.at(d);
                kout.set(kout_off + at, k);
                if let Some((vin, voff, vout, vout_off)) = vio {
                    vout.set(vout_off + at, vin.at(voff + j));
                }
                pos.set(d, at + 1u32);
            });
        },
    )
}

/// The work-items per work-group and the work-groups per pass with which `ex` sorts `n` keys
/// of `pair` bytes with their values (for reports such as `strata bench`; for
/// [`SortMethod::Onesweep`] the work-groups of a digit pass, one per tile).
pub(crate) fn shape(ex: &Exec, n: usize, pair: u64) -> Result<(usize, usize)> {
    Ok(match ex.sort_staging().method {
        SortMethod::Tiles => {
            let p = sort_plan(ex, n.max(2), pair)?;
            (p.gs as usize, p.groups)
        }
        SortMethod::Onesweep => {
            let p = sort_plan(ex, n.max(2), pair)?;
            (p.gs as usize, p.tiles)
        }
        SortMethod::Parts => {
            let p = parts_plan(ex, n.max(2))?;
            (p.gs as usize, p.groups)
        }
    })
}

/// How one sort divides its keys, per method.
enum Plan {
    Tiles(SortPlan),
    Parts(PartsPlan),
    Onesweep(SortPlan),
}

/// The moves of pass `pass`: even passes from `home` to `away`, odd ones back.
pub(super) fn moves_of<'a, K, V>(
    pass: u32,
    keys: (Side<'a, K>, Side<'a, K>),
    vals: Option<(Side<'a, V>, Side<'a, V>)>,
) -> Moves<'a, K, V> {
    let even = pass.is_multiple_of(2);
    Moves {
        keys: if even { keys } else { (keys.1, keys.0) },
        values: vals.map(|(h, a)| if even { (h, a) } else { (a, h) }),
    }
}

/// Sorts `keys` (and `values` alongside, if given) ascending in place, stably.
pub(crate) fn sort_keys<K: SortKey, V: Value>(
    ex: &Exec,
    keys: &DeviceVec<K>,
    values: Option<&DeviceVec<V>>,
) -> Result<()> {
    sort_keys_in(ex, keys, values, SortOrder::Ascending)
}

/// Sorts `keys` (and `values` alongside, if given) in place in `order`, stably.
pub(crate) fn sort_keys_in<K: SortKey, V: Value>(
    ex: &Exec,
    keys: &DeviceVec<K>,
    values: Option<&DeviceVec<V>>,
    order: SortOrder,
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
    check_u32("sort", n)?;
    if n <= 1 {
        return Ok(());
    }
    let pair = std::mem::size_of::<K>() + values.map_or(0, |_| std::mem::size_of::<V>());
    let ex = &ex.tuned_for(TunedOp::Sort, K::TYPE, n);
    let plan = match ex.sort_staging().method {
        SortMethod::Tiles => Plan::Tiles(sort_plan(ex, n, pair as u64)?),
        SortMethod::Parts => Plan::Parts(parts_plan(ex, n)?),
        SortMethod::Onesweep => Plan::Onesweep(sort_plan(ex, n, pair as u64)?),
    };
    let (gs, groups) = match &plan {
        Plan::Tiles(p) | Plan::Onesweep(p) => (p.gs, p.groups),
        Plan::Parts(p) => (p.gs, p.groups),
    };
    let bits = ex.sort_staging().digit_bits;
    // The sort's kernels run with its own work-group size.
    let ex = ex.with_staging(Staging {
        group_size: gs,
        ..ex.staging()
    })?;
    let dev = ex.device();
    // Temporaries from the exec's scratch (kept from an earlier sort, else new).
    let scratch = ex.scratch();
    let tmp_keys = scratch.take::<K>(dev, n)?;
    let tmp_vals = match values {
        Some(_) => Some(scratch.take::<V>(dev, n)?),
        None => None,
    };
    let home_keys = Side {
        buf: keys.buffer(),
        off: keys.offset(),
    };
    let away_keys = Side {
        buf: &tmp_keys,
        off: 0,
    };
    let vals = match (values, &tmp_vals) {
        (Some(v), Some(t)) => Some((
            Side {
                buf: v.buffer(),
                off: v.offset(),
            },
            Side { buf: t, off: 0 },
        )),
        _ => None,
    };
    let mut events: Vec<Event> = Vec::new();
    let passes = K::BITS.div_ceil(bits);
    let kept = match &plan {
        Plan::Onesweep(p) => {
            let kept = super::onesweep::sort(
                &ex,
                p,
                (home_keys, away_keys),
                vals,
                (bits, order),
                &mut events,
            )?;
            Kept::Onesweep(kept)
        }
        Plan::Tiles(_) | Plan::Parts(_) => {
            let radix = 1usize << bits;
            let counts = scratch.take::<u32>(dev, radix * groups)?;
            let offsets = scratch.take::<u32>(dev, radix * groups)?;
            let totals = scratch.take::<u32>(dev, radix)?;
            for pass in 0..passes {
                let shift = pass * bits;
                let width = bits.min(K::BITS - shift);
                let mv = moves_of(pass, (home_keys, away_keys), vals);
                let shift_bits: K::Bits = crate::ir::eval::Num::from_i64(shift as i64);
                let digit = (shift_bits, width);
                let (count, scatter) = match &plan {
                    Plan::Tiles(p) => (upsweep(&ex, p, mv.keys.0, &counts, digit, order)?, None),
                    Plan::Parts(p) => (
                        parts_count(&ex, p, mv.keys.0, &counts, digit, order)?,
                        Some(p),
                    ),
                    Plan::Onesweep(_) => unreachable!("handled above"),
                };
                events.push(count);
                events.push(row_scan(
                    &ex,
                    (gs, groups),
                    &counts,
                    &offsets,
                    &totals,
                    1 << width,
                )?);
                events.push(match (&plan, scatter) {
                    (_, Some(p)) => parts_scatter(&ex, p, &mv, &offsets, &totals, digit, order)?,
                    (Plan::Tiles(p), None) => {
                        downsweep(&ex, p, &mv, &offsets, &totals, shift_bits, width, order)?
                    }
                    _ => unreachable!("one plan per method"),
                });
            }
            Kept::Counts([counts, offsets, totals])
        }
    };
    if passes % 2 == 1 {
        let q = ex.queue();
        events.push(q.enqueue_copy(&tmp_keys, 0..n, keys.buffer(), keys.offset().., &[])?);
        if let (Some(v), Some(t)) = (values, &tmp_vals) {
            events.push(q.enqueue_copy(t, 0..n, v.buffer(), v.offset().., &[])?);
        }
    }
    Event::wait_all(&events)?;
    // Every command is complete: the temporaries are free for the next sort.
    match kept {
        Kept::Counts(c) => c.into_iter().for_each(|b| scratch.keep(b)),
        Kept::Onesweep(k) => super::onesweep::keep(&ex, k),
    }
    scratch.keep(tmp_keys);
    if let Some(t) = tmp_vals {
        scratch.keep(t);
    }
    Ok(())
}

/// The temporaries of a method, kept for the next sort once its commands are complete.
enum Kept {
    Counts([Buffer<u32>; 3]),
    Onesweep(super::onesweep::Kept),
}

/// Sorts `keys` ascending and applies the same permutation to `values`, stably (equal keys
/// keep their order), in place. Both must live on the exec's device and have the same length,
/// in different memory.
pub fn sort_by_key<K: SortKey, V: Value>(
    ex: &Exec,
    keys: &DeviceVec<K>,
    values: &DeviceVec<V>,
) -> Result<()> {
    sort_keys(ex, keys, Some(values))
}

/// Sorts `keys` descending (largest first, in the order of the module docs: for floats `+NaN`
/// first and `-NaN` last) and applies the same permutation to `values`, stably: equal keys
/// keep their input order. As [`sort_by_key`] otherwise.
pub fn sort_by_key_desc<K: SortKey, V: Value>(
    ex: &Exec,
    keys: &DeviceVec<K>,
    values: &DeviceVec<V>,
) -> Result<()> {
    sort_keys_in(ex, keys, Some(values), SortOrder::Descending)
}

impl<K: SortKey> DeviceVec<K> {
    /// Sorts the vector descending in place (largest first; stable, which shows for floats:
    /// `-0.0` after `+0.0`, `+NaN` first and `-NaN` last); see [`DeviceVec::sort`].
    pub fn sort_desc(&self) -> Result<&Self> {
        sort_keys_in(
            self.exec(),
            self,
            None::<&DeviceVec<u32>>,
            SortOrder::Descending,
        )?;
        Ok(self)
    }
}

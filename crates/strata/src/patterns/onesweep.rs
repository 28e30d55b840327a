//! The Onesweep radix sort (Adinets & Merrill, "Onesweep: A Faster Least Significant Digit
//! Radix Sort for GPUs", 2022): [`SortMethod::Onesweep`](super::SortMethod::Onesweep), for
//! devices where [`onesweep_safe`] holds.
//!
//! Where the tile sort ([`SortMethod::Tiles`](super::SortMethod::Tiles)) reads the keys twice
//! per digit (an upsweep counting, a downsweep moving) and scans the counts in between, Onesweep
//! reads them once per digit plus once in all:
//!
//! 1. *Histogram* (`pattern_sort_onesweep_histogram`, one launch): every work-group counts,
//!    over its run of tiles, the digits of **every** pass at once (local atomics into
//!    interleaved copies of a `passes x 2^digit_bits` histogram, as the upsweep does), and
//!    writes its counts; `pattern_sort_onesweep_starts` (one work-group per pass) sums them
//!    over the work-groups and scans them over the digits: `starts[pass][d]`, where digit `d`'s
//!    keys begin in the pass's output.
//! 2. *One launch per digit* (`pattern_sort_onesweep`), one work-group per tile of
//!    `group_size * keys_per_thread` keys. The work-group takes its tile number from an atomic
//!    counter (launch order, as the look-back scan in `lookback.rs` does, and for the same
//!    reason: see [`DeviceInfo::group_forward_progress`](crate::DeviceInfo::group_forward_progress)),
//!    loads and ranks its tile in local memory exactly as the downsweep does (the shared
//!    `TileRanker` in `sort.rs`), then finds, for each digit `d`, how many keys with digit `d`
//!    the tiles before it hold, by **decoupled look-back** on per-digit tile prefixes: the
//!    work-item owning digit `d` publishes the tile's count of `d` (status *aggregate*; tile 0
//!    publishes its *inclusive prefix* at once), then reads the words of digit `d` of the
//!    tiles before, newest first, adding aggregates until it meets an inclusive prefix, and
//!    waiting (reading again) where a tile has published nothing yet; then it publishes its own
//!    inclusive prefix. Each key goes to `starts[pass][d]` + the tiles' prefix + its rank among
//!    the tile's keys of digit `d`: the keys of a digit leave a tile as one run (coalesced).
//!
//! A status word is one `u64`, as in the look-back scan: the count in the low 32 bits,
//! `tag | flag` above (`flag` 1 aggregate, 2 inclusive prefix; `tag` a sequence number times
//! 4, a new one for every pass of every sort), written by one atomic exchange and read by one
//! atomic load, so that value and flag are never seen apart. A word of an earlier pass carries
//! another tag and reads as "nothing yet": the status array (one word per tile and digit) is
//! never cleared; it, the tile counters (one per pass, each reset to 0 by the work-group that
//! takes the last number) and the sequence number are kept in the [`Exec`]'s scratch.
//!
//! **Which devices.** Waiting for another work-group is only safe where a work-group that has
//! started keeps making progress while others spin ([`onesweep_safe`]): exactly where
//! [`DeviceInfo::group_forward_progress`](crate::DeviceInfo::group_forward_progress) holds
//! (CUDA, the CPU backend, the interpreter), as for the look-back scan. OpenCL devices keep the
//! portable tile and parts sorts, whose work-groups never wait for one another.
//!
//! **PoCL (open).** Forced on PoCL's CPU device (a version of this file allowed it there),
//! Onesweep passed every key type, both orders and many tile counts in isolation, but the full
//! `tests/sort.rs` sequence hung twice in a look-back wait (one PoCL thread spinning, the
//! others idle) at the staging with 5-bit digits and 48 work-items. Examined since (PoCL 3.1, LLVM 15, on
//! this machine's 2 cores, the digit pass's OpenCL C dumped with `STRATA_DUMP=opencl`):
//! - *Not PoCL's early-`return` bug* (PoCL runs the code after a kernel's last barrier in
//!   every work-item, `get_local_id(0)` reading 0, when a `return` precedes the barriers): no
//!   kernel of this file has a `return`; the bounds-checked form PoCL runs
//!   (`ir::checked::instrument_bounds`) keeps a work-item's first
//!   fault in private variables until the end instead of leaving early, so every tile
//!   publishes. (A faulting *load* there keeps the last value loaded: a look-back read out of
//!   bounds would re-add a stale word and spin, but only a status word read as ready with
//!   the current tag before tile 0 published could move `look` below 0, and a fresh status
//!   array is zeroed, `clEnqueueFillBuffer` waited for.)
//! - *Scheduling*: PoCL's pthread device runs each work-group from start to end on one pool
//!   thread (the regions between barriers as loops over the work-items, so a work-item's wait
//!   runs to its end before the next work-item's region starts), and the tile numbers come
//!   from the atomic counter, so a tile waited for belongs to a group already running: by the
//!   argument of `group_forward_progress`, every wait ends. No starvation was seen.
//! - *Experiments*: 100 sorts each of 5,003, 1,000 and 257 `u32` keys with that staging
//!   passed; the whole 5-bit staging of `tests/sort.rs` (every size, key type, order, keys
//!   and pairs) passed on `opencl:0` in 171 s. The apparent hangs seen while reproducing were
//!   PoCL compiling the kernels of each new key type (seconds to minutes each on a machine
//!   with a load average of 8 on 2 cores), which a test timeout reads as a hang: two runs
//!   that timed out stopped where a new key type's kernels were compiling, and a rerun went
//!   past the same point; a stack taken in a 6-minute stall of the 256-work-item staging
//!   showed the busy thread in LLVM's instruction selection (PoCL compiling), the pool
//!   threads idle. Then all four Onesweep stagings and the launch test of `tests/sort.rs`
//!   passed on `opencl:0`, forced, in one run (1,281 s, mostly PoCL compiling).
//!
//! So no cause is known and no hang was reproduced; OpenCL keeps refusing Onesweep
//! (`group_forward_progress` promises nothing for OpenCL drivers in general) until a run of the
//! full sequence on PoCL, under a timeout and with the compile time counted apart, shows it
//! safe; then PoCL's CPU device (not OpenCL at large) can be classified as safe here.

use super::lookback::{status_word, AGGREGATE, MAX_SEQUENCE, PREFIX};
use super::sort::{
    digit, moves_of, GroupScan, Moves, PassIo, Side, SortKey, SortOrder, SortPlan, TileRanker,
};
use super::{launch, mem_id, Exec, Reads};
use crate::builder::{
    barrier_local, for_range, for_step, group_id, if_, lit, local_id, loop_, var_named, Expr, Value,
};
use crate::error::{Error, Result};
use crate::{Buffer, DeviceInfo, Event};

/// Tile counters kept: one per pass (64 passes of 1-bit digits of 64-bit keys at most).
const MAX_PASSES: usize = 64;

/// Whether Onesweep may run on a device: its work-groups make progress while others of the
/// same launch wait for them, which is
/// [`DeviceInfo::group_forward_progress`](crate::DeviceInfo::group_forward_progress) (CUDA,
/// the CPU backend, the interpreter; see there why, and the module docs on PoCL). A tile
/// number taken from the counter belongs to a work-group that is running or finished, so
/// every wait ends (by induction from tile 0, which waits for nothing).
pub fn onesweep_safe(info: &DeviceInfo) -> bool {
    info.group_forward_progress()
}

/// The memory Onesweep keeps between sorts: the status words, the tile counters and the last
/// sequence number used.
pub(crate) struct OnesweepScratch {
    status: Buffer<u64>,
    counters: Buffer<u32>,
    sequence: u32,
}

/// What a sort hands back to [`keep`] once its commands are complete.
pub(crate) struct Kept {
    state: OnesweepScratch,
    counts: Buffer<u32>,
    starts: Buffer<u32>,
}

/// Takes the exec's Onesweep scratch for `words` status words and `passes` passes: tags
/// `sequence + 1 ..= sequence + passes` are this sort's.
fn take_state(ex: &Exec, words: usize, passes: u32) -> Result<OnesweepScratch> {
    let kept = ex.scratch().take_kept::<OnesweepScratch>(|s| {
        (s.sequence + passes <= MAX_SEQUENCE).then_some(usize::MAX - s.status.len())
    });
    Ok(match kept {
        Some(s) if s.status.len() >= words => s,
        // A fresh (zeroed) status array: no word carries a tag yet. The counters are 0 after
        // every completed sort.
        Some(s) => OnesweepScratch {
            status: Buffer::new(ex, words.next_power_of_two())?,
            counters: s.counters,
            sequence: 0,
        },
        None => OnesweepScratch {
            status: Buffer::new(ex, words.next_power_of_two())?,
            counters: Buffer::new(ex, MAX_PASSES)?,
            sequence: 0,
        },
    })
}

/// Keeps a completed sort's temporaries for the next one.
pub(crate) fn keep(ex: &Exec, k: Kept) {
    let bytes = k.state.status.len() * 8 + MAX_PASSES * 4;
    ex.scratch().keep_sized(bytes, k.state);
    ex.scratch().keep(k.counts);
    ex.scratch().keep(k.starts);
}

/// Enqueues the whole Onesweep sort of `keys.0` (through `keys.1`, alternating per pass, as
/// the other methods do; the caller copies back after an odd pass count) into `events`.
pub(crate) fn sort<'a, K: SortKey, V: Value>(
    ex: &Exec,
    p: &SortPlan,
    keys: (Side<'a, K>, Side<'a, K>),
    vals: Option<(Side<'a, V>, Side<'a, V>)>,
    (bits, order): (u32, SortOrder),
    events: &mut Vec<Event>,
) -> Result<Kept> {
    let radix = 1usize << bits;
    let passes = K::BITS.div_ceil(bits);
    let words = p
        .tiles
        .checked_mul(radix)
        .filter(|&w| w <= u32::MAX as usize);
    let Some(words) = words else {
        return Err(Error::InvalidWorkSize {
            kernel: "pattern_sort_onesweep".into(),
            reason: format!(
                "{} tiles of {radix} digits: the status words would pass 2^32",
                p.tiles
            ),
        });
    };
    let dev = ex.device();
    let counts = ex
        .scratch()
        .take::<u32>(dev, passes as usize * radix * p.groups)?;
    let starts = ex.scratch().take::<u32>(dev, passes as usize * radix)?;
    let mut state = take_state(ex, words, passes)?;
    events.push(histogram::<K>(ex, p, keys.0, &counts, bits, order)?);
    events.push(digit_starts(ex, p, &counts, &starts, bits, passes)?);
    for pass in 0..passes {
        let mv = moves_of(pass, keys, vals);
        state.sequence += 1;
        let tag = state.sequence << 2;
        events.push(digit_pass(
            ex,
            p,
            &mv,
            (&starts, &state),
            (pass, bits, tag),
            order,
        )?);
    }
    Ok(Kept {
        state,
        counts,
        starts,
    })
}

/// The digit width and shift of `pass`.
fn pass_digit<K: SortKey>(pass: u32, bits: u32) -> (K::Bits, u32) {
    let shift = pass * bits;
    (
        crate::ir::eval::Num::from_i64(shift as i64),
        bits.min(K::BITS - shift),
    )
}

/// The upfront histogram: work-group `g` counts the digits of every pass over its run of
/// tiles into `counts[(pass * radix + d) * groups + g]`.
fn histogram<K: SortKey>(
    ex: &Exec,
    p: &SortPlan,
    src: Side<'_, K>,
    counts: &Buffer<u32>,
    bits: u32,
    order: SortOrder,
) -> Result<Event> {
    let radix = 1u32 << bits;
    let passes = K::BITS.div_ceil(bits);
    let entries = passes * radix;
    let gs = p.gs;
    // Interleaved copies of the histogram, as many as fit (at most the upsweep's).
    let mut w = p.lanes;
    while w > 1 && 4 * entries as u64 * w as u64 > super::sort::local_budget(ex) {
        w /= 2;
    }
    let span = p.per_group * p.tile() as usize;
    launch(
        ex,
        "pattern_sort_onesweep_histogram",
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
            let (l, g) = (local_id(0), group_id(0));
            let h = cx.local::<u32>("digit_counts", entries * w);
            for_step(l, lit(entries * w), lit(gs), |e: Expr<u32>| h.set(e, 0u32));
            barrier_local();
            let start = g * span;
            let end = start + span.min(n - start);
            let lane = l & (w - 1);
            super::scan::seq_by(cx, start + l, end, gs, p.kpt, &mut |_, j| {
                let k = keys.at(koff + j);
                for pass in 0..passes {
                    let (shift, width) = pass_digit::<K>(pass, bits);
                    let d = digit::<K>(k, lit(shift), width, order);
                    h.atomic_add((d + pass * radix) * w + lane, 1u32);
                }
            });
            barrier_local();
            for_step(l, lit(entries), lit(gs), |e: Expr<u32>| {
                let mut sum = h.at(e * w + (e & (w - 1)));
                for c in 1..w {
                    sum = sum + h.at(e * w + ((e + c) & (w - 1)));
                }
                out.set(e * groups + g, sum);
            });
        },
    )
}

/// One work-group per pass: `starts[pass * radix + d]`, the keys with a digit below `d` in
/// that pass (the counts summed over the work-groups, scanned over the digits).
fn digit_starts(
    ex: &Exec,
    p: &SortPlan,
    counts: &Buffer<u32>,
    starts: &Buffer<u32>,
    bits: u32,
    passes: u32,
) -> Result<Event> {
    let radix = 1u32 << bits;
    launch(
        ex,
        "pattern_sort_onesweep_starts",
        passes as usize,
        &Reads::default(),
        &[mem_id(starts)],
        |cx| {
            let c = cx.read(counts);
            let s = cx.write(starts);
            let groups = cx.size("groups", p.groups);
            let (l, pass) = (local_id(0), group_id(0));
            let total = cx.local::<u32>("digit_totals", radix);
            let scan = GroupScan::new(cx, p.gs);
            for_step(l, lit(radix), lit(p.gs), |d: Expr<u32>| {
                let row = (pass * radix + d) * groups;
                let sum = var_named::<u32>("digit_sum", 0u32);
                for_range(0u32, groups, |g: Expr<u32>| {
                    sum.set(sum.get() + c.at(row + g))
                });
                total.set(d, sum.get());
            });
            barrier_local();
            scan.scan_owned(radix, &|d| total.at(d), &|d, before| {
                s.set(pass * radix + d, before)
            });
        },
    )
}

/// One digit pass: one work-group per tile, in launch order (see the module docs).
fn digit_pass<K: SortKey, V: Value>(
    ex: &Exec,
    p: &SortPlan,
    mv: &Moves<'_, K, V>,
    (starts, state): (&Buffer<u32>, &OnesweepScratch),
    (pass, bits, tag): (u32, u32, u32),
    order: SortOrder,
) -> Result<Event> {
    let full = 1u32 << bits;
    let (shift, width) = pass_digit::<K>(pass, bits);
    let radix = 1u32 << width;
    let (gs, tile) = (p.gs, p.tile());
    let rows = super::sort::table_rows(width);
    let mut outputs = vec![mem_id(mv.keys.1.buf)];
    if let Some((_, vd)) = &mv.values {
        outputs.push(mem_id(vd.buf));
    }
    launch(
        ex,
        "pattern_sort_onesweep",
        p.tiles,
        &Reads::default(),
        &outputs,
        |cx| {
            let io = PassIo::declare(cx, mv);
            let st = cx.read(starts);
            let status = cx.read_write(&state.status);
            let counters = cx.read_write(&state.counters);
            let n = cx.size("n", p.n);
            let ntiles = cx.size("tiles", p.tiles);
            let pass = cx.size("pass", pass as usize);
            let tag = cx.scalar::<u32>("tag", tag);
            let shift = cx.scalar("shift", shift);
            let l = local_id(0);
            let skeys = cx.local::<K>("tile_keys", super::sort::padded_len(tile));
            let svals = io
                .vio
                .map(|_| cx.local::<V>("tile_vals", super::sort::padded_len(tile)));
            let table = cx.local::<u32>("rank_table", rows * gs);
            let tcount = cx.local::<u32>("tile_counts", radix);
            let shift_to = cx.local::<u32>("digit_shift", radix);
            let tile_at = cx.local::<u32>("tile_number", 1);
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
            // The tile number, in launch order; the last one resets the pass's counter.
            if_(l.eq(0u32), || {
                let t = counters.atomic_add(pass, 1u32);
                tile_at.set(0u32, t);
                if_(t.eq(ntiles - 1u32), || {
                    counters.atomic_exchange(pass, 0u32);
                });
            });
            barrier_local();
            let t = tile_at.at(0u32).named("tile");
            let base = (t * tile).named("tile_start");
            let valid = (n - base).min(lit(tile)).named("tile_count");
            // Rank the tile; `digit_shift` holds each digit's start in the ranked tile.
            r.rank(&io, base, valid, &|d, before| shift_to.set(d, before));
            let pack = |flag: u32, v: Expr<u32>| status_word(tag, flag, v);
            // Look back, digit by digit: the keys of digit `d` in the tiles before.
            for_step(l, lit(radix), lit(gs), |d: Expr<u32>| {
                let c = tcount.at(d);
                let at = t * full + d;
                let before = var_named::<u32>("digit_before", 0u32);
                if_(t.eq(0u32), || {
                    status.atomic_exchange(at, pack(PREFIX, c));
                })
                .else_(|| {
                    status.atomic_exchange(at, pack(AGGREGATE, c));
                    let look = var_named::<u32>("look", t - 1u32);
                    loop_(|| {
                        let word = status.atomic_load(look.get() * full + d);
                        let high = (word >> 32u64).cast::<u32>();
                        let ready = (high & !3u32).eq(tag) & (high & 3u32).ne(0u32);
                        if_(ready, || {
                            before.set(before.get() + word.cast::<u32>());
                            if_(high.eq(tag | PREFIX), crate::builder::break_);
                            look.set(look.get() - 1u32);
                        });
                    });
                    status.atomic_exchange(at, pack(PREFIX, before.get() + c));
                });
                // From a tile position to the output: the digit's start in the pass, plus
                // the tiles before, minus where the digit starts in this tile.
                shift_to.set(d, st.at(pass * full + d) + before.get() - shift_to.at(d));
            });
            barrier_local();
            r.scatter(&io, valid);
        },
    )
}

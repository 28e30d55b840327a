//! The single-pass scan with decoupled look-back (Merrill & Garland, "Single-pass Parallel
//! Prefix Scan with Decoupled Look-back", 2016), for devices that guarantee
//! [`group_forward_progress`](crate::DeviceInfo::group_forward_progress).
//!
//! One launch of one work-group per tile of `group_size * scan_items_per_thread` elements
//! ([`Staging::scan_items_per_thread`]):
//!
//! 1. The work-group takes its tile number from an atomic counter (launch order, not
//!    `group_id`: see `group_forward_progress` for why that makes waiting safe). The work-group
//!    that takes the last number resets the counter to 0 for the next scan: every other
//!    work-group has taken its number by then.
//! 2. It loads the tile coalesced (work-item `l` reads elements `l, l + group_size, ...`; all
//!    `scan_items_per_thread` loads issued before any store, so that they are in flight
//!    together) into local memory (padded by one word in 32 against bank conflicts; the
//!    interpreter runs this kernel, the GPUs' one, so that the golden files record it), and each
//!    work-item combines its `scan_items_per_thread` consecutive elements in order, writing the
//!    running values back in place (they are not kept in registers across the look-back).
//! 3. The work-group scans the work-items' totals: a work-group scan collective for built-in
//!    operators on integers ([`BuiltinOp`](super::scan::BuiltinOp), warp shuffles on CUDA),
//!    a Hillis–Steele scan in local memory otherwise.
//! 4. Work-item 0 publishes the tile's total (status *aggregate*; tile 0 publishes its
//!    inclusive prefix right away). Then the work-group looks back over the tiles before it,
//!    newest first, [`WINDOW`] status words per step: work-items `0..WINDOW` each read one
//!    word with [`atomic_load`](crate::builder::BufferParam::atomic_load) and decode it into
//!    local memory; work-item 0 finds the first word that is not an aggregate (a tree of
//!    minimums), combines the aggregates before it into its exclusive prefix, and stops if
//!    that word is an *inclusive prefix* (taken too) or reads again from the first tile that
//!    has published nothing yet. It then publishes its own inclusive prefix. The step loop is
//!    the whole work-group's (two barriers per step, almost always one step).
//! 5. Every work-item combines the prefix with its running values; the results go back through
//!    local memory and are stored coalesced.
//!
//! On the compiled CPU backend (`cpu`) there is no tile in local memory (no banks, no
//! coalescing: the tile would only be copied in and out). In step 2 each work-item combines
//! its own `k` consecutive elements into its total in a loop (unrolled by 16, 8 or 4, the
//! shape the vector variant reads as rows of tiles, four work-items' elements a vector),
//! keeping nothing but the total across the barriers; in step 4 work-item 0 walks back
//! alone, one status word at a time, as far as the words are published (no window through
//! local memory, no barriers: each costs a pass over the work-group), and only a wait goes
//! round the work-group's loop (whose thread yields now and then); in step 5 each work-item
//! reads its elements again (from L1: a tile is 4 KiB at `k = 32`) and stores its results.
//! The values and their order of combination are the tile's: the running values of the
//! work-item's elements, then `op(prefix, running)`, so a float operator's results are the
//! GPU kernel's (the interpreter's) bits; an integer operator is exact in any grouping, so
//! there the running value starts from the prefix (one operation an element). The kernel has
//! atomics on buffers only, so the vector variant runs it (four work-items an iteration, the
//! atomics lane by lane; see `cpu/jit/simd.rs`). Compiled code for two scans of 2^18 `u32`,
//! `k = 32` (callgrind, one thread, 2026-11-28): 27.1 M instructions with the running values
//! in the records, one work-item at a time; 6.8 M now (docs/BENCHMARKS.md, session 16).
//!
//! Why these shapes (docs/BENCHMARKS.md, "The look-back scan in PTX and SASS"): loads guarded
//! one by one went out in 3 dependent batches, and the running values and a window of 16
//! `u64` words in work-item 0's registers took 77 registers (3 work-groups per SM on an H100);
//! now one batch and 40 registers (6 work-groups per SM).
//!
//! A status word is one `u64`: the value's 32 bits below, `tag | flag` above, with `flag` 1
//! (aggregate) or 2 (inclusive prefix) and `tag` the scan's sequence number times 4: a word
//! of an earlier scan has another tag and reads as "nothing yet", so the status array is never
//! cleared between scans. The counter, the status array and the sequence number are kept in
//! the [`Exec`]'s scratch pool (shared with its clones), so a scan allocates nothing once
//! warmed up. Value and flag are
//! one word, written by one atomic exchange and read by one atomic load: no fence is needed.
//!
//! Elements are 4 bytes (`i32`, `u32`, `f32`). The operator only needs to be associative: the
//! look-back combines the tiles' values in index order (`op(earlier, later)`). For integer
//! operators the results equal the multi-pass scan's bit for bit; float operators may round
//! differently (the grouping differs).

use super::scan::{group_scan, recognize};
use super::{launch, mem_id, Cx, DeviceVec, Exec, Reads, Staging, View};
use crate::builder::{
    barrier, for_range, for_step, if_, lit, local_id, loop_, select, var_named, Expr, KernelType,
    Numeric,
};
use crate::error::Result;
use crate::Buffer;

/// Status words read per look-back step (by as many work-items, one each).
pub(crate) const WINDOW: u32 = 16;
/// Status flag: the tile's own total is published (also Onesweep's, per digit).
pub(crate) const AGGREGATE: u32 = 1;
/// Status flag: the tile's inclusive prefix is published.
pub(crate) const PREFIX: u32 = 2;
/// Tags are `sequence << 2`; sequence numbers run from 1 to this.
pub(crate) const MAX_SEQUENCE: u32 = (1 << 30) - 1;

/// A status word: the tag and flag in the high half, the value's bits in the low half, so one
/// atomic load reads both (the look-back scan's and Onesweep's).
pub(crate) fn status_word(tag: Expr<u32>, flag: u32, value_bits: Expr<u32>) -> Expr<u64> {
    ((tag | flag).cast::<u64>() << 32u64) | value_bits.cast::<u64>()
}

/// The memory a look-back scan keeps between scans.
pub(crate) struct LookBackScratch {
    /// One status word per tile.
    status: Buffer<u64>,
    /// The tile counter (0 between scans).
    counter: Buffer<u32>,
    /// The sequence number of the last scan.
    sequence: u32,
}

impl std::fmt::Debug for LookBackScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LookBackScratch")
            .field("tiles", &self.status.len())
            .field("sequence", &self.sequence)
            .finish()
    }
}

/// Bytes of local memory a look-back scan kernel declares with `staging`.
pub(crate) fn local_bytes(st: Staging) -> u64 {
    let tile = st.group_size as u64 * st.scan_items_per_thread as u64;
    // The padded tile, the work-items' totals, the tile number, the carry, the look-back's
    // state and its window of status words.
    4 * (tile + tile / 32 + st.group_size as u64 + 4) + 8 * WINDOW as u64
}

/// Takes the exec's scratch for a scan of `tiles` tiles (allocating it, or a larger one, as
/// needed) with the next sequence number.
fn take_scratch(ex: &Exec, tiles: usize) -> Result<LookBackScratch> {
    // The largest kept one whose sequence numbers are not used up.
    let kept = ex.scratch().take_kept::<LookBackScratch>(|s| {
        (s.sequence < MAX_SEQUENCE).then_some(usize::MAX - s.status.len())
    });
    match kept {
        Some(mut s) if s.status.len() >= tiles => {
            s.sequence += 1;
            Ok(s)
        }
        Some(s) => Ok(LookBackScratch {
            // A fresh (zeroed) status array; the counter is 0 after every completed scan.
            status: Buffer::new(ex, tiles.next_power_of_two())?,
            counter: s.counter,
            sequence: 1,
        }),
        None => Ok(LookBackScratch {
            status: Buffer::new(ex, tiles.next_power_of_two())?,
            counter: Buffer::new(ex, 1)?,
            sequence: 1,
        }),
    }
}

/// Scans `view` into `dst` (exclusive from `init` if given, else inclusive) in one launch.
/// `reads` is what the view reads; `dst` has the view's length, which is not 0.
pub(crate) fn scan<T, V, F>(
    ex: &Exec,
    view: &V,
    op: &F,
    init: Option<T>,
    dst: &DeviceVec<T>,
    reads: &Reads,
) -> Result<()>
where
    T: Numeric,
    V: View<Item = Expr<T>>,
    F: Fn(Expr<T>, Expr<T>) -> Expr<T>,
{
    let st = ex.staging();
    let (gs, k) = (st.group_size, st.scan_items_per_thread);
    let tile_len = gs * k;
    let unroll = unroll_for(k);
    let n = view.len();
    let tiles = n.div_ceil(tile_len as usize);
    let builtin = recognize(op);
    let scratch = take_scratch(ex, tiles)?;
    let tag = scratch.sequence << 2;
    // The interpreter, the reference, runs the GPUs' kernel (the golden files record it there).
    let padded = ex.device().info().backend != crate::BackendKind::Cpu;
    let event = launch(
        ex,
        "pattern_scan_lookback",
        tiles,
        reads,
        &[mem_id(dst.buffer())],
        |cx| {
            let out = cx.write(dst.buffer());
            let out_off = cx.size("out_off", dst.offset());
            let status = cx.read_write(&scratch.status);
            let counter = cx.read_write(&scratch.counter);
            let n = cx.size("n", n);
            let tiles = cx.size("tiles", tiles);
            let tag = cx.scalar::<u32>("tag", tag);
            let init = init.map(|v| cx.scalar("init", v));
            let l = local_id(0);

            // 1. The tile number, in launch order.
            let tile_at = cx.local::<u32>("tile_number", 1);
            if_(l.eq(0u32), || {
                let t = counter.atomic_add(0u32, 1u32);
                tile_at.set(0u32, t);
                if_(t.eq(tiles - 1u32), || {
                    counter.atomic_exchange(0u32, 0u32);
                });
            });
            barrier();
            let tile = tile_at.at(0u32).named("tile");
            let t0 = (tile * tile_len).named("tile_start");
            let count = (n - t0).min(lit(tile_len)).named("tile_count");

            // 2. Coalesced loads into local memory; each work-item's `k` consecutive elements.
            // All `k` loads first, unconditionally (past the end of the last tile they read its
            // last element), so that they are in flight together: guarded loads interleaved
            // with their stores went out in 3 dependent batches (ptxas, sm_90).
            // Padded against bank conflicts. Not on the compiled CPU backend, which has no
            // banks and runs a work-item's accesses one after another (one work-item at a
            // time, as the kernel has atomics and barriers): there the tile would only be
            // copied in and out, so each work-item loads its own elements instead.
            let last = (count - 1u32).named("tile_last");
            let base = (l * k).named("item_start");
            // This work-item's elements (`first == end` past the tile's end), for the compiled
            // CPU backend's loops (not recorded for the GPUs' kernel, whose golden files are
            // its values' numbering).
            let items = (!padded).then(|| {
                (
                    (t0 + base.min(count)).named("item_first"),
                    (t0 + (base + k).min(count)).named("item_end"),
                )
            });
            let zero = lit(<T as bytemuck::Zeroable>::zeroed());
            let (data, running) = if padded {
                let data = cx.local::<T>("tile_data", tile_len + tile_len / 32);
                let pad = |p: Expr<u32>| p + (p >> 5u32);
                let loaded: Vec<Expr<T>> = (0..k)
                    .map(|j| {
                        let p = l + j * gs;
                        view.at(cx, t0 + p.min(last)).named("loaded")
                    })
                    .collect();
                for (j, v) in loaded.into_iter().enumerate() {
                    let p = l + j as u32 * gs;
                    // Past the end of the last tile: zeros, so that the reads below (whose
                    // values are then discarded) read defined values.
                    data.set(pad(p), select(p.lt(count), v, zero));
                }
                barrier();
                let mut run = data.at(pad(base)).named("running");
                for j in 1..k {
                    // Written back in place of the elements (only this work-item reads
                    // them): the `k` running values are not live in registers across the
                    // look-back (ptxas, sm_90: 77 registers with them, 3 work-groups per SM).
                    data.set(pad(base + j - 1), run);
                    let v = data.at(pad(base + j));
                    // Positions past the tile's end leave the running value as it is.
                    run = select((base + j).lt(count), op(run, v), run).named("running");
                }
                data.set(pad(base + k - 1), run);
                (Some((data, pad)), vec![run])
            } else {
                // Each work-item's total of its `k` consecutive elements, in order (a loop the
                // vector variant reads as rows of tiles); the elements are read again in step 5.
                // Work-items past the tile's end keep the padded tile's zero.
                let total = var_named("item_total", zero);
                let (first, end) = items.expect("the compiled CPU backend's kernel");
                seq_first(cx, first, end, unroll, &mut |cx, j, first| {
                    let v = view.at(cx, j);
                    let next = match first {
                        Some(f) => select(f, v, op(total.get(), v)),
                        None => op(total.get(), v),
                    };
                    total.set(next);
                });
                (None, vec![total.get()])
            };
            let run = *running.last().expect("one total at least");

            // 3. Inclusive scan of the work-items' totals.
            let totals = cx.local::<T>("item_totals", gs);
            match builtin {
                Some(b) => {
                    let mine = select(base.lt(count), run, b.identity());
                    totals.set(l, b.group_scan(mine));
                    barrier();
                }
                None => {
                    totals.set(l, run);
                    group_scan(totals, gs, op);
                }
            }
            let tile_total = totals.at((count - 1u32) / k).named("tile_total");
            let before = totals.at(select(l.gt(0u32), l - 1u32, 0u32));

            // 4. Publish (work-item 0), then look back over the tiles before, newest first,
            // `WINDOW` at a time: work-items `0..WINDOW` each read one status word into local
            // memory, work-item 0 combines them in order. The loop is the work-group's (its
            // barriers are reached by all), so work-item 0 keeps no window in registers.
            let carry_at = cx.local::<T>("carry", 1);
            let pack = |flag: u32, v: Expr<T>| status_word(tag, flag, bits(v));
            // Tile 0 publishes its inclusive prefix at once; its carry is read below by every
            // tile (and discarded by tile 0): written, so that no work-item reads local memory
            // nobody wrote.
            let publish_first = || {
                let p = match init {
                    Some(i) => {
                        carry_at.set(0u32, i);
                        op(i, tile_total)
                    }
                    None => {
                        carry_at.set(0u32, tile_total);
                        tile_total
                    }
                };
                status.atomic_exchange(tile, pack(PREFIX, p));
            };
            if padded {
                // At most one status word per work-item (small work-groups read fewer at a time).
                let win = WINDOW.min(gs);
                // The window's values, and each word's kind: 0 nothing yet, 1 aggregate, 2 prefix.
                let window = cx.local::<u32>("look_values", win);
                let kinds = cx.local::<u32>("look_kinds", win);
                // The next tile to read, and 1 once the exclusive prefix is known.
                let look = cx.local::<u32>("look_state", 2);
                if_(l.eq(0u32), || {
                    if_(tile.eq(0u32), || {
                        publish_first();
                        look.set(1u32, 1u32);
                    })
                    .else_(|| {
                        status.atomic_exchange(tile, pack(AGGREGATE, tile_total));
                        look.set(0u32, tile - 1u32);
                        look.set(1u32, 0u32);
                    });
                });
                barrier();
                // The combination of the tiles read so far (work-item 0's).
                let acc = var_named("look_acc", tile_total);
                let has = var_named("look_has", false);
                loop_(|| {
                    if_(look.at(1u32).ne(0u32), crate::builder::break_);
                    let at = look.at(0u32).named("look");
                    // Each of the first `win` work-items reads and decodes one predecessor's word.
                    if_(l.lt(win), || {
                        let word = status
                            .atomic_load(select(at.ge(l), at - l, 0u32))
                            .named("look_word");
                        let high = (word >> 32u64).cast::<u32>();
                        let ready = (high & !3u32).eq(tag) & (high & 3u32).ne(0u32);
                        window.set(l, word.cast::<u32>());
                        kinds.set(l, select(ready, high & 3u32, 0u32));
                    });
                    barrier();
                    if_(l.eq(0u32), || {
                        // The first word that stops the walk (nothing yet, or an inclusive prefix;
                        // `win` if none does), as a tree of minimums over independent reads.
                        let kind: Vec<Expr<u32>> =
                            (0..win).map(|w| kinds.at(w).named("look_kind")).collect();
                        let mut stops: Vec<Expr<u32>> = (0..win)
                            .map(|w| select(kind[w as usize].eq(AGGREGATE), lit(win), lit(w)))
                            .collect();
                        while stops.len() > 1 {
                            stops = stops
                                .chunks(2)
                                .map(|c| if c.len() == 2 { c[0].min(c[1]) } else { c[0] })
                                .collect();
                        }
                        let first = stops[0].named("look_first");
                        let done = (first.lt(win) & kinds.at(first.min(lit(win - 1))).eq(PREFIX))
                            .named("look_done");
                        // The words taken: the aggregates before the stop, and a prefix there.
                        let taken = (first + select(done, 1u32, 0u32)).named("look_taken");
                        // Combined newest first, as `op(earlier, later)`.
                        let (mut a, mut h) = (acc.get(), has.get());
                        for w in 0..win {
                            let v = from_bits::<T>(window.at(w));
                            let take = lit(w).lt(taken);
                            a = select(take, select(h, op(v, a), v), a).named("look_a");
                            h = (h | take).named("look_h");
                        }
                        acc.set(a);
                        has.set(h);
                        if_(done, || {
                            status.atomic_exchange(tile, pack(PREFIX, op(a, tile_total)));
                            carry_at.set(0u32, a);
                            look.set(1u32, 1u32);
                        })
                        .else_(|| look.set(0u32, at - taken));
                    });
                    barrier();
                });
            } else {
                // On the compiled CPU backend, work-item 0 walks back alone, one status word
                // at a time (the same words combined in the same order, `op(earlier, later)`),
                // right after publishing its aggregate, until its exclusive prefix is known or
                // a word is not published yet: no window through local memory, no barriers
                // while the words it reads are ready (issue 31). Only a wait goes round the
                // work-group's loop, which yields its thread now and then (`cpu/jit/run.rs`).
                let done = cx.local::<u32>("look_done", 1);
                let at = var_named("look", select(tile.gt(0u32), tile - 1u32, 0u32));
                let acc = var_named("look_acc", tile_total);
                let has = var_named("look_has", false);
                let walk = || {
                    loop_(|| {
                        let word = status.atomic_load(at.get()).named("look_word");
                        let high = (word >> 32u64).cast::<u32>();
                        let kind =
                            select((high & !3u32).eq(tag), high & 3u32, 0u32).named("look_kind");
                        // Not published yet: read again after the work-group's barrier.
                        if_(kind.eq(0u32), crate::builder::break_);
                        let v = from_bits::<T>(word.cast::<u32>());
                        acc.set(select(has.get(), op(v, acc.get()), v));
                        has.set(true);
                        if_(kind.eq(PREFIX), || {
                            let a = acc.get();
                            status.atomic_exchange(tile, pack(PREFIX, op(a, tile_total)));
                            carry_at.set(0u32, a);
                            done.set(0u32, 1u32);
                            crate::builder::break_();
                        });
                        at.set(at.get() - 1u32);
                    });
                };
                if_(l.eq(0u32), || {
                    if_(tile.eq(0u32), || {
                        publish_first();
                        done.set(0u32, 1u32);
                    })
                    .else_(|| {
                        status.atomic_exchange(tile, pack(AGGREGATE, tile_total));
                        done.set(0u32, 0u32);
                        walk();
                    });
                });
                barrier();
                loop_(|| {
                    if_(done.at(0u32).ne(0u32), crate::builder::break_);
                    if_(l.eq(0u32), walk);
                    barrier();
                });
            }

            // 5. Each work-item's prefix (the tiles before, then the work-items before), its
            // results into local memory, then coalesced stores.
            let has_carry = match init {
                Some(_) => lit(true),
                None => tile.gt(0u32),
            };
            let carry = carry_at.at(0u32);
            let has_before = l.gt(0u32);
            let prefix = select(
                has_before,
                select(has_carry, op(carry, before), before),
                carry,
            )
            .named("prefix");
            let has_prefix = has_before | has_carry;
            let result = |j: usize, running: &[Expr<T>]| {
                if init.is_some() {
                    // Exclusive: the prefix, then the running values shifted by one.
                    if j == 0 {
                        prefix
                    } else {
                        op(prefix, running[j - 1])
                    }
                } else {
                    select(has_prefix, op(prefix, running[j]), running[j])
                }
            };
            match data {
                Some((data, pad)) => {
                    // The running values back from local memory, all read before the first
                    // write; the results through local memory to coalesced stores.
                    let running: Vec<Expr<T>> = (0..k)
                        .map(|j| data.at(pad(base + j)).named("running"))
                        .collect();
                    for j in 0..k as usize {
                        data.set(pad(base + j as u32), result(j, &running));
                    }
                    barrier();
                    for j in 0..k {
                        let p = l + j * gs;
                        if_(p.lt(count), || out.set(out_off + t0 + p, data.at(pad(p))));
                    }
                }
                None => {
                    // Each work-item reads its elements again (from L1: a tile is 4 KiB at
                    // `k = 32`) and stores its results. Integer operators are exact, so the
                    // running value starts from the prefix (one operation an element); a float
                    // operator keeps the tile's grouping, `op(prefix, running)`, so the bits
                    // are the GPU kernel's (the interpreter's).
                    let exact = T::TYPE.scalar.is_int();
                    let run = var_named("item_run", if exact { prefix } else { zero });
                    let (first, end) = items.expect("the compiled CPU backend's kernel");
                    seq_first(cx, first, end, unroll, &mut |cx, j, first| {
                        let v = view.at(cx, j);
                        match (exact, init.is_some()) {
                            (true, true) => {
                                out.set(out_off + j, run.get());
                                run.set(op(run.get(), v));
                            }
                            (true, false) => {
                                let next = op(run.get(), v);
                                let next = match first {
                                    Some(f) => select(f & !has_prefix, v, next),
                                    None => next,
                                };
                                out.set(out_off + j, next);
                                run.set(next);
                            }
                            (false, true) => {
                                let r = run.get();
                                let (o, next) = match first {
                                    Some(f) => {
                                        (select(f, prefix, op(prefix, r)), select(f, v, op(r, v)))
                                    }
                                    None => (op(prefix, r), op(r, v)),
                                };
                                out.set(out_off + j, o);
                                run.set(next);
                            }
                            (false, false) => {
                                let next = op(run.get(), v);
                                let next = match first {
                                    Some(f) => select(f, v, next),
                                    None => next,
                                };
                                run.set(next);
                                out.set(out_off + j, select(has_prefix, op(prefix, next), next));
                            }
                        }
                    });
                }
            }
        },
    );
    // On success the scratch is kept (its counter is back at 0); after a failure it is
    // dropped, and the next scan starts from fresh memory.
    event?.wait()?;
    let bytes = scratch.status.len() * 8 + 4;
    ex.scratch().keep_sized(bytes, scratch);
    Ok(())
}

/// What [`seq_first`] records for each element: `body(cx, j, first)`.
type ItemBody<'a> = dyn FnMut(&mut Cx, Expr<u32>, Option<Expr<bool>>) + 'a;

/// Records `body(j, first)` for `j` in `start..end`, in order, in the shape of
/// [`seq`](super::scan::seq) (a loop stepping by `unroll` with as many copies of the body,
/// which the compiled CPU backend's vector variant reads as rows of tiles, then the
/// remainder); `first` is `Some(j == start)` in the copies where `j` can be `start` (the
/// loop's first copy and the remainder), `None` in the others.
fn seq_first(cx: &mut Cx, start: Expr<u32>, end: Expr<u32>, unroll: u32, body: &mut ItemBody<'_>) {
    let main_end = if unroll > 1 {
        let count = select(end.gt(start), end - start, 0u32);
        let main_end = (start + count / unroll * unroll).named("item_main_end");
        for_step(start, main_end, lit(unroll), |j: Expr<u32>| {
            for t in 0..unroll {
                let first = (t == 0).then(|| j.eq(start));
                body(cx, j + t, first)
            }
        });
        main_end
    } else {
        start
    };
    for_range(main_end, end, |j: Expr<u32>| body(cx, j, Some(j.eq(start))));
}

/// The loop unrolling of a work-item's `k` elements on the compiled CPU backend: the largest
/// of 16, 8 and 4 that divides `k` (so that no remainder loop runs in full tiles), 4 for
/// other `k` of at least 4, else 1.
fn unroll_for(k: u32) -> u32 {
    [16, 8, 4]
        .into_iter()
        .find(|u| k.is_multiple_of(*u))
        .unwrap_or(if k >= 4 { 4 } else { 1 })
}

/// The 32 bits of a 4-byte value.
fn bits<T: KernelType>(v: Expr<T>) -> Expr<u32> {
    v.bitcast::<u32>()
}

/// The 4-byte value of 32 bits.
fn from_bits<T: KernelType>(b: Expr<u32>) -> Expr<T> {
    b.bitcast::<T>()
}

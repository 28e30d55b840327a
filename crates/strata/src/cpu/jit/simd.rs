//! Four (or eight) work-items per iteration in SIMD lanes: the vector variant of a kernel's
//! regions.
//!
//! A kernel whose values are all integers, `f32`s, `f64`s or `bool`s (not `f16`; vector
//! types are split into their components first, [`super::split`]: a kernel with them is
//! compiled here as the split kernel), without private arrays of `bool`s, stubs, 64-bit
//! indices or local atomics in a kernel with barriers or collectives (else
//! [`scalar_reason`] says why not), is
//! compiled a second time with every IR value a 4-lane vector (`f32x4`,
//! `i32x4`; a `bool` is a lane mask of all ones or zeros; a 64-bit value is two registers,
//! `f64x2` or `i64x2`, lanes 0 and 1 in the first, 2 and 3 in the second; an 8- or 16-bit
//! integer is an `i32x4` lane, sign- or zero-extended as its type is signed or not, wrapped
//! to its width after every operation that may leave it, as the scalar code's arithmetic
//! wraps), one lane per work-item of four consecutive local ids; every region of it, when it has
//! barriers or collectives. A comparison of 64-bit lanes is narrowed to a lane mask, a lane
//! mask widened to select 64-bit lanes; conversions between 32- and 64-bit lanes widen,
//! narrow, promote or demote the halves where SSE has an instruction for it (the rest go lane
//! by lane). Divergent control flow runs under an execution mask, as the interpreter's
//! columns do: an `if` runs each side for the lanes that take it (and skips a side no lane
//! takes), a loop runs while any lane is in it, `break`, `continue` and `return` remove
//! lanes. An `if` reached with every lane active whose `then` side is small (at most four
//! statements, no loop or `if`: a tile's guarded load and store) first tests whether its
//! condition holds in every lane, and there runs the `then` side alone, for all lanes, with
//! no masks and no test for lanes taking the `else` side (both sides otherwise, as above):
//! the tiled matrix product's benchmark (1024^2, two guarded tile loads per tile and
//! work-item) ran in 96-97 ms before, 87 after (issue 31). An index is consecutive in the four lanes where it is the local, linear or global
//! id in dimension 0, or one of those modulo a multiple of four or masked by `2^k - 1`
//! ([`aligned`]: the four lanes are `4q` to `4q + 3`), plus something uniform; such an
//! aligned id divided by a multiple of four is uniform (a work-item layout's `tid % cols`
//! and `tid / cols`: SGEMM's tile reads). An access to a buffer or local array whose four
//! indices are consecutive and whose
//! lanes are all active is one vector load or store (two for 64-bit elements; four 8-bit or
//! 16-bit elements are loaded as 4 or 8 bytes and extended); otherwise each
//! active lane accesses its element alone (a gather or scatter), so an inactive lane never
//! touches memory. Bounds are checked for the active lanes, with the same error, except where
//! [`crate::ir::ranges`] proves the access in bounds: then a consecutive access tests only
//! that the mask is full (and the proof's preconditions on the launch's arguments, which
//! leave the work-item loop), and a lane-by-lane access tests nothing. Where the mask is
//! known to be full and the proof holds (its preconditions tested on entry to the copy for
//! four lanes, below), a consecutive access is only its vector load or store and a uniform
//! one its scalar load, without a branch to the lane-by-lane code (whose join made every
//! value loaded a block parameter); an index `r + k` proven not to wrap
//! ([`crate::ir::ranges::Proof::offset`]) is addressed at `r`'s element plus `k` elements,
//! so a tile's row of loads shares one address register. An integer multiplication,
//! division or remainder by a literal power of two is a shift or a mask ([`Gen::vpow2`]; a
//! signed quotient rounded towards zero). What has no vector
//! instruction (integer division, shifts by per-lane amounts, the transcendental built-ins,
//! some conversions; `fma` where the host has no vector FMA) is computed lane by lane with
//! the scalar code, so the results are the scalar backend's, bit for bit (an integer division
//! or remainder of uniform operands where all lanes are active, a chunk's length
//! `(n + size - 1) / size`, is lane 0's one scalar division, splat: lane 0 is the first
//! work-item a zero divisor would name); a float `fma` is
//! one vector fused multiply-add (`vfmadd` on x86-64 with FMA), correctly rounded as the
//! scalar one.
//!
//! **Regions.** A region of a kernel with barriers starts with the four work-items' bytes of
//! the group level's mask as its lanes (none set: the next four; the four bytes are tested as
//! one word, and all four set, `0x01010101`, picks the region's copy for four active lanes
//! without the vector test, [`Gen::vector_body`]). In a copy for four active lanes the mask
//! is a constant, so the lane mask of the word is built only on the other path. What crosses a barrier is
//! in the work-items' records, which [`super::plan`] lays out in blocks of four work-items so
//! that a slot's four lanes are side by side (a 64-bit slot's 32 bytes are two registers): a
//! value another region reads, a private variable and an operand of the next group-level
//! statement are one vector load or store (under the mask: the inactive lanes' scalars are
//! kept), a `bool` or flag four bytes. A
//! `return`, or a `break` or `continue` of a group-level loop, sets the active lanes' flags.
//! The group level ([`super::run`]) is the scalar path's: the same masks, the same
//! collectives in local-id order, the same divergence errors.
//!
//! The launch uses this variant when the work-group's size in dimension 0 is a multiple of
//! four (the first such launch compiles it, [`super::JitProgram`]), and the scalar functions
//! otherwise. So the four lanes share their ids in dimensions 1 and 2: those, literals,
//! parameters, sizes, `for` counters with a uniform start and step and `let`s of them are
//! *uniform* ([`uniform`]), and a load at a uniform index is one scalar load and a splat, with
//! one scalar bounds test (or the proof's); an index that only turns out to be shared at run
//! time is tested for it. A load at an index consecutive where no clamp binds
//! ([`clamped_consecutive`]: the id under `min`/`max` with uniform bounds, as a stencil reads
//! its neighbours at the borders) tests on lane 0's scalars that no clamp binds in the four
//! lanes ([`Gen::unclamped_lane0`]) and that their elements lie in the buffer: one vector
//! load, else lane by lane with the tests. Where such indices depend only on the ids and the
//! launch's arguments ([`early`]), the region is lowered twice ([`Gen::vregion_clamps`]):
//! the clamps of all of them tested once on entry, and in the copy for the blocks where
//! none binds each such load is its unclamped consecutive load (ROF's update: 25
//! instructions a load before, 8 after).
//!
//! **Four active lanes.** Where the mask is known to be all four lanes ([`Gen::full`]: the
//! start of a one-region kernel, the sides of an `if` on a uniform condition, the body of a
//! `for` with uniform bounds that no lane leaves early, and after any of them when nothing in
//! them took lanes out), a private variable and a record slot are stored without the mask and
//! a consecutive access does not test it. A `for` loop whose bounds differ between the lanes
//! but whose step is uniform (a chunk per work-item: `for i in id * chunk .. (id + 1) *
//! chunk`) is tested on entry ([`Gen::vfor`]): step 1, every lane below its end by the same
//! distance; then the four lanes run the same iterations, and a second copy of the loop runs
//! them as four active lanes (lane 0's test; the others take the general loop). So is a
//! *striped* loop ([`striped_counter`]: a work-group's stretch read with the work-items side
//! by side, `for i in (start + local_id .. end).step_by(local_size)`, the counter a 32-bit
//! integer consecutive in the lanes) where its lanes run the same number of iterations and
//! no counter wraps on its last step ([`Gen::same_trip_counts`]: one scalar division on
//! entry); its loads at the counter are then one vector load each, with no mask test (the
//! benchmark's `dot` on 2^24 `f32`s: 2.1-2.9 ms, 7.2 as a divergent loop). There an
//! access proven in bounds at four unrelated indices (the four chunks) is four scalar loads
//! or stores into or out of the lanes, without tests or branches, so four work-items'
//! dependent chains (a sum's additions, each in its own order) advance in one vector
//! instruction. There a load from a buffer the kernel only reads (its access `Read` or
//! `Constant`: the launch refuses a buffer the kernel writes passed again as one), at the
//! top level of a body without `break`, `continue`, `return`, inner loops or barriers, at
//! the counter plus something uniform and proven in bounds ([`tile_loads`]), is read four
//! iterations at a time as a 4x4 tile ([`Gen::vfor_tiled`]): each lane's next four
//! elements one vector load (their addresses computed once before the loop), transposed
//! with four interleaves of 32-bit and four of 64-bit lanes, and the body lowered four
//! times, for counters `c` to `c + 3` in order, each copy taking its column; the last
//! `trips % 4` iterations run in the loop above. Each work-item still runs its own
//! iterations in its own order (bit for bit the interpreter's); the tile reads only
//! iterations the loop runs, all in bounds by the proof, and no store of the kernel can
//! change what it read ahead. The chunked sum so takes about 1.4 instructions an element
//! (4 loads, 8 shuffles and 4 additions per 16), against 6.5 lane by lane. A chunk loop
//! unrolled by hand (step a literal 4, 8 or 16, as the patterns' block passes write theirs:
//! `k` loads of `x[off + (i + j)]` for `j` in `0..k`) reads its loads as rows of tiles
//! ([`tile_rows`], [`Gen::vfor_rows`]): `k / 4` vector loads per lane and iteration,
//! transposed, and the body lowered once; a row of stores to consecutive elements is kept
//! in registers and written the same way, transposed, after the body. Nothing needs to be
//! proven there: a test on entry (every lane below its end by the same distance, no
//! counter wrapping, every element each lane will read or write in bounds) picks the
//! tiled loop or the general one, which faults as the interpreter does. A region, or
//! the side of an `if`, with a loop or
//! eight or more accesses is lowered twice when the mask is not known there: one copy for
//! four active lanes (one test on entry), one for the others.
//! A fault names the first faulting lane's work-item.
//!
//! **Register tiles** ([`super::sched`], issue 31). Where all four lanes are active, a run
//! of statements that neither fault nor write memory ([`Gen::movable`]: lets and private
//! variables' loads and stores without integer division, loads proven in bounds there) and
//! that updates more private variables than half the registers hold, several times each
//! (SGEMM's `8 x 8` accumulators, one update per step of `k`), is lowered a group of
//! variables at a time through all its steps, each group loading again what it reads of
//! local memory and read-only buffers, each update stored to a stack slot nothing reads so
//! that Cranelift computes it there and not at the region's end. A fused multiply-add
//! whose first factor is a splat and second is not takes them the other way round
//! (`vfmadd213` overwrites its first factor). `sgemm_128x128x16_8x8` (128^3, one thread)
//! ran in 0.33 ms before, 0.19-0.21 after.
//!
//! **Private arrays** ([`Gen::vload_private`], issue 31) live in the records, each element's
//! four lanes side by side as any slot's: at an index the lanes share (a loop counter, a
//! literal) an element is one vector load or store (under the mask: the inactive lanes'
//! elements kept), after one scalar bounds test or the proof; at an index of the lanes' own
//! each active lane's element alone, tested as any access's. Not in the eight-lane variant.
//!
//! **Atomics** ([`Gen::vatomic`], issue 31) run lane by lane: the active lanes' indices tested
//! as any access's, then each active lane's operation in turn, lane 0 first, as the scalar
//! code's ([`Gen::atomic_inline`]), its old value put in the lane (no mask test per lane where
//! all four are known active; on a buffer a launch may keep per thread, `privatize.rs`, the
//! launch's bit tested once for the four). In a kernel with barriers
//! or collectives only atomics on buffers: a local atomic there keeps the kernel scalar. The
//! patterns' radix sorts (tile and Onesweep kernels: digits counted with local atomics, their
//! tiles' local accesses gathering lane by lane) took more instructions in four lanes
//! (callgrind, 2^18 keys, compiled code: Onesweep 728 M against 595 M, tiles 683 M against
//! 555 M) and four times as long to compile; the look-back scan (a tile number and status
//! words on buffers, a few atomics a work-group, each work-item's elements in loops) takes
//! half the instructions of its scalar code (`patterns/lookback.rs`).
//!
//! **Eight lanes** (issue 31, item 4). A kernel of one region (no barriers or collectives)
//! whose values and expressions are all 32-bit integers, `f32`s or `bool`s, and without a
//! loop whose lanes each walk their own stretch of a buffer (a chunked sum, or one unrolled
//! by hand: four lanes read it as tiles or rows of tiles, eight would gather it lane by lane,
//! 5-7x slower) ([`wide_reason`]
//! says why not) is also compiled with eight work-items per iteration, for launches whose
//! work-group's size in dimension 0 is a multiple of eight (the first such launch compiles
//! it; multiples of four only run the four-lane variant): every 32-bit value is two
//! registers (lanes 0–3 and 4–7), as a 64-bit value is two in the four-lane code, through
//! the same code ([`Gen::parts`], [`Gen::vty`]), and the mask and a `bool` are one `i16x8`
//! (a comparison's two `i32x4` masks packed with `packssdw`; widened back per register where
//! a mask selects 32-bit lanes). So a divergent loop runs both halves in the same iteration,
//! while any of the eight lanes is in it, and the two halves' dependency chains (the
//! Mandelbrot iteration's multiply-adds) overlap, as in the rayon baseline's eight pixels.
//! A memory access is lowered for each half in turn as four lanes ([`Gen::half`]: the half's
//! register of each index and value, its four mask lanes, its lanes' work-items), lanes
//! 0–3 first, so a fault still names the first faulting lane.
//!
//! **Loops.** A loop polls the launch's stop and cancel flags once every
//! [`super::lower::POLL_EVERY`] iterations (a counter). In a one-region kernel, a `loop`
//! (not inside another) stores the private variables that only it reads without a mask at the
//! top level of its body (no `continue` of it): the lanes not active there have left the
//! loop for good or never entered it, and nothing reads their values again (the Mandelbrot
//! loop's `x` and `y`; its count, read after the loop, keeps the mask).
//!
//! What a divergent loop pays per iteration beyond its body (issue 31): the test that a lane
//! is still in it (one `ptest` of the mask), the poll counter, and its condition's masks.
//! A `loop` whose lanes leave it only by its own `break` (no `return`, no `break` or
//! `continue` of an enclosing loop: [`Gen::quiet_breaks`]) has every lane that entered it
//! active again after it, so its mask after it is the one before it and its breaks record
//! nothing: a side of an `if` that is only such a `break` is no branch, its lanes just leave
//! the mask (the `while` condition's test). Without a `continue` of it, there is no continue
//! mask to merge at the end of each iteration. A masked store of a count's step, `x = x + k`
//! in integer lanes, is `x + (k & mask)`, and `x - mask` for `k = 1` (a mask lane is -1),
//! where the select is three instructions. The zero-divisor tests of the divisions hoisted out
//! of the loop ([`Gen::hoist_divisions`]) are made once where they are hoisted, for the lanes
//! entering the loop (only those can be active in it): a scalar `any`, and at each use the
//! tests of the active lanes run only where it is set (a branch on a byte in a register,
//! where the test of the active lanes was a vector `and`, `ptest` and branch), so a fault
//! still comes where, when and for whom the interpreter's does, and a lane that leaves
//! before the division (a loop run zero times) never faults. With eight lanes, a mask's
//! high half is widened to select 32-bit lanes by `punpckhwd` (one instruction); `u32` lanes'
//! `<` and `>` are `!(max(x, y) == x)` and `!(min(x, y) == x)` (`pmaxud`, `pcmpeqd`: no
//! constant, no flipped copy of a loop-invariant side), the `!` kept outside the eight-lane
//! pack so that it folds into the `and` of the mask (`pandn`); `2 * x` is `x + x` (the same
//! bits). The escape loop of the Mandelbrot benchmark: about 52 instructions per iteration of
//! eight pixels, 75 before.
//!
//! **Iteration counts** ([`trip_counters`], issue 31). In such a loop, a 32-bit private
//! variable stored from a uniform expression just before it and stepped by a literal or a
//! parameter once per iteration at the top level of its body (and stored nowhere else in it)
//! holds one value in every active lane: each entered with that value and has run every step
//! since. It is one scalar in the loop: its loads are that scalar's splat, its step a scalar
//! addition, and a comparison of splats one scalar comparison whose result is splat
//! ([`Gen::vbinary`]: the escape loop's `it < max_iter`, with `max_iter` a parameter). The
//! lanes' own registers take the scalar as lanes leave (a branch, cold, where the `break`'s
//! lanes are not none, [`Gen::record_trips`]), and the code after the loop reads them. The
//! Mandelbrot benchmark's loop drops the compare of two registers against `max_iter`, their
//! pack and the count's update per iteration: 62 → 43 ms on a 2-core AMD EPYC VM (rayon: 36
//! ms).

use super::expr::{direct_binary, from_bits};
use super::lower::{cl_ty, Gen, VarOf, MEM, TABLE};
use super::Site;
use crate::ir::{
    walk_block, BinaryOp, Builtin, Expr, ExprId, Function, Literal, MathFn, Mem, ParamKind, Scalar,
    Stmt, Type, UnaryOp, ValueId,
};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    self as cl, types, BlockArg, Endianness, InstBuilder, MemFlags, Value,
};
use cranelift_frontend::{FunctionBuilder, Variable};
use std::collections::{HashMap, HashSet};

/// Work-items per vector.
pub(super) const LANES: u32 = 4;

/// Whether the host has a vector fused multiply-add (x86-64 with FMA, which the code
/// generator uses as it detects the host's features; AArch64 always): else a vector `fma`
/// goes lane by lane.
fn vector_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(target_arch = "aarch64")]
    {
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// Whether `t` has lanes in the vector variant: an integer, an `f32` or `f64`, or a `bool`.
fn lane_type(t: Type) -> bool {
    t.width == 1
        && matches!(
            t.scalar,
            Scalar::I8
                | Scalar::U8
                | Scalar::I16
                | Scalar::U16
                | Scalar::I32
                | Scalar::U32
                | Scalar::F32
                | Scalar::I64
                | Scalar::U64
                | Scalar::F64
                | Scalar::Bool
        )
}

/// Why `f` has no vector variant (the first reason found, in words: "a private array
/// `acc`"); `None` when it has one (every region of it).
pub(super) fn scalar_reason(f: &Function) -> Option<String> {
    if let Some(s) = f.stubs.iter().next() {
        return Some(format!("a call of the stub `{}`", s.name));
    }
    // Local arrays of integers and floats (not of `bool`s: a `bool` element is a byte).
    if let Some(d) = f
        .locals
        .iter()
        .find(|d| !lane_type(d.elem) || d.elem.scalar == Scalar::Bool)
    {
        return Some(format!("the local array `{}` of {}", d.name, d.elem));
    }
    for d in f.privates.iter() {
        // A private array of integers or floats lives in the records, each element's four
        // lanes side by side ([`Gen::vload_private`]); of `bool`s (a byte an element) not.
        if d.len.is_some() && (!lane_type(d.elem) || d.elem.scalar == Scalar::Bool) {
            return Some(format!("the private array `{}` of {}", d.name, d.elem));
        }
        if !lane_type(d.elem) {
            return Some(format!("the private variable `{}` of {}", d.name, d.elem));
        }
    }
    for p in &f.params {
        match p.kind {
            // Buffers of structs take the scalar path (their fields are strided).
            ParamKind::Buffer { elem, .. } => match elem.value() {
                None => return Some(format!("the buffer `{}` of structs", p.name)),
                Some(t) if !lane_type(t) || t.scalar == Scalar::Bool => {
                    return Some(format!("the buffer `{}` of {t}", p.name))
                }
                Some(_) => {}
            },
            ParamKind::Scalar(t) if !lane_type(t) => {
                return Some(format!("the parameter `{}` of {t}", p.name))
            }
            // Read only by the launch (an expression cannot read it).
            ParamKind::Scalar(_) | ParamKind::LocalLen => {}
        }
    }
    if let Some(v) = f.values.iter().find(|v| !lane_type(v.ty)) {
        return Some(match &v.name {
            Some(n) => format!("the value `{n}` of {}", v.ty),
            None => format!("a value of {}", v.ty),
        });
    }
    for (_, e, t) in f.exprs.iter() {
        if matches!(e, Expr::Stub(..)) {
            return Some("a stub call".into());
        }
        if matches!(e, Expr::Builtin(b) if b.is_sub_group()) {
            return Some("a sub-group built-in".into());
        }
        if !lane_type(t) {
            return Some(format!("an expression of {t}"));
        }
    }
    let mut why = None;
    walk_block(&f.body, &mut |s| {
        if why.is_some() {
            return;
        }
        match s {
            // Barriers and collectives run at the group level, between the regions.
            Stmt::Load { mem, index, .. }
            | Stmt::Store { mem, index, .. }
            | Stmt::Atomic { mem, index, .. }
            | Stmt::AtomicLoad { mem, index, .. }
                if f.exprs.ty(*index).scalar.size() == 8 && in_memory(f, *mem) =>
            {
                why = Some(format!("an index of {}", f.exprs.ty(*index)))
            }
            _ => {}
        }
    });
    if why.is_some() {
        return why;
    }
    let synced = f.body.iter().any(super::plan::has_sync);
    let mut local_atomic = false;
    walk_block(&f.body, &mut |s| {
        local_atomic |= matches!(
            s,
            Stmt::Atomic {
                mem: Mem::Local(_),
                ..
            } | Stmt::AtomicLoad {
                mem: Mem::Local(_),
                ..
            }
        );
    });
    if synced && local_atomic {
        // Measured (callgrind, issue 31): the patterns' radix sorts (tile and Onesweep
        // kernels, counting digits with local atomics, their tiles' local accesses gathering
        // lane by lane) take more instructions in four lanes (Onesweep at 2^18 keys: 728 M
        // against 595 M in compiled code) and far longer to compile. Atomics on buffers (the
        // look-back scan's tile counter and status words: a few a work-group) run lane by
        // lane: that scan takes half the instructions in four lanes.
        return Some("a local atomic in a kernel with barriers or collectives".into());
    }
    let streams = Streams::default();
    (f.body.iter().any(super::plan::has_sync)
        && (gathers_in_loops(
            f,
            &counters(f),
            &crate::ir::ranges::Proof::of(f),
            &streams,
            &f.body,
            &mut Vec::new(),
        ) || streams.peak.get() > 2))
        .then(|| {
            "a loop between barriers whose accesses gather lane by lane (one work-item at a time \
         is faster)"
                .into()
        })
}

/// Whether an access to `mem` goes through memory with an index: a buffer, a local array or
/// a private array (not a private variable, which the vector code keeps in registers).
fn in_memory(f: &Function, mem: Mem) -> bool {
    match mem {
        Mem::Buffer(_) | Mem::Local(_) => true,
        Mem::Private(p) => f.privates[p].len.is_some(),
        Mem::Field(_) => false,
    }
}

/// Why a kernel with a four-lane variant ([`scalar_reason`] `None`) has no eight-lane one
/// (the first reason found, in words); `None` when it has one: one region (no barriers or
/// collectives), no local or private arrays, no atomics, no loop that the four-lane code runs
/// with its lanes together over tiles of their own stretches ([`Gen::vfor_tiled`], or rows of
/// tiles where the loop is unrolled by hand, [`Gen::vfor_rows`]), and every
/// value and expression a 32-bit integer, an `f32` or a `bool`. (A parameter or private variable of another type that the kernel reads or
/// writes gives a value or expression of its type; one it never touches costs nothing.)
pub(super) fn wide_reason(f: &Function) -> Option<String> {
    let ok = |t: Type| {
        t.width == 1
            && matches!(
                t.scalar,
                Scalar::I32 | Scalar::U32 | Scalar::F32 | Scalar::Bool
            )
    };
    if f.body.iter().any(super::plan::has_sync) {
        return Some("barriers or collectives".into());
    }
    if let Some(d) = f.locals.iter().next() {
        return Some(format!("the local array `{}`", d.name));
    }
    // (A private array's elements are laid out for blocks of four work-items.)
    if let Some(d) = f.privates.iter().find(|d| d.len.is_some()) {
        return Some(format!("the private array `{}`", d.name));
    }
    let mut atomic = false;
    walk_block(&f.body, &mut |s| {
        atomic |= matches!(s, Stmt::Atomic { .. } | Stmt::AtomicLoad { .. });
    });
    if atomic {
        return Some("an atomic".into());
    }
    // A loop of step 1 whose lanes the four-lane code runs together from their own starts
    // ([`Gen::vfor`]: the same iterations, its loads of each lane's stretch read as tiles,
    // [`Gen::vfor_tiled`]); eight lanes run it as a divergent loop, each half's loads lane
    // by lane under the mask. Measured (2-core AMD EPYC VM, 2026-11-28, idle): a sum of
    // chunks of 8,192 `f32` per work-item at 2^24, 11.6 ms in eight lanes against 1.7 in
    // four (4.9 one work-item at a time). So for a loop unrolled by hand whose loads the
    // four-lane code reads as rows of tiles ([`Gen::vfor_rows`]): 16 loads of `x[i + j]` a
    // step of 16, each work-item its own 32 `u32`s, 2^24 of them, one thread: 14.0 ms in
    // eight lanes against 2.6 in four (2026-11-30). (A striped loop runs together in eight
    // lanes as in four.)
    let c = counters(f);
    let mut proof = None;
    let mut together = false;
    walk_block(&f.body, &mut |s| {
        if let Stmt::For {
            id,
            var,
            start,
            end,
            step,
            body,
        } = s
        {
            if !together && own_starts(f, &c, *id, [*start, *end, *step], body) {
                let proof = proof.get_or_insert_with(|| crate::ir::ranges::Proof::of(f));
                // (A striped loop runs together in eight lanes too: its loads are
                // consecutive, one vector per half.)
                together = !striped_counter(f, &c, *var, *start)
                    && match row_step(f, *step) {
                        None => !tile_loads(f, &c, proof, *var, body).is_empty(),
                        Some(k) => !tile_rows(f, &c, proof, *var, k, body).is_empty(),
                    };
            }
        }
    });
    if together {
        return Some(
            "a loop whose lanes run the same iterations from their own starts (four lanes read \
             its loads as tiles)"
                .into(),
        );
    }
    if let Some(v) = f.values.iter().find(|v| !ok(v.ty)) {
        return Some(match &v.name {
            Some(n) => format!("the value `{n}` of {}", v.ty),
            None => format!("a value of {}", v.ty),
        });
    }
    f.exprs
        .iter()
        .find(|(_, _, t)| !ok(*t))
        .map(|(_, _, t)| format!("an expression of {t}"))
}

/// Vector registers per value of lane type `s`: two for a 64-bit scalar (lanes 0 and 1 in
/// the first, 2 and 3 in the second), else one.
pub(super) fn parts(s: Scalar) -> usize {
    if s.size() == 8 {
        2
    } else {
        1
    }
}

/// The type of each vector register of a lane type (a `bool` is an `i32x4` lane mask).
pub(super) fn vty(s: Scalar) -> cl::Type {
    match s {
        Scalar::F32 => types::F32X4,
        Scalar::F64 => types::F64X2,
        Scalar::I64 | Scalar::U64 => types::I64X2,
        _ => types::I32X4,
    }
}

/// How deep [`Gen::lane0_expr`] follows an index's arithmetic.
const LANE0_DEPTH: u32 = 8;

/// Whether `s` is an 8- or 16-bit integer: kept in a 32-bit lane, sign- or zero-extended as
/// its type is signed or not, and wrapped to its width after each operation that may leave it.
fn narrow_int(s: Scalar) -> bool {
    s.is_int() && s.size() < 4
}

/// What makes a value uniform or consecutive: every `for` loop's counter with its start and
/// step (a counter whose start is uniform, or consecutive, and whose step is uniform stays so
/// in every iteration: all lanes step together, in a region's vector loop as at the group
/// level), and every `let` with its expression.
#[derive(Default)]
pub(super) struct Counters {
    fors: HashMap<ValueId, (ExprId, ExprId)>,
    lets: HashMap<ValueId, ExprId>,
    /// The verdicts of [`uniform`], [`uniform_times_4`], [`aligned`], [`consecutive`] and
    /// [`clamped_consecutive`] so far: expressions and `let`s share subexpressions, which a
    /// walk without them would visit once per path (exponentially many in a chain of
    /// `let`s or expressions that each read the one before twice, `c = c + c`).
    memo: std::cell::RefCell<HashMap<(Pattern, ExprId), bool>>,
}

/// The lane patterns [`Counters`] remembers.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Pattern {
    Uniform,
    UniformTimes4,
    Aligned,
    Consecutive,
    ClampedConsecutive,
}

impl Counters {
    /// Whether `e` has `pattern`: remembered, else `test`ed once.
    fn memo(&self, pattern: Pattern, e: ExprId, test: impl FnOnce() -> bool) -> bool {
        remembered(&self.memo, (pattern, e), test)
    }
}

/// A walk's verdicts on the expressions it has seen, for a question that depends on more
/// than the expression (what a region defines, the loops at hand): kept for one walk.
type Seen = std::cell::RefCell<HashMap<ExprId, bool>>;

/// The verdict `memo` holds for `key`, else `test`'s, kept there. (The borrow ends before
/// `test` runs: it may ask `memo` about other keys.)
fn remembered<K: std::hash::Hash + Eq>(
    memo: &std::cell::RefCell<HashMap<K, bool>>,
    key: K,
    test: impl FnOnce() -> bool,
) -> bool {
    if let Some(&u) = memo.borrow().get(&key) {
        return u;
    }
    let u = test();
    memo.borrow_mut().insert(key, u);
    u
}

pub(super) fn counters(f: &Function) -> Counters {
    let mut c = Counters::default();
    walk_block(&f.body, &mut |s| match s {
        Stmt::For {
            var, start, step, ..
        } => {
            c.fors.insert(*var, (*start, *step));
        }
        Stmt::Let { value, expr } => {
            c.lets.insert(*value, *expr);
        }
        _ => {}
    });
    c
}

/// Whether a built-in has the same value in the four lanes of a vector: all but the ids in
/// dimension 0 and the linear id. The variant runs only when the work-group's size in
/// dimension 0 is a multiple of four ([`super::JitProgram`]) and takes four consecutive
/// local ids in dimension 0 ([`super::lower`]'s work-item loop steps `x` by four), so the
/// lanes share their ids in dimensions 1 and 2 (and [`Gen::vbuiltin`] splats them).
fn uniform_builtin(b: Builtin) -> bool {
    !matches!(
        b,
        Builtin::GlobalId(0) | Builtin::LocalId(0) | Builtin::LocalLinearId
    )
}

/// Whether `e` has no lane-dependent part (the active lanes hold the same value): literals,
/// parameters, lengths, work-group ids and sizes, the ids in dimensions 1 and 2, counters with
/// a uniform start and step, `let`s of uniform expressions, and pure operations on them.
pub(super) fn uniform(f: &Function, c: &Counters, e: ExprId) -> bool {
    c.memo(Pattern::Uniform, e, || match f.exprs.get(e) {
        Expr::Literal(_) | Expr::Param(_) | Expr::BufferLen(_) => true,
        Expr::Builtin(b) => uniform_builtin(*b),
        Expr::Value(v) => match (c.fors.get(v), c.lets.get(v)) {
            (Some(&(s, st)), _) => uniform(f, c, s) && uniform(f, c, st),
            (None, Some(&x)) => uniform(f, c, x),
            (None, None) => false,
        },
        Expr::Unary(_, a) | Expr::Cast(a, _) => uniform(f, c, *a),
        // An aligned run of four divided by a multiple of four: the work-item layouts'
        // `tid / cols` (SGEMM's row of register tiles).
        Expr::Binary(BinaryOp::Div, a, b)
            if u32_lit(f, *b).is_some_and(|k| k > 0 && k % 4 == 0) =>
        {
            uniform(f, c, *a) || aligned(f, c, *a)
        }
        Expr::Binary(BinaryOp::Shr, a, b)
            if u32_lit(f, *b).is_some_and(|k| (2..32).contains(&k)) =>
        {
            uniform(f, c, *a) || aligned(f, c, *a)
        }
        Expr::Binary(_, a, b) => uniform(f, c, *a) && uniform(f, c, *b),
        // A clamped row of a stencil: `min(max(row + 1, 0), rows - 1)`.
        Expr::Math(MathFn::Min | MathFn::Max, xs) => xs.iter().all(|&x| uniform(f, c, x)),
        _ => false,
    })
}

/// The value of a `u32` literal.
fn u32_lit(f: &Function, e: ExprId) -> Option<u32> {
    f.exprs
        .literal(e)
        .filter(|l| l.scalar == Scalar::U32)
        .map(|l| l.as_i128() as u32)
}

/// Whether `e` is a `u32` the same in the four lanes and a multiple of four: a literal, or a
/// uniform value times one, or shifted left by two or more.
fn uniform_times_4(f: &Function, c: &Counters, e: ExprId) -> bool {
    c.memo(Pattern::UniformTimes4, e, || match f.exprs.get(e) {
        Expr::Literal(_) => u32_lit(f, e).is_some_and(|k| k % 4 == 0),
        Expr::Binary(BinaryOp::Mul, a, b) if f.exprs.ty(e) == crate::ir::Type::U32 => {
            (uniform_times_4(f, c, *a) && uniform(f, c, *b))
                || (uniform(f, c, *a) && uniform_times_4(f, c, *b))
        }
        Expr::Binary(BinaryOp::Shl, a, b) => {
            uniform(f, c, *a) && u32_lit(f, *b).is_some_and(|k| (2..32).contains(&k))
        }
        _ => false,
    })
}

/// Whether the four lanes of `e` (a `u32`) are `4q`, `4q + 1`, `4q + 2`, `4q + 3` for some
/// `q`: the local id in dimension 0, the linear one and the global one (the work-item loop
/// visits four consecutive local ids from a multiple of four, and the work-group's size in
/// dimension 0 is a multiple of four), one of them modulo a multiple of four or masked by
/// `2^k - 1` (`k >= 2`), plus a multiple of four the lanes share (wrapping keeps both).
fn aligned(f: &Function, c: &Counters, e: ExprId) -> bool {
    if f.exprs.ty(e) != crate::ir::Type::U32 {
        return false;
    }
    c.memo(Pattern::Aligned, e, || match f.exprs.get(e) {
        Expr::Builtin(Builtin::GlobalId(0) | Builtin::LocalId(0) | Builtin::LocalLinearId) => true,
        Expr::Value(v) => c.lets.get(v).is_some_and(|&x| aligned(f, c, x)),
        Expr::Binary(BinaryOp::Rem, a, b) => {
            u32_lit(f, *b).is_some_and(|k| k % 4 == 0 && k > 0) && aligned(f, c, *a)
        }
        Expr::Binary(BinaryOp::And, a, b) => {
            u32_lit(f, *b).is_some_and(|k| k >= 3 && (k as u64 + 1).is_power_of_two())
                && aligned(f, c, *a)
        }
        Expr::Binary(BinaryOp::Add, a, b) => {
            (aligned(f, c, *a) && uniform_times_4(f, c, *b))
                || (uniform_times_4(f, c, *a) && aligned(f, c, *b))
        }
        _ => false,
    })
}

/// Whether the four lanes of `e` are consecutive integers (the first lane's value plus
/// 0, 1, 2, 3, up to wrapping): the local or global id in dimension 0 ([`aligned`]: or one
/// of them modulo a multiple of four), plus or minus something uniform, or a counter
/// starting there with a uniform step.
fn consecutive(f: &Function, c: &Counters, e: ExprId) -> bool {
    if aligned(f, c, e) {
        return true;
    }
    c.memo(Pattern::Consecutive, e, || match f.exprs.get(e) {
        Expr::Builtin(Builtin::GlobalId(0) | Builtin::LocalId(0) | Builtin::LocalLinearId) => true,
        Expr::Value(v) => match (c.fors.get(v), c.lets.get(v)) {
            (Some(&(s, st)), _) => consecutive(f, c, s) && uniform(f, c, st),
            (None, Some(&x)) => consecutive(f, c, x),
            (None, None) => false,
        },
        _ => shifted(f, c, e, &|x| consecutive(f, c, x)),
    })
}

/// Whether `e` is `x + u`, `u + x` or `x - u` (`u` uniform) or a cast between 32-bit
/// integers of `x`, for an `x` that `inner` accepts: what keeps a pattern of the lanes
/// ([`consecutive`], [`clamped_consecutive`]).
fn shifted(f: &Function, c: &Counters, e: ExprId, inner: &dyn Fn(ExprId) -> bool) -> bool {
    match f.exprs.get(e) {
        Expr::Binary(BinaryOp::Add, a, b) => {
            (inner(*a) && uniform(f, c, *b)) || (uniform(f, c, *a) && inner(*b))
        }
        Expr::Binary(BinaryOp::Sub, a, b) => inner(*a) && uniform(f, c, *b),
        Expr::Cast(a, to) => {
            matches!(to, Scalar::I32 | Scalar::U32)
                && matches!(f.exprs.ty(*a).scalar, Scalar::I32 | Scalar::U32)
                && inner(*a)
        }
        _ => false,
    }
}

/// Whether the lanes of `e` (not [`consecutive`] itself) are consecutive wherever a clamp
/// in it does not bind: a [`consecutive`] index under `min` or `max` with a uniform bound
/// (a stencil's neighbour at a border, `min(max(x + 1, 0), n - 1)`), plus or minus
/// something uniform, cast between 32-bit integers. Such an access is tested at run time
/// ([`Gen::vload_clamped`]): one vector access when the four indices turn out consecutive.
fn clamped_consecutive(f: &Function, c: &Counters, e: ExprId) -> bool {
    let near = |x: ExprId| consecutive(f, c, x) || clamped_consecutive(f, c, x);
    c.memo(Pattern::ClampedConsecutive, e, || match f.exprs.get(e) {
        Expr::Value(v) => match (c.fors.get(v), c.lets.get(v)) {
            (None, Some(&x)) => clamped_consecutive(f, c, x),
            _ => false,
        },
        Expr::Math(MathFn::Min | MathFn::Max, xs) if xs.len() == 2 => {
            matches!(f.exprs.ty(e).scalar, Scalar::I32 | Scalar::U32)
                && ((near(xs[0]) && uniform(f, c, xs[1])) || (uniform(f, c, xs[0]) && near(xs[1])))
        }
        _ => shifted(f, c, e, &|x| clamped_consecutive(f, c, x)),
    })
}

/// Whether `e` can be computed on a region's entry, ahead of its statements: it reads only
/// literals, the launch's arguments, buffer lengths and the work-item's ids and sizes (no
/// statement's value), through scalar operations that cannot fault (no integer division) or
/// call out (no stub; of the built-in functions only `min` and `max`).
fn early(f: &Function, e: ExprId) -> bool {
    crate::ir::all_exprs(&f.exprs, e, |x| match x {
        Expr::Value(_)
        | Expr::Stub(..)
        | Expr::Splat(..)
        | Expr::Compose(..)
        | Expr::Extract(..)
        | Expr::Binary(BinaryOp::Div | BinaryOp::Rem, ..) => false,
        Expr::Math(m, _) => matches!(m, MathFn::Min | MathFn::Max),
        _ => true,
    })
}

/// Whether the side of an `if` is small enough to be lowered once more for all lanes taking
/// it ([`Gen::vstmt`]'s `If`): at most four statements, none a loop or a nested `if` (a
/// tile's guarded load and store).
fn small_side(block: &[Stmt]) -> bool {
    !block.is_empty()
        && block.len() <= 4
        && block
            .iter()
            .all(|s| !matches!(s, Stmt::If { .. } | Stmt::For { .. } | Stmt::Loop { .. }))
}

/// Whether `block` takes lanes out of the mask for good, as seen from outside it: a `return`,
/// or a `break` or `continue` of a loop that encloses `block` (`inner`: the loops inside).
fn leaves(block: &[Stmt], inner: &mut Vec<crate::ir::LoopId>) -> bool {
    block.iter().any(|s| match s {
        Stmt::Return => true,
        Stmt::Break(id) | Stmt::Continue(id) => !inner.contains(id),
        Stmt::If {
            then, otherwise, ..
        } => leaves(then, inner) || leaves(otherwise, inner),
        Stmt::For { id, body, .. } | Stmt::Loop { id, body } => {
            inner.push(*id);
            let l = leaves(body, inner);
            inner.pop();
            l
        }
        _ => false,
    })
}

/// Whether a loop's body (of loop `id`) keeps every lane that starts an iteration until the
/// next: no `return`, no `break` of it or of an enclosing loop, no `continue` of an
/// enclosing loop (its own `continue`s rejoin at the latch).
fn keeps_lanes(id: crate::ir::LoopId, body: &[Stmt]) -> bool {
    fn breaks(block: &[Stmt], id: crate::ir::LoopId) -> bool {
        block.iter().any(|s| match s {
            Stmt::Break(b) => *b == id,
            Stmt::If {
                then, otherwise, ..
            } => breaks(then, id) || breaks(otherwise, id),
            Stmt::For { body, .. } | Stmt::Loop { body, .. } => breaks(body, id),
            _ => false,
        })
    }
    !breaks(body, id) && !leaves(body, &mut vec![id])
}

/// Whether the lanes of `for` loop `id` (its start, end and step `bounds`) may run it
/// together from their own starts: bounds not all uniform, a uniform step, and no lane
/// leaving it early ([`keeps_lanes`]). [`Gen::vfor`] then tests on entry that they run the
/// same iterations.
fn own_starts(
    f: &Function,
    c: &Counters,
    id: crate::ir::LoopId,
    bounds: [ExprId; 3],
    body: &[Stmt],
) -> bool {
    !bounds.iter().all(|&x| uniform(f, c, x)) && uniform(f, c, bounds[2]) && keeps_lanes(id, body)
}

/// Whether a `for` loop's counter `var` (starting at `start`) is a 32-bit integer
/// consecutive in the lanes ([`consecutive`]): a striped loop, each lane starting at its
/// id's element of a stretch (`group_start + local_id`) and all stepping by the same amount
/// (the group's size), so that the lanes' loads at the counter are consecutive already.
/// Where its lanes run the same number of iterations ([`Gen::same_trip_counts`]), the four
/// (or eight) lanes run it together ([`Gen::vfor`]), its loads one vector load each (per
/// half with eight lanes).
fn striped_counter(f: &Function, c: &Counters, var: ValueId, start: ExprId) -> bool {
    matches!(f.values[var].ty.scalar, Scalar::I32 | Scalar::U32)
        && f.values[var].ty.width == 1
        && consecutive(f, c, start)
}

/// Whether the body of loop `id` holds a `continue` of it (at any depth).
fn continues(id: crate::ir::LoopId, body: &[Stmt]) -> bool {
    let mut cont = false;
    walk_block(body, &mut |s| {
        cont |= matches!(s, Stmt::Continue(c) if *c == id)
    });
    cont
}

/// The private variables that count the iterations of loop `id` (`body`), which follows
/// `before` in its block and which lanes leave only by its own `break`s: a 32-bit integer
/// whose last store before the loop is at the top level of `before` and stores a uniform
/// expression ([`uniform`]), and whose only store in
/// the loop, at the top level of its body, adds a literal or a parameter to (or subtracts
/// one from) its value loaded at the top level of the body before it; the body has no
/// `continue` of the loop. Every lane active in an iteration entered the loop holding the
/// same value and has run every store since (a lane that left by a `break` runs no more), so
/// the active lanes hold one value: [`Gen::vblock`] keeps it in a scalar, and what the loop
/// computes from it (the escape loop's `it < max_iter`) is scalar work. A lane's own
/// registers take the scalar when it leaves ([`Gen::record_trips`]), not every iteration.
fn trip_counters(
    f: &Function,
    c: &Counters,
    before: &[Stmt],
    id: crate::ir::LoopId,
    body: &[Stmt],
) -> Vec<(crate::ir::PrivateId, ExprId)> {
    if continues(id, body) || leaves(body, &mut vec![id]) {
        return Vec::new();
    }
    let writes = |block: &[Stmt], p: crate::ir::PrivateId| {
        let mut n = 0;
        walk_block(block, &mut |s| {
            n += matches!(s, Stmt::Store { mem: Mem::Private(q), .. }
                | Stmt::Atomic { mem: Mem::Private(q), .. } if *q == p) as u32;
        });
        n
    };
    let simple = |e: ExprId| matches!(f.exprs.get(e), Expr::Literal(_) | Expr::Param(_));
    let mut out = Vec::new();
    for (j, st) in body.iter().enumerate() {
        let Stmt::Store {
            mem: Mem::Private(p),
            value: e,
            ..
        } = st
        else {
            continue;
        };
        let d = &f.privates[*p];
        if d.len.is_some()
            || d.elem.width != 1
            || !matches!(d.elem.scalar, Scalar::I32 | Scalar::U32)
            || writes(body, *p) != 1
        {
            continue;
        }
        // The loaded value: a top-level load of `p` before the store.
        let loads_p = |s: &Stmt, v: ValueId| match s {
            Stmt::Load {
                value,
                mem: Mem::Private(q),
                ..
            } => *value == v && q == p,
            _ => false,
        };
        let loaded = |x: ExprId| match f.exprs.get(x) {
            Expr::Value(v) => body[..j].iter().any(|s| loads_p(s, *v)),
            _ => false,
        };
        let steps = match f.exprs.get(*e) {
            Expr::Binary(BinaryOp::Add, a, b) => {
                (loaded(*a) && simple(*b)) || (simple(*a) && loaded(*b))
            }
            Expr::Binary(BinaryOp::Sub, a, b) => loaded(*a) && simple(*b),
            _ => false,
        };
        if !steps {
            continue;
        }
        // Its value on entry: the last statement before the loop that writes it.
        let Some(last) = before
            .iter()
            .rposition(|s| writes(std::slice::from_ref(s), *p) > 0)
        else {
            continue;
        };
        if let Stmt::Store {
            mem: Mem::Private(q),
            value: e0,
            ..
        } = &before[last]
        {
            if q == p && uniform(f, c, *e0) {
                out.push((*p, *e0));
            }
        }
    }
    out
}

/// Whether `e` reads one of `vars` (through expressions).
fn reads_any(f: &Function, e: ExprId, vars: &[ValueId]) -> bool {
    !crate::ir::all_exprs(
        &f.exprs,
        e,
        |x| !matches!(x, Expr::Value(v) if vars.contains(v)),
    )
}

/// What [`gathers_in_loops`] counts: the streams read at once that a tile or four scalar
/// loads stand for.
#[derive(Default)]
struct Streams {
    /// In the loop being walked (and those inside it, so far).
    open: std::cell::Cell<u32>,
    /// The most in any loop.
    peak: std::cell::Cell<u32>,
    /// The loads of rows ([`tile_rows`]) of the loops walked, each `true` for its row's
    /// first (the one that counts).
    rowed: std::cell::RefCell<HashMap<ValueId, bool>>,
    /// The ends of the loops with rows: a loop that starts at one runs its last iterations.
    row_ends: std::cell::RefCell<Vec<ExprId>>,
    /// The stores of rows of the loops walked (written as whole vectors: not counted).
    stored: std::cell::RefCell<Vec<(Mem, ExprId)>>,
}

/// Whether a loop inside a region of a kernel with barriers indexes memory with its counter
/// lane by lane (neither consecutive nor uniform: each work-item walks its own stretch, as
/// in a reduction that gives every work-item a contiguous chunk) where the vector code
/// would test the lanes one by one. Such a loop runs faster one work-item at a time than as
/// four-lane gathers, so the kernel keeps the scalar code. Not counted: a load proven in
/// bounds ([`crate::ir::ranges`]) at the counter (plus something uniform) of a loop with a
/// uniform step that keeps its lanes ([`keeps_lanes`]), counted in `streams`: where
/// the four lanes run the same iterations ([`Gen::vfor`] tests it on entry) it is four
/// scalar loads without tests or mask work, and the four work-items' chains (a sum's
/// additions) overlap. [`scalar_reason`] lets two such loads through (a dot product's two
/// streams), not three: measured on a 2-core AMD EPYC VM (issue 31, 2026-11-28, idle), the
/// chunked dot with its loads read as tiles ([`Gen::vfor_tiled`]: 2.6 instructions an
/// element against 12.6) took 0.42 against 0.86-0.90 ms one work-item at a time at 2^20
/// `f32` (chunks of 512 elements, in the caches), 2.0 against 3.5-4.2 ms at 2^22 (chunks
/// of 2,048), 4.9-7.0 against 8.4-9.1 ms at 2^24 (chunks of 8,192); only chunks of 512 at
/// 2^24, eight streams of 2 KB from memory at once (two lanes' in each 4 KB page), ran
/// slower in four lanes: 9.5-10.8 against 8.6-9.2 ms. The bench's reductions now run
/// chunks of 8,192 on CPU devices (`CPU_REDUCE_GROUP` in the CLI). A row of loads of a loop unrolled by hand ([`tile_rows`]: `k`
/// consecutive elements per lane and iteration, read as tiles whether proven or not) is one
/// stream, a row of stores none (written as whole vectors), and the loop of its last
/// iterations (a loop without barriers that starts where it ends) is not counted; loops that run one after another do not add their streams up
/// (the most any loop has, with the loops inside it, counts).
fn gathers_in_loops(
    f: &Function,
    c: &Counters,
    proof: &crate::ir::ranges::Proof,
    streams: &Streams,
    block: &[Stmt],
    vars: &mut Vec<(ValueId, bool)>,
) -> bool {
    let loop_vars: Vec<ValueId> = vars.iter().map(|&(v, _)| v).collect();
    block.iter().any(|s| match s {
        Stmt::Load { value, .. } if streams.rowed.borrow().contains_key(value) => {
            let first = streams.rowed.borrow()[value];
            streams.open.set(streams.open.get() + first as u32);
            false
        }
        Stmt::Store { mem, index, .. } if streams.stored.borrow().contains(&(*mem, *index)) => {
            false
        }
        Stmt::Load { mem, index, .. } | Stmt::Store { mem, index, .. } => {
            let gather = matches!(mem, Mem::Buffer(_) | Mem::Local(_))
                && reads_any(f, *index, &loop_vars)
                && !consecutive(f, c, *index)
                && !uniform(f, c, *index);
            let exempt = gather
                && matches!(s, Stmt::Load { .. })
                && proof.verdict(*mem, *index) != &crate::ir::ranges::Verdict::Unproven
                && strided(f, c, *index, vars);
            streams.open.set(streams.open.get() + exempt as u32);
            gather && !exempt
        }
        Stmt::If {
            then, otherwise, ..
        } => {
            gathers_in_loops(f, c, proof, streams, then, vars)
                || gathers_in_loops(f, c, proof, streams, otherwise, vars)
        }
        Stmt::For {
            id,
            var,
            start,
            end,
            step,
            body,
        } => {
            let local = !super::plan::has_sync(s);
            if local && streams.row_ends.borrow().contains(start) {
                // The last iterations of a loop unrolled by hand (fewer than its step, one
                // at a time): their gathers cost less than running one work-item at a time.
                return false;
            }
            let outer = streams.open.replace(0);
            if local {
                let together = uniform(f, c, *step) && keeps_lanes(*id, body);
                vars.push((*var, together));
                if let Some(k) = row_step(f, *step).filter(|_| together) {
                    let rows = tile_rows(f, c, proof, *var, k, body);
                    if !rows.is_empty() {
                        streams.row_ends.borrow_mut().push(*end);
                    }
                    let mut rowed = streams.rowed.borrow_mut();
                    for r in rows {
                        for (j, v) in r.values.into_iter().enumerate() {
                            rowed.insert(v, j == 0);
                        }
                        let mem = r.mem;
                        let stores = r.stores.into_iter().map(|i| (mem, i));
                        streams.stored.borrow_mut().extend(stores);
                    }
                }
            }
            let g = gathers_in_loops(f, c, proof, streams, body, vars);
            if local {
                vars.pop();
            }
            // This loop's streams, with those of the loops inside it.
            let mine = streams.open.get();
            streams.peak.set(streams.peak.get().max(mine));
            streams.open.set(outer + mine);
            g
        }
        Stmt::Loop { body, .. } => gathers_in_loops(f, c, proof, streams, body, vars),
        _ => false,
    })
}

/// Whether `e` is the counter of one of the loops `vars` whose lanes may run together (the
/// flag), plus or minus something uniform, and reads no other counter of `vars`.
fn strided(f: &Function, c: &Counters, e: ExprId, vars: &[(ValueId, bool)]) -> bool {
    fn walk(f: &Function, c: &Counters, e: ExprId, vars: &[(ValueId, bool)], seen: &Seen) -> bool {
        let go = |x| walk(f, c, x, vars, seen);
        remembered(seen, e, || match f.exprs.get(e) {
            Expr::Value(v) => vars.iter().any(|&(w, t)| w == *v && t),
            Expr::Binary(BinaryOp::Add, a, b) => {
                (go(*a) && uniform(f, c, *b)) || (uniform(f, c, *a) && go(*b))
            }
            Expr::Binary(BinaryOp::Sub, a, b) => go(*a) && uniform(f, c, *b),
            _ => false,
        })
    }
    walk(f, c, e, vars, &Seen::default())
}

/// The most instructions a value may take to compute ([`Gen::deep`]) and still be left for
/// Cranelift to place where it is used, in each branch that uses it.
const ANCHOR_ABOVE: usize = 24;

/// Statements at most in the body of a loop that [`Gen::vfor_tiled`] unrolls (lowered five
/// times: four in the tiled loop, one in the loop of the last iterations; and once more in
/// the loop for the other lanes).
const TILE_BODY: usize = 16;

/// The loads of the body of a `for` loop (loop `id`, counter `var`) that its tiled copy
/// ([`Gen::vfor_tiled`]) reads four iterations at a time, as a 4x4 tile: `(value, buffer,
/// index)` of each load at the top level of the body (run in every iteration) from a buffer
/// parameter the kernel only reads (`Read` or `Constant` access: the launch refuses a
/// buffer the kernel writes passed again as such a parameter, [`crate::Error::Aliasing`], so
/// no store of the kernel changes what the tile read ahead), of 32-bit elements, at the
/// counter plus or minus something uniform that the body does not define ([`strided`]), and
/// proven in bounds ([`crate::ir::ranges`]: for every value the counter takes, so for the
/// four iterations a tile reads, all of which the loop runs). The body must keep its lanes
/// and be straight enough to copy four times: no `break`, `continue` or `return`, no inner
/// loop, no barrier or collective, at most [`TILE_BODY`] statements. Empty when any of
/// that fails.
pub(super) fn tile_loads(
    f: &Function,
    c: &Counters,
    proof: &crate::ir::ranges::Proof,
    var: ValueId,
    body: &[Stmt],
) -> Vec<(ValueId, Mem, ExprId)> {
    if straight_body(body).is_none_or(|n| n > TILE_BODY) {
        return Vec::new();
    }
    let (inner, _) = super::plan::values_of(f, body, &[]);
    let inner: Vec<ValueId> = inner.into_iter().collect();
    body.iter()
        .filter_map(|s| match *s {
            Stmt::Load {
                value,
                mem: mem @ Mem::Buffer(p),
                index,
                ..
            } => {
                let read_only = matches!(
                    f.params[p].kind,
                    ParamKind::Buffer { access, .. } if access.is_read_only()
                );
                let elem = f.mem_elem(mem).map(|t| t.scalar);
                (read_only
                    && matches!(elem, Some(Scalar::I32 | Scalar::U32 | Scalar::F32))
                    && strided(f, c, index, &[(var, true)])
                    && !reads_any(f, index, &inner)
                    && proof.verdict(mem, index) != &crate::ir::ranges::Verdict::Unproven)
                    .then_some((value, mem, index))
            }
            _ => None,
        })
        .collect()
}

/// Elements per lane that one iteration of a loop unrolled by hand may read as a row of
/// tiles ([`tile_rows`]): the step's literal, one of these.
const ROW_STEPS: [u32; 3] = [4, 8, 16];

/// Statements at most in the body of a loop whose loads [`Gen::vfor_rows`] reads as rows
/// (lowered twice: once in the tiled loop, once in the loop for the other lanes).
const ROW_BODY: usize = 64;

/// A row of loads or stores in the body of a loop unrolled by hand ([`tile_rows`]): in
/// every iteration, the loads (or the stores) of the elements `first`, `first + 1`, ...,
/// `first + k - 1` of one buffer, `k` the loop's step.
pub(super) struct TileRow {
    pub(super) mem: Mem,
    /// The index of the row's first element (its smallest constant).
    pub(super) first: ExprId,
    /// The loads' values, the first element's first (none for a row of stores).
    pub(super) values: Vec<ValueId>,
    /// The stores' indices, the first element's first (none for a row of loads).
    pub(super) stores: Vec<ExprId>,
}

/// A loop over byte offsets ([`Gen::bytes_loop`]): the offset's variable, its value in the
/// body, the header and the block after the loop.
struct BytesLoop {
    off: Variable,
    o: Value,
    hdr: cl::Block,
    exit: cl::Block,
}

/// The 32-bit integer literal `e`, if it is one (as an `i64`, sign-extended for `i32`).
fn literal_i64(f: &Function, e: ExprId) -> Option<i64> {
    f.exprs
        .literal(e)
        .filter(|l| matches!(l.scalar, Scalar::U32 | Scalar::I32))
        .map(|l| l.as_i128() as i64)
}

/// The step of a loop unrolled by hand whose loads [`tile_rows`] may read as rows: a literal,
/// one of [`ROW_STEPS`].
fn row_step(f: &Function, step: ExprId) -> Option<u32> {
    literal_i64(f, step)
        .and_then(|k| u32::try_from(k).ok())
        .filter(|k| ROW_STEPS.contains(k))
}

/// The number of statements of `body` (at any depth) if it is straight enough to lower
/// again or as tiles: no `break`, `continue` or `return`, no inner loop, no barrier or
/// collective.
fn straight_body(body: &[Stmt]) -> Option<usize> {
    let (mut n, mut plain) = (0, true);
    walk_block(body, &mut |s| {
        n += 1;
        plain &= !matches!(
            s,
            Stmt::For { .. }
                | Stmt::Loop { .. }
                | Stmt::Break(_)
                | Stmt::Continue(_)
                | Stmt::Return
        ) && !super::plan::has_sync(s);
    });
    plain.then_some(n)
}

/// `e` as a sum: its addends that are not literals (in `terms`) and the literals' sum
/// (returned), through additions and subtractions of literals of its 32-bit integer type.
/// Two indices with the same `terms` differ by the difference of their constants (modulo
/// 2^32, as the indices wrap).
///
/// At most [`MAX_ADDENDS`] steps: a sum that shares its addends (`c + c`, each `c` another
/// such sum) has exponentially many, and one past the limit is a term as it is.
fn addends(f: &Function, e: ExprId, terms: &mut Vec<ExprId>) -> i64 {
    fn walk(f: &Function, e: ExprId, terms: &mut Vec<ExprId>, steps: &mut u32) -> i64 {
        let ty = f.exprs.ty(e);
        if let Some(k) = literal_i64(f, e) {
            return k;
        }
        *steps += 1;
        if *steps > MAX_ADDENDS {
            terms.push(e);
            return 0;
        }
        match *f.exprs.get(e) {
            Expr::Binary(BinaryOp::Add, a, b) if f.exprs.ty(a) == ty && f.exprs.ty(b) == ty => {
                walk(f, a, terms, steps).wrapping_add(walk(f, b, terms, steps))
            }
            Expr::Binary(BinaryOp::Sub, a, b) if f.exprs.ty(a) == ty => match literal_i64(f, b) {
                Some(k) => walk(f, a, terms, steps).wrapping_sub(k),
                None => {
                    terms.push(e);
                    0
                }
            },
            _ => {
                terms.push(e);
                0
            }
        }
    }
    walk(f, e, terms, &mut 0)
}

/// The most expressions [`addends`] takes apart.
const MAX_ADDENDS: u32 = 64;

/// The rows of loads of a `for` loop unrolled by hand (loop counter `var`, step the literal
/// `k`, one of [`ROW_STEPS`]): in the body (at its top level, so run in every iteration),
/// `k` loads of one buffer that the kernel only reads (`Read` or `Constant`: no store of the
/// kernel changes what a row reads ahead), of 32-bit elements, at 32-bit indices that are
/// the counter plus something uniform that the body does not define ([`strided`]) and that
/// differ only in a constant, by 0, 1, ..., `k - 1`: the `k` consecutive elements each lane
/// reads in an iteration, `k / 4` 4x4 tiles ([`Gen::vfor_rows`]). Nothing needs to be
/// proven: [`Gen::vfor_rows`] tests on entry that every element the loop will read is in
/// bounds. The body must keep its lanes and be straight (no `break`, `continue` or
/// `return`, no inner loop, no barrier or collective, at most [`ROW_BODY`] statements).
///
/// Likewise a row of stores (to a buffer the kernel writes, of 32-bit elements, at such
/// indices), written as tiles at the end of each iteration: only where the body stores to
/// that buffer nowhere else and reads it nowhere (nothing in the iteration sees the stores
/// late), and where nothing else in the body can fault (every other access to memory proven
/// in bounds, no integer division or remainder: no fault finds a row's stores of its
/// iteration not yet made).
pub(super) fn tile_rows(
    f: &Function,
    c: &Counters,
    proof: &crate::ir::ranges::Proof,
    var: ValueId,
    k: u32,
    body: &[Stmt],
) -> Vec<TileRow> {
    if straight_body(body).is_none_or(|n| n > ROW_BODY) || !ROW_STEPS.contains(&k) {
        return Vec::new();
    }
    let (inner, _) = super::plan::values_of(f, body, &[]);
    let inner: Vec<ValueId> = inner.into_iter().collect();
    // The candidate loads and stores, by buffer, kind and non-constant addends: (constant,
    // the load's value or `None`, index).
    type Group = Vec<(i64, Option<ValueId>, ExprId)>;
    type Key = (Mem, bool, Vec<ExprId>);
    let mut groups: Vec<(Key, Group)> = Vec::new();
    for s in body {
        let (value, mem, p, index) = match *s {
            Stmt::Load {
                value,
                mem: mem @ Mem::Buffer(p),
                index,
                ..
            } => (Some(value), mem, p, index),
            Stmt::Store {
                mem: mem @ Mem::Buffer(p),
                index,
                ..
            } => (None, mem, p, index),
            _ => continue,
        };
        let access_ok = match f.params[p].kind {
            ParamKind::Buffer { access, .. } => access.is_read_only() == value.is_some(),
            _ => false,
        };
        let elem = f.mem_elem(mem).map(|t| t.scalar);
        let it = f.exprs.ty(index);
        if !(access_ok
            && matches!(elem, Some(Scalar::I32 | Scalar::U32 | Scalar::F32))
            && it.width == 1
            && matches!(it.scalar, Scalar::I32 | Scalar::U32)
            && strided(f, c, index, &[(var, true)])
            && !reads_any(f, index, &inner))
        {
            continue;
        }
        let mut terms = Vec::new();
        let k0 = addends(f, index, &mut terms);
        terms.sort();
        let key = (mem, value.is_some(), terms);
        match groups.iter_mut().find(|(g, _)| *g == key) {
            Some((_, g)) => g.push((k0, value, index)),
            None => groups.push((key, vec![(k0, value, index)])),
        }
    }
    let mut rows: Vec<TileRow> = groups
        .into_iter()
        .filter_map(|((mem, _, _), mut g)| {
            g.sort_by_key(|&(k0, ..)| k0);
            let c0 = g.first()?.0;
            let whole = g.len() == k as usize
                && g.iter()
                    .enumerate()
                    .all(|(j, &(kj, ..))| kj == c0 + j as i64);
            whole.then(|| TileRow {
                mem,
                first: g[0].2,
                values: g.iter().filter_map(|&(_, v, _)| v).collect(),
                stores: match g[0].1 {
                    Some(_) => Vec::new(),
                    None => g.iter().map(|&(.., i)| i).collect(),
                },
            })
        })
        .collect();
    if rows.iter().any(|r| !r.stores.is_empty()) {
        // Rows of stores: their buffers touched nowhere else, nothing else that faults.
        let mut faults = false;
        let mut touched: HashMap<Mem, u32> = HashMap::new();
        walk_block(body, &mut |s| {
            let (in_row, mem, index) = match *s {
                Stmt::Load {
                    value, mem, index, ..
                } => (rows.iter().any(|r| r.values.contains(&value)), mem, index),
                Stmt::Store { mem, index, .. } => (
                    rows.iter()
                        .any(|r| r.mem == mem && r.stores.contains(&index)),
                    mem,
                    index,
                ),
                Stmt::Let { .. } | Stmt::If { .. } => return,
                _ => {
                    faults = true;
                    return;
                }
            };
            if in_memory(f, mem) {
                *touched.entry(mem).or_default() += 1;
                faults |= !in_row && !proof.proven(mem, index);
            }
        });
        faults |= stmt_exprs(body).into_iter().any(|e| divides(f, e));
        rows.retain(|r| {
            r.stores.is_empty()
                || (!faults && touched.get(&r.mem).copied() == Some(r.stores.len() as u32))
        });
    }
    rows
}

/// The expressions that the `let`s, loads, stores and `if`s of `block` (at any depth) read
/// directly.
fn stmt_exprs(block: &[Stmt]) -> Vec<ExprId> {
    let mut out = Vec::new();
    walk_block(block, &mut |s| match *s {
        Stmt::Let { expr, .. } => out.push(expr),
        Stmt::Load { index, .. } => out.push(index),
        Stmt::Store { index, value, .. } => out.extend([index, value]),
        Stmt::If { cond, .. } => out.push(cond),
        _ => {}
    });
    out
}

/// Whether `e` divides integers (a division or remainder: a divisor of zero faults).
fn divides(f: &Function, e: ExprId) -> bool {
    !crate::ir::all_exprs(&f.exprs, e, |x| match x {
        Expr::Binary(BinaryOp::Div | BinaryOp::Rem, a, _) => !f.exprs.ty(*a).scalar.is_int(),
        _ => true,
    })
}

fn lanes_flags() -> MemFlags {
    MemFlags::new().with_endianness(Endianness::Little)
}

/// Four bytes (little-endian in an `i32`: lane `k`'s in byte `k`) as a lane mask: all ones
/// where the byte is nonzero.
pub(super) fn bytes_to_lanes(b: &mut FunctionBuilder, bytes: Value) -> Value {
    let v = b.ins().splat(types::I32X4, bytes);
    let sel: Vec<u8> = (0..LANES)
        .flat_map(|k| (0xffu32 << (8 * k)).to_le_bytes())
        .collect();
    let c = b.func.dfg.constants.insert(sel.into());
    let sel = b.ins().vconst(types::I32X4, c);
    let v = b.ins().band(v, sel);
    let z = b.ins().iconst(types::I32, 0);
    let z = b.ins().splat(types::I32X4, z);
    b.ins().icmp(IntCC::NotEqual, v, z)
}

/// A lane mask as four bytes, 1 where the lane is set (the inverse of [`bytes_to_lanes`]).
fn lanes_to_bytes(b: &mut FunctionBuilder, m: Value) -> Value {
    let bits = b.ins().vhigh_bits(types::I32, m);
    // Bit k to bit 8k: the products of the four bits never meet another byte's bit 0.
    let spread = b.ins().imul_imm(bits, 0x0020_4081);
    b.ins().band_imm(spread, 0x0101_0101)
}

impl Gen<'_, '_> {
    /// The body of the vector variant: `stmts` for four work-items, those of the region's
    /// mask active at the start (all of them in a one-region kernel); the private variables
    /// `synced` are loaded from the record (the others start at zero) and stored back at the
    /// end for the lanes that started the region, with the values `exports` (for the lanes
    /// that reach the end). In the copy for four active lanes those stores keep nothing of
    /// the slots' old contents (all four lanes started the region).
    pub(super) fn vector_body(
        &mut self,
        stmts: &[Stmt],
        synced: &[(crate::ir::PrivateId, u32)],
        exports: &[(ExprId, super::plan::Slot)],
    ) {
        let m = match self.entry_mask {
            Some(m) => m,
            None => self.mask_splat(-1),
        };
        self.set_mask(m);
        for (i, d) in self.f.privates.iter_enumerated() {
            let x = match synced.iter().find(|&&(p, _)| p == i) {
                Some(&(_, off)) => self.vrec_load(off, d.elem.scalar),
                None => self.vzero(d.elem.scalar),
            };
            let vs = self.vvars(VarOf::Private(i), d.elem.scalar);
            for (v, x) in vs.into_iter().zip(x) {
                self.b.def_var(v, x);
            }
        }
        // Every work-item of the group reached the barrier, usually: four lanes.
        self.full = self.entry_mask.is_none();
        let end = |g: &mut Self, entry_full: bool| g.vregion_end(synced, exports, entry_full);
        // The mask is still the entry's: its word's test for four active lanes, where it has
        // one, stands for the vector test.
        let all = self.entry_all.take();
        self.vregion_clamps(stmts, &end, all);
        self.full = false;
    }

    /// The region's statements ([`Gen::vblock_split_with`]); where they load at
    /// [`clamped_consecutive`] indices that depend only on the ids and the launch's
    /// arguments ([`early`]: a stencil's neighbours, `min(max(x + 1, 0), n - 1)`), twice:
    /// one copy for the blocks of lanes where none of those clamps binds, tested once on
    /// entry ([`Gen::unclamped_lane0`], over all eight lanes of eight), whose loads at them
    /// are consecutive ([`Gen::vload_clamped`]: no clamp tested again, one bounds test or
    /// the proof), and one for the others (a work-group's first and last blocks of a row).
    /// Both copies compute the same bits: where no clamp binds, a clamped index is its
    /// unclamped one.
    #[allow(clippy::type_complexity)]
    fn vregion_clamps(
        &mut self,
        stmts: &[Stmt],
        end: &dyn Fn(&mut Self, bool),
        all: Option<Value>,
    ) {
        let mut clamps: Vec<ExprId> = Vec::new();
        walk_block(stmts, &mut |s| {
            if let Stmt::Load { mem, index, .. } = s {
                if self.private_var(*mem).is_none()
                    && !consecutive(self.f, &self.counters, *index)
                    && clamped_consecutive(self.f, &self.counters, *index)
                    && early(self.f, *index)
                    && !clamps.contains(index)
                {
                    clamps.push(*index);
                }
            }
        });
        if clamps.is_empty() || self.splits >= 2 {
            return self.vblock_split_with(stmts, Some(end), all);
        }
        // With eight lanes, from the first half's lane 0 over all eight: the indices' lanes
        // are eight consecutive work-items' (early: ids, arguments).
        let span = self.nlanes();
        self.half = self.wide.then_some(0);
        let oks: Option<Vec<Value>> = clamps
            .iter()
            .map(|&i| self.unclamped_lane0(i, span).map(|(_, ok)| ok))
            .collect();
        self.half = None;
        let Some(oks) = oks else {
            return self.vblock_split_with(stmts, Some(end), all);
        };
        let free = oks
            .into_iter()
            .reduce(|a, b| self.b.ins().band(a, b))
            .expect("a clamped index");
        let (full0, m) = (self.full, self.mask());
        let (fast, general, join) = self.split_on(free);
        self.b.switch_to_block(fast);
        self.memo.push(Default::default());
        self.free_clamps = clamps;
        self.vblock_split_with(stmts, Some(end), all);
        self.free_clamps = Vec::new();
        self.pop_scope();
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(general);
        self.full = full0;
        self.set_mask(m);
        self.memo.push(Default::default());
        self.vblock_split_with(stmts, Some(end), all);
        self.pop_scope();
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        self.splits -= 1;
    }

    /// The end of a region: the values `exports` into the records of the active lanes, and
    /// the private variables `synced` into those of the lanes that started the region (all
    /// four where `entry_full`).
    fn vregion_end(
        &mut self,
        synced: &[(crate::ir::PrivateId, u32)],
        exports: &[(ExprId, super::plan::Slot)],
        entry_full: bool,
    ) {
        for (e, slot) in exports {
            let x = self.vexprs(*e);
            let m = self.mask();
            self.vrec_store(slot.off, slot.ty.scalar, &x, m);
        }
        if let Some(m) = self.entry_mask {
            for &(p, off) in synced {
                let s = self.f.privates[p].elem.scalar;
                let vs = self.vvars(VarOf::Private(p), s);
                let x = self.use_vars(&vs);
                let full = self.full;
                self.full |= entry_full;
                self.vrec_store(off, s, &x, m);
                self.full = full;
            }
        }
    }

    /// [`Gen::vblock_split_then`] with nothing after `stmts`.
    fn vblock_split(&mut self, stmts: &[Stmt]) {
        self.vblock_split_then(stmts, None)
    }

    /// `stmts` under the current mask; where they have a loop, many accesses (an unrolled
    /// loop: eight or more) or an access proven in bounds (a tile's load under a guard that
    /// bounds its index: in the first copy, one load without a test) and the mask is not
    /// known to be full, twice: for four
    /// active lanes (tested once here), without masks where nothing takes lanes out, and for
    /// the others. (At most two such tests on a path, so that nested ones do not multiply
    /// the code.)
    ///
    /// `then`, where given, follows `stmts` in each copy (told whether all four lanes
    /// entered it), in a scope of its own.
    #[allow(clippy::type_complexity)]
    fn vblock_split_then(&mut self, stmts: &[Stmt], then: Option<&dyn Fn(&mut Self, bool)>) {
        self.vblock_split_with(stmts, then, None)
    }

    /// [`Gen::vblock_split_then`], with `all` (an `i8`), where given, as the test that the
    /// current mask has its four lanes set.
    #[allow(clippy::type_complexity)]
    fn vblock_split_with(
        &mut self,
        stmts: &[Stmt],
        then: Option<&dyn Fn(&mut Self, bool)>,
        all: Option<Value>,
    ) {
        let then_in_scope = |g: &mut Self, entry_full: bool| {
            if let Some(t) = then {
                g.memo.push(Default::default());
                t(g, entry_full);
                g.pop_scope();
            }
        };
        let (mut has_loop, mut accesses, mut proven) = (false, 0, false);
        walk_block(stmts, &mut |s| {
            has_loop |= matches!(s, Stmt::For { .. } | Stmt::Loop { .. });
            accesses += matches!(s, Stmt::Load { .. } | Stmt::Store { .. }) as u32;
            if let Stmt::Load { mem, index, .. } | Stmt::Store { mem, index, .. } = s {
                proven |= self.private_var(*mem).is_none()
                    && *self.proof.verdict(*mem, *index) != crate::ir::ranges::Verdict::Unproven;
            }
        });
        if self.full || !(has_loop || accesses >= 8 || proven) || self.splits >= 2 {
            let entry_full = self.full;
            self.vblock(stmts);
            then_in_scope(self, entry_full);
            return;
        }
        let all = match all {
            Some(all) => all,
            None => {
                let m = self.mask();
                self.b.ins().vall_true(m)
            }
        };
        let pre_ok0 = self.pre_ok;
        let (all, pres0) = self.with_preconditions(stmts, all);
        let m = self.mask();
        let (fast, general, join) = self.split_on(all);
        self.b.switch_to_block(fast);
        self.full = true;
        self.pre_ok = true;
        // The mask is all four lanes here: a constant, so that what it selects or is
        // combined with folds away and the entry's mask word is never widened into lanes
        // on this path (issue 31).
        let ones = self.mask_splat(-1);
        self.set_mask(ones);
        self.vblock(stmts);
        then_in_scope(self, true);
        self.pre_ok = pre_ok0;
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(general);
        self.set_mask(m);
        self.full = false;
        self.vblock(stmts);
        then_in_scope(self, false);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        self.pres = pres0;
        self.splits -= 1;
        self.full = false;
    }

    /// The test `all` (an `i8`) of a fast copy of `stmts`, with the preconditions of their
    /// accesses' proofs ([`Gen::preconditions_in`]) added where the enclosing copy has not
    /// tested them: they hold for the whole launch (the test leaves the work-item loop), and
    /// the fast copy (lowered with [`Gen::pre_ok`] set) tests none of its accesses again,
    /// atomics' included. The preconditions become [`Gen::pres`] for both copies; returns
    /// the test and the `pres` to restore where the copies join.
    fn with_preconditions(
        &mut self,
        stmts: &[Stmt],
        mut all: Value,
    ) -> (Value, Vec<crate::ir::ranges::Precondition>) {
        let pres = self.preconditions_in(stmts);
        if !self.pre_ok {
            for p in &pres {
                let ok = self.precondition(p);
                all = self.b.ins().band(all, ok);
            }
        }
        (all, std::mem::replace(&mut self.pres, pres))
    }

    /// The four lanes' scalars of record slot `off` (a lane type; side by side, so a
    /// 64-bit slot is two registers, 16 bytes apart).
    fn vrec_load(&mut self, off: u32, s: Scalar) -> Vec<Value> {
        let (base, at) = self.rec_at(off, s.size());
        if s == Scalar::Bool {
            let bytes = self.b.ins().load(types::I32, MEM, base, at);
            vec![bytes_to_lanes(&mut self.b, bytes)]
        } else {
            let a = self.b.ins().iadd_imm(base, at as i64);
            self.load_parts(s, a)
        }
    }

    /// Stores the lanes of `x` selected by mask `m` into record slot `off` (a lane type);
    /// the other lanes' scalars are kept.
    pub(super) fn vrec_store(&mut self, off: u32, s: Scalar, x: &[Value], m: Value) {
        let (base, at) = self.rec_at(off, s.size());
        if self.full {
            // All four lanes active: nothing to keep.
            if s == Scalar::Bool {
                let vb = lanes_to_bytes(&mut self.b, x[0]);
                self.b.ins().store(MEM, vb, base, at);
            } else {
                let a = self.b.ins().iadd_imm(base, at as i64);
                self.store_parts(x, s, a);
            }
            return;
        }
        if s == Scalar::Bool {
            let x = x[0];
            let old = self.b.ins().load(types::I32, MEM, base, at);
            let vb = lanes_to_bytes(&mut self.b, x);
            let mb = lanes_to_bytes(&mut self.b, m);
            let mb = self.b.ins().imul_imm(mb, 0xff);
            let keep = self.b.ins().band_not(old, mb);
            let put = self.b.ins().band(vb, mb);
            let new = self.b.ins().bor(keep, put);
            self.b.ins().store(MEM, new, base, at);
        } else {
            let a = self.b.ins().iadd_imm(base, at as i64);
            self.store_parts_masked(x, s, a, m);
        }
    }

    /// Sets flag byte `off` of the active lanes (they returned, or left a group-level loop).
    fn vset_flag(&mut self, off: u32) {
        let (base, at) = self.rec_at(off, 1);
        let m = self.mask();
        let old = self.b.ins().load(types::I32, MEM, base, at);
        let set = lanes_to_bytes(&mut self.b, m);
        let new = self.b.ins().bor(old, set);
        self.b.ins().store(MEM, new, base, at);
        self.mark_exit(off);
    }

    /// Base and length of a buffer, local array or private array (of a private array: its
    /// place in the four work-items' record block, element 0 of lane 0; see
    /// [`Gen::lane_elem_addr`]).
    fn mem_base_len(&mut self, mem: Mem) -> (Value, Value) {
        match mem {
            Mem::Buffer(p) => self.mem_arg(self.bufs_p, p.index()),
            Mem::Local(l) => self.local_arg(l),
            Mem::Private(p) => {
                let off = self.plan.privates[p].expect("private array in the record");
                let size = self.f.privates[p].elem.scalar.size();
                let (rb, at) = self.rec_at(off, size);
                let base = self.b.ins().iadd_imm(rb, at as i64);
                let n = self.f.privates[p].count();
                (base, self.b.ins().iconst(types::I64, n as i64))
            }
            Mem::Field(_) => unreachable!("vectorized kernels have no buffers of structs"),
        }
    }

    /// The active lanes: a lane mask, `i32x4` (`i16x8` for eight lanes; in a half
    /// ([`Gen::half`]) its four lanes as an `i32x4`).
    pub(super) fn mask(&mut self) -> Value {
        let c = self.cur.expect("vector mode");
        let m = self.b.use_var(c);
        match self.half {
            Some(h) => self.widen_mask(m, h != 0),
            None => m,
        }
    }

    fn set_mask(&mut self, m: Value) {
        debug_assert!(self.half.is_none(), "the mask of all eight lanes");
        let c = self.cur.expect("vector mode");
        self.b.def_var(c, m);
    }

    /// Whether values are eight lanes here: the eight-lane variant outside a half.
    fn eight(&self) -> bool {
        self.wide && self.half.is_none()
    }

    /// Work-items per vector value here: eight in the eight-lane variant (four in a half).
    fn nlanes(&self) -> u32 {
        if self.eight() {
            2 * LANES
        } else {
            LANES
        }
    }

    /// Registers per value of lane type `s` ([`parts`]; with eight lanes two per 32-bit
    /// value, one `i16x8` per `bool`).
    fn parts(&self, s: Scalar) -> usize {
        match s {
            Scalar::Bool => 1,
            _ if self.eight() => 2 * parts(s),
            _ => parts(s),
        }
    }

    /// The type of each register of lane type `s` ([`vty`]; with eight lanes a `bool` is an
    /// `i16x8` lane mask).
    fn vty(&self, s: Scalar) -> cl::Type {
        if s == Scalar::Bool && self.eight() {
            types::I16X8
        } else {
            vty(s)
        }
    }

    /// Lanes per register of lane type `s`.
    fn per_part(&self, s: Scalar) -> u32 {
        self.nlanes() / self.parts(s) as u32
    }

    /// A lane mask with every lane `v` (0 or -1).
    fn mask_splat(&mut self, v: i64) -> Value {
        if self.eight() {
            let x = self.b.ins().iconst(types::I16, v & 0xffff);
            self.b.ins().splat(types::I16X8, x)
        } else {
            self.splat_i32(v)
        }
    }

    fn splat_i32(&mut self, v: i64) -> Value {
        let x = self.b.ins().iconst(types::I32, v & 0xffff_ffff);
        self.b.ins().splat(types::I32X4, x)
    }

    fn vzero(&mut self, s: Scalar) -> Vec<Value> {
        if s == Scalar::Bool {
            return vec![self.mask_splat(0)];
        }
        let z = self.zero(if narrow_int(s) { Scalar::I32 } else { s });
        let ty = self.vty(s);
        let v = self.b.ins().splat(ty, z);
        vec![v; self.parts(s)]
    }

    /// `m` (a lane mask) as masks of the registers of lane type `s`: for 64-bit lanes, each
    /// 32-bit lane widened to 64 bits.
    fn mask_parts(&mut self, m: Value, s: Scalar) -> Vec<Value> {
        let ty = self.vty(s);
        if self.parts(s) == 1 {
            return vec![self.as_lanes(m, ty)];
        }
        if self.parts(s) == 4 {
            unreachable!("eight lanes of 64 bits: not in the eight-lane variant");
        }
        let lo = self.widen_mask(m, false);
        let hi = self.widen_mask(m, true);
        [lo, hi].into_iter().map(|x| self.as_lanes(x, ty)).collect()
    }

    /// The low or high half of lane mask `m` (an `i16x8` or `i32x4`), each lane widened to
    /// twice its bits: the low half sign-extended, the high half each lane beside itself
    /// (`punpckhwd m, m`: one instruction where the sign extension of the high half is two).
    fn widen_mask(&mut self, m: Value, high: bool) -> Value {
        if !high {
            return self.b.ins().swiden_low(m);
        }
        let ty = self.b.func.dfg.value_type(m);
        let (idx, wide): ([u8; 16], _) = if ty == types::I16X8 {
            (
                [8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31],
                types::I32X4,
            )
        } else {
            (
                [8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31],
                types::I64X2,
            )
        };
        let r = self.shuffle(m, m, idx);
        self.as_lanes(r, wide)
    }

    /// The bytes `idx` (0–15 of `a`, 16–31 of `b`) of two registers, as an `i32x4`.
    fn shuffle(&mut self, a: Value, b: Value, idx: [u8; 16]) -> Value {
        let (a, b) = (self.as_bytes(a), self.as_bytes(b));
        let c = self.b.func.dfg.immediates.push(idx.to_vec().into());
        let r = self.b.ins().shuffle(a, b, c);
        self.b.ins().bitcast(types::I32X4, lanes_flags(), r)
    }

    fn as_bytes(&mut self, a: Value) -> Value {
        self.b.ins().bitcast(types::I8X16, lanes_flags(), a)
    }

    /// The low 32 bits of each 64-bit lane of the registers `ab` as four 32-bit lanes (a
    /// truncation, or the masks of 64-bit lanes as a lane mask).
    fn narrow(&mut self, ab: &[Value]) -> Value {
        if ab.len() == 1 {
            return ab[0];
        }
        if self.eight() {
            // Eight lanes: two `i32x4` masks (all ones or zeros) packed into one `i16x8`.
            debug_assert_eq!(self.b.func.dfg.value_type(ab[0]), types::I32X4);
            // `!a` and `!b` (unsigned `<`, [`direct_binary`]) packed as `!(a, b)`: the `!`
            // left outside, to fold into the `and` that follows.
            let inner = |g: &Self, v: Value| {
                let dfg = &g.b.func.dfg;
                let i = dfg.value_def(v).inst()?;
                (dfg.insts[i].opcode() == cl::Opcode::Bnot).then(|| dfg.inst_args(i)[0])
            };
            if let (Some(a), Some(b)) = (inner(self, ab[0]), inner(self, ab[1])) {
                let p = self.b.ins().snarrow(a, b);
                return self.b.ins().bnot(p);
            }
            return self.b.ins().snarrow(ab[0], ab[1]);
        }
        const LOW: [u8; 16] = [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27];
        self.shuffle(ab[0], ab[1], LOW)
    }

    /// The 32-bit lanes 2 and 3 of `x` moved to lanes 0 and 1.
    fn high_down(&mut self, x: Value) -> Value {
        const HIGH: [u8; 16] = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];
        let r = self.shuffle(x, x, HIGH);
        let ty = self.b.func.dfg.value_type(x);
        if ty == types::I32X4 {
            r
        } else {
            self.b.ins().bitcast(ty, lanes_flags(), r)
        }
    }

    /// The offsets 0, 1, 2, 3 of four lanes from the first.
    fn iota(&mut self) -> Value {
        self.iota_from(0)
    }

    /// `k0`, `k0 + 1`, `k0 + 2`, `k0 + 3` in four lanes.
    fn iota_from(&mut self, k0: u32) -> Value {
        let bytes: Vec<u8> = (k0..k0 + LANES).flat_map(|i| i.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(bytes.into());
        self.b.ins().vconst(types::I32X4, c)
    }

    /// A scalar splat into the four lanes (`bool`s become masks).
    fn splat(&mut self, x: Value, s: Scalar) -> Vec<Value> {
        if s == Scalar::Bool {
            let ty = self.vty(s);
            let w = self.b.ins().uextend(ty.lane_type(), x);
            let m = self.b.ins().ineg(w);
            return vec![self.b.ins().splat(ty, m)];
        }
        let x = self.extend32(x, s);
        let ty = self.vty(s);
        let v = self.b.ins().splat(ty, x);
        vec![v; self.parts(s)]
    }

    /// `m` reinterpreted as lanes of `ty` (a mask selecting floats).
    fn as_lanes(&mut self, m: Value, ty: cl::Type) -> Value {
        if ty == self.b.func.dfg.value_type(m) {
            m
        } else {
            self.b.ins().bitcast(ty, lanes_flags(), m)
        }
    }

    /// A scalar of an 8- or 16-bit integer type `s` as its 32-bit lane (sign- or
    /// zero-extended); other scalars unchanged.
    fn extend32(&mut self, x: Value, s: Scalar) -> Value {
        if !narrow_int(s) {
            x
        } else if s.is_signed() {
            self.b.ins().sextend(types::I32, x)
        } else {
            self.b.ins().uextend(types::I32, x)
        }
    }

    /// The lanes `v` of an 8- or 16-bit integer type `s` wrapped to its width (the scalar
    /// code's wrapping arithmetic); other types unchanged.
    fn wrap(&mut self, s: Scalar, v: Vec<Value>) -> Vec<Value> {
        if !narrow_int(s) {
            return v;
        }
        let sh = 32 - 8 * s.size() as i64;
        v.into_iter()
            .map(|x| {
                if s.is_signed() {
                    let l = self.b.ins().ishl_imm(x, sh);
                    self.b.ins().sshr_imm(l, sh)
                } else {
                    let m = self.splat_i32((1i64 << (8 * s.size())) - 1);
                    self.b.ins().band(x, m)
                }
            })
            .collect()
    }

    /// The variables of a value or private variable of lane type `s`, one per register.
    /// A loop's break and continue masks (lanes that left it, lanes that skip the rest of
    /// this iteration), no lane set yet.
    fn loop_masks(&mut self) -> (Variable, Variable) {
        let z = self.mask_splat(0);
        let ty = self.vty(Scalar::Bool);
        let (brk, cont) = (self.b.declare_var(ty), self.b.declare_var(ty));
        self.b.def_var(brk, z);
        self.b.def_var(cont, z);
        (brk, cont)
    }

    pub(super) fn vvars(&mut self, of: VarOf, s: Scalar) -> Vec<Variable> {
        (0..self.parts(s))
            .map(|p| {
                if let Some(v) = self.vars.get(&(of, p as u8)) {
                    return *v;
                }
                let v = self.b.declare_var(self.vty(s));
                self.vars.insert((of, p as u8), v);
                v
            })
            .collect()
    }

    fn use_vars(&mut self, vs: &[Variable]) -> Vec<Value> {
        vs.iter().map(|&v| self.b.use_var(v)).collect()
    }

    /// The local linear id of lane `k`.
    fn lane_id(&mut self, k: u32) -> Value {
        let l = self.b.use_var(self.lane);
        let k = k + self.half.map_or(0, |h| h as u32 * LANES);
        self.b.ins().iadd_imm(l, k as i64)
    }

    /// `f` applied lane by lane to scalars extracted from `args` (of lane types `ss`): the
    /// scalar code for what has no vector instruction. Faults name the lane's work-item.
    fn per_lane(
        &mut self,
        args: &[Vec<Value>],
        ss: &[Scalar],
        out: Scalar,
        mut f: impl FnMut(&mut Self, &[Value]) -> Value,
    ) -> Vec<Value> {
        let mut acc = self.vzero(out);
        for k in 0..self.nlanes() {
            let xs: Vec<Value> = args
                .iter()
                .zip(ss)
                .map(|(v, &s)| {
                    let n = self.per_part(s);
                    let x = self.b.ins().extractlane(v[(k / n) as usize], (k % n) as u8);
                    if s == Scalar::Bool {
                        let b = self.b.ins().ireduce(types::I8, x);
                        self.b.ins().band_imm(b, 1)
                    } else if narrow_int(s) {
                        self.b.ins().ireduce(cl_ty(s), x)
                    } else {
                        x
                    }
                })
                .collect();
            let lane = self.lane_id(k);
            self.fault_lane = Some(lane);
            let r = f(self, &xs);
            let r = if out == Scalar::Bool {
                let ty = self.vty(out).lane_type();
                let w = self.b.ins().uextend(ty, r);
                self.b.ins().ineg(w)
            } else {
                self.extend32(r, out)
            };
            let n = self.per_part(out);
            let a = &mut acc[(k / n) as usize];
            *a = self.b.ins().insertlane(*a, r, (k % n) as u8);
        }
        self.fault_lane = None;
        acc
    }

    /// Lane 0's scalar of `x` (an integer of lane type `s`), as [`Gen::per_lane`] extracts it.
    fn lane0_int(&mut self, x: &[Value], s: Scalar) -> Value {
        let x = self.b.ins().extractlane(x[0], 0);
        if narrow_int(s) {
            self.b.ins().ireduce(cl_ty(s), x)
        } else {
            x
        }
    }

    // ---- statements ----

    fn vblock(&mut self, stmts: &[Stmt]) {
        self.memo.push(Default::default());
        let mut i = 0;
        while i < stmts.len() {
            let (len, schedule) = self.chain_run(&stmts[i..]);
            match schedule {
                Some(sc) => {
                    for group in sc.groups {
                        // What a group loads is its own: the next group loads it again.
                        self.memo.push(Default::default());
                        for k in group {
                            self.vstmt_at(stmts, i + k);
                            if let Stmt::Store { mem, .. } = stmts[i + k] {
                                self.anchor(mem);
                            }
                        }
                        self.pop_scope();
                    }
                    for k in sc.rest {
                        self.vstmt_at(stmts, i + k);
                    }
                }
                None => {
                    for k in i..i + len {
                        self.vstmt_at(stmts, k);
                    }
                }
            }
            i += len;
        }
        self.pop_scope();
    }

    /// Statement `i` of a block's `stmts` ([`Gen::vblock`]).
    fn vstmt_at(&mut self, stmts: &[Stmt], i: usize) {
        let s = &stmts[i];
        let trips = match s {
            Stmt::Loop { id, body } => {
                let trips = trip_counters(self.f, &self.counters, &stmts[..i], *id, body);
                for &(p, e0) in &trips {
                    // The value every lane entering the loop holds: the uniform
                    // expression it stored last (pure: the same value here), as a scalar.
                    let x = self.vexprs(e0)[0];
                    let x = self.lane0(x);
                    let v = self.b.declare_var(types::I32);
                    self.b.def_var(v, x);
                    self.trips.insert(p, (*id, v));
                }
                trips
            }
            _ => Vec::new(),
        };
        self.vstmt(s);
        for (p, _) in trips {
            self.trips.remove(&p);
        }
    }

    /// The statements at the start of `stmts` that [`Gen::vblock`] lowers together (at
    /// least one), with the order [`super::sched::chain_order`] gives them where all four
    /// lanes are active and they are a run of statements that may move ([`Gen::movable`])
    /// updating more private variables than fit the registers; `None`: as written.
    fn chain_run(&self, stmts: &[Stmt]) -> (usize, Option<super::sched::Schedule>) {
        if !self.full {
            return (1, None);
        }
        let len = stmts.iter().take_while(|s| self.movable(s)).count();
        if len <= super::sched::GROUP_REGISTERS {
            return (len.max(1), None);
        }
        let info = super::sched::RunInfo {
            private_var: &|m| self.private_var(m),
            registers: &|p| self.parts(self.f.privates[p].elem.scalar),
            reloadable: &|s| self.reloadable(s),
        };
        (len, super::sched::chain_order(self.f, &stmts[..len], &info))
    }

    /// Whether a load that may move ([`Gen::movable`]) may also be lowered again where a
    /// later group of a run reads it ([`super::sched`]): from local memory (only this
    /// work-group writes it, and not during the run) or from a buffer the kernel only
    /// reads (the launch refuses one that it writes passed again so), and its value stays
    /// in this region (a value in the records would be written there again).
    fn reloadable(&self, s: &Stmt) -> bool {
        match *s {
            Stmt::Load { value, mem, .. } if !self.plan.values.contains_key(&value) => match mem {
                Mem::Local(_) => true,
                Mem::Buffer(p) => matches!(
                    self.f.params[p].kind,
                    ParamKind::Buffer { access, .. } if access.is_read_only()
                ),
                _ => false,
            },
            _ => false,
        }
    }

    /// Stores the private variable `mem` (as just stored) to a stack slot that nothing
    /// reads: Cranelift computes its update here, where [`super::sched`] put it, rather
    /// than where it is next used (all the updates of a run would sink to the region's
    /// end, after all the run's loads); and the group's loads after this store are not
    /// merged with the same loads before it.
    fn anchor(&mut self, mem: Mem) {
        let Some(p) = self.private_var(mem) else {
            return;
        };
        let s = self.f.privates[p].elem.scalar;
        let vs = self.vvars(VarOf::Private(p), s);
        let xs = self.use_vars(&vs);
        self.anchor_values(&xs, false);
    }

    /// Anchors ([`Gen::anchor_values`]) the values in registers that `sides` (an `if`'s,
    /// in the one-work-item code) read: the `let`s and loads defined so far and the private
    /// variables they load, where many arithmetic instructions computed them. Cranelift would
    /// compute each one in every side that reads it and again after the `if` where that reads
    /// it too, with the whole chain of arithmetic that only they read: `a = a * 3 + j` 400
    /// times with an `if` storing `a` every tenth step compiled in time growing with the
    /// square of its length. (Not in the vector variants: there the same anchors before the
    /// `if`s of the patterns' reduce and dot passes doubled their time, measured; their
    /// `if`s on long chains keep the quadratic growth, see `long_chains_stored_in_branches`.)
    pub(super) fn anchor_reads(&mut self, sides: &[&[Stmt]]) {
        let mut of = HashSet::new();
        for side in sides {
            walk_block(side, &mut |s| {
                if let Stmt::Load { mem, .. } = s {
                    if let Some(p) = self.private_var(*mem) {
                        of.insert(VarOf::Private(p));
                    }
                }
            });
            crate::ir::walk_exprs(&self.f.exprs, side, &mut |e| {
                if let Expr::Value(v) = e {
                    if self.defined.contains(v) {
                        of.insert(VarOf::Value(*v));
                    }
                }
            });
        }
        if of.is_empty() {
            return;
        }
        let mut vars: Vec<((VarOf, u8), Variable)> = self
            .vars
            .iter()
            .filter(|((o, _), _)| of.contains(o))
            .map(|(&k, &v)| (k, v))
            .collect();
        // In a fixed order: the generated code does not depend on the map's.
        vars.sort_by_key(|&(_, v)| cranelift_codegen::entity::EntityRef::index(v));
        let vals: Vec<Value> = vars.into_iter().map(|(_, v)| self.b.use_var(v)).collect();
        self.anchor_values(&vals, true);
    }

    /// Stores `vals` to the stack slot that nothing reads, so that Cranelift computes them
    /// here ([`Gen::anchor`]); with `deep_only`, only those that Cranelift would compute
    /// with more than [`ANCHOR_ABOVE`] arithmetic instructions ([`Gen::deep`]). A store's
    /// value must be anchored before its lowering branches into a vector path and a path
    /// per lane: Cranelift's e-graph pass computes a pure value in each block that uses it,
    /// unless a block above uses it (wasmtime issue 8959), with everything only it reads, so
    /// a chain of arithmetic that only the stores read was computed again in every branch
    /// of every store: a `let` chain of 1,000 steps with a store every 10 did not fit
    /// Cranelift's limit on a function's size. A short computation is left to move (into
    /// the one branch that needs it, say): copies of it cost less than the store.
    fn anchor_values(&mut self, vals: &[Value], deep_only: bool) {
        let vals: Vec<Value> = vals
            .iter()
            .copied()
            .filter(|&x| !deep_only || self.deep(x))
            .collect();
        if vals.is_empty() {
            return;
        }
        let slot = *self.anchor_slot.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(cl::StackSlotData::new(
                cl::StackSlotKind::ExplicitSlot,
                16,
                4,
            ))
        });
        for x in vals {
            self.b.ins().stack_store(x, slot, 0);
            self.anchored.insert(x);
        }
    }

    /// Whether more than [`ANCHOR_ABOVE`] instructions compute `x` from loads, block
    /// parameters and anchored values: what Cranelift would compute again in each block
    /// that uses `x`, were it not anchored.
    fn deep(&self, x: Value) -> bool {
        let dfg = &self.b.func.dfg;
        let mut seen = HashSet::new();
        let mut todo = vec![x];
        while let Some(v) = todo.pop() {
            if self.anchored.contains(&v) {
                continue;
            }
            let cl::ValueDef::Result(inst, _) = dfg.value_def(v) else {
                continue;
            };
            if dfg.insts[inst].opcode().can_load() || !seen.insert(inst) {
                continue;
            }
            if seen.len() > ANCHOR_ABOVE {
                return true;
            }
            todo.extend(dfg.inst_values(inst));
        }
        false
    }

    /// Whether `s` may move within a straight-line run lowered with all four lanes active
    /// ([`super::sched`]): a `let` or a private variable's store without integer division
    /// (a zero divisor faults), a private variable's load, or a load of a buffer or local
    /// array proven in bounds here, at an index without division. None faults or writes
    /// memory. (Not a private variable that stands for a loop's trip count, nor a load a
    /// tiled loop has read ahead, nor a store a row of stores defers.)
    fn movable(&self, s: &Stmt) -> bool {
        let pure = |e: ExprId| !divides(self.f, e);
        let var = |mem: Mem| {
            self.private_var(mem)
                .filter(|p| !self.trips.contains_key(p))
        };
        match *s {
            Stmt::Let { expr, .. } => pure(expr),
            Stmt::Load {
                value, mem, index, ..
            } if !self.tiled.contains_key(&value) => match mem {
                Mem::Private(_) => var(mem).is_some(),
                Mem::Local(_) | Mem::Buffer(_) => self.proven_here(mem, index) && pure(index),
                Mem::Field(_) => false,
            },
            Stmt::Store {
                mem, index, value, ..
            } => var(mem).is_some() && !self.deferred.contains_key(&(mem, index)) && pure(value),
            _ => false,
        }
    }

    /// Faults at `site` (naming the first such lane) when `bad` holds for an active lane;
    /// `detail(lane)` gives the index and length the fault reports, computed only then.
    pub(super) fn lanes_fault(
        &mut self,
        bad: Value,
        site: Site,
        mut detail: impl FnMut(&mut Self, u8) -> (Value, Value),
    ) {
        let m = self.mask();
        let bad = self.b.ins().band(bad, m);
        let any = self.b.ins().vany_true(bad);
        let (cold, ok) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(cold);
        self.b.ins().brif(any, cold, &[], ok, &[]);
        self.b.switch_to_block(cold);
        for k in 0..self.nlanes() as u8 {
            let bk = self.b.ins().extractlane(bad, k);
            let (index, len) = detail(self, k);
            let lane = self.lane_id(k as u32);
            self.fault_lane = Some(lane);
            self.fault_if(bk, site.clone(), index, len);
        }
        self.fault_lane = None;
        self.b.ins().jump(ok, &[]);
        self.b.switch_to_block(ok);
    }

    /// [`Gen::lanes_fault`] for faults without an index.
    pub(super) fn lanes_fault_plain(&mut self, bad: Value, site: Site) {
        let zi = self.b.ins().iconst(types::I64, 0);
        self.lanes_fault(bad, site, |_, _| (zi, zi));
    }

    /// Defines IR value `v` as `x`, in a register and, if another region reads it, in the
    /// active lanes' records.
    fn define_lanes(&mut self, v: ValueId, x: &[Value]) {
        let s = self.f.values[v].ty.scalar;
        let vars = self.vvars(VarOf::Value(v), s);
        for (&var, &x) in vars.iter().zip(x) {
            self.b.def_var(var, x);
        }
        if let Some(slot) = self.plan.values.get(&v).copied() {
            let m = self.mask();
            self.vrec_store(slot.off, s, x, m);
        }
    }

    /// Checks the active lanes' indices against the memory's length; returns the base address
    /// and the indices as `i32x4`.
    fn lanes_index(&mut self, mem: Mem, index: ExprId) -> (Value, Value) {
        let is = self.f.exprs.ty(index).scalar;
        let idx = self.vexpr(index);
        let (base, len) = self.mem_base_len(mem);
        if self.proven_here(mem, index) {
            return (base, idx);
        }
        // Lengths beyond u32::MAX admit every unsigned 32-bit index.
        let cap = self.b.ins().iconst(types::I64, u32::MAX as i64);
        let big = self.b.ins().icmp(IntCC::UnsignedGreaterThan, len, cap);
        let len32 = self.b.ins().ireduce(types::I32, len);
        let lenv = self.b.ins().splat(types::I32X4, len32);
        let mut bad = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, idx, lenv);
        let bigw = self.b.ins().uextend(types::I32, big);
        let bigm = self.b.ins().ineg(bigw);
        let bigv = self.b.ins().splat(types::I32X4, bigm);
        bad = self.b.ins().band_not(bad, bigv);
        if is.is_signed() {
            let z = self.splat_i32(0);
            let neg = self.b.ins().icmp(IntCC::SignedLessThan, idx, z);
            bad = self.b.ins().bor(bad, neg);
        }
        let at = self.at;
        self.lanes_fault(
            bad,
            Site::OutOfBounds {
                mem,
                scalar: is,
                at,
            },
            |g, k| {
                let ik = g.b.ins().extractlane(idx, k);
                let ik = if is.is_signed() {
                    g.b.ins().sextend(types::I64, ik)
                } else {
                    g.b.ins().uextend(types::I64, ik)
                };
                (ik, len)
            },
        );
        (base, idx)
    }

    /// Whether the four indices are consecutive and every lane is active: then the access is
    /// one vector access at the first index.
    fn whole_vector(&mut self, idx: Value) -> Value {
        let i0 = self.lane0(idx);
        let s0 = self.b.ins().splat(types::I32X4, i0);
        let io = self.iota();
        let seq = self.b.ins().iadd(s0, io);
        let eq = self.b.ins().icmp(IntCC::Equal, idx, seq);
        let m = self.mask();
        let both = self.b.ins().band(eq, m);
        self.b.ins().vall_true(both)
    }

    fn elem_addr(&mut self, base: Value, i: Value, size: usize) -> Value {
        let i = self.b.ins().uextend(types::I64, i);
        let off = self.b.ins().imul_imm(i, size as i64);
        self.b.ins().iadd(base, off)
    }

    /// The four lanes of `s` at `addr` (one register, or two 16 bytes apart; 8- and 16-bit
    /// integers are four or eight bytes, extended to 32-bit lanes).
    fn load_parts(&mut self, s: Scalar, addr: Value) -> Vec<Value> {
        match s.size() {
            2 if s.is_signed() => vec![self.b.ins().sload16x4(MEM, addr, 0)],
            2 => vec![self.b.ins().uload16x4(MEM, addr, 0)],
            1 => {
                let w = self.b.ins().load(types::I32, MEM, addr, 0);
                let v = self.b.ins().scalar_to_vector(types::I32X4, w);
                let v = self.as_bytes(v);
                // Bytes to 16-bit lanes to 32-bit lanes.
                let x = if s.is_signed() {
                    let h = self.b.ins().swiden_low(v);
                    self.b.ins().swiden_low(h)
                } else {
                    let h = self.b.ins().uwiden_low(v);
                    self.b.ins().uwiden_low(h)
                };
                vec![x]
            }
            _ => (0..self.parts(s) as i32)
                .map(|p| {
                    let ty = self.vty(s);
                    self.b.ins().load(ty, MEM, addr, 16 * p)
                })
                .collect(),
        }
    }

    /// Stores the four lanes `v` of `s` at `addr` (the inverse of [`Gen::load_parts`]: 8-
    /// and 16-bit integers keep the low bytes of each lane).
    fn store_parts(&mut self, v: &[Value], s: Scalar, addr: Value) {
        match s.size() {
            2 => {
                const LOW16: [u8; 16] = [0, 1, 4, 5, 8, 9, 12, 13, 0, 1, 4, 5, 8, 9, 12, 13];
                let r = self.shuffle(v[0], v[0], LOW16);
                let r = self.b.ins().bitcast(types::I64X2, lanes_flags(), r);
                let w = self.b.ins().extractlane(r, 0);
                self.b.ins().store(MEM, w, addr, 0);
            }
            1 => {
                const LOW8: [u8; 16] = [0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12];
                let r = self.shuffle(v[0], v[0], LOW8);
                let w = self.b.ins().extractlane(r, 0);
                self.b.ins().store(MEM, w, addr, 0);
            }
            _ => {
                for (p, &x) in v.iter().enumerate() {
                    self.b.ins().store(MEM, x, addr, 16 * p as i32);
                }
            }
        }
    }

    /// Stores the lanes of `v` selected by mask `m` at `addr` ([`Gen::store_parts`]); the
    /// other lanes' values there are kept (read, blended, written back).
    fn store_parts_masked(&mut self, v: &[Value], s: Scalar, addr: Value, m: Value) {
        let old = self.load_parts(s, addr);
        let ms = self.mask_parts(m, s);
        let new: Vec<Value> = v
            .iter()
            .zip(old)
            .zip(ms)
            .map(|((&x, old), ml)| self.b.ins().bitselect(ml, x, old))
            .collect();
        self.store_parts(&new, s, addr);
    }

    /// A merge block with one parameter per register of `s`.
    fn merge_block(&mut self, s: Scalar) -> (cl::Block, Vec<Value>) {
        let m = self.b.create_block();
        let out = (0..self.parts(s))
            .map(|_| self.b.append_block_param(m, self.vty(s)))
            .collect();
        (m, out)
    }

    fn jump_with(&mut self, to: cl::Block, v: &[Value]) {
        let args: Vec<cl::BlockArg> = v.iter().map(|&x| cl::BlockArg::Value(x)).collect();
        self.b.ins().jump(to, &args);
    }

    /// The address of lane 0's element of an access that needs no test: four active lanes
    /// ([`Gen::full`]) and the access proven in bounds here ([`Gen::proven_here`]: without
    /// wrapping, so the elements of consecutive indices are consecutive in memory). `None`
    /// elsewhere ([`Gen::consecutive_access`] and [`Gen::vload_uniform`] test it).
    fn proven_address(&mut self, mem: Mem, index: ExprId) -> Option<Value> {
        if !(self.full && self.proven_here(mem, index)) {
            return None;
        }
        Some(self.proven_addr(mem, index))
    }

    /// The address of element `index` (lane 0's) of `mem`, for an access proven in bounds
    /// here: where the proof gives the index as `a + k` without wrapping
    /// ([`crate::ir::ranges::Proof::offset`]), `a`'s element plus `k` elements as a
    /// constant, so that the accesses at `r + 0`, `r + 1`, ... share `r`'s address (a row of
    /// a tile: one register, the offsets in the instructions).
    fn proven_addr(&mut self, mem: Mem, index: ExprId) -> Value {
        let size = self
            .f
            .mem_elem(mem)
            .expect("validated memory")
            .scalar
            .size() as i64;
        let base = self.mem_base_len(mem).0;
        let (at, k) = match self.proof.offset(mem, index) {
            Some((a, k)) if (k * size).abs() <= i32::MAX as i64 => (a, k),
            _ => (index, 0),
        };
        let is = self.f.exprs.ty(at).scalar;
        let idx = self.vexpr(at);
        let i0 = self.lane0_of_expr(at, idx);
        let i0 = self.widen_index(i0, is);
        let off = self.b.ins().imul_imm(i0, size);
        let addr = self.b.ins().iadd(base, off);
        match k {
            0 => addr,
            k => self.b.ins().iadd_imm(addr, k * size),
        }
    }

    /// Whether condition `cond` (its lanes `c`) holds in all four lanes, every lane active,
    /// as an `i8`. A conjunction's comparisons of uniform values, or of consecutive ones
    /// against a uniform one (a tile's guard, `row < n && col < n`), are tested on scalars:
    /// the first or last lane against the bound, where the lanes do not wrap (where they
    /// may, the test fails and the lanes' own test decides: it need only be sufficient).
    fn all_lanes_take(&mut self, cond: ExprId, c: Value) -> Value {
        if self.wide {
            return self.b.ins().vall_true(c);
        }
        self.all_lanes_at(cond, c, &mut HashMap::new())
    }

    /// [`Gen::all_lanes_take`]; `seen` holds the conjuncts tested so far in this call (a
    /// condition's shared operands once each).
    fn all_lanes_at(&mut self, cond: ExprId, c: Value, seen: &mut HashMap<ExprId, Value>) -> Value {
        if let Some(&x) = seen.get(&cond) {
            return x;
        }
        let x = match *self.f.exprs.get(cond) {
            Expr::Binary(BinaryOp::And, a, b) if self.f.exprs.ty(cond) == Type::BOOL => {
                let (ca, cb) = (self.vexpr(a), self.vexpr(b));
                let x = self.all_lanes_at(a, ca, seen);
                let y = self.all_lanes_at(b, cb, seen);
                self.b.ins().band(x, y)
            }
            Expr::Binary(op, a, b) => match self.scalar_compare(op, a, b) {
                Some(x) => x,
                None => self.b.ins().vall_true(c),
            },
            _ => self.b.ins().vall_true(c),
        };
        seen.insert(cond, x);
        x
    }

    /// [`Gen::all_lanes_take`] of the comparison `a op b` of 32-bit integers, where each
    /// side is uniform or consecutive (not both consecutive): an `i8`, or `None`.
    fn scalar_compare(&mut self, op: BinaryOp, a: ExprId, b: ExprId) -> Option<Value> {
        let s = self.f.exprs.ty(a).scalar;
        if !matches!(self.f.exprs.ty(a), Type::I32 | Type::U32) {
            return None;
        }
        let (f, c) = (self.f, &self.counters);
        // The consecutive side on the left, the uniform bound on the right.
        let (op, a, b) = match (uniform(f, c, a), uniform(f, c, b)) {
            (true, true) => {
                let (x, y) = (self.lane0_scalar(a), self.lane0_scalar(b));
                return direct_binary(&mut self.b, op, s, x, y);
            }
            (false, true) => (op, a, b),
            (true, false) => match op {
                BinaryOp::Lt => (BinaryOp::Gt, b, a),
                BinaryOp::Le => (BinaryOp::Ge, b, a),
                BinaryOp::Gt => (BinaryOp::Lt, b, a),
                BinaryOp::Ge => (BinaryOp::Le, b, a),
                _ => return None,
            },
            (false, false) => return None,
        };
        if !consecutive(f, c, a) {
            return None;
        }
        // Lanes `x0 + k`, k = 0..3, not wrapping where `x0 <= MAX - 3`: below a bound where
        // the last is, above one where the first is.
        let last = match op {
            BinaryOp::Lt | BinaryOp::Le => true,
            BinaryOp::Gt | BinaryOp::Ge => false,
            _ => return None,
        };
        let (x0, y) = (self.lane0_scalar(a), self.lane0_scalar(b));
        let (cc, max) = if s.is_signed() {
            (IntCC::SignedLessThanOrEqual, i32::MAX as i64)
        } else {
            (IntCC::UnsignedLessThanOrEqual, u32::MAX as i64)
        };
        let room = self.b.ins().icmp_imm(cc, x0, max - 3);
        let x = if last {
            self.b.ins().iadd_imm(x0, 3)
        } else {
            x0
        };
        let holds = direct_binary(&mut self.b, op, s, x, y)?;
        Some(self.b.ins().band(room, holds))
    }

    /// Lane 0 of `e`, whose lanes are computed here, as a scalar ([`Gen::lane0_of_expr`]).
    fn lane0_scalar(&mut self, e: ExprId) -> Value {
        let v = self.vexpr(e);
        self.lane0_of_expr(e, v)
    }

    /// Lane 0 of expression `e`, whose lanes are `v` ([`Gen::vexpr`]'s), as a scalar: see
    /// [`Gen::lane0_expr`]; else [`Gen::lane0`] of the lanes.
    fn lane0_of_expr(&mut self, e: ExprId, v: Value) -> Value {
        match self.lane0_expr(e) {
            Some(x) => x,
            None => self.lane0(v),
        }
    }

    /// Lane 0 of `e` computed on scalars, where `e` is a sum, difference or product of
    /// 32-bit integers, a shift left by a literal, a cast between `i32` and `u32`, or a `let`
    /// of one (a tile's index, `row * n + t * 16 + tx`: a scalar, where the lanes would be
    /// computed and one extracted, which Cranelift does not fold); its operands by the same
    /// rule ([`LANE0_DEPTH`] deep), else lane 0 of their lanes ([`Gen::lane0`]). Same bits
    /// as the lanes': these operations wrap alike in every lane. In the eight-lane code, while
    /// an access is lowered for a half ([`Gen::half`]), the half's first lane (lane 0 or 4),
    /// its leaves taken from that half's register; elsewhere there, none.
    fn lane0_expr(&mut self, e: ExprId) -> Option<Value> {
        self.lane0_at(e, LANE0_DEPTH, &mut HashMap::new())
    }

    /// [`Gen::lane0_expr`] `depth` deep; `seen` holds the operands computed so far in this
    /// call (a DAG's shared operands once each, all in the block being lowered).
    fn lane0_at(
        &mut self,
        e: ExprId,
        depth: u32,
        seen: &mut HashMap<ExprId, Value>,
    ) -> Option<Value> {
        let ty = self.f.exprs.ty(e);
        if (self.wide && self.half.is_none()) || !matches!(ty, Type::I32 | Type::U32) {
            return None;
        }
        match *self.f.exprs.get(e) {
            Expr::Binary(op @ (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul), a, b)
                if depth > 0 =>
            {
                let x = self.lane0_operand(a, depth - 1, seen);
                let y = self.lane0_operand(b, depth - 1, seen);
                direct_binary(&mut self.b, op, ty.scalar, x, y)
            }
            Expr::Binary(BinaryOp::Shl, a, b) if depth > 0 => {
                let k = u32_lit(self.f, b).filter(|&k| k < 32)?;
                let x = self.lane0_operand(a, depth - 1, seen);
                Some(self.b.ins().ishl_imm(x, k as i64))
            }
            Expr::Cast(a, Scalar::I32 | Scalar::U32)
                if depth > 0 && matches!(self.f.exprs.ty(a), Type::I32 | Type::U32) =>
            {
                Some(self.lane0_operand(a, depth - 1, seen))
            }
            Expr::Value(v) => self
                .vars
                .get(&(VarOf::Lane0(v), 0))
                .copied()
                .map(|var| self.b.use_var(var)),
            _ => None,
        }
    }

    /// An operand's lane 0 for [`Gen::lane0_at`]. An operand whose lanes are not at hand is
    /// computed in a scope of its own: [`Gen::lane0_expr`] is also called on the path of
    /// one branch (an access's vector path), where a value remembered for the rest of the
    /// IR block would be used later from blocks that path does not dominate.
    fn lane0_operand(&mut self, e: ExprId, depth: u32, seen: &mut HashMap<ExprId, Value>) -> Value {
        if let Some(&x) = seen.get(&e) {
            return x;
        }
        let x = match self.lane0_at(e, depth, seen) {
            Some(x) => x,
            None => {
                let v = match self.lookup(e) {
                    // The eight lanes' value: the half's register.
                    Some(v) if self.wide => v[self.half.unwrap_or(0) as usize],
                    Some(v) => v[0],
                    None => {
                        self.memo.push(Default::default());
                        let v = self.vexpr(e);
                        self.pop_scope();
                        v
                    }
                };
                self.lane0(v)
            }
        };
        seen.insert(e, x);
        x
    }

    /// Lane 0 of the `i32x4` `v`: where `v` is a splat, a constant, or a sum, difference or
    /// product of them (an index as [`Gen::vexpr`] computes it: `splat(y) * 16`,
    /// `splat(x) + iota`), computed as a scalar, which Cranelift does not do for
    /// `extractlane`; else the lane extracted.
    fn lane0(&mut self, v: Value) -> Value {
        match self.lane0_of(v, 4) {
            Some(x) => x,
            None => self.b.ins().extractlane(v, 0),
        }
    }

    fn lane0_of(&mut self, v: Value, depth: u32) -> Option<Value> {
        let dfg = &self.b.func.dfg;
        if dfg.value_type(v) != types::I32X4 {
            return None;
        }
        if let Some(arg) = self.splat_arg(v, types::I32) {
            return Some(arg);
        }
        if let Some(bytes) = self.vconst_bytes(v) {
            let x = u32::from_le_bytes(bytes.get(0..4)?.try_into().ok()?);
            return Some(self.b.ins().iconst(types::I32, x as i64));
        }
        let cl::ValueDef::Result(inst, 0) = dfg.value_def(v) else {
            return None;
        };
        match dfg.insts[inst] {
            cl::InstructionData::Binary {
                opcode: op @ (cl::Opcode::Iadd | cl::Opcode::Isub | cl::Opcode::Imul),
                args: [a, b],
            } if depth > 0 => {
                let x = self.lane0_of(a, depth - 1)?;
                let y = self.lane0_of(b, depth - 1)?;
                Some(match op {
                    cl::Opcode::Iadd => self.b.ins().iadd(x, y),
                    cl::Opcode::Isub => self.b.ins().isub(x, y),
                    _ => self.b.ins().imul(x, y),
                })
            }
            _ => None,
        }
    }

    /// The fast path of an access at consecutive indices: when every lane is active and the
    /// four elements lie inside the buffer (without wrapping), branches to `fast` with the
    /// address of the first element; else to `slow`.
    fn consecutive_access(
        &mut self,
        mem: Mem,
        index: ExprId,
        fast: cl::Block,
        slow: cl::Block,
    ) -> Value {
        let (inside, addr) = self.consecutive_fits(mem, index);
        let ok = self.and_every_lane(inside);
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        addr
    }

    /// `ok` (an `i8`) and, unless every lane is known to be active ([`Gen::full`]), the
    /// mask's test that all of them are.
    fn and_every_lane(&mut self, ok: Value) -> Value {
        if self.full {
            return ok;
        }
        let m = self.mask();
        let all = self.b.ins().vall_true(m);
        self.b.ins().band(ok, all)
    }

    /// Whether the four elements from lane 0's index on lie inside the buffer (without
    /// wrapping), and the address of the first ([`Gen::consecutive_access`]'s test, less the
    /// mask's).
    fn consecutive_fits(&mut self, mem: Mem, index: ExprId) -> (Value, Value) {
        let idx = self.vexpr(index);
        let i0 = self.lane0_of_expr(index, idx);
        self.consecutive_fits_at(mem, index, i0)
    }

    /// [`Gen::consecutive_fits`] for the four lanes `i0`, `i0 + 1`, `i0 + 2`, `i0 + 3` of
    /// `index` (`i0` its first lane, in the index's 32-bit type).
    fn consecutive_fits_at(&mut self, mem: Mem, index: ExprId, i0: Value) -> (Value, Value) {
        let is = self.f.exprs.ty(index).scalar;
        let (base, len) = self.mem_base_len(mem);
        let i0 = self.widen_index(i0, is);
        // Proven in bounds for every active lane (without wrapping, so the lanes' elements
        // are consecutive in memory): only the mask is tested, and the proof's
        // preconditions, which do not change in the work-group (they leave the loop).
        let inside = match self.in_bounds(mem, index) {
            Some(ok) => ok,
            None => {
                // Lanes past 2^31 (2^32 unsigned) would wrap: not consecutive in memory.
                let wrap = self
                    .b
                    .ins()
                    .iconst(types::I64, if is.is_signed() { 1 << 31 } else { 1 << 32 });
                let lim = self.b.ins().umin(len, wrap);
                let n = self.nlanes() as i64;
                let end = self.b.ins().iadd_imm(i0, n);
                self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, lim)
            }
        };
        let size = self
            .f
            .mem_elem(mem)
            .expect("validated memory")
            .scalar
            .size();
        let off = self.b.ins().imul_imm(i0, size as i64);
        let addr = self.b.ins().iadd(base, off);
        (inside, addr)
    }

    /// Whether all four lanes of `e`'s registers hold the same value, the inactive lanes'
    /// included, so that lane 0 is every active lane's: [`uniform`], where every value read
    /// is this region's (its registers are computed for all lanes, while a record slot's
    /// inactive lanes may be stale) and no division takes the mask (an inactive lane divides
    /// by 1). Under four active lanes ([`Gen::full`]), [`uniform`] is enough.
    fn agree(&self, e: ExprId) -> bool {
        if self.full {
            return uniform(self.f, &self.counters, e);
        }
        // Every expression `e` reads, through the `let`s and counters this region defines,
        // each once.
        let c = &self.counters;
        let mut seen = HashSet::new();
        let mut todo = vec![e];
        while let Some(e) = todo.pop() {
            if !seen.insert(e) {
                continue;
            }
            match self.f.exprs.get(e) {
                Expr::Literal(_) | Expr::Param(_) | Expr::BufferLen(_) => {}
                Expr::Builtin(b) if uniform_builtin(*b) => {}
                Expr::Value(v) if self.defined.contains(v) => {
                    match (c.fors.get(v), c.lets.get(v)) {
                        (Some(&(s, st)), _) => todo.extend([s, st]),
                        (None, Some(&x)) => todo.push(x),
                        (None, None) => return false,
                    }
                }
                Expr::Unary(_, a) | Expr::Cast(a, _) => todo.push(*a),
                Expr::Binary(op, a, b) if !matches!(op, BinaryOp::Div | BinaryOp::Rem) => {
                    todo.extend([*a, *b])
                }
                _ => return false,
            }
        }
        true
    }

    /// An index `i` (one lane's) of type `is` as a 64-bit offset (sign- or zero-extended as its
    /// type says), to compare with a length and scale into an address.
    fn widen_index(&mut self, i: Value, is: Scalar) -> Value {
        if is.is_signed() {
            self.b.ins().sextend(types::I64, i)
        } else {
            self.b.ins().uextend(types::I64, i)
        }
    }

    /// A load from a private array. Its elements are in the work-items' records, each
    /// element's four lanes side by side ([`Gen::lane_elem_addr`]): at an index the lanes
    /// share ([`Gen::agree`], a loop counter or a literal) the four lanes' elements are one
    /// vector load, after one scalar bounds test (or the proof); at an index of no known
    /// pattern, each active lane's element alone, proven or tested as any access's (a fault
    /// names the first active lane out of bounds, as the interpreter's).
    fn vload_private(&mut self, mem: Mem, index: ExprId) -> Vec<Value> {
        if self.agree(index) {
            let (fast, slow) = (self.b.create_block(), self.b.create_block());
            let addr = self.private_shared(mem, index, fast, slow);
            return self.load_fast_or_lanes(mem, index, addr, fast, slow);
        }
        if self.full && self.proven_here(mem, index) {
            return self.vgather_proven(mem, index);
        }
        self.vload_general(mem, index)
    }

    /// The end of a load whose test branched to `fast` (the four lanes' elements one vector
    /// load at `addr`) or to `slow` (lane by lane, [`Gen::vload_general`]): their lanes,
    /// merged.
    fn load_fast_or_lanes(
        &mut self,
        mem: Mem,
        index: ExprId,
        addr: Value,
        fast: cl::Block,
        slow: cl::Block,
    ) -> Vec<Value> {
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        let (merge, out) = self.merge_block(s);
        self.b.switch_to_block(fast);
        let v = self.load_parts(s, addr);
        self.jump_with(merge, &v);
        self.b.switch_to_block(slow);
        let v = self.vload_general(mem, index);
        self.jump_with(merge, &v);
        self.b.switch_to_block(merge);
        out
    }

    /// The store of [`Gen::load_fast_or_lanes`]: `store` in `fast`, lane by lane
    /// ([`Gen::vstore_general`]) in `slow`, both joining after.
    fn store_fast_or_lanes(
        &mut self,
        mem: Mem,
        index: ExprId,
        v: &[Value],
        fast: cl::Block,
        slow: cl::Block,
        store: impl FnOnce(&mut Self),
    ) {
        let merge = self.b.create_block();
        self.b.switch_to_block(fast);
        store(self);
        self.b.ins().jump(merge, &[]);
        self.b.switch_to_block(slow);
        self.vstore_general(mem, index, v);
        self.b.ins().jump(merge, &[]);
        self.b.switch_to_block(merge);
    }

    /// The store of [`Gen::vload_private`]: at a shared index one vector store (the
    /// inactive lanes' elements kept, unless all four are active), else lane by lane.
    fn vstore_private(&mut self, mem: Mem, index: ExprId, v: &[Value]) {
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        if self.agree(index) {
            self.anchor_values(v, true);
            let (fast, slow) = (self.b.create_block(), self.b.create_block());
            let addr = self.private_shared(mem, index, fast, slow);
            return self.store_fast_or_lanes(mem, index, v, fast, slow, |g| {
                if g.full {
                    g.store_parts(v, s, addr);
                } else {
                    let m = g.mask();
                    g.store_parts_masked(v, s, addr, m);
                }
            });
        }
        if self.full && self.proven_here(mem, index) {
            return self.vscatter_proven(mem, index, v);
        }
        self.anchor_values(v, true);
        self.vstore_general(mem, index, v)
    }

    /// For a private array's index that the lanes share: branches to `fast` where it is in
    /// bounds (proven with some lane active, or one scalar test of lane 0's), else to `slow`
    /// (the lanes one by one, which fault as the interpreter does); returns the address of
    /// the element's four lanes.
    fn private_shared(
        &mut self,
        mem: Mem,
        index: ExprId,
        fast: cl::Block,
        slow: cl::Block,
    ) -> Value {
        let size = self
            .f
            .mem_elem(mem)
            .expect("validated memory")
            .scalar
            .size();
        let is = self.f.exprs.ty(index).scalar;
        let idx = self.vexpr(index);
        let i0 = self.lane0_of_expr(index, idx);
        let i0 = self.widen_index(i0, is);
        let (base, len) = self.mem_base_len(mem);
        let off = self.b.ins().imul_imm(i0, (size * super::plan::QUAD) as i64);
        let addr = self.b.ins().iadd(base, off);
        // A proof holds for the lanes that run the access: with some lane active, for the
        // index they share.
        let ok = match self.in_bounds(mem, index) {
            Some(ok) if self.full => ok,
            Some(ok) => {
                let m = self.mask();
                let any = self.b.ins().vany_true(m);
                self.b.ins().band(ok, any)
            }
            None => self.b.ins().icmp(IntCC::UnsignedLessThan, i0, len),
        };
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        addr
    }

    /// A load at an index the lanes share ([`Gen::agree`]): one scalar load, splat. Its
    /// bounds test is one scalar comparison (an element in bounds may be read whatever the
    /// mask); a proof stands for it when some lane is active (known where four are).
    /// Out of bounds, the lane-by-lane access faults for the first active lane.
    fn vload_uniform(&mut self, mem: Mem, index: ExprId) -> Vec<Value> {
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        if let Some(addr) = self.proven_address(mem, index) {
            let x = self.b.ins().load(cl_ty(s), MEM, addr, 0);
            return self.splat(x, s);
        }
        let is = self.f.exprs.ty(index).scalar;
        let idx = self.vexpr(index);
        let i0 = self.lane0_of_expr(index, idx);
        let i0 = self.widen_index(i0, is);
        self.shared_load(mem, index, i0, false, |g| g.vload_general(mem, index))
    }

    /// The load of element `i0` (lane 0's index, shared by the lanes, widened) of `mem`: one
    /// scalar load and a splat, directly where `proven` (a proof holding here, all lanes
    /// active), else where the index is in bounds and some lane is active; otherwise `slow`,
    /// the lanes one by one (which faults for the first active lane).
    fn shared_load(
        &mut self,
        mem: Mem,
        index: ExprId,
        i0: Value,
        proven: bool,
        slow: impl FnOnce(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        let (base, len) = self.mem_base_len(mem);
        let load = |g: &mut Self| {
            let off = g.b.ins().imul_imm(i0, s.size() as i64);
            let addr = g.b.ins().iadd(base, off);
            let x = g.b.ins().load(cl_ty(s), MEM, addr, 0);
            g.splat(x, s)
        };
        if proven {
            return load(self);
        }
        let ok = match self.in_bounds(mem, index) {
            Some(ok) if self.full => ok,
            Some(ok) => {
                let m = self.mask();
                let any = self.b.ins().vany_true(m);
                self.b.ins().band(ok, any)
            }
            None => self.b.ins().icmp(IntCC::UnsignedLessThan, i0, len),
        };
        let (fast, slow_block) = (self.b.create_block(), self.b.create_block());
        let (merge, out) = self.merge_block(s);
        self.b.ins().brif(ok, fast, &[], slow_block, &[]);
        self.b.switch_to_block(fast);
        let v = load(self);
        self.jump_with(merge, &v);
        self.b.switch_to_block(slow_block);
        let v = slow(self);
        self.jump_with(merge, &v);
        self.b.switch_to_block(merge);
        out
    }

    /// [`Gen::vload`]; with eight lanes, for each half in turn as four lanes (lanes 0–3
    /// first, so that a fault names the first faulting lane), the halves' registers side by
    /// side.
    fn vload_halves(&mut self, mem: Mem, index: ExprId) -> Vec<Value> {
        if !self.wide {
            return self.vload(mem, index);
        }
        if !consecutive(self.f, &self.counters, index) && self.agree(index) {
            return self.vload_uniform_eight(mem, index);
        }
        let mut out = Vec::new();
        for h in 0..2 {
            self.half = Some(h);
            out.extend(self.vload(mem, index));
        }
        self.half = None;
        debug_assert_eq!(out.len(), 2, "load");
        out
    }

    /// [`Gen::vload_uniform`] for eight lanes: one scalar load for both halves (in bounds,
    /// some of the eight lanes active), else each half lane by lane.
    fn vload_uniform_eight(&mut self, mem: Mem, index: ExprId) -> Vec<Value> {
        let is = self.f.exprs.ty(index).scalar;
        self.half = Some(0);
        let idx = self.vexpr(index);
        self.half = None;
        let i0 = self.lane0(idx);
        let i0 = self.widen_index(i0, is);
        let proven = self.full && self.proven_here(mem, index);
        self.shared_load(mem, index, i0, proven, |g| {
            let mut v = Vec::new();
            for h in 0..2 {
                g.half = Some(h);
                v.extend(g.vload_general(mem, index));
            }
            g.half = None;
            v
        })
    }

    /// [`Gen::vstore`]; with eight lanes, as [`Gen::vload_halves`].
    fn vstore_halves(&mut self, mem: Mem, index: ExprId, v: &[Value]) {
        if !self.wide {
            return self.vstore(mem, index, v);
        }
        for h in 0..2u8 {
            self.half = Some(h);
            self.vstore(mem, index, &v[h as usize..h as usize + 1]);
        }
        self.half = None;
    }

    fn vload(&mut self, mem: Mem, index: ExprId) -> Vec<Value> {
        if matches!(mem, Mem::Private(_)) {
            return self.vload_private(mem, index);
        }
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        if !consecutive(self.f, &self.counters, index) && self.agree(index) {
            return self.vload_uniform(mem, index);
        }
        if consecutive(self.f, &self.counters, index) {
            if let Some(addr) = self.proven_address(mem, index) {
                return self.load_parts(s, addr);
            }
            let (fast, slow) = (self.b.create_block(), self.b.create_block());
            let addr = self.consecutive_access(mem, index, fast, slow);
            return self.load_fast_or_lanes(mem, index, addr, fast, slow);
        }
        if clamped_consecutive(self.f, &self.counters, index) {
            return self.vload_clamped(mem, index);
        }
        if self.full && self.proven_here(mem, index) {
            return self.vgather_proven(mem, index);
        }
        // The same index in every active lane (a loop counter, say): one scalar load.
        let is = self.f.exprs.ty(index).scalar;
        let idx = self.vexpr(index);
        let (base, len) = self.mem_base_len(mem);
        let i0 = self.lane0_of_expr(index, idx);
        let s0 = self.b.ins().splat(types::I32X4, i0);
        let same = self.b.ins().icmp(IntCC::Equal, idx, s0);
        let m = self.mask();
        let same = self.b.ins().band(same, m);
        let all = self.b.ins().vall_true(same);
        let i0 = self.widen_index(i0, is);
        let inside = match self.in_bounds(mem, index) {
            Some(ok) => ok,
            None => self.b.ins().icmp(IntCC::UnsignedLessThan, i0, len),
        };
        let ok = self.b.ins().band(all, inside);
        let (fast, slow) = (self.b.create_block(), self.b.create_block());
        let (merge, out) = self.merge_block(s);
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        let off = self.b.ins().imul_imm(i0, s.size() as i64);
        let addr = self.b.ins().iadd(base, off);
        let x = self.b.ins().load(cl_ty(s), MEM, addr, 0);
        let v = self.splat(x, s);
        self.jump_with(merge, &v);
        self.b.switch_to_block(slow);
        let v = self.vload_general(mem, index);
        self.jump_with(merge, &v);
        self.b.switch_to_block(merge);
        out
    }

    /// A load at a [`clamped_consecutive`] index: when every lane is active, the four
    /// indices are consecutive (no clamp binds) and their elements lie inside the buffer
    /// without wrapping, one vector load at the first; else the lane-by-lane load with its
    /// tests ([`Gen::vload_general`]), which faults as the interpreter does.
    ///
    /// Whether no clamp binds is tested on lane 0's scalars ([`Gen::unclamped_lane0`]), not
    /// by computing the four clamped indices and comparing them with consecutive ones: a
    /// stencil's neighbours share their clamps' tests (one comparison each), and the clamped
    /// lanes are computed only on the slow path (Cranelift places a pure value where it is
    /// used). ROF's update kernel (`strata bench --filter rof`) reads four such neighbours.
    fn vload_clamped(&mut self, mem: Mem, index: ExprId) -> Vec<Value> {
        // The lanes, for the slow path: computed ahead of the branch, so that what the slow
        // path lowers of the index is in scope after it.
        let idx = self.vexpr(index);
        let lane0 = self.unclamped_lane0(index, LANES);
        // No clamp binds here ([`Gen::vregion_clamps`]): consecutive.
        let free_here = lane0.is_some() && self.free_clamps.contains(&index);
        let (i0, free) = match lane0 {
            Some(x) => x,
            None => {
                // (Not reached for a clamped consecutive index.)
                let seq = self.whole_vector(idx);
                let i0 = self.lane0(idx);
                (i0, seq)
            }
        };
        let (fits, addr) = self.consecutive_fits_at(mem, index, i0);
        if free_here && self.full && self.proven_here(mem, index) {
            let s = self.f.mem_elem(mem).expect("validated memory").scalar;
            return self.load_parts(s, addr);
        }
        let ok = if free_here {
            fits
        } else {
            self.b.ins().band(free, fits)
        };
        let ok = self.and_every_lane(ok);
        let (fast, slow) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.load_fast_or_lanes(mem, index, addr, fast, slow)
    }

    /// For a [`consecutive`] or [`clamped_consecutive`] index `e`: lane 0 of `e` with every
    /// clamp of a consecutive operand left out (a scalar of `e`'s 32-bit type), and whether
    /// none of those clamps binds in any of the `span` lanes from lane 0 on (an `i8`; four,
    /// or eight from the first half's lane 0). Where none binds, the lanes of `e` are that
    /// lane 0 plus 0, 1, ..., `span - 1` (wrapping in 32 bits): a clamp's operand `c` has
    /// lanes `c0 + j`, and `max(c, u)` (`u` uniform) leaves them as they are where `c0 >= u`
    /// and `c0 + span - 1` does not wrap in the type, `min(c, u)` where `c0 + span - 1 <= u`
    /// (which rules the wrap out; compared in 64 bits, signed or unsigned as the clamp);
    /// adding or subtracting something uniform, or a cast between 32-bit integers, keeps the
    /// lanes consecutive.
    fn unclamped_lane0(&mut self, e: ExprId, span: u32) -> Option<(Value, Value)> {
        let f = self.f;
        if consecutive(f, &self.counters, e) {
            let v = self.vexpr(e);
            let yes = self.b.ins().iconst(types::I8, 1);
            return Some((self.lane0(v), yes));
        }
        let near = |g: &Self, x: ExprId| {
            consecutive(f, &g.counters, x) || clamped_consecutive(f, &g.counters, x)
        };
        match f.exprs.get(e) {
            Expr::Value(v) => {
                let x = *self.counters.lets.get(v)?;
                self.unclamped_lane0(x, span)
            }
            Expr::Math(op @ (MathFn::Min | MathFn::Max), xs) => {
                let (op, xs) = (*op, xs.clone());
                let (c, u) = if near(self, xs[0]) && uniform(f, &self.counters, xs[1]) {
                    (xs[0], xs[1])
                } else {
                    (xs[1], xs[0])
                };
                let (c0, free) = self.unclamped_lane0(c, span)?;
                let uv = self.vexpr(u);
                let u0 = self.lane0(uv);
                let ty = f.exprs.ty(e).scalar;
                let signed = ty.is_signed();
                let (c0, u0) = (self.widen_index(c0, ty), self.widen_index(u0, ty));
                let last = self.b.ins().iadd_imm(c0, span as i64 - 1);
                let ok = match op {
                    MathFn::Max => {
                        let top = if signed {
                            i32::MAX as i64
                        } else {
                            u32::MAX as i64
                        };
                        let no_wrap =
                            self.b
                                .ins()
                                .icmp_imm(IntCC::SignedLessThanOrEqual, last, top);
                        let holds = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, c0, u0);
                        self.b.ins().band(no_wrap, holds)
                    }
                    _ => self.b.ins().icmp(IntCC::SignedLessThanOrEqual, last, u0),
                };
                let free = self.b.ins().band(free, ok);
                let c0 = self.b.ins().ireduce(types::I32, c0);
                Some((c0, free))
            }
            Expr::Binary(op @ (BinaryOp::Add | BinaryOp::Sub), a, b) => {
                let (op, a, b) = (*op, *a, *b);
                let a_first = op == BinaryOp::Sub || near(self, a);
                let (x, u) = if a_first { (a, b) } else { (b, a) };
                let (x0, free) = self.unclamped_lane0(x, span)?;
                let uv = self.vexpr(u);
                let u0 = self.lane0(uv);
                let y = if op == BinaryOp::Sub {
                    self.b.ins().isub(x0, u0)
                } else {
                    self.b.ins().iadd(x0, u0)
                };
                Some((y, free))
            }
            Expr::Cast(a, _) => self.unclamped_lane0(*a, span),
            _ => None,
        }
    }

    fn vstore(&mut self, mem: Mem, index: ExprId, v: &[Value]) {
        if matches!(mem, Mem::Private(_)) {
            return self.vstore_private(mem, index, v);
        }
        if consecutive(self.f, &self.counters, index) {
            if let Some(addr) = self.proven_address(mem, index) {
                let s = self.f.mem_elem(mem).expect("validated memory").scalar;
                self.store_parts(v, s, addr);
                return;
            }
            self.anchor_values(v, true);
            let (fast, slow) = (self.b.create_block(), self.b.create_block());
            let addr = self.consecutive_access(mem, index, fast, slow);
            let s = self.f.mem_elem(mem).expect("validated memory").scalar;
            return self
                .store_fast_or_lanes(mem, index, v, fast, slow, |g| g.store_parts(v, s, addr));
        }
        if self.full && self.proven_here(mem, index) {
            return self.vscatter_proven(mem, index, v);
        }
        self.anchor_values(v, true);
        self.vstore_general(mem, index, v)
    }

    /// The address of lane `k`'s element at `ik` (its lane of the index vector) in `mem`
    /// based at `base`: `base + ik * size` in a buffer or local array; in a private array,
    /// whose elements sit in the four work-items' record block with each element's four
    /// lanes side by side (as any slot's, [`super::plan`]), `base + (ik * 4 + k) * size`.
    fn lane_elem_addr(&mut self, mem: Mem, base: Value, ik: Value, k: u32, size: usize) -> Value {
        match mem {
            Mem::Private(_) => {
                let a = self.elem_addr(base, ik, size * super::plan::QUAD);
                self.b.ins().iadd_imm(a, (k as usize * size) as i64)
            }
            _ => self.elem_addr(base, ik, size),
        }
    }

    /// Lane `k`'s element of `mem` (based at `base`) at lane `k` of the index vector `idx`,
    /// widened to its lane type (no test: the caller's lane is active and in bounds).
    fn load_lane(&mut self, mem: Mem, base: Value, idx: Value, k: u32, s: Scalar) -> Value {
        let ik = self.b.ins().extractlane(idx, k as u8);
        let a = self.lane_elem_addr(mem, base, ik, k, s.size());
        let x = self.b.ins().load(cl_ty(s), MEM, a, 0);
        self.extend32(x, s)
    }

    /// Stores lane `k` of the value `v` at lane `k` of the index vector `idx` (no test, as
    /// [`Gen::load_lane`]).
    fn store_lane(&mut self, mem: Mem, base: Value, idx: Value, v: &[Value], k: u32, s: Scalar) {
        let n = self.per_part(s);
        let ik = self.b.ins().extractlane(idx, k as u8);
        let a = self.lane_elem_addr(mem, base, ik, k, s.size());
        let x = self.b.ins().extractlane(v[(k / n) as usize], (k % n) as u8);
        let x = if narrow_int(s) {
            self.b.ins().ireduce(cl_ty(s), x)
        } else {
            x
        };
        self.b.ins().store(MEM, x, a, 0);
    }

    /// An atomic (`op` with its operand and compare value; `None`: an atomic load) lane by
    /// lane: the active lanes' bounds tested as any access's, then for each active lane in
    /// order, lane 0 first, the scalar code's operation ([`Gen::atomic_inline`], or the
    /// helper's call), its old value put in the lane (zero in the inactive ones; all zero
    /// where the old values are not `used`). With four
    /// active lanes known ([`Gen::full`]) no lane's mask is tested; on a buffer a launch may
    /// keep per thread, the launch's bit for it is tested once, for the four lanes
    /// ([`Gen::on_kept`]).
    #[allow(clippy::type_complexity)]
    fn vatomic(
        &mut self,
        mem: Mem,
        index: ExprId,
        op: Option<(crate::ir::AtomicOp, ExprId, Option<ExprId>)>,
        used: bool,
    ) -> Vec<Value> {
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        let operands = op.map(|(o, v, c)| (o, self.vexprs(v), c.map(|c| self.vexprs(c))));
        let (base, idx) = self.lanes_index(mem, index);
        let tys: Vec<cl::Type> = self
            .vzero(s)
            .iter()
            .map(|&v| self.b.func.dfg.value_type(v))
            .collect();
        let mut lanes = |g: &mut Self, own: bool| -> Vec<Value> {
            let n = g.per_part(s);
            let m = (!g.full).then(|| g.mask());
            let mut acc = g.vzero(s);
            for k in 0..g.nlanes() {
                let (on, next) = (g.b.create_block(), g.b.create_block());
                for &t in &tys {
                    g.b.append_block_param(next, t);
                }
                match m {
                    Some(m) => {
                        let args: Vec<BlockArg> = acc.iter().map(|&v| BlockArg::Value(v)).collect();
                        let mk = g.b.ins().extractlane(m, k as u8);
                        g.b.ins().brif(mk, on, &[], next, &args);
                    }
                    None => {
                        g.b.ins().jump(on, &[]);
                    }
                }
                g.b.switch_to_block(on);
                let ik = g.b.ins().extractlane(idx, k as u8);
                let a = g.elem_addr(base, ik, s.size());
                let lane = |g: &mut Self, v: &[Value]| {
                    g.b.ins().extractlane(v[(k / n) as usize], (k % n) as u8)
                };
                let old = match &operands {
                    Some((o, v, c)) => {
                        let vk = lane(g, v);
                        let ck = c.as_ref().map(|c| lane(g, c));
                        g.atomic_or_call(own, s, *o, a, vk, ck)
                    }
                    None => g.b.ins().atomic_load(cl_ty(s), MemFlags::new(), a),
                };
                if used {
                    let part = &mut acc[(k / n) as usize];
                    *part = g.b.ins().insertlane(*part, old, (k % n) as u8);
                }
                let args: Vec<BlockArg> = acc.iter().map(|&v| BlockArg::Value(v)).collect();
                g.b.ins().jump(next, &args);
                g.b.switch_to_block(next);
                acc = g.b.block_params(next).to_vec();
            }
            acc
        };
        match (self.kept(mem), op) {
            (Some(p), Some(_)) => self.on_kept(p, &tys, &mut lanes),
            _ => lanes(self, matches!(mem, Mem::Local(_))),
        }
    }

    /// A load at four indices of no known pattern (a chunk per work-item: `x[id * chunk +
    /// j]`) with four active lanes ([`Gen::full`]) and proven in bounds
    /// ([`Gen::proven_here`]): four scalar loads into the lanes, without tests or branches.
    fn vgather_proven(&mut self, mem: Mem, index: ExprId) -> Vec<Value> {
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        let n = self.per_part(s);
        let idx = self.vexpr(index);
        let base = self.mem_base_len(mem).0;
        let mut acc = self.vzero(s);
        for k in 0..self.nlanes() {
            let x = self.load_lane(mem, base, idx, k, s);
            let part = &mut acc[(k / n) as usize];
            *part = self.b.ins().insertlane(*part, x, (k % n) as u8);
        }
        acc
    }

    /// The store of [`Gen::vgather_proven`]: four scalar stores, lane 0's first (as the
    /// lane-by-lane code, so that of lanes with the same index the last one's value stays).
    fn vscatter_proven(&mut self, mem: Mem, index: ExprId, v: &[Value]) {
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        let idx = self.vexpr(index);
        let base = self.mem_base_len(mem).0;
        for k in 0..self.nlanes() {
            self.store_lane(mem, base, idx, v, k, s);
        }
    }

    fn vload_general(&mut self, mem: Mem, index: ExprId) -> Vec<Value> {
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        let (size, n) = (s.size(), self.per_part(s));
        let (base, idx) = self.lanes_index(mem, index);
        let (whole, some) = (self.b.create_block(), self.b.create_block());
        let (merge, out) = self.merge_block(s);
        // (Consecutive indices of a private array are not consecutive addresses.)
        let whole_ok = match mem {
            Mem::Private(_) => self.b.ins().iconst(types::I8, 0),
            _ => self.whole_vector(idx),
        };
        let z = self.vzero(s);
        self.b.ins().brif(whole_ok, whole, &[], some, &[]);
        self.b.switch_to_block(whole);
        let i0 = self.lane0_of_expr(index, idx);
        let a = self.elem_addr(base, i0, size);
        let v = self.load_parts(s, a);
        self.jump_with(merge, &v);
        // Lane by lane, the active lanes only.
        self.b.switch_to_block(some);
        let m = self.mask();
        let mut acc = z;
        for k in 0..self.nlanes() {
            let (on, next) = (self.b.create_block(), self.b.create_block());
            let part = (k / n) as usize;
            let p = self.b.append_block_param(next, self.vty(s));
            let mk = self.b.ins().extractlane(m, k as u8);
            self.b
                .ins()
                .brif(mk, on, &[], next, &[cl::BlockArg::Value(acc[part])]);
            self.b.switch_to_block(on);
            let x = self.load_lane(mem, base, idx, k, s);
            let with = self.b.ins().insertlane(acc[part], x, (k % n) as u8);
            self.b.ins().jump(next, &[cl::BlockArg::Value(with)]);
            self.b.switch_to_block(next);
            acc[part] = p;
        }
        self.jump_with(merge, &acc);
        self.b.switch_to_block(merge);
        out
    }

    fn vstore_general(&mut self, mem: Mem, index: ExprId, v: &[Value]) {
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        let size = s.size();
        let (base, idx) = self.lanes_index(mem, index);
        let (whole, some, merge) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let whole_ok = match mem {
            Mem::Private(_) => self.b.ins().iconst(types::I8, 0),
            _ => self.whole_vector(idx),
        };
        self.b.ins().brif(whole_ok, whole, &[], some, &[]);
        self.b.switch_to_block(whole);
        let i0 = self.lane0_of_expr(index, idx);
        let a = self.elem_addr(base, i0, size);
        self.store_parts(v, s, a);
        self.b.ins().jump(merge, &[]);
        self.b.switch_to_block(some);
        let m = self.mask();
        for k in 0..self.nlanes() {
            let (on, next) = (self.b.create_block(), self.b.create_block());
            let mk = self.b.ins().extractlane(m, k as u8);
            self.b.ins().brif(mk, on, &[], next, &[]);
            self.b.switch_to_block(on);
            self.store_lane(mem, base, idx, v, k, s);
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(next);
        }
        self.b.ins().jump(merge, &[]);
        self.b.switch_to_block(merge);
    }

    fn vloop_vars(&mut self, id: crate::ir::LoopId) -> (Variable, Variable) {
        let &(_, brk, cont) = self
            .vloops
            .iter()
            .rev()
            .find(|l| l.0 == id)
            .expect("validated: enclosing loop");
        (brk, cont)
    }

    /// `x` in the lanes of `m` (a lane mask of `old`'s lane width), `old` in the others. A
    /// count's step `x = old + k` (integer lanes) is `old + (k & m)`, and `old - m` for
    /// `k = 1` (a mask lane is -1): one or two instructions where the select is three
    /// (the escape loop's iteration count).
    fn masked_update(&mut self, m: Value, x: Value, old: Value) -> Value {
        let dfg = &self.b.func.dfg;
        let step = match dfg.value_def(x).inst() {
            Some(i) if dfg.insts[i].opcode() == cl::Opcode::Iadd => match *dfg.inst_args(i) {
                [a, k] if a == old => Some(k),
                [k, a] if a == old => Some(k),
                _ => None,
            },
            _ => None,
        };
        let Some(k) = step else {
            return self.b.ins().bitselect(m, x, old);
        };
        let one = |v: Value| {
            let Some(i) = dfg.value_def(v).inst() else {
                return false;
            };
            if dfg.insts[i].opcode() != cl::Opcode::Splat {
                return false;
            }
            let a = dfg.inst_args(i)[0];
            dfg.value_def(a).inst().is_some_and(|c| {
                matches!(dfg.insts[c], cl::InstructionData::UnaryImm { opcode: cl::Opcode::Iconst, imm } if imm.bits() == 1)
            })
        };
        if one(k) {
            self.b.ins().isub(old, m)
        } else {
            let k = self.b.ins().band(k, m);
            self.b.ins().iadd(old, k)
        }
    }

    /// The store of an iteration count ([`trip_counters`]) `p = v + k` (or `k + v`, `v - k`):
    /// the scalar steps; the variable's registers take it as lanes leave the loop
    /// ([`Gen::record_trips`]).
    fn vstore_trip(&mut self, p: crate::ir::PrivateId, e: ExprId) {
        let Expr::Binary(op, a, b) = *self.f.exprs.get(e) else {
            unreachable!("trip_counters: a sum or difference")
        };
        let k = if matches!(self.f.exprs.get(a), Expr::Value(_)) {
            b
        } else {
            a
        };
        let kv = self.vexprs(k);
        let k0 = self.lane0(kv[0]);
        let t = self.trips[&p].1;
        let cur = self.b.use_var(t);
        let next = match op {
            BinaryOp::Sub => self.b.ins().isub(cur, k0),
            _ => self.b.ins().iadd(cur, k0),
        };
        self.b.def_var(t, next);
    }

    /// The lanes of `leaving` (a lane mask) leave loop `id`: its iteration counts' registers
    /// take the counts' scalars in those lanes.
    fn record_trips(&mut self, id: crate::ir::LoopId, leaving: Value) {
        let mut ps: Vec<_> = self
            .trips
            .iter()
            .filter(|(_, (l, _))| *l == id)
            .map(|(&p, &(_, v))| (p, v))
            .collect();
        ps.sort_by_key(|&(p, _)| p);
        for (p, t) in ps {
            let s = self.f.privates[p].elem.scalar;
            let x = self.b.use_var(t);
            let xs = self.splat(x, s);
            let vs = self.vvars(VarOf::Private(p), s);
            let ms = self.mask_parts(leaving, s);
            for ((v, x), m) in vs.into_iter().zip(xs).zip(ms) {
                let old = self.b.use_var(v);
                let new = self.b.ins().bitselect(m, x, old);
                self.b.def_var(v, new);
            }
        }
    }

    /// A side of an `if` that is only a quiet `break` ([`Gen::quiet_break`]), taken by the
    /// lanes of `m`: they leave the mask; where the loop has iteration counts, they are
    /// recorded in `rec` (a block of its own, run when a lane leaves); then on to `join`.
    fn leave_quietly(&mut self, side: &[Stmt], m: Value, rec: cl::Block, join: cl::Block) {
        let [Stmt::Break(id)] = side else {
            unreachable!("quiet_break: a break")
        };
        let z = self.mask_splat(0);
        self.set_mask(z);
        if self.has_trips(*id) {
            let any = self.b.ins().vany_true(m);
            self.b.set_cold_block(rec);
            self.b.ins().brif(any, rec, &[], join, &[]);
            self.b.switch_to_block(rec);
            self.record_trips(*id, m);
        }
        self.b.ins().jump(join, &[]);
    }

    /// Whether loop `id` has iteration counts ([`trip_counters`]) to record as lanes leave.
    fn has_trips(&self, id: crate::ir::LoopId) -> bool {
        self.trips.values().any(|(l, _)| *l == id)
    }

    /// Whether `block` is only a `break` of an enclosing `loop` whose breaks are not recorded
    /// ([`Gen::quiet_breaks`]): its lanes leave the mask, nothing else happens.
    fn quiet_break(&self, block: &[Stmt]) -> bool {
        matches!(block, [Stmt::Break(id)] if self.quiet_breaks.contains(id))
    }

    /// An `if` whose condition `cond` has the lanes `c`: each side runs for the lanes that
    /// take it (a side no lane takes is skipped), then the lanes of both go on.
    fn vif(&mut self, c: Value, cond: ExprId, then: &[Stmt], otherwise: &[Stmt]) {
        let full0 = self.full;
        // Under four active lanes, a uniform condition sends all four one way.
        let side_full = full0 && uniform(self.f, &self.counters, cond);
        let m0 = self.mask();
        let t = self.b.ins().band(m0, c);
        let e = self.b.ins().band_not(m0, c);
        let (tb, j1, eb, j2) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        // Each side runs when a lane takes it (an empty side is not tested); the mask after
        // it.
        let side = |g: &mut Self, block: &[Stmt], m: Value, b: cl::Block, j: cl::Block| {
            g.set_mask(m);
            if block.is_empty() {
                g.b.ins().jump(j, &[]);
            } else if g.quiet_break(block) {
                // Its lanes leave the loop, nothing to record (but iteration counts, when a
                // lane leaves): no branch.
                g.leave_quietly(block, m, b, j);
            } else {
                let any = g.b.ins().vany_true(m);
                g.b.ins().brif(any, b, &[], j, &[]);
                g.b.switch_to_block(b);
                g.full = side_full;
                g.vblock_split(block);
                g.b.ins().jump(j, &[]);
            }
            g.b.switch_to_block(j);
            g.mask()
        };
        let after_then = side(self, then, t, tb, j1);
        let after_else = side(self, otherwise, e, eb, j2);
        let m = if self.quiet_break(then) {
            after_else
        } else if self.quiet_break(otherwise) {
            after_then
        } else {
            self.b.ins().bor(after_then, after_else)
        };
        self.set_mask(m);
        // The two sides' lanes are the entry's again unless one took some out.
        self.full = full0 && !leaves(then, &mut Vec::new()) && !leaves(otherwise, &mut Vec::new());
    }

    fn vstmt(&mut self, s: &Stmt) {
        // Only the top level of a loop's body stores its own private variables unmasked.
        let outer = if matches!(s, Stmt::If { .. } | Stmt::For { .. } | Stmt::Loop { .. }) {
            Some(std::mem::take(&mut self.loop_private))
        } else {
            None
        };
        self.vstmt_inner(s);
        if let Some(o) = outer {
            self.loop_private = o;
        }
    }

    /// The private variables that a `loop` at the top of a one-region kernel may store
    /// without a mask at the top level of its body: those read nowhere else. The lanes not
    /// active there have left the loop (by a `break` or `return`: the body has no `continue`
    /// of it, which would keep a lane in the loop, inactive, for the next iteration) or never
    /// entered it, and none of them reads the variable again, so their values do not
    /// matter (as in the rayon baseline's escape loop, whose finished lanes keep
    /// iterating). The mandelbrot loop's `x` and `y` are stored so; its count, read after
    /// the loop, keeps its mask.
    fn loop_privates(&self, id: crate::ir::LoopId, body: &[Stmt]) -> Vec<crate::ir::PrivateId> {
        if !self.plan.simple || !self.vloops.is_empty() {
            return Vec::new();
        }
        if continues(id, body) {
            return Vec::new();
        }
        let loads = |block: &[Stmt]| {
            let mut n: HashMap<crate::ir::PrivateId, u32> = HashMap::new();
            walk_block(block, &mut |s| {
                if let Stmt::Load { mem, .. } = s {
                    if let Some(p) = self.private_var(*mem) {
                        *n.entry(p).or_default() += 1;
                    }
                }
            });
            n
        };
        let (all, inside) = (loads(&self.f.body), loads(body));
        self.f
            .privates
            .iter_enumerated()
            .map(|(p, _)| p)
            .filter(|p| self.private_var(Mem::Private(*p)).is_some())
            .filter(|p| all.get(p) == inside.get(p))
            .collect()
    }

    fn vstmt_inner(&mut self, s: &Stmt) {
        if let Stmt::Load { at, .. }
        | Stmt::Store { at, .. }
        | Stmt::Atomic { at, .. }
        | Stmt::AtomicLoad { at, .. } = s
        {
            self.at = *at;
        }
        match s {
            Stmt::Let { value, expr } => {
                let x = self.vexprs(*expr);
                self.define_lanes(*value, &x);
                // Its lane 0 as a scalar too, where it is an index's arithmetic (unused, it
                // is removed).
                if let Some(x0) = self.lane0_expr(*expr) {
                    let v = self.var(VarOf::Lane0(*value), 0, Scalar::U32);
                    self.b.def_var(v, x0);
                }
            }
            Stmt::Load { value, .. } if self.tiled.contains_key(value) => {
                let x = self.tiled[value];
                self.define_lanes(*value, &[x]);
            }
            Stmt::Load {
                value, mem, index, ..
            } => {
                let x = match self.private_var(*mem) {
                    Some(p) if self.trips.contains_key(&p) => {
                        // An iteration count: the active lanes' one value.
                        let x = self.b.use_var(self.trips[&p].1);
                        self.splat(x, self.f.privates[p].elem.scalar)
                    }
                    Some(p) => {
                        let s = self.f.privates[p].elem.scalar;
                        let vs = self.vvars(VarOf::Private(p), s);
                        self.use_vars(&vs)
                    }
                    None => self.vload_halves(*mem, *index),
                };
                self.define_lanes(*value, &x);
            }
            Stmt::Store {
                mem: Mem::Private(p),
                value,
                ..
            } if self.trips.contains_key(p) => self.vstore_trip(*p, *value),
            Stmt::Store {
                mem, index, value, ..
            } => {
                let x = self.vexprs(*value);
                if let Some(slot) = self.deferred.get_mut(&(*mem, *index)) {
                    // A row's store: written with its row after the body (`vfor_rows`).
                    *slot = Some(x[0]);
                    return;
                }
                match self.private_var(*mem) {
                    Some(p) if self.full || self.loop_private.contains(&p) => {
                        let s = self.f.privates[p].elem.scalar;
                        let vs = self.vvars(VarOf::Private(p), s);
                        for (v, x) in vs.into_iter().zip(x) {
                            self.b.def_var(v, x);
                        }
                    }
                    Some(p) => {
                        let s = self.f.privates[p].elem.scalar;
                        let vs = self.vvars(VarOf::Private(p), s);
                        let m = self.mask();
                        let ms = self.mask_parts(m, s);
                        for ((v, x), m) in vs.into_iter().zip(x).zip(ms) {
                            let old = self.b.use_var(v);
                            let new = self.masked_update(m, x, old);
                            self.b.def_var(v, new);
                        }
                    }
                    None => self.vstore_halves(*mem, *index, &x),
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.vexpr(*cond);
                let full0 = self.full;
                if full0 && self.splits < 2 && small_side(then) && !self.quiet_break(then) {
                    // Every lane active: where the condition holds in all of them (a tile's
                    // load under `row < n && col < n`), the `then` side alone, for all lanes,
                    // without the sides' masks or the test for lanes taking the `else` side
                    // (issue 31); otherwise both sides under their masks ([`Gen::vif`]).
                    // The `then` side's proofs' preconditions are tested with the condition,
                    // as by a fast copy of a block ([`Gen::vblock_split`]).
                    // The mask is all lanes in both copies: a constant, so that what it
                    // selects or is combined with folds away.
                    let ones = self.mask_splat(-1);
                    self.set_mask(ones);
                    let all = self.all_lanes_take(*cond, c);
                    let pre_ok0 = self.pre_ok;
                    let (all, pres0) = self.with_preconditions(then, all);
                    let (fast, general, join) = self.split_on(all);
                    self.b.switch_to_block(fast);
                    self.pre_ok = true;
                    self.vblock(then);
                    self.pre_ok = pre_ok0;
                    self.b.ins().jump(join, &[]);
                    self.b.switch_to_block(general);
                    self.full = full0;
                    // `vif` leaves `full` as it is after both sides, which holds after the
                    // fast copy too (it runs only the `then` side).
                    self.vif(c, *cond, then, otherwise);
                    self.b.ins().jump(join, &[]);
                    self.b.switch_to_block(join);
                    self.pres = pres0;
                    self.splits -= 1;
                } else {
                    self.vif(c, *cond, then, otherwise);
                }
            }
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => self.vfor(*id, *var, *start, *end, *step, body),
            Stmt::Loop { id, body } => {
                let full0 = self.full;
                self.full = false;
                let m0 = self.mask();
                let hoisted = self.hoist_divisions(body, None);
                match self.hoisted_may_fault(&hoisted) {
                    // The loop twice: without the hoisted divisions' tests where no lane
                    // active here has a zero divisor (one scalar test here, none in the
                    // loop), with them where one has.
                    Some(may_fault) => {
                        let (safe, tested, join) = (
                            self.b.create_block(),
                            self.b.create_block(),
                            self.b.create_block(),
                        );
                        self.b.set_cold_block(tested);
                        self.b.ins().brif(may_fault, tested, &[], safe, &[]);
                        self.b.switch_to_block(safe);
                        let saved = self.hoisted_without_tests(&hoisted);
                        self.memo.push(Default::default());
                        self.vloop(*id, body, m0);
                        self.pop_scope();
                        self.restore_hoisted(saved);
                        self.b.ins().jump(join, &[]);
                        self.b.switch_to_block(tested);
                        self.memo.push(Default::default());
                        self.vloop(*id, body, m0);
                        self.pop_scope();
                        self.b.ins().jump(join, &[]);
                        self.b.switch_to_block(join);
                    }
                    None => self.vloop(*id, body, m0),
                }
                // Lanes that leave only by this loop's `break` all leave it: the entry's.
                self.full = full0 && !leaves(body, &mut vec![*id]);
            }
            Stmt::Break(id) | Stmt::Continue(id) if !self.vloops.iter().any(|l| l.0 == *id) => {
                // A group-level loop: the lanes leave the region, the group level sees their
                // flags.
                let (b, c) = self.plan.loop_flags[id];
                self.vset_flag(if matches!(s, Stmt::Break(_)) { b } else { c });
                let z = self.mask_splat(0);
                self.set_mask(z);
                self.full = false;
            }
            Stmt::Break(id) | Stmt::Continue(id) => {
                if matches!(s, Stmt::Break(_)) && self.has_trips(*id) {
                    let m = self.mask();
                    self.record_trips(*id, m);
                }
                let (brk, cont) = self.vloop_vars(*id);
                let target = if matches!(s, Stmt::Break(_)) {
                    brk
                } else {
                    cont
                };
                if !(matches!(s, Stmt::Break(_)) && self.quiet_breaks.contains(id)) {
                    let m = self.mask();
                    let t = self.b.use_var(target);
                    let t = self.b.ins().bor(t, m);
                    self.b.def_var(target, t);
                }
                let z = self.mask_splat(0);
                self.set_mask(z);
                self.full = false;
            }
            Stmt::Return => {
                if !self.plan.simple {
                    self.vset_flag(self.plan.returned);
                }
                let z = self.mask_splat(0);
                self.set_mask(z);
                self.full = false;
            }
            Stmt::MemFence { .. } => {
                self.b.ins().fence();
            }
            Stmt::Atomic {
                result,
                mem,
                index,
                op,
                operand,
                compare,
                ..
            } => {
                let x = self.vatomic(
                    *mem,
                    *index,
                    Some((*op, *operand, *compare)),
                    result.is_some(),
                );
                if let Some(r) = result {
                    self.define_lanes(*r, &x);
                }
            }
            Stmt::AtomicLoad {
                value, mem, index, ..
            } => {
                let x = self.vatomic(*mem, *index, None, true);
                self.define_lanes(*value, &x);
            }
            Stmt::Barrier(_) | Stmt::Group { .. } => {
                unreachable!("barriers and collectives are between regions")
            }
        }
    }

    /// One lowering of a `loop` (its divisions hoisted ahead of it) entered with mask `m0`;
    /// leaves the mask after it set.
    fn vloop(&mut self, id: crate::ir::LoopId, body: &[Stmt], m0: Value) {
        // Lanes that leave only by this loop's `break` all leave it, and only so: the
        // mask after it is the one before it, and its breaks need not be recorded.
        let quiet = !leaves(body, &mut vec![id]);
        let cont_used = continues(id, body);
        let (brk, cont) = self.loop_masks();
        let (hdr, test, bodyb, exit) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().jump(hdr, &[]);
        self.b.switch_to_block(hdr);
        self.poll_stop(test);
        self.b.switch_to_block(test);
        let m = self.mask();
        let any = self.b.ins().vany_true(m);
        super::lower::loop_branch(&mut self.b, any, bodyb, exit);
        self.b.switch_to_block(bodyb);
        self.loop_private = self.loop_privates(id, body);
        self.vloops.push((id, brk, cont));
        if quiet {
            self.quiet_breaks.push(id);
        }
        self.vblock(body);
        if quiet {
            self.quiet_breaks.pop();
        }
        self.vloops.pop();
        self.loop_private.clear();
        if cont_used {
            // The lanes that skipped the rest of this iteration rejoin.
            let m = self.mask();
            let c = self.b.use_var(cont);
            let m = self.b.ins().bor(m, c);
            self.set_mask(m);
            let z = self.mask_splat(0);
            self.b.def_var(cont, z);
        }
        self.b.ins().jump(hdr, &[]);
        self.b.switch_to_block(exit);
        let out = if quiet { m0 } else { self.b.use_var(brk) };
        self.set_mask(out);
    }

    // ---- expressions ----

    /// The lanes of a 32-bit or `bool` expression (one register).
    /// A `for` loop in the vector variant: `v0`, `e`, `st` are the lanes of its start, end and
    /// step. Where four lanes enter ([`Gen::full`]), the bounds or only the step are uniform,
    /// the body keeps its lanes ([`keeps_lanes`]) and the counter is one register, the
    /// lanes' trip counts are compared on entry: when the step is 1 and every lane starts
    /// below its end by the same distance (a chunk per work-item: `start = id * chunk`), or
    /// the loop is striped ([`striped_counter`]) and its lanes run the same number of
    /// iterations without wrapping ([`Gen::same_trip_counts`]), all four lanes run the same
    /// iterations, so the loop is lowered a second time as one of four active lanes (lane
    /// 0's test, no mask work, accesses without mask tests), a chunk's iterations four at a
    /// time where loads can be read as tiles ([`Gen::vfor_tiled`]); the others take the
    /// general loop.
    #[allow(clippy::too_many_arguments)]
    fn vfor(
        &mut self,
        id: crate::ir::LoopId,
        var: ValueId,
        start: ExprId,
        end: ExprId,
        step: ExprId,
        body: &[Stmt],
    ) {
        let s = self.f.values[var].ty.scalar;
        let (v0, e, st) = (self.vexprs(start), self.vexprs(end), self.vexprs(step));
        let uniform_bounds = [start, end, step]
            .iter()
            .all(|&x| uniform(self.f, &self.counters, x));
        // A striped loop (its counter consecutive in the lanes: a work-group's stretch read
        // with the group's size as the step) has its loads consecutive already: no tiles,
        // and with eight lanes each half's loads one vector.
        let striped = striped_counter(self.f, &self.counters, var, start);
        let same_trips = self.full
            && (self.parts(s) == 1 || striped)
            && own_starts(self.f, &self.counters, id, [start, end, step], body);
        if !same_trips {
            self.vfor_copy(id, var, &v0, &e, &st, body, uniform_bounds, uniform_bounds);
            return;
        }
        // A loop unrolled by hand: its step a literal, its loads rows of tiles (four lanes).
        if let Some(k) = row_step(self.f, step).filter(|_| self.parts(s) == 1) {
            let rows = tile_rows(self.f, &self.counters, self.proof, var, k, body);
            if !rows.is_empty() {
                self.vfor_rows(id, var, (&v0, &e, &st), k, body, &rows);
                return;
            }
        }
        // A step of 1 (a literal: it cannot fault) and no lane below its end: no iteration
        // anywhere, so neither copy, nor their tests.
        let one_step = self.f.exprs.literal(step).is_some_and(|l| l.as_i128() == 1);
        let skip = (!striped && one_step).then(|| {
            let below = self.below_mask(s, v0[0], e[0]);
            self.enter_if_any(below)
        });
        let ok = if striped {
            self.same_trip_counts(s, &v0, &e, &st)
        } else {
            // Step 1 (lane 0's is every lane's), every lane below its end, by the same
            // distance.
            let st0 = self.b.ins().extractlane(st[0], 0);
            let one = self.b.ins().icmp_imm(IntCC::Equal, st0, 1);
            let below = self.lanes_below(s, v0[0], e[0]);
            let d = self.b.ins().isub(e[0], v0[0]);
            let d0 = self.b.ins().extractlane(d, 0);
            let d0 = self.b.ins().splat(types::I32X4, d0);
            let same = self.b.ins().icmp(IntCC::Equal, d, d0);
            let same = self.b.ins().vall_true(same);
            let ok = self.b.ins().band(one, below);
            self.b.ins().band(ok, same)
        };
        let (fast, general, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(ok, fast, &[], general, &[]);
        let full0 = self.full;
        for (block, together) in [(fast, true), (general, false)] {
            self.b.switch_to_block(block);
            self.full = full0;
            self.memo.push(Default::default());
            // The same iterations: the loads a tile can stand for, proven here.
            let tiles: Vec<_> = match together && !striped {
                true => tile_loads(self.f, &self.counters, self.proof, var, body)
                    .into_iter()
                    .filter(|&(_, mem, index)| self.proven_here(mem, index))
                    .collect(),
                false => Vec::new(),
            };
            if !tiles.is_empty() {
                let v = self.vfor_tiled(var, &v0, &e, body, &tiles);
                self.vfor_copy(id, var, &[v], &e, &st, body, together, false);
            } else {
                self.vfor_copy(id, var, &v0, &e, &st, body, together, false);
            }
            self.pop_scope();
            self.b.ins().jump(join, &[]);
        }
        self.b.switch_to_block(join);
        if let Some(past) = skip {
            self.b.ins().jump(past, &[]);
            self.b.switch_to_block(past);
        }
        // Both copies end with the entry's lanes unless the body takes some out (it does
        // not: [`keeps_lanes`]), as [`Gen::vfor_copy`] says.
        self.full = full0 && !leaves(body, &mut vec![id]);
    }

    /// Whether every lane's counter `v` (a 32-bit register of lanes) starts below its end
    /// `e`, compared as the counter's type `s`: one scalar.
    fn lanes_below(&mut self, s: Scalar, v: Value, e: Value) -> Value {
        let below = self.below_mask(s, v, e);
        self.b.ins().vall_true(below)
    }

    /// The lanes whose counter `v` lies below its end `e` (a mask).
    fn below_mask(&mut self, s: Scalar, v: Value, e: Value) -> Value {
        let lt = if s.is_signed() {
            IntCC::SignedLessThan
        } else {
            IntCC::UnsignedLessThan
        };
        self.b.ins().icmp(lt, v, e)
    }

    /// Goes on in a new block where some lane of the mask `below` has an iteration, and
    /// returns the block that the loop's lowering jumps to at its end, which the other case
    /// reaches at once: no copy of the loop, no test of it (a remainder loop after whole rows
    /// or chunks, empty in every full tile, issue 31).
    fn enter_if_any(&mut self, below: Value) -> cl::Block {
        let any = self.b.ins().vany_true(below);
        let (tests, past) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(any, tests, &[], past, &[]);
        self.b.switch_to_block(tests);
        past
    }

    /// Whether the four (or eight: each register of lanes in turn) lanes of a `for` loop with
    /// a uniform step `st` (lane 0's is every lane's) run the same number of iterations from
    /// their starts `v` to their ends `e`,
    /// at least one, upwards: the step positive, every lane below its end, and every lane's
    /// distance `d` to it in the same run of `step` values as lane 0's (`(d - 1) / step`
    /// the same: one scalar division on entry, then `lo <= d - 1 < lo + step` in the lanes
    /// with `lo = (d0 - 1) / step * step`, unsigned, which cannot wrap). A distance is
    /// exact in 32 unsigned bits where the lane is below its end. One scalar.
    fn same_trip_counts(&mut self, s: Scalar, v: &[Value], e: &[Value], st: &[Value]) -> Value {
        let st0 = self.b.ins().extractlane(st[0], 0);
        let up = if s.is_signed() {
            self.b.ins().icmp_imm(IntCC::SignedGreaterThan, st0, 0)
        } else {
            self.b.ins().icmp_imm(IntCC::NotEqual, st0, 0)
        };
        // The divisor where the step fails the test anyway: 1 (no trap; `up` says no).
        let one = self.b.ins().iconst(types::I32, 1);
        let div = self.b.ins().select(up, st0, one);
        let ones = self.splat_i32(1);
        let d0 = self.b.ins().isub(e[0], v[0]);
        let d0 = self.b.ins().isub(d0, ones);
        let d0 = self.b.ins().extractlane(d0, 0);
        let q0 = self.b.ins().udiv(d0, div);
        let lo = self.b.ins().imul(q0, div);
        let los = self.b.ins().splat(types::I32X4, lo);
        let divs = self.b.ins().splat(types::I32X4, div);
        // The last step does not wrap (a wrapped counter would be below its end again):
        // `v + lo <= MAX - step`, `v + lo` being the last counter the body sees.
        let max = if s.is_signed() {
            i32::MAX as i64
        } else {
            u32::MAX as i64
        };
        let max = self.b.ins().iconst(types::I32, max);
        let room = self.b.ins().isub(max, div);
        let room = self.b.ins().splat(types::I32X4, room);
        let le = if s.is_signed() {
            IntCC::SignedLessThanOrEqual
        } else {
            IntCC::UnsignedLessThanOrEqual
        };
        let mut ok = up;
        // Each register of lanes (two with eight lanes) against lane 0's run.
        for (&v, &e) in v.iter().zip(e) {
            let below = self.lanes_below(s, v, e);
            ok = self.b.ins().band(ok, below);
            let d = self.b.ins().isub(e, v);
            let dm1 = self.b.ins().isub(d, ones);
            let ge = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThanOrEqual, dm1, los);
            let r = self.b.ins().isub(dm1, los);
            let within = self.b.ins().icmp(IntCC::UnsignedLessThan, r, divs);
            let last = self.b.ins().iadd(v, los);
            let fits = self.b.ins().icmp(le, last, room);
            let all = self.b.ins().band(ge, within);
            let all = self.b.ins().band(all, fits);
            let all = self.b.ins().vall_true(all);
            ok = self.b.ins().band(ok, all);
        }
        ok
    }

    /// The iterations of a `for` loop whose four lanes run the same ones ([`Gen::vfor`]'s
    /// test, step 1), four at a time while four are left, where the body has loads that a
    /// tile can stand for ([`tile_loads`], `tiles`). For each such load, each lane's four
    /// elements (the lane's index at counters `c` to `c + 3`, consecutive: the index is the
    /// counter plus something uniform, proven in bounds so without wrapping) are one vector
    /// load, and the four vectors transposed are the load's lanes at `c`, `c + 1`, `c + 2`
    /// and `c + 3`; the body is lowered four times, for those counters in order, each copy
    /// reading its column of the tiles. So every work-item still runs its own iterations in
    /// its own order (a sum adds the same elements in the same order, bit for bit), and what
    /// the copies do besides the tiled loads (other loads, stores, faults) is what four
    /// iterations do. The lanes' addresses are computed once before the loop (an offset in
    /// bytes steps them). Returns the counter's lanes after the last tiled iteration, where
    /// the loop of the others ([`Gen::vfor_copy`], at most three iterations) starts.
    fn vfor_tiled(
        &mut self,
        var: ValueId,
        v0: &[Value],
        e: &[Value],
        body: &[Stmt],
        tiles: &[(ValueId, Mem, ExprId)],
    ) -> Value {
        let s = self.f.values[var].ty.scalar;
        self.hoist_divisions(body, Some(var));
        // Each tile's four lanes' element addresses at the first iteration.
        self.memo.push(Default::default());
        self.define_lanes(var, v0);
        let mut rows: Vec<[Value; 4]> = Vec::new();
        for &(_, mem, index) in tiles {
            // Proven in bounds: not negative, so zero-extended whatever its type.
            let idx = self.vexpr(index);
            let base = self.mem_base_len(mem).0;
            rows.push(std::array::from_fn(|l| {
                let i = self.b.ins().extractlane(idx, l as u8);
                self.elem_addr(base, i, 4)
            }));
        }
        self.pop_scope();
        // The iterations left (every lane's: the same), rounded down to a multiple of four,
        // as bytes of the tiles' rows.
        let c0 = self.b.ins().extractlane(v0[0], 0);
        let e0 = self.b.ins().extractlane(e[0], 0);
        let n = self.b.ins().isub(e0, c0);
        let n = self.b.ins().uextend(types::I64, n);
        let n = self.b.ins().band_imm(n, !3);
        let end = self.b.ins().imul_imm(n, 4);
        let lp = self.bytes_loop(end);
        let mut cols: Vec<[Value; 4]> = Vec::new();
        for (&(_, mem, _), row) in tiles.iter().zip(&rows) {
            cols.push(self.load_tile(mem, row, lp.o, 0));
        }
        let vv = self.vvars(VarOf::Value(var), s);
        let cur = self.use_vars(&vv)[0];
        for k in 0..4 {
            let ck = match k {
                0 => cur,
                k => {
                    let d = self.splat_i32(k);
                    self.b.ins().iadd(cur, d)
                }
            };
            self.define_lanes(var, &[ck]);
            self.tiled = tiles
                .iter()
                .zip(&cols)
                .map(|(&(value, ..), col)| (value, col[k as usize]))
                .collect();
            self.full = true;
            self.vblock(body);
        }
        self.tiled.clear();
        let four = self.splat_i32(4);
        let next = self.b.ins().iadd(cur, four);
        self.define_lanes(var, &[next]);
        self.bytes_loop_next(lp, 16);
        self.use_vars(&vv)[0]
    }

    /// A loop over byte offsets from 0 while below `end` (an `i64`): its header tests the
    /// offset, and the builder is left in its body ([`BytesLoop::o`] the offset there), which
    /// [`Gen::bytes_loop_next`] ends.
    fn bytes_loop(&mut self, end: Value) -> BytesLoop {
        let off = self.b.declare_var(types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(off, zero);
        let (hdr, body, exit) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().jump(hdr, &[]);
        self.b.switch_to_block(hdr);
        let o = self.b.use_var(off);
        let go = self.b.ins().icmp(IntCC::UnsignedLessThan, o, end);
        super::lower::loop_branch(&mut self.b, go, body, exit);
        self.b.switch_to_block(body);
        BytesLoop { off, o, hdr, exit }
    }

    /// Ends the body of a [`Gen::bytes_loop`]: the offset steps by `bytes`, back to the
    /// header; the builder is left after the loop.
    fn bytes_loop_next(&mut self, lp: BytesLoop, bytes: i64) {
        let o = self.b.ins().iadd_imm(lp.o, bytes);
        self.b.def_var(lp.off, o);
        self.b.ins().jump(lp.hdr, &[]);
        self.b.switch_to_block(lp.exit);
    }

    /// The 4x4 tile of 32-bit elements of `mem` whose row `l` is the four elements at lane
    /// `l`'s address `row[l]` plus `o` plus `at` bytes, transposed: column `j` holds each
    /// lane's element `j`.
    fn load_tile(&mut self, mem: Mem, row: &[Value; 4], o: Value, at: i32) -> [Value; 4] {
        let ty = self.vty(self.f.mem_elem(mem).expect("validated memory").scalar);
        let r: [Value; 4] = std::array::from_fn(|l| {
            let a = self.b.ins().iadd(row[l], o);
            self.b.ins().load(ty, MEM, a, at)
        });
        self.transpose(r, ty)
    }

    /// A `for` loop unrolled by hand ([`Gen::vfor`]: four lanes enter, the bounds differ
    /// between them, the step is the literal `k`) whose body reads `rows` ([`tile_rows`]):
    /// tested on entry that the four lanes run the same iterations (every lane below its
    /// end by the same distance, and no counter wraps past its type's end on its last
    /// step) and that every element the rows will read is in bounds: the loop runs all its
    /// iterations (its body has no exit) and each reads `k` consecutive elements of each
    /// row per lane, so those are the elements `first` to `first + k * trips - 1` of each
    /// lane, which the test sums without wrapping (and, for a signed index, from 0). Then
    /// each iteration reads each row's `k` elements per lane as `k / 4` vector loads per
    /// lane, transposed into `k / 4` 4x4 tiles whose columns are the row's loads, and
    /// lowers the body once, for four active lanes, without the rows' loads or bounds
    /// tests. Otherwise (a lane would fault, or the lanes differ) the general loop runs,
    /// with its tests, so a fault is the interpreter's. No store of the kernel changes what
    /// a row reads ahead (its buffer is only read), and every work-item still runs its own
    /// iterations in its own order.
    fn vfor_rows(
        &mut self,
        id: crate::ir::LoopId,
        var: ValueId,
        (v0, e, st): (&[Value], &[Value], &[Value]),
        k: u32,
        body: &[Stmt],
        rows: &[TileRow],
    ) {
        let s = self.f.values[var].ty.scalar;
        let signed = s.is_signed();
        let le = if signed {
            IntCC::SignedLessThanOrEqual
        } else {
            IntCC::UnsignedLessThanOrEqual
        };
        // Every lane below its end, by the same distance, and its end at most `MAX - (k -
        // 1)`: no step wraps the counter (the lanes' trip counts are then all `ceil(d / k)`).
        let below = self.below_mask(s, v0[0], e[0]);
        // No lane with an iteration: past both copies at once (the step `k` cannot fault).
        let join = self.enter_if_any(below);
        let mut ok = self.b.ins().vall_true(below);
        let d = self.b.ins().isub(e[0], v0[0]);
        let d0 = self.b.ins().extractlane(d, 0);
        let d0s = self.b.ins().splat(types::I32X4, d0);
        let same = self.b.ins().icmp(IntCC::Equal, d, d0s);
        let same = self.b.ins().vall_true(same);
        ok = self.b.ins().band(ok, same);
        let top = if signed {
            i32::MAX as i64
        } else {
            u32::MAX as i64
        } - (k as i64 - 1);
        let top = self.splat_i32(top);
        let room = self.b.ins().icmp(le, e[0], top);
        let room = self.b.ins().vall_true(room);
        ok = self.b.ins().band(ok, room);
        // The elements per lane of each row: `ceil(d / k) * k` (`d` below 2^32).
        let d64 = self.b.ins().uextend(types::I64, d0);
        let n = self.b.ins().iadd_imm(d64, k as i64 - 1);
        let n = self.b.ins().band_imm(n, -(k as i64));
        // Each row's lanes' first elements' addresses, each lane's elements tested.
        self.memo.push(Default::default());
        self.define_lanes(var, v0);
        let index_end = if signed { 1i64 << 31 } else { 1i64 << 32 };
        let mut addrs: Vec<[Value; 4]> = Vec::new();
        for r in rows {
            let idx = self.vexpr(r.first);
            let (base, len) = self.mem_base_len(r.mem);
            // Each lane's elements `i .. i + n` lie in the memory and below the index type's
            // end: `0 <= i <= lim` with `lim = min(len, index_end) - n`, one vector compare
            // for the four lanes (`lim` is below `index_end`, so it fits the lanes' type; a
            // negative `lim` fails the row by itself).
            let end = self.b.ins().iconst(types::I64, index_end);
            let room = self.b.ins().smin(len, end);
            let lim = self.b.ins().isub(room, n);
            let lim_ok = self
                .b
                .ins()
                .icmp_imm(IntCC::SignedGreaterThanOrEqual, lim, 0);
            ok = self.b.ins().band(ok, lim_ok);
            let lim = self.b.ins().ireduce(types::I32, lim);
            let lims = self.b.ins().splat(types::I32X4, lim);
            let fits = self.b.ins().icmp(le, idx, lims);
            let mut fits = self.b.ins().vall_true(fits);
            if signed {
                let zero = self.splat_i32(0);
                let from0 = self
                    .b
                    .ins()
                    .icmp(IntCC::SignedGreaterThanOrEqual, idx, zero);
                let from0 = self.b.ins().vall_true(from0);
                fits = self.b.ins().band(fits, from0);
            }
            ok = self.b.ins().band(ok, fits);
            let mut lanes = [idx; 4];
            for (l, lane) in lanes.iter_mut().enumerate() {
                let i = self.b.ins().extractlane(idx, l as u8);
                // (Used only where `i >= 0` holds: zero-extended whatever its type.)
                *lane = self.elem_addr(base, i, 4);
            }
            addrs.push(lanes);
        }
        self.pop_scope();
        let (fast, general) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(ok, fast, &[], general, &[]);
        let full0 = self.full;

        self.b.switch_to_block(general);
        self.memo.push(Default::default());
        self.vfor_copy(id, var, v0, e, st, body, false, false);
        self.pop_scope();
        self.b.ins().jump(join, &[]);

        self.b.switch_to_block(fast);
        self.full = full0;
        self.memo.push(Default::default());
        self.hoist_divisions(body, Some(var));
        self.define_lanes(var, v0);
        let end = self.b.ins().imul_imm(n, 4);
        let lp = self.bytes_loop(end);
        let o = lp.o;
        let mut tiled = HashMap::new();
        for (r, lanes) in rows.iter().zip(&addrs) {
            for q in 0..r.values.len() / 4 {
                let cols = self.load_tile(r.mem, lanes, o, 16 * q as i32);
                for (j, col) in cols.into_iter().enumerate() {
                    tiled.insert(r.values[4 * q + j], col);
                }
            }
        }
        let vv = self.vvars(VarOf::Value(var), s);
        let cur = self.use_vars(&vv)[0];
        self.tiled = tiled;
        self.deferred = rows
            .iter()
            .flat_map(|r| r.stores.iter().map(|&i| ((r.mem, i), None)))
            .collect();
        self.full = true;
        self.vblock(body);
        self.tiled.clear();
        // The rows of stores: each quarter's four columns transposed into the lanes' rows.
        let deferred = std::mem::take(&mut self.deferred);
        for (r, lanes) in rows.iter().zip(&addrs) {
            let ty = self.vty(self.f.mem_elem(r.mem).expect("validated memory").scalar);
            for q in 0..r.stores.len() / 4 {
                let cols: [Value; 4] = std::array::from_fn(|j| {
                    deferred[&(r.mem, r.stores[4 * q + j])].expect("a row's store, lowered")
                });
                let t = self.transpose(cols, ty);
                for (l, x) in t.into_iter().enumerate() {
                    let a = self.b.ins().iadd(lanes[l], o);
                    self.b.ins().store(MEM, x, a, 16 * q as i32);
                }
            }
        }
        let step = self.splat_i32(k as i64);
        let next = self.b.ins().iadd(cur, step);
        self.define_lanes(var, &[next]);
        self.bytes_loop_next(lp, 4 * k as i64);
        self.pop_scope();
        self.b.ins().jump(join, &[]);

        self.b.switch_to_block(join);
        // Both copies end with the entry's lanes (the body keeps them: [`tile_rows`]).
        self.full = full0 && !leaves(body, &mut vec![id]);
    }

    /// The 4x4 transpose of the rows `r` (of type `ty`, `f32x4` or `i32x4`): column `k` has
    /// element `k` of each row, row `l`'s in lane `l`.
    fn transpose(&mut self, r: [Value; 4], ty: cl::Type) -> [Value; 4] {
        // Interleaved 32-bit lanes of two rows (unpcklps, unpckhps), then 64-bit halves
        // of two of those (movlhps, movhlps).
        const LO32: [u8; 16] = [0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23];
        const HI32: [u8; 16] = [8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31];
        const LO64: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
        const HI64: [u8; 16] = [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31];
        let a = self.shuffle(r[0], r[1], LO32);
        let b = self.shuffle(r[0], r[1], HI32);
        let c = self.shuffle(r[2], r[3], LO32);
        let d = self.shuffle(r[2], r[3], HI32);
        let cols = [
            self.shuffle(a, c, LO64),
            self.shuffle(a, c, HI64),
            self.shuffle(b, d, LO64),
            self.shuffle(b, d, HI64),
        ];
        cols.map(|x| {
            if ty == types::I32X4 {
                x
            } else {
                self.b.ins().bitcast(ty, lanes_flags(), x)
            }
        })
    }

    /// One lowering of a `for` loop ([`Gen::vfor`]); `together`: the lanes run the same
    /// iterations (uniform bounds, or a test on entry), so where four enter, lane 0's test
    /// is every lane's and the body runs for four. `shared`: the bounds are uniform, so the
    /// lanes' counters are equal too; where four enter, the counter is then one scalar
    /// (stepped and compared as such, splat where the body reads its lanes), and a body
    /// without a `continue` of the loop leaves the mask alone at the latch.
    #[allow(clippy::too_many_arguments)]
    fn vfor_copy(
        &mut self,
        id: crate::ir::LoopId,
        var: ValueId,
        v0: &[Value],
        e: &[Value],
        st: &[Value],
        body: &[Stmt],
        together: bool,
        shared: bool,
    ) {
        let (id, var) = (&id, &var);
        let s = self.f.values[*var].ty.scalar;
        let zs = self.vzero(s);
        let zero_step = self.vicmp(IntCC::Equal, st, &zs);
        self.lanes_fault_plain(zero_step, Site::ZeroStep);
        // The lanes that count up (a signed counter's step may be negative; an unsigned
        // counter only counts up).
        let up = s
            .is_signed()
            .then(|| self.vicmp(IntCC::SignedGreaterThan, st, &zs));
        let z = self.mask_splat(0);
        // Four lanes enter, a uniform test keeps all four, and the body returns
        // them all to the latch: four lanes in every iteration, and the test is one
        // scalar comparison (lane 0's, every lane's).
        let full0 = self.full;
        let body_full = full0 && together && keeps_lanes(*id, body);
        self.hoist_divisions(body, Some(*var));
        let lane0 = |g: &mut Self, x: &[Value]| g.b.ins().extractlane(x[0], 0);
        // The counter as one scalar (see the doc): its start, end and step, lane 0's.
        let scalar = (body_full && shared && !narrow_int(s)).then(|| {
            let v = self
                .b
                .declare_var(self.b.func.dfg.value_type(v0[0]).lane_type());
            let c0 = lane0(self, v0);
            self.b.def_var(v, c0);
            (v, lane0(self, e), lane0(self, st))
        });
        if scalar.is_none() {
            self.define_lanes(*var, v0);
        }
        let quiet_latch = body_full && !continues(*id, body);
        let (brk, cont) = self.loop_masks();
        let (hdr, bodyb, latch, exit) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().jump(hdr, &[]);
        self.b.switch_to_block(hdr);
        let vv = self.vvars(VarOf::Value(*var), s);
        let (lt, gt) = if s.is_signed() {
            (IntCC::SignedLessThan, IntCC::SignedGreaterThan)
        } else {
            (IntCC::UnsignedLessThan, IntCC::UnsignedGreaterThan)
        };
        if body_full {
            let (c0, e0) = match scalar {
                Some((v, e0, _)) => (self.b.use_var(v), e0),
                None => {
                    let cur = self.use_vars(&vv);
                    (lane0(self, &cur), lane0(self, e))
                }
            };
            let below = self.b.ins().icmp(lt, c0, e0);
            let go = if s.is_signed() {
                let above = self.b.ins().icmp(gt, c0, e0);
                let s0 = lane0(self, st);
                let ty = self.b.func.dfg.value_type(s0);
                let zero = self.b.ins().iconst(ty, 0);
                let up = self.b.ins().icmp(IntCC::SignedGreaterThan, s0, zero);
                self.b.ins().select(up, below, above)
            } else {
                below
            };
            // The lanes all leave together, by the test: the exit's mask is the
            // entry's (`brk` stays unused).
            let m = self.mask();
            self.b.def_var(brk, m);
            super::lower::loop_branch(&mut self.b, go, bodyb, exit);
        } else {
            let cur = self.use_vars(&vv);
            let below = self.vicmp(lt, &cur, e);
            // An unsigned counter: no test of the other direction, and no select by the
            // step's sign (Cranelift keeps the select of an all-ones mask: a compare and a
            // blend per test and iteration, issue 31).
            let go = match up {
                Some(up) => {
                    let above = self.vicmp(gt, &cur, e);
                    self.b.ins().bitselect(up, below, above)
                }
                None => below,
            };
            let m = self.mask();
            let leaving = self.b.ins().band_not(m, go);
            let bv = self.b.use_var(brk);
            let bv = self.b.ins().bor(bv, leaving);
            self.b.def_var(brk, bv);
            let m = self.b.ins().band(m, go);
            self.set_mask(m);
            let any = self.b.ins().vany_true(m);
            super::lower::loop_branch(&mut self.b, any, bodyb, exit);
        }
        self.b.switch_to_block(bodyb);
        if let Some((v, _, _)) = scalar {
            let c0 = self.b.use_var(v);
            let lanes = self.splat(c0, s);
            self.define_lanes(*var, &lanes);
        }
        self.full = body_full;
        self.vloops.push((*id, brk, cont));
        self.vblock(body);
        self.vloops.pop();
        self.full = false;
        self.b.ins().jump(latch, &[]);
        self.b.switch_to_block(latch);
        if !quiet_latch {
            // The lanes that ended the iteration by `continue` go on with the others.
            let m = self.mask();
            let c = self.b.use_var(cont);
            let m = self.b.ins().bor(m, c);
            self.set_mask(m);
            self.b.def_var(cont, z);
        }
        match scalar {
            Some((v, _, s0)) => {
                let c0 = self.b.use_var(v);
                let next = self.b.ins().iadd(c0, s0);
                self.b.def_var(v, next);
            }
            None => {
                let cur = self.use_vars(&vv);
                let next: Vec<Value> = cur
                    .iter()
                    .zip(st)
                    .map(|(&c, &d)| self.b.ins().iadd(c, d))
                    .collect();
                let next = self.wrap(s, next);
                self.define_lanes(*var, &next);
            }
        }
        self.b.ins().jump(hdr, &[]);
        self.b.switch_to_block(exit);
        if let Some((v, _, _)) = scalar {
            // The counter after the loop, where something reads it (a record slot).
            let c0 = self.b.use_var(v);
            let lanes = self.splat(c0, s);
            self.define_lanes(*var, &lanes);
        }
        let out = self.b.use_var(brk);
        self.set_mask(out);
        // Every lane leaves by the test or a `break`: the entry's lanes again.
        self.full = full0 && !leaves(body, &mut vec![*id]);
    }

    pub(super) fn vexpr(&mut self, e: ExprId) -> Value {
        let v = self.vexprs(e);
        debug_assert_eq!(v.len(), 1, "a 32-bit lane type");
        v[0]
    }

    /// The lanes of an expression: one register, or two for a 64-bit type ([`parts`]).
    pub(super) fn vexprs(&mut self, e: ExprId) -> Vec<Value> {
        if let Some(h) = self.half {
            // A half of eight lanes: the part of the eight lanes' value.
            self.half = None;
            let v = self.vexprs(e);
            self.half = Some(h);
            return match v.len() {
                2 => vec![v[h as usize]],
                // A `bool`'s `i16x8`: its half widened to an `i32x4` mask.
                _ => vec![self.widen_mask(v[0], h != 0)],
            };
        }
        if let Some(v) = self.lookup(e) {
            return v;
        }
        let start = self.deferred_len();
        let ty = self.f.exprs.ty(e);
        let s = ty.scalar;
        let expr = self.f.exprs.get(e).clone();
        let v = match expr {
            Expr::Literal(l) => {
                if s == Scalar::Bool {
                    vec![self.mask_splat(-(l.bits as i64))]
                } else {
                    let x = self.lit(l);
                    self.splat(x, s)
                }
            }
            Expr::Param(p) => {
                let bits = self
                    .b
                    .ins()
                    .load(types::I64, TABLE, self.scal_p, p.index() as i32 * 8);
                let x = from_bits(&mut self.b, bits, s);
                self.splat(x, s)
            }
            Expr::BufferLen(p) => {
                let len = self.mem_arg(self.bufs_p, p.index()).1;
                let x = if s.size() == 8 {
                    len
                } else {
                    self.b.ins().ireduce(types::I32, len)
                };
                self.splat(x, s)
            }
            Expr::Value(v) if self.plan.shared.contains_key(&v) => {
                // A counter the same in every work-item: one scalar for the region's call.
                let x = self.load_shared(self.plan.shared[&v], s);
                self.splat(x, s)
            }
            Expr::Value(v) if !self.defined.contains(&v) => {
                // Defined by another region (or the group level): from the records.
                let slot = self.plan.values[&v];
                self.vrec_load(slot.off, s)
            }
            Expr::Value(v) => {
                let vs = self.vvars(VarOf::Value(v), s);
                debug_assert_eq!(vs.len(), self.parts(s), "vars");
                self.use_vars(&vs)
            }
            Expr::Builtin(b) => self.vbuiltin(b),
            Expr::Unary(op, a) => {
                let x = self.vexprs(a);
                let r = x
                    .into_iter()
                    .map(|x| match op {
                        UnaryOp::Neg if s.is_float() => self.b.ins().fneg(x),
                        UnaryOp::Neg => self.b.ins().ineg(x),
                        UnaryOp::Not => self.b.ins().bnot(x),
                    })
                    .collect();
                self.wrap(s, r)
            }
            Expr::Binary(BinaryOp::Mul, a, b) if self.two(a) || self.two(b) => {
                // `2 * x` as `x + x`: the same bits (doubling is exact, or overflows to the
                // same infinity; a NaN comes back quieted from either), without the constant's
                // register.
                let x = self.vexprs(if self.two(a) { b } else { a });
                x.into_iter().map(|x| self.b.ins().fadd(x, x)).collect()
            }
            // An integer multiplication, division or remainder by a literal power of two: a
            // shift or a mask, with the operation's bits (no division lane by lane: the
            // patterns' `count / unroll * unroll` took four `div`s a vector, issue 31).
            Expr::Binary(op @ (BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem), a, b)
                if s.is_int()
                    && (self.pow2(b).is_some()
                        || (op == BinaryOp::Mul && self.pow2(a).is_some())) =>
            {
                let (x, k) = match self.pow2(b) {
                    Some(k) => (a, k),
                    None => (b, self.pow2(a).expect("a power of two")),
                };
                let x = self.vexprs(x);
                self.vpow2(op, s, x, k)
            }
            // A division or remainder of consecutive `u32`s by a uniform divisor under all
            // lanes active (a row-major image's pixel, `i / width` and `i % width`):
            // [`Gen::consecutive_div`], one scalar division a register.
            Expr::Binary(op @ (BinaryOp::Div | BinaryOp::Rem), a, b)
                if s == Scalar::U32
                    && ((self.full
                        && consecutive(self.f, &self.counters, a)
                        && uniform(self.f, &self.counters, b))
                        || (self.nofault.is_some()
                            && self.consecutive_here(a)
                            && self.agree(b))) =>
            {
                let (x, y) = (self.vexprs(a), self.vexprs(b));
                self.consecutive_div(op, &x, &y)
            }
            // An integer division of uniform operands under all lanes active (a chunk's
            // length, `(n + size - 1) / size`): one scalar division, lane 0's (the first
            // lane, so a zero divisor names the work-item the interpreter's does), for all.
            Expr::Binary(op @ (BinaryOp::Div | BinaryOp::Rem), a, b)
                if s.is_int()
                    && self.full
                    && self.nofault.is_none()
                    && uniform(self.f, &self.counters, a)
                    && uniform(self.f, &self.counters, b) =>
            {
                let (x, y) = (self.vexprs(a), self.vexprs(b));
                let (x0, y0) = (self.lane0_int(&x, s), self.lane0_int(&y, s));
                let lane = self.lane_id(0);
                self.fault_lane = Some(lane);
                let r = self.binary(op, s, x0, y0);
                self.fault_lane = None;
                self.splat(r, s)
            }
            Expr::Binary(op, a, b) => {
                let os = self.f.exprs.ty(a).scalar;
                let (x, y) = (self.vexprs(a), self.vexprs(b));
                self.vbinary(op, os, &x, &y)
            }
            Expr::Select(c, a, b) => {
                let (c, x, y) = (self.vexpr(c), self.vexprs(a), self.vexprs(b));
                let cs = self.mask_parts(c, s);
                cs.into_iter()
                    .zip(x.into_iter().zip(y))
                    .map(|(c, (x, y))| self.b.ins().bitselect(c, x, y))
                    .collect()
            }
            Expr::Cast(a, to) => {
                let from = self.f.exprs.ty(a).scalar;
                let x = self.vexprs(a);
                self.vcast(x, from, to)
            }
            Expr::Bitcast(a, to) => {
                let x = self.vexprs(a);
                let from = self.vty(self.f.exprs.ty(a).scalar);
                if from == self.vty(to.scalar) {
                    // `i8` and `u8` (16-bit alike) differ in their lanes' upper bits.
                    self.wrap(to.scalar, x)
                } else {
                    x.into_iter()
                        .map(|x| {
                            let ty = self.vty(to.scalar);
                            self.b.ins().bitcast(ty, lanes_flags(), x)
                        })
                        .collect()
                }
            }
            Expr::Math(m, args) => {
                let a = self.f.exprs.ty(args[0]).scalar;
                let mut xs: Vec<Vec<Value>> = args.iter().map(|&x| self.vexprs(x)).collect();
                let splat = |g: &Self, x: Value| {
                    g.b.func
                        .dfg
                        .value_def(x)
                        .inst()
                        .is_some_and(|i| g.b.func.dfg.insts[i].opcode() == cl::Opcode::Splat)
                };
                if m == MathFn::Fma && splat(self, xs[0][0]) && !splat(self, xs[1][0]) {
                    // `x * y` is exact before the rounding, so the factors may trade places:
                    // x86-64's `vfmadd213` overwrites its first factor, and a splat shared by
                    // a row of updates (SGEMM's element of `A`) would be copied for each.
                    xs.swap(0, 1);
                }
                self.vmath(m, a, &xs)
            }
            Expr::Splat(..) | Expr::Compose(..) | Expr::Extract(..) | Expr::Stub(..) => {
                unreachable!("not in vectorized kernels")
            }
        };
        debug_assert_eq!(
            v.len(),
            self.parts(s),
            "{:?} {s:?} wide {} half {:?}",
            self.f.exprs.get(e),
            self.wide,
            self.half
        );
        self.remember(e, v.clone(), start);
        v
    }

    /// Whether `e` is the float literal 2.
    /// `x / d` or `x % d` (`op`) of `u32` lanes where each register's lanes are `x0`,
    /// `x0 + 1`, ... and `d` is the same in every lane, all lanes active: lane 0's division
    /// (a zero divisor faults there, the first work-item the interpreter's division names),
    /// `q0 = x0 / d`, `r0 = x0 - q0 * d`; then lane `j`'s remainder `r0 + j` less `d` and
    /// its quotient `q0` plus one as long as the remainder is at least `d` (`LANES - 1` times
    /// at most, for `d = 1`): one scalar division a register instead of one a lane (two, with
    /// the remainder beside). Where a register's lanes wrap past `u32::MAX` (`x0 > u32::MAX
    /// - 3`), the general division lane by lane ([`Gen::vbinary`]).
    ///
    /// A division hoisted out of a loop ([`Gen::hoist_divisions`]) defers its zero test to
    /// the use, as [`Gen::vbinary`]'s: the lanes' zero mask is recorded and the division is
    /// by 1 meanwhile.
    fn consecutive_div(&mut self, op: BinaryOp, x: &[Value], y: &[Value]) -> Vec<Value> {
        let s = Scalar::U32;
        let x0s: Vec<Value> = x.iter().map(|&p| self.b.ins().extractlane(p, 0)).collect();
        // Hoisted: the divisors with every zero replaced by 1, for both paths below.
        let safe = self
            .nofault
            .is_some()
            .then(|| self.hoisted_divisors(op, s, y));
        let d = self.lane0_int(safe.as_deref().unwrap_or(y), s);
        let q0 = if safe.is_some() {
            self.b.ins().udiv(x0s[0], d)
        } else {
            let lane = self.lane_id(0);
            self.fault_lane = Some(lane);
            let q0 = self.binary(BinaryOp::Div, s, x0s[0], d);
            self.fault_lane = None;
            q0
        };
        let last = self.iconst(types::I32, (u32::MAX - (LANES - 1)) as i64);
        let mut ok = None;
        for &x0 in &x0s {
            let c = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, x0, last);
            ok = Some(match ok {
                None => c,
                Some(o) => self.b.ins().band(o, c),
            });
        }
        let ok = ok.expect("a register at least");
        let (fast, slow) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        let (merge, out) = self.merge_block(s);
        self.b.switch_to_block(fast);
        let dv = self.b.ins().splat(types::I32X4, d);
        let iota = self.iota_from(0);
        let mut v = Vec::with_capacity(x0s.len());
        for (p, &x0) in x0s.iter().enumerate() {
            let q = if p == 0 { q0 } else { self.b.ins().udiv(x0, d) };
            let qd = self.b.ins().imul(q, d);
            let r0 = self.b.ins().isub(x0, qd);
            let r0 = self.b.ins().splat(types::I32X4, r0);
            let mut r = self.b.ins().iadd(r0, iota);
            let mut qv = self.b.ins().splat(types::I32X4, q);
            for _ in 1..LANES {
                let ge = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, r, dv);
                let back = self.b.ins().band(dv, ge);
                r = self.b.ins().isub(r, back);
                qv = self.b.ins().isub(qv, ge);
            }
            v.push(if op == BinaryOp::Div { qv } else { r });
        }
        self.jump_with(merge, &v);
        self.b.switch_to_block(slow);
        // (Hoisted: by the safe divisors, none zero, its test already recorded above.)
        let saved = self.nofault.take();
        let v = self.vbinary(op, s, x, safe.as_deref().unwrap_or(y));
        self.nofault = saved;
        self.jump_with(merge, &v);
        self.b.switch_to_block(merge);
        out
    }

    /// Whether `e`'s lanes are `x0`, `x0 + 1`, ... in every lane, the inactive ones
    /// included ([`Gen::agree`]'s counterpart of [`consecutive`]): an id in dimension 0 plus
    /// or minus what [`Gen::agree`]s, or a `let` of one defined in this region.
    fn consecutive_here(&self, e: ExprId) -> bool {
        self.consecutive_walk(e, &Seen::default())
    }

    fn consecutive_walk(&self, e: ExprId, seen: &Seen) -> bool {
        let go = |x| self.consecutive_walk(x, seen);
        remembered(seen, e, || match self.f.exprs.get(e) {
            Expr::Builtin(Builtin::GlobalId(0) | Builtin::LocalId(0) | Builtin::LocalLinearId) => {
                true
            }
            Expr::Value(v) if self.defined.contains(v) => {
                self.counters.lets.get(v).is_some_and(|&x| go(x))
            }
            Expr::Binary(BinaryOp::Add, a, b) => {
                (go(*a) && self.agree(*b)) || (self.agree(*a) && go(*b))
            }
            Expr::Binary(BinaryOp::Sub, a, b) => go(*a) && self.agree(*b),
            _ => false,
        })
    }

    /// `k` where `e` is an integer literal `2^k` (positive).
    fn pow2(&self, e: ExprId) -> Option<u32> {
        let l = self.f.exprs.literal(e)?;
        let v = l.as_i128();
        (l.scalar.is_int() && v > 0 && (v as u128).is_power_of_two()).then(|| v.trailing_zeros())
    }

    /// `x op 2^k` for an integer multiplication, division or remainder of lane type `s`
    /// (`x`'s registers: 32-bit lanes, narrow integers sign- or zero-extended in them, or
    /// 64-bit lanes): `x << k` (wrapped to `s`'s width); unsigned `x >> k` and `x & (2^k -
    /// 1)`; signed, rounded towards zero as the division is, `q = (x + b) >> k` (arithmetic)
    /// with the bias `b = 2^k - 1` where `x` is negative, else 0, and `x - (q << k)`.
    fn vpow2(&mut self, op: BinaryOp, s: Scalar, x: Vec<Value>, k: u32) -> Vec<Value> {
        let k = k as i64;
        let bits = if s.size() == 8 { 64 } else { 32 };
        match op {
            BinaryOp::Mul => {
                let r = x.into_iter().map(|x| self.b.ins().ishl_imm(x, k)).collect();
                self.wrap(s, r)
            }
            BinaryOp::Div if k == 0 => x,
            BinaryOp::Rem if k == 0 => self.vzero(s),
            BinaryOp::Div if !s.is_signed() => {
                x.into_iter().map(|x| self.b.ins().ushr_imm(x, k)).collect()
            }
            BinaryOp::Rem if !s.is_signed() => {
                let ones = ((1u64 << k) - 1) as i64;
                let m = self.iconst(if bits == 64 { types::I64 } else { types::I32 }, ones);
                let ty = self.b.func.dfg.value_type(x[0]);
                let m = self.b.ins().splat(ty, m);
                x.into_iter().map(|x| self.b.ins().band(x, m)).collect()
            }
            _ => x
                .into_iter()
                .map(|x| {
                    let sign = self.b.ins().sshr_imm(x, bits - 1);
                    let bias = self.b.ins().ushr_imm(sign, bits - k);
                    let t = self.b.ins().iadd(x, bias);
                    let q = self.b.ins().sshr_imm(t, k);
                    if op == BinaryOp::Div {
                        q
                    } else {
                        let back = self.b.ins().ishl_imm(q, k);
                        self.b.ins().isub(x, back)
                    }
                })
                .collect(),
        }
    }

    fn two(&self, e: ExprId) -> bool {
        match self.f.exprs.get(e) {
            Expr::Literal(l) if l.scalar == Scalar::F32 => l.bits == 2.0f32.to_bits() as u64,
            Expr::Literal(l) if l.scalar == Scalar::F64 => l.bits == 2.0f64.to_bits(),
            _ => false,
        }
    }

    /// The lane mask of `cc` between the lanes of `x` and `y` (integers of any lane type).
    fn vicmp(&mut self, cc: IntCC, x: &[Value], y: &[Value]) -> Value {
        let r: Vec<Value> = x
            .iter()
            .zip(y)
            .map(|(&a, &b)| self.b.ins().icmp(cc, a, b))
            .collect();
        self.narrow(&r)
    }

    /// A built-in's lanes (eight: two registers, lanes 4 to 7 in the second).
    fn vbuiltin(&mut self, b: Builtin) -> Vec<Value> {
        let lane_base = match b {
            Builtin::LocalId(0) => Some(self.b.use_var(self.lid[0])),
            Builtin::LocalLinearId => Some(self.b.use_var(self.lane)),
            Builtin::GlobalId(0) => Some(self.builtin(b)),
            _ => None,
        };
        let n = self.parts(Scalar::U32);
        match lane_base {
            Some(x) => {
                let v = self.b.ins().splat(types::I32X4, x);
                (0..n as u32)
                    .map(|p| {
                        let io = self.iota_from(p * LANES);
                        self.b.ins().iadd(v, io)
                    })
                    .collect()
            }
            None => {
                let x = self.builtin(b);
                vec![self.b.ins().splat(types::I32X4, x); n]
            }
        }
    }

    fn vbinary(&mut self, op: BinaryOp, s: Scalar, x: &[Value], y: &[Value]) -> Vec<Value> {
        use BinaryOp::*;
        if op.is_comparison() && matches!(s, Scalar::I32 | Scalar::U32 | Scalar::F32) {
            if let (Some(a), Some(b)) = (self.splat_of(x, s), self.splat_of(y, s)) {
                // Splats compared: one scalar test, its mask splat (Cranelift lifts the
                // splats of arithmetic, not of comparisons): the escape loop's
                // `it < max_iter` with `it` an iteration count ([`trip_counters`]).
                let r = self.binary(op, s, a, b);
                return self.splat(r, Scalar::Bool);
            }
        }
        let direct: Option<Vec<Value>> = x
            .iter()
            .zip(y)
            .map(|(&a, &b)| direct_binary(&mut self.b, op, s, a, b))
            .collect();
        if let Some(v) = direct {
            // A comparison of 64-bit lanes gives 64-bit masks: narrowed to a lane mask.
            return if op.is_comparison() {
                vec![self.narrow(&v)]
            } else {
                self.wrap(s, v)
            };
        }
        let out = if op.is_comparison() { Scalar::Bool } else { s };
        let x = x.to_vec();
        match op {
            Rem if s.is_float() => self.per_lane(&[x, y.to_vec()], &[s, s], out, |g, v| {
                g.binary(op, s, v[0], v[1])
            }),
            Div | Rem => {
                let y: Vec<Value> = if self.nofault.is_some() {
                    self.hoisted_divisors(op, s, y)
                } else {
                    // Inactive lanes divide by 1: only an active lane's zero divisor is a fault.
                    let one = self.iconst(cl_ty(s), 1);
                    let one = self.splat(one, s);
                    let m = self.mask();
                    let ms = self.mask_parts(m, s);
                    ms.into_iter()
                        .zip(one.into_iter().zip(y))
                        .map(|(m, (o, &y))| self.b.ins().bitselect(m, y, o))
                        .collect()
                };
                let saved = self.nofault.take();
                let r = self.per_lane(&[x, y], &[s, s], out, |g, v| g.binary(op, s, v[0], v[1]));
                self.nofault = saved;
                r
            }
            // By an amount the lanes share (a literal, a splat): one vector shift, whose
            // amount Cranelift masks to the lane's bits as the IR masks it to the type's (the
            // same for 32- and 64-bit integers; narrower ones sit in wider lanes). A
            // histogram's `x >> 24` was four extracts, shifts and inserts.
            Shl | Shr if matches!(s.size(), 4 | 8) => {
                let amount = self.splat_of(y, s).or_else(|| {
                    // Masked here as the shift masks it (a constant in the type's range).
                    let bits = 8 * s.size() as i64;
                    let k = self.const_lanes(y, s)?;
                    Some(self.iconst(cl_ty(s), k & (bits - 1)))
                });
                match amount {
                    Some(k) => x
                        .iter()
                        .map(|&v| match op {
                            Shl => self.b.ins().ishl(v, k),
                            _ if s.is_signed() => self.b.ins().sshr(v, k),
                            _ => self.b.ins().ushr(v, k),
                        })
                        .collect(),
                    None => self.per_lane(&[x, y.to_vec()], &[s, s], out, |g, v| {
                        g.binary(op, s, v[0], v[1])
                    }),
                }
            }
            Shl | Shr => self.per_lane(&[x, y.to_vec()], &[s, s], out, |g, v| {
                g.binary(op, s, v[0], v[1])
            }),
            _ => unreachable!("{} has one instruction", op.symbol()),
        }
    }

    /// The scalar whose splat every register of `x` (lanes of `s`) is.
    fn splat_of(&self, x: &[Value], s: Scalar) -> Option<Value> {
        let first = *x.first()?;
        if x.iter().any(|&v| v != first) {
            return None;
        }
        self.splat_arg(first, cl_ty(s))
    }

    /// The value every lane of every register of `x` (lanes of `s`, 32 or 64 bits) holds,
    /// where they are one constant (`vconst`) with equal lanes.
    fn const_lanes(&self, x: &[Value], s: Scalar) -> Option<i64> {
        let mut value = None;
        for &v in x {
            let bytes = self.vconst_bytes(v)?;
            let size = s.size();
            let lane = |i: usize| {
                let mut w = [0u8; 8];
                w[..size].copy_from_slice(&bytes[i * size..(i + 1) * size]);
                i64::from_le_bytes(w)
            };
            let first = lane(0);
            if (1..bytes.len() / size).any(|i| lane(i) != first)
                || value.is_some_and(|f| f != first)
            {
                return None;
            }
            value = Some(first);
        }
        value
    }

    /// The bytes of the constant `v` is, where it is a `vconst`.
    fn vconst_bytes(&self, v: Value) -> Option<&[u8]> {
        let dfg = &self.b.func.dfg;
        let cl::ValueDef::Result(inst, 0) = dfg.value_def(v) else {
            return None;
        };
        match dfg.insts[inst] {
            cl::InstructionData::UnaryConst {
                opcode: cl::Opcode::Vconst,
                constant_handle,
            } => Some(dfg.constants.get(constant_handle).as_slice()),
            _ => None,
        }
    }

    /// The scalar (of type `ty`) that `v` is a `splat` of, where it is one.
    fn splat_arg(&self, v: Value, ty: cl::Type) -> Option<Value> {
        let dfg = &self.b.func.dfg;
        let cl::ValueDef::Result(inst, 0) = dfg.value_def(v) else {
            return None;
        };
        match dfg.insts[inst] {
            cl::InstructionData::Unary {
                opcode: cl::Opcode::Splat,
                arg,
            } if dfg.value_type(arg) == ty => Some(arg),
            _ => None,
        }
    }

    /// The divisors `y` of a division hoisted out of a loop ([`Gen::hoist_divisions`]): the
    /// lanes' zero test recorded for the use (`nofault`), every zero divisor replaced by 1
    /// meanwhile.
    fn hoisted_divisors(&mut self, op: BinaryOp, s: Scalar, y: &[Value]) -> Vec<Value> {
        let z = self.vzero(s);
        let zero = self.vicmp(IntCC::Equal, y, &z);
        self.nofault
            .as_mut()
            .expect("hoisting")
            .push((zero, op == BinaryOp::Div));
        let one = self.iconst(cl_ty(s), 1);
        let one = self.splat(one, s);
        let zs = self.mask_parts(zero, s);
        zs.into_iter()
            .zip(one.into_iter().zip(y))
            .map(|(z, (o, &y))| self.b.ins().bitselect(z, o, y))
            .collect()
    }

    fn vcast(&mut self, x: Vec<Value>, from: Scalar, to: Scalar) -> Vec<Value> {
        use Scalar::*;
        let x0 = x[0];
        match (from, to) {
            (a, b) if a == b => x,
            (I32, U32) | (U32, I32) | (I64, U64) | (U64, I64) => x,
            (F32 | F64, Bool) => {
                let z = self.vzero(from);
                let r: Vec<Value> = x
                    .iter()
                    .zip(z)
                    .map(|(&a, z)| self.b.ins().fcmp(FloatCC::NotEqual, a, z))
                    .collect();
                vec![self.narrow(&r)]
            }
            (_, Bool) => {
                let z = self.vzero(from);
                vec![self.vicmp(IntCC::NotEqual, &x, &z)]
            }
            (Bool, I32 | U32) => {
                let one = self.splat_i32(1);
                let ms = self.mask_parts(x0, to);
                ms.into_iter().map(|m| self.b.ins().band(m, one)).collect()
            }
            (Bool, I64 | U64) => {
                let one = self.splat_i32(1);
                let i = self.b.ins().band(x0, one);
                vec![self.b.ins().uwiden_low(i), self.b.ins().uwiden_high(i)]
            }
            (Bool, F32) => {
                let one = self.splat_i32(1);
                let ms = self.mask_parts(x0, I32);
                ms.into_iter()
                    .map(|m| {
                        let i = self.b.ins().band(m, one);
                        self.b.ins().fcvt_from_sint(types::F32X4, i)
                    })
                    .collect()
            }
            (I32, F32) => x
                .iter()
                .map(|&p| self.b.ins().fcvt_from_sint(types::F32X4, p))
                .collect(),
            // Cranelift's sequence (the two 16-bit halves converted apart, one rounding in
            // their sum) rounds as the scalar conversion does.
            (U32, F32) => x
                .iter()
                .map(|&p| self.b.ins().fcvt_from_uint(types::F32X4, p))
                .collect(),
            (F32, I32) => x
                .iter()
                .map(|&p| self.b.ins().fcvt_to_sint_sat(types::I32X4, p))
                .collect(),
            (I32, I64 | U64) => vec![self.b.ins().swiden_low(x0), self.b.ins().swiden_high(x0)],
            (U32, I64 | U64) => vec![self.b.ins().uwiden_low(x0), self.b.ins().uwiden_high(x0)],
            (I64 | U64, I32 | U32) => vec![self.narrow(&x)],
            (a, b) if a.is_int() && b.is_int() && (narrow_int(a) || narrow_int(b)) => {
                // An 8- or 16-bit lane is already extended as the scalar code extends it.
                if b.size() == 8 {
                    if a.is_signed() {
                        vec![self.b.ins().swiden_low(x0), self.b.ins().swiden_high(x0)]
                    } else {
                        vec![self.b.ins().uwiden_low(x0), self.b.ins().uwiden_high(x0)]
                    }
                } else {
                    let l = self.narrow(&x);
                    self.wrap(b, vec![l])
                }
            }
            (Bool, b) if narrow_int(b) => {
                let one = self.splat_i32(1);
                vec![self.b.ins().band(x0, one)]
            }
            (F32, F64) => {
                let h = self.high_down(x0);
                vec![
                    self.b.ins().fvpromote_low(x0),
                    self.b.ins().fvpromote_low(h),
                ]
            }
            (F64, F32) => {
                let (a, b) = (self.b.ins().fvdemote(x0), self.b.ins().fvdemote(x[1]));
                const PAIR: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
                let r = self.shuffle(a, b, PAIR);
                vec![self.b.ins().bitcast(types::F32X4, lanes_flags(), r)]
            }
            (I32, F64) => {
                let h = self.high_down(x0);
                // `cvtdq2pd`: the two low lanes of each.
                [x0, h]
                    .into_iter()
                    .map(|x| {
                        let w = self.b.ins().swiden_low(x);
                        self.b.ins().fcvt_from_sint(types::F64X2, w)
                    })
                    .collect()
            }
            _ => self.per_lane(&[x], &[from], to, |g, v| g.cast(v[0], from, to)),
        }
    }

    fn vmath(&mut self, m: MathFn, s: Scalar, xs: &[Vec<Value>]) -> Vec<Value> {
        let direct = match m {
            MathFn::Sqrt | MathFn::Floor | MathFn::Ceil | MathFn::Trunc | MathFn::Mix => {
                s.is_float()
            }
            MathFn::Rsqrt => true,
            MathFn::Abs => true,
            MathFn::Min | MathFn::Max => !s.is_float(),
            // One fused multiply-add per register where the machine has the instruction
            // (correctly rounded, as the scalar code's): SGEMM's inner step.
            MathFn::Fma => s.is_float() && vector_fma(),
            _ => false,
        };
        if !direct {
            let out = m.result_scalar(s);
            let ss: Vec<Scalar> = (0..xs.len()).map(|i| m.arg_scalar(i, s)).collect();
            return self.per_lane(xs, &ss, out, |g, v| {
                let args: Vec<Vec<Value>> = v.iter().map(|&a| vec![a]).collect();
                g.math(m, s, 1, &args)[0]
            });
        }
        let one = if s.is_float() {
            let bits = match s {
                Scalar::F32 => 1f32.to_bits() as u64,
                _ => 1f64.to_bits(),
            };
            let one = self.lit(Literal::from_bits(s, bits));
            self.splat(one, s)
        } else {
            Vec::new()
        };
        (0..self.parts(s))
            .map(|p| {
                let x = xs[0][p];
                let y = |k: usize| xs[k][p];
                let ins = self.b.ins();
                match m {
                    MathFn::Sqrt => ins.sqrt(x),
                    MathFn::Rsqrt => {
                        let r = ins.sqrt(x);
                        self.b.ins().fdiv(one[p], r)
                    }
                    MathFn::Abs if s.is_float() => ins.fabs(x),
                    MathFn::Abs if s.is_signed() => {
                        let a = ins.iabs(x);
                        self.wrap(s, vec![a])[0]
                    }
                    MathFn::Abs => x,
                    MathFn::Floor => ins.floor(x),
                    MathFn::Ceil => ins.ceil(x),
                    MathFn::Trunc => ins.trunc(x),
                    MathFn::Fma => ins.fma(x, y(1), y(2)),
                    MathFn::Mix => {
                        let d = ins.fsub(y(1), x);
                        let q = self.b.ins().fmul(d, y(2));
                        self.b.ins().fadd(x, q)
                    }
                    MathFn::Min if s.is_signed() => ins.smin(x, y(1)),
                    MathFn::Min => ins.umin(x, y(1)),
                    MathFn::Max if s.is_signed() => ins.smax(x, y(1)),
                    MathFn::Max => ins.umax(x, y(1)),
                    _ => unreachable!("computed lane by lane"),
                }
            })
            .collect()
    }
}

//! Launching a compiled kernel, and the group level: what runs between regions.
//!
//! [`JitProgram::launch`] spreads the work-groups over rayon's thread pool, one [`Worker`] per
//! thread. A worker's buffers (records, local memory, masks, and what compiled code writes
//! through) are its thread's [`Scratch`], kept between launches, so a repeated launch
//! allocates nothing here. For each work-group the worker calls the regions' functions and runs what sits
//! between them (barriers, collectives, and the `if`s and loops that contain them) under the
//! same execution masks as the interpreter, reading and writing the work-items' records. A
//! work-group reduction or scan of a scalar (`group_reduce_add`, `_min`, `_max`: a
//! `gather_add`'s first step; `group_scan_*`, inclusive or exclusive: a look-back scan's
//! tile) is folded straight from the records in local-id order and its results stored four
//! work-items at a time ([`Worker::fold`]); the other collectives go through
//! [`semantics::collective`] on columns copied out of the records and back.
//!
//! A region that faults returns 1 after writing its [`Fault`] (the site, the
//! work-item, the index and the length), from which the worker builds the interpreter's
//! error. Masks are recomputed only after a node that a work-item can leave (a `return`,
//! `break` or `continue` inside it); while every work-item of the group is in the mask
//! (known from the start of the group, or of a `for` with the same bounds in every
//! work-item), nothing scans it ([`Worker::exec_block_known`]: no any-set test before each
//! node, no barrier's divergence test). A group-level `loop` that polls a buffer atomically and
//! keeps turning (a work-group waiting for another's status word) yields its thread now and
//! then, so that a descheduled
//! thread running the work-group it waits for gets a core back sooner.

#![allow(clippy::needless_range_loop)] // lane loops index several per-work-item arrays

use super::plan::{head_byte, Bound, Guard, Node, Slot, EXITED, LIMIT, QUAD, RETURNED};
use super::{Env, Fault, JitProgram, MemArg, RegionFn, Site};
use crate::cpu::cpu_mem;
use crate::cpu::semantics::{self, collective};
use crate::error::{Error, Result, WorkItem};
use crate::ir::eval::{with_int, with_scalar, Column, Num};
use crate::ir::{GroupOp, GroupScope, Scalar};
use crate::runtime::{ArgValue, NdRange};
use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};

thread_local! {
    /// This thread's worker buffers, between launches ([`Scratch`]).
    static SCRATCH: Cell<Option<Scratch>> = const { Cell::new(None) };
    /// The buffer and scalar arguments a launch from this thread passes to compiled code,
    /// kept between launches.
    static LAUNCH_ARGS: Cell<(Vec<MemArg>, Vec<u64>)> = const { Cell::new((Vec::new(), Vec::new())) };
}

/// What the group level's steps return: the error boxed, so that a step's result is one
/// word (returned in a register). Unboxed, each region call's `Result<(), Error>` went
/// through the stack, written by parts and read whole: a failed store forwarding after each
/// call (`perf annotate`, issue 31).
type Flow = std::result::Result<(), Box<Error>>;

impl JitProgram {
    /// Runs the program over `range` with resolved arguments; stops between work-groups (and
    /// in every `loop` iteration) with [`Error::Cancelled`] once `cancel` is set.
    pub(crate) fn launch(
        &self,
        range: NdRange,
        args: &[ArgValue],
        cancel: &AtomicBool,
    ) -> Result<()> {
        if range.is_empty() {
            return Ok(());
        }
        let local = range.local_size().expect("resolved range");
        let groups = range.groups();
        let total = range.group_count();
        // Reused from this thread's last launch (a launch from inside a launch, by a stub's
        // body, finds them taken and makes its own).
        let (mut bufs, mut scalars) = LAUNCH_ARGS.take();
        bufs.clear();
        bufs.extend(args.iter().map(|a| match a {
            ArgValue::Buffer { mem, len, .. } => MemArg {
                base: cpu_mem(mem).base() as *mut u8,
                len: *len,
            },
            _ => MemArg {
                base: std::ptr::null_mut(),
                len: 0,
            },
        }));
        scalars.clear();
        scalars.extend(args.iter().map(|a| match a {
            ArgValue::Scalar(l) => l.bits,
            ArgValue::LocalLen(n) => *n as u64,
            ArgValue::Buffer { .. } => 0,
        }));
        let (variant, plan) = self.variant(local)?;
        if variant.regions.is_empty() {
            // A body the optimizer emptied (or an empty kernel): nothing runs.
            return Ok(());
        }
        let stop = crate::cpu::Stop::new();
        let work_items = (range.group_count() * local.iter().product::<usize>()) as u64;
        let shared = Shared {
            fns: &variant.regions,
            sites: &variant.sites,
            plan,
            private: super::privatize::choose(&plan.private, args, work_items),
            bufs: &bufs,
            scalars: &scalars,
            args,
            local,
            groups,
            stop: &stop,
            cancel,
        };
        let r = crate::cpu::run_groups_in(
            group_order(plan, groups),
            total,
            &self.decls.name,
            cancel,
            &stop,
            || Ok(Worker::new(self, &shared)),
            |w, g| w.run_group(g),
        );
        LAUNCH_ARGS.set((bufs, scalars));
        r
    }

    fn cancelled(&self) -> Error {
        Error::Cancelled {
            kernel: self.decls.name.clone(),
        }
    }
}

/// Rows of work-groups per band of [`group_order`].
const BAND_ROWS: usize = 8;

/// The order a launch's work-groups run in: bands of [`BAND_ROWS`] rows
/// ([`GroupOrder::Bands`](crate::cpu::GroupOrder::Bands)) for a 2-D grid of more than one row whose kernel walks tiles in
/// a group-level `for` loop (a loop with barriers: a tiled matrix product's loop over the
/// tiles of `k`), index order otherwise. Measured (`strata bench --device cpu --filter
/// matmul`, 1024^2 in 16 x 16 tiles, machine loaded, alternating runs of one build,
/// 2026-11-28): 606–808 ms in bands of 8 against 950–1,114 ms in index order; the same bands
/// made the fused ROF stencils (2-D, no loop) slower, 1,050–1,745 ms against 735–1,391:
/// a stencil streams its rows, which index order reads in sequence.
fn group_order(plan: &super::plan::Plan, groups: [usize; 3]) -> crate::cpu::GroupOrder {
    let tiles = plan
        .tree
        .iter()
        .any(|n| matches!(n, super::plan::Node::For { .. }));
    if tiles && groups[1] > 1 && groups[2] == 1 {
        crate::cpu::GroupOrder::Bands {
            groups,
            rows: BAND_ROWS,
        }
    } else {
        crate::cpu::GroupOrder::Linear
    }
}

/// What every worker of a launch reads.
struct Shared<'a> {
    /// The regions this launch runs ([`JitProgram::variant`]) and their fault sites.
    fns: &'a [RegionFn],
    sites: &'a [Site],
    /// The regions and records of the variant ([`JitProgram::variant`]: the vector variant
    /// of a kernel with vector types has its own).
    plan: &'a super::plan::Plan,
    /// The buffer parameters (a bit each) every worker keeps a copy of
    /// ([`super::privatize::choose`] of the plan's candidates).
    private: u32,
    bufs: &'a [MemArg],
    scalars: &'a [u64],
    args: &'a [ArgValue],
    local: [usize; 3],
    groups: [usize; 3],
    stop: &'a std::sync::Arc<crate::cpu::Stop>,
    cancel: &'a AtomicBool,
}

// SAFETY: the buffer pointers point into `CpuMem`s kept alive by the launch command for the
// whole launch; compiled code accesses them with plain word loads and stores, as the
// interpreter's relaxed atomics do on x86-64 and AArch64 (and a worker's copies of buffers
// kept per thread, `Shared::private`, with plain read-modify-writes: only it uses them).
unsafe impl Sync for Shared<'_> {}

/// Group-level loop state: which work-items left the loop or ended the iteration.
struct Frame {
    /// Record offsets of the loop's `broken` and `continued` flags.
    flags: (u32, u32),
    /// Whether a work-item may have set one of them since the loop started (a region said
    /// so, `plan::EXITED`, or the `for` node itself): until then neither is read or cleared.
    dirty: bool,
}

/// One thread's state: the records, local memory and masks of the work-group it runs (its
/// thread's [`Scratch`], which the worker's fields reach through `Deref`).
struct Worker<'a> {
    p: &'a JitProgram,
    s: &'a Shared<'a>,
    lanes: usize,
    /// Whether each work-group starts from zeroed records: not for a kernel of one region
    /// whose privates all live in registers, whose code never reads its records (a streaming
    /// kernel's work-groups then skip a memset as large as their records).
    zero_records: bool,
    /// The scratch's frames, taken out of it (pushed while `p` is borrowed).
    frames: Vec<Frame>,
    /// Whether a work-item of this group may have returned (`plan::RETURNED`).
    returned: bool,
    /// Given back to the thread when the worker is dropped.
    sc: ManuallyDrop<Scratch>,
}

/// A worker's buffers, sized for a launch by [`Worker::new`] and kept by its thread between
/// launches (of any program: nothing in them outlives a launch but their capacity).
struct Scratch {
    records: Vec<u64>,
    /// The buffer table compiled code reads where the launch keeps buffers per thread
    /// ([`Shared::private`]): the launch's, with those buffers' entries on this worker's
    /// `copies` (one per candidate of the plan, in its order; empty where not kept).
    bufs: Vec<MemArg>,
    copies: Vec<Vec<u64>>,
    locals: Vec<Vec<u64>>,
    local_args: Vec<MemArg>,
    fault: Box<Fault>,
    panic: Box<Option<String>>,
    env: Box<Env>,
    frames: Vec<Frame>,
    masks: Vec<Vec<u8>>,
    all: Vec<u8>,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            records: Vec::new(),
            bufs: Vec::new(),
            copies: Vec::new(),
            locals: Vec::new(),
            local_args: Vec::new(),
            fault: Box::default(),
            panic: Box::new(None),
            env: Box::new(Env {
                bufs: std::ptr::null(),
                scalars: std::ptr::null(),
                locals: std::ptr::null(),
                records: std::ptr::null_mut(),
                local: [0; 3],
                group: [0; 3],
                groups: [0; 3],
                private: 0,
                fault: std::ptr::null_mut(),
                stop: std::ptr::null(),
                cancel: std::ptr::null(),
                program: std::ptr::null(),
                panic: std::ptr::null_mut(),
                index: 0,
            }),
            frames: Vec::new(),
            masks: Vec::new(),
            all: Vec::new(),
        }
    }
}

impl std::ops::Deref for Worker<'_> {
    type Target = Scratch;
    fn deref(&self) -> &Scratch {
        &self.sc
    }
}

impl std::ops::DerefMut for Worker<'_> {
    fn deref_mut(&mut self) -> &mut Scratch {
        &mut self.sc
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        // This worker's copies of buffers kept per thread go into the buffers.
        if self.s.private != 0 {
            for (c, copy) in self.s.plan.private.iter().zip(&self.sc.copies) {
                let real = self.s.bufs[c.param.index()];
                if self.s.private & (1 << c.param.index()) != 0 {
                    // SAFETY: the launch's buffer (alive until the launch returns, which waits
                    // for its workers), updated only atomically meanwhile: by other workers'
                    // merges here, never by compiled code, which updates the copies.
                    unsafe { c.merge(copy, real.base, real.len) };
                }
            }
        }
        // SAFETY: `sc` is not used again.
        let mut sc = unsafe { ManuallyDrop::take(&mut self.sc) };
        sc.frames = std::mem::take(&mut self.frames);
        SCRATCH.set(Some(sc));
    }
}

/// Iterations of a group-level `loop` that polls a buffer ([`super::plan::polls_buffers`])
/// in one work-group before its thread starts yielding
/// between iterations ([`Worker::exec`]'s `Node::Loop`).
const SPIN_TURNS: u32 = 64;

/// Past [`SPIN_TURNS`], a group-level `loop` yields its thread once every this many
/// iterations.
const YIELD_EVERY: u32 = 4;

/// Whether any work-item of `mask` is active: eight mask bytes at a time (the group level
/// tests its masks before every node, and work-groups of the pattern kernels have 1024
/// work-items).
fn any_set(mask: &[u8]) -> bool {
    let (words, rest) = mask.split_at(mask.len() / 8 * 8);
    words
        .chunks_exact(8)
        .any(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes")) != 0)
        || rest.iter().any(|&m| m != 0)
}

/// Whether every work-item of `mask` is active, eight mask bytes at a time (a word has a zero
/// byte where `(w - 0x01..01) & !w & 0x80..80` is not zero).
fn all_set(mask: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let (words, rest) = mask.split_at(mask.len() / 8 * 8);
    words.chunks_exact(8).all(|w| {
        let w = u64::from_ne_bytes(w.try_into().expect("8 bytes"));
        w.wrapping_sub(ONES) & !w & (ONES << 7) == 0
    }) && rest.iter().all(|&m| m != 0)
}

impl<'a> Worker<'a> {
    /// A worker for a launch, on its thread's [`Scratch`] (a new one if the thread has none
    /// free: its first launch, or a launch from inside a launch).
    fn new(p: &'a JitProgram, s: &'a Shared<'a>) -> Worker<'a> {
        let lanes: usize = s.local.iter().product();
        let mut sc = SCRATCH.take().unwrap_or_else(Scratch::new);
        let count = p.decls.locals.len();
        sc.locals.resize_with(count, Vec::new);
        sc.local_args.clear();
        for ((i, (elem, _, _)), v) in p.decls.locals.iter_enumerated().zip(&mut sc.locals) {
            let n = p.decls.local_len(i, s.args);
            v.clear();
            v.resize((n as usize * elem.size()).div_ceil(8).max(1), 0);
            sc.local_args.push(MemArg {
                base: v.as_mut_ptr() as *mut u8,
                len: n,
            });
        }
        // Whole blocks of four records (`super::plan`), after the shared counters' words and
        // the `plan::HEAD` word (a guarded region's limit, the exit markers).
        let blocks = lanes.div_ceil(QUAD) * QUAD;
        let head = s.plan.head() / 8;
        sc.records.clear();
        sc.records
            .resize(head + (blocks * s.plan.record).div_ceil(8).max(1), 0);
        *sc.fault = Fault::default();
        *sc.panic = None;
        // Buffers kept per thread: this worker's copies, filled with the operation's identity,
        // in its own table.
        sc.bufs.clear();
        let bufs = if s.private == 0 {
            s.bufs.as_ptr()
        } else {
            let Scratch { bufs, copies, .. } = &mut sc;
            bufs.extend_from_slice(s.bufs);
            copies.resize_with(s.plan.private.len(), Vec::new);
            for (c, copy) in s.plan.private.iter().zip(copies.iter_mut()) {
                let entry = &mut bufs[c.param.index()];
                if s.private & (1 << c.param.index()) != 0 {
                    c.fill(copy, entry.len);
                    entry.base = copy.as_mut_ptr() as *mut u8;
                }
            }
            bufs.as_ptr()
        };
        *sc.env = Env {
            bufs,
            scalars: s.scalars.as_ptr(),
            locals: sc.local_args.as_ptr(),
            // SAFETY: the records hold at least two words.
            records: unsafe { sc.records.as_mut_ptr().add(head) } as *mut u8,
            local: s.local.map(|x| x as u32),
            group: [0; 3],
            groups: s.groups.map(|x| x as u32),
            private: s.private,
            fault: &mut *sc.fault,
            stop: std::sync::Arc::as_ptr(s.stop),
            cancel: s.cancel,
            program: p,
            panic: &mut *sc.panic,
            index: 0,
        };
        sc.frames.clear();
        // Masks are one byte per work-item: those of another work-group size go.
        sc.masks.retain(|m| m.len() == lanes);
        sc.all.clear();
        sc.all.resize(lanes, 1);
        Worker {
            p,
            s,
            lanes,
            zero_records: !(s.plan.simple && s.plan.privates.iter().all(Option::is_none)),
            frames: std::mem::take(&mut sc.frames),
            returned: false,
            sc: ManuallyDrop::new(sc),
        }
    }

    fn item(&self, l: usize) -> WorkItem {
        crate::cpu::work_item(l, self.s.local, self.env.group)
    }

    fn fault(&self, l: usize, message: impl Into<String>) -> Error {
        Error::KernelFault {
            kernel: self.p.decls.name.clone(),
            message: message.into(),
            item: self.item(l),
        }
    }

    /// The error a region reported.
    fn region_error(&mut self) -> Error {
        let f = *self.fault;
        let l = f.lane as usize;
        match &self.s.sites[f.site as usize] {
            Site::OutOfBounds { mem, scalar, at } => {
                let index = if *scalar == Scalar::U64 && f.index < 0 {
                    i64::MAX
                } else {
                    f.index
                };
                Error::OutOfBounds {
                    kernel: self.p.decls.name.clone(),
                    memory: self.p.decls.mem_what(*mem),
                    index,
                    len: f.len,
                    item: self.item(l),
                    at: *at,
                    coords: None,
                }
            }
            Site::DivByZero(div) => self.fault(l, semantics::div_by_zero(*div)),
            Site::ZeroStep => self.fault(l, semantics::ZERO_STEP),
            Site::StubPanic(name) => {
                // The interpreter lets the panic reach the queue, which reports it as
                // `Panicked`; the same error here, with the work-item.
                let why = self.panic.take().unwrap_or_default();
                Error::Panicked {
                    backend: "cpu",
                    message: format!(
                        "{why} (in the CPU body of stub function `{name}`, kernel `{}`, {})",
                        self.p.decls.name,
                        self.item(l)
                    ),
                }
            }
            Site::Stopped => self.p.cancelled(),
        }
    }

    fn call(&mut self, region: usize, mask: &[u8]) -> Flow {
        self.call_fn(self.s.fns[region], mask)
    }

    fn call_fn(&mut self, f: RegionFn, mask: &[u8]) -> Flow {
        // SAFETY: the region was compiled for this program; `env` points at this worker's
        // records, local memory and the launch's buffers, all sized for this launch.
        let status = unsafe { f(&*self.env, mask.as_ptr()) };
        // The exit markers (`plan::EXITED`, `plan::RETURNED`) in the word before the records.
        let (exited, returned) = (head_byte(EXITED), head_byte(RETURNED));
        let w = self.head_word();
        let mut head = self.records[w].to_ne_bytes();
        if head[exited] | head[returned] != 0 {
            if head[exited] != 0 {
                self.frames.iter_mut().for_each(|f| f.dirty = true);
            }
            self.returned |= head[returned] != 0;
            (head[exited], head[returned]) = (0, 0);
            self.records[w] = u64::from_ne_bytes(head);
        }
        if status == 0 {
            Ok(())
        } else {
            Err(Box::new(self.region_error()))
        }
    }

    fn run_group(&mut self, g: usize) -> Result<()> {
        self.env.group = semantics::group_id(g, self.s.groups);
        self.env.index = g;
        self.returned = false;
        if self.zero_records {
            self.records.fill(0);
        }
        for l in &mut self.locals {
            l.fill(0);
        }
        let all = std::mem::take(&mut self.all);
        let r = if self.s.plan.simple {
            self.call(0, &all)
        } else {
            let tree = &self.s.plan.tree;
            self.exec_block_known(tree, &all, true)
        };
        self.all = all;
        r.map_err(|e| *e)
    }

    /// Where work-item `l`'s scalar of `size` bytes at record offset `off` lies (records are
    /// kept in blocks of four work-items, [`super::plan`]).
    fn rec_index(&self, l: usize, off: u32, size: usize) -> usize {
        // After the shared counters' words and the guard limit's word.
        self.s.plan.head()
            + (l / QUAD) * QUAD * self.s.plan.record
            + QUAD * off as usize
            + (l % QUAD) * size
    }

    /// The index in `records` of the `plan::HEAD` word (just before the records).
    fn head_word(&self) -> usize {
        self.s.plan.head() / 8 - 1
    }

    /// Writes a shared counter's word ([`super::plan::Plan::shared`], `at` bytes from the
    /// records): the counter's bytes (at most eight, in memory order) first, where region
    /// code loads the counter's type.
    fn set_shared(&mut self, at: i32, bytes: &[u8]) {
        let w = (self.s.plan.head() as i32 + at) as usize / 8;
        let mut word = [0u8; 8];
        word[..bytes.len()].copy_from_slice(bytes);
        self.records[w] = u64::from_ne_bytes(word);
    }

    fn rec(&self, l: usize, off: u32, size: usize) -> *const u8 {
        let i = self.rec_index(l, off, size);
        // SAFETY (of callers' reads): `l < lanes` and `off` lies inside the record.
        unsafe { (self.records.as_ptr() as *const u8).add(i) }
    }

    fn rec_mut(&mut self, l: usize, off: u32, size: usize) -> *mut u8 {
        let i = self.rec_index(l, off, size);
        unsafe { (self.records.as_mut_ptr() as *mut u8).add(i) }
    }

    fn flag(&self, l: usize, off: u32) -> bool {
        // SAFETY: a flag byte of lane `l`'s record.
        unsafe { *self.rec(l, off, 1) != 0 }
    }

    fn take_mask(&mut self) -> Vec<u8> {
        self.masks.pop().unwrap_or_else(|| vec![0; self.lanes])
    }

    /// Clears in `mask` the work-items that returned, or left (or ended the iteration of) an
    /// enclosing group-level loop.
    fn keep_alive(&self, mask: &mut [u8]) {
        if !self.returned && !self.frames.iter().any(|f| f.dirty) {
            return;
        }
        let plan = &self.s.plan;
        // A block's four flag bytes of one flag lie side by side (`super::plan`): one word
        // per flag and block, its byte `k` the flag of the block's work-item `k`.
        let word = |l: usize, off: u32| {
            // SAFETY: the flag bytes of the four work-items of `l`'s block (records are whole
            // blocks, `Worker::new`).
            u32::from_ne_bytes(unsafe {
                std::ptr::read_unaligned(self.rec(l, off, 1) as *const [u8; QUAD])
            })
        };
        const LOW: u32 = 0x0101_0101;
        for (q, m) in mask.chunks_mut(QUAD).enumerate() {
            let l = q * QUAD;
            // The mask bytes of the block as a word, the last block's missing ones 0.
            let keep = match <&[u8; QUAD]>::try_from(&*m) {
                Ok(four) => u32::from_ne_bytes(*four),
                Err(_) => {
                    let mut bytes = [0u8; QUAD];
                    bytes[..m.len()].copy_from_slice(m);
                    u32::from_ne_bytes(bytes)
                }
            };
            if keep == 0 {
                continue;
            }
            let mut gone = word(l, plan.returned);
            for f in &self.frames {
                let (b, c) = f.flags;
                gone |= word(l, b) | word(l, c);
            }
            if gone != 0 {
                // 0xff in each byte where a flag byte is not zero (its low seven bits carried
                // into the high bit, or the high bit itself), 0 elsewhere.
                let high = (((gone & !(LOW << 7)) + !(LOW << 7)) | gone) & (LOW << 7);
                let set = (high >> 7) * 0xff;
                let left = (keep & !set).to_ne_bytes();
                match <&mut [u8; QUAD]>::try_from(&mut *m) {
                    Ok(four) => *four = left,
                    Err(_) => m.copy_from_slice(&left[..m.len()]),
                }
            }
        }
    }

    fn exec_block(&mut self, nodes: &'a [Node], entry: &[u8]) -> Flow {
        self.exec_block_known(nodes, entry, all_set(entry))
    }

    /// [`Self::exec_block`] where the caller knows whether every work-item of the group is in
    /// `entry` (`full`): then, until a node may take work-items out, nothing scans the mask
    /// (the `any_set` before each node, a barrier's `check_uniform`: a 16 x 16 group's
    /// 256 mask bytes, four times per tile of a tiled product, issue 31).
    fn exec_block_known(&mut self, nodes: &'a [Node], entry: &[u8], mut full: bool) -> Flow {
        let mut mask = self.take_mask();
        mask.copy_from_slice(entry);
        let mut r = Ok(());
        for n in nodes {
            if !full && !any_set(&mask) {
                break;
            }
            r = self.exec(n, &mask, full);
            if r.is_err() {
                break;
            }
            if self.s.plan.may_exit(n) {
                self.keep_alive(&mut mask);
                full = full && all_set(&mask);
            }
        }
        self.masks.push(mask);
        r
    }

    fn check_uniform(&self, mask: &[u8], what: &str) -> Flow {
        if all_set(mask) {
            return Ok(());
        }
        let reached = mask.iter().filter(|&&m| m != 0).count();
        let name = &self.p.decls.name;
        semantics::check_uniform(name, what, reached, self.lanes, self.env.group).map_err(Box::new)
    }

    /// The column (component-major, as the interpreter keeps it) of a record slot.
    fn column(&self, s: Slot) -> Column {
        let n = self.lanes;
        let size = s.ty.scalar.size();
        let mut c = Column::zeroed(n * s.ty.size());
        let out = c.bytes_mut();
        for k in 0..s.ty.width as usize {
            let off = s.off + (k * size) as u32;
            // A block's four scalars of one component lie side by side (`super::plan`): one
            // copy per block (of the lanes the group has, in its last block).
            for l in (0..n).step_by(QUAD) {
                let lanes = QUAD.min(n - l);
                // SAFETY: component `k` of the slot in the records of lanes `l..l + lanes`,
                // which follow each other in `l`'s block.
                let src =
                    unsafe { std::slice::from_raw_parts(self.rec(l, off, size), lanes * size) };
                let to = (k * n + l) * size;
                out[to..to + lanes * size].copy_from_slice(src);
            }
        }
        c
    }

    fn set_column(&mut self, s: Slot, c: &Column, mask: &[u8]) {
        let n = self.lanes;
        let size = s.ty.scalar.size();
        for k in 0..s.ty.width as usize {
            let off = s.off + (k * size) as u32;
            for l in (0..n).step_by(QUAD) {
                let lanes = QUAD.min(n - l);
                let from = &c.bytes()[(k * n + l) * size..(k * n + l + lanes) * size];
                if mask[l..l + lanes].iter().all(|&m| m != 0) {
                    // SAFETY: component `k` of the slot in the records of lanes
                    // `l..l + lanes`, side by side in `l`'s block.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            from.as_ptr(),
                            self.rec_mut(l, off, size),
                            lanes * size,
                        )
                    };
                    continue;
                }
                for j in (0..lanes).filter(|&j| mask[l + j] != 0) {
                    // SAFETY: component `k` of the slot in lane `l + j`'s record.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            from[j * size..].as_ptr(),
                            self.rec_mut(l + j, off, size),
                            size,
                        )
                    };
                }
            }
        }
    }

    /// A work-group reduction or scan of a scalar (`group_reduce_add`, `_min`, `_max`, the
    /// inclusive and exclusive `group_scan_*`; every work-item reached it,
    /// [`Self::check_uniform`]) folded straight from the records, in local-id order with the
    /// interpreter's operation ([`semantics::fold_op`]: the same bits), its results stored
    /// into the work-items' `value` slots four at a time: no columns copied out and back as
    /// [`semantics::collective`] takes them (issue 31: with them, 14 instructions a work-item
    /// at the group level, and an allocation per collective).
    fn fold(&mut self, op: GroupOp, arg: Slot, value: Slot) {
        let n = self.lanes;
        let stride = QUAD * self.s.plan.record;
        /// The slot's scalars of the `n` work-items (blocks `stride` bytes apart from `p`)
        /// folded with `f` from `acc`, in local-id order: `f` inlined (through
        /// [`semantics::fold_op`]'s pointer, a call per work-item).
        fn reduce<T: Num>(
            p: *const u8,
            n: usize,
            stride: usize,
            mut acc: T,
            f: impl Fn(T, T) -> T,
        ) -> T {
            for l in (0..n).step_by(QUAD) {
                // SAFETY: the slot's scalars of the work-items of `l`'s block, side by side,
                // `stride` bytes after the block before (records are whole blocks).
                let four = unsafe {
                    std::ptr::read_unaligned(p.add(l / QUAD * stride) as *const [T; QUAD])
                };
                for &x in &four[..QUAD.min(n - l)] {
                    acc = f(acc, x);
                }
            }
            acc
        }
        /// The scan of the slot's scalars at `src` into the slots at `dst` (both as in
        /// `reduce`), inclusive or `exclusive`, four work-items read and written at a time
        /// (the last block's slots past the group's work-items get what the fold has there,
        /// unused).
        fn scan<T: Num>(
            src: *const u8,
            dst: *mut u8,
            n: usize,
            stride: usize,
            exclusive: bool,
            mut acc: T,
            f: impl Fn(T, T) -> T,
        ) {
            for l in (0..n).step_by(QUAD) {
                let at = l / QUAD * stride;
                // SAFETY: as in `reduce`; `dst` is another slot of the same records (read
                // before written: the same slot is not a problem either).
                let four = unsafe { std::ptr::read_unaligned(src.add(at) as *const [T; QUAD]) };
                let mut out = [acc; QUAD];
                for j in 0..QUAD.min(n - l) {
                    if exclusive {
                        out[j] = acc;
                        acc = f(acc, four[j]);
                    } else {
                        acc = f(acc, four[j]);
                        out[j] = acc;
                    }
                }
                // SAFETY: the value slots of `l`'s block.
                unsafe { std::ptr::write_unaligned(dst.add(at) as *mut [T; QUAD], out) };
            }
        }
        with_scalar!(arg.ty.scalar, T => {
            let size = std::mem::size_of::<T>();
            // The interpreter's identity and operation.
            let (init, _) = semantics::fold_op::<T>(op);
            let p = self.rec(0, arg.off, size);
            if op.is_reduce() {
                let acc = match op {
                    GroupOp::ReduceAdd => reduce(p, n, stride, init, T::add),
                    GroupOp::ReduceMin => reduce(p, n, stride, init, T::min_),
                    _ => reduce(p, n, stride, init, T::max_),
                };
                let p = self.rec_mut(0, value.off, size);
                for q in 0..n.div_ceil(QUAD) {
                    // SAFETY: the value slots of block `q` (those past the group's work-items,
                    // in its last block, are unused).
                    unsafe { std::ptr::write_unaligned(p.add(q * stride) as *mut [T; QUAD], [acc; QUAD]) };
                }
                return;
            }
            let dst = self.rec_mut(0, value.off, size);
            let ex = op.is_exclusive();
            match op {
                GroupOp::ScanInclusiveAdd | GroupOp::ScanExclusiveAdd => scan(p, dst, n, stride, ex, init, T::add),
                GroupOp::ScanInclusiveMin | GroupOp::ScanExclusiveMin => scan(p, dst, n, stride, ex, init, T::min_),
                _ => scan(p, dst, n, stride, ex, init, T::max_),
            }
        });
    }

    /// Where a guarded region's work-item loop stops in dimension 0 ([`Guard`]): its bound is
    /// the same in every work-item, so it is read from the first active one.
    fn guard_limit(&self, g: &Guard, mask: &[u8]) -> usize {
        let bits = match g.bound {
            Bound::Literal(b) => b,
            Bound::Param(i) => self.s.scalars[i] as u32,
            Bound::LocalSize(d) => self.s.local[d as usize] as u32,
            Bound::Slot(s) => {
                let Some(l) = mask.iter().position(|&m| m != 0) else {
                    return 0;
                };
                // SAFETY: a 32-bit slot of lane `l`'s record.
                unsafe { std::ptr::read_unaligned(self.rec(l, s.off, 4) as *const u32) }
            }
        };
        g.limit(bits, self.s.local)
    }

    /// Whether a group-level `for`'s start, end and step are the same in every work-item of
    /// `mask`.
    fn uniform_bounds(&self, node: &Node, mask: &[u8]) -> bool {
        let Node::For {
            start, end, step, ..
        } = node
        else {
            return false;
        };
        let Some(first) = mask.iter().position(|&m| m != 0) else {
            return false;
        };
        let size = start.ty.scalar.size();
        let at = |l: usize, s: &Slot| {
            let p = self.rec(l, s.off, size);
            // SAFETY: a slot of `size` bytes (an integer counter's) in lane `l`'s record.
            unsafe {
                match size {
                    1 => *p as u64,
                    2 => std::ptr::read_unaligned(p as *const u16) as u64,
                    4 => std::ptr::read_unaligned(p as *const u32) as u64,
                    _ => std::ptr::read_unaligned(p as *const u64),
                }
            }
        };
        (first + 1..self.lanes)
            .filter(|&l| mask[l] != 0)
            .all(|l| [start, end, step].iter().all(|s| at(l, s) == at(first, s)))
    }

    /// A group-level `for` whose bounds are the same in every work-item ([`Self::uniform_bounds`])
    /// and whose body no work-item leaves on its own: one counter for the group, every
    /// work-item of `mask` runs every iteration, so nothing reads or clears the loop's flags
    /// or recomputes the mask; the counter's column is written where a region reads it (four
    /// work-items' at a time where a block is all in `mask`). The zero step was tested before.
    fn uniform_for(&mut self, node: &'a Node, mask: &[u8]) -> Flow {
        let Node::For {
            var,
            shared,
            start,
            end,
            step,
            body,
            ..
        } = node
        else {
            unreachable!("a `for` node")
        };
        let first = mask
            .iter()
            .position(|&m| m != 0)
            .expect("an active work-item");
        let read = self.s.plan.read.contains(&var.off);
        // Every work-item in `mask` (the usual case): the counters of all blocks, one store
        // of four per block (the last block's records past the group's work-items are unused).
        let full = all_set(mask);
        let blocks = self.lanes.div_ceil(QUAD);
        let stride = QUAD * self.s.plan.record;
        with_int!(var.ty.scalar, T => {
            let size = std::mem::size_of::<T>();
            // SAFETY: the bounds' slots hold `T`s.
            let get = |w: &Self, s: &Slot| unsafe { std::ptr::read_unaligned(w.rec(first, s.off, size) as *const T) };
            let (mut v, e, st): (T, T, T) = (get(self, start), get(self, end), get(self, step));
            loop {
                let go = if st > T::zero() { v < e } else { v > e };
                if !go {
                    return Ok(());
                }
                if let Some(at) = *shared {
                    // SAFETY: `v` is a plain integer of `size` bytes.
                    let bytes = unsafe { std::slice::from_raw_parts((&v as *const T).cast::<u8>(), size) };
                    self.set_shared(at, bytes);
                }
                if read && full {
                    let p = self.rec_mut(0, var.off, size);
                    for q in 0..blocks {
                        // SAFETY: the counter's slots of block `q`, side by side, `stride`
                        // bytes after block `q - 1`'s (records are whole blocks).
                        unsafe { std::ptr::write_unaligned(p.add(q * stride) as *mut [T; QUAD], [v; QUAD]) };
                    }
                } else if read {
                    // A block's four counters lie side by side (`super::plan`): one store of
                    // four where the block's work-items are all in `mask`.
                    for (q, m) in mask.chunks(QUAD).enumerate() {
                        let l = q * QUAD;
                        if m.len() == QUAD && m.iter().all(|&m| m != 0) {
                            // SAFETY: the counter's slots of `l`'s block, side by side.
                            unsafe { std::ptr::write_unaligned(self.rec_mut(l, var.off, size) as *mut [T; QUAD], [v; QUAD]) };
                            continue;
                        }
                        for j in (0..m.len()).filter(|&j| m[j] != 0) {
                            // SAFETY: the counter's slot holds a `T`.
                            unsafe { std::ptr::write_unaligned(self.rec_mut(l + j, var.off, size) as *mut T, v) };
                        }
                    }
                }
                self.exec_block_known(body, mask, full)?;
                v = v.add(st);
            }
        }, _ => unreachable!("validated: integer counter"))
    }

    /// Clears a loop's `continued` flags (`flags`, [`Node::For`]), and its `broken` flags
    /// too where `broken`.
    fn clear_flags(&mut self, flags: (u32, u32), broken: bool) {
        let (b, c) = flags;
        // A block's four flag bytes side by side (`super::plan`), cleared together.
        for l in (0..self.lanes).step_by(QUAD) {
            if broken {
                // SAFETY: the flag bytes of the four work-items of `l`'s block (records are
                // whole blocks, `Worker::new`).
                unsafe { std::ptr::write_unaligned(self.rec_mut(l, b, 1) as *mut u32, 0) };
            }
            unsafe { std::ptr::write_unaligned(self.rec_mut(l, c, 1) as *mut u32, 0) };
        }
    }

    /// Runs `node` for the work-items of `mask`; `full`: every work-item of the group is in it.
    fn exec(&mut self, node: &'a Node, mask: &[u8], full: bool) -> Flow {
        let n = self.lanes;
        match node {
            Node::Region(i) => {
                if let Some(g) = &self.s.plan.regions[*i].guard {
                    let limit = self.guard_limit(g, mask);
                    let w = self.head_word();
                    let mut head = self.records[w].to_ne_bytes();
                    let at = head_byte(LIMIT);
                    head[at..at + 4].copy_from_slice(&(limit as u32).to_ne_bytes());
                    self.records[w] = u64::from_ne_bytes(head);
                }
                self.call(*i, mask)
            }
            Node::Barrier if full => Ok(()),
            Node::Barrier => self.check_uniform(mask, "barrier"),
            Node::Group {
                value,
                op,
                scope,
                arg,
                source,
            } => {
                if !full {
                    self.check_uniform(mask, op.name(*scope))?;
                }
                if *scope == GroupScope::WorkGroup
                    && op.is_fold()
                    && source.is_none()
                    && arg.ty.width == 1
                    && value.ty == arg.ty
                    && arg.ty.scalar != Scalar::Bool
                {
                    self.fold(*op, *arg, *value);
                    return Ok(());
                }
                let a = self.column(*arg);
                let src = source.map(|s| self.column(s));
                let mut out = Column::default();
                let r = collective(
                    *op,
                    *scope,
                    arg.ty,
                    n,
                    &a,
                    src.as_ref().map(|c| c.slice::<u32>(n)),
                    &mut out,
                );
                if let Err((l, message)) = r {
                    return Err(Box::new(self.fault(l, message)));
                }
                self.set_column(*value, &out, mask);
                Ok(())
            }
            Node::If {
                cond, then, els, ..
            } => {
                let (mut yes, mut no) = (self.take_mask(), self.take_mask());
                for l in 0..n {
                    let c = self.flag(l, cond.off);
                    yes[l] = (mask[l] != 0 && c) as u8;
                    no[l] = (mask[l] != 0 && !c) as u8;
                }
                let mut r = Ok(());
                if any_set(&yes) {
                    r = self.exec_block(then, &yes);
                }
                if r.is_ok() && any_set(&no) {
                    r = self.exec_block(els, &no);
                }
                self.masks.push(yes);
                self.masks.push(no);
                r
            }
            Node::Loop {
                body, polls, flags, ..
            } => {
                self.frames.push(Frame {
                    flags: *flags,
                    dirty: false,
                });
                self.clear_flags(*flags, true);
                let mut iter = self.take_mask();
                let mut turns = 0u32;
                let r = (|| -> Flow {
                    loop {
                        iter.copy_from_slice(mask);
                        self.keep_alive(&mut iter);
                        if !any_set(&iter) {
                            return Ok(());
                        }
                        // A loop that polls a buffer and goes on turning may be waiting
                        // for another work-group (a look-back reading a predecessor's status
                        // again): past `SPIN_TURNS`, its thread yields every few iterations,
                        // so that the thread running that work-group, if the OS took its
                        // core away, gets it back sooner (a spin would hold the core to the
                        // end of its time slice). Other loops never yield.
                        turns = turns.saturating_add(1);
                        if *polls && turns > SPIN_TURNS && turns.is_multiple_of(YIELD_EVERY) {
                            std::thread::yield_now();
                        }
                        // Another work-group failed: this one's results no longer matter
                        // (it ends as cancelled, which the launch does not report).
                        if self.s.stop.stops(self.env.index) {
                            return Err(Box::new(self.p.cancelled()));
                        }
                        if self.s.cancel.load(Ordering::Acquire) {
                            return Err(Box::new(self.p.cancelled()));
                        }
                        self.exec_block(body, &iter)?;
                        if self.frames.last().is_some_and(|f| f.dirty) {
                            self.clear_flags(*flags, false);
                        }
                    }
                })();
                self.masks.push(iter);
                self.frames.pop();
                r
            }
            Node::For {
                var,
                shared,
                start,
                end,
                step,
                body,
                flags,
                exits,
            } => {
                let s = var.ty.scalar;
                let zero_step = |w: &Self, l: usize| {
                    with_int!(s, T => {
                        // SAFETY: the step slot holds a `T`.
                        let st: T = unsafe { std::ptr::read_unaligned(w.rec(l, step.off, std::mem::size_of::<T>()) as *const T) };
                        st.is_zero()
                    }, _ => unreachable!("validated: integer counter"))
                };
                if !*exits && self.uniform_bounds(node, mask) {
                    // The same bounds in every work-item of `mask`: the first one's step
                    // stands for all (a zero step is the interpreter's fault there, the first
                    // work-item it tests), and `uniform_for` writes the counter where a region
                    // reads it (issue 31: no copy of the start and test of the step per
                    // work-item, 256 of them a group in the tiled matmul).
                    let first = mask
                        .iter()
                        .position(|&m| m != 0)
                        .expect("an active work-item");
                    if zero_step(self, first) {
                        return Err(Box::new(self.fault(first, semantics::ZERO_STEP)));
                    }
                    return self.uniform_for(node, mask);
                }
                for l in (0..n).filter(|&l| mask[l] != 0) {
                    let size = s.size();
                    let src = self.rec(l, start.off, size);
                    let dst = self.rec_mut(l, var.off, size);
                    // SAFETY: two slots of the same scalar type in lane `l`'s record.
                    unsafe { std::ptr::copy_nonoverlapping(src, dst, size) };
                }
                for l in (0..n).filter(|&l| mask[l] != 0) {
                    if zero_step(self, l) {
                        return Err(Box::new(self.fault(l, semantics::ZERO_STEP)));
                    }
                }
                self.frames.push(Frame {
                    flags: *flags,
                    dirty: false,
                });
                self.clear_flags(*flags, true);
                let mut iter = self.take_mask();
                let (broken, _) = *flags;
                let r = (|| -> Flow {
                    loop {
                        iter.copy_from_slice(mask);
                        self.keep_alive(&mut iter);
                        let mut any = false;
                        with_int!(s, T => {
                            for l in 0..n {
                                if iter[l] == 0 {
                                    continue;
                                }
                                // SAFETY: the counter, bound and step slots hold `T`s.
                                let (v, e, st): (T, T, T) = unsafe {
                                    (
                                        std::ptr::read_unaligned(self.rec(l, var.off, std::mem::size_of::<T>()) as *const T),
                                        std::ptr::read_unaligned(self.rec(l, end.off, std::mem::size_of::<T>()) as *const T),
                                        std::ptr::read_unaligned(self.rec(l, step.off, std::mem::size_of::<T>()) as *const T),
                                    )
                                };
                                let go = if st > T::zero() { v < e } else { v > e };
                                if go {
                                    any = true;
                                } else {
                                    iter[l] = 0;
                                    // SAFETY: the flag byte of lane `l`.
                                    unsafe { *self.rec_mut(l, broken, 1) = 1 };
                                    self.frames.last_mut().expect("this loop's frame").dirty = true;
                                }
                            }
                        }, _ => unreachable!());
                        if !any {
                            return Ok(());
                        }
                        if let Some(at) = *shared {
                            // Every work-item running the iteration has the same counter
                            // (`plan::Plan::shared`): the first one's.
                            let l = iter
                                .iter()
                                .position(|&m| m != 0)
                                .expect("an active work-item");
                            let size = s.size();
                            let mut bytes = [0u8; 8];
                            // SAFETY: the counter's slot of lane `l` holds `size` bytes.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    self.rec(l, var.off, size),
                                    bytes.as_mut_ptr(),
                                    size,
                                )
                            };
                            self.set_shared(at, &bytes[..size]);
                        }
                        self.exec_block(body, &iter)?;
                        if self.frames.last().is_some_and(|f| f.dirty) {
                            self.clear_flags(*flags, false);
                        }
                        with_int!(s, T => {
                            for l in (0..n).filter(|&l| mask[l] != 0) {
                                let p = self.rec_mut(l, var.off, std::mem::size_of::<T>()) as *mut T;
                                // SAFETY: the counter and step slots hold `T`s.
                                unsafe {
                                    let st: T = std::ptr::read_unaligned(self.rec(l, step.off, std::mem::size_of::<T>()) as *const T);
                                    std::ptr::write_unaligned(p, std::ptr::read_unaligned(p).add(st));
                                }
                            }
                        }, _ => unreachable!());
                    }
                })();
                self.masks.push(iter);
                self.frames.pop();
                r
            }
        }
    }
}

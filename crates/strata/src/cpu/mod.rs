//! The built-in CPU backends: `cpu`, kernels compiled to native code ([`jit`]), and `interp`,
//! the lockstep interpreter ([`exec`]): the reference semantics of strata and its debug
//! backend. Both share the device memory below and report the same errors.
//!
//! In the interpreter each work-group runs in lockstep across its work-items: every operation is applied to all
//! work-items of the group at once (one column of values per register), under an execution
//! mask for divergent control flow. Barriers, local memory and divergence are therefore exact,
//! and a barrier or collective reached by only part of a work-group is reported. Work-groups
//! are spread over rayon's thread pool. Every memory access is bounds-checked; an access out of
//! bounds is an error naming the kernel, memory, index and work-item.
//!
//! Buffers are arrays of atomic words accessed with relaxed atomics (plain loads and stores on
//! x86-64), so even a kernel with data races between work-groups has defined behaviour here.
//!
//! `cpu` is what the spec `best` falls back to on a machine without a GPU; `interp` is the
//! reference that `cpu` is held to (the differential tests, `tests/cpu_compiled.rs`), and in
//! checked mode the one backend that also finds data races and uninitialized reads. Memory
//! made by `Buffer::uninit` keeps one bit per byte, set when the host, a copy, a fill or a
//! kernel writes it; a launch that `interp+checked` does not follow marks every buffer the
//! kernel may write as written.

mod exec;
mod jit;
mod semantics;

use crate::error::{Error, Result, WorkItem};
use crate::ir::ValidFunction;
use crate::ir::{self, FieldId, IdVec, LocalId, ParamId, PrivateId, Type};
use crate::runtime::{
    ArgValue, BackendEntry, BackendKind, Command, CompiledKernel, DeviceBackend, DeviceInfo,
    Devices, Found, Memory, QueueBackend, RectSide, WorkerQueue,
};
use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

pub(crate) use exec::Program;

/// The sub-group size of both CPU backends: a sub-group is a run of this many consecutive
/// work-items (see [`ir::GroupScope`]). 32, CUDA's warp size, so that sub-group code written
/// for NVIDIA GPUs gives the same results here.
pub(crate) const SUB_GROUP_SIZE: u32 = 32;

/// Global memory of the CPU backend.
pub(crate) struct CpuMem {
    words: Box<[AtomicU64]>,
    bytes: usize,
    /// For memory allocated uninitialized ([`crate::Buffer::uninit`]): one bit per byte, set
    /// once the byte has been written (by the host, a copy, a fill, or a kernel), which
    /// `interp+checked` consults to report reads of bytes nobody wrote.
    written: Option<Box<[AtomicU64]>>,
}

impl Drop for CpuMem {
    fn drop(&mut self) {
        kept::keep(std::mem::take(&mut self.words));
    }
}

/// Large buffers of the CPU backends kept for reuse once dropped: a buffer of 1 MiB or more
/// comes from the heap as fresh pages (glibc maps it on its own), and its first touch, a
/// page fault and the kernel's zeroing for every 4 KiB, cost more than the kernel that
/// writes it. Chambolle's iteration on fields (`strata bench`'s `rof_fused`) allocates three
/// 16 MiB fields an iteration and drops them the next one. A new buffer of the same length
/// as a kept one takes it (resident pages, no faults) and zeroes it, unless its first
/// command overwrites it in full ([`crate::Buffer::overwritten`]: the fields' outputs). At
/// most [`kept::LIMIT`] bytes are kept, process-wide; the memory budget
/// ([`crate::Device::memory_in_use`]) counts only buffers in use.
mod kept {
    use std::sync::atomic::AtomicU64;
    use std::sync::Mutex;

    /// Buffers below this many words are not kept (the heap reuses small blocks itself).
    const MIN_WORDS: usize = (1 << 20) / 8;
    /// Bytes kept at most, process-wide.
    pub(super) const LIMIT: usize = 256 << 20;

    static KEPT: Mutex<Vec<Box<[AtomicU64]>>> = Mutex::new(Vec::new());

    /// Bytes kept now.
    #[cfg(test)]
    pub(super) fn held() -> usize {
        let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().map(|b| b.len() * 8).sum()
    }

    /// Whether a buffer of `words` words is kept.
    #[cfg(test)]
    pub(super) fn holds(words: usize) -> bool {
        let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().any(|b| b.len() == words)
    }

    /// A kept buffer of exactly `words` words, if there is one: zeroed where `zero`, else
    /// with whatever its last user left in it.
    pub(super) fn take(words: usize, zero: bool) -> Option<Box<[AtomicU64]>> {
        if words < MIN_WORDS {
            return None;
        }
        let w = {
            let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
            let i = kept.iter().position(|b| b.len() == words)?;
            kept.swap_remove(i)
        };
        if zero {
            // SAFETY: `w` is owned here, no one else refers to it; all-zero bytes are a valid
            // `AtomicU64`.
            unsafe { std::ptr::write_bytes(w.as_ptr() as *mut AtomicU64, 0, w.len()) };
        }
        Some(w)
    }

    /// Keeps `w` for reuse if it is large, freeing the longest-kept buffers as needed to
    /// stay within [`LIMIT`] (what a program allocates now is what it will allocate next:
    /// an earlier phase's buffers of other lengths must not take the room); frees `w`
    /// itself if it alone exceeds the limit.
    pub(super) fn keep(w: Box<[AtomicU64]>) {
        if w.len() < MIN_WORDS || w.len() * 8 > LIMIT {
            return;
        }
        let freed = {
            let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
            let mut held: usize = kept.iter().map(|b| b.len() * 8).sum();
            let mut n = 0;
            while held + w.len() * 8 > LIMIT {
                held -= kept[n].len() * 8;
                n += 1;
            }
            let freed: Vec<Box<[AtomicU64]>> = kept.drain(..n).collect();
            kept.push(w);
            freed
        };
        // Freed outside the lock.
        drop(freed);
    }
}

/// `n` zeroed words from the allocator's zeroed allocation: a large block comes as fresh
/// pages that the system zeroes when they are first touched (by the kernel that writes them,
/// on the threads running it), not in a pass over them here.
fn zeroed_words(n: usize) -> std::result::Result<Box<[AtomicU64]>, String> {
    if n == 0 {
        return Ok(Box::new([]));
    }
    let layout = std::alloc::Layout::array::<AtomicU64>(n).map_err(|e| e.to_string())?;
    // SAFETY: `layout` has a non-zero size. All-zero bytes are a valid `AtomicU64`, and the
    // block has `n` of them with `AtomicU64`'s alignment: a `Box<[AtomicU64]>` of length `n`
    // owns it and frees it with the same layout.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout) as *mut AtomicU64;
        if p.is_null() {
            return Err(format!("the allocator refused {} bytes", layout.size()));
        }
        Ok(Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, n)))
    }
}

impl CpuMem {
    /// Memory whose bytes count as unwritten until something writes them (still zeroed).
    fn new_uninit(bytes: usize, device: &str) -> Result<CpuMem> {
        let mut m = CpuMem::new(bytes, device)?;
        m.written = Some((0..bytes.div_ceil(64)).map(|_| AtomicU64::new(0)).collect());
        Ok(m)
    }

    /// Marks `len` bytes at `offset` written.
    pub(crate) fn mark_written(&self, offset: usize, len: usize) {
        let Some(bits) = &self.written else { return };
        for b in offset..(offset + len).min(self.bytes) {
            bits[b / 64].fetch_or(1 << (b % 64), Ordering::Relaxed);
        }
    }

    /// Marks every byte written.
    pub(crate) fn mark_all_written(&self) {
        if let Some(bits) = &self.written {
            for w in bits.iter() {
                w.store(u64::MAX, Ordering::Relaxed);
            }
        }
    }

    /// Whether every one of `len` bytes at `offset` has been written (always, for memory not
    /// allocated uninitialized).
    pub(crate) fn is_written(&self, offset: usize, len: usize) -> bool {
        let Some(bits) = &self.written else {
            return true;
        };
        (offset..(offset + len).min(self.bytes))
            .all(|b| bits[b / 64].load(Ordering::Relaxed) & (1 << (b % 64)) != 0)
    }

    fn new(bytes: usize, device: &str) -> Result<CpuMem> {
        CpuMem::new_as(bytes, device, true)
    }

    /// [`CpuMem::new`], or with `zero` false memory that its first command overwrites in
    /// full ([`crate::Buffer::overwritten`]): a kept buffer is then not zeroed again.
    fn new_as(bytes: usize, device: &str, zero: bool) -> Result<CpuMem> {
        let n = bytes.div_ceil(8);
        let words = match kept::take(n, zero) {
            Some(words) => words,
            None => zeroed_words(n).map_err(|reason| Error::OutOfMemory {
                device: device.into(),
                requested: bytes as u64,
                reason,
            })?,
        };
        Ok(CpuMem {
            words,
            bytes,
            written: None,
        })
    }

    pub(crate) fn base(&self) -> *const u8 {
        self.words.as_ptr() as *const u8
    }

    fn byte(&self, i: usize) -> &AtomicU8 {
        debug_assert!(i < self.words.len() * 8);
        // SAFETY: `i` is inside the allocation; AtomicU8 has alignment 1 and the memory is only
        // ever accessed atomically.
        unsafe { &*(self.base().add(i) as *const AtomicU8) }
    }

    fn write(&self, offset: usize, data: &[u8]) {
        self.mark_written(offset, data.len());
        let mut i = 0;
        while i < data.len() && !(offset + i).is_multiple_of(8) {
            self.byte(offset + i).store(data[i], Ordering::Relaxed);
            i += 1;
        }
        while i + 8 <= data.len() {
            let w = u64::from_ne_bytes(data[i..i + 8].try_into().unwrap());
            self.words[(offset + i) / 8].store(w, Ordering::Relaxed);
            i += 8;
        }
        while i < data.len() {
            self.byte(offset + i).store(data[i], Ordering::Relaxed);
            i += 1;
        }
    }

    fn read(&self, offset: usize, out: &mut [u8]) {
        let mut i = 0;
        while i < out.len() && !(offset + i).is_multiple_of(8) {
            out[i] = self.byte(offset + i).load(Ordering::Relaxed);
            i += 1;
        }
        while i + 8 <= out.len() {
            let w = self.words[(offset + i) / 8].load(Ordering::Relaxed);
            out[i..i + 8].copy_from_slice(&w.to_ne_bytes());
            i += 8;
        }
        while i < out.len() {
            out[i] = self.byte(offset + i).load(Ordering::Relaxed);
            i += 1;
        }
    }
}

impl Memory for CpuMem {
    fn size(&self) -> usize {
        self.bytes
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn native(&self) -> crate::runtime::NativeMemory {
        crate::runtime::NativeMemory::Host {
            ptr: self.base() as *mut u8,
            len: self.bytes,
        }
    }
}

fn cpu_mem(m: &Arc<dyn Memory>) -> &CpuMem {
    m.as_any()
        .downcast_ref::<CpuMem>()
        .expect("strata bug: CPU command on memory of another backend")
}

/// A CPU device: the compiled backend or the interpreter.
pub(crate) struct CpuDevice {
    info: DeviceInfo,
    compiled: bool,
}

fn read_proc(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split(':').nth(1))
        .map(|v| v.trim().to_string())
}

/// The compiled CPU backend (`cpu`) in the device registry: one device, always there, the
/// spec `best` takes when there is no GPU.
pub(crate) const COMPILED: BackendEntry = BackendEntry {
    kind: BackendKind::Cpu,
    bare_spec: true,
    devices: Devices::Discover(|| Ok(CpuDevice::found(true))),
    best_rank: |_| Some(2),
};

/// The CPU interpreter (`interp`) in the device registry: one device, always there, never the
/// one `best` takes.
pub(crate) const INTERPRETER: BackendEntry = BackendEntry {
    kind: BackendKind::Interp,
    bare_spec: true,
    devices: Devices::Discover(|| Ok(CpuDevice::found(false))),
    best_rank: |_| None,
};

impl CpuDevice {
    /// The one device of the compiled backend or of the interpreter, for the registry.
    fn found(compiled: bool) -> Found {
        Found {
            devices: vec![Box::new(CpuDevice::new(compiled))],
            problems: Vec::new(),
        }
    }

    /// The compiled backend (`cpu`) when `compiled`, else the interpreter (`interp`).
    fn new(compiled: bool) -> CpuDevice {
        let threads = rayon::current_num_threads() as u32;
        let model = read_proc("/proc/cpuinfo", "model name")
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let vendor = read_proc("/proc/cpuinfo", "vendor_id").unwrap_or_else(|| "unknown".into());
        let total = read_proc("/proc/meminfo", "MemTotal")
            .and_then(|v| {
                v.split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
            })
            .map_or(8 << 30, |kib| kib * 1024);
        CpuDevice {
            info: DeviceInfo {
                backend: if compiled {
                    BackendKind::Cpu
                } else {
                    BackendKind::Interp
                },
                index: 0,
                name: if compiled {
                    format!("strata CPU (compiled with Cranelift) on {model}")
                } else {
                    format!("strata CPU interpreter on {model}")
                },
                vendor,
                compute_units: threads,
                max_work_group_size: 1024,
                max_work_item_sizes: [1024, 1024, 64],
                local_mem_size: 64 * 1024,
                global_mem_size: total,
                max_alloc_size: total / 2,
                preferred_group_size: 1024,
                supports_f64: true,
                supports_f16: true,
                supports_int64_atomics: true,
                sub_group_size: SUB_GROUP_SIZE,
                max_constant_buffer_size: None,
                max_constant_args: None,
                pitch_alignment: 64,
                loop_iteration_limit: None,
                extra: vec![("threads".into(), threads.to_string())],
            },
            compiled,
        }
    }
}

enum CpuKernel {
    Interpreted(Box<Program>),
    Compiled(Box<jit::JitProgram>),
}

impl CompiledKernel for CpuKernel {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl DeviceBackend for CpuDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> Result<Arc<dyn Memory>> {
        Ok(Arc::new(CpuMem::new(bytes, &self.info.spec())?))
    }

    fn alloc_uninit(&self, bytes: usize) -> Result<Arc<dyn Memory>> {
        Ok(Arc::new(CpuMem::new_uninit(bytes, &self.info.spec())?))
    }

    fn alloc_overwritten(&self, bytes: usize) -> Result<Arc<dyn Memory>> {
        Ok(Arc::new(CpuMem::new_as(bytes, &self.info.spec(), false)?))
    }

    fn compile(
        &self,
        f: &ValidFunction,
        settings: &crate::Settings,
    ) -> Result<Arc<dyn CompiledKernel>> {
        Ok(Arc::new(if self.compiled {
            CpuKernel::Compiled(Box::new(jit::JitProgram::compile(f, settings.cpu_disasm)?))
        } else {
            CpuKernel::Interpreted(Box::new(Program::lower(f)?))
        }))
    }

    fn new_queue_with(&self, _profiling: bool) -> Result<Arc<dyn QueueBackend>> {
        Ok(Arc::new(WorkerQueue::spawn("cpu", |cmd| {
            run(cmd).map(|()| None)
        })?))
    }
}

/// What both CPU backends keep of a kernel's declarations: the names their errors use and
/// the local and private arrays they allocate.
pub(crate) struct Decls {
    /// Kernel name.
    pub(crate) name: String,
    param_names: IdVec<ParamId, String>,
    /// Element type, length and name of each local array.
    pub(crate) locals: IdVec<LocalId, (Type, ir::ArrayLen, String)>,
    /// Element type, element count (1 for a variable) and name of each private.
    pub(crate) privates: IdVec<PrivateId, (Type, u32, String)>,
    /// How each field view is named (`ps[].vel`).
    fields: IdVec<FieldId, String>,
}

impl Decls {
    /// The declarations of `f`; fails when a stub has no CPU body.
    pub(crate) fn new(f: &ir::Function) -> Result<Decls> {
        if let Some(s) = f.stubs.iter().find(|s| s.cpu.is_none()) {
            return Err(Error::Unsupported {
                kernel: f.name.clone(),
                device: "cpu".into(),
                reason: format!("stub function `{}` has no body for the CPU backend; give it one with `Stub::cpu`", s.name),
            });
        }
        Ok(Decls {
            name: f.name.clone(),
            param_names: f.params.iter().map(|p| p.name.clone()).collect(),
            locals: f
                .locals
                .iter()
                .map(|d| (d.elem, d.len, d.name.clone()))
                .collect(),
            privates: f
                .privates
                .iter()
                .map(|d| (d.elem, d.count(), d.name.clone()))
                .collect(),
            fields: f
                .fields
                .ids()
                .map(|v| f.mem_name(ir::Mem::Field(v)))
                .collect(),
        })
    }

    /// How an error names `mem`, e.g. "buffer `x`".
    pub(crate) fn mem_what(&self, mem: ir::Mem) -> String {
        match mem {
            ir::Mem::Buffer(i) => format!("buffer `{}`", self.param_names[i]),
            ir::Mem::Local(i) => format!("local array `{}`", self.locals[i].2),
            ir::Mem::Private(i) => format!("private array `{}`", self.privates[i].2),
            ir::Mem::Field(i) => format!("field `{}`", self.fields[i]),
        }
    }

    /// The element count of local array `i` in a launch with `args`.
    pub(crate) fn local_len(&self, i: LocalId, args: &[ArgValue]) -> u64 {
        match self.locals[i].1 {
            ir::ArrayLen::Fixed(n) => n as u64,
            ir::ArrayLen::Param(q) => match args[q.index()] {
                ArgValue::LocalLen(n) => n as u64,
                _ => 0,
            },
        }
    }
}

/// The ids of work-item `l` (local linear id) of work-group `group`, with work-groups of
/// `local` work-items.
pub(crate) fn work_item(l: usize, local: [usize; 3], group: [u32; 3]) -> WorkItem {
    let [lx, ly, _] = local;
    let lid = [
        (l % lx) as u32,
        ((l / lx) % ly) as u32,
        (l / (lx * ly)) as u32,
    ];
    WorkItem {
        global: [0, 1, 2].map(|d| group[d] * local[d] as u32 + lid[d]),
        local: lid,
        group,
    }
}

/// How the work-groups of one launch learn that another failed ([`run_groups`]).
///
/// `#[repr(C)]`: compiled code reads its words directly (`jit::lower`'s `poll_stop`), no
/// call in a loop.
#[repr(C)]
pub(crate) struct Stop {
    /// Set once a work-group failed.
    flag: AtomicBool,
    /// Set [`Stop::GRACE`] after the first failure (by a timer thread).
    expired: AtomicBool,
    /// The first failing work-group in group order (`usize::MAX` while none failed).
    first: std::sync::atomic::AtomicUsize,
}

impl Stop {
    /// How long a work-group before the first failure keeps running after it: long enough
    /// to reach a fault of its own on a busy machine, which is then the one reported; short
    /// enough that a work-group waiting for a later one that failed (a look-back reading
    /// the status of a tile that will never be published) ends the launch soon.
    pub(crate) const GRACE: std::time::Duration = std::time::Duration::from_millis(500);

    /// No work-group has failed.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Stop {
            flag: AtomicBool::new(false),
            expired: AtomicBool::new(false),
            first: std::sync::atomic::AtomicUsize::new(usize::MAX),
        })
    }

    /// Records the failure of work-group `group`; the first failure starts the grace
    /// period's timer (a thread that sleeps, then sets [`Stop::expired`]; where no thread
    /// can be started, the grace period ends at once).
    fn fail(self: &Arc<Self>, group: usize) {
        self.first.fetch_min(group, Ordering::AcqRel);
        if self.flag.swap(true, Ordering::AcqRel) {
            return;
        }
        let stop = self.clone();
        let timer = std::thread::Builder::new()
            .name("strata-grace".into())
            .spawn(move || {
                std::thread::sleep(Self::GRACE);
                stop.expired.store(true, Ordering::Release);
            });
        if timer.is_err() {
            self.expired.store(true, Ordering::Release);
        }
    }

    /// The first failing work-group (`usize::MAX` while none failed).
    fn first(&self) -> usize {
        self.first.load(Ordering::Acquire)
    }

    /// Whether work-group `group` (its index in `0..total`), polling in a loop, should stop
    /// because another failed: a work-group after the first failure stops at once, one
    /// before it only once [`Stop::GRACE`] has passed since the failure. (Compiled code
    /// makes the same test inline.)
    pub(crate) fn stops(&self, group: usize) -> bool {
        self.flag.load(Ordering::Acquire)
            && (group > self.first() || self.expired.load(Ordering::Acquire))
    }
}

/// Runs work-groups `0..total`, `run(worker, group)` for each, with one worker (`make`) per
/// thread taking part: the launch loop of both CPU backends.
///
/// **Who runs what.** The calling thread (the queue's worker, or the caller of a blocking
/// launch on an idle queue) runs work-groups itself: a launch of one work-group runs entirely
/// on it, with no hand-over to rayon's pool and back. A larger launch also lends up to one
/// task per other pool thread (never more than there are work-groups to share), and every
/// participant claims work-groups from one atomic counter, [`claim_size`] consecutive ones
/// at a time: both cores stay busy to the end of a small launch, and a launch of many tiny
/// work-groups pays one atomic operation per claim, not per work-group. A pool task that
/// starts only after the calling thread has run out of work-groups does nothing, and the
/// launch does not wait for it ([`lend`]): a launch of two empty work-groups costs no
/// wake-up of a pool thread on its way back.
///
/// **Errors.** A failing work-group records itself in `stop` ([`Stop`]); participants then
/// skip every work-group after the first failure but still run those before it, and a
/// work-group spinning in a loop asks [`Stop::stops`] whether to give up: at once if it comes
/// after the first failure, only after [`Stop::GRACE`] if it comes before (it may be on its
/// way to a fault of its own, or waiting for a later work-group that failed). So the error
/// returned is the first in work-group order (the `Cancelled` of work-groups that only
/// stopped because another failed left out), and a launch never hangs on a failed
/// work-group. `cancel` ends the launch with [`Error::Cancelled`].
fn run_groups<W>(
    total: usize,
    kernel: &str,
    cancel: &AtomicBool,
    stop: &Arc<Stop>,
    make: impl Fn() -> Result<W> + Sync,
    run: impl Fn(&mut W, usize) -> Result<()> + Sync,
) -> Result<()> {
    run_groups_in(GroupOrder::Linear, total, kernel, cancel, stop, make, run)
}

/// The order in which [`run_groups_in`] hands out a launch's work-groups (what each
/// participant claims is a run of consecutive positions in it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GroupOrder {
    /// By index: dimension 0 fastest.
    Linear,
    /// A 2-D grid (`groups[2] == 1`) in bands of `rows` rows of work-groups: down a band's
    /// rows, then one column right, band after band. Work-groups that walk a shared
    /// dimension in tiles (a tiled matrix product: a row of work-groups reads the same rows
    /// of `A`, a column the same columns of `B`) then find both operands' tiles in the cache
    /// from the work-groups just before; in index order the column strips of `B` are read
    /// again from memory by every work-group.
    Bands {
        /// Work-groups per dimension.
        groups: [usize; 3],
        /// Rows per band (at least 1).
        rows: usize,
    },
}

impl GroupOrder {
    /// The index (dimension 0 fastest) of the work-group at position `p` of the order.
    pub(crate) fn index(self, p: usize) -> usize {
        match self {
            GroupOrder::Linear => p,
            GroupOrder::Bands { groups, rows } => {
                let [gx, gy, _] = groups;
                let band = p / (rows * gx);
                let r = p % (rows * gx);
                // The last band may have fewer rows.
                let height = rows.min(gy - band * rows);
                let (x, y) = (r / height, band * rows + r % height);
                y * gx + x
            }
        }
    }
}

/// [`run_groups`] with the work-groups handed out in `order`; `run` gets each work-group's
/// index. Errors are still the first in index order: a participant skips the work-groups
/// whose index comes after the first failure and runs the others.
fn run_groups_in<W>(
    order: GroupOrder,
    total: usize,
    kernel: &str,
    cancel: &AtomicBool,
    stop: &Arc<Stop>,
    make: impl Fn() -> Result<W> + Sync,
    run: impl Fn(&mut W, usize) -> Result<()> + Sync,
) -> Result<()> {
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;
    if total == 0 {
        return Ok(());
    }
    let threads = rayon::current_num_threads().max(1);
    let claim = claim_size(total, threads);
    let next = AtomicUsize::new(0);
    let errors: Mutex<Vec<(usize, Error)>> = Mutex::new(Vec::new());
    let fail = |g: usize, e: Error| {
        stop.fail(g);
        errors.lock().unwrap().push((g, e));
    };
    // In index order, every later position comes after the first failure too.
    let linear = order == GroupOrder::Linear;
    let participate = || {
        let mut worker: Option<W> = None;
        loop {
            let start = next.fetch_add(claim, Ordering::Relaxed);
            if start >= total || (linear && start > stop.first()) {
                return;
            }
            let w = match &mut worker {
                Some(w) => w,
                None => match make() {
                    Ok(w) => worker.insert(w),
                    Err(e) => return fail(start, e),
                },
            };
            for p in start..(start + claim).min(total) {
                let g = order.index(p);
                if g > stop.first() {
                    if linear {
                        return;
                    }
                    continue;
                }
                if cancel.load(Ordering::Acquire) {
                    return fail(
                        g,
                        Error::Cancelled {
                            kernel: kernel.to_string(),
                        },
                    );
                }
                if let Err(e) = run(w, g) {
                    fail(g, e);
                    // Later positions may hold earlier work-groups (not in index order).
                    if linear {
                        return;
                    }
                }
            }
        }
    };
    let helpers = (threads - 1).min(total.div_ceil(claim) - 1);
    if helpers == 0 {
        participate();
    } else {
        lend(helpers, &participate);
    }
    let real = |e: &Error| !matches!(e, Error::Cancelled { .. }) || cancel.load(Ordering::Acquire);
    let mut errors = errors.into_inner().unwrap();
    errors.sort_by_key(|(g, _)| *g);
    match errors.into_iter().map(|(_, e)| e).find(real) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Runs `f` on this thread and lends it to up to `helpers` threads of rayon's pool, returning
/// once every helper that started `f` has returned from it: [`run_groups`]'s hand-out.
///
/// A helper that rayon starts only after this thread has finished `f` (it found every
/// work-group claimed) does not call `f` at all, and nobody waits for it: a launch whose
/// work-groups the calling thread ran alone before a pool thread woke up costs no wait for
/// that wake-up (what `rayon::scope` would wait for). The hand-over is one atomic word:
/// the helpers running `f` counted below `CLOSED`, which this thread sets when it is done
/// with `f`; a helper that finds it set leaves `f` alone, so `f` (borrowed from this stack
/// frame) is called only while this function has not returned. This thread waits for the
/// helpers still running `f` by spinning briefly, then parking.
fn lend(helpers: usize, f: &(dyn Fn() + Sync)) {
    use std::sync::atomic::AtomicUsize;
    /// Set in [`Lent::state`] once the lending thread is done with `f`.
    const CLOSED: usize = 1 << (usize::BITS - 1);
    struct Lent {
        /// Helpers inside `f` (the low bits), and [`CLOSED`].
        state: AtomicUsize,
        /// `f`, its lifetime erased: called only by a helper that counted itself in before
        /// [`CLOSED`] was set, and [`lend`] returns only once all of those have left.
        f: *const (dyn Fn() + Sync + 'static),
        /// The lending thread, unparked by the last helper to leave `f` after [`CLOSED`].
        owner: std::thread::Thread,
    }
    // SAFETY: `f` is `Sync` and only called under the protocol above; the rest is atomics and
    // a thread handle.
    unsafe impl Send for Lent {}
    unsafe impl Sync for Lent {}
    // SAFETY: only the lifetime changes; see `Lent::f`.
    let erased: *const (dyn Fn() + Sync + 'static) = unsafe { std::mem::transmute(f) };
    let lent = Arc::new(Lent {
        state: AtomicUsize::new(0),
        f: erased,
        owner: std::thread::current(),
    });
    for _ in 0..helpers {
        let lent = lent.clone();
        rayon::spawn(move || {
            if lent.state.fetch_add(1, Ordering::AcqRel) & CLOSED == 0 {
                // SAFETY: counted in before `CLOSED`: `lend` has not returned and waits for
                // this helper to leave.
                unsafe { (*lent.f)() };
            }
            if lent.state.fetch_sub(1, Ordering::AcqRel) == CLOSED | 1 {
                lent.owner.unpark();
            }
        });
    }
    f();
    if lent.state.fetch_or(CLOSED, Ordering::AcqRel) == 0 {
        return;
    }
    // Helpers are still inside `f`: most finish within a work-group, so spin a little before
    // sleeping (a park and unpark cost a few microseconds each).
    let mut spins = 0u32;
    while lent.state.load(Ordering::Acquire) != CLOSED {
        if spins < 200 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::park();
        }
    }
}

/// How many consecutive work-groups a participant of [`run_groups`] claims at a time, for a
/// launch of `total` work-groups on `threads` threads: one while there are few (so that the
/// last claims balance the threads), up to a sixteenth of each thread's share when there
/// are many (so that a streaming kernel of tiny work-groups pays for few claims).
fn claim_size(total: usize, threads: usize) -> usize {
    (total / (threads * 16)).clamp(1, 1024)
}

fn fits(mem: &Arc<dyn Memory>, offset: usize, len: usize) -> Result<()> {
    if offset.checked_add(len).is_none_or(|end| end > mem.size()) {
        return Err(Error::Backend {
            backend: "cpu",
            message: format!(
                "strata bug: access of {len} bytes at {offset} in an allocation of {}",
                mem.size()
            ),
        });
    }
    Ok(())
}

/// Calls `f(row, slice)` for every row of a box of `region` (bytes per row, rows, slices), in
/// memory order; nothing for an empty box.
fn for_rows(region: [usize; 3], mut f: impl FnMut(usize, usize)) {
    if region[0] == 0 {
        return;
    }
    for slice in 0..region[2] {
        for row in 0..region[1] {
            f(row, slice);
        }
    }
}

fn run(cmd: Command) -> Result<()> {
    if let Some(e) = cmd.cancelled() {
        return Err(e);
    }
    match &cmd {
        Command::Write { mem, offset, data } => fits(mem, *offset, data.len())?,
        Command::Read {
            mem, offset, len, ..
        }
        | Command::Fill {
            mem, offset, len, ..
        } => fits(mem, *offset, *len)?,
        Command::Copy {
            src,
            src_offset,
            dst,
            dst_offset,
            len,
        } => {
            fits(src, *src_offset, *len)?;
            fits(dst, *dst_offset, *len)?;
        }
        Command::WriteRect { .. } | Command::ReadRect { .. } | Command::CopyRect { .. } => {
            cmd.check_rects("cpu")?
        }
        Command::Launch { .. } => {}
    }
    match cmd {
        Command::WriteRect {
            mem,
            at,
            region,
            data,
        } => {
            let host = RectSide::packed(region);
            for_rows(region, |row, slice| {
                let h = host.row_offset(row, slice);
                cpu_mem(&mem).write(at.row_offset(row, slice), &data[h..h + region[0]]);
            });
            Ok(())
        }
        Command::ReadRect {
            mem,
            at,
            region,
            out,
        } => {
            let host = RectSide::packed(region);
            let mut out = out.lock().unwrap();
            let v = out.bytes();
            for_rows(region, |row, slice| {
                let h = host.row_offset(row, slice);
                cpu_mem(&mem).read(at.row_offset(row, slice), &mut v[h..h + region[0]]);
            });
            Ok(())
        }
        Command::CopyRect {
            src,
            src_at,
            dst,
            dst_at,
            region,
        } => {
            let mut row = vec![0u8; region[0]];
            for_rows(region, |r, slice| {
                cpu_mem(&src).read(src_at.row_offset(r, slice), &mut row);
                cpu_mem(&dst).write(dst_at.row_offset(r, slice), &row);
            });
            Ok(())
        }
        Command::Write { mem, offset, data } => {
            cpu_mem(&mem).write(offset, &data);
            Ok(())
        }
        Command::Read {
            mem,
            offset,
            len,
            out,
        } => {
            // Straight into the reader's vector (`HostOut`: `len` bytes).
            cpu_mem(&mem).read(offset, &mut out.lock().unwrap().bytes()[..len]);
            Ok(())
        }
        Command::Copy {
            src,
            src_offset,
            dst,
            dst_offset,
            len,
        } => {
            const CHUNK: usize = 1 << 20;
            let mut tmp = vec![0u8; len.min(CHUNK)];
            let mut done = 0;
            while done < len {
                let n = (len - done).min(CHUNK);
                cpu_mem(&src).read(src_offset + done, &mut tmp[..n]);
                cpu_mem(&dst).write(dst_offset + done, &tmp[..n]);
                done += n;
            }
            Ok(())
        }
        Command::Fill {
            mem,
            offset,
            len,
            pattern,
        } => {
            if pattern.is_empty() {
                return Ok(());
            }
            // Whole patterns covering the fill or 64 KiB of it, whichever is less (a gather's
            // reset before every launch fills a few bytes: it built 64 KiB byte by byte,
            // about 0.8 M instructions a launch).
            let reps = len.min(1 << 16).div_ceil(pattern.len()).max(1);
            let chunk = pattern.repeat(reps);
            let mut done = 0;
            while done < len {
                let n = (len - done).min(chunk.len());
                cpu_mem(&mem).write(offset + done, &chunk[..n]);
                done += n;
            }
            Ok(())
        }
        Command::Launch {
            kernel,
            function,
            range,
            args,
            cancel,
            pitched,
        } => {
            let k = kernel
                .as_any()
                .downcast_ref::<CpuKernel>()
                .expect("strata bug: CPU launch of a kernel compiled elsewhere");
            let tracked = matches!(k, CpuKernel::Interpreted(p) if p.checked());
            if !tracked {
                // Only `interp+checked` follows what a kernel writes: after any other launch,
                // every buffer the kernel may write counts as written.
                for p in &function.info().writes {
                    if let Some(ArgValue::Buffer { mem, .. }) = args.get(p.index()) {
                        cpu_mem(mem).mark_all_written();
                    }
                }
            }
            match k {
                CpuKernel::Interpreted(p) => p.launch(range, &args, &cancel),
                CpuKernel::Compiled(p) => p.launch(range, &args, &cancel),
            }
            .map_err(|e| crate::runtime::with_coords(e, function.function(), &pitched))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn fault(g: usize) -> Error {
        Error::KernelFault {
            kernel: "k".into(),
            message: format!("group {g}"),
            item: work_item(0, [1, 1, 1], [g as u32, 0, 0]),
        }
    }

    /// Every work-group runs exactly once, for launches smaller and larger than the pool.
    #[test]
    fn run_groups_runs_each_group_once() {
        // Index order, and bands of a grid `total / 8` wide where 8 divides it.
        for total in [1, 2, 3, 7, 64, 1000, 40_000] {
            let order = match total % 8 {
                0 => GroupOrder::Bands {
                    groups: [total / 8, 8, 1],
                    rows: 3,
                },
                _ => GroupOrder::Linear,
            };
            let runs: Vec<AtomicUsize> = (0..total).map(|_| AtomicUsize::new(0)).collect();
            let makes = AtomicUsize::new(0);
            let (cancel, stop) = (AtomicBool::new(false), Stop::new());
            run_groups_in(
                order,
                total,
                "k",
                &cancel,
                &stop,
                || Ok(makes.fetch_add(1, Ordering::Relaxed)),
                |_, g| {
                    runs[g].fetch_add(1, Ordering::Relaxed);
                    Ok(())
                },
            )
            .unwrap();
            assert!(
                runs.iter().all(|r| r.load(Ordering::Relaxed) == 1),
                "{total}"
            );
            let makes = makes.load(Ordering::Relaxed);
            assert!(makes >= 1 && makes <= rayon::current_num_threads().max(1));
        }
    }

    /// A large buffer dropped is kept and handed to the next allocation of its length,
    /// zeroed again; small ones are not kept.
    #[test]
    fn large_buffers_are_reused_zeroed() {
        // A length no other test allocates.
        let bytes = (1 << 20) + 8 * 12_347;
        let m = CpuMem::new(bytes, "cpu").unwrap();
        for w in m.words.iter() {
            w.store(u64::MAX, Ordering::Relaxed);
        }
        let base = m.base();
        drop(m);
        let again = CpuMem::new(bytes, "cpu").unwrap();
        assert_eq!(again.base(), base, "the dropped buffer is reused");
        assert!(again.words.iter().all(|w| w.load(Ordering::Relaxed) == 0));
        assert!(kept::take(8 * 3, true).is_none());
        // Memory its first command overwrites is not zeroed again.
        for w in again.words.iter() {
            w.store(7, Ordering::Relaxed);
        }
        drop(again);
        let over = CpuMem::new_as(bytes, "cpu", false).unwrap();
        assert_eq!(over.base(), base, "reused again");
        assert!(over.words.iter().all(|w| w.load(Ordering::Relaxed) == 7));
        drop(over);
        let again = CpuMem::new(bytes, "cpu").unwrap();
        assert_eq!(again.base(), base, "reused once more");
        assert!(again.words.iter().all(|w| w.load(Ordering::Relaxed) == 0));
        drop(again);
        // Buffers kept later push out the longest-kept ones: after more than the limit of
        // other lengths, the first one is gone (the limit holds).
        let mut other: Vec<CpuMem> = (0..=kept::LIMIT / (2 << 20))
            .map(|i| CpuMem::new((2 << 20) + 8 * (i + 1), "cpu").unwrap())
            .collect();
        let last = other.last().unwrap().words.len();
        other.clear();
        assert!(
            !kept::holds(bytes.div_ceil(8)),
            "the longest-kept buffer was freed"
        );
        assert!(kept::holds(last), "the last one dropped is kept");
        let fresh = CpuMem::new(bytes, "cpu").unwrap();
        assert!(fresh.words.iter().all(|w| w.load(Ordering::Relaxed) == 0));
        assert!(kept::held() <= kept::LIMIT);
    }

    /// Bands visit every work-group once: down a band's rows, then right, the last band
    /// shorter where the rows do not divide.
    #[test]
    fn group_bands_visit_each_group_once_down_the_band_first() {
        for (gx, gy) in [(1, 2), (3, 8), (5, 9), (64, 64), (7, 17)] {
            for rows in [1, 2, 8, 20] {
                let order = GroupOrder::Bands {
                    groups: [gx, gy, 1],
                    rows,
                };
                let total = gx * gy;
                let seen: Vec<usize> = (0..total).map(|p| order.index(p)).collect();
                let mut sorted = seen.clone();
                sorted.sort_unstable();
                assert_eq!(
                    sorted,
                    (0..total).collect::<Vec<_>>(),
                    "{gx}x{gy} by {rows}"
                );
                let h = rows.min(gy);
                // The first band's first column, then its second.
                let want: Vec<usize> = (0..h).map(|y| y * gx).collect();
                assert_eq!(seen[..h], want, "{gx}x{gy} by {rows}");
                if gx > 1 {
                    assert_eq!(seen[h], 1, "{gx}x{gy} by {rows}");
                }
            }
        }
        assert_eq!(GroupOrder::Linear.index(17), 17);
    }

    /// In bands too, the error is the first failing work-group's in index order, and every
    /// work-group before it ran, wherever it lies in the order.
    #[test]
    fn run_groups_in_bands_reports_the_first_failure_in_index_order() {
        let (gx, gy) = (9, 13);
        let total = gx * gy;
        let order = GroupOrder::Bands {
            groups: [gx, gy, 1],
            rows: 4,
        };
        for first in [0, 1, gx, 2 * gx + 3, total / 2, total - 1] {
            first_failure_is_reported(order, total, first);
        }
    }

    /// Runs `total` work-groups in `order`, every one from `first` on failing (later ones
    /// faster), and checks that the error is `first`'s and that every work-group before it ran.
    fn first_failure_is_reported(order: GroupOrder, total: usize, first: usize) {
        let ran: Vec<AtomicBool> = (0..total).map(|_| AtomicBool::new(false)).collect();
        let (cancel, stop) = (AtomicBool::new(false), Stop::new());
        let r = run_groups_in(
            order,
            total,
            "k",
            &cancel,
            &stop,
            || Ok(()),
            |_, g| {
                ran[g].store(true, Ordering::Relaxed);
                if g >= first {
                    return Err(fault(g));
                }
                std::thread::yield_now();
                Ok(())
            },
        );
        let Err(Error::KernelFault { message, .. }) = r else {
            panic!("{order:?} {total} {first}: {r:?}")
        };
        assert_eq!(message, format!("group {first}"), "{order:?}");
        assert!(
            ran[..first].iter().all(|r| r.load(Ordering::Relaxed)),
            "{order:?} {first}"
        );
        assert!(stop.flag.load(Ordering::Relaxed));
    }

    /// The error returned is the first failing work-group's, in group order, however the
    /// work-groups were shared out; the groups before it all ran.
    #[test]
    fn run_groups_reports_the_first_failure_in_group_order() {
        for total in [2, 5, 64, 700] {
            for first in [0, 1, total / 2, total - 1] {
                first_failure_is_reported(GroupOrder::Linear, total, first);
            }
        }
    }

    /// A launch whose work-groups the calling thread runs alone, while every thread of the
    /// pool is busy elsewhere, returns without waiting for the pool: the helpers it lent
    /// start later and find nothing to do (`rayon::scope` would wait for them to run).
    #[test]
    fn run_groups_does_not_wait_for_helpers_that_never_started() {
        let threads = rayon::current_num_threads();
        if threads < 2 {
            return;
        }
        let release = Arc::new(AtomicBool::new(false));
        let busy = Arc::new(AtomicUsize::new(0));
        for _ in 0..threads {
            let (release, busy) = (release.clone(), busy.clone());
            rayon::spawn(move || {
                busy.fetch_add(1, Ordering::AcqRel);
                while !release.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                busy.fetch_sub(1, Ordering::AcqRel);
            });
        }
        while busy.load(Ordering::Acquire) < threads {
            std::thread::yield_now();
        }
        let runs: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
        let (cancel, stop) = (AtomicBool::new(false), Stop::new());
        let r = run_groups(
            64,
            "k",
            &cancel,
            &stop,
            || Ok(()),
            |_, g| {
                runs[g].fetch_add(1, Ordering::Relaxed);
                Ok(())
            },
        );
        release.store(true, Ordering::Release);
        r.unwrap();
        assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
        // The late helpers run once the pool is free, and call nothing.
        while busy.load(Ordering::Acquire) > 0 {
            std::thread::yield_now();
        }
    }

    /// A cancelled launch ends with `Cancelled`, and a `Cancelled` that only stopped a
    /// work-group because another failed is not what the launch reports.
    #[test]
    fn run_groups_cancel_and_stopped_groups() {
        let (cancel, stop) = (AtomicBool::new(true), Stop::new());
        let r = run_groups(100, "k", &cancel, &stop, || Ok(()), |_, _| Ok(()));
        assert!(matches!(r, Err(Error::Cancelled { .. })), "{r:?}");
        if rayon::current_num_threads() < 2 {
            return; // group 0 would wait for a group 1 that nobody runs
        }
        let (cancel, stop) = (AtomicBool::new(false), Stop::new());
        let r = run_groups(
            2,
            "k",
            &cancel,
            &stop,
            || Ok(()),
            |_, g| match g {
                // Group 0 waits for group 1 (as a look-back does), which fails; it stops as a
                // kernel polling `stop` does, after the grace period.
                0 => {
                    while !stop.stops(0) {
                        std::thread::yield_now();
                    }
                    Err(Error::Cancelled { kernel: "k".into() })
                }
                _ => Err(fault(g)),
            },
        );
        let Err(Error::KernelFault { message, .. }) = r else {
            panic!("{r:?}")
        };
        assert_eq!(message, "group 1");
    }

    /// A work-group before the first failure keeps running for the grace period, so that its
    /// own fault, reached later, is the one reported; one after it stops at once.
    #[test]
    fn run_groups_lets_earlier_groups_reach_their_own_fault() {
        let stop = Stop::new();
        assert!(!stop.stops(0) && !stop.stops(7));
        stop.fail(3);
        assert!(stop.stops(4) && !stop.stops(2));
        if rayon::current_num_threads() < 2 {
            return; // group 0 would wait for a group 1 that nobody runs
        }
        let (cancel, stop) = (AtomicBool::new(false), Stop::new());
        let r = run_groups(
            2,
            "k",
            &cancel,
            &stop,
            || Ok(()),
            |_, g| match g {
                // Group 0 is still running when group 1 fails; it is not told to stop, and
                // faults itself.
                0 => {
                    while !stop.flag.load(Ordering::Acquire) {
                        std::thread::yield_now();
                    }
                    assert!(!stop.stops(0));
                    Err(fault(0))
                }
                _ => Err(fault(g)),
            },
        );
        let Err(Error::KernelFault { message, .. }) = r else {
            panic!("{r:?}")
        };
        assert_eq!(message, "group 0");
    }
}

//! Composable parallel patterns (PACXX-style): device vectors, lazy views fused into the
//! algorithm that consumes them, eager actions, and multi-staged kernels.
//!
//! ```
//! use strata::patterns::*;
//! use strata::prelude::*;
//! # fn main() -> strata::Result<()> {
//! let ex = Exec::new(&Queue::new(&Device::from_spec("cpu")?)?);
//! let x = DeviceVec::from_slice(&ex, &[1.0f32, 2.0, 3.0])?;
//! let y = DeviceVec::from_slice(&ex, &[4.0f32, 5.0, 6.0])?;
//! // dot product: zip + map + reduce, traced into ONE kernel per reduction pass
//! let dot = zip(&x, &y).map(|(a, b)| a * b).sum(&ex)?;
//! assert_eq!(dot, 32.0);
//! // saxpy with views only: the result is computed by one kernel
//! let a = 2.0f32;
//! let z = zip(&x, &y).map(move |(x, y)| x * a + y).collect(&ex)?;
//! assert_eq!(z.to_vec()?, vec![6.0, 9.0, 12.0]);
//! # Ok(())
//! # }
//! ```
//!
//! - [`DeviceVec<T>`]: a typed vector on one device, bound to an [`Exec`] (a queue plus the
//!   staged launch parameters). Sub-slices share memory; conversion to and from a
//!   [`Buffer<T>`] does not copy.
//! - [`View`]: a lazily computed range, a *traced function from index to value*. Leaves are
//!   device vectors ([`DeviceVec<T>`] and `&DeviceVec<T>`), [`counting`], [`constant`] and
//!   [`DeviceVec::slots`]; adapters are [`zip`] (2 to 4 ranges), [`View::map`],
//!   [`View::enumerate`], [`View::subrange`] / [`View::take`] / [`View::skip`], [`View::rev`],
//!   [`View::strided`] and [`View::gather`]. Views never run anything by themselves: an
//!   algorithm traces the whole chain into its kernel, so a chain of views plus one algorithm is
//!   one kernel per algorithm pass. [`Queue::launch_count`](crate::Queue::launch_count) counts
//!   the launches (the tests use it to prove the fusion).
//! - Algorithms (methods of [`View`]): [`for_each`](View::for_each), [`collect`](View::collect)
//!   (transform), [`collect_async`](View::collect_async), [`reduce`](View::reduce),
//!   [`sum`](View::sum), [`min`](View::min), [`max`](View::max), [`argmin`](View::argmin),
//!   [`argmax`](View::argmax), [`count`](View::count), [`any`](View::any), [`all`](View::all),
//!   [`inclusive_scan`](View::inclusive_scan), [`exclusive_scan`](View::exclusive_scan),
//!   [`filter`](View::filter) (copy_if), [`partition`](View::partition),
//!   [`histogram`](View::histogram), [`sorted`](View::sorted); free functions
//!   [`reduce_by_key`], [`sort_by_key`] and [`merge_sort_by_key`].
//! - Actions (eager, in place, chainable, on [`DeviceVec`]): [`sort`](DeviceVec::sort),
//!   [`sort_by`](DeviceVec::sort_by) (a stable merge sort by a comparison in the kernel
//!   language),
//!   [`transform`](DeviceVec::transform), [`fill`](DeviceVec::fill),
//!   [`inclusive_scan_in_place`](DeviceVec::inclusive_scan_in_place),
//!   [`exclusive_scan_in_place`](DeviceVec::exclusive_scan_in_place).
//!
//! **Multi-staging.** The [`Staging`] of an [`Exec`] (work-group size, elements per work-item,
//! the element layout) and every Rust value a `map` closure captures are compile-time constants
//! of the generated kernels; sizes, offsets and [`constant`] values are launch parameters. The
//! device's kernel cache is keyed by the optimized IR, so a pattern is compiled once per device
//! and per distinct staged values, and re-running it on other data or sizes compiles nothing.
//! Nor does it record the kernel again where it can help it: a call whose views can give their
//! launch arguments without recording ([`View::walk`]) and whose closures capture nothing finds
//! the kernel built by an earlier call of the same view and closure types, staging and
//! parameter sharing, and launches it with the arguments its views give ([`Walk`]); a closure
//! that captures values (constants of the kernel) makes the call record its kernel every time.
//! [`Device::compile_count`](crate::Device::compile_count) counts the compilations: the tests
//! use it to prove the staging (`tests/patterns_staging.rs`, a test binary of its own so that
//! nothing else compiles while it counts).
//!
//! **Semantics.** Operators given to [`reduce`](View::reduce) and the scans must be
//! associative; they need not be commutative: every reduction and scan with a user operator
//! combines elements in index order (each work-group owns a contiguous block or tile, each
//! work-item a contiguous part of it, and work-groups and work-items are combined in order).
//! Floating-point results can still differ from a sequential left fold by rounding, because
//! the grouping differs. The built-in reductions ([`sum`](View::sum), [`min`](View::min),
//! [`max`](View::max) and those built on them), and user operators on integers that are exactly
//! `a + b`, `a.min(b)` or `a.max(b)`, are commutative and may combine in any order: they use
//! the work-group collectives (warp shuffles on CUDA), so a float `sum` is a sum in some
//! association order (see [`GroupOp`](crate::ir::GroupOp)).
//!
//! **Tuning.** [`tune`] times candidate stagings of each operation on a device and keeps the
//! fastest in a records file; an [`Exec`] runs every call with the record of its operation
//! and size class, unless its staging was set explicitly.
//!
//! **Scans** run as [`ScanAlgorithm`] says: by default, on CUDA, the single-pass scan with
//! decoupled look-back for 4-byte elements (one launch; see [`DeviceInfo::group_forward_progress`](crate::DeviceInfo::group_forward_progress)
//! for why its waiting is safe there), and reduce-then-scan in three launches elsewhere and for
//! other elements (the CPU backend can run the look-back scan when asked, but it is slower
//! there; see [`ScanAlgorithm::Auto`]).

mod actions;
mod algorithms;
mod lookback;
mod merge;
mod onesweep;
mod reduce;
mod scan;
mod select;
mod sort;
mod staging;
pub mod tune;
mod vec;
mod view;

pub use algorithms::AsyncVec;
pub use merge::merge_sort_by_key;
pub use onesweep::onesweep_safe;
pub use select::reduce_by_key;
pub(crate) use sort::sort_keys;
pub use sort::{sort_by_key, sort_by_key_desc, ArgKey, SortKey, SortOrder};
pub use staging::{Exec, LaunchShape, Layout, ScanAlgorithm, SortMethod, SortStaging, Staging};
pub use vec::DeviceVec;
pub use view::{
    constant, counting, zip, zip3, zip4, Constant, Counting, Enumerate, Gather, Map, Reads,
    Reverse, Slice, Slot, Slots, Strided, View, Zip2, Zip3, Zip4,
};

use crate::builder::{BufferParam, Expr, KernelDef, LocalArray, ScalarType, Value};
use crate::error::{Error, Result};
use crate::{Buffer, Event, Kernel, KernelArg, NdRange};
use std::any::Any;

/// A launch argument owned by the trace context until the launch.
trait LaunchArg {
    fn arg(&self) -> KernelArg<'_>;
}
impl<T: Value> LaunchArg for Buffer<T> {
    fn arg(&self) -> KernelArg<'_> {
        KernelArg::from(self)
    }
}
struct ScalarArg<T>(T);
impl<T: ScalarType> LaunchArg for ScalarArg<T> {
    fn arg(&self) -> KernelArg<'_> {
        KernelArg::from(self.0)
    }
}

/// Identity of a buffer's memory (two handles of the same memory have the same id).
pub(crate) fn mem_id<T>(b: &Buffer<T>) -> usize {
    std::sync::Arc::as_ptr(&b.mem) as *const () as usize
}

/// The trace context of a pattern kernel: views call it to turn the buffers and host values
/// they hold into kernel parameters while the algorithm records its kernel. Each buffer becomes
/// one parameter however often it is read; the matching launch arguments are collected in
/// parameter order.
pub struct Cx<'k> {
    kd: &'k mut KernelDef,
    bufs: Vec<(usize, Box<dyn Any>)>,
    args: Vec<Box<dyn LaunchArg>>,
    scalars: Vec<(String, crate::ir::Literal, Box<dyn Any>)>,
    written: Vec<usize>,
    read: Vec<usize>,
}

impl<'k> Cx<'k> {
    fn new(kd: &'k mut KernelDef, reads: &Reads, outputs: &[usize]) -> Self {
        let mut written = reads.writes.clone();
        written.extend_from_slice(outputs);
        Cx {
            kd,
            bufs: Vec::new(),
            args: Vec::new(),
            scalars: Vec::new(),
            written,
            read: reads.list.iter().map(|r| r.mem).collect(),
        }
    }

    fn find<T: Value>(&self, id: usize) -> Option<BufferParam<T>> {
        self.bufs
            .iter()
            .find(|(m, _)| *m == id)
            .and_then(|(_, p)| p.downcast_ref::<BufferParam<T>>().copied())
    }

    fn declare<T: Value>(&mut self, b: &Buffer<T>, access: crate::ir::Access) -> BufferParam<T> {
        let id = mem_id(b);
        if let Some(p) = self.find::<T>(id) {
            return p;
        }
        let p = self
            .kd
            .buffer::<T>(&format!("b{}", self.bufs.len()), access);
        self.bufs.push((id, Box::new(p)));
        self.args.push(Box::new(b.clone()));
        p
    }

    /// The kernel parameter for a buffer the kernel reads (read-write when the same kernel also
    /// writes that memory).
    pub fn read<T: Value>(&mut self, b: &Buffer<T>) -> BufferParam<T> {
        let access = if self.written.contains(&mem_id(b)) {
            crate::ir::Access::ReadWrite
        } else {
            crate::ir::Access::Read
        };
        self.declare(b, access)
    }

    /// The kernel parameter for a buffer the kernel writes (read-write when the kernel's views
    /// also read that memory).
    pub fn write<T: Value>(&mut self, b: &Buffer<T>) -> BufferParam<T> {
        let access = if self.read.contains(&mem_id(b)) {
            crate::ir::Access::ReadWrite
        } else {
            crate::ir::Access::Write
        };
        self.declare(b, access)
    }

    /// The kernel parameter for a buffer the kernel writes and reads.
    pub fn read_write<T: Value>(&mut self, b: &Buffer<T>) -> BufferParam<T> {
        self.declare(b, crate::ir::Access::ReadWrite)
    }

    /// A host value passed at launch as a scalar parameter (not staged: other values reuse the
    /// compiled kernel). The same name and value asked for again is the same parameter.
    pub fn scalar<T: ScalarType>(&mut self, name: &str, v: T) -> Expr<T> {
        let lit = v.literal();
        if let Some(e) = self
            .scalars
            .iter()
            .find(|(n, l, _)| n == name && *l == lit)
            .and_then(|(_, _, e)| e.downcast_ref::<Expr<T>>())
        {
            return *e;
        }
        self.args.push(Box::new(ScalarArg(v)));
        let same = self.scalars.iter().filter(|(n, _, _)| n == name).count();
        let e = if same == 0 {
            self.kd.scalar::<T>(name)
        } else {
            self.kd.scalar::<T>(&format!("{name}{same}"))
        };
        self.scalars.push((name.to_string(), lit, Box::new(e)));
        e
    }

    /// A `u32` launch parameter from a host size (sizes are checked to fit `u32` before any
    /// kernel is traced).
    pub fn size(&mut self, name: &str, v: usize) -> Expr<u32> {
        self.scalar::<u32>(name, v as u32)
    }

    /// A local-memory array of `len` elements (a staged size).
    pub fn local<T: Value>(&mut self, name: &str, len: u32) -> LocalArray<T> {
        self.kd.local_array::<T>(name, len)
    }
}

/// The elements of a `u32` index space: lengths and offsets must fit, because kernel indices are
/// `u32`.
pub(crate) fn check_u32(op: &'static str, n: usize) -> Result<()> {
    if n > u32::MAX as usize {
        return Err(Error::BufferRange {
            op,
            detail: format!("{n} elements; pattern indices are u32, so at most 2^32 - 1"),
        });
    }
    Ok(())
}

/// Records the kernel `name` with `body`: the kernel (built, or found in the process-wide
/// cache by the recorded IR) and its launch arguments in parameter order.
fn record(
    name: &str,
    reads: &Reads,
    outputs: &[usize],
    body: impl FnOnce(&mut Cx),
) -> Result<(Kernel, Vec<Box<dyn LaunchArg>>)> {
    let mut args: Vec<Box<dyn LaunchArg>> = Vec::new();
    let kernel = Kernel::build(name, |kd| {
        let mut cx = Cx::new(kd, reads, outputs);
        body(&mut cx);
        args = cx.args;
    })?;
    Ok((kernel, args))
}

/// The range of a pattern launch of `groups` work-groups of the staged size.
fn group_range(ex: &Exec, groups: usize) -> NdRange {
    let gs = ex.staging().group_size as usize;
    NdRange::new(groups * gs).local(gs)
}

/// Records the kernel `name` with `body` and enqueues it over `groups` work-groups of the
/// staged size. `reads` is what the kernel's views read and write, `outputs` the memories the
/// algorithm writes (parameters are read-write where both meet).
pub(crate) fn launch(
    ex: &Exec,
    name: &str,
    groups: usize,
    reads: &Reads,
    outputs: &[usize],
    body: impl FnOnce(&mut Cx),
) -> Result<Event> {
    let (kernel, args) = record(name, reads, outputs, body)?;
    launch_recorded(ex, kernel, groups, args)
}

/// Enqueues a recorded kernel with the arguments its recording collected.
fn launch_recorded(
    ex: &Exec,
    kernel: Kernel,
    groups: usize,
    args: Vec<Box<dyn LaunchArg>>,
) -> Result<Event> {
    let kargs: Vec<KernelArg<'_>> = args.iter().map(|a| a.arg()).collect();
    let range = group_range(ex, groups);
    let run = kernel.enqueue(ex.queue(), range, &kargs, &[])?;
    drop(kargs);
    LAUNCHES.with(|c| {
        if let Some(v) = c.borrow_mut().as_mut() {
            v.push(CapturedLaunch {
                kernel,
                range,
                args,
            });
        }
    });
    Ok(run.event().clone())
}

/// How a pattern call finds its kernel without recording it ([`launch_fast`]): `types` is the
/// identity of the Rust types the kernel's recording depends on (the view chain, the
/// closures, the element type: [`type_key`]), `flags` the algorithm's own choices that shape
/// the kernel (its mode, which optional parameters it has), and `walk` collects the launch
/// arguments in parameter order, as the recording would ([`Walk`]).
pub(crate) struct Fast<W> {
    types: std::any::TypeId,
    flags: u64,
    walk: W,
}

/// A [`Fast`] (the walk's lifetime is that of the views it walks).
pub(crate) fn fast<'a, W: FnOnce(&mut Walk<'a>)>(
    types: std::any::TypeId,
    flags: u64,
    walk: W,
) -> Fast<W> {
    Fast { types, flags, walk }
}

/// No fast path: the kernel is recorded at every call.
pub(crate) type NoFast = Fast<fn(&mut Walk<'_>)>;

/// The key of a kernel found without recording: everything its recording depends on. The
/// recording is a function of the Rust types (`types`: the views, the closures, which must
/// capture nothing, and the elements), of the algorithm's choices (`flags`), of the staging,
/// and of which launch values are the same parameter (`sig`: buffers of the same memory, equal
/// scalars of the same name, and each buffer's access); the values themselves are launch
/// arguments.
#[derive(PartialEq, Eq, Hash)]
struct WalkKey {
    types: std::any::TypeId,
    flags: u64,
    /// The kernel's name, hashed (the kernel found must also have this name).
    name: u64,
    staging: Staging,
    sig: Vec<u32>,
}

/// Kernels found by [`WalkKey`]; `None` where the walk did not give the arguments the
/// recording gave (a view's [`View::walk`] that does not follow its [`View::at`]): those calls
/// record their kernel every time.
static WALKED: std::sync::LazyLock<std::sync::Mutex<Walked>> =
    std::sync::LazyLock::new(Default::default);

type Walked = std::collections::HashMap<WalkKey, Option<Kernel>, WalkHash>;

/// The hasher of [`WALKED`]: a multiply-rotate hash of the key's words (a few dozen
/// instructions where SipHash takes several hundred; the keys are a process's own, so they
/// need not resist chosen inputs).
#[derive(Default, Clone, Copy)]
struct WalkHash;

impl std::hash::BuildHasher for WalkHash {
    type Hasher = WalkHasher;
    fn build_hasher(&self) -> WalkHasher {
        WalkHasher(0x243f_6a88_85a3_08d3)
    }
}

struct WalkHasher(u64);

impl std::hash::Hasher for WalkHasher {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0 ^ w)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }
    fn write_u32(&mut self, w: u32) {
        self.write_u64(u64::from(w))
    }
    fn write_u8(&mut self, w: u8) {
        self.write_u64(u64::from(w))
    }
    fn write_usize(&mut self, w: usize) {
        self.write_u64(w as u64)
    }
    fn finish(&self) -> u64 {
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^ (x >> 33)
    }
}

/// A kernel name's hash for [`WalkKey`].
fn name_hash(name: &str) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = WalkHash.build_hasher();
    h.write(name.as_bytes());
    h.finish()
}

/// Most kernels [`WALKED`] keeps; when full it starts again empty.
const KEPT_WALKED: usize = 1024;

/// Like [`launch`], but a call whose kernel was built before for the same [`WalkKey`] does not
/// record it: it collects the launch arguments by `fast`'s walk and launches the kernel found
/// (a few hundred instructions instead of tens of thousands for the recording). The first
/// call of a key records the kernel and keeps it only if the walk's arguments are the
/// recording's. Builds with debug assertions record at every call and check that the kernel
/// and the arguments are the ones found (so every test checks the keys). A view chain that
/// cannot be walked (a closure that captures values, which are constants of the kernel; a
/// view without [`View::walk`]) records at every call, as does a call inside
/// [`capture_launches`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch_fast<'a, W: FnOnce(&mut Walk<'a>)>(
    ex: &Exec,
    name: &str,
    groups: usize,
    reads: &'a Reads,
    outputs: &'a [usize],
    fast: Option<Fast<W>>,
    body: impl FnOnce(&mut Cx),
) -> Result<Event> {
    let capturing = LAUNCHES.with(|c| c.borrow().is_some());
    let Some(fast) = fast.filter(|_| !capturing) else {
        return launch(ex, name, groups, reads, outputs, body);
    };
    let mut w = Walk::new(reads, outputs);
    (fast.walk)(&mut w);
    if w.opaque {
        return launch(ex, name, groups, reads, outputs, body);
    }
    let key = WalkKey {
        types: fast.types,
        flags: fast.flags,
        name: name_hash(name),
        staging: ex.staging(),
        sig: std::mem::take(&mut w.sig),
    };
    let found = WALKED.lock().unwrap().get(&key).cloned();
    let kernel = match found {
        Some(None) => return launch(ex, name, groups, reads, outputs, body),
        // Another name with the same hash: recorded (never seen in practice).
        Some(Some(k)) if k.name() != name => return launch(ex, name, groups, reads, outputs, body),
        Some(Some(k)) if !cfg!(debug_assertions) => {
            crate::runtime::note_built(&k);
            k
        }
        found => {
            let (k, args) = record(name, reads, outputs, body)?;
            let same = args.len() == w.args.len()
                && args.iter().zip(&w.args).all(|(a, b)| a.arg().same_as(b));
            if let Some(Some(f)) = &found {
                assert!(
                    same && f.cache_key() == k.cache_key(),
                    "strata bug: the pattern kernel `{name}` found without recording is not the one recorded (same: {same})"
                );
            }
            debug_assert!(
                same,
                "strata bug: the walk of pattern kernel `{name}` does not give the arguments its recording gives"
            );
            if found.is_none() {
                let mut walked = WALKED.lock().unwrap();
                if walked.len() >= KEPT_WALKED {
                    walked.clear();
                }
                walked.insert(key, same.then(|| k.clone()));
            }
            if !same {
                return launch_recorded(ex, k, groups, args);
            }
            k
        }
    };
    let run = kernel.enqueue(ex.queue(), group_range(ex, groups), &w.args, &[])?;
    Ok(run.event().clone())
}

/// The launch arguments of a pattern kernel, collected from its views and its algorithm
/// without recording the kernel ([`View::walk`]): a walk calls [`Walk::read`],
/// [`Walk::write`], [`Walk::scalar`], ... in the order in which recording the kernel calls
/// [`Cx::read`], [`Cx::write`], [`Cx::scalar`], ... (the first time for each parameter), with
/// the same buffers and values, so that it gives the very arguments the recording gives. A
/// pattern call whose views all walk, and whose closures capture nothing, finds its kernel
/// without recording it after the first call; a walk that does not follow the recording is
/// found out at that first call (the kernel is then recorded at every call).
pub struct Walk<'a> {
    args: Vec<KernelArg<'a>>,
    /// The buffer parameters: memory and element type.
    bufs: Vec<(usize, std::any::TypeId)>,
    /// The scalar parameters: name and value.
    scalars: Vec<(&'static str, crate::ir::Literal)>,
    /// Per call, the parameter it gave (see [`WalkKey`]).
    sig: Vec<u32>,
    reads: &'a Reads,
    outputs: &'a [usize],
    opaque: bool,
}

/// [`Walk::sig`] entries: a new buffer parameter (with its access), a buffer parameter again,
/// a new scalar parameter, a scalar parameter again (with the index).
const SIG_NEW_BUF: u32 = 1 << 28;
const SIG_BUF: u32 = 2 << 28;
const SIG_NEW_SCALAR: u32 = 3 << 28;
const SIG_SCALAR: u32 = 4 << 28;

impl<'a> Walk<'a> {
    fn new(reads: &'a Reads, outputs: &'a [usize]) -> Self {
        // Room for a usual chain of views, so that the walk allocates each list once.
        Walk {
            args: Vec::with_capacity(12),
            bufs: Vec::with_capacity(4),
            scalars: Vec::with_capacity(8),
            sig: Vec::with_capacity(12),
            reads,
            outputs,
            opaque: false,
        }
    }

    fn declare<T: Value>(&mut self, b: &'a Buffer<T>, access: crate::ir::Access) {
        let id = mem_id(b);
        let ty = type_key::<T>();
        // As `Cx::declare`: the first parameter of this memory, if it has this element type.
        if let Some(i) = self.bufs.iter().position(|(m, _)| *m == id) {
            if self.bufs[i].1 == ty {
                self.sig.push(SIG_BUF | i as u32);
                return;
            }
        }
        let a = match access {
            crate::ir::Access::Read => 0,
            crate::ir::Access::Write => 1,
            crate::ir::Access::ReadWrite => 2,
            _ => 3,
        };
        self.sig.push(SIG_NEW_BUF | a);
        self.bufs.push((id, ty));
        self.args.push(KernelArg::from(b));
    }

    /// The buffer a view reads, as [`Cx::read`].
    pub fn read<T: Value>(&mut self, b: &'a Buffer<T>) {
        let id = mem_id(b);
        let access = if self.reads.writes.contains(&id) || self.outputs.contains(&id) {
            crate::ir::Access::ReadWrite
        } else {
            crate::ir::Access::Read
        };
        self.declare(b, access)
    }

    /// The buffer a kernel writes, as [`Cx::write`].
    pub fn write<T: Value>(&mut self, b: &'a Buffer<T>) {
        let id = mem_id(b);
        let access = if self.reads.list.iter().any(|r| r.mem == id) {
            crate::ir::Access::ReadWrite
        } else {
            crate::ir::Access::Write
        };
        self.declare(b, access)
    }

    /// The buffer a kernel writes and reads, as [`Cx::read_write`].
    pub fn read_write<T: Value>(&mut self, b: &'a Buffer<T>) {
        self.declare(b, crate::ir::Access::ReadWrite)
    }

    /// A host value passed at launch, as [`Cx::scalar`].
    pub fn scalar<T: ScalarType>(&mut self, name: &'static str, v: T) {
        let lit = v.literal();
        if let Some(j) = self
            .scalars
            .iter()
            .position(|(n, l)| *n == name && *l == lit)
        {
            self.sig.push(SIG_SCALAR | j as u32);
            return;
        }
        self.sig.push(SIG_NEW_SCALAR);
        self.scalars.push((name, lit));
        self.args.push(KernelArg::from(v));
    }

    /// A host size passed as a `u32`, as [`Cx::size`].
    pub fn size(&mut self, name: &'static str, v: usize) {
        self.scalar::<u32>(name, v as u32)
    }

    /// A closure called while the kernel is recorded: its type identifies it (it is part of
    /// the view's type) only if it captures nothing; a closure that captures values (which
    /// are constants of the kernel) makes the walk [`opaque`](Walk::opaque).
    pub fn closure<F>(&mut self, _f: &F) {
        if std::mem::size_of::<F>() != 0 {
            self.opaque = true;
        }
    }

    /// Says that this view cannot give its arguments without recording (the default of
    /// [`View::walk`]): its kernel is recorded at every call.
    pub fn opaque(&mut self) {
        self.opaque = true;
    }
}

/// The [`TypeId`](std::any::TypeId) of `T` with its lifetimes erased, for any `T` (a view of
/// `&DeviceVec` is not `'static`). Types that differ only in lifetimes have the same id, which
/// is right for [`WalkKey`]: lifetimes do not change what a recording records.
pub(crate) fn type_key<T: ?Sized>() -> std::any::TypeId {
    trait Ident {
        fn ident(&self) -> std::any::TypeId
        where
            Self: 'static;
    }
    impl<U: ?Sized> Ident for std::marker::PhantomData<U> {
        fn ident(&self) -> std::any::TypeId
        where
            Self: 'static,
        {
            std::any::TypeId::of::<U>()
        }
    }
    let marker = std::marker::PhantomData::<T>;
    let d: &dyn Ident = &marker;
    // SAFETY: only the lifetime bound of the trait object changes; `ident` reads nothing
    // through `self` (a zero-sized marker), and a type's id does not depend on its lifetimes
    // (they are erased before code generation).
    let d: &(dyn Ident + 'static) = unsafe { std::mem::transmute(d) };
    d.ident()
}

thread_local! {
    static LAUNCHES: std::cell::RefCell<Option<Vec<CapturedLaunch>>> =
        const { std::cell::RefCell::new(None) };
}

/// A pattern kernel's launch as a pattern call made it: the (cached) kernel, its range and its
/// arguments, to be launched again directly. For `strata bench`'s `overhead_*` rows, which
/// compare a pattern call with a raw launch of the same kernel; hidden from the docs, not part
/// of the API.
#[doc(hidden)]
pub struct CapturedLaunch {
    kernel: Kernel,
    range: NdRange,
    args: Vec<Box<dyn LaunchArg>>,
}

impl CapturedLaunch {
    /// The kernel launched.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Enqueues the same kernel with the same range and arguments on `queue` (the arguments'
    /// buffers still hold whatever the pattern call left there).
    pub fn enqueue(&self, queue: &crate::Queue) -> Result<crate::Run> {
        let kargs: Vec<KernelArg<'_>> = self.args.iter().map(|a| a.arg()).collect();
        self.kernel.enqueue(queue, self.range, &kargs, &[])
    }
}

/// Runs `f` and returns, beside its result, the pattern kernel launches it made on this
/// thread, in order (see [`CapturedLaunch`]); hidden from the docs, not part of the API.
#[doc(hidden)]
pub fn capture_launches<R>(f: impl FnOnce() -> R) -> (R, Vec<CapturedLaunch>) {
    let outer = LAUNCHES.with(|c| c.borrow_mut().replace(Vec::new()));
    let r = f();
    let got = LAUNCHES.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer));
    (r, got.unwrap_or_default())
}

/// Checks that an output does not overlap memory that a view reads at other positions: an
/// output may only be the very vector an input reads element for element (in-place
/// transforms and scans).
pub(crate) fn check_alias<T: Value>(
    op: &'static str,
    reads: &Reads,
    out: &DeviceVec<T>,
) -> Result<()> {
    let id = mem_id(out.buffer());
    for r in reads.list.iter().filter(|r| r.mem == id) {
        let same = r.direct && r.offset == out.offset();
        let disjoint =
            r.offset + r.len <= out.offset() || out.offset() + out.len() <= r.offset || r.len == 0;
        if !same && !disjoint {
            return Err(Error::BufferRange {
                op,
                detail: format!(
                    "the output (elements {}..{} of its buffer) overlaps elements {}..{} that the input view reads at other positions; write into another vector",
                    out.offset(),
                    out.offset() + out.len(),
                    r.offset,
                    r.offset + r.len
                ),
            });
        }
    }
    Ok(())
}

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
    let mut args: Vec<Box<dyn LaunchArg>> = Vec::new();
    let kernel = Kernel::build(name, |kd| {
        let mut cx = Cx::new(kd, reads, outputs);
        body(&mut cx);
        args = cx.args;
    })?;
    let kargs: Vec<KernelArg<'_>> = args.iter().map(|a| a.arg()).collect();
    let gs = ex.staging().group_size as usize;
    let range = NdRange::new(groups * gs).local(gs);
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

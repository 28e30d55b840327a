//! strata buffers over MPI (feature `mpi`), through the `mpi` crate (rsmpi) and the system's
//! MPI library (OpenMPI: `apt-get install openmpi-bin libopenmpi-dev`).
//!
//! - [`init`] starts MPI ([`Mpi`] finalizes it when dropped); [`Comm::world`] is every rank,
//!   and fails with [`MpiError`] when MPI is not initialized.
//! - [`Comm::send`] / [`Comm::recv`] and the non-blocking [`Comm::isend`] / [`Comm::irecv`]
//!   move a range of a [`Buffer`] to another rank. By default the data is staged through the
//!   host (a read on the queue, the MPI call on host memory, a write on the queue). When the
//!   buffer is on a CUDA device and the MPI library says it is CUDA-aware
//!   ([`Comm::cuda_aware`], asked at run time through OpenMPI's `MPIX_Query_cuda_support`),
//!   the device pointer is handed to MPI directly.
//! - [`Comm::all_reduce`]: the element-wise reduction of a device vector over all ranks, in
//!   place; the lengths are compared between ranks first.
//! - [`RowSplit`] splits the rows (or planes) of a grid over the ranks; [`Comm::exchange_halo`]
//!   exchanges the halo layers of a field split so (2-D: rows of a [`Buffer2`], 3-D: planes of
//!   a [`Buffer3`], or any buffer given its layer length).
//!
//! Errors are typed ([`MpiError`]): MPI not initialized, a rank count that does not divide
//! the grid where the split must be even, lengths that differ between ranks, a message larger
//! than MPI's `int` count, a message of another length than the receiving range. Messages use
//! a duplicate of `MPI_COMM_WORLD` whose errors are returned (not fatal), so MPI's own errors
//! are [`MpiError`] too.
//!
//! The raw point-to-point calls (`MPI_Isend`, `MPI_Irecv`, `MPI_Probe`, `MPI_Wait`) go through
//! `mpi::ffi` because a non-blocking request here owns its host buffer until it completes,
//! which the `mpi` crate's scoped requests cannot express across a function return.
//! Every request waits in its `Drop`.
//!
//! **Mismatches are errors, not hangs.** A blocking receive probes the message's size first
//! and reports another length as a typed error (consuming the message, so the ranks stay in
//! step); a non-blocking receive posts one byte more than expected, so a longer message is
//! reported, not truncated; `all_reduce` gathers every rank's length before reducing, so
//! mismatched lengths are an error on every rank. The halo exchange posts both receives
//! before both sends, which no rank order can deadlock, and moves rows or planes packed, so
//! ranks whose devices pad rows differently (PoCL and the CPU backend do) agree on message
//! sizes.
//!
//! **CUDA-aware MPI**: the query function is looked up in the process at run time, so strata
//! builds against any MPI; buffers on CUDA devices go to MPI as device pointers after a
//! `queue.finish()`. That path compiles but has not run (no CUDA-aware MPI was available to
//! test it); host staging is the tested default.

use crate::builder::Element;
use crate::error::{Error, Result};
use crate::{BackendKind, Buffer, Buffer2, Buffer3, Queue};
use mpi::ffi;
use mpi::raw::{AsRaw, FromRaw};
use mpi::traits::{Communicator, CommunicatorCollectives, Equivalence};
use std::ops::Range;
use std::os::raw::c_int;

/// An MPI operation that cannot run: MPI not initialized, a rank count that does not divide a
/// grid, buffer lengths that differ between ranks, a message larger than MPI's `int` count, a
/// receive of another length than was sent, an error of MPI itself. It converts into
/// [`Error::Layer`]; `err.layer::<MpiError>()` gives it back.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("mpi: {op}: {detail}")]
pub struct MpiError {
    /// The operation.
    pub op: &'static str,
    /// What is wrong and what to change.
    pub detail: String,
}

impl From<MpiError> for Error {
    fn from(e: MpiError) -> Error {
        Error::Layer(crate::error::LayerError::new(e))
    }
}

/// The `mpi` crate (rsmpi) strata uses, for what strata does not wrap.
pub use ::mpi as rsmpi;

/// MPI, initialized by [`init`]; finalized when dropped (after which MPI cannot start again).
pub struct Mpi {
    _universe: mpi::environment::Universe,
}

impl std::fmt::Debug for Mpi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mpi")
    }
}

/// Starts MPI (`MPI_Init_thread`, MPI calls from the main thread only: `MPI_THREAD_FUNNELED`).
/// Fails with [`MpiError`] when MPI is already initialized or was finalized.
pub fn init() -> Result<Mpi> {
    if mpi::environment::is_finalized() {
        return Err(mpi_error(
            "init",
            "MPI was finalized; it cannot start again",
        ));
    }
    match mpi::initialize_with_threading(mpi::Threading::Funneled) {
        Some((universe, _)) => Ok(Mpi {
            _universe: universe,
        }),
        None => Err(mpi_error(
            "init",
            "MPI is already initialized (init must be called once per process)",
        )),
    }
}

impl Mpi {
    /// Every rank ([`Comm::world`]).
    pub fn world(&self) -> Result<Comm> {
        Comm::world()
    }
}

fn mpi_error(op: &'static str, detail: impl Into<String>) -> Error {
    MpiError {
        op,
        detail: detail.into(),
    }
    .into()
}

/// The MPI library's message for an error code.
fn check(op: &'static str, code: c_int) -> Result<()> {
    if code == 0 {
        return Ok(());
    }
    let mut buf = vec![0u8; 1024];
    let mut len: c_int = 0;
    // SAFETY: the buffer has MPI_MAX_ERROR_STRING (256 in OpenMPI, 1024 here) bytes.
    unsafe { ffi::MPI_Error_string(code, buf.as_mut_ptr().cast(), &mut len) };
    buf.truncate(len.max(0) as usize);
    Err(mpi_error(
        op,
        format!("MPI error {code}: {}", String::from_utf8_lossy(&buf)),
    ))
}

/// A communicator: every rank of the job ([`Comm::world`]). Messages travel on a duplicate of
/// `MPI_COMM_WORLD`, so they never match the application's own messages on the world.
pub struct Comm {
    comm: mpi::topology::SimpleCommunicator,
    rank: usize,
    size: usize,
    cuda_aware: bool,
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Comm(rank {} of {})", self.rank, self.size)
    }
}

/// The number of bytes of `len` elements of `T` as MPI's `int` count.
fn count<T>(op: &'static str, len: usize) -> Result<c_int> {
    let bytes = len.saturating_mul(std::mem::size_of::<T>());
    c_int::try_from(bytes).map_err(|_| {
        mpi_error(
            op,
            format!(
                "{bytes} bytes do not fit MPI's int count; send at most {} bytes per message",
                c_int::MAX
            ),
        )
    })
}

fn range_check<T>(op: &'static str, buf: &Buffer<T>, range: &Range<usize>) -> Result<()> {
    if range.start > range.end || range.end > buf.len() {
        return Err(Error::BufferRange {
            op,
            detail: format!(
                "range {}..{} does not fit a buffer of {} elements",
                range.start,
                range.end,
                buf.len()
            ),
        });
    }
    Ok(())
}

/// Whether OpenMPI's `MPIX_Query_cuda_support` exists in this process and says yes.
fn query_cuda_support() -> bool {
    #[cfg(unix)]
    {
        // SAFETY: looks up a symbol of the running process; the function takes no arguments.
        unsafe {
            let Ok(this) = libloading::os::unix::Library::this()
                .get::<unsafe extern "C" fn() -> c_int>(b"MPIX_Query_cuda_support\0")
            else {
                return false;
            };
            this() == 1
        }
    }
    #[cfg(not(unix))]
    {
        false
    }
}

impl Comm {
    /// Every rank of the job (a duplicate of `MPI_COMM_WORLD` whose errors are returned, not
    /// fatal). Fails with [`MpiError`] when MPI is not initialized ([`init`]) or finalized.
    pub fn world() -> Result<Comm> {
        if !mpi::environment::is_initialized() || mpi::environment::is_finalized() {
            return Err(mpi_error(
                "world",
                "MPI is not initialized; call strata::multi::mpi::init() first (and keep what it returns alive)",
            ));
        }
        let world = mpi::topology::SimpleCommunicator::world();
        let mut dup = std::mem::MaybeUninit::uninit();
        // SAFETY: MPI is initialized; the world communicator is valid.
        check("world", unsafe {
            ffi::MPI_Comm_dup(world.as_raw(), dup.as_mut_ptr())
        })?;
        // SAFETY: MPI_Comm_dup succeeded and wrote the handle.
        let raw = unsafe { dup.assume_init() };
        // SAFETY: a valid communicator handle.
        check("world", unsafe {
            ffi::MPI_Comm_set_errhandler(raw, ffi::RSMPI_ERRORS_RETURN)
        })?;
        // SAFETY: a valid intra-communicator, freed by Comm's Drop.
        let comm = unsafe { mpi::topology::SimpleCommunicator::from_raw(raw) };
        Ok(Comm {
            rank: comm.rank() as usize,
            size: comm.size() as usize,
            comm,
            cuda_aware: query_cuda_support(),
        })
    }

    /// This process's rank, `0..size`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The `mpi` crate's communicator, for MPI calls strata does not wrap.
    pub fn raw(&self) -> &mpi::topology::SimpleCommunicator {
        &self.comm
    }

    /// Waits until every rank has called it.
    pub fn barrier(&self) {
        self.comm.barrier();
    }

    /// Whether the MPI library takes CUDA device pointers (OpenMPI built with CUDA, asked at
    /// run time). Then buffers on CUDA devices go to MPI without host staging.
    pub fn cuda_aware(&self) -> bool {
        self.cuda_aware
    }

    fn check_rank(&self, op: &'static str, rank: usize) -> Result<c_int> {
        if rank >= self.size {
            return Err(mpi_error(
                op,
                format!(
                    "rank {rank} does not exist: the job has {} ranks",
                    self.size
                ),
            ));
        }
        Ok(rank as c_int)
    }

    /// A CUDA device pointer to element `offset` of `buf`, when MPI takes device pointers.
    fn device_pointer<T>(&self, buf: &Buffer<T>, offset: usize) -> Option<*mut std::ffi::c_void> {
        if !self.cuda_aware || buf.device().info().backend != BackendKind::Cuda {
            return None;
        }
        // SAFETY: the pointer is used while `buf` lives, after the queue has finished.
        match unsafe { buf.native() } {
            crate::NativeMemory::Cuda(p) => {
                Some((p as usize + offset * std::mem::size_of::<T>()) as *mut std::ffi::c_void)
            }
            _ => None,
        }
    }

    /// Sends elements `range` of `buf` to rank `dest` with `tag`, and waits until the send
    /// buffer may be reused (the data left this process or MPI copied it). Waits for the
    /// commands enqueued on `queue` before it.
    pub fn send<T: Element>(
        &self,
        queue: &Queue,
        buf: &Buffer<T>,
        range: Range<usize>,
        dest: usize,
        tag: i32,
    ) -> Result<()> {
        self.isend(queue, buf, range, dest, tag)?.wait()
    }

    /// Starts sending elements `range` of `buf` to rank `dest` with `tag`; the returned request
    /// owns the staged data until [`SendRequest::wait`] (dropping it waits too).
    pub fn isend<T: Element>(
        &self,
        queue: &Queue,
        buf: &Buffer<T>,
        range: Range<usize>,
        dest: usize,
        tag: i32,
    ) -> Result<SendRequest> {
        range_check("send", buf, &range)?;
        let dest = self.check_rank("send", dest)?;
        let n = count::<T>("send", range.len())?;
        let mut req = SendRequest {
            request: std::mem::MaybeUninit::uninit(),
            data: Vec::new(),
            started: false,
        };
        let ptr: *const std::ffi::c_void = match self.device_pointer(buf, range.start) {
            Some(p) => {
                queue.finish()?;
                p
            }
            None => {
                let host = queue.read_range(buf, range)?;
                req.data = bytemuck::cast_slice::<T, u8>(&host).to_vec();
                req.data.as_ptr().cast()
            }
        };
        // SAFETY: `ptr` points to `n` bytes that live in `req` (or in `buf`'s device memory,
        // kept by the caller's buffer) until the request completes.
        check("send", unsafe {
            ffi::MPI_Isend(
                ptr,
                n,
                ffi::RSMPI_UINT8_T,
                dest,
                tag,
                self.comm.as_raw(),
                req.request.as_mut_ptr(),
            )
        })?;
        req.started = true;
        Ok(req)
    }

    /// Receives a message from rank `src` with `tag` into elements `range` of `buf` (the
    /// write is enqueued on `queue` and waited for). The message must hold exactly
    /// `range.len()` elements: another length is an [`MpiError`] (the message is consumed).
    pub fn recv<T: Element>(
        &self,
        queue: &Queue,
        buf: &Buffer<T>,
        range: Range<usize>,
        src: usize,
        tag: i32,
    ) -> Result<()> {
        range_check("recv", buf, &range)?;
        let src = self.check_rank("recv", src)?;
        let n = count::<T>("recv", range.len())?;
        let mut status = std::mem::MaybeUninit::uninit();
        // SAFETY: valid communicator; the status is written by MPI.
        check("recv", unsafe {
            ffi::MPI_Probe(src, tag, self.comm.as_raw(), status.as_mut_ptr())
        })?;
        let mut got: c_int = 0;
        // SAFETY: the status MPI_Probe wrote.
        check("recv", unsafe {
            ffi::MPI_Get_count(status.as_ptr(), ffi::RSMPI_UINT8_T, &mut got)
        })?;
        if got != n {
            // Consume the message, so that the ranks stay in step, then report.
            let mut scratch = vec![0u8; got.max(0) as usize];
            // SAFETY: `scratch` holds the probed message's bytes.
            check("recv", unsafe {
                ffi::MPI_Recv(
                    scratch.as_mut_ptr().cast(),
                    got,
                    ffi::RSMPI_UINT8_T,
                    src,
                    tag,
                    self.comm.as_raw(),
                    ffi::RSMPI_STATUS_IGNORE,
                )
            })?;
            return Err(length_mismatch::<T>(src, got, range.len()));
        }
        self.irecv_checked(queue, buf, range, src, n, tag)?.wait()
    }

    /// Starts receiving a message from rank `src` with `tag` into elements `range` of `buf`;
    /// [`RecvRequest::wait`] completes it and writes the data (a message of another length
    /// than `range.len()` elements is then an [`MpiError`]).
    pub fn irecv<T: Element>(
        &self,
        queue: &Queue,
        buf: &Buffer<T>,
        range: Range<usize>,
        src: usize,
        tag: i32,
    ) -> Result<RecvRequest<T>> {
        range_check("recv", buf, &range)?;
        let src = self.check_rank("recv", src)?;
        let n = count::<T>("recv", range.len())?;
        self.irecv_checked(queue, buf, range, src, n, tag)
    }

    fn irecv_checked<T: Element>(
        &self,
        queue: &Queue,
        buf: &Buffer<T>,
        range: Range<usize>,
        src: c_int,
        n: c_int,
        tag: i32,
    ) -> Result<RecvRequest<T>> {
        let direct = self.device_pointer(buf, range.start);
        if direct.is_some() {
            // Nothing on the queue may still write the memory MPI is about to write.
            queue.finish()?;
        }
        let mut req = RecvRequest {
            request: std::mem::MaybeUninit::uninit(),
            // One byte more than expected: a longer message is then reported, not truncated.
            data: if direct.is_some() {
                Vec::new()
            } else {
                vec![0u8; n as usize + 1]
            },
            started: false,
            queue: queue.clone(),
            buf: buf.clone(),
            range,
            src,
            direct: direct.is_some(),
        };
        let (ptr, cap) = match direct {
            Some(p) => (p, n),
            None => (req.data.as_mut_ptr().cast(), n + 1),
        };
        // SAFETY: `ptr` holds `cap` bytes that live in `req` (or in the buffer's device memory)
        // until the request completes.
        check("recv", unsafe {
            ffi::MPI_Irecv(
                ptr,
                cap,
                ffi::RSMPI_UINT8_T,
                src,
                tag,
                self.comm.as_raw(),
                req.request.as_mut_ptr(),
            )
        })?;
        req.started = true;
        Ok(req)
    }

    /// Checks that `len` is the same on every rank (one all-gather); fails on every rank with
    /// [`MpiError`] listing the lengths otherwise.
    pub fn check_same_len(&self, op: &'static str, len: usize) -> Result<()> {
        let mine = len as u64;
        let mut all = vec![0u64; self.size];
        self.comm.all_gather_into(&mine, &mut all[..]);
        if all.iter().any(|&l| l != mine) {
            return Err(mpi_error(
                op,
                format!(
                    "the buffers' lengths differ between ranks (rank: length): {}; every rank must pass the same length",
                    all.iter()
                        .enumerate()
                        .map(|(r, l)| format!("{r}: {l}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// Replaces every element of `buf` by its reduction over all ranks with `op`
    /// (`MPI_Allreduce`), staged through the host. Every rank must pass a buffer of the same
    /// length (checked first: [`MpiError`] on every rank otherwise). Integer sums wrap as
    /// MPI's do; a float sum is a sum in the MPI library's order, which may differ from a
    /// sequential sum by rounding.
    pub fn all_reduce<T: Element + Equivalence>(
        &self,
        queue: &Queue,
        buf: &Buffer<T>,
        op: ReduceOp,
    ) -> Result<()> {
        self.check_same_len("all_reduce", buf.len())?;
        count::<T>("all_reduce", buf.len())?;
        let mine = queue.read(buf)?;
        let mut out = vec![T::zeroed(); mine.len()];
        use mpi::collective::SystemOperation as S;
        let sop = match op {
            ReduceOp::Sum => S::sum(),
            ReduceOp::Product => S::product(),
            ReduceOp::Min => S::min(),
            ReduceOp::Max => S::max(),
        };
        self.comm.all_reduce_into(&mine[..], &mut out[..], sop);
        queue.write(buf, 0.., &out)
    }

    /// The ranks before and after this one along a split ([`RowSplit`]); with `periodic`, the
    /// first and last ranks are neighbours (one rank is its own neighbour).
    fn neighbours(&self, periodic: bool) -> (Option<usize>, Option<usize>) {
        let (r, p) = (self.rank, self.size);
        let before = if r > 0 {
            Some(r - 1)
        } else if periodic {
            Some(p - 1)
        } else {
            None
        };
        let after = if r + 1 < p {
            Some(r + 1)
        } else if periodic {
            Some(0)
        } else {
            None
        };
        (before, after)
    }

    /// Sends `first` to the rank before and `last` to the rank after, and receives what they
    /// send back (`first.len()` elements from the rank before, `last.len()` from the rank
    /// after). Receives are posted before sends, so no order of ranks can deadlock.
    fn swap_layers<T: Element>(&self, first: &[T], last: &[T], periodic: bool) -> Result<Halos<T>> {
        const UP: i32 = 0x5354_0001; // to the rank before
        const DOWN: i32 = 0x5354_0002; // to the rank after
        let (before, after) = self.neighbours(periodic);
        let n_first = count::<T>("exchange_halo", first.len())?;
        let n_last = count::<T>("exchange_halo", last.len())?;
        let from_before = before
            .map(|b| HostRecv::start(self, b as c_int, n_first, DOWN))
            .transpose()?;
        let from_after = after
            .map(|a| HostRecv::start(self, a as c_int, n_last, UP))
            .transpose()?;
        let mut sends = Vec::new();
        if let Some(b) = before {
            sends.push(self.isend_host(bytemuck::cast_slice(first).to_vec(), b as c_int, UP)?);
        }
        if let Some(a) = after {
            sends.push(self.isend_host(bytemuck::cast_slice(last).to_vec(), a as c_int, DOWN)?);
        }
        let mut first_err = Ok(());
        for s in sends {
            first_err = first_err.and(s.wait());
        }
        let unpack = |r: Option<HostRecv>, len: usize| -> Result<Option<Vec<T>>> {
            r.map(|r| {
                let bytes = r.wait::<T>(len)?;
                let mut v = vec![T::zeroed(); len];
                bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(&bytes);
                Ok(v)
            })
            .transpose()
        };
        let got_before = unpack(from_before, first.len());
        let got_after = unpack(from_after, last.len());
        first_err?;
        Ok((got_before?, got_after?))
    }

    /// Exchanges the halo layers of a field split over the ranks along its slowest dimension
    /// ([`RowSplit`]), held in a flat buffer: `halo` layers from the rank before, `interior`
    /// layers of its own, `halo` layers from the rank after, each layer `layer_len` contiguous
    /// elements. Each rank sends its first `halo` own layers to the rank before and its last
    /// `halo` own layers to the rank after, and receives theirs into its halos; the outer
    /// halos of the first and last ranks are left as they are unless `periodic` (then the
    /// first and last ranks are neighbours). Every rank must pass the same `layer_len` and
    /// `halo` (a message of another length is an [`MpiError`]); `interior` must be at least
    /// `halo`. Staged through the host.
    pub fn exchange_halo<T: Element>(
        &self,
        queue: &Queue,
        buf: &Buffer<T>,
        layer_len: usize,
        interior: usize,
        halo: usize,
        periodic: bool,
    ) -> Result<()> {
        let need = (interior + 2 * halo)
            .checked_mul(layer_len)
            .ok_or_else(|| {
                mpi_error(
                    "exchange_halo",
                    "the field's size overflows the address space",
                )
            })?;
        if buf.len() < need {
            return Err(mpi_error(
                "exchange_halo",
                format!(
                    "the buffer has {} elements but {interior} interior and 2 x {halo} halo layers of {layer_len} elements need {need}",
                    buf.len()
                ),
            ));
        }
        check_interior(interior, halo)?;
        let block = halo * layer_len;
        let first = queue.enqueue_read(buf, block..2 * block, &[])?;
        let last_at = interior * layer_len;
        let last = queue.enqueue_read(buf, last_at..last_at + block, &[])?;
        let (first, last) = (first.wait()?, last.wait()?);
        let (b, a) = self.swap_layers(&first, &last, periodic)?;
        if let Some(b) = b {
            queue.write(buf, 0.., &b)?;
        }
        if let Some(a) = a {
            queue.write(buf, (halo + interior) * layer_len.., &a)?;
        }
        Ok(())
    }

    /// [`Comm::exchange_halo`] for a 2-D field of extent `[width, rows]` split by rows:
    /// `halo` halo rows, the rank's own rows, `halo` halo rows. Rows travel packed (`width`
    /// elements), so ranks on devices with other row pitches exchange correctly.
    pub fn exchange_halo_2d<T: Element>(
        &self,
        queue: &Queue,
        field: &Buffer2<T>,
        halo: usize,
        periodic: bool,
    ) -> Result<()> {
        let [width, rows] = field.extent();
        let interior = rows.checked_sub(2 * halo).ok_or_else(|| {
            mpi_error(
                "exchange_halo",
                format!("{rows} rows cannot hold 2 x {halo} halo rows"),
            )
        })?;
        check_interior(interior, halo)?;
        let first = queue.read_region(field, [0, halo], [width, halo])?;
        let last = queue.read_region(field, [0, interior], [width, halo])?;
        let (b, a) = self.swap_layers(&first, &last, periodic)?;
        if let Some(b) = b {
            queue.write_region(field, [0, 0], [width, halo], &b)?;
        }
        if let Some(a) = a {
            queue.write_region(field, [0, halo + interior], [width, halo], &a)?;
        }
        Ok(())
    }

    /// [`Comm::exchange_halo`] for a 3-D field of extent `[width, height, depth]` split by
    /// planes: `halo` halo planes, the rank's own planes, `halo` halo planes (planes travel
    /// packed, as in [`Comm::exchange_halo_2d`]).
    pub fn exchange_halo_3d<T: Element>(
        &self,
        queue: &Queue,
        field: &Buffer3<T>,
        halo: usize,
        periodic: bool,
    ) -> Result<()> {
        let [width, height, depth] = field.extent();
        let interior = depth.checked_sub(2 * halo).ok_or_else(|| {
            mpi_error(
                "exchange_halo",
                format!("{depth} planes cannot hold 2 x {halo} halo planes"),
            )
        })?;
        check_interior(interior, halo)?;
        let first = queue.read_region(field, [0, 0, halo], [width, height, halo])?;
        let last = queue.read_region(field, [0, 0, interior], [width, height, halo])?;
        let (b, a) = self.swap_layers(&first, &last, periodic)?;
        if let Some(b) = b {
            queue.write_region(field, [0, 0, 0], [width, height, halo], &b)?;
        }
        if let Some(a) = a {
            queue.write_region(field, [0, 0, halo + interior], [width, height, halo], &a)?;
        }
        Ok(())
    }

    fn isend_host(&self, data: Vec<u8>, dest: c_int, tag: i32) -> Result<SendRequest> {
        let n = count::<u8>("send", data.len())?;
        let mut req = SendRequest {
            request: std::mem::MaybeUninit::uninit(),
            data,
            started: false,
        };
        // SAFETY: the data lives in `req` (a Vec's heap block does not move) until the request
        // completes.
        check("send", unsafe {
            ffi::MPI_Isend(
                req.data.as_ptr().cast(),
                n,
                ffi::RSMPI_UINT8_T,
                dest,
                tag,
                self.comm.as_raw(),
                req.request.as_mut_ptr(),
            )
        })?;
        req.started = true;
        Ok(req)
    }
}

/// The layers received from the rank before and the rank after (none where there is no such
/// neighbour).
type Halos<T> = (Option<Vec<T>>, Option<Vec<T>>);

fn check_interior(interior: usize, halo: usize) -> Result<()> {
    if interior < halo {
        return Err(mpi_error(
            "exchange_halo",
            format!("{interior} interior layers are fewer than the {halo} halo layers a neighbour needs; use fewer ranks"),
        ));
    }
    Ok(())
}

/// A receive into host memory (one byte more than expected, so a longer message is reported
/// rather than truncated).
struct HostRecv {
    request: std::mem::MaybeUninit<ffi::MPI_Request>,
    data: Vec<u8>,
    started: bool,
    src: c_int,
}

impl HostRecv {
    fn start(comm: &Comm, src: c_int, n: c_int, tag: i32) -> Result<HostRecv> {
        let mut r = HostRecv {
            request: std::mem::MaybeUninit::uninit(),
            data: vec![0u8; n as usize + 1],
            started: false,
            src,
        };
        // SAFETY: the data lives in `r` until the request completes (Drop waits).
        check("recv", unsafe {
            ffi::MPI_Irecv(
                r.data.as_mut_ptr().cast(),
                n + 1,
                ffi::RSMPI_UINT8_T,
                src,
                tag,
                comm.comm.as_raw(),
                r.request.as_mut_ptr(),
            )
        })?;
        r.started = true;
        Ok(r)
    }

    /// Waits; the message must be `len` elements of `T`.
    fn wait<T>(mut self, len: usize) -> Result<Vec<u8>> {
        let got = wait_request(&mut self.request, &mut self.started)?;
        let want = len * std::mem::size_of::<T>();
        if got != want {
            return Err(length_mismatch::<T>(self.src, got as c_int, len));
        }
        let mut data = std::mem::take(&mut self.data);
        data.truncate(want);
        Ok(data)
    }
}

impl Drop for HostRecv {
    fn drop(&mut self) {
        let _ = wait_request(&mut self.request, &mut self.started);
    }
}

/// Completes a started receive; returns the bytes received.
fn wait_request(
    request: &mut std::mem::MaybeUninit<ffi::MPI_Request>,
    started: &mut bool,
) -> Result<usize> {
    if !std::mem::take(started) {
        return Ok(0);
    }
    let mut status = std::mem::MaybeUninit::uninit();
    // SAFETY: a request MPI_Irecv started and nobody completed.
    let code = unsafe { ffi::MPI_Wait(request.as_mut_ptr(), status.as_mut_ptr()) };
    if code != 0 {
        // A message longer than the receive (MPI_ERR_TRUNCATE) lands here.
        return Err(check("recv", code)
            .err()
            .unwrap_or_else(|| mpi_error("recv", "the receive failed")));
    }
    let mut got: c_int = 0;
    // SAFETY: the status MPI_Wait wrote.
    check("recv", unsafe {
        ffi::MPI_Get_count(status.as_ptr(), ffi::RSMPI_UINT8_T, &mut got)
    })?;
    Ok(got.max(0) as usize)
}

fn length_mismatch<T>(src: c_int, got_bytes: c_int, want: usize) -> Error {
    let sz = std::mem::size_of::<T>();
    mpi_error(
        "recv",
        format!(
            "rank {src} sent {got_bytes} bytes ({} elements of {sz} bytes) but the receiving range holds {want} elements; the lengths of a send and its receive must agree",
            got_bytes as usize / sz.max(1)
        ),
    )
}

/// The reduction of [`Comm::all_reduce`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// `MPI_SUM`.
    Sum,
    /// `MPI_PROD`.
    Product,
    /// `MPI_MIN`.
    Min,
    /// `MPI_MAX`.
    Max,
}

/// A non-blocking send ([`Comm::isend`]); owns the staged data until the send completes.
/// Dropping it waits for the send.
pub struct SendRequest {
    request: std::mem::MaybeUninit<ffi::MPI_Request>,
    data: Vec<u8>,
    started: bool,
}

impl std::fmt::Debug for SendRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SendRequest({} bytes staged)", self.data.len())
    }
}

impl SendRequest {
    /// Waits until the send buffer may be reused.
    pub fn wait(mut self) -> Result<()> {
        self.finish()
    }

    fn finish(&mut self) -> Result<()> {
        if !std::mem::take(&mut self.started) {
            return Ok(());
        }
        // SAFETY: a request MPI_Isend started and nobody completed.
        check("send", unsafe {
            ffi::MPI_Wait(self.request.as_mut_ptr(), ffi::RSMPI_STATUS_IGNORE)
        })
    }
}

impl Drop for SendRequest {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// A non-blocking receive ([`Comm::irecv`]): [`RecvRequest::wait`] completes it and writes the
/// data into the buffer. Dropping it waits for the message (and discards it).
pub struct RecvRequest<T> {
    request: std::mem::MaybeUninit<ffi::MPI_Request>,
    data: Vec<u8>,
    started: bool,
    queue: Queue,
    buf: Buffer<T>,
    range: Range<usize>,
    src: c_int,
    direct: bool,
}

impl<T> std::fmt::Debug for RecvRequest<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RecvRequest(from rank {} into {:?})",
            self.src, self.range
        )
    }
}

impl<T: Element> RecvRequest<T> {
    /// Waits for the message and writes it into the buffer's range (through the queue, waited
    /// for). A message of another length than the range is an [`MpiError`].
    pub fn wait(mut self) -> Result<()> {
        let got = self.complete()?;
        let want = self.range.len() * std::mem::size_of::<T>();
        if got != want {
            return Err(length_mismatch::<T>(
                self.src,
                got as c_int,
                self.range.len(),
            ));
        }
        if self.direct {
            return Ok(());
        }
        let mut host = vec![T::zeroed(); self.range.len()];
        bytemuck::cast_slice_mut::<T, u8>(&mut host).copy_from_slice(&self.data[..want]);
        self.queue.write(&self.buf, self.range.start.., &host)
    }
}

impl<T> RecvRequest<T> {
    /// Completes the request; returns the bytes received.
    fn complete(&mut self) -> Result<usize> {
        wait_request(&mut self.request, &mut self.started)
    }
}

impl<T> Drop for RecvRequest<T> {
    fn drop(&mut self) {
        let _ = self.complete();
    }
}

/// A grid's rows (or planes) split over the ranks, in rank order: rank `r` owns rows
/// `first..first + rows` of the global grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowSplit {
    /// Rows of the whole grid.
    pub total: usize,
    /// The first row this rank owns.
    pub first: usize,
    /// Number of rows this rank owns.
    pub rows: usize,
}

impl RowSplit {
    /// Splits `total` rows over the ranks of `comm`. With `even`, every rank gets the same
    /// number and a rank count that does not divide `total` is an [`MpiError`]; without, the
    /// first `total % size` ranks get one row more. Fewer rows than ranks is an error either
    /// way.
    pub fn new(comm: &Comm, total: usize, even: bool) -> Result<RowSplit> {
        RowSplit::of(comm.rank(), comm.size(), total, even)
    }

    /// The split of `total` rows for rank `rank` of `size` (what [`RowSplit::new`] computes).
    pub fn of(rank: usize, size: usize, total: usize, even: bool) -> Result<RowSplit> {
        if size == 0 || rank >= size {
            return Err(mpi_error("split", format!("rank {rank} of {size} ranks")));
        }
        if total < size {
            return Err(mpi_error(
                "split",
                format!(
                    "{total} rows cannot be split over {size} ranks: every rank needs at least one"
                ),
            ));
        }
        if even && !total.is_multiple_of(size) {
            return Err(mpi_error(
                "split",
                format!(
                    "{size} ranks do not divide {total} rows; run with a rank count that divides it (e.g. {}) or allow an uneven split",
                    divisors_up_to(total, size.max(8)).join(", ")
                ),
            ));
        }
        let base = total / size;
        let extra = total % size;
        let rows = base + usize::from(rank < extra);
        let first = rank * base + rank.min(extra);
        Ok(RowSplit { total, first, rows })
    }
}

fn divisors_up_to(n: usize, max: usize) -> Vec<String> {
    (1..=max.min(n))
        .filter(|d| n.is_multiple_of(*d))
        .map(|d| d.to_string())
        .collect()
}

//! The error type of the runtime and front end. Every variant says what went wrong and what to
//! change; kernel faults name the kernel, the memory, the index and the work-item.
//!
//! This is the bottom layer: it names no module above it. The layers built on the runtime
//! (tensor fields, tuning, device sets, MPI) define their own error types beside their code
//! and convert them into [`Error::Layer`].

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// Coordinates of a work-item: its global, local and group ids.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
#[non_exhaustive]
pub struct WorkItem {
    /// `global_id(0..3)`
    pub global: [u32; 3],
    /// `local_id(0..3)`
    pub local: [u32; 3],
    /// `group_id(0..3)`
    pub group: [u32; 3],
}

impl std::fmt::Display for WorkItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [gx, gy, gz] = self.global;
        let [lx, ly, lz] = self.local;
        let [wx, wy, wz] = self.group;
        write!(f, "work-item global ({gx}, {gy}, {gz}), local ({lx}, {ly}, {lz}) in work-group ({wx}, {wy}, {wz})")
    }
}

/// Where an out-of-bounds access to a 2-D or 3-D buffer pointed ([`Error::OutOfBounds`]):
/// decoded on the host from the flat index the kernel computed (`(z * slice_pitch) + y *
/// pitch + x`, in `u32`) and the pitches of the buffer passed. A coordinate below 0, which
/// wrapped in the kernel's arithmetic, is shown negative, as the kernel wrote it; the
/// outermost coordinate carries what lies outside (a column past the pitch is counted in the
/// next row, as the flat index cannot tell them apart).
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct Coords {
    /// The coordinates, outermost first: `[y, x]` or `[z, y, x]`.
    pub at: Vec<i64>,
    /// The buffer's extent, outermost first: `[height, width]` or `[depth, height, width]`.
    pub extent: Vec<u64>,
}

impl Coords {
    pub(crate) fn new(at: Vec<i64>, extent: Vec<u64>) -> Coords {
        Coords { at, extent }
    }
}

/// `index 7` or `(y, x) = (-1, 3)`: what an out-of-bounds access pointed at.
fn out_of_bounds_where(index: i64, coords: &Option<Box<Coords>>) -> String {
    match coords {
        None => format!("index {index}"),
        Some(c) => {
            let names = if c.at.len() == 3 { "z, y, x" } else { "y, x" };
            let at: Vec<String> = c.at.iter().map(i64::to_string).collect();
            format!("({names}) = ({})", at.join(", "))
        }
    }
}

/// ` of length 3072`, or `, a 48×64 image (flat index 4294967235 of 3072 elements, ...)`.
fn out_of_bounds_of(index: i64, len: u64, coords: &Option<Box<Coords>>) -> String {
    match coords {
        None => format!(" of length {len}"),
        Some(c) => {
            let extent: Vec<String> = c.extent.iter().map(u64::to_string).collect();
            let what = if c.extent.len() == 3 {
                "volume"
            } else {
                "image"
            };
            format!(
                ", a {} {what} (flat index {index} of {len} elements, padding included)",
                extent.join("×")
            )
        }
    }
}

/// One of the two accesses of a data race ([`Error::DataRace`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct RaceAccess {
    /// `write` or `read`.
    pub access: &'static str,
    /// The work-item.
    pub item: WorkItem,
    /// The line of the kernel's source.
    pub at: crate::ir::SourceLoc,
}

impl RaceAccess {
    pub(crate) fn new(access: &'static str, item: WorkItem, at: crate::ir::SourceLoc) -> Self {
        RaceAccess { access, item, at }
    }
}

impl std::fmt::Display for RaceAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} by {}{}",
            self.access,
            self.item,
            crate::ir::source_suffix(self.at)
        )
    }
}

/// Everything that can go wrong in strata.
///
/// Its `Debug` form leads with the message (the `Display` text), so an error returned from
/// `fn main() -> strata::Result<()>` or shown by `unwrap` reads as the message; `{:#?}` adds
/// the variant and its fields after it:
///
/// ```
/// let e = strata::Device::from_spec("gpu").unwrap_err();
/// assert!(format!("{e:?}").starts_with("invalid device `gpu`: write `cpu`"));
/// assert!(format!("{e:#?}").ends_with("InvalidDeviceSpec(\n    \"gpu\",\n)"));
/// ```
#[derive(Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A device spec string could not be parsed.
    #[error(
        "invalid device `{0}`: write `cpu`, `interp`, `opencl:N`, `cuda:N`, `vulkan:N` or `best`, optionally followed by `+checked` (see `strata devices`)"
    )]
    InvalidDeviceSpec(String),

    /// No device matches a spec.
    #[error("no device `{spec}`: {reason}")]
    DeviceNotFound {
        /// The spec asked for.
        spec: String,
        /// Why: which devices exist, or why the backend is missing.
        reason: String,
    },

    /// The kernel body recorded something invalid, or the IR failed validation.
    #[error("{0}")]
    InvalidKernel(String),

    /// A kernel uses a feature the device lacks.
    #[error("kernel `{kernel}` cannot run on {device}: {reason}")]
    Unsupported {
        /// Kernel name.
        kernel: String,
        /// Device name.
        device: String,
        /// The missing feature.
        reason: String,
    },

    /// A backend compiler rejected generated source.
    #[error("kernel `{kernel}` failed to compile for {backend}:\n{log}\n--- generated source ---\n{source_listing}")]
    CompileFailed {
        /// Kernel name.
        kernel: String,
        /// Backend and device.
        backend: String,
        /// The compiler's log.
        log: String,
        /// The generated source with line numbers.
        source_listing: String,
    },

    /// Wrong number of launch arguments.
    #[error("kernel `{kernel}` takes {expected} argument(s) ({signature}), but {got} were given")]
    ArgumentCount {
        /// Kernel name.
        kernel: String,
        /// Parameters expected.
        expected: usize,
        /// Arguments given.
        got: usize,
        /// The parameter list.
        signature: String,
    },

    /// A launch argument has the wrong kind or type.
    #[error("kernel `{kernel}` argument {index} (`{name}`): expected {expected}, got {got}")]
    ArgumentType {
        /// Kernel name.
        kernel: String,
        /// Argument position.
        index: usize,
        /// Parameter name.
        name: String,
        /// What the parameter takes.
        expected: String,
        /// What was given.
        got: String,
    },

    /// A buffer argument has a length other than the one the kernel states.
    #[error("kernel `{kernel}` argument {index} (`{name}`) must have exactly {expected} elements, but the buffer has {got}")]
    ArgumentLength {
        /// Kernel name.
        kernel: String,
        /// Argument position.
        index: usize,
        /// Parameter name.
        name: String,
        /// Length required.
        expected: u64,
        /// Length given.
        got: u64,
    },

    /// One buffer is passed both where the kernel writes and where it declared read-only.
    #[error("kernel `{kernel}`: the same buffer is passed as `{written}` (which the kernel writes) and as `{read_only}` (declared read-only); pass a copy, or declare `{read_only}` read_write")]
    Aliasing {
        /// Kernel name.
        kernel: String,
        /// The written parameter.
        written: String,
        /// The read-only parameter.
        read_only: String,
    },

    /// A host slice or range does not fit the buffer.
    #[error("{op}: {detail}")]
    BufferRange {
        /// The operation (`read`, `write`, `copy`, `fill`).
        op: &'static str,
        /// What does not fit.
        detail: String,
    },

    /// A buffer of one device was used with a queue of another.
    #[error("{op}: the buffer lives on {buffer_device}, but the queue runs on {queue_device}; copy it through the host or allocate it on the queue's device")]
    WrongDevice {
        /// The operation.
        op: &'static str,
        /// The buffer's device.
        buffer_device: String,
        /// The queue's device.
        queue_device: String,
    },

    /// A launch's work sizes are invalid for the kernel or device.
    #[error("invalid work size for kernel `{kernel}`: {reason}")]
    InvalidWorkSize {
        /// Kernel name.
        kernel: String,
        /// What is wrong and how to fix it.
        reason: String,
    },

    /// An allocation does not fit the device.
    #[error("out of memory on {device}: cannot allocate {requested} bytes ({reason})")]
    OutOfMemory {
        /// Device name.
        device: String,
        /// Bytes requested.
        requested: u64,
        /// The limit that was hit.
        reason: String,
    },

    /// A launch was cancelled ([`crate::Run::cancel`]) before it ran or, on the CPU backend,
    /// between work-groups.
    #[error("kernel `{kernel}` was cancelled")]
    Cancelled {
        /// Kernel name.
        kernel: String,
    },

    /// A wait with a time limit ran out; the commands keep running.
    #[error(
        "{what} did not complete within {waited:?}; it keeps running (wait again, or cancel it)"
    )]
    TimedOut {
        /// What was waited for.
        what: String,
        /// The time limit.
        waited: std::time::Duration,
    },

    /// A kernel accessed memory outside its bounds. On a 2-D or 3-D buffer the message names
    /// the coordinates and the extent ([`Coords`]).
    #[error(
        "kernel `{kernel}`: {} is out of bounds for {memory}{}, at {item}{}",
        out_of_bounds_where(*.index, coords),
        out_of_bounds_of(*.index, *.len, coords),
        crate::ir::source_suffix(*.at)
    )]
    OutOfBounds {
        /// Kernel name.
        kernel: String,
        /// The memory, e.g. "buffer `x`".
        memory: String,
        /// The index used.
        index: i64,
        /// The memory's length in elements.
        len: u64,
        /// Which work-item. Where several fault in one launch, one of them, with its own
        /// index and line; which one may differ between backends (the interpreter runs a
        /// work-group in lockstep, `cpu` may run it one work-item at a time, a GPU names
        /// whichever thread recorded first).
        item: WorkItem,
        /// The line of the kernel's source that made the access, where known.
        at: crate::ir::SourceLoc,
        /// On a 2-D or 3-D buffer, the coordinates `index` stands for and the extent.
        coords: Option<Box<Coords>>,
    },

    /// Checked mode (`interp+checked`): two work-items touched the same element of global or
    /// local memory, at least one of them writing and neither through an atomic, with no
    /// barrier between them (or from different work-groups of one launch).
    #[error(
        "kernel `{kernel}`: data race on element {index} of {memory}: {second} and {first}, {why}"
    )]
    DataRace {
        /// Kernel name.
        kernel: String,
        /// The memory, e.g. "buffer `x`".
        memory: String,
        /// The element.
        index: i64,
        /// The earlier access.
        first: Box<RaceAccess>,
        /// The later access, which found the race.
        second: Box<RaceAccess>,
        /// Why they are unordered: no barrier between them, or different work-groups.
        why: &'static str,
    },

    /// Checked mode (`interp+checked`): a work-item read memory nobody wrote: local memory or
    /// a private array element not written before in this launch, or an element of a buffer
    /// made by [`crate::Buffer::uninit`] that nothing has written since.
    #[error("kernel `{kernel}`: element {index} of {memory} is read before anything wrote it ({why}), at {item}{}", crate::ir::source_suffix(*.at))]
    UninitializedRead {
        /// Kernel name.
        kernel: String,
        /// The memory, e.g. "local array `tile`".
        memory: String,
        /// The element.
        index: i64,
        /// Which work-item read it.
        item: WorkItem,
        /// The line of the read.
        at: crate::ir::SourceLoc,
        /// What "before" means for this memory.
        why: &'static str,
    },

    /// A barrier or work-group collective reached by only part of a work-group.
    #[error("kernel `{kernel}`: {what} reached by only {reached} of the {size} work-items of work-group ({gx}, {gy}, {gz}); every work-item of a work-group must reach it (do not put it under a condition that differs between work-items, or after a return)", gx = group[0], gy = group[1], gz = group[2])]
    BarrierDivergence {
        /// Kernel name.
        kernel: String,
        /// `barrier` or the collective's name.
        what: String,
        /// Work-items that reached it.
        reached: usize,
        /// Work-group size.
        size: usize,
        /// The work-group.
        group: [u32; 3],
    },

    /// Any other fault while a kernel ran (integer division by zero, a zero loop step).
    #[error("kernel `{kernel}`: {message}, at {item}")]
    KernelFault {
        /// Kernel name.
        kernel: String,
        /// What happened.
        message: String,
        /// Which work-item (one of them where several fault: see [`Error::OutOfBounds`]).
        item: WorkItem,
    },

    /// A command did not run because a command it waited for failed.
    #[error("not run: a command it waits for failed: {0}")]
    DependencyFailed(String),

    /// A driver or backend call failed.
    #[error("{backend} error: {message}")]
    Backend {
        /// The backend.
        backend: &'static str,
        /// The driver's message.
        message: String,
    },

    /// Running a command panicked (in a stub function's CPU body, say). The command failed;
    /// its queue stays usable.
    #[error("{backend}: running the command panicked: {message}")]
    Panicked {
        /// The backend whose queue ran the command.
        backend: &'static str,
        /// The panic's message.
        message: String,
    },

    /// An error of a layer built on the runtime (tensor fields, tuning, device sets, MPI): each
    /// of those layers defines its own error type, with its own fields, and converts it into
    /// this variant. [`Error::layer`] gives it back by type; the message is the layer error's.
    #[error("{0}")]
    Layer(LayerError),
}

/// The message first (as `anyhow` prints its errors), then the sources of a layer's error, if
/// any; the alternate form (`{:#?}`) adds the variant with its fields.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")?;
        let mut source = match self {
            Error::Layer(l) => std::error::Error::source(l),
            _ => std::error::Error::source(self),
        };
        if source.is_some() {
            write!(f, "\n\nCaused by:")?;
        }
        while let Some(s) = source {
            write!(f, "\n    {s}")?;
            source = s.source();
        }
        if f.alternate() {
            write!(f, "\n\n")?;
            self.fields(f)?;
        }
        Ok(())
    }
}

/// `f.debug_struct("Variant").field("a", a)...finish()` for the fields named.
macro_rules! variant {
    ($f:expr, $name:literal { $($field:ident),* }) => {
        $f.debug_struct($name)$(.field(stringify!($field), $field))*.finish()
    };
    ($f:expr, $name:literal ( $field:expr )) => {
        $f.debug_tuple($name).field($field).finish()
    };
}

impl Error {
    /// The variant and its fields, as `#[derive(Debug)]` would write them.
    fn fields(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidDeviceSpec(s) => variant!(f, "InvalidDeviceSpec"(s)),
            Error::DeviceNotFound { spec, reason } => {
                variant!(f, "DeviceNotFound" { spec, reason })
            }
            Error::InvalidKernel(s) => variant!(f, "InvalidKernel"(s)),
            Error::Unsupported {
                kernel,
                device,
                reason,
            } => variant!(f, "Unsupported" { kernel, device, reason }),
            Error::CompileFailed {
                kernel,
                backend,
                log,
                source_listing,
            } => variant!(f, "CompileFailed" { kernel, backend, log, source_listing }),
            Error::ArgumentCount {
                kernel,
                expected,
                got,
                signature,
            } => variant!(f, "ArgumentCount" { kernel, expected, got, signature }),
            Error::ArgumentType {
                kernel,
                index,
                name,
                expected,
                got,
            } => variant!(f, "ArgumentType" { kernel, index, name, expected, got }),
            Error::ArgumentLength {
                kernel,
                index,
                name,
                expected,
                got,
            } => variant!(f, "ArgumentLength" { kernel, index, name, expected, got }),
            Error::Aliasing {
                kernel,
                written,
                read_only,
            } => variant!(f, "Aliasing" { kernel, written, read_only }),
            Error::BufferRange { op, detail } => variant!(f, "BufferRange" { op, detail }),
            Error::WrongDevice {
                op,
                buffer_device,
                queue_device,
            } => variant!(f, "WrongDevice" { op, buffer_device, queue_device }),
            Error::InvalidWorkSize { kernel, reason } => {
                variant!(f, "InvalidWorkSize" { kernel, reason })
            }
            Error::OutOfMemory {
                device,
                requested,
                reason,
            } => variant!(f, "OutOfMemory" { device, requested, reason }),
            Error::Cancelled { kernel } => variant!(f, "Cancelled" { kernel }),
            Error::TimedOut { what, waited } => variant!(f, "TimedOut" { what, waited }),
            Error::OutOfBounds {
                kernel,
                memory,
                index,
                len,
                item,
                at,
                coords,
            } => variant!(f, "OutOfBounds" { kernel, memory, index, len, item, at, coords }),
            Error::DataRace {
                kernel,
                memory,
                index,
                first,
                second,
                why,
            } => variant!(f, "DataRace" { kernel, memory, index, first, second, why }),
            Error::UninitializedRead {
                kernel,
                memory,
                index,
                item,
                at,
                why,
            } => variant!(f, "UninitializedRead" { kernel, memory, index, item, at, why }),
            Error::BarrierDivergence {
                kernel,
                what,
                reached,
                size,
                group,
            } => variant!(f, "BarrierDivergence" { kernel, what, reached, size, group }),
            Error::KernelFault {
                kernel,
                message,
                item,
            } => variant!(f, "KernelFault" { kernel, message, item }),
            Error::DependencyFailed(s) => variant!(f, "DependencyFailed"(s)),
            Error::Backend { backend, message } => variant!(f, "Backend" { backend, message }),
            Error::Panicked { backend, message } => variant!(f, "Panicked" { backend, message }),
            Error::Layer(l) => variant!(f, "Layer"(l)),
        }
    }
}

impl Error {
    /// The error of a layer above the runtime that this is ([`Error::Layer`]), if it is one of
    /// type `E`: `e.layer::<strata::fields::FieldError>()`, say.
    pub fn layer<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            Error::Layer(l) => l.downcast_ref(),
            _ => None,
        }
    }
}

/// The error of a layer above the runtime, held by [`Error::Layer`]: any error type that can
/// be compared (each layer's own, such as a tensor field's or a device set's, or an
/// application's), shared by the clones of the [`Error`]. Its message and `Debug` form are the
/// inner error's.
#[derive(Clone)]
pub struct LayerError(Arc<dyn AnyLayerError>);

/// What [`LayerError`] needs of the error it holds, for any `E: Error + PartialEq`.
trait AnyLayerError: std::error::Error + Send + Sync + 'static {
    fn as_any(&self) -> &dyn Any;
    fn eq_dyn(&self, other: &dyn AnyLayerError) -> bool;
}

impl<E: std::error::Error + PartialEq + Send + Sync + 'static> AnyLayerError for E {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn eq_dyn(&self, other: &dyn AnyLayerError) -> bool {
        other.as_any().downcast_ref::<E>() == Some(self)
    }
}

impl LayerError {
    /// Wraps a layer's error (each layer's `From` conversion into [`Error`] calls this).
    pub fn new<E>(e: E) -> LayerError
    where
        E: std::error::Error + PartialEq + Send + Sync + 'static,
    {
        LayerError(Arc::new(e))
    }

    /// The inner error, if it is of type `E`.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.0.as_any().downcast_ref()
    }

    /// Whether the inner error is of type `E`.
    pub fn is<E: std::error::Error + 'static>(&self) -> bool {
        self.downcast_ref::<E>().is_some()
    }
}

impl PartialEq for LayerError {
    fn eq(&self, other: &LayerError) -> bool {
        self.0.eq_dyn(&*other.0)
    }
}

impl fmt::Debug for LayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for LayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl std::error::Error for LayerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// The message of a caught panic's payload (from [`std::panic::catch_unwind`]): the text given
/// to `panic!`, or `(no message)`. strata reports panics in stub bodies with it
/// ([`Error::Panicked`]); tools that catch panics themselves (the conformance suite) use it too.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> &str {
    p.downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| p.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)")
}

/// `Result` with strata's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Numbers the lines of generated source, for [`Error::CompileFailed`].
pub fn number_lines(source: &str) -> String {
    let width = source.lines().count().max(1).to_string().len();
    source
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{:>width$} | {l}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

//! Kernels: a [`Kernel`] is IR recorded by the builder (or made by other means), validated
//! and optimized once, built once per distinct IR (a process-wide cache), and compiled once per
//! device on first launch. A kernel also keeps its instrumentation for checked mode and the
//! kernels folding its custom gathers. Its launch ABI, which parameters the launch fills in,
//! is in the IR ([`ir::abi`]); the arguments of a launch are prepared in `args.rs`.
//!
//! The process-wide cache keeps built kernels by the fingerprint of the recorded IR and of
//! its source locations, so recording the same kernel again, as a pattern does at every call,
//! skips validation and optimization, while each recording keeps its own lines for error
//! messages. Compiled code is cached twice: by each device, keyed by the optimized IR's
//! fingerprint (kernels built elsewhere with the same IR share it), and by the `Kernel`
//! itself per device, so a launch does not hash the IR.

use super::CompiledKernel;
use crate::builder::{self, KernelDef};
use crate::error::{Error, Result};
use crate::ir::{self, ParamKind, ValidFunction};
use std::sync::{Arc, Mutex};

/// A kernel built from a Rust closure: validated, optimized IR, compiled per device on first
/// launch and cached. Cheap to clone.
#[derive(Clone)]
pub struct Kernel {
    inner: Arc<KernelInner>,
}

struct KernelInner {
    valid: Arc<ValidFunction>,
    /// [`ir::Function::fingerprint`] of the optimized IR: the device caches' key.
    key: u128,
    /// The optimized IR as text, printed when first asked for (it can be large: see
    /// `fingerprint`).
    text: std::sync::OnceLock<String>,
    /// The kernels that fold the partials of the custom gathers, by the gathers' parameters.
    combiners: Vec<(ir::ParamId, Kernel)>,
    /// This kernel compiled, per device (the device's identity): a launch finds its code
    /// without hashing the IR text for the device's cache.
    compiled: Mutex<Vec<(usize, Arc<dyn CompiledKernel>)>>,
    /// The kernel instrumented, each made when first launched on a device that needs it, by
    /// [`Twin::slot`]: for checked mode ([`ir::checked::instrument`]), with its accesses
    /// bounds-checked only ([`ir::checked::instrument_bounds`], for devices that run kernels
    /// in the host's memory), and both with the test for loops the driver cut
    /// ([`ir::checked::instrument_cutting_loops`]).
    twins: [std::sync::OnceLock<Result<Arc<CheckedKernel>>>; 4],
}

/// Which instrumented form of a kernel a device launches (see [`Kernel::twin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Twin {
    /// Checked mode's full instrumentation; else the bounds checks only.
    pub(crate) full: bool,
    /// With every loop tested for an early end by the driver.
    pub(crate) cuts: bool,
}

impl Twin {
    fn slot(self) -> usize {
        self.full as usize + 2 * self.cuts as usize
    }
}

/// A kernel instrumented for checked mode ([`ir::checked::instrument`]), validated and
/// optimized.
pub(crate) struct CheckedKernel {
    pub(crate) valid: Arc<ValidFunction>,
    pub(crate) key: u128,
    pub(crate) sites: Vec<ir::checked::CheckSite>,
}

impl Kernel {
    /// This kernel's code for the device identified by `device`, if compiled for it before.
    pub(crate) fn compiled_for(&self, device: usize) -> Option<Arc<dyn CompiledKernel>> {
        let memo = self.inner.compiled.lock().unwrap();
        memo.iter()
            .find(|(d, k)| *d == device && !k.stale())
            .map(|(_, k)| k.clone())
    }

    /// Remembers this kernel's code for the device identified by `device` (in place of code
    /// lost with the device's context).
    pub(crate) fn remember_compiled(&self, device: usize, k: Arc<dyn CompiledKernel>) {
        let mut memo = self.inner.compiled.lock().unwrap();
        memo.retain(|(d, old)| *d != device || !old.stale());
        if !memo.iter().any(|(d, _)| *d == device) {
            memo.push((device, k));
        }
    }
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kernel({})", self.name())
    }
}

impl Kernel {
    /// Records `body` into a kernel called `name` (a C identifier), validates and optimizes it.
    /// Rust values captured by `body` are compile-time constants: building again with other
    /// values gives another kernel (compiled separately), building again with the same values
    /// gives the same IR, which devices do not compile twice. A device prints the optimized
    /// IR of every kernel it compiles when its settings ask for it
    /// ([`Settings::dump`](crate::Settings::dump)).
    ///
    /// Building compiles for no device: the first launch on each device compiles the kernel
    /// for it (on PoCL or NVRTC that can take seconds, counted in that launch's time).
    /// [`Kernel::compile_on`] pays it up front.
    pub fn build(name: &str, body: impl FnOnce(&mut KernelDef)) -> Result<Kernel> {
        let f = builder::record(name, body).map_err(|e| Error::InvalidKernel(e.to_string()))?;
        Kernel::from_ir(f)
    }

    /// Compiles this kernel for `device` (a [`Device`](crate::Device) or a
    /// [`Queue`](crate::Queue), whose device is meant) now, instead of in its first launch
    /// there: a program that times its launches, or must not pause at the first one, compiles
    /// its kernels before. The compiled code is kept (the device's cache, and the kernel
    /// itself), so the launches after do not compile again; compiling again does nothing. On
    /// a checked device it compiles the checked twin that its launches run. Fails with the
    /// errors the first launch would have given for the kernel alone: a feature the device
    /// lacks ([`Error::Unsupported`]), or the backend's compiler's
    /// ([`Error::CompileFailed`], with the generated source).
    ///
    /// ```
    /// use strata::prelude::*;
    ///
    /// #[kernel]
    /// fn double(x: &mut [u32]) {
    ///     let i = global_id(0);
    ///     if i < x.len() {
    ///         x[i] = x[i] * 2;
    ///     }
    /// }
    ///
    /// # fn main() -> strata::Result<()> {
    /// let device = Device::from_spec("cpu")?;
    /// let queue = Queue::new(&device)?;
    /// let double = double::build()?;
    /// double.compile_on(&device)?; // compiles now
    /// let x = Buffer::from_slice(&queue, &[1u32, 2, 3])?;
    /// let compiled = device.compile_count();
    /// double.launch(&queue, NdRange::new(3), &x)?; // does not compile
    /// assert_eq!(device.compile_count(), compiled);
    /// # Ok(())
    /// # }
    /// ```
    pub fn compile_on(&self, device: impl AsRef<crate::Device>) -> Result<()> {
        device.as_ref().compile(self)
    }

    /// A kernel from IR: recorded with [`builder::record`], or built by other means (a
    /// generator, a future front end). Its hidden parameters ([`ir::Function::hidden`]) are
    /// what launches fill in; the combining kernel of a custom gather
    /// ([`ir::Gather::combine`]) is built here too, before the kernel.
    pub fn from_ir(f: ir::Function) -> Result<Kernel> {
        let mut combiners = Vec::new();
        for (param, g) in f.gathers() {
            if let Some(c) = &g.combine {
                let k = Kernel::from_ir((**c).clone()).map_err(|e| {
                    Error::InvalidKernel(format!(
                        "kernel `{}` is invalid:\n  the combining function of gather {}: {e}",
                        f.name, g.index
                    ))
                })?;
                combiners.push((param, k));
            }
        }
        // The same recorded IR again (a pattern called in a loop records its kernel at every
        // call) is the same kernel: validation and optimization, most of the cost of a build,
        // run once per distinct IR.
        // Source locations are part of this key (not of the devices' cache key), so that a
        // kernel recorded at another place names its own lines in errors.
        let traced = f.fingerprint() ^ u128::from(f.locations_fingerprint());
        let hit = BUILT.lock().unwrap().get(&traced).cloned();
        let k = match hit {
            Some(k) => k,
            None => {
                let k = Kernel::validated(f, combiners)?;
                let mut built = BUILT.lock().unwrap();
                if built.len() >= KEPT_BUILDS {
                    built.clear();
                }
                built.insert(traced, k.clone());
                k
            }
        };
        note_built(&k);
        Ok(k)
    }

    /// Validates and optimizes recorded IR into a new kernel.
    fn validated(f: ir::Function, combiners: Vec<(ir::ParamId, Kernel)>) -> Result<Kernel> {
        // The IR is printed only for an error message (or a dump, or `ir_text`). The one
        // copy kept is the input, for the message of an optimization bug.
        let f = ir::validate_keeping(f)
            .map_err(|(e, f)| Error::InvalidKernel(format!("{e}\n--- IR ---\n{f}")))?
            .into_function();
        let before = f.clone();
        let opts = ir::passes::PassOptions {
            validate_each: false,
            ..Default::default()
        };
        let optimized = ir::passes::optimize(f, &opts);
        let key = optimized.fingerprint();
        let valid = ir::validate_keeping(optimized).map_err(|(e, optimized)| {
            Error::InvalidKernel(format!("strata bug: optimization produced invalid IR: {e}\n--- IR before ---\n{before}\n--- after ---\n{optimized}"))
        })?;
        drop(before);
        Ok(Kernel {
            inner: Arc::new(KernelInner {
                valid: Arc::new(valid),
                key,
                text: std::sync::OnceLock::new(),
                combiners,
                compiled: Mutex::new(Vec::new()),
                twins: Default::default(),
            }),
        })
    }

    /// The kernel instrumented for checked mode (made once).
    pub(crate) fn checked(&self) -> Result<Arc<CheckedKernel>> {
        self.twin(Twin {
            full: true,
            cuts: false,
        })
    }

    /// The kernel instrumented as `twin` says, validated and optimized (made once).
    pub(crate) fn twin(&self, twin: Twin) -> Result<Arc<CheckedKernel>> {
        let f = self.inner.valid.function();
        let rewrite = || match (twin.full, twin.cuts) {
            (full, true) => ir::checked::instrument_cutting_loops(f, full),
            (true, false) => ir::checked::instrument(f),
            (false, false) => ir::checked::instrument_bounds(f),
        };
        let cell = &self.inner.twins[twin.slot()];
        cell.get_or_init(|| {
                let ins = rewrite();
                let bug = |e: ir::ValidationErrors, f: &ir::Function| {
                    Error::InvalidKernel(format!(
                        "strata bug: checked mode's instrumentation produced invalid IR: {e}\n--- IR ---\n{f}"
                    ))
                };
                let valid = ir::validate_keeping(ins.function).map_err(|(e, f)| bug(e, &f))?;
                let opts = ir::passes::PassOptions {
                    validate_each: false,
                    ..Default::default()
                };
                let optimized = ir::passes::optimize(valid.into_function(), &opts);
                let key = optimized.fingerprint();
                let valid = ir::validate_keeping(optimized).map_err(|(e, f)| bug(e, &f))?;
                Ok(Arc::new(CheckedKernel {
                    valid: Arc::new(valid),
                    key,
                    sites: ins.sites,
                }))
            })
        .clone()
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.inner.valid.function().name
    }

    /// The optimized IR.
    pub fn ir(&self) -> &ir::Function {
        self.inner.valid.function()
    }

    /// The validated, optimized IR, as code generators take it.
    pub fn valid_function(&self) -> &ValidFunction {
        &self.inner.valid
    }

    /// The kernel as checked mode compiles it ([`crate::Device::checked`]): instrumented by
    /// [`ir::checked::instrument`], validated and optimized. What code generators take, like
    /// [`Kernel::valid_function`]. For strata's tools (the golden files of checked mode);
    /// hidden from the docs, not part of the API.
    #[doc(hidden)]
    pub fn checked_function(&self) -> Result<Arc<ValidFunction>> {
        Ok(self.checked()?.valid.clone())
    }

    /// The optimized IR in text form.
    pub fn ir_text(&self) -> &str {
        self.inner
            .text
            .get_or_init(|| self.inner.valid.function().to_string())
    }

    /// The gather reductions the kernel declares, in declaration order: each is a hidden
    /// parameter of the IR ([`ir::Function::hidden`], where [`ir::Function::gathers`] gives
    /// them with their parameters).
    pub fn gathers(&self) -> Vec<&ir::Gather> {
        self.ir().gathers().into_iter().map(|(_, g)| g).collect()
    }

    pub(crate) fn cache_key(&self) -> u128 {
        self.inner.key
    }

    pub(crate) fn valid(&self) -> &ValidFunction {
        &self.inner.valid
    }

    pub(crate) fn valid_arc(&self) -> Arc<ValidFunction> {
        self.inner.valid.clone()
    }

    /// The kernel folding the partials of the custom gather whose partials are parameter
    /// `param`.
    pub(super) fn combiner(&self, param: ir::ParamId) -> Option<Kernel> {
        self.inner
            .combiners
            .iter()
            .find(|(p, _)| *p == param)
            .map(|(_, k)| k.clone())
    }

    /// The parameters a launch passes, as `name: type` text.
    pub fn signature(&self) -> String {
        args_signature(self.ir())
    }

    /// Whether the device has what the kernel uses (`f64`, `f16`, 64-bit integer atomics): a
    /// typed error naming what is missing, checked before any source is compiled (by launches
    /// and by [`Device::compile`](crate::Device::compile)).
    pub(crate) fn check_features(&self, dev: &crate::DeviceInfo) -> Result<()> {
        let info = self.valid().info();
        let name = &self.ir().name;
        if info.uses_f64 && !dev.supports_f64 {
            return Err(Error::Unsupported {
                kernel: name.clone(),
                device: dev.spec(),
                reason: "the kernel uses f64, which the device does not support".into(),
            });
        }
        if info.uses_f16 && !dev.supports_f16 {
            return Err(Error::Unsupported {
                kernel: name.clone(),
                device: dev.spec(),
                reason: "the kernel uses f16, which the device does not support (OpenCL needs the cl_khr_fp16 extension)".into(),
            });
        }
        if info.uses_int64_atomics && !dev.supports_int64_atomics {
            return Err(Error::Unsupported {
                kernel: name.clone(),
                device: dev.spec(),
                reason: "the kernel uses 64-bit integer atomics, which the device does not support"
                    .into(),
            });
        }
        Ok(())
    }
}

/// Kernels built, by the fingerprint of their recorded (unoptimized) IR.
static BUILT: std::sync::LazyLock<Mutex<std::collections::HashMap<u128, Kernel>>> =
    std::sync::LazyLock::new(Default::default);

/// Most kernels [`BUILT`] keeps; when full it starts again empty.
const KEPT_BUILDS: usize = 1024;

thread_local! {
    static CAPTURE: std::cell::RefCell<Option<Vec<Kernel>>> = const { std::cell::RefCell::new(None) };
}

/// Counts `k` as built on this thread for [`capture_kernels`]: a pattern call that finds its
/// kernel without recording it builds nothing, yet a capture around it must see the kernel as
/// if it had been recorded again.
pub(crate) fn note_built(k: &Kernel) {
    CAPTURE.with(|c| {
        if let Some(v) = c.borrow_mut().as_mut() {
            v.push(k.clone());
        }
    });
}

/// Runs `f` and returns, beside its result, every kernel built on this thread while it ran, in
/// build order. Tools use it to collect kernels: golden files of generated code, differential
/// tests. An inner capture takes the kernels of its own span; the outer one resumes after it.
pub fn capture_kernels<R>(f: impl FnOnce() -> R) -> (R, Vec<Kernel>) {
    struct Restore(Option<Option<Vec<Kernel>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                CAPTURE.with(|c| *c.borrow_mut() = outer);
            }
        }
    }
    let outer = CAPTURE.with(|c| c.borrow_mut().replace(Vec::new()));
    let mut restore = Restore(Some(outer));
    let r = f();
    let got = CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default();
    if let Some(outer) = restore.0.take() {
        CAPTURE.with(|c| *c.borrow_mut() = outer);
    }
    (r, got)
}

/// `name: type` of every parameter of `f` that the caller passes (not the hidden ones).
pub(crate) fn args_signature(f: &ir::Function) -> String {
    f.user_params()
        .map(|i| (i, &f.params[i]))
        .map(|(i, p)| match p.kind {
            ParamKind::Buffer { elem, access, .. } => {
                let d = f.buffer_dims(i).map_or(String::new(), |d| d.to_string());
                format!(
                    "{}: Buffer{d}<{}> ({})",
                    p.name,
                    f.elem_name(elem),
                    access.name()
                )
            }
            ParamKind::Scalar(t) => format!("{}: {t}", p.name),
            ParamKind::LocalLen => format!("{}: LocalMem", p.name),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

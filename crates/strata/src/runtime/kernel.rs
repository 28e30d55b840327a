//! Kernels, launch configurations, launch arguments and their checks, runs and gathers.
//!
//! **Work sizes.** A launch has a global size and a local (work-group) size in 1 to 3
//! dimensions. The rule strata enforces on every backend: *an explicit local size must divide
//! the global size in every dimension* (OpenCL 1.2's rule). To cover `n` items with work-groups
//! of `l`, use [`NdRange::covering`], which rounds the global size up, and guard the kernel
//! body with `if_(global_id(0).lt(n), ...)`. Without a local size, strata divides the work
//! itself, choosing in dimension 0 the largest divisor of the global size that does not exceed
//! the device's preferred group size, and 1 in the other dimensions. A global size of 0 in any
//! dimension launches nothing. Global sizes must fit in `u32` (ids are `u32`).

use super::CompiledKernel;
use super::{ArgValue, Buffer, Command, Device, Event, LocalMem, Memory, Queue};
use crate::builder::{self, Element, KernelDef, Numeric, ScalarType, Value};
use crate::error::{Error, Result};
use crate::ir::{
    self, ArrayLen, ElementLayout, GatherOp, HiddenRole, Literal, ParamKind, ShapePart, Type,
    ValidFunction,
};
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
    combiners: Vec<(u32, Kernel)>,
    /// This kernel compiled, per device (the device's identity): a launch finds its code
    /// without hashing the IR text for the device's cache.
    compiled: Mutex<Vec<(usize, Arc<dyn CompiledKernel>)>>,
    /// The kernel instrumented for checked mode, made when first launched on a checked device.
    checked: std::sync::OnceLock<Result<Arc<CheckedKernel>>>,
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
            .find(|(d, _)| *d == device)
            .map(|(_, k)| k.clone())
    }

    /// Remembers this kernel's code for the device identified by `device`.
    pub(crate) fn remember_compiled(&self, device: usize, k: Arc<dyn CompiledKernel>) {
        let mut memo = self.inner.compiled.lock().unwrap();
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
    /// gives the same IR, which devices do not compile twice. Set `STRATA_DUMP=ir` to print
    /// the optimized IR of every kernel built.
    pub fn build(name: &str, body: impl FnOnce(&mut KernelDef)) -> Result<Kernel> {
        let f = builder::record(name, body).map_err(|e| Error::InvalidKernel(e.to_string()))?;
        Kernel::from_ir(f)
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
        if std::env::var("STRATA_DUMP").is_ok_and(|v| v.split(',').any(|p| p == "ir")) {
            eprintln!("{}", k.ir());
        }
        CAPTURE.with(|c| {
            if let Some(v) = c.borrow_mut().as_mut() {
                v.push(k.clone());
            }
        });
        Ok(k)
    }

    /// Validates and optimizes recorded IR into a new kernel.
    fn validated(f: ir::Function, combiners: Vec<(u32, Kernel)>) -> Result<Kernel> {
        // The IR is printed only for an error message (or STRATA_DUMP, or `ir_text`). The one
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
                checked: std::sync::OnceLock::new(),
            }),
        })
    }

    /// The kernel instrumented for checked mode (made once).
    pub(crate) fn checked(&self) -> Result<Arc<CheckedKernel>> {
        self.inner
            .checked
            .get_or_init(|| {
                let ins = ir::checked::instrument(self.inner.valid.function());
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
    /// [`Kernel::valid_function`].
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
    fn combiner(&self, param: u32) -> Option<Kernel> {
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

    /// Checks a launch of `launched` (this kernel, or its instrumentation for checked mode,
    /// which has the same parameters and more hidden ones) and turns its arguments into
    /// backend values: the caller's, checked against the kernel's parameters, then every
    /// hidden parameter, filled in by its role ([`ir::HiddenRole`]). This is the one place
    /// where a launch fills in hidden parameters, for every backend.
    pub(crate) fn prepare(
        &self,
        launched: &ir::Function,
        queue: &Queue,
        range: NdRange,
        args: &[KernelArg<'_>],
    ) -> Result<Prepared> {
        let f = self.ir();
        let info = self.valid().info();
        let dev = queue.device().info();
        let name = &f.name;
        self.check_features(dev)?;
        let user: Vec<usize> = f.user_params().map(|p| p as usize).collect();
        // A struct passed by value is its fields' scalars, one parameter each.
        let expanded: Vec<KernelArg<'_>>;
        let args = if args.iter().any(|a| matches!(a.0, ArgInner::Fields(_))) {
            expanded = args
                .iter()
                .flat_map(|a| match &a.0 {
                    ArgInner::Fields(l) => {
                        l.iter().map(|&l| KernelArg(ArgInner::Scalar(l))).collect()
                    }
                    _ => vec![a.clone()],
                })
                .collect();
            &expanded[..]
        } else {
            args
        };
        if args.len() != user.len() {
            return Err(Error::ArgumentCount {
                kernel: name.clone(),
                expected: user.len(),
                got: args.len(),
                signature: self.signature(),
            });
        }
        let range = range.resolve(name, dev, f)?;
        let mut values: Vec<Option<ArgValue>> = vec![None; launched.params.len()];
        // The shapes of the 2-D and 3-D buffers passed, by parameter.
        let mut shapes: Vec<Option<PitchedShape>> = vec![None; f.params.len()];
        let mut buffers: Vec<(usize, &Arc<dyn Memory>)> = Vec::new();
        let mut dyn_local = 0u64;
        let mut constants = 0u32;
        for (i, (&p, arg)) in user.iter().zip(args).enumerate() {
            let param = &f.params[p];
            let mismatch = |expected: String| Error::ArgumentType {
                kernel: name.clone(),
                index: i,
                name: param.name.clone(),
                expected,
                got: arg.describe(),
            };
            // A 2-D or 3-D buffer parameter takes a buffer of its dimensions, whose pitches and
            // extent its hidden parameters take (those the kernel has must fit u32).
            let dims = f.buffer_dims(p as u32);
            let arg_dims = match &arg.0 {
                ArgInner::Buffer { pitched, .. } => pitched.as_ref().map(|s| s.dims),
                _ => None,
            };
            let want_buffer = |elem: ir::Elem| {
                let elem = f.elem_name(elem);
                match dims {
                    Some(d) => format!("a {d}-D buffer of {elem} (Buffer{d}<{elem}>)"),
                    None => format!("a buffer of {elem}"),
                }
            };
            if let (ParamKind::Buffer { elem, .. }, true) = (param.kind, dims != arg_dims) {
                return Err(mismatch(want_buffer(elem)));
            }
            if let (
                Some(d),
                ArgInner::Buffer {
                    pitched: Some(s), ..
                },
            ) = (dims, &arg.0)
            {
                let parts = f.hidden.iter().filter_map(|h| match h.role {
                    HiddenRole::Shape { buffer, part, .. } if buffer as usize == p => Some(part),
                    _ => None,
                });
                for part in parts {
                    if u32::try_from(s.part(part)).is_err() {
                        return Err(mismatch(format!(
                            "a {d}-D buffer whose pitches and extent fit u32 (indices are u32)"
                        )));
                    }
                }
                shapes[p] = Some(*s);
            }
            let v = match (param.kind, &arg.0) {
                (
                    ParamKind::Buffer { elem, len, access },
                    ArgInner::Buffer {
                        mem,
                        len: blen,
                        elem: belem,
                        device,
                        ..
                    },
                ) => {
                    if !belem.matches(f, elem) {
                        return Err(mismatch(want_buffer(elem)));
                    }
                    if *device != queue.device() {
                        return Err(Error::WrongDevice {
                            op: "launch",
                            buffer_device: device.info().spec(),
                            queue_device: dev.spec(),
                        });
                    }
                    if let Some(want) = len {
                        if want != *blen as u64 {
                            return Err(Error::ArgumentLength {
                                kernel: name.clone(),
                                index: i,
                                name: param.name.clone(),
                                expected: want,
                                got: *blen as u64,
                            });
                        }
                    }
                    if *blen > u32::MAX as usize {
                        return Err(mismatch(
                            "a buffer of at most 2^32 - 1 elements (indices are u32)".into(),
                        ));
                    }
                    if access == ir::Access::Constant {
                        constants += 1;
                        let bytes = *blen as u64 * f.elem_size(elem) as u64;
                        if let Some(max) = dev.max_constant_buffer_size.filter(|&m| bytes > m) {
                            return Err(mismatch(format!(
                                "a constant buffer of at most {max} bytes (the device's limit; this one has {bytes}): pass a larger one as a read-only buffer (`&[T]`) instead"
                            )));
                        }
                        if let Some(max) = dev.max_constant_args.filter(|&m| constants > m) {
                            return Err(mismatch(format!(
                                "at most {max} constant buffers per kernel (the device's limit): make the others read-only buffers"
                            )));
                        }
                    }
                    buffers.push((p, *mem));
                    ArgValue::Buffer {
                        mem: (*mem).clone(),
                        len: *blen as u64,
                    }
                }
                (ParamKind::Scalar(t), ArgInner::Scalar(l)) => {
                    if Type::scalar(l.scalar) != t {
                        return Err(mismatch(format!(
                            "a {t} value (write the literal with a suffix, e.g. `2{t}`)"
                        )));
                    }
                    ArgValue::Scalar(*l)
                }
                (ParamKind::LocalLen, ArgInner::Local { elem, len }) => {
                    let decl = f.locals.iter().find(|l| l.len == ArrayLen::Param(p as u32));
                    let want = decl.map(|d| d.elem);
                    if want != Some(*elem) {
                        return Err(mismatch(format!(
                            "LocalMem<{}>",
                            want.map_or("?".into(), |t| t.to_string())
                        )));
                    }
                    if *len == 0 {
                        return Err(mismatch("LocalMem of at least one element".into()));
                    }
                    let Ok(n) = u32::try_from(*len) else {
                        return Err(mismatch("LocalMem of at most 2^32 - 1 elements".into()));
                    };
                    dyn_local += *len as u64 * elem.size() as u64;
                    ArgValue::LocalLen(n)
                }
                (ParamKind::Buffer { elem, .. }, _) => {
                    return Err(mismatch(format!("a buffer of {}", f.elem_name(elem))))
                }
                (ParamKind::Scalar(t), _) => return Err(mismatch(format!("a {t} value"))),
                (ParamKind::LocalLen, _) => return Err(mismatch("a LocalMem size".into())),
            };
            values[p] = Some(v);
        }
        for &(w, wm) in &buffers {
            if !info.writes.contains(&(w as u32)) {
                continue;
            }
            for &(r, rm) in &buffers {
                let ro = matches!(
                    f.params[r].kind,
                    ParamKind::Buffer { access, .. } if access.is_read_only()
                );
                if r != w && ro && Arc::ptr_eq(wm, rm) {
                    return Err(Error::Aliasing {
                        kernel: name.clone(),
                        written: f.params[w].name.clone(),
                        read_only: f.params[r].name.clone(),
                    });
                }
            }
        }
        let local_total = info.fixed_local_bytes + dyn_local;
        if local_total > dev.local_mem_size {
            return Err(Error::InvalidWorkSize {
                kernel: name.clone(),
                reason: format!("the kernel needs {local_total} bytes of local memory, the device has {} per work-group", dev.local_mem_size),
            });
        }
        // The hidden parameters, each filled in by its role (the launch ABI: `ir::abi`).
        let groups = range.group_count();
        let mut gathers = Vec::new();
        let mut fault = None;
        for h in &launched.hidden {
            let v = match &h.role {
                HiddenRole::Shape { buffer, part, .. } => {
                    let s = shapes[*buffer as usize]
                        .expect("a 2-D or 3-D buffer parameter was given its shape above");
                    ArgValue::Scalar((s.part(*part) as u32).literal())
                }
                HiddenRole::Gather(g) => {
                    let mem = queue
                        .device()
                        .gather_partials(groups.max(1) * g.ty.size())?;
                    gathers.push(GatherOut {
                        gather: g.clone(),
                        mem: mem.clone(),
                        groups,
                        combine: self.combiner(h.param),
                    });
                    ArgValue::Buffer {
                        mem,
                        len: groups as u64,
                    }
                }
                HiddenRole::FaultWords => {
                    // Zeroed: no fault yet.
                    let words = ir::checked::FAULT_WORDS;
                    let mem = queue.device().alloc(words * 4)?;
                    fault = Some(mem.clone());
                    ArgValue::Buffer {
                        mem,
                        len: words as u64,
                    }
                }
                HiddenRole::LocalLen { len_param } => {
                    let n = match values[*len_param as usize] {
                        Some(ArgValue::LocalLen(n)) => n,
                        _ => 0,
                    };
                    ArgValue::Scalar(n.literal())
                }
            };
            values[h.param as usize] = Some(v);
        }
        gathers.sort_by_key(|g| g.gather.index);
        let values = values
            .into_iter()
            .map(|v| v.expect("every parameter has a value"))
            .collect();
        Ok(Prepared {
            values,
            gathers,
            fault,
            range,
        })
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
        .map(|i| (i, &f.params[i as usize]))
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

/// Sizes in 1 to 3 dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    v: [usize; 3],
    n: u8,
}

impl From<usize> for Dims {
    fn from(x: usize) -> Dims {
        Dims { v: [x, 1, 1], n: 1 }
    }
}
impl From<[usize; 1]> for Dims {
    fn from(x: [usize; 1]) -> Dims {
        Dims {
            v: [x[0], 1, 1],
            n: 1,
        }
    }
}
impl From<[usize; 2]> for Dims {
    fn from(x: [usize; 2]) -> Dims {
        Dims {
            v: [x[0], x[1], 1],
            n: 2,
        }
    }
}
impl From<[usize; 3]> for Dims {
    fn from(x: [usize; 3]) -> Dims {
        Dims { v: x, n: 3 }
    }
}

/// A launch configuration: global size and optional local size (see the module docs for the
/// rule on sizes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdRange {
    global: [usize; 3],
    local: Option<[usize; 3]>,
    dims: u8,
    local_dims: u8,
}

impl NdRange {
    /// `global` work-items in 1 to 3 dimensions; the local size is chosen at launch.
    pub fn new(global: impl Into<Dims>) -> NdRange {
        let g = global.into();
        NdRange {
            global: g.v,
            local: None,
            dims: g.n,
            local_dims: 0,
        }
    }

    /// Sets an explicit local size (same number of dimensions as the global size).
    pub fn local(self, local: impl Into<Dims>) -> NdRange {
        let l = local.into();
        NdRange {
            local: Some(l.v),
            local_dims: l.n,
            ..self
        }
    }

    /// At least `n` work-items in work-groups of `local`, in 1 to 3 dimensions: the global size
    /// is `n` rounded up to a multiple of `local` in each dimension (a local size of 0 counts
    /// as 1). Guard the body: `global_id(0) < n` in 1-D, or
    /// `in_bounds(global_id2(), vec2(w, h))` for `covering([w, h], [16, 16])` (and
    /// `global_id3()` in 3-D). `n` and `local` must have the same number of dimensions (a
    /// launch with mismatched ones fails with [`Error::InvalidWorkSize`]).
    pub fn covering(n: impl Into<Dims>, local: impl Into<Dims>) -> NdRange {
        let (n, l) = (n.into(), local.into());
        let mut g = n;
        let mut local = l;
        for d in 0..3 {
            local.v[d] = l.v[d].max(1);
            g.v[d] = n.v[d].div_ceil(local.v[d]) * local.v[d];
        }
        NdRange::new(g).local(local)
    }

    /// The global size (unused dimensions are 1).
    pub fn global_size(&self) -> [usize; 3] {
        self.global
    }

    /// The local size, if set or resolved.
    pub fn local_size(&self) -> Option<[usize; 3]> {
        self.local
    }

    /// Number of dimensions.
    pub fn dims(&self) -> u8 {
        self.dims
    }

    /// Number of work-groups in each dimension (after resolution).
    pub fn groups(&self) -> [usize; 3] {
        let l = self.local.unwrap_or([1, 1, 1]);
        [0, 1, 2].map(|d| self.global[d] / l[d].max(1))
    }

    /// Total number of work-groups.
    pub fn group_count(&self) -> usize {
        self.groups().iter().product()
    }

    /// Checks the sizes against the device and picks a local size if none was given.
    #[allow(clippy::needless_range_loop)] // three parallel per-dimension arrays
    pub(crate) fn resolve(
        self,
        kernel: &str,
        dev: &super::DeviceInfo,
        _f: &ir::Function,
    ) -> Result<NdRange> {
        let bad = |reason: String| Error::InvalidWorkSize {
            kernel: kernel.to_string(),
            reason,
        };
        if !(1..=3).contains(&self.dims) {
            return Err(bad(format!(
                "{} dimensions; launches have 1, 2 or 3",
                self.dims
            )));
        }
        for d in 0..3 {
            if self.global[d] > u32::MAX as usize {
                return Err(bad(format!(
                    "global size {} in dimension {d} exceeds 2^32 - 1 (ids are u32)",
                    self.global[d]
                )));
            }
        }
        let local = match self.local {
            Some(l) => {
                if self.local_dims != self.dims {
                    return Err(bad(format!(
                        "the global size has {} dimension(s) but the local size has {}",
                        self.dims, self.local_dims
                    )));
                }
                for d in 0..3 {
                    if l[d] == 0 {
                        return Err(bad(format!(
                            "local size 0 in dimension {d}; local sizes are at least 1"
                        )));
                    }
                    if l[d] > dev.max_work_item_sizes[d] {
                        return Err(bad(format!(
                            "local size {} in dimension {d} exceeds the device's maximum of {}",
                            l[d], dev.max_work_item_sizes[d]
                        )));
                    }
                    if !self.global[d].is_multiple_of(l[d]) {
                        return Err(bad(format!(
                            "global size {} in dimension {d} is not a multiple of local size {}; round the global size up ({}) and guard the kernel ({}), or leave the local size to strata",
                            self.global[d], l[d],
                            match self.dims {
                                1 => "`NdRange::covering(n, local)`",
                                2 => "`NdRange::covering([w, h], [lx, ly])`",
                                _ => "`NdRange::covering([w, h, d], [lx, ly, lz])`",
                            },
                            match self.dims {
                                1 => "`if global_id(0) < n`",
                                2 => "`if in_bounds(global_id2(), vec2(w, h))`",
                                _ => "`if in_bounds(global_id3(), vec3(w, h, d))`",
                            }
                        )));
                    }
                }
                let total: usize = l.iter().product();
                if total > dev.max_work_group_size {
                    return Err(bad(format!("work-group of {} work-items ({} x {} x {}) exceeds the device's maximum of {}", total, l[0], l[1], l[2], dev.max_work_group_size)));
                }
                l
            }
            None => {
                let cap = dev
                    .preferred_group_size
                    .min(dev.max_work_item_sizes[0])
                    .min(dev.max_work_group_size)
                    .max(1);
                let g = self.global[0];
                let l0 = if g == 0 {
                    1
                } else {
                    (1..=cap.min(g))
                        .rev()
                        .find(|&d| g.is_multiple_of(d))
                        .unwrap_or(1)
                };
                [l0, 1, 1]
            }
        };
        Ok(NdRange {
            local: Some(local),
            local_dims: self.dims,
            ..self
        })
    }

    /// Whether the launch has no work-items.
    pub fn is_empty(&self) -> bool {
        self.global.contains(&0)
    }
}

/// The shape of a 2-D or 3-D buffer argument.
#[derive(Clone, Copy)]
pub(crate) struct PitchedShape {
    pub dims: u8,
    /// Row and slice pitch, in elements.
    pub pitch: [usize; 2],
    /// Width, height and depth (1 in 2-D).
    pub extent: [usize; 3],
}

impl PitchedShape {
    /// The number that a hidden parameter of role `part` takes.
    fn part(&self, part: ShapePart) -> usize {
        match part {
            ShapePart::RowPitch => self.pitch[0],
            ShapePart::SlicePitch => self.pitch[1],
            ShapePart::Extent(d) => self.extent[d as usize],
        }
    }
}

/// A launch's arguments as backend values ([`Kernel::prepare`]), with what the launch
/// provided for the hidden parameters that it reads back.
pub(crate) struct Prepared {
    /// One value per parameter of the launched function.
    pub values: Vec<ArgValue>,
    /// The gathers' partials, in declaration order.
    pub gathers: Vec<GatherOut>,
    /// Checked mode's fault words.
    pub fault: Option<Arc<dyn Memory>>,
    /// The launch's range, its local size resolved.
    pub range: NdRange,
}

#[derive(Clone)]
pub(crate) enum ArgInner<'a> {
    Buffer {
        mem: &'a Arc<dyn Memory>,
        len: usize,
        elem: ElementLayout,
        device: &'a Device,
        /// For a 2-D or 3-D buffer, its shape.
        pitched: Option<PitchedShape>,
    },
    Scalar(Literal),
    /// A struct by value: its fields' scalars in declaration order (one parameter each).
    Fields(Vec<Literal>),
    Local {
        elem: Type,
        len: usize,
    },
}

/// One launch argument: a buffer, a scalar or a local-memory size. Made by `From`, usually
/// through the [`args!`](crate::args) macro.
#[derive(Clone)]
pub struct KernelArg<'a>(pub(crate) ArgInner<'a>);

impl KernelArg<'_> {
    fn describe(&self) -> String {
        match &self.0 {
            ArgInner::Buffer {
                elem,
                pitched: Some(s),
                ..
            } => {
                let e = &s.extent[..s.dims as usize];
                format!("a {}-D buffer of {e:?} {}", s.dims, elem.name())
            }
            ArgInner::Buffer { elem, len, .. } => format!("a buffer of {len} {}", elem.name()),
            ArgInner::Scalar(l) => format!("a {} value", l.scalar),
            ArgInner::Fields(l) => format!("a struct of {} scalars", l.len()),
            ArgInner::Local { elem, len } => format!("LocalMem<{elem}> of {len}"),
        }
    }
}

impl<'a, T: Element> From<&'a Buffer<T>> for KernelArg<'a> {
    fn from(b: &'a Buffer<T>) -> Self {
        KernelArg(ArgInner::Buffer {
            mem: &b.mem,
            len: b.len(),
            elem: T::LAYOUT,
            device: &b.device,
            pitched: None,
        })
    }
}

impl<'a, T: Element, const D: usize> From<&'a super::PitchedBuffer<T, D>> for KernelArg<'a> {
    fn from(b: &'a super::PitchedBuffer<T, D>) -> Self {
        let flat = b.as_buffer();
        let mut extent = [1; 3];
        extent[..D].copy_from_slice(&b.extent());
        KernelArg(ArgInner::Buffer {
            mem: &flat.mem,
            len: flat.len(),
            elem: T::LAYOUT,
            device: &flat.device,
            pitched: Some(PitchedShape {
                dims: D as u8,
                pitch: [b.pitch(), b.slice_pitch()],
                extent,
            }),
        })
    }
}

impl KernelArg<'_> {
    /// A `#[derive(Element)]` struct passed by value (what its `From` impl calls).
    #[doc(hidden)]
    pub fn fields<T: Element>(v: &T) -> Self {
        let mut out = Vec::new();
        T::LAYOUT.scalars(bytemuck::bytes_of(v), &mut out);
        KernelArg(ArgInner::Fields(out))
    }
}

impl<T: ScalarType> From<T> for KernelArg<'_> {
    fn from(v: T) -> Self {
        KernelArg(ArgInner::Scalar(v.literal()))
    }
}

impl<T: Value> From<LocalMem<T>> for KernelArg<'_> {
    fn from(l: LocalMem<T>) -> Self {
        KernelArg(ArgInner::Local {
            elem: T::TYPE,
            len: l.len,
        })
    }
}

/// Launch arguments: `args![&x, &y, 2.0f32, LocalMem::<f32>::new(256)]`.
#[macro_export]
macro_rules! args {
    ($($a:expr),* $(,)?) => {
        &[$($crate::KernelArg::from($a)),*]
    };
}

/// A gather's partials of one launch.
pub(crate) struct GatherOut {
    gather: ir::Gather,
    mem: Arc<dyn Memory>,
    groups: usize,
    /// For a custom gather: the kernel that folds the partials.
    combine: Option<Kernel>,
}

impl GatherOut {
    /// The command that sets every partial to the identity of the gather's operation, to run
    /// before the launch: a work-group whose work-items all return before the gather writes no
    /// partial, and must not change the result. (The memory is reused from earlier launches.)
    pub(crate) fn reset(&self) -> Command {
        let g = &self.gather;
        Command::Fill {
            mem: self.mem.clone(),
            offset: 0,
            len: self.groups.max(1) * g.ty.size(),
            pattern: g.identity_bytes().repeat(g.ty.width as usize),
        }
    }
}

/// A launched kernel: its event and its gather results.
pub struct Run {
    event: Event,
    gathers: Vec<GatherOut>,
    queue: Queue,
    cancel: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("complete", &self.event.is_complete())
            .field("gathers", &self.gathers.len())
            .field("queue", &self.queue)
            .finish()
    }
}

impl Run {
    pub(crate) fn new(
        event: Event,
        gathers: Vec<GatherOut>,
        queue: Queue,
        cancel: Arc<std::sync::atomic::AtomicBool>,
    ) -> Run {
        Run {
            event,
            gathers,
            queue,
            cancel,
        }
    }

    /// Asks the launch to stop. A launch not yet handed to its device (waiting behind other
    /// commands of its queue) never runs. On the CPU backend a running launch stops between
    /// work-groups: the work-groups that had started finish, the others never run, so the
    /// buffers it writes hold a mix of old and new values. On OpenCL and CUDA a launch the
    /// driver has been given runs to its end. A stopped launch fails with
    /// [`Error::Cancelled`], which, like any failure, fails the later commands of its queue
    /// until it is observed (see [`Queue`]'s "Failures"); cancelling a launch that completed
    /// changes nothing.
    pub fn cancel(&self) {
        self.cancel
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Like [`Run::wait`], giving up after `timeout` with [`Error::TimedOut`] (the kernel
    /// keeps running; [`Run::cancel`] stops it where the backend can).
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        self.event.wait_timeout(timeout)
    }

    /// The launch's event.
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// Waits for the kernel; returns its error if it faulted.
    pub fn wait(&self) -> Result<()> {
        self.event.wait()
    }

    /// The future value of gather reduction `index` (in declaration order); `T` must be its
    /// element type.
    pub fn gather<T: Numeric>(&self, index: usize) -> Result<Gathered<T>> {
        let g = self.gathers.get(index).ok_or_else(|| Error::BufferRange {
            op: "gather",
            detail: format!(
                "the kernel declares {} gather(s); index {index} does not exist",
                self.gathers.len()
            ),
        })?;
        if g.gather.ty != T::TYPE {
            return Err(Error::BufferRange {
                op: "gather",
                detail: format!("gather {index} holds {}, not {}", g.gather.ty, T::TYPE),
            });
        }
        let buf = Buffer::<T>::from_parts(g.mem.clone(), g.groups, self.queue.device().clone());
        Ok(Gathered {
            buf,
            queue: self.queue.clone(),
            launch: self.event.clone(),
            op: g.gather.op,
            combine: g.combine.clone(),
        })
    }

    /// The future value of the gather reduction `handle` names: the handle its declaration
    /// returned ([`KernelDef::gather_add`] and the others), which carries the element type.
    /// A handle of another kernel whose gather at that position has another type, or that
    /// has fewer gathers, gives the errors of [`Run::gather`].
    pub fn gathered<T: Numeric>(&self, handle: builder::GatherHandle<T>) -> Result<Gathered<T>> {
        self.gather(handle.index())
    }
}

/// The future result of a gather reduction (Goopax's `goopax_future`).
pub struct Gathered<T> {
    /// The per-work-group partials.
    buf: Buffer<T>,
    /// The launch's queue: in order, so a read on it follows the launch.
    queue: Queue,
    launch: Event,
    op: GatherOp,
    /// For a user-defined gather: the kernel that folds the partials.
    combine: Option<Kernel>,
}

impl<T: Numeric> Gathered<T> {
    /// Waits for the kernel and combines the per-work-group partial results (in work-group
    /// order, so the result is deterministic).
    pub fn get(self) -> Result<T> {
        let op = self.op;
        if let Some(combine) = &self.combine {
            // The user's function folds the partials on the launch's device, in work-group
            // order, after the launch (the queue is in order).
            let out = Buffer::<T>::new(&self.queue, 1)?;
            let folded = self
                .queue
                .launch(combine, NdRange::new(1), crate::args![&self.buf, &out]);
            self.launch.wait()?;
            folded?;
            return Ok(self.queue.read(&out)?[0]);
        }
        // A blocking read, which follows the launch on its in-order queue (on CUDA it runs on
        // this thread when nothing else is waiting to be issued: no hand-over between threads).
        let parts = self.queue.read(&self.buf);
        // The launch's own outcome first: a launch that failed left the partials unwritten.
        self.launch.wait()?;
        let parts = parts?;
        let init = match op {
            GatherOp::Min => T::greatest(),
            GatherOp::Max => T::least(),
            _ => T::zero(),
        };
        Ok(parts.into_iter().fold(init, |a, b| match op {
            GatherOp::Min => a.min_(b),
            GatherOp::Max => a.max_(b),
            _ => a.add(b),
        }))
    }
}

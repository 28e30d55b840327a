//! Launch arguments: [`KernelArg`] (made from buffers, scalars, structs and local-memory
//! sizes, usually through [`args!`](crate::args)), and the preparation of a launch, which
//! checks the caller's arguments against the kernel's parameters and fills in every hidden
//! parameter by its role ([`ir::HiddenRole`]): the one place where the launch ABI is applied,
//! for every backend.
//!
//! The checks, all before anything is submitted: the argument count; each argument's kind and
//! element type against its parameter (a pitched parameter takes a `Buffer2` or `Buffer3` of
//! its dimensions); a buffer's device, and its length where the kernel states one; no buffer
//! that the kernel writes passed again as a read-only argument (aliasing); constant buffers
//! against the device's size and count limits; the local memory of fixed and launch-sized
//! arrays against the device's; and the device's features (`f64`, `f16`, 64-bit atomics). A
//! struct passed by value expands here into its fields' scalars.

use super::run::GatherOut;
use super::{ArgValue, Buffer, Device, Kernel, LocalMem, Memory, NdRange, Queue};
use crate::builder::{Element, ScalarType, Value};
use crate::error::{Error, Result};
use crate::ir::{
    self, ArrayLen, ElementLayout, HiddenRole, IdVec, Literal, ParamId, ParamKind, ShapePart, Type,
};
use std::sync::Arc;

impl Kernel {
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
        // Nothing here allocates on the common path (no struct by value, no 2-D buffer) but
        // the launch's values, which the command takes.
        let user_count = f.user_params().count();
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
        if args.len() != user_count {
            return Err(Error::ArgumentCount {
                kernel: name.clone(),
                expected: user_count,
                got: args.len(),
                signature: self.signature(),
            });
        }
        let range = range.resolve(name, dev, f)?;
        let mut values: IdVec<ParamId, Option<ArgValue>> = vec![None; launched.params.len()].into();
        // The shapes of the 2-D and 3-D buffers passed, in parameter order.
        let mut pitched: Vec<(ParamId, PitchedShape)> = Vec::new();
        let mut dyn_local = 0u64;
        let mut constants = 0u32;
        for (i, (p, arg)) in f.user_params().zip(args).enumerate() {
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
            let dims = f.buffer_dims(p);
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
                    HiddenRole::Shape { buffer, part, .. } if buffer == p => Some(part),
                    _ => None,
                });
                for part in parts {
                    if u32::try_from(s.part(part)).is_err() {
                        return Err(mismatch(format!(
                            "a {d}-D buffer whose pitches and extent fit u32 (indices are u32)"
                        )));
                    }
                }
                pitched.push((p, *s));
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
                    let decl = f.locals.iter().find(|l| l.len == ArrayLen::Param(p));
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
        // Every buffer parameter has been given a buffer by now.
        let buffers = || {
            f.user_params().zip(args).filter_map(|(p, a)| match &a.0 {
                ArgInner::Buffer { mem, .. } => Some((p, *mem)),
                _ => None,
            })
        };
        for (w, wm) in buffers() {
            if !info.writes.contains(&w) {
                continue;
            }
            for (r, rm) in buffers() {
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
                    let s = pitched
                        .iter()
                        .find(|(p, _)| p == buffer)
                        .map(|(_, s)| *s)
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
                HiddenRole::Shadow { buffer, own } => {
                    // Zeroed: no access yet. One word where no two work-items of this
                    // range can reach one element (the kernel then skips the checks).
                    let len = match &values[*buffer] {
                        Some(ArgValue::Buffer { len, .. }) => *len,
                        _ => 0,
                    };
                    let apart = own.is_some_and(|o| {
                        range
                            .local_size()
                            .is_some_and(|l| o.keeps_apart(range.global_size(), l))
                    });
                    let words = if apart {
                        1
                    } else {
                        (len * ir::checked::SHADOW_WORDS).max(1)
                    };
                    let mem = queue.device().alloc(words as usize * 4)?;
                    ArgValue::Buffer { mem, len: words }
                }
                HiddenRole::LocalLen { len_param } => {
                    let n = match values[*len_param] {
                        Some(ArgValue::LocalLen(n)) => n,
                        _ => 0,
                    };
                    ArgValue::Scalar(n.literal())
                }
            };
            values[h.param] = Some(v);
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
            pitched,
        })
    }
}

/// The shape of a 2-D or 3-D buffer argument.
#[derive(Clone, Copy, Debug)]
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
    /// The shapes of the 2-D and 3-D buffers passed, by parameter (to decode the coordinates
    /// of an out-of-bounds access).
    pub pitched: Vec<(ParamId, PitchedShape)>,
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

impl KernelArg<'_> {
    /// Whether two arguments pass the same thing: the same memory with the same length and
    /// element type, or the same scalar (the patterns check that the arguments they collect
    /// without recording a kernel are the recording's).
    pub(crate) fn same_as(&self, other: &KernelArg<'_>) -> bool {
        match (&self.0, &other.0) {
            (
                ArgInner::Buffer {
                    mem: m1,
                    len: l1,
                    elem: e1,
                    pitched: None,
                    ..
                },
                ArgInner::Buffer {
                    mem: m2,
                    len: l2,
                    elem: e2,
                    pitched: None,
                    ..
                },
            ) => Arc::ptr_eq(m1, m2) && l1 == l2 && e1.same_name(e2),
            (ArgInner::Scalar(a), ArgInner::Scalar(b)) => a == b,
            _ => false,
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

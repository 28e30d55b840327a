//! The launch ABI: what a kernel's parameters mean to the launch beyond their types.
//!
//! A kernel's parameters are of two sorts. The caller passes the *user* parameters (buffers,
//! scalars, local-memory sizes, in launch order). The launch itself fills in the *hidden*
//! ones, which features of strata add to the kernel: the pitches and extent of a 2-D or 3-D
//! buffer, the buffer of a gather reduction's per-work-group partials, and in checked mode
//! the fault words, the `u32` copies of launch-sized local-array lengths and the buffers' race shadows. Each hidden
//! parameter is an ordinary [`Param`](super::Param) of [`Function::params`] (the code generators and the
//! CPU backend treat it like any other), and [`Function::hidden`] says which it is and what
//! it holds, as a [`HiddenParam`]. The builder and [`checked::instrument`](super::checked)
//! write that list; the runtime reads it in one place, the preparation of a launch's
//! arguments, which fills every hidden parameter by its [`HiddenRole`]. A new feature that
//! needs a hidden argument adds a role here and its filling there.
//!
//! Also here: [`ElementLayout`], how a host type that a buffer holds is laid out, which a
//! launch compares with the element type of the kernel's buffer parameter (and which the
//! builder declares in the kernel's [`Function::structs`]).

use super::{Elem, Function, Literal, ParamId, ParamKind, Scalar, Type};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A parameter that the launch fills in, not the caller: its index in [`Function::params`]
/// and what it holds.
#[derive(Clone, Debug)]
pub struct HiddenParam {
    /// The parameter.
    pub param: ParamId,
    /// What the launch passes for it.
    pub role: HiddenRole,
}

/// What a [`HiddenParam`] holds.
#[derive(Clone, Debug)]
pub enum HiddenRole {
    /// A `u32` scalar: one number of the shape of the 2-D or 3-D buffer parameter `buffer`
    /// (a [`Buffer2`](crate::Buffer2) or [`Buffer3`](crate::Buffer3) at launch), in elements.
    /// Every such buffer has at least its row pitch; the launch checks that the buffer
    /// passed has `dims` dimensions.
    Shape {
        /// The buffer parameter.
        buffer: ParamId,
        /// The buffer's dimensions: 2 or 3.
        dims: u8,
        /// Which number.
        part: ShapePart,
    },
    /// A buffer of [`Gather::ty`] receiving one partial result per work-group of a gather
    /// reduction: the launch provides it (set to the identity first) and combines it after.
    Gather(Gather),
    /// Checked mode's fault buffer ([`checked`](super::checked)): `read_write [u32]` of
    /// [`FAULT_WORDS`](super::checked::FAULT_WORDS) words, zeroed by the launch and read after
    /// it.
    FaultWords,
    /// Checked mode: a `u32` scalar repeating the length of the launch-sized local array
    /// whose length parameter ([`ParamKind::LocalLen`]) is `len_param` (an IR expression
    /// cannot read a `LocalLen` parameter).
    LocalLen {
        /// The `LocalLen` parameter.
        len_param: ParamId,
    },
    /// Checked mode: the race checks' shadow of buffer parameter `buffer`
    /// ([`checked`](super::checked)): `read_write [u32]` of
    /// [`SHADOW_WORDS`](super::checked::SHADOW_WORDS) words per element of the buffer
    /// passed, zeroed by the launch.
    Shadow {
        /// The buffer parameter.
        buffer: ParamId,
        /// Where every access of the kernel to `buffer` indexes it by the work-item in a way
        /// that may keep work-items apart: the launch checks it against its range and, where
        /// no two work-items can reach one element, passes a one-word shadow, which tells the
        /// kernel to skip the buffer's race checks.
        own: Option<super::checked::OwnIndex>,
    },
}

impl HiddenRole {
    /// A short name of the role, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            HiddenRole::Shape { .. } => "a buffer's shape",
            HiddenRole::Gather(_) => "a gather's partials",
            HiddenRole::FaultWords => "checked mode's fault words",
            HiddenRole::LocalLen { .. } => "a local array's length",
            HiddenRole::Shadow { .. } => "a buffer's race shadow",
        }
    }
}

/// Which number of a 2-D or 3-D buffer's shape a [`HiddenRole::Shape`] parameter holds.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ShapePart {
    /// Elements from one row to the next.
    RowPitch,
    /// Elements from one slice to the next (3-D).
    SlicePitch,
    /// The extent in dimension 0 (width), 1 (height) or 2 (depth).
    Extent(u8),
}

/// How a gather reduction combines the values of all work-items.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GatherOp {
    /// Sum (integers wrap).
    Add,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// A user's associative and commutative function
    /// ([`KernelDef::gather_with`](crate::builder::KernelDef::gather_with)), whose combining
    /// kernel is [`Gather::combine`].
    Custom,
}

/// A gather reduction of a kernel ([`HiddenRole::Gather`]).
#[derive(Clone, Debug)]
pub struct Gather {
    /// Its position among the kernel's gathers (declaration order), as
    /// [`Run::gather`](crate::Run::gather) takes it.
    pub index: u32,
    /// How the values combine.
    pub op: GatherOp,
    /// The element type (a numeric scalar).
    pub ty: Type,
    /// The operation's identity: what a work-group that writes no partial leaves.
    pub identity: Literal,
    /// For [`GatherOp::Custom`]: the kernel that folds the partials, as recorded (not yet
    /// validated): one work-item folding the buffer parameter `parts`, in work-group order,
    /// into `out[0]`. The runtime builds it when it builds the kernel.
    pub combine: Option<Arc<Function>>,
}

impl Gather {
    /// The identity's bytes, one element.
    pub fn identity_bytes(&self) -> Vec<u8> {
        let size = self.identity.scalar.size();
        self.identity.bits.to_le_bytes()[..size].to_vec()
    }
}

impl Hash for HiddenRole {
    fn hash<H: Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self).hash(h);
        match self {
            HiddenRole::Shape { buffer, dims, part } => (buffer, dims, part).hash(h),
            HiddenRole::Gather(g) => {
                (g.index, g.op, g.ty, g.identity).hash(h);
                g.combine.as_ref().map(|c| c.fingerprint()).hash(h);
            }
            HiddenRole::FaultWords => {}
            HiddenRole::LocalLen { len_param } => len_param.hash(h),
            HiddenRole::Shadow { buffer, own } => (buffer, own).hash(h),
        }
    }
}

impl Hash for HiddenParam {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.param.hash(h);
        self.role.hash(h);
    }
}

impl Function {
    /// What the launch passes for parameter `p`, if it is hidden.
    pub fn hidden_role(&self, p: ParamId) -> Option<&HiddenRole> {
        self.hidden.iter().find(|h| h.param == p).map(|h| &h.role)
    }

    /// Whether parameter `p` is filled in by the launch ([`Function::hidden`]).
    pub fn is_hidden(&self, p: ParamId) -> bool {
        self.hidden_role(p).is_some()
    }

    /// The parameters the caller passes, in launch order: every parameter that is not hidden.
    pub fn user_params(&self) -> impl Iterator<Item = ParamId> + '_ {
        self.params.ids().filter(|&p| !self.is_hidden(p))
    }

    /// The dimensions (2 or 3) of buffer parameter `p` if it is a 2-D or 3-D buffer.
    pub fn buffer_dims(&self, p: ParamId) -> Option<u8> {
        self.hidden.iter().find_map(|h| match h.role {
            HiddenRole::Shape { buffer, dims, .. } if buffer == p => Some(dims),
            _ => None,
        })
    }

    /// The parameter holding number `part` of the shape of 2-D or 3-D buffer parameter
    /// `buffer`, if the kernel has it.
    pub fn shape_param(&self, buffer: ParamId, part: ShapePart) -> Option<ParamId> {
        self.hidden.iter().find_map(|h| match h.role {
            HiddenRole::Shape {
                buffer: b, part: q, ..
            } if b == buffer && q == part => Some(h.param),
            _ => None,
        })
    }

    /// The kernel's gather reductions with their partials' parameters, in declaration order.
    pub fn gathers(&self) -> Vec<(ParamId, &Gather)> {
        let mut v: Vec<(ParamId, &Gather)> = self
            .hidden
            .iter()
            .filter_map(|h| match &h.role {
                HiddenRole::Gather(g) => Some((h.param, g)),
                _ => None,
            })
            .collect();
        v.sort_by_key(|(_, g)| g.index);
        v
    }

    /// Whether the kernel is instrumented for checked mode: it has the fault words that
    /// [`checked::instrument`](super::checked::instrument) adds. The interpreter then also
    /// keeps shadow memory and reports data races and uninitialized reads.
    pub fn is_checked(&self) -> bool {
        self.hidden
            .iter()
            .any(|h| matches!(h.role, HiddenRole::FaultWords))
    }

    /// The problems of the hidden-parameter list (for the validator): a hidden parameter
    /// that does not exist, is listed twice, or has the wrong kind for its role.
    pub(crate) fn hidden_problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let kind = |p: ParamId| self.params.get(p).map(|p| p.kind);
        let u32_scalar = Some(ParamKind::Scalar(Type::scalar(Scalar::U32)));
        for (i, h) in self.hidden.iter().enumerate() {
            let loc = format!("hidden parameter {i} (parameter {})", h.param);
            let mut bad = |m: String| out.push((loc.clone(), m));
            if self.hidden[..i].iter().any(|o| o.param == h.param) {
                bad("is listed twice".into());
            }
            let ok = match &h.role {
                HiddenRole::Shape { buffer, dims, part } => {
                    if !matches!(kind(*buffer), Some(ParamKind::Buffer { .. })) {
                        bad(format!(
                            "the shape of parameter {buffer}, which is not a buffer"
                        ));
                    }
                    let fits = match part {
                        ShapePart::RowPitch => true,
                        ShapePart::SlicePitch => *dims == 3,
                        ShapePart::Extent(d) => d < dims,
                    };
                    if !(2..=3).contains(dims) || !fits {
                        bad(format!("{part:?} of a {dims}-D buffer"));
                    }
                    kind(h.param) == u32_scalar
                }
                HiddenRole::LocalLen { len_param } => {
                    if kind(*len_param) != Some(ParamKind::LocalLen) {
                        bad(format!(
                            "repeats parameter {len_param}, which is not a local-length parameter"
                        ));
                    }
                    kind(h.param) == u32_scalar
                }
                HiddenRole::Gather(g) => matches!(
                    kind(h.param),
                    Some(ParamKind::Buffer { elem: Elem::Value(t), .. }) if t == g.ty
                ),
                HiddenRole::Shadow { buffer, .. } => {
                    if !matches!(kind(*buffer), Some(ParamKind::Buffer { .. })) {
                        bad(format!(
                            "the shadow of parameter {buffer}, which is not a buffer"
                        ));
                    }
                    matches!(
                        kind(h.param),
                        Some(ParamKind::Buffer { elem: Elem::Value(t), .. }) if t == Type::scalar(Scalar::U32)
                    )
                }
                HiddenRole::FaultWords => matches!(
                    kind(h.param),
                    Some(ParamKind::Buffer { elem: Elem::Value(t), .. }) if t == Type::scalar(Scalar::U32)
                ),
            };
            if !ok {
                bad(format!(
                    "the parameter's kind does not fit its role ({})",
                    h.role.name()
                ));
            }
        }
        out
    }
}

/// How an element of a buffer is laid out in host memory: what
/// [`Element::LAYOUT`](crate::builder::Element::LAYOUT) gives. A launch checks a buffer
/// argument's layout against the kernel's buffer parameter ([`ElementLayout::matches`]); the
/// builder declares a struct's layout in the kernel ([`Function::structs`]).
#[derive(Clone, Copy, Debug)]
pub enum ElementLayout {
    /// A scalar or vector.
    Value(Type),
    /// A `#[repr(C)]` struct.
    Struct(&'static StructLayout),
}

/// The layout of a `#[derive(Element)]` struct (sizes and offsets in bytes).
#[derive(Debug)]
pub struct StructLayout {
    /// The struct's name (a C identifier).
    pub name: &'static str,
    /// `size_of`.
    pub size: usize,
    /// `align_of`.
    pub align: usize,
    /// The fields, in declaration order.
    pub fields: &'static [FieldLayout],
}

/// One field of a [`StructLayout`].
#[derive(Debug)]
pub struct FieldLayout {
    /// The field's name.
    pub name: &'static str,
    /// `offset_of`.
    pub offset: usize,
    /// The field's type (the element type of an array field).
    pub ty: ElementLayout,
    /// `Some(n)` for an array field `[ty; n]`.
    pub len: Option<usize>,
}

impl ElementLayout {
    /// The type's name: `f32`, `[f32; 3]`, a struct's name.
    pub fn name(&self) -> String {
        match self {
            ElementLayout::Value(t) => t.to_string(),
            ElementLayout::Struct(s) => s.name.to_string(),
        }
    }

    /// Whether two layouts name the same element: the same value type, or structs of the
    /// same name (what [`ElementLayout::name`] tells apart, without building the strings).
    pub fn same_name(&self, other: &ElementLayout) -> bool {
        match (self, other) {
            (ElementLayout::Value(a), ElementLayout::Value(b)) => a == b,
            (ElementLayout::Struct(a), ElementLayout::Struct(b)) => a.name == b.name,
            _ => false,
        }
    }

    /// Whether this is the layout of element `elem` of kernel `f` (the same type, or a struct
    /// of the same name, size, alignment and fields).
    pub fn matches(&self, f: &Function, elem: Elem) -> bool {
        match (self, elem) {
            (ElementLayout::Value(t), Elem::Value(u)) => *t == u,
            (ElementLayout::Struct(s), Elem::Struct(i)) => f.structs.get(i).is_some_and(|d| {
                d.name == s.name
                    && d.size as usize == s.size
                    && d.align as usize == s.align
                    && d.fields.len() == s.fields.len()
                    && d.fields.iter().zip(s.fields).all(|(a, b)| {
                        a.name == b.name
                            && a.offset as usize == b.offset
                            && a.len.map(|n| n as usize) == b.len
                            && b.ty.matches(f, a.ty)
                    })
            }),
            _ => false,
        }
    }

    /// The scalars of a value of this layout whose bytes are `bytes`, in declaration order (a
    /// vector's components in turn): the launch arguments of a struct passed by value.
    pub fn scalars(&self, bytes: &[u8], out: &mut Vec<Literal>) {
        match *self {
            ElementLayout::Value(t) => {
                let size = t.scalar.size();
                for c in 0..t.width as usize {
                    let mut b = [0u8; 8];
                    b[..size].copy_from_slice(&bytes[c * size..(c + 1) * size]);
                    out.push(Literal::from_bits(t.scalar, u64::from_le_bytes(b)));
                }
            }
            ElementLayout::Struct(s) => {
                for f in s.fields {
                    let size = match f.ty {
                        ElementLayout::Value(t) => t.size(),
                        ElementLayout::Struct(i) => i.size,
                    };
                    for k in 0..f.len.unwrap_or(1) {
                        let at = f.offset + k * size;
                        f.ty.scalars(&bytes[at..at + size], out);
                    }
                }
            }
        }
    }
}

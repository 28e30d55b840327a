//! One kernel, [`Function`], and its tables: parameters, values, local and private arrays,
//! stubs, the structs that buffers hold and the field views of those buffers, with the
//! look-ups on them (element types, sizes, names, field paths).
//!
//! **Structs.** A buffer's element is an [`Elem`]: a scalar or vector, or a user struct
//! declared in [`Function::structs`] (a [`StructDecl`]: name, size, alignment, and fields at
//! byte offsets, each an `Elem`, optionally a fixed array; nested structs are declared before
//! the structs that hold them). A struct is never an IR value. Each scalar or vector field
//! that a kernel touches is a [`FieldView`] of [`Function::fields`], memory of its own whose
//! element `i` is that field of the buffer's element `i` ([`Mem::Field`]), so loads, stores
//! and atomics on fields are the ordinary statements, and every backend addresses a field as
//! it addresses memory: `base + i * size + offset` on the CPU backends, `buf[i].a.b[2]` in C.
//! [`Function::resolve_path`] is the one definition of where a path leads; the validator
//! checks the layouts (C identifiers, alignment, no `bool` fields, nested structs declared
//! first), the field views, and that a buffer of structs is accessed through its fields only.

use super::{expr_operands, stmt_operands, walk_block};
use super::{print, Access, Block, ExprArena, ExprId, HiddenParam, IdVec, Literal, Mem, Type};
use super::{FieldId, LocalId, ParamId, PrivateId, StructId, StubId, ValueId};
use std::fmt;

/// One kernel.
#[derive(Clone, Debug)]
pub struct Function {
    /// Kernel name (a C identifier).
    pub name: String,
    /// Parameters in launch order.
    pub params: IdVec<ParamId, Param>,
    /// Pure expressions.
    pub exprs: ExprArena,
    /// Values defined by statements.
    pub values: IdVec<ValueId, ValueDecl>,
    /// Local-memory arrays.
    pub locals: IdVec<LocalId, LocalDecl>,
    /// Private variables and arrays.
    pub privates: IdVec<PrivateId, PrivateDecl>,
    /// Number of loop ids used.
    pub loop_count: u32,
    /// Stub functions the kernel calls.
    pub stubs: IdVec<StubId, StubDecl>,
    /// Structs held by buffers, nested structs before the structs holding them.
    pub structs: IdVec<StructId, StructDecl>,
    /// Field views of buffers of structs ([`Mem::Field`]).
    pub fields: IdVec<FieldId, FieldView>,
    /// The body.
    pub body: Block,
    /// The parameters that the launch fills in, with what each holds (the launch ABI: see
    /// [`abi`](super::abi)); the others the caller passes.
    pub hidden: Vec<HiddenParam>,
}

impl Function {
    /// An empty kernel called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Function {
            name: name.into(),
            params: IdVec::new(),
            exprs: ExprArena::new(),
            values: IdVec::new(),
            locals: IdVec::new(),
            privates: IdVec::new(),
            loop_count: 0,
            stubs: IdVec::new(),
            structs: IdVec::new(),
            fields: IdVec::new(),
            body: Vec::new(),
            hidden: Vec::new(),
        }
    }

    /// Declares a new value of type `ty`.
    pub fn new_value(&mut self, ty: Type, name: Option<String>) -> ValueId {
        self.values.push(ValueDecl { name, ty })
    }

    /// The element type of a memory object (`None` for a buffer of structs, which is accessed
    /// through its field views).
    pub fn mem_elem(&self, mem: Mem) -> Option<Type> {
        match mem {
            Mem::Buffer(p) => match self.params.get(p)?.kind {
                ParamKind::Buffer { elem, .. } => elem.value(),
                _ => None,
            },
            Mem::Local(l) => self.locals.get(l).map(|d| d.elem),
            Mem::Private(v) => self.privates.get(v).map(|d| d.elem),
            Mem::Field(v) => self.fields.get(v).map(|d| d.ty),
        }
    }

    /// The buffer parameter behind a buffer or a field view.
    pub fn mem_buffer(&self, mem: Mem) -> Option<ParamId> {
        match mem {
            Mem::Buffer(p) => Some(p),
            Mem::Field(v) => self.fields.get(v).map(|d| d.buffer),
            Mem::Local(_) | Mem::Private(_) => None,
        }
    }

    /// The size in bytes of one element of a buffer (a struct's size for a buffer of
    /// structs), or `None` when `param` is not a buffer.
    pub fn buffer_elem_size(&self, param: ParamId) -> Option<usize> {
        match self.params.get(param)?.kind {
            ParamKind::Buffer { elem, .. } => Some(self.elem_size(elem)),
            _ => None,
        }
    }

    /// The size in bytes of an element.
    pub fn elem_size(&self, elem: Elem) -> usize {
        match elem {
            Elem::Value(t) => t.size(),
            Elem::Struct(s) => self.structs.get(s).map_or(0, |d| d.size as usize),
        }
    }

    /// The name of an element type (`f32`, `[f32; 3]`, a struct's name).
    pub fn elem_name(&self, elem: Elem) -> String {
        match elem {
            Elem::Value(t) => t.to_string(),
            Elem::Struct(s) => self
                .structs
                .get(s)
                .map_or(format!("struct{s}"), |d| d.name.clone()),
        }
    }

    /// Where a field view's path leads from a buffer element of struct `root`: its type and
    /// byte offset, or why the path is invalid.
    pub fn resolve_path(&self, root: StructId, path: &[FieldStep]) -> Result<(Type, u32), String> {
        let mut at = (Elem::Struct(root), None::<u32>);
        let mut offset = 0u32;
        for step in path {
            at = match (at, *step) {
                ((Elem::Struct(s), None), FieldStep::Field(i)) => {
                    let d = self
                        .structs
                        .get(s)
                        .ok_or_else(|| format!("struct {s} is not declared"))?;
                    let f = d
                        .fields
                        .get(i as usize)
                        .ok_or_else(|| format!("struct `{}` has no field {i}", d.name))?;
                    offset += f.offset;
                    (f.ty, f.len)
                }
                ((e, Some(n)), FieldStep::Elem(k)) if k < n => {
                    offset += k * self.elem_size(e) as u32;
                    (e, None)
                }
                ((Elem::Value(t), None), FieldStep::Elem(k))
                    if t.width > 1 && k < t.width as u32 =>
                {
                    offset += k * t.scalar.size() as u32;
                    (Elem::Value(Type::scalar(t.scalar)), None)
                }
                (_, step) => return Err(format!("the step {step:?} does not apply here")),
            };
        }
        match at {
            (Elem::Value(t), None) => Ok((t, offset)),
            _ => Err("the path ends at a struct or an array, not at a scalar or vector".into()),
        }
    }

    /// A field view of buffer `buffer` at `path` (an existing one when the same view was made
    /// before).
    pub fn field_view(&mut self, buffer: ParamId, path: Vec<FieldStep>) -> Result<Mem, String> {
        let root = match self.params.get(buffer).map(|p| p.kind) {
            Some(ParamKind::Buffer {
                elem: Elem::Struct(s),
                ..
            }) => s,
            _ => return Err(format!("parameter {buffer} is not a buffer of structs")),
        };
        let (ty, offset) = self.resolve_path(root, &path)?;
        if let Some(v) = self
            .fields
            .position(|v| v.buffer == buffer && v.path == path)
        {
            return Ok(Mem::Field(v));
        }
        Ok(Mem::Field(self.fields.push(FieldView {
            buffer,
            path,
            ty,
            offset,
        })))
    }

    /// A readable name for a memory object.
    pub fn mem_name(&self, mem: Mem) -> String {
        match mem {
            Mem::Buffer(p) => self
                .params
                .get(p)
                .map_or(format!("param{p}"), |d| d.name.clone()),
            Mem::Local(l) => self
                .locals
                .get(l)
                .map_or(format!("local{l}"), |d| d.name.clone()),
            Mem::Private(v) => self
                .privates
                .get(v)
                .map_or(format!("private{v}"), |d| d.name.clone()),
            Mem::Field(v) => match self.fields.get(v) {
                Some(d) => {
                    let mut name = self.mem_name(Mem::Buffer(d.buffer));
                    name.push_str("[]");
                    name.push_str(&self.path_suffix(d));
                    name
                }
                None => format!("field{v}"),
            },
        }
    }

    /// A field view's path as C spells it after the element: `.vel`, `.pos[2]`, `.a.b[1]`.
    pub fn path_suffix(&self, view: &FieldView) -> String {
        self.path_suffix_named(view, |n| n.to_string())
    }

    /// [`path_suffix`](Self::path_suffix) with each field's name as `name` spells it (the C
    /// writer's escaping of reserved words).
    pub fn path_suffix_named(&self, view: &FieldView, name: impl Fn(&str) -> String) -> String {
        let mut out = String::new();
        let Some(ParamKind::Buffer {
            elem: Elem::Struct(mut s),
            ..
        }) = self.params.get(view.buffer).map(|p| p.kind)
        else {
            return out;
        };
        for step in &view.path {
            match *step {
                FieldStep::Field(i) => {
                    let Some(f) = self.structs.get(s).and_then(|d| d.fields.get(i as usize)) else {
                        return out;
                    };
                    out.push('.');
                    out.push_str(&name(&f.name));
                    if let Elem::Struct(n) = f.ty {
                        s = n;
                    }
                }
                FieldStep::Elem(k) => out.push_str(&format!("[{k}]")),
            }
        }
        out
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print::function_to_string(self))
    }
}

/// How many times each expression of `f`'s arena is used: as an operand of another
/// expression (once per occurrence) or of a statement. Operands outside the arena (only in
/// malformed IR) are not counted.
pub fn expr_uses(f: &Function) -> IdVec<ExprId, u32> {
    let mut uses: IdVec<ExprId, u32> = vec![0u32; f.exprs.len()].into();
    let mut count = |id: ExprId| {
        if let Some(u) = uses.get_mut(id) {
            *u = u.saturating_add(1);
        }
    };
    for (_, e, _) in f.exprs.iter() {
        expr_operands(e).into_iter().for_each(&mut count);
    }
    walk_block(&f.body, &mut |s| {
        stmt_operands(s).into_iter().for_each(&mut count)
    });
    uses
}

/// A kernel parameter.
#[derive(Clone, PartialEq, Debug, Hash)]
pub struct Param {
    /// Name, carried into generated code.
    pub name: String,
    /// What the parameter is.
    pub kind: ParamKind,
}

/// What a kernel parameter is.
#[derive(Clone, Copy, PartialEq, Debug, Hash)]
pub enum ParamKind {
    /// A buffer of elements in global memory.
    Buffer {
        /// Element type: a scalar or vector, or a struct whose fields are accessed through
        /// [`Mem::Field`] views.
        elem: Elem,
        /// How the kernel uses it.
        access: Access,
        /// If set, the launch checks that the buffer has exactly this many elements.
        len: Option<u64>,
    },
    /// A scalar passed by value.
    Scalar(Type),
    /// The element count of a local-memory array whose size is chosen at launch.
    LocalLen,
}

/// The length of a local-memory array.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum ArrayLen {
    /// Fixed when the kernel is built.
    Fixed(u32),
    /// Given at launch through [`ParamKind::LocalLen`] parameter `n`.
    Param(ParamId),
}

/// A local-memory (work-group shared) array.
#[derive(Clone, PartialEq, Debug, Hash)]
pub struct LocalDecl {
    /// Name.
    pub name: String,
    /// Element type.
    pub elem: Type,
    /// Number of elements.
    pub len: ArrayLen,
}

/// A private variable (`len == None`) or private array.
#[derive(Clone, PartialEq, Debug, Hash)]
pub struct PrivateDecl {
    /// Name.
    pub name: String,
    /// Element type.
    pub elem: Type,
    /// `None` for a variable, the element count for an array.
    pub len: Option<u32>,
}

impl PrivateDecl {
    /// Number of elements (1 for a variable).
    pub fn count(&self) -> u32 {
        self.len.unwrap_or(1)
    }
}

/// A value's declaration: its type and, where the user gave one, its name.
#[derive(Clone, PartialEq, Debug, Hash)]
pub struct ValueDecl {
    /// Name from the user's code, if known.
    pub name: Option<String>,
    /// Type.
    pub ty: Type,
}

/// A user-defined struct that buffers hold (`#[derive(Element)]`): its C layout, the same as
/// Rust's `#[repr(C)]` one. Offsets and sizes are in bytes.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct StructDecl {
    /// The name (a C identifier), unique in a kernel.
    pub name: String,
    /// `size_of` the struct (a multiple of `align`).
    pub size: u32,
    /// `align_of` the struct.
    pub align: u32,
    /// The fields, in declaration order.
    pub fields: Vec<FieldDecl>,
}

/// One field of a [`StructDecl`].
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FieldDecl {
    /// The name (a C identifier).
    pub name: String,
    /// Byte offset from the start of the struct.
    pub offset: u32,
    /// What it holds.
    pub ty: Elem,
    /// `Some(n)` for a fixed array of `n` of `ty`.
    pub len: Option<u32>,
}

/// What a buffer element or struct field is: a scalar or vector, or a struct
/// ([`Function::structs`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Elem {
    /// A scalar or vector.
    Value(Type),
    /// Struct `n` of [`Function::structs`].
    Struct(StructId),
}

impl Elem {
    /// The scalar or vector type, if the element is not a struct.
    pub fn value(self) -> Option<Type> {
        match self {
            Elem::Value(t) => Some(t),
            Elem::Struct(_) => None,
        }
    }
}

/// One step of a [`FieldView`]'s path into a struct.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FieldStep {
    /// Field `n` of the struct reached so far.
    Field(u32),
    /// Element `n` of the fixed array (or component `n` of the vector) reached so far.
    Elem(u32),
}

/// A field of a buffer of structs seen as memory of its own ([`Mem::Field`]): element `i` of
/// the view is the field of element `i` of the buffer. Loads, stores and atomics address it
/// like any memory; its bounds are the buffer's.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FieldView {
    /// The buffer parameter.
    pub buffer: ParamId,
    /// The path from the buffer's element to the field (never empty).
    pub path: Vec<FieldStep>,
    /// The field's type (a scalar or vector, never a struct).
    pub ty: Type,
    /// Byte offset of the field in the element (computed from the path).
    pub offset: u32,
}

/// The CPU body of a stub function: scalar arguments in, scalar result out.
pub type StubCpuBody = std::sync::Arc<dyn Fn(&[Literal]) -> Literal + Send + Sync>;

/// A helper function whose body is target source (Concurnas' `GPUStubFunction`): a pure
/// function of scalars, with one body per dialect (`opencl`, `cuda`) and optionally a Rust body
/// for the CPU backend. A backend without a body for itself rejects the kernel with a clear
/// error. Stubs are identified by name and sources: two stubs of one name in one kernel must
/// be the same.
#[derive(Clone)]
pub struct StubDecl {
    /// The function's name in the sources (a C identifier).
    pub name: String,
    /// Parameter types (scalars).
    pub params: Vec<Type>,
    /// Result type (a scalar).
    pub ret: Type,
    /// Source per dialect key (`opencl`, `cuda`): a complete function definition.
    pub sources: Vec<(String, String)>,
    /// The body on the CPU backend.
    pub cpu: Option<StubCpuBody>,
}

impl StubDecl {
    /// The source for a dialect, if any.
    pub fn source(&self, dialect: &str) -> Option<&str> {
        self.sources
            .iter()
            .find(|(d, _)| d == dialect)
            .map(|(_, s)| s.as_str())
    }
}

impl std::fmt::Debug for StubDecl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StubDecl")
            .field("name", &self.name)
            .field("params", &self.params)
            .field("ret", &self.ret)
            .field("sources", &self.sources)
            .field("cpu", &self.cpu.is_some())
            .finish()
    }
}

//! Buffers of user structs (`#[derive(Element)]`): places of their fields and whole-struct
//! loads and stores.
//!
//! A buffer of structs is never loaded as one IR value: every field of element `i` is a
//! [`FieldPlace`], which the kernel reads or writes on its own ([`Place::load`],
//! [`Place::store`]); the IR sees a [`Mem::Field`] view of the buffer per field. A whole
//! struct is loaded field by field into its device form (`Element::Dev`, a struct of
//! [`Expr`]s the derive generates), and stored the same way.
//!
//! `declare` puts an element's structs (nested ones first) into the kernel being built, from
//! the [`ElementLayout`] the derive computed with `size_of` and `offset_of!`. A struct taken
//! by value ([`ByValue`]) is one scalar parameter per scalar of its fields; its launch
//! argument expands into those scalars, read from the struct's bytes by its layout.

use super::types::{Element, KernelType};
use super::{check_handle, load, store, with, BufferParam, Expr, Index};
use crate::ir::ElementLayout;
use crate::ir::{self, ExprId, FieldStep, Mem, ParamId};

use std::marker::PhantomData;
use std::panic::Location;

/// A place in a buffer of structs: element `index` of buffer parameter `buffer`, then `path`
/// into it. Built by [`BufferParam::item`]; the places of the fields extend the path.
#[derive(Clone, Debug)]
pub struct FieldPlace {
    buffer: ParamId,
    trace: u32,
    index: ExprId,
    path: Vec<FieldStep>,
}

impl FieldPlace {
    /// The place of field `n` (declaration order) of the struct here.
    #[doc(hidden)]
    pub fn field(&self, n: u32) -> FieldPlace {
        self.step(FieldStep::Field(n))
    }

    /// The place of element `k` of the array here.
    #[doc(hidden)]
    pub fn elem(&self, k: u32) -> FieldPlace {
        self.step(FieldStep::Elem(k))
    }

    fn step(&self, s: FieldStep) -> FieldPlace {
        let mut p = self.clone();
        p.path.push(s);
        p
    }

    #[track_caller]
    fn mem(&self) -> Mem {
        check_handle(self.trace, "buffer parameter");
        let at = Location::caller();
        with(|t| match t.f.field_view(self.buffer, self.path.clone()) {
            Ok(m) => m,
            Err(e) => {
                t.errors.push(format!(
                    "a field of buffer `{}`: {e}{}",
                    t.f.params[self.buffer].name,
                    super::at_str(at)
                ));
                Mem::Buffer(self.buffer)
            }
        })
    }
}

/// A scalar or vector field of an element of a buffer of structs (`ps.item(i).vel`).
#[derive(Clone, Debug)]
pub struct Place<T> {
    at: FieldPlace,
    _t: PhantomData<fn() -> T>,
}

impl<T: KernelType> Place<T> {
    /// The place `at`.
    #[doc(hidden)]
    pub fn new(at: FieldPlace) -> Self {
        Place {
            at,
            _t: PhantomData,
        }
    }

    /// Reads the field.
    #[track_caller]
    pub fn load(&self) -> Expr<T> {
        load(self.at.mem(), self.at.index)
    }

    /// Writes the field (the element's other fields are left as they are).
    #[track_caller]
    pub fn store(&self, v: impl Into<Expr<T>>) {
        store(self.at.mem(), self.at.index, v.into())
    }
}

/// Places that read and write a whole value: a field's [`Place`], a struct's generated place
/// and arrays of them.
pub trait FieldAccess {
    /// What is read or written.
    type Value;
    /// Reads it (a struct field by field).
    fn load(&self) -> Self::Value;
    /// Writes it (a struct field by field).
    fn store(&self, v: Self::Value);
}

impl<T: KernelType> FieldAccess for Place<T> {
    type Value = Expr<T>;
    #[track_caller]
    fn load(&self) -> Expr<T> {
        Place::load(self)
    }
    #[track_caller]
    fn store(&self, v: Expr<T>) {
        Place::store(self, v)
    }
}

impl<P: FieldAccess, const N: usize> FieldAccess for [P; N] {
    type Value = [P::Value; N];
    // A loop, not `array::from_fn`: a closure would end the `#[track_caller]` chain, and the
    // loads would name this line instead of the kernel's.
    #[track_caller]
    fn load(&self) -> Self::Value {
        let mut values = Vec::with_capacity(N);
        for p in self {
            values.push(p.load());
        }
        match values.try_into() {
            Ok(values) => values,
            Err(_) => unreachable!("one value per place"),
        }
    }
    #[track_caller]
    fn store(&self, v: Self::Value) {
        for (p, x) in self.iter().zip(v) {
            p.store(x);
        }
    }
}

/// The places of the elements of an array field `[E; N]` (used by `#[derive(Element)]`).
#[doc(hidden)]
pub fn array_places<E: Element, const N: usize>(at: &FieldPlace) -> [E::Place; N] {
    std::array::from_fn(|k| E::place(at.elem(k as u32)))
}

impl<T: Element> BufferParam<T> {
    /// Element `i` of a buffer of structs as a place: its fields are places
    /// (`ps.item(i).vel.store(v)`, `ps.item(i).mass.load()`), and the whole struct is read
    /// and written with [`FieldAccess::load`] / [`FieldAccess::store`] (field by field).
    #[track_caller]
    pub fn item(&self, i: impl Index) -> T::Place {
        self.item_at(i.index_id())
    }

    #[track_caller]
    pub(crate) fn item_at(&self, index: ExprId) -> T::Place {
        check_handle(self.trace, "buffer parameter");
        T::place(FieldPlace {
            buffer: self.param,
            trace: self.trace,
            index,
            path: Vec::new(),
        })
    }
}

/// Declares the struct of `layout` (and the structs it nests, first) in the kernel being
/// built; returns its index. A different struct of the same name is an error.
pub(crate) fn declare(layout: ElementLayout) -> ir::Elem {
    match layout {
        ElementLayout::Value(t) => ir::Elem::Value(t),
        ElementLayout::Struct(s) => {
            let fields: Vec<ir::FieldDecl> = s
                .fields
                .iter()
                .map(|f| ir::FieldDecl {
                    name: f.name.to_string(),
                    offset: f.offset as u32,
                    ty: declare(f.ty),
                    len: f.len.map(|n| n as u32),
                })
                .collect();
            let decl = ir::StructDecl {
                name: s.name.to_string(),
                size: s.size as u32,
                align: s.align as u32,
                fields,
            };
            with(|t| {
                if let Some(i) = t.f.structs.position(|d| d.name == decl.name) {
                    if t.f.structs[i] != decl {
                        t.errors.push(format!(
                            "two different structs named `{}` are used in kernel `{}`",
                            decl.name, t.f.name
                        ));
                    }
                    return ir::Elem::Struct(i);
                }
                ir::Elem::Struct(t.f.structs.push(decl))
            })
        }
    }
}

/// A type a kernel takes by value at launch: a scalar (one parameter) or a
/// `#[derive(Element)]` struct (one scalar parameter per scalar of its fields, named
/// `name_field`, `name_field_0`, ...; the launch argument is the struct itself).
pub trait ByValue {
    /// Its value inside the kernel: `Expr<T>` for a scalar, the struct's device form.
    type Dev;
    /// Declares the parameter(s) called `name` in the kernel being built.
    fn declare(name: &str) -> Self::Dev;
}

impl<T: super::ScalarType> ByValue for T {
    type Dev = Expr<T>;
    #[track_caller]
    fn declare(name: &str) -> Expr<T> {
        scalar_param(name)
    }
}

fn scalar_param<T: super::ScalarType>(name: &str) -> Expr<T> {
    let (p, _) = super::declare_param(name, ir::ParamKind::Scalar(T::TYPE));
    super::node(ir::Expr::Param(p))
}

/// A by-value parameter of element type `T` (a field of a struct passed by value): one scalar
/// parameter, or one per component of a vector (`name_0`, `name_1`, ...).
#[doc(hidden)]
pub fn value_param<T: super::Value>(name: &str) -> Expr<T> {
    let ty = T::TYPE;
    if ty.width == 1 {
        let p = with(|t| {
            t.f.params.push(ir::Param {
                name: name.to_string(),
                kind: ir::ParamKind::Scalar(ty),
            })
        });
        return super::node(ir::Expr::Param(p));
    }
    let ids: Vec<ExprId> = (0..ty.width)
        .map(|c| {
            let p = with(|t| {
                t.f.params.push(ir::Param {
                    name: format!("{name}_{c}"),
                    kind: ir::ParamKind::Scalar(ir::Type::scalar(ty.scalar)),
                })
            });
            super::id_of(super::node_typed::<T>(
                ir::Expr::Param(p),
                ir::Type::scalar(ty.scalar),
            ))
        })
        .collect();
    super::node_typed(ir::Expr::Compose(ids), ty)
}

//! 2-D and 3-D buffer parameters ([`BufferParam2`], [`BufferParam3`]), indexed by coordinates.
//!
//! The IR stays 1-D: a pitched parameter `img` is an ordinary buffer parameter `img` followed
//! by hidden `u32` parameters `img_pitch` (and `img_slice_pitch` in 3-D), the pitches in
//! elements, and, once the kernel asks for [`extent`](BufferParam2::extent), `img_width`,
//! `img_height` (and `img_depth`). A launch fills them in from the
//! [`Buffer2`](crate::Buffer2)/[`Buffer3`](crate::Buffer3) it is given: each is listed in
//! [`ir::Function::hidden`] with its [`ir::HiddenRole::Shape`]; a flat buffer, or one of
//! other dimensions, is an [`Error::ArgumentType`](crate::Error::ArgumentType). Coordinates
//! index as `z * slice_pitch + y * pitch + x`, written outermost first: `img.at2(y, x)`,
//! `img[(y, x)]` in `#[kernel]`. Coordinates are not checked against the extent; an index
//! past the allocation is an out-of-bounds access like any other, reported with the
//! coordinates and the extent that the host decodes from it ([`Coords`](crate::Coords)).

use super::types::Element;
use super::{declare_param, math, node, with, BufferParam, Expr, KernelDef};
use crate::ir::{
    self, Expr as IrExpr, HiddenParam, HiddenRole, ParamId, ParamKind, ShapePart, Type,
};

/// A buffer parameter in `D` dimensions (2 or 3) with pitched rows: [`BufferParam2`],
/// [`BufferParam3`].
#[derive(Clone, Copy, Debug)]
pub struct PitchedParam<T, const D: usize> {
    buf: BufferParam<T>,
}

/// A 2-D buffer parameter: `k.read2::<f32>("img")`, `img: &Buffer2<f32>` in `#[kernel]`.
pub type BufferParam2<T> = PitchedParam<T, 2>;
/// A 3-D buffer parameter: `k.read3::<f32>("vol")`, `vol: &Buffer3<f32>` in `#[kernel]`.
pub type BufferParam3<T> = PitchedParam<T, 3>;

/// Coordinates of an element of a `D`-dimensional buffer, outermost first: `(y, x)` or
/// `(z, y, x)`, each a `u32` expression or constant.
pub trait Coords<const D: usize>: Copy {
    /// The coordinates, outermost first.
    fn coords(self) -> [Expr<u32>; D];
}

impl<Y, X> Coords<2> for (Y, X)
where
    Y: Into<Expr<u32>> + Copy,
    X: Into<Expr<u32>> + Copy,
{
    fn coords(self) -> [Expr<u32>; 2] {
        [self.0.into(), self.1.into()]
    }
}

impl<Z, Y, X> Coords<3> for (Z, Y, X)
where
    Z: Into<Expr<u32>> + Copy,
    Y: Into<Expr<u32>> + Copy,
    X: Into<Expr<u32>> + Copy,
{
    fn coords(self) -> [Expr<u32>; 3] {
        [self.0.into(), self.1.into(), self.2.into()]
    }
}

impl KernelDef {
    fn pitched<T: Element, const D: usize>(
        &mut self,
        name: &str,
        access: ir::Access,
    ) -> PitchedParam<T, D> {
        let buf = self.buffer::<T>(name, access);
        let p = PitchedParam { buf };
        p.declare_shape(ShapePart::RowPitch, &format!("{name}_pitch"));
        if D == 3 {
            p.declare_shape(ShapePart::SlicePitch, &format!("{name}_slice_pitch"));
        }
        p
    }

    /// A 2-D buffer parameter with the given access (see [`BufferParam2`]).
    pub fn buffer2<T: Element>(&mut self, name: &str, access: ir::Access) -> BufferParam2<T> {
        self.pitched(name, access)
    }

    /// A 2-D buffer the kernel only reads.
    pub fn read2<T: Element>(&mut self, name: &str) -> BufferParam2<T> {
        self.buffer2(name, ir::Access::Read)
    }

    /// A 2-D buffer the kernel only writes.
    pub fn write2<T: Element>(&mut self, name: &str) -> BufferParam2<T> {
        self.buffer2(name, ir::Access::Write)
    }

    /// A 2-D buffer the kernel reads and writes.
    pub fn read_write2<T: Element>(&mut self, name: &str) -> BufferParam2<T> {
        self.buffer2(name, ir::Access::ReadWrite)
    }

    /// A 3-D buffer parameter with the given access (see [`BufferParam3`]).
    pub fn buffer3<T: Element>(&mut self, name: &str, access: ir::Access) -> BufferParam3<T> {
        self.pitched(name, access)
    }

    /// A 3-D buffer the kernel only reads.
    pub fn read3<T: Element>(&mut self, name: &str) -> BufferParam3<T> {
        self.buffer3(name, ir::Access::Read)
    }

    /// A 3-D buffer the kernel only writes.
    pub fn write3<T: Element>(&mut self, name: &str) -> BufferParam3<T> {
        self.buffer3(name, ir::Access::Write)
    }

    /// A 3-D buffer the kernel reads and writes.
    pub fn read_write3<T: Element>(&mut self, name: &str) -> BufferParam3<T> {
        self.buffer3(name, ir::Access::ReadWrite)
    }
}

fn u32_param() -> ParamKind {
    ParamKind::Scalar(Type::scalar(ir::Scalar::U32))
}

impl<T: Element, const D: usize> PitchedParam<T, D> {
    /// Declares the hidden `u32` parameter `name` holding `part` of this buffer's shape.
    fn declare_shape(&self, part: ShapePart, name: &str) -> ParamId {
        let (q, _) = declare_param(name, u32_param());
        with(|t| {
            t.f.hidden.push(HiddenParam {
                param: q,
                role: HiddenRole::Shape {
                    buffer: self.buf.param,
                    dims: D as u8,
                    part,
                },
            })
        });
        q
    }

    /// The hidden parameter holding `part` of this buffer's shape.
    fn shape(&self, part: ShapePart) -> ParamId {
        with(|t| t.f.shape_param(self.buf.param, part))
            .expect("strata bug: a pitched parameter without its pitches")
    }

    /// The extent's parameters (width, height, depth), declared on first use.
    fn extent_params(&self) -> Vec<ParamId> {
        (0..D as u8)
            .map(|d| {
                let part = ShapePart::Extent(d);
                match with(|t| t.f.shape_param(self.buf.param, part)) {
                    Some(q) => q,
                    None => {
                        let name = with(|t| t.f.params[self.buf.param].name.clone());
                        let n = ["width", "height", "depth"][d as usize];
                        self.declare_shape(part, &format!("{name}_{n}"))
                    }
                }
            })
            .collect()
    }

    /// The row pitch in elements (from one row to the next), a launch parameter.
    #[track_caller]
    pub fn pitch(&self) -> Expr<u32> {
        super::check_handle(self.buf.trace, "buffer parameter");
        node(IrExpr::Param(self.shape(ShapePart::RowPitch)))
    }

    /// The flat index of the element at `c` (outermost first).
    #[track_caller]
    fn flat(&self, c: impl Coords<D>) -> Expr<u32> {
        let c = c.coords();
        let row = c[D - 2] * self.pitch() + c[D - 1];
        if D == 3 {
            let slice: Expr<u32> = node(IrExpr::Param(self.shape(ShapePart::SlicePitch)));
            c[0] * slice + row
        } else {
            row
        }
    }

    /// Reads the element at `c`: `(y, x)` or `(z, y, x)`.
    #[track_caller]
    pub fn at(&self, c: impl Coords<D>) -> T::Dev {
        let i = self.flat(c);
        self.buf.at(i)
    }

    /// Writes `value` to the element at `c`: `(y, x)` or `(z, y, x)`.
    #[track_caller]
    pub fn set(&self, c: impl Coords<D>, value: impl Into<T::Dev>) {
        let i = self.flat(c);
        self.buf.set(i, value)
    }

    /// The memory as a flat buffer (element `(z, y, x)` at `z * slice_pitch + y * pitch +
    /// x`), for atomics and hand-computed indices.
    pub fn flat_buffer(&self) -> BufferParam<T> {
        self.buf
    }
}

impl<T: Element> PitchedParam<T, 2> {
    /// Reads the element in row `y`, column `x`.
    #[track_caller]
    pub fn at2(&self, y: impl Into<Expr<u32>>, x: impl Into<Expr<u32>>) -> T::Dev {
        self.at((y.into(), x.into()))
    }

    /// Writes `value` to the element in row `y`, column `x`.
    #[track_caller]
    pub fn set2(&self, y: impl Into<Expr<u32>>, x: impl Into<Expr<u32>>, value: impl Into<T::Dev>) {
        self.set((y.into(), x.into()), value)
    }

    /// The extent `(width, height)` of the buffer passed at launch, in launch order like
    /// [`global_id2`](super::global_id2): the guard of a launch over the image is
    /// `in_bounds(global_id2(), img.extent())`.
    #[track_caller]
    pub fn extent(&self) -> Expr<[u32; 2]> {
        super::check_handle(self.buf.trace, "buffer parameter");
        let e = self.extent_params();
        math::vec2::<u32>(
            node::<u32>(IrExpr::Param(e[0])),
            node::<u32>(IrExpr::Param(e[1])),
        )
    }
}

impl<T: Element> PitchedParam<T, 3> {
    /// Reads the element in slice `z`, row `y`, column `x`.
    #[track_caller]
    pub fn at3(
        &self,
        z: impl Into<Expr<u32>>,
        y: impl Into<Expr<u32>>,
        x: impl Into<Expr<u32>>,
    ) -> T::Dev {
        self.at((z.into(), y.into(), x.into()))
    }

    /// Writes `value` to the element in slice `z`, row `y`, column `x`.
    #[track_caller]
    pub fn set3(
        &self,
        z: impl Into<Expr<u32>>,
        y: impl Into<Expr<u32>>,
        x: impl Into<Expr<u32>>,
        value: impl Into<T::Dev>,
    ) {
        self.set((z.into(), y.into(), x.into()), value)
    }

    /// The slice pitch in elements (from one slice to the next), a launch parameter.
    #[track_caller]
    pub fn slice_pitch(&self) -> Expr<u32> {
        super::check_handle(self.buf.trace, "buffer parameter");
        node(IrExpr::Param(self.shape(ShapePart::SlicePitch)))
    }

    /// The extent `(width, height, depth)` of the buffer passed at launch, in launch order
    /// like [`global_id3`](super::global_id3).
    #[track_caller]
    pub fn extent(&self) -> Expr<[u32; 3]> {
        super::check_handle(self.buf.trace, "buffer parameter");
        let e = self.extent_params();
        math::vec3::<u32>(
            node::<u32>(IrExpr::Param(e[0])),
            node::<u32>(IrExpr::Param(e[1])),
            node::<u32>(IrExpr::Param(e[2])),
        )
    }
}

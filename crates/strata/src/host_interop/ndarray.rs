//! `ndarray` arrays to and from buffers and fields (feature `ndarray`).
//!
//! | host | device | upload | download |
//! | --- | --- | --- | --- |
//! | `Array1`, `ArrayView1` | [`Buffer<T>`] | [`Buffer::from_array`], [`Buffer::write_array`] | [`Buffer::to_array`] |
//! | `Array2`, `ArrayView2` of shape `(height, width)` | [`Buffer2<T>`] of extent `[width, height]` | [`Buffer2::from_array`](PitchedBuffer::from_array), [`Buffer2::write_array`](PitchedBuffer::write_array) | [`Buffer2::to_array`](PitchedBuffer::to_array) |
//! | `Array3`, `ArrayView3` of shape `(depth, height, width)` | [`Buffer3<T>`] of extent `[width, height, depth]` | [`Buffer3::from_array`](PitchedBuffer::from_array), [`Buffer3::write_array`](PitchedBuffer::write_array) | [`Buffer3::to_array`](PitchedBuffer::to_array) |
//! | an array of 0 to 3 dimensions | [`Field<T>`] of the same shape (layers x rows x columns) | [`Fields::from_array`] | [`Field::to_array`] |
//!
//! Every method takes any array whose elements are strata elements: owned (`Array`), viewed
//! (`ArrayView`, `ArrayViewMut`), shared (`ArcArray`) or copied on write (`CowArray`).
//!
//! **Strides.** An array in standard layout (row-major, contiguous, positive strides: what
//! `Array::zeros` and `Array::from_shape_vec` make) is uploaded straight from its memory. Any
//! other layout (a transposed view, a slice with steps, negative strides, Fortran order) is
//! accepted too: its elements are first copied on the host into standard order, one pass over
//! the array, so the device always receives the *logical* array (`a[[i, j]]` lands at
//! `x = j, y = i` however `a` is laid out in memory). Call `a.is_standard_layout()` first where
//! that host copy matters. A pitched buffer's padding never reaches the host: downloads give a
//! standard-layout `Array` of the buffer's extent.
//!
//! ```
//! use ndarray::{array, s, Array2};
//! use strata::prelude::*;
//! # fn main() -> strata::Result<()> {
//! let queue = Queue::new(&Device::from_spec("cpu")?)?;
//! let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]; // 2 rows (y) x 3 columns (x)
//! let img = Buffer2::from_array(&queue, &a)?;
//! assert_eq!(img.extent(), [3, 2]);
//! assert_eq!(img.to_array(&queue)?, a);
//! // A transposed view is uploaded in its logical order.
//! let t = Buffer2::from_array(&queue, &a.t())?;
//! assert_eq!(t.extent(), [2, 3]);
//! assert_eq!(t.to_array(&queue)?, a.t());
//! // Columns 0 and 2 only (a slice with a step).
//! let cols: Array2<f32> = Buffer2::from_array(&queue, &a.slice(s![.., ..;2]))?.to_array(&queue)?;
//! assert_eq!(cols, array![[1.0, 3.0], [4.0, 6.0]]);
//! # Ok(())
//! # }
//! ```

use super::InteropError;
use crate::builder::Element;
use crate::error::Result;
use crate::fields::{Field, Fields, Shape, Tensor};
use crate::runtime::{Buffer, PitchedBuffer, Queue};
#[cfg(doc)]
use crate::{Buffer2, Buffer3};
use ndarray::{Array, Array1, Array2, Array3, ArrayBase, Data, Dimension, Ix1, Ix2, Ix3, IxDyn};
use std::borrow::Cow;

/// The elements of `a` in its logical (row-major) order: its memory where it is in standard
/// layout, else a copy.
fn packed<T: Copy, S: Data<Elem = T>, D: Dimension>(a: &ArrayBase<S, D>) -> Cow<'_, [T]> {
    match a.as_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(a.iter().copied().collect()),
    }
}

/// An array of `shape` from `data` of exactly that many elements in row-major order.
fn shaped<T, D: Dimension>(
    op: &'static str,
    shape: impl ndarray::ShapeBuilder<Dim = D>,
    data: Vec<T>,
) -> Result<Array<T, D>> {
    Array::from_shape_vec(shape, data).map_err(|e| {
        InteropError {
            op,
            detail: format!("the data read does not make an array of its shape: {e}"),
        }
        .into()
    })
}

impl<T: Element> Buffer<T> {
    /// A buffer on the queue's device holding the elements of the 1-D array `a` in order
    /// (a strided or reversed view is copied into order on the host first; see the
    /// [module docs](self)).
    pub fn from_array<S: Data<Elem = T>>(
        queue: &Queue,
        a: &ArrayBase<S, Ix1>,
    ) -> Result<Buffer<T>> {
        Buffer::from_slice(queue, &packed(a))
    }

    /// Writes the 1-D array `a` over the whole buffer; fails with [`InteropError`] unless `a`
    /// has exactly [`len`](Buffer::len) elements.
    pub fn write_array<S: Data<Elem = T>>(
        &self,
        queue: &Queue,
        a: &ArrayBase<S, Ix1>,
    ) -> Result<()> {
        if a.len() != self.len() {
            return Err(InteropError {
                op: "Buffer::write_array",
                detail: format!(
                    "the array has {} elements, the buffer {}",
                    a.len(),
                    self.len()
                ),
            }
            .into());
        }
        queue.write(self, 0.., &packed(a))
    }

    /// Reads the whole buffer into a 1-D array.
    pub fn to_array(&self, queue: &Queue) -> Result<Array1<T>> {
        Ok(Array1::from_vec(self.to_vec(queue)?))
    }
}

/// Fails unless `shape` (outermost first) is the reverse of `extent` (x first).
fn check_extent<const D: usize>(
    op: &'static str,
    shape: &[usize],
    extent: [usize; D],
) -> Result<()> {
    let mut expected = extent;
    expected.reverse();
    if shape == expected {
        return Ok(());
    }
    Err(InteropError {
        op,
        detail: format!(
            "the array's shape is {shape:?} (outermost first), but the buffer's extent {extent:?} \
             (x first) needs an array of shape {expected:?}"
        ),
    }
    .into())
}

impl<T: Element> PitchedBuffer<T, 2> {
    /// A 2-D buffer on the queue's device holding `a`, an array of `height` rows and `width`
    /// columns: extent `[width, height]`, `a[[y, x]]` at `(x, y)`. Any layout of `a` is
    /// accepted (transposed and strided views are copied into standard order on the host first;
    /// see the [module docs](self)).
    pub fn from_array<S: Data<Elem = T>>(queue: &Queue, a: &ArrayBase<S, Ix2>) -> Result<Self> {
        let (h, w) = a.dim();
        PitchedBuffer::from_slice(queue, [w, h], &packed(a))
    }

    /// Writes `a` over the whole buffer; fails with [`InteropError`] unless `a`'s shape is
    /// `(height, width)` of the buffer's extent `[width, height]`.
    pub fn write_array<S: Data<Elem = T>>(
        &self,
        queue: &Queue,
        a: &ArrayBase<S, Ix2>,
    ) -> Result<()> {
        check_extent("Buffer2::write_array", a.shape(), self.extent())?;
        queue.write_region(self, [0, 0], self.extent(), &packed(a))
    }

    /// Reads the buffer into an array of shape `(height, width)`, without the rows' padding.
    pub fn to_array(&self, queue: &Queue) -> Result<Array2<T>> {
        let [w, h] = self.extent();
        shaped("Buffer2::to_array", (h, w), self.to_vec(queue)?)
    }
}

impl<T: Element> PitchedBuffer<T, 3> {
    /// A 3-D buffer on the queue's device holding `a`, an array of shape `(depth, height,
    /// width)`: extent `[width, height, depth]`, `a[[z, y, x]]` at `(x, y, z)`. Any layout of
    /// `a` is accepted (see the [module docs](self)).
    pub fn from_array<S: Data<Elem = T>>(queue: &Queue, a: &ArrayBase<S, Ix3>) -> Result<Self> {
        let (d, h, w) = a.dim();
        PitchedBuffer::from_slice(queue, [w, h, d], &packed(a))
    }

    /// Writes `a` over the whole buffer; fails with [`InteropError`] unless `a`'s shape is
    /// `(depth, height, width)` of the buffer's extent `[width, height, depth]`.
    pub fn write_array<S: Data<Elem = T>>(
        &self,
        queue: &Queue,
        a: &ArrayBase<S, Ix3>,
    ) -> Result<()> {
        check_extent("Buffer3::write_array", a.shape(), self.extent())?;
        queue.write_region(self, [0, 0, 0], self.extent(), &packed(a))
    }

    /// Reads the buffer into an array of shape `(depth, height, width)`, without the padding.
    pub fn to_array(&self, queue: &Queue) -> Result<Array3<T>> {
        let [w, h, d] = self.extent();
        shaped("Buffer3::to_array", (d, h, w), self.to_vec(queue)?)
    }
}

impl Fields {
    /// A field of `a`'s shape (0 to 3 dimensions, outermost first: layers x rows x columns)
    /// holding its elements, one tensor per point. Any layout of `a` is accepted (see the
    /// [module docs](self)). Fails with [`InteropError`] for more than 3 dimensions, and as
    /// [`Fields::from_slice`] does for an empty dimension.
    pub fn from_array<T: Tensor, S: Data<Elem = T>, D: Dimension>(
        &self,
        a: &ArrayBase<S, D>,
    ) -> Result<Field<T>> {
        if a.ndim() > 3 {
            return Err(InteropError {
                op: "Fields::from_array",
                detail: format!(
                    "the array has {} dimensions (shape {:?}); fields have 0 to 3 (layers x rows x columns)",
                    a.ndim(),
                    a.shape()
                ),
            }
            .into());
        }
        self.from_slice(Shape::new(a.shape())?, &packed(a))
    }
}

impl<T: Tensor> Field<T> {
    /// Runs the field if it is lazy and reads it into an array of its shape (layers x rows x
    /// columns; a 0-D field is a 0-D array). `D` is the array's dimension: `Ix2` (an
    /// `Array2`) for a 2-D field, or `IxDyn` (an `ArrayD`) for any; fails with
    /// [`InteropError`] when the field has other dimensions than `D`.
    pub fn to_array<D: Dimension>(&self) -> Result<Array<T, D>> {
        let shape = self.shape();
        if D::NDIM.is_some_and(|n| n != shape.ndim()) {
            return Err(InteropError {
                op: "Field::to_array",
                detail: format!(
                    "the field is {shape}, but an array of {} dimensions was asked for; read it \
                     as an array of {} (or as an `ArrayD`)",
                    D::NDIM.unwrap_or(0),
                    shape.ndim()
                ),
            }
            .into());
        }
        let a = shaped("Field::to_array", IxDyn(&shape.dims()), self.to_vec()?)?;
        a.into_dimensionality::<D>().map_err(|e| {
            InteropError {
                op: "Field::to_array",
                detail: format!("the field is {shape}: {e}"),
            }
            .into()
        })
    }
}

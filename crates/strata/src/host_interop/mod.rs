//! Host data of other crates to and from strata's buffers and fields, each behind a cargo
//! feature that is off by default: the module `ndarray` (feature `ndarray`: arrays of 0 to 3
//! dimensions and [`Buffer`](crate::Buffer), [`Buffer2`](crate::Buffer2),
//! [`Buffer3`](crate::Buffer3) and [`Field`](crate::fields::Field)s) and the module `image`
//! (feature `image`: `ImageBuffer`s and 2-D buffers and fields). Each module's docs list its
//! conversions and show an example.
//!
//! (Not to be confused with [`NativeMemory`](crate::NativeMemory) and the `*Handles` types,
//! which share memory with CUDA, OpenCL and Vulkan code: this module copies host data.)
//!
//! The conversions are inherent methods of the types they fill or read, in the style of
//! [`Buffer::from_slice`](crate::Buffer::from_slice): uploads take the [`Queue`](crate::Queue)
//! that writes them (`Buffer2::from_array(&queue, &a)`, `fields.from_image(&img)`), downloads
//! the queue that reads them (`buf.to_array(&queue)`, `field.to_image()`). The axes map as
//! everywhere in strata: an array's rows are `y` and its columns `x`, so an `Array2` of shape
//! `(height, width)` is a `Buffer2` of extent `[width, height]` and a field of
//! [`Shape::d2(height, width)`](crate::fields::Shape::d2); an image's width is `x`.
//!
//! Bad input is an [`InteropError`] (inside [`Error::Layer`]; `err.layer::<InteropError>()`
//! gives it back) or the error of the buffer or field operation underneath, never a panic.

#[cfg(feature = "image")]
#[cfg_attr(docsrs, doc(cfg(feature = "image")))]
pub mod image;
#[cfg(feature = "ndarray")]
#[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
pub mod ndarray;

use crate::error::Error;

/// Host data that does not fit the buffer or field it is converted to or from: a shape that
/// differs from the buffer's extent, a field of other dimensions than the array or image
/// asked for, an image larger than `u32` pixels a side. It converts into [`Error::Layer`];
/// `err.layer::<InteropError>()` gives it back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{op}: {detail}")]
pub struct InteropError {
    /// The conversion (`Buffer2::write_array`, `Field::to_image`, ...).
    pub op: &'static str,
    /// What does not fit, and what to do instead.
    pub detail: String,
}

impl From<InteropError> for Error {
    fn from(e: InteropError) -> Error {
        Error::Layer(crate::error::LayerError::new(e))
    }
}

//! `image` buffers to and from 2-D buffers and fields (feature `image`).
//!
//! An [`ImageBuffer`] of `width x height` pixels is a [`Buffer2`] of extent `[width, height]`
//! (pixel `(x, y)` at `(x, y)`) or a 2-D [`Field`] of [`Shape::d2(height, width)`](Shape::d2),
//! one element per pixel: the element type is the pixel's channels as a strata vector
//! ([`ImageElement`]), so `Rgb<u8>` is `[u8; 3]` (red in `x`), `Rgba<u8>` `[u8; 4]`,
//! `Luma<u8>` `u8`, and the same for `u16` and `f32` channels.
//!
//! | host | device | upload | download |
//! | --- | --- | --- | --- |
//! | `ImageBuffer<P, _>` | [`Buffer2<T>`] (`T::Pixel == P`) | [`Buffer2::from_image`](PitchedBuffer::from_image), [`Buffer2::write_image`](PitchedBuffer::write_image) | [`Buffer2::to_image`](PitchedBuffer::to_image) |
//! | `ImageBuffer<P, _>` | 2-D [`Field<T>`] | [`Fields::from_image`] | [`Field::to_image`] |
//!
//! Only the pixel containers are used: decoding and encoding files is `image`'s business
//! (strata turns on none of its format features; turn on the ones you need in your own
//! `Cargo.toml`). Sizes are checked: a buffer or field wider or taller than `u32::MAX` pixels
//! cannot become an image, and writing an image into a buffer of another extent is refused, with
//! an [`InteropError`].
//!
//! ```
//! use image::{Rgb, RgbImage};
//! use strata::prelude::*;
//! # fn main() -> strata::Result<()> {
//! let queue = Queue::new(&Device::from_spec("cpu")?)?;
//! let img = RgbImage::from_fn(4, 3, |x, y| Rgb([x as u8, y as u8, 200]));
//! let buf = Buffer2::from_image(&queue, &img)?; // a Buffer2<[u8; 3]>
//! assert_eq!(buf.extent(), [4, 3]);
//! let back: RgbImage = buf.to_image(&queue)?;
//! assert_eq!(back, img);
//! # Ok(())
//! # }
//! ```

use super::InteropError;
use crate::builder::Element;
use crate::error::Result;
use crate::fields::{Field, Fields, Shape, Tensor};
use crate::runtime::{PitchedBuffer, Queue};
#[cfg(doc)]
use crate::Buffer2;
use image::{ImageBuffer, Luma, LumaA, Pixel, Rgb, Rgba};
use std::ops::Deref;

mod sealed {
    pub trait Sealed {}
}

/// A buffer element that is one pixel of an `image` pixel type: the pixel's channels, in order,
/// as a scalar (one channel) or a 2-, 3- or 4-vector. Implemented for `u8`, `u16` and `f32`
/// channels: `T` is [`Luma<T>`], `[T; 2]` [`LumaA<T>`], `[T; 3]` [`Rgb<T>`] and `[T; 4]`
/// [`Rgba<T>`]. Sealed: the layouts are checked here.
pub trait ImageElement: Element + sealed::Sealed {
    /// The pixel type this element holds.
    type Pixel: Pixel + 'static;

    /// The image's samples (channels of pixel after pixel, rows one after the other) as
    /// elements, one per pixel.
    #[doc(hidden)]
    fn from_samples(samples: &[<Self::Pixel as Pixel>::Subpixel]) -> &[Self];

    /// The elements' channels as the image's samples.
    #[doc(hidden)]
    fn to_samples(elements: &[Self]) -> &[<Self::Pixel as Pixel>::Subpixel];
}

/// An `image` pixel type held by a strata element: the reverse of [`ImageElement`], so that an
/// upload's element type follows from the image (`Rgb<u8>` gives a `Buffer2<[u8; 3]>`).
/// Implemented for the pixels of every [`ImageElement`]. Sealed.
pub trait ImagePixel: Pixel + sealed::Sealed + 'static {
    /// The element holding one pixel.
    type Element: ImageElement<Pixel = Self>;
}

macro_rules! image_elements {
    ($($sub:ty),*) => {$(
        image_elements!(@one $sub, $sub, Luma<$sub>);
        image_elements!(@one $sub, [$sub; 2], LumaA<$sub>);
        image_elements!(@one $sub, [$sub; 3], Rgb<$sub>);
        image_elements!(@one $sub, [$sub; 4], Rgba<$sub>);
    )*};
    (@one $sub:ty, $elem:ty, $pixel:ty) => {
        impl sealed::Sealed for $elem {}
        impl sealed::Sealed for $pixel {}
        impl ImagePixel for $pixel {
            type Element = $elem;
        }
        impl ImageElement for $elem {
            type Pixel = $pixel;
            fn from_samples(samples: &[$sub]) -> &[$elem] {
                // Whole pixels: `samples` always comes from an image of whole pixels.
                let whole = samples.len() - samples.len() % <$pixel as Pixel>::CHANNEL_COUNT as usize;
                bytemuck::cast_slice(&samples[..whole])
            }
            fn to_samples(elements: &[$elem]) -> &[$sub] {
                bytemuck::cast_slice(elements)
            }
        }
    };
}
image_elements!(u8, u16, f32);

/// The samples of `T`'s pixel type.
type Samples<T> = Vec<<<T as ImageElement>::Pixel as Pixel>::Subpixel>;

/// The owned image type of element `T`'s pixels.
pub type ImageOf<T> = ImageBuffer<<T as ImageElement>::Pixel, Samples<T>>;

/// The pixels of `img` as elements, one per pixel, rows one after the other.
fn pixels<P, C>(img: &ImageBuffer<P, C>) -> &[P::Element]
where
    P: ImagePixel,
    C: Deref<Target = [P::Subpixel]>,
{
    let (w, h) = img.dimensions();
    let channels = P::CHANNEL_COUNT as usize;
    // The container holds at least this many samples (`ImageBuffer` checks it).
    let samples = &img.as_raw()[..w as usize * h as usize * channels];
    P::Element::from_samples(samples)
}

/// An image of `[width, height]` from `data`, one element per pixel.
fn image_of<T: ImageElement>(
    op: &'static str,
    extent: [usize; 2],
    data: &[T],
) -> Result<ImageOf<T>> {
    let [w, h] = extent;
    let side = |n: usize, what: &str| {
        u32::try_from(n).map_err(|_| InteropError {
            op,
            detail: format!(
                "the {what} is {n} pixels, but an `ImageBuffer` has at most {} pixels a side",
                u32::MAX
            ),
        })
    };
    let (wu, hu) = (side(w, "width")?, side(h, "height")?);
    ImageBuffer::from_raw(wu, hu, T::to_samples(data).to_vec()).ok_or_else(|| {
        InteropError {
            op,
            detail: format!(
                "{} pixels do not make an image of {w} x {h} pixels",
                data.len()
            ),
        }
        .into()
    })
}

impl<T: ImageElement> PitchedBuffer<T, 2> {
    /// A 2-D buffer on the queue's device holding `img`: extent `[width, height]`, pixel
    /// `(x, y)` at `(x, y)`, as `T` (the element of its pixel type: `[u8; 3]` for `Rgb<u8>`).
    pub fn from_image<P, C>(queue: &Queue, img: &ImageBuffer<P, C>) -> Result<Self>
    where
        P: ImagePixel<Element = T>,
        C: Deref<Target = [P::Subpixel]>,
    {
        let (w, h) = img.dimensions();
        PitchedBuffer::from_slice(queue, [w as usize, h as usize], pixels::<P, C>(img))
    }

    /// Writes `img` over the whole buffer; fails with [`InteropError`] unless the image is
    /// `width x height` of the buffer's extent `[width, height]`.
    pub fn write_image<P, C>(&self, queue: &Queue, img: &ImageBuffer<P, C>) -> Result<()>
    where
        P: ImagePixel<Element = T>,
        C: Deref<Target = [P::Subpixel]>,
    {
        let (w, h) = img.dimensions();
        if [w as usize, h as usize] != self.extent() {
            return Err(InteropError {
                op: "Buffer2::write_image",
                detail: format!(
                    "the image is {w} x {h} pixels, the buffer's extent {:?}",
                    self.extent()
                ),
            }
            .into());
        }
        queue.write_region(self, [0, 0], self.extent(), pixels::<P, C>(img))
    }

    /// Reads the buffer into an image of `width x height` pixels (the pixel type of `T`:
    /// `RgbImage` for `[u8; 3]`). Fails with [`InteropError`] for a side over `u32::MAX`.
    pub fn to_image(&self, queue: &Queue) -> Result<ImageOf<T>> {
        let data = self.to_vec(queue)?;
        image_of("Buffer2::to_image", self.extent(), &data)
    }
}

impl Fields {
    /// A 2-D field of [`Shape::d2(height, width)`](Shape::d2) holding `img`, pixel `(x, y)` at
    /// row `y`, column `x`, as `T` (the element of its pixel type: `[u8; 4]` for `Rgba<u8>`).
    /// Fails as [`Fields::from_slice`] does for an image without pixels.
    pub fn from_image<P, C>(&self, img: &ImageBuffer<P, C>) -> Result<Field<P::Element>>
    where
        P: ImagePixel,
        P::Element: Tensor,
        C: Deref<Target = [P::Subpixel]>,
    {
        let (w, h) = img.dimensions();
        self.from_slice(Shape::d2(h as usize, w as usize), pixels::<P, C>(img))
    }
}

impl<T: ImageElement + Tensor> Field<T> {
    /// Runs the field if it is lazy and reads it into an image: rows are `y`, columns `x`.
    /// Fails with [`InteropError`] unless the field is 2-D.
    pub fn to_image(&self) -> Result<ImageOf<T>> {
        let shape = self.shape();
        if shape.ndim() != 2 {
            return Err(InteropError {
                op: "Field::to_image",
                detail: format!("the field is {shape}; images are 2-D fields (rows x columns)"),
            }
            .into());
        }
        let data = self.to_vec()?;
        image_of("Field::to_image", [shape.columns(), shape.rows()], &data)
    }
}

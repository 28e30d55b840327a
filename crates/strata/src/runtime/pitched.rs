//! 2-D and 3-D buffers: extents, and rows (and slices) padded to a pitch chosen for the
//! device's alignment ([`pitch_elements`]). The memory is one ordinary [`Buffer`]; element
//! `(x, y, z)` lives at `z * slice_pitch + y * pitch + x`. Kernels index them by coordinates
//! (`KernelDef::read2` and friends): the pitches are hidden launch parameters that the launch
//! fills in from the buffer it is given.
//!
//! **Regions.** [`Queue::write_region`] and the other region transfers (and their `enqueue_`
//! forms) check the region against the extent, the host slice against the region, and a copy
//! within one buffer for overlap, then submit one rectangular command (`WriteRect`,
//! `ReadRect`, `CopyRect`, each side a [`RectSide`] in bytes, checked again by the backend):
//! OpenCL runs it as `clEnqueue{Write,Read,Copy}BufferRect`, CUDA as `cuMemcpy3DAsync`, the
//! CPU backends row by row. A region fill is a `WriteRect` of the value repeated, so the
//! padding is left alone; a whole-buffer fill is the ordinary fill of the allocation.

use super::args::PitchedShape;
use super::{Buffer, Command, Device, Event, HostOut, PendingRead, Queue, RectSide};
use crate::builder::Element;
use crate::error::{Coords, Error, Result};
use crate::ir::{self, ParamId};

/// The row pitch, in elements, of rows of `width` elements of `elem_size` bytes on a device
/// whose rows start at multiples of `align` bytes ([`DeviceInfo::pitch_alignment`](crate::DeviceInfo::pitch_alignment)):
/// the smallest `p >= width` such that `p * elem_size` is a multiple of `align`, that is
/// `width` rounded up to a multiple of `align / gcd(align, elem_size)` elements. `[f32; 3]`
/// (12 bytes) with 64-byte rows: rows are multiples of 16 elements (192 bytes). With
/// `align <= 1` or an element of no bytes the pitch is the width. Saturates at `usize::MAX`
/// (such a buffer cannot be allocated).
pub fn pitch_elements(width: usize, elem_size: usize, align: usize) -> usize {
    if align <= 1 || elem_size == 0 {
        return width;
    }
    let step = align / gcd(align, elem_size);
    width.div_ceil(step).saturating_mul(step)
}

fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A buffer of `T` in `D` dimensions (2 or 3) with pitched rows: [`Buffer2`] and [`Buffer3`].
/// Extents and coordinates are in launch order, `[width, height]` and `[width, height,
/// depth]` (x fastest), like [`NdRange`](crate::NdRange) sizes, so
/// `NdRange::covering(img.extent(), [16, 16])` covers an image. Cloning shares the memory.
pub struct PitchedBuffer<T, const D: usize> {
    buf: Buffer<T>,
    extent: [usize; D],
    /// Row pitch and slice pitch, in elements.
    pitch: [usize; 2],
}

/// A 2-D buffer (an image of `[width, height]` elements with padded rows).
pub type Buffer2<T> = PitchedBuffer<T, 2>;
/// A 3-D buffer (`[width, height, depth]` elements with padded rows and slices).
pub type Buffer3<T> = PitchedBuffer<T, 3>;

impl<T, const D: usize> Clone for PitchedBuffer<T, D> {
    fn clone(&self) -> Self {
        PitchedBuffer {
            buf: self.buf.clone(),
            extent: self.extent,
            pitch: self.pitch,
        }
    }
}

impl<T, const D: usize> std::fmt::Debug for PitchedBuffer<T, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Buffer{D}<{}>{:?} (pitch {}) on {}",
            std::any::type_name::<T>(),
            self.extent,
            self.pitch[0],
            self.buf.device.info().spec()
        )
    }
}

/// `[x, y]` or `[x, y, z]` as three coordinates, the missing ones 0 (`fill` 0) or 1 (`fill`
/// 1).
fn three<const D: usize>(v: [usize; D], fill: usize) -> [usize; 3] {
    let mut out = [fill; 3];
    out[..D].copy_from_slice(&v);
    out
}

impl<T: Element, const D: usize> PitchedBuffer<T, D> {
    const DIMS: () = assert!(D == 2 || D == 3, "pitched buffers have 2 or 3 dimensions");

    /// A zeroed buffer of `extent` elements (`[width, height]` or `[width, height, depth]`)
    /// on the device of `device` (a `&Device` or a `&Queue`), its rows padded to
    /// [`pitch_elements`] for the device's [`pitch_alignment`](crate::DeviceInfo::pitch_alignment).
    /// Fails with [`Error::OutOfMemory`] as [`Buffer::new`] does, also when the padded size
    /// overflows.
    pub fn new(device: impl AsRef<Device>, extent: [usize; D]) -> Result<Self> {
        #[allow(clippy::let_unit_value)]
        let () = Self::DIMS;
        let device = device.as_ref();
        let info = device.info();
        let [w, h, d] = three(extent, 1);
        let row = pitch_elements(w, std::mem::size_of::<T>(), info.pitch_alignment);
        let too_large = || Error::OutOfMemory {
            device: info.spec(),
            requested: u64::MAX,
            reason: format!(
                "{extent:?} elements of {} bytes with padded rows overflow the address space",
                std::mem::size_of::<T>()
            ),
        };
        let slice = row.checked_mul(h).ok_or_else(too_large)?;
        let len = slice.checked_mul(d).ok_or_else(too_large)?;
        Ok(PitchedBuffer {
            buf: Buffer::new(device, len)?,
            extent,
            pitch: [row, slice],
        })
    }

    /// A buffer on the queue's device holding `data`, an image of `extent` packed tightly
    /// (rows of `width` elements one after the other, then slices).
    pub fn from_slice(queue: &Queue, extent: [usize; D], data: &[T]) -> Result<Self> {
        let b = PitchedBuffer::new(queue, extent)?;
        queue.write_region(&b, [0; D], extent, data)?;
        Ok(b)
    }

    /// Reads the whole image, packed tightly (shorthand for [`Queue::read_region`]).
    pub fn to_vec(&self, queue: &Queue) -> Result<Vec<T>> {
        queue.read_region(self, [0; D], self.extent)
    }

    /// Sets every element to `value` (padding included).
    pub fn fill(&self, queue: &Queue, value: T) -> Result<()> {
        queue.fill(&self.buf, value, ..)
    }
}

impl<T, const D: usize> PitchedBuffer<T, D> {
    /// The extent in elements, `[width, height]` or `[width, height, depth]`.
    pub fn extent(&self) -> [usize; D] {
        self.extent
    }

    /// The row pitch in elements: from one row's first element to the next row's.
    pub fn pitch(&self) -> usize {
        self.pitch[0]
    }

    /// The slice pitch in elements (`pitch() * height`): from one slice to the next.
    pub fn slice_pitch(&self) -> usize {
        self.pitch[1]
    }

    /// The memory as a flat buffer of `slice_pitch() * depth` elements (padding included):
    /// for copies of the whole allocation and 1-D kernels that compute indices themselves.
    pub fn as_buffer(&self) -> &Buffer<T> {
        &self.buf
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &Device {
        &self.buf.device
    }

    /// The byte layout of the box at `origin` (elements) for the backends.
    fn side(&self, origin: [usize; 3]) -> RectSide {
        let sz = std::mem::size_of::<T>();
        RectSide {
            origin: [origin[0] * sz, origin[1], origin[2]],
            pitch: [self.pitch[0] * sz, self.pitch[1] * sz],
        }
    }

    /// Checks that the box `size` at `origin` lies inside the extent.
    fn check_region(&self, op: &'static str, origin: [usize; D], size: [usize; D]) -> Result<()> {
        for i in 0..D {
            if origin[i]
                .checked_add(size[i])
                .is_none_or(|e| e > self.extent[i])
            {
                return Err(Error::BufferRange {
                    op,
                    detail: format!(
                        "the region of {size:?} elements at {origin:?} does not fit the extent {:?} (dimension {i})",
                        self.extent
                    ),
                });
            }
        }
        Ok(())
    }
}

fn check_host_len(op: &'static str, got: usize, size: &[usize]) -> Result<()> {
    // Checked: a product that wraps would match a short slice.
    let want = size.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if want != Some(got) {
        let want = want.map_or("more than a `usize` holds".to_string(), |w| w.to_string());
        return Err(Error::BufferRange {
            op,
            detail: format!(
                "the host slice has {got} elements but the region {size:?} holds {want} (packed tightly, x fastest)"
            ),
        });
    }
    Ok(())
}

/// The region as (bytes per row, rows, slices).
fn byte_region<T, const D: usize>(size: [usize; D]) -> [usize; 3] {
    let [w, h, d] = three(size, 1);
    [w * std::mem::size_of::<T>(), h, d]
}

/// Rectangular transfers of 2-D and 3-D buffers. Regions are given as `origin` and `size` in
/// elements, `[x, y]` or `[x, y, z]`; host data is the region packed tightly (x fastest).
impl Queue {
    /// Writes `data` into the region `size` at `origin` of `buf`, without blocking (the data
    /// is copied first). Errors: [`Error::BufferRange`] for a region outside the extent or a
    /// slice whose length is not the region's, [`Error::WrongDevice`].
    pub fn enqueue_write_region<T: Element, const D: usize>(
        &self,
        buf: &PitchedBuffer<T, D>,
        origin: [usize; D],
        size: [usize; D],
        data: &[T],
        wait: &[&Event],
    ) -> Result<Event> {
        self.check_device("write_region", &buf.buf)?;
        buf.check_region("write_region", origin, size)?;
        check_host_len("write_region", data.len(), &size)?;
        Ok(self.submit(
            Command::WriteRect {
                mem: buf.buf.mem.clone(),
                at: buf.side(three(origin, 0)),
                region: byte_region::<T, D>(size),
                data: bytemuck::cast_slice(data).to_vec(),
            },
            wait,
        ))
    }

    /// Writes `data` into a region of `buf` (see [`Queue::enqueue_write_region`]).
    pub fn write_region<T: Element, const D: usize>(
        &self,
        buf: &PitchedBuffer<T, D>,
        origin: [usize; D],
        size: [usize; D],
        data: &[T],
    ) -> Result<()> {
        super::queue::blocking(|| self.enqueue_write_region(buf, origin, size, data, &[]))?.wait()
    }

    /// Reads the region `size` at `origin` of `buf`, packed tightly, without blocking.
    pub fn enqueue_read_region<T: Element, const D: usize>(
        &self,
        buf: &PitchedBuffer<T, D>,
        origin: [usize; D],
        size: [usize; D],
        wait: &[&Event],
    ) -> Result<PendingRead<T>> {
        self.check_device("read_region", &buf.buf)?;
        buf.check_region("read_region", origin, size)?;
        let out = HostOut::new::<T>(size.iter().product());
        let event = self.submit(
            Command::ReadRect {
                mem: buf.buf.mem.clone(),
                at: buf.side(three(origin, 0)),
                region: byte_region::<T, D>(size),
                out: out.clone(),
            },
            wait,
        );
        Ok(PendingRead::new(event, out))
    }

    /// Reads a region of `buf`, packed tightly (see [`Queue::enqueue_read_region`]).
    pub fn read_region<T: Element, const D: usize>(
        &self,
        buf: &PitchedBuffer<T, D>,
        origin: [usize; D],
        size: [usize; D],
    ) -> Result<Vec<T>> {
        super::queue::blocking(|| self.enqueue_read_region(buf, origin, size, &[]))?.wait()
    }

    /// Copies the region `size` at `src_origin` of `src` to `dst_origin` of `dst` on the
    /// device, without blocking. The buffers may differ in extent and pitch; within one buffer
    /// the two regions must not overlap ([`Error::BufferRange`]).
    pub fn enqueue_copy_region<T: Element, const D: usize>(
        &self,
        src: &PitchedBuffer<T, D>,
        src_origin: [usize; D],
        dst: &PitchedBuffer<T, D>,
        dst_origin: [usize; D],
        size: [usize; D],
        wait: &[&Event],
    ) -> Result<Event> {
        self.check_device("copy_region", &src.buf)?;
        self.check_device("copy_region", &dst.buf)?;
        src.check_region("copy_region", src_origin, size)?;
        dst.check_region("copy_region", dst_origin, size)?;
        let overlap = (0..D).all(|i| {
            src_origin[i] < dst_origin[i] + size[i] && dst_origin[i] < src_origin[i] + size[i]
        });
        if src.buf.same_memory(&dst.buf) && overlap {
            return Err(Error::BufferRange {
                op: "copy_region",
                detail: format!(
                    "the source region at {src_origin:?} and the destination region at {dst_origin:?} ({size:?} elements) overlap in the same buffer"
                ),
            });
        }
        Ok(self.submit(
            Command::CopyRect {
                src: src.buf.mem.clone(),
                src_at: src.side(three(src_origin, 0)),
                dst: dst.buf.mem.clone(),
                dst_at: dst.side(three(dst_origin, 0)),
                region: byte_region::<T, D>(size),
            },
            wait,
        ))
    }

    /// Copies a region between buffers (see [`Queue::enqueue_copy_region`]).
    pub fn copy_region<T: Element, const D: usize>(
        &self,
        src: &PitchedBuffer<T, D>,
        src_origin: [usize; D],
        dst: &PitchedBuffer<T, D>,
        dst_origin: [usize; D],
        size: [usize; D],
    ) -> Result<()> {
        super::queue::blocking(|| {
            self.enqueue_copy_region(src, src_origin, dst, dst_origin, size, &[])
        })?
        .wait()
    }

    /// Sets the region `size` at `origin` of `buf` to `value`, without blocking (a
    /// rectangular write of the value repeated over the region; the padding between rows is
    /// left as it is). [`PitchedBuffer::fill`] fills the whole buffer.
    pub fn enqueue_fill_region<T: Element, const D: usize>(
        &self,
        buf: &PitchedBuffer<T, D>,
        value: T,
        origin: [usize; D],
        size: [usize; D],
        wait: &[&Event],
    ) -> Result<Event> {
        self.check_device("fill_region", &buf.buf)?;
        buf.check_region("fill_region", origin, size)?;
        let n: usize = size.iter().product();
        Ok(self.submit(
            Command::WriteRect {
                mem: buf.buf.mem.clone(),
                at: buf.side(three(origin, 0)),
                region: byte_region::<T, D>(size),
                data: bytemuck::bytes_of(&value).repeat(n),
            },
            wait,
        ))
    }

    /// Sets a region of `buf` to `value` (see [`Queue::enqueue_fill_region`]).
    pub fn fill_region<T: Element, const D: usize>(
        &self,
        buf: &PitchedBuffer<T, D>,
        value: T,
        origin: [usize; D],
        size: [usize; D],
    ) -> Result<()> {
        super::queue::blocking(|| self.enqueue_fill_region(buf, value, origin, size, &[]))?.wait()
    }
}

/// `e` with the coordinates and extent filled in when it is an out-of-bounds access to one of
/// the 2-D or 3-D buffers `pitched` of a launch of `f` (the buffer named as the backends and
/// checked mode name it, "buffer `img`"); any other error as it is.
pub(crate) fn with_coords(
    e: Error,
    f: &ir::Function,
    pitched: &[(ParamId, PitchedShape)],
) -> Error {
    match e {
        Error::OutOfBounds {
            kernel,
            memory,
            index,
            len,
            item,
            at,
            coords: None,
        } => {
            let coords = pitched
                .iter()
                .find(|(p, _)| memory == format!("buffer `{}`", f.params[*p].name))
                .map(|(_, s)| Box::new(decode(index, s)));
            Error::OutOfBounds {
                kernel,
                memory,
                index,
                len,
                item,
                at,
                coords,
            }
        }
        e => e,
    }
}

/// The coordinates (outermost first) of flat index `index` of a buffer of `shape` (see
/// [`Coords`]): the kernel computed the index in `u32`, so one below 2^32 whose `i32` reading
/// is negative stands for a coordinate below 0.
fn decode(index: i64, shape: &PitchedShape) -> Coords {
    let s = if (0..1i64 << 32).contains(&index) {
        index as u32 as i32 as i64
    } else {
        index
    };
    let row = shape.pitch[0].max(1) as i64;
    let [w, h, d] = shape.extent.map(|e| e as u64);
    if shape.dims == 3 {
        let slice = shape.pitch[1].max(1) as i64;
        let (z, r) = (s.div_euclid(slice), s.rem_euclid(slice));
        Coords::new(vec![z, r / row, r % row], vec![d, h, w])
    } else {
        Coords::new(vec![s.div_euclid(row), s.rem_euclid(row)], vec![h, w])
    }
}

#[cfg(test)]
mod tests {
    use super::pitch_elements;

    #[test]
    fn pitch_rule_examples() {
        assert_eq!(pitch_elements(37, 4, 64), 48);
        assert_eq!(pitch_elements(16, 4, 64), 16);
        // [f32; 3]: 12 bytes; 64 / gcd(64, 12) = 16 elements (192 bytes).
        assert_eq!(pitch_elements(13, 12, 64), 16);
        assert_eq!(pitch_elements(17, 12, 64), 32);
        assert_eq!(pitch_elements(5, 12, 512), 128);
        assert_eq!(pitch_elements(29, 1, 128), 128);
        assert_eq!(pitch_elements(0, 4, 64), 0);
        assert_eq!(pitch_elements(7, 3, 1), 7);
        assert_eq!(pitch_elements(7, 0, 64), 7);
        assert_eq!(pitch_elements(usize::MAX, 4, 64), usize::MAX);
    }

    /// The pitch is the smallest width at least `width` whose rows are a multiple of the
    /// alignment, for every element size strata has (odd ones included) and alignment.
    #[test]
    fn pitch_rule_is_the_smallest_aligned_width() {
        for align in [1usize, 2, 64, 128, 256, 512, 96] {
            for size in [1usize, 2, 3, 4, 6, 8, 12, 16, 24, 32] {
                for width in 0..300 {
                    let p = pitch_elements(width, size, align);
                    assert!(p >= width);
                    assert_eq!(p * size % align, 0, "w {width} size {size} align {align}");
                    assert!(
                        (width..p).all(|q| q * size % align != 0),
                        "w {width} size {size} align {align}: {p} is not the smallest"
                    );
                }
            }
        }
    }
}

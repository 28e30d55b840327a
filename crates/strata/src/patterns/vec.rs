//! [`DeviceVec<T>`]: a typed vector on one device, the container of the patterns layer.

use super::{check_u32, Exec, Reads, Slots, View};
use crate::builder::{Expr, Value};
use crate::error::{Error, Result};
use crate::Buffer;
use std::ops::RangeBounds;

/// A vector of `T` in a device's memory, bound to an [`Exec`] (queue and staging) that its
/// actions run with. It is a window (`offset`, `len`) on a [`Buffer<T>`]: cloning it, taking
/// [`slice`](DeviceVec::slice)s and converting to and from a buffer share the memory and copy
/// nothing. `&DeviceVec<T>` is a [`View`] of its elements.
pub struct DeviceVec<T> {
    buf: Buffer<T>,
    offset: usize,
    len: usize,
    exec: Exec,
}

impl<T> Clone for DeviceVec<T> {
    fn clone(&self) -> Self {
        DeviceVec {
            buf: self.buf.clone(),
            offset: self.offset,
            len: self.len,
            exec: self.exec.clone(),
        }
    }
}

impl<T> std::fmt::Debug for DeviceVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceVec<{}>[{}..{}] on {}",
            std::any::type_name::<T>(),
            self.offset,
            self.offset + self.len,
            self.buf.device().info().spec()
        )
    }
}

impl<T: Value> DeviceVec<T> {
    /// A vector of `len` zeros on the exec's device.
    pub fn zeroed(ex: &Exec, len: usize) -> Result<DeviceVec<T>> {
        check_u32("DeviceVec::zeroed", len)?;
        let buf = Buffer::new(ex, len)?;
        Ok(DeviceVec {
            buf,
            offset: 0,
            len,
            exec: ex.clone(),
        })
    }

    /// A vector holding a copy of `data`.
    pub fn from_slice(ex: &Exec, data: &[T]) -> Result<DeviceVec<T>> {
        let v = DeviceVec::zeroed(ex, data.len())?;
        if !data.is_empty() {
            ex.queue().write(&v.buf, 0.., data)?;
        }
        Ok(v)
    }

    /// The whole of `buf`, without copying. Fails with [`Error::WrongDevice`] when the buffer
    /// lives on another device than the exec's queue.
    pub fn from_buffer(ex: &Exec, buf: Buffer<T>) -> Result<DeviceVec<T>> {
        if buf.device() != ex.device() {
            return Err(Error::WrongDevice {
                op: "DeviceVec::from_buffer",
                buffer_device: buf.device().info().spec(),
                queue_device: ex.device().info().spec(),
            });
        }
        check_u32("DeviceVec::from_buffer", buf.len())?;
        Ok(DeviceVec {
            len: buf.len(),
            buf,
            offset: 0,
            exec: ex.clone(),
        })
    }

    pub(crate) fn from_parts(ex: &Exec, buf: Buffer<T>, offset: usize, len: usize) -> Self {
        DeviceVec {
            buf,
            offset,
            len,
            exec: ex.clone(),
        }
    }

    /// The underlying buffer, without copying. A sub-slice is not a whole buffer: it fails with
    /// [`Error::BufferRange`] (use [`buffer`](DeviceVec::buffer) and
    /// [`offset`](DeviceVec::offset), or [`to_owned_vec`](DeviceVec::to_owned_vec) first).
    pub fn into_buffer(self) -> Result<Buffer<T>> {
        if self.offset != 0 || self.len != self.buf.len() {
            return Err(Error::BufferRange {
                op: "DeviceVec::into_buffer",
                detail: format!(
                    "the vector is elements {}..{} of a buffer of {}, not a whole buffer; copy it with to_owned_vec first",
                    self.offset,
                    self.offset + self.len,
                    self.buf.len()
                ),
            });
        }
        Ok(self.buf)
    }

    /// The buffer this vector is a window of.
    pub fn buffer(&self) -> &Buffer<T> {
        &self.buf
    }

    /// Where the vector starts in its buffer, in elements.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` for a vector of no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The exec (queue and staging) the vector's actions run with.
    pub fn exec(&self) -> &Exec {
        &self.exec
    }

    /// The same memory, run with another exec on the same device.
    pub fn with_exec(&self, ex: &Exec) -> Result<DeviceVec<T>> {
        if ex.device() != self.buf.device() {
            return Err(Error::WrongDevice {
                op: "DeviceVec::with_exec",
                buffer_device: self.buf.device().info().spec(),
                queue_device: ex.device().info().spec(),
            });
        }
        Ok(DeviceVec::from_parts(
            ex,
            self.buf.clone(),
            self.offset,
            self.len,
        ))
    }

    /// Elements `range` of this vector, sharing its memory (writes through either are seen by
    /// both). Fails with [`Error::BufferRange`] when the range does not fit.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceVec<T>> {
        let std::ops::Range { start, end } = crate::runtime::bounded(range, self.len);
        if start > end || end > self.len {
            return Err(Error::BufferRange {
                op: "DeviceVec::slice",
                detail: format!(
                    "range {start}..{end} does not fit a vector of {} elements",
                    self.len
                ),
            });
        }
        Ok(DeviceVec::from_parts(
            &self.exec,
            self.buf.clone(),
            self.offset + start,
            end - start,
        ))
    }

    /// Copies the elements to the host.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.exec
            .queue()
            .read_range(&self.buf, self.offset..self.offset + self.len)
    }

    /// Overwrites the elements with `data`, which must have the vector's length.
    pub fn copy_from_slice(&self, data: &[T]) -> Result<()> {
        if data.len() != self.len {
            return Err(Error::BufferRange {
                op: "DeviceVec::copy_from_slice",
                detail: format!(
                    "the slice has {} elements but the vector has {}",
                    data.len(),
                    self.len
                ),
            });
        }
        self.exec.queue().write(&self.buf, self.offset.., data)
    }

    /// A copy in new memory (a whole buffer).
    pub fn to_owned_vec(&self) -> Result<DeviceVec<T>> {
        let v = DeviceVec::zeroed(&self.exec, self.len)?;
        if self.len > 0 {
            self.exec
                .queue()
                .copy(&self.buf, self.offset..self.offset + self.len, &v.buf, 0..)?;
        }
        Ok(v)
    }

    /// A view of writable element handles, for [`View::for_each`] bodies that store or update
    /// elements (`v.slots().for_each(&ex, |s| s.set(s.get() * 2.0))`).
    pub fn slots(&self) -> Slots<T> {
        Slots::new(self.clone())
    }
}

impl<T: Value> View for &DeviceVec<T> {
    type Item = Expr<T>;
    fn len(&self) -> usize {
        self.len
    }
    fn reads(&self, direct: bool, out: &mut Reads) {
        out.buffer(&self.buf, self.offset, self.len, direct);
    }
    fn at(&self, cx: &mut super::Cx, i: Expr<u32>) -> Expr<T> {
        let p = cx.read(&self.buf);
        let off = cx.size("off", self.offset);
        p.at(off + i)
    }
    fn walk<'a>(&'a self, w: &mut super::Walk<'a>) {
        w.read(&self.buf);
        w.size("off", self.offset);
    }
}

/// The vector as a view by value (a cheap handle sharing the memory), so that algorithms can
/// be called on it directly: `v.sum(&ex)`.
impl<T: Value> View for DeviceVec<T> {
    type Item = Expr<T>;
    fn len(&self) -> usize {
        self.len
    }
    fn reads(&self, direct: bool, out: &mut Reads) {
        (&self).reads(direct, out)
    }
    fn at(&self, cx: &mut super::Cx, i: Expr<u32>) -> Expr<T> {
        (&self).at(cx, i)
    }
    fn walk<'a>(&'a self, w: &mut super::Walk<'a>) {
        w.read(&self.buf);
        w.size("off", self.offset);
    }
}

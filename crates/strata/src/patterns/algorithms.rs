//! Element-wise algorithms: `for_each`, `collect` (transform) and its asynchronous form, all
//! one kernel whatever the chain of views.

use super::tune::TunedOp;
use super::{
    check_alias, check_u32, fast, launch_fast, mem_id, type_key, Cx, DeviceVec, Exec, Fast, Layout,
    NoFast, Reads, View, Walk,
};
use crate::builder::{global_id, group_id, if_, local_id, Expr, Value};
use crate::error::{Error, Result};
use crate::{Event, Wait};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A vector being computed: the result of [`View::collect_async`]. Wait for it with
/// [`AsyncVec::wait`] (or [`Wait`]), or `.await` it: it is a [`Future`] whose output is the
/// vector.
pub struct AsyncVec<T> {
    /// The vector; taken by the future when it completes.
    vec: Option<DeviceVec<T>>,
    event: Event,
}

impl<T: Value> AsyncVec<T> {
    /// The vector `event` computes.
    pub(crate) fn new(vec: DeviceVec<T>, event: Event) -> Self {
        AsyncVec {
            vec: Some(vec),
            event,
        }
    }

    /// The vector, once computed.
    fn take(&mut self) -> DeviceVec<T> {
        self.vec
            .take()
            .expect("an AsyncVec was polled after it completed")
    }

    /// The event of the kernel computing the vector.
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// Whether the vector is computed.
    pub fn is_complete(&self) -> bool {
        self.event.is_complete()
    }

    /// Waits for the kernel; returns the vector, or the kernel's error.
    pub fn wait(mut self) -> Result<DeviceVec<T>> {
        self.event.wait()?;
        Ok(self.take())
    }

    /// Waits for the kernel at most `timeout` (see [`Wait::wait_timeout`]); the vector is
    /// then [`AsyncVec::wait`]'s.
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        self.event.wait_timeout(timeout)
    }
}

/// Completes when the vector is computed: the vector, or the kernel's error, as
/// [`AsyncVec::wait`].
impl<T: Value> Future for AsyncVec<T> {
    type Output = Result<DeviceVec<T>>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<DeviceVec<T>>> {
        let this = &mut *self;
        this.event.poll_wait(cx).map(|r| r.map(|()| this.take()))
    }
}

/// Nothing in an `AsyncVec` is pinned.
impl<T> Unpin for AsyncVec<T> {}

impl<T: Value> Wait for AsyncVec<T> {
    type Output = DeviceVec<T>;
    fn wait(self) -> Result<DeviceVec<T>> {
        AsyncVec::wait(self)
    }
    fn wait_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        AsyncVec::wait_timeout(self, timeout)
    }
    fn is_complete(&self) -> bool {
        AsyncVec::is_complete(self)
    }
}

/// Fails with [`Error::WrongDevice`] unless `v` lives on the exec's device.
pub(crate) fn same_device<T: Value>(op: &'static str, ex: &Exec, v: &DeviceVec<T>) -> Result<()> {
    if v.buffer().device() != ex.device() {
        return Err(Error::WrongDevice {
            op,
            buffer_device: v.buffer().device().info().spec(),
            queue_device: ex.device().info().spec(),
        });
    }
    Ok(())
}

/// Checks a view and the size of its index space; returns what it reads.
pub(crate) fn prepare<V: View>(op: &'static str, view: &V) -> Result<Reads> {
    view.check()?;
    check_u32(op, view.len())?;
    let mut reads = Reads::default();
    view.reads(true, &mut reads);
    Ok(reads)
}

/// One kernel over `n` elements: `setup` declares the kernel's own parameters, then `body`
/// is recorded for each element index (guarded by `i < n`), `items_per_thread` times per
/// work-item in the staged layout.
pub(crate) fn elementwise<S>(
    ex: &Exec,
    name: &str,
    n: usize,
    reads: &Reads,
    outputs: &[usize],
    setup: impl FnOnce(&mut Cx) -> S,
    body: impl Fn(&mut Cx, &S, Expr<u32>),
) -> Result<Event> {
    elementwise_fast(ex, name, n, reads, outputs, None::<NoFast>, setup, body)
}

/// [`elementwise`] with a fast path ([`launch_fast`]): `fast`'s walk gives the arguments of
/// `setup`, then the size `n` (`"n"`), then those of `body`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn elementwise_fast<'a, S, W: FnOnce(&mut Walk<'a>)>(
    ex: &Exec,
    name: &str,
    n: usize,
    reads: &'a Reads,
    outputs: &'a [usize],
    fast: Option<Fast<W>>,
    setup: impl FnOnce(&mut Cx) -> S,
    body: impl Fn(&mut Cx, &S, Expr<u32>),
) -> Result<Event> {
    if n == 0 {
        return Ok(Event::completed());
    }
    let ex = &ex.tuned_for(TunedOp::Map, "", n);
    let st = ex.staging();
    let (gs, k) = (st.group_size, st.items_per_thread);
    let groups = n.div_ceil(gs as usize * k as usize);
    // The kernel's indices are u32: `n` rounded up to whole work-groups must not wrap them.
    if groups * gs as usize * k as usize > 1 << 32 {
        return Err(Error::BufferRange {
            op: "map",
            detail: format!(
                "{n} elements in work-groups of {gs} work-items with {k} elements each: the indices would pass 2^32 - 1 (pattern indices are u32); use fewer elements"
            ),
        });
    }
    launch_fast(ex, name, groups, reads, outputs, fast, |cx| {
        let s = setup(cx);
        let n = cx.size("n", n);
        let base = match st.layout {
            Layout::Contiguous => global_id(0) * k,
            Layout::Strided => group_id(0) * (gs * k) + local_id(0),
        };
        for j in 0..k {
            let i = match st.layout {
                Layout::Contiguous => base + j,
                Layout::Strided => base + j * gs,
            };
            if_(i.lt(n), || body(cx, &s, i));
        }
    })
}

pub(crate) fn for_each<V: View, F: Fn(V::Item)>(ex: &Exec, view: &V, f: F) -> Result<()> {
    let reads = prepare("for_each", view)?;
    let n = view.len();
    let fast = fast(type_key::<(V, F)>(), 0, |w| {
        w.closure(&f);
        w.size("n", n);
        view.walk(w);
    });
    elementwise_fast(
        ex,
        "pattern_for_each",
        n,
        &reads,
        &[],
        Some(fast),
        |_| (),
        |cx, _, i| f(view.at(cx, i)),
    )?
    .wait()
}

/// Enqueues the kernel writing the view into `dst`.
pub(crate) fn collect_into<T: Value, V: View<Item = Expr<T>>>(
    ex: &Exec,
    view: &V,
    dst: &DeviceVec<T>,
) -> Result<Event> {
    let reads = prepare("collect", view)?;
    same_device("collect", ex, dst)?;
    if dst.len() != view.len() {
        return Err(Error::BufferRange {
            op: "collect",
            detail: format!(
                "the destination has {} elements but the view has {}",
                dst.len(),
                view.len()
            ),
        });
    }
    check_alias("collect", &reads, dst)?;
    let n = view.len();
    let outputs = [mem_id(dst.buffer())];
    let fast = fast(type_key::<(V, T)>(), 0, |w| {
        w.write(dst.buffer());
        w.size("dst_off", dst.offset());
        w.size("n", n);
        view.walk(w);
    });
    elementwise_fast(
        ex,
        "pattern_transform",
        n,
        &reads,
        &outputs,
        Some(fast),
        |cx| (cx.write(dst.buffer()), cx.size("dst_off", dst.offset())),
        |cx, (out, off), i| {
            let v = view.at(cx, i);
            out.set(*off + i, v)
        },
    )
}

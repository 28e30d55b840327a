//! Tensor fields (Cog's `GPUOperator` layer): [`Field<T>`]s of 0 to 3 dimensions on a device,
//! operators written per output point with implicit addressing, several outputs, and a lazy
//! graph of operators fused into as few kernels as possible.
//!
//! ```
//! use strata::fields::{Border, Fields, Shape};
//! use strata::prelude::*;
//! # fn main() -> strata::Result<()> {
//! let fx = Fields::new(&Queue::new(&Device::from_spec("cpu")?)?);
//! let img = fx.from_slice(Shape::d2(2, 3), &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! // A lazy operator: one work-item per output point; `read` is the same point,
//! // `read_rel` a neighbour with a border policy.
//! let dx = fx.op("dx", img.shape(), {
//!     let img = img.clone();
//!     move |p| p.read_rel(&img, &[0, 1], Border::Clamp) - p.read(&img)
//! });
//! let scaled = dx.map(|d| d * 10.0f32); // point-wise: fused into the same kernel
//! let before = fx.queue().launch_count();
//! assert_eq!(scaled.to_vec()?, vec![10.0, 10.0, 0.0, 10.0, 10.0, 0.0]);
//! assert_eq!(fx.queue().launch_count() - before, 1);
//! # Ok(())
//! # }
//! ```
//!
//! - A [`Field<T>`] has a [`Shape`] (layers x rows x columns; 0-D holds one tensor) and holds a
//!   *small tensor* `T` per point (a [`Tensor`]: a scalar, or a 2-, 3- or 4-vector, which is also
//!   how a 2x2 matrix (row-major) and an RGBA colour are held), read and written as one value.
//!   Fields of *big tensors* ([`BigField`]) hold more than 4 scalars per point and are processed
//!   element by element.
//! - A field is either *data* (a buffer on the device) or *lazy*: an operator not yet run.
//!   [`Fields::op`], [`Field::map`], [`Field::zip_map`], the arithmetic operators and the
//!   built-ins make lazy fields; [`Field::to_vec`], [`Field::eval`] and non-local reads run them.
//! - **Fusion.** A lazy field read at the current point by another operator is recorded into
//!   that operator's kernel (point-wise consumers fuse into their producers, however long the
//!   chain). A lazy field read at another point ([`Point::read_rel`], [`Point::read_at`]) is
//!   run into a buffer first (*materialized*, once: later readers reuse it). So a chain of
//!   operators costs one kernel per non-local read of a computed field.
//!   [`Fields::with_fusion(false)`](Fields::with_fusion) materializes every operator instead,
//!   for comparison. Kernels are cached by their IR like every other kernel, so evaluating the
//!   same graph again compiles nothing.
//! - Eager operators with several outputs, explicit thread allocation, local memory and
//!   non-local writes: [`Fields::operator`] ([`Operator`]).
//!
//! **Layout.** A field is one dense buffer, points in row-major order (`(layer * rows + row) *
//! columns + column`), no row padding: a point-wise kernel reads every field at one linear index
//! that consecutive work-items advance by one, which the CPU backend turns into vector loads and
//! GPUs coalesce. (Pitched [`Buffer2`](crate::Buffer2) rows would add a pitch per field and
//! split that index in two.) Field sizes are launch parameters, so one kernel serves every size.
//!
//! **Nodes.** A `Field<T>` is an `Arc` of a node: an id, a shape, the context, and a state:
//! *data* (a buffer and the event of the kernel that wrote it), *lazy* (a name and the
//! operator's closure `Fn(&mut Point) -> Expr<T>`), or *failed* (a typed error found when the
//! node was made, such as shapes that differ, reported when it is evaluated). The closures
//! hold their input fields, so the lazy graph is a DAG of `Arc`s. Materializing a lazy node
//! runs one kernel named `field_NAME` over its shape, the closure recorded under the in-bounds
//! guard and its value stored at the point; the node becomes data.

mod big;
mod builtins;
mod operator;
mod point;

pub use big::BigField;
pub use operator::{Operator, Out, Outputs};
pub use point::{Border, Point};

use crate::builder::{lit, splat, Arith, Expr, ScalarType, Value};
use crate::error::{Error, Result};
use crate::{Buffer, Device, Event, Kernel, KernelArg, NdRange, Queue};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A tensor-field operation got fields it cannot combine (shapes that differ where they must
/// match, a coordinate count that is not the field's dimensions, host data of the wrong
/// length, an output written by a lazy operator, ...). It converts into [`Error::Layer`];
/// `err.layer::<FieldError>()` gives it back.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{op}: {detail}")]
pub struct FieldError {
    /// The field operation (`Field::from_slice`, `read`, `zip_map`, ...).
    pub op: &'static str,
    /// What does not fit, and what to do instead.
    pub detail: String,
}

impl From<FieldError> for Error {
    fn from(e: FieldError) -> Error {
        Error::Layer(crate::error::LayerError::new(e))
    }
}

/// The shape of a field: 0 to 3 dimensions, outermost first (layers x rows x columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    dims: [usize; 3],
    ndim: u8,
}

impl Shape {
    /// A 0-D field: one tensor.
    pub fn d0() -> Shape {
        Shape {
            dims: [1, 1, 1],
            ndim: 0,
        }
    }
    /// A 1-D field of `columns` points.
    pub fn d1(columns: usize) -> Shape {
        Shape {
            dims: [1, 1, columns],
            ndim: 1,
        }
    }
    /// A 2-D field of `rows x columns` points.
    pub fn d2(rows: usize, columns: usize) -> Shape {
        Shape {
            dims: [1, rows, columns],
            ndim: 2,
        }
    }
    /// A 3-D field of `layers x rows x columns` points.
    pub fn d3(layers: usize, rows: usize, columns: usize) -> Shape {
        Shape {
            dims: [layers, rows, columns],
            ndim: 3,
        }
    }
    /// A shape from its dimensions, outermost first (0 to 3 of them).
    pub fn new(dims: &[usize]) -> Result<Shape> {
        match *dims {
            [] => Ok(Shape::d0()),
            [c] => Ok(Shape::d1(c)),
            [r, c] => Ok(Shape::d2(r, c)),
            [l, r, c] => Ok(Shape::d3(l, r, c)),
            _ => Err(FieldError {
                op: "Shape::new",
                detail: format!(
                    "{} dimensions given; fields have 0 to 3 (layers x rows x columns)",
                    dims.len()
                ),
            }
            .into()),
        }
    }
    /// The number of dimensions, 0 to 3.
    pub fn ndim(&self) -> usize {
        self.ndim as usize
    }
    /// Layers (1 below 3-D).
    pub fn layers(&self) -> usize {
        self.dims[0]
    }
    /// Rows (1 below 2-D).
    pub fn rows(&self) -> usize {
        self.dims[1]
    }
    /// Columns (1 for 0-D).
    pub fn columns(&self) -> usize {
        self.dims[2]
    }
    /// The dimensions, outermost first (`ndim` of them).
    pub fn dims(&self) -> Vec<usize> {
        self.dims[3 - self.ndim()..].to_vec()
    }
    /// The number of points (tensors); `usize::MAX` where that many do not fit a `usize` (a
    /// shape that [`Field`] operations refuse).
    pub fn points(&self) -> usize {
        self.dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .unwrap_or(usize::MAX)
    }
    /// Layers, rows and columns, 1 for the dimensions the shape lacks.
    pub(crate) fn full(&self) -> [usize; 3] {
        self.dims
    }
    /// Fails unless every dimension is at least 1 and the points are addressable with `i32`.
    pub(crate) fn check(&self, op: &'static str) -> Result<()> {
        if self.dims.contains(&0) {
            return Err(FieldError {
                op,
                detail: format!("the shape {self} has an empty dimension; fields have at least one point per dimension"),
            }.into());
        }
        let n = self.dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if n.is_none_or(|n| n > i32::MAX as usize) {
            return Err(FieldError {
                op,
                detail: format!(
                    "the shape {self} has more than 2^31 - 1 points (field indices are 32-bit)"
                ),
            }
            .into());
        }
        Ok(())
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ndim {
            0 => write!(f, "0-D"),
            1 => write!(f, "1-D ({} columns)", self.dims[2]),
            2 => write!(f, "2-D ({} rows x {} columns)", self.dims[1], self.dims[2]),
            _ => write!(
                f,
                "3-D ({} layers x {} rows x {} columns)",
                self.dims[0], self.dims[1], self.dims[2]
            ),
        }
    }
}

/// A small tensor: what one point of a [`Field`] holds, read and written as one value. Scalars
/// and 2-, 3- and 4-vectors of the numeric types (a 2x2 matrix is a `[T; 4]` in row-major order,
/// an RGBA colour a `[T; 4]` with red in `x`).
pub trait Tensor: Value + Arith {
    /// The scalar type of the tensor's elements.
    type Elem: ScalarType + Arith;
    /// The number of elements: 1 for scalars, `N` for `[T; N]`.
    const ELEMENTS: usize;
    /// The zero tensor, recorded into the kernel being built.
    fn zero() -> Expr<Self>;
    /// Every element multiplied by `s`.
    fn scale(x: Expr<Self>, s: Expr<Self::Elem>) -> Expr<Self>;
}

macro_rules! tensors {
    ($($t:ty),*) => {$(
        impl Tensor for $t {
            type Elem = $t;
            const ELEMENTS: usize = 1;
            fn zero() -> Expr<$t> { lit(<$t as Default>::default()) }
            fn scale(x: Expr<$t>, s: Expr<$t>) -> Expr<$t> { x * s }
        }
        tensors!(@vec $t, 2);
        tensors!(@vec $t, 3);
        tensors!(@vec $t, 4);
    )*};
    (@vec $t:ty, $n:literal) => {
        impl Tensor for [$t; $n] {
            type Elem = $t;
            const ELEMENTS: usize = $n;
            fn zero() -> Expr<[$t; $n]> { splat::<$t, $n>(lit(<$t as Default>::default())) }
            fn scale(x: Expr<[$t; $n]>, s: Expr<$t>) -> Expr<[$t; $n]> { x * s }
        }
    };
}
tensors!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

/// The context fields live in: the queue their kernels run on and whether lazy operators fuse.
/// Clones share the queue.
#[derive(Clone)]
pub struct Fields {
    queue: Queue,
    fuse: bool,
}

impl Fields {
    /// Fields on `queue`'s device, run through `queue`, with fusion on.
    pub fn new(queue: &Queue) -> Fields {
        Fields {
            queue: queue.clone(),
            fuse: true,
        }
    }

    /// The same context with fusion on or off. With fusion off every lazy operator a kernel
    /// reads is run into a buffer of its own first (one kernel per operator): the same results,
    /// for measuring what fusion gains.
    pub fn with_fusion(&self, on: bool) -> Fields {
        Fields {
            queue: self.queue.clone(),
            fuse: on,
        }
    }

    /// Whether lazy operators read at the current point are fused into their readers.
    pub fn fusion(&self) -> bool {
        self.fuse
    }

    /// The queue the fields' kernels run on.
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// The device the fields live on.
    pub fn device(&self) -> &Device {
        self.queue.device()
    }

    /// A field of `shape` holding `data`, points in row-major order (layers, then rows, then
    /// columns). Fails with [`FieldError`] when `data` does not have one tensor per point.
    pub fn from_slice<T: Tensor>(&self, shape: Shape, data: &[T]) -> Result<Field<T>> {
        shape.check("Fields::from_slice")?;
        if data.len() != shape.points() {
            return Err(FieldError {
                op: "Fields::from_slice",
                detail: format!(
                    "the field is {shape}, {} points, but {} values were given",
                    shape.points(),
                    data.len()
                ),
            }
            .into());
        }
        let buf = Buffer::from_slice(&self.queue, data)?;
        Ok(Field::from_buffer_unchecked(self, shape, buf, None))
    }

    /// A field of `shape` with every tensor zero.
    pub fn zeros<T: Tensor>(&self, shape: Shape) -> Result<Field<T>> {
        shape.check("Fields::zeros")?;
        let buf = Buffer::<T>::new(&self.queue, shape.points())?;
        Ok(Field::from_buffer_unchecked(self, shape, buf, None))
    }

    /// A field of `shape` over an existing buffer of one tensor per point (row-major), without
    /// copying.
    pub fn from_buffer<T: Tensor>(&self, shape: Shape, buf: Buffer<T>) -> Result<Field<T>> {
        shape.check("Fields::from_buffer")?;
        if buf.device() != self.device() {
            return Err(Error::WrongDevice {
                op: "Fields::from_buffer",
                buffer_device: buf.device().info().spec(),
                queue_device: self.device().info().spec(),
            });
        }
        if buf.len() != shape.points() {
            return Err(FieldError {
                op: "Fields::from_buffer",
                detail: format!(
                    "the field is {shape}, {} points, but the buffer has {} elements",
                    shape.points(),
                    buf.len()
                ),
            }
            .into());
        }
        Ok(Field::from_buffer_unchecked(self, shape, buf, None))
    }

    /// A lazy operator with implicit addressing: `f` is recorded once per output point (one
    /// work-item per point of `shape`) and returns the tensor at that point; it reads other
    /// fields through the [`Point`] (at the same point with [`Point::read`], elsewhere with
    /// [`Point::read_rel`] and [`Point::read_at`]). Nothing runs until the field is needed;
    /// then the operator is fused into its reader or run (see the module docs). `name` names
    /// the kernel (`field_NAME`, other characters than ASCII letters and digits made `_`). A
    /// bad shape makes the field fail with
    /// [`FieldError`] when it is evaluated.
    pub fn op<T: Tensor>(
        &self,
        name: &str,
        shape: Shape,
        f: impl Fn(&mut Point) -> Expr<T> + Send + Sync + 'static,
    ) -> Field<T> {
        let state = match shape.check("Fields::op") {
            Ok(()) => State::Lazy {
                name: name.to_string(),
                op: Arc::new(f) as OpFn<T>,
            },
            Err(e) => State::Failed(e),
        };
        Field::with_state(self, shape, state)
    }

    /// An eager operator over `threads` (one work-item per point; the global work size) with
    /// outputs, local memory and explicit work-group shape: see [`Operator`].
    pub fn operator(&self, name: &str, threads: Shape) -> Operator {
        Operator::new(self, name, threads)
    }
}

/// The operator function of a lazy field.
pub(crate) type OpFn<T> = Arc<dyn Fn(&mut Point) -> Expr<T> + Send + Sync>;

/// What a field (small or big: `Op` is its operator's type) is now: data, a lazy operator, or
/// the error it keeps returning.
pub(crate) enum State<T, Op = OpFn<T>> {
    Data {
        buf: Buffer<T>,
        ready: Option<Event>,
    },
    Lazy {
        name: String,
        op: Op,
    },
    Failed(Error),
}

/// A field's buffer and the event of the kernel that writes it (`None`: written by the host).
pub(crate) type Ready<T> = (Buffer<T>, Option<Event>);

impl<T: crate::builder::Element, Op: Clone> State<T, Op> {
    /// A data field's buffer and event (`Ok(Ok)`), a lazy field's name and operator (`Ok(Err)`),
    /// or a failed field's error.
    pub(crate) fn pending(
        slot: &Mutex<Self>,
    ) -> Result<std::result::Result<Ready<T>, (String, Op)>> {
        match &*slot.lock().unwrap() {
            State::Data { buf, ready } => Ok(Ok((buf.clone(), ready.clone()))),
            State::Failed(e) => Err(e.clone()),
            State::Lazy { name, op } => Ok(Err((name.clone(), op.clone()))),
        }
    }

    /// Records how running a lazy field into `out` ended: the field becomes data written by the
    /// kernel of `result`, or keeps returning `result`'s error.
    pub(crate) fn settle(
        slot: &Mutex<Self>,
        out: Buffer<T>,
        result: Result<Event>,
    ) -> Result<Ready<T>> {
        let mut state = slot.lock().unwrap();
        match result {
            Ok(event) => {
                *state = State::Data {
                    buf: out.clone(),
                    ready: Some(event.clone()),
                };
                Ok((out, Some(event)))
            }
            Err(e) => {
                *state = State::Failed(e.clone());
                Err(e)
            }
        }
    }
}

pub(crate) struct Node<T> {
    pub(crate) id: u64,
    pub(crate) shape: Shape,
    pub(crate) fx: Fields,
    pub(crate) state: Mutex<State<T>>,
}

static NEXT_NODE: AtomicU64 = AtomicU64::new(1);

/// A tensor field on a device: a [`Shape`] and one small tensor `T` per point (see [`Tensor`]),
/// either data in a buffer or a lazy operator (see the module docs). Clones share the field;
/// evaluating one evaluates all.
pub struct Field<T> {
    pub(crate) node: Arc<Node<T>>,
}

impl<T> Clone for Field<T> {
    fn clone(&self) -> Self {
        Field {
            node: self.node.clone(),
        }
    }
}

impl<T> std::fmt::Debug for Field<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &*self.node.state.lock().unwrap() {
            State::Data { .. } => "data".to_string(),
            State::Lazy { name, .. } => format!("lazy `{name}`"),
            State::Failed(e) => format!("failed: {e}"),
        };
        write!(f, "Field({}, {kind})", self.node.shape)
    }
}

/// What a kernel needs of a field: its buffer (after running it, if lazy) or its operator.
pub(crate) enum Peek<T> {
    Data,
    Lazy(OpFn<T>),
    Failed(Error),
}

impl<T: Tensor> Field<T> {
    pub(crate) fn with_state(fx: &Fields, shape: Shape, state: State<T>) -> Field<T> {
        Field {
            node: Arc::new(Node {
                id: NEXT_NODE.fetch_add(1, Ordering::Relaxed),
                shape,
                fx: fx.clone(),
                state: Mutex::new(state),
            }),
        }
    }

    pub(crate) fn from_buffer_unchecked(
        fx: &Fields,
        shape: Shape,
        buf: Buffer<T>,
        ready: Option<Event>,
    ) -> Field<T> {
        Field::with_state(fx, shape, State::Data { buf, ready })
    }

    /// The field's shape.
    pub fn shape(&self) -> Shape {
        self.node.shape
    }

    /// The context the field was made in.
    pub fn fields(&self) -> &Fields {
        &self.node.fx
    }

    /// The device the field lives on.
    pub fn device(&self) -> &Device {
        self.node.fx.device()
    }

    /// Whether the field is an operator not yet run.
    pub fn is_lazy(&self) -> bool {
        matches!(&*self.node.state.lock().unwrap(), State::Lazy { .. })
    }

    pub(crate) fn id(&self) -> u64 {
        self.node.id
    }

    pub(crate) fn peek(&self) -> Peek<T> {
        match &*self.node.state.lock().unwrap() {
            State::Data { .. } => Peek::Data,
            State::Lazy { op, .. } => Peek::Lazy(op.clone()),
            State::Failed(e) => Peek::Failed(e.clone()),
        }
    }

    /// Runs the field's operator into a buffer if it is lazy (enqueued, not waited for), and
    /// returns the buffer and the event of the kernel that writes it.
    pub(crate) fn materialize(&self) -> Result<(Buffer<T>, Option<Event>)> {
        let (name, op) = match State::pending(&self.node.state)? {
            Ok(ready) => return Ok(ready),
            Err(lazy) => lazy,
        };
        let shape = self.node.shape;
        let fx = &self.node.fx;
        // Not zeroed: the kernel stores every point, unless the operator's recording returns
        // early somewhere (then zeroed first, on the queue).
        let out = Buffer::<T>::overwritten(&fx.queue, shape.points())?;
        let result = point::run_kernel(
            fx,
            &kernel_name(&name),
            shape,
            None,
            |p| {
                let o = p.output_param(&out);
                let (inside, lin) = (p.inside(), p.linear());
                crate::builder::if_(inside, || {
                    let v = op(p);
                    o.set(lin, v);
                });
            },
            |c| match c.returns {
                true => zero_fill(fx, &out),
                false => Ok(()),
            },
        );
        State::settle(&self.node.state, out, result)
    }

    /// Runs the field if it is lazy (enqueued; later kernels on any queue wait for it) and
    /// returns it, now data. Fails with the first error of its operators.
    pub fn eval(&self) -> Result<Field<T>> {
        self.materialize()?;
        Ok(self.clone())
    }

    /// The field's buffer (one tensor per point, row-major), running the field first if lazy,
    /// and waiting for it.
    pub fn buffer(&self) -> Result<Buffer<T>> {
        let (buf, ready) = self.materialize()?;
        if let Some(e) = ready {
            e.wait()?;
        }
        Ok(buf)
    }

    /// The field's tensors on the host, row-major (running the field first if lazy).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let buf = self.buffer()?;
        self.node.fx.queue.read(&buf)
    }

    /// A lazy point-wise operator: `f` of the tensor at each point.
    pub fn map<U: Tensor>(
        &self,
        f: impl Fn(Expr<T>) -> Expr<U> + Send + Sync + 'static,
    ) -> Field<U> {
        let a = self.clone();
        self.node.fx.op("map", self.shape(), move |p| f(p.read(&a)))
    }

    /// A lazy point-wise operator of two fields of the same shape (else the result fails with
    /// [`FieldError`] when evaluated).
    pub fn zip_map<U: Tensor, V: Tensor>(
        &self,
        other: &Field<U>,
        f: impl Fn(Expr<T>, Expr<U>) -> Expr<V> + Send + Sync + 'static,
    ) -> Field<V> {
        if let Err(e) = same_shape("zip_map", self.shape(), other.shape()) {
            return Field::with_state(&self.node.fx, self.shape(), State::Failed(e));
        }
        let (a, b) = (self.clone(), other.clone());
        self.node
            .fx
            .op("zip_map", self.shape(), move |p| f(p.read(&a), p.read(&b)))
    }

    /// A lazy point-wise operator of three fields of the same shape.
    pub fn zip3_map<U: Tensor, V: Tensor, W: Tensor>(
        &self,
        b: &Field<U>,
        c: &Field<V>,
        f: impl Fn(Expr<T>, Expr<U>, Expr<V>) -> Expr<W> + Send + Sync + 'static,
    ) -> Field<W> {
        let check = same_shape("zip3_map", self.shape(), b.shape())
            .and_then(|()| same_shape("zip3_map", self.shape(), c.shape()));
        if let Err(e) = check {
            return Field::with_state(&self.node.fx, self.shape(), State::Failed(e));
        }
        let (a, b, c) = (self.clone(), b.clone(), c.clone());
        self.node.fx.op("zip3_map", self.shape(), move |p| {
            f(p.read(&a), p.read(&b), p.read(&c))
        })
    }
}

pub(crate) fn same_shape(op: &'static str, a: Shape, b: Shape) -> Result<()> {
    if a != b {
        return Err(FieldError {
            op,
            detail: format!("the fields' shapes differ: {a} and {b}; point-wise operators need fields of one shape"),
        }.into());
    }
    Ok(())
}

/// The kernel name of an operator: `field_` and the operator's name, with every character
/// other than ASCII letters, digits and `_` replaced by `_` (so any name gives valid C).
pub(crate) fn kernel_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("field_{clean}")
}

/// A launch argument the trace context owns until the launch.
pub(crate) trait ArgSource: Send {
    fn arg(&self) -> KernelArg<'_>;
}
impl<T: Value> ArgSource for Buffer<T> {
    fn arg(&self) -> KernelArg<'_> {
        KernelArg::from(self)
    }
}
pub(crate) struct ScalarArg<T>(pub T);
impl<T: ScalarType> ArgSource for ScalarArg<T> {
    fn arg(&self) -> KernelArg<'_> {
        KernelArg::from(self.0)
    }
}

/// The launch covering `threads` (launch order: columns, rows, layers) with `local` work-groups
/// (outermost first), or the default: 64 work-items in 1-D, 32 x 8 in 2-D, 32 x 4 x 2 in 3-D;
/// with `rows` ([`row_groups`]: a CPU device, a kernel that does not see its work-group) a
/// 2-D default of row strips instead: a row cut into the fewest strips of at most
/// [`ROW_STRIP`] columns, of equal width rounded up to a multiple of 8 (2048 columns: 8 of
/// 256; 300: 2 of 152), by as many rows as fit in [`ROW_STRIP`] work-items (one, but 32 of 8
/// columns).
pub(crate) fn range_for(threads: Shape, local: Option<&[usize]>, rows: bool) -> NdRange {
    let [l, r, c] = threads.full();
    match threads.ndim() {
        0 => NdRange::new(1).local(1),
        1 => NdRange::covering(c, local.map_or(64, |d| d[0])),
        2 => {
            let default = if rows {
                let w = c.div_ceil(c.div_ceil(ROW_STRIP).max(1)).next_multiple_of(8);
                [w, (ROW_STRIP / w).min(r.max(1))]
            } else {
                [32, 8]
            };
            let lc = local.map_or(default, |d| [d[1], d[0]]);
            NdRange::covering([c, r], lc)
        }
        _ => {
            let lc = local.map_or([32, 4, 2], |d| [d[2], d[1], d[0]]);
            NdRange::covering([c, r, l], lc)
        }
    }
}

/// Work-items in a CPU device's default 2-D work-group, one row strip ([`range_for`]).
pub(crate) const ROW_STRIP: usize = 256;

/// Whether a 2-D field kernel `f` on `device` runs in row strips ([`range_for`]): on a CPU (the
/// strata CPU backends, an OpenCL or Vulkan CPU device), for a kernel whose results cannot
/// depend on the work-group's shape (of the work-item built-ins only the global id: no local
/// or group ids, no sizes, which the rounding up changes; no local memory, no barrier or
/// collective). A CPU runs a work-group as loops over its rows; the GPU-shaped 32 x 8 group
/// made a stencil's work-group eight rows of 128 bytes (8 KiB apart at 2048 columns) in each
/// of the five buffers it reads and writes, and `strata bench`'s `rof_fused` spent 2.0 to
/// 2.4 times the CPU time of its rayon loop in compiled code (1.0 to 1.2 times in row
/// strips), at only 7 % more instructions (issue 31). `cpu` and `interp` take the same
/// shape, so a fault's work-item is the same on both.
pub(crate) fn row_groups(device: &crate::Device, f: &crate::ir::Function) -> bool {
    use crate::ir::{walk_block, Builtin, Expr, Stmt};
    let mut sync = false;
    walk_block(&f.body, &mut |s| {
        sync |= matches!(s, Stmt::Barrier(_) | Stmt::Group { .. })
    });
    device.info().is_cpu()
        && f.locals.is_empty()
        && !sync
        && f.exprs
            .iter()
            .all(|(_, e, _)| !matches!(e, Expr::Builtin(b) if !matches!(b, Builtin::GlobalId(_))))
}

/// Zeroes `buf` on the context's queue (before the kernels enqueued after it): an output
/// allocated without zeroing ([`Buffer::overwritten`]) whose kernel may leave points unwritten.
pub(crate) fn zero_fill<T: Tensor>(fx: &Fields, buf: &Buffer<T>) -> Result<()> {
    fx.queue
        .enqueue_fill(buf, bytemuck::Zeroable::zeroed(), .., &[])
        .map(drop)
}

/// Kernels run with `Kernel` and `NdRange` (re-exported for the point module).
pub(crate) fn launch(
    fx: &Fields,
    kernel: &Kernel,
    range: NdRange,
    args: &[Box<dyn ArgSource>],
    waits: &[Event],
) -> Result<Event> {
    let kargs: Vec<KernelArg<'_>> = args.iter().map(|a| a.arg()).collect();
    let w: Vec<&Event> = waits.iter().collect();
    let run = kernel.enqueue(&fx.queue, range, &kargs, &w)?;
    Ok(run.event().clone())
}

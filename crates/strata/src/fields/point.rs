//! [`Point`]: the trace context of a field operator, the current point of the work-item that
//! computes one output tensor. Reads of fields go through it: at the same point (implicit
//! addressing; a lazy field is fused here), at a relative or absolute point with a [`Border`]
//! policy (a lazy field is materialized first). It turns fields into kernel parameters (one per
//! buffer however often it is read) and collects the launch arguments, the events to wait for
//! and the errors found while recording.
//!
//! The work-item's coordinates are its `global_id` per dimension (columns in dimension 0), as
//! `i32`; the dimensions are `i32` launch parameters (`rows`, `columns`, `layers`: one per
//! axis and size, so fields of one shape share them). A read at another point goes through
//! the border policy per axis; a lazy field read there is materialized first (a nested
//! `Kernel::build` is fine: recordings are a stack). Loads already recorded are reused (a memo
//! keyed by field and offset), but only where the IR allows it: the builder's `block_path`
//! (the open control-flow blocks) must extend the path where the load was recorded, since a
//! value may only be used in its block and the blocks nested in it. The events of the kernels
//! that wrote the fields read become the launch's wait list, so fields made on other queues
//! are ordered too. Reading a buffer the kernel writes is an error, and so is the first error
//! found while recording, returned instead of building the kernel.

use super::{range_for, ArgSource, Field, FieldError, Fields, Peek, ScalarArg, Shape, Tensor};
use crate::builder::{
    block_path, global_id, group_id, if_, lit, local_id, local_size, select, BufferParam, Expr,
    KernelDef, LocalArray, Value,
};
use crate::error::{Error, Result};
use crate::{Buffer, Event, Kernel};
use std::any::Any;

/// What a read outside the field gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Border {
    /// The nearest point inside: each coordinate clamped to `0..n`.
    Clamp,
    /// Periodic: each coordinate taken modulo `n`.
    Wrap,
    /// The zero tensor.
    Zero,
    /// Reflected at the edges without repeating them: `-1` reads `1`, `n` reads `n - 2`
    /// (period `2n - 2`; a dimension of one point always reads it).
    Mirror,
}

/// Identity of a load already recorded, so a second identical read reuses it.
#[derive(Clone, Debug, PartialEq)]
enum Key {
    Point(u64),
    Rel(u64, [i32; 3], Border),
}

/// How the kernel being recorded treats its outputs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A lazy operator: the whole body runs under the in-bounds guard; no writes.
    Lazy,
    /// An eager operator: every work-item runs the body (barriers allowed); writes are guarded.
    Eager,
}

/// The current point of a field operator: the work-item computing one output tensor, and the
/// door to every field it reads (see the module docs of [`crate::fields`]). Coordinates are
/// `i32` expressions (Cog's `_layer`, `_row`, `_column`).
pub struct Point<'k> {
    kd: &'k mut KernelDef,
    fx: Fields,
    threads: Shape,
    mode: Mode,
    ids: [Expr<i32>; 3],
    dims: [Expr<i32>; 3],
    inside: Expr<bool>,
    linear: Expr<u32>,
    read_linear: Expr<u32>,
    bufs: Vec<(usize, Box<dyn Any>)>,
    args: Vec<Box<dyn ArgSource>>,
    scalars: Vec<(String, i32, Expr<i32>)>,
    memo: Vec<(Key, Vec<u64>, Box<dyn Any>)>,
    waits: Vec<Event>,
    errors: Vec<Error>,
    outputs: Vec<usize>,
    pub(crate) out_params: Vec<(Shape, Box<dyn Any>)>,
    /// The block path of the kernel's body ([`block_path`]): a `write` recorded there runs in
    /// every work-item (unless one returns early).
    top: Vec<u64>,
    /// The outputs (their `Out` indices) that a `write` at [`Point::top`] stores to.
    covered: Vec<usize>,
}

/// What a recorded field kernel writes, for the buffers its outputs were allocated in
/// without zeroing ([`Buffer::overwritten`]): the kernel's first command on them.
pub(crate) struct Coverage {
    /// Whether a work-item can return early (the body has a `return` anywhere): then no
    /// store is certain to run.
    pub(crate) returns: bool,
    /// Whether the body has a `break` or `continue` anywhere (which may leave a loop of the
    /// fields layer's own before its last store).
    pub(crate) breaks: bool,
    /// The outputs (their `Out` indices) that a `write` at the top of the body stores to,
    /// at every point of the thread shape (which is theirs).
    pub(crate) covered: Vec<usize>,
}

impl Coverage {
    /// Whether the kernel writes every point of output `index`.
    pub(crate) fn writes_all(&self, index: usize) -> bool {
        !self.returns && self.covered.contains(&index)
    }
}

fn mem_id<T>(b: &Buffer<T>) -> usize {
    crate::patterns::mem_id(b)
}

/// Records and enqueues one field kernel over `threads`; `body` records everything inside.
/// `prepare` sees what the kernel writes before it is enqueued (to zero what it does not).
pub(crate) fn run_kernel(
    fx: &Fields,
    name: &str,
    threads: Shape,
    local: Option<&[usize]>,
    body: impl FnOnce(&mut Point),
    prepare: impl FnOnce(&Coverage) -> Result<()>,
) -> Result<Event> {
    run_kernel_mode(fx, name, threads, local, Mode::Lazy, body, prepare)
}

pub(crate) fn run_kernel_mode(
    fx: &Fields,
    name: &str,
    threads: Shape,
    local: Option<&[usize]>,
    mode: Mode,
    body: impl FnOnce(&mut Point),
    prepare: impl FnOnce(&Coverage) -> Result<()>,
) -> Result<Event> {
    type Recorded = (Vec<Box<dyn ArgSource>>, Vec<Event>, Vec<Error>, Vec<usize>);
    let mut done: Option<Recorded> = None;
    let built = Kernel::build(name, |kd| {
        let mut p = Point::new(kd, fx, threads, mode);
        body(&mut p);
        done = Some((p.args, p.waits, p.errors, p.covered));
    });
    let (args, waits, errors, covered) = done.expect("the kernel body ran");
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    let kernel = built?;
    let (mut returns, mut breaks) = (false, false);
    crate::ir::walk_block(&kernel.ir().body, &mut |s| {
        returns |= matches!(s, crate::ir::Stmt::Return);
        breaks |= matches!(s, crate::ir::Stmt::Break(_) | crate::ir::Stmt::Continue(_));
    });
    prepare(&Coverage {
        returns,
        breaks,
        covered,
    })?;
    let rows = super::row_groups(fx.device(), kernel.ir());
    super::launch(fx, &kernel, range_for(threads, local, rows), &args, &waits)
}

impl<'k> Point<'k> {
    fn new(kd: &'k mut KernelDef, fx: &Fields, threads: Shape, mode: Mode) -> Point<'k> {
        let mut p = Point {
            kd,
            fx: fx.clone(),
            threads,
            mode,
            ids: [lit(0i32); 3],
            dims: [lit(1i32); 3],
            inside: lit(true),
            linear: lit(0u32),
            read_linear: lit(0u32),
            bufs: Vec::new(),
            args: Vec::new(),
            scalars: Vec::new(),
            memo: Vec::new(),
            waits: Vec::new(),
            errors: Vec::new(),
            outputs: Vec::new(),
            out_params: Vec::new(),
            top: block_path(),
            covered: Vec::new(),
        };
        let nd = threads.ndim();
        let full = threads.full();
        let mut inside = lit(true);
        for (axis, &size) in full.iter().enumerate().skip(3 - nd) {
            let n = p.dim(axis, size);
            let id = global_id((2 - axis) as u8).cast::<i32>();
            inside = inside & id.lt(n);
            p.ids[axis] = id;
            p.dims[axis] = n;
        }
        p.inside = inside;
        p.linear = p.index(p.dims, p.ids);
        p.read_linear = match mode {
            Mode::Lazy => p.linear,
            Mode::Eager => {
                let mut c = p.ids;
                for (x, &n) in c.iter_mut().zip(&p.dims).skip(3 - nd) {
                    *x = x.min(n - 1i32);
                }
                p.index(p.dims, c)
            }
        };
        p
    }

    /// The `i32` launch parameter holding dimension `axis` (0 layers, 1 rows, 2 columns) of size
    /// `v`; one parameter per axis and value.
    fn dim(&mut self, axis: usize, v: usize) -> Expr<i32> {
        let role = ["layers", "rows", "columns"][axis];
        let v = v as i32;
        if let Some((_, _, e)) = self.scalars.iter().find(|(n, x, _)| n == role && *x == v) {
            return *e;
        }
        let same = self.scalars.iter().filter(|(n, _, _)| n == role).count();
        let name = if same == 0 {
            role.to_string()
        } else {
            format!("{role}{same}")
        };
        let e = self.kd.scalar::<i32>(&name);
        self.args.push(Box::new(ScalarArg(v)));
        self.scalars.push((role.to_string(), v, e));
        e
    }

    /// The dimensions of `shape` as expressions (literal 1 for those it lacks).
    pub(super) fn dims_of(&mut self, shape: Shape) -> [Expr<i32>; 3] {
        if shape == self.threads {
            return self.dims;
        }
        let full = shape.full();
        let mut d = [lit(1i32); 3];
        for (axis, slot) in d.iter_mut().enumerate().skip(3 - shape.ndim()) {
            *slot = self.dim(axis, full[axis]);
        }
        d
    }

    /// Row-major linear index of coordinates (layer, row, column) in a field of `dims`.
    pub(super) fn index(&self, dims: [Expr<i32>; 3], c: [Expr<i32>; 3]) -> Expr<u32> {
        ((c[0] * dims[1] + c[1]) * dims[2] + c[2]).cast::<u32>()
    }

    pub(super) fn declare<T: Value>(&mut self, b: &Buffer<T>, write: bool) -> BufferParam<T> {
        let id = mem_id(b);
        if let Some(p) = self
            .bufs
            .iter()
            .find(|(m, _)| *m == id)
            .and_then(|(_, p)| p.downcast_ref::<BufferParam<T>>())
        {
            return *p;
        }
        let access = if write {
            crate::ir::Access::Write
        } else {
            crate::ir::Access::Read
        };
        let p = self
            .kd
            .buffer::<T>(&format!("f{}", self.bufs.len()), access);
        self.bufs.push((id, Box::new(p)));
        self.args.push(Box::new(b.clone()));
        if write {
            self.outputs.push(id);
        }
        p
    }

    /// The write-only parameter of an output buffer.
    pub(crate) fn output_param<T: Value>(&mut self, b: &Buffer<T>) -> BufferParam<T> {
        self.declare(b, true)
    }

    pub(crate) fn inside(&self) -> Expr<bool> {
        self.inside
    }

    pub(crate) fn linear(&self) -> Expr<u32> {
        self.linear
    }

    pub(super) fn ids(&self) -> [Expr<i32>; 3] {
        self.ids
    }

    pub(super) fn read_linear(&self) -> Expr<u32> {
        self.read_linear
    }

    pub(super) fn fusing(&self) -> bool {
        self.fx.fuse
    }

    pub(super) fn threads(&self) -> Shape {
        self.threads
    }

    pub(crate) fn fail(&mut self, e: Error) {
        if self.errors.is_empty() {
            self.errors.push(e);
        }
    }

    fn memo_get<T: Value>(&self, key: &Key) -> Option<Expr<T>> {
        let here = block_path();
        self.memo
            .iter()
            .find(|(k, path, _)| k == key && here.starts_with(path))
            .and_then(|(_, _, v)| v.downcast_ref::<Expr<T>>().copied())
    }

    fn memo_put<T: Value>(&mut self, key: Key, v: Expr<T>) {
        self.memo.push((key, block_path(), Box::new(v)));
    }

    fn check_device<T: Tensor>(&mut self, op: &'static str, f: &Field<T>) -> bool {
        self.same_device(op, f.device())
    }

    pub(super) fn same_device(&mut self, op: &'static str, device: &crate::Device) -> bool {
        let f_device = device;
        if f_device != self.fx.device() {
            self.fail(Error::WrongDevice {
                op,
                buffer_device: f_device.info().spec(),
                queue_device: self.fx.device().info().spec(),
            });
            return false;
        }
        true
    }

    /// The buffer parameter of `f`, running `f` first if it is lazy.
    fn data_param<T: Tensor>(&mut self, f: &Field<T>) -> Option<BufferParam<T>> {
        self.param_of(f.materialize())
    }

    /// The read parameter of a materialized buffer (waiting for the kernel that writes it).
    pub(super) fn param_of<T: Value>(
        &mut self,
        m: Result<(Buffer<T>, Option<Event>)>,
    ) -> Option<BufferParam<T>> {
        match m {
            Ok((buf, ready)) => {
                if self.outputs.contains(&mem_id(&buf)) {
                    self.fail(
                        FieldError {
                            op: "read",
                            detail: "an operator reads a field it writes; write into a new field"
                                .into(),
                        }
                        .into(),
                    );
                    return None;
                }
                if let Some(e) = ready.filter(|e| !e.is_complete()) {
                    self.waits.push(e);
                }
                Some(self.declare(&buf, false))
            }
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    /// The tensor of `f` at the current point (Cog's `_readTensor(f)`): `f` must have the
    /// operator's shape, or be 0-D (its one tensor is read everywhere). A lazy `f` is recorded
    /// here (fused) when the context's fusion is on. Reading the same field twice at the
    /// same point reuses the first read.
    #[track_caller]
    pub fn read<T: Tensor>(&mut self, f: &Field<T>) -> Expr<T> {
        if !self.check_device("read", f) {
            return T::zero();
        }
        let key = Key::Point(f.id());
        if let Some(v) = self.memo_get::<T>(&key) {
            return v;
        }
        let shape = f.shape();
        if shape.ndim() == 0 {
            let Some(param) = self.data_param(f) else {
                return T::zero();
            };
            let v = param.at(0u32);
            self.memo_put(key, v);
            return v;
        }
        if shape != self.threads {
            self.fail(FieldError {
                op: "read",
                detail: format!(
                    "implicit addressing reads a field at the operator's own point, so the field must have the operator's shape: the field is {shape}, the operator runs over {}; use read_rel or read_at",
                    self.threads
                ),
            }.into());
            return T::zero();
        }
        let v = match f.peek() {
            Peek::Lazy(op) if self.fx.fuse => op(self),
            Peek::Failed(e) => {
                self.fail(e);
                return T::zero();
            }
            _ => {
                let Some(param) = self.data_param(f) else {
                    return T::zero();
                };
                param.at(self.read_linear)
            }
        };
        self.memo_put(key, v);
        v
    }

    /// The tensor of `f` at the current point moved by `offset` (one `i32` per dimension,
    /// outermost first; `f` must have as many dimensions as the operator), with `border` outside
    /// `f`. A lazy `f` is run into a buffer first (a non-local read ends fusion).
    pub fn read_rel<T: Tensor>(&mut self, f: &Field<T>, offset: &[i32], border: Border) -> Expr<T> {
        if !self.check_device("read_rel", f) {
            return T::zero();
        }
        let Some(off) = self.full_offset("read_rel", f.shape(), offset) else {
            return T::zero();
        };
        let nd = f.shape().ndim();
        let key = Key::Rel(f.id(), off, border);
        if let Some(v) = self.memo_get::<T>(&key) {
            return v;
        }
        let mut c = self.ids;
        for axis in (3 - nd)..3 {
            if off[axis] != 0 {
                c[axis] = c[axis] + off[axis];
            }
        }
        let inside_threads = off == [0; 3] && f.shape() == self.threads;
        let v = if inside_threads && self.mode == Mode::Lazy {
            // The point itself: no border can apply.
            match self.data_param(f) {
                Some(param) => param.at(self.linear),
                None => return T::zero(),
            }
        } else {
            self.load(f, c, border)
        };
        self.memo_put(key, v);
        v
    }

    /// The tensor of `f` at absolute coordinates (one `i32` expression per dimension of `f`,
    /// outermost first: Cog's `_readTensor(f, row, column)`), with `border` outside `f`. A lazy
    /// `f` is run into a buffer first.
    pub fn read_at<T: Tensor>(
        &mut self,
        f: &Field<T>,
        coords: &[Expr<i32>],
        border: Border,
    ) -> Expr<T> {
        if !self.check_device("read_at", f) {
            return T::zero();
        }
        match self.full_coords("read_at", f.shape(), "field", coords) {
            Some(c) => self.load(f, c, border),
            None => T::zero(),
        }
    }

    /// `coords` (one per dimension of a `what` of `shape`, outermost first) padded to three
    /// axes; a wrong count is an [`FieldError`] of `op`, recorded, and `None`.
    pub(crate) fn full_coords(
        &mut self,
        op: &'static str,
        shape: Shape,
        what: &str,
        coords: &[Expr<i32>],
    ) -> Option<[Expr<i32>; 3]> {
        let nd = shape.ndim();
        if coords.len() != nd {
            self.fail(FieldError {
                op,
                detail: format!(
                    "{} coordinates given for a {shape} {what}; give one per dimension, outermost first",
                    coords.len()
                ),
            }.into());
            return None;
        }
        let mut c = [lit(0i32); 3];
        c[3 - nd..].copy_from_slice(coords);
        Some(c)
    }

    /// `offset` of a relative read of a field of `shape` padded to three axes; an offset count
    /// other than the field's dimensions, or a field of other dimensions than the operator's,
    /// is an [`FieldError`] of `op`, recorded, and `None`.
    pub(crate) fn full_offset(
        &mut self,
        op: &'static str,
        shape: Shape,
        offset: &[i32],
    ) -> Option<[i32; 3]> {
        let nd = shape.ndim();
        if nd != self.threads.ndim() || offset.len() != nd {
            self.fail(FieldError {
                op,
                detail: format!(
                    "a relative read needs one offset per dimension of the field and a field with the operator's dimensions: {} offsets, field {shape}, operator {}",
                    offset.len(),
                    self.threads
                ),
            }.into());
            return None;
        }
        let mut off = [0i32; 3];
        off[3 - nd..].copy_from_slice(offset);
        Some(off)
    }

    /// Loads `f` at full coordinates `c` with the border policy.
    fn load<T: Tensor>(&mut self, f: &Field<T>, c: [Expr<i32>; 3], border: Border) -> Expr<T> {
        let Some(param) = self.data_param(f) else {
            return T::zero();
        };
        let (idx, inside) = self.border_index(f.shape(), c, border);
        let v = param.at(idx);
        match inside {
            Some(inside) => select(inside, v, T::zero()),
            None => v,
        }
    }

    /// The linear index of full coordinates `c` in a field of `shape` under the border policy,
    /// and for [`Border::Zero`] whether `c` is inside (the index is then clamped).
    pub(super) fn border_index(
        &mut self,
        shape: Shape,
        mut c: [Expr<i32>; 3],
        border: Border,
    ) -> (Expr<u32>, Option<Expr<bool>>) {
        let dims = self.dims_of(shape);
        let mut inside = lit(true);
        for axis in (3 - shape.ndim())..3 {
            let (x, n) = (c[axis], dims[axis]);
            c[axis] = match border {
                // max then min, not `clamp`: the CPU backend's SIMD path has integer
                // min and max instructions but computes `clamp` lane by lane.
                Border::Clamp => x.max(lit(0i32)).min(n - 1i32),
                Border::Zero => {
                    inside = inside & x.ge(lit(0i32)) & x.lt(n);
                    x.max(lit(0i32)).min(n - 1i32)
                }
                Border::Wrap => ((x % n) + n) % n,
                Border::Mirror => {
                    let period = (n * 2i32 - 2i32).max(lit(1i32));
                    let m = ((x % period) + period) % period;
                    select(m.lt(n), m, period - m)
                }
            };
        }
        let idx = self.index(dims, c);
        (idx, (border == Border::Zero).then_some(inside))
    }

    /// Writes `value` at the current point of output `out` (Cog's `_writeTensor(_outN, v)`),
    /// only by work-items inside the operator's shape. `out` must have the operator's shape.
    /// Eager operators only ([`super::Operator`]).
    pub fn write<T: Tensor>(&mut self, out: super::Out<T>, value: Expr<T>) {
        let Some((shape, param)) = self.out_param(out) else {
            return;
        };
        if shape != self.threads {
            self.fail(FieldError {
                op: "write",
                detail: format!(
                    "implicit addressing writes at the operator's own point, so the output must have the operator's shape: the output is {shape}, the operator runs over {}; use write_at",
                    self.threads
                ),
            }.into());
            return;
        }
        let (inside, lin) = (self.inside, self.linear);
        if_(inside, || param.set(lin, value));
        if block_path() == self.top {
            self.covered.push(out.index);
        }
    }

    /// Writes `value` into output `out` at absolute coordinates (one `i32` per dimension of the
    /// output, outermost first: Cog's `_writeTensor(_outN, v, row, column)`). Coordinates
    /// outside the output write nothing. Eager operators only.
    pub fn write_at<T: Tensor>(
        &mut self,
        out: super::Out<T>,
        coords: &[Expr<i32>],
        value: Expr<T>,
    ) {
        let Some((shape, param)) = self.out_param(out) else {
            return;
        };
        let Some(c) = self.full_coords("write_at", shape, "output", coords) else {
            return;
        };
        let nd = shape.ndim();
        let dims = self.dims_of(shape);
        let mut inside = lit(true);
        for axis in (3 - nd)..3 {
            inside = inside & c[axis].ge(lit(0i32)) & c[axis].lt(dims[axis]);
        }
        let idx = self.index(dims, c);
        if_(inside, || param.set(idx, value));
    }

    fn out_param<T: Tensor>(&mut self, out: super::Out<T>) -> Option<(Shape, BufferParam<T>)> {
        if self.mode == Mode::Lazy {
            self.fail(FieldError {
                op: "write",
                detail: "a lazy operator returns its tensor and cannot write outputs; use Fields::operator for outputs".into(),
            }.into());
            return None;
        }
        let found = self
            .out_params
            .get(out.index)
            .and_then(|(s, p)| p.downcast_ref::<BufferParam<T>>().map(|p| (*s, *p)));
        if found.is_none() {
            self.fail(
                FieldError {
                    op: "write",
                    detail: format!(
                        "output {} does not belong to this operator (or has another tensor type)",
                        out.index
                    ),
                }
                .into(),
            );
        }
        found
    }

    /// Declares the output buffers of an eager operator, in order.
    pub(crate) fn declare_output<T: Tensor>(&mut self, shape: Shape, b: &Buffer<T>) {
        let p = self.declare(b, true);
        self.out_params.push((shape, Box::new(p)));
    }

    /// The layer of the current point (0 below 3-D).
    pub fn layer(&self) -> Expr<i32> {
        self.ids[0]
    }
    /// The row of the current point (0 below 2-D).
    pub fn row(&self) -> Expr<i32> {
        self.ids[1]
    }
    /// The column of the current point (0 for 0-D).
    pub fn column(&self) -> Expr<i32> {
        self.ids[2]
    }
    /// The operator's layers (Cog's `_layers`).
    pub fn layers(&self) -> Expr<i32> {
        self.dims[0]
    }
    /// The operator's rows (Cog's `_rows`).
    pub fn rows(&self) -> Expr<i32> {
        self.dims[1]
    }
    /// The operator's columns (Cog's `_columns`).
    pub fn columns(&self) -> Expr<i32> {
        self.dims[2]
    }
    /// The operator's shape (the work size: one work-item per point).
    pub fn shape(&self) -> Shape {
        self.threads
    }
    /// Whether the current work-item has a point of the operator's shape (the work size is
    /// rounded up to whole work-groups; eager operators run their body on every work-item).
    pub fn in_shape(&self) -> Expr<bool> {
        self.inside
    }
    /// The work-item's position in its work-group along `axis` (0 layers, 1 rows, 2 columns;
    /// Cog's `_localRow`, `_localColumn`).
    pub fn local(&self, axis: usize) -> Expr<i32> {
        local_id((2 - axis.min(2)) as u8).cast::<i32>()
    }
    /// The work-group's size along `axis` (Cog's `_localRows`, `_localColumns`).
    pub fn local_dim(&self, axis: usize) -> Expr<i32> {
        local_size((2 - axis.min(2)) as u8).cast::<i32>()
    }
    /// The work-group's position along `axis` (Cog's `_groupRow`, `_groupColumn`).
    pub fn group(&self, axis: usize) -> Expr<i32> {
        group_id((2 - axis.min(2)) as u8).cast::<i32>()
    }
    /// A local-memory array of `len` tensors shared by the work-group (Cog's
    /// `_local(_tensorArray(..))`); use [`barrier`](crate::builder::barrier) between writing and
    /// reading it. Eager operators only (a lazy one may be fused into another kernel).
    pub fn local_array<T: Value>(&mut self, name: &str, len: u32) -> LocalArray<T> {
        if self.mode == Mode::Lazy {
            self.fail(FieldError {
                op: "local_array",
                detail: "local memory needs barriers, which a lazy (fusable) operator cannot have; use Fields::operator".into(),
            }.into());
        }
        self.kd.local_array::<T>(name, len)
    }
}

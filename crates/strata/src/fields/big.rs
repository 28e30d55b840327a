//! Fields of big tensors ([`BigField`]): more than 4 scalars per point (a 5 x 5 matrix, a
//! 32-bin histogram), too many to hold as one value, so operators process them element by
//! element. A big operator ([`Fields::big_op`]) is Cog's `_forEachTensorElement`: its body is
//! recorded once as the body of a device loop over the output tensor's elements (the only
//! statement of the operator, which is Cog's rule by construction), with the element index
//! (Cog's `_tensorElement`, row-major) as an argument. Reads of big fields are element reads
//! ([`Point::read_element`], [`Point::read_element_at`]; Cog's `_readTensorElement`), also
//! allowed in small-tensor operators. A lazy big field read at the current point and element is
//! fused into its reader like a small one; read elsewhere, it is materialized first.

use super::point::Point;
use super::{Border, FieldError, Fields, Shape, State, Tensor};
use crate::builder::{for_range, if_, lit, select, Expr};
use crate::error::Result;
use crate::{Buffer, Device, Event};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

type BigOp<T> = Arc<dyn Fn(&mut Point, Expr<u32>) -> Expr<T> + Send + Sync>;

type BigState<T> = State<T, BigOp<T>>;

struct BigNode<T> {
    shape: Shape,
    tensor: Vec<usize>,
    fx: Fields,
    state: Mutex<BigState<T>>,
}

/// A field of big tensors: a [`Shape`] of points, each holding a tensor of `tensor_shape`
/// scalars `T` (row-major), stored point by point. Clones share the field.
pub struct BigField<T> {
    node: Arc<BigNode<T>>,
    id: u64,
}

impl<T> Clone for BigField<T> {
    fn clone(&self) -> Self {
        BigField {
            node: self.node.clone(),
            id: self.id,
        }
    }
}

impl<T> std::fmt::Debug for BigField<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &*self.node.state.lock().unwrap() {
            BigState::Data { .. } => "data".to_string(),
            BigState::Lazy { name, .. } => format!("lazy `{name}`"),
            BigState::Failed(e) => format!("failed: {e}"),
        };
        write!(
            f,
            "BigField({}, tensors {:?}, {kind})",
            self.node.shape, self.node.tensor
        )
    }
}

/// The elements per tensor of `tensor`, checked: at least one, and the elements of all the
/// field's points addressable with 32-bit indices (no product wraps).
fn check_tensor(op: &'static str, shape: Shape, tensor: &[usize]) -> Result<usize> {
    let fail = |detail: String| -> Result<usize> { Err(FieldError { op, detail }.into()) };
    let Some(n) = tensor.iter().try_fold(1usize, |a, &d| a.checked_mul(d)) else {
        return fail(format!(
            "the tensor shape {tensor:?} has more elements than a `usize` holds"
        ));
    };
    if tensor.is_empty() || n == 0 {
        return fail(format!("the tensor shape {tensor:?} has no elements"));
    }
    match shape.points().checked_mul(n) {
        Some(total) if total <= u32::MAX as usize => Ok(n),
        _ => fail(format!(
            "the field is {shape} with {n} elements per tensor, more than 2^32 - 1 elements (big-field indices are 32-bit)"
        )),
    }
}

impl Fields {
    /// A field of big tensors of `tensor_shape` per point of `shape`, from `data`: the points in
    /// row-major order, each point's tensor elements in row-major order.
    pub fn big_from_slice<T: Tensor>(
        &self,
        shape: Shape,
        tensor_shape: &[usize],
        data: &[T],
    ) -> Result<BigField<T>> {
        shape.check("Fields::big_from_slice")?;
        let k = check_tensor("Fields::big_from_slice", shape, tensor_shape)?;
        if data.len() != shape.points() * k {
            return Err(FieldError {
                op: "Fields::big_from_slice",
                detail: format!(
                    "the field is {shape} with {k} elements per tensor, {} values, but {} were given",
                    shape.points() * k,
                    data.len()
                ),
            }.into());
        }
        let buf = Buffer::from_slice(&self.queue, data)?;
        Ok(BigField::with_state(
            self,
            shape,
            tensor_shape,
            BigState::Data { buf, ready: None },
        ))
    }

    /// A lazy big-tensor operator (Cog's `_forEachTensorElement`): one work-item per point of
    /// `shape`, looping over the elements of a `tensor_shape` tensor; `f` gets the point and the
    /// element index (`_tensorElement`, row-major) and returns that element.
    pub fn big_op<T: Tensor>(
        &self,
        name: &str,
        shape: Shape,
        tensor_shape: &[usize],
        f: impl Fn(&mut Point, Expr<u32>) -> Expr<T> + Send + Sync + 'static,
    ) -> BigField<T> {
        let state = match shape
            .check("Fields::big_op")
            .and_then(|()| check_tensor("Fields::big_op", shape, tensor_shape))
        {
            Ok(_) => BigState::Lazy {
                name: name.to_string(),
                op: Arc::new(f),
            },
            Err(e) => BigState::Failed(e),
        };
        BigField::with_state(self, shape, tensor_shape, state)
    }
}

impl<T: Tensor> BigField<T> {
    fn with_state(fx: &Fields, shape: Shape, tensor: &[usize], state: BigState<T>) -> BigField<T> {
        BigField {
            node: Arc::new(BigNode {
                shape,
                tensor: tensor.to_vec(),
                fx: fx.clone(),
                state: Mutex::new(state),
            }),
            id: super::NEXT_NODE.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The shape of the field (its points).
    pub fn shape(&self) -> Shape {
        self.node.shape
    }

    /// The shape of each point's tensor.
    pub fn tensor_shape(&self) -> &[usize] {
        &self.node.tensor
    }

    /// Scalars per tensor (`usize::MAX` for a tensor shape too large, which is refused).
    pub fn tensor_elements(&self) -> usize {
        self.node
            .tensor
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .unwrap_or(usize::MAX)
    }

    /// The device the field lives on.
    pub fn device(&self) -> &Device {
        self.node.fx.device()
    }

    /// The context the field was made in.
    pub fn fields(&self) -> &Fields {
        &self.node.fx
    }

    /// Runs the field into a buffer if lazy (enqueued); the buffer and its kernel's event.
    fn materialize(&self) -> Result<(Buffer<T>, Option<Event>)> {
        let (name, op) = match BigState::pending(&self.node.state)? {
            Ok(ready) => return Ok(ready),
            Err(lazy) => lazy,
        };
        let (shape, k) = (self.shape(), self.tensor_elements() as u32);
        let fx = &self.node.fx;
        // Not zeroed: the kernel stores every element of every point, unless the operator's
        // recording returns early or leaves a loop somewhere (then zeroed first, on the
        // queue).
        let out = Buffer::<T>::overwritten(&fx.queue, shape.points() * k as usize)?;
        let result = super::point::run_kernel(
            fx,
            &super::kernel_name(&name),
            shape,
            None,
            |p| {
                let o = p.output_param(&out);
                let (inside, lin) = (p.inside(), p.linear());
                if_(inside, || {
                    // `_forEachTensorElement`: the operator's only statement.
                    for_range(0u32, k, |e| {
                        let v = op(p, e);
                        o.set(lin * k + e, v);
                    });
                });
            },
            |c| match c.returns || c.breaks {
                true => super::zero_fill(fx, &out),
                false => Ok(()),
            },
        );
        BigState::settle(&self.node.state, out, result)
    }

    /// Runs the field if lazy (enqueued) and returns it, now data.
    pub fn eval(&self) -> Result<BigField<T>> {
        self.materialize()?;
        Ok(self.clone())
    }

    /// The tensors on the host: points in row-major order, each tensor's elements in row-major
    /// order.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let (buf, ready) = self.materialize()?;
        if let Some(e) = ready {
            e.wait()?;
        }
        self.node.fx.queue.read(&buf)
    }

    /// A lazy element-wise operator: `f` of each element (the same tensor shape).
    pub fn map<U: Tensor>(
        &self,
        f: impl Fn(Expr<T>) -> Expr<U> + Send + Sync + 'static,
    ) -> BigField<U> {
        let a = self.clone();
        self.node
            .fx
            .big_op("big_map", self.shape(), self.tensor_shape(), move |p, e| {
                f(p.read_element(&a, e))
            })
    }
}

impl Point<'_> {
    fn big_checks<T: Tensor>(&mut self, op: &'static str, f: &BigField<T>) -> bool {
        self.same_device(op, f.device())
    }

    /// Element `e` (row-major) of the big tensor of `f` at the current point (Cog's
    /// `_readTensorElement(f, e)`): `f` must have the operator's shape. A lazy `f` is fused here
    /// when the context's fusion is on. An element past the tensor reads the last element.
    pub fn read_element<T: Tensor>(&mut self, f: &BigField<T>, e: impl Into<Expr<u32>>) -> Expr<T> {
        let e = e.into();
        if !self.big_checks("read_element", f) {
            return T::zero();
        }
        if f.shape() != self.threads() {
            self.fail(FieldError {
                op: "read_element",
                detail: format!(
                    "implicit addressing reads a field at the operator's own point, so the field must have the operator's shape: the field is {}, the operator runs over {}; use read_element_at",
                    f.shape(),
                    self.threads()
                ),
            }.into());
            return T::zero();
        }
        let lazy = match &*f.node.state.lock().unwrap() {
            BigState::Lazy { op, .. } => Some(op.clone()),
            _ => None,
        };
        if let (Some(op), true) = (lazy, self.fusing()) {
            return op(self, e);
        }
        let k = f.tensor_elements() as u32;
        let Some(param) = self.param_of(f.materialize()) else {
            return T::zero();
        };
        param.at(self.read_linear() * k + e.min(lit(k - 1)))
    }

    /// Element `e` of the big tensor of `f` at absolute coordinates (one per dimension of `f`,
    /// outermost first), with `border` outside `f` (Cog's `_readTensorElement(f, row, column,
    /// e)`). A lazy `f` is materialized first.
    pub fn read_element_at<T: Tensor>(
        &mut self,
        f: &BigField<T>,
        coords: &[Expr<i32>],
        e: impl Into<Expr<u32>>,
        border: Border,
    ) -> Expr<T> {
        let e = e.into();
        if !self.big_checks("read_element_at", f) {
            return T::zero();
        }
        let Some(c) = self.full_coords("read_element_at", f.shape(), "field", coords) else {
            return T::zero();
        };
        let k = f.tensor_elements() as u32;
        let Some(param) = self.param_of(f.materialize()) else {
            return T::zero();
        };
        let (idx, inside) = self.border_index(f.shape(), c, border);
        let v = param.at(idx * k + e.min(lit(k - 1)));
        match inside {
            Some(inside) => select(inside, v, T::zero()),
            None => v,
        }
    }

    /// Element `e` of the big tensor of `f` at the current point moved by `offset` (one per
    /// dimension), with `border` outside `f`.
    pub fn read_element_rel<T: Tensor>(
        &mut self,
        f: &BigField<T>,
        offset: &[i32],
        e: impl Into<Expr<u32>>,
        border: Border,
    ) -> Expr<T> {
        let Some(off) = self.full_offset("read_element_rel", f.shape(), offset) else {
            return T::zero();
        };
        let nd = f.shape().ndim();
        let ids = self.ids();
        let coords: Vec<Expr<i32>> = (3 - nd..3).map(|d| ids[d] + off[d]).collect();
        self.read_element_at(f, &coords, e, border)
    }
}

//! Eager field operators ([`Operator`]): several outputs of their own shapes and tensor types,
//! explicit thread allocation (Cog's `_globalThreads` and `_localThreads`), local memory and
//! barriers, and non-local writes. Lazy fields they read at the current point are still fused
//! into them; their outputs are data.
//!
//! Outputs are allocated when the operator runs, zero where nothing writes (an output that a
//! `write` at the top of the body stores at every point, with no `return_` anywhere, is not
//! zeroed first: the kernel overwrites all of it). The default
//! work-group is 64 work-items in 1-D, 8 x 32 in 2-D (on a CPU device, for a body that does
//! not read local or group ids or sizes, use local memory or barriers: row strips of at
//! most 256 columns, `super::row_groups`) and 2 x 4 x 32 in 3-D. The body is
//! recorded without the in-bounds guard, so that barriers and local memory work; implicit
//! reads by the work-items that the rounding up adds are clamped to the nearest point, and
//! writes are guarded (`write` at the point, `write_at` anywhere inside the output).

use super::point::{run_kernel_mode, Mode};
use super::{Field, FieldError, Fields, Point, Shape, Tensor};
use crate::error::Result;
use crate::Buffer;
use std::any::Any;
use std::marker::PhantomData;

/// Names output number `index` of an [`Operator`], with its tensor type (Cog's `_out0`, ...).
pub struct Out<T> {
    pub(crate) index: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Out<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Out<T> {}

type Alloc = Box<dyn Fn(&Fields, Shape) -> Result<Box<dyn Any>>>;
type Declare = Box<dyn Fn(&mut Point, Shape, &dyn Any)>;
/// Zeroes an output's buffer on the queue (one the kernel may not write in full).
type Zero = Box<dyn Fn(&Fields, &dyn Any) -> Result<()>>;

/// An eager operator: a kernel over a thread shape (one work-item per point; the work size
/// rounded up to whole work-groups) that writes outputs.
///
/// ```
/// use strata::fields::{Fields, Shape};
/// use strata::prelude::*;
/// # fn main() -> strata::Result<()> {
/// let fx = Fields::new(&Queue::new(&Device::from_spec("cpu")?)?);
/// let x = fx.from_slice(Shape::d1(4), &[1.0f32, 2.0, 3.0, 4.0])?;
/// // Cog's halfDouble: one input, two outputs
/// let mut op = fx.operator("half_double", x.shape());
/// let (half, double) = (op.output::<f32>(x.shape()), op.output::<f32>(x.shape()));
/// let outs = op.run(|p| {
///     let v = p.read(&x);
///     p.write(half, v * 0.5f32);
///     p.write(double, v * 2.0f32);
/// })?;
/// assert_eq!(outs.get(half)?.to_vec()?, vec![0.5, 1.0, 1.5, 2.0]);
/// assert_eq!(outs.get(double)?.to_vec()?, vec![2.0, 4.0, 6.0, 8.0]);
/// # Ok(())
/// # }
/// ```
pub struct Operator {
    fx: Fields,
    name: String,
    threads: Shape,
    local: Option<Vec<usize>>,
    outputs: Vec<(Shape, Alloc, Declare, Zero)>,
}

impl Operator {
    pub(crate) fn new(fx: &Fields, name: &str, threads: Shape) -> Operator {
        Operator {
            fx: fx.clone(),
            name: name.to_string(),
            threads,
            local: None,
            outputs: Vec::new(),
        }
    }

    /// Adds an output field of `shape` and tensor type `T` (zero where nothing writes it).
    pub fn output<T: Tensor>(&mut self, shape: Shape) -> Out<T> {
        let alloc: Alloc = Box::new(|fx: &Fields, shape: Shape| {
            shape.check("Operator::output")?;
            // Zeroed after the recording, unless the kernel writes every point of it.
            let b = Buffer::<T>::overwritten(fx.queue(), shape.points())?;
            Ok(Box::new(b) as Box<dyn Any>)
        });
        let zero: Zero = Box::new(
            |fx: &Fields, b: &dyn Any| match b.downcast_ref::<Buffer<T>>() {
                Some(b) => super::zero_fill(fx, b),
                None => Ok(()),
            },
        );
        let declare: Declare = Box::new(|p: &mut Point, shape: Shape, b: &dyn Any| {
            if let Some(b) = b.downcast_ref::<Buffer<T>>() {
                p.declare_output::<T>(shape, b);
            }
        });
        self.outputs.push((shape, alloc, declare, zero));
        Out {
            index: self.outputs.len() - 1,
            _t: PhantomData,
        }
    }

    /// The work-group shape, outermost first, one size per dimension of the thread shape (Cog's
    /// `_localThreads`). The default is 64 in 1-D, 8 x 32 in 2-D (on a CPU device, for a
    /// body that cannot see its work-group, row strips of at most 256 work-items) and 2 x 4 x 32
    /// in 3-D.
    pub fn local_threads(mut self, dims: &[usize]) -> Operator {
        self.local = Some(dims.to_vec());
        self
    }

    /// Runs over `shape` instead of the shape given at creation (Cog's `_globalThreads`).
    pub fn global_threads(mut self, shape: Shape) -> Operator {
        self.threads = shape;
        self
    }

    /// Records `body` once (it runs on every work-item, including those of the rounded-up work
    /// size, so barriers are allowed; [`Point::in_shape`] tells them apart; implicit reads of
    /// those work-items read the nearest point) and runs the kernel. Fails with
    /// [`FieldError`] for a local size that does not match the thread shape, and with the
    /// first error recorded by the body.
    pub fn run(self, body: impl FnOnce(&mut Point)) -> Result<Outputs> {
        self.threads.check("Operator::run")?;
        if let Some(l) = &self.local {
            if l.len() != self.threads.ndim() || l.contains(&0) {
                return Err(FieldError {
                    op: "Operator::local_threads",
                    detail: format!(
                        "the work-group shape {l:?} needs one non-zero size per dimension of the thread shape {}",
                        self.threads
                    ),
                }.into());
            }
        }
        let mut bufs = Vec::with_capacity(self.outputs.len());
        for (shape, alloc, _, _) in &self.outputs {
            bufs.push((*shape, alloc(&self.fx, *shape)?));
        }
        let makers: Vec<&Box<dyn Any>> = bufs.iter().map(|(_, b)| b).collect();
        let declare = |p: &mut Point| {
            for ((shape, _, declare, _), b) in self.outputs.iter().zip(&makers) {
                declare(p, *shape, b.as_ref());
            }
        };
        let event = run_kernel_mode(
            &self.fx,
            &super::kernel_name(&self.name),
            self.threads,
            self.local.as_deref(),
            Mode::Eager,
            |p| {
                declare(p);
                body(p);
            },
            // Zero where nothing writes: each output the kernel does not write in full.
            |c| {
                for (i, ((_, _, _, zero), b)) in self.outputs.iter().zip(&makers).enumerate() {
                    if !c.writes_all(i) {
                        zero(&self.fx, b.as_ref())?;
                    }
                }
                Ok(())
            },
        )?;
        Ok(Outputs {
            fx: self.fx.clone(),
            bufs,
            event,
        })
    }
}

/// The outputs of an [`Operator`] run.
pub struct Outputs {
    fx: Fields,
    bufs: Vec<(Shape, Box<dyn Any>)>,
    event: crate::Event,
}

impl Outputs {
    /// Output `out` as a field (data, written by the operator's kernel).
    pub fn get<T: Tensor>(&self, out: Out<T>) -> Result<Field<T>> {
        let found = self
            .bufs
            .get(out.index)
            .and_then(|(s, b)| b.downcast_ref::<Buffer<T>>().map(|b| (*s, b.clone())));
        match found {
            Some((shape, buf)) => Ok(Field::from_buffer_unchecked(
                &self.fx,
                shape,
                buf,
                Some(self.event.clone()),
            )),
            None => Err(FieldError {
                op: "Outputs::get",
                detail: format!(
                    "output {} does not belong to this operator (or has another tensor type)",
                    out.index
                ),
            }
            .into()),
        }
    }

    /// The event of the operator's kernel.
    pub fn event(&self) -> &crate::Event {
        &self.event
    }
}

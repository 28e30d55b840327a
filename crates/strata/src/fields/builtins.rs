//! Built-in field operations: element-wise arithmetic (`+ - * /` between fields, all lazy and
//! fusable), reductions over a whole field (through [`crate::patterns`]) and along an axis,
//! convolution with a small kernel, transpose, and up- and down-sampling. The math set is
//! [`Field::map`] with the builder's built-ins (`f.map(|x| x.sqrt())`).
//!
//! A whole-field reduction materializes the field and runs the patterns' reduction on its
//! buffer (`DeviceVec::from_buffer`, no copy). `fold_axis` is a device loop over the folded
//! axis with absolute reads; `convolve` takes its weights as literals, one relative read per
//! weight, unrolled when the kernel is built.

use super::{same_shape, Border, Field, FieldError, Shape, State, Tensor};
use crate::builder::{for_range, var, Expr, Numeric};
use crate::error::Result;
use crate::patterns::{DeviceVec, Exec, View};
use std::ops::{Add, Div, Mul, Sub};

macro_rules! field_op {
    ($Tr:ident, $m:ident, $name:literal) => {
        impl<T: Tensor> $Tr<&Field<T>> for &Field<T>
        where
            Expr<T>: $Tr<Expr<T>, Output = Expr<T>>,
        {
            type Output = Field<T>;
            /// Point-wise, lazy; fields of different shapes give a field that fails with
            /// [`FieldError`] when evaluated.
            fn $m(self, r: &Field<T>) -> Field<T> {
                if let Err(e) = same_shape($name, self.shape(), r.shape()) {
                    return Field::with_state(self.fields(), self.shape(), State::Failed(e));
                }
                let (a, b) = (self.clone(), r.clone());
                self.fields().op($name, self.shape(), move |p| {
                    let (x, y) = (p.read(&a), p.read(&b));
                    x.$m(y)
                })
            }
        }
    };
}
field_op!(Add, add, "add");
field_op!(Sub, sub, "sub");
field_op!(Mul, mul, "mul");
field_op!(Div, div, "div");

/// Which whole-field reduction.
#[derive(Clone, Copy)]
enum Reduction {
    Sum,
    Min,
    Max,
}

impl<T: Tensor + Numeric> Field<T> {
    fn reduce_all(&self, how: Reduction) -> Result<T> {
        let buf = self.buffer()?;
        let ex = Exec::new(self.fields().queue());
        let v = DeviceVec::from_buffer(&ex, buf)?;
        let r = match how {
            Reduction::Sum => Some(v.sum(&ex)?),
            Reduction::Min => v.min(&ex)?,
            Reduction::Max => v.max(&ex)?,
        };
        // A field has at least one point, so min and max exist.
        r.ok_or_else(|| {
            FieldError {
                op: "Field::min/max",
                detail: "the field is empty".into(),
            }
            .into()
        })
    }

    /// The sum of every tensor of a scalar field (a float sum is a sum in some association
    /// order; see [`crate::patterns`]).
    pub fn sum(&self) -> Result<T> {
        self.reduce_all(Reduction::Sum)
    }

    /// The smallest tensor of a scalar field.
    pub fn min(&self) -> Result<T> {
        self.reduce_all(Reduction::Min)
    }

    /// The largest tensor of a scalar field.
    pub fn max(&self) -> Result<T> {
        self.reduce_all(Reduction::Max)
    }
}

impl<T: Tensor> Field<T> {
    fn fail<U: Tensor>(&self, shape: Shape, op: &'static str, detail: String) -> Field<U> {
        Field::with_state(
            self.fields(),
            shape,
            State::Failed(FieldError { op, detail }.into()),
        )
    }

    /// Folds dimension `axis` (0 is the outermost) away: a lazy field of one dimension fewer
    /// whose tensor at each point is `combine` folded over the line along `axis`, in order,
    /// from the first tensor of the line. The source is read non-locally, so a lazy source
    /// is materialized first.
    pub fn fold_axis(
        &self,
        name: &str,
        axis: usize,
        combine: impl Fn(Expr<T>, Expr<T>) -> Expr<T> + Send + Sync + 'static,
    ) -> Field<T> {
        let shape = self.shape();
        let nd = shape.ndim();
        if axis >= nd {
            return self.fail(
                shape,
                "fold_axis",
                format!("a {shape} field has no axis {axis} (axes count from 0, outermost first)"),
            );
        }
        let mut dims = shape.dims();
        let n = dims.remove(axis);
        let out = match Shape::new(&dims) {
            Ok(s) => s,
            Err(e) => return Field::with_state(self.fields(), shape, State::Failed(e)),
        };
        let src = self.clone();
        self.fields().op(name, out, move |p| {
            // Coordinates of the output point, outermost first, with the folded axis inserted.
            let own: Vec<Expr<i32>> = [p.layer(), p.row(), p.column()][3 - (nd - 1)..].to_vec();
            let at = |k: Expr<i32>| {
                let mut c = own.clone();
                c.insert(axis, k);
                c
            };
            let first = p.read_at(&src, &at(crate::builder::lit(0i32)), Border::Clamp);
            let acc = var(first);
            for_range(1i32, n as i32, |k| {
                let v = p.read_at(&src, &at(k), Border::Clamp);
                acc.set(combine(acc.get(), v));
            });
            acc.get()
        })
    }

    /// The sum along `axis` (lazy; see [`Field::fold_axis`]).
    pub fn sum_axis(&self, axis: usize) -> Field<T> {
        self.fold_axis("sum_axis", axis, |a, b| a + b)
    }

    /// The smallest tensor along `axis`, element by element (lazy).
    pub fn min_axis(&self, axis: usize) -> Field<T> {
        self.fold_axis("min_axis", axis, |a, b| a.min(b))
    }

    /// The largest tensor along `axis`, element by element (lazy).
    pub fn max_axis(&self, axis: usize) -> Field<T> {
        self.fold_axis("max_axis", axis, |a, b| a.max(b))
    }

    /// The transpose of a 2-D field (rows become columns; lazy).
    pub fn transpose(&self) -> Field<T> {
        let shape = self.shape();
        if shape.ndim() != 2 {
            return self.fail(
                shape,
                "transpose",
                format!("transpose needs a 2-D field, not {shape}"),
            );
        }
        let src = self.clone();
        self.fields().op(
            "transpose",
            Shape::d2(shape.columns(), shape.rows()),
            move |p| {
                let (r, c) = (p.row(), p.column());
                p.read_at(&src, &[c, r], Border::Clamp)
            },
        )
    }

    /// Every `factor`-th point along each dimension, starting at 0 (lazy; a dimension of `n`
    /// points gives `ceil(n / factor)`).
    pub fn downsample(&self, factor: usize) -> Field<T> {
        self.resample("downsample", factor, true)
    }

    /// Each point repeated `factor` times along each dimension (nearest neighbour; lazy).
    pub fn upsample(&self, factor: usize) -> Field<T> {
        self.resample("upsample", factor, false)
    }

    fn resample(&self, name: &'static str, factor: usize, down: bool) -> Field<T> {
        let shape = self.shape();
        if factor == 0 {
            return self.fail(shape, name, "the factor must be at least 1".into());
        }
        let mut dims = Vec::new();
        for d in shape.dims() {
            match if down {
                Some(d.div_ceil(factor))
            } else {
                d.checked_mul(factor)
            } {
                Some(n) => dims.push(n),
                None => {
                    let detail = format!(
                        "a dimension of {d} points times the factor {factor} is more points than a `usize` holds"
                    );
                    return self.fail(shape, name, detail);
                }
            }
        }
        let out = match Shape::new(&dims).and_then(|s| s.check(name).map(|()| s)) {
            Ok(s) => s,
            Err(e) => return Field::with_state(self.fields(), shape, State::Failed(e)),
        };
        let src = self.clone();
        let nd = shape.ndim();
        // A valid upsampled shape bounds the factor by 2^31 - 1; downsampling by more than a
        // dimension reads its point 0 only.
        let f = factor.min(i32::MAX as usize) as i32;
        self.fields().op(name, out, move |p| {
            let c: Vec<Expr<i32>> = [p.layer(), p.row(), p.column()][3 - nd..]
                .iter()
                .map(|&x| if down { x * f } else { x / f })
                .collect();
            p.read_at(&src, &c, Border::Clamp)
        })
    }
}

impl<T: Tensor> Field<T> {
    /// Convolution (correlation, as image filters are written) of a 1-, 2- or 3-D field with
    /// a small kernel of weights, `kernel_dims` outermost first (odd sizes, centred), weights
    /// row-major: the result at `x` is the sum over `k` of `weights[k] * self[x + k - centre]`,
    /// `border` outside the field (lazy; the source is read non-locally, so a lazy source is
    /// materialized first). The weights are compile-time constants of the kernel.
    pub fn convolve(&self, kernel_dims: &[usize], weights: &[T::Elem], border: Border) -> Field<T> {
        let shape = self.shape();
        let nd = shape.ndim();
        // The weights' count, checked: a product that wraps matches no slice.
        let n = kernel_dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d));
        if kernel_dims.len() != nd
            || nd == 0
            || kernel_dims.iter().any(|&d| d % 2 == 0)
            || n != Some(weights.len())
        {
            return self.fail(
                shape,
                "convolve",
                format!(
                    "a convolution of a {shape} field needs {nd} odd kernel sizes and their product of weights; got sizes {kernel_dims:?} and {} weights",
                    weights.len()
                ),
            );
        }
        let src = self.clone();
        let kd = kernel_dims.to_vec();
        let w = weights.to_vec();
        self.fields().op("convolve", shape, move |p| {
            let mut acc: Option<Expr<T>> = None;
            for (k, &wk) in w.iter().enumerate() {
                // Offsets of weight k, outermost first.
                let mut off = vec![0i32; nd];
                let mut rest = k;
                for d in (0..nd).rev() {
                    off[d] = (rest % kd[d]) as i32 - (kd[d] / 2) as i32;
                    rest /= kd[d];
                }
                let v = T::scale(p.read_rel(&src, &off, border), crate::builder::lit(wk));
                acc = Some(match acc {
                    None => v,
                    Some(a) => a + v,
                });
            }
            acc.unwrap_or_else(T::zero)
        })
    }
}

//! Total-variation denoising on fields: the Rudin–Osher–Fatemi (ROF) model solved by
//! Chambolle's projection algorithm (A. Chambolle, "An algorithm for total variation
//! minimization and applications", 2004), the image-denoising benchmark of the PACXX paper
//! (FlexBox). Written once with field operators; how many kernels an iteration takes is
//! the [`Fields`](super::Fields) context's business: two with fusion (the divergence ends where
//! the gradient reads it at neighbours), nine without.
//!
//! With `f` the noisy image and `λ > 0` the weight of the data term, ROF minimizes
//! `|u - f|² / (2λ) + TV(u)`; Chambolle iterates on the dual field `p` (one 2-vector per pixel,
//! `p⁰ = 0`, `0 < τ ≤ 1/4`):
//!
//! ```text
//! v      = div pⁿ - f / λ
//! pⁿ⁺¹   = (pⁿ + τ ∇v) / (1 + τ |∇v|)
//! u      = f - λ div p
//! ```
//!
//! `∇` is forward differences (0 at the last column and row), `div` its negative adjoint,
//! backward differences with `p` taken as 0 outside the image. Component 0 of `p` is along the
//! columns (x), component 1 along the rows (y).

use super::{Border, Field};
use crate::builder::{lit, vec2};
use crate::error::{Error, Result};

/// The forward-difference gradient of a 2-D field: `[u(r, c+1) - u(r, c), u(r+1, c) - u(r, c)]`,
/// 0 across the last column and row (lazy; reads `u` at neighbours).
pub fn gradient(u: &Field<f32>) -> Field<[f32; 2]> {
    let (fx, shape, u) = (u.fields().clone(), u.shape(), u.clone());
    fx.op("gradient", shape, move |p| {
        let c = p.read(&u);
        let right = p.read_rel(&u, &[0, 1], Border::Clamp);
        let down = p.read_rel(&u, &[1, 0], Border::Clamp);
        vec2(right - c, down - c)
    })
}

/// The divergence of a 2-D vector field, the negative adjoint of [`gradient`]: backward
/// differences `p.x(r, c) - p.x(r, c-1) + p.y(r, c) - p.y(r-1, c)` with `p` zero outside (lazy;
/// reads `p` at neighbours). Exact as the adjoint when `p.x` is 0 on the last column and `p.y`
/// on the last row, which Chambolle's iteration keeps.
pub fn divergence(p: &Field<[f32; 2]>) -> Field<f32> {
    let q = p.clone();
    p.fields().op("divergence", p.shape(), move |pt| {
        let here = pt.read(&q);
        let left = pt.read_rel(&q, &[0, -1], Border::Zero);
        let up = pt.read_rel(&q, &[-1, 0], Border::Zero);
        (here.x() - left.x()) + (here.y() - up.y())
    })
}

fn check(f: &Field<f32>, lambda: f32, tau: f32) -> Result<()> {
    if f.shape().ndim() != 2 {
        return Err(Error::Field {
            op: "rof",
            detail: format!("ROF denoises 2-D fields, not {}", f.shape()),
        });
    }
    if !(lambda > 0.0 && tau > 0.0 && tau <= 0.25) {
        return Err(Error::Field {
            op: "rof",
            detail: format!(
                "λ must be positive and 0 < τ ≤ 1/4 for the iteration to converge; got λ = {lambda}, τ = {tau}"
            ),
        });
    }
    Ok(())
}

/// One iteration of Chambolle's algorithm: the next dual field from `p` (lazy; see the module
/// docs). Each operation is an operator of its own, so the context's fusion decides the kernels.
pub fn rof_step(f: &Field<f32>, p: &Field<[f32; 2]>, lambda: f32, tau: f32) -> Field<[f32; 2]> {
    let v = &divergence(p) - &f.map(move |x| x / lambda);
    let g = gradient(&v);
    let norm = g.map(|g| g.length());
    let num = p + &g.map(move |g| g * lit(tau));
    let den = norm.map(move |n| n * tau + 1.0f32);
    num.zip_map(&den, |a, d| a / d)
}

/// The denoised image from the dual field: `u = f - λ div p` (lazy).
pub fn rof_output(f: &Field<f32>, p: &Field<[f32; 2]>, lambda: f32) -> Field<f32> {
    f - &divergence(p).map(move |d| d * lambda)
}

/// Denoises the 2-D field `f` with `iterations` of Chambolle's algorithm (the kernels are
/// enqueued; the result is lazy: `u = f - λ div p`). Fails with [`Error::Field`] for a field
/// that is not 2-D or parameters outside `λ > 0`, `0 < τ ≤ 1/4`.
pub fn rof(f: &Field<f32>, lambda: f32, tau: f32, iterations: usize) -> Result<Field<f32>> {
    check(f, lambda, tau)?;
    let mut p = f.fields().zeros::<[f32; 2]>(f.shape())?;
    for _ in 0..iterations {
        p = rof_step(f, &p, lambda, tau).eval()?;
    }
    Ok(rof_output(f, &p, lambda))
}

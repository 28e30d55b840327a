//! Total-variation denoising on fields: the Rudin–Osher–Fatemi (ROF) model solved by
//! Chambolle's projection algorithm (A. Chambolle, "An algorithm for total variation
//! minimization and applications", 2004), the image-denoising benchmark of the PACXX paper
//! (FlexBox). Written once with field operators; how many kernels an iteration takes is
//! the `Fields` context's business: two with fusion (the divergence ends where the gradient
//! reads it at neighbours), twelve without.
//!
//! An application of strata's fields, not part of the library: `strata bench`'s `rof_fused` /
//! `rof_unfused` use it (crates/strata-cli/src/bench/fields.rs), and the `rof` example
//! includes this file (`#[path = "../../strata-cli/src/bench/fields/denoise.rs"] mod
//! denoise;`). It lives here, in the published strata-cli crate, so that crate is complete
//! on its own; the examples crate is not published.
//!
//! With `f` the noisy image and `λ > 0` the weight of the data term, ROF minimizes
//! `|u - f|² / (2λ) + TV(u)`; Chambolle iterates on the dual field `p = (px, py)` (`p⁰ = 0`,
//! `0 < τ ≤ 1/4`):
//!
//! ```text
//! v      = div pⁿ - f / λ
//! pⁿ⁺¹   = (pⁿ + τ ∇v) / (1 + τ |∇v|)
//! u      = f - λ div p
//! ```
//!
//! `∇` is forward differences (0 at the last column and row), `div` its negative adjoint,
//! backward differences with `p` taken as 0 outside the image. `px` is along the columns,
//! `py` along the rows. The components are scalar fields (not one field of 2-vectors) because
//! kernels of 32-bit scalars run four work-items per SIMD vector on the CPU backend; the update
//! writes both from one kernel, an `Operator` with two outputs.

use strata::fields::{Border, Field, FieldError};
use strata::Result;

/// The forward-difference gradient of a 2-D field: `u(r, c+1) - u(r, c)` and
/// `u(r+1, c) - u(r, c)`, 0 across the last column and row (lazy; they read `u` at neighbours).
pub fn gradient(u: &Field<f32>) -> (Field<f32>, Field<f32>) {
    let (fx, shape) = (u.fields().clone(), u.shape());
    let (a, b) = (u.clone(), u.clone());
    let gx = fx.op("gradient_x", shape, move |p| {
        p.read_rel(&a, &[0, 1], Border::Clamp) - p.read(&a)
    });
    let gy = fx.op("gradient_y", shape, move |p| {
        p.read_rel(&b, &[1, 0], Border::Clamp) - p.read(&b)
    });
    (gx, gy)
}

/// The divergence of a 2-D vector field given by components, the negative adjoint of
/// [`gradient`]: backward differences `px(r, c) - px(r, c-1) + py(r, c) - py(r-1, c)` with `p`
/// zero outside (lazy; reads `px` and `py` at neighbours). Exact as the adjoint when `px` is 0 on
/// the last column and `py` on the last row, which Chambolle's iteration keeps.
pub fn divergence(px: &Field<f32>, py: &Field<f32>) -> Field<f32> {
    let (x, y) = (px.clone(), py.clone());
    px.fields().op("divergence", px.shape(), move |p| {
        let dx = p.read(&x) - p.read_rel(&x, &[0, -1], Border::Zero);
        let dy = p.read(&y) - p.read_rel(&y, &[-1, 0], Border::Zero);
        dx + dy
    })
}

fn check(f: &Field<f32>, lambda: f32, tau: f32) -> Result<()> {
    if f.shape().ndim() != 2 {
        return Err(FieldError {
            op: "rof",
            detail: format!("ROF denoises 2-D fields, not {}", f.shape()),
        }
        .into());
    }
    if !(lambda > 0.0 && tau > 0.0 && tau <= 0.25) {
        return Err(FieldError {
            op: "rof",
            detail: format!(
                "λ must be positive and 0 < τ ≤ 1/4 for the iteration to converge; got λ = {lambda}, τ = {tau}"
            ),
        }.into());
    }
    Ok(())
}

/// One iteration of Chambolle's algorithm: the next dual field `(px, py)` (see the module
/// docs), enqueued. Each operation is an operator of its own, so the context's fusion decides
/// the kernels: 2 fused, 12 unfused.
pub fn rof_step(
    f: &Field<f32>,
    px: &Field<f32>,
    py: &Field<f32>,
    lambda: f32,
    tau: f32,
) -> Result<(Field<f32>, Field<f32>)> {
    let v = &divergence(px, py) - &f.map(move |x| x / lambda);
    let (gx, gy) = gradient(&v);
    let norm = gx.zip_map(&gy, |a, b| (a * a + b * b).sqrt());
    let den = norm.map(move |n| n * tau + 1.0f32);
    let nx = px + &gx.map(move |g| g * tau);
    let ny = py + &gy.map(move |g| g * tau);
    let shape = f.shape();
    let mut op = f.fields().operator("rof_update", shape);
    let (ox, oy) = (op.output::<f32>(shape), op.output::<f32>(shape));
    let outs = op.run(|p| {
        let d = p.read(&den);
        let (x, y) = (p.read(&nx), p.read(&ny));
        p.write(ox, x / d);
        p.write(oy, y / d);
    })?;
    Ok((outs.get(ox)?, outs.get(oy)?))
}

/// The denoised image from the dual field: `u = f - λ div p` (lazy).
pub fn rof_output(f: &Field<f32>, px: &Field<f32>, py: &Field<f32>, lambda: f32) -> Field<f32> {
    f - &divergence(px, py).map(move |d| d * lambda)
}

/// Denoises the 2-D field `f` with `iterations` of Chambolle's algorithm (the kernels are
/// enqueued; the result is lazy: `u = f - λ div p`). Fails with [`FieldError`] for a field
/// that is not 2-D or parameters outside `λ > 0`, `0 < τ ≤ 1/4`.
pub fn rof(f: &Field<f32>, lambda: f32, tau: f32, iterations: usize) -> Result<Field<f32>> {
    check(f, lambda, tau)?;
    let mut px = f.fields().zeros::<f32>(f.shape())?;
    let mut py = f.fields().zeros::<f32>(f.shape())?;
    for _ in 0..iterations {
        (px, py) = rof_step(f, &px, &py, lambda, tau)?;
    }
    Ok(rof_output(f, &px, &py, lambda))
}

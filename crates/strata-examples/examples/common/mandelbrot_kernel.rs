//! The Mandelbrot kernel shared by the `showcase` and `mandelbrot` examples (included with
//! `#[path]`; a file in a subfolder of `examples/` is no example of its own).

use strata::prelude::*;

/// Iterations until `z = z^2 + c` leaves the radius-2 disc (at most `max_iter`) for each pixel
/// of a `width x height` grid whose pixel `(px, py)` is `c = (x0 + px d, y0 + py d)`; one
/// work-item per pixel, over a 2-D range covering the grid.
#[kernel(name = "mandelbrot")]
pub fn mandelbrot_fn(
    #[write] iters: &mut [u32],
    width: u32,
    height: u32,
    x0: f32,
    y0: f32,
    d: f32,
    max_iter: u32,
) {
    let (px, py) = (global_id(0), global_id(1));
    if px < width && py < height {
        let cx = x0 + px as f32 * d;
        let cy = y0 + py as f32 * d;
        let mut zx = var(0.0f32);
        let mut zy = var(0.0f32);
        let mut it = var(0u32);
        while {
            let (x, y) = (zx, zy);
            it < max_iter && x * x + y * y <= 4.0f32
        } {
            let (x, y) = (zx, zy);
            zx = x * x - y * y + cx;
            zy = 2.0f32 * x * y + cy;
            it = it + 1u32;
        }
        iters[py * width + px] = it;
    }
}

//! The Mandelbrot set as a PNG picture, computed on the best device available.
//!
//! ```text
//! cargo run --release --example mandelbrot
//! cargo run --release --example mandelbrot -- --device cpu --size 800x600 --iters 500 --out m.png
//! ```
//!
//! One work-item per pixel counts the iterations of `z = z^2 + c` (the kernel is shared with
//! the showcase: `examples/common/mandelbrot_kernel.rs`); the host colours the counts and
//! writes the picture with the `png` crate (`examples/common/pictures.rs`, shared with the
//! showcase), then prints where it went.

#[cfg(test)]
#[path = "common/vulkan.rs"]
#[allow(clippy::duplicate_mod)] // tests/examples_checked.rs includes several examples
mod vulkan;

use std::path::PathBuf;
use std::time::Duration;
use strata::prelude::*;

#[path = "common/mandelbrot_kernel.rs"]
mod mandelbrot_kernel;
use mandelbrot_kernel::mandelbrot_fn;
#[path = "common/pictures.rs"]
mod pictures;
use pictures::{iteration_colours, write_png};

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

/// What to draw and where.
struct Options {
    device: String,
    size: (usize, usize),
    max_iter: u32,
    out: PathBuf,
}

fn parse_args() -> BoxResult<Options> {
    let mut o = Options {
        device: "best".into(),
        size: (1024, 768),
        max_iter: 256,
        out: PathBuf::from("mandelbrot.png"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--device" => o.device = value()?,
            "--size" => {
                let v = value()?;
                let (w, h) = v
                    .split_once('x')
                    .ok_or_else(|| format!("--size {v}: write WIDTHxHEIGHT"))?;
                o.size = (w.parse()?, h.parse()?);
            }
            "--iters" => o.max_iter = value()?.parse()?,
            "--out" => o.out = PathBuf::from(value()?),
            _ => {
                return Err(format!(
                    "unknown argument {a}; use --device SPEC, --size WxH, --iters N, --out FILE"
                )
                .into())
            }
        }
    }
    if o.size.0 == 0 || o.size.1 == 0 || o.max_iter == 0 {
        return Err("the size and the iteration count must not be zero".into());
    }
    Ok(o)
}

/// The iteration counts of a `w x h` view of the set (the whole set, centred), and the
/// kernel's run time.
fn iterations(q: &Queue, (w, h): (usize, usize), max_iter: u32) -> BoxResult<(Vec<u32>, Duration)> {
    // 3.0 x 2.4 of the plane around -0.7 + 0i, square pixels, whichever side limits.
    let d = (3.0 / w as f32).max(2.4 / h as f32);
    let (x0, y0) = (-0.7 - d * w as f32 / 2.0, -d * h as f32 / 2.0);
    let iters = Buffer::<u32>::new(q, w * h)?;
    let k = mandelbrot_fn::build()?;
    let run = k.launch(
        q,
        NdRange::new([w, h]),
        &iters,
        w as u32,
        h as u32,
        x0,
        y0,
        d,
        max_iter,
    )?;
    Ok((q.read(&iters)?, run.event().duration()?))
}

fn main() {
    let run = || -> BoxResult<()> {
        let o = parse_args()?;
        let device: Device = o.device.parse()?;
        let q = Queue::new(&device)?;
        let (iters, kernel) = iterations(&q, o.size, o.max_iter)?;
        write_png(&o.out, o.size, 3, &iteration_colours(&iters, o.max_iter))?;
        println!(
            "wrote {} ({}x{}, up to {} iterations, on {}: kernel {:.3} ms)",
            o.out.display(),
            o.size.0,
            o.size.1,
            o.max_iter,
            device.info().spec(),
            kernel.as_secs_f64() * 1e3
        );
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("mandelbrot: {e}");
        std::process::exit(1);
    }
}

#[test]
fn writes_a_png_of_the_asked_size() {
    let q = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let size = (64, 48);
    let (iters, _) = iterations(&q, size, 64).unwrap();
    // The same picture in checked mode (no fault, race or uninitialized read).
    let checked = Queue::new(&Device::from_spec("interp+checked").unwrap()).unwrap();
    assert_eq!(iterations(&checked, size, 64).unwrap().0, iters);
    // The same picture on vulkan:0 (the IR's float arithmetic is IEEE's, never fused).
    if let Some(d) = vulkan::vulkan0() {
        let vq = Queue::new(&d).unwrap();
        assert_eq!(iterations(&vq, size, 64).unwrap().0, iters);
    }
    // The view holds the main cardioid (inside) and the outside.
    assert!(iters.contains(&64) && iters.iter().any(|&i| i < 4));
    let path = std::env::temp_dir().join(format!("strata-mandelbrot-{}.png", std::process::id()));
    write_png(&path, size, 3, &iteration_colours(&iters, 64)).unwrap();
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!((info.width, info.height), (64, 48));
    assert_eq!(info.color_type, png::ColorType::Rgb);
    // The pixel at the cardioid's centre (-0.25 + 0i) is black; the corner is not.
    let (w, d) = (64usize, 3.0f32 / 64.0);
    let px = ((-0.25 + 0.7) / d + w as f32 / 2.0) as usize;
    let at = |x: usize, y: usize| &buf[(y * w + x) * 3..(y * w + x) * 3 + 3];
    assert_eq!(at(px, 24), [0, 0, 0]);
    assert_ne!(at(0, 0), [0, 0, 0]);
}

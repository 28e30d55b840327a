//! Cog's colour conversion: an RGB colour field to CIELab (through XYZ, D65 white, the
//! easyrgb.com formulas Cog uses), one fused point-wise operator from a `[f32; 4]` RGBA field
//! to a `[f32; 3]` Lab field. Writes the input and the L, a and b channels side by side as
//! PNGs; the test checks the result against the host in `f64` at a small size.
//!
//! ```sh
//! cargo run --release --example cielab -- --device cpu --size 320x200 --out target/cielab
//! cargo run --release --example cielab -- --input photo.png
//! ```

#[path = "common/pictures.rs"]
mod pictures;

use pictures::{byte, parse_args, read_png_rgba, test_picture, write_png, BoxResult};
use strata::fields::{Field, Shape};
use strata::prelude::*;

/// sRGB companding undone: one channel in `[0, 1]`.
fn linear(c: Expr<f32>) -> Expr<f32> {
    select(
        c.gt(0.04045f32),
        ((c + 0.055f32) / 1.055f32).pow(lit(2.4f32)),
        c / 12.92f32,
    )
}

/// An RGBA pixel to XYZ (Cog's `pixelRGBtoXYZ`).
fn rgb_to_xyz(pixel: Expr<[f32; 4]>) -> Expr<[f32; 3]> {
    let scaled = vec3(linear(pixel.x()), linear(pixel.y()), linear(pixel.z())) * lit(100.0f32);
    let x = scaled.dot(vec3(0.4124f32, 0.3576f32, 0.1805f32));
    let y = scaled.dot(vec3(0.2126f32, 0.7152f32, 0.0722f32));
    let z = scaled.dot(vec3(0.0193f32, 0.1192f32, 0.9505f32));
    vec3(x, y, z)
}

/// XYZ to CIE L*a*b* (Cog's `pixelXYZtoCIELAB`).
fn xyz_to_lab(xyz: Expr<[f32; 3]>) -> Expr<[f32; 3]> {
    let f = |t: Expr<f32>| {
        select(
            t.gt(0.008856f32),
            t.pow(lit(1.0f32 / 3.0)),
            t * 7.787f32 + 16.0f32 / 116.0,
        )
    };
    let x = f(xyz.x() / 95.047f32);
    let y = f(xyz.y() / 100.0f32);
    let z = f(xyz.z() / 108.883f32);
    vec3(
        y * 116.0f32 - 16.0f32,
        (x - y) * 500.0f32,
        (y - z) * 200.0f32,
    )
}

/// Cog's `RGBtoCIELAB`: a colour field to a field of 3-vectors (L, a, b).
fn rgb_to_cielab(image: &Field<[f32; 4]>) -> Field<[f32; 3]> {
    image.map(|pixel| xyz_to_lab(rgb_to_xyz(pixel)))
}

/// The same on the host, in `f64`.
fn lab_host(c: [f32; 4]) -> [f64; 3] {
    let lin = |c: f32| {
        let c = c as f64;
        if c > 0.04045 {
            ((c + 0.055) / 1.055).powf(2.4)
        } else {
            c / 12.92
        }
    };
    let (r, g, b) = (lin(c[0]) * 100.0, lin(c[1]) * 100.0, lin(c[2]) * 100.0);
    let x = r * 0.4124 + g * 0.3576 + b * 0.1805;
    let y = r * 0.2126 + g * 0.7152 + b * 0.0722;
    let z = r * 0.0193 + g * 0.1192 + b * 0.9505;
    let f = |t: f64| {
        if t > 0.008856 {
            t.cbrt()
        } else {
            7.787 * t + 16.0 / 116.0
        }
    };
    let (x, y, z) = (f(x / 95.047), f(y / 100.0), f(z / 108.883));
    [116.0 * y - 16.0, 500.0 * (x - y), 200.0 * (y - z)]
}

/// L, a and b as three grey pictures side by side (L / 100, (a + 128) / 255, (b + 128) / 255).
fn channels((w, h): (usize, usize), lab: &[[f32; 3]]) -> Vec<u8> {
    let mut out = vec![0u8; 3 * w * h];
    for y in 0..h {
        for x in 0..w {
            let v = lab[y * w + x];
            let k = [v[0] / 100.0, (v[1] + 128.0) / 255.0, (v[2] + 128.0) / 255.0];
            for (c, &kc) in k.iter().enumerate() {
                out[y * 3 * w + c * w + x] = byte(kc);
            }
        }
    }
    out
}

fn main() {
    let run = || -> BoxResult<()> {
        let o = parse_args("cielab", (320, 200))?;
        let (size, px) = match &o.input {
            Some(path) => read_png_rgba(path)?,
            None => (o.size, test_picture(o.size)),
        };
        let device: Device = o.device.parse()?;
        let fx = strata::fields::Fields::new(&Queue::new(&device)?);
        let image = fx.from_slice(Shape::d2(size.1, size.0), &px)?;
        let lab = rgb_to_cielab(&image).to_vec()?;
        for (i, (got, c)) in lab.iter().zip(&px).enumerate() {
            let want = lab_host(*c);
            if (0..3).any(|k| (got[k] as f64 - want[k]).abs() > 2e-3) {
                return Err(format!("pixel {i}: {got:?} against the host's {want:?}").into());
            }
        }
        let rgba: Vec<u8> = px.iter().flat_map(|c| c.map(byte)).collect();
        write_png(&o.out.join("input.png"), size, 4, &rgba)?;
        write_png(
            &o.out.join("lab.png"),
            (3 * size.0, size.1),
            1,
            &channels(size, &lab),
        )?;
        println!(
            "cielab: {}x{} on {}, checked against the host; wrote {}/input.png and lab.png (L, a, b side by side)",
            size.0,
            size.1,
            device.info().spec(),
            o.out.display()
        );
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("cielab: {e}");
        std::process::exit(1);
    }
}

#[test]
fn matches_the_host_conversion_on_every_device() {
    let (w, h) = (24, 16);
    let px = test_picture((w, h));
    // Every device, and each again in checked mode: no fault, race or uninitialized read.
    for device in strata::devices()
        .iter()
        .flat_map(|d| [d.clone(), d.checked()])
    {
        if device.info().backend == strata::BackendKind::Cuda {
            continue;
        }
        let fx = strata::fields::Fields::new(&Queue::new(&device).unwrap());
        let image = fx.from_slice(Shape::d2(h, w), &px).unwrap();
        let before = fx.queue().launch_count();
        let lab = rgb_to_cielab(&image).to_vec().unwrap();
        assert_eq!(fx.queue().launch_count() - before, 1);
        for (i, (got, c)) in lab.iter().zip(&px).enumerate() {
            let want = lab_host(*c);
            for k in 0..3 {
                assert!(
                    (got[k] as f64 - want[k]).abs() < 2e-3,
                    "{} pixel {i} channel {k}: {} against {}",
                    device.info().spec(),
                    got[k],
                    want[k]
                );
            }
        }
        // White is L = 100, a = b = 0 (up to the matrix's rounding); black is 0.
        let wb = fx
            .from_slice(
                Shape::d1(2),
                &[[1.0f32, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0]],
            )
            .unwrap();
        let got = rgb_to_cielab(&wb).to_vec().unwrap();
        assert!(
            (got[0][0] - 100.0).abs() < 1e-2 && got[0][1].abs() < 0.1 && got[0][2].abs() < 0.1,
            "{:?}",
            got[0]
        );
        assert_eq!(got[1], [0.0, 0.0, 0.0]);
    }
    let dir = pictures::temp_dir("cielab");
    let lab: Vec<[f32; 3]> = px.iter().map(|&c| lab_host(c).map(|v| v as f32)).collect();
    let path = dir.join("lab.png");
    write_png(&path, (3 * w, h), 1, &channels((w, h), &lab)).unwrap();
    let (size, back) = read_png_rgba(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(size, (3 * w, h));
    assert_eq!(back.len(), 3 * w * h);
}

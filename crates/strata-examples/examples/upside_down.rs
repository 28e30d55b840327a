//! Cog's upside-down operator: a 2-D colour field turned upside down by an operator that reads
//! its input at an absolute coordinate (`rows - row - 1`). Writes the input and the output as
//! PNGs; the test checks the result against the host at a small size.
//!
//! ```sh
//! cargo run --release --example upside_down -- --device cpu --size 320x200 --out target/upside_down
//! cargo run --release --example upside_down -- --input photo.png
//! ```

#[path = "common/pictures.rs"]
mod pictures;

use pictures::{byte, parse_args, read_png_rgba, test_picture, write_png, BoxResult};
use strata::fields::{Border, Field, FieldError, Fields, Shape, Tensor};
use strata::prelude::*;

/// Flips any 2-D field of small tensors upside down (Cog's `upsideDown`); a field of other
/// dimensions is refused with a typed error.
fn upside_down<T: Tensor>(field: &Field<T>) -> strata::Result<Field<T>> {
    if field.shape().ndim() != 2 {
        return Err(FieldError {
            op: "upside_down",
            detail: format!("requires a 2-D field, not {}", field.shape()),
        }
        .into());
    }
    let src = field.clone();
    Ok(field.fields().op("upside_down", field.shape(), move |p| {
        let read_row = p.rows() - p.row() - 1i32;
        let read_column = p.column();
        p.read_at(&src, &[read_row, read_column], Border::Clamp)
    }))
}

fn rgba_bytes(px: &[[f32; 4]]) -> Vec<u8> {
    px.iter().flat_map(|c| c.map(byte)).collect()
}

fn main() {
    let run = || -> BoxResult<()> {
        let o = parse_args("upside_down", (320, 200))?;
        let (size, px) = match &o.input {
            Some(path) => read_png_rgba(path)?,
            None => (o.size, test_picture(o.size)),
        };
        let device: Device = o.device.parse()?;
        let fx = Fields::new(&Queue::new(&device)?);
        let colour = fx.from_slice(Shape::d2(size.1, size.0), &px)?;
        let flipped = upside_down(&colour)?.to_vec()?;
        write_png(&o.out.join("input.png"), size, 4, &rgba_bytes(&px))?;
        write_png(
            &o.out.join("upside_down.png"),
            size,
            4,
            &rgba_bytes(&flipped),
        )?;
        println!(
            "upside_down: {}x{} on {}; wrote {}/input.png and upside_down.png",
            size.0,
            size.1,
            device.info().spec(),
            o.out.display()
        );
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("upside_down: {e}");
        std::process::exit(1);
    }
}

#[test]
fn flips_colour_and_scalar_fields_on_every_device() {
    let (w, h) = (13, 9);
    let px = test_picture((w, h));
    // Every device, and each again in checked mode: no fault, race or uninitialized read.
    for device in strata::devices()
        .iter()
        .flat_map(|d| [d.clone(), d.checked()])
    {
        if device.info().backend == strata::BackendKind::Cuda {
            continue;
        }
        let fx = Fields::new(&Queue::new(&device).unwrap());
        let colour = fx.from_slice(Shape::d2(h, w), &px).unwrap();
        let got = upside_down(&colour).unwrap().to_vec().unwrap();
        for y in 0..h {
            assert_eq!(got[y * w..y * w + w], px[(h - 1 - y) * w..(h - y) * w]);
        }
        // The same operator on a scalar field.
        let s: Vec<u32> = (0..(w * h) as u32).collect();
        let got = upside_down(&fx.from_slice(Shape::d2(h, w), &s).unwrap())
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(got[0], ((h - 1) * w) as u32);
        let line = fx.from_slice(Shape::d1(3), &[1.0f32, 2.0, 3.0]).unwrap();
        let e = upside_down(&line).err().unwrap();
        assert_eq!(
            e.to_string(),
            "upside_down: requires a 2-D field, not 1-D (3 columns)"
        );
    }
    let dir = pictures::temp_dir("upside_down");
    let path = dir.join("flipped.png");
    write_png(&path, (w, h), 4, &rgba_bytes(&px)).unwrap();
    let (size, back) = read_png_rgba(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(size, (w, h));
    assert_eq!(back.len(), w * h);
}

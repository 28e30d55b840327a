//! Host-data interop (`strata::host_interop`, features `ndarray` and `image`) on `cpu`,
//! `interp` and every OpenCL device: `ndarray` arrays of every layout (standard, transposed,
//! stepped, reversed, Fortran order) to and from `Buffer`, `Buffer2`, `Buffer3` and fields of 0
//! to 3 dimensions; `image` buffers of each pixel type to and from `Buffer2` and 2-D fields; a
//! kernel between upload and download (an inverted image, a transposed array); the README's
//! examples; and the typed errors with their messages for shapes that do not fit.
//!
//! Built only with both features (`required-features` in Cargo.toml; scripts/test.sh runs it).
//! When `STRATA_REQUIRE` contains `opencl`, having no OpenCL device is a failure.

use image::{GrayImage, ImageBuffer, Luma, LumaA, Rgb, Rgb32FImage, RgbImage, Rgba, RgbaImage};
use ndarray::{array, s, Array, Array1, Array2, Array3, ArrayD, Ix2, Ix3, IxDyn, ShapeBuilder};
use strata::fields::{Fields, Shape};
use strata::host_interop::InteropError;
use strata::prelude::*;
use strata::{BackendKind, Error};

fn required(what: &str) -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == what))
}

/// `cpu`, `interp` and every OpenCL device (required when `STRATA_REQUIRE` names `opencl`).
fn queues() -> Vec<Queue> {
    let all: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| {
            matches!(
                d.info().backend,
                BackendKind::Cpu | BackendKind::Interp | BackendKind::OpenCl
            )
        })
        .collect();
    if !all.iter().any(|d| d.info().backend == BackendKind::OpenCl) {
        assert!(
            !required("opencl"),
            "STRATA_REQUIRE names opencl, but no OpenCL device is listed"
        );
        eprintln!("no OpenCL device: host interop checked on the CPU backends only");
    }
    assert!(all.len() >= 2, "cpu and interp are always present");
    all.iter().map(|d| Queue::new(d).unwrap()).collect()
}

fn spec(q: &Queue) -> String {
    q.device().info().spec()
}

/// The message of an `InteropError`, failing the test for any other error.
fn interop_message<T: std::fmt::Debug>(r: strata::Result<T>) -> String {
    let e = r.expect_err("a shape that does not fit must fail");
    match e.layer::<InteropError>() {
        Some(i) => i.to_string(),
        None => panic!("expected an InteropError, got {e}"),
    }
}

/// A 5 x 7 array with distinct elements.
fn grid() -> Array2<f32> {
    Array2::from_shape_fn((5, 7), |(y, x)| (y * 10 + x) as f32)
}

#[test]
fn ndarray_1d_round_trips_in_every_layout() {
    let a: Array1<i32> = (0..40).collect();
    for q in queues() {
        let who = spec(&q);
        let views = [
            a.view(),
            a.slice(s![..;3]),
            a.slice(s![..;-1]),
            a.slice(s![5..;-2]),
        ];
        for v in views {
            let b = Buffer::from_array(&q, &v).unwrap();
            assert_eq!(b.len(), v.len(), "{who}");
            assert_eq!(b.to_array(&q).unwrap(), v, "{who}");
        }
        let b = Buffer::<i32>::new(&q, 40).unwrap();
        b.write_array(&q, &a.slice(s![..;-1])).unwrap();
        assert_eq!(
            b.to_vec(&q).unwrap(),
            (0..40).rev().collect::<Vec<_>>(),
            "{who}"
        );
    }
}

#[test]
fn ndarray_2d_rows_are_y_in_every_layout_and_padding_never_reaches_the_host() {
    let a = grid();
    let fortran = Array2::from_shape_vec((5, 7).f(), a.t().iter().copied().collect()).unwrap();
    assert_eq!(fortran, a);
    assert!(!fortran.is_standard_layout());
    for q in queues() {
        let who = spec(&q);
        // Standard layout: uploaded from the array's memory.
        let b = Buffer2::from_array(&q, &a).unwrap();
        assert_eq!(b.extent(), [7, 5], "{who}: width is the columns");
        assert!(b.pitch() > 7, "{who}: rows are padded");
        assert_eq!(b.to_array(&q).unwrap(), a, "{who}");
        assert_eq!(
            q.read_region(&b, [3, 2], [1, 1]).unwrap(),
            vec![a[[2, 3]]],
            "{who}: a[[y, x]] at (x, y)"
        );
        // Non-standard layouts: copied into standard order, the logical array arrives.
        let views = [
            a.t(),
            a.slice(s![..;2, 1..;3]),
            a.slice(s![..;-1, ..]),
            a.slice(s![1..4;-1, ..;-2]),
            fortran.view(),
        ];
        for v in views {
            assert!(!v.is_standard_layout());
            let b = Buffer2::from_array(&q, &v).unwrap();
            let (h, w) = v.dim();
            assert_eq!(b.extent(), [w, h], "{who}");
            assert_eq!(b.to_array(&q).unwrap(), v, "{who}");
        }
        // Writing over an existing buffer, from a transposed view.
        let b = Buffer2::<f32>::new(&q, [5, 7]).unwrap();
        b.write_array(&q, &a.t()).unwrap();
        assert_eq!(b.to_array(&q).unwrap(), a.t(), "{who}");
    }
}

#[test]
fn ndarray_3d_round_trips_with_permuted_and_stepped_axes() {
    let a = Array3::from_shape_fn((3, 4, 5), |(z, y, x)| [z as u16, y as u16, x as u16]);
    for q in queues() {
        let who = spec(&q);
        let b = Buffer3::from_array(&q, &a).unwrap();
        assert_eq!(b.extent(), [5, 4, 3], "{who}");
        assert_eq!(b.to_array(&q).unwrap(), a, "{who}");
        let permuted = a.view().permuted_axes([2, 0, 1]);
        let stepped = a.slice(s![..;-1, ..;2, 1..]);
        for v in [permuted, stepped] {
            let b = Buffer3::from_array(&q, &v).unwrap();
            let (d, h, w) = v.dim();
            assert_eq!(b.extent(), [w, h, d], "{who}");
            assert_eq!(b.to_array(&q).unwrap(), v, "{who}");
        }
        let b = Buffer3::<[u16; 3]>::new(&q, [5, 4, 3]).unwrap();
        b.write_array(&q, &a).unwrap();
        assert_eq!(
            q.read_region(&b, [4, 3, 2], [1, 1, 1]).unwrap(),
            vec![[2, 3, 4]],
            "{who}"
        );
    }
}

#[test]
fn ndarray_fields_of_0_to_3_dimensions() {
    for q in queues() {
        let who = spec(&q);
        let fx = Fields::new(&q);
        let a = grid();
        let f = fx.from_array(&a.t()).unwrap();
        assert_eq!(f.shape(), Shape::d2(7, 5), "{who}");
        assert_eq!(f.to_array::<Ix2>().unwrap(), a.t(), "{who}");
        // A lazy field is run, then read.
        let doubled = f.map(|v| v * 2.0f32);
        assert_eq!(
            doubled.to_array::<Ix2>().unwrap(),
            a.t().mapv(|v| v * 2.0),
            "{who}"
        );
        // 0-D, 1-D and 3-D; `ArrayD` reads any.
        let zero = fx.from_array(&ndarray::arr0(7i32)).unwrap();
        assert_eq!(zero.shape(), Shape::d0());
        assert_eq!(
            zero.to_array::<IxDyn>().unwrap(),
            ArrayD::from_elem(IxDyn(&[]), 7),
            "{who}"
        );
        let one = fx.from_array(&array![1u8, 2, 3].slice(s![..;-1])).unwrap();
        assert_eq!(
            one.to_array::<ndarray::Ix1>().unwrap(),
            array![3u8, 2, 1],
            "{who}"
        );
        let cube = Array3::from_shape_fn((2, 3, 4), |(l, r, c)| [l as f32, r as f32, c as f32]);
        let f = fx
            .from_array(&cube.view().permuted_axes([1, 2, 0]))
            .unwrap();
        assert_eq!(f.shape(), Shape::d3(3, 4, 2), "{who}");
        assert_eq!(
            f.to_array::<Ix3>().unwrap(),
            cube.view().permuted_axes([1, 2, 0]),
            "{who}"
        );
        assert_eq!(
            f.to_array::<IxDyn>()
                .unwrap()
                .into_dimensionality::<Ix3>()
                .unwrap(),
            cube.view().permuted_axes([1, 2, 0]),
            "{who}"
        );
    }
}

#[kernel]
fn transpose(src: &Buffer2<f32>, #[write] dst: &mut Buffer2<f32>) {
    let p = global_id2();
    if in_bounds(p, src.extent()) {
        dst[(p.x(), p.y())] = src[(p.y(), p.x())] + 1.0f32;
    }
}

#[test]
fn ndarray_through_a_kernel() {
    let a = grid();
    for q in queues() {
        let who = spec(&q);
        let src = Buffer2::from_array(&q, &a.slice(s![.., ..;-1])).unwrap();
        let dst = Buffer2::<f32>::new(&q, [5, 7]).unwrap();
        transpose::build()
            .unwrap()
            .launch(&q, NdRange::covering(src.extent(), [4, 4]), &src, &dst)
            .unwrap();
        let want = a.slice(s![.., ..;-1]).t().mapv(|v| v + 1.0);
        assert_eq!(dst.to_array(&q).unwrap(), want, "{who}");
    }
}

#[kernel]
fn invert(src: &Buffer2<[u8; 3]>, #[write] dst: &mut Buffer2<[u8; 3]>) {
    let p = global_id2();
    if in_bounds(p, src.extent()) {
        let v = src[(p.y(), p.x())];
        dst[(p.y(), p.x())] = vec3(255u8 - v.x(), 255u8 - v.y(), 255u8 - v.z());
    }
}

fn picture() -> RgbImage {
    RgbImage::from_fn(13, 6, |x, y| {
        Rgb([x as u8 * 19, y as u8 * 40, (x * y) as u8])
    })
}

#[test]
fn image_inverted_by_a_kernel_and_by_a_field() {
    let img = picture();
    let mut want = img.clone();
    image::imageops::invert(&mut want);
    for q in queues() {
        let who = spec(&q);
        let src = Buffer2::from_image(&q, &img).unwrap();
        assert_eq!(src.extent(), [13, 6], "{who}: width is x");
        let dst = Buffer2::<[u8; 3]>::new(&q, src.extent()).unwrap();
        invert::build()
            .unwrap()
            .launch(&q, NdRange::covering(src.extent(), [8, 4]), &src, &dst)
            .unwrap();
        let out: RgbImage = dst.to_image(&q).unwrap();
        assert_eq!(out, want, "{who}");
        // The same as a field operator.
        let fx = Fields::new(&q);
        let f = fx.from_image(&img).unwrap();
        assert_eq!(f.shape(), Shape::d2(6, 13), "{who}: rows are y");
        let inverted = f.map(|v| splat::<u8, 3>(lit(255u8)) - v);
        assert_eq!(inverted.to_image().unwrap(), want, "{who}");
    }
}

#[test]
fn image_round_trips_for_every_pixel_type() {
    for q in queues() {
        let who = spec(&q);
        let fx = Fields::new(&q);
        let rgba = RgbaImage::from_fn(9, 4, |x, y| Rgba([x as u8, y as u8, 7, 255 - x as u8]));
        let b = Buffer2::from_image(&q, &rgba).unwrap();
        assert_eq!(
            q.read_region(&b, [2, 3], [1, 1]).unwrap(),
            vec![[2, 3, 7, 253]],
            "{who}"
        );
        assert_eq!(b.to_image(&q).unwrap(), rgba, "{who}");
        assert_eq!(
            fx.from_image(&rgba).unwrap().to_image().unwrap(),
            rgba,
            "{who}"
        );

        let gray = GrayImage::from_fn(5, 3, |x, y| Luma([(x + 10 * y) as u8]));
        let b: Buffer2<u8> = Buffer2::from_image(&q, &gray).unwrap();
        assert_eq!(b.to_image(&q).unwrap(), gray, "{who}");
        assert_eq!(
            fx.from_image(&gray).unwrap().to_image().unwrap(),
            gray,
            "{who}"
        );

        let gray_f =
            ImageBuffer::<Luma<f32>, _>::from_fn(4, 4, |x, y| Luma([x as f32 / (y + 1) as f32]));
        let b: Buffer2<f32> = Buffer2::from_image(&q, &gray_f).unwrap();
        assert_eq!(b.to_image(&q).unwrap(), gray_f, "{who}");
        let half = fx
            .from_image(&gray_f)
            .unwrap()
            .map(|v| v * 0.5f32)
            .to_image()
            .unwrap();
        assert_eq!(half.get_pixel(3, 0).0, [1.5], "{who}");

        let rgb_f = Rgb32FImage::from_fn(3, 2, |x, y| Rgb([x as f32, y as f32, 0.25]));
        assert_eq!(
            Buffer2::from_image(&q, &rgb_f)
                .unwrap()
                .to_image(&q)
                .unwrap(),
            rgb_f,
            "{who}"
        );
        assert_eq!(
            fx.from_image(&rgb_f).unwrap().to_image().unwrap(),
            rgb_f,
            "{who}"
        );

        let la16 =
            ImageBuffer::<LumaA<u16>, _>::from_fn(3, 5, |x, y| LumaA([x as u16 * 1000, y as u16]));
        let b: Buffer2<[u16; 2]> = Buffer2::from_image(&q, &la16).unwrap();
        assert_eq!(b.to_image(&q).unwrap(), la16, "{who}");

        // A container longer than the image: only the image's samples are uploaded.
        let mut raw = picture().into_raw();
        raw.extend([1, 2, 3, 4, 5]);
        let long = ImageBuffer::<Rgb<u8>, _>::from_raw(13, 6, raw.clone()).unwrap();
        let b = Buffer2::from_image(&q, &long).unwrap();
        b.write_image(&q, &long).unwrap();
        assert_eq!(b.to_image(&q).unwrap(), picture(), "{who}");
        // A borrowed container.
        let borrowed = ImageBuffer::<Rgb<u8>, &[u8]>::from_raw(13, 6, &raw[..]).unwrap();
        assert_eq!(
            fx.from_image(&borrowed).unwrap().to_image().unwrap(),
            picture(),
            "{who}"
        );
    }
}

#[test]
fn shapes_that_do_not_fit_are_typed_errors_with_messages() {
    let q = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let fx = Fields::new(&q);
    let a = grid();

    let b = Buffer::<f32>::new(&q, 34).unwrap();
    assert_eq!(
        interop_message(b.write_array(&q, &a.row(0))),
        "Buffer::write_array: the array has 7 elements, the buffer 34"
    );
    let b2 = Buffer2::<f32>::new(&q, [5, 7]).unwrap();
    assert_eq!(
        interop_message(b2.write_array(&q, &a)),
        "Buffer2::write_array: the array's shape is [5, 7] (outermost first), but the buffer's \
         extent [5, 7] (x first) needs an array of shape [7, 5]"
    );
    let b3 = Buffer3::<f32>::new(&q, [4, 3, 2]).unwrap();
    assert_eq!(
        interop_message(b3.write_array(&q, &Array3::zeros((2, 4, 3)))),
        "Buffer3::write_array: the array's shape is [2, 4, 3] (outermost first), but the \
         buffer's extent [4, 3, 2] (x first) needs an array of shape [2, 3, 4]"
    );
    let f = fx.from_array(&a).unwrap();
    assert_eq!(
        interop_message(f.to_array::<Ix3>()),
        "Field::to_array: the field is 2-D (5 rows x 7 columns), but an array of 3 dimensions \
         was asked for; read it as an array of 2 (or as an `ArrayD`)"
    );
    let four = Array::<f32, _>::zeros(IxDyn(&[2, 2, 2, 2]));
    assert_eq!(
        interop_message(fx.from_array(&four)),
        "Fields::from_array: the array has 4 dimensions (shape [2, 2, 2, 2]); fields have 0 to \
         3 (layers x rows x columns)"
    );
    // An empty dimension is the field layer's error.
    let e = fx.from_array(&Array2::<f32>::zeros((0, 3))).unwrap_err();
    assert!(e.to_string().contains("has an empty dimension"), "{e}");

    let small = Buffer2::<[u8; 3]>::new(&q, [12, 6]).unwrap();
    assert_eq!(
        interop_message(small.write_image(&q, &picture())),
        "Buffer2::write_image: the image is 13 x 6 pixels, the buffer's extent [12, 6]"
    );
    let line = fx.from_slice(Shape::d1(4), &[[1u8, 2, 3]; 4]).unwrap();
    assert_eq!(
        interop_message(line.to_image()),
        "Field::to_image: the field is 1-D (4 columns); images are 2-D fields (rows x columns)"
    );
    // Returned from `main`, the message is what prints.
    let e: Error = line.to_image().unwrap_err();
    assert!(
        format!("{e:?}").starts_with("Field::to_image: the field is 1-D"),
        "{e:?}"
    );
}

/// The README's ndarray example ("Host data: ndarray and image"), verbatim.
#[test]
fn readme_ndarray_example() -> strata::Result<()> {
    use ndarray::{array, s};
    use strata::fields::Fields;
    use strata::prelude::*;

    let queue = Queue::new(&Device::from_spec("cpu")?)?;
    let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]; // 2 rows (y) x 3 columns (x)
    let img = Buffer2::from_array(&queue, &a)?; // extent [3, 2]: width, height
    assert_eq!(img.to_array(&queue)?, a); // an Array2 again, without the rows' padding
                                          // Any layout: a transposed or stepped view is copied into row-major order first.
    let t = Buffer2::from_array(&queue, &a.t())?;
    assert_eq!(t.extent(), [2, 3]);
    let field = Fields::new(&queue).from_array(&a.slice(s![.., ..;2]))?;
    let doubled = field.map(|v| v * 2.0f32).to_array::<ndarray::Ix2>()?;
    assert_eq!(doubled, array![[2.0, 6.0], [8.0, 12.0]]);
    Ok(())
}

/// The README's image example, verbatim.
#[test]
fn readme_image_example() -> strata::Result<()> {
    use image::{Rgb, RgbImage};
    use strata::fields::Fields;
    use strata::prelude::*;

    let queue = Queue::new(&Device::from_spec("cpu")?)?;
    let img = RgbImage::from_fn(64, 48, |x, y| Rgb([x as u8 * 4, y as u8 * 5, 128]));
    let buf = Buffer2::from_image(&queue, &img)?; // a Buffer2<[u8; 3]> of extent [64, 48]
    assert_eq!(buf.to_image(&queue)?, img);
    // A 2-D field of 48 rows x 64 columns, inverted by a point-wise operator.
    let field = Fields::new(&queue).from_image(&img)?;
    let inverted: RgbImage = field.map(|p| splat::<u8, 3>(lit(255u8)) - p).to_image()?;
    assert_eq!(inverted.get_pixel(1, 2), &Rgb([251, 245, 127]));
    Ok(())
}

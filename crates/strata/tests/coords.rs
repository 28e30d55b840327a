//! Out-of-bounds accesses to 2-D and 3-D buffers name the coordinates the kernel wrote and the
//! buffer's extent (`(y, x) = (-1, 3)` of a 48×64 image), decoded on the host from the flat
//! index and the pitches of the buffer passed: a coordinate below 0, which wraps in the
//! kernel's `u32` arithmetic, is shown negative. On every backend that reports out-of-bounds
//! accesses: `interp`, `cpu` and the checked forms (`opencl:0+checked` where there is an
//! OpenCL device).

use strata::prelude::*;
use strata::{BackendKind, Coords, Error};

/// The devices that report out-of-bounds accesses.
fn specs() -> Vec<String> {
    let mut v: Vec<String> = ["interp", "cpu", "interp+checked", "cpu+checked"]
        .map(String::from)
        .to_vec();
    if strata::devices()
        .iter()
        .any(|d| d.info().backend == BackendKind::OpenCl)
    {
        v.push("opencl:0+checked".into());
    }
    v
}

/// Launches `launch` on every spec and checks the `OutOfBounds` error's coordinates, extent
/// and message.
fn expect(
    what: &str,
    at: &[i64],
    extent: &[u64],
    needles: &[&str],
    launch: impl Fn(&Queue) -> strata::Result<strata::Run>,
) {
    for spec in specs() {
        let q = Queue::new(&Device::from_spec(&spec).unwrap()).unwrap();
        match launch(&q) {
            Err(e @ Error::OutOfBounds { .. }) => {
                let Error::OutOfBounds { coords, .. } = &e else {
                    unreachable!()
                };
                let c: &Coords = coords
                    .as_deref()
                    .unwrap_or_else(|| panic!("{what} on {spec}: no coordinates in {e}"));
                assert_eq!(
                    (&c.at[..], &c.extent[..]),
                    (at, extent),
                    "{what} on {spec}: {e}"
                );
                let msg = e.to_string();
                for n in needles {
                    assert!(msg.contains(n), "{what} on {spec}: `{n}` not in: {msg}");
                }
                eprintln!("{spec}: {msg}");
            }
            Err(e) => panic!("{what} on {spec}: expected OutOfBounds, got {e}"),
            Ok(_) => panic!("{what} on {spec}: expected OutOfBounds, the launch succeeded"),
        }
    }
}

/// Reads `img` at `(y, x)` given as signed numbers, as a stencil computes them.
fn read_2d() -> Kernel {
    Kernel::build("read_2d", |k| {
        let img = k.read2::<f32>("img");
        let y = k.scalar::<i32>("y");
        let x = k.scalar::<i32>("x");
        let out = k.write::<f32>("out");
        out.set(0u32, img.at2(y.cast::<u32>(), x.cast::<u32>()));
    })
    .unwrap()
}

#[test]
fn a_2d_read_above_the_image_names_negative_coordinates_and_the_extent() {
    let k = read_2d();
    let flat = (-64i64 + 3) as u32;
    expect(
        "(-1, 3)",
        &[-1, 3],
        &[48, 64],
        &[
            "kernel `read_2d`: (y, x) = (-1, 3) is out of bounds for buffer `img`, a 48×64 image",
            &format!("(flat index {flat} of 3072 elements"),
        ],
        |q| {
            let img = Buffer2::<f32>::new(q, [64, 48]).unwrap();
            let out = Buffer::<f32>::new(q, 1).unwrap();
            k.launch(q, NdRange::new(1), args![&img, -1i32, 3i32, &out])
        },
    );
}

#[test]
fn a_2d_read_below_the_image_names_its_row() {
    let k = read_2d();
    expect(
        "(48, 3)",
        &[48, 3],
        &[48, 64],
        &["(y, x) = (48, 3) is out of bounds for buffer `img`, a 48×64 image"],
        |q| {
            let img = Buffer2::<f32>::new(q, [64, 48]).unwrap();
            let out = Buffer::<f32>::new(q, 1).unwrap();
            k.launch(q, NdRange::new(1), args![&img, 48i32, 3i32, &out])
        },
    );
}

#[test]
fn a_3d_write_past_the_last_slice_names_z_y_x_and_the_volume() {
    let k = Kernel::build("write_3d", |k| {
        let vol = k.write3::<u32>("vol");
        let z = k.scalar::<i32>("z");
        vol.set3(z.cast::<u32>(), 2u32, 5u32, 7u32);
    })
    .unwrap();
    for (z, needle) in [
        (
            4,
            "(z, y, x) = (4, 2, 5) is out of bounds for buffer `vol`, a 4×6×8 volume",
        ),
        (
            -1,
            "(z, y, x) = (-1, 2, 5) is out of bounds for buffer `vol`, a 4×6×8 volume",
        ),
    ] {
        expect(needle, &[z as i64, 2, 5], &[4, 6, 8], &[needle], |q| {
            let vol = Buffer3::<u32>::new(q, [8, 6, 4]).unwrap();
            k.launch(q, NdRange::new(1), args![&vol, z])
        });
    }
}

/// The `#[kernel]` form: `img[(y - 1, x)]` at the top row wraps below 0 and is shown as -1.
#[kernel]
fn stencil_up(img: &Buffer2<f32>, #[write] out: &mut Buffer2<f32>) {
    let p = global_id2();
    let x = p.x();
    let y = p.y();
    out[(y, x)] = img[(y - 1u32, x)];
}

#[test]
fn a_kernel_reading_the_row_above_names_row_minus_one() {
    expect(
        "img[(y - 1, x)]",
        &[-1, 0],
        &[3, 5],
        &["(y, x) = (-1, 0) is out of bounds for buffer `img`, a 3×5 image"],
        |q| {
            let img = Buffer2::<f32>::new(q, [5, 3]).unwrap();
            let out = Buffer2::<f32>::new(q, [5, 3]).unwrap();
            stencil_up::build()
                .unwrap()
                .launch(q, NdRange::new([5, 3]), &img, &out)
        },
    );
}

/// A flat buffer's error is unchanged: the index and the length.
#[test]
fn a_flat_buffer_names_its_index_and_length() {
    let k = Kernel::build("flat", |k| {
        let x = k.read_write::<u32>("x");
        x.set(5u32, 1u32);
    })
    .unwrap();
    for spec in specs() {
        let q = Queue::new(&Device::from_spec(&spec).unwrap()).unwrap();
        let x = Buffer::<u32>::new(&q, 4).unwrap();
        let e = k.launch(&q, NdRange::new(1), args![&x]).unwrap_err();
        assert!(
            matches!(&e, Error::OutOfBounds { coords: None, .. }),
            "{spec}: {e:?}"
        );
        assert!(
            e.to_string()
                .contains("index 5 is out of bounds for buffer `x` of length 4"),
            "{spec}: {e}"
        );
    }
}

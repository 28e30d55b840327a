//! Source lines of `#[kernel]` functions: every memory access the macro records names the line
//! of the expression that made it, like the same access written with the builder. One kernel
//! per kind of access (a read, a compound assignment, an atomic, a field of a struct element,
//! a 2-D read), each out of bounds at a line the test names with `line!()`, checked on every
//! CPU backend with and without `+checked`; and the two accesses of a data race and an
//! uninitialized read, which `interp+checked` reports.

use strata::prelude::*;
use strata::Error;

/// The backends that report out-of-bounds accesses with their line.
const SPECS: [&str; 4] = ["interp", "cpu", "interp+checked", "cpu+checked"];

/// This file, as `Location::file` names it.
const FILE: &str = file!();

/// Runs `launch` on every spec of [`SPECS`] and checks that it fails with `OutOfBounds` at
/// `line` of this file.
fn expect_oob_at(what: &str, line: u32, launch: impl Fn(&Queue) -> strata::Result<strata::Run>) {
    for spec in SPECS {
        let q = Queue::new(&Device::from_spec(spec).unwrap()).unwrap();
        match launch(&q) {
            Err(e @ Error::OutOfBounds { at, .. }) => {
                assert_eq!(
                    (at.file(), at.line()),
                    (Some(FILE), Some(line)),
                    "{what} on {spec}: {e}"
                );
                assert!(e.to_string().contains(&format!("{FILE}:{line}:")), "{e}");
            }
            Err(e) => panic!("{what} on {spec}: expected OutOfBounds, got {e}"),
            Ok(_) => panic!("{what} on {spec}: expected OutOfBounds, the launch succeeded"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A plain read: `x[i]`.

const READ_LINE: u32 = line!() + 5;

#[kernel]
fn oob_read(x: &[u32], #[write] out: &mut [u32]) {
    let i = global_id(0);
    let v = x[i + 100u32];
    out[i] = v;
}

#[test]
fn a_read_names_its_line() {
    expect_oob_at("x[i + 100]", READ_LINE, |q| {
        let x = Buffer::from_slice(q, &[1u32; 8]).unwrap();
        let out = Buffer::<u32>::new(q, 8).unwrap();
        oob_read::build()
            .unwrap()
            .launch(q, NdRange::new(8), &x, &out)
    });
}

// ---------------------------------------------------------------------------------------------
// A compound assignment: `a[i] += v` reads, then writes, at the same line.

const COMPOUND_LINE: u32 = line!() + 5;

#[kernel]
fn oob_compound(a: &mut [u32]) {
    let i = global_id(0);
    a[i + 100u32] += 1u32;
}

#[test]
fn a_compound_assignment_names_its_line() {
    expect_oob_at("a[i + 100] += 1", COMPOUND_LINE, |q| {
        let a = Buffer::from_slice(q, &[1u32; 8]).unwrap();
        oob_compound::build()
            .unwrap()
            .launch(q, NdRange::new(8), &a)
    });
}

// ---------------------------------------------------------------------------------------------
// An atomic: `c.atomic_add(i, v)`.

const ATOMIC_LINE: u32 = line!() + 5;

#[kernel]
fn oob_atomic(c: &mut [u32]) {
    let i = global_id(0);
    c.atomic_add(i + 100u32, 1u32);
}

#[test]
fn an_atomic_names_its_line() {
    expect_oob_at("c.atomic_add(i + 100, 1)", ATOMIC_LINE, |q| {
        let c = Buffer::<u32>::new(q, 8).unwrap();
        oob_atomic::build().unwrap().launch(q, NdRange::new(8), &c)
    });
}

// ---------------------------------------------------------------------------------------------
// A field of an element of a buffer of structs: `ps[i].mass`.

#[derive(Clone, Copy, Debug, PartialEq, strata::Element)]
#[repr(C)]
struct Body {
    pos: [f32; 3],
    mass: f32,
}

const FIELD_LINE: u32 = line!() + 5;

#[kernel]
fn oob_field(ps: &[Body], #[write] out: &mut [f32]) {
    let i = global_id(0);
    let m = ps[i + 100u32].mass;
    out[i] = m;
}

#[test]
fn a_field_read_names_its_line() {
    expect_oob_at("ps[i + 100].mass", FIELD_LINE, |q| {
        let b = Body {
            pos: [0.0; 3],
            mass: 1.0,
        };
        let ps = Buffer::from_slice(q, &[b; 8]).unwrap();
        let out = Buffer::<f32>::new(q, 8).unwrap();
        oob_field::build()
            .unwrap()
            .launch(q, NdRange::new(8), &ps, &out)
    });
}

const STRUCT_LINE: u32 = line!() + 5;

#[kernel]
fn oob_struct(ps: &[Body], #[write] out: &mut [Body]) {
    let i = global_id(0);
    let p = ps[i + 100u32];
    out[i] = p;
}

#[test]
fn a_whole_struct_read_names_its_line() {
    expect_oob_at("ps[i + 100]", STRUCT_LINE, |q| {
        let b = Body {
            pos: [0.0; 3],
            mass: 1.0,
        };
        let ps = Buffer::from_slice(q, &[b; 8]).unwrap();
        let out = Buffer::from_slice(q, &[b; 8]).unwrap();
        oob_struct::build()
            .unwrap()
            .launch(q, NdRange::new(8), &ps, &out)
    });
}

const FIELD_WRITE_LINE: u32 = line!() + 5;

#[kernel]
fn oob_field_write(ps: &mut [Body]) {
    let i = global_id(0);
    ps[i + 100u32].mass = 2.0f32;
}

#[test]
fn a_field_write_names_its_line() {
    expect_oob_at("ps[i + 100].mass = 2", FIELD_WRITE_LINE, |q| {
        let b = Body {
            pos: [0.0; 3],
            mass: 1.0,
        };
        let ps = Buffer::from_slice(q, &[b; 8]).unwrap();
        oob_field_write::build()
            .unwrap()
            .launch(q, NdRange::new(8), &ps)
    });
}

/// A struct with an array of structs: read and written whole, field by field.
#[derive(Clone, Copy, Debug, PartialEq, strata::Element)]
#[repr(C)]
struct Pair {
    halves: [Body; 2],
}

const NESTED_LINE: u32 = line!() + 5;

#[kernel]
fn oob_nested(ps: &[Pair], #[write] out: &mut [Pair]) {
    let i = global_id(0);
    let p = ps[i + 100u32];
    out[i] = p;
}

#[test]
fn a_read_of_a_struct_with_an_array_of_structs_names_its_line() {
    expect_oob_at("ps[i + 100] (nested)", NESTED_LINE, |q| {
        let b = Body {
            pos: [0.0; 3],
            mass: 1.0,
        };
        let ps = Buffer::from_slice(q, &[Pair { halves: [b; 2] }; 8]).unwrap();
        let out = Buffer::from_slice(q, &[Pair { halves: [b; 2] }; 8]).unwrap();
        oob_nested::build()
            .unwrap()
            .launch(q, NdRange::new(8), &ps, &out)
    });
}

// ---------------------------------------------------------------------------------------------
// A private array: `a[i]`.

const PRIVATE_LINE: u32 = line!() + 6;

#[kernel]
fn oob_private(#[write] out: &mut [u32]) {
    let i = global_id(0);
    let mut a = [0u32; 4];
    out[i] = a[i + 100u32];
}

#[test]
fn a_private_array_read_names_its_line() {
    expect_oob_at("a[i + 100] (private)", PRIVATE_LINE, |q| {
        let out = Buffer::<u32>::new(q, 8).unwrap();
        oob_private::build()
            .unwrap()
            .launch(q, NdRange::new(8), &out)
    });
}

// ---------------------------------------------------------------------------------------------
// A 2-D read: `img[(y, x)]`.

const READ_2D_LINE: u32 = line!() + 7;

#[kernel]
fn oob_read_2d(img: &Buffer2<f32>, #[write] out: &mut Buffer2<f32>) {
    let p = global_id2();
    let x = p.x();
    let y = p.y();
    let v = img[(y + 100u32, x)];
    out[(y, x)] = v;
}

#[test]
fn a_2d_read_names_its_line() {
    expect_oob_at("img[(y + 100, x)]", READ_2D_LINE, |q| {
        let img = Buffer2::<f32>::new(q, [4, 3]).unwrap();
        let out = Buffer2::<f32>::new(q, [4, 3]).unwrap();
        oob_read_2d::build()
            .unwrap()
            .launch(q, NdRange::new([4, 3]), &img, &out)
    });
}

// ---------------------------------------------------------------------------------------------
// The two accesses of a data race, and an uninitialized read (found on `interp+checked`).

const RACE_READ_LINE: u32 = line!() + 5;

#[kernel]
fn race(x: &mut [u32]) {
    let i = local_id(0);
    let v = x[(i + 1u32) % 8u32];
    x[i] = v;
}

#[test]
fn a_data_race_names_both_lines() {
    let write_line = RACE_READ_LINE + 1;
    let q = Queue::new(&Device::from_spec("interp+checked").unwrap()).unwrap();
    let x = Buffer::from_slice(&q, &[0u32, 1, 2, 3, 4, 5, 6, 7]).unwrap();
    let k = race::build().unwrap();
    match k.launch(&q, NdRange::new(8).local(8), &x) {
        Err(
            ref e @ Error::DataRace {
                ref first,
                ref second,
                ..
            },
        ) => {
            for a in [first, second] {
                let want = if a.access == "read" {
                    RACE_READ_LINE
                } else {
                    write_line
                };
                assert_eq!(
                    (a.at.file(), a.at.line()),
                    (Some(FILE), Some(want)),
                    "the {}: {e}",
                    a.access
                );
            }
            assert_ne!(first.access, second.access, "{e}");
        }
        r => panic!("expected a data race, got {r:?}"),
    }
}

const UNINIT_LINE: u32 = line!() + 6;

#[kernel]
fn uninit_local(#[write] out: &mut [u32]) {
    let i = local_id(0);
    let tile = local_array::<u32>(8);
    out[i] = tile[i];
}

#[test]
fn an_uninitialized_read_names_its_line() {
    let q = Queue::new(&Device::from_spec("interp+checked").unwrap()).unwrap();
    let out = Buffer::<u32>::new(&q, 8).unwrap();
    let k = uninit_local::build().unwrap();
    match k.launch(&q, NdRange::new(8).local(8), &out) {
        Err(e @ Error::UninitializedRead { at, .. }) => {
            assert_eq!(
                (at.file(), at.line()),
                (Some(FILE), Some(UNINIT_LINE)),
                "{e}"
            );
        }
        r => panic!("expected an uninitialized read, got {r:?}"),
    }
}

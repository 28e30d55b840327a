//! User structs (`#[derive(Element)]`) as buffer elements: every field through each backend,
//! and fields written alone (the rest of the element untouched). The structs are public so
//! that the `#[kernel]` twins use the same types.

use super::{case, e, expect_eq, Case, Rng};
use strata::prelude::*;

/// A struct nested in [`Particle`]: 16-bit fields and a vector of bytes.
#[derive(Clone, Copy, Debug, PartialEq, strata::Element)]
#[repr(C)]
pub struct Inner {
    /// An unsigned 16-bit field.
    pub a: u16,
    /// A signed 16-bit field.
    pub b: i16,
    /// A 4-vector of bytes.
    pub c: [u8; 4],
}

/// A struct with every kind of field: scalars of 2 to 8 bytes, 3-vectors (packed), a nested
/// struct, an array of structs, an array of scalars and a vector of 64-bit integers.
#[derive(Clone, Copy, Debug, PartialEq, strata::Element)]
#[repr(C)]
pub struct Particle {
    /// A packed 3-vector.
    pub pos: [f32; 3],
    /// A float.
    pub mass: f32,
    /// Another 3-vector.
    pub vel: [f32; 3],
    /// A 32-bit integer.
    pub id: u32,
    /// A nested struct.
    pub inner: Inner,
    /// An array of structs.
    pub hist: [Inner; 2],
    /// An array of scalars (not a vector: five elements).
    pub taps: [i32; 5],
    /// Explicit padding, so that every byte is a field.
    pub pad: u32,
    /// A double.
    pub w: f64,
    /// A 2-vector of 64-bit integers.
    pub q: [u64; 2],
}

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("structs/round_trip", round_trip),
        case("structs/field_update", field_update),
        case("structs/by_value", by_value),
    ]
}

fn inner(r: &mut Rng) -> Inner {
    Inner {
        a: r.below(1 << 16) as u16,
        b: r.int(-32768, 32767) as i16,
        c: [
            r.below(256) as u8,
            r.below(256) as u8,
            r.below(256) as u8,
            r.below(256) as u8,
        ],
    }
}

/// `n` particles of random fields (floats of a few significant bits, so sums are exact).
pub fn particles(seed: u64, n: usize) -> Vec<Particle> {
    let mut r = Rng::new(seed);
    let f = |r: &mut Rng| r.int(-4096, 4096) as f32 * 0.25;
    (0..n)
        .map(|_| Particle {
            pos: [f(&mut r), f(&mut r), f(&mut r)],
            mass: f(&mut r),
            vel: [f(&mut r), f(&mut r), f(&mut r)],
            id: r.next_u64() as u32,
            inner: inner(&mut r),
            hist: [inner(&mut r), inner(&mut r)],
            taps: std::array::from_fn(|_| r.next_u64() as i32),
            pad: r.next_u64() as u32,
            w: r.int(-1 << 40, 1 << 40) as f64 * 0.5,
            q: [r.next_u64(), r.next_u64()],
        })
        .collect()
}

/// Every field of every element read and written back whole (each backend's struct layout
/// must be Rust's, field for field).
fn round_trip(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("struct_round_trip", |k| {
        let src = k.read::<Particle>("src");
        let dst = k.write::<Particle>("dst");
        let i = global_id(0);
        if_(i.lt(src.len()), || dst.set(i, src.at(i)));
    })
    .map_err(e)?;
    let xs = particles(1301, 300);
    let src = Buffer::from_slice(q, &xs).map_err(e)?;
    let dst = Buffer::<Particle>::new(q.device(), xs.len()).map_err(e)?;
    k.launch(q, NdRange::covering(xs.len(), 64), args![&src, &dst])
        .map_err(e)?;
    expect_eq("particles copied", &q.read(&dst).map_err(e)?, &xs)
}

/// Fields written alone, through places: a 3-vector, a field of an array of structs, an
/// element of an array field, an integer incremented in place and a double; the other fields
/// (and their bytes between) must stay as they were.
fn field_update(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("struct_fields", |k| {
        let ps = k.read_write::<Particle>("ps");
        let dt = k.scalar::<f32>("dt");
        let i = global_id(0);
        if_(i.lt(ps.len()), || {
            let p = ps.at(i);
            ps.item(i).pos.store(p.pos + p.vel * splat(dt));
            ps.item(i).hist[1].a.store(p.hist[0].a + p.inner.a);
            ps.item(i).taps[3].store(p.taps[0] ^ p.taps[4]);
            let id = ps.item(i).id;
            id.store(id.load() + 1u32);
            ps.item(i).w.store(p.w * 2.0);
        });
    })
    .map_err(e)?;
    let xs = particles(1302, 257);
    let ps = Buffer::from_slice(q, &xs).map_err(e)?;
    k.launch(q, NdRange::covering(xs.len(), 64), args![&ps, 0.5f32])
        .map_err(e)?;
    let want: Vec<Particle> = xs
        .iter()
        .map(|x| {
            let mut p = *x;
            p.pos = std::array::from_fn(|c| x.pos[c] + x.vel[c] * 0.5);
            p.hist[1].a = x.hist[0].a.wrapping_add(x.inner.a);
            p.taps[3] = x.taps[0] ^ x.taps[4];
            p.id = x.id.wrapping_add(1);
            p.w = x.w * 2.0;
            p
        })
        .collect();
    expect_eq("particles updated", &q.read(&ps).map_err(e)?, &want)
}

/// A struct passed by value at launch (one scalar parameter per scalar of its fields): a
/// 3-vector added to every element, a nested struct and a double stored into it.
fn by_value(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("struct_by_value", |k| {
        let ps = k.read_write::<Particle>("ps");
        let origin = k.by_value::<Particle>("origin");
        let i = global_id(0);
        if_(i.lt(ps.len()), || {
            ps.item(i).pos.store(ps.item(i).pos.load() + origin.pos);
            strata::builder::FieldAccess::store(&ps.item(i).hist[1], origin.hist[0]);
            ps.item(i).w.store(origin.w);
            ps.item(i).q.store(origin.q);
        });
    })
    .map_err(e)?;
    let xs = particles(1303, 100);
    let o = particles(1304, 1)[0];
    let ps = Buffer::from_slice(q, &xs).map_err(e)?;
    k.launch(q, NdRange::covering(xs.len(), 64), args![&ps, o])
        .map_err(e)?;
    let want: Vec<Particle> = xs
        .iter()
        .map(|x| {
            let mut p = *x;
            p.pos = std::array::from_fn(|c| x.pos[c] + o.pos[c]);
            p.hist[1] = o.hist[0];
            p.w = o.w;
            p.q = o.q;
            p
        })
        .collect();
    expect_eq("particles moved", &q.read(&ps).map_err(e)?, &want)
}

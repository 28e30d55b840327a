//! 2-D and 3-D buffers with pitched rows: odd widths so that the pitch is not the width, and
//! the rectangular transfers (write, read, copy, fill of regions) against a host model.

use super::{case, check, e, expect_eq, Case};
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("pitched/regions_2d", regions_2d),
        case("pitched/regions_3d", regions_3d),
        case("pitched/region_errors", region_errors),
    ]
}

/// A host image of `n` values that differ from each other and from their neighbours.
fn pattern(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761).wrapping_add(seed) >> 20)
        .collect()
}

/// Checks that the buffer's rows are padded: the pitch is the width rounded up to the
/// device's alignment.
fn padded<T: strata::builder::Element, const D: usize>(
    q: &Queue,
    b: &strata::PitchedBuffer<T, D>,
) -> Result<(), String> {
    let want = strata::pitch_elements(
        b.extent()[0],
        std::mem::size_of::<T>(),
        q.device().info().pitch_alignment,
    );
    check(b.pitch() == want && b.pitch() > b.extent()[0], || {
        format!(
            "pitch {} for width {} (want {want}, padded)",
            b.pitch(),
            b.extent()[0]
        )
    })
}

/// A host model of a `D`-dimensional image: `[w, h, d]` packed tightly.
struct Model<T> {
    ext: [usize; 3],
    data: Vec<T>,
}

impl<T: Copy> Model<T> {
    fn idx(&self, x: usize, y: usize, z: usize) -> usize {
        (z * self.ext[1] + y) * self.ext[0] + x
    }
    /// Calls `f(x, y, z, i)` for every element of the box `size` at `origin`, `i` counting
    /// them in packed order.
    fn each(origin: [usize; 3], size: [usize; 3], mut f: impl FnMut(usize, usize, usize, usize)) {
        let mut i = 0;
        for z in origin[2]..origin[2] + size[2] {
            for y in origin[1]..origin[1] + size[1] {
                for x in origin[0]..origin[0] + size[0] {
                    f(x, y, z, i);
                    i += 1;
                }
            }
        }
    }
    fn write(&mut self, origin: [usize; 3], size: [usize; 3], src: &[T]) {
        Self::each(origin, size, |x, y, z, i| {
            let j = self.idx(x, y, z);
            self.data[j] = src[i];
        });
    }
    fn read(&self, origin: [usize; 3], size: [usize; 3]) -> Vec<T> {
        let mut v = Vec::new();
        Self::each(origin, size, |x, y, z, _| {
            v.push(self.data[self.idx(x, y, z)])
        });
        v
    }
}

/// Rectangular write, read, copy (between buffers of different extents and pitches, and
/// within one buffer) and fill of regions of 2-D buffers of `u8` (1-byte elements, odd
/// widths) and `[f32; 3]`, each checked against a host model.
fn regions_2d(q: &Queue) -> Result<(), String> {
    // u8: rows of 29 bytes padded to the alignment.
    let (w, h) = (29usize, 11usize);
    let init: Vec<u8> = pattern(w * h, 4).iter().map(|&v| v as u8).collect();
    let a = Buffer2::from_slice(q, [w, h], &init).map_err(e)?;
    padded(q, &a)?;
    let mut ma = Model {
        ext: [w, h, 1],
        data: init,
    };
    expect_eq("u8 image round trip", &a.to_vec(q).map_err(e)?, &ma.data)?;
    // Write a 5 x 3 block at (7, 2).
    let block: Vec<u8> = (100..115).collect();
    q.write_region(&a, [7, 2], [5, 3], &block).map_err(e)?;
    ma.write([7, 2, 0], [5, 3, 1], &block);
    expect_eq(
        "read of a region around the written block",
        &q.read_region(&a, [5, 1], [10, 6]).map_err(e)?,
        &ma.read([5, 1, 0], [10, 6, 1]),
    )?;
    // Fill a region, then copy a region to another buffer of another extent (so another
    // pitch), at another origin.
    q.fill_region(&a, 7u8, [20, 8], [9, 3]).map_err(e)?;
    ma.write([20, 8, 0], [9, 3, 1], &[7u8; 27]);
    let (w2, h2) = (600usize, 5usize);
    let b = Buffer2::<u8>::new(q, [w2, h2]).map_err(e)?;
    check(b.pitch() != a.pitch(), || {
        format!("pitches {} and {} should differ", a.pitch(), b.pitch())
    })?;
    b.fill(q, 1).map_err(e)?;
    let mut mb = Model {
        ext: [w2, h2, 1],
        data: vec![1u8; w2 * h2],
    };
    q.copy_region(&a, [3, 6], &b, [590, 1], [10, 4])
        .map_err(e)?;
    let moved = ma.read([3, 6, 0], [10, 4, 1]);
    mb.write([590, 1, 0], [10, 4, 1], &moved);
    expect_eq("copied region", &b.to_vec(q).map_err(e)?, &mb.data)?;
    // A copy within one buffer, regions apart.
    q.copy_region(&a, [0, 0], &a, [10, 6], [8, 5]).map_err(e)?;
    let moved = ma.read([0, 0, 0], [8, 5, 1]);
    ma.write([10, 6, 0], [8, 5, 1], &moved);
    expect_eq("copy within a buffer", &a.to_vec(q).map_err(e)?, &ma.data)?;
    // An empty region changes nothing.
    q.write_region(&a, [4, 4], [0, 3], &[]).map_err(e)?;
    expect_eq(
        "empty region read",
        &q.read_region(&a, [29, 11], [0, 0]).map_err(e)?,
        &Vec::<u8>::new(),
    )?;
    // [f32; 3] pixels: 12-byte elements.
    let (w, h) = (11usize, 6usize);
    let px = |v: u32| [v as f32, -(v as f32), v as f32 * 0.25];
    let init: Vec<[f32; 3]> = pattern(w * h, 5).into_iter().map(px).collect();
    let c = Buffer2::from_slice(q, [w, h], &init).map_err(e)?;
    padded(q, &c)?;
    let mut mc = Model {
        ext: [w, h, 1],
        data: init,
    };
    q.fill_region(&c, [1.5, 2.5, 3.5], [2, 1], [4, 4])
        .map_err(e)?;
    mc.write([2, 1, 0], [4, 4, 1], &[[1.5, 2.5, 3.5]; 16]);
    let patch: Vec<[f32; 3]> = (0..6).map(px).collect();
    q.write_region(&c, [8, 3], [3, 2], &patch).map_err(e)?;
    mc.write([8, 3, 0], [3, 2, 1], &patch);
    expect_eq("[f32; 3] regions", &c.to_vec(q).map_err(e)?, &mc.data)
}

/// The same in 3-D: regions through slices, a copy between volumes of different extents.
fn regions_3d(q: &Queue) -> Result<(), String> {
    let (w, h, d) = (13usize, 6usize, 5usize);
    let init = pattern(w * h * d, 6);
    let a = Buffer3::from_slice(q, [w, h, d], &init).map_err(e)?;
    padded(q, &a)?;
    let mut ma = Model {
        ext: [w, h, d],
        data: init,
    };
    expect_eq("volume round trip", &a.to_vec(q).map_err(e)?, &ma.data)?;
    let block: Vec<u32> = (0..4 * 3 * 2).map(|i| 1000 + i).collect();
    q.write_region(&a, [5, 2, 1], [4, 3, 2], &block)
        .map_err(e)?;
    ma.write([5, 2, 1], [4, 3, 2], &block);
    q.fill_region(&a, 9u32, [0, 4, 3], [13, 2, 2]).map_err(e)?;
    ma.write([0, 4, 3], [13, 2, 2], &[9u32; 52]);
    expect_eq(
        "volume region read",
        &q.read_region(&a, [3, 1, 0], [8, 5, 5]).map_err(e)?,
        &ma.read([3, 1, 0], [8, 5, 5]),
    )?;
    let (w2, h2, d2) = (40usize, 3usize, 4usize);
    let b = Buffer3::<u32>::new(q, [w2, h2, d2]).map_err(e)?;
    let mut mb = Model {
        ext: [w2, h2, d2],
        data: vec![0u32; w2 * h2 * d2],
    };
    q.copy_region(&a, [4, 2, 1], &b, [30, 0, 2], [9, 3, 2])
        .map_err(e)?;
    let moved = ma.read([4, 2, 1], [9, 3, 2]);
    mb.write([30, 0, 2], [9, 3, 2], &moved);
    expect_eq("copied volume region", &b.to_vec(q).map_err(e)?, &mb.data)
}

/// Regions outside the extent, host slices of the wrong length, overlapping copies within
/// one buffer are typed errors; nothing is written.
fn region_errors(q: &Queue) -> Result<(), String> {
    let a = Buffer2::<u32>::new(q, [10, 4]).map_err(e)?;
    let b = Buffer3::<u32>::new(q, [3, 3, 3]).map_err(e)?;
    let msg = |r: strata::Result<()>| match r {
        Ok(()) => "no error".to_string(),
        Err(err) => err.to_string(),
    };
    let huge = format!(
        "fill_region: the region of [2, 1] elements at [{}, 0] does not fit the extent [10, 4] (dimension 0)",
        usize::MAX
    );
    let cases = [
        (
            msg(q.write_region(&a, [8, 0], [3, 1], &[0; 3])),
            "write_region: the region of [3, 1] elements at [8, 0] does not fit the extent [10, 4] (dimension 0)",
        ),
        (
            msg(q.read_region(&b, [0, 0, 2], [1, 1, 2]).map(drop)),
            "read_region: the region of [1, 1, 2] elements at [0, 0, 2] does not fit the extent [3, 3, 3] (dimension 2)",
        ),
        (
            msg(q.write_region(&a, [0, 0], [2, 2], &[1; 5])),
            "write_region: the host slice has 5 elements but the region [2, 2] holds 4 (packed tightly, x fastest)",
        ),
        (
            msg(q.copy_region(&a, [0, 0], &a, [2, 1], [4, 2])),
            "copy_region: the source region at [0, 0] and the destination region at [2, 1] ([4, 2] elements) overlap in the same buffer",
        ),
        (
            msg(q.fill_region(&a, 1, [usize::MAX, 0], [2, 1])),
            huge.as_str(),
        ),
    ];
    for (got, want) in cases {
        check(got.contains(want), || {
            format!("error `{got}` does not contain `{want}`")
        })?;
    }
    expect_eq("nothing written", &a.to_vec(q).map_err(e)?, &[0u32; 40])
}

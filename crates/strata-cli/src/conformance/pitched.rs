//! 2-D and 3-D buffers with pitched rows: kernels that index them by coordinates (a blur, a
//! transpose of RGB pixels, a 3-D kernel), odd widths so that the pitch is not the width, and
//! the rectangular transfers (write, read, copy, fill of regions) against a host model.

use super::{case, check, e, expect_eq, Case};
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("pitched/blur_2d", blur_2d),
        case("pitched/transpose_rgb", transpose_rgb),
        case("pitched/volume_3d", volume_3d),
        case("pitched/regions_2d", regions_2d),
        case("pitched/regions_3d", regions_3d),
        case("pitched/regions_enqueued", regions_enqueued),
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

/// A 3 x 3 box sum with clamped edges on a 37 x 23 `f32` image (small integers, so every
/// backend's sums are exact), launched over the image's extent and guarded by it.
fn blur_2d(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("blur_2d", |k| {
        let src = k.read2::<f32>("src");
        let dst = k.write2::<f32>("dst");
        let p = global_id2();
        let ext = src.extent();
        if_(in_bounds(p, ext), || {
            let x = p.x();
            let y = p.y();
            let xm = x.max(1u32) - 1u32;
            let xp = (x + 1u32).min(ext.x() - 1u32);
            let ym = y.max(1u32) - 1u32;
            let yp = (y + 1u32).min(ext.y() - 1u32);
            let sum = src.at2(ym, xm)
                + src.at2(ym, x)
                + src.at2(ym, xp)
                + src.at2(y, xm)
                + src.at2(y, x)
                + src.at2(y, xp)
                + src.at2(yp, xm)
                + src.at2(yp, x)
                + src.at2(yp, xp);
            dst.set2(y, x, sum);
        });
    })
    .map_err(e)?;
    let (w, h) = (37usize, 23usize);
    let host: Vec<f32> = pattern(w * h, 1).iter().map(|&v| (v % 64) as f32).collect();
    let src = Buffer2::from_slice(q, [w, h], &host).map_err(e)?;
    let dst = Buffer2::<f32>::new(q, [w, h]).map_err(e)?;
    padded(q, &src)?;
    k.launch(
        q,
        NdRange::covering(src.extent(), [8, 8]),
        args![&src, &dst],
    )
    .map_err(e)?;
    let mut want = vec![0.0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            // The kernel's order of additions.
            let mut s = None;
            for yy in [y.saturating_sub(1), y, (y + 1).min(h - 1)] {
                for xx in [x.saturating_sub(1), x, (x + 1).min(w - 1)] {
                    let v = host[yy * w + xx];
                    s = Some(s.map_or(v, |s: f32| s + v));
                }
            }
            want[y * w + x] = s.unwrap_or(0.0);
        }
    }
    expect_eq("3 x 3 box sum", &dst.to_vec(q).map_err(e)?, &want)
}

/// Transposes a 13 x 7 image of `[f32; 3]` pixels (12 bytes: the pitch rule's odd element
/// size) into a 7 x 13 one; the guard uses the source's extent.
fn transpose_rgb(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("transpose_rgb", |k| {
        let src = k.read2::<[f32; 3]>("src");
        let dst = k.write2::<[f32; 3]>("dst");
        let p = global_id2();
        if_(in_bounds(p, src.extent()), || {
            dst.set((p.x(), p.y()), src.at((p.y(), p.x())));
        });
    })
    .map_err(e)?;
    let (w, h) = (13usize, 7usize);
    let host: Vec<[f32; 3]> = pattern(w * h * 3, 2)
        .chunks(3)
        .map(|c| [c[0] as f32, c[1] as f32 * 0.5, -(c[2] as f32)])
        .collect();
    let src = Buffer2::from_slice(q, [w, h], &host).map_err(e)?;
    let dst = Buffer2::<[f32; 3]>::new(q, [h, w]).map_err(e)?;
    padded(q, &src)?;
    k.launch(q, NdRange::covering([w, h], [4, 4]), args![&src, &dst])
        .map_err(e)?;
    let mut want = vec![[0.0f32; 3]; w * h];
    for y in 0..h {
        for x in 0..w {
            want[x * h + y] = host[y * w + x];
        }
    }
    expect_eq("transposed pixels", &dst.to_vec(q).map_err(e)?, &want)
}

/// A 3-D kernel on a 9 x 5 x 4 `u32` volume: each element plus its neighbour in the next
/// slice (wrapping around), times the slice number plus one, through the slice pitch.
fn volume_3d(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("volume_3d", |k| {
        let vol = k.read3::<u32>("vol");
        let out = k.write3::<u32>("out");
        let p = global_id3();
        let ext = vol.extent();
        if_(in_bounds(p, ext), || {
            let x = p.x();
            let y = p.y();
            let z = p.z();
            let next = select::<u32>((z + 1u32).lt(ext.z()), z + 1u32, lit(0u32));
            let v = vol.at3(z, y, x) + vol.at((next, y, x));
            out.set3(z, y, x, v * (z + 1u32));
        });
    })
    .map_err(e)?;
    let (w, h, d) = (9usize, 5usize, 4usize);
    let host = pattern(w * h * d, 3);
    let vol = Buffer3::from_slice(q, [w, h, d], &host).map_err(e)?;
    let out = Buffer3::<u32>::new(q, [w, h, d]).map_err(e)?;
    padded(q, &vol)?;
    check(vol.slice_pitch() == vol.pitch() * h, || {
        format!(
            "slice pitch {} for pitch {}",
            vol.slice_pitch(),
            vol.pitch()
        )
    })?;
    k.launch(
        q,
        NdRange::covering(vol.extent(), [4, 4, 2]),
        args![&vol, &out],
    )
    .map_err(e)?;
    let at = |x: usize, y: usize, z: usize| host[(z * h + y) * w + x];
    let mut want = vec![0u32; w * h * d];
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                let v = at(x, y, z).wrapping_add(at(x, y, (z + 1) % d));
                want[(z * h + y) * w + x] = v.wrapping_mul(z as u32 + 1);
            }
        }
    }
    expect_eq("3-D neighbours", &out.to_vec(q).map_err(e)?, &want)
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

/// The `enqueue_` forms chained by events (write, copy, fill, read), and the layout the
/// kernels index: element `(x, y, z)` of the flat memory (`as_buffer`) at
/// `z * slice_pitch + y * pitch + x`, the padding untouched by region transfers.
fn regions_enqueued(q: &Queue) -> Result<(), String> {
    let (w, h, d) = (5usize, 3usize, 2usize);
    let a = Buffer3::<u16>::new(q, [w, h, d]).map_err(e)?;
    let b = Buffer3::<u16>::new(q, [w, h, d]).map_err(e)?;
    b.fill(q, 0xffff).map_err(e)?;
    let host: Vec<u16> = (1..=(w * h * d) as u16).collect();
    let written = q
        .enqueue_write_region(&a, [0; 3], [w, h, d], &host, &[])
        .map_err(e)?;
    let copied = q
        .enqueue_copy_region(&a, [1, 0, 0], &b, [0, 1, 1], [4, 2, 1], &[&written])
        .map_err(e)?;
    let filled = q
        .enqueue_fill_region(&b, 7, [4, 0, 0], [1, 3, 2], &[&copied])
        .map_err(e)?;
    let read = q
        .enqueue_read_region(&b, [0; 3], [w, h, d], &[&filled])
        .map_err(e)?;
    let got = read.wait().map_err(e)?;
    let mut want = vec![0xffffu16; w * h * d];
    for y in 0..2 {
        for x in 0..4 {
            want[(h + y + 1) * w + x] = host[y * w + x + 1];
        }
    }
    for z in 0..d {
        for y in 0..h {
            want[(z * h + y) * w + 4] = 7;
        }
    }
    expect_eq("enqueued region transfers", &got, &want)?;
    // The flat memory: each element at its pitched position, the padding still zero.
    let flat = q.read(a.as_buffer()).map_err(e)?;
    check(flat.len() == a.slice_pitch() * d, || {
        format!(
            "{} elements for slice pitch {}",
            flat.len(),
            a.slice_pitch()
        )
    })?;
    let mut want = vec![0u16; flat.len()];
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                want[z * a.slice_pitch() + y * a.pitch() + x] = host[(z * h + y) * w + x];
            }
        }
    }
    expect_eq("pitched layout", &flat, &want)
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

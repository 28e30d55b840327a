//! Tensor fields (`strata::fields`) against host computations on every device present (the CPU
//! backends and each OpenCL device): host round trips in 0 to 3 dimensions and several tensor
//! types, implicit addressing, relative and absolute reads with each border policy, fusion
//! (kernel launches counted: a point-wise chain is one kernel; a non-local read of a computed
//! field ends a kernel), the kernel cache, eager operators with several outputs, explicit
//! thread allocation and local-memory tiles, the built-ins, and the typed errors. The field
//! kernels also compile to PTX with NVRTC when it is present.
//!
//! When `STRATA_REQUIRE` contains `opencl`, having no OpenCL device is a failure.

use strata::builder::barrier;
use strata::fields::{Border, Field, FieldError, Fields, Shape, Tensor};
use strata::prelude::*;
use strata::{BackendKind, Error};

/// Taken for reading by every test, for writing by the one that counts compilations: a
/// device's compilation count counts every user of the device (the other tests of this file
/// compile on the same `cpu` device at the same time).
static COMPILES: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn required(what: &str) -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == what))
}

/// Every device but CUDA ones (CUDA is covered by the NVRTC test); an OpenCL device is
/// required when `STRATA_REQUIRE` says.
fn contexts() -> Vec<Fields> {
    let all: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend != BackendKind::Cuda)
        .collect();
    if !all.iter().any(|d| d.info().backend == BackendKind::OpenCl) {
        assert!(
            !required("opencl"),
            "STRATA_REQUIRE names opencl, but no OpenCL device is listed"
        );
        eprintln!("no OpenCL device: fields checked on the CPU backends only");
    }
    all.iter()
        .map(|d| Fields::new(&Queue::new(d).unwrap()))
        .collect()
}

fn name(fx: &Fields) -> String {
    fx.device().info().spec()
}

/// Deterministic test data.
fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let x = (i as u32)
                .wrapping_mul(2654435761)
                .wrapping_add(seed.wrapping_mul(40503));
            ((x >> 8) % 1000) as f32 / 100.0 - 5.0
        })
        .collect()
}

#[test]
fn host_round_trip_in_every_dimension_and_tensor_type() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    for fx in contexts() {
        for shape in [
            Shape::d0(),
            Shape::d1(37),
            Shape::d2(5, 9),
            Shape::d3(3, 4, 5),
        ] {
            let n = shape.points();
            let s = data(n, 1);
            assert_eq!(fx.from_slice(shape, &s).unwrap().to_vec().unwrap(), s);
            let v3: Vec<[f32; 3]> = (0..n).map(|i| [s[i], -s[i], i as f32]).collect();
            let f = fx.from_slice(shape, &v3).unwrap();
            assert_eq!(f.shape(), shape);
            assert_eq!(f.to_vec().unwrap(), v3);
            let rgba: Vec<[u8; 4]> = (0..n).map(|i| [i as u8, 2, 3, 255]).collect();
            assert_eq!(fx.from_slice(shape, &rgba).unwrap().to_vec().unwrap(), rgba);
            let z = fx.zeros::<[i32; 2]>(shape).unwrap().to_vec().unwrap();
            assert_eq!(z, vec![[0, 0]; n], "{}", name(&fx));
        }
    }
}

/// Cog's `half`, written once for every small tensor type.
fn half<T: Tensor<Elem = f32>>(f: &Field<T>) -> Field<T> {
    f.map(|x| T::scale(x, lit(0.5f32)))
}

#[test]
fn one_operator_serves_scalar_vector_matrix_and_colour_fields() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    for fx in contexts() {
        let shape = Shape::d2(6, 7);
        let n = shape.points();
        let s = data(n, 2);
        let scalar = fx.from_slice(shape, &s).unwrap();
        let h: Vec<f32> = s.iter().map(|x| x * 0.5).collect();
        assert_eq!(half(&scalar).to_vec().unwrap(), h);
        let vector: Vec<[f32; 3]> = (0..n).map(|i| [s[i], 1.0, -2.0]).collect();
        let got = half(&fx.from_slice(shape, &vector).unwrap())
            .to_vec()
            .unwrap();
        assert_eq!(got, (0..n).map(|i| [h[i], 0.5, -1.0]).collect::<Vec<_>>());
        // A 2x2 matrix field and an RGBA colour field are both [f32; 4] per point.
        let matrix: Vec<[f32; 4]> = (0..n).map(|i| [s[i], 2.0, 4.0, 6.0]).collect();
        let got = half(&fx.from_slice(shape, &matrix).unwrap())
            .to_vec()
            .unwrap();
        assert_eq!(
            got,
            (0..n).map(|i| [h[i], 1.0, 2.0, 3.0]).collect::<Vec<_>>()
        );
        let colour: Vec<[f32; 4]> = (0..n).map(|i| [0.2, 0.4, s[i], 1.0]).collect();
        let got = half(&fx.from_slice(shape, &colour).unwrap())
            .to_vec()
            .unwrap();
        assert_eq!(
            got,
            (0..n).map(|i| [0.1, 0.2, h[i], 0.5]).collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_point_wise_chain_is_one_kernel_and_unfused_is_one_per_operator() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    for fx in contexts() {
        for fuse in [true, false] {
            let fx = fx.with_fusion(fuse);
            let shape = Shape::d2(33, 17);
            let (a, b) = (data(shape.points(), 3), data(shape.points(), 4));
            let fa = fx.from_slice(shape, &a).unwrap();
            let fb = fx.from_slice(shape, &b).unwrap();
            // five operators: mul, map, add, zip_map, map
            let prod = &fa * &fb;
            let shifted = prod.map(|x| x + 1.0f32);
            let sum = &shifted + &fa;
            let z = sum.zip_map(&fb, |s, b| s.max(b));
            let out = z.map(|x| x.abs().sqrt());
            let before = fx.queue().launch_count();
            let got = out.to_vec().unwrap();
            let launches = fx.queue().launch_count() - before;
            assert_eq!(
                launches,
                if fuse { 1 } else { 5 },
                "{} fuse={fuse}",
                name(&fx)
            );
            let want: Vec<f32> = (0..a.len())
                .map(|i| ((a[i] * b[i] + 1.0 + a[i]).max(b[i])).abs().sqrt())
                .collect();
            assert_eq!(got, want, "{}", name(&fx));
            // Evaluated fields are data: reading again runs nothing.
            assert!(!out.is_lazy());
            out.to_vec().unwrap();
            assert_eq!(fx.queue().launch_count() - before, launches);
        }
    }
}

/// Host model of the border policies.
fn border(i: i64, n: i64, b: Border) -> Option<usize> {
    let r = match b {
        Border::Clamp => i.clamp(0, n - 1),
        Border::Wrap => i.rem_euclid(n),
        Border::Zero => {
            if i < 0 || i >= n {
                return None;
            }
            i
        }
        Border::Mirror => {
            let p = (2 * n - 2).max(1);
            let m = i.rem_euclid(p);
            if m < n {
                m
            } else {
                p - m
            }
        }
    };
    Some(r as usize)
}

#[test]
fn relative_and_absolute_reads_with_every_border_policy() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    for fx in contexts() {
        let (rows, cols) = (5usize, 7usize);
        let shape = Shape::d2(rows, cols);
        let src = data(shape.points(), 5);
        let f = fx.from_slice(shape, &src).unwrap();
        for b in [Border::Clamp, Border::Wrap, Border::Zero, Border::Mirror] {
            // Offsets beyond one period too.
            for (dr, dc) in [(0, 1), (-1, 0), (2, -3), (-6, 9)] {
                let g = f.clone();
                let out = fx.op("shift", shape, move |p| p.read_rel(&g, &[dr, dc], b));
                let got = out.to_vec().unwrap();
                for r in 0..rows {
                    for c in 0..cols {
                        let rr = border(r as i64 + dr as i64, rows as i64, b);
                        let cc = border(c as i64 + dc as i64, cols as i64, b);
                        let want = match (rr, cc) {
                            (Some(rr), Some(cc)) => src[rr * cols + cc],
                            _ => 0.0,
                        };
                        assert_eq!(
                            got[r * cols + c],
                            want,
                            "{} {b:?} ({dr},{dc}) at ({r},{c})",
                            name(&fx)
                        );
                    }
                }
            }
        }
        // Absolute coordinates (Cog's _readTensor(f, row, column)), 1-D mirror and a 3-D wrap.
        let g = f.clone();
        let flipped = fx.op("flip", shape, move |p| {
            let (r, c) = (p.rows() - p.row() - 1i32, p.columns() - p.column() - 1i32);
            p.read_at(&g, &[r, c], Border::Clamp)
        });
        let want: Vec<f32> = (0..shape.points())
            .map(|i| src[shape.points() - 1 - i])
            .collect();
        assert_eq!(flipped.to_vec().unwrap(), want);
        let line = fx
            .from_slice(Shape::d1(4), &[1.0f32, 2.0, 3.0, 4.0])
            .unwrap();
        let l2 = line.clone();
        let m = fx.op("mirror1", Shape::d1(4), move |p| {
            p.read_rel(&l2, &[-2], Border::Mirror)
        });
        assert_eq!(m.to_vec().unwrap(), vec![3.0, 2.0, 1.0, 2.0]);
        let vol: Vec<i32> = (0..24).collect();
        let v = fx.from_slice(Shape::d3(2, 3, 4), &vol).unwrap();
        let w = fx.op("wrap3", Shape::d3(2, 3, 4), move |p| {
            p.read_rel(&v, &[1, -1, 1], Border::Wrap)
        });
        let got = w.to_vec().unwrap();
        for l in 0..2i64 {
            for r in 0..3i64 {
                for c in 0..4i64 {
                    let src = ((l + 1).rem_euclid(2) * 12
                        + (r - 1).rem_euclid(3) * 4
                        + (c + 1).rem_euclid(4)) as i32;
                    assert_eq!(got[(l * 12 + r * 4 + c) as usize], src);
                }
            }
        }
        // A 0-D field is read everywhere.
        let s = fx.from_slice(Shape::d0(), &[10.0f32]).unwrap();
        let plus = f.zip_map(&f, |a, _| a);
        let s2 = s.clone();
        let added = fx.op("add_scalar", shape, move |p| p.read(&plus) + p.read(&s2));
        let got = added.to_vec().unwrap();
        assert!(got.iter().zip(&src).all(|(g, s)| *g == s + 10.0));
    }
}

#[test]
fn a_non_local_read_of_a_computed_field_materializes_it_once() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    for fx in contexts() {
        let shape = Shape::d2(9, 11);
        let src = data(shape.points(), 6);
        let f = fx.from_slice(shape, &src).unwrap();
        let sq = f.map(|x| x * x); // lazy producer
        let (a, b) = (sq.clone(), sq.clone());
        // Two consumers read `sq` at neighbours: `sq` runs once, then each consumer is a kernel.
        let right = fx.op("right", shape, move |p| {
            p.read_rel(&a, &[0, 1], Border::Clamp)
        });
        let down = fx.op("down", shape, move |p| {
            p.read_rel(&b, &[1, 0], Border::Clamp) + p.read(&b)
        });
        let before = fx.queue().launch_count();
        let r = right.to_vec().unwrap();
        assert_eq!(fx.queue().launch_count() - before, 2, "{}", name(&fx));
        let d = down.to_vec().unwrap();
        assert_eq!(fx.queue().launch_count() - before, 3, "{}", name(&fx));
        let (rows, cols) = (9, 11);
        let at = |r: usize, c: usize| src[r.min(rows - 1) * cols + c.min(cols - 1)].powi(2);
        for y in 0..rows {
            for x in 0..cols {
                assert_eq!(r[y * cols + x], at(y, x + 1));
                assert_eq!(d[y * cols + x], at(y + 1, x) + at(y, x));
            }
        }
    }
}

#[test]
fn fused_kernels_are_cached() {
    // Alone: the other tests compile on the same devices, which count for all users.
    let _alone = COMPILES.write().unwrap_or_else(|p| p.into_inner());
    let fx = Fields::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap());
    let run = |shape: Shape, seed: u32| {
        let a = fx.from_slice(shape, &data(shape.points(), seed)).unwrap();
        let g = a.clone();
        let blur = fx.op("blur_x", shape, move |p| {
            (p.read_rel(&g, &[0, -1], Border::Mirror)
                + p.read(&g)
                + p.read_rel(&g, &[0, 1], Border::Mirror))
                / 3.0f32
        });
        (&blur * &a).map(|x| x - 1.0f32).to_vec().unwrap()
    };
    run(Shape::d2(8, 8), 1);
    let compiled = fx.device().compile_count();
    // The same graph again, on other data and another size: nothing compiles.
    run(Shape::d2(8, 8), 2);
    run(Shape::d2(13, 5), 3);
    assert_eq!(fx.device().compile_count(), compiled);
}

#[test]
fn several_outputs_of_different_shapes_and_types() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    for fx in contexts() {
        let shape = Shape::d2(7, 10);
        let src = data(shape.points(), 7);
        let x = fx.from_slice(shape, &src).unwrap();
        let lazy = x.map(|v| v + 1.0f32); // fused into the operator
        let mut op = fx.operator("split", shape);
        let half = op.output::<f32>(shape);
        let pair = op.output::<[f32; 2]>(shape);
        let row_max = op.output::<f32>(Shape::d1(7));
        let before = fx.queue().launch_count();
        let outs = op
            .run(|p| {
                let v = p.read(&lazy);
                p.write(half, v * 0.5f32);
                p.write(pair, vec2(v, -v));
                // Column 0 writes the maximum of its row into a 1-D output (a non-local write).
                let (r, c) = (p.row(), p.column());
                if_(c.eq(0i32).and(p.in_shape()), || {
                    let m = var(p.read_at(&lazy, &[r, lit(0i32)], Border::Clamp));
                    for_range(1i32, p.columns(), |k| {
                        m.set(m.get().max(p.read_at(&lazy, &[r, k], Border::Clamp)));
                    });
                    p.write_at(row_max, &[r], m.get());
                });
            })
            .unwrap();
        // One kernel for the operator, one to materialize `lazy` for the non-local reads.
        assert_eq!(fx.queue().launch_count() - before, 2, "{}", name(&fx));
        let h = outs.get(half).unwrap().to_vec().unwrap();
        let pr = outs.get(pair).unwrap().to_vec().unwrap();
        let rm = outs.get(row_max).unwrap();
        assert_eq!(rm.shape(), Shape::d1(7));
        let rm = rm.to_vec().unwrap();
        for i in 0..src.len() {
            assert_eq!(h[i], (src[i] + 1.0) * 0.5);
            assert_eq!(pr[i], [src[i] + 1.0, -(src[i] + 1.0)]);
        }
        for r in 0..7 {
            let want = src[r * 10..r * 10 + 10]
                .iter()
                .map(|v| v + 1.0)
                .fold(f32::MIN, f32::max);
            assert_eq!(rm[r], want, "{}", name(&fx));
        }
        // An output handle of another operator with another tensor type is a typed error.
        let mut other = fx.operator("other", shape);
        let wrong = other.output::<[f32; 2]>(shape);
        let e = outs.get(wrong).err().unwrap();
        assert_eq!(
            e.to_string(),
            "Outputs::get: output 0 does not belong to this operator (or has another tensor type)"
        );
        let mut third = fx.operator("third", shape);
        let _first = third.output::<f32>(shape);
        let e = third
            .run(|p| p.write(wrong, vec2(lit(1.0f32), lit(2.0f32))))
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("output 0 does not belong to this operator"),
            "{e}"
        );
    }
}

/// Leaves memory of `points` `f32`s holding 7.0 for the next allocation of that size (the
/// CPU backends keep a dropped buffer of 1 MiB or more and hand it to the next allocation of
/// its length, not zeroed where the next command writes all of it).
fn leave_sevens(fx: &Fields, points: usize) {
    let junk = Buffer::<f32>::from_slice(fx.queue(), &vec![7.0f32; points]).unwrap();
    fx.queue().finish().unwrap();
    drop(junk);
}

/// Outputs are allocated without zeroing only where the kernel writes every point: an
/// operator's output written under a condition, a lazy operator or a big field that returns
/// early at some points, are zero where nothing wrote, even in reused memory.
#[test]
fn outputs_are_zero_where_nothing_writes_even_in_reused_memory() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    for fx in contexts() {
        // 1 MiB and more (kept for reuse on the CPU backends), a length no other test uses.
        let shape = Shape::d2(513, 517);
        let n = shape.points();
        let src = data(n, 21);
        let x = fx.from_slice(shape, &src).unwrap();
        let mut op = fx.operator("even_columns", shape);
        let (even, all) = (op.output::<f32>(shape), op.output::<f32>(shape));
        leave_sevens(&fx, n);
        let outs = op
            .run(|p| {
                let v = p.read(&x);
                p.write(all, v + 1.0f32);
                if_((p.column() % 2i32).eq(0i32), || p.write(even, v));
            })
            .unwrap();
        let (e, a) = (
            outs.get(even).unwrap().to_vec().unwrap(),
            outs.get(all).unwrap().to_vec().unwrap(),
        );
        for i in 0..n {
            let want = if (i % 517) % 2 == 0 { src[i] } else { 0.0 };
            assert_eq!(e[i], want, "{} point {i}", name(&fx));
            assert_eq!(a[i], src[i] + 1.0, "{} point {i}", name(&fx));
        }
        // A lazy operator whose work-items of column 0 return before storing.
        leave_sevens(&fx, n);
        let x2 = x.clone();
        let ret = fx.op("return_at_column_0", shape, move |p| {
            if_(p.column().eq(0i32), return_);
            p.read(&x2) * 2.0f32
        });
        let got = ret.to_vec().unwrap();
        for i in 0..n {
            let want = if i % 517 == 0 { 0.0 } else { src[i] * 2.0 };
            assert_eq!(got[i], want, "{} point {i}", name(&fx));
        }
        // A big field (2 elements per point) whose operator returns at column 0 too.
        let half = Shape::d2(513, 517 / 2 + 1);
        let m = half.points();
        leave_sevens(&fx, 2 * m);
        let big = fx.big_op("big_return", half, &[2], move |p, e| {
            if_(p.column().eq(0i32), return_);
            (p.column() + e.cast::<i32>()).cast::<f32>()
        });
        let got = big.to_vec().unwrap();
        let cols = 517 / 2 + 1;
        for i in 0..m {
            for e in 0..2 {
                let c = i % cols;
                let want = if c == 0 { 0.0 } else { (c + e) as f32 };
                assert_eq!(got[2 * i + e], want, "{} point {i} element {e}", name(&fx));
            }
        }
    }
}

#[test]
fn thread_allocation_and_local_memory_tiles() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    for fx in contexts() {
        // Block sums of 8 x 8 tiles: one work-item per input point in 8 x 8 work-groups, the
        // tile in local memory, one work-item per group writes its block's sum and maximum.
        let (rows, cols) = (24usize, 40usize);
        let shape = Shape::d2(rows, cols);
        let src: Vec<f32> = (0..shape.points()).map(|i| (i % 17) as f32).collect();
        let x = fx.from_slice(shape, &src).unwrap();
        let blocks = Shape::d2(rows / 8, cols / 8);
        let mut op = fx
            .operator("block_sums", blocks)
            .global_threads(shape)
            .local_threads(&[8, 8]);
        let sums = op.output::<f32>(blocks);
        let maxes = op.output::<f32>(blocks);
        let outs = op
            .run(|p| {
                let tile = p.local_array::<f32>("tile", 64);
                let (lr, lc) = (p.local(1), p.local(2));
                let v = p.read(&x);
                tile.set((lr * 8i32 + lc).cast::<u32>(), v);
                barrier();
                if_(lr.eq(0i32).and(lc.eq(0i32)), || {
                    let s = var(lit(0.0f32));
                    let m = var(lit(f32::MIN));
                    for_range(0u32, 64u32, |k| {
                        s.set(s.get() + tile.at(k));
                        m.set(m.get().max(tile.at(k)));
                    });
                    let (gr, gc) = (p.group(1), p.group(2));
                    p.write_at(sums, &[gr, gc], s.get());
                    p.write_at(maxes, &[gr, gc], m.get());
                });
            })
            .unwrap();
        let s = outs.get(sums).unwrap().to_vec().unwrap();
        let m = outs.get(maxes).unwrap().to_vec().unwrap();
        for br in 0..rows / 8 {
            for bc in 0..cols / 8 {
                let vals: Vec<f32> = (0..64)
                    .map(|k| src[(br * 8 + k / 8) * cols + bc * 8 + k % 8])
                    .collect();
                assert_eq!(
                    s[br * (cols / 8) + bc],
                    vals.iter().sum::<f32>(),
                    "{}",
                    name(&fx)
                );
                assert_eq!(
                    m[br * (cols / 8) + bc],
                    vals.iter().cloned().fold(f32::MIN, f32::max)
                );
            }
        }
        // A work-group shape that does not match the thread shape is refused.
        let err = fx
            .operator("bad", shape)
            .local_threads(&[8])
            .run(|_| {})
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("one non-zero size per dimension"),
            "{err}"
        );
    }
}

#[test]
fn built_ins_reductions_convolution_transpose_resampling() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    for fx in contexts() {
        let (rows, cols) = (6usize, 9usize);
        let shape = Shape::d2(rows, cols);
        let src = data(shape.points(), 8);
        let f = fx.from_slice(shape, &src).unwrap();
        let at = |r: usize, c: usize| src[r * cols + c];
        // Whole-field reductions of a lazy field.
        let dbl = f.map(|x| x * 2.0f32);
        let sum = dbl.sum().unwrap();
        let want: f32 = src.iter().map(|x| x * 2.0).sum();
        assert!((sum - want).abs() < 1e-3, "{sum} {want}");
        assert_eq!(
            dbl.min().unwrap(),
            src.iter().cloned().fold(f32::MAX, f32::min) * 2.0
        );
        assert_eq!(
            dbl.max().unwrap(),
            src.iter().cloned().fold(f32::MIN, f32::max) * 2.0
        );
        let ints = fx.from_slice(Shape::d1(5), &[3i32, -1, 4, 1, -5]).unwrap();
        assert_eq!(ints.sum().unwrap(), 2);
        // Along an axis.
        let rows_sum = f.sum_axis(1).to_vec().unwrap();
        let cols_max = f.max_axis(0).to_vec().unwrap();
        let cols_min = f.min_axis(0).to_vec().unwrap();
        assert_eq!(f.sum_axis(1).shape(), Shape::d1(rows));
        for (r, &got) in rows_sum.iter().enumerate() {
            let w = (1..cols).fold(at(r, 0), |a, c| a + at(r, c));
            assert_eq!(got, w);
        }
        assert_eq!(rows_sum.len(), rows);
        for c in 0..cols {
            assert_eq!(
                cols_max[c],
                (0..rows).map(|r| at(r, c)).fold(f32::MIN, f32::max)
            );
            assert_eq!(
                cols_min[c],
                (0..rows).map(|r| at(r, c)).fold(f32::MAX, f32::min)
            );
        }
        // Convolution with a 3 x 3 kernel, zero border.
        let w = [1.0f32, 2.0, 1.0, 0.0, 0.0, 0.0, -1.0, -2.0, -1.0];
        let conv = f.convolve(&[3, 3], &w, Border::Zero).to_vec().unwrap();
        for r in 0..rows as i64 {
            for c in 0..cols as i64 {
                let mut acc: Option<f32> = None;
                for k in 0..9i64 {
                    let (rr, cc) = (r + k / 3 - 1, c + k % 3 - 1);
                    let v = if rr < 0 || cc < 0 || rr >= rows as i64 || cc >= cols as i64 {
                        0.0
                    } else {
                        at(rr as usize, cc as usize)
                    };
                    let t = v * w[k as usize];
                    acc = Some(acc.map_or(t, |a| a + t));
                }
                assert_eq!(
                    conv[(r * cols as i64 + c) as usize],
                    acc.unwrap(),
                    "{}",
                    name(&fx)
                );
            }
        }
        // Transpose, down- and up-sampling.
        let t = f.transpose();
        assert_eq!(t.shape(), Shape::d2(cols, rows));
        let t = t.to_vec().unwrap();
        let d = f.downsample(2);
        assert_eq!(d.shape(), Shape::d2(3, 5));
        let d = d.to_vec().unwrap();
        let u = f.upsample(3);
        assert_eq!(u.shape(), Shape::d2(18, 27));
        let u = u.to_vec().unwrap();
        for r in 0..rows {
            for c in 0..cols {
                assert_eq!(t[c * rows + r], at(r, c));
            }
        }
        for r in 0..3 {
            for c in 0..5 {
                assert_eq!(d[r * 5 + c], at(2 * r, 2 * c));
            }
        }
        for r in 0..18 {
            for c in 0..27 {
                assert_eq!(u[r * 27 + c], at(r / 3, c / 3));
            }
        }
        // Element-wise arithmetic and the math set on vector fields.
        let v: Vec<[f32; 2]> = src.iter().map(|&x| [x, x.abs() + 1.0]).collect();
        let fv = fx.from_slice(shape, &v).unwrap();
        let q = (&fv / &fv.map(|x| x * lit(2.0f32))).zip_map(&fv, |a, b| a + b.sqrt());
        let got = q.to_vec().unwrap();
        for i in 0..v.len() {
            let e = |k: usize| v[i][k] / (v[i][k] * 2.0) + v[i][k].sqrt();
            let (g0, g1) = (got[i][0], got[i][1]);
            assert!(g0 == e(0) || (g0.is_nan() && e(0).is_nan()));
            assert_eq!(g1, e(1));
        }
    }
}

#[test]
fn bad_input_gets_typed_errors() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    let fx = Fields::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap());
    let a = fx.from_slice(Shape::d2(2, 3), &[0.0f32; 6]).unwrap();
    let b = fx.from_slice(Shape::d2(3, 2), &[0.0f32; 6]).unwrap();
    let field_err = |e: Error, needle: &str| {
        assert!(e.layer::<FieldError>().is_some(), "{e:?}");
        assert!(e.to_string().contains(needle), "{e}");
    };
    // Host data of the wrong length.
    field_err(
        fx.from_slice(Shape::d2(2, 3), &[0.0f32; 5]).unwrap_err(),
        "the field is 2-D (2 rows x 3 columns), 6 points, but 5 values were given",
    );
    field_err(
        fx.zeros::<f32>(Shape::d2(0, 3)).unwrap_err(),
        "has an empty dimension",
    );
    field_err(Shape::new(&[1, 2, 3, 4]).unwrap_err(), "4 dimensions given");
    // Point-wise operators on fields of different shapes.
    field_err(
        (&a + &b).to_vec().unwrap_err(),
        "the fields' shapes differ: 2-D (2 rows x 3 columns) and 2-D (3 rows x 2 columns)",
    );
    field_err(a.zip_map(&b, |x, y| x * y).to_vec().unwrap_err(), "zip_map");
    // Implicit addressing of a field of another shape.
    let b2 = b.clone();
    let e = fx
        .op("wrong", a.shape(), move |p| p.read(&b2))
        .to_vec()
        .unwrap_err();
    field_err(e, "the field is 2-D (3 rows x 2 columns), the operator runs over 2-D (2 rows x 3 columns); use read_rel or read_at");
    // The wrong number of offsets or coordinates.
    let a2 = a.clone();
    let e = fx
        .op("offs", a.shape(), move |p| {
            p.read_rel(&a2, &[1], Border::Zero)
        })
        .to_vec()
        .unwrap_err();
    field_err(e, "one offset per dimension");
    let a3 = a.clone();
    let e = fx
        .op("coords", a.shape(), move |p| {
            let r = p.row();
            p.read_at(&a3, &[r], Border::Zero)
        })
        .to_vec()
        .unwrap_err();
    field_err(
        e,
        "1 coordinates given for a 2-D (2 rows x 3 columns) field",
    );
    // Errors propagate through fused readers.
    let bad = &a + &b;
    field_err(
        bad.map(|x| x * 2.0f32).to_vec().unwrap_err(),
        "the fields' shapes differ",
    );
    // A field of another device.
    let other = Fields::new(&Queue::new(&Device::from_spec("interp").unwrap()).unwrap());
    let c = other.from_slice(Shape::d2(2, 3), &[1.0f32; 6]).unwrap();
    let e = (&a + &c).to_vec().unwrap_err();
    assert!(matches!(e, Error::WrongDevice { op: "read", .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("the buffer lives on interp, but the queue runs on cpu"),
        "{e}"
    );
    // Writes and local memory belong to eager operators.
    let mut op = fx.operator("outs", a.shape());
    let out = op.output::<f32>(a.shape());
    let a4 = a.clone();
    let lazy_write = fx.op("lazy_write", a.shape(), move |p| {
        p.write(out, lit(1.0f32));
        p.read(&a4)
    });
    field_err(
        lazy_write.to_vec().unwrap_err(),
        "a lazy operator returns its tensor and cannot write outputs",
    );
    let e = fx
        .op("lazy_local", a.shape(), |p| {
            let t = p.local_array::<f32>("t", 4);
            t.at(0u32)
        })
        .to_vec()
        .unwrap_err();
    field_err(e, "local memory needs barriers");
    // Implicit writes into an output of another shape; outputs of another type.
    let small = op.output::<f32>(Shape::d1(2));
    let e = op
        .run(|p| {
            p.write(out, lit(1.0f32));
            p.write(small, lit(2.0f32))
        })
        .err()
        .unwrap();
    field_err(e, "the output is 1-D (2 columns), the operator runs over 2-D (2 rows x 3 columns); use write_at");
    let mut op = fx.operator("typed", a.shape());
    let o = op.output::<f32>(a.shape());
    let outs = op.run(|p| p.write(o, lit(3.0f32))).unwrap();
    assert_eq!(outs.get(o).unwrap().to_vec().unwrap(), vec![3.0; 6]);
    // An axis the field lacks, a transpose of a 1-D field.
    field_err(
        a.sum_axis(2).to_vec().unwrap_err(),
        "a 2-D (2 rows x 3 columns) field has no axis 2",
    );
    let line = fx.from_slice(Shape::d1(3), &[1.0f32; 3]).unwrap();
    field_err(
        line.transpose().to_vec().unwrap_err(),
        "transpose needs a 2-D field",
    );
    field_err(
        a.convolve(&[2, 3], &[1.0; 6], Border::Zero)
            .to_vec()
            .unwrap_err(),
        "odd kernel sizes",
    );
    // Sizes at the `usize` overflow edge are refused, never wrapped: 3 * 6148914691236517206
    // is 2 modulo 2^64.
    let edge = 6148914691236517206usize;
    field_err(
        line.upsample(edge).to_vec().unwrap_err(),
        "upsample: a dimension of 3 points times the factor 6148914691236517206 is more points than a `usize` holds",
    );
    field_err(
        line.upsample(1 << 31).to_vec().unwrap_err(),
        "upsample: the shape 1-D (6442450944 columns) has more than 2^31 - 1 points",
    );
    assert_eq!(line.downsample(edge).to_vec().unwrap(), vec![1.0]);
    let e = fx
        .big_from_slice(Shape::d1(1), &[3, edge], &[1.0f32; 2])
        .unwrap_err();
    field_err(
        e,
        "Fields::big_from_slice: the tensor shape [3, 6148914691236517206] has more elements than a `usize` holds",
    );
    let e = fx
        .big_from_slice(Shape::d2(1 << 15, 1 << 15), &[8], &[1.0f32; 2])
        .unwrap_err();
    field_err(
        e,
        "the field is 2-D (32768 rows x 32768 columns) with 8 elements per tensor, more than 2^32 - 1 elements",
    );
    // 3 * 6148914691236517207 is 5 modulo 2^64.
    field_err(
        a.convolve(&[3, edge + 1], &[1.0; 5], Border::Zero)
            .to_vec()
            .unwrap_err(),
        "odd kernel sizes",
    );
    assert_eq!(Shape::d3(1 << 40, 1 << 40, 1 << 40).points(), usize::MAX);
}

#[test]
fn field_kernels_compile_with_nvrtc() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    #[cfg(feature = "cuda")]
    {
        if let Err(why) = strata::cuda::nvrtc_path() {
            assert!(!required("nvrtc"), "STRATA_REQUIRE names nvrtc, but: {why}");
            eprintln!("skipped: NVRTC cannot be loaded: {why}");
            return;
        }
        let fx = Fields::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap());
        let shape = Shape::d2(8, 8);
        let ((), kernels) = strata::capture_kernels(|| {
            let f = fx.from_slice(shape, &data(64, 9)).unwrap();
            let g = f.clone();
            let lap = fx.op("lap", shape, move |p| {
                p.read_rel(&g, &[0, 1], Border::Wrap) + p.read_rel(&g, &[1, 0], Border::Mirror)
                    - p.read(&g) * 2.0f32
            });
            let v = fx.from_slice(shape, &vec![[1.0f32, 2.0, 3.0]; 64]).unwrap();
            let r = lap.zip_map(&v, |s, v| v.length() + s);
            r.convolve(&[3, 3], &[1.0; 9], Border::Zero)
                .to_vec()
                .unwrap();
        });
        assert!(kernels.len() >= 2);
        for k in kernels {
            let generated = strata::codegen::cuda(k.valid_function()).unwrap();
            strata::cuda::compile_ptx(k.name(), &generated, 90, &[]).unwrap();
        }
    }
}

#[test]
fn big_tensor_fields_element_by_element() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    for fx in contexts() {
        let shape = Shape::d2(4, 6);
        let n = shape.points();
        // A 5 x 5 matrix and a 5-vector per point.
        let m: Vec<f32> = data(n * 25, 10);
        let v: Vec<f32> = data(n * 5, 11);
        let fm = fx.big_from_slice(shape, &[5, 5], &m).unwrap();
        let fv = fx.big_from_slice(shape, &[5], &v).unwrap();
        assert_eq!(fm.tensor_elements(), 25);
        assert_eq!(fm.to_vec().unwrap(), m);
        // Cog's `square`, then a matrix-vector product per point: each element a loop.
        let sq = fm.map(|x| x * x);
        let (sq2, fv2) = (sq.clone(), fv.clone());
        let mv = fx.big_op("matvec", shape, &[5], move |p, e| {
            let acc = var::<f32>(lit(0.0f32));
            for_range(0u32, 5u32, |j| {
                acc.set(
                    acc.get()
                        + p.read_element::<f32>(&sq2, e * 5u32 + j)
                            * p.read_element::<f32>(&fv2, j),
                );
            });
            acc.get()
        });
        let before = fx.queue().launch_count();
        let got = mv.to_vec().unwrap();
        // `sq` is fused into `matvec`: one kernel.
        assert_eq!(fx.queue().launch_count() - before, 1, "{}", name(&fx));
        for p in 0..n {
            for e in 0..5 {
                let want = (0..5).fold(0.0f32, |a, j| {
                    a + m[p * 25 + e * 5 + j] * m[p * 25 + e * 5 + j] * v[p * 5 + j]
                });
                assert_eq!(got[p * 5 + e], want, "{} point {p} element {e}", name(&fx));
            }
        }
        // A 32-bin histogram per pixel of its 3 x 3 neighbourhood (zero border), then a small
        // operator reading the big field's elements: the counts of every pixel add up to 9.
        let img: Vec<u32> = (0..n as u32).map(|i| (i * 7) % 32).collect();
        let fi = fx.from_slice(shape, &img).unwrap();
        let f2 = fi.clone();
        let hist = fx
            .big_op("hist", shape, &[32], move |p, e| {
                let count = var::<u32>(lit(0u32));
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        let v = p.read_rel(&f2, &[dy, dx], Border::Clamp);
                        count.set(count.get() + select::<u32>(v.eq(e), lit(1u32), lit(0u32)));
                    }
                }
                count.get()
            })
            .eval()
            .unwrap();
        let h2 = hist.clone();
        let total = fx.op("total", shape, move |p| {
            let t = var::<u32>(lit(0u32));
            for_range(0u32, 32u32, |e| {
                t.set(t.get() + p.read_element::<u32>(&h2, e))
            });
            t.get()
        });
        assert_eq!(total.to_vec().unwrap(), vec![9u32; n]);
        let h = hist.to_vec().unwrap();
        let (rows, cols) = (4i64, 6i64);
        for r in 0..rows {
            for c in 0..cols {
                let mut want = [0u32; 32];
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        let (rr, cc) = ((r + dy).clamp(0, rows - 1), (c + dx).clamp(0, cols - 1));
                        want[img[(rr * cols + cc) as usize] as usize] += 1;
                    }
                }
                let at = ((r * cols + c) * 32) as usize;
                assert_eq!(h[at..at + 32], want, "{}", name(&fx));
            }
        }
        // Non-local element reads with a border.
        let h3 = hist.clone();
        let left = fx.op("left_bin", shape, move |p| {
            p.read_element_rel(&h3, &[0, -1], 5u32, Border::Zero)
        });
        let got = left.to_vec().unwrap();
        for r in 0..4usize {
            for c in 0..6usize {
                let want = if c == 0 {
                    0
                } else {
                    h[(r * 6 + c - 1) * 32 + 5]
                };
                assert_eq!(got[r * 6 + c], want);
            }
        }
    }
    // Typed errors.
    let fx = Fields::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap());
    let e = fx
        .big_from_slice(Shape::d1(3), &[5], &[0.0f32; 14])
        .unwrap_err();
    assert_eq!(e.to_string(), "Fields::big_from_slice: the field is 1-D (3 columns) with 5 elements per tensor, 15 values, but 14 were given");
    let e = fx
        .big_from_slice(Shape::d1(3), &[0], &[0.0f32; 0])
        .unwrap_err();
    assert!(e.to_string().contains("has no elements"), "{e}");
    let big = fx
        .big_from_slice(Shape::d1(3), &[5], &[0.0f32; 15])
        .unwrap();
    let e = fx
        .op("wrong", Shape::d1(4), move |p| p.read_element(&big, 0u32))
        .to_vec()
        .unwrap_err();
    assert!(e.to_string().contains("the field is 1-D (3 columns), the operator runs over 1-D (4 columns); use read_element_at"), "{e}");
}

#[test]
fn fields_of_other_queues_are_waited_for_and_any_name_is_a_kernel_name() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    let dev = Device::from_spec("cpu").unwrap();
    let (qa, qb) = (Queue::new(&dev).unwrap(), Queue::new(&dev).unwrap());
    let (fa, fb) = (Fields::new(&qa), Fields::new(&qb));
    let shape = Shape::d1(100_000);
    let src = data(shape.points(), 12);
    let x = fa.from_slice(shape, &src).unwrap();
    // Enqueued on queue A, not waited for; read by a kernel on queue B.
    let y = x.map(|v| v * 3.0f32).eval().unwrap();
    let y2 = y.clone();
    let z = fb.op("times two, then + 1 (queue B)", shape, move |p| {
        p.read(&y2) * 2.0f32 + 1.0f32
    });
    let got = z.to_vec().unwrap();
    assert!(got.iter().zip(&src).all(|(g, s)| *g == s * 3.0 * 2.0 + 1.0));
    assert_eq!(qb.launch_count(), 1);
}

#[test]
fn fields_can_be_shared_between_threads() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    fn shareable<T: Send + Sync>() {}
    shareable::<Field<f32>>();
    shareable::<Field<[u8; 4]>>();
    shareable::<strata::fields::BigField<f32>>();
    shareable::<Fields>();
    let fx = Fields::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap());
    let f = fx
        .from_slice(Shape::d1(4), &[1.0f32, 2.0, 3.0, 4.0])
        .unwrap();
    let doubled = f.map(|x| x * 2.0f32);
    let got = std::thread::spawn(move || doubled.to_vec().unwrap())
        .join()
        .unwrap();
    assert_eq!(got, vec![2.0, 4.0, 6.0, 8.0]);
}

/// One step of Chambolle's ROF iteration (the `strata bench` rows `rof_fused`/`rof_unfused`):
/// a divergence at `Border::Zero`, a forward gradient at `Border::Clamp` and an eager
/// operator with two outputs; the next dual field `(px, py)`.
fn rof_step(
    f: &Field<f32>,
    px: &Field<f32>,
    py: &Field<f32>,
) -> strata::Result<(Field<f32>, Field<f32>)> {
    let (x, y, shape) = (px.clone(), py.clone(), f.shape());
    let div = f.fields().op("divergence", shape, move |p| {
        let dx = p.read(&x) - p.read_rel(&x, &[0, -1], Border::Zero);
        let dy = p.read(&y) - p.read_rel(&y, &[-1, 0], Border::Zero);
        dx + dy
    });
    let v = &div - &f.map(|x| x / 0.1f32);
    let (a, b) = (v.clone(), v.clone());
    let gx = f.fields().op("gx", shape, move |p| {
        p.read_rel(&a, &[0, 1], Border::Clamp) - p.read(&a)
    });
    let gy = f.fields().op("gy", shape, move |p| {
        p.read_rel(&b, &[1, 0], Border::Clamp) - p.read(&b)
    });
    let den = gx
        .zip_map(&gy, |a, b| (a * a + b * b).sqrt())
        .map(|n| n * 0.25f32 + 1.0f32);
    let nx = px + &gx.map(|g| g * 0.25f32);
    let ny = py + &gy.map(|g| g * 0.25f32);
    let mut op = f.fields().operator("rof_update", shape);
    let (ox, oy) = (op.output::<f32>(shape), op.output::<f32>(shape));
    let outs = op.run(|p| {
        let d = p.read(&den);
        let (x, y) = (p.read(&nx), p.read(&ny));
        p.write(ox, x / d);
        p.write(oy, y / d);
    })?;
    Ok((outs.get(ox)?, outs.get(oy)?))
}

/// On a CPU device a 2-D field kernel that does not see its work-group runs in row strips
/// (at most 256 columns, more rows for a narrow field; issue 31): the ROF iteration, fused
/// and not, at shapes wider and narrower than a strip, gives `cpu` bit for bit the results of
/// `interp`; a fault names the same work-item on both, in its row strip; a kernel that reads
/// its local size keeps the 32 x 8 group.
#[test]
fn cpu_devices_run_field_kernels_in_row_strips() {
    let _compiles = COMPILES.read().unwrap_or_else(|p| p.into_inner());
    let cpu = Fields::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap());
    let interp = Fields::new(&Queue::new(&Device::from_spec("interp").unwrap()).unwrap());
    for (rows, cols) in [(37, 300), (5, 7), (70, 20), (3, 256), (9, 513)] {
        let shape = Shape::d2(rows, cols);
        let src = data(shape.points(), 11);
        let run = |fx: &Fields, fused: bool| -> Vec<u32> {
            let fx = fx.with_fusion(fused);
            let f = fx.from_slice(shape, &src).unwrap();
            let (mut px, mut py) = (fx.zeros::<f32>(shape).unwrap(), fx.zeros(shape).unwrap());
            for _ in 0..3 {
                (px, py) = rof_step(&f, &px, &py).unwrap();
            }
            let mut out = px.to_vec().unwrap();
            out.extend(py.to_vec().unwrap());
            out.iter().map(|x| x.to_bits()).collect()
        };
        let want = run(&interp, true);
        assert!(want.iter().any(|&b| b != 0), "{rows}x{cols}");
        assert_eq!(run(&interp, false), want, "{rows}x{cols} interp unfused");
        assert_eq!(run(&cpu, true), want, "{rows}x{cols} cpu fused");
        assert_eq!(run(&cpu, false), want, "{rows}x{cols} cpu unfused");
    }
    // An integer division by zero at column 270 of row 9: in the second of the row's two
    // 152-column strips on both devices; at (35, 3) of an 8-column field: 8 x 32 strips.
    for ((rows, cols), (r, c), item) in [
        (
            (20, 300),
            (9, 270),
            "global (270, 9, 0), local (118, 0, 0) in work-group (1, 9, 0)",
        ),
        (
            (40, 8),
            (35, 3),
            "global (3, 35, 0), local (3, 3, 0) in work-group (0, 1, 0)",
        ),
    ] {
        let shape = Shape::d2(rows, cols);
        let mut den = vec![1i32; shape.points()];
        den[r * cols + c] = 0;
        let fault = |fx: &Fields| {
            let a = fx.from_slice(shape, &vec![7i32; shape.points()]).unwrap();
            let b = fx.from_slice(shape, &den).unwrap();
            match a.zip_map(&b, |a, b| a / b).to_vec() {
                Err(e @ Error::KernelFault { .. }) => e.to_string(),
                r => panic!("{}: {r:?}", name(fx)),
            }
        };
        let e = fault(&interp);
        assert!(e.contains(item), "{e}");
        assert_eq!(fault(&cpu), e);
    }
    // The local size seen where a kernel asks for it: the 32 x 8 default.
    let shape = Shape::d2(10, 300);
    for fx in [&cpu, &interp] {
        let l = fx.op("local_size", shape, |p| {
            p.local_dim(1) * 100i32 + p.local_dim(2)
        });
        assert!(
            l.to_vec().unwrap().iter().all(|&v| v == 832),
            "{}",
            name(fx)
        );
    }
}

//! The two builds of the rayon baselines of `strata bench` (`strata_cli::bench::builds`): the
//! AVX2+FMA build computes what the default build computes, and the table and the `--json`
//! lines carry its columns. No timing assertions: speed is measured by `strata bench`, never
//! by tests. Where the CPU lacks AVX2 or FMA the comparisons are skipped (said on stderr) and
//! the table must say the build is unavailable.

use strata::Device;
use strata_cli::bench::builds::{avx2_fma_detected, Build};
use strata_cli::bench::{self, blas, compute, fields, patterns, BenchOptions};
use strata_cli::report::BenchLine;

/// The AVX2+FMA build, or `None` (with a note) where this CPU cannot run it.
fn avx2() -> Option<Build> {
    let b = Build::avx2_fma();
    if b.is_none() {
        eprintln!("this CPU has no AVX2 and FMA: the AVX2+FMA baselines are not compared");
    }
    b
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Inputs with a ragged tail (not a multiple of 8 or of a rayon chunk).
fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| {
            let z = i
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed.wrapping_mul(40_503));
            (z >> 8) as f32 / (1u32 << 24) as f32 - 0.25
        })
        .collect()
}

#[test]
fn memory_bound_baselines_agree_bit_for_bit() {
    let Some(fast) = avx2() else { return };
    let n = (1 << 15) + 13;
    let (x, y) = (data(n, 1), data(n, 2));
    let mut c = [vec![0.0f32; n], vec![0.0f32; n]];
    for (c, build) in c.iter_mut().zip([Build::Default, fast]) {
        bench::rayon_vadd(build, c, &x, &y);
    }
    assert_eq!(bits(&c[0]), bits(&c[1]), "vadd");
    let mut s = [y.clone(), y.clone()];
    for (s, build) in s.iter_mut().zip([Build::Default, fast]) {
        bench::rayon_saxpy(build, s, &x);
    }
    assert_eq!(bits(&s[0]), bits(&s[1]), "saxpy");
    // One chunk's reduction has a fixed order: the same bits in both builds.
    for len in [0, 7, 8, 1000, 4099] {
        let (a, b) = (&x[..len], &y[..len]);
        assert_eq!(
            bench::chunk_sum(Build::Default, a).to_bits(),
            bench::chunk_sum(fast, a).to_bits(),
            "sum of {len}"
        );
        assert_eq!(
            bench::chunk_dot(Build::Default, a, b).to_bits(),
            bench::chunk_dot(fast, a, b).to_bits(),
            "dot of {len}"
        );
    }
    // Rayon adds the chunks' partials in an order that depends on the scheduling: the whole
    // reductions agree within the benchmark's tolerance.
    for (name, d, f) in [
        (
            "sum",
            bench::rayon_sum(Build::Default, &x),
            bench::rayon_sum(fast, &x),
        ),
        (
            "dot",
            bench::rayon_dot(Build::Default, &x, &y),
            bench::rayon_dot(fast, &x, &y),
        ),
    ] {
        let err = bench::check_close(name, f, d).unwrap();
        assert!(err <= bench::REDUCTION_TOLERANCE, "{name}: {err}");
    }
}

#[test]
fn compute_baselines_agree_bit_for_bit() {
    let Some(fast) = avx2() else { return };
    // An edge that is not a multiple of the 8 lanes.
    let m = [Build::Default, fast].map(|b| compute::mandelbrot_rayon(b, 75, 64));
    assert_eq!(m[0], m[1], "mandelbrot");
    assert!(m[0].contains(&64) && m[0].iter().any(|&c| c < 64));

    let n = 203;
    let (x, y, z) = (data(n, 3), data(n, 4), data(n, 5));
    let mass: Vec<f32> = data(n, 6).iter().map(|v| v + 1.0).collect();
    let a = [Build::Default, fast]
        .map(|b| compute::nbody_rayon(b, [&x, &y, &z, &mass], compute::NBODY_EPS2));
    for (c, (d, f)) in a[0].iter().zip(&a[1]).enumerate() {
        assert_eq!(bits(d), bits(f), "nbody component {c}");
    }

    let e = 77;
    let (p, q) = (data(e * e, 7), data(e * e, 8));
    let g = [Build::Default, fast].map(|b| blas::rayon_sgemm(b, &p, &q, e));
    assert_eq!(bits(&g[0]), bits(&g[1]), "sgemm");

    // The blur on an edge that is not a multiple of the 8 lanes, against a serial blur.
    let e = 29;
    let x = data(e * e, 9);
    let b = [Build::Default, fast].map(|b| {
        let mut out = vec![0.0f32; e * e];
        compute::blur_rayon(b, &x, e, &mut out);
        out
    });
    assert_eq!(bits(&b[0]), bits(&b[1]), "blur");
    let mut serial = x.clone();
    for j in 1..e - 1 {
        for i in 1..e - 1 {
            let mut s = x[(j - 1) * e + i - 1];
            for (dj, di) in [
                (0, 1),
                (0, 2),
                (1, 0),
                (1, 1),
                (1, 2),
                (2, 0),
                (2, 1),
                (2, 2),
            ] {
                s += x[(j + dj - 1) * e + i + di - 1];
            }
            serial[j * e + i] = s * (1.0f32 / 9.0);
        }
    }
    assert_eq!(bits(&b[0]), bits(&serial), "blur against a serial blur");

    // ROF's three passes on an edge that is not a multiple of the 8 lanes.
    let n = 37;
    let f = fields::picture(n);
    let u =
        [Build::Default, fast].map(|b| fields::rof_rayon(b, &f, n, fields::LAMBDA, fields::TAU, 3));
    assert_eq!(bits(&u[0]), bits(&u[1]), "rof");
    assert!(
        u[0].iter().zip(&f).any(|(a, b)| a != b),
        "rof changed nothing"
    );
}

#[test]
fn the_scan_baseline_is_a_scan_in_both_builds() {
    // More than one rayon chunk, and a ragged tail; values that wrap the `u32` sum.
    let n = 3 * (1 << 14) + 5;
    let x: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 3)
        .collect();
    let mut serial = Vec::with_capacity(n);
    let mut acc = 0u32;
    for v in &x {
        acc = acc.wrapping_add(*v);
        serial.push(acc);
    }
    let builds: Vec<Build> = [Some(Build::Default), avx2()]
        .into_iter()
        .flatten()
        .collect();
    for build in builds {
        let mut out = vec![0u32; n];
        patterns::rayon_scan(build, &x, &mut out);
        assert_eq!(out, serial, "{build:?}");
    }
}

/// The histogram baseline counts every key in both builds: more than one rayon chunk and a
/// ragged tail, against a serial count; the keys reach every bin.
#[test]
fn the_histogram_baseline_counts_in_both_builds() {
    let keys = compute::histogram_keys(3 * compute::HISTOGRAM_CHUNK + 77);
    let mut serial = vec![0u32; compute::HISTOGRAM_BINS];
    for k in &keys {
        serial[(k >> 24) as usize] += 1;
    }
    assert!(serial.iter().all(|&c| c > 0), "{serial:?}");
    let builds: Vec<Build> = [Some(Build::Default), avx2()]
        .into_iter()
        .flatten()
        .collect();
    for build in builds {
        assert_eq!(compute::histogram_rayon(build, &keys), serial, "{build:?}");
    }
}

#[test]
fn pattern_and_field_rows_carry_the_avx2_build() {
    let cpu = Device::from_spec("cpu").unwrap();
    for (filter, rows) in [
        ("pat_vadd", 2),
        ("pat_dot", 2),
        ("pat_scan_multipass", 1),
        ("rof_fused", 1),
    ] {
        let opts = BenchOptions {
            size: 1 << 12,
            reps: 1,
            filter: Some(filter.into()),
        };
        let results = bench::run(&cpu, &opts).unwrap();
        assert_eq!(results.len(), rows, "{filter}: {results:?}");
        for r in &results {
            assert_eq!(r.baseline, "rayon", "{r:?}");
            assert_eq!(r.avx2_s.is_some(), avx2_fma_detected(), "{r:?}");
            if let (Some(s), Some(ratio)) = (r.avx2_s, r.ratio_avx2) {
                assert!(
                    s > 0.0 && (ratio - r.strata_s / s).abs() <= 1e-12 * ratio,
                    "{r:?}"
                );
            }
        }
    }
    // A sort's baseline is rayon's library sort, whose code no target feature of ours
    // reaches: one build, said as such.
    let opts = BenchOptions {
        size: 1 << 12,
        reps: 1,
        filter: Some("pat_sort_b4".into()),
    };
    let results = bench::run(&cpu, &opts).unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!((results[0].avx2_s, results[0].ratio_avx2), (None, None));
}

#[test]
fn table_and_json_carry_the_avx2_build() {
    let cpu = Device::from_spec("cpu").unwrap();
    let opts = BenchOptions {
        size: 4096,
        reps: 1,
        filter: Some("mandelbrot".into()),
    };
    let results = bench::run(&cpu, &opts).unwrap();
    assert_eq!(results.len(), 1);
    let r = &results[0];
    assert_eq!(r.baseline, "rayon");
    assert_eq!(r.avx2_s.is_some(), avx2_fma_detected(), "{r:?}");
    assert_eq!(r.ratio_avx2.is_some(), avx2_fma_detected(), "{r:?}");
    if let (Some(s), Some(ratio)) = (r.avx2_s, r.ratio_avx2) {
        assert!(
            s > 0.0 && (ratio - r.strata_s / s).abs() <= 1e-12 * ratio,
            "{r:?}"
        );
    }

    let table = bench::table(&cpu, &results);
    let head = table.lines().nth(1).unwrap();
    for col in ["rayon ms", "ratio", "avx2 ms", "ratio avx2"] {
        assert!(head.contains(col), "no `{col}` column in:\n{table}");
    }
    let first = table.lines().next().unwrap();
    assert!(first.contains("built for the default target"), "{table}");
    if !avx2_fma_detected() {
        assert!(first.contains("avx2: unavailable"), "{table}");
    }

    let json = serde_json::to_string(&BenchLine::from(r)).unwrap();
    assert!(json.contains("\"avx2_s\":"), "{json}");
    assert!(json.contains("\"ratio_avx2\":"), "{json}");
    let back: BenchLine = serde_json::from_str(&json).unwrap();
    // serde_json reads floats to within an ulp (its exact parser is a feature we do not enable).
    match (back.ratio_avx2, r.ratio_avx2) {
        (Some(a), Some(b)) => assert!((a - b).abs() <= 4.0 * f64::EPSILON * b.abs(), "{a} != {b}"),
        (a, b) => assert_eq!(a, b),
    }
    // Output of older versions, without the fields, still reads.
    let old = json
        .replace(&format!(",\"avx2_s\":{}", json_num(r.avx2_s)), "")
        .replace(&format!(",\"ratio_avx2\":{}", json_num(r.ratio_avx2)), "");
    assert!(!old.contains("avx2"), "{old}");
    let back: BenchLine = serde_json::from_str(&old).unwrap();
    assert_eq!(back.avx2_s, None);
}

fn json_num(x: Option<f64>) -> String {
    serde_json::to_string(&x).unwrap()
}

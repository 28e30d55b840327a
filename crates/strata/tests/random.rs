//! Accuracy of strata's portable normal variates (`strata::random::normal_f32`/`normal_f64`):
//! against the exact Box-Muller transform computed with `f64` (`f32` variates) or with the
//! variates' own inputs in `f64` and the standard library's functions, over a long stream and
//! the extremes of `u1` (1, and the smallest values 24- and 53-bit uniforms give). That the
//! device computes the same bits is the conformance case `rng/normal`.

use strata::random::{normal_f32, normal_f64, unit_f32, unit_f64, Philox, Well512Host};

/// The exact transform of the uniforms `u1 = 1 - unit`, `u2`.
fn exact(u1: f64, u2: f64) -> [f64; 2] {
    let r = (-2.0 * u1.ln()).sqrt();
    let t = 2.0 * std::f64::consts::PI * u2;
    [r * t.cos(), r * t.sin()]
}

#[test]
fn f32_normals_are_within_a_few_ulp_of_the_radius() {
    let mut worst = 0f64;
    let mut words: Vec<(u32, u32)> = (0..200_000u64)
        .map(|i| {
            let b = Philox::host_block(3, i, 0);
            (b[0], b[1])
        })
        .collect();
    // u1 = 1 (a = 0), the smallest u1 (a = all ones), quadrant edges of u2.
    for b in [0u32, 1 << 30, 1 << 31, 3 << 30, u32::MAX, 0x2000_0000] {
        words.push((0, b));
        words.push((u32::MAX, b));
    }
    for (a, b) in words {
        let got = normal_f32(a, b);
        let (u1, u2) = (1.0 - f64::from(unit_f32(a)), f64::from(unit_f32(b)));
        let want = exact(u1, u2);
        let r = (-2.0 * u1.ln()).sqrt();
        for k in 0..2 {
            // Error relative to the radius (the components cross zero): 2^-21 is 4 ulp of
            // an f32 the size of the radius.
            let err = (f64::from(got[k]) - want[k]).abs() / r.max(f64::MIN_POSITIVE);
            worst = worst.max(err);
            assert!(
                err <= 2f64.powi(-21) || r == 0.0 && got[k] == 0.0,
                "normal_f32({a:#x}, {b:#x})[{k}] = {}, exact {} (radius {r})",
                got[k],
                want[k]
            );
        }
    }
    eprintln!("f32: worst error {worst:e} of the radius");
}

#[test]
fn f64_normals_are_within_a_few_ulp_of_the_radius() {
    for i in 0..100_000u64 {
        let w = Philox::host_block(5, i, 0);
        let got = normal_f64(w);
        let (u1, u2) = (1.0 - unit_f64(w[0], w[1]), unit_f64(w[2], w[3]));
        let want = exact(u1, u2);
        let r = (-2.0 * u1.ln()).sqrt();
        for k in 0..2 {
            // The reference itself is a few ulp off (std's ln, cos, sin and the rounded 2 pi).
            let err = (got[k] - want[k]).abs() / r.max(f64::MIN_POSITIVE);
            assert!(
                err <= 2f64.powi(-48),
                "normal_f64({w:?})[{k}] = {}, exact {} (radius {r})",
                got[k],
                want[k]
            );
        }
    }
}

#[test]
fn normals_have_the_moments_of_a_standard_normal() {
    let n = 1_000_000u64;
    let (mut s1, mut s2, mut s4, mut tail) = (0f64, 0f64, 0f64, 0u64);
    for i in 0..n / 2 {
        let b = Philox::host_block(9, i, 0);
        for z in normal_f32(b[0], b[1]) {
            let z = f64::from(z);
            s1 += z;
            s2 += z * z;
            s4 += z * z * z * z;
            tail += u64::from(z.abs() > 3.0);
        }
    }
    let nf = n as f64;
    let (mean, var, kurt) = (s1 / nf, s2 / nf, s4 / nf);
    // Standard errors: 1e-3 (mean), 1.4e-3 (variance), 5e-3 (4th moment); 5 sigma allowed.
    assert!(mean.abs() < 5e-3, "mean {mean}");
    assert!((var - 1.0).abs() < 7e-3, "variance {var}");
    assert!((kurt - 3.0).abs() < 0.05, "fourth moment {kurt}");
    // P(|z| > 3) = 0.0027.
    let p = tail as f64 / nf;
    assert!((p - 0.0027).abs() < 3e-4, "P(|z| > 3) = {p}");
}

#[test]
fn well512_words_are_uniform_and_streams_differ() {
    let mut g = Well512Host::new(1, 0);
    let mut h = Well512Host::new(1, 1);
    let n = 1 << 20;
    let mut ones = [0u64; 32];
    let mut same = 0;
    for _ in 0..n {
        let (x, y) = (g.next_u32(), h.next_u32());
        same += u32::from(x == y);
        for (b, c) in ones.iter_mut().enumerate() {
            *c += u64::from(x >> b & 1);
        }
    }
    assert!(same < 4, "two streams agreed {same} times");
    for (b, &c) in ones.iter().enumerate() {
        let p = c as f64 / n as f64;
        // 5 sigma of a fair bit over 2^20 draws: 0.0024.
        assert!((p - 0.5).abs() < 0.0025, "bit {b} set in {p} of the words");
    }
}

/// WELL512a as the paper defines it (Panneton, L'Ecuyer, Matsumoto, ACM TOMS 2006: r = 16,
/// m1 = 13, m2 = 9, m3 = 5, T0 = M3(-16), T1 = M3(-15), T2 = M3(11), T4 = M3(-2),
/// T5 = M3(-18), T6 = M2(-28), T7 = M5(-5, 0xda442d24)), written from those matrices, against
/// the shorter form strata uses.
#[test]
fn well512_is_the_papers_recurrence() {
    let m3_neg = |t: u32, v: u32| v ^ (v << t);
    let m3_pos = |t: u32, v: u32| v ^ (v >> t);
    let mut state: [u32; 16] = std::array::from_fn(|k| (k as u32).wrapping_mul(0x9E37_79B9) + 1);
    let mut i = 0usize;
    let mut ours = Well512Host { state, index: 0 };
    for n in 0..100_000 {
        let z0 = state[(i + 15) & 15];
        let z1 = m3_neg(16, state[i]) ^ m3_neg(15, state[(i + 13) & 15]);
        let z2 = m3_pos(11, state[(i + 9) & 15]);
        let new_v1 = z1 ^ z2;
        let new_v0 =
            m3_neg(2, z0) ^ m3_neg(18, z1) ^ (z2 << 28) ^ (new_v1 ^ ((new_v1 << 5) & 0xda44_2d24));
        state[i] = new_v1;
        state[(i + 15) & 15] = new_v0;
        i = (i + 15) & 15;
        assert_eq!(ours.next_u32(), state[i], "draw {n}");
    }
}

//! The comparator: integers and booleans exactly, floats by the rules of the module docs
//! (exact where rounded exactly, within ULP bounds for transcendental built-ins, within the
//! bound of any summation order for float sum collectives).

use super::{lit, Check, Layout, Outputs, GLOBAL_SIZE};
use std::fmt::Write as _;
use strata::ir::{MathFn, Scalar};

/// The ULP bound of a transcendental built-in: [`MathFn::ulp_bound`] (OpenCL 1.2's bound,
/// the same for `f32` and `f64`) plus one for the reference's rounding. Every other built-in
/// and operation the generator uses is compared exactly.
pub fn ulp_bound(f: MathFn) -> u64 {
    match f.ulp_bound() {
        0 => 0,
        b => 1 + u64::from(b),
    }
}

/// Whether `f`'s results may be tiny after cancellation, so an absolute tolerance applies.
fn crosses_zero(f: MathFn) -> bool {
    matches!(
        f,
        MathFn::Sin
            | MathFn::Cos
            | MathFn::Tan
            | MathFn::Log
            | MathFn::Log2
            | MathFn::Log10
            | MathFn::Asin
            | MathFn::Acos
            | MathFn::Atan
            | MathFn::Atan2
            | MathFn::Asinh
            | MathFn::Acosh
            | MathFn::Atanh
            | MathFn::Sinh
            | MathFn::Tanh
            | MathFn::Sinpi
            | MathFn::Cospi
            | MathFn::Tanpi
            | MathFn::Asinpi
            | MathFn::Atanpi
            | MathFn::Atan2pi
            | MathFn::Lgamma
    )
}

/// Float comparison per the module docs; `None` when equal.
fn float_diff(s: Scalar, check: Check, g: u64, w: u64) -> Option<String> {
    let (gf, wf, tiny, eps, sign) = match s {
        Scalar::F32 => (
            f32::from_bits(g as u32) as f64,
            f32::from_bits(w as u32) as f64,
            f32::MIN_POSITIVE as f64,
            f32::EPSILON as f64,
            1u64 << 31,
        ),
        _ => (
            f64::from_bits(g),
            f64::from_bits(w),
            f64::MIN_POSITIVE,
            f64::EPSILON,
            1u64 << 63,
        ),
    };
    if gf.is_nan() || wf.is_nan() {
        return (gf.is_nan() != wf.is_nan()).then(|| "NaN against a number".into());
    }
    if gf.abs() < tiny && wf.abs() < tiny {
        return None; // zeros and denormals are all zero
    }
    let key = |b: u64| -> i128 {
        let mag = (b & !sign) as i128;
        if b & sign != 0 {
            -mag
        } else {
            mag
        }
    };
    let ulps = (key(g) - key(w)).unsigned_abs();
    let (bound, abs) = match check {
        Check::Exact | Check::Sum { .. } => (0, 0.0),
        Check::Approx(m) => {
            let b = ulp_bound(m);
            (b, if crosses_zero(m) { b as f64 * eps } else { 0.0 })
        }
    };
    if ulps <= bound as u128 || (gf - wf).abs() <= abs {
        None
    } else {
        Some(format!(
            "off by {ulps} ulp (allowed {bound}{})",
            if abs > 0.0 {
                format!(" or {abs:e}")
            } else {
                String::new()
            }
        ))
    }
}

/// Comparison of a float sum collective (`got` against the reference's `want`), given the
/// reference's sum of the operands' magnitudes `mag`: both are within `gamma(terms - 1) * mag`
/// of the exact sum whatever their association, so they may differ by twice that, plus
/// `terms` times the smallest normal number (devices may flush subnormal operands). A NaN
/// magnitude (a NaN operand) requires a NaN; an infinite one, or one so large that another
/// order may overflow, allows anything. `None` when the results agree.
fn sum_diff(s: Scalar, terms: u32, got: u64, want: u64, mag: u64) -> Option<String> {
    let (g, w, m, u, tiny, max) = match s {
        Scalar::F32 => (
            f32::from_bits(got as u32) as f64,
            f32::from_bits(want as u32) as f64,
            f32::from_bits(mag as u32) as f64,
            f32::EPSILON as f64 / 2.0,
            f32::MIN_POSITIVE as f64,
            f32::MAX as f64,
        ),
        _ => (
            f64::from_bits(got),
            f64::from_bits(want),
            f64::from_bits(mag),
            f64::EPSILON / 2.0,
            f64::MIN_POSITIVE,
            f64::MAX,
        ),
    };
    if m.is_nan() {
        return (!g.is_nan()).then(|| "a number where a NaN operand makes the sum NaN".into());
    }
    if m.is_infinite() || m > max / 2.0 {
        return None;
    }
    let k = terms.saturating_sub(1) as f64;
    let allowed = 2.0 * k * u / (1.0 - k * u) * m + terms as f64 * tiny;
    let err = (g - w).abs();
    // A NaN difference (a NaN result) is not within anything.
    let within = err <= allowed;
    (!within).then(|| {
        format!(
            "a sum in some association order may differ by {allowed:e} (sum of magnitudes {m:e}), this one by {err:e}"
        )
    })
}

fn show(s: Scalar, bits: u64) -> String {
    format!("{} ({bits:#x})", lit(s, bits))
}

/// Compares two runs, pushing `(program, description)` for each mismatching value.
pub(super) fn compare(
    layout: &Layout,
    want: &Outputs,
    got: &Outputs,
    bad: &mut Vec<(usize, String)>,
    compared: &mut usize,
) {
    let g = GLOBAL_SIZE as usize;
    for (ti, &s) in layout.types.iter().enumerate() {
        for (slot, meta) in layout.outs[ti].iter().enumerate() {
            for item in 0..g {
                let i = slot * g + item;
                let (w, o) = (want.outs[ti][i], got.outs[ti][i]);
                *compared += 1;
                let diff = if let Check::Sum { mag, terms } = meta.check {
                    sum_diff(s, terms, o, w, want.outs[ti][mag as usize * g + item])
                } else if s.is_float() {
                    float_diff(s, meta.check, o, w)
                } else {
                    (w != o).then(String::new)
                };
                if let Some(d) = diff {
                    let what = match meta.check {
                        Check::Exact => "exact".to_string(),
                        Check::Approx(m) => format!("result of {}", m.name()),
                        Check::Sum { .. } => "float sum collective".to_string(),
                    };
                    let mut m = String::new();
                    let _ = write!(
                        m,
                        "out_{s} slot {slot} ({what}), work-item {item}: got {}, expected {}",
                        show(s, o),
                        show(s, w)
                    );
                    if !d.is_empty() {
                        let _ = write!(m, ", {d}");
                    }
                    bad.push((meta.program, m));
                    break;
                }
            }
        }
    }
    for (ai, &s) in layout.atom_types.iter().enumerate() {
        for (slot, &program) in layout.atoms[ai].iter().enumerate() {
            for item in 0..g {
                let i = slot * g + item;
                let (w, o) = (want.atoms[ai][i], got.atoms[ai][i]);
                *compared += 1;
                if w != o {
                    bad.push((
                        program,
                        format!(
                            "atom_{s} slot {slot} element {item} after the kernel: got {}, expected {}",
                            show(s, o),
                            show(s, w)
                        ),
                    ));
                    break;
                }
            }
        }
    }
}

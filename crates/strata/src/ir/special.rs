//! The float built-ins Rust's `std` lacks, defined once for the evaluator (and so for constant
//! folding and the CPU backends). The rounded ones are computed in `f64`; `f32` rounds that
//! once more, well inside its bound (`tests/math_accuracy.rs` sweeps both against 320-bit
//! references). The code generators emit the same algorithms where a target lacks the
//! built-in (`codegen::writer`), so every backend reduces arguments the same way.

use std::f64::consts::PI;

/// `sin(pi x)`. The argument is reduced exactly (`x % 2` and the subtractions below are exact)
/// to `|t| <= 1/4` before it is multiplied by pi, so the result is accurate near every zero;
/// `sinpi(±n) = ±0` for integer `n`.
pub fn sinpi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let a = (x % 2.0).abs();
    let v = if a <= 0.25 {
        (PI * a).sin()
    } else if a <= 0.75 {
        (PI * (0.5 - a)).cos()
    } else if a <= 1.25 {
        (PI * (1.0 - a)).sin()
    } else if a <= 1.75 {
        -(PI * (a - 1.5)).cos()
    } else {
        (PI * (a - 2.0)).sin()
    };
    // Odd: the sign of x (also on the zeros).
    if x.is_sign_negative() {
        -v
    } else {
        v
    }
}

/// `cos(pi x)`, reduced as [`sinpi`]; `cospi(n + 1/2) = +0`.
pub fn cospi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let a = (x % 2.0).abs();
    if a <= 0.25 {
        (PI * a).cos()
    } else if a <= 0.75 {
        (PI * (0.5 - a)).sin() + 0.0
    } else if a <= 1.25 {
        -(PI * (1.0 - a)).cos()
    } else if a <= 1.75 {
        (PI * (a - 1.5)).sin() + 0.0
    } else {
        (PI * (2.0 - a)).cos()
    }
}

/// `tan(pi x)`, reduced exactly to `|t| <= 1/4` (beyond, `1 / tan(pi (1/2 - t))`). At
/// integers `tanpi(n) = ±0` with the sign of `x` flipped for odd `n`; at half-integers `+inf`
/// when `floor(x)` is even, else `-inf` (OpenCL's and C23's rules).
pub fn tanpi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let r = x % 1.0;
    let a = r.abs();
    let odd = (x % 2.0).abs() >= 1.0;
    if a == 0.0 {
        let z = if x.is_sign_negative() { -0.0 } else { 0.0 };
        return if odd { -z } else { z };
    }
    if a == 0.5 {
        let f = x.floor();
        return if f % 2.0 == 0.0 {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
    }
    let t = if a <= 0.25 {
        (PI * a).tan()
    } else if a <= 0.75 {
        1.0 / (PI * (0.5 - a)).tan()
    } else {
        -(PI * (1.0 - a)).tan()
    };
    if r < 0.0 {
        -t
    } else {
        t
    }
}

/// `x^y` for `x >= 0` with `powr`'s special cases (NaN where `pow` picks a value by
/// convention).
pub fn powr(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if y == 0.0 && (x == 0.0 || x.is_infinite()) {
        return f64::NAN;
    }
    if x == 1.0 && y.is_infinite() {
        return f64::NAN;
    }
    x.powf(y)
}

/// `x^(1/n)`. `pow(|x|, 1/n)` is off by the rounding of `1/n` times `ln |x|` (hundreds of ulp
/// for large `|x|`); one Newton step on `y^n = |x|` removes that. `|x|` is first scaled by
/// `2^(-n m)` (`m` its exponent divided by `n`, truncated) into `[2^-|n|, 2^|n|]` and the root
/// by `2^m` after, so the step's powers stay normal and finite (without it, subnormal and
/// huge `|x|` skipped the step: `rootn(1e-308, 3)` was 114 ulp off, `rootn(f64::MAX, 5)` 62).
pub fn rootn(x: f64, n: i32) -> f64 {
    if n == 0 || x.is_nan() || (x < 0.0 && n % 2 == 0) {
        return f64::NAN;
    }
    let odd = n % 2 != 0;
    let sign = |v: f64| if odd && x.is_sign_negative() { -v } else { v };
    let ax = x.abs();
    if ax == 0.0 {
        return sign(if n < 0 { f64::INFINITY } else { 0.0 });
    }
    if ax.is_infinite() {
        return sign(if n < 0 { 0.0 } else { f64::INFINITY });
    }
    let (_, e) = libm::frexp(ax);
    let m = (e - 1) / n;
    let xs = libm::scalbn(ax, -(n * m));
    let y0 = xs.powf(1.0 / f64::from(n));
    let q = y0.powf(f64::from(n)) / xs;
    let y = if q.is_finite() && q != 0.0 && xs.is_normal() && y0.is_normal() {
        y0 - y0 * (q - 1.0) / f64::from(n)
    } else {
        y0
    };
    sign(libm::scalbn(y, m))
}

/// The gamma function (musl's algorithm through the `libm` crate), with `tgamma(-inf) = NaN`.
pub fn tgamma(x: f64) -> f64 {
    libm::tgamma(x)
}

/// `ln |gamma(x)|`.
pub fn lgamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// The error function.
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}

/// The complementary error function.
pub fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_points() {
        assert_eq!(sinpi(1.0).to_bits(), 0f64.to_bits());
        assert_eq!(sinpi(-2.0).to_bits(), (-0f64).to_bits());
        assert_eq!(sinpi(0.5), 1.0);
        assert_eq!(sinpi(-1.5), 1.0);
        assert_eq!(cospi(0.5).to_bits(), 0f64.to_bits());
        assert_eq!(cospi(-1.5).to_bits(), 0f64.to_bits());
        assert_eq!(cospi(1.0), -1.0);
        assert!((tanpi(0.25) - 1.0).abs() <= f64::EPSILON);
        assert_eq!(tanpi(0.5), f64::INFINITY);
        assert_eq!(tanpi(1.5), f64::NEG_INFINITY);
        assert_eq!(tanpi(-0.5), f64::NEG_INFINITY);
        assert_eq!(tanpi(1.0).to_bits(), (-0f64).to_bits());
        assert_eq!(tanpi(2.0).to_bits(), 0f64.to_bits());
        assert_eq!(rootn(-27.0, 3), -3.0);
        assert!(rootn(-16.0, 4).is_nan());
        assert_eq!(rootn(-0.0, -3), f64::NEG_INFINITY);
        assert!(powr(0.0, 0.0).is_nan());
        assert_eq!(powr(2.0, 10.0), 1024.0);
    }
}

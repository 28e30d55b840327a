//! Built-ins whose GLSL.std.450 (or core SPIR-V) form is not exact enough on real drivers,
//! written out: `fmod` exact by a loop of exact subtractions (lavapipe's `OpFRem` is
//! `x - y * trunc(x / y)`), `ldexp` by exact power-of-two scalings (its `Ldexp` does not
//! overflow to infinity), `exp` by a Cody-Waite reduction, `asin`/`acos` through `atan2`,
//! the `*pi` functions with an exact argument reduction, and the `f64` to `f16` conversion
//! rounded once (through `f32` rounded to odd).

use super::{Lower, R};
use crate::codegen::spirv::op;
use crate::ir::{MathFn, Scalar, Type};

/// The mantissa bits and exponent bias of a float type.
fn format(s: Scalar) -> (u32, i64) {
    match s {
        Scalar::F64 => (52, 1023),
        Scalar::F16 => (10, 15),
        _ => (23, 127),
    }
}

impl Lower<'_> {
    /// `2^k` (of float type `at`) for an `i32` `k` within the normal range, built from bits.
    fn pow2(&mut self, at: Type, k: u32) -> R<u32> {
        let s = at.scalar;
        let (mant, bias) = format(s);
        let it = at.with_scalar(Scalar::I32);
        let i = self.vty(it)?;
        let b = self.const_of(it, bias as u64)?;
        let e = self.op(op::I_ADD, i, &[k, b]);
        let ut = at.with_scalar(Self::uint_of_size(s.size()));
        let u = self.vty(ut)?;
        let e = if s.size() == 4 {
            e
        } else {
            self.op(op::U_CONVERT, u, &[e])
        };
        let sh = self.const_of(ut, mant as u64)?;
        let bits = self.op(op::SHIFT_LEFT_LOGICAL, u, &[e, sh]);
        let t = self.vty(at)?;
        Ok(self.op(op::BITCAST, t, &[bits]))
    }

    /// `x * 2^n` (n `i32`): `n` clamped to where the result saturates, then three exact
    /// scalings by powers of two within the normal range.
    pub(super) fn ldexp(&mut self, at: Type, x: u32, n: u32) -> R<u32> {
        let s = at.scalar;
        let (mant, bias) = format(s);
        let lim = (2 * bias as u64 + mant as u64 + 2) as i64;
        let it = at.with_scalar(Scalar::I32);
        let i = self.vty(it)?;
        let lo = self.const_of(it, (-lim) as u64)?;
        let hi = self.const_of(it, lim as u64)?;
        let n = self.glsl(i, op::GLSL_S_MAX, &[n, lo]);
        let n = self.glsl(i, op::GLSL_S_MIN, &[n, hi]);
        let three = self.const_of(it, 3)?;
        let n1 = self.op(op::S_DIV, i, &[n, three]);
        let n2 = self.op(op::S_DIV, i, &[n, three]);
        let n12 = self.op(op::I_ADD, i, &[n1, n2]);
        let n3 = self.op(op::I_SUB, i, &[n, n12]);
        let t = self.vty(at)?;
        let mut r = x;
        for k in [n1, n2, n3] {
            let p = self.pow2(at, k)?;
            r = self.fop(op::F_MUL, t, &[r, p]);
        }
        Ok(r)
    }

    /// `exp(x)`: `n = rint(x / ln 2)`, `r = x - n ln 2` in two exact-ish parts, then
    /// `exp(r) * 2^n`.
    pub(super) fn exp(&mut self, at: Type, x: u32) -> R<u32> {
        let s = at.scalar;
        let t = self.vty(at)?;
        let (hi, lo) = match s {
            Scalar::F64 => (
                f64::from_bits(0x3fe6_2e42_fee0_0000),
                f64::from_bits(0x3dea_39ef_3579_3c76),
            ),
            _ => (0.693_145_751_953_125, 1.428_606_8e-6),
        };
        // Beyond where the result saturates, clamped (so that the reduction stays exact).
        let lim = self.float_const(at, if s == Scalar::F64 { 800.0 } else { 120.0 })?;
        let nlim = self.float_const(at, if s == Scalar::F64 { -800.0 } else { -120.0 })?;
        let xc = self.glsl(t, op::GLSL_N_MIN, &[x, lim]);
        let xc = self.glsl(t, op::GLSL_N_MAX, &[xc, nlim]);
        let x_in = x;
        let x = xc;
        let l2e = self.float_const(at, std::f64::consts::LOG2_E)?;
        let q = self.f2(at, op::F_MUL, x, l2e)?;
        let n = self.g1(at, op::GLSL_ROUND_EVEN, q)?;
        let hic = self.float_const(at, hi)?;
        let loc = self.float_const(at, lo)?;
        let a = self.f2(at, op::F_MUL, n, hic)?;
        let r = self.f2(at, op::F_SUB, x, a)?;
        let b = self.f2(at, op::F_MUL, n, loc)?;
        let r = self.f2(at, op::F_SUB, r, b)?;
        let e = self.glsl_f32(at, op::GLSL_EXP, &[r], "exp")?;
        let ni = self.cast(at, Scalar::I32, n)?;
        let v = self.ldexp(at, e, ni)?;
        // Infinities: +inf and +0 (the reduction would make them NaN).
        let zero = self.float_const(at, 0.0)?;
        let inf = self.float_const(at, f64::INFINITY)?;
        let pos = self.fcmp(at, op::F_ORD_GREATER_THAN, x_in, zero)?;
        let xi = self.is_inf(at, x_in)?;
        let lim_v = self.sel(at, pos, inf, zero)?;
        let _ = lim;
        let r = self.sel(at, xi, lim_v, v)?;
        let xn = self.is_nan(at, x_in)?;
        self.sel(at, xn, x_in, r)
    }

    /// `r`, or the sum of the arguments where one is NaN.
    pub(super) fn nan_through(&mut self, at: Type, args: &[u32], r: u32) -> R<u32> {
        let mut any = self.is_nan(at, args[0])?;
        let mut sum = args[0];
        for &x in &args[1..] {
            let n = self.is_nan(at, x)?;
            any = self.or(at, any, n)?;
            sum = self.f2(at, op::F_ADD, sum, x)?;
        }
        self.sel(at, any, sum, r)
    }

    /// `exp10(x)`: `n = rint(x log2 10)`, `r = x - n log10 2` in two parts, then
    /// `exp(r ln 10) * 2^n`.
    pub(super) fn exp10(&mut self, at: Type, x: u32) -> R<u32> {
        let lim = self.float_const(
            at,
            if at.scalar == Scalar::F64 {
                400.0
            } else {
                50.0
            },
        )?;
        let nlim = self.float_const(
            at,
            if at.scalar == Scalar::F64 {
                -400.0
            } else {
                -50.0
            },
        )?;
        let xc = self.glsl_f32(at, op::GLSL_N_MIN, &[x, lim], "exp10")?;
        let xc = self.glsl_f32(at, op::GLSL_N_MAX, &[xc, nlim], "exp10")?;
        let c = self.float_const(at, std::f64::consts::LOG2_10)?;
        let q = self.f2(at, op::F_MUL, xc, c)?;
        let n = self.g1(at, op::GLSL_ROUND_EVEN, q)?;
        let hi = self.float_const(at, 0.301_025_390_625)?;
        let lo = self.float_const(at, 4.605_039e-6)?;
        let a = self.f2(at, op::F_MUL, n, hi)?;
        let r = self.f2(at, op::F_SUB, xc, a)?;
        let b = self.f2(at, op::F_MUL, n, lo)?;
        let r = self.f2(at, op::F_SUB, r, b)?;
        let ln10 = self.float_const(at, std::f64::consts::LN_10)?;
        let rl = self.f2(at, op::F_MUL, r, ln10)?;
        let e = self.glsl_f32(at, op::GLSL_EXP, &[rl], "exp10")?;
        let ni = self.cast(at, Scalar::I32, n)?;
        let v = self.ldexp(at, e, ni)?;
        let xn = self.is_nan(at, x)?;
        self.sel(at, xn, x, v)
    }

    /// `sinh` and `cosh` from `exp`: `(e - 1/e) / 2` (with `expm1`'s accuracy for small
    /// `|x|` in `sinh`), and `exp(|x| / 2)^2 / 2` where `exp(|x|)` would overflow.
    pub(super) fn sinh_cosh(&mut self, sinh: bool, at: Type, x: u32) -> R<u32> {
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let half = self.float_const(at, 0.5)?;
        let one = self.float_const(at, 1.0)?;
        let e = self.exp(at, ax)?;
        let inv = self.f2(at, op::F_DIV, one, e)?;
        let big = if sinh {
            self.f2(at, op::F_SUB, e, inv)?
        } else {
            self.f2(at, op::F_ADD, e, inv)?
        };
        let big = self.f2(at, op::F_MUL, big, half)?;
        // Near overflow: exp(|x|/2) * (exp(|x|/2) / 2).
        let hx = self.f2(at, op::F_MUL, ax, half)?;
        let eh = self.exp(at, hx)?;
        let ehh = self.f2(at, op::F_MUL, eh, half)?;
        let huge = self.f2(at, op::F_MUL, eh, ehh)?;
        let lim = self.float_const(
            at,
            if at.scalar == Scalar::F64 {
                700.0
            } else {
                80.0
            },
        )?;
        let over = self.fcmp(at, op::F_ORD_GREATER_THAN, ax, lim)?;
        let r = self.sel(at, over, huge, big)?;
        let r = if sinh {
            // |x| < 1: (m + m / (m + 1)) / 2 with m = expm1(|x|) (Kahan's expm1).
            let em1 = self.f2(at, op::F_SUB, e, one)?;
            let l = self.glsl_f32(at, op::GLSL_LOG, &[e], "sinh")?;
            let q = self.f2(at, op::F_DIV, ax, l)?;
            let m = self.f2(at, op::F_MUL, em1, q)?;
            let e1 = self.fcmp(at, op::F_ORD_EQUAL, e, one)?;
            let m = self.sel(at, e1, ax, m)?;
            let m1 = self.f2(at, op::F_ADD, m, one)?;
            let d = self.f2(at, op::F_DIV, m, m1)?;
            let s = self.f2(at, op::F_ADD, m, d)?;
            let s = self.f2(at, op::F_MUL, s, half)?;
            let small = self.fcmp(at, op::F_ORD_LESS_THAN, ax, one)?;
            let r = self.sel(at, small, s, r)?;
            self.copysign(at, r, x)?
        } else {
            r
        };
        let xn = self.is_nan(at, x)?;
        self.sel(at, xn, x, r)
    }

    /// `fma(a, b, c)` rounded once: for `f32` in `f64` (the product exact, the sum rounded to
    /// odd by its error term, then to `f32`); for `f64` by Boldo and Melquiond's emulation
    /// ([`Lower::fma64`]). lavapipe's GLSL `Fma` is not fused. A device without `f64` uses
    /// GLSL's `Fma`.
    pub(super) fn fma(&mut self, at: Type, a: u32, b: u32, c: u32) -> R<u32> {
        let t = self.vty(at)?;
        if at.scalar == Scalar::F64 {
            return self.fma64(at, a, b, c);
        }
        if at.scalar != Scalar::F32 || !self.t.float64 {
            return Ok(self.glsl(t, op::GLSL_FMA, &[a, b, c]));
        }
        let dt = at.with_scalar(Scalar::F64);
        let d = self.vty(dt)?;
        let (a, b, c) = (
            self.fop(op::F_CONVERT, d, &[a]),
            self.fop(op::F_CONVERT, d, &[b]),
            self.fop(op::F_CONVERT, d, &[c]),
        );
        let p = self.farith(crate::ir::BinaryOp::Mul, dt, a, b)?;
        let odd = self.sum_to_odd(dt, p, c)?;
        // The exact zero of an exact sum keeps s (its sign is IEEE's).
        Ok(self.fop(op::F_CONVERT, t, &[odd]))
    }

    /// `x + y` (`f64`) rounded to odd: the rounded sum, moved one ulp towards the exact sum
    /// where it was inexact and its last bit is even.
    pub(super) fn sum_to_odd(&mut self, dt: Type, x: u32, y: u32) -> R<u32> {
        let d = self.vty(dt)?;
        let (s, err) = self.two_sum(dt, x, y)?;
        let zero = self.float_const(dt, 0.0)?;
        let inexact = self.fcmp(dt, op::F_ORD_NOT_EQUAL, err, zero)?;
        let ut = dt.with_scalar(Scalar::U64);
        let u = self.vty(ut)?;
        let sbits = self.op(op::BITCAST, u, &[s]);
        let one = self.const_of(ut, 1)?;
        let low = self.op(op::BITWISE_AND, u, &[sbits, one]);
        let zu = self.const_of(ut, 0)?;
        let bt = self.b(dt)?;
        let even = self.op(op::I_EQUAL, bt, &[low, zu]);
        // Towards the exact value: up in magnitude where err has s's sign.
        let sneg = self.fcmp(dt, op::F_ORD_LESS_THAN, s, zero)?;
        let eneg = self.fcmp(dt, op::F_ORD_LESS_THAN, err, zero)?;
        let same = self.op(op::LOGICAL_EQUAL, bt, &[sneg, eneg]);
        let up = self.op(op::I_ADD, u, &[sbits, one]);
        let down = self.op(op::I_SUB, u, &[sbits, one]);
        let moved = self.sel(ut, same, up, down)?;
        let fix = self.and(dt, inexact, even)?;
        let si = self.is_inf(dt, s)?;
        let fin = self.not(dt, si)?;
        let fix = self.and(dt, fix, fin)?;
        let bits = self.sel(ut, fix, moved, sbits)?;
        Ok(self.op(op::BITCAST, d, &[bits]))
    }

    /// `sum c[k] x^k` by Horner's rule (coefficients from the constant term up).
    pub(super) fn horner(&mut self, at: Type, x: u32, coeffs: &[f64]) -> R<u32> {
        let mut acc = self.float_const(at, *coeffs.last().expect("coefficients"))?;
        for &c in coeffs.iter().rev().skip(1) {
            let m = self.f2(at, op::F_MUL, acc, x)?;
            let cc = self.float_const(at, c)?;
            acc = self.f2(at, op::F_ADD, m, cc)?;
        }
        Ok(acc)
    }

    /// `asin` of `|t| <= 1/2` by its Taylor series (to 2^-60 relative at 1/2).
    fn asin_series(&mut self, at: Type, t: u32) -> R<u32> {
        // asin t = t + t^3 sum c_k t^(2k), c_k = (2k+1)! / (4^(k+1) ((k+1)!)^2 (2k+3)) ...
        // written as t * P(t^2) with P's coefficients (2k)! / (4^k (k!)^2 (2k+1)).
        let mut coeffs = Vec::new();
        let mut c = 1.0f64;
        let n = if at.scalar == Scalar::F64 { 26 } else { 12 };
        for k in 0..n {
            coeffs.push(c / (2 * k + 1) as f64);
            c *= (2 * k + 1) as f64 / (2 * k + 2) as f64;
        }
        let t2 = self.f2(at, op::F_MUL, t, t)?;
        let p = self.horner(at, t2, &coeffs)?;
        self.f2(at, op::F_MUL, t, p)
    }

    /// `expm1(x)`: the Taylor series where `|x| < 1` (no cancellation), `exp(x) - 1` beyond.
    pub(super) fn expm1(&mut self, at: Type, x: u32) -> R<u32> {
        // x (1 + x/2 + x^2/6 + ...): the sign of a zero x survives.
        let mut coeffs = Vec::new();
        let mut f = 1.0f64;
        let n = if at.scalar == Scalar::F64 { 22 } else { 14 };
        for k in 1..n {
            f *= k as f64;
            coeffs.push(1.0 / f);
        }
        let p = self.horner(at, x, &coeffs)?;
        let p = self.f2(at, op::F_MUL, x, p)?;
        let e = self.exp(at, x)?;
        let one = self.float_const(at, 1.0)?;
        let em1 = self.f2(at, op::F_SUB, e, one)?;
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let small = self.fcmp(at, op::F_ORD_LESS_THAN, ax, one)?;
        let r = self.sel(at, small, p, em1)?;
        // expm1(+-0) = +-0 (the series gives it).
        let xn = self.is_nan(at, x)?;
        self.sel(at, xn, x, r)
    }

    /// `|x|^n` of an `f32` `x` and `i32` `n` by binary powering in `f64` (at most 62
    /// products, each rounded to 53 bits), rounded to `f32` once: GLSL's `Pow` was 21 ulp off.
    pub(super) fn pown_f64(&mut self, x: u32, n: u32) -> R<u32> {
        let dt = Type::F64;
        let d = self.vty(dt)?;
        let u = self.u32_ty();
        let bt = self.m.ty(crate::codegen::spirv::module::Ty::Bool);
        let xd = self.fop(op::F_CONVERT, d, &[x]);
        let axd = self.g1(dt, op::GLSL_F_ABS, xd)?;
        let an = self.glsl(u, op::GLSL_S_ABS, &[n]);
        let one = self.float_const(dt, 1.0)?;
        let saved = self.cache.clone();
        let (rv, bv, ev) = (
            self.var(op::SC_FUNCTION, d),
            self.var(op::SC_FUNCTION, d),
            self.var(op::SC_FUNCTION, u),
        );
        self.emit(op::STORE, &[rv, one]);
        self.emit(op::STORE, &[bv, axd]);
        self.emit(op::STORE, &[ev, an]);
        let (header, check, body, cont, merge) = (
            self.m.id(),
            self.m.id(),
            self.m.id(),
            self.m.id(),
            self.m.id(),
        );
        self.branch(header);
        self.label(header);
        self.emit(op::LOOP_MERGE, &[merge, cont, 0]);
        self.branch(check);
        self.label(check);
        let e = self.op(op::LOAD, u, &[ev]);
        let z = self.u32c(0);
        let more = self.op(op::I_NOT_EQUAL, bt, &[e, z]);
        self.emit(op::BRANCH_CONDITIONAL, &[more, body, merge]);
        self.label(body);
        let e = self.op(op::LOAD, u, &[ev]);
        let r = self.op(op::LOAD, d, &[rv]);
        let b = self.op(op::LOAD, d, &[bv]);
        let onei = self.u32c(1);
        let low = self.op(op::BITWISE_AND, u, &[e, onei]);
        let odd = self.op(op::I_NOT_EQUAL, bt, &[low, z]);
        let rb = self.fop(op::F_MUL, d, &[r, b]);
        let r2 = self.op(op::SELECT, d, &[odd, rb, r]);
        self.emit(op::STORE, &[rv, r2]);
        let bb = self.fop(op::F_MUL, d, &[b, b]);
        self.emit(op::STORE, &[bv, bb]);
        let e2 = self.op(op::SHIFT_RIGHT_LOGICAL, u, &[e, onei]);
        self.emit(op::STORE, &[ev, e2]);
        self.branch(cont);
        self.label(cont);
        self.branch(header);
        self.label(merge);
        self.cache = saved;
        let r = self.op(op::LOAD, d, &[rv]);
        let inv = self.fop(op::F_DIV, d, &[one, r]);
        let zi = self.u32c(0);
        let neg = self.op(op::S_LESS_THAN, bt, &[n, zi]);
        let r = self.op(op::SELECT, d, &[neg, inv, r]);
        let f = self.vty(Type::F32)?;
        Ok(self.fop(op::F_CONVERT, f, &[r]))
    }

    /// `log1p(x)`: `2 atanh(s)` with `s = x / (2 + x)` by its series where `|x| < 1/2`
    /// (lavapipe's `Log` is far off near 1), `log(1 + x)` beyond.
    pub(super) fn log1p(&mut self, at: Type, x: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        let two = self.float_const(at, 2.0)?;
        let half = self.float_const(at, 0.5)?;
        let d = self.f2(at, op::F_ADD, two, x)?;
        let s = self.f2(at, op::F_DIV, x, d)?;
        let ss = self.f2(at, op::F_MUL, s, s)?;
        let n = if at.scalar == Scalar::F64 { 17 } else { 9 };
        let coeffs: Vec<f64> = (0..n).map(|k| 2.0 / (2 * k + 1) as f64).collect();
        let p = self.horner(at, ss, &coeffs)?;
        let series = self.f2(at, op::F_MUL, s, p)?;
        let u = self.f2(at, op::F_ADD, one, x)?;
        let l = self.glsl_f32(at, op::GLSL_LOG, &[u], "log1p")?;
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let small = self.fcmp(at, op::F_ORD_LESS_THAN, ax, half)?;
        let r = self.sel(at, small, series, l)?;
        let xn = self.is_nan(at, x)?;
        self.sel(at, xn, x, r)
    }

    /// `atan(x)`: `pi/2 - atan(1/|x|)` above 1, `pi/6 + atan((t sqrt 3 - 1) / (sqrt 3 + t))`
    /// above `tan(pi/12)`, then the series (lavapipe's GLSL `Atan` was 39 ulp off).
    pub(super) fn atan(&mut self, at: Type, x: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let inv = self.f2(at, op::F_DIV, one, ax)?;
        let big = self.fcmp(at, op::F_ORD_GREATER_THAN, ax, one)?;
        let t = self.sel(at, big, inv, ax)?;
        let s3 = self.float_const(at, 3f64.sqrt())?;
        let t3 = self.f2(at, op::F_MUL, t, s3)?;
        let num = self.f2(at, op::F_SUB, t3, one)?;
        let den = self.f2(at, op::F_ADD, s3, t)?;
        let u2 = self.f2(at, op::F_DIV, num, den)?;
        let lim = self.float_const(at, (std::f64::consts::PI / 12.0).tan())?;
        let mid = self.fcmp(at, op::F_ORD_GREATER_THAN, t, lim)?;
        let u = self.sel(at, mid, u2, t)?;
        let n = if at.scalar == Scalar::F64 { 16 } else { 8 };
        let coeffs: Vec<f64> = (0..n)
            .map(|k| if k % 2 == 0 { 1.0 } else { -1.0 } / (2 * k + 1) as f64)
            .collect();
        let uu = self.f2(at, op::F_MUL, u, u)?;
        let p = self.horner(at, uu, &coeffs)?;
        let a = self.f2(at, op::F_MUL, u, p)?;
        let pi6 = self.float_const(at, std::f64::consts::PI / 6.0)?;
        let am = self.f2(at, op::F_ADD, pi6, a)?;
        let a = self.sel(at, mid, am, a)?;
        let pi2 = self.float_const(at, std::f64::consts::FRAC_PI_2)?;
        let ab = self.f2(at, op::F_SUB, pi2, a)?;
        let a = self.sel(at, big, ab, a)?;
        let r = self.copysign(at, a, x)?;
        let xn = self.is_nan(at, x)?;
        self.sel(at, xn, x, r)
    }

    /// `atan2(y, x)` from `atan(y / x)` and the quadrant, with C's zeros and infinities.
    pub(super) fn atan2(&mut self, at: Type, y: u32, x: u32) -> R<u32> {
        let q = self.f2(at, op::F_DIV, y, x)?;
        let a = self.atan(at, q)?;
        let zero = self.float_const(at, 0.0)?;
        let pi = self.float_const(at, std::f64::consts::PI)?;
        let spi = self.copysign(at, pi, y)?;
        let shifted = self.f2(at, op::F_ADD, a, spi)?;
        // x negative, -0 included (its sign bit).
        let one = self.float_const(at, 1.0)?;
        let sx = self.copysign(at, one, x)?;
        let xneg = self.fcmp(at, op::F_ORD_LESS_THAN, sx, zero)?;
        let r = self.sel(at, xneg, shifted, a)?;
        // x = ±0: pi/2 with y's sign, whatever `y / x` gave (lavapipe folds a division by a
        // constant 0 to anything: `atan2pi(1.5, 0.0)` was NaN there).
        let x0 = self.fcmp(at, op::F_ORD_EQUAL, x, zero)?;
        let p2 = self.float_const(at, std::f64::consts::FRAC_PI_2)?;
        let p2 = self.copysign(at, p2, y)?;
        let r = self.sel(at, x0, p2, r)?;
        // 0/0: y (x = +0) or pi with y's sign (x = -0).
        let y0 = self.fcmp(at, op::F_ORD_EQUAL, y, zero)?;
        let both0 = self.and(at, x0, y0)?;
        let z = self.sel(at, xneg, spi, y)?;
        let r = self.sel(at, both0, z, r)?;
        // inf/inf: pi/4 or 3 pi/4 with y's sign.
        let xi = self.is_inf(at, x)?;
        let yi = self.is_inf(at, y)?;
        let bothi = self.and(at, xi, yi)?;
        let p4 = self.float_const(at, std::f64::consts::FRAC_PI_4)?;
        let p34 = self.float_const(at, 3.0 * std::f64::consts::FRAC_PI_4)?;
        let c = self.sel(at, xneg, p34, p4)?;
        let c = self.copysign(at, c, y)?;
        let r = self.sel(at, bothi, c, r)?;
        self.nan_through(at, &[y, x], r)
    }

    /// `asin` and `acos` from the series of `asin` on [-1/2, 1/2] and, beyond,
    /// `asin |x| = pi/2 - 2 asin(sqrt((1 - |x|) / 2))` (`1 - |x|` exact there); NaN outside
    /// [-1, 1]. (lavapipe's GLSL `Asin` was 3528 ulp off, its `Atan2` 21.)
    pub(super) fn asin_acos(&mut self, asin: bool, at: Type, x: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        let half = self.float_const(at, 0.5)?;
        let two = self.float_const(at, 2.0)?;
        let pi2 = self.float_const(at, std::f64::consts::FRAC_PI_2)?;
        let pi = self.float_const(at, std::f64::consts::PI)?;
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let small = self.fcmp(at, op::F_ORD_LESS_THAN_EQUAL, ax, half)?;
        // The reduced argument, for |x| > 1/2.
        let d = self.f2(at, op::F_SUB, one, ax)?;
        let z = self.f2(at, op::F_MUL, d, half)?;
        let zero = self.float_const(at, 0.0)?;
        let t_ = self.vty(at)?;
        let z = self.glsl(t_, op::GLSL_N_MAX, &[z, zero]);
        let sz = self.g1(at, op::GLSL_SQRT, z)?;
        let t = self.sel(at, small, x, sz)?;
        let s = self.asin_series(at, t)?;
        let r = if asin {
            // |x| > 1/2: pi/2 - 2 s, with x's sign.
            let s2 = self.f2(at, op::F_MUL, s, two)?;
            let big = self.f2(at, op::F_SUB, pi2, s2)?;
            let big = self.copysign(at, big, x)?;
            self.sel(at, small, s, big)?
        } else {
            // acos: pi/2 - asin x inside; 2 s for x > 1/2, pi - 2 s for x < -1/2.
            let inner = self.f2(at, op::F_SUB, pi2, s)?;
            let s2 = self.f2(at, op::F_MUL, s, two)?;
            let neg = self.f2(at, op::F_SUB, pi, s2)?;
            let xneg = self.fcmp(at, op::F_ORD_LESS_THAN, x, zero)?;
            let outer = self.sel(at, xneg, neg, s2)?;
            self.sel(at, small, inner, outer)?
        };
        let out = self.fcmp(at, op::F_ORD_GREATER_THAN, ax, one)?;
        let nan = self.float_const(at, f64::NAN)?;
        let r = self.sel(at, out, nan, r)?;
        let xn = self.is_nan(at, x)?;
        self.sel(at, xn, x, r)
    }

    /// `sinpi`, `cospi`, `tanpi`: `r = x - 2 rint(x / 2)` in [-1, 1] (exact), folded into
    /// [-1/2, 1/2] where the sine of `pi r` is accurate.
    pub(super) fn trig_pi(&mut self, m: MathFn, at: Type, x: u32) -> R<u32> {
        let t = self.vty(at)?;
        let half = self.float_const(at, 0.5)?;
        let two = self.float_const(at, 2.0)?;
        let one = self.float_const(at, 1.0)?;
        let zero = self.float_const(at, 0.0)?;
        let pi = self.float_const(at, std::f64::consts::PI)?;
        let h = self.f2(at, op::F_MUL, x, half)?;
        let k = self.g1(at, op::GLSL_ROUND_EVEN, h)?;
        let k2 = self.f2(at, op::F_MUL, k, two)?;
        let r = self.f2(at, op::F_SUB, x, k2)?;
        // Large |x| is an even integer: r = 0 exactly there.
        let ar = self.g1(at, op::GLSL_F_ABS, r)?;
        let sin_of = |l: &mut Self, v: u32| -> R<u32> {
            let a = l.f2(at, op::F_MUL, v, pi)?;
            l.glsl_f32(at, op::GLSL_SIN, &[a], m.name())
        };
        // sin(pi r) with r folded: |r| > 1/2 -> sign(r) - r.
        let sr = self.copysign(at, one, r)?;
        let folded = self.f2(at, op::F_SUB, sr, r)?;
        let big = self.fcmp(at, op::F_ORD_GREATER_THAN, ar, half)?;
        let rs = self.sel(at, big, folded, r)?;
        let sinv = sin_of(self, rs)?;
        // cos(pi r) = sin(pi (1/2 - |r|)).
        let c_arg = self.f2(at, op::F_SUB, half, ar)?;
        let cosv = sin_of(self, c_arg)?;
        let xi = self.is_inf(at, x)?;
        let xn = self.is_nan(at, x)?;
        let bad = self.or(at, xi, xn)?;
        let nan = self.float_const(at, f64::NAN)?;
        let res = match m {
            MathFn::Sinpi => {
                // Zeros take the sign of x.
                let z = self.fcmp(at, op::F_ORD_EQUAL, sinv, zero)?;
                let sz = self.copysign(at, zero, x)?;
                self.sel(at, z, sz, sinv)?
            }
            MathFn::Cospi => {
                let z = self.fcmp(at, op::F_ORD_EQUAL, cosv, zero)?;
                self.sel(at, z, zero, cosv)?
            }
            _ => {
                let sz = {
                    let z = self.fcmp(at, op::F_ORD_EQUAL, sinv, zero)?;
                    let sz = self.copysign(at, zero, x)?;
                    self.sel(at, z, sz, sinv)?
                };
                self.fop(op::F_DIV, t, &[sz, cosv])
            }
        };
        self.sel(at, bad, nan, res)
    }

    /// The `f64` to `f16` conversion rounded once: to `f32` rounded to odd (the nearest-even
    /// result moved one step towards `x` where it was inexact and even), then to `f16`.
    pub(super) fn f64_to_f16(&mut self, from: Type, x: u32) -> R<u32> {
        let ft = from.with_scalar(Scalar::F32);
        let f = self.vty(ft)?;
        let y = self.fop(op::F_CONVERT, f, &[x]);
        let dt = self.vty(from)?;
        let back = self.fop(op::F_CONVERT, dt, &[y]);
        let bt = self.b(from)?;
        let inexact = self.op(op::F_ORD_NOT_EQUAL, bt, &[back, x]);
        let ut = from.with_scalar(Scalar::U32);
        let u = self.vty(ut)?;
        let yb = self.op(op::BITCAST, u, &[y]);
        let one = self.const_of(ut, 1)?;
        let low = self.op(op::BITWISE_AND, u, &[yb, one]);
        let zu = self.const_of(ut, 0)?;
        let even = self.op(op::I_EQUAL, bt, &[low, zu]);
        let ab = self.g1(from, op::GLSL_F_ABS, back)?;
        let ax = self.g1(from, op::GLSL_F_ABS, x)?;
        let above = self.fcmp(from, op::F_ORD_GREATER_THAN, ab, ax)?;
        let down = self.op(op::I_SUB, u, &[yb, one]);
        let up = self.op(op::I_ADD, u, &[yb, one]);
        let moved = self.sel(ut, above, down, up)?;
        // Not at infinity (an overflow stays infinite).
        let yi = self.is_inf(ft, y)?;
        let fin = self.not(ft, yi)?;
        let fix = self.and(from, inexact, even)?;
        let fix = self.and(from, fix, fin)?;
        let bits = self.sel(ut, fix, moved, yb)?;
        let odd = self.op(op::BITCAST, f, &[bits]);
        let h = self.vty(from.with_scalar(Scalar::F16))?;
        Ok(self.fop(op::F_CONVERT, h, &[odd]))
    }

    /// The exponent of a finite nonzero `x` (scalar), subnormals included, as `i32`.
    pub(super) fn exponent(&mut self, at: Type, x: u32) -> R<u32> {
        let s = at.scalar;
        let (mant, bias) = format(s);
        let ut = at.with_scalar(Self::uint_of_size(s.size()));
        let u = self.vty(ut)?;
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let scale = self.float_const(at, 2f64.powi(mant as i32 + 2))?;
        let small_lim = self.float_const(at, 2f64.powi(1 - bias as i32))?;
        let small = self.fcmp(at, op::F_ORD_LESS_THAN, ax, small_lim)?;
        let xs = self.f2(at, op::F_MUL, ax, scale)?;
        let xx = self.sel(at, small, xs, ax)?;
        let xb = self.op(op::BITCAST, u, &[xx]);
        let sh = self.const_of(ut, mant as u64)?;
        let e = self.op(op::SHIFT_RIGHT_LOGICAL, u, &[xb, sh]);
        let it = at.with_scalar(Scalar::I32);
        let i = self.vty(it)?;
        let e = if s.size() == 4 {
            e
        } else {
            self.op(op::U_CONVERT, i, &[e])
        };
        let biasc = self.const_of(it, bias as u64)?;
        let e = self.op(op::I_SUB, i, &[e, biasc]);
        let adj = self.const_of(it, mant as u64 + 2)?;
        let es = self.op(op::I_SUB, i, &[e, adj]);
        self.sel(it, small, es, e)
    }

    /// `fmod(x, y)` exactly (componentwise for vectors).
    pub(super) fn fmod(&mut self, at: Type, x: u32, y: u32) -> R<u32> {
        if at.width > 1 {
            let ct = at.component();
            let c = self.vty(ct)?;
            let t = self.vty(at)?;
            let mut parts = Vec::new();
            for k in 0..at.width as u32 {
                let xc = self.op(op::COMPOSITE_EXTRACT, c, &[x, k]);
                let yc = self.op(op::COMPOSITE_EXTRACT, c, &[y, k]);
                parts.push(self.fmod(ct, xc, yc)?);
            }
            return Ok(self.op(op::COMPOSITE_CONSTRUCT, t, &parts));
        }
        let t = self.vty(at)?;
        let zero = self.float_const(at, 0.0)?;
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let ay = self.g1(at, op::GLSL_F_ABS, y)?;
        let xn = self.is_nan(at, x)?;
        let yn = self.is_nan(at, y)?;
        let xi = self.is_inf(at, x)?;
        let y0 = self.fcmp(at, op::F_ORD_EQUAL, ay, zero)?;
        let mut nan_case = self.or(at, xn, yn)?;
        nan_case = self.or(at, nan_case, xi)?;
        nan_case = self.or(at, nan_case, y0)?;
        let yi = self.is_inf(at, y)?;
        // The loop runs on |x| only where the answer is not special.
        let special = self.or(at, nan_case, yi)?;
        let start = self.sel(at, special, zero, ax)?;
        let ey = {
            let one = self.float_const(at, 1.0)?;
            let safe_y = self.sel(at, special, one, ay)?;
            self.exponent(at, safe_y)?
        };
        let saved = self.cache.clone();
        let rv = self.var(op::SC_FUNCTION, t);
        self.emit(op::STORE, &[rv, start]);
        let (header, check, body, cont, merge) = (
            self.m.id(),
            self.m.id(),
            self.m.id(),
            self.m.id(),
            self.m.id(),
        );
        // A counted loop: each step lowers the exponent of r by at least one, so
        // e(|x|) - e(|y|) + 2 steps suffice; a step once r < |y| keeps r. (With the exit on
        // r >= |y| itself, lavapipe ran the second such loop of a kernel once where the
        // sub-group was not full: two `fmod`s in one expression, as `remquo` has, went wrong.)
        let it = Type::I32;
        let i = self.vty(it)?;
        let ex = {
            let one = self.float_const(at, 1.0)?;
            let safe_x = self.sel(at, special, one, ax)?;
            self.exponent(at, safe_x)?
        };
        let two = self.const_of(it, 2)?;
        let steps = self.op(op::I_SUB, i, &[ex, ey]);
        let steps = self.op(op::I_ADD, i, &[steps, two]);
        let zero_i = self.const_of(it, 0)?;
        let steps = self.sel(it, special, zero_i, steps)?;
        let (ayv, eyv, nv, iv) = (
            self.var(op::SC_FUNCTION, t),
            self.var(op::SC_FUNCTION, i),
            self.var(op::SC_FUNCTION, i),
            self.var(op::SC_FUNCTION, i),
        );
        self.emit(op::STORE, &[ayv, ay]);
        self.emit(op::STORE, &[eyv, ey]);
        self.emit(op::STORE, &[nv, steps]);
        self.emit(op::STORE, &[iv, zero_i]);
        self.branch(header);
        self.label(header);
        self.emit(op::LOOP_MERGE, &[merge, cont, 0]);
        self.branch(check);
        self.label(check);
        let bt = self.b(it)?;
        let (ic, nc) = (self.op(op::LOAD, i, &[iv]), self.op(op::LOAD, i, &[nv]));
        let more = self.op(op::S_LESS_THAN, bt, &[ic, nc]);
        self.emit(op::BRANCH_CONDITIONAL, &[more, body, merge]);
        self.label(body);
        let r = self.op(op::LOAD, t, &[rv]);
        let ay = self.op(op::LOAD, t, &[ayv]);
        let ey = self.op(op::LOAD, i, &[eyv]);
        let ic = self.op(op::LOAD, i, &[iv]);
        let onei = self.const_of(it, 1)?;
        let ic = self.op(op::I_ADD, i, &[ic, onei]);
        self.emit(op::STORE, &[iv, ic]);
        let go = self.fcmp(at, op::F_ORD_GREATER_THAN_EQUAL, r, ay)?;
        // The largest |y| * 2^k <= r, subtracted (exact: it is within a factor 2 of r).
        let er = self.exponent(at, r)?;
        let k = self.op(op::I_SUB, i, &[er, ey]);
        let big = self.ldexp(at, ay, k)?;
        let onei = self.const_of(it, 1)?;
        let k1 = self.op(op::I_SUB, i, &[k, onei]);
        let small = self.ldexp(at, ay, k1)?;
        let over = self.fcmp(at, op::F_ORD_GREATER_THAN, big, r)?;
        let sub = self.sel(at, over, small, big)?;
        let nr = self.f2(at, op::F_SUB, r, sub)?;
        let nr = self.sel(at, go, nr, r)?;
        self.emit(op::STORE, &[rv, nr]);
        self.branch(cont);
        self.label(cont);
        self.branch(header);
        self.label(merge);
        self.cache = saved;
        let r = self.op(op::LOAD, t, &[rv]);
        // x's sign by negation (lavapipe mangles bit operations on some float results).
        let one = self.float_const(at, 1.0)?;
        let sx = self.copysign(at, one, x)?;
        let xneg = self.fcmp(at, op::F_ORD_LESS_THAN, sx, zero)?;
        let nr = self.op(op::F_NEGATE, t, &[r]);
        let r = self.sel(at, xneg, nr, r)?;
        // A zero x is the result itself: lavapipe gave +0 for a literal `-0.0 % 1.5` (seed
        // 0x5EED2027, program 2850), the negation of the loop's zero lost there.
        let x0 = self.fcmp(at, op::F_ORD_EQUAL, x, zero)?;
        let r = self.sel(at, x0, x, r)?;
        let r = self.sel(at, yi, x, r)?;
        let nan = self.float_const(at, f64::NAN)?;
        self.sel(at, nan_case, nan, r)
    }
}

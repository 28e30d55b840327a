//! The `f64` transcendentals, which GLSL.std.450 has for 16- and 32-bit floats only: our own
//! argument reductions and polynomials, emitted as straight-line SPIR-V (componentwise on
//! vectors). One core per family: [`Lower::exp_core`] (a Cody-Waite reduction by `ln 2` of a
//! double-double argument, a Taylor polynomial, the scaling by `2^n`) serves `exp`, `exp2`,
//! `exp10`, `expm1`, `pow` and (through `exp`) `sinh`/`cosh`/`tanh`; [`Lower::log_core`]
//! (`log` of a double-double, as a double-double: `2 atanh((m - 1) / (m + 1))` of the
//! mantissa `m` in `[sqrt(1/2), sqrt(2))`) serves `log`, `log2`, `log10`, `log1p`, `pow` and
//! the inverse hyperbolics; [`Lower::sincos_core`] (a three-part Cody-Waite reduction by
//! `pi/2` in double-double, exact below `2^19 pi`, then Payne-Hanek-free: larger arguments
//! take a four-part reduction good to about `2^30`) serves `sin`, `cos` and `tan`. The special
//! cases (NaN, infinities, signed zeros, subnormals) are selects after the core, as the IR's
//! evaluator defines them. Exact products use Dekker's splitting (lavapipe's `Fma` is not
//! fused), and every float operation is `NoContraction`.

use super::{Lower, R};
use crate::codegen::spirv::op;
use crate::ir::{MathFn, Scalar, Type};

/// `ln 2` in two parts: the high part has 32 significant bits (so `n * hi` is exact).
const LN2_HI: u64 = 0x3fe6_2e42_fee0_0000;
const LN2_LO: u64 = 0x3dea_39ef_3579_3c76;
/// `ln 2`, `ln 10`, `log2 e`, `log10 e` as double-doubles (high, low).
const LN2: (f64, f64) = (std::f64::consts::LN_2, 2.319_046_813_846_299_6e-17);
const LN10: (f64, f64) = (std::f64::consts::LN_10, -2.170_756_223_382_249_4e-16);
const LOG2_E: (f64, f64) = (std::f64::consts::LOG2_E, 2.035_527_374_093_103_3e-17);
const LOG10_E: (f64, f64) = (std::f64::consts::LOG10_E, 1.098_319_650_216_765e-17);
/// `pi / 2` in 33-bit parts (each `k * part` exact for `|k| < 2^20`) and the rest.
const PIO2: [f64; 4] = [
    1.570_796_326_734_125_6,
    6.077_100_506_303_966e-11,
    2.022_266_248_711_166_5e-21,
    8.478_427_660_368_9e-32,
];

/// The bits of `2/pi` in 24-bit chunks: `2/pi = sum C[j] 2^(-24 (j + 1))` (computed with
/// 2000-bit arithmetic).
const TWO_OVER_PI: [u32; 56] = [
    0xa2f983, 0x6e4e44, 0x1529fc, 0x2757d1, 0xf534dd, 0xc0db62, 0x95993c, 0x439041, 0xfe5163,
    0xabdebb, 0xc561b7, 0x246e3a, 0x424dd2, 0xe00649, 0x2eea09, 0xd1921c, 0xfe1deb, 0x1cb129,
    0xa73ee8, 0x8235f5, 0x2ebb44, 0x84e99c, 0x7026b4, 0x5f7e41, 0x3991d6, 0x398353, 0x39f49c,
    0x845f8b, 0xbdf928, 0x3b1ff8, 0x97ffde, 0x05980f, 0xef2f11, 0x8b5a0a, 0x6d1f6d, 0x367ecf,
    0x27cb09, 0xb74f46, 0x3f669e, 0x5fea2d, 0x7527ba, 0xc7ebe5, 0xf17b3d, 0x0739f7, 0x8a5292,
    0xea6bfb, 0x5fb11f, 0x8d5d08, 0x560330, 0x46fc7b, 0x6babf0, 0xcfbc20, 0x9af436, 0x1da9e3,
    0x91615e, 0xe61b08,
];
/// `pi/2` as a double-double.
const PIO2_DD: (f64, f64) = (std::f64::consts::FRAC_PI_2, 6.123_233_995_736_766e-17);

impl Lower<'_> {
    /// `f64` versions of the GLSL.std.450 functions the writer uses, with GLSL's meaning
    /// and the IR's special cases (NaN in, NaN out; the infinities and zeros of C).
    pub(super) fn glsl64(&mut self, at: Type, f: u32, a: &[u32]) -> R<u32> {
        let x = a[0];
        let r = match f {
            op::GLSL_N_MIN | op::GLSL_N_MAX => {
                let t = self.vty(at)?;
                return Ok(self.glsl(t, f, a));
            }
            op::GLSL_EXP => {
                let zero = self.float_const(at, 0.0)?;
                self.exp_core(at, x, zero)?
            }
            op::GLSL_EXP2 => {
                let xc = self.clamp64(at, x, 2000.0)?;
                let (h, l) = self.mul_dd(at, xc, LN2)?;
                self.exp_core(at, h, l)?
            }
            op::GLSL_LOG | op::GLSL_LOG2 => {
                let zero = self.float_const(at, 0.0)?;
                let (h, l) = self.log_core(at, x, zero)?;
                let r = if f == op::GLSL_LOG {
                    h
                } else {
                    let (h, l) = self.mul_dd2(at, h, l, LOG2_E)?;
                    self.f2(at, op::F_ADD, h, l)?
                };
                self.log_specials(at, x, r)?
            }
            op::GLSL_POW => {
                // |x|^y for x >= 0 (the caller handles negative x, zeros and infinities).
                let zero = self.float_const(at, 0.0)?;
                let (lh, ll) = self.log_core(at, x, zero)?;
                let (ph, pl) = self.two_prod(at, a[1], lh)?;
                let yl = self.f2(at, op::F_MUL, a[1], ll)?;
                let pl = self.f2(at, op::F_ADD, pl, yl)?;
                let r = self.exp_core(at, ph, pl)?;
                return self.nan_through(at, a, r);
            }
            op::GLSL_SIN | op::GLSL_COS | op::GLSL_TAN => self.sincos_core(at, f, x)?,
            op::GLSL_TANH => self.tanh64(at, x)?,
            op::GLSL_ASINH => self.asinh64(at, x)?,
            op::GLSL_ACOSH => self.acosh64(at, x)?,
            op::GLSL_ATANH => self.atanh64(at, x)?,
            op::GLSL_INVERSE_SQRT => {
                // The square root is correctly rounded; the quotient rounds once more.
                let one = self.float_const(at, 1.0)?;
                let s = self.g1(at, op::GLSL_SQRT, x)?;
                self.f2(at, op::F_DIV, one, s)?
            }
            _ => {
                return Err(format!(
                    "GLSL.std.450 function {f} on f64 (no SPIR-V lowering yet)"
                ))
            }
        };
        self.nan_through(at, &[x], r)
    }

    /// A GLSL.std.450 function of `f32` arguments computed by [`Lower::glsl64`] and rounded
    /// to `f32` once.
    pub(super) fn glsl_via_f64(&mut self, at: Type, f: u32, a: &[u32]) -> R<u32> {
        self.via_f64(at, a, |l, dt, w| l.glsl64(dt, f, w))
    }

    /// `core` of the operands `a` (of float type `at`) converted to `f64` (its type is the
    /// second argument), rounded once back to `at`.
    pub(super) fn via_f64(
        &mut self,
        at: Type,
        a: &[u32],
        core: impl FnOnce(&mut Self, Type, &[u32]) -> R<u32>,
    ) -> R<u32> {
        let dt = at.with_scalar(Scalar::F64);
        let d = self.vty(dt)?;
        let wide: Vec<u32> = a
            .iter()
            .map(|&x| self.fop(op::F_CONVERT, d, &[x]))
            .collect();
        let r = core(self, dt, &wide)?;
        let t = self.vty(at)?;
        Ok(self.fop(op::F_CONVERT, t, &[r]))
    }

    /// Whether `s` (a float type) has its `/`, `sqrt` and trigonometry computed in `f64`
    /// ([`crate::codegen::spirv::SpirvTarget::f32_core_in_f64`]).
    pub(super) fn core_in_f64(&self, s: Scalar) -> bool {
        self.t.f32_core_in_f64 && self.t.float64 && matches!(s, Scalar::F32 | Scalar::F16)
    }

    /// The `f64` lowerings of IR built-ins that the generic path would compute less
    /// accurately in `f64` (`exp10`, `log10`, `log1p`, `expm1`, `fma`), and the special functions
    /// (`erf`, `erfc`, `tgamma`, `lgamma`) of both float types; `None` for the rest.
    pub(super) fn math64(&mut self, m: MathFn, at: Type, a: &[u32]) -> R<Option<u32>> {
        if matches!(
            m,
            MathFn::Erf | MathFn::Erfc | MathFn::Tgamma | MathFn::Lgamma
        ) {
            return self.special_fn(m, at, a[0]).map(Some);
        }
        if at.scalar != Scalar::F64 {
            return Ok(None);
        }
        let x = a[0];
        let r = match m {
            MathFn::Exp10 => {
                let xc = self.clamp64(at, x, 800.0)?;
                let (h, l) = self.mul_dd(at, xc, LN10)?;
                self.exp_core(at, h, l)?
            }
            MathFn::Log10 => {
                let zero = self.float_const(at, 0.0)?;
                let (h, l) = self.log_core(at, x, zero)?;
                let (h, l) = self.mul_dd2(at, h, l, LOG10_E)?;
                let r = self.f2(at, op::F_ADD, h, l)?;
                self.log_specials(at, x, r)?
            }
            MathFn::Fma => return self.fma64(at, a[0], a[1], a[2]).map(Some),
            MathFn::Log1p => self.log1p64(at, x)?,
            MathFn::Expm1 => self.expm1_64(at, x)?,
            _ => return Ok(None),
        };
        self.nan_through(at, &[x], r).map(Some)
    }

    /// `fma(a, b, c)` rounded once (lavapipe's GLSL `Fma` is not fused): Boldo and
    /// Melquiond's emulation, `th + RO(tl + ul)` with `uh + ul = a b` (TwoProduct),
    /// `th + tl = c + uh` (TwoSum) and `RO` rounding to odd. Where `a b` is zero, tiny (its
    /// error term would be inexact) or huge (the split would overflow), or anything is not
    /// finite, `a * b + c`, which is exact or saturates there.
    pub(super) fn fma64(&mut self, at: Type, a: u32, b: u32, c: u32) -> R<u32> {
        let (uh, ul) = self.two_prod(at, a, b)?;
        let (th, tl) = self.two_sum(at, c, uh)?;
        // Round to odd ([`Lower::sum_to_odd`]): th + RO(tl + ul) is then rounded once.
        let vo = self.sum_to_odd(at, tl, ul)?;
        let r = self.f2(at, op::F_ADD, th, vo)?;
        // The plain a * b + c where the emulation does not hold.
        let p = self.farith(crate::ir::BinaryOp::Mul, at, a, b)?;
        let plain = self.farith(crate::ir::BinaryOp::Add, at, p, c)?;
        let ap = self.g1(at, op::GLSL_F_ABS, uh)?;
        let hi = self.float_const(at, 2f64.powi(990))?;
        let lo = self.float_const(at, 2f64.powi(-960))?;
        let inside = self.fcmp(at, op::F_ORD_LESS_THAN, ap, hi)?;
        let above = self.fcmp(at, op::F_ORD_GREATER_THAN, ap, lo)?;
        let ok = self.and(at, inside, above)?;
        let rn = self.is_nan(at, r)?;
        let ri = self.is_inf(at, r)?;
        let bad = self.or(at, rn, ri)?;
        let good = self.not(at, bad)?;
        let ok = self.and(at, ok, good)?;
        let cinf = self.is_inf(at, c)?;
        let cfin = self.not(at, cinf)?;
        let ok = self.and(at, ok, cfin)?;
        let r = self.sel(at, ok, r, plain)?;
        // An infinite c with finite a and b: c (the exact product is finite, where the plain
        // a * b may overflow: fma(1e300, 1e300, -inf) is -inf, not NaN; seed 0x5EED2027,
        // program 7300).
        let mut fin = cinf;
        for v in [a, b] {
            let vi = self.is_inf(at, v)?;
            let vn = self.is_nan(at, v)?;
            let bad = self.or(at, vi, vn)?;
            let ok_v = self.not(at, bad)?;
            fin = self.and(at, fin, ok_v)?;
        }
        self.sel(at, fin, c, r)
    }

    /// `x` clamped to `[-lim, lim]` (NaN stays NaN through the caller's select).
    pub(super) fn clamp64(&mut self, at: Type, x: u32, lim: f64) -> R<u32> {
        let t = self.vty(at)?;
        let hi = self.float_const(at, lim)?;
        let lo = self.float_const(at, -lim)?;
        let c = self.glsl(t, op::GLSL_N_MIN, &[x, hi]);
        Ok(self.glsl(t, op::GLSL_N_MAX, &[c, lo]))
    }

    /// `a + b` as `(sum, error)` exactly (Knuth's TwoSum).
    pub(super) fn two_sum(&mut self, at: Type, a: u32, b: u32) -> R<(u32, u32)> {
        let s = self.f2(at, op::F_ADD, a, b)?;
        let bb = self.f2(at, op::F_SUB, s, a)?;
        let ab = self.f2(at, op::F_SUB, s, bb)?;
        let e1 = self.f2(at, op::F_SUB, a, ab)?;
        let e2 = self.f2(at, op::F_SUB, b, bb)?;
        let e = self.f2(at, op::F_ADD, e1, e2)?;
        Ok((s, e))
    }

    /// `a + b` as `(sum, error)` exactly where `|a| >= |b|` (Dekker's Fast2Sum).
    pub(super) fn fast_two_sum(&mut self, at: Type, a: u32, b: u32) -> R<(u32, u32)> {
        let s = self.f2(at, op::F_ADD, a, b)?;
        let d = self.f2(at, op::F_SUB, s, a)?;
        let e = self.f2(at, op::F_SUB, b, d)?;
        Ok((s, e))
    }

    /// Dekker's split of `a` (below `2^996`) into two 26-bit halves.
    fn split(&mut self, at: Type, a: u32) -> R<(u32, u32)> {
        let c = self.float_const(at, 134_217_729.0)?;
        let ca = self.f2(at, op::F_MUL, c, a)?;
        let d = self.f2(at, op::F_SUB, ca, a)?;
        let hi = self.f2(at, op::F_SUB, ca, d)?;
        let lo = self.f2(at, op::F_SUB, a, hi)?;
        Ok((hi, lo))
    }

    /// `a * b` as `(product, error)` exactly (Dekker's TwoProduct, no fused multiply-add).
    pub(super) fn two_prod(&mut self, at: Type, a: u32, b: u32) -> R<(u32, u32)> {
        let p = self.f2(at, op::F_MUL, a, b)?;
        let (ah, al) = self.split(at, a)?;
        let (bh, bl) = self.split(at, b)?;
        let hh = self.f2(at, op::F_MUL, ah, bh)?;
        let e = self.f2(at, op::F_SUB, hh, p)?;
        let hl = self.f2(at, op::F_MUL, ah, bl)?;
        let e = self.f2(at, op::F_ADD, e, hl)?;
        let lh = self.f2(at, op::F_MUL, al, bh)?;
        let e = self.f2(at, op::F_ADD, e, lh)?;
        let ll = self.f2(at, op::F_MUL, al, bl)?;
        let e = self.f2(at, op::F_ADD, e, ll)?;
        Ok((p, e))
    }

    /// `x * c` for a double-double constant `c`, as a double-double.
    pub(super) fn mul_dd(&mut self, at: Type, x: u32, c: (f64, f64)) -> R<(u32, u32)> {
        let ch = self.float_const(at, c.0)?;
        let cl = self.float_const(at, c.1)?;
        let (p, e) = self.two_prod(at, x, ch)?;
        let xl = self.f2(at, op::F_MUL, x, cl)?;
        let e = self.f2(at, op::F_ADD, e, xl)?;
        self.fast_two_sum(at, p, e)
    }

    /// `(h + l) * c` for a double-double constant `c`, as a double-double.
    fn mul_dd2(&mut self, at: Type, h: u32, l: u32, c: (f64, f64)) -> R<(u32, u32)> {
        let ch = self.float_const(at, c.0)?;
        let (p, e) = self.mul_dd(at, h, c)?;
        let lc = self.f2(at, op::F_MUL, l, ch)?;
        let e = self.f2(at, op::F_ADD, e, lc)?;
        self.fast_two_sum(at, p, e)
    }

    /// `sum c[k] x^k` by Horner's rule (coefficients from the constant term up).
    pub(super) fn poly64(&mut self, at: Type, x: u32, coeffs: &[f64]) -> R<u32> {
        let mut acc = self.float_const(at, *coeffs.last().expect("coefficients"))?;
        for &c in coeffs.iter().rev().skip(1) {
            let m = self.f2(at, op::F_MUL, acc, x)?;
            let cc = self.float_const(at, c)?;
            acc = self.f2(at, op::F_ADD, m, cc)?;
        }
        Ok(acc)
    }

    /// `exp(h + l)` as `(p, p_lo, n)`: `exp(h + l) = (p + p_lo) * 2^n` with `p` in about
    /// `[0.7, 1.42]`, `n` an `i32`. `h` is clamped to `[-1100, 1100]` (beyond, the result
    /// saturates) and `l` dropped there.
    fn exp_parts(&mut self, at: Type, h: u32, l: u32) -> R<(u32, u32, u32)> {
        let hc = self.clamp64(at, h, 1100.0)?;
        let zero = self.float_const(at, 0.0)?;
        let ah = self.g1(at, op::GLSL_F_ABS, h)?;
        let lim = self.float_const(at, 1000.0)?;
        let inside = self.fcmp(at, op::F_ORD_LESS_THAN, ah, lim)?;
        let l = self.sel(at, inside, l, zero)?;
        let l2e = self.float_const(at, std::f64::consts::LOG2_E)?;
        let q = self.f2(at, op::F_MUL, hc, l2e)?;
        let n = self.g1(at, op::GLSL_ROUND_EVEN, q)?;
        let hi = self.float_const(at, f64::from_bits(LN2_HI))?;
        let lo = self.float_const(at, f64::from_bits(LN2_LO))?;
        let nh = self.f2(at, op::F_MUL, n, hi)?;
        let r = self.f2(at, op::F_SUB, hc, nh)?;
        let nl = self.f2(at, op::F_MUL, n, lo)?;
        let c = self.f2(at, op::F_SUB, l, nl)?;
        let (r, rl) = self.two_sum(at, r, c)?;
        // exp(r) - 1 - r = r^2 (1/2 + r/6 + ...): Taylor to degree 14 (|r| <= 0.35).
        let mut coeffs = Vec::new();
        let mut fact = 2.0f64;
        for k in 2..15 {
            coeffs.push(1.0 / fact);
            fact *= (k + 1) as f64;
        }
        let p = self.poly64(at, r, &coeffs)?;
        let r2 = self.f2(at, op::F_MUL, r, r)?;
        let q = self.f2(at, op::F_MUL, r2, p)?;
        // exp(r + rl) ~ exp(r) (1 + rl): 1 + (r + (q + rl + r rl)).
        let rrl = self.f2(at, op::F_MUL, r, rl)?;
        let q = self.f2(at, op::F_ADD, q, rl)?;
        let q = self.f2(at, op::F_ADD, q, rrl)?;
        let (m, ml) = self.fast_two_sum(at, r, q)?;
        let one = self.float_const(at, 1.0)?;
        let (p, pl) = self.fast_two_sum(at, one, m)?;
        let pl = self.f2(at, op::F_ADD, pl, ml)?;
        let ni = self.cast(at, Scalar::I32, n)?;
        Ok((p, pl, ni))
    }

    /// `exp(h + l)` (a double-double argument) rounded, for finite or infinite `h`.
    pub(super) fn exp_core(&mut self, at: Type, h: u32, l: u32) -> R<u32> {
        let (p, pl, n) = self.exp_parts(at, h, l)?;
        let v = self.f2(at, op::F_ADD, p, pl)?;
        self.ldexp(at, v, n)
    }

    /// `expm1(x)`: `x + x^2 P(x)` for `|x| < 1/2`, else `(2^n p - 1) + 2^n p_lo` from
    /// [`Lower::exp_parts`] (no cancellation is lost: `2^n p` is exact).
    fn expm1_64(&mut self, at: Type, x: u32) -> R<u32> {
        let mut coeffs = Vec::new();
        let mut fact = 2.0f64;
        for k in 2..20 {
            coeffs.push(1.0 / fact);
            fact *= (k + 1) as f64;
        }
        let p = self.poly64(at, x, &coeffs)?;
        let x2 = self.f2(at, op::F_MUL, x, x)?;
        let q = self.f2(at, op::F_MUL, x2, p)?;
        let small = self.f2(at, op::F_ADD, x, q)?;
        let zero = self.float_const(at, 0.0)?;
        let (p, pl, n) = self.exp_parts(at, x, zero)?;
        let e = self.ldexp(at, p, n)?;
        let el = self.ldexp(at, pl, n)?;
        let mone = self.float_const(at, -1.0)?;
        let (s, se) = self.two_sum(at, e, mone)?;
        let c = self.f2(at, op::F_ADD, se, el)?;
        let big = self.f2(at, op::F_ADD, s, c)?;
        // Past the overflow threshold `2^n p` is inf and the TwoSum's error term NaN: inf.
        let ovf = self.is_inf(at, e)?;
        let big = self.sel(at, ovf, e, big)?;
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let half = self.float_const(at, 0.5)?;
        let lt = self.fcmp(at, op::F_ORD_LESS_THAN, ax, half)?;
        let r = self.sel(at, lt, small, big)?;
        // expm1(+-0) = +-0.
        let x0 = self.fcmp(at, op::F_ORD_EQUAL, x, zero)?;
        self.sel(at, x0, x, r)
    }

    /// `log(h + l)` for finite `h > 0`, as a double-double (about `2^-62` relative).
    pub(super) fn log_core(&mut self, at: Type, h: u32, l: u32) -> R<(u32, u32)> {
        let it = at.with_scalar(Scalar::I32);
        let i = self.vty(it)?;
        let one = self.float_const(at, 1.0)?;
        let zero = self.float_const(at, 0.0)?;
        // Keep the core's inputs ordinary (the caller selects the special cases).
        let pos = self.fcmp(at, op::F_ORD_GREATER_THAN, h, zero)?;
        let hi_inf = self.is_inf(at, h)?;
        let fin = self.not(at, hi_inf)?;
        let ok = self.and(at, pos, fin)?;
        let h = self.sel(at, ok, h, one)?;
        let l = self.sel(at, ok, l, zero)?;
        let k = self.exponent(at, h)?;
        let nk = self.op(op::S_NEGATE, i, &[k]);
        let m = self.ldexp(at, h, nk)?;
        let ml = self.ldexp(at, l, nk)?;
        let s2 = self.float_const(at, std::f64::consts::SQRT_2)?;
        let big = self.fcmp(at, op::F_ORD_GREATER_THAN, m, s2)?;
        let half = self.float_const(at, 0.5)?;
        let mh = self.f2(at, op::F_MUL, m, half)?;
        let mlh = self.f2(at, op::F_MUL, ml, half)?;
        let m = self.sel(at, big, mh, m)?;
        let ml = self.sel(at, big, mlh, ml)?;
        let onei = self.const_of(it, 1)?;
        let zeroi = self.const_of(it, 0)?;
        let inc = self.sel(it, big, onei, zeroi)?;
        let k = self.op(op::I_ADD, i, &[k, inc]);
        // f = m - 1 (exact); s = f / (2 + f) as a double-double.
        let f = self.f2(at, op::F_SUB, m, one)?;
        let two = self.float_const(at, 2.0)?;
        let (uh, ul) = self.fast_two_sum(at, two, f)?;
        let sh = self.f2(at, op::F_DIV, f, uh)?;
        let (ph, pl) = self.two_prod(at, sh, uh)?;
        let rem = self.f2(at, op::F_SUB, f, ph)?;
        let rem = self.f2(at, op::F_SUB, rem, pl)?;
        let su = self.f2(at, op::F_MUL, sh, ul)?;
        let rem = self.f2(at, op::F_SUB, rem, su)?;
        let sl = self.f2(at, op::F_DIV, rem, uh)?;
        // log m = 2 s + 2 s^3 (1/3 + s^2/5 + ...), |s| <= 0.172.
        let z = self.f2(at, op::F_MUL, sh, sh)?;
        let coeffs: Vec<f64> = (1..14).map(|k| 2.0 / (2 * k + 1) as f64).collect();
        let p = self.poly64(at, z, &coeffs)?;
        let sz = self.f2(at, op::F_MUL, sh, z)?;
        let tail = self.f2(at, op::F_MUL, sz, p)?;
        let s2h = self.f2(at, op::F_MUL, sh, two)?;
        let s2l = self.f2(at, op::F_MUL, sl, two)?;
        let lo = self.f2(at, op::F_ADD, s2l, tail)?;
        // The low part of the argument: log(m + ml) = log m + ml / m.
        let mq = self.f2(at, op::F_DIV, ml, m)?;
        let lo = self.f2(at, op::F_ADD, lo, mq)?;
        // + k ln 2 (k ln2_hi exact).
        let kf = self.cast(it, Scalar::F64, k)?;
        let l2h = self.float_const(at, f64::from_bits(LN2_HI))?;
        let l2l = self.float_const(at, f64::from_bits(LN2_LO))?;
        let ah = self.f2(at, op::F_MUL, kf, l2h)?;
        let al = self.f2(at, op::F_MUL, kf, l2l)?;
        let (s, e) = self.two_sum(at, ah, s2h)?;
        let e = self.f2(at, op::F_ADD, e, lo)?;
        let e = self.f2(at, op::F_ADD, e, al)?;
        self.fast_two_sum(at, s, e)
    }

    /// A logarithm's special cases around its value `r` of `x`: `-inf` at zeros, NaN below
    /// zero, `+inf` at `+inf`.
    fn log_specials(&mut self, at: Type, x: u32, r: u32) -> R<u32> {
        let zero = self.float_const(at, 0.0)?;
        let nan = self.float_const(at, f64::NAN)?;
        let inf = self.float_const(at, f64::INFINITY)?;
        let ninf = self.float_const(at, f64::NEG_INFINITY)?;
        let xi = self.is_inf(at, x)?;
        let r = self.sel(at, xi, inf, r)?;
        let x0 = self.fcmp(at, op::F_ORD_EQUAL, x, zero)?;
        let r = self.sel(at, x0, ninf, r)?;
        let neg = self.fcmp(at, op::F_ORD_LESS_THAN, x, zero)?;
        self.sel(at, neg, nan, r)
    }

    /// `log1p(x)`: `log` of the double-double `1 + x` (TwoSum).
    fn log1p64(&mut self, at: Type, x: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        let (h, l) = self.two_sum(at, one, x)?;
        // |x| beyond 2^53: 1 + x loses nothing that matters; keep the core's input finite.
        let (lh, ll) = self.log_core(at, h, l)?;
        let r = self.f2(at, op::F_ADD, lh, ll)?;
        let r = self.log_specials(at, h, r)?;
        let zero = self.float_const(at, 0.0)?;
        let x0 = self.fcmp(at, op::F_ORD_EQUAL, x, zero)?;
        let r = self.sel(at, x0, x, r)?;
        // -1 exactly: -inf; below: NaN.
        let mone = self.float_const(at, -1.0)?;
        let ninf = self.float_const(at, f64::NEG_INFINITY)?;
        let nan = self.float_const(at, f64::NAN)?;
        let is_m1 = self.fcmp(at, op::F_ORD_EQUAL, x, mone)?;
        let r = self.sel(at, is_m1, ninf, r)?;
        let below = self.fcmp(at, op::F_ORD_LESS_THAN, x, mone)?;
        self.sel(at, below, nan, r)
    }

    /// `sin`, `cos` or `tan` (`f` a GLSL code): `x = k pi/2 + r` with `r` a double-double
    /// (three 33-bit parts of `pi/2` and a fourth), then the polynomials of `sin` and `cos`
    /// on `[-pi/4, pi/4]` and the quadrant.
    fn sincos_core(&mut self, at: Type, f: u32, x: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        // Non-finite x: NaN (inf - k pi/2 is NaN already; NaN passes through).
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let (rh, rl, kq) = self.reduce_trig(at, x, ax, false)?;
        let s = self.sin_kernel(at, rh, rl)?;
        let c = self.cos_kernel(at, rh, rl)?;
        let it = at.with_scalar(Scalar::I32);
        let i = self.vty(it)?;
        let three = self.const_of(it, 3)?;
        let qd = self.op(op::BITWISE_AND, i, &[kq, three]);
        let bt = self.b(at)?;
        let onei = self.const_of(it, 1)?;
        let twoi = self.const_of(it, 2)?;
        let odd = self.op(op::BITWISE_AND, i, &[qd, onei]);
        let odd = self.op(op::I_EQUAL, bt, &[odd, onei]);
        let hi = self.op(op::BITWISE_AND, i, &[qd, twoi]);
        let hi = self.op(op::I_EQUAL, bt, &[hi, twoi]);
        let t = self.vty(at)?;
        let r = match f {
            op::GLSL_SIN => {
                // q: 0 s, 1 c, 2 -s, 3 -c.
                let v = self.sel(at, odd, c, s)?;
                let nv = self.op(op::F_NEGATE, t, &[v]);
                let r = self.sel(at, hi, nv, v)?;
                // Tiny x (and zeros): x itself.
                let tiny = self.float_const(at, 2f64.powi(-27))?;
                let small = self.fcmp(at, op::F_ORD_LESS_THAN, ax, tiny)?;
                self.sel(at, small, x, r)?
            }
            op::GLSL_COS => {
                // q: 0 c, 1 -s, 2 -c, 3 s.
                let v = self.sel(at, odd, s, c)?;
                let nv = self.op(op::F_NEGATE, t, &[v]);
                let bt2 = self.b(at)?;
                let flip = self.op(op::LOGICAL_NOT_EQUAL, bt2, &[odd, hi]);
                let r = self.sel(at, flip, nv, v)?;
                let tiny = self.float_const(at, 2f64.powi(-27))?;
                let small = self.fcmp(at, op::F_ORD_LESS_THAN, ax, tiny)?;
                self.sel(at, small, one, r)?
            }
            _ => {
                // even q: s / c; odd: -c / s.
                let num = self.sel(at, odd, c, s)?;
                let den = self.sel(at, odd, s, c)?;
                let qv = self.f2(at, op::F_DIV, num, den)?;
                let nq = self.op(op::F_NEGATE, t, &[qv]);
                let r = self.sel(at, odd, nq, qv)?;
                let tiny = self.float_const(at, 2f64.powi(-27))?;
                let small = self.fcmp(at, op::F_ORD_LESS_THAN, ax, tiny)?;
                self.sel(at, small, x, r)?
            }
        };
        let xi = self.is_inf(at, x)?;
        let nan = self.float_const(at, f64::NAN)?;
        self.sel(at, xi, nan, r)
    }

    /// `f32` `sin`, `cos` or `tan` (`f` a GLSL code) for lavapipe, whose GLSL functions have
    /// no full argument reduction (1 or -1 from |x| of about 1e10 on): `x = k pi/2 + r`
    /// reduced in `f64` ([`Lower::reduce_trig`], one chunk for the `f32` mantissa), then
    /// GLSL's `f32` function of `r` (in `[-pi/4, pi/4]`, rounded to `f32`) and the quadrant.
    /// Smaller than [`Lower::sincos_core`] (no `f64` polynomials).
    pub(super) fn trig_f32_reduced(&mut self, at: Type, f: u32, x: u32) -> R<u32> {
        let dt = at.with_scalar(Scalar::F64);
        let d = self.vty(dt)?;
        let t = self.vty(at)?;
        let xd = self.fop(op::F_CONVERT, d, &[x]);
        let axd = self.g1(dt, op::GLSL_F_ABS, xd)?;
        let (rh, rl, kq) = self.reduce_trig(dt, xd, axd, true)?;
        let rd = self.f2(dt, op::F_ADD, rh, rl)?;
        let r = self.fop(op::F_CONVERT, t, &[rd]);
        let it = at.with_scalar(Scalar::I32);
        let i = self.vty(it)?;
        let bt = self.b(at)?;
        let onei = self.const_of(it, 1)?;
        let twoi = self.const_of(it, 2)?;
        let odd = self.op(op::BITWISE_AND, i, &[kq, onei]);
        let odd = self.op(op::I_EQUAL, bt, &[odd, onei]);
        let hi = self.op(op::BITWISE_AND, i, &[kq, twoi]);
        let hi = self.op(op::I_EQUAL, bt, &[hi, twoi]);
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let tiny = self.float_const(at, 2f64.powi(-27))?;
        let small = self.fcmp(at, op::F_ORD_LESS_THAN, ax, tiny)?;
        let r = match f {
            op::GLSL_SIN | op::GLSL_COS => {
                let s = self.glsl(t, op::GLSL_SIN, &[r]);
                let c = self.glsl(t, op::GLSL_COS, &[r]);
                if f == op::GLSL_SIN {
                    // k mod 4: 0 s, 1 c, 2 -s, 3 -c; tiny x (and zeros): x itself.
                    let v = self.sel(at, odd, c, s)?;
                    let nv = self.op(op::F_NEGATE, t, &[v]);
                    let r = self.sel(at, hi, nv, v)?;
                    self.sel(at, small, x, r)?
                } else {
                    // k mod 4: 0 c, 1 -s, 2 -c, 3 s.
                    let v = self.sel(at, odd, s, c)?;
                    let nv = self.op(op::F_NEGATE, t, &[v]);
                    let flip = self.op(op::LOGICAL_NOT_EQUAL, bt, &[odd, hi]);
                    let r = self.sel(at, flip, nv, v)?;
                    let one = self.float_const(at, 1.0)?;
                    self.sel(at, small, one, r)?
                }
            }
            _ => {
                // Even k: tan r; odd: -1 / tan r.
                let tr = self.glsl(t, op::GLSL_TAN, &[r]);
                let mone = self.float_const(at, -1.0)?;
                let inv = self.f2(at, op::F_DIV, mone, tr)?;
                let r = self.sel(at, odd, inv, tr)?;
                self.sel(at, small, x, r)?
            }
        };
        let xi = self.is_inf(at, x)?;
        let nan = self.float_const(at, f64::NAN)?;
        self.sel(at, xi, nan, r)
    }

    /// `x = k pi/2 + (rh + rl)`, `|rh| <= pi/4`, as `(rh, rl, k mod 4)` (`k` an `i32`):
    /// below `2^20 pi/2` by [`Lower::reduce_pio2`] (exact products), beyond by
    /// [`Lower::reduce_large`].
    /// `narrow`: `x` is an `f32` widened (its mantissa fits the first 24-bit chunk).
    fn reduce_trig(&mut self, at: Type, x: u32, ax: u32, narrow: bool) -> R<(u32, u32, u32)> {
        let zero = self.float_const(at, 0.0)?;
        let lim = self.float_const(at, 1.6e6)?;
        let huge = self.fcmp(at, op::F_ORD_GREATER_THAN, ax, lim)?;
        let xs = self.sel(at, huge, zero, x)?;
        let tpi = self.float_const(at, std::f64::consts::FRAC_2_PI)?;
        let q = self.f2(at, op::F_MUL, xs, tpi)?;
        let k = self.g1(at, op::GLSL_ROUND_EVEN, q)?;
        let (rh, rl) = self.reduce_pio2(at, xs, k)?;
        let ki = self.cast(at, Scalar::I32, k)?;
        let (bh, bl, bk) = self.reduce_large(at, x, ax, narrow)?;
        let rh = self.sel(at, huge, bh, rh)?;
        let rl = self.sel(at, huge, bl, rl)?;
        let it = at.with_scalar(Scalar::I32);
        let k = self.sel(it, huge, bk, ki)?;
        Ok((rh, rl, k))
    }

    /// `x - k pi/2` as a double-double, for `|k| < 2^20`.
    fn reduce_pio2(&mut self, at: Type, x: u32, k: u32) -> R<(u32, u32)> {
        let p: Vec<u32> = PIO2
            .iter()
            .map(|&c| self.float_const(at, c))
            .collect::<R<_>>()?;
        let k1 = self.f2(at, op::F_MUL, k, p[0])?;
        let y = self.f2(at, op::F_SUB, x, k1)?;
        let k2 = self.f2(at, op::F_MUL, k, p[1])?;
        let t_ = self.vty(at)?;
        let nk2 = self.op(op::F_NEGATE, t_, &[k2]);
        let (h, e1) = self.two_sum(at, y, nk2)?;
        let k3 = self.f2(at, op::F_MUL, k, p[2])?;
        let nk3 = self.op(op::F_NEGATE, t_, &[k3]);
        let (h, e2) = self.two_sum(at, h, nk3)?;
        let k4 = self.f2(at, op::F_MUL, k, p[3])?;
        let lo = self.f2(at, op::F_ADD, e1, e2)?;
        let lo = self.f2(at, op::F_SUB, lo, k4)?;
        self.fast_two_sum(at, h, lo)
    }

    /// `sin(h + l)` for `|h| <= pi/4`: `h + h^3 S(h^2) + l (1 - h^2/2)`.
    fn sin_kernel(&mut self, at: Type, h: u32, l: u32) -> R<u32> {
        let z = self.f2(at, op::F_MUL, h, h)?;
        let mut coeffs = Vec::new();
        let mut fact = 6.0f64;
        let mut sign = -1.0;
        for k in 1..11 {
            coeffs.push(sign / fact);
            fact *= ((2 * k + 2) * (2 * k + 3)) as f64;
            sign = -sign;
        }
        let p = self.poly64(at, z, &coeffs)?;
        let hz = self.f2(at, op::F_MUL, h, z)?;
        let t = self.f2(at, op::F_MUL, hz, p)?;
        let half = self.float_const(at, 0.5)?;
        let one = self.float_const(at, 1.0)?;
        let hz2 = self.f2(at, op::F_MUL, z, half)?;
        let c = self.f2(at, op::F_SUB, one, hz2)?;
        let lc = self.f2(at, op::F_MUL, l, c)?;
        let t = self.f2(at, op::F_ADD, t, lc)?;
        self.f2(at, op::F_ADD, h, t)
    }

    /// `cos(h + l)` for `|h| <= pi/4`: `w + ((1 - w) - h^2/2 + h^4 C(h^2) - h l)` with
    /// `w = 1 - h^2/2` (the rounding of `w` recovered).
    fn cos_kernel(&mut self, at: Type, h: u32, l: u32) -> R<u32> {
        let z = self.f2(at, op::F_MUL, h, h)?;
        let mut coeffs = Vec::new();
        let mut fact = 24.0f64;
        let mut sign = 1.0;
        for k in 2..12 {
            coeffs.push(sign / fact);
            fact *= ((2 * k + 1) * (2 * k + 2)) as f64;
            sign = -sign;
        }
        let p = self.poly64(at, z, &coeffs)?;
        let z2 = self.f2(at, op::F_MUL, z, z)?;
        let t = self.f2(at, op::F_MUL, z2, p)?;
        let half = self.float_const(at, 0.5)?;
        let one = self.float_const(at, 1.0)?;
        let hz = self.f2(at, op::F_MUL, z, half)?;
        let w = self.f2(at, op::F_SUB, one, hz)?;
        let d = self.f2(at, op::F_SUB, one, w)?;
        let d = self.f2(at, op::F_SUB, d, hz)?;
        let hl = self.f2(at, op::F_MUL, h, l)?;
        let t = self.f2(at, op::F_SUB, t, hl)?;
        let d = self.f2(at, op::F_ADD, d, t)?;
        self.f2(at, op::F_ADD, w, d)
    }

    /// `tanh(x) = e / (e + 2)` with `e = expm1(2|x|)`, the sign of `x`; 1 beyond 22.
    fn tanh64(&mut self, at: Type, x: u32) -> R<u32> {
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let lim = self.float_const(at, 40.0)?;
        let t = self.vty(at)?;
        let axc = self.glsl(t, op::GLSL_N_MIN, &[ax, lim]);
        let two = self.float_const(at, 2.0)?;
        let x2 = self.f2(at, op::F_MUL, axc, two)?;
        let e = self.expm1_64(at, x2)?;
        let d = self.f2(at, op::F_ADD, e, two)?;
        let r = self.f2(at, op::F_DIV, e, d)?;
        let one = self.float_const(at, 1.0)?;
        let big = self.float_const(at, 22.0)?;
        let over = self.fcmp(at, op::F_ORD_GREATER_THAN, ax, big)?;
        let r = self.sel(at, over, one, r)?;
        self.copysign(at, r, x)
    }

    /// `log1p` of a non-negative double-double `h + l` (no special cases), rounded.
    fn log1p_dd(&mut self, at: Type, h: u32, l: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        let (s, e) = self.two_sum(at, one, h)?;
        let e = self.f2(at, op::F_ADD, e, l)?;
        let (s, e) = self.fast_two_sum(at, s, e)?;
        let (lh, ll) = self.log_core(at, s, e)?;
        self.f2(at, op::F_ADD, lh, ll)
    }

    /// `log(a) + ln 2` for large `a`.
    fn log_2a(&mut self, at: Type, a: u32) -> R<u32> {
        let zero = self.float_const(at, 0.0)?;
        let (h, l) = self.log_core(at, a, zero)?;
        let c = self.float_const(at, LN2.0)?;
        let cl = self.float_const(at, LN2.1)?;
        let (s, e) = self.two_sum(at, h, c)?;
        let e = self.f2(at, op::F_ADD, e, l)?;
        let e = self.f2(at, op::F_ADD, e, cl)?;
        self.f2(at, op::F_ADD, s, e)
    }

    /// `asinh(x) = sign(x) log1p(a + a^2 / (1 + sqrt(1 + a^2)))`, `log(a) + ln 2` above
    /// `2^28`.
    fn asinh64(&mut self, at: Type, x: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let lim = self.float_const(at, 2f64.powi(28))?;
        let big = self.fcmp(at, op::F_ORD_GREATER_THAN, ax, lim)?;
        let a = self.sel(at, big, one, ax)?;
        let (a2, a2l) = self.two_prod(at, a, a)?;
        let s1 = self.f2(at, op::F_ADD, one, a2)?;
        let sq = self.g1(at, op::GLSL_SQRT, s1)?;
        let d = self.f2(at, op::F_ADD, one, sq)?;
        let a2s = self.f2(at, op::F_ADD, a2, a2l)?;
        let q = self.f2(at, op::F_DIV, a2s, d)?;
        let (h, l) = self.fast_two_sum(at, a, q)?;
        let small = self.log1p_dd(at, h, l)?;
        let large = self.log_2a(at, ax)?;
        let r = self.sel(at, big, large, small)?;
        let xi = self.is_inf(at, x)?;
        let r = self.sel(at, xi, ax, r)?;
        let r = self.copysign(at, r, x)?;
        let zero = self.float_const(at, 0.0)?;
        let x0 = self.fcmp(at, op::F_ORD_EQUAL, x, zero)?;
        self.sel(at, x0, x, r)
    }

    /// `acosh(x) = log1p(t + sqrt(2t + t^2))`, `t = x - 1` (exact below 2), and
    /// `log(x) + ln 2` above `2^28`; NaN below 1.
    fn acosh64(&mut self, at: Type, x: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        let two = self.float_const(at, 2.0)?;
        let lim = self.float_const(at, 2f64.powi(28))?;
        let big = self.fcmp(at, op::F_ORD_GREATER_THAN, x, lim)?;
        let xs = self.sel(at, big, two, x)?;
        let t = self.f2(at, op::F_SUB, xs, one)?;
        // 2t + t^2 = t (t + 2)
        let t2 = self.f2(at, op::F_ADD, t, two)?;
        let w = self.f2(at, op::F_MUL, t, t2)?;
        let sq = self.g1(at, op::GLSL_SQRT, w)?;
        let (h, l) = self.fast_two_sum(at, sq, t)?;
        let zero = self.float_const(at, 0.0)?;
        let tpos = self.fcmp(at, op::F_ORD_GREATER_THAN_EQUAL, t, zero)?;
        let h = self.sel(at, tpos, h, zero)?;
        let l = self.sel(at, tpos, l, zero)?;
        let small = self.log1p_dd(at, h, l)?;
        let large = self.log_2a(at, x)?;
        let r = self.sel(at, big, large, small)?;
        let xi = self.is_inf(at, x)?;
        let r = self.sel(at, xi, x, r)?;
        let nan = self.float_const(at, f64::NAN)?;
        let below = self.fcmp(at, op::F_ORD_LESS_THAN, x, one)?;
        self.sel(at, below, nan, r)
    }

    /// `atanh(x) = sign(x) log1p(2a / (1 - a)) / 2`; `+-inf` at `+-1`, NaN beyond.
    fn atanh64(&mut self, at: Type, x: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        let half = self.float_const(at, 0.5)?;
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let zero = self.float_const(at, 0.0)?;
        let inside = self.fcmp(at, op::F_ORD_LESS_THAN, ax, one)?;
        let a = self.sel(at, inside, ax, zero)?;
        let d = self.f2(at, op::F_SUB, one, a)?;
        let a2 = self.f2(at, op::F_ADD, a, a)?;
        // 2a / (1 - a) as a double-double: q + (2a - q d) / d.
        let q = self.f2(at, op::F_DIV, a2, d)?;
        let (ph, pl) = self.two_prod(at, q, d)?;
        let rem = self.f2(at, op::F_SUB, a2, ph)?;
        let rem = self.f2(at, op::F_SUB, rem, pl)?;
        let ql = self.f2(at, op::F_DIV, rem, d)?;
        let l = self.log1p_dd(at, q, ql)?;
        let r = self.f2(at, op::F_MUL, l, half)?;
        let inf = self.float_const(at, f64::INFINITY)?;
        let is1 = self.fcmp(at, op::F_ORD_EQUAL, ax, one)?;
        let r = self.sel(at, is1, inf, r)?;
        let nan = self.float_const(at, f64::NAN)?;
        let out = self.fcmp(at, op::F_ORD_GREATER_THAN, ax, one)?;
        let r = self.sel(at, out, nan, r)?;
        let r = self.copysign(at, r, x)?;
        let x0 = self.fcmp(at, op::F_ORD_EQUAL, x, zero)?;
        self.sel(at, x0, x, r)
    }

    /// Payne-Hanek's reduction of `|x| > 2^20` (componentwise): [`Lower::reduce_large1`].
    fn reduce_large(&mut self, at: Type, x: u32, ax: u32, narrow: bool) -> R<(u32, u32, u32)> {
        if at.width == 1 {
            return self.reduce_large1(x, ax, narrow);
        }
        let c = self.vty(Type::F64)?;
        let ci = self.vty(Type::I32)?;
        let (mut hs, mut ls, mut ks) = (Vec::new(), Vec::new(), Vec::new());
        for k in 0..at.width as u32 {
            let xc = self.op(op::COMPOSITE_EXTRACT, c, &[x, k]);
            let ac = self.op(op::COMPOSITE_EXTRACT, c, &[ax, k]);
            let (h, l, q) = self.reduce_large1(xc, ac, narrow)?;
            hs.push(h);
            ls.push(l);
            ks.push(q);
        }
        let _ = ci;
        let t = self.vty(at)?;
        let ti = self.vty(at.with_scalar(Scalar::I32))?;
        Ok((
            self.op(op::COMPOSITE_CONSTRUCT, t, &hs),
            self.op(op::COMPOSITE_CONSTRUCT, t, &ls),
            self.op(op::COMPOSITE_CONSTRUCT, ti, &ks),
        ))
    }

    /// `x = k pi/2 + r` for a scalar `|x| >= 2^20` (other values give unused results): `|x|`
    /// in three 24-bit integer chunks `t_i`, the products `t_i C[j]` (exact) of the chunks of
    /// `2/pi` that matter modulo 4 (from a table in a function variable, indexed by the
    /// exponent), summed in double-double with the integer part taken out, then times `pi/2`.
    /// `narrow`: `x` is a widened `f32`, whose chunks `t_1` and `t_2` are 0 (left out).
    fn reduce_large1(&mut self, x: u32, ax: u32, narrow: bool) -> R<(u32, u32, u32)> {
        let at = Type::F64;
        let it = Type::I32;
        let d = self.vty(at)?;
        let i = self.vty(it)?;
        // The table, with two zero chunks in front (for j = -1, -2).
        let mut parts = vec![self.float_const(at, 0.0)?; 2];
        for &c in &TWO_OVER_PI {
            parts.push(self.float_const(at, c as f64)?);
        }
        let len = self.u32c(parts.len() as u32);
        let arr = self
            .m
            .ty(crate::codegen::spirv::module::Ty::Array(d, len, None));
        let init = self.m.constant_composite(arr, &parts);
        let pt = self.ptr(op::SC_FUNCTION, arr);
        let var = self.m.id();
        crate::codegen::spirv::module::inst(
            &mut self.m.vars,
            op::VARIABLE,
            &[pt, var, op::SC_FUNCTION, init],
        );
        let pe = self.ptr(op::SC_FUNCTION, d);
        // e in [20, 1023] (other exponents give unused results but in-range indices).
        let e = self.exponent(at, ax)?;
        let c20 = self.const_of(it, 20)?;
        let c1023 = self.const_of(it, 1023)?;
        let e = self.glsl(i, op::GLSL_S_MAX, &[e, c20]);
        let e = self.glsl(i, op::GLSL_S_MIN, &[e, c1023]);
        // |x| = (t0 2^48 + t1 2^24 + t2) 2^(e - 71).
        let c23 = self.const_of(it, 23)?;
        let sh = self.op(op::I_SUB, i, &[c23, e]);
        let v = self.ldexp(at, ax, sh)?;
        let t0 = self.g1(at, op::GLSL_TRUNC, v)?;
        let s24 = self.float_const(at, 16_777_216.0)?;
        let v1 = self.f2(at, op::F_SUB, v, t0)?;
        let v1 = self.f2(at, op::F_MUL, v1, s24)?;
        let t1 = self.g1(at, op::GLSL_TRUNC, v1)?;
        let v2 = self.f2(at, op::F_SUB, v1, t1)?;
        let t2 = self.f2(at, op::F_MUL, v2, s24)?;
        let all = [t0, t1, t2];
        let ts = if narrow { &all[..1] } else { &all[..] };
        // g0 = max(0, (e - 25) / 24): the first sum of chunk indices not a multiple of 4.
        let c25 = self.const_of(it, 25)?;
        let c24 = self.const_of(it, 24)?;
        let zi = self.const_of(it, 0)?;
        let em = self.op(op::I_SUB, i, &[e, c25]);
        let g0 = self.op(op::S_DIV, i, &[em, c24]);
        let g0 = self.glsl(i, op::GLSL_S_MAX, &[g0, zi]);
        // The weight of sum g0: 2^(e - 47 - 24 g0).
        let c47 = self.const_of(it, 47)?;
        let g24 = self.op(op::I_MUL, i, &[g0, c24]);
        let w0 = self.op(op::I_SUB, i, &[e, c47]);
        let w0 = self.op(op::I_SUB, i, &[w0, g24]);
        let mut terms = Vec::new();
        for dg in 0..8u64 {
            // S = sum_i t_i C[g0 + dg - i] (table index + 2).
            let mut sum = None;
            for (k, &t) in ts.iter().enumerate() {
                let off = self.const_of(it, dg + 2 - k as u64)?;
                let idx = self.op(op::I_ADD, i, &[g0, off]);
                let p = self.op(op::ACCESS_CHAIN, pe, &[var, idx]);
                let c = self.op(op::LOAD, d, &[p]);
                let prod = self.f2(at, op::F_MUL, t, c)?;
                sum = Some(match sum {
                    None => prod,
                    Some(s) => self.f2(at, op::F_ADD, s, prod)?,
                });
            }
            let dw = self.const_of(it, 24 * dg)?;
            let w = self.op(op::I_SUB, i, &[w0, dw]);
            terms.push(self.ldexp(at, sum.expect("three products"), w)?);
        }
        // Modulo 8 first (exact), then a double-double sum with the integers taken out.
        let eighth = self.float_const(at, 0.125)?;
        let eight = self.float_const(at, 8.0)?;
        let mut reduced = Vec::new();
        for &tm in &terms[..2] {
            let q = self.f2(at, op::F_MUL, tm, eighth)?;
            let q = self.g1(at, op::GLSL_FLOOR, q)?;
            let q8 = self.f2(at, op::F_MUL, q, eight)?;
            reduced.push(self.f2(at, op::F_SUB, tm, q8)?);
        }
        let (mut h, mut l) = self.two_sum(at, reduced[0], reduced[1])?;
        let n1 = self.g1(at, op::GLSL_ROUND_EVEN, h)?;
        h = self.f2(at, op::F_SUB, h, n1)?;
        let (h2, e2) = self.two_sum(at, h, terms[2])?;
        h = h2;
        l = self.f2(at, op::F_ADD, l, e2)?;
        let n2 = self.g1(at, op::GLSL_ROUND_EVEN, h)?;
        h = self.f2(at, op::F_SUB, h, n2)?;
        for &tm in &terms[3..] {
            let (h2, e2) = self.two_sum(at, h, tm)?;
            h = h2;
            l = self.f2(at, op::F_ADD, l, e2)?;
        }
        let (h2, l2) = self.fast_two_sum(at, h, l)?;
        let n3 = self.g1(at, op::GLSL_ROUND_EVEN, h2)?;
        let h3 = self.f2(at, op::F_SUB, h2, n3)?;
        let (h, l) = self.fast_two_sum(at, h3, l2)?;
        let n = self.f2(at, op::F_ADD, n1, n2)?;
        let n = self.f2(at, op::F_ADD, n, n3)?;
        // r = (h + l) pi/2; x's sign on r and k.
        let (rh, rl) = self.mul_dd2(at, h, l, PIO2_DD)?;
        let k = self.cast(at, Scalar::I32, n)?;
        let zero = self.float_const(at, 0.0)?;
        let neg = self.fcmp(at, op::F_ORD_LESS_THAN, x, zero)?;
        let nrh = self.op(op::F_NEGATE, d, &[rh]);
        let nrl = self.op(op::F_NEGATE, d, &[rl]);
        let nk = self.op(op::S_NEGATE, i, &[k]);
        let rh = self.sel(at, neg, nrh, rh)?;
        let rl = self.sel(at, neg, nrl, rl)?;
        let k = self.sel(it, neg, nk, k)?;
        Ok((rh, rl, k))
    }
}

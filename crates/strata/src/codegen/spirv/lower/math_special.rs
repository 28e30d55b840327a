//! The special functions `erf`, `erfc`, `tgamma` and `lgamma`, which GLSL.std.450 lacks, for
//! `f64` (and for `f32`/`f16` through `f64`, rounded once at the end): `erf` by its Taylor
//! series below 1; `erfc(x) = exp(-x^2) F(x)` above 1 with `F` from four polynomial fits
//! (Chebyshev fits to 2^-54 relative, computed here with 40-digit arithmetic) and `exp(-x^2)`
//! from the double-double `x^2`; `tgamma` and `lgamma` from Stirling's series at `z >= 10`
//! (the argument shifted up by a double-double, the shift's product divided out), the series
//! of `lgamma(2 + t)` (coefficients `(-1)^k (zeta(k) - 1) / k`) near its zeros at 1 and 2, and
//! the reflection formula below zero. Every core is straight-line code from
//! [`super::math64`]'s double-double helpers.

use super::{Lower, R};
use crate::codegen::spirv::op;
use crate::ir::{MathFn, Scalar, Type};

/// `erfc(x) exp(x^2)` on `[1, 2]`: a polynomial in `x - 1.5`.
const ERFC_1_2: [f64; 17] = [
    0.3215854164543175,
    -0.16362291773256005,
    0.0761510398554774,
    -0.03293090529956527,
    0.013377340953067394,
    -0.0051459575478377826,
    0.0018861348769919975,
    -0.0006619300701084315,
    0.0002233099453004411,
    -7.265887301589559e-05,
    2.2864299608127746e-05,
    -6.97536222785843e-06,
    2.0670657912156654e-06,
    -5.944961119917664e-07,
    1.6714292901928126e-07,
    -4.9545807838901603e-08,
    1.3242541506849586e-08,
];
/// On `[2, 4]`: a polynomial in `x - 3`.
const ERFC_2_4: [f64; 19] = [
    0.17900115118138996,
    -0.05437226000717289,
    0.01588437115987134,
    -0.004479431018371144,
    0.0012230390523765237,
    -0.00032412554452200884,
    8.355413963369297e-05,
    -2.0989464259545496e-05,
    5.146436522511331e-06,
    -1.2333685934914701e-06,
    2.8926684651166363e-07,
    -6.64646639786765e-08,
    1.4977253627698686e-08,
    -3.316229237177357e-09,
    7.20516363335066e-10,
    -1.5077563830210874e-10,
    3.1724792006762475e-11,
    -8.134236373235494e-12,
    1.6482525468969957e-12,
];
/// On `[4, 8]`: a polynomial in `1/x - 0.1875`.
const ERFC_4_8: [f64; 15] = [
    0.1040163962149489,
    0.5367734272774919,
    -0.13505497070130162,
    -0.1687427379796704,
    0.22907819272371985,
    0.001958911695096322,
    -0.3577315672096372,
    0.43382779162389895,
    0.18217772752438793,
    -1.3463915245304594,
    1.7320284909406323,
    0.9407340309037285,
    -7.392856770982471,
    10.915166145985634,
    3.938040118170218,
];
/// On `[8, 28]`: a polynomial in `1/x - 0.080357142857142858` (`(1/8 + 1/28) / 2`).
const ERFC_8_28: [f64; 12] = [
    0.0451916828125834,
    0.5588111761051422,
    -0.0658810327872116,
    -0.2562359271269234,
    0.15225331719733212,
    0.2972603635760458,
    -0.4564253816624178,
    -0.38989468094405777,
    1.576167321449881,
    -0.12883912049099772,
    -5.533333049082629,
    6.298441400718743,
];
/// `lgamma(2 + t) = sum c[k] t^(k+1)`, `c[0] = 1 - euler`, `c[k-1] = (-1)^k (zeta(k) - 1) / k`.
const LGAMMA_2: [f64; 30] = [
    0.42278433509846713,
    0.3224670334241132,
    -0.0673523010531981,
    0.020580808427784546,
    -0.007385551028673986,
    0.0028905103307415234,
    -0.001192753911703261,
    0.0005096695247430425,
    -0.00022315475845357939,
    9.945751278180853e-05,
    -4.492623673813314e-05,
    2.050721277567069e-05,
    -9.439488275268397e-06,
    4.374866789907488e-06,
    -2.039215753801366e-06,
    9.55141213040742e-07,
    -4.492469198764566e-07,
    2.1207184805554665e-07,
    -1.0043224823968099e-07,
    4.7698101693639804e-08,
    -2.2711094608943164e-08,
    1.0838659214896955e-08,
    -5.183475041970047e-09,
    2.4836745438024785e-09,
    -1.1921401405860912e-09,
    5.731367241678862e-10,
    -2.7595228851242334e-10,
    1.330476437424449e-10,
    -6.4229645638381e-11,
    3.1044247747322276e-11,
];
/// `log(2 pi) / 2` and `log(pi)` as double-doubles.
const HALF_LOG_2PI: (f64, f64) = (0.918_938_533_204_672_8, -3.878_294_158_067_241_4e-17);
const LOG_PI: (f64, f64) = (1.144_729_885_849_400_2, 1.026_595_116_270_782_6e-17);

/// Stirling's series `sum B(2k) / (2k (2k - 1) z^(2k-1))`, as coefficients of `w^2`
/// (`w = 1/z`), `k = 1..10`.
const STIRLING: [f64; 10] = [
    1.0 / 12.0,
    -1.0 / 360.0,
    1.0 / 1260.0,
    -1.0 / 1680.0,
    1.0 / 1188.0,
    -691.0 / 360_360.0,
    1.0 / 156.0,
    -3617.0 / 122_400.0,
    43867.0 / 244_188.0,
    -174_611.0 / 125_400.0,
];

impl Lower<'_> {
    /// `erf`, `erfc`, `tgamma` or `lgamma` of `x` (any float type; narrower types through
    /// `f64`, which the device must have).
    pub(super) fn special_fn(&mut self, m: MathFn, at: Type, x: u32) -> R<u32> {
        if at.scalar == Scalar::F64 {
            return self.special64(m, at, x);
        }
        if !self.t.float64 {
            return Err(format!(
                "`{}` on {} (computed in f64, which the device lacks: shaderFloat64)",
                m.name(),
                at.scalar
            ));
        }
        let dt = at.with_scalar(Scalar::F64);
        let d = self.vty(dt)?;
        let xd = self.fop(op::F_CONVERT, d, &[x]);
        let r = self.special64(m, dt, xd)?;
        let t = self.vty(at)?;
        Ok(self.fop(op::F_CONVERT, t, &[r]))
    }

    fn special64(&mut self, m: MathFn, at: Type, x: u32) -> R<u32> {
        let r = match m {
            MathFn::Erf => self.erf64(at, x)?,
            MathFn::Erfc => self.erfc64(at, x)?,
            MathFn::Tgamma => self.tgamma64(at, x)?,
            _ => self.lgamma64(at, x)?,
        };
        self.nan_through(at, &[x], r)
    }

    /// `erf(x)` for `|x| < 1`: `x sum (-1)^n 2 / (sqrt(pi) n! (2n + 1)) x^(2n)`.
    fn erf_small(&mut self, at: Type, x: u32) -> R<u32> {
        let mut coeffs = Vec::new();
        let mut fact = 1.0f64;
        let c = std::f64::consts::FRAC_2_SQRT_PI;
        for n in 0..20 {
            if n > 0 {
                fact *= n as f64;
            }
            let s = if n % 2 == 0 { 1.0 } else { -1.0 };
            coeffs.push(s * c / (fact * (2 * n + 1) as f64));
        }
        let x2 = self.f2(at, op::F_MUL, x, x)?;
        let p = self.poly64(at, x2, &coeffs)?;
        self.f2(at, op::F_MUL, x, p)
    }

    /// `erfc(a)` for `a >= 1` (larger than 28 gives 0): `exp(-a^2) F(a)`.
    fn erfc_pos(&mut self, at: Type, a: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        let lim = self.float_const(at, 28.0)?;
        let t_ = self.vty(at)?;
        let a = self.glsl(t_, op::GLSL_N_MAX, &[a, one]);
        let a = self.glsl(t_, op::GLSL_N_MIN, &[a, lim]);
        let w = self.f2(at, op::F_DIV, one, a)?;
        let mut fits = Vec::new();
        for (v, c, coeffs) in [
            (a, 1.5, &ERFC_1_2[..]),
            (a, 3.0, &ERFC_2_4[..]),
            (w, 0.1875, &ERFC_4_8[..]),
            (w, 0.080_357_142_857_142_86, &ERFC_8_28[..]),
        ] {
            let cc = self.float_const(at, c)?;
            let u = self.f2(at, op::F_SUB, v, cc)?;
            fits.push(self.poly64(at, u, coeffs)?);
        }
        let mut f = fits[3];
        for (k, lo) in [(2, 8.0), (1, 4.0), (0, 2.0)] {
            let l = self.float_const(at, lo)?;
            let below = self.fcmp(at, op::F_ORD_LESS_THAN, a, l)?;
            f = self.sel(at, below, fits[k], f)?;
        }
        let (h, l) = self.two_prod(at, a, a)?;
        let nh = self.op(op::F_NEGATE, t_, &[h]);
        let nl = self.op(op::F_NEGATE, t_, &[l]);
        let e = self.exp_core(at, nh, nl)?;
        let r = self.f2(at, op::F_MUL, e, f)?;
        let zero = self.float_const(at, 0.0)?;
        let top = self.float_const(at, 27.5)?;
        let over = self.fcmp(at, op::F_ORD_GREATER_THAN, a, top)?;
        self.sel(at, over, zero, r)
    }

    fn erf64(&mut self, at: Type, x: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let small = self.erf_small(at, x)?;
        let ec = self.erfc_pos(at, ax)?;
        let big = self.f2(at, op::F_SUB, one, ec)?;
        let big = self.copysign(at, big, x)?;
        let lt = self.fcmp(at, op::F_ORD_LESS_THAN, ax, one)?;
        self.sel(at, lt, small, big)
    }

    fn erfc64(&mut self, at: Type, x: u32) -> R<u32> {
        let one = self.float_const(at, 1.0)?;
        let two = self.float_const(at, 2.0)?;
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let small = self.erf_small(at, x)?;
        let small = self.f2(at, op::F_SUB, one, small)?;
        let ec = self.erfc_pos(at, ax)?;
        let neg = self.f2(at, op::F_SUB, two, ec)?;
        let zero = self.float_const(at, 0.0)?;
        let xneg = self.fcmp(at, op::F_ORD_LESS_THAN, x, zero)?;
        let big = self.sel(at, xneg, neg, ec)?;
        let lt = self.fcmp(at, op::F_ORD_LESS_THAN, ax, one)?;
        self.sel(at, lt, small, big)
    }

    /// `(ah + al) (bh + bl)` as a double-double.
    fn mul_dd_dd(&mut self, at: Type, a: (u32, u32), b: (u32, u32)) -> R<(u32, u32)> {
        let (p, e) = self.two_prod(at, a.0, b.0)?;
        let x = self.f2(at, op::F_MUL, a.0, b.1)?;
        let y = self.f2(at, op::F_MUL, a.1, b.0)?;
        let e = self.f2(at, op::F_ADD, e, x)?;
        let e = self.f2(at, op::F_ADD, e, y)?;
        self.fast_two_sum(at, p, e)
    }

    /// `(h + l) + c`, `c` an exact constant, as a double-double.
    fn add_c(&mut self, at: Type, h: u32, l: u32, c: f64) -> R<(u32, u32)> {
        let cc = self.float_const(at, c)?;
        let (s, e) = self.two_sum(at, h, cc)?;
        let e = self.f2(at, op::F_ADD, e, l)?;
        self.fast_two_sum(at, s, e)
    }

    /// Stirling: `log Gamma(z) = (z - 1/2) log z - z + log(2 pi)/2 + sum` for a double-double
    /// `z >= 10`, as a double-double.
    fn stirling(&mut self, at: Type, zh: u32, zl: u32) -> R<(u32, u32)> {
        let (lh, ll) = self.log_core(at, zh, zl)?;
        let (ah, al) = self.add_c(at, zh, zl, -0.5)?;
        let (ph, pl) = self.mul_dd_dd(at, (ah, al), (lh, ll))?;
        let t_ = self.vty(at)?;
        let nzh = self.op(op::F_NEGATE, t_, &[zh]);
        let (sh, se) = self.two_sum(at, ph, nzh)?;
        let sl = self.f2(at, op::F_ADD, se, pl)?;
        let sl = self.f2(at, op::F_SUB, sl, zl)?;
        let c = self.float_const(at, HALF_LOG_2PI.0)?;
        let (sh, se) = self.two_sum(at, sh, c)?;
        let sl = self.f2(at, op::F_ADD, sl, se)?;
        let cl = self.float_const(at, HALF_LOG_2PI.1)?;
        let sl = self.f2(at, op::F_ADD, sl, cl)?;
        let one = self.float_const(at, 1.0)?;
        let w = self.f2(at, op::F_DIV, one, zh)?;
        let w2 = self.f2(at, op::F_MUL, w, w)?;
        let p = self.poly64(at, w2, &STIRLING)?;
        let s = self.f2(at, op::F_MUL, w, p)?;
        let sl = self.f2(at, op::F_ADD, sl, s)?;
        self.fast_two_sum(at, sh, sl)
    }

    /// The shift of `h + l > 0` up to `z = h + l + n >= 10` (`n` a whole number, 0 above 10):
    /// `(z as a double-double, n)`.
    fn gamma_shift(&mut self, at: Type, h: u32, l: u32) -> R<((u32, u32), u32)> {
        let ten = self.float_const(at, 10.0)?;
        let zero = self.float_const(at, 0.0)?;
        let d = self.f2(at, op::F_SUB, ten, h)?;
        let n = self.g1(at, op::GLSL_CEIL, d)?;
        let t_ = self.vty(at)?;
        let n = self.glsl(t_, op::GLSL_N_MAX, &[n, zero]);
        let (zh, ze) = self.two_sum(at, h, n)?;
        let zl = self.f2(at, op::F_ADD, ze, l)?;
        let z = self.fast_two_sum(at, zh, zl)?;
        Ok((z, n))
    }

    /// `Gamma(h + l)` for `h > 0` (inputs beyond 180 give infinity).
    fn gamma_pos(&mut self, at: Type, h: u32, l: u32) -> R<u32> {
        let ((zh, zl), n) = self.gamma_shift(at, h, l)?;
        let (eh, el) = self.stirling(at, zh, zl)?;
        let g = self.exp_core(at, eh, el)?;
        // The product (h + l)(h + l + 1)... of the shift, rounded at each factor.
        let mut p = self.float_const(at, 1.0)?;
        for i in 0..10 {
            let ic = self.float_const(at, i as f64)?;
            let f = self.f2(at, op::F_ADD, h, ic)?;
            let f = self.f2(at, op::F_ADD, f, l)?;
            let pf = self.f2(at, op::F_MUL, p, f)?;
            let take = self.fcmp(at, op::F_ORD_LESS_THAN, ic, n)?;
            p = self.sel(at, take, pf, p)?;
        }
        let r = self.f2(at, op::F_DIV, g, p)?;
        let inf = self.float_const(at, f64::INFINITY)?;
        let lim = self.float_const(at, 180.0)?;
        let over = self.fcmp(at, op::F_ORD_GREATER_THAN, h, lim)?;
        self.sel(at, over, inf, r)
    }

    fn tgamma64(&mut self, at: Type, x: u32) -> R<u32> {
        let zero = self.float_const(at, 0.0)?;
        let one = self.float_const(at, 1.0)?;
        let t_ = self.vty(at)?;
        let pos = self.fcmp(at, op::F_ORD_GREATER_THAN, x, zero)?;
        // x > 0 directly; x < 0 by reflection: pi / (sinpi(x) Gamma(1 - x)).
        let xp = self.sel(at, pos, x, one)?;
        let zl = self.float_const(at, 0.0)?;
        let gp = self.gamma_pos(at, xp, zl)?;
        let nx = self.op(op::F_NEGATE, t_, &[x]);
        let (h, l) = self.two_sum(at, one, nx)?;
        let h = self.sel(at, pos, one, h)?;
        let l = self.sel(at, pos, zero, l)?;
        let gr = self.gamma_pos(at, h, l)?;
        let s = self.trig_pi(MathFn::Sinpi, at, x)?;
        let sg = self.f2(at, op::F_MUL, s, gr)?;
        let pi = self.float_const(at, std::f64::consts::PI)?;
        let gn = self.f2(at, op::F_DIV, pi, sg)?;
        let r = self.sel(at, pos, gp, gn)?;
        // Zeros: infinity of their sign; negative integers and -inf: NaN; +inf: +inf.
        let inf = self.float_const(at, f64::INFINITY)?;
        let x0 = self.fcmp(at, op::F_ORD_EQUAL, x, zero)?;
        let sinf = self.copysign(at, inf, x)?;
        let r = self.sel(at, x0, sinf, r)?;
        let tr = self.g1(at, op::GLSL_TRUNC, x)?;
        let int = self.fcmp(at, op::F_ORD_EQUAL, tr, x)?;
        let xneg = self.fcmp(at, op::F_ORD_LESS_THAN, x, zero)?;
        let bad = self.and(at, int, xneg)?;
        let nan = self.float_const(at, f64::NAN)?;
        self.sel(at, bad, nan, r)
    }

    /// `lgamma(h + l)` for `h > 0` as a double-double: the series at 2 on `[0.5, 2.5]`
    /// (less `log x` below 1.5), Stirling's with the shift's product (in double-double)
    /// divided out elsewhere, and `h (log h - 1)` far out.
    fn lgamma_pos(&mut self, at: Type, h: u32, l: u32) -> R<(u32, u32)> {
        let t_ = self.vty(at)?;
        // Series: t = (h - 2) + l above 1.5, (h - 1) + l below (both differences exact).
        let c15 = self.float_const(at, 1.5)?;
        let hi_half = self.fcmp(at, op::F_ORD_GREATER_THAN_EQUAL, h, c15)?;
        let two = self.float_const(at, 2.0)?;
        let one = self.float_const(at, 1.0)?;
        let base = self.sel(at, hi_half, two, one)?;
        let t = self.f2(at, op::F_SUB, h, base)?;
        let t = self.f2(at, op::F_ADD, t, l)?;
        let p = self.poly64(at, t, &LGAMMA_2)?;
        let s = self.f2(at, op::F_MUL, t, p)?;
        let (lh, ll) = self.log_core(at, h, l)?;
        let nlh = self.op(op::F_NEGATE, t_, &[lh]);
        let (dh, de) = self.two_sum(at, s, nlh)?;
        let de = self.f2(at, op::F_SUB, de, ll)?;
        let (dh, dl) = self.fast_two_sum(at, dh, de)?;
        let zero = self.float_const(at, 0.0)?;
        let ser_h = self.sel(at, hi_half, s, dh)?;
        let ser_l = self.sel(at, hi_half, zero, dl)?;
        // Stirling's, shifted.
        let ((zh, zl), n) = self.gamma_shift(at, h, l)?;
        let (eh, el) = self.stirling(at, zh, zl)?;
        let mut pp = (one, zero);
        for i in 0..10 {
            let ic = self.float_const(at, i as f64)?;
            let (fh, fe) = self.two_sum(at, h, ic)?;
            let fl = self.f2(at, op::F_ADD, fe, l)?;
            let f = self.fast_two_sum(at, fh, fl)?;
            let q = self.mul_dd_dd(at, pp, f)?;
            let take = self.fcmp(at, op::F_ORD_LESS_THAN, ic, n)?;
            pp = (
                self.sel(at, take, q.0, pp.0)?,
                self.sel(at, take, q.1, pp.1)?,
            );
        }
        let (gh, gl) = self.log_core(at, pp.0, pp.1)?;
        let ngh = self.op(op::F_NEGATE, t_, &[gh]);
        let (sh, se) = self.two_sum(at, eh, ngh)?;
        let se = self.f2(at, op::F_ADD, se, el)?;
        let se = self.f2(at, op::F_SUB, se, gl)?;
        let (sh, sl) = self.fast_two_sum(at, sh, se)?;
        // Far out: h (log h - 1) - log(h) / 2 (plain; no cancellation).
        let (fh, _) = self.log_core(at, h, zero)?;
        let fm = self.f2(at, op::F_SUB, fh, one)?;
        let far = self.f2(at, op::F_MUL, h, fm)?;
        let half = self.float_const(at, 0.5)?;
        let lh2 = self.f2(at, op::F_MUL, fh, half)?;
        let far = self.f2(at, op::F_SUB, far, lh2)?;
        let flim = self.float_const(at, 2f64.powi(60))?;
        let is_far = self.fcmp(at, op::F_ORD_GREATER_THAN, h, flim)?;
        let sh = self.sel(at, is_far, far, sh)?;
        let sl = self.sel(at, is_far, zero, sl)?;
        let c05 = self.float_const(at, 0.5)?;
        let c25 = self.float_const(at, 2.5)?;
        let ge = self.fcmp(at, op::F_ORD_GREATER_THAN_EQUAL, h, c05)?;
        let le = self.fcmp(at, op::F_ORD_LESS_THAN_EQUAL, h, c25)?;
        let ser = self.and(at, ge, le)?;
        Ok((self.sel(at, ser, ser_h, sh)?, self.sel(at, ser, ser_l, sl)?))
    }

    fn lgamma64(&mut self, at: Type, x: u32) -> R<u32> {
        let zero = self.float_const(at, 0.0)?;
        let one = self.float_const(at, 1.0)?;
        let t_ = self.vty(at)?;
        let pos = self.fcmp(at, op::F_ORD_GREATER_THAN, x, zero)?;
        // x <= 0 by reflection: log(pi) - log|sinpi(x)| - lgamma(1 - x).
        let nx = self.op(op::F_NEGATE, t_, &[x]);
        let (h, l) = self.two_sum(at, one, nx)?;
        let h = self.sel(at, pos, x, h)?;
        let l = self.sel(at, pos, zero, l)?;
        let (gh, gl) = self.lgamma_pos(at, h, l)?;
        let s = self.trig_pi(MathFn::Sinpi, at, x)?;
        let s = self.g1(at, op::GLSL_F_ABS, s)?;
        let s = self.sel(at, pos, one, s)?;
        let (sh, sl) = self.log_core(at, s, zero)?;
        let lp = self.float_const(at, LOG_PI.0)?;
        let lpl = self.float_const(at, LOG_PI.1)?;
        let nsh = self.op(op::F_NEGATE, t_, &[sh]);
        let (ah, ae) = self.two_sum(at, lp, nsh)?;
        let ae = self.f2(at, op::F_ADD, ae, lpl)?;
        let ae = self.f2(at, op::F_SUB, ae, sl)?;
        let ngh = self.op(op::F_NEGATE, t_, &[gh]);
        let (bh, be) = self.two_sum(at, ah, ngh)?;
        let be = self.f2(at, op::F_ADD, be, ae)?;
        let be = self.f2(at, op::F_SUB, be, gl)?;
        let neg = self.f2(at, op::F_ADD, bh, be)?;
        let posv = self.f2(at, op::F_ADD, gh, gl)?;
        let r = self.sel(at, pos, posv, neg)?;
        // Poles (zero and the negative integers) and the infinities: +inf.
        let inf = self.float_const(at, f64::INFINITY)?;
        let tr = self.g1(at, op::GLSL_TRUNC, x)?;
        let int = self.fcmp(at, op::F_ORD_EQUAL, tr, x)?;
        let npos = self.not(at, pos)?;
        let pole = self.and(at, int, npos)?;
        let r = self.sel(at, pole, inf, r)?;
        let xi = self.is_inf(at, x)?;
        self.sel(at, xi, inf, r)
    }
}

//! The built-in functions that GLSL.std.450 lacks or defines otherwise than the IR, written
//! out with the evaluator's special cases: `pow` and its relatives, `nextafter`, `ilogb`,
//! `logb`, `remainder`, `hypot`, `cbrt`, `log10`, `log1p`, `expm1`, `exp10`, the `*pi`
//! inverses, `maxmag`/`minmag`, and the 64-bit and saturating integer functions.

use super::{Lower, R};
use crate::codegen::spirv::op;
use crate::ir::{MathFn, Scalar, Type};

impl Lower<'_> {
    pub(super) fn b(&mut self, at: Type) -> R<u32> {
        self.vty(at.with_scalar(Scalar::Bool))
    }

    pub(super) fn sel(&mut self, t: Type, c: u32, a: u32, b: u32) -> R<u32> {
        let ty = self.vty(t)?;
        Ok(self.op(op::SELECT, ty, &[c, a, b]))
    }

    pub(super) fn fcmp(&mut self, at: Type, opc: u32, x: u32, y: u32) -> R<u32> {
        let bt = self.b(at)?;
        Ok(self.op(opc, bt, &[x, y]))
    }

    pub(super) fn f2(&mut self, at: Type, opc: u32, x: u32, y: u32) -> R<u32> {
        let t = self.vty(at)?;
        Ok(self.fop(opc, t, &[x, y]))
    }

    pub(super) fn g1(&mut self, at: Type, f: u32, x: u32) -> R<u32> {
        let t = self.vty(at)?;
        Ok(self.glsl(t, f, &[x]))
    }

    pub(super) fn or(&mut self, at: Type, x: u32, y: u32) -> R<u32> {
        let bt = self.b(at)?;
        Ok(self.op(op::LOGICAL_OR, bt, &[x, y]))
    }

    pub(super) fn and(&mut self, at: Type, x: u32, y: u32) -> R<u32> {
        let bt = self.b(at)?;
        Ok(self.op(op::LOGICAL_AND, bt, &[x, y]))
    }

    pub(super) fn not(&mut self, at: Type, x: u32) -> R<u32> {
        let bt = self.b(at)?;
        Ok(self.op(op::LOGICAL_NOT, bt, &[x]))
    }

    pub(super) fn is_nan(&mut self, at: Type, x: u32) -> R<u32> {
        let bt = self.b(at)?;
        Ok(self.op(op::IS_NAN, bt, &[x]))
    }

    pub(super) fn is_inf(&mut self, at: Type, x: u32) -> R<u32> {
        let bt = self.b(at)?;
        Ok(self.op(op::IS_INF, bt, &[x]))
    }

    /// A transcendental of GLSL.std.450, which has them for 16- and 32-bit floats only.
    pub(super) fn glsl_f32(&mut self, at: Type, f: u32, args: &[u32], name: &str) -> R<u32> {
        let _ = name;
        if at.scalar == Scalar::F64 {
            return self.glsl64(at, f, args);
        }
        if f == op::GLSL_POW && at.scalar == Scalar::F32 && self.t.float64 {
            // GLSL's `Pow` is up to 21 ulp off on lavapipe: the f64 core, rounded once.
            return self.glsl_via_f64(at, f, args);
        }
        if matches!(f, op::GLSL_SIN | op::GLSL_COS | op::GLSL_TAN) && self.core_in_f64(at.scalar) {
            // NVIDIA's are up to 229 ulp off, and 0 for tiny arguments: the f64 core.
            return self.glsl_via_f64(at, f, args);
        }
        let t = self.vty(at)?;
        if (f == op::GLSL_LOG || f == op::GLSL_LOG2) && at.scalar == Scalar::F32 {
            // lavapipe's `Log`/`Log2` read a subnormal argument as the smallest normal
            // (`log(1e-45)` was -88.0, not -103.3): scaled by 2^24 first, exactly.
            let min_normal = self.float_const(at, f32::MIN_POSITIVE as f64)?;
            let zero = self.float_const(at, 0.0)?;
            let below = self.fcmp(at, op::F_ORD_LESS_THAN, args[0], min_normal)?;
            let positive = self.fcmp(at, op::F_ORD_GREATER_THAN, args[0], zero)?;
            let sub = self.and(at, below, positive)?;
            let scale = self.float_const(at, 16_777_216.0)?;
            let scaled = self.f2(at, op::F_MUL, args[0], scale)?;
            let x = self.sel(at, sub, scaled, args[0])?;
            let l = self.glsl(t, f, &[x]);
            let k = if f == op::GLSL_LOG {
                24.0 * std::f64::consts::LN_2
            } else {
                24.0
            };
            let kc = self.float_const(at, k)?;
            let lk = self.f2(at, op::F_SUB, l, kc)?;
            return self.sel(at, sub, lk, l);
        }
        Ok(self.glsl(t, f, args))
    }

    /// `x^y` with C's special cases (GLSL's `Pow` is undefined for `x < 0` and for `x == 0,
    /// y <= 0`): the magnitude from `Pow(|x|, y)`, the sign from an odd integer `y`.
    /// `int_y`/`odd_y`, when known from an integer exponent, replace the float tests.
    fn pow_c(&mut self, at: Type, x: u32, y: u32, known: Option<(u32, u32)>, name: &str) -> R<u32> {
        self.pow_with(at, x, y, known, None, name)
    }

    /// [`Lower::pow_c`] with the magnitude `|x|^y` given (for `pown`'s exact powers).
    fn pow_with(
        &mut self,
        at: Type,
        x: u32,
        y: u32,
        known: Option<(u32, u32)>,
        mag: Option<u32>,
        name: &str,
    ) -> R<u32> {
        let ax = self.g1(at, op::GLSL_F_ABS, x)?;
        let mag = match mag {
            Some(m) => m,
            None => self.glsl_f32(at, op::GLSL_POW, &[ax, y], name)?,
        };
        let zero = self.float_const(at, 0.0)?;
        let one = self.float_const(at, 1.0)?;
        let inf = self.float_const(at, f64::INFINITY)?;
        let nan = self.float_const(at, f64::NAN)?;
        let (is_int, odd) = match known {
            Some(k) => k,
            None => {
                let tr = self.g1(at, op::GLSL_TRUNC, y)?;
                let is_int = self.fcmp(at, op::F_ORD_EQUAL, tr, y)?;
                let two = self.float_const(at, 2.0)?;
                let h = self.f2(at, op::F_REM, y, two)?;
                let odd_v = self.fcmp(at, op::F_UNORD_NOT_EQUAL, h, zero)?;
                let fin = self.is_inf(at, y)?;
                let fin = self.not(at, fin)?;
                let odd = self.and(at, odd_v, is_int)?;
                let odd = self.and(at, odd, fin)?;
                (is_int, odd)
            }
        };
        let ylt0 = self.fcmp(at, op::F_ORD_LESS_THAN, y, zero)?;
        // |x| == 0 or infinite: 0 or infinity by the sign of y (and of the exponent).
        let x0 = self.fcmp(at, op::F_ORD_EQUAL, x, zero)?;
        let zero_case = self.sel(at, ylt0, inf, zero)?;
        let inf_case = self.sel(at, ylt0, zero, inf)?;
        let r = self.sel(at, x0, zero_case, mag)?;
        let xinf = self.is_inf(at, x)?;
        let r = self.sel(at, xinf, inf_case, r)?;
        // Negative finite x: NaN for a non-integer y (-inf keeps its 0 or inf); negated for
        // an odd y.
        let xneg = self.fcmp(at, op::F_ORD_LESS_THAN, x, zero)?;
        let not_int = self.not(at, is_int)?;
        let bad = self.and(at, xneg, not_int)?;
        let xfin = self.not(at, xinf)?;
        let bad = self.and(at, bad, xfin)?;
        let r = self.sel(at, bad, nan, r)?;
        // The sign of x by negation (not by bits: lavapipe mangles the bits of a Pow result).
        let one_x = self.copysign(at, one, x)?;
        let xsgn = self.fcmp(at, op::F_ORD_LESS_THAN, one_x, zero)?;
        let t_ = self.vty(at)?;
        let neg = self.op(op::F_NEGATE, t_, &[r]);
        let flip = self.and(at, odd, xsgn)?;
        let r = self.sel(at, flip, neg, r)?;
        // |x| == 1 with an infinite y, y == 0 and x == 1: one.
        let ax1 = self.fcmp(at, op::F_ORD_EQUAL, ax, one)?;
        let yinf = self.is_inf(at, y)?;
        let one_inf = self.and(at, ax1, yinf)?;
        let r = self.sel(at, one_inf, one, r)?;
        let xn = self.is_nan(at, x)?;
        let yn = self.is_nan(at, y)?;
        let n = self.or(at, xn, yn)?;
        let sum = self.f2(at, op::F_ADD, x, y)?;
        let r = self.sel(at, n, sum, r)?;
        let y0 = self.fcmp(at, op::F_ORD_EQUAL, y, zero)?;
        let x1 = self.fcmp(at, op::F_ORD_EQUAL, x, one)?;
        let ones = self.or(at, y0, x1)?;
        self.sel(at, ones, one, r)
    }

    pub(super) fn float_math_more(&mut self, m: MathFn, at: Type, a: &[u32]) -> R<u32> {
        let s = at.scalar;
        let t = self.vty(at)?;
        let zero = self.float_const(at, 0.0)?;
        let one = self.float_const(at, 1.0)?;
        let nan = self.float_const(at, f64::NAN)?;
        let inf = self.float_const(at, f64::INFINITY)?;
        let name = m.name();
        match m {
            MathFn::Pow => self.pow_c(at, a[0], a[1], None, name),
            MathFn::Powr => {
                let r = self.pow_c(at, a[0], a[1], None, name)?;
                let xneg = self.fcmp(at, op::F_ORD_LESS_THAN, a[0], zero)?;
                let xn = self.is_nan(at, a[0])?;
                let yn = self.is_nan(at, a[1])?;
                let y0 = self.fcmp(at, op::F_ORD_EQUAL, a[1], zero)?;
                let x0 = self.fcmp(at, op::F_ORD_EQUAL, a[0], zero)?;
                let xi = self.is_inf(at, a[0])?;
                let x0i = self.or(at, x0, xi)?;
                let c1 = self.and(at, y0, x0i)?;
                let x1 = self.fcmp(at, op::F_ORD_EQUAL, a[0], one)?;
                let yi = self.is_inf(at, a[1])?;
                let c2 = self.and(at, x1, yi)?;
                let mut bad = self.or(at, xneg, xn)?;
                for c in [yn, c1, c2] {
                    bad = self.or(at, bad, c)?;
                }
                self.sel(at, bad, nan, r)
            }
            MathFn::Pown | MathFn::Rootn => {
                let it = at.with_scalar(Scalar::I32);
                let n = a[1];
                let nf = self.cast(it, s, n)?;
                let onei = self.const_of(it, 1)?;
                let ui = self.vty(it)?;
                let low = self.op(op::BITWISE_AND, ui, &[n, onei]);
                let zi = self.const_of(it, 0)?;
                let bi = self.b(at)?;
                let odd = self.op(op::I_NOT_EQUAL, bi, &[low, zi]);
                let tc = self.m.bool_const(true);
                let truth = self.splat_const(at.with_scalar(Scalar::Bool), tc)?;
                if m == MathFn::Pown {
                    let mag = if s == Scalar::F32 && at.width == 1 && self.t.float64 {
                        Some(self.pown_f64(a[0], n)?)
                    } else {
                        None
                    };
                    let r = self.pow_with(at, a[0], nf, Some((truth, odd)), mag, name)?;
                    let n0 = self.op(op::I_EQUAL, bi, &[n, zi]);
                    return self.sel(at, n0, one, r);
                }
                // rootn: pow(x, 1/n), one Newton step on y^n = |x|, the evaluator's cases;
                // |x| first scaled by 2^(-n m) (m = exponent / n, truncated) into
                // [2^-|n|, 2^|n|], the root then by 2^m: the step's y^(n-1) stays in range
                // (rootn(2^-1022, -5) was 47 ulp off, the step skipped where it underflowed).
                let inv = self.f2(at, op::F_DIV, one, nf)?;
                let ax = self.g1(at, op::GLSL_F_ABS, a[0])?;
                let e = self.exponent(at, ax)?;
                // (n = 0, NaN below, divides by 1 here: a division by zero traps on x86.)
                let n0 = self.op(op::I_EQUAL, bi, &[n, zi]);
                let n_div = self.sel(it, n0, onei, n)?;
                let m = self.op(op::S_DIV, ui, &[e, n_div]);
                let nm = self.op(op::I_MUL, ui, &[n, m]);
                let neg_nm = self.op(op::S_NEGATE, ui, &[nm]);
                let xs = self.ldexp(at, ax, neg_nm)?;
                let y = self.glsl_f32(at, op::GLSL_POW, &[xs, inv], name)?;
                // y - (y^n - |x|) / (n y^(n-1)) = y + (|x| / y^(n-1) - y) / n
                // n - 1 in floats: as an i32, i32::MIN - 1 wrapped to i32::MAX.
                let nm1f = self.f2(at, op::F_SUB, nf, one)?;
                let yn1 = self.glsl_f32(at, op::GLSL_POW, &[y, nm1f], name)?;
                let q = self.f2(at, op::F_DIV, xs, yn1)?;
                let d = self.f2(at, op::F_SUB, q, y)?;
                let d = self.f2(at, op::F_DIV, d, nf)?;
                let yy = self.f2(at, op::F_ADD, y, d)?;
                // Keep the plain power where the step is not finite (huge or tiny y^(n-1)).
                let fin_n = self.is_nan(at, yy)?;
                let fin_i = self.is_inf(at, yy)?;
                let bad_step = self.or(at, fin_n, fin_i)?;
                // ... or where y^(n-1) overflowed or underflowed, to a subnormal included
                // (the step is then wrong: rootn(1e-308, -64) was 939 ulp off).
                let p_inf = self.is_inf(at, yn1)?;
                let min_normal = self.float_const(
                    at,
                    match s {
                        Scalar::F64 => f64::MIN_POSITIVE,
                        Scalar::F16 => 6.103_515_625e-5,
                        _ => f32::MIN_POSITIVE as f64,
                    },
                )?;
                let ayn1 = self.g1(at, op::GLSL_F_ABS, yn1)?;
                let p_zero = self.fcmp(at, op::F_ORD_LESS_THAN, ayn1, min_normal)?;
                let p_bad = self.or(at, p_inf, p_zero)?;
                let bad_step = self.or(at, bad_step, p_bad)?;
                let r = self.sel(at, bad_step, y, yy)?;
                let r = self.ldexp(at, r, m)?;
                let ax0 = self.fcmp(at, op::F_ORD_EQUAL, ax, zero)?;
                let nneg = self.op(op::S_LESS_THAN, bi, &[n, zi]);
                let z = self.sel(at, nneg, inf, zero)?;
                let r = self.sel(at, ax0, z, r)?;
                let axi = self.is_inf(at, ax)?;
                let zi2 = self.sel(at, nneg, zero, inf)?;
                let r = self.sel(at, axi, zi2, r)?;
                let neg = self.copysign(at, r, a[0])?;
                let r = self.sel(at, odd, neg, r)?;
                let xneg = self.fcmp(at, op::F_ORD_LESS_THAN, a[0], zero)?;
                let even = self.not(at, odd)?;
                let c = self.and(at, xneg, even)?;
                let xn = self.is_nan(at, a[0])?;
                let bad = self.or(at, n0, c)?;
                let bad = self.or(at, bad, xn)?;
                self.sel(at, bad, nan, r)
            }
            MathFn::Nextafter => {
                let ut = at.with_scalar(Self::uint_of_size(s.size()));
                let u = self.vty(ut)?;
                let xb = self.op(op::BITCAST, u, &[a[0]]);
                let onei = self.const_of(ut, 1)?;
                let up = self.op(op::I_ADD, u, &[xb, onei]);
                let down = self.op(op::I_SUB, u, &[xb, onei]);
                let ygx = self.fcmp(at, op::F_ORD_GREATER_THAN, a[1], a[0])?;
                let xpos = self.fcmp(at, op::F_ORD_GREATER_THAN, a[0], zero)?;
                let bt = self.b(at)?;
                let away = self.op(op::LOGICAL_EQUAL, bt, &[ygx, xpos]);
                let nb = self.sel(ut, away, up, down)?;
                let r = self.op(op::BITCAST, t, &[nb]);
                let tiny_b = self.const_of(ut, 1)?;
                let tiny = self.op(op::BITCAST, t, &[tiny_b]);
                let tiny = self.copysign(at, tiny, a[1])?;
                let x0 = self.fcmp(at, op::F_ORD_EQUAL, a[0], zero)?;
                let r = self.sel(at, x0, tiny, r)?;
                let eq = self.fcmp(at, op::F_ORD_EQUAL, a[0], a[1])?;
                let r = self.sel(at, eq, a[1], r)?;
                let sum = self.f2(at, op::F_ADD, a[0], a[1])?;
                let xn = self.is_nan(at, a[0])?;
                let yn = self.is_nan(at, a[1])?;
                let n = self.or(at, xn, yn)?;
                self.sel(at, n, sum, r)
            }
            MathFn::Ilogb | MathFn::Logb => {
                let it = at.with_scalar(Scalar::I32);
                let e = self.exponent(at, a[0])?;
                let x0 = self.fcmp(at, op::F_ORD_EQUAL, a[0], zero)?;
                let xi = self.is_inf(at, a[0])?;
                let xn = self.is_nan(at, a[0])?;
                if m == MathFn::Ilogb {
                    let minc = self.const_of(it, 1u64 << 31)?;
                    let maxc = self.const_of(it, (1u64 << 31) - 1)?;
                    let r = self.sel(it, x0, minc, e)?;
                    let nf = self.or(at, xi, xn)?;
                    return self.sel(it, nf, maxc, r);
                }
                let ef = self.cast(it, s, e)?;
                let ninf = self.float_const(at, f64::NEG_INFINITY)?;
                let r = self.sel(at, x0, ninf, ef)?;
                let ax = self.g1(at, op::GLSL_F_ABS, a[0])?;
                let nf = self.or(at, xi, xn)?;
                self.sel(at, nf, ax, r)
            }
            MathFn::Maxmag | MathFn::Minmag => {
                let ax = self.g1(at, op::GLSL_F_ABS, a[0])?;
                let ay = self.g1(at, op::GLSL_F_ABS, a[1])?;
                let (c1, c2, f) = if m == MathFn::Maxmag {
                    (op::F_ORD_GREATER_THAN, op::F_ORD_LESS_THAN, op::GLSL_N_MAX)
                } else {
                    (op::F_ORD_LESS_THAN, op::F_ORD_GREATER_THAN, op::GLSL_N_MIN)
                };
                let both = self.glsl(t, f, &[a[0], a[1]]);
                let xw = self.fcmp(at, c1, ax, ay)?;
                let yw = self.fcmp(at, c2, ax, ay)?;
                let r = self.sel(at, yw, a[1], both)?;
                self.sel(at, xw, a[0], r)
            }
            MathFn::Remainder => {
                // fmod(x, 2|y|) (exact), then the nearest multiple of |y|, ties to even.
                let ay = self.g1(at, op::GLSL_F_ABS, a[1])?;
                let two = self.float_const(at, 2.0)?;
                let y2 = self.f2(at, op::F_MUL, ay, two)?;
                let r2 = self.fmod(at, a[0], y2)?;
                let y2inf = self.is_inf(at, y2)?;
                let yinf = self.is_inf(at, a[1])?;
                let yfin = self.not(at, yinf)?;
                let big = self.and(at, y2inf, yfin)?;
                let r2 = self.sel(at, big, a[0], r2)?;
                let ar = self.g1(at, op::GLSL_F_ABS, r2)?;
                let half = self.float_const(at, 0.5)?;
                let hy = self.f2(at, op::F_MUL, ay, half)?;
                let three = self.float_const(at, 1.5)?;
                let h3 = self.f2(at, op::F_MUL, ay, three)?;
                let m1 = self.f2(at, op::F_SUB, ar, ay)?;
                let m2 = self.f2(at, op::F_SUB, ar, y2)?;
                let gt_h = self.fcmp(at, op::F_ORD_GREATER_THAN, ar, hy)?;
                let ge_h3 = self.fcmp(at, op::F_ORD_GREATER_THAN_EQUAL, ar, h3)?;
                let r = self.sel(at, gt_h, m1, ar)?;
                let r = self.sel(at, ge_h3, m2, r)?;
                // 2|y| overflowed: no tie at 3|y|/2 is reachable; |r| <= |y| there.
                let neg = self.f2(at, op::F_SUB, zero, r)?;
                let xneg = self.op(op::F_NEGATE, t, &[r]);
                let _ = neg;
                let bt = self.b(at)?;
                let ut = at.with_scalar(Self::uint_of_size(s.size()));
                let u = self.vty(ut)?;
                let xb = self.op(op::BITCAST, u, &[a[0]]);
                let shc = self.const_of(ut, s.bits() as u64 - 1)?;
                let top = self.op(op::SHIFT_RIGHT_LOGICAL, u, &[xb, shc]);
                let zu = self.const_of(ut, 0)?;
                let sx = self.op(op::I_NOT_EQUAL, bt, &[top, zu]);
                let r = self.sel(at, sx, xneg, r)?;
                let xi = self.is_inf(at, a[0])?;
                let y0 = self.fcmp(at, op::F_ORD_EQUAL, a[1], zero)?;
                let xn = self.is_nan(at, a[0])?;
                let yn = self.is_nan(at, a[1])?;
                let mut bad = self.or(at, xi, y0)?;
                bad = self.or(at, bad, xn)?;
                bad = self.or(at, bad, yn)?;
                let r = self.sel(at, bad, nan, r)?;
                // |y| infinite: x itself.
                let fin_x = self.not(at, xi)?;
                let keep = self.and(at, yinf, fin_x)?;
                self.sel(at, keep, a[0], r)
            }
            MathFn::Hypot => {
                let ax = self.g1(at, op::GLSL_F_ABS, a[0])?;
                let ay = self.g1(at, op::GLSL_F_ABS, a[1])?;
                let big = self.glsl(t, op::GLSL_N_MAX, &[ax, ay]);
                let small = self.glsl(t, op::GLSL_N_MIN, &[ax, ay]);
                let q = self.f2(at, op::F_DIV, small, big)?;
                let q2 = self.f2(at, op::F_MUL, q, q)?;
                let s1 = self.f2(at, op::F_ADD, one, q2)?;
                let sq = self.g1(at, op::GLSL_SQRT, s1)?;
                let r = self.f2(at, op::F_MUL, big, sq)?;
                let b0 = self.fcmp(at, op::F_ORD_EQUAL, big, zero)?;
                let r = self.sel(at, b0, zero, r)?;
                let xn = self.is_nan(at, a[0])?;
                let yn = self.is_nan(at, a[1])?;
                let n = self.or(at, xn, yn)?;
                let r = self.sel(at, n, nan, r)?;
                let xi = self.is_inf(at, a[0])?;
                let yi = self.is_inf(at, a[1])?;
                let i = self.or(at, xi, yi)?;
                self.sel(at, i, inf, r)
            }
            MathFn::Cbrt => {
                // exp2(log2|x| / 3) and one Newton step, the sign of x; 0, inf, NaN kept.
                let ax = self.g1(at, op::GLSL_F_ABS, a[0])?;
                let l = self.glsl_f32(at, op::GLSL_LOG2, &[ax], name)?;
                let third = self.float_const(at, 1.0 / 3.0)?;
                let l3 = self.f2(at, op::F_MUL, l, third)?;
                let y = self.glsl_f32(at, op::GLSL_EXP2, &[l3], name)?;
                let y2 = self.f2(at, op::F_MUL, y, y)?;
                let q = self.f2(at, op::F_DIV, ax, y2)?;
                let d = self.f2(at, op::F_SUB, q, y)?;
                let d = self.f2(at, op::F_MUL, d, third)?;
                let yy = self.f2(at, op::F_ADD, y, d)?;
                let yn = self.is_nan(at, yy)?;
                let yi = self.is_inf(at, yy)?;
                let badstep = self.or(at, yn, yi)?;
                let r = self.sel(at, badstep, y, yy)?;
                let x0 = self.fcmp(at, op::F_ORD_EQUAL, ax, zero)?;
                let xi = self.is_inf(at, ax)?;
                let keep = self.or(at, x0, xi)?;
                let r = self.sel(at, keep, ax, r)?;
                let r = self.copysign(at, r, a[0])?;
                let xn = self.is_nan(at, a[0])?;
                self.sel(at, xn, a[0], r)
            }
            MathFn::Log10 => {
                let l = self.glsl_f32(at, op::GLSL_LOG2, &[a[0]], name)?;
                let c = self.float_const(at, std::f64::consts::LOG10_2)?;
                self.f2(at, op::F_MUL, l, c)
            }
            MathFn::Exp10 => self.exp10(at, a[0]),
            MathFn::Log1p => self.log1p(at, a[0]),
            MathFn::Expm1 => self.expm1(at, a[0]),
            MathFn::Exp => self.exp(at, a[0]),
            MathFn::Atan => self.atan(at, a[0]),
            MathFn::Atan2 => self.atan2(at, a[0], a[1]),
            MathFn::Sinh | MathFn::Cosh => self.sinh_cosh(m == MathFn::Sinh, at, a[0]),
            MathFn::Fma => self.fma(at, a[0], a[1], a[2]),
            MathFn::Asin | MathFn::Acos => self.asin_acos(m == MathFn::Asin, at, a[0]),
            MathFn::Sinpi | MathFn::Cospi | MathFn::Tanpi => self.trig_pi(m, at, a[0]),
            MathFn::Asinpi | MathFn::Acospi | MathFn::Atanpi | MathFn::Atan2pi => {
                let r = match m {
                    MathFn::Asinpi => self.asin_acos(true, at, a[0])?,
                    MathFn::Acospi => self.asin_acos(false, at, a[0])?,
                    MathFn::Atanpi => self.atan(at, a[0])?,
                    _ => self.atan2(at, a[0], a[1])?,
                };
                let c = self.float_const(at, std::f64::consts::FRAC_1_PI)?;
                self.f2(at, op::F_MUL, r, c)
            }
            _ => Err(format!("`{name}` on {s} (no SPIR-V lowering yet)")),
        }
    }

    /// `clz` and `popcount` of 64-bit integers: their two 32-bit halves.
    fn halves(&mut self, at: Type, x: u32) -> R<(u32, u32)> {
        let ut = at.with_scalar(Scalar::U32);
        let u = self.vty(ut)?;
        let lo = self.op(op::U_CONVERT, u, &[x]);
        let wt = at.with_scalar(Scalar::U64);
        let w = self.vty(wt)?;
        let c32 = self.const_of(wt, 32)?;
        let hi64 = self.op(op::SHIFT_RIGHT_LOGICAL, w, &[x, c32]);
        let hi = self.op(op::U_CONVERT, u, &[hi64]);
        Ok((lo, hi))
    }

    pub(super) fn int_math_more(&mut self, m: MathFn, at: Type, a: &[u32]) -> R<u32> {
        let s = at.scalar;
        let t = self.vty(at)?;
        let signed = s.is_signed();
        match m {
            MathFn::Popcount | MathFn::Clz => {
                let (lo, hi) = self.halves(at, a[0])?;
                let ut = at.with_scalar(Scalar::U32);
                let u = self.vty(ut)?;
                let r = if m == MathFn::Popcount {
                    let pl = self.op(op::BIT_COUNT, u, &[lo]);
                    let ph = self.op(op::BIT_COUNT, u, &[hi]);
                    self.op(op::I_ADD, u, &[pl, ph])
                } else {
                    let c31 = self.const_of(ut, 31)?;
                    let c63 = self.const_of(ut, 63)?;
                    let ml = self.glsl(u, op::GLSL_FIND_U_MSB, &[lo]);
                    let mh = self.glsl(u, op::GLSL_FIND_U_MSB, &[hi]);
                    let zl = self.op(op::I_SUB, u, &[c63, ml]);
                    let zh = self.op(op::I_SUB, u, &[c31, mh]);
                    let z = self.const_of(ut, 0)?;
                    let bt = self.b(at)?;
                    let h0 = self.op(op::I_EQUAL, bt, &[hi, z]);
                    self.sel(ut, h0, zl, zh)?
                };
                Ok(self.op(op::U_CONVERT, t, &[r]))
            }
            MathFn::Hadd | MathFn::Rhadd => {
                // (a >> 1) + (b >> 1) + the carry of the low bits: no overflow in any width.
                let one = self.const_of(at, 1)?;
                let sh = if signed {
                    op::SHIFT_RIGHT_ARITHMETIC
                } else {
                    op::SHIFT_RIGHT_LOGICAL
                };
                let ha = self.op(sh, t, &[a[0], one]);
                let hb = self.op(sh, t, &[a[1], one]);
                let low = if m == MathFn::Hadd {
                    self.op(op::BITWISE_AND, t, &[a[0], a[1]])
                } else {
                    self.op(op::BITWISE_OR, t, &[a[0], a[1]])
                };
                let low = self.op(op::BITWISE_AND, t, &[low, one]);
                let sum = self.op(op::I_ADD, t, &[ha, hb]);
                Ok(self.op(op::I_ADD, t, &[sum, low]))
            }
            MathFn::AddSat | MathFn::SubSat => self.add_sat64(m == MathFn::AddSat, at, a[0], a[1]),
            MathFn::MadSat => {
                if s.size() <= 4 {
                    // In 64 bits: a*b + c is exact for 32-bit operands, then clamped.
                    let ws = if signed { Scalar::I64 } else { Scalar::U64 };
                    let wt = at.with_scalar(ws);
                    let w = self.vty(wt)?;
                    let x = self.cast(at, ws, a[0])?;
                    let y = self.cast(at, ws, a[1])?;
                    let z = self.cast(at, ws, a[2])?;
                    let p = self.op(op::I_MUL, w, &[x, y]);
                    let r = self.op(op::I_ADD, w, &[p, z]);
                    let bits = s.bits();
                    let (lo, hi) = if signed {
                        (
                            (1u64 << (bits - 1)).wrapping_neg(),
                            (1u64 << (bits - 1)) - 1,
                        )
                    } else {
                        (
                            0,
                            if bits == 32 {
                                u32::MAX as u64
                            } else {
                                (1u64 << bits) - 1
                            },
                        )
                    };
                    let (mx, mn) = if signed {
                        (op::GLSL_S_MAX, op::GLSL_S_MIN)
                    } else {
                        (op::GLSL_U_MAX, op::GLSL_U_MIN)
                    };
                    let loc = self.const_of(wt, lo)?;
                    let hic = self.const_of(wt, hi)?;
                    let r = self.glsl(w, mx, &[r, loc]);
                    let r = self.glsl(w, mn, &[r, hic]);
                    return Ok(self.op(op::U_CONVERT, t, &[r]));
                }
                // 64 bits: a*b + c exactly in 128 bits (the product of the magnitudes from
                // 32-bit halves; lavapipe's 64-bit OpSMulExtended is wrong), then clamped.
                self.mad_sat128(at, a[0], a[1], a[2])
            }
            _ => Err(format!("`{}` on {s} (no SPIR-V lowering yet)", m.name())),
        }
    }

    /// `mad_sat` of 64-bit integers: `x * y + z` in 128 bits (two 64-bit words), clamped.
    fn mad_sat128(&mut self, at: Type, x: u32, y: u32, z: u32) -> R<u32> {
        let signed = at.scalar.is_signed();
        let t = self.vty(at)?;
        let bt = self.b(at)?;
        let c32 = self.const_of(at, 32)?;
        let c63 = self.const_of(at, 63)?;
        let m32 = self.const_of(at, u32::MAX as u64)?;
        let zero = self.const_of(at, 0)?;
        let one = self.const_of(at, 1)?;
        let abs = |l: &mut Self, v: u32| -> R<u32> {
            if !signed {
                return Ok(v);
            }
            let neg = l.op(op::S_LESS_THAN, bt, &[v, zero]);
            let n = l.op(op::S_NEGATE, t, &[v]);
            l.sel(at, neg, n, v)
        };
        let (ax, ay) = (abs(self, x)?, abs(self, y)?);
        let half = |l: &mut Self, v: u32| -> (u32, u32) {
            let lo = l.op(op::BITWISE_AND, t, &[v, m32]);
            let hi = l.op(op::SHIFT_RIGHT_LOGICAL, t, &[v, c32]);
            (lo, hi)
        };
        let (a0, a1) = half(self, ax);
        let (b0, b1) = half(self, ay);
        let p00 = self.op(op::I_MUL, t, &[a0, b0]);
        let p01 = self.op(op::I_MUL, t, &[a0, b1]);
        let p10 = self.op(op::I_MUL, t, &[a1, b0]);
        let p11 = self.op(op::I_MUL, t, &[a1, b1]);
        let (p00l, p00h) = half(self, p00);
        let (p01l, p01h) = half(self, p01);
        let (p10l, p10h) = half(self, p10);
        let mid = self.op(op::I_ADD, t, &[p00h, p01l]);
        let mid = self.op(op::I_ADD, t, &[mid, p10l]);
        let midh = self.op(op::SHIFT_RIGHT_LOGICAL, t, &[mid, c32]);
        let hi = self.op(op::I_ADD, t, &[p11, p01h]);
        let hi = self.op(op::I_ADD, t, &[hi, p10h]);
        let mut hi = self.op(op::I_ADD, t, &[hi, midh]);
        let midl = self.op(op::SHIFT_LEFT_LOGICAL, t, &[mid, c32]);
        let mut lo = self.op(op::BITWISE_OR, t, &[midl, p00l]);
        if signed {
            // Negate the 128-bit magnitude where the signs differ.
            let xn = self.op(op::S_LESS_THAN, bt, &[x, zero]);
            let yn = self.op(op::S_LESS_THAN, bt, &[y, zero]);
            let neg = self.op(op::LOGICAL_NOT_EQUAL, bt, &[xn, yn]);
            let nlo = self.op(op::NOT, t, &[lo]);
            let nlo = self.op(op::I_ADD, t, &[nlo, one]);
            let nhi = self.op(op::NOT, t, &[hi]);
            let lo0 = self.op(op::I_EQUAL, bt, &[lo, zero]);
            let carry = self.sel(at, lo0, one, zero)?;
            let nhi = self.op(op::I_ADD, t, &[nhi, carry]);
            lo = self.sel(at, neg, nlo, lo)?;
            hi = self.sel(at, neg, nhi, hi)?;
        }
        // + z (sign-extended for signed types).
        let zhi = if signed {
            self.op(op::SHIFT_RIGHT_ARITHMETIC, t, &[z, c63])
        } else {
            zero
        };
        let slo = self.op(op::I_ADD, t, &[lo, z]);
        let cy = self.op(op::U_LESS_THAN, bt, &[slo, lo]);
        let cyv = self.sel(at, cy, one, zero)?;
        let shi = self.op(op::I_ADD, t, &[hi, zhi]);
        let shi = self.op(op::I_ADD, t, &[shi, cyv]);
        if signed {
            let ext = self.op(op::SHIFT_RIGHT_ARITHMETIC, t, &[slo, c63]);
            let fits = self.op(op::I_EQUAL, bt, &[shi, ext]);
            let hneg = self.op(op::S_LESS_THAN, bt, &[shi, zero]);
            let minc = self.const_of(at, 1u64 << 63)?;
            let maxc = self.const_of(at, (1u64 << 63) - 1)?;
            let sat = self.sel(at, hneg, minc, maxc)?;
            self.sel(at, fits, slo, sat)
        } else {
            let fits = self.op(op::I_EQUAL, bt, &[shi, zero]);
            let maxc = self.const_of(at, u64::MAX)?;
            self.sel(at, fits, slo, maxc)
        }
    }

    /// Saturating `x + y` or `x - y` of any width by overflow tests (no wider type).
    fn add_sat64(&mut self, add: bool, at: Type, x: u32, y: u32) -> R<u32> {
        let s = at.scalar;
        let t = self.vty(at)?;
        let bt = self.b(at)?;
        let r = self.op(if add { op::I_ADD } else { op::I_SUB }, t, &[x, y]);
        let bits = s.bits();
        if !s.is_signed() {
            let maxc = self.const_of(
                at,
                if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                },
            )?;
            let z = self.const_of(at, 0)?;
            return Ok(if add {
                let over = self.op(op::U_LESS_THAN, bt, &[r, x]);
                self.sel(at, over, maxc, r)?
            } else {
                let under = self.op(op::U_LESS_THAN, bt, &[x, y]);
                self.sel(at, under, z, r)?
            });
        }
        // Signed: overflow when the operands' signs (of x and +-y) agree and the result's
        // differs. A sign is `v > MAX` unsigned: lavapipe's `v < 0` of a sign-extended `i32`
        // was false for negative values (`add_sat(0i64, -1i32 as i64)` gave `i64::MAX`).
        let maxp = self.const_of(at, (1u64 << (bits - 1)) - 1)?;
        let xn = self.op(op::U_GREATER_THAN, bt, &[x, maxp]);
        let yn = self.op(op::U_GREATER_THAN, bt, &[y, maxp]);
        let rn = self.op(op::U_GREATER_THAN, bt, &[r, maxp]);
        let same = if add {
            self.op(op::LOGICAL_EQUAL, bt, &[xn, yn])
        } else {
            self.op(op::LOGICAL_NOT_EQUAL, bt, &[xn, yn])
        };
        let flipped = self.op(op::LOGICAL_NOT_EQUAL, bt, &[xn, rn]);
        let over = self.op(op::LOGICAL_AND, bt, &[same, flipped]);
        let minc = self.const_of(at, 1u64 << (bits - 1))?;
        let maxc = self.const_of(at, (1u64 << (bits - 1)) - 1)?;
        let sat = self.sel(at, xn, minc, maxc)?;
        self.sel(at, over, sat, r)
    }
}

//! Built-in functions: how the writer calls each (`math`), and the helper functions it
//! defines on demand, once per kernel, where the target lacks a built-in, answers special
//! cases otherwise than the evaluator (`ir::eval`, `ir::special`), or where C leaves a case
//! undefined (`MIN / -1`, a float-to-integer conversion of NaN). What a target has and lacks
//! is the dialect's to say ([`Dialect::defined_math`], [`Dialect::nan_guarded`], ...).

// Vector operands are written component by component: loops index several operands at once.
#![allow(clippy::needless_range_loop)]

#[cfg(doc)]
use super::dialect::Dialect;
use super::writer::Writer;
use crate::ir::{Literal, MathFn, MathKind, Scalar, Type};

impl Writer<'_> {
    /// The dialect's name of built-in `m`.
    fn fname(&self, m: MathFn) -> &'static str {
        self.d
            .math_names
            .iter()
            .find(|(f, _)| *f == m)
            .map_or(m.name(), |(_, n)| n)
    }

    /// The helper that computes built-in `m` on component type `s` where strata defines the
    /// value itself (special cases that targets answer differently) or the target lacks the
    /// built-in ([`Dialect::defined_math`], [`Dialect::mad_sat`]): its definition is added to
    /// the kernel's helpers and its name returned; `None` for the target's built-in. Each
    /// follows the evaluator's definition (`ir::eval`, `ir::special`).
    fn defined_helper(&mut self, m: MathFn, s: Scalar) -> Option<String> {
        // Most calls have no helper: decide before formatting anything.
        let defined = self.d.defined_math.contains(&m);
        let helped = match m {
            MathFn::Fract | MathFn::Fdim | MathFn::Maxmag | MathFn::Minmag => s.is_float(),
            MathFn::Ilogb | MathFn::Powr | MathFn::Sinpi | MathFn::Cospi | MathFn::Tanpi => true,
            MathFn::Rint => self.d.rint_range_guard && s.is_float(),
            MathFn::MadSat => self.d.mad_sat.is_some(),
            _ => defined,
        };
        if !helped {
            return None;
        }
        let t = self.ty(s);
        let name = format!("strata_{}_{t}", m.name());
        // `rootn` scales by powers of two with the `f64` `ldexp` the writer defines where the
        // target's cannot be called (see `Ldexp` below), and reads an exponent from the bits.
        let (ldexp, u64_t) = if m == MathFn::Rootn {
            let l = self
                .defined_helper(MathFn::Ldexp, Scalar::F64)
                .unwrap_or_else(|| self.fname(MathFn::Ldexp).to_string());
            (l, self.ty(Scalar::U64))
        } else {
            Default::default()
        };
        let lit = |v: f64| {
            if s == Scalar::F32 {
                format!("{:?}f", v as f32)
            } else {
                format!("{v:?}")
            }
        };
        let special = |v: f64| {
            let bits = if s == Scalar::F32 {
                (v as f32).to_bits() as u64
            } else {
                v.to_bits()
            };
            self.literal(Literal::from_bits(s, bits))
        };
        let (nan, inf) = (special(f64::NAN), special(f64::INFINITY));
        // f32 results that CUDA's float functions would leave near the bound are computed in
        // double and rounded once.
        let wide = if s == Scalar::F32 { "(double)" } else { "" };
        let pi = "3.141592653589793";
        let (x1, x2, xn) = (
            format!("{t} x"),
            format!("{t} x, {t} y"),
            format!("{t} x, {} n", self.ty(Scalar::I32)),
        );
        let [z, one, two, half, quarter, tq] = [0.0, 1.0, 2.0, 0.5, 0.25, 0.75].map(lit);
        let ret = if m == MathFn::Ilogb {
            self.ty(Scalar::I32)
        } else {
            t
        };
        let (params, body) = match m {
            MathFn::Fract if s.is_float() => (
                x1.clone(),
                format!(
                    "return (x != x || x == {z}) ? x : isinf(x) ? copysign({z}, x) : fmin(x - floor(x), {below});",
                    below = lit(if s == Scalar::F32 {
                        1.0 - f64::from(f32::EPSILON) / 2.0
                    } else {
                        1.0 - f64::EPSILON / 2.0
                    })
                ),
            ),
            MathFn::Fdim if s.is_float() => (
                x2.clone(),
                format!("return (x != x || y != y) ? x + y : x > y ? x - y : {};", z),
            ),
            MathFn::Maxmag | MathFn::Minmag if s.is_float() => {
                let (gt, f) = if m == MathFn::Maxmag { (">", "fmax") } else { ("<", "fmin") };
                (
                    x2.clone(),
                        format!("{t} ax = fabs(x), ay = fabs(y); return ax {gt} ay ? x : ay {gt} ax ? y : {f}(x, y);"),
                )
            }
            MathFn::Ilogb => (
                x1.clone(),
                format!("return (x != x || isinf(x)) ? 2147483647 : x == {} ? (-2147483647 - 1) : ilogb(x);", z),
            ),
            // PoCL 3.1's `rint` of a value its compiler can prove is infinite or beyond 2^52
            // (`rint(DBL_MAX)`) made the whole kernel store nothing (seen in the differential
            // tests): such values are already integers, and only the others reach `rint`.
            MathFn::Rint => (
                x1.clone(),
                format!(
                    "return fabs(x) < {} ? rint(x) : x;",
                    lit(if s == Scalar::F32 { 8388608.0 } else { 4503599627370496.0 })
                ),
            ),
            MathFn::Powr => (
                x2.clone(),
                format!(
                    "if (x != x || y != y || x < {z}) return {nan};\n    if (y == {z} && (x == {z} || isinf(x))) return {nan};\n    if (x == {one} && isinf(y)) return {nan};\n    return pow(x, y);",
                ),
            ),
            MathFn::Tanpi if defined => (
                x1.clone(),
                format!(
                    "if (x != x || isinf(x)) return {nan};\n    {t} r = fmod(x, {one}), a = fabs(r);\n    bool odd = fabs(fmod(x, {two})) >= {one};\n    if (a == {z}) {{ {t} q = copysign({z}, x); return odd ? -q : q; }}\n    if (a == {half}) return fmod(floor(x), {two}) == {z} ? {inf} : -{inf};\n    double d = (double)a;\n    {t} v = ({t})(a <= {quarter} ? tan({pi} * d) : a <= {tq} ? 1.0 / tan({pi} * (0.5 - d)) : -tan({pi} * (1.0 - d)));\n    return r < {z} ? -v : v;",
                ),
            ),
            // The zeros of sinpi, cospi and tanpi carry signs by rule (OpenCL 1.2 section
            // 7.5.1): PoCL 3.1 returns sinpi(-7) = +0, cospi(-6.5) = -0 and tanpi(-7) = -0;
            // the built-in's zero is replaced by the rule's.
            MathFn::Sinpi => (
                x1.clone(),
                format!(
                    "if (x != x) return x;\n    {t} r = sinpi(x);\n    return r == {z} ? copysign({z}, x) : r;",
                ),
            ),
            MathFn::Cospi => (
                x1.clone(),
                format!(
                    "if (x != x) return x;\n    {t} r = cospi(x);\n    return r == {z} ? {z} : r;",
                ),
            ),
            MathFn::Tanpi => (
                x1.clone(),
                format!(
                    "if (x != x) return x;\n    {t} r = tanpi(x);\n    return r == {z} ? copysign({z}, fmod(x, {two}) != {z} ? -x : x) : r;",
                ),
            ),
            MathFn::Asinpi | MathFn::Acospi | MathFn::Atanpi => (
                x1.clone(),
                format!("return ({t})({}({wide}x) / {pi});", &m.name()[..4]),
            ),
            MathFn::Atan2pi => (
                format!("{t} y, {t} x"),
                format!("return ({t})(atan2({wide}y, {wide}x) / {pi});"),
            ),
            // CUDA's ldexp takes |n| with PTX `abs.s32`, which ptxas may assume non-negative
            // (the golden test keeps integer `abs` out of every kernel): scale by powers of two
            // instead, as musl's scalbn does (exact; one rounding into the subnormals).
            MathFn::Ldexp => {
                let (max, min, mant, p_max, p_low, bits) = if s == Scalar::F32 {
                    (127, -126, 24, "0x1p127f", "0x1p-102f", Scalar::U32)
                } else {
                    (1023, -1022, 53, "0x1p1023", "0x1p-969", Scalar::U64)
                };
                let u = self.ty(bits);
                let shift = if s == Scalar::F32 { 23 } else { 52 };
                let two_n = self.bits_as(t, &format!("(({u})({max} + n) << {shift})"));
                (
                    xn.clone(),
                        format!(
                        "if (n > {max}) {{ x *= {p_max}; n -= {max}; if (n > {max}) {{ x *= {p_max}; n -= {max}; if (n > {max}) n = {max}; }} }}\n    else if (n < {min}) {{ x *= {p_low}; n += {d}; if (n < {min}) {{ x *= {p_low}; n += {d}; if (n < {min}) n = {min}; }} }}\n    return x * {two_n};",
                        d = -min - mant
                    ),
                )
            }
            MathFn::Pown => (
                xn.clone(),
                format!("return ({t})pow({wide}x, (double)n);"),
            ),
            // The evaluator's algorithm (`ir::special::rootn`): `|x|` scaled into
            // [2^-|n|, 2^|n|] by 2^(-n m), `pow`, one Newton step, the root scaled by 2^m. Without
            // the scaling a subnormal or huge `|x|` skipped the step, and CUDA's `pow` of a
            // subnormal is far from the root: rootn(1e-308, -5) was 54 ulp off on an H200.
            MathFn::Rootn => {
                let bits = self.bits_as(u64_t, "an");
                (
                    xn.clone(),
                    format!(
                        "if (n == 0 || x != x || (x < {z} && n % 2 == 0)) return {nan};\n    bool neg = n % 2 != 0 && signbit(x);\n    double ax = fabs((double)x), y;\n    if (ax == 0.0) y = n < 0 ? (double){inf} : 0.0;\n    else if (isinf(ax)) y = n < 0 ? 0.0 : (double){inf};\n    else {{\n        bool sub = ax < 2.2250738585072014e-308;\n        double an = sub ? ax * 0x1p64 : ax;\n        int e = (int)(({bits} >> 52) & 0x7ff) - 1022 - (sub ? 64 : 0);\n        int m = (e - 1) / n;\n        double xs = {ldexp}(ax, -(n * m));\n        double y0 = pow(xs, 1.0 / (double)n);\n        double q = pow(y0, (double)n) / xs;\n        y = (!isinf(q) && q != 0.0 && q == q && xs >= 2.2250738585072014e-308 && y0 >= 2.2250738585072014e-308) ? y0 - y0 * (q - 1.0) / (double)n : y0;\n        y = {ldexp}(y, m);\n    }}\n    return ({t})(neg ? -y : y);",
                    ),
                )
            }
            MathFn::MadSat => {
                let bodies = self.d.mad_sat?;
                let body = match s {
                    Scalar::U64 => bodies[0],
                    Scalar::I64 => bodies[1],
                    Scalar::U32 | Scalar::U16 | Scalar::U8 => bodies[2],
                    _ => bodies[3],
                };
                (format!("{t} a, {t} b, {t} c"), body.replace("{t}", t))
            }
            _ => return None,
        };
        self.define(format!("{ret} {name}({params}) {{\n    {body}\n}}\n"));
        Some(name)
    }

    /// The call of built-in `m` on the components `v` of its arguments (of type `at`): one C
    /// expression per component of the result.
    pub(super) fn math(&mut self, m: MathFn, at: Type, v: &[Vec<String>]) -> Vec<String> {
        let w = at.width as usize;
        let s = at.scalar;
        let t = self.ty(s);
        let float = s.is_float();
        let zero = if s == Scalar::F32 { "0.0f" } else { "0.0" };
        match m.kind() {
            MathKind::Reduce => {
                // acc = 0; acc += x*y per component, in order: the evaluator's formula.
                let mut acc = zero.to_string();
                for c in 0..w {
                    let term = match m {
                        MathFn::Dot => format!("({} * {})", v[0][c], v[1][c]),
                        MathFn::Distance => {
                            let d = format!("({} - {})", v[0][c], v[1][c]);
                            format!("({d} * {d})")
                        }
                        _ => format!("({} * {})", v[0][c], v[0][c]),
                    };
                    acc = format!("({acc} + {term})");
                }
                vec![if m == MathFn::Dot {
                    acc
                } else {
                    format!("sqrt({acc})")
                }]
            }
            MathKind::Geometric if m == MathFn::Cross => {
                let (a, b) = (&v[0], &v[1]);
                let mut r = vec![
                    format!("(({} * {}) - ({} * {}))", a[1], b[2], a[2], b[1]),
                    format!("(({} * {}) - ({} * {}))", a[2], b[0], a[0], b[2]),
                    format!("(({} * {}) - ({} * {}))", a[0], b[1], a[1], b[0]),
                ];
                if w == 4 {
                    r.push(zero.to_string());
                }
                r
            }
            MathKind::Geometric => {
                let mut acc = zero.to_string();
                for c in 0..w {
                    acc = format!("({acc} + ({} * {}))", v[0][c], v[0][c]);
                }
                (0..w)
                    .map(|c| format!("({} / sqrt({acc}))", v[0][c]))
                    .collect()
            }
            _ => {
                let helper = self.defined_helper(m, s);
                (0..w)
                    .map(|c| {
                        let a: Vec<&str> = v.iter().map(|x| x[c].as_str()).collect();
                        match (m, float) {
                            (MathFn::Min, true) => format!("fmin({}, {})", a[0], a[1]),
                            (MathFn::Max, true) => format!("fmax({}, {})", a[0], a[1]),
                            (MathFn::Clamp, true) => {
                                format!("fmin(fmax({}, {}), {})", a[0], a[1], a[2])
                            }
                            // C's `min`/`max` on narrow integers may return `int` (CUDA has no
                            // narrow overloads): cast back, so that overloaded callers see `t`.
                            (MathFn::Clamp, false) if s.size() < 4 => {
                                format!("(({t})min(max({}, {}), {}))", a[0], a[1], a[2])
                            }
                            (MathFn::Clamp, false) => {
                                format!("min(max({}, {}), {})", a[0], a[1], a[2])
                            }
                            (MathFn::Min | MathFn::Max, false) if s.size() < 4 => {
                                format!("(({t}){}({}, {}))", self.fname(m), a[0], a[1])
                            }
                            (MathFn::Abs, true) => format!("fabs({})", a[0]),
                            _ if helper.is_some() => {
                                format!("{}({})", helper.as_deref().unwrap_or(""), a.join(", "))
                            }
                            (_, true) if self.d.nan_guarded.contains(&m) => {
                                format!("{}({})", self.nan_guarded(m, s), a.join(", "))
                            }
                            (MathFn::Sign, true) => format!("{}({})", self.sign(s), a[0]),
                            (MathFn::Abs, false) if s.is_signed() => self.int_abs(s, a[0]),
                            (MathFn::Abs, false) => a[0].to_string(),
                            (MathFn::Mix, _) => {
                                format!("({0} + ({1} - {0}) * {2})", a[0], a[1], a[2])
                            }
                            (MathFn::Rsqrt, _) => format!(
                                "(1.0{} / sqrt({}))",
                                if s == Scalar::F32 { "f" } else { "" },
                                a[0]
                            ),
                            (
                                MathFn::IsNan | MathFn::IsInf | MathFn::IsFinite | MathFn::Signbit,
                                _,
                            ) => {
                                format!("({}({}) != 0)", self.fname(m), a[0])
                            }
                            (
                                MathFn::Clz
                                | MathFn::Popcount
                                | MathFn::Rotate
                                | MathFn::MulHi
                                | MathFn::AddSat
                                | MathFn::SubSat
                                | MathFn::Hadd
                                | MathFn::Rhadd,
                                _,
                            ) => {
                                format!("(({t}){}({}))", self.fname(m), a.join(", "))
                            }
                            _ => format!("{}({})", self.fname(m), a.join(", ")),
                        }
                    })
                    .collect()
            }
        }
    }

    /// The helper that calls float built-in `m` on type `s` unless an argument is NaN (see
    /// [`Dialect::nan_guarded`]): then the value is the one IEEE 754 (and the evaluator)
    /// defines, NaN, but pow(x, 0) = pow(1, y) = 1 and hypot(inf, y) = inf.
    fn nan_guarded(&mut self, m: MathFn, s: Scalar) -> String {
        let t = self.ty(s);
        let f = self.fname(m);
        let name = format!("strata_{f}_{t}");
        let (params, body) = match m {
            // The writer's `rsqrt` is `1 / sqrt(x)`, correctly rounded twice as the evaluator
            // computes it: a target's `rsqrt` may differ by an ulp (NVIDIA's OpenCL, `f64`).
            MathFn::Rsqrt => (
                format!("{t} x"),
                format!("return isnan(x) ? x : ({t})1 / sqrt(x);"),
            ),
            // rootn(x, 0) is NaN. PoCL 3.1's `rootn` of a literal 0 is poison (an integer
            // division by `n` inside it): the result was 0 and the kernel's other stores were
            // lost (seen in the differential tests, which hung on it).
            MathFn::Rootn => {
                let nan = self.literal(Literal::from_bits(
                    s,
                    if s == Scalar::F32 {
                        f32::NAN.to_bits() as u64
                    } else {
                        f64::NAN.to_bits()
                    },
                ));
                (
                    format!("{t} x, {} n", self.ty(Scalar::I32)),
                    format!("return (isnan(x) || n == 0) ? {nan} : {f}(x, n);"),
                )
            }
            // pown(NaN, 0) is 1, pown(NaN, n) NaN. PoCL 3.1's `pown` of a NaN its compiler
            // proves gave 1.0 and -1.0 (seen in the differential tests).
            MathFn::Pown => (
                format!("{t} x, {} n", self.ty(Scalar::I32)),
                format!("return isnan(x) ? (n == 0 ? ({t})1 : x) : {f}(x, n);"),
            ),
            _ if m.arity() == 1 => (format!("{t} x"), format!("return isnan(x) ? x : {f}(x);")),
            _ => {
                let special = match m {
                    MathFn::Pow => format!("(y == ({t})0 || x == ({t})1) ? ({t})1 : "),
                    MathFn::Hypot => format!("(isinf(x) || isinf(y)) ? ({t})INFINITY : "),
                    _ => String::new(),
                };
                (
                    format!("{t} x, {t} y"),
                    format!("return (isnan(x) || isnan(y)) ? ({special}x + y) : {f}(x, y);"),
                )
            }
        };
        self.define(format!("{t} {name}({params}) {{ {body} }}\n"));
        name
    }

    /// The helper for float `sign` on type `s`, not the built-in: NVIDIA's OpenCL returns +0
    /// for sign(-0.0); strata (and OpenCL) return the zero itself.
    fn sign(&mut self, s: Scalar) -> String {
        let t = self.ty(s);
        let name = format!("strata_sign_{t}");
        self.define(format!(
            "{t} {name}({t} x) {{ return x != x ? ({t})0 : x > ({t})0 ? ({t})1 : x < ({t})0 ? ({t})-1 : x; }}\n"
        ));
        name
    }

    /// The exact `abs` of the signed integer `x` of type `s`, by the dialect's helper (see
    /// [`Dialect::abs_helper`]).
    fn int_abs(&mut self, s: Scalar, x: &str) -> String {
        let Some(def) = self.d.abs_helper else {
            return format!("{}({x})", self.fname(MathFn::Abs));
        };
        let t = self.ty(s);
        let (u, i, reg) = if s.size() == 8 {
            (self.ty(Self::unsigned_of(s)), t, "l")
        } else {
            (self.ty(Scalar::U32), self.ty(Scalar::I32), "r")
        };
        self.define(
            def.replace("{t}", t)
                .replace("{u}", u)
                .replace("{i}", i)
                .replace("{reg}", reg),
        );
        format!("strata_abs_{t}({x})")
    }

    /// The helper behind signed `/` or `%` (`div`) of type `s` wider than `short`: C leaves
    /// `MIN / -1` undefined; the evaluator's quotient wraps to `MIN`, its remainder is 0.
    pub(super) fn div_rem(&mut self, s: Scalar, div: bool) -> String {
        let t = self.ty(s);
        let name = format!("strata_{}_{t}", if div { "div" } else { "rem" });
        let body = if div {
            format!(
                "return b == -1 ? ({t})(({u})0 - ({u})a) : a / b;",
                u = self.ty(Self::unsigned_of(s))
            )
        } else {
            "return b == -1 ? 0 : a % b;".to_string()
        };
        self.define(format!("{t} {name}({t} a, {t} b) {{ {body} }}\n"));
        name
    }

    /// The helper that converts float type `from` to integer type `to`, saturating, with NaN
    /// to 0 (see [`Dialect::convert_sat_nan_guard`]).
    pub(super) fn convert_sat_guarded(&mut self, from: Scalar, to: Scalar) -> String {
        let (t, f) = (self.ty(to), self.ty(from));
        let name = format!("strata_{t}_sat_{f}");
        let convert = self.d.convert_sat.replace("{t}", t).replace("{x}", "x");
        self.define(format!(
            "{t} {name}({f} x) {{ return x != x ? ({t})0 : {convert}; }}\n"
        ));
        name
    }

    /// Adds a helper function, `def` without the dialect's qualifier, to the kernel (once).
    pub(super) fn define(&mut self, def: String) {
        self.helpers
            .insert(format!("{} {def}", self.d.helper_prefix));
    }
}

//! The generator's expressions: leaves (loads, parameters, ids, values in scope, literals) and
//! random well-typed expressions over booleans, integers and floats, with the undefined
//! behaviour of the module docs avoided.

use super::Gen;
use crate::difftest::{random_literal, NARROW};
use strata::ir::{BinaryOp, Builtin, Expr, ExprId, MathFn, Scalar, Type, UnaryOp};

impl Gen<'_> {
    /// A leaf of type `s`.
    fn leaf(&mut self, s: Scalar) -> ExprId {
        let here: Vec<ExprId> = self
            .scopes
            .iter()
            .flatten()
            .filter(|(_, t)| *t == s)
            .map(|(e, _)| *e)
            .collect();
        let roll = self.r.below(100);
        if !here.is_empty() && roll < 65 {
            return self.pick(&here);
        }
        if roll < 80 || s == Scalar::Bool {
            let l = random_literal(&mut self.r, s);
            return self.intern(Expr::Literal(l), s);
        }
        if roll < 88 && self.base_types().contains(&s) {
            let p = self.param_index(&format!("k_{s}"));
            return self.intern(Expr::Param(p), s);
        }
        let b = match self.r.below(5) {
            0 => Builtin::GlobalId(0),
            1 => Builtin::LocalId(0),
            2 => Builtin::GroupId(0),
            3 => Builtin::LocalLinearId,
            _ => Builtin::LocalSize(0),
        };
        let b = self.builtin(b);
        self.cast(b, s)
    }

    /// A random expression of type `s`, at most `depth` operations deep, computed exactly on
    /// every backend.
    pub(super) fn expr(&mut self, s: Scalar, depth: u32) -> ExprId {
        if depth == 0 || self.chance(25) {
            return self.leaf(s);
        }
        let d = depth - 1;
        if s == Scalar::Bool {
            return self.bool_expr(d);
        }
        // Shared by every type: select and casts.
        match self.r.below(12) {
            0 => {
                let c = self.bool_expr(d);
                let a = self.expr(s, d);
                let b = self.expr(s, d);
                return self.select(c, a, b);
            }
            1 => {
                let mut from = self.base_types();
                from.extend(NARROW);
                from.push(Scalar::Bool);
                let from = self.pick(&from);
                let x = self.expr(from, d);
                return self.cast(x, s);
            }
            _ => {}
        }
        if s.is_float() {
            self.float_expr(s, d)
        } else {
            self.int_expr(s, d)
        }
    }

    fn bool_expr(&mut self, d: u32) -> ExprId {
        match self.r.below(8) {
            0..=3 => {
                let mut ts = self.base_types();
                ts.extend(NARROW);
                let t = self.pick(&ts);
                let op = self.pick(&[
                    BinaryOp::Eq,
                    BinaryOp::Ne,
                    BinaryOp::Lt,
                    BinaryOp::Le,
                    BinaryOp::Gt,
                    BinaryOp::Ge,
                ]);
                let a = self.expr(t, d);
                let b = self.expr(t, d);
                self.bin(op, a, b)
            }
            4 => {
                let op = self.pick(&[BinaryOp::And, BinaryOp::Or, BinaryOp::Xor, BinaryOp::Eq]);
                let a = self.expr(Scalar::Bool, d);
                let b = self.expr(Scalar::Bool, d);
                self.bin(op, a, b)
            }
            5 => {
                let a = self.expr(Scalar::Bool, d);
                self.intern(Expr::Unary(UnaryOp::Not, a), Scalar::Bool)
            }
            6 => {
                let t = self.pick(&self.float_types());
                let m = self.pick(&[
                    MathFn::IsNan,
                    MathFn::IsInf,
                    MathFn::IsFinite,
                    MathFn::Signbit,
                ]);
                let mut x = self.expr(t, d);
                if m == MathFn::Signbit {
                    x = self.no_nan(x);
                }
                self.math(m, vec![x])
            }
            _ => self.leaf(Scalar::Bool),
        }
    }

    fn int_expr(&mut self, s: Scalar, d: u32) -> ExprId {
        use BinaryOp::*;
        match self.r.below(20) {
            0..=8 => {
                let op = self.pick(&[Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr]);
                let a = self.expr(s, d);
                let mut b = self.expr(s, d);
                if matches!(op, Div | Rem) {
                    let one = self.lit(s, 1);
                    b = self.bin(Or, b, one);
                }
                self.bin(op, a, b)
            }
            9 | 10 => {
                let op = self.pick(&[UnaryOp::Neg, UnaryOp::Not]);
                let a = self.expr(s, d);
                self.intern(Expr::Unary(op, a), s)
            }
            11..=15 => {
                let m = self.pick(&[
                    MathFn::Abs,
                    MathFn::Min,
                    MathFn::Max,
                    MathFn::Clamp,
                    MathFn::Clz,
                    MathFn::Popcount,
                    MathFn::Rotate,
                    MathFn::MulHi,
                    MathFn::AddSat,
                    MathFn::SubSat,
                    MathFn::Hadd,
                    MathFn::Rhadd,
                    MathFn::MadSat,
                ]);
                let args = (0..m.arity()).map(|_| self.expr(s, d)).collect();
                self.math(m, args)
            }
            18 if s == Scalar::I32 => {
                // The exponent of a float (never NaN: ilogb(NaN) is defined, but keep the
                // NaN rules in one place, `no_nan`).
                let from = if self.opts.f64 && self.chance(50) {
                    Scalar::F64
                } else {
                    Scalar::F32
                };
                let x = self.expr(from, d);
                self.math(MathFn::Ilogb, vec![x])
            }
            16 if s.size() >= 4 => {
                // Reinterpret a float of the same size (never a NaN).
                let from = if s.size() == 4 {
                    Scalar::F32
                } else if self.opts.f64 {
                    Scalar::F64
                } else {
                    return self.expr(s, d);
                };
                let x = self.expr(from, d);
                let x = self.no_nan(x);
                self.intern(Expr::Bitcast(x, Type::scalar(s)), s)
            }
            17 if s.size() >= 4 => {
                // Through a narrow type.
                let n = self.pick(&NARROW);
                let x = self.expr(n, d);
                self.cast(x, s)
            }
            _ => self.leaf(s),
        }
    }

    fn float_expr(&mut self, s: Scalar, d: u32) -> ExprId {
        use BinaryOp::*;
        match self.r.below(20) {
            0..=8 => {
                let op = self.pick(&[Add, Sub, Mul, Div, Rem]);
                let a = self.expr(s, d);
                let b = self.expr(s, d);
                self.bin(op, a, b)
            }
            9 => {
                let a = self.expr(s, d);
                self.intern(Expr::Unary(UnaryOp::Neg, a), s)
            }
            10..=15 => {
                let m = self.pick(&[
                    MathFn::Sqrt,
                    MathFn::Rsqrt,
                    MathFn::Floor,
                    MathFn::Ceil,
                    MathFn::Trunc,
                    MathFn::Round,
                    MathFn::Fma,
                    MathFn::Copysign,
                    MathFn::Min,
                    MathFn::Max,
                    MathFn::Clamp,
                    MathFn::Abs,
                    MathFn::Sign,
                    MathFn::Mix,
                    MathFn::Fmod,
                    MathFn::Rint,
                    MathFn::Logb,
                    MathFn::Fract,
                    MathFn::Fdim,
                    MathFn::Maxmag,
                    MathFn::Minmag,
                    MathFn::Nextafter,
                    MathFn::Remainder,
                    MathFn::Ldexp,
                ]);
                let mut args: Vec<ExprId> = (0..m.arity()).map(|_| self.expr(s, d)).collect();
                if m == MathFn::Copysign {
                    args[1] = self.no_nan(args[1]);
                }
                if m == MathFn::Ldexp {
                    args[1] = self.small_int();
                }
                let r = self.math(m, args);
                if matches!(
                    m,
                    MathFn::Min | MathFn::Max | MathFn::Clamp | MathFn::Maxmag | MathFn::Minmag
                ) {
                    // IEEE leaves open which zero `min(-0.0, +0.0)` returns, and devices differ:
                    // `+ 0.0` makes every zero result +0.0 so no later division or sign test
                    // observes it (nothing else changes).
                    let zero = self.lit(s, 0);
                    self.bin(BinaryOp::Add, r, zero)
                } else {
                    r
                }
            }
            16 => {
                // Reinterpret an integer of the same size.
                let from = if s == Scalar::F32 {
                    self.pick(&[Scalar::I32, Scalar::U32])
                } else {
                    self.pick(&[Scalar::I64, Scalar::U64])
                };
                let x = self.expr(from, d);
                self.intern(Expr::Bitcast(x, Type::scalar(s)), s)
            }
            _ => self.leaf(s),
        }
    }

    /// An integer index in `0..n` from a random expression (`n` a power of two, or any `n` with
    /// `modulo`).
    pub(super) fn index(&mut self, n: u32) -> ExprId {
        let src = self.pick(&[Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64]);
        let x = self.expr(src, 2);
        let x = self.cast(x, Scalar::U32);
        let n = self.u32(n);
        self.bin(BinaryOp::Rem, x, n)
    }
}

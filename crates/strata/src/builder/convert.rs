//! Conversions with a rounding mode and saturation (OpenCL's `convert_T_sat_rtp` family), as
//! compositions of IR operations whose semantics are already exact on every backend: a float
//! is rounded to an integral value before the saturating cast; a directed rounding to a float
//! takes the nearest value and steps one ulp (`nextafter`) where it lies on the wrong side,
//! found by converting it back exactly.

use super::math::{literal_of, literal_splat};
use super::{expr_of, id_of, node_typed, record_error, Expr, KernelType};
use crate::ir::{BinaryOp, Expr as IrExpr, ExprId, Literal, MathFn, Scalar, Type, UnaryOp};

/// How a conversion rounds a value the target type cannot hold exactly (OpenCL's `_rte`,
/// `_rtz`, `_rtp`, `_rtn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// To the nearest value, ties to even (`_rte`).
    NearestEven,
    /// Towards zero (`_rtz`).
    TowardZero,
    /// Towards positive infinity (`_rtp`).
    Up,
    /// Towards negative infinity (`_rtn`).
    Down,
}

/// Records IR nodes of one width.
struct Ops {
    width: u8,
}

impl Ops {
    fn ty(&self, s: Scalar) -> Type {
        Type {
            scalar: s,
            width: self.width,
        }
    }
    fn node(&self, e: IrExpr, s: Scalar) -> ExprId {
        id_of(node_typed::<()>(e, self.ty(s)))
    }
    fn int(&self, s: Scalar, v: i128) -> ExprId {
        let mask = if s.size() == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * s.size())) - 1
        };
        literal_splat(Literal::from_bits(s, v as u64 & mask), self.width)
    }
    fn float(&self, s: Scalar, v: f64) -> ExprId {
        literal_splat(literal_of(v, s), self.width)
    }
    fn bin(&self, op: BinaryOp, a: ExprId, b: ExprId, s: Scalar) -> ExprId {
        self.node(IrExpr::Binary(op, a, b), s)
    }
    fn math(&self, f: MathFn, args: Vec<ExprId>, s: Scalar) -> ExprId {
        self.node(IrExpr::Math(f, args), s)
    }
    fn select(&self, c: ExprId, a: ExprId, b: ExprId, s: Scalar) -> ExprId {
        self.node(IrExpr::Select(c, a, b), s)
    }
}

/// The unsigned integer type of `size` bytes.
fn uint_of(size: usize) -> Scalar {
    match size {
        1 => Scalar::U8,
        2 => Scalar::U16,
        4 => Scalar::U32,
        _ => Scalar::U64,
    }
}

/// The range of an integer type.
fn range(s: Scalar) -> (i128, i128) {
    let bits = 8 * s.size() as u32;
    if s.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

impl<T: KernelType> Expr<T> {
    /// Converts to another component type of the same width with rounding `mode` where the
    /// value is not representable, saturating at the target's range for integer targets
    /// (NaN becomes 0): OpenCL's `convert_U_sat_rte`, `_rtz`, `_rtp`, `_rtn`. Integer targets
    /// from floats round to an integral value first (`NearestEven` is `rint`, `TowardZero`
    /// truncates as [`Expr::cast`] does); float targets from wider floats or from integers
    /// round the value itself (`Expr::<i32>::convert::<f32>(Rounding::Down)` of 16777217 is
    /// 16777216, `Up` 16777218); integer-to-integer conversions saturate.
    #[track_caller]
    pub fn convert<U: KernelType>(self, mode: Rounding) -> Expr<U> {
        let (s, d, w) = (T::TYPE.scalar, U::TYPE.scalar, T::TYPE.width);
        if U::TYPE.width != w || s == Scalar::Bool || d == Scalar::Bool {
            record_error(format!(
                "convert from {} to {}: conversions keep the width and take numeric types",
                T::TYPE,
                U::TYPE
            ));
        }
        let o = Ops { width: w };
        let x = id_of(self);
        let cast = |v: ExprId| o.node(IrExpr::Cast(v, d), d);
        let out = match (s.is_float(), d.is_float()) {
            (true, false) => {
                let f = match mode {
                    Rounding::NearestEven => MathFn::Rint,
                    Rounding::TowardZero => MathFn::Trunc,
                    Rounding::Up => MathFn::Ceil,
                    Rounding::Down => MathFn::Floor,
                };
                cast(o.math(f, vec![x], s))
            }
            (false, false) => {
                let ((smin, smax), (dmin, dmax)) = (range(s), range(d));
                let mut v = x;
                if dmin > smin {
                    v = o.math(MathFn::Max, vec![v, o.int(s, dmin)], s);
                }
                if dmax < smax {
                    v = o.math(MathFn::Min, vec![v, o.int(s, dmax)], s);
                }
                cast(v)
            }
            _ if mode == Rounding::NearestEven || (s.is_float() && d.size() >= s.size()) => cast(x),
            _ => {
                // The nearest value, and on which side of x it lies.
                let r = cast(x);
                let b = Scalar::Bool;
                let (above, below) = if s.is_float() {
                    let back = o.node(IrExpr::Cast(r, s), s);
                    (
                        o.bin(BinaryOp::Gt, back, x, b),
                        o.bin(BinaryOp::Lt, back, x, b),
                    )
                } else {
                    let digits = match d {
                        Scalar::F16 => 11,
                        Scalar::F32 => 24,
                        _ => 53,
                    };
                    let bits = 8 * s.size() as u32;
                    if bits < 2 * digits {
                        // x = hi + lo with lo its low k bits (0 <= lo < 2^k), where 2^k is
                        // the integer range over the float's precision: hi, lo and r - hi
                        // (an integer below 2^(k+1)) are all exact floats, so r - hi against
                        // lo says on which side of x the rounded r lies, 2^bits just past the
                        // range included. (The cast of r back to the integer type below says
                        // it too, but lavapipe folds `(int)(float)x` to `x`.)
                        let k = bits.saturating_sub(digits);
                        let mask = (1i128 << k) - 1;
                        let lo = o.bin(BinaryOp::And, x, o.int(s, mask), s);
                        let hi = o.bin(BinaryOp::And, x, o.int(s, !mask), s);
                        let t = o.bin(BinaryOp::Sub, r, cast(hi), d);
                        let lo = cast(lo);
                        (o.bin(BinaryOp::Gt, t, lo, b), o.bin(BinaryOp::Lt, t, lo, b))
                    } else {
                        // r as an integer from its bits (m 2^(e - bias - digits + 1)), against
                        // x: no float-to-integer conversion, which lavapipe would fold with
                        // the conversion that made r. r = 2^bits just past an unsigned range
                        // wraps there, so that one is found by comparing floats.
                        let (us, ud) = (uint_of(s.size()), uint_of(d.size()));
                        let bias: i128 = match d {
                            Scalar::F16 => 15,
                            Scalar::F32 => 127,
                            _ => 1023,
                        };
                        let fb = digits - 1;
                        let rb = o.node(IrExpr::Bitcast(r, o.ty(ud)), ud);
                        let ex = o.bin(BinaryOp::Shr, rb, o.int(ud, fb as i128), ud);
                        let ex = o.bin(BinaryOp::And, ex, o.int(ud, 2 * bias + 1), ud);
                        let m = o.bin(BinaryOp::And, rb, o.int(ud, (1 << fb) - 1), ud);
                        let m = o.bin(BinaryOp::Or, m, o.int(ud, 1 << fb), ud);
                        let zero_e = o.bin(BinaryOp::Eq, ex, o.int(ud, 0), b);
                        let m = o.select(zero_e, o.int(ud, 0), m, ud);
                        let m = o.node(IrExpr::Cast(m, us), us);
                        let ex = o.node(IrExpr::Cast(ex, us), us);
                        let point = o.int(us, bias + fb as i128);
                        let left = o.bin(BinaryOp::Ge, ex, point, b);
                        let up = o.bin(BinaryOp::Sub, ex, point, us);
                        let down = o.bin(BinaryOp::Sub, point, ex, us);
                        let mag = o.select(
                            left,
                            o.bin(BinaryOp::Shl, m, up, us),
                            o.bin(BinaryOp::Shr, m, down, us),
                            us,
                        );
                        let (mag_gt, mag_lt) = if s.is_signed() {
                            // r as a signed integer, its sign from r's (no integer `abs` of
                            // x: NVRTC's PTX would have one), 2^(bits-1) handled as `over`.
                            let rneg = o.bin(BinaryOp::Lt, r, o.float(d, 0.0), b);
                            let minus = o.bin(BinaryOp::Sub, o.int(us, 0), mag, us);
                            let sr = o.select(rneg, minus, mag, us);
                            let sr = o.node(IrExpr::Bitcast(sr, o.ty(s)), s);
                            (o.bin(BinaryOp::Gt, sr, x, b), o.bin(BinaryOp::Lt, sr, x, b))
                        } else {
                            let xu = o.node(IrExpr::Bitcast(x, o.ty(us)), us);
                            (
                                o.bin(BinaryOp::Gt, mag, xu, b),
                                o.bin(BinaryOp::Lt, mag, xu, b),
                            )
                        };
                        let past = o.float(d, range(s).1 as f64 + 1.0);
                        let over = o.bin(BinaryOp::Ge, r, past, b);
                        let not_over = o.node(IrExpr::Unary(UnaryOp::Not, over), b);
                        (
                            o.bin(BinaryOp::Or, over, mag_gt, b),
                            o.bin(BinaryOp::And, not_over, mag_lt, b),
                        )
                    }
                };
                let step = |toward: f64| o.math(MathFn::Nextafter, vec![r, o.float(d, toward)], d);
                let zero = o.float(d, 0.0);
                match mode {
                    Rounding::Down => o.select(above, step(f64::NEG_INFINITY), r, d),
                    Rounding::Up => o.select(below, step(f64::INFINITY), r, d),
                    _ => {
                        let pos = o.bin(BinaryOp::Gt, r, zero, b);
                        let neg = o.bin(BinaryOp::Lt, r, zero, b);
                        let away = o.bin(
                            BinaryOp::Or,
                            o.bin(BinaryOp::And, above, pos, b),
                            o.bin(BinaryOp::And, below, neg, b),
                            b,
                        );
                        o.select(away, step(0.0), r, d)
                    }
                }
            }
        };
        expr_of(out)
    }

    /// Converts to an integer type of the same width, saturating at its range (OpenCL
    /// `convert_U_sat`): floats truncate (NaN becomes 0), integers clamp.
    #[track_caller]
    pub fn cast_sat<U: KernelType>(self) -> Expr<U> {
        if U::TYPE.scalar.is_float() {
            record_error(format!(
                "cast_sat to {}: saturation is for integer targets; use `cast` or `convert`",
                U::TYPE
            ));
        }
        self.convert(Rounding::TowardZero)
    }
}

//! Float arithmetic for lavapipe (llvmpipe), whose code generator takes shortcuts that IEEE
//! arithmetic does not allow: it builds `a * b` as `0` when either operand is the constant
//! `+0.0`, `a / b` as `0` for a constant `+0.0` dividend and as undefined for a constant
//! `+0.0` divisor, `a - b` as `0` when both operands are the same value, and `a + b` as the
//! other operand when one is the constant `+0.0`. The constants are those Mesa's compiler
//! finds after folding (a private variable holding `0.0`, `x * 0`, `16 & 0` cast to `f32`),
//! so the writer cannot see them; instead, where [`SpirvTarget::llvmpipe_float_fixes`]
//! asks for it, each `+ - * /` of the IR is followed by a select of the IEEE result in the
//! cases the shortcuts get wrong, computed without the shortcut operation. Where an operand is
//! a constant, the select folds away with the shortcut.
//!
//! [`SpirvTarget::llvmpipe_float_fixes`]: crate::codegen::spirv::SpirvTarget::llvmpipe_float_fixes

use super::{Lower, R};
use crate::codegen::spirv::op;
use crate::ir::{BinaryOp, Type};

impl Lower<'_> {
    /// `x o y` (float `+ - * /` of type `at`) for the writer's own helpers, with the IEEE
    /// result where llvmpipe's shortcuts may differ when the target asks for it: a helper's
    /// operand may be a constant zero for Mesa too (`fma(0.0, inf, y)` gave `y`).
    pub(super) fn farith(&mut self, o: BinaryOp, at: Type, x: u32, y: u32) -> R<u32> {
        let opc = match o {
            BinaryOp::Add => op::F_ADD,
            BinaryOp::Sub => op::F_SUB,
            BinaryOp::Mul => op::F_MUL,
            BinaryOp::Div => op::F_DIV,
            _ => return Err(format!("float helper operator {}", o.symbol())),
        };
        let r = self.f2(at, opc, x, y)?;
        if self.t.llvmpipe_float_fixes {
            self.llvmpipe_fix(o, at, x, y, r)
        } else {
            Ok(r)
        }
    }

    /// `r`, the result of `x o y` (float `+ - * /` of type `at`), with the IEEE result where
    /// llvmpipe's shortcuts may have replaced it (see the module docs).
    pub(super) fn llvmpipe_fix(&mut self, o: BinaryOp, at: Type, x: u32, y: u32, r: u32) -> R<u32> {
        let s = at.scalar;
        let t = self.vty(at)?;
        let ut = at.with_scalar(Self::uint_of_size(s.size()));
        let u = self.vty(ut)?;
        let sign = 1u64 << (s.bits() - 1);
        let mant = match s.bits() {
            16 => 10,
            32 => 23,
            _ => 52,
        };
        let inf_bits = (sign - 1) & !((1u64 << mant) - 1);
        let zero = self.const_of(at, 0)?;
        let nan = self.const_of(at, inf_bits | (1 << (mant - 1)))?;
        let sm = self.const_of(ut, sign)?;
        let xb = self.op(op::BITCAST, u, &[x]);
        let yb = self.op(op::BITCAST, u, &[y]);
        let zx = self.fcmp(at, op::F_ORD_EQUAL, x, zero)?;
        let zy = self.fcmp(at, op::F_ORD_EQUAL, y, zero)?;
        match o {
            BinaryOp::Add => {
                // Both zero: -0 only if both are -0.
                let both = self.and(at, zx, zy)?;
                let sb = self.op(op::BITWISE_AND, u, &[xb, yb]);
                let sb = self.op(op::BITWISE_AND, u, &[sb, sm]);
                let z = self.op(op::BITCAST, t, &[sb]);
                self.sel(at, both, z, r)
            }
            BinaryOp::Sub => {
                // `x` infinite or NaN: NaN if `y` is NaN or the same infinity, else `x`.
                let xn = self.is_nan(at, x)?;
                let xi = self.is_inf(at, x)?;
                let special = self.or(at, xn, xi)?;
                let yn = self.is_nan(at, y)?;
                let same = self.fcmp(at, op::F_ORD_EQUAL, x, y)?;
                let bad = self.or(at, yn, same)?;
                let fixed = self.sel(at, bad, nan, x)?;
                let r = self.sel(at, special, fixed, r)?;
                // Both zero: -0 only for `-0 - +0` (Mesa turns `x - -0.0` into `x + 0.0`).
                let both = self.and(at, zx, zy)?;
                let ny = self.op(op::NOT, u, &[yb]);
                let sb = self.op(op::BITWISE_AND, u, &[xb, ny]);
                let sb = self.op(op::BITWISE_AND, u, &[sb, sm]);
                let z = self.op(op::BITCAST, t, &[sb]);
                self.sel(at, both, z, r)
            }
            BinaryOp::Mul | BinaryOp::Div => {
                let special = self.or(at, zx, zy)?;
                let xn = self.is_nan(at, x)?;
                let yn = self.is_nan(at, y)?;
                let any_nan = self.or(at, xn, yn)?;
                let sx = self.op(op::BITWISE_XOR, u, &[xb, yb]);
                let sg = self.op(op::BITWISE_AND, u, &[sx, sm]);
                let signed_zero = self.op(op::BITCAST, t, &[sg]);
                let (bad, value) = if o == BinaryOp::Mul {
                    // A zero times an infinity is NaN, else a zero of the product's sign.
                    let xi = self.is_inf(at, x)?;
                    let yi = self.is_inf(at, y)?;
                    let inf = self.or(at, xi, yi)?;
                    (self.or(at, any_nan, inf)?, signed_zero)
                } else {
                    // 0 / 0 is NaN, x / 0 an infinity, 0 / y a zero, of the quotient's sign.
                    let both = self.and(at, zx, zy)?;
                    let ib = self.const_of(ut, inf_bits)?;
                    let sinf = self.op(op::BITWISE_OR, u, &[sg, ib]);
                    let sinf = self.op(op::BITCAST, t, &[sinf]);
                    let v = self.sel(at, zy, sinf, signed_zero)?;
                    (self.or(at, any_nan, both)?, v)
                };
                let fixed = self.sel(at, bad, nan, value)?;
                self.sel(at, special, fixed, r)
            }
            _ => Ok(r),
        }
    }
}

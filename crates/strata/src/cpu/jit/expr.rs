//! Cranelift code for a region's expressions: one work-item's values in registers (a vector
//! as one register per component). Integer division and remainder fault on a zero divisor
//! (deferred when hoisted out of a loop, [`Gen::hoist_divisions`]); the built-ins and
//! conversions without a Cranelift instruction call the evaluator's code ([`super::helpers`]).

use super::lower::VarOf;
use super::lower::{cl_ty, scalar_index, Gen};
use super::Env;
use super::Site;
use crate::ir::{
    BinaryOp, Builtin, Expr, ExprId, Literal, MathFn, MathKind, Scalar, StubId, Type, UnaryOp,
};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlags, StackSlotData, StackSlotKind, Value};
use cranelift_frontend::FunctionBuilder;
use std::mem::offset_of;

/// The sub-group size (a power of two).
const SG: u32 = crate::cpu::SUB_GROUP_SIZE;
const _: () = assert!(SG.is_power_of_two());

fn math_index(m: MathFn) -> i64 {
    MathFn::ALL
        .iter()
        .position(|&x| x == m)
        .expect("every built-in") as i64
}

impl Gen<'_, '_> {
    /// The bits of a scalar, zero-extended to `i64` (as [`Literal`] keeps them).
    pub(super) fn bits_of(&mut self, v: Value, s: Scalar) -> Value {
        let v = match s {
            Scalar::F32 => self.b.ins().bitcast(types::I32, MemFlags::new(), v),
            Scalar::F64 => self.b.ins().bitcast(types::I64, MemFlags::new(), v),
            _ => v,
        };
        if s.size() == 8 {
            v
        } else {
            self.b.ins().uextend(types::I64, v)
        }
    }

    pub(super) fn expr(&mut self, e: ExprId) -> Vec<Value> {
        if let Some(v) = self.lookup(e) {
            return v;
        }
        let start = self.deferred_len();
        let ty = self.f.exprs.ty(e);
        let expr = self.f.exprs.get(e).clone();
        let vals = match expr {
            Expr::Literal(l) => vec![self.lit(l)],
            Expr::Param(p) => {
                let fl = self.table_flags();
                let bits = self
                    .b
                    .ins()
                    .load(types::I64, fl, self.scal_p, p.index() as i32 * 8);
                vec![match self.f.params[p].kind {
                    crate::ir::ParamKind::Scalar(t) => from_bits(&mut self.b, bits, t.scalar),
                    _ => self.b.ins().ireduce(types::I32, bits),
                }]
            }
            Expr::BufferLen(p) => {
                let len = self.mem_arg(self.bufs_p, p.index()).1;
                vec![self.b.ins().ireduce(types::I32, len)]
            }
            Expr::Value(v) => {
                if self.defined.contains(&v) {
                    (0..ty.width)
                        .map(|c| {
                            let var = self.var(VarOf::Value(v), c, ty.scalar);
                            self.b.use_var(var)
                        })
                        .collect()
                } else if let Some(&at) = self.plan.shared.get(&v) {
                    vec![self.load_shared(at, ty.scalar)]
                } else {
                    let slot = self.plan.values[&v];
                    self.load_rec(slot.off, slot.ty)
                }
            }
            Expr::Builtin(b) => vec![self.builtin(b)],
            Expr::Unary(op, a) => {
                let s = self.f.exprs.ty(a).scalar;
                let a = self.expr(a);
                a.into_iter()
                    .map(|x| match (op, s) {
                        (UnaryOp::Neg, s) if s.is_float() => self.b.ins().fneg(x),
                        (UnaryOp::Neg, _) => self.b.ins().ineg(x),
                        (UnaryOp::Not, Scalar::Bool) => self.b.ins().bxor_imm(x, 1),
                        (UnaryOp::Not, _) => self.b.ins().bnot(x),
                    })
                    .collect()
            }
            Expr::Binary(op, a, b) => {
                let s = self.f.exprs.ty(a).scalar;
                let (a, b) = (self.expr(a), self.expr(b));
                a.into_iter()
                    .zip(b)
                    .map(|(x, y)| self.binary(op, s, x, y))
                    .collect()
            }
            Expr::Select(c, a, b) => {
                let (c, a, b) = (self.expr(c), self.expr(a), self.expr(b));
                let cw = c.len();
                (0..a.len())
                    .map(|i| self.b.ins().select(c[i % cw], a[i], b[i]))
                    .collect()
            }
            Expr::Cast(a, to) => {
                let from = self.f.exprs.ty(a).scalar;
                let a = self.expr(a);
                a.into_iter().map(|x| self.cast(x, from, to)).collect()
            }
            Expr::Bitcast(a, to) => {
                let from = self.f.exprs.ty(a);
                let a = self.expr(a);
                self.bitcast(&a, from, to)
            }
            Expr::Math(m, args) => {
                let s = self.f.exprs.ty(args[0]).scalar;
                let w = self.f.exprs.ty(args[0]).width as usize;
                let vals: Vec<Vec<Value>> = args.iter().map(|&a| self.expr(a)).collect();
                self.math(m, s, w, &vals)
            }
            Expr::Splat(a, n) => {
                let a = self.expr(a)[0];
                vec![a; n as usize]
            }
            Expr::Compose(parts) => parts.iter().flat_map(|&p| self.expr(p)).collect(),
            Expr::Extract(a, n) => vec![self.expr(a)[n as usize]],
            Expr::Stub(n, args) => {
                let vals: Vec<Value> = args.iter().map(|&a| self.expr(a)[0]).collect();
                vec![self.stub(n, &vals, &args, ty.scalar)]
            }
        };
        self.remember(e, vals.clone(), start);
        vals
    }

    pub(super) fn builtin(&mut self, b: Builtin) -> Value {
        let d = |d: u8| (d as usize).min(2);
        match b {
            Builtin::LocalId(k) => {
                let v = self.lid[d(k)];
                self.b.use_var(v)
            }
            Builtin::GroupId(k) => self.env_dim(offset_of!(Env, group), d(k)),
            Builtin::LocalSize(k) => self.local[d(k)],
            Builtin::NumGroups(k) => self.env_dim(offset_of!(Env, groups), d(k)),
            Builtin::GlobalSize(k) => {
                let n = self.env_dim(offset_of!(Env, groups), d(k));
                self.b.ins().imul(n, self.local[d(k)])
            }
            Builtin::GlobalId(k) => {
                let g = self.env_dim(offset_of!(Env, group), d(k));
                let base = self.b.ins().imul(g, self.local[d(k)]);
                let v = self.lid[d(k)];
                let l = self.b.use_var(v);
                self.b.ins().iadd(base, l)
            }
            Builtin::LocalLinearId => self.b.use_var(self.lane),
            Builtin::MaxSubGroupSize => self.b.ins().iconst(types::I32, SG as i64),
            Builtin::SubGroupId => {
                let l = self.b.use_var(self.lane);
                self.b.ins().ushr_imm(l, SG.trailing_zeros() as i64)
            }
            Builtin::SubGroupLocalId => {
                let l = self.b.use_var(self.lane);
                self.b.ins().band_imm(l, SG as i64 - 1)
            }
            Builtin::NumSubGroups | Builtin::SubGroupSize => {
                // Formulas of `Builtin::sub_group_value` (SG a power of two).
                let n = self.b.ins().imul(self.local[0], self.local[1]);
                let n = self.b.ins().imul(n, self.local[2]);
                if b == Builtin::NumSubGroups {
                    let n = self.b.ins().iadd_imm(n, SG as i64 - 1);
                    return self.b.ins().ushr_imm(n, SG.trailing_zeros() as i64);
                }
                let l = self.b.use_var(self.lane);
                let base = self.b.ins().band_imm(l, !(SG as i64 - 1));
                let rest = self.b.ins().isub(n, base);
                let sg = self.b.ins().iconst(types::I32, SG as i64);
                self.b.ins().umin(rest, sg)
            }
            Builtin::GroupLinearId => {
                let [gx, gy, gz] = [0, 1, 2].map(|k| self.env_dim(offset_of!(Env, group), k));
                let [nx, ny] = [0, 1].map(|k| self.env_dim(offset_of!(Env, groups), k));
                let a = self.b.ins().imul(gz, ny);
                let a = self.b.ins().iadd(a, gy);
                let a = self.b.ins().imul(a, nx);
                self.b.ins().iadd(a, gx)
            }
        }
    }

    pub(super) fn binary(&mut self, op: BinaryOp, s: Scalar, x: Value, y: Value) -> Value {
        use BinaryOp::*;
        if let Some(v) = direct_binary(&mut self.b, op, s, x, y) {
            return v;
        }
        let signed = s.is_signed();
        match op {
            Rem if s.is_float() => self.float_call(MathFn::Fmod, s, &[x, y]),
            Shl => self.b.ins().ishl(x, y),
            Shr if signed => self.b.ins().sshr(x, y),
            Shr => self.b.ins().ushr(x, y),
            Div | Rem => {
                let ty = cl_ty(s);
                let z = self.iconst(ty, 0);
                // (Read before a hoisted division puts its divisor under a `select`, which
                // Cranelift folds back to the constant.)
                let min_divisor = signed && op == Div && self.is_signed_min(y, ty);
                let is_zero = self.b.ins().icmp(IntCC::Equal, y, z);
                let y = if let Some(acc) = self.nofault.as_mut() {
                    // Hoisted: the test is deferred to the use; divide by 1 meanwhile.
                    acc.push((is_zero, op == Div));
                    let one = self.iconst(ty, 1);
                    self.b.ins().select(is_zero, one, y)
                } else {
                    let zi = self.b.ins().iconst(types::I64, 0);
                    self.fault_if(is_zero, Site::DivByZero(op == Div), zi, zi);
                    y
                };
                if min_divisor {
                    // A literal `MIN` divisor: Cranelift (0.125) reads the constant as the
                    // unsigned power of two `2^(bits - 1)` and divides by that (`MIN / MIN`
                    // gave -1). The quotient is 1 for `MIN`, else 0.
                    let min = self.b.ins().icmp(IntCC::Equal, x, y);
                    let one = self.iconst(ty, 1);
                    return self.b.ins().select(min, one, z);
                }
                if signed {
                    // `MIN / -1` wraps to `MIN` and `MIN % -1` is 0; the hardware traps.
                    let m1 = self.iconst(ty, -1);
                    let one = self.iconst(ty, 1);
                    let is_m1 = self.b.ins().icmp(IntCC::Equal, y, m1);
                    let safe = self.b.ins().select(is_m1, one, y);
                    if op == Div {
                        let q = self.b.ins().sdiv(x, safe);
                        let n = self.b.ins().ineg(x);
                        self.b.ins().select(is_m1, n, q)
                    } else {
                        let r = self.b.ins().srem(x, safe);
                        self.b.ins().select(is_m1, z, r)
                    }
                } else if op == Div {
                    self.b.ins().udiv(x, y)
                } else {
                    self.b.ins().urem(x, y)
                }
            }
            _ => unreachable!("{} has one instruction", op.symbol()),
        }
    }

    /// Whether `v` is a constant, the smallest value of the signed integer type `ty`.
    fn is_signed_min(&self, v: Value, ty: types::Type) -> bool {
        let dfg = &self.b.func.dfg;
        let Some(i) = dfg.value_def(v).inst() else {
            return false;
        };
        match dfg.insts[i] {
            cranelift_codegen::ir::InstructionData::UnaryImm {
                opcode: cranelift_codegen::ir::Opcode::Iconst,
                imm,
            } => {
                let bits = ty.bits();
                let min = 1u64 << (bits - 1);
                let mask = if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                (imm.bits() as u64) & mask == min
            }
            _ => false,
        }
    }

    pub(super) fn cast(&mut self, x: Value, from: Scalar, to: Scalar) -> Value {
        if from == to {
            return x;
        }
        let from = if from == Scalar::Bool {
            Scalar::U8
        } else {
            from
        };
        if from == Scalar::F16 || to == Scalar::F16 {
            // The evaluator's conversion (on bits: an `f16` is an `i16` here).
            let r = self.cast_by_evaluator(x, from, to);
            return from_bits(&mut self.b, r, to);
        }
        if to == Scalar::Bool {
            return if from.is_float() {
                let z = self.zero(from);
                self.b.ins().fcmp(FloatCC::NotEqual, x, z)
            } else {
                let z = self.zero(from);
                self.b.ins().icmp(IntCC::NotEqual, x, z)
            };
        }
        let (fs, ts) = (from.size(), to.size());
        match (from.is_float(), to.is_float()) {
            (false, false) => {
                if fs == ts {
                    x
                } else if fs > ts {
                    self.b.ins().ireduce(cl_ty(to), x)
                } else if from.is_signed() {
                    self.b.ins().sextend(cl_ty(to), x)
                } else {
                    self.b.ins().uextend(cl_ty(to), x)
                }
            }
            (false, true) => {
                let x = if fs < 4 {
                    if from.is_signed() {
                        self.b.ins().sextend(types::I32, x)
                    } else {
                        self.b.ins().uextend(types::I32, x)
                    }
                } else {
                    x
                };
                if from.is_signed() {
                    self.b.ins().fcvt_from_sint(cl_ty(to), x)
                } else {
                    self.b.ins().fcvt_from_uint(cl_ty(to), x)
                }
            }
            (true, true) => {
                if ts > fs {
                    self.b.ins().fpromote(types::F64, x)
                } else {
                    self.b.ins().fdemote(types::F32, x)
                }
            }
            (true, false) if ts >= 4 => {
                if to.is_signed() {
                    self.b.ins().fcvt_to_sint_sat(cl_ty(to), x)
                } else {
                    self.b.ins().fcvt_to_uint_sat(cl_ty(to), x)
                }
            }
            (true, false) => {
                // To 8- and 16-bit integers: the evaluator's conversion.
                let r = self.cast_by_evaluator(x, from, to);
                self.b.ins().ireduce(cl_ty(to), r)
            }
        }
    }

    /// `x` converted from `from` to `to` by a call of the evaluator's conversion
    /// (`cast_bits`): the result's bits, zero-extended to `i64`.
    fn cast_by_evaluator(&mut self, x: Value, from: Scalar, to: Scalar) -> Value {
        let bits = self.bits_of(x, from);
        let f = self.b.ins().iconst(types::I32, scalar_index(from));
        let t = self.b.ins().iconst(types::I32, scalar_index(to));
        self.call(
            super::helpers::cast_bits as *const () as usize,
            &[types::I32, types::I32, types::I64],
            Some(types::I64),
            &[f, t, bits],
        )
        .expect("a result")
    }

    fn bitcast(&mut self, a: &[Value], from: Type, to: Type) -> Vec<Value> {
        if from.width == to.width {
            return a
                .iter()
                .map(|&x| {
                    if cl_ty(from.scalar) == cl_ty(to.scalar) {
                        x
                    } else {
                        self.b.ins().bitcast(cl_ty(to.scalar), MemFlags::new(), x)
                    }
                })
                .collect();
        }
        // Different shapes: through memory.
        let slot =
            self.b
                .create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 32, 3));
        let (fs, ts) = (from.scalar.size(), to.scalar.size());
        for (c, &x) in a.iter().enumerate() {
            self.b.ins().stack_store(x, slot, (c * fs) as i32);
        }
        (0..to.width as usize)
            .map(|c| {
                self.b
                    .ins()
                    .stack_load(cl_ty(to.scalar), slot, (c * ts) as i32)
            })
            .collect()
    }

    /// A float built-in through the evaluator's implementation.
    fn float_call(&mut self, m: MathFn, s: Scalar, args: &[Value]) -> Value {
        let t = cl_ty(s);
        let f = match (s, args.len()) {
            (Scalar::F32, 1) => super::helpers::math1_f32 as *const () as usize,
            (Scalar::F32, 2) => super::helpers::math2_f32 as *const () as usize,
            (Scalar::F32, _) => super::helpers::math3_f32 as *const () as usize,
            (_, 1) => super::helpers::math1_f64 as *const () as usize,
            (_, 2) => super::helpers::math2_f64 as *const () as usize,
            _ => super::helpers::math3_f64 as *const () as usize,
        };
        let mi = self.b.ins().iconst(types::I32, math_index(m));
        let mut params = vec![types::I32];
        params.extend(std::iter::repeat_n(t, args.len()));
        let mut all = vec![mi];
        all.extend_from_slice(args);
        self.call(f, &params, Some(t), &all).expect("a result")
    }

    pub(super) fn math(&mut self, m: MathFn, s: Scalar, w: usize, a: &[Vec<Value>]) -> Vec<Value> {
        let comp = |i: usize, c: usize| a[i][c];
        match m.kind() {
            MathKind::FloatTest => (0..w)
                .map(|c| {
                    let x = comp(0, c);
                    match m {
                        MathFn::IsNan => self.b.ins().fcmp(FloatCC::Unordered, x, x),
                        MathFn::IsInf | MathFn::IsFinite => {
                            let ax = self.b.ins().fabs(x);
                            let inf = self.lit(Literal::from_bits(
                                s,
                                if s == Scalar::F32 {
                                    f32::INFINITY.to_bits() as u64
                                } else {
                                    f64::INFINITY.to_bits()
                                },
                            ));
                            let cc = if m == MathFn::IsInf {
                                FloatCC::Equal
                            } else {
                                FloatCC::LessThan
                            };
                            self.b.ins().fcmp(cc, ax, inf)
                        }
                        _ => {
                            let it = if s == Scalar::F32 {
                                types::I32
                            } else {
                                types::I64
                            };
                            let bits = self.b.ins().bitcast(it, MemFlags::new(), x);
                            self.b.ins().icmp_imm(IntCC::SignedLessThan, bits, 0)
                        }
                    }
                })
                .collect(),
            MathKind::Reduce => {
                let mut acc = self.zero(s);
                for c in 0..w {
                    let x = comp(0, c);
                    let v = match m {
                        MathFn::Dot => self.b.ins().fmul(x, comp(1, c)),
                        MathFn::Distance => {
                            let d = self.b.ins().fsub(x, comp(1, c));
                            self.b.ins().fmul(d, d)
                        }
                        _ => self.b.ins().fmul(x, x),
                    };
                    acc = self.b.ins().fadd(acc, v);
                }
                if m != MathFn::Dot {
                    acc = self.b.ins().sqrt(acc);
                }
                vec![acc]
            }
            MathKind::Geometric if m == MathFn::Cross => {
                let mut cross = |i: usize, j: usize| {
                    let p = self.b.ins().fmul(comp(0, i), comp(1, j));
                    let q = self.b.ins().fmul(comp(0, j), comp(1, i));
                    self.b.ins().fsub(p, q)
                };
                let mut out = vec![cross(1, 2), cross(2, 0), cross(0, 1)];
                if w == 4 {
                    out.push(self.zero(s));
                }
                out
            }
            MathKind::Geometric => {
                let mut acc = self.zero(s);
                for c in 0..w {
                    let sq = self.b.ins().fmul(comp(0, c), comp(0, c));
                    acc = self.b.ins().fadd(acc, sq);
                }
                let len = self.b.ins().sqrt(acc);
                (0..w).map(|c| self.b.ins().fdiv(comp(0, c), len)).collect()
            }
            MathKind::FloatInt | MathKind::FloatToInt => (0..w)
                .map(|c| {
                    let t = cl_ty(s);
                    let f32_ = s == Scalar::F32;
                    let mi = self.b.ins().iconst(types::I32, math_index(m));
                    if m.kind() == MathKind::FloatInt {
                        let f = if f32_ {
                            super::helpers::math_int_f32 as *const () as usize
                        } else {
                            super::helpers::math_int_f64 as *const () as usize
                        };
                        let args = [mi, comp(0, c), comp(1, c)];
                        self.call(f, &[types::I32, t, types::I32], Some(t), &args)
                    } else {
                        let f = if f32_ {
                            super::helpers::to_int_f32 as *const () as usize
                        } else {
                            super::helpers::to_int_f64 as *const () as usize
                        };
                        let args = [mi, comp(0, c)];
                        self.call(f, &[types::I32, t], Some(types::I32), &args)
                    }
                    .expect("a result")
                })
                .collect(),
            _ if s.is_float() => (0..w)
                .map(|c| {
                    let x = comp(0, c);
                    match m {
                        MathFn::Sqrt => self.b.ins().sqrt(x),
                        MathFn::Rsqrt => {
                            let r = self.b.ins().sqrt(x);
                            let one = self.lit(Literal::from_bits(
                                s,
                                if s == Scalar::F32 {
                                    1f32.to_bits() as u64
                                } else {
                                    1f64.to_bits()
                                },
                            ));
                            self.b.ins().fdiv(one, r)
                        }
                        MathFn::Abs => self.b.ins().fabs(x),
                        MathFn::Floor => self.b.ins().floor(x),
                        MathFn::Ceil => self.b.ins().ceil(x),
                        MathFn::Trunc => self.b.ins().trunc(x),
                        MathFn::Copysign => self.b.ins().fcopysign(x, comp(1, c)),
                        MathFn::Fma => self.b.ins().fma(x, comp(1, c), comp(2, c)),
                        MathFn::Mix => {
                            let d = self.b.ins().fsub(comp(1, c), x);
                            let p = self.b.ins().fmul(d, comp(2, c));
                            self.b.ins().fadd(x, p)
                        }
                        _ => {
                            let args: Vec<Value> = (0..m.arity()).map(|i| comp(i, c)).collect();
                            self.float_call(m, s, &args)
                        }
                    }
                })
                .collect(),
            _ => (0..w)
                .map(|c| {
                    let x = comp(0, c);
                    let signed = s.is_signed();
                    match m {
                        MathFn::Abs if signed => self.b.ins().iabs(x),
                        MathFn::Abs => x,
                        MathFn::Min if signed => self.b.ins().smin(x, comp(1, c)),
                        MathFn::Min => self.b.ins().umin(x, comp(1, c)),
                        MathFn::Max if signed => self.b.ins().smax(x, comp(1, c)),
                        MathFn::Max => self.b.ins().umax(x, comp(1, c)),
                        MathFn::Clamp if signed => {
                            let lo = self.b.ins().smax(x, comp(1, c));
                            self.b.ins().smin(lo, comp(2, c))
                        }
                        MathFn::Clamp => {
                            let lo = self.b.ins().umax(x, comp(1, c));
                            self.b.ins().umin(lo, comp(2, c))
                        }
                        _ => {
                            let mut bits = Vec::new();
                            for i in 0..3 {
                                bits.push(if i < m.arity() {
                                    self.bits_of(comp(i, c), s)
                                } else {
                                    self.b.ins().iconst(types::I64, 0)
                                });
                            }
                            let mi = self.b.ins().iconst(types::I32, math_index(m));
                            let si = self.b.ins().iconst(types::I32, scalar_index(s));
                            let r = self
                                .call(
                                    super::helpers::int_math as *const () as usize,
                                    &[types::I32, types::I32, types::I64, types::I64, types::I64],
                                    Some(types::I64),
                                    &[mi, si, bits[0], bits[1], bits[2]],
                                )
                                .expect("a result");
                            from_bits(&mut self.b, r, s)
                        }
                    }
                })
                .collect(),
        }
    }

    fn stub(&mut self, n: StubId, vals: &[Value], args: &[ExprId], ret: Scalar) -> Value {
        let count = vals.len().max(1);
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (count * 8 + 8) as u32,
            3,
        ));
        for (i, (&v, &a)) in vals.iter().zip(args).enumerate() {
            let s = self.f.exprs.ty(a).scalar;
            let bits = self.bits_of(v, s);
            self.b.ins().stack_store(bits, slot, (i * 8) as i32);
        }
        let ap = self.b.ins().stack_addr(self.ptr, slot, 0);
        let op = self.b.ins().stack_addr(self.ptr, slot, (count * 8) as i32);
        let ni = self.b.ins().iconst(types::I32, i64::from(n.raw()));
        let status = self
            .call(
                super::helpers::stub as *const () as usize,
                &[self.ptr, types::I32, self.ptr, self.ptr],
                Some(types::I32),
                &[self.env, ni, ap, op],
            )
            .expect("a status");
        let zi = self.b.ins().iconst(types::I64, 0);
        let name = self.f.stubs[n].name.clone();
        self.fault_if(status, Site::StubPanic(name), zi, zi);
        let r = self
            .b
            .ins()
            .stack_load(types::I64, slot, (count * 8) as i32);
        from_bits(&mut self.b, r, ret)
    }
}

/// `x op y` where one Cranelift instruction computes it, the same for scalars and for vectors
/// of lanes (comparisons give `bool` bytes, or lane masks): the `bool` operators, integer
/// `+ - * & | ^` and comparisons, float `+ - * /` and comparisons (ordered but `!=`, as
/// Rust's). `None` for the rest (division and remainder of integers, `fmod`, shifts), which
/// the scalar and vector code each do their way.
pub(super) fn direct_binary(
    b: &mut FunctionBuilder,
    op: BinaryOp,
    s: Scalar,
    x: Value,
    y: Value,
) -> Option<Value> {
    use BinaryOp::*;
    if matches!(op, Lt | Gt)
        && s.is_int()
        && !s.is_signed()
        && b.func.dfg.value_type(x) == types::I32X4
    {
        // `x < y` unsigned as `!(max(x, y) == x)` (`x > y` as `!(min(x, y) == x)`): x86 has
        // no unsigned compare of 32-bit lanes; `pmaxud`/`pminud` and `pcmpeqd` need no
        // constant and no flipped copy of `y` beside `y` (registers a loop runs short of),
        // and the `!` folds into the `and` of a mask (`pandn`) where one follows, as it
        // does for a condition (Cranelift's own `<` keeps the `!`).
        let cc = match op {
            Lt => IntCC::UnsignedGreaterThanOrEqual,
            _ => IntCC::UnsignedLessThanOrEqual,
        };
        let not = b.ins().icmp(cc, x, y);
        return Some(b.ins().bnot(not));
    }
    let ins = b.ins();
    if s == Scalar::Bool {
        return Some(match op {
            And => ins.band(x, y),
            Or => ins.bor(x, y),
            Xor | Ne => ins.bxor(x, y),
            Eq => ins.icmp(IntCC::Equal, x, y),
            _ => unreachable!("validated: {} on bool", op.symbol()),
        });
    }
    if s.is_float() {
        let fc = match op {
            Eq => FloatCC::Equal,
            Ne => FloatCC::NotEqual,
            Lt => FloatCC::LessThan,
            Le => FloatCC::LessThanOrEqual,
            Gt => FloatCC::GreaterThan,
            Ge => FloatCC::GreaterThanOrEqual,
            Add => return Some(ins.fadd(x, y)),
            Sub => return Some(ins.fsub(x, y)),
            Mul => return Some(ins.fmul(x, y)),
            Div => return Some(ins.fdiv(x, y)),
            _ => return None,
        };
        return Some(ins.fcmp(fc, x, y));
    }
    let ic = |sc, uc| if s.is_signed() { sc } else { uc };
    let cc = match op {
        Add => return Some(ins.iadd(x, y)),
        Sub => return Some(ins.isub(x, y)),
        Mul => return Some(ins.imul(x, y)),
        And => return Some(ins.band(x, y)),
        Or => return Some(ins.bor(x, y)),
        Xor => return Some(ins.bxor(x, y)),
        Eq => IntCC::Equal,
        Ne => IntCC::NotEqual,
        Lt => ic(IntCC::SignedLessThan, IntCC::UnsignedLessThan),
        Le => ic(IntCC::SignedLessThanOrEqual, IntCC::UnsignedLessThanOrEqual),
        Gt => ic(IntCC::SignedGreaterThan, IntCC::UnsignedGreaterThan),
        Ge => ic(
            IntCC::SignedGreaterThanOrEqual,
            IntCC::UnsignedGreaterThanOrEqual,
        ),
        Div | Rem | Shl | Shr => return None,
    };
    Some(ins.icmp(cc, x, y))
}

/// A scalar of type `s` from its bits in an `i64`.
pub(super) fn from_bits(b: &mut FunctionBuilder, bits: Value, s: Scalar) -> Value {
    match s {
        Scalar::F64 => b.ins().bitcast(types::F64, MemFlags::new(), bits),
        Scalar::F32 => {
            let i = b.ins().ireduce(types::I32, bits);
            b.ins().bitcast(types::F32, MemFlags::new(), i)
        }
        Scalar::I64 | Scalar::U64 => bits,
        s => b.ins().ireduce(cl_ty(s), bits),
    }
}

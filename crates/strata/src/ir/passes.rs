//! Optimization passes, each a plain function from [`Function`] to [`Function`]:
//! [`fold_constants`], [`eliminate_dead_code`], [`unroll_loops`], the `f16` lowering
//! [`lower_f16`], and the pipeline [`optimize`] that runs them in order.
//!
//! Every pass rebuilds the expression arena from the statements, so expressions that are no
//! longer used disappear and the result is compact.

use super::eval;
use super::*;
use std::collections::{HashMap, HashSet};

/// Options of the optimization pipeline.
#[derive(Clone, Copy, Debug)]
pub struct PassOptions {
    /// Unroll `for` loops with compile-time bounds of at most this many iterations.
    pub unroll_max_trips: u64,
    /// ... and at most this many statements after unrolling.
    pub unroll_max_stmts: usize,
    /// Validate after every pass (panics on a pass bug; for tests).
    pub validate_each: bool,
}

impl Default for PassOptions {
    fn default() -> Self {
        PassOptions {
            unroll_max_trips: 16,
            unroll_max_stmts: 512,
            validate_each: cfg!(debug_assertions),
        }
    }
}

/// Runs unrolling, the `f16` lowering, constant folding and dead-code elimination.
pub fn optimize(f: Function, opts: &PassOptions) -> Function {
    let check = |f: Function, pass: &str| {
        if opts.validate_each {
            if let Err(e) = validate(f.clone()) {
                panic!("strata bug: pass `{pass}` produced invalid IR: {e}\n{f}");
            }
        }
        f
    };
    let f = check(unroll_loops(f, opts), "unroll_loops");
    let f = check(lower_f16(f), "lower_f16");
    let f = check(fold_constants(f), "fold_constants");
    check(eliminate_dead_code(f), "eliminate_dead_code")
}

/// Copies expressions from an old arena into a new one, applying value substitutions and,
/// optionally, folding.
struct Rebuilder<'a> {
    old: &'a ExprArena,
    new: ExprArena,
    memo: HashMap<ExprId, ExprId>,
    subst: HashMap<ValueId, ExprId>,
    fold: bool,
    /// Rewrite `f16` operations into `f32` ones ([`lower_f16`]).
    lower: bool,
}

impl<'a> Rebuilder<'a> {
    fn new(old: &'a ExprArena, fold: bool) -> Self {
        Rebuilder {
            old,
            new: ExprArena::new(),
            memo: HashMap::new(),
            subst: HashMap::new(),
            fold,
            lower: false,
        }
    }

    fn lit(&mut self, l: Literal) -> ExprId {
        self.new.intern(Expr::Literal(l), Type::scalar(l.scalar))
    }

    fn expr(&mut self, id: ExprId) -> ExprId {
        if let Some(&n) = self.memo.get(&id) {
            return n;
        }
        let ty = self.old.ty(id);
        let e = match self.old.get(id).clone() {
            Expr::Value(v) => match self.subst.get(&v) {
                Some(&n) => {
                    self.memo.insert(id, n);
                    return n;
                }
                None => Expr::Value(v),
            },
            Expr::Unary(op, a) => Expr::Unary(op, self.expr(a)),
            Expr::Binary(op, a, b) => Expr::Binary(op, self.expr(a), self.expr(b)),
            Expr::Select(c, a, b) => Expr::Select(self.expr(c), self.expr(a), self.expr(b)),
            Expr::Cast(a, s) => Expr::Cast(self.expr(a), s),
            Expr::Bitcast(a, t) => Expr::Bitcast(self.expr(a), t),
            Expr::Math(m, args) => Expr::Math(m, args.iter().map(|&a| self.expr(a)).collect()),
            Expr::Splat(a, w) => Expr::Splat(self.expr(a), w),
            Expr::Compose(p) => Expr::Compose(p.iter().map(|&a| self.expr(a)).collect()),
            Expr::Stub(n, p) => Expr::Stub(n, p.iter().map(|&a| self.expr(a)).collect()),
            Expr::Extract(a, i) => Expr::Extract(self.expr(a), i),
            e @ (Expr::Literal(_) | Expr::Param(_) | Expr::BufferLen(_) | Expr::Builtin(_)) => e,
        };
        let n = if self.lower {
            self.lower_expr(e, ty)
        } else if self.fold {
            self.fold_expr(e, ty)
        } else {
            self.new.intern(e, ty)
        };
        self.memo.insert(id, n);
        n
    }

    /// Folds `e` (whose operands are already in the new arena) if it is constant or an identity.
    fn fold_expr(&mut self, e: Expr, ty: Type) -> ExprId {
        let lit = |r: &Self, id: ExprId| r.new.literal(id);
        match &e {
            Expr::Unary(op, a) => {
                if let Some(l) = lit(self, *a) {
                    return self.lit(eval::fold_unary(*op, l));
                }
            }
            Expr::Binary(op, a, b) => {
                let (la, lb) = (lit(self, *a), lit(self, *b));
                if let (Some(x), Some(y)) = (la, lb) {
                    if let Some(r) = eval::fold_binary(*op, x, y) {
                        return self.lit(r);
                    }
                }
                if let Some(id) = self.identity(*op, *a, *b, la, lb, ty) {
                    return id;
                }
            }
            Expr::Select(c, a, b) => {
                if let Some(l) = lit(self, *c) {
                    return if l.bits != 0 { *a } else { *b };
                }
                if a == b {
                    return *a;
                }
            }
            Expr::Cast(a, s) => {
                if let Some(l) = lit(self, *a) {
                    return self.lit(eval::fold_cast(l, *s));
                }
                if self.new.ty(*a).scalar == *s {
                    return *a;
                }
                // `f16` widened and rounded back (what `lower_f16` leaves between operations).
                if let Expr::Cast(x, Scalar::F32) = *self.new.get(*a) {
                    if *s == Scalar::F16 && self.new.ty(x).scalar == Scalar::F16 {
                        return x;
                    }
                }
            }
            Expr::Bitcast(a, t) if t.width == 1 => {
                // Same size (validated): the literal's bits, as the other type. (Also keeps
                // `as_int(65535.0f)` out of NVIDIA's OpenCL C compiler, which stored 0 for it
                // in one large difftest kernel, 2026-11-22.)
                if let Some(l) = lit(self, *a) {
                    return self.lit(Literal::from_bits(t.scalar, l.bits));
                }
            }
            Expr::Math(m, args)
                if ty.width == 1 && !matches!(m.kind(), MathKind::Reduce | MathKind::Geometric) =>
            {
                let lits: Option<Vec<Literal>> = args.iter().map(|&a| lit(self, a)).collect();
                if let Some(ls) = lits {
                    return self.lit(eval::fold_math(*m, &ls));
                }
            }
            Expr::Extract(v, i) => match self.new.get(*v).clone() {
                Expr::Compose(parts) => return parts[*i as usize],
                Expr::Splat(s, _) => return s,
                _ => {}
            },
            _ => {}
        }
        self.new.intern(e, ty)
    }

    /// A literal of `ty`'s shape (splat over a vector).
    fn lit_as(&mut self, l: Literal, width: u8) -> ExprId {
        let x = self.lit(l);
        if width == 1 {
            x
        } else {
            self.new
                .intern(Expr::Splat(x, width), Type::vector(l.scalar, width))
        }
    }

    fn op(&mut self, op: BinaryOp, a: ExprId, b: ExprId) -> ExprId {
        let t = self.new.ty(a);
        let t = if op.is_comparison() {
            t.with_scalar(Scalar::Bool)
        } else {
            t
        };
        self.new.intern(Expr::Binary(op, a, b), t)
    }

    fn convert(&mut self, a: ExprId, to: Scalar) -> ExprId {
        let t = self.new.ty(a).with_scalar(to);
        self.new.intern(Expr::Cast(a, to), t)
    }

    fn bits_as(&mut self, a: ExprId, to: Scalar) -> ExprId {
        let t = self.new.ty(a).with_scalar(to);
        self.new.intern(Expr::Bitcast(a, t), t)
    }

    fn select(&mut self, c: ExprId, a: ExprId, b: ExprId) -> ExprId {
        let t = self.new.ty(a);
        self.new.intern(Expr::Select(c, a, b), t)
    }

    /// `e` (operands already rewritten) with its `f16` operations as `f32` operations between
    /// conversions; the rules are in the IR's module docs.
    fn lower_expr(&mut self, e: Expr, ty: Type) -> ExprId {
        use Scalar::{F16, F32, F64};
        let is_half = |r: &Self, a: ExprId| r.new.ty(a).scalar == F16;
        match e {
            Expr::Unary(UnaryOp::Neg, a) if is_half(self, a) => {
                let w = self.convert(a, F32);
                let n = self
                    .new
                    .intern(Expr::Unary(UnaryOp::Neg, w), ty.with_scalar(F32));
                self.convert(n, F16)
            }
            Expr::Binary(op, a, b) if is_half(self, a) => {
                let (wa, wb) = (self.convert(a, F32), self.convert(b, F32));
                let r = self.op(op, wa, wb);
                if op.is_comparison() {
                    r
                } else {
                    self.convert(r, F16)
                }
            }
            // Conversions between f16 and the integers and bool go through f32, exactly: an
            // f16 is exact in f32, and an integer that f32 rounds is beyond 2^24, where f16 is
            // infinite however it was rounded.
            Expr::Cast(a, to) if is_half(self, a) && !matches!(to, F16 | F32 | F64) => {
                let w = self.convert(a, F32);
                self.convert(w, to)
            }
            Expr::Cast(a, F16) if !matches!(self.new.ty(a).scalar, F16 | F32 | F64) => {
                let w = self.convert(a, F32);
                self.convert(w, F16)
            }
            Expr::Math(m, args) if is_half(self, args[0]) => self.lower_math(m, &args, ty),
            e => self.new.intern(e, ty),
        }
    }

    fn lower_math(&mut self, m: MathFn, args: &[ExprId], ty: Type) -> ExprId {
        use Scalar::{F16, F32, U16, U32};
        let w = ty.width;
        let f32_lit = |v: f32| Literal::from_bits(F32, v.to_bits() as u64);
        let wide: Vec<ExprId> = args
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                if m.arg_scalar(i, F16) == F16 {
                    self.convert(a, F32)
                } else {
                    a
                }
            })
            .collect();
        match m {
            // Rounded to odd in f32, then to f16: correct (Boldo and Melquiond, 2008: f32 has
            // more than 11 + 2 bits). `a * b` is exact in f32 and `s + e == a * b + c` exactly
            // (TwoSum); when `e != 0` and `s` is even, `s` moves one step towards `e`.
            MathFn::Fma => {
                let (a, b, c) = (wide[0], wide[1], wide[2]);
                let p = self.op(BinaryOp::Mul, a, b);
                let s = self.op(BinaryOp::Add, p, c);
                let bb = self.op(BinaryOp::Sub, s, p);
                let sb = self.op(BinaryOp::Sub, s, bb);
                let e1 = self.op(BinaryOp::Sub, p, sb);
                let e2 = self.op(BinaryOp::Sub, c, bb);
                let e = self.op(BinaryOp::Add, e1, e2);
                let zero = self.lit_as(f32_lit(0.0), w);
                let ae = self
                    .new
                    .intern(Expr::Math(MathFn::Abs, vec![e]), ty.with_scalar(F32));
                // NaN and infinity (a NaN error term) stay as they are.
                let inexact = self.op(BinaryOp::Gt, ae, zero);
                let bits = self.bits_as(s, U32);
                let one = self.lit_as(Literal::from_bits(U32, 1), w);
                let low = self.op(BinaryOp::And, bits, one);
                let zero_u = self.lit_as(Literal::from_bits(U32, 0), w);
                let even = self.op(BinaryOp::Eq, low, zero_u);
                let fix = self.op(BinaryOp::And, inexact, even);
                let s_neg = self.op(BinaryOp::Lt, s, zero);
                let e_neg = self.op(BinaryOp::Lt, e, zero);
                let outward = self.op(BinaryOp::Eq, s_neg, e_neg);
                let minus_one = self.lit_as(Literal::from_bits(U32, u32::MAX as u64), w);
                let step = self.select(outward, one, minus_one);
                let moved = self.op(BinaryOp::Add, bits, step);
                let odd = self.select(fix, moved, bits);
                let r = self.bits_as(odd, F32);
                self.convert(r, F16)
            }
            MathFn::Nextafter => {
                let (x, y) = (args[0], args[1]);
                let (wx, wy) = (wide[0], wide[1]);
                let nx = self.op(BinaryOp::Ne, wx, wx);
                let ny = self.op(BinaryOp::Ne, wy, wy);
                let nan = self.op(BinaryOp::Or, nx, ny);
                let sum = self.op(BinaryOp::Add, wx, wy);
                let sum = self.convert(sum, F16);
                let eq = self.op(BinaryOp::Eq, wx, wy);
                let zero = self.lit_as(f32_lit(0.0), w);
                let x_zero = self.op(BinaryOp::Eq, wx, zero);
                let up = self.op(BinaryOp::Gt, wy, wx);
                let pos = self.op(BinaryOp::Gt, wx, zero);
                let away = self.op(BinaryOp::Eq, up, pos);
                let bx = self.bits_as(x, U16);
                let one = self.lit_as(Literal::from_bits(U16, 1), w);
                let inc = self.op(BinaryOp::Add, bx, one);
                let dec = self.op(BinaryOp::Sub, bx, one);
                let stepped = self.select(away, inc, dec);
                let stepped = self.bits_as(stepped, F16);
                let by = self.bits_as(y, U16);
                let sign = self.lit_as(Literal::from_bits(U16, 0x8000), w);
                let ys = self.op(BinaryOp::And, by, sign);
                let tiny = self.op(BinaryOp::Or, ys, one);
                let tiny = self.bits_as(tiny, F16);
                let r = self.select(x_zero, tiny, stepped);
                let r = self.select(eq, y, r);
                self.select(nan, sum, r)
            }
            MathFn::Fract => {
                let f = self
                    .new
                    .intern(Expr::Math(MathFn::Fract, wide), ty.with_scalar(F32));
                // The largest f16 below 1 (a NaN stays).
                let below = self.lit_as(f32_lit(1.0 - 1.0 / 2048.0), w);
                let over = self.op(BinaryOp::Gt, f, below);
                let r = self.select(over, below, f);
                self.convert(r, F16)
            }
            _ => {
                let rs = m.result_scalar(F32);
                let r = self.new.intern(Expr::Math(m, wide), ty.with_scalar(rs));
                if rs == F32 {
                    self.convert(r, F16)
                } else {
                    r
                }
            }
        }
    }

    /// Algebraic identities that hold bit for bit (`x * 1.0` keeps NaN and `-0.0`; `x + 0` is
    /// only an identity for integers).
    fn identity(
        &mut self,
        op: BinaryOp,
        a: ExprId,
        b: ExprId,
        la: Option<Literal>,
        lb: Option<Literal>,
        ty: Type,
    ) -> Option<ExprId> {
        let is = |l: Option<Literal>, v: f64| {
            l.is_some_and(|l| {
                l.scalar.is_numeric() && l.as_f64() == v && !(l.scalar.is_float() && v == 0.0)
            })
        };
        let int = ty.scalar.is_int();
        match op {
            BinaryOp::Add if int && is(lb, 0.0) => Some(a),
            BinaryOp::Add if int && is(la, 0.0) => Some(b),
            BinaryOp::Sub if int && is(lb, 0.0) => Some(a),
            BinaryOp::Mul if is(lb, 1.0) => Some(a),
            BinaryOp::Mul if is(la, 1.0) => Some(b),
            BinaryOp::Mul if int && (is(lb, 0.0) || is(la, 0.0)) => {
                Some(self.lit(Literal::from_bits(ty.scalar, 0)))
            }
            BinaryOp::Div if is(lb, 1.0) => Some(a),
            BinaryOp::Shl | BinaryOp::Shr | BinaryOp::Or | BinaryOp::Xor if int && is(lb, 0.0) => {
                Some(a)
            }
            _ => None,
        }
    }
}

/// Rewrites every statement's expressions with `r`; `stmt_hook` may replace a statement by a
/// list of statements (after its expressions have been rewritten).
fn rebuild_block(
    block: &Block,
    r: &mut Rebuilder,
    hook: &mut dyn FnMut(Stmt, &mut Rebuilder, &mut Block),
) -> Block {
    let mut out = Vec::with_capacity(block.len());
    for s in block {
        let s = match s {
            Stmt::Let { value, expr } => Stmt::Let {
                value: *value,
                expr: r.expr(*expr),
            },
            Stmt::Load {
                value,
                mem,
                index,
                at,
            } => Stmt::Load {
                value: *value,
                mem: *mem,
                index: r.expr(*index),
                at: *at,
            },
            Stmt::AtomicLoad {
                value,
                mem,
                index,
                order,
                at,
            } => Stmt::AtomicLoad {
                value: *value,
                mem: *mem,
                index: r.expr(*index),
                order: *order,
                at: *at,
            },
            Stmt::Store {
                mem,
                index,
                value,
                at,
            } => Stmt::Store {
                mem: *mem,
                index: r.expr(*index),
                value: r.expr(*value),
                at: *at,
            },
            Stmt::Atomic {
                result,
                mem,
                index,
                op,
                operand,
                compare,
                order,
                at,
            } => Stmt::Atomic {
                result: *result,
                mem: *mem,
                index: r.expr(*index),
                op: *op,
                order: *order,
                operand: r.expr(*operand),
                compare: compare.map(|c| r.expr(c)),
                at: *at,
            },
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let cond = r.expr(*cond);
                let then = rebuild_block(then, r, hook);
                let otherwise = rebuild_block(otherwise, r, hook);
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                }
            }
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => {
                let (start, end, step) = (r.expr(*start), r.expr(*end), r.expr(*step));
                let body = rebuild_block(body, r, hook);
                Stmt::For {
                    id: *id,
                    var: *var,
                    start,
                    end,
                    step,
                    body,
                }
            }
            Stmt::Loop { id, body } => Stmt::Loop {
                id: *id,
                body: rebuild_block(body, r, hook),
            },
            Stmt::Group {
                value,
                op,
                scope,
                arg,
                source,
            } => Stmt::Group {
                value: *value,
                op: *op,
                scope: *scope,
                arg: r.expr(*arg),
                source: source.map(|s| r.expr(s)),
            },
            s @ (Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::Return
            | Stmt::Barrier(_)
            | Stmt::MemFence { .. }) => s.clone(),
        };
        hook(s, r, &mut out);
    }
    out
}

fn with_body(
    f: Function,
    fold: bool,
    hook: &mut dyn FnMut(Stmt, &mut Rebuilder, &mut Block),
) -> Function {
    let mut r = Rebuilder::new(&f.exprs, fold);
    let body = rebuild_block(&f.body, &mut r, hook);
    let exprs = r.new;
    Function { exprs, body, ..f }
}

/// Replaces constant expressions by their values (computed by [`eval`], the evaluator the CPU
/// backend runs), applies exact algebraic identities, and removes branches and loops whose
/// condition is constant.
pub fn fold_constants(f: Function) -> Function {
    with_body(f, true, &mut |s, r, out| match s {
        Stmt::If {
            cond,
            then,
            otherwise,
        } => match r.new.literal(cond) {
            Some(l) if l.bits != 0 => out.extend(then),
            Some(_) => out.extend(otherwise),
            None => out.push(Stmt::If {
                cond,
                then,
                otherwise,
            }),
        },
        Stmt::For {
            start, end, step, ..
        } if matches!((r.new.literal(start), r.new.literal(end), r.new.literal(step)),
                (Some(a), Some(b), Some(s)) if trip_count(a, b, s) == Some(0)) => {}
        s => out.push(s),
    })
}

/// Rewrites every `f16` operation as `f32` operations between conversions, so that backends
/// only convert, load, store and select `f16` values: `+ - * / %`, negation and comparisons
/// on the widened operands (each result rounded back: exact, see the IR's module docs),
/// conversions between `f16` and non-float types through `f32`, `fma` rounded to odd in `f32`,
/// `nextafter` on the bits, `fract` clamped below 1, and the other built-ins as the `f32`
/// built-in rounded. Run by [`optimize`]; the evaluator's direct `f16` operations are the
/// definition this pass is tested against (`tests/half.rs`).
pub fn lower_f16(f: Function) -> Function {
    if !f.exprs.iter().any(|(_, _, t)| t.scalar == Scalar::F16) {
        return f;
    }
    let mut r = Rebuilder::new(&f.exprs, false);
    r.lower = true;
    let body = rebuild_block(&f.body, &mut r, &mut |s, _, out| out.push(s));
    let exprs = r.new;
    Function { exprs, body, ..f }
}

/// Number of iterations of a `for` loop with constant bounds.
pub fn trip_count(start: Literal, end: Literal, step: Literal) -> Option<u64> {
    let (a, b, s) = (start.as_i128(), end.as_i128(), step.as_i128());
    if s == 0 {
        return None;
    }
    let trips = if s > 0 {
        if a >= b {
            0
        } else {
            (b - a + s - 1) / s
        }
    } else if a <= b {
        0
    } else {
        (a - b + (-s) - 1) / (-s)
    };
    // Wrapping counters could run past the bound; only count loops whose counter stays in range.
    let last = a + (trips - 1).max(0) * s;
    let bits = start.scalar.bits();
    let (lo, hi) = if start.scalar.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    (last + s >= lo && last + s <= hi || trips == 0).then_some(trips as u64)
}

fn block_ends(s: &Stmt) -> bool {
    matches!(s, Stmt::Return | Stmt::Break(_) | Stmt::Continue(_))
}

fn used_values(f: &Function) -> HashSet<ValueId> {
    let mut used = HashSet::new();
    walk_exprs(&f.exprs, &f.body, &mut |e| {
        if let Expr::Value(v) = e {
            used.insert(*v);
        }
    });
    used
}

/// What [`prune`] reads besides the block: the values used, and which conditions may be
/// evaluated once for two `if`s ([`repeatable`]).
struct Prune<'a> {
    used: &'a HashSet<ValueId>,
    exprs: &'a ExprArena,
}

/// Whether evaluating `e` once gives what evaluating it again later in the same work-item
/// gives: no call of a stub (whose CPU body may have effects). Everything else an expression
/// reads is immutable (a statement's value, an argument, an id), and where its evaluation
/// faults, it faults the first time.
fn repeatable(exprs: &ExprArena, e: ExprId) -> bool {
    all_exprs(exprs, e, |x| !matches!(x, Expr::Stub(..)))
}

fn prune(block: Block, p: &Prune, changed: &mut bool) -> Block {
    let used = p.used;
    let mut out: Vec<Stmt> = Vec::with_capacity(block.len());
    for s in block {
        let ends = block_ends(&s);
        match s {
            Stmt::Let { value, .. } if !used.contains(&value) => *changed = true,
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let then = prune(then, p, changed);
                let otherwise = prune(otherwise, p, changed);
                // After an `if` on the same condition (the stub test only there).
                let after_same = matches!(out.last(), Some(Stmt::If { cond: c, .. }) if *c == cond);
                let after_same = after_same && repeatable(p.exprs, cond);
                if then.is_empty() && otherwise.is_empty() {
                    *changed = true;
                } else if let (
                    true,
                    Some(Stmt::If {
                        then: t0,
                        otherwise: o0,
                        ..
                    }),
                ) = (after_same, out.last_mut())
                {
                    // `if c { a } else { b }` then `if c { x } else { y }`: one `if`, `if c {
                    // a; x } else { b; y }` (`c` is the same both times), so that what both
                    // sides compute is computed once (the field operators' guarded writes of
                    // one point, ROF's update). A side that ends in `return`, `break` or
                    // `continue` never reached the second.
                    for (to, from) in [(t0, then), (o0, otherwise)] {
                        if !to.last().is_some_and(block_ends) {
                            to.extend(from);
                        }
                    }
                    *changed = true;
                } else {
                    out.push(Stmt::If {
                        cond,
                        then,
                        otherwise,
                    });
                }
            }
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => {
                let body = prune(body, p, changed);
                out.push(Stmt::For {
                    id,
                    var,
                    start,
                    end,
                    step,
                    body,
                });
            }
            Stmt::Loop { id, body } => out.push(Stmt::Loop {
                id,
                body: prune(body, p, changed),
            }),
            Stmt::Atomic {
                result: Some(r),
                mem,
                index,
                op,
                operand,
                compare,
                order,
                at,
            } if !used.contains(&r) => {
                *changed = true;
                out.push(Stmt::Atomic {
                    result: None,
                    mem,
                    index,
                    op,
                    order,
                    operand,
                    compare,
                    at,
                });
            }
            s => out.push(s),
        }
        if ends {
            break;
        }
    }
    out
}

/// Removes `let`s whose value is never used, statements after `return`, `break` or
/// `continue`, and `if`s with two empty branches, merges adjacent `if`s on one condition
/// (`if c { a } else { b }` then `if c { x } else { y }` becomes `if c { a; x } else { b; y
/// }`, unless `c` calls a stub), then compacts the expression arena. Loads are
/// kept even when unused, so that the CPU backend still reports their out-of-bounds accesses.
pub fn eliminate_dead_code(mut f: Function) -> Function {
    loop {
        let used = used_values(&f);
        let mut changed = false;
        let body = std::mem::take(&mut f.body);
        let p = Prune {
            used: &used,
            exprs: &f.exprs,
        };
        f.body = prune(body, &p, &mut changed);
        if !changed {
            break;
        }
    }
    with_body(f, false, &mut |s, _, out| out.push(s))
}

fn count_stmts(b: &Block) -> usize {
    let mut n = 0;
    walk_block(b, &mut |_| n += 1);
    n
}

fn targets(b: &Block, id: LoopId) -> bool {
    let mut found = false;
    walk_block(b, &mut |s| {
        if matches!(s, Stmt::Break(l) | Stmt::Continue(l) if *l == id) {
            found = true;
        }
    });
    found
}

/// Unrolls `for` loops whose start, end and step are literals, that run at most
/// `unroll_max_trips` times, grow to at most `unroll_max_stmts` statements, and contain no
/// `break` or `continue` of their own. Each copy of the body gets fresh values and loop ids, and
/// the counter becomes a literal.
pub fn unroll_loops(f: Function, opts: &PassOptions) -> Function {
    // Fold first, so that bounds computed from literals are literals.
    let mut f = fold_constants(f);
    let old = std::mem::take(&mut f.exprs);
    let body = std::mem::take(&mut f.body);
    let mut r = Rebuilder::new(&old, false);
    let body = unroll_block(&body, &mut f, &mut r, opts, false);
    f.exprs = r.new;
    f.body = body;
    f
}

/// Copies `block` (old arena) into the new arena, unrolling what can be unrolled. With `fresh`,
/// every value and loop defined in the block gets a new id (the block is one copy of an
/// unrolled body).
fn unroll_block(
    block: &Block,
    f: &mut Function,
    r: &mut Rebuilder,
    opts: &PassOptions,
    fresh: bool,
) -> Block {
    let define = |v: ValueId, f: &mut Function, r: &mut Rebuilder| {
        if !fresh {
            return v;
        }
        let d = f.values[v].clone();
        let n = f.new_value(d.ty, d.name);
        let e = r.new.intern(Expr::Value(n), d.ty);
        r.subst.insert(v, e);
        n
    };
    let new_loop = |id: LoopId, f: &mut Function| {
        if !fresh {
            return id;
        }
        f.loop_count += 1;
        LoopId::from_raw(f.loop_count - 1)
    };
    let mut out = Vec::with_capacity(block.len());
    for s in block {
        match s {
            Stmt::Let { value, expr } => {
                let expr = r.expr(*expr);
                out.push(Stmt::Let {
                    value: define(*value, f, r),
                    expr,
                });
            }
            Stmt::Load {
                value,
                mem,
                index,
                at,
            } => {
                let index = r.expr(*index);
                out.push(Stmt::Load {
                    value: define(*value, f, r),
                    mem: *mem,
                    index,
                    at: *at,
                });
            }
            Stmt::AtomicLoad {
                value,
                mem,
                index,
                order,
                at,
            } => {
                let index = r.expr(*index);
                out.push(Stmt::AtomicLoad {
                    value: define(*value, f, r),
                    mem: *mem,
                    index,
                    order: *order,
                    at: *at,
                });
            }
            Stmt::Store {
                mem,
                index,
                value,
                at,
            } => out.push(Stmt::Store {
                mem: *mem,
                index: r.expr(*index),
                value: r.expr(*value),
                at: *at,
            }),
            Stmt::Atomic {
                result,
                mem,
                index,
                op,
                operand,
                compare,
                order,
                at,
            } => {
                let (index, operand, compare) =
                    (r.expr(*index), r.expr(*operand), compare.map(|c| r.expr(c)));
                let result = result.map(|v| define(v, f, r));
                out.push(Stmt::Atomic {
                    result,
                    mem: *mem,
                    index,
                    op: *op,
                    order: *order,
                    operand,
                    compare,
                    at: *at,
                });
            }
            Stmt::Group {
                value,
                op,
                scope,
                arg,
                source,
            } => {
                let (arg, source) = (r.expr(*arg), source.map(|x| r.expr(x)));
                out.push(Stmt::Group {
                    value: define(*value, f, r),
                    op: *op,
                    scope: *scope,
                    arg,
                    source,
                });
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let cond = r.expr(*cond);
                let then = unroll_block(then, f, r, opts, fresh);
                let otherwise = unroll_block(otherwise, f, r, opts, fresh);
                out.push(Stmt::If {
                    cond,
                    then,
                    otherwise,
                });
            }
            Stmt::Loop { id, body } => {
                let nid = new_loop(*id, f);
                let body = relabel(unroll_block(body, f, r, opts, fresh), *id, nid);
                out.push(Stmt::Loop { id: nid, body });
            }
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => {
                let lits = (
                    r.old.literal(*start),
                    r.old.literal(*end),
                    r.old.literal(*step),
                );
                let trips = match lits {
                    (Some(a), Some(b), Some(st)) => trip_count(a, b, st),
                    _ => None,
                };
                match (trips, lits) {
                    (Some(n), (Some(a), _, Some(st)))
                        if n <= opts.unroll_max_trips
                            && (n as usize) * count_stmts(body).max(1) <= opts.unroll_max_stmts
                            && !targets(body, *id) =>
                    {
                        for k in 0..n as i128 {
                            let v = Literal::from_bits(
                                a.scalar,
                                (a.as_i128() + k * st.as_i128()) as u64,
                            );
                            let e = r.new.intern(Expr::Literal(v), Type::scalar(v.scalar));
                            // Expressions that depend on the counter or on values of the
                            // previous copy must be rebuilt for this copy.
                            r.memo.clear();
                            r.subst.insert(*var, e);
                            let copy = unroll_block(body, f, r, opts, true);
                            out.extend(copy);
                        }
                        r.subst.remove(var);
                        r.memo.clear();
                    }
                    _ => {
                        let (start, end, step) = (r.expr(*start), r.expr(*end), r.expr(*step));
                        let var = define(*var, f, r);
                        let nid = new_loop(*id, f);
                        let body = relabel(unroll_block(body, f, r, opts, fresh), *id, nid);
                        out.push(Stmt::For {
                            id: nid,
                            var,
                            start,
                            end,
                            step,
                            body,
                        });
                    }
                }
            }
            s @ (Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::Return
            | Stmt::Barrier(_)
            | Stmt::MemFence { .. }) => out.push(s.clone()),
        }
    }
    out
}

fn relabel(block: Block, from: LoopId, to: LoopId) -> Block {
    if from == to {
        return block;
    }
    block
        .into_iter()
        .map(|s| match s {
            Stmt::Break(l) if l == from => Stmt::Break(to),
            Stmt::Continue(l) if l == from => Stmt::Continue(to),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => Stmt::If {
                cond,
                then: relabel(then, from, to),
                otherwise: relabel(otherwise, from, to),
            },
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body: relabel(body, from, to),
            },
            Stmt::Loop { id, body } => Stmt::Loop {
                id,
                body: relabel(body, from, to),
            },
            s => s,
        })
        .collect()
}

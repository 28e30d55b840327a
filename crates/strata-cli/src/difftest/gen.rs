//! The generator: one kernel built from many random programs ([`build`]), each program a block
//! of statements (loads, private variables, nested control flow, local memory, atomics,
//! collectives) writing its own output slots. Expressions are generated in [`expr`].

mod expr;

use super::{lit, random_literal, Check, Layout, Options, Slot, GLOBAL_SIZE, INPUT_LEN, INTS};
use crate::conformance::Rng;
use strata::ir::{
    Access, ArrayLen, AtomicOp, AtomicOrder, BinaryOp, Builtin, Expr, ExprId, Fence, Function,
    GroupOp, GroupScope, LocalDecl, LocalId, LoopId, MathFn, Mem, MemOrder, MemScope, Param,
    ParamId, ParamKind, PrivateDecl, PrivateId, Scalar, Stmt, Type, ValueId,
};

const APPROX1: [MathFn; 32] = [
    MathFn::Cbrt,
    MathFn::Exp,
    MathFn::Exp2,
    MathFn::Exp10,
    MathFn::Expm1,
    MathFn::Log,
    MathFn::Log2,
    MathFn::Log10,
    MathFn::Log1p,
    MathFn::Sin,
    MathFn::Cos,
    MathFn::Tan,
    MathFn::Asin,
    MathFn::Acos,
    MathFn::Atan,
    MathFn::Sinh,
    MathFn::Cosh,
    MathFn::Tanh,
    MathFn::Asinh,
    MathFn::Acosh,
    MathFn::Atanh,
    MathFn::Degrees,
    MathFn::Erf,
    MathFn::Erfc,
    MathFn::Tgamma,
    MathFn::Lgamma,
    MathFn::Sinpi,
    MathFn::Cospi,
    MathFn::Tanpi,
    MathFn::Asinpi,
    MathFn::Acospi,
    MathFn::Atanpi,
];
const APPROX2: [MathFn; 5] = [
    MathFn::Pow,
    MathFn::Atan2,
    MathFn::Hypot,
    MathFn::Atan2pi,
    MathFn::Powr,
];
/// Rounded built-ins of a float and an `i32`.
const APPROX_INT: [MathFn; 2] = [MathFn::Pown, MathFn::Rootn];

/// Builds one kernel from the programs with seeds `seeds`.
pub(super) fn build(seeds: &[u64], opts: &Options, name: &str) -> (Function, Layout) {
    let mut types = vec![
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::F32,
    ];
    if opts.f64 {
        types.push(Scalar::F64);
    }
    let atom_types: Vec<Scalar> = if opts.int64_atomics {
        INTS.to_vec()
    } else {
        vec![Scalar::I32, Scalar::U32]
    };
    let mut f = Function::new(name);
    for &t in &types {
        f.params.push(Param {
            name: format!("in_{t}"),
            kind: ParamKind::Buffer {
                elem: strata::ir::Elem::Value(Type::scalar(t)),
                access: Access::Read,
                len: Some(INPUT_LEN as u64),
            },
        });
        f.params.push(Param {
            name: format!("k_{t}"),
            kind: ParamKind::Scalar(Type::scalar(t)),
        });
    }
    for &t in &types {
        f.params.push(Param {
            name: format!("out_{t}"),
            kind: ParamKind::Buffer {
                elem: strata::ir::Elem::Value(Type::scalar(t)),
                access: Access::Write,
                len: None,
            },
        });
    }
    for &t in &atom_types {
        f.params.push(Param {
            name: format!("atom_{t}"),
            kind: ParamKind::Buffer {
                elem: strata::ir::Elem::Value(Type::scalar(t)),
                access: Access::ReadWrite,
                len: None,
            },
        });
    }
    let mut layout = Layout {
        outs: vec![Vec::new(); types.len()],
        atoms: vec![Vec::new(); atom_types.len()],
        types,
        atom_types,
    };
    let mut body = Vec::new();
    for (p, &seed) in seeds.iter().enumerate() {
        let mut g = Gen {
            f: &mut f,
            layout: &mut layout,
            r: Rng::new(seed),
            program: p,
            opts,
            blocks: vec![Vec::new()],
            scopes: vec![Vec::new()],
            loops: Vec::new(),
            privates: Vec::new(),
            group_ops: false,
        };
        g.program();
        body.extend(g.blocks.pop().unwrap());
    }
    f.body = body;
    (f, layout)
}

/// A private variable or array of the program being generated.
#[derive(Clone, Copy)]
struct Private {
    index: PrivateId,
    ty: Scalar,
    len: Option<u32>,
}

/// The generator of one program.
struct Gen<'a> {
    f: &'a mut Function,
    layout: &'a mut Layout,
    r: Rng,
    program: usize,
    opts: &'a Options,
    /// Blocks being filled; statements go into the last one.
    blocks: Vec<Vec<Stmt>>,
    /// Values in scope, per block: expression and type.
    scopes: Vec<Vec<(ExprId, Scalar)>>,
    /// Enclosing loops, innermost last.
    loops: Vec<LoopId>,
    /// The program's private variables.
    privates: Vec<Private>,
    /// Whether the program may use barriers and collectives (only some do: they make OpenCL
    /// compilers slow).
    group_ops: bool,
}

impl Gen<'_> {
    // ----- expression helpers -----

    fn intern(&mut self, e: Expr, s: Scalar) -> ExprId {
        self.f.exprs.intern(e, Type::scalar(s))
    }
    fn lit(&mut self, s: Scalar, bits: u64) -> ExprId {
        self.intern(Expr::Literal(lit(s, bits)), s)
    }
    fn u32(&mut self, v: u32) -> ExprId {
        self.lit(Scalar::U32, v as u64)
    }
    fn bin(&mut self, op: BinaryOp, a: ExprId, b: ExprId) -> ExprId {
        let s = if op.is_comparison() {
            Scalar::Bool
        } else {
            self.ty(a)
        };
        self.intern(Expr::Binary(op, a, b), s)
    }
    fn math(&mut self, m: MathFn, args: Vec<ExprId>) -> ExprId {
        let s = m.result_scalar(self.ty(args[0]));
        self.intern(Expr::Math(m, args), s)
    }
    /// An `i32` in -64..64 from a random expression: the exponent of `pown`, `rootn`, `ldexp`.
    fn small_int(&mut self) -> ExprId {
        let x = self.expr(Scalar::I32, 2);
        let m = self.lit(Scalar::I32, 127);
        let x = self.bin(BinaryOp::And, x, m);
        let off = self.lit(Scalar::I32, 64);
        self.bin(BinaryOp::Sub, x, off)
    }
    fn cast(&mut self, a: ExprId, to: Scalar) -> ExprId {
        if self.ty(a) == to {
            return a;
        }
        self.intern(Expr::Cast(a, to), to)
    }
    fn select(&mut self, c: ExprId, a: ExprId, b: ExprId) -> ExprId {
        let s = self.ty(a);
        self.intern(Expr::Select(c, a, b), s)
    }
    fn builtin(&mut self, b: Builtin) -> ExprId {
        self.intern(Expr::Builtin(b), Scalar::U32)
    }
    fn ty(&self, e: ExprId) -> Scalar {
        self.f.exprs.ty(e).scalar
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.r.below(v.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.r.below(100) < percent
    }
    fn float_types(&self) -> Vec<Scalar> {
        if self.opts.f64 {
            vec![Scalar::F32, Scalar::F64]
        } else {
            vec![Scalar::F32]
        }
    }
    fn base_types(&self) -> Vec<Scalar> {
        let mut v = INTS.to_vec();
        v.extend(self.float_types());
        v
    }
    fn param_index(&self, name: &str) -> ParamId {
        self.f.params.position(|p| p.name == name).unwrap()
    }
    /// `x` with NaN replaced by 1 and `-0.0` by `+0.0` (`x + 0.0` changes nothing else), so
    /// neither a NaN's sign and payload nor the sign of a zero is observed: IEEE leaves the zero
    /// that `min(-0.0, +0.0)` returns open, and devices differ.
    fn no_nan(&mut self, x: ExprId) -> ExprId {
        let s = self.ty(x);
        let nan = self.math(MathFn::IsNan, vec![x]);
        let (one, zero) = match s {
            Scalar::F32 => (self.lit(s, 1f32.to_bits() as u64), self.lit(s, 0)),
            _ => (self.lit(s, 1f64.to_bits()), self.lit(s, 0)),
        };
        let x = self.select(nan, one, x);
        self.bin(BinaryOp::Add, x, zero)
    }

    // ----- statement helpers -----

    fn emit(&mut self, s: Stmt) {
        self.blocks.last_mut().unwrap().push(s);
    }
    fn bind(&mut self, v: ValueId, s: Scalar) -> ExprId {
        let e = self.intern(Expr::Value(v), s);
        self.scopes.last_mut().unwrap().push((e, s));
        e
    }
    /// `let v = e`, in scope from here on.
    fn let_(&mut self, e: ExprId) -> ExprId {
        let s = self.ty(e);
        let v = self.f.new_value(Type::scalar(s), None);
        self.emit(Stmt::Let { value: v, expr: e });
        self.bind(v, s)
    }
    fn load(&mut self, mem: Mem, index: ExprId, s: Scalar) -> ExprId {
        let v = self.f.new_value(Type::scalar(s), None);
        self.emit(Stmt::Load {
            value: v,
            mem,
            index,
            at: strata::ir::SourceLoc::NONE,
        });
        self.bind(v, s)
    }
    /// Runs `body` in a new block and scope, returning the block.
    fn block(&mut self, body: impl FnOnce(&mut Self)) -> Vec<Stmt> {
        self.blocks.push(Vec::new());
        self.scopes.push(Vec::new());
        body(self);
        self.scopes.pop();
        self.blocks.pop().unwrap()
    }
    fn new_loop(&mut self) -> LoopId {
        self.f.loop_count += 1;
        LoopId::from_raw(self.f.loop_count - 1)
    }

    // ----- statements -----

    fn program(&mut self) {
        self.group_ops = self.chance(40);
        // Inputs: a few loads at masked indices.
        for _ in 0..self.r.int(2, 4) {
            let t = self.pick(&self.base_types());
            let p = self.param_index(&format!("in_{t}"));
            let gid = self.builtin(Builtin::GlobalId(0));
            let idx = match self.r.below(3) {
                0 => {
                    let n = self.u32(INPUT_LEN);
                    self.bin(BinaryOp::Rem, gid, n)
                }
                1 => {
                    let m = self.r.below(7) as u32 * 2 + 1;
                    let m = self.u32(m);
                    let c = self.r.below(INPUT_LEN as u64) as u32;
                    let c = self.u32(c);
                    let x = self.bin(BinaryOp::Mul, gid, m);
                    let x = self.bin(BinaryOp::Add, x, c);
                    let n = self.u32(INPUT_LEN);
                    self.bin(BinaryOp::Rem, x, n)
                }
                _ => self.index(INPUT_LEN),
            };
            self.load(Mem::Buffer(p), idx, t);
        }
        // Private variables (and sometimes an array), initialized.
        for _ in 0..self.r.int(1, 3) {
            let t = self.pick(&self.base_types());
            let len = self.chance(25).then_some(4);
            let index = PrivateId::new(self.f.privates.len());
            self.f.privates.push(PrivateDecl {
                name: format!("p{}_{index}", self.program),
                elem: Type::scalar(t),
                len,
            });
            for i in 0..len.unwrap_or(1) {
                let e = self.expr(t, 1);
                let i = self.u32(i);
                self.emit(Stmt::Store {
                    mem: Mem::Private(index),
                    index: i,
                    value: e,
                    at: strata::ir::SourceLoc::NONE,
                });
            }
            self.privates.push(Private { index, ty: t, len });
        }
        let n = self.r.int(2, 5);
        for _ in 0..n {
            self.stmt(0);
        }
        // Results: the private variables, then a few expressions.
        for p in self.privates.clone() {
            let i = if let Some(n) = p.len {
                self.index(n)
            } else {
                self.u32(0)
            };
            let v = self.load(Mem::Private(p.index), i, p.ty);
            self.output(v, Check::Exact);
        }
        for _ in 0..self.r.int(1, 3) {
            let t = self.pick(&self.base_types());
            if t.is_float() && self.chance(50) {
                let (m, args) = match self.r.below(8) {
                    0..=5 => {
                        let m = self.pick(&APPROX1);
                        (m, vec![self.expr(t, 2)])
                    }
                    6 => {
                        let m = self.pick(&APPROX2);
                        (m, vec![self.expr(t, 2), self.expr(t, 2)])
                    }
                    _ => {
                        let m = self.pick(&APPROX_INT);
                        (m, vec![self.expr(t, 2), self.small_int()])
                    }
                };
                // NaN arguments included: PoCL 3.1 returns 0 for `exp(x * NaN)` once LLVM can
                // prove the NaN; the OpenCL writer guards those built-ins
                // (`Dialect::nan_guarded`).
                let e = self.math(m, args);
                self.output(e, Check::Approx(m));
            } else {
                let e = self.expr(t, 3);
                self.output(e, Check::Exact);
            }
        }
    }

    /// Stores `e` into a new output slot of the program.
    fn output(&mut self, e: ExprId, check: Check) {
        let s = self.ty(e);
        let ti = self.layout.types.iter().position(|&t| t == s).unwrap();
        let slot = self.layout.outs[ti].len() as u32;
        self.layout.outs[ti].push(Slot {
            program: self.program,
            check,
        });
        let p = self.param_index(&format!("out_{s}"));
        let gid = self.builtin(Builtin::GlobalId(0));
        let base = self.u32(slot * GLOBAL_SIZE);
        let idx = self.bin(BinaryOp::Add, base, gid);
        self.emit(Stmt::Store {
            mem: Mem::Buffer(p),
            index: idx,
            value: e,
            at: strata::ir::SourceLoc::NONE,
        });
    }

    /// One statement at nesting depth `depth` (0: the program's top level, where barriers may
    /// be).
    fn stmt(&mut self, depth: u32) {
        let top = depth == 0 && self.group_ops;
        let nest = depth < 2;
        loop {
            match self.r.below(22) {
                0..=3 => {
                    let t = self.pick(&self.base_types());
                    let e = self.expr(t, 3);
                    self.let_(e);
                }
                4..=7 => self.update_private(),
                8..=10 if nest => self.if_(depth),
                11 | 12 if nest => self.for_(depth),
                13 if nest => self.endless(depth),
                14 if !self.loops.is_empty() => self.jump(),
                15 | 16 => self.global_atomic(),
                17 if top => self.exchange(),
                18 if top => self.local_atomic(),
                19 | 20 if top => self.collective(),
                21 => {
                    // Read a private variable into a value.
                    let p = self.pick(&self.privates.clone());
                    let i = match p.len {
                        Some(n) => self.index(n),
                        None => self.u32(0),
                    };
                    self.load(Mem::Private(p.index), i, p.ty);
                }
                _ => continue,
            }
            return;
        }
    }

    /// `p = f(p, ...)` for a private variable (or an element of a private array).
    fn update_private(&mut self) {
        let p = self.pick(&self.privates.clone());
        // A literal index: see the module docs on PoCL and private arrays.
        let i = match p.len {
            Some(n) => {
                let i = self.r.below(n as u64) as u32;
                self.u32(i)
            }
            None => self.u32(0),
        };
        let old = self.load(Mem::Private(p.index), i, p.ty);
        let e = self.expr(p.ty, 2);
        let op = if p.ty.is_float() {
            self.pick(&[BinaryOp::Add, BinaryOp::Mul, BinaryOp::Sub])
        } else {
            self.pick(&[BinaryOp::Add, BinaryOp::Xor, BinaryOp::Mul, BinaryOp::Sub])
        };
        let v = self.bin(op, old, e);
        let v = if self.chance(30) { e } else { v };
        self.emit(Stmt::Store {
            mem: Mem::Private(p.index),
            index: i,
            value: v,
            at: strata::ir::SourceLoc::NONE,
        });
    }

    fn sub_block(&mut self, depth: u32, lo: i64, hi: i64) -> Vec<Stmt> {
        let n = self.r.int(lo, hi);
        self.block(|g| {
            for _ in 0..n {
                g.stmt(depth + 1);
            }
        })
    }

    fn if_(&mut self, depth: u32) {
        let cond = self.expr(Scalar::Bool, 3);
        let then = self.sub_block(depth, 1, 3);
        let otherwise = if self.chance(60) {
            self.sub_block(depth, 1, 3)
        } else {
            Vec::new()
        };
        self.emit(Stmt::If {
            cond,
            then,
            otherwise,
        });
    }

    /// A counted loop: literal or data-dependent bounds, up or down.
    fn for_(&mut self, depth: u32) {
        let (s, start, end, step) = match self.r.below(4) {
            0 => {
                let s = Scalar::U32;
                let n = self.r.int(0, 5) as u64;
                (s, self.lit(s, 0), self.lit(s, n), self.lit(s, 1))
            }
            1 => {
                // Up to 7 iterations, depending on the data.
                let s = self.pick(&[Scalar::U32, Scalar::I32]);
                let x = self.expr(s, 2);
                let seven = self.lit(s, 7);
                let n = self.bin(BinaryOp::And, x, seven);
                let st = self.r.int(1, 2) as u64;
                let first = self.r.int(0, 1) as u64;
                (s, self.lit(s, first), n, self.lit(s, st))
            }
            2 => {
                // Down from a literal to a data-dependent bound in -2..=5.
                let s = Scalar::I32;
                let x = self.expr(s, 2);
                let seven = self.lit(s, 7);
                let x = self.bin(BinaryOp::And, x, seven);
                let two = self.lit(s, 2);
                let end = self.bin(BinaryOp::Sub, x, two);
                let st = self.pick(&[-1i64, -2, -3]) as u64;
                (s, self.lit(s, 6), end, self.lit(s, st))
            }
            _ => {
                let s = self.pick(&[Scalar::I64, Scalar::U64]);
                let n = self.r.int(1, 4) as u64;
                (s, self.lit(s, 0), self.lit(s, n), self.lit(s, 1))
            }
        };
        let id = self.new_loop();
        let var = self.f.new_value(Type::scalar(s), None);
        self.loops.push(id);
        let n = self.r.int(1, 3);
        let body = self.block(|g| {
            g.bind(var, s);
            for _ in 0..n {
                g.stmt(depth + 1);
            }
        });
        self.loops.pop();
        self.emit(Stmt::For {
            id,
            var,
            start,
            end,
            step,
            body,
        });
    }

    /// `loop { if c >= n { break } c += 1; ... }` with a private counter, written out with the
    /// other private variables.
    fn endless(&mut self, depth: u32) {
        let index = PrivateId::new(self.f.privates.len());
        self.f.privates.push(PrivateDecl {
            name: format!("c{}_{index}", self.program),
            elem: Type::U32,
            len: None,
        });
        let zero = self.u32(0);
        self.emit(Stmt::Store {
            mem: Mem::Private(index),
            index: zero,
            value: zero,
            at: strata::ir::SourceLoc::NONE,
        });
        let n = if self.chance(50) {
            let n = self.r.int(0, 5) as u32;
            self.u32(n)
        } else {
            let x = self.expr(Scalar::U32, 2);
            let m = self.u32(7);
            self.bin(BinaryOp::And, x, m)
        };
        let id = self.new_loop();
        self.loops.push(id);
        let k = self.r.int(1, 3);
        let body = self.block(|g| {
            let c = g.load(Mem::Private(index), zero, Scalar::U32);
            let done = g.bin(BinaryOp::Ge, c, n);
            g.emit(Stmt::If {
                cond: done,
                then: vec![Stmt::Break(id)],
                otherwise: Vec::new(),
            });
            let one = g.u32(1);
            let c1 = g.bin(BinaryOp::Add, c, one);
            g.emit(Stmt::Store {
                mem: Mem::Private(index),
                index: zero,
                value: c1,
                at: strata::ir::SourceLoc::NONE,
            });
            for _ in 0..k {
                g.stmt(depth + 1);
            }
        });
        self.loops.pop();
        self.emit(Stmt::Loop { id, body });
        // The count is a result (the `cpu` vector code keeps it as one scalar in the loop and
        // gives each lane its own as it leaves); later statements may store it. Stored at the
        // start of the kernel too, for work-items that never reach the loop.
        let zero0 = self.u32(0);
        self.blocks[0].insert(
            0,
            Stmt::Store {
                mem: Mem::Private(index),
                index: zero0,
                value: zero0,
                at: strata::ir::SourceLoc::NONE,
            },
        );
        self.privates.push(Private {
            index,
            ty: Scalar::U32,
            len: None,
        });
    }

    /// `if cond { break | continue }` of the innermost or an enclosing loop.
    fn jump(&mut self) {
        let id = if self.chance(75) {
            *self.loops.last().unwrap()
        } else {
            self.pick(&self.loops.clone())
        };
        let cond = self.expr(Scalar::Bool, 2);
        let j = if self.chance(50) {
            Stmt::Break(id)
        } else {
            Stmt::Continue(id)
        };
        self.emit(Stmt::If {
            cond,
            then: vec![j],
            otherwise: Vec::new(),
        });
    }

    fn atomic_slot(&mut self, s: Scalar) -> u32 {
        let ai = self.layout.atom_types.iter().position(|&t| t == s).unwrap();
        self.layout.atoms[ai].push(self.program);
        self.layout.atoms[ai].len() as u32 - 1
    }

    /// An atomic on a global counter shared by several work-items (order-independent
    /// operations, old value unused), or on the work-item's own element (old value used).
    fn global_atomic(&mut self) {
        let s = self.pick(&self.layout.atom_types.clone());
        let slot = self.atomic_slot(s);
        let p = self.param_index(&format!("atom_{s}"));
        let gid = self.builtin(Builtin::GlobalId(0));
        let base = self.u32(slot * GLOBAL_SIZE);
        let operand = self.expr(s, 3);
        if self.chance(60) {
            let m = self.pick(&[1u32, 2, 4, 64]);
            let m = self.u32(m);
            let lane = self.bin(BinaryOp::Rem, gid, m);
            let index = self.bin(BinaryOp::Add, base, lane);
            let op = self.pick(&[
                AtomicOp::Add,
                AtomicOp::Sub,
                AtomicOp::Min,
                AtomicOp::Max,
                AtomicOp::And,
                AtomicOp::Or,
                AtomicOp::Xor,
            ]);
            let order = self.atomic_order(false);
            self.emit(Stmt::Atomic {
                result: None,
                mem: Mem::Buffer(p),
                index,
                op,
                operand,
                compare: None,
                order,
                at: strata::ir::SourceLoc::NONE,
            });
        } else {
            let index = self.bin(BinaryOp::Add, base, gid);
            let op = self.pick(&[
                AtomicOp::Add,
                AtomicOp::Sub,
                AtomicOp::Min,
                AtomicOp::Max,
                AtomicOp::And,
                AtomicOp::Or,
                AtomicOp::Xor,
                AtomicOp::Exchange,
                AtomicOp::CompareExchange,
            ]);
            let compare = (op == AtomicOp::CompareExchange).then(|| self.expr(s, 1));
            let v = self.f.new_value(Type::scalar(s), None);
            let order = self.atomic_order(false);
            self.emit(Stmt::Atomic {
                result: Some(v),
                mem: Mem::Buffer(p),
                index,
                op,
                operand,
                compare,
                order,
                at: strata::ir::SourceLoc::NONE,
            });
            self.bind(v, s);
            if self.chance(40) {
                // The element's new value, read back atomically.
                let w = self.f.new_value(Type::scalar(s), None);
                let order = self.atomic_order(true);
                self.emit(Stmt::AtomicLoad {
                    value: w,
                    mem: Mem::Buffer(p),
                    index,
                    order,
                    at: strata::ir::SourceLoc::NONE,
                });
                self.bind(w, s);
            }
        }
    }

    /// The memory order of an atomic (of a load: relaxed, acquire or seq_cst), relaxed more
    /// often than not; sometimes a fence before it. Orders change no value a program computes
    /// (its atomics touch its own elements only), so they test the code the orders generate.
    fn atomic_order(&mut self, load: bool) -> AtomicOrder {
        let scope = self.pick(&[MemScope::WorkGroup, MemScope::Device]);
        if self.chance(15) {
            let order = self.pick(&[
                MemOrder::Acquire,
                MemOrder::Release,
                MemOrder::AcqRel,
                MemOrder::SeqCst,
            ]);
            let spaces = self.pick(&[(true, false), (false, true), (true, true)]);
            self.emit(Stmt::MemFence {
                spaces: Fence {
                    local: spaces.0,
                    global: spaces.1,
                },
                order: AtomicOrder { order, scope },
            });
        }
        if self.chance(60) {
            return AtomicOrder::RELAXED;
        }
        let order = if load {
            self.pick(&[MemOrder::Relaxed, MemOrder::Acquire, MemOrder::SeqCst])
        } else {
            self.pick(&[
                MemOrder::Relaxed,
                MemOrder::Acquire,
                MemOrder::Release,
                MemOrder::AcqRel,
                MemOrder::SeqCst,
            ])
        };
        AtomicOrder { order, scope }
    }

    fn new_local(&mut self, s: Scalar, len: u32) -> LocalId {
        let i = self.f.locals.len();
        self.f.locals.push(LocalDecl {
            name: format!("l{}_{i}", self.program),
            elem: Type::scalar(s),
            len: ArrayLen::Fixed(len),
        })
    }

    fn barrier(&mut self) {
        let fence = if self.chance(70) {
            Fence {
                local: true,
                global: false,
            }
        } else {
            Fence {
                local: true,
                global: true,
            }
        };
        self.emit(Stmt::Barrier(fence));
    }

    /// Every work-item writes its element of a local array; after a barrier each reads another
    /// work-item's element.
    fn exchange(&mut self) {
        let s = self.pick(&self.base_types());
        let l = self.opts.local_size;
        let a = self.new_local(s, l);
        let lid = self.builtin(Builtin::LocalLinearId);
        let v = self.expr(s, 3);
        self.emit(Stmt::Store {
            mem: Mem::Local(a),
            index: lid,
            value: v,
            at: strata::ir::SourceLoc::NONE,
        });
        self.barrier();
        let idx = match self.r.below(3) {
            0 => {
                let k = self.r.int(1, l as i64 - 1) as u32;
                let k = self.u32(k);
                let x = self.bin(BinaryOp::Add, lid, k);
                let n = self.u32(l);
                self.bin(BinaryOp::Rem, x, n)
            }
            1 => {
                let last = self.u32(l - 1);
                self.bin(BinaryOp::Sub, last, lid)
            }
            _ => self.index(l),
        };
        self.load(Mem::Local(a), idx, s);
    }

    /// A local counter: set by work-item 0, updated atomically by (some) work-items between
    /// barriers, then read by all.
    fn local_atomic(&mut self) {
        let s = self.pick(&self.layout.atom_types.clone());
        let a = self.new_local(s, 1);
        let lid = self.builtin(Builtin::LocalLinearId);
        let zero = self.u32(0);
        let first = self.bin(BinaryOp::Eq, lid, zero);
        let init = random_literal(&mut self.r, s);
        let init = self.intern(Expr::Literal(init), s);
        self.emit(Stmt::If {
            cond: first,
            then: vec![Stmt::Store {
                mem: Mem::Local(a),
                index: zero,
                value: init,
                at: strata::ir::SourceLoc::NONE,
            }],
            otherwise: Vec::new(),
        });
        self.barrier();
        let op = self.pick(&[
            AtomicOp::Add,
            AtomicOp::Sub,
            AtomicOp::Min,
            AtomicOp::Max,
            AtomicOp::And,
            AtomicOp::Or,
            AtomicOp::Xor,
        ]);
        let operand = self.expr(s, 3);
        let order = self.atomic_order(false);
        let atomic = Stmt::Atomic {
            result: None,
            mem: Mem::Local(a),
            index: zero,
            op,
            operand,
            compare: None,
            order,
            at: strata::ir::SourceLoc::NONE,
        };
        if self.chance(40) {
            let cond = self.expr(Scalar::Bool, 2);
            self.emit(Stmt::If {
                cond,
                then: vec![atomic],
                otherwise: Vec::new(),
            });
        } else {
            self.emit(atomic);
        }
        self.barrier();
        self.load(Mem::Local(a), zero, s);
    }

    /// A collective of the work-group or (half the time, where the devices share a sub-group
    /// size) of the sub-group.
    fn collective(&mut self) {
        let local = self.opts.local_size;
        let sub_group = self.opts.sub_group_size.filter(|_| self.chance(50));
        let (scope, smallest) = match sub_group {
            // The smallest group's size bounds a broadcast's source.
            Some(sg) => (
                GroupScope::SubGroup,
                Builtin::SubGroupSize
                    .sub_group_value(local - 1, local, sg)
                    .expect("a sub-group built-in"),
            ),
            _ => (GroupScope::WorkGroup, local),
        };
        let ops: Vec<GroupOp> = GroupOp::ALL
            .into_iter()
            .filter(|op| scope == GroupScope::SubGroup || !op.sub_group_only())
            .collect();
        let op = self.pick(&ops);
        let s = match op {
            GroupOp::Any | GroupOp::All | GroupOp::Ballot => Scalar::Bool,
            _ => self.pick(&self.base_types()),
        };
        let arg = self.expr(s, 3);
        let source = match op {
            GroupOp::Broadcast => {
                let src = self.r.below(smallest as u64) as u32;
                Some(self.u32(src))
            }
            // Shuffles take any lane, mask or delta: out-of-range ones give the own value.
            _ if op.takes_source() => Some(if self.chance(50) {
                let src = self.r.below(40) as u32;
                self.u32(src)
            } else {
                self.expr(Scalar::U32, 2)
            }),
            _ => None,
        };
        let ty = op.result_type(Type::scalar(s));
        let v = self.f.new_value(ty, None);
        self.emit(Stmt::Group {
            value: v,
            op,
            scope,
            arg,
            source,
        });
        if !s.is_float() || !op.is_fold() {
            self.bind(v, ty.scalar);
            return;
        }
        if !s.is_float() || op == GroupOp::Broadcast {
            self.bind(v, s);
            return;
        }
        // A float reduction or scan is stored, never computed with further: a sum's rounding
        // depends on the backend's order (and a min or max of zeros may pick either sign), and
        // later operations could amplify that without bound.
        let ve = self.intern(Expr::Value(v), s);
        if matches!(
            op,
            GroupOp::ReduceAdd | GroupOp::ScanInclusiveAdd | GroupOp::ScanExclusiveAdd
        ) {
            let ti = self.layout.types.iter().position(|&t| t == s).unwrap();
            let mag = self.layout.outs[ti].len() as u32 + 1;
            let abs = self.math(MathFn::Abs, vec![arg]);
            let m = self.f.new_value(Type::scalar(s), None);
            self.emit(Stmt::Group {
                value: m,
                op,
                scope,
                arg: abs,
                source: None,
            });
            let me = self.intern(Expr::Value(m), s);
            let check = Check::Sum {
                mag,
                terms: self.opts.local_size,
            };
            self.output(ve, check);
            self.output(me, check);
        } else {
            self.output(ve, Check::Exact);
        }
    }
}

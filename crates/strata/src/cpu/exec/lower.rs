//! Lowering of validated IR to the interpreter's register program ([`Program::lower`]).
//!
//! Lowering gives every expression and every value a register (a [`Column`] holding one value
//! per work-item of the group) and attaches to each statement the operations that compute the
//! expressions it needs, in operand order, skipping those already computed in an enclosing
//! scope. Leaves (literals, parameters, sizes, ids) are computed once per worker or per group.
//!
//! [`Column`]: crate::ir::eval::Column

use super::{CStmt, MemRef, Op, Program, Reg, StubFn};
use crate::error::Result;
use crate::ir::{self, Builtin, Expr, ExprId, Mem, SourceLoc, Stmt, ValidFunction};
use std::collections::HashSet;

use crate::ir::checked::orders_memory;

struct Lowering<'a> {
    f: &'a ir::Function,
    n_exprs: u32,
    avail: HashSet<ExprId>,
    scopes: Vec<Vec<ExprId>>,
}

fn block_exits(b: &ir::Block) -> bool {
    let mut e = false;
    ir::walk_block(b, &mut |s| {
        e |= matches!(s, Stmt::Break(_) | Stmt::Continue(_) | Stmt::Return)
    });
    e
}

impl Lowering<'_> {
    fn reg(&self, e: ExprId) -> Reg {
        match self.f.exprs.get(e) {
            Expr::Value(v) => self.value_reg(*v),
            _ => Reg::from_raw(e.raw()),
        }
    }

    fn value_reg(&self, v: ir::ValueId) -> Reg {
        Reg::from_raw(self.n_exprs + v.raw())
    }

    fn need(&mut self, e: ExprId, ops: &mut Vec<Op>) {
        if self.avail.contains(&e) {
            return;
        }
        let ex = self.f.exprs.get(e).clone();
        if matches!(ex, Expr::Value(_)) {
            return;
        }
        for o in ir::expr_operands(&ex) {
            self.need(o, ops);
        }
        let ty = self.f.exprs.ty(e);
        let dst = Reg::from_raw(e.raw());
        let r = |x: ExprId| self.reg(x);
        let op = match ex {
            Expr::Unary(op, a) => Op::Unary {
                dst,
                op,
                a: r(a),
                s: ty.scalar,
                w: ty.width as usize,
            },
            Expr::Binary(op, a, b) => {
                let at = self.f.exprs.ty(a);
                Op::Binary {
                    dst,
                    op,
                    a: r(a),
                    b: r(b),
                    s: at.scalar,
                    w: at.width as usize,
                }
            }
            Expr::Select(c, a, b) => Op::Select {
                dst,
                c: r(c),
                a: r(a),
                b: r(b),
                s: ty.scalar,
                w: ty.width as usize,
                cw: self.f.exprs.ty(c).width as usize,
            },
            Expr::Cast(a, to) => Op::Cast {
                dst,
                a: r(a),
                from: self.f.exprs.ty(a).scalar,
                to,
                w: ty.width as usize,
            },
            Expr::Bitcast(a, _) => Op::Bitcast {
                dst,
                a: r(a),
                bytes: ty.size(),
            },
            Expr::Math(f, args) => {
                let at = self.f.exprs.ty(args[0]);
                Op::Math {
                    dst,
                    f,
                    args: args.iter().map(|&x| r(x)).collect(),
                    s: at.scalar,
                    w: at.width as usize,
                }
            }
            Expr::Splat(a, w) => Op::Splat {
                dst,
                a: r(a),
                size: ty.scalar.size(),
                w: w as usize,
            },
            Expr::Compose(parts) => Op::Compose {
                dst,
                parts: parts.iter().map(|&x| r(x)).collect(),
                size: ty.scalar.size(),
            },
            Expr::Extract(a, i) => Op::Extract {
                dst,
                a: r(a),
                i: i as usize,
                size: ty.scalar.size(),
            },
            Expr::Stub(n, args) => {
                let s = &self.f.stubs[n];
                Op::Stub {
                    dst,
                    name: s.name.clone(),
                    body: StubFn(s.cpu.clone().expect("checked by Program::lower")),
                    args: args
                        .iter()
                        .map(|&x| (r(x), self.f.exprs.ty(x).scalar))
                        .collect(),
                    ret: ty.scalar,
                }
            }
            Expr::Literal(_)
            | Expr::Param(_)
            | Expr::BufferLen(_)
            | Expr::Builtin(_)
            | Expr::Value(_) => {
                unreachable!("leaves are computed up front")
            }
        };
        ops.push(op);
        self.avail.insert(e);
        self.scopes.last_mut().unwrap().push(e);
    }

    fn needs(&mut self, es: &[ExprId]) -> Vec<Op> {
        let mut ops = Vec::new();
        for &e in es {
            self.need(e, &mut ops);
        }
        ops
    }

    fn block(&mut self, b: &ir::Block) -> Vec<CStmt> {
        self.scopes.push(Vec::new());
        let out = b.iter().map(|s| self.stmt(s)).collect();
        for e in self.scopes.pop().unwrap() {
            self.avail.remove(&e);
        }
        out
    }

    fn mref(&self, mem: Mem, at: SourceLoc) -> MemRef {
        let elem = self.f.mem_elem(mem).expect("validated");
        match mem {
            // Struct sizes and field offsets are multiples of the field's scalar size (a
            // `#[repr(C)]` layout aligns every scalar to its size).
            Mem::Field(v) => {
                let v = &self.f.fields[v];
                let size = elem.scalar.size();
                let stride = self.f.buffer_elem_size(v.buffer).expect("validated") / size;
                MemRef {
                    mem: Mem::Buffer(v.buffer),
                    shown: mem,
                    elem,
                    stride,
                    offset: v.offset as usize / size,
                    at,
                }
            }
            _ => MemRef {
                mem,
                shown: mem,
                elem,
                stride: elem.width as usize,
                offset: 0,
                at,
            },
        }
    }

    fn stmt(&mut self, s: &Stmt) -> CStmt {
        let ops = self.needs(&ir::stmt_operands(s));
        let is = |l: &Self, i: ExprId| l.f.exprs.ty(i).scalar;
        match s {
            Stmt::Let { value, expr } => CStmt::Let {
                ops,
                value: self.value_reg(*value),
                src: self.reg(*expr),
                bytes: self.f.exprs.ty(*expr).size(),
            },
            // Buffers are read with relaxed atomic loads anyway (see the module docs of
            // `cpu`), and local memory belongs to one work-group run in lockstep; an acquiring
            // atomic load is followed by a fence.
            Stmt::Load {
                value,
                mem,
                index,
                at,
            } => CStmt::Load {
                ops,
                value: self.value_reg(*value),
                m: self.mref(*mem, *at),
                index: self.reg(*index),
                is: is(self, *index),
                acquire: false,
                atomic: false,
            },
            Stmt::AtomicLoad {
                value,
                mem,
                index,
                order,
                at,
            } => CStmt::Load {
                ops,
                value: self.value_reg(*value),
                m: self.mref(*mem, *at),
                index: self.reg(*index),
                is: is(self, *index),
                acquire: order.order.acquires(),
                atomic: true,
            },
            Stmt::Store {
                mem,
                index,
                value,
                at,
            } => CStmt::Store {
                ops,
                m: self.mref(*mem, *at),
                index: self.reg(*index),
                is: is(self, *index),
                value: self.reg(*value),
            },
            // Every atomic is sequentially consistent here (`atomic_rmw`), whatever the order.
            Stmt::Atomic {
                result,
                mem,
                index,
                op,
                operand,
                compare,
                order: _,
                at,
            } => CStmt::Atomic {
                ops,
                result: result.map(|v| self.value_reg(v)),
                m: self.mref(*mem, *at),
                index: self.reg(*index),
                is: is(self, *index),
                op: *op,
                operand: self.reg(*operand),
                compare: compare.map(|c| self.reg(c)),
            },
            Stmt::If {
                cond,
                then,
                otherwise,
            } => CStmt::If {
                ops,
                cond: self.reg(*cond),
                exits: block_exits(then) || block_exits(otherwise),
                then: self.block(then),
                els: self.block(otherwise),
            },
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => CStmt::For {
                ops,
                id: *id,
                var: self.value_reg(*var),
                start: self.reg(*start),
                end: self.reg(*end),
                step: self.reg(*step),
                s: is(self, *start),
                exits: block_exits(body),
                body: self.block(body),
            },
            Stmt::Loop { id, body } => CStmt::Loop {
                id: *id,
                exits: block_exits(body),
                body: self.block(body),
            },
            Stmt::Break(id) => CStmt::Break(*id),
            Stmt::Continue(id) => CStmt::Continue(*id),
            Stmt::Return => CStmt::Return,
            Stmt::Barrier(_) => CStmt::Barrier,
            Stmt::MemFence { .. } => CStmt::Fence,
            Stmt::Group {
                value,
                op,
                scope,
                arg,
                source,
            } => CStmt::Group {
                ops,
                value: self.value_reg(*value),
                op: *op,
                scope: *scope,
                arg: self.reg(*arg),
                source: source.map(|x| self.reg(x)),
                ty: self.f.exprs.ty(*arg),
            },
        }
    }
}

impl Program {
    /// Lowers a validated function.
    pub(crate) fn lower(vf: &ValidFunction) -> Result<Program> {
        let f = vf.function();
        let decls = crate::cpu::Decls::new(f)?;
        let n_exprs = f.exprs.len() as u32;
        let mut once = Vec::new();
        let mut per_group = Vec::new();
        let mut avail = HashSet::new();
        for (id, e, _) in f.exprs.iter() {
            let dst = Reg::from_raw(id.raw());
            let op = match e {
                Expr::Literal(l) => Op::Lit { dst, lit: *l },
                Expr::Param(p) => Op::Param { dst, p: *p },
                Expr::BufferLen(p) => Op::BufLen { dst, p: *p },
                Expr::Builtin(b) => Op::Builtin { dst, b: *b },
                _ => continue,
            };
            let group_dependent = matches!(
                e,
                Expr::Builtin(Builtin::GlobalId(_) | Builtin::GroupId(_) | Builtin::GroupLinearId)
            );
            if group_dependent {
                per_group.push(op)
            } else {
                once.push(op)
            }
            avail.insert(id);
        }
        let mut l = Lowering {
            f,
            n_exprs,
            avail,
            scopes: vec![Vec::new()],
        };
        let body = l.block(&f.body);
        Ok(Program {
            decls,
            once,
            per_group,
            body,
            n_regs: (n_exprs as usize) + f.values.len(),
            private_is_var: f.privates.iter().map(|d| d.len.is_none()).collect(),
            checked: f.is_checked(),
            cross_group: !orders_memory(&f.body),
        })
    }
}

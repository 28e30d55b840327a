//! Lowering of validated IR to a register program, and its lockstep execution.
//!
//! Lowering gives every expression and every value a register (a [`Column`] holding one value
//! per work-item of the group) and attaches to each statement the operations that compute the
//! expressions it needs, in operand order, skipping those already computed in an enclosing
//! scope. Leaves (literals, parameters, sizes, ids) are computed once per worker or per group.
//!
//! Execution walks the statement tree with an execution mask. `break`, `continue` and `return`
//! remove work-items from the masks of the enclosing blocks until the loop iteration, the loop
//! or the kernel ends.

#![allow(clippy::needless_range_loop)] // lane loops index several parallel columns

use super::cpu_mem;
use crate::error::{Error, RaceAccess, Result, WorkItem};
use crate::ir::eval::{self, with_int, with_scalar, Column, EvalError, Num};
use crate::ir::{
    self, AtomicOp, BinaryOp, Builtin, Expr, ExprId, GroupOp, GroupScope, Literal, LoopId, MathFn,
    Mem, Scalar, SourceLoc, Stmt, Type, UnaryOp, ValidFunction,
};
use crate::runtime::{ArgValue, NdRange};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

type Reg = u32;

#[derive(Clone, Debug)]
enum Op {
    Lit {
        dst: Reg,
        lit: Literal,
    },
    Param {
        dst: Reg,
        p: usize,
    },
    BufLen {
        dst: Reg,
        p: usize,
    },
    Builtin {
        dst: Reg,
        b: Builtin,
    },
    Unary {
        dst: Reg,
        op: UnaryOp,
        a: Reg,
        s: Scalar,
        w: usize,
    },
    Binary {
        dst: Reg,
        op: BinaryOp,
        a: Reg,
        b: Reg,
        s: Scalar,
        w: usize,
    },
    Select {
        dst: Reg,
        c: Reg,
        a: Reg,
        b: Reg,
        s: Scalar,
        w: usize,
        cw: usize,
    },
    Cast {
        dst: Reg,
        a: Reg,
        from: Scalar,
        to: Scalar,
        w: usize,
    },
    Bitcast {
        dst: Reg,
        a: Reg,
        bytes: usize,
    },
    Math {
        dst: Reg,
        f: MathFn,
        args: Vec<Reg>,
        s: Scalar,
        w: usize,
    },
    Splat {
        dst: Reg,
        a: Reg,
        size: usize,
        w: usize,
    },
    Compose {
        dst: Reg,
        parts: Vec<Reg>,
        size: usize,
    },
    Extract {
        dst: Reg,
        a: Reg,
        i: usize,
        size: usize,
    },
    Stub {
        dst: Reg,
        name: String,
        body: StubFn,
        args: Vec<(Reg, Scalar)>,
        ret: Scalar,
    },
}

/// A stub's CPU body, printable for debugging.
#[derive(Clone)]
struct StubFn(ir::StubCpuBody);

impl std::fmt::Debug for StubFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<cpu body>")
    }
}

#[derive(Clone, Copy, Debug)]
struct MemRef {
    /// The memory addressed: a field view's buffer for a field.
    mem: Mem,
    /// The memory the kernel named (a field view), for messages.
    shown: Mem,
    elem: Type,
    /// Components (of the element's scalar) from one element to the next: the width, or a
    /// struct's size for a field of a buffer of structs.
    stride: usize,
    /// Components from the start of an element to the field.
    offset: usize,
    /// The user's line of the access, for messages.
    at: SourceLoc,
}

#[derive(Clone, Debug)]
enum CStmt {
    Let {
        ops: Vec<Op>,
        value: Reg,
        src: Reg,
        bytes: usize,
    },
    Load {
        ops: Vec<Op>,
        value: Reg,
        m: MemRef,
        index: Reg,
        is: Scalar,
        /// An acquiring atomic load: a fence follows the read.
        acquire: bool,
        /// An atomic load (not part of data races).
        atomic: bool,
    },
    Store {
        ops: Vec<Op>,
        m: MemRef,
        index: Reg,
        is: Scalar,
        value: Reg,
    },
    Atomic {
        ops: Vec<Op>,
        result: Option<Reg>,
        m: MemRef,
        index: Reg,
        is: Scalar,
        op: AtomicOp,
        operand: Reg,
        compare: Option<Reg>,
    },
    If {
        ops: Vec<Op>,
        cond: Reg,
        then: Vec<CStmt>,
        els: Vec<CStmt>,
        exits: bool,
    },
    For {
        ops: Vec<Op>,
        id: LoopId,
        var: Reg,
        start: Reg,
        end: Reg,
        step: Reg,
        s: Scalar,
        body: Vec<CStmt>,
        exits: bool,
    },
    Loop {
        id: LoopId,
        body: Vec<CStmt>,
        exits: bool,
    },
    Break(LoopId),
    Continue(LoopId),
    Return,
    Barrier,
    Fence,
    Group {
        ops: Vec<Op>,
        value: Reg,
        op: GroupOp,
        scope: GroupScope,
        arg: Reg,
        source: Option<Reg>,
        ty: Type,
    },
}

impl CStmt {
    fn exits(&self) -> bool {
        match self {
            CStmt::Break(_) | CStmt::Continue(_) | CStmt::Return => true,
            CStmt::If { exits, .. } | CStmt::For { exits, .. } | CStmt::Loop { exits, .. } => {
                *exits
            }
            _ => false,
        }
    }
}

/// A kernel lowered for the CPU backend.
pub(crate) struct Program {
    decls: super::Decls,
    once: Vec<Op>,
    per_group: Vec<Op>,
    body: Vec<CStmt>,
    n_regs: usize,
    /// Which privates are scalar variables (not arrays): their index is always 0.
    private_is_var: Vec<bool>,
    /// Checked mode ([`ir::Function::checked`]): keep shadow memory, report data races and
    /// uninitialized reads.
    checked: bool,
    /// Checked mode: report races between work-groups (not when the kernel orders work-groups
    /// itself with fences or ordered atomics, which the shadow memory does not follow).
    cross_group: bool,
}

/// Whether `b` holds a fence or an atomic that releases or acquires.
fn orders_memory(b: &ir::Block) -> bool {
    b.iter().any(|s| match s {
        Stmt::MemFence { .. } => true,
        Stmt::Atomic { order, .. } | Stmt::AtomicLoad { order, .. } => {
            order.order != ir::MemOrder::Relaxed
        }
        Stmt::If {
            then, otherwise, ..
        } => orders_memory(then) || orders_memory(otherwise),
        Stmt::For { body, .. } | Stmt::Loop { body, .. } => orders_memory(body),
        _ => false,
    })
}

/// Checked mode: one access in shadow memory.
#[derive(Clone, Copy, Debug)]
struct Acc {
    group: [u32; 3],
    /// Local linear id.
    lane: u32,
    /// Barriers (and work-group collectives) the work-group had passed.
    phase: u32,
    at: SourceLoc,
}

impl Acc {
    fn same_item(&self, o: &Acc) -> bool {
        self.group == o.group && self.lane == o.lane
    }
}

/// Checked mode: the shadow of one element: its last writer, up to two readers since, and
/// whether anything wrote it (local memory).
#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    w: Option<Acc>,
    r: [Option<Acc>; 2],
    init: bool,
}

/// What a shadowed access does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Read,
    Write,
    /// An atomic: reads (for uninitialized memory) and writes, but races with nothing.
    Atomic,
    /// An atomic load.
    AtomicRead,
}

impl Cell {
    /// Records `me`; returns the earlier access it races with, and whether that one wrote.
    fn touch(&mut self, me: Acc, kind: Kind, cross_group: bool) -> Option<(Acc, bool)> {
        let unordered = |p: &Acc| {
            !p.same_item(&me)
                && if p.group == me.group {
                    p.phase == me.phase
                } else {
                    cross_group
                }
        };
        match kind {
            Kind::Atomic => {
                self.init = true;
                return None;
            }
            Kind::AtomicRead => return None,
            Kind::Read | Kind::Write => {}
        }
        if let Some(w) = self.w.filter(|w| unordered(w)) {
            return Some((w, true));
        }
        if kind == Kind::Write {
            if let Some(r) = self.r.iter().flatten().find(|r| unordered(r)) {
                return Some((*r, false));
            }
            self.w = Some(me);
            self.r = [None, None];
            self.init = true;
        } else if self.r[0].is_none_or(|r| r.same_item(&me) || !unordered(&r)) {
            self.r[0] = Some(me);
        } else {
            self.r[1] = Some(me);
        }
        None
    }
}

/// Checked mode: the shadow of a launch's buffers, by parameter: cells by byte offset, in
/// shards so that work-groups running in parallel rarely wait for each other.
struct GlobalShadow {
    bufs: Vec<Vec<std::sync::Mutex<std::collections::HashMap<u64, Cell>>>>,
}

const SHARDS: usize = 64;

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
            Expr::Value(v) => self.n_exprs + v.0,
            _ => e.0,
        }
    }

    fn value_reg(&self, v: ir::ValueId) -> Reg {
        self.n_exprs + v.0
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
        let dst = e.0;
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
                let s = &self.f.stubs[n as usize];
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
                let v = &self.f.fields[v as usize];
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
        let decls = super::Decls::new(f)?;
        let n_exprs = f.exprs.len() as u32;
        let mut once = Vec::new();
        let mut per_group = Vec::new();
        let mut avail = HashSet::new();
        for (id, e, _) in f.exprs.iter() {
            let dst = id.0;
            let op = match e {
                Expr::Literal(l) => Op::Lit { dst, lit: *l },
                Expr::Param(p) => Op::Param {
                    dst,
                    p: *p as usize,
                },
                Expr::BufferLen(p) => Op::BufLen {
                    dst,
                    p: *p as usize,
                },
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

    /// Whether the program keeps shadow memory (checked mode).
    pub(crate) fn checked(&self) -> bool {
        self.checked
    }

    /// Runs the program over `range` with resolved arguments.
    /// Runs the program over `range` with resolved arguments; stops between work-groups with
    /// [`Error::Cancelled`] once `cancel` is set.
    pub(crate) fn launch(
        &self,
        range: NdRange,
        args: &[ArgValue],
        cancel: &AtomicBool,
    ) -> Result<()> {
        if range.is_empty() {
            return Ok(());
        }
        let local = range.local_size().expect("resolved range");
        let groups = range.groups();
        let total = range.group_count();
        let globals: Vec<Global> = args
            .iter()
            .map(|a| match a {
                ArgValue::Buffer { mem, len, .. } => Global {
                    base: cpu_mem(mem).base(),
                    len: *len,
                },
                _ => Global {
                    base: std::ptr::null(),
                    len: 0,
                },
            })
            .collect();
        let stop = AtomicBool::new(false);
        let mems: Vec<Option<&super::CpuMem>> = args
            .iter()
            .map(|a| match a {
                ArgValue::Buffer { mem, .. } => Some(cpu_mem(mem)),
                _ => None,
            })
            .collect();
        let shadow = self.checked.then(|| GlobalShadow {
            bufs: args
                .iter()
                .map(|a| match a {
                    ArgValue::Buffer { .. } => (0..SHARDS).map(|_| Default::default()).collect(),
                    _ => Vec::new(),
                })
                .collect(),
        });
        let ctx = Ctx {
            prog: self,
            args,
            mems: &mems,
            shadow: shadow.as_ref(),
            globals: &globals,
            local,
            groups,
            global: range.global_size(),
            stop: &stop,
        };
        super::run_groups(
            total,
            &self.decls.name,
            cancel,
            &stop,
            || Worker::new(&ctx),
            |w, g| w.run_group(g),
        )
    }
}

/// A buffer argument as the interpreter sees it.
struct Global {
    base: *const u8,
    len: u64,
}

// SAFETY: the pointers point into `CpuMem`s kept alive by the launch command for the whole
// launch, and are only accessed through atomics.
unsafe impl Sync for Global {}
unsafe impl Send for Global {}

struct Ctx<'a> {
    prog: &'a Program,
    args: &'a [ArgValue],
    /// The buffers' memory (for which bytes were written, in checked mode).
    mems: &'a [Option<&'a super::CpuMem>],
    shadow: Option<&'a GlobalShadow>,
    globals: &'a [Global],
    local: [usize; 3],
    groups: [usize; 3],
    global: [usize; 3],
    stop: &'a AtomicBool,
}

struct Frame {
    id: LoopId,
    broken: Vec<bool>,
    continued: Vec<bool>,
}

struct Worker<'a> {
    c: &'a Ctx<'a>,
    lanes: usize,
    regs: Vec<Column>,
    locals: Vec<Column>,
    local_lens: Vec<u64>,
    privates: Vec<Column>,
    returned: Vec<bool>,
    frames: Vec<Frame>,
    group: [u32; 3],
    masks: Vec<Vec<bool>>,
    idx: Vec<i64>,
    /// `local_id(d)` of every lane, computed once.
    lids: [Vec<u32>; 3],
    /// A mask with every work-item active.
    all: Vec<bool>,
    /// Checked mode: barriers and collectives passed by the work-group, the shadow of each
    /// local array's elements, and which private array elements each work-item wrote (element
    /// `i` of lane `l` at `i * lanes + l`).
    phase: u32,
    local_cells: Vec<Vec<Cell>>,
    private_init: Vec<Vec<bool>>,
}

macro_rules! words {
    ($size:expr, $W:ident, $A:ident => $body:expr) => {
        match $size {
            1 => {
                type $W = u8;
                type $A = AtomicU8;
                $body
            }
            2 => {
                type $W = u16;
                type $A = AtomicU16;
                $body
            }
            4 => {
                type $W = u32;
                type $A = AtomicU32;
                $body
            }
            _ => {
                type $W = u64;
                type $A = AtomicU64;
                $body
            }
        }
    };
}

impl<'a> Worker<'a> {
    fn new(c: &'a Ctx<'a>) -> Result<Worker<'a>> {
        let lanes: usize = c.local.iter().product();
        let p = c.prog;
        let mut local_lens = Vec::new();
        let mut locals = Vec::new();
        for (i, (elem, _, _)) in p.decls.locals.iter().enumerate() {
            let n = p.decls.local_len(i, c.args);
            local_lens.push(n);
            locals.push(Column::zeroed(n as usize * elem.size()));
        }
        let privates = p
            .decls
            .privates
            .iter()
            .map(|(elem, n, _)| Column::zeroed(lanes * *n as usize * elem.size()))
            .collect();
        let checked = p.checked;
        let local_cells = if checked {
            local_lens
                .iter()
                .map(|&n| vec![Cell::default(); n as usize])
                .collect()
        } else {
            Vec::new()
        };
        let private_init = if checked {
            p.decls
                .privates
                .iter()
                .map(|(_, n, _)| vec![false; lanes * *n as usize])
                .collect()
        } else {
            Vec::new()
        };
        let mut w = Worker {
            phase: 0,
            local_cells,
            private_init,
            c,
            lanes,
            regs: vec![Column::default(); p.n_regs],
            locals,
            local_lens,
            privates,
            returned: vec![false; lanes],
            frames: Vec::new(),
            group: [0; 3],
            masks: Vec::new(),
            idx: vec![0; lanes],
            all: vec![true; lanes],
            lids: [0, 1, 2].map(|d| {
                (0..lanes)
                    .map(|l| match d {
                        0 => (l % c.local[0]) as u32,
                        1 => ((l / c.local[0]) % c.local[1]) as u32,
                        _ => (l / (c.local[0] * c.local[1])) as u32,
                    })
                    .collect()
            }),
        };
        let ops = &c.prog.once;
        let all = vec![true; lanes];
        w.run_ops(ops, &all)?;
        Ok(w)
    }

    fn item(&self, l: usize) -> WorkItem {
        super::work_item(l, self.c.local, self.group)
    }

    fn fault(&self, l: usize, message: impl Into<String>) -> Error {
        Error::KernelFault {
            kernel: self.c.prog.decls.name.clone(),
            message: message.into(),
            item: self.item(l),
        }
    }

    fn run_group(&mut self, g: usize) -> Result<()> {
        let [gx, gy, _] = self.c.groups;
        self.group = [
            (g % gx) as u32,
            ((g / gx) % gy) as u32,
            (g / (gx * gy)) as u32,
        ];
        let all = std::mem::take(&mut self.all);
        let per_group = &self.c.prog.per_group;
        let r = self.run_ops(per_group, &all);
        self.all = all;
        r?;
        self.returned.iter_mut().for_each(|r| *r = false);
        for c in self.locals.iter_mut().chain(self.privates.iter_mut()) {
            c.bytes_mut().fill(0);
        }
        self.phase = 0;
        for c in &mut self.local_cells {
            c.fill(Cell::default());
        }
        for p in &mut self.private_init {
            p.fill(false);
        }
        let body = &self.c.prog.body;
        let all = std::mem::take(&mut self.all);
        let r = self.exec_block(body, &all);
        self.all = all;
        r
    }

    fn take_mask(&mut self) -> Vec<bool> {
        self.masks.pop().unwrap_or_else(|| vec![false; self.lanes])
    }

    /// Clears in `mask` the work-items that have returned, or left (or ended the iteration of)
    /// an enclosing loop. Whole-column operations, so they vectorize.
    fn keep_alive(&self, mask: &mut [bool]) {
        for (m, &r) in mask.iter_mut().zip(&self.returned) {
            *m &= !r;
        }
        for f in &self.frames {
            for ((m, &b), &c) in mask.iter_mut().zip(&f.broken).zip(&f.continued) {
                *m &= !(b | c);
            }
        }
    }

    /// `out = mask` restricted to the work-items still alive.
    fn alive_into(&self, mask: &[bool], out: &mut [bool]) {
        out.copy_from_slice(mask);
        self.keep_alive(out);
    }

    fn exec_block(&mut self, block: &[CStmt], entry: &[bool]) -> Result<()> {
        let mut mask = self.take_mask();
        mask.copy_from_slice(entry);
        let mut r = Ok(());
        for s in block {
            if !mask.iter().any(|&m| m) {
                break;
            }
            r = self.exec(s, &mask);
            if r.is_err() {
                break;
            }
            if s.exits() {
                self.keep_alive(&mut mask);
            }
        }
        self.masks.push(mask);
        r
    }

    fn col_mut(&mut self, r: Reg, bytes: usize) -> &mut Column {
        let c = &mut self.regs[r as usize];
        c.reserve_bytes(bytes);
        c
    }

    /// `base + local_id(d)` for every lane.
    fn leaf_lid(&mut self, dst: Reg, d: usize, base: u32) {
        let n = self.lanes;
        let mut c = std::mem::take(&mut self.regs[dst as usize]);
        c.reserve_bytes(n * 4);
        for (v, &l) in c.slice_mut::<u32>(n).iter_mut().zip(&self.lids[d]) {
            *v = base.wrapping_add(l);
        }
        self.regs[dst as usize] = c;
    }

    fn leaf_u32(&mut self, dst: Reg, f: impl Fn(usize) -> u32) {
        let n = self.lanes;
        let c = self.col_mut(dst, n * 4);
        for (l, v) in c.slice_mut::<u32>(n).iter_mut().enumerate() {
            *v = f(l);
        }
    }

    fn run_ops(&mut self, ops: &[Op], mask: &[bool]) -> Result<()> {
        let n = self.lanes;
        for op in ops {
            match op {
                Op::Lit { dst, lit } => {
                    let s = lit.scalar;
                    let c = self.col_mut(*dst, n * s.size());
                    with_scalar!(s, T => {
                        let v = T::from_lit(*lit);
                        c.slice_mut::<T>(n).fill(v);
                    });
                }
                Op::Param { dst, p } => {
                    let lit = match self.c.args[*p] {
                        ArgValue::Scalar(l) => l,
                        _ => unreachable!("checked at launch"),
                    };
                    let s = lit.scalar;
                    let c = self.col_mut(*dst, n * s.size());
                    with_scalar!(s, T => c.slice_mut::<T>(n).fill(T::from_lit(lit)));
                }
                Op::BufLen { dst, p } => {
                    let len = self.c.globals[*p].len as u32;
                    self.leaf_u32(*dst, |_| len);
                }
                Op::Builtin { dst, b } => {
                    let (loc, grp, glob, groups) =
                        (self.c.local, self.group, self.c.global, self.c.groups);
                    match *b {
                        Builtin::GlobalId(d) => {
                            let base = grp[d as usize] * loc[d as usize] as u32;
                            self.leaf_lid(*dst, d as usize, base)
                        }
                        Builtin::LocalId(d) => self.leaf_lid(*dst, d as usize, 0),
                        Builtin::GroupId(d) => self.leaf_u32(*dst, |_| grp[d as usize]),
                        Builtin::GlobalSize(d) => self.leaf_u32(*dst, |_| glob[d as usize] as u32),
                        Builtin::LocalSize(d) => self.leaf_u32(*dst, |_| loc[d as usize] as u32),
                        Builtin::NumGroups(d) => self.leaf_u32(*dst, |_| groups[d as usize] as u32),
                        Builtin::LocalLinearId => self.leaf_u32(*dst, |l| l as u32),
                        Builtin::GroupLinearId => {
                            let v = grp[0]
                                + grp[1] * groups[0] as u32
                                + grp[2] * (groups[0] * groups[1]) as u32;
                            self.leaf_u32(*dst, |_| v)
                        }
                        b => {
                            let size = n as u32;
                            self.leaf_u32(*dst, |l| {
                                b.sub_group_value(l as u32, size, super::SUB_GROUP_SIZE)
                                    .expect("the other built-ins are matched above")
                            })
                        }
                    }
                }
                Op::Unary { dst, op, a, s, w } => {
                    let mut out = std::mem::take(&mut self.regs[*dst as usize]);
                    eval::unary(*op, *s, &self.regs[*a as usize], &mut out, n * w);
                    self.regs[*dst as usize] = out;
                }
                Op::Binary {
                    dst,
                    op,
                    a,
                    b,
                    s,
                    w,
                } => {
                    let mut out = std::mem::take(&mut self.regs[*dst as usize]);
                    let r = eval::binary(
                        *op,
                        *s,
                        &self.regs[*a as usize],
                        &self.regs[*b as usize],
                        &mut out,
                        n * w,
                        &|i| mask[i % n],
                    );
                    self.regs[*dst as usize] = out;
                    if let Err(EvalError::DivisionByZero(i)) = r {
                        return Err(self.fault(
                            i % n,
                            format!(
                                "integer {} by zero",
                                if *op == BinaryOp::Div {
                                    "division"
                                } else {
                                    "remainder"
                                }
                            ),
                        ));
                    }
                }
                Op::Select {
                    dst,
                    c,
                    a,
                    b,
                    s,
                    w,
                    cw,
                } => {
                    let mut out = std::mem::take(&mut self.regs[*dst as usize]);
                    eval::select(
                        *s,
                        &self.regs[*c as usize],
                        &self.regs[*a as usize],
                        &self.regs[*b as usize],
                        &mut out,
                        n * w,
                        n * cw,
                    );
                    self.regs[*dst as usize] = out;
                }
                Op::Cast {
                    dst,
                    a,
                    from,
                    to,
                    w,
                } => {
                    let mut out = std::mem::take(&mut self.regs[*dst as usize]);
                    eval::cast(*from, *to, &self.regs[*a as usize], &mut out, n * w);
                    self.regs[*dst as usize] = out;
                }
                Op::Bitcast { dst, a, bytes } => {
                    let mut out = std::mem::take(&mut self.regs[*dst as usize]);
                    out.reserve_bytes(n * bytes);
                    out.bytes_mut()[..n * bytes]
                        .copy_from_slice(&self.regs[*a as usize].bytes()[..n * bytes]);
                    self.regs[*dst as usize] = out;
                }
                Op::Math { dst, f, args, s, w } => {
                    let mut out = std::mem::take(&mut self.regs[*dst as usize]);
                    let cols: Vec<&Column> = args.iter().map(|&r| &self.regs[r as usize]).collect();
                    eval::math(*f, *s, &cols, &mut out, n, *w);
                    self.regs[*dst as usize] = out;
                }
                Op::Splat { dst, a, size, w } => {
                    let mut out = std::mem::take(&mut self.regs[*dst as usize]);
                    out.reserve_bytes(n * size * w);
                    let src = &self.regs[*a as usize].bytes()[..n * size];
                    for c in 0..*w {
                        out.bytes_mut()[c * n * size..(c + 1) * n * size].copy_from_slice(src);
                    }
                    self.regs[*dst as usize] = out;
                }
                Op::Compose { dst, parts, size } => {
                    let mut out = std::mem::take(&mut self.regs[*dst as usize]);
                    out.reserve_bytes(n * size * parts.len());
                    for (c, p) in parts.iter().enumerate() {
                        out.bytes_mut()[c * n * size..(c + 1) * n * size]
                            .copy_from_slice(&self.regs[*p as usize].bytes()[..n * size]);
                    }
                    self.regs[*dst as usize] = out;
                }
                Op::Stub {
                    dst,
                    name,
                    body,
                    args,
                    ret,
                } => {
                    let mut out = std::mem::take(&mut self.regs[*dst as usize]);
                    out.reserve_bytes(n * ret.size());
                    let mut lits = Vec::with_capacity(args.len());
                    for l in (0..n).filter(|&l| mask[l]) {
                        lits.clear();
                        lits.extend(
                            args.iter()
                                .map(|&(r, s)| self.regs[r as usize].literal(s, l)),
                        );
                        let v = (body.0)(&lits);
                        if v.scalar != *ret {
                            self.regs[*dst as usize] = out;
                            return Err(self.fault(l, format!("the CPU body of stub `{name}` returned a {}, the stub returns {ret}", v.scalar)));
                        }
                        with_scalar!(*ret, T => out.slice_mut::<T>(n)[l] = T::from_lit(v));
                    }
                    self.regs[*dst as usize] = out;
                }
                Op::Extract { dst, a, i, size } => {
                    let mut out = std::mem::take(&mut self.regs[*dst as usize]);
                    out.reserve_bytes(n * size);
                    out.bytes_mut()[..n * size].copy_from_slice(
                        &self.regs[*a as usize].bytes()[i * n * size..(i + 1) * n * size],
                    );
                    self.regs[*dst as usize] = out;
                }
            }
        }
        Ok(())
    }

    /// Loads the index register into `self.idx` for active lanes and checks it against `len`.
    fn indices(
        &mut self,
        index: Reg,
        is: Scalar,
        mask: &[bool],
        len: u64,
        m: MemRef,
    ) -> Result<()> {
        let n = self.lanes;
        let col = &self.regs[index as usize];
        with_int!(is, T => {
            let s = col.slice::<T>(n);
            for (d, &x) in self.idx.iter_mut().zip(s) {
                *d = x.as_i64();
            }
        }, _ => unreachable!("validated: integer index"));
        if is == Scalar::U64 {
            for (d, &x) in self.idx.iter_mut().zip(col.slice::<u64>(n)) {
                if x > i64::MAX as u64 {
                    *d = i64::MAX;
                }
            }
        }
        // A branch-free check first (it vectorizes); the culprit is looked for only on failure.
        // Negative indices become huge as u64 and fail the same comparison.
        let mut bad = false;
        for (&i, &m) in self.idx.iter().zip(mask) {
            bad |= m & (i as u64 >= len);
        }
        if !bad {
            return Ok(());
        }
        for l in 0..n {
            if mask[l] && (self.idx[l] < 0 || self.idx[l] as u64 >= len) {
                return Err(Error::OutOfBounds {
                    kernel: self.c.prog.decls.name.clone(),
                    memory: self.mem_what(m),
                    index: self.idx[l],
                    len,
                    item: self.item(l),
                    at: m.at,
                });
            }
        }
        Ok(())
    }

    fn mem_len(&self, m: MemRef) -> u64 {
        match m.mem {
            Mem::Buffer(p) => self.c.globals[p as usize].len,
            Mem::Local(i) => self.local_lens[i as usize],
            Mem::Private(i) => self.c.prog.decls.privates[i as usize].1 as u64,
            Mem::Field(_) => unreachable!("a field view is addressed through its buffer"),
        }
    }

    fn mem_what(&self, m: MemRef) -> String {
        self.c.prog.decls.mem_what(m.shown)
    }

    /// Scalar buffer element loads or stores with `u32` indices while every work-item is active:
    /// the common case, done with one fused check and one tight loop. Returns `false` when the
    /// case does not apply or an index is out of bounds (the general path then reports it).
    fn fast_global(
        &mut self,
        reg: Reg,
        m: MemRef,
        index: Reg,
        is: Scalar,
        mask: &[bool],
        store: bool,
    ) -> bool {
        let Mem::Buffer(p) = m.mem else { return false };
        if self.c.prog.checked {
            return false;
        }
        // `fold` rather than `all`: no early exit, so the scan vectorizes.
        if is != Scalar::U32 || m.elem.width != 1 || !mask.iter().fold(true, |a, &x| a & x) {
            return false;
        }
        let n = self.lanes;
        let g = &self.c.globals[p as usize];
        let idx = self.regs[index as usize].slice::<u32>(n);
        let len = g.len;
        let mut bad = false;
        for &i in idx {
            bad |= i as u64 >= len;
        }
        if bad {
            return false;
        }
        let size = m.elem.scalar.size();
        if store {
            let v = &self.regs[reg as usize];
            words!(size, W, A => {
                let base = g.base as *const A;
                for (&x, &i) in v.slice::<W>(n).iter().zip(idx) {
                    // SAFETY: every index was checked against the buffer's length above.
                    unsafe { (*base.add(i as usize * m.stride + m.offset)).store(x, Ordering::Relaxed) };
                }
            });
        } else {
            let mut out = std::mem::take(&mut self.regs[reg as usize]);
            out.reserve_bytes(n * size);
            let idx = self.regs[index as usize].slice::<u32>(n);
            words!(size, W, A => {
                let base = g.base as *const A;
                for (o, &i) in out.slice_mut::<W>(n).iter_mut().zip(idx) {
                    // SAFETY: every index was checked against the buffer's length above.
                    *o = unsafe { (*base.add(i as usize * m.stride + m.offset)).load(Ordering::Relaxed) };
                }
            });
            self.regs[reg as usize] = out;
        }
        true
    }

    fn load(
        &mut self,
        value: Reg,
        (m, kind): (MemRef, Kind),
        index: Reg,
        is: Scalar,
        mask: &[bool],
    ) -> Result<()> {
        if self.fast_global(value, m, index, is, mask, false) {
            return Ok(());
        }
        if let Mem::Private(i) = m.mem {
            if self.c.prog.private_is_var[i as usize] {
                // A variable is laid out like a register: copy the whole column (the values of
                // inactive work-items are never read).
                let b = self.lanes * m.elem.size();
                let mut out = std::mem::take(&mut self.regs[value as usize]);
                out.reserve_bytes(b);
                out.bytes_mut()[..b].copy_from_slice(&self.privates[i as usize].bytes()[..b]);
                self.regs[value as usize] = out;
                return Ok(());
            }
        }
        let len = self.mem_len(m);
        self.indices(index, is, mask, len, m)?;
        if self.c.prog.checked {
            self.shadow(m, kind, mask)?;
        }
        let n = self.lanes;
        let (size, w) = (m.elem.scalar.size(), m.elem.width as usize);
        let mut out = std::mem::take(&mut self.regs[value as usize]);
        out.reserve_bytes(n * size * w);
        words!(size, W, A => {
            let o = out.slice_mut::<W>(n * w);
            match m.mem {
                Mem::Buffer(p) => {
                    let base = self.c.globals[p as usize].base as *const A;
                    for l in (0..n).filter(|&l| mask[l]) {
                        for c in 0..w {
                            // SAFETY: the index was checked against the buffer's length.
                            o[c * n + l] = unsafe { (*base.add(self.idx[l] as usize * m.stride + m.offset + c)).load(Ordering::Relaxed) };
                        }
                    }
                }
                Mem::Field(_) => unreachable!("a field view is addressed through its buffer"),
                Mem::Local(i) => {
                    let src = self.locals[i as usize].slice::<W>(len as usize * w);
                    for l in (0..n).filter(|&l| mask[l]) {
                        for c in 0..w {
                            o[c * n + l] = src[self.idx[l] as usize * w + c];
                        }
                    }
                }
                Mem::Private(i) => {
                    let src = self.privates[i as usize].slice::<W>(n * len as usize * w);
                    for l in (0..n).filter(|&l| mask[l]) {
                        for c in 0..w {
                            o[(c * n) + l] = src[(self.idx[l] as usize * w + c) * n + l];
                        }
                    }
                }
            }
        });
        self.regs[value as usize] = out;
        Ok(())
    }

    fn store(
        &mut self,
        m: MemRef,
        index: Reg,
        is: Scalar,
        value: Reg,
        mask: &[bool],
    ) -> Result<()> {
        if self.fast_global(value, m, index, is, mask, true) {
            return Ok(());
        }
        if let Mem::Private(i) = m.mem {
            if self.c.prog.private_is_var[i as usize] {
                let (n, size) = (self.lanes, m.elem.scalar.size());
                let (src, dst) = (&self.regs[value as usize], &mut self.privates[i as usize]);
                if mask.iter().fold(true, |a, &x| a & x) {
                    let b = n * m.elem.size();
                    dst.bytes_mut()[..b].copy_from_slice(&src.bytes()[..b]);
                } else {
                    words!(size, W, _A => {
                        let w = m.elem.width as usize;
                        let (v, d) = (src.slice::<W>(n * w), dst.slice_mut::<W>(n * w));
                        for c in 0..w {
                            for l in 0..n {
                                if mask[l] {
                                    d[c * n + l] = v[c * n + l];
                                }
                            }
                        }
                    });
                }
                return Ok(());
            }
        }
        let len = self.mem_len(m);
        self.indices(index, is, mask, len, m)?;
        if self.c.prog.checked {
            self.shadow(m, Kind::Write, mask)?;
        }
        let n = self.lanes;
        let (size, w) = (m.elem.scalar.size(), m.elem.width as usize);
        words!(size, W, A => {
            let v = self.regs[value as usize].slice::<W>(n * w);
            match m.mem {
                Mem::Buffer(p) => {
                    let base = self.c.globals[p as usize].base as *const A;
                    for l in (0..n).filter(|&l| mask[l]) {
                        for c in 0..w {
                            // SAFETY: the index was checked against the buffer's length.
                            unsafe { (*base.add(self.idx[l] as usize * m.stride + m.offset + c)).store(v[c * n + l], Ordering::Relaxed) };
                        }
                    }
                }
                Mem::Field(_) => unreachable!("a field view is addressed through its buffer"),
                Mem::Local(i) => {
                    let dst = self.locals[i as usize].slice_mut::<W>(len as usize * w);
                    for l in (0..n).filter(|&l| mask[l]) {
                        for c in 0..w {
                            dst[self.idx[l] as usize * w + c] = v[c * n + l];
                        }
                    }
                }
                Mem::Private(i) => {
                    let dst = self.privates[i as usize].slice_mut::<W>(n * len as usize * w);
                    for l in (0..n).filter(|&l| mask[l]) {
                        for c in 0..w {
                            dst[(self.idx[l] as usize * w + c) * n + l] = v[c * n + l];
                        }
                    }
                }
            }
        });
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        result: Option<Reg>,
        m: MemRef,
        index: Reg,
        is: Scalar,
        op: AtomicOp,
        operand: Reg,
        compare: Option<Reg>,
        mask: &[bool],
    ) -> Result<()> {
        let len = self.mem_len(m);
        self.indices(index, is, mask, len, m)?;
        if self.c.prog.checked {
            self.shadow(m, Kind::Atomic, mask)?;
        }
        let n = self.lanes;
        let s = m.elem.scalar;
        let mut out = result.map(|r| std::mem::take(&mut self.regs[r as usize]));
        if let Some(o) = out.as_mut() {
            o.reserve_bytes(n * s.size());
        }
        with_scalar!(s, T => {
            let v = self.regs[operand as usize].slice::<T>(n).to_vec();
            let cmp = compare.map(|c| self.regs[c as usize].slice::<T>(n).to_vec());
            let apply = |old: T, l: usize| -> T { apply_atomic(op, old, v[l], cmp.as_ref().map(|c| c[l])) };
            for l in (0..n).filter(|&l| mask[l]) {
                let i = self.idx[l] as usize;
                let old: T = match m.mem {
                    Mem::Buffer(p) => {
                        let base = self.c.globals[p as usize].base;
                        // SAFETY: checked index; buffers are only accessed atomically.
                        unsafe { atomic_rmw::<T>(base, i * m.stride + m.offset, |x| apply(x, l)) }
                    }
                    Mem::Local(li) => {
                        let mem = self.locals[li as usize].slice_mut::<T>(len as usize);
                        let old = mem[i];
                        mem[i] = apply(old, l);
                        old
                    }
                    Mem::Private(_) => unreachable!("validated: no private atomics"),
                    Mem::Field(_) => unreachable!("a field view is addressed through its buffer"),
                };
                if let Some(o) = out.as_mut() {
                    o.slice_mut::<T>(n)[l] = old;
                }
            }
        });
        if let (Some(r), Some(o)) = (result, out) {
            self.regs[r as usize] = o;
        }
        Ok(())
    }

    /// Checked mode: records the accesses of the active lanes (their indices in `self.idx`,
    /// already checked) in shadow memory, reporting the first data race or read of memory
    /// nobody wrote.
    fn shadow(&mut self, m: MemRef, kind: Kind, mask: &[bool]) -> Result<()> {
        let n = self.lanes;
        let reads = matches!(kind, Kind::Read | Kind::Atomic | Kind::AtomicRead);
        for l in (0..n).filter(|&l| mask[l]) {
            let i = self.idx[l];
            let me = Acc {
                group: self.group,
                lane: l as u32,
                phase: self.phase,
                at: m.at,
            };
            let (race, uninit) = match m.mem {
                Mem::Field(_) => unreachable!("a field view is addressed through its buffer"),
                Mem::Buffer(p) => {
                    let size = m.elem.scalar.size();
                    let off = (i as usize * m.stride + m.offset) * size;
                    let bytes = size * m.elem.width as usize;
                    let mem = self.c.mems[p as usize].expect("a buffer argument");
                    let uninit = reads && !mem.is_written(off, bytes);
                    if kind != Kind::Read {
                        mem.mark_written(off, bytes);
                    }
                    let shards = &self.c.shadow.expect("checked").bufs[p as usize];
                    let key = off as u64;
                    let race = shards[(key as usize / size) % SHARDS]
                        .lock()
                        .unwrap()
                        .entry(key)
                        .or_default()
                        .touch(me, kind, self.c.prog.cross_group);
                    (
                        race,
                        uninit.then_some("since the buffer was made by Buffer::uninit"),
                    )
                }
                Mem::Local(a) => {
                    let cell = &mut self.local_cells[a as usize][i as usize];
                    let uninit = reads && !cell.init;
                    (
                        cell.touch(me, kind, false),
                        uninit.then_some("in this work-group"),
                    )
                }
                Mem::Private(a) => {
                    let bit = &mut self.private_init[a as usize][i as usize * n + l];
                    let uninit = reads && !*bit;
                    *bit |= kind != Kind::Read;
                    (None, uninit.then_some("by this work-item"))
                }
            };
            if let Some(why) = uninit {
                return Err(Error::UninitializedRead {
                    kernel: self.c.prog.decls.name.clone(),
                    memory: self.mem_what(m),
                    index: i,
                    item: self.item(l),
                    at: m.at,
                    why,
                });
            }
            if let Some((other, wrote)) = race {
                let name = |w: bool| if w { "write" } else { "read" };
                return Err(Error::DataRace {
                    kernel: self.c.prog.decls.name.clone(),
                    memory: self.mem_what(m),
                    index: i,
                    first: Box::new(RaceAccess::new(
                        name(wrote),
                        super::work_item(other.lane as usize, self.c.local, other.group),
                        other.at,
                    )),
                    second: Box::new(RaceAccess::new(
                        name(kind == Kind::Write),
                        self.item(l),
                        m.at,
                    )),
                    why: if other.group == self.group {
                        "with no barrier between them"
                    } else {
                        "in different work-groups of one launch"
                    },
                });
            }
        }
        Ok(())
    }

    fn check_uniform(&self, mask: &[bool], what: &str) -> Result<()> {
        let reached = mask.iter().filter(|&&m| m).count();
        if reached != self.lanes {
            return Err(Error::BarrierDivergence {
                kernel: self.c.prog.decls.name.clone(),
                what: what.into(),
                reached,
                size: self.lanes,
                group: self.group,
            });
        }
        Ok(())
    }

    fn group_op(
        &mut self,
        value: Reg,
        (op, scope): (GroupOp, GroupScope),
        arg: Reg,
        source: Option<Reg>,
        ty: Type,
        mask: &[bool],
    ) -> Result<()> {
        self.check_uniform(mask, op.name(scope))?;
        if scope == GroupScope::WorkGroup {
            self.phase += 1;
        }
        let n = self.lanes;
        let mut out = std::mem::take(&mut self.regs[value as usize]);
        let src = source.map(|s| self.regs[s as usize].slice::<u32>(n));
        let r = collective(op, scope, ty, n, &self.regs[arg as usize], src, &mut out);
        self.regs[value as usize] = out;
        r.map_err(|(l, message)| self.fault(l, message))
    }

    fn exec(&mut self, s: &CStmt, mask: &[bool]) -> Result<()> {
        let n = self.lanes;
        match s {
            CStmt::Let {
                ops,
                value,
                src,
                bytes,
            } => {
                self.run_ops(ops, mask)?;
                if *bytes > 0 {
                    let b = n * bytes;
                    let mut out = std::mem::take(&mut self.regs[*value as usize]);
                    out.reserve_bytes(b);
                    out.bytes_mut()[..b].copy_from_slice(&self.regs[*src as usize].bytes()[..b]);
                    self.regs[*value as usize] = out;
                }
                Ok(())
            }
            CStmt::Load {
                ops,
                value,
                m,
                index,
                is,
                acquire,
                atomic,
            } => {
                self.run_ops(ops, mask)?;
                let kind = if *atomic {
                    Kind::AtomicRead
                } else {
                    Kind::Read
                };
                self.load(*value, (*m, kind), *index, *is, mask)?;
                if *acquire {
                    std::sync::atomic::fence(Ordering::SeqCst);
                }
                Ok(())
            }
            CStmt::Store {
                ops,
                m,
                index,
                is,
                value,
            } => {
                self.run_ops(ops, mask)?;
                self.store(*m, *index, *is, *value, mask)
            }
            CStmt::Atomic {
                ops,
                result,
                m,
                index,
                is,
                op,
                operand,
                compare,
            } => {
                self.run_ops(ops, mask)?;
                self.atomic(*result, *m, *index, *is, *op, *operand, *compare, mask)
            }
            CStmt::If {
                ops,
                cond,
                then,
                els,
                ..
            } => {
                self.run_ops(ops, mask)?;
                // Both masks are made before either branch runs (a branch may reuse registers).
                let (mut yes, mut no) = (self.take_mask(), self.take_mask());
                let c = self.regs[*cond as usize].slice::<u8>(n);
                let (mut any_yes, mut any_no) = (false, false);
                for (((y, o), &m), &c) in yes.iter_mut().zip(no.iter_mut()).zip(mask).zip(c) {
                    *y = m & (c != 0);
                    *o = m & (c == 0);
                    any_yes |= *y;
                    any_no |= *o;
                }
                let mut r = Ok(());
                if !then.is_empty() && any_yes {
                    r = self.exec_block(then, &yes);
                }
                if r.is_ok() && !els.is_empty() && any_no {
                    r = self.exec_block(els, &no);
                }
                self.masks.push(yes);
                self.masks.push(no);
                r
            }
            CStmt::For {
                ops,
                id,
                var,
                start,
                end,
                step,
                s,
                body,
                ..
            } => {
                self.run_ops(ops, mask)?;
                let sz = s.size();
                let b = n * sz;
                let mut v = std::mem::take(&mut self.regs[*var as usize]);
                v.reserve_bytes(b);
                v.bytes_mut()[..b].copy_from_slice(&self.regs[*start as usize].bytes()[..b]);
                self.regs[*var as usize] = v;
                self.frames.push(Frame {
                    id: *id,
                    broken: vec![false; n],
                    continued: vec![false; n],
                });
                let mut iter = self.take_mask();
                let r = (|| -> Result<()> {
                    // The step is loop-invariant: check it once.
                    with_int!(*s, T => {
                        let st = self.regs[*step as usize].slice::<T>(n);
                        if let Some(l) = (0..n).find(|&l| mask[l] && st[l].is_zero()) {
                            return Err(self.fault(l, "for loop step is 0; the loop would never end"));
                        }
                    }, _ => unreachable!("validated: integer counter"));
                    loop {
                        self.alive_into(mask, &mut iter);
                        // Work-items whose counter passed the bound leave the loop.
                        let mut any = false;
                        with_int!(*s, T => {
                            let (vv, e, st) = (self.regs[*var as usize].slice::<T>(n), self.regs[*end as usize].slice::<T>(n), self.regs[*step as usize].slice::<T>(n));
                            let broken = &mut self.frames.last_mut().expect("frame").broken;
                            for l in 0..n {
                                let go = if st[l] > T::zero() { vv[l] < e[l] } else { vv[l] > e[l] };
                                let leave = iter[l] & !go;
                                broken[l] |= leave;
                                iter[l] &= go;
                                any |= iter[l];
                            }
                        }, _ => unreachable!("validated: integer counter"));
                        if !any {
                            return Ok(());
                        }
                        self.exec_block(body, &iter)?;
                        self.frames.last_mut().expect("frame").continued.fill(false);
                        // Every counter steps, also those of work-items that left: a counter is
                        // only visible inside its loop, where those work-items no longer run.
                        let mut v = std::mem::take(&mut self.regs[*var as usize]);
                        with_int!(*s, T => {
                            let st = self.regs[*step as usize].slice::<T>(n);
                            for (x, &d) in v.slice_mut::<T>(n).iter_mut().zip(st) {
                                *x = x.add(d);
                            }
                        }, _ => unreachable!());
                        self.regs[*var as usize] = v;
                    }
                })();
                self.masks.push(iter);
                self.frames.pop();
                r
            }
            CStmt::Loop { id, body, .. } => {
                self.frames.push(Frame {
                    id: *id,
                    broken: vec![false; n],
                    continued: vec![false; n],
                });
                let mut iter = self.take_mask();
                let r = (|| -> Result<()> {
                    loop {
                        self.alive_into(mask, &mut iter);
                        if !iter.iter().any(|&m| m) {
                            return Ok(());
                        }
                        if self.c.stop.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        self.exec_block(body, &iter)?;
                        self.frames.last_mut().expect("frame").continued.fill(false);
                    }
                })();
                self.masks.push(iter);
                self.frames.pop();
                r
            }
            CStmt::Break(id) | CStmt::Continue(id) => {
                let brk = matches!(s, CStmt::Break(_));
                let f = self
                    .frames
                    .iter_mut()
                    .rev()
                    .find(|f| f.id == *id)
                    .expect("validated: enclosing loop");
                let target = if brk { &mut f.broken } else { &mut f.continued };
                for l in 0..n {
                    if mask[l] {
                        target[l] = true;
                    }
                }
                Ok(())
            }
            CStmt::Return => {
                for l in 0..n {
                    if mask[l] {
                        self.returned[l] = true;
                    }
                }
                Ok(())
            }
            CStmt::Barrier => {
                self.check_uniform(mask, "barrier")?;
                self.phase += 1;
                Ok(())
            }
            CStmt::Fence => {
                std::sync::atomic::fence(Ordering::SeqCst);
                Ok(())
            }
            CStmt::Group {
                ops,
                value,
                op,
                scope,
                arg,
                source,
                ty,
            } => {
                self.run_ops(ops, mask)?;
                self.group_op(*value, (*op, *scope), *arg, *source, *ty, mask)
            }
        }
    }
}

/// Computes collective `op` of `scope` over the `n` work-items of a work-group, cut into
/// sub-groups of [`SUB_GROUP_SIZE`](super::SUB_GROUP_SIZE) for [`GroupScope::SubGroup`]:
/// `arg` holds each work-item's operand (of type `ty`, component-major: component `c` of
/// work-item `l` at `c * n + l`), `source` each one's second operand (see
/// [`GroupOp::takes_source`]); the results go to `out` in the same layout. The one definition
/// of the collectives' results on the CPU backends (the interpreter and the compiled backend).
/// A broadcast from outside the group fails with the work-item and a message.
pub(super) fn collective(
    op: GroupOp,
    scope: GroupScope,
    ty: Type,
    n: usize,
    arg: &Column,
    source: Option<&[u32]>,
    out: &mut Column,
) -> std::result::Result<(), (usize, String)> {
    let run = match scope {
        GroupScope::WorkGroup => n,
        GroupScope::SubGroup => super::SUB_GROUP_SIZE as usize,
    };
    // The groups: runs of consecutive work-items.
    let groups = (0..n).step_by(run.max(1)).map(|b| b..(b + run).min(n));
    out.reserve_bytes(n * op.result_type(ty).size());
    if op.takes_source() {
        let src = source.expect("validated: the operation has a second operand");
        let size = ty.scalar.size();
        let a = arg.bytes();
        let o = out.bytes_mut();
        for g in groups {
            let len = g.len();
            for l in g.clone() {
                let (lane, s) = (l - g.start, src[l] as usize);
                let from = match op {
                    GroupOp::Broadcast if s >= len => {
                        let message = match scope {
                            GroupScope::WorkGroup => format!(
                                "group_broadcast from work-item {s}, but the work-group has {len}"
                            ),
                            GroupScope::SubGroup => format!(
                                "sub_group_broadcast from lane {s}, but the sub-group has {len}"
                            ),
                        };
                        return Err((l, message));
                    }
                    GroupOp::Broadcast | GroupOp::Shuffle => Some(s),
                    GroupOp::ShuffleXor => Some(lane ^ s),
                    GroupOp::ShuffleUp => lane.checked_sub(s),
                    _ => lane.checked_add(s),
                };
                let from = g.start + from.filter(|&f| f < len).unwrap_or(lane);
                for c in 0..ty.width as usize {
                    let (from, to) = ((c * n + from) * size, (c * n + l) * size);
                    o[to..to + size].copy_from_slice(&a[from..from + size]);
                }
            }
        }
        return Ok(());
    }
    if matches!(op, GroupOp::Any | GroupOp::All | GroupOp::Ballot) {
        let a = arg.slice::<u8>(n);
        let mut bits = vec![0u32; n];
        let mut flags = vec![0u8; n];
        for g in groups {
            let r = match op {
                GroupOp::Any => a[g.clone()].iter().any(|&x| x != 0),
                GroupOp::All => a[g.clone()].iter().all(|&x| x != 0),
                _ => {
                    let m = (g.clone())
                        .filter(|&l| a[l] != 0)
                        .fold(0u32, |m, l| m | 1 << (l - g.start));
                    bits[g].fill(m);
                    continue;
                }
            };
            flags[g].fill(r as u8);
        }
        if op == GroupOp::Ballot {
            out.slice_mut::<u32>(n).copy_from_slice(&bits);
        } else {
            out.slice_mut::<u8>(n).copy_from_slice(&flags);
        }
        return Ok(());
    }
    let s = ty.scalar;
    with_scalar!(s, T => {
        let a = arg.slice::<T>(n);
        let o = out.slice_mut::<T>(n);
        let (init, f): (T, fn(T, T) -> T) = match op {
            GroupOp::ReduceAdd | GroupOp::ScanInclusiveAdd | GroupOp::ScanExclusiveAdd => (T::zero(), T::add),
            GroupOp::ReduceMin | GroupOp::ScanInclusiveMin | GroupOp::ScanExclusiveMin => (T::greatest(), T::min_),
            _ => (T::least(), T::max_),
        };
        for g in groups {
            let mut acc = init;
            if op.is_reduce() {
                for &x in &a[g.clone()] {
                    acc = f(acc, x);
                }
                o[g].fill(acc);
            } else if op.is_exclusive() {
                for l in g {
                    o[l] = acc;
                    acc = f(acc, a[l]);
                }
            } else {
                for l in g {
                    acc = f(acc, a[l]);
                    o[l] = acc;
                }
            }
        }
    });
    Ok(())
}

pub(super) fn apply_atomic<T: Num>(op: AtomicOp, old: T, v: T, cmp: Option<T>) -> T {
    let bits = |x: T| -> u64 {
        let mut b = [0u8; 8];
        b[..std::mem::size_of::<T>()].copy_from_slice(bytemuck::bytes_of(&x));
        u64::from_le_bytes(b)
    };
    let from_bits = |b: u64| -> T {
        bytemuck::pod_read_unaligned(&b.to_le_bytes()[..std::mem::size_of::<T>()])
    };
    match op {
        AtomicOp::Add => old.add(v),
        AtomicOp::Sub => old.sub(v),
        AtomicOp::Min => old.min_(v),
        AtomicOp::Max => old.max_(v),
        AtomicOp::And => from_bits(bits(old) & bits(v)),
        AtomicOp::Or => from_bits(bits(old) | bits(v)),
        AtomicOp::Xor => from_bits(bits(old) ^ bits(v)),
        AtomicOp::Exchange => v,
        AtomicOp::CompareExchange => {
            if bits(old) == bits(cmp.expect("validated")) {
                v
            } else {
                old
            }
        }
    }
}

/// Atomically replaces element `i` (of `T`'s size) at `base` by `f(old)`; returns the old value.
///
/// # Safety
/// `base` must point to memory that holds at least `i + 1` elements of `T` and is only accessed
/// atomically.
pub(super) unsafe fn atomic_rmw<T: Num>(base: *const u8, i: usize, f: impl Fn(T) -> T) -> T {
    words!(std::mem::size_of::<T>(), W, A => {
        let cell = &*(base as *const A).add(i);
        let mut cur: W = cell.load(Ordering::Relaxed);
        loop {
            let old: T = bytemuck::pod_read_unaligned(&bytemuck::bytes_of(&cur)[..std::mem::size_of::<T>()]);
            let new: W = bytemuck::pod_read_unaligned(&bytemuck::bytes_of(&f(old))[..std::mem::size_of::<W>()]);
            // Sequentially consistent whatever the IR asks for (`ir::AtomicOrder`).
            match cell.compare_exchange_weak(cur, new, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => return old,
                Err(x) => cur = x,
            }
        }
    })
}

//! Four work-items per iteration in SIMD lanes: the vector variant of a kernel's regions.
//!
//! A kernel whose values are all 32-bit scalars or `bool`s, without private arrays, atomics or
//! stubs, its local arrays of 32-bit elements ([`vectorizable`]), is compiled a second time
//! with every IR value a 4-lane vector (`f32x4`, `i32x4`; a `bool` is a lane mask of all ones
//! or zeros), one lane per work-item of four consecutive local ids; every region of it, when
//! it has barriers or collectives. Divergent control flow runs under an execution mask, as
//! the interpreter's columns do: an `if` runs each side for the lanes that take it (and skips
//! a side no lane takes), a loop runs while any lane is in it, `break`, `continue` and
//! `return` remove lanes. An access to a buffer or local array whose four indices are
//! consecutive and whose lanes are all active is one vector load or store; otherwise each
//! active lane accesses its element alone (a gather or scatter), so an inactive lane never
//! touches memory. Bounds are checked for the active lanes, with the same error, except where
//! [`crate::ir::ranges`] proves the access in bounds: then a consecutive access tests only
//! that the mask is full (and the proof's preconditions on the launch's arguments, which
//! leave the work-item loop), and a lane-by-lane access tests nothing. What has no vector
//! instruction (integer division, shifts by per-lane amounts, the transcendental built-ins,
//! some conversions) is computed lane by lane with the scalar code, so the results are the
//! scalar backend's, bit for bit.
//!
//! **Regions.** A region of a kernel with barriers starts with the four work-items' bytes of
//! the group level's mask as its lanes (none set: the next four). What crosses a barrier is
//! in the work-items' records, which [`super::plan`] lays out in blocks of four work-items so
//! that a slot's four lanes are side by side: a value another region reads, a private
//! variable and an operand of the next group-level statement are one vector load or store
//! (under the mask: the inactive lanes' scalars are kept), a `bool` or flag four bytes. A
//! `return`, or a `break` or `continue` of a group-level loop, sets the active lanes' flags.
//! The group level ([`super::run`]) is the scalar path's: the same masks, the same
//! collectives in local-id order, the same divergence errors.
//!
//! The launch uses this variant when the work-group's size in dimension 0 is a multiple of
//! four (the first such launch compiles it, [`super::JitProgram`]), and the scalar functions
//! otherwise. An index that all lanes share is one scalar load.
//! A fault names the first faulting lane's work-item.

use super::expr::{direct_binary, from_bits};
use super::lower::{cl_ty, Gen, VarOf, MEM, TABLE};
use super::Site;
use crate::ir::{
    walk_block, BinaryOp, Builtin, Expr, ExprId, Function, Literal, MathFn, Mem, ParamKind, Scalar,
    Stmt, Type, UnaryOp, ValueId,
};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{self as cl, types, Endianness, InstBuilder, MemFlags, Value};
use cranelift_frontend::{FunctionBuilder, Variable};
use std::collections::HashMap;

/// Work-items per vector.
pub(super) const LANES: u32 = 4;

fn lane_type(t: Type) -> bool {
    t.width == 1
        && matches!(
            t.scalar,
            Scalar::I32 | Scalar::U32 | Scalar::F32 | Scalar::Bool
        )
}

/// Whether `f` has a vector variant (every region of it).
pub(super) fn vectorizable(f: &Function) -> bool {
    // Local arrays of 32-bit elements (a `bool` element is a byte).
    if !f.stubs.is_empty()
        || f.locals
            .iter()
            .any(|d| !lane_type(d.elem) || d.elem.scalar == Scalar::Bool)
    {
        return false;
    }
    if f.privates
        .iter()
        .any(|d| d.len.is_some() || !lane_type(d.elem))
    {
        return false;
    }
    let params_ok = f.params.iter().all(|p| match p.kind {
        // Buffers of structs take the scalar path (their fields are strided).
        ParamKind::Buffer { elem, .. } => elem
            .value()
            .is_some_and(|t| lane_type(t) && t.scalar != Scalar::Bool),
        ParamKind::Scalar(t) => lane_type(t),
        // Read only by the launch (an expression cannot read it).
        ParamKind::LocalLen => true,
    });
    if !params_ok
        || f.values.iter().any(|v| !lane_type(v.ty))
        || f.exprs.iter().any(|(_, e, t)| {
            !lane_type(t)
                || matches!(e, Expr::Stub(..))
                || matches!(e, Expr::Builtin(b) if b.is_sub_group())
        })
    {
        return false;
    }
    let mut ok = true;
    walk_block(&f.body, &mut |s| {
        // Barriers and collectives run at the group level, between the regions.
        if matches!(s, Stmt::Atomic { .. } | Stmt::AtomicLoad { .. }) {
            ok = false;
        }
    });
    ok && !(f.body.iter().any(super::plan::has_sync)
        && gathers_in_loops(f, &counters(f), &f.body, &mut Vec::new()))
}

/// The vector type of a lane type.
fn vty(s: Scalar) -> cl::Type {
    if s == Scalar::F32 {
        types::F32X4
    } else {
        types::I32X4
    }
}

/// The start and step of every `for` loop's counter: a counter whose start is uniform (or
/// consecutive) and whose step is uniform stays so in every iteration (all lanes step
/// together, in a region's vector loop as at the group level).
pub(super) type Counters = HashMap<ValueId, (ExprId, ExprId)>;

pub(super) fn counters(f: &Function) -> Counters {
    let mut c = HashMap::new();
    walk_block(&f.body, &mut |s| {
        if let Stmt::For {
            var, start, step, ..
        } = s
        {
            c.insert(*var, (*start, *step));
        }
    });
    c
}

/// Whether `e` has no lane-dependent part: literals, parameters, lengths, work-group ids and
/// sizes, counters with a uniform start and step, and pure operations on them.
fn uniform(f: &Function, c: &Counters, e: ExprId) -> bool {
    match f.exprs.get(e) {
        Expr::Literal(_) | Expr::Param(_) | Expr::BufferLen(_) => true,
        Expr::Builtin(b) => !matches!(
            b,
            Builtin::GlobalId(_) | Builtin::LocalId(_) | Builtin::LocalLinearId
        ),
        Expr::Value(v) => c
            .get(v)
            .is_some_and(|&(s, st)| uniform(f, c, s) && uniform(f, c, st)),
        Expr::Unary(_, a) | Expr::Cast(a, _) => uniform(f, c, *a),
        Expr::Binary(_, a, b) => uniform(f, c, *a) && uniform(f, c, *b),
        _ => false,
    }
}

/// Whether the four lanes of `e` are consecutive integers (the first lane's value plus
/// 0, 1, 2, 3, up to wrapping): the local or global id in dimension 0, plus or minus
/// something uniform, or a counter starting there with a uniform step.
fn consecutive(f: &Function, c: &Counters, e: ExprId) -> bool {
    match f.exprs.get(e) {
        Expr::Builtin(Builtin::GlobalId(0) | Builtin::LocalId(0) | Builtin::LocalLinearId) => true,
        Expr::Value(v) => c
            .get(v)
            .is_some_and(|&(s, st)| consecutive(f, c, s) && uniform(f, c, st)),
        Expr::Binary(BinaryOp::Add, a, b) => {
            (consecutive(f, c, *a) && uniform(f, c, *b))
                || (uniform(f, c, *a) && consecutive(f, c, *b))
        }
        Expr::Binary(BinaryOp::Sub, a, b) => consecutive(f, c, *a) && uniform(f, c, *b),
        Expr::Cast(a, to) => {
            matches!(to, Scalar::I32 | Scalar::U32)
                && matches!(f.exprs.ty(*a).scalar, Scalar::I32 | Scalar::U32)
                && consecutive(f, c, *a)
        }
        _ => false,
    }
}

/// Whether `e` reads one of `vars` (through expressions).
fn reads_any(f: &Function, e: ExprId, vars: &[ValueId]) -> bool {
    match f.exprs.get(e) {
        Expr::Value(v) => vars.contains(v),
        x => crate::ir::expr_operands(x)
            .into_iter()
            .any(|o| reads_any(f, o, vars)),
    }
}

/// Whether a loop inside a region of a kernel with barriers indexes memory with its counter
/// lane by lane (neither consecutive nor uniform: each work-item walks its own stretch, as
/// in a reduction that gives every work-item a contiguous chunk). Such a loop runs faster one
/// work-item at a time than as four-lane gathers, so the kernel keeps the scalar code.
fn gathers_in_loops(f: &Function, c: &Counters, block: &[Stmt], vars: &mut Vec<ValueId>) -> bool {
    block.iter().any(|s| match s {
        Stmt::Load { mem, index, .. } | Stmt::Store { mem, index, .. } => {
            matches!(mem, Mem::Buffer(_) | Mem::Local(_))
                && reads_any(f, *index, vars)
                && !consecutive(f, c, *index)
                && !uniform(f, c, *index)
        }
        Stmt::If {
            then, otherwise, ..
        } => gathers_in_loops(f, c, then, vars) || gathers_in_loops(f, c, otherwise, vars),
        Stmt::For { var, body, .. } => {
            let local = !super::plan::has_sync(s);
            if local {
                vars.push(*var);
            }
            let g = gathers_in_loops(f, c, body, vars);
            if local {
                vars.pop();
            }
            g
        }
        Stmt::Loop { body, .. } => gathers_in_loops(f, c, body, vars),
        _ => false,
    })
}

fn lanes_flags() -> MemFlags {
    MemFlags::new().with_endianness(Endianness::Little)
}

/// Four bytes (little-endian in an `i32`: lane `k`'s in byte `k`) as a lane mask: all ones
/// where the byte is nonzero.
pub(super) fn bytes_to_lanes(b: &mut FunctionBuilder, bytes: Value) -> Value {
    let v = b.ins().splat(types::I32X4, bytes);
    let sel: Vec<u8> = (0..LANES)
        .flat_map(|k| (0xffu32 << (8 * k)).to_le_bytes())
        .collect();
    let c = b.func.dfg.constants.insert(sel.into());
    let sel = b.ins().vconst(types::I32X4, c);
    let v = b.ins().band(v, sel);
    let z = b.ins().iconst(types::I32, 0);
    let z = b.ins().splat(types::I32X4, z);
    b.ins().icmp(IntCC::NotEqual, v, z)
}

/// A lane mask as four bytes, 1 where the lane is set (the inverse of [`bytes_to_lanes`]).
fn lanes_to_bytes(b: &mut FunctionBuilder, m: Value) -> Value {
    let bits = b.ins().vhigh_bits(types::I32, m);
    // Bit k to bit 8k: the products of the four bits never meet another byte's bit 0.
    let spread = b.ins().imul_imm(bits, 0x0020_4081);
    b.ins().band_imm(spread, 0x0101_0101)
}

impl Gen<'_, '_> {
    /// The body of the vector variant: `stmts` for four work-items, those of the region's
    /// mask active at the start (all of them in a one-region kernel); the private variables
    /// `synced` are loaded from the record (the others start at zero).
    pub(super) fn vector_body(&mut self, stmts: &[Stmt], synced: &[(crate::ir::PrivateId, u32)]) {
        let m = match self.entry_mask {
            Some(m) => m,
            None => self.splat_i32(-1),
        };
        self.set_mask(m);
        for (i, d) in self.f.privates.iter_enumerated() {
            let x = match synced.iter().find(|&&(p, _)| p == i) {
                Some(&(_, off)) => self.vrec_load(off, d.elem.scalar),
                None => self.vzero(d.elem.scalar),
            };
            let v = self.vvar(VarOf::Private(i), d.elem.scalar);
            self.b.def_var(v, x);
        }
        self.vblock(stmts);
    }

    /// The four lanes' scalars of record slot `off` (a lane type).
    fn vrec_load(&mut self, off: u32, s: Scalar) -> Value {
        let (base, at) = self.rec_at(off, s.size());
        if s == Scalar::Bool {
            let bytes = self.b.ins().load(types::I32, MEM, base, at);
            bytes_to_lanes(&mut self.b, bytes)
        } else {
            self.b.ins().load(vty(s), MEM, base, at)
        }
    }

    /// Stores the lanes of `x` selected by mask `m` into record slot `off` (a lane type);
    /// the other lanes' scalars are kept.
    pub(super) fn vrec_store(&mut self, off: u32, s: Scalar, x: Value, m: Value) {
        let (base, at) = self.rec_at(off, s.size());
        if s == Scalar::Bool {
            let old = self.b.ins().load(types::I32, MEM, base, at);
            let vb = lanes_to_bytes(&mut self.b, x);
            let mb = lanes_to_bytes(&mut self.b, m);
            let mb = self.b.ins().imul_imm(mb, 0xff);
            let keep = self.b.ins().band_not(old, mb);
            let put = self.b.ins().band(vb, mb);
            let new = self.b.ins().bor(keep, put);
            self.b.ins().store(MEM, new, base, at);
        } else {
            let ty = vty(s);
            let old = self.b.ins().load(ty, MEM, base, at);
            let ml = self.as_lanes(m, ty);
            let new = self.b.ins().bitselect(ml, x, old);
            self.b.ins().store(MEM, new, base, at);
        }
    }

    /// Sets flag byte `off` of the active lanes (they returned, or left a group-level loop).
    fn vset_flag(&mut self, off: u32) {
        let (base, at) = self.rec_at(off, 1);
        let m = self.mask();
        let old = self.b.ins().load(types::I32, MEM, base, at);
        let set = lanes_to_bytes(&mut self.b, m);
        let new = self.b.ins().bor(old, set);
        self.b.ins().store(MEM, new, base, at);
    }

    /// Base and length of a buffer or local array.
    fn mem_base_len(&mut self, mem: Mem) -> (Value, Value) {
        match mem {
            Mem::Buffer(p) => self.mem_arg(self.bufs_p, p.index()),
            Mem::Local(l) => self.mem_arg(self.locs_p, l.index()),
            _ => unreachable!("vectorized kernels use buffers and local arrays only"),
        }
    }

    fn mask(&mut self) -> Value {
        let c = self.cur.expect("vector mode");
        self.b.use_var(c)
    }

    fn set_mask(&mut self, m: Value) {
        let c = self.cur.expect("vector mode");
        self.b.def_var(c, m);
    }

    fn splat_i32(&mut self, v: i64) -> Value {
        let x = self.b.ins().iconst(types::I32, v & 0xffff_ffff);
        self.b.ins().splat(types::I32X4, x)
    }

    fn vzero(&mut self, s: Scalar) -> Value {
        let z = self.zero(if s == Scalar::Bool { Scalar::I32 } else { s });
        self.b.ins().splat(vty(s), z)
    }

    fn iota(&mut self) -> Value {
        let bytes: Vec<u8> = (0..LANES).flat_map(|i| i.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(bytes.into());
        self.b.ins().vconst(types::I32X4, c)
    }

    /// A scalar splat into the four lanes (`bool`s become masks).
    fn splat(&mut self, x: Value, s: Scalar) -> Value {
        if s == Scalar::Bool {
            let w = self.b.ins().uextend(types::I32, x);
            let m = self.b.ins().ineg(w);
            return self.b.ins().splat(types::I32X4, m);
        }
        self.b.ins().splat(vty(s), x)
    }

    /// `m` reinterpreted as lanes of `ty` (a mask selecting floats).
    fn as_lanes(&mut self, m: Value, ty: cl::Type) -> Value {
        if ty == types::I32X4 {
            m
        } else {
            self.b.ins().bitcast(ty, lanes_flags(), m)
        }
    }

    pub(super) fn vvar(&mut self, of: VarOf, s: Scalar) -> Variable {
        if let Some(v) = self.vars.get(&(of, 0)) {
            return *v;
        }
        let v = self.b.declare_var(vty(s));
        self.vars.insert((of, 0), v);
        v
    }

    /// The local linear id of lane `k`.
    fn lane_id(&mut self, k: u32) -> Value {
        let l = self.b.use_var(self.lane);
        self.b.ins().iadd_imm(l, k as i64)
    }

    /// `f` applied lane by lane to scalars extracted from `args` (of lane types `ss`): the
    /// scalar code for what has no vector instruction. Faults name the lane's work-item.
    fn per_lane(
        &mut self,
        args: &[Value],
        ss: &[Scalar],
        out: Scalar,
        mut f: impl FnMut(&mut Self, &[Value]) -> Value,
    ) -> Value {
        let mut acc = self.vzero(out);
        for k in 0..LANES {
            let xs: Vec<Value> = args
                .iter()
                .zip(ss)
                .map(|(&v, &s)| {
                    let x = self.b.ins().extractlane(v, k as u8);
                    if s == Scalar::Bool {
                        let b = self.b.ins().ireduce(types::I8, x);
                        self.b.ins().band_imm(b, 1)
                    } else {
                        x
                    }
                })
                .collect();
            let lane = self.lane_id(k);
            self.fault_lane = Some(lane);
            let r = f(self, &xs);
            let r = if out == Scalar::Bool {
                let w = self.b.ins().uextend(types::I32, r);
                self.b.ins().ineg(w)
            } else {
                r
            };
            acc = self.b.ins().insertlane(acc, r, k as u8);
        }
        self.fault_lane = None;
        acc
    }

    // ---- statements ----

    fn vblock(&mut self, stmts: &[Stmt]) {
        self.memo.push(Default::default());
        for s in stmts {
            self.vstmt(s);
        }
        self.pop_scope();
    }

    /// Faults at `site` (naming the first such lane) when `bad` holds for an active lane;
    /// `detail(lane)` gives the index and length the fault reports, computed only then.
    pub(super) fn lanes_fault(
        &mut self,
        bad: Value,
        site: Site,
        mut detail: impl FnMut(&mut Self, u8) -> (Value, Value),
    ) {
        let m = self.mask();
        let bad = self.b.ins().band(bad, m);
        let any = self.b.ins().vany_true(bad);
        let (cold, ok) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(cold);
        self.b.ins().brif(any, cold, &[], ok, &[]);
        self.b.switch_to_block(cold);
        for k in 0..LANES as u8 {
            let bk = self.b.ins().extractlane(bad, k);
            let (index, len) = detail(self, k);
            let lane = self.lane_id(k as u32);
            self.fault_lane = Some(lane);
            self.fault_if(bk, site.clone(), index, len);
        }
        self.fault_lane = None;
        self.b.ins().jump(ok, &[]);
        self.b.switch_to_block(ok);
    }

    /// [`Gen::lanes_fault`] for faults without an index.
    pub(super) fn lanes_fault_plain(&mut self, bad: Value, site: Site) {
        let zi = self.b.ins().iconst(types::I64, 0);
        self.lanes_fault(bad, site, |_, _| (zi, zi));
    }

    /// Defines IR value `v` as `x`, in a register and, if another region reads it, in the
    /// active lanes' records.
    fn define_lanes(&mut self, v: ValueId, x: Value) {
        let s = self.f.values[v].ty.scalar;
        let var = self.vvar(VarOf::Value(v), s);
        self.b.def_var(var, x);
        if let Some(slot) = self.plan.values.get(&v).copied() {
            let m = self.mask();
            self.vrec_store(slot.off, s, x, m);
        }
    }

    /// Checks the active lanes' indices against the memory's length; returns the base address
    /// and the indices as `i32x4`.
    fn lanes_index(&mut self, mem: Mem, index: ExprId) -> (Value, Value) {
        let is = self.f.exprs.ty(index).scalar;
        let idx = self.vexpr(index);
        let (base, len) = self.mem_base_len(mem);
        if self.proof.proven(mem, index) {
            return (base, idx);
        }
        // Lengths beyond u32::MAX admit every unsigned 32-bit index.
        let cap = self.b.ins().iconst(types::I64, u32::MAX as i64);
        let big = self.b.ins().icmp(IntCC::UnsignedGreaterThan, len, cap);
        let len32 = self.b.ins().ireduce(types::I32, len);
        let lenv = self.b.ins().splat(types::I32X4, len32);
        let mut bad = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, idx, lenv);
        let bigw = self.b.ins().uextend(types::I32, big);
        let bigm = self.b.ins().ineg(bigw);
        let bigv = self.b.ins().splat(types::I32X4, bigm);
        bad = self.b.ins().band_not(bad, bigv);
        if is.is_signed() {
            let z = self.splat_i32(0);
            let neg = self.b.ins().icmp(IntCC::SignedLessThan, idx, z);
            bad = self.b.ins().bor(bad, neg);
        }
        let at = self.at;
        self.lanes_fault(
            bad,
            Site::OutOfBounds {
                mem,
                scalar: is,
                at,
            },
            |g, k| {
                let ik = g.b.ins().extractlane(idx, k);
                let ik = if is.is_signed() {
                    g.b.ins().sextend(types::I64, ik)
                } else {
                    g.b.ins().uextend(types::I64, ik)
                };
                (ik, len)
            },
        );
        (base, idx)
    }

    /// Whether the four indices are consecutive and every lane is active: then the access is
    /// one vector access at the first index.
    fn whole_vector(&mut self, idx: Value) -> Value {
        let i0 = self.b.ins().extractlane(idx, 0);
        let s0 = self.b.ins().splat(types::I32X4, i0);
        let io = self.iota();
        let seq = self.b.ins().iadd(s0, io);
        let eq = self.b.ins().icmp(IntCC::Equal, idx, seq);
        let m = self.mask();
        let both = self.b.ins().band(eq, m);
        self.b.ins().vall_true(both)
    }

    fn elem_addr(&mut self, base: Value, i: Value) -> Value {
        let i = self.b.ins().uextend(types::I64, i);
        let off = self.b.ins().imul_imm(i, 4);
        self.b.ins().iadd(base, off)
    }

    /// The fast path of an access at consecutive indices: when every lane is active and the
    /// four elements lie inside the buffer (without wrapping), branches to `fast` with the
    /// address of the first element; else to `slow`.
    fn consecutive_access(
        &mut self,
        mem: Mem,
        index: ExprId,
        fast: cl::Block,
        slow: cl::Block,
    ) -> Value {
        let is = self.f.exprs.ty(index).scalar;
        let idx = self.vexpr(index);
        let (base, len) = self.mem_base_len(mem);
        let i0 = self.b.ins().extractlane(idx, 0);
        let i0 = if is.is_signed() {
            self.b.ins().sextend(types::I64, i0)
        } else {
            self.b.ins().uextend(types::I64, i0)
        };
        // Proven in bounds for every active lane (without wrapping, so the lanes' elements
        // are consecutive in memory): only the mask is tested, and the proof's
        // preconditions, which do not change in the work-group (they leave the loop).
        let inside = match self.in_bounds(mem, index) {
            Some(ok) => ok,
            None => {
                // Lanes past 2^31 (2^32 unsigned) would wrap: not consecutive in memory.
                let wrap = self
                    .b
                    .ins()
                    .iconst(types::I64, if is.is_signed() { 1 << 31 } else { 1 << 32 });
                let lim = self.b.ins().umin(len, wrap);
                let end = self.b.ins().iadd_imm(i0, LANES as i64);
                self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, lim)
            }
        };
        let m = self.mask();
        let full = self.b.ins().vall_true(m);
        let ok = self.b.ins().band(inside, full);
        let off = self.b.ins().imul_imm(i0, 4);
        let addr = self.b.ins().iadd(base, off);
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        addr
    }

    fn vload(&mut self, mem: Mem, index: ExprId) -> Value {
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        let ty = vty(s);
        if consecutive(self.f, &self.counters, index) {
            let (fast, slow, merge) = (
                self.b.create_block(),
                self.b.create_block(),
                self.b.create_block(),
            );
            let out = self.b.append_block_param(merge, ty);
            let addr = self.consecutive_access(mem, index, fast, slow);
            self.b.switch_to_block(fast);
            let v = self.b.ins().load(ty, MEM, addr, 0);
            self.b.ins().jump(merge, &[cl::BlockArg::Value(v)]);
            self.b.switch_to_block(slow);
            let v = self.vload_general(mem, index);
            self.b.ins().jump(merge, &[cl::BlockArg::Value(v)]);
            self.b.switch_to_block(merge);
            return out;
        }
        // The same index in every active lane (a loop counter, say): one scalar load.
        let is = self.f.exprs.ty(index).scalar;
        let idx = self.vexpr(index);
        let (base, len) = self.mem_base_len(mem);
        let i0 = self.b.ins().extractlane(idx, 0);
        let s0 = self.b.ins().splat(types::I32X4, i0);
        let same = self.b.ins().icmp(IntCC::Equal, idx, s0);
        let m = self.mask();
        let same = self.b.ins().band(same, m);
        let all = self.b.ins().vall_true(same);
        let i0 = if is.is_signed() {
            self.b.ins().sextend(types::I64, i0)
        } else {
            self.b.ins().uextend(types::I64, i0)
        };
        let inside = match self.in_bounds(mem, index) {
            Some(ok) => ok,
            None => self.b.ins().icmp(IntCC::UnsignedLessThan, i0, len),
        };
        let ok = self.b.ins().band(all, inside);
        let (fast, slow, merge) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let out = self.b.append_block_param(merge, ty);
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        let off = self.b.ins().imul_imm(i0, 4);
        let addr = self.b.ins().iadd(base, off);
        let x = self.b.ins().load(cl_ty(s), MEM, addr, 0);
        let v = self.b.ins().splat(ty, x);
        self.b.ins().jump(merge, &[cl::BlockArg::Value(v)]);
        self.b.switch_to_block(slow);
        let v = self.vload_general(mem, index);
        self.b.ins().jump(merge, &[cl::BlockArg::Value(v)]);
        self.b.switch_to_block(merge);
        out
    }

    fn vstore(&mut self, mem: Mem, index: ExprId, v: Value) {
        if consecutive(self.f, &self.counters, index) {
            let (fast, slow, merge) = (
                self.b.create_block(),
                self.b.create_block(),
                self.b.create_block(),
            );
            let addr = self.consecutive_access(mem, index, fast, slow);
            self.b.switch_to_block(fast);
            self.b.ins().store(MEM, v, addr, 0);
            self.b.ins().jump(merge, &[]);
            self.b.switch_to_block(slow);
            self.vstore_general(mem, index, v);
            self.b.ins().jump(merge, &[]);
            self.b.switch_to_block(merge);
            return;
        }
        self.vstore_general(mem, index, v)
    }

    fn vload_general(&mut self, mem: Mem, index: ExprId) -> Value {
        let s = self.f.mem_elem(mem).expect("validated memory").scalar;
        let (ty, ety) = (vty(s), cl_ty(s));
        let (base, idx) = self.lanes_index(mem, index);
        let (whole, some, merge) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let out = self.b.append_block_param(merge, ty);
        let whole_ok = self.whole_vector(idx);
        let z = self.vzero(s);
        self.b.ins().brif(whole_ok, whole, &[], some, &[]);
        self.b.switch_to_block(whole);
        let i0 = self.b.ins().extractlane(idx, 0);
        let a = self.elem_addr(base, i0);
        let v = self.b.ins().load(ty, MEM, a, 0);
        self.b.ins().jump(merge, &[cl::BlockArg::Value(v)]);
        // Lane by lane, the active lanes only.
        self.b.switch_to_block(some);
        let m = self.mask();
        let mut acc = z;
        for k in 0..LANES {
            let (on, next) = (self.b.create_block(), self.b.create_block());
            let p = self.b.append_block_param(next, ty);
            let mk = self.b.ins().extractlane(m, k as u8);
            self.b
                .ins()
                .brif(mk, on, &[], next, &[cl::BlockArg::Value(acc)]);
            self.b.switch_to_block(on);
            let ik = self.b.ins().extractlane(idx, k as u8);
            let a = self.elem_addr(base, ik);
            let x = self.b.ins().load(ety, MEM, a, 0);
            let with = self.b.ins().insertlane(acc, x, k as u8);
            self.b.ins().jump(next, &[cl::BlockArg::Value(with)]);
            self.b.switch_to_block(next);
            acc = p;
        }
        self.b.ins().jump(merge, &[cl::BlockArg::Value(acc)]);
        self.b.switch_to_block(merge);
        out
    }

    fn vstore_general(&mut self, mem: Mem, index: ExprId, v: Value) {
        let (base, idx) = self.lanes_index(mem, index);
        let (whole, some, merge) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let whole_ok = self.whole_vector(idx);
        self.b.ins().brif(whole_ok, whole, &[], some, &[]);
        self.b.switch_to_block(whole);
        let i0 = self.b.ins().extractlane(idx, 0);
        let a = self.elem_addr(base, i0);
        self.b.ins().store(MEM, v, a, 0);
        self.b.ins().jump(merge, &[]);
        self.b.switch_to_block(some);
        let m = self.mask();
        for k in 0..LANES {
            let (on, next) = (self.b.create_block(), self.b.create_block());
            let mk = self.b.ins().extractlane(m, k as u8);
            self.b.ins().brif(mk, on, &[], next, &[]);
            self.b.switch_to_block(on);
            let ik = self.b.ins().extractlane(idx, k as u8);
            let a = self.elem_addr(base, ik);
            let x = self.b.ins().extractlane(v, k as u8);
            self.b.ins().store(MEM, x, a, 0);
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(next);
        }
        self.b.ins().jump(merge, &[]);
        self.b.switch_to_block(merge);
    }

    fn vloop_vars(&mut self, id: crate::ir::LoopId) -> (Variable, Variable) {
        let &(_, brk, cont) = self
            .vloops
            .iter()
            .rev()
            .find(|l| l.0 == id)
            .expect("validated: enclosing loop");
        (brk, cont)
    }

    fn vstmt(&mut self, s: &Stmt) {
        if let Stmt::Load { at, .. }
        | Stmt::Store { at, .. }
        | Stmt::Atomic { at, .. }
        | Stmt::AtomicLoad { at, .. } = s
        {
            self.at = *at;
        }
        match s {
            Stmt::Let { value, expr } => {
                let x = self.vexpr(*expr);
                self.define_lanes(*value, x);
            }
            Stmt::Load {
                value, mem, index, ..
            } => {
                let x = match self.private_var(*mem) {
                    Some(p) => {
                        let s = self.f.privates[p].elem.scalar;
                        let v = self.vvar(VarOf::Private(p), s);
                        self.b.use_var(v)
                    }
                    None => self.vload(*mem, *index),
                };
                self.define_lanes(*value, x);
            }
            Stmt::Store {
                mem, index, value, ..
            } => {
                let x = self.vexpr(*value);
                match self.private_var(*mem) {
                    Some(p) => {
                        let s = self.f.privates[p].elem.scalar;
                        let v = self.vvar(VarOf::Private(p), s);
                        let old = self.b.use_var(v);
                        let m = self.mask();
                        let m = self.as_lanes(m, vty(s));
                        let new = self.b.ins().bitselect(m, x, old);
                        self.b.def_var(v, new);
                    }
                    None => self.vstore(*mem, *index, x),
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.vexpr(*cond);
                let m0 = self.mask();
                let t = self.b.ins().band(m0, c);
                let e = self.b.ins().band_not(m0, c);
                let (tb, j1, eb, j2) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                // Each side runs when a lane takes it (an empty side is not tested).
                self.set_mask(t);
                if then.is_empty() {
                    self.b.ins().jump(j1, &[]);
                } else {
                    let any_t = self.b.ins().vany_true(t);
                    self.b.ins().brif(any_t, tb, &[], j1, &[]);
                    self.b.switch_to_block(tb);
                    self.vblock(then);
                    self.b.ins().jump(j1, &[]);
                }
                self.b.switch_to_block(j1);
                let after_then = self.mask();
                self.set_mask(e);
                if otherwise.is_empty() {
                    self.b.ins().jump(j2, &[]);
                } else {
                    let any_e = self.b.ins().vany_true(e);
                    self.b.ins().brif(any_e, eb, &[], j2, &[]);
                    self.b.switch_to_block(eb);
                    self.vblock(otherwise);
                    self.b.ins().jump(j2, &[]);
                }
                self.b.switch_to_block(j2);
                let after_else = self.mask();
                let m = self.b.ins().bor(after_then, after_else);
                self.set_mask(m);
            }
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => {
                let s = self.f.values[*var].ty.scalar;
                let (v0, e, st) = (self.vexpr(*start), self.vexpr(*end), self.vexpr(*step));
                let z = self.splat_i32(0);
                let zero_step = self.b.ins().icmp(IntCC::Equal, st, z);
                self.lanes_fault_plain(zero_step, Site::ZeroStep);
                let up = if s.is_signed() {
                    self.b.ins().icmp(IntCC::SignedGreaterThan, st, z)
                } else {
                    self.splat_i32(-1)
                };
                self.hoist_divisions(body, Some(*var));
                self.define_lanes(*var, v0);
                let (brk, cont) = (
                    self.b.declare_var(types::I32X4),
                    self.b.declare_var(types::I32X4),
                );
                self.b.def_var(brk, z);
                self.b.def_var(cont, z);
                let (hdr, bodyb, latch, exit) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                self.b.ins().jump(hdr, &[]);
                self.b.switch_to_block(hdr);
                let vv = self.vvar(VarOf::Value(*var), s);
                let cur = self.b.use_var(vv);
                let (lt, gt) = if s.is_signed() {
                    (IntCC::SignedLessThan, IntCC::SignedGreaterThan)
                } else {
                    (IntCC::UnsignedLessThan, IntCC::UnsignedGreaterThan)
                };
                let below = self.b.ins().icmp(lt, cur, e);
                let above = self.b.ins().icmp(gt, cur, e);
                let go = self.b.ins().bitselect(up, below, above);
                let m = self.mask();
                let leaving = self.b.ins().band_not(m, go);
                let bv = self.b.use_var(brk);
                let bv = self.b.ins().bor(bv, leaving);
                self.b.def_var(brk, bv);
                let m = self.b.ins().band(m, go);
                self.set_mask(m);
                let any = self.b.ins().vany_true(m);
                super::lower::loop_branch(&mut self.b, any, bodyb, exit);
                self.b.switch_to_block(bodyb);
                self.vloops.push((*id, brk, cont));
                self.vblock(body);
                self.vloops.pop();
                self.b.ins().jump(latch, &[]);
                self.b.switch_to_block(latch);
                let m = self.mask();
                let c = self.b.use_var(cont);
                let m = self.b.ins().bor(m, c);
                self.set_mask(m);
                self.b.def_var(cont, z);
                let cur = self.b.use_var(vv);
                let next = self.b.ins().iadd(cur, st);
                self.define_lanes(*var, next);
                self.b.ins().jump(hdr, &[]);
                self.b.switch_to_block(exit);
                let out = self.b.use_var(brk);
                self.set_mask(out);
            }
            Stmt::Loop { id, body } => {
                self.hoist_divisions(body, None);
                let z = self.splat_i32(0);
                let (brk, cont) = (
                    self.b.declare_var(types::I32X4),
                    self.b.declare_var(types::I32X4),
                );
                self.b.def_var(brk, z);
                self.b.def_var(cont, z);
                let (hdr, test, bodyb, exit) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                self.b.ins().jump(hdr, &[]);
                self.b.switch_to_block(hdr);
                self.poll_stop(test);
                self.b.switch_to_block(test);
                let m = self.mask();
                let any = self.b.ins().vany_true(m);
                super::lower::loop_branch(&mut self.b, any, bodyb, exit);
                self.b.switch_to_block(bodyb);
                self.vloops.push((*id, brk, cont));
                self.vblock(body);
                self.vloops.pop();
                let m = self.mask();
                let c = self.b.use_var(cont);
                let m = self.b.ins().bor(m, c);
                self.set_mask(m);
                self.b.def_var(cont, z);
                self.b.ins().jump(hdr, &[]);
                self.b.switch_to_block(exit);
                let out = self.b.use_var(brk);
                self.set_mask(out);
            }
            Stmt::Break(id) | Stmt::Continue(id) if !self.vloops.iter().any(|l| l.0 == *id) => {
                // A group-level loop: the lanes leave the region, the group level sees their
                // flags.
                let (b, c) = self.plan.loop_flags[id];
                self.vset_flag(if matches!(s, Stmt::Break(_)) { b } else { c });
                let z = self.splat_i32(0);
                self.set_mask(z);
            }
            Stmt::Break(id) | Stmt::Continue(id) => {
                let (brk, cont) = self.vloop_vars(*id);
                let target = if matches!(s, Stmt::Break(_)) {
                    brk
                } else {
                    cont
                };
                let m = self.mask();
                let t = self.b.use_var(target);
                let t = self.b.ins().bor(t, m);
                self.b.def_var(target, t);
                let z = self.splat_i32(0);
                self.set_mask(z);
            }
            Stmt::Return => {
                if !self.plan.simple {
                    self.vset_flag(self.plan.returned);
                }
                let z = self.splat_i32(0);
                self.set_mask(z);
            }
            Stmt::MemFence { .. } => {
                self.b.ins().fence();
            }
            Stmt::Atomic { .. } | Stmt::AtomicLoad { .. } => {
                unreachable!("not in vectorized kernels")
            }
            Stmt::Barrier(_) | Stmt::Group { .. } => {
                unreachable!("barriers and collectives are between regions")
            }
        }
    }

    // ---- expressions ----

    pub(super) fn vexpr(&mut self, e: ExprId) -> Value {
        if let Some(v) = self.lookup(e) {
            return v[0];
        }
        let start = self.deferred_len();
        let ty = self.f.exprs.ty(e);
        let s = ty.scalar;
        let expr = self.f.exprs.get(e).clone();
        let v = match expr {
            Expr::Literal(l) => {
                if s == Scalar::Bool {
                    self.splat_i32(-(l.bits as i64))
                } else {
                    let x = self.lit(l);
                    self.splat(x, s)
                }
            }
            Expr::Param(p) => {
                let bits = self
                    .b
                    .ins()
                    .load(types::I64, TABLE, self.scal_p, p.index() as i32 * 8);
                let x = from_bits(&mut self.b, bits, s);
                self.splat(x, s)
            }
            Expr::BufferLen(p) => {
                let len = self.mem_arg(self.bufs_p, p.index()).1;
                let x = self.b.ins().ireduce(types::I32, len);
                self.splat(x, s)
            }
            Expr::Value(v) if !self.defined.contains(&v) => {
                // Defined by another region (or the group level): from the records.
                let slot = self.plan.values[&v];
                self.vrec_load(slot.off, s)
            }
            Expr::Value(v) => {
                let var = self.vvar(VarOf::Value(v), s);
                self.b.use_var(var)
            }
            Expr::Builtin(b) => self.vbuiltin(b),
            Expr::Unary(op, a) => {
                let x = self.vexpr(a);
                match op {
                    UnaryOp::Neg if s.is_float() => self.b.ins().fneg(x),
                    UnaryOp::Neg => self.b.ins().ineg(x),
                    UnaryOp::Not => self.b.ins().bnot(x),
                }
            }
            Expr::Binary(op, a, b) => {
                let os = self.f.exprs.ty(a).scalar;
                let (x, y) = (self.vexpr(a), self.vexpr(b));
                self.vbinary(op, os, x, y)
            }
            Expr::Select(c, a, b) => {
                let (c, x, y) = (self.vexpr(c), self.vexpr(a), self.vexpr(b));
                let c = self.as_lanes(c, vty(s));
                self.b.ins().bitselect(c, x, y)
            }
            Expr::Cast(a, to) => {
                let from = self.f.exprs.ty(a).scalar;
                let x = self.vexpr(a);
                self.vcast(x, from, to)
            }
            Expr::Bitcast(a, to) => {
                let x = self.vexpr(a);
                let from = vty(self.f.exprs.ty(a).scalar);
                if from == vty(to.scalar) {
                    x
                } else {
                    self.b.ins().bitcast(vty(to.scalar), lanes_flags(), x)
                }
            }
            Expr::Math(m, args) => {
                let a = self.f.exprs.ty(args[0]).scalar;
                let xs: Vec<Value> = args.iter().map(|&x| self.vexpr(x)).collect();
                self.vmath(m, a, &xs)
            }
            Expr::Splat(..) | Expr::Compose(..) | Expr::Extract(..) | Expr::Stub(..) => {
                unreachable!("not in vectorized kernels")
            }
        };
        self.remember(e, vec![v], start);
        v
    }

    fn vbuiltin(&mut self, b: Builtin) -> Value {
        let lane_base = match b {
            Builtin::LocalId(0) => Some(self.b.use_var(self.lid[0])),
            Builtin::LocalLinearId => Some(self.b.use_var(self.lane)),
            Builtin::GlobalId(0) => Some(self.builtin(b)),
            _ => None,
        };
        match lane_base {
            Some(x) => {
                let v = self.b.ins().splat(types::I32X4, x);
                let io = self.iota();
                self.b.ins().iadd(v, io)
            }
            None => {
                let x = self.builtin(b);
                self.b.ins().splat(types::I32X4, x)
            }
        }
    }

    fn vbinary(&mut self, op: BinaryOp, s: Scalar, x: Value, y: Value) -> Value {
        use BinaryOp::*;
        if let Some(v) = direct_binary(&mut self.b, op, s, x, y) {
            return v;
        }
        let out = if op.is_comparison() { Scalar::Bool } else { s };
        match op {
            Rem if s.is_float() => {
                self.per_lane(&[x, y], &[s, s], out, |g, v| g.binary(op, s, v[0], v[1]))
            }
            Div | Rem => {
                let one = self.splat_i32(1);
                let y = if self.nofault.is_some() {
                    // Hoisted: every zero divisor becomes 1, the test waits for the use.
                    let z = self.splat_i32(0);
                    let zero = self.b.ins().icmp(IntCC::Equal, y, z);
                    self.nofault
                        .as_mut()
                        .expect("hoisting")
                        .push((zero, op == Div));
                    self.b.ins().bitselect(zero, one, y)
                } else {
                    // Inactive lanes divide by 1: only an active lane's zero divisor is a fault.
                    let m = self.mask();
                    self.b.ins().bitselect(m, y, one)
                };
                let saved = self.nofault.take();
                let r = self.per_lane(&[x, y], &[s, s], out, |g, v| g.binary(op, s, v[0], v[1]));
                self.nofault = saved;
                r
            }
            Shl | Shr => self.per_lane(&[x, y], &[s, s], out, |g, v| g.binary(op, s, v[0], v[1])),
            _ => unreachable!("{} has one instruction", op.symbol()),
        }
    }

    fn vcast(&mut self, x: Value, from: Scalar, to: Scalar) -> Value {
        use Scalar::*;
        match (from, to) {
            (a, b) if a == b => x,
            (I32, U32) | (U32, I32) => x,
            (F32, Bool) => {
                let z = self.vzero(F32);
                self.b.ins().fcmp(FloatCC::NotEqual, x, z)
            }
            (_, Bool) => {
                let z = self.splat_i32(0);
                self.b.ins().icmp(IntCC::NotEqual, x, z)
            }
            (Bool, I32 | U32) => {
                let one = self.splat_i32(1);
                self.b.ins().band(x, one)
            }
            (Bool, F32) => {
                let one = self.splat_i32(1);
                let i = self.b.ins().band(x, one);
                self.b.ins().fcvt_from_sint(types::F32X4, i)
            }
            (I32, F32) => self.b.ins().fcvt_from_sint(types::F32X4, x),
            // Cranelift's sequence (the two 16-bit halves converted apart, one rounding in
            // their sum) rounds as the scalar conversion does.
            (U32, F32) => self.b.ins().fcvt_from_uint(types::F32X4, x),
            (F32, I32) => self.b.ins().fcvt_to_sint_sat(types::I32X4, x),
            _ => self.per_lane(&[x], &[from], to, |g, v| g.cast(v[0], from, to)),
        }
    }

    fn vmath(&mut self, m: MathFn, s: Scalar, xs: &[Value]) -> Value {
        let x = xs[0];
        match m {
            MathFn::Sqrt if s.is_float() => self.b.ins().sqrt(x),
            MathFn::Rsqrt => {
                let r = self.b.ins().sqrt(x);
                let one = self.lit(Literal::from_bits(Scalar::F32, 1f32.to_bits() as u64));
                let one = self.b.ins().splat(types::F32X4, one);
                self.b.ins().fdiv(one, r)
            }
            MathFn::Abs if s.is_float() => self.b.ins().fabs(x),
            MathFn::Abs if s == Scalar::I32 => self.b.ins().iabs(x),
            MathFn::Abs => x,
            MathFn::Floor => self.b.ins().floor(x),
            MathFn::Ceil => self.b.ins().ceil(x),
            MathFn::Trunc => self.b.ins().trunc(x),
            MathFn::Mix => {
                let d = self.b.ins().fsub(xs[1], x);
                let p = self.b.ins().fmul(d, xs[2]);
                self.b.ins().fadd(x, p)
            }
            MathFn::Min if !s.is_float() => match s {
                Scalar::I32 => self.b.ins().smin(x, xs[1]),
                _ => self.b.ins().umin(x, xs[1]),
            },
            MathFn::Max if !s.is_float() => match s {
                Scalar::I32 => self.b.ins().smax(x, xs[1]),
                _ => self.b.ins().umax(x, xs[1]),
            },
            _ => {
                let out = m.result_scalar(s);
                let ss: Vec<Scalar> = (0..xs.len()).map(|i| m.arg_scalar(i, s)).collect();
                self.per_lane(xs, &ss, out, |g, v| {
                    let args: Vec<Vec<Value>> = v.iter().map(|&a| vec![a]).collect();
                    g.math(m, s, 1, &args)[0]
                })
            }
        }
    }
}

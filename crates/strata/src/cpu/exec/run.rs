//! Execution of a lowered [`Program`]: one work-group at a time, all its work-items in lockstep.
//!
//! Execution walks the statement tree with an execution mask. `break`, `continue` and `return`
//! remove work-items from the masks of the enclosing blocks until the loop iteration, the loop
//! or the kernel ends. A barrier or collective reached by only part of the work-group is an
//! error. Work-groups are spread over rayon's thread pool by [`crate::cpu::run_groups`], one
//! [`Worker`] (registers, local and private memory, masks) per thread. The first failing
//! work-group in group order is reported: the other threads stop between work-groups, and a
//! loop stops when [`Stop::stops`](crate::cpu::Stop::stops) says so; the launch's cancel flag
//! is checked before each work-group.

#![allow(clippy::needless_range_loop)] // lane loops index several parallel columns

use super::shadow::{Cell, GlobalShadow, Kind};
use super::{CStmt, MemRef, Op, Program, Reg};
use crate::cpu::cpu_mem;
use crate::cpu::semantics::{self, apply_atomic, atomic_rmw, collective, words};
use crate::error::{Error, Result, WorkItem};
use crate::ir::eval::{self, with_int, with_scalar, Column, EvalError, Num};
use crate::ir::{
    AtomicOp, BinaryOp, Builtin, GroupOp, GroupScope, IdVec, LocalId, LoopId, Mem, ParamId,
    PrivateId, Scalar, Type,
};
use crate::runtime::{ArgValue, NdRange};
use std::sync::atomic::{AtomicBool, Ordering};

impl Program {
    /// Whether the program keeps shadow memory (checked mode).
    pub(crate) fn checked(&self) -> bool {
        self.checked
    }

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
        let globals: IdVec<ParamId, Global> = args
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
        let stop = crate::cpu::Stop::new();
        let mems: IdVec<ParamId, Option<&crate::cpu::CpuMem>> = args
            .iter()
            .map(|a| match a {
                ArgValue::Buffer { mem, .. } => Some(cpu_mem(mem)),
                _ => None,
            })
            .collect();
        let shadow = self.checked.then(|| GlobalShadow::new(args));
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
        crate::cpu::run_groups(
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

/// What every worker of a launch reads.
pub(super) struct Ctx<'a> {
    pub(super) prog: &'a Program,
    args: &'a [ArgValue],
    /// The buffers' memory (for which bytes were written, in checked mode).
    pub(super) mems: &'a IdVec<ParamId, Option<&'a crate::cpu::CpuMem>>,
    pub(super) shadow: Option<&'a GlobalShadow>,
    globals: &'a IdVec<ParamId, Global>,
    pub(super) local: [usize; 3],
    groups: [usize; 3],
    global: [usize; 3],
    stop: &'a std::sync::Arc<crate::cpu::Stop>,
}

/// Loop state: which work-items left the loop or ended the iteration.
struct Frame {
    id: LoopId,
    broken: Vec<bool>,
    continued: Vec<bool>,
}

/// One thread's state: the registers, local and private memory and masks of the work-group
/// it runs.
pub(super) struct Worker<'a> {
    pub(super) c: &'a Ctx<'a>,
    pub(super) lanes: usize,
    regs: IdVec<Reg, Column>,
    locals: IdVec<LocalId, Column>,
    local_lens: IdVec<LocalId, u64>,
    privates: IdVec<PrivateId, Column>,
    returned: Vec<bool>,
    frames: Vec<Frame>,
    pub(super) group: [u32; 3],
    masks: Vec<Vec<bool>>,
    pub(super) idx: Vec<i64>,
    /// `local_id(d)` of every lane, computed once.
    lids: [Vec<u32>; 3],
    /// A mask with every work-item active.
    all: Vec<bool>,
    /// Checked mode: barriers and collectives passed by the work-group, the shadow of each
    /// local array's elements, and which private array elements each work-item wrote (element
    /// `i` of lane `l` at `i * lanes + l`).
    pub(super) phase: u32,
    pub(super) local_cells: IdVec<LocalId, Vec<Cell>>,
    pub(super) private_init: IdVec<PrivateId, Vec<bool>>,
}

impl<'a> Worker<'a> {
    fn new(c: &'a Ctx<'a>) -> Result<Worker<'a>> {
        let lanes: usize = c.local.iter().product();
        let p = c.prog;
        let mut local_lens = IdVec::new();
        let mut locals = IdVec::new();
        for (i, (elem, _, _)) in p.decls.locals.iter_enumerated() {
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
            IdVec::new()
        };
        let private_init = if checked {
            p.decls
                .privates
                .iter()
                .map(|(_, n, _)| vec![false; lanes * *n as usize])
                .collect()
        } else {
            IdVec::new()
        };
        let mut w = Worker {
            phase: 0,
            local_cells,
            private_init,
            c,
            lanes,
            regs: vec![Column::default(); p.n_regs].into(),
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

    pub(super) fn item(&self, l: usize) -> WorkItem {
        crate::cpu::work_item(l, self.c.local, self.group)
    }

    fn fault(&self, l: usize, message: impl Into<String>) -> Error {
        Error::KernelFault {
            kernel: self.c.prog.decls.name.clone(),
            message: message.into(),
            item: self.item(l),
        }
    }

    fn run_group(&mut self, g: usize) -> Result<()> {
        self.group = semantics::group_id(g, self.c.groups);
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
        let c = &mut self.regs[r];
        c.reserve_bytes(bytes);
        c
    }

    /// `base + local_id(d)` for every lane.
    fn leaf_lid(&mut self, dst: Reg, d: usize, base: u32) {
        let n = self.lanes;
        let mut c = std::mem::take(&mut self.regs[dst]);
        c.reserve_bytes(n * 4);
        for (v, &l) in c.slice_mut::<u32>(n).iter_mut().zip(&self.lids[d]) {
            *v = base.wrapping_add(l);
        }
        self.regs[dst] = c;
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
                    let lit = match self.c.args[p.index()] {
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
                                b.sub_group_value(l as u32, size, crate::cpu::SUB_GROUP_SIZE)
                                    .expect("the other built-ins are matched above")
                            })
                        }
                    }
                }
                Op::Unary { dst, op, a, s, w } => {
                    let mut out = std::mem::take(&mut self.regs[*dst]);
                    eval::unary(*op, *s, &self.regs[*a], &mut out, n * w);
                    self.regs[*dst] = out;
                }
                Op::Binary {
                    dst,
                    op,
                    a,
                    b,
                    s,
                    w,
                } => {
                    let mut out = std::mem::take(&mut self.regs[*dst]);
                    let r = eval::binary(
                        *op,
                        *s,
                        &self.regs[*a],
                        &self.regs[*b],
                        &mut out,
                        n * w,
                        &|i| mask[i % n],
                    );
                    self.regs[*dst] = out;
                    if let Err(EvalError::DivisionByZero(i)) = r {
                        return Err(self.fault(i % n, semantics::div_by_zero(*op == BinaryOp::Div)));
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
                    let mut out = std::mem::take(&mut self.regs[*dst]);
                    eval::select(
                        *s,
                        &self.regs[*c],
                        &self.regs[*a],
                        &self.regs[*b],
                        &mut out,
                        n * w,
                        n * cw,
                    );
                    self.regs[*dst] = out;
                }
                Op::Cast {
                    dst,
                    a,
                    from,
                    to,
                    w,
                } => {
                    let mut out = std::mem::take(&mut self.regs[*dst]);
                    eval::cast(*from, *to, &self.regs[*a], &mut out, n * w);
                    self.regs[*dst] = out;
                }
                Op::Bitcast { dst, a, bytes } => {
                    let mut out = std::mem::take(&mut self.regs[*dst]);
                    out.reserve_bytes(n * bytes);
                    out.bytes_mut()[..n * bytes]
                        .copy_from_slice(&self.regs[*a].bytes()[..n * bytes]);
                    self.regs[*dst] = out;
                }
                Op::Math { dst, f, args, s, w } => {
                    let mut out = std::mem::take(&mut self.regs[*dst]);
                    let cols: Vec<&Column> = args.iter().map(|&r| &self.regs[r]).collect();
                    eval::math(*f, *s, &cols, &mut out, n, *w);
                    self.regs[*dst] = out;
                }
                Op::Splat { dst, a, size, w } => {
                    let mut out = std::mem::take(&mut self.regs[*dst]);
                    out.reserve_bytes(n * size * w);
                    let src = &self.regs[*a].bytes()[..n * size];
                    for c in 0..*w {
                        out.bytes_mut()[c * n * size..(c + 1) * n * size].copy_from_slice(src);
                    }
                    self.regs[*dst] = out;
                }
                Op::Compose { dst, parts, size } => {
                    let mut out = std::mem::take(&mut self.regs[*dst]);
                    out.reserve_bytes(n * size * parts.len());
                    for (c, p) in parts.iter().enumerate() {
                        out.bytes_mut()[c * n * size..(c + 1) * n * size]
                            .copy_from_slice(&self.regs[*p].bytes()[..n * size]);
                    }
                    self.regs[*dst] = out;
                }
                Op::Stub {
                    dst,
                    name,
                    body,
                    args,
                    ret,
                } => {
                    let mut out = std::mem::take(&mut self.regs[*dst]);
                    out.reserve_bytes(n * ret.size());
                    let mut lits = Vec::with_capacity(args.len());
                    for l in (0..n).filter(|&l| mask[l]) {
                        lits.clear();
                        lits.extend(args.iter().map(|&(r, s)| self.regs[r].literal(s, l)));
                        let v = (body.0)(&lits);
                        if v.scalar != *ret {
                            self.regs[*dst] = out;
                            return Err(self.fault(l, format!("the CPU body of stub `{name}` returned a {}, the stub returns {ret}", v.scalar)));
                        }
                        with_scalar!(*ret, T => out.slice_mut::<T>(n)[l] = T::from_lit(v));
                    }
                    self.regs[*dst] = out;
                }
                Op::Extract { dst, a, i, size } => {
                    let mut out = std::mem::take(&mut self.regs[*dst]);
                    out.reserve_bytes(n * size);
                    out.bytes_mut()[..n * size]
                        .copy_from_slice(&self.regs[*a].bytes()[i * n * size..(i + 1) * n * size]);
                    self.regs[*dst] = out;
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
        let col = &self.regs[index];
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
                    coords: None,
                });
            }
        }
        Ok(())
    }

    fn mem_len(&self, m: MemRef) -> u64 {
        match m.mem {
            Mem::Buffer(p) => self.c.globals[p].len,
            Mem::Local(i) => self.local_lens[i],
            Mem::Private(i) => self.c.prog.decls.privates[i].1 as u64,
            Mem::Field(_) => unreachable!("a field view is addressed through its buffer"),
        }
    }

    pub(super) fn mem_what(&self, m: MemRef) -> String {
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
        let g = &self.c.globals[p];
        let idx = self.regs[index].slice::<u32>(n);
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
            let v = &self.regs[reg];
            words!(size, W, A => {
                let base = g.base as *const A;
                for (&x, &i) in v.slice::<W>(n).iter().zip(idx) {
                    // SAFETY: every index was checked against the buffer's length above.
                    unsafe { (*base.add(i as usize * m.stride + m.offset)).store(x, Ordering::Relaxed) };
                }
            });
        } else {
            let mut out = std::mem::take(&mut self.regs[reg]);
            out.reserve_bytes(n * size);
            let idx = self.regs[index].slice::<u32>(n);
            words!(size, W, A => {
                let base = g.base as *const A;
                for (o, &i) in out.slice_mut::<W>(n).iter_mut().zip(idx) {
                    // SAFETY: every index was checked against the buffer's length above.
                    *o = unsafe { (*base.add(i as usize * m.stride + m.offset)).load(Ordering::Relaxed) };
                }
            });
            self.regs[reg] = out;
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
            if self.c.prog.private_is_var[i] {
                // A variable is laid out like a register: copy the whole column (the values of
                // inactive work-items are never read).
                let b = self.lanes * m.elem.size();
                let mut out = std::mem::take(&mut self.regs[value]);
                out.reserve_bytes(b);
                out.bytes_mut()[..b].copy_from_slice(&self.privates[i].bytes()[..b]);
                self.regs[value] = out;
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
        let mut out = std::mem::take(&mut self.regs[value]);
        out.reserve_bytes(n * size * w);
        words!(size, W, A => {
            let o = out.slice_mut::<W>(n * w);
            match m.mem {
                Mem::Buffer(p) => {
                    let base = self.c.globals[p].base as *const A;
                    for l in (0..n).filter(|&l| mask[l]) {
                        for c in 0..w {
                            // SAFETY: the index was checked against the buffer's length.
                            o[c * n + l] = unsafe { (*base.add(self.idx[l] as usize * m.stride + m.offset + c)).load(Ordering::Relaxed) };
                        }
                    }
                }
                Mem::Field(_) => unreachable!("a field view is addressed through its buffer"),
                Mem::Local(i) => {
                    let src = self.locals[i].slice::<W>(len as usize * w);
                    for l in (0..n).filter(|&l| mask[l]) {
                        for c in 0..w {
                            o[c * n + l] = src[self.idx[l] as usize * w + c];
                        }
                    }
                }
                Mem::Private(i) => {
                    let src = self.privates[i].slice::<W>(n * len as usize * w);
                    for l in (0..n).filter(|&l| mask[l]) {
                        for c in 0..w {
                            o[(c * n) + l] = src[(self.idx[l] as usize * w + c) * n + l];
                        }
                    }
                }
            }
        });
        self.regs[value] = out;
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
            if self.c.prog.private_is_var[i] {
                let (n, size) = (self.lanes, m.elem.scalar.size());
                let (src, dst) = (&self.regs[value], &mut self.privates[i]);
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
            let v = self.regs[value].slice::<W>(n * w);
            match m.mem {
                Mem::Buffer(p) => {
                    let base = self.c.globals[p].base as *const A;
                    for l in (0..n).filter(|&l| mask[l]) {
                        for c in 0..w {
                            // SAFETY: the index was checked against the buffer's length.
                            unsafe { (*base.add(self.idx[l] as usize * m.stride + m.offset + c)).store(v[c * n + l], Ordering::Relaxed) };
                        }
                    }
                }
                Mem::Field(_) => unreachable!("a field view is addressed through its buffer"),
                Mem::Local(i) => {
                    let dst = self.locals[i].slice_mut::<W>(len as usize * w);
                    for l in (0..n).filter(|&l| mask[l]) {
                        for c in 0..w {
                            dst[self.idx[l] as usize * w + c] = v[c * n + l];
                        }
                    }
                }
                Mem::Private(i) => {
                    let dst = self.privates[i].slice_mut::<W>(n * len as usize * w);
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
        let mut out = result.map(|r| std::mem::take(&mut self.regs[r]));
        if let Some(o) = out.as_mut() {
            o.reserve_bytes(n * s.size());
        }
        with_scalar!(s, T => {
            let v = self.regs[operand].slice::<T>(n).to_vec();
            let cmp = compare.map(|c| self.regs[c].slice::<T>(n).to_vec());
            let apply = |old: T, l: usize| -> T { apply_atomic(op, old, v[l], cmp.as_ref().map(|c| c[l])) };
            for l in (0..n).filter(|&l| mask[l]) {
                let i = self.idx[l] as usize;
                let old: T = match m.mem {
                    Mem::Buffer(p) => {
                        let base = self.c.globals[p].base;
                        // SAFETY: checked index; buffers are only accessed atomically.
                        unsafe { atomic_rmw::<T>(base, i * m.stride + m.offset, |x| apply(x, l)) }
                    }
                    Mem::Local(li) => {
                        let mem = self.locals[li].slice_mut::<T>(len as usize);
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
            self.regs[r] = o;
        }
        Ok(())
    }

    fn check_uniform(&self, mask: &[bool], what: &str) -> Result<()> {
        let reached = mask.iter().filter(|&&m| m).count();
        let name = &self.c.prog.decls.name;
        semantics::check_uniform(name, what, reached, self.lanes, self.group)
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
        let mut out = std::mem::take(&mut self.regs[value]);
        let src = source.map(|s| self.regs[s].slice::<u32>(n));
        let r = collective(op, scope, ty, n, &self.regs[arg], src, &mut out);
        self.regs[value] = out;
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
                    let mut out = std::mem::take(&mut self.regs[*value]);
                    out.reserve_bytes(b);
                    out.bytes_mut()[..b].copy_from_slice(&self.regs[*src].bytes()[..b]);
                    self.regs[*value] = out;
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
                let c = self.regs[*cond].slice::<u8>(n);
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
                let mut v = std::mem::take(&mut self.regs[*var]);
                v.reserve_bytes(b);
                v.bytes_mut()[..b].copy_from_slice(&self.regs[*start].bytes()[..b]);
                self.regs[*var] = v;
                self.frames.push(Frame {
                    id: *id,
                    broken: vec![false; n],
                    continued: vec![false; n],
                });
                let mut iter = self.take_mask();
                let r = (|| -> Result<()> {
                    // The step is loop-invariant: check it once.
                    with_int!(*s, T => {
                        let st = self.regs[*step].slice::<T>(n);
                        if let Some(l) = (0..n).find(|&l| mask[l] && st[l].is_zero()) {
                            return Err(self.fault(l, semantics::ZERO_STEP));
                        }
                    }, _ => unreachable!("validated: integer counter"));
                    loop {
                        self.alive_into(mask, &mut iter);
                        // Work-items whose counter passed the bound leave the loop.
                        let mut any = false;
                        with_int!(*s, T => {
                            let (vv, e, st) = (self.regs[*var].slice::<T>(n), self.regs[*end].slice::<T>(n), self.regs[*step].slice::<T>(n));
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
                        let mut v = std::mem::take(&mut self.regs[*var]);
                        with_int!(*s, T => {
                            let st = self.regs[*step].slice::<T>(n);
                            for (x, &d) in v.slice_mut::<T>(n).iter_mut().zip(st) {
                                *x = x.add(d);
                            }
                        }, _ => unreachable!());
                        self.regs[*var] = v;
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
                        // Another work-group failed: this one's results no longer matter
                        // (it ends as cancelled, which the launch does not report).
                        if self
                            .c
                            .stop
                            .stops(semantics::group_index(self.group, self.c.groups))
                        {
                            return Err(Error::Cancelled {
                                kernel: self.c.prog.decls.name.clone(),
                            });
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

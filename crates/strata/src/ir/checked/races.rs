//! Checked mode's race and uninitialized-read checks on local memory and private arrays:
//! the part of [`instrument`](super::instrument) that gives every backend what the
//! interpreter's shadow memory finds (`cpu/exec/shadow.rs`), as IR.
//!
//! It runs after the bounds rewrite, so every access it sees is in bounds (inside its
//! guard), and puts its checks just before the access. Accesses to memory the
//! instrumentation added (carriers, counters, the fault words) are not checked.
//!
//! **Local arrays.** Each local array `tile` gets four `u32` local arrays of its length
//! (zeroed by the work-group, with atomics, before a barrier at the kernel's start): the
//! last writer, the site of that write, the last reader since, the site of that read. A
//! writer or reader word is `INIT | phase << 16 | lane + 1`: bit 31 says the element was
//! written in this work-group (an atomic sets it alone), bits 16–30 hold the work-group's
//! *phase* (the barriers and work-group collectives it passed, a private counter; 15 bits,
//! so two accesses exactly a multiple of 32768 phases apart look unordered) and bits 0–15
//! the local linear id + 1 (0: no work-item). Two accesses are unordered when their lanes
//! differ and their phases are equal, the interpreter's rule for one work-group. A store
//! exchanges the writer word (atomically: work-items of one group run at once on a GPU) and
//! reports a race with the previous writer, else with an unordered reader, then clears the
//! reader where one is recorded (the sites are read only to report); a load reports a read
//! of an element nobody wrote, else a race with the writer, else becomes the reader unless
//! an unordered reader is recorded (the interpreter keeps two readers; one is kept here, so a
//! write-after-read race whose only witness is a second reader is missed). An atomic sets
//! the written bit and reports an uninitialized element; atomic loads report an
//! uninitialized element; atomics race with nothing. Every access to
//! the shadow after the zeroing is an atomic, so the interpreter, which runs the same
//! instrumented kernel, sees no race in it.
//!
//! **Private arrays.** Each private array gets a private `u32` array of flags, zeroed at the
//! kernel's start: a store sets its element's flag, a load of an element whose flag is 0 is
//! an uninitialized read ("by this work-item"). Private variables (not arrays) are not
//! checked.
//!
//! **Reports.** The fault words hold, as for a bounds fault, the site and the index (words
//! 2–3) and the work-item; for a race word 4 holds the other access's shadow word and word
//! 5 its site, from which the host names the other work-item (same work-group) and line.
//!
//! **Buffers.** Each buffer parameter the kernel stores to (not atomically: only those can
//! race) gets a hidden `u32` buffer of [`SHADOW_WORDS`] words per element
//! ([`HiddenRole::Shadow`], allocated zeroed by the launch): the last writer, its phase and
//! site, the last reader since, its phase and site. A work-item is named by its group linear
//! id × group size + local linear id + 1, a phase-and-site word is `phase << 16 | site`. Two
//! accesses are unordered when their work-items differ and they are in the same phase of one
//! work-group, or in different work-groups (unless the kernel holds a fence or an ordered
//! atomic, [`orders_memory`]: the interpreter's rule). Stores and loads follow the rules of
//! local memory; atomics and atomic loads of buffers are not checked (they race with
//! nothing, and nothing here knows which buffer elements were written).
//! A buffer every access of which indexes it by the work-item in one affine way
//! ([`OwnIndex`](super::OwnIndex), `c[global_id(0)]`) keeps its checks behind a test of its
//! shadow's length: the launch passes a one-word shadow where its range keeps the work-items'
//! elements apart, and the checks are skipped (`own.rs`).
//!
//! Not covered (the interpreter, `interp+checked`, finds these): reads of `Buffer::uninit`
//! elements nothing wrote; launch-sized local arrays, and fixed-size ones whose shadow would
//! take the kernel's local memory past [`LOCAL_BUDGET`] (32 KiB); field views of buffers of structs;
//! private variables that are not arrays. Phases are kept modulo 2^15 (local) and 2^16
//! (buffers): accesses a multiple of that many barriers apart count as unordered.

use super::{CheckSite, Rewriter, SiteKind};
use crate::ir::{
    Access, ArrayLen, AtomicOp, AtomicOrder, BinaryOp, Block, Builtin, Elem, Expr, ExprId, Fence,
    Function, HiddenParam, HiddenRole, LocalDecl, LocalId, Mem, Param, ParamId, ParamKind,
    PrivateDecl, PrivateId, Scalar, SourceLoc, Stmt, Type,
};
use std::collections::HashMap;

/// Bit 31 of a writer word: the element was written in this work-group.
const INIT: u64 = 1 << 31;

/// Bytes of local memory a kernel may reach with its local arrays' shadows (16 bytes per
/// element): the local memory of the smallest devices strata runs on (lavapipe: 32 KiB).
/// Arrays whose shadow would pass it are left unchecked, in declaration order.
const LOCAL_BUDGET: u64 = 32 * 1024;

/// What the race checks of one kernel add ([`Rewriter::races`]).
struct Shadow {
    /// The work-group's phase (barriers and work-group collectives passed), where the
    /// kernel has local arrays.
    phase: Option<PrivateId>,
    /// Per checked local array: writer, writer's site, reader, reader's site.
    locals: HashMap<LocalId, [LocalId; 4]>,
    /// Per checked private array: its written flags.
    privates: HashMap<PrivateId, PrivateId>,
    /// Per checked buffer parameter: its shadow buffer ([`HiddenRole::Shadow`]), and
    /// whether its checks are skipped where the launch passes a one-word shadow (every
    /// access indexes it by the work-item: [`own_index`](super::own::own_index)).
    buffers: HashMap<ParamId, (ParamId, bool)>,
    /// Whether accesses of different work-groups race (the kernel has no fence and no
    /// ordered atomic: [`orders_memory`]).
    cross_group: bool,
}

/// `u32` words of a buffer's shadow per element ([`HiddenRole::Shadow`]): the last writer,
/// its phase and site, the last reader since, its phase and site.
pub const SHADOW_WORDS: u64 = 4;

/// Whether `b` holds a fence or an atomic that releases or acquires: then the kernel may
/// order its work-groups itself, which the race checks do not follow, and accesses of
/// different work-groups are not reported (the interpreter's rule too).
pub(crate) fn orders_memory(b: &[Stmt]) -> bool {
    b.iter().any(|s| match s {
        Stmt::MemFence { .. } => true,
        Stmt::Atomic { order, .. } | Stmt::AtomicLoad { order, .. } => {
            order.order != crate::ir::MemOrder::Relaxed
        }
        Stmt::If {
            then, otherwise, ..
        } => orders_memory(then) || orders_memory(otherwise),
        Stmt::For { body, .. } | Stmt::Loop { body, .. } => orders_memory(body),
        _ => false,
    })
}

/// The user's buffer parameters that `b` stores to (not atomically): the ones that can race.
fn stored_buffers(f: &Function, b: &[Stmt], out: &mut Vec<ParamId>) {
    crate::ir::walk_block(b, &mut |s| {
        if let Stmt::Store {
            mem: Mem::Buffer(p),
            ..
        } = s
        {
            if !f.is_hidden(*p) && !out.contains(p) {
                out.push(*p);
            }
        }
    });
}

/// How an access touches memory, for the shadow.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
    Atomic,
    AtomicRead,
}

impl Rewriter {
    /// Adds the race and uninitialized-read checks to `body` (rewritten for bounds already),
    /// for the local arrays below `locals` and private arrays below `privates` (those of the
    /// user's kernel). Returns the statements to run first (the shadow's zeroing), and the
    /// body.
    pub(super) fn races(&mut self, body: Block, locals: usize, privates: usize) -> (Block, Block) {
        let arrays = self
            .f
            .privates
            .iter()
            .take(privates)
            .any(|p| p.len.is_some());
        let fixed = self
            .f
            .locals
            .iter()
            .take(locals)
            .any(|l| matches!(l.len, ArrayLen::Fixed(_)));
        let mut stored = Vec::new();
        stored_buffers(&self.f, &body, &mut stored);
        if !fixed && !arrays && stored.is_empty() {
            return (Vec::new(), body);
        }
        let mut init: Block = Vec::new();
        let zero = self.lit(Scalar::U32, 0);
        let phase = (fixed || !stored.is_empty()).then(|| self.private("strata_phase", None));
        if let Some(phase) = phase {
            init.push(store(Mem::Private(phase), zero, zero));
        }
        let mut sh = Shadow {
            phase,
            locals: HashMap::new(),
            privates: HashMap::new(),
            buffers: HashMap::new(),
            cross_group: !orders_memory(&body),
        };
        for p in stored {
            let name =
                super::unique_name(&self.f, &format!("strata_{}_shadow", self.f.params[p].name));
            let q = self.f.params.push(Param {
                name,
                kind: ParamKind::Buffer {
                    elem: Elem::Value(Type::U32),
                    access: Access::ReadWrite,
                    len: None,
                },
            });
            let own = super::own::own_index(&self.f, &body, p);
            self.f.hidden.push(HiddenParam {
                param: q,
                role: HiddenRole::Shadow { buffer: p, own },
            });
            sh.buffers.insert(p, (q, own.is_some()));
        }
        for k in 0..privates {
            let p = PrivateId::new(k);
            let decl = self.f.privates[p].clone();
            let Some(n) = decl.len else { continue };
            let flags = self.private(&format!("strata_{}_written", decl.name), Some(n));
            for i in 0..n {
                let i = self.lit(Scalar::U32, i as u64);
                init.push(store(Mem::Private(flags), i, zero));
            }
            sh.privates.insert(p, flags);
        }
        let mut zeroing: Block = Vec::new();
        // The local memory the kernel holds already, then each shadow while it fits.
        let mut local_bytes: u64 = (0..locals)
            .map(|k| &self.f.locals[LocalId::new(k)])
            .map(|l| match l.len {
                ArrayLen::Fixed(n) => n as u64 * l.elem.size() as u64,
                ArrayLen::Param(_) => 0,
            })
            .sum();
        for k in 0..locals {
            let l = LocalId::new(k);
            let decl = self.f.locals[l].clone();
            // A launch-sized array is a kernel parameter in the generated code: a shadow of
            // it would need one more local-memory parameter per word (not done yet).
            let ArrayLen::Fixed(n) = decl.len else {
                continue;
            };
            // An array whose shadow would take the kernel past LOCAL_BUDGET is not checked
            // (the shadow would not fit a device's local memory).
            let shadow_bytes = n as u64 * 16;
            if local_bytes + shadow_bytes > LOCAL_BUDGET {
                continue;
            }
            local_bytes += shadow_bytes;
            let words = ["writer", "writer_site", "reader", "reader_site"].map(|w| {
                let name = super::unique_name(&self.f, &format!("strata_{}_{w}", decl.name));
                self.f.locals.push(LocalDecl {
                    name,
                    elem: Type::U32,
                    len: decl.len,
                })
            });
            // Work-item `lane` zeroes elements lane, lane + size, ...
            let len = self.lit(Scalar::U32, n as u64);
            let lane = self.e(Expr::Builtin(Builtin::LocalLinearId), Type::U32);
            let size = self.group_size();
            let var = self.new_value(Type::U32);
            let at = self.e(Expr::Value(var), Type::U32);
            let id = crate::ir::LoopId::from_raw(self.f.loop_count);
            self.f.loop_count += 1;
            let body = words
                .iter()
                .map(|&w| store(Mem::Local(w), at, zero))
                .collect();
            zeroing.push(Stmt::For {
                id,
                var,
                start: lane,
                end: len,
                step: size,
                body,
            });
            sh.locals.insert(l, words);
        }
        if !zeroing.is_empty() {
            init.extend(zeroing);
            init.push(Stmt::Barrier(Fence {
                local: true,
                global: false,
            }));
        }
        let body = self.shadow_block(body, &sh);
        (init, body)
    }

    fn private(&mut self, name: &str, len: Option<u32>) -> PrivateId {
        let name = super::unique_name(&self.f, name);
        self.f.privates.push(PrivateDecl {
            name,
            elem: Type::U32,
            len,
        })
    }

    /// The work-group's size (product of its three sizes), `u32`.
    fn group_size(&mut self) -> ExprId {
        let mut size = self.e(Expr::Builtin(Builtin::LocalSize(0)), Type::U32);
        for d in 1..3 {
            let s = self.e(Expr::Builtin(Builtin::LocalSize(d)), Type::U32);
            size = self.e(Expr::Binary(BinaryOp::Mul, size, s), Type::U32);
        }
        size
    }

    fn bin(&mut self, op: BinaryOp, a: ExprId, b: ExprId) -> ExprId {
        let ty = match op {
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge => Type::BOOL,
            _ => self.f.exprs.ty(a),
        };
        self.e(Expr::Binary(op, a, b), ty)
    }

    fn shadow_block(&mut self, b: Block, sh: &Shadow) -> Block {
        let mut out = Vec::with_capacity(b.len());
        for s in b {
            self.shadow_stmt(s, sh, &mut out);
        }
        out
    }

    fn shadow_stmt(&mut self, s: Stmt, sh: &Shadow, out: &mut Block) {
        match s {
            Stmt::Load { mem, index, at, .. } => {
                self.check(mem, index, at, Kind::Read, sh, out);
                out.push(s);
            }
            Stmt::AtomicLoad { mem, index, at, .. } => {
                self.check(mem, index, at, Kind::AtomicRead, sh, out);
                out.push(s);
            }
            Stmt::Store { mem, index, at, .. } => {
                self.check(mem, index, at, Kind::Write, sh, out);
                out.push(s);
            }
            Stmt::Atomic { mem, index, at, .. } => {
                self.check(mem, index, at, Kind::Atomic, sh, out);
                out.push(s);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let then = self.shadow_block(then, sh);
                let otherwise = self.shadow_block(otherwise, sh);
                out.push(Stmt::If {
                    cond,
                    then,
                    otherwise,
                });
            }
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => {
                let body = self.shadow_block(body, sh);
                out.push(Stmt::For {
                    id,
                    var,
                    start,
                    end,
                    step,
                    body,
                });
            }
            Stmt::Loop { id, body } => {
                let body = self.shadow_block(body, sh);
                out.push(Stmt::Loop { id, body });
            }
            Stmt::Barrier(_) => {
                out.push(s);
                self.next_phase(sh, out);
            }
            Stmt::Group { scope, .. } => {
                out.push(s);
                if scope == crate::ir::GroupScope::WorkGroup {
                    self.next_phase(sh, out);
                }
            }
            s => out.push(s),
        }
    }

    fn next_phase(&mut self, sh: &Shadow, out: &mut Block) {
        let Some(phase) = sh.phase else { return };
        let zero = self.lit(Scalar::U32, 0);
        let one = self.lit(Scalar::U32, 1);
        let v = self.new_value(Type::U32);
        out.push(load(v, Mem::Private(phase), zero));
        let v = self.e(Expr::Value(v), Type::U32);
        let next = self.bin(BinaryOp::Add, v, one);
        out.push(store(Mem::Private(phase), zero, next));
    }

    /// A new site of `kind` for an access to `mem` at `at`.
    fn site(&mut self, mem: Mem, at: SourceLoc, kind: SiteKind) -> ExprId {
        let site = self.sites.len() as u64;
        self.sites.push(CheckSite {
            memory: super::mem_what(&self.f, mem),
            at,
            kind,
        });
        self.lit(Scalar::U32, site)
    }

    /// The statements recording an uninitialized read at `site` of element `index`.
    fn report_uninit(&mut self, site: ExprId, index: ExprId) -> Block {
        let wide = self.cast(index, Scalar::U64);
        let zero = self.lit(Scalar::U64, 0);
        self.record(site, wide, zero)
    }

    /// The statements recording a race at `site` of element `index` with the access whose
    /// shadow word is `other` and site `other_site`.
    fn report_race(
        &mut self,
        site: ExprId,
        index: ExprId,
        other: ExprId,
        other_site: ExprId,
    ) -> Block {
        let wide = self.cast(index, Scalar::U64);
        let lo = self.cast(other, Scalar::U64);
        let hi = self.cast(other_site, Scalar::U64);
        let k32 = self.lit(Scalar::U64, 32);
        let hi = self.bin(BinaryOp::Shl, hi, k32);
        let both = self.bin(BinaryOp::Or, lo, hi);
        self.record(site, wide, both)
    }

    /// Whether shadow word `o` is an access of another work-item in the phase of `me`.
    fn unordered(&mut self, o: ExprId, me: ExprId) -> ExprId {
        let lanes = self.lit(Scalar::U32, 0xFFFF);
        let phases = self.lit(Scalar::U32, 0x7FFF_0000);
        let zero = self.lit(Scalar::U32, 0);
        let o_lane = self.bin(BinaryOp::And, o, lanes);
        let me_lane = self.bin(BinaryOp::And, me, lanes);
        let someone = self.bin(BinaryOp::Ne, o_lane, zero);
        let other = self.bin(BinaryOp::Ne, o_lane, me_lane);
        let x = self.bin(BinaryOp::Xor, o, me);
        let dp = self.bin(BinaryOp::And, x, phases);
        let same_phase = self.bin(BinaryOp::Eq, dp, zero);
        let a = self.bin(BinaryOp::And, someone, other);
        self.bin(BinaryOp::And, a, same_phase)
    }

    /// The checks of an access of `kind` to element `index` of `mem`, before it.
    #[allow(clippy::too_many_arguments)]
    fn check(
        &mut self,
        mem: Mem,
        index: ExprId,
        at: SourceLoc,
        kind: Kind,
        sh: &Shadow,
        out: &mut Block,
    ) {
        match mem {
            Mem::Private(p) => {
                let Some(&flags) = sh.privates.get(&p) else {
                    return;
                };
                let flag = Mem::Private(flags);
                if kind == Kind::Write {
                    let one = self.lit(Scalar::U32, 1);
                    out.push(store(flag, index, one));
                    return;
                }
                let site = self.site(mem, at, SiteKind::Uninit("by this work-item"));
                let v = self.new_value(Type::U32);
                out.push(load(v, flag, index));
                let v = self.e(Expr::Value(v), Type::U32);
                let zero = self.lit(Scalar::U32, 0);
                let unwritten = self.bin(BinaryOp::Eq, v, zero);
                let then = self.report_uninit(site, index);
                out.push(Stmt::If {
                    cond: unwritten,
                    then,
                    otherwise: Vec::new(),
                });
            }
            Mem::Local(l) => {
                let Some(&[w, ws, r, rs]) = sh.locals.get(&l) else {
                    return;
                };
                self.check_local(mem, index, at, kind, sh, [w, ws, r, rs], out);
            }
            Mem::Buffer(p) => {
                let Some(&(shadow, own)) = sh.buffers.get(&p) else {
                    return;
                };
                if !matches!(kind, Kind::Read | Kind::Write) {
                    return;
                }
                if !own {
                    self.check_global(mem, index, at, kind == Kind::Write, sh, shadow, out);
                    return;
                }
                // Skipped where the launch found the work-items apart: a one-word shadow.
                let mut checks = Vec::new();
                self.check_global(mem, index, at, kind == Kind::Write, sh, shadow, &mut checks);
                let len = self.e(Expr::BufferLen(shadow), Type::U32);
                let one = self.lit(Scalar::U32, 1);
                let needed = self.bin(BinaryOp::Ne, len, one);
                out.push(Stmt::If {
                    cond: needed,
                    then: checks,
                    otherwise: Vec::new(),
                });
            }
            Mem::Field(_) => {}
        }
    }

    /// This work-item's id in a buffer's shadow: group linear id × group size + local
    /// linear id + 1.
    fn item_word(&mut self) -> ExprId {
        let g = self.e(Expr::Builtin(Builtin::GroupLinearId), Type::U32);
        let size = self.group_size();
        let base = self.bin(BinaryOp::Mul, g, size);
        let lane = self.e(Expr::Builtin(Builtin::LocalLinearId), Type::U32);
        let id = self.bin(BinaryOp::Add, base, lane);
        let one = self.lit(Scalar::U32, 1);
        self.bin(BinaryOp::Add, id, one)
    }

    /// Whether the access of work-item word `o` with phase-and-site word `om` (in a
    /// buffer's shadow) and this one (`me`, `meta`) are unordered: different work-items,
    /// and the same phase of one work-group or (where `cross_group`) different work-groups.
    fn unordered_global(
        &mut self,
        (o, om): (ExprId, ExprId),
        (me, meta): (ExprId, ExprId),
        cross_group: bool,
    ) -> ExprId {
        let zero = self.lit(Scalar::U32, 0);
        let one = self.lit(Scalar::U32, 1);
        let someone = self.bin(BinaryOp::Ne, o, zero);
        let other = self.bin(BinaryOp::Ne, o, me);
        let o0 = self.bin(BinaryOp::Sub, o, one);
        let size = self.group_size();
        let og = self.bin(BinaryOp::Div, o0, size);
        let g = self.e(Expr::Builtin(Builtin::GroupLinearId), Type::U32);
        let same_group = self.bin(BinaryOp::Eq, og, g);
        let k16 = self.lit(Scalar::U32, 16);
        let x = self.bin(BinaryOp::Xor, om, meta);
        let dp = self.bin(BinaryOp::Shr, x, k16);
        let same_phase = self.bin(BinaryOp::Eq, dp, zero);
        let ordered_in_group = self.bin(BinaryOp::And, same_group, same_phase);
        let unordered = if cross_group {
            let not_same = self.e(Expr::Unary(crate::ir::UnaryOp::Not, same_group), Type::BOOL);
            self.bin(BinaryOp::Or, not_same, ordered_in_group)
        } else {
            ordered_in_group
        };
        let a = self.bin(BinaryOp::And, someone, other);
        self.bin(BinaryOp::And, a, unordered)
    }

    /// The race checks of a load or store of element `index` of buffer `mem`, whose shadow
    /// is buffer parameter `shadow` ([`SHADOW_WORDS`] words per element).
    #[allow(clippy::too_many_arguments)]
    fn check_global(
        &mut self,
        mem: Mem,
        index: ExprId,
        at: SourceLoc,
        write: bool,
        sh: &Shadow,
        shadow: ParamId,
        out: &mut Block,
    ) {
        let buf = Mem::Buffer(shadow);
        let value = |r: &mut Rewriter, v| r.e(Expr::Value(v), Type::U32);
        let wide = self.cast(index, Scalar::U64);
        let n = self.lit(Scalar::U64, SHADOW_WORDS);
        let base = self.bin(BinaryOp::Mul, wide, n);
        let at_word = |r: &mut Rewriter, k: u64| {
            let k = r.lit(Scalar::U64, k);
            r.bin(BinaryOp::Add, base, k)
        };
        let [w, wm, r, rm] = [0, 1, 2, 3].map(|k| at_word(self, k));
        let site = self.site(
            mem,
            at,
            SiteKind::Access {
                write,
                global: true,
            },
        );
        // phase << 16 | site
        let zero = self.lit(Scalar::U32, 0);
        let ph = self.new_value(Type::U32);
        let phase = sh.phase.expect("a kernel storing to a buffer has a phase");
        out.push(load(ph, Mem::Private(phase), zero));
        let ph = value(self, ph);
        let k16 = self.lit(Scalar::U32, 16);
        let ph = self.bin(BinaryOp::Shl, ph, k16);
        let meta = self.bin(BinaryOp::Or, ph, site);
        let me = self.item_word();
        let cross = sh.cross_group;
        let report = |r: &mut Rewriter, o, om| r.report_race(site, index, o, om);
        if write {
            let (old, oldm) = (self.new_value(Type::U32), self.new_value(Type::U32));
            out.push(atomic(Some(old), buf, w, AtomicOp::Exchange, me));
            out.push(atomic(Some(oldm), buf, wm, AtomicOp::Exchange, meta));
            let (old, oldm) = (value(self, old), value(self, oldm));
            let with_writer = self.unordered_global((old, oldm), (me, meta), cross);
            let race_w = report(self, old, oldm);
            let (rd, rdm) = (self.new_value(Type::U32), self.new_value(Type::U32));
            let (rd_e, rdm_e) = (value(self, rd), value(self, rdm));
            let with_reader = self.unordered_global((rd_e, rdm_e), (me, meta), cross);
            let race_r = report(self, rd_e, rdm_e);
            // The reader is cleared only where one is recorded: an element nobody read
            // since its last write (every element of a buffer the kernel only writes) costs
            // no third read-modify-write.
            let read = self.bin(BinaryOp::Ne, rd_e, zero);
            out.push(Stmt::If {
                cond: with_writer,
                then: race_w,
                otherwise: vec![
                    atomic_load(rd, buf, r),
                    Stmt::If {
                        cond: read,
                        then: vec![
                            atomic_load(rdm, buf, rm),
                            Stmt::If {
                                cond: with_reader,
                                then: race_r,
                                otherwise: Vec::new(),
                            },
                            atomic(None, buf, r, AtomicOp::Exchange, zero),
                        ],
                        otherwise: Vec::new(),
                    },
                ],
            });
            return;
        }
        let (wr, wrm) = (self.new_value(Type::U32), self.new_value(Type::U32));
        out.push(atomic_load(wr, buf, w));
        out.push(atomic_load(wrm, buf, wm));
        let (wr, wrm) = (value(self, wr), value(self, wrm));
        let with_writer = self.unordered_global((wr, wrm), (me, meta), cross);
        let race_w = report(self, wr, wrm);
        let (rd, rdm) = (self.new_value(Type::U32), self.new_value(Type::U32));
        let (rd_e, rdm_e) = (value(self, rd), value(self, rdm));
        let with_reader = self.unordered_global((rd_e, rdm_e), (me, meta), cross);
        out.push(Stmt::If {
            cond: with_writer,
            then: race_w,
            otherwise: vec![
                atomic_load(rd, buf, r),
                atomic_load(rdm, buf, rm),
                Stmt::If {
                    cond: with_reader,
                    then: Vec::new(),
                    otherwise: vec![
                        atomic(None, buf, r, AtomicOp::Exchange, me),
                        atomic(None, buf, rm, AtomicOp::Exchange, meta),
                    ],
                },
            ],
        });
    }

    /// [`Rewriter::check`] of local array `mem` with shadow arrays `words`.
    #[allow(clippy::too_many_arguments)]
    fn check_local(
        &mut self,
        mem: Mem,
        index: ExprId,
        at: SourceLoc,
        kind: Kind,
        sh: &Shadow,
        [w, ws, r, rs]: [LocalId; 4],
        out: &mut Block,
    ) {
        let (w, ws, r, rs) = (Mem::Local(w), Mem::Local(ws), Mem::Local(r), Mem::Local(rs));
        let zero = self.lit(Scalar::U32, 0);
        let init = self.lit(Scalar::U32, INIT);
        let value = |r: &mut Rewriter, v| r.e(Expr::Value(v), Type::U32);
        let uninit_site = match kind {
            Kind::Write => None,
            _ => Some(self.site(mem, at, SiteKind::Uninit("in this work-group"))),
        };
        if matches!(kind, Kind::Atomic | Kind::AtomicRead) {
            // Atomics race with nothing; they read (an unwritten element is reported) and
            // an atomic read-modify-write writes the element.
            let old = self.new_value(Type::U32);
            out.push(match kind {
                Kind::Atomic => atomic(Some(old), w, index, AtomicOp::Or, init),
                _ => atomic_load(old, w, index),
            });
            let old = value(self, old);
            let bit = self.bin(BinaryOp::And, old, init);
            let unwritten = self.bin(BinaryOp::Eq, bit, zero);
            let then = self.report_uninit(uninit_site.unwrap(), index);
            out.push(Stmt::If {
                cond: unwritten,
                then,
                otherwise: Vec::new(),
            });
            return;
        }
        // This access's word: INIT | phase << 16 | lane + 1.
        let ph = self.new_value(Type::U32);
        let phase = sh.phase.expect("a kernel with local arrays has a phase");
        out.push(load(ph, Mem::Private(phase), zero));
        let ph = value(self, ph);
        let mask = self.lit(Scalar::U32, 0x7FFF);
        let ph = self.bin(BinaryOp::And, ph, mask);
        let k16 = self.lit(Scalar::U32, 16);
        let ph = self.bin(BinaryOp::Shl, ph, k16);
        let lane = self.e(Expr::Builtin(Builtin::LocalLinearId), Type::U32);
        let one = self.lit(Scalar::U32, 1);
        let lane1 = self.bin(BinaryOp::Add, lane, one);
        let me = self.bin(BinaryOp::Or, ph, lane1);
        let me = self.bin(BinaryOp::Or, me, init);
        let site = self.site(
            mem,
            at,
            SiteKind::Access {
                write: kind == Kind::Write,
                global: false,
            },
        );
        if kind == Kind::Write {
            let (old, old_site) = (self.new_value(Type::U32), self.new_value(Type::U32));
            out.push(atomic(Some(old), w, index, AtomicOp::Exchange, me));
            out.push(atomic(Some(old_site), ws, index, AtomicOp::Exchange, site));
            let (old, old_site) = (value(self, old), value(self, old_site));
            let with_writer = self.unordered(old, me);
            let race_w = self.report_race(site, index, old, old_site);
            let (rd, rd_site) = (self.new_value(Type::U32), self.new_value(Type::U32));
            let rd_e = value(self, rd);
            let rd_site_e = value(self, rd_site);
            let with_reader = self.unordered(rd_e, me);
            let race_r = self.report_race(site, index, rd_e, rd_site_e);
            // As for buffers: the reader is cleared only where one is recorded.
            let read = self.bin(BinaryOp::Ne, rd_e, zero);
            let otherwise = vec![
                atomic_load(rd, r, index),
                Stmt::If {
                    cond: read,
                    then: vec![
                        Stmt::If {
                            cond: with_reader,
                            then: [vec![atomic_load(rd_site, rs, index)], race_r].concat(),
                            otherwise: Vec::new(),
                        },
                        atomic(None, r, index, AtomicOp::Exchange, zero),
                    ],
                    otherwise: Vec::new(),
                },
            ];
            out.push(Stmt::If {
                cond: with_writer,
                then: race_w,
                otherwise,
            });
            return;
        }
        // A read.
        let (wr, wr_site) = (self.new_value(Type::U32), self.new_value(Type::U32));
        // The writer's site is read only to report a race with it.
        out.push(atomic_load(wr, w, index));
        let (wr, wr_site_e) = (value(self, wr), value(self, wr_site));
        let bit = self.bin(BinaryOp::And, wr, init);
        let unwritten = self.bin(BinaryOp::Eq, bit, zero);
        let report_uninit = self.report_uninit(uninit_site.unwrap(), index);
        let with_writer = self.unordered(wr, me);
        let race_w = [
            vec![atomic_load(wr_site, ws, index)],
            self.report_race(site, index, wr, wr_site_e),
        ]
        .concat();
        let rd = self.new_value(Type::U32);
        let rd_e = value(self, rd);
        let with_reader = self.unordered(rd_e, me);
        let keep = vec![
            atomic_load(rd, r, index),
            Stmt::If {
                cond: with_reader,
                then: Vec::new(),
                otherwise: vec![
                    atomic(None, r, index, AtomicOp::Exchange, me),
                    atomic(None, rs, index, AtomicOp::Exchange, site),
                ],
            },
        ];
        out.push(Stmt::If {
            cond: unwritten,
            then: report_uninit,
            otherwise: vec![Stmt::If {
                cond: with_writer,
                then: race_w,
                otherwise: keep,
            }],
        });
    }
}

fn load(value: crate::ir::ValueId, mem: Mem, index: ExprId) -> Stmt {
    Stmt::Load {
        value,
        mem,
        index,
        at: SourceLoc::NONE,
    }
}

fn store(mem: Mem, index: ExprId, value: ExprId) -> Stmt {
    Stmt::Store {
        mem,
        index,
        value,
        at: SourceLoc::NONE,
    }
}

fn atomic_load(value: crate::ir::ValueId, mem: Mem, index: ExprId) -> Stmt {
    Stmt::AtomicLoad {
        value,
        mem,
        index,
        order: AtomicOrder::RELAXED,
        at: SourceLoc::NONE,
    }
}

fn atomic(
    result: Option<crate::ir::ValueId>,
    mem: Mem,
    index: ExprId,
    op: AtomicOp,
    operand: ExprId,
) -> Stmt {
    Stmt::Atomic {
        result,
        mem,
        index,
        op,
        operand,
        compare: None,
        order: AtomicOrder::RELAXED,
        at: SourceLoc::NONE,
    }
}

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
//! reader; a load reports a read of an element nobody wrote, else a race with the writer,
//! else becomes the reader unless an unordered reader is recorded (the interpreter keeps
//! two readers; one is kept here, so a write-after-read race whose only witness is a second
//! reader is missed). An atomic sets the written bit and reports an uninitialized element;
//! atomic loads report an uninitialized element; atomics race with nothing. Every access to
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
//! Not covered yet: global buffers (races within and across work-groups, reads of
//! `Buffer::uninit` elements); the interpreter (`interp+checked`) still finds those.

use super::{CheckSite, Rewriter, SiteKind};
use crate::ir::{
    ArrayLen, AtomicOp, AtomicOrder, BinaryOp, Block, Builtin, Expr, ExprId, Fence, LocalDecl,
    LocalId, Mem, PrivateDecl, PrivateId, Scalar, SourceLoc, Stmt, Type,
};
use std::collections::HashMap;

/// Bit 31 of a writer word: the element was written in this work-group.
const INIT: u64 = 1 << 31;

/// What the race checks of one kernel add ([`Rewriter::races`]).
struct Shadow {
    /// The work-group's phase (barriers and work-group collectives passed).
    phase: PrivateId,
    /// Per checked local array: writer, writer's site, reader, reader's site.
    locals: HashMap<LocalId, [LocalId; 4]>,
    /// Per checked private array: its written flags.
    privates: HashMap<PrivateId, PrivateId>,
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
        let phase = self.private("strata_phase", None);
        let mut sh = Shadow {
            phase,
            locals: HashMap::new(),
            privates: HashMap::new(),
        };
        let mut init: Block = Vec::new();
        let zero = self.lit(Scalar::U32, 0);
        init.push(store(Mem::Private(phase), zero, zero));
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
        for k in 0..locals {
            let l = LocalId::new(k);
            let decl = self.f.locals[l].clone();
            let words = ["writer", "writer_site", "reader", "reader_site"].map(|w| {
                let name = super::unique_name(&self.f, &format!("strata_{}_{w}", decl.name));
                self.f.locals.push(LocalDecl {
                    name,
                    elem: Type::U32,
                    len: decl.len,
                })
            });
            // Work-item `lane` zeroes elements lane, lane + size, ...
            let len = match decl.len {
                ArrayLen::Fixed(n) => self.lit(Scalar::U32, n as u64),
                ArrayLen::Param(p) => {
                    let q = self.lens[&p];
                    self.e(Expr::Param(q), Type::U32)
                }
            };
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
        let zero = self.lit(Scalar::U32, 0);
        let one = self.lit(Scalar::U32, 1);
        let v = self.new_value(Type::U32);
        out.push(load(v, Mem::Private(sh.phase), zero));
        let v = self.e(Expr::Value(v), Type::U32);
        let next = self.bin(BinaryOp::Add, v, one);
        out.push(store(Mem::Private(sh.phase), zero, next));
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
            Mem::Buffer(_) | Mem::Field(_) => {}
        }
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
        let (w, ws, r, rs) = (
            Mem::Local(w),
            Mem::Local(ws),
            Mem::Local(r),
            Mem::Local(rs),
        );
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
        out.push(load(ph, Mem::Private(sh.phase), zero));
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
            let otherwise = vec![
                atomic_load(rd, r, index),
                atomic_load(rd_site, rs, index),
                Stmt::If {
                    cond: with_reader,
                    then: race_r,
                    otherwise: Vec::new(),
                },
                atomic(None, r, index, AtomicOp::Exchange, zero),
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
        out.push(atomic_load(wr, w, index));
        out.push(atomic_load(wr_site, ws, index));
        let (wr, wr_site) = (value(self, wr), value(self, wr_site));
        let bit = self.bin(BinaryOp::And, wr, init);
        let unwritten = self.bin(BinaryOp::Eq, bit, zero);
        let report_uninit = self.report_uninit(uninit_site.unwrap(), index);
        let with_writer = self.unordered(wr, me);
        let race_w = self.report_race(site, index, wr, wr_site);
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

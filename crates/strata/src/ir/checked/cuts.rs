//! Loops a driver cut short. Mesa's llvmpipe (the CPU driver behind lavapipe) counts every
//! iteration of every loop of a shader invocation in one counter and, once it has counted
//! 65,535, leaves each loop at its next back-edge as if the loop had ended: a kernel that runs
//! more loop iterations per work-item (and its sub-group) than that computes wrong results
//! and reports nothing. No code a kernel can contain avoids the counter, so where a device
//! has such a limit ([`crate::DeviceInfo::loop_iteration_limit`]), the instrumentation
//! ([`super::instrument_cutting_loops`]) tests after every loop that the loop ended by itself,
//! and records a fault ([`LOOP_CUT`]) when it did not.
//!
//! How a loop ended is kept in a flag per loop, set where the loop is left or continues:
//! - a `for` loop: before each `continue` and at the end of its body, the flag becomes the
//!   test the loop's header will make next (the counter plus the step still inside the
//!   bound); before each `break`, false. A loop that ended by its test or a `break` ends with
//!   the flag false; one the driver left at a back-edge ends with it true.
//! - a `loop`: the flag is true from the start of each iteration, false before each `break`
//!   (its only way out besides a `return`, which leaves the kernel and checks nothing).
//!
//! After the loop, a true flag records the fault; the work-item goes on (its results are
//! wrong, and the launch fails with the fault). The flag is an element of a two-element
//! private array at an index Mesa's compiler cannot know (read from the fault buffer, always
//! 0 in effect): its compiler sees no exit but the test and the `break`s, and would otherwise
//! keep a flag in a register, fold its value at those exits and drop the stores only the
//! driver's exit reads (a `loop`'s flag then read false after a cut). Measured on Mesa 22.3:
//! with the flag in memory, every cut loop of `tests/loop_limit.rs` is reported.

use super::{CheckSite, Rewriter, SiteKind};
use crate::ir::{
    AtomicOrder, BinaryOp, Block, Expr, ExprId, LoopId, Mem, PrivateDecl, Scalar, SourceLoc, Stmt,
    Type,
};

/// The message of the fault recorded for a loop the driver ended early.
pub const LOOP_CUT: &str = "a loop ended before its condition or a `break` ended it: this \
device's driver stops a work-item's loops after a fixed number of iterations in all (Mesa's \
llvmpipe, behind lavapipe: 65,535 per sub-group), so the kernel's results would be wrong; \
give each work-item fewer loop iterations (more work-items), or run on another device";

impl Rewriter {
    /// Pushes `lp` (a rewritten `for` or `loop` statement) to `out` with the test that it
    /// ended by itself (see the module docs).
    pub(super) fn cut_checked(&mut self, lp: Stmt, out: &mut Block) {
        let name = super::unique_name(&self.f, "strata_loop_more");
        let flag = self.f.privates.push(PrivateDecl {
            name,
            elem: Type::U32,
            len: Some(2),
        });
        let (zero, one) = (self.lit(Scalar::U32, 0), self.lit(Scalar::U32, 1));
        // The flag's index: 0, read from the fault buffer (whose last word is 0 until a fault
        // is recorded, and a second report is then ignored). Mesa's compiler knows no exit
        // of a loop but its test and its `break`s, so it would keep a flag with a known
        // index in a register and fold or drop the stores only the driver's exit reads; an
        // index it cannot know keeps the flag in memory, stores and all.
        let z = self.new_value(Type::U32);
        out.push(Stmt::AtomicLoad {
            value: z,
            mem: Mem::Buffer(self.fault),
            index: self.lit(Scalar::U32, super::FAULT_WORDS as u64 - 1),
            order: AtomicOrder::RELAXED,
            at: SourceLoc::NONE,
        });
        let z = self.e(Expr::Value(z), Type::U32);
        let is0 = self.e(Expr::Binary(BinaryOp::Eq, z, zero), Type::BOOL);
        let slot = self.e(Expr::Select(is0, zero, one), Type::U32);
        let set = |value: ExprId| Stmt::Store {
            mem: Mem::Private(flag),
            index: slot,
            value,
            at: SourceLoc::NONE,
        };
        out.push(set(zero));
        let lp = match lp {
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                mut body,
            } => {
                let ty = self.f.values[var].ty;
                let v = self.e(Expr::Value(var), ty);
                let next = self.e(Expr::Binary(BinaryOp::Add, v, step), ty);
                let again = self.for_goes(next, end, step, ty.scalar);
                let again = self.e(Expr::Select(again, one, zero), Type::U32);
                mark_exits(&mut body, id, &set(zero), Some(&set(again)));
                if !ends_in_jump(&body) {
                    body.push(set(again));
                }
                Stmt::For {
                    id,
                    var,
                    start,
                    end,
                    step,
                    body,
                }
            }
            Stmt::Loop { id, body } => {
                let mut b = vec![set(one)];
                b.extend(body);
                mark_exits(&mut b, id, &set(zero), None);
                Stmt::Loop { id, body: b }
            }
            other => unreachable!("cut_checked of a statement that is no loop: {other:?}"),
        };
        out.push(lp);
        let site = self.sites.len() as u64;
        self.sites.push(CheckSite {
            memory: LOOP_CUT.to_string(),
            at: SourceLoc::NONE,
            kind: SiteKind::Fault,
        });
        let more = self.new_value(Type::U32);
        out.push(Stmt::Load {
            value: more,
            mem: Mem::Private(flag),
            index: slot,
            at: SourceLoc::NONE,
        });
        let more = self.e(Expr::Value(more), Type::U32);
        let cut = self.e(Expr::Binary(BinaryOp::Ne, more, zero), Type::BOOL);
        let wide = self.lit(Scalar::U64, 0);
        let then = match self.deferred {
            Some(vars) => self.defer(vars, site, wide, wide),
            None => {
                let site = self.lit(Scalar::U32, site);
                self.record(site, wide, wide)
            }
        };
        out.push(Stmt::If {
            cond: cut,
            then,
            otherwise: Vec::new(),
        });
    }
}

/// Puts `on_break` before every `break` of loop `id` in `b` (at any depth) and `on_continue`,
/// if any, before every `continue` of it.
fn mark_exits(b: &mut Block, id: LoopId, on_break: &Stmt, on_continue: Option<&Stmt>) {
    let mut i = 0;
    while i < b.len() {
        let mark = match &mut b[i] {
            Stmt::Break(l) if *l == id => Some(on_break),
            Stmt::Continue(l) if *l == id => on_continue,
            Stmt::If {
                then, otherwise, ..
            } => {
                mark_exits(then, id, on_break, on_continue);
                mark_exits(otherwise, id, on_break, on_continue);
                None
            }
            Stmt::For { body, .. } | Stmt::Loop { body, .. } => {
                mark_exits(body, id, on_break, on_continue);
                None
            }
            _ => None,
        };
        if let Some(s) = mark {
            b.insert(i, s.clone());
            i += 1;
        }
        i += 1;
    }
}

/// Whether `b` ends in a `break`, `continue` or `return` (nothing after it would run).
fn ends_in_jump(b: &[Stmt]) -> bool {
    matches!(
        b.last(),
        Some(Stmt::Break(_) | Stmt::Continue(_) | Stmt::Return)
    )
}

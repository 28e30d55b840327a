//! Control flow recorded into the kernel: [`if_`] with its `else` chain, device loops
//! ([`for_range`], [`for_step`], [`while_`], [`loop_`]) with their labels, `break` and
//! `continue`, [`return_`], and [`select`], the branch-free choice.

use super::trace::{at_str, id_of, node, with};
use super::types::{Integer, KernelType};
use super::{lit, Expr, IntoExpr};
use crate::ir::{self, Expr as IrExpr, Stmt};
use std::panic::Location;

pub(super) fn block(body: impl FnOnce()) -> Vec<Stmt> {
    with(|t| {
        t.blocks.push(Vec::new());
        t.next_serial += 1;
        let s = t.next_serial;
        t.serials.push(s);
    });
    body();
    with(|t| {
        t.serials.pop();
        t.blocks.pop().unwrap_or_default()
    })
}

/// Where the recording is: one serial number per open control-flow block, outermost first.
/// A value recorded at path `a` may be used wherever the path starts with `a` (the same block or
/// one nested in it, later); the fields layer uses this to reuse a load it already made.
pub(crate) fn block_path() -> Vec<u64> {
    with(|t| t.serials.clone())
}

/// The continuation of an [`if_`], to add `else if` and `else` branches.
pub struct IfChain {
    depth: usize,
    block_depth: usize,
    block_len: usize,
}

/// Runs `then` on the work-items for which `cond` is true.
#[track_caller]
pub fn if_(cond: impl Into<Expr<bool>>, then: impl FnOnce()) -> IfChain {
    let cond = id_of(cond.into());
    let then = block(then);
    with(|t| {
        t.push(Stmt::If {
            cond,
            then,
            otherwise: Vec::new(),
        });
        IfChain {
            depth: 0,
            block_depth: t.blocks.len(),
            block_len: t.blocks.last().map_or(0, Vec::len),
        }
    })
}

impl IfChain {
    #[track_caller]
    fn attach(&self, otherwise: Vec<Stmt>) -> bool {
        let at = Location::caller();
        with(|t| {
            if t.blocks.len() != self.block_depth
                || t.blocks.last().map_or(0, Vec::len) != self.block_len
            {
                t.errors.push(format!("else_ / else_if must directly follow their if_ (nothing may be recorded in between){}", at_str(at)));
                return false;
            }
            let mut s = t.blocks.last_mut().and_then(|b| b.last_mut());
            for _ in 0..self.depth {
                s = match s {
                    Some(Stmt::If { otherwise, .. }) => otherwise.last_mut(),
                    _ => None,
                };
            }
            match s {
                Some(Stmt::If { otherwise: o, .. }) => {
                    *o = otherwise;
                    true
                }
                _ => false,
            }
        })
    }

    /// Adds an `else if` branch.
    #[track_caller]
    pub fn else_if(self, cond: impl Into<Expr<bool>>, then: impl FnOnce()) -> IfChain {
        let cond = cond.into();
        let inner = block(|| {
            let c = id_of(cond);
            let then = block(then);
            with(|t| {
                t.push(Stmt::If {
                    cond: c,
                    then,
                    otherwise: Vec::new(),
                })
            });
        });
        self.attach(inner);
        IfChain {
            depth: self.depth + 1,
            ..self
        }
    }

    /// Adds the `else` branch.
    #[track_caller]
    pub fn else_(self, otherwise: impl FnOnce()) {
        let b = block(otherwise);
        self.attach(b);
    }
}

/// A loop, to `break` out of or `continue` from nested loops.
#[derive(Clone, Copy, Debug)]
pub struct LoopLabel {
    id: ir::LoopId,
    trace: u32,
}

impl LoopLabel {
    /// Leaves this loop.
    #[track_caller]
    pub fn break_(self) {
        self.jump(true)
    }
    /// Ends this loop's current iteration.
    #[track_caller]
    pub fn continue_(self) {
        self.jump(false)
    }
    #[track_caller]
    fn jump(self, brk: bool) {
        let at = Location::caller();
        with(|t| {
            if t.id != self.trace || !t.loops.contains(&self.id) {
                t.errors.push(format!(
                    "{} of a loop that does not enclose this point{}",
                    if brk { "break_" } else { "continue_" },
                    at_str(at)
                ));
                return;
            }
            t.push(if brk {
                Stmt::Break(self.id)
            } else {
                Stmt::Continue(self.id)
            });
        })
    }
}

fn open_loop() -> ir::LoopId {
    with(|t| {
        let id = ir::LoopId::from_raw(t.f.loop_count);
        t.f.loop_count += 1;
        t.loops.push(id);
        id
    })
}

fn close_loop() {
    with(|t| {
        t.loops.pop();
    });
}

/// The innermost loop enclosing this point, to break out of it from deeper loops.
#[track_caller]
pub fn current_loop() -> LoopLabel {
    let at = Location::caller();
    with(|t| match t.loops.last() {
        Some(&id) => LoopLabel { id, trace: t.id },
        None => {
            t.errors
                .push(format!("current_loop() outside of any loop{}", at_str(at)));
            LoopLabel {
                id: ir::LoopId::from_raw(u32::MAX),
                trace: t.id,
            }
        }
    })
}

/// Leaves the innermost loop.
#[track_caller]
pub fn break_() {
    let at = Location::caller();
    with(|t| match t.loops.last() {
        Some(&id) => t.push(Stmt::Break(id)),
        None => t
            .errors
            .push(format!("break_() outside of a loop{}", at_str(at))),
    })
}

/// Ends the innermost loop's current iteration.
#[track_caller]
pub fn continue_() {
    let at = Location::caller();
    with(|t| match t.loops.last() {
        Some(&id) => t.push(Stmt::Continue(id)),
        None => t
            .errors
            .push(format!("continue_() outside of a loop{}", at_str(at))),
    })
}

/// Ends this work-item.
pub fn return_() {
    with(|t| t.push(Stmt::Return))
}

/// A device loop `for i in start..end` (step 1).
#[track_caller]
pub fn for_range<T: Integer>(
    start: impl Into<Expr<T>>,
    end: impl Into<Expr<T>>,
    body: impl FnOnce(Expr<T>),
) {
    for_step(start, end, lit(num_one::<T>()), body)
}

fn num_one<T: Integer>() -> T {
    crate::ir::eval::Num::from_i64(1)
}

/// A device loop from `start` while below `end` (or above, for a negative `step`), adding
/// `step` after each iteration. A zero step is an error.
#[track_caller]
pub fn for_step<T: Integer>(
    start: impl Into<Expr<T>>,
    end: impl Into<Expr<T>>,
    step: impl Into<Expr<T>>,
    body: impl FnOnce(Expr<T>),
) {
    let (start, end, step) = (id_of(start.into()), id_of(end.into()), id_of(step.into()));
    let id = open_loop();
    let (var, i) = with(|t| {
        let v = t.new_value(T::TYPE, Some("i".into()));
        (v, t.value_expr::<T>(v, T::TYPE))
    });
    let body = block(|| body(i));
    close_loop();
    with(|t| {
        t.push(Stmt::For {
            id,
            var,
            start,
            end,
            step,
            body,
        })
    });
}

/// A device loop that runs `body` while `cond()` is true; `cond` is recorded at the top of
/// every iteration.
#[track_caller]
pub fn while_(cond: impl FnOnce() -> Expr<bool>, body: impl FnOnce()) {
    let id = open_loop();
    let body = block(|| {
        let c = cond();
        if_(!c, || with(|t| t.push(Stmt::Break(id))));
        body();
    });
    close_loop();
    with(|t| t.push(Stmt::Loop { id, body }));
}

/// A device loop that runs until [`break_`].
pub fn loop_(body: impl FnOnce()) {
    let id = open_loop();
    let body = block(body);
    close_loop();
    with(|t| t.push(Stmt::Loop { id, body }));
}

/// `if cond { a } else { b }` as a value, computed without branching.
///
/// The arms have one type `T`, taken from them: each is an `Expr<T>` or a Rust scalar of type
/// `T` ([`IntoExpr`]), so `select(c, lit(255u8), lit(0u8))` is an `Expr<u8>` and
/// `select(c, x, 0.0)` has the type of `x`. Arms of two different types do not widen to a
/// common one (cast one of them: `a.cast::<u32>()`).
///
/// ```
/// use strata::prelude::*;
/// let threshold = Kernel::build("threshold", |k| {
///     let x = k.read::<f32>("x");
///     let y = k.write::<u8>("y");
///     let i = global_id(0);
///     if_(i.lt(x.len()), || y.set(i, select(x.at(i).gt(0.5f32), lit(255u8), lit(0u8))));
/// })
/// .unwrap();
/// ```
#[track_caller]
pub fn select<T: KernelType>(
    cond: impl Into<Expr<bool>>,
    a: impl IntoExpr<T>,
    b: impl IntoExpr<T>,
) -> Expr<T> {
    let (c, a, b) = (
        id_of(cond.into()),
        id_of(a.into_expr()),
        id_of(b.into_expr()),
    );
    node(IrExpr::Select(c, a, b))
}

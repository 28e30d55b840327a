//! The recording context: the kernel being recorded on this thread ([`Trace`], a stack, so
//! that a kernel can record another inside it), [`record`], which runs a kernel body once and
//! returns its IR or every error it recorded, and the helpers the rest of the builder appends
//! through ([`with`], [`node`], [`id_of`], [`record_error`]). An [`Expr`] or handle carries
//! its recording's id, so one used in another kernel is an error, not wrong IR.

use super::{Expr, KernelDef, KernelType};
use crate::ir::{self, Expr as IrExpr, ExprId, Stmt, Type, ValueId};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::panic::Location;

/// ` (at file:line:column)`: where the kernel body made the call that recorded an error.
pub(super) fn at_str(l: &Location) -> String {
    format!(" (at {}:{}:{})", l.file(), l.line(), l.column())
}

/// Why recording a kernel failed: what the kernel body did wrong, each with the place in the
/// body that did it. Its text is `kernel `name` is invalid:` and one line per error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    /// The kernel's name.
    pub kernel: String,
    /// The errors, in the order they were recorded.
    pub errors: Vec<String>,
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "kernel `{}` is invalid:\n  {}",
            self.kernel,
            self.errors.join("\n  ")
        )
    }
}

impl std::error::Error for RecordError {}

/// The kernel being recorded on this thread.
pub(super) struct Trace {
    /// The recording's id, which its `Expr`s and handles carry.
    pub(super) id: u32,
    /// The kernel so far.
    pub(super) f: ir::Function,
    /// The open blocks, outermost first.
    pub(super) blocks: Vec<Vec<Stmt>>,
    /// The open loops, outermost first.
    pub(super) loops: Vec<ir::LoopId>,
    /// The errors recorded.
    pub(super) errors: Vec<String>,
    /// A serial number per open block, outermost first (see [`block_path`](super::block_path)).
    pub(super) serials: Vec<u64>,
    /// The serial number of the last block opened.
    pub(super) next_serial: u64,
}

thread_local! {
    static TRACES: RefCell<Vec<Trace>> = const { RefCell::new(Vec::new()) };
}

/// The id of the next recording, process-wide: an `Expr` (or handle) carries its recording's
/// id, so one taken from a kernel recorded on another thread is told apart too.
static NEXT_TRACE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

pub(super) fn with<R>(f: impl FnOnce(&mut Trace) -> R) -> R {
    TRACES.with(|t| {
        let mut t = t.borrow_mut();
        let tr = t.last_mut().expect(
            "strata: kernel functions (global_id, if_, barrier, operators on Expr, ...) can only be used inside the closure given to Kernel::build",
        );
        f(tr)
    })
}

/// Records the kernel `name` (a C identifier) by running `body` once: its IR, not yet
/// validated, with the hidden parameters its features added listed in
/// [`ir::Function::hidden`], or every error the body recorded.
/// [`Kernel::build`](crate::Kernel::build) records through this and then validates and
/// optimizes the IR.
pub fn record(name: &str, body: impl FnOnce(&mut KernelDef)) -> Result<ir::Function, RecordError> {
    // Zero is never an id (wrapping skips it).
    let id = loop {
        let v = NEXT_TRACE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if v != 0 {
            break v;
        }
    };
    TRACES.with(|t| {
        t.borrow_mut().push(Trace {
            id,
            f: ir::Function::new(name),
            blocks: vec![Vec::new()],
            loops: Vec::new(),
            errors: Vec::new(),
            serials: Vec::new(),
            next_serial: 0,
        })
    });
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            TRACES.with(|t| {
                t.borrow_mut().pop();
            });
        }
    }
    let guard = Pop;
    body(&mut KernelDef { _private: () });
    let mut tr = TRACES.with(|t| t.borrow_mut().pop()).expect("trace stack");
    std::mem::forget(guard);
    tr.f.body = tr.blocks.pop().unwrap_or_default();
    if !tr.blocks.is_empty() {
        tr.errors.push(
            "a control-flow closure did not finish (was a panic caught inside the kernel body?)"
                .into(),
        );
    }
    if tr.errors.is_empty() {
        Ok(tr.f)
    } else {
        Err(RecordError {
            kernel: tr.f.name,
            errors: tr.errors,
        })
    }
}

impl Trace {
    pub(super) fn intern(&mut self, e: IrExpr, ty: Type) -> ExprId {
        self.f.exprs.intern(e, ty)
    }
    pub(super) fn push(&mut self, s: Stmt) {
        self.blocks.last_mut().expect("block").push(s);
    }
    pub(super) fn check<T>(&mut self, e: Expr<T>, at: &Location) -> ExprId {
        if e.trace != self.id {
            self.errors.push(format!(
                "an Expr recorded for another kernel (expression %{}) was used in kernel `{}`; values cannot cross kernels, pass them as parameters{}",
                e.id, self.f.name, at_str(at)
            ));
        }
        e.id
    }
    pub(super) fn expr<T>(&self, id: ExprId) -> Expr<T> {
        Expr {
            id,
            trace: self.id,
            _t: PhantomData,
        }
    }
    pub(super) fn new_value(&mut self, ty: Type, name: Option<String>) -> ValueId {
        self.f.new_value(ty, name)
    }
    pub(super) fn value_expr<T>(&mut self, v: ValueId, ty: Type) -> Expr<T> {
        let id = self.intern(IrExpr::Value(v), ty);
        self.expr(id)
    }
}

/// Builds an expression node of type `R` from IR pieces.
pub(crate) fn node<R: KernelType>(e: IrExpr) -> Expr<R> {
    with(|t| {
        let id = t.intern(e, R::TYPE);
        t.expr(id)
    })
}

/// The expression with id `id` of the kernel being built, as an `Expr<R>` (the caller knows its
/// type is `R`).
pub(crate) fn expr_of<R>(id: ExprId) -> Expr<R> {
    with(|t| t.expr(id))
}

/// Builds an expression node with an explicit type (for generic code whose result type is
/// computed).
pub(crate) fn node_typed<R>(e: IrExpr, ty: Type) -> Expr<R> {
    with(|t| {
        let id = t.intern(e, ty);
        t.expr(id)
    })
}

/// The id of `e` in the current kernel (recording an error if it belongs to another).
#[track_caller]
pub(crate) fn id_of<T>(e: Expr<T>) -> ExprId {
    let at = Location::caller();
    with(|t| t.check(e, at))
}

/// Records an error of the kernel body, at the caller's place.
#[track_caller]
pub(crate) fn record_error(msg: String) {
    let at = at_str(Location::caller());
    with(|t| t.errors.push(msg + &at));
}

#[track_caller]
pub(super) fn check_handle(trace: u32, what: &str) {
    let at = Location::caller();
    with(|t| {
        if t.id != trace {
            t.errors.push(format!(
                "a {what} of another kernel was used in kernel `{}`{}",
                t.f.name,
                at_str(at)
            ));
        }
    })
}

//! Statements: the tree of side effects and control flow ([`Stmt`], [`Block`]), the source
//! locations they carry ([`SourceLoc`]), and walks over them.

use super::{
    visit_exprs, AtomicOp, AtomicOrder, Expr, ExprArena, ExprId, Fence, GroupOp, GroupScope,
    LoopId, Mem, ValueId,
};
use std::fmt;

/// A sequence of statements.
pub type Block = Vec<Stmt>;

/// Where in the user's source a statement was recorded: the caller of the builder function
/// (`#[track_caller]`), which is a line of the kernel closure, or of the `#[kernel]` function
/// (the macro gives its calls the user's spans); [`SourceLoc::NONE`] for IR written by hand.
/// Error messages of kernel faults name it.
///
/// A location is not part of what a kernel computes: any two compare equal, and their `Debug`
/// form is the same, so the same kernel recorded at two places has one
/// [`Function::fingerprint`](super::Function::fingerprint) and is compiled once per device.
#[derive(Clone, Copy, Default)]
pub struct SourceLoc(pub Option<&'static std::panic::Location<'static>>);

impl SourceLoc {
    /// No location.
    pub const NONE: SourceLoc = SourceLoc(None);

    /// The caller of the function calling this (`#[track_caller]` all the way up).
    #[track_caller]
    pub fn caller() -> SourceLoc {
        SourceLoc(Some(std::panic::Location::caller()))
    }

    /// The line, if known.
    pub fn line(self) -> Option<u32> {
        self.0.map(|l| l.line())
    }

    /// The file, if known.
    pub fn file(self) -> Option<&'static str> {
        self.0.map(|l| l.file())
    }
}

impl PartialEq for SourceLoc {
    fn eq(&self, _: &SourceLoc) -> bool {
        true
    }
}

impl Eq for SourceLoc {}

/// Nothing: locations are not part of what a kernel computes (as for equality).
impl std::hash::Hash for SourceLoc {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl fmt::Debug for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("_")
    }
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(l) => write!(f, "{}:{}:{}", l.file(), l.line(), l.column()),
            None => f.write_str("(unknown)"),
        }
    }
}

/// `, line FILE:LINE:COLUMN`, or nothing for an unknown location: the suffix error messages
/// put after the work-item.
pub fn source_suffix(at: SourceLoc) -> String {
    match at.0 {
        Some(_) => format!(", line {at}"),
        None => String::new(),
    }
}

/// A statement.
#[derive(Clone, PartialEq, Debug, Hash)]
pub enum Stmt {
    /// Defines `value` as the current value of a pure expression.
    Let {
        /// The value defined.
        value: ValueId,
        /// Its expression.
        expr: ExprId,
    },
    /// Defines `value` as element `index` of `mem`.
    Load {
        /// The value defined.
        value: ValueId,
        /// The memory read.
        mem: Mem,
        /// Element index (any integer type; negative is out of bounds).
        index: ExprId,
        /// Where the user's code recorded it ([`SourceLoc`]).
        at: SourceLoc,
    },
    /// Writes `value` to element `index` of `mem`.
    Store {
        /// The memory written.
        mem: Mem,
        /// Element index.
        index: ExprId,
        /// The value stored (of the element type).
        value: ExprId,
        /// Where the user's code recorded it ([`SourceLoc`]).
        at: SourceLoc,
    },
    /// An atomic read-modify-write of element `index` of a buffer or local array; `result`, if
    /// present, receives the old value.
    Atomic {
        /// Receives the old value.
        result: Option<ValueId>,
        /// The memory.
        mem: Mem,
        /// Element index.
        index: ExprId,
        /// The operation.
        op: AtomicOp,
        /// The operand.
        operand: ExprId,
        /// The expected value of a compare-exchange.
        compare: Option<ExprId>,
        /// Memory order and scope.
        order: AtomicOrder,
        /// Where the user's code recorded it ([`SourceLoc`]).
        at: SourceLoc,
    },
    /// Defines `value` as element `index` of a buffer or local array, read atomically: the
    /// read is never torn and never served from a stale copy, so a loop that polls a word
    /// another work-group writes with an [`Stmt::Atomic`] eventually sees the new value (a
    /// plain [`Stmt::Load`] in such a loop may be hoisted out of it by a C compiler). It
    /// orders other accesses as its `order` says (relaxed, acquire or seq_cst). 32- and 64-bit
    /// integers, in `read_write` buffers or local memory, like the read-modify-write atomics.
    AtomicLoad {
        /// The value defined.
        value: ValueId,
        /// The memory read.
        mem: Mem,
        /// Element index.
        index: ExprId,
        /// Memory order (relaxed or acquire or seq_cst) and scope.
        order: AtomicOrder,
        /// Where the user's code recorded it ([`SourceLoc`]).
        at: SourceLoc,
    },
    /// Conditional execution.
    If {
        /// A scalar `bool`.
        cond: ExprId,
        /// Runs when `cond` is true.
        then: Block,
        /// Runs when `cond` is false.
        otherwise: Block,
    },
    /// A counted loop: `var` runs from `start` while `var < end` (or `var > end` when `step` is
    /// negative), adding `step` after each iteration (wrapping). `var` is read-only in `body`.
    For {
        /// The loop's id.
        id: LoopId,
        /// The counter.
        var: ValueId,
        /// First value.
        start: ExprId,
        /// Bound, exclusive.
        end: ExprId,
        /// Increment; a zero step is an error.
        step: ExprId,
        /// The body.
        body: Block,
    },
    /// A loop that runs until a `break`.
    Loop {
        /// The loop's id.
        id: LoopId,
        /// The body.
        body: Block,
    },
    /// Leaves loop `id` (which encloses this statement).
    Break(LoopId),
    /// Ends the current iteration of loop `id`.
    Continue(LoopId),
    /// Ends the work-item.
    Return,
    /// Waits until every work-item of the work-group reaches this barrier, ordering memory as
    /// given.
    Barrier(Fence),
    /// Orders this work-item's accesses to the memory `spaces` name, with the order (not
    /// relaxed) and scope given.
    MemFence {
        /// The address spaces ordered.
        spaces: Fence,
        /// Order and scope.
        order: AtomicOrder,
    },
    /// A collective of the work-group or of the sub-group; `value` receives the result.
    Group {
        /// Receives the result.
        value: ValueId,
        /// The operation.
        op: GroupOp,
        /// Which work-items it spans.
        scope: GroupScope,
        /// The work-item's contribution.
        arg: ExprId,
        /// For broadcast, the source's local linear id (its lane, in a sub-group); for the
        /// shuffles, the lane, mask or delta ([`GroupOp::takes_source`]).
        source: Option<ExprId>,
    },
}

/// Calls `f` on every statement of `block`, depth first, parents before children.
pub fn walk_block(block: &[Stmt], f: &mut impl FnMut(&Stmt)) {
    for stmt in block {
        f(stmt);
        match stmt {
            Stmt::If {
                then, otherwise, ..
            } => {
                walk_block(then, f);
                walk_block(otherwise, f);
            }
            Stmt::For { body, .. } | Stmt::Loop { body, .. } => walk_block(body, f),
            Stmt::Let { .. }
            | Stmt::Load { .. }
            | Stmt::Store { .. }
            | Stmt::Atomic { .. }
            | Stmt::AtomicLoad { .. }
            | Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::Return
            | Stmt::Barrier(_)
            | Stmt::MemFence { .. }
            | Stmt::Group { .. } => {}
        }
    }
}

/// Calls `f` once on every expression that the statements of `block` (nested blocks
/// included) read, directly or through other expressions.
pub fn walk_exprs(exprs: &ExprArena, block: &[Stmt], f: &mut impl FnMut(&Expr)) {
    let mut roots = Vec::new();
    walk_block(block, &mut |s| roots.extend(stmt_operands(s)));
    visit_exprs(exprs, roots, &mut |e| {
        f(e);
        true
    });
}

/// The expressions a statement uses directly (not those of nested blocks).
pub fn stmt_operands(stmt: &Stmt) -> Vec<ExprId> {
    match stmt {
        Stmt::Let { expr, .. } => vec![*expr],
        Stmt::Load { index, .. } | Stmt::AtomicLoad { index, .. } => vec![*index],
        Stmt::Store { index, value, .. } => vec![*index, *value],
        Stmt::Atomic {
            index,
            operand,
            compare,
            ..
        } => {
            let mut v = vec![*index, *operand];
            v.extend(compare.iter().copied());
            v
        }
        Stmt::If { cond, .. } => vec![*cond],
        Stmt::For {
            start, end, step, ..
        } => vec![*start, *end, *step],
        Stmt::Group { arg, source, .. } => {
            let mut v = vec![*arg];
            v.extend(source.iter().copied());
            v
        }
        Stmt::Loop { .. }
        | Stmt::Break(_)
        | Stmt::Continue(_)
        | Stmt::Return
        | Stmt::Barrier(_)
        | Stmt::MemFence { .. } => vec![],
    }
}

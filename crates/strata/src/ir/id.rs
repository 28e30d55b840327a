//! The typed indices of the IR: which expression, value or loop a statement or expression
//! names.

/// Index of an expression in its function's [`ExprArena`](super::ExprArena).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ExprId(pub u32);

/// A single-assignment value defined by a statement (a `let`, a load, an atomic's old value, a
/// collective's result, a `for` counter).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ValueId(pub u32);

/// Identifies a loop, the target of `break` and `continue`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct LoopId(pub u32);
